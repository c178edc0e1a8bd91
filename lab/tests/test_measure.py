# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the parsers that turn tool output into asserted numbers."""

import contextlib
import io
import json
import tempfile
import unittest

from lab import measure
from lab.tools import flowgen as F, iperf3, ping, tc


def iperf(reverse, intervals, end_bps=0):
    return json.dumps({
        "start": {"test_start": {"reverse": reverse}},
        "intervals": [{"sum": {"start": s, "seconds": 1.0, "bytes": b,
                               "omitted": False}} for s, b in intervals],
        "end": {"sum_received": {"bits_per_second": end_bps}}})


class Iperf(unittest.TestCase):
    def test_reverse_uses_receiver_intervals_after_skip(self):
        rep = iperf(1, [(0, 10), (1, 1000), (2, 3000)])
        self.assertEqual(iperf3.rate(rep, skip=1), 16000)

    def test_forward_uses_receiver_summary(self):
        self.assertEqual(iperf3.rate(iperf(0, [(0, 1)], 5e6)), 5e6)

    def test_error_report(self):
        self.assertRaises(ValueError, iperf3.rate,
                          json.dumps({"error": "unable to connect"}))

    def test_nothing_after_skip(self):
        self.assertRaises(ValueError, iperf3.rate,
                          iperf(1, [(0, 10)]), 5)


class IperfLoss(unittest.TestCase):
    def test_fraction(self):
        rep = json.dumps({"end": {"sum": {"packets": 2000,
                                          "lost_packets": 100}}})
        self.assertAlmostEqual(iperf3.loss(rep), 0.05)

    def test_no_packets(self):
        rep = json.dumps({"end": {"sum": {"packets": 0, "lost_packets": 0}}})
        self.assertRaises(ValueError, iperf3.loss, rep)


class IperfReordered(unittest.TestCase):
    def test_receiver_streams(self):
        rep = json.dumps({"end": {"streams": [
            {"udp": {"out_of_order": 3, "sender": False}},
            {"udp": {"out_of_order": 4, "sender": False}},
            {"udp": {"out_of_order": 9, "sender": True}}]}})
        self.assertEqual(iperf3.reordered(rep), 7)

    def test_no_udp_stream(self):
        self.assertRaises(ValueError, iperf3.reordered,
                          json.dumps({"end": {"streams": [{"tcp": {}}]}}))


class Flowgen(unittest.TestCase):
    def test_whole_intervals_after_skip(self):
        rep = {"summary": {"seconds": 3.5},
               "intervals": [{"start": s, "seconds": 1.0, "bytes": b}
                             for s, b in ((0, 1), (1, 1000), (2, 3000),
                                          (3, 7))]}
        self.assertEqual(F.rate(rep, skip=1), 16000)
        self.assertRaises(ValueError, F.rate, rep, 3)


def flowgen(epoch, seconds, rates):
    return {"epoch": epoch, "summary": {"seconds": seconds},
            "intervals": [{"start": i, "seconds": 1.0, "bytes": b}
                          for i, b in enumerate(rates)]}


class FlowgenCommonWindow(unittest.TestCase):
    def test_only_while_all_run(self):
        # a runs from 100 to 110, b from 102 to 113: with skip 1 the window
        # is 103..110, a's intervals 3..9 and b's 1..7.
        a = flowgen(100.0, 10.0, [1000 * i for i in range(10)])
        b = flowgen(102.0, 11.0, [10] * 11)
        ra, rb = F.rates([a, b], skip=1)
        self.assertEqual(ra, sum(1000 * i for i in range(3, 10)) * 8 / 7)
        self.assertEqual(rb, 80)

    def test_offset_grids_keep_whole_intervals(self):
        # b's grid is half a second off a's: its intervals that straddle
        # the window's edges do not count.
        a = flowgen(100.0, 5.0, [100] * 5)
        b = flowgen(100.5, 5.0, [200] * 5)
        ra, rb = F.rates([a, b])
        self.assertEqual((ra, rb), (800, 1600))

    def test_no_common_interval(self):
        a = flowgen(100.0, 3.0, [1, 1, 1])
        b = flowgen(103.0, 3.0, [1, 1, 1])
        self.assertRaises(ValueError, F.rates, [a, b])
        self.assertRaises(ValueError, F.rates, [])


