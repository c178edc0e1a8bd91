# SPDX-License-Identifier: GPL-2.0
"""libtsm_preload.so and tsm run (Documentation/tsm-guide.rst) on the
host: an unmodified TCP program (tools/tsm/test_preload) run with and
without the preload, reading back TCP_CONGESTION of its own sockets and,
through ss, of its connection.  The host kernel has no module support but
several built-in algorithms: the policy names one that is not the
default, or one that is not there, or one an unprivileged caller may not
set, and the program's sockets must show the policy's choice or the
documented fallback, with its output and errno otherwise unchanged."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

TOP = os.path.join(os.path.dirname(__file__), "..", "..")
DIR = os.path.abspath(os.path.join(TOP, "tools", "tsm"))
TSM = os.path.join(DIR, "tsm")
LIB = os.path.join(DIR, "libtsm_preload.so")
APP = os.path.join(DIR, "test_preload")
PROC = "/proc/sys/net/ipv4/tcp_"
ABSENT = "tsm_nonesuch"     # an algorithm no kernel has


def setUpModule():
    subprocess.run(["make", "-s", "-C", DIR, "tsm", "libtsm_preload.so",
                    "test_preload", "CFLAGS=-O2 -g -Werror"], check=True)


def sysctl_words(name):
    with open(PROC + name) as f:
        return f.read().split()


DEFAULT = sysctl_words("congestion_control")[0]
AVAILABLE = sysctl_words("available_congestion_control")
ALLOWED = sysctl_words("allowed_congestion_control")
# The policy's choice: a built-in algorithm that is not the default.
OTHER = next((c for c in ["reno", "cubic"] + AVAILABLE if c != DEFAULT),
             None)
# One an unprivileged caller may not set, if the host has one.
RESTRICTED = next((c for c in AVAILABLE if c not in ALLOWED), None)


def run(*args, env=None, preload=True, cmd=None):
    """The program (test_preload ARGS, or cmd) under the preload; returns
    (its stdout as {key: value}, its stderr lines, the process)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("TSM_")}
    e.pop("LD_PRELOAD", None)
    if preload:
        e["LD_PRELOAD"] = LIB
    e.update(env or {})
    r = subprocess.run(cmd or [APP, *args], capture_output=True, text=True,
                       env=e, timeout=30)
    out = dict(line.split(": ", 1) for line in r.stdout.splitlines()
               if ": " in line)
    for line in r.stdout.splitlines():
        if line.startswith("threads "):
            out["threads"] = line.split(":", 1)[1].split()
    return out, r.stderr.splitlines(), r


