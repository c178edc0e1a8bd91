// SPDX-License-Identifier: GPL-2.0
/*
 * The tunnel's client: the application's datagrams, one flow per source
 * address and port, over one connection to the server, reconnecting with
 * a backoff; the replies back to the application from where it sent to.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "clock.h"
#include "internal.h"
#include "tunnel.h"

#define BACKOFF_MIN_MS		100
#define BACKOFF_MAX_MS		2000
#define CONNECT_TIMEOUT_MS	3000

struct cflow {
	bool used;
	uint32_t id;
	struct sockaddr_storage app;	/* the application's address */
	struct sockaddr_storage local;	/* where its datagrams arrived */
	bool have_local;
	uint64_t last_ms;
};

enum cstate { C_DOWN, C_CONNECTING, C_UP };

/* epoll tags of the client's two sockets */
static char tag_udp, tag_conn;

struct client {
	struct tun_cfg *cfg;
	struct tun_stats st;
	int ep, udp;
	enum cstate state;
	int fd;			/* connecting */
	struct tun_conn conn;	/* up */
	bool want_out;
	uint64_t retry_ms, backoff_ms, connect_start;
	struct sockaddr_storage to;
	struct cflow *flows;
	uint32_t next_id;
	char last_err[TSM_MSG_LEN];
	unsigned char buf[TUN_MAX_PAYLOAD + 1];
};

static int udp_open(const char *host, const char *port, struct tsm_error *err)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_DGRAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	}, *res, *ai;
	int fd = -1, one = 1, zero = 0, ret;

	/* No address: both families on one socket, if there is IPv6. */
	ret = getaddrinfo(host ? host : "::", port, &hints, &res);
	if (ret && !host)
		ret = getaddrinfo("0.0.0.0", port, &hints, &res);
	if (ret)
		return tsm_err(err, EINVAL, "--udp %s: %s", host ? host : "",
			       gai_strerror(ret));
	ret = tsm_err(err, EADDRNOTAVAIL, "--udp: no address");
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (ai->ai_family == AF_INET6) {
			if (!host)
				setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
					   &zero, sizeof(zero));
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one,
				   sizeof(one));
		}
		setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen)) {
			ret = 0;
			break;
		}
		ret = tsm_err(err, errno, "--udp: bind: %s", strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0 && !host && ret != -EADDRINUSE)
		return udp_open("0.0.0.0", port, err);
	return fd >= 0 ? fd : ret;
}

static struct cflow *cflow_get(struct client *cl,
			       const struct sockaddr_storage *app,
			       const struct sockaddr_storage *local,
			       bool have_local)
{
	struct cflow *f, *free_slot = NULL;
	unsigned int i;

	for (i = 0; i < cl->cfg->max_flows; i++) {
		f = &cl->flows[i];
		if (f->used && tun_same_addr(&f->app, app))
			goto found;
		if (!f->used && !free_slot)
			free_slot = f;
	}
	f = free_slot;
	if (!f)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->used = true;
	f->id = cl->next_id++;
	f->app = *app;
	cl->st.flows++;
	cl->st.flows_opened++;
found:
	if (have_local) {
		f->local = *local;
		f->have_local = true;
	}
	f->last_ms = now_ms();
	return f;
}

static void client_disconnect(struct client *cl, const char *why)
{
	if (cl->state == C_UP) {
		tun_log(cl->cfg, "disconnected: %s", why);
		tun_conn_close(&cl->conn);
	} else if (cl->state == C_CONNECTING) {
		close(cl->fd);
	}
	cl->fd = -1;
	cl->state = C_DOWN;
	cl->want_out = false;
	cl->retry_ms = now_ms() + cl->backoff_ms;
	cl->backoff_ms = cl->backoff_ms * 2 > BACKOFF_MAX_MS ?
			 BACKOFF_MAX_MS : cl->backoff_ms * 2;
}

static void client_fail(struct client *cl, const struct tsm_error *err)
{
	cl->st.connect_failures++;
	if (strcmp(cl->last_err, err->msg)) {
		tun_log(cl->cfg, "%s; retrying every %d ms at most",
			err->msg, BACKOFF_MAX_MS);
		snprintf(cl->last_err, sizeof(cl->last_err), "%s", err->msg);
	}
	client_disconnect(cl, err->msg);
}

