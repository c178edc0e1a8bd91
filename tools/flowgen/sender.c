// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen's sender (-c): greedy, at a constant or rising rate, on and off,
 * or in sections with deadlines, for -t seconds; then the end of the flow
 * (UDP's END datagrams, TLTCP's drain).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <linux/sctp.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "flowgen.h"
#include "tltcp_msg.h"

/* In an off period of -O ON,OFF at time t: when the next on period starts. */
static uint64_t off_until(const struct opts *o, uint64_t start, uint64_t t)
{
	uint64_t cycle = (uint64_t)((o->on + o->off) * 1e9);
	uint64_t on = (uint64_t)(o->on * 1e9);
	uint64_t phase;

	if (!o->on)
		return 0;
	phase = (t - start) % cycle;
	return phase < on ? 0 : t - phase + cycle;
}

/* One section over TLTCP: sendmsg(MSG_TL) with the time left until its
 * deadline (1 ns if none is left: the module abandons it at once); with
 * -A, until one smoothed RTT before it.
 */
static ssize_t send_tl_section(const struct opts *o, int fd, char *sec,
			       size_t len, uint64_t deadline)
{
	uint64_t t = now_ns(), left;

	if (o->ahead) {
		struct tcp_info ti;
		socklen_t tlen = sizeof(ti);

		if (!getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tlen))
			deadline -= (uint64_t)ti.tcpi_rtt * 1000;
	}
	left = deadline > t ? deadline - t : 1;
	return tl_send_section(fd, sec, len, left, 0);
}

/* One section over a stream transport: written whole.  Over SCTP it is
 * one message whose PR-SCTP lifetime ends at the section's deadline; over
 * TLTCP one section with that deadline.
 */
static ssize_t write_section(const struct opts *o, int fd, char *sec,
			     uint64_t deadline)
{
	char cbuf[CMSG_SPACE(sizeof(struct sctp_prinfo))] = { 0 };
	struct iovec iov = { .iov_base = sec, .iov_len = o->sec_size };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	uint64_t t = now_ns();
	struct sctp_prinfo pr = {
		.pr_policy = SCTP_PR_SCTP_TTL,
		.pr_value = deadline > t + 1000000 ?
			    (uint32_t)((deadline - t) / 1000000) : 1,
	};
	struct cmsghdr *c;
	size_t done = 0;
	ssize_t n;

	if (o->proto == P_TLTCP)
		return send_tl_section(o, fd, sec, o->sec_size, deadline);
	if (o->proto == P_SCTP) {
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = IPPROTO_SCTP;
		c->cmsg_type = SCTP_PRINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pr));
		memcpy(CMSG_DATA(c), &pr, sizeof(pr));
		n = sendmsg(fd, &msg, 0);
		if (n < 0 && errno == EMSGSIZE)
			cli_die("-D: a %ld-byte section does not fit one SCTP message",
				o->sec_size);
		return n;
	}
	while (done < (size_t)o->sec_size) {
		n = write(fd, sec + done, o->sec_size - done);
		if (n < 0)
			return done ? (ssize_t)done : n;
		done += n;
	}
	return done;
}

/* Sections: SIZE bytes every PERIOD, each useful until DEADLINE after the
 * application offered it.  TCP and SCTP write each whole; UDP sends it at
 * once, in datagrams of -l bytes that each carry the section's header.
 */
static void send_sections(const struct opts *o, struct results *r, int fd,
			  uint64_t start, uint64_t end)
{
	uint64_t period = (uint64_t)(o->sec_period * 1e9);
	uint64_t life = (uint64_t)(o->sec_deadline * 1e9);
	size_t dlen = (size_t)o->len - sizeof(struct sec_hdr);
	char *sec = calloc(1, o->sec_size);
	char *dgram = calloc(1, o->len);
	uint64_t k, created, t;

	if (!sec || !dgram)
		cli_die("out of memory");
	for (k = 0; !stop && (created = start + k * period) < end; k++) {
		struct interval *iv;
		uint32_t off = 0;
		ssize_t n;

		if (off_until(o, start, created))
			continue;	/* the application is quiet */
		sleep_until(created);
		r->sec_offered++;
		r->sec_offered_bytes += o->sec_size;
		if (o->proto != P_UDP) {
			sec_hdr_put(sec, k, o->sec_size, created,
				    created + life, 0, 0);
			n = write_section(o, fd, sec, created + life);
			if (n < 0 && errno != EINTR)
				cli_die("send: %s", strerror(errno));
			/* The end of the flow (SIGALRM) can cut a blocked
			 * write short: that section was offered, not written.
			 */
			if (n == (ssize_t)o->sec_size)
				r->sec_written++;
			iv = interval_at(r, start, now_ns(), o->interval);
			iv->bytes += n > 0 ? n : 0;
			sample(o, fd, iv);
			continue;
		}
		while (off < (uint32_t)o->sec_size && !stop) {
			size_t left = (size_t)o->sec_size - off;
			uint32_t len = left < dlen ? left : dlen;

			sec_hdr_put(dgram, k, o->sec_size, created,
				    created + life, off, len);
			n = send(fd, dgram, sizeof(struct sec_hdr) + len, 0);
			if (n < 0 && errno != EINTR && errno != ENOBUFS &&
			    errno != ECONNREFUSED)
				cli_die("send: %s", strerror(errno));
			if (n > 0)
				interval_at(r, start, now_ns(), o->interval)->bytes += n;
			off += len;
		}
	}
	/* The flow lasts its duration even when its last section was handed
	 * over early (TLTCP queues a section and returns, UDP sends it at
	 * once): that section still lives, and the receiver measures to the
	 * end.  Closing at once would cut a section with a long deadline.
	 */
	while (!stop && (t = now_ns()) < end) {
		uint64_t next = t + (uint64_t)(o->interval * 1e9);

		sleep_until(next < end ? next : end);
		sample(o, fd, interval_at(r, start, now_ns(), o->interval));
	}
	free(sec);
	free(dgram);
}

