# SPDX-License-Identifier: GPL-2.0
"""Experiments: a declarative description in, figures and a table out.

An experiment is a TOML file, experiments/<name>.toml, that names a
topology, runs (sets of flows that share it), the flows of each run
(transport, congestion control, traffic pattern, start and stop), the
kernel module settings a run needs, the figures to draw and the paper's
numbers to set ours beside.  Documentation/experiments.rst describes the
format.  This program (python3 -m lab.experiment) has two halves:

  run NAME [--short] [--out DIR] [--only GLOB] [--duration S]
      in the guest (make experiment NAME=...): build each run's topology,
      start its flows (tools/flowgen), collect their JSON reports under
      DIR/<run>/, then analyze.
  analyze DIR
      anywhere: per-flow and per-run metrics (lab/metrics.py) into
      DIR/metrics.json, plots into DIR/*.png, a Markdown report with our
      figures beside the paper's into DIR/README.md, and the experiment's
      checks as TAP on standard output; exit 1 if a check failed (and
      after `run`, if a run failed).
  list
      the experiments and their short variants.

Runs whose module settings agree may share the guest at once (the
experiment's `parallel`); runs with different settings of a module take
turns, because module parameters are global, and so does a run that
records the tcp_probe tracepoint (tracing is global too).  A run repeated
N times (`repeat`) runs N times in turn, into DIR/<run>/, DIR/<run>@2/,
...; its metrics are the means over the repetitions, with 95 %
confidence intervals.
"""

import argparse
import contextlib
import csv
import fnmatch
import glob
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

try:
    import tomllib
except ImportError:             # Python < 3.11
    import tomli as tomllib

from lab import metrics
from lab import topology
from lab.tools import tcp_probe

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXPERIMENTS = os.path.join(REPO, "experiments")
FLOWGEN = os.path.join(REPO, "tools", "flowgen", "flowgen")
TSM = os.path.join(REPO, "tools", "tsm", "tsm")
BASE_PORT = 5301
# A tunnelled flow i: the tunnel's connection to TUNNEL_PORT + i on the
# receiver's node, its entry for the application's datagrams at
# 127.0.0.1:ENTRY_PORT + i on the sender's.
TUNNEL_PORT = 6301
ENTRY_PORT = 7301
TUNNEL_TRANSPORTS = ("dccp-ccid3", "dccp-ccid2", "tltcp", "multfrc")

FLOW_KEYS = {"name", "pair", "transport", "cc", "ccid", "mss", "rate",
             "len", "start", "stop", "count", "lifetime_ms", "on_off",
             "sections", "ahead", "window", "trace", "ramp", "warmup"}
RUN_KEYS = {"name", "vary", "group", "modules", "topology", "flows",
            "duration", "warmup", "reference", "about", "baseline",
            "weight", "loss_steps", "equation", "tunnel", "repeat",
            "capture"}
# What a run may record besides its flows' reports (capture = {...}).
CAPTURE_KEYS = ("ss", "tcp_probe", "pcap")
# Bytes of each packet the bottleneck's pcap keeps (the headers).
PCAP_SNAPLEN = 128
# ss's options per transport: the sockets a sender's ss samples show.
SS_KIND = {"tcp": "t", "tltcp": "t", "dccp": "d"}
# Transports over TCP: TCP options (-C, -M, -W) and TCP_INFO apply.
TCP_LIKE = ("tcp", "tltcp")
# One packet of the paper's sequence plots (kind "seq").
SEQ_PACKET = 1500


class SpecError(ValueError):
    pass


