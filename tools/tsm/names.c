// SPDX-License-Identifier: GPL-2.0
/*
 * The words of the interface: names of transports, profiles and
 * preference levels as the CLI, the policy file and the explanations
 * spell them.  RFC 9622's own spellings are accepted beside short ones so
 * that users recognise them, case-insensitively.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

static const char *const transport_names[TSM_TRANSPORT_COUNT] = {
	[TSM_NONE] = "none", [TSM_TCP] = "TCP", [TSM_TLTCP] = "TLTCP",
	[TSM_SCTP] = "SCTP", [TSM_DCCP] = "DCCP",
};

static const struct {
	const char *name;	/* first one: how we print it */
	const char *alias[3];
} profile_names[TSM_PROF_COUNT] = {
	[TSM_PROF_DEFAULT] = { "Default", { "default" } },
	[TSM_PROF_SCAVENGER] = { "Scavenger", { "scavenger" } },
	[TSM_PROF_INTERACTIVE] = { "Low Latency/Interactive",
				   { "interactive", "low-latency-interactive",
				     "lowlatencyinteractive" } },
	[TSM_PROF_NON_INTERACTIVE] = { "Low Latency/Non-Interactive",
				       { "non-interactive",
					 "low-latency-non-interactive",
					 "lowlatencynoninteractive" } },
	[TSM_PROF_CONSTANT_RATE] = { "Constant-Rate Streaming",
				     { "constant-rate",
				       "constant-rate-streaming",
				       "constantratestreaming" } },
	[TSM_PROF_CAPACITY_SEEKING] = { "Capacity-Seeking",
					{ "capacity-seeking",
					  "capacityseeking" } },
};

static const char *const pref_names[] = {
	[TSM_PREF_DEFAULT] = "default", [TSM_PREF_REQUIRE] = "require",
	[TSM_PREF_PREFER] = "prefer", [TSM_PREF_NONE] = "noPreference",
	[TSM_PREF_AVOID] = "avoid", [TSM_PREF_PROHIBIT] = "prohibit",
};

static const char *const state_names[] = {
	[TSM_ABSENT] = "absent", [TSM_LOADABLE] = "loadable",
	[TSM_LOADED] = "loaded",
};

const char *tsm_transport_name(enum tsm_transport t)
{
	return (unsigned int)t < TSM_TRANSPORT_COUNT ? transport_names[t] : "?";
}

const char *tsm_profile_name(enum tsm_profile p)
{
	return (unsigned int)p < TSM_PROF_COUNT ? profile_names[p].name : "?";
}

const char *tsm_pref_name(enum tsm_pref p)
{
	return (unsigned int)p < ARRAY_SIZE(pref_names) ? pref_names[p] : "?";
}

const char *tsm_state_name(enum tsm_state s)
{
	return (unsigned int)s < ARRAY_SIZE(state_names) ? state_names[s] : "?";
}

int tsm_parse_transport(const char *s, enum tsm_transport *t)
{
	int i;

	for (i = TSM_TCP; i < TSM_TRANSPORT_COUNT; i++) {
		if (!strcasecmp(s, transport_names[i])) {
			*t = i;
			return 0;
		}
	}
	return -EINVAL;
}

int tsm_parse_profile(const char *s, enum tsm_profile *p)
{
	unsigned int i, j;

	for (i = 0; i < TSM_PROF_COUNT; i++) {
		if (!strcasecmp(s, profile_names[i].name))
			goto found;
		for (j = 0; j < ARRAY_SIZE(profile_names[i].alias); j++) {
			if (profile_names[i].alias[j] &&
			    !strcasecmp(s, profile_names[i].alias[j]))
				goto found;
		}
	}
	return -EINVAL;
found:
	*p = i;
	return 0;
}

int tsm_parse_pref(const char *s, enum tsm_pref *p)
{
	unsigned int i;

	for (i = TSM_PREF_REQUIRE; i < ARRAY_SIZE(pref_names); i++) {
		if (!strcasecmp(s, pref_names[i])) {
			*p = i;
			return 0;
		}
	}
	/* Booleans, for the common case of yes/no. */
	if (!strcasecmp(s, "yes") || !strcasecmp(s, "true")) {
		*p = TSM_PREF_REQUIRE;
		return 0;
	}
	if (!strcasecmp(s, "no") || !strcasecmp(s, "false")) {
		*p = TSM_PREF_PROHIBIT;
		return 0;
	}
	if (!strcasecmp(s, "none") || !strcasecmp(s, "ignore")) {
		*p = TSM_PREF_NONE;
		return 0;
	}
	return -EINVAL;
}

int tsm_parse_reliability(const char *s, enum tsm_reliability *r)
{
	if (!strcasecmp(s, "full"))
		*r = TSM_REL_FULL;
	else if (!strcasecmp(s, "partial"))
		*r = TSM_REL_PARTIAL;
	else if (!strcasecmp(s, "none"))
		*r = TSM_REL_NONE;
	else
		return -EINVAL;
	return 0;
}

/*
 * A weight as MulTFRC names its instances: thousandths, trailing zeros
 * dropped ("2", "0.5", "12.25"), so that "multfrc_" + this is the name
 * the module registers for that n.
 */
int tsm_format_weight(char *buf, size_t len, double w)
{
	long milli = lround(w * 1000);
	long frac = milli % 1000;
	int digits = 3;

	if (!frac)
		return snprintf(buf, len, "%ld", milli / 1000);
	for (; frac % 10 == 0; frac /= 10)
		digits--;
	return snprintf(buf, len, "%ld.%0*ld", milli / 1000, digits, frac);
}

int tsm_err(struct tsm_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -code;
}

void tsm_append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

int tsm_offer_cc(const struct tsm_offer *off, const char *name)
{
	int i;

	for (i = 0; i < off->n_cc; i++) {
		if (!strcmp(off->cc[i].name, name))
			return i;
	}
	return -1;
}
