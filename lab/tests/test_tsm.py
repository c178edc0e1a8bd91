# SPDX-License-Identifier: GPL-2.0
"""The transport services middleware (tools/tsm): the decision's own
table-driven C test (every row of Documentation/tsm.rst's tables, every
fallback, policy overrides, bad requirements and bad policy files), one
result per case; and the tsm command line: policy files by option and by
TSM_POLICY, errors and exit statuses, probe, and a TCP transfer over the
host's loopback with the unified statistics."""

import errno
import os
import re
import socket
import subprocess
import tempfile
import time
import unittest

TOP = os.path.join(os.path.dirname(__file__), "..", "..")
DIR = os.path.join(TOP, "tools", "tsm")
TSM = os.path.join(DIR, "tsm")
# Everything there, as tsm_offer_parse() spells it.
ALL = ("cc=cubic,reno,bbr,reno_tw,multfrc,multfrc_0.5,multfrc_2 "
       "multfrc_n=1 tltcp dccp=2,3 sctp")


def setUpModule():
    subprocess.run(["make", "-s", "-C", DIR, "tsm", "test_select",
                    "CFLAGS=-O2 -g -Werror"], check=True)


def tsm(*args, env=None, timeout=20):
    e = dict(os.environ)
    e.pop("TSM_POLICY", None)
    e.update(env or {})
    return subprocess.run([TSM, *args], capture_output=True, text=True,
                          timeout=timeout, env=e)


class DecisionTable(unittest.TestCase):
    """test_select's cases; a failure names every failing row."""

    def test_every_case(self):
        r = subprocess.run([os.path.join(DIR, "test_select")],
                           capture_output=True, text=True, timeout=30)
        plan = re.search(r"^1\.\.(\d+)$", r.stdout, re.M)
        self.assertTrue(plan, r.stdout)
        results = re.findall(r"^(not )?ok \d+ (.*)\n(# .*)?", r.stdout, re.M)
        self.assertEqual(len(results), int(plan.group(1)), r.stdout)
        self.assertGreater(len(results), 90)
        # All failing rows at once, each with its diagnosis.
        failed = [f"{name}: {diag}" for neg, name, diag in results if neg]
        self.assertEqual(failed, [])
        self.assertEqual(r.returncode, 0, r.stdout)


