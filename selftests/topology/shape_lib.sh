#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Checks that a topology means what it says: RTT, TCP goodput and the
# bottleneck queue.  The expectations are computed here from the test's own
# parameters, not taken from the topology library, so a library that builds
# the wrong thing fails.
#
# TOPO_FAULT=delay builds every link with 20% more delay than the checks
# expect, TOPO_FAULT=rate with 20% less rate: the checks must then fail
# (fault_injection.sh asserts that).  TOPO_FAULT=order builds without the
# library's receive packet steering, whose absence reorders packets
# (fails the flood's in-order check; by hand: make vm
# CMD='TOPO_FAULT=order selftests/topology/dumbbell_10m_50ms_bdp.sh').
# SHAPE_CHECKS selects checks of shape_check_dumbbell (default "rtt tcp
# queue").  Sourcing only defines (the helpers are named shape_*); a test
# starts with shape_init.

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shape_init: lib_init, and skip unless the tools the checks use are there.
shape_init() {
	lib_init
	lib_require_cmd ip tc ethtool iperf3 ping ss
}

# shape_fault_delay MS: the one-way delay to build for MS (TOPO_FAULT).
shape_fault_delay() {
	awk -v d="$1" -v f="${TOPO_FAULT:-}" 'BEGIN {
		printf "%gms", (f == "delay") ? d * 1.2 : d }'
}

# shape_fault_rate BIT_S: the rate to build for BIT_S (TOPO_FAULT).
shape_fault_rate() {
	awk -v r="$1" -v f="${TOPO_FAULT:-}" 'BEGIN {
		printf "%d", (f == "rate") ? r * 0.8 : r }'
}

# shape_rtt_expected "d1 d2 ...": RTT in seconds of an idle ping over links with
# these one-way delays (ms), there and back.  Rate limits add nothing: the
# HTB token bucket of an idle link holds at least one full packet, so an
# isolated echo is not held back for its serialization time.
shape_rtt_expected() {
	echo "$1" | tr ' ' '\n' | awk 'NF { t += 2 * $1 / 1000 }
		END { printf "%.6f", t }'
}

# The emulated guest's own time for an echo across the namespaces: under
# TCG pings measured 1.8 to 2.3 ms above the configured RTT on paths of
# 40 to 604 ms (2026-11), which at 40 ms is the whole of a 5 % bound.
EMU_RTT_S=0.0025

# shape_rtt_ok GOT WANT: GOT within 5 % of WANT, plus the emulation's time
# above.
shape_rtt_ok() {
	awk -v g="$1" -v w="$2" -v e="$EMU_RTT_S" \
		'BEGIN { exit !(g >= w * 0.95 && g <= w * 1.05 + e) }'
}

# shape_check_rtt FROM TO EXPECTED_S: both address families within 5 % (and the
# emulation's 2.5 ms above).
shape_check_rtt() {
	local from=$1 to=$2 want=$3 ip4=IP4_$2 ip6=IP6_$2 got
	got=$(lib_ping_rtt "$from" "${!ip4}")
	lib_log "$from -> $to IPv4 RTT ${got}s, configured ${want}s"
	lib_check "$from -> $to IPv4 ping RTT within 5% (+${EMU_RTT_S}s) of ${want}s" \
		shape_rtt_ok "${got:-0}" "$want"
	got=$(lib_ping_rtt "$from" "${!ip6}")
	lib_log "$from -> $to IPv6 RTT ${got}s, configured ${want}s"
	lib_check "$from -> $to IPv6 ping RTT within 5% (+${EMU_RTT_S}s) of ${want}s" \
		shape_rtt_ok "${got:-0}" "$want"
}

# shape_check_tcp SENDER RECEIVER RATE SECONDS SKIP: one TCP flow's goodput
# at the receiver within TCP_TOLERANCE % (default 7) of what the link
# carries of TCP payload.  The rate fault (20 % less) must fail it.
shape_check_tcp() {
	local rate=$3 tol=${TCP_TOLERANCE:-7} want got
	want=$(awk -v r="$rate" 'BEGIN { printf "%d", r * 1448 / 1514 }')
	got=$(lib_iperf_tcp "$1" "$2" "$4" "$5")
	lib_log "TCP $1 -> $2: ${got} bit/s after ${5}s, link carries ${want} bit/s of payload"
	lib_check "TCP goodput within ${tol}% of ${want} bit/s" lib_within "${got:-0}" "$want" "$tol"
}

# shape_udp_flood SENDER RECEIVER RATE SECONDS LEN [PORT]: a UDP flow; prints
# the receiver's rate in bit/s.  Leaves iperf3's report in
# UDP_FLOOD_REPORT.  iperf3's UDP set-up datagrams cross the link too: on
# a lossy one (red_loss.sh) losing one fails the run ("unable to read from
# stream socket"), so a failed run is tried again, on ports PORT + 1..3
# (default 5202), each fresh.
shape_udp_flood() {
	local out try

	for try in 1 2 3; do
		out=$TMPD/udp.$RANDOM.json
		UDP_FLOOD_REPORT=$out
		lib_iperf_flow "$1" "$2" $((${6:-5202} + try)) "$out" -u -b "$3" \
			-l "$5" -t "$4" &&
			"$PYTHON" "$MEASURE" iperf-rate "$out" --skip 1 && return 0
		lib_log "UDP flow $try failed: $(cat "$out.err" 2>/dev/null)" >&2
	done
	return 1
}

