# SPDX-License-Identifier: GPL-2.0
"""flowgen on the host's loopback: argument errors, and that the receiver
accounts for exactly what the sender sent (TCP) or every datagram (UDP)."""

import json
import os
import socket
import random
import signal
import subprocess
import tempfile
import time
import unittest

TOOL_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "tools",
                        "flowgen")
FLOWGEN = os.path.join(TOOL_DIR, "flowgen")


def setUpModule():
    subprocess.run(["make", "-s", "-C", TOOL_DIR], check=True)


def run(*args, timeout=30):
    return subprocess.run([FLOWGEN, *args], capture_output=True, text=True,
                          timeout=timeout)


class BadArguments(unittest.TestCase):
    CASES = [
        ([], "exactly one of -s and -c"),
        (["-s", "-c", "x"], "exactly one of -s and -c"),
        (["-c", "127.0.0.1", "-P", "sctp2"], "unknown transport"),
        (["-c", "127.0.0.1", "-t", "-1"], "outside"),
        (["-c", "127.0.0.1", "-t", "abc"], "not a number"),
        (["-c", "127.0.0.1", "-r", "10Q"], "trailing characters"),
        (["-c", "127.0.0.1", "-P", "udp"], "UDP needs a rate"),
        (["-c", "127.0.0.1", "-P", "udp", "-C", "cubic", "-r", "1M"],
         "TCP only"),
        (["-c", "127.0.0.1", "-C", "x" * 16], "longer than"),
        (["-c", "127.0.0.1", "-l", "8"], "outside"),
        (["-c", "127.0.0.1", "-t", "1", "-i", "2"], "longer than the flow"),
        (["-s", "-r", "1M"], "client options"),
        (["-c", "127.0.0.1", "extra"], "unexpected argument"),
        (["-c", "127.0.0.1", "-K", "3"], "DCCP only"),
        (["-c", "127.0.0.1", "-P", "dccp", "-K", "4"], "outside"),
        (["-c", "127.0.0.1", "-P", "dccp", "-K", "2.5"], "CCID is 2 or 3"),
        (["-c", "127.0.0.1", "-M", "40"], "outside"),
        (["-c", "127.0.0.1", "-P", "dccp", "-M", "500"], "TCP only"),
        (["-s", "-M", "500"], "client options"),
        (["-c", "127.0.0.1", "-T", "100"], "SCTP only"),
        (["-c", "127.0.0.1", "-P", "sctp", "-T", "0"], "outside"),
        (["-c", "127.0.0.1", "-O", "1"], "needs 2 comma-separated"),
        (["-c", "127.0.0.1", "-O", "1,2,3"], "more than 2"),
        (["-c", "127.0.0.1", "-O", "1,x"], "not a number"),
        (["-c", "127.0.0.1", "-D", "10,1,1"], "outside"),
        (["-c", "127.0.0.1", "-D", "1000,1"], "needs 3"),
        (["-c", "127.0.0.1", "-P", "dccp", "-D", "1000,1,1"],
         "not supported"),
        (["-c", "127.0.0.1", "-D", "1000,1,1", "-r", "1M"], "drop -r"),
        (["-c", "127.0.0.1", "-P", "udp", "-D", "1000,1,1", "-l", "40"],
         "header"),
        (["-s", "-D", "1000,1,1"], "client options"),
        (["-c", "127.0.0.1", "-P", "tltcp2"], "unknown transport"),
        (["-c", "127.0.0.1", "-P", "tltcp", "-T", "100"], "SCTP only"),
        (["-c", "127.0.0.1", "-P", "tltcp", "-K", "2"], "DCCP only"),
        (["-c", "127.0.0.1", "-W", "15000"], "server options"),
        (["-c", "127.0.0.1", "-S", "trace.csv"], "server options"),
        (["-s", "-W", "100"], "outside"),
        (["-s", "-W", "1e10"], "outside"),
        (["-s", "-P", "sctp", "-W", "15000"], "TCP and TLTCP only"),
        (["-s", "-P", "udp", "-S", "trace.csv"], "not UDP"),
        (["-c", "127.0.0.1", "-D", "1000,1,1", "-A"], "TLTCP sections"),
        (["-c", "127.0.0.1", "-P", "tltcp", "-A"], "TLTCP sections"),
        (["-s", "-A"], "client options"),
        (["-c", "127.0.0.1", "-P", "udp", "-R", "800,0.5"], "with -r"),
        (["-c", "127.0.0.1", "-P", "udp", "-r", "8k", "-R", "800"],
         "needs 2"),
        (["-c", "127.0.0.1", "-P", "udp", "-r", "8k", "-R", "800,0"],
         "outside"),
        (["-s", "-P", "udp", "-R", "800,0.5"], "client options"),
        (["-c", "127.0.0.1", "-P", "udp", "-r", "8k", "-I", "5"],
         "server options"),
        (["-s", "-I", "5"], "UDP only"),
        (["-s", "-P", "udp", "-I", "-1"], "outside"),
    ]

    def test_each_is_refused_with_a_message(self):
        for args, msg in self.CASES:
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(msg, r.stderr)

    def test_unknown_congestion_control(self):
        port = str(random.randint(20000, 40000))
        srv = subprocess.Popen([FLOWGEN, "-s", "-p", port],
                               stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.2)
            r = run("-c", "127.0.0.1", "-p", port, "-C", "nosuchcc", "-t",
                    "1")
            self.assertEqual(r.returncode, 1)
            self.assertIn("congestion control 'nosuchcc'", r.stderr)
        finally:
            srv.kill()
            srv.wait()

    @unittest.skipIf(os.path.exists("/sys/module/tltcp"),
                     "the tltcp module is loaded here")
    def test_tltcp_without_the_module(self):
        # Both ends say what is missing before they connect or listen.
        for args in (["-c", "127.0.0.1", "-P", "tltcp", "-t", "1"],
                     ["-s", "-P", "tltcp", "-p", "9"]):
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, 1)
                self.assertIn("tltcp not available: modprobe tltcp",
                              r.stderr)

    def test_dccp_refused_where_the_kernel_has_none(self):
        # This project's hosts run kernels without DCCP (Linux 6.16 removed
        # it); where a DCCP socket opens, -P dccp gets as far as connect().
        try:
            socket.socket(socket.AF_INET, 6, 33).close()  # SOCK_DCCP
            r = run("-c", "127.0.0.1", "-P", "dccp", "-p", "9", "-t", "1")
            self.assertEqual(r.returncode, 1)
            self.assertIn("connect to 127.0.0.1 port 9", r.stderr)
            return
        except OSError:
            pass
        for args in (["-c", "127.0.0.1", "-P", "dccp", "-t", "1"],
                     ["-s", "-P", "dccp", "-p", "9"],
                     ["-s", "-P", "dccp", "-6", "-p", "9"]):
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(r.returncode, 1)
                self.assertRegex(r.stderr, r"-P dccp: DCCP is not in this "
                                 r"kernel \(socket: E[A-Z]+; .*\): for "
                                 r"TFRC's equation over TCP use -P tcp -C "
                                 r"multfrc")

    def test_nobody_listening(self):
        r = run("-c", "127.0.0.1", "-p", "9", "-t", "1")
        self.assertEqual(r.returncode, 1)
        self.assertIn("connect to 127.0.0.1 port 9", r.stderr)


