#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The TLTCP streaming example (tools/tltcp_stream): a 25 frame/s MPEG-like
# stream (GOP IBBPBBPBBPBB; I 40000, P 15000, B 6000 bytes: 2.2 Mbit/s)
# with the deadlines of the paper's section 4 and a 1 s playout buffer.
#
#  - On a 10 Mbit/s link, over IPv4 for 8 s and IPv6 for 5 s, every frame
#    arrives whole and in time and is displayed; nothing is abandoned.
#  - On a 1.5 Mbit/s link for 15 s the sender abandons what misses its
#    deadline: the receiver sees gaps, exactly the bytes the sender
#    abandoned, and every byte it sent.  I frames, first of their GOP in
#    storage order and with the whole GOP period before the GOP's deadline,
#    are displayed at a higher fraction than P and B frames, which follow
#    them and need references; and more of them, and more frames in all,
#    than when every frame has its own playout time as deadline (the
#    backlog is then worked off to the last moment and large I frames are
#    cut off at their deadline).
#
# Measured on 6.1 (TCG): at 1.5 Mbit/s the paper's deadlines displayed
# 32/32 I, 61/93 P, 75/248 B frames (205 gaps, 1395640 bytes, all of them
# abandoned by the sender); per-frame deadlines 4/32 I, 12/93 P, 22/248 B.
. "$(dirname "$0")/../lib.sh"
lib_init

SEND=$REPO/tools/tltcp_stream/tltcp_stream_send
RECV=$REPO/tools/tltcp_stream/tltcp_stream_recv
[ -x "$SEND" ] && [ -x "$RECV" ] || lib_skip "tools/tltcp_stream not built (make tools)"
lib_require_module tltcp
PORT=5401

# stream_run NAME FAMILY [sender options]: the receiver in d1, the sender
# in s1; their JSON reports go to $TMPD/NAME.rx and $TMPD/NAME.tx.
stream_run() {
	local name=$1 fam=$2 ip=IP${2}_d1 rx
	shift 2
	lib_nsx d1 "$RECV" $PORT -"$fam" -J -o "$TMPD/$name.rx" \
		-f "$TMPD/$name.csv" -T 60 2> "$TMPD/$name.rx.err" &
	rx=$!
	lib_wait_listen d1 $PORT || return 1
	if ! lib_nsx s1 "$SEND" "${!ip}" $PORT -J -o "$TMPD/$name.tx" "$@" \
		2> "$TMPD/$name.tx.err"; then
		lib_log "$name: sender failed: $(cat "$TMPD/$name.tx.err")"
		kill $rx 2>/dev/null
		wait $rx
		return 1
	fi
	if ! wait $rx; then
		lib_log "$name: receiver failed: $(cat "$TMPD/$name.rx.err")"
		return 1
	fi
}

# stream_load NAME: both JSON reports of a run into J, flattened: the
# value of the receiver's frames.I.total is ${J[NAME.rx frames.I.total]}.
declare -A J
stream_load() {
	local side key value

	for side in rx tx; do
		while IFS=$'\t' read -r key value; do
			J["$1.$side $key"]=$value
		done < <(lib_json "$TMPD/$1.$side" 2>/dev/null)
	done
}

# stream_val NAME.rx|NAME.tx KEY...: values from a loaded report, KEY a
# dotted path; "?" for what the report lacks.
stream_val() {
	local r=$1 k out=()

	shift
	for k in "$@"; do
		out+=("${J[$r $k]:-?}")
	done
	echo "${out[*]}"
}

# stream_report NAME: one log line per frame type, and the byte counts.
stream_report() {
	local t total disp whole part lost late
	for t in I P B all; do
		read -r total whole part lost late disp <<< "$(stream_val "$1.rx" \
			frames.$t.total frames.$t.whole frames.$t.partial \
			frames.$t.lost frames.$t.late frames.$t.displayed)"
		lib_log "$1: $t frames: $total, $whole whole ($late late), $part partial, $lost lost, $disp displayed"
	done
	lib_log "$1: receiver: $(stream_val "$1.rx" data_bytes gaps gap_bytes | \
		awk '{ print $1 " data bytes, " $2 " gaps of " $3 " bytes" }')"
	lib_log "$1: sender: $(stream_val "$1.tx" tl_info.bytes_offered \
		tl_info.bytes_sent tl_info.bytes_abandoned \
		tl_info.sections_abandoned_unsent \
		tl_info.sections_abandoned_partial tl_info.bytes_obsolete_late | \
		awk '{ print $1 " bytes offered, " $2 " sent, " $3 " abandoned (" $4 " sections unsent, " $5 " partly), " $6 " sent late" }')"
}

# stream_intact NAME: the receiver saw the stream the sender sent, record by
# record (it exits 1 otherwise), and its counts agree with TL_INFO.
stream_intact() {
	local errs
	errs=$(stream_val "$1.rx" record_errors header_errors corrupt_bytes \
		gap_not_zero consistent_with_tl_info)
	[ "$errs" = "0 0 0 0 true" ]
}

