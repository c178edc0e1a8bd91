// SPDX-License-Identifier: GPL-2.0
/*
 * MulTFRC: one TCP connection that is as aggressive as n TCP flows, with
 * the smooth, equation-based rate of TFRC.
 *
 * D. Damjanovic and M. Welzl, "MulTFRC: Providing Weighted Fairness for
 * Multimedia Applications (and others too!)", ACM SIGCOMM Computer
 * Communication Review 39(3), July 2009; draft-irtf-iccrg-multfrc-01.
 *
 * TFRC (RFC 5348) does not react to each loss the way TCP does.  It
 * measures the loss event rate p and the RTT and sends at the rate the TCP
 * throughput equation gives for them, which changes smoothly.  MulTFRC
 * replaces that equation with one for n parallel TCP flows
 * (tcp_multfrc_eq.c), n any positive real: n = 2 takes the share of two
 * TCP flows, n = 0.5 half the share of one.  It also measures j, the
 * packets lost per loss event, which the n-flow equation needs.
 *
 * As a TCP congestion control this is a sender-only TFRC, driven by TCP's
 * own loss detection and RTT measurement instead of receiver reports:
 *
 *  Rate, not window: .cong_control sets sk_pacing_rate to the rate and the
 *    congestion window to twice the rate times the RTT, so that pacing,
 *    not the window, limits sending (internal pacing, as tcp_bbr.c does:
 *    no fq qdisc needed).
 *
 *  Loss events: packets TCP marks lost (tp->lost, which also counts what an
 *    RTO marks) within one RTT of the first loss of an event belong to that
 *    event; the number in the event is its j.  An ECN mark counts as an
 *    event of one packet.  An RTO marks everything in flight lost, most of
 *    which usually was not: its event counts at most ceil(n) packets.
 *
 *  Loss intervals: the packets (delivered + lost) between the starts of
 *    consecutive loss events.  The last 8, weighted 1, 1, 1, 1, 0.8, 0.6,
 *    0.4, 0.2, and the open interval give p = 1 / I_mean with RFC 5348's
 *    rule (the open interval counts when that lowers p); j is averaged with
 *    the same weights and, as in the paper's Algorithm 1, is at most
 *    ceil(n): one loss event cannot hit more flows than there are.
 *    History discounting (RFC 5348 5.5): once the open interval is more
 *    than twice the mean of the closed ones, these weigh less (down to a
 *    quarter), so that after a phase of high loss the rate climbs back
 *    within a few RTTs instead of after eight loss events.  While the
 *    history is discounted the rate also grows by at least n segments
 *    per RTT in each RTT, as n TCP flows do in congestion avoidance
 *    (multfrc_probe_rate()): TFRC's own increase is a fraction of that,
 *    too slow to reach a share where the bandwidth-delay product is large.
 *
 *  Slow start: until the first loss event the rate doubles once per RTT,
 *    at most to twice the receive rate, from RFC 5348's initial window
 *    min(4 s, max(2 s, 4380 bytes)) per RTT.  The first loss interval is
 *    the one for which the equation gives the rate received before it
 *    (RFC 5348, 6.3.1), or the initial rate if none was measured yet.
 *
 *  The equation's timeout T is 4 RTT, TFRC's t_RTO (RFC 5348 4.3), which
 *    the paper takes from TFRC: not Linux's RTO (at least 200 ms, and
 *    backed off).  The timeout term models a Reno sender that meets a
 *    timeout whenever a window loses more than it can repair; with SACK,
 *    RACK and TLP Linux's TCP repairs most such losses without one, and
 *    with its minimum RTO at 5 to 10 RTTs on short paths that term held
 *    MulTFRC(2) at 70 kbit/s at 10 % loss where the equation with 4 RTT
 *    gives 482 (RTT 42 ms) and two Reno flows kept about 1200.
 *
 *  For n >= 1 the rate is at least that of n independent TCP flows, each
 *    at the loss event rate its share of the events gives it, p af
 *    (multfrc_eq_send_rate()).  As p grows, the paper's n-flow timeout
 *    term puts more of the flows in a timeout than n independent flows
 *    would be, and its rate falls about sevenfold near p = 0.13 (n = 4,
 *    j = 1), where one flow's holds to 0.17.  Under heavy loss MulTFRC(n)
 *    then had a second, stable state far below its share: at one segment
 *    per RTT every loss is an event of its own, p is high, and the
 *    equation holds the rate there.  n Linux TCP flows, which keep their
 *    own windows, take about n times one flow's rate at such loss rates.
 *    One flow's rate is the larger of the paper's for n = 1 and RFC
 *    5348's TCP equation: from p = 0.16 on the paper's holds one flow in
 *    a timeout for good (an eighth of a segment per RTT), RFC 5348's
 *    gives it half a segment per RTT at p = 0.2 (Linux's Reno kept 0.86
 *    at 15 % random loss).
 *    At 2 % loss and less the bound adds at most 13 % to the equation's
 *    rate; n < 1 is unchanged.
 *
 *  Afterwards, once per RTT and at every loss event the rate becomes the
 *    equation's, at most twice the receive rate of the last RTT, at least
 *    one segment per second.  After an RTO, and when the connection sends
 *    again after a silence longer than the RTO, the rate halves (at least
 *    to the initial rate), as TFRC's no-feedback timer does, and grows
 *    from there with the receive rate (multfrc_halve()).
 *
 * Choosing n: the algorithm "multfrc" uses the module parameter n (0.1 to
 * 100, default 1) as it was when a connection chose it.  The parameter
 * instances lists further values, each registered as its own algorithm
 * "multfrc_<n>" (modprobe tcp_multfrc instances=2,0.5 gives multfrc_2 and
 * multfrc_0.5), which an application selects per socket with
 * TCP_CONGESTION.  It is writable at run time (multfrc_set_instances()):
 * "+4" adds multfrc_4, "-4" removes it, a plain list makes the instances
 * exactly those.  Since n > 1 takes more than one TCP's share, none of
 * them is open to unprivileged sockets unless the administrator lists it
 * in net.ipv4.tcp_allowed_congestion_control.
 *
 * What it cannot do: undo.  TCP's spurious-loss undo restores the window
 * of a window-based algorithm; here the loss event stays in the history.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/tcp.h>
#include <compat/kcompat.h>

#include "tcp_multfrc_eq.h"

#define CREATE_TRACE_POINTS
#include "tcp_multfrc_trace.h"

#define MULTFRC_INTERVALS	8	/* closed loss intervals kept */
#define MULTFRC_MAX_INSTANCES	16	/* registered at a time */
#define MULTFRC_SLOTS		64	/* values of n until the module unloads */
#define MULTFRC_MIN_CWND	4U

