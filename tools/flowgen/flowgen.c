// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen: one flow of test traffic, measured where it counts.
 *
 *   flowgen -s [-P tcp|tltcp|udp|dccp|sctp] [-p PORT] [-4|-6] [-i SECS]
 *           [-W BYTES] [-S FILE] [-I SECS] [-o FILE]
 *   flowgen -c HOST [-P tcp|tltcp|udp|dccp|sctp] [-p PORT] [-t SECS]
 *           [-i SECS] [-o FILE] [-C CONGESTION] [-M MSS] [-K CCID]
 *           [-T LIFETIME_MS] [-r RATE [-R STEP,PERIOD] -l BYTES] [-O ON,OFF]
 *           [-D SIZE,PERIOD,DEADLINE [-A]] [-w SECS]
 *
 * The server receives one flow and reports, per interval, the bytes its
 * application read: throughput measured at the receiver.  The client sends
 * for -t seconds, greedily or at a constant bit rate (-r bit/s in datagrams
 * or writes of -l bytes), and reports per interval the bytes it wrote and,
 * for TCP, what TCP_INFO says (cwnd, ssthresh, RTT and its variation,
 * segments sent and retransmitted).  -M clamps the TCP segment size, so
 * that experiments can use the small packets of a paper's simulations.
 * Reports are JSON (-o FILE, default standard output); "epoch" is the
 * wall-clock time of interval 0, for lining up the flows of one run.
 *
 * DCCP (-P dccp) uses the kernel's DCCP with CCID 2 (TCP-like) or 3
 * (TFRC), chosen with -K; packets are -l bytes (default 1000).  The kernel
 * refuses a send while its transmit queue is full (EAGAIN, even on a
 * blocking socket), so a greedy DCCP sender retries after a short sleep.
 * For CCID 3 the sender also reports what TFRC computes: the allowed rate
 * X, the receive rate X_recv, the loss event rate p and the RTT.
 *
 * SCTP (-P sctp) is one-to-one style; -T gives every message a PR-SCTP
 * lifetime (timed reliability), and the sender reports how many messages
 * SCTP abandoned, unsent or sent.
 *
 * TLTCP (-P tltcp) is a TCP connection with the "tltcp" upper-layer
 * protocol attached on both ends (include/uapi/linux/tltcp.h).  Sections
 * go with sendmsg(MSG_TL) and a TL_DEADLINE at the section's deadline, so
 * the module abandons what it could not send in time; the receiver reads
 * with recvmsg(MSG_TL) and counts the gaps it is told of.  Without -D the
 * client writes plainly (reliable sections for the module).  Both ends
 * report the module's TL_INFO counters.  The deadline is the sender's: a
 * byte sent just before it arrives after it.  -A tells the module to
 * abandon a section one smoothed RTT (TCP_INFO, at the sendmsg call)
 * before its deadline instead, so that what it sends can still arrive in
 * time: the paper's receiver-relative deadlines.
 *
 * -W clamps the receiver's window (TCP_WINDOW_CLAMP, TCP and TLTCP) and
 * -S writes a sequence trace, one CSV line per read: the time since the
 * receiver's epoch, the stream offset of the first byte, the length, and
 * "data" or (TLTCP) "gap".
 *
 * Traffic patterns: greedy (default), constant bit rate (-r, -l), a rate
 * that rises by STEP bit/s every PERIOD seconds (-R, from -r: the growing
 * unresponsive sources of a congestion collapse), on/off
 * (-O: send for ON seconds, pause OFF, in either mode), and sections with
 * deadlines (-D, see sections.h), which the receiver recognises and
 * reports on: bytes and sections delivered before their deadline, and
 * sections missing.  Over SCTP each section is one message whose lifetime
 * ends at its deadline.
 *
 * UDP datagrams carry a sequence number and the send time, so the receiver
 * counts losses and one-way delay (exact between network namespaces, which
 * share CLOCK_MONOTONIC).  Of the losses, those the receiving socket's own
 * full buffer caused (SO_RXQ_OVFL) are reported apart, as rcvbuf_drops: a
 * receiver that did not keep up, not the network.  A UDP flow ends with
 * END datagrams, or when the receiver hears nothing for two seconds (-I:
 * SECS, 0 = never).
 *
 * Exit status: 0 on success, 1 on a run-time failure, 2 on bad arguments.
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/dccp.h>
#include <linux/sctp.h>
#include <linux/tcp.h>
#include <linux/tltcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cli.h"
#include "parse.h"
#include "sections.h"
#include "tltcp_msg.h"

#ifndef TCP_CA_NAME_MAX
#define TCP_CA_NAME_MAX	16
#endif
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_INTERVALS	100000
#define BUF_SIZE	(128 * 1024)
/* Greedy TCP writes: small enough that TCP_INFO, sampled after each
 * write, is fresh in every interval even on slow links.
 */
