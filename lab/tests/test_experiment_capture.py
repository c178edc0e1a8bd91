# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the experiment framework: the captures (ss samples,
tcp_probe, pcap) with stand-ins for ss, tcpdump and the tracefs."""

import contextlib
import json
import os
import sys
import tempfile
import time
import unittest
from unittest import mock

from lab.experiment import captures, schedule
from lab.experiment import spec as S
from lab.tools import ss, tcp_probe, tcpdump
from lab.tests.experiment_fixtures import SPEC, write


CAPTURE = SPEC + """
[[run]]
name = "cap"
capture = { pcap = true, tcp_probe = true }
flows = [ { name = "c" } ]
"""


class Capture(unittest.TestCase):
    """The capture table, and each capture's start and stop with
    stand-ins for ss, tcpdump and the tracefs."""

    def setUp(self):
        self.d = tempfile.mkdtemp()

    def load(self, text):
        return {r["name"]: r for r in S.load(write(self.d, "c.toml",
                                                   text))["runs"]}

    def test_spec(self):
        runs = self.load(CAPTURE)
        self.assertEqual(runs["cap"]["capture"],
                         {"pcap": 128, "tcp_probe": True})
        self.assertNotIn("capture", runs["free"])
        # [defaults] capture under each run's, key by key.
        spec = CAPTURE.replace("interval = 0.5\n", "interval = 0.5\n"
                               "capture = { ss = 0.5, pcap = 64 }\n")
        runs = self.load(spec)
        self.assertEqual(runs["free"]["capture"], {"ss": 0.5, "pcap": 64})
        self.assertEqual(runs["cap"]["capture"],
                         {"ss": 0.5, "pcap": 128, "tcp_probe": True})
        runs = self.load(spec.replace("pcap = true, tcp_probe = true",
                                      "ss = false, pcap = false"))
        self.assertNotIn("capture", runs["cap"])
        bad = {"not a table": "capture = 5",
               "unknown key": "capture = { tcpdump = true }",
               "ss zero": "capture = { ss = 0 }",
               "ss text": 'capture = { ss = "1" }',
               "ss true": "capture = { ss = true }",
               "tcp_probe number": "capture = { tcp_probe = 1 }",
               "pcap zero": "capture = { pcap = 0 }",
               "pcap float": "capture = { pcap = 1.5 }",
               "pcap text": 'capture = { pcap = "128" }'}
        for why, line in bad.items():
            with self.subTest(why):
                self.assertRaises(S.SpecError, self.load, CAPTURE.replace(
                    "capture = { pcap = true, tcp_probe = true }", line))
        with self.assertRaisesRegex(S.SpecError, "defaults.*unknown"):
            self.load(CAPTURE.replace("interval = 0.5\n", "interval = 0.5\n"
                                      "capture = { x = 1 }\n"))

    def test_tcp_probe_runs_alone(self):
        e = S.load(write(self.d, "c.toml", CAPTURE.replace(
            'name = "cap"', 'name = "cap-{v}"\nvary = [1, 2]')))
        order = [[r["name"] for r in b] for b in schedule._batches(e)]
        # Without it, free would fill a-2's place and cap-1 and cap-2
        # would share a batch.
        self.assertEqual(order, [["a-1", "free"], ["a-2"], ["cap-1"],
                                 ["cap-2"]])
        e = S.load(write(self.d, "c.toml", CAPTURE.replace(
            "tcp_probe = true", "ss = 1")))
        self.assertEqual([[r["name"] for r in b]
                          for b in schedule._batches(e)],
                         [["a-1", "free"], ["a-2", "cap"]])

    def test_ss_nodes(self):
        run = {"flows": [{"pair": 1, "transport": "tcp"},
                         {"pair": 1, "transport": "dccp"},
                         {"pair": 2, "transport": "udp"},
                         {"pair": 3, "transport": "tltcp"},
                         {"pair": 4, "transport": "dccp"}]}
        self.assertEqual(captures._ss_nodes(run),
                         {"s1": "-tdinH", "s3": "-tinH", "s4": "-dinH"})

    SS = (
        "# 1000.5\n"
        "ESTAB 0      0      10.0.1.1:40312 10.0.4.2:5301\n"
        "\t cubic wscale:7,7 rto:204 rtt:1.234/0.5 ato:40 mss:1448 "
        "pmtu:1500 rcvmss:536 advmss:1448 cwnd:10 ssthresh:7 "
        "bytes_sent:14480 segs_out:11 send 93.9Mbps lastsnd:4 "
        "pacing_rate 1.2Gbps delivery_rate 800Mbps delivered:9 "
        "busy:100ms retrans:0/3 rcv_space:14480 minrtt:1.1\n"
        "ESTAB 0      0      10.0.1.1:40314 10.0.4.2:5302\n"
        "\t bbr wscale:7,7 rto:204 rtt:20.5/1.25 mss:460 cwnd:4 "
        "bbr:(bw:1840000bps,mrtt:20.1,pacing_gain:1,cwnd_gain:2) "
        "pacing_rate 1840000bps delivery_rate 920000bps minrtt:20.1\n"
        "# 1001.5\n"
        "tcp   ESTAB 0      0      10.0.1.1:40312 10.0.4.2:5301\n"
        "\t cubic wscale:7,7 rto:208 rtt:2/1 cwnd:12 "
        "pacing_rate 207450131632bps delivery_rate 26062885568bps "
        "retrans:1/5\n"
        "dccp  ESTAB 0      0      10.0.1.1:40400 10.0.4.2:5303\n"
        "\t rto:300 rtt:52.1/0 mss:1424\n"
        "tcp   ESTAB 0      0      10.0.1.1:40500 10.0.9.9:6301\n"
        "\t cwnd:5 rtt:1/1\n"
        "# 1002\n"
        "ESTAB 0 0 [fd00::1:1]:40312 [fd00::4:2]:5301 cubic rto:204 "
        "rtt:3/1 cwnd:14\n")

    def test_parse_ss(self):
        ports = {5301: "a", 5302: "b", 5303: "c"}
        got = ss.parse(self.SS, 1000.0, ports)
        self.assertEqual(got["a"], [
            {"t": 0.5, "cwnd": 10, "rtt_ms": 1.234,
             "pacing_rate_bps": 1200000000, "delivery_rate_bps": 800000000,
             "retrans": 3},
            {"t": 1.5, "cwnd": 12, "rtt_ms": 2.0,
             "pacing_rate_bps": 207450131632,
             "delivery_rate_bps": 26062885568, "retrans": 5},
            {"t": 2.0, "cwnd": 14, "rtt_ms": 3.0}])
        self.assertEqual(got["b"], [
            {"t": 0.5, "cwnd": 4, "rtt_ms": 20.5,
             "pacing_rate_bps": 1840000, "delivery_rate_bps": 920000}])
        # DCCP: ss shows CCID 3's RTT only.
        self.assertEqual(got["c"], [{"t": 1.5, "rtt_ms": 52.1}])
        self.assertEqual(set(got), {"a", "b", "c"})
        # Lines before the first time stamp belong to no sample.
        self.assertEqual(ss.parse(self.SS.split("\n", 1)[1], 1000.0,
                                  ports)["a"][0]["t"], 1.5)

    def test_ss_samples(self):
        run = {"name": "r", "flows": [
            {"name": "a", "pair": 1, "transport": "tcp"},
            {"name": "b", "pair": 1, "transport": "tcp"},
            {"name": "u", "pair": 2, "transport": "udp"}]}
        canned = self.SS.split("# 1001.5\n")[0].split("\n", 1)[1]
        cmds = []

        def in_ns(topo, node, args):
            cmds.append((node, args))
            return [sys.executable, "-c",
                    f"import sys; sys.stdout.write({canned!r})"]
        logs = []

        def errlog(name):
            logs.append(open(os.path.join(self.d, name), "w"))
            return logs[-1]
        with mock.patch.object(captures, "_in_ns", in_ns):
            with contextlib.ExitStack() as st:
                t0 = time.time()
                stop = captures._start_ss(run, None, self.d, 0.1, errlog, st)
                # Every 0.1 s: wait for three samples (a loaded host may
                # take a while to start each).
                deadline = time.time() + 10
                while len(cmds) < 3 and time.time() < deadline:
                    time.sleep(0.05)
                failed, info = stop(t0)
                n = len(cmds)
                t1 = time.time()
            time.sleep(0.3)
            self.assertEqual(len(cmds), n, "sampling goes on after stop")
        for f in logs:
            f.close()
        self.assertEqual(failed, [])
        self.assertEqual({(n, tuple(a)) for n, a in cmds},
                         {("s1", ("ss", "-tinH"))})
        self.assertGreaterEqual(n, 3)
        with open(os.path.join(self.d, "ss.json")) as f:
            ss = json.load(f)
        self.assertEqual(set(ss), {"a", "b"})
        self.assertEqual(len(ss["a"]), n)
        self.assertEqual(info, {"ss_samples": {"a": n, "b": n}})
        # Seconds after t0, in the order taken.
        ts = [s["t"] for s in ss["a"]]
        self.assertEqual(ts, sorted(ts))
        self.assertTrue(0 <= ts[0] and ts[-1] <= t1 - t0, ts)
        self.assertEqual(ss["b"][0]["cwnd"], 4)
        with open(os.path.join(self.d, "s1.ss.txt")) as f:
            self.assertEqual(f.read().count("\n# "), n - 1)

    FAKE_TCPDUMP = r"""
