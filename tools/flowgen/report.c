// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen's report: the bytes and samples of each interval, and the JSON
 * report of the flow (-o FILE, default standard output).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "clock.h"
#include "flowgen.h"
#include "tltcp_msg.h"

struct interval *interval_at(struct results *r, uint64_t start_ns,
			     uint64_t t_ns, double len)
{
	int i = (int)((double)(t_ns - start_ns) / 1e9 / len);

	if (i >= MAX_INTERVALS)
		i = MAX_INTERVALS - 1;
	while (r->n_ivs <= i) {
		r->ivs[r->n_ivs].start = r->n_ivs * len;
		r->ivs[r->n_ivs].secs = len;
		r->n_ivs++;
	}
	return &r->ivs[i];
}

double epoch_of(uint64_t mono_ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9 - (now_ns() - mono_ns) / 1e9;
}

/* The module's counters, as a JSON object. */
static void report_tl_info(FILE *f, const struct results *r)
{
	fprintf(f, ", \"tltcp\": {\"sections_abandoned\": %llu",
		(unsigned long long)(r->tl_info.sections_abandoned_unsent +
				     r->tl_info.sections_abandoned_partial));
	tl_info_json_members(f, &r->tl_info, ", ", ", ");
	if (r->tl_drained >= 0)
		fprintf(f, ", \"drained\": %s", r->tl_drained ? "true" : "false");
	fputc('}', f);
}

/* The sums over a flow's intervals, and its last SCTP sample. */
struct totals {
	uint64_t bytes, pkts, lost;
	double owd;			/* seconds */
	const struct interval *sctp;
};

static void report_head(FILE *f, const struct opts *o, const char *role,
			double epoch, const char *cc)
{
	fprintf(f, "{\n \"tool\": \"flowgen\",\n \"role\": \"%s\",\n"
		" \"transport\": \"%s\",\n \"epoch\": %.6f,\n", role,
		proto_name[o->proto], epoch);
	if (cc)
		fprintf(f, " \"congestion\": \"%s\",\n", cc);
	if (o->proto == P_DCCP && !o->server)
		fprintf(f, " \"ccid\": %d,\n", o->ccid);
}

/* What the transport said in an interval, at the end that knows it. */
static void report_samples(FILE *f, const struct opts *o,
			   const struct interval *iv)
{
	if (IS_TCP(o->proto) && !o->server)
		fprintf(f, ", \"cwnd\": %u, \"ssthresh\": %u, "
			"\"rtt_us\": %u, \"rttvar_us\": %u, "
			"\"retransmits\": %u, \"segs_out\": %u",
			iv->cwnd, iv->ssthresh, iv->rtt_us,
			iv->rttvar_us, iv->retrans, iv->segs_out);
	if (o->proto == P_UDP && o->server)
		fprintf(f, ", \"packets\": %llu, \"lost\": %llu",
			(unsigned long long)iv->pkts,
			(unsigned long long)iv->lost);
	if (iv->tfrc)
		fprintf(f, ", \"x\": %.0f, \"x_recv\": %.0f, "
			"\"p\": %.6f, \"rtt_us\": %u", iv->x_bps,
			iv->x_recv_bps, iv->p, iv->rtt_us);
}

static void report_interval(FILE *f, const struct opts *o,
			    const struct interval *iv, bool first,
			    bool sections)
{
	fprintf(f, "%s\n  {\"start\": %.3f, \"seconds\": %.3f, "
		"\"bytes\": %llu, \"bits_per_second\": %.0f",
		first ? "" : ",", iv->start, iv->secs,
		(unsigned long long)iv->bytes, iv->bytes * 8.0 / iv->secs);
	report_samples(f, o, iv);
	if (sections && o->server)
		fprintf(f, ", \"on_time_bytes\": %llu",
			(unsigned long long)iv->on_time_bytes);
	if (o->proto == P_TLTCP && o->server)
		fprintf(f, ", \"gap_bytes\": %llu",
			(unsigned long long)iv->gap_bytes);
	if (iv->prsctp)
		fprintf(f, ", \"abandoned_unsent\": %llu, "
			"\"abandoned_sent\": %llu",
			(unsigned long long)iv->abandoned_unsent,
			(unsigned long long)iv->abandoned_sent);
	fputc('}', f);
}

