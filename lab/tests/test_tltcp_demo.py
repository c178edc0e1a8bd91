# SPDX-License-Identifier: GPL-2.0
"""make demo's report (lab/demo/tltcp.py) on reports written by hand."""

import json
import os
import tempfile
import unittest

from lab.demo import tltcp as D


def write(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


class Pieces(unittest.TestCase):
    def test_offsets_per_second(self):
        trace = [(0.2, 1000, "data"), (0.9, 2000, "data"),
                 (1.5, 9000, "gap"), (3.2, 9500, "data")]
        self.assertEqual(D.offsets_per_second(trace, 0, 4),
                         [2000, 9000, 9000, 9500])
        # A receiver whose epoch is 1 s after the earliest one.
        self.assertEqual(D.offsets_per_second(trace, 1.0, 3),
                         [0, 2000, 9000])

    def test_throughput_skips_the_start(self):
        rcv = {"intervals": [{"start": float(i), "bytes": 1000 * (i + 1)}
                             for i in range(4)]}
        # Seconds 2 and 3: 3000 + 4000 bytes in 2 s.
        self.assertAlmostEqual(D.throughput_kbps(rcv, 2, 4), 28.0)
        self.assertEqual(D.throughput_kbps(None, 2, 4), 0.0)

    def test_ascii_plot(self):
        lines = D.ascii_plot({"T": [(0, 0), (10, 1500 * 10)],
                              "L": [(5, 1500 * 5)]}, 10, width=11, height=3)
        self.assertEqual(lines[0], "10 |          T")
        self.assertEqual(lines[1], "   |     L     ")
        self.assertEqual(lines[2], " 0 |T          ")
        self.assertTrue(lines[3].startswith("   +---"))


class Report(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        ivs = [{"start": float(i), "seconds": 1.0, "bytes": 93750}
               for i in range(4)]
        write(self.d, "tltcp.rcv.json", json.dumps({
            "epoch": 100.0, "intervals": ivs,
            "summary": {"bytes": 375000, "on_time_bytes": 370000,
                        "late_bytes": 5000, "gap_bytes": 1025000,
                        "gaps": 2, "tltcp": {"gaps_received": 2,
                                             "bytes_gap": 1025000}}}))
        write(self.d, "tcp.rcv.json", json.dumps({
            "epoch": 100.01, "intervals": ivs,
            "summary": {"bytes": 375000}}))
        write(self.d, "tltcp.snd.json", json.dumps({
            "epoch": 100.0, "intervals": [], "summary": {"tltcp": {
                "sections_offered": 3, "sections_completed": 1,
                "sections_abandoned_unsent": 0,
                "sections_abandoned_partial": 2, "bytes_offered": 1400000,
                "bytes_sent": 375000, "bytes_abandoned": 1025000,
                "bytes_obsolete_late": 2896,
                "bytes_obsolete_retrans": 0}}}))
        write(self.d, "tltcp.seq.csv", "time,stream_off,len,type\n"
              "0.5,0,93750,data\n1.0,93750,606250,gap\n"
              "1.5,700000,93750,data\n")
        write(self.d, "tcp.seq.csv", "time,stream_off,len,type\n"
              "0.5,0,93750,data\n1.5,93750,93750,data\n")

    def test_table(self):
        lines, ok = D.report(self.d, 4, 2)
        text = "\n".join(lines)
        self.assertTrue(ok)
        self.assertIn("750", text)                  # kbit/s, each
        self.assertIn("50 %", text)
        self.assertIn("3 / 1 / 2", text)            # sections
        self.assertIn("1025000", text)
        self.assertIn("2 / 1025000", text)          # gaps at the receiver
        self.assertIn("reached the receiver as a gap: yes", text)
        # Second 2: TLTCP at 700000 + 93750 B = 529 packets, a jump.
        self.assertRegex(text, r"\n\s+2\s+529\s+125  jump")

    def test_abandoned_bytes_not_told(self):
        write(self.d, "tltcp.rcv.json", json.dumps({
            "epoch": 100.0, "intervals": [],
            "summary": {"bytes": 0, "gap_bytes": 1}}))
        lines, ok = D.report(self.d, 4, 2)
        self.assertFalse(ok)
        self.assertIn("as a gap: NO", "\n".join(lines))

    def test_missing_report(self):
        os.unlink(os.path.join(self.d, "tcp.rcv.json"))
        lines, ok = D.report(self.d, 4, 2)
        self.assertFalse(ok)


if __name__ == "__main__":
    unittest.main()
