# SPDX-License-Identifier: GPL-2.0
"""ping: the average RTT from its summary line."""

import re


def rtt(text):
    """Average RTT (seconds) from ping's summary line."""
    m = re.search(r"= [\d.]+/([\d.]+)/[\d.]+/[\d.]+ ms", text)
    if not m:
        raise ValueError("no RTT summary in ping output")
    return float(m.group(1)) / 1000.0
