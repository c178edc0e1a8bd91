# SPDX-License-Identifier: GPL-2.0
"""ss: is a socket listening or connected, and what ss -i shows of each
socket (cwnd, RTT, rates, retransmissions).  Which option selects a
transport's sockets is the transport registry's (lab.transports)."""

import re
import subprocess

from lab.topology.netns import in_ns
from lab.transports import TRANSPORTS, sampled


def _any(ns, args):
    """ss ARGS in namespace ns printed a socket."""
    out = subprocess.run(in_ns(ns, ["ss", *args]), capture_output=True,
                         text=True).stdout
    return bool(out.strip())


def listening(ns, port, transport):
    """A socket of transport listens on port in namespace ns."""
    return _any(ns, ["-H", f"-l{TRANSPORTS[transport].ss}n",
                     f"sport = :{port}"])


def established(ns, port, transport):
    """A connection of transport to port exists in namespace ns and is
    established (seen from the client's side)."""
    return _any(ns, ["-Hn", f"-{TRANSPORTS[transport].ss}", "state",
                     "established", f"dport = :{port}"])


def sample_options(transports):
    """ss's options for one sample of the sockets of these transports
    that ss -i describes: -tinH, -dinH or -tdinH (None for none)."""
    kinds = {TRANSPORTS[t].ss for t in transports if sampled(t)}
    if not kinds:
        return None
    return "-" + "".join(k for k in "td" if k in kinds) + "inH"


# A rate as ss prints it: bit/s, numerically (-n) or with a prefix.
RATE = re.compile(r"(\d+(?:\.\d+)?)([KMGT]?)bps")
PREFIX = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
# An address:port column of ss's socket line.
ADDR = re.compile(r"\S+:(\d+)")


def _fields(words, sample):
    """ss's tcp_info words into sample: cwnd, rtt_ms (the smoothed RTT),
    pacing_rate_bps, delivery_rate_bps, retrans (segments retransmitted
    in all, the second number of retrans:now/total)."""
    for i, w in enumerate(words):
        key, _, v = w.partition(":")
        try:
            if key == "cwnd" and v:
                sample["cwnd"] = int(v)
            elif key == "rtt" and v:
                sample["rtt_ms"] = float(v.split("/")[0])
            elif key == "retrans" and v:
                sample["retrans"] = int(v.split("/")[-1])
            elif w in ("pacing_rate", "delivery_rate") and \
                    i + 1 < len(words):
                m = RATE.fullmatch(words[i + 1])
                if m:
                    sample[f"{w}_bps"] = round(
                        float(m.group(1)) * PREFIX[m.group(2)])
        except ValueError:
            continue


def parse(text, t0, ports):
    """ss -tinH (or -dinH, -tdinH, one line per socket with -O) samples,
    each after a line "# EPOCH": {flow: [{"t": seconds after t0, "cwnd",
    "rtt_ms", "pacing_rate_bps", "delivery_rate_bps", "retrans"}]} for
    the sockets whose peer port ports ({port: flow}) names; a key only
    where ss printed it (it leaves out retrans while there was none, and
    DCCP fills only CCID 3's RTT)."""
    out, when, cur = {}, None, None
    for line in text.splitlines():
        if line.startswith("#"):
            try:
                when = float(line[1:].split()[0])
            except (IndexError, ValueError):
                pass
            cur = None
            continue
        if not line.strip():
            continue
        if not line[0].isspace():
            # [netid] state recv-q send-q local:port peer:port [info]
            cur = None
            words = line.split()
            at = [i for i, w in enumerate(words) if ADDR.fullmatch(w)]
            if len(at) < 2 or when is None:
                continue
            name = ports.get(int(ADDR.fullmatch(words[at[1]]).group(1)))
            if name is None:
                continue
            cur = {"t": round(when - t0, 3)}
            out.setdefault(name, []).append(cur)
            _fields(words[at[1] + 1:], cur)
        elif cur is not None:
            _fields(line.split(), cur)
    return out
