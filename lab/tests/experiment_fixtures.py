# SPDX-License-Identifier: GPL-2.0
"""What the experiment framework's unit tests share: a description,
writing a file, a flowgen report."""

import os


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


def report(epoch, intervals, **summary):
    return {"epoch": epoch, "intervals": intervals,
            "summary": {"bytes": sum(i["bytes"] for i in intervals),
                        **summary}}
