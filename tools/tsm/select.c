// SPDX-License-Identifier: GPL-2.0
/*
 * The decision: requirements + policy + what the kernel offers -> a
 * transport, its tuning and a one-line explanation.  Nothing here touches
 * the system, so that every row of the mapping table, every fallback and
 * every error can be tested on a machine that has none of the modules.
 *
 * This file implements the tables of Documentation/tsm.rst, in that
 * order; a change to one must change the other.
 *
 * 1. Transport rows: the reliability picks a chain of candidates.
 * 2. Feature filter: a candidate that lacks a required property (or has
 *    a prohibited one) is skipped.  "prefer" and "avoid" never change
 *    the transport, only its tuning (SCTP's unordered delivery).
 * 3. Availability: a candidate the kernel does not offer, or the policy
 *    does not allow, is skipped, and the explanation says so.  UDP is not
 *    a candidate anywhere: nothing falls back to an uncontrolled transport.
 * 4. Congestion control rows (TCP, TLTCP) and CCID rows (DCCP).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define TSM_MAX_LIFETIME_MS	3600000LL	/* TLTCP's TL_MAX_DEADLINE */
#define TSM_MIN_WEIGHT		0.1		/* MulTFRC's range of n */
#define TSM_MAX_WEIGHT		100.0
#define TSM_SCAVENGER_WEIGHT	0.5
#define TSM_LONG_DELAY_MS	400

/* Table 1: the candidates for each reliability, best first. */
static const enum tsm_transport chains[][3] = {
	[TSM_REL_FULL] = { TSM_TCP, TSM_SCTP, TSM_TLTCP },
	[TSM_REL_PARTIAL] = { TSM_TLTCP, TSM_SCTP },
	[TSM_REL_NONE] = { TSM_DCCP, TSM_SCTP },
};

/* Table 2: what each candidate offers. */
static const struct {
	bool boundaries;	/* preserveMsgBoundaries */
	bool ordered;		/* can deliver in order */
	bool unordered;		/* can deliver out of order */
	bool per_msg;		/* perMsgReliability */
} features[TSM_TRANSPORT_COUNT] = {
	[TSM_TCP] = { false, true, false, false },
	[TSM_TLTCP] = { true, true, false, true },	/* sections */
	[TSM_SCTP] = { true, true, true, true },
	[TSM_DCCP] = { true, false, true, false },
};

/* Requirements with the defaults resolved. */
struct norm {
	enum tsm_pref boundaries, order, per_msg;
	double weight;		/* explicit, 1 if not given */
};

void tsm_req_init(struct tsm_req *req)
{
	memset(req, 0, sizeof(*req));
	req->reliability = TSM_REL_FULL;
	req->profile = TSM_PROF_DEFAULT;
	req->weight = 1;
}