#define TCP_WRITE	(16 * 1024)
#define NOTSENT_LOWAT	(128 * 1024)
#define UDP_MAGIC	0x666c6f77u	/* "flow" */
#define UDP_END		1u
#define UDP_IDLE_S	2.0

#define DCCP_SERVICE	0x464c4f57u	/* "FLOW" */
#define DCCP_SOCKOPT_CCID_TX_INFO_	192

enum proto { P_TCP, P_UDP, P_DCCP, P_SCTP, P_TLTCP };

static const char *const proto_name[] = { "tcp", "udp", "dccp", "sctp",
					  "tltcp" };

/* TCP and TLTCP: the same TCP underneath. */
#define IS_TCP(p)	((p) == P_TCP || (p) == P_TLTCP)
/* How long a TLTCP sender waits at the end for its queue to drain and the
 * receiver to close, beyond the deadline of the last section.
 */
#define TLTCP_DRAIN_S	5
#define TLTCP_DRAIN_MAX_S	30

/* What CCID 3 reports (include/linux/tfrc.h, not part of the UAPI). */
struct tfrc_tx_info {
	uint64_t x;		/* allowed rate, bytes/s << 6 */
	uint64_t x_recv;	/* receive rate, bytes/s << 6 */
	uint32_t x_calc;	/* rate from the equation, bytes/s */
	uint32_t rtt;		/* us */
	uint32_t p;		/* loss event rate x 1e6 */
	uint32_t rto;		/* us */
	uint32_t ipi;		/* inter-packet interval, us */
};

struct opts {
	bool server;
	const char *host;
	enum proto proto;
	const char *port;
	int family;
	double duration;
	double interval;
	double wait;
	const char *cc;
	int mss;		/* TCP_MAXSEG, 0 = the path's */
	int ccid;		/* DCCP: 2 or 3 */
	double rate;		/* bit/s, 0 = greedy */
	double ramp_step;	/* bit/s added every ramp_period, 0 = none */
	double ramp_period;	/* seconds */
	long len;		/* bytes per write or datagram */
	long ttl_ms;		/* SCTP: PR-SCTP message lifetime */
	double on, off;		/* on/off pattern, seconds; 0 = always on */
	long sec_size;		/* sections: bytes, 0 = no sections */
	double sec_period, sec_deadline;	/* seconds */
	bool ahead;		/* TLTCP: abandon one RTT before the deadline */
	long window;		/* receiver: TCP_WINDOW_CLAMP, 0 = none */
	const char *trace;	/* receiver: sequence trace (CSV) */
	double idle;		/* UDP receiver: silence that ends it, 0 = none */
	const char *out;
};

/* Header of every UDP datagram (network byte order). */
struct udp_hdr {
	uint32_t magic;
	uint32_t flags;
	uint64_t seq;
	uint64_t sent_ns;
};

struct interval {
	double start;
	double secs;
	uint64_t bytes;
	/* sender, TCP */
	uint32_t cwnd, ssthresh, rtt_us, rttvar_us, retrans, segs_out;
	/* sender, DCCP CCID 3 */
	bool tfrc;
	double x_bps, x_recv_bps, p;
	/* receiver, UDP */
	uint64_t pkts, lost;
	double owd_sum;		/* seconds */
	/* receiver, sections */
	uint64_t on_time_bytes;
	/* receiver, TLTCP: bytes of the gaps reported */
	uint64_t gap_bytes;
	/* sender, SCTP: messages abandoned so far */
	bool prsctp;
	uint64_t abandoned_unsent, abandoned_sent;
};

static struct sec_rx sec_rx;
static uint64_t sec_offered, sec_offered_bytes;
/* TLTCP: the module's counters at the end of the flow */
static struct tl_info tl_info;
static bool tl_have_info;
static int tl_drained = -1;		/* sender: queue drained before close */
/* UDP receiver: datagrams the kernel dropped because the socket's receive
 * buffer was full (SO_RXQ_OVFL), up to the last one received.
 */
static uint32_t udp_rcvbuf_drops;

static struct interval *ivs;
static int n_ivs;
static volatile sig_atomic_t stop;

