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
        p, f, s, n, _ = tap_summary.count(SAMPLE.splitlines())
        self.assertEqual((p, f, s, n), (2, 1, 1, 0))

    def test_skip_is_fail(self):
        p, f, s, n, fails = tap_summary.count(SAMPLE.splitlines(), True)
        self.assertEqual((p, f, s, n), (2, 2, 0, 0))
        self.assertTrue(any("c.sh" in x for x in fails))

    def test_missing_planned_results_fail(self):
        lines = ["TAP version 13", "1..3", "ok 1 a", "ok 2 b",
                 "TAP version 13", "1..1", "ok 1 c"]
        p, f, s, _, fails = tap_summary.count(lines)
        self.assertEqual((p, f, s), (3, 1, 0))
        self.assertIn("1 of 3 planned", fails[0])

    def test_nested_plans_are_not_top_level(self):
        lines = ["1..1", "# 1..5", "# ok 1 inner", "ok 1 outer"]
        self.assertEqual(tap_summary.count(lines)[:3], (1, 0, 0))

    def test_failure_lists_its_failed_checks(self):
        lines = ["1..2", "# not ok 3 belongs to a", "ok 1 a",
                 "# ok 1 fine", "# not ok 2 rate 0.4 Mbit/s",
                 "#  not ok 5 delay 600 ms", "not ok 2 b # exit=1"]
        fails = tap_summary.count(lines)[4]
        self.assertEqual(fails, ["not ok 2 b # exit=1\n"
                                 "  not ok 2 rate 0.4 Mbit/s\n"
                                 "  not ok 5 delay 600 ms"])
        many = ["1..1"] + [f"# not ok {i} c" for i in range(15)] + \
            ["not ok 1 x"]
        report = tap_summary.count(many)[4][0].splitlines()
        self.assertEqual(len(report), 1 + tap_summary.MAX_CHECKS + 1)
        self.assertEqual(report[-1], "  ... and 5 more")

    def test_failed_guest_says_why(self):
        console = [f"# vm:   [  {i}.0] line {i}" for i in range(40)]
        # a guest that died in a directory's fourth test: make check
        # gives the guest's line a plan of its own
        lines = ["1..4", "ok 1 a", "ok 2 b",
                 "ok 3 selftests[6.12]: multfrc: rto.sh", "1..1",
                 "not ok 1 guest 6.12: boot, status or kernel log (vm exit 1)",
                 "# vm: booting 6.12 (tcg), results in /r",
                 "# vm: 6.12 tcg: boot 25.0s, total 300.0s, exit -",
                 "# vm: guest kernel log shows problems:",
                 "# vm:   panic: Kernel panic - not syncing: Fatal exception",
                 "# vm: guest ended without a status (vng exit 0)",
                 "# vm: last lines of the guest kernel's console:"] + \
            console + ["# vm: guest state kept in /r/.vm/run-x",
                       "1..1", "ok 1 after"]
        p, f, _, _, fails = tap_summary.count(lines)
        self.assertEqual((p, f), (4, 2))
        self.assertIn("1 of 4 planned", fails[0])
        fails = fails[1:]
        report = fails[0].splitlines()
        self.assertIn("Fatal exception", fails[0])
        self.assertIn("line 39", report[-1])
        self.assertNotIn("line 27", fails[0])
        self.assertNotIn("booting", fails[0])
        self.assertEqual(len(report), 1 + 5 + tap_summary.CONSOLE_LINES)
        # after a passed result, "# vm:" lines are only diagnostics
        ok = tap_summary.count(["ok 1 a", "# vm: x", "not ok 2 b"])[4]
        self.assertEqual(ok, ["not ok 2 b"])

    def test_failed_guest_says_where(self):
        # the VM runner's log from the first report: its start (the
        # faulting code, the top of the call trace) and its end (the
        # panic) stay in the summary
        log = ["# vm:   [  588.0] Oops: double fault: 0000 [#1]",
               "# vm:   [  588.0] RIP: 0010:some_function+0x12/0x40"] + \
            [f"# vm:   [  588.1] frame {i}" for i in range(60)] + \
            ["# vm:   [  588.2] Kernel panic - not syncing: Fatal exception"]
        lines = ["1..1",
                 "not ok 1 guest 6.12: boot, status or kernel log (vm exit 1)",
                 "# vm: guest kernel log shows problems:",
                 "# vm:   oops: line 227: Oops: double fault: 0000 [#1]",
                 "# vm: guest ended without a status (vng exit 255)",
                 "# vm: the guest kernel's log from its first report:"] + \
            log + ["# vm: guest state kept in /r/.vm/run-x"]
        fails = tap_summary.count(lines)[4]
        report = fails[0].splitlines()
        self.assertIn("RIP: 0010:some_function", fails[0])
        self.assertIn("frame 27", fails[0])
        self.assertNotIn("frame 28", fails[0])
        self.assertIn("Kernel panic", report[-1])
        self.assertEqual(len(report), 1 + 4 + tap_summary.REPORT_LINES +
                         1 + tap_summary.REPORT_END)

    def test_summary_line(self):
        self.assertEqual(tap_summary.summary(3, 0, 0), "3 passed, 0 failed")
        self.assertEqual(tap_summary.summary(3, 1, 2),
                         "3 passed, 1 failed, 2 skipped")
        self.assertEqual(tap_summary.summary(3, 0, 0, 2),
                         "3 passed, 0 failed, 2 not applicable")

    def test_nothing_run_is_failure(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".tap") as t:
            t.write("TAP version 13\n1..0\n")
            t.flush()
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(tap_summary.main([t.name]), 1)


