# SPDX-License-Identifier: GPL-2.0
"""make demo's second part: one MulTFRC(n) flow beside n TCP flows.

  multfrc_demo.py DIR --n N [--seconds S] [--skip S] [--rate BIT/S]

DIR holds the receivers' flowgen reports: multfrc.rcv.json and
tcp1.rcv.json .. tcpN.rcv.json.  Printed: every flow's throughput second
by second on a common time axis, each flow's throughput after the first
S seconds, the normalized throughput (MulTFRC's / (n x the mean TCP
flow's), 1 being the ideal) and the link's use.  Exit 1 if a report is
missing or a flow delivered nothing.
"""

import argparse
import os
import sys

from lab import metrics
from lab.reports import load_json


def per_second(rcv, shift, seconds):
    """kbit/s in each second 0..seconds-1 of the common time axis; the
    report's intervals are shifted by shift (its epoch less the
    earliest)."""
    out = [0.0] * seconds
    for iv in rcv["intervals"]:
        s = int(iv["start"] + shift)
        if 0 <= s < seconds:
            out[s] += iv["bytes"] * 8 / 1e3
    return out


def report(d, n, seconds, skip, rate=None):
    names = ["multfrc"] + [f"tcp{i}" for i in range(1, n + 1)]
    reps = {f: load_json(os.path.join(d, f"{f}.rcv.json")) for f in names}
    missing = [f for f, r in reps.items() if not r or not r.get("intervals")]
    if missing:
        print(f"no report from {', '.join(missing)}")
        return 1
    t0 = min(r["epoch"] for r in reps.values())
    rows = {f: per_second(r, r["epoch"] - t0, seconds)
            for f, r in reps.items()}
    print("second  " + "".join(f"{f:>10}" for f in names) + "   (kbit/s)")
    for s in range(seconds):
        print(f"{s:>6}  " + "".join(f"{rows[f][s]:>10.0f}" for f in names))
    tp = {f: sum(rows[f][skip:]) / max(1, seconds - skip) for f in names}
    print(f"\nthroughput after the first {skip} s (kbit/s):")
    for f in names:
        print(f"  {f:<8} {tp[f]:>8.0f}")
    if any(v <= 0 for v in tp.values()):
        print("a flow delivered nothing")
        return 1
    tcp = [tp[f] for f in names[1:]]
    norm = metrics.normalized_throughput(tp["multfrc"], n, tcp)
    print(f"normalized throughput: {tp['multfrc']:.0f} / ({n} x "
          f"{sum(tcp) / len(tcp):.0f}) = {norm:.2f} (ideal 1)")
    if rate:
        print(f"link use: {sum(tp.values()) * 1e3 / rate:.0%} of "
              f"{rate / 1e6:g} Mbit/s")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--skip", type=int, default=5)
    ap.add_argument("--rate", type=float)
    a = ap.parse_args(argv)
    return report(a.dir, a.n, a.seconds, min(a.skip, a.seconds - 1),
                  a.rate)


if __name__ == "__main__":
    sys.exit(main())
