// SPDX-License-Identifier: GPL-2.0
/*
 * TCP-like TW ("Threshold Window"): Reno congestion control for long-delay
 * links.
 *
 * S. A. Nor, S. Hassan, O. Ghazali, M. H. Omar, "Enhancing DCCP Congestion
 * Control Mechanism for Long Delay Link", proposes two changes to DCCP's
 * TCP-like congestion control (CCID 2, which is Reno/NewReno) for paths
 * such as a 2 Mbit/s, 300 ms satellite hop:
 *
 *  Threshold: start with a high slow-start threshold, 200 packets instead
 *    of the 20 their DCCP used, so that the window grows exponentially
 *    until it is near the path's capacity and reaches full throughput in a
 *    few RTTs instead of tens of seconds of linear growth.  They found no
 *    gain above 200 packets on their path.
 *
 *  Window: on a congestion event signalled by duplicate ACKs, reduce the
 *    window to 95 % of its value ("5 % decrease") instead of halving it, so
 *    that the throughput on a long-delay path stays near capacity instead
 *    of following Reno's saw-tooth, which takes many 600 ms RTTs to climb
 *    back.
 *
 * Everything else is Reno: slow start below ssthresh, one segment per RTT
 * above it (tcp_reno_cong_avoid; the probe below is the one exception, at
 * the start of a connection), and a retransmission timeout still
 * collapses the window to one segment with ssthresh at half the window,
 * as the paper's TCP-like does.
 *
 * Mapping onto Linux:
 *  - Linux starts every connection with an infinite ssthresh (slow start
 *    until the first loss).  .init sets the configured initial ssthresh,
 *    the way CUBIC's initial_ssthresh parameter does; .init runs after the
 *    route metrics have been applied, so it wins over a cached ssthresh
 *    unless the parameter is 0.  A connection that switches to reno_tw
 *    after a loss keeps its ssthresh (reno_tw_init()).
 *  - .ssthresh, called when fast recovery starts (and on RTO, before the
 *    state moves to Loss), returns max(cwnd * (100 - decrease) / 100, 2)
 *    in congestion avoidance and Reno's max(cwnd / 2, 2) in slow start
 *    (cwnd < ssthresh), where the paper does not apply its decrease;
 *    the first congestion event of a connection that started with the
 *    initial ssthresh gets what the path holds, between the two (below).
 *    Integer arithmetic floors the product, so a window of fewer than 20
 *    segments loses one whole segment, more than the nominal 5 %: cwnd 10
 *    becomes 9 (-10 %), cwnd 100 becomes 95.  The window always drops by
 *    at least one segment.
 *  - CA_EVENT_LOSS (RTO) replaces that value with the RFC 5681 one, half
 *    the window before the timeout; the kernel sets cwnd to one segment
 *    beyond what is in flight.
 *  - Undo after a spurious recovery or timeout restores the prior window
 *    (tcp_reno_undo_cwnd) and ssthresh (the kernel keeps prior_ssthresh),
 *    and cancels the settling below.
 *
 * Pacing (the paper's flow needed none: a 2 Mbit/s CBR source fed it, so
 * its application spaced the packets at the bottleneck's rate):
 *  - A Linux sender is ACK-clocked: in slow start each ACK releases two
 *    segments back to back at the access link's rate, so the bottleneck
 *    queue grows by one segment per ACK and a queue of Q packets
 *    overflows at a window of about 2Q, long before the 200 packets of
 *    the initial ssthresh on a path whose BDP is larger (2 Mbit/s x
 *    600 ms is 292 packets of 500 bytes with a 20-packet queue).  The
 *    flow then leaves slow start by a burst loss and climbs one segment
 *    per 600 ms round trip: the high initial ssthresh never matters.
 *  - .init therefore asks for TCP's internal pacing, as tcp_bbr.c does
 *    (SK_PACING_NONE -> SK_PACING_NEEDED; nothing changes if a qdisc
 *    such as fq paces already, or the socket asked for pacing itself).
 *    The rate is the kernel's own, tcp_update_pacing_rate(): cwnd / srtt
 *    times sysctl tcp_pacing_ss_ratio (200 %) while cwnd < ssthresh / 2
 *    and tcp_pacing_ca_ratio (120 %) after.  A paced slow start fills the
 *    queue only once that rate passes the bottleneck's, near BDP / 2 and
 *    BDP / 1.2 respectively, so the window reaches ssthresh.
 *  - The window is still Reno's, so pacing takes nothing from a competing
 *    flow: it only spreads the same window over the round trip.
 *  - .release hands the socket back unpaced when it switches to another
 *    algorithm, unless the socket set SO_MAX_PACING_RATE.
 *  - Module parameter pacing=0 gives the unpaced behaviour.
 *
 * Probing past the initial threshold (module parameter probe, default 1):
 *  - The paper's 200 packets were chosen on one path; on its own link
 *    with 500-byte packets the path holds 292 plus the queue's 20.  From
 *    a window of 200 Reno's one segment per 620 ms round trip needs 57 s
 *    to fill it, and the flow is at 68 % of the link for most of a minute
 *    (the paper's Fig. 2 shows the same: its maximum at about 90 s).
 *  - Until the connection's first congestion event, a window that
 *    reached the initial ssthresh keeps growing, a quarter as fast as in
 *    slow start (25 % per round trip: RFC 9406's conservative slow start),
 *    as long as the RTT shows no queue.  Eight RTT samples in a row
 *    later than the path's minimum by clamp(min_rtt / 8, 4 ms, 16 ms)
 *    (RFC 9406's delay increase, over the last eight samples instead of
 *    a round trip's first eight: a queue of a few percent of the path,
 *    20 packets against 292, fills within the round trip in which the
 *    window passes the path) end the probe: ssthresh becomes the
 *    window, and Reno's congestion avoidance goes on from there.
 *  - A loss during the probe ends it too.  The first congestion event
 *    of a connection (in slow start, in the probe, or soon after either,
 *    for data they sent) sets ssthresh to what the path holds: the larger
 *    of what it delivered in the last complete round trip and the last
 *    delivery-rate sample times the path's minimum RTT, kept between
 *    half the window and the paper's decrease (reno_tw_ssthresh()).
 *  - That estimate is a round trip late: beside another flow the link
 *    may have filled only in the round trip that lost, and what the one
 *    before delivered is then far less than what the path held.  Once
 *    the recovery from that first event is over, what it lost tells:
 *    the window that overflowed less the segments lost in the episode
 *    (tp->lost) is what the path carried.  ssthresh and the window rise
 *    to that, at most to the paper's decrease from the window that
 *    overflowed (reno_tw_settle()).  Beside a Reno flow on the paper's
 *    link this took the window from 196 back to 247 (of 261 that
 *    overflowed) instead of a minute of growth by one segment per
 *    600 ms round trip.
 *  - Only the start of a connection changes: after the first congestion
 *    event the flow is the paper's (and today's) Reno with a 5 %
 *    decrease, as aggressive against a competing flow as without the
 *    probe.  probe=0 gives the paper's slow start that ends at the
 *    initial ssthresh.
 *
 * A consequence users must know: a flow that gives back only 5 % on loss
 * takes most of a shared bottleneck from a competing Reno or CUBIC flow.
 * The paper's own Table II reports 1697 kbit/s for TCP-like TW against
 * 273 kbit/s for a NewReno flow on a 2 Mbit/s link.  This module is
 * therefore not listed in tcp_allowed_congestion_control by default
 * (TCP_CONG_NON_RESTRICTED is not set): unprivileged sockets can only use
 * it once the administrator allows it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <net/tcp.h>

#define RENO_TW_MAX_SSTHRESH	1048576U
#define RENO_TW_MAX_DECREASE	50

static unsigned int initial_ssthresh __read_mostly = 200;
static unsigned int decrease_pct __read_mostly = 5;
static bool pacing __read_mostly = true;
static bool probe __read_mostly = true;

/* RFC 9406: the RTT samples that make a delay increase, its bounds (us)
 * and the conservative slow start's growth divisor.
 */
