#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo, part "multfrc": MulTFRC at work.  One MulTFRC flow with n = 2
# beside two Reno flows on a 10 Mbit/s, 25 ms dumbbell with a BDP DropTail
# queue (selftests/multfrc/fairness.sh's setup); printed: each flow's
# throughput second by second and after the first 5 s, and the normalized
# throughput (lab/demo/multfrc.py).  A flow that fails fails the part.
#
# Environment: DEMO_SECONDS (default 20).  The reports stay in
# results/demo/multfrc/.

. "$(dirname "$0")/../../selftests/lib.sh"
lib_init

secs=${DEMO_SECONDS:-20}
mout=${DEMO_OUT:-$REPO/results/demo}/multfrc
rc=0

[ -x "$FLOWGEN" ] || { echo "demo: tools/flowgen not built (make tools)" >&2; exit 1; }
rm -rf "$mout"
mkdir -p "$mout"
modprobe tcp_multfrc || { echo "demo: the tcp_multfrc module does not load" >&2; exit 1; }
# n is the module parameter, read by a connection when it picks "multfrc".
n_param=/sys/module/tcp_multfrc/parameters/n
n_old=$(cat $n_param)
trap 'echo $n_old > $n_param; lib_cleanup' EXIT
echo 2 > $n_param
lib_topo_up dumbbell --pairs 2 --rate 10mbit --delay 25ms --queue bdp

echo "MulTFRC(2) beside two TCP flows for $secs s:"
echo "s1, s2 ==10 Mbit/s, 25 ms, BDP DropTail queue== d1, d2"
echo "s1 -> d1: MulTFRC with n = 2 (as aggressive as two TCP flows)"
echo "s2 -> d2: two Reno flows"
pids=()
for f in multfrc:d1:s1:5401 tcp1:d2:s2:5402 tcp2:d2:s2:5403; do
	IFS=: read -r name rcv snd port <<< "$f"
	lib_nsx "$rcv" "$FLOWGEN" -s -p "$port" -o "$mout/$name.rcv.json" &
	lib_wait_listen "$rcv" "$port" || exit 1
done
lib_nsx s1 "$FLOWGEN" -c "$IP4_d1" -p 5401 -C multfrc -t "$secs" \
	-o "$mout/multfrc.snd.json" &
pids+=($!)
for p in 5402 5403; do
	lib_nsx s2 "$FLOWGEN" -c "$IP4_d2" -p $p -C reno -t "$secs" \
		-o "$mout/tcp$((p - 5401)).snd.json" &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || { echo "demo: a MulTFRC part sender failed" >&2; rc=1; }
done
lib_reap_jobs 100
"$PYTHON" -m lab.demo.multfrc "$mout" --n 2 --seconds "$secs" \
	--rate 10000000 || rc=1
exit $rc
