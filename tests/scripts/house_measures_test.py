"""scripts/house-measures on a tree written here: a room's lines, a function's length, the
configuration's declarations (mutable or not) and the writes into one.

usage: house_measures_test.py PATH/TO/scripts/house-measures
"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = sys.argv.pop(1)


def write(root, relative, text):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class HouseMeasures(unittest.TestCase):
    def test_counts_what_the_tree_holds(self):
        with tempfile.TemporaryDirectory() as root:
            body = "".join("  step(%d);\n" % i for i in range(10))
            write(root, "apps/training/loop.cc",
                  "namespace x {\n\nvoid run_steps(int n,\n               int m) {\n" + body +
                  "}\n\n}  // namespace x\n")
            write(root, "apps/training/loop.h",
                  "void read_a(const baton::Config& config);\n"
                  "void b(int n,\n       baton::Config& config);\nvoid c(int n);\n")
            write(root, "apps/models/specs.cc", "void r() { config.set_plugin_params(\"m\", v); }\n")
            write(root, "build/ignored.cc", "void ignored() {\n}\n")
            write(root, "core/src/runtime/executor.cc", "a\nb\nc\n")
            write(root, "apps/tuning/auto.cc", 'bool a(S s) { return s.name == "auto" || s.b != "auto"; }\n')
            write(root, "apps/training/settings.h", "struct S {\n  baton::ParamValue device;\n"
                  "  ParamValue other;\n  int n;\n};\n")
            write(root, "core/src/runtime/gradient_thing.cc",
                  "at::Tensor a = at::full({1}, v, at::kDouble);\n"
                  "at::Tensor b = at::zeros({2},\n    groups.options(at::kLong));\n"
                  "at::Tensor c = at::tensor(x, at::kLong).to(device);\n"
                  "at::Tensor d = at::scalar_tensor(1.0, at::kDouble);\n")
            write(root, "core/src/runtime/other.cc", "at::Tensor a = at::full({1}, v, at::kDouble);\n")
            write(root, "plugins/x/read.cc", "std::ifstream file(path);\n"
                  "std::ifstream(\"/proc/self/status\") >> word;\n")
            out = subprocess.run([sys.executable, SCRIPT, root], check=True,
                                 capture_output=True, text=True).stdout
        # 2 lines of signature, 10 of body, the closing brace.
        self.assertIn("    13  run_steps (apps/training/loop.cc)", out)
        self.assertIn("  2 / 1  apps/training", out)
        self.assertIn("  2 / 1  in all", out)
        self.assertIn("(set_value, set_plugin_params): 1", out)
        self.assertIn("1 readers (read_*, *_from_config): read_a", out)
        self.assertIn("and 1 others: b\n", out)
        self.assertNotIn("ignored", out)
        self.assertIn("executor lines (core/src/runtime/executor.cc): 3\n", out)
        self.assertIn('string tests of "auto" in core/ and apps/: 2\n', out)
        self.assertIn("raw ParamValue fields in headers: 2\n", out)
        # a and d name no device; b and c do; other.cc is not the synchronisation.
        self.assertIn("allocations naming no device in the gradient synchronisation: 2\n", out)
        # The kernel's tables are not files a user names.
        self.assertIn("(std::ifstream) in core/, apps/, plugins/: 1\n", out)

    def test_this_tree_keeps_what_issue_58_closed(self):
        """The classes closed once stay closed: a new raw field, "auto" test, device-less
        allocation or std::ifstream fails here, naming the measure."""
        tree = os.path.join(os.path.dirname(os.path.abspath(SCRIPT)), "..")
        out = subprocess.run([sys.executable, SCRIPT, tree], check=True,
                             capture_output=True, text=True).stdout
        for line in ('string tests of "auto" in core/ and apps/: 1\n',
                     "raw ParamValue fields in headers: 0\n",
                     "allocations naming no device in the gradient synchronisation: 0\n",
                     "(std::ifstream) in core/, apps/, plugins/: 0\n",
                     "calls writing into a configuration in apps/ (set_value, "
                     "set_plugin_params): 0\n"):
            self.assertIn(line, out)


if __name__ == "__main__":
    unittest.main()