/* RFC 5348 5.4 weights, in tenths */
static const u8 multfrc_weight[MULTFRC_INTERVALS] = {
	10, 10, 10, 10, 8, 6, 4, 2
};

/* History discounting (RFC 5348 5.5): discount factors in 1/255 units,
 * at least THRESHOLD, 0.25.
 */
#define MULTFRC_DF_ONE		255U
#define MULTFRC_DF_MIN		64U

static u32 multfrc_n_milli __read_mostly = 1000;
static unsigned int multfrc_b __read_mostly = 1;

/* An algorithm multfrc_<n>.  A slot, once given a value of n, keeps it
 * and its memory until the module unloads, registered or not: removing an
 * instance unregisters its name, so that no socket can choose it any
 * more, but sockets that chose it before keep running on its ops (they
 * hold a reference to the module, not to the instance, and TCP calls no
 * hook when one picks an algorithm, so the module cannot count them).
 * Adding the same n again registers the same slot again.
 */
struct multfrc_instance {
	struct tcp_congestion_ops ops;
	u32 n_milli;			/* 0: slot never used */
	bool registered;
	unsigned int order;		/* when added, for reading back */
};

static struct multfrc_instance multfrc_slots[MULTFRC_SLOTS];
static unsigned int multfrc_nregistered;
static unsigned int multfrc_order;
/* Load-time values, registered by module_init() */
static u32 multfrc_pending[MULTFRC_MAX_INSTANCES];
static unsigned int multfrc_npending;
static DEFINE_MUTEX(multfrc_instances_lock);	/* all of the above */

/* Per-socket state.  All zeroes is a valid state, slow start: an active
 * open runs .cong_control for the SYN-ACK before .init.
 */
struct multfrc {
	u64 rate;			/* bytes/s */
	u32 n_milli;
	u32 interval[MULTFRC_INTERVALS];	/* closed, newest first */
	u16 j[MULTFRC_INTERVALS];	/* lost in the event closing each */
	u32 ev_start_pkts;		/* delivered + lost at event start */
	u32 ev_start_us;		/* tcp clock at event start */
	u32 ev_lost;			/* lost in the open event */
	u32 lost_seen;			/* tp->lost accounted for */
	u32 round_start_us;		/* this RTT round began */
	u32 x_recv_prev;		/* receive rate, last round, bytes/s */
	u32 x_recv;			/* receive rate, this round, bytes/s */
	u8 nintervals;			/* 0: still in slow start */
	u8 in_event:1;
	u8 timer_halved:1;		/* halved, no ACK since */
	u8 df[MULTFRC_INTERVALS];	/* discount of each interval */
};

/* "2", "0.5", "12.25": n in thousandths, within the range the equation
 * takes.
 */
