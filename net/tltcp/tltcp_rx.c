// SPDX-License-Identifier: GPL-2.0
/*
 * Time-lined TCP, receive side: parse the peer's records and tell the
 * application where its data and the gaps are.
 *
 * Records are parsed in recvmsg(), in process context: headers are read
 * from TCP into the context, payload straight into the caller's buffer,
 * both through TCP's own recvmsg, so that receive-window updates, SO_RCVLOWAT,
 * timeouts and signals behave as on a TCP socket.  A mutex keeps concurrent
 * readers from splitting a record between them.  poll() parses too, when
 * the mutex is free: it reads the framing that comes before the next data
 * without waiting, so that POLLIN means a read returns something.
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

/* Check the header just read against the stream so far; 1 if good. */
static int tltcp_rx_parse(struct sock *sk, struct tltcp_ctx *ctx)
{
	const struct tltcp_wire_hdr *h = (const void *)ctx->rx.hdr;
	u32 len = be32_to_cpu(h->len), sec = be32_to_cpu(h->section);
	u32 off = be32_to_cpu(h->sec_off), slen = be32_to_cpu(h->sec_len);
	struct tltcp_rx *rx = &ctx->rx;

	if (h->flags || h->resv)
		return tltcp_rx_fail(sk, ctx);
	if (!rx->hello) {
		if (h->type != TLTCP_REC_HELLO || sec != TLTCP_MAGIC ||
		    off != TLTCP_VERSION || len || slen)
			return tltcp_rx_fail(sk, ctx);
		rx->hello = true;
		return 1;
	}
	if (h->type == TLTCP_REC_DATA) {
		if (!len || len > TLTCP_MAX_RECORD)
			return tltcp_rx_fail(sk, ctx);
	} else if (h->type != TLTCP_REC_ABANDON || !len) {
		return tltcp_rx_fail(sk, ctx);
	}

	if (rx->in_section) {
		if (sec != (u32)rx->section || off != rx->sec_off ||
		    slen != rx->sec_len)
			return tltcp_rx_fail(sk, ctx);
	} else {
		u64 next = rx->started ? rx->section + 1 : 0;

		if (sec != (u32)next || off || !slen ||
		    slen > TL_MAX_SECTION_LEN)
			return tltcp_rx_fail(sk, ctx);
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
		return tltcp_rx_fail(sk, ctx);

	rx->type = h->type;
	rx->left = len;
	if (h->type == TLTCP_REC_ABANDON) {
		ctx->info.gaps_received++;
		ctx->info.bytes_gap += len;
		TLTCP_INC_STATS(ctx, TLTCP_MIB_GAPS_RECEIVED);
		TLTCP_ADD_STATS(ctx, TLTCP_MIB_BYTES_GAP, len);
		trace_tltcp_gap(sk, rx->section, off, slen, len, rx->stream_off);
	}
	return 1;
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
	return tltcp_rx_parse(sk, ctx);
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

static void tltcp_put_record(struct msghdr *msg, const struct tltcp_rx *rx,
			     int type, u32 n)
{
	struct tl_record rec = {
		.stream_off	= rx->stream_off,
		.section	= rx->section,
		.sec_len	= rx->sec_len,
		.sec_off	= rx->sec_off,
		.len		= n,
		.flags		= rx->sec_off + n == rx->sec_len ?
				  TL_REC_SECTION_END : 0,
	};

	put_cmsg(msg, SOL_TLTCP, type, sizeof(rec), &rec);
}

static int tltcp_do_recvmsg(struct sock *sk, struct msghdr *msg, size_t len,
			    int flags, int *addr_len)
{
	struct tltcp_ctx *ctx = tltcp_get_ctx(sk);
	struct tltcp_rx *rx = &ctx->rx;
	bool tl = flags & MSG_TL;
	size_t copied = 0;
	int err = 0;

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
	rx->plain = !tl;
	if (rx->poll_err) {
		err = rx->poll_err;
		rx->poll_err = 0;
		goto out;
	}

	for (;;) {
		/* Once something is copied, only wait if MSG_WAITALL asks. */
		int bflags = flags & MSG_DONTWAIT;
		int ret;
		u32 n;

		if (copied && (tl || !(flags & MSG_WAITALL)))
			bflags = MSG_DONTWAIT;
		if (rx->err) {
			err = rx->err;
			break;
		}
		if (tltcp_rx_shut(sk, rx))
			break;
		if (!rx->left) {
			err = tltcp_rx_header(sk, ctx, bflags, addr_len);
			if (err <= 0)
				break;
			/* A header is no byte of the caller's. */
			err = 0;
			continue;
		}

		if (rx->type == TLTCP_REC_ABANDON) {
			if (!tl) {
				tltcp_rx_advance(rx, rx->left);
				continue;
			}
			if (copied)
				break;
			n = min_t(size_t, rx->left, len);
			if (iov_iter_zero(n, &msg->msg_iter) != n) {
				err = -EFAULT;
				break;
			}
			tltcp_put_record(msg, rx, TL_GAP, n);
			tltcp_rx_advance(rx, n);
			copied = n;
			break;
		}

		if ((tl && copied) || copied == len)
			break;
		n = min_t(size_t, rx->left, len - copied);
		ret = kc_proto_recvmsg(ctx->sk_proto, sk, msg, n,
				       bflags | (flags & MSG_WAITALL),
				       addr_len);
		if (ret < 0) {
			err = ret;
			break;
		}
		if (!ret) {
			if (!tltcp_rx_shut(sk, rx))
				err = tltcp_rx_fail(sk, ctx);
			break;
		}
		if (tl)
			tltcp_put_record(msg, rx, TL_DATA, ret);
		tltcp_rx_advance(rx, ret);
		ctx->info.bytes_received += ret;
		copied += ret;
		if (tl)
			break;
	}
out:
	tltcp_rx_unlock(rx);
	return copied ? copied : err;
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
