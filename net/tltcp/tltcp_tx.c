// SPDX-License-Identifier: GPL-2.0
/*
 * Time-lined TCP, send side: the section queue, the lifetime timer and the
 * records handed to TCP.
 *
 * Sections wait here, not in TCP's write queue.  tltcp_push() hands TCP
 * records only while TCP holds less than "notsent" bytes it has not
 * transmitted (write_seq - snd_nxt): about a millisecond of sending, as
 * TCP autosizes its TSO packets (tltcp_notsent()), so that what a
 * deadline cannot take back any more is that much beyond snd_nxt, while
 * TCP still builds full GSO packets.  It runs from sendmsg(), from the
 * socket's write_space callback when TCP has freed acknowledged data (in
 * the ACK's softirq, with atomic allocations: tltcp_write_space()), and
 * from tx_work in process context, which the lifetime timer queues, and
 * write_space when the socket's owner runs TCP's ACK path.
 * Everything here runs under the socket lock (in softirq its spinlock).
 *
 * A record promised to TCP is always completed (ctx->txr): the receiver
 * parses the stream, so a header must be followed by exactly the bytes it
 * announces.  A deadline therefore abandons what follows the record in
 * progress; records are at most notsent bytes long, so that is little.
 *
 * Memory.  The queue obeys the limits of TCP's own write queue: its bytes
 * count in sk_wmem_queued, so that the socket as a whole (queue and TCP's
 * unacknowledged data) stays below SO_SNDBUF, or below a larger
 * TL_SNDQ_LIMIT that only CAP_NET_ADMIN may set, as SO_SNDBUFFORCE; they
 * are charged to tcp_mem and to the memory cgroup, and an allocation that
 * either refuses fails cleanly (ENOBUFS, or a wait while the socket's own
 * data drains) instead of being forced through.  A section is admitted
 * whole, so it may overshoot by its size, which tltcp_max_section() bounds.
 * Its bytes are copied once, into pages (tltcp_buf.c) that TCP is later
 * given references to; until the section leaves the queue they count
 * twice, in the queue and in TCP's write queue.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <net/tcp.h>
#include <compat/kcompat.h>

#include "tltcp.h"
#include "tltcp_trace.h"

/* When TCP refused memory with nothing of its own in flight: retry. */
#define TLTCP_RETRY_NS		(20 * NSEC_PER_MSEC)
/* What a struct tltcp_section costs: its kmalloc bucket. */
#define TLTCP_SECTION_MEM	kmalloc_size_roundup(sizeof(struct tltcp_section))

static u64 tltcp_now(void)
{
	return ktime_get_ns();
}

/* How much TCP may hold that it has not sent: TL_NOTSENT, or else about
 * a millisecond of sending, as TCP sizes its own TSO packets (the pacing
 * rate, which TCP keeps at 1.2-2 times cwnd / srtt when the congestion
 * control does not set it, >> sk_pacing_shift), so that TCP can build
 * full GSO packets at any speed; at least two segments, and at most two
 * of the largest records, which the refill on every ACK keeps ahead of
 * the link even at rates where that is less than a millisecond.
 */
u32 tltcp_notsent(const struct sock *sk, const struct tltcp_ctx *ctx)
{
	u32 lo = max_t(u32, 2 * tcp_sk(sk)->mss_cache, TL_MIN_NOTSENT);
	u64 ms;

	if (ctx->notsent)
		return ctx->notsent;
	ms = READ_ONCE(sk->sk_pacing_rate) >> READ_ONCE(sk->sk_pacing_shift);
	return clamp_t(u64, ms, lo, max(lo, 2 * TLTCP_MAX_RECORD));
}

/* The queue's limit: TL_SNDQ_LIMIT, else SO_SNDBUF (which TCP autotunes).
 * Not more by default: a fixed floor would let a fresh connection on a
 * slow path pin many times what TCP's write queue holds there.
 */
static u32 tltcp_sndq_limit(const struct sock *sk, const struct tltcp_ctx *ctx)
{
	return ctx->sndq_limit ? : READ_ONCE(sk->sk_sndbuf);
}

/* One more section may be queued: the queue is below its limit and all
 * the socket holds is below what it may use (poll() and sendmsg() agree).
 */
bool tltcp_sndq_has_room(const struct sock *sk, const struct tltcp_ctx *ctx)
{
	u32 limit = tltcp_sndq_limit(sk, ctx);

	return READ_ONCE(ctx->queued_mem) < limit &&
	       READ_ONCE(sk->sk_wmem_queued) <
			max_t(u32, limit, READ_ONCE(sk->sk_sndbuf)) &&
	       READ_ONCE(ctx->queued_sections) < TLTCP_MAX_QUEUED;
}

