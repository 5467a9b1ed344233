"""scripts/recipe-overhead, short: one pair of real runs of 10 steps.

usage: recipe_overhead_test.py PATH/TO/scripts/recipe-overhead BUILD_DIR

Checks what the report says, not how fast anything was: both runs trained (a positive step
time each), the percentage printed is their quotient, and bad usage is refused.
"""
import re
import subprocess
import sys
import unittest

SCRIPT, BUILD = sys.argv.pop(1), sys.argv.pop(1)


def run(*extra):
    done = subprocess.run([sys.executable, SCRIPT, "--build-dir", BUILD, *extra],
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


class RecipeOverhead(unittest.TestCase):
    def test_one_pair_reports_both_steps_and_their_ratio(self):
        code, out = run("--pairs", "1", "--steps", "10")
        self.assertEqual(code, 0, out)
        pair = re.search(r"pair 1: without ([\d.]+) ms, with clipping and the tie ([\d.]+) ms "
                         r"\(([-+][\d.]+)%\)", out)
        self.assertTrue(pair, out)
        without, with_recipe = float(pair.group(1)), float(pair.group(2))
        self.assertGreater(without, 0)
        self.assertGreater(with_recipe, 0)
        # Within what rounding to 0.01 ms and to 0.1% allows.
        self.assertAlmostEqual(float(pair.group(3)), 100 * (with_recipe / without - 1), delta=0.2)
        self.assertIn("median step: without", out)

    def test_bad_usage_is_refused(self):
        code, out = run("--pairs", "0")
        self.assertEqual(code, 2, out)
        self.assertIn("--pairs must be at least 1", out)


if __name__ == "__main__":
    unittest.main()
