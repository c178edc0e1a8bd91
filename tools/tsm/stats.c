// SPDX-License-Identifier: GPL-2.0
/*
 * One statistics call for every transport.  Each transport reports
 * different things (TCP_INFO, TLTCP's TL_INFO, DCCP CCID 3's TFRC state,
 * SCTP's status and PR-SCTP counters); what a transport cannot tell is
 * left unknown (its bit clear in 'known') rather than reported as zero,
 * since a zero RTT or zero deadline misses would be a lie.
 */
#include <errno.h>
#include <netinet/in.h>
#include <linux/sctp.h>
#include <linux/tcp.h>
#include <linux/tltcp.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "internal.h"
#include "tltcp_msg.h"

#ifndef SOL_DCCP
#define SOL_DCCP	269
#endif
#define DCCP_SOCKOPT_CCID_TX_INFO	192

/* CCID 3's report; not in the UAPI headers, same on 6.1 and 6.12. */
struct tsm_tfrc_tx_info {
	uint64_t x;		/* allowed rate, bytes/s * 64 */
	uint64_t x_recv;	/* receive rate, bytes/s * 64 */
	uint32_t x_calc;	/* the equation's rate, bytes/s */
	uint32_t rtt;		/* us */
	uint32_t p;		/* loss event rate * 1e6 */
	uint32_t rto;		/* us */
	uint32_t ipi;		/* inter-packet interval, us */
};

static int tcp_stats(int fd, const struct tsm_choice *ch,
		     struct tsm_stats *st, struct tsm_error *err)
{
	struct tcp_info ti;
	struct tl_info tl;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return tsm_err(err, errno, "TCP_INFO: %s", strerror(errno));
	st->rtt_us = ti.tcpi_rtt;
	st->retransmits = ti.tcpi_total_retrans;
	st->cwnd = ti.tcpi_snd_cwnd;
	st->known |= TSM_ST_RTT | TSM_ST_RETRANS | TSM_ST_CWND;
	/* tcpi_delivery_rate came with 4.9; older kernels give less. */
	if (len > offsetof(struct tcp_info, tcpi_delivery_rate)) {
		st->rate = ti.tcpi_delivery_rate * 8;
		st->known |= TSM_ST_RATE;
	}
	if (ch->transport != TSM_TLTCP)
		return 0;
	if (tl_get_info(fd, &tl))
		return tsm_err(err, errno, "TL_INFO: %s", strerror(errno));
	st->deadline_misses = tl.sections_abandoned_unsent +
			      tl.sections_abandoned_partial;
	st->known |= TSM_ST_MISSES;
	return 0;
}

static int dccp_stats(int fd, struct tsm_stats *st)
{
	struct tsm_tfrc_tx_info ti;
	socklen_t len = sizeof(ti);

	/* CCID 2 has no report, and the receiver has none either. */
	if (getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_CCID_TX_INFO, &ti, &len) ||
	    len < sizeof(ti))
		return 0;
	st->rate = ti.x / 64 * 8;
	st->rtt_us = ti.rtt;
	st->loss_rate = ti.p / 1e6;
	st->known |= TSM_ST_RATE | TSM_ST_RTT | TSM_ST_LOSS_RATE;
	return 0;
}

static int sctp_stats(int fd, const struct tsm_choice *ch,
		      struct tsm_stats *st, struct tsm_error *err)
{
	struct sctp_prstatus pr = { .sprstat_policy = SCTP_PR_SCTP_ALL };
	struct sctp_assoc_stats as;
	struct sctp_status ss;
	socklen_t len = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	if (getsockopt(fd, IPPROTO_SCTP, SCTP_STATUS, &ss, &len))
		return tsm_err(err, errno, "SCTP_STATUS: %s", strerror(errno));
	st->rtt_us = ss.sstat_primary.spinfo_srtt * 1000;	/* ms */
	st->cwnd = ss.sstat_primary.spinfo_cwnd;		/* bytes */
	st->known |= TSM_ST_RTT | TSM_ST_CWND;
	memset(&as, 0, sizeof(as));
	len = sizeof(as);
	if (!getsockopt(fd, IPPROTO_SCTP, SCTP_GET_ASSOC_STATS, &as, &len)) {
		st->retransmits = as.sas_rtxchunks;
		st->known |= TSM_ST_RETRANS;
	}
	len = sizeof(pr);
	if (ch->pr_policy != TSM_PR_OFF &&
	    !getsockopt(fd, IPPROTO_SCTP, SCTP_PR_ASSOC_STATUS, &pr, &len)) {
		st->deadline_misses = pr.sprstat_abandoned_unsent +
				      pr.sprstat_abandoned_sent;
		st->known |= TSM_ST_MISSES;
	}
	return 0;
}

int tsm_stats(int fd, const struct tsm_choice *ch, struct tsm_stats *st,
	      struct tsm_error *err)
{
	memset(st, 0, sizeof(*st));
	switch (ch->transport) {
	case TSM_TCP:
	case TSM_TLTCP:
		return tcp_stats(fd, ch, st, err);
	case TSM_DCCP:
		return dccp_stats(fd, st);
	case TSM_SCTP:
		return sctp_stats(fd, ch, st, err);
	default:
		return tsm_err(err, EINVAL, "no transport chosen");
	}
}
