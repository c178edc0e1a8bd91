# SPDX-License-Identifier: GPL-2.0
"""Parse what the standard tools print into numbers tests can assert on.

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
                                          qdisc in 'tc -s qdisc show' output
  measure.py max-backlog FILE [--handle H]  largest backlog (packets) over
                                          a series of such outputs
"""

import argparse
import json
import re
import sys


def iperf_rate(report, skip=0.0):
    """Goodput the receiver saw, bit/s, over intervals starting >= skip.

    With -R the client is the receiver and its intervals count received
    bytes; without -R the intervals are the sender's, which count bytes
    written into a socket, so the receiver's end summary is used instead."""
    data = json.loads(report) if isinstance(report, str) else report
    if "error" in data:
        raise ValueError(f"iperf3: {data['error']}")
    start = data.get("start", {}).get("test_start", {})
    reverse = start.get("reverse", 0)
    if not reverse:
        end = data["end"]
        s = end.get("sum_received") or end.get("sum")
        return s["bits_per_second"]
    bits = secs = 0.0
    for iv in data.get("intervals", []):
        s = iv["sum"]
        if s.get("omitted") or s["start"] < skip - 1e-6:
            continue
        bits += s["bytes"] * 8
        secs += s["seconds"]
    if secs <= 0:
        raise ValueError("no iperf3 intervals after the skipped part")
    return bits / secs


def iperf_loss(report):
    """Fraction of UDP datagrams the receiver missed (iperf3 -u -J)."""
    data = json.loads(report) if isinstance(report, str) else report
    if "error" in data:
        raise ValueError(f"iperf3: {data['error']}")
    s = data["end"]["sum"]
    if not s.get("packets"):
        raise ValueError("no UDP datagrams counted")
    return s["lost_packets"] / s["packets"]


def iperf_reordered(report):
    """UDP datagrams that arrived after a later one (iperf3 -u -J, the
    receiver's streams)."""
    data = json.loads(report) if isinstance(report, str) else report
    if "error" in data:
        raise ValueError(f"iperf3: {data['error']}")
    streams = [s["udp"] for s in data["end"].get("streams", [])
               if "udp" in s and not s["udp"].get("sender")]
    if not streams:
        raise ValueError("no receiving UDP stream in the report")
    return sum(s.get("out_of_order", 0) for s in streams)


def flowgen_rate(report, skip=0.0):
    """Goodput of a flowgen report over the intervals that start at or
    after skip and end within the flow (the last one is usually partial)."""
    data = json.loads(report) if isinstance(report, str) else report
    end = data["summary"]["seconds"]
    ivs = [iv for iv in data["intervals"] if iv["start"] >= skip - 1e-6
           and iv["start"] + iv["seconds"] <= end + 1e-6]
    secs = sum(iv["seconds"] for iv in ivs)
    if secs <= 0:
        raise ValueError("no whole flowgen intervals after the skipped part")
    return sum(iv["bytes"] for iv in ivs) * 8 / secs


def flowgen_rates(reports, skip=0.0):
    """Goodput of each flowgen report over one window of wall-clock time:
    from skip seconds after the last flow began to the end of the first
    that ended (the flows compete only while all of them run).  Each
    flow's intervals that lie wholly inside the window count."""
    data = [json.loads(r) if isinstance(r, str) else r for r in reports]
    if not data:
        raise ValueError("no flowgen reports")
    lo = max(d["epoch"] for d in data) + skip
    hi = min(d["epoch"] + d["summary"]["seconds"] for d in data)
    rates = []
    for d in data:
        ivs = [iv for iv in d["intervals"]
               if d["epoch"] + iv["start"] >= lo - 1e-6 and
               d["epoch"] + iv["start"] + iv["seconds"] <= hi + 1e-6]
        secs = sum(iv["seconds"] for iv in ivs)
        if secs <= 0:
            raise ValueError("the flows were not all receiving for a "
                             "whole interval after the skipped part")
        rates.append(sum(iv["bytes"] for iv in ivs) * 8 / secs)
    return rates


def ping_rtt(text):
    """Average RTT (seconds) from ping's summary line."""
    m = re.search(r"= [\d.]+/([\d.]+)/[\d.]+/[\d.]+ ms", text)
    if not m:
        raise ValueError("no RTT summary in ping output")
    return float(m.group(1)) / 1000.0


QDISC_HEAD = re.compile(r"^qdisc (\S+) (\S+)")
SENT = re.compile(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits")
BACKLOG = re.compile(r"backlog (\d+)b (\d+)p")


def qdisc_stats(text, handle=None):
    """[(kind, handle, sent_pkts, drops, backlog_pkts)] per qdisc."""
    out, cur = [], None
    for line in text.splitlines():
        line = line.strip()
        m = QDISC_HEAD.match(line)
        if m:
            cur = [m.group(1), m.group(2), 0, 0, 0]
            out.append(cur)
            continue
        if cur is None:
            continue
        m = SENT.search(line)
        if m:
            cur[2], cur[3] = int(m.group(2)), int(m.group(3))
        m = BACKLOG.search(line)
        if m:
            cur[4] = int(m.group(2))
    if handle:
        out = [q for q in out if q[1] == handle]
    return [tuple(q) for q in out]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["iperf-rate", "iperf-loss",
                                     "iperf-reordered", "flowgen-rate",
                                     "flowgen-rates", "ping-rtt", "qdisc",
                                     "max-backlog"])
    ap.add_argument("file", nargs="+")
    ap.add_argument("--skip", type=float, default=0.0)
    ap.add_argument("--handle")
    args = ap.parse_args(argv)
    texts = []
    for name in args.file:
        with open(name) as f:
            texts.append(f.read())
    if args.what != "flowgen-rates" and len(texts) != 1:
        ap.error(f"{args.what} takes one file")
    text = texts[0]
    try:
        if args.what == "flowgen-rates":
            print(*(f"{r:.0f}" for r in flowgen_rates(texts, args.skip)))
        elif args.what == "iperf-rate":
            print(f"{iperf_rate(text, args.skip):.0f}")
        elif args.what == "flowgen-rate":
            print(f"{flowgen_rate(text, args.skip):.0f}")
        elif args.what == "iperf-reordered":
            print(iperf_reordered(text))
        elif args.what == "iperf-loss":
            print(f"{iperf_loss(text):.6f}")
        elif args.what == "ping-rtt":
            print(f"{ping_rtt(text):.6f}")
        elif args.what == "qdisc":
            q = qdisc_stats(text, args.handle)
            if not q:
                raise ValueError(f"no qdisc {args.handle}")
            print(*q[0][2:])
        else:
            print(max((q[4] for q in qdisc_stats(text, args.handle)),
                      default=0))
    except (ValueError, KeyError) as e:
        print(f"measure: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
