// SPDX-License-Identifier: GPL-2.0
/*
 * The tunnel's server: accepts connections, and for each flow of each one
 * sends the datagrams from a UDP socket of its own to the destination and
 * carries the replies back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "clock.h"
#include "internal.h"
#include "tunnel.h"

#define MAX_CONNS		64

enum { K_LISTEN, K_CONN, K_FLOW };

struct sconn;

struct sflow {
	int kind;		/* K_FLOW: first, for epoll tags */
	int fd;
	uint32_t id;
	struct sconn *sc;
	uint64_t last_ms;
};

struct sconn {
	int kind;		/* K_CONN */
	bool dead;
	bool want_out;
	struct tun_conn c;
	struct sflow **flows;
	unsigned int nflows;
	struct sconn *next;
};

struct server {
	struct tun_cfg *cfg;
	struct tun_stats st;
	int ep, lfd;
	int listen_kind;	/* K_LISTEN, the listener's epoll tag */
	struct sconn *conns, *dead;
	unsigned int nconns;
	struct sockaddr_storage to;	/* --to: overrides the client's */
	bool have_to;
	unsigned char buf[TUN_MAX_PAYLOAD + 1];
};

static void flow_close(struct server *sv, struct sconn *sc, unsigned int i)
{
	close(sc->flows[i]->fd);
	free(sc->flows[i]);
	sc->flows[i] = sc->flows[--sc->nflows];
	sv->st.flows--;
}

static void conn_kill(struct server *sv, struct sconn *sc, const char *why)
{
	struct sconn **p;

	if (sc->dead)
		return;
	tun_log(sv->cfg, "connection closed: %s", why);
	while (sc->nflows)
		flow_close(sv, sc, sc->nflows - 1);
	tun_conn_close(&sc->c);
	sc->dead = true;
	for (p = &sv->conns; *p; p = &(*p)->next)
		if (*p == sc) {
			*p = sc->next;
			break;
		}
	sc->next = sv->dead;
	sv->dead = sc;
	sv->nconns--;
}

static void conn_update_out(struct server *sv, struct sconn *sc)
{
	bool want = tun_conn_pending(&sc->c);

	if (want == sc->want_out)
		return;
	sc->want_out = want;
	tun_ep_ctl(sv->ep, EPOLL_CTL_MOD, sc->c.fd, EPOLLIN | (want ? EPOLLOUT : 0),
		   sc);
}

struct deliver_ctx {
	struct server *sv;
	struct sconn *sc;
};

