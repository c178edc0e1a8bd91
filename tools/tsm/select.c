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
	[TSM_REL_NONE] = { TSM_DCCP, TSM_SCTP, TSM_TCP },
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

#define CC_CHAIN_LEN	8

/*
 * Table 3's fallbacks: never more aggressive than what was asked
 * (Documentation/tsm.rst).  Less than one flow's share falls back to the
 * kernel's low-priority algorithms, then reno; one flow's share with
 * TFRC's smooth rate to reno, the flow TFRC's equation models; a single
 * flow's algorithm (bbr, cubic, reno_tw) and more than one flow's share
 * to cubic, then reno.  Only the Default profile takes the kernel's
 * default, the administrator's choice; nothing falls back to bbr.
 */
static const char *const below_one[] = { "lp", "vegas", "reno", NULL };
static const char *const one_flow[] = { "reno", NULL };
static const char *const one_or_more[] = { "cubic", "reno", NULL };

struct cc_pick {
	const char *names[CC_CHAIN_LEN];	/* best first */
	double gives[CC_CHAIN_LEN];	/* the n each name gives, 0: none */
	bool own[CC_CHAIN_LEN];		/* the row's choice, no fallback */
	int n;
	char buf[2][TSM_NAME_LEN];
	double weight;			/* the n asked for, 0: none */
	char why[192];			/* the table's row */
	char policy_why[192];		/* names[0] is the policy's */
};

static void add_name(struct cc_pick *p, const char *name, double gives)
{
	if (p->n < CC_CHAIN_LEN) {
		p->gives[p->n] = gives;
		p->own[p->n] = false;
		p->names[p->n++] = name;
	}
}

static void add_chain(struct cc_pick *p, const char *const *chain)
{
	for (; *chain; chain++)
		add_name(p, *chain, 0);
}

/* MulTFRC as n flows, with the fallbacks of that share. */
static void multfrc_row(struct cc_pick *p, const struct tsm_offer *off,
			double wt)
{
	int first = p->n;
	char w[8];

	p->weight = wt;
	tsm_format_weight(w, sizeof(w), wt);
	snprintf(p->buf[0], sizeof(p->buf[0]), "multfrc_%s", w);
	/*
	 * Plain "multfrc" has the module's n (1 unless set; unknown while the
	 * module is not loaded): right only if that is ours, and then first,
	 * as it is the one a module loaded on use registers.
	 */
	if (off->multfrc_n_milli ?
	    off->multfrc_n_milli == lround(wt * 1000) : wt == 1)
		add_name(p, "multfrc", wt);
	add_name(p, p->buf[0], wt);
	for (; first < p->n; first++)
		p->own[first] = true;
	add_chain(p, wt < 1 ? below_one : wt == 1 ? one_flow : one_or_more);
}

static void single_row(struct cc_pick *p, const char *name,
		       const char *const *chain)
{
	add_name(p, name, 0);
	p->own[p->n - 1] = true;
	add_chain(p, chain);
}

/*
 * Table 3 without the policy's algorithm for the profile: the row and
 * its fallbacks.  tfrc: TCP stands in for DCCP where Table 4 would give
 * CCID 3, so TFRC's equation stands in for CCID 3.
 */
static void cc_table(const struct tsm_req *req, const struct norm *n,
		     const struct tsm_policy *pol, const struct tsm_offer *off,
		     bool tfrc, struct cc_pick *p)
{
	const typeof(pol->profile[0]) *pp = pol ? &pol->profile[req->profile] :
					    NULL;
	int64_t long_delay = pol && pol->long_delay_ms ? pol->long_delay_ms :
			     TSM_LONG_DELAY_MS;
	double wt;

	if (n->weight != 1) {
		snprintf(p->why, sizeof(p->why), "weight %g", n->weight);
		multfrc_row(p, off, n->weight);
		return;
	}
	if ((pp && pp->weight) || req->profile == TSM_PROF_SCAVENGER) {
		wt = pp && pp->weight ? pp->weight : TSM_SCAVENGER_WEIGHT;
		snprintf(p->why, sizeof(p->why), "%s, weight %g",
			 tsm_profile_name(req->profile), wt);
		multfrc_row(p, off, wt);
		return;
	}
	if (tfrc) {
		snprintf(p->why, sizeof(p->why),
			 "TFRC's equation for CCID 3's smooth rate");
		multfrc_row(p, off, 1);
		return;
	}
	if (req->path_delay_ms >= long_delay) {
		snprintf(p->why, sizeof(p->why),
			 "path delay %lld ms >= %lld ms",
			 (long long)req->path_delay_ms, (long long)long_delay);
		single_row(p, "reno_tw", one_or_more);
		return;
	}
	switch (req->profile) {
	case TSM_PROF_INTERACTIVE:
	case TSM_PROF_NON_INTERACTIVE:
		snprintf(p->why, sizeof(p->why), "%s: short queues",
			 tsm_profile_name(req->profile));
		single_row(p, "bbr", one_or_more);
		return;
	case TSM_PROF_CONSTANT_RATE:
		snprintf(p->why, sizeof(p->why),
			 "Constant-Rate Streaming: smooth rate");
		multfrc_row(p, off, 1);
		return;
	case TSM_PROF_CAPACITY_SEEKING:
		snprintf(p->why, sizeof(p->why), "Capacity-Seeking");
		single_row(p, "cubic", one_flow);
		return;
	default:
		/* Default: the administrator's system-wide choice. */
		snprintf(p->why, sizeof(p->why), "kernel default");
		single_row(p, off->default_cc[0] ? off->default_cc : "reno",
			   one_flow);
		return;
	}
}

