# SPDX-License-Identifier: GPL-2.0
"""An experiment's description (experiments/<name>.toml): loading it,
checking it, and expanding it into runs and flows (load).  The vocabulary
the other modules share is here too: a run's repetitions and their
directories, a flow's warm-up, the ports a run's flows use."""

import os
import sys

try:
    import tomllib
except ImportError:             # Python < 3.11
    import tomli as tomllib

from lab import REPO
from lab import transports
from lab.transports import TUNNEL_TRANSPORTS


EXPERIMENTS = os.path.join(REPO, "experiments")
BASE_PORT = 5301
# A tunnelled flow i: the tunnel's connection to TUNNEL_PORT + i on the
# receiver's node, its entry for the application's datagrams at
# 127.0.0.1:ENTRY_PORT + i on the sender's.
TUNNEL_PORT = 6301
ENTRY_PORT = 7301
FLOW_KEYS = {"name", "pair", "transport", "cc", "ccid", "mss", "rate",
             "len", "start", "stop", "count", "lifetime_ms", "on_off",
             "sections", "ahead", "arrival", "window", "trace", "ramp", "warmup"}
RUN_KEYS = {"name", "vary", "group", "modules", "topology", "flows",
            "duration", "warmup", "reference", "about", "baseline",
            "weight", "loss_steps", "equation", "tunnel", "repeat",
            "capture"}
# What a run may record besides its flows' reports (capture = {...}).
CAPTURE_KEYS = ("ss", "tcp_probe", "pcap")
# Bytes of each packet the bottleneck's pcap keeps (the headers).
PCAP_SNAPLEN = 128


class SpecError(ValueError):
    pass


def log(msg):
    print(f"experiment: {msg}", file=sys.stderr, flush=True)


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
            value = value.replace(ph, fmt_value(x))
        return value
    if isinstance(value, list):
        return [_subst(x, v) for x in value]
    if isinstance(value, dict):
        return {k: _subst(x, v) for k, x in value.items()}
    return value


def fmt_value(x):
    """A vary value inside a string: 0.5, 62.5, 10 (not 10.0)."""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def _read(name):
    """The TOML of the experiment NAME (a name in experiments/ or a
    path) and its name."""
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
    return exp


def _variant(exp, short, duration):
    """What the variant sets for every run: {"duration", "warmup",
    "repeat"} defaults, and duration (seconds), if given, for all."""
    defaults, shortcfg = exp.get("defaults", {}), exp.get("short", {})
    if short and not shortcfg.get("runs"):
        raise SpecError(f"{exp['name']}: no short variant ([short] runs)")
    # How often each run runs: the experiment's, the short variant's.
    v = {"repeat": _check_repeat(exp.get("repeat", 1), "repeat"),
         "duration": defaults.get("duration", 60),
         # Seconds at each flow's start its throughput leaves out.
         "warmup": defaults.get("warmup", 0), "force_duration": duration}
    if short:
        v["repeat"] = _check_repeat(shortcfg.get("repeat", v["repeat"]),
                                    "[short] repeat")
        v["warmup"] = shortcfg.get("warmup", v["warmup"])
        v["short_duration"] = shortcfg.get("duration")
    return v


def _expand(exp, spec, v, variant):
    """One run of the [[run]] entry spec, for its vary value v."""
    r = _subst({k: x for k, x in spec.items() if k != "vary"}, v) \
        if v is not None else dict(spec)
    r["topology"] = {**exp.get("topology", {}), **r.get("topology", {})}
    r["duration"] = float(r.get("duration", variant["duration"]))
    if variant.get("short_duration") is not None:
        r["duration"] = float(variant["short_duration"])
    if variant["force_duration"]:
        r["duration"] = float(variant["force_duration"])
    # The run's own warm-up, or the variant's default.
    r["warmup"] = float(r.get("warmup", variant["warmup"]))
    r["repeat"] = _check_repeat(r.get("repeat", variant["repeat"]),
                                f"run {r['name']}: repeat")
    if "@" in str(r["name"]):
        # <run>@2/ is the second repetition's directory.
        raise SpecError(f"run {r['name']}: '@' in a run's name")
    r.setdefault("group", r["name"])
    r.setdefault("modules", {})
    defaults = exp.get("defaults", {})
    _check_steps(r)
    _check_tunnel(r)
    _check_capture(r, defaults)
    r["flows"] = [_flow(r, i, f, defaults)
                  for i, f in enumerate(_counted(r))]
    if not r["flows"]:
        raise SpecError(f"run {r['name']}: no flows")
    return r


def _runs(exp, variant):
    """Every run of the experiment, each vary value expanded."""
    runs = []
    for spec in exp.get("run", []):
        unknown = set(spec) - RUN_KEYS
        if unknown:
            raise SpecError(f"run {spec.get('name')}: unknown keys "
                            f"{sorted(unknown)}")
        runs += [_expand(exp, spec, v, variant)
                 for v in spec.get("vary", [None])]
    names = [r["name"] for r in runs]
    if len(set(names)) != len(names):
        raise SpecError("run names repeat")
    return runs


def load(name, short=False, duration=None):
    """The experiment NAME (a name in experiments/ or a path),
    expanded: one entry per run, with its topology, flows and modules
    complete.  short picks the short variant; duration (seconds), if
    given, replaces every run's."""
    exp = _read(name)
    exp["variant"] = "short" if short else "full"
    shortcfg = exp.get("short", {})
    runs = _runs(exp, _variant(exp, short, duration))
    missing = [w for w in shortcfg.get("runs", [])
               if w not in {r["name"] for r in runs}]
    if missing:
        raise SpecError(f"[short] runs: no run {missing}")
    if short:
        runs = [r for r in runs if r["name"] in shortcfg["runs"]]
    exp["runs"] = runs
    exp["interval"] = float(exp.get("defaults", {}).get("interval", 1.0))
    for r in runs:
        for f in r["flows"]:
            if f["stop"] - f["start"] - flow_warmup(r, f) < 1:
                raise SpecError(f"run {r['name']} flow {f['name']}: "
                                "less than 1 s after the warm-up")
    exp["parallel"] = int(shortcfg.get("parallel", exp.get("parallel", 1))
                          if short else exp.get("parallel", 1))
    return exp


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _check_repeat(n, what):
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise SpecError(f"{what} {n!r}: a whole number >= 1")
    return n


def repeats(run):
    """How many times the run runs (1 in descriptions from before
    repeat)."""
    return int(run.get("repeat", 1))


def rep_dir(name, k):
    """Repetition k's directory: the run's name for the first, so that
    a repeated run's first results are where an unrepeated run's are."""
    return name if k == 1 else f"{name}@{k}"


def flow_warmup(run, flow):
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
        if not is_number(ss) or ss <= 0:
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


def tunnelled(run, flow):
    return bool(run.get("tunnel")) and \
        transports.datagrams(flow["transport"])


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
        if not is_number(w) or w < 0:
            raise SpecError(f"run {run['name']} flow {flow['name']}: "
                            f"warmup {w!r}: seconds >= 0")
        flow["warmup"] = float(w)
    if "ramp" in flow and "rate" not in flow:
        raise SpecError(f"run {run['name']} flow {flow['name']}: ramp "
                        "raises a rate: give one")
    if not transports.tcp_like(flow["transport"]):
        flow.pop("mss", None)
        if "window" in flow:
            raise SpecError(f"run {run['name']} flow {flow['name']}: "
                            "window applies to TCP and TLTCP only")
    return flow
