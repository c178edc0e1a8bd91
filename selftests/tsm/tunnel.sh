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

# Every wait of this test is bounded, and scaled as the runner's timeout
# (settings) is: KSELFTEST_TIMEOUT_SCALE (make check-debug: 4).  The whole
# script took up to 159 s in CI's TCG guests (one vCPU, beside another
# guest) and over 300 s, its old timeout, on a slower day, mostly in
# starts of Python (below), up to 9 s each then, and waits polled by one
# start each.  Now no wait starts one per poll, and the whole took
# 281-307 s (7.3) beside two other guests, 177 s (6.1) on the same host
# (2026-12-07).
SCALE=${KSELFTEST_TIMEOUT_SCALE:-1}
# WAIT_S: for a state of the tunnel (connected, reconnected, counted),
# which takes a fraction of a second, or 2 s of the client's backoff.
WAIT_S=$((15 * SCALE))

# wait_json FILE EXPR: up to WAIT_S for EXPR to hold in FILE (a stats
# file), polled in one Python (udp_app.py wait).
wait_json() {
	"$PYTHON" "$APP" wait "$1" "$2" --timeout "$WAIT_S" && return 0
	lib_log "$1: $2 never held in $WAIT_S s"; sed 's/^/#   /' "$1" 2>/dev/null
	return 1
}

# reap PID SECONDS: wait for a background PID (a sink, a tunnel end) at
# most SECONDS (scaled), then SIGTERM it (a sink writes its summary then),
# and SIGKILL it 2 s later if it is still there.
reap() {
	local pid=$1 end=$((SECONDS + $2 * SCALE))
	while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		lib_log "pid $pid still running after $(($2 * SCALE)) s: SIGTERM"
		kill -TERM "$pid" 2>/dev/null
		end=$((SECONDS + 2))
		while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
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
# The probe is a start of Python: once.
HAVE_DCCP=
if lib_have_dccp; then
	HAVE_DCCP=1
	TRANSPORT=${TUNNEL_TRANSPORT-dccp-ccid2}
else
	lib_log "no DCCP here ($LIB_DCCP_WHY)"
	TRANSPORT=${TUNNEL_TRANSPORT-}
fi
lib_log "transport ${TRANSPORT:-the default}"
# the transport option of both ends: none for the default
TARGS=(${TRANSPORT:+--transport "$TRANSPORT"})
case $TRANSPORT in
"")	if [ -n "$HAVE_DCCP" ]; then
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

# phase NAME: a diagnostic line with the seconds the script has taken, so
# that a log shows where the time went.
phase() { lib_log "--- $* (at ${SECONDS} s)"; }

# fds PID: open descriptors of a process.
fds() { ls /proc/"$1"/fd | wc -l; }

# fd_excess PID STATS: the server's descriptors besides its flows' sockets
# (each sender is a flow), once two readings 0.3 s apart agree: a flow
# just opened is in /proc before it is in the statistics (written every
# 0.2 s), and so is the statistics file while it is written (a starved
# guest read 10 before and 9 after, 2026-12-07).
fd_excess() {
	local a b= i f
	for i in 1 2 3 4 5 6; do
		a=$b
		f=$(jf "$2" "d['flows']")
		b=$(($(fds "$1") - ${f:-0}))
		[ "$a" = "$b" ] && break
		sleep 0.3
	done
	echo "$b"
}

