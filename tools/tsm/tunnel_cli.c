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
 *
 * This file is the command line; tunnel_client.c and tunnel_server.c the
 * two endpoints' loops, tunnel_sock.c what they share.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "internal.h"
#include "tunnel.h"

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

/* A number of whole units: --queue N, --redirect-port P. */
static unsigned int whole(const char *opt, const char *s, double hi,
			  const char *what)
{
	double v = cli_number(opt, s, 1, hi);

	if ((unsigned int)v != atof(s))
		cli_usage_error("%s: '%s' is not %s", opt, s, what);
	return v;
}

/* An address option: where it goes in cfg, and whether it needs a host. */
static bool addr_opt(int c, struct tun_cfg *cfg, char ***host, char ***port)
{
	switch (c) {
	case O_PEER:
		*host = &cfg->peer_host, *port = &cfg->peer_port;
		return true;
	case O_UDP:
		*host = &cfg->udp_host, *port = &cfg->udp_port;
		return false;
	case O_TO:
		*host = &cfg->to_host, *port = &cfg->to_port;
		return true;
	default:	/* O_LISTEN */
		*host = &cfg->listen_host, *port = &cfg->listen_port;
		return false;
	}
}

/* The options of numbers and names. */
static void value_opt(int c, const char *arg, struct tun_cfg *cfg)
{
	switch (c) {
	case O_TRANSPORT:
		cfg->transport = arg;
		break;
	case O_QUEUE:
		cfg->queue = whole("--queue", arg, 100000, "a whole number");
		break;
	case O_LIFE:
		cfg->lifetime_ms = cli_number("--lifetime", arg, 1, 3600000);
		break;
	case O_RPORT:
		cfg->redir.port = whole("--redirect-port", arg, 65535, "a port");
		break;
	case O_RUID:
		cfg->redir.uid = cli_number("--redirect-uid", arg, 0,
					    4294967294.0);
		break;
	case O_RCG:
		cfg->redir.cgroup = arg;
		break;
	case O_STATS:
		cfg->stats_path = arg;
		break;
	case O_INTERVAL:
		cfg->interval = cli_number("--interval", arg, 0.01, 86400);
		break;
	case O_IDLE:
		cfg->idle = cli_number("--idle", arg, 0.1, 86400);
		break;
	case O_FLOWS:
		cfg->max_flows = cli_number("--max-flows", arg, 1, 65536);
		break;
	}
}

/* Which subcommand may take option c. */
static void check_opt(int c, bool client, bool cleanup)
{
	if (cleanup && c != O_RPORT && c != 'h')
		cli_usage_error("cleanup takes only --redirect-port");
	if (!client && (c == O_PEER || c == O_UDP || c == O_RUID ||
			c == O_RCG || (c == O_RPORT && !cleanup)))
		cli_usage_error("--%s is a client option", opt_name(c));
	if (client && c == O_LISTEN)
		cli_usage_error("--listen is a server option (the client has --udp)");
}

/* What the subcommand needs, once all options are read. */
static void check_cfg(struct tun_cfg *cfg, bool client)
{
	struct tsm_error err = { 0 };

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
			fprintf(stderr, "tsm tunnel %s: %s\n", client ? "client" : "server", err.msg);
			exit(1);
		}
		if (err.msg[0])
			fprintf(stderr, "tsm tunnel %s: %s\n", client ? "client" : "server", err.msg);
	} else if (tun_transport_parse(cfg->transport,
				       cfg->lifetime_ms * 1000000, &cfg->tp,
				       &err)) {
		fprintf(stderr, "tsm tunnel: --transport: %s\n", err.msg);
		exit(err.code == EINVAL ? 2 : 1);
	}
}

static void parse(int argc, char **argv, struct tun_cfg *cfg, const char *sub)
{
	bool client = !strcmp(sub, "client"), cleanup = !strcmp(sub, "cleanup");
	char **host, **port, flag[16];
	bool need_host;
	int c;

	cfg->transport = NULL;	/* tun_transport_default() */
	cfg->queue = 1;
	cfg->lifetime_ms = 200;
	cfg->redir.uid = -1;
	cfg->idle = 60;
	cfg->max_flows = 1024;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", tunnel_opts, NULL)) != -1) {
		check_opt(c, client, cleanup);
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == '?' || c == ':') {
			usage(stderr);
			exit(2);
		}
		if (c == O_PEER || c == O_UDP || c == O_TO || c == O_LISTEN) {
			need_host = addr_opt(c, cfg, &host, &port);
			snprintf(flag, sizeof(flag), "--%s", opt_name(c));
			hostport(flag, optarg, need_host, host, port);
			continue;
		}
		value_opt(c, optarg, cfg);
	}
	if (optind < argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (!cleanup)
		check_cfg(cfg, client);
}

int tsm_tunnel_main(int argc, char **argv)
{
	struct tsm_error err = { 0 };
	struct tun_cfg cfg = { 0 };
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
	return cfg.server ? tun_run_server(&cfg) : tun_run_client(&cfg);
}
