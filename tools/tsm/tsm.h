/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtsm: transport services middleware.  An application states what it
 * needs (RFC 9622 selection properties where they fit); the library picks
 * a congestion-controlled transport the running kernel offers and the
 * administrator's policy allows, tunes it, and explains the choice in one
 * line.  Documentation/tsm.rst holds the mapping table that tsm_select()
 * implements.
 *
 * The decision (tsm_select) is pure: requirements + policy + what the
 * kernel offers (struct tsm_offer, from tsm_probe() or made up by a test)
 * give a choice.  Sockets (tsm_connect, tsm_listen, tsm_accept) and
 * statistics (tsm_stats) apply it.
 *
 * Every call that can fail returns 0 or a negative errno and fills a
 * struct tsm_error with a message that names the cause.
 */
#ifndef TSM_H
#define TSM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define TSM_MSG_LEN	384
#define TSM_NAME_LEN	16	/* TCP_CA_NAME_MAX */
#define TSM_MAX_CC	32	/* congestion controls a probe remembers */

struct tsm_error {
	int code;			/* errno value, 0 if none */
	char msg[TSM_MSG_LEN];
};

/* RFC 9622 reliability, collapsed with msgLifetime: partial = timed. */
enum tsm_reliability {
	TSM_REL_FULL,
	TSM_REL_PARTIAL,
	TSM_REL_NONE,
};

/* RFC 9622 preference levels; TSM_PREF_DEFAULT takes the RFC default. */
enum tsm_pref {
	TSM_PREF_DEFAULT,
	TSM_PREF_REQUIRE,
	TSM_PREF_PREFER,
	TSM_PREF_NONE,			/* noPreference */
	TSM_PREF_AVOID,
	TSM_PREF_PROHIBIT,
};

/* RFC 9622 capacityProfile. */
enum tsm_profile {
	TSM_PROF_DEFAULT,
	TSM_PROF_SCAVENGER,
	TSM_PROF_INTERACTIVE,		/* Low Latency/Interactive */
	TSM_PROF_NON_INTERACTIVE,	/* Low Latency/Non-Interactive */
	TSM_PROF_CONSTANT_RATE,		/* Constant-Rate Streaming */
	TSM_PROF_CAPACITY_SEEKING,
	TSM_PROF_COUNT,
};

struct tsm_req {
	enum tsm_reliability reliability;	/* default full */
	enum tsm_pref preserve_msg_boundaries;	/* default noPreference */
	enum tsm_pref preserve_order;	/* default require (see tsm.rst) */
	enum tsm_pref per_msg_reliability;	/* default noPreference */
	int64_t msg_lifetime_ms;	/* 0: none; partial needs one */
	enum tsm_profile profile;
	double weight;			/* vs. one TCP flow; 0: unset (1) */
	int64_t path_delay_ms;		/* expected RTT; 0: unknown */
	uint64_t min_rate;		/* bit/s, 0: none */
	uint64_t max_rate;		/* bit/s, 0: none */
};

enum tsm_transport {
	TSM_NONE,
	TSM_TCP,
	TSM_TLTCP,
	TSM_SCTP,
	TSM_DCCP,
	TSM_TRANSPORT_COUNT,
};

/* Where an algorithm or protocol stands on this kernel. */
enum tsm_state {
	TSM_ABSENT,			/* neither there nor loadable */
	TSM_LOADABLE,			/* a module the kernel could load */
	TSM_LOADED,			/* registered (or built in) */
};

/* What the kernel offers: tsm_probe() fills it; tests make it up. */
struct tsm_offer {
	bool privileged;		/* CAP_NET_ADMIN: may load, may use
					 * any registered algorithm
					 */
	int n_cc;
	struct {
		char name[TSM_NAME_LEN];
		enum tsm_state state;
		bool allowed;		/* in tcp_allowed_congestion_control */
	} cc[TSM_MAX_CC];
	char default_cc[TSM_NAME_LEN];	/* net.ipv4.tcp_congestion_control */
	uint32_t multfrc_n_milli;	/* n of "multfrc", 0 if unknown */
	enum tsm_state tltcp;		/* the "tltcp" ULP */
	enum tsm_state dccp;
	int dccp_err;			/* errno of the probe's DCCP socket(),
					 * 0 if it opened or was not tried
					 */
	bool ccid[4];			/* DCCP CCIDs the kernel has (2, 3) */
	enum tsm_state sctp;
	bool prsctp;			/* PR-SCTP enabled */
};

/* Administrator's policy (policy.c; format in Documentation/tsm.rst). */
struct tsm_policy {
	char path[128];			/* for messages */
	unsigned int transports;	/* bit per enum tsm_transport */
	int transports_line;
	int n_cc;			/* 0: every algorithm allowed */
	char cc[TSM_MAX_CC][TSM_NAME_LEN];
	int cc_line;
	double max_weight;		/* unprivileged users; 0: no limit */
	int max_weight_line;
	int64_t long_delay_ms;		/* RTT from which reno_tw is chosen */
	int long_delay_line;
	struct {
		char cc[TSM_NAME_LEN];	/* "" : the table's choice */
		int ccid;		/* 0 : the table's choice */
		double weight;		/* 0 : the table's default */
		int cc_line, ccid_line, weight_line;
	} profile[TSM_PROF_COUNT];
};

