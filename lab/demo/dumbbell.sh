#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo, part "dumbbell": build a dumbbell in the guest, run a TCP
# flow across it and print what was configured beside what was measured.
#
# Environment: DEMO_RATE (bit/s, default 10000000), DEMO_DELAY (one-way
# bottleneck delay in ms, default 25), DEMO_SECONDS (default 10),
# DEMO_CC (congestion control, default the system's).

. "$(dirname "$0")/../../selftests/lib.sh"
lib_init

rate=${DEMO_RATE:-10000000}
delay=${DEMO_DELAY:-25}
secs=${DEMO_SECONDS:-10}
cc=${DEMO_CC:-$(sysctl -n net.ipv4.tcp_congestion_control)}

lib_require_cmd iperf3 ping tc
lib_topo_up dumbbell --rate "${rate}bit" --delay "${delay}ms" --queue bdp

rtt_conf=$(awk -v d="$delay" 'BEGIN { print 2 * d / 1000 }')
rtt4=$(lib_ping_rtt s1 "$IP4_d1")
rtt6=$(lib_ping_rtt s1 "$IP6_d1")
( while :; do lib_nsx r1 tc -s -j qdisc show dev to-r2; sleep 0.1; done ) \
	> "$TMPD/q" 2>/dev/null &
sampler=$!
gp=$(lib_iperf_tcp s1 d1 "$secs" 2 -C "$cc")
kill $sampler
maxq=$("$PYTHON" "$MEASURE" max-backlog "$TMPD/q" --handle 10:)
payload=$(awk -v r="$rate" 'BEGIN { print r * 1448 / 1514 }')

awk -v rate="$rate" -v payload="$payload" -v gp="${gp:-0}" -v cc="$cc" \
    -v rc="$rtt_conf" -v r4="${rtt4:-0}" -v r6="${rtt6:-0}" \
    -v q="$TOPO_QUEUE" -v mq="$maxq" -v secs="$secs" -v k="$(uname -r)" 'BEGIN {
	printf "\nDumbbell in a %s guest: s1 -- r1 ==bottleneck== r2 -- d1\n\n", k
	printf "%-34s %16s %16s\n", "", "configured", "measured"
	printf "%-34s %13.2f ms %13.2f ms\n", "RTT, IPv4 ping", rc * 1000, r4 * 1000
	printf "%-34s %13.2f ms %13.2f ms\n", "RTT, IPv6 ping", rc * 1000, r6 * 1000
	printf "%-34s %8.2f Mbit/s %8.2f Mbit/s\n", "TCP goodput (" cc ", " secs " s)", payload / 1e6, gp / 1e6
	printf "%-34s %11d pkts %11d pkts\n", "queue limit / largest backlog", q, mq
	printf "\nThe bottleneck is %.2f Mbit/s on the wire; TCP payload can use %.0f %% of it.\n", rate / 1e6, 100 * 1448 / 1514
	printf "Goodput is measured at the receiver (iperf3 -R), after the first 2 s.\n"
}'
[ -n "$gp" ] && [ -n "$rtt4" ]
