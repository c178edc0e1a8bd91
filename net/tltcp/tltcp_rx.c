// SPDX-License-Identifier: GPL-2.0
/*
 * Time-lined TCP, receive side: parse the peer's records and tell the
 * application where its data and the gaps are.
 *
 * Records are parsed in recvmsg(), in process context: headers are read
 * from TCP into the context, payload straight into the caller's buffer.
 * What TCP has queued is read in one pass under the socket lock, with
 * tcp_read_sock() as NVMe/TCP's host driver reads its PDUs, so that a
 * read of many records costs TCP one receive-window update and one
 * receive-buffer adjustment, as a plain TCP read does (a call into TCP's
 * recvmsg per header and per payload sent up to twice TCP's ACKs, which
 * the sender then took in TCP's slow path); it waits for more as TCP's
 * recvmsg does (SO_RCVTIMEO, signals).  Where TCP's recvmsg has something
 * to say (an error, the end of the stream, urgent data, its own control
 * messages, SO_RCVLOWAT) the read goes through it instead.  A mutex
 * keeps concurrent readers from splitting a record between them.  poll()
 * parses too, when the mutex is free: it reads the framing that comes
 * before the next data without waiting, so that POLLIN means a read
 * returns something.
 *
 * With MSG_TL one call returns one piece of one section (TL_DATA) or of
 * one gap (TL_GAP: the buffer is zero-filled, the return value is the
 * gap's length, at most the buffer's), never both and never a 0 for a
 * gap.  Without MSG_TL the data bytes are returned as a stream, gaps
 * skipped.  Anything the peer sends that is not a well-formed record
 * stream aborts the connection with EPROTO.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <linux/uio.h>
#include <net/tcp.h>
#include <compat/kcompat.h>

#include "tltcp.h"
#include "tltcp_trace.h"

void tltcp_rx_init(struct tltcp_ctx *ctx)
{
	mutex_init(&ctx->rx.lock);
	init_waitqueue_head(&ctx->rx.wait);
}

/* One reader at a time.  A read that may not block (MSG_DONTWAIT,
 * O_NONBLOCK) does not wait for another reader; others wait at most their
 * SO_RCVTIMEO, and a signal interrupts them as it would in TCP.
 */
static int tltcp_rx_lock(struct sock *sk, struct tltcp_rx *rx, int flags)
{
	long timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	long ret;

	if (mutex_trylock(&rx->lock))
		return 0;
	if (!timeo)
		return -EAGAIN;
	ret = wait_event_interruptible_timeout(rx->wait,
					       mutex_trylock(&rx->lock),
					       timeo);
	if (ret > 0)
		return 0;
	return ret ? sock_intr_errno(timeo) : -EAGAIN;
}

static void tltcp_rx_unlock(struct tltcp_rx *rx)
{
	mutex_unlock(&rx->lock);
	wake_up(&rx->wait);
}

/* shutdown(SHUT_RD) on this end, not the peer's FIN nor a reset: from
 * then on reads return 0.  The stream may well stop inside a record.
 * Under rx.lock, or from close().
 */
static bool tltcp_rx_shut(struct sock *sk, struct tltcp_rx *rx)
{
	if (!rx->shut && (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN) &&
	    !sock_flag(sk, SOCK_DONE) &&
	    inet_sk_state_load(sk) != TCP_CLOSE)
		rx->shut = true;
	return rx->shut;
}

/* The peer broke the framing: fail the connection (RST, sk_err EPROTO). */
static int tltcp_rx_fail(struct sock *sk, struct tltcp_ctx *ctx)
{
	ctx->rx.err = -EPROTO;
	TLTCP_INC_STATS(ctx, TLTCP_MIB_FRAMING_ERRORS);
	tcp_abort(sk, EPROTO);
	return -EPROTO;
}

/* Check the header just read against the stream so far; false if the
 * peer broke the framing (the caller fails the connection: it may hold
 * the socket lock, which tcp_abort() takes).
 */
