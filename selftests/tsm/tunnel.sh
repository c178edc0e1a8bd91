#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tsm tunnel (Documentation/tsm.rst, "Tunnel"): an unmodified UDP
# application's datagrams over DCCP CCID 3 between two hosts of a dumbbell
# (without DCCP in the kernel, over the tunnel's default, TCP with TFRC's
# equation).
#  - bad arguments: exit 2 and a message naming the problem;
#  - unshaped path (IPv4 and IPv6): every datagram arrives intact, in order,
#    and every echoed reply comes back to the application;
#  - offered 2.5 times a 1 Mbit/s bottleneck: the tunnel drops and counts
#    (received = sent + dropped + queued), delivers near the bottleneck's
#    rate, and the one-way delay stays bounded;
#  - the server killed and restarted, then the client: traffic resumes, the
#    server keeps no descriptor of the dead connection;
#  - --redirect-port: the application sends to the real destination, nft
#    redirects it into the tunnel, the replies come back from the real
#    destination; the table is gone after SIGTERM, and after tsm tunnel
#    cleanup following SIGKILL.
. "$(dirname "$0")/../lib.sh"
lib_init

TSM=$REPO/tools/tsm/tsm
APP=$SELFTESTS_DIR/tsm/udp_app.py
[ -x "$TSM" ] || lib_skip "tools/tsm not built (make tools)"
lib_require_cmd nft

# jf FILE EXPR...: lib_json, quiet: the stats files are read while the
# tunnel writes them.
jf() { lib_json "$@" 2>/dev/null; }

# bad_args WANT ARGS...: tsm tunnel ARGS exits 2 and says WANT.
bad_args() {
	local want=$1 out rc
	shift
	out=$("$TSM" tunnel "$@" 2>&1)
	rc=$?
	[ "$rc" = 2 ] && grep -qF -- "$want" <<< "$out" && return 0
	lib_log "exit $rc: $out"
	return 1
}

# wait_json FILE EXPR: up to 6 s for EXPR to hold in FILE (a stats file).
wait_json() {
	local i
	for i in $(seq 60); do
		[ "$(jf "$1" "$2")" = True ] && return 0
		sleep 0.1
	done
	lib_log "$1: $2 never held"; sed 's/^/#   /' "$1" 2>/dev/null
	return 1
}

# nsbg NODE COMMAND...: COMMAND in NODE's namespace, in the background;
# $! is COMMAND's own pid (ip netns exec execs it), so kill reaches it.
nsbg() {
	local ns=NS_$1
	shift
	ip netns exec "${!ns}" "$@" &
}

# The kernel's CCID 3 receiver logs "BUG: please report to
# dccp@vger.kernel.org ... tfrc_rx_hist_sample_rtt()" (a DCCP_BUG
# diagnostic, see selftests/experiments/dcp.sh), which fails a guest run:
# CCID 2 by default here; by hand TUNNEL_TRANSPORT=dccp-ccid3, or tltcp,
# multfrc, multfrc:2 or tcp (Documentation/tsm.rst has how they fared).
# On a kernel without DCCP (Linux 6.16 on) the tunnel's own default: what
# stands in for DCCP, TFRC's equation over TCP (MulTFRC, n = 1).
if lib_have_dccp; then
	TRANSPORT=${TUNNEL_TRANSPORT-dccp-ccid2}
else
	lib_log "no DCCP here ($LIB_DCCP_WHY)"
	TRANSPORT=${TUNNEL_TRANSPORT-}
fi
lib_log "transport ${TRANSPORT:-the default}"
# the transport option of both ends: none for the default
TARGS=(${TRANSPORT:+--transport "$TRANSPORT"})
case $TRANSPORT in
"")	if lib_have_dccp; then
		LISTEN_PROTO=dccp
	else
		LISTEN_PROTO=tcp
		lib_require_module tcp_multfrc
	fi ;;
dccp*)	LISTEN_PROTO=dccp ;;
multfrc*)
	# the named instances multfrc:N asks for (Documentation/multfrc.rst)
	LISTEN_PROTO=tcp
	modprobe -r tcp_multfrc 2>/dev/null
	modprobe tcp_multfrc instances=0.5,2 || lib_skip "tcp_multfrc not available" ;;
tltcp)	LISTEN_PROTO=tcp; lib_require_module tltcp ;;
*)	LISTEN_PROTO=tcp ;;
esac

# fds PID: open descriptors of a process.
fds() { ls /proc/"$1"/fd | wc -l; }

