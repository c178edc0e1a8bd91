# SPDX-License-Identifier: GPL-2.0
"""make demo's report: the TLTCP paper's Fig. 5 run as a table and a
picture in text.

  tltcp_demo.py DIR [--seconds S] [--skip S] [--png FILE]

DIR holds flowgen's reports and sequence traces of two flows, tltcp and
tcp: <flow>.rcv.json, <flow>.snd.json and <flow>.seq.csv (flowgen -S).
Printed: each flow's throughput at the receiver, what the TLTCP sender's
module did with the sections (offered, completed, abandoned, bytes
abandoned, obsolete bytes TCP still sent) and what its receiver was told
(gaps), the stream offset of both flows second by second, and a text plot
of offset against time in which TLTCP's jumps at each deadline show.
"""

import argparse
import csv
import os
import sys

from lab.reports import load_json

PACKET = 1500           # the paper's packets, for stream offsets
FLOWS = ("tltcp", "tcp")


def load_trace(path):
    """flowgen -S: [(seconds since the receiver's epoch, stream offset
    after the record, 'data' or 'gap')]."""
    out = []
    try:
        with open(path) as f:
            for row in csv.DictReader(f):
                out.append((float(row["time"]),
                            int(row["stream_off"]) + int(row["len"]),
                            row["type"]))
    except (OSError, KeyError, ValueError):
        pass
    return out


def offsets_per_second(trace, shift, seconds):
    """Stream offset (bytes) reached by the end of each second 1..seconds
    of the common time axis; a trace's times are shifted by shift (its
    receiver's epoch less the earliest one)."""
    out, i, off = [], 0, 0
    for s in range(1, seconds + 1):
        while i < len(trace) and trace[i][0] + shift < s:
            off = trace[i][1]
            i += 1
        out.append(off)
    return out


def throughput_kbps(rcv, skip, seconds):
    """Data bytes the receiver read in [skip, seconds) of its own time,
    per second, in kbit/s (gaps are not data)."""
    if not rcv or seconds <= skip:
        return 0.0
    got = sum(iv["bytes"] for iv in rcv.get("intervals", [])
              if skip <= iv["start"] < seconds)
    return got * 8 / (seconds - skip) / 1e3


def ascii_plot(series, seconds, width=64, height=16):
    """series: {mark: [(t, offset)]}; offset against time on a grid of
    width x height characters, 0 at the bottom left.  Later series
    overwrite earlier ones where they meet."""
    top = max((o for pts in series.values() for _, o in pts), default=0)
    top = max(top, 1)
    grid = [[" "] * width for _ in range(height)]
    for mark, pts in series.items():
        for t, o in pts:
            if not 0 <= t <= seconds:
                continue
            x = min(width - 1, int(t / seconds * (width - 1) + 0.5))
            y = min(height - 1, int(o / top * (height - 1) + 0.5))
            grid[height - 1 - y][x] = mark
    lab = f"{top / PACKET:.0f}"
    pad = len(lab)
    lines = []
    for r, row in enumerate(grid):
        lead = lab if r == 0 else ("0".rjust(pad) if r == height - 1
                                   else " " * pad)
        lines.append(f"{lead} |{''.join(row)}")
    lines.append(" " * pad + " +" + "-" * width)
    lines.append(" " * pad + f"  0 s{' ' * (width - 8)}{seconds} s")
    return lines


def _row(label, *cells):
    return f"  {label:<44}" + "".join(f"{c:>14}" for c in cells)


def _tltcp_rows(snd_tl, rcv_s):
    """What the TLTCP sender's module and its receiver reported; and
    whether every abandoned byte reached the receiver as a gap."""
    rcv_tl = rcv_s.get("tltcp", {})
    ab = snd_tl.get("sections_abandoned_unsent", 0) + \
        snd_tl.get("sections_abandoned_partial", 0)
    L = ["  TLTCP sender (the module's TL_INFO):",
         _row("sections offered / completed / abandoned",
              f"{snd_tl.get('sections_offered', '-')} / "
              f"{snd_tl.get('sections_completed', '-')} / {ab}"),
         _row("  of these abandoned before any byte was sent",
              snd_tl.get("sections_abandoned_unsent", "-")),
         _row("bytes offered", snd_tl.get("bytes_offered", "-")),
         _row("bytes sent", snd_tl.get("bytes_sent", "-")),
         _row("bytes abandoned", snd_tl.get("bytes_abandoned", "-")),
         _row("obsolete bytes: sent after their deadline",
              snd_tl.get("bytes_obsolete_late", "-")),
         _row("obsolete bytes: retransmitted (estimate)",
              snd_tl.get("bytes_obsolete_retrans", "-")),
         "  TLTCP receiver:",
         _row("gaps received / bytes in gaps",
              f"{rcv_tl.get('gaps_received', rcv_s.get('gaps', '-'))} / "
              f"{rcv_tl.get('bytes_gap', rcv_s.get('gap_bytes', '-'))}"),
         _row("bytes on time (before the section's deadline)",
              rcv_s.get("on_time_bytes", "-")),
         _row("bytes late", rcv_s.get("late_bytes", "-"))]
    ok = True
    if snd_tl and "gap_bytes" in rcv_s:
        same = snd_tl.get("bytes_abandoned") == rcv_s["gap_bytes"]
        ok &= same
        L.append("  every abandoned byte reached the receiver as a gap: "
                 + ("yes" if same else "NO"))
    return L, ok


