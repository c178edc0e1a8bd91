# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the experiment framework: tunnels, per-flow warm-ups
and repetitions."""

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

from lab.experiment import __main__ as cli
from lab.experiment import analysis, captures, schedule
from lab.experiment import spec as S
from lab.experiment import report as R
from lab.tools import flowgen
from lab.tests.experiment_fixtures import SPEC, report, write


TUNNEL = """
title = "tun"
sinks = true
header_bytes = 42
[topology]
shape = "collapse"
delay = "7ms"
[defaults]
duration = 9
interval = 1
[[run]]
name = "voip"
tunnel = { transport = "dccp-ccid3", queue = 1, lifetime_ms = 3600000 }
flows = [ { name = "up", pair = 1, transport = "udp", rate = 62400, len = 78, count = 2 },
          { name = "low", pair = 2, transport = "udp", rate = 5120, ramp = "5120,0.5", len = 78 },
          { name = "t", pair = 2 } ]
"""


class Tunnel(unittest.TestCase):
    """Tunnelled UDP flows, rising rates, header bytes and the
    per-sink metrics of the middleware paper."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.exp = S.load(write(self.d, "t.toml", TUNNEL))

    def test_spec(self):
        run = self.exp["runs"][0]
        self.assertEqual(run["tunnel"], {"transport": "dccp-ccid3",
                                         "queue": 1, "lifetime_ms": 3600000})
        up1, low, tcp = run["flows"][0], run["flows"][2], run["flows"][3]
        # UDP flows go through the tunnel, others directly.
        self.assertTrue(S.tunnelled(run, up1))
        self.assertFalse(S.tunnelled(run, tcp))
        every = self.exp["interval"]
        self.assertEqual(flowgen.client_args(low, every, "127.0.0.1")[-4:],
                         ["-l", "78", "-R", "5120,0.5"])
        # A UDP receiver waits out silences as long as its flow.
        self.assertEqual(flowgen.server_args(low, every, 5303, "/r")[-2:],
                         ["-I", "9"])
        for bad in ('transport = "udp"', "queue = 0", 'queue = "1"',
                    "lifetime_ms = 0", "mtu = 5"):
            with self.subTest(bad):
                self.assertRaises(S.SpecError, S.load, write(
                    self.d, "b.toml", TUNNEL.replace(
                        'transport = "dccp-ccid3", queue = 1', bad)))
        self.assertRaises(S.SpecError, S.load, write(
            self.d, "b.toml", TUNNEL.replace("rate = 5120, ", "")))
        ok = S.load(write(self.d, "m.toml", TUNNEL.replace(
            '"dccp-ccid3"', '"multfrc:0.5"')))
        self.assertEqual(ok["runs"][0]["tunnel"]["transport"], "multfrc:0.5")

    def test_tunnel_commands(self):
        run = self.exp["runs"][0]

        class Topo:
            def addr(self, node):
                return {"d1": "10.0.4.2", "d2": "10.0.5.2"}[node]
        client, server = captures._tunnel_args(run, run["flows"][2], 2,
                                               Topo(), "/r")
        self.assertEqual(client[1:], [
            "tunnel", "client", "--peer", "10.0.5.2:6303",
            "--udp", "127.0.0.1:7303", "--to", "127.0.0.1:5303",
            "--transport", "dccp-ccid3", "--queue", "1",
            "--stats", "/r/low.tun-client.json", "--lifetime", "3600000"])
        self.assertEqual(server[1:], [
            "tunnel", "server", "--listen", "6303",
            "--transport", "dccp-ccid3", "--to", "127.0.0.1:5303",
            "--stats", "/r/low.tun-server.json"])

    def write_voip(self):
        """The voip run's reports, written by hand."""
        run = self.exp["runs"][0]
        d = os.path.join(self.d, "voip")
        os.makedirs(d)
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump({"run": run, "t0": 100.0, "kernel": "k",
                       "failed": [], "topology": {"info": {}}}, f)

        def rcv(per_s, pkts, owd, lost=0):
            # per_s bytes and pkts datagrams a second for 9 s.
            return report(100.0, [{"start": float(i), "seconds": 1.0,
                                   "bytes": b, "packets": p}
                                  for i, (b, p) in enumerate(
                                      zip(per_s, pkts))],
                          packets=sum(pkts), lost=lost,
                          mean_one_way_delay=owd)
        # up1: 100 datagrams of 78 B a second, 1 ms; up2 the same but
        # nothing in its last 3 s, 3 ms; low: 10 a second, a peak of 30
        # at 4 s, 5 s, 10 lost.
        reps = {
            "up1.rcv": rcv([7800] * 9, [100] * 9, 0.001),
            "up2.rcv": rcv([7800] * 6 + [0] * 3, [100] * 6 + [0] * 3,
                           0.003),
            "low.rcv": rcv([780] * 4 + [2340] + [780] * 4,
                           [10] * 4 + [30] + [10] * 4, 5.0, lost=10),
            "t.rcv": report(100.0, [{"start": float(i), "seconds": 1.0,
                                     "bytes": 1000} for i in range(9)]),
            "low.tun-client": {"from_app": {"datagrams": 200, "bytes": 1},
                               "dropped_queue_full": {"datagrams": 30},
                               "dropped_expired": {"datagrams": 20},
                               "to_tunnel": {"datagrams": 150}},
            "low.tun-server": {"delivered": {"datagrams": 110}},
        }
        for name, rep in reps.items():
            with open(os.path.join(d, name + ".json"), "w") as f:
                json.dump(rep, f)
        with open(os.path.join(self.d, "experiment.json"), "w") as f:
            json.dump(self.exp, f)

    def test_sink_metrics(self):
        self.write_voip()
        R.analyze(self.d)
        with open(os.path.join(self.d, "metrics.json")) as f:
            res = json.load(f)["runs"]["voip"]
        m, fl = res["run"], res["flows"]
        # 120 B a datagram on the wire: 96 kbit/s; up2 2/3 of it.
        self.assertAlmostEqual(fl["up1"]["throughput_kbps"], 96.0)
        self.assertAlmostEqual(fl["up2"]["throughput_kbps"], 64.0)
        self.assertAlmostEqual(fl["t"]["throughput_kbps"], 8.0)
        self.assertAlmostEqual(m["d1_kbps"], 160.0)
        self.assertAlmostEqual(m["d1_delay_s"], (900 * 0.001 + 600 * 0.003)
                               / 1500)
        self.assertAlmostEqual(m["d1_peak_kbps"], 192.0)
        # The last third (6 s to 9 s): up1 alone.
        self.assertAlmostEqual(m["d1_end_kbps"], 96.0)
        # d2: low (9.6 kbit/s, 28.8 at 4 s) and t (8 kbit/s, no headers).
        self.assertAlmostEqual(m["d2_peak_kbps"], 36.8)
        self.assertEqual(m["d2_peak_s"], 4.0)
        self.assertAlmostEqual(m["d2_delay_s"], 5.0)
        self.assertAlmostEqual(m["d2_loss_pct"], 100 * 10 / 120)
        self.assertAlmostEqual(m["end_kbps"], 96.0 + 17.6)
        # The tunnel dropped 50 of the 200 datagrams it was given.
        self.assertAlmostEqual(fl["low"]["tunnel_drop_pct"], 25.0)
        self.assertEqual(fl["low"]["tunnel_delivered"], 110)
        self.assertNotIn("tunnel_drop_pct", fl["up1"])
        # A bound on a ratio of two metrics.
        self.exp["check"] = [{"run": "voip", "metric": "d1_end_kbps",
                              "over": {"run": "voip",
                                       "metric": "d1_peak_kbps"},
                              "max": 0.4}]
        with open(os.path.join(self.d, "experiment.json"), "w") as f:
            json.dump(self.exp, f)
        _, checks = R.analyze(self.d)
        self.assertEqual([ok for ok, _ in checks], [False])
        self.assertIn("voip d1_end_kbps / voip d1_peak_kbps = 0.5",
                      checks[0][1])