lib_check "no --peer" bad_args "--peer HOST:PORT is required" \
	client --udp 7001 --to 10.0.0.1:9
lib_check "port out of range" bad_args "the port must be 1 to 65535" \
	client --peer h:1 --udp 70000 --to 10.0.0.1:9
lib_check "peer without port" bad_args "is not HOST:PORT" \
	client --peer host --udp 1 --to 10.0.0.1:9
lib_check "IPv6 without brackets" bad_args "brackets" \
	client --peer ::1:5000 --udp 1 --to 10.0.0.1:9
lib_check "unknown transport" bad_args "unknown transport 'quic'" \
	server --listen 7000 --transport quic
lib_check "queue 0" bad_args "--queue: '0' is not a number from 1" \
	server --listen 7000 --queue 0
lib_check "client option to the server" bad_args "--udp is a client option" \
	server --listen 7000 --udp 1
lib_check "unknown command" bad_args "unknown command 'frob'" frob

# start_pair TAG NS_PORT SERVER_ARGS -- CLIENT_ARGS: a server on d1 and a
# client on s1, stats in $TMPD/TAG.{srv,cli}.json; SRV and CLI their pids.
start_pair() {
	local tag=$1 port=$2 sargs=() cargs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	nsbg d1 "$TSM" tunnel server --listen "$port" --interval 0.2 \
		"${TARGS[@]}" \
		--stats "$TMPD/$tag.srv.json" "${sargs[@]}" \
		> "$TMPD/$tag.srv.out" 2> "$TMPD/$tag.srv.err"
	SRV=$!
	lib_wait_listen d1 "$port" "$LISTEN_PROTO" || return 1
	nsbg s1 "$TSM" tunnel client --interval 0.2 \
		"${TARGS[@]}" \
		--stats "$TMPD/$tag.cli.json" "${cargs[@]}" \
		> "$TMPD/$tag.cli.out" 2> "$TMPD/$tag.cli.err"
	CLI=$!
	wait_json "$TMPD/$tag.cli.json" "d['connected']"
}

# stop_pair TAG: SIGTERM both; their final statistics are on stdout.
stop_pair() {
	kill -TERM "$CLI" "$SRV" 2>/dev/null
	wait "$CLI" "$SRV" 2>/dev/null
	tail -n 1 "$TMPD/$1.cli.out" > "$TMPD/$1.cli.final"
	tail -n 1 "$TMPD/$1.srv.out" > "$TMPD/$1.srv.final"
	sed 's/^/#   client: /' "$TMPD/$1.cli.err"
	sed 's/^/#   server: /' "$TMPD/$1.srv.err"
}

# sink_intact TAG N: the sink got datagrams 0..N-1, undamaged, in order.
sink_intact() {
	local f=$TMPD/$1.sink
	[ "$(jf "$f" "(d['count'], d['damaged'], d['reordered'], d['seqs'] == list(range($2)))")" \
		= "$2 0 0 True" ] && return 0
	lib_log "sink: $(jf "$f" "(d['count'], d['damaged'], d['reordered'], d['first'], d['last'])")"
	return 1
}

# log_replies TAG WHAT: WHAT replies came back; where the others went.
log_replies() {
	lib_log "$1: $2 replies; server: $(jf "$TMPD/$1.srv.final" \
		"' '.join(f'{k} {d[k][\"datagrams\"]}' for k in ('from_dest', 'to_tunnel', 'dropped_queue_full', 'dropped_disconnected', 'dropped_expired', 'dropped_other'))"); client: $(jf "$TMPD/$1.cli.final" \
		"' '.join(f'{k} {d[k][\"datagrams\"]}' for k in ('from_app', 'to_tunnel', 'dropped_queue_full', 'from_tunnel', 'to_app', 'to_app_errors'))")"
}

# The replies cross the server's queue as the datagrams cross the
# client's: both ends get room for a burst.  With the default of one
# message, a reply finding one already waiting for CCID 2's window is
# dropped (dropped_queue_full), as it should be; a guest whose CPU is
# shared sends in bursts (the application keeps its schedule by catching
# up), and then replies were lost at the server's one-message queue
# (Documentation/tsm.rst, "Measured").  Catching up after the guest's
# CPU was away for 170 ms overflowed even 16 (a CI run, two guests on two
# cores: 18 of 300 dropped at the client), so the tests of integrity send
# with --steady: integrity, not the burst a stall makes, is what they test.
QUEUE=16

# --- unshaped: intact, in order, replies ------------------------------------
lib_topo_up dumbbell --rate 1gbit --delay 1ms --queue 1000

