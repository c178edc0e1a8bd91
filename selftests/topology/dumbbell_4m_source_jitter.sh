#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# source_jitter: each sender's packets wait a further random time over
# one bottleneck service time (3.028 ms at 4 Mbit/s), without reordering.
# 4 Mbit/s, 8 ms bottleneck, 1 ms access links (RTT 20 ms fixed).
. "$(dirname "$0")/shape_lib.sh"
shape_init

lib_topo_up dumbbell --rate 4mbit --delay 8ms --access-delay 1ms \
	--queue bdp --source-jitter

# Echoes from s1 cross the jittered link once: RTT 20 ms + 0 to 3 ms,
# and the emulation's own time.  Only a lower bound: the echoes' spread
# and the emulation's time (in this guest over 5 ms and about 2 ms
# without the jitter too, 2026-11-29) would hide the jitter's 1.5 ms mean.
rtt=$(lib_ping_rtt s1 "$IP4_d1")
lib_log "s1 -> d1: mean RTT ${rtt:-?} s"
lib_check "mean RTT no shorter than the fixed delays (20 ms)" \
	awk -v a="${rtt:-0}" 'BEGIN { exit !(a >= 0.020) }'

# A flood at 3x the rate: in order through the jitter, and the queue
# (7 packets, the fixed delays' BDP) fills.
lib_check "library sized the queue 7 packets" test "$TOPO_QUEUE" = 7
shape_check_queue s1 d1 r1 to-r2 4000000 7
lib_finish
