// SPDX-License-Identifier: GPL-2.0
/*
 * The tunnel's connection: its transports, its wire format and its
 * bounded send queue (Documentation/tsm.rst, "Tunnel").
 *
 * Every message is a 12-byte header, the address (4 or 16 bytes) and the
 * payload, one UDP datagram:
 *
 *	0 version (1)  1 type (1: data)  2 family (4 or 6)  3 zero
 *	4 flow id (32 bits)  8 port (16 bits)  10 payload length (16 bits)
 *
 * Over DCCP a message is one DCCP datagram; over TCP the header's length
 * delimits it in the stream; over TLTCP it is one section, abandoned whole
 * when its lifetime passes.
 *
 * The queue never holds more than qmax messages waiting for the
 * transport.  DCCP counts them itself: DCCP_SOCKOPT_QPOLICY_TXQLEN = qmax,
 * and a non-blocking sendmsg() fails with EAGAIN while the CCID's queue
 * holds that many (net/dccp/proto.c, dccp_sendmsg()).  Over TCP and TLTCP
 * the kernel is kept to one message not yet sent (TCP_NOTSENT_LOWAT 1:
 * writable only when nothing is unsent; TL_SNDQ_LIMIT 1: the module
 * admits a section only into an empty queue), and the other qmax - 1 wait
 * here.  What does not fit is dropped and counted.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dccp.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <linux/tltcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "internal.h"
#include "tltcp_msg.h"
#include "tunnel.h"

#ifndef SOL_DCCP
#define SOL_DCCP	269
#endif

struct tun_frame {
	uint64_t t_ns;		/* when it was queued */
	size_t payload;		/* payload bytes, for the counters */
	size_t len;
	char buf[];
};

/* DCCP (CCID 3 or 2), TCP or TLTCP by name: false if s is none of them. */
static bool named_transport(const char *s, uint64_t lifetime_ns,
			    struct tun_transport *tp)
{
	if (!strcmp(s, "dccp") || !strcmp(s, "dccp-ccid3") ||
	    !strcmp(s, "dccp-ccid2")) {
		tp->kind = TUN_DCCP;
		tp->ch.transport = TSM_DCCP;
		tp->ch.ccid = strcmp(s, "dccp-ccid2") ? 3 : 2;
		snprintf(tp->ch.why, sizeof(tp->ch.why), "DCCP: CCID %d%s",
			 tp->ch.ccid, tp->ch.ccid == 3 ? " (TFRC)" :
			 " (TCP-like)");
		return true;
	}
	if (!strcmp(s, "tcp")) {
		tp->kind = TUN_TCP;
		tp->ch.transport = TSM_TCP;
		snprintf(tp->ch.why, sizeof(tp->ch.why),
			 "TCP: kernel default congestion control");
		return true;
	}
	if (!strcmp(s, "tltcp")) {
		tp->kind = TUN_TLTCP;
		tp->lifetime_ns = lifetime_ns;
		tp->ch.transport = TSM_TLTCP;
		tp->ch.deadline_ns = lifetime_ns;
		snprintf(tp->ch.why, sizeof(tp->ch.why),
			 "TLTCP: each datagram a section with a %llu ms lifetime",
			 (unsigned long long)(lifetime_ns / 1000000));
		return true;
	}
	return false;
}

/*
 * MulTFRC with weight n, chosen as the library would.  The library's
 * Table 3 names the algorithm and its fallbacks: a weight other than 1
 * gives MulTFRC(n) by C1, Constant-Rate Streaming MulTFRC(1) by C5.  A
 * fallback away from MulTFRC is an error here: the user asked for it by
 * name.
 */
static int multfrc_transport(const char *s, double n,
			     struct tun_transport *tp, struct tsm_error *err)
{
	struct tsm_policy pol;
	struct tsm_offer off;
	struct tsm_req req;
	int ret;

	tsm_req_init(&req);
	req.weight = n;
	req.profile = TSM_PROF_CONSTANT_RATE;
	ret = tsm_check_req(&req, err);
	if (!ret)
		ret = tsm_policy_load(NULL, &pol, err);
	if (!ret)
		ret = tsm_probe(&off, err);
	if (!ret)
		ret = tsm_select(&req, &pol, &off, &tp->ch, err);
	if (ret)
		return ret;
	if (tp->ch.transport != TSM_TCP || strncmp(tp->ch.cc, "multfrc", 7))
		return tsm_err(err, EPROTONOSUPPORT,
			       "transport '%s': MulTFRC not available (%s); modprobe tcp_multfrc instances=%g",
			       s, tp->ch.why, n);
	tp->kind = TUN_TCP;
	return 0;
}