/* Wake writers waiting for room once the queue has drained to half its
 * limit, not at every section it frees: as TCP wakes its writers only
 * when a third of the send buffer is free, so that a writer of small
 * sections is not woken (and scheduled) once per section.
 */
static bool tltcp_sndq_wake(const struct sock *sk, const struct tltcp_ctx *ctx)
{
	return tltcp_sndq_has_room(sk, ctx) &&
	       ctx->queued_mem <= tltcp_sndq_limit(sk, ctx) / 2;
}

/* The largest MSG_TL section: the queue limit.  A section is admitted
 * whole once the queue has room, so the socket may overshoot its limit by
 * at most that much, and pins at most about twice what TCP would.
 */
static u32 tltcp_max_section(const struct sock *sk,
			     const struct tltcp_ctx *ctx)
{
	return min_t(u32, tltcp_sndq_limit(sk, ctx), TL_MAX_SECTION_LEN);
}

static bool tltcp_tx_pending(const struct tltcp_ctx *ctx)
{
	return !list_empty(&ctx->sendq) || ctx->txr.len;
}

/* The connection can no longer carry our records.  Judged by the state
 * alone: a socket error on a live connection (ICMP with IP_RECVERR) is
 * the application's to read, while TCP goes on.
 */
static bool tltcp_tx_dead(const struct sock *sk)
{
	return !((1 << READ_ONCE(sk->sk_state)) &
		 (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT));
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

/* Queue memory, charged to the socket like its write queue (the caller
 * reserved it); sk_forward_alloc and sk_wmem_queued are the lock owner's.
 */
static void tltcp_charge(struct sock *sk, struct tltcp_ctx *ctx, u32 mem)
{
	WRITE_ONCE(ctx->queued_mem, ctx->queued_mem + mem);
	sk_wmem_queued_add(sk, mem);
	sk_mem_charge(sk, mem);
}

static void tltcp_uncharge(struct sock *sk, struct tltcp_ctx *ctx, u32 mem)
{
	WRITE_ONCE(ctx->queued_mem, ctx->queued_mem - mem);
	sk_wmem_queued_add(sk, -(int)mem);
	sk_mem_uncharge(sk, mem);
}

static void tltcp_free_data(struct sock *sk, struct tltcp_ctx *ctx,
			    struct tltcp_section *sec)
{
	if (!sec->data.bv)
		return;
	tltcp_buf_free(&sec->data);
	tltcp_uncharge(sk, ctx, sec->mem);
}

static void tltcp_free_section(struct sock *sk, struct tltcp_ctx *ctx,
			       struct tltcp_section *sec)
{
	tltcp_free_data(sk, ctx, sec);
	tltcp_uncharge(sk, ctx, TLTCP_SECTION_MEM);
	kfree(sec);
}

static void tltcp_dequeue(struct sock *sk, struct tltcp_ctx *ctx,
			  struct tltcp_section *sec)
{
	list_del(&sec->list);
	WRITE_ONCE(ctx->queued_sections, ctx->queued_sections - 1);
	if (!sec->expired)	/* then every byte went to TCP */
		TLTCP_INC_STATS(ctx, TLTCP_MIB_SECTIONS_COMPLETED);
	ctx->info.sections_queued--;
	tltcp_free_section(sk, ctx, sec);
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
	TLTCP_ADD_STATS(ctx, TLTCP_MIB_BYTES_OBSOLETE_RETRANS,
			tp->bytes_retrans - ctx->retrans_mark);
	ctx->retrans_mark = tp->bytes_retrans;
	if (!before(tp->snd_una, ctx->obsolete_end))
		ctx->obsolete_tracking = false;
}

/* The deadline of @sec passed: what was not handed to TCP is abandoned;
 * its ABANDON record follows when the section reaches the queue's head.
 */
void tltcp_abandon(struct sock *sk, struct tltcp_ctx *ctx,
		   struct tltcp_section *sec)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 rest = sec->len - sec->sent;
	u32 late;

	sec->expired = true;
	trace_tltcp_section_abandoned(sk, sec->id, sec->len, sec->sent, sec->deadline);
	TLTCP_INC_STATS(ctx, TLTCP_MIB_SECTIONS_ABANDONED);
	TLTCP_ADD_STATS(ctx, TLTCP_MIB_BYTES_ABANDONED, rest);
	ctx->info.bytes_abandoned += rest;
	ctx->info.bytes_queued -= rest;
	if (!sec->sent) {
		ctx->info.sections_abandoned_unsent++;
	} else {
		ctx->info.sections_abandoned_partial++;
		/* Bytes TCP has but has not sent yet will go out late. */
		if (after(sec->end_seq, tp->snd_nxt)) {
			late = min(sec->end_seq - tp->snd_nxt, sec->sent);
			ctx->info.bytes_obsolete_late += late;
			TLTCP_ADD_STATS(ctx, TLTCP_MIB_BYTES_OBSOLETE_LATE, late);
		}
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

/* Abandon every section whose deadline has passed (with TL_ARRIVAL_ON,
 * also those that cannot arrive by it); re-arm the timer at the earliest
 * deadline left.  Deadlines need not be in queue order.
 */
static void tltcp_expire(struct sock *sk, struct tltcp_ctx *ctx, u64 now)
{
	u64 next = TLTCP_NO_DEADLINE;
	struct tltcp_section *sec;

	tltcp_arrival_check(sk, ctx, now);
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

	/* Sections are numbered in the order they go out, which with
	 * TL_ARRIVAL_ON need not be the order they were queued in.
	 */
	if (!sec->numbered) {
		sec->id = ctx->next_id++;
		sec->numbered = true;
	}
	r->hdr.type = type;
	r->hdr.flags = 0;
	r->hdr.resv = 0;
	r->hdr.len = cpu_to_be32(len);
	r->hdr.section = cpu_to_be32((u32)sec->id);
	r->hdr.sec_off = cpu_to_be32(sec->sent);
	r->hdr.sec_len = cpu_to_be32(sec->len);
	r->sec = payload ? sec : NULL;
	r->pos = sec->pos;
	r->len = TLTCP_HDR_LEN + payload;
	r->done = 0;
}

/* The HELLO opens our direction of the stream, just before its first
 * record: an end that only receives sends nothing at all.  Sent at
 * attach, it could reach a peer that has already closed (a sender that
 * closes right after writing, to a receiver that attaches late), and TCP
 * resets a closed connection that receives data, losing what the peer
 * had not received yet.
 */
static void tltcp_set_hello(struct tltcp_ctx *ctx)
{
	struct tltcp_section hello = {
		.id = TLTCP_MAGIC, .sent = TLTCP_VERSION, .numbered = true,
	};

	tltcp_set_record(ctx, TLTCP_REC_HELLO, &hello, 0, 0);
	ctx->txr.hdr.sec_len = 0;
	ctx->hello_sent = true;
}

/* Around a call into TCP's send path, two things of ours are put aside.
 * TCP takes data only while sk_wmem_queued is below sk_sndbuf: our queue,
 * counted there too, is what TCP is being given, so it is hidden.  sk_err
 * on a live connection is a soft error (ICMP with IP_RECVERR) that belongs
 * to the application; TCP would fail the call and consume it.  Both are
 * stable: only the lock owner changes them (TCP may run the backlog,
 * which changes them in our context, hence the checks).
 */
static int tltcp_tcp_enter(struct sock *sk, struct tltcp_ctx *ctx)
{
	int err = sk->sk_err;

	WRITE_ONCE(sk->sk_err, 0);
	sk_wmem_queued_add(sk, -(int)ctx->queued_mem);
	return err;
}

static void tltcp_tcp_leave(struct sock *sk, struct tltcp_ctx *ctx, int err)
{
	sk_wmem_queued_add(sk, ctx->queued_mem);
	if (err && !sk->sk_err)
		WRITE_ONCE(sk->sk_err, err);
}

/* The rest of the record's header, copied; MSG_MORE if payload follows. */
static int tltcp_send_hdr(struct sock *sk, struct tltcp_tx_record *r)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	struct kvec iov = {
		.iov_base = (u8 *)&r->hdr + r->done,
		.iov_len = TLTCP_HDR_LEN - r->done,
	};

	if (r->sec)
		msg.msg_flags |= MSG_MORE;
	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &iov, 1, iov.iov_len);
	return tcp_sendmsg_locked(sk, &msg, iov.iov_len);
}