def log(msg):
    print(f"experiment: {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------ the spec --

def _subst(value, v):
    """Put a run's vary value into every string of a spec fragment.  A
    vary value may be a table: "{v.key}" is then its entry key.  A lone
    placeholder keeps the value's type."""
    if isinstance(value, str):
        fields = v.items() if isinstance(v, dict) else [(None, v)]
        for key, x in fields:
            ph = "{v}" if key is None else "{v.%s}" % key
            if value == ph:
                return x
            value = value.replace(ph, _fmt_value(x))
        return value
    if isinstance(value, list):
        return [_subst(x, v) for x in value]
    if isinstance(value, dict):
        return {k: _subst(x, v) for k, x in value.items()}
    return value


def _fmt_value(x):
    """A vary value inside a string: 0.5, 62.5, 10 (not 10.0)."""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def load(name, short=False, duration=None):
    """The experiment NAME (a name in experiments/ or a path),
    expanded: one entry per run, with its topology, flows and modules
    complete.  short picks the short variant; duration (seconds), if
    given, replaces every run's."""
    path = name if os.path.sep in name or name.endswith(".toml") \
        else os.path.join(EXPERIMENTS, f"{name}.toml")
    try:
        with open(path, "rb") as f:
            exp = tomllib.load(f)
    except OSError as e:
        raise SpecError(f"{name}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: {e}") from e
    exp["name"] = os.path.splitext(os.path.basename(path))[0]
    exp["variant"] = "short" if short else "full"
    defaults = exp.get("defaults", {})
    shortcfg = exp.get("short", {})
    if short and not shortcfg.get("runs"):
        raise SpecError(f"{exp['name']}: no short variant ([short] runs)")
    # How often each run runs: the experiment's, the short variant's.
    repeat = _check_repeat(exp.get("repeat", 1), "repeat")
    if short:
        repeat = _check_repeat(shortcfg.get("repeat", repeat),
                               "[short] repeat")
    runs = []
    for spec in exp.get("run", []):
        unknown = set(spec) - RUN_KEYS
        if unknown:
            raise SpecError(f"run {spec.get('name')}: unknown keys "
                            f"{sorted(unknown)}")
        for v in spec.get("vary", [None]):
            r = _subst({k: x for k, x in spec.items() if k != "vary"}, v) \
                if v is not None else dict(spec)
            r["topology"] = {**exp.get("topology", {}),
                             **r.get("topology", {})}
            r["duration"] = float(r.get("duration",
                                        defaults.get("duration", 60)))
            if short:
                r["duration"] = float(shortcfg.get("duration",
                                                   r["duration"]))
            if duration:
                r["duration"] = float(duration)
            # Seconds at each flow's start its throughput leaves out: the
            # run's own, or the variant's default.
            warmup = defaults.get("warmup", 0)
            if short:
                warmup = shortcfg.get("warmup", warmup)
            r["warmup"] = float(r.get("warmup", warmup))
            r["repeat"] = _check_repeat(r.get("repeat", repeat),
                                        f"run {r['name']}: repeat")
            if "@" in str(r["name"]):
                # <run>@2/ is the second repetition's directory.
                raise SpecError(f"run {r['name']}: '@' in a run's name")
            r.setdefault("group", r["name"])
            r.setdefault("modules", {})
            _check_steps(r)
            _check_tunnel(r)
            _check_capture(r, defaults)
            r["flows"] = [_flow(r, i, f, defaults)
                          for i, f in enumerate(_counted(r))]
            if not r["flows"]:
                raise SpecError(f"run {r['name']}: no flows")
            runs.append(r)
    names = [r["name"] for r in runs]
    if len(set(names)) != len(names):
        raise SpecError("run names repeat")
    missing = [w for w in shortcfg.get("runs", []) if w not in names]
    if missing:
        raise SpecError(f"[short] runs: no run {missing}")
    if short:
        runs = [r for r in runs if r["name"] in shortcfg["runs"]]
    exp["runs"] = runs
    exp["interval"] = float(defaults.get("interval", 1.0))
    for r in runs:
        for f in r["flows"]:
            if f["stop"] - f["start"] - _warmup(r, f) < 1:
                raise SpecError(f"run {r['name']} flow {f['name']}: "
                                "less than 1 s after the warm-up")
    exp["parallel"] = int(shortcfg.get("parallel", exp.get("parallel", 1))
                          if short else exp.get("parallel", 1))
    return exp


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _check_repeat(n, what):
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise SpecError(f"{what} {n!r}: a whole number >= 1")
    return n


def _repeat(run):
    """How many times the run runs (1 in descriptions from before
    repeat)."""
    return int(run.get("repeat", 1))


def _rep_dir(name, k):
    """Repetition k's directory: the run's name for the first, so that
    a repeated run's first results are where an unrepeated run's are."""
    return name if k == 1 else f"{name}@{k}"


def _warmup(run, flow):
    """Seconds at the flow's start that its throughput leaves out: its
    own warmup, else the run's."""
    return float(flow.get("warmup", run.get("warmup", 0)))


def _check_capture(run, defaults):
    """capture = { ss = SECONDS, tcp_probe = true, pcap = true | SNAPLEN }
    over [defaults] capture, key by key (false turns one off).  Keeps in
    run["capture"] what is on: ss (seconds between samples), tcp_probe
    (true), pcap (the snap length, PCAP_SNAPLEN for true); no key when
    nothing is."""
    tables = (("[defaults] capture", defaults.get("capture", {})),
              (f"run {run['name']}: capture", run.get("capture", {})))
    for where, t in tables:
        if not isinstance(t, dict):
            raise SpecError(f"{where} is a table of "
                            f"{', '.join(CAPTURE_KEYS)}")
        unknown = set(t) - set(CAPTURE_KEYS)
        if unknown:
            raise SpecError(f"{where}: unknown keys {sorted(unknown)} "
                            f"({', '.join(CAPTURE_KEYS)})")
    c = {**tables[0][1], **tables[1][1]}
    what = f"run {run['name']}: capture"
    out = {}
    ss = c.get("ss", False)
    if ss is not False:
        if not _number(ss) or ss <= 0:
            raise SpecError(f"{what} ss {ss!r}: seconds between samples "
                            "> 0, or false")
        out["ss"] = float(ss)
    tp = c.get("tcp_probe", False)
    if not isinstance(tp, bool):
        raise SpecError(f"{what} tcp_probe {tp!r}: true or false")
    if tp:
        out["tcp_probe"] = True
    pcap = c.get("pcap", False)
    if pcap is True:
        out["pcap"] = PCAP_SNAPLEN
    elif pcap is not False:
        if not isinstance(pcap, int) or isinstance(pcap, bool) or pcap < 1:
            raise SpecError(f"{what} pcap {pcap!r}: true, false or a snap "
                            "length in bytes >= 1")
        out["pcap"] = pcap
    if out:
        run["capture"] = out
    else:
        run.pop("capture", None)


def _check_steps(run):
    """loss_steps: [[seconds into the run, loss %], ...] in time order,
    on a dumbbell's bottleneck (which must have a netem: a delay)."""
    steps = run.get("loss_steps")
    if steps is None:
        return
    ok = isinstance(steps, list) and all(
        isinstance(x, list) and len(x) == 2 and
        all(isinstance(v, (int, float)) for v in x) and
        0 <= x[0] < run["duration"] and 0 <= x[1] < 100 for x in steps)
    if not ok or [x[0] for x in steps] != sorted(x[0] for x in steps):
        raise SpecError(f"run {run['name']}: loss_steps must be "
                        "[[seconds, percent], ...] in time order, within "
                        "the run")
    if run["topology"].get("shape", "dumbbell") != "dumbbell" or \
            not run["topology"].get("delay"):
        raise SpecError(f"run {run['name']}: loss_steps need a dumbbell "
                        "with a bottleneck delay")


def _check_tunnel(run):
    """tunnel = { transport = "dccp-ccid3", queue = 1, lifetime_ms = N }:
    every UDP flow of the run goes through a tunnel of its own
    (tools/tsm); lifetime_ms, if given, is how long a datagram may wait
    in the tunnel's queue (the tool's default otherwise)."""
    t = run.get("tunnel")
    if t is None:
        return
    if not isinstance(t, dict) or \
            set(t) - {"transport", "queue", "lifetime_ms"}:
        raise SpecError(f"run {run['name']}: tunnel is a table of "
                        "transport, queue and lifetime_ms")
    tr = t.get("transport", "dccp-ccid3")
    if not isinstance(tr, str) or tr.split(":")[0] not in TUNNEL_TRANSPORTS:
        raise SpecError(f"run {run['name']}: tunnel transport {tr!r}: "
                        f"{', '.join(TUNNEL_TRANSPORTS)} (multfrc:N)")
    q = t.get("queue", 1)
    if not isinstance(q, int) or isinstance(q, bool) or q < 1:
        raise SpecError(f"run {run['name']}: tunnel queue {q!r}: "
                        "packets >= 1")
    life = t.get("lifetime_ms")
    if life is not None and (not isinstance(life, (int, float)) or
                             isinstance(life, bool) or life < 1):
        raise SpecError(f"run {run['name']}: tunnel lifetime_ms {life!r}")
    run["tunnel"] = {"transport": tr, "queue": q}
    if life is not None:
        run["tunnel"]["lifetime_ms"] = life


def _tunnelled(run, flow):
    return bool(run.get("tunnel")) and flow["transport"] == "udp"


def _counted(run):
    """Flows with count = N stand for N flows named <name>1..<name>N."""
    out = []
    for f in run.get("flows", []):
        n = f.get("count", 1)
        if not isinstance(n, int) or n < 0:
            raise SpecError(f"run {run['name']}: count {n!r}")
        if "count" not in f:
            out.append(f)
            continue
        base = {k: v for k, v in f.items() if k != "count"}
        out += [{**base, "name": f"{base.get('name', 'f')}{j}"}
                for j in range(1, n + 1)]
    return out


def _flow(run, i, f, defaults):
    unknown = set(f) - FLOW_KEYS
    if unknown:
        raise SpecError(f"run {run['name']} flow {i}: unknown keys "
                        f"{sorted(unknown)}")
    flow = {"name": f.get("name", f"f{i + 1}"), "pair": i + 1,
            "transport": "tcp", "start": 0.0, "stop": run["duration"]}
    for k in ("mss", "len"):
        if k in defaults:
            flow[k] = defaults[k]
    flow.update(f)
    flow["start"] = float(flow["start"])
    flow["stop"] = min(float(flow["stop"]), run["duration"])
    if flow["stop"] - flow["start"] < 1:
        raise SpecError(f"run {run['name']} flow {flow['name']}: "
                        "shorter than 1 s")
    if "warmup" in flow:
        w = flow["warmup"]
        if not _number(w) or w < 0:
            raise SpecError(f"run {run['name']} flow {flow['name']}: "
                            f"warmup {w!r}: seconds >= 0")
        flow["warmup"] = float(w)
    if "ramp" in flow and "rate" not in flow:
        raise SpecError(f"run {run['name']} flow {flow['name']}: ramp "
                        "raises a rate: give one")
    if flow["transport"] not in TCP_LIKE:
        flow.pop("mss", None)
        if "window" in flow:
            raise SpecError(f"run {run['name']} flow {flow['name']}: "
                            "window applies to TCP and TLTCP only")
    return flow


# ------------------------------------------------------- in the guest --

def _module_key(run):
    return json.dumps(run["modules"], sort_keys=True)


def _set_modules(modules, saved):
    for mod, params in modules.items():
        subprocess.run(["modprobe", mod], check=True)
        for p, v in params.items():
            path = f"/sys/module/{mod}/parameters/{p}"
            if path not in saved:
                with open(path) as f:
                    saved[path] = f.read().strip()
            with open(path, "w") as f:
                f.write(str(v))


def _restore_modules(saved):
    for path, v in saved.items():
        try:
            with open(path, "w") as f:
                f.write(v)
        except OSError as e:
            log(f"could not restore {path}: {e}")


def _listening(ns, port, transport):
    flag = {"tcp": ["-ltn"], "tltcp": ["-ltn"], "udp": ["-lun"],
            "dccp": ["-ln", "--dccp"], "sctp": ["-ln", "--sctp"]}
    out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-H",
                          *flag[transport], f"sport = :{port}"],
                         capture_output=True, text=True).stdout
    return bool(out.strip())


def _client_args(flow, exp, host):
    a = [FLOWGEN, "-c", host, "-P", flow["transport"],
         "-t", f"{flow['stop'] - flow['start']:g}",
         "-i", f"{exp['interval']:g}", "-w", f"{flow['start']:g}"]
    for key, opt in (("cc", "-C"), ("mss", "-M"), ("ccid", "-K"),
                     ("rate", "-r"), ("len", "-l"), ("lifetime_ms", "-T"),
                     ("on_off", "-O"), ("sections", "-D"),
                     ("ramp", "-R")):
        if key in flow:
            a += [opt, str(flow[key])]
    if flow.get("ahead"):
        a.append("-A")
    return a


def _server_args(flow, exp, port, d):
    """The receiver's flowgen command line (after ip netns exec)."""
    a = [FLOWGEN, "-s", "-P", flow["transport"], "-p", str(port),
         "-i", f"{exp['interval']:g}",
         "-o", os.path.join(d, f"{flow['name']}.rcv.json")]
    if "window" in flow:
        a += ["-W", str(flow["window"])]
    if flow.get("trace"):
        a += ["-S", os.path.join(d, f"{flow['name']}.seq.csv")]
    if flow["transport"] == "udp":
        # A thinned-out flow (a collapsing path, a tunnel's small queue)
        # may fall silent for seconds: only its END datagrams or the end
        # of the run end it.
        a += ["-I", f"{flow['stop'] - flow['start']:g}"]
    return a


def _tunnel_args(run, flow, i, topo, d):
    """The tunnel of flow i (tools/tsm): (client on the sender's node,
    server on the receiver's), as the paper's VoIP proxy sits between
    the CBR source and its node and the TFRC sink at the destination."""
    t, name = run["tunnel"], flow["name"]
    to = f"127.0.0.1:{BASE_PORT + i}"
    rcv = f"d{flow['pair']}"
    server = [TSM, "tunnel", "server", "--listen", str(TUNNEL_PORT + i),
              "--transport", t["transport"], "--to", to,
              "--stats", os.path.join(d, f"{name}.tun-server.json")]
    client = [TSM, "tunnel", "client",
              "--peer", f"{topo.addr(rcv)}:{TUNNEL_PORT + i}",
              "--udp", f"127.0.0.1:{ENTRY_PORT + i}", "--to", to,
              "--transport", t["transport"], "--queue", str(t["queue"]),
              "--stats", os.path.join(d, f"{name}.tun-client.json")]
    if "lifetime_ms" in t:
        client += ["--lifetime", _fmt_value(float(t["lifetime_ms"]))]
    return client, server


