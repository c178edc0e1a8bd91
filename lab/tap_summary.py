# SPDX-License-Identifier: GPL-2.0
"""Count the results in TAP streams and print 'N passed, N failed[, N
skipped][, N not applicable]'.

Only top-level result lines count ("ok N ..." / "not ok N ..." at the start
of a line); kselftest's runner indents each test's own output with "# ".
With --skip-is-fail (CI sets SKIP_IS_FAIL=1) a skipped test counts as
failed, so a missing feature cannot hide a regression.  A plan ("1..N")
whose N results did not all arrive (a guest that died mid-way, a runner
that stopped) counts the missing ones as failed.

One kind of skip is not a missing feature but a test that cannot apply:
a test of DCCP on a kernel without DCCP (Linux 6.16 removed it).  A skip
whose reason starts with one of NOT_APPLICABLE is counted as not
applicable, never as failed, whatever --skip-is-fail says.  The reason is
the skip directive's ("ok 3 x # SKIP dccp: not in this kernel"), or, for
kselftest's runner, which drops it ("ok 3 selftests: d: x.sh # SKIP"),
that of the test's own plan just before ("# 1..0 # SKIP dccp: not in
this kernel (socket: ESOCKTNOSUPPORT)", selftests/lib.sh lib_plan).  The
test declares it (lib_require_dccp), after a DCCP socket failed to open.

A failed test's report lists the checks inside it that failed (its own
"# not ok" lines, at most MAX_CHECKS), so that the tail of a CI log says
which assertion broke without the guest's full output.  A failed guest
(make check's "not ok 1 guest ...") is followed by the VM runner's own
report as "# vm: ..." lines: the kernel log's problems, what ended the
run, the end of a dead guest's console or its log from the first
report on.  These join its report (of the end of a console, only its
last CONSOLE_LINES; of a log from a report, its first REPORT_LINES,
where the faulting code and the top of the call trace are, and its last
REPORT_END), so that a guest that died says how, and where, in the last
lines of the log.
"""

import argparse
import os
import re
import sys

RESULT = re.compile(r"^(not ok|ok)\b(.*)$")
PLAN = re.compile(r"^1\.\.(\d+)\s*$")
# A test's own plan, indented by the runner: "# 1..0 # SKIP reason".
NESTED_SKIP = re.compile(r"^#\s+1\.\.0\s+#\s*SKIP\s*(.*)$", re.I)
# The declared reasons of a test that cannot apply to this kernel.
NOT_APPLICABLE = ("dccp: not in this kernel",)
# A failed check inside a test, indented by the runner: "# not ok 7 ...".
NESTED_FAIL = re.compile(r"^#\s+(not ok\b.*)$")
MAX_CHECKS = 10
# The VM runner's report after a failed guest's result line.
VM_LINE = re.compile(r"^#\s+(vm:.*)$")
VM_NOISE = re.compile(r"^vm: (booting |guest state kept )")
VM_CONSOLE = re.compile(r"^vm: last lines of the guest kernel's (console|log)")
CONSOLE_LINES = 12
VM_REPORT = re.compile(r"^vm: the guest kernel's log from its first report")
REPORT_LINES = 30
REPORT_END = 3


def not_applicable(reason):
    return reason.strip().lower().startswith(NOT_APPLICABLE)


def count(lines, skip_is_fail=False):
    """(passed, failed, skipped, not_applicable, failures)"""
    passed = failed = skipped = na = 0
    failures = []
    planned = seen = 0
    nested = ""     # the reason of the last "# 1..0 # SKIP" since a result
    checks = []     # the "# not ok" lines since a result
    vm_lines = None  # a failed result's "# vm:" lines, while they follow

    def close_plan():
        nonlocal failed
        if seen < planned:
            failed += planned - seen
            failures.append(f"{planned - seen} of {planned} planned "
                            "results never reported")

    def close_vm():
        nonlocal vm_lines
        if vm_lines:
            keep = [x for x in vm_lines if not VM_NOISE.match(x)]
            for i, x in enumerate(keep):
                if VM_CONSOLE.match(x):
                    keep = keep[:i + 1] + keep[i + 1:][-CONSOLE_LINES:]
                    break
                if VM_REPORT.match(x):
                    log = keep[i + 1:]
                    if len(log) > REPORT_LINES + REPORT_END:
                        log = (log[:REPORT_LINES] + ["vm:   [...]"] +
                               log[-REPORT_END:])
                    keep = keep[:i + 1] + log
                    break
            failures[-1] = "\n  ".join([failures[-1]] + keep)
        vm_lines = None

    for line in lines:
        line = line.rstrip("\n")
        m = VM_LINE.match(line)
        if m and vm_lines is not None:
            vm_lines.append(m.group(1).rstrip())
            continue
        close_vm()
        m = PLAN.match(line)
        if m:
            close_plan()
            planned, seen = int(m.group(1)), 0
            nested = ""
            continue
        m = NESTED_FAIL.match(line)
        if m:
            checks.append(m.group(1).strip())
            continue
        m = NESTED_SKIP.match(line)
        if m:
            nested = m.group(1)
            continue
        m = RESULT.match(line)
        if not m:
            continue
        seen += 1
        ok, rest = m.group(1) == "ok", m.group(2)
        directive = rest.split("#", 1)[1].strip() if "#" in rest else ""
        reason, nested = directive[4:].strip() or nested, ""
        inner, checks = checks, []
        if ok and directive.upper().startswith("SKIP") and \
                not_applicable(reason):
            na += 1
        elif ok and directive.upper().startswith("SKIP"):
            if skip_is_fail:
                failed += 1
                failures.append(line.strip() + " (skip counted as failure)")
            else:
                skipped += 1
        elif ok:
            passed += 1
        else:
            failed += 1
            more = len(inner) - MAX_CHECKS
            failures.append("\n  ".join(
                [line.strip()] + inner[:MAX_CHECKS] +
                ([f"... and {more} more"] if more > 0 else [])))
            vm_lines = []
    close_vm()
    close_plan()
    return passed, failed, skipped, na, failures


def summary(passed, failed, skipped, na=0):
    s = f"{passed} passed, {failed} failed"
    s += f", {skipped} skipped" if skipped else ""
    return s + (f", {na} not applicable" if na else "")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--skip-is-fail", action="store_true")
    args = ap.parse_args(argv)
    passed = failed = skipped = na = 0
    failures = []
    for name in args.files:
        with open(name, errors="replace") as f:
            p, fl, sk, n, fails = count(f.readlines(), args.skip_is_fail)
        passed, failed, skipped = passed + p, failed + fl, skipped + sk
        na += n
        failures += [f"{os.path.basename(name)}: {x}" for x in fails]
    for f in failures:
        print(f"FAILED: {f}")
    print(summary(passed, failed, skipped, na))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
