#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the shell selftests: kselftest exit codes, checks that
# print one TAP-like line each, topologies from lab/topology with
# cleanup on every exit path, and measurement helpers.
#
# Sourcing this file only defines: a test calls lib_init first (the
# temporary directory TMPD, the exit handler, a skip unless root), and a
# test's own EXIT trap ends with lib_cleanup.  Every helper is named lib_*
# and has its arguments in the comment line above it.  The result lines
# are TAP, the plan ("1..N") after them; lib_json is the one JSON reader.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

SELFTESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SELFTESTS_DIR/.." && pwd)
# The lab's Python package (lab/): python3 -m lab.<module>, or a path below.
export PYTHONPATH=$REPO${PYTHONPATH:+:$PYTHONPATH}
TOPOLOGY=$REPO/lab/topology
MEASURE=$REPO/lab/measure.py
# The guest's python3 is Debian's; nothing here needs more than its stdlib
# and lab/ (PYTHONPATH): lib_init makes PYTHON start it without its site
# module (-S).  PYTHON_SITE is the interpreter as it is, for what may
# import an installed package (matplotlib for an experiment's plots).
PYTHON_SITE=${PYTHON:-python3}
PYTHON=$PYTHON_SITE
FLOWGEN=$REPO/tools/flowgen/flowgen

TMPD=
LIB_PYDIR=
TOPO_STATES=()
CHECKS_FAILED=0
CHECKS_RUN=0
CHECKS_SKIPPED=0
# Set once the plan ("1..N") is printed; a skip's reason.
LIB_PLANNED=
LIB_SKIPPED=

# lib_init: the set-up every test needs: a temporary directory (TMPD),
# lib_cleanup on exit, PYTHON without site (below), and a skip unless
# root.
lib_init() {
	TMPD=$(mktemp -d /tmp/selftest.XXXXXX)
	trap lib_cleanup EXIT
	trap 'exit 1' INT TERM
	[ "$(id -u)" = 0 ] || lib_skip "needs root"
	lib_python_nosite
}

# lib_python_nosite: PYTHON becomes a script that runs PYTHON_SITE with
# -S.  The site module's start-up, the .pth files of what is installed,
# is most of each start: 0.45 s against 0.07 s on the host, 2.5-9 s
# against 0.6-0.7 s in a TCG guest beside two others (2026-12-07), and a
# test starts Python tens of times (lib_json, lab/topology, its own
# helpers).  The script has a directory of its own, LIB_PYDIR, that
# every user may read: tests run PYTHON as nobody too (setpriv), and
# TMPD is root's alone.
# PYTHON_SITE is looked up in PATH when the script runs, as it was
# before.
lib_python_nosite() {
	LIB_PYDIR=$(mktemp -d /tmp/selftest-python.XXXXXX) || return 0
	chmod 755 "$LIB_PYDIR"
	printf '#!/bin/sh\nexec "%s" -S "$@"\n' "$PYTHON_SITE" > "$LIB_PYDIR/python"
	chmod 755 "$LIB_PYDIR/python"
	PYTHON=$LIB_PYDIR/python
}

# lib_topo_down: remove every topology built so far, and what runs in it.
lib_topo_down() {
	local s
	for s in "${TOPO_STATES[@]}"; do
		"$PYTHON" "$TOPOLOGY" down --state "$s"
	done
	TOPO_STATES=()
}

# lib_plan: print the TAP plan, once: after the results, as their count
# (a skip before any result: "1..0 # SKIP reason").  A test that ran no
# check and did not skip has no plan of its own (run_short.sh passes on
# the experiment's).
lib_plan() {
	[ -n "$LIB_PLANNED" ] && return
	LIB_PLANNED=1
	if [ "$CHECKS_RUN" = 0 ] && [ -n "$LIB_SKIPPED" ]; then
		echo "1..0 # SKIP $LIB_SKIPPED"
	elif [ "$CHECKS_RUN" != 0 ]; then
		echo "1..$CHECKS_RUN"
	fi
}

# lib_cleanup: the exit handler: the plan if not printed yet, then
# background jobs (servers, samplers), then the namespaces and TMPD.
lib_cleanup() {
	lib_plan
	kill $(jobs -p) 2>/dev/null
	lib_topo_down
	rm -rf "$TMPD" ${LIB_PYDIR:+"$LIB_PYDIR"}
}

