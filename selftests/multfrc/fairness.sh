#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MulTFRC(n) takes the share of n TCP flows: on a 10 Mbit/s, 25 ms
# dumbbell with a BDP-sized RED queue, one MulTFRC flow with n = 1, 2 and 4
# runs beside n Reno flows, all started together for 30 s.  Its normalized
# throughput, its rate / (n x the mean Reno rate) while all of them ran,
# after the first 10 s, is at least 0.7 and at most 1.4 (1 is the paper's
# ideal; above 1.4 is a TODO, see the check), and the flows together fill
# the link (at least 75 % of what it carries of TCP payload: without that
# the flows would not be competing, and any ratio would pass).
#
# Why RED: the paper's fairness results (Fig. 6 a, Fig. 7) are over RED,
# whose random early drops hit each flow in proportion to what it sends.
# Over DropTail a smooth, paced sender sees fewer loss events than Reno,
# whose additive increase sends the packet that overflows the queue, so
# any equation-based control takes more than its share there (the
# imbalance of TFRC against TCP that the paper cites as [13]).  This
# script prints both loss event rates to show it (the figures measured
# are in Documentation/multfrc.rst, Tests and Limits).  DropTail is measured in the
# experiment (experiments/multfrc.toml, Fig. 6 b), not bounded
# here.  FAIRNESS_QDISC=droptail runs this script over it.
#
# Why 10 s of warm-up: MulTFRC's first loss event comes while the Reno
# flows fill the queue, and its first loss interval is derived from the
# little it received until then; the 8-interval history forgets it after
# about 8 loss events, under a second apart over RED here.
#
# MulTFRC's flow runs from s1 to d1, the Reno flows from s2 to d2 (one
# port each): they share only the bottleneck.  n is the module parameter,
# which a connection reads when it chooses the algorithm.  One topology
# serves the three cases: building a namespace per flow costs more under
# TCG than the flows themselves.
#
# Environment: FAIRNESS_N (the values of n, separated by spaces or
# commas; default "1 2 4"), FAIRNESS_SECS (30), FAIRNESS_SKIP (10),
# FAIRNESS_RATE (bit/s, 10000000), FAIRNESS_DELAY (one way, 25ms),
# FAIRNESS_QUEUE (packets or bdp), FAIRNESS_QDISC (red or droptail),
# FAIRNESS_CC (the n TCP flows' congestion control, reno; cubic is the
# default competitor on real machines);
# FAIRNESS_TRACE=DIR keeps each case's MulTFRC tracepoint records and
# flow reports there (a directory under results/: the guest's /tmp is its
# own).
. "$(dirname "$0")/../lib.sh"
lib_init

[ -x "$FLOWGEN" ] || lib_skip "tools/flowgen not built (make tools)"
lib_require_module tcp_multfrc
PARAM_N=/sys/module/tcp_multfrc/parameters/n
TRACE="$PYTHON -m lab.tools.multfrc_trace"
trap 'echo 1 > $PARAM_N; $TRACE stop 2>/dev/null; lib_cleanup' EXIT

secs=${FAIRNESS_SECS:-30}
tcp_cc=${FAIRNESS_CC:-reno}
skip=${FAIRNESS_SKIP:-10}
rate=${FAIRNESS_RATE:-10000000}
# What the link carries of TCP payload: 1448 of every 1514 bytes on the
# wire (timestamps on).
payload=$(awk -v r=$rate 'BEGIN { printf "%.0f", r * 1448 / 1514 }')

lib_topo_up dumbbell --pairs 2 --rate "$rate" --delay "${FAIRNESS_DELAY:-25ms}" \
	--queue "${FAIRNESS_QUEUE:-bdp}" --qdisc "${FAIRNESS_QDISC:-red}"

# receiver NAME RECEIVER PORT: start one flow's receiver in the
# background; its report goes to $TMPD/NAME.json.
receiver() {
	lib_nsx "$2" "$FLOWGEN" -s -p "$3" -o "$TMPD/$1.json" &
	lib_wait_listen "$2" "$3" || FAILED=$((FAILED + 1))
}

# sender NAME SENDER RECEIVER PORT CC: start the flow's sender.
sender() {
	local ip=IP4_$3
	lib_nsx "$2" "$FLOWGEN" -c "${!ip}" -p "$4" -t "$secs" -C "$5" \
		-o "$TMPD/$1.json.snd" &
	PIDS+=($!)
}

