# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the guest kernel log scanner on sample logs."""

import contextlib
import io
import os
import unittest

from lab.vm import kmsg_scan

DATA = os.path.join(os.path.dirname(__file__), "kmsg")


def kinds(name, taint=None):
    with open(os.path.join(DATA, name)) as f:
        text = f.read()
    return sorted({p.split(":", 1)[0] for p in kmsg_scan.scan(text, taint)})


class ScanLogs(unittest.TestCase):
    def test_clean_boot_is_clean(self):
        self.assertEqual(kinds("clean-boot-6.1.log", 0), [])

    def test_benign_bug_words_and_oe_taint_are_clean(self):
        self.assertEqual(kinds("benign.log", 4096 | 8192), [])

    def test_warn(self):
        self.assertEqual(kinds("warn.log"), ["warn"])

    def test_null_deref_oops(self):
        self.assertEqual(kinds("oops.log"), ["bug", "oops"])

    def test_lockdep(self):
        self.assertEqual(kinds("lockdep.log"), ["lockdep"])

    def test_refcount(self):
        self.assertEqual(kinds("refcount.log"), ["refcount", "warn"])

    def test_kasan(self):
        self.assertEqual(kinds("kasan.log"), ["kasan"])

    def test_kfence(self):
        self.assertEqual(kinds("kfence.log"), ["kfence"])

    def test_ubsan(self):
        self.assertEqual(kinds("ubsan.log"), ["ubsan"])

    def test_kmemleak_in_log(self):
        self.assertEqual(kinds("kmemleak.log"), ["leak"])

    def test_kmemleak_report_file(self):
        # What check-debug scans after "echo scan > .../kmemleak".
        self.assertEqual(kinds("kmemleak-report.txt"), ["leak"])

    def test_kmemleak_switched_off(self):
        self.assertEqual(kinds("kmemleak-off.log"), ["kmemleak-off"])

    def test_lockdep_irq_lock_order(self):
        self.assertEqual(kinds("lockdep-irq.log"), ["lockdep"])

    def test_debug_objects(self):
        self.assertEqual(kinds("odebug.log"), ["debugobjects"])

    def test_net_refcount_tracker(self):
        self.assertEqual(kinds("refcnt-tracker.log"), ["refcount"])

    def test_debug_kernel_boot_is_clean(self):
        self.assertEqual(kinds("clean-debug-boot.log", 0), [])

    def test_soft_lockup(self):
        self.assertEqual(kinds("softlockup.log"), ["soft-lockup"])

    def test_hung_task(self):
        self.assertEqual(kinds("hung-task.log"), ["hung-task"])

    def test_rcu_stall(self):
        self.assertEqual(kinds("rcu-stall.log"), ["rcu-stall"])

    def test_sleeping_in_atomic(self):
        self.assertEqual(kinds("sleeping-in-atomic.log"), ["bug"])

    def test_tainted_line_with_die_flag(self):
        self.assertEqual(kinds("taint-die.log"), ["taint"])

    def test_caller_id_prefix(self):
        text = "[   1.000000][  T412] WARNING: CPU: 0 PID: 412 at x.c:1 f+0x0/0x1\n"
        self.assertEqual(len(kmsg_scan.scan(text)), 1)


class Taint(unittest.TestCase):
    def test_letters(self):
        self.assertEqual(kmsg_scan.taint_letters(4096 | 8192), "OE")
        self.assertEqual(kmsg_scan.taint_letters(512), "W")

    def test_allowed(self):
        self.assertEqual(kmsg_scan.bad_taint(0), "")
        self.assertEqual(kmsg_scan.bad_taint(4096), "")
        self.assertEqual(kmsg_scan.bad_taint(4096 | 8192), "")

    def test_refused(self):
        self.assertEqual(kmsg_scan.bad_taint(512 | 4096), "W")   # warned
        self.assertEqual(kmsg_scan.bad_taint(128), "D")          # died
        self.assertEqual(kmsg_scan.bad_taint(1), "P")            # proprietary
        self.assertTrue(kmsg_scan.scan("", 512 | 8192))

    def test_main_exit_status(self):
        with contextlib.redirect_stdout(io.StringIO()):
            self._main_exit_status()

    def _main_exit_status(self):
        self.assertEqual(kmsg_scan.main([os.path.join(DATA, "benign.log"),
                                         "--taint", "12288"]), 0)
        self.assertEqual(kmsg_scan.main([os.path.join(DATA, "warn.log")]), 1)


class Excerpt(unittest.TestCase):
    """What the VM runner prints of a guest's log when a run fails."""

    @staticmethod
    def log(before, report, after):
        clean = [f"[ {i:4d}.000000] eth0: link up {i}" for i in range(before)]
        oops = ["[ 588.000000] traps: PANIC: double fault, error_code: 0x0",
                "[ 588.000001] Oops: double fault: 0000 [#1] PREEMPT SMP"]
        oops += [f"[ 588.{i:06d}] trace frame {i}" for i in range(report)]
        end = [f"[ 588.9{i:05d}] register line {i}" for i in range(after)]
        return "\n".join(clean + oops + end +
                         ["[ 588.999999] Kernel panic - not syncing: "
                          "Fatal exception in interrupt"])

    def test_from_a_little_before_the_first_report(self):
        # the first report is the Oops line (the PANIC line before it
        # is context): five lines before it on
        lines = kmsg_scan.excerpt(self.log(200, 20, 5))
        self.assertEqual(lines[0], "[  196.000000] eth0: link up 196")
        self.assertIn("Oops: double fault", lines[5])
        self.assertEqual(len(lines), 5 + 1 + 20 + 5 + 1)
        self.assertIn("Kernel panic", lines[-1])

    def test_a_long_report_keeps_its_start_and_the_end(self):
        lines = kmsg_scan.excerpt(self.log(10, 300, 5), limit=120)
        self.assertEqual(len(lines), 120)
        self.assertIn("trace frame 0", lines[6])
        self.assertRegex(lines[-13], r"^\[\.\.\. \d+ lines \.\.\.\]$")
        self.assertIn("Kernel panic", lines[-1])
        # every line of the log is shown or counted as skipped
        skipped = int(lines[-13].split()[1])
        self.assertEqual(len(lines) - 1 + skipped, 5 + 1 + 300 + 5 + 1)

    def test_no_report_gives_the_last_lines(self):
        text = "\n".join(f"line {i}" for i in range(100))
        self.assertEqual(kmsg_scan.excerpt(text, tail=40)[0], "line 60")
        self.assertEqual(kmsg_scan.excerpt(""), [])


if __name__ == "__main__":
    unittest.main()