static void usage(void)
{
	fprintf(stderr,
		"usage: flowgen -s [-P tcp|tltcp|udp|dccp|sctp] [-p PORT] [-4|-6] [-i SECS]\n"
		"               [-W BYTES] [-S FILE] [-I IDLE_SECS] [-o FILE]\n"
		"       flowgen -c HOST [-P tcp|tltcp|udp|dccp|sctp] [-p PORT] [-4|-6] [-t SECS]\n"
		"               [-i SECS] [-C CONGESTION] [-M MSS] [-K 2|3] [-T LIFETIME_MS]\n"
		"               [-r RATE_BIT_S [-R STEP_BIT_S,PERIOD]] [-l BYTES] [-O ON,OFF]\n"
		"               [-D SIZE,PERIOD,DEADLINE [-A]] [-w START_DELAY] [-o FILE]\n");
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

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const double on_lo[] = { 0.001, 0.001 };
	static const double on_hi[] = { 3600, 3600 };
	static const double ramp_lo[] = { 1, 0.001 };
	static const double ramp_hi[] = { 100e9, 3600 };
	static const double sec_lo[] = { sizeof(struct sec_hdr), 0.001, 0.001 };
	static const double sec_hi[] = { 16e6, 3600, 3600 };
	double v[3];
	bool have_len = false, have_idle = false;
	unsigned int i;
	int c;

	memset(o, 0, sizeof(*o));
	o->proto = P_TCP;
	o->port = "5301";
	o->family = AF_UNSPEC;
	o->duration = 10;
	o->interval = 1;
	o->len = 1448;
	o->idle = UDP_IDLE_S;

	while ((c = getopt(argc, argv, "sc:P:p:46t:i:w:C:M:K:T:O:D:Ar:R:l:W:S:I:o:h")) != -1) {
		switch (c) {
		case 's':
			o->server = true;
			break;
		case 'c':
			o->host = optarg;
			break;
		case 'P':
			for (i = 0; i < ARRAY_SIZE(proto_name); i++)
				if (!strcmp(optarg, proto_name[i]))
					break;
			if (i == ARRAY_SIZE(proto_name))
				cli_usage_error("-P: unknown transport '%s' (tcp, tltcp, udp, dccp, sctp)",
						optarg);
			o->proto = (enum proto)i;
			break;
		case 'p':
			parse_num(optarg, "-p", 1, 65535);
			o->port = optarg;
			break;
		case '4':
			o->family = AF_INET;
			break;
		case '6':
			o->family = AF_INET6;
			break;
		case 't':
			o->duration = parse_num(optarg, "-t", 0.1, 86400);
			break;
		case 'i':
			o->interval = parse_num(optarg, "-i", 0.01, 3600);
			break;
		case 'w':
			o->wait = parse_num(optarg, "-w", 0, 3600);
			break;
		case 'C':
			if (strlen(optarg) >= TCP_CA_NAME_MAX)
				cli_usage_error("-C: '%s' is longer than %d characters",
						optarg, TCP_CA_NAME_MAX - 1);
			o->cc = optarg;
			break;
		case 'M':
			o->mss = (int)parse_num(optarg, "-M", 88, 65495);
			break;
		case 'K':
			o->ccid = (int)parse_num(optarg, "-K", 2, 3);
			if (o->ccid != atof(optarg))
				cli_usage_error("-K: CCID is 2 or 3");
			break;
		case 'T':
			o->ttl_ms = (long)parse_num(optarg, "-T", 1, 3600000);
			break;
		case 'O':
			parse_tuple(optarg, "-O", 2, v, on_lo, on_hi);
			o->on = v[0];
			o->off = v[1];
			break;
		case 'D':
			parse_tuple(optarg, "-D", 3, v, sec_lo, sec_hi);
			o->sec_size = (long)v[0];
			o->sec_period = v[1];
			o->sec_deadline = v[2];
			break;
		case 'r':
			o->rate = parse_num(optarg, "-r", 1000, 100e9);
			break;
		case 'R':
			parse_tuple(optarg, "-R", 2, v, ramp_lo, ramp_hi);
			o->ramp_step = v[0];
			o->ramp_period = v[1];
			break;
		case 'l':
			o->len = (long)parse_num(optarg, "-l", sizeof(struct udp_hdr),
						 65507);
			have_len = true;
			break;
		case 'A':
			o->ahead = true;
			break;
		case 'W':
			o->window = (long)parse_num(optarg, "-W", 1024, 1 << 30);
			break;
		case 'S':
			o->trace = optarg;
			break;
		case 'I':
			o->idle = parse_num(optarg, "-I", 0, 86400);
			have_idle = true;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'h':
			usage();
			exit(0);
		default:
			usage();
			exit(2);
		}
	}
	if (optind != argc)
		cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (o->server == !!o->host)
		cli_usage_error("give exactly one of -s and -c HOST");
	if (o->server && (o->cc || o->rate || have_len || o->wait || o->ccid ||
			  o->mss || o->ttl_ms || o->on || o->sec_size || o->ahead ||
			  o->ramp_step))
		cli_usage_error("-C, -M, -K, -T, -r, -R, -l, -O, -D, -A and -w are client options");
	if (o->ramp_step && !o->rate)
		cli_usage_error("-R raises a constant rate: give the starting rate with -r");
	if (o->ahead && (o->proto != P_TLTCP || !o->sec_size))
		cli_usage_error("-A applies to TLTCP sections (-P tltcp -D ...) only");
	if (o->host && (o->window || o->trace || have_idle))
		cli_usage_error("-W, -S and -I are server options (the receiver's)");
	if (have_idle && o->proto != P_UDP)
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
	if (o->proto == P_DCCP) {
		if (!o->ccid)
			o->ccid = 2;
		if (!have_len)
			o->len = 1000;
	}
	if (o->proto == P_UDP && !o->rate && !o->sec_size && o->host)
		cli_usage_error("UDP needs a rate (-r): greedy UDP would only measure the sender's CPU");
	if (o->interval > o->duration && o->host)
		cli_usage_error("-i %g is longer than the flow (-t %g)", o->interval,
				o->duration);
}

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

