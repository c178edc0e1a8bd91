/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flowgen (flowgen.c): what its parts share.  options.c reads the command
 * line, transport.c opens and tunes the sockets of each transport and
 * samples what they say about themselves, sender.c and receiver.c move
 * the data, report.c counts it per interval and writes the JSON report;
 * sections.c keeps the receiver's account of sections (sections.h).
 */
#ifndef FLOWGEN_H
#define FLOWGEN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <linux/tltcp.h>

#include "sections.h"

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

enum proto { P_TCP, P_UDP, P_DCCP, P_SCTP, P_TLTCP, P_NPROTO };

extern const char *const proto_name[P_NPROTO];

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
	bool arrival;		/* TLTCP: TL_ARRIVAL_ON (arrival-aware) */
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

/* What a flow measured, reported at its end. */
struct results {
	struct interval *ivs;		/* MAX_INTERVALS of them */
	int n_ivs;			/* used so far */
	struct sec_rx sec_rx;		/* receiver: sections */
	uint64_t sec_offered, sec_offered_bytes;	/* sender: sections */
	uint64_t sec_written;		/* sender: handed over whole */
	/* TLTCP: the module's counters at the end of the flow */
	struct tl_info tl_info;
	bool tl_have_info;
	int tl_drained;			/* sender: queue drained before
					 * close; -1: not known
					 */
	/* UDP receiver: datagrams the kernel dropped because the socket's
	 * receive buffer was full (SO_RXQ_OVFL), up to the last one received.
	 */
	uint32_t udp_rcvbuf_drops;
};

/* flowgen.c: set by SIGALRM (sender), SIGTERM or SIGINT (receiver) */
extern volatile sig_atomic_t stop;
void on_stop(int sig);

/* options.c */
void usage(void);
void parse_opts(int argc, char **argv, struct opts *o);

/* transport.c */
int open_server(const struct opts *o);
int connect_client(const struct opts *o);
void tltcp_attach(int fd);
/* Exits, saying so, if the kernel has no DCCP for the family. */
void dccp_require(int family);
void tltcp_get_info(struct results *r, int fd);
void set_window_clamp(const struct opts *o, int fd);
void sample_tcp_info(int fd, struct interval *iv);
/* What the transport says about itself, after a write. */
void sample(const struct opts *o, int fd, struct interval *iv);

/* sender.c */
void send_flow(const struct opts *o, struct results *r);

/* receiver.c */
void serve_stream(const struct opts *o, struct results *r, int lfd);
void serve_udp(const struct opts *o, struct results *r, int fd);

/* report.c */
/* The interval that time t_ns falls in, counted from start_ns. */
struct interval *interval_at(struct results *r, uint64_t start_ns,
			     uint64_t t_ns, double len);
/* Wall-clock time of a CLOCK_MONOTONIC time. */
double epoch_of(uint64_t mono_ns);
void report(const struct opts *o, const struct results *r, const char *role,
	    double secs, double epoch, const char *cc);

#endif /* FLOWGEN_H */
