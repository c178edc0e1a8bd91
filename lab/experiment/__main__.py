# SPDX-License-Identifier: GPL-2.0
"""python3 -m lab.experiment run|analyze|list (see lab.experiment)."""

import argparse
import glob
import os
import subprocess
import sys

from lab.experiment import DESCRIPTION
from lab.experiment.report import analyze, print_checks
from lab.experiment.schedule import run_all
from lab import REPO
from lab.experiment.spec import EXPERIMENTS, SpecError, load, log, repeats


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m lab.experiment",
                                 description=DESCRIPTION)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run an experiment (in the guest)")
    r.add_argument("name")
    r.add_argument("--short", action="store_true",
                   help="the short variant, as make check runs it")
    r.add_argument("--out", help="results directory "
                   "(default results/<name>[-short])")
    r.add_argument("--only", help="only the runs matching these globs "
                   "(separated by commas); the others' results in --out "
                   "stay and are analyzed")
    r.add_argument("--duration", type=float,
                   help="seconds per run, instead of the description's")
    a = sub.add_parser("analyze", help="metrics, plots and report")
    a.add_argument("dir")
    ls = sub.add_parser("list", help="the experiments")
    ls.add_argument("--name", help="only this one (an error if unknown)")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "list":
            paths = sorted(glob.glob(os.path.join(EXPERIMENTS, "*.toml")))
            if args.name:
                paths = [p for p in paths if os.path.basename(p) ==
                         f"{args.name}.toml"]
                if not paths:
                    raise SpecError(f"no experiment {args.name!r} in "
                                    f"{EXPERIMENTS}")
            for p in paths:
                e = load(p)
                n = e["name"]
                # Each repetition is a run.
                runs = sum(repeats(r) for r in e["runs"])
                total = sum(r["duration"] * repeats(r) for r in e["runs"])
                print(f"{n}: {e.get('title', '')} ({runs} runs, "
                      f"{total:.0f} s of flows)")
            return 0
        if args.cmd == "analyze":
            return 0 if print_checks(*analyze(args.dir)) else 1
        exp = load(args.name, args.short, args.duration)
        out = args.out or os.path.join(
            REPO, "results", exp["name"] + ("-short" if args.short else ""))
        ran = run_all(exp, out, args.only)
        ok = print_checks(*analyze(out))
        log(f"results in {out}/README.md")
        return 0 if ran and ok else 1
    except (SpecError, RuntimeError, subprocess.CalledProcessError) as e:
        print(f"experiment: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