class Loopback(unittest.TestCase):
    # Rates and idle timeouts hold only while the host gives flowgen's
    # sender and receiver the CPU when they ask for it.
    MEASURES_TIME = True

    def flow(self, *client_args, server_args=(), trace=None, during=None):
        # during(server): called once the client has started.
        port = str(random.randint(20000, 40000))
        with tempfile.TemporaryDirectory() as d:
            srv_out, cli_out = os.path.join(d, "s"), os.path.join(d, "c")
            proto = ["-P", "udp"] if "udp" in client_args else []
            extra = list(server_args)
            if trace is not None:
                extra += ["-S", os.path.join(d, "trace.csv")]
            srv = subprocess.Popen([FLOWGEN, "-s", "-p", port, "-o", srv_out,
                                    *proto, *extra])
            time.sleep(0.2)
            cli = subprocess.Popen([FLOWGEN, "-c", "127.0.0.1", "-p", port,
                                    "-o", cli_out, *client_args],
                                   stderr=subprocess.PIPE, text=True)
            if during:
                during(srv)
            _, cli_err = cli.communicate(timeout=30)
            srv.wait(timeout=10)
            self.assertEqual(cli.returncode, 0, cli_err)
            self.assertEqual(srv.returncode, 0)
            if trace is not None:
                with open(os.path.join(d, "trace.csv")) as f:
                    trace.extend(f.read().splitlines())
            with open(srv_out) as f, open(cli_out) as g:
                return json.load(f), json.load(g)

    def test_tcp_sequence_trace_and_window_clamp(self):
        # One line per read: its time, the stream offset of its first
        # byte, its length; offsets follow from lengths, end at the bytes
        # received.  A clamped window (-W) still carries the flow.
        trace = []
        rcv, snd = self.flow("-t", "1", "-i", "0.5",
                             server_args=["-W", "15000"], trace=trace)
        self.assertEqual(trace[0], "time,stream_off,len,type")
        rows = [line.split(",") for line in trace[1:]]
        self.assertTrue(rows)
        off, last_t = 0, 0.0
        for t, o, n, kind in rows:
            self.assertEqual((int(o), kind), (off, "data"))
            self.assertGreaterEqual(float(t), last_t)
            off += int(n)
            last_t = float(t)
        self.assertEqual(float(rows[0][0]), 0.0)
        self.assertEqual(off, rcv["summary"]["bytes"])
        self.assertEqual(off, snd["summary"]["bytes"])

    def test_tcp_bytes_sent_are_bytes_received(self):
        rcv, snd = self.flow("-t", "1", "-i", "0.5")
        self.assertGreater(snd["summary"]["bytes"], 0)
        self.assertEqual(rcv["summary"]["bytes"], snd["summary"]["bytes"])
        self.assertEqual(sum(i["bytes"] for i in rcv["intervals"]),
                         rcv["summary"]["bytes"])
        self.assertIn("cwnd", snd["intervals"][0])
        # Flows of one run line up on the wall clock: the receiver's first
        # byte follows the sender's connect by a loopback moment.
        lag = rcv["epoch"] - snd["epoch"]
        self.assertTrue(-0.01 < lag < 0.5, lag)

    def test_tcp_mss_clamp(self):
        # Every interval in which the sender sampled TCP_INFO carries the
        # running totals; -M 500 makes at least ~1 MB / 500 B segments.
        rcv, snd = self.flow("-t", "1", "-i", "0.25", "-M", "500")
        last = [i for i in snd["intervals"] if i["segs_out"]][-1]
        self.assertGreaterEqual(last["segs_out"] * 500,
                                rcv["summary"]["bytes"])
        sampled = [i for i in snd["intervals"] if i["rtt_us"]]
        self.assertEqual(len(sampled), len(snd["intervals"]))

    def test_sections_over_tcp_and_udp(self):
        # 10 sections a second, 0.5 s to live: on loopback every one
        # arrives whole and in time, and the receiver counts each.
        for args in (["-D", "10000,0.1,0.5"],
                     ["-P", "udp", "-D", "5000,0.1,0.5", "-l", "1000"]):
            with self.subTest(args=args):
                rcv, snd = self.flow("-t", "1", "-i", "0.5", *args)
                offered = snd["summary"]["sections_offered"]
                self.assertEqual(offered, 10)
                r = rcv["summary"]
                self.assertEqual(r["sections"], offered)
                self.assertEqual(r["sections_on_time"], offered)
                self.assertEqual(r["sections_missing"], 0)
                self.assertEqual(r["on_time_bytes"],
                                 snd["summary"]["bytes_offered"])
                self.assertEqual(r["late_bytes"], 0)
                self.assertEqual(sum(i["on_time_bytes"]
                                     for i in rcv["intervals"]),
                                 r["on_time_bytes"])

    def test_on_off(self):
        # On 0.2 s, off 0.3 s: the sender writes nothing in off periods.
        rcv, snd = self.flow("-t", "2", "-i", "0.1", "-O", "0.2,0.3")
        quiet = [i["bytes"] for i in snd["intervals"]
                 if 0.25 <= round(i["start"], 3) % 0.5 < 0.45]
        busy = [i["bytes"] for i in snd["intervals"]
                if round(i["start"], 3) % 0.5 < 0.15]
        self.assertTrue(quiet and busy)
        self.assertEqual(sum(quiet), 0)
        self.assertTrue(all(busy))
        self.assertEqual(rcv["summary"]["bytes"], snd["summary"]["bytes"])

    def test_udp_cbr_rate_and_no_loss(self):
        # 4 Mbit/s of 1000-byte datagrams for 1 s: 500 datagrams (a few
        # fewer if the machine is too busy to send the last ones in time).
        rcv, snd = self.flow("-P", "udp", "-r", "4M", "-l", "1000", "-t",
                             "1")
        self.assertTrue(490 <= rcv["summary"]["packets"] <= 500)
        self.assertEqual(rcv["summary"]["lost"], 0)
        self.assertEqual(rcv["summary"]["rcvbuf_drops"], 0)
        self.assertEqual(rcv["summary"]["bytes"], snd["summary"]["bytes"])

    def test_udp_receiver_overflow_counted_apart(self):
        # A receiver stopped for half a second of 40 Mbit/s overflows its
        # socket buffer: every datagram lost on loopback is one the
        # kernel dropped there, and the receiver says so.
        def pause(srv):
            time.sleep(0.2)
            srv.send_signal(signal.SIGSTOP)
            time.sleep(0.5)
            srv.send_signal(signal.SIGCONT)

        rcv, snd = self.flow("-P", "udp", "-r", "40M", "-l", "1000", "-t",
                             "1", during=pause)
        r = rcv["summary"]
        self.assertGreater(r["lost"], 0)
        self.assertEqual(r["rcvbuf_drops"], r["lost"])
        self.assertEqual(r["packets"] + r["lost"],
                         snd["summary"]["bytes"] // 1000)

    def test_udp_rate_ramp(self):
        # 80 kbit/s plus 80 kbit/s every 0.5 s in 100-byte datagrams: the
        # sender's half-second intervals carry 5000, 10000, 15000 and
        # 20000 bytes, and the receiver gets every datagram.
        rcv, snd = self.flow("-P", "udp", "-r", "80k", "-R", "80k,0.5",
                             "-l", "100", "-t", "2", "-i", "0.5")
        got = [i["bytes"] for i in snd["intervals"]][:4]
        for k, b in enumerate(got, 1):
            self.assertAlmostEqual(b, 5000 * k, delta=500 * k, msg=got)
        self.assertEqual(rcv["summary"]["lost"], 0)
        self.assertEqual(rcv["summary"]["bytes"], snd["summary"]["bytes"])

    def test_udp_idle_timeout(self):
        # A 1.5 s pause: 0.75 s of silence ends the receiver's flow in
        # it, -I 3 keeps it for the second burst.
        args = ("-P", "udp", "-r", "80k", "-l", "100", "-t", "2",
                "-O", "0.25,1.5")
        rcv, snd = self.flow(*args, server_args=("-I", "0.75"))
        self.assertLess(rcv["summary"]["bytes"], snd["summary"]["bytes"])
        rcv, snd = self.flow(*args, server_args=("-I", "3"))
        self.assertEqual(rcv["summary"]["bytes"], snd["summary"]["bytes"])


if __name__ == "__main__":
    unittest.main()
