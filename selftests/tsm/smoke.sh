#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tsm end to end: with every module loaded, each row of the mapping
# (Documentation/tsm.rst) selects what the table says, and tsm send/recv
# carry data over that transport across a 10 Mbit/s, 20 ms dumbbell: the
# reliable ones every byte intact, the others most of it; the sender's
# unified statistics know an RTT where the transport reports one and mark
# deadline misses unknown where it has no deadlines; and the sender
# returns as soon as the receiver has everything.  On a kernel without
# DCCP the DCCP rows give way to what stands in for it (tsm.rst).
#
# make check runs the rows that exercise a distinct socket set-up (a
# congestion control module by name, TLTCP, DCCP, SCTP reliable and with
# PR-SCTP lifetimes); TSM_SMOKE_ALL=1 runs every row of the mapping
# (about two minutes; Documentation/tsm.rst): also cubic, multfrc_2, bbr with
# TCP_NODELAY, DCCP CCID 3 (whose receiver can log the kernel's DCCP_BUG
# diagnostic, which fails a guest run: Documentation/tsm.rst) and PR-SCTP
# without retransmissions.
. "$(dirname "$0")/../lib.sh"
lib_init

TSM=$REPO/tools/tsm/tsm
[ -x "$TSM" ] || lib_skip "tools/tsm not built (make tools)"
lib_require_module tltcp tcp_reno_tw tcp_bbr sctp
# The named instances tsm asks for (Documentation/multfrc.rst).
modprobe -r tcp_multfrc 2>/dev/null
modprobe tcp_multfrc instances=0.5,2 || lib_skip "tcp_multfrc not available"
sysctl -qw net.sctp.prsctp_enable=1

# The fallback on a real kernel, before any TLTCP socket holds the module:
# with tltcp unloaded, a caller without CAP_NET_ADMIN (which TCP_ULP
# needs to load it) gets SCTP for partial reliability; root gets TLTCP,
# loaded on use.
# Sockets of earlier tests may still hold the module: a sender's orphan
# whose peer's namespace is gone retransmits until tcp_orphan_retries
# gives up (about 100 s of backoff), beyond the reach of ss -K.  Wait for
# them, within a bound; the checks below fail if they never let go.
waited=0
until rmmod tltcp 2>/dev/null; do
	[ $waited -lt 240 ] || break
	sleep 2
	waited=$((waited + 2))
done
if lsmod | grep -q '^tltcp '; then
	lib_log "tltcp still in use after ${waited} s: $(lsmod | grep '^tltcp ')"
else
	lib_log "tltcp unloaded (after ${waited} s of waiting for earlier tests' sockets)"
fi
req="--reliability partial --msgLifetime 200"
out=$(setpriv --bounding-set=-net_admin "$TSM" select $req)
lib_log "tltcp unloaded, without CAP_NET_ADMIN: $out"
lib_check "tltcp unloaded, unprivileged: partial falls back to SCTP" \
	grep -q "^SCTP: .*fallback from TLTCP (module not loaded" <<< "$out"
out=$("$TSM" select $req)
lib_log "tltcp unloaded, root: $out"
lib_check "tltcp unloaded, root: TLTCP loaded on use" \
	grep -q "^TLTCP: .*module loaded on use" <<< "$out"
modprobe tltcp

lib_topo_up dumbbell --rate 10mbit --delay 10ms --queue bdp
head -c 200000 /dev/urandom > "$TMPD/data"
port=6000

# field KV KEY: a value of tsm select --kv's first line
field() { tr ' ' '\n' <<< "$1" | sed -n "s/^$2=//p"; }

# run_case NAME WANT RELIABLE STATS_RE REQUIREMENTS...: WANT is
# "key=value ..." the choice must have; RELIABLE yes: every byte intact;
# STATS_RE: what the sender's statistics line must match.
run_case() {
	local name=$1 want=$2 reliable=$3 stats_re=$4 kv w t t0 proto rpid got
	local out=$TMPD/out.$port err=$TMPD/err.$port
	shift 4
	port=$((port + 1))
	kv=$(lib_nsx s1 "$TSM" select --kv "$@" | head -1)
	lib_log "$name: $(lib_nsx s1 "$TSM" select "$@" 2>&1)"
	for w in $want; do
		lib_check "$name: ${w%%=*} is ${w#*=}" \
			test "$(field "$kv" "${w%%=*}")" = "${w#*=}"
	done
	t=$(field "$kv" transport)
	case $t in
	DCCP)	proto=dccp ;;
	SCTP)	proto=sctp ;;
	*)	proto=tcp ;;
	esac
	lib_nsx d1 "$TSM" recv "$port" "$@" > "$out" 2> "$err.recv" &
	rpid=$!
	lib_wait_listen d1 "$port" "$proto" || { lib_check "$name: receiver" false; return; }
	t0=$SECONDS
	lib_nsx s1 timeout 60 "$TSM" send "$IP4_d1" "$port" "$@" \
		< "$TMPD/data" 2> "$err.send"
	lib_check "$name: send succeeds" test $? = 0
	# 200 kB take 0.2 s at 10 Mbit/s: a sender that waits for its close's
	# 30 s limit did not see the peer take everything.
	lib_check "$name: send returns within 10 s ($((SECONDS - t0)) s)" \
		test $((SECONDS - t0)) -lt 10
	timeout 60 tail --pid=$rpid -f /dev/null
	kill $rpid 2>/dev/null
	sed 's/^/#   send: /' "$err.send"
	sed 's/^/#   recv: /' "$err.recv"
	got=$(stat -c %s "$out")
	if [ "$reliable" = yes ]; then
		lib_check "$name: every byte arrives intact" cmp -s "$TMPD/data" "$out"
	else
		lib_check "$name: most bytes arrive ($got of 200000)" \
			lib_at_least "$got" 100000
	fi
	lib_check "$name: statistics '$stats_re'" \
		grep -Eq "^stats: .*$stats_re" "$err.send"
}

