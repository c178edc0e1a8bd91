#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Not in selftests/Makefile's TARGETS (as smoke.sh): make vm CMD='cd
# selftests/tsm && ./preload.sh'; about 20 s (10/10 on 6.1).
# libtsm_preload.so (Documentation/tsm-guide.rst) in the guest: an
# unmodified iperf3 started by "tsm run --capacityProfile scavenger" sends
# with MulTFRC n = 0.5 (multfrc_0.5), as ss -ti and iperf3's own report
# show, across a 10 Mbit/s, 20 ms dumbbell; the receiver, not under the
# preload, keeps the kernel default.  Without CAP_NET_ADMIN, for which
# multfrc_0.5 is not in tcp_allowed_congestion_control, the same run falls
# back to the kernel default, says so in one line, and still completes.
. "$(dirname "$0")/../lib.sh"
lib_init

TSM=$REPO/tools/tsm/tsm
LIB=$REPO/tools/tsm/libtsm_preload.so
[ -x "$TSM" ] && [ -f "$LIB" ] || lib_skip "tools/tsm not built (make tools)"
lib_require_cmd iperf3 ss setpriv
# The named instance the Scavenger profile asks for (Documentation/
# multfrc.rst: instances=0.5 registers multfrc_0.5).
modprobe -r tcp_multfrc 2>/dev/null
modprobe tcp_multfrc instances=0.5,2 || lib_skip "tcp_multfrc not available"
DEFAULT=$(sysctl -n net.ipv4.tcp_congestion_control)
lib_log "kernel default $DEFAULT; allowed: $(sysctl -n net.ipv4.tcp_allowed_congestion_control)"

lib_topo_up dumbbell --rate 10mbit --delay 10ms --queue bdp

# iperf_cc FILE: the sender's congestion control in iperf3's report.
iperf_cc() { lib_json "$1" "d['end'].get('sender_tcp_congestion', '?')"; }

# 1. Scavenger through tsm run, as root.
out=$TMPD/scav.json
lib_nsx d1 iperf3 -s -1 -p 5201 > /dev/null 2>&1 &
lib_wait_listen d1 5201 || exit $KSFT_FAIL
lib_nsx s1 env TSM_VERBOSE=1 "$TSM" run --capacityProfile scavenger -- \
	iperf3 -c "$IP4_d1" -p 5201 -t 10 -J > "$out" 2> "$out.err" &
cpid=$!
# Both ends at once, well inside the flow: a guest sharing its CPU with
# another once took the receiver's snapshot after iperf3 had finished.
# Once the sender has both connections: 2 s after the start a 6.1 guest
# in make check had only the control connection (2026-12-07).
lib_wait_connected s1 5201 2
lib_nsx s1 ss -tinH state established "( dport = :5201 )" > "$TMPD/ss.s1" &
spid=$!
lib_nsx d1 ss -tinH state established "( sport = :5201 )" > "$TMPD/ss.d1" &
wait $spid $!
ss_out=$(cat "$TMPD/ss.s1")
rss=$(cat "$TMPD/ss.d1")
wait $cpid
rc=$?
lib_reap_jobs 30
sed 's/^/#   stderr: /' "$out.err"
lib_log "ss -ti at the sender:"
sed 's/^/#   /' <<< "$ss_out"
lib_check "scavenger: iperf3 succeeds under the preload" test $rc = 0
lib_check "scavenger: the preload explains cc multfrc_0.5 in one line" \
	grep -qx "tsm_preload: TCP: full reliability; cc multfrc_0.5 (Scavenger, weight 0.5)" "$out.err"
lib_check "scavenger: nothing else on stderr" test "$(wc -l < "$out.err")" = 1
# Both of iperf3's connections (control and data) are the preload's.
n_ss=$(grep -c "rtt:" <<< "$ss_out")
n_mf=$(grep -c " multfrc_0.5 " <<< "$ss_out")
lib_check "scavenger: ss -ti shows multfrc_0.5 on all $n_ss sender sockets" \
	test "$n_ss" -ge 2 -a "$n_mf" = "$n_ss"
cc=$(iperf_cc "$out")
lib_check "scavenger: iperf3 reports sender cc $cc (multfrc_0.5)" \
	test "$cc" = multfrc_0.5
bytes=$(lib_json "$out" "d['end']['sum_received']['bytes']")
lib_check "scavenger: data arrived ($bytes bytes in 10 s)" lib_at_least "$bytes" 500000
n_rd=$(grep -c " $DEFAULT " <<< "$rss")
[ "$n_rd" -ge 2 ] || { lib_log "ss -ti at the receiver:"; sed 's/^/#   /' <<< "$rss"; }
lib_check "scavenger: the receiver, not preloaded, keeps $DEFAULT ($n_rd sockets)" \
	test "$n_rd" -ge 2 -a -z "$(grep multfrc <<< "$rss")"

# 2. Without CAP_NET_ADMIN: multfrc_0.5 is not allowed, nor is loading
# tcp_lp or tcp_vegas: the Scavenger's last fallback, reno, never the
# kernel default (which may be more aggressive).
out=$TMPD/unpriv.json
lib_nsx d1 iperf3 -s -1 -p 5202 > /dev/null 2>&1 &
lib_wait_listen d1 5202 || exit $KSFT_FAIL
lib_nsx s1 env TSM_PROFILE=scavenger LD_PRELOAD="$LIB" \
	setpriv --bounding-set=-net_admin \
	iperf3 -c "$IP4_d1" -p 5202 -t 2 -J > "$out" 2> "$out.err"
rc=$?
lib_reap_jobs 30
sed 's/^/#   stderr: /' "$out.err"
lib_check "unprivileged: iperf3 succeeds" test $rc = 0
lib_check "unprivileged: one line says multfrc_0.5 is not allowed" \
	test "$(grep -c "fallback from multfrc_0.5 (not in tcp_allowed_congestion_control)" "$out.err")" = 1
lib_check "unprivileged: the same line says lp and vegas could not be loaded" \
	grep -q "fallback from lp (module not loaded); fallback from vegas (module not loaded)" "$out.err"
cc=$(iperf_cc "$out")
lib_check "unprivileged: iperf3 reports sender cc $cc (reno)" \
	test "$cc" = reno

lib_finish
