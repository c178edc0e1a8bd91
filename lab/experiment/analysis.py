# SPDX-License-Identifier: GPL-2.0
"""Metrics from a run's directory: per flow (flow_metrics), per run
(run_metrics, aggregate_metrics, sink_metrics, equation_metrics), over
repetitions (combine_repetitions), and looking them up in the result set
(lookup).  The metrics themselves are lab.metrics'."""

import contextlib
import csv
import fnmatch
import math
import os

from lab import metrics, transports
from lab.experiment.spec import flow_warmup, is_number
from lab.reports import load_json


def _bytes(iv, hdr=0):
    """An interval's bytes; with hdr, each UDP datagram's headers too
    (the experiment's header_bytes: sizes on the wire, as ns-2 counts
    them)."""
    return iv["bytes"] + hdr * iv.get("packets", 0)


def wire_header(exp, flow):
    return exp.get("header_bytes", 0) \
        if transports.datagrams(flow["transport"]) else 0


def rate_series(report, t0, bin_s=1.0, hdr=0):
    """(times, bit/s) of a report on the run's time axis, in bins of
    bin_s seconds (the report's own intervals summed)."""
    if not report or not report.get("intervals"):
        return [], []
    off = report["epoch"] - t0
    bins = {}
    for iv in report["intervals"]:
        b = math.floor((off + iv["start"]) / bin_s)
        bins[b] = bins.get(b, 0) + _bytes(iv, hdr)
    lo, hi = min(bins), max(bins)
    times = [b * bin_s for b in range(lo, hi + 1)]
    return times, [bins.get(b, 0) * 8 / bin_s for b in range(lo, hi + 1)]


def seq_trace(path, rcv, t0):
    """A receiver's sequence trace (flowgen -S) on the run's time axis:
    [(time, stream offset after the record, record type)].  The trace's
    times count from the receiver's epoch."""
    out = []
    try:
        with open(path) as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return out
    off = (rcv["epoch"] - t0) if rcv else 0.0
    for row in rows:
        try:
            out.append((off + float(row["time"]),
                        int(row["stream_off"]) + int(row["len"]),
                        row["type"]))
        except (KeyError, TypeError, ValueError):
            continue
    return out


