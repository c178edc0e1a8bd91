// SPDX-License-Identifier: GPL-2.0
/*
 * What the tunnel's two endpoints share: addresses, epoll, signals, the
 * socket mark, log lines and the counters as JSON.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "clock.h"
#include "internal.h"
#include "tunnel.h"

volatile sig_atomic_t tun_stop;

static void on_signal(int sig)
{
	(void)sig;
	tun_stop = 1;
}

void tun_log(const struct tun_cfg *cfg, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tsm tunnel %s: ", cfg->server ? "server" : "client");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int tun_resolve(const char *host, const char *port,
		struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV,
	}, *res;
	int ret = getaddrinfo(host, port, &hints, &res);

	if (ret) {
		fprintf(stderr, "tsm tunnel: %s: %s\n", host, gai_strerror(ret));
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

const char *tun_addr_str(const struct sockaddr_storage *ss, char *buf,
			 size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	int port;

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
		snprintf(buf, len, "[%s]:%d", host, port);
	} else {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
		snprintf(buf, len, "%s:%d", host, port);
	}
	return buf;
}

bool tun_same_addr(const struct sockaddr_storage *a,
		   const struct sockaddr_storage *b)
{
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET6)
		return a6->sin6_port == b6->sin6_port &&
		       !memcmp(&a6->sin6_addr, &b6->sin6_addr, 16);
	return a4->sin_port == b4->sin_port &&
	       a4->sin_addr.s_addr == b4->sin_addr.s_addr;
}

/* Statistics */

static void count_json(FILE *f, const char *name, const struct tun_count *c)
{
	fprintf(f, ",\"%s\":{\"datagrams\":%llu,\"bytes\":%llu}", name,
		(unsigned long long)c->datagrams,
		(unsigned long long)c->bytes);
}

static void stats_json(FILE *f, const struct tun_cfg *cfg,
		       const struct tun_stats *st, double elapsed,
		       bool connected, unsigned int conns, bool final)
{
	fprintf(f, "{\"role\":\"%s\",\"final\":%s,\"elapsed_s\":%.3f",
		cfg->server ? "server" : "client", final ? "true" : "false",
		elapsed);
	fprintf(f, ",\"transport\":\"%s\",\"queue\":%u", cfg->tp.name,
		cfg->queue);
	if (cfg->server) {
		count_json(f, "from_tunnel", &st->from_tunnel);
		count_json(f, "delivered", &st->udp_out);
		count_json(f, "delivery_errors", &st->udp_out_err);
		count_json(f, "from_dest", &st->udp_in);
	} else {
		count_json(f, "from_app", &st->udp_in);
	}
	count_json(f, "to_tunnel", &st->to_tunnel);
	count_json(f, "dropped_queue_full", &st->drop_full);
	count_json(f, "dropped_disconnected", &st->drop_disc);
	count_json(f, "dropped_expired", &st->drop_expired);
	count_json(f, "dropped_other", &st->drop_other);
	if (!cfg->server) {
		count_json(f, "from_tunnel", &st->from_tunnel);
		count_json(f, "to_app", &st->udp_out);
		count_json(f, "to_app_errors", &st->udp_out_err);
	}
	count_json(f, "abandoned", &st->abandoned);
	fprintf(f, ",\"queued\":%llu,\"flows\":%llu,\"flows_opened\":%llu",
		(unsigned long long)st->queued, (unsigned long long)st->flows,
		(unsigned long long)st->flows_opened);
	fprintf(f, ",\"connects\":%llu", (unsigned long long)st->connects);
	if (cfg->server)
		fprintf(f, ",\"connections\":%u}\n", conns);
	else
		fprintf(f, ",\"reconnects\":%llu,\"connect_failures\":%llu,\"connected\":%s}\n",
			(unsigned long long)st->reconnects,
			(unsigned long long)st->connect_failures,
			connected ? "true" : "false");
}

void tun_stats_out(const struct tun_cfg *cfg, const struct tun_stats *st,
		   uint64_t t0, bool connected, unsigned int conns,
		   bool final)
{
	double elapsed = (now_ms() - t0) / 1000.0;
	char tmp[4096];
	FILE *f;

	if (final || cfg->interval) {
		stats_json(stdout, cfg, st, elapsed, connected, conns, final);
		fflush(stdout);
	}
	if (!cfg->stats_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", cfg->stats_path);
	f = fopen(tmp, "w");
	if (!f) {
		tun_log(cfg, "%s: %s", tmp, strerror(errno));
		return;
	}
	stats_json(f, cfg, st, elapsed, connected, conns, final);
	if (fclose(f) || rename(tmp, cfg->stats_path))
		tun_log(cfg, "%s: %s", cfg->stats_path, strerror(errno));
}

int tun_ep_ctl(int ep, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(ep, op, fd, &ev);
}

void tun_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void tun_set_mark(int fd)
{
	int mark = TUN_MARK;

	/* Needs CAP_NET_ADMIN; without it there is no redirection either. */
	setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark));
}

void tun_ticks_init(struct tun_ticks *tk, const struct tun_cfg *cfg)
{
	tk->t0 = now_ms();
	tk->next_stats = cfg->interval ? tk->t0 + cfg->interval * 1000 :
					 UINT64_MAX;
	tk->next_sweep = tk->t0 + 1000;
}

bool tun_tick_sweep(struct tun_ticks *tk, uint64_t now)
{
	if (now < tk->next_sweep)
		return false;
	tk->next_sweep = now + 1000;
	return true;
}

bool tun_tick_stats(struct tun_ticks *tk, const struct tun_cfg *cfg,
		    uint64_t now)
{
	if (now < tk->next_stats)
		return false;
	tk->next_stats += cfg->interval * 1000;
	if (tk->next_stats < now)
		tk->next_stats = now + cfg->interval * 1000;
	return true;
}
