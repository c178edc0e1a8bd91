// SPDX-License-Identifier: GPL-2.0
/*
 * Time-lined TCP, send side: the section queue, the lifetime timer and the
 * records handed to TCP.
 *
 * Sections wait here, not in TCP's write queue.  tltcp_push() hands TCP
 * one record at a time, and only while TCP holds less than "notsent" bytes
 * it has not transmitted (write_seq - snd_nxt), so that what a deadline
 * cannot take back any more is about two segments beyond snd_nxt.  It
 * runs from sendmsg() and, in process context, from tx_work, which the
 * socket's write_space callback (TCP has freed acknowledged data) and the
 * lifetime timer queue.  Everything here runs under the socket lock.
 *
 * A record promised to TCP is always completed (ctx->txr): the receiver
 * parses the stream, so a header must be followed by exactly the bytes it
 * announces.  A deadline therefore abandons what follows the record in
 * progress; records are at most notsent bytes long, so that is little.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <net/tcp.h>
#include <compat/kcompat.h>

#include "tltcp.h"

#define TLTCP_NO_DEADLINE	U64_MAX

static u64 tltcp_now(void)
{
	return ktime_get_ns();
}

u32 tltcp_notsent(const struct sock *sk, const struct tltcp_ctx *ctx)
{
	if (ctx->notsent)
		return ctx->notsent;
	return max_t(u32, 2 * tcp_sk(sk)->mss_cache, TL_MIN_NOTSENT);
}

static u32 tltcp_sndq_limit(const struct sock *sk, const struct tltcp_ctx *ctx)
{
	return ctx->sndq_limit ? : READ_ONCE(sk->sk_sndbuf);
}

/* One more section may be queued: the queue is below its limit.  The
 * section itself may overshoot it, so that poll() and sendmsg() agree.
 */
bool tltcp_sndq_has_room(const struct sock *sk, const struct tltcp_ctx *ctx)
{
	return READ_ONCE(ctx->queued_mem) < tltcp_sndq_limit(sk, ctx) &&
	       READ_ONCE(ctx->queued_sections) < TLTCP_MAX_QUEUED;
}

static bool tltcp_tx_pending(const struct tltcp_ctx *ctx)
{
	return !list_empty(&ctx->sendq) || ctx->txr.len;
}

/* The connection can no longer carry our records. */
static bool tltcp_tx_dead(const struct sock *sk)
{
	return READ_ONCE(sk->sk_err) ||
	       !((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT));
}

static void tltcp_wake_writers(struct sock *sk)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_poll(&wq->wait, EPOLLOUT |
					   EPOLLWRNORM | EPOLLWRBAND);
	if (wq && wq->fasync_list && !(sk->sk_shutdown & SEND_SHUTDOWN))
		sock_wake_async(wq, SOCK_WAKE_SPACE, POLL_OUT);
	rcu_read_unlock();
}

static void tltcp_arm_timer(struct tltcp_ctx *ctx, u64 at)
{
	ctx->timer_at = at;
	if (test_bit(TLTCP_CLOSING, &ctx->flags))
		return;
	if (at == TLTCP_NO_DEADLINE)
		hrtimer_try_to_cancel(&ctx->timer);
	else
		hrtimer_start(&ctx->timer, ns_to_ktime(at),
			      HRTIMER_MODE_ABS_SOFT);
}

static void tltcp_uncharge(struct sock *sk, struct tltcp_ctx *ctx, u32 mem)
{
	WRITE_ONCE(ctx->queued_mem, ctx->queued_mem - mem);
	sk_mem_uncharge(sk, mem);
}

static void tltcp_free_data(struct sock *sk, struct tltcp_ctx *ctx,
			    struct tltcp_section *sec)
{
	if (!sec->data)
		return;
	kvfree(sec->data);
	sec->data = NULL;
	tltcp_uncharge(sk, ctx, sec->len);
}

static void tltcp_dequeue(struct sock *sk, struct tltcp_ctx *ctx,
			  struct tltcp_section *sec)
{
	list_del(&sec->list);
	tltcp_free_data(sk, ctx, sec);
	tltcp_uncharge(sk, ctx, sizeof(*sec));
	WRITE_ONCE(ctx->queued_sections, ctx->queued_sections - 1);
	ctx->info.sections_queued--;
	kfree(sec);
}

