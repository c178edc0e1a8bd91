#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where the CPU time of TCP and TLTCP goes (make profile).

One guest run on make bench's unshaped veth pair (GSO on): for each case
(TCP write(), TLTCP write(), TLTCP MSG_TL sections of 256 KiB, TCP
16 KiB writes, TLTCP MSG_TL sections of 16 KiB) and each family in
--family (IPv4 and IPv6), one tlbench connection while
`perf record -e cpu-clock -a` samples every CPU's time (the emulated
guest has no PMU: a software clock, 4 kHz).  For each case it prints the
share of the samples by group of symbols (the module, copies between
user and kernel, checksums, the clock, page zeroing, the network stack:
TCP, IP, skbs, veth; the rest of the kernel, user space, idle) and the
symbols above --top percent, and writes it all as JSON.  A share is of
the samples taken while the connection ran, both ends and everything
else the guest did in that time.

  python3 -m lab.profile [--seconds S] [--family 4|6 ...] [--top PCT]
                         [--json FILE]
  python3 -m lab.profile --report FILE    an earlier run's JSON, again
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from lab import bench
from lab.tools import perf
from lab.topology.netns import remove_namespaces

# make bench's rows: (name, client options, server options).
CASES = [t[:3] for t in bench.TRANSPORTS]

# (group, shared object, symbol): a sample goes to the first group whose
# two patterns match (re.match: from the start of the name).
GROUPS = [
    # perf finds no file for an out-of-tree module in the guest and names
    # its symbols from /proc/kallsyms, under [kernel.kallsyms].
    ("tltcp module", r"\[tltcp\]|tltcp\.ko", r""),
    ("tltcp module", r"\[kernel", r"_*tltcp_"),
    ("idle", r"\[kernel", r"default_idle|cpu_idle|do_idle|"
     r"(pv_)?native_safe_halt|acpi_safe_halt|acpi_idle|mwait_idle|"
     r"poll_idle|intel_idle"),
    ("copies user<->kernel", r"", r".*(copy_user|copyin|copyout|"
     r"_copy_to_iter|_copy_from_iter|copy_page_to_iter|"
     r"copy_page_from_iter|memcpy|memmove|skb_copy_datagram|"
     r"csum_and_copy)"),
    ("checksums", r"\[kernel", r".*csum"),
    # The emulated guest's clocksource: every ktime_get() reads the HPET.
    ("clock (read_hpet)", r"\[kernel", r"read_hpet"),
    ("page zeroing", r"\[kernel", r"clear_page"),
    ("network stack", r"\[kernel", r"_*(tcp|inet|ip_|ipv6|ip6|skb|sk_|"
     r"release_sock|lock_sock|veth|netif|net_rx|napi|dev_|sch_|pfifo|"
     r"gro)"),
    ("kernel, other", r"\[kernel", r""),
    ("user space", r"", r""),
]


def group(rows):
    """{group: percent} over rows of perf.parse_report()."""
    shares = dict.fromkeys((g for g, _, _ in GROUPS), 0.0)
    for pct, dso, sym in rows:
        for g, dso_re, sym_re in GROUPS:
            if re.match(dso_re, dso) and re.match(sym_re, sym):
                shares[g] += pct
                break
    return shares


def profile_one(family, opts, server, secs, port, tmp):
    """One tlbench connection under perf; (run, perf report rows)."""
    data = os.path.join(tmp, "perf.data")
    with perf.recording(data, tmp):
        run = bench.run_one(family, opts, server, secs, port)
    return run, perf.report(data)


def table(results, top):
    out = []
    for r in results:
        out.append("%s: %.3f Gbit/s, %.2f / %.2f CPU s per GB (snd / rcv)"
                   % (r["case"], r["run"]["gbit_s"],
                      r["run"]["snd_cpu_s_per_gb"],
                      r["run"]["rcv_cpu_s_per_gb"]))
        out.append("  " + ", ".join("%s %.1f %%" % (g, p)
                                    for g, p in r["groups"].items()))
        for pct, dso, sym in r["symbols"]:
            if pct >= top:
                out.append("  %6.2f %%  %-20s %s" % (pct, dso, sym))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--family", type=int, nargs="+", choices=(4, 6),
                    default=[4, 6])
    ap.add_argument("--top", type=float, default=1.0)
    ap.add_argument("--json")
    ap.add_argument("--report", metavar="JSON",
                    help="print an earlier run's results, grouped anew")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            results = json.load(f)["results"]
        for r in results:
            r["groups"] = group(r["symbols"])
        print(table(results, args.top))
        return
    if not os.access(bench.TLBENCH, os.X_OK):
        sys.exit("profile: %s not built (make tools)" % bench.TLBENCH)
    if not shutil.which("perf"):
        sys.exit("profile: no perf (Debian: linux-perf; make deps)")
    subprocess.run(["modprobe", "tltcp"], check=True)
    bench.topo_up()
    results = []
    try:
        bench.set_gso(True)
        with tempfile.TemporaryDirectory() as tmp:
            cases = [(fam, c) for fam in args.family for c in CASES]
            for i, (fam, (name, opts, server)) in enumerate(cases):
                run, rows = profile_one(fam, opts, server, args.seconds,
                                        5600 + i, tmp)
                results.append({"case": "%s v%d" % (name, fam),
                                "family": fam, "run": run,
                                "groups": group(rows), "symbols": rows})
    finally:
        remove_namespaces(bench.NS)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seconds": args.seconds,
                       "kernel": os.uname().release,
                       "results": results}, f, indent=1)
    print(table(results, args.top))


if __name__ == "__main__":
    main()
