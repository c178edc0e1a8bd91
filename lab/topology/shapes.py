# SPDX-License-Identifier: GPL-2.0
"""Ready-made shapes: dumbbell() and collapse(), by name in SHAPES."""

from lab.topology.model import Topology
from lab.topology.units import WIRE_PKT, bdp_packets, parse_rate, \
    parse_time


def dumbbell(pairs=1, rate="10mbit", delay="25ms", queue="bdp",
             qdisc="droptail", loss=None, access_rate=None,
             access_delay=None, ecn=False, red=None, source_jitter=False,
             name="db", dry_run=False):
    """N senders s1..sN -> router r1 -> bottleneck -> r2 -> receivers d1..dN.

    rate, delay (one-way), queue (packets or 'bdp' = rate x base RTT),
    qdisc, loss and ecn/red describe the bottleneck, in both directions
    (data leaves r1 towards r2, ACKs r2 towards r1).  access_rate and
    access_delay describe each host's link; access_delay may be a list with
    one entry per pair (RTT-unfair mixes).

    source_jitter delays each packet a sender sends by a further random
    time, uniform over one full-sized packet's service time at the
    bottleneck, without reordering: Floyd and Jacobson's remedy for phase
    effects ("On Traffic Phase Effects in Packet-Switched Gateways",
    1992).  With fixed delays, ACK-clocked flows send in a fixed phase
    to the bottleneck's departures, and which flow finds a DropTail queue
    full then depends on the delays to a fraction of a millisecond."""
    t = Topology(name, dry_run)
    r1, r2 = t.node("r1"), t.node("r2")
    delays = access_delay if isinstance(access_delay, (list, tuple)) \
        else [access_delay] * pairs
    if len(delays) != pairs:
        raise ValueError("access_delay: one entry per pair")
    # Half the service time on top of the delay, plus or minus as much.
    spread = WIRE_PKT * 8 / parse_rate(rate) / 2 if source_jitter else 0
    for i in range(1, pairs + 1):
        d = delays[i - 1]
        out = None
        if spread:
            out = {"delay": f"{(parse_time(d) + spread) * 1e6:.0f}us",
                   "jitter": f"{spread * 1e6:.0f}us"}
        # The sender's link towards r1 alone carries the jitter.
        for host, router, ab in ((f"s{i}", r1, out), (f"d{i}", r2, None)):
            t.node(host)
            t.link(host, router, ab=ab, rate=access_rate, delay=d)
    bottleneck = t.link(r1, r2, rate=rate, delay=delay, queue=queue,
                        qdisc=qdisc, loss=loss, ecn=ecn, red=red)
    rtt = t.path_rtt("s1", "d1")
    qlen = queue
    if queue == "bdp":
        # of the fixed delays: the jitter's mean is not the path's
        qlen = bdp_packets(parse_rate(rate), rtt - spread)
    for s in bottleneck.shape.values():
        s.queue = qlen
    t.info = {"shape": "dumbbell", "pairs": pairs, "rate": parse_rate(rate),
              "rtt": rtt, "queue": qlen, "qdisc": qdisc,
              "loss": float(loss or 0), "bottleneck": "r1:to-r2",
              "source_jitter": 2 * spread}
    return t


def collapse(delay="20ms", queue=50, qdisc="droptail", scale=1.0,
             red=None, name="cc", dry_run=False):
    """The congestion-collapse dumbbell of Hessler & Welzl (Fig. 1):

        s1 --0.3--\\                /--1.0--  d1
                   r1 ---0.3--- r2
        s2 --1.0--/                \\--0.01-- d2     (Mbit/s)

    Flow s1 -> d1 crosses only the 0.3 Mbit/s core; s2 -> d2 is limited to
    0.01 Mbit/s by its last link, so a greedy unresponsive s2 wastes core
    capacity that s1 could use.  scale multiplies every rate; red (with
    qdisc "red") sets RED's min, max, probability and avpkt on every
    link."""
    t = Topology(name, dry_run)
    for n in ("s1", "s2", "r1", "r2", "d1", "d2"):
        t.node(n)
    mbit = lambda m: int(m * 1e6 * scale)   # noqa: E731
    common = {"delay": delay, "queue": queue, "qdisc": qdisc, "red": red}
    t.link("s1", "r1", rate=mbit(0.3), **common)
    t.link("s2", "r1", rate=mbit(1.0), **common)
    t.link("r1", "r2", rate=mbit(0.3), **common)
    t.link("r2", "d1", rate=mbit(1.0), **common)
    t.link("r2", "d2", rate=mbit(0.01), **common)
    t.info = {"shape": "collapse", "rtt": t.path_rtt("s1", "d1"),
              "queue": queue, "qdisc": qdisc, "core_rate": mbit(0.3),
              "d2_rate": mbit(0.01), "bottleneck": "r1:to-r2"}
    return t


SHAPES = {"dumbbell": dumbbell, "collapse": collapse}
