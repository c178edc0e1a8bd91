#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# flowgen measures what iperf3 measures: its TCP goodput at the receiver
# agrees with iperf3's on the same link within 3 %, and its UDP receiver
# counts rate, loss and one-way delay as the link was configured; on a
# kernel without DCCP, -P dccp is refused at once, saying so.
. "$(dirname "$0")/../lib.sh"
lib_init

[ -x "$FLOWGEN" ] || lib_skip "tools/flowgen not built (make tools)"
lib_require_cmd iperf3

lib_topo_up dumbbell --rate 10mbit --delay 25ms --queue bdp

# 10 s after a 2 s start: short windows let one stall of the emulator
# decide the comparison.
ip=$(lib_iperf_tcp s1 d1 12 2)
lib_flowgen_flow s1 d1 "$TMPD/tcp.json" -t 12
fg=$("$PYTHON" "$MEASURE" flowgen-rate "$TMPD/tcp.json" --skip 2)
lib_log "TCP goodput after 2 s: iperf3 $ip bit/s, flowgen $fg bit/s"
lib_check "flowgen TCP goodput within 3% of iperf3's" lib_within "${fg:-0}" "${ip:-1}" 3

lib_flowgen_flow s1 d1 "$TMPD/udp.json" -P udp -r 2M -l 1000 -t 5
read -r rate lost pkts owd <<< "$(lib_json "$TMPD/udp.json" "tuple(d['summary'][k]
	for k in ('bits_per_second', 'lost', 'packets', 'mean_one_way_delay'))")"
lib_log "UDP 2 Mbit/s: received ${rate} bit/s, $pkts datagrams, $lost lost, one-way delay ${owd}s"
lib_check "UDP receiver rate within 3% of 2 Mbit/s" lib_within "${rate:-0}" 2000000 3
lib_check "no datagram lost on an uncongested link" test "$lost" = 0
# Propagation is a floor; serialisation and the emulator add a little.
lib_check "one-way delay at least the configured 25 ms" lib_at_least "${owd:-0}" 0.025
lib_check "one-way delay at most 25 ms + 10 %" lib_at_most "${owd:-1}" 0.0275

# dccp.sh has the flows where DCCP is there.
if ! lib_have_dccp; then
	out=$(lib_nsx d1 "$FLOWGEN" -s -P dccp -p 5399 2>&1)
	rc=$?
	lib_log "no DCCP ($LIB_DCCP_WHY): flowgen -s -P dccp: exit $rc: $out"
	lib_check "no DCCP: flowgen -P dccp refused, saying why" eval \
		'[ $rc = 1 ] && grep -q "^flowgen: -P dccp: DCCP is not in this kernel (socket: E" <<< "$out"'
fi
lib_finish
