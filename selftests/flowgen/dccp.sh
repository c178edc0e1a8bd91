#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# flowgen drives the kernel's DCCP: CCID 2 and CCID 3 flows over IPv4 and
# IPv6 take a fair part of a 10 Mbit/s, 50 ms link, and CCID 3 reports what
# TFRC computes (rate X, loss event rate p, an RTT near the path's).
. "$(dirname "$0")/../lib.sh"

FLOWGEN=$REPO/tools/flowgen/flowgen
[ -x "$FLOWGEN" ] || skip "tools/flowgen not built (make tools)"
require_module dccp_ipv4 dccp_ipv6

topo_up dumbbell --rate 10mbit --delay 25ms --queue bdp

# dccp_flow NAME CCID FAMILY: a 10 s flow of 1000-byte packets.
dccp_flow() {
	local ip=IP${3}_d1 port=5302
	nsx d1 "$FLOWGEN" -s -P dccp -p $port -o "$TMPD/$1.json" &
	local srv=$!
	wait_listen d1 $port dccp || return 1
	if ! nsx s1 "$FLOWGEN" -c "${!ip}" -P dccp -K "$2" -p $port -t 10 \
		-o "$TMPD/$1.snd.json"; then
		kill $srv
		return 1
	fi
	wait $srv
}

for ccid in 2 3; do
	dccp_flow ccid$ccid $ccid 4
	rate=$("$PYTHON" "$MEASURE" flowgen-rate "$TMPD/ccid$ccid.json" --skip 2)
	log "DCCP CCID $ccid over IPv4: $rate bit/s after 2 s"
	check "CCID $ccid gets at least half of the 10 Mbit/s link" \
		at_least "${rate:-0}" 5000000
	check "CCID $ccid stays below the link rate" at_most "${rate:-0}" 10000000
done

read -r x p rtt <<< "$("$PYTHON" -c "
import json; iv = json.load(open('$TMPD/ccid3.snd.json'))['intervals'][-2]
print(iv.get('x', -1), iv.get('p', -1), iv.get('rtt_us', -1))")"
log "CCID 3 sender at the end: X $x bit/s, p $p, RTT $rtt us"
check "CCID 3 reports its allowed rate X" at_least "$x" 1000000
check "CCID 3 reports a loss event rate in [0, 1)" \
	bash -c "awk -v p=$p 'BEGIN { exit !(p >= 0 && p < 1) }'"
check "CCID 3's RTT is near the path's 50 ms (50..150 ms with queueing)" \
	bash -c "[ $rtt -ge 50000 ] && [ $rtt -le 150000 ]"

dccp_flow ccid3v6 3 6
rate=$("$PYTHON" "$MEASURE" flowgen-rate "$TMPD/ccid3v6.json" --skip 2)
log "DCCP CCID 3 over IPv6: $rate bit/s after 2 s"
check "CCID 3 over IPv6 gets at least half of the link" at_least "${rate:-0}" 5000000
finish
