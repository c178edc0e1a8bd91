# SPDX-License-Identifier: GPL-2.0
"""Unit tests of make bench's rounds and ratios (no guest: run_one is a
stand-in)."""

import collections
import types
import unittest
from unittest import mock

from lab import bench


def run(gbit, snd, rcv):
    return {"gbit_s": gbit, "snd_cpu_s_per_gb": snd,
            "rcv_cpu_s_per_gb": rcv, "bytes": 1}


SNMP = """Ip: Forwarding DefaultTTL OutRequests
Ip: 1 64 100
Tcp: RtoAlgorithm OutSegs
Tcp: 1 120
"""
NETSTAT = """TcpExt: TCPHPAcks TCPPureAcks
TcpExt: 7 30
"""
SNMP6 = """Ip6InReceives                   	5
Ip6OutRequests                  	20
Icmp6InMsgs                     	3
"""


class Counters(unittest.TestCase):
    def test_mib_reads_the_files_of_the_namespace(self):
        calls = []

        def fake_sh(*cmd, ns=None, check=True):
            calls.append((cmd, ns))
            text = {"/proc/net/snmp": SNMP, "/proc/net/snmp6": SNMP6,
                    "/proc/net/netstat": NETSTAT}[cmd[-1]]
            return types.SimpleNamespace(stdout=text)

        with mock.patch.object(bench, "sh", fake_sh):
            m = bench.mib("tlb-b")
        self.assertEqual(m[("Tcp", "OutSegs")], 120)
        self.assertEqual(m[("TcpExt", "TCPPureAcks")], 30)
        self.assertEqual(m[("Ip", "DefaultTTL")], 64)
        # IPv6's packets are added to IPv4's counter of the same name.
        self.assertEqual(m[("Ip", "OutRequests")], 120)
        self.assertNotIn(("Ip", "InMsgs"), m)
        self.assertEqual({ns for _, ns in calls}, {"tlb-b"})

    def test_counters_are_medians_in_the_row_and_the_table(self):
        runs = [dict(run(1, 1, 1), **dict(dict.fromkeys(bench.COUNTERS, 2.0),
                                          rcv_acks_per_mb=a))
                for a in (50.0, 80.0, 60.0)]
        row = bench.summary("tltcp", runs, None, gso=True, family=4)
        self.assertAlmostEqual(row["rcv_acks_per_mb"], 60.0)
        self.assertIn("60.0", bench.table([row]))


class Rounds(unittest.TestCase):
    def test_rounds_alternate_the_cases(self):
        order = []

        def fake(family, opts, server, secs, port):
            order.append((opts[0], port))
            return run(1.0, 1.0, 1.0)

        args = types.SimpleNamespace(repeat=3, seconds=1)
        with mock.patch.object(bench, "run_one", fake):
            runs, port = bench.rounds(args, 100, [("a", ["a"], []),
                                                  ("b", ["b"], ["-T"])], 4)
        self.assertEqual([o for o, _ in order], ["a", "b"] * 3)
        self.assertEqual([p for _, p in order], list(range(101, 107)))
        self.assertEqual(port, 106)
        self.assertEqual(len(runs["a"]), 3)

    def test_ratios_are_taken_within_a_round(self):
        # The guest slows down by half in round 2: TLTCP at 0.9 of TCP
        # in every round.  Ratios of the medians would say 0.9 too here;
        # the per-round ratios say it whatever the drift.
        tcp = [run(2.0, 1.0, 2.0), run(1.0, 2.0, 4.0), run(2.2, 1.0, 2.0)]
        tl = [run(1.8, 1.1, 2.4), run(0.9, 2.2, 4.8), run(1.98, 1.3, 2.0)]
        row = bench.summary("tltcp", tl, tcp, gso=True, family=4)
        self.assertAlmostEqual(row["gbit_s"], 1.8)
        self.assertAlmostEqual(row["vs_tcp"]["gbit_s"], 0.9)
        self.assertAlmostEqual(row["vs_tcp"]["snd_cpu_s_per_gb"], 1.1)
        lo, hi = row["vs_tcp_range"]["rcv_cpu_s_per_gb"]
        self.assertAlmostEqual(lo, 1.0)
        self.assertAlmostEqual(hi, 1.2)
        self.assertIn("0.90x [0.90-0.90]", bench.table([row]))

    def test_no_ratio_without_a_base_or_a_measure(self):
        self.assertNotIn("vs_tcp", bench.summary("tcp", [run(1, 1, 1)],
                                                 None))
        row = bench.summary("t", [run(1, 1, 1), run(1, 1, 1)],
                            [run(1, 0.0, 1), run(1, 0.0, 1)])
        self.assertIsNone(row["vs_tcp"]["snd_cpu_s_per_gb"])
        self.assertIn("-", bench.table([{**row, "gso": False,
                                         "family": 6}]))


