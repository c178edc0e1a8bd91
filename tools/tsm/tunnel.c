// SPDX-License-Identifier: GPL-2.0
/*
 * tsm tunnel: force congestion control on unmodified UDP applications
 * (Documentation/tsm.rst, "Tunnel"), after the TFRC "VoIP proxy" of
 * Hessler and Welzl.
 *
 *   tsm tunnel client --peer HOST:PORT --udp [ADDR:]PORT --to HOST:PORT ...
 *   tsm tunnel server --listen [ADDR:]PORT ...
 *   tsm tunnel cleanup [--redirect-port P]
 *
 * The client takes the application's datagrams on its UDP port, one flow
 * per source address and port, and carries them over one connection to
 * the server, which sends each flow's datagrams from a UDP socket of its
 * own to the destination and carries the replies back.  Both ends count
 * everything and write the counters as JSON.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "internal.h"
#include "tunnel.h"

#define BACKOFF_MIN_MS		100
#define BACKOFF_MAX_MS		2000
#define CONNECT_TIMEOUT_MS	3000
#define MAX_CONNS		64

struct cfg {
	bool server;
	char *peer_host, *peer_port;
	char *udp_host, *udp_port;
	char *listen_host, *listen_port;
	char *to_host, *to_port;
	const char *transport;
	struct tun_transport tp;
	unsigned int queue;
	double lifetime_ms;
	struct tun_redirect redir;
	const char *stats_path;
	double interval;
	double idle;
	unsigned int max_flows;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ull + t.tv_nsec / 1000000;
}

static void __attribute__((format(printf, 2, 3)))
logmsg(const struct cfg *cfg, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tsm tunnel %s: ", cfg->server ? "server" : "client");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tsm tunnel client --peer HOST:PORT --udp [ADDR:]PORT --to HOST:PORT\n"
		"                  [--transport T] [--queue N] [--lifetime MS]\n"
		"                  [--redirect-port P [--redirect-uid U] [--redirect-cgroup PATH]]\n"
		"                  [--stats FILE] [--interval S] [--idle S] [--max-flows N]\n"
		"       tsm tunnel server --listen [ADDR:]PORT [--transport T] [--to HOST:PORT]\n"
		"                  [--queue N] [--lifetime MS] [--stats FILE] [--interval S]\n"
		"                  [--idle S] [--max-flows N]\n"
		"       tsm tunnel cleanup [--redirect-port P]\n"
		"transports: dccp-ccid3 (default; without DCCP in the kernel multfrc,\n"
		"            TFRC's equation over TCP), dccp-ccid2, tltcp, multfrc[:N], tcp\n");
}

/* "[ADDR:]PORT", "HOST:PORT", "[V6]:PORT"; a port 1..65535. */
static void hostport(const char *opt, const char *s, bool need_host,
		     char **host, char **port)
{
	const char *colon, *p;
	char *end;
	long v;

	*host = NULL;
	if (s[0] == '[') {
		colon = strchr(s, ']');
		if (!colon || colon[1] != ':')
			cli_usage_error("%s: '%s' is not [ADDRESS]:PORT", opt, s);
		*host = strndup(s + 1, colon - s - 1);
		p = colon + 2;
	} else if ((colon = strrchr(s, ':'))) {
		if (strchr(s, ':') != colon)
			cli_usage_error("%s: '%s': an IPv6 address goes in brackets, [ADDRESS]:PORT",
				    opt, s);
		if (colon != s)
			*host = strndup(s, colon - s);
		p = colon + 1;
	} else {
		p = s;
	}
	if (need_host && (!*host || !**host))
		cli_usage_error("%s: '%s' is not HOST:PORT", opt, s);
	errno = 0;
	v = strtol(p, &end, 10);
	if (end == p || *end || errno || v < 1 || v > 65535)
		cli_usage_error("%s: '%s': the port must be 1 to 65535", opt, s);
	*port = strdup(p);
}

enum {
	O_PEER = 256, O_UDP, O_TO, O_LISTEN, O_TRANSPORT, O_QUEUE, O_LIFE,
	O_RPORT, O_RUID, O_RCG, O_STATS, O_INTERVAL, O_IDLE, O_FLOWS,
};