int tsm_check_req(const struct tsm_req *req, struct tsm_error *err)
{
	if ((unsigned int)req->reliability > TSM_REL_NONE ||
	    (unsigned int)req->profile >= TSM_PROF_COUNT ||
	    (unsigned int)req->preserve_order > TSM_PREF_PROHIBIT ||
	    (unsigned int)req->preserve_msg_boundaries > TSM_PREF_PROHIBIT ||
	    (unsigned int)req->per_msg_reliability > TSM_PREF_PROHIBIT)
		return tsm_err(err, EINVAL, "unknown enumeration value");
	if (!(req->weight > 0))
		return tsm_err(err, EINVAL, "weight must be positive, not %g",
			       req->weight);
	if (req->weight < TSM_MIN_WEIGHT || req->weight > TSM_MAX_WEIGHT)
		return tsm_err(err, ERANGE,
			       "weight %g outside %g..%g (MulTFRC's n)",
			       req->weight, TSM_MIN_WEIGHT, TSM_MAX_WEIGHT);
	if (req->msg_lifetime_ms < 0)
		return tsm_err(err, EINVAL, "msgLifetime is negative (%lld ms)",
			       (long long)req->msg_lifetime_ms);
	if (req->msg_lifetime_ms > TSM_MAX_LIFETIME_MS)
		return tsm_err(err, ERANGE,
			       "msgLifetime %lld ms is over one hour",
			       (long long)req->msg_lifetime_ms);
	if (req->reliability == TSM_REL_PARTIAL && !req->msg_lifetime_ms)
		return tsm_err(err, EINVAL,
			       "reliability partial needs a msgLifetime");
	if (req->reliability != TSM_REL_PARTIAL && req->msg_lifetime_ms)
		return tsm_err(err, EINVAL,
			       "msgLifetime applies to reliability partial only (reliability is %s)",
			       req->reliability == TSM_REL_FULL ? "full" : "none");
	if (req->path_delay_ms < 0)
		return tsm_err(err, EINVAL, "path delay is negative (%lld ms)",
			       (long long)req->path_delay_ms);
	if (req->max_rate && req->min_rate > req->max_rate)
		return tsm_err(err, EINVAL,
			       "min rate %llu bit/s above max rate %llu bit/s",
			       (unsigned long long)req->min_rate,
			       (unsigned long long)req->max_rate);
	if (req->profile == TSM_PROF_SCAVENGER && req->weight > 1)
		return tsm_err(err, EINVAL,
			       "Scavenger with weight %g: a scavenger takes less than one flow's share",
			       req->weight);
	return 0;
}

static void normalize(const struct tsm_req *req, struct norm *n)
{
	n->boundaries = req->preserve_msg_boundaries;
	if (n->boundaries == TSM_PREF_DEFAULT)
		n->boundaries = TSM_PREF_NONE;
	n->per_msg = req->per_msg_reliability;
	if (n->per_msg == TSM_PREF_DEFAULT)
		n->per_msg = TSM_PREF_NONE;
	/*
	 * RFC 9622's default for preserveOrder is require.  Without
	 * reliability, ordering is rarely wanted and would rule DCCP out,
	 * so an unset preserveOrder means noPreference there (tsm.rst).
	 */
	n->order = req->preserve_order;
	if (n->order == TSM_PREF_DEFAULT)
		n->order = req->reliability == TSM_REL_NONE ? TSM_PREF_NONE :
			   TSM_PREF_REQUIRE;
	n->weight = req->weight;
}

/* Table 2 applied: why t cannot meet the requirements, NULL if it can. */
static const char *misfit(enum tsm_transport t, const struct norm *n)
{
	if (n->boundaries == TSM_PREF_REQUIRE && !features[t].boundaries)
		return "does not preserve message boundaries";
	if (n->boundaries == TSM_PREF_PROHIBIT && features[t].boundaries)
		return "preserves message boundaries (prohibited)";
	if (n->order == TSM_PREF_REQUIRE && !features[t].ordered)
		return "does not preserve order";
	if (n->order == TSM_PREF_PROHIBIT && !features[t].unordered)
		return "always preserves order (prohibited)";
	if (n->per_msg == TSM_PREF_REQUIRE && !features[t].per_msg)
		return "has no per-message reliability";
	if (n->per_msg == TSM_PREF_PROHIBIT && features[t].per_msg)
		return "has per-message reliability (prohibited)";
	return NULL;
}

static bool policy_allows_cc(const struct tsm_policy *pol, const char *name)
{
	int i;

	if (!pol || !pol->n_cc)
		return true;
	for (i = 0; i < pol->n_cc; i++) {
		/* "multfrc" stands for every instance, multfrc_<n>. */
		if (!strcmp(pol->cc[i], name) ||
		    (!strcmp(pol->cc[i], "multfrc") &&
		     !strncmp(name, "multfrc_", 8)))
			return true;
	}
	return false;
}

/* Why the algorithm cannot be used here, NULL if it can. */
static const char *cc_unusable(const char *name, const struct tsm_policy *pol,
			       const struct tsm_offer *off,
			       enum tsm_state *state)
{
	int i = tsm_offer_cc(off, name);

