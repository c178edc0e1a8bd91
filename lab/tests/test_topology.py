# SPDX-License-Identifier: GPL-2.0
"""Unit tests of the topology library's model (no namespaces are made)."""

import re
import unittest

from lab import topology as T


class Units(unittest.TestCase):
    def test_rates(self):
        self.assertEqual(T.parse_rate("10mbit"), 10_000_000)
        self.assertEqual(T.parse_rate("1.5Mbit"), 1_500_000)
        self.assertEqual(T.parse_rate("300kbit"), 300_000)
        self.assertEqual(T.parse_rate("9600"), 9600)
        self.assertRaises(ValueError, T.parse_rate, "fast")

    def test_times(self):
        self.assertAlmostEqual(T.parse_time("25ms"), 0.025)
        self.assertAlmostEqual(T.parse_time("0.3s"), 0.3)
        self.assertAlmostEqual(T.parse_time("40"), 0.040)
        self.assertRaises(ValueError, T.parse_time, "-1ms")

    def test_bdp(self):
        # 10 Mbit/s x 100 ms = 125000 B = 82.6 packets of 1514 B on the wire
        self.assertEqual(T.bdp_packets(10_000_000, 0.1), 83)
        self.assertEqual(T.bdp_packets(1000, 0.001), 2)

    def test_goodput(self):
        self.assertAlmostEqual(T.tcp_goodput(1514 * 8), 1448 * 8)

    def test_cpu_mask(self):
        self.assertEqual(T.cpu_mask(1), "1")
        self.assertEqual(T.cpu_mask(2), "3")
        self.assertEqual(T.cpu_mask(12), "fff")
        self.assertEqual(T.cpu_mask(32), "ffffffff")
        self.assertEqual(T.cpu_mask(36), "f,ffffffff")
        self.assertEqual(T.cpu_mask(64), "ffffffff,ffffffff")


class Shapes(unittest.TestCase):
    def test_dumbbell_nodes_rtt_queue(self):
        t = T.dumbbell(pairs=2, rate="2mbit", delay="300ms", queue=20,
                       access_rate="10mbit", access_delay="1ms")
        self.assertEqual(sorted(t.nodes),
                         ["d1", "d2", "r1", "r2", "s1", "s2"])
        self.assertAlmostEqual(t.path_rtt("s1", "d1"), 0.604)
        self.assertEqual(t.info["queue"], 20)

    def test_dumbbell_bdp_queue(self):
        t = T.dumbbell(rate="10mbit", delay="50ms", queue="bdp")
        self.assertEqual(t.info["queue"], 83)

    def test_rtt_unfair_access_delays(self):
        t = T.dumbbell(pairs=2, access_delay=["5ms", "45ms"], delay="10ms")
        self.assertAlmostEqual(t.path_rtt("s1", "d1"), 0.04)
        self.assertAlmostEqual(t.path_rtt("s2", "d2"), 0.2)

    def test_source_jitter(self):
        # One 1514-byte service time at 4 Mbit/s is 3.028 ms: each
        # sender's packets wait 1 ms + 1.514 +- 1.514 ms, kept in order
        # (netem with a rate); the ACK direction and receivers' links
        # stay fixed, and the BDP queue is the fixed delays' one.
        t = T.dumbbell(pairs=2, rate="4mbit", delay="8ms",
                       access_delay="1ms", source_jitter=True,
                       dry_run=True)
        plain = T.dumbbell(pairs=2, rate="4mbit", delay="8ms",
                           access_delay="1ms")
        self.assertEqual(t.info["queue"], plain.info["queue"])
        self.assertAlmostEqual(t.info["source_jitter"], 0.003028)
        self.assertAlmostEqual(t.path_rtt("s2", "d2"), 0.021514)
        t.up()
        netem = [c for c in t.commands if "netem" in c]
        jit = [c for c in netem if "1514us rate 100gbit" in c]
        self.assertEqual(len(jit), 2)
        self.assertTrue(all("delay 2514us" in c and "ifb-s" in c
                            for c in jit))
        self.assertEqual(len(netem), 10)

    def test_bad_parameters(self):
        self.assertRaises(ValueError, T.dumbbell, qdisc="codel")
        self.assertRaises(ValueError, T.dumbbell, loss=100)
        self.assertRaises(ValueError, T.dumbbell, queue=0)
        self.assertRaises(ValueError, T.dumbbell, pairs=2,
                          access_delay=["1ms"])
        self.assertRaises(ValueError, T.Shape, delay="1ms", jitter="2ms")

    def test_duplicate_and_unknown(self):
        t = T.Topology("x")
        t.node("a")
        t.node("b")
        t.link("a", "b")
        self.assertRaises(ValueError, t.link, "b", "a")
        self.assertRaises(ValueError, t.link, "a", "c")
        self.assertRaises(ValueError, t.node, "a")

    def test_unique_names(self):
        a, b = T.dumbbell(), T.dumbbell()
        self.assertNotEqual(a.ns("s1"), b.ns("s1"))


