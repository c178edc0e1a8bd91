# SPDX-License-Identifier: GPL-2.0
"""iperf3: numbers from its JSON reports (iperf3 -J).  The selftests run
it (selftests/lib.sh); lab.measure prints these for them."""

import json


def rate(report, skip=0.0):
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


def loss(report):
    """Fraction of UDP datagrams the receiver missed (iperf3 -u -J)."""
    data = json.loads(report) if isinstance(report, str) else report
    if "error" in data:
        raise ValueError(f"iperf3: {data['error']}")
    s = data["end"]["sum"]
    if not s.get("packets"):
        raise ValueError("no UDP datagrams counted")
    return s["lost_packets"] / s["packets"]


def reordered(report):
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