WARMUP = """
title = "w"
[topology]
shape = "dumbbell"
rate = "1mbit"
[defaults]
duration = 30
interval = 1
[[run]]
name = "late"
flows = [ { name = "dccp", transport = "dccp", ccid = 3, warmup = 20 },
          { name = "tcp", start = 10, warmup = 10 } ]
"""


class FlowWarmup(unittest.TestCase):
    """A flow's own warmup: a DCCP flow from 0 s and a TCP flow from
    10 s, both measured over [20 s, 30 s]."""

    def setUp(self):
        self.d = tempfile.mkdtemp()

    def test_spec(self):
        e = S.load(write(self.d, "w.toml", WARMUP))
        dccp, tcp = e["runs"][0]["flows"]
        self.assertEqual((dccp["warmup"], tcp["warmup"]), (20.0, 10.0))
        self.assertEqual(e["runs"][0]["warmup"], 0.0)
        for bad in ("-1", '"20"', "true"):
            with self.subTest(bad):
                self.assertRaises(S.SpecError, S.load, write(
                    self.d, "b.toml", WARMUP.replace("warmup = 20",
                                                     f"warmup = {bad}")))
        # Less than 1 s after the flow's own warm-up.
        self.assertRaises(S.SpecError, S.load, write(
            self.d, "b.toml", WARMUP.replace("warmup = 10",
                                             "warmup = 19.5")))
        # The run's warm-up of 25 s leaves the TCP flow nothing; its own
        # 10 s leave it 10 s.
        ok = WARMUP.replace('name = "late"', 'name = "late"\nwarmup = 25')
        self.assertEqual(S.load(write(self.d, "o.toml", ok))["runs"][0]
                         ["flows"][1]["warmup"], 10.0)
        self.assertRaises(S.SpecError, S.load, write(
            self.d, "b.toml", ok.replace(", warmup = 10", "")))

    def test_flow_metrics(self):
        e = S.load(write(self.d, "w.toml", WARMUP))
        run = e["runs"][0]
        d = os.path.join(self.d, "late")
        os.makedirs(d)
        t0 = 100.0
        info = {"run": run, "t0": t0, "kernel": "k", "failed": [],
                "topology": {"info": {"rate": 1000000}}}
        # 50 kB a second before 20 s; then dccp 1000 B/s, tcp 2000 B/s
        # until 25 s and 4000 B/s after.
        reps = {"dccp": report(t0, [{"start": float(i), "seconds": 1.0,
                                     "bytes": 50000 if i < 20 else 1000}
                                    for i in range(30)]),
                "tcp": report(t0 + 10, [{"start": float(i), "seconds": 1.0,
                                         "bytes": (50000, 2000, 4000)[
                                             (i >= 10) + (i >= 15)]}
                                        for i in range(20)])}
        for name, r in reps.items():
            with open(os.path.join(d, f"{name}.rcv.json"), "w") as f:
                json.dump(r, f)
        dccp, tcp = run["flows"]
        # 1000 B/s: 8 kbit/s; tcp (2000 + 4000) / 2 B/s: 24 kbit/s.
        self.assertAlmostEqual(
            analysis.flow_metrics(e, info, dccp, d)["throughput_kbps"], 8.0)
        self.assertAlmostEqual(
            analysis.flow_metrics(e, info, tcp, d)["throughput_kbps"], 24.0)
        # A flow without its own takes the run's: 15 s, from 25 s on.
        info["run"] = dict(run, warmup=15.0)
        plain = {k: v for k, v in tcp.items() if k != "warmup"}
        self.assertAlmostEqual(
            analysis.flow_metrics(e, info, plain, d)["throughput_kbps"], 32.0)
        self.assertAlmostEqual(
            analysis.flow_metrics(e, info, tcp, d)["throughput_kbps"], 24.0)


