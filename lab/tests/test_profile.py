# SPDX-License-Identifier: GPL-2.0
"""Unit tests of make profile's reading of perf report (lab.tools.perf)
and its groups."""

import unittest

from lab import profile
from lab.tools import perf

REPORT = """\
# Samples: 40K of event 'cpu-clock:pppH'
#
# Overhead  Shared Object      Symbol
# ........  .................  ..............................
#
    30.50%  [kernel.kallsyms]  [k] pv_native_safe_halt
    20.25%  [kernel.kallsyms]  [k] copy_user_enhanced_fast_string
     9.00%  [tltcp]            [k] tltcp_rx_header
     8.00%  [kernel.kallsyms]  [k] tcp_ack
     4.00%  [kernel.kallsyms]  [k] csum_partial
     3.00%  [kernel.kallsyms]  [k] _raw_spin_unlock_irqrestore
     1.50%  [kernel.kallsyms]  [k] tltcp_feed
     1.25%  [kernel.kallsyms]  [k] read_hpet
     2.25%  tlbench            [.] main
     1.00%  [unknown]          [.] 0x00007f0000001234
"""


class Report(unittest.TestCase):
    def test_parse(self):
        rows = perf.parse_report(REPORT)
        self.assertEqual(len(rows), 10)
        self.assertEqual(rows[2], (9.0, "[tltcp]", "tltcp_rx_header"))
        self.assertEqual(rows[9], (1.0, "[unknown]", "0x00007f0000001234"))

    def test_groups(self):
        g = profile.group(perf.parse_report(REPORT))
        self.assertEqual(g["idle"], 30.5)
        self.assertEqual(g["copies user<->kernel"], 20.25)
        self.assertEqual(g["tltcp module"], 10.5)
        self.assertEqual(g["clock (read_hpet)"], 1.25)
        self.assertEqual(g["network stack"], 8.0)
        self.assertEqual(g["checksums"], 4.0)
        self.assertEqual(g["kernel, other"], 3.0)
        self.assertEqual(g["user space"], 3.25)
        self.assertAlmostEqual(sum(g.values()), 80.75)


if __name__ == "__main__":
    unittest.main()
