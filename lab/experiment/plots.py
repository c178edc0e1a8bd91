# SPDX-License-Identifier: GPL-2.0
"""The figures: each run's throughput over time, and the experiment's own
[[plot]] figures (throughput, sinks, sequence traces, DCP's F, a metric
against a parameter).  Needs matplotlib; without it there are none."""

import fnmatch
import os

from lab.experiment.analysis import (
    flow_metrics, lookup, rate_series, seq_trace, wire_header)
from lab.experiment.spec import fmt_value, log
from lab.reports import load_json


# One packet of the paper's sequence plots (kind "seq").
SEQ_PACKET = 1500


def metric_lines(p, res):
    """A [[plot]] of kind "metric": one line per entry of p["lines"], the
    run metric (or, with "flow", the flow metric) of the run for each x of
    p["x"]: line["run"].format(x=x), or the matching entry of the list
    line["runs"].  Runs without a value leave a hole.  Returns
    [(label, (xs, ys))]."""
    out = []
    for line in p.get("lines", []):
        xs, ys = [], []
        names = line.get("runs") or [line["run"].format(x=fmt_value(x))
                                     for x in p["x"]]
        for x, name in zip(p["x"], names):
            v = lookup(res, name, line.get("flow"), line["metric"])
            if v is not None:
                xs.append(x)
                ys.append(v)
        if xs:
            out.append((line["label"], (xs, ys)))
    return out


def heatmap_cells(p, res):
    """A [[plot]] of kind "heatmap": the run metric (or, with "flow",
    the flow metric) of p["run"].format(x=x, y=y) for each y of p["y"]
    (rows) and x of p["x"] (columns); None where a run has none."""
    return [[lookup(res, p["run"].format(x=fmt_value(x), y=fmt_value(y)),
                    p.get("flow"), p["metric"]) for x in p["x"]]
            for y in p["y"]]


YLABELS = {
    "dcp_f": "F = T_calc / T_actual",
    "sinks": "throughput at the sink (kbit/s)",
    "seq": f"stream offset (packets of {SEQ_PACKET} B)"}


