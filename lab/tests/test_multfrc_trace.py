# SPDX-License-Identifier: GPL-2.0
"""Reading multfrc:multfrc_update records (lab/tools/multfrc_trace.py)."""

import unittest

from lab.tools import multfrc_trace as M

TRACE = """\
# tracer: nop
  flowgen-812 [001] ..s1. 100.000000: multfrc_update: sport=40000 dport=5301 n_milli=2000 p_ppb=0 j_milli=1000 rtt_us=50000 rto_us=250000 x_calc=0 x_recv=0 rate=115840 slow_start=1
  flowgen-812 [001] ..s1. 101.000000: multfrc_update: sport=40000 dport=5301 n_milli=2000 p_ppb=10000000 j_milli=1000 rtt_us=52000 rto_us=250000 x_calc=400000 x_recv=390000 rate=400000 slow_start=0
  flowgen-812 [001] ..s1. 102.500000: multfrc_update: sport=40000 dport=5301 n_milli=2000 p_ppb=30000000 j_milli=2000 rtt_us=54000 rto_us=250000 x_calc=200000 x_recv=390000 rate=200000 slow_start=0
"""


class Parse(unittest.TestCase):
    def test_records(self):
        recs = M.parse(TRACE)
        self.assertEqual(len(recs), 3)
        self.assertEqual(recs[1][0], 101.0)
        self.assertEqual(recs[1][1]["x_calc"], 400000)

    def test_summary(self):
        s = M.summary(M.parse(TRACE))
        self.assertEqual(s["records"], 3)
        self.assertEqual(s["n"], 2.0)
        self.assertEqual(s["slow_start"], 1)
        # p, j and x_calc from the two records after slow start
        self.assertAlmostEqual(s["p"], 0.02)
        self.assertAlmostEqual(s["j_milli"], 1500)
        self.assertAlmostEqual(s["x_calc"], 300000)
        self.assertAlmostEqual(s["rtt_us"], 52000)
        later = M.summary(M.parse(TRACE), after=2.0)
        self.assertEqual(later["records"], 1)
        self.assertAlmostEqual(later["x_calc"], 200000)
        self.assertIsNone(M.summary([]))
        self.assertIsNone(M.summary(M.parse(TRACE), after=10))


if __name__ == "__main__":
    unittest.main()
