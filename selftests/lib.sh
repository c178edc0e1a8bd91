#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the shell selftests: kselftest exit codes, checks that
# print one TAP-like line each, topologies from lab/topology with
# cleanup on every exit path, and measurement helpers.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

SELFTESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SELFTESTS_DIR/.." && pwd)
# The lab's Python package (lab/): python3 -m lab.<module>, or a path below.
export PYTHONPATH=$REPO${PYTHONPATH:+:$PYTHONPATH}
TOPOLOGY=$REPO/lab/topology
MEASURE=$REPO/lab/measure.py
# The guest's python3 is Debian's; nothing here needs more than its stdlib.
PYTHON=${PYTHON:-python3}

TMPD=$(mktemp -d /tmp/selftest.XXXXXX)
TOPO_STATES=()
CHECKS_FAILED=0
CHECKS_RUN=0

# topo_down: remove every topology built so far, and what runs in it.
topo_down() {
	local s
	for s in "${TOPO_STATES[@]}"; do
		"$PYTHON" "$TOPOLOGY" down --state "$s"
	done
	TOPO_STATES=()
}

cleanup() {
	# Background jobs first (servers, samplers), then the namespaces.
	kill $(jobs -p) 2>/dev/null
	topo_down
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

log() { echo "# $*"; }

skip() {
	log "SKIP: $*"
	exit $KSFT_SKIP
}

require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip "$c not installed"
	done
}

# require_module MOD...: load the modules or skip the test.
require_module() {
	local m
	for m in "$@"; do
		modprobe -q "$m" 2>/dev/null || skip "module $m not available"
	done
}

[ "$(id -u)" = 0 ] || skip "needs root"

# check DESCRIPTION COMMAND...: run a check, print ok / not ok.
check() {
	local desc=$1
	shift
	CHECKS_RUN=$((CHECKS_RUN + 1))
	if "$@"; then
		echo "ok $CHECKS_RUN $desc"
	else
		echo "not ok $CHECKS_RUN $desc"
		CHECKS_FAILED=$((CHECKS_FAILED + 1))
	fi
}

# within MEASURED EXPECTED TOLERANCE_PERCENT: |m - e| <= e * tol / 100
within() {
	awk -v m="$1" -v e="$2" -v t="$3" 'BEGIN {
		d = m - e; if (d < 0) d = -d
		exit !(d <= e * t / 100) }'
}

# at_most A B / at_least A B: numeric comparisons for check.
at_most() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# Exit with the result of the checks run so far.
finish() {
	log "$((CHECKS_RUN - CHECKS_FAILED))/$CHECKS_RUN checks passed in ${SECONDS}s"
	[ "$CHECKS_FAILED" = 0 ] && exit $KSFT_PASS
	exit $KSFT_FAIL
}

# topo_up SHAPE [topology.py options]: build a topology; defines NS_<node>,
# IP4_<node>, IP6_<node>, TOPO_* (see topology.py to_shell).
topo_up() {
	local state vars
	state=$(mktemp "$TMPD/topo.XXXXXX")
	TOPO_STATES+=("$state")
	vars=$("$PYTHON" "$TOPOLOGY" up "$@" --state "$state" --sh) || {
		log "topology $1 could not be built"
		exit $KSFT_FAIL
	}
	eval "$vars"
}

# nsx NODE COMMAND...: run a command in a node's namespace.
nsx() {
	local ns=NS_$1
	shift
	ip netns exec "${!ns}" "$@"
}

# reap_jobs TENTHS: wait up to TENTHS x 0.1 s for this shell's background
# jobs (flow receivers, which end when their sender's last bytes arrive),
# then kill what is left: a receiver whose sender never connected would
# wait for ever.
reap_jobs() {
	local i

	for i in $(seq "$1"); do
		[ -z "$(jobs -pr)" ] && break
		sleep 0.1
	done
	kill $(jobs -pr) 2>/dev/null
	wait
}

# wait_listen NODE PORT [tcp|udp|dccp]: wait until something listens.
wait_listen() {
	local i flag=-ltn
	case "${3:-tcp}" in
	udp)	flag=-lun ;;
	dccp)	flag=-ln\ --dccp ;;
	sctp)	flag=-ln\ --sctp ;;
	esac
	for i in $(seq 100); do
		nsx "$1" ss -H ${flag} "sport = :$2" | grep -q . && return 0
		sleep 0.1
	done
	log "nothing listens on $1 port $2"
	return 1
}

# ping_rtt FROM TO_ADDR: average RTT in seconds over 5 echoes (after one
# that resolves neighbours).
ping_rtt() {
	local out=$TMPD/ping.$RANDOM
	nsx "$1" ping -c 1 -W 5 "$2" >/dev/null 2>&1
	nsx "$1" ping -c 5 -i 0.2 -W 5 -q "$2" > "$out" 2>"$out.err"
	"$PYTHON" "$MEASURE" ping-rtt "$out"
}

# iperf_flow SENDER RECEIVER PORT OUT [iperf3 client options]: one iperf3
# flow from SENDER to RECEIVER, measured at the receiver, which runs the
# client with -R; its JSON report goes to OUT.
iperf_flow() {
	local snd=$1 rcv=$2 port=$3 out=$4 ip=IP4_$1
	shift 4
	nsx "$snd" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	wait_listen "$snd" "$port" || return 1
	nsx "$rcv" iperf3 -c "${!ip}" -p "$port" -R -i 1 -J "$@" \
		> "$out" 2>"$out.err"
}

# iperf_tcp SENDER RECEIVER SECONDS SKIP [iperf3 client options]: TCP
# goodput (bit/s) at the receiver after the first SKIP seconds.
iperf_tcp() {
	local out=$TMPD/iperf.$RANDOM.json skip=$4 secs=$3 snd=$1 rcv=$2
	shift 4
	iperf_flow "$snd" "$rcv" 5201 "$out" -t "$secs" "$@" || return 1
	"$PYTHON" "$MEASURE" iperf-rate "$out" --skip "$skip"
}

# flowgen_flow SENDER RECEIVER OUT [flowgen client options]: one flowgen
# flow; the receiver's report goes to OUT, the sender's to OUT.snd.
# FLOWGEN_SERVER_ARGS: options for the receiver (-W, -S).
flowgen_flow() {
	local snd=$1 rcv=$2 out=$3 port=5301 ip=IP4_$2 proto=tcp
	shift 3
	[[ " $* " == *" -6 "* ]] && ip=IP6_$rcv
	[[ " $* " == *" -P udp "* ]] && proto=udp
	[[ " $* " == *" -P dccp "* ]] && proto=dccp
	[[ " $* " == *" -P sctp "* ]] && proto=sctp
	[[ " $* " == *" -P tltcp "* ]] && proto=tltcp
	nsx "$rcv" "$FLOWGEN" -s -P $proto -p $port -o "$out" $FLOWGEN_SERVER_ARGS &
	local srv=$!
	wait_listen "$rcv" $port $proto || return 1
	if ! nsx "$snd" "$FLOWGEN" -c "${!ip}" -p $port -o "$out.snd" "$@"; then
		kill $srv
		return 1
	fi
	wait $srv
}
FLOWGEN=$REPO/tools/flowgen/flowgen