static void report_intervals(FILE *f, const struct opts *o,
			     const struct results *r, bool sections,
			     struct totals *tot)
{
	int i;

	fprintf(f, " \"intervals\": [");
	for (i = 0; i < r->n_ivs; i++) {
		const struct interval *iv = &r->ivs[i];

		tot->bytes += iv->bytes;
		tot->pkts += iv->pkts;
		tot->lost += iv->lost;
		tot->owd += iv->owd_sum;
		if (iv->prsctp)
			tot->sctp = iv;
		report_interval(f, o, iv, !i, sections);
	}
}

/* The receiver's account of sections. */
static void report_sec_rx(FILE *f, const struct opts *o,
			  const struct sec_rx *rx)
{
	fprintf(f, ", \"sections\": %llu, \"sections_complete\": %llu, "
		"\"sections_on_time\": %llu, \"on_time_bytes\": %llu, "
		"\"late_bytes\": %llu, \"sections_missing\": %llu",
		(unsigned long long)rx->sections,
		(unsigned long long)rx->complete,
		(unsigned long long)rx->on_time,
		(unsigned long long)rx->on_time_bytes,
		(unsigned long long)rx->late_bytes,
		(unsigned long long)rx->missing);
	if (o->proto == P_TLTCP)
		fprintf(f, ", \"gap_bytes\": %llu, \"gaps\": %llu",
			(unsigned long long)rx->gap_bytes,
			(unsigned long long)rx->gaps);
}

static void report_summary(FILE *f, const struct opts *o,
			   const struct results *r, double secs,
			   const struct totals *tot, bool sections)
{
	fprintf(f, "\n ],\n \"summary\": {\"seconds\": %.3f, \"bytes\": %llu, "
		"\"bits_per_second\": %.0f", secs,
		(unsigned long long)tot->bytes,
		secs > 0 ? tot->bytes * 8.0 / secs : 0.0);
	if (o->proto == P_UDP && o->server)
		fprintf(f, ", \"packets\": %llu, \"lost\": %llu, "
			"\"rcvbuf_drops\": %u, \"mean_one_way_delay\": %.6f",
			(unsigned long long)tot->pkts,
			(unsigned long long)tot->lost, r->udp_rcvbuf_drops,
			tot->pkts ? tot->owd / tot->pkts : 0.0);
	if (sections && o->server)
		report_sec_rx(f, o, &r->sec_rx);
	if (sections && !o->server)
		fprintf(f, ", \"sections_offered\": %llu, \"bytes_offered\": %llu",
			(unsigned long long)r->sec_offered,
			(unsigned long long)r->sec_offered_bytes);
	/* UDP sends a section as datagrams, never as one write */
	if (sections && !o->server && o->proto != P_UDP)
		fprintf(f, ", \"sections_written\": %llu",
			(unsigned long long)r->sec_written);
	if (o->ahead)
		fprintf(f, ", \"deadline_ahead\": true");
	if (o->arrival)
		fprintf(f, ", \"deadline_arrival\": true");
	if (tot->sctp)
		fprintf(f, ", \"abandoned_unsent\": %llu, \"abandoned_sent\": %llu",
			(unsigned long long)tot->sctp->abandoned_unsent,
			(unsigned long long)tot->sctp->abandoned_sent);
	if (r->tl_have_info)
		report_tl_info(f, r);
	fprintf(f, "}\n}\n");
}

void report(const struct opts *o, const struct results *r, const char *role,
	    double secs, double epoch, const char *cc)
{
	bool sections = o->server ? r->sec_rx.sections || r->sec_rx.gaps :
				    o->sec_size > 0;
	struct totals tot = { 0 };
	FILE *f = stdout;

	if (o->out) {
		f = fopen(o->out, "w");
		if (!f)
			cli_die("%s: %s", o->out, strerror(errno));
	}
	report_head(f, o, role, epoch, cc);
	report_intervals(f, o, r, sections, &tot);
	report_summary(f, o, r, secs, &tot, sections);
	if (f != stdout && fclose(f))
		cli_die("%s: %s", o->out, strerror(errno));
}