static int multfrc_parse_n(const char *s, u32 *n_milli)
{
	unsigned int whole = 0, frac = 0, digits = 0;
	const char *p = s;

	if (!isdigit(*p))
		return -EINVAL;
	for (; isdigit(*p); p++) {
		whole = whole * 10 + (*p - '0');
		if (whole > MULTFRC_N_MAX / 1000)
			return -EINVAL;
	}
	if (*p == '.') {
		for (p++; isdigit(*p); p++, digits++) {
			if (digits == 3)
				return -EINVAL;
			frac = frac * 10 + (*p - '0');
		}
		if (!digits)
			return -EINVAL;
		for (; digits < 3; digits++)
			frac *= 10;
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*n_milli = whole * 1000 + frac;
	if (*n_milli < MULTFRC_N_MIN || *n_milli > MULTFRC_N_MAX)
		return -EINVAL;
	return 0;
}

/* n as written back: "2", "0.5", "12.25" */
static int multfrc_format_n(char *buf, size_t len, u32 n_milli)
{
	u32 frac = n_milli % 1000;
	int w = 3;

	if (!frac)
		return scnprintf(buf, len, "%u", n_milli / 1000);
	for (; frac % 10 == 0; frac /= 10)
		w--;
	return scnprintf(buf, len, "%u.%0*u", n_milli / 1000, w, frac);
}

static int multfrc_set_n(const char *val, const struct kernel_param *kp)
{
	u32 n;

	if (multfrc_parse_n(val, &n)) {
		pr_err("n must be a number from 0.1 to 100 with at most three decimals, not '%s'\n",
		       val);
		return -EINVAL;
	}
	WRITE_ONCE(multfrc_n_milli, n);
	return 0;
}

static int multfrc_get_n(char *buf, const struct kernel_param *kp)
{
	int len = multfrc_format_n(buf, PAGE_SIZE, READ_ONCE(multfrc_n_milli));

	return len + scnprintf(buf + len, PAGE_SIZE - len, "\n");
}

static int multfrc_set_b(const char *val, const struct kernel_param *kp)
{
	unsigned int b;

	if (kstrtouint(val, 0, &b) || (b != 1 && b != 2)) {
		pr_err("b (packets per ACK) must be 1 or 2\n");
		return -EINVAL;
	}
	WRITE_ONCE(multfrc_b, b);
	return 0;
}

static const struct kernel_param_ops multfrc_n_ops = {
	.set = multfrc_set_n,
	.get = multfrc_get_n,
};

static const struct kernel_param_ops multfrc_b_ops = {
	.set = multfrc_set_b,
	.get = param_get_uint,
};

module_param_cb(n, &multfrc_n_ops, &multfrc_n_milli, 0644);
MODULE_PARM_DESC(n, "how many TCP flows \"multfrc\" is as aggressive as, for new connections (0.1..100, up to three decimals; default 1)");
module_param_cb(b, &multfrc_b_ops, &multfrc_b, 0644);
MODULE_PARM_DESC(b, "packets acknowledged per ACK in the equation (1 or 2; default 1, as RFC 5348)");

static u32 multfrc_srtt_us(const struct tcp_sock *tp)
{
	return max(tp->srtt_us >> 3, 1U);
}

static u64 multfrc_initial_rate(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 mss = tp->mss_cache;
	u32 w = clamp(4380U, 2 * mss, 4 * mss);

	return div_u64((u64)w * USEC_PER_SEC, multfrc_srtt_us(tp));
}

/* The lowest rate: one segment per second.  TFRC's is one per 64 s
 * (t_mbi), but a paced TCP socket schedules its next send skb->len / rate
 * after each skb (tcp_update_skb_after_send()) and keeps that time when
 * the rate rises again: at s / 64 an skb of the two segments TCP sends at
 * low rates (tcp_min_tso_segs) stalls the connection for 128 s.  At one
 * segment per second the stall is at most 2 s, what TCP's own
 * first retransmission timeout (1 s, RFC 6298) and its backoff would wait.
 * Under persistent loss the rate does not stay there anyway: with no ACK
 * no rate is set, and TCP's backed-off RTOs alone send.
 */
static u64 multfrc_min_rate(const struct sock *sk)
{
	return max(tcp_sk(sk)->mss_cache, 1U);
}

static u32 multfrc_packets(const struct tcp_sock *tp)
{
	return tp->delivered + tp->lost;
}

/* The equation's timeout: TFRC's t_RTO = 4 R (the header comment) */
static u32 multfrc_t_rto_us(const struct tcp_sock *tp)
{
	return max(4 * multfrc_srtt_us(tp), 1U);
}

/* The equation's inputs for this connection, without p. */
static void multfrc_eq_input(const struct sock *sk, const struct multfrc *ca,
			     struct multfrc_eq_in *in, u32 j_milli)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	in->n_milli = ca->n_milli;
	in->j_milli = j_milli;
	in->rtt_us = multfrc_srtt_us(tp);
	in->rto_us = multfrc_t_rto_us(tp);
	in->mss = tp->mss_cache;
	in->b = READ_ONCE(multfrc_b);
	in->p = 0;
}

static u32 multfrc_open_interval(const struct sock *sk,
				 const struct multfrc *ca)
{
	return multfrc_packets(tcp_sk(sk)) - ca->ev_start_pkts;
}

/* The general discount factor DF (RFC 5348 5.5): once the open interval
 * is more than twice the (discounted) mean of the closed ones, the closed
 * ones weigh 2 I_mean / I_0 of their weight, at least a quarter, so that
 * after a phase of high loss the long loss-free interval that follows
 * lowers p within a few RTTs instead of after eight loss events.
 */
static u32 multfrc_discount(const struct multfrc *ca, u32 open)
{
	u64 tot = 0, wtot = 0, df;
	unsigned int i;

	for (i = 0; i < ca->nintervals; i++) {
		u32 w = multfrc_weight[i] * ca->df[i];

		tot += (u64)ca->interval[i] * w;
		wtot += w;
	}
	if (!wtot || (u64)open * wtot <= 2 * tot)
		return MULTFRC_DF_ONE;
	df = div64_u64(2 * tot * MULTFRC_DF_ONE, (u64)open * wtot);
	return max_t(u32, df, MULTFRC_DF_MIN);
}