static struct interval *interval_at(uint64_t start_ns, uint64_t t_ns,
				    double len)
{
	int i = (int)((double)(t_ns - start_ns) / 1e9 / len);

	if (i >= MAX_INTERVALS)
		i = MAX_INTERVALS - 1;
	while (n_ivs <= i) {
		ivs[n_ivs].start = n_ivs * len;
		ivs[n_ivs].secs = len;
		n_ivs++;
	}
	return &ivs[i];
}

static void sample_tcp_info(int fd, struct interval *iv)
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

/* The module is there: attaching it to an unconnected socket fails with
 * ENOTCONN if so, ENOENT if not (TCP_ULP loads it only for root).
 */
static void tltcp_probe(int fd)
{
	if (tl_attach(fd) && errno == ENOENT)
		cli_die("tltcp not available: modprobe tltcp");
}

/* socket() for the transport, with a hint when its module is missing. */
static int open_socket(const struct opts *o, int family, int type, int proto)
{
	int fd = socket(family, type, proto);

	if (fd < 0 && o->proto == P_DCCP &&
	    (errno == ESOCKTNOSUPPORT || errno == EPROTONOSUPPORT ||
	     errno == EAFNOSUPPORT))
		cli_die("DCCP not available: modprobe %s",
			family == AF_INET6 ? "dccp_ipv6" : "dccp_ipv4");
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
static void tltcp_attach(int fd)
{
	if (tl_attach(fd)) {
		if (errno == ENOENT)
			cli_die("tltcp not available: modprobe tltcp");
		cli_die("TCP_ULP tltcp: %s", strerror(errno));
	}
}

static void tltcp_get_info(int fd)
{
	if (!tl_get_info(fd, &tl_info))
		tl_have_info = true;
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

static double epoch_of(uint64_t mono_ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9 - (now_ns() - mono_ns) / 1e9;
}

/* The module's counters, as a JSON object. */
static void report_tl_info(FILE *f)
{
	fprintf(f, ", \"tltcp\": {\"sections_abandoned\": %llu",
		(unsigned long long)(tl_info.sections_abandoned_unsent +
				     tl_info.sections_abandoned_partial));
	tl_info_json_members(f, &tl_info, ", ", ", ");
	if (tl_drained >= 0)
		fprintf(f, ", \"drained\": %s", tl_drained ? "true" : "false");
	fputc('}', f);
}

static void report(const struct opts *o, const char *role, double secs,
		   double epoch, const char *cc)
{
	const struct interval *sctp = NULL;
	FILE *f = stdout;
	uint64_t total = 0, pkts = 0, lost = 0;
	bool sections = o->server ? sec_rx.sections || sec_rx.gaps :
				    o->sec_size > 0;
	double owd = 0;
	int i;

	if (o->out) {
		f = fopen(o->out, "w");
		if (!f)
			cli_die("%s: %s", o->out, strerror(errno));
	}
	fprintf(f, "{\n \"tool\": \"flowgen\",\n \"role\": \"%s\",\n"
		" \"transport\": \"%s\",\n \"epoch\": %.6f,\n", role,
		proto_name[o->proto], epoch);
	if (cc)
		fprintf(f, " \"congestion\": \"%s\",\n", cc);
	if (o->proto == P_DCCP && !o->server)
		fprintf(f, " \"ccid\": %d,\n", o->ccid);
	fprintf(f, " \"intervals\": [");
	for (i = 0; i < n_ivs; i++) {
		const struct interval *iv = &ivs[i];

		total += iv->bytes;
		pkts += iv->pkts;
		lost += iv->lost;
		owd += iv->owd_sum;
		fprintf(f, "%s\n  {\"start\": %.3f, \"seconds\": %.3f, "
			"\"bytes\": %llu, \"bits_per_second\": %.0f",
			i ? "," : "", iv->start, iv->secs,
			(unsigned long long)iv->bytes,
			iv->bytes * 8.0 / iv->secs);
		if (IS_TCP(o->proto) && !o->server)
			fprintf(f, ", \"cwnd\": %u, \"ssthresh\": %u, "
				"\"rtt_us\": %u, \"rttvar_us\": %u, "
				"\"retransmits\": %u, \"segs_out\": %u",
				iv->cwnd, iv->ssthresh, iv->rtt_us,
				iv->rttvar_us, iv->retrans, iv->segs_out);
		if (o->proto == P_UDP && o->server)
			fprintf(f, ", \"packets\": %llu, \"lost\": %llu",
				(unsigned long long)iv->pkts,
				(unsigned long long)iv->lost);
		if (iv->tfrc)
			fprintf(f, ", \"x\": %.0f, \"x_recv\": %.0f, "
				"\"p\": %.6f, \"rtt_us\": %u", iv->x_bps,
				iv->x_recv_bps, iv->p, iv->rtt_us);
		if (sections && o->server)
			fprintf(f, ", \"on_time_bytes\": %llu",
				(unsigned long long)iv->on_time_bytes);
		if (o->proto == P_TLTCP && o->server)
			fprintf(f, ", \"gap_bytes\": %llu",
				(unsigned long long)iv->gap_bytes);
		if (iv->prsctp) {
			sctp = iv;
			fprintf(f, ", \"abandoned_unsent\": %llu, "
				"\"abandoned_sent\": %llu",
				(unsigned long long)iv->abandoned_unsent,
				(unsigned long long)iv->abandoned_sent);
		}
		fputc('}', f);
	}
	fprintf(f, "\n ],\n \"summary\": {\"seconds\": %.3f, \"bytes\": %llu, "
		"\"bits_per_second\": %.0f", secs, (unsigned long long)total,
		secs > 0 ? total * 8.0 / secs : 0.0);
	if (o->proto == P_UDP && o->server)
		fprintf(f, ", \"packets\": %llu, \"lost\": %llu, "
			"\"rcvbuf_drops\": %u, \"mean_one_way_delay\": %.6f",
			(unsigned long long)pkts, (unsigned long long)lost,
			udp_rcvbuf_drops, pkts ? owd / pkts : 0.0);
	if (sections && o->server)
		fprintf(f, ", \"sections\": %llu, \"sections_complete\": %llu, "
			"\"sections_on_time\": %llu, \"on_time_bytes\": %llu, "
			"\"late_bytes\": %llu, \"sections_missing\": %llu",
			(unsigned long long)sec_rx.sections,
			(unsigned long long)sec_rx.complete,
			(unsigned long long)sec_rx.on_time,
			(unsigned long long)sec_rx.on_time_bytes,
			(unsigned long long)sec_rx.late_bytes,
			(unsigned long long)sec_rx.missing);
	if (sections && o->server && o->proto == P_TLTCP)
		fprintf(f, ", \"gap_bytes\": %llu, \"gaps\": %llu",
			(unsigned long long)sec_rx.gap_bytes,
			(unsigned long long)sec_rx.gaps);
	if (sections && !o->server)
		fprintf(f, ", \"sections_offered\": %llu, \"bytes_offered\": %llu",
			(unsigned long long)sec_offered,
			(unsigned long long)sec_offered_bytes);
	if (o->ahead)
		fprintf(f, ", \"deadline_ahead\": true");
	if (sctp)
		fprintf(f, ", \"abandoned_unsent\": %llu, \"abandoned_sent\": %llu",
			(unsigned long long)sctp->abandoned_unsent,
			(unsigned long long)sctp->abandoned_sent);
	if (tl_have_info)
		report_tl_info(f);
	fprintf(f, "}\n}\n");
	if (f != stdout && fclose(f))
		cli_die("%s: %s", o->out, strerror(errno));
}

/* -W: the receiver offers at most o->window bytes.  Receive buffer
 * autotuning raises the clamp along with the buffer (6.1's
 * tcp_rcv_space_adjust()) unless the application set the buffer itself,
 * so set it too: twice the window, which SO_RCVBUF doubles again for
 * overhead, leaves room for the segments and keeps the clamp.
 */
static void set_window_clamp(const struct opts *o, int fd)
{
	int v = (int)o->window, buf = 2 * v;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf)))
		cli_die("-W %ld: SO_RCVBUF: %s", o->window, strerror(errno));
	if (setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v, sizeof(v)))
		cli_die("-W %ld: %s", o->window, strerror(errno));
}

