// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets of the chosen transport, tuned as the choice says.  Options a
 * transport negotiates at connection setup (congestion control, DCCP
 * service code and CCID, PR-SCTP support) are set before connect() and
 * listen(); the tltcp ULP can only be attached to a connected socket, so
 * it is attached after connect() and after accept().
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/dccp.h>
#include <linux/sctp.h>
#include <linux/tcp.h>
#include <linux/tltcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "tltcp_msg.h"

#ifndef SOCK_DCCP
#define SOCK_DCCP	6
#endif
#ifndef SOL_DCCP
#define SOL_DCCP	269
#endif
#ifndef SO_MAX_PACING_RATE
#define SO_MAX_PACING_RATE	47
#endif

/* DCCP service code of tsm connections: both ends must agree. */
#define TSM_DCCP_SERVICE	0x54534d31u	/* "TSM1" */

static int sock_type(const struct tsm_choice *ch, int *type, int *proto)
{
	switch (ch->transport) {
	case TSM_TCP:
	case TSM_TLTCP:
		*type = SOCK_STREAM;
		*proto = IPPROTO_TCP;
		return 0;
	case TSM_SCTP:
		*type = SOCK_STREAM;	/* one-to-one style */
		*proto = IPPROTO_SCTP;
		return 0;
	case TSM_DCCP:
		*type = SOCK_DCCP;
		*proto = IPPROTO_DCCP;
		return 0;
	default:
		return -EINVAL;
	}
}

static int sopt(int fd, int level, int name, const void *v, socklen_t len,
		const char *what, struct tsm_error *err)
{
	if (!setsockopt(fd, level, name, v, len))
		return 0;
	return tsm_err(err, errno, "%s: %s", what, strerror(errno));
}

static int cc_error(const struct tsm_choice *ch, struct tsm_error *err)
{
	int e = errno;
	const char *hint = e == EPERM ?
		" (not in tcp_allowed_congestion_control)" :
		e == ENOENT ? " (not available)" : "";

	return tsm_err(err, e, "congestion control %s: %s%s", ch->cc,
		       strerror(e), hint);
}

/* What must be in place before the handshake. */
static int tune_before(int fd, const struct tsm_choice *ch,
		       struct tsm_error *err)
{
	uint32_t service = htonl(TSM_DCCP_SERVICE), rate;
	struct sctp_assoc_value on = { .assoc_value = 1 };
	struct sctp_default_prinfo pr = { 0 };
	struct sctp_sndinfo snd = { 0 };
	uint8_t ccid = ch->ccid;
	int one = 1, ret = 0;

	switch (ch->transport) {
	case TSM_TCP:
	case TSM_TLTCP:
		if (ch->cc[0] &&
		    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, ch->cc,
			       strlen(ch->cc)))
			return cc_error(ch, err);
		if (ch->nodelay)
			ret = sopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one), "TCP_NODELAY", err);
		if (!ret && ch->max_pacing_rate) {
			/* A 32-bit value is accepted by every kernel. */
			rate = ch->max_pacing_rate > UINT32_MAX - 1 ?
			       UINT32_MAX - 1 : ch->max_pacing_rate;
			ret = sopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate,
				   sizeof(rate), "SO_MAX_PACING_RATE", err);
		}
		return ret;
	case TSM_SCTP:
		if (ch->pr_policy != TSM_PR_OFF) {
			ret = sopt(fd, IPPROTO_SCTP, SCTP_PR_SUPPORTED, &on,
				   sizeof(on), "SCTP_PR_SUPPORTED", err);
			pr.pr_policy = ch->pr_policy == TSM_PR_TTL ?
				       SCTP_PR_SCTP_TTL : SCTP_PR_SCTP_RTX;
			pr.pr_value = ch->pr_value;
			if (!ret)
				ret = sopt(fd, IPPROTO_SCTP,
					   SCTP_DEFAULT_PRINFO, &pr, sizeof(pr),
					   "SCTP_DEFAULT_PRINFO", err);
		}
		if (!ret && ch->unordered) {
			snd.snd_flags = SCTP_UNORDERED;
			ret = sopt(fd, IPPROTO_SCTP, SCTP_DEFAULT_SNDINFO, &snd,
				   sizeof(snd), "SCTP_DEFAULT_SNDINFO", err);
		}
		return ret;
	case TSM_DCCP:
		ret = sopt(fd, SOL_DCCP, DCCP_SOCKOPT_SERVICE, &service,
			   sizeof(service), "DCCP service code", err);
		if (!ret)
			ret = sopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID, &ccid, 1,
				   "DCCP CCID", err);
		return ret;
	default:
		return tsm_err(err, EINVAL, "no transport chosen");
	}
}