	if (!policy_allows_cc(pol, name))
		return "not allowed by policy";
	if (i < 0)
		return "absent";
	*state = off->cc[i].state;
	if (off->cc[i].state == TSM_LOADED) {
		if (off->cc[i].allowed || off->privileged)
			return NULL;
		return "not in tcp_allowed_congestion_control";
	}
	if (off->cc[i].state == TSM_LOADABLE) {
		/* TCP_CONGESTION loads a module for CAP_NET_ADMIN only. */
		if (off->privileged)
			return NULL;
		return "module not loaded";
	}
	return "absent";
}

struct cc_pick {
	const char *names[4];
	char buf[2][TSM_NAME_LEN];
	double weight;			/* n the first names give */
	char why[192];
};

/* Table 3: the congestion control of TCP and TLTCP, best first. */
static void cc_rows(const struct tsm_req *req, const struct norm *n,
		    const struct tsm_policy *pol, const struct tsm_offer *off,
		    struct cc_pick *p)
{
	const typeof(pol->profile[0]) *pp = pol ? &pol->profile[req->profile] :
					    NULL;
	int64_t long_delay = pol && pol->long_delay_ms ? pol->long_delay_ms :
			     TSM_LONG_DELAY_MS;
	char w[8];
	double wt;

	memset(p, 0, sizeof(*p));
	if (n->weight != 1) {
		wt = n->weight;
		snprintf(p->why, sizeof(p->why), "weight %g", wt);
		goto multfrc;
	}
	if (pp && pp->cc[0]) {
		p->names[0] = pp->cc;
		snprintf(p->why, sizeof(p->why), "policy for %s, %s:%d",
			 tsm_profile_name(req->profile), pol->path,
			 pp->cc_line);
		return;
	}
	if ((pp && pp->weight) || req->profile == TSM_PROF_SCAVENGER) {
		wt = pp && pp->weight ? pp->weight : TSM_SCAVENGER_WEIGHT;
		snprintf(p->why, sizeof(p->why), "%s, weight %g",
			 tsm_profile_name(req->profile), wt);
		goto multfrc;
	}
	if (req->path_delay_ms >= long_delay) {
		p->names[0] = "reno_tw";
		snprintf(p->why, sizeof(p->why),
			 "path delay %lld ms >= %lld ms",
			 (long long)req->path_delay_ms, (long long)long_delay);
		return;
	}
	switch (req->profile) {
	case TSM_PROF_INTERACTIVE:
	case TSM_PROF_NON_INTERACTIVE:
		p->names[0] = "bbr";
		snprintf(p->why, sizeof(p->why), "%s: short queues",
			 tsm_profile_name(req->profile));
		return;
	case TSM_PROF_CONSTANT_RATE:
		wt = 1;
		snprintf(p->why, sizeof(p->why),
			 "Constant-Rate Streaming: smooth rate");
		goto multfrc;
	case TSM_PROF_CAPACITY_SEEKING:
		p->names[0] = "cubic";
		snprintf(p->why, sizeof(p->why), "Capacity-Seeking");
		return;
	default:
		/* Default: the administrator's system-wide choice. */
		p->names[0] = off->default_cc[0] ? off->default_cc : "reno";
		snprintf(p->why, sizeof(p->why), "kernel default");
		return;
	}
multfrc:
	p->weight = wt;
	tsm_format_weight(w, sizeof(w), wt);
	snprintf(p->buf[0], sizeof(p->buf[0]), "multfrc_%s", w);
	/*
	 * Plain "multfrc" has the module's n (1 unless set; unknown while the
	 * module is not loaded): right only if that is ours, and then first,
	 * as it is the one a module loaded on use registers.
	 */
	if (off->multfrc_n_milli ?
	    off->multfrc_n_milli == lround(wt * 1000) : wt == 1) {
		p->names[0] = "multfrc";
		p->names[1] = p->buf[0];
	} else {
		p->names[0] = p->buf[0];
	}
}

