# SPDX-License-Identifier: GPL-2.0
"""Record and read MulTFRC's tracepoint, multfrc:multfrc_update (n, p, j,
RTT, RTO, the equation's rate, the receive rate and the rate set, once per
RTT and per loss event).

  multfrc_trace.py start [--dport P]   enable it (for port P only)
  multfrc_trace.py stop                disable it
  multfrc_trace.py summary TRACE [--after S]
      one line of means over the records S seconds after the first:
      "records n p j_milli rtt_us x_calc rate slow_start_records"
  multfrc_trace.py climb TRACE MARK
      what holds the rate back after the trace_marker line MARK (a
      competitor left): the last loss event before it, its loss rate,
      and when multfrc_probe_rate() first lifted the rate above the
      equation's, in seconds from the mark (climb())
"""

import argparse
import re
import sys

from lab.tools import tcp_probe

EVENT = "events/multfrc/multfrc_update"
LINE = re.compile(r"\s(\d+\.\d+): multfrc_update: (.*)$")
MARK = re.compile(r"\s(\d+\.\d+): tracing_mark_write: (\S+)")


def parse(text):
    """[(t, {field: int})] in trace order; the address fields (family,
    saddr...) are left out."""
    recs = []
    for line in text.splitlines():
        m = LINE.search(line)
        if m:
            fields = dict(kv.split("=", 1) for kv in m.group(2).split())
            recs.append((float(m.group(1)),
                         {k: int(v) for k, v in fields.items()
                          if v.isdigit()}))
    return recs


def summary(recs, after=0.0):
    """Means over the records after the first `after` seconds; None if
    there are none."""
    if not recs:
        return None
    t0 = recs[0][0]
    sel = [f for t, f in recs if t - t0 >= after]
    if not sel:
        return None
    ca = [f for f in sel if not f["slow_start"]]

    def mean(key, rs):
        return sum(f[key] for f in rs) / len(rs) if rs else 0.0
    return {
        "records": len(sel),
        "n": sel[-1]["n_milli"] / 1000,
        "p": mean("p_ppb", ca) / 1e9,
        "j_milli": mean("j_milli", ca),
        "rtt_us": mean("rtt_us", sel),
        "x_calc": mean("x_calc", ca),
        "rate": mean("rate", sel),
        "slow_start": len(sel) - len(ca),
    }


def climb(text, mark):
    """After the trace_marker line `mark`: {"loss_before": seconds from
    the last loss event (p rose, out of slow start) to the mark, "p": the
    loss event rate it set, "probe_after": seconds from the mark to the
    first record whose rate is above the equation's (multfrc_probe_rate(),
    which only runs while the history is discounted: the open interval
    is twice the mean of the closed ones), negative if before it, None if
    never}; None without the mark or a loss event before it."""
    at = None
    for m in MARK.finditer(text):
        if m.group(2) == mark:
            at = float(m.group(1))
            break
    if at is None:
        return None
    recs = parse(text)
    loss, prev = None, None
    for t, f in recs:
        if t > at:
            break
        if prev is not None and f["p_ppb"] > prev and not f["slow_start"]:
            loss = (t, f["p_ppb"])
        prev = f["p_ppb"]
    if loss is None:
        return None
    probe = next((t for t, f in recs if t > loss[0] and
                  not f["slow_start"] and f["rate"] > f["x_calc"]), None)
    return {"loss_before": at - loss[0], "p": loss[1] / 1e9,
            "probe_after": probe - at if probe is not None else None}


def start(dport=None):
    tcp_probe.mount()
    tcp_probe.tracing("tracing_on", "0")
    tcp_probe.tracing("trace", "")
    tcp_probe.tracing("buffer_size_kb", "16384")
    tcp_probe.tracing(f"{EVENT}/filter",
                      f"dport == {dport}" if dport else "0")
    tcp_probe.tracing(f"{EVENT}/enable", "1")
    tcp_probe.tracing("tracing_on", "1")


def stop():
    tcp_probe.tracing(f"{EVENT}/enable", "0")
    tcp_probe.tracing(f"{EVENT}/filter", "0")
    tcp_probe.tracing("tracing_on", "0")


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    st = sub.add_parser("start")
    st.add_argument("--dport", type=int)
    sub.add_parser("stop")
    sm = sub.add_parser("summary")
    sm.add_argument("trace")
    sm.add_argument("--after", type=float, default=0.0)
    cl = sub.add_parser("climb")
    cl.add_argument("trace")
    cl.add_argument("mark")
    args = ap.parse_args(argv)
    if args.cmd == "start":
        start(args.dport)
    elif args.cmd == "stop":
        stop()
    elif args.cmd == "climb":
        with open(args.trace) as f:
            c = climb(f.read(), args.mark)
        if not c:
            print("multfrc_trace: no loss event before the mark",
                  file=sys.stderr)
            return 1
        probe = c["probe_after"]
        if probe is None:
            when = "never"
        elif probe < 0:
            when = "since %.2f s before it" % -probe
        else:
            when = "from %.2f s after it" % probe
        print("last loss event %.2f s before it (p %.3f %%), probing %s"
              % (c["loss_before"], c["p"] * 100, when))
    else:
        with open(args.trace) as f:
            s = summary(parse(f.read()), args.after)
        if not s:
            print("multfrc_trace: no records", file=sys.stderr)
            return 1
        print(" ".join(f"{s[k]:g}" for k in (
            "records", "n", "p", "j_milli", "rtt_us", "x_calc", "rate",
            "slow_start")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
