# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the metrics on cases computed by hand."""

import math
import unittest

from lab import metrics as M


class Fairness(unittest.TestCase):
    def test_friendliness(self):
        # TLTCP flows 3 and 5 (mean 4) against TCP flows 1 and 3 (mean 2).
        self.assertEqual(M.friendliness([3, 5], [1, 3]), 2.0)
        self.assertRaises(ValueError, M.friendliness, [1], [0, 0])
        self.assertRaises(ValueError, M.friendliness, [], [1])

    def test_separation(self):
        self.assertEqual(M.separation([2, 8, 4]), 4.0)
        self.assertRaises(ValueError, M.separation, [0, 1])

    def test_f_worst_and_best(self):
        # Sorted 1 2 3 6: worst = mean(3, 6) / mean(1, 2) = 4.5 / 1.5 = 3;
        # odd ranks 1, 3 (mean 2), even ranks 2, 6 (mean 4): best = 2.
        flows = [6, 1, 3, 2]
        self.assertEqual(M.f_worst(flows), 3.0)
        self.assertEqual(M.f_best(flows), 2.0)
        self.assertRaises(ValueError, M.f_worst, [1, 2, 3])
        self.assertRaises(ValueError, M.f_best, [])

    def test_equal_flows_are_ideal(self):
        flows = [5.0] * 6
        for f in (M.separation, M.f_worst, M.f_best, M.jain):
            self.assertEqual(f(flows), 1.0)

    def test_jain(self):
        # (1 + 3)^2 / (2 * (1 + 9)) = 16 / 20
        self.assertAlmostEqual(M.jain([1, 3]), 0.8)
        # One flow takes all: 1/n.
        self.assertAlmostEqual(M.jain([4, 0, 0, 0]), 0.25)
        self.assertRaises(ValueError, M.jain, [0, 0])

    def test_normalized_throughput(self):
        # MulTFRC(2) at 6 against TCP flows of 2 and 4: 6 / (2 * 3) = 1.
        self.assertEqual(M.normalized_throughput(6, 2, [2, 4]), 1.0)
        self.assertEqual(M.normalized_throughput(1.5, 0.5, [3]), 1.0)
        self.assertRaises(ValueError, M.normalized_throughput, 1, 0, [1])


class TcpModel(unittest.TestCase):
    def test_model_rate(self):
        # R = 0.1 s, p = 0.01: 1.22 / (0.1 * 0.1) = 122 packets/s.
        self.assertAlmostEqual(M.tcp_model_rate(0.1, 0.01), 122.0)
        self.assertRaises(ValueError, M.tcp_model_rate, 0.1, 0)

    def test_dcp_friendliness(self):
        # The flow sends 130 packets/s where the model allows 122.
        self.assertAlmostEqual(M.dcp_friendliness(0.1, 0.01, 130),
                               122 / 130)
        self.assertRaises(ValueError, M.dcp_friendliness, 0.1, 0.01, 0)


class MulTfrcEquation(unittest.TestCase):
    def test_reference_values(self):
        # The design notes' table: s = 1000 B, R = 0.1 s, RTO = 0.4 s,
        # b = 1, j = 1; bytes/s.
        table = {0.001: {0.5: 189499, 1: 383673, 2: 771955, 4: 1548457,
                         10: 3877891},
                 0.01: {0.5: 56389, 1: 116571, 2: 236612, 4: 476404,
                        10: 1195464},
                 0.05: {0.5: 21531, 1: 44544, 2: 89098, 4: 176940,
                        10: 439100}}
        for p, row in table.items():
            for n, want in row.items():
                with self.subTest(p=p, n=n):
                    got = M.multfrc_rate(n, p, 1, 0.1, 0.4, s=1000)
                    # The table is rounded to whole bytes.
                    self.assertAlmostEqual(got, want, delta=1)

    def test_more_losses_per_event_is_slower(self):
        # For n = 4 an event of 4 losses hits more flows than one of 1.
        self.assertLess(M.multfrc_rate(4, 0.01, 4, 0.1, 0.4),
                        M.multfrc_rate(4, 0.01, 1, 0.1, 0.4))

    def test_domain(self):
        for bad in ((0, 0.01, 1), (1, 0, 1), (1, 1, 1), (1, 0.01, 0)):
            self.assertRaises(ValueError, M.multfrc_rate, *bad, 0.1, 0.4)