static void client_connect(struct client *cl)
{
	struct tsm_error err = { 0 };
	int fd;

	fd = tsm_connect_start(cl->cfg->peer_host, cl->cfg->peer_port,
			       &cl->cfg->tp.ch, &err);
	if (fd < 0) {
		if (err.code == ESOCKTNOSUPPORT || err.code == EPROTONOSUPPORT)
			tsm_append(err.msg, sizeof(err.msg),
				   " (modprobe dccp_ipv4 / dccp_ipv6)");
		client_fail(cl, &err);
		return;
	}
	cl->fd = fd;
	cl->state = C_CONNECTING;
	cl->connect_start = now_ms();
	tun_ep_ctl(cl->ep, EPOLL_CTL_ADD, fd, EPOLLOUT | EPOLLIN, &tag_conn);
}

static void client_update_out(struct client *cl)
{
	bool want = tun_conn_pending(&cl->conn);

	if (want == cl->want_out)
		return;
	cl->want_out = want;
	tun_ep_ctl(cl->ep, EPOLL_CTL_MOD, cl->conn.fd,
		   EPOLLIN | (want ? EPOLLOUT : 0), &tag_conn);
}

static void client_connected(struct client *cl)
{
	struct tsm_error err = { 0 };
	char peer[80];

	if (tsm_connect_finish(cl->fd, &cl->cfg->tp.ch, &err) ||
	    tun_conn_init(&cl->conn, cl->fd, &cl->cfg->tp, cl->cfg->queue,
			  &cl->st, &err)) {
		client_fail(cl, &err);
		return;
	}
	tun_set_mark(cl->fd);
	cl->state = C_UP;
	cl->fd = -1;
	cl->want_out = true;
	client_update_out(cl);
	if (cl->st.connects++)
		cl->st.reconnects++;
	cl->backoff_ms = BACKOFF_MIN_MS;
	cl->last_err[0] = 0;
	snprintf(peer, sizeof(peer), "%s port %s", cl->cfg->peer_host,
		 cl->cfg->peer_port);
	tun_log(cl->cfg, "connected to %s (%s)", peer, cl->cfg->tp.ch.why);
}

/* Takes the local address a datagram was sent to from its control data. */
static bool pktinfo_local(struct msghdr *msg, struct sockaddr_storage *local)
{
	struct sockaddr_in6 *s6 = (void *)local;
	struct sockaddr_in *s4 = (void *)local;
	struct in6_pktinfo p6;
	struct in_pktinfo p4;
	struct cmsghdr *cm;

	memset(local, 0, sizeof(*local));
	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level == IPPROTO_IPV6 &&
		    cm->cmsg_type == IPV6_PKTINFO) {
			memcpy(&p6, CMSG_DATA(cm), sizeof(p6));
			s6->sin6_family = AF_INET6;
			s6->sin6_addr = p6.ipi6_addr;
			return true;
		}
		if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
			memcpy(&p4, CMSG_DATA(cm), sizeof(p4));
			s4->sin_family = AF_INET;
			s4->sin_addr = p4.ipi_addr;
			return true;
		}
	}
	return false;
}

static void client_from_app(struct client *cl)
{
	char cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo)) +
		  CMSG_SPACE(sizeof(struct in_pktinfo))];
	struct sockaddr_storage app, local;
	struct iovec iov;
	struct msghdr msg;
	struct tun_msg m;
	struct cflow *f;
	bool have_local;
	ssize_t n;
	int i, ret;

	for (i = 0; i < 256; i++) {
		iov.iov_base = cl->buf;
		iov.iov_len = sizeof(cl->buf);
		memset(&msg, 0, sizeof(msg));
		msg.msg_name = &app;
		msg.msg_namelen = sizeof(app);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		n = recvmsg(cl->udp, &msg, MSG_DONTWAIT);
		if (n < 0)
			return;
		tun_count_add(&cl->st.udp_in, n);
		if (cl->state != C_UP) {
			tun_count_add(&cl->st.drop_disc, n);
			continue;
		}
		have_local = pktinfo_local(&msg, &local);
		f = cflow_get(cl, &app, &local, have_local);
		if (!f || n > TUN_MAX_PAYLOAD) {
			tun_count_add(&cl->st.drop_other, n);
			continue;
		}
		m.flow = f->id;
		m.addr = cl->to;
		m.data = cl->buf;
		m.len = n;
		ret = tun_conn_send(&cl->conn, &m);
		if (ret < 0) {
			client_disconnect(cl, strerror(-ret));
			continue;
		}
		client_update_out(cl);
	}
}

