#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the results in TAP streams and print 'N passed, N failed[, N skipped]'.

Only top-level result lines count ("ok N ..." / "not ok N ..." at the start
of a line); kselftest's runner indents each test's own output with "# ".
With --skip-is-fail (CI sets SKIP_IS_FAIL=1) a skipped test counts as
failed, so a missing feature cannot hide a regression.
"""

import argparse
import re
import sys

RESULT = re.compile(r"^(not ok|ok)\b(.*)$")


def count(lines, skip_is_fail=False):
    passed = failed = skipped = 0
    failures = []
    for line in lines:
        m = RESULT.match(line.rstrip("\n"))
        if not m:
            continue
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
    return passed, failed, skipped, failures


def summary(passed, failed, skipped):
    s = f"{passed} passed, {failed} failed"
    return s + (f", {skipped} skipped" if skipped else "")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--skip-is-fail", action="store_true")
    args = ap.parse_args(argv)
    lines = []
    for name in args.files:
        with open(name, errors="replace") as f:
            lines += f.readlines()
    passed, failed, skipped, failures = count(lines, args.skip_is_fail)
    for f in failures:
        print(f"FAILED: {f}")
    print(summary(passed, failed, skipped))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
