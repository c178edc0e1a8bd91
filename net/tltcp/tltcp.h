/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Time-lined TCP: what the module's files share.  tltcp_main.c holds the
 * ULP (attach, close, socket options, poll), tltcp_tx.c the send path
 * (section queue, lifetime timer, framing), tltcp_rx.c the receive path
 * (parsing, gap reports), tltcp_stat.c the per-namespace counters and the
 * tracepoints.  The algorithm is described in tltcp_main.c.
 */
#ifndef _NET_TLTCP_H
#define _NET_TLTCP_H

#include <linux/bvec.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/inet_connection_sock.h>
#include <net/snmp.h>
#include <net/sock.h>
#include <uapi/linux/tltcp.h>

/* Framing on the wire.  Every record starts with this header (big-endian):
 *
 *   type     TLTCP_REC_HELLO, _DATA or _ABANDON
 *   flags    zero
 *   resv     zero
 *   len      DATA: payload bytes that follow; ABANDON: bytes abandoned
 *   section  low 32 bits of the section number
 *   sec_off  offset in the section of the first byte described
 *   sec_len  length of the section
 *
 * A HELLO (len 0, section TLTCP_MAGIC, sec_off TLTCP_VERSION) opens each
 * direction.  An ABANDON always covers the rest of its section.
 */
struct tltcp_wire_hdr {
	u8	type;
	u8	flags;
	__be16	resv;
	__be32	len;
	__be32	section;
	__be32	sec_off;
	__be32	sec_len;
} __packed;

#define TLTCP_HDR_LEN		sizeof(struct tltcp_wire_hdr)
#define TLTCP_REC_HELLO		1
#define TLTCP_REC_DATA		2
#define TLTCP_REC_ABANDON	3
#define TLTCP_MAGIC		0x544c5443	/* "TLTC" */
#define TLTCP_VERSION		1
/* Largest DATA payload in one record: what TCP owes once it has a header. */
#define TLTCP_MAX_RECORD	(64U << 10)
/* Sections of a plain write() (no MSG_TL) are at most this long. */
#define TLTCP_STREAM_SECTION	(64U << 10)
/* Sections waiting in one socket's queue. */
#define TLTCP_MAX_QUEUED	65536U
/* A section's deadline when it has none. */
#define TLTCP_NO_DEADLINE	U64_MAX

/* A section's bytes, in runs of pages (tltcp_buf.c). */
struct tltcp_buf {
	struct bio_vec		*bv;		/* NULL: none (freed) */
	u32			nr;
};

/* A place in a tltcp_buf: run, offset in it. */
struct tltcp_buf_pos {
	u32			idx;
	u32			off;
};

struct tltcp_section {
	struct list_head	list;
	u64			id;		/* on the wire; valid if numbered */
	u64			deadline;	/* ns, CLOCK_MONOTONIC; U64_MAX: none */
	u32			len;
	u32			mem;		/* bytes charged for data */
	u32			sent;		/* bytes handed to TCP */
	u32			end_seq;	/* TCP sequence after them */
	bool			expired;	/* deadline passed, rest abandoned */
	bool			numbered;	/* its first record was set */
	struct tltcp_buf	data;		/* freed once expired, not in use */
	struct tltcp_buf_pos	pos;		/* of byte "sent" in data */
};

/* TL_ARRIVAL: a section whose last byte TCP took, and when it was
 * predicted to arrive (tltcp_arrival.c).
 */
struct tltcp_arrival_probe {
	u64			predicted;	/* ns, CLOCK_MONOTONIC */
	u32			end_seq;
};

#define TLTCP_ARRIVAL_PROBES	16

/* The record TCP has been promised but has not taken whole yet. */
struct tltcp_tx_record {
	struct tltcp_wire_hdr	hdr;
	struct tltcp_section	*sec;		/* owner of the payload, if any */
	struct tltcp_buf_pos	pos;		/* of its next byte for TCP */
	u32			len;		/* header + payload */
	u32			done;		/* bytes TCP took */
};

struct tltcp_rx {
	struct mutex		lock;		/* one reader at a time */
	wait_queue_head_t	wait;		/* readers waiting for it */
	u8			hdr[TLTCP_HDR_LEN];
	u32			hdr_have;
	u8			type;		/* of the record being read */
	u32			left;		/* its bytes not yet returned */
	bool			hello;		/* the peer's HELLO arrived */
	bool			started;	/* a section has begun */
	bool			in_section;	/* section not complete yet */
	u64			section;
	u32			sec_off;	/* of the next byte */
	u32			sec_len;
	u64			stream_off;	/* of the next byte */
	int			err;		/* sticky framing error */
	int			poll_err;	/* TCP's, taken by poll() */
	bool			plain;		/* last read without MSG_TL */
	bool			shut;		/* shutdown(SHUT_RD) here */
};

enum {
	TLTCP_CLOSING,		/* close started: nothing may queue work */
};

/* The namespace's counters, /proc/net/tltcp_stat (tltcp_stat.c). */
enum {
	TLTCP_MIB_CURR_SOCKETS,		/* sockets with the ULP now */
	TLTCP_MIB_SOCKETS,		/* sockets that ever attached it */
	TLTCP_MIB_SECTIONS_OFFERED,
	TLTCP_MIB_SECTIONS_COMPLETED,
	TLTCP_MIB_SECTIONS_ABANDONED,	/* deadline or close, some unsent */
	TLTCP_MIB_BYTES_ABANDONED,	/* never handed to TCP */
	TLTCP_MIB_BYTES_OBSOLETE_LATE,	/* as tl_info's */
	TLTCP_MIB_BYTES_OBSOLETE_RETRANS,
	TLTCP_MIB_SECTIONS_RECEIVED,	/* receiver: sections begun */
	TLTCP_MIB_GAPS_RECEIVED,	/* receiver: ABANDON records */
	TLTCP_MIB_BYTES_GAP,
	TLTCP_MIB_FRAMING_ERRORS,	/* peers that broke the framing */
	TLTCP_MIB_MAX
};

