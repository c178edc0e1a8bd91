// SPDX-License-Identifier: GPL-2.0
/*
 * Time-lined TCP (TLTCP): TCP for data that is worthless after a deadline.
 *
 * B. Mukherjee and T. Brecht, "Time-lined TCP for the TCP-friendly Delivery
 * of Streaming Media", ICNP 2000, let an application hand TCP sections of
 * data with deadlines.  TCP sends them as usual, with its own congestion
 * control, until the deadline of the section being sent passes; then the
 * unsent rest of that section is obsolete and is abandoned in favour of
 * the next section, and the receiver is told where the gaps are.  The
 * flow thus stays as TCP-friendly as TCP while time-sensitive, loss-
 * tolerant data (the paper's example is MPEG-1 video, sections of frames
 * with the deadline of their playout) stops being sent once it is late.
 *
 * The paper changes TCP itself: a 32-bit seq_update TCP option lets the
 * receiver skip abandoned sequence space, and the sender stops
 * retransmitting obsolete data (it sends current data instead, "pseudo-
 * retransmissions").  A loadable module cannot change TCP's sequence
 * handling, and an option that skips sequence space would not pass
 * middleboxes.  This module is therefore a TCP upper-layer protocol
 * ("tltcp" ULP, like kTLS and espintcp) that frames the byte stream:
 *
 *  - Sections wait in the module's own queue, charged to the socket's
 *    memory, and are handed to TCP in records (a 20-byte header and up to
 *    64 KB of payload) only as fast as TCP transmits them: TCP holds at
 *    most about a millisecond of sending it has not sent (TL_NOTSENT),
 *    refilled from its ACK path.
 *  - One hrtimer per socket (the paper's lifetime timer) fires at the
 *    earliest deadline; the unsent part of every expired section is then
 *    abandoned and an ABANDON record tells the receiver its exact stream
 *    position and length.  Sections that never reached TCP cost only
 *    their 20-byte ABANDON record.
 *  - The receiver parses the records in recvmsg() and returns data and
 *    gaps with TL_DATA / TL_GAP control messages (the paper's API).
 *  - Optionally (TL_ARRIVAL, tltcp_arrival.c) the deadline is the
 *    receiver's: a section is abandoned as soon as it can no longer
 *    arrive by it, and the earliest deadline goes first.
 *
 * The difference from the paper, and what it costs: bytes already handed
 * to TCP cannot be taken back.  Data in flight when its deadline passes
 * is still retransmitted if lost, and up to TL_NOTSENT bytes queued in
 * TCP are still sent after the deadline.  Both are counted
 * (bytes_obsolete_late, bytes_obsolete_retrans).  In exchange every loss
 * is seen by TCP's congestion control: the flow is exactly as friendly as
 * TCP, where the paper's TLTCP could miss losses of obsolete data and
 * take more than its share.  A lost obsolete segment also holds back
 * current data behind it for a retransmission (head-of-line blocking),
 * which the paper's receiver would skip.
 *
 * Both ends attach the ULP to a connected socket; each direction opens
 * with a HELLO record, sent just before the first section's record, so a
 * peer without the module is detected (EPROTO) instead of being misread.
 * The user API is include/uapi/linux/tltcp.h; Documentation/tltcp.rst
 * describes it with examples.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <net/inet_common.h>
#include <net/tcp.h>
#include <compat/kcompat.h>

#include "tltcp.h"

enum { TLTCP_IPV4, TLTCP_IPV6, TLTCP_NFAMILIES };

/* Built on first use from a live socket's tables: inet6_stream_ops and
 * tcpv6_prot are not exported.
 */
static struct proto tltcp_prots[TLTCP_NFAMILIES];
static struct proto_ops tltcp_proto_ops[TLTCP_NFAMILIES];
static const struct proto *tltcp_base_prots[TLTCP_NFAMILIES];
static const struct proto_ops *tltcp_base_ops[TLTCP_NFAMILIES];
static DEFINE_MUTEX(tltcp_prot_mutex);

#define TLTCP_ATTACH_STATES	(TCPF_ESTABLISHED | TCPF_CLOSE_WAIT | \
				 TCPF_FIN_WAIT1 | TCPF_FIN_WAIT2 | \
				 TCPF_CLOSING | TCPF_LAST_ACK)

static int tltcp_family(const struct sock *sk)
{
	return sk->sk_family == AF_INET6 ? TLTCP_IPV6 : TLTCP_IPV4;
}