class Select(unittest.TestCase):
    def kv(self, *args, env=None):
        r = tsm("select", "--kv", "--assume", ALL, *args, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        first, why = r.stdout.splitlines()
        d = dict(w.split("=", 1) for w in first.split())
        d["why"] = why.removeprefix("why=")
        return d

    def test_explains_in_one_line(self):
        r = tsm("select", "--assume", ALL, "--reliability", "partial",
                "--msgLifetime", "200")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("\n"), 1)
        self.assertTrue(r.stdout.startswith(
            "TLTCP: partial reliability with 200 ms lifetime; module "
            "loaded"), r.stdout)

    def test_rfc9622_spellings(self):
        d = self.kv("--capacityProfile", "Low Latency/Interactive",
                    "--preserveOrder", "noPreference")
        self.assertEqual((d["transport"], d["cc"], d["nodelay"]),
                         ("TCP", "bbr", "1"))
        d = self.kv("--reliability", "none", "--capacityProfile",
                    "Constant-Rate Streaming")
        self.assertEqual((d["transport"], d["ccid"]), ("DCCP", "3"))

    def test_policy_file_option_and_env(self):
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
            f.write("# test\ntransports TCP SCTP DCCP\n")
            f.flush()
            args = ("--reliability", "partial", "--msgLifetime", "100")
            self.assertEqual(self.kv(*args)["transport"], "TLTCP")
            d = self.kv("--policy", f.name, *args)
            self.assertEqual(d["transport"], "SCTP")
            self.assertIn("not allowed by policy", d["why"])
            d = self.kv(*args, env={"TSM_POLICY": f.name})
            self.assertEqual(d["transport"], "SCTP")

    def test_bad_policy_file_names_file_and_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
            f.write("max_weight 2\n\ncongestion cubic\nprofile x cc reno\n")
            f.flush()
            r = tsm("select", "--policy", f.name)
            self.assertEqual(r.returncode, 1)
            self.assertIn(f"{f.name}:4: unknown profile 'x'", r.stderr)
            self.assertIn("(EINVAL)", r.stderr)

    def test_missing_policy_file(self):
        r = tsm("select", "--policy", "/nonexistent/tsm.conf")
        self.assertEqual(r.returncode, 1)
        self.assertIn("/nonexistent/tsm.conf: No such file", r.stderr)
        r = tsm("select", env={"TSM_POLICY": "/nonexistent/x.conf"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("/nonexistent/x.conf", r.stderr)

    @unittest.skipIf(os.path.exists("/etc/tsm.conf"), "/etc/tsm.conf exists")
    def test_no_default_policy_file_is_no_policy(self):
        r = tsm("select", "--assume", ALL)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_bad_requirements_exit_1_with_errno(self):
        for args, err, msg in [
                (["--weight", "0"], "EINVAL", "weight must be positive"),
                (["--weight", "500"], "ERANGE", "outside"),
                (["--reliability", "partial", "--msgLifetime", "-1"],
                 "EINVAL", "msgLifetime is negative"),
                (["--min-rate", "2M", "--max-rate", "1M"], "EINVAL",
                 "above max rate"),
                (["--reliability", "none", "--perMsgReliability",
                  "require"], None, None)]:
            r = tsm("select", "--assume", "cc=reno dccp=2,3", *args)
            self.assertEqual(r.returncode, 1, (args, r.stdout))
            if err:
                self.assertIn(f"({err})", r.stderr)
                self.assertIn(msg, r.stderr)
            else:
                # Only SCTP has it, and SCTP is not there.
                self.assertIn("(EPROTONOSUPPORT)", r.stderr)
                self.assertIn("DCCP has no per-message reliability",
                              r.stderr)
                self.assertIn("TCP has no per-message reliability",
                              r.stderr)

    def test_usage_errors_exit_2(self):
        for args, msg in [(["--reliability", "some"], "full, partial"),
                          (["--preserveOrder", "maybe"], "require, prefer"),
                          (["--capacityProfile", "bulk"], "unknown profile"),
                          (["--msgLifetime", "1.5"], "whole number"),
                          (["--max-rate", "1X"], "rate"),
                          (["--weight", "two"], "not a number"),
                          (["--assume", "quic"], None),
                          (["extra"], None)]:
            r = tsm("select", *args)
            if args[0] == "--assume":
                self.assertEqual(r.returncode, 1)
                self.assertIn("cannot parse 'quic'", r.stderr)
                continue
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            if msg:
                self.assertIn(msg, r.stderr)

    def test_nothing_fits_never_udp(self):
        r = tsm("select", "--assume", "cc=cubic,reno", "--reliability",
                "none", "--preserveMsgBoundaries", "require")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no available transport fits", r.stderr)
        self.assertIn("DCCP not in this kernel", r.stderr)
        self.assertNotIn("UDP", r.stdout)

    def test_no_dccp_tcp_stands_in_with_tfrc(self):
        """Without DCCP (Linux 6.16 on), reliability none gets TCP, with
        TFRC's equation where CCID 3 would have been chosen, in one
        line that says why."""
        r = tsm("select", "--assume", "priv cc=reno,cubic,multfrc:loadable",
                "--reliability", "none", "--capacityProfile",
                "constant-rate")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 1, r.stdout)
        self.assertRegex(lines[0], r"^TCP: no reliability asked, full given;"
                         r" cc multfrc \(TFRC's equation for CCID 3's smooth"
                         r" rate\), loaded on use; .*fallback from DCCP "
                         r"\(not in this kernel\)")


class Probe(unittest.TestCase):
    def test_probe_host(self):
        r = tsm("probe")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("congestion control (default ", r.stdout)
        self.assertIn("reno", r.stdout)
        self.assertIn("udp: never chosen", r.stdout)
        for w in ("tltcp:", "dccp:", "sctp:"):
            self.assertIn(w, r.stdout)

    def test_probe_dccp_as_a_socket_finds_it(self):
        """DCCP is what a DCCP socket says, not a version: this project's
        hosts run kernels without DCCP (Linux 6.16 removed it)."""
        try:
            socket.socket(socket.AF_INET, 6, 33).close()  # SOCK_DCCP
            want = r"^dccp: loaded, CCID"
        except OSError as e:
            want = (r"^dccp: absent \(socket: %s, not in this kernel\); "
                    r"without reliability tsm uses TCP, with TFRC's "
                    r"equation" % errno.errorcode[e.errno])
        r = tsm("probe")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, re.compile(want, re.M))

    def test_probe_assumed(self):
        r = tsm("probe", "--assume", "priv cc=cubic,bbr:restricted "
                "dccp=3 sctp=nopr tltcp=loadable")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bbr(restricted)", r.stdout)
        self.assertIn("dccp: loaded, CCID 3", r.stdout)
        self.assertIn("sctp: loaded, no PR-SCTP", r.stdout)
        self.assertIn("tltcp: loadable", r.stdout)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


class Transfer(unittest.TestCase):
    """A TCP transfer on the host's loopback, with the kernel's own offer
    (the host has no project module, so requirements that need one are
    the VM's business: selftests/tsm)."""

    def test_tcp_send_recv_and_stats(self):
        port = free_port()
        args = ["--assume", "cc=reno"]
        data = os.urandom(300000)
        with tempfile.TemporaryFile() as out:
            recv = subprocess.Popen([TSM, "recv", "-b", "127.0.0.1", port,
                                     *args], stdout=out,
                                    stderr=subprocess.PIPE, text=True)
            try:
                # Until the receiver listens (a probe connection would be
                # the one it accepts).
                for _ in range(100):
                    send = subprocess.run([TSM, "send", "127.0.0.1", port,
                                           "-l", "4096", *args], input=data,
                                          capture_output=True, timeout=20)
                    if b"Connection refused" not in send.stderr:
                        break
                    time.sleep(0.05)
                _, err = recv.communicate(timeout=20)
            finally:
                recv.kill()
            out.seek(0)
            got = out.read()
        send_err = send.stderr.decode()
        self.assertEqual(send.returncode, 0, send_err)
        self.assertEqual(recv.returncode, 0, err)
        self.assertEqual(got, data)
        self.assertIn("TCP: full reliability; cc reno", send_err)
        stats = re.search(r"^stats: (.*)$", send_err, re.M).group(1)
        self.assertRegex(stats, r"rtt \d+ us")
        self.assertRegex(stats, r"retransmits \d+")
        # TCP knows no deadlines, nor a loss event rate: unknown, not 0.
        self.assertIn("deadline misses unknown", stats)
        self.assertIn("loss rate unknown", stats)
        self.assertIn("received 300000 bytes", err)


if __name__ == "__main__":
    unittest.main()
