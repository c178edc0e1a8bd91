# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the experiment framework: expansion of a description,
the order runs take, and the metrics and checks computed from reports
written by hand; repetitions, per-flow warm-ups and the captures (ss
samples, tcp_probe, pcap) with stand-ins for ss, tcpdump and the
tracefs."""

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
import unittest
from unittest import mock

from lab import metrics
from lab.experiment import __main__ as cli
from lab.experiment import analysis, captures, plots, schedule
from lab.experiment import spec as S
from lab.experiment import report as R
from lab.tools import flowgen, ss, tcp_probe, tcpdump

SPEC = """
title = "t"
parallel = 2
[topology]
shape = "dumbbell"
rate = "1mbit"
delay = "10ms"
[defaults]
duration = 20
interval = 0.5
[[run]]
name = "a-{v}"
vary = [1, 2]
modules = { m = { p = "{v}" } }
reference = ["tcp*"]
flows = [ { name = "x", cc = "reno", start = 2 },
          { name = "tcp", count = "{v}" } ]
[[run]]
name = "free"
flows = [ { name = "u", transport = "udp", rate = "1M", len = 500 } ]
[short]
runs = ["a-1"]
duration = 10
[[check]]
run = "a-1"
flow = "x"
metric = "throughput_kbps"
min = 100
[[check]]
variant = "full"
run = "free"
metric = "utilisation"
max = 2
"""


def write(d, name, text):
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(text)
    return p


class Load(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.path = write(self.d, "t.toml", SPEC)

    def test_expansion(self):
        e = S.load(self.path)
        self.assertEqual([r["name"] for r in e["runs"]],
                         ["a-1", "a-2", "free"])
        a2 = e["runs"][1]
        # vary reaches module parameters (as a number) and counts.
        self.assertEqual(a2["modules"], {"m": {"p": 2}})
        self.assertEqual([f["name"] for f in a2["flows"]],
                         ["x", "tcp1", "tcp2"])
        self.assertEqual([f["pair"] for f in a2["flows"]], [1, 2, 3])
        self.assertEqual(a2["flows"][0]["start"], 2.0)
        self.assertEqual(a2["flows"][0]["stop"], 20.0)
        self.assertEqual(a2["topology"]["rate"], "1mbit")

    def test_short(self):
        e = S.load(self.path, short=True)
        self.assertEqual([r["name"] for r in e["runs"]], ["a-1"])
        self.assertEqual(e["runs"][0]["duration"], 10.0)
        self.assertEqual(e["runs"][0]["flows"][0]["stop"], 10.0)

    def test_bad_specs(self):
        bad = {
            "unknown flow key": SPEC.replace('cc = "reno"', 'cca = "reno"'),
            "flow under 1 s": SPEC.replace("start = 2", "start = 19.5"),
            "no flows": SPEC.replace(
                'flows = [ { name = "u", transport = "udp", rate = "1M", '
                'len = 500 } ]', "flows = []"),
            "short names a missing run": SPEC.replace(
                'runs = ["a-1"]', 'runs = ["zz"]'),
            "not TOML": "[[run]\n",
        }
        for why, text in bad.items():
            with self.subTest(why):
                self.assertRaises(S.SpecError, S.load,
                                  write(self.d, "b.toml", text))
        self.assertRaises(S.SpecError, S.load, "/nonexistent/x.toml")

    def test_batches_keep_module_settings_apart(self):
        e = S.load(self.path)
        order = [[r["name"] for r in b] for b in schedule._batches(e)]
        # a-1 and a-2 set m.p differently: never together; the run that
        # sets nothing fills a free place.
        self.assertEqual(order, [["a-1", "free"], ["a-2"]])

    def test_client_arguments(self):
        e = S.load(self.path)
        f = e["runs"][0]["flows"][0]
        args = flowgen.client_args(f, e['interval'], "10.0.0.1")
        self.assertEqual(args[1:], ["-c", "10.0.0.1", "-P", "tcp", "-t",
                                    "18", "-i", "0.5", "-w", "2",
                                    "-C", "reno"])

    def test_vary_tables_warmup_and_receiver_options(self):
        spec = SPEC + """
