#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""TCP against TLTCP on an unshaped veth pair (make bench).

One guest run: two network namespaces joined by a veth pair, no shaping.
For GSO on and off and for IPv4 and IPv6, one connection of tlbench
(tools/tlbench) at a time: TCP with write(), TLTCP with write(), TLTCP
with MSG_TL sections of 256 KiB, TCP with 16 KiB writes, TLTCP with
MSG_TL sections of 16 KiB; then the congestion
controls against CUBIC (TCP write(), IPv4, GSO on).  Prints a table of the
throughput and the CPU seconds per GB at each end, each TLTCP row with its
ratios to the TCP row of the same write size, and writes the rows as
JSON.  With --repeat N every row runs N times, in N rounds that each run
every row once, so that a TLTCP run and the TCP run it is compared with
are seconds apart; a row gives the median of its runs, a ratio the
median of the N per-round ratios and their range.

  python3 -m lab.bench [--seconds S] [--repeat N] [--json FILE]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from lab.topology.netns import in_ns, remove_namespaces

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TLBENCH = os.path.join(TOP, "tools", "tlbench", "tlbench")
NS = ("tlb-a", "tlb-b")
ADDR = {4: ("10.9.0.1", "10.9.0.2"), 6: ("fd00:9::1", "fd00:9::2")}

# (name, tlbench client options, is TLTCP, the TCP row it compares with):
# 256 KiB in each write() or section, and 16 KiB (one system call per
# 16 KiB costs the same with and without the module).
TRANSPORTS = [
    ("tcp write", [], False, None),
    ("tltcp write", ["-T"], True, "tcp write"),
    ("tltcp MSG_TL 256 KiB", ["-T", "-L", str(256 << 10)], True,
     "tcp write"),
    ("tcp write 16 KiB", ["-l", str(16 << 10)], False, None),
    ("tltcp MSG_TL 16 KiB", ["-T", "-L", str(16 << 10)], True,
     "tcp write 16 KiB"),
]
CCS = ["cubic", "reno_tw", "multfrc", "bbr"]


def sh(*cmd, ns=None, check=True):
    if ns:
        cmd = in_ns(ns, list(cmd))
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def topo_up():
    a, b = NS
    remove_namespaces(NS)
    for n in NS:
        sh("ip", "netns", "add", n)
        sh("ip", "link", "set", "lo", "up", ns=n)
    sh("ip", "link", "add", "va", "netns", a, "type", "veth",
       "peer", "name", "vb", "netns", b)
    for n, dev, i in ((a, "va", 0), (b, "vb", 1)):
        sh("ip", "addr", "add", ADDR[4][i] + "/24", "dev", dev, ns=n)
        sh("ip", "addr", "add", ADDR[6][i] + "/64", "dev", dev, "nodad",
           ns=n)
        sh("ip", "link", "set", dev, "up", ns=n)


def set_gso(on):
    """GSO and TSO on or off at the sender's device, GRO at both."""
    v = "on" if on else "off"
    sh("ethtool", "-K", "va", "gso", v, "tso", v, "gro", v, ns=NS[0])
    sh("ethtool", "-K", "vb", "gro", v, ns=NS[1])


def run_one(family, opts, tltcp, secs, port):
    srv_cmd = [TLBENCH, "-s", "-p", str(port)]
    if family == 6:
        srv_cmd.append("-6")
    if tltcp:
        srv_cmd.append("-T")
    srv = subprocess.Popen(in_ns(NS[1], srv_cmd), stdout=subprocess.PIPE,
                           text=True)
    time.sleep(0.3)
    cli = [TLBENCH, "-c", ADDR[family][1], "-p", str(port), "-t", str(secs)]
    if family == 6:
        cli.append("-6")
    snd = json.loads(sh(*cli, *opts, ns=NS[0]).stdout)
    rcv = json.loads(srv.communicate(timeout=secs + 60)[0])
    if srv.returncode:
        raise RuntimeError("tlbench server failed")
    gb = rcv["bytes"] / 1e9
    return {
        "gbit_s": rcv["bytes"] * 8 / rcv["seconds"] / 1e9,
        "snd_cpu_s_per_gb": snd["cpu_seconds"] / gb if gb else None,
        "rcv_cpu_s_per_gb": rcv["cpu_seconds"] / gb if gb else None,
        "bytes": rcv["bytes"],
    }


