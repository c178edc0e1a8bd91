// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen's command line: options, their bounds, and which go together.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flowgen.h"
#include "parse.h"

void usage(void)
{
	fprintf(stderr,
		"usage: flowgen -s [-P tcp|tltcp|udp|dccp|sctp] [-p PORT] [-4|-6] [-i SECS]\n"
		"               [-W BYTES] [-S FILE] [-I IDLE_SECS] [-o FILE]\n"
		"       flowgen -c HOST [-P tcp|tltcp|udp|dccp|sctp] [-p PORT] [-4|-6] [-t SECS]\n"
		"               [-i SECS] [-C CONGESTION] [-M MSS] [-K 2|3] [-T LIFETIME_MS]\n"
		"               [-r RATE_BIT_S [-R STEP_BIT_S,PERIOD]] [-l BYTES] [-O ON,OFF]\n"
		"               [-D SIZE,PERIOD,DEADLINE [-A|-a]] [-w START_DELAY] [-o FILE]\n");
}

/* Rates and sizes may carry a k/M/G suffix. */
static double parse_num(const char *s, const char *what, double lo, double hi)
{
	double v;

	switch (num_parse(s, NUM_SUFFIX, lo, hi, &v)) {
	case NUM_OK:
		return v;
	case NUM_BAD:
		cli_usage_error("%s: '%s' is not a number", what, s);
	case NUM_TRAILING:
		cli_usage_error("%s: '%s' has trailing characters", what, s);
	default:
		cli_usage_error("%s: %s is outside %g..%g", what, s, lo, hi);
	}
}

/* "A,B[,C]": exactly n numbers, each within its bounds. */
static void parse_tuple(const char *s, const char *what, int n, double *v,
			const double *lo, const double *hi)
{
	char buf[128], *tok, *save = NULL;
	int i = 0;

	if (strlen(s) >= sizeof(buf))
		cli_usage_error("%s: '%s' is too long", what, s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (i == n)
			cli_usage_error("%s: '%s' has more than %d values", what, s, n);
		v[i] = parse_num(tok, what, lo[i], hi[i]);
		i++;
	}
	if (i != n)
		cli_usage_error("%s: '%s' needs %d comma-separated values", what, s, n);
}

/* Options given, for the checks: -l and -I have defaults. */
struct given {
	bool len, idle;
};

static void set_defaults(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->proto = P_TCP;
	o->port = "5301";
	o->family = AF_UNSPEC;
	o->duration = 10;
	o->interval = 1;
	o->len = 1448;
	o->idle = UDP_IDLE_S;
}

static enum proto parse_proto(const char *s)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(proto_name); i++)
		if (!strcmp(s, proto_name[i]))
			return (enum proto)i;
	cli_usage_error("-P: unknown transport '%s' (tcp, tltcp, udp, dccp, sctp)",
			s);
}

/* The options of both ends: which end, transport, address, timing. */
static bool flow_opt(int c, const char *arg, struct opts *o)
{
	switch (c) {
	case 's':
		o->server = true;
		return true;
	case 'c':
		o->host = arg;
		return true;
	case 'P':
		o->proto = parse_proto(arg);
		return true;
	case 'p':
		parse_num(arg, "-p", 1, 65535);
		o->port = arg;
		return true;
	case '4':
		o->family = AF_INET;
		return true;
	case '6':
		o->family = AF_INET6;
		return true;
	case 't':
		o->duration = parse_num(arg, "-t", 0.1, 86400);
		return true;
	case 'i':
		o->interval = parse_num(arg, "-i", 0.01, 3600);
		return true;
	case 'o':
		o->out = arg;
		return true;
	}
	return false;
}

/* The sender's transport options. */
static bool transport_opt(int c, const char *arg, struct opts *o)
{
	switch (c) {
	case 'w':
		o->wait = parse_num(arg, "-w", 0, 3600);
		return true;
	case 'C':
		if (strlen(arg) >= TCP_CA_NAME_MAX)
			cli_usage_error("-C: '%s' is longer than %d characters",
					arg, TCP_CA_NAME_MAX - 1);
		o->cc = arg;
		return true;
	case 'M':
		o->mss = (int)parse_num(arg, "-M", 88, 65495);
		return true;
	case 'K':
		o->ccid = (int)parse_num(arg, "-K", 2, 3);
		if (o->ccid != atof(arg))
			cli_usage_error("-K: CCID is 2 or 3");
		return true;
	case 'T':
		o->ttl_ms = (long)parse_num(arg, "-T", 1, 3600000);
		return true;
	case 'A':
		o->ahead = true;
		return true;
	case 'a':
		o->arrival = true;
		return true;
	}
	return false;
}

