# SPDX-License-Identifier: GPL-2.0
"""Run the user-space unit tests (lab/tests/test_*.py) and print TAP.

A test class whose assertions depend on this process getting the CPU in
time (loopback rates, idle timeouts) sets MEASURES_TIME = True.  With
--timed only those run, with --untimed only the others, so that
scripts/check.sh can run the untimed ones beside busy guests.
"""

import argparse
import os
import sys
import unittest

# The tests' modules are lab.tests.test_*: their TAP lines name them
# test_*, as the file names do.
PREFIX = "lab.tests."


class TapResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.n = 0

    def _line(self, ok, test, note=""):
        self.n += 1
        module = test.__class__.__module__.removeprefix(PREFIX)
        name = f"{module}.{test.__class__.__name__}.{test._testMethodName}"
        print(f"{'ok' if ok else 'not ok'} {self.n} unit: {name}{note}")

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(False, test)
        print("# " + self._exc_info_to_string(err, test).replace("\n", "\n# "))

    def addError(self, test, err):
        super().addError(test, err)
        self._line(False, test)
        print("# " + self._exc_info_to_string(err, test).replace("\n", "\n# "))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(True, test, f" # SKIP {reason}")


def tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from tests(t)
        else:
            yield t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--timed", action="store_true",
                       help="only the tests that measure time")
    which.add_argument("--untimed", action="store_true",
                       help="only the tests that do not")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    suite = unittest.defaultTestLoader.discover(here, top_level_dir=top)
    if args.timed or args.untimed:
        suite = unittest.TestSuite(
            t for t in tests(suite)
            if getattr(t, "MEASURES_TIME", False) == args.timed)
    print("TAP version 13")
    print(f"1..{suite.countTestCases()}")
    result = TapResult()
    suite.run(result)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
