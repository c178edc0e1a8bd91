# SPDX-License-Identifier: GPL-2.0
"""What a run records besides its flows' reports (capture = {...}: the
bottleneck's pcap, the tcp_probe tracepoint, ss samples at the senders),
the tunnels its UDP flows may go through (tools/tsm), and its loss steps.
Each start_* returns a stop that is safe to call twice, and is on the
run's ExitStack, so that nothing outlives the run."""

import json
import math
import os
import signal
import subprocess
import threading
import time

from lab import transports
from lab.experiment.procs import once, read_text, terminate, wait_for
from lab.experiment.spec import (
    BASE_PORT, ENTRY_PORT, TUNNEL_PORT, fmt_value, log, tunnelled)
from lab.tools import ss, tcp_probe, tcpdump, tsm
from lab.topology.netns import in_ns


def _in_ns(topo, node, args):
    """A command line that runs args in node's network namespace."""
    return in_ns(topo.ns(node), args)


def start_captures(run, topo, d, errlog, stack):
    """Start what the run's capture asks for (_check_capture): the
    bottleneck's pcap, the tcp_probe tracepoint, ss samples at the
    senders.  Each one's stop goes on the ExitStack stack at once, so
    that no capture outlives the run, whatever happens.  Returns
    {"mark": mark(t0), "stop": stop(t0) -> ([what failed], {what the
    captures report for run.json})}."""
    cap = run.get("capture", {})
    stops, marks = [], []
    if "pcap" in cap:
        stops.append(_start_pcap(topo, d, errlog, cap["pcap"], stack))
    if cap.get("tcp_probe"):
        mark, stop = _start_tcp_probe(run, d, stack)
        marks.append(mark)
        stops.append(stop)
    if "ss" in cap:
        stops.append(_start_ss(run, topo, d, cap["ss"], errlog,
                               stack))

    def stop_all(t0):
        failed, info = [], {}
        for stop in reversed(stops):
            f, i = stop(t0)
            failed += f
            info.update(i)
        return failed, info
    return {"mark": lambda t0: [m(t0) for m in marks], "stop": stop_all}


def _start_pcap(topo, d, errlog, snaplen, stack):
    """tcpdump on the bottleneck's egress (the topology's "bottleneck",
    node:interface; r1:to-r2 on a dumbbell) into d/bottleneck.pcap,
    capturing when this returns.  Returns stop(t0): SIGTERM and wait."""
    node, _, dev = topo.info.get("bottleneck", "").partition(":")
    if not dev:
        raise RuntimeError("pcap: the topology names no bottleneck")
    path = os.path.join(d, "bottleneck.pcap")
    err = os.path.join(d, "bottleneck.pcap.err")
    p = subprocess.Popen(_in_ns(topo, node,
                                tcpdump.args(dev, snaplen, path)),
                         stdout=subprocess.DEVNULL,
                         stderr=errlog("bottleneck.pcap.err"))

    def stop(t0=None):
        # Under emulation tcpdump lags behind the link: let it write what
        # the kernel already handed it (the file stops growing) before
        # the signal, which would discard it.
        size, still = -1, 0
        for _ in range(40):
            if p.poll() is not None:
                break
            now = os.path.getsize(path) if os.path.exists(path) else 0
            still = still + 1 if now == size else 0
            if still >= 2:
                break
            size = now
            time.sleep(0.25)
        if p.poll() is None:
            terminate(p)
        failed = []
        if p.returncode not in (0, -signal.SIGTERM) or \
                not os.path.exists(path):
            failed.append(f"pcap: tcpdump exit {p.returncode}")
        return failed, {"pcap": tcpdump.counts(read_text(err))}
    stop = once(stop)
    stack.callback(stop)

    def capturing():
        # It says "listening on" once it captures (or exits on an error).
        return p.poll() is not None or "listening on" in read_text(err)
    wait_for(f"tcpdump on {node}:{dev}", capturing, tries=300)
    if p.poll() is not None:
        raise RuntimeError(f"tcpdump on {node}:{dev} exited "
                           f"{p.returncode}: {read_text(err).strip()}")
    return stop