/* What needs an established connection. */
static int tune_after(int fd, const struct tsm_choice *ch,
		      struct tsm_error *err)
{
	uint64_t dl = ch->deadline_ns;

	if (ch->transport != TSM_TLTCP)
		return 0;
	if (tl_attach(fd))
		return tsm_err(err, errno, "TCP_ULP tltcp: %s%s",
			       strerror(errno), errno == ENOENT ?
			       " (modprobe tltcp)" : "");
	if (dl)
		return sopt(fd, SOL_TLTCP, TL_DEFAULT_DEADLINE, &dl,
			    sizeof(dl), "TL_DEFAULT_DEADLINE", err);
	return 0;
}

enum open_mode {
	OPEN_CONNECT,
	OPEN_LISTEN,
	OPEN_CONNECT_NB,	/* non-blocking, first address only */
};

/*
 * Tries each address: listens, connects, or starts a non-blocking connect
 * (whose tuning after the handshake is left to tsm_connect_finish()).
 */
static int open_one(const char *host, const char *port,
		    const struct tsm_choice *ch, enum open_mode mode,
		    struct tsm_error *err)
{
	bool server = mode == OPEN_LISTEN;
	struct addrinfo hints = { .ai_family = AF_UNSPEC }, *res, *ai;
	int fd = -1, type, proto, ret, one = 1;

	if (sock_type(ch, &type, &proto))
		return tsm_err(err, EINVAL, "no transport chosen");
	hints.ai_socktype = type;
	hints.ai_protocol = proto;
	if (server)
		hints.ai_flags = AI_PASSIVE;
	/* getaddrinfo knows no SOCK_DCCP: resolve as TCP, create as DCCP. */
	if (ch->transport == TSM_DCCP) {
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_protocol = 0;
	}
	ret = getaddrinfo(host, port, &hints, &res);
	if (ret)
		return tsm_err(err, EINVAL, "%s port %s: %s", host ? host : "*",
			       port, gai_strerror(ret));
	ret = tsm_err(err, EADDRNOTAVAIL, "%s: no address", host ? host : "*");
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, type, proto);
		if (fd < 0) {
			ret = tsm_err(err, errno, "%s socket: %s",
				      tsm_transport_name(ch->transport),
				      strerror(errno));
			continue;
		}
		ret = tune_before(fd, ch, err);
		if (!ret && server) {
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				   sizeof(one));
			if (bind(fd, ai->ai_addr, ai->ai_addrlen) ||
			    listen(fd, 16))
				ret = tsm_err(err, errno, "bind/listen: %s",
					      strerror(errno));
		} else if (!ret && mode == OPEN_CONNECT_NB) {
			if (fcntl(fd, F_SETFL, O_NONBLOCK) ||
			    (connect(fd, ai->ai_addr, ai->ai_addrlen) &&
			     errno != EINPROGRESS))
				ret = tsm_err(err, errno, "connect: %s",
					      strerror(errno));
			else
				break;
		} else if (!ret) {
			if (connect(fd, ai->ai_addr, ai->ai_addrlen))
				ret = tsm_err(err, errno, "connect: %s",
					      strerror(errno));
			else
				ret = tune_after(fd, ch, err);
		}
		if (!ret)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : ret;
}