# lib_log TEXT...: a diagnostic line ("# TEXT").
lib_log() { echo "# $*"; }

# lib_skip REASON...: end the test as skipped.
lib_skip() {
	lib_log "SKIP: $*"
	LIB_SKIPPED="$*"
	exit $KSFT_SKIP
}

# lib_require_cmd CMD...: skip unless every command is installed.
lib_require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || lib_skip "$c not installed"
	done
}

# lib_require_module MOD...: load the modules or skip the test.
lib_require_module() {
	local m
	for m in "$@"; do
		modprobe -q "$m" 2>/dev/null || lib_skip "module $m not available"
	done
}

# The one skip reason that SKIP_IS_FAIL does not count as a failure: a
# test of DCCP on a kernel without DCCP (Linux 6.16 removed it), which
# cannot apply there (lab/tap_summary.py, NOT_APPLICABLE).  Declared only
# by lib_require_dccp, after modprobe and a DCCP socket failed.
LIB_NO_DCCP="dccp: not in this kernel"

# lib_have_dccp: DCCP sockets of both families open here, once
# dccp_ipv4 and dccp_ipv6 are loaded (socket() does not load them); if
# not, LIB_DCCP_WHY says why ("socket: ESOCKTNOSUPPORT").  Other failures
# of the probe end the test as an ordinary skip.
lib_have_dccp() {
	modprobe -q dccp_ipv4 2>/dev/null
	modprobe -q dccp_ipv6 2>/dev/null
	LIB_DCCP_WHY=$("$PYTHON" -c 'import socket
from lab.transports import dccp_missing
print(dccp_missing() or dccp_missing(socket.AF_INET6) or "")') ||
		lib_skip "the DCCP probe failed"
	[ -z "$LIB_DCCP_WHY" ]
}

# lib_require_dccp: skip the test as not applicable unless the kernel
# has DCCP.
lib_require_dccp() {
	lib_have_dccp || lib_skip "$LIB_NO_DCCP ($LIB_DCCP_WHY)"
}

# lib_check DESCRIPTION COMMAND...: run a check, print ok / not ok.
lib_check() {
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

# lib_check_todo REASON DESCRIPTION COMMAND...: a check of a known open
# problem: its result is printed, a failure as TAP "not ok ... # TODO
# REASON", which does not fail the test.
lib_check_todo() {
	local why=$1 desc=$2
	shift 2
	CHECKS_RUN=$((CHECKS_RUN + 1))
	if "$@"; then
		echo "ok $CHECKS_RUN $desc"
	else
		echo "not ok $CHECKS_RUN $desc # TODO $why"
	fi
}

# lib_check_skip REASON DESCRIPTION: a check whose premise the run did not
# meet (the path never reached the state the check is about), printed as
# TAP "ok ... # SKIP REASON": it neither passes nor fails the test.  The
# test must have measured that premise, and the reason say what it saw.
lib_check_skip() {
	CHECKS_RUN=$((CHECKS_RUN + 1))
	CHECKS_SKIPPED=$((CHECKS_SKIPPED + 1))
	echo "ok $CHECKS_RUN $2 # SKIP $1"
}

# lib_machine_slow: true on a machine declared slow, KSFT_MACHINE_SLOW=yes
# (netdev's name for a debug kernel's run: make check-debug sets it).
lib_machine_slow() { [ "${KSFT_MACHINE_SLOW:-}" = yes ]; }

# lib_check_timed DESCRIPTION COMMAND...: a check of a rate or a time,
# which only a machine fast enough for the link can pass.  On a slow
# machine (lib_machine_slow) a failure is printed as TAP "not ok ... #
# TODO slow machine" and does not fail the test; everywhere else it is
# lib_check.
lib_check_timed() {
	if lib_machine_slow; then
		lib_check_todo "slow machine (KSFT_MACHINE_SLOW)" "$@"
	else
		lib_check "$@"
	fi
}

# lib_within MEASURED EXPECTED TOLERANCE_PERCENT: |m - e| <= e * tol / 100
lib_within() {
	awk -v m="$1" -v e="$2" -v t="$3" 'BEGIN {
		d = m - e; if (d < 0) d = -d
		exit !(d <= e * t / 100) }'
}

# lib_at_most A B / lib_at_least A B: numeric comparisons for lib_check.
# Both fail unless A and B are numbers: awk takes "" or "None" (a
# measurement that did not happen) for 0, which is at most anything.
# lib_cmp A OP B: A <= B or A >= B (OP "<=" or ">="), numbers only.
lib_cmp() {
	awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN {
		num = "^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$"
		if (a !~ num || b !~ num) {
			print "# not a number: \"" a "\" or \"" b "\"" > "/dev/stderr"
			exit 1
		}
		exit !(op == "<=" ? a + 0 <= b + 0 : a + 0 >= b + 0) }'
}
lib_at_most() { lib_cmp "$1" "<=" "$2"; }
lib_at_least() { lib_cmp "$1" ">=" "$2"; }

# lib_finish: the plan, then exit with the result of the checks run.
lib_finish() {
	local skipped=

	lib_plan
	[ "$CHECKS_SKIPPED" = 0 ] || skipped=", $CHECKS_SKIPPED skipped"
	lib_log "$((CHECKS_RUN - CHECKS_FAILED - CHECKS_SKIPPED))/$CHECKS_RUN checks passed$skipped in ${SECONDS}s"
	[ "$CHECKS_FAILED" = 0 ] && exit $KSFT_PASS
	exit $KSFT_FAIL
}

# lib_topo_up SHAPE [topology.py options]: build a topology; defines NS_<node>,
# IP4_<node>, IP6_<node>, TOPO_* (see topology.py to_shell).
lib_topo_up() {
	local state vars
	state=$(mktemp "$TMPD/topo.XXXXXX")
	TOPO_STATES+=("$state")
	vars=$("$PYTHON" "$TOPOLOGY" up "$@" --state "$state" --sh) || {
		lib_log "topology $1 could not be built"
		exit $KSFT_FAIL
	}
	eval "$vars"
}

# lib_nsx NODE COMMAND...: run a command in a node's namespace.
lib_nsx() {
	local ns=NS_$1
	shift
	ip netns exec "${!ns}" "$@"
}

# lib_reap_jobs TENTHS: wait up to TENTHS x 0.1 s for this shell's background
# jobs (flow receivers, which end when their sender's last bytes arrive),
# then kill what is left: a receiver whose sender never connected would
# wait for ever.
lib_reap_jobs() {
	local i

	for i in $(seq "$1"); do
		[ -z "$(jobs -pr)" ] && break
		sleep 0.1
	done
	kill $(jobs -pr) 2>/dev/null
	wait
}

# lib_wait_listen NODE PORT [tcp|udp|dccp|sctp]: wait until something
# listens.
lib_wait_listen() {
	local i flag=-ltn
	case "${3:-tcp}" in
	udp)	flag=-lun ;;
	dccp)	flag=-ln\ --dccp ;;
	sctp)	flag=-ln\ --sctp ;;
	esac
	for i in $(seq 100); do
		lib_nsx "$1" ss -H ${flag} "sport = :$2" | grep -q . && return 0
		sleep 0.1
	done
	lib_log "nothing listens on $1 port $2"
	return 1
}

