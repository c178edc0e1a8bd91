# SPDX-License-Identifier: GPL-2.0
"""tc: the statistics of queueing disciplines.

What to record is tc's JSON, "tc -s -j qdisc show [dev DEV]" (show_args):
one array of qdiscs per call, which a sampler may append one after the
other.  The text of "tc -s qdisc show" is read too, for the samples that
selftests/topology/shape_lib.sh records."""

import json
import re

QDISC_HEAD = re.compile(r"^qdisc (\S+) (\S+)")
SENT = re.compile(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits")
BACKLOG = re.compile(r"backlog (\d+)b (\d+)p")


def show_args(dev=None):
    """tc's command line for one sample of every qdisc (of dev)."""
    return ["tc", "-s", "-j", "qdisc", "show"] + \
        (["dev", dev] if dev else [])


def _from_json(text):
    """Every qdisc of a series of tc -s -j samples, in order."""
    out, dec, i = [], json.JSONDecoder(), 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return out
        try:
            sample, i = dec.raw_decode(text, i)
        except ValueError:
            return out          # a sample cut short as the sampler ended
        out += [(q["kind"], q["handle"], q.get("packets", 0),
                 q.get("drops", 0), q.get("qlen", 0)) for q in sample]


def _from_text(text):
    """Every qdisc of a series of tc -s qdisc show outputs, in order."""
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
    return [tuple(q) for q in out]


def qdisc_stats(text, handle=None):
    """[(kind, handle, sent_pkts, drops, backlog_pkts)] per qdisc (of
    that handle, e.g. "10:"), in the order of the samples."""
    qs = _from_json(text) if text.lstrip().startswith("[") \
        else _from_text(text)
    return [q for q in qs if not handle or q[1] == handle]


def max_backlog(text, handle=None):
    """The largest backlog (packets) over a series of samples; 0 for
    none."""
    return max((q[4] for q in qdisc_stats(text, handle)), default=0)
