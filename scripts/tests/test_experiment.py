# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the experiment framework: expansion of a description,
the order runs take, and the metrics and checks computed from reports
written by hand."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import experiment as E  # noqa: E402

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
        e = E.load(self.path)
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
        e = E.load(self.path, short=True)
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
                self.assertRaises(E.SpecError, E.load,
                                  write(self.d, "b.toml", text))
        self.assertRaises(E.SpecError, E.load, "/nonexistent/x.toml")

    def test_batches_keep_module_settings_apart(self):
        e = E.load(self.path)
        order = [[r["name"] for r in b] for b in E._batches(e)]
        # a-1 and a-2 set m.p differently: never together; the run that
        # sets nothing fills a free place.
        self.assertEqual(order, [["a-1", "free"], ["a-2"]])

    def test_client_arguments(self):
        e = E.load(self.path)
        f = e["runs"][0]["flows"][0]
        args = E._client_args(f, e, "10.0.0.1")
        self.assertEqual(args[1:], ["-c", "10.0.0.1", "-P", "tcp", "-t",
                                    "18", "-i", "0.5", "-w", "2",
                                    "-C", "reno"])

    def test_shipped_experiments_load(self):
        for name in ("reno_tw", "dcp"):
            for short in (False, True):
                with self.subTest(name=name, short=short):
                    e = E.load(name, short)
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
        e = E.load(write(self.d, "t.toml", SPEC), short=True)
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
        name, checks = E.analyze(self.d)
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

    def test_failed_check_and_missing_run(self):
        with open(os.path.join(self.d, "experiment.json")) as f:
            e = json.load(f)
        e["check"][0]["min"] = 2000
        e["runs"].append(dict(e["runs"][0], name="gone"))
        with open(os.path.join(self.d, "experiment.json"), "w") as f:
            json.dump(e, f)
        _, checks = E.analyze(self.d)
        self.assertEqual([(ok, t.split(" ")[0]) for ok, t in checks],
                         [(False, "a-1/x"), (False, "gone:")])


if __name__ == "__main__":
    unittest.main()
