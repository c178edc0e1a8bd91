# SPDX-License-Identifier: GPL-2.0
"""Why the receiver acks: make bench's pair, one connection per row, with
lab/tools/rcv_acks.bt attached to the receiving socket.  In a guest:

  make vm CMD='python3 -m lab.tools.rcv_acks [--seconds S] [--rounds N]'

Rows: TCP's 16 KiB writes read 256 KiB at a time (make bench's baseline),
TLTCP's 16 KiB sections read with MSG_TL, and read as a stream (-S).
Diagnostic only: bpftrace slows every row down, so its throughput is not
the benchmark's.
"""

import argparse
import os
import subprocess
import time

from lab import bench
from lab.topology.netns import remove_namespaces

BT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rcv_acks.bt")
ROWS = [
    ("tcp write 16 KiB", ["-l", str(16 << 10)], []),
    ("tltcp MSG_TL 16 KiB", ["-T", "-L", str(16 << 10)], ["-T"]),
    ("tltcp 16 KiB, stream reads", ["-T", "-L", str(16 << 10)],
     ["-T", "-S"]),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    bench.sh("modprobe", "tltcp")
    bench.topo_up()
    bench.set_gso(True)
    port = 6100
    try:
        for rnd in range(args.rounds):
            for name, snd, rcv in ROWS:
                port += 1
                bt = subprocess.Popen(["bpftrace", BT, str(port)],
                                      stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True)
                bt.stdout.readline()    # "Attaching N probes..."
                time.sleep(1)
                r = bench.run_one(4, snd, rcv, args.seconds, port)
                bt.send_signal(2)
                print("== %s, round %d: %.3f Gbit/s, %.1f ACKs per MB"
                      % (name, rnd, r["gbit_s"], r["rcv_acks_per_mb"]))
                print(bt.communicate()[0], flush=True)
    finally:
        remove_namespaces(bench.NS)


if __name__ == "__main__":
    main()