REPEAT = SPEC.replace('title = "t"\n', 'title = "t"\nrepeat = 3\n')


class Repeat(unittest.TestCase):
    """repeat: how often a run runs, where its repetitions go, how
    their metrics combine and how a failed one shows."""

    def setUp(self):
        self.d = tempfile.mkdtemp()

    def test_spec(self):
        spec = REPEAT.replace('name = "free"\n', 'name = "free"\nrepeat = 1\n')
        e = S.load(write(self.d, "r.toml", spec))
        self.assertEqual({r["name"]: r["repeat"] for r in e["runs"]},
                         {"a-1": 3, "a-2": 3, "free": 1})
        # [short] repeat replaces the experiment's for the short variant.
        e = S.load(write(self.d, "r.toml", spec.replace(
            "duration = 10\n", "duration = 10\nrepeat = 2\n")), short=True)
        self.assertEqual(e["runs"][0]["repeat"], 2)
        self.assertEqual(S.load(write(self.d, "s.toml", SPEC))["runs"][0]
                         ["repeat"], 1)
        for bad in ("0", '"2"', "true", "1.5"):
            with self.subTest(bad):
                self.assertRaises(S.SpecError, S.load, write(
                    self.d, "b.toml", REPEAT.replace("repeat = 3",
                                                     f"repeat = {bad}")))
        self.assertRaises(S.SpecError, S.load, write(
            self.d, "b.toml", SPEC.replace('name = "free"\n',
                                           'name = "free"\nrepeat = 0\n')))
        self.assertRaises(S.SpecError, S.load, write(
            self.d, "b.toml", SPEC.replace('"free"', '"fr@e"')))
        self.assertEqual([S.rep_dir("a-1", k) for k in (1, 2, 3)],
                         ["a-1", "a-1@2", "a-1@3"])

    def test_list_counts_repetitions(self):
        write(self.d, "r.toml", REPEAT.replace(
            'name = "free"\n', 'name = "free"\nrepeat = 1\n'))
        out = io.StringIO()
        with mock.patch.object(cli, "EXPERIMENTS", self.d), \
                contextlib.redirect_stdout(out):
            self.assertEqual(cli.main(["list", "--name", "r"]), 0)
        # a-1 and a-2 three times, free once: 7 runs of 20 s.
        self.assertEqual(out.getvalue(), "r: t (7 runs, 140 s of flows)\n")

    def test_run_all_runs_each_repetition_in_turn(self):
        e = S.load(write(self.d, "r.toml", REPEAT))
        calls = []

        def run_one(exp, run, out, status, rep=1):
            calls.append((run["name"], rep))
            return (run["name"], rep) != ("a-2", 2)
        out = os.path.join(self.d, "out")
        with mock.patch.object(schedule, "run_one", run_one), \
                mock.patch.object(schedule, "FLOWGEN", sys.executable), \
                mock.patch.object(schedule, "_set_modules",
                                  lambda m, s: None), \
                mock.patch.object(schedule, "_restore_modules",
                                  lambda s: None), \
                contextlib.redirect_stderr(io.StringIO()):
            # --only picks runs by name: all of a run's repetitions.
            self.assertTrue(schedule.run_all(e, out, only="a-1"))
            self.assertEqual(calls, [("a-1", 1), ("a-1", 2), ("a-1", 3)])
            del calls[:]
            # A failed repetition fails the run; the others still run.
            self.assertFalse(schedule.run_all(e, out, only="a-2"))
            self.assertEqual(calls, [("a-2", 1), ("a-2", 2), ("a-2", 3)])
            self.assertRaises(S.SpecError, schedule.run_all, e, out,
                              only="a-1@2")
            # Globs separated by commas: the runs any of them matches.
            del calls[:]
            schedule.run_all(e, out, only="a-1,fr*")
            self.assertEqual(sorted({c[0] for c in calls}), ["a-1", "free"])

    def write_rep(self, run, k, x_per_half_s, failed=()):
        """Repetition k of run a-1: x at x_per_half_s bytes per 0.5 s
        from 2 s to 10 s, tcp1 at 31250 (500 kbit/s)."""
        d = os.path.join(self.d, S.rep_dir("a-1", k))
        os.makedirs(d)
        t0 = 1000.0
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump({"run": run, "t0": t0, "kernel": "k",
                       "failed": list(failed), "repetition": k,
                       "topology": {"info": {"rate": 1500000,
                                             "rtt": 0.02}}}, f)
        for name, rep in (
                ("x.rcv", report(t0 + 2.01, [
                    {"start": i * 0.5, "seconds": 0.5,
                     "bytes": x_per_half_s} for i in range(16)])),
                ("tcp1.rcv", report(t0, [
                    {"start": i * 0.5, "seconds": 0.5, "bytes": 31250}
                    for i in range(20)]))):
            with open(os.path.join(d, name + ".json"), "w") as f:
                json.dump(rep, f)

    def analyze(self, e):
        with open(os.path.join(self.d, "experiment.json"), "w") as f:
            json.dump(e, f)
        _, checks = R.analyze(self.d)
        with open(os.path.join(self.d, "metrics.json")) as f:
            res = json.load(f)["runs"]["a-1"]
        with open(os.path.join(self.d, "README.md")) as f:
            return res, checks, f.read()

    def test_mean_and_confidence_interval(self):
        e = S.load(write(self.d, "r.toml", REPEAT), short=True)
        run = e["runs"][0]
        self.assertEqual(run["repeat"], 3)
        e["table"] = [{"title": "T", "metrics": ["throughput_kbps"],
                       "rows": [{"label": "x", "run": "a-1", "flow": "x",
                                 "paper": [900]}]}]
        # x at 900, 1000 and 1100 kbit/s: mean 1000, s = 100, h = 4.303
        # * 100 / sqrt(3) = 248.4.
        for k, b in ((1, 56250), (2, 62500), (3, 68750)):
            self.write_rep(run, k, b)
        res, checks, text = self.analyze(e)
        x = res["flows"]["x"]
        self.assertAlmostEqual(x["throughput_kbps"], 1000.0)
        h = res["ci"]["flows"]["x"]["throughput_kbps"]
        self.assertAlmostEqual(h, 4.303 * 100 / 3 ** 0.5)
        # The same in every repetition: the interval is 0.
        self.assertAlmostEqual(res["flows"]["tcp1"]["throughput_kbps"], 500)
        self.assertEqual(res["ci"]["flows"]["tcp1"]["throughput_kbps"], 0)
        # Run metrics too: utilisation (1400, 1500, 1600) / 1500.
        self.assertAlmostEqual(res["run"]["utilisation"], 1.0)
        self.assertAlmostEqual(res["ci"]["run"]["utilisation"],
                               h / 1500)
        self.assertEqual(res["n"], 3)
        self.assertEqual(res["failed"], [])
        self.assertEqual(
            [r["flows"]["x"]["throughput_kbps"]
             for r in res["repetitions"]], [900.0, 1000.0, 1100.0])
        # The check applies to the mean, the tables show mean ± h.
        self.assertEqual(checks, [(True, "a-1/x throughput_kbps = 1000 "
                                   "(mean of 3) in [100, ]")])
        self.assertIn("| x | 1000 ± 248 / 900 |", text)
        self.assertIn("| a-1 | x | 1000 ± 248 |", text)
        self.assertIn("utilisation 1 ± 0.166", text)
        self.assertIn("a-1 (3 of 3)", text)
        # The checked bound fails on the mean, not on one repetition.
        e["check"][0]["min"] = 1050
        _, checks, _ = self.analyze(e)
        self.assertEqual([ok for ok, _ in checks], [False])

    def test_failed_and_missing_repetitions(self):
        e = S.load(write(self.d, "r.toml", REPEAT), short=True)
        run = e["runs"][0]
        self.write_rep(run, 1, 62500)
        self.write_rep(run, 2, 62500, failed=["x sender exit 1"])
        # Repetition 3 left no result.
        res, checks, text = self.analyze(e)
        self.assertEqual(res["n"], 2)
        self.assertEqual(res["failed"], ["repetition 2: x sender exit 1",
                                         "repetition 3: no result"])
        self.assertEqual(res["repetitions"][2], {"missing": True})
        self.assertAlmostEqual(res["flows"]["x"]["throughput_kbps"], 1000)
        self.assertEqual([ok for ok, _ in checks], [True, False])
        self.assertIn("a-1: every flow ran (repetition 2: x sender exit 1; "
                      "repetition 3: no result)", checks[1][1])
        self.assertIn("a-1 (2 of 3)", text)
        # None at all: the run has no result, as an unrepeated one.
        for k in (1, 2):
            shutil.rmtree(os.path.join(self.d, S.rep_dir("a-1", k)))
        res, checks, _ = self.analyze(e)
        self.assertEqual(res, {"missing": True})
        self.assertEqual([ok for ok, _ in checks], [False, False])

    def test_combine_keeps_what_is_not_a_number(self):
        run = {"flows": [{"name": "f"}]}
        reps = [{"flows": {"f": {"a": 1, "ttm": None, "w": [[0, 1]]}},
                 "run": {"j": 0.5}, "failed": [], "kernel": "k"},
                {"flows": {"f": {"a": 3, "ttm": 4.0, "w": [[0, 2]]}},
                 "run": {"j": 0.7, "only": 2}, "failed": [],
                 "kernel": "k"}]
        r = analysis.combine_repetitions(run, reps)
        self.assertEqual(r["flows"]["f"], {"a": 2.0, "ttm": 4.0,
                                           "w": [[0, 1]]})
        self.assertEqual(r["ci"]["flows"]["f"], {"a": 12.706})
        self.assertAlmostEqual(r["run"]["j"], 0.6)
        self.assertEqual(r["run"]["only"], 2)
        self.assertNotIn("only", r["ci"]["run"])


