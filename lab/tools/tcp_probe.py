# SPDX-License-Identifier: GPL-2.0
"""Record and read the tcp:tcp_probe tracepoint (cwnd and ssthresh per ACK).

The tracepoint fires when an ACK reaches an established socket, before the
ACK is processed, so each record holds the window the ACK found.  A change
of ssthresh between two records was made while processing the first one's
ACK (or by a timer in between).

  tcp_probe.py start --dport P          enable the tracepoint for port P
  tcp_probe.py stop                     disable it
  tcp_probe.py flows TRACE              records per socket
  tcp_probe.py records TRACE            "t cwnd ssthresh" of the busiest flow
  tcp_probe.py changes TRACE            "t cwnd_before ssthresh_before
                                        ssthresh_after cwnd_after grown" for
                                        every change of ssthresh (grown: how
                                        far the ACK before it can have grown
                                        the window)
  tcp_probe.py decrease TRACE --pct P   classify every change of ssthresh
                                        against a multiplicative decrease of
                                        P percent: prints "congestion
                                        timeout kernel other slow_start
                                        first settle first_value
                                        settled_value" (classify())
  tcp_probe.py marks TRACE              "t text" of every line a test wrote
                                        to trace_marker, t on the time base
                                        of records
  tcp_probe.py window TRACE [--mss M]   "largest_cwnd largest_flight" of the
                                        busiest flow, in segments of M bytes
                                        (window())
"""

import argparse
import os
import re
import subprocess
import sys

TRACEFS = "/sys/kernel/tracing"
INFINITE_SSTHRESH = 0x7fffffff

LINE = re.compile(r"\s(\d+\.\d+): tcp_probe: .*? snd_nxt=0x([0-9a-f]+) "
                  r"snd_una=0x([0-9a-f]+) snd_cwnd=(\d+) ssthresh=(\d+) "
                  r".*?sock_cookie=([0-9a-f]+)")
MARK = re.compile(r"\s(\d+\.\d+): tracing_mark_write: (.*)$")


def parse(text):
    """{cookie: [(t, cwnd, ssthresh, snd_una, snd_nxt)]} from trace
    output."""
    flows = {}
    for line in text.splitlines():
        m = LINE.search(line)
        if m:
            flows.setdefault(m.group(6), []).append(
                (float(m.group(1)), int(m.group(4)), int(m.group(5)),
                 int(m.group(3), 16), int(m.group(2), 16)))
    return flows


def busiest(flows):
    """Records of the flow with the most ACKs (the data connection, not
    iperf3's control connection), times relative to its first record."""
    if not flows:
        return []
    recs = max(flows.values(), key=len)
    t0 = recs[0][0]
    return [(t - t0, c, s, una, nxt) for t, c, s, una, nxt in recs]


def marks(text, flows):
    """[(t, text)] of the trace_marker lines, t relative to the first
    record of the busiest flow (the time base of busiest())."""
    if not flows:
        return []
    t0 = max(flows.values(), key=len)[0][0]
    return [(float(m.group(1)) - t0, m.group(2).strip())
            for m in map(MARK.search, text.splitlines()) if m]


def segment(recs):
    """The smallest advance of snd_una from one ACK to the next: one
    segment, or less (a short segment; the guesses below only widen)."""
    steps = [(r1[3] - r0[3]) % 2**32 for r0, r1 in zip(recs, recs[1:])]
    return min([s for s in steps if s > 0] or [1])


