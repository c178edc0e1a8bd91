# SPDX-License-Identifier: GPL-2.0
"""The metrics the papers report, defined once (Documentation/testing.rst).

Throughputs are any consistent unit (bit/s, packets/s); a flow's throughput
is what its receiver got.  Functions raise ValueError for input on which
the metric is undefined (no flows, a zero denominator) instead of returning
infinity or NaN.
"""

import math


def _mean(xs):
    xs = list(xs)
    if not xs:
        raise ValueError("mean of no values")
    return sum(xs) / len(xs)


def _ratio(num, den, what):
    if den <= 0:
        raise ValueError(f"{what}: denominator is {den}")
    return num / den


def friendliness(others, tcp):
    """F = mean throughput of the non-TCP flows / mean of the TCP flows
    (TLTCP and DCP papers); 1 is ideal, above 1 the others take more."""
    return _ratio(_mean(others), _mean(tcp), "friendliness")


def separation(flows):
    """S = largest / smallest flow throughput (TLTCP paper: S_MIX over a
    mixed run, S_TCP over an all-TCP baseline); 1 is ideal."""
    flows = list(flows)
    return _ratio(max(flows), min(flows), "separation")


def f_worst(flows):
    """All-TCP baseline, worst split (TLTCP paper): mean of the N/2 largest
    flows / mean of the N/2 smallest.  N must be even."""
    xs = sorted(flows)
    if not xs or len(xs) % 2:
        raise ValueError("F_worst needs an even, non-zero number of flows")
    half = len(xs) // 2
    return _ratio(_mean(xs[half:]), _mean(xs[:half]), "F_worst")


def f_best(flows):
    """All-TCP baseline, best split (TLTCP paper): flows sorted by
    throughput, odd-ranked against even-ranked; larger mean / smaller."""
    xs = sorted(flows)
    if not xs or len(xs) % 2:
        raise ValueError("F_best needs an even, non-zero number of flows")
    odd, even = _mean(xs[0::2]), _mean(xs[1::2])
    return _ratio(max(odd, even), min(odd, even), "F_best")


def tcp_model_rate(rtt, p, k=1.22):
    """The simple TCP model the DCP paper uses: T = 1.22 / (R * sqrt(p)),
    in packets per second for R in seconds."""
    if rtt <= 0 or p <= 0:
        raise ValueError("TCP model: RTT and loss rate must be positive")
    return k / (rtt * math.sqrt(p))


def dcp_friendliness(rtt, p, actual_pps):
    """DCP paper's single-flow friendliness F = T_calculated / T_actual,
    with T_calculated from tcp_model_rate(); 1 is ideal, above 1 the flow
    sends less than a TCP would on the same path."""
    return _ratio(tcp_model_rate(rtt, p), actual_pps, "DCP friendliness")


def multfrc_af(n, j):
    """Flows one loss event of j packets hits among n: n (1 - (1 -
    1/n)^j) below n = 12, j from there, between 1 and ceil(n); 1 for
    n <= 1 (where the power would be complex)."""
    af = n * (1 - (1 - 1 / n) ** j) if 1 < n < 12 else j
    return max(min(af, math.ceil(n)), 1)


def multfrc_rate(n, p, j, rtt, rto, s=1.0, b=1):
    """The MulTFRC equation in double precision (the paper's Algorithm 1
    as the design notes state it, with the refined j): the throughput of
    n parallel TCP flows that see loss event rate p, j packets lost per
    loss event, RTT rtt and RTO rto (seconds), in units of s per second
    (s = segment size: bytes/s).  The module computes the same in fixed
    point (net/ipv4/tcp_multfrc_eq.c)."""
    if n <= 0 or not 0 < p < 1 or j <= 0 or rtt <= 0 or rto <= 0:
        raise ValueError(f"multfrc_rate: n={n} p={p} j={j} rtt={rtt} "
                         f"rto={rto} out of the domain")
    af = multfrc_af(n, j)
    a = p * b * af * (24 * n * n + p * b * af * (n - 2 * af) ** 2)
    x = (af * p * b * (2 * af - n) + math.sqrt(a)) / (6 * n * n * p)
    z = rto * (1 + 32 * p * p) / (1 - p)
    q = min(2 * j * b * z / (rtt * (1 + 3 * n / j) * x * x),
            n * z / (x * rtt), n)
    return ((1 - q / n) / (p * x * rtt) + q / (z * (1 - p))) * s


def tcp_equation_rate(p, rtt, rto, s=1.0, b=1):
    """RFC 5348's TCP throughput equation, in units of s per second:
    s / (R sqrt(2bp/3) + t_RTO 3 sqrt(3bp/8) p (1 + 32 p^2))."""
    if not 0 < p < 1 or rtt <= 0 or rto <= 0:
        raise ValueError(f"tcp_equation_rate: p={p} rtt={rtt} rto={rto} "
                         f"out of the domain")
    return s / (rtt * math.sqrt(2 * b * p / 3) +
                rto * 3 * math.sqrt(3 * b * p / 8) * p * (1 + 32 * p * p))