/* Retransmissions while TCP's oldest unacknowledged byte belongs to an
 * abandoned section count as obsolete.  TCP may also retransmit current
 * data in that time (SACK holes further on), so this is an upper bound.
 */
void tltcp_update_obsolete(struct sock *sk, struct tltcp_ctx *ctx)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (!ctx->obsolete_tracking)
		return;
	ctx->info.bytes_obsolete_retrans += tp->bytes_retrans -
					    ctx->retrans_mark;
	ctx->retrans_mark = tp->bytes_retrans;
	if (!before(tp->snd_una, ctx->obsolete_end))
		ctx->obsolete_tracking = false;
}

/* The deadline of @sec passed: what was not handed to TCP is abandoned;
 * its ABANDON record follows when the section reaches the queue's head.
 */
static void tltcp_abandon(struct sock *sk, struct tltcp_ctx *ctx,
			  struct tltcp_section *sec)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 rest = sec->len - sec->sent;

	sec->expired = true;
	ctx->info.bytes_abandoned += rest;
	ctx->info.bytes_queued -= rest;
	if (!sec->sent) {
		ctx->info.sections_abandoned_unsent++;
	} else {
		ctx->info.sections_abandoned_partial++;
		/* Bytes TCP has but has not sent yet will go out late. */
		if (after(sec->end_seq, tp->snd_nxt))
			ctx->info.bytes_obsolete_late +=
				min(sec->end_seq - tp->snd_nxt, sec->sent);
		if (after(sec->end_seq, tp->snd_una)) {
			tltcp_update_obsolete(sk, ctx);
			if (!ctx->obsolete_tracking ||
			    after(sec->end_seq, ctx->obsolete_end))
				ctx->obsolete_end = sec->end_seq;
			if (!ctx->obsolete_tracking)
				ctx->retrans_mark = tp->bytes_retrans;
			ctx->obsolete_tracking = true;
		}
	}
	/* The record in progress still needs its payload. */
	if (ctx->txr.sec != sec)
		tltcp_free_data(sk, ctx, sec);
}

/* Abandon every section whose deadline has passed; re-arm the timer at
 * the earliest deadline left.  Deadlines need not be in queue order.
 */
static void tltcp_expire(struct sock *sk, struct tltcp_ctx *ctx)
{
	u64 now = tltcp_now(), next = TLTCP_NO_DEADLINE;
	struct tltcp_section *sec;

	if (now < ctx->timer_at)
		return;
	list_for_each_entry(sec, &ctx->sendq, list) {
		/* Whole in TCP already, waiting for its last record. */
		if (sec->expired || sec->sent == sec->len)
			continue;
		if (sec->deadline <= now)
			tltcp_abandon(sk, ctx, sec);
		else if (sec->deadline < next)
			next = sec->deadline;
	}
	tltcp_arm_timer(ctx, next);
}

static void tltcp_set_record(struct tltcp_ctx *ctx, u8 type,
			     struct tltcp_section *sec, u32 len, u32 payload)
{
	struct tltcp_tx_record *r = &ctx->txr;

	r->hdr.type = type;
	r->hdr.flags = 0;
	r->hdr.resv = 0;
	r->hdr.len = cpu_to_be32(len);
	r->hdr.section = cpu_to_be32((u32)sec->id);
	r->hdr.sec_off = cpu_to_be32(sec->sent);
	r->hdr.sec_len = cpu_to_be32(sec->len);
	r->payload = payload ? sec->data + sec->sent : NULL;
	r->sec = payload ? sec : NULL;
	r->len = TLTCP_HDR_LEN + payload;
	r->done = 0;
}

/* Hand TCP what it has not taken of the current record; true when the
 * record is complete.
 */