class FlowgenReach(unittest.TestCase):
    # 0.1 s intervals from epoch 100: 1 Mbit/s until 101.5, 8 after
    REP = {"epoch": 100.0, "summary": {"seconds": 3.0},
           "intervals": [{"start": i / 10, "seconds": 0.1,
                          "bytes": 12500 if i < 15 else 100000}
                         for i in range(30)]}

    def test_first_window_at_goal(self):
        # the 1 s window from 101.5 is all 8 Mbit/s: it ends 1.5 s
        # after 101; a goal of 4.5 Mbit/s is met from 101.0 on (half
        # and half): 1.0 s after 101
        self.assertAlmostEqual(F.reach_time(self.REP, 8e6, 101.0), 1.5)
        self.assertAlmostEqual(F.reach_time(self.REP, 4.5e6, 101.0), 1.0)
        self.assertAlmostEqual(
            F.reach_time(self.REP, 8e6, 101.0, window=0.5), 1.0)

    def test_never_and_ragged_end(self):
        self.assertIsNone(F.reach_time(self.REP, 9e6, 100.0))
        # the last 0.5 s alone never covers a 1 s window
        self.assertIsNone(F.reach_time(self.REP, 8e6, 102.5))

    def test_command(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(self.REP, f)
            f.flush()
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = measure.main(["flowgen-reach", f.name, "--since",
                                   "101", "--goal", "8e6"])
            self.assertEqual((rc, out.getvalue()), (0, "1.50\n"))
            with contextlib.redirect_stdout(out), \
                    contextlib.redirect_stderr(io.StringIO()):
                rc = measure.main(["flowgen-reach", f.name])
            self.assertEqual(rc, 1)


class Ping(unittest.TestCase):
    def test_average(self):
        out = ("5 packets transmitted, 5 received, 0% packet loss\n"
               "rtt min/avg/max/mdev = 100.112/101.915/104.2/1.1 ms\n")
        self.assertAlmostEqual(ping.rtt(out), 0.101915)

    def test_all_lost(self):
        self.assertRaises(ValueError, ping.rtt,
                          "5 packets transmitted, 0 received\n")


TC = """qdisc htb 1: root refcnt 2 r2q 10 default 0x1 direct_packets_stat 0
 Sent 999 bytes 9 pkt (dropped 0, overlimits 5 requeues 0)
 backlog 0b 0p requeues 0
qdisc pfifo 10: parent 1:1 limit 83p
 Sent 18000000 bytes 12000 pkt (dropped 7335, overlimits 0 requeues 0)
 backlog 125662b 83p requeues 0
"""

TC_JSON = "".join(json.dumps([
    {"kind": "htb", "handle": "1:", "root": True, "bytes": 999,
     "packets": 9, "drops": 0, "overlimits": 5, "backlog": 0, "qlen": 0},
    {"kind": "pfifo", "handle": "10:", "parent": "1:1", "bytes": b,
     "packets": p, "drops": 7335, "backlog": p * 1514, "qlen": q}]) + "\n"
    for b, p, q in ((18000000, 12000, 83), (18001500, 12001, 80))) + \
    '[{"kind": "pfifo", "handle": "10:", "pack'


class Qdisc(unittest.TestCase):
    def test_leaf_stats(self):
        self.assertEqual(tc.qdisc_stats(TC, "10:"),
                         [("pfifo", "10:", 12000, 7335, 83)])
        # The same from tc -s -j, two samples, the last one cut short.
        self.assertEqual(tc.qdisc_stats(TC_JSON, "10:"),
                         [("pfifo", "10:", 12000, 7335, 83),
                          ("pfifo", "10:", 12001, 7335, 80)])
        self.assertEqual(tc.max_backlog(TC_JSON, "10:"), 83)

    def test_all(self):
        self.assertEqual(len(tc.qdisc_stats(TC)), 2)


if __name__ == "__main__":
    unittest.main()