KEYS = ("gbit_s", "snd_cpu_s_per_gb", "rcv_cpu_s_per_gb")


def summary(name, runs, base_runs, **what):
    """One row: the median of each measure over the rounds; with base_runs
    (the row it is compared with, one run per round, the same rounds) the
    median and the range of the per-round ratios: a ratio taken within a
    round compares two runs a few seconds apart, so that a drift of the
    emulated guest's speed (TCP's own rows differed by 25 % in one run,
    2026-11-25) weighs on both of its sides."""
    row = {**what, "transport": name,
           **{k: statistics.median([r[k] for r in runs
                                    if r[k] is not None] or [None])
              for k in KEYS}, "runs": runs}
    if base_runs:
        # A measure of 0 (no CPU time counted) gives no ratio.
        per_round = {k: [r[k] / b[k] for r, b in zip(runs, base_runs)
                         if r[k] is not None and b[k]] for k in KEYS}
        row["vs_tcp"] = {k: statistics.median(v) if v else None
                         for k, v in per_round.items()}
        row["vs_tcp_range"] = {k: (min(v), max(v)) if v else None
                               for k, v in per_round.items()}
    return row


def rounds(args, port, cases, family):
    """Run every case once per round, args.repeat rounds, so that each
    case's runs and those of the case it is compared with alternate in
    time.  cases: [(name, tlbench options, is TLTCP)]."""
    runs = {name: [] for name, _, _ in cases}
    for _ in range(args.repeat):
        for name, opts, tltcp in cases:
            port += 1
            runs[name].append(run_one(family, opts, tltcp, args.seconds,
                                      port))
    return runs, port


def transport_rows(args, port):
    rows = []
    for gso in (True, False):
        set_gso(gso)
        for family in (4, 6):
            runs, port = rounds(args, port, [t[:3] for t in TRANSPORTS],
                                family)
            for name, _, _, base_name in TRANSPORTS:
                rows.append(summary(name, runs[name],
                                    runs[base_name] if base_name else None,
                                    gso=gso, family=family))
    return rows, port


def cc_rows(args, port):
    set_gso(True)
    for cc in CCS:
        sh("modprobe", "-q", "tcp_" + cc, check=False)
    runs, port = rounds(args, port,
                        [("tcp write " + cc, ["-C", cc], False)
                         for cc in CCS], 4)
    base = runs["tcp write " + CCS[0]]
    return [summary("tcp write " + cc, runs["tcp write " + cc],
                    base if cc != CCS[0] else None, gso=True, family=4)
            for cc in CCS]


def table(rows):
    out = ["%-5s %-3s %-24s %9s %10s %10s   %s" % (
        "gso", "ip", "transport", "Gbit/s", "snd s/GB", "rcv s/GB",
        "ratio to TCP or CUBIC: throughput, snd CPU, rcv CPU "
        "(median of the rounds' ratios [lowest-highest])")]
    for r in rows:
        v, span = r.get("vs_tcp"), r.get("vs_tcp_range")
        out.append("%-5s %-3s %-24s %9.3f %10.2f %10.2f   %s" % (
            "on" if r["gso"] else "off", "v%d" % r["family"], r["transport"],
            r["gbit_s"], r["snd_cpu_s_per_gb"], r["rcv_cpu_s_per_gb"],
            ", ".join("%.2fx [%.2f-%.2f]" % (v[k], *span[k])
                      if v[k] is not None else "-"
                      for k in KEYS) if v else ""))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    if not os.access(TLBENCH, os.X_OK):
        sys.exit("bench: %s not built (make tools)" % TLBENCH)
    sh("modprobe", "tltcp")
    topo_up()
    try:
        rows, port = transport_rows(args, 5400)
        rows += cc_rows(args, port)
    finally:
        remove_namespaces(NS)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seconds": args.seconds, "repeat": args.repeat,
                       "kernel": os.uname().release, "rows": rows}, f,
                      indent=1)
    print(table(rows))


if __name__ == "__main__":
    main()
