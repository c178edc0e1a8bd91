#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The congestion-collapse shape of Hessler & Welzl: every link's rate and
# delay as configured, and the shared 0.3 Mbit/s core queue bounded.
. "$(dirname "$0")/shape_lib.sh"
shape_init

# The paper gives no delays.  20 ms a link keeps the RTT check about the
# topology: under TCG each hop adds about 1 ms to a round trip, 5 % of a
# three-hop path of 10 ms links.
d=$(shape_fault_delay 20)
lib_topo_up collapse --delay "$d" --queue 20

# Both paths cross three links.
shape_check_rtt s1 d1 "$(shape_rtt_expected "20 20 20")"
shape_check_rtt s2 d2 "$(shape_rtt_expected "20 20 20")"

# Greedy UDP gets what the narrowest link on its path carries.  HTB counts
# the Ethernet header: payload is 1472 of 1514 bytes (100 of 142 for the
# small datagrams that make the 0.01 Mbit/s link measurable in 12 s).
want=$(awk 'BEGIN { printf "%d", 300000 * 1472 / 1514 }')
got=$(shape_udp_flood s1 d1 1000000 8 1472)
lib_log "UDP s1 -> d1 at 1 Mbit/s: ${got} bit/s received, core carries ${want}"
lib_check "s1 -> d1 UDP rate within 7% of the 0.3 Mbit/s core" \
	lib_within "${got:-0}" "$want" 7
want=$(awk 'BEGIN { printf "%d", 10000 * 100 / 142 }')
got=$(shape_udp_flood s2 d2 200000 12 100)
lib_log "UDP s2 -> d2 at 0.2 Mbit/s: ${got} bit/s received, last link carries ${want}"
lib_check "s2 -> d2 UDP rate within 7% of the 0.01 Mbit/s last link" \
	lib_within "${got:-0}" "$want" 7

# Only s2 can overfill the core (s1's own link is as slow).  Its flood
# ends at the 0.01 Mbit/s link, whose queue then holds 20 datagrams that
# iperf3's closing exchange waits behind: 24 s for 1514-byte frames, 2.3 s
# for the small ones.
QUEUE_FLOOD_LEN=100 shape_check_queue s2 d2 r1 to-r2 300000 20
lib_finish
