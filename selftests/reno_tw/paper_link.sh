#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One reno_tw flow alone on the paper's link (Nor et al.): 10 Mbit/s, 1 ms
# access links, a 2 Mbit/s, 300 ms bottleneck with a 20-packet DropTail
# queue, the paper's 500-byte packets (MSS 460).  The bandwidth-delay
# product is about 290 such packets, so the initial ssthresh of 200 is
# meant to bring the window near it in a few round trips.
#
# An ACK-clocked slow start sends two segments per ACK back to back and
# overflows the 20-packet queue at a window of 40 to 80; the flow then
# climbs one segment per 600 ms round trip and gets about a third of the
# link (620 kbit/s from 10 s to 40 s before the module paced its sending,
# issue 21, with 21 segments lost in that slow start).  Paced, slow start
# reaches the window of 200 without a loss in about 3.5 s: 1.16 Mbit/s
# at 200 segments per 620 ms; Reno's growth from there would take 57 s to
# fill the path's 292 packets (1356 kbit/s from 10 s to 40 s, version
# 1.1).  The probe past the initial ssthresh (probe=1, the default) grows
# the window 25 % per round trip until a queue shows.
#
# The goodput ceiling is 1.743 Mbit/s: 448 bytes of payload (MSS 460
# less the timestamp option) in 514 bytes at the bottleneck's HTB (IP
# packet and Ethernet header).  The test asks for 90 % of it (1.569
# Mbit/s) within 10 s, at least 1.6 Mbit/s from 10 s to 40 s, and at
# most 1 % of the segments retransmitted (the probe overshoots the path
# once: the window grows a quarter in the round trip the RTT takes to
# show the queue, a queue of 20 packets against a path of 292).

. "$(dirname "$0")/../lib.sh"
lib_init

lib_require_cmd iperf3 tc
lib_require_module tcp_reno_tw
PARAMS=/sys/module/tcp_reno_tw/parameters
trap 'echo 200 > $PARAMS/initial_ssthresh; echo 5 > $PARAMS/decrease_pct; echo 1 > $PARAMS/probe; lib_cleanup' EXIT
echo 200 > $PARAMS/initial_ssthresh
echo 5 > $PARAMS/decrease_pct
echo 1 > $PARAMS/pacing
echo 1 > $PARAMS/probe

lib_topo_up dumbbell --rate 2mbit --delay 300ms --queue 20 \
	--access-rate 10mbit --access-delay 1ms

out=$TMPD/paper.json
lib_iperf_flow s1 d1 5201 "$out" -t 40 -C reno_tw -M 460
lib_reap_jobs 60
read -r mean t90 retr segs rates <<< "$(lib_json "$out" "(lambda r: (
	round(sum(r[10:40]) / len(r[10:40])),
	next((i + 1 for i in range(len(r)) if r[i] >= 0.9 * 1743000), -1),
	d['end']['sum_sent'].get('retransmits', -1),
	d['end']['sum_sent']['bytes'] // 448,
	','.join(str(round(x / 1e3)) for x in r)))(
	[iv['sum']['bits_per_second'] for iv in d['intervals']])")"
lib_log "kbit/s each second: $rates"
lib_log "mean from 10 s to 40 s: $mean bit/s; 90 % of the link by ${t90} s; segments retransmitted: $retr of about $segs"
lib_check_timed "90 % of the link (1.569 Mbit/s) within 10 s" \
	bash -c "[ ${t90:--1} -ge 0 ] && [ ${t90:--1} -le 10 ]"
lib_check_timed "goodput from 10 s to 40 s at least 1.6 Mbit/s (1356 kbit/s without the probe)" \
	lib_at_least "${mean:-0}" 1600000
lib_check_timed "at most 1 % of the segments retransmitted (the paper's loss bound, ITU-T G.1010)" \
	bash -c "[ ${retr:--1} -ge 0 ] && [ $((100 * ${retr:-1})) -le ${segs:-0} ]"
lib_finish