[[run]]
name = "mix-{v.n}"
vary = [ { n = 4, half = 2 }, { n = 6, half = 3 } ]
warmup = 3
flows = [ { name = "tl", transport = "tltcp", sections = "1000,{v.half},{v.half}", window = 15000, trace = true, mss = 1000, count = "{v.half}" },
          { name = "tcp", count = "{v.half}" } ]
[[run]]
name = "d-{v}"
vary = [0.5, 62.5]
flows = [ { name = "s", transport = "sctp", sections = "1000,{v},{v}" } ]
"""
        path = write(self.d, "v.toml", spec)
        e = S.load(path)
        runs = {r["name"]: r for r in e["runs"]}
        self.assertIn("mix-6", runs)
        mix = runs["mix-6"]
        self.assertEqual([f["name"] for f in mix["flows"]],
                         ["tl1", "tl2", "tl3", "tcp1", "tcp2", "tcp3"])
        tl = mix["flows"][0]
        self.assertEqual(tl["sections"], "1000,3,3")
        # TLTCP keeps its TCP options; the receiver's go to the server.
        self.assertEqual(flowgen.client_args(tl, e['interval'], "h")[-4:],
                         ["-M", "1000", "-D", "1000,3,3"])
        self.assertEqual(flowgen.server_args(tl, e['interval'], 5302, "/r")[1:],
                         ["-s", "-P", "tltcp", "-p", "5302", "-i", "0.5",
                          "-o", "/r/tl1.rcv.json", "-W", "15000",
                          "-S", "/r/tl1.seq.csv"])
        self.assertEqual(mix["warmup"], 3.0)
        self.assertEqual(runs["free"]["warmup"], 0.0)
        self.assertEqual(runs["d-62.5"]["flows"][0]["sections"],
                         "1000,62.5,62.5")
        # A duration for every run (the demo's knob).
        e = S.load(path, duration=5)
        self.assertEqual({r["duration"] for r in e["runs"]}, {5.0})
        bad = spec.replace("window = 15000, trace", "trace")
        bad = bad.replace('transport = "sctp",',
                          'transport = "sctp", window = 1000,')
        self.assertRaises(S.SpecError, S.load, write(self.d, "w.toml", bad))
        bad = spec.replace("warmup = 3", "warmup = 19.5")
        self.assertRaises(S.SpecError, S.load, write(self.d, "w.toml", bad))

    def test_shipped_experiments_load(self):
        for name in ("reno_tw", "dcp", "tltcp", "multfrc", "tsm"):
            for short in (False, True):
                with self.subTest(name=name, short=short):
                    e = S.load(name, short)
                    self.assertTrue(e["runs"])
                    names = {r["name"] for r in e["runs"]}
                    for t in e.get("table", []):
                        for row in t["rows"]:
                            if not short:
                                self.assertIn(row["run"], names)
                            self.assertLessEqual(
                                len(row.get("paper", [])), len(t["metrics"]))


def report(epoch, intervals, **summary):
    return {"epoch": epoch, "intervals": intervals,
            "summary": {"bytes": sum(i["bytes"] for i in intervals),
                        **summary}}


class Analysis(unittest.TestCase):
    """One run, 10 s: flow x from 2 s at 125 kB/s (1000 kbit/s) measured
    in 0.5 s intervals; tcp1 from 0 s at 62.5 kB/s (500 kbit/s)."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        e = S.load(write(self.d, "t.toml", SPEC), short=True)
        with open(os.path.join(self.d, "experiment.json"), "w") as f:
            json.dump(e, f)
        run = os.path.join(self.d, "a-1")
        os.mkdir(run)
        t0 = 1000.0
        info = {"run": e["runs"][0], "t0": t0, "kernel": "k",
                "failed": [],
                "topology": {"info": {"rate": 1500000, "rtt": 0.02}}}
        with open(os.path.join(run, "run.json"), "w") as f:
            json.dump(info, f)
        # The receiver of x sees its first byte 0.01 s after 2 s; after
        # the flow's stop, 10 kB drain from the send buffer.
        x = [{"start": i * 0.5, "seconds": 0.5, "bytes": 62500}
             for i in range(16)] + [{"start": 8.0, "seconds": 0.5,
                                     "bytes": 10000}]
        tcp = [{"start": i * 0.5, "seconds": 0.5, "bytes": 31250}
               for i in range(20)]
        snd = [{"start": i * 0.5, "seconds": 0.5, "bytes": 1,
                "rtt_us": 20000 + 1000 * (i % 2), "retransmits": 2,
                "segs_out": 200} for i in range(16)]
        for name, rep in (("x.rcv", report(t0 + 2.01, x)),
                          ("tcp1.rcv", report(t0, tcp)),
                          ("x.snd", report(t0 + 2.0, snd))):
            with open(os.path.join(run, name + ".json"), "w") as f:
                json.dump(rep, f)

    def test_metrics_and_checks(self):
        name, checks = R.analyze(self.d)
        with open(os.path.join(self.d, "metrics.json")) as f:
            m = json.load(f)["runs"]["a-1"]
        x = m["flows"]["x"]
        # 16 intervals of 62.5 kB in 8 s; the drained 10 kB after the
        # stop do not count.
        self.assertAlmostEqual(x["throughput_kbps"], 1000.0)
        self.assertAlmostEqual(x["loss_pct"], 1.0)
        self.assertAlmostEqual(x["rtt_ms"], 20.5)
        # One-way: RTT less half the 20 ms base RTT.
        self.assertAlmostEqual(x["delay_ms"], 10.5)
        self.assertAlmostEqual(x["jitter_ms"], 1.0)
        self.assertAlmostEqual(m["flows"]["tcp1"]["throughput_kbps"], 500.0)
        run = m["run"]
        self.assertAlmostEqual(run["utilisation"], 1.0)
        self.assertAlmostEqual(run["friendliness"], 2.0)
        self.assertAlmostEqual(run["jain"], 0.9)
        self.assertEqual(name, "t")
        self.assertEqual([ok for ok, _ in checks], [True])
        with open(os.path.join(self.d, "README.md")) as f:
            text = f.read()
        self.assertIn("| a-1 | x | 1000 |", text)
        self.assertIn("ok: a-1/x throughput_kbps = 1000 in [100, ]", text)

    def test_ratio_check_and_metric_plot(self):
        with open(os.path.join(self.d, "experiment.json")) as f:
            e = json.load(f)
        e["check"] = [{"run": "a-1", "flow": "x",
                       "metric": "throughput_kbps",
                       "over": {"run": "a-1", "flow": "tcp1"},
                       "min": 1.9, "max": 2.1}]
        with open(os.path.join(self.d, "experiment.json"), "w") as f:
            json.dump(e, f)
        _, checks = R.analyze(self.d)
        self.assertEqual(len(checks), 1)
        self.assertTrue(checks[0][0], checks[0][1])
        self.assertIn("a-1/x throughput_kbps / a-1/tcp1 = 2", checks[0][1])
        with open(os.path.join(self.d, "metrics.json")) as f:
            res = json.load(f)
        p = {"x": [1, 2], "lines": [
            {"label": "F", "run": "a-{x}", "metric": "friendliness"},
            {"label": "x", "runs": ["zz", "a-1"], "flow": "x",
             "metric": "throughput_kbps"}]}
        self.assertEqual(plots.metric_lines(p, res),
                         [("F", ([1], [2.0])), ("x", ([2], [1000.0]))])

    def test_failed_check_and_missing_run(self):
        with open(os.path.join(self.d, "experiment.json")) as f:
            e = json.load(f)
        e["check"][0]["min"] = 2000
        e["runs"].append(dict(e["runs"][0], name="gone"))
        with open(os.path.join(self.d, "experiment.json"), "w") as f:
            json.dump(e, f)
        _, checks = R.analyze(self.d)
        self.assertEqual([(ok, t.split(" ")[0]) for ok, t in checks],
                         [(False, "a-1/x"), (False, "gone:")])