run_intact() { # TAG FAMILY PEER UDP TO SINK_ADDR SINK_PORT N
	local tag=$1 fam=$2 n=$8 replies
	nsbg d1 "$PYTHON" "$APP" sink "$6" "$7" --out "$TMPD/$tag.sink" \
		--idle 1 --echo
	local sink=$!
	start_pair "$tag" 7000 --queue "$QUEUE" -- --peer "$3" --udp "$4" \
		--to "$5" --queue "$QUEUE" ||
		{ lib_check "$tag: tunnel up" false; kill $sink; return; }
	lib_nsx s1 "$PYTHON" "$APP" send "${4%:*}" "${4##*:}" --rate 200 \
		--size 200 --count "$n" --connect --linger 5 --steady \
		--replies "$TMPD/$tag.rep"
	wait $sink
	stop_pair "$tag"
	lib_check "$tag: $n datagrams intact, in order" sink_intact "$tag" "$n"
	replies=$(jf "$TMPD/$tag.rep" "d['replies']")
	log_replies "$tag" "$replies of $n"
	lib_check "$tag: $n replies back to the application" test "$replies" = "$n"
	lib_check "$tag: counted: from_app = to_tunnel = delivered = $n" test \
		"$(jf "$TMPD/$tag.cli.final" "d['from_app']['datagrams'], d['to_tunnel']['datagrams']")/$(jf "$TMPD/$tag.srv.final" "d['delivered']['datagrams']")" \
		= "$n $n/$n"
}
run_intact ipv4 4 "$IP4_d1:7000" 127.0.0.1:7001 127.0.0.1:9000 127.0.0.1 9000 300
if [ -z "$TRANSPORT" ] && ! lib_have_dccp; then
	# the default, without DCCP: said once by each end, in one line
	for end in cli srv; do
		lib_check "no DCCP: the $end's one line: over TCP with TFRC's equation" \
			test "$(grep -c "^tsm tunnel [a-z]*: DCCP not in this kernel (socket: E[A-Z]*): over TCP with TFRC's equation (MulTFRC, n = 1) instead, the same bounded queue$" "$TMPD/ipv4.$end.err")" = 1
	done
	lib_check "no DCCP: the statistics name the transport multfrc" \
		test "$(jf "$TMPD/ipv4.cli.final" "d['transport']")" = multfrc
fi
run_intact ipv6 6 "[$IP6_d1]:7000" "[::1]:7001" "[::1]:9000" ::1 9000 100
lib_topo_down

