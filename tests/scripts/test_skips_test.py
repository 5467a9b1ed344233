"""scripts/test-skips on CTest JUnit reports written here.

usage: test_skips_test.py PATH/TO/scripts/test-skips
"""
import contextlib
import io
import os
import sys
import tempfile
import unittest

from load_script import load_script as load_script_at
from xml.sax.saxutils import escape, quoteattr

SCRIPT = sys.argv.pop(1)


def load_script():
    return load_script_at(SCRIPT, "test_skips")


def gtest_skip(name, reason):
    return ("[ RUN      ] %s\n/work/tests/x_test.cc:19: Skipped\n%s\n[  SKIPPED ] %s (1 ms)\n"
            % (name, reason, name))


def report(cases):
    """A JUnit file as CTest writes it: (name, skipped, output) per test."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<testsuite name="baton">']
    for name, skipped, output in cases:
        lines.append('<testcase name=%s classname=%s time="0.1" status=%s>' %
                     (quoteattr(name), quoteattr(name), quoteattr("notrun" if skipped else "run")))
        if skipped:
            lines.append('<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>')
        lines.append("<system-out>%s</system-out></testcase>" % escape(output))
    lines.append("</testsuite>")
    handle, path = tempfile.mkstemp(suffix=".xml")
    with os.fdopen(handle, "w") as f:
        f.write("\n".join(lines))
    return path


class TestSkips(unittest.TestCase):
    def run_on(self, cases, installed_packages):
        module = load_script()
        path = report(cases)
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                status = module.main(path, installed=lambda p: p in installed_packages)
        finally:
            os.unlink(path)
        return status, out.getvalue()

    NCCL = ("Transports/TransportConformance.Ring/nccl  # GetParam() = \"nccl\"", True,
            gtest_skip("Transports/TransportConformance.Ring/nccl",
                       "plugin 'nccl' cannot run on this machine: no CUDA device visible"))

    def test_hardware_skips_pass_and_are_listed_with_their_reason(self):
        status, text = self.run_on([self.NCCL, ("Passing.Test", False, "[  PASSED  ]")],
                                   {"libgloo-dev", "libucx-dev"})
        self.assertEqual(status, 0, text)
        self.assertIn("==> 1 skipped test\n", text)
        self.assertIn("  Transports/TransportConformance.Ring/nccl: plugin 'nccl' cannot run on "
                      "this machine: no CUDA device visible", text)

    def test_a_gloo_skip_fails_where_gloo_is_installed_and_passes_where_it_is_not(self):
        gloo = ("BenchCli.Gloo", True, gtest_skip("BenchCli.Gloo", "libbaton-transport-gloo.so "
                                                  "was not built (searched /x)"))
        status, text = self.run_on([gloo], {"libgloo-dev"})
        self.assertEqual(status, 1, text)
        self.assertIn("BenchCli.Gloo (libgloo-dev is installed)", text)
        status, text = self.run_on([gloo], set())
        self.assertEqual(status, 0, text)

    def test_a_ucx_skip_named_only_in_its_reason_fails_too(self):
        case = ("Configs/ShippedConfig.RunsTwoSteps/shm", True,
                gtest_skip("Configs/ShippedConfig.RunsTwoSteps/shm",
                           "plugin 'ucx' cannot run on this machine: no device"))
        status, text = self.run_on([case], {"libucx-dev"})
        self.assertEqual(status, 1, text)

    def test_a_network_namespace_limit_is_about_the_machine(self):
        case = ("Transports/TwoHosts.Train/gloo", True,
                gtest_skip("Transports/TwoHosts.Train/gloo",
                           "cannot create a network namespace here (unshare: permission denied)"))
        status, text = self.run_on([case], {"libgloo-dev"})
        self.assertEqual(status, 0, text)

    def test_a_test_cmake_could_not_build_gives_its_reason(self):
        case = ("Fuzz.config_yaml", True,
                "skipped: clang++ with libFuzzer not found (apt-get install clang)\n")
        status, text = self.run_on([case], set())
        self.assertEqual(status, 0, text)
        self.assertIn("  Fuzz.config_yaml: clang++ with libFuzzer not found (apt-get install "
                      "clang)", text)

    def test_a_skip_without_a_reason_fails(self):
        status, text = self.run_on([("Some.Test", True, "[  SKIPPED ] Some.Test\n")], set())
        self.assertEqual(status, 1, text)
        self.assertIn("Some.Test: skipped without a reason", text)


if __name__ == "__main__":
    unittest.main()