static bool tltcp_send_record(struct sock *sk, struct tltcp_ctx *ctx)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	struct tltcp_tx_record *r = &ctx->txr;
	u32 off = r->done, left = r->len - r->done;
	struct kvec iov[2];
	int n = 0, ret;

	if (off < TLTCP_HDR_LEN) {
		iov[n].iov_base = (u8 *)&r->hdr + off;
		iov[n++].iov_len = TLTCP_HDR_LEN - off;
		off = 0;
	} else {
		off -= TLTCP_HDR_LEN;
	}
	if (r->payload) {
		iov[n].iov_base = (void *)(r->payload + off);
		iov[n++].iov_len = r->len - TLTCP_HDR_LEN - off;
	}
	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, iov, n, left);
	ret = tcp_sendmsg_locked(sk, &msg, left);
	if (ret > 0)
		r->done += ret;
	if (r->done < r->len)
		return false;

	if (r->sec) {
		struct tltcp_section *sec = r->sec;

		sec->end_seq = tcp_sk(sk)->write_seq;
		r->sec = NULL;
		if (sec->expired)
			tltcp_free_data(sk, ctx, sec);
	}
	r->payload = NULL;
	r->len = 0;
	return true;
}

/* Drop everything queued: the connection is gone or the socket closes. */
static void tltcp_purge(struct sock *sk, struct tltcp_ctx *ctx)
{
	struct tltcp_section *sec, *tmp;

	ctx->txr.len = 0;
	ctx->txr.sec = NULL;
	ctx->txr.payload = NULL;
	list_for_each_entry_safe(sec, tmp, &ctx->sendq, list) {
		if (sec->sent == sec->len)
			ctx->info.sections_completed++;
		else if (!sec->expired)
			tltcp_abandon(sk, ctx, sec);
		tltcp_dequeue(sk, ctx, sec);
	}
	tltcp_arm_timer(ctx, TLTCP_NO_DEADLINE);
}

/* Feed TCP from the queue.  @all: ignore the notsent limit (close). */
static void __tltcp_push(struct sock *sk, struct tltcp_ctx *ctx, bool all)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 mem = ctx->queued_mem;
	struct tltcp_section *sec;

	if (tltcp_tx_dead(sk)) {
		if (tltcp_tx_pending(ctx))
			tltcp_purge(sk, ctx);
		ctx->fin_pending = false;
		goto wake;
	}
	tltcp_expire(sk, ctx);
	for (;;) {
		u32 limit, unsent, n;

		if (ctx->txr.len && !tltcp_send_record(sk, ctx))
			break;
		sec = list_first_entry_or_null(&ctx->sendq,
					       struct tltcp_section, list);
		if (!sec)
			break;
		if (sec->expired) {
			tltcp_set_record(ctx, TLTCP_REC_ABANDON, sec,
					 sec->len - sec->sent, 0);
			tltcp_dequeue(sk, ctx, sec);
			continue;
		}
		if (sec->sent == sec->len) {
			ctx->info.sections_completed++;
			tltcp_dequeue(sk, ctx, sec);
			continue;
		}
		limit = all ? U32_MAX : tltcp_notsent(sk, ctx);
		unsent = tp->write_seq - tp->snd_nxt;
		if (unsent >= limit || limit - unsent <= TLTCP_HDR_LEN)
			break;
		n = min3(sec->len - sec->sent, limit - unsent - TLTCP_HDR_LEN,
			 TLTCP_MAX_RECORD);
		tltcp_set_record(ctx, TLTCP_REC_DATA, sec, n, n);
		sec->sent += n;
		ctx->info.bytes_sent += n;
		ctx->info.bytes_queued -= n;
	}
	tltcp_update_obsolete(sk, ctx);

	if (tltcp_tx_pending(ctx)) {
		/* Have TCP call write_space when it frees acknowledged data. */
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	} else if (ctx->fin_pending) {
		ctx->fin_pending = false;
		WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | SEND_SHUTDOWN);
		ctx->sk_proto->shutdown(sk, SEND_SHUTDOWN);
	}
wake:
	if (ctx->queued_mem < mem && tltcp_sndq_has_room(sk, ctx))
		tltcp_wake_writers(sk);
}

void tltcp_push(struct sock *sk, struct tltcp_ctx *ctx)
{
	__tltcp_push(sk, ctx, false);
}

static void tltcp_tx_work(struct work_struct *work)
{
	struct tltcp_ctx *ctx = container_of(work, struct tltcp_ctx, tx_work);
	struct sock *sk = ctx->sk;

	lock_sock(sk);
	if (!test_bit(TLTCP_CLOSING, &ctx->flags))
		tltcp_push(sk, ctx);
	release_sock(sk);
}