# --- overload: 2.5 x a 1 Mbit/s bottleneck ---------------------------------
lib_topo_up dumbbell --rate 1mbit --delay 10ms --queue 20
nsbg d1 "$PYTHON" "$APP" sink 127.0.0.1 9100 --out "$TMPD/ol.sink" --idle 1
sink=$!
if start_pair ol 7100 -- --peer "$IP4_d1:7100" --udp 127.0.0.1:7101 \
	--to 127.0.0.1:9100; then
	# 1000-byte datagrams at 312/s: 2.5 Mbit/s for 6 s
	lib_nsx s1 "$PYTHON" "$APP" send 127.0.0.1 7101 --rate 312 --size 1000 \
		--count 1872
	wait $sink
	stop_pair ol
	c=$TMPD/ol.cli.final
	# the delays after the first fifth (the queues filling)
	dl="sorted(d['delays_ms'][len(d['delays_ms']) // 5:])"
	{ read -r rate; read -r got; read -r p50; read -r p95; read -r last; } < <(jf "$TMPD/ol.sink" \
		"sum(d['per_s'].get(str(s), 0) for s in (2, 3, 4)) * 8 / 3" \
		"d['count']" \
		"$dl[len($dl) // 2]" \
		"$dl[int(0.95 * len($dl))]" \
		"sum(d['delays_ms'][-50:]) / 50")
	{ read -r counts; read -r balance; read -r from_app; read -r full; } < <(jf "$c" \
		"d['from_app']['datagrams'], d['to_tunnel']['datagrams'], d['dropped_queue_full']['datagrams'], d['queued']" \
		"d['from_app']['datagrams'] == d['to_tunnel']['datagrams'] + d['dropped_queue_full']['datagrams'] + d['dropped_disconnected']['datagrams'] + d['dropped_expired']['datagrams'] + d['dropped_other']['datagrams'] + d['queued']" \
		"d['from_app']['datagrams']" \
		"d['dropped_queue_full']['datagrams'] >= 0.4 * 1872")
	lib_log "offered 1872 x 1000 B at 2.5 Mbit/s: $counts (from_app, to_tunnel, dropped_queue_full, queued); $got delivered"
	lib_log "delivered $rate bit/s in seconds 2-4; one-way delay median $p50 ms, p95 $p95 ms, last 50 mean $last ms"
	lib_check "overload: received = sent + dropped + queued" test "$balance" = True
	lib_check "overload: all 1872 received by the client" test "$from_app" = 1872
	lib_check "overload: at least 40 % dropped at the tunnel (queue full)" test "$full" = True
	lib_check "overload: the server delivered what the sink got" test "$(jf "$TMPD/ol.srv.final" "d['delivered']['datagrams']")" = "$got"
	lib_check "overload: delivered rate 0.5-1.0 Mbit/s (bottleneck 1)" awk -v r="$rate" 'BEGIN { exit !(r >= 500000 && r <= 1000000) }'
	# An unbounded queue would hold 1.5 s of data per second of overload.
	# A bounded one leaves the bottleneck's: 20 packets of about 1,090
	# bytes (the datagram, the tunnel's framing, the transport's, IP's and
	# Ethernet's headers) at 1 Mbit/s are about 175 ms, plus the 10 ms
	# path and the tunnel's two datagrams (17 ms).  Over DCCP that is the
	# tail too (p95 184-185 ms over CCID 2 and 3).  Over a stream (TCP,
	# the default without DCCP) a loss holds back what follows it until
	# the retransmission comes, about one round trip later (some 195 ms
	# with the queue full), and fast
	# recovery sets the tail: p95 346-361 ms in guests of 6.18 and 7.3
	# beside a busy core, and once over 400 ms in CI (2026-11-28); 600 ms
	# is that recovery with room for the emulator's timers.
	p95_max=400
	[ "$LISTEN_PROTO" = tcp ] && p95_max=600
	lib_check "overload: one-way delay median <= 250 ms" lib_at_most "$p50" 250
	lib_check "overload: one-way delay p95 <= $p95_max ms" lib_at_most "$p95" "$p95_max"
	lib_check "overload: delay at the end <= 400 ms (not growing)" lib_at_most "$last" 400
else
	lib_check "overload: tunnel up" false
	kill $sink
fi

# --- restarts ----------------------------------------------------------------
# Every step waits for what it needs, not for a time: in an emulator whose
# CPU is shared a step can take seconds.  The sink ends at SIGTERM.
nsbg d1 "$PYTHON" "$APP" sink 127.0.0.1 9200 --out "$TMPD/rs.sink" --idle 60
sink=$!
if start_pair rs 7200 -- --peer "$IP4_d1:7200" --udp 127.0.0.1:7201 \
	--to 127.0.0.1:9200; then
	# 100 x 120 B per second for 8 s
	lib_nsx s1 "$PYTHON" "$APP" send 127.0.0.1 7201 --rate 100 --size 120 \
		--count 800 &
	app=$!
	sleep 1
	kill -KILL "$SRV"
	sleep 1
	nsbg d1 "$TSM" tunnel server --listen 7200 --interval 0.2 \
		"${TARGS[@]}" \
		--stats "$TMPD/rs.srv.json" > "$TMPD/rs.srv.out" \
		2> "$TMPD/rs.srv.err"
	SRV=$!
	lib_check "restart: the client reconnects to the new server" \
		wait_json "$TMPD/rs.cli.json" "d['reconnects'] >= 1 and d['connected']"
	lib_check "restart: datagrams while disconnected dropped and counted" \
		wait_json "$TMPD/rs.cli.json" "d['dropped_disconnected']['datagrams'] > 0"
	# descriptors besides the flows' sockets (each sender is a flow)
	sleep 0.5
	fd_before=$(($(fds "$SRV") - $(jf "$TMPD/rs.srv.json" "d['flows']")))
	kill -KILL "$CLI"
	lib_check "restart: the server sees the client go" \
		wait_json "$TMPD/rs.srv.json" "d['connections'] == 0 and d['flows'] == 0"
	# the killed client's last statistics must not pass for the new one's
	rm -f "$TMPD/rs.cli.json"
	nsbg s1 "$TSM" tunnel client --interval 0.2 --stats "$TMPD/rs.cli.json" \
		"${TARGS[@]}" \
		--peer "$IP4_d1:7200" --udp 127.0.0.1:7201 --to 127.0.0.1:9200 \
		> "$TMPD/rs.cli.out" 2> "$TMPD/rs.cli.err"
	CLI=$!
	lib_check "restart: the new client connects" \
		wait_json "$TMPD/rs.cli.json" "d['connected']"
	# The rest of the sequence, once the first sender is done, through
	# the new client and the new server: 2 s more.
	wait $app
	lib_nsx s1 "$PYTHON" "$APP" send 127.0.0.1 7201 --rate 100 --size 120 \
		--count 200 --first-seq 800 &
	app=$!
	lib_check "restart: the new client carries traffic" \
		wait_json "$TMPD/rs.cli.json" "d['to_tunnel']['datagrams'] > 0"
	sleep 0.5
	fd_after=$(($(fds "$SRV") - $(jf "$TMPD/rs.srv.json" "d['flows']")))
	lib_check "restart: no descriptor leaked ($fd_before before, $fd_after after)" \
		test "$fd_before" = "$fd_after"
	wait $app
	wait_json "$TMPD/rs.srv.json" "d['from_tunnel']['datagrams'] >= $(jf "$TMPD/rs.cli.json" "d['to_tunnel']['datagrams']")"
	kill -TERM $sink
	wait $sink
	stop_pair rs
	lib_log "sink got $(jf "$TMPD/rs.sink" "d['count']") of 1000, last $(jf "$TMPD/rs.sink" "d['last']")"
	lib_check "restart: traffic resumes after both restarts" \
		test "$(jf "$TMPD/rs.sink" "d['last'] >= 980 and d['reordered'] == 0 and d['damaged'] == 0")" = True
	lib_check "restart: the new server delivered what it got" \
		test "$(jf "$TMPD/rs.srv.final" "d['delivered']['datagrams'] == d['from_tunnel']['datagrams'] > 0")" = True
