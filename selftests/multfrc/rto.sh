#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MulTFRC after a retransmission timeout (RFC 5348 4.4, the no-feedback
# timer), on a 5 Mbit/s, 50 ms path with a BDP of queue:
#  1. a flow at steady state loses everything it sends for 400 ms (an
#     nftables drop rule on the bottleneck router): the timeout halves the
#     rate (once per loss episode, however many backed-off RTOs it takes)
#     and the flow climbs back from there.  Over the second after the
#     first bytes arrive again, the receiver's goodput must be at least
#     0.4 x its goodput in the second before the blackhole: a halved rate
#     that doubles once per RTT averages well above that (0.6-0.7 x
#     measured), a rate that collapsed to one post-RTO sample (a few kB/s)
#     far below (0.01 x);
#  2. a flow whose first data segments are all dropped (the handshake
#     passes): its first loss event comes from an RTO before any receive
#     rate was measured.  The loss event rate it starts from must be a
#     sane one (below 0.5; about 0.08 from the initial rate of 4380 bytes
#     per RTT), not the p ~ 1 of a zero receive rate, and the flow must
#     average 1 Mbit/s from its third second on (under 0.1 Mbit/s from
#     p ~ 1).
. "$(dirname "$0")/../lib.sh"
lib_init

[ -x "$FLOWGEN" ] || lib_skip "tools/flowgen not built (make tools)"
lib_require_cmd nft
lib_require_module tcp_multfrc
TRACE="$PYTHON -m lab.tools.multfrc_trace"
trap '$TRACE stop 2>/dev/null; lib_cleanup' EXIT
echo 1 > /sys/module/tcp_multfrc/parameters/n

# An nftables chain on r1, empty for now, and an nft session that adds
# and removes rules in it as its commands arrive on descriptor 9: nft's
# own start (a second or more when the guest is busy) stays out of the
# blackhole's timing.
drop_setup() {
	mkfifo "$TMPD/nft.in"
	lib_nsx r1 nft -i < "$TMPD/nft.in" > "$TMPD/nft.out" 2>&1 &
	exec 9> "$TMPD/nft.in"
	echo "add table ip blackhole" >&9
	echo "add chain ip blackhole drops { type filter hook forward priority 0; }" >&9
}
# drop_on MATCH: drop what r1 forwards to port 5301 and matches MATCH.
drop_on() { echo "add rule ip blackhole drops tcp dport 5301 $1 drop" >&9; }
drop_off() { echo "flush chain ip blackhole drops" >&9; }

# goodput REPORT FROM TO: the receiver's goodput (bit/s) in the intervals
# lying between wall-clock times FROM and TO; FROM "first-after:T" means
# one second from the first interval after T that received bytes.
goodput() {
	lib_json "$1" "'\n'.join('%r %r %r' % (d['epoch'] + i['start'],
		i['seconds'], i['bytes']) for i in d['intervals'])" |
	awk -v lo="$2" -v hi="$3" '
		NF { s[++k] = $1; n[k] = $2; b[k] = $3 }
		END {
			if (lo ~ /^first-after:/) {
				t = substr(lo, 13) + 0
				for (i = 1; i <= k && !(s[i] >= t && b[i] != 0); i++)
					;
				if (i > k) { print 0; exit }
				lo = s[i]; hi = lo + hi
			}
			for (i = 1; i <= k; i++)
				if (s[i] >= lo - 1e-3 && s[i] + n[i] <= hi + 1e-3) {
					secs += n[i]; bytes += b[i]
				}
			if (secs) printf "%.0f\n", bytes * 8 / secs
			else print 0
		}'
}

lib_topo_up dumbbell --rate 5mbit --delay 25ms --queue bdp
export FLOWGEN_SERVER_ARGS="-i 0.1"

# 1. A 400 ms blackhole at steady state.
drop_setup
# 12 s: the blackhole comes 4 s after ss shows the connection, and in a
# guest beside another ss and nft took seconds (the rule was on for 1.16
# s, and an 8-s flow ended 0.5 s after it went on, 2026-12-07).
lib_flowgen_flow s1 d1 "$TMPD/steady.json" -t 12 -i 0.1 -C multfrc &
flow=$!
lib_wait_connected s1 5301
sleep 4
t0=$EPOCHREALTIME
drop_on ""
sleep 0.4
drop_off
t1=$EPOCHREALTIME
wait $flow
# The second before ends 0.2 s before the rule was sent.
before=$(goodput "$TMPD/steady.json" \
	"$(awk -v t=$t0 'BEGIN { printf "%.6f", t - 1.2 }')" \
	"$(awk -v t=$t0 'BEGIN { printf "%.6f", t - 0.2 }')")
after=$(goodput "$TMPD/steady.json" "first-after:$t1" 1)
lib_log "goodput: $before bit/s in the second before the blackhole ($(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f", b - a }') s with the drop rule), $after bit/s in the second after the flow resumed"
lib_check_timed "before the blackhole: above 2 Mbit/s (steady state)" lib_at_least "${before:-0}" 2000000
lib_check_timed "after the RTO: at least 0.4 x the goodput before" \
	awk -v a="${after:-0}" -v b="${before:-0}" 'BEGIN { exit !(b > 0 && a >= 0.4 * b) }'
lib_log "receiver, time from the blackhole:kbit/s per interval: $(lib_json \
	"$TMPD/steady.json" "' '.join('%.1f:%d' % (d['epoch'] + i['start'] - $t0,
	i['bytes'] * 8e-3 / i['seconds']) for i in d['intervals']
	if -1.5 <= d['epoch'] + i['start'] - $t0 < 2.5)")"

# 2. Every data segment dropped for the first 0.5 s.
lib_multfrc_trace_begin "$TMPD/first.trace" --dport 5301
drop_on "ip length > 200"
# 8 s: the receiver's seconds start at the first data it reads, which
# the drop rule and the backed-off RTOs delay; with 4 s, in a 6.12 guest
# beside a 6.1 one (CI pre-flight, 2026-12-07), it had no whole interval
# from its third second on.
lib_flowgen_flow s1 d1 "$TMPD/first.json" -t 8 -i 0.1 -C multfrc &
lib_wait_connected s1 5301
sleep 0.5
drop_off
wait $!
lib_multfrc_trace_end
p=$(grep -m1 'slow_start=0' "$TMPD/first.trace" | sed -n 's/.* p_ppb=\([0-9]*\).*/\1/p')
third=$("$PYTHON" "$MEASURE" flowgen-rate "$TMPD/first.json" --skip 2 2>/dev/null)
lib_log "first loss event with no receive rate: p = ${p:-none} ppb; goodput from 2 s on: ${third:-none} bit/s"
snd_epoch=$(lib_json "$TMPD/first.json.snd" "d['epoch']")
read -r late span < <(lib_json "$TMPD/first.json" \
	"'%.2f %.2f' % (d['epoch'] - ${snd_epoch:-0}, d['summary']['seconds'])")
lib_log "the receiver read its first data ${late:-?} s after the sender began, and read for ${span:-?} s"
lib_check "the first loss event's p is below 0.5" \
	awk -v p="${p:-1000000000}" 'BEGIN { exit !(p < 500000000) }'
lib_check_timed "the flow reaches 1 Mbit/s from its third second" lib_at_least "${third:-0}" 1000000
exec 9>&-
lib_finish