/* TLTCP at the end of the flow: the FIN follows the sections still queued
 * (each sent or abandoned by its deadline), and the receiver closes once
 * it has read everything.  Wait for that, at most DEADLINE (30 s at most)
 * + 5 s, so that the counters are final: every abandoned byte has
 * reached the receiver as a gap.  Reading also takes off the socket a
 * HELLO the receiver may have sent (a receiver with an earlier version of
 * the module sends it at attach), without which close() would reset the
 * connection.
 */
static void tltcp_finish(const struct opts *o, struct results *r, int fd)
{
	double wait_s = (o->sec_deadline < TLTCP_DRAIN_MAX_S ?
			 o->sec_deadline : TLTCP_DRAIN_MAX_S) + TLTCP_DRAIN_S;
	uint64_t until = now_ns() + (uint64_t)(wait_s * 1e9);
	char buf[4096];

	r->tl_drained = 0;
	if (!o->sec_size) {
		/* Plain writes have no deadline to wait for. */
		recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		return;
	}
	if (shutdown(fd, SHUT_WR))
		return;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t t = now_ns();
		ssize_t n;

		if (t >= until)
			break;
		poll(&pfd, 1, (int)((until - t) / 1000000) + 1);
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0) {
			r->tl_drained = 1;
			break;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
	}
}

/* Nanoseconds from one write or datagram to the next, elapsed_ns into the
 * flow: -r, raised by -R's step at the end of every period.
 */
static double send_gap_ns(const struct opts *o, uint64_t elapsed_ns)
{
	double rate = o->rate;

	if (o->ramp_step)
		rate += o->ramp_step *
			floor(elapsed_ns / 1e9 / o->ramp_period);
	return o->len * 8.0 / rate * 1e9;
}

/* A sender's state while it writes plainly (not in sections). */
struct tx {
	const struct opts *o;
	struct results *r;
	int fd;
	char *buf;
	size_t wlen;			/* bytes per write or datagram */
	bool greedy_tcp;
	int poll_ms;			/* greedy TCP: a full buffer's wait */
	double gap_ns;			/* -r: between writes, 0: greedy */
	uint64_t start, end, next;	/* ns: the flow, the next write */
	uint64_t seq;			/* UDP: the next datagram's */
};

/* TL_SNDQ_LIMIT for two sections of len bytes, if SO_SNDBUF is less. */
static void tltcp_room_for_sections(int fd, long len)
{
	uint32_t limit = 2 * (uint32_t)len;
	socklen_t optlen = sizeof(int);
	int sndbuf = 0;

	getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &optlen);
	if ((uint32_t)sndbuf >= limit)
		return;
	if (!setsockopt(fd, SOL_TLTCP, TL_SNDQ_LIMIT, &limit, sizeof(limit)))
		return;
	if (errno == EPERM)
		cli_die("TL_SNDQ_LIMIT %u for sections of %ld bytes: more than twice net.core.wmem_max needs CAP_NET_ADMIN",
			limit, len);
	cli_die("TL_SNDQ_LIMIT: %s", strerror(errno));
}

/* Connected and tuned; the congestion control's name in cc. */
static int tx_connect(const struct opts *o, bool greedy_tcp, char *cc,
		      socklen_t cclen)
{
	int lowat = NOTSENT_LOWAT;
	int fd;

	if (o->wait)
		usleep((useconds_t)(o->wait * 1e6));
	fd = connect_client(o);
	if (IS_TCP(o->proto))
		getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &cclen);
	/* Keep little unsent data in the socket, so that what the sender
	 * wrote is close to what it sent and the flow ends soon after -t.
	 * TLTCP keeps at most TL_NOTSENT (about a millisecond of sending)
	 * unsent in TCP anyway; its own queue gets the same bound.
	 */
	if (greedy_tcp && o->proto == P_TCP)
		setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat,
			   sizeof(lowat));
	if (greedy_tcp && o->proto == P_TLTCP &&
	    setsockopt(fd, SOL_TLTCP, TL_SNDQ_LIMIT, &lowat, sizeof(lowat)))
		cli_die("TL_SNDQ_LIMIT: %s", strerror(errno));
	/* A section must fit the module's queue, which follows SO_SNDBUF
	 * unless told otherwise: room for the one being sent and the next.
	 */
	if (o->sec_size && o->proto == P_TLTCP)
		tltcp_room_for_sections(fd, o->sec_size);
	return fd;
}

