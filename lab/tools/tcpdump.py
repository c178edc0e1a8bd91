# SPDX-License-Identifier: GPL-2.0
"""tcpdump: its command line for a capture, and its closing counts."""

import re


def args(dev, snaplen, path):
    """tcpdump on dev into path: snaplen bytes of each packet, each
    written at once (-U: the file is whole whenever tcpdump stops), as
    root (-Z: tcpdump otherwise becomes a user who cannot write path),
    with a 4 MiB buffer against drops in a slow guest; every packet, as
    tcpdump has no filter for DCCP."""
    return ["tcpdump", "-i", dev, "-s", str(snaplen), "-U", "-Z", "root",
            "-B", "4096", "-w", path]


def counts(text):
    """tcpdump's closing statistics: {"captured", "received" (by the
    filter), "dropped" (by the kernel)}, those it printed."""
    out = {}
    for key, words in (("captured", "packets captured"),
                       ("received", "packets received by filter"),
                       ("dropped", "packets dropped by kernel")):
        m = re.search(r"(\d+) " + words, text)
        if m:
            out[key] = int(m.group(1))
    return out