# lib_wait_connected NODE PORT [COUNT]: wait, up to 10 s, until NODE has
# COUNT (default 1) established TCP connections to PORT.
lib_wait_connected() {
	local i n

	for i in $(seq 100); do
		n=$(lib_nsx "$1" ss -Htn state established "dport = :$2" |
			grep -c .)
		[ "$n" -ge "${3:-1}" ] && return 0
		sleep 0.1
	done
	lib_log "$1 has $n of ${3:-1} connections to port $2"
	return 1
}

# lib_multfrc_trace_begin FILE [START OPTIONS]: enable MulTFRC's
# tracepoint (lab.tools.multfrc_trace start, e.g. --dport 5301) and copy
# what it records into FILE until lib_multfrc_trace_end.
lib_multfrc_trace_begin() {
	local file=$1

	shift
	"$PYTHON" -m lab.tools.multfrc_trace start "$@"
	cat /sys/kernel/tracing/trace_pipe > "$file" &
	LIB_TRACE_READER=$!
}

# lib_multfrc_trace_end: disable the tracepoint, let the reader drain what
# is buffered, stop it.
lib_multfrc_trace_end() {
	"$PYTHON" -m lab.tools.multfrc_trace stop
	sleep 0.3
	kill "$LIB_TRACE_READER" 2>/dev/null
	wait "$LIB_TRACE_READER" 2>/dev/null
	LIB_TRACE_READER=
}

