# SPDX-License-Identifier: GPL-2.0
"""The VM runner hands virtme-ng only directories it accepts to mount.

virtme-ng refuses --rodir paths with characters outside [a-zA-Z0-9_+ /.-];
the debug kernel's cache directory holds a Debian version ('1~deb12u1').
"""

import unittest

from lab.vm.__main__ import mountable


class Mountable(unittest.TestCase):
    def test_accepted_path_unchanged(self):
        d = "/var/cache/research-transports/kernels/6.18.15+deb13-amd64"
        self.assertEqual(mountable(d), d)

    def test_nearest_accepted_ancestor(self):
        d = ("/var/cache/research-transports/debug-kernel/"
             "6.12.117-1~deb12u1-0a84d10833fe/mods")
        self.assertEqual(mountable(d),
                         "/var/cache/research-transports/debug-kernel")

    def test_root_at_worst(self):
        self.assertEqual(mountable("/a~b"), "/")


if __name__ == "__main__":
    unittest.main()
