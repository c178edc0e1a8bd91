# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the experiment framework: the metrics and checks
computed from reports written by hand (TLTCP's and MulTFRC's runs
too)."""

import csv
import json
import os
import shutil
import tempfile
import time
import unittest

from lab import metrics
from lab.experiment import analysis, captures, plots
from lab.experiment import spec as S
from lab.experiment import report as R
from lab.reports import load_json
from lab.tests.experiment_fixtures import SPEC, report, write


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
        # metrics.csv: the same numbers in long format.
        with open(os.path.join(self.d, "metrics.csv")) as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0], ["run", "flow", "metric", "value"])
        got = {(r[0], r[1], r[2]): float(r[3]) for r in rows[1:]}
        self.assertAlmostEqual(got[("a-1", "x", "throughput_kbps")], 1000.0)
        self.assertAlmostEqual(got[("a-1", "x", "rtt_ms")], 20.5)
        # Each figure also as PDF and SVG.
        pngs = [n for n in os.listdir(self.d) if n.endswith(".png")]
        for n in pngs:
            for ext in (".pdf", ".svg"):
                self.assertTrue(os.path.exists(os.path.join(
                    self.d, n[:-4] + ext)), n[:-4] + ext)
        try:
            import matplotlib  # noqa: F401
            self.assertTrue(pngs)
        except ImportError:
            pass
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
        self.assertEqual(tl["delivered_bytes"], 4500)
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
        tr = analysis.seq_trace(os.path.join(self.d, "mix", "tl.seq.csv"),
                                rcv, 500.0)
        self.assertEqual(tr, [(1.5, 1000, "data"), (2.0, 2000, "gap")])
        self.assertEqual(analysis.seq_trace(
            os.path.join(self.d, "none.csv"), rcv, 500.0), [])


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
            load_json(os.path.join(self.d, "mf", "run.json")),
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

    def test_matrix_metrics_and_heatmap(self):
        # The weighted flow's time to converge and CoV become run
        # metrics, beside the reference flows' mean CoV.
        mf = self.exp["runs"][0]
        m = analysis.run_metrics(mf, {
            "x": {"throughput_kbps": 1000.0, "time_to_max_s": 7.0,
                  "cov": 0.1},
            "tcp1": {"throughput_kbps": 500.0, "cov": 0.2},
            "tcp2": {"throughput_kbps": 500.0, "cov": 0.4}},
            {"topology": {"info": {}}})
        self.assertAlmostEqual(m["normalized"], 1.0)
        self.assertEqual(m["converge_s"], 7.0)
        self.assertEqual(m["cov"], 0.1)
        self.assertAlmostEqual(m["reference_cov"], 0.3)
        res = {"runs": {"m-0.5-4-20": {"flows": {}, "run": {"normalized": 0.9}},
                        "m-2-12-20": {"flows": {}, "run": {"normalized": 1.3}}}}
        p = {"run": "m-{y}-{x}", "metric": "normalized",
             "x": ["4-20", "12-20"], "y": [0.5, 2.0]}
        self.assertEqual(plots.heatmap_cells(p, res),
                         [[0.9, None], [None, 1.3]])
        # Drawn as PNG, PDF and SVG, as every figure is.
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        figs = plots._Figures(self.exp, d, plt)
        figs.heatmap(dict(p, file="m.png", title="m"),
                     plots.heatmap_cells(p, res))
        self.assertEqual(figs.files, ["m.png"])
        self.assertEqual(sorted(os.listdir(d)), ["m.pdf", "m.png", "m.svg"])

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


if __name__ == "__main__":
    unittest.main()
