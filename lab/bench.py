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
ratios to the TCP row of the same write size, then counters per MB (the
receiver's ACKs, how the sender's TCP took them, the sender's packets
and segments: COUNTERS), and writes the rows as JSON.  With --repeat N every row runs N times, in N rounds
that each run every row once, so that a TLTCP run and the TCP run it is
compared with are seconds apart; a row gives the median of its runs, a
ratio the median of the N per-round ratios and their range.

With --ab A.ko B.ko (make bench-ab) it compares two builds of the tltcp
module instead: in every round each TLTCP case runs once with A loaded
and once with B (rmmod, insmod; A first in the first round, B first in
the second, and so on), beside its TCP case, and each B row gives the
median and range of the per-round ratios B / A.  --only keeps the
transports that match its globs (comma-separated; a TLTCP row also runs
the TCP row it is compared with); --only 'diag*' runs the diagnostic rows
(DIAGNOSTIC below), which a plain run leaves out.

  python3 -m lab.bench [--seconds S] [--repeat N] [--json FILE]
                       [--ab A.ko B.ko] [--only GLOBS]
"""

import argparse
import fnmatch
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

# (name, tlbench client options, server options, the TCP row it compares
# with); a row is TLTCP's when its server runs with -T: 256 KiB in each
# write() or section, and 16 KiB (one system call per 16 KiB costs the
# same with and without the module).
TL = ["-T"]
TRANSPORTS = [
    ("tcp write", [], [], None),
    ("tltcp write", ["-T"], TL, "tcp write"),
    ("tltcp MSG_TL 256 KiB", ["-T", "-L", str(256 << 10)], TL,
     "tcp write"),
    ("tcp write 16 KiB", ["-l", str(16 << 10)], [], None),
    ("tltcp MSG_TL 16 KiB", ["-T", "-L", str(16 << 10)], TL,
     "tcp write 16 KiB"),
]
# Rows that only --only names ("diag*"; not in a plain make bench): what
# TLTCP's 16 KiB sections do with the feed TCP holds unsent fixed at
# 1 MiB (TL_NOTSENT), and with the receiver reading the stream with
# recv() instead of one section at a time with MSG_TL; and TCP's 16 KiB
# writes read 16 KiB at a time, as MSG_TL reads 16 KiB sections (the cost
# of a read per section, with or without the module).
DIAGNOSTIC = [
    ("diag 16 KiB, notsent 1 MiB",
     ["-T", "-L", str(16 << 10), "-N", str(1 << 20)], TL,
     "tcp write 16 KiB"),
    ("diag 16 KiB, stream reads",
     ["-T", "-L", str(16 << 10)], TL + ["-S"], "tcp write 16 KiB"),
    ("diag tcp 16 KiB, 16 KiB reads", ["-l", str(16 << 10)],
     ["-r", str(16 << 10)], "tcp write 16 KiB"),
]


def is_tltcp(server):
    """Is a row with these server options TLTCP's?"""
    return "-T" in server
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


# TCP's counters per MB delivered, in the JSON: the ACKs the receiver
# sent (its namespace's Tcp OutSegs: the connection carries data one way
# only), how the sender's TCP took them (header prediction's fast path,
# TCPHPAcks, or the slow path's pure ACKs, TCPPureAcks), how often its
# TCP held back a small packet for more data (TCPAutoCorking), and the
# packets the sender's IP sent (OutRequests of IPv4 and IPv6: a GSO
# packet counts once, so 1 MB over this count is their mean size).
COUNTERS = {"rcv_acks_per_mb": (1, "Tcp", "OutSegs"),
            "snd_fast_acks_per_mb": (0, "TcpExt", "TCPHPAcks"),
            "snd_slow_acks_per_mb": (0, "TcpExt", "TCPPureAcks"),
            "snd_autocork_per_mb": (0, "TcpExt", "TCPAutoCorking"),
            "snd_pkts_per_mb": (0, "Ip", "OutRequests"),
            "snd_segs_per_mb": (0, "Tcp", "OutSegs")}


def mib(ns):
    """{(group, name): value} of the namespace's /proc/net/snmp and
    /proc/net/netstat (a header line, then a line of values, per group),
    with IPv6's /proc/net/snmp6 ("Ip6OutRequests value" lines) added to
    IPv4's counter of the same name."""
    out = {}
    for f in ("/proc/net/snmp", "/proc/net/netstat"):
        lines = sh("cat", f, ns=ns).stdout.splitlines()
        for head, vals in zip(lines[::2], lines[1::2]):
            group, names = head.split(":", 1)
            for k, v in zip(names.split(), vals.split(":", 1)[1].split()):
                out[(group, k)] = int(v)
    for line in sh("cat", "/proc/net/snmp6", ns=ns).stdout.splitlines():
        k, v = line.split()
        if k.startswith("Ip6") and ("Ip", k[3:]) in out:
            out[("Ip", k[3:])] += int(v)
    return out


