#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MulTFRC takes capacity that frees up about as fast as n TCP flows
# would: on a PROBE_RATE (12 Mbit/s), 100 ms RTT dumbbell with a BDP
# queue (100 packets) over RED, one MulTFRC(n) flow runs PROBE_SECS
# (40 s) beside a Reno flow that stops after PROBE_LEAVE (15 s).  The
# check is how long after the Reno flow's end MulTFRC's goodput (its
# receiver's 0.1 s intervals, 1 s sliding mean) first reaches
# PROBE_TARGET (80 %) of what the link carries, in seconds and in base
# RTTs, against PROBE_GOAL_RTTS (60).  A measurement of one run, not in
# make check: make vm CMD='cd selftests/multfrc && ./probe.sh'.
#
# What n TCP flows would do: at about half the link when the competitor
# leaves, n Reno flows grow by n segments per RTT and reach 80 % of a
# 100-packet pipe in 30 / n RTTs.  TFRC's own increase, from the loss
# history alone, is a fraction of a segment per RTT in each RTT (RFC
# 5348 5.5).  Measured on 6.1 (Documentation/multfrc.rst, Convergence):
# MulTFRC(1) 41 to 95 RTTs with multfrc_probe_rate() (median 76 of 9
# runs: the goal is met in few), 47 to 112 without it (median 101 of 5),
# one Reno flow in its place 32 and 65.
# Why one run takes twice as long as another is in MulTFRC's tracepoint,
# which the script records and sums up for each MulTFRC flow: the rate
# waits for the open loss interval to reach twice the mean of the closed
# ones (RFC 5348 5.5) before multfrc_probe_rate() lifts it, so the time
# depends on how long before the Reno flow's end the last loss event came.
# PROBE_CC ("multfrc:1") lists the flows measured in that place;
# PROBE_CC="multfrc:1 reno" adds a Reno flow's time as the reference,
# printed, not checked.
. "$(dirname "$0")/../lib.sh"
lib_init

[ -x "$FLOWGEN" ] || lib_skip "tools/flowgen not built (make tools)"
lib_require_module tcp_multfrc
PARAM_N=/sys/module/tcp_multfrc/parameters/n
TRACE="$PYTHON -m lab.tools.multfrc_trace"
trap 'echo 1 > $PARAM_N; $TRACE stop 2>/dev/null; lib_cleanup' EXIT

RATE=${PROBE_RATE:-12000000}
SECS=${PROBE_SECS:-40}
LEAVE=${PROBE_LEAVE:-15}
TARGET=${PROBE_TARGET:-0.8}
GOAL_RTTS=${PROBE_GOAL_RTTS:-60}
CCS=${PROBE_CC:-multfrc:1}
BASE_RTT_MS=100
# What the link carries of TCP payload: 1448 of every 1514 bytes.
payload=$(awk -v r="$RATE" 'BEGIN { printf "%.0f", r * 1448 / 1514 }')

lib_topo_up dumbbell --pairs 2 --rate "$RATE" --delay 48ms \
	--access-delay 1ms --queue bdp --qdisc red
export FLOWGEN_SERVER_ARGS="-i 0.1"

for spec in $CCS; do
	cc=${spec%%:*} n=${spec#*:}
	[ "$cc" = "$spec" ] && n=1
	name=$cc-$n
	[ "$cc" = multfrc ] && echo "$n" > $PARAM_N
	lib_multfrc_trace_begin "$TMPD/$name.trace"
	lib_flowgen_flow s1 d1 "$TMPD/$name.json" -t "$SECS" -C "$cc" &
	flow=$!
	FLOWGEN_SERVER_ARGS= lib_flowgen_flow s2 d2 "$TMPD/$name-reno.json" \
		-t "$LEAVE" -C reno
	reno_ran=$?
	leave=$EPOCHREALTIME
	echo leave > /sys/kernel/tracing/trace_marker
	wait $flow
	ran=$?
	lib_multfrc_trace_end
	[ "$cc" = multfrc ] &&
		lib_log "$name: at the Reno flow's end: $($TRACE climb \
			"$TMPD/$name.trace" leave 2>&1)"
	lib_check "$name: both flows ran" [ "$ran,$reno_ran" = 0,0 ]
	goal=$(awk -v c="$payload" -v t="$TARGET" 'BEGIN { printf "%.0f", c * t }')
	t=$("$PYTHON" -m lab.measure flowgen-reach "$TMPD/$name.json" \
		--since "$leave" --goal "$goal" --window 1) || t=-
	rtts=$(awk -v t="$t" -v r=$BASE_RTT_MS 'BEGIN {
		if (t == "-") print "-"; else printf "%.0f", t * 1000 / r }')
	lib_log "$name: at $TARGET of the link $t s ($rtts base RTTs) after the Reno flow left"
	[ "$cc" = multfrc ] &&
		lib_check_timed "$name: takes the freed capacity within $GOAL_RTTS RTTs ($rtts)" \
			awk -v r="$rtts" -v g="$GOAL_RTTS" 'BEGIN { exit !(r != "-" && r <= g) }'
done
lib_finish
