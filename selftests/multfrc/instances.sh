#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MulTFRC's instances at run time: /sys/module/tcp_multfrc/parameters/
# instances adds ("+N"), removes ("-N") and replaces (a list) the
# algorithms multfrc_<N>, with clear errors (EINVAL, EEXIST, ENOENT,
# ENOSPC, EBUSY for a namespace's default); a connection, and a listener
# with the connections it accepts, that use an instance keep working
# after it is removed, and the module unloads once they are closed.
. "$(dirname "$0")/../lib.sh"
lib_init

lib_require_cmd modprobe
PARAMS=/sys/module/tcp_multfrc/parameters
root_cc=$(sysctl -n net.ipv4.tcp_congestion_control)
trap 'sysctl -qw net.ipv4.tcp_congestion_control=$root_cc
lib_cleanup; modprobe -r tcp_multfrc 2>/dev/null' EXIT

modprobe -r tcp_multfrc 2>/dev/null
modprobe tcp_multfrc instances=2 || lib_skip "tcp_multfrc not available"
dmesg -C

# wr TEXT: write TEXT to the instances parameter in one write(); prints
# OK or the errno's name.
wr() {
	"$PYTHON" -c 'import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, sys.argv[2].encode())
    print("OK")
except OSError as e:
    print(errno.errorcode[e.errno])' "$PARAMS/instances" "$1"
}
# expect TEXT RESULT [MESSAGE]: the write of TEXT gives RESULT and, if
# given, the kernel log says MESSAGE.
expect() {
	local got
	dmesg >> "$TMPD/klog"
	dmesg -C
	got=$(wr "$1")
	if [ "$got" != "$2" ]; then
		lib_log "write '$1': $got, expected $2"
		return 1
	fi
	[ -z "$3" ] && return 0
	dmesg | grep -q -- "$3" && return 0
	lib_log "kernel log, without '$3':"
	dmesg | sed 's/^/#   /'
	return 1
}
available() {
	sysctl -n net.ipv4.tcp_available_congestion_control | tr ' ' '\n' |
		grep '^multfrc_' | sort | tr '\n' ' '
}
is() { [ "$1" = "$2" ] || { lib_log "'$1', expected '$2'"; return 1; }; }

lib_check "the load-time instance reads back" is "$(cat $PARAMS/instances)" 2
lib_check "+4 adds multfrc_4" expect +4 OK
lib_check "multfrc_2 and multfrc_4 are available" is "$(available)" \
	"multfrc_2 multfrc_4 "
lib_check "instances reads 2,4" is "$(cat $PARAMS/instances)" 2,4
lib_check "+4 again: EEXIST" expect +4 EEXIST "multfrc_4 exists"
lib_check "-8: ENOENT" expect -8 ENOENT "there is no multfrc_8"
lib_check "+abc: EINVAL" expect +abc EINVAL "'abc' is not a number"
lib_check "+200: EINVAL" expect +200 EINVAL "not a number from 0.1 to 100"
lib_check "+3,-4 (a mix): EINVAL" expect +3,-4 EINVAL "not a mix"
lib_check "+3,+3: EINVAL" expect +3,+3 EINVAL "listed twice"
lib_check "a refused write changed nothing" is "$(available)" \
	"multfrc_2 multfrc_4 "
lib_check "a list replaces them: 4,0.5" expect 4,0.5 OK
lib_check "multfrc_2 is gone, multfrc_0.5 is there" is "$(available)" \
	"multfrc_0.5 multfrc_4 "
lib_check "instances reads 4,0.5" is "$(cat $PARAMS/instances)" 4,0.5
lib_check "-0.5,-4 removes both" expect -0.5,-4 OK
lib_check "no instance left" is "$(available)" ""
expect +5 OK
lib_check "an empty list (a newline) is none" expect $'\n' OK
lib_check "none is left" is "$(available)" ""

sixteen=$(seq 1 16 | sed 's/^/+/' | paste -sd,)
lib_check "16 instances at once" expect "$sixteen" OK
lib_check "a 17th: ENOSPC" expect +17 ENOSPC "at most 16 at a time"
lib_check "16 are available" is "$(available | wc -w)" 16
lib_check "a list of 17: EINVAL" expect "$(seq 1 17 | paste -sd,)" EINVAL \
	"at most 16"
lib_check "a list replacing all 16 by others works" expect \
	"$(seq 21 36 | paste -sd,)" OK
lib_check "the 16 new ones are there" is "$(available | wc -w)" 16
lib_check "none of the old" bash -c "! sysctl -n net.ipv4.tcp_available_congestion_control | grep -qw multfrc_1"
# 33 values of n used so far (2, 4, 0.5, 5, 1-16, 21-36); 31 more fill the
# 64 slots, the next new one is refused
expect $'\n' OK
for i in $(seq 41 71); do
	{ echo "+$i" > $PARAMS/instances && echo "-$i" > $PARAMS/instances; } ||
		lib_log "+$i/-$i failed"
done
lib_check "a value beyond 64 used ones: ENOSPC" expect +80 ENOSPC \
	"64 values of n were used"
lib_check "a value used before comes back" expect +41 OK
expect $'\n' OK

