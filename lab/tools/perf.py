# SPDX-License-Identifier: GPL-2.0
"""perf (Debian: linux-perf): record every CPU's time around a piece of
work, and read the report by shared object and symbol.  lab.profile runs
it in the guest (make profile)."""

import contextlib
import os
import re
import signal
import subprocess

# perf report --stdio --sort dso,sym: "  12.34%  [kernel.kallsyms]  [k] sym"
LINE = re.compile(r"^\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$")


def parse_report(text):
    """[(percent, dso, symbol)] from perf report --stdio --sort dso,sym."""
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m and not line.lstrip().startswith("#"):
            out.append((float(m.group(1)), m.group(2), m.group(4)))
    return out


@contextlib.contextmanager
def recording(data, tmp, freq=4000):
    """Sample every CPU (cpu-clock, freq Hz) into data while the block
    runs.  perf starts with its events off and is switched on and off
    through its control FIFO (in tmp) around the block: in an emulated
    guest it takes seconds to start (it synthesizes every task's maps),
    and a recording started beside the work missed it."""
    ctl, ack = os.path.join(tmp, "ctl"), os.path.join(tmp, "ack")
    for fifo in (ctl, ack):
        if not os.path.exists(fifo):
            os.mkfifo(fifo)
    rec = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock",
                            "-F", str(freq), "-a", "-D", "-1",
                            "--control", f"fifo:{ctl},{ack}", "-o", data],
                           stdout=subprocess.DEVNULL)
    try:
        with open(ctl, "w") as c, open(ack) as a:
            def command(what):
                c.write(what + "\n")
                c.flush()
                if "ack" not in a.readline():
                    raise RuntimeError(f"perf record: no ack to {what}")
            command("enable")
            yield
            command("disable")
    finally:
        rec.send_signal(signal.SIGINT)
        rec.wait(timeout=120)


def report(data):
    """parse_report() of perf report on data, down to 0.01 %."""
    rep = subprocess.run(["perf", "report", "-i", data, "--stdio",
                          "--no-children", "--sort", "dso,sym",
                          "--percent-limit", "0.01"],
                         check=True, capture_output=True, text=True)
    return parse_report(rep.stdout)