#define RENO_TW_RTT_SAMPLES	8
#define RENO_TW_DELAY_MIN_US	4000U
#define RENO_TW_DELAY_MAX_US	16000U
#define RENO_TW_PROBE_DIVISOR	4

/* Store an unsigned module parameter if it lies in [lo, hi] (or is 0 when
 * zero_ok): a bad value is refused with -EINVAL and the old one is kept.
 */
static int reno_tw_param_set(const char *val, const struct kernel_param *kp,
			     unsigned int lo, unsigned int hi, bool zero_ok)
{
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if ((v < lo || v > hi) && !(zero_ok && v == 0)) {
		pr_err("%s must be %s%u..%u\n", kp->name,
		       zero_ok ? "0 or " : "", lo, hi);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static int param_set_initial_ssthresh(const char *val,
				      const struct kernel_param *kp)
{
	return reno_tw_param_set(val, kp, 2, RENO_TW_MAX_SSTHRESH, true);
}

static int param_set_decrease_pct(const char *val,
				  const struct kernel_param *kp)
{
	return reno_tw_param_set(val, kp, 1, RENO_TW_MAX_DECREASE, false);
}

static const struct kernel_param_ops initial_ssthresh_ops = {
	.set = param_set_initial_ssthresh,
	.get = param_get_uint,
};

static const struct kernel_param_ops decrease_pct_ops = {
	.set = param_set_decrease_pct,
	.get = param_get_uint,
};

module_param_cb(initial_ssthresh, &initial_ssthresh_ops, &initial_ssthresh,
		0644);
MODULE_PARM_DESC(initial_ssthresh,
		 "slow-start threshold of a new connection, in packets (2..1048576; 0 = kernel default, slow start until loss; default 200)");
module_param_cb(decrease_pct, &decrease_pct_ops, &decrease_pct, 0644);
MODULE_PARM_DESC(decrease_pct,
		 "percent of the window given up on a congestion event signalled by duplicate ACKs (1..50; default 5; Reno is 50)");

module_param(pacing, bool, 0644);
MODULE_PARM_DESC(pacing,
		 "pace sending with TCP's internal pacing, so that slow start does not overflow a short queue (default 1)");

module_param(probe, bool, 0644);
MODULE_PARM_DESC(probe,
		 "until the first congestion event, grow past the initial ssthresh a quarter as fast as slow start while the RTT shows no queue (default 1)");

/* Per-socket state: the decrease in force when the connection started,
 * whether .init turned internal pacing on, whether the connection is
 * still before its first congestion event (startup) and probing past the
 * initial ssthresh, the round trip being measured (ends when snd_una
 * reaches round_end; tp->delivered when it began), the segments delivered
 * in the last complete one, the RTT samples in a row that showed a queue
 * and the ACKed segments not yet turned into window; for the recovery
 * from the first congestion event (settling): the window it started
 * from and tp->lost when the connection started.
 */
struct reno_tw {
	u32 decrease_pct;
	u8 paced;
	u8 startup;
	u8 probing;
	u8 delayed;
	u8 probe_acked;
	u32 round_end;
	u32 round_delivered;
	u32 last_round_delivered;
	u8 settling;
	u32 loss_cwnd;
	u32 lost_before;
};

/* A new round trip starts with what is sent from now on. */
static void reno_tw_new_round(struct reno_tw *ca, const struct tcp_sock *tp)
{
	ca->round_end = tp->snd_nxt;
	ca->round_delivered = tp->delivered;
}

/* .init runs when a connection is established and when an established
 * one switches to reno_tw (TCP_CONGESTION).  The initial ssthresh is for
 * a connection that has not left its initial state: no ssthresh yet
 * (infinite: nothing has been lost) or nothing sent yet (one opened with
 * a cached or route ssthresh, which the parameter overrides as CUBIC's
 * initial_ssthresh does).  A connection that switches after a loss keeps
 * the ssthresh that loss gave it: 200 would make it slow-start again far
 * past what the path took.
 */
static void reno_tw_init(struct sock *sk)
{
	u32 ssthresh = READ_ONCE(initial_ssthresh);
	struct reno_tw *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->decrease_pct = READ_ONCE(decrease_pct);
	/* Ask for TCP's own pacing unless something paces already (fq sets
	 * SK_PACING_FQ, SO_MAX_PACING_RATE sets SK_PACING_NEEDED).
	 */
	ca->paced = READ_ONCE(pacing) &&
		    cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE,
			    SK_PACING_NEEDED) == SK_PACING_NONE;
	ca->startup = 0;
	ca->probing = 0;
	ca->probe_acked = 0;
	ca->delayed = 0;
	ca->last_round_delivered = 0;
	ca->settling = 0;
	ca->lost_before = tp->lost;
	if (ssthresh && (tp->snd_ssthresh >= TCP_INFINITE_SSTHRESH ||
			 !tp->data_segs_out)) {
		tp->snd_ssthresh = ssthresh;
		ca->startup = 1;
		ca->probing = READ_ONCE(probe);
	}
	reno_tw_new_round(ca, tp);
}

/* .release runs when the socket goes and when it switches to another
 * algorithm: give the next one the socket unpaced, as it was, unless the
 * application capped its rate with SO_MAX_PACING_RATE meanwhile (that
 * needs the pacing, and set it already, so its cmpxchg did nothing).
 */
static void reno_tw_release(struct sock *sk)
{
	const struct reno_tw *ca = inet_csk_ca(sk);

	if (ca->paced && READ_ONCE(sk->sk_max_pacing_rate) == ~0UL)
		cmpxchg(&sk->sk_pacing_status, SK_PACING_NEEDED,
			SK_PACING_NONE);
}

/* The paper's decrease from @cwnd, floored, the product in 64 bits. */
static u32 reno_tw_decreased(const struct reno_tw *ca, u64 cwnd)
{
	return div_u64(cwnd * (100 - ca->decrease_pct), 100);
}

/* In congestion avoidance max(cwnd * (100 - decrease) / 100, 2), the
 * product in 64 bits: in 32 it would wrap above 43 million segments.
 *
 * In slow start Reno's half: the paper's gentle decrease is for a
 * congestion event in congestion avoidance (its Sec. V), where the window
 * grew by one segment since the path last held it.  In slow start it
 * doubled in the last round trip.
 *
 * The connection's first congestion event, after the start that the
 * initial ssthresh (and the probe) governed, gets what the path holds:
 * the larger of what it delivered in the last complete round trip and
 * the last delivery-rate sample times the minimum RTT, kept between the
 * half and the gentle decrease.  The loss that ends a paced start is
 * seen a round trip after the packets it hit were sent, when the window
 * may already have reached ssthresh or the probe may have ended: on the
 * paper's link with 1500-byte packets (99 + 20 packets) slow start
 * reached 201, and 95 % of that cost a congestion event every 2.5 round
 * trips for the next 13 s (5.96 % of the segments retransmitted in 40 s,
 * run alone1500-paced, module 1.2 before this).  A first event in
 * congestion avoidance, with the window at the path, finds what the path
 * holds near 95 % of the window anyway.
 */
static u32 reno_tw_ssthresh(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct reno_tw *ca = inet_csk_ca(sk);
	u64 cwnd = tcp_snd_cwnd(tp);
	u32 half, gentle, held;

	half = max_t(u32, cwnd >> 1U, 2U);
	gentle = max(reno_tw_decreased(ca, cwnd), 2U);
	if (ca->startup) {
		ca->startup = 0;
		ca->probing = 0;
		held = ca->last_round_delivered;
		if (tp->rate_interval_us > 0 && tcp_min_rtt(tp) != ~0U)
			held = max_t(u64, held,
				     div_u64((u64)tp->rate_delivered *
					     tcp_min_rtt(tp),
					     tp->rate_interval_us));
		held = clamp(held, half, max(half, gentle));
		/* Settle once this recovery is over (reno_tw_settle()). */
		ca->settling = held < gentle;
		ca->loss_cwnd = cwnd;
		return held;
	}
	if (tcp_in_slow_start(tp))
		return half;
	return gentle;
}

/* The recovery from the first congestion event ends (Recovery -> Open):
 * the window that overflowed less what the episode lost is what the path
 * carried.  Raise ssthresh to that if it is more than the estimate the
 * recovery started with, but never past the paper's decrease from the
 * window that overflowed; the kernel then sets the window to ssthresh
 * (tcp_end_cwnd_reduction()), or slow start takes it there.  In slow
 * start or the probe the window grew by a half or a quarter in the round
 * trip before the loss was seen, and what the last round trip delivered
 * is the window before that growth: alone on a path the link was full in
 * that round trip, and it is what the path holds; beside another flow
 * the link may have filled only in the last one.  Pacing spreads the
 * raise over the round trip.  Taken when the recovery ends, before the
 * same ACK may find a segment sent into the overfull queue early in the
 * recovery lost and start another: that one is a congestion event of its
 * own.
 */
static void reno_tw_settle(struct sock *sk, struct reno_tw *ca)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 lost, gentle, held;

	ca->settling = 0;
	lost = tp->lost - ca->lost_before;
	if (lost >= ca->loss_cwnd)
		return;
	gentle = reno_tw_decreased(ca, ca->loss_cwnd);
	held = min(ca->loss_cwnd - lost, gentle);
	if (held > tp->snd_ssthresh)
		tp->snd_ssthresh = min(held, tp->snd_cwnd_clamp);
}