# A namespace's default cannot be removed (its new sockets would keep
# getting it).
expect +0.5 OK
sysctl -qw net.ipv4.tcp_congestion_control=multfrc_0.5
lib_check "removing the default: EBUSY" expect -0.5 EBUSY \
	"multfrc_0.5 is the default congestion control"
lib_check "the default is still available" is "$(available)" "multfrc_0.5 "
sysctl -qw net.ipv4.tcp_congestion_control="$root_cc"
lib_check "no longer the default: removed" expect -0.5 OK
# Making "multfrc" the default opens it to unprivileged sockets; an
# instance added meanwhile must not inherit that.
sysctl -qw net.ipv4.tcp_congestion_control=multfrc
expect +6 OK
lib_check "an instance added while multfrc is the default stays restricted" \
	bash -c "! sysctl -n net.ipv4.tcp_allowed_congestion_control | grep -qw multfrc_6"
sysctl -qw net.ipv4.tcp_congestion_control="$root_cc"
expect -6 OK

# Sockets using an instance while it is removed: a connection sending,
# and a listener that accepts a connection afterwards.  Loopback (IPv6,
# IPv4 without ::1), one process; the module must stay loaded while they
# exist and unload after.
expect +3 OK
"$PYTHON" - "$TMPD" > "$TMPD/sockets" 2>&1 <<'EOF_PY' &
import socket, sys, threading, time
TCP_CONGESTION = 13
def cc(s):
    return s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
# IPv6 loopback, or IPv4 where the guest has no ::1
try:
    fam, addr = socket.AF_INET6, "::1"
    socket.socket(fam).bind((addr, 0))
except OSError:
    fam, addr = socket.AF_INET, "127.0.0.1"
lsn = socket.socket(fam)
lsn.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"multfrc_3")
lsn.bind((addr, 0))
lsn.listen(4)
port = lsn.getsockname()[1]
print("family", addr, flush=True)
cli = socket.create_connection((addr, port))
cli.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"multfrc_3")
srv, _ = lsn.accept()
got = [0]
def sink(s, counter):
    while True:
        b = s.recv(65536)
        if not b:
            return
        counter[0] += len(b)
threading.Thread(target=sink, args=(srv, got), daemon=True).start()
stop = [False]
def source(s):
    buf = b"x" * 65536
    while not stop[0]:
        s.sendall(buf)
threading.Thread(target=source, args=(cli,), daemon=True).start()
time.sleep(1)
# the shell removes multfrc_3 now and tells us through a file
while True:
    try:
        open(sys.argv[1] + "/removed").close()
        break
    except FileNotFoundError:
        print("port", port, flush=True)
        time.sleep(0.2)
mark = got[0]
time.sleep(1)
print("after", got[0] - mark, cc(cli), flush=True)
try:
    s = socket.socket(fam)
    s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, b"multfrc_3")
    print("new-socket OK", flush=True)
except OSError as e:
    print("new-socket", e.errno, flush=True)
c2 = socket.create_connection((addr, port))
a2, _ = lsn.accept()
c2.sendall(b"y" * 100000)
c2.close()
n = 0
while True:
    b = a2.recv(65536)
    if not b:
        break
    n += len(b)
print("child", cc(a2), n, flush=True)
open(sys.argv[1] + "/done", "w").close()
while True:
    try:
        open(sys.argv[1] + "/close").close()
        break
    except FileNotFoundError:
        time.sleep(0.2)
stop[0] = True
for s in (cli, srv, a2, lsn):
    s.close()
print("closed", flush=True)
EOF_PY
py=$!
port=
for i in $(seq 100); do
	port=$(sed -n 's/^port //p' "$TMPD/sockets" | head -1)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { lib_log "the socket script did not start:"; sed 's/^/#   /' "$TMPD/sockets"; }
lib_check "removing multfrc_3 while sockets use it" expect -3 OK
touch "$TMPD/removed"
for i in $(seq 100); do
	[ -e "$TMPD/done" ] && break
	sleep 0.1
done
lib_log "$(grep -v '^port' "$TMPD/sockets" | tr '\n' ';')"
after=$(awk '/^after/ { print $2 }' "$TMPD/sockets")
lib_check "the connection keeps sending after the removal (${after:-0} bytes in 1 s)" \
	lib_at_least "${after:-0}" 100000
lib_check "it still runs multfrc_3" grep -q '^after [0-9]* multfrc_3$' "$TMPD/sockets"
lib_check "a new socket cannot choose it (ENOENT)" grep -q '^new-socket 2$' "$TMPD/sockets"
lib_check "the listener's new connection runs multfrc_3, 100000 bytes" \
	grep -q '^child multfrc_3 100000$' "$TMPD/sockets"
lib_check "the module stays while they exist" bash -c "! modprobe -r tcp_multfrc 2>/dev/null"
touch "$TMPD/close"
wait $py
sleep 0.5
lib_check "the module unloads once they are closed" modprobe -r tcp_multfrc
dmesg >> "$TMPD/klog"
lib_check "no warning or bug in the kernel log" bash -c \
	"! grep -E 'WARNING|BUG|Oops|refcount' '$TMPD/klog'"
lib_finish
