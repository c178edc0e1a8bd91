# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the experiment framework: expanding a description and
the order its runs take."""

import tempfile
import unittest

from lab.experiment import schedule
from lab.experiment import spec as S
from lab.tools import flowgen
from lab.tests.experiment_fixtures import SPEC, write


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
        args = flowgen.client_args(f, e["interval"], "10.0.0.1")
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
        self.assertEqual(flowgen.client_args(tl, e["interval"], "h")[-4:],
                         ["-M", "1000", "-D", "1000,3,3"])
        self.assertEqual(flowgen.server_args(tl, e["interval"], 5302,
                                             "/r")[1:],
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


if __name__ == "__main__":
    unittest.main()
