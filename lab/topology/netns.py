# SPDX-License-Identifier: GPL-2.0
"""Network namespaces: running in one, what runs in one, removing them."""

import os
import subprocess


def in_ns(ns, args):
    """The command line that runs args (a list) in namespace ns."""
    return ["ip", "netns", "exec", ns, *args]


def cpu_mask(ncpus=None):
    """All CPUs as a sysfs CPU mask: hex, in comma-separated 32-bit groups
    ("3" for two CPUs, "ffffffff,ffffffff" for 64)."""
    n = ncpus or os.cpu_count() or 1
    digits = f"{(1 << n) - 1:x}"
    groups = []
    while digits:
        groups.insert(0, digits[-8:])
        digits = digits[:-8]
    return ",".join(groups)


def netns_pids(ns):
    """Processes whose network namespace is ns (what 'ip netns pids'
    prints, without a process of its own)."""
    try:
        st = os.stat(f"/run/netns/{ns}")
    except OSError:
        return []
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            pst = os.stat(f"/proc/{pid}/ns/net")
        except OSError:
            continue
        if (pst.st_dev, pst.st_ino) == (st.st_dev, st.st_ino):
            pids.append(int(pid))
    return pids


def remove_namespaces(names):
    """Kill what runs in each namespace, then delete them all (missing ones
    are ignored: removal must work on every exit path, even a half-built
    one)."""
    names = [ns for ns in names if os.path.exists(f"/run/netns/{ns}")]
    for ns in names:
        for pid in netns_pids(ns):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
    if names:
        # -force: go on past a namespace that is already gone.
        subprocess.run(["ip", "-force", "-batch", "-"],
                       input="".join(f"netns del {ns}\n" for ns in names),
                       capture_output=True, text=True)