/* p (2^-32 units) and j (thousandths) from the loss history (RFC 5348
 * 5.4, 5.5): I_mean is the larger of the weighted means with and without
 * the open interval, so that a long loss-free time lowers p at once;
 * each closed interval's weight is discounted by its factor, and, in the
 * mean with the open interval, by the general factor.  j is the mean of
 * the closed events' with the same discounted weights.
 */
static void multfrc_loss_rate(const struct sock *sk, const struct multfrc *ca,
			      u32 *p, u32 *j_milli)
{
	u64 tot0 = 0, tot1 = 0, w0tot = 0, w1tot = 0, jtot = 0;
	u32 open = multfrc_open_interval(sk, ca);
	unsigned int i;
	u32 df;

	*p = U32_MAX;
	*j_milli = 1000;
	if (!ca->nintervals)
		return;

	df = multfrc_discount(ca, open);
	for (i = 0; i < ca->nintervals; i++) {
		u64 w1 = (u64)multfrc_weight[i] * ca->df[i] * MULTFRC_DF_ONE;
		u64 w0 = (u64)multfrc_weight[i] * MULTFRC_DF_ONE *
			 MULTFRC_DF_ONE;

		/* the open interval is not discounted */
		if (i)
			w0 = (u64)multfrc_weight[i] * ca->df[i - 1] * df;
		tot1 += ca->interval[i] * w1;
		tot0 += (i ? ca->interval[i - 1] : open) * w0;
		jtot += ca->j[i] * w1;
		w1tot += w1;
		w0tot += w0;
	}
	*j_milli = (u32)max_t(u64, div64_u64(jtot * 1000, w1tot), 1000);
	/* p = 1 / max(I_tot0 / W_tot0, I_tot1 / W_tot1, 1 packet) */
	if (div64_u64(tot0, w0tot) > div64_u64(tot1, w1tot)) {
		tot1 = tot0;
		w1tot = w0tot;
	}
	tot1 = max(tot1, w1tot);
	*p = (u32)min_t(u64, div64_u64(w1tot << 32, tot1), U32_MAX);
	*p = max(*p, 1U);
	/* At most ceil(n) of the n flows can be hit (the paper's first line
	 * of Algorithm 1): a burst of losses, as at the end of slow start,
	 * is not more than n flows losing at once.
	 */
	*j_milli = min(*j_milli, DIV_ROUND_UP(ca->n_milli, 1000) * 1000);
}

/* Two rate-RTTs of window: pacing, not cwnd, limits sending. */
static void multfrc_set_cwnd(struct tcp_sock *tp, u64 rate)
{
	tcp_snd_cwnd_set(tp, multfrc_eq_cwnd(rate, multfrc_srtt_us(tp),
					     tp->mss_cache, MULTFRC_MIN_CWND,
					     tp->snd_cwnd_clamp));
}

/* While the history is discounted (RFC 5348 5.5: the open interval is
 * more than twice the mean of the closed ones, the loss rate has fallen),
 * the rate grows by at least n segments per RTT in each RTT, as n TCP
 * flows grow in congestion avoidance.  TFRC's own increase there is a
 * fraction of a segment per RTT in each RTT: where the bandwidth-delay
 * product is large it would take minutes to reach a share that n TCP
 * flows reach in tens of RTTs.  With intervals near their mean the
 * history is not discounted, and the rate stays the equation's.
 */
static u64 multfrc_probe_rate(const struct sock *sk, const struct multfrc *ca)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 step;

	if (multfrc_discount(ca, multfrc_open_interval(sk, ca)) ==
	    MULTFRC_DF_ONE)
		return 0;
	step = div_u64((u64)ca->n_milli * tp->mss_cache * USEC_PER_SEC,
		       multfrc_srtt_us(tp));
	return ca->rate + div_u64(step, 1000);
}

static void multfrc_set_rate(struct sock *sk, struct multfrc *ca, u64 x_calc,
			     u32 p, u32 j_milli)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 x_recv = max(ca->x_recv, ca->x_recv_prev);
	u64 rate = ca->rate;

	if (!ca->nintervals) {
		rate = max(min(2 * rate, 2 * x_recv), multfrc_initial_rate(sk));
	} else {
		rate = max(x_calc, multfrc_probe_rate(sk, ca));
		if (x_recv)
			rate = min(rate, 2 * x_recv);
		rate = max(rate, multfrc_min_rate(sk));
	}
	ca->rate = rate;
	WRITE_ONCE(sk->sk_pacing_rate, min_t(u64, rate,
					     READ_ONCE(sk->sk_max_pacing_rate)));
	multfrc_set_cwnd(tp, rate);

	trace_multfrc_update(sk, ca->n_milli,
			     (u32)(((u64)p * NSEC_PER_SEC) >> 32), j_milli,
			     multfrc_srtt_us(tp),
			     multfrc_t_rto_us(tp), x_calc,
			     x_recv, rate, !ca->nintervals);
}