/* Hand TCP what it has not taken of the current record: the header by
 * copy, the payload by reference to the section's pages.  True when the
 * record is complete.
 */
static bool tltcp_send_record(struct sock *sk, struct tltcp_ctx *ctx)
{
	struct tltcp_tx_record *r = &ctx->txr;
	int err = tltcp_tcp_enter(sk, ctx), ret = 0;

	if (r->done < TLTCP_HDR_LEN) {
		ret = tltcp_send_hdr(sk, r);
		if (ret > 0)
			r->done += ret;
	}
	if (r->done >= TLTCP_HDR_LEN && r->done < r->len) {
		ret = tltcp_buf_send(sk, &r->sec->data, &r->pos,
				     r->len - r->done, false);
		if (ret > 0)
			r->done += ret;
	}
	tltcp_tcp_leave(sk, ctx, err);
	if (r->done < r->len)
		return false;

	if (r->sec) {
		struct tltcp_section *sec = r->sec;

		sec->end_seq = tcp_sk(sk)->write_seq;
		r->sec = NULL;
		if (sec->expired)
			tltcp_free_data(sk, ctx, sec);
		else if (ctx->arrival && sec->sent == sec->len)
			tltcp_arrival_sent(sk, ctx, tltcp_now());
	}
	/* No record in progress: nothing of one is left for TCP to take
	 * (the arrival estimate counts len - done as bytes ahead).
	 */
	r->len = 0;
	r->done = 0;
	return true;
}

