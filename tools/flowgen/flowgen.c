// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen: one flow of test traffic, measured where it counts.
 *
 *   flowgen -s [-P tcp|tltcp|udp|dccp|sctp] [-p PORT] [-4|-6] [-i SECS]
 *           [-W BYTES] [-S FILE] [-I SECS] [-o FILE]
 *   flowgen -c HOST [-P tcp|tltcp|udp|dccp|sctp] [-p PORT] [-t SECS]
 *           [-i SECS] [-o FILE] [-C CONGESTION] [-M MSS] [-K CCID]
 *           [-T LIFETIME_MS] [-r RATE [-R STEP,PERIOD] -l BYTES] [-O ON,OFF]
 *           [-D SIZE,PERIOD,DEADLINE [-A]] [-w SECS]
 *
 * The server receives one flow and reports, per interval, the bytes its
 * application read: throughput measured at the receiver.  The client sends
 * for -t seconds, greedily or at a constant bit rate (-r bit/s in datagrams
 * or writes of -l bytes), and reports per interval the bytes it wrote and,
 * for TCP, what TCP_INFO says (cwnd, ssthresh, RTT and its variation,
 * segments sent and retransmitted).  -M clamps the TCP segment size, so
 * that experiments can use the small packets of a paper's simulations.
 * Reports are JSON (-o FILE, default standard output); "epoch" is the
 * wall-clock time of interval 0, for lining up the flows of one run.
 *
 * DCCP (-P dccp) uses the kernel's DCCP with CCID 2 (TCP-like) or 3
 * (TFRC), chosen with -K; packets are -l bytes (default 1000).  The kernel
 * refuses a send while its transmit queue is full (EAGAIN, even on a
 * blocking socket), so a greedy DCCP sender retries after a short sleep.
 * For CCID 3 the sender also reports what TFRC computes: the allowed rate
 * X, the receive rate X_recv, the loss event rate p and the RTT.
 *
 * SCTP (-P sctp) is one-to-one style; -T gives every message a PR-SCTP
 * lifetime (timed reliability), and the sender reports how many messages
 * SCTP abandoned, unsent or sent.
 *
 * TLTCP (-P tltcp) is a TCP connection with the "tltcp" upper-layer
 * protocol attached on both ends (include/uapi/linux/tltcp.h).  Sections
 * go with sendmsg(MSG_TL) and a TL_DEADLINE at the section's deadline, so
 * the module abandons what it could not send in time; the receiver reads
 * with recvmsg(MSG_TL) and counts the gaps it is told of.  Without -D the
 * client writes plainly (reliable sections for the module).  Both ends
 * report the module's TL_INFO counters.  The deadline is the sender's: a
 * byte sent just before it arrives after it.  -A tells the module to
 * abandon a section one smoothed RTT (TCP_INFO, at the sendmsg call)
 * before its deadline instead, so that what it sends can still arrive in
 * time: the paper's receiver-relative deadlines.
 *
 * -W clamps the receiver's window (TCP_WINDOW_CLAMP, TCP and TLTCP) and
 * -S writes a sequence trace, one CSV line per read: the time since the
 * receiver's epoch, the stream offset of the first byte, the length, and
 * "data" or (TLTCP) "gap".
 *
 * Traffic patterns: greedy (default), constant bit rate (-r, -l), a rate
 * that rises by STEP bit/s every PERIOD seconds (-R, from -r: the growing
 * unresponsive sources of a congestion collapse), on/off
 * (-O: send for ON seconds, pause OFF, in either mode), and sections with
 * deadlines (-D, see sections.h), which the receiver recognises and
 * reports on: bytes and sections delivered before their deadline, and
 * sections missing.  Over SCTP each section is one message whose lifetime
 * ends at its deadline.
 *
 * UDP datagrams carry a sequence number and the send time, so the receiver
 * counts losses and one-way delay (exact between network namespaces, which
 * share CLOCK_MONOTONIC), to when the datagram reached the receiving
 * socket (the kernel's SO_TIMESTAMPNS), not to when the receiver read
 * it.  Of the losses, those the receiving socket's own full buffer
 * caused (SO_RXQ_OVFL) are reported apart, as rcvbuf_drops: a
 * receiver that did not keep up, not the network.  A UDP flow ends with
 * END datagrams, or when the receiver hears nothing for two seconds (-I:
 * SECS, 0 = never).
 *
 * Exit status: 0 on success, 1 on a run-time failure, 2 on bad arguments.
 */

#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "flowgen.h"

const char *const proto_name[P_NPROTO] = { "tcp", "udp", "dccp", "sctp", "tltcp" };
volatile sig_atomic_t stop;

/* SIGALRM ends a sender's flow; SIGTERM or SIGINT a receiver's. */
void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct results r = { .tl_drained = -1 };
	struct opts o;

	cli_prog = "flowgen";
	cli_synopsis = usage;
	parse_opts(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	r.ivs = calloc(MAX_INTERVALS, sizeof(*r.ivs));
	if (!r.ivs)
		cli_die("out of memory");
	if (o.server) {
		/* Stopped from outside, a receiver still reports what it got:
		 * no SA_RESTART, so a blocked read returns.
		 */
		struct sigaction sa = { .sa_handler = on_stop };
		int fd = open_server(&o);

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);

		if (o.proto == P_UDP)
			serve_udp(&o, &r, fd);
		else
			serve_stream(&o, &r, fd);
		close(fd);
	} else {
		send_flow(&o, &r);
	}
	free(r.ivs);
	return 0;
}
