"""scripts/mutation-check: every mutation still applies, and one that does not stops the check.

usage: mutation_check_test.py PATH/TO/scripts/mutation-check BUILD_DIR

The suite cannot afford the check itself (a rebuild per mutation); it proves the check cannot
go stale: each mutation's text occurs once in its file and its test pattern selects tests of
this build, so a change that moves the code under a mutation fails here, in CI.
"""
import os
import subprocess
import sys
import tempfile
import unittest

from load_script import load_script as load_script_at

SCRIPT = sys.argv.pop(1)
BUILD_DIR = sys.argv.pop(1)


def load_script():
    return load_script_at(SCRIPT, "mutation_check")


class MutationCheck(unittest.TestCase):
    def test_every_mutation_applies_to_this_source_and_selects_tests(self):
        result = subprocess.run([sys.executable, SCRIPT, "--check-texts", "--build-dir",
                                 BUILD_DIR], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("mutations apply", result.stdout)

    def test_at_least_twelve_mutations_across_the_rooms(self):
        module = load_script()
        self.assertGreaterEqual(len(module.MUTATIONS), 12)
        rooms = {m.path.split("/")[0] + "/" + m.path.split("/")[1] for m in module.MUTATIONS}
        for room in ("core/src", "plugins/transports", "plugins/schedules", "apps/training",
                     "apps/models"):
            self.assertIn(room, rooms)

    def test_a_stale_text_or_pattern_is_named_and_stops_the_check(self):
        module = load_script()
        with tempfile.NamedTemporaryFile("w", suffix=".cc", delete=False) as f:
            f.write("int twice = 1;\nint twice = 1;\n")
        try:
            relative = f.name  # absolute: the check joins it to the repository unchanged
            stale = [(1, module.Mutation("absent", relative, "int gone;", "", "Scripts")),
                     (2, module.Mutation("twice", relative, "int twice = 1;", "", "Scripts")),
                     (3, module.Mutation("no tests", relative, "int twice = 1;\nint",
                                         "", "NoSuchTestAnywhere")),
                     (4, module.Mutation("no file", "core/src/missing.cc", "x", "", "Scripts"))]
            problems = module.check_texts(stale, BUILD_DIR)
        finally:
            os.unlink(f.name)
        text = "\n".join(problems)
        self.assertIn("1 (absent): %s holds 0 copies" % relative, text)
        self.assertIn("2 (twice): %s holds 2 copies" % relative, text)
        self.assertIn("3 (no tests): no test matches 'NoSuchTestAnywhere'", text)
        self.assertIn("4 (no file): core/src/missing.cc does not exist", text)
        self.assertEqual(len(problems), 4, text)


if __name__ == "__main__":
    unittest.main()