# lib_ping_rtt FROM TO_ADDR: average RTT in seconds over 5 echoes (after one
# that resolves neighbours).
lib_ping_rtt() {
	local out=$TMPD/ping.$RANDOM
	lib_nsx "$1" ping -c 1 -W 5 "$2" >/dev/null 2>&1
	lib_nsx "$1" ping -c 5 -i 0.2 -W 5 -q "$2" > "$out" 2>"$out.err"
	"$PYTHON" "$MEASURE" ping-rtt "$out"
}

# lib_iperf_flow SENDER RECEIVER PORT OUT [iperf3 client options]: one iperf3
# flow from SENDER to RECEIVER, measured at the receiver, which runs the
# client with -R; its JSON report goes to OUT.
lib_iperf_flow() {
	local snd=$1 rcv=$2 port=$3 out=$4 ip=IP4_$1
	shift 4
	lib_nsx "$snd" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	lib_wait_listen "$snd" "$port" || return 1
	lib_nsx "$rcv" iperf3 -c "${!ip}" -p "$port" -R -i 1 -J "$@" \
		> "$out" 2>"$out.err"
}

# lib_iperf_tcp SENDER RECEIVER SECONDS SKIP [iperf3 client options]: TCP
# goodput (bit/s) at the receiver after the first SKIP seconds.
lib_iperf_tcp() {
	local out=$TMPD/iperf.$RANDOM.json skip=$4 secs=$3 snd=$1 rcv=$2
	shift 4
	lib_iperf_flow "$snd" "$rcv" 5201 "$out" -t "$secs" "$@" || return 1
	"$PYTHON" "$MEASURE" iperf-rate "$out" --skip "$skip"
}

# lib_flowgen_flow SENDER RECEIVER OUT [flowgen client options]: one flowgen
# flow; the receiver's report goes to OUT, the sender's to OUT.snd.
# FLOWGEN_SERVER_ARGS: options for the receiver (-W, -S).
lib_flowgen_flow() {
	local snd=$1 rcv=$2 out=$3 port=5301 ip=IP4_$2 proto=tcp
	shift 3
	[[ " $* " == *" -6 "* ]] && ip=IP6_$rcv
	[[ " $* " == *" -P udp "* ]] && proto=udp
	[[ " $* " == *" -P dccp "* ]] && proto=dccp
	[[ " $* " == *" -P sctp "* ]] && proto=sctp
	[[ " $* " == *" -P tltcp "* ]] && proto=tltcp
	lib_nsx "$rcv" "$FLOWGEN" -s -P $proto -p $port -o "$out" $FLOWGEN_SERVER_ARGS &
	local srv=$!
	lib_wait_listen "$rcv" $port $proto || return 1
	if ! lib_nsx "$snd" "$FLOWGEN" -c "${!ip}" -p $port -o "$out.snd" "$@"; then
		kill $srv
		return 1
	fi
	wait $srv
}

# lib_flowgen_summary FILE KEY...: values from a flowgen report's summary
# (FILE.snd: the sender's), on one line; tl.KEY from its "tltcp" object
# (the module's TL_INFO counters); -1 for what the report lacks.
lib_flowgen_summary() {
	local file=$1 k e=

	shift
	for k in "$@"; do
		case $k in
		tl.*)	e+="d['summary'].get('tltcp', {}).get('${k#tl.}', -1), " ;;
		*)	e+="d['summary'].get('$k', -1), " ;;
		esac
	done
	lib_json "$file" "($e)"
}

# lib_json FILE [EXPR...]: read a JSON file, the one reader of the tests.
# Each EXPR, Python over the file's object d, prints a line: its value, a
# tuple's items separated by spaces.  Without EXPR, every leaf of d prints
# as "dotted.key<TAB>value", whitespace collapsed, booleans true/false.
# Nothing printed and status 1 for a file that is missing or not JSON
# (a traceback on stderr).  One Python start: most of a second under TCG.
lib_json() {
	"$PYTHON" -c 'import json, sys
def leaves(path, v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(path + [k], x)
    else:
        v = str(v).lower() if isinstance(v, bool) else str(v)
        yield ".".join(path), " ".join(v.split())
d = json.load(open(sys.argv[1]))
for e in sys.argv[2:]:
    v = eval(e)
    print(*v) if isinstance(v, tuple) else print(v)
if len(sys.argv) == 2:
    for k, v in leaves([], d):
        print(k, v, sep="\t")' "$@"
}
