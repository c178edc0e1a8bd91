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
		char buf[CMSG_SPACE(sizeof(struct tl_record))];
		struct cmsghdr align;
	} cb;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cb.buf, .msg_controllen = sizeof(cb.buf),
	};
	struct cmsghdr *c;
	ssize_t n = recvmsg(fd, &msg, MSG_TL);

	if (n <= 0)
		return n;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_TLTCP ||
		    (c->cmsg_type != TL_DATA && c->cmsg_type != TL_GAP) ||
		    c->cmsg_len < CMSG_LEN(sizeof(*rec)))
			continue;
		memcpy(rec, CMSG_DATA(c), sizeof(*rec));
		*gap = c->cmsg_type == TL_GAP;
		return n;
	}
	errno = EBADMSG;	/* every MSG_TL read carries its record */
	return -1;
}

/* TCP, TLTCP, SCTP and DCCP: one connection, read until the peer closes. */
void serve_stream(const struct opts *o, struct results *r, int lfd)
{
	char *buf = malloc(BUF_SIZE);
	uint64_t start = 0, last = 0, off = 0;
	bool sections = false, tl = o->proto == P_TLTCP;
	FILE *trace = trace_open(o);
	struct interval *iv;
	int fd, err = 0;

	if (!buf)
		cli_die("out of memory");
	do {
		fd = accept(lfd, NULL, NULL);
	} while (fd < 0 && errno == EINTR && !stop);
	if (fd < 0 && stop)
		goto out;
	if (fd < 0)
		cli_die("accept: %s", strerror(errno));
	if (o->window)
		set_window_clamp(o, fd);
	if (tl)
		tltcp_attach(fd);
	while (!stop) {
		struct tl_record rec = { 0 };
		bool gap = false;
		ssize_t n = tl ? tltcp_recv(fd, buf, BUF_SIZE, &rec, &gap) :
				 read(fd, buf, BUF_SIZE);
		uint64_t t = now_ns();

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;	/* report what arrived, then fail */
			break;
		}
		if (n == 0)
			break;
		if (!start) {
			start = t;
			/* Sections announce themselves in their first bytes
			 * (over TLTCP, sec_rx_tl() reads every record).
			 */
			sections = !tl && n >= 4 &&
				   ntohl(*(uint32_t *)buf) == SEC_MAGIC;
		}
		last = t;
		iv = interval_at(r, start, t, o->interval);
		if (tl) {
			off = rec.stream_off;
			trace_line(trace, start, t, off, n, gap);
			if (gap)
				iv->gap_bytes += n;
			else
				iv->bytes += n;
			iv->on_time_bytes += sec_rx_tl(&r->sec_rx, rec.section,
						       rec.sec_off,
						       gap ? NULL : (uint8_t *)buf,
						       n, t);
			continue;
		}
		trace_line(trace, start, t, off, n, false);
		off += n;
		iv->bytes += n;
		if (sections)
			iv->on_time_bytes += sec_rx_stream(&r->sec_rx,
							   (uint8_t *)buf, n, t);
	}
	sec_rx_end(&r->sec_rx);
	if (tl)
		tltcp_get_info(r, fd);
	close(fd);
	if (r->sec_rx.bad && (sections || r->sec_rx.sections))
		fprintf(stderr, "flowgen: sections: the stream lost its framing\n");
out:
	free(buf);
	if (trace && fclose(trace))
		cli_die("%s: %s", o->trace, strerror(errno));
	report(o, r, "receiver", start ? (last - start) / 1e9 : 0,
	       start ? epoch_of(start) : 0, NULL);
	if (err)
		cli_die("%s: %s", tl ? "recvmsg" : "read", strerror(err));
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

void serve_udp(const struct opts *o, struct results *r, int fd)
{
	char *buf = malloc(BUF_SIZE);
	uint64_t start = 0, last = 0, next_seq = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(uint32_t))];
	} ctl;
	int one = 1;

	if (!buf)
		cli_die("out of memory");
	/* Losses the receiver itself caused (a reader too slow for its
	 * socket buffer) are not the network's: count them apart.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)))
		cli_die("SO_RXQ_OVFL: %s", strerror(errno));
	while (!stop) {
		struct iovec iov = { .iov_base = buf, .iov_len = BUF_SIZE };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.buf,
			.msg_controllen = sizeof(ctl.buf),
		};
		struct sec_hdr sh;
		struct udp_hdr h;
		struct interval *iv;
		bool section;
		uint64_t t, seq;
		ssize_t n;

		if (start) {
			int ready = poll(&pfd, 1, o->idle ?
						 (int)(o->idle * 1000) : -1);

			if (ready < 0 && errno == EINTR)
				continue;	/* the loop sees a stop */
			if (ready == 0)
				break;		/* the sender went quiet */
		}
		n = recvmsg(fd, &mh, 0);
		t = now_ns();
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			cli_die("recv: %s", strerror(errno));
		udp_note_drops(r, &mh);
		/* a datagram of a section, or of a plain flow */
		section = sec_hdr_get(buf, n, &sh) && sh.len <= n;
		if (!section) {
			if (n < (ssize_t)sizeof(h))
				continue;
			memcpy(&h, buf, sizeof(h));
			if (ntohl(h.magic) != UDP_MAGIC)
				continue;
			if (ntohl(h.flags) & UDP_END) {
				if (start)
					break;
				continue;
			}
		}
		if (!start)
			start = t;
		last = t;
		iv = interval_at(r, start, t, o->interval);
		iv->bytes += n;
		iv->pkts++;
		if (section) {
			iv->on_time_bytes += sec_rx_datagram(&r->sec_rx, &sh, t);
			continue;
		}
		seq = be64toh(h.seq);
		if (seq >= next_seq) {
			iv->lost += seq - next_seq;
			next_seq = seq + 1;
		}
		iv->owd_sum += (double)(t - be64toh(h.sent_ns)) / 1e9;
	}
	free(buf);
	report(o, r, "receiver", start ? (last - start) / 1e9 : 0,
	       start ? epoch_of(start) : 0, NULL);
}