def _start_tcp_probe(run, d, stack):
    """The tcp:tcp_probe tracepoint (lab/tools/tcp_probe.py) for the
    run's sending sockets (destination ports BASE_PORT + i: an ACK's
    view of cwnd, ssthresh, srtt), read from trace_pipe as it fills into
    d/tcp_probe.txt, so that a long run loses nothing to the ring
    buffer.  The tracefs is global: such runs run alone (_batches).
    Returns (mark(t0): a trace_marker line "experiment t0 EPOCH" on the
    trace's clock, stop(t0))."""
    ev = threading.Event()
    state = {}

    def stop(t0=None):
        try:
            tcp_probe.stop()
        except OSError as e:
            log(f"tcp_probe: stopping: {e}")
        ev.set()
        if "thread" in state:
            state["thread"].join()
        return [], {}
    stop = once(stop)
    stack.callback(stop)
    tcp_probe.mount()
    for path, value in (
            ("tracing_on", "0"), ("trace", ""), ("buffer_size_kb", "16384"),
            ("events/tcp/tcp_probe/filter",
             f"dport >= {BASE_PORT} && dport < "
             f"{BASE_PORT + len(run['flows'])}"),
            ("events/tcp/tcp_probe/enable", "1"), ("tracing_on", "1")):
        tcp_probe.tracing(path, value)
    fd = os.open(os.path.join(tcp_probe.TRACEFS, "trace_pipe"),
                 os.O_RDONLY | os.O_NONBLOCK)

    def drain():
        # Until stopped, then until the buffer is empty.
        try:
            with open(os.path.join(d, "tcp_probe.txt"), "wb") as f:
                while True:
                    try:
                        data = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        data = b""
                    if data:
                        f.write(data)
                    elif ev.is_set():
                        break
                    else:
                        ev.wait(0.2)
        finally:
            os.close(fd)
    state["thread"] = threading.Thread(target=drain, daemon=True)
    state["thread"].start()

    def mark(t0):
        try:
            tcp_probe.tracing("trace_marker", f"experiment t0 {t0:.6f}")
        except OSError as e:
            log(f"tcp_probe: trace_marker: {e}")
    return mark, stop


def _ss_nodes(run):
    """{sender node: ss's options} for the run's flows whose sockets ss
    describes (TCP, TLTCP and DCCP): -tinH, -dinH or -tdinH."""
    kinds = {}
    for f in run["flows"]:
        kinds.setdefault(f"s{f['pair']}", set()).add(f["transport"])
    opts = {n: ss.sample_options(ts) for n, ts in sorted(kinds.items())}
    return {n: o for n, o in opts.items() if o}


def _start_ss(run, topo, d, every, errlog, stack):
    """Every `every` seconds, ss at each sender node (_ss_nodes),
    appended to d/<node>.ss.txt after a line "# EPOCH" (the middle of the
    call); ss's errors go to d/<node>.ss.err.  A sample that takes longer
    than `every` makes the next wait for its slot.  Returns stop(t0),
    which writes d/ss.json (ss.parse)."""
    nodes = _ss_nodes(run)
    ev = threading.Event()
    # Opened here, closed with the run's logs (after stop()).
    outs = {n: errlog(f"{n}.ss.txt") for n in nodes}
    errs = {n: errlog(f"{n}.ss.err") for n in nodes}

    def sample():
        start, k = time.time(), 0
        while not ev.is_set():
            for n, opts in nodes.items():
                before = time.time()
                try:
                    got = subprocess.run(
                        _in_ns(topo, n, ["ss", opts]),
                        stdout=subprocess.PIPE, stderr=errs[n],
                        text=True).stdout
                except OSError as e:
                    log(f"{run['name']}: ss at {n}: {e}; no more samples")
                    return
                outs[n].write(f"# {(before + time.time()) / 2:.6f}\n"
                              + got)
                outs[n].flush()
            k = max(k + 1, math.floor((time.time() - start) / every) + 1)
            ev.wait(max(0.0, start + k * every - time.time()))
    th = threading.Thread(target=sample, daemon=True)
    th.start()

    def stop(t0=None):
        ev.set()
        th.join()
        if t0 is None:
            return [], {}
        ports = {BASE_PORT + i: f["name"]
                 for i, f in enumerate(run["flows"])}
        samples = {f["name"]: [] for f in run["flows"]
                   if transports.sampled(f["transport"])}
        for n in nodes:
            for name, xs in ss.parse(read_text(os.path.join(
                    d, f"{n}.ss.txt")), t0, ports).items():
                samples.setdefault(name, []).extend(xs)
        with open(os.path.join(d, "ss.json"), "w") as f:
            json.dump(samples, f)
        return [], {"ss_samples": {k: len(v) for k, v in samples.items()}}
    stop = once(stop)
    stack.callback(stop)
    return stop