/* -r: whether it is time for the next write at t (if not, it slept). */
static bool tx_pace(struct tx *x, uint64_t t)
{
	if (!x->gap_ns)
		return true;
	if (t < x->next) {
		sleep_until(x->next);
		return false;
	}
	x->gap_ns = send_gap_ns(x->o, x->next - x->start);
	x->next += (uint64_t)x->gap_ns;
	return true;
}

/* A write the transport refused: wait as it wants, or fail. */
static void tx_refused(struct tx *x)
{
	if (errno == EAGAIN && x->greedy_tcp) {
		/* Sample TCP_INFO while the send buffer is full, too:
		 * a blocked write would leave intervals without one.
		 */
		struct pollfd pfd = { .fd = x->fd, .events = POLLOUT };

		poll(&pfd, 1, x->poll_ms);
		sample_tcp_info(x->fd, interval_at(x->r, x->start, now_ns(),
						   x->o->interval));
		return;
	}
	if (errno == EAGAIN && x->o->proto == P_DCCP) {
		/* DCCP's queue is full: CCID decides when it drains. */
		usleep(200);
		if (x->gap_ns)
			x->next -= (uint64_t)x->gap_ns;
		return;
	}
	if (errno == EINTR || errno == ENOBUFS || errno == ECONNREFUSED)
		return;		/* UDP: dropped, go on */
	cli_die("send: %s", strerror(errno));
}

static void tx_write(struct tx *x)
{
	struct interval *iv;
	ssize_t n;

	if (x->o->proto == P_UDP) {
		struct udp_hdr h = {
			.magic = htonl(UDP_MAGIC),
			.seq = htobe64(x->seq++),
			.sent_ns = htobe64(now_ns()),
		};

		memcpy(x->buf, &h, sizeof(h));
	}
	n = send(x->fd, x->buf, x->wlen, x->greedy_tcp ? MSG_DONTWAIT : 0);
	if (n < 0) {
		tx_refused(x);
		return;
	}
	iv = interval_at(x->r, x->start, now_ns(), x->o->interval);
	iv->bytes += n;
	sample(x->o, x->fd, iv);
}

/* Greedy or at a rate, on and off, until the end or a stop. */
static void tx_loop(struct tx *x)
{
	uint64_t t, resume;

	while (!stop && (t = now_ns()) < x->end) {
		resume = off_until(x->o, x->start, t);
		if (resume) {
			sleep_until(resume < x->end ? resume : x->end);
			x->next = resume;	/* a constant rate starts afresh */
			continue;
		}
		if (tx_pace(x, t))
			tx_write(x);
	}
}

/* The end of the flow: UDP's END datagrams, TLTCP's drain and counters. */
static void tx_finish(const struct opts *o, struct results *r, int fd)
{
	struct udp_hdr h = {
		.magic = htonl(UDP_MAGIC),
		.flags = htonl(UDP_END),
	};
	int i;

	if (o->proto == P_UDP)
		for (i = 0; i < 3; i++)
			send(fd, &h, sizeof(h), 0);
	if (o->proto == P_TLTCP) {
		tltcp_finish(o, r, fd);
		tltcp_get_info(r, fd);
	}
}

void send_flow(const struct opts *o, struct results *r)
{
	struct tx x = {
		.o = o, .r = r,
		.buf = calloc(1, !IS_TCP(o->proto) ? (size_t)o->len : BUF_SIZE),
		.wlen = o->rate || !IS_TCP(o->proto) ? (size_t)o->len : TCP_WRITE,
		.gap_ns = o->rate ? o->len * 8.0 / o->rate * 1e9 : 0,
		.greedy_tcp = IS_TCP(o->proto) && !o->rate && !o->sec_size,
		.poll_ms = (int)(o->interval * 1000 / 2),
	};
	struct sigaction sa = { .sa_handler = on_stop };
	char cc[TCP_CA_NAME_MAX] = "";
	uint64_t t;

	if (!x.buf)
		cli_die("out of memory");
	if (x.poll_ms < 1)
		x.poll_ms = 1;
	x.fd = tx_connect(o, x.greedy_tcp, cc, sizeof(cc));

	/* A blocked write must not outlast the flow. */
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned int)ceil(o->duration) + 1);

	x.start = now_ns();
	x.end = x.start + (uint64_t)(o->duration * 1e9);
	x.next = x.start;
	if (o->sec_size)
		send_sections(o, r, x.fd, x.start, x.end);
	else
		tx_loop(&x);
	t = now_ns();
	tx_finish(o, r, x.fd);
	close(x.fd);
	free(x.buf);
	report(o, r, "sender", (t - x.start) / 1e9, epoch_of(x.start),
	       cc[0] ? cc : NULL);
}
