# SPDX-License-Identifier: GPL-2.0
"""One run in the guest: its topology, its receivers and senders, what it
captures, and run.json, the record analysis starts from."""

import contextlib
import json
import os
import shutil
import subprocess
import time

from lab import topology
from lab.experiment.captures import (
    loss_steps, start_captures, start_tunnels, stop_tunnels)
from lab.experiment.procs import terminate, wait_for
from lab.experiment.spec import (
    BASE_PORT, ENTRY_PORT, log, rep_dir, repeats, tunnelled)
from lab.tools import flowgen, ss
from lab.topology.netns import in_ns


def _topology(run):
    """The run's topology, not yet built; a dumbbell with a pair for
    every pair its flows use."""
    kw = dict(run["topology"])
    shape = kw.pop("shape", "dumbbell")
    if shape == "dumbbell":
        kw.setdefault("pairs", max(f["pair"] for f in run["flows"]))
    return topology.SHAPES[shape](name="ex", **kw)


def _start_receivers(exp, run, topo, d, errlog, label):
    """Every flow's receiver (flowgen -s) on its d<pair> node, on port
    BASE_PORT + i, each listening before the next starts."""
    procs = []
    for i, f in enumerate(run["flows"]):
        port, ns = BASE_PORT + i, topo.ns(f"d{f['pair']}")
        procs.append(subprocess.Popen(
            in_ns(ns, flowgen.server_args(f, exp["interval"], port, d)),
            stderr=errlog(f"{f['name']}.rcv.err")))
        wait_for(f"{label}/{f['name']}: receiver",
                 lambda: ss.listening(ns, port, f["transport"]))
    return procs


def _start_senders(exp, run, topo, d, errlog):
    """Every flow's sender on its s<pair> node, to its receiver or, for
    a tunnelled flow, to its tunnel's entry."""
    clients = []
    for i, f in enumerate(run["flows"]):
        host, port = topo.addr(f"d{f['pair']}"), BASE_PORT + i
        if tunnelled(run, f):
            host, port = "127.0.0.1", ENTRY_PORT + i
        args = flowgen.client_args(f, exp["interval"], host) + [
            "-p", str(port), "-o", os.path.join(d, f"{f['name']}.snd.json")]
        clients.append(subprocess.Popen(
            in_ns(topo.ns(f"s{f['pair']}"), args),
            stderr=errlog(f"{f['name']}.snd.err")))
    return clients


def _wait_senders(run, clients):
    """Wait for every sender (at most the run's duration and a minute);
    returns what failed."""
    failed = []
    for f, c in zip(run["flows"], clients):
        try:
            rc = c.wait(timeout=run["duration"] + 60)
        except subprocess.TimeoutExpired:
            c.kill()
            rc = "timeout"
        if rc != 0:
            failed.append(f"{f['name']} sender exit {rc}")
    return failed


def _stop_receivers(run, procs, d):
    """A TCP receiver ends when the sender's last bytes arrive, which
    may take a while on a slow path, a UDP one when its END datagrams do
    (a full queue may drop them); what arrives after the flow's stop does
    not count, so stop it (it still writes its report).  The receivers
    share one 10 s grace period: twenty of them waiting in turn would add
    minutes to a run.  Returns what failed."""
    failed = []
    grace = time.time() + 10
    for f, s in zip(run["flows"], procs):
        try:
            s.wait(timeout=max(0.1, grace - time.time()))
        except subprocess.TimeoutExpired:
            terminate(s)
        if not os.path.exists(os.path.join(d, f"{f['name']}.rcv.json")):
            failed.append(f"{f['name']} receiver wrote no report "
                          f"(exit {s.returncode})")
    return failed


def _record(d, info, topo):
    """The bottleneck router's qdiscs (qdisc.txt) and the run's record
    (run.json) into d."""
    qdisc = subprocess.run(in_ns(topo.ns("r1"), ["tc", "-s", "qdisc"]),
                           capture_output=True, text=True).stdout
    with open(os.path.join(d, "qdisc.txt"), "w") as fq:
        fq.write(qdisc)
    with open(os.path.join(d, "run.json"), "w") as fj:
        json.dump(info, fj, indent=1)


def run_one(exp, run, out, status, rep=1):
    """Build the run's topology, run its flows, keep their reports (and
    what the run captures) in its repetition rep's directory."""
    label = rep_dir(run["name"], rep)
    d = os.path.join(out, label)
    shutil.rmtree(d, ignore_errors=True)      # no stale report survives
    os.makedirs(d)
    topo = _topology(run)
    logs = []

    def errlog(name):
        logs.append(open(os.path.join(d, name), "w"))
        return logs[-1]

    t_up = time.time()
    with topo, contextlib.ExitStack() as files:
        files.callback(lambda: [f.close() for f in logs])
        log(f"{label}: topology up in {time.time() - t_up:.0f} s")
        # Captures stop on every way out of this block, before the
        # topology goes (tcpdump fails when its interface disappears).
        cap = start_captures(run, topo, d, errlog, files)
        procs = _start_receivers(exp, run, topo, d, errlog, label)
        tunnels = start_tunnels(run, topo, d, errlog)
        t0 = time.time()
        cap["mark"](t0)
        clients = _start_senders(exp, run, topo, d, errlog)
        status[label] = t0
        steps = loss_steps(run, topo, t0)
        failed = _wait_senders(run, clients)
        failed += _stop_receivers(run, procs, d)
        failed += stop_tunnels(tunnels, d)
        steps["stop"]()
        cap_failed, cap_info = cap["stop"](t0)
        failed += cap_failed
        info = {"run": run, "t0": t0, "topology": topo.to_dict(),
                "kernel": os.uname().release, "failed": failed}
        if repeats(run) > 1:
            info["repetition"] = rep
        if tunnels:
            info["tunnel_connect_s"] = {t["flow"]: t["connect_s"]
                                        for t in tunnels}
        if steps["done"]:
            info["loss_steps"] = steps["done"]
        if cap_info:
            info["capture"] = cap_info
        _record(d, info, topo)
    status.pop(label, None)
    if failed:
        log(f"{label}: " + "; ".join(failed))
    return not failed