# shape_fault_args: topology.py options for the fault TOPO_FAULT injects
# into the build itself.
shape_fault_args() {
	[ "${TOPO_FAULT:-}" = order ] && echo --no-steer
}

# shape_check_queue SENDER RECEIVER ROUTER DEV RATE QUEUE [red]: flood at 3x the
# rate; the router's bottleneck queue (handle 10:) must drop and its backlog
# must reach but never exceed QUEUE packets (RED: only never exceed).
# Leaves the largest backlog seen in QUEUE_MAX_BACKLOG.  QUEUE_FLOOD_LEN:
# the datagrams' payload (default 1472 bytes).
shape_check_queue() {
	local router=$3 dev=$4 rate=$5 queue=$6 red=${7:-}
	local samples=$TMPD/qdisc.samples stats drops maxq secs
	# Long enough to fill the queue twice over at the excess rate.
	secs=$(awk -v q="$queue" -v r="$rate" 'BEGIN {
		s = 2 * q * 1514 * 8 / (2 * r) + 2; printf "%d", (s < 4) ? 4 : s }')
	( while :; do lib_nsx "$router" tc -s qdisc show dev "$dev"; sleep 0.05; done ) \
		> "$samples" 2>/dev/null &
	local sampler=$!
	shape_udp_flood "$1" "$2" $((3 * rate)) "$secs" "${QUEUE_FLOOD_LEN:-1472}" \
		5210 >/dev/null
	kill $sampler; wait $sampler 2>/dev/null
	# One flow through two routers: the emulation must not reorder it
	# (the library steers each flow to one CPU).
	local reordered
	reordered=$("$PYTHON" "$MEASURE" iperf-reordered "$UDP_FLOOD_REPORT")
	lib_log "UDP flood: ${reordered:-?} datagrams arrived out of order"
	lib_check "the flood arrives in order" test "${reordered:-1}" = 0
	lib_nsx "$router" tc -s qdisc show dev "$dev" > "$TMPD/qdisc.end"
	stats=$("$PYTHON" "$MEASURE" qdisc "$TMPD/qdisc.end" --handle 10:)
	drops=$(echo "$stats" | cut -d' ' -f2)
	maxq=$("$PYTHON" "$MEASURE" max-backlog "$samples" --handle 10:)
	QUEUE_MAX_BACKLOG=$maxq
	lib_log "UDP flood at 3x for ${secs}s: $drops drops, largest backlog $maxq of $queue packets"
	lib_check "flood drops at the bottleneck queue" lib_at_least "${drops:-0}" 1
	lib_check "backlog never exceeds $queue packets" lib_at_most "${maxq:-999999}" "$queue"
	if [ -z "$red" ]; then
		lib_check "DropTail backlog reaches its limit" lib_at_least "${maxq:-0}" \
			$((queue * 9 / 10))
	fi
}

# shape_check_dumbbell RATE_BIT DELAY_MS QUEUE ACCESS_RATE_BIT \
#                      ACCESS_DELAY_MS TCP_SECONDS TCP_SKIP [QDISC]: build
# the dumbbell (with the fault TOPO_FAULT asks for) and run the checks
# SHAPE_CHECKS selects on it.
shape_check_dumbbell() {
	local rate=$1 delay=$2 queue=$3 arate=$4 adelay=$5 secs=$6 skip=$7
	local qdisc=${8:-droptail} rtt qlen args
	rtt=$(shape_rtt_expected "$adelay $delay $adelay")
	qlen=$queue
	if [ "$queue" = bdp ]; then
		qlen=$(awk -v r="$rate" -v d="$delay" -v a="$adelay" 'BEGIN {
			q = r * 2 * (d + 2 * a) / 1000 / (8 * 1514)
			q = (q == int(q)) ? q : int(q) + 1; printf "%d", (q < 2) ? 2 : q }')
	fi
	args=(--rate "$(shape_fault_rate "$rate")bit" --delay "$(shape_fault_delay "$delay")"
	      --queue "$queue" --qdisc "$qdisc")
	[ "$arate" != 0 ] && args+=(--access-rate "$(shape_fault_rate "$arate")bit")
	[ "$adelay" != 0 ] && args+=(--access-delay "$(shape_fault_delay "$adelay")")
	lib_log "dumbbell: ${rate} bit/s, ${delay} ms, queue $queue ($qlen pkts), access ${arate} bit/s ${adelay} ms${TOPO_FAULT:+, fault: $TOPO_FAULT}"
	lib_topo_up dumbbell "${args[@]}" $(shape_fault_args)

	local checks=" ${SHAPE_CHECKS:-rtt tcp queue} "
	lib_check "library sized the queue $qlen packets" test "$TOPO_QUEUE" = "$qlen"
	[[ $checks == *" rtt "* ]] && shape_check_rtt s1 d1 "$rtt"
	[[ $checks == *" tcp "* ]] && shape_check_tcp s1 d1 "$rate" "$secs" "$skip"
	[[ $checks == *" queue "* ]] && shape_check_queue s1 d1 r1 to-r2 "$rate" \
		"$qlen" "$([ "$qdisc" = red ] && echo red)"
	return 0
}