phase "arguments"
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
	reap "$CLI" 10
	reap "$SRV" 10
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
# Reads each end's final statistics once: FIN_CLI the client's "from_app
# to_tunnel", FIN_FINAL its "final", FIN_SRV the server's "delivered".
log_replies() {
	local cli srv
	{ read -r FIN_CLI; read -r FIN_FINAL; read -r cli; } < <(jf "$TMPD/$1.cli.final" \
		"d['from_app']['datagrams'], d['to_tunnel']['datagrams']" "d['final']" \
		"' '.join(f'{k} {d[k][\"datagrams\"]}' for k in ('from_app', 'to_tunnel', 'dropped_queue_full', 'from_tunnel', 'to_app', 'to_app_errors'))")
	{ read -r FIN_SRV; read -r srv; } < <(jf "$TMPD/$1.srv.final" \
		"d['delivered']['datagrams']" \
		"' '.join(f'{k} {d[k][\"datagrams\"]}' for k in ('from_dest', 'to_tunnel', 'dropped_queue_full', 'dropped_disconnected', 'dropped_expired', 'dropped_other'))")
	lib_log "$1: $2 replies; server: $srv; client: $cli"
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
# The echoes still come in bursts when the guest's CPU was away from the
# sink or the tunnel: with 16, on a host loaded with two other guests
# (2026-12-07, 7.3 over MulTFRC), the server dropped 1 and 6 of 300
# replies in two of three runs.  64 is 320 ms of them.
QUEUE=64

# --- unshaped: intact, in order, replies ------------------------------------
phase "unshaped"
lib_topo_up dumbbell --rate 1gbit --delay 1ms --queue 1000
phase "unshaped: the topology is up"

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
		--report "$TMPD/$tag.rep"
	reap $sink 10
	stop_pair "$tag"
	lib_check "$tag: $n datagrams intact, in order" sink_intact "$tag" "$n"
	replies=$(jf "$TMPD/$tag.rep" "d['replies']")
	log_replies "$tag" "$replies of $n"
	lib_check "$tag: $n replies back to the application" test "$replies" = "$n"
	lib_check "$tag: counted: from_app = to_tunnel = delivered = $n" test \
		"$FIN_CLI/$FIN_SRV" = "$n $n/$n"
}
run_intact ipv4 4 "$IP4_d1:7000" 127.0.0.1:7001 127.0.0.1:9000 127.0.0.1 9000 300
if [ -z "$TRANSPORT" ] && [ -z "$HAVE_DCCP" ]; then
	# the default, without DCCP: said once by each end, in one line
	for end in cli srv; do
		lib_check "no DCCP: the $end's one line: over TCP with TFRC's equation" \
			test "$(grep -c "^tsm tunnel [a-z]*: DCCP not in this kernel (socket: E[A-Z]*): over TCP with TFRC's equation (MulTFRC, n = 1) instead, the same bounded queue$" "$TMPD/ipv4.$end.err")" = 1
	done
	lib_check "no DCCP: the statistics name the transport multfrc" \
		test "$(jf "$TMPD/ipv4.cli.final" "d['transport']")" = multfrc
fi
run_intact ipv6 6 "[$IP6_d1]:7000" "[::1]:7001" "[::1]:9000" ::1 9000 100
phase "unshaped: done"
lib_topo_down

