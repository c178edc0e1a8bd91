// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen's receiver (-s): one stream connection read until the peer
 * closes, or UDP datagrams until END or silence; sections recognised and
 * accounted for, and the sequence trace (-S).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "flowgen.h"
#include "tltcp_msg.h"

/* The sequence trace (-S): one line per read. */
static FILE *trace_open(const struct opts *o)
{
	FILE *f;

	if (!o->trace)
		return NULL;
	f = fopen(o->trace, "w");
	if (!f)
		cli_die("%s: %s", o->trace, strerror(errno));
	fputs("time,stream_off,len,type\n", f);
	return f;
}

static void trace_line(FILE *f, uint64_t start, uint64_t t, uint64_t off,
		       size_t len, bool gap)
{
	if (f)
		fprintf(f, "%.6f,%llu,%zu,%s\n", (t - start) / 1e9,
			(unsigned long long)off, len, gap ? "gap" : "data");
}

/* TLTCP: one recvmsg(MSG_TL), data or a gap; the record in *rec. */
static ssize_t tltcp_recv(int fd, char *buf, size_t len, struct tl_record *rec,
			  bool *gap)
{
	union {
		char buf[TL_RECORD_SPACE];
		struct cmsghdr align;
	} cb;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cb.buf, .msg_controllen = sizeof(cb.buf),
	};
	ssize_t n = recvmsg(fd, &msg, MSG_TL);
	int type;

	if (n <= 0)
		return n;
	if (tl_records(&msg, rec, &type)) {
		*gap = type == TL_GAP;
		return n;
	}
	errno = EBADMSG;	/* every MSG_TL read carries its record */
	return -1;
}

/* The one connection, tuned as the receiver's; -1 if stopped first. */
static int accept_flow(const struct opts *o, int lfd)
{
	int fd;

	do {
		fd = accept(lfd, NULL, NULL);
	} while (fd < 0 && errno == EINTR && !stop);
	if (fd < 0 && stop)
		return -1;
	if (fd < 0)
		cli_die("accept: %s", strerror(errno));
	if (o->window)
		set_window_clamp(o, fd);
	if (o->proto == P_TLTCP)
		tltcp_attach(fd);
	return fd;
}

/* A stream receiver's state. */
struct stream_rx {
	const struct opts *o;
	struct results *r;
	FILE *trace;
	uint64_t start, last;		/* ns: the first and last read */
	uint64_t off;			/* stream offset of the next byte */
	bool tl;			/* TLTCP: records with every read */
	bool sections;			/* the stream carries sections */
};

/* TLTCP: a read of data or a gap, of the section its record names. */
static void stream_got_tl(struct stream_rx *s, struct interval *iv,
			  const char *buf, ssize_t n,
			  const struct tl_record *rec, bool gap, uint64_t t)
{
	s->off = rec->stream_off;
	trace_line(s->trace, s->start, t, s->off, n, gap);
	if (gap)
		iv->gap_bytes += n;
	else
		iv->bytes += n;
	iv->on_time_bytes += sec_rx_tl(&s->r->sec_rx, rec->section,
				       rec->sec_off,
				       gap ? NULL : (uint8_t *)buf, n, t);
}

/* n bytes read at time t. */
static void stream_got(struct stream_rx *s, const char *buf, ssize_t n,
		       const struct tl_record *rec, bool gap, uint64_t t)
{
	struct interval *iv;

	if (!s->start) {
		s->start = t;
		/* Sections announce themselves in their first bytes
		 * (over TLTCP, sec_rx_tl() reads every record).
		 */
		s->sections = !s->tl && n >= 4 &&
			      ntohl(*(uint32_t *)buf) == SEC_MAGIC;
	}
	s->last = t;
	iv = interval_at(s->r, s->start, t, s->o->interval);
	if (s->tl) {
		stream_got_tl(s, iv, buf, n, rec, gap, t);
		return;
	}
	trace_line(s->trace, s->start, t, s->off, n, false);
	s->off += n;
	iv->bytes += n;
	if (s->sections)
		iv->on_time_bytes += sec_rx_stream(&s->r->sec_rx,
						   (uint8_t *)buf, n, t);
}