struct tltcp_mib {
	unsigned long	mibs[TLTCP_MIB_MAX];
};

#define TLTCP_INC_STATS(ctx, field)	SNMP_INC_STATS((ctx)->mib, field)
#define TLTCP_DEC_STATS(ctx, field)	SNMP_DEC_STATS((ctx)->mib, field)
#define TLTCP_ADD_STATS(ctx, field, n)	SNMP_ADD_STATS((ctx)->mib, field, n)

struct tltcp_ctx {
	struct sock		*sk;
	struct tltcp_mib __percpu *mib;	/* the socket's namespace's */
	struct proto		*sk_proto;	/* TCP's, restored on close */
	void			(*saved_write_space)(struct sock *sk);
	unsigned long		flags;

	/* send side, under the socket lock */
	struct list_head	sendq;
	u32			queued_mem;	/* charged bytes in sendq, also
						 * counted in sk_wmem_queued
						 */
	u32			queued_sections;
	u64			next_id;
	u64			default_deadline;
	u32			sndq_limit;	/* 0: sk_sndbuf */
	u32			notsent;	/* 0: autosized */
	bool			arrival;	/* TL_ARRIVAL_ON */
	u64			arrival_rate;	/* bytes/s, average */
	u32			arrival_delivered; /* tp->delivered at last sample */
	u32			data_end;	/* TCP seq after the last payload */
	bool			data_sent;	/* data_end is valid */
	u8			probe_first;	/* oldest of probe_n probes */
	u8			probe_n;
	struct tltcp_arrival_probe probes[TLTCP_ARRIVAL_PROBES];
	bool			hello_sent;	/* our direction is open */
	bool			fin_pending;	/* shutdown(SHUT_WR) waits */
	bool			pushing;	/* in __tltcp_push() */
	bool			push_again;	/* TCP freed space meanwhile */
	struct tltcp_tx_record	txr;
	u64			timer_at;	/* U64_MAX: not armed */
	struct hrtimer		timer;		/* lifetime timer */
	struct work_struct	tx_work;
	/* estimate of obsolete retransmissions */
	u32			obsolete_end;	/* TCP seq; valid if tracking */
	bool			obsolete_tracking;
	u64			retrans_mark;

	struct tltcp_rx		rx;
	struct tl_info		info;
	struct rcu_head		rcu;
};

static inline struct tltcp_ctx *tltcp_get_ctx(const struct sock *sk)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);

	/* Stable while the socket is locked or in an RCU section. */
	return (__force struct tltcp_ctx *)icsk->icsk_ulp_data;
}

/* tltcp_tx.c */
void tltcp_tx_init(struct sock *sk, struct tltcp_ctx *ctx);
int tltcp_sendmsg(struct sock *sk, struct msghdr *msg, size_t size);
void tltcp_push(struct sock *sk, struct tltcp_ctx *ctx);
void tltcp_write_space(struct sock *sk);
bool tltcp_sndq_has_room(const struct sock *sk, const struct tltcp_ctx *ctx);
long tltcp_tx_close(struct sock *sk, struct tltcp_ctx *ctx, long timeout);
void tltcp_shutdown(struct sock *sk, int how);
void tltcp_update_obsolete(struct sock *sk, struct tltcp_ctx *ctx);
u32 tltcp_notsent(const struct sock *sk, const struct tltcp_ctx *ctx);
void tltcp_abandon(struct sock *sk, struct tltcp_ctx *ctx,
		   struct tltcp_section *sec);

/* tltcp_arrival.c */
void tltcp_arrival_check(struct sock *sk, struct tltcp_ctx *ctx, u64 now);
void tltcp_arrival_queue(struct tltcp_ctx *ctx, struct tltcp_section *sec);
void tltcp_arrival_sent(struct sock *sk, struct tltcp_ctx *ctx, u64 now);
void tltcp_arrival_acked(struct sock *sk, struct tltcp_ctx *ctx);

/* tltcp_buf.c */
u32 tltcp_buf_alloc(struct tltcp_buf *b, u32 len, gfp_t gfp);
void tltcp_buf_free(struct tltcp_buf *b);
bool tltcp_buf_fill(struct tltcp_buf *b, struct iov_iter *from);
void tltcp_buf_advance(const struct tltcp_buf *b, struct tltcp_buf_pos *pos,
		       u32 n);
int tltcp_buf_send(struct sock *sk, const struct tltcp_buf *b,
		   struct tltcp_buf_pos *pos, u32 len, bool more);

/* tltcp_rx.c */
void tltcp_rx_init(struct tltcp_ctx *ctx);
void tltcp_rx_close(struct sock *sk, struct tltcp_ctx *ctx);
void tltcp_rx_proto(struct proto *prot);
bool tltcp_rx_readable(struct sock *sk, struct tltcp_ctx *ctx, bool tcp_in);

/* tltcp_stat.c */
int tltcp_stat_init(void);
void tltcp_stat_exit(void);
struct tltcp_mib __percpu *tltcp_net_mib(const struct net *net);

#endif /* _NET_TLTCP_H */