static int open_server(const struct opts *o)
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
static void serve_stream(const struct opts *o, int lfd)
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
		iv = interval_at(start, t, o->interval);
		if (tl) {
			off = rec.stream_off;
			trace_line(trace, start, t, off, n, gap);
			if (gap)
				iv->gap_bytes += n;
			else
				iv->bytes += n;
			iv->on_time_bytes += sec_rx_tl(&sec_rx, rec.section,
						       rec.sec_off,
						       gap ? NULL : (uint8_t *)buf,
						       n, t);
			continue;
		}
		trace_line(trace, start, t, off, n, false);
		off += n;
		iv->bytes += n;
		if (sections)
			iv->on_time_bytes += sec_rx_stream(&sec_rx,
							   (uint8_t *)buf, n, t);
	}
	sec_rx_end(&sec_rx);
	if (tl)
		tltcp_get_info(fd);
	close(fd);
	if (sec_rx.bad && (sections || sec_rx.sections))
		fprintf(stderr, "flowgen: sections: the stream lost its framing\n");
out:
	free(buf);
	if (trace && fclose(trace))
		cli_die("%s: %s", o->trace, strerror(errno));
	report(o, "receiver", start ? (last - start) / 1e9 : 0,
	       start ? epoch_of(start) : 0, NULL);
	if (err)
		cli_die("%s: %s", tl ? "recvmsg" : "read", strerror(err));
}