static bool tltcp_rx_parse(struct sock *sk, struct tltcp_ctx *ctx)
{
	const struct tltcp_wire_hdr *h = (const void *)ctx->rx.hdr;
	u32 len = be32_to_cpu(h->len), sec = be32_to_cpu(h->section);
	u32 off = be32_to_cpu(h->sec_off), slen = be32_to_cpu(h->sec_len);
	struct tltcp_rx *rx = &ctx->rx;

	if (h->flags || h->resv)
		return false;
	if (!rx->hello) {
		if (h->type != TLTCP_REC_HELLO || sec != TLTCP_MAGIC ||
		    off != TLTCP_VERSION || len || slen)
			return false;
		rx->hello = true;
		return true;
	}
	if (h->type == TLTCP_REC_DATA) {
		if (!len || len > TLTCP_MAX_RECORD)
			return false;
	} else if (h->type != TLTCP_REC_ABANDON || !len) {
		return false;
	}

	if (rx->in_section) {
		if (sec != (u32)rx->section || off != rx->sec_off ||
		    slen != rx->sec_len)
			return false;
	} else {
		u64 next = rx->started ? rx->section + 1 : 0;

		if (sec != (u32)next || off || !slen ||
		    slen > TL_MAX_SECTION_LEN)
			return false;
		rx->started = true;
		rx->section = next;
		rx->sec_off = 0;
		rx->sec_len = slen;
		rx->in_section = true;
		ctx->info.sections_received++;
		TLTCP_INC_STATS(ctx, TLTCP_MIB_SECTIONS_RECEIVED);
	}
	if (len > slen - off ||
	    (h->type == TLTCP_REC_ABANDON && len != slen - off))
		return false;

	rx->type = h->type;
	rx->left = len;
	if (h->type == TLTCP_REC_ABANDON) {
		ctx->info.gaps_received++;
		ctx->info.bytes_gap += len;
		TLTCP_INC_STATS(ctx, TLTCP_MIB_GAPS_RECEIVED);
		TLTCP_ADD_STATS(ctx, TLTCP_MIB_BYTES_GAP, len);
		trace_tltcp_gap(sk, rx->section, off, slen, len, rx->stream_off);
	}
	return true;
}

/* Read (the rest of) a record header: 1 when one is parsed, 0 at the end
 * of the stream, or an error (-EAGAIN while it is incomplete).
 */
static int tltcp_rx_header(struct sock *sk, struct tltcp_ctx *ctx,
			   int bflags, int *addr_len)
{
	struct tltcp_rx *rx = &ctx->rx;
	struct msghdr kmsg = {};
	struct kvec iov;
	int ret;

	iov.iov_base = rx->hdr + rx->hdr_have;
	iov.iov_len = TLTCP_HDR_LEN - rx->hdr_have;
	iov_iter_kvec(&kmsg.msg_iter, ITER_DEST, &iov, 1, iov.iov_len);
	ret = kc_proto_recvmsg(ctx->sk_proto, sk, &kmsg, iov.iov_len,
			       bflags | MSG_WAITALL, addr_len);
	if (ret < 0)
		return ret;
	if (!ret) {
		/* The peer may end the stream between records only. */
		if (rx->hdr_have && !tltcp_rx_shut(sk, rx))
			return tltcp_rx_fail(sk, ctx);
		return 0;
	}
	rx->hdr_have += ret;
	if (rx->hdr_have < TLTCP_HDR_LEN)
		return signal_pending(current) ? -EINTR : -EAGAIN;
	rx->hdr_have = 0;
	return tltcp_rx_parse(sk, ctx) ? 1 : tltcp_rx_fail(sk, ctx);
}

/* close(): TCP resets a connection whose receive queue still holds data
 * ("data was lost").  The peer's HELLO is the module's, not the
 * application's: a sender that never reads must still end with a FIN.
 */
void tltcp_rx_close(struct sock *sk, struct tltcp_ctx *ctx)
{
	int addr_len = 0;

	if (!ctx->rx.hello && !ctx->rx.err)
		tltcp_rx_header(sk, ctx, MSG_DONTWAIT, &addr_len);
}

static void tltcp_rx_advance(struct tltcp_rx *rx, u32 n)
{
	rx->left -= n;
	rx->sec_off += n;
	rx->stream_off += n;
	if (rx->sec_off == rx->sec_len)
		rx->in_section = false;
}

/* Where the next byte of the record being read stands, for TL_DATA or
 * TL_GAP (its len and flags are filled in when the piece is put).
 */