# every_frame_displayed NAME
every_frame_displayed() {
	local total disp frames
	read -r total disp <<< "$(stream_val "$1.rx" frames.all.total frames.all.displayed)"
	frames=$(stream_val "$1.tx" stream.frames)
	[ "$total" = "$frames" ] && [ "$disp" = "$total" ] && [ "$total" -gt 0 ]
}

# nothing_abandoned NAME: no gap, no abandoned byte, every byte arrived.
nothing_abandoned() {
	local gaps gapb data offered abandoned
	read -r gaps gapb data <<< "$(stream_val "$1.rx" gaps gap_bytes data_bytes)"
	read -r offered abandoned <<< "$(stream_val "$1.tx" tl_info.bytes_offered tl_info.bytes_abandoned)"
	[ "$gaps" = 0 ] && [ "$gapb" = 0 ] && [ "$abandoned" = 0 ] &&
		[ "$data" = "$offered" ]
}

# ---- a link faster than the stream --------------------------------------
lib_topo_up dumbbell --rate 10mbit --delay 10ms --queue bdp
for run in "fast4 4 -t 8" "fast6 6 -t 5"; do
	read -r name fam opts <<< "$run"
	stream_run "$name" "$fam" $opts
	rc=$?
	stream_load "$name"
	if [ $rc != 0 ]; then
		lib_check "$name: the stream ran" false
		continue
	fi
	stream_report "$name"
	lib_check "$name: the receiver got the stream intact" stream_intact "$name"
	lib_check "$name: 10 Mbit/s, IPv$fam: every frame displayed" \
		every_frame_displayed "$name"
	lib_check "$name: no gaps, nothing abandoned" nothing_abandoned "$name"
done
lib_topo_down

# ---- a link slower than the stream --------------------------------------
# The same stream twice: with the paper's deadlines, and with every frame's
# own playout time as its deadline.
lib_topo_up dumbbell --rate 1500kbit --delay 10ms --queue bdp
for run in "slow paper" "slowframe frame"; do
	read -r name mode <<< "$run"
	stream_run $name 4 -t 15 --deadlines $mode
	rc=$?
	stream_load $name
	if [ $rc != 0 ]; then
		lib_check "$name: the stream ran" false
		continue
	fi
	stream_report $name
	read -r gaps gapb data <<< "$(stream_val "$name.rx" gaps gap_bytes data_bytes)"
	read -r offered sent abandoned <<< "$(stream_val "$name.tx" \
		tl_info.bytes_offered tl_info.bytes_sent tl_info.bytes_abandoned)"
	lib_check "$name: the receiver got the stream intact" stream_intact $name
	lib_check "$name: 1.5 Mbit/s: gaps occur" lib_at_least "$gaps" 1
	lib_check "$name: gap bytes at the receiver ($gapb) == bytes abandoned by the sender ($abandoned)" \
		test "$gapb" = "$abandoned" -a "$abandoned" -gt 0
	lib_check "$name: data bytes at the receiver == bytes the sender handed to TCP" \
		test "$data" = "$sent"
	lib_check "$name: data + gap bytes == bytes offered" \
		test $((data + gapb)) = "$offered"
done
lib_topo_down

# stream_displayed FRACTION_KEY NAME: a displayed fraction from a receiver
# report.
stream_displayed() { stream_val "$2.rx" "frames.$1.displayed_fraction"; }
if [ -s "$TMPD/slow.rx" ]; then
	i=$(stream_displayed I slow) b=$(stream_displayed B slow) p=$(stream_displayed P slow)
	lib_log "slow, paper's deadlines: displayed I $i, P $p, B $b"
	lib_check "slow: I frames displayed at a higher fraction than B frames ($i > $b)" \
		awk -v i="$i" -v b="$b" 'BEGIN { exit !(i > b) }'
	lib_check "slow: I frames displayed at a higher fraction than P frames ($i > $p)" \
		awk -v i="$i" -v p="$p" 'BEGIN { exit !(i > p) }'
fi
if [ -s "$TMPD/slow.rx" ] && [ -s "$TMPD/slowframe.rx" ]; then
	i=$(stream_displayed I slow) fi=$(stream_displayed I slowframe)
	a=$(stream_displayed all slow) fa=$(stream_displayed all slowframe)
	lib_log "slowframe, each frame's own deadline: displayed I $fi, all $fa"
	lib_check "slow: the paper's deadlines display more I frames than per-frame deadlines ($i > $fi)" \
		awk -v a="$i" -v b="$fi" 'BEGIN { exit !(a > b) }'
	lib_check "slow: and more frames in all ($a > $fa)" \
		awk -v a="$a" -v b="$fa" 'BEGIN { exit !(a > b) }'
fi
lib_finish