# What kselftest's runner makes of selftests/lib.sh's skips: the runner's
# result line has no reason, the test's own plan before it has.
NO_DCCP = """TAP version 13
1..6
# selftests: flowgen: dccp.sh
# # SKIP: dccp: not in this kernel (socket: ESOCKTNOSUPPORT)
# 1..0 # SKIP dccp: not in this kernel (socket: ESOCKTNOSUPPORT)
ok 1 selftests: flowgen: dccp.sh # SKIP
# selftests: flowgen: sctp.sh
# # SKIP: module sctp not available
# 1..0 # SKIP module sctp not available
ok 2 selftests: flowgen: sctp.sh # SKIP
# selftests: tsm: smoke.sh
# ok 1 DCCP row # SKIP dccp: not in this kernel
# 1..1
ok 3 selftests: tsm: smoke.sh
# selftests: tsm: other.sh
# 1..0 # SKIP dccp: not in this kernel
# ok 1 a check after the plan
ok 4 selftests: tsm: other.sh # SKIP needs root
ok 5 a C test # SKIP dccp: not in this kernel
# selftests: tsm: late.sh
# 1..0 # SKIP dccp: not in this kernel
not ok 6 selftests: tsm: late.sh # exit=1
"""


class NotApplicable(unittest.TestCase):
    """SKIP_IS_FAIL counts every skip as a failure but one: a DCCP test
    on a kernel without DCCP, declared with its reason."""

    def test_declared_reason_is_not_applicable(self):
        for skip_is_fail in (False, True):
            with self.subTest(skip_is_fail=skip_is_fail):
                p, f, s, n, fails = tap_summary.count(NO_DCCP.splitlines(),
                                                      skip_is_fail)
                # 1 and 5 not applicable; 2 and 4 (its own reason, not
                # the plan's) skipped or, under SKIP_IS_FAIL, failed;
                # 6 failed whatever its plan said.
                self.assertEqual((p, n), (1, 2))
                self.assertEqual((f, s), (3, 0) if skip_is_fail else (1, 2))
                self.assertFalse(any("dccp.sh" in x or "C test" in x
                                     for x in fails), fails)
                self.assertTrue(any("late.sh" in x for x in fails))

    def test_other_reasons_and_lookalikes_still_count(self):
        for reason in ("dccp module not available", "needs root",
                       "not in this kernel", "DCCP CCID 3 missing", ""):
            with self.subTest(reason=reason):
                lines = [f"# 1..0 # SKIP {reason}",
                         "ok 1 selftests: x: y.sh # SKIP"]
                self.assertEqual(tap_summary.count(lines, True)[:4],
                                 (0, 1, 0, 0))

    def test_plan_belongs_to_the_next_result_only(self):
        lines = ["# 1..0 # SKIP dccp: not in this kernel", "ok 1 a",
                 "ok 2 b # SKIP"]
        self.assertEqual(tap_summary.count(lines, True)[:4], (1, 1, 0, 0))

    def test_main_exit_and_line(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".tap") as t:
            t.write(NO_DCCP.split("# selftests: flowgen: sctp.sh")[0]
                    .replace("1..6", "1..2") +
                    "ok 2 selftests: tsm: smoke.sh\n")
            t.flush()
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = tap_summary.main(["--skip-is-fail", t.name])
            self.assertEqual(rc, 0, out.getvalue())
            self.assertEqual(out.getvalue().splitlines()[-1],
                             "1 passed, 0 failed, 1 not applicable")


if __name__ == "__main__":
    unittest.main()