/* The socket's drop count that came with a datagram, if it did. */
static void udp_note_drops(struct msghdr *mh)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SO_RXQ_OVFL &&
		    c->cmsg_len == CMSG_LEN(sizeof(uint32_t)))
			memcpy(&udp_rcvbuf_drops, CMSG_DATA(c),
			       sizeof(uint32_t));
}

static void serve_udp(const struct opts *o, int fd)
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
			int r = poll(&pfd, 1, o->idle ?
					     (int)(o->idle * 1000) : -1);

			if (r < 0 && errno == EINTR)
				continue;	/* the loop sees a stop */
			if (r == 0)
				break;		/* the sender went quiet */
		}
		n = recvmsg(fd, &mh, 0);
		t = now_ns();
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			cli_die("recv: %s", strerror(errno));
		udp_note_drops(&mh);
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
		iv = interval_at(start, t, o->interval);
		iv->bytes += n;
		iv->pkts++;
		if (section) {
			iv->on_time_bytes += sec_rx_datagram(&sec_rx, &sh, t);
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
	report(o, "receiver", start ? (last - start) / 1e9 : 0,
	       start ? epoch_of(start) : 0, NULL);
}

static int connect_client(const struct opts *o)
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
		if (o->mss && setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &o->mss,
					 sizeof(o->mss)))
			cli_die("-M %d: %s", o->mss, strerror(errno));
		if (o->cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->cc,
					strlen(o->cc)))
			cli_die("congestion control '%s': %s%s", o->cc,
				strerror(errno), errno == ENOENT ?
				" (not built or module not loadable)" :
				errno == EPERM ? " (not in net.ipv4.tcp_allowed_congestion_control)" : "");
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
	return fd;
}

/* SIGALRM ends a sender's flow; SIGTERM or SIGINT a receiver's. */
static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* What the transport says about itself, after a write. */
static void sample(const struct opts *o, int fd, struct interval *iv)
{
	if (IS_TCP(o->proto))
		sample_tcp_info(fd, iv);
	else if (o->proto == P_DCCP)
		sample_tfrc(fd, iv);
	else if (o->proto == P_SCTP)
		sample_sctp(fd, iv);
}

/* In an off period of -O ON,OFF at time t: when the next on period starts. */
static uint64_t off_until(const struct opts *o, uint64_t start, uint64_t t)
{
	uint64_t cycle = (uint64_t)((o->on + o->off) * 1e9);
	uint64_t on = (uint64_t)(o->on * 1e9);
	uint64_t phase;

	if (!o->on)
		return 0;
	phase = (t - start) % cycle;
	return phase < on ? 0 : t - phase + cycle;
}

/* One section over TLTCP: sendmsg(MSG_TL) with the time left until its
 * deadline (1 ns if none is left: the module abandons it at once); with
 * -A, until one smoothed RTT before it.
 */
static ssize_t send_tl_section(const struct opts *o, int fd, char *sec,
			       size_t len, uint64_t deadline)
{
	uint64_t t = now_ns(), left;

	if (o->ahead) {
		struct tcp_info ti;
		socklen_t tlen = sizeof(ti);

		if (!getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tlen))
			deadline -= (uint64_t)ti.tcpi_rtt * 1000;
	}
	left = deadline > t ? deadline - t : 1;
	return tl_send_section(fd, sec, len, left, 0);
}

/* One section over a stream transport: written whole.  Over SCTP it is
 * one message whose PR-SCTP lifetime ends at the section's deadline; over
 * TLTCP one section with that deadline.
 */
static ssize_t write_section(const struct opts *o, int fd, char *sec,
			     uint64_t deadline)
{
	char cbuf[CMSG_SPACE(sizeof(struct sctp_prinfo))] = { 0 };
	struct iovec iov = { .iov_base = sec, .iov_len = o->sec_size };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	uint64_t t = now_ns();
	struct sctp_prinfo pr = {
		.pr_policy = SCTP_PR_SCTP_TTL,
		.pr_value = deadline > t + 1000000 ?
			    (uint32_t)((deadline - t) / 1000000) : 1,
	};
	struct cmsghdr *c;
	size_t done = 0;
	ssize_t n;

	if (o->proto == P_TLTCP)
		return send_tl_section(o, fd, sec, o->sec_size, deadline);
	if (o->proto == P_SCTP) {
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = IPPROTO_SCTP;
		c->cmsg_type = SCTP_PRINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pr));
		memcpy(CMSG_DATA(c), &pr, sizeof(pr));
		n = sendmsg(fd, &msg, 0);
		if (n < 0 && errno == EMSGSIZE)
			cli_die("-D: a %ld-byte section does not fit one SCTP message",
				o->sec_size);
		return n;
	}
	while (done < (size_t)o->sec_size) {
		n = write(fd, sec + done, o->sec_size - done);
		if (n < 0)
			return done ? (ssize_t)done : n;
		done += n;
	}
	return done;
}