def _established(ns, port, transport):
    """A connection to port exists and is established (from the
    client's side)."""
    kind = ["--dccp"] if transport.startswith("dccp") else ["-t"]
    out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Hn", *kind,
                          "state", "established", f"dport = :{port}"],
                         capture_output=True, text=True).stdout
    return bool(out.strip())


def _wait_for(what, test, tries=100):
    for _ in range(tries):
        if test():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start")


def run_one(exp, run, out, status, rep=1):
    """Build the run's topology, run its flows, keep their reports (and
    what the run captures) in its repetition rep's directory."""
    label = _rep_dir(run["name"], rep)
    d = os.path.join(out, label)
    shutil.rmtree(d, ignore_errors=True)      # no stale report survives
    os.makedirs(d)
    topo_kw = dict(run["topology"])
    shape = topo_kw.pop("shape", "dumbbell")
    if shape == "dumbbell":
        topo_kw.setdefault("pairs", max(f["pair"] for f in run["flows"]))
    topo = topology.SHAPES[shape](name="ex", **topo_kw)
    procs, logs = [], []

    def errlog(name):
        logs.append(open(os.path.join(d, name), "w"))
        return logs[-1]

    t_up = time.time()
    with topo, contextlib.ExitStack() as files:
        files.callback(lambda: [f.close() for f in logs])
        log(f"{label}: topology up in {time.time() - t_up:.0f} s")
        # Captures stop on every way out of this block, before the
        # topology goes (tcpdump fails when its interface disappears).
        cap = _start_captures(run, topo, d, errlog, files)
        for i, f in enumerate(run["flows"]):
            port = BASE_PORT + i
            rcv = f"d{f['pair']}"
            srv = subprocess.Popen(
                ["ip", "netns", "exec", topo.ns(rcv),
                 *_server_args(f, exp, port, d)],
                stderr=errlog(f"{f['name']}.rcv.err"))
            procs.append(srv)
            for _ in range(100):
                if _listening(topo.ns(rcv), port, f["transport"]):
                    break
                time.sleep(0.1)
            else:
                raise RuntimeError(f"{label}/{f['name']}: "
                                   "receiver did not start")
        tunnels = _start_tunnels(run, topo, d, errlog)
        t0 = time.time()
        cap["mark"](t0)
        clients = []
        for i, f in enumerate(run["flows"]):
            snd = f"s{f['pair']}"
            host, port = topo.addr(f"d{f['pair']}"), BASE_PORT + i
            if _tunnelled(run, f):
                host, port = "127.0.0.1", ENTRY_PORT + i
            args = _client_args(f, exp, host)
            cmd = ["ip", "netns", "exec", topo.ns(snd), *args,
                   "-p", str(port),
                   "-o", os.path.join(d, f"{f['name']}.snd.json")]
            clients.append(subprocess.Popen(
                cmd, stderr=errlog(f"{f['name']}.snd.err")))
        status[label] = t0
        steps = _loss_steps(run, topo, t0)
        failed = []
        for f, c in zip(run["flows"], clients):
            try:
                rc = c.wait(timeout=run["duration"] + 60)
            except subprocess.TimeoutExpired:
                c.kill()
                rc = "timeout"
            if rc != 0:
                failed.append(f"{f['name']} sender exit {rc}")
        # A TCP receiver ends when the sender's last bytes arrive, which
        # may take a while on a slow path, a UDP one when its END
        # datagrams do (a full queue may drop them); what arrives after
        # the flow's stop does not count, so stop it (it still writes its
        # report).  The receivers share one 10 s grace period: twenty of
        # them waiting in turn would add minutes to a run.
        grace = time.time() + 10
        for f, s in zip(run["flows"], procs):
            try:
                s.wait(timeout=max(0.1, grace - time.time()))
            except subprocess.TimeoutExpired:
                _terminate(s)
            rep_path = os.path.join(d, f"{f['name']}.rcv.json")
            if not os.path.exists(rep_path):
                failed.append(f"{f['name']} receiver wrote no report "
                              f"(exit {s.returncode})")
        failed += _stop_tunnels(tunnels, d)
        steps["stop"]()
        cap_failed, cap_info = cap["stop"](t0)
        failed += cap_failed
        qdisc = subprocess.run(
            ["ip", "netns", "exec", topo.ns("r1"), "tc", "-s", "qdisc"],
            capture_output=True, text=True).stdout
        with open(os.path.join(d, "qdisc.txt"), "w") as fq:
            fq.write(qdisc)
        info = {"run": run, "t0": t0, "topology": topo.to_dict(),
                "kernel": os.uname().release, "failed": failed}
        if _repeat(run) > 1:
            info["repetition"] = rep
        if tunnels:
            info["tunnel_connect_s"] = {t["flow"]: t["connect_s"]
                                        for t in tunnels}
        if steps["done"]:
            info["loss_steps"] = steps["done"]
        if cap_info:
            info["capture"] = cap_info
        with open(os.path.join(d, "run.json"), "w") as fj:
            json.dump(info, fj, indent=1)
    status.pop(label, None)
    if failed:
        log(f"{label}: " + "; ".join(failed))
    return not failed


# ---------------------------------------------------------- captures --

def _terminate(p, timeout=10):
    """SIGTERM p and wait for it; SIGKILL it if it is still there after
    timeout seconds.  Returns False if it had to be killed."""
    p.terminate()
    try:
        p.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return False


def _in_ns(topo, node, args):
    """A command line that runs args in node's network namespace."""
    return ["ip", "netns", "exec", topo.ns(node), *args]


def _once(fn):
    """fn, called at most once: later calls return the first's result
    (a capture's stop is called on the way through and again, to be
    sure, on the way out)."""
    done = []

    def call(*args):
        if not done:
            done.append(fn(*args))
        return done[0]
    return call


def _start_captures(run, topo, d, errlog, stack):
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


def _tcpdump_args(dev, snaplen, path):
    """tcpdump on dev into path: snaplen bytes of each packet, each
    written at once (-U: the file is whole whenever tcpdump stops), as
    root (-Z: tcpdump otherwise becomes a user who cannot write path),
    with a 4 MiB buffer against drops in a slow guest; every packet, as
    tcpdump has no filter for DCCP."""
    return ["tcpdump", "-i", dev, "-s", str(snaplen), "-U", "-Z", "root",
            "-B", "4096", "-w", path]


def _tcpdump_counts(text):
    """tcpdump's closing statistics: {"captured", "received" (by the
    filter), "dropped" (by the kernel)}, those it printed."""
    out = {}
    for key, words in (("captured", "packets captured"),
                       ("received", "packets received by filter"),
                       ("dropped", "packets dropped by kernel")):
        m = re.search(r"(\d+) " + words, text)
        if m:
            out[key] = int(m.group(1))
    return out


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


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
                                _tcpdump_args(dev, snaplen, path)),
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
            _terminate(p)
        failed = []
        if p.returncode not in (0, -signal.SIGTERM) or \
                not os.path.exists(path):
            failed.append(f"pcap: tcpdump exit {p.returncode}")
        return failed, {"pcap": _tcpdump_counts(_read(err))}
    stop = _once(stop)
    stack.callback(stop)

    def capturing():
        # It says "listening on" once it captures (or exits on an error).
        return p.poll() is not None or "listening on" in _read(err)
    _wait_for(f"tcpdump on {node}:{dev}", capturing, tries=300)
    if p.poll() is not None:
        raise RuntimeError(f"tcpdump on {node}:{dev} exited "
                           f"{p.returncode}: {_read(err).strip()}")
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
    stop = _once(stop)
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
    """{sender node: ss's options} for the run's TCP, TLTCP and DCCP
    flows: -tinH, -dinH or -tdinH."""
    kinds = {}
    for f in run["flows"]:
        if f["transport"] in SS_KIND:
            kinds.setdefault(f"s{f['pair']}", set()).add(
                SS_KIND[f["transport"]])
    return {n: "-" + "".join(k for k in "td" if k in ks) + "inH"
            for n, ks in sorted(kinds.items())}


def _start_ss(run, topo, d, every, errlog, stack):
    """Every `every` seconds, ss at each sender node (_ss_nodes),
    appended to d/<node>.ss.txt after a line "# EPOCH" (the middle of the
    call); ss's errors go to d/<node>.ss.err.  A sample that takes longer
    than `every` makes the next wait for its slot.  Returns stop(t0),
    which writes d/ss.json (parse_ss)."""
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
                   if f["transport"] in SS_KIND}
        for n in nodes:
            for name, xs in parse_ss(_read(os.path.join(
                    d, f"{n}.ss.txt")), t0, ports).items():
                samples.setdefault(name, []).extend(xs)
        with open(os.path.join(d, "ss.json"), "w") as f:
            json.dump(samples, f)
        return [], {"ss_samples": {k: len(v) for k, v in samples.items()}}
    stop = _once(stop)
    stack.callback(stop)
    return stop


# A rate as ss prints it: bit/s, numerically (-n) or with a prefix.
SS_RATE = re.compile(r"(\d+(?:\.\d+)?)([KMGT]?)bps")
SS_PREFIX = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
# An address:port column of ss's socket line.
SS_ADDR = re.compile(r"\S+:(\d+)")


