/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tsm tunnel: UDP datagrams carried over a congestion-controlled
 * connection (Documentation/tsm.rst, "Tunnel").  tunnel_cli.c is the
 * command line, tunnel_client.c and tunnel_server.c the two endpoints'
 * loops, tunnel_sock.c what they share, tunnel_conn.c the connection
 * (wire format, bounded queue, transports), tunnel_redirect.c the
 * nftables redirection.
 */
#ifndef TSM_TUNNEL_H
#define TSM_TUNNEL_H

#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tsm.h"

/* SO_MARK of the tunnel's own UDP sockets; the redirection skips it. */
#define TUN_MARK	0x54534d

/* Wire header (network byte order), then the address, then the payload. */
#define TUN_VERSION	1
#define TUN_T_DATA	1
#define TUN_HDR_LEN	12
#define TUN_MAX_PAYLOAD	65535
#define TUN_MAX_FRAME	(TUN_HDR_LEN + 16 + TUN_MAX_PAYLOAD)

enum tun_kind {
	TUN_DCCP,		/* one datagram per message */
	TUN_TCP,		/* length-delimited frames on a stream */
	TUN_TLTCP,		/* one section per message, with a lifetime */
};

struct tun_transport {
	char name[24];		/* as given: dccp-ccid3, multfrc:2, ... */
	enum tun_kind kind;
	struct tsm_choice ch;
	uint64_t lifetime_ns;	/* TLTCP */
};

struct tun_count {
	uint64_t datagrams;
	uint64_t bytes;
};

static inline void tun_count_add(struct tun_count *c, uint64_t bytes)
{
	c->datagrams++;
	c->bytes += bytes;
}

/* What one endpoint counts, in both directions. */
struct tun_stats {
	struct tun_count udp_in;	/* client: from the application;
					 * server: replies from destinations
					 */
	struct tun_count to_tunnel;	/* handed to the transport */
	struct tun_count drop_full;	/* the queue was full */
	struct tun_count drop_disc;	/* no connection (client), or the
					 * connection went while queued
					 */
	struct tun_count drop_expired;	/* TLTCP: lifetime passed queued */
	struct tun_count drop_other;	/* too big, too many flows, ... */
	struct tun_count from_tunnel;	/* messages out of the transport */
	struct tun_count abandoned;	/* TLTCP sections with a gap */
	struct tun_count udp_out;	/* server: delivered to destinations;
					 * client: replies to the application
					 */
	struct tun_count udp_out_err;	/* sending them failed */
	uint64_t connects;		/* connections made (accepted) */
	uint64_t reconnects;		/* client: made after the first */
	uint64_t connect_failures;
	uint64_t flows_opened;
	uint64_t flows;			/* now */
	uint64_t queued;		/* now */
};

/* One message as the endpoints see it. */
struct tun_msg {
	uint32_t flow;
	struct sockaddr_storage addr;	/* client->server: destination;
					 * server->client: the reply's source
					 */
	const void *data;
	size_t len;
};

struct tun_frame;

/* A connection of the tunnel, with its bounded send queue. */
struct tun_conn {
	int fd;
	const struct tun_transport *tp;
	struct tun_stats *st;
	unsigned int qmax;
	/* the user-space queue (TCP, TLTCP): a ring of qmax frames */
	struct tun_frame **q;
	unsigned int qhead, qlen;
	size_t out_off;			/* bytes of the head already written */
	/* receiving */
	char *rbuf;
	size_t rlen;
	bool sec_gap;			/* TLTCP: this section had a gap */
	size_t sec_len;
};

enum tun_send_result {
	TUN_SENT,
	TUN_QUEUED,
	TUN_DROPPED,
};

/* tunnel_conn.c */
int tun_transport_parse(const char *s, uint64_t lifetime_ns,
			struct tun_transport *tp, struct tsm_error *err);
/*
 * The default: dccp-ccid3 where the kernel has DCCP with CCID 3; where
 * not (Linux 6.16 removed DCCP), TFRC's equation over TCP with the same
 * bounded queue, which err->msg then says in one line (err->code 0).
 */