int tun_transport_parse(const char *s, uint64_t lifetime_ns,
			struct tun_transport *tp, struct tsm_error *err)
{
	char *end;
	double n;

	memset(tp, 0, sizeof(*tp));
	snprintf(tp->name, sizeof(tp->name), "%s", s);
	if (named_transport(s, lifetime_ns, tp))
		return 0;
	if (strncmp(s, "multfrc", 7) || (s[7] && s[7] != ':'))
		return tsm_err(err, EINVAL,
			       "unknown transport '%s' (dccp-ccid3, dccp-ccid2, tltcp, multfrc[:N], tcp)",
			       s);
	n = 1;
	if (s[7]) {
		errno = 0;
		n = strtod(s + 8, &end);
		if (end == s + 8 || *end || errno)
			return tsm_err(err, EINVAL,
				       "transport '%s': '%s' is not a number",
				       s, s + 8);
	}
	return multfrc_transport(s, n, tp, err);
}

int tun_transport_default(uint64_t lifetime_ns, struct tun_transport *tp,
			  struct tsm_error *err)
{
	struct tsm_policy pol;
	struct tsm_offer off;
	struct tsm_req req;
	const char *absent;
	char sock[48];
	int ret;

	memset(err, 0, sizeof(*err));
	ret = tsm_probe(&off, err);
	if (ret)
		return ret;
	/* Loadable: as before, the connection says "modprobe dccp_ipv4". */
	if ((off.dccp == TSM_LOADED && off.ccid[3]) ||
	    off.dccp == TSM_LOADABLE)
		return tun_transport_parse("dccp-ccid3", lifetime_ns, tp, err);
	/*
	 * The library's Table 3 for Constant-Rate Streaming: MulTFRC with
	 * n = 1, TFRC's equation, and reno where it cannot be had (never a
	 * more aggressive algorithm).  Over TCP the queue stays bounded as
	 * over DCCP: the kernel holds one unsent datagram (TCP_NOTSENT_LOWAT),
	 * --queue counts the rest, and what does not fit is dropped.
	 */
	tsm_req_init(&req);
	req.profile = TSM_PROF_CONSTANT_RATE;
	ret = tsm_policy_load(NULL, &pol, err);
	if (!ret)
		ret = tsm_select_cc(&req, &pol, &off, &tp->ch, err);
	if (ret)
		return ret;
	memset(tp->name, 0, sizeof(tp->name));
	snprintf(tp->name, sizeof(tp->name), "%s",
		 strncmp(tp->ch.cc, "multfrc", 7) ? "tcp" : "multfrc");
	tp->kind = TUN_TCP;
	tp->lifetime_ns = 0;
	absent = off.dccp != TSM_LOADED ? "DCCP not in this kernel" :
		 "DCCP has no CCID 3";
	snprintf(sock, sizeof(sock), " (socket: %s)",
		 strerrorname_np(off.dccp_err) ?: "?");
	if (tp->name[0] == 'm')
		tsm_err(err, 0, "%s%s: over TCP with TFRC's equation (MulTFRC, n = 1) instead, the same bounded queue",
			absent, off.dccp_err ? sock : "");
	else
		tsm_err(err, 0, "%s%s: over TCP with %s instead, the same bounded queue, without TFRC's smooth rate (no MulTFRC: modprobe tcp_multfrc)",
			absent, off.dccp_err ? sock : "", tp->ch.cc);
	return 0;
}

static int sopt_u32(int fd, int level, int name, uint32_t v, const char *what,
		    struct tsm_error *err)
{
	if (!setsockopt(fd, level, name, &v, sizeof(v)))
		return 0;
	return tsm_err(err, errno, "%s: %s", what, strerror(errno));
}

