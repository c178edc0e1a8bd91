# SPDX-License-Identifier: GPL-2.0
"""tsm (tools/tsm): the command lines of a tunnel's two ends."""

import os

from lab import REPO

TSM = os.path.join(REPO, "tools", "tsm", "tsm")


def tunnel_server(port, transport, to, stats):
    """The tunnel's server: accepts the tunnel's connection on port and
    hands its datagrams to the UDP address to; statistics into stats."""
    return [TSM, "tunnel", "server", "--listen", str(port),
            "--transport", transport, "--to", to, "--stats", stats]


def tunnel_client(peer, udp, to, transport, queue, stats, lifetime=None):
    """The tunnel's client: takes the application's datagrams at the UDP
    address udp, queues at most queue of them (each at most lifetime ms,
    if given) and sends them over transport to the server at peer."""
    a = [TSM, "tunnel", "client", "--peer", peer, "--udp", udp,
         "--to", to, "--transport", transport, "--queue", str(queue),
         "--stats", stats]
    if lifetime is not None:
        a += ["--lifetime", lifetime]
    return a