/* Slow start below ssthresh; past the initial one, while the probe goes
 * on, a quarter of slow start's growth; Reno's one segment per round
 * trip after.
 */
static void reno_tw_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct reno_tw *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 grow;

	if (!ca->probing) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	acked += ca->probe_acked;
	grow = acked / RENO_TW_PROBE_DIVISOR;
	ca->probe_acked = acked % RENO_TW_PROBE_DIVISOR;
	tcp_snd_cwnd_set(tp, min(tcp_snd_cwnd(tp) + grow, tp->snd_cwnd_clamp));
}

/* Until the first congestion event, what each round trip delivered; while
 * probing, whether the RTT samples show a queue.
 */
static void reno_tw_pkts_acked(struct sock *sk, const struct ack_sample *sample)
{
	struct reno_tw *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 min_rtt, thresh;

	if (!ca->startup)
		return;
	if (!before(tp->snd_una, ca->round_end)) {
		ca->last_round_delivered = tp->delivered - ca->round_delivered;
		reno_tw_new_round(ca, tp);
	}
	if (!ca->probing || sample->rtt_us <= 0 || tcp_in_slow_start(tp))
		return;
	min_rtt = tcp_min_rtt(tp);
	thresh = clamp(min_rtt >> 3, RENO_TW_DELAY_MIN_US,
		       RENO_TW_DELAY_MAX_US);
	if (min_rtt == ~0U || sample->rtt_us < min_rtt + thresh) {
		ca->delayed = 0;
		return;
	}
	/* A queue: the last eight samples all came that late.  Not only the
	 * first ones of a round trip, as RFC 9406 takes: a queue of a few
	 * percent of the path fills within the round trip in which the
	 * window passes the path, before the next one's first sample.
	 */
	if (++ca->delayed >= RENO_TW_RTT_SAMPLES) {
		ca->probing = 0;
		tp->snd_ssthresh = tcp_snd_cwnd(tp);
	}
}

