// SPDX-License-Identifier: GPL-2.0
/*
 * Time-lined TCP, arrival-aware deadlines (TL_ARRIVAL_ON): a deadline is
 * when the section must have arrived, not when it must have been sent.
 *
 * The paper's deadline is the sender's: a section is sent until its
 * deadline passes.  In overload the queue grows until every section is
 * sent in the last moments of its life, and what is sent then arrives
 * late: the link carries obsolete data.  With TL_ARRIVAL_ON a section is
 * abandoned as soon as its last byte can no longer arrive by its
 * deadline, so the link carries the sections that can, and queued
 * sections go earliest deadline first (a B frame of the paper's MPEG
 * schedule, whose deadline comes before that of the P frame queued ahead
 * of it, goes first).  A section whose first record TCP has taken keeps
 * its place: records of two sections never interleave.
 *
 * The estimate.  A byte handed to TCP now leaves once TCP has sent the
 * bytes ahead of it, which it does at the rate ACKs open its window, the
 * delivery rate; it then takes the forward path's one-way delay.  So the
 * last byte of a queued section arrives after
 *
 *	owd + (bytes ahead of it + its own) / rate
 *
 * where the bytes ahead are TCP's unsent ones (write_seq - snd_nxt), the
 * rest of the record in progress and the sections before it in the queue
 * that are not abandoned, each with a record header.  Bytes in flight
 * are not counted: their time is the queueing delay inside srtt.
 *
 *  - owd = srtt - min_rtt / 2: the propagation delay each way is about
 *    min_rtt / 2, and the queueing delay (srtt - min_rtt) builds up on the
 *    forward path, the data's, when the sender fills the bottleneck; srtt
 *    / 2 alone would miss half of it, as much as 25 ms on the workload of
 *    Documentation/tltcp.rst with its queue full.
 *  - rate = TCP's delivery-rate samples (tcp_rate.c: rate_delivered
 *    segments over rate_interval_us, each over about a round trip of
 *    ACKs), averaged as srtt averages RTT samples (a gain of 1/8 per
 *    sample).  A sample taken while TCP was application-limited (it had
 *    nothing to send for part of it) is a lower bound of what the path
 *    carries, and counts only if it raises the average.  If the latest
 *    sample was application-limited, or there is none yet, the path may
 *    carry more: then at least cwnd / srtt, what TCP's window lets it
 *    send.  The average starts at the larger of the first sample and
 *    cwnd / srtt: one sample may be old (TCP's latest when TL_ARRIVAL is
 *    turned on) or span a stall of the sender.  Not the pacing rate:
 *    TCP sets it to 1.2 (congestion avoidance) or 2 (slow start) times
 *    cwnd / srtt, so that pacing never limits it; as a prediction of
 *    arrivals it would be that much too fast.
 *    Why an average and not the largest sample of the last 10 srtt, as
 *    BBR keeps its bandwidth and as this module did before: samples
 *    scatter around the bottleneck's rate, and their maximum lies above
 *    it, so predictions came early and sections were sent that arrived
 *    late (the workload of Documentation/tltcp.rst: 0.93 MB of late bytes
 *    in a minute with the maximum, 0.55 MB with the average).
 *    Why not the latest sample alone: after a loss the window and the
 *    latest sample are small, every section may then be predicted late,
 *    and a sender that abandons everything sends only abandon records:
 *    its window cannot grow again (TCP grows it only while it limits the
 *    sender) and its samples stay low.  With the latest sample as the
 *    rate, 1 % loss on a 2 Mbit/s path held the window at 2 segments for
 *    the last 53 s of a minute.  The average moves by an eighth a sample,
 *    and the exception in tltcp_arrival_check() keeps one section going
 *    while nothing is in flight.
 *  - With no RTT sample yet, owd is 0; with no rate, bytes take no time:
 *    the estimate errs towards sending.
 *
 * The check runs whenever the module pushes: on every sendmsg() and on
 * every ACK that frees data while sections wait (write_space), and at the
 * latest at each deadline (the lifetime timer).  It walks the queue once,
 * so it costs O(sections queued) per ACK, and only with TL_ARRIVAL_ON.
 *
 * The error.  When TCP has taken a section's last byte, the arrival
 * predicted at that moment is kept (up to TLTCP_ARRIVAL_PROBES sections
 * at a time; more are not sampled); when the ACK covering that byte
 * arrives, the byte's measured arrival is the ACK's time less the reverse
 * path's delay, min_rtt / 2 (ACKs are not queued on the way back).  A
 * delayed ACK makes the measurement late by up to the delayed-ACK timeout;
 * TCP acknowledges at once while data flows.  TL_INFO sums the errors.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math64.h>
#include <net/tcp.h>

#include "tltcp.h"

struct tltcp_est {
	u64	owd_ns;		/* forward one-way delay */
	u64	rate;		/* bytes per second, 0: unknown */
};