class Tltcp(unittest.TestCase):
    """Sections over TLTCP, PR-SCTP and TCP, the paper's friendliness
    metrics, warm-up and the sequence trace, on reports written by hand."""

    SPEC = """
title = "tl"
[topology]
shape = "dumbbell"
rate = "1mbit"
[defaults]
duration = 10
interval = 1
warmup = 2
[[run]]
name = "mix"
reference = ["tcp*"]
flows = [ { name = "tl", transport = "tltcp", sections = "1000,1,1", trace = true },
          { name = "tcp1" }, { name = "tcp2" } ]
[[run]]
name = "base"
baseline = true
flows = [ { name = "t", count = 4 } ]
"""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        e = S.load(write(self.d, "t.toml", self.SPEC))
        with open(os.path.join(self.d, "experiment.json"), "w") as f:
            json.dump(e, f)
        t0 = 500.0
        # Per second: tl 3000 B, tcp1 2000 B, tcp2 1000 B; but tl's first
        # two seconds (warm-up) carry 50000 B, which must not count.
        per = {"tl": 3000, "tcp1": 2000, "tcp2": 1000}
        self.write_run(e["runs"][0], t0, {
            n: report(t0, [{"start": float(i), "seconds": 1.0,
                            "bytes": 50000 if n == "tl" and i < 2 else b}
                           for i in range(10)],
                      **({"sections": 9, "sections_complete": 0,
                          "sections_on_time": 0, "on_time_bytes": 4000,
                          "late_bytes": 500, "sections_missing": 1,
                          "gap_bytes": 3500, "gaps": 8}
                         if n == "tl" else {}))
            for n, b in per.items()},
            {"tl": report(t0, [], sections_offered=10, bytes_offered=10000,
                          tltcp={"bytes_abandoned": 3600,
                                 "bytes_obsolete_late": 70,
                                 "bytes_obsolete_retrans": 30})})
        with open(os.path.join(self.d, "mix", "tl.seq.csv"), "w") as f:
            f.write("time,stream_off,len,type\n0.5,0,1000,data\n"
                    "1.0,1000,1000,gap\n")
        # The baseline: 1, 2, 3, 6 kB/s.
        self.write_run(e["runs"][1], t0, {
            f"t{i + 1}": report(t0, [{"start": float(s), "seconds": 1.0,
                                      "bytes": b} for s in range(10)])
            for i, b in enumerate((1000, 2000, 3000, 6000))}, {})

    def write_run(self, run, t0, rcv, snd):
        d = os.path.join(self.d, run["name"])
        os.makedirs(d)
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump({"run": run, "t0": t0, "kernel": "k", "failed": [],
                       "topology": {"info": {"rate": 1000000}}}, f)
        for name, rep in rcv.items():
            with open(os.path.join(d, f"{name}.rcv.json"), "w") as f:
                json.dump(rep, f)
        for name, rep in snd.items():
            with open(os.path.join(d, f"{name}.snd.json"), "w") as f:
                json.dump(rep, f)

    def test_metrics(self):
        R.analyze(self.d)
        with open(os.path.join(self.d, "metrics.json")) as f:
            res = json.load(f)["runs"]
        mix, base = res["mix"], res["base"]
        tl = mix["flows"]["tl"]
        # After the 2 s warm-up: 3000 B/s = 24 kbit/s.
        self.assertAlmostEqual(tl["throughput_kbps"], 24.0)
        self.assertEqual(tl["on_time_bytes"], 4000)
        self.assertEqual(tl["late_bytes"], 500)
        self.assertEqual(tl["gap_bytes"], 3500)
        self.assertEqual(tl["undelivered_bytes"], 5500)
        self.assertEqual(tl["abandoned_bytes"], 3600)
        self.assertEqual(tl["obsolete_bytes"], 100)
        self.assertEqual(tl["unreported_bytes"], 100)
        self.assertAlmostEqual(tl["on_time_pct"], 40.0)
        # F = 24 / mean(16, 8); S = 24 / 8.
        self.assertAlmostEqual(mix["run"]["friendliness"], 2.0)
        self.assertAlmostEqual(mix["run"]["separation"], 3.0)
        self.assertNotIn("f_worst", mix["run"])
        # Baseline 1, 2, 3, 6: F_worst = 4.5 / 1.5; F_best: ranks 2 and 4
        # (2, 6) against 1 and 3 (1, 3), 4 / 2.
        self.assertAlmostEqual(base["run"]["f_worst"], 3.0)
        self.assertAlmostEqual(base["run"]["f_best"], 2.0)
        self.assertAlmostEqual(base["run"]["separation"], 6.0)

    def test_sequence_trace(self):
        rcv = {"epoch": 501.0}
        tr = analysis.seq_trace(os.path.join(self.d, "mix", "tl.seq.csv"), rcv,
                         500.0)
        self.assertEqual(tr, [(1.5, 1000, "data"), (2.0, 2000, "gap")])
        self.assertEqual(analysis.seq_trace(os.path.join(self.d, "none.csv"),
                                     rcv, 500.0), [])