def run_one(family, opts, server, secs, port):
    srv_cmd = [TLBENCH, "-s", "-p", str(port)] + server
    if family == 6:
        srv_cmd.append("-6")
    srv = subprocess.Popen(in_ns(NS[1], srv_cmd), stdout=subprocess.PIPE,
                           text=True)
    time.sleep(0.3)
    before = [mib(n) for n in NS]
    cli = [TLBENCH, "-c", ADDR[family][1], "-p", str(port), "-t", str(secs)]
    if family == 6:
        cli.append("-6")
    snd = json.loads(sh(*cli, *opts, ns=NS[0]).stdout)
    rcv = json.loads(srv.communicate(timeout=secs + 60)[0])
    if srv.returncode:
        raise RuntimeError("tlbench server failed")
    after = [mib(n) for n in NS]
    gb = rcv["bytes"] / 1e9
    counts = {k: (after[i][(g, c)] - before[i][(g, c)]) / gb / 1e3
              if gb else None for k, (i, g, c) in COUNTERS.items()}
    return {
        "gbit_s": rcv["bytes"] * 8 / rcv["seconds"] / 1e9,
        "snd_cpu_s_per_gb": snd["cpu_seconds"] / gb if gb else None,
        "rcv_cpu_s_per_gb": rcv["cpu_seconds"] / gb if gb else None,
        # Times each end blocked, per MB: in the JSON only.
        "snd_sleeps_per_mb": snd.get("sleeps", 0) / gb / 1e3 if gb else None,
        "rcv_sleeps_per_mb": rcv.get("sleeps", 0) / gb / 1e3 if gb else None,
        **counts,
        "bytes": rcv["bytes"],
    }


KEYS = ("gbit_s", "snd_cpu_s_per_gb", "rcv_cpu_s_per_gb")


def ratios(runs, base_runs):
    """({measure: median of the per-round ratios}, {measure: (lowest,
    highest)}): runs against base_runs, one of each per round; a measure
    of 0 or None on either side gives no ratio (None)."""
    per_round = {k: [r[k] / b[k] for r, b in zip(runs, base_runs)
                     if r[k] is not None and b[k]] for k in KEYS}
    return ({k: statistics.median(v) if v else None
             for k, v in per_round.items()},
            {k: (min(v), max(v)) if v else None
             for k, v in per_round.items()})


def summary(name, runs, base_runs, **what):
    """One row: the median of each measure over the rounds; with base_runs
    (the row it is compared with, one run per round, the same rounds) the
    median and the range of the per-round ratios: a ratio taken within a
    round compares two runs a few seconds apart, so that a drift of the
    emulated guest's speed (TCP's own rows differed by 25 % in one run,
    2026-11-25) weighs on both of its sides."""
    row = {**what, "transport": name,
           **{k: statistics.median([r[k] for r in runs
                                    if r.get(k) is not None] or [None])
              for k in KEYS + tuple(COUNTERS)}, "runs": runs}
    if base_runs:
        # A measure of 0 (no CPU time counted) gives no ratio.
        row["vs_tcp"], row["vs_tcp_range"] = ratios(runs, base_runs)
    return row


def rounds(args, port, cases, family):
    """Run every case once per round, args.repeat rounds, so that each
    case's runs and those of the case it is compared with alternate in
    time.  cases: [(name, client options, server options)]."""
    runs = {name: [] for name, _, _ in cases}
    for _ in range(args.repeat):
        for name, opts, server in cases:
            port += 1
            runs[name].append(run_one(family, opts, server, args.seconds,
                                      port))
    return runs, port


def selected(only):
    """The TRANSPORTS and DIAGNOSTIC rows that match the comma-separated
    globs only (all TRANSPORTS without), with the TCP rows the TLTCP ones
    are compared with."""
    if not only:
        return list(TRANSPORTS)
    globs = only.split(",")
    every = TRANSPORTS + DIAGNOSTIC
    names = {t[0] for t in every
             if any(fnmatch.fnmatch(t[0], g) for g in globs)}
    names |= {t[3] for t in every if t[0] in names and t[3]}
    return [t for t in every if t[0] in names]


def load_tltcp(ko):
    """The tltcp module from the file ko in place of the loaded one.  A
    socket that still holds it (an orphan flushing its queue) delays
    rmmod for a moment."""
    for _ in range(50):
        if sh("rmmod", "tltcp", check=False).returncode == 0 or \
                not os.path.exists("/sys/module/tltcp"):
            break
        time.sleep(0.2)
    else:
        raise RuntimeError("tltcp stays loaded: cannot switch builds")
    sh("insmod", ko)


def ab_rounds(args, port, cases, family, kos):
    """rounds() for two builds of tltcp: in each round the TCP cases
    once, then the TLTCP cases with each build of kos, {label: path}, in
    turn, the builds in the opposite order every other round (in an A/A
    comparison, 2026-11-27, the build that always ran second had 0.87
    to 1.03 of the first's throughput).
    Returns ({(name, label or None): [run per round]}, port)."""
    runs = {}
    for k in range(args.repeat):
        builds = list(kos.items())[::-1 if k % 2 else 1]
        for label, ko in [(None, None)] + builds:
            if ko:
                load_tltcp(ko)
            for name, opts, server in cases:
                if is_tltcp(server) != bool(ko):
                    continue
                port += 1
                runs.setdefault((name, label), []).append(
                    run_one(family, opts, server, args.seconds, port))
    return runs, port