/* Recompute p, j and the rate from the loss history. */
static void multfrc_update(struct sock *sk, struct multfrc *ca)
{
	struct multfrc_eq_in in;
	u64 x_calc = 0;
	u32 p = 0, j = 1000;

	if (ca->nintervals) {
		multfrc_loss_rate(sk, ca, &p, &j);
		multfrc_eq_input(sk, ca, &in, j);
		in.p = p;
		x_calc = multfrc_eq_send_rate(&in);
	}
	multfrc_set_rate(sk, ca, x_calc, p, j);
}

/* Close the open loss event, if any, and open one at now. */
static void multfrc_new_event(struct sock *sk, struct multfrc *ca,
			      u32 now_us)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 pkts = multfrc_packets(tp);

	if (!ca->nintervals) {
		/* The first interval: the one whose rate was received
		 * (RFC 5348 6.3.1).  A loss before any rate was measured
		 * (an RTO in the first round) takes the initial rate instead:
		 * a rate of nothing would start from p near 1.
		 */
		struct multfrc_eq_in in;
		u64 x_recv = max(ca->x_recv, ca->x_recv_prev);

		multfrc_eq_input(sk, ca, &in, 1000);
		x_recv = max(x_recv, multfrc_initial_rate(sk));
		ca->interval[0] = multfrc_eq_loss_interval(&in, x_recv);
		ca->j[0] = 1;
		ca->df[0] = MULTFRC_DF_ONE;
		ca->nintervals = 1;
	} else if (ca->in_event) {
		/* the discount in force goes into the closed intervals'
		 * (RFC 5348 5.5); the interval that closes now has none
		 */
		u32 df = multfrc_discount(ca, pkts - ca->ev_start_pkts);
		unsigned int i;

		for (i = 0; i < ca->nintervals; i++)
			ca->df[i] = DIV_ROUND_CLOSEST(ca->df[i] * df,
						      MULTFRC_DF_ONE);
		memmove(&ca->interval[1], &ca->interval[0],
			sizeof(ca->interval) - sizeof(ca->interval[0]));
		memmove(&ca->j[1], &ca->j[0], sizeof(ca->j) - sizeof(ca->j[0]));
		memmove(&ca->df[1], &ca->df[0],
			sizeof(ca->df) - sizeof(ca->df[0]));
		ca->interval[0] = max(pkts - ca->ev_start_pkts, 1U);
		ca->j[0] = min_t(u32, max(ca->ev_lost, 1U), U16_MAX);
		ca->df[0] = MULTFRC_DF_ONE;
		ca->nintervals = min(ca->nintervals + 1, MULTFRC_INTERVALS);
	}
	ca->in_event = 1;
	ca->ev_start_pkts = pkts;
	ca->ev_start_us = now_us;
	ca->ev_lost = 0;
}

/* lost packets were detected at now: a new loss event, or more of the
 * open one if it began less than an RTT ago.
 */
static void multfrc_lost(struct sock *sk, struct multfrc *ca, u32 lost,
			 u32 now_us)
{
	if (!lost)
		return;
	if (!ca->in_event ||
	    now_us - ca->ev_start_us >= multfrc_srtt_us(tcp_sk(sk))) {
		multfrc_new_event(sk, ca, now_us);
		ca->ev_lost = lost;
		multfrc_update(sk, ca);
		return;
	}
	ca->ev_lost += lost;
}

static void multfrc_init(struct sock *sk)
{
	const struct tcp_congestion_ops *ops = inet_csk(sk)->icsk_ca_ops;
	struct multfrc *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	memset(ca, 0, sizeof(*ca));
	ca->n_milli = READ_ONCE(multfrc_n_milli);
	if (strcmp(ops->name, "multfrc"))
		ca->n_milli = container_of(ops, struct multfrc_instance,
					   ops)->n_milli;
	ca->lost_seen = tp->lost;
	ca->round_start_us = tp->tcp_mstamp;
	ca->rate = multfrc_initial_rate(sk);
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
	WRITE_ONCE(sk->sk_pacing_rate, min_t(u64, ca->rate,
					     READ_ONCE(sk->sk_max_pacing_rate)));
}

static void multfrc_cong_control(KC_CONG_CONTROL_ARGS)
{
	struct multfrc *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 now_us = tp->tcp_mstamp;

	multfrc_lost(sk, ca, tp->lost - ca->lost_seen, now_us);
	ca->lost_seen = tp->lost;
	if (ca->timer_halved) {
		/* the first ACK after a halving (multfrc_halve()) */
		ca->timer_halved = 0;
		ca->round_start_us = now_us;
	}

	/* The receive rate: the best delivery rate sample of the round; an
	 * application-limited sample counts only if it is higher.
	 */
	if (rs->delivered > 0 && rs->interval_us > 0) {
		u64 x = div64_u64((u64)rs->delivered * tp->mss_cache *
				  USEC_PER_SEC, rs->interval_us);

		ca->x_recv = max_t(u64, ca->x_recv, min_t(u64, x, U32_MAX));
	}

	/* Once per RTT: the equation again, with this round's RTT. */
	if (now_us - ca->round_start_us >= multfrc_srtt_us(tp)) {
		ca->round_start_us = now_us;
		multfrc_update(sk, ca);
		ca->x_recv_prev = ca->x_recv;
		ca->x_recv = 0;
	} else {
		/* keep the window in step with the rate and the RTT */
		multfrc_set_cwnd(tp, ca->rate);
	}
}