MULTFRC = """
title = "m"
[topology]
shape = "dumbbell"
rate = "2mbit"
delay = "10ms"
[defaults]
duration = 10
interval = 0.5
[[run]]
name = "mf"
weight = 2
reference = ["tcp*"]
loss_steps = [[4, 10]]
flows = [ { name = "x", cc = "multfrc" },
          { name = "tcp", cc = "reno", count = 2, pair = 2 } ]
[[run]]
name = "par"
equation = true
flows = [ { name = "tcp", cc = "reno", count = 2 } ]
"""


class MulTfrc(unittest.TestCase):
    """Normalized throughput (weight), loss steps, the aggregate's
    smoothness and the equation against n parallel TCP flows."""

    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.exp = S.load(write(self.d, "m.toml", MULTFRC))

    def test_loss_steps_spec(self):
        mf = self.exp["runs"][0]
        self.assertEqual(mf["loss_steps"], [[4, 10]])
        self.assertEqual([f["pair"] for f in mf["flows"]], [1, 2, 2])
        for bad in ("[[4, 10], [2, 1]]", "[[10, 1]]", "[[1, 100]]",
                    "[4, 10]", '[["4", 10]]'):
            with self.subTest(bad):
                self.assertRaises(S.SpecError, S.load, write(
                    self.d, "b.toml", MULTFRC.replace("[[4, 10]]", bad)))
        self.assertRaises(S.SpecError, S.load, write(
            self.d, "b.toml", MULTFRC.replace('delay = "10ms"\n', "")))

    def test_loss_steps_change_the_link(self):
        calls = []

        class Topo:
            def set_loss(self, a, b, loss):
                calls.append((a, b, loss))
        run = dict(self.exp["runs"][0], loss_steps=[[0, 10], [0.05, 0.5],
                                                    [30, 1]])
        steps = captures.loss_steps(run, Topo(), time.time())
        time.sleep(0.3)
        steps["stop"]()         # the step at 30 s never comes
        self.assertEqual(calls, [("r1", "r2", 10), ("r1", "r2", 0.5)])
        self.assertEqual([l for _, l in steps["done"]], [10, 0.5])

    def write_run(self, run, reports):
        d = os.path.join(self.d, run["name"])
        os.makedirs(d)
        info = {"run": run, "t0": 1000.0, "kernel": "k", "failed": [],
                "topology": {"info": {"rate": 2000000, "rtt": 0.04}}}
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump(info, f)
        for name, rep in reports.items():
            with open(os.path.join(d, name + ".json"), "w") as f:
                json.dump(rep, f)

    def test_normalized_and_aggregate_smoothness(self):
        # x: 1000 kbit/s, steady before the step at 4 s, alternating
        # 800/1200 kbit/s after it; two TCP flows at 250 kbit/s.
        x = [{"start": i * 0.5, "seconds": 0.5,
              "bytes": 62500 if i < 12 else (50000, 75000)[i % 2]}
             for i in range(20)]
        tcp = [{"start": i * 0.5, "seconds": 0.5, "bytes": 15625}
               for i in range(20)]
        mf = self.exp["runs"][0]
        self.write_run(mf, {"x.rcv": report(1000.0, x),
                            "tcp1.rcv": report(1000.0, tcp),
                            "tcp2.rcv": report(1000.0, tcp)})
        r = analysis.aggregate_metrics(self.exp, mf, {
            "x": {"throughput_kbps": 1000.0},
            "tcp1": {"throughput_kbps": 250.0},
            "tcp2": {"throughput_kbps": 250.0}},
            analysis.load_json(os.path.join(self.d, "mf", "run.json")),
            os.path.join(self.d, "mf"))
        self.assertAlmostEqual(r["agg_kbps"], 1500.0)
        # Phase 0-4 s: constant, CoV 0; from 6 s (2 s after the step):
        # 1300 and 1700 kbit/s alternating, CoV 200 / 1500.
        self.assertAlmostEqual(r["agg_cov"], (0 + 200 / 1500) / 2)
        self.assertAlmostEqual(r["agg_cov_1"], 0)
        self.assertAlmostEqual(r["agg_cov_2"], 200 / 1500)
        self.assertNotIn("agg_cov_3", r)
        # Each phase's mean.
        self.assertAlmostEqual(r["agg_kbps_1"], 1500.0)
        self.assertAlmostEqual(r["agg_kbps_2"], 1500.0)
        self.assertNotIn("agg_kbps_3", r)
        m = analysis.run_metrics(mf, {"x": {"throughput_kbps": 1000.0},
                               "tcp1": {"throughput_kbps": 250.0},
                               "tcp2": {"throughput_kbps": 250.0}},
                          {"topology": {"info": {}}})
        self.assertAlmostEqual(m["normalized"], 2.0)
        self.assertAlmostEqual(m["friendliness"], 4.0)
        # All TCP: the same packet size, no F in packets.
        self.assertNotIn("friendliness_pkts", m)

    def test_friendliness_in_packets(self):
        # A DCCP flow of 1000-byte packets at 700 kbit/s beside TCP flows
        # at 1000 kbit/s (1448-byte segments): F = 0.7 in bytes, 1.0136
        # in packets.
        run = {"name": "d", "reference": ["tcp*"], "flows": [
            {"name": "dccp", "transport": "dccp", "len": 1000},
            {"name": "tcp1", "transport": "tcp"},
            {"name": "tcp2", "transport": "tcp"}]}
        m = analysis.run_metrics(run, {"dccp": {"throughput_kbps": 700.0},
                                "tcp1": {"throughput_kbps": 900.0},
                                "tcp2": {"throughput_kbps": 1100.0}},
                          {"topology": {"info": {}}})
        self.assertAlmostEqual(m["friendliness"], 0.7)
        self.assertAlmostEqual(m["friendliness_pkts"], 0.7 * 1448 / 1000)
        # An SCTP flow has no one packet size: no F in packets.
        run["flows"][0] = {"name": "dccp", "transport": "sctp"}
        m = analysis.run_metrics(run, {"dccp": {"throughput_kbps": 700.0},
                                "tcp1": {"throughput_kbps": 900.0},
                                "tcp2": {"throughput_kbps": 1100.0}},
                          {"topology": {"info": {}}})
        self.assertNotIn("friendliness_pkts", m)

    def test_equation_against_parallel_flows(self):
        # Two flows, 100 segments per 0.5 s, RTT 100 ms: retransmissions
        # at 2.5 s (one in each flow: one event), 5.5 s and 8 s.
        def snd(lost_at):
            ivs, rx = [], 0
            for i in range(20):
                rx += i in lost_at
                ivs.append({"start": i * 0.5, "seconds": 0.5, "bytes": 1,
                            "rtt_us": 100000, "rttvar_us": 10000,
                            "retransmits": rx, "segs_out": 100 * (i + 1)})
            ivs[7]["rtt_us"] = 0          # no sample: skipped
            return report(1000.0, ivs)
        rcv = [{"start": i * 0.5, "seconds": 0.5, "bytes": 50000}
               for i in range(20)]
        par = self.exp["runs"][1]
        self.write_run(par, {"tcp1.snd": snd({4, 10}),
                             "tcp2.snd": snd({4, 15}),
                             "tcp1.rcv": report(1000.0, rcv),
                             "tcp2.rcv": report(1000.0, rcv)})
        with open(os.path.join(self.d, "experiment.json"), "w") as f:
            json.dump(dict(self.exp, runs=[par]), f)
        R.analyze(self.d)
        with open(os.path.join(self.d, "metrics.json")) as f:
            m = json.load(f)["runs"]["par"]["run"]
        # 4 losses in 3 events in 2 x 1900 segments; RTO 0.1 + 0.2 s.
        self.assertAlmostEqual(m["p_e"], 3 / 3800)
        self.assertAlmostEqual(m["p_r"], 4 / 3800)
        self.assertAlmostEqual(m["j"], 4 / 3)
        want = metrics.multfrc_rate(2, 3 / 3800, 4 / 3, 0.1, 0.3,
                                      s=1448) * 8 / 1e3
        self.assertAlmostEqual(m["eq_kbps"], want)
        self.assertAlmostEqual(m["agg_kbps"], 1600.0)
        self.assertAlmostEqual(m["eq_ratio"], want / 1600)


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
        self.assertEqual(flowgen.client_args(low, self.exp['interval'], "127.0.0.1")[-4:],
                         ["-l", "78", "-R", "5120,0.5"])
        # A UDP receiver waits out silences as long as its flow.
        self.assertEqual(flowgen.server_args(low, self.exp['interval'], 5303, "/r")[-2:],
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
        client, server = captures._tunnel_args(run, run["flows"][2], 2, Topo(),
                                        "/r")
        self.assertEqual(client[1:], [
            "tunnel", "client", "--peer", "10.0.5.2:6303",
            "--udp", "127.0.0.1:7303", "--to", "127.0.0.1:5303",
            "--transport", "dccp-ccid3", "--queue", "1",
            "--stats", "/r/low.tun-client.json", "--lifetime", "3600000"])
        self.assertEqual(server[1:], [
            "tunnel", "server", "--listen", "6303",
            "--transport", "dccp-ccid3", "--to", "127.0.0.1:5303",
            "--stats", "/r/low.tun-server.json"])

    def test_sink_metrics(self):
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
                mock.patch.object(schedule, "_set_modules", lambda m, s: None), \
                mock.patch.object(schedule, "_restore_modules", lambda s: None), \
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
        self.assertEqual([[r["name"] for r in b] for b in schedule._batches(e)],
                         [["a-1", "free"], ["a-2", "cap"]])

    def test_ss_nodes(self):
        run = {"flows": [{"pair": 1, "transport": "tcp"},
                         {"pair": 1, "transport": "dccp"},
                         {"pair": 2, "transport": "udp"},
                         {"pair": 3, "transport": "tltcp"},
                         {"pair": 4, "transport": "dccp"}]}
        self.assertEqual(captures._ss_nodes(run), {"s1": "-tdinH", "s3": "-tinH",
                                            "s4": "-dinH"})

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
                         {"3": [(12.5, 10, 2147483647)]})


if __name__ == "__main__":
    unittest.main()