static enum hrtimer_restart tltcp_timer_fn(struct hrtimer *timer)
{
	struct tltcp_ctx *ctx = container_of(timer, struct tltcp_ctx, timer);

	if (!test_bit(TLTCP_CLOSING, &ctx->flags))
		schedule_work(&ctx->tx_work);
	return HRTIMER_NORESTART;
}

/* TCP freed acknowledged data (softirq, or the lock owner's backlog). */
void tltcp_write_space(struct sock *sk)
{
	struct tltcp_ctx *ctx = tltcp_get_ctx(sk);

	/* close() restores TCP's callback under the socket lock, which
	 * callers of write_space hold: ctx is still there, unless a layer
	 * stacked on ours kept calling us after close().
	 */
	if (unlikely(!ctx)) {
		if (sk->sk_socket && sk_stream_is_writeable(sk)) {
			clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
			tltcp_wake_writers(sk);
		}
		return;
	}
	if ((tltcp_tx_pending(ctx) || ctx->fin_pending) &&
	    !test_bit(TLTCP_CLOSING, &ctx->flags))
		schedule_work(&ctx->tx_work);
	else
		ctx->saved_write_space(sk);
}

void tltcp_tx_init(struct sock *sk, struct tltcp_ctx *ctx)
{
	struct tltcp_section hello = { .id = TLTCP_MAGIC, .sent = TLTCP_VERSION };

	INIT_LIST_HEAD(&ctx->sendq);
	INIT_WORK(&ctx->tx_work, tltcp_tx_work);
	hrtimer_init(&ctx->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	ctx->timer.function = tltcp_timer_fn;
	ctx->timer_at = TLTCP_NO_DEADLINE;
	/* The HELLO opens our direction of the stream. */
	tltcp_set_record(ctx, TLTCP_REC_HELLO, &hello, 0, 0);
	ctx->txr.hdr.sec_len = 0;
}

/* Why this socket cannot queue sections now, or 0. */
static int tltcp_send_error(struct sock *sk, const struct tltcp_ctx *ctx)
{
	if (sk->sk_err)
		return sock_error(sk);
	if ((sk->sk_shutdown & SEND_SHUTDOWN) || ctx->fin_pending ||
	    tltcp_tx_dead(sk))
		return -EPIPE;
	return 0;
}

static int tltcp_wait_room(struct sock *sk, struct tltcp_ctx *ctx,
			   long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	int err;

	add_wait_queue(sk_sleep(sk), &wait);
	for (;;) {
		err = tltcp_send_error(sk, ctx);
		if (err || tltcp_sndq_has_room(sk, ctx))
			break;
		if (!*timeo) {
			err = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			err = sock_intr_errno(*timeo);
			break;
		}
		sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		sk_wait_event(sk, timeo, tltcp_sndq_has_room(sk, ctx) ||
			      READ_ONCE(sk->sk_err) ||
			      (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN),
			      &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return err;
}

/* Queue one section of @len bytes taken from @msg. */
static int tltcp_queue_section(struct sock *sk, struct tltcp_ctx *ctx,
			       struct msghdr *msg, u32 len, u64 deadline,
			       long *timeo)
{
	u32 mem = sizeof(struct tltcp_section) + len;
	struct tltcp_section *sec;
	int err;

	err = tltcp_wait_room(sk, ctx, timeo);
	if (err)
		return err;
	if (!sk_wmem_schedule(sk, mem))
		return -ENOBUFS;
	sec = kzalloc(sizeof(*sec), sk->sk_allocation);
	if (!sec)
		return -ENOBUFS;
	sec->data = kvmalloc(len, GFP_KERNEL | __GFP_NOWARN);
	if (!sec->data) {
		kfree(sec);
		return -ENOBUFS;
	}
	if (!copy_from_iter_full(sec->data, len, &msg->msg_iter)) {
		kvfree(sec->data);
		kfree(sec);
		return -EFAULT;
	}
	sk_mem_charge(sk, mem);
	WRITE_ONCE(ctx->queued_mem, ctx->queued_mem + mem);
	WRITE_ONCE(ctx->queued_sections, ctx->queued_sections + 1);
	sec->id = ctx->next_id++;
	sec->len = len;
	sec->deadline = deadline;
	list_add_tail(&sec->list, &ctx->sendq);
	ctx->info.sections_offered++;
	ctx->info.sections_queued++;
	ctx->info.bytes_offered += len;
	ctx->info.bytes_queued += len;
	if (deadline < ctx->timer_at)
		tltcp_arm_timer(ctx, deadline);
	return 0;
}

struct tltcp_deadlines {
	const u8	*val;		/* n unaligned u64 */
	unsigned int	n;
	bool		absolute;
};

static int tltcp_parse_cmsgs(struct msghdr *msg, struct tltcp_deadlines *dl)
{
	struct cmsghdr *cmsg;

	if (!msg->msg_controllen)
		return 0;
	for_each_cmsghdr(cmsg, msg) {
		size_t len;

		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_TLTCP)
			return -EINVAL;
		if (cmsg->cmsg_type != TL_DEADLINE &&
		    cmsg->cmsg_type != TL_DEADLINE_ABS)
			return -EINVAL;
		if (dl->val)
			return -EINVAL;
		len = cmsg->cmsg_len - CMSG_LEN(0);
		if (!len || len % sizeof(u64))
			return -EINVAL;
		dl->val = CMSG_DATA(cmsg);
		dl->n = len / sizeof(u64);
		dl->absolute = cmsg->cmsg_type == TL_DEADLINE_ABS;
	}
	return 0;
}

/* Deadline @i of @dl as absolute CLOCK_MONOTONIC ns, or 0 if invalid. */
static u64 tltcp_deadline(const struct tltcp_deadlines *dl, unsigned int i,
			  u64 now)
{
	u64 d = get_unaligned((const u64 *)(dl->val + i * sizeof(u64)));

	if (!d)
		return 0;
	if (dl->absolute)
		return d - now <= TL_MAX_DEADLINE || d <= now ? d : 0;
	return d <= TL_MAX_DEADLINE ? now + d : 0;
}

/* The sections of a MSG_TL sendmsg are the elements of its iovec. */
static int tltcp_sections(struct msghdr *msg, const struct iovec **iov,
			  unsigned long *n)
{
	const struct iov_iter *it = &msg->msg_iter;

	if (iter_is_ubuf(it)) {
		*iov = NULL;
		*n = 1;
		return 0;
	}
	if (!iter_is_iovec(it) || it->iov_offset)
		return -EINVAL;
	*iov = kc_iter_iov(it);
	*n = it->nr_segs;
	return 0;
}

static int tltcp_send_sections(struct sock *sk, struct tltcp_ctx *ctx,
			       struct msghdr *msg, const struct tltcp_deadlines *dl,
			       u64 now, long *timeo, size_t *copied)
{
	const struct iovec *iov;
	unsigned long n, i;
	int err;

	err = tltcp_sections(msg, &iov, &n);
	if (err)
		return err;
	if (n > TL_MAX_SECTIONS)
		return -EMSGSIZE;
	if (!dl->val || dl->n != n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		size_t len = iov ? iov[i].iov_len : iov_iter_count(&msg->msg_iter);

		if (!len)
			return -EINVAL;
		if (len > TL_MAX_SECTION_LEN)
			return -EMSGSIZE;
		if (!tltcp_deadline(dl, i, now))
			return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		size_t len = iov ? iov[i].iov_len : iov_iter_count(&msg->msg_iter);

		err = tltcp_queue_section(sk, ctx, msg, len,
					  tltcp_deadline(dl, i, now), timeo);
		if (err)
			return err;
		*copied += len;
		tltcp_push(sk, ctx);
	}
	return 0;
}

/* Without MSG_TL: a byte stream, cut into sections with the default
 * deadline (none unless TL_DEFAULT_DEADLINE is set).
 */
static int tltcp_send_stream(struct sock *sk, struct tltcp_ctx *ctx,
			     struct msghdr *msg, size_t size, u64 now,
			     long *timeo, size_t *copied)
{
	u64 deadline = ctx->default_deadline ?
		       now + ctx->default_deadline : TLTCP_NO_DEADLINE;
	int err;

	while (*copied < size) {
		u32 len = min_t(size_t, size - *copied, TLTCP_STREAM_SECTION);

		err = tltcp_queue_section(sk, ctx, msg, len, deadline, timeo);
		if (err)
			return err;
		*copied += len;
		tltcp_push(sk, ctx);
	}
	return 0;
}

int tltcp_sendmsg(struct sock *sk, struct msghdr *msg, size_t size)
{
	struct tltcp_ctx *ctx = tltcp_get_ctx(sk);
	int flags = msg->msg_flags;
	struct tltcp_deadlines dl = {};
	u64 now = tltcp_now();
	size_t copied = 0;
	long timeo;
	int err;

	if (flags & (MSG_OOB | MSG_ZEROCOPY | MSG_FASTOPEN))
		return -EOPNOTSUPP;
	err = tltcp_parse_cmsgs(msg, &dl);
	if (err)
		return err;
	if (dl.val && !(flags & MSG_TL))
		return -EINVAL;

	lock_sock(sk);
	timeo = sock_sndtimeo(sk, flags & MSG_DONTWAIT);
	if (flags & MSG_TL)
		err = tltcp_send_sections(sk, ctx, msg, &dl, now, &timeo,
					  &copied);
	else
		err = tltcp_send_stream(sk, ctx, msg, size, now, &timeo,
					&copied);
	if (copied)
		err = copied;
	else if (err == -EPIPE || err == -EAGAIN)
		err = sk_stream_error(sk, flags, err);
	release_sock(sk);
	return err;
}

/* shutdown(SHUT_WR): the FIN follows the queued sections.  inet_shutdown()
 * has set SEND_SHUTDOWN already, which would stop TCP from taking them:
 * clear it until the queue is empty (sendmsg() refuses meanwhile).
 */
void tltcp_shutdown(struct sock *sk, int how)
{
	struct tltcp_ctx *ctx = tltcp_get_ctx(sk);

	if ((how & SEND_SHUTDOWN) && tltcp_tx_pending(ctx) &&
	    !tltcp_tx_dead(sk)) {
		ctx->fin_pending = true;
		WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown & ~SEND_SHUTDOWN);
		tltcp_push(sk, ctx);
		if (how & RCV_SHUTDOWN)
			ctx->sk_proto->shutdown(sk, RCV_SHUTDOWN);
		return;
	}
	ctx->sk_proto->shutdown(sk, how);
}

/* close(): the timer and the work are stopped and the socket is locked.
 * With SO_LINGER and a time, keep pushing (deadlines still apply) until the
 * queue is empty or the time is up.  Then hand TCP whatever it takes at
 * once, which it sends after close like any TCP data (deadlines no longer
 * apply), and drop the rest.  A record TCP took only in part cannot be
 * completed: the connection is reset rather than left with a stream the
 * peer cannot parse.  SO_LINGER with zero time resets it anyway.
 */
void tltcp_tx_close(struct sock *sk, struct tltcp_ctx *ctx, long timeout)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	unsigned long end = jiffies + timeout;

	if (sock_flag(sk, SOCK_LINGER) && !sk->sk_lingertime)
		goto drop;

	add_wait_queue(sk_sleep(sk), &wait);
	while (timeout > 0 && !signal_pending(current)) {
		long slice = min_t(long, timeout, max(1, msecs_to_jiffies(10)));

		ctx->timer_at = 0;	/* check every deadline */
		tltcp_push(sk, ctx);
		if (!tltcp_tx_pending(ctx) || tltcp_tx_dead(sk))
			break;
		sk_wait_event(sk, &slice, tltcp_tx_dead(sk), &wait);
		timeout = (long)(end - jiffies);
	}
	remove_wait_queue(sk_sleep(sk), &wait);

	ctx->timer_at = 0;
	__tltcp_push(sk, ctx, true);
	if (ctx->txr.len && ctx->txr.done) {
		sock_set_flag(sk, SOCK_LINGER);
		sk->sk_lingertime = 0;
	}
drop:
	if (tltcp_tx_pending(ctx))
		tltcp_purge(sk, ctx);
	tltcp_update_obsolete(sk, ctx);
}