/* An ECN mark is a loss event of one packet; the ACKs that echo it until
 * the peer sees CWR add nothing.
 */
static void multfrc_in_ack_event(struct sock *sk, u32 flags)
{
	struct multfrc *ca = inet_csk_ca(sk);
	u32 now_us = tcp_sk(sk)->tcp_mstamp;

	if ((flags & CA_ACK_ECE) &&
	    (!ca->in_event ||
	     now_us - ca->ev_start_us >= multfrc_srtt_us(tcp_sk(sk))))
		multfrc_lost(sk, ca, 1, now_us);
}

/* RFC 5348 4.4, the no-feedback timer: halve the allowed rate by
 * replacing the receive rates that limit it (X_recv_set) with a single
 * one, half the new rate, so that the rate (at most twice the receive
 * rate) is the halved one.  TFRC keeps sending at that rate; TCP after
 * an RTO sends one segment and waits for its ACK.  So the measurement
 * round restarts at that first ACK (multfrc_cong_control()): the rate
 * stays at least the halved one until a whole round has measured what
 * is sent at it, and the samples of the repair cannot set it.
 */
static void multfrc_halve(struct sock *sk, struct multfrc *ca)
{
	struct tcp_sock *tp = tcp_sk(sk);

	ca->rate = max(ca->rate / 2, multfrc_initial_rate(sk));
	ca->x_recv_prev = (u32)min_t(u64, ca->rate / 2, U32_MAX);
	ca->x_recv = 0;
	ca->timer_halved = 1;
	WRITE_ONCE(sk->sk_pacing_rate, min_t(u64, ca->rate,
					     READ_ONCE(sk->sk_max_pacing_rate)));
	multfrc_set_cwnd(tp, ca->rate);
}

static void multfrc_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	struct multfrc *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 cap = DIV_ROUND_UP(ca->n_milli, 1000);

	switch (event) {
	case CA_EVENT_LOSS:
		/* An RTO marked everything in flight lost. */
		multfrc_lost(sk, ca, min(tp->lost - ca->lost_seen, cap),
			     tp->tcp_mstamp);
		ca->lost_seen = tp->lost;
		multfrc_halve(sk, ca);
		break;
	case CA_EVENT_TX_START:
		/* Sending again after a silence longer than the RTO (TFRC's
		 * no-feedback timer); lsndtime is still the last send.
		 */
		if (tcp_jiffies32 - tp->lsndtime > inet_csk(sk)->icsk_rto)
			multfrc_halve(sk, ca);
		break;
	default:
		break;
	}
}

static u32 multfrc_ssthresh(struct sock *sk)
{
	return max(tcp_snd_cwnd(tcp_sk(sk)) >> 1, 2U);
}

static u32 multfrc_undo_cwnd(struct sock *sk)
{
	return tcp_snd_cwnd(tcp_sk(sk));
}

static struct tcp_congestion_ops tcp_multfrc __read_mostly = {
	.init		= multfrc_init,
	.ssthresh	= multfrc_ssthresh,
	.undo_cwnd	= multfrc_undo_cwnd,
	.cong_control	= multfrc_cong_control,
	.in_ack_event	= multfrc_in_ack_event,
	.cwnd_event	= multfrc_cwnd_event,
	.owner		= THIS_MODULE,
	.name		= "multfrc",
};

enum {
	MULTFRC_LOADING,	/* parameters parsed, module_init() not run */
	MULTFRC_LIVE,
	MULTFRC_GOING,		/* module_exit() began */
};

static int multfrc_state = MULTFRC_LOADING;

/* A write to instances: the values of n and what to do with them. */
struct multfrc_request {
	u32 n[MULTFRC_MAX_INSTANCES];
	unsigned int count;
	char op;		/* '+' add, '-' remove, 0 replace */
};

static struct multfrc_instance *multfrc_find(u32 n_milli)
{
	unsigned int i;

	for (i = 0; i < MULTFRC_SLOTS; i++)
		if (multfrc_slots[i].n_milli == n_milli)
			return &multfrc_slots[i];
	return NULL;
}

static bool multfrc_listed(const struct multfrc_request *req, u32 n_milli)
{
	unsigned int i;

	for (i = 0; i < req->count; i++)
		if (req->n[i] == n_milli)
			return true;
	return false;
}

/* "2,0.5", "+4", "-4,-0.5", "" (none): each value a number in range,
 * listed once, at most MULTFRC_MAX_INSTANCES of them, all with the same
 * sign or none.
 */
static int multfrc_parse_instances(const char *val,
				   struct multfrc_request *req)
{
	char *list, *s, *tok, name[12];
	int ret = 0;
	u32 n;

