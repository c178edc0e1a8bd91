# SPDX-License-Identifier: GPL-2.0
"""The topology model: nodes, links, what each direction of a link does
(Shape), and building it all with ip and tc (Topology).  The package's
documentation (lab.topology) describes the shaping."""

import ipaddress
import re
import secrets
import shlex
import subprocess

from lab.topology.netns import cpu_mask, in_ns, remove_namespaces
from lab.topology.units import MTU, WIRE_PKT, parse_rate, parse_time

NETEM_LIMIT = 100000


class Shape:
    """What one direction of a link does to packets."""

    def __init__(self, rate=None, delay=None, queue=None, qdisc="droptail",
                 loss=None, red=None, ecn=False, jitter=None):
        self.rate = parse_rate(rate)
        self.delay = parse_time(delay)
        # Each packet's delay is uniform in delay +- jitter, in order.
        self.jitter = parse_time(jitter)
        self.queue = queue          # packets, or "bdp" (set by the shape)
        self.qdisc = qdisc
        self.loss = float(loss) if loss else 0.0
        self.red = red or {}
        self.ecn = ecn
        if qdisc not in ("droptail", "red"):
            raise ValueError(f"bad queue discipline {qdisc!r}: droptail, red")
        if self.loss < 0 or self.loss >= 100:
            raise ValueError(f"bad loss {loss!r}: percent in [0, 100)")
        if queue is not None and queue != "bdp" and int(queue) < 1:
            raise ValueError(f"bad queue {queue!r}: packets >= 1 or 'bdp'")
        if self.jitter > self.delay:
            raise ValueError(f"bad jitter {jitter!r}: at most the delay")

    def to_dict(self):
        return {"rate": self.rate, "delay": self.delay, "queue": self.queue,
                "qdisc": self.qdisc, "loss": self.loss, "jitter": self.jitter}


class Link:
    def __init__(self, index, a, b, ab, ba):
        self.index = index
        self.a, self.b = a, b
        self.shape = {(a, b): ab, (b, a): ba}
        hi, lo = divmod(index, 256)
        self.net4 = ipaddress.ip_network(f"10.{hi}.{lo}.0/24")
        self.net6 = ipaddress.ip_network(f"fd00::{index:x}:0/112")

    def ifname(self, node):
        """Name of node's end of this link: named after the peer."""
        peer = self.b if node == self.a else self.a
        return f"to-{peer}"[:15]

    def addr(self, node, family=4):
        host = 1 if node == self.a else 2
        net = self.net4 if family == 4 else self.net6
        return str(net.network_address + host)

    def peer(self, node):
        return self.b if node == self.a else self.a


