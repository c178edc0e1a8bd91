#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo, part "tltcp": TLTCP at work, the TLTCP paper's Fig. 5 (Mukherjee & Brecht,
# section 6.1) in the guest.  On the paper's Table 1 dumbbell (1.5 Mbit/s,
# 20 ms bottleneck, 400-packet queue, 10 Mbit/s 2 ms access links, 10-packet
# receiver windows) a TLTCP flow offered a 700,000-byte section every
# second, each useful for 1 s, runs beside a bulk TCP flow, both Reno.
# Printed: each flow's throughput, what the TLTCP module abandoned and what
# its receiver was told, and both stream offsets second by second, in
# which TLTCP's jumps at the deadlines show (lab/demo/tltcp.py).
# A flow that fails fails the part.
#
# Environment: DEMO_SECONDS (default 20).  The reports, sequence traces
# and a PNG of the offsets stay in results/demo/tltcp/.

. "$(dirname "$0")/../../selftests/lib.sh"
lib_init

secs=${DEMO_SECONDS:-20}
out=${DEMO_OUT:-$REPO/results/demo}/tltcp
window=15000		# 10 packets, the paper's receiver window

[ -x "$FLOWGEN" ] || { echo "demo: tools/flowgen not built (make tools)" >&2; exit 1; }
modprobe tltcp || { echo "demo: the tltcp module does not load" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"

lib_topo_up dumbbell --pairs 2 --rate 1.5mbit --delay 20ms --queue 400 \
	--access-rate 10mbit --access-delay 2ms

# Receivers: d1 the TLTCP flow's, d2 the TCP flow's.
lib_nsx d1 "$FLOWGEN" -s -P tltcp -p 5301 -W $window -S "$out/tltcp.seq.csv" \
	-o "$out/tltcp.rcv.json" &
rcv1=$!
lib_nsx d2 "$FLOWGEN" -s -P tcp -p 5302 -W $window -S "$out/tcp.seq.csv" \
	-o "$out/tcp.rcv.json" &
rcv2=$!
lib_wait_listen d1 5301 && lib_wait_listen d2 5302 || exit 1

echo "TLTCP beside TCP for $secs s on the TLTCP paper's Table 1 dumbbell (kernel $(uname -r)):"
echo "s1, s2 --10 Mbit/s, 2 ms-- r1 ==1.5 Mbit/s, 20 ms, 400 packets== r2 --10 Mbit/s, 2 ms-- d1, d2"
echo "s1 -> d1: TLTCP, a 700,000-byte section every second, each with a 1 s deadline"
echo "s2 -> d2: TCP, bulk; both Reno, receiver windows clamped to $window bytes"
lib_nsx s1 "$FLOWGEN" -c "$IP4_d1" -p 5301 -P tltcp -C reno -D 700000,1,1 \
	-t "$secs" -o "$out/tltcp.snd.json" &
snd1=$!
lib_nsx s2 "$FLOWGEN" -c "$IP4_d2" -p 5302 -C reno -t "$secs" \
	-o "$out/tcp.snd.json" &
snd2=$!
rc=0
wait $snd1 || { echo "demo: the TLTCP sender failed" >&2; rc=1; }
wait $snd2 || { echo "demo: the TCP sender failed" >&2; rc=1; }
# The TCP receiver ends when the last bytes written arrive; give it time.
lib_reap_jobs 100

"$PYTHON" -m lab.demo.tltcp "$out" --seconds "$secs" \
	--png "$out/fig5.png" || rc=1
exit $rc
