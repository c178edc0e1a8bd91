# SPDX-License-Identifier: GPL-2.0
"""The transports a flow can use, and what the lab knows about each.

A flow's transport is one of TRANSPORTS (flowgen -P names them the same);
everything that differs between transports is a field here, so that a new
transport is one line below (and its support in tools/flowgen):

  ss       ss's one-letter option for its sockets: -t, -u, -d (DCCP),
           -S (SCTP); a listener is "ss -l<ss>n", a connection "ss -<ss>"
  sampled  ss -i shows its per-socket state (cwnd, RTT, rates), which an
           experiment's capture = { ss = S } samples at the senders
  tcp      it runs over TCP: TCP options (-C, -M, -W) and TCP_INFO apply
  payload  payload bytes of a full packet by default (a TCP flow's mss, or
           flowgen's -l default), None where it varies (SCTP)
  datagrams  datagrams with no congestion control of their own (UDP): a
           run's tunnel carries them, the receiver counts their losses
           and one-way delays and waits out silences, and an experiment's
           header_bytes count on the wire with each
  tfrc     the sender reports TFRC's rate X and loss event rate p (DCCP's
           CCID 3), from which the DCP paper's F is computed

A tunnel (tools/tsm) carries a flow's datagrams over a transport of its
own, named as tsm names it (dccp-ccid3, tltcp, multfrc:N...):
carrier() says which of these its sockets are.
"""

import errno
import socket
from typing import NamedTuple, Optional

# Payload bytes in a full-sized TCP segment: a 1500-byte MTU less IP,
# TCP and the timestamp option.
TCP_PAYLOAD = 1448


class Transport(NamedTuple):
    name: str
    ss: str
    sampled: bool = False
    tcp: bool = False
    payload: Optional[int] = None
    datagrams: bool = False
    tfrc: bool = False


TRANSPORTS = {t.name: t for t in (
    Transport("tcp", ss="t", sampled=True, tcp=True, payload=TCP_PAYLOAD),
    Transport("tltcp", ss="t", sampled=True, tcp=True, payload=TCP_PAYLOAD),
    Transport("udp", ss="u", payload=TCP_PAYLOAD, datagrams=True),
    Transport("dccp", ss="d", sampled=True, payload=1000, tfrc=True),
    Transport("sctp", ss="S"),
)}

# The transports a tunnel (tools/tsm) may use: DCCP's CCIDs, or TCP with
# a congestion control or ULP of this project.
TUNNEL_TRANSPORTS = ("dccp-ccid3", "dccp-ccid2", "tltcp", "multfrc")


def _is(name, field):
    """The transport name has the property field (an unknown one has
    none)."""
    return name in TRANSPORTS and getattr(TRANSPORTS[name], field)


def tcp_like(name):
    """Over TCP: TCP options (-C, -M, -W) and TCP_INFO apply."""
    return _is(name, "tcp")


def sampled(name):
    """ss -i describes its sockets (an experiment's ss capture)."""
    return _is(name, "sampled")


def datagrams(name):
    """Datagrams without congestion control (see the table's doc)."""
    return _is(name, "datagrams")


def tfrc(name):
    """Its sender reports TFRC's X and p."""
    return _is(name, "tfrc")


def payload(flow):
    """Payload bytes per packet of a flow (a TCP flow's is its mss if
    given), None where it varies (SCTP)."""
    t = TRANSPORTS.get(flow["transport"])
    if t is None or t.payload is None:
        return None
    if t.tcp:
        return flow.get("mss") or t.payload
    return flow.get("len", t.payload)


def carrier(tunnel_transport):
    """The transport of a tunnel's sockets: dccp for dccp-ccid*, tcp for
    the others."""
    return "dccp" if tunnel_transport.startswith("dccp") else "tcp"


# socket()'s errnos that say the kernel has no DCCP (tools/lib/dccp_probe.c)
_DCCP_ABSENT = (errno.ESOCKTNOSUPPORT, errno.EPROTONOSUPPORT,
                errno.EAFNOSUPPORT, errno.EINVAL)


def dccp_missing(family=socket.AF_INET):
    """None if a DCCP socket opens here, else why not ("socket:
    ESOCKTNOSUPPORT").  socket() does not load dccp_ipv4 (it has no
    module alias): load it first; then a failure means no DCCP for this
    kernel (Linux removed it in 6.16).  Errors that do not say so
    (EMFILE, ENOMEM...) are raised."""
    try:
        socket.socket(family, 6, 33).close()    # SOCK_DCCP, IPPROTO_DCCP
        return None
    except OSError as e:
        if e.errno not in _DCCP_ABSENT:
            raise
        return f"socket: {errno.errorcode.get(e.errno, e.errno)}"


def needs_dccp(run):
    """A run of an experiment needs DCCP: a DCCP flow, or a tunnel over
    DCCP."""
    tunnel = run.get("tunnel") or {}
    return any(f["transport"] == "dccp" for f in run["flows"]) or \
        carrier(tunnel.get("transport", "tcp")) == "dccp"