/* Table 3: the congestion control of TCP and TLTCP, best first. */
static void cc_rows(const struct tsm_req *req, const struct norm *n,
		    const struct tsm_policy *pol, const struct tsm_offer *off,
		    bool tfrc, struct cc_pick *p)
{
	const typeof(pol->profile[0]) *pp = pol ? &pol->profile[req->profile] :
					    NULL;

	memset(p, 0, sizeof(*p));
	/*
	 * The policy's algorithm for the profile (an explicit weight wins
	 * over it); if it cannot be used, the table's row and fallbacks.
	 */
	if (n->weight == 1 && pp && pp->cc[0]) {
		add_name(p, pp->cc, 0);
		snprintf(p->policy_why, sizeof(p->policy_why),
			 "policy for %s, %s:%d",
			 tsm_profile_name(req->profile), pol->path,
			 pp->cc_line);
		cc_table(req, n, pol, off, tfrc, p);
		return;
	}
	cc_table(req, n, pol, off, tfrc, p);
}

/*
 * Picks the first usable algorithm of the row and its fallbacks (which
 * end in reno, built into every kernel).  Returns false if none is
 * usable.
 */
static bool pick_cc(const struct tsm_req *req, const struct norm *n,
		    const struct tsm_policy *pol, const struct tsm_offer *off,
		    bool tfrc, struct tsm_choice *ch, char *note,
		    size_t note_len)
{
	enum tsm_state state;
	struct cc_pick p;
	const char *why;
	int i, j;

	cc_rows(req, n, pol, off, tfrc, &p);
	for (i = 0; i < p.n; i++) {
		for (j = 0; j < i && strcmp(p.names[i], p.names[j]); j++)
			;
		if (j < i)
			continue;	/* tried already */
		state = TSM_ABSENT;
		why = cc_unusable(p.names[i], pol, off, &state);
		if (why) {
			tsm_append(note, note_len, "; fallback from %s (%s)",
				   p.names[i], why);
			continue;
		}
		snprintf(ch->cc, sizeof(ch->cc), "%s", p.names[i]);
		ch->cc_state = state;
		ch->cc_fallback = i > 0;
		ch->weight = p.gives[i];
		if (!i && p.policy_why[0])
			tsm_append(ch->why, sizeof(ch->why), "; cc %s (%s)",
				   ch->cc, p.policy_why);
		else
			tsm_append(ch->why, sizeof(ch->why), "; cc %s (%s%s)",
				   ch->cc, p.own[i] ? "" : "fallback for ",
				   p.why);
		if (!p.own[i] && !(!i && p.policy_why[0]) && p.weight &&
		    p.weight != 1 && ch->weight != p.weight)
			tsm_append(note, note_len,
				   "; %sweight %g not honoured: %s",
				   p.weight > 1 ? "warning: " : "", p.weight,
				   p.weight > 1 ? "one flow's share" :
				   strcmp(ch->cc, "reno") ?
				   "a low-priority algorithm" :
				   "one flow's share, the least there is");
		if (state == TSM_LOADABLE)
			tsm_append(ch->why, sizeof(ch->why), ", loaded on use");
		return true;
	}
	return false;
}

/* Table 4's preference: 2 or 3. */
static int ccid_pref(const struct tsm_req *req, const struct tsm_policy *pol)
{
	if (pol && pol->profile[req->profile].ccid)
		return pol->profile[req->profile].ccid;
	if (req->profile == TSM_PROF_CONSTANT_RATE ||
	    req->profile == TSM_PROF_INTERACTIVE)
		return 3;	/* TFRC: a smooth rate */
	return 2;
}

/* Table 4: DCCP's CCID. */
static bool pick_ccid(const struct tsm_req *req, const struct tsm_policy *pol,
		      const struct tsm_offer *off, struct tsm_choice *ch,
		      char *note, size_t note_len)
{
	int pref = ccid_pref(req, pol), i, c;

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
		if (off->dccp == TSM_LOADABLE)
			return "module not loaded: modprobe dccp_ipv4";
		if (off->dccp != TSM_LOADED)
			return "not in this kernel";
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
	bool tfrc;
	char *w = ch->why;

	snprintf(w, l, "%s: ", tsm_transport_name(ch->transport));
	if (req->reliability == TSM_REL_FULL)
		tsm_append(w, l, "full reliability");
	else if (req->reliability == TSM_REL_PARTIAL)
		tsm_append(w, l, "partial reliability with %lld ms %slifetime",
			   (long long)req->msg_lifetime_ms,
			   ch->transport == TSM_SCTP ? "PR-SCTP " : "");
	else if (ch->transport == TSM_TCP)
		tsm_append(w, l, "no reliability asked, full given");
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
		/* TCP in DCCP's place keeps CCID 3's TFRC (tsm.rst). */
		tfrc = ch->transport == TSM_TCP &&
		       req->reliability == TSM_REL_NONE &&
		       ccid_pref(req, pol) == 3;
		if (!pick_cc(req, n, pol, off, tfrc, ch, note, note_len))
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