def _throughput_metrics(exp, info, flow, rcv):
    """Throughput at the receiver after the warm-up, and over whole
    seconds of the flow's life its last third (steady), the time to 90 %
    of that and the smoothness after the first third."""
    warmup = flow_warmup(info["run"], flow)
    t0, active = info["t0"], flow["stop"] - flow["start"] - warmup
    hdr = wire_header(exp, flow)
    m = {"throughput_kbps": 0.0}
    if rcv:
        # What arrived while the flow was on, after its warm-up: not what
        # drains from the send buffer after the sender stopped writing.
        off = rcv["epoch"] - t0
        got = sum(_bytes(iv, hdr) for iv in rcv["intervals"]
                  if flow["start"] + warmup <= off + iv["start"]
                  < flow["stop"])
        m["throughput_kbps"] = got * 8 / active / 1e3
    times, rates = rate_series(rcv, t0, hdr=hdr)
    # Whole seconds inside the flow's life only.
    pairs = [(t, r) for t, r in zip(times, rates)
             if flow["start"] <= t and t + 1 <= flow["stop"]]
    if len(pairs) >= 3:
        ts, rs = zip(*pairs)
        tail = rs[-max(1, len(rs) // 3):]
        steady = sum(tail) / len(tail)
        m["steady_kbps"] = steady / 1e3
        if steady > 0:
            ttm = metrics.time_to_capacity(ts, rs, steady, 0.9, 5.0)
            m["time_to_max_s"] = None if ttm is None \
                else round(ttm - flow["start"], 1)
            try:
                m["cov"] = metrics.cov(rs[len(rs) // 3:])
            except ValueError:
                pass
    return m


def _tcp_info_metrics(snd, base_rtt):
    """A TCP or TLTCP sender's TCP_INFO samples: retransmitted share,
    mean RTT, one-way delay and jitter."""
    m = {}
    ivs = [iv for iv in snd["intervals"] if iv.get("rtt_us")]
    if ivs:
        last = ivs[-1]
        if last.get("segs_out"):
            m["loss_pct"] = 100 * last["retransmits"] / last["segs_out"]
        rtts = [iv["rtt_us"] / 1e3 for iv in ivs]
        m["rtt_ms"] = sum(rtts) / len(rtts)
        # One-way delay of the data: the RTT less the return path's
        # propagation (ACKs queue nowhere on these paths).
        m["delay_ms"] = m["rtt_ms"] - base_rtt * 1e3 / 2
        if len(rtts) > 1:
            m["jitter_ms"] = sum(abs(a - b) for a, b in
                                 zip(rtts, rtts[1:])) / (len(rtts) - 1)
    return m


def _section_metrics(s, o):
    """A deadline workload's sections, from the receiver's summary s and
    the sender's o."""
    m = {}
    if o.get("bytes_offered"):
        m["on_time_pct"] = 100 * s["on_time_bytes"] / o["bytes_offered"]
    m["sections_missing"] = s["sections_missing"]
    if "abandoned_unsent" in o:
        m["abandoned"] = o["abandoned_unsent"] + o["abandoned_sent"]
    m.update(_deadline_metrics(s, o))
    return m


def _tltcp_metrics(tl, rcv):
    """What the TLTCP module reported (tl, the sender's TL_INFO)."""
    m = {"abandoned_bytes": tl["bytes_abandoned"],
         "obsolete_bytes": tl["bytes_obsolete_late"] +
         tl["bytes_obsolete_retrans"]}
    if rcv and "gap_bytes" in rcv["summary"]:
        # Abandoned bytes the receiver was not told of: 0 when the
        # sender's queue drained before it closed.
        m["unreported_bytes"] = tl["bytes_abandoned"] - \
            rcv["summary"]["gap_bytes"]
    return m


def _udp_metrics(s):
    """A UDP receiver's summary s: loss, its own drops, one-way delay."""
    return {"loss_pct": 100 * s["lost"] / (s["lost"] + s["packets"]),
            # Of them, what the receiver's own full socket buffer dropped.
            "rcvbuf_drops": s.get("rcvbuf_drops", 0),
            "delay_ms": s["mean_one_way_delay"] * 1e3}


def flow_metrics(exp, info, flow, d):
    """What the papers report for one flow (receiver-side throughput)."""
    rcv = load_json(os.path.join(d, f"{flow['name']}.rcv.json"))
    snd = load_json(os.path.join(d, f"{flow['name']}.snd.json"))
    m = _throughput_metrics(exp, info, flow, rcv)
    if snd and transports.tcp_like(flow["transport"]):
        m.update(_tcp_info_metrics(
            snd, info["topology"]["info"].get("rtt", 0)))
    if snd and transports.tfrc(flow["transport"]) and rcv:
        m.update(_tfrc_metrics(exp, flow, snd, rcv, info["t0"]))
    if rcv and snd and "sections" in rcv["summary"]:
        m.update(_section_metrics(rcv["summary"], snd["summary"]))
    if snd and "tltcp" in snd["summary"]:
        m.update(_tltcp_metrics(snd["summary"]["tltcp"], rcv))
    if rcv and transports.datagrams(flow["transport"]) and \
            rcv["summary"].get("packets"):
        m.update(_udp_metrics(rcv["summary"]))
    m.update(_tunnel_metrics(d, flow))
    return m


def _tunnel_metrics(d, flow):
    """A tunnelled flow: the share of the datagrams its tunnel's client
    took in from the application that it dropped (a full queue, no
    connection, too long in the queue), and the datagrams its server
    delivered, from their statistics (tools/tsm: counts are
    {"datagrams": n, "bytes": n})."""
    cl = load_json(os.path.join(d, f"{flow['name']}.tun-client.json"))
    sv = load_json(os.path.join(d, f"{flow['name']}.tun-server.json"))
    m = {}
    got = (cl or {}).get("from_app", {}).get("datagrams")
    if got:
        dropped = sum(v.get("datagrams", 0) for k, v in cl.items()
                      if k.startswith("dropped") and isinstance(v, dict))
        m["tunnel_drop_pct"] = 100 * dropped / got
    if sv and "delivered" in sv:
        m["tunnel_delivered"] = sv["delivered"].get("datagrams", 0)
    return m


def sink_metrics(exp, run, flows, info, d):
    """The flows into each receiver node d<pair> taken as one: the
    middleware paper's throughput at the sinks and mean one-way delay per
    branch.  d<p>_kbps (their throughputs summed), d<p>_delay_s (mean
    one-way delay of every datagram that arrived), d<p>_loss_pct,
    d<p>_peak_kbps and d<p>_peak_s (the largest 1 s throughput and when),
    d<p>_end_kbps (the mean over the last third of the run), and
    end_kbps (every sink's, summed)."""
    m, t0 = {}, info["t0"]
    lo_end = run["duration"] * 2 / 3
    end_total = 0.0
    for p in sorted({f["pair"] for f in run["flows"]}):
        fl = [f for f in run["flows"] if f["pair"] == p]
        m[f"d{p}_kbps"] = sum(flows[f["name"]]["throughput_kbps"]
                              for f in fl)
        total, pkts, owd, lost = {}, 0, 0.0, 0
        for f in fl:
            rcv = load_json(os.path.join(d, f"{f['name']}.rcv.json"))
            for t, r in zip(*rate_series(rcv, t0, hdr=wire_header(exp, f))):
                total[t] = total.get(t, 0.0) + r
            s = (rcv or {}).get("summary", {})
            if s.get("packets"):
                pkts += s["packets"]
                owd += s["mean_one_way_delay"] * s["packets"]
                lost += s["lost"]
        if pkts:
            m[f"d{p}_delay_s"] = owd / pkts
            m[f"d{p}_loss_pct"] = 100 * lost / (lost + pkts)
        start = min(f["start"] for f in fl)
        stop = max(f["stop"] for f in fl)
        inside = {t: r for t, r in total.items()
                  if start <= t and t + 1 <= stop}
        if inside:
            peak = max(inside, key=inside.get)
            m[f"d{p}_peak_kbps"] = inside[peak] / 1e3
            m[f"d{p}_peak_s"] = peak
        # The last third: zero where nothing arrived.
        bins = range(math.ceil(lo_end), math.floor(run["duration"]))
        if bins:
            end = sum(total.get(t, 0.0) for t in bins) / len(bins) / 1e3
            m[f"d{p}_end_kbps"] = end
            end_total += end
    m["end_kbps"] = end_total
    return m


def _deadline_metrics(s, o):
    """Sections, over the whole flow: bytes offered, delivered on time,
    late, reported as gaps (TLTCP), and never delivered at all (abandoned
    or lost)."""
    m = {"on_time_bytes": s["on_time_bytes"]}
    if "late_bytes" in s:
        m["late_bytes"] = s["late_bytes"]
        # What the path carried for the application, in time or not: for
        # a flow that sends everything (TCP), what the path can carry.
        m["delivered_bytes"] = s["on_time_bytes"] + s["late_bytes"]
    if "gap_bytes" in s:
        m["gap_bytes"] = s["gap_bytes"]
    if o.get("bytes_offered") and "late_bytes" in s:
        m["undelivered_bytes"] = max(0, o["bytes_offered"] -
                                     s["on_time_bytes"] - s["late_bytes"])
    return m


def _tfrc_metrics(exp, flow, snd, rcv, t0):
    """DCP paper: F = T_calculated / T_actual over windows of
    `dcp_window` seconds; T_calculated from the sender's RTT and loss
    event rate, T_actual the packets the receiver got."""
    ivs = [iv for iv in snd["intervals"] if "p" in iv]
    if not ivs:
        return {}
    win = float(exp.get("dcp_window", 6))
    size = flow.get("len", 1000)
    soff, roff = snd["epoch"] - t0, rcv["epoch"] - t0
    fs, out = [], {}
    k = 0
    while True:
        lo = flow["start"] + k * win
        hi = lo + win
        if hi > flow["stop"]:
            break
        k += 1
        w = [iv for iv in ivs if lo <= soff + iv["start"] < hi]
        got = sum(iv["bytes"] for iv in rcv["intervals"]
                  if lo <= roff + iv["start"] < hi)
        if not w or not got:
            continue
        p = sum(iv["p"] for iv in w) / len(w)
        rtt = sum(iv["rtt_us"] for iv in w) / len(w) / 1e6
        if p <= 0 or rtt <= 0:
            continue
        fs.append((lo, metrics.dcp_friendliness(rtt, p,
                                                got / size / win)))
    out["x_kbps"] = sum(iv["x"] for iv in ivs) / len(ivs) / 1e3
    out["p"] = sum(iv["p"] for iv in ivs) / len(ivs)
    if fs:
        out["dcp_f"] = sum(f for _, f in fs) / len(fs)
        out["dcp_f_windows"] = fs
    return out


def _weighted_flow_metrics(run, flows, ref):
    """The fairness matrix's per-run view of its flows (MulTFRC's
    experiment): the weighted flow's time to converge (to 90 % of its
    throughput in the last third, held 5 s) and its smoothness (CoV of
    its per-second throughput after the first third), beside the mean
    CoV of the reference flows, each taken alone."""
    m = {}
    mine = [flows[f["name"]] for f in run["flows"]
            if not any(fnmatch.fnmatch(f["name"], g) for g in ref)]
    theirs = [flows[f["name"]] for f in run["flows"]
              if any(fnmatch.fnmatch(f["name"], g) for g in ref)]
    if len(mine) == 1:
        for k, name in (("time_to_max_s", "converge_s"), ("cov", "cov")):
            if mine[0].get(k) is not None:
                m[name] = mine[0][k]
    covs = [f["cov"] for f in theirs if f.get("cov") is not None]
    if covs:
        m["reference_cov"] = sum(covs) / len(covs)
    return m


def run_metrics(run, flows, info):
    m = {}
    tps = {f["name"]: flows[f["name"]]["throughput_kbps"]
           for f in run["flows"]}
    rate = info["topology"]["info"].get("rate")
    if rate:
        m["utilisation"] = sum(tps.values()) * 1e3 / rate
    if len(tps) > 1 and any(tps.values()):
        m["jain"] = metrics.jain(tps.values())
        with contextlib.suppress(ValueError):
            m["separation"] = metrics.separation(tps.values())
    if run.get("baseline") and len(tps) > 1:
        # TLTCP paper, all-TCP baseline: F_worst and F_best (S_TCP is
        # the separation above).
        with contextlib.suppress(ValueError):
            m["f_worst"] = metrics.f_worst(tps.values())
            m["f_best"] = metrics.f_best(tps.values())
    ref = run.get("reference")
    if ref:
        tcp = [v for k, v in tps.items()
               if any(fnmatch.fnmatch(k, g) for g in ref)]
        other = [v for k, v in tps.items()
                 if not any(fnmatch.fnmatch(k, g) for g in ref)]
        if tcp and other:
            try:
                m["friendliness"] = metrics.friendliness(other, tcp)
            except ValueError:
                pass
            # The same in packets per second, where the flows' packets
            # differ in size (DCCP's 1000 bytes beside TCP's 1448):
            # TFRC's equation gives packets per second.
            size = {f["name"]: transports.payload(f) for f in run["flows"]}
            if all(size.values()) and len(set(size.values())) > 1:
                pkts = {k: v / size[k] for k, v in tps.items()}
                with contextlib.suppress(ValueError):
                    m["friendliness_pkts"] = metrics.friendliness(
                        [v for k, v in pkts.items()
                         if not any(fnmatch.fnmatch(k, g) for g in ref)],
                        [v for k, v in pkts.items()
                         if any(fnmatch.fnmatch(k, g) for g in ref)])
            m["reference_kbps"] = sum(tcp) / len(tcp)
            m["others_kbps"] = sum(other) / len(other)
            if run.get("weight"):
                # MulTFRC: the others' mean / (n x the reference mean).
                with contextlib.suppress(ValueError):
                    m["normalized"] = metrics.normalized_throughput(
                        m["others_kbps"], float(run["weight"]), tcp)
                m.update(_weighted_flow_metrics(run, flows, ref))
    return m


# Seconds of each loss phase that the smoothness metric leaves out: the
# change of rate that follows a step is responsiveness, not jitter.
SETTLE = 2.0
# Bins of the aggregate's smoothness (seconds).
COV_BIN = 0.5


def aggregate_metrics(exp, run, flows, info, d):
    """The run's flows taken as one: throughput (agg_kbps) and the
    coefficient of variation of its COV_BIN-second throughput
    (agg_cov), the mean over the loss phases that loss_steps make (one
    phase without), each after its first SETTLE seconds (the first
    after the warm-up); with loss_steps also the mean throughput and the
    coefficient of variation in each phase (agg_kbps_1, agg_cov_1,
    agg_kbps_2, ...).  With "equation", the MulTFRC equation for the
    flows as n parallel TCP flows, fed what they measured."""
    m = {"agg_kbps": sum(f["throughput_kbps"] for f in flows.values())}
    t0, total = info["t0"], {}
    for f in run["flows"]:
        rcv = load_json(os.path.join(d, f"{f['name']}.rcv.json"))
        for t, r in zip(*rate_series(rcv, t0, COV_BIN, wire_header(exp, f))):
            total[t] = total.get(t, 0.0) + r
    start = min(f["start"] for f in run["flows"]) + run.get("warmup", 0)
    stop = min(f["stop"] for f in run["flows"])
    cuts = [start] + [at + SETTLE for at, _ in run.get("loss_steps", [])
                      if at + SETTLE > start] + [stop]
    covs = []
    for k, (lo, hi) in enumerate(zip(cuts, cuts[1:]), 1):
        xs = [r for t, r in total.items() if lo <= t and t + COV_BIN <= hi
              and not any(at <= t < at + SETTLE
                          for at, _ in run.get("loss_steps", []))]
        if run.get("loss_steps") and xs:
            # Responsiveness: the aggregate's mean in each loss phase.
            m[f"agg_kbps_{k}"] = sum(xs) / len(xs) / 1e3
        if len(xs) >= 3:
            with contextlib.suppress(ValueError):
                covs.append(metrics.cov(xs))
                if run.get("loss_steps"):
                    # Smoothness under each loss rate on its own: the
                    # mean mixes a steady phase with one of timeouts.
                    m[f"agg_cov_{k}"] = covs[-1]
    if covs:
        m["agg_cov"] = sum(covs) / len(covs)
    if run.get("equation"):
        m.update(equation_metrics(run, info, d))
    return m


def equation_metrics(run, info, d):
    """The paper's Fig. 1-2: n parallel TCP flows' aggregate against the
    MulTFRC equation fed with what they measured after the warm-up: the
    loss rate p_r (retransmitted / sent segments, TCP_INFO), the loss
    event rate p_e of the aggregate (retransmissions within one mean RTT
    of an event's first are one event; the senders' samples, every
    report interval, are the time resolution), j = p_r / p_e (losses per
    event, as the paper's [5] approximates it), the mean smoothed RTT,
    and Linux's RTO, srtt + max(4 rttvar, 200 ms).  Keys: eq_kbps,
    eq_ratio (equation / measured), p_e, p_r, j, eq_rtt_ms."""
    samples, sent, rtts, rttvars, seg = [], 0, [], [], []
    t0, warm = info["t0"], run.get("warmup", 0)
    for f in run["flows"]:
        snd = load_json(os.path.join(d, f"{f['name']}.snd.json"))
        if not snd:
            continue
        off = snd["epoch"] - t0
        # Intervals without a TCP_INFO sample carry zeros: skip them.
        ivs = [iv for iv in snd["intervals"] if iv.get("rtt_us")
               and off + iv["start"] + iv["seconds"] >= f["start"] + warm
               and off + iv["start"] < f["stop"]]
        for a, b in zip(ivs, ivs[1:]):
            samples.append((off + b["start"] + b["seconds"],
                            b["retransmits"] - a["retransmits"]))
            sent += b["segs_out"] - a["segs_out"]
        rtts += [iv["rtt_us"] / 1e6 for iv in ivs]
        rttvars += [iv.get("rttvar_us", 0) / 1e6 for iv in ivs]
        seg.append(f.get("mss", 1448))
    if not rtts or sent <= 0:
        return {}
    rtt = sum(rtts) / len(rtts)
    rto = rtt + max(4 * sum(rttvars) / len(rttvars), 0.2)
    events, lost = metrics.loss_events(sorted(samples), rtt)
    m = {"eq_rtt_ms": rtt * 1e3, "p_r": lost / sent, "p_e": events / sent}
    if not events or m["p_e"] >= 1:
        return m
    m["j"] = lost / events
    n = len(run["flows"])
    x = metrics.multfrc_rate(n, m["p_e"], m["j"], rtt, rto,
                             s=sum(seg) / len(seg))
    m["eq_kbps"] = x * 8 / 1e3
    return m


def analyze_one(exp, run, d):
    """One run's (one repetition's) metrics from its directory d:
    {"flows", "run", "failed", "kernel"}, or None without a result."""
    info = load_json(os.path.join(d, "run.json"))
    if not info:
        return None
    flows = {f["name"]: flow_metrics(exp, info, f, d)
             for f in run["flows"]}
    rm = run_metrics(run, flows, info)
    rm.update(aggregate_metrics(exp, run, flows, info, d))
    if exp.get("sinks"):
        rm.update(sink_metrics(exp, run, flows, info, d))
    if rm.get("eq_kbps") and rm["agg_kbps"]:
        rm["eq_ratio"] = rm["eq_kbps"] / rm["agg_kbps"]
    return {"flows": flows, "run": rm,
            "failed": info["failed"], "kernel": info["kernel"]}


def _mean_ci(dicts):
    """Metrics of several repetitions taken as one: ({metric: the mean
    over the repetitions that have a number for it}, {metric: the
    half-width of its 95 % confidence interval, where two or more
    have}).  Other values (lists, None) are the first repetition's
    that has one."""
    means, hs = {}, {}
    for k in dict.fromkeys(k for m in dicts for k in m):
        xs = [m[k] for m in dicts if is_number(m.get(k))]
        if not xs:
            means[k] = next(m[k] for m in dicts if k in m)
            continue
        if len(xs) == 1:
            means[k] = xs[0]
            continue
        means[k], hs[k] = metrics.confidence_interval(xs)
    return means, hs


def combine_repetitions(run, reps):
    """A repeated run's result from its repetitions' (analyze_one, None
    for one without a result): "flows" and "run" hold the means, "ci"
    the half-widths of their 95 % confidence intervals (Student's t),
    "repetitions" each one's own, "n" how many had a result; a
    repetition that failed or left no result fails the run."""
    got = [r for r in reps if r]
    if not got:
        return {"missing": True}
    failed = []
    for k, r in enumerate(reps, 1):
        if r is None:
            failed.append(f"repetition {k}: no result")
        else:
            failed += [f"repetition {k}: {x}" for x in r["failed"]]
    flows, cflows = {}, {}
    for f in run["flows"]:
        flows[f["name"]], cflows[f["name"]] = _mean_ci(
            [r["flows"].get(f["name"], {}) for r in got])
    rm, crm = _mean_ci([r["run"] for r in got])
    return {"flows": flows, "run": rm, "ci": {"flows": cflows, "run": crm},
            "n": len(got), "failed": failed, "kernel": got[0]["kernel"],
            "repetitions": [r or {"missing": True} for r in reps]}


def lookup(res, run, flow, metric):
    r = res["runs"].get(run)
    if not r or r.get("missing"):
        return None
    src = r["flows"].get(flow) if flow else r["run"]
    return None if src is None else src.get(metric)


def lookup_ci(res, run, flow, metric):
    """The half-width of a repeated run's metric's 95 % confidence
    interval; None for a run that ran once."""
    r = res["runs"].get(run)
    if not r or "ci" not in r:
        return None
    src = r["ci"]["flows"].get(flow) if flow else r["ci"]["run"]
    return None if src is None else src.get(metric)