# --- overload: 2.5 x a 1 Mbit/s bottleneck ---------------------------------
phase "overload"
lib_topo_up dumbbell --rate 1mbit --delay 10ms --queue 20
phase "overload: the topology is up"
nsbg d1 "$PYTHON" "$APP" sink 127.0.0.1 9100 --out "$TMPD/ol.sink" --idle 1
sink=$!
if start_pair ol 7100 -- --peer "$IP4_d1:7100" --udp 127.0.0.1:7101 \
	--to 127.0.0.1:9100; then
	# 1000-byte datagrams at 312/s: 2.5 Mbit/s for 6 s
	lib_nsx s1 "$PYTHON" "$APP" send 127.0.0.1 7101 --rate 312 --size 1000 \
		--count 1872 --report "$TMPD/ol.send"
	reap $sink 10
	stop_pair ol
	c=$TMPD/ol.cli.final
	# the delays after the first fifth (the queues filling)
	dl="sorted(d['delays_ms'][len(d['delays_ms']) // 5:])"
	{ read -r rate; read -r got; read -r p50; read -r p95; read -r last; read -r by_s; read -r trend; read -r rise; } < <(jf "$TMPD/ol.sink" \
		"sum(d['per_s'].get(str(s), 0) for s in (2, 3, 4)) * 8 / 3" \
		"d['count']" \
		"$dl[len($dl) // 2]" \
		"$dl[int(0.95 * len($dl))]" \
		"sum(d['delays_ms'][-50:]) / 50" \
		"' '.join(f'{k}:{v:.0f}' for k, v in d['delay_p50_by_send_s'].items())" \
		"d['delay_trend_ms_per_s']" \
		"(lambda v: max(v) - min(v))([m for k, m in d['delay_p50_by_send_s'].items() if int(k) >= 1])")
	{ read -r counts; read -r balance; read -r from_app; read -r admitted; read -r dropped; } < <(jf "$c" \
		"d['from_app']['datagrams'], d['to_tunnel']['datagrams'], d['dropped_queue_full']['datagrams'], d['queued']" \
		"d['from_app']['datagrams'] == d['to_tunnel']['datagrams'] + d['dropped_queue_full']['datagrams'] + d['dropped_disconnected']['datagrams'] + d['dropped_expired']['datagrams'] + d['dropped_other']['datagrams'] + d['queued']" \
		"d['from_app']['datagrams']" \
		"d['to_tunnel']['datagrams']" \
		"d['dropped_queue_full']['datagrams']")
	send_s=$(jf "$TMPD/ol.send" "d['send_s']")
	{ read -r offered; read -r carry; } < <(jf "$TMPD/ol.send" \
		"1872 * 8000 / max(d['send_s'], 0.001)" \
		"int(125 * (d['send_s'] + 0.5))")
	{ read -r lag; read -r nots; } < <(jf "$TMPD/ol.sink" "d['read_lag_ms_max']" "d['no_timestamp']")
	lib_log "offered 1872 x 1000 B in $send_s s ($offered bit/s): $counts (from_app, to_tunnel, dropped_queue_full, queued); $got delivered"
	lib_log "delivered $rate bit/s in seconds 2-4; one-way delay (to the sink's socket) median $p50 ms, p95 $p95 ms, last 50 mean $last ms; the sink read up to $lag ms late, $nots without a timestamp"
	lib_log "median delay (ms) by second of sending: $by_s; after the first: trend $trend ms per s, rise $rise ms"
	lib_check "overload: received = sent + dropped + queued" test "$balance" = True
	lib_check "overload: all 1872 received by the client" test "$from_app" = 1872
	# What the tunnel admits is what the bottleneck carries while the
	# sender sends, at most 125 datagrams of 1000 bytes a second at
	# 1 Mbit/s (fewer: the headers), plus half a second of them (the
	# transport's window, the queues); the rest is dropped, queue full.
	# An unbounded queue admits all 1872.  The sender's own time is the
	# measure, not the 6 s it meant: a guest whose CPU is short offers
	# less, in spurts, over longer.  Beside a 6.1 guest running
	# fairness.sh a 7.3 guest's sender took 14.3 s (1.05 Mbit/s) and 9.0
	# s beside lighter tests (2026-12-07); the CI run of cff5d56 that day
	# saw under 40 % dropped, as 1.5 Mbit/s or less offered gives.  What
	# tells a bounded queue from an unbounded one holds down to an
	# overload of 1 Mbit/s of payload, more than the link's 0.92: the
	# unbounded one admits everything, drops nothing, and its delay
	# grows by a second or more over such a sending (checks below).
	lib_check "overload: offered more than the link carries, at least 1 Mbit/s ($offered bit/s)" \
		lib_at_least "$offered" 1000000
	lib_check "overload: the tunnel admitted $admitted <= $carry (what 1 Mbit/s carries in $send_s + 0.5 s), dropped $dropped (queue full)" \
		eval 'lib_at_most "$admitted" "$carry" && lib_at_least "$dropped" 1'
	delivered=$(jf "$TMPD/ol.srv.final" "d['delivered']['datagrams']")
	lib_check "overload: the server delivered what the sink got ($delivered, $got)" test "$delivered" = "$got"
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
	# beside a busy core, and once over 400 ms in CI (2026-11-28); 620 and
	# 736 ms in 7.3 guests beside two others (2026-12-07), their
	# per-second medians showing a stall of about 0.5 s.  1000 ms is that
	# recovery and such a stall; an unbounded queue's p95 is seconds.
	# Those delays ended when the sink read a datagram.  A sink the CPU
	# was away from then counted as queue: the CI run of cff5d56 (7.3,
	# 2026-12-07) failed this and the next check, and so did a 7.3 guest
	# beside a 6.1 one (p95 1132 ms, one second's median 951 ms).  The
	# delay ends at the kernel's arrival timestamp now (udp_app.py): in
	# the same setting the next run's p95 was 102 ms, the sink up to 81
	# ms late in reading.
	p95_max=400
	[ "$LISTEN_PROTO" = tcp ] && p95_max=1000
	lib_check "overload: one-way delay median <= 250 ms" lib_at_most "$p50" 250
	lib_check "overload: one-way delay p95 <= $p95_max ms" lib_at_most "$p95" "$p95_max"
	# Not growing: an unbounded queue's delay grows by 1.5 s per second
	# of sending, a bounded one's stays level.  Of the median delays of
	# each second of sending from the second on (the queues filled), the
	# trend (udp_app.py's delay_trend_ms_per_s) is at most a tenth of
	# that, and their rise, highest less lowest, at most 800 ms: a sender
	# starved by a loaded host offers the overload in spurts, and an
	# unbounded queue (--queue 100000, 7.3, 2026-12-07) then rose from 656
	# to 2491 ms with a trend of only 34 ms per s; bounded ones rose by
	# 37-540 ms (trend -13 to 14) in the guests of 6.1 and 7.3 that day,
	# two of them beside two other guests.  The mean of the last 50
	# datagrams (under 0.5 s), which this checked before (at most 400
	# ms), is one fast recovery over a stream or one stall of a guest
	# whose CPU is shared: a 6.18 guest in CI (2026-12-07) went over 400
	# ms there with its median and p95 in bounds.
	lib_check "overload: delay not growing (trend <= 150 ms per s, rise <= 800 ms)" \
		eval 'lib_at_most "$trend" 150 && lib_at_most "$rise" 800'
else
	lib_check "overload: tunnel up" false
	kill $sink
fi

