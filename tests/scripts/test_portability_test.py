"""scripts/test-portability against a stand-in for CTest written here: a program that writes
the JUnit report CTest would, failing the tests the test names under the settings it names,
read from the environment the script must set (OPENBLAS_CORETYPE, OMP_NUM_THREADS).

usage: test_portability_test.py PATH/TO/scripts/test-portability
"""
import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import unittest

from load_script import load_script as load_script_at

SCRIPT = sys.argv.pop(1)

# The stand-in: argv has -R REGEX and --output-junit PATH as CTest's; FAILS maps
# "kernel/threads" to the tests that fail there; every test in TESTS matching -R is "run".
FAKE_CTEST = r'''#!%s
import json, os, re, sys
args = sys.argv[1:]
regex = args[args.index("-R") + 1]
junit = args[args.index("--output-junit") + 1]
config = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake.json")))
setting = "%%s/%%s" %% (os.environ.get("OPENBLAS_CORETYPE"), os.environ.get("OMP_NUM_THREADS"))
with open(config["log"], "a") as log:
    log.write(setting + "\n")
failing = config["fails"].get(setting, [])
with open(junit, "w") as out:
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite>\n')
    for name in config["tests"]:
        if not re.search(regex, name):
            continue
        status = "fail" if name in failing else "run"
        out.write('<testcase name="%%s  # GetParam() = x" status="%%s">' %% (name, status))
        if status == "fail":
            out.write('<failure message="Failed"/>')
        out.write('</testcase>\n')
    out.write('</testsuite>\n')
sys.exit(8 if failing else 0)
''' % sys.executable


class TestPortability(unittest.TestCase):
    def setUp(self):
        self.module = load_script_at(SCRIPT, "test_portability")
        self.dir = tempfile.mkdtemp(prefix="portability-test-")
        open(os.path.join(self.dir, "CTestTestfile.cmake"), "w").close()
        self.ctest = os.path.join(self.dir, "ctest")
        with open(self.ctest, "w") as f:
            f.write(FAKE_CTEST)
        os.chmod(self.ctest, os.stat(self.ctest).st_mode | stat.S_IXUSR)
        self.log = os.path.join(self.dir, "settings.log")

    def run_script(self, fails, extra=(), flags=("avx2", "avx512f"),
                   tests=("YourModel.ALanguageModel", "PipelineEquivalence/x.MatchesPlainPyTorch",
                          "Store.Unrelated")):
        with open(os.path.join(self.dir, "fake.json"), "w") as f:
            json.dump({"tests": list(tests), "fails": fails, "log": self.log}, f)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = self.module.main(["--build-dir", self.dir, "--ctest", self.ctest,
                                       "--jobs", "1"] + list(extra),
                                      flags=lambda: set(flags))
        return status, out.getvalue()

    def settings_run(self):
        with open(self.log) as f:
            return f.read().split()

    def test_every_setting_passing_exits_zero(self):
        status, out = self.run_script({})
        self.assertEqual(status, 0, out)
        self.assertIn("every test passed under Haswell/1t, Haswell/2t, Zen/1t, Zen/2t, "
                      "SkylakeX/1t, SkylakeX/2t, Prescott/1t, Prescott/2t", out)
        # The environment reached CTest: each setting ran once, in order.
        self.assertEqual(self.settings_run(),
                         ["Haswell/1", "Haswell/2", "Zen/1", "Zen/2", "SkylakeX/1", "SkylakeX/2",
                          "Prescott/1", "Prescott/2"])
        # The numerics suites only: two of the three tests.
        self.assertIn("2 tests, 0 failed", out)

    def test_a_failure_is_named_with_the_settings_it_failed_under(self):
        status, out = self.run_script({"Zen/2": ["YourModel.ALanguageModel"],
                                       "Haswell/1": ["YourModel.ALanguageModel"]})
        self.assertEqual(status, 1, out)
        self.assertIn("failed under some setting", out)
        row = [line for line in out.splitlines()
               if line.strip().startswith("YourModel.ALanguageModel")]
        self.assertEqual(len(row), 1, out)
        cells = row[0].split()[1:]
        self.assertEqual(cells, ["FAIL", "ok", "ok", "FAIL", "ok", "ok", "ok", "ok"], out)
        self.assertNotIn("PipelineEquivalence/x.MatchesPlainPyTorch  ", out.split("failed under")[1])

    def test_a_kernel_this_cpu_cannot_run_is_left_out_with_the_reason(self):
        status, out = self.run_script({}, flags=("avx2",))
        self.assertEqual(status, 0, out)
        self.assertIn("SkylakeX left out: this CPU lacks avx512f", out)
        self.assertNotIn("SkylakeX/1", self.settings_run())

    def test_a_pattern_that_selects_nothing_is_an_error(self):
        status, out = self.run_script({}, extra=["-R", "NoSuchSuite", "--kernels", "Haswell"])
        self.assertEqual(status, 2, out)
        self.assertIn("selects no test", out)

    def test_bad_threads_and_a_folder_that_is_no_build_are_refused(self):
        status, out = self.run_script({}, extra=["--threads", "0"])
        self.assertEqual(status, 2, out)
        out = io.StringIO()
        with contextlib.redirect_stderr(out):
            status = self.module.main(["--build-dir", tempfile.mkdtemp()])
        self.assertEqual(status, 2)
        self.assertIn("is not a build folder", out.getvalue())


if __name__ == "__main__":
    unittest.main()
