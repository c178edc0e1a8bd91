# SPDX-License-Identifier: GPL-2.0
"""Count the results in TAP streams and print 'N passed, N failed[, N skipped]'.

Only top-level result lines count ("ok N ..." / "not ok N ..." at the start
of a line); kselftest's runner indents each test's own output with "# ".
With --skip-is-fail (CI sets SKIP_IS_FAIL=1) a skipped test counts as
failed, so a missing feature cannot hide a regression.  A plan ("1..N")
whose N results did not all arrive (a guest that died mid-way, a runner
that stopped) counts the missing ones as failed.
"""

import argparse
import os
import re
import sys

RESULT = re.compile(r"^(not ok|ok)\b(.*)$")
PLAN = re.compile(r"^1\.\.(\d+)\s*$")


def count(lines, skip_is_fail=False):
    passed = failed = skipped = 0
    failures = []
    planned = seen = 0

    def close_plan():
        nonlocal failed
        if seen < planned:
            failed += planned - seen
            failures.append(f"{planned - seen} of {planned} planned "
                            "results never reported")

    for line in lines:
        line = line.rstrip("\n")
        m = PLAN.match(line)
        if m:
            close_plan()
            planned, seen = int(m.group(1)), 0
            continue
        m = RESULT.match(line)
        if not m:
            continue
        seen += 1
        ok, rest = m.group(1) == "ok", m.group(2)
        directive = rest.split("#", 1)[1].strip().upper() if "#" in rest else ""
        if ok and directive.startswith("SKIP"):
            if skip_is_fail:
                failed += 1
                failures.append(line.strip() + " (skip counted as failure)")
            else:
                skipped += 1
        elif ok:
            passed += 1
        else:
            failed += 1
            failures.append(line.strip())
    close_plan()
    return passed, failed, skipped, failures


def summary(passed, failed, skipped):
    s = f"{passed} passed, {failed} failed"
    return s + (f", {skipped} skipped" if skipped else "")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--skip-is-fail", action="store_true")
    args = ap.parse_args(argv)
    passed = failed = skipped = 0
    failures = []
    for name in args.files:
        with open(name, errors="replace") as f:
            p, fl, sk, fails = count(f.readlines(), args.skip_is_fail)
        passed, failed, skipped = passed + p, failed + fl, skipped + sk
        failures += [f"{os.path.basename(name)}: {x}" for x in fails]
    for f in failures:
        print(f"FAILED: {f}")
    print(summary(passed, failed, skipped))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