def changes(recs):
    """[(t, cwnd_before, ssthresh_before, ssthresh_after, cwnd_after,
    grown)] for every change of ssthresh between two ACKs (the first
    value, set when the connection started, is not a change).  grown is
    how far the first ACK can have grown the window before the change: the
    segments it acked (snd_una's advance to the second record), in slow
    start and up to ssthresh; 0 in congestion avoidance (one segment per
    round trip, which the slack of decreased() covers)."""
    mss = segment(recs)
    out = []
    for (t0, c0, s0, u0, _), (t1, c1, s1, u1, _) in zip(recs, recs[1:]):
        if s1 == s0:
            continue
        acked = -(-((u1 - u0) % 2**32) // mss)
        out.append((t1, c0, s0, s1, c1,
                    min(acked, s0 - c0) if c0 < s0 else 0))
    return out


def around(recs, t, before=4, after=1):
    """The records from `before` ACKs before the one at time t to `after`
    after it, as "t cwnd ssthresh +acked_bytes": what a reader needs to
    explain a change."""
    i = next((k for k, r in enumerate(recs) if r[0] >= t), len(recs))
    out = []
    for k in range(max(i - before, 0), min(i + after + 1, len(recs))):
        t1, c, s, una, _ = recs[k]
        step = (una - recs[k - 1][3]) % 2**32 if k else 0
        out.append(f"{t1:.6f} {c} {s} +{step}")
    return out


def window(recs, mss):
    """(largest cwnd, largest flight) over the records, in segments of mss
    bytes: the flight is snd_nxt - snd_una when the ACK came, what the
    sender had put on the path (sent, not yet acknowledged; in a recovery
    this counts what was lost and SACKed too, so it may pass the window).
    A window far above the flight the flow ever reached was never used:
    the sender was held back by something else (its CPU, the peer's
    window), which the congestion control did not set."""
    if not recs:
        return 0, 0
    return (max(r[1] for r in recs),
            max((r[4] - r[3]) % 2**32 for r in recs) // mss)


def decreased(cwnd, ssthresh, pct, slack=2, grown=0):
    """ssthresh == max(floor(c * (100 - pct) / 100), 2) for the window c
    the last ACK found, or up to grown + slack segments more: a decrease
    started by a timer (RACK, TLP) sees the window after that ACK grew it,
    by as much as the ACK acked in slow start (a stretch ACK, where the
    receiver's GRO merged many segments: seen at 11 in a debug kernel's
    guest), by one in congestion avoidance."""
    return any(max(c * (100 - pct) // 100, 2) == ssthresh
               for c in range(cwnd, cwnd + grown + slack + 1))


def kernel_raise(cwnd, ssthresh_before, ssthresh, slack=2, grown=0):
    """ssthresh == tcp_current_ssthresh() = max(ssthresh_before, 3/4 cwnd),
    the value the kernel itself writes when it undoes a reduction found
    spurious (prior_ssthresh), validates an application-limited window or
    restarts after idle.  c as in decreased()."""
    return any(max(ssthresh_before, (c >> 1) + (c >> 2)) == ssthresh
               for c in range(cwnd, cwnd + grown + slack + 1))


def settled(ssthresh_before, ssthresh, most, pct):
    """The value a settling raised ssthresh to, or None: ssthresh itself
    if it rose to at most `most`; or, when the ACK that ended the
    recovery started another at once, the smallest value above
    ssthresh_before and at most `most` whose decrease of pct percent is
    ssthresh (the trace shows only the second change, which may then lie
    below ssthresh_before)."""
    if ssthresh_before < ssthresh <= most:
        return ssthresh
    return next((h for h in range(ssthresh_before + 1, most + 1)
                 if max(h * (100 - pct) // 100, 2) == ssthresh), None)


def classify(chg, pct):
    """Sort changes of ssthresh into what a Reno-style algorithm with a
    decrease of pct percent, and the kernel around it, can do:
      congestion: set to (100 - pct) % of the window (recovery, ECN);
      slow_start: a congestion event while the window was below
                  ssthresh, which reno_tw meets with Reno's half (the
                  paper's decrease is for congestion avoidance), but for
                  the connection's first (see first);
      timeout:    the window collapsed to 1-2 segments and ssthresh is
                  half the window (RFC 5681 after an RTO);
      kernel:     back to the value before the previous change, or raised
                  to max(ssthresh, 3/4 cwnd) (tcp_current_ssthresh(): undo
                  of a spurious reduction, cwnd validation, idle restart);
      probe:      before any event, raised to the window (reno_tw: the
                  probe past the initial ssthresh saw a queue);
      first:      the connection's first congestion event set it between
                  the half and the (100 - pct) % of the window, both
                  included (reno_tw: what the path holds), above the
                  initial ssthresh if the window grew past it;
      settle:     once after the first, when its recovery is over:
                  raised to at most (100 - pct) % of the first event's
                  window (reno_tw: that window less what was lost); the
                  window follows at once or by slow start (the kernel
                  resets it to ssthresh only if undo was still possible);
                  if the ACK that ended the recovery started another, the
                  trace shows that one's value, 95 % of the settled one;
      other:      anything else, which must never happen.
    Each change is as changes() gives it; grown may be left out (0).
    Returns ({kind: count}, [other changes], {"first": the value the
    first event set, "settled": the value the settling raised it to},
    either None if there was none)."""
    counts = {"congestion": 0, "timeout": 0, "kernel": 0, "other": 0,
              "slow_start": 0, "first": 0, "settle": 0, "probe": 0}
    others = []
    events = 0
    first = None
    startup = {"first": None, "settled": None}
    for i, (t, c0, s0, s1, c1, *g) in enumerate(chg):
        g = g[0] if g else 0
        if c1 <= 2 and decreased(c0, s1, 50, grown=g):
            kind = "timeout"
        elif c0 < s0 and decreased(c0, s1, 50, slack=0,
                                   grown=min(g + 2, s0 - 1 - c0)):
            # The first event's estimate may be its lower bound, the half.
            kind = "slow_start" if events else "first"
        elif decreased(c0, s1, pct, grown=g):
            # May be above the old value: the window grew past it.
            kind = "congestion"
        elif (i > 0 and s1 == chg[i - 1][2]) or \
                (s1 > s0 and kernel_raise(c0, s0, s1, grown=g)):
            kind = "kernel"
        elif not events and s0 < s1 and c0 <= s1 <= c0 + g + 2 and \
                abs(c1 - s1) <= g + 2:
            kind = "probe"
        elif not events and max(c0 // 2, 2) <= s1 <= \
                max((c0 + g + 2) * (100 - pct) // 100, 2):
            kind = "first"
        elif first and not counts["settle"] and \
                settled(s0, s1, first * (100 - pct) // 100, pct):
            kind = "settle"
            startup["settled"] = settled(s0, s1, first * (100 - pct) // 100,
                                         pct)
        else:
            kind = "other"
            others.append((t, c0, s0, s1, c1, g))
        if kind == "first":
            first = c0 + g + 2
            startup["first"] = s1
        if kind not in ("kernel", "settle", "probe"):
            events += 1
        counts[kind] += 1
    return counts, others, startup


def tracing(path, value):
    with open(os.path.join(TRACEFS, path), "w") as f:
        f.write(value)


def mount():
    """tracefs, mounted if the guest has not yet."""
    if not os.path.exists(os.path.join(TRACEFS, "events")):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS],
                       check=True)


def start(dport):
    mount()
    tracing("tracing_on", "0")
    tracing("trace", "")
    tracing("buffer_size_kb", "16384")
    tracing("events/tcp/tcp_probe/filter", f"dport == {dport}")
    tracing("events/tcp/tcp_probe/enable", "1")
    tracing("tracing_on", "1")


def stop():
    tracing("events/tcp/tcp_probe/enable", "0")
    tracing("events/tcp/tcp_probe/filter", "0")
    tracing("tracing_on", "0")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["start", "stop", "flows", "records",
                                     "changes", "decrease", "marks",
                                     "window"])
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--dport", type=int, default=5201)
    ap.add_argument("--pct", type=int, default=50)
    ap.add_argument("--mss", type=int, default=1448,
                    help="bytes per segment (window); 1448 is an Ethernet "
                    "MTU less IPv4 and TCP headers with timestamps")
    args = ap.parse_args(argv)
    if args.what == "start":
        start(args.dport)
        return 0
    if args.what == "stop":
        stop()
        return 0
    if not args.trace:
        ap.error("TRACE file needed")
    with open(args.trace) as f:
        text = f.read()
    flows = parse(text)
    if args.what == "flows":
        for cookie, recs in flows.items():
            print(cookie, len(recs))
    elif args.what == "records":
        for t, c, s, _, _ in busiest(flows):
            print(f"{t:.6f} {c} {s}")
    elif args.what == "marks":
        for t, mark in marks(text, flows):
            print(f"{t:.6f} {mark}")
    elif args.what == "window":
        print(*window(busiest(flows), args.mss))
    elif args.what == "changes":
        for change in changes(busiest(flows)):
            print("%.6f %d %d %d %d %d" % change)
    else:
        recs = busiest(flows)
        counts, others, startup = classify(changes(recs), args.pct)
        for change in others:
            print("unexplained ssthresh change (t cwnd ssthresh -> "
                  "ssthresh cwnd, grown): %.6f %d %d %d %d %d" % change,
                  file=sys.stderr)
            for line in around(recs, change[0]):
                print("  " + line, file=sys.stderr)
        print(counts["congestion"], counts["timeout"], counts["kernel"],
              counts["other"], counts["slow_start"], counts["first"],
              counts["settle"], startup["first"] or 0,
              startup["settled"] or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
