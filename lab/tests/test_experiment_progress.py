# SPDX-License-Identifier: GPL-2.0
"""The overall progress line of an experiment and its estimate of the
time left (lab/experiment/progress.py)."""

import unittest

from lab.experiment.progress import PRIOR, Progress


class Estimate(unittest.TestCase):
    def test_prior_before_any_batch(self):
        p = Progress([60, 60, 120])
        self.assertAlmostEqual(p.left(0), PRIOR * 240)
        self.assertAlmostEqual(p.left(30), PRIOR * 240 - 30)

    def test_measured_factor_replaces_the_prior(self):
        p = Progress([100, 100, 200])
        p.finish(150)                       # took 1.5x its plan
        self.assertAlmostEqual(p.factor(), 1.5)
        self.assertAlmostEqual(p.left(0), 1.5 * 300)
        self.assertAlmostEqual(p.left(50), 1.5 * 300 - 50)
        p.finish(130)
        self.assertAlmostEqual(p.factor(), 280 / 200)
        self.assertAlmostEqual(p.left(0), 280 / 200 * 200)

    def test_overrun_batch_counts_only_what_follows(self):
        p = Progress([10, 10])
        self.assertAlmostEqual(p.left(1000), PRIOR * 10)

    def test_line(self):
        p = Progress([60, 60])
        p.finish(90)
        self.assertEqual(p.line(30), "overall 1/2 batches done, "
                         "67 % after 2m00s, about 1m00s left")
        p.finish(90)
        self.assertEqual(p.left(0), 0)
        self.assertIn("100 % after 3m00s, about 0s left", p.line(0))
        self.assertRaises(ValueError, p.finish, 1)
        self.assertIn("1h01m", Progress([3660], prior=1).line(0))

    def test_bad_plans(self):
        self.assertRaises(ValueError, Progress, [])
        self.assertRaises(ValueError, Progress, [10, -1])


if __name__ == "__main__":
    unittest.main()
