// SPDX-License-Identifier: GPL-2.0
/*
 * The MulTFRC throughput equation in integer arithmetic.
 *
 * D. Damjanovic and M. Welzl, "MulTFRC: Providing Weighted Fairness for
 * Multimedia Applications (and others too!)", ACM SIGCOMM CCR 39(3), 2009,
 * and draft-irtf-iccrg-multfrc-01, extend the TCP throughput equation that
 * TFRC uses (RFC 5348) to n parallel TCP flows that share one loss event
 * rate p: n flows of which the j packets lost in one loss event each hit a
 * different flow, b packets per ACK, round-trip time R, timeout t_RTO and
 * segment size s send
 *
 *   af = n (1 - (1 - 1/n)^j)  if n < 12, else j;  then 1 <= af <= ceil(n)
 *   a  = p b af (24 n^2 + p b af (n - 2 af)^2)
 *   x  = (af p b (2 af - n) + sqrt(a)) / (6 n^2 p)
 *   z  = t_RTO (1 + 32 p^2) / (1 - p)
 *   q  = min(2 j b z / (R (1 + 3 n / j) x^2),  n z / (x R),  n)
 *   X  = ((1 - q/n) / (p x R) + q / (z (1 - p))) s        bytes/s
 *
 * af is the expected number of the n flows that one loss event affects if
 * each lost packet belongs to any flow with the same probability (the
 * paper's refinement of "one flow per lost packet"; a fraction of a flow
 * counts as a whole one, hence ceil(n)), x the number of rounds between
 * loss events and q the number of flows in a timeout.  For n = 1, af = 1
 * and the first term is TFRC's 1 / (R sqrt(2 b p / 3)).  At high p and
 * small n, q reaches n and the rate is n / (t_RTO (1 + 32 p^2)) packets
 * per second: that is the equation, not an overflow.
 *
 * Over the range the module accepts (n from 0.1 to 100, p from below 1e-5
 * to almost 1, RTTs from microseconds to seconds) these quantities span
 * more orders of magnitude than one fixed-point scale holds in 64 bits
 * without overflow or a loss of precision.  So the computation uses a small
 * binary floating point of its own, a 32-bit mantissa and an exponent, with
 * multiply, divide, add, subtract and square root built from 64-bit integer
 * operations: about nine significant digits per step, no overflow, and no
 * division by zero, since every divisor is a product of positive inputs.
 * It runs once per loss event or RTT, not per packet.
 *
 * The module sends at the larger of this rate and, for n >= 1, that of n
 * independent flows, each at the loss event rate p af of its share of the
 * events (multfrc_eq_send_rate()).  One flow's rate there is the larger
 * of this equation's for n = 1 and RFC 5348's TCP equation, with which it
 * shares the first term:
 *
 *   X_tcp = s / (R sqrt(2 b p / 3) + t_RTO 3 sqrt(3 b p / 8) p (1 + 32 p^2))
 *
 * Their timeout terms differ.  From p of about 0.16 on (t_RTO = 4 R) the
 * paper's q reaches n and holds the flow in a timeout for good, about an
 * eighth of a segment per RTT; RFC 5348's keeps half a segment per RTT at
 * p = 0.2.  Linux's Reno kept 0.86 at 15 % random loss.
 */

#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/math.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#endif
#include "tcp_multfrc_eq.h"

/* value = m * 2^e, with m == 0 or 2^31 <= m < 2^32 */
struct mfx {
	u64 m;
	int e;
};

/* Far below anything the equation can produce: flush to zero. */
#define MFX_E_MIN	(-4000)

static struct mfx mfx(u64 m, int e)
{
	struct mfx r = { 0, 0 };
	int sh;

	if (!m)
		return r;
	sh = fls64(m) - 32;
	r.m = sh > 0 ? m >> sh : m << -sh;
	r.e = e + sh;
	if (r.e < MFX_E_MIN) {
		r.m = 0;
		r.e = 0;
	}
	return r;
}

static struct mfx mfx_mul(struct mfx a, struct mfx b)
{
	return mfx(a.m * b.m, a.e + b.e);
}

/* b must not be zero: callers divide by products of positive inputs. */
static struct mfx mfx_div(struct mfx a, struct mfx b)
{
	return mfx(div64_u64(a.m << 32, b.m), a.e - b.e - 32);
}

static struct mfx mfx_ratio(u64 num, u64 den)
{
	return mfx_div(mfx(num, 0), mfx(den, 0));
}

static int mfx_cmp(struct mfx a, struct mfx b)
{
	if (!a.m || !b.m)
		return (a.m != 0) - (b.m != 0);
	if (a.e != b.e)
		return a.e > b.e ? 1 : -1;
	return (a.m > b.m) - (a.m < b.m);
}