def _offset_rows(traces, epochs, tput, secs):
    """Both flows' stream offsets second by second, and as a text plot."""
    base = min(epochs.values())
    per = {f: offsets_per_second(traces[f], epochs[f] - base, secs)
           for f in FLOWS}
    L = ["", "  Stream offset at the receiver, packets of 1500 B "
         "(TLTCP jumps to the next section at each deadline):",
         f"  {'s':>4} {'TLTCP':>10} {'TCP':>10}"]
    prev = 0
    for s in range(secs):
        a, b = per["tltcp"][s], per["tcp"][s]
        jump = "  jump" if a - prev > 2 * PACKET * max(
            1, tput["tltcp"] * 1e3 / 8 / PACKET) else ""
        L.append(f"  {s + 1:>4} {a / PACKET:>10.0f} {b / PACKET:>10.0f}"
                 + jump)
        prev = a
    L.append("")
    L.append("  Offset (packets) against time: L = TLTCP, T = TCP")
    series = {"T": [(t + epochs["tcp"] - base, o)
                    for t, o, _ in traces["tcp"]],
              "L": [(t + epochs["tltcp"] - base, o)
                    for t, o, _ in traces["tltcp"]]}
    return L + ["  " + line for line in ascii_plot(series, secs)]


def report(d, seconds, skip):
    rep = {f: (load_json(os.path.join(d, f"{f}.rcv.json")),
               load_json(os.path.join(d, f"{f}.snd.json")))
           for f in FLOWS}
    traces = {f: load_trace(os.path.join(d, f"{f}.seq.csv")) for f in FLOWS}
    if any(r is None for r, _ in rep.values()):
        return ["no receiver report in " + d], False
    epochs = {f: rep[f][0]["epoch"] for f in FLOWS}
    tput = {f: throughput_kbps(rep[f][0], skip, seconds) for f in FLOWS}
    snd_tl = (rep["tltcp"][1] or {}).get("summary", {}).get("tltcp", {})
    rcv_s = rep["tltcp"][0]["summary"]
    L = ["", _row("", "TLTCP", "TCP"),
         _row(f"throughput at the receiver (kbit/s, {skip:g}-{seconds:g} s)",
              f"{tput['tltcp']:.0f}", f"{tput['tcp']:.0f}")]
    total = sum(tput.values())
    if total:
        L.append(_row("share of the two",
                      f"{100 * tput['tltcp'] / total:.0f} %",
                      f"{100 * tput['tcp'] / total:.0f} %"))
    L += [_row("bytes received (data)", rcv_s.get("bytes", 0),
               rep["tcp"][0]["summary"].get("bytes", 0)), ""]
    rows, ok = _tltcp_rows(snd_tl, rcv_s)
    L += rows + _offset_rows(traces, epochs, tput, int(seconds))
    return L, ok


def png(d, path, seconds):
    """The same offsets as a figure, if matplotlib is there."""
    os.environ.setdefault("MPLCONFIGDIR", "/tmp/matplotlib")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    epochs = {f: (load_json(os.path.join(d, f"{f}.rcv.json")) or {})
              .get("epoch", 0) for f in FLOWS}
    base = min(epochs.values())
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for f, label in (("tltcp", "TLTCP, 700,000 B sections, 1 s deadlines"),
                     ("tcp", "TCP")):
        tr = load_trace(os.path.join(d, f"{f}.seq.csv"))
        ax.plot([t + epochs[f] - base for t, _, _ in tr],
                [o / PACKET for _, o, _ in tr], label=label, linewidth=1)
    ax.set_xlim(0, seconds)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"stream offset (packets of {PACKET} B)")
    ax.set_title("TLTCP beside TCP on a 1.5 Mbit/s link (paper's Fig. 5)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--skip", type=float, default=2,
                    help="seconds of slow start left out of throughput")
    ap.add_argument("--png", help="also draw the offsets into this file")
    args = ap.parse_args(argv)
    lines, ok = report(args.dir, args.seconds, args.skip)
    print("\n".join(lines))
    if args.png and png(args.dir, args.png, args.seconds):
        print(f"\n  Figure: {args.png}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