static void reno_tw_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);

	/* A retransmission timeout is not a duplicate-ACK congestion event:
	 * like TCP-like, fall back to half the window that timed out.
	 * tcp_enter_loss() saved that window in prior_cwnd just before.
	 */
	if (event == CA_EVENT_LOSS) {
		tp->snd_ssthresh = max(tp->prior_cwnd >> 1U, 2U);
		((struct reno_tw *)inet_csk_ca(sk))->startup = 0;
		((struct reno_tw *)inet_csk_ca(sk))->probing = 0;
	}
}

/* Called before the state changes.  The end of the first recovery
 * settles.  Only a loss recovery does: an ECN mark (CWR, or a local
 * qdisc's congestion notice) drops nothing, so "the window less what was
 * lost" is the whole window, however far past the path it had grown; and
 * a timeout (Loss, which may come in the middle of that recovery without
 * a new .ssthresh or CA_EVENT_LOSS) ends with a slow start of its own.
 */
static void reno_tw_set_state(struct sock *sk, u8 new_state)
{
	struct reno_tw *ca = inet_csk_ca(sk);

	if (!ca->settling)
		return;
	if (new_state == TCP_CA_CWR || new_state == TCP_CA_Loss)
		ca->settling = 0;
	else if (new_state == TCP_CA_Open &&
		 inet_csk(sk)->icsk_ca_state == TCP_CA_Recovery)
		reno_tw_settle(sk, ca);
}