/* SCTP partial reliability policies (values of SCTP_PR_SCTP_*). */
enum tsm_pr {
	TSM_PR_OFF,
	TSM_PR_TTL,			/* lifetime in ms */
	TSM_PR_RTX,			/* retransmissions, 0: none */
};

struct tsm_choice {
	enum tsm_transport transport;
	int row;			/* the mapping table's row (tsm.rst) */
	char cc[TSM_NAME_LEN];		/* TCP/TLTCP: "" = kernel default */
	enum tsm_state cc_state;
	bool cc_fallback;		/* cc is not the row's own choice */
	double weight;			/* the n the algorithm gives, 0: none */
	int ccid;			/* DCCP: 2 or 3 */
	uint64_t deadline_ns;		/* TLTCP: TL_DEFAULT_DEADLINE */
	enum tsm_pr pr_policy;		/* SCTP */
	uint32_t pr_value;
	bool unordered;			/* SCTP: unordered delivery */
	bool nodelay;			/* TCP_NODELAY */
	uint64_t max_pacing_rate;	/* bytes/s, SO_MAX_PACING_RATE */
	char why[TSM_MSG_LEN];		/* the one-line explanation */
};

/* Unified statistics; a field is meaningful only if its bit is known. */
enum {
	TSM_ST_RATE = 1 << 0,
	TSM_ST_RTT = 1 << 1,
	TSM_ST_RETRANS = 1 << 2,
	TSM_ST_LOSS_RATE = 1 << 3,
	TSM_ST_MISSES = 1 << 4,
	TSM_ST_CWND = 1 << 5,
};

struct tsm_stats {
	unsigned int known;		/* TSM_ST_* */
	uint64_t rate;			/* bit/s the transport sends at */
	uint32_t rtt_us;		/* smoothed RTT */
	uint64_t retransmits;		/* packets or chunks */
	double loss_rate;		/* loss event rate (TFRC's p) */
	uint64_t deadline_misses;	/* messages or sections abandoned */
	uint32_t cwnd;			/* packets or bytes, per transport */
};

/* Names (static strings) and parsers of the CLI and policy words. */
const char *tsm_transport_name(enum tsm_transport t);
const char *tsm_profile_name(enum tsm_profile p);
const char *tsm_pref_name(enum tsm_pref p);
const char *tsm_state_name(enum tsm_state s);
int tsm_parse_transport(const char *s, enum tsm_transport *t);
int tsm_parse_profile(const char *s, enum tsm_profile *p);
int tsm_parse_pref(const char *s, enum tsm_pref *p);
int tsm_parse_reliability(const char *s, enum tsm_reliability *r);
int tsm_format_weight(char *buf, size_t len, double w);

/* select.c */
void tsm_req_init(struct tsm_req *req);
int tsm_check_req(const struct tsm_req *req, struct tsm_error *err);
int tsm_select(const struct tsm_req *req, const struct tsm_policy *pol,
	       const struct tsm_offer *off, struct tsm_choice *ch,
	       struct tsm_error *err);
/*
 * The congestion control of an existing TCP socket (Table 3 and its
 * fallbacks only; reliability must be full): what the preload library
 * sets on an unmodified application's sockets.
 */
int tsm_select_cc(const struct tsm_req *req, const struct tsm_policy *pol,
		  const struct tsm_offer *off, struct tsm_choice *ch,
		  struct tsm_error *err);

/* policy.c */
#define TSM_POLICY_PATH	"/etc/tsm.conf"
void tsm_policy_init(struct tsm_policy *pol);
int tsm_policy_parse(const char *text, const char *path,
		     struct tsm_policy *pol, struct tsm_error *err);
/* path NULL: $TSM_POLICY, else TSM_POLICY_PATH; a missing default file
 * is an empty policy, a missing named one an error.
 */
int tsm_policy_load(const char *path, struct tsm_policy *pol,
		    struct tsm_error *err);

/* probe.c */
int tsm_probe(struct tsm_offer *off, struct tsm_error *err);
/* "cc=reno,cubic:allowed ulp=tltcp dccp=2,3 sctp=pr priv": tsm --assume */
int tsm_offer_parse(const char *spec, struct tsm_offer *off,
		    struct tsm_error *err);

/* socket.c: host and port as for getaddrinfo(); the fd is blocking. */
int tsm_connect(const char *host, const char *port,
		const struct tsm_choice *ch, struct tsm_error *err);
int tsm_listen(const char *host, const char *port,
	       const struct tsm_choice *ch, struct tsm_error *err);
int tsm_accept(int lfd, const struct tsm_choice *ch, struct tsm_error *err);
/* One message (TLTCP: a section with the default deadline; DCCP: one
 * datagram, retried while the CCID's queue is full).
 */
ssize_t tsm_send(int fd, const struct tsm_choice *ch, const void *buf,
		 size_t len, struct tsm_error *err);

/*
 * Graceful close: what was sent reaches the peer, within wait_s seconds.
 * Stream transports shut down their sending side and wait for the peer
 * to close (over TLTCP this also takes the peer's opening record off the
 * socket, without which close() resets); DCCP has no half-close, and
 * an SCTP sender cannot see its association end: both linger in close().
 */
int tsm_close(int fd, const struct tsm_choice *ch, int wait_s);

/* stats.c */
int tsm_stats(int fd, const struct tsm_choice *ch, struct tsm_stats *st,
	      struct tsm_error *err);

#endif /* TSM_H */
