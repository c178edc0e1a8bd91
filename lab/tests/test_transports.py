# SPDX-License-Identifier: GPL-2.0
"""The transport registry, and adding a transport to it the way
Documentation/architecture.rst says: one line in lab/transports.py."""

import unittest
from unittest import mock

from lab import transports
from lab.transports import Transport


class Registry(unittest.TestCase):
    def test_known_transports(self):
        self.assertTrue(transports.tcp_like("tltcp"))
        self.assertFalse(transports.tcp_like("dccp"))
        self.assertTrue(transports.tfrc("dccp"))
        self.assertTrue(transports.datagrams("udp"))
        self.assertIsNone(transports.payload({"transport": "sctp"}))
        self.assertEqual(1400, transports.payload({"transport": "tcp",
                                                   "mss": 1400}))

    def test_unknown_transport_has_no_properties(self):
        self.assertFalse(transports.tcp_like("quic"))
        self.assertIsNone(transports.payload({"transport": "quic"}))

    def test_adding_a_transport_is_one_line(self):
        """A made-up MPTCP entry: every property follows from its line."""
        mptcp = Transport("mptcp", ss="M", sampled=True, tcp=True,
                          payload=1440)
        with mock.patch.dict(transports.TRANSPORTS, {"mptcp": mptcp}):
            self.assertTrue(transports.tcp_like("mptcp"))
            self.assertTrue(transports.sampled("mptcp"))
            self.assertFalse(transports.datagrams("mptcp"))
            self.assertEqual(1440, transports.payload({"transport": "mptcp"}))
        self.assertFalse(transports.tcp_like("mptcp"))


if __name__ == "__main__":
    unittest.main()
