# SPDX-License-Identifier: GPL-2.0
"""python3 -m lab.topology: build or remove a ready-made shape (see
lab.topology)."""

import argparse
import json
import os
import sys

from lab.topology.netns import remove_namespaces
from lab.topology.shapes import SHAPES


def parser():
    ap = argparse.ArgumentParser(prog="python3 -m lab.topology",
                                 description="Build or remove a topology.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="build a ready-made shape")
    up.add_argument("shape", choices=sorted(SHAPES))
    up.add_argument("--state", required=True,
                    help="file to write the topology's description to")
    up.add_argument("--sh", action="store_true",
                    help="print shell variable assignments")
    up.add_argument("--dry-run", action="store_true",
                    help="print the commands instead of running them")
    up.add_argument("--pairs", type=int, default=1)
    up.add_argument("--rate")
    up.add_argument("--delay")
    up.add_argument("--queue")
    up.add_argument("--qdisc", choices=["droptail", "red"])
    up.add_argument("--loss", type=float)
    up.add_argument("--ecn", action="store_true")
    up.add_argument("--access-rate")
    up.add_argument("--access-delay",
                    help="one value, or one per pair separated by commas")
    up.add_argument("--source-jitter", action="store_true",
                    help="dumbbell: each sender's packets wait a further "
                    "random time over one bottleneck service time")
    up.add_argument("--scale", type=float, help="collapse: rate factor")
    up.add_argument("--no-steer", action="store_true",
                    help="no receive packet steering: packets get "
                    "reordered (to show that they do)")
    down = sub.add_parser("down", help="remove a topology")
    down.add_argument("--state", required=True)
    return ap


def down(args):
    try:
        with open(args.state) as f:
            state = json.load(f)
    except OSError:
        return 0
    remove_namespaces(n["ns"] for n in state["nodes"].values())
    os.unlink(args.state)
    return 0


def shape_args(args):
    """The shape function's keyword arguments from the command line."""
    kw = {}
    for key in ("rate", "delay", "qdisc", "loss", "access_rate", "scale"):
        val = getattr(args, key)
        if val is not None:
            kw[key] = val
    if args.queue is not None:
        kw["queue"] = args.queue if args.queue == "bdp" else int(args.queue)
    if args.ecn:
        kw["ecn"] = True
    if args.source_jitter:
        kw["source_jitter"] = True
    if args.access_delay:
        parts = args.access_delay.split(",")
        kw["access_delay"] = parts if len(parts) > 1 else parts[0]
    if args.shape == "dumbbell":
        kw["pairs"] = args.pairs
    return kw


def up(args):
    try:
        topo = SHAPES[args.shape](dry_run=args.dry_run, **shape_args(args))
    except (TypeError, ValueError) as e:
        print(f"topology: {e}", file=sys.stderr)
        return 2
    topo.steer = not args.no_steer
    try:
        topo.up()
    except RuntimeError as e:
        print(f"topology: {e}", file=sys.stderr)
        return 1
    if args.dry_run:
        print("\n".join(topo.commands))
        return 0
    with open(args.state, "w") as f:
        json.dump(topo.to_dict(), f, indent=1)
    if args.sh:
        sys.stdout.write(topo.to_shell())
    return 0


def main(argv=None):
    args = parser().parse_args(argv)
    return down(args) if args.cmd == "down" else up(args)


if __name__ == "__main__":
    sys.exit(main())