/*
 * Picks the first usable algorithm of the row, then the kernel default,
 * then reno (built into every kernel).  Returns false if none is usable.
 */
static bool pick_cc(const struct tsm_req *req, const struct norm *n,
		    const struct tsm_policy *pol, const struct tsm_offer *off,
		    struct tsm_choice *ch, char *note, size_t note_len)
{
	int i, j, k = 0, nrow = 0;
	const char *chain[6];
	enum tsm_state state;
	struct cc_pick p;
	const char *why;

	cc_rows(req, n, pol, off, &p);
	for (; nrow < 4 && p.names[nrow]; nrow++)
		chain[k++] = p.names[nrow];
	if (off->default_cc[0])
		chain[k++] = off->default_cc;
	chain[k++] = "reno";
	for (i = 0; i < k; i++) {
		for (j = 0; j < i && strcmp(chain[i], chain[j]); j++)
			;
		if (j < i)
			continue;	/* tried already */
		state = TSM_ABSENT;
		why = cc_unusable(chain[i], pol, off, &state);
		if (why) {
			tsm_append(note, note_len, "; fallback from %s (%s)",
				   chain[i], why);
			continue;
		}
		snprintf(ch->cc, sizeof(ch->cc), "%s", chain[i]);
		ch->cc_state = state;
		ch->cc_fallback = i > 0;
		if (i < nrow) {
			ch->weight = p.weight;
			tsm_append(ch->why, sizeof(ch->why), "; cc %s (%s)",
				   ch->cc, p.why);
		} else {
			tsm_append(ch->why, sizeof(ch->why), "; cc %s", ch->cc);
			if (p.weight && p.weight != 1)
				tsm_append(note, note_len,
					   "; weight %g not honoured",
					   p.weight);
		}
		if (state == TSM_LOADABLE)
			tsm_append(ch->why, sizeof(ch->why), ", loaded on use");
		return true;
	}
	return false;
}

/* Table 4: DCCP's CCID. */
static bool pick_ccid(const struct tsm_req *req, const struct tsm_policy *pol,
		      const struct tsm_offer *off, struct tsm_choice *ch,
		      char *note, size_t note_len)
{
	int pref = 2, i, c;

	if (pol && pol->profile[req->profile].ccid)
		pref = pol->profile[req->profile].ccid;
	else if (req->profile == TSM_PROF_CONSTANT_RATE ||
		 req->profile == TSM_PROF_INTERACTIVE)
		pref = 3;	/* TFRC: a smooth rate */
	for (i = 0; i < 2; i++) {
		c = i ? 5 - pref : pref;
		if (off->ccid[c]) {
			ch->ccid = c;
			tsm_append(ch->why, sizeof(ch->why), ", CCID %d (%s)",
				   c, c == 3 ? "TFRC, smooth rate" : "TCP-like");
			return true;
		}
		tsm_append(note, note_len, "; fallback from CCID %d (absent)",
			   c);
	}
	return false;
}

/* Why t is not available here (kernel or policy), NULL if it is. */
static const char *unavailable(enum tsm_transport t, const struct tsm_req *req,
			       const struct tsm_policy *pol,
			       const struct tsm_offer *off, bool *by_policy)
{
	*by_policy = false;
	if (pol && pol->transports && !(pol->transports & (1u << t))) {
		*by_policy = true;
		return "not allowed by policy";
	}
	switch (t) {
	case TSM_TLTCP:
		if (off->tltcp == TSM_LOADED ||
		    (off->tltcp == TSM_LOADABLE && off->privileged))
			return NULL;
		return off->tltcp == TSM_LOADABLE ?
		       "module not loaded: modprobe tltcp" : "module absent";
	case TSM_SCTP:
		if (off->sctp != TSM_LOADED)
			return "not available: modprobe sctp";
		if (req->reliability != TSM_REL_FULL && !off->prsctp)
			return "PR-SCTP disabled: sysctl net.sctp.prsctp_enable=1";
		return NULL;
	case TSM_DCCP:
		if (off->dccp != TSM_LOADED)
			return "not available: modprobe dccp_ipv4";
		return NULL;
	default:
		return NULL;
	}
}