/* The rate's gain per delivery-rate sample: 1/8, as srtt's per RTT sample */
#define TLTCP_ARRIVAL_RATE_SHIFT	3

static void tltcp_estimate(const struct sock *sk, struct tltcp_ctx *ctx,
			   u64 now, struct tltcp_est *e)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 srtt_us = tp->srtt_us >> 3;
	u64 sample = 0, wnd_rate = 0, avg;
	u32 mss = tp->mss_cache;

	e->owd_ns = 0;
	if (srtt_us) {
		e->owd_ns = (u64)(srtt_us - min(tcp_min_rtt(tp), srtt_us) / 2) *
			    NSEC_PER_USEC;
		wnd_rate = div_u64((u64)tcp_snd_cwnd(tp) * mss * USEC_PER_SEC,
				   srtt_us);
	}
	if (tp->rate_interval_us)
		sample = div_u64((u64)tp->rate_delivered * mss * USEC_PER_SEC,
				 tp->rate_interval_us);
	/* Each sample once: TCP takes a new one on every ACK that delivers */
	avg = ctx->arrival_rate;
	if (sample && tp->delivered != ctx->arrival_delivered) {
		ctx->arrival_delivered = tp->delivered;
		/* The first sample alone is no average: it may be old (TCP's
		 * latest when TL_ARRIVAL is turned on) or span a stall of
		 * the sender.  If the window lets TCP send more, the average
		 * starts there and the samples after it move it.
		 */
		if (!avg)
			avg = max(sample, wnd_rate);
		else if (sample > avg)
			avg += (sample - avg) >> TLTCP_ARRIVAL_RATE_SHIFT;
		else if (!tp->rate_app_limited)
			avg -= (avg - sample) >> TLTCP_ARRIVAL_RATE_SHIFT;
		ctx->arrival_rate = avg;
	}
	e->rate = avg;
	if (tp->rate_app_limited || !e->rate)
		e->rate = max(e->rate, wnd_rate);
}

/* When @bytes handed to TCP now, behind what it holds unsent, arrive. */
static u64 tltcp_arrival_in(const struct tltcp_est *e, u64 bytes)
{
	if (!e->rate)
		return e->owd_ns;
	return e->owd_ns + mul_u64_u64_div_u64(bytes, NSEC_PER_SEC, e->rate);
}

/* Abandon every queued section whose last byte can no longer arrive by
 * its deadline, in queue order, counting the bytes ahead of each.
 *
 * Except the first while TCP has no payload in flight or unsent: it goes
 * unless the path's delay alone makes it late.  The estimate's rate comes
 * from what TCP could send, and TCP's window grows only while it limits
 * the sender.  After losses a small window predicts every section late;
 * abandoning them all would keep the window small for good (1 % loss on
 * a 2 Mbit/s path: 2 segments for the last 43 s of a minute, with the
 * largest sample of 10 srtt as the rate and without this rule).  Sending
 * one section at a time until the estimate says they arrive in time
 * again lets the window grow, at the cost of those sections' lateness.
 * While data flows, the rule does not apply.
 */
