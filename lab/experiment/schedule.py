# SPDX-License-Identifier: GPL-2.0
"""Which runs share the guest at once, in what order, and running them
all: module parameters are global, so runs with different settings of a
module take turns; a run that records the tcp_probe tracepoint runs alone
(tracing is global too); a repeated run's repetitions run in turn."""

import fnmatch
import json
import os
import subprocess
import threading
import time

from lab import transports
from lab.experiment.progress import Progress
from lab.experiment.run import run_one
from lab.experiment.spec import SpecError, log, rep_dir, repeats
from lab.tools.flowgen import FLOWGEN
from lab.tools.tsm import TSM


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
    """Run the experiment's runs (those matching only, if given: globs
    separated by commas; the other runs' results stay) into out."""
    if not os.access(FLOWGEN, os.X_OK):
        raise SpecError(f"{FLOWGEN} not built (make tools)")
    if any(r.get("tunnel") for r in exp["runs"]) and \
            not os.access(TSM, os.X_OK):
        raise SpecError(f"{TSM} not built (make tools)")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "experiment.json"), "w") as f:
        json.dump(exp, f, indent=1)
    todo = dict(exp, runs=[r for r in exp["runs"]
                           if not only or
                           any(fnmatch.fnmatch(r["name"], g)
                               for g in only.split(","))])
    if not todo["runs"]:
        raise SpecError(f"no run matches {only}")
    # On a kernel without DCCP (Linux 6.16 on) a run that needs it cannot
    # run: refused before anything starts.  socket() does not load DCCP's
    # modules: modprobe first.
    dccp_runs = [r["name"] for r in todo["runs"] if transports.needs_dccp(r)]
    if dccp_runs:
        for mod in ("dccp_ipv4", "dccp_ipv6"):
            subprocess.run(["modprobe", "-q", mod])
    missing = transports.dccp_missing()
    if missing and dccp_runs:
        raise SpecError(f"{exp['name']}: DCCP is not in this kernel "
                        f"({missing}; Linux removed it in 6.16), and "
                        f"{len(dccp_runs)} of the runs need it "
                        f"({', '.join(dccp_runs[:3])}"
                        f"{', ...' if len(dccp_runs) > 3 else ''}): "
                        "run it on a kernel with DCCP (6.1, 6.12)")
    batches = list(_batches(todo))
    progress = Progress([max(r["duration"] * repeats(r) for r in b)
                         for b in batches])
    saved, status, ok = {}, {}, True
    start = time.time()
    for mod in exp.get("modprobe", []):
        if not (missing and mod.startswith("dccp")):
            subprocess.run(["modprobe", mod], check=True)
    try:
        for k, batch in enumerate(batches, 1):
            for r in batch:
                _set_modules(r["modules"], saved)
            names = ", ".join(r["name"] + (f" x{repeats(r)}"
                                           if repeats(r) > 1 else "")
                              for r in batch)
            longest = max(r["duration"] for r in batch)
            total = max(r["duration"] * repeats(r) for r in batch)
            log(f"[{k}/{len(batches)}] {names} ({total:g} s)")
            results = {}
            threads = [threading.Thread(
                target=lambda r=r: results.__setitem__(
                    r["name"], _repeated(exp, r, out, status)))
                for r in batch]
            t_batch = last = time.time()
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                time.sleep(1)
                if time.time() - last >= 30 and status:
                    last = time.time()
                    t0 = min(status.values())
                    log(f"[{k}/{len(batches)}] {time.time() - t0:.0f}/"
                        f"{longest:g} s; "
                        f"{progress.line(last - t_batch)}")
            progress.finish(time.time() - t_batch)
            if k < len(batches):
                log(progress.line(0))
            ok &= all(results.get(r["name"]) for r in batch)
    finally:
        _restore_modules(saved)
    log(f"{sum(repeats(r) for r in todo['runs'])} runs in "
        f"{time.time() - start:.0f} s")
    return ok


def _repeated(exp, run, out, status):
    """The run's repetitions one after another (a failed one does not
    stop the others); True if every one succeeded."""
    ok, n = True, repeats(run)
    for k in range(1, n + 1):
        if n > 1:
            log(f"{rep_dir(run['name'], k)}: repetition {k} of {n}")
        ok = _guarded(rep_dir(run["name"], k), run_one, exp, run, out,
                      status, k) and ok
        status.pop(rep_dir(run["name"], k), None)
    return ok


def _guarded(label, fn, *args):
    try:
        return fn(*args)
    except Exception as e:      # one run's failure must not hang the rest
        log(f"{label}: {type(e).__name__}: {e}")
        return False