/* Read until the peer closes or a stop: 0, or the errno of a failure. */
static int stream_read(struct stream_rx *s, int fd, char *buf)
{
	while (!stop) {
		struct tl_record rec = { 0 };
		bool gap = false;
		ssize_t n = s->tl ? tltcp_recv(fd, buf, BUF_SIZE, &rec, &gap) :
				    read(fd, buf, BUF_SIZE);
		uint64_t t = now_ns();

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;	/* report what arrived, then fail */
		if (n == 0)
			break;
		stream_got(s, buf, n, &rec, gap, t);
	}
	return 0;
}

/* TCP, TLTCP, SCTP and DCCP: one connection, read until the peer closes. */
void serve_stream(const struct opts *o, struct results *r, int lfd)
{
	struct stream_rx s = { .o = o, .r = r, .tl = o->proto == P_TLTCP };
	char *buf = malloc(BUF_SIZE);
	int fd, err = 0;

	s.trace = trace_open(o);
	if (!buf)
		cli_die("out of memory");
	fd = accept_flow(o, lfd);
	if (fd >= 0) {
		err = stream_read(&s, fd, buf);
		sec_rx_end(&r->sec_rx);
		if (s.tl)
			tltcp_get_info(r, fd);
		close(fd);
		if (r->sec_rx.bad && (s.sections || r->sec_rx.sections))
			fprintf(stderr, "flowgen: sections: the stream lost its framing\n");
	}
	free(buf);
	if (s.trace && fclose(s.trace))
		cli_die("%s: %s", o->trace, strerror(errno));
	report(o, r, "receiver", s.start ? (s.last - s.start) / 1e9 : 0,
	       s.start ? epoch_of(s.start) : 0, NULL);
	if (err)
		cli_die("%s: %s", s.tl ? "recvmsg" : "read", strerror(err));
}

/* The socket's drop count that came with a datagram, if it did. */
static void udp_note_drops(struct results *r, struct msghdr *mh)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SO_RXQ_OVFL &&
		    c->cmsg_len == CMSG_LEN(sizeof(uint32_t)))
			memcpy(&r->udp_rcvbuf_drops, CMSG_DATA(c),
			       sizeof(uint32_t));
}

/* A UDP receiver's state. */
struct udp_rx {
	const struct opts *o;
	struct results *r;
	uint64_t start, last;		/* ns: the first and last datagram */
	uint64_t next_seq;		/* plain flow: the next expected */
};

/* Once the flow started: 1 when a datagram is there, 0 when the sender
 * went quiet (-I), -1 when a signal came (the loop sees a stop).
 */
static int udp_wait(const struct opts *o, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ready = poll(&pfd, 1, o->idle ? (int)(o->idle * 1000) : -1);

	if (ready < 0 && errno == EINTR)
		return -1;
	return ready != 0;
}

/* When the datagram of @mh reached the socket, on the clock of @t (read
 * just after it): the kernel's receive timestamp (SO_TIMESTAMPNS, on
 * CLOCK_REALTIME) moved to CLOCK_MONOTONIC by how long ago it was, or @t
 * without one.  A one-way delay taken at the read counts the time the
 * receiver waited for a CPU too: a mean of 28.2 ms on a 25-ms path in a
 * 6.1 guest beside another (2026-12-07).
 */
