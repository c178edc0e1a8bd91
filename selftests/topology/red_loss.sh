#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The RED discipline and random loss options of a link do what they say:
# netem drops the configured fraction of an uncongested UDP flow, and RED
# drops early, holding its queue below the hard limit where DropTail fills
# it (see the dumbbell tests).
. "$(dirname "$0")/shape_lib.sh"
shape_init

lib_topo_up dumbbell --rate 10mbit --delay 10ms --queue 100 --qdisc red --loss 5

# 2 Mbit/s of 1000-byte datagrams for 10 s: 2500 datagrams, of which 5 %
# (125, standard deviation 11) are lost.
shape_udp_flood s1 d1 2M 10 1000 >/dev/null &&
	loss=$("$PYTHON" "$MEASURE" iperf-loss "$UDP_FLOOD_REPORT")
lib_log "random loss 5 %: ${loss} of the datagrams lost"
lib_check "random loss within 5 +- 1.5 % (4 standard deviations)" \
	bash -c "awk -v l=${loss:-1} 'BEGIN { exit !(l >= 0.035 && l <= 0.065) }'"

shape_check_queue s1 d1 r1 to-r2 10000000 100 red
lib_check "RED drops early: largest backlog below the hard limit of 100" \
	lib_at_most "${QUEUE_MAX_BACKLOG:-100}" 99
lib_finish