int tsm_connect(const char *host, const char *port,
		const struct tsm_choice *ch, struct tsm_error *err)
{
	return open_one(host, port, ch, OPEN_CONNECT, err);
}

int tsm_connect_start(const char *host, const char *port,
		      const struct tsm_choice *ch, struct tsm_error *err)
{
	return open_one(host, port, ch, OPEN_CONNECT_NB, err);
}

int tsm_connect_finish(int fd, const struct tsm_choice *ch,
		       struct tsm_error *err)
{
	socklen_t len = sizeof(int);
	int e = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len))
		e = errno;
	if (e)
		return tsm_err(err, e, "connect: %s", strerror(e));
	return tune_after(fd, ch, err);
}

int tsm_listen(const char *host, const char *port,
	       const struct tsm_choice *ch, struct tsm_error *err)
{
	return open_one(host, port, ch, OPEN_LISTEN, err);
}

int tsm_accept(int lfd, const struct tsm_choice *ch, struct tsm_error *err)
{
	int fd = accept(lfd, NULL, NULL), ret;

	if (fd < 0)
		return tsm_err(err, errno, "accept: %s", strerror(errno));
	/* Congestion control and the rest come from the listener. */
	ret = tune_after(fd, ch, err);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

ssize_t tsm_send_once(int fd, const struct tsm_choice *ch, const void *buf,
		      size_t len, int flags)
{
	if (ch->transport == TSM_TLTCP && ch->deadline_ns)
		return tl_send_section(fd, buf, len, ch->deadline_ns,
				       flags | MSG_NOSIGNAL);
	return send(fd, buf, len, flags | MSG_NOSIGNAL);
}

ssize_t tsm_send(int fd, const struct tsm_choice *ch, const void *buf,
		 size_t len, struct tsm_error *err)
{
	struct timespec pause = { 0, 1000000 };
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		if (ch->transport == TSM_TLTCP && ch->deadline_ns)
			/* One section: abandoned whole after its lifetime. */
			n = tl_send_section(fd, buf, len, ch->deadline_ns, 0);
		else
			n = send(fd, (const char *)buf + done, len - done,
				 MSG_NOSIGNAL);
		/*
		 * Linux refuses a DCCP send while the CCID's queue is full,
		 * even on a blocking socket: the CCID sets the pace.
		 */
		if (n < 0 && errno == EAGAIN && ch->transport == TSM_DCCP) {
			nanosleep(&pause, NULL);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return tsm_err(err, errno, "send: %s", strerror(errno));
		/* Messages go whole or not at all. */
		if (ch->transport != TSM_TCP &&
		    !(ch->transport == TSM_TLTCP && !ch->deadline_ns))
			return n;
		done += n;
	}
	return done;
}

int tsm_close(int fd, const struct tsm_choice *ch, int wait_s)
{
	struct linger lg = { .l_onoff = 1, .l_linger = wait_s };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec t0, t;
	char buf[4096];
	int left_ms;
	ssize_t n;

	/*
	 * dccp_close() flushes the queue only while lingering.  An SCTP
	 * sender that shut down its side is never told by poll() that the
	 * association ended (a one-to-one socket gets RCV_SHUTDOWN only on
	 * the side that receives the SHUTDOWN): it lingers in close(), which
	 * returns once the SHUTDOWN exchange, which follows the
	 * acknowledgement of every DATA chunk, is over.
	 */
	if (ch->transport == TSM_DCCP || ch->transport == TSM_SCTP) {
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		return close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!shutdown(fd, SHUT_WR)) {
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			left_ms = wait_s * 1000 -
				  ((t.tv_sec - t0.tv_sec) * 1000 +
				   (t.tv_nsec - t0.tv_nsec) / 1000000);
			if (left_ms <= 0 || poll(&pfd, 1, left_ms) <= 0)
				break;
			n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN &&
				       errno != EINTR))
				break;
		}
	}
	return close(fd);
}