	memset(req, 0, sizeof(*req));
	list = kstrdup(val, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	s = strim(list);
	if (*s == '+' || *s == '-')
		req->op = *s;
	while (!ret && *s && (tok = strsep(&s, ",")) != NULL) {
		if (req->op && *tok == req->op) {
			tok++;
		} else if (*tok == '+' || *tok == '-') {
			pr_err("instances: write +N to add, -N to remove or a list to replace them all, not a mix\n");
			ret = -EINVAL;
			break;
		}
		if (multfrc_parse_n(tok, &n)) {
			pr_err("instances: '%s' is not a number from 0.1 to 100 with at most three decimals\n",
			       tok);
			ret = -EINVAL;
		} else if (multfrc_listed(req, n)) {
			multfrc_format_n(name, sizeof(name), n);
			pr_err("instances: multfrc_%s listed twice\n", name);
			ret = -EINVAL;
		} else if (req->count == MULTFRC_MAX_INSTANCES) {
			pr_err("instances: at most %d\n", MULTFRC_MAX_INSTANCES);
			ret = -EINVAL;
		} else {
			req->n[req->count++] = n;
		}
		if (!s)
			break;
	}
	kfree(list);
	return ret;
}

/* Is ops the default algorithm of a network namespace?  Its new sockets
 * would keep getting it without its name being registered.
 */
static bool multfrc_is_default(const struct tcp_congestion_ops *ops)
{
	bool found = false;
	struct net *net;

	down_read(&net_rwsem);
	for_each_net(net) {
		if (rcu_access_pointer(net->ipv4.tcp_congestion_control) ==
		    ops) {
			found = true;
			break;
		}
	}
	up_read(&net_rwsem);
	return found;
}

static int multfrc_add(u32 n_milli)
{
	struct multfrc_instance *in = multfrc_find(n_milli);
	bool fresh = !in;
	char name[12];
	int ret;

	multfrc_format_n(name, sizeof(name), n_milli);
	if (in && in->registered) {
		pr_err("instances: multfrc_%s exists\n", name);
		return -EEXIST;
	}
	if (multfrc_nregistered == MULTFRC_MAX_INSTANCES) {
		pr_err("instances: at most %d at a time\n",
		       MULTFRC_MAX_INSTANCES);
		return -ENOSPC;
	}
	if (fresh) {
		in = multfrc_find(0);
		if (!in) {
			pr_err("instances: %d values of n were used since the module was loaded; reload it for others\n",
			       MULTFRC_SLOTS);
			return -ENOSPC;
		}
		in->ops = tcp_multfrc;
		snprintf(in->ops.name, sizeof(in->ops.name), "multfrc_%s",
			 name);
		in->n_milli = n_milli;
	}
	/* Restricted, as a new registration is: making "multfrc" (or this
	 * instance, before a removal) a default or listing it in
	 * tcp_allowed_congestion_control sets TCP_CONG_NON_RESTRICTED on its
	 * ops, which a copy or a removal must not carry over.
	 */
	in->ops.flags = 0;
	ret = tcp_register_congestion_control(&in->ops);
	if (ret) {
		pr_err("instances: cannot register multfrc_%s (%d)\n", name,
		       ret);
		if (fresh)	/* never visible: the slot is free again */
			in->n_milli = 0;
		return ret;
	}
	in->registered = true;
	in->order = multfrc_order++;
	multfrc_nregistered++;
	return 0;
}

/* Unregister multfrc_<n>: no socket can choose it from then on; those that
 * did keep it (the slot stays, struct multfrc_instance).  Refused while it
 * is a namespace's default, checked again once the name is gone, when no
 * sysctl write can make it the default any more.
 */
static int multfrc_remove(u32 n_milli)
{
	struct multfrc_instance *in = multfrc_find(n_milli);
	char name[12];

	multfrc_format_n(name, sizeof(name), n_milli);
	if (!in || !in->registered) {
		pr_err("instances: there is no multfrc_%s\n", name);
		return -ENOENT;
	}
	if (!multfrc_is_default(&in->ops)) {
		tcp_unregister_congestion_control(&in->ops);
		if (!multfrc_is_default(&in->ops)) {
			in->registered = false;
			multfrc_nregistered--;
			return 0;
		}
		if (tcp_register_congestion_control(&in->ops)) {
			in->registered = false;
			multfrc_nregistered--;
		}
	}
	pr_err("instances: multfrc_%s is the default congestion control of a network namespace\n",
	       name);
	return -EBUSY;
}

static void multfrc_remove_all(void)
{
	unsigned int i;

	for (i = 0; i < MULTFRC_SLOTS; i++) {
		if (!multfrc_slots[i].registered)
			continue;
		tcp_unregister_congestion_control(&multfrc_slots[i].ops);
		multfrc_slots[i].registered = false;
	}
	multfrc_nregistered = 0;
}

/* Removals, then additions (which may need the room), one by one; on a
 * failure what was done is undone and the error returned.
 */
static int multfrc_apply(const struct multfrc_request *req)
{
	u32 add[MULTFRC_MAX_INSTANCES], rm[MULTFRC_MAX_INSTANCES];
	unsigned int nadd = 0, nrm = 0, done_add = 0, done_rm = 0, i;
	struct multfrc_instance *in;
	int ret = 0;

	if (req->op == '-') {
		memcpy(rm, req->n, req->count * sizeof(rm[0]));
		nrm = req->count;
	} else if (req->op == '+') {
		memcpy(add, req->n, req->count * sizeof(add[0]));
		nadd = req->count;
	} else {
		for (i = 0; i < MULTFRC_SLOTS; i++) {
			in = &multfrc_slots[i];
			if (in->registered && !multfrc_listed(req, in->n_milli))
				rm[nrm++] = in->n_milli;
		}
		for (i = 0; i < req->count; i++) {
			in = multfrc_find(req->n[i]);
			if (!in || !in->registered)
				add[nadd++] = req->n[i];
		}
	}
	while (!ret && done_rm < nrm) {
		ret = multfrc_remove(rm[done_rm]);
		if (!ret)
			done_rm++;
	}
	while (!ret && done_add < nadd) {
		ret = multfrc_add(add[done_add]);
		if (!ret)
			done_add++;
	}
	if (ret) {
		while (done_add)
			multfrc_remove(add[--done_add]);
		while (done_rm)
			multfrc_add(rm[--done_rm]);
	}
	return ret;
}

/* instances: at load time the list module_init() registers; afterwards
 * "+N[,+M...]" adds, "-N[,-M...]" removes, "N,M,..." (or nothing) makes
 * the instances exactly those.  A lookup of the algorithms runs under RCU
 * and registration under TCP's own lock; the mutex orders the writers
 * and module_exit() (a write can race with it: the parameter's file goes
 * only after module_exit() returns).
 */
static int multfrc_set_instances(const char *val,
				 const struct kernel_param *kp)
{
	struct multfrc_request req;
	int ret;

	ret = multfrc_parse_instances(val, &req);
	if (ret)
		return ret;
	mutex_lock(&multfrc_instances_lock);
	switch (multfrc_state) {
	case MULTFRC_LOADING:
		if (req.op == '-') {
			pr_err("instances: nothing to remove at load time\n");
			ret = -EINVAL;
			break;
		}
		memcpy(multfrc_pending, req.n, sizeof(req.n));
		multfrc_npending = req.count;
		break;
	case MULTFRC_LIVE:
		ret = multfrc_apply(&req);
		break;
	default:
		ret = -ENODEV;
	}
	mutex_unlock(&multfrc_instances_lock);
	return ret;
}

/* The registered values of n, in the order they were added: "2,0.5". */
static int multfrc_get_instances(char *buf, const struct kernel_param *kp)
{
	unsigned int i, from = 0, best, len = 0;
	const struct multfrc_instance *in;

	mutex_lock(&multfrc_instances_lock);
	for (;;) {
		best = MULTFRC_SLOTS;
		for (i = 0; i < MULTFRC_SLOTS; i++) {
			in = &multfrc_slots[i];
			if (in->registered && in->order >= from &&
			    (best == MULTFRC_SLOTS ||
			     in->order < multfrc_slots[best].order))
				best = i;
		}
		if (best == MULTFRC_SLOTS)
			break;
		in = &multfrc_slots[best];
		if (len)
			len += scnprintf(buf + len, PAGE_SIZE - len, ",");
		len += multfrc_format_n(buf + len, PAGE_SIZE - len,
					in->n_milli);
		from = in->order + 1;
	}
	mutex_unlock(&multfrc_instances_lock);
	return len + scnprintf(buf + len, PAGE_SIZE - len, "\n");
}

static const struct kernel_param_ops multfrc_instances_ops = {
	.set = multfrc_set_instances,
	.get = multfrc_get_instances,
};

module_param_cb(instances, &multfrc_instances_ops, NULL, 0644);
MODULE_PARM_DESC(instances, "further values of n, comma-separated, each registered as algorithm multfrc_<n> (at most 16); at run time +N adds, -N removes, a list replaces");

/* The load-time instances are checked when the parameter is parsed, so
 * only a name or key that another module registered can fail here; a
 * socket that took one of the earlier ones in that moment would outlive
 * the module, which a failed init does not keep: that case is not
 * handled.
 */
static int __init multfrc_register(void)
{
	unsigned int i;
	int ret;

	BUILD_BUG_ON(sizeof(struct multfrc) > ICSK_CA_PRIV_SIZE);
	ret = tcp_register_congestion_control(&tcp_multfrc);
	if (ret)
		return ret;
	mutex_lock(&multfrc_instances_lock);
	for (i = 0; !ret && i < multfrc_npending; i++)
		ret = multfrc_add(multfrc_pending[i]);
	if (ret)
		multfrc_remove_all();
	else
		multfrc_state = MULTFRC_LIVE;
	mutex_unlock(&multfrc_instances_lock);
	if (ret) {
		tcp_unregister_congestion_control(&tcp_multfrc);
		/* modprobe takes EEXIST for "already loaded" */
		if (ret == -EEXIST)
			ret = -EINVAL;
	}
	return ret;
}

static void __exit multfrc_unregister(void)
{
	mutex_lock(&multfrc_instances_lock);
	multfrc_state = MULTFRC_GOING;
	multfrc_remove_all();
	mutex_unlock(&multfrc_instances_lock);
	tcp_unregister_congestion_control(&tcp_multfrc);
}

module_init(multfrc_register);
module_exit(multfrc_unregister);

MODULE_AUTHOR("Research transports for Linux");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MulTFRC: equation-based congestion control as aggressive as n TCP flows");
MODULE_VERSION("1.0");