static __poll_t tltcp_poll(struct file *file, struct socket *sock,
			   poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct tltcp_ctx *ctx = tltcp_get_ctx(sk);
	__poll_t mask;

	mask = tltcp_base_ops[tltcp_family(sk)]->poll(file, sock, wait);
	/* Readable means a read returns something, not only framing. */
	if (tltcp_rx_readable(sk, ctx, mask & EPOLLIN))
		mask |= EPOLLIN | EPOLLRDNORM;
	else
		mask &= ~(EPOLLIN | EPOLLRDNORM);
	/* Writable means the module's queue has room, whatever TCP's has. */
	if (((1 << inet_sk_state_load(sk)) &
	     (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT)) &&
	    !(READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN) &&
	    !READ_ONCE(ctx->fin_pending) && !READ_ONCE(sk->sk_err)) {
		mask &= ~(EPOLLOUT | EPOLLWRNORM);
		if (!tltcp_sndq_has_room(sk, ctx)) {
			sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
			set_bit(SOCK_NOSPACE, &sock->flags);
			/* Flag before re-check; tcp_check_space() pairs. */
			smp_mb__after_atomic();
		}
		if (tltcp_sndq_has_room(sk, ctx))
			mask |= EPOLLOUT | EPOLLWRNORM;
	}
	return mask;
}

/* The raw byte stream must not bypass the framing. */
static ssize_t tltcp_splice_read(struct socket *sock, loff_t *ppos,
				 struct pipe_inode_info *pipe, size_t len,
				 unsigned int flags)
{
	return -EOPNOTSUPP;
}

static int tltcp_disconnect(struct sock *sk, int flags)
{
	return -EOPNOTSUPP;
}

#ifdef KC_PROTO_SENDPAGE
/* sendfile() on 6.1: the page is copied like write() data. */
static int tltcp_sendpage(struct sock *sk, struct page *page, int offset,
			  size_t size, int flags)
{
	struct bio_vec bvec = {
		.bv_page = page, .bv_offset = offset, .bv_len = size,
	};
	struct msghdr msg = {
		.msg_flags = flags & (MSG_DONTWAIT | MSG_NOSIGNAL),
	};

	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &bvec, 1, size);
	return tltcp_sendmsg(sk, &msg, size);
}
#endif

static int tltcp_set_u32(sockptr_t optval, unsigned int optlen, u32 *v)
{
	if (optlen != sizeof(u32))
		return -EINVAL;
	return copy_from_sockptr(v, optval, sizeof(u32)) ? -EFAULT : 0;
}