/* The sender's traffic pattern. */
static bool pattern_opt(int c, const char *arg, struct opts *o, bool *len)
{
	static const double on_lo[] = { 0.001, 0.001 };
	static const double on_hi[] = { 3600, 3600 };
	static const double ramp_lo[] = { 1, 0.001 };
	static const double ramp_hi[] = { 100e9, 3600 };
	static const double sec_lo[] = { sizeof(struct sec_hdr), 0.001, 0.001 };
	static const double sec_hi[] = { 16e6, 3600, 3600 };
	double v[3];

	switch (c) {
	case 'O':
		parse_tuple(arg, "-O", 2, v, on_lo, on_hi);
		o->on = v[0];
		o->off = v[1];
		return true;
	case 'D':
		parse_tuple(arg, "-D", 3, v, sec_lo, sec_hi);
		o->sec_size = (long)v[0];
		o->sec_period = v[1];
		o->sec_deadline = v[2];
		return true;
	case 'r':
		o->rate = parse_num(arg, "-r", 1000, 100e9);
		return true;
	case 'R':
		parse_tuple(arg, "-R", 2, v, ramp_lo, ramp_hi);
		o->ramp_step = v[0];
		o->ramp_period = v[1];
		return true;
	case 'l':
		o->len = (long)parse_num(arg, "-l", sizeof(struct udp_hdr), 65507);
		*len = true;
		return true;
	}
	return false;
}

/* The receiver's options. */
static bool receiver_opt(int c, const char *arg, struct opts *o, bool *idle)
{
	switch (c) {
	case 'W':
		o->window = (long)parse_num(arg, "-W", 1024, 1 << 30);
		return true;
	case 'S':
		o->trace = arg;
		return true;
	case 'I':
		o->idle = parse_num(arg, "-I", 0, 86400);
		*idle = true;
		return true;
	}
	return false;
}

/* Each option at the end it applies to. */
static void check_roles(const struct opts *o, const struct given *g)
{
	if (o->server == !!o->host)
		cli_usage_error("give exactly one of -s and -c HOST");
	if (o->server && (o->cc || o->rate || g->len || o->wait || o->ccid ||
			  o->mss || o->ttl_ms || o->on || o->sec_size || o->ahead ||
			  o->arrival || o->ramp_step))
		cli_usage_error("-C, -M, -K, -T, -r, -R, -l, -O, -D, -A, -a and -w are client options");
	if (o->ramp_step && !o->rate)
		cli_usage_error("-R raises a constant rate: give the starting rate with -r");
	if (o->ahead && (o->proto != P_TLTCP || !o->sec_size))
		cli_usage_error("-A applies to TLTCP sections (-P tltcp -D ...) only");
	if (o->arrival && (o->proto != P_TLTCP || !o->sec_size))
		cli_usage_error("-a applies to TLTCP sections (-P tltcp -D ...) only");
	if (o->arrival && o->ahead)
		cli_usage_error("-a and -A are two ways to abandon ahead: give one");
	if (o->host && (o->window || o->trace || g->idle))
		cli_usage_error("-W, -S and -I are server options (the receiver's)");
}

/* Each option with the transports it applies to. */
static void check_transport(const struct opts *o, const struct given *g)
{
	if (g->idle && o->proto != P_UDP)
		cli_usage_error("-I (silence that ends the flow) applies to UDP only");
	if (o->window && !IS_TCP(o->proto))
		cli_usage_error("-W (TCP_WINDOW_CLAMP) applies to TCP and TLTCP only");
	if (o->trace && o->proto == P_UDP)
		cli_usage_error("-S (sequence trace) applies to stream transports, not UDP");
	if (o->ttl_ms && o->proto != P_SCTP)
		cli_usage_error("-T (PR-SCTP lifetime) applies to SCTP only");
	if (o->sec_size && o->proto == P_DCCP)
		cli_usage_error("-D: sections over DCCP are not supported");
	if (o->sec_size && o->rate)
		cli_usage_error("-D sets the rate (SIZE every PERIOD): drop -r");
	if (o->sec_size && o->proto == P_UDP &&
	    o->len <= (long)sizeof(struct sec_hdr))
		cli_usage_error("-l %ld: datagrams of a section carry a %zu-byte header",
				o->len, sizeof(struct sec_hdr));
	if ((o->cc || o->mss) && !IS_TCP(o->proto))
		cli_usage_error("-C and -M apply to TCP and TLTCP only");
	if (o->ccid && o->proto != P_DCCP)
		cli_usage_error("-K applies to DCCP only");
}

/* DCCP's defaults, and a flow that can be measured. */
static void check_flow(struct opts *o, const struct given *g)
{
	if (o->proto == P_DCCP) {
		/* before anything listens or connects */
		dccp_require(o->family == AF_INET6 ? AF_INET6 : AF_INET);
		if (!o->ccid)
			o->ccid = 2;
		if (!g->len)
			o->len = 1000;
	}
	if (o->proto == P_UDP && !o->rate && !o->sec_size && o->host)
		cli_usage_error("UDP needs a rate (-r): greedy UDP would only measure the sender's CPU");
	if (o->interval > o->duration && o->host)
		cli_usage_error("-i %g is longer than the flow (-t %g)", o->interval,
				o->duration);
}

void parse_opts(int argc, char **argv, struct opts *o)
{
	const char *optstring = "sc:P:p:46t:i:w:C:M:K:T:O:D:Aar:R:l:W:S:I:o:h";
	struct given g = { 0 };
	int c;

	set_defaults(o);
	while ((c = getopt(argc, argv, optstring)) != -1) {
		if (flow_opt(c, optarg, o) || transport_opt(c, optarg, o) ||
		    pattern_opt(c, optarg, o, &g.len) ||
		    receiver_opt(c, optarg, o, &g.idle))
			continue;
		usage();
		exit(c == 'h' ? 0 : 2);
	}
	if (optind != argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	check_roles(o, &g);
	check_transport(o, &g);
	check_flow(o, &g);
}