int tun_conn_init(struct tun_conn *c, int fd, const struct tun_transport *tp,
		  unsigned int qmax, struct tun_stats *st,
		  struct tsm_error *err)
{
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->tp = tp;
	c->st = st;
	c->qmax = qmax;
	if (fcntl(fd, F_SETFL, O_NONBLOCK))
		return tsm_err(err, errno, "O_NONBLOCK: %s", strerror(errno));
	switch (tp->kind) {
	case TUN_DCCP:
		ret = sopt_u32(fd, SOL_DCCP, DCCP_SOCKOPT_QPOLICY_TXQLEN, qmax,
			       "DCCP_SOCKOPT_QPOLICY_TXQLEN", err);
		break;
	case TUN_TCP:
		ret = sopt_u32(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, 1,
			       "TCP_NOTSENT_LOWAT", err);
		if (!ret)
			ret = sopt_u32(fd, IPPROTO_TCP, TCP_NODELAY, 1,
				       "TCP_NODELAY", err);
		break;
	case TUN_TLTCP:
		ret = sopt_u32(fd, SOL_TLTCP, TL_SNDQ_LIMIT, 1,
			       "TL_SNDQ_LIMIT", err);
		if (!ret)
			ret = sopt_u32(fd, IPPROTO_TCP, TCP_NODELAY, 1,
				       "TCP_NODELAY", err);
		break;
	}
	if (ret)
		return ret;
	c->q = calloc(qmax, sizeof(*c->q));
	c->rbuf = malloc(2 * TUN_MAX_FRAME);
	if (!c->q || !c->rbuf) {
		free(c->q);
		free(c->rbuf);
		return tsm_err(err, ENOMEM, "out of memory");
	}
	return 0;
}

static struct tun_frame *q_head(const struct tun_conn *c)
{
	return c->q[c->qhead];
}

static void q_pop(struct tun_conn *c)
{
	free(c->q[c->qhead]);
	c->q[c->qhead] = NULL;
	c->qhead = (c->qhead + 1) % c->qmax;
	c->qlen--;
	c->out_off = 0;
	c->st->queued--;
}