int tun_transport_default(uint64_t lifetime_ns, struct tun_transport *tp,
			  struct tsm_error *err);
int tun_conn_init(struct tun_conn *c, int fd, const struct tun_transport *tp,
		  unsigned int qmax, struct tun_stats *st,
		  struct tsm_error *err);
/* Frees the queue (counting it in drop_disc) and closes the socket. */
void tun_conn_close(struct tun_conn *c);
/* Queues or sends one message; a negative errno if the connection broke. */
int tun_conn_send(struct tun_conn *c, const struct tun_msg *m);
/* Writes what the queue holds while the transport takes it. */
int tun_conn_flush(struct tun_conn *c);
bool tun_conn_pending(const struct tun_conn *c);
/*
 * Reads what arrived and calls deliver for each whole message; 0, or a
 * negative errno (-EPIPE at the end of the stream, -EPROTO for garbage).
 */
int tun_conn_recv(struct tun_conn *c,
		  void (*deliver)(void *arg, const struct tun_msg *m),
		  void *arg);

/* tunnel_redirect.c: nftables table inet tsm_tunnel_<port> */
struct tun_redirect {
	int port;		/* the application's destination port */
	int to_port;		/* the client's UDP port */
	long uid;		/* -1: any */
	const char *cgroup;	/* cgroup v2 path, NULL: any */
};

int tun_redirect_install(const struct tun_redirect *r, struct tsm_error *err);
int tun_redirect_remove(int port, struct tsm_error *err);
/* port 0: every tsm_tunnel_* table; prints what it removed. */
int tun_redirect_cleanup(int port, struct tsm_error *err);

/* An endpoint's configuration, from the command line. */
struct tun_cfg {
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

/* tunnel_client.c, tunnel_server.c: run until a signal; the exit status */
int tun_run_client(struct tun_cfg *cfg);
int tun_run_server(struct tun_cfg *cfg);

/* tunnel_sock.c */
/* Set by SIGINT, SIGTERM and SIGHUP once tun_signals() ran. */
extern volatile sig_atomic_t tun_stop;
void tun_signals(void);
void __attribute__((format(printf, 2, 3)))
tun_log(const struct tun_cfg *cfg, const char *fmt, ...);
/* One address of host and port into ss; 0, or -1 after a message. */
int tun_resolve(const char *host, const char *port,
		struct sockaddr_storage *ss, socklen_t *len);
const char *tun_addr_str(const struct sockaddr_storage *ss, char *buf,
			 size_t len);
bool tun_same_addr(const struct sockaddr_storage *a,
		   const struct sockaddr_storage *b);
int tun_ep_ctl(int ep, int op, int fd, uint32_t events, void *ptr);
/* SO_MARK TUN_MARK: the redirection leaves the tunnel's own sockets be. */
void tun_set_mark(int fd);
/* The counters as a JSON line: on stdout (at the end, or with
 * --interval) and in the --stats file, replaced whole.
 */
void tun_stats_out(const struct tun_cfg *cfg, const struct tun_stats *st,
		   uint64_t t0, bool connected, unsigned int conns,
		   bool final);

/* The endpoints' timers, in now_ms() time: t0 is the start, a sweep of
 * idle flows is due every second, the counters every --interval (never
 * without).
 */
struct tun_ticks {
	uint64_t t0, next_stats, next_sweep;
};

void tun_ticks_init(struct tun_ticks *tk, const struct tun_cfg *cfg);
/* Whether the sweep is due at now, and if so the next one set. */
bool tun_tick_sweep(struct tun_ticks *tk, uint64_t now);
/* Whether the counters are due at now, and if so the next time set. */
bool tun_tick_stats(struct tun_ticks *tk, const struct tun_cfg *cfg,
		    uint64_t now);

/* tunnel_cli.c */
int tsm_tunnel_main(int argc, char **argv);

#endif /* TSM_TUNNEL_H */