def _tunnel_args(run, flow, i, topo, d):
    """The tunnel of flow i (tools/tsm): (client on the sender's node,
    server on the receiver's), as the paper's VoIP proxy sits between
    the CBR source and its node and the TFRC sink at the destination."""
    t, name = run["tunnel"], flow["name"]
    to = f"127.0.0.1:{BASE_PORT + i}"
    rcv = f"d{flow['pair']}"
    server = tsm.tunnel_server(
        TUNNEL_PORT + i, t["transport"], to,
        os.path.join(d, f"{name}.tun-server.json"))
    client = tsm.tunnel_client(
        f"{topo.addr(rcv)}:{TUNNEL_PORT + i}", f"127.0.0.1:{ENTRY_PORT + i}",
        to, t["transport"], t["queue"],
        os.path.join(d, f"{name}.tun-client.json"),
        fmt_value(float(t["lifetime_ms"])) if "lifetime_ms" in t else None)
    return client, server


def start_tunnels(run, topo, d, errlog):
    """Start the tunnel of every tunnelled flow: its server, then its
    client; wait until each client's connection is up (at most 10 s for
    all: a tunnel still connecting when its flow starts counts what it
    drops meanwhile, and run.json says how long each took)."""
    tunnels = []
    for i, f in enumerate(run["flows"]):
        if not tunnelled(run, f):
            continue
        client, server = _tunnel_args(run, f, i, topo, d)
        rcv, snd = topo.ns(f"d{f['pair']}"), topo.ns(f"s{f['pair']}")
        proto = transports.carrier(run["tunnel"]["transport"])
        t = {"flow": f["name"], "port": TUNNEL_PORT + i, "ns": snd}
        # Their statistics go to files; standard output would repeat
        # them into the run's log.
        t["server"] = subprocess.Popen(
            in_ns(rcv, server),
            stdout=subprocess.DEVNULL,
            stderr=errlog(f"{f['name']}.tun-server.err"))
        tunnels.append(t)
        what = f"{run['name']}/{f['name']}: tunnel"
        wait_for(what + " server",
                 lambda: ss.listening(rcv, t["port"], proto))
        t["client"] = subprocess.Popen(
            in_ns(snd, client),
            stdout=subprocess.DEVNULL,
            stderr=errlog(f"{f['name']}.tun-client.err"))
        wait_for(what + " client",
                 lambda: ss.listening(snd, ENTRY_PORT + i, "udp"))
    start = time.time()
    proto = transports.carrier(run["tunnel"]["transport"]) if tunnels \
        else None
    for t in tunnels:
        t["connect_s"] = None
        while time.time() - start < 10:
            if ss.established(t["ns"], t["port"], proto):
                t["connect_s"] = round(time.time() - start, 2)
                break
            time.sleep(0.1)
        if t["connect_s"] is None:
            log(f"{run['name']}/{t['flow']}: tunnel not connected after "
                "10 s; its flow starts anyway")
    return tunnels


def stop_tunnels(tunnels, d):
    """SIGTERM every tunnel client, then every server (each writes its
    statistics); returns what failed."""
    failed = []
    for role in ("client", "server"):
        for t in tunnels:
            p = t.get(role)
            if p is None:
                continue
            if not terminate(p):
                failed.append(f"{t['flow']} tunnel {role} ignored SIGTERM")
            stats = os.path.join(d, f"{t['flow']}.tun-{role}.json")
            if not os.path.exists(stats):
                failed.append(f"{t['flow']} tunnel {role} wrote no "
                              f"statistics (exit {p.returncode})")
    return failed


def loss_steps(run, topo, t0):
    """Change the bottleneck's random loss at the run's loss_steps (s
    after t0, when the senders started), from timer threads.  Returns
    {"done": [[when applied (s after t0), loss %]], "stop": cancel}."""
    out, timers = {"done": []}, []

    def step(loss):
        try:
            topo.set_loss("r1", "r2", loss)
            out["done"].append([round(time.time() - t0, 3), loss])
        except (RuntimeError, ValueError) as e:
            log(f"{run['name']}: loss step to {loss} %: {e}")
    for at, loss in run.get("loss_steps", []):
        timers.append(threading.Timer(max(0.0, t0 + at - time.time()),
                                      step, (loss,)))
        timers[-1].start()

    def stop():
        for t in timers:
            t.cancel()
            t.join()
    out["stop"] = stop
    return out