import os, signal, sys, time
args = sys.argv[1:]
if os.environ.get("FAIL"):
    sys.stderr.write("tcpdump: to-r2: No such device exists\n")
    sys.exit(1)
path = args[args.index("-w") + 1]
with open(path + ".pid", "w") as f:
    f.write(str(os.getpid()))
def bye(*_):
    with open(path, "wb") as f:
        f.write(b"pcap")
    sys.stderr.write("5 packets captured\n7 packets received by filter\n"
                     "2 packets dropped by kernel\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, bye)
time.sleep(0.2)
sys.stderr.write("tcpdump: listening on to-r2, link-type EN10MB\n")
sys.stderr.flush()
while True:
    time.sleep(1)
"""

    def pcap(self, stack, env=None):
        fake = write(self.d, "tcpdump.py", self.FAKE_TCPDUMP)

        class Topo:
            info = {"bottleneck": "r1:to-r2"}
        seen = []

        def in_ns(topo, node, args):
            seen.append((node, args))
            return [sys.executable, fake, *args]
        logs = []

        def errlog(name):
            logs.append(open(os.path.join(self.d, name), "w"))
            stack.callback(logs[-1].close)
            return logs[-1]
        with mock.patch.object(captures, "_in_ns", in_ns), \
                mock.patch.dict(os.environ, env or {}):
            stop = captures._start_pcap(Topo(), self.d, errlog, 128, stack)
        return stop, seen

    def gone(self):
        with open(os.path.join(self.d, "bottleneck.pcap.pid")) as f:
            pid = int(f.read())
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)

    def test_pcap(self):
        self.assertEqual(tcpdump.args("to-r2", 128, "/r/b.pcap"),
                         ["tcpdump", "-i", "to-r2", "-s", "128", "-U",
                          "-Z", "root", "-B", "4096", "-w", "/r/b.pcap"])
        with contextlib.ExitStack() as st:
            stop, seen = self.pcap(st)
            # Capturing once started: it said so.
            with open(os.path.join(self.d, "bottleneck.pcap.err")) as f:
                self.assertIn("listening on", f.read())
            failed, info = stop(1.0)
        self.assertEqual(seen[0][0], "r1")
        self.assertEqual(seen[0][1][:3], ["tcpdump", "-i", "to-r2"])
        self.assertEqual(failed, [])
        self.assertEqual(info, {"pcap": {"captured": 5, "received": 7,
                                         "dropped": 2}})
        self.assertTrue(os.path.exists(os.path.join(self.d,
                                                    "bottleneck.pcap")))
        self.gone()

    def test_pcap_stops_on_an_exception(self):
        with self.assertRaises(KeyError):
            with contextlib.ExitStack() as st:
                self.pcap(st)
                raise KeyError("a flow failed")
        self.gone()
        self.assertTrue(os.path.exists(os.path.join(self.d,
                                                    "bottleneck.pcap")))

    def test_pcap_that_does_not_start(self):
        with self.assertRaisesRegex(RuntimeError, "No such device"):
            with contextlib.ExitStack() as st:
                self.pcap(st, {"FAIL": "1"})

    def test_tcp_probe(self):
        fs = os.path.join(self.d, "tracefs")
        os.makedirs(os.path.join(fs, "events", "tcp", "tcp_probe"))
        trace = (" flowgen-9 [000] ..s1. 12.000001: tracing_mark_write: "
                 "experiment t0 1000.000000\n"
                 " flowgen-9 [000] ..s1. 12.5: tcp_probe: family=AF_INET "
                 "src=10.0.1.1:40312 dest=10.0.4.2:5301 mark=0x0 "
                 "data_len=0 snd_nxt=0x1 snd_una=0x1 snd_cwnd=10 "
                 "ssthresh=2147483647 snd_wnd=64256 srtt=20000 "
                 "rcv_wnd=65536 sock_cookie=3\n")
        write(fs, "trace_pipe", trace)
        run = {"name": "r", "flows": [{"name": "a"}, {"name": "b"}]}
        with mock.patch.object(tcp_probe, "TRACEFS", fs):
            with contextlib.ExitStack() as st:
                mark, stop = captures._start_tcp_probe(run, self.d, st)

                def read(name):
                    with open(os.path.join(fs, name)) as f:
                        return f.read()
                self.assertEqual(read("tracing_on"), "1")
                self.assertEqual(read("events/tcp/tcp_probe/enable"), "1")
                self.assertEqual(read("events/tcp/tcp_probe/filter"),
                                 "dport >= 5301 && dport < 5303")
                mark(1000.0)
                self.assertEqual(read("trace_marker"),
                                 "experiment t0 1000.000000")
            # Stopped on the way out of the block.
            self.assertEqual(read("tracing_on"), "0")
            self.assertEqual(read("events/tcp/tcp_probe/enable"), "0")
            self.assertEqual(stop(1.0), ([], {}))
        with open(os.path.join(self.d, "tcp_probe.txt")) as f:
            got = f.read()
        self.assertEqual(got, trace)
        self.assertEqual(tcp_probe.parse(got),
                         {"3": [(12.5, 10, 2147483647, 1, 1)]})


if __name__ == "__main__":
    unittest.main()