class AB(unittest.TestCase):
    def test_only_keeps_the_tcp_row_a_tltcp_row_needs(self):
        names = [t[0] for t in bench.selected("tltcp MSG_TL 16*")]
        self.assertEqual(names, ["tcp write 16 KiB", "tltcp MSG_TL 16 KiB"])
        self.assertEqual(bench.selected(None), bench.TRANSPORTS)
        self.assertEqual(bench.selected("nothing*"), [])

    def test_diagnostic_rows_only_when_named(self):
        self.assertFalse([t for t in bench.selected("tltcp*")
                          if t in bench.DIAGNOSTIC])
        names = [t[0] for t in bench.selected("diag*")]
        self.assertEqual(names, ["tcp write 16 KiB"] +
                         [t[0] for t in bench.DIAGNOSTIC])

    def test_a_row_can_give_the_server_options(self):
        cmds = []

        class Srv:
            returncode = 0

            def __init__(self, cmd, **kw):
                cmds.append(cmd)

            def communicate(self, timeout):
                return ('{"bytes": 1000, "seconds": 1, "cpu_seconds": 1}',
                        None)

        out = types.SimpleNamespace(stdout='{"cpu_seconds": 1}')
        with mock.patch.object(bench.subprocess, "Popen", Srv), \
                mock.patch.object(bench, "sh", lambda *a, **k: out), \
                mock.patch.object(bench, "mib",
                                  lambda ns: collections.defaultdict(int)), \
                mock.patch.object(bench.time, "sleep", lambda s: None):
            for name, opts, server, _ in bench.DIAGNOSTIC:
                bench.run_one(4, opts, server, 1, 1)
                bench.run_one(6, opts, server, 1, 1)
        self.assertEqual([c[c.index("-p") + 1:] for c in cmds],
                         [["1", "-T"], ["1", "-T", "-6"],
                          ["1", "-T", "-S"], ["1", "-T", "-S", "-6"],
                          ["1", "-r", "16384"], ["1", "-r", "16384", "-6"]])
        self.assertEqual([bench.is_tltcp(t[2]) for t in bench.DIAGNOSTIC],
                         [True, True, False])

    def test_rounds_run_tcp_then_a_and_b_in_turn(self):
        order, loaded = [], []

        def fake(family, opts, server, secs, port):
            order.append((opts[-1] if opts else "tcp", loaded[-1]
                          if bench.is_tltcp(server) else None))
            # B is 10 % faster than A in every round, TCP steady
            g = {None: 2.0, "a.ko": 1.0, "b.ko": 1.1}[order[-1][1]]
            return run(g, 1.0, 1.0)

        args = types.SimpleNamespace(repeat=2, seconds=1)
        cases = [("tcp", [], []), ("tl", ["-T"], ["-T"])]
        with mock.patch.object(bench, "run_one", fake), \
                mock.patch.object(bench, "load_tltcp", loaded.append):
            runs, port = bench.ab_rounds(args, 0, cases, 4,
                                         {"A": "a.ko", "B": "b.ko"})
        self.assertEqual(order, [("tcp", None), ("-T", "a.ko"),
                                 ("-T", "b.ko"), ("tcp", None),
                                 ("-T", "b.ko"), ("-T", "a.ko")])
        self.assertEqual(loaded, ["a.ko", "b.ko", "b.ko", "a.ko"])
        self.assertEqual(port, 6)
        v, span = bench.ratios(runs[("tl", "B")], runs[("tl", "A")])
        self.assertAlmostEqual(v["gbit_s"], 1.1)
        self.assertAlmostEqual(span["gbit_s"][0], 1.1)

    def test_b_rows_say_their_ratio_to_a(self):
        row = bench.summary("tl (B)", [run(1.1, 1, 1)], [run(2, 1, 1)],
                            gso=True, family=4)
        row["vs_a"], row["vs_a_range"] = bench.ratios([run(1.1, 1, 1)],
                                                      [run(1.0, 1, 1)])
        self.assertIn("B / A", bench.table([row]))
        self.assertIn("1.10x [1.10-1.10]", bench.table([row]))


if __name__ == "__main__":
    unittest.main()
