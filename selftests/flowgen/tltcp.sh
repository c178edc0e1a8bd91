#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# flowgen over TLTCP (the tltcp TCP ULP), sections with deadlines, on a
# 2 Mbit/s, 50 ms dumbbell:
#  - 1 Mbit/s of 25 kB sections living 2 s: every byte arrives, on time,
#    with no gap, and the module abandons nothing;
#  - 4 Mbit/s of 25 kB sections living 300 ms (the workload of sctp.sh):
#    the module abandons what it could not send in time and the receiver
#    is told of exactly those bytes as gaps.  With the deadline as the
#    sender's, most bytes sent still arrive late (each section is sent in
#    the last 50 ms of its life, and the path takes longer); abandoning
#    one RTT ahead (-A), most bytes delivered are on time, and more than
#    twice as many as over plain TCP, which delivers everything, late;
#  - sections larger than the send buffer are accepted.
. "$(dirname "$0")/../lib.sh"
lib_init

[ -x "$FLOWGEN" ] || lib_skip "tools/flowgen not built (make tools)"
lib_require_module tltcp

lib_topo_up dumbbell --rate 2mbit --delay 25ms --queue bdp

# Generous deadlines: 25 kB every 200 ms, 2 s to live.
lib_flowgen_flow s1 d1 "$TMPD/easy.json" -P tltcp -D 25000,0.2,2 -t 8 || \
	lib_log "the generous flow failed"
read -r offered bytes abandoned sent drained <<< "$(lib_flowgen_summary "$TMPD/easy.json.snd" \
	sections_offered bytes_offered tl.bytes_abandoned tl.bytes_sent tl.drained)"
read -r got on_time on_bytes late gap gaps rbytes <<< "$(lib_flowgen_summary "$TMPD/easy.json" \
	sections sections_on_time on_time_bytes late_bytes gap_bytes gaps bytes)"
lib_log "generous: $offered sections offered ($bytes bytes), $got received, $on_time on time; $on_bytes bytes on time, $late late, $gap in $gaps gaps; module sent $sent, abandoned $abandoned"
lib_check "generous deadlines: every section arrives whole and on time" \
	test "$got" = "$offered" -a "$on_time" = "$offered" -a "$offered" -ge 35
lib_check "generous deadlines: every byte on time, none late" \
	test "$on_bytes" = "$bytes" -a "$rbytes" = "$bytes" -a "$late" = 0
lib_check "generous deadlines: no gap, nothing abandoned" \
	test "$gap" = 0 -a "$gaps" = 0 -a "$abandoned" = 0 -a "$sent" = "$bytes"
lib_check "the sender's queue drained before it closed" test "$drained" = True

# Overload: 25 kB every 50 ms (4 Mbit/s) into 2 Mbit/s, each useful for
# 300 ms; over TLTCP with the deadline as the sender's, over TLTCP
# abandoning one RTT ahead of it (-A), and over plain TCP.
sections="-D 25000,0.05,0.3 -t 8"
lib_flowgen_flow s1 d1 "$TMPD/tl.json" -P tltcp $sections || lib_log "the TLTCP flow failed"
lib_flowgen_flow s1 d1 "$TMPD/ahead.json" -P tltcp $sections -A || lib_log "the TLTCP -A flow failed"
lib_flowgen_flow s1 d1 "$TMPD/tcp.json" $sections || lib_log "the TCP flow failed"

read -r offered bytes abandoned sent late_sent retrans tl_offered drained \
	<<< "$(lib_flowgen_summary "$TMPD/tl.json.snd" sections_offered bytes_offered \
	tl.bytes_abandoned tl.bytes_sent tl.bytes_obsolete_late \
	tl.bytes_obsolete_retrans tl.sections_offered tl.drained)"
read -r rbytes on_bytes late gap gaps missing rgaps rgap_bytes <<< "$(lib_flowgen_summary "$TMPD/tl.json" \
	bytes on_time_bytes late_bytes gap_bytes gaps sections_missing \
	tl.gaps_received tl.bytes_gap)"
read -r a_abandoned a_sent a_late_sent <<< "$(lib_flowgen_summary "$TMPD/ahead.json.snd" \
	tl.bytes_abandoned tl.bytes_sent tl.bytes_obsolete_late)"
read -r a_rbytes a_on a_late a_gap <<< "$(lib_flowgen_summary "$TMPD/ahead.json" \
	bytes on_time_bytes late_bytes gap_bytes)"
read -r tcp_on tcp_bytes <<< "$(lib_flowgen_summary "$TMPD/tcp.json" on_time_bytes bytes)"
lib_log "TLTCP: $offered sections ($bytes bytes) offered; module sent $sent, abandoned $abandoned ($late_sent sent after their deadline, ~$retrans retransmitted obsolete)"
lib_log "TLTCP receiver: $rbytes bytes, $on_bytes on time, $late late; $gap bytes in $gaps gaps ($missing sections only a gap)"
lib_log "TLTCP -A: module sent $a_sent, abandoned $a_abandoned ($a_late_sent after the sender's deadline); receiver: $a_rbytes bytes, $a_on on time, $a_late late, $a_gap in gaps"
lib_log "TCP receiver: $tcp_bytes bytes, $tcp_on on time"

lib_check "overload: the module abandons data" lib_at_least "$abandoned" 1
lib_check "overload: the receiver is told of gaps" lib_at_least "$gaps" 1
lib_check "gap bytes at the receiver = bytes the sender abandoned" \
	test "$gap" = "$abandoned" -a "$rgap_bytes" = "$abandoned"
lib_check "gaps counted by flowgen = gaps the module reported" test "$gaps" = "$rgaps"
lib_check "every section the application offered reached the module" \
	test "$tl_offered" = "$offered"
lib_check "bytes sent and abandoned add up to the offered" \
	test $((sent + abandoned)) = "$bytes"
lib_check "the receiver got every byte sent" test "$rbytes" = "$sent"
lib_check "the sender's queue drained before it closed" test "$drained" = True
# The deadline is the sender's: in overload the module always sends the
# section nearest its deadline, so most of what it sends arrives after
# it (measured on 6.1: 6 % on time).  Abandoning one RTT ahead fixes that.
lib_check "-A: gap bytes at the receiver = bytes the sender abandoned" \
	test "$a_gap" = "$a_abandoned" -a "$a_rbytes" = "$a_sent"
lib_check "-A: on-time bytes are most of the bytes delivered" \
	lib_at_least "$a_on" $((a_rbytes / 2 + 1))
lib_check "-A: TLTCP delivers more bytes on time than TCP" \
	lib_at_least "$a_on" $((2 * tcp_on))

# Sections larger than a fresh send buffer (the TLTCP demo's and
# experiment's 700,000 bytes, one a second, living 1 s): flowgen makes room
# for them in the module's queue (TL_SNDQ_LIMIT), so they are accepted,
# partly sent and the rest abandoned, not refused with EMSGSIZE.
big=ok
lib_flowgen_flow s1 d1 "$TMPD/big.json" -P tltcp -D 700000,1,1 -t 3 || big=failed
read -r b_offered b_sent b_abandoned <<< "$(lib_flowgen_summary "$TMPD/big.json.snd" \
	sections_offered tl.bytes_sent tl.bytes_abandoned)"
lib_log "700,000-byte sections: flow $big, $b_offered offered, module sent $b_sent, abandoned $b_abandoned"
lib_check "700,000-byte sections are accepted, sent in part, the rest abandoned" \
	test "$big" = ok -a "${b_offered:-0}" -ge 3 -a "${b_sent:-0}" -gt 0 \
	-a "${b_abandoned:-0}" -gt 0
lib_finish