static void tltcp_rx_rec(const struct tltcp_rx *rx, struct tl_record *rec)
{
	*rec = (struct tl_record){
		.stream_off	= rx->stream_off,
		.section	= rx->section,
		.sec_len	= rx->sec_len,
		.sec_off	= rx->sec_off,
	};
}

static void tltcp_put_record(struct msghdr *msg, struct tl_record *rec,
			     int type, u32 n)
{
	rec->len = n;
	rec->flags = rec->sec_off + n == rec->sec_len ? TL_REC_SECTION_END : 0;
	put_cmsg(msg, SOL_TLTCP, type, sizeof(*rec), rec);
}

/* What one read has given its caller so far. */
struct tltcp_rx_call {
	struct tltcp_ctx	*ctx;
	struct msghdr		*msg;
	size_t			room;		/* the caller's buffer */
	size_t			copied;		/* of it, filled */
	struct tl_record	rec;		/* MSG_TL: the piece given */
	int			type;		/* its TL_DATA or TL_GAP */
	int			err;
	bool			tl;		/* MSG_TL */
	bool			waitall;	/* MSG_WAITALL */
	bool			fail;		/* the peer broke the framing */
	bool			stop;		/* return what is there */
};

static bool tltcp_rx_over(const struct tltcp_rx_call *c)
{
	return c->stop || c->err || c->fail;
}

/* A gap: a plain read skips it, a MSG_TL read returns it, alone. */
static void tltcp_rx_gap(struct tltcp_rx_call *c)
{
	struct tltcp_rx *rx = &c->ctx->rx;
	u32 n;

	if (!c->tl) {
		tltcp_rx_advance(rx, rx->left);
		return;
	}
	c->stop = true;
	if (c->copied)
		return;
	n = min_t(size_t, rx->left, c->room);
	if (iov_iter_zero(n, &c->msg->msg_iter) != n) {
		c->err = -EFAULT;
		return;
	}
	tltcp_rx_rec(rx, &c->rec);
	c->type = TL_GAP;
	tltcp_rx_advance(rx, n);
	c->copied = n;
}

/* @n payload bytes of the record went to the caller. */
static void tltcp_rx_took(struct tltcp_rx_call *c, u32 n)
{
	if (c->tl)
		c->type = TL_DATA;
	tltcp_rx_advance(&c->ctx->rx, n);
	c->ctx->info.bytes_received += n;
	c->copied += n;
}

/* Parse what @skb holds from @off (@len bytes of TCP's stream): headers
 * into the context, payload straight into the caller's buffer.  Returns
 * the bytes used, fewer than @len once the call has what it returns.
 */
static size_t tltcp_rx_skb(struct tltcp_rx_call *c, const struct sk_buff *skb,
			   u32 off, size_t len)
{
	struct tltcp_rx *rx = &c->ctx->rx;
	size_t used = 0;
	u32 n;

	while (!tltcp_rx_over(c)) {
		if (!rx->left) {
			if (used == len)
				break;
			n = min_t(size_t, TLTCP_HDR_LEN - rx->hdr_have,
				  len - used);
			if (skb_copy_bits(skb, off + used,
					  rx->hdr + rx->hdr_have, n)) {
				c->err = -EFAULT;
				break;
			}
			rx->hdr_have += n;
			used += n;
			if (rx->hdr_have < TLTCP_HDR_LEN)
				break;
			rx->hdr_have = 0;
			if (!tltcp_rx_parse(c->ctx->sk, c->ctx))
				c->fail = true;
			continue;
		}
		if (rx->type == TLTCP_REC_ABANDON) {
			tltcp_rx_gap(c);
			continue;
		}
		if (used == len)
			break;
		n = min3(rx->left, c->room - c->copied, len - used);
		if (c->tl && !c->type)
			tltcp_rx_rec(rx, &c->rec);
		if (skb_copy_datagram_msg(skb, off + used, c->msg, n)) {
			c->err = -EFAULT;
			break;
		}
		tltcp_rx_took(c, n);
		used += n;
		/* With MSG_TL, one piece of one record. */
		if (c->copied == c->room || (c->tl && !rx->left))
			c->stop = true;
	}
	return used;
}

static int tltcp_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
			  unsigned int off, size_t len)
{
	struct tltcp_rx_call *c = desc->arg.data;
	size_t used;

	used = tltcp_rx_skb(c, skb, off, len);
	if (tltcp_rx_over(c))
		desc->count = 0;
	return used;
}

