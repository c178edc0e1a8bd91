#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MulTFRC(n) takes the share of n TCP flows: on a 10 Mbit/s, 25 ms
# dumbbell with a BDP DropTail queue, one MulTFRC flow with n = 1, 2 and 4
# runs beside n Reno flows, all started together for 40 s.  Its normalized
# throughput, its rate / (n x the mean Reno rate) after the first 15 s, is
# within 0.7..1.4 (the issue's bound; 1 is the paper's ideal), and the
# flows together fill the link (at least 85 % of what it carries of TCP
# payload: without that the flows would not be competing, and any ratio
# would pass).
#
# Why 15 s of warm-up: MulTFRC's first loss event comes while the Reno
# flows fill the queue, and its first loss interval is derived from the
# little it received until then; the 8-interval history takes about 8 loss
# events, here 2 to 3 s apart, to forget it.  Measured after 5 s of 20 s
# runs, before the loss events' j was capped at ceil(n), it took 0.62,
# 0.68 and 1.07 of its share for n = 1, 2, 4; after 20 s of 60 s runs
# 1.25, 1.36 and 1.14 (n = 1) and 1.12 (n = 2).  2026-11-23, 6.1, with the
# cap, this script: 1.116, 1.189 and 1.162.
#
# MulTFRC's flow runs from s1 to d1, the Reno flows from s2 to d2 (one
# port each): they share only the bottleneck.  n is the module parameter,
# which a connection reads when it chooses the algorithm.  One topology
# serves the three cases: building a namespace per flow costs more under
# TCG than the flows themselves.
#
# Not in make check: MulTFRC takes more than its share, and by how much
# varies from run to run.  On 6.1 (2026-11-23), 40 s runs after 15 s:
# n = 1 1.116 and 1.285, n = 2 1.189 (and 1.261 on 6.12), n = 4 1.162 and
# 1.505 (above the bound); 60 s runs after 20 s, n = 1: 1.25, 1.36, 1.14.
# Run it by hand: make vm CMD='selftests/multfrc/fairness.sh'
#
# Environment: FAIRNESS_N (the values of n, separated by spaces or
# commas; default "1 2 4"), FAIRNESS_SECS (40),
# FAIRNESS_SKIP (15), FAIRNESS_RATE (bit/s, 10000000), FAIRNESS_DELAY
# (one way, 25ms), FAIRNESS_QUEUE (packets or bdp), FAIRNESS_QDISC
# (droptail or red); FAIRNESS_TRACE=DIR keeps each case's MulTFRC
# tracepoint records and flow reports there (a directory under results/:
# the guest's /tmp is its own).
. "$(dirname "$0")/../lib.sh"

[ -x "$FLOWGEN" ] || skip "tools/flowgen not built (make tools)"
require_module tcp_multfrc
PARAM_N=/sys/module/tcp_multfrc/parameters/n
TRACE="$PYTHON $REPO/scripts/multfrc_trace.py"
trap 'echo 1 > $PARAM_N; $TRACE stop 2>/dev/null; cleanup' EXIT

secs=${FAIRNESS_SECS:-40}
skip=${FAIRNESS_SKIP:-15}
rate=${FAIRNESS_RATE:-10000000}
# What the link carries of TCP payload: 1448 of every 1514 bytes on the
# wire (timestamps on).
payload=$(awk -v r=$rate 'BEGIN { printf "%.0f", r * 1448 / 1514 }')

topo_up dumbbell --pairs 2 --rate "$rate" --delay "${FAIRNESS_DELAY:-25ms}" \
	--queue "${FAIRNESS_QUEUE:-bdp}" ${FAIRNESS_QDISC:+--qdisc $FAIRNESS_QDISC}

# flow NAME SENDER RECEIVER PORT CC: start one flow's receiver and sender
# in the background; its receiver's report goes to $TMPD/NAME.json.
flow() {
	local ip=IP4_$3
	nsx "$3" "$FLOWGEN" -s -p "$4" -o "$TMPD/$1.json" &
	wait_listen "$3" "$4" || { FAILED=$((FAILED + 1)); return; }
	nsx "$2" "$FLOWGEN" -c "${!ip}" -p "$4" -t "$secs" -C "$5" \
		-o "$TMPD/$1.json.snd" &
	PIDS+=($!)
}

cases=${FAIRNESS_N:-1 2 4}
for n in ${cases//,/ }; do
	echo "$n" > $PARAM_N
	PIDS=()
	if [ -n "${FAIRNESS_TRACE:-}" ]; then
		$TRACE start --dport 5301
		cat /sys/kernel/tracing/trace_pipe > "$FAIRNESS_TRACE/n$n.trace" &
		TRACE_PID=$!
	fi
	FAILED=0
	# Listeners first, so that the flows start within a few ms.
	flow "n$n-multfrc" s1 d1 5301 multfrc
	for i in $(seq "$n"); do
		flow "n$n-reno$i" s2 d2 $((5301 + i)) reno
	done
	for p in "${PIDS[@]}"; do
		wait "$p" || FAILED=$((FAILED + 1))
	done
	reap_jobs 50
	if [ -n "${FAIRNESS_TRACE:-}" ]; then
		$TRACE stop
		kill "$TRACE_PID"
		cp "$TMPD"/n"$n"-*.json "$FAIRNESS_TRACE/"
	fi
	check "n = $n: all $((n + 1)) flows ran" [ $FAILED = 0 ]

	mf=$("$PYTHON" "$MEASURE" flowgen-rate "$TMPD/n$n-multfrc.json" --skip $skip)
	tcp=()
	for i in $(seq "$n"); do
		tcp+=("$("$PYTHON" "$MEASURE" flowgen-rate "$TMPD/n$n-reno$i.json" --skip $skip)")
	done
	read -r mean norm util <<< "$(awk -v mf="${mf:-0}" -v n="$n" \
		-v cap="$payload" -v tcp="${tcp[*]}" 'BEGIN {
		k = split(tcp, t, " "); s = 0
		for (i = 1; i <= k; i++) s += t[i]
		mean = k ? s / k : 0
		printf "%.0f %.3f %.3f\n", mean,
			mean ? mf / (n * mean) : 0, (mf + s) / cap }')"
	log "n = $n: MulTFRC $mf bit/s, Reno ${tcp[*]} bit/s (mean $mean);" \
		"normalized throughput $norm, link use $util"
	check "n = $n: normalized throughput $norm within 0.7..1.4" \
		awk -v x="$norm" 'BEGIN { exit !(x >= 0.7 && x <= 1.4) }'
	check "n = $n: the flows use at least 85 % of the link ($util)" \
		at_least "$util" 0.85
done
finish
