# SPDX-License-Identifier: GPL-2.0
"""The compat feature checks find each feature in the headers that have it,
and only there (uses the installed Debian header trees)."""

import glob
import os
import shutil
import subprocess
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "include",
                      "compat", "kcompat.sh")


def flags(tree):
    out = subprocess.run(["sh", SCRIPT, tree], capture_output=True,
                         text=True, check=True).stdout
    return set(out.split())


KCACHE = os.environ.get("RT_KCACHE", "/var/cache/research-transports")


def tree(pattern):
    """Newest headers tree matching PATTERN, installed or in a build
    chroot of scripts/kernels.sh."""
    found = sorted(glob.glob(f"/usr/src/linux-headers-{pattern}-common") +
                   glob.glob(f"{KCACHE}/chroot/*/usr/src/"
                             f"linux-headers-{pattern}-common"))
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

    def test_6_1_flags(self):
        t = tree("6.1.0-*")
        if not t:
            self.skipTest("no 6.1 headers installed")
        # Debian's 6.1 carries sk_use_task_frag (a 6.2 change) backported.
        self.assertEqual({"-DKC_PROTO_SENDPAGE", "-DKC_OPS_SENDPAGE_LOCKED",
                          "-DKC_SK_USE_TASK_FRAG", "-DKC_RECVMSG_ADDR_LEN"},
                         flags(t))

    def test_6_12_flags(self):
        t = tree("6.12.*")
        if not t:
            self.skipTest("no 6.12 headers installed")
        self.assertEqual({"-DKC_CONG_CONTROL_ACK_FLAG", "-DKC_ITER_IOV",
                          "-DKC_SK_USE_TASK_FRAG", "-DKC_TCP_SPLICE_PAGES",
                          "-DKC_RECVMSG_ADDR_LEN"},
                         flags(t))

    def test_6_18_flags(self):
        t = tree("6.18.*")
        if not t:
            self.skipTest("no 6.18 headers (make deps provides them)")
        self.assertEqual({"-DKC_CONG_CONTROL_ACK_FLAG", "-DKC_ITER_IOV",
                          "-DKC_SK_USE_TASK_FRAG", "-DKC_TCP_SPLICE_PAGES",
                          "-DKC_RECVMSG_ADDR_LEN", "-DKC_HRTIMER_SETUP"},
                         flags(t))

    def test_7_3_flags(self):
        """7.3 dropped recvmsg's addr_len."""
        t = tree("7.3.*")
        if not t:
            self.skipTest("no 7.3 headers (make deps provides them)")
        self.assertEqual({"-DKC_CONG_CONTROL_ACK_FLAG", "-DKC_ITER_IOV",
                          "-DKC_SK_USE_TASK_FRAG", "-DKC_TCP_SPLICE_PAGES",
                          "-DKC_HRTIMER_SETUP"},
                         flags(t))

    def test_unknown_header_fails_closed(self):
        """A header that matches neither pattern of a probe names the probe
        in a KCOMPAT_FAILED token (Kbuild stops on it), never a guess."""
        t = tree("6.12.*") or tree("6.1.0-*")
        if not t:
            self.skipTest("no headers installed")
        with tempfile.TemporaryDirectory() as d:
            for h in ("net/tcp.h", "net/sock.h", "linux/uio.h",
                      "linux/net.h", "linux/skbuff.h", "linux/hrtimer.h"):
                os.makedirs(os.path.join(d, "include", os.path.dirname(h)),
                            exist_ok=True)
                shutil.copy(os.path.join(t, "include", h),
                            os.path.join(d, "include", h))
            sock = os.path.join(d, "include", "net", "sock.h")
            with open(sock) as f:
                text = f.read()
            with open(sock, "w") as f:
                f.write(text.replace("(*sendpage)", "(*send_page)")
                        .replace("(*splice_eof)", "(*splice_end)"))
            out = flags(d)
        self.assertIn("KCOMPAT_FAILED:KC_PROTO_SENDPAGE", out)
        self.assertNotIn("-DKC_PROTO_SENDPAGE", out)

    def test_bad_tree_is_an_error(self):
        r = subprocess.run(["sh", SCRIPT, "/nonexistent"],
                           capture_output=True)
        self.assertNotEqual(r.returncode, 0)


if __name__ == "__main__":
    unittest.main()