/* Nothing in order to read and nothing to report: where TCP's recvmsg
 * would wait.  Under the socket lock.
 */
static bool tltcp_rx_idle(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return tp->rcv_nxt == tp->copied_seq && !sk->sk_err &&
	       !(sk->sk_shutdown & RCV_SHUTDOWN) &&
	       !sock_flag(sk, SOCK_DONE) &&
	       sk->sk_state != TCP_CLOSE && sk->sk_state != TCP_LISTEN;
}

/* TCP's recvmsg adds control messages of its own (TCP_INQ, receive
 * timestamps) and waits for SO_RCVLOWAT bytes: a socket that asked for
 * any of them reads through it, a record header and a payload at a time.
 */
static bool tltcp_rx_direct_ok(const struct sock *sk)
{
	return !tcp_sk(sk)->recvmsg_inq && !sock_flag(sk, SOCK_RCVTSTAMP) &&
	       !READ_ONCE(sk->sk_tsflags) && READ_ONCE(sk->sk_rcvlowat) <= 1;
}

/* Read what TCP has queued in one pass, as tcp_read_sock() gives it
 * (one receive-window update and one receive-buffer adjustment for all
 * the records in it, not one per header and one per payload), and wait
 * for more as TCP's recvmsg would.  False where TCP's recvmsg should
 * answer instead: an error, the end of the stream, urgent data.
 */
static bool tltcp_rx_direct(struct sock *sk, struct tltcp_rx_call *c,
			    long *timeo)
{
	struct tltcp_rx *rx = &c->ctx->rx;
	read_descriptor_t desc = {};
	bool again = true;
	int ret;

	lock_sock(sk);
	for (;;) {
		desc.arg.data = c;
		desc.count = 1;
		if (tcp_read_sock(sk, &desc, tltcp_rx_actor) < 0) {
			again = false;
			break;
		}
		if (tltcp_rx_over(c) ||
		    (rx->left && rx->type == TLTCP_REC_ABANDON))
			break;
		/* The queue is read.  Once something is copied, only
		 * MSG_WAITALL waits for more, and never with MSG_TL.
		 */
		if (c->copied && (c->tl || !c->waitall)) {
			c->stop = true;
			break;
		}
		if (!tltcp_rx_idle(sk)) {
			/* TCP reports it, after what is copied. */
			if (c->copied)
				c->stop = true;
			else
				again = false;
			break;
		}
		if (!*timeo) {
			c->err = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			c->err = sock_intr_errno(*timeo);
			break;
		}
		ret = sk_wait_data(sk, timeo,
				   skb_peek_tail(&sk->sk_receive_queue));
		if (ret < 0) {
			c->err = ret;
			break;
		}
	}
	release_sock(sk);
	if (c->fail)
		c->err = tltcp_rx_fail(sk, c->ctx);
	return again;
}

/* One step through TCP's own recvmsg: a record header, or (part of) a
 * record's payload.
 */
static void tltcp_rx_via_tcp(struct sock *sk, struct tltcp_rx_call *c,
			     int flags, int *addr_len)
{
	struct tltcp_ctx *ctx = c->ctx;
	struct tltcp_rx *rx = &ctx->rx;
	int bflags = flags & MSG_DONTWAIT;
	int ret;
	u32 n;

	/* Once something is copied, only wait if MSG_WAITALL asks. */
	if (c->copied && (c->tl || !c->waitall))
		bflags = MSG_DONTWAIT;
	if (!rx->left) {
		ret = tltcp_rx_header(sk, ctx, bflags, addr_len);
		if (ret <= 0) {
			c->err = ret;
			c->stop = true;
		}
		return;
	}
	n = min_t(size_t, rx->left, c->room - c->copied);
	if (c->tl && !c->type)
		tltcp_rx_rec(rx, &c->rec);
	ret = kc_proto_recvmsg(ctx->sk_proto, sk, c->msg, n,
			       bflags | (flags & MSG_WAITALL), addr_len);
	if (ret <= 0) {
		if (!ret && !tltcp_rx_shut(sk, rx))
			ret = tltcp_rx_fail(sk, ctx);
		c->err = ret;
		c->stop = true;
		return;
	}
	tltcp_rx_took(c, ret);
	if (c->tl || c->copied == c->room)
		c->stop = true;
}