/* Drop everything queued: the connection is gone or the socket closes. */
static void tltcp_purge(struct sock *sk, struct tltcp_ctx *ctx)
{
	struct tltcp_section *sec, *tmp;

	ctx->txr.len = 0;
	ctx->txr.done = 0;
	ctx->txr.sec = NULL;
	list_for_each_entry_safe(sec, tmp, &ctx->sendq, list) {
		if (sec->sent == sec->len)
			ctx->info.sections_completed++;
		else if (!sec->expired)
			tltcp_abandon(sk, ctx, sec);
		tltcp_dequeue(sk, ctx, sec);
	}
	tltcp_arm_timer(ctx, TLTCP_NO_DEADLINE);
}

enum {
	TLTCP_PUSH_ALL		= BIT(0),	/* no notsent limit (close) */
	TLTCP_PUSH_ATOMIC	= BIT(1),	/* softirq: no FIN from here */
	TLTCP_PUSH_CLOCK	= BIT(2),	/* read the clock for deadlines */
};

/* Hand TCP records from the queue while it holds less than the notsent
 * limit; true if TCP refused (part of) a record.  Refilling starts only
 * once TCP holds at most half the limit, so that records are large: at
 * speed each is then up to a GSO packet, and the receiver parses a
 * header per 32-64 KB instead of per two segments.
 */
static bool tltcp_feed(struct sock *sk, struct tltcp_ctx *ctx, int mode)
{
	u32 limit = mode & TLTCP_PUSH_ALL ? U32_MAX : tltcp_notsent(sk, ctx);
	const struct tcp_sock *tp = tcp_sk(sk);
	bool refill = tp->write_seq - tp->snd_nxt <= limit / 2;
	struct tltcp_section *sec;

	for (;;) {
		u32 unsent, n;

		if (ctx->txr.len && !tltcp_send_record(sk, ctx))
			return true;
		sec = list_first_entry_or_null(&ctx->sendq,
					       struct tltcp_section, list);
		if (!sec)
			return false;
		if (!ctx->hello_sent) {
			tltcp_set_hello(ctx);
			continue;
		}
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
		unsent = tp->write_seq - tp->snd_nxt;
		if (!refill || unsent >= limit ||
		    limit - unsent <= TLTCP_HDR_LEN)
			return false;
		n = min3(sec->len - sec->sent, limit - unsent - TLTCP_HDR_LEN,
			 TLTCP_MAX_RECORD);
		tltcp_set_record(ctx, TLTCP_REC_DATA, sec, n, n);
		/* Where the section's bytes end in TCP once this record is
		 * taken: the obsolete-bytes estimate needs it at once.
		 */
		sec->end_seq = tp->write_seq + ctx->txr.len;
		ctx->data_end = sec->end_seq;
		ctx->data_sent = true;
		sec->sent += n;
		tltcp_buf_advance(&sec->data, &sec->pos, n);
		ctx->info.bytes_sent += n;
		ctx->info.bytes_queued -= n;
	}
}

/* A deadline may have passed, or pass within the push: the next one is
 * less than two ticks after the latest time known without reading the
 * clock, the coarse clock's (the time of the last tick) or @known (a
 * time the caller read; 0 if none).  Further off, a push needs no clock,
 * and the timer abandons the section in time.  The coarse clock lags by
 * about a tick, but by more when ticks come late (a 6.12 debug kernel's
 * one-vCPU guest sent a section whose deadline had passed before the
 * sendmsg() that queued it): @known makes such a section's push read the
 * clock whatever the coarse clock says.  On a guest whose clocksource is
 * the HPET a clock read traps to the hypervisor; see the profile in
 * Documentation/tltcp.rst.
 */
static bool tltcp_deadline_near(const struct tltcp_ctx *ctx, u64 known)
{
	return ctx->timer_at != TLTCP_NO_DEADLINE &&
	       max(ktime_get_coarse_ns(), known) + 2 * TICK_NSEC >=
	       ctx->timer_at;
}

/* The time a push checks deadlines against, or 0 if it need not check.
 * In the softirq of an ACK on an established connection, the time TCP
 * read for that ACK: it refreshes tcp_clock_cache first thing, in
 * tcp_rcv_established() (and tcp_write_xmit() before it calls us from a
 * timer), so it is microseconds old and costs no clock read.  tx_work's
 * push (the timer's, and refills deferred from write_space) reads the
 * clock: when the timer fired its deadline is due, whatever the coarse
 * clock says.  So do the pushes of tltcp_push().  A sendmsg() that read
 * the clock for its deadlines reads it again when a deadline is near: a
 * stale time would let a section outlive its deadline.
 */