class MulTfrcSendRate(unittest.TestCase):
    def test_below_one_flow_is_the_equation(self):
        for n in (0.25, 0.5):
            for p in (0.001, 0.05, 0.15, 0.3):
                self.assertEqual(M.multfrc_send_rate(n, p, 1, 0.02, 0.08),
                                 M.multfrc_rate(n, p, 1, 0.02, 0.08))

    def test_one_flow_is_the_larger_of_two_equations(self):
        # From p = 0.002 to 0.14 (t_RTO = 4 R) the paper's one-flow form
        # is the larger, below that they differ by under 0.2 %; at 0.2
        # its timeout term holds the flow in a timeout and RFC 5348's
        # gives almost five times as much.
        for p in (0.01, 0.05, 0.12):
            self.assertEqual(M.multfrc_send_rate(1, p, 1, 0.02, 0.08),
                             M.multfrc_rate(1, p, 1, 0.02, 0.08))
        for p in (1e-5, 1e-4, 0.001):
            x = M.multfrc_rate(1, p, 1, 0.02, 0.08)
            self.assertLess(M.multfrc_send_rate(1, p, 1, 0.02, 0.08),
                            1.002 * x)
        tcp = M.tcp_equation_rate(0.2, 0.02, 0.08)
        self.assertEqual(M.multfrc_send_rate(1, 0.2, 1, 0.02, 0.08), tcp)
        self.assertGreater(tcp, 4.5 * M.multfrc_rate(1, 0.2, 1, 0.02, 0.08))

    def test_tcp_equation(self):
        # its first term is the equation's for n = 1
        self.assertAlmostEqual(M.tcp_equation_rate(0.01, 0.1, 1e-9),
                               1 / (0.1 * math.sqrt(0.02 / 3)), places=6)
        self.assertAlmostEqual(M.tcp_equation_rate(0.05, 0.1, 0.4, 1000),
                               36859, delta=1)
        self.assertRaises(ValueError, M.tcp_equation_rate, 0, 0.1, 0.4)

    def test_light_loss_adds_at_most_13_percent(self):
        # As Documentation/multfrc.rst says: at 2 % loss and less, j up
        # to 3, the most is 13 % (n = 3, j = 3, p = 0.02); 2 % with j = 1.
        for n in (1.4, 2, 3, 4, 8, 16, 50):
            for j in (1, 1.5, 2, 3):
                for p in (0.0001, 0.001, 0.01, 0.02):
                    if j > n:
                        continue
                    x = M.multfrc_rate(n, p, j, 0.02, 0.08)
                    bound = 1.02 if j == 1 else 1.14
                    self.assertLess(M.multfrc_send_rate(n, p, j, 0.02, 0.08),
                                    bound * x, (n, j, p))

    def test_heavy_loss_is_n_flows(self):
        # n = 4, p = 0.15, j = 1: the n-flow timeout term holds all four
        # in a timeout; four flows of one take four times one flow's.
        one = max(M.multfrc_rate(1, 0.15, 1, 0.02, 0.08),
                  M.tcp_equation_rate(0.15, 0.02, 0.08))
        self.assertAlmostEqual(M.multfrc_send_rate(4, 0.15, 1, 0.02, 0.08),
                               4 * one, delta=1e-9)
        self.assertGreater(4 * one, 5 * M.multfrc_rate(4, 0.15, 1, 0.02,
                                                        0.08))


class LossEvents(unittest.TestCase):
    def test_one_rtt_groups_losses(self):
        # RTT 0.1 s: losses at 0, 0.05 (same event), 0.1 (new), 0.3 (new).
        s = [(0.0, 2), (0.05, 1), (0.07, 0), (0.1, 1), (0.3, 3)]
        self.assertEqual(M.loss_events(s, 0.1), (3, 7))
        self.assertEqual(M.loss_events([], 0.1), (0, 0))
        self.assertRaises(ValueError, M.loss_events, s, 0)


class Smoothness(unittest.TestCase):
    def test_cov(self):
        # mean 4, deviations -2 and +2: standard deviation 2, CoV 0.5.
        self.assertAlmostEqual(M.cov([2, 6]), 0.5)
        self.assertEqual(M.cov([3, 3, 3]), 0.0)
        self.assertRaises(ValueError, M.cov, [0, 0])

    def test_time_to_capacity(self):
        t = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        r = [1, 5, 9.5, 8, 9.2, 9.5, 9.1, 9.9, 9.3, 9.4]
        # 9.5 at t=2 is not held (8 at t=3); from t=4 on it holds 5 s.
        self.assertEqual(M.time_to_capacity(t, r, 10), 4)
        self.assertIsNone(M.time_to_capacity(t, [1] * 10, 10))
        # Holding only needs to last to the end of the run.
        self.assertEqual(M.time_to_capacity([0, 1], [1, 9.5], 10), 1)
        self.assertRaises(ValueError, M.time_to_capacity, [0], [], 1)


class Repetitions(unittest.TestCase):
    def test_t_quantiles(self):
        self.assertEqual(M.t95(1), 12.706)
        self.assertEqual(M.t95(4), 2.776)
        # Between listed df the smaller one's: a wider interval.
        self.assertEqual(M.t95(45), 2.021)
        self.assertEqual(M.t95(1000), 1.960)
        self.assertRaises(ValueError, M.t95, 0)

    def test_confidence_interval(self):
        # 1, 2, 3: mean 2, s = 1, h = 4.303 / sqrt(3).
        m, h = M.confidence_interval([1, 2, 3])
        self.assertEqual(m, 2.0)
        self.assertAlmostEqual(h, 4.303 / 3 ** 0.5)
        # 10 and 14: s = 2 * sqrt(2), h = 12.706 * 2.
        m, h = M.confidence_interval([10, 14])
        self.assertEqual(m, 12.0)
        self.assertAlmostEqual(h, 25.412)
        self.assertEqual(M.confidence_interval([5, 5, 5]), (5.0, 0.0))
        self.assertRaises(ValueError, M.confidence_interval, [1])


class Deadlines(unittest.TestCase):
    def test_summary(self):
        s = M.deadline_summary([
            {"size": 1000, "on_time": 1000},
            {"size": 1000, "on_time": 400, "abandoned": 600,
             "gaps": [600]},
            {"size": 2000, "on_time": 1600, "gaps": [100, 300]},
        ])
        self.assertEqual(s["offered"], 4000)
        self.assertAlmostEqual(s["on_time_fraction"], 3000 / 4000)
        self.assertEqual((s["abandoned"], s["gaps"], s["gap_bytes"],
                          s["largest_gap"]), (600, 3, 1000, 600))

    def test_bad_input(self):
        self.assertRaises(ValueError, M.deadline_summary, [])
        self.assertRaises(ValueError, M.deadline_summary,
                          [{"size": 10, "on_time": 11}])


if __name__ == "__main__":
    unittest.main()
