# SPDX-License-Identifier: GPL-2.0
"""Parse what the standard tools print into numbers tests can assert on
(the shell selftests' helper; each tool's parser is in lab.tools).

  measure.py iperf-rate FILE [--skip S]   receiver goodput in bit/s from an
                                          iperf3 -J report, ignoring the
                                          first S seconds
  measure.py iperf-loss FILE              fraction of UDP datagrams lost
  measure.py iperf-reordered FILE         UDP datagrams the receiver got
                                          out of order
  measure.py flowgen-rate FILE [--skip S] a flowgen receiver's goodput in
                                          bit/s over its whole intervals
                                          after the first S seconds
  measure.py flowgen-rates FILE... [--skip S]
                                          each flowgen receiver's goodput
                                          in bit/s over the time all of
                                          them were receiving, from S
                                          seconds after the last one began
  measure.py ping-rtt FILE                average RTT in seconds
  measure.py qdisc FILE [--handle H]      "sent drops backlog_pkts" of one
                                          qdisc in 'tc -s [-j] qdisc show'
                                          output
  measure.py max-backlog FILE [--handle H]  largest backlog (packets) over
                                          a series of such outputs
"""

import argparse
import sys

from lab.tools import flowgen, iperf3, ping, tc


def qdisc(text, handle):
    q = tc.qdisc_stats(text, handle)
    if not q:
        raise ValueError(f"no qdisc {handle}")
    return " ".join(str(x) for x in q[0][2:])


def reach(text, a):
    if a.since is None or a.goal is None:
        raise ValueError("flowgen-reach needs --since and --goal")
    t = flowgen.reach_time(text, a.goal, a.since, a.window)
    return "-" if t is None else f"{t:.2f}"


# What each command prints, from the texts of its files and the options.
COMMANDS = {
    "iperf-rate": lambda t, a: f"{iperf3.rate(t[0], a.skip):.0f}",
    "iperf-loss": lambda t, a: f"{iperf3.loss(t[0]):.6f}",
    "iperf-reordered": lambda t, a: str(iperf3.reordered(t[0])),
    "flowgen-rate": lambda t, a: f"{flowgen.rate(t[0], a.skip):.0f}",
    "flowgen-rates": lambda t, a: " ".join(
        f"{r:.0f}" for r in flowgen.rates(t, a.skip)),
    "flowgen-reach": lambda t, a: reach(t[0], a),
    "ping-rtt": lambda t, a: f"{ping.rtt(t[0]):.6f}",
    "qdisc": lambda t, a: qdisc(t[0], a.handle),
    "max-backlog": lambda t, a: str(tc.max_backlog(t[0], a.handle)),
}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=list(COMMANDS))
    ap.add_argument("file", nargs="+")
    ap.add_argument("--skip", type=float, default=0.0)
    ap.add_argument("--handle")
    ap.add_argument("--since", type=float)
    ap.add_argument("--goal", type=float)
    ap.add_argument("--window", type=float, default=1.0)
    args = ap.parse_args(argv)
    texts = []
    for name in args.file:
        with open(name) as f:
            texts.append(f.read())
    if args.what != "flowgen-rates" and len(texts) != 1:
        ap.error(f"{args.what} takes one file")
    try:
        print(COMMANDS[args.what](texts, args))
    except (ValueError, KeyError) as e:
        print(f"measure: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
