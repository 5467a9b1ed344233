"""scripts/ddp-vs-baton, short: one run of each side on a small MLP, real processes.

usage: ddp_vs_baton_test.py PATH/TO/scripts/ddp-vs-baton BUILD_DIR

Checks what the report says, not how fast anything was: both sides trained (a positive step
time each), the ratio printed is their quotient, the exposed reduction is reported, and with
--pipeline-ranks 2 baton runs alone.
"""
import re
import subprocess
import sys
import unittest

SCRIPT, BUILD = sys.argv.pop(1), sys.argv.pop(1)
SMALL = ["--set", "model.params.in_features=64", "--set", "model.params.hidden=64",
         "--set", "data.batch_size=16", "--set", "schedule.microbatches=2"]


def run(*extra):
    done = subprocess.run([sys.executable, SCRIPT, "--build", BUILD, "--runs", "1", "--steps",
                           "5", *SMALL, *extra], capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


class DdpVsBaton(unittest.TestCase):
    def test_pure_data_parallelism_reports_both_steps_and_their_ratio(self):
        code, out = run()
        self.assertEqual(code, 0, out)
        baton = re.search(r"baton: step ([\d.]+) ms .*exposed reduction ([\d.]+) ms", out)
        ddp = re.search(r"DDP:   step ([\d.]+) ms", out)
        ratio = re.search(r"baton / DDP: ([\d.]+)", out)
        self.assertTrue(baton and ddp and ratio, out)
        self.assertGreater(float(baton.group(1)), 0)
        self.assertGreater(float(ddp.group(1)), 0)
        # Within what rounding to 0.1 ms and to 0.01 allows.
        b, d = float(baton.group(1)), float(ddp.group(1))
        self.assertGreaterEqual(float(ratio.group(1)), (b - 0.05) / (d + 0.05) - 0.005, out)
        self.assertLessEqual(float(ratio.group(1)), (b + 0.05) / (d - 0.05) + 0.005, out)

    def test_pipelines_times_replicas_run_baton_alone(self):
        code, out = run("--pipeline-ranks", "2")
        self.assertEqual(code, 0, out)
        self.assertIn("2-rank pipelines x 2 replicas", out)
        self.assertRegex(out, r"baton: step [\d.]+ ms .*exposed reduction [\d.]+ ms")
        self.assertNotIn("DDP", out)

    def test_a_failing_baton_run_is_reported_not_measured(self):
        code, out = run("--set", "schedule.microbatches=3")
        self.assertNotEqual(code, 0)
        self.assertIn("baton failed", out)


if __name__ == "__main__":
    unittest.main()
