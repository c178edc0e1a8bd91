#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MulTFRC is selected the usual ways (TCP_CONGESTION, iperf3 -C, the
# default sysctl), its named instances carry their n to the socket (seen
# in its tracepoint), and bad parameters are refused with a message.
. "$(dirname "$0")/../lib.sh"
lib_init

[ -x "$FLOWGEN" ] || lib_skip "tools/flowgen not built (make tools)"
lib_require_cmd iperf3
PARAMS=/sys/module/tcp_multfrc/parameters
TRACE="$PYTHON -m lab.tools.multfrc_trace"
root_cc=$(sysctl -n net.ipv4.tcp_congestion_control)
trap '$TRACE stop 2>/dev/null; sysctl -qw net.ipv4.tcp_congestion_control=$root_cc
lib_cleanup; modprobe -r tcp_multfrc 2>/dev/null' EXIT

modprobe -r tcp_multfrc 2>/dev/null
# refused MODPROBE_ARGS MESSAGE: loading with these parameters fails and
# the kernel log says why.
refused() {
	local args=$1 msg=$2
	dmesg -C
	if modprobe tcp_multfrc $args 2>/dev/null; then
		lib_log "modprobe tcp_multfrc $args succeeded"
		modprobe -r tcp_multfrc
		return 1
	fi
	grep -q '^tcp_multfrc ' /proc/modules && { lib_log "module left loaded"; return 1; }
	dmesg | grep -q -- "$msg" && return 0
	lib_log "kernel log, without '$msg':"
	dmesg | sed 's/^/#   /'
	return 1
}
lib_check "n=0 refused" refused "n=0" "n must be a number from 0.1 to 100"
lib_check "n=100.5 refused" refused "n=100.5" "n must be a number"
lib_check "n=1.2345 refused (three decimals at most)" refused "n=1.2345" "n must be"
lib_check "n=abc refused" refused "n=abc" "n must be"
lib_check "b=3 refused" refused "b=3" "b (packets per ACK) must be 1 or 2"
lib_check "instances=2,x refused" refused "instances=2,x" "instances: 'x' is not a number"
lib_check "instances=2,2 refused" refused "instances=2,2" "listed twice"
lib_check "seventeen instances refused" refused "instances=$(seq -s, 17)" "at most 16"

# A refused list registers nothing, not even while the load fails: a
# socket that chose an algorithm in that moment would be left on the
# memory of a module that is then freed.  Watch the available list during
# ten refused loads of seven good values and a bad one.
avail=$(sysctl -n net.ipv4.tcp_available_congestion_control)
"$PYTHON" - "$TMPD/seen" <<-'EOF' &
	import os, sys
	seen = set()
	open(sys.argv[1] + ".ready", "w").close()
	while not os.path.exists(sys.argv[1] + ".stop"):
	    with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
	        seen.update(w for w in f.read().split() if w.startswith("multfrc"))
	with open(sys.argv[1], "w") as f:
	    f.write(" ".join(sorted(seen)))
	EOF
watcher=$!
while [ ! -e "$TMPD/seen.ready" ]; do sleep 0.1; done
for i in $(seq 10); do
	modprobe tcp_multfrc instances=1,2,3,4,5,6,7,x 2>/dev/null
done
touch "$TMPD/seen.stop"
wait $watcher
lib_log "algorithms seen during the refused loads: '$(cat "$TMPD/seen")'"
lib_check "refused loads never register an algorithm, even for a moment" \
	test ! -s "$TMPD/seen"
lib_check "tcp_available_congestion_control is unchanged" \
	test "$(sysctl -n net.ipv4.tcp_available_congestion_control)" = "$avail"

modprobe tcp_multfrc instances=2,0.5 || lib_skip "tcp_multfrc not available"
avail=$(sysctl -n net.ipv4.tcp_available_congestion_control)
lib_log "available: $avail"
for cc in multfrc multfrc_2 multfrc_0.5; do
	lib_check "$cc is available" bash -c "echo ' $avail ' | grep -q ' $cc '"
done
lib_check "n reads back as 1" test "$(cat $PARAMS/n)" = 1
echo 2.5 > $PARAMS/n
lib_check "n takes 2.5 at run time" test "$(cat $PARAMS/n)" = 2.5
lib_check "n refuses 0.05 at run time" bash -c "! echo 0.05 > $PARAMS/n"
lib_check "a refused n leaves 2.5" test "$(cat $PARAMS/n)" = 2.5

lib_topo_up dumbbell --rate 10mbit --delay 10ms --queue bdp

# traced NAME CC: a 3 s flowgen flow with congestion control CC, traced;
# prints the n its tracepoint reports and the sender's congestion.
traced() {
	lib_multfrc_trace_begin "$TMPD/$1.trace" --dport 5301
	lib_flowgen_flow s1 d1 "$TMPD/$1.json" -t 3 -C "$2"
	lib_multfrc_trace_end
	local n
	n=$($TRACE summary "$TMPD/$1.trace" | cut -d' ' -f2)
	echo "${n:-none} $(lib_json "$TMPD/$1.json.snd" "d.get('congestion')")"
}
for spec in multfrc:2.5 multfrc_2:2 multfrc_0.5:0.5; do
	cc=${spec%%:*} n=${spec#*:}
	read -r got used <<< "$(traced "$cc" "$cc")"
	lib_log "TCP_CONGESTION $cc: the socket uses $used, its tracepoint says n = $got"
	lib_check "TCP_CONGESTION $cc selects it" test "$used" = "$cc"
	lib_check "$cc runs with n = $n" test "$got" = "$n"
done

lib_nsx d1 iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
lib_wait_listen d1 5201
lib_nsx s1 iperf3 -c "$IP4_d1" -p 5201 -t 2 -C multfrc_2 -J > "$TMPD/iperf.json" 2>&1
used=$(lib_json "$TMPD/iperf.json" "d['end'].get('sender_tcp_congestion')")
lib_check "iperf3 -C multfrc_2 runs multfrc_2" test "$used" = multfrc_2

# A namespace may only default to an unrestricted algorithm (EPERM), and
# takes the initial namespace's default when it is made: set it there.
lib_topo_down
sysctl -qw net.ipv4.tcp_congestion_control=multfrc
lib_topo_up dumbbell --rate 10mbit --delay 10ms --queue bdp
lib_flowgen_flow s1 d1 "$TMPD/default.json" -t 2
used=$(lib_json "$TMPD/default.json.snd" "d.get('congestion')")
lib_check "the default sysctl selects multfrc" test "$used" = multfrc
lib_topo_down
sysctl -qw net.ipv4.tcp_congestion_control="$root_cc"
lib_finish