static uint64_t udp_arrival(struct msghdr *mh, uint64_t t)
{
	struct timespec now, at;
	struct cmsghdr *c;
	int64_t ago;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_TIMESTAMPNS &&
		    c->cmsg_len == CMSG_LEN(sizeof(at)))
			break;
	if (!c || clock_gettime(CLOCK_REALTIME, &now))
		return t;
	memcpy(&at, CMSG_DATA(c), sizeof(at));
	ago = (int64_t)(now.tv_sec - at.tv_sec) * (int64_t)NSEC_PER_SEC +
	      (now.tv_nsec - at.tv_nsec);
	return ago > 0 && (uint64_t)ago < t ? t - ago : t;
}

/* One datagram into buf, read at *t and arrived at *arrived: its length,
 * or -1 if interrupted.
 */
static ssize_t udp_read(struct results *r, int fd, char *buf, uint64_t *t,
			uint64_t *arrived)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(uint32_t)) +
			 CMSG_SPACE(sizeof(struct timespec))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = BUF_SIZE };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	ssize_t n = recvmsg(fd, &mh, 0);

	*t = now_ns();
	if (n < 0 && errno == EINTR)
		return -1;
	if (n < 0)
		cli_die("recv: %s", strerror(errno));
	udp_note_drops(r, &mh);
	*arrived = udp_arrival(&mh, *t);
	return n;
}

/* A datagram of the plain flow: losses by sequence, one-way delay (to
 * when it reached the socket, t).
 */
static void udp_got_plain(struct udp_rx *u, struct interval *iv,
			  const struct udp_hdr *h, uint64_t t)
{
	uint64_t seq = be64toh(h->seq);

	if (seq >= u->next_seq) {
		iv->lost += seq - u->next_seq;
		u->next_seq = seq + 1;
	}
	iv->owd_sum += (double)(t - be64toh(h->sent_ns)) / 1e9;
}

/* n bytes read at time t, which reached the socket at @arrived: false
 * once the flow's END came.  Sections count bytes on time as the TCP
 * transports' reader does, at the read; the plain flow's one-way delay
 * runs to the arrival.
 */
static bool udp_got(struct udp_rx *u, const char *buf, ssize_t n, uint64_t t,
		    uint64_t arrived)
{
	struct interval *iv;
	struct sec_hdr sh;
	struct udp_hdr h;
	bool section;

	/* a datagram of a section, or of a plain flow */
	section = sec_hdr_get(buf, n, &sh) && sh.len <= n;
	if (!section) {
		if (n < (ssize_t)sizeof(h))
			return true;
		memcpy(&h, buf, sizeof(h));
		if (ntohl(h.magic) != UDP_MAGIC)
			return true;
		if (ntohl(h.flags) & UDP_END)
			return !u->start;
	}
	if (!u->start)
		u->start = t;
	u->last = t;
	iv = interval_at(u->r, u->start, t, u->o->interval);
	iv->bytes += n;
	iv->pkts++;
	if (section)
		iv->on_time_bytes += sec_rx_datagram(&u->r->sec_rx, &sh, t);
	else
		udp_got_plain(u, iv, &h, arrived);
	return true;
}

void serve_udp(const struct opts *o, struct results *r, int fd)
{
	struct udp_rx u = { .o = o, .r = r };
	char *buf = malloc(BUF_SIZE);
	uint64_t t, arrived;
	int one = 1, ready;
	ssize_t n;

	if (!buf)
		cli_die("out of memory");
	/* Losses the receiver itself caused (a reader too slow for its
	 * socket buffer) are not the network's: count them apart.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)))
		cli_die("SO_RXQ_OVFL: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)))
		cli_die("SO_TIMESTAMPNS: %s", strerror(errno));
	while (!stop) {
		ready = u.start ? udp_wait(o, fd) : 1;
		if (ready < 0)
			continue;
		if (!ready)
			break;
		n = udp_read(r, fd, buf, &t, &arrived);
		if (n >= 0 && !udp_got(&u, buf, n, t, arrived))
			break;
	}
	free(buf);
	report(o, r, "receiver", u.start ? (u.last - u.start) / 1e9 : 0,
	       u.start ? epoch_of(u.start) : 0, NULL);
}