static u64 tltcp_push_clock(const struct sock *sk,
			    const struct tltcp_ctx *ctx, int mode, u64 known)
{
	if (!ctx->arrival && ctx->timer_at == TLTCP_NO_DEADLINE)
		return 0;
	if ((mode & TLTCP_PUSH_ATOMIC) && in_serving_softirq() &&
	    sk->sk_state == TCP_ESTABLISHED)
		return tcp_sk(sk)->tcp_clock_cache;
	if (ctx->arrival || (mode & TLTCP_PUSH_CLOCK) ||
	    tltcp_deadline_near(ctx, known))
		return tltcp_now();
	return 0;
}

/* TCP holds nothing that an ACK would free (and so call write_space). */
static bool tltcp_tcp_idle(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return !tp->packets_out && tp->write_seq == tp->snd_nxt;
}

/* Feed TCP from the queue, then send the FIN shutdown() left waiting.
 * Under the socket lock: its owner's (process context), or softirq's
 * (TLTCP_PUSH_ATOMIC, see tltcp_write_space()).  @known: a time the
 * caller read, or 0 (tltcp_deadline_near()).  Returns true if work is
 * left for process context.
 */
static bool __tltcp_push(struct sock *sk, struct tltcp_ctx *ctx, int mode,
			 u64 known)
{
	u32 mem = ctx->queued_mem;
	bool refused, defer = false;
	u64 now;

	if (tltcp_tx_dead(sk)) {
		if (tltcp_tx_pending(ctx))
			tltcp_purge(sk, ctx);
		ctx->fin_pending = false;
		goto wake;
	}
	now = tltcp_push_clock(sk, ctx, mode, known);
	if (now)
		tltcp_expire(sk, ctx, now);
	/* TCP may free space while it refuses us (it can run its backlog
	 * meanwhile): then try once more.
	 */
	ctx->pushing = true;
	ctx->push_again = false;
	refused = tltcp_feed(sk, ctx, mode);
	if (refused && ctx->push_again)
		refused = tltcp_feed(sk, ctx, mode);
	ctx->pushing = false;
	tltcp_update_obsolete(sk, ctx);

	if (tltcp_tx_pending(ctx)) {
		/* Have TCP call write_space when it frees acknowledged data.
		 * If it refused with nothing of its own to free (no memory),
		 * try again later: from process context, then on a timer.
		 */
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		if (refused && tltcp_tcp_idle(sk)) {
			if (mode & TLTCP_PUSH_ATOMIC)
				defer = true;
			else
				tltcp_arm_timer(ctx, min(ctx->timer_at,
							 tltcp_now() +
							 TLTCP_RETRY_NS));
		}
	} else if (ctx->probe_n) {
		/* The ACKs of sections sent measure the arrival estimate. */
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	}
	if (!tltcp_tx_pending(ctx) && ctx->fin_pending) {
		/* tcp_send_fin() may need an skb it cannot fail to get */
		if (mode & TLTCP_PUSH_ATOMIC)
			return true;
		ctx->fin_pending = false;
		WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | SEND_SHUTDOWN);
		ctx->sk_proto->shutdown(sk, SEND_SHUTDOWN);
	}
wake:
	if (ctx->queued_mem < mem && tltcp_sndq_wake(sk, ctx))
		tltcp_wake_writers(sk);
	return defer;
}

/* A push from process context other than a sendmsg() that read the time
 * for its deadlines: setsockopt(), shutdown(), close(), and write()
 * without a default deadline.  It reads the clock if a deadline is
 * pending: the first three are rare, and such a write() has no time of
 * its own to go by (the deadlines pending are earlier sections').
 */
void tltcp_push(struct sock *sk, struct tltcp_ctx *ctx)
{
	__tltcp_push(sk, ctx, TLTCP_PUSH_CLOCK, 0);
}

static void tltcp_tx_work(struct work_struct *work)
{
	struct tltcp_ctx *ctx = container_of(work, struct tltcp_ctx, tx_work);
	struct sock *sk = ctx->sk;

	lock_sock(sk);
	if (!test_bit(TLTCP_CLOSING, &ctx->flags))
		__tltcp_push(sk, ctx, TLTCP_PUSH_CLOCK, 0);
	release_sock(sk);
}

static enum hrtimer_restart tltcp_timer_fn(struct hrtimer *timer)
{
	struct tltcp_ctx *ctx = container_of(timer, struct tltcp_ctx, timer);