static int tltcp_do_recvmsg(struct sock *sk, struct msghdr *msg, size_t len,
			    int flags, int *addr_len)
{
	struct tltcp_ctx *ctx = tltcp_get_ctx(sk);
	struct tltcp_rx_call c = {
		.ctx		= ctx,
		.msg		= msg,
		.room		= len,
		.tl		= flags & MSG_TL,
		.waitall	= flags & MSG_WAITALL,
	};
	struct tltcp_rx *rx = &ctx->rx;
	bool direct;
	long timeo;
	int err;

	if (flags & MSG_ERRQUEUE)
		return kc_proto_recvmsg(ctx->sk_proto, sk, msg, len, flags,
					addr_len);
	if (flags & (MSG_OOB | MSG_PEEK | MSG_TRUNC))
		return -EOPNOTSUPP;
	if (!len)
		return 0;
	err = tltcp_rx_lock(sk, rx, flags);
	if (err)
		return err;
	rx->plain = !c.tl;
	if (rx->poll_err) {
		c.err = rx->poll_err;
		rx->poll_err = 0;
		goto out;
	}

	direct = tltcp_rx_direct_ok(sk);
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	while (!tltcp_rx_over(&c)) {
		if (rx->err) {
			c.err = rx->err;
			break;
		}
		if (tltcp_rx_shut(sk, rx))
			break;
		if (rx->left && rx->type == TLTCP_REC_ABANDON)
			tltcp_rx_gap(&c);
		else if (!direct || !tltcp_rx_direct(sk, &c, &timeo))
			tltcp_rx_via_tcp(sk, &c, flags, addr_len);
	}
	if (c.type)
		tltcp_put_record(msg, &c.rec, c.type, c.copied);
out:
	tltcp_rx_unlock(rx);
	return c.copied ? c.copied : c.err;
}

/* struct proto's recvmsg, with this kernel's signature (kcompat.h). */
static int tltcp_recvmsg(KC_RECVMSG_ARGS)
{
	return tltcp_do_recvmsg(sk, msg, len, flags, KC_RECVMSG_ADDR_LEN_PTR);
}

void tltcp_rx_proto(struct proto *prot)
{
	prot->recvmsg = tltcp_recvmsg;
}

/* Framing before the next thing a read returns: a record in progress, or
 * headers and (for a plain reader) gaps read without waiting.  True if a
 * read would return data, a gap (MSG_TL), the end or an error.  Under
 * rx.lock.
 */
static bool tltcp_rx_ready(struct sock *sk, struct tltcp_ctx *ctx)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tltcp_rx *rx = &ctx->rx;
	int addr_len = 0, ret;

	for (;;) {
		if (rx->err || rx->poll_err || READ_ONCE(sk->sk_err) ||
		    tltcp_rx_shut(sk, rx))
			return true;
		if (rx->left && rx->type == TLTCP_REC_DATA)
			return READ_ONCE(tp->rcv_nxt) != tp->copied_seq ||
			       (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN);
		if (rx->left && !rx->plain)
			return true;
		if (rx->left) {
			/* a plain read skips it */
			tltcp_rx_advance(rx, rx->left);
			continue;
		}
		ret = tltcp_rx_header(sk, ctx, MSG_DONTWAIT, &addr_len);
		if (ret > 0)
			continue;
		if (ret == -EAGAIN || ret == -EINTR)
			return false;
		/* The end, or an error the next read reports. */
		if (ret < 0 && !rx->err)
			rx->poll_err = ret;
		return true;
	}
}

/* poll(): would a read return something?  @tcp_in: TCP has something to
 * read.  Process context, no lock held.  While a reader holds rx.lock,
 * TCP's answer stands.
 */
bool tltcp_rx_readable(struct sock *sk, struct tltcp_ctx *ctx, bool tcp_in)
{
	struct tltcp_rx *rx = &ctx->rx;
	bool ready;

	if (!mutex_trylock(&rx->lock))
		return tcp_in;
	if (tcp_in)
		ready = tltcp_rx_ready(sk, ctx);
	else
		ready = rx->err || rx->poll_err ||
			(rx->left && rx->type == TLTCP_REC_ABANDON &&
			 !rx->plain);
	tltcp_rx_unlock(rx);
	return ready;
}