/* Align two values on 62-bit mantissas with the larger exponent. */
static void mfx_align(struct mfx *a, struct mfx *b, u64 *ma, u64 *mb, int *e)
{
	int d;

	*e = max(a->e, b->e) - 30;
	d = a->e - *e;
	*ma = a->m ? a->m << d : 0;
	d = *e - b->e;
	*mb = !b->m || d >= 64 ? 0 : d >= 0 ? b->m >> d : b->m << -d;
}

static struct mfx mfx_add(struct mfx a, struct mfx b)
{
	u64 ma, mb;
	int e;

	if (!a.m)
		return b;
	if (!b.m)
		return a;
	if (a.e < b.e)
		swap(a, b);
	mfx_align(&a, &b, &ma, &mb, &e);
	return mfx(ma + mb, e);
}

/* a - b, or zero if b >= a */
static struct mfx mfx_sub(struct mfx a, struct mfx b)
{
	u64 ma, mb;
	int e;

	if (mfx_cmp(a, b) <= 0)
		return mfx(0, 0);
	if (!b.m)
		return a;
	mfx_align(&a, &b, &ma, &mb, &e);
	return mfx(ma - mb, e);
}

static struct mfx mfx_abs_diff(struct mfx a, struct mfx b)
{
	return mfx_cmp(a, b) >= 0 ? mfx_sub(a, b) : mfx_sub(b, a);
}

static struct mfx mfx_min(struct mfx a, struct mfx b)
{
	return mfx_cmp(a, b) <= 0 ? a : b;
}

static struct mfx mfx_max(struct mfx a, struct mfx b)
{
	return mfx_cmp(a, b) >= 0 ? a : b;
}

static struct mfx mfx_sqrt(struct mfx a)
{
	u64 m;
	int e;

	if (!a.m)
		return a;
	/* 62 or 63 significant bits in, 31 or 32 out; an even exponent. */
	m = a.m << 30;
	e = a.e - 30;
	if (e & 1) {
		m <<= 1;
		e--;
	}
	return mfx(int_sqrt64(m), e / 2);
}

static u64 mfx_to_u64(struct mfx a)
{
	if (!a.m || a.e <= -64)
		return 0;
	if (a.e >= 32)
		return U64_MAX;
	if (a.e >= 0)
		return a.m << a.e;
	return (a.m + (1ULL << (-a.e - 1))) >> -a.e;	/* to nearest */
}

/* base^(j/1000) for 0 <= base < 1: the integer part by squaring, the
 * fraction, in steps of 2^-16, from the square-root chain base^(2^-k).
 */
static struct mfx mfx_pow_milli(struct mfx base, u32 j_milli)
{
	u32 whole = j_milli / 1000, frac;
	struct mfx r = mfx(1, 0), b = base;
	int k;

	for (; whole && r.m; whole >>= 1) {
		if (whole & 1)
			r = mfx_mul(r, b);
		b = mfx_mul(b, b);
	}
	frac = ((j_milli % 1000) << 16) / 1000;
	for (b = base, k = 15; k >= 0 && frac && r.m; k--) {
		b = mfx_sqrt(b);
		if (frac & (1U << k))
			r = mfx_mul(r, b);
	}
	return r;
}

/* af, the flows one loss event hits: n (1 - (1 - 1/n)^j) if n < 12,
 * else j; between 1 and ceil(n), and exactly 1 for n <= 1.
 */
static struct mfx mfx_af(const struct multfrc_eq_in *in)
{
	u32 n_ceil = DIV_ROUND_UP(in->n_milli, 1000);
	struct mfx one = mfx(1, 0), af, t;

	if (n_ceil <= 1)
		return one;
	if (in->n_milli < 12000) {
		t = mfx_ratio(in->n_milli - 1000, in->n_milli);
		t = mfx_pow_milli(t, in->j_milli);
		af = mfx_mul(mfx_ratio(in->n_milli, 1000), mfx_sub(one, t));
	} else {
		af = mfx_ratio(in->j_milli, 1000);
	}
	return mfx_max(mfx_min(af, mfx(n_ceil, 0)), one);
}

/**
 * multfrc_eq_rate - the MulTFRC equation
 * @in: n, p, j, RTT, RTO, segment size and b (see struct multfrc_eq_in)
 *
 * Return: the rate of n TCP flows in bytes per second (saturating at
 * U64_MAX), or 0 if an input is outside its range.
 */