# loss_events NODE: "segments sent, loss events" of the node's TCP so
# far, from its namespace's counters: recovery episodes (SACK or Reno) and
# RTOs, each of which is one loss event.  MulTFRC's sender is alone in s1,
# the Reno senders share s2.
loss_events() {
	lib_nsx "$1" nstat -asz | awk '
		$1 == "TcpOutSegs" { segs = $2 }
		$1 ~ /^TcpExtTCP(Sack|Reno)Recovery$|^TcpExtTCPTimeouts$/ { ev += $2 }
		END { print segs + 0, ev + 0 }'
}

cases=${FAIRNESS_N:-1 2 4}
for n in ${cases//,/ }; do
	echo "$n" > $PARAM_N
	PIDS=()
	if [ -n "${FAIRNESS_TRACE:-}" ]; then
		lib_multfrc_trace_begin "$FAIRNESS_TRACE/n$n.trace" --dport 5301
	fi
	FAILED=0
	# Every receiver first, then the senders one right after the other:
	# the flows start within a few ms of each other.
	receiver "n$n-multfrc" d1 5301
	for i in $(seq "$n"); do
		receiver "n$n-reno$i" d2 $((5301 + i))
	done
	sender "n$n-multfrc" s1 d1 5301 multfrc
	for i in $(seq "$n"); do
		sender "n$n-reno$i" s2 d2 $((5301 + i)) "$tcp_cc"
	done
	sleep "$skip"
	read -r mf_s0 mf_e0 <<< "$(loss_events s1)"
	read -r tcp_s0 tcp_e0 <<< "$(loss_events s2)"
	for p in "${PIDS[@]}"; do
		wait "$p" || FAILED=$((FAILED + 1))
	done
	read -r mf_s1 mf_e1 <<< "$(loss_events s1)"
	read -r tcp_s1 tcp_e1 <<< "$(loss_events s2)"
	lib_reap_jobs 50
	if [ -n "${FAIRNESS_TRACE:-}" ]; then
		lib_multfrc_trace_end
		cp "$TMPD"/n"$n"-*.json "$FAIRNESS_TRACE/"
	fi
	lib_check "n = $n: all $((n + 1)) flows ran" [ $FAILED = 0 ]

	# One window for all: while every flow ran, after the warm-up.
	read -r mf tcp_all <<< "$("$PYTHON" "$MEASURE" flowgen-rates \
		"$TMPD/n$n-multfrc.json" "$TMPD"/n"$n"-reno*.json --skip "$skip")"
	read -r -a tcp <<< "$tcp_all"
	read -r mean norm util <<< "$(awk -v mf="${mf:-0}" -v n="$n" \
		-v cap="$payload" -v tcp="${tcp[*]}" 'BEGIN {
		k = split(tcp, t, " "); s = 0
		for (i = 1; i <= k; i++) s += t[i]
		mean = k ? s / k : 0
		printf "%.0f %.3f %.3f\n", mean,
			mean ? mf / (n * mean) : 0, (mf + s) / cap }')"
	lib_log "n = $n: MulTFRC $mf bit/s, $tcp_cc ${tcp[*]} bit/s (mean $mean);" \
		"normalized throughput $norm, link use $util"
	# Why a ratio is what it is: TFRC's share follows from the loss
	# event rate it sees, TCP's from the one each TCP flow sees.
	lib_log "n = $n: after ${skip} s, loss events per segment sent:" \
		"MulTFRC $(awk -v e=$((mf_e1 - mf_e0)) -v s=$((mf_s1 - mf_s0)) \
			'BEGIN { printf "%.5f (%d)", s ? e / s : 0, e }')," \
		"Reno $(awk -v e=$((tcp_e1 - tcp_e0)) -v s=$((tcp_s1 - tcp_s0)) \
			'BEGIN { printf "%.5f (%d)", s ? e / s : 0, e }')"
	lib_check_timed "n = $n: normalized throughput $norm at least 0.7" \
		lib_at_least "$norm" 0.7
	# Known to fail at times for n = 1 on 6.1: MulTFRC sees about half
	# the loss events per segment that Reno sees, here too (see
	# Documentation/multfrc.rst, Limits).
	lib_check_todo "loss-event parity with Reno" \
		"n = $n: normalized throughput $norm at most 1.4" \
		lib_at_most "$norm" 1.4
	# 75 %: a 6.1 guest in make check on a slow day (2026-12-07) had
	# 0.829 and 0.841 with the shares in bounds (0.913, 0.889); flows
	# that do not compete leave far more of the link.
	lib_check_timed "n = $n: the flows use at least 75 % of the link ($util)" \
		lib_at_least "$util" 0.75
done
lib_finish
