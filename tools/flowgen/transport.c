// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen's sockets: each transport opened, tuned and connected (or
 * listening), with a hint when its module is missing, and sampled for what
 * it says about itself (TCP_INFO, CCID 3's TFRC state, PR-SCTP's
 * abandoned messages, TLTCP's TL_INFO).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/dccp.h>
#include <linux/sctp.h>
#include <linux/tcp.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dccp_probe.h"
#include "flowgen.h"
#include "tltcp_msg.h"

static struct addrinfo *resolve(const struct opts *o)
{
	struct addrinfo hints = {
		.ai_family = o->family,
		.ai_socktype = o->proto == P_UDP ? SOCK_DGRAM :
			       o->proto == P_DCCP ? SOCK_DCCP : SOCK_STREAM,
		.ai_protocol = o->proto == P_DCCP ? IPPROTO_DCCP :
			       o->proto == P_SCTP ? IPPROTO_SCTP : 0,
		.ai_flags = o->server ? AI_PASSIVE : 0,
	};
	struct addrinfo *ai;
	int err;

	/* A server without -4 listens on IPv6, which takes IPv4 too. */
	if (o->server && o->family == AF_UNSPEC)
		hints.ai_family = AF_INET6;
	err = getaddrinfo(o->host, o->port, &hints, &ai);
	if (err)
		cli_die("%s: %s", o->host ? o->host : "listen address",
			gai_strerror(err));
	return ai;
}

/* The module is there: attaching it to an unconnected socket fails with
 * ENOTCONN if so, ENOENT if not (TCP_ULP loads it only for root).
 */
static void tltcp_probe(int fd)
{
	if (tl_attach(fd) && errno == ENOENT)
		cli_die("tltcp not available: modprobe tltcp");
}

/*
 * -P dccp where a DCCP socket does not open: refused, saying why: the
 * module is not loaded (socket() does not load it), or the kernel has
 * none (no module file: Linux removed DCCP in 6.16).
 */
void dccp_require(int family)
{
	int err = dccp_probe(family);

	if (err && dccp_errno_absent(err) && dccp_module_file())
		cli_die("DCCP not available: modprobe %s",
			family == AF_INET6 ? "dccp_ipv6" : "dccp_ipv4");
	if (err && dccp_errno_absent(err))
		cli_die("-P dccp: DCCP is not in this kernel (socket: %s; Linux removed it in 6.16): for TFRC's equation over TCP use -P tcp -C multfrc",
			strerrorname_np(err) ?: strerror(err));
}

/* socket() for the transport, with a hint when its module is missing. */
static int open_socket(const struct opts *o, int family, int type, int proto)
{
	int fd = socket(family, type, proto);

	if (fd < 0 && o->proto == P_DCCP && dccp_errno_absent(errno))
		dccp_require(family);
	if (fd < 0 && o->proto == P_SCTP &&
	    (errno == ESOCKTNOSUPPORT || errno == EPROTONOSUPPORT))
		cli_die("SCTP not available: modprobe sctp");
	if (fd < 0)
		cli_die("socket: %s", strerror(errno));
	if (o->proto == P_TLTCP)
		tltcp_probe(fd);
	return fd;
}

/* Attach the tltcp ULP to a connected socket, on both ends. */
void tltcp_attach(int fd)
{
	if (tl_attach(fd)) {
		if (errno == ENOENT)
			cli_die("tltcp not available: modprobe tltcp");
		cli_die("TCP_ULP tltcp: %s", strerror(errno));
	}
}

void tltcp_get_info(struct results *r, int fd)
{
	if (!tl_get_info(fd, &r->tl_info))
		r->tl_have_info = true;
}

/* PR-SCTP on, and with -T a lifetime for every message. */
static void sctp_setup(const struct opts *o, int fd)
{
	struct sctp_assoc_value on = { .assoc_value = 1 };
	struct sctp_default_prinfo pr = {
		.pr_policy = SCTP_PR_SCTP_TTL,
		.pr_value = (uint32_t)o->ttl_ms,
	};

	if (setsockopt(fd, IPPROTO_SCTP, SCTP_PR_SUPPORTED, &on, sizeof(on)))
		cli_die("SCTP_PR_SUPPORTED: %s", strerror(errno));
	if (o->ttl_ms && setsockopt(fd, IPPROTO_SCTP, SCTP_DEFAULT_PRINFO, &pr,
				    sizeof(pr)))
		cli_die("SCTP_DEFAULT_PRINFO: %s", strerror(errno));
}

static void dccp_setup(const struct opts *o, int fd)
{
	uint32_t service = htonl(DCCP_SERVICE);
	/* The server accepts either CCID; the client asks for one. */
	uint8_t both[] = { 2, 3 }, one = (uint8_t)o->ccid;

	if (setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_SERVICE, &service,
		       sizeof(service)))
		cli_die("DCCP service code: %s", strerror(errno));
	if (o->server) {
		if (setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID, both,
			       sizeof(both)) &&
		    setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID, both, 1))
			cli_die("DCCP CCIDs: %s", strerror(errno));
	} else if (setsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID, &one, 1)) {
		cli_die("DCCP CCID %d: %s%s", o->ccid, strerror(errno),
			errno == EINVAL ? " (CCID not built into this kernel)" : "");
	}
}

