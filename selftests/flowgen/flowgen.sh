#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# flowgen measures what iperf3 measures: its TCP goodput at the receiver
# agrees with iperf3's on the same link within 3 %, and its UDP receiver
# counts rate, loss and one-way delay as the link was configured.
. "$(dirname "$0")/../lib.sh"

[ -x "$FLOWGEN" ] || skip "tools/flowgen not built (make tools)"
require_cmd iperf3

topo_up dumbbell --rate 10mbit --delay 25ms --queue bdp

# 10 s after a 2 s start: short windows let one stall of the emulator
# decide the comparison.
ip=$(iperf_tcp s1 d1 12 2)
flowgen_flow s1 d1 "$TMPD/tcp.json" -t 12
fg=$("$PYTHON" "$MEASURE" flowgen-rate "$TMPD/tcp.json" --skip 2)
log "TCP goodput after 2 s: iperf3 $ip bit/s, flowgen $fg bit/s"
check "flowgen TCP goodput within 3% of iperf3's" within "${fg:-0}" "${ip:-1}" 3

flowgen_flow s1 d1 "$TMPD/udp.json" -P udp -r 2M -l 1000 -t 5
read -r rate lost pkts owd <<< "$("$PYTHON" -c "
import json; d = json.load(open('$TMPD/udp.json'))['summary']
print(d['bits_per_second'], d['lost'], d['packets'], d['mean_one_way_delay'])")"
log "UDP 2 Mbit/s: received ${rate} bit/s, $pkts datagrams, $lost lost, one-way delay ${owd}s"
check "UDP receiver rate within 3% of 2 Mbit/s" within "${rate:-0}" 2000000 3
check "no datagram lost on an uncongested link" test "$lost" = 0
# Propagation is a floor; serialisation and the emulator add a little.
check "one-way delay at least the configured 25 ms" at_least "${owd:-0}" 0.025
check "one-way delay at most 25 ms + 10 %" at_most "${owd:-1}" 0.0275
finish
