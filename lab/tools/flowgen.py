# SPDX-License-Identifier: GPL-2.0
"""flowgen (tools/flowgen): its command lines for an experiment's flows,
and the goodput in its JSON reports."""

import json
import os

from lab import REPO, transports

FLOWGEN = os.path.join(REPO, "tools", "flowgen", "flowgen")


def client_args(flow, interval, host):
    """The sender's command line for flow (a flow of an experiment's
    run: lab.experiment.spec) to host, reporting every interval
    seconds; the caller adds -p PORT and -o FILE."""
    a = [FLOWGEN, "-c", host, "-P", flow["transport"],
         "-t", f"{flow['stop'] - flow['start']:g}",
         "-i", f"{interval:g}", "-w", f"{flow['start']:g}"]
    for key, opt in (("cc", "-C"), ("mss", "-M"), ("ccid", "-K"),
                     ("rate", "-r"), ("len", "-l"), ("lifetime_ms", "-T"),
                     ("on_off", "-O"), ("sections", "-D"),
                     ("ramp", "-R")):
        if key in flow:
            a += [opt, str(flow[key])]
    if flow.get("ahead"):
        a.append("-A")
    if flow.get("arrival"):
        a.append("-a")
    return a


def server_args(flow, interval, port, d):
    """The receiver's command line for flow on port, reporting every
    interval seconds into d/<flow>.rcv.json."""
    a = [FLOWGEN, "-s", "-P", flow["transport"], "-p", str(port),
         "-i", f"{interval:g}",
         "-o", os.path.join(d, f"{flow['name']}.rcv.json")]
    if "window" in flow:
        a += ["-W", str(flow["window"])]
    if flow.get("trace"):
        a += ["-S", os.path.join(d, f"{flow['name']}.seq.csv")]
    if transports.datagrams(flow["transport"]):
        # A thinned-out flow (a collapsing path, a tunnel's small queue)
        # may fall silent for seconds: only its END datagrams or the end
        # of the run end it.
        a += ["-I", f"{flow['stop'] - flow['start']:g}"]
    return a


def rate(report, skip=0.0):
    """Goodput of a flowgen report over the intervals that start at or
    after skip and end within the flow (the last one is usually partial)."""
    data = json.loads(report) if isinstance(report, str) else report
    end = data["summary"]["seconds"]
    ivs = [iv for iv in data["intervals"] if iv["start"] >= skip - 1e-6
           and iv["start"] + iv["seconds"] <= end + 1e-6]
    secs = sum(iv["seconds"] for iv in ivs)
    if secs <= 0:
        raise ValueError("no whole flowgen intervals after the skipped part")
    return sum(iv["bytes"] for iv in ivs) * 8 / secs


def rates(reports, skip=0.0):
    """Goodput of each flowgen report over one window of wall-clock time:
    from skip seconds after the last flow began to the end of the first
    that ended (the flows compete only while all of them run).  Each
    flow's intervals that lie wholly inside the window count."""
    data = [json.loads(r) if isinstance(r, str) else r for r in reports]
    if not data:
        raise ValueError("no flowgen reports")
    lo = max(d["epoch"] for d in data) + skip
    hi = min(d["epoch"] + d["summary"]["seconds"] for d in data)
    rates = []
    for d in data:
        ivs = [iv for iv in d["intervals"]
               if d["epoch"] + iv["start"] >= lo - 1e-6 and
               d["epoch"] + iv["start"] + iv["seconds"] <= hi + 1e-6]
        secs = sum(iv["seconds"] for iv in ivs)
        if secs <= 0:
            raise ValueError("the flows were not all receiving for a "
                             "whole interval after the skipped part")
        rates.append(sum(iv["bytes"] for iv in ivs) * 8 / secs)
    return rates


def reach_time(report, goal, since, window=1.0, cover=0.9):
    """Seconds after the wall-clock time since (an epoch, e.g. when a
    competitor left) until a flowgen receiver's goodput over a sliding
    window of window seconds first reaches goal bit/s: the end of the
    first such window that starts at or after since.  A window counts
    only if its intervals cover at least cover x window seconds (not at
    the report's ragged end).  None if it never does."""
    data = json.loads(report) if isinstance(report, str) else report
    ivs = [(data["epoch"] + iv["start"] - since, iv["seconds"], iv["bytes"])
           for iv in data["intervals"]]
    for k, (start, _, _) in enumerate(ivs):
        if start < -1e-6:
            continue
        w = [x for x in ivs[k:] if x[0] < start + window - 1e-6]
        secs = sum(x[1] for x in w)
        if secs < cover * window:
            continue
        if sum(x[2] for x in w) * 8 / secs >= goal:
            return start + window
    return None