def policy(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
    f.write(text)
    f.close()
    return f.name


class Preload(unittest.TestCase):
    def setUp(self):
        self.files = []

    def tearDown(self):
        for f in self.files:
            os.unlink(f)

    def pol(self, text):
        self.files.append(policy(text))
        return self.files[-1]

    def assert_sockets(self, out, cc, threads=0):
        self.assertEqual((out["listener"], out["client"], out["accepted"]),
                         (cc, cc, cc), out)
        if threads:
            self.assertEqual(out["threads"], [f"{cc}={threads * 50}"])

    @unittest.skipUnless(OTHER, "the host has one algorithm only")
    def test_policy_choice_applied_to_every_tcp_socket(self):
        p = self.pol("profile default cc %s\n" % OTHER)
        out, err, r = run("-t", "8", preload=False,
                          env={"TSM_POLICY": p})
        self.assert_sockets(out, DEFAULT, 8)
        out, err, r = run("-t", "8", env={"TSM_POLICY": p})
        self.assertEqual(r.returncode, 0, err)
        # Listener, client, the accepted socket (inherited from the
        # listener) and 400 sockets made by 8 threads at once.
        self.assert_sockets(out, OTHER, 8)
        self.assertEqual(err, [])

    @unittest.skipUnless(OTHER, "the host has one algorithm only")
    def test_profile_from_environment(self):
        p = self.pol("profile scavenger cc %s\n" % OTHER)
        out, err, _ = run(env={"TSM_POLICY": p})
        self.assert_sockets(out, DEFAULT)
        out, err, _ = run(env={"TSM_POLICY": p, "TSM_PROFILE": "Scavenger"})
        self.assert_sockets(out, OTHER)

    @unittest.skipUnless(OTHER, "the host has one algorithm only")
    def test_policy_transports_line_does_not_apply(self):
        # The program chose TCP; the policy's algorithms still apply.
        p = self.pol("transports DCCP\ncongestion reno %s\n"
                     "profile default cc %s\n" % (DEFAULT, OTHER))
        out, err, _ = run(env={"TSM_POLICY": p})
        self.assert_sockets(out, OTHER)
        self.assertEqual(err, [])
        # An algorithm the policy does not list is not set: the next.
        p = self.pol("congestion %s\nprofile default cc %s\n"
                     % (DEFAULT, OTHER))
        out, err, _ = run(env={"TSM_POLICY": p})
        self.assert_sockets(out, DEFAULT)
        self.assertIn(f"fallback from {OTHER} (not allowed by policy)",
                      err[0])

    @unittest.skipUnless(OTHER and shutil.which("ss"), "needs ss")
    def test_ss_shows_the_algorithm(self):
        p = self.pol("profile default cc %s\n" % OTHER)
        e = {k: v for k, v in os.environ.items() if not k.startswith("TSM_")}
        e.update(LD_PRELOAD=LIB, TSM_POLICY=p)
        proc = subprocess.Popen([APP, "-w"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=e)
        try:
            port = None
            for line in proc.stdout:
                if line.startswith("ready "):
                    port = line.split()[1]
                    break
            self.assertTrue(port)
            ss = subprocess.run(
                ["ss", "-tinH", "state", "established",
                 f"( sport = :{port} or dport = :{port} )"],
                capture_output=True, text=True, check=True).stdout
        finally:
            proc.stdin.close()
            proc.wait(timeout=10)
            proc.stdout.close()
        # Two lines per socket: addresses, then the details with the cc.
        infos = [l for l in ss.splitlines() if "rtt:" in l]
        self.assertEqual(len(infos), 2, ss)
        for info in infos:
            self.assertIn(OTHER, info.split(), info)
            if DEFAULT != OTHER:
                self.assertNotIn(DEFAULT, info.split(), info)
        self.assertEqual(proc.returncode, 0)

    def test_output_and_errno_unchanged(self):
        p = self.pol("profile default cc %s\n" % (OTHER or DEFAULT))
        plain = run(preload=False)[2].stdout
        pre = run(env={"TSM_POLICY": p})[2].stdout

        def strip(s):
            return re.sub(r"^(listener|client|accepted): .*\n", "", s,
                          flags=re.M)
        self.assertEqual(strip(pre), strip(plain))
        # A successful socket() leaves errno as it was (EDOM before);
        # a failing one keeps the kernel's errno.
        self.assertIn("errno after socket(): EDOM\n", pre)
        self.assertIn("socket(TCP, IPPROTO_UDP): -1 EPROTONOSUPPORT\n", pre)
        self.assertIn("udp socket: yes\nunix stream socket: yes\n", pre)

    def test_applications_own_choice_wins(self):
        p = self.pol("profile default cc %s\n" % (OTHER or DEFAULT))
        out, err, r = run("-C", DEFAULT, env={"TSM_POLICY": p})
        self.assertEqual(r.returncode, 0, err)
        self.assertEqual((out["listener"], out["client"]), (DEFAULT, DEFAULT))

    @unittest.skipUnless(shutil.which("strace"), "needs strace")
    def test_non_tcp_sockets_untouched(self):
        p = self.pol("profile default cc %s\n" % (OTHER or DEFAULT))
        e = {k: v for k, v in os.environ.items() if not k.startswith("TSM_")}
        e.update(TSM_POLICY=p)
        r = subprocess.run(
            ["strace", "-qq", "-e", "trace=socket,setsockopt",
             "-E", "LD_PRELOAD=" + LIB, APP], capture_output=True,
            text=True, env=e, timeout=30)
        if r.returncode and "ptrace" in r.stderr:
            self.skipTest("ptrace not permitted")
        self.assertEqual(r.returncode, 0, r.stderr)
        kind, tcp_made, cc_set = {}, 0, 0
        for line in r.stderr.splitlines():
            m = re.match(r"socket\((\w+), ([\w|]+), (\w+)\) = (-?\d+)", line)
            if m:
                dom, typ, proto, fd = m.groups()
                tcp = (dom in ("AF_INET", "AF_INET6") and
                       "SOCK_STREAM" in typ and
                       proto in ("IPPROTO_IP", "IPPROTO_TCP", "0"))
                if int(fd) >= 0:
                    kind[fd] = tcp
                    tcp_made += tcp
                continue
            m = re.match(r"setsockopt\((\d+), SOL_TCP, TCP_CONGESTION", line)
            if m:
                self.assertTrue(kind.get(m.group(1)), line)
                cc_set += 1
        # Every TCP socket got it, nothing else did (the probe's own
        # DCCP and SCTP sockets, the program's UDP and AF_UNIX ones).
        self.assertEqual(tcp_made, 3)
        self.assertEqual(cc_set, tcp_made, r.stderr)

    def test_missing_algorithm_falls_back_once(self):
        p = self.pol("profile default cc %s\n" % ABSENT)
        # Known absent at the decision: libtsm's fallback, said once.
        out, err, _ = run("-t", "4", env={"TSM_POLICY": p})
        self.assert_sockets(out, DEFAULT, 4)
        self.assertEqual(len(err), 1, err)
        self.assertIn(f"cc {DEFAULT} (kernel default); fallback from "
                      f"{ABSENT} (absent)",
                      err[0])
        # Thought present (a made-up offer), refused by the kernel at
        # setsockopt: ENOENT, the next of the chain, said once although
        # 203 sockets met the refusal, some of them at the same time.
        assume = f"cc={DEFAULT},reno,{ABSENT} default={DEFAULT}"
        out, err, _ = run("-t", "4", env={"TSM_POLICY": p,
                                          "TSM_ASSUME": assume})
        self.assert_sockets(out, DEFAULT, 4)
        self.assertEqual(err, [
            f"tsm_preload: congestion control {ABSENT} (ENOENT: not "
            f"available); falling back to {DEFAULT}"])
        out2, err, _ = run("-t", "4", env={"TSM_POLICY": p,
                                           "TSM_ASSUME": assume,
                                           "TSM_QUIET": "1"})
        self.assertEqual(err, [])
        self.assertEqual(out2, out)

    @unittest.skipUnless(RESTRICTED and os.geteuid() == 0 and
                         shutil.which("setpriv"),
                         "needs a restricted algorithm, root and setpriv")
    def test_not_allowed_algorithm_falls_back(self):
        p = self.pol("profile default cc %s\n" % RESTRICTED)
        unpriv = ["setpriv", "--bounding-set=-net_admin", APP]
        out, err, _ = run(env={"TSM_POLICY": p})
        self.assert_sockets(out, RESTRICTED)    # root may
        out, err, _ = run(env={"TSM_POLICY": p}, cmd=unpriv)
        self.assert_sockets(out, DEFAULT)
        self.assertEqual(len(err), 1, err)
        self.assertIn(f"fallback from {RESTRICTED} (not in "
                      "tcp_allowed_congestion_control)", err[0])
        # The offer says allowed; the kernel says EPERM.
        out, err, _ = run(env={"TSM_POLICY": p, "TSM_ASSUME":
                               f"cc={DEFAULT},{RESTRICTED},reno"},
                          cmd=unpriv)
        self.assert_sockets(out, DEFAULT)
        self.assertEqual(err, [
            f"tsm_preload: congestion control {RESTRICTED} (EPERM: not in "
            f"net.ipv4.tcp_allowed_congestion_control); falling back to "
            f"{DEFAULT}"])

    def test_verbose_explains_in_one_line(self):
        p = self.pol("profile default cc %s\n" % (OTHER or DEFAULT))
        _, err, _ = run(env={"TSM_POLICY": p, "TSM_VERBOSE": "1"})
        self.assertEqual(err, [
            f"tsm_preload: TCP: full reliability; cc {OTHER or DEFAULT} "
            f"(policy for Default, {p}:1)"])
        # Quiet by default when nothing fell back.
        _, err, _ = run(env={"TSM_POLICY": p})
        self.assertEqual(err, [])

    def test_bad_settings_leave_sockets_alone(self):
        for env, msg in [({"TSM_WEIGHT": "abc"}, "TSM_WEIGHT: 'abc'"),
                         ({"TSM_PROFILE": "bulk"}, "unknown profile 'bulk'"),
                         ({"TSM_WEIGHT": "500"}, "outside 0.1..100"),
                         ({"TSM_POLICY": "/nonexistent/tsm.conf"},
                          "/nonexistent/tsm.conf")]:
            out, err, r = run("-t", "2", env=env)
            self.assertEqual(r.returncode, 0, (env, err))
            self.assert_sockets(out, DEFAULT, 2)
            self.assertEqual(len(err), 2, (env, err))
            self.assertIn(msg, err[0])
            self.assertIn("keep the kernel default", err[1])


class Run(unittest.TestCase):
    def test_run_sets_preload_and_requirements(self):
        p = policy("profile scavenger cc %s\n" % (OTHER or DEFAULT))
        try:
            out, err, r = run(preload=False, cmd=[
                TSM, "run", "--policy", p, "--capacityProfile",
                "scavenger", "--", APP, "-t", "2"])
            self.assertEqual(r.returncode, 0, err)
            self.assertEqual(out["client"], OTHER or DEFAULT)
            self.assertEqual(out["threads"], [f"{OTHER or DEFAULT}=100"])
            # Options after PROGRAM are PROGRAM's, not tsm's.
            out, err, r = run(preload=False, cmd=[
                TSM, "run", "--policy", p, APP, "-C", DEFAULT])
            self.assertEqual(r.returncode, 0, err)
            self.assertEqual(out["client"], DEFAULT)
        finally:
            os.unlink(p)

    def test_run_refuses_before_starting_the_program(self):
        with tempfile.TemporaryDirectory() as d:
            mark = os.path.join(d, "ran")
            for args, status, msg in [
                    (["--reliability", "partial", "--msgLifetime", "100"], 2,
                     "takes only"),
                    (["--policy", "/nonexistent/tsm.conf"], 1,
                     "/nonexistent/tsm.conf"),
                    (["--weight", "0"], 1, "weight must be positive")]:
                _, err, r = run(preload=False,
                                cmd=[TSM, "run", *args, "--", "touch", mark])
                self.assertEqual(r.returncode, status, (args, err))
                self.assertIn(msg, r.stderr)
                self.assertFalse(os.path.exists(mark))
            _, err, r = run(preload=False,
                            cmd=[TSM, "run", "--", "/nonexistent/prog"])
            self.assertEqual(r.returncode, 127)


if __name__ == "__main__":
    unittest.main()
