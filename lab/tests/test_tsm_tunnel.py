# SPDX-License-Identifier: GPL-2.0
"""tsm tunnel on the host (Documentation/tsm.rst, "Tunnel"): bad arguments
exit 2 naming the problem; over TCP on the loopback (the host has no DCCP)
datagrams arrive intact and in order, replies come back, the counters add
up, and the client reconnects to a restarted server."""

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

TOP = os.path.join(os.path.dirname(__file__), "..", "..")
DIR = os.path.join(TOP, "tools", "tsm")
TSM = os.path.join(DIR, "tsm")


def setUpModule():
    subprocess.run(["make", "-s", "-C", DIR, "tsm", "CFLAGS=-O2 -g -Werror"],
                   check=True)


def free_port(kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Arguments(unittest.TestCase):
    CASES = [
        (["client", "--udp", "1", "--to", "h:1"], "--peer HOST:PORT is required"),
        (["client", "--peer", "h:1", "--to", "h:1"], "--udp [ADDR:]PORT is required"),
        (["client", "--peer", "h:1", "--udp", "1"], "--to HOST:PORT is required"),
        (["client", "--peer", "h", "--udp", "1", "--to", "h:1"], "is not HOST:PORT"),
        (["client", "--peer", "h:0", "--udp", "1", "--to", "h:1"], "the port must be 1 to 65535"),
        (["client", "--peer", "::1:5", "--udp", "1", "--to", "h:1"], "brackets"),
        (["client", "--peer", "[::1:5", "--udp", "1", "--to", "h:1"], "is not [ADDRESS]:PORT"),
        (["server", "--listen", "7", "--transport", "quic"], "unknown transport 'quic'"),
        (["server", "--listen", "7", "--transport", "multfrc:x"], "'x' is not a number"),
        (["server", "--listen", "7", "--queue", "0"], "--queue: '0' is not a number from 1"),
        (["server", "--listen", "7", "--queue", "1.5"], "not a whole number"),
        (["server", "--listen", "7", "--interval", "-1"], "--interval"),
        (["server", "--listen", "7", "--udp", "1"], "--udp is a client option"),
        (["server"], "--listen [ADDR:]PORT is required"),
        (["client", "--peer", "h:1", "--udp", "1", "--to", "h:1",
          "--redirect-uid", "0"], "need --redirect-port"),
        (["cleanup", "--queue", "2"], "cleanup takes only --redirect-port"),
        (["frob"], "unknown command 'frob'"),
        (["server", "--listen", "7", "extra"], "unexpected argument 'extra'"),
    ]

    def test_bad_arguments(self):
        for args, want in self.CASES:
            with self.subTest(args=args):
                r = subprocess.run([TSM, "tunnel", *args], capture_output=True,
                                   text=True, timeout=10)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(want, r.stderr)


class Loopback(unittest.TestCase):
    # The sink and the application wait 2 s at most for a datagram.
    MEASURES_TIME = True

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.procs = []
        self.tport = free_port()
        self.uport = free_port(socket.SOCK_DGRAM)
        self.sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # It reads only after the application sent everything.
        try:
            self.sink.setsockopt(socket.SOL_SOCKET, 33, 1 << 22)  # FORCE
        except OSError:
            self.sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.sink.bind(("127.0.0.1", 0))
        self.sink.settimeout(2)
        self.dport = self.sink.getsockname()[1]

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.sink.close()

    def start(self, role, *args, transport=("--transport", "tcp")):
        stats = os.path.join(self.tmp, role + ".json")
        p = subprocess.Popen([TSM, "tunnel", role, *transport,
                              "--stats", stats, "--interval", "0.1", *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        self.procs.append(p)
        return p, stats

    def wait_stats(self, path, cond):
        for _ in range(100):
            try:
                with open(path) as f:
                    d = json.load(f)
                if cond(d):
                    return d
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        self.fail(f"{path}: condition never held")

    def stop(self, p):
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, 0, err)
        return json.loads(out.strip().splitlines()[-1])

    def test_intact_in_order_replies_restart(self):
        srv, _ = self.start("server", "--listen", f"127.0.0.1:{self.tport}")
        time.sleep(0.2)
        cli, cstats = self.start("client", "--peer", f"127.0.0.1:{self.tport}",
                                 "--udp", f"127.0.0.1:{self.uport}",
                                 "--to", f"127.0.0.1:{self.dport}",
                                 "--queue", "64")
        self.wait_stats(cstats, lambda d: d["connected"])
        app = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        app.connect(("127.0.0.1", self.uport))
        app.settimeout(2)
        sent = [b"%06d" % i + bytes([i % 256]) * (i % 500) for i in range(300)]
        for i, d in enumerate(sent):
            app.send(d)
            if i % 20 == 19:
                time.sleep(0.02)
        got = []
        while len(got) < len(sent):
            try:
                d, src = self.sink.recvfrom(65536)
            except socket.timeout:
                break
            got.append(d)
        self.assertEqual(len(got), len(sent), open(os.path.join(self.tmp, "client.json")).read())
        self.assertEqual(got, sent)
        self.sink.sendto(b"reply", src)
        self.assertEqual(app.recv(100), b"reply")

        # The server killed and restarted: the client reconnects.
        srv.kill()
        srv.wait()
        srv, sstats = self.start("server", "--listen", f"127.0.0.1:{self.tport}")
        self.wait_stats(cstats, lambda d: d["reconnects"] >= 1 and d["connected"])
        app.send(b"after")
        self.assertEqual(self.sink.recvfrom(100)[0], b"after")
        c = self.stop(cli)
        s = self.stop(srv)
        self.assertTrue(c["final"])
        self.assertEqual(c["from_app"]["datagrams"], 301)
        self.assertEqual(c["from_app"]["datagrams"],
                         c["to_tunnel"]["datagrams"] +
                         c["dropped_queue_full"]["datagrams"] +
                         c["dropped_disconnected"]["datagrams"] +
                         c["dropped_expired"]["datagrams"] +
                         c["dropped_other"]["datagrams"] + c["queued"])
        self.assertEqual(c["to_app"]["datagrams"], 1)
        self.assertEqual(s["delivered"]["datagrams"], 1)
        self.assertEqual(s["connects"], 1)

    def test_default_transport_follows_the_kernel(self):
        """Without --transport: DCCP CCID 3 where the kernel has DCCP;
        where not (this project's hosts run kernels without it), TCP with
        TFRC's equation or reno, said in one line, and the datagrams go
        through."""
        try:
            socket.socket(socket.AF_INET, 6, 33).close()  # SOCK_DCCP
            dccp = True
        except OSError:
            dccp = False
        srv, _ = self.start("server", "--listen", f"127.0.0.1:{self.tport}",
                            transport=())
        time.sleep(0.2)
        cli, cstats = self.start("client", "--peer", f"127.0.0.1:{self.tport}",
                                 "--udp", f"127.0.0.1:{self.uport}",
                                 "--to", f"127.0.0.1:{self.dport}",
                                 transport=())
        self.wait_stats(cstats, lambda d: d["connected"])
        app = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        app.connect(("127.0.0.1", self.uport))
        for i in range(20):
            app.send(b"%d" % i)
            time.sleep(0.01)
        got = []
        for _ in range(20):
            try:
                got.append(self.sink.recvfrom(100)[0])
            except socket.timeout:
                break
        cli.send_signal(signal.SIGTERM)
        out, err = cli.communicate(timeout=10)
        self.stop(srv)
        c = json.loads(out.strip().splitlines()[-1])
        err = [x for x in err.splitlines() if "instead" in x]
        if dccp:
            self.assertEqual(c["transport"], "dccp-ccid3")
        else:
            self.assertIn(c["transport"], ("multfrc", "tcp"))
            self.assertEqual(len(err), 1, err)
            self.assertRegex(err[0], r"^tsm tunnel client: DCCP not in this "
                             r"kernel \(socket: E[A-Z]+\): over TCP with "
                             r".* instead, the same bounded queue")
        self.assertEqual(got, [b"%d" % i for i in range(20)])


if __name__ == "__main__":
    unittest.main()
