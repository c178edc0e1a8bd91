# SPDX-License-Identifier: GPL-2.0
"""Units of the topology descriptions: rates, times, packets."""

import math
import re

MTU = 1500
# Bytes on the wire that HTB accounts for one full-sized packet.
WIRE_PKT = MTU + 14


def parse_rate(text):
    """'10mbit', '1.5Mbit', '300kbit', '1gbit', '9600' -> bits/s (int)."""
    if text is None:
        return None
    if isinstance(text, (int, float)):
        return int(text)
    m = re.fullmatch(r"\s*([0-9.]+)\s*([kmg]?)(bit|bps|b)?(/s)?\s*",
                     text.lower())
    if not m:
        raise ValueError(f"bad rate {text!r} (examples: 10mbit, 300kbit)")
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    return int(float(m.group(1)) * scale)


def parse_time(text):
    """'25ms', '0.3s', '150us', '40' (ms) -> seconds (float)."""
    if text is None:
        return 0.0
    if isinstance(text, (int, float)):
        return float(text) / 1000.0
    m = re.fullmatch(r"\s*([0-9.]+)\s*(us|ms|s)?\s*", text.lower())
    if not m:
        raise ValueError(f"bad time {text!r} (examples: 25ms, 0.3s)")
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0, None: 1e-3}[m.group(2)]
    return float(m.group(1)) * scale


def bdp_packets(rate_bps, rtt_s):
    """Bandwidth-delay product in full-sized packets (at least 2)."""
    return max(2, math.ceil(rate_bps * rtt_s / (8 * WIRE_PKT)))


def tcp_goodput(rate_bps, mss=1448):
    """Highest TCP payload rate a link of rate_bps carries (HTB counts the
    Ethernet header; IPv4 + TCP + timestamps take 52 bytes of the MTU)."""
    return rate_bps * mss / (mss + 52 + 14)
