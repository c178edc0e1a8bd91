#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Recovery after a phase of high loss (RFC 5348 5.5, history
# discounting): one flow alone on a RECOVERY_RATE (15 Mbit/s), 20 ms
# RED dumbbell whose random loss steps from 1 % to RECOVERY_HIGH (10 %)
# at 6 s and to RECOVERY_LOW (0.5 %) at 14 s, 24 s in all, for each of
# RECOVERY_CC ("multfrc:1 multfrc:2 reno").  For each flow it prints
#  - its goodput in the high-loss phase's last 6 s;
#  - its settled goodput in the last phase (its last 4 s) and how long
#    after the step down its goodput (0.5 s sliding mean of the
#    receiver's 0.1 s intervals) first reached 90 % of it, in seconds and
#    in RTTs;
#  - for MulTFRC, the same from its own rate (tracepoint): the time until
#    the rate it set first reached 90 % of its median over the last 4 s,
#    the equation's rate for the loss it then measured.
# The goal is 10 RTTs for MulTFRC's rate; it is checked (the goodput's
# time is printed beside Reno's).  A measurement, not in make check: run
# it with make vm CMD='cd selftests/multfrc && ./recovery.sh'.
# RECOVERY_TRACE=DIR keeps each flow's trace and report there (a
# directory under results/: the guest's /tmp is its own).
. "$(dirname "$0")/../lib.sh"
lib_init

[ -x "$FLOWGEN" ] || lib_skip "tools/flowgen not built (make tools)"
lib_require_module tcp_multfrc
TRACE="$PYTHON -m lab.tools.multfrc_trace"
trap '$TRACE stop 2>/dev/null; lib_cleanup' EXIT
RATE=${RECOVERY_RATE:-15mbit}
HIGH=${RECOVERY_HIGH:-10}
LOW=${RECOVERY_LOW:-0.5}
CCS=${RECOVERY_CC:-multfrc:1 multfrc:2 reno}
GOAL_RTTS=${RECOVERY_GOAL_RTTS:-10}

lib_topo_up dumbbell --rate "$RATE" --delay 20ms --queue bdp --qdisc red \
	--loss 1
export FLOWGEN_SERVER_ARGS="-i 0.1"

# set_loss PERCENT: the bottleneck's random loss, both directions (its
# netem on r1's and r2's ifb, as lab.topology's set_loss).
set_loss() {
	local x y q
	for x in r1 r2; do
		y=r2
		[ $x = r2 ] && y=r1
		q=$(lib_nsx $y tc qdisc show dev ifb-$x | grep -m1 netem)
		lib_nsx $y tc qdisc change dev ifb-$x root netem \
			limit "$(sed -n 's/.* limit \([0-9]*\).*/\1/p' <<< "$q")" \
			delay "$(sed -n 's/.* delay \([0-9.]*[mu]*s\).*/\1/p' <<< "$q")" \
			loss random "$1%"
	done
}

for spec in $CCS; do
	cc=${spec%%:*} n=${spec#*:}
	[ "$cc" = "$spec" ] && n=1
	name=$cc-$n
	[ "$cc" = multfrc ] && echo "$n" > /sys/module/tcp_multfrc/parameters/n
	set_loss 1
	lib_multfrc_trace_begin "$TMPD/$name.trace" --dport 5301
	lib_flowgen_flow s1 d1 "$TMPD/$name.json" -t 24 -C "$cc" &
	flow=$!
	sleep 6
	set_loss "$HIGH"
	sleep 8
	set_loss "$LOW"
	echo "step $EPOCHREALTIME" > /sys/kernel/tracing/trace_marker
	echo "$EPOCHREALTIME" > "$TMPD/$name.step"
	wait $flow
	lib_multfrc_trace_end
	"$PYTHON" - "$TMPD/$name" "$cc" <<-'EOF_PY' > "$TMPD/$name.out"
	import json, re, sys
	from lab.tools import flowgen, multfrc_trace
	base, cc = sys.argv[1], sys.argv[2]
	step = float(open(base + ".step").read())
	d = json.load(open(base + ".json"))
	iv = [(d["epoch"] + i["start"] - step, i["seconds"], i["bytes"])
	      for i in d["intervals"]]
	end = max(s + n for s, n, b in iv)
	last = [b * 8 / n for s, n, b in iv if s >= end - 4 and n > 0]
	settled = sum(last) / len(last) if last else 0
	good_t = flowgen.reach_time(d, 0.9 * settled, step, window=0.5)
	text = open(base + ".trace").read()
	recs = multfrc_trace.parse(text)
	m = re.search(r"\s(\d+\.\d+): tracing_mark_write: step", text)
	rate_t = rtt = None
	if cc == "multfrc" and recs and m:
	    t0 = float(m.group(1))
	    tend = recs[-1][0]
	    tail = sorted(f["rate"] for t, f in recs if t >= tend - 4)
	    med = tail[len(tail) // 2]
	    for t, f in recs:
	        if t >= t0 and f["rate"] >= 0.9 * med:
	            rate_t = t - t0
	            break
	    rtts = [f["rtt_us"] for t, f in recs if t >= t0]
	    rtt = sum(rtts) / len(rtts) / 1e6
	high = [b * 8 / n for s, n, b in iv if -6 <= s < 0 and n > 0]
	high = sum(high) / len(high) if high else 0
	print(f"{settled / 1e3:.0f}", f"{high / 1e3:.0f}",
	      "-" if good_t is None else f"{good_t:.2f}",
	      "-" if rate_t is None else f"{rate_t:.3f}",
	      "-" if rtt is None else f"{rtt * 1e3:.1f}")
	EOF_PY
	[ -n "${RECOVERY_TRACE:-}" ] &&
		cp "$TMPD/$name".{trace,json,step} "$RECOVERY_TRACE/"
	read -r settled high good_t rate_t rtt_ms < "$TMPD/$name.out"
	line="$name: $high kbit/s at ${HIGH} % (its last 6 s); settled at ${LOW} % $settled kbit/s; goodput at 90 % after $good_t s"
	if [ "$cc" = multfrc ]; then
		rtts=$(awk -v t="$rate_t" -v r="$rtt_ms" 'BEGIN { if (t == "-") print "-"; else printf "%.1f", t * 1000 / r }')
		line+="; rate at 90 % after $rate_t s = $rtts RTTs (RTT $rtt_ms ms)"
		lib_log "$line"
		lib_check_timed "$name: rate back to 90 % of the equation's within $GOAL_RTTS RTTs ($rtts)" \
			awk -v r="$rtts" -v g="$GOAL_RTTS" 'BEGIN { exit !(r != "-" && r <= g) }'
	else
		lib_log "$line"
	fi
done
lib_finish