void tun_conn_close(struct tun_conn *c)
{
	while (c->qlen) {
		tun_count_add(&c->st->drop_disc, q_head(c)->payload);
		q_pop(c);
	}
	free(c->q);
	free(c->rbuf);
	c->q = NULL;
	c->rbuf = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

bool tun_conn_pending(const struct tun_conn *c)
{
	return c->qlen > 0;
}

/* Encodes m into buf (TUN_MAX_FRAME bytes); the frame's length. */
static size_t encode(const struct tun_msg *m, unsigned char *buf)
{
	const struct sockaddr_in6 *s6 = (const void *)&m->addr;
	const struct sockaddr_in *s4 = (const void *)&m->addr;
	uint32_t flow = htonl(m->flow);
	uint16_t port, len = htons(m->len);
	size_t alen;

	buf[0] = TUN_VERSION;
	buf[1] = TUN_T_DATA;
	buf[3] = 0;
	if (m->addr.ss_family == AF_INET6) {
		buf[2] = 6;
		port = s6->sin6_port;
		alen = 16;
		memcpy(buf + TUN_HDR_LEN, &s6->sin6_addr, alen);
	} else {
		buf[2] = 4;
		port = s4->sin_port;
		alen = 4;
		memcpy(buf + TUN_HDR_LEN, &s4->sin_addr, alen);
	}
	memcpy(buf + 4, &flow, 4);
	memcpy(buf + 8, &port, 2);
	memcpy(buf + 10, &len, 2);
	memcpy(buf + TUN_HDR_LEN + alen, m->data, m->len);
	return TUN_HDR_LEN + alen + m->len;
}

/* The frame's length if buf holds a whole one, 0 if not yet, -1 if bad. */
static ssize_t decode(const unsigned char *buf, size_t n, struct tun_msg *m)
{
	struct sockaddr_in6 *s6 = (void *)&m->addr;
	struct sockaddr_in *s4 = (void *)&m->addr;
	uint16_t port, len;
	uint32_t flow;
	size_t alen;

	if (n < TUN_HDR_LEN)
		return 0;
	if (buf[0] != TUN_VERSION || buf[1] != TUN_T_DATA ||
	    (buf[2] != 4 && buf[2] != 6))
		return -1;
	alen = buf[2] == 4 ? 4 : 16;
	memcpy(&flow, buf + 4, 4);
	memcpy(&port, buf + 8, 2);
	memcpy(&len, buf + 10, 2);
	if (n < TUN_HDR_LEN + alen + ntohs(len))
		return 0;
	memset(&m->addr, 0, sizeof(m->addr));
	if (alen == 4) {
		s4->sin_family = AF_INET;
		s4->sin_port = port;
		memcpy(&s4->sin_addr, buf + TUN_HDR_LEN, 4);
	} else {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = port;
		memcpy(&s6->sin6_addr, buf + TUN_HDR_LEN, 16);
	}
	m->flow = ntohl(flow);
	m->data = buf + TUN_HDR_LEN + alen;
	m->len = ntohs(len);
	return TUN_HDR_LEN + alen + m->len;
}

/* TCP: the kernel holds bytes not yet sent (one message at most). */
static bool tcp_busy(int fd)
{
	int unsent = 0;

	return !ioctl(fd, SIOCOUTQNSD, &unsent) && unsent > 0;
}

/*
 * One attempt to hand the head of the queue (or buf) to the kernel: the
 * bytes written, 0 if the transport takes nothing now, -errno if broken.
 */
static ssize_t hand(struct tun_conn *c, const char *buf, size_t len)
{
	ssize_t n;

	if (c->tp->kind == TUN_TCP && !c->out_off && tcp_busy(c->fd))
		return 0;
	n = tsm_send_once(c->fd, &c->tp->ch, buf, len, MSG_DONTWAIT);
	if (n >= 0)
		return n;
	if (errno == EAGAIN || errno == ENOBUFS)
		return 0;
	return -errno;
}

static int enqueue(struct tun_conn *c, const unsigned char *buf, size_t len,
		   size_t payload, size_t done)
{
	struct tun_frame *f = malloc(sizeof(*f) + len);

	if (!f) {
		tun_count_add(&c->st->drop_other, payload);
		return TUN_DROPPED;
	}
	f->t_ns = now_ns();
	f->payload = payload;
	f->len = len;
	memcpy(f->buf, buf, len);
	c->q[(c->qhead + c->qlen) % c->qmax] = f;
	c->qlen++;
	c->st->queued++;
	if (done)
		c->out_off = done;
	return TUN_QUEUED;
}

int tun_conn_send(struct tun_conn *c, const struct tun_msg *m)
{
	static unsigned char buf[TUN_MAX_FRAME];
	size_t len;
	ssize_t n;

	if (m->len > TUN_MAX_PAYLOAD) {
		tun_count_add(&c->st->drop_other, m->len);
		return TUN_DROPPED;
	}
	len = encode(m, buf);
	if (c->tp->kind == TUN_DCCP) {
		n = send(c->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n >= 0) {
			tun_count_add(&c->st->to_tunnel, m->len);
			return TUN_SENT;
		}
		if (errno == EAGAIN || errno == ENOBUFS) {
			tun_count_add(&c->st->drop_full, m->len);
			return TUN_DROPPED;
		}
		if (errno == EMSGSIZE) {
			tun_count_add(&c->st->drop_other, m->len);
			return TUN_DROPPED;
		}
		tun_count_add(&c->st->drop_disc, m->len);
		return -errno;
	}
	if (!c->qlen) {
		n = hand(c, (const char *)buf, len);
		if (n < 0) {
			tun_count_add(&c->st->drop_disc, m->len);
			return n;
		}
		if ((size_t)n == len) {
			tun_count_add(&c->st->to_tunnel, m->len);
			return TUN_SENT;
		}
		if (n > 0)	/* the rest must follow: it has a slot */
			return enqueue(c, buf, len, m->len, n);
	}
	/* The kernel holds one message; qmax - 1 more may wait here. */
	if (c->qlen + 1 >= c->qmax) {
		tun_count_add(&c->st->drop_full, m->len);
		return TUN_DROPPED;
	}
	return enqueue(c, buf, len, m->len, 0);
}

int tun_conn_flush(struct tun_conn *c)
{
	struct tun_frame *f;
	uint64_t now = now_ns();
	ssize_t n;

	while (c->qlen) {
		f = q_head(c);
		if (c->tp->kind == TUN_TLTCP && !c->out_off &&
		    now - f->t_ns > c->tp->lifetime_ns) {
			tun_count_add(&c->st->drop_expired, f->payload);
			q_pop(c);
			continue;
		}
		n = hand(c, f->buf + c->out_off, f->len - c->out_off);
		if (n < 0)
			return n;
		if (!n)
			break;
		c->out_off += n;
		if (c->out_off < f->len)
			break;
		tun_count_add(&c->st->to_tunnel, f->payload);
		q_pop(c);
	}
	return 0;
}

static void deliver_one(struct tun_conn *c, const unsigned char *buf,
			size_t n,
			void (*deliver)(void *arg, const struct tun_msg *m),
			void *arg)
{
	struct tun_msg m;

	if (decode(buf, n, &m) != (ssize_t)n) {
		tun_count_add(&c->st->drop_other, n);
		return;
	}
	tun_count_add(&c->st->from_tunnel, m.len);
	deliver(arg, &m);
}

static int recv_dccp(struct tun_conn *c,
		     void (*deliver)(void *arg, const struct tun_msg *m),
		     void *arg)
{
	ssize_t n;
	int i;

	for (i = 0; i < 64; i++) {
		n = recv(c->fd, c->rbuf, TUN_MAX_FRAME, MSG_DONTWAIT);
		if (!n)
			return -EPIPE;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		deliver_one(c, (unsigned char *)c->rbuf, n, deliver, arg);
	}
	return 0;
}

static int recv_tcp(struct tun_conn *c,
		    void (*deliver)(void *arg, const struct tun_msg *m),
		    void *arg)
{
	struct tun_msg m;
	size_t off = 0;
	ssize_t n, f;

	n = recv(c->fd, c->rbuf + c->rlen, 2 * TUN_MAX_FRAME - c->rlen,
		 MSG_DONTWAIT);
	if (!n)
		return -EPIPE;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	c->rlen += n;
	while ((f = decode((unsigned char *)c->rbuf + off, c->rlen - off,
			   &m)) > 0) {
		tun_count_add(&c->st->from_tunnel, m.len);
		deliver(arg, &m);
		off += f;
	}
	if (f < 0)
		return -EPROTO;
	memmove(c->rbuf, c->rbuf + off, c->rlen - off);
	c->rlen -= off;
	return 0;
}

/*
 * TLTCP: pieces of sections, or gaps; a gap runs to its section's end, so
 * a section is a whole message or an abandoned one.
 */
static int recv_tltcp(struct tun_conn *c,
		      void (*deliver)(void *arg, const struct tun_msg *m),
		      void *arg)
{
	union {
		char buf[TL_RECORD_SPACE];
		struct cmsghdr align;
	} cb;
	const size_t cap = 2 * TUN_MAX_FRAME;
	struct tl_record rec;
	struct msghdr msg;
	struct iovec iov;
	int i, type;
	bool full;
	ssize_t n;

	for (i = 0; i < 64; i++) {
		full = c->sec_len >= cap;
		iov.iov_base = c->rbuf + (full ? 0 : c->sec_len);
		iov.iov_len = full ? cap : cap - c->sec_len;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cb.buf;
		msg.msg_controllen = sizeof(cb.buf);
		n = recvmsg(c->fd, &msg, MSG_TL | MSG_DONTWAIT);
		if (!n)
			return -EPIPE;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (!tl_records(&msg, &rec, &type))
			return -EPROTO;
		if (type == TL_GAP || full ||
		    rec.sec_off != c->sec_len)
			c->sec_gap = true;
		if (!full)
			c->sec_len += n;
		if (!(rec.flags & TL_REC_SECTION_END))
			continue;
		if (c->sec_gap)
			tun_count_add(&c->st->abandoned, rec.sec_len);
		else
			deliver_one(c, (unsigned char *)c->rbuf, c->sec_len,
				    deliver, arg);
		c->sec_gap = false;
		c->sec_len = 0;
	}
	return 0;
}

int tun_conn_recv(struct tun_conn *c,
		  void (*deliver)(void *arg, const struct tun_msg *m),
		  void *arg)
{
	switch (c->tp->kind) {
	case TUN_DCCP:
		return recv_dccp(c, deliver, arg);
	case TUN_TCP:
		return recv_tcp(c, deliver, arg);
	default:
		return recv_tltcp(c, deliver, arg);
	}
}