static struct cflow *cflow_by_id(struct client *cl, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < cl->cfg->max_flows; i++)
		if (cl->flows[i].used && cl->flows[i].id == id)
			return &cl->flows[i];
	return NULL;
}

/*
 * The control message that sends from where the flow's datagrams arrived
 * (IP_PKTINFO, IPV6_PKTINFO) into cbuf, zeroed and large enough for
 * either; its length.
 */
static size_t pktinfo_cmsg(const struct cflow *f, char *cbuf)
{
	struct cmsghdr *cm = (struct cmsghdr *)cbuf;
	struct in6_pktinfo p6 = { 0 };
	struct in_pktinfo p4 = { 0 };

	if (f->local.ss_family == AF_INET6) {
		p6.ipi6_addr = ((struct sockaddr_in6 *)&f->local)->sin6_addr;
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(p6));
		memcpy(CMSG_DATA(cm), &p6, sizeof(p6));
		return CMSG_SPACE(sizeof(p6));
	}
	p4.ipi_spec_dst = ((struct sockaddr_in *)&f->local)->sin_addr;
	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_PKTINFO;
	cm->cmsg_len = CMSG_LEN(sizeof(p4));
	memcpy(CMSG_DATA(cm), &p4, sizeof(p4));
	return CMSG_SPACE(sizeof(p4));
}

/*
 * A reply out of the tunnel, to the application from where it sent to;
 * from any address if that fails.
 */
static void client_deliver(void *arg, const struct tun_msg *m)
{
	char cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))] = { 0 };
	struct client *cl = arg;
	struct msghdr msg;
	struct iovec iov;
	struct cflow *f;
	ssize_t n;

	f = cflow_by_id(cl, m->flow);
	if (!f) {
		tun_count_add(&cl->st.drop_other, m->len);
		return;
	}
	f->last_ms = now_ms();
	iov.iov_base = (void *)m->data;
	iov.iov_len = m->len;
	memset(&msg, 0, sizeof(msg));
	msg.msg_name = &f->app;
	msg.msg_namelen = sizeof(f->app);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (f->have_local) {
		msg.msg_control = cbuf;
		msg.msg_controllen = pktinfo_cmsg(f, cbuf);
	}
	n = sendmsg(cl->udp, &msg, MSG_DONTWAIT);
	if (n < 0 && f->have_local) {
		msg.msg_controllen = 0;
		n = sendmsg(cl->udp, &msg, MSG_DONTWAIT);
	}
	if (n < 0)
		tun_count_add(&cl->st.udp_out_err, m->len);
	else
		tun_count_add(&cl->st.udp_out, m->len);
}

static void client_conn_event(struct client *cl, uint32_t events)
{
	int ret = 0;

	if (cl->state == C_CONNECTING) {
		client_connected(cl);
		return;
	}
	if (cl->state != C_UP)
		return;
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		ret = tun_conn_recv(&cl->conn, client_deliver, cl);
	if (!ret && (events & EPOLLOUT))
		ret = tun_conn_flush(&cl->conn);
	if (ret) {
		client_disconnect(cl, ret == -EPIPE ? "the server closed" :
				  strerror(-ret));
		return;
	}
	client_update_out(cl);
}

static void client_sweep(struct client *cl)
{
	uint64_t now = now_ms();
	unsigned int i;

	for (i = 0; i < cl->cfg->max_flows; i++)
		if (cl->flows[i].used &&
		    now - cl->flows[i].last_ms > cl->cfg->idle * 1000) {
			cl->flows[i].used = false;
			cl->st.flows--;
		}
}

/* The client, its UDP socket bound and in its epoll set; NULL, after a
 * message if there is something to say, if not.
 */
static struct client *client_new(struct tun_cfg *cfg)
{
	struct client *cl = calloc(1, sizeof(*cl));
	struct tsm_error err = { 0 };
	socklen_t tolen;

