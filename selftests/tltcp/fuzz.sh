#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fuzzers of tltcp_fuzz.c, short runs (make check; make check-debug
# runs them long through the FUZZ_* variables):
#
#  - uapi: FUZZ_OPS (100,000, at most FUZZ_SECONDS, 75) random calls,
#    the peers' reads among them, from four threads on
#    FUZZ_CONNS (16) tltcp connection pairs, IPv4 and IPv6, whose peers
#    read fast, slowly or never: every answer is success or an errno
#    Documentation/tltcp.rst lists for the call, no thread is stuck;
#  - hostile peer: plain TCP ends send valid, truncated, oversized,
#    wrong-typed and random framing to tltcp receivers, which deliver
#    exactly the valid records before the defect, then EPROTO (EOF when
#    there was none);
#  - congestion-control torture: 8 flows (a quarter tltcp) switch among
#    cubic, reno, multfrc, multfrc_2, multfrc_0.5 and reno_tw while netem
#    loss, reordering, delay and blackholes change; every flow delivers
#    again within three RTOs plus a second of the path healing, and every
#    byte sent arrives unchanged.
#
# Every run prints its seed; FUZZ_SEED=N repeats one.  The guest's kernel
# log is scanned by the VM runner (any WARN, KASAN, lockdep... fails).
. "$(dirname "$0")/../lib.sh"
lib_init

FUZZ=$(cd "$(dirname "$0")" && pwd)/tltcp_fuzz
[ -x "$FUZZ" ] || lib_skip "tltcp_fuzz not built (make selftests)"
lib_require_module tltcp
lib_require_cmd tc

SEED=${FUZZ_SEED:-$(date +%s)}
OPS=${FUZZ_OPS:-100000}
SECS=${FUZZ_SECONDS:-75}
CONNS=${FUZZ_CONNS:-16}
PEER_OPS=${FUZZ_PEER_OPS:-30000}
PEER_SECS=${FUZZ_PEER_SECONDS:-25}
CC_SECS=${FUZZ_CC_SECONDS:-15}
CC_FLOWS=${FUZZ_CC_FLOWS:-8}

# fuzz ARGS...: run it, its output as TAP diagnostics.
fuzz() {
	"$FUZZ" "$@" 2>&1 | sed -u 's/^/# /'
	return "${PIPESTATUS[0]}"
}

lib_log "seed $SEED"
lib_check "uapi: $OPS calls on $CONNS tltcp pairs, documented errors only" \
	fuzz uapi -s "$SEED" -t "$SECS" -n "$OPS" -c "$CONNS" -j 4
lib_check "hostile peer: bad framing gets EPROTO, valid data intact" \
	fuzz peer -s "$SEED" -t "$PEER_SECS" -n "$PEER_OPS" -j 2

modprobe -r tcp_multfrc 2>/dev/null
if modprobe tcp_multfrc instances=2,0.5 && modprobe tcp_reno_tw; then
	lib_check "cc torture: $CC_FLOWS flows recover after every bad path" \
		fuzz cc -s "$SEED" -t "$CC_SECS" -c "$CC_FLOWS"
	modprobe -r tcp_multfrc tcp_reno_tw 2>/dev/null
else
	lib_check "tcp_multfrc and tcp_reno_tw load" false
fi
lib_finish
