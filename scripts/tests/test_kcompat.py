# SPDX-License-Identifier: GPL-2.0
"""The compat feature checks find each feature in the headers that have it,
and only there (uses the installed Debian header trees)."""

import glob
import os
import subprocess
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "kcompat.sh")


def flags(tree):
    out = subprocess.run(["sh", SCRIPT, tree], capture_output=True,
                         text=True, check=True).stdout
    return set(out.split())


def tree(pattern):
    found = sorted(glob.glob(f"/usr/src/linux-headers-{pattern}-common"))
    return found[-1] if found else None


class FeatureChecks(unittest.TestCase):
    def test_6_1_has_old_cong_control(self):
        t = tree("6.1.0-*")
        if not t:
            self.skipTest("no 6.1 headers installed")
        self.assertNotIn("-DKC_CONG_CONTROL_ACK_FLAG", flags(t))

    def test_6_12_has_new_cong_control(self):
        t = tree("6.12.*")
        if not t:
            self.skipTest("no 6.12 headers installed")
        self.assertIn("-DKC_CONG_CONTROL_ACK_FLAG", flags(t))

    def test_bad_tree_is_an_error(self):
        r = subprocess.run(["sh", SCRIPT, "/nonexistent"],
                           capture_output=True)
        self.assertNotEqual(r.returncode, 0)


if __name__ == "__main__":
    unittest.main()