	if (!cl)
		return NULL;
	cl->cfg = cfg;
	cl->fd = -1;
	cl->conn.fd = -1;
	cl->next_id = 1;
	cl->backoff_ms = BACKOFF_MIN_MS;
	cl->flows = calloc(cfg->max_flows, sizeof(*cl->flows));
	if (!cl->flows ||
	    tun_resolve(cfg->to_host, cfg->to_port, &cl->to, &tolen))
		return NULL;
	cl->udp = udp_open(cfg->udp_host, cfg->udp_port, &err);
	if (cl->udp < 0) {
		tun_log(cfg, "%s", err.msg);
		return NULL;
	}
	tun_set_mark(cl->udp);
	cl->ep = epoll_create1(EPOLL_CLOEXEC);
	tun_ep_ctl(cl->ep, EPOLL_CTL_ADD, cl->udp, EPOLLIN, &tag_udp);
	return cl;
}

/* --redirect-port: the application's datagrams to the client's port. */
static int client_redirect(struct tun_cfg *cfg)
{
	struct tsm_error err = { 0 };

	cfg->redir.to_port = atoi(cfg->udp_port);
	if (tun_redirect_install(&cfg->redir, &err)) {
		tun_log(cfg, "redirection: %s", err.msg);
		return -1;
	}
	tun_log(cfg, "UDP to port %d redirected (nft table inet tsm_tunnel_%d)",
		cfg->redir.port, cfg->redir.port);
	return 0;
}

static void client_unredirect(struct tun_cfg *cfg)
{
	struct tsm_error err = { 0 };

	if (tun_redirect_remove(cfg->redir.port, &err))
		tun_log(cfg, "removing the redirection: %s", err.msg);
	else
		tun_log(cfg, "redirection removed");
}

/* How long to wait for events: until the counters are due or the next
 * connection attempt, a second at most.
 */
static int client_timeout(const struct client *cl,
			  const struct tun_ticks *tk)
{
	uint64_t now = now_ms();
	int timeout = 1000;

	if (tk->next_stats != UINT64_MAX)
		timeout = tk->next_stats > now ? tk->next_stats - now : 0;
	if (cl->state == C_DOWN)
		timeout = cl->retry_ms > now ?
			  (int)(cl->retry_ms - now) < timeout ?
			  (int)(cl->retry_ms - now) : timeout : 0;
	return timeout > 1000 ? 1000 : timeout;
}

/* After the events: reconnect, give up connecting, sweep, count. */
static void client_timers(struct client *cl, struct tun_ticks *tk)
{
	struct tsm_error err = { 0 };
	uint64_t now = now_ms();

	if (cl->state == C_DOWN && now >= cl->retry_ms)
		client_connect(cl);
	if (cl->state == C_CONNECTING &&
	    now > cl->connect_start + CONNECT_TIMEOUT_MS) {
		err.code = ETIMEDOUT;
		snprintf(err.msg, sizeof(err.msg), "connect: timed out");
		client_fail(cl, &err);
	}
	if (tun_tick_sweep(tk, now))
		client_sweep(cl);
	if (tun_tick_stats(tk, cl->cfg, now))
		tun_stats_out(cl->cfg, &cl->st, tk->t0, cl->state == C_UP, 0,
			      false);
}

/* The connection, up or being made; what it had queued counts as dropped. */
static void client_close(struct client *cl)
{
	if (cl->state == C_UP)
		tun_conn_close(&cl->conn);
	else if (cl->state == C_CONNECTING)
		close(cl->fd);
}

static void client_free(struct client *cl)
{
	close(cl->udp);
	close(cl->ep);
	free(cl->flows);
	free(cl);
}

int tun_run_client(struct tun_cfg *cfg)
{
	struct epoll_event evs[16];
	struct tun_ticks tk;
	struct client *cl;
	int n, i;

	tun_ticks_init(&tk, cfg);
	cl = client_new(cfg);
	if (!cl)
		return 1;
	tun_signals();
	if (cfg->redir.port && client_redirect(cfg))
		return 1;
	client_connect(cl);
	while (!tun_stop) {
		n = epoll_wait(cl->ep, evs, 16, client_timeout(cl, &tk));
		for (i = 0; i < n && !tun_stop; i++) {
			if (evs[i].data.ptr == &tag_udp)
				client_from_app(cl);
			else
				client_conn_event(cl, evs[i].events);
		}
		client_timers(cl, &tk);
	}
	if (cfg->redir.port)
		client_unredirect(cfg);
	client_close(cl);
	tun_stats_out(cfg, &cl->st, tk.t0, false, 0, true);
	client_free(cl);
	return 0;
}