class Routing(unittest.TestCase):
    def test_collapse_routes(self):
        t = T.collapse()
        # s1 reaches every other link through r1.
        hops = {str(dst.net4): hop for dst, _, hop in t.routes("s1")}
        self.assertEqual(set(hops.values()), {"r1"})
        self.assertEqual(len(hops), 4)
        # r1 reaches d2's link through r2, s2's directly (no route).
        r1 = {(dst.a, dst.b): hop for dst, _, hop in t.routes("r1")}
        self.assertEqual(r1[("r2", "d2")], "r2")
        self.assertNotIn(("s2", "r1"), r1)
        self.assertAlmostEqual(t.path_rtt("s2", "d2"), 0.12)


class Commands(unittest.TestCase):
    def build(self, **kw):
        t = T.dumbbell(dry_run=True, **kw)
        t.up()
        return t.commands

    def test_bottleneck_shaping(self):
        cmds = "\n".join(self.build(rate="10mbit", delay="25ms", queue=50,
                                    loss=1))
        r1 = [c for c in cmds.splitlines() if "r1-" in c and "to-r2" in c]
        self.assertTrue(any("htb rate 10000000bit" in c for c in r1))
        self.assertTrue(any("pfifo limit 50" in c for c in r1))
        # The delay of s->d sits on r2's ifb fed by its to-r1 ingress.
        self.assertIn("dev ifb-r1 root netem limit 100000 delay 25000us "
                      "loss random 1%", cmds)
        self.assertIn("gso off tso off gro off", cmds)
        self.assertIn("nodad", cmds)

    def test_steering_on_every_interface(self):
        # Both ends of each of the dumbbell's three links: a flow stays on
        # one CPU at every hop, so the emulation does not reorder it.
        t = T.dumbbell(dry_run=True, rate="10mbit", delay="25ms")
        t.up()
        steer = re.findall(r"/sys/class/net/(\S+)/queues/rx-\*/rps_cpus; "
                           r"do echo (\S+) > \$q", "\n".join(t.commands))
        self.assertEqual(sorted(steer), sorted(
            (l.ifname(n), T.cpu_mask()) for l in t.links for n in (l.a, l.b)))

    def test_no_steer(self):
        t = T.dumbbell(dry_run=True)
        t.steer = False
        t.up()
        self.assertFalse(any("rps_cpus" in c for c in t.commands))
        self.assertTrue(any("gro off" in c for c in t.commands))

    def test_one_setup_per_node_before_any_interface_is_up(self):
        # Everything a namespace needs besides ip and tc, in one shell per
        # node, and its interfaces' DAD off before they come up.
        t = T.dumbbell(dry_run=True, rate="10mbit", delay="25ms")
        t.up()
        setup = [i for i, c in enumerate(t.commands) if " sh -c " in c]
        self.assertEqual(len(setup), len(t.nodes))
        up = min(i for i, c in enumerate(t.commands) if " mtu 1500 up" in c)
        self.assertTrue(all(i < up for i in setup))
        r1 = next(c for c in t.commands if " sh -c " in c and t.ns("r1") in c)
        self.assertIn("net/ipv6/conf/to-r2/accept_dad", r1)
        self.assertIn("echo 1 > /proc/sys/net/ipv4/ip_forward", r1)
        self.assertIn("ethtool -K to-s1 gso off tso off gro off", r1)

    def test_set_loss(self):
        t = T.dumbbell(dry_run=True, rate="10mbit", delay="25ms", loss=1)
        t.up()
        t.commands = []
        t.set_loss("r1", "r2", 10)
        # Both directions, the delay given again; then back to no loss.
        self.assertIn("tc -n " + t.ns("r2") + " qdisc change dev ifb-r1 "
                      "root netem limit 100000 delay 25000us loss random "
                      "10%", t.commands)
        self.assertTrue(any(t.ns("r1") in c and "dev ifb-r2" in c
                            for c in t.commands))
        t.commands = []
        t.set_loss("r1", "r2", 0)
        self.assertFalse(any("loss" in c for c in t.commands))
        self.assertRaises(ValueError, t.set_loss, "r1", "r2", 100)
        # An access link without delay has no netem.
        self.assertRaises(ValueError, t.set_loss, "s1", "r1", 1)

    def test_red(self):
        cmds = "\n".join(self.build(qdisc="red", queue=100, ecn=True))
        self.assertRegex(cmds, r"red limit 151400 min 37850 max 113550 .* ecn")

    def test_red_small_packets(self):
        # ns-2's RED in packets: 50 of 120 bytes, thresholds 5 and 15.
        t = T.collapse(qdisc="red", queue=50, dry_run=True,
                       red={"avpkt": 120, "min": 600, "max": 1800})
        t.up()
        red = [c for c in t.commands if " red " in c]
        self.assertEqual(len(red), 10)      # five links, both directions
        self.assertTrue(all("red limit 6000 min 600 max 1800 avpkt 120 "
                            "burst 8 " in c for c in red), red[0])

    def test_red_small_queues_have_an_ewma(self):
        # tc-red's tc_red_eval_ewma(): burst + 1 - min/avpkt must be at
        # least 1 and within (1 - (1 - W)^burst) / W for some W = 2^-k.
        # With min one packet no W fits, and the 7-packet BDP queue of
        # 4 Mbit/s at 20 ms was refused.
        for q in range(3, 300):
            cmds = "\n".join(self.build(qdisc="red", queue=q))
            m = re.search(r"red limit (\d+) min (\d+) max (\d+) avpkt "
                          r"(\d+) burst (\d+) ", cmds)
            limit, qmin, qmax, avpkt, burst = map(int, m.groups())
            self.assertLess(qmin, qmax, q)
            self.assertLessEqual(qmax, limit, q)
            a = burst + 1 - qmin / avpkt
            self.assertGreaterEqual(a, 1, q)
            # tc warns from Wlog 10 on, and the kernel refused the Wlog
            # it took for the 7-packet queue
            self.assertTrue(any(a <= (1 - (1 - 0.5 ** k) ** burst) /
                                0.5 ** k for k in range(1, 10)), q)

    def test_unshaped_access_has_no_qdisc(self):
        cmds = self.build(rate="10mbit")
        self.assertFalse(any("dev to-r1 root" in c and "s1-" in c
                             for c in cmds))

    def test_shell_vars(self):
        t = T.dumbbell()
        sh = t.to_shell()
        self.assertIn(f"NS_s1={t.ns('s1')}", sh)
        self.assertIn("IP4_d1=10.0.2.1", sh)
        self.assertIn("IP6_d1=fd00::2:1", sh)
        self.assertIn("TOPO_QUEUE=", sh)


if __name__ == "__main__":
    unittest.main()
