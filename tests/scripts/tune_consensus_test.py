"""scripts/tune-consensus on bench runs written here, with figures worked out by hand.

usage: tune_consensus_test.py PATH/TO/scripts/tune-consensus
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from load_script import load_script as load_script_at

SCRIPT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "scripts", "tune-consensus")


def load_script():
    return load_script_at(SCRIPT, "tune_consensus")


def candidate(schedule, predicted, measured, bounds=(0, 2, 4)):
    return {"schedule": schedule, "stages_per_rank": 1, "microbatches": 4,
            "bounds": list(bounds), "predicted_ms": predicted, "measured_ms": measured}


class TuneConsensus(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.folder.cleanup()

    def write(self, name, content):
        path = os.path.join(self.folder.name, name)
        with open(path, "w", encoding="utf-8") as file:
            file.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def run_script(self, *paths):
        return subprocess.run([sys.executable, SCRIPT, *paths], capture_output=True, text=True,
                              timeout=30, check=False)

    def test_ties_share_their_mean_rank(self):
        module = load_script()
        # Ranks 1.5 1.5 3 against 1 2 3: covariance 1.5, variances 1.5 and 2.
        self.assertAlmostEqual(module.rank_correlation([1, 1, 2], [1, 2, 3]), 1.5 / 3 ** 0.5)
        self.assertAlmostEqual(module.rank_correlation([3, 2, 1], [10, 20, 30]), -1.0)
        self.assertIsNone(module.rank_correlation([1, 1, 1], [1, 2, 3]))

    def test_the_consensus_of_the_other_runs_is_scored_against_each_run(self):
        # Both runs measure x < y < z; run a predicts that order, run b its reverse. Each run's
        # consensus (the other run's order) scores 1; against the consensus of both, run a's
        # prediction scores 1 and run b's -1, as against its own measurement.
        run_a = self.write("a.json", {"candidates": [candidate("x", 1, 10), candidate("y", 2, 20),
                                                      candidate("z", 3, 30)]})
        run_b = self.write("b.json", {"candidates": [candidate("x", 3, 12), candidate("y", 2, 18),
                                                      candidate("z", 1, 40)]})
        result = self.run_script(run_a, run_b)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertIn("2 runs, 3 candidates (3 measured by all)", lines[0])
        self.assertEqual(lines[2].split()[:4], ["1", "1.000", "1.000", "1.000"])
        self.assertEqual(lines[3].split()[:4], ["2", "-1.000", "1.000", "-1.000"])
        self.assertEqual(lines[4].split(), ["median", "0.000", "1.000", "0.000"])

    def test_a_candidate_only_one_run_measured_is_left_out_of_its_consensus(self):
        # w is only in run a: its consensus covers x, y, z (ordered alike: 1), and w counts
        # as left out. The other figures include it.
        run_a = self.write("a.json", {"candidates": [candidate("x", 1, 10), candidate("y", 2, 20),
                                                      candidate("z", 3, 30),
                                                      candidate("w", 4, 5)]})
        run_b = self.write("b.json", {"candidates": [candidate("x", 1, 10), candidate("y", 2, 20),
                                                      candidate("z", 3, 30)]})
        result = self.run_script(run_a, run_b)
        self.assertEqual(result.returncode, 0, result.stderr)
        first_run = result.stdout.splitlines()[2].split()
        self.assertEqual(first_run[2], "1.000")
        self.assertEqual(first_run[4:6], ["4", "(1)"])
        # Run a's prediction puts w last, its measurement first: (1 2 3 4) against (2 3 4 1).
        self.assertEqual(first_run[1], "-0.200")

    def test_bad_input_is_refused_naming_the_file(self):
        good = self.write("good.json", {"candidates": [candidate("x", 1, 10),
                                                        candidate("y", 2, 20)]})
        self.assertEqual(self.run_script(good).returncode, 2)
        truncated = self.write("truncated.json", '{"candidates": [')
        result = self.run_script(good, truncated)
        self.assertEqual(result.returncode, 2)
        self.assertIn("truncated.json", result.stderr)
        self.assertIn("bench tune", result.stderr)
        unmeasured = self.write("unmeasured.json", {"candidates": [candidate("x", 1, 0),
                                                                    candidate("y", 2, 20)]})
        self.assertIn("measured step", self.run_script(good, unmeasured).stderr)
        other = self.write("other.json", {"candidates": [candidate("p", 1, 10, (0, 1, 4)),
                                                          candidate("q", 2, 20, (0, 1, 4))]})
        result = self.run_script(good, other)
        self.assertEqual(result.returncode, 2)
        self.assertIn("one configuration", result.stderr)


if __name__ == "__main__":
    unittest.main()