	if (!test_bit(TLTCP_CLOSING, &ctx->flags))
		schedule_work(&ctx->tx_work);
	return HRTIMER_NORESTART;
}

/* Refill TCP from its ACK path.  In softirq the socket is not owned by
 * a user (else the ACK would wait in the backlog): its spinlock makes us
 * the owner, as for TCP's own transmit there; allocations must not sleep
 * (kTLS's device offload pushes its records the same way).
 */
static void tltcp_push_atomic(struct sock *sk, struct tltcp_ctx *ctx)
{
	gfp_t gfp = sk->sk_allocation;
	bool task_frag, defer;

	sk->sk_allocation = GFP_ATOMIC;
	/* TCP copies into a page fragment: the socket's, not the task's
	 * this softirq interrupted
	 */
	task_frag = kc_sk_use_task_frag(sk, false);
	defer = __tltcp_push(sk, ctx, TLTCP_PUSH_ATOMIC, 0);
	kc_sk_use_task_frag(sk, task_frag);
	sk->sk_allocation = gfp;
	if (defer)
		schedule_work(&ctx->tx_work);
}

/* TCP freed acknowledged data, or sent some: tcp_event_new_data_sent()
 * calls us from inside tcp_write_xmit(), which still uses the skb it just
 * sent.  In softirq the socket is not owned and its backlog is empty, so
 * feeding TCP there frees nothing: tcp_sendmsg_locked() appends to the
 * write queue and sends from it.  When the socket is owned (its backlog
 * run by release_sock() or by our own tcp_sendmsg_locked(), release_sock()'s
 * tcp_release_cb(), or TCP code the owner called), tcp_sendmsg_locked()
 * may flush the backlog, and the ACKs in it free acknowledged skbs: the
 * one tcp_write_xmit() up the stack is still reading among them (KASAN,
 * a 6.12 debug kernel: slab-use-after-free in tcp_write_xmit() after our
 * push from its tcp_event_new_data_sent() flushed the backlog).  So the
 * owner's contexts never feed TCP from here: within our own push we only
 * ask it to go round once more; otherwise tx_work pushes in a context of
 * its own.
 */
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
	tltcp_arrival_acked(sk, ctx);
	if (!(tltcp_tx_pending(ctx) || ctx->fin_pending) ||
	    test_bit(TLTCP_CLOSING, &ctx->flags)) {
		ctx->saved_write_space(sk);
		/* TCP calls us only while SOCK_NOSPACE is set. */
		if (ctx->probe_n && sk->sk_socket)
			set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		return;
	}
	if (ctx->pushing)
		ctx->push_again = true;
	else if (sock_owned_by_user_nocheck(sk))
		schedule_work(&ctx->tx_work);
	else
		tltcp_push_atomic(sk, ctx);
}

void tltcp_tx_init(struct sock *sk, struct tltcp_ctx *ctx)
{
	INIT_LIST_HEAD(&ctx->sendq);
	INIT_WORK(&ctx->tx_work, tltcp_tx_work);
	kc_hrtimer_setup(&ctx->timer, tltcp_timer_fn, CLOCK_MONOTONIC,
			 HRTIMER_MODE_ABS_SOFT);
	ctx->timer_at = TLTCP_NO_DEADLINE;
}

/* Why this socket cannot queue sections now, or 0.  A socket error is
 * left in place: sendmsg() reports it, through sk_stream_error(), only if
 * it queued nothing (as TCP does), else the next call does.
 */