/* Sections: SIZE bytes every PERIOD, each useful until DEADLINE after the
 * application offered it.  TCP and SCTP write each whole; UDP sends it at
 * once, in datagrams of -l bytes that each carry the section's header.
 */
static void send_sections(const struct opts *o, int fd, uint64_t start,
			  uint64_t end)
{
	uint64_t period = (uint64_t)(o->sec_period * 1e9);
	uint64_t life = (uint64_t)(o->sec_deadline * 1e9);
	size_t dlen = (size_t)o->len - sizeof(struct sec_hdr);
	char *sec = calloc(1, o->sec_size);
	char *dgram = calloc(1, o->len);
	uint64_t k, created, t;

	if (!sec || !dgram)
		cli_die("out of memory");
	for (k = 0; !stop && (created = start + k * period) < end; k++) {
		struct interval *iv;
		uint32_t off = 0;
		ssize_t n;

		if (off_until(o, start, created))
			continue;	/* the application is quiet */
		sleep_until(created);
		sec_offered++;
		sec_offered_bytes += o->sec_size;
		if (o->proto != P_UDP) {
			sec_hdr_put(sec, k, o->sec_size, created,
				    created + life, 0, 0);
			n = write_section(o, fd, sec, created + life);
			if (n < 0 && errno != EINTR)
				cli_die("send: %s", strerror(errno));
			iv = interval_at(start, now_ns(), o->interval);
			iv->bytes += n > 0 ? n : 0;
			sample(o, fd, iv);
			continue;
		}
		while (off < (uint32_t)o->sec_size && !stop) {
			size_t left = (size_t)o->sec_size - off;
			uint32_t len = left < dlen ? left : dlen;

			sec_hdr_put(dgram, k, o->sec_size, created,
				    created + life, off, len);
			n = send(fd, dgram, sizeof(struct sec_hdr) + len, 0);
			if (n < 0 && errno != EINTR && errno != ENOBUFS &&
			    errno != ECONNREFUSED)
				cli_die("send: %s", strerror(errno));
			if (n > 0)
				interval_at(start, now_ns(), o->interval)->bytes += n;
			off += len;
		}
	}
	/* The flow lasts its duration even when its last section was handed
	 * over early (TLTCP queues a section and returns, UDP sends it at
	 * once): that section still lives, and the receiver measures to the
	 * end.  Closing at once would cut a section with a long deadline.
	 */
	while (!stop && (t = now_ns()) < end) {
		uint64_t next = t + (uint64_t)(o->interval * 1e9);

		sleep_until(next < end ? next : end);
		sample(o, fd, interval_at(start, now_ns(), o->interval));
	}
	free(sec);
	free(dgram);
}

/* TLTCP at the end of the flow: the FIN follows the sections still queued
 * (each sent or abandoned by its deadline), and the receiver closes once
 * it has read everything.  Wait for that, at most DEADLINE (30 s at most)
 * + 5 s, so that the counters are final: every abandoned byte has
 * reached the receiver as a gap.  Reading also takes the receiver's HELLO
 * record off the socket, without which close() would reset the
 * connection.
 */
static void tltcp_finish(const struct opts *o, int fd)
{
	double wait_s = (o->sec_deadline < TLTCP_DRAIN_MAX_S ?
			 o->sec_deadline : TLTCP_DRAIN_MAX_S) + TLTCP_DRAIN_S;
	uint64_t until = now_ns() + (uint64_t)(wait_s * 1e9);
	char buf[4096];

	tl_drained = 0;
	if (!o->sec_size) {
		/* Plain writes have no deadline to wait for. */
		recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		return;
	}
	if (shutdown(fd, SHUT_WR))
		return;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t t = now_ns();
		ssize_t n;

		if (t >= until)
			break;
		poll(&pfd, 1, (int)((until - t) / 1000000) + 1);
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0) {
			tl_drained = 1;
			break;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
	}
}

/* Nanoseconds from one write or datagram to the next, elapsed_ns into the
 * flow: -r, raised by -R's step at the end of every period.
 */
static double send_gap_ns(const struct opts *o, uint64_t elapsed_ns)
{
	double rate = o->rate;

	if (o->ramp_step)
		rate += o->ramp_step *
			floor(elapsed_ns / 1e9 / o->ramp_period);
	return o->len * 8.0 / rate * 1e9;
}