static const struct option tunnel_opts[] = {
	{ "peer", required_argument, NULL, O_PEER },
	{ "udp", required_argument, NULL, O_UDP },
	{ "to", required_argument, NULL, O_TO },
	{ "listen", required_argument, NULL, O_LISTEN },
	{ "transport", required_argument, NULL, O_TRANSPORT },
	{ "queue", required_argument, NULL, O_QUEUE },
	{ "lifetime", required_argument, NULL, O_LIFE },
	{ "redirect-port", required_argument, NULL, O_RPORT },
	{ "redirect-uid", required_argument, NULL, O_RUID },
	{ "redirect-cgroup", required_argument, NULL, O_RCG },
	{ "stats", required_argument, NULL, O_STATS },
	{ "interval", required_argument, NULL, O_INTERVAL },
	{ "idle", required_argument, NULL, O_IDLE },
	{ "max-flows", required_argument, NULL, O_FLOWS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *opt_name(int c)
{
	const struct option *o;

	for (o = tunnel_opts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

static void parse(int argc, char **argv, struct cfg *cfg, const char *sub)
{
	bool client = !strcmp(sub, "client"), cleanup = !strcmp(sub, "cleanup");
	struct tsm_error err = { 0 };
	int c;

	cfg->transport = NULL;	/* tun_transport_default() */
	cfg->queue = 1;
	cfg->lifetime_ms = 200;
	cfg->redir.uid = -1;
	cfg->idle = 60;
	cfg->max_flows = 1024;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", tunnel_opts, NULL)) != -1) {
		if (cleanup && c != O_RPORT && c != 'h')
			cli_usage_error("cleanup takes only --redirect-port");
		if (!client && (c == O_PEER || c == O_UDP || c == O_RUID ||
				c == O_RCG || (c == O_RPORT && !cleanup)))
			cli_usage_error("--%s is a client option", opt_name(c));
		if (client && c == O_LISTEN)
			cli_usage_error("--listen is a server option (the client has --udp)");
		switch (c) {
		case O_PEER:
			hostport("--peer", optarg, true, &cfg->peer_host,
				 &cfg->peer_port);
			break;
		case O_UDP:
			hostport("--udp", optarg, false, &cfg->udp_host,
				 &cfg->udp_port);
			break;
		case O_TO:
			hostport("--to", optarg, true, &cfg->to_host,
				 &cfg->to_port);
			break;
		case O_LISTEN:
			hostport("--listen", optarg, false, &cfg->listen_host,
				 &cfg->listen_port);
			break;
		case O_TRANSPORT:
			cfg->transport = optarg;
			break;
		case O_QUEUE:
			cfg->queue = cli_number("--queue", optarg, 1, 100000);
			if (cfg->queue != atof(optarg))
				cli_usage_error("--queue: '%s' is not a whole number",
					    optarg);
			break;
		case O_LIFE:
			cfg->lifetime_ms = cli_number("--lifetime", optarg, 1,
						  3600000);
			break;
		case O_RPORT:
			cfg->redir.port = cli_number("--redirect-port", optarg, 1,
						 65535);
			if (cfg->redir.port != atof(optarg))
				cli_usage_error("--redirect-port: '%s' is not a port",
					    optarg);
			break;
		case O_RUID:
			cfg->redir.uid = cli_number("--redirect-uid", optarg, 0,
						4294967294.0);
			break;
		case O_RCG:
			cfg->redir.cgroup = optarg;
			break;
		case O_STATS:
			cfg->stats_path = optarg;
			break;
		case O_INTERVAL:
			cfg->interval = cli_number("--interval", optarg, 0.01,
					       86400);
			break;
		case O_IDLE:
			cfg->idle = cli_number("--idle", optarg, 0.1, 86400);
			break;
		case O_FLOWS:
			cfg->max_flows = cli_number("--max-flows", optarg, 1,
						65536);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (cleanup)
		return;
	if (client && !cfg->peer_host)
		cli_usage_error("client: --peer HOST:PORT is required");
	if (client && !cfg->udp_port)
		cli_usage_error("client: --udp [ADDR:]PORT is required");
	if (client && !cfg->to_host)
		cli_usage_error("client: --to HOST:PORT is required (where the datagrams go)");
	if (!client && !cfg->listen_port)
		cli_usage_error("server: --listen [ADDR:]PORT is required");
	if ((cfg->redir.uid >= 0 || cfg->redir.cgroup) && !cfg->redir.port)
		cli_usage_error("--redirect-uid and --redirect-cgroup need --redirect-port");
	if (!cfg->transport) {
		/* DCCP CCID 3, or what stands in for it: said in one line */
		if (tun_transport_default(cfg->lifetime_ms * 1000000, &cfg->tp,
					  &err)) {
			fprintf(stderr, "tsm tunnel %s: %s\n", sub, err.msg);
			exit(1);
		}
		if (err.msg[0])
			fprintf(stderr, "tsm tunnel %s: %s\n", sub, err.msg);
	} else if (tun_transport_parse(cfg->transport,
				       cfg->lifetime_ms * 1000000, &cfg->tp,
				       &err)) {
		fprintf(stderr, "tsm tunnel: --transport: %s\n", err.msg);
		exit(err.code == EINVAL ? 2 : 1);
	}
}

static int resolve(const char *host, const char *port,
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

static const char *addr_str(const struct sockaddr_storage *ss, char *buf,
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

static bool same_addr(const struct sockaddr_storage *a,
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

static void stats_json(FILE *f, const struct cfg *cfg,
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

static void stats_out(const struct cfg *cfg, const struct tun_stats *st,
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
		logmsg(cfg, "%s: %s", tmp, strerror(errno));
		return;
	}
	stats_json(f, cfg, st, elapsed, connected, conns, final);
	if (fclose(f) || rename(tmp, cfg->stats_path))
		logmsg(cfg, "%s: %s", cfg->stats_path, strerror(errno));
}

static int ep_ctl(int ep, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(ep, op, fd, &ev);
}

static void signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void set_mark(int fd)
{
	int mark = TUN_MARK;

	/* Needs CAP_NET_ADMIN; without it there is no redirection either. */
	setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark));
}

/* The client */

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
	struct cfg *cfg;
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
		if (f->used && same_addr(&f->app, app))
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
		logmsg(cl->cfg, "disconnected: %s", why);
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
		logmsg(cl->cfg, "%s; retrying every %d ms at most",
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
	ep_ctl(cl->ep, EPOLL_CTL_ADD, fd, EPOLLOUT | EPOLLIN, &tag_conn);
}

static void client_update_out(struct client *cl)
{
	bool want = tun_conn_pending(&cl->conn);

	if (want == cl->want_out)
		return;
	cl->want_out = want;
	ep_ctl(cl->ep, EPOLL_CTL_MOD, cl->conn.fd,
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
	set_mark(cl->fd);
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
	logmsg(cl->cfg, "connected to %s (%s)", peer, cl->cfg->tp.ch.why);
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

/* A reply out of the tunnel, to the application from where it sent to. */
static void client_deliver(void *arg, const struct tun_msg *m)
{
	char cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))] = { 0 };
	struct client *cl = arg;
	struct in6_pktinfo p6 = { 0 };
	struct in_pktinfo p4 = { 0 };
	struct cflow *f = NULL;
	struct cmsghdr *cm;
	struct msghdr msg;
	struct iovec iov;
	unsigned int i;

	for (i = 0; i < cl->cfg->max_flows && !f; i++)
		if (cl->flows[i].used && cl->flows[i].id == m->flow)
			f = &cl->flows[i];
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
		cm = (struct cmsghdr *)cbuf;
		if (f->local.ss_family == AF_INET6) {
			p6.ipi6_addr = ((struct sockaddr_in6 *)&f->local)->sin6_addr;
			cm->cmsg_level = IPPROTO_IPV6;
			cm->cmsg_type = IPV6_PKTINFO;
			cm->cmsg_len = CMSG_LEN(sizeof(p6));
			memcpy(CMSG_DATA(cm), &p6, sizeof(p6));
			msg.msg_controllen = CMSG_SPACE(sizeof(p6));
		} else {
			p4.ipi_spec_dst = ((struct sockaddr_in *)&f->local)->sin_addr;
			cm->cmsg_level = IPPROTO_IP;
			cm->cmsg_type = IP_PKTINFO;
			cm->cmsg_len = CMSG_LEN(sizeof(p4));
			memcpy(CMSG_DATA(cm), &p4, sizeof(p4));
			msg.msg_controllen = CMSG_SPACE(sizeof(p4));
		}
	}
	if (sendmsg(cl->udp, &msg, MSG_DONTWAIT) < 0 &&
	    (!f->have_local || (msg.msg_controllen = 0,
				sendmsg(cl->udp, &msg, MSG_DONTWAIT) < 0))) {
		tun_count_add(&cl->st.udp_out_err, m->len);
		return;
	}
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

static int run_client(struct cfg *cfg)
{
	struct client *cl = calloc(1, sizeof(*cl));
	uint64_t t0 = now_ms(), next_stats, next_sweep, now;
	struct tsm_error err = { 0 };
	struct epoll_event evs[16];
	bool redirected = false;
	socklen_t tolen;
	int n, i, timeout;

	if (!cl)
		return 1;
	cl->cfg = cfg;
	cl->fd = -1;
	cl->conn.fd = -1;
	cl->next_id = 1;
	cl->backoff_ms = BACKOFF_MIN_MS;
	cl->flows = calloc(cfg->max_flows, sizeof(*cl->flows));
	if (!cl->flows || resolve(cfg->to_host, cfg->to_port, &cl->to, &tolen))
		return 1;
	cl->udp = udp_open(cfg->udp_host, cfg->udp_port, &err);
	if (cl->udp < 0) {
		logmsg(cfg, "%s", err.msg);
		return 1;
	}
	set_mark(cl->udp);
	cl->ep = epoll_create1(EPOLL_CLOEXEC);
	ep_ctl(cl->ep, EPOLL_CTL_ADD, cl->udp, EPOLLIN, &tag_udp);
	signals();
	if (cfg->redir.port) {
		cfg->redir.to_port = atoi(cfg->udp_port);
		if (tun_redirect_install(&cfg->redir, &err)) {
			logmsg(cfg, "redirection: %s", err.msg);
			return 1;
		}
		redirected = true;
		logmsg(cfg, "UDP to port %d redirected (nft table inet tsm_tunnel_%d)",
		       cfg->redir.port, cfg->redir.port);
	}
	client_connect(cl);
	next_stats = cfg->interval ? t0 + cfg->interval * 1000 : UINT64_MAX;
	next_sweep = t0 + 1000;
	while (!stop) {
		now = now_ms();
		timeout = 1000;
		if (next_stats != UINT64_MAX)
			timeout = next_stats > now ? next_stats - now : 0;
		if (cl->state == C_DOWN)
			timeout = cl->retry_ms > now ?
				  (int)(cl->retry_ms - now) < timeout ?
				  (int)(cl->retry_ms - now) : timeout : 0;
		if (timeout > 1000)
			timeout = 1000;
		n = epoll_wait(cl->ep, evs, 16, timeout);
		for (i = 0; i < n && !stop; i++) {
			if (evs[i].data.ptr == &tag_udp)
				client_from_app(cl);
			else
				client_conn_event(cl, evs[i].events);
		}
		now = now_ms();
		if (cl->state == C_DOWN && now >= cl->retry_ms)
			client_connect(cl);
		if (cl->state == C_CONNECTING &&
		    now > cl->connect_start + CONNECT_TIMEOUT_MS) {
			err.code = ETIMEDOUT;
			snprintf(err.msg, sizeof(err.msg),
				 "connect: timed out");
			client_fail(cl, &err);
		}
		if (now >= next_sweep) {
			client_sweep(cl);
			next_sweep = now + 1000;
		}
		if (now >= next_stats) {
			stats_out(cfg, &cl->st, t0, cl->state == C_UP, 0,
				  false);
			next_stats += cfg->interval * 1000;
			if (next_stats < now)
				next_stats = now + cfg->interval * 1000;
		}
	}
	if (redirected) {
		if (tun_redirect_remove(cfg->redir.port, &err))
			logmsg(cfg, "removing the redirection: %s", err.msg);
		else
			logmsg(cfg, "redirection removed");
	}
	if (cl->state == C_UP)
		tun_conn_close(&cl->conn);
	else if (cl->state == C_CONNECTING)
		close(cl->fd);
	stats_out(cfg, &cl->st, t0, false, 0, true);
	close(cl->udp);
	close(cl->ep);
	free(cl->flows);
	free(cl);
	return 0;
}

/* The server */

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
	struct cfg *cfg;
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
	logmsg(sv->cfg, "connection closed: %s", why);
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
	ep_ctl(sv->ep, EPOLL_CTL_MOD, sc->c.fd, EPOLLIN | (want ? EPOLLOUT : 0),
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
	set_mark(fd);
	f = calloc(1, sizeof(*f));
	if (!f || connect(fd, (const struct sockaddr *)dst, len)) {
		logmsg(sv->cfg, "flow to %s: %s", addr_str(dst, a, sizeof(a)),
		       strerror(errno));
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
	ep_ctl(sv->ep, EPOLL_CTL_ADD, fd, EPOLLIN, f);
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
				logmsg(sv->cfg, "%s", err.msg);
			return;
		}
		sc = calloc(1, sizeof(*sc));
		if (sc)
			sc->flows = calloc(sv->cfg->max_flows,
					   sizeof(*sc->flows));
		if (!sc || !sc->flows || sv->nconns >= MAX_CONNS ||
		    tun_conn_init(&sc->c, fd, &sv->cfg->tp, sv->cfg->queue,
				  &sv->st, &err)) {
			logmsg(sv->cfg, "connection refused: %s",
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
		ep_ctl(sv->ep, EPOLL_CTL_ADD, fd, EPOLLIN, sc);
		logmsg(sv->cfg, "connection accepted (%u open)", sv->nconns);
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

static int run_server(struct cfg *cfg)
{
	struct server *sv = calloc(1, sizeof(*sv));
	uint64_t t0 = now_ms(), next_stats, next_sweep, now;
	struct tsm_error err = { 0 };
	struct epoll_event evs[32];
	socklen_t tolen;
	int n, i, timeout, *kind;

	if (!sv)
		return 1;
	sv->cfg = cfg;
	if (cfg->to_host) {
		if (resolve(cfg->to_host, cfg->to_port, &sv->to, &tolen))
			return 1;
		sv->have_to = true;
	}
	/* No address: IPv6 and IPv4 on one socket, if there is IPv6. */
	sv->lfd = -1;
	if (!cfg->listen_host)
		sv->lfd = tsm_listen("::", cfg->listen_port, &cfg->tp.ch, &err);
	if (sv->lfd < 0)
		sv->lfd = tsm_listen(cfg->listen_host, cfg->listen_port,
				     &cfg->tp.ch, &err);
	if (sv->lfd < 0) {
		if (err.code == ESOCKTNOSUPPORT || err.code == EPROTONOSUPPORT)
			tsm_append(err.msg, sizeof(err.msg),
				   " (modprobe dccp_ipv4 / dccp_ipv6)");
		logmsg(cfg, "--listen: %s", err.msg);
		return 1;
	}
	fcntl(sv->lfd, F_SETFL, O_NONBLOCK);
	sv->listen_kind = K_LISTEN;
	sv->ep = epoll_create1(EPOLL_CLOEXEC);
	ep_ctl(sv->ep, EPOLL_CTL_ADD, sv->lfd, EPOLLIN, &sv->listen_kind);
	signals();
	logmsg(cfg, "listening on port %s (%s)", cfg->listen_port,
	       cfg->tp.ch.why);
	next_stats = cfg->interval ? t0 + cfg->interval * 1000 : UINT64_MAX;
	next_sweep = t0 + 1000;
	while (!stop) {
		now = now_ms();
		timeout = 1000;
		if (next_stats != UINT64_MAX && next_stats - now < 1000)
			timeout = next_stats > now ? next_stats - now : 0;
		n = epoll_wait(sv->ep, evs, 32, timeout);
		for (i = 0; i < n && !stop; i++) {
			kind = evs[i].data.ptr;
			if (*kind == K_LISTEN) {
				server_accept(sv);
			} else if (*kind == K_CONN) {
				if (!((struct sconn *)kind)->dead)
					server_conn_event(sv, (void *)kind,
							  evs[i].events);
			} else {
				/* a flow of a connection killed in this
				 * batch is freed already: look it up
				 */
				struct sflow *f = NULL;
				struct sconn *sc;
				unsigned int j;

				for (sc = sv->conns; sc && !f; sc = sc->next)
					for (j = 0; j < sc->nflows; j++)
						if (sc->flows[j] ==
						    (void *)kind)
							f = sc->flows[j];
				if (f)
					server_reply(sv, f);
			}
		}
		server_bury(sv);
		now = now_ms();
		if (now >= next_sweep) {
			server_sweep(sv);
			next_sweep = now + 1000;
		}
		if (now >= next_stats) {
			stats_out(cfg, &sv->st, t0, false, sv->nconns, false);
			next_stats += cfg->interval * 1000;
			if (next_stats < now)
				next_stats = now + cfg->interval * 1000;
		}
	}
	while (sv->conns)
		conn_kill(sv, sv->conns, "shutting down");
	server_bury(sv);
	stats_out(cfg, &sv->st, t0, false, 0, true);
	close(sv->lfd);
	close(sv->ep);
	free(sv);
	return 0;
}

int tsm_tunnel_main(int argc, char **argv)
{
	struct tsm_error err = { 0 };
	struct cfg cfg = { 0 };
	const char *sub = argc > 1 ? argv[1] : "";

	cli_prog = "tsm tunnel";
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		usage(stdout);
		return 0;
	}
	if (strcmp(sub, "client") && strcmp(sub, "server") &&
	    strcmp(sub, "cleanup")) {
		if (*sub)
			fprintf(stderr, "tsm tunnel: unknown command '%s'\n",
				sub);
		usage(stderr);
		return 2;
	}
	cfg.server = !strcmp(sub, "server");
	parse(argc - 1, argv + 1, &cfg, sub);
	if (!strcmp(sub, "cleanup")) {
		if (tun_redirect_cleanup(cfg.redir.port, &err)) {
			fprintf(stderr, "tsm tunnel: cleanup: %s\n", err.msg);
			return 1;
		}
		return 0;
	}
	return cfg.server ? run_server(&cfg) : run_client(&cfg);
}