def multfrc_send_rate(n, p, j, rtt, rto, s=1.0, b=1):
    """The rate the module sends at (multfrc_eq_send_rate() in
    net/ipv4/tcp_multfrc_eq.c): the equation's, and for n >= 1 at least
    that of n independent flows, each at the loss event rate p af that
    its share of the events gives it (af: the flows one event hits), one
    flow's rate the larger of the equation's for n = 1 and RFC 5348's."""
    x = multfrc_rate(n, p, j, rtt, rto, s, b)
    if n < 1:
        return x
    p_af = min(p * multfrc_af(n, j), 1 - 2 ** -32)
    one = max(multfrc_rate(1, p_af, 1, rtt, rto, s, b),
              tcp_equation_rate(p_af, rtt, rto, s, b))
    return max(x, n * one)


def loss_events(samples, rtt):
    """Loss events as TFRC counts them, from (time, packets lost) samples
    in time order: losses within one RTT of an event's first loss belong
    to it.  Returns (events, packets lost).  Samples are as fine as the
    measurement: losses reported together count as one event."""
    if rtt <= 0:
        raise ValueError("loss_events: RTT must be positive")
    events, lost, first = 0, 0, None
    for t, k in samples:
        if k <= 0:
            continue
        lost += k
        if first is None or t >= first + rtt:
            events += 1
            first = t
    return events, lost


def jain(flows):
    """Jain's fairness index (sum x)^2 / (n * sum x^2), in [1/n, 1]."""
    xs = list(flows)
    sq = sum(x * x for x in xs)
    if not xs or sq == 0:
        raise ValueError("Jain's index of no throughput")
    return sum(xs) ** 2 / (len(xs) * sq)


def normalized_throughput(flow, n, tcp):
    """MulTFRC paper: a MulTFRC(n) flow's throughput / (n x mean throughput
    of the competing TCP flows); 1 is ideal."""
    if n <= 0:
        raise ValueError("n must be positive")
    return _ratio(flow, n * _mean(tcp), "normalized throughput")


def cov(samples):
    """Coefficient of variation (population standard deviation / mean) of
    per-interval throughput: the smoothness metric; 0 is perfectly smooth."""
    xs = list(samples)
    m = _mean(xs)
    if m == 0:
        raise ValueError("coefficient of variation of a zero mean")
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs)) / m


# The 0.975 quantile of Student's t (a two-sided 95 % interval) for df
# degrees of freedom; between the entries above 30 the smaller df's.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447,
       7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179,
       13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101,
       19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
       25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042,
       40: 2.021, 60: 2.000, 120: 1.980}


def t95(df):
    """Student's t quantile of a two-sided 95 % interval: T95's entry for
    df, or for the next smaller df listed (a slightly wider interval);
    1.960, the normal's, beyond 120."""
    if df < 1:
        raise ValueError(f"t quantile for {df} degrees of freedom")
    if df > 120:
        return 1.960
    return T95[max(k for k in T95 if k <= df)]


def confidence_interval(samples):
    """(mean, h) of independent samples (repetitions of a run): h is the
    half-width of the mean's 95 % confidence interval, t95(n - 1) s /
    sqrt(n), s the sample standard deviation.  Needs two samples."""
    xs = list(samples)
    if len(xs) < 2:
        raise ValueError("a confidence interval needs two samples")
    m = _mean(xs)
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return m, t95(len(xs) - 1) * s / math.sqrt(len(xs))


def time_to_capacity(times, rates, capacity, share=0.9, hold=5.0):
    """Seconds until a flow first reaches share x capacity and holds it:
    the start of the first interval from which every sample up to `hold`
    seconds later (or to the end of the run) is at least that much.
    times[i] is when sample i starts.  None if it never does."""
    if len(times) != len(rates):
        raise ValueError("times and rates differ in length")
    goal = share * capacity
    for i, t in enumerate(times):
        if rates[i] < goal:
            continue
        if all(r >= goal for tt, r in zip(times[i:], rates[i:])
               if tt < t + hold):
            return t
    return None


def deadline_summary(sections):
    """Deadline workloads.  sections: dicts with 'size' (bytes offered),
    'on_time' (bytes delivered before the deadline) and optionally
    'abandoned' (bytes the sender abandoned unsent) and 'gaps' (sizes of
    the gaps the receiver was told of).  Returns the fraction of offered
    bytes delivered on time, bytes abandoned, the gap count and sizes."""
    sections = list(sections)
    offered = sum(s["size"] for s in sections)
    if offered <= 0:
        raise ValueError("no bytes offered")
    for s in sections:
        if not 0 <= s["on_time"] <= s["size"]:
            raise ValueError(f"section delivers {s['on_time']} of "
                             f"{s['size']} bytes on time")
    gaps = [g for s in sections for g in s.get("gaps", [])]
    return {
        "offered": offered,
        "on_time_fraction": sum(s["on_time"] for s in sections) / offered,
        "abandoned": sum(s.get("abandoned", 0) for s in sections),
        "gaps": len(gaps),
        "gap_bytes": sum(gaps),
        "largest_gap": max(gaps, default=0),
    }