static void send_flow(const struct opts *o)
{
	char *buf = calloc(1, !IS_TCP(o->proto) ? (size_t)o->len : BUF_SIZE);
	size_t wlen = o->rate || !IS_TCP(o->proto) ? (size_t)o->len : TCP_WRITE;
	double gap_ns = o->rate ? o->len * 8.0 / o->rate * 1e9 : 0;
	uint64_t start, t, end, next, seq = 0;
	char cc[TCP_CA_NAME_MAX] = "";
	socklen_t cclen = sizeof(cc);
	bool greedy_tcp = IS_TCP(o->proto) && !o->rate && !o->sec_size;
	int lowat = NOTSENT_LOWAT;
	struct sigaction sa = { .sa_handler = on_stop };
	int poll_ms = (int)(o->interval * 1000 / 2);
	int fd, i;

	if (!buf)
		cli_die("out of memory");
	if (poll_ms < 1)
		poll_ms = 1;
	if (o->wait)
		usleep((useconds_t)(o->wait * 1e6));
	fd = connect_client(o);
	if (IS_TCP(o->proto))
		getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &cclen);
	/* Keep little unsent data in the socket, so that what the sender
	 * wrote is close to what it sent and the flow ends soon after -t.
	 * TLTCP keeps at most two segments unsent in TCP anyway; its own
	 * queue gets the same bound.
	 */
	if (greedy_tcp && o->proto == P_TCP)
		setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat,
			   sizeof(lowat));
	if (greedy_tcp && o->proto == P_TLTCP &&
	    setsockopt(fd, SOL_TLTCP, TL_SNDQ_LIMIT, &lowat, sizeof(lowat)))
		cli_die("TL_SNDQ_LIMIT: %s", strerror(errno));

	/* A blocked write must not outlast the flow. */
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned int)ceil(o->duration) + 1);

	start = now_ns();
	end = start + (uint64_t)(o->duration * 1e9);
	next = start;
	if (o->sec_size)
		send_sections(o, fd, start, end);
	while (!o->sec_size && !stop && (t = now_ns()) < end) {
		uint64_t resume = off_until(o, start, t);
		struct interval *iv;
		ssize_t n;

		if (resume) {
			sleep_until(resume < end ? resume : end);
			next = resume;	/* a constant rate starts afresh */
			continue;
		}

		if (gap_ns) {
			if (t < next) {
				sleep_until(next);
				continue;
			}
			gap_ns = send_gap_ns(o, next - start);
			next += (uint64_t)gap_ns;
		}
		if (o->proto == P_UDP) {
			struct udp_hdr h = {
				.magic = htonl(UDP_MAGIC),
				.seq = htobe64(seq++),
				.sent_ns = htobe64(now_ns()),
			};

			memcpy(buf, &h, sizeof(h));
		}
		n = send(fd, buf, wlen, greedy_tcp ? MSG_DONTWAIT : 0);
		if (n < 0 && errno == EAGAIN && greedy_tcp) {
			/* Sample TCP_INFO while the send buffer is full, too:
			 * a blocked write would leave intervals without one.
			 */
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, poll_ms);
			sample_tcp_info(fd, interval_at(start, now_ns(),
							o->interval));
			continue;
		}
		if (n < 0 && errno == EAGAIN && o->proto == P_DCCP) {
			/* DCCP's queue is full: CCID decides when it drains. */
			usleep(200);
			if (gap_ns)
				next -= (uint64_t)gap_ns;
			continue;
		}
		if (n < 0) {
			if (errno == EINTR || errno == ENOBUFS ||
			    errno == ECONNREFUSED)
				continue;	/* UDP: dropped, go on */
			cli_die("send: %s", strerror(errno));
		}
		iv = interval_at(start, now_ns(), o->interval);
		iv->bytes += n;
		sample(o, fd, iv);
	}
	t = now_ns();
	if (o->proto == P_UDP) {
		struct udp_hdr h = {
			.magic = htonl(UDP_MAGIC),
			.flags = htonl(UDP_END),
		};

		for (i = 0; i < 3; i++)
			send(fd, &h, sizeof(h), 0);
	}
	if (o->proto == P_TLTCP) {
		tltcp_finish(o, fd);
		tltcp_get_info(fd);
	}
	close(fd);
	free(buf);
	report(o, "sender", (t - start) / 1e9, epoch_of(start),
	       cc[0] ? cc : NULL);
}

int main(int argc, char **argv)
{
	struct opts o;

	cli_prog = "flowgen";
	cli_synopsis = usage;
	parse_opts(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	ivs = calloc(MAX_INTERVALS, sizeof(*ivs));
	if (!ivs)
		cli_die("out of memory");
	if (o.server) {
		/* Stopped from outside, a receiver still reports what it got:
		 * no SA_RESTART, so a blocked read returns.
		 */
		struct sigaction sa = { .sa_handler = on_stop };
		int fd = open_server(&o);

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);

		if (o.proto == P_UDP)
			serve_udp(&o, fd);
		else
			serve_stream(&o, fd);
		close(fd);
	} else {
		send_flow(&o);
	}
	free(ivs);
	return 0;
}
