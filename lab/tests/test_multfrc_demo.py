# SPDX-License-Identifier: GPL-2.0
"""make demo's MulTFRC part (lab/demo/multfrc.py) on reports written
by hand."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from lab.demo import multfrc as D


def rcv(epoch, kbps, seconds=10):
    return {"epoch": epoch, "intervals": [
        {"start": i * 0.5, "seconds": 0.5, "bytes": kbps * 1e3 / 8 / 2}
        for i in range(2 * seconds)]}


class Demo(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()

    def write(self, name, rep):
        with open(os.path.join(self.d, f"{name}.rcv.json"), "w") as f:
            json.dump(rep, f)

    def run_report(self, **kw):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = D.report(self.d, 2, 10, 2, **kw)
        return rc, out.getvalue()

    def test_per_second_shift(self):
        # A receiver whose epoch is 1 s after the earliest one.
        self.assertEqual(D.per_second(rcv(0, 8, 2), 1.0, 3),
                         [0.0, 8.0, 8.0])

    def test_report(self):
        self.write("multfrc", rcv(100.0, 4000))
        self.write("tcp1", rcv(100.0, 1500))
        self.write("tcp2", rcv(100.0, 2500))
        rc, out = self.run_report(rate=10e6)
        self.assertEqual(rc, 0, out)
        # 4000 / (2 x 2000) = 1; 8000 of 10000 kbit/s.
        self.assertIn("normalized throughput: 4000 / (2 x 2000) = 1.00", out)
        self.assertIn("link use: 80% of 10 Mbit/s", out)
        self.assertIn("     9        4000      1500      2500", out)

    def test_a_failed_flow_fails(self):
        self.write("multfrc", rcv(100.0, 4000))
        self.write("tcp1", rcv(100.0, 1500))
        rc, out = self.run_report()
        self.assertEqual(rc, 1)
        self.assertIn("no report from tcp2", out)
        self.write("tcp2", rcv(100.0, 0))
        rc, out = self.run_report()
        self.assertEqual(rc, 1)
        self.assertIn("delivered nothing", out)


if __name__ == "__main__":
    unittest.main()