class NoDccp(unittest.TestCase):
    """On a kernel without DCCP (Linux 6.16 on) an experiment whose runs
    need it is refused before anything starts, saying why; the runs that
    do not need it still run."""

    def run_all(self, exp, only=None, missing="socket: ESOCKTNOSUPPORT"):
        started = []
        with mock.patch.object(schedule.transports, "dccp_missing",
                               return_value=missing), \
                mock.patch.object(schedule.os, "access", return_value=True), \
                mock.patch.object(schedule.subprocess, "run") as run, \
                mock.patch.object(schedule, "_repeated",
                                  side_effect=lambda e, r, o, s:
                                  started.append(r["name"]) or True):
            d = tempfile.mkdtemp()
            try:
                schedule.run_all(exp, d, only)
            finally:
                shutil.rmtree(d)
        return started, [c.args[0] for c in run.call_args_list]

    def test_dcp_refused(self):
        exp = S.load("dcp", short=True)
        self.assertTrue(all(schedule.transports.needs_dccp(r)
                            for r in exp["runs"]))
        with self.assertRaises(S.SpecError) as e:
            self.run_all(exp)
        self.assertRegex(str(e.exception),
                         r"^dcp: DCCP is not in this kernel \(socket: "
                         r"ESOCKTNOSUPPORT; .*\), and 2 of the runs need it "
                         r"\(alone, ccid3-vs-1\)")

    def test_tunnel_over_dccp_refused(self):
        d = tempfile.mkdtemp()
        exp = S.load(write(d, "t.toml", TUNNEL))
        shutil.rmtree(d)
        with self.assertRaises(S.SpecError):
            self.run_all(exp)
        exp["runs"][0]["tunnel"]["transport"] = "multfrc"
        started, _ = self.run_all(exp)
        self.assertEqual(started, ["voip"])

    def test_with_dccp_runs_and_loads_it(self):
        exp = S.load("dcp", short=True)
        started, cmds = self.run_all(exp, missing=None)
        self.assertEqual(sorted(started), ["alone", "ccid3-vs-1"])
        self.assertIn(["modprobe", "dccp_ipv4"], cmds)


if __name__ == "__main__":
    unittest.main()