void tltcp_arrival_check(struct sock *sk, struct tltcp_ctx *ctx, u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tltcp_section *sec;
	struct tltcp_est e;
	bool idle;
	u64 ahead;

	if (!ctx->arrival || list_empty(&ctx->sendq))
		return;
	tltcp_estimate(sk, ctx, now, &e);
	ahead = (u64)(tp->write_seq - tp->snd_nxt) +
		ctx->txr.len - ctx->txr.done;
	idle = !ctx->data_sent || !after(ctx->data_end, tp->snd_una);
	list_for_each_entry(sec, &ctx->sendq, list) {
		u32 rest = sec->len - sec->sent;

		if (sec->expired) {
			/* Only its ABANDON record is left to send. */
			ahead += TLTCP_HDR_LEN;
			continue;
		}
		if (!rest)
			continue;
		ahead += TLTCP_HDR_LEN + rest;
		if (sec->deadline <= now)
			continue;
		if (idle) {
			idle = false;
			if (now + e.owd_ns <= sec->deadline)
				continue;
		} else if (now + tltcp_arrival_in(&e, ahead) <= sec->deadline) {
			continue;
		}
		/* It cannot make it: the bytes go to those behind it. */
		ahead -= rest;
		ctx->info.sections_abandoned_early++;
		tltcp_abandon(sk, ctx, sec);
	}
}

/* Queue @sec: at the tail, or with TL_ARRIVAL_ON before the sections with
 * later deadlines that have not begun (stable among equal deadlines).
 */
void tltcp_arrival_queue(struct tltcp_ctx *ctx, struct tltcp_section *sec)
{
	struct tltcp_section *pos;

	if (!ctx->arrival) {
		list_add_tail(&sec->list, &ctx->sendq);
		return;
	}
	list_for_each_entry_reverse(pos, &ctx->sendq, list) {
		if (pos->deadline <= sec->deadline || pos->numbered) {
			list_add(&sec->list, &pos->list);
			return;
		}
	}
	list_add(&sec->list, &ctx->sendq);
}

/* TCP has just taken the last byte of a section (at write_seq): keep the
 * arrival predicted now, to compare with the ACK's.
 */
void tltcp_arrival_sent(struct sock *sk, struct tltcp_ctx *ctx, u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tltcp_arrival_probe *p;
	struct tltcp_est e;

	if (ctx->probe_n == TLTCP_ARRIVAL_PROBES)
		return;
	tltcp_estimate(sk, ctx, now, &e);
	p = &ctx->probes[(ctx->probe_first + ctx->probe_n) %
			 TLTCP_ARRIVAL_PROBES];
	p->end_seq = tp->write_seq;
	p->predicted = now + tltcp_arrival_in(&e, tp->write_seq - tp->snd_nxt);
	ctx->probe_n++;
}

/* Sections whose last byte TCP has seen acknowledged: their error. */
void tltcp_arrival_acked(struct sock *sk, struct tltcp_ctx *ctx)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tl_info *info = &ctx->info;
	u64 now, back, at, d;
	u32 min_rtt;

	if (!ctx->probe_n)
		return;
	now = ktime_get_ns();
	min_rtt = tcp_min_rtt(tp);
	back = min_rtt == ~0U ? 0 : (u64)min_rtt * NSEC_PER_USEC / 2;
	at = now > back ? now - back : 0;
	while (ctx->probe_n) {
		const struct tltcp_arrival_probe *p;

		p = &ctx->probes[ctx->probe_first];
		if (before(tp->snd_una, p->end_seq))
			break;
		if (at >= p->predicted) {
			d = at - p->predicted;
			info->arrival_late_ns += d;
			info->arrival_late_max_ns =
				max(info->arrival_late_max_ns, d);
		} else {
			d = p->predicted - at;
			info->arrival_early_ns += d;
			info->arrival_early_max_ns =
				max(info->arrival_early_max_ns, d);
		}
		info->arrival_samples++;
		ctx->probe_first = (ctx->probe_first + 1) %
				   TLTCP_ARRIVAL_PROBES;
		ctx->probe_n--;
	}
}