/* A spurious recovery is undone whole: nothing to settle. */
static u32 reno_tw_undo_cwnd(struct sock *sk)
{
	((struct reno_tw *)inet_csk_ca(sk))->settling = 0;
	return tcp_reno_undo_cwnd(sk);
}

static struct tcp_congestion_ops tcp_reno_tw __read_mostly = {
	.init		= reno_tw_init,
	.release	= reno_tw_release,
	.ssthresh	= reno_tw_ssthresh,
	.cong_avoid	= reno_tw_cong_avoid,
	.pkts_acked	= reno_tw_pkts_acked,
	.undo_cwnd	= reno_tw_undo_cwnd,
	.cwnd_event	= reno_tw_cwnd_event,
	.set_state	= reno_tw_set_state,
	.owner		= THIS_MODULE,
	.name		= "reno_tw",
};

static int __init reno_tw_register(void)
{
	BUILD_BUG_ON(sizeof(struct reno_tw) > ICSK_CA_PRIV_SIZE);
	return tcp_register_congestion_control(&tcp_reno_tw);
}

static void __exit reno_tw_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_reno_tw);
}

module_init(reno_tw_register);
module_exit(reno_tw_unregister);

MODULE_AUTHOR("Research transports for Linux");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("TCP-like TW: Reno with a high initial ssthresh and a gentle decrease, for long-delay links");
MODULE_VERSION("1.3");