def _ss_fields(words, sample):
    """ss's tcp_info words into sample: cwnd, rtt_ms (the smoothed RTT),
    pacing_rate_bps, delivery_rate_bps, retrans (segments retransmitted
    in all, the second number of retrans:now/total)."""
    for i, w in enumerate(words):
        key, _, v = w.partition(":")
        try:
            if key == "cwnd" and v:
                sample["cwnd"] = int(v)
            elif key == "rtt" and v:
                sample["rtt_ms"] = float(v.split("/")[0])
            elif key == "retrans" and v:
                sample["retrans"] = int(v.split("/")[-1])
            elif w in ("pacing_rate", "delivery_rate") and \
                    i + 1 < len(words):
                m = SS_RATE.fullmatch(words[i + 1])
                if m:
                    sample[f"{w}_bps"] = round(
                        float(m.group(1)) * SS_PREFIX[m.group(2)])
        except ValueError:
            continue


def parse_ss(text, t0, ports):
    """ss -tinH (or -dinH, -tdinH, one line per socket with -O) samples,
    each after a line "# EPOCH": {flow: [{"t": seconds after t0, "cwnd",
    "rtt_ms", "pacing_rate_bps", "delivery_rate_bps", "retrans"}]} for
    the sockets whose peer port ports ({port: flow}) names; a key only
    where ss printed it (it leaves out retrans while there was none, and
    DCCP fills only CCID 3's RTT)."""
    out, when, cur = {}, None, None
    for line in text.splitlines():
        if line.startswith("#"):
            try:
                when = float(line[1:].split()[0])
            except (IndexError, ValueError):
                pass
            cur = None
            continue
        if not line.strip():
            continue
        if not line[0].isspace():
            # [netid] state recv-q send-q local:port peer:port [info]
            cur = None
            words = line.split()
            at = [i for i, w in enumerate(words) if SS_ADDR.fullmatch(w)]
            if len(at) < 2 or when is None:
                continue
            name = ports.get(int(SS_ADDR.fullmatch(words[at[1]]).group(1)))
            if name is None:
                continue
            cur = {"t": round(when - t0, 3)}
            out.setdefault(name, []).append(cur)
            _ss_fields(words[at[1] + 1:], cur)
        elif cur is not None:
            _ss_fields(line.split(), cur)
    return out


def _start_tunnels(run, topo, d, errlog):
    """Start the tunnel of every tunnelled flow: its server, then its
    client; wait until each client's connection is up (at most 10 s for
    all: a tunnel still connecting when its flow starts counts what it
    drops meanwhile, and run.json says how long each took)."""
    tunnels = []
    for i, f in enumerate(run["flows"]):
        if not _tunnelled(run, f):
            continue
        client, server = _tunnel_args(run, f, i, topo, d)
        rcv, snd = topo.ns(f"d{f['pair']}"), topo.ns(f"s{f['pair']}")
        proto = "dccp" if run["tunnel"]["transport"].startswith("dccp") \
            else "tcp"
        t = {"flow": f["name"], "port": TUNNEL_PORT + i, "ns": snd}
        # Their statistics go to files; standard output would repeat
        # them into the run's log.
        t["server"] = subprocess.Popen(
            ["ip", "netns", "exec", rcv, *server],
            stdout=subprocess.DEVNULL,
            stderr=errlog(f"{f['name']}.tun-server.err"))
        tunnels.append(t)
        what = f"{run['name']}/{f['name']}: tunnel"
        _wait_for(what + " server",
                  lambda: _listening(rcv, t["port"], proto))
        t["client"] = subprocess.Popen(
            ["ip", "netns", "exec", snd, *client],
            stdout=subprocess.DEVNULL,
            stderr=errlog(f"{f['name']}.tun-client.err"))
        _wait_for(what + " client",
                  lambda: _listening(snd, ENTRY_PORT + i, "udp"))
    start = time.time()
    for t in tunnels:
        t["connect_s"] = None
        while time.time() - start < 10:
            if _established(t["ns"], t["port"],
                            run["tunnel"]["transport"]):
                t["connect_s"] = round(time.time() - start, 2)
                break
            time.sleep(0.1)
        if t["connect_s"] is None:
            log(f"{run['name']}/{t['flow']}: tunnel not connected after "
                "10 s; its flow starts anyway")
    return tunnels


def _stop_tunnels(tunnels, d):
    """SIGTERM every tunnel client, then every server (each writes its
    statistics); returns what failed."""
    failed = []
    for role in ("client", "server"):
        for t in tunnels:
            p = t.get(role)
            if p is None:
                continue
            if not _terminate(p):
                failed.append(f"{t['flow']} tunnel {role} ignored SIGTERM")
            stats = os.path.join(d, f"{t['flow']}.tun-{role}.json")
            if not os.path.exists(stats):
                failed.append(f"{t['flow']} tunnel {role} wrote no "
                              f"statistics (exit {p.returncode})")
    return failed


def _loss_steps(run, topo, t0):
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


def _alone(run):
    """A run that shares the guest with no other: it records the
    tcp_probe tracepoint, whose tracefs is global to the guest."""
    return bool(run.get("capture", {}).get("tcp_probe"))


def _batches(exp):
    """Runs in an order that never overlaps two settings of a module,
    at most `parallel` at a time; runs that set no module fill the free
    places.  Runs that must be alone (_alone) come last, one a batch."""
    keyed, free, alone = {}, [], []
    for r in exp["runs"]:
        if _alone(r):
            alone.append([r])
        elif r["modules"]:
            keyed.setdefault(_module_key(r), []).append(r)
        else:
            free.append(r)
    n = exp["parallel"]
    batches = [runs[i:i + n] for runs in keyed.values()
               for i in range(0, len(runs), n)]
    for b in batches:
        while free and len(b) < n:
            b.append(free.pop(0))
    batches += [free[i:i + n] for i in range(0, len(free), n)]
    return batches + alone


def run_all(exp, out, only=None):
    """Run the experiment's runs (those matching the glob only, if given,
    keeping the other runs' results) into out."""
    if not os.access(FLOWGEN, os.X_OK):
        raise SpecError(f"{FLOWGEN} not built (make tools)")
    if any(r.get("tunnel") for r in exp["runs"]) and \
            not os.access(TSM, os.X_OK):
        raise SpecError(f"{TSM} not built (make tools)")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "experiment.json"), "w") as f:
        json.dump(exp, f, indent=1)
    todo = dict(exp, runs=[r for r in exp["runs"]
                           if not only or fnmatch.fnmatch(r["name"], only)])
    if not todo["runs"]:
        raise SpecError(f"no run matches {only}")
    batches = list(_batches(todo))
    saved, status, ok = {}, {}, True
    start = time.time()
    for mod in exp.get("modprobe", []):
        subprocess.run(["modprobe", mod], check=True)
    try:
        for k, batch in enumerate(batches, 1):
            for r in batch:
                _set_modules(r["modules"], saved)
            names = ", ".join(r["name"] + (f" x{_repeat(r)}"
                                           if _repeat(r) > 1 else "")
                              for r in batch)
            longest = max(r["duration"] for r in batch)
            total = max(r["duration"] * _repeat(r) for r in batch)
            log(f"[{k}/{len(batches)}] {names} ({total:g} s)")
            results = {}
            threads = [threading.Thread(
                target=lambda r=r: results.__setitem__(
                    r["name"], _repeated(exp, r, out, status)))
                for r in batch]
            for t in threads:
                t.start()
            last = time.time()
            while any(t.is_alive() for t in threads):
                time.sleep(1)
                if time.time() - last >= 30 and status:
                    last = time.time()
                    t0 = min(status.values())
                    log(f"[{k}/{len(batches)}] {time.time() - t0:.0f}/"
                        f"{longest:g} s")
            ok &= all(results.get(r["name"]) for r in batch)
    finally:
        _restore_modules(saved)
    log(f"{sum(_repeat(r) for r in todo['runs'])} runs in "
        f"{time.time() - start:.0f} s")
    return ok


def _repeated(exp, run, out, status):
    """The run's repetitions one after another (a failed one does not
    stop the others); True if every one succeeded."""
    ok, n = True, _repeat(run)
    for k in range(1, n + 1):
        if n > 1:
            log(f"{_rep_dir(run['name'], k)}: repetition {k} of {n}")
        ok = _guarded(_rep_dir(run["name"], k), run_one, exp, run, out,
                      status, k) and ok
        status.pop(_rep_dir(run["name"], k), None)
    return ok


def _guarded(label, fn, *args):
    try:
        return fn(*args)
    except Exception as e:      # one run's failure must not hang the rest
        log(f"{label}: {type(e).__name__}: {e}")
        return False


# ---------------------------------------------------------- analysis --

def _load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _bytes(iv, hdr=0):
    """An interval's bytes; with hdr, each UDP datagram's headers too
    (the experiment's header_bytes: sizes on the wire, as ns-2 counts
    them)."""
    return iv["bytes"] + hdr * iv.get("packets", 0)


def _hdr(exp, flow):
    return exp.get("header_bytes", 0) if flow["transport"] == "udp" else 0


def _series(report, t0, bin_s=1.0, hdr=0):
    """(times, bit/s) of a report on the run's time axis, in bins of
    bin_s seconds (the report's own intervals summed)."""
    if not report or not report.get("intervals"):
        return [], []
    off = report["epoch"] - t0
    bins = {}
    for iv in report["intervals"]:
        b = math.floor((off + iv["start"]) / bin_s)
        bins[b] = bins.get(b, 0) + _bytes(iv, hdr)
    lo, hi = min(bins), max(bins)
    times = [b * bin_s for b in range(lo, hi + 1)]
    return times, [bins.get(b, 0) * 8 / bin_s for b in range(lo, hi + 1)]