# all: a row that only TSM_SMOKE_ALL=1 runs
all() { [ "${TSM_SMOKE_ALL:-0}" = 1 ]; }

all && run_case "TCP, Default" "transport=TCP cc=cubic" yes \
	"rtt [0-9]+ us.*deadline misses unknown" --capacityProfile default
run_case "TCP, Scavenger" "transport=TCP cc=multfrc_0.5" yes \
	"rtt [0-9]+ us" --capacityProfile scavenger
all && run_case "TCP, weight 2" "transport=TCP cc=multfrc_2" yes "rtt [0-9]+ us" \
	--weight 2
run_case "TCP, long delay" "transport=TCP cc=reno_tw" yes "rtt [0-9]+ us" \
	--path-delay 600
all && run_case "TCP, interactive" "transport=TCP cc=bbr nodelay=1" yes \
	"rtt [0-9]+ us" --capacityProfile interactive
run_case "TLTCP, partial" "transport=TLTCP deadline_ns=2000000000" no \
	"rtt [0-9]+ us.*deadline misses [0-9]+" \
	--reliability partial --msgLifetime 2000
if lib_have_dccp; then
	run_case "DCCP CCID 2" "transport=DCCP ccid=2" no "rate unknown" \
		--reliability none
	all && run_case "DCCP CCID 3" "transport=DCCP ccid=3" no \
		"rtt [0-9]+ us" --reliability none --capacityProfile constant-rate
else
	# Without DCCP (Linux 6.16 on) reliability none falls back to SCTP,
	# then TCP; a policy without SCTP shows TCP standing in, with TFRC's
	# equation (MulTFRC, n = 1) where CCID 3 would have been chosen.
	lib_log "no DCCP here ($LIB_DCCP_WHY)"
	out=$("$TSM" probe | grep '^dccp:')
	lib_log "tsm probe: $out"
	lib_check "no DCCP: tsm probe says absent, not in this kernel" \
		grep -q "^dccp: absent (socket: E[A-Z]*, not in this kernel)" <<< "$out"
	echo "transports TCP TLTCP DCCP" > "$TMPD/nosctp.conf"
	out=$("$TSM" select --policy "$TMPD/nosctp.conf" --reliability none \
		--capacityProfile constant-rate)
	lib_log "no DCCP, no SCTP, Constant-Rate: $out"
	lib_check "no DCCP: one line says TCP stands in, with TFRC's equation" \
		grep -q "^TCP: no reliability asked, full given; cc multfrc (TFRC's equation for CCID 3's smooth rate).*fallback from DCCP (not in this kernel)" <<< "$out"
	run_case "no DCCP: TCP, TFRC's equation for CCID 3" \
		"transport=TCP row=3 cc=multfrc weight=1" yes "rtt [0-9]+ us" \
		--policy "$TMPD/nosctp.conf" --reliability none \
		--capacityProfile constant-rate
	run_case "no DCCP: SCTP without retransmission first" \
		"transport=SCTP row=3 pr=rtx" no "deadline misses [0-9]+" \
		--reliability none
fi
run_case "SCTP, message boundaries" "transport=SCTP pr=off" yes \
	"rtt [0-9]+ us.*deadline misses unknown" --preserveMsgBoundaries require
run_case "SCTP, partial, unordered" "transport=SCTP pr=ttl unordered=1" no \
	"deadline misses [0-9]+" \
	--reliability partial --msgLifetime 2000 --preserveOrder prohibit
all && run_case "SCTP, no reliability, ordered" "transport=SCTP pr=rtx" no \
	"deadline misses [0-9]+" --reliability none --preserveOrder require

lib_finish
