# SPDX-License-Identifier: GPL-2.0
"""The experiment's result: metrics.json and metrics.csv, the figures,
the checks (TAP) and README.md with our figures beside the paper's
(analyze)."""

import csv
import json
import math
import os

from lab.experiment.analysis import (
    analyze_one, combine_repetitions, lookup, lookup_ci)
from lab.experiment.plots import draw
from lab.experiment.spec import SpecError, rep_dir, repeats
from lab.reports import load_json


def analyze(out):
    exp = load_json(os.path.join(out, "experiment.json"))
    if not exp:
        raise SpecError(f"{out}: no experiment.json (run it first)")
    res = {"runs": {}}
    for run in exp["runs"]:
        reps = [analyze_one(exp, run, os.path.join(out, rep_dir(
            run["name"], k))) for k in range(1, repeats(run) + 1)]
        if len(reps) > 1:
            res["runs"][run["name"]] = combine_repetitions(run, reps)
        else:
            res["runs"][run["name"]] = reps[0] or {"missing": True}
    with open(os.path.join(out, "metrics.json"), "w") as f:
        json.dump(res, f, indent=1)
    write_csv(res, os.path.join(out, "metrics.csv"))
    plots = draw(exp, out, res)
    checks = evaluate(exp, res)
    write_report(exp, res, plots, checks, out)
    return exp["name"], checks


def csv_rows(res):
    """metrics.json in long format, one number a row: (run, flow, metric,
    value); flow is empty for a run's own metrics, a metric nested deeper
    is named by its dotted path."""
    rows = []

    def walk(run, flow, path, v):
        if isinstance(v, bool) or v is None:
            return
        if isinstance(v, (int, float)):
            rows.append((run, flow, ".".join(path), v))
        elif isinstance(v, dict):
            for k, w in v.items():
                walk(run, flow, path + [str(k)], w)
        elif isinstance(v, list):
            for i, w in enumerate(v):
                walk(run, flow, path + [str(i)], w)

    for run, m in res["runs"].items():
        for k, v in m.items():
            if k == "flows" and isinstance(v, dict):
                for flow, fm in v.items():
                    walk(run, flow, [], fm)
            else:
                walk(run, "", [k], v)
    return rows


def write_csv(res, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("run", "flow", "metric", "value"))
        w.writerows(csv_rows(res))


def print_checks(name, checks):
    """The checks as TAP; True if all passed."""
    print(f"TAP version 13\n1..{len(checks)}")
    for i, (ok, text) in enumerate(checks, 1):
        print(f"{'ok' if ok else 'not ok'} {i} {name}: {text}")
    return all(ok for ok, _ in checks)


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
            why = "no result" if r.get("missing") else \
                "; ".join(r["failed"])
            checks.append((False, f"{name}: every flow ran ({why})"))
    return checks


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
    "delivered_bytes": "bytes delivered",
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


def _paper_table(t, res):
    """A [[table]]: our values beside the paper's, a row per run."""
    rows = [row for row in t["rows"] if row["run"] in res["runs"]]
    if not rows:
        return []
    cols = t["metrics"]
    L = [f"## {t['title']}", "", "Each cell: ours / paper.", "",
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
    return L + [""]


def _run_rows(name, r, fkeys):
    """A run's rows of the table of every run: one per flow, then its
    run metrics in one cell."""
    if r.get("missing"):
        return [f"| {name} | (no result) |"]
    ci = r.get("ci", {"flows": {}, "run": {}})
    L = []
    for fname, fm in r["flows"].items():
        h = ci["flows"].get(fname, {})
        L.append(f"| {name} | {fname} | "
                 + " | ".join(_fmt_ci(fm.get(k), h.get(k))
                              for k in fkeys) + " |")
    if r["run"]:
        L.append(f"| {name} | (run) | " + ", ".join(
            f"{METRIC_NAMES.get(k, k)} {_fmt_ci(v, ci['run'].get(k))}"
            for k, v in r["run"].items()) + " |" + " |" * (len(fkeys) - 1))
    return L


def _every_run(res):
    """The table of every run's flow metrics (and run metrics)."""
    L = ["## Every run", ""]
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
        L += _run_rows(name, r, fkeys)
    return L + [""]


def write_report(exp, res, plots, checks, out):
    """out/README.md: the experiment, its tables beside the paper's,
    every run, the figures and the checks."""
    kernels = sorted({r.get("kernel") for r in res["runs"].values()
                      if r.get("kernel")})
    L = [f"# {exp.get('title', exp['name'])}", ""]
    if exp.get("about"):
        L += [exp["about"].strip(), ""]
    L += [f"Variant: {exp['variant']}; kernel {', '.join(kernels)}; "
          f"produced by `make experiment NAME={exp['name']}"
          f"{' SHORT=1' if exp['variant'] == 'short' else ''}`.", ""]
    for t in exp.get("table", []):
        L += _paper_table(t, res)
    L += _every_run(res)
    if plots:
        L += ["## Figures", ""] + [f"![{p}]({p})" for p in plots] + [""]
    if checks:
        L += ["## Checks", ""] + [f"- {'ok' if ok else 'FAILED'}: {t}"
                                  for ok, t in checks] + [""]
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(L))