static int tltcp_setsockopt(struct sock *sk, int level, int optname,
			    sockptr_t optval, unsigned int optlen)
{
	struct tltcp_ctx *ctx = tltcp_get_ctx(sk);
	u64 v64;
	u32 v;
	int err;

	if (level != SOL_TLTCP)
		return ctx->sk_proto->setsockopt(sk, level, optname, optval,
						 optlen);
	switch (optname) {
	case TL_DEFAULT_DEADLINE:
		if (optlen != sizeof(u64))
			return -EINVAL;
		if (copy_from_sockptr(&v64, optval, sizeof(v64)))
			return -EFAULT;
		if (v64 > TL_MAX_DEADLINE)
			return -EINVAL;
		lock_sock(sk);
		ctx->default_deadline = v64;
		release_sock(sk);
		return 0;
	case TL_SNDQ_LIMIT:
		err = tltcp_set_u32(optval, optlen, &v);
		if (err)
			return err;
		if (v > TL_MAX_SNDQ_LIMIT)
			return -EINVAL;
		/* What SO_SNDBUF would allow (it doubles the value asked
		 * for); beyond, the privilege SO_SNDBUFFORCE needs.
		 */
		if (v > 2 * READ_ONCE(sysctl_wmem_max) &&
		    !ns_capable(sock_net(sk)->user_ns, CAP_NET_ADMIN))
			return -EPERM;
		lock_sock(sk);
		WRITE_ONCE(ctx->sndq_limit, v);
		release_sock(sk);
		return 0;
	case TL_NOTSENT:
		err = tltcp_set_u32(optval, optlen, &v);
		if (err)
			return err;
		if (v < TL_MIN_NOTSENT || v > TL_MAX_NOTSENT)
			return -EINVAL;
		lock_sock(sk);
		ctx->notsent = v;
		tltcp_push(sk, ctx);
		release_sock(sk);
		return 0;
	case TL_ARRIVAL:
		err = tltcp_set_u32(optval, optlen, &v);
		if (err)
			return err;
		if (v != TL_ARRIVAL_OFF && v != TL_ARRIVAL_ON)
			return -EINVAL;
		lock_sock(sk);
		ctx->arrival = v == TL_ARRIVAL_ON;
		tltcp_push(sk, ctx);
		release_sock(sk);
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

static int tltcp_getsockopt(struct sock *sk, int level, int optname,
			    char __user *optval, int __user *optlen)
{
	struct tltcp_ctx *ctx = tltcp_get_ctx(sk);
	struct tl_info info;
	int len, size;
	u64 v64;
	u32 v;

	if (level != SOL_TLTCP) {
		/* Zero-copy receive would map the raw stream. */
		if (level == SOL_TCP && optname == TCP_ZEROCOPY_RECEIVE)
			return -EOPNOTSUPP;
		return ctx->sk_proto->getsockopt(sk, level, optname, optval,
						 optlen);
	}
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;

	lock_sock(sk);
	switch (optname) {
	case TL_INFO:
		/* Not rx.lock: a reader holds it while it blocks.  The
		 * receive counters are written by that reader alone.
		 */
		tltcp_update_obsolete(sk, ctx);
		tltcp_arrival_acked(sk, ctx);
		info = ctx->info;
		size = min_t(int, len, sizeof(info));
		break;
	case TL_DEFAULT_DEADLINE:
		v64 = ctx->default_deadline;
		size = sizeof(v64);
		break;
	case TL_SNDQ_LIMIT:
		v = ctx->sndq_limit;
		size = sizeof(v);
		break;
	case TL_NOTSENT:
		v = tltcp_notsent(sk, ctx);
		size = sizeof(v);
		break;
	case TL_ARRIVAL:
		v = ctx->arrival ? TL_ARRIVAL_ON : TL_ARRIVAL_OFF;
		size = sizeof(v);
		break;
	default:
		release_sock(sk);
		return -ENOPROTOOPT;
	}
	release_sock(sk);

	if (optname != TL_INFO && len < size)
		return -EINVAL;
	if (put_user(size, optlen))
		return -EFAULT;
	if (copy_to_user(optval, optname == TL_INFO ? (void *)&info :
			 optname == TL_DEFAULT_DEADLINE ? (void *)&v64 :
			 (void *)&v, size))
		return -EFAULT;
	return 0;
}

/* Teardown order matters: mark the context closing under the socket lock
 * (write_space runs under it too, so no new work can be queued after),
 * then stop the timer and the work (the work takes the lock), then resolve
 * the queue and give the socket back to TCP before TCP's close.
 */
static void tltcp_close(struct sock *sk, long timeout)
{
	struct inet_connection_sock *icsk = inet_csk(sk);
	struct tltcp_ctx *ctx = tltcp_get_ctx(sk);
	struct proto *base = ctx->sk_proto;

	tltcp_rx_close(sk, ctx);
	lock_sock(sk);
	set_bit(TLTCP_CLOSING, &ctx->flags);
	release_sock(sk);
	hrtimer_cancel(&ctx->timer);
	cancel_work_sync(&ctx->tx_work);

	lock_sock(sk);
	timeout = tltcp_tx_close(sk, ctx, timeout);
	write_lock_bh(&sk->sk_callback_lock);
	/* Another layer may have stacked its own callback on ours. */
	if (sk->sk_write_space == tltcp_write_space)
		sk->sk_write_space = ctx->saved_write_space;
	WRITE_ONCE(sk->sk_prot, base);
	rcu_assign_pointer(icsk->icsk_ulp_data, NULL);
	write_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);

	TLTCP_DEC_STATS(ctx, TLTCP_MIB_CURR_SOCKETS);
	mutex_destroy(&ctx->rx.lock);
	kfree_rcu(ctx, rcu);
	base->close(sk, timeout);
}

static void tltcp_build_proto(int f, const struct proto *base,
			      const struct proto_ops *base_ops)
{
	struct proto *prot = &tltcp_prots[f];

	*prot = *base;
	prot->close = tltcp_close;
	prot->sendmsg = tltcp_sendmsg;
	tltcp_rx_proto(prot);
	prot->setsockopt = tltcp_setsockopt;
	prot->getsockopt = tltcp_getsockopt;
	prot->shutdown = tltcp_shutdown;
	prot->disconnect = tltcp_disconnect;
#ifdef KC_PROTO_SENDPAGE
	prot->sendpage = tltcp_sendpage;
#endif
	tltcp_proto_ops[f] = *base_ops;
	tltcp_proto_ops[f].poll = tltcp_poll;
	tltcp_proto_ops[f].splice_read = tltcp_splice_read;
	tltcp_proto_ops[f].mmap = sock_no_mmap;
	tltcp_proto_ops[f].read_sock = NULL;
	tltcp_proto_ops[f].read_skb = NULL;
	/* In-kernel writers (KCM) would put raw bytes into the framing. */
	tltcp_proto_ops[f].sendmsg_locked = NULL;
#ifdef KC_OPS_SENDPAGE_LOCKED
	tltcp_proto_ops[f].sendpage_locked = NULL;
#endif
}

/* Our tables for the socket's family, built from its own; only a plain
 * TCP socket (not sockmap's or another ULP's tables) qualifies.
 */
static int tltcp_get_protos(struct sock *sk, int f)
{
	int err = 0;

	mutex_lock(&tltcp_prot_mutex);
	if (!tltcp_base_prots[f]) {
		tltcp_build_proto(f, sk->sk_prot, sk->sk_socket->ops);
		tltcp_base_prots[f] = sk->sk_prot;
		tltcp_base_ops[f] = sk->sk_socket->ops;
	}
	if (sk->sk_prot != tltcp_base_prots[f] ||
	    sk->sk_socket->ops != tltcp_base_ops[f])
		err = -EOPNOTSUPP;
	mutex_unlock(&tltcp_prot_mutex);
	return err;
}

/* setsockopt(TCP_ULP, "tltcp"), with the socket locked. */
static int tltcp_init(struct sock *sk)
{
	struct inet_connection_sock *icsk = inet_csk(sk);
	int f = tltcp_family(sk);
	struct tltcp_ctx *ctx;
	int err;

	/* Wherever the peer's stream can still be read, also once both ends
	 * have closed it in order (CLOSE after the peer's FIN).  After a
	 * local shutdown(SHUT_WR) sending fails with EPIPE.
	 */
	if (!((1 << sk->sk_state) & TLTCP_ATTACH_STATES) &&
	    !(sk->sk_state == TCP_CLOSE && sock_flag(sk, SOCK_DONE)))
		return -ENOTCONN;
	if (!sk->sk_socket || sk->sk_user_data)
		return -EBUSY;
	err = tltcp_get_protos(sk, f);
	if (err)
		return err;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->sk = sk;
	ctx->sk_proto = sk->sk_prot;
	ctx->mib = tltcp_net_mib(sock_net(sk));
	tltcp_tx_init(sk, ctx);
	tltcp_rx_init(ctx);

	write_lock_bh(&sk->sk_callback_lock);
	ctx->saved_write_space = sk->sk_write_space;
	rcu_assign_pointer(icsk->icsk_ulp_data, ctx);
	sk->sk_write_space = tltcp_write_space;
	WRITE_ONCE(sk->sk_prot, &tltcp_prots[f]);
	WRITE_ONCE(sk->sk_socket->ops, &tltcp_proto_ops[f]);
	write_unlock_bh(&sk->sk_callback_lock);

	TLTCP_INC_STATS(ctx, TLTCP_MIB_CURR_SOCKETS);
	TLTCP_INC_STATS(ctx, TLTCP_MIB_SOCKETS);
	return 0;
}

static struct tcp_ulp_ops tltcp_ulp_ops __read_mostly = {
	.name	= "tltcp",
	.owner	= THIS_MODULE,
	.init	= tltcp_init,
};

static int __init tltcp_module_init(void)
{
	int err;

	BUILD_BUG_ON(TLTCP_HDR_LEN != 20);
	BUILD_BUG_ON(sizeof(struct tl_record) % 8 || sizeof(struct tl_info) % 8);
	err = tltcp_stat_init();
	if (err)
		return err;
	err = tcp_register_ulp(&tltcp_ulp_ops);
	if (err)
		tltcp_stat_exit();
	return err;
}

static void __exit tltcp_module_exit(void)
{
	tcp_unregister_ulp(&tltcp_ulp_ops);
	tltcp_stat_exit();
}

module_init(tltcp_module_init);
module_exit(tltcp_module_exit);

MODULE_AUTHOR("Research transports for Linux");
MODULE_DESCRIPTION("Time-lined TCP: sections with deadlines over TCP");
MODULE_LICENSE("GPL");
MODULE_ALIAS_TCP_ULP("tltcp");