/* Fills in the chosen transport's tuning and the explanation. */
static bool tune(const struct tsm_req *req, const struct norm *n,
		 const struct tsm_policy *pol, const struct tsm_offer *off,
		 struct tsm_choice *ch, char *note, size_t note_len)
{
	bool tcp = ch->transport == TSM_TCP || ch->transport == TSM_TLTCP;
	size_t l = sizeof(ch->why);
	char *w = ch->why;

	snprintf(w, l, "%s: ", tsm_transport_name(ch->transport));
	if (req->reliability == TSM_REL_FULL)
		tsm_append(w, l, "full reliability");
	else if (req->reliability == TSM_REL_PARTIAL)
		tsm_append(w, l, "partial reliability with %lld ms %slifetime",
			   (long long)req->msg_lifetime_ms,
			   ch->transport == TSM_SCTP ? "PR-SCTP " : "");
	else
		tsm_append(w, l, "no reliability%s",
			   ch->transport == TSM_SCTP ?
			   " (PR-SCTP, no retransmission)" : "");

	switch (ch->transport) {
	case TSM_TLTCP:
		ch->deadline_ns = (uint64_t)req->msg_lifetime_ms * 1000000;
		if (n->boundaries == TSM_PREF_REQUIRE ||
		    n->per_msg == TSM_PREF_REQUIRE)
			tsm_append(w, l, ", messages as sections");
		tsm_append(w, l, "; module %s", off->tltcp == TSM_LOADED ?
			   "loaded" : "loaded on use");
		break;
	case TSM_SCTP:
		if (req->reliability == TSM_REL_PARTIAL) {
			ch->pr_policy = TSM_PR_TTL;
			ch->pr_value = req->msg_lifetime_ms;
		} else if (req->reliability == TSM_REL_NONE) {
			ch->pr_policy = TSM_PR_RTX;
			ch->pr_value = 0;
		}
		/* Only SCTP can drop ordering: avoid asks for it too. */
		ch->unordered = n->order == TSM_PREF_AVOID ||
				n->order == TSM_PREF_PROHIBIT;
		tsm_append(w, l, ch->unordered ? ", unordered" : ", ordered");
		break;
	case TSM_DCCP:
		if (!pick_ccid(req, pol, off, ch, note, note_len))
			return false;
		break;
	default:
		break;
	}
	if (tcp) {
		if (!pick_cc(req, n, pol, off, ch, note, note_len))
			return false;
		ch->nodelay = req->profile == TSM_PROF_INTERACTIVE;
		if (ch->nodelay)
			tsm_append(w, l, "; no Nagle");
		if (req->max_rate) {
			ch->max_pacing_rate = req->max_rate / 8;
			tsm_append(w, l, "; paced at most %llu bit/s",
				   (unsigned long long)req->max_rate);
		}
	} else {
		if (n->weight != 1 || req->profile == TSM_PROF_SCAVENGER)
			tsm_append(note, note_len, "; %s not honoured",
				   n->weight != 1 ? "weight" : "Scavenger");
		if (req->max_rate)
			tsm_append(note, note_len, "; max rate not enforced");
	}
	if (req->min_rate)
		tsm_append(note, note_len, "; min rate not guaranteed");
	return true;
}

/* The requirements checked, defaults resolved, the policy's limits met. */
static int admit(const struct tsm_req *req, const struct tsm_policy *pol,
		 const struct tsm_offer *off, struct norm *n,
		 struct tsm_error *err)
{
	int ret = tsm_check_req(req, err);