def ab_rows(args, port, kos):
    """The rows of --ab: TCP's, then each TLTCP transport for build A
    and build B, B's with its per-round ratios to A (vs_a)."""
    rows = []
    trs = selected(args.only)
    (a, _), (b, _) = kos.items()
    for gso in (True, False):
        set_gso(gso)
        for family in (4, 6):
            runs, port = ab_rounds(args, port, [t[:3] for t in trs],
                                   family, kos)
            for name, _, server, base_name in trs:
                base = runs[(base_name, None)] if base_name else None
                for label in ((a, b) if is_tltcp(server) else (None,)):
                    row = summary(name + (f" ({label})" if label else ""),
                                  runs[(name, label)], base, gso=gso,
                                  family=family)
                    if label == b:
                        row["vs_a"], row["vs_a_range"] = ratios(
                            runs[(name, b)], runs[(name, a)])
                    rows.append(row)
    return rows, port


def transport_rows(args, port):
    rows = []
    trs = selected(args.only)
    for gso in (True, False):
        set_gso(gso)
        for family in (4, 6):
            runs, port = rounds(args, port, [t[:3] for t in trs], family)
            for name, _, _, base_name in trs:
                rows.append(summary(name, runs[name],
                                    runs[base_name] if base_name else None,
                                    gso=gso, family=family))
    return rows, port


def cc_rows(args, port):
    set_gso(True)
    for cc in CCS:
        sh("modprobe", "-q", "tcp_" + cc, check=False)
    runs, port = rounds(args, port,
                        [("tcp write " + cc, ["-C", cc], [])
                         for cc in CCS], 4)
    base = runs["tcp write " + CCS[0]]
    return [summary("tcp write " + cc, runs["tcp write " + cc],
                    base if cc != CCS[0] else None, gso=True, family=4)
            for cc in CCS]


def _ratio_text(v, span):
    return ", ".join("%.2fx [%.2f-%.2f]" % (v[k], *span[k])
                     if v[k] is not None else "-" for k in KEYS)


def table(rows):
    out = ["%-5s %-3s %-28s %9s %10s %10s   %s" % (
        "gso", "ip", "transport", "Gbit/s", "snd s/GB", "rcv s/GB",
        "ratio to TCP or CUBIC: throughput, snd CPU, rcv CPU "
        "(median of the rounds' ratios [lowest-highest])")]
    for r in rows:
        v = r.get("vs_tcp")
        out.append("%-5s %-3s %-28s %9.3f %10.2f %10.2f   %s" % (
            "on" if r["gso"] else "off", "v%d" % r["family"], r["transport"],
            r["gbit_s"], r["snd_cpu_s_per_gb"], r["rcv_cpu_s_per_gb"],
            _ratio_text(v, r["vs_tcp_range"]) if v else ""))
        if r.get("vs_a"):
            out.append("%-5s %-3s %-28s %9s %10s %10s   %s" % (
                "", "", "  B / A", "", "", "",
                _ratio_text(r["vs_a"], r["vs_a_range"])))
    out += ["", ("%-5s %-3s %-28s" + " %10s" * len(COUNTERS)) % (
        "gso", "ip", "per MB (medians)", "rcv ACKs", "snd fast",
        "snd slow", "autocorked", "snd pkts", "snd segs")]
    for r in rows:
        if all(r.get(k) is not None for k in COUNTERS):
            out.append(("%-5s %-3s %-28s" + " %10.1f" * len(COUNTERS)) % (
                "on" if r["gso"] else "off", "v%d" % r["family"],
                r["transport"], *(r[k] for k in COUNTERS)))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--ab", nargs=2, metavar=("A.ko", "B.ko"),
                    help="compare two builds of the tltcp module")
    ap.add_argument("--only", help="only the transports matching these "
                    "globs (comma-separated)")
    args = ap.parse_args()
    if not os.access(TLBENCH, os.X_OK):
        sys.exit("bench: %s not built (make tools)" % TLBENCH)
    if args.only and not selected(args.only):
        sys.exit("bench: no transport matches %s" % args.only)
    kos = None
    if args.ab:
        for ko in args.ab:
            if not os.path.isfile(ko):
                sys.exit("bench: no module %s" % ko)
        kos = {"A": os.path.abspath(args.ab[0]),
               "B": os.path.abspath(args.ab[1])}
    else:
        sh("modprobe", "tltcp")
    topo_up()
    try:
        if kos:
            rows, port = ab_rows(args, 5400, kos)
        else:
            rows, port = transport_rows(args, 5400)
            if not args.only:
                rows += cc_rows(args, port)
    finally:
        remove_namespaces(NS)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seconds": args.seconds, "repeat": args.repeat,
                       "kernel": os.uname().release, "ab": kos,
                       "rows": rows}, f, indent=1)
    print(table(rows))


if __name__ == "__main__":
    main()
