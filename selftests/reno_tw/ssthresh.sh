#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# reno_tw's slow-start threshold where a connection is not new or its
# window not small:
#  1. a connection that runs reno until a loss set its ssthresh, then
#     switches to reno_tw (setsockopt TCP_CONGESTION), keeps that ssthresh:
#     the initial 200 is for connections that have not left their initial
#     slow start;
#  2. a connection whose route gives it an initial window of 100 million
#     segments (initcwnd) and which then loses a packet sets ssthresh to
#     95 % of that window (or half of it after a timeout): cwnd * 95
#     exceeds 32 bits there, and a product computed in 32 bits would give
#     less than 43 million.

. "$(dirname "$0")/../lib.sh"
lib_init

[ -x "$FLOWGEN" ] || lib_skip "tools/flowgen not built (make tools)"
lib_require_cmd iperf3
lib_require_module tcp_reno_tw
PARAMS=/sys/module/tcp_reno_tw/parameters
PROBE="$PYTHON -m lab.tools.tcp_probe"
trap '$PROBE stop 2>/dev/null; lib_cleanup' EXIT
echo 200 > $PARAMS/initial_ssthresh
echo 5 > $PARAMS/decrease_pct

lib_topo_up dumbbell --rate 10mbit --delay 20ms --queue 100 --loss 1

# 1. Reno for 3 s, then reno_tw: ssthresh before and after the switch,
#    read once everything sent was acknowledged (no ACK can change it in
#    between).
cat > "$TMPD/switch.py" <<-'EOF'
	import socket, struct, sys, time
	s = socket.socket()
	s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"reno")
	s.connect((sys.argv[1], 5301))
	def info():
	    """tcpi_ca_state, tcpi_unacked, tcpi_snd_ssthresh"""
	    i = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
	    return i[1], struct.unpack_from("I", i, 24)[0], \
	        struct.unpack_from("I", i, 76)[0]
	end = time.time() + 3
	while time.time() < end:
	    s.send(b"x" * 65536)
	while info()[1] and time.time() < end + 5:
	    time.sleep(0.01)
	before = info()[2]
	s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"reno_tw")
	state, unacked, after = info()
	print(before, after, state, unacked)
	EOF
lib_nsx d1 "$FLOWGEN" -s -p 5301 -o "$TMPD/switch.json" &
lib_wait_listen d1 5301 || exit $KSFT_FAIL
read -r before after state unacked <<< "$(lib_nsx s1 "$PYTHON" "$TMPD/switch.py" "$IP4_d1")"
wait
lib_log "reno, then reno_tw: ssthresh $before before the switch, $after after it (ca_state $state, $unacked unacknowledged)"
lib_check "a loss under reno set ssthresh below 200" \
	bash -c "[ '${before:-0}' -ge 2 ] && [ '${before:-0}' -lt 200 ]"
lib_check "switching to reno_tw keeps it (not 200)" test "${after:-x}" = "${before:-y}"

# 2. An initial window of 100 million segments, then a loss.
read -r gw dev <<< "$(lib_nsx s1 ip -4 route get "$IP4_d1" |
	sed -n 's/.* via \([^ ]*\) dev \([^ ]*\).*/\1 \2/p')"
lib_nsx s1 ip route add "$IP4_d1/32" via "$gw" dev "$dev" initcwnd 100000000
lib_nsx d1 iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
lib_wait_listen d1 5201 || exit $KSFT_FAIL
$PROBE start --dport 5201
cat /sys/kernel/tracing/trace_pipe > "$TMPD/huge.trace" &
reader=$!
lib_nsx s1 iperf3 -c "$IP4_d1" -p 5201 -t 2 -C reno_tw >/dev/null 2>&1
$PROBE stop
sleep 0.5
kill $reader 2>/dev/null; wait $reader 2>/dev/null
# The first change a loss made: the kernel's own raises to 3/4 of the
# window (restart after idle, tcp_current_ssthresh()) do not count.
first=$($PROBE changes "$TMPD/huge.trace" |
	awk '$4 != int($2 / 2) + int($2 / 4)' | head -1)
lib_log "first change of ssthresh by a loss (t cwnd ssthresh -> ssthresh cwnd): '${first}'"
read -r _ c0 _ s1 _ <<< "${first:-0 0 0 0 0}"
lib_check "the window started at 100 million segments" test "$c0" -ge 99000000
lib_check "ssthresh after the first loss is at least half of it" \
	awk -v c="$c0" -v s="$s1" 'BEGIN { exit !(c > 0 && s >= c / 2) }'
lib_finish