u64 multfrc_eq_rate(const struct multfrc_eq_in *in)
{
	struct mfx n, p, j, b, r, rto, af, two_af, pbaf, a, x, z, q, one, t;
	struct mfx one_p;

	if (in->n_milli < MULTFRC_N_MIN || in->n_milli > MULTFRC_N_MAX ||
	    !in->p || in->j_milli < 1000 || !in->rtt_us || !in->rto_us ||
	    !in->mss || !in->b)
		return 0;

	one = mfx(1, 0);
	n = mfx_ratio(in->n_milli, 1000);
	p = mfx(in->p, -32);
	one_p = mfx(MULTFRC_P_ONE - in->p, -32);
	j = mfx_ratio(in->j_milli, 1000);
	b = mfx(in->b, 0);
	r = mfx_ratio(in->rtt_us, USEC_PER_SEC);
	rto = mfx_ratio(in->rto_us, USEC_PER_SEC);

	af = mfx_af(in);
	two_af = mfx_mul(af, mfx(2, 0));

	/* x = (af p b (2 af - n) + sqrt(a)) / (6 n^2 p), where
	 * a = p b af (24 n^2 + p b af (n - 2 af)^2) > (p b af (n - 2 af))^2,
	 * so that the numerator is positive when 2 af < n too.
	 */
	pbaf = mfx_mul(mfx_mul(p, b), af);
	t = mfx_abs_diff(n, two_af);
	a = mfx_mul(pbaf, mfx_mul(t, t));
	a = mfx_add(mfx_mul(mfx(24, 0), mfx_mul(n, n)), a);
	a = mfx_sqrt(mfx_mul(pbaf, a));
	t = mfx_mul(pbaf, t);
	x = mfx_cmp(two_af, n) >= 0 ? mfx_add(a, t) : mfx_sub(a, t);
	x = mfx_div(x, mfx_mul(mfx(6, 0), mfx_mul(mfx_mul(n, n), p)));
	if (!x.m)
		return 0;

	/* z = t_RTO (1 + 32 p^2) / (1 - p) */
	t = mfx_add(one, mfx_mul(mfx(32, 0), mfx_mul(p, p)));
	z = mfx_div(mfx_mul(rto, t), one_p);

	/* q = min(2 j b z / (R (1 + 3 n / j) x^2), n z / (x R), n) */
	t = mfx_add(one, mfx_div(mfx_mul(mfx(3, 0), n), j));
	t = mfx_mul(mfx_mul(r, t), mfx_mul(x, x));
	q = mfx_div(mfx_mul(mfx_mul(mfx(2, 0), j), mfx_mul(b, z)), t);
	q = mfx_min(q, mfx_div(mfx_mul(n, z), mfx_mul(x, r)));
	q = mfx_min(q, n);

	/* X = ((1 - q/n) / (p x R) + q / (z (1 - p))) s */
	a = mfx_div(mfx_sub(one, mfx_div(q, n)), mfx_mul(mfx_mul(p, x), r));
	a = mfx_add(a, mfx_div(q, mfx_mul(z, one_p)));
	return mfx_to_u64(mfx_mul(a, mfx(in->mss, 0)));
}

/**
 * multfrc_eq_tcp_rate - RFC 5348's TCP throughput equation
 * @in: p, RTT, RTO, segment size and b; n and j are not used
 *
 * Return: bytes per second, or 0 if an input is outside its range.
 */
u64 multfrc_eq_tcp_rate(const struct multfrc_eq_in *in)
{
	struct mfx p, bp, r, rto, one, d, t;

	if (!in->p || !in->rtt_us || !in->rto_us || !in->mss || !in->b)
		return 0;

	one = mfx(1, 0);
	p = mfx(in->p, -32);
	bp = mfx_mul(mfx(in->b, 0), p);
	r = mfx_ratio(in->rtt_us, USEC_PER_SEC);
	rto = mfx_ratio(in->rto_us, USEC_PER_SEC);

	/* R sqrt(2 b p / 3) + t_RTO 3 sqrt(3 b p / 8) p (1 + 32 p^2) */
	d = mfx_mul(r, mfx_sqrt(mfx_div(mfx_mul(mfx(2, 0), bp), mfx(3, 0))));
	t = mfx_mul(mfx(3, 0),
		    mfx_sqrt(mfx_div(mfx_mul(mfx(3, 0), bp), mfx(8, 0))));
	t = mfx_mul(mfx_mul(rto, t), p);
	t = mfx_mul(t, mfx_add(one, mfx_mul(mfx(32, 0), mfx_mul(p, p))));
	return mfx_to_u64(mfx_div(mfx(in->mss, 0), mfx_add(d, t)));
}

/**
 * multfrc_eq_flows_rate - n independent TCP flows, each with its share of
 *	the loss events
 * @in: as for multfrc_eq_rate()
 *
 * When a loss event hits af of n flows, each flow sees p af loss events
 * per packet of its own.  n flows that each send at one flow's rate at
 * that loss event rate send n times it; one flow's rate is the larger of
 * the equation's for n = 1 and RFC 5348's (multfrc_eq_tcp_rate()).
 *
 * Return: bytes per second, or 0 if an input is outside its range.
 */
