# SPDX-License-Identifier: GPL-2.0
"""Scan a guest kernel log for reports that must fail a test run.

A run fails when the kernel logged a WARN, BUG, Oops, lockdep, refcount,
KASAN/KFENCE/UBSAN, kmemleak (in the log or in /sys/kernel/debug/kmemleak's
own report), debug-objects, net refcount tracker, soft/hard lockup, RCU
stall, hung task or panic report, a kmemleak that switched itself off,
or when the kernel is tainted by anything other than O (out-of-tree module)
and E (unsigned module), which loading this project's modules causes.

Usage: kmsg_scan.py LOG [--taint N]     exit 0 when clean, 1 otherwise
"""

import argparse
import re
import sys

# Each pattern names the kind of report it catches.  They are matched
# case-sensitively against the message part of a line: the kernel's own
# report headers are upper case ("BUG:", "WARNING:"), while harmless boot
# messages say "report a bug" or "This is not a bug".
REPORT_PATTERNS = [
    ("warn", re.compile(r"^WARNING: CPU: \d+ PID: \d+ at ")),
    ("warn", re.compile(r"^-+\[ cut here \]-+$")),
    ("lockdep", re.compile(
        r"^WARNING: (possible circular locking dependency|possible recursive"
        r" locking|inconsistent lock state|suspicious RCU usage|bad unlock"
        r" balance|lock held when returning to user space|held lock freed|"
        r"Nested lock was not taken|possible irq lock inversion|"
        r"Illegal lock usage)")),
    ("lockdep", re.compile(
        r"^WARNING: \S+-(un)?safe -> \S+-(un)?safe lock order detected")),
    ("lockdep", re.compile(r"^INFO: trying to register non-static key")),
    ("kfence", re.compile(r"^BUG: KFENCE: ")),
    ("kasan", re.compile(r"^BUG: (KASAN|KCSAN|KMSAN): ")),
    ("soft-lockup", re.compile(r"^watchdog: BUG: soft lockup")),
    ("hard-lockup", re.compile(r"^watchdog: (BUG: )?[Hh]ard LOCKUP")),
    ("bug", re.compile(r"^BUG: ")),
    ("bug", re.compile(r"^kernel BUG at ")),
    ("oops", re.compile(r"^Oops: ")),
    ("oops", re.compile(r"^(general protection fault|stack segment): ")),
    ("refcount", re.compile(r"^refcount_t: ")),
    ("ubsan", re.compile(r"^UBSAN: ")),
    ("rcu-stall", re.compile(r"^rcu: INFO: \w+ (self-)?detected stall")),
    ("hung-task", re.compile(r"^INFO: task .* blocked for more than \d+ ")),
    ("panic", re.compile(r"^Kernel panic - not syncing")),
    ("leak", re.compile(r"^kmemleak: \d+ new suspected memory leaks")),
    # /sys/kernel/debug/kmemleak itself, after "echo scan" into it.
    ("leak", re.compile(r"^unreferenced object 0x[0-9a-f]+ \(size \d+\):")),
    # A detector that switched itself off would let every later run pass.
    ("kmemleak-off", re.compile(
        r"^kmemleak: (Kernel memory leak detector disabled|Cannot allocate|"
        r"Memory pool empty)")),
    ("debugobjects", re.compile(r"^ODEBUG: .* object type: ")),
    ("debugobjects", re.compile(r"^ODEBUG: Out of memory")),
    ("refcount", re.compile(r"^ref_tracker: .* has \d+/\d+ users at")),
    ("netdev-leak", re.compile(
        r"^unregister_netdevice: waiting for \S+ to become free")),
    ("list-corruption", re.compile(r"^list_(add|del) corruption")),
    ("bad-page", re.compile(r"^BUG: Bad page (state|map)")),
]

# Taint flags in bit order (Documentation/admin-guide/tainted-kernels.rst).
TAINT_LETTERS = "PFSRMBUDAWCIOELKXTN"
# O: out-of-tree module loaded, E: unsigned module loaded.
ALLOWED_TAINT = (1 << TAINT_LETTERS.index("O")) | (1 << TAINT_LETTERS.index("E"))

# "[   12.345678] msg", "[T123] msg" (printk caller id) or "<4>[...] msg".
PREFIX = re.compile(r"^(<\d+>)?(\[\s*\d+\.\d+\]\s?)?(\[\s*[CT]\d+\]\s?)?")
TAINTED_LINE = re.compile(r"\bTainted: ([A-Z ]+?)\s+\d")


def strip_prefix(line):
    return PREFIX.sub("", line.rstrip("\n"), count=1)


def taint_letters(value):
    """Letters of the flags set in a numeric taint value."""
    return "".join(c for i, c in enumerate(TAINT_LETTERS) if value & (1 << i))


def bad_taint(value):
    """Taint flags other than O and E, as letters ("" when acceptable)."""
    return taint_letters(value & ~ALLOWED_TAINT)


def scan_lines(lines):
    """Return [(kind, line number, text)] for every report found."""
    found = []
    for num, raw in enumerate(lines, 1):
        msg = strip_prefix(raw)
        for kind, pat in REPORT_PATTERNS:
            if pat.search(msg):
                found.append((kind, num, msg))
                break
        else:
            # A report's "Tainted: G W O" line shows taints raised
            # before /proc could be read (e.g. when the guest died).
            m = TAINTED_LINE.search(msg)
            if m:
                bad = set(m.group(1).replace(" ", "")) - set("GOE")
                if bad:
                    found.append(("taint", num, msg))
    return found


def scan(text, taint=None):
    """Scan a log (and optionally the numeric taint); return problems."""
    problems = [f"{kind}: line {num}: {msg}"
                for kind, num, msg in scan_lines(text.splitlines())]
    if taint is not None and bad_taint(taint):
        problems.append(f"taint: kernel tainted {taint} "
                        f"({taint_letters(taint)}): flags "
                        f"{bad_taint(taint)} are not allowed (only O, E)")
    return problems


def excerpt(text, context=5, limit=120, tail=40):
    """The lines of a log that say what went wrong: from @context lines
    before its first report on, at most @limit of them (the report's
    first lines, where its call trace names the code, and the log's last
    ones, where a panic says how it ended); the last @tail lines of a
    log without a report."""
    lines = text.splitlines()
    found = scan_lines(lines)
    if not found:
        return lines[-tail:]
    start = max(found[0][1] - 1 - context, 0)
    rest = lines[start:]
    if len(rest) <= limit:
        return rest
    keep_end = limit // 10
    skipped = len(rest) - limit + 1
    return (rest[:limit - keep_end - 1] +
            [f"[... {skipped} lines ...]"] + rest[-keep_end:])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--taint", type=int, default=None,
                    help="value of /proc/sys/kernel/tainted")
    args = ap.parse_args(argv)
    with open(args.log, errors="replace") as f:
        problems = scan(f.read(), args.taint)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
