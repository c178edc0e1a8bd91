# SPDX-License-Identifier: GPL-2.0
"""Network-namespace topologies for selftests and experiments.

A topology is a set of nodes (one network namespace each) joined by links
(veth pairs).  Each direction of a link can have a rate, a one-way delay, a
queue limit in packets, a queue discipline (DropTail or RED), a random
loss rate and a random delay (jitter) that keeps packets in order.  The
shaping follows Documentation/testing.rst:

  X --(rate, queue, discipline: HTB + pfifo/red on X's egress)--> Y
                       (delay, loss: netem on an ifb fed by Y's ingress)

so the queue that fills is the one configured, delay never sits in front of
a rate limiter, and nothing is queued on a sender's own egress except the
link's real bottleneck.  GSO, TSO and GRO are off on every interface so that
queue limits count real MTU-sized packets.  Receive packet steering is on
for every interface, over all CPUs: a veth hands a packet to the backlog
of the CPU that sent it, so without steering two CPUs forward one flow's
packets side by side and reorder them (by up to six packets in a 10 Mbit/s
DCCP flow, which TFRC's receiver takes for losses); steering by flow hash
keeps each flow on one CPU and in order.

Every node gets IPv4 and IPv6 addresses on each link (10.<L/256>.<L%256>.N/24
and fd00::<L>:N/64 for link L) and static routes along shortest paths;
nodes with more than one link forward.  Namespace names carry a random
suffix, so two topologies can exist side by side; down() removes
everything, and is called on every exit path when the topology is used as
a context manager.

Ready-made shapes: dumbbell() and collapse().  Command line:

  python3 -m lab.topology up dumbbell --pairs 2 --rate 10mbit \\
      --delay 50ms --queue bdp --state FILE [--sh]
  python3 -m lab.topology down --state FILE
"""

from lab.topology.model import Link, Shape, Topology  # noqa: F401
from lab.topology.netns import (  # noqa: F401
    cpu_mask, in_ns, netns_pids, remove_namespaces)
from lab.topology.shapes import SHAPES, collapse, dumbbell  # noqa: F401
from lab.topology.units import (  # noqa: F401
    MTU, WIRE_PKT, bdp_packets, parse_rate, parse_time, tcp_goodput)
