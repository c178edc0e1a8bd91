# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the TAP counter behind make check's last line."""

import contextlib
import io
import unittest

from lab import tap_summary

SAMPLE = """TAP version 13
1..4
# selftests: topology: a.sh
# ok 1 inner check, not counted
# not ok 2 inner failure, not counted
ok 1 selftests: topology: a.sh
not ok 2 selftests: topology: b.sh # exit=1
ok 3 selftests: topology: c.sh # SKIP
ok 4 selftests: topology: d.sh # TIMEOUT is not ok-prefixed here
okay this line is not a result
"""


class Count(unittest.TestCase):
    def test_top_level_only(self):
        p, f, s, _ = tap_summary.count(SAMPLE.splitlines())
        self.assertEqual((p, f, s), (2, 1, 1))

    def test_skip_is_fail(self):
        p, f, s, fails = tap_summary.count(SAMPLE.splitlines(), True)
        self.assertEqual((p, f, s), (2, 2, 0))
        self.assertTrue(any("c.sh" in x for x in fails))

    def test_missing_planned_results_fail(self):
        lines = ["TAP version 13", "1..3", "ok 1 a", "ok 2 b",
                 "TAP version 13", "1..1", "ok 1 c"]
        p, f, s, fails = tap_summary.count(lines)
        self.assertEqual((p, f, s), (3, 1, 0))
        self.assertIn("1 of 3 planned", fails[0])

    def test_nested_plans_are_not_top_level(self):
        lines = ["1..1", "# 1..5", "# ok 1 inner", "ok 1 outer"]
        self.assertEqual(tap_summary.count(lines)[:3], (1, 0, 0))

    def test_summary_line(self):
        self.assertEqual(tap_summary.summary(3, 0, 0), "3 passed, 0 failed")
        self.assertEqual(tap_summary.summary(3, 1, 2),
                         "3 passed, 1 failed, 2 skipped")

    def test_nothing_run_is_failure(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".tap") as t:
            t.write("TAP version 13\n1..0\n")
            t.flush()
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(tap_summary.main([t.name]), 1)


if __name__ == "__main__":
    unittest.main()
