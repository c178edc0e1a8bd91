# SPDX-License-Identifier: GPL-2.0
"""The VM runner boots once more when the kernel dies before the command.

virtme-ng is replaced by a fake ``vng`` (VM_VNG) that follows a plan, one
word per boot: ``die`` prints a kernel panic on the console and exits
before the guest's wrapper ran (no ``booted`` file), ``ok`` plays a guest
whose command exited 0 with a clean log.  The kernel is a fake one in a
private RT_KCACHE, so nothing here boots or needs an installed kernel.
"""

import os
import subprocess
import sys
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
REL = "6.99.0-test-amd64"

FAKE_VNG = r'''#!PYTHON
import os, shlex, sys
d = os.environ["FAKE_VNG_DIR"]
count = os.path.join(d, "count")
n = int(open(count).read()) if os.path.exists(count) else 0
open(count, "w").write(str(n + 1))
plan = os.environ["FAKE_VNG_PLAN"].split(",")
what = plan[min(n, len(plan) - 1)]
if what == "die":
    sys.stderr.write("[    1.7] Oops: int3: 0000 [#1] SMP NOPTI\n"
                     "[    1.8] Kernel panic - not syncing: Fatal exception\n")
    sys.exit(0)
guest = shlex.split(sys.argv[sys.argv.index("--exec") + 1])
state = guest[1]
for name, text in (("booted", "1.0"), ("dmesg", ""), ("taint", "0"),
                   ("status", "0")):
    with open(os.path.join(state, name), "w") as f:
        f.write(text + "\n")
print("command ran")
'''


class BootRetry(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        boot = os.path.join(t, "kcache", "kernels", REL, "boot")
        os.makedirs(boot)
        open(os.path.join(boot, f"vmlinuz-{REL}"), "w").close()
        open(os.path.join(t, "kcache", "kernels", REL, ".ready"), "w").close()
        os.makedirs(os.path.join(t, "bin"))
        vng = os.path.join(t, "bin", "vng")
        with open(vng, "w") as f:
            f.write(FAKE_VNG.replace("PYTHON", sys.executable))
        os.chmod(vng, 0o755)

    def tearDown(self):
        self.tmp.cleanup()

    def run_vm(self, plan):
        t = self.tmp.name
        env = dict(os.environ, RT_KCACHE=os.path.join(t, "kcache"),
                   FAKE_VNG_DIR=t, FAKE_VNG_PLAN=plan,
                   VM_VNG=os.path.join(t, "bin", "vng"))
        env.pop("VM_VERBOSE", None)
        p = subprocess.run(
            [sys.executable, "-m", "lab.vm", "--kernel", REL, "--accel",
             "tcg", "--results", os.path.join(t, "results"), "--", "true"],
            cwd=TOP, env=env, capture_output=True, text=True, timeout=60)
        with open(os.path.join(t, "count")) as f:
            boots = int(f.read())
        return p.returncode, boots, p.stdout, p.stderr

    def test_clean_boot_boots_once(self):
        rc, boots, out, err = self.run_vm("ok")
        self.assertEqual((rc, boots), (0, 1), err)
        self.assertIn("command ran", out)
        self.assertNotIn("died during boot", err)

    def test_death_during_boot_boots_once_more(self):
        rc, boots, out, err = self.run_vm("die,ok")
        self.assertEqual((rc, boots), (0, 2), err)
        self.assertIn("command ran", out)
        self.assertIn("died during boot, before the command (oops:", err)

    def test_second_death_fails_the_run(self):
        rc, boots, _, err = self.run_vm("die")
        self.assertNotEqual(rc, 0)
        self.assertEqual(boots, 2, err)
        self.assertEqual(err.count("booting once more"), 1, err)
        self.assertIn("guest ended without a status", err)
        self.assertIn("Kernel panic - not syncing", err)


if __name__ == "__main__":
    unittest.main()