	if (ret)
		return ret;
	normalize(req, n);
	if (pol && pol->max_weight && !off->privileged &&
	    n->weight > pol->max_weight)
		return tsm_err(err, EPERM,
			       "weight %g above %g, the limit for unprivileged users (%s:%d)",
			       n->weight, pol->max_weight, pol->path,
			       pol->max_weight_line);
	return 0;
}

int tsm_select(const struct tsm_req *req, const struct tsm_policy *pol,
	       const struct tsm_offer *off, struct tsm_choice *ch,
	       struct tsm_error *err)
{
	char note[TSM_MSG_LEN] = "", why_not[TSM_MSG_LEN] = "";
	enum tsm_transport t;
	bool by_policy, any_fit = false, kernel_missing = false;
	const char *why;
	struct norm n;
	int ret, i;

	memset(ch, 0, sizeof(*ch));
	ret = admit(req, pol, off, &n, err);
	if (ret)
		return ret;

	for (i = 0; i < 3; i++) {
		t = chains[req->reliability][i];
		if (t == TSM_NONE)
			break;
		why = misfit(t, &n);
		if (why) {
			tsm_append(why_not, sizeof(why_not), "; %s %s",
				   tsm_transport_name(t), why);
			continue;
		}
		any_fit = true;
		why = unavailable(t, req, pol, off, &by_policy);
		if (why) {
			if (!by_policy)
				kernel_missing = true;
			if (by_policy && pol)
				tsm_append(why_not, sizeof(why_not),
					   "; %s %s (%s:%d)",
					   tsm_transport_name(t), why,
					   pol->path, pol->transports_line);
			else
				tsm_append(why_not, sizeof(why_not), "; %s %s",
					   tsm_transport_name(t), why);
			tsm_append(note, sizeof(note),
				   "; fallback from %s (%s)",
				   tsm_transport_name(t), why);
			continue;
		}
		memset(ch, 0, sizeof(*ch));
		ch->transport = t;
		ch->row = req->reliability + 1;
		if (!tune(req, &n, pol, off, ch, note, sizeof(note))) {
			tsm_append(why_not, sizeof(why_not), "; %s %s",
				   tsm_transport_name(t),
				   t == TSM_DCCP ? "has neither CCID 2 nor 3" :
				   "has no allowed congestion control");
			continue;
		}
		tsm_append(ch->why, sizeof(ch->why), "%s", note);
		return 0;
	}
	memset(ch, 0, sizeof(*ch));
	if (!any_fit)
		return tsm_err(err, EINVAL,
			       "no transport can meet these requirements%s",
			       why_not);
	return tsm_err(err, kernel_missing ? EPROTONOSUPPORT : EPERM,
		       "no available transport fits%s", why_not);
}

/*
 * Table 3 alone, for a TCP socket that exists already (the preload
 * library): the application chose TCP, so neither Table 1 nor the
 * policy's transports line applies; the policy's algorithms, limits and
 * profile overrides do.
 */
int tsm_select_cc(const struct tsm_req *req, const struct tsm_policy *pol,
		  const struct tsm_offer *off, struct tsm_choice *ch,
		  struct tsm_error *err)
{
	char note[TSM_MSG_LEN] = "";
	struct norm n;
	int ret;

	memset(ch, 0, sizeof(*ch));
	ret = admit(req, pol, off, &n, err);
	if (ret)
		return ret;
	if (req->reliability != TSM_REL_FULL)
		return tsm_err(err, EINVAL,
			       "a TCP application's reliability is full, not %s",
			       req->reliability == TSM_REL_PARTIAL ? "partial" :
			       "none");
	ch->transport = TSM_TCP;
	ch->row = 1;
	if (!tune(req, &n, pol, off, ch, note, sizeof(note))) {
		memset(ch, 0, sizeof(*ch));
		return tsm_err(err, EPERM,
			       "TCP has no allowed congestion control%s",
			       note);
	}
	tsm_append(ch->why, sizeof(ch->why), "%s", note);
	return 0;
}