# --- restarts ----------------------------------------------------------------
# Every step waits for what it needs, not for a time: in an emulator whose
# CPU is shared a step can take seconds.  The sink ends at SIGTERM.
phase "restarts"
nsbg d1 "$PYTHON" "$APP" sink 127.0.0.1 9200 --out "$TMPD/rs.sink" --idle 60
sink=$!
if start_pair rs 7200 -- --peer "$IP4_d1:7200" --udp 127.0.0.1:7201 \
	--to 127.0.0.1:9200; then
	# 100 x 120 B per second for 8 s
	lib_nsx s1 "$PYTHON" "$APP" send 127.0.0.1 7201 --rate 100 --size 120 \
		--count 800 &
	app=$!
	# The server is killed once the application's datagrams go through
	# the tunnel, and restarted once the client has dropped some while
	# it was down: the application keeps sending, so both hold in a
	# fraction of a second.  Times instead (1 s, then 1 s) race the
	# sender's start of Python, up to 9 s in a loaded guest: a sender
	# that begins once the client is back has nothing dropped, and the
	# old poll for a drop (60 starts of Python) then outlasts the test's
	# timeout, likely what 7.3 in CI met after check 26 (2026-12-07).
	# The client's backoff, 2 s at most, is what the reconnection takes.
	wait_json "$TMPD/rs.cli.json" "d['to_tunnel']['datagrams'] > 0" ||
		lib_log "the application's datagrams did not reach the tunnel"
	kill -KILL "$SRV"
	wait "$SRV" 2>/dev/null
	wait_json "$TMPD/rs.cli.json" "d['dropped_disconnected']['datagrams'] > 0 and not d['connected']"
	dropped=$?
	nsbg d1 "$TSM" tunnel server --listen 7200 --interval 0.2 \
		"${TARGS[@]}" \
		--stats "$TMPD/rs.srv.json" > "$TMPD/rs.srv.out" \
		2> "$TMPD/rs.srv.err"
	SRV=$!
	lib_check "restart: the client reconnects to the new server" \
		wait_json "$TMPD/rs.cli.json" "d['reconnects'] >= 1 and d['connected']"
	lib_check "restart: datagrams while disconnected dropped and counted" \
		test "$dropped" = 0
	# descriptors besides the flows' sockets (on a starved guest the
	# sender may be done before the client is back: no flow then)
	fd_before=$(fd_excess "$SRV" "$TMPD/rs.srv.json")
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
	reap $app 30
	lib_nsx s1 "$PYTHON" "$APP" send 127.0.0.1 7201 --rate 100 --size 120 \
		--count 200 --first-seq 800 &
	app=$!
	lib_check "restart: the new client carries traffic" \
		wait_json "$TMPD/rs.cli.json" "d['to_tunnel']['datagrams'] > 0"
	wait_json "$TMPD/rs.srv.json" "d['connections'] == 1 and d['flows'] >= 1"
	fd_after=$(fd_excess "$SRV" "$TMPD/rs.srv.json")
	lib_check "restart: no descriptor leaked ($fd_before before, $fd_after after)" \
		test "$fd_before" = "$fd_after"
	reap $app 30
	wait_json "$TMPD/rs.srv.json" "d['from_tunnel']['datagrams'] >= $(jf "$TMPD/rs.cli.json" "d['to_tunnel']['datagrams']")"
	kill -TERM $sink
	reap $sink 10
	stop_pair rs
	{ read -r got; read -r resumed; } < <(jf "$TMPD/rs.sink" "d['count'], d['last']" \
		"d['last'] >= 980 and d['reordered'] == 0 and d['damaged'] == 0")
	lib_log "sink got ${got% *} of 1000, last ${got#* }"
	lib_check "restart: traffic resumes after both restarts" \
		test "$resumed" = True
	lib_check "restart: the new server delivered what it got" \
		test "$(jf "$TMPD/rs.srv.final" "d['delivered']['datagrams'] == d['from_tunnel']['datagrams'] > 0")" = True
else
	lib_check "restart: tunnel up" false
	kill $sink
fi

# --- transparent redirection ------------------------------------------------
phase "redirection"
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
		--count 50 --connect --linger 5 --report "$TMPD/rd.rep"
	reap $sink 10
	stop_pair rd
	replies=$(jf "$TMPD/rd.rep" "d['replies']")
	log_replies rd "$replies of 50"
	lib_check "redirect: the application's 50 datagrams went through the tunnel" \
		test "${FIN_CLI% *}" = 50
	lib_check "redirect: 50 datagrams intact, in order" sink_intact rd 50
	lib_check "redirect: 50 replies, from the real destination" \
		test "$replies" = 50
	lib_check "redirect: table gone after SIGTERM" \
		eval '! lib_nsx s1 nft list table inet tsm_tunnel_9300 >/dev/null 2>&1'
	lib_check "redirect: final statistics printed at SIGTERM" \
		test "$FIN_FINAL" = True
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