class Topology:
    """Nodes and links; build with up(), remove with down()."""

    def __init__(self, name="topo", dry_run=False):
        if not re.fullmatch(r"[a-z0-9]{1,8}", name):
            raise ValueError("topology name: 1-8 of [a-z0-9]")
        self.id = f"{name}-{secrets.token_hex(3)}"
        self.nodes = []
        self.links = []
        self.dry_run = dry_run
        self.commands = []          # what up() ran, for tests and debugging
        # Receive packet steering by flow (the module's header); False
        # leaves the kernel's default, which reorders, to show that it
        # does (topology self-tests, TOPO_FAULT=order).
        self.steer = True
        self._batch = {}
        self.info = {}              # shape parameters, for reports

    # -- description
    def node(self, name):
        if not re.fullmatch(r"[a-z][a-z0-9]{0,9}", name):
            raise ValueError(f"node name {name!r}: [a-z][a-z0-9]{{0,9}}")
        if name in self.nodes:
            raise ValueError(f"node {name} exists")
        self.nodes.append(name)
        return name

    def link(self, a, b, ab=None, ba=None, **both):
        """Join a and b.  Keyword arguments shape both directions; ab / ba
        (dicts of the same keywords) override one direction."""
        for n in (a, b):
            if n not in self.nodes:
                raise ValueError(f"unknown node {n}")
        if a == b or any({l.a, l.b} == {a, b} for l in self.links):
            raise ValueError(f"link {a}-{b}: self-link or duplicate")
        link = Link(len(self.links) + 1, a, b,
                    Shape(**{**both, **(ab or {})}),
                    Shape(**{**both, **(ba or {})}))
        self.links.append(link)
        return link

    def ns(self, node):
        return f"{node}-{self.id}"

    def links_of(self, node):
        return [l for l in self.links if node in (l.a, l.b)]

    def addr(self, node, family=4):
        """The node's address on its first link."""
        return self.links_of(node)[0].addr(node, family)

    def path_rtt(self, src, dst):
        """Sum of one-way delays there and back along the routed path."""
        path = self._path(src, dst)
        total = 0.0
        for x, y in zip(path, path[1:]):
            link = self._link_between(x, y)
            total += link.shape[(x, y)].delay + link.shape[(y, x)].delay
        return total

    def _link_between(self, x, y):
        return next(l for l in self.links if {l.a, l.b} == {x, y})

    def _path(self, src, dst):
        prev = self._bfs(src)
        if dst not in prev:
            raise ValueError(f"no path {src} -> {dst}")
        path = [dst]
        while path[-1] != src:
            path.append(prev[path[-1]])
        return path[::-1]

    def _bfs(self, src):
        prev = {src: None}
        queue = [src]
        while queue:
            x = queue.pop(0)
            for l in self.links_of(x):
                y = l.peer(x)
                if y not in prev:
                    prev[y] = x
                    queue.append(y)
        return prev

    def routes(self, node):
        """[(link to route, next-hop link, next-hop node)] for every link
        not attached to node, along shortest paths."""
        prev = self._bfs(node)
        dist = {}
        for n in prev:
            d, x = 0, n
            while prev[x] is not None:
                d, x = d + 1, prev[x]
            dist[n] = d
        out = []
        for l in self.links:
            if node in (l.a, l.b):
                continue
            ends = [e for e in (l.a, l.b) if e in prev]
            if not ends:
                continue
            far = min(ends, key=lambda e: dist[e])
            hop = far
            while prev[hop] != node:
                hop = prev[hop]
            out.append((l, self._link_between(node, hop), hop))
        return out

    # -- building
    def _run(self, cmd, check=True):
        self.commands.append(cmd)
        if self.dry_run:
            return ""
        p = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError(f"'{cmd}' failed: {p.stderr.strip()}")
        return p.stdout

    def _nsrun(self, node, cmd, check=True):
        """Run a command in node's namespace.  ip and tc commands are
        batched per namespace until _flush(): under emulation every
        process costs, and a dumbbell needs some two hundred commands."""
        tool, _, rest = cmd.partition(" ")
        if tool in ("ip", "tc"):
            self.commands.append(f"{tool} -n {self.ns(node)} {rest}")
            # A batch line takes no global options; ip tells IPv6 from
            # the addresses themselves.
            if rest.startswith("-6 "):
                rest = rest[3:]
            self._batch.setdefault((tool, node), []).append(rest)
            return ""
        return self._run(" ".join(in_ns(self.ns(node), [cmd])), check)

    def _flush(self):
        """Run the batched commands: every namespace's ip commands, then
        its tc commands (a filter may redirect to an ifb made by ip)."""
        batch, self._batch = self._batch, {}
        for tool, node in sorted(batch, key=lambda k: k[0]):
            if self.dry_run:
                continue
            p = subprocess.run([tool, "-n", self.ns(node), "-batch", "-"],
                               input="\n".join(batch[(tool, node)]) + "\n",
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError(f"{tool} -n {self.ns(node)} -batch "
                                   f"failed: {p.stderr.strip()}")

    def _queue_packets(self, shape):
        if shape.queue == "bdp":
            raise ValueError("queue 'bdp' must be resolved by the shape")
        return int(shape.queue) if shape.queue is not None else 1000

    def _shape_egress(self, node, link, shape):
        dev = link.ifname(node)
        qlen = self._queue_packets(shape)
        if shape.rate:
            # One HTB class at the link rate; its leaf is the link's queue.
            burst = max(WIRE_PKT, shape.rate // 8 // 1000)   # ~1 ms
            self._nsrun(node, f"tc qdisc add dev {dev} root handle 1: "
                        "htb default 1")
            self._nsrun(node, f"tc class add dev {dev} parent 1: classid 1:1"
                        f" htb rate {shape.rate}bit ceil {shape.rate}bit "
                        f"burst {burst} cburst {burst} quantum {WIRE_PKT}")
            parent = "parent 1:1 handle 10:"
        else:
            parent = "root handle 10:"
        if shape.qdisc == "red":
            # Linux's RED counts bytes: the queue's packets are avpkt
            # bytes each, full-sized unless red says otherwise (small
            # packets: a limit of qlen packets of avpkt bytes).
            # The minimum threshold is at least two packets: tc finds
            # no averaging constant for a burst when it is one (tc-red's
            # "burst seems to be too large", at a 7-packet BDP queue).
            pkt = shape.red.get("avpkt", WIRE_PKT)
            qmin = shape.red.get("min", max(2, qlen // 4) * pkt)
            qmax = shape.red.get("max", max(qmin + pkt,
                                            (3 * qlen) // 4 * pkt))
            limit = max(qlen * pkt, qmax)
            prob = shape.red.get("probability", 0.1)
            burst = max(1, (2 * qmin + qmax) // (3 * pkt))
            bw = shape.rate or 10**9
            self._nsrun(node, f"tc qdisc add dev {dev} {parent} red "
                        f"limit {limit} min {qmin} max {qmax} avpkt "
                        f"{pkt} burst {burst} probability {prob} "
                        f"bandwidth {bw}bit" + (" ecn" if shape.ecn else ""))
        elif shape.rate or shape.queue is not None:
            self._nsrun(node, f"tc qdisc add dev {dev} {parent} pfifo "
                        f"limit {qlen}")

    def _shape_ingress(self, node, link, shape):
        """Delay and loss of the direction arriving at node."""
        if not shape.delay and not shape.loss:
            return
        dev = link.ifname(node)
        ifb = f"ifb-{link.peer(node)}"[:15]
        self._nsrun(node, f"ip link add {ifb} type ifb")
        self._nsrun(node, f"ip link set {ifb} up")
        self._nsrun(node, f"tc qdisc add dev {dev} handle ffff: ingress")
        self._nsrun(node, f"tc filter add dev {dev} parent ffff: protocol "
                    f"all u32 match u32 0 0 action mirred egress redirect "
                    f"dev {ifb}")
        self._nsrun(node, f"tc qdisc add dev {ifb} root {self._netem(shape)}")

    @staticmethod
    def _netem(shape):
        netem = f"netem limit {NETEM_LIMIT}"
        if shape.delay:
            netem += f" delay {shape.delay * 1e6:.0f}us"
        if shape.jitter:
            # netem sorts packets by their time to send, so a random
            # delay alone reorders them; with a rate each packet leaves
            # no earlier than the one before (sch_netem.c), and a rate
            # this high adds nothing else.
            netem += f" {shape.jitter * 1e6:.0f}us rate 100gbit"
        if shape.loss:
            netem += f" loss random {shape.loss:g}%"
        return netem

    def set_loss(self, a, b, loss):
        """Change the random loss of the link a-b, both directions, while
        the topology is up (an experiment's loss steps).  netem is
        replaced whole, so the delay is given again; the link must have
        had a delay or a loss when it was built (it has a netem then)."""
        link = self._link_between(a, b)
        for x, y in ((a, b), (b, a)):
            shape = link.shape[(x, y)]
            if not shape.delay and not shape.loss:
                raise ValueError(f"link {a}-{b} has no netem to change")
            Shape(loss=loss)                # validates
            shape.loss = float(loss)
            ifb = f"ifb-{x}"[:15]
            self._nsrun(y, f"tc qdisc change dev {ifb} root "
                        f"{self._netem(shape)}")
        self._flush()

    def up(self):
        try:
            self._up()
        except BaseException:
            self.down()
            raise
        return self

    def _up(self):
        # Under emulation every process costs about 0.15 s: one ip makes
        # every namespace and veth pair, one shell per node sets it up,
        # one ip and one tc batch per node do the rest (about 25
        # processes for a dumbbell instead of 64).
        host = [f"netns add {self.ns(n)}" for n in self.nodes]
        host += [f"link add {l.ifname(l.a)} netns {self.ns(l.a)} type veth "
                 f"peer name {l.ifname(l.b)} netns {self.ns(l.b)}"
                 for l in self.links]
        self._host_batch(host)
        for n in self.nodes:
            self._node_setup(n)
            self._nsrun(n, "ip link set lo up")
        for l in self.links:
            for n in (l.a, l.b):
                dev = l.ifname(n)
                self._nsrun(n, f"ip addr add {l.addr(n, 4)}/24 dev {dev}")
                self._nsrun(n, f"ip -6 addr add {l.addr(n, 6)}/112 dev "
                            f"{dev} nodad")
                self._nsrun(n, f"ip link set {dev} mtu {MTU} up")
        for l in self.links:
            for x, y in ((l.a, l.b), (l.b, l.a)):
                self._shape_egress(x, l, l.shape[(x, y)])
                self._shape_ingress(y, l, l.shape[(x, y)])
        for n in self.nodes:
            for dst, via, hop in self.routes(n):
                dev = via.ifname(n)
                self._nsrun(n, f"ip route add {dst.net4} via "
                            f"{via.addr(hop, 4)} dev {dev}")
                self._nsrun(n, f"ip -6 route add {dst.net6} via "
                            f"{via.addr(hop, 6)} dev {dev}")
        self._flush()

    def _host_batch(self, lines):
        """ip commands outside any namespace, in one process."""
        self.commands += [f"ip {line}" for line in lines]
        if self.dry_run:
            return
        p = subprocess.run(["ip", "-batch", "-"], input="\n".join(lines) +
                           "\n", capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"ip -batch failed: {p.stderr.strip()}")

    def _node_setup(self, n):
        """What ip and tc cannot do, for node n and its interfaces, in one
        shell: the sysctls (before any interface is up, so that no
        link-local address waits for duplicate address detection), GSO,
        TSO and GRO off, receive packet steering over all CPUs."""
        forward = int(len(self.links_of(n)) > 1)
        settings = [("net.ipv4.ip_forward", forward),
                    ("net.ipv6.conf.all.forwarding", forward),
                    ("net.ipv6.conf.all.accept_dad", 0),
                    ("net.ipv6.conf.default.accept_dad", 0),
                    ("net.ipv4.conf.all.rp_filter", 0),
                    ("net.ipv4.conf.default.rp_filter", 0),
                    # Every flow starts from scratch: no cached ssthresh
                    # or RTT from an earlier flow.
                    ("net.ipv4.tcp_no_metrics_save", 1)]
        devs = [l.ifname(n) for l in self.links_of(n)]
        settings += [(f"net.ipv6.conf.{d}.accept_dad", 0) for d in devs]
        script = ["set -e"]
        script += [f"echo {val} > /proc/sys/{key.replace('.', '/')}"
                   for key, val in settings]
        for d in devs:
            script.append(f"ethtool -K {d} gso off tso off gro off")
            if self.steer:
                script.append(f"for q in /sys/class/net/{d}/queues/rx-*/"
                              f"rps_cpus; do echo {cpu_mask()} > $q; done")
        cmd = in_ns(self.ns(n), ["sh", "-c", "\n".join(script)])
        self.commands.append(shlex.join(cmd))
        if self.dry_run:
            return
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"setting up {n} failed: {p.stderr.strip()}")

    def down(self):
        if not self.dry_run:
            remove_namespaces(self.ns(n) for n in self.nodes)

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()

    # -- describing the result
    def to_dict(self):
        return {
            "id": self.id,
            "info": self.info,
            "nodes": {n: {"ns": self.ns(n), "ip4": self.addr(n, 4),
                          "ip6": self.addr(n, 6),
                          "ifs": {l.ifname(n): {"ip4": l.addr(n, 4),
                                                "ip6": l.addr(n, 6),
                                                "peer": l.peer(n)}
                                  for l in self.links_of(n)}}
                      for n in self.nodes},
            "links": [{"a": l.a, "b": l.b,
                       "ab": l.shape[(l.a, l.b)].to_dict(),
                       "ba": l.shape[(l.b, l.a)].to_dict()}
                      for l in self.links],
        }

    def to_shell(self):
        """Variable assignments for shell tests: TOPO_ID, NODES and, per
        node X, NS_X, IP4_X, IP6_X; plus the shape's parameters."""
        out = [f"TOPO_ID={shlex.quote(self.id)}",
               f"NODES={shlex.quote(' '.join(self.nodes))}"]
        for n in self.nodes:
            out += [f"NS_{n}={shlex.quote(self.ns(n))}",
                    f"IP4_{n}={self.addr(n, 4)}",
                    f"IP6_{n}={self.addr(n, 6)}"]
        for k, v in self.info.items():
            out.append(f"TOPO_{k.upper()}={shlex.quote(str(v))}")
        return "\n".join(out) + "\n"