/* -W: the receiver offers at most o->window bytes.  Receive buffer
 * autotuning raises the clamp along with the buffer (6.1's
 * tcp_rcv_space_adjust()) unless the application set the buffer itself,
 * so set it too: twice the window, which SO_RCVBUF doubles again for
 * overhead, leaves room for the segments and keeps the clamp.
 */
void set_window_clamp(const struct opts *o, int fd)
{
	int v = (int)o->window, buf = 2 * v;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf)))
		cli_die("-W %ld: SO_RCVBUF: %s", o->window, strerror(errno));
	if (setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v, sizeof(v)))
		cli_die("-W %ld: %s", o->window, strerror(errno));
}

int open_server(const struct opts *o)
{
	struct addrinfo *ai = resolve(o);
	int fd, one = 1, zero = 0;

	fd = open_socket(o, ai->ai_family, ai->ai_socktype, ai->ai_protocol);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (o->proto == P_DCCP)
		dccp_setup(o, fd);
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	/* On the listener, so that the handshake already offers no more
	 * (and picks its window scale accordingly).
	 */
	if (o->window)
		set_window_clamp(o, fd);
	if (bind(fd, ai->ai_addr, ai->ai_addrlen))
		cli_die("bind port %s: %s", o->port, strerror(errno));
	if (o->proto != P_UDP && listen(fd, 1))
		cli_die("listen: %s", strerror(errno));
	freeaddrinfo(ai);
	return fd;
}

/* -M and -C, before connect(). */
static void tcp_setup(const struct opts *o, int fd)
{
	if (o->mss && setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &o->mss,
				 sizeof(o->mss)))
		cli_die("-M %d: %s", o->mss, strerror(errno));
	if (o->cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->cc,
				strlen(o->cc)))
		cli_die("congestion control '%s': %s%s", o->cc, strerror(errno),
			errno == ENOENT ? " (not built or module not loadable)" :
			errno == EPERM ?
			" (not in net.ipv4.tcp_allowed_congestion_control)" : "");
}

int connect_client(const struct opts *o)
{
	struct addrinfo *ai = resolve(o), *a;
	int fd = -1, err = 0;

	for (a = ai; a; a = a->ai_next) {
		fd = open_socket(o, a->ai_family, a->ai_socktype,
				 a->ai_protocol);
		if (o->proto == P_DCCP)
			dccp_setup(o, fd);
		if (o->proto == P_SCTP)
			sctp_setup(o, fd);
		tcp_setup(o, fd);
		if (!connect(fd, a->ai_addr, a->ai_addrlen))
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		cli_die("connect to %s port %s: %s%s", o->host, o->port,
			strerror(err), o->proto == P_DCCP && err == EILSEQ ?
			" (the server refused the CCID)" : "");
	if (o->proto == P_TLTCP)
		tltcp_attach(fd);
	if (o->arrival && tl_set_arrival(fd, TL_ARRIVAL_ON))
		cli_die("TL_ARRIVAL: %s%s", strerror(errno),
			errno == ENOPROTOOPT ? " (a tltcp module without it)" : "");
	return fd;
}

void sample_tcp_info(int fd, struct interval *iv)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return;
	iv->cwnd = ti.tcpi_snd_cwnd;
	iv->ssthresh = ti.tcpi_snd_ssthresh;
	iv->rtt_us = ti.tcpi_rtt;
	iv->rttvar_us = ti.tcpi_rttvar;
	iv->retrans = ti.tcpi_total_retrans;
	iv->segs_out = ti.tcpi_segs_out;
}

static void sample_tfrc(int fd, struct interval *iv)
{
	struct tfrc_tx_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID_TX_INFO_, &ti, &len))
		return;		/* CCID 2 has no such report */
	iv->tfrc = true;
	iv->x_bps = ti.x / 64.0 * 8;
	iv->x_recv_bps = ti.x_recv / 64.0 * 8;
	iv->p = ti.p / 1e6;
	iv->rtt_us = ti.rtt;
}

static void sample_sctp(int fd, struct interval *iv)
{
	struct sctp_prstatus st = { .sprstat_policy = SCTP_PR_SCTP_ALL };
	socklen_t len = sizeof(st);

	if (getsockopt(fd, IPPROTO_SCTP, SCTP_PR_ASSOC_STATUS, &st, &len))
		return;
	iv->prsctp = true;
	iv->abandoned_unsent = st.sprstat_abandoned_unsent;
	iv->abandoned_sent = st.sprstat_abandoned_sent;
}

/* What the transport says about itself, after a write. */
void sample(const struct opts *o, int fd, struct interval *iv)
{
	if (IS_TCP(o->proto))
		sample_tcp_info(fd, iv);
	else if (o->proto == P_DCCP)
		sample_tfrc(fd, iv);
	else if (o->proto == P_SCTP)
		sample_sctp(fd, iv);
}
