#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The response function under random loss (issue 19, item 4: the
# equation's timeout term against Linux's TCP with SACK, RACK and TLP):
# on a RESPONSE_RATE (10 Mbit/s), 20 ms dumbbell with random loss of
# each of RESPONSE_LOSS percent (default "2 5 10 15"; netem, both
# directions), one at a time, RESPONSE_SECS (25) s each, measured after
# the first 5 s, it runs
#  - one Reno flow, one CUBIC flow and MulTFRC(1);
#  - RESPONSE_N (4) Reno flows together and MulTFRC(RESPONSE_N);
# and prints each goodput (at the receiver: iperf3 for the TCP flows,
# flowgen for MulTFRC, whose tracepoint it filters by port), MulTFRC's
# mean loss event rate p, j, RTT and equation rate, its ratios to the
# Reno flows, and how the n Reno flows and MulTFRC(n) repaired their
# losses: segments retransmitted, timeouts and tail loss probes (the
# sender's namespace's counters).  Random loss does not depend on the
# sender's rate, so this is the equation against the TCP it models,
# without a queue's feedback.  The goal of issue 19 (0.8 to 1.25 of the
# Reno flows) is checked for MulTFRC(1) and MulTFRC(n) at each loss
# rate.  A measurement, not in make check: run it with
# make vm CMD='cd selftests/multfrc && ./response.sh'.
# RESPONSE_TRACE=DIR keeps MulTFRC's traces and flowgen reports there (a
# directory under results/: the guest's /tmp is its own).
. "$(dirname "$0")/../lib.sh"
lib_init

[ -x "$FLOWGEN" ] || lib_skip "tools/flowgen not built (make tools)"
lib_require_module tcp_multfrc
lib_require_cmd iperf3
TRACE="$PYTHON -m lab.tools.multfrc_trace"
trap '$TRACE stop 2>/dev/null; lib_cleanup' EXIT
RATE=${RESPONSE_RATE:-10mbit}
LOSSES=${RESPONSE_LOSS:-2 5 10 15}
N=${RESPONSE_N:-4}
SECS=${RESPONSE_SECS:-25}
SKIP=5

# multfrc_flow N NAME: MulTFRC(N) alone; prints its goodput (bit/s) and
# its trace's means after SKIP: p, j (thousandths), RTT (us), equation
# rate (bit/s).
multfrc_flow() {
	local name=$2 p j rtt x_calc

	echo "$1" > /sys/module/tcp_multfrc/parameters/n
	lib_multfrc_trace_begin "$TMPD/$name.trace" --dport 5301
	lib_flowgen_flow s1 d1 "$TMPD/$name.json" -t "$SECS" -C multfrc
	lib_multfrc_trace_end
	[ -n "${RESPONSE_TRACE:-}" ] &&
		cp "$TMPD/$name".{trace,json} "$RESPONSE_TRACE/"
	read -r _ _ p j rtt x_calc _ <<< \
		"$($TRACE summary "$TMPD/$name.trace" --after $SKIP)"
	echo "$("$PYTHON" "$MEASURE" flowgen-rate "$TMPD/$name.json" --skip $SKIP)" \
	     "${p:--}" "${j:--}" "${rtt:--}" \
	     "$(awk -v x="${x_calc:-0}" 'BEGIN { printf "%.0f", x * 8 }')"
}

# counters: the sender's "retransmitted segments, RTOs, loss probes" so far
counters() {
	lib_nsx s1 nstat -asz | awk '
		$1 == "TcpRetransSegs" { r = $2 }
		$1 == "TcpExtTCPTimeouts" { t = $2 }
		$1 == "TcpExtTCPLossProbes" { l = $2 }
		END { print r + 0, t + 0, l + 0 }'
}

# ratio A B: A / B to two decimals, "-" without B
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'
}

for loss in $LOSSES; do
	lib_topo_up dumbbell --rate "$RATE" --delay 20ms --queue bdp \
		--loss "$loss"
	reno=$(lib_iperf_tcp s1 d1 "$SECS" $SKIP -C reno)
	cubic=$(lib_iperf_tcp s1 d1 "$SECS" $SKIP -C cubic)
	read -r ra ta la <<< "$(counters)"
	renon=$(lib_iperf_tcp s1 d1 "$SECS" $SKIP -C reno -P "$N")
	read -r rb tb lb <<< "$(counters)"
	read -r m1 p1 j1 rtt1 x1 <<< "$(multfrc_flow 1 "m1-$loss")"
	read -r rc tx lc <<< "$(counters)"
	read -r mn pn jn rttn xn <<< "$(multfrc_flow "$N" "mn-$loss")"
	read -r rd td ld <<< "$(counters)"
	r1=$(ratio "$m1" "$reno")
	rn=$(ratio "$mn" "$renon")
	lib_log "loss $loss %: Reno $reno, CUBIC $cubic, MulTFRC(1) $m1 bit/s ($r1 of Reno; p $p1, j $j1/1000, RTT $rtt1 us, equation $x1 bit/s)"
	lib_log "loss $loss %: retransmitted segments, RTOs, loss probes: $N Reno flows $((rb - ra)), $((tb - ta)), $((lb - la)); MulTFRC($N) $((rd - rc)), $((td - tx)), $((ld - lc))"
	lib_log "loss $loss %: $N Reno $renon, MulTFRC($N) $mn bit/s ($rn of them; p $pn, j $jn/1000, RTT $rttn us, equation $xn bit/s)"
	lib_check "loss $loss %: MulTFRC(1) within 0.8-1.25 of Reno ($r1)" \
		awk -v r="$r1" 'BEGIN { exit !(r != "-" && r >= 0.8 && r <= 1.25) }'
	lib_check "loss $loss %: MulTFRC($N) within 0.8-1.25 of $N Reno ($rn)" \
		awk -v r="$rn" 'BEGIN { exit !(r != "-" && r >= 0.8 && r <= 1.25) }'
	lib_topo_down
done
echo 1 > /sys/module/tcp_multfrc/parameters/n
lib_finish