u64 multfrc_eq_flows_rate(const struct multfrc_eq_in *in)
{
	struct multfrc_eq_in one = *in;
	u64 p_af, rate;

	if (in->n_milli < MULTFRC_N_MIN || in->n_milli > MULTFRC_N_MAX ||
	    !in->p || in->j_milli < 1000)
		return 0;
	p_af = mfx_to_u64(mfx_mul(mfx(in->p, 0), mfx_af(in)));
	one.n_milli = 1000;
	one.j_milli = 1000;
	one.p = p_af < MULTFRC_P_ONE ? (u32)p_af : U32_MAX;
	rate = max(multfrc_eq_rate(&one), multfrc_eq_tcp_rate(&one));
	if (rate > div64_u64(U64_MAX, in->n_milli))
		return U64_MAX;
	return div64_u64(rate * in->n_milli, 1000);
}

/**
 * multfrc_eq_send_rate - the rate MulTFRC sends at
 * @in: as for multfrc_eq_rate()
 *
 * The equation's rate, and for n >= 1 at least that of n independent
 * flows (multfrc_eq_flows_rate()).  Where loss is heavy, the paper's
 * n-flow timeout term puts more of the n flows in a timeout than n
 * independent flows would be (q grows per flow as n / (1 + 3 n) instead
 * of staying one flow's), and its rate falls about sevenfold within a few
 * points of p (at p near 0.13 where one flow's falls near 0.17, j = 1,
 * t_RTO = 4 R); n TCP flows of Linux, which keep their own windows and
 * repair most losses without a timeout, take about n times one flow's
 * rate there.  At 2 % loss and less the two agree within 13 % (j up to
 * 3).  For n = 1 (where j is 1) this is the larger of the equation's
 * rate and RFC 5348's; for n < 1 it is the equation's.
 *
 * Return: bytes per second, or 0 if an input is outside its range.
 */
u64 multfrc_eq_send_rate(const struct multfrc_eq_in *in)
{
	u64 rate = multfrc_eq_rate(in);

	if (in->n_milli < 1000 || !rate)
		return rate;
	return max(rate, multfrc_eq_flows_rate(in));
}

/**
 * multfrc_eq_loss_rate - the loss event rate at which MulTFRC sends at
 *	a rate
 * @in: n, j, RTT, RTO, segment size and b; @in->p is ignored
 * @rate: bytes per second
 *
 * TFRC starts its loss history with the interval that would produce the
 * rate received before the first loss (RFC 5348, 6.3.1).  The rate falls
 * as p grows, so a binary search over p finds it.
 *
 * Return: p in units of 2^-32, 1..2^32 - 1.
 */
u32 multfrc_eq_loss_rate(const struct multfrc_eq_in *in, u64 rate)
{
	struct multfrc_eq_in t = *in;
	u32 lo = 1, hi = U32_MAX;

	while (lo < hi) {
		t.p = lo + (hi - lo) / 2;
		if (multfrc_eq_send_rate(&t) > rate)
			lo = t.p + 1;
		else
			hi = t.p;
	}
	return lo;
}

/**
 * multfrc_eq_loss_interval - the loss interval at which the equation gives
 *	a rate
 * @in: as for multfrc_eq_loss_rate()
 * @rate: bytes per second
 *
 * The first loss interval of a connection (RFC 5348, 6.3.1): 1 / p.  A
 * rate that even the smallest p, 2^-32, does not reach gives the longest
 * interval a u32 holds (1 / p would be 2^32).
 *
 * Return: packets, 1..U32_MAX.
 */
u32 multfrc_eq_loss_interval(const struct multfrc_eq_in *in, u64 rate)
{
	u64 i = div64_u64(MULTFRC_P_ONE, multfrc_eq_loss_rate(in, rate));

	return i > U32_MAX ? U32_MAX : (u32)i;
}

/**
 * multfrc_eq_cwnd - the congestion window that goes with a rate
 * @rate: bytes per second
 * @rtt_us: round-trip time
 * @mss: segment size in bytes, > 0
 * @lo: smallest window
 * @hi: largest window, >= @lo
 *
 * Two rate-RTTs of segments, so that pacing, not the window, limits
 * sending.  A rate whose 2 x rate x RTT exceeds 64 bits gets @hi.
 *
 * Return: the window in segments, from @lo to @hi.
 */
u32 multfrc_eq_cwnd(u64 rate, u32 rtt_us, u32 mss, u32 lo, u32 hi)
{
	u64 cwnd;

	if (rtt_us && rate > div64_u64(U64_MAX / 2, rtt_us))
		return hi;
	cwnd = div64_u64(2 * rate * rtt_us, (u64)mss * USEC_PER_SEC);
	if (cwnd < lo)
		cwnd = lo;
	return cwnd > hi ? hi : (u32)cwnd;
}