else
	lib_check "restart: tunnel up" false
	kill $sink
fi

# --- transparent redirection ------------------------------------------------
nsbg d1 "$PYTHON" "$APP" sink "$IP4_d1" 9300 --out "$TMPD/rd.sink" --idle 1 \
	--echo
sink=$!
if start_pair rd 7300 --queue "$QUEUE" -- --peer "$IP4_d1:7300" \
	--udp 7301 --to "$IP4_d1:9300" --redirect-port 9300 --queue "$QUEUE"; then
	lib_check "redirect: table inet tsm_tunnel_9300 installed" \
		lib_nsx s1 nft list table inet tsm_tunnel_9300
	# The application sends to the real destination and accepts replies
	# only from there (a connected socket).
	lib_nsx s1 "$PYTHON" "$APP" send "$IP4_d1" 9300 --rate 100 --size 120 \
		--count 50 --connect --linger 5 --replies "$TMPD/rd.rep"
	wait $sink
	stop_pair rd
	lib_check "redirect: the application's 50 datagrams went through the tunnel" \
		test "$(jf "$TMPD/rd.cli.final" "d['from_app']['datagrams']")" = 50
	lib_check "redirect: 50 datagrams intact, in order" sink_intact rd 50
	log_replies rd "$(jf "$TMPD/rd.rep" "d['replies']") of 50"
	lib_check "redirect: 50 replies, from the real destination" \
		test "$(jf "$TMPD/rd.rep" "d['replies']")" = 50
	lib_check "redirect: table gone after SIGTERM" \
		eval '! lib_nsx s1 nft list table inet tsm_tunnel_9300 >/dev/null 2>&1'
	lib_check "redirect: final statistics printed at SIGTERM" \
		test "$(jf "$TMPD/rd.cli.final" "d['final']")" = True
else
	lib_check "redirect: tunnel up" false
	kill $sink
fi
nsbg s1 "$TSM" tunnel client --peer "$IP4_d1:7300" --udp 7301 \
	"${TARGS[@]}" \
	--to "$IP4_d1:9300" --redirect-port 9300 > /dev/null 2>&1
CLI=$!
for i in $(seq 50); do
	lib_nsx s1 nft list table inet tsm_tunnel_9300 >/dev/null 2>&1 && break
	sleep 0.1
done
kill -KILL $CLI
wait $CLI 2>/dev/null
lib_check "redirect: the table outlives SIGKILL" \
	lib_nsx s1 nft list table inet tsm_tunnel_9300
out=$(lib_nsx s1 "$TSM" tunnel cleanup 2>&1)
lib_log "cleanup: $out"
lib_check "redirect: tsm tunnel cleanup removes it" \
	eval '! lib_nsx s1 nft list table inet tsm_tunnel_9300 >/dev/null 2>&1 &&
	      grep -q "removed table inet tsm_tunnel_9300" <<< "$out"'

lib_finish
