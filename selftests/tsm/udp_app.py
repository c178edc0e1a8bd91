#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An unmodified UDP application for tunnel.sh: a constant-rate sender and
a sink that checks what arrives; and the test's wait for a state of the
tunnel's statistics.

  udp_app.py send HOST PORT --rate PPS --size BYTES --count N [--first S]
                  [--bind ADDR:PORT] [--connect] [--report FILE]
                  [--linger S] [--steady]
  udp_app.py sink ADDR PORT --out FILE [--idle S] [--echo]
  udp_app.py wait FILE EXPR [--timeout S]

Each datagram is its sequence number, the sender's CLOCK_REALTIME in ns
(the guest's network namespaces share one clock) and a filler computed
from the sequence number, so the sink can tell intact from damaged. A
datagram's one-way delay ends when the kernel queued it to the sink's
socket (SO_TIMESTAMPNS, CLOCK_REALTIME too), not when the sink read it:
a sink the guest's CPU was away from does not count as the tunnel's
queue (read_lag_ms_max says how late it read). The sink writes a JSON
summary when nothing arrived for --idle seconds (or on SIGTERM): count,
bytes, damaged, reordered, first and last sequence numbers, one-way
delays, the received bytes per second, the median delay of each second
of sending (delay_p50_by_send_s, by the sender's timestamps, from the
first datagram's) and their trend in ms per second
(delay_trend_ms_per_s: the median of the slopes between every two of
those medians after the first second, Theil and Sen's estimator, which
one or two seconds of an emulator's stall hardly move; null with fewer
than three). --echo sends each datagram back to its source. --connect
makes the sender connect its socket, so it accepts replies only from
HOST:PORT (as a real application would: a redirected reply must come
from the original destination); --report writes FILE, a JSON object: the
replies, waited for up to --linger seconds after the last datagram (less
once each has had its reply), and the seconds from the first datagram
sent to the last (send_s), which a starved sender stretches. The sender
keeps its schedule by catching up after a late wake-up (a burst, as a
real application that timestamps its media does); --steady restarts the
schedule instead, for tests of integrity that must not depend on how
long the guest's CPU was away.

wait polls FILE, a JSON object d (the tunnel's statistics, replaced by a
rename), every 50 ms until the Python expression EXPR over d holds (exit
0) or --timeout seconds passed (exit 1): one interpreter for the whole
wait, where a poll per start of Python costs most of a second under TCG.
"""
import argparse
import json
import signal
import socket
import struct
import sys
import time

HDR = struct.Struct("!QQ")
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
# include/uapi/asm-generic/socket.h: SO_TIMESTAMPNS_OLD, whose control
# message (SCM_TIMESTAMPNS, the same number) is a struct timespec
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
TIMESPEC = struct.Struct("@qq")
PATTERN = bytes(i % 251 for i in range(251 + 65536))


def filler(seq, n):
    return PATTERN[seq % 251:seq % 251 + n]


def payload(seq, size):
    return HDR.pack(seq, time.time_ns()) + filler(seq, size - HDR.size)


def family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def send(a):
    s = socket.socket(family(a.host), socket.SOCK_DGRAM)
    if a.bind:
        host, port = a.bind.rsplit(":", 1)
        s.bind((host.strip("[]"), int(port)))
    dst = (a.host, a.port)
    if a.connect:
        s.connect(dst)
    s.setblocking(False)
    replies = 0
    first = last = None
    t0 = time.monotonic() + a.first
    for seq in range(a.first_seq, a.first_seq + a.count):
        at = t0 + (seq - a.first_seq) / a.rate
        while True:
            now = time.monotonic()
            if now >= at:
                break
            time.sleep(at - now)
        if a.steady and now - at > 1 / a.rate:
            t0 += now - at
        first = now if first is None else first
        last = now
        try:
            if a.connect:
                s.send(payload(seq, a.size))
            else:
                s.sendto(payload(seq, a.size), dst)
        except OSError:
            pass
        try:
            while True:
                s.recv(65536)
                replies += 1
        except OSError:
            pass
    # Wait for the replies still on their way: at most --linger seconds,
    # less once every datagram has had its reply.
    end = time.monotonic() + a.linger
    while time.monotonic() < end and replies < a.count:
        try:
            s.recv(65536)
            replies += 1
        except OSError:
            time.sleep(0.01)
    if a.report:
        with open(a.report, "w") as f:
            json.dump({"replies": replies,
                       "send_s": round(last - first, 3) if a.count else 0},
                      f)


def sink(a):
    s = socket.socket(family(a.addr), socket.SOCK_DGRAM)
    s.bind((a.addr, a.port))
    # Room for the seconds a guest's CPU may be away from the sink: the
    # default receive buffer holds some 90 datagrams of 1000 bytes, under
    # a second of the overload case's (a starved sink the likely reason
    # why it once counted 3 fewer than the server delivered, 2026-12-07).
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.settimeout(0.2)
    st = {"count": 0, "bytes": 0, "damaged": 0, "reordered": 0,
          "first": None, "last": None, "delays_ms": [], "per_s": {},
          "seqs": [], "read_lag_ms_max": 0, "no_timestamp": 0}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    last_rx = time.monotonic()
    t_first = None
    ts_first = None
    by_send_s = {}
    while not stop:
        try:
            d, anc, _, src = s.recvmsg(65536,
                                       socket.CMSG_SPACE(TIMESPEC.size))
        except socket.timeout:
            if st["count"] and time.monotonic() - last_rx > a.idle:
                break
            continue
        read = time.time_ns()
        last_rx = time.monotonic()
        now = arrival(anc)
        if now is None:
            # the kernel turns timestamps on in a work item: the first
            # datagrams may come before it ran
            st["no_timestamp"] += 1
            now = read
        st["read_lag_ms_max"] = max(st["read_lag_ms_max"],
                                    round((read - now) / 1e6, 3))
        if a.echo:
            s.sendto(d, src)
        st["count"] += 1
        st["bytes"] += len(d)
        if len(d) < HDR.size:
            st["damaged"] += 1
            continue
        seq, ts = HDR.unpack_from(d)
        if d[HDR.size:] != filler(seq, len(d) - HDR.size):
            st["damaged"] += 1
        if st["last"] is not None and seq <= st["last"]:
            st["reordered"] += 1
        if st["first"] is None:
            st["first"] = seq
        st["last"] = seq
        st["seqs"].append(seq)
        st["delays_ms"].append(round((now - ts) / 1e6, 3))
        ts_first = ts_first if ts_first is not None else ts
        by_send_s.setdefault((ts - ts_first) // 10**9, []).append(
            st["delays_ms"][-1])
        t_first = t_first or now
        sec = str(int((now - t_first) / 1e9))
        st["per_s"][sec] = st["per_s"].get(sec, 0) + len(d)
    st["delay_p50_by_send_s"] = {str(k): median(v)
                                 for k, v in sorted(by_send_s.items())}
    st["delay_trend_ms_per_s"] = trend(
        [(k, median(v)) for k, v in by_send_s.items() if k >= 1])
    with open(a.out, "w") as f:
        json.dump(st, f)


def arrival(anc):
    for level, typ, data in anc:
        if (level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS and
                len(data) >= TIMESPEC.size):
            sec, nsec = TIMESPEC.unpack_from(data)
            return sec * 10**9 + nsec
    return None


def median(v):
    v = sorted(v)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def trend(points):
    if len(points) < 3:
        return None
    return round(median([(y2 - y1) / (x2 - x1)
                         for i, (x1, y1) in enumerate(points)
                         for x2, y2 in points[i + 1:] if x2 != x1]), 1)


def wait(a):
    end = time.monotonic() + a.timeout
    while True:
        try:
            with open(a.file) as f:
                if eval(a.expr, {}, {"d": json.load(f)}):
                    return 0
        except (OSError, ValueError, LookupError, TypeError):
            pass
        if time.monotonic() >= end:
            return 1
        time.sleep(0.05)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send")
    s.add_argument("host", type=lambda h: h.strip("[]"))
    s.add_argument("port", type=int)
    s.add_argument("--rate", type=float, default=100)
    s.add_argument("--size", type=int, default=120)
    s.add_argument("--count", type=int, default=100)
    s.add_argument("--first", type=float, default=0)
    s.add_argument("--first-seq", type=int, default=0)
    s.add_argument("--bind")
    s.add_argument("--connect", action="store_true")
    s.add_argument("--report")
    s.add_argument("--linger", type=float, default=0)
    s.add_argument("--steady", action="store_true")
    k = sub.add_parser("sink")
    k.add_argument("addr")
    k.add_argument("port", type=int)
    k.add_argument("--out", required=True)
    k.add_argument("--idle", type=float, default=2)
    k.add_argument("--echo", action="store_true")
    w = sub.add_parser("wait")
    w.add_argument("file")
    w.add_argument("expr")
    w.add_argument("--timeout", type=float, default=10)
    a = p.parse_args()
    if a.cmd == "send" and a.size < HDR.size:
        sys.exit("--size: at least %d" % HDR.size)
    if a.cmd == "wait":
        sys.exit(wait(a))
    send(a) if a.cmd == "send" else sink(a)


if __name__ == "__main__":
    main()