class _Figures:
    """The figures of one experiment's results in out (plt: pyplot)."""

    def __init__(self, exp, out, plt):
        self.exp, self.out, self.plt, self.files = exp, out, plt, []
        self.infos = {r["name"]: load_json(os.path.join(out, r["name"],
                                                        "run.json"))
                      for r in exp["runs"]}

    def series(self, run, flow, kind):
        """(times, values) of one flow of a run: its sequence trace, its
        DCP F windows or its throughput (kbit/s)."""
        info = self.infos.get(run["name"])
        if not info:
            return [], []
        d = os.path.join(self.out, run["name"])
        if kind == "seq":
            rcv = load_json(os.path.join(d, f"{flow['name']}.rcv.json"))
            tr = seq_trace(os.path.join(d, f"{flow['name']}.seq.csv"), rcv,
                           info["t0"])
            return [t for t, _, _ in tr], [o / SEQ_PACKET for _, o, _ in tr]
        if kind == "dcp_f":
            m = flow_metrics(self.exp, info, flow, d)
            return ([t for t, _ in m.get("dcp_f_windows", [])],
                    [f for _, f in m.get("dcp_f_windows", [])])
        rcv = load_json(os.path.join(d, f"{flow['name']}.rcv.json"))
        ts, rs = rate_series(rcv, info["t0"],
                             hdr=wire_header(self.exp, flow))
        return ts, [r / 1e3 for r in rs]

    def sinks(self, run):
        """{"d<pair>": (times, kbit/s)}: each receiver node's flows
        summed."""
        out = {}
        for f in run["flows"]:
            total = out.setdefault(f"d{f['pair']}", {})
            for t, r in zip(*self.series(run, f, "throughput")):
                total[t] = total.get(t, 0.0) + r
        return {k: (sorted(v), [v[t] for t in sorted(v)])
                for k, v in out.items()}

    def figure(self, fname, title, lines, kind, p=None):
        fig, ax = self.plt.subplots(figsize=(8, 4.5))
        for label, (ts, ys) in lines:
            ax.plot(ts, ys, label=label, linewidth=1,
                    marker="o" if kind in ("dcp_f", "metric") else None,
                    markersize=3)
        ax.set_xlabel((p or {}).get("xlabel", "time (s)"))
        ax.set_ylabel((p or {}).get("ylabel") or YLABELS.get(
            kind, "throughput at the receiver (kbit/s)"))
        if (p or {}).get("xlog"):
            ax.set_xscale("log")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        self._save(fig, fname)

    def heatmap(self, p, cells):
        """A grid of one metric, each cell annotated with its value;
        the colour scale is centred on p["center"] (1 for a normalized
        throughput), blank cells for runs without a value."""
        from matplotlib.colors import TwoSlopeNorm
        vals = [v for row in cells for v in row if v is not None]
        if not vals:
            return
        center = float(p.get("center", 1.0))
        lo = min(min(vals), center * 0.5)
        hi = max(max(vals), center * 1.5)
        data = [[float("nan") if v is None else v for v in row]
                for row in cells]
        fig, ax = self.plt.subplots(figsize=(1.1 * len(p["x"]) + 2.5,
                                             0.5 * len(p["y"]) + 1.8))
        im = ax.imshow(data, cmap="RdBu_r", aspect="auto",
                       norm=TwoSlopeNorm(vmin=lo, vcenter=center, vmax=hi))
        ax.set_xticks(range(len(p["x"])))
        ax.set_xticklabels([fmt_value(x) for x in p["x"]])
        ax.set_yticks(range(len(p["y"])))
        ax.set_yticklabels([fmt_value(y) for y in p["y"]])
        for i, row in enumerate(cells):
            for j, v in enumerate(row):
                ax.text(j, i, "–" if v is None else f"{v:.2f}",
                        ha="center", va="center", fontsize=8)
        ax.set_xlabel(p.get("xlabel", ""))
        ax.set_ylabel(p.get("ylabel", ""))
        ax.set_title(p["title"], fontsize=9)
        fig.colorbar(im, ax=ax, label=p.get("label", p["metric"]))
        fig.tight_layout()
        self._save(fig, p["file"])

    def _save(self, fig, fname):
        """The figure as fname (the PNG the report shows) and, for a
        paper, vector copies beside it in PDF and SVG."""
        fig.savefig(os.path.join(self.out, fname), dpi=100)
        base = os.path.splitext(os.path.join(self.out, fname))[0]
        for ext in ("pdf", "svg"):
            fig.savefig(f"{base}.{ext}")
        self.plt.close(fig)
        self.files.append(fname)

    def run_figure(self, run):
        """A run's throughput over time: each flow's, or with "sinks"
        each receiver node's."""
        lines = sorted(self.sinks(run).items()) if self.exp.get("sinks") \
            else [(f["name"], self.series(run, f, "throughput"))
                  for f in run["flows"]]
        self.figure(f"{run['name']}.png",
                    f"{self.exp['name']}: {run['name']}", lines,
                    "throughput")

    def plot_lines(self, p):
        """The lines of a [[plot]] over runs: a line per matching flow
        (or sink) of each run its runs glob(s) match."""
        lines = []
        for run in self.exp["runs"]:
            globs = p["runs"] if isinstance(p["runs"], list) \
                else [p["runs"]]
            if not any(fnmatch.fnmatch(run["name"], g) for g in globs):
                continue
            if p.get("kind") == "sinks":
                for sink, ser in sorted(self.sinks(run).items()):
                    if fnmatch.fnmatch(sink, p.get("flows", "*")):
                        lines.append((p.get("label", "{run} {sink}").format(
                            run=run["name"], sink=sink), ser))
                continue
            for f in run["flows"]:
                if fnmatch.fnmatch(f["name"], p.get("flows", "*")):
                    label = p.get("label", "{run}/{flow}").format(
                        run=run["name"], flow=f["name"])
                    lines.append((label, self.series(
                        run, f, p.get("kind", "throughput"))))
        return lines


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
    figs = _Figures(exp, out, plt)
    for run in exp["runs"]:
        # a run not run (yet): --only ran others
        if figs.infos.get(run["name"]):
            figs.run_figure(run)
    for p in exp.get("plot", []):
        if p.get("kind") == "heatmap":
            if res:
                figs.heatmap(p, heatmap_cells(p, res))
            continue
        if p.get("kind") == "metric":
            lines = metric_lines(p, res) if res else []
            if lines:
                figs.figure(p["file"], p["title"], lines, "metric", p)
            continue
        lines = figs.plot_lines(p)
        if lines:
            figs.figure(p["file"], p["title"], lines,
                        p.get("kind", "throughput"))
    return figs.files