static int tltcp_send_error(struct sock *sk, const struct tltcp_ctx *ctx)
{
	if (READ_ONCE(sk->sk_err) || (sk->sk_shutdown & SEND_SHUTDOWN) ||
	    ctx->fin_pending || tltcp_tx_dead(sk))
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

/* Reserve @size bytes of socket memory (tcp_mem and, with cgroup v2, the
 * memory cgroup) for the queue.  TCP's own write-queue rule would force
 * the charge through both limits whenever the socket is over its send
 * buffer, which a queue of whole sections often is; TCP can afford that
 * for one skb, we cannot for a section.  So the charge is made with the
 * rule that fails instead (SK_MEM_RECV's: under pressure it still keeps
 * a socket's minimum).
 */
static bool tltcp_mem_schedule(struct sock *sk, int size)
{
	if (!sk_has_account(sk) || size <= sk->sk_forward_alloc)
		return true;
	return __sk_mem_schedule(sk, size, SK_MEM_RECV);
}

/* A section of @len bytes with its pages, charged and counted, or NULL.
 * Memory is charged to the memory cgroup exactly once: as socket memory
 * when the socket belongs to one (cgroup v2), else as kernel memory.
 * __GFP_RETRY_MAYFAIL: a failure, not the OOM killer.
 */
static struct tltcp_section *tltcp_alloc_section(struct sock *sk,
						 struct tltcp_ctx *ctx,
						 u32 len)
{
	gfp_t gfp = __GFP_NOWARN | __GFP_RETRY_MAYFAIL |
		    (mem_cgroup_sockets_enabled && sk->sk_memcg ?
		     GFP_KERNEL : GFP_KERNEL_ACCOUNT);
	struct tltcp_section *sec;
	u32 mem;

	sec = kzalloc(sizeof(*sec), gfp);
	if (!sec)
		return NULL;
	sec->mem = tltcp_buf_alloc(&sec->data, len, gfp);
	if (!sec->mem)
		goto free;
	mem = TLTCP_SECTION_MEM + sec->mem;
	if (!tltcp_mem_schedule(sk, mem))
		goto free;
	tltcp_charge(sk, ctx, mem);
	sec->len = len;
	return sec;
free:
	tltcp_buf_free(&sec->data);
	kfree(sec);
	return NULL;
}

/* No memory for a section.  If the socket holds data of its own, freeing
 * it will make room: wait, as TCP does (a slice at a time, since memory
 * freed by other sockets wakes nobody here).  Otherwise fail.
 */
static int tltcp_wait_mem(struct sock *sk, struct tltcp_ctx *ctx,
			  long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	u32 held = READ_ONCE(sk->sk_wmem_queued);
	long slice;

	if (!held)
		return -ENOBUFS;
	if (!*timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(*timeo);
	slice = min_t(long, *timeo, HZ / 5);
	if (*timeo != MAX_SCHEDULE_TIMEOUT)
		*timeo -= slice;
	add_wait_queue(sk_sleep(sk), &wait);
	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	sk_wait_event(sk, &slice, READ_ONCE(sk->sk_wmem_queued) < held ||
		      READ_ONCE(sk->sk_err), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
	if (*timeo != MAX_SCHEDULE_TIMEOUT)
		*timeo += slice;
	return 0;
}

/* Queue one section of @len bytes taken from @msg. */
static int tltcp_queue_section(struct sock *sk, struct tltcp_ctx *ctx,
			       struct msghdr *msg, u32 len, u64 deadline,
			       long *timeo)
{
	struct tltcp_section *sec;
	int err;

	for (;;) {
		err = tltcp_wait_room(sk, ctx, timeo);
		if (err)
			return err;
		sec = tltcp_alloc_section(sk, ctx, len);
		if (sec)
			break;
		err = tltcp_wait_mem(sk, ctx, timeo);
		if (err)
			return err;
	}
	if (!tltcp_buf_fill(&sec->data, &msg->msg_iter)) {
		tltcp_free_section(sk, ctx, sec);
		return -EFAULT;
	}
	WRITE_ONCE(ctx->queued_sections, ctx->queued_sections + 1);
	sec->deadline = deadline;
	tltcp_arrival_queue(ctx, sec);
	ctx->info.sections_offered++;
	TLTCP_INC_STATS(ctx, TLTCP_MIB_SECTIONS_OFFERED);
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
	/* The iovec was cut at MAX_RW_COUNT bytes, sections with it. */
	if (n > TL_MAX_SECTIONS ||
	    iov_iter_count(&msg->msg_iter) >= MAX_RW_COUNT)
		return -EMSGSIZE;
	if (!dl->val || dl->n != n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		size_t len = iov ? iov[i].iov_len : iov_iter_count(&msg->msg_iter);

		if (!len)
			return -EINVAL;
		if (len > tltcp_max_section(sk, ctx))
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
		/* A deadline that passed before the call: read the clock. */
		__tltcp_push(sk, ctx, 0, now);
	}
	return 0;
}

/* Without MSG_TL: a byte stream, cut into sections with the default
 * deadline (none unless TL_DEFAULT_DEADLINE is set).
 */
static int tltcp_send_stream(struct sock *sk, struct tltcp_ctx *ctx,
			     struct msghdr *msg, size_t size, long *timeo,
			     size_t *copied)
{
	u64 now = ctx->default_deadline ? tltcp_now() : 0;
	u64 deadline = now ? now + ctx->default_deadline : TLTCP_NO_DEADLINE;
	int err;

	while (*copied < size) {
		u32 len = min_t(size_t, size - *copied, TLTCP_STREAM_SECTION);

		err = tltcp_queue_section(sk, ctx, msg, len, deadline, timeo);
		if (err)
			return err;
		*copied += len;
		if (now)
			__tltcp_push(sk, ctx, 0, now);
		else
			tltcp_push(sk, ctx);
	}
	return 0;
}

int tltcp_sendmsg(struct sock *sk, struct msghdr *msg, size_t size)
{
	struct tltcp_ctx *ctx = tltcp_get_ctx(sk);
	int flags = msg->msg_flags;
	struct tltcp_deadlines dl = {};
	size_t copied = 0;
	long timeo;
	u64 now;
	int err;

	if (flags & (MSG_OOB | MSG_ZEROCOPY | MSG_FASTOPEN))
		return -EOPNOTSUPP;
	err = tltcp_parse_cmsgs(msg, &dl);
	if (err)
		return err;
	if (dl.val && !(flags & MSG_TL))
		return -EINVAL;
	/* Deadlines are taken from the time of the call. */
	now = dl.val ? tltcp_now() : 0;

	lock_sock(sk);
	timeo = sock_sndtimeo(sk, flags & MSG_DONTWAIT);
	if (flags & MSG_TL)
		err = tltcp_send_sections(sk, ctx, msg, &dl, now, &timeo,
					  &copied);
	else
		err = tltcp_send_stream(sk, ctx, msg, size, &timeo, &copied);
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

/* The peer's HELLO has not been read while the peer has yet to
 * acknowledge some of our data.  Once TCP's close() has begun, data that
 * arrives makes it reset the connection (the application cannot read it
 * any more), and the peer would lose what it had not received: so over a
 * slow path, where the HELLO can wait behind our own data, a lingering
 * close() reads it first.
 */
static bool tltcp_peer_hello_due(const struct sock *sk,
				 const struct tltcp_ctx *ctx)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return !ctx->rx.hello && !ctx->rx.err &&
	       READ_ONCE(tp->snd_una) != READ_ONCE(tp->write_seq);
}

/* SO_LINGER with a time: push as usual (deadlines apply) until the queue
 * is empty and the peer's HELLO read (tltcp_peer_hello_due()), the
 * connection is gone or the time is up.  Returns the time left.
 */
static long tltcp_linger(struct sock *sk, struct tltcp_ctx *ctx,
			 long timeout)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	unsigned long end = jiffies + timeout;

	add_wait_queue(sk_sleep(sk), &wait);
	while (timeout > 0 && !signal_pending(current)) {
		long slice = min_t(long, timeout, max(1, msecs_to_jiffies(10)));

		ctx->timer_at = 0;	/* check every deadline */
		tltcp_push(sk, ctx);
		if (tltcp_tx_dead(sk))
			break;
		if (!tltcp_tx_pending(ctx)) {
			if (!tltcp_peer_hello_due(sk, ctx))
				break;
			if (tcp_inq(sk)) {
				/* TCP's recvmsg takes the socket lock */
				release_sock(sk);
				tltcp_rx_close(sk, ctx);
				lock_sock(sk);
				timeout = (long)(end - jiffies);
				continue;
			}
		}
		sk_wait_event(sk, &slice, tltcp_tx_dead(sk), &wait);
		timeout = (long)(end - jiffies);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return max(timeout, 0L);
}

/* Give TCP everything still queued, as ordinary data it delivers after
 * close() like any orphaned write queue: abandon what has expired (its
 * ABANDON records go too), then open TCP's limits (send buffer, notsent
 * low-water mark) so that it takes the rest.  The memory only changes
 * hands: each section is freed as TCP takes it.
 */
static void tltcp_hand_over(struct sock *sk, struct tltcp_ctx *ctx)
{
	if (!tltcp_tx_pending(ctx) || tltcp_tx_dead(sk))
		return;
	ctx->timer_at = 0;
	WRITE_ONCE(sk->sk_sndbuf, INT_MAX);
	WRITE_ONCE(tcp_sk(sk)->notsent_lowat, U32_MAX);
	__tltcp_push(sk, ctx, TLTCP_PUSH_ALL, 0);
}

/* close(): the timer and the work are stopped and the socket is locked.
 * Nothing the application queued is dropped without the peer knowing:
 * after the SO_LINGER time, if any, the queue goes to TCP (deadlines no
 * longer apply to it); if TCP cannot take it all (no memory), what is
 * left is dropped and the connection reset, never closed with a FIN
 * after a hole.  SO_LINGER with no time resets at once, as for TCP.
 * Returns the linger time left for TCP's own close.
 */
long tltcp_tx_close(struct sock *sk, struct tltcp_ctx *ctx, long timeout)
{
	if (sock_flag(sk, SOCK_LINGER) && !sk->sk_lingertime)
		goto drop;

	if (timeout)
		timeout = tltcp_linger(sk, ctx, timeout);
	tltcp_hand_over(sk, ctx);
	if (tltcp_tx_pending(ctx) && !tltcp_tx_dead(sk)) {
		sock_set_flag(sk, SOCK_LINGER);
		WRITE_ONCE(sk->sk_lingertime, 0);
	}
drop:
	if (tltcp_tx_pending(ctx))
		tltcp_purge(sk, ctx);
	tltcp_update_obsolete(sk, ctx);
	return timeout;
}