static struct sflow *flow_open(struct server *sv, struct sconn *sc,
			       const struct tun_msg *m)
{
	const struct sockaddr_storage *dst = sv->have_to ? &sv->to : &m->addr;
	socklen_t len = dst->ss_family == AF_INET6 ?
			sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	struct sflow *f;
	char a[80];
	int fd;

	if (sc->nflows >= sv->cfg->max_flows)
		return NULL;
	fd = socket(dst->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return NULL;
	tun_set_mark(fd);
	f = calloc(1, sizeof(*f));
	if (!f || connect(fd, (const struct sockaddr *)dst, len)) {
		tun_log(sv->cfg, "flow to %s: %s",
			tun_addr_str(dst, a, sizeof(a)), strerror(errno));
		free(f);
		close(fd);
		return NULL;
	}
	f->kind = K_FLOW;
	f->fd = fd;
	f->id = m->flow;
	f->sc = sc;
	sc->flows[sc->nflows++] = f;
	sv->st.flows++;
	sv->st.flows_opened++;
	tun_ep_ctl(sv->ep, EPOLL_CTL_ADD, fd, EPOLLIN, f);
	return f;
}

static void server_deliver(void *arg, const struct tun_msg *m)
{
	struct deliver_ctx *ctx = arg;
	struct sconn *sc = ctx->sc;
	struct sflow *f = NULL;
	unsigned int i;

	for (i = 0; i < sc->nflows && !f; i++)
		if (sc->flows[i]->id == m->flow)
			f = sc->flows[i];
	if (!f)
		f = flow_open(ctx->sv, sc, m);
	if (!f) {
		tun_count_add(&ctx->sv->st.drop_other, m->len);
		return;
	}
	f->last_ms = now_ms();
	if (send(f->fd, m->data, m->len, MSG_DONTWAIT) < 0)
		tun_count_add(&ctx->sv->st.udp_out_err, m->len);
	else
		tun_count_add(&ctx->sv->st.udp_out, m->len);
}

static void server_accept(struct server *sv)
{
	struct tsm_error err = { 0 };
	struct sconn *sc;
	int fd;

	for (;;) {
		fd = tsm_accept(sv->lfd, &sv->cfg->tp.ch, &err);
		if (fd < 0) {
			if (err.code != EAGAIN && err.code != EINTR)
				tun_log(sv->cfg, "%s", err.msg);
			return;
		}
		sc = calloc(1, sizeof(*sc));
		if (sc)
			sc->flows = calloc(sv->cfg->max_flows,
					   sizeof(*sc->flows));
		if (!sc || !sc->flows || sv->nconns >= MAX_CONNS ||
		    tun_conn_init(&sc->c, fd, &sv->cfg->tp, sv->cfg->queue,
				  &sv->st, &err)) {
			tun_log(sv->cfg, "connection refused: %s",
				sv->nconns >= MAX_CONNS ? "too many" : err.msg);
			if (sc)
				free(sc->flows);
			free(sc);
			close(fd);
			continue;
		}
		sc->kind = K_CONN;
		sc->next = sv->conns;
		sv->conns = sc;
		sv->nconns++;
		sv->st.connects++;
		tun_ep_ctl(sv->ep, EPOLL_CTL_ADD, fd, EPOLLIN, sc);
		tun_log(sv->cfg, "connection accepted (%u open)", sv->nconns);
	}
}

static void server_reply(struct server *sv, struct sflow *f)
{
	struct sconn *sc = f->sc;
	struct tun_msg m = { .flow = f->id, .data = sv->buf };
	socklen_t alen;
	ssize_t n;
	int i, ret;

	for (i = 0; i < 64 && !sc->dead; i++) {
		alen = sizeof(m.addr);
		n = recvfrom(f->fd, sv->buf, sizeof(sv->buf), MSG_DONTWAIT,
			     (struct sockaddr *)&m.addr, &alen);
		if (n < 0)
			return;
		tun_count_add(&sv->st.udp_in, n);
		f->last_ms = now_ms();
		m.len = n;
		ret = tun_conn_send(&sc->c, &m);
		if (ret < 0) {
			conn_kill(sv, sc, strerror(-ret));
			return;
		}
		conn_update_out(sv, sc);
	}
}

static void server_conn_event(struct server *sv, struct sconn *sc,
			      uint32_t events)
{
	struct deliver_ctx ctx = { sv, sc };
	int ret = 0;

	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		ret = tun_conn_recv(&sc->c, server_deliver, &ctx);
	if (!ret && (events & EPOLLOUT))
		ret = tun_conn_flush(&sc->c);
	if (ret) {
		conn_kill(sv, sc, ret == -EPIPE ? "the client closed" :
			  strerror(-ret));
		return;
	}
	conn_update_out(sv, sc);
}

static void server_sweep(struct server *sv)
{
	uint64_t now = now_ms();
	struct sconn *sc;
	unsigned int i;

	for (sc = sv->conns; sc; sc = sc->next)
		for (i = sc->nflows; i-- > 0;)
			if (now - sc->flows[i]->last_ms > sv->cfg->idle * 1000)
				flow_close(sv, sc, i);
}

static void server_bury(struct server *sv)
{
	struct sconn *sc;

	while ((sc = sv->dead)) {
		sv->dead = sc->next;
		free(sc->flows);
		free(sc);
	}
}

/* --listen: no address is IPv6 and IPv4 on one socket, if there is IPv6. */
static int server_listen(struct tun_cfg *cfg)
{
	struct tsm_error err = { 0 };
	int fd = -1;

	if (!cfg->listen_host)
		fd = tsm_listen("::", cfg->listen_port, &cfg->tp.ch, &err);
	if (fd < 0)
		fd = tsm_listen(cfg->listen_host, cfg->listen_port,
				&cfg->tp.ch, &err);
	if (fd < 0) {
		if (err.code == ESOCKTNOSUPPORT || err.code == EPROTONOSUPPORT)
			tsm_append(err.msg, sizeof(err.msg),
				   " (modprobe dccp_ipv4 / dccp_ipv6)");
		tun_log(cfg, "--listen: %s", err.msg);
	}
	return fd;
}

/* The server, listening, the listener in its epoll set; NULL if not. */
static struct server *server_new(struct tun_cfg *cfg)
{
	struct server *sv = calloc(1, sizeof(*sv));
	socklen_t tolen;

	if (!sv)
		return NULL;
	sv->cfg = cfg;
	if (cfg->to_host) {
		if (tun_resolve(cfg->to_host, cfg->to_port, &sv->to, &tolen))
			return NULL;
		sv->have_to = true;
	}
	sv->lfd = server_listen(cfg);
	if (sv->lfd < 0)
		return NULL;
	fcntl(sv->lfd, F_SETFL, O_NONBLOCK);
	sv->listen_kind = K_LISTEN;
	sv->ep = epoll_create1(EPOLL_CLOEXEC);
	tun_ep_ctl(sv->ep, EPOLL_CTL_ADD, sv->lfd, EPOLLIN, &sv->listen_kind);
	return sv;
}

/* A flow's epoll tag: a flow of a connection killed in this batch of
 * events is freed already, so look it up among the living.
 */
static struct sflow *server_flow(struct server *sv, const void *tag)
{
	struct sconn *sc;
	unsigned int j;

	for (sc = sv->conns; sc; sc = sc->next)
		for (j = 0; j < sc->nflows; j++)
			if (sc->flows[j] == tag)
				return sc->flows[j];
	return NULL;
}

static void server_event(struct server *sv, const struct epoll_event *ev)
{
	int *kind = ev->data.ptr;
	struct sflow *f;

	if (*kind == K_LISTEN) {
		server_accept(sv);
	} else if (*kind == K_CONN) {
		if (!((struct sconn *)kind)->dead)
			server_conn_event(sv, (void *)kind, ev->events);
	} else {
		f = server_flow(sv, kind);
		if (f)
			server_reply(sv, f);
	}
}

/* Wait for events until the counters are due, a second at most. */
static int server_timeout(const struct tun_ticks *tk)
{
	uint64_t now = now_ms();

	if (tk->next_stats != UINT64_MAX && tk->next_stats - now < 1000)
		return tk->next_stats > now ? tk->next_stats - now : 0;
	return 1000;
}

int tun_run_server(struct tun_cfg *cfg)
{
	struct epoll_event evs[32];
	struct tun_ticks tk;
	struct server *sv;
	uint64_t now;
	int n, i;

	tun_ticks_init(&tk, cfg);
	sv = server_new(cfg);
	if (!sv)
		return 1;
	tun_signals();
	tun_log(cfg, "listening on port %s (%s)", cfg->listen_port,
		cfg->tp.ch.why);
	while (!tun_stop) {
		n = epoll_wait(sv->ep, evs, 32, server_timeout(&tk));
		for (i = 0; i < n && !tun_stop; i++)
			server_event(sv, &evs[i]);
		server_bury(sv);
		now = now_ms();
		if (tun_tick_sweep(&tk, now))
			server_sweep(sv);
		if (tun_tick_stats(&tk, cfg, now))
			tun_stats_out(cfg, &sv->st, tk.t0, false, sv->nconns,
				      false);
	}
	while (sv->conns)
		conn_kill(sv, sv->conns, "shutting down");
	server_bury(sv);
	tun_stats_out(cfg, &sv->st, tk.t0, false, 0, true);
	close(sv->lfd);
	close(sv->ep);
	free(sv);
	return 0;
}