def seq_trace(path, rcv, t0):
    """A receiver's sequence trace (flowgen -S) on the run's time axis:
    [(time, stream offset after the record, record type)].  The trace's
    times count from the receiver's epoch."""
    out = []
    try:
        with open(path) as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return out
    off = (rcv["epoch"] - t0) if rcv else 0.0
    for row in rows:
        try:
            out.append((off + float(row["time"]),
                        int(row["stream_off"]) + int(row["len"]),
                        row["type"]))
        except (KeyError, TypeError, ValueError):
            continue
    return out


def flow_metrics(exp, info, flow, d):
    """What the papers report for one flow (receiver-side throughput)."""
    rcv = _load_json(os.path.join(d, f"{flow['name']}.rcv.json"))
    snd = _load_json(os.path.join(d, f"{flow['name']}.snd.json"))
    warmup = _warmup(info["run"], flow)
    t0, active = info["t0"], flow["stop"] - flow["start"] - warmup
    hdr = _hdr(exp, flow)
    m = {"throughput_kbps": 0.0}
    if rcv:
        # What arrived while the flow was on, after its warm-up: not what
        # drains from the send buffer after the sender stopped writing.
        off = rcv["epoch"] - t0
        got = sum(_bytes(iv, hdr) for iv in rcv["intervals"]
                  if flow["start"] + warmup <= off + iv["start"]
                  < flow["stop"])
        m["throughput_kbps"] = got * 8 / active / 1e3
    times, rates = _series(rcv, t0, hdr=hdr)
    # Whole seconds inside the flow's life only.
    pairs = [(t, r) for t, r in zip(times, rates)
             if flow["start"] <= t and t + 1 <= flow["stop"]]
    if len(pairs) >= 3:
        ts, rs = zip(*pairs)
        tail = rs[-max(1, len(rs) // 3):]
        steady = sum(tail) / len(tail)
        m["steady_kbps"] = steady / 1e3
        if steady > 0:
            ttm = metrics.time_to_capacity(ts, rs, steady, 0.9, 5.0)
            m["time_to_max_s"] = None if ttm is None \
                else round(ttm - flow["start"], 1)
            try:
                m["cov"] = metrics.cov(rs[len(rs) // 3:])
            except ValueError:
                pass
    base_rtt = info["topology"]["info"].get("rtt", 0)
    if snd and flow["transport"] in TCP_LIKE:
        ivs = [iv for iv in snd["intervals"] if iv.get("rtt_us")]
        if ivs:
            last = ivs[-1]
            if last.get("segs_out"):
                m["loss_pct"] = 100 * last["retransmits"] / last["segs_out"]
            rtts = [iv["rtt_us"] / 1e3 for iv in ivs]
            m["rtt_ms"] = sum(rtts) / len(rtts)
            # One-way delay of the data: the RTT less the return path's
            # propagation (ACKs queue nowhere on these paths).
            m["delay_ms"] = m["rtt_ms"] - base_rtt * 1e3 / 2
            if len(rtts) > 1:
                m["jitter_ms"] = sum(abs(a - b) for a, b in
                                     zip(rtts, rtts[1:])) / (len(rtts) - 1)
    if snd and flow["transport"] == "dccp" and rcv:
        m.update(_tfrc_metrics(exp, flow, snd, rcv, t0))
    if rcv and snd and "sections" in rcv["summary"]:
        s, o = rcv["summary"], snd["summary"]
        if o.get("bytes_offered"):
            m["on_time_pct"] = 100 * s["on_time_bytes"] / o["bytes_offered"]
        m["sections_missing"] = s["sections_missing"]
        if "abandoned_unsent" in o:
            m["abandoned"] = o["abandoned_unsent"] + o["abandoned_sent"]
        m.update(_deadline_metrics(s, o))
    if snd and "tltcp" in snd["summary"]:
        tl = snd["summary"]["tltcp"]
        m["abandoned_bytes"] = tl["bytes_abandoned"]
        m["obsolete_bytes"] = tl["bytes_obsolete_late"] + \
            tl["bytes_obsolete_retrans"]
        if rcv and "gap_bytes" in rcv["summary"]:
            # Abandoned bytes the receiver was not told of: 0 when the
            # sender's queue drained before it closed.
            m["unreported_bytes"] = tl["bytes_abandoned"] - \
                rcv["summary"]["gap_bytes"]
    if rcv and flow["transport"] == "udp" and rcv["summary"].get("packets"):
        s = rcv["summary"]
        m["loss_pct"] = 100 * s["lost"] / (s["lost"] + s["packets"])
        # Of them, what the receiver's own full socket buffer dropped.
        m["rcvbuf_drops"] = s.get("rcvbuf_drops", 0)
        m["delay_ms"] = s["mean_one_way_delay"] * 1e3
    m.update(_tunnel_metrics(d, flow))
    return m


def _tunnel_metrics(d, flow):
    """A tunnelled flow: the share of the datagrams its tunnel's client
    took in from the application that it dropped (a full queue, no
    connection, too long in the queue), and the datagrams its server
    delivered, from their statistics (tools/tsm: counts are
    {"datagrams": n, "bytes": n})."""
    cl = _load_json(os.path.join(d, f"{flow['name']}.tun-client.json"))
    sv = _load_json(os.path.join(d, f"{flow['name']}.tun-server.json"))
    m = {}
    got = (cl or {}).get("from_app", {}).get("datagrams")
    if got:
        dropped = sum(v.get("datagrams", 0) for k, v in cl.items()
                      if k.startswith("dropped") and isinstance(v, dict))
        m["tunnel_drop_pct"] = 100 * dropped / got
    if sv and "delivered" in sv:
        m["tunnel_delivered"] = sv["delivered"].get("datagrams", 0)
    return m


def sink_metrics(exp, run, flows, info, d):
    """The flows into each receiver node d<pair> taken as one: the
    middleware paper's throughput at the sinks and mean one-way delay per
    branch.  d<p>_kbps (their throughputs summed), d<p>_delay_s (mean
    one-way delay of every datagram that arrived), d<p>_loss_pct,
    d<p>_peak_kbps and d<p>_peak_s (the largest 1 s throughput and when),
    d<p>_end_kbps (the mean over the last third of the run), and
    end_kbps (every sink's, summed)."""
    m, t0 = {}, info["t0"]
    lo_end = run["duration"] * 2 / 3
    end_total = 0.0
    for p in sorted({f["pair"] for f in run["flows"]}):
        fl = [f for f in run["flows"] if f["pair"] == p]
        m[f"d{p}_kbps"] = sum(flows[f["name"]]["throughput_kbps"]
                              for f in fl)
        total, pkts, owd, lost = {}, 0, 0.0, 0
        for f in fl:
            rcv = _load_json(os.path.join(d, f"{f['name']}.rcv.json"))
            for t, r in zip(*_series(rcv, t0, hdr=_hdr(exp, f))):
                total[t] = total.get(t, 0.0) + r
            s = (rcv or {}).get("summary", {})
            if s.get("packets"):
                pkts += s["packets"]
                owd += s["mean_one_way_delay"] * s["packets"]
                lost += s["lost"]
        if pkts:
            m[f"d{p}_delay_s"] = owd / pkts
            m[f"d{p}_loss_pct"] = 100 * lost / (lost + pkts)
        start = min(f["start"] for f in fl)
        stop = max(f["stop"] for f in fl)
        inside = {t: r for t, r in total.items()
                  if start <= t and t + 1 <= stop}
        if inside:
            peak = max(inside, key=inside.get)
            m[f"d{p}_peak_kbps"] = inside[peak] / 1e3
            m[f"d{p}_peak_s"] = peak
        # The last third: zero where nothing arrived.
        bins = range(math.ceil(lo_end), math.floor(run["duration"]))
        if bins:
            end = sum(total.get(t, 0.0) for t in bins) / len(bins) / 1e3
            m[f"d{p}_end_kbps"] = end
            end_total += end
    m["end_kbps"] = end_total
    return m


def _deadline_metrics(s, o):
    """Sections, over the whole flow: bytes offered, delivered on time,
    late, reported as gaps (TLTCP), and never delivered at all (abandoned
    or lost)."""
    m = {"on_time_bytes": s["on_time_bytes"]}
    if "late_bytes" in s:
        m["late_bytes"] = s["late_bytes"]
    if "gap_bytes" in s:
        m["gap_bytes"] = s["gap_bytes"]
    if o.get("bytes_offered") and "late_bytes" in s:
        m["undelivered_bytes"] = max(0, o["bytes_offered"] -
                                     s["on_time_bytes"] - s["late_bytes"])
    return m


def _tfrc_metrics(exp, flow, snd, rcv, t0):
    """DCP paper: F = T_calculated / T_actual over windows of
    `dcp_window` seconds; T_calculated from the sender's RTT and loss
    event rate, T_actual the packets the receiver got."""
    ivs = [iv for iv in snd["intervals"] if "p" in iv]
    if not ivs:
        return {}
    win = float(exp.get("dcp_window", 6))
    size = flow.get("len", 1000)
    soff, roff = snd["epoch"] - t0, rcv["epoch"] - t0
    fs, out = [], {}
    k = 0
    while True:
        lo = flow["start"] + k * win
        hi = lo + win
        if hi > flow["stop"]:
            break
        k += 1
        w = [iv for iv in ivs if lo <= soff + iv["start"] < hi]
        got = sum(iv["bytes"] for iv in rcv["intervals"]
                  if lo <= roff + iv["start"] < hi)
        if not w or not got:
            continue
        p = sum(iv["p"] for iv in w) / len(w)
        rtt = sum(iv["rtt_us"] for iv in w) / len(w) / 1e6
        if p <= 0 or rtt <= 0:
            continue
        fs.append((lo, metrics.dcp_friendliness(rtt, p,
                                                got / size / win)))
    out["x_kbps"] = sum(iv["x"] for iv in ivs) / len(ivs) / 1e3
    out["p"] = sum(iv["p"] for iv in ivs) / len(ivs)
    if fs:
        out["dcp_f"] = sum(f for _, f in fs) / len(fs)
        out["dcp_f_windows"] = fs
    return out


# Payload bytes in a full-sized TCP segment: a 1500-byte MTU less IP,
# TCP and the timestamp option.
TCP_PAYLOAD = 1448


def _payload(flow):
    """Payload bytes per packet of a flow (a TCP flow's is its mss if
    given), None where it varies (SCTP)."""
    if flow["transport"] in TCP_LIKE:
        return flow.get("mss") or TCP_PAYLOAD
    if flow["transport"] in ("dccp", "udp"):
        # flowgen's -l defaults
        return flow.get("len", 1000 if flow["transport"] == "dccp" else
                        TCP_PAYLOAD)
    return None


def run_metrics(run, flows, info):
    m = {}
    tps = {f["name"]: flows[f["name"]]["throughput_kbps"]
           for f in run["flows"]}
    rate = info["topology"]["info"].get("rate")
    if rate:
        m["utilisation"] = sum(tps.values()) * 1e3 / rate
    if len(tps) > 1 and any(tps.values()):
        m["jain"] = metrics.jain(tps.values())
        with contextlib.suppress(ValueError):
            m["separation"] = metrics.separation(tps.values())
    if run.get("baseline") and len(tps) > 1:
        # TLTCP paper, all-TCP baseline: F_worst and F_best (S_TCP is
        # the separation above).
        with contextlib.suppress(ValueError):
            m["f_worst"] = metrics.f_worst(tps.values())
            m["f_best"] = metrics.f_best(tps.values())
    ref = run.get("reference")
    if ref:
        tcp = [v for k, v in tps.items()
               if any(fnmatch.fnmatch(k, g) for g in ref)]
        other = [v for k, v in tps.items()
                 if not any(fnmatch.fnmatch(k, g) for g in ref)]
        if tcp and other:
            try:
                m["friendliness"] = metrics.friendliness(other, tcp)
            except ValueError:
                pass
            # The same in packets per second, where the flows' packets
            # differ in size (DCCP's 1000 bytes beside TCP's 1448):
            # TFRC's equation gives packets per second.
            size = {f["name"]: _payload(f) for f in run["flows"]}
            if all(size.values()) and len(set(size.values())) > 1:
                pkts = {k: v / size[k] for k, v in tps.items()}
                with contextlib.suppress(ValueError):
                    m["friendliness_pkts"] = metrics.friendliness(
                        [v for k, v in pkts.items()
                         if not any(fnmatch.fnmatch(k, g) for g in ref)],
                        [v for k, v in pkts.items()
                         if any(fnmatch.fnmatch(k, g) for g in ref)])
            m["reference_kbps"] = sum(tcp) / len(tcp)
            m["others_kbps"] = sum(other) / len(other)
            if run.get("weight"):
                # MulTFRC: the others' mean / (n x the reference mean).
                with contextlib.suppress(ValueError):
                    m["normalized"] = metrics.normalized_throughput(
                        m["others_kbps"], float(run["weight"]), tcp)
    return m


# Seconds of each loss phase that the smoothness metric leaves out: the
# change of rate that follows a step is responsiveness, not jitter.
SETTLE = 2.0
# Bins of the aggregate's smoothness (seconds).
COV_BIN = 0.5


def aggregate_metrics(exp, run, flows, info, d):
    """The run's flows taken as one: throughput (agg_kbps) and the
    coefficient of variation of its COV_BIN-second throughput
    (agg_cov), the mean over the loss phases that loss_steps make (one
    phase without), each after its first SETTLE seconds (the first
    after the warm-up); with loss_steps also the mean throughput and the
    coefficient of variation in each phase (agg_kbps_1, agg_cov_1,
    agg_kbps_2, ...).  With "equation", the MulTFRC equation for the
    flows as n parallel TCP flows, fed what they measured."""
    m = {"agg_kbps": sum(f["throughput_kbps"] for f in flows.values())}
    t0, total = info["t0"], {}
    for f in run["flows"]:
        rcv = _load_json(os.path.join(d, f"{f['name']}.rcv.json"))
        for t, r in zip(*_series(rcv, t0, COV_BIN, _hdr(exp, f))):
            total[t] = total.get(t, 0.0) + r
    start = min(f["start"] for f in run["flows"]) + run.get("warmup", 0)
    stop = min(f["stop"] for f in run["flows"])
    cuts = [start] + [at + SETTLE for at, _ in run.get("loss_steps", [])
                      if at + SETTLE > start] + [stop]
    covs = []
    for k, (lo, hi) in enumerate(zip(cuts, cuts[1:]), 1):
        xs = [r for t, r in total.items() if lo <= t and t + COV_BIN <= hi
              and not any(at <= t < at + SETTLE
                          for at, _ in run.get("loss_steps", []))]
        if run.get("loss_steps") and xs:
            # Responsiveness: the aggregate's mean in each loss phase.
            m[f"agg_kbps_{k}"] = sum(xs) / len(xs) / 1e3
        if len(xs) >= 3:
            with contextlib.suppress(ValueError):
                covs.append(metrics.cov(xs))
                if run.get("loss_steps"):
                    # Smoothness under each loss rate on its own: the
                    # mean mixes a steady phase with one of timeouts.
                    m[f"agg_cov_{k}"] = covs[-1]
    if covs:
        m["agg_cov"] = sum(covs) / len(covs)
    if run.get("equation"):
        m.update(equation_metrics(run, info, d))
    return m


def equation_metrics(run, info, d):
    """The paper's Fig. 1-2: n parallel TCP flows' aggregate against the
    MulTFRC equation fed with what they measured after the warm-up: the
    loss rate p_r (retransmitted / sent segments, TCP_INFO), the loss
    event rate p_e of the aggregate (retransmissions within one mean RTT
    of an event's first are one event; the senders' samples, every
    report interval, are the time resolution), j = p_r / p_e (losses per
    event, as the paper's [5] approximates it), the mean smoothed RTT,
    and Linux's RTO, srtt + max(4 rttvar, 200 ms).  Keys: eq_kbps,
    eq_ratio (equation / measured), p_e, p_r, j, eq_rtt_ms."""
    samples, sent, rtts, rttvars, seg = [], 0, [], [], []
    t0, warm = info["t0"], run.get("warmup", 0)
    for f in run["flows"]:
        snd = _load_json(os.path.join(d, f"{f['name']}.snd.json"))
        if not snd:
            continue
        off = snd["epoch"] - t0
        # Intervals without a TCP_INFO sample carry zeros: skip them.
        ivs = [iv for iv in snd["intervals"] if iv.get("rtt_us")
               and off + iv["start"] + iv["seconds"] >= f["start"] + warm
               and off + iv["start"] < f["stop"]]
        for a, b in zip(ivs, ivs[1:]):
            samples.append((off + b["start"] + b["seconds"],
                            b["retransmits"] - a["retransmits"]))
            sent += b["segs_out"] - a["segs_out"]
        rtts += [iv["rtt_us"] / 1e6 for iv in ivs]
        rttvars += [iv.get("rttvar_us", 0) / 1e6 for iv in ivs]
        seg.append(f.get("mss", 1448))
    if not rtts or sent <= 0:
        return {}
    rtt = sum(rtts) / len(rtts)
    rto = rtt + max(4 * sum(rttvars) / len(rttvars), 0.2)
    events, lost = metrics.loss_events(sorted(samples), rtt)
    m = {"eq_rtt_ms": rtt * 1e3, "p_r": lost / sent, "p_e": events / sent}
    if not events or m["p_e"] >= 1:
        return m
    m["j"] = lost / events
    n = len(run["flows"])
    x = metrics.multfrc_rate(n, m["p_e"], m["j"], rtt, rto,
                             s=sum(seg) / len(seg))
    m["eq_kbps"] = x * 8 / 1e3
    return m


def analyze_one(exp, run, d):
    """One run's (one repetition's) metrics from its directory d:
    {"flows", "run", "failed", "kernel"}, or None without a result."""
    info = _load_json(os.path.join(d, "run.json"))
    if not info:
        return None
    flows = {f["name"]: flow_metrics(exp, info, f, d)
             for f in run["flows"]}
    rm = run_metrics(run, flows, info)
    rm.update(aggregate_metrics(exp, run, flows, info, d))
    if exp.get("sinks"):
        rm.update(sink_metrics(exp, run, flows, info, d))
    if rm.get("eq_kbps") and rm["agg_kbps"]:
        rm["eq_ratio"] = rm["eq_kbps"] / rm["agg_kbps"]
    return {"flows": flows, "run": rm,
            "failed": info["failed"], "kernel": info["kernel"]}


def _mean_ci(dicts):
    """Metrics of several repetitions taken as one: ({metric: the mean
    over the repetitions that have a number for it}, {metric: the
    half-width of its 95 % confidence interval, where two or more
    have}).  Other values (lists, None) are the first repetition's
    that has one."""
    means, hs = {}, {}
    for k in dict.fromkeys(k for m in dicts for k in m):
        xs = [m[k] for m in dicts if _number(m.get(k))]
        if not xs:
            means[k] = next(m[k] for m in dicts if k in m)
            continue
        if len(xs) == 1:
            means[k] = xs[0]
            continue
        means[k], hs[k] = metrics.confidence_interval(xs)
    return means, hs


def combine_repetitions(run, reps):
    """A repeated run's result from its repetitions' (analyze_one, None
    for one without a result): "flows" and "run" hold the means, "ci"
    the half-widths of their 95 % confidence intervals (Student's t),
    "repetitions" each one's own, "n" how many had a result; a
    repetition that failed or left no result fails the run."""
    got = [r for r in reps if r]
    if not got:
        return {"missing": True}
    failed = []
    for k, r in enumerate(reps, 1):
        if r is None:
            failed.append(f"repetition {k}: no result")
        else:
            failed += [f"repetition {k}: {x}" for x in r["failed"]]
    flows, cflows = {}, {}
    for f in run["flows"]:
        flows[f["name"]], cflows[f["name"]] = _mean_ci(
            [r["flows"].get(f["name"], {}) for r in got])
    rm, crm = _mean_ci([r["run"] for r in got])
    return {"flows": flows, "run": rm, "ci": {"flows": cflows, "run": crm},
            "n": len(got), "failed": failed, "kernel": got[0]["kernel"],
            "repetitions": [r or {"missing": True} for r in reps]}


def analyze(out):
    exp = _load_json(os.path.join(out, "experiment.json"))
    if not exp:
        raise SpecError(f"{out}: no experiment.json (run it first)")
    res = {"runs": {}}
    for run in exp["runs"]:
        reps = [analyze_one(exp, run, os.path.join(out, _rep_dir(
            run["name"], k))) for k in range(1, _repeat(run) + 1)]
        if len(reps) > 1:
            res["runs"][run["name"]] = combine_repetitions(run, reps)
        else:
            res["runs"][run["name"]] = reps[0] or {"missing": True}
    with open(os.path.join(out, "metrics.json"), "w") as f:
        json.dump(res, f, indent=1)
    plots = draw(exp, out, res)
    checks = evaluate(exp, res)
    write_report(exp, res, plots, checks, out)
    return exp["name"], checks


def print_checks(name, checks):
    """The checks as TAP; True if all passed."""
    print(f"TAP version 13\n1..{len(checks)}")
    for i, (ok, text) in enumerate(checks, 1):
        print(f"{'ok' if ok else 'not ok'} {i} {name}: {text}")
    return all(ok for ok, _ in checks)


def lookup(res, run, flow, metric):
    r = res["runs"].get(run)
    if not r or r.get("missing"):
        return None
    src = r["flows"].get(flow) if flow else r["run"]
    return None if src is None else src.get(metric)


def lookup_ci(res, run, flow, metric):
    """The half-width of a repeated run's metric's 95 % confidence
    interval; None for a run that ran once."""
    r = res["runs"].get(run)
    if not r or "ci" not in r:
        return None
    src = r["ci"]["flows"].get(flow) if flow else r["ci"]["run"]
    return None if src is None else src.get(metric)


def evaluate(exp, res):
    checks = []
    for c in exp.get("check", []):
        if c.get("variant", exp["variant"]) != exp["variant"]:
            continue
        v = lookup(res, c["run"], c.get("flow"), c["metric"])
        what = f"{c['run']}{'/' + c['flow'] if c.get('flow') else ''} " \
               f"{c['metric']}"
        if "over" in c:
            # The ratio to the same metric of another run or flow.
            o = c["over"]
            w = lookup(res, o["run"], o.get("flow"),
                       o.get("metric", c["metric"]))
            v = v / w if v is not None and w else None
            what += f" / {o['run']}{'/' + o['flow'] if o.get('flow') else ''}"
            if o.get("metric", c["metric"]) != c["metric"]:
                what += f" {o['metric']}"
        lo, hi = c.get("min", -math.inf), c.get("max", math.inf)
        ok = v is not None and lo <= v <= hi
        bound = f"in [{lo:g}, {hi:g}]".replace("-inf", "").replace(
            "inf", "")
        vs = "missing" if v is None else f"{v:.4g}"
        n = res["runs"].get(c["run"], {}).get("n", 1)
        if v is not None and n > 1:
            vs += f" (mean of {n})"
        checks.append((ok, f"{what} = {vs} {bound}"
                       + (f" ({c['why']})" if c.get("why") else "")))
    for name, r in res["runs"].items():
        if r.get("missing") or r.get("failed"):
            checks.append((False, f"{name}: every flow ran "
                           f"({'no result' if r.get('missing') else '; '.join(r['failed'])})"))
    return checks


# ------------------------------------------------------------- plots --

def metric_lines(p, res):
    """A [[plot]] of kind "metric": one line per entry of p["lines"], the
    run metric (or, with "flow", the flow metric) of the run for each x of
    p["x"]: line["run"].format(x=x), or the matching entry of the list
    line["runs"].  Runs without a value leave a hole.  Returns
    [(label, (xs, ys))]."""
    out = []
    for line in p.get("lines", []):
        xs, ys = [], []
        names = line.get("runs") or [line["run"].format(x=_fmt_value(x))
                                     for x in p["x"]]
        for x, name in zip(p["x"], names):
            v = lookup(res, name, line.get("flow"), line["metric"])
            if v is not None:
                xs.append(x)
                ys.append(v)
        if xs:
            out.append((line["label"], (xs, ys)))
    return out


def draw(exp, out, res=None):
    """One throughput-over-time figure per run, plus the experiment's own
    [[plot]] figures.  Returns the files written."""
    os.environ.setdefault("MPLCONFIGDIR", "/tmp/matplotlib")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing (make deps): no plots")
        return []
    files = []
    infos = {r["name"]: _load_json(os.path.join(out, r["name"], "run.json"))
             for r in exp["runs"]}

    def series(run, flow, kind):
        info = infos.get(run["name"])
        if not info:
            return [], []
        d = os.path.join(out, run["name"])
        if kind == "seq":
            rcv = _load_json(os.path.join(d, f"{flow['name']}.rcv.json"))
            tr = seq_trace(os.path.join(d, f"{flow['name']}.seq.csv"), rcv,
                           info["t0"])
            return [t for t, _, _ in tr], [o / SEQ_PACKET for _, o, _ in tr]
        if kind == "dcp_f":
            m = flow_metrics(exp, info, flow, d)
            return ([t for t, _ in m.get("dcp_f_windows", [])],
                    [f for _, f in m.get("dcp_f_windows", [])])
        rcv = _load_json(os.path.join(d, f"{flow['name']}.rcv.json"))
        ts, rs = _series(rcv, info["t0"], hdr=_hdr(exp, flow))
        return ts, [r / 1e3 for r in rs]

    def sinks(run):
        """{"d<pair>": (times, kbit/s)}: each receiver node's flows
        summed."""
        out = {}
        for f in run["flows"]:
            total = out.setdefault(f"d{f['pair']}", {})
            for t, r in zip(*series(run, f, "throughput")):
                total[t] = total.get(t, 0.0) + r
        return {k: (sorted(v), [v[t] for t in sorted(v)])
                for k, v in out.items()}

    def figure(fname, title, lines, kind, p=None):
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for label, (ts, ys) in lines:
            ax.plot(ts, ys, label=label, linewidth=1,
                    marker="o" if kind in ("dcp_f", "metric") else None,
                    markersize=3)
        ax.set_xlabel((p or {}).get("xlabel", "time (s)"))
        ax.set_ylabel((p or {}).get("ylabel") or {
            "dcp_f": "F = T_calc / T_actual",
            "sinks": "throughput at the sink (kbit/s)",
            "seq": f"stream offset (packets of {SEQ_PACKET} B)"}
            .get(kind, "throughput at the receiver (kbit/s)"))
        if (p or {}).get("xlog"):
            ax.set_xscale("log")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, fname), dpi=100)
        plt.close(fig)
        files.append(fname)

    for run in exp["runs"]:
        # With "sinks", the throughput at each receiver node.
        lines = sorted(sinks(run).items()) if exp.get("sinks") else \
            [(f["name"], series(run, f, "throughput"))
             for f in run["flows"]]
        figure(f"{run['name']}.png", f"{exp['name']}: {run['name']}",
               lines, "throughput")
    for p in exp.get("plot", []):
        if p.get("kind") == "metric":
            lines = metric_lines(p, res) if res else []
            if lines:
                figure(p["file"], p["title"], lines, "metric", p)
            continue
        lines = []
        for run in exp["runs"]:
            globs = p["runs"] if isinstance(p["runs"], list) \
                else [p["runs"]]
            if not any(fnmatch.fnmatch(run["name"], g) for g in globs):
                continue
            if p.get("kind") == "sinks":
                for sink, ser in sorted(sinks(run).items()):
                    if fnmatch.fnmatch(sink, p.get("flows", "*")):
                        lines.append((p.get("label", "{run} {sink}").format(
                            run=run["name"], sink=sink), ser))
                continue
            for f in run["flows"]:
                if fnmatch.fnmatch(f["name"], p.get("flows", "*")):
                    label = p.get("label", "{run}/{flow}").format(
                        run=run["name"], flow=f["name"])
                    lines.append((label, series(run, f,
                                                p.get("kind", "throughput"))))
        if lines:
            figure(p["file"], p["title"], lines, p.get("kind", "throughput"))
    return files


# ------------------------------------------------------------ report --

def _fmt(v):
    if v is None:
        return "–"
    if isinstance(v, float):
        if v == 0:
            return "0"
        return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"
    return str(v)


def _fmt_ci(v, h):
    """A value, and with the half-width h of its confidence interval
    (a repeated run's) "mean ± h"."""
    return _fmt(v) if h is None or v is None else f"{_fmt(v)} ± {_fmt(h)}"


METRIC_NAMES = {
    "throughput_kbps": "throughput (kbit/s)",
    "steady_kbps": "last third (kbit/s)",
    "time_to_max_s": "time to 90 % of steady (s)",
    "cov": "CoV of 1 s throughput",
    "loss_pct": "loss / retransmitted (%)",
    "rtt_ms": "RTT (ms)",
    "delay_ms": "one-way delay (ms)",
    "jitter_ms": "jitter (ms)",
    "x_kbps": "TFRC X (kbit/s)",
    "p": "TFRC p",
    "dcp_f": "F = T_calc/T_actual",
    "on_time_pct": "bytes on time (%)",
    "sections_missing": "sections missing",
    "abandoned": "messages abandoned",
    "on_time_bytes": "bytes on time",
    "late_bytes": "bytes late",
    "gap_bytes": "bytes in gaps",
    "undelivered_bytes": "bytes never delivered",
    "abandoned_bytes": "bytes abandoned (TLTCP)",
    "obsolete_bytes": "obsolete bytes sent (TLTCP)",
    "unreported_bytes": "abandoned, no gap told",
    "tunnel_drop_pct": "dropped by the tunnel (%)",
    "tunnel_delivered": "delivered by the tunnel",
    "utilisation": "utilisation",
    "normalized": "normalized throughput",
    "agg_kbps": "aggregate (kbit/s)",
    "agg_cov": "CoV of the aggregate",
    "agg_kbps_1": "first loss phase (kbit/s)",
    "agg_kbps_2": "second loss phase (kbit/s)",
    "agg_kbps_3": "third loss phase (kbit/s)",
    "agg_cov_1": "CoV, first loss phase",
    "agg_cov_2": "CoV, second loss phase",
    "agg_cov_3": "CoV, third loss phase",
    "eq_kbps": "equation (kbit/s)",
    "eq_ratio": "equation / measured",
    "p_e": "loss event rate",
    "p_r": "loss rate",
    "j": "losses per event",
    "eq_rtt_ms": "RTT (ms)",
    "jain": "Jain",
    "friendliness": "F",
    "friendliness_pkts": "F in packets/s",
    "separation": "S",
    "f_worst": "F_worst",
    "f_best": "F_best",
    "end_kbps": "all sinks, last third (kbit/s)",
}
for _p in (1, 2):
    METRIC_NAMES.update({
        f"d{_p}_kbps": f"d{_p} (kbit/s)",
        f"d{_p}_delay_s": f"d{_p} one-way delay (s)",
        f"d{_p}_loss_pct": f"d{_p} loss (%)",
        f"d{_p}_peak_kbps": f"d{_p} peak (kbit/s)",
        f"d{_p}_peak_s": f"d{_p} peak at (s)",
        f"d{_p}_end_kbps": f"d{_p} last third (kbit/s)"})


def write_report(exp, res, plots, checks, out):
    kernels = sorted({r.get("kernel") for r in res["runs"].values()
                      if r.get("kernel")})
    L = [f"# {exp.get('title', exp['name'])}", ""]
    if exp.get("about"):
        L += [exp["about"].strip(), ""]
    L += [f"Variant: {exp['variant']}; kernel {', '.join(kernels)}; "
          f"produced by `make experiment NAME={exp['name']}"
          f"{' SHORT=1' if exp['variant'] == 'short' else ''}`.", ""]
    for t in exp.get("table", []):
        rows = [row for row in t["rows"] if row["run"] in res["runs"]]
        if not rows:
            continue
        cols = t["metrics"]
        L += [f"## {t['title']}", "",
              "Each cell: ours / paper.", "",
              "| | " + " | ".join(METRIC_NAMES.get(c, c) for c in cols)
              + " |", "|---" * (len(cols) + 1) + "|"]
        for row in rows:
            # A row may give the paper's values for its first columns
            # only: the others are "–", and every column is shown.
            paper = list(row.get("paper", [])) + [None] * len(cols)
            cells = []
            for c, pv in zip(cols, paper):
                ours = lookup(res, row["run"], row.get("flow"), c)
                h = lookup_ci(res, row["run"], row.get("flow"), c)
                cells.append(f"{_fmt_ci(ours, h)} / {_fmt(pv)}")
            L.append(f"| {row['label']} | " + " | ".join(cells) + " |")
        if t.get("note"):
            L += ["", t["note"].strip()]
        L.append("")
    L += ["## Every run", ""]
    repeated = [f"{name} ({r['n']} of {len(r['repetitions'])})"
                for name, r in res["runs"].items() if "repetitions" in r]
    if repeated:
        L += ["Repeated runs (repetitions with a result of those run): "
              + ", ".join(repeated) + ". Their values are the mean over "
              "the repetitions ± the half-width of its 95 % confidence "
              "interval (Student's t); the figures show the first.", ""]
    fkeys = [k for k in METRIC_NAMES if any(
        k in fm for r in res["runs"].values() if not r.get("missing")
        for fm in r["flows"].values())]
    L += ["| run | flow | " + " | ".join(METRIC_NAMES[k] for k in fkeys)
          + " |", "|---" * (len(fkeys) + 2) + "|"]
    for name, r in res["runs"].items():
        if r.get("missing"):
            L.append(f"| {name} | (no result) |")
            continue
        ci = r.get("ci", {"flows": {}, "run": {}})
        for fname, fm in r["flows"].items():
            h = ci["flows"].get(fname, {})
            L.append(f"| {name} | {fname} | "
                     + " | ".join(_fmt_ci(fm.get(k), h.get(k))
                                  for k in fkeys) + " |")
        if r["run"]:
            L.append(f"| {name} | (run) | " + ", ".join(
                f"{METRIC_NAMES.get(k, k)} {_fmt_ci(v, ci['run'].get(k))}"
                for k, v in r["run"].items()) + " |" + " |" * (len(fkeys) - 1))
    L.append("")
    if plots:
        L += ["## Figures", ""] + [f"![{p}]({p})" for p in plots] + [""]
    if checks:
        L += ["## Checks", ""] + [f"- {'ok' if ok else 'FAILED'}: {t}"
                                  for ok, t in checks] + [""]
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(L))


# ----------------------------------------------------------- command --

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run an experiment (in the guest)")
    r.add_argument("name")
    r.add_argument("--short", action="store_true",
                   help="the short variant, as make check runs it")
    r.add_argument("--out", help="results directory "
                   "(default results/<name>[-short])")
    r.add_argument("--only", help="only the runs matching this glob; "
                   "the others' results in --out stay and are analyzed")
    r.add_argument("--duration", type=float,
                   help="seconds per run, instead of the description's")
    a = sub.add_parser("analyze", help="metrics, plots and report")
    a.add_argument("dir")
    ls = sub.add_parser("list", help="the experiments")
    ls.add_argument("--name", help="only this one (an error if unknown)")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "list":
            paths = sorted(glob.glob(os.path.join(EXPERIMENTS, "*.toml")))
            if args.name:
                paths = [p for p in paths if os.path.basename(p) ==
                         f"{args.name}.toml"]
                if not paths:
                    raise SpecError(f"no experiment {args.name!r} in "
                                    f"{EXPERIMENTS}")
            for p in paths:
                e = load(p)
                n = e["name"]
                # Each repetition is a run.
                runs = sum(_repeat(r) for r in e["runs"])
                total = sum(r["duration"] * _repeat(r) for r in e["runs"])
                print(f"{n}: {e.get('title', '')} ({runs} runs, "
                      f"{total:.0f} s of flows)")
            return 0
        if args.cmd == "analyze":
            return 0 if print_checks(*analyze(args.dir)) else 1
        exp = load(args.name, args.short, args.duration)
        out = args.out or os.path.join(
            REPO, "results", exp["name"] + ("-short" if args.short else ""))
        ran = run_all(exp, out, args.only)
        ok = print_checks(*analyze(out))
        log(f"results in {out}/README.md")
        return 0 if ran and ok else 1
    except (SpecError, RuntimeError, subprocess.CalledProcessError) as e:
        print(f"experiment: {e}", file=sys.stderr)
        return 2
