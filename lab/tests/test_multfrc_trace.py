# SPDX-License-Identifier: GPL-2.0
"""Reading multfrc:multfrc_update records (lab/tools/multfrc_trace.py)."""

import contextlib
import io
import os
import tempfile
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


def rec(t, p, x_calc, rate, slow_start=0):
    return ("  flowgen-812 [001] ..s1. %.6f: multfrc_update: sport=40000 "
            "dport=5301 n_milli=1000 p_ppb=%d j_milli=1000 rtt_us=100000 "
            "rto_us=400000 x_calc=%d x_recv=%d rate=%d slow_start=%d\n"
            % (t, p, x_calc, x_calc, rate, slow_start))


# Slow start, a loss event at 101, the open interval lowering p, a
# second loss event at 103 (p rises), the competitor leaves at 104.5, p
# falls, the probe lifts the rate above the equation's at 107.
CLIMB = (rec(100.0, 0, 0, 50000, 1) + rec(101.0, 500000, 80000, 80000) +
         rec(102.0, 450000, 85000, 85000) +
         rec(103.0, 600000, 70000, 70000) +
         rec(104.0, 600000, 75000, 75000) +
         "  flowgen-1 [000] ..... 104.500000: tracing_mark_write: leave\n" +
         rec(106.0, 550000, 90000, 90000) +
         rec(107.0, 500000, 95000, 99000) +
         rec(108.0, 450000, 99000, 120000))


class Climb(unittest.TestCase):
    def test_last_loss_and_probe_around_the_mark(self):
        c = M.climb(CLIMB, "leave")
        self.assertAlmostEqual(c["loss_before"], 1.5)
        self.assertAlmostEqual(c["p"], 0.0006)
        self.assertAlmostEqual(c["probe_after"], 2.5)

    def test_probe_already_on_or_never(self):
        on = CLIMB.replace("x_calc=75000 x_recv=75000 rate=75000",
                           "x_calc=75000 x_recv=75000 rate=76000")
        self.assertAlmostEqual(M.climb(on, "leave")["probe_after"], -0.5)
        never = CLIMB.replace("rate=99000", "rate=95000").replace(
            "rate=120000", "rate=99000")
        self.assertIsNone(M.climb(never, "leave")["probe_after"])

    def test_no_mark_or_no_loss(self):
        self.assertIsNone(M.climb(CLIMB, "other"))
        self.assertIsNone(M.climb(rec(100.0, 0, 0, 50000, 1) +
                                  "  x-1 [000] ..... 100.5: "
                                  "tracing_mark_write: leave\n", "leave"))

    def test_cli_prints_it(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write(CLIMB)
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                self.assertEqual(M.main(["climb", f.name, "leave"]), 0)
        finally:
            os.unlink(f.name)
        self.assertEqual(out.getvalue().strip(),
                         "last loss event 1.50 s before it (p 0.060 %), "
                         "probing from 2.50 s after it")


if __name__ == "__main__":
    unittest.main()
