// SPDX-License-Identifier: GPL-2.0
/*
 * The administrator's policy file: one setting per line, words separated
 * by blanks, '#' to the end of the line a comment (format in
 * Documentation/tsm.rst).  Every error names the file and the line, and a
 * setting given twice is an error rather than a silent override, since a
 * policy is read by people who did not write it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

#define MAX_WORDS	(TSM_MAX_CC + 2)
#define MAX_POLICY	(64 * 1024)

void tsm_policy_init(struct tsm_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	snprintf(pol->path, sizeof(pol->path), "(no policy)");
}

struct ctx {
	struct tsm_policy *pol;
	struct tsm_error *err;
	int line;
};

#define perr(c, code, fmt, ...) \
	tsm_err((c)->err, code, "%s:%d: " fmt, (c)->pol->path, (c)->line, \
		##__VA_ARGS__)

static int once(struct ctx *c, int *line, const char *key)
{
	if (*line)
		return perr(c, EINVAL, "'%s' given twice (first at line %d)",
			    key, *line);
	*line = c->line;
	return 0;
}

static int number(struct ctx *c, const char *s, double lo, double hi,
		  double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (end == s || *end || errno)
		return perr(c, EINVAL, "'%s' is not a number", s);
	if (*v < lo || *v > hi)
		return perr(c, ERANGE, "%s outside %g..%g", s, lo, hi);
	return 0;
}

static int cc_name(struct ctx *c, const char *s)
{
	const char *p;

	if (strlen(s) >= TSM_NAME_LEN)
		return perr(c, EINVAL,
			    "congestion control '%s' longer than %d characters",
			    s, TSM_NAME_LEN - 1);
	for (p = s; *p; p++) {
		if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
			return perr(c, EINVAL,
				    "congestion control '%s': bad character '%c'",
				    s, *p);
	}
	return 0;
}

static int set_transports(struct ctx *c, char **w, int n)
{
	enum tsm_transport t;
	int i, ret;

	ret = once(c, &c->pol->transports_line, w[0]);
	if (ret)
		return ret;
	if (n < 2)
		return perr(c, EINVAL, "'transports' needs at least one transport");
	for (i = 1; i < n; i++) {
		if (!strcasecmp(w[i], "udp"))
			return perr(c, EINVAL,
				    "UDP has no congestion control: tsm never chooses it");
		if (tsm_parse_transport(w[i], &t))
			return perr(c, EINVAL,
				    "unknown transport '%s' (TCP, TLTCP, SCTP, DCCP)",
				    w[i]);
		c->pol->transports |= 1u << t;
	}
	return 0;
}

static int set_congestion(struct ctx *c, char **w, int n)
{
	int i, ret;

	ret = once(c, &c->pol->cc_line, w[0]);
	if (ret)
		return ret;
	if (n < 2)
		return perr(c, EINVAL,
			    "'congestion' needs at least one algorithm");
	if (n - 1 > TSM_MAX_CC)
		return perr(c, E2BIG, "more than %d algorithms", TSM_MAX_CC);
	for (i = 1; i < n; i++) {
		ret = cc_name(c, w[i]);
		if (ret)
			return ret;
		snprintf(c->pol->cc[i - 1], TSM_NAME_LEN, "%s", w[i]);
	}
	c->pol->n_cc = n - 1;
	return 0;
}

/* profile <name> cc <algorithm> | ccid <2|3> | weight <n> */
static int set_profile(struct ctx *c, char **w, int n)
{
	enum tsm_profile p;
	double v;
	int ret;

	if (n != 4)
		return perr(c, EINVAL,
			    "usage: profile <profile> cc|ccid|weight <value>");
	if (tsm_parse_profile(w[1], &p))
		return perr(c, EINVAL,
			    "unknown profile '%s' (default, scavenger, interactive, non-interactive, constant-rate, capacity-seeking)",
			    w[1]);
	if (!strcmp(w[2], "cc")) {
		ret = once(c, &c->pol->profile[p].cc_line, "profile cc");
		if (!ret)
			ret = cc_name(c, w[3]);
		if (ret)
			return ret;
		snprintf(c->pol->profile[p].cc, TSM_NAME_LEN, "%s", w[3]);
		return 0;
	}
	if (!strcmp(w[2], "ccid")) {
		ret = once(c, &c->pol->profile[p].ccid_line, "profile ccid");
		if (ret)
			return ret;
		if (strcmp(w[3], "2") && strcmp(w[3], "3"))
			return perr(c, EINVAL, "CCID is 2 or 3, not '%s'",
				    w[3]);
		c->pol->profile[p].ccid = w[3][0] - '0';
		return 0;
	}
	if (!strcmp(w[2], "weight")) {
		ret = once(c, &c->pol->profile[p].weight_line,
			   "profile weight");
		if (!ret)
			ret = number(c, w[3], 0.1, 100, &v);
		if (ret)
			return ret;
		if (p == TSM_PROF_SCAVENGER && v >= 1)
			return perr(c, EINVAL,
				    "a Scavenger's weight must be below 1, not %s",
				    w[3]);
		c->pol->profile[p].weight = v;
		return 0;
	}
	return perr(c, EINVAL, "unknown profile setting '%s' (cc, ccid, weight)",
		    w[2]);
}

static int parse_line(struct ctx *c, char *s)
{
	char *w[MAX_WORDS], *save = NULL, *tok;
	double v;
	int n = 0, ret;

	tok = strchr(s, '#');
	if (tok)
		*tok = '\0';
	for (tok = strtok_r(s, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		if (n == MAX_WORDS)
			return perr(c, E2BIG, "too many words");
		w[n++] = tok;
	}
	if (!n)
		return 0;
	if (!strcmp(w[0], "transports"))
		return set_transports(c, w, n);
	if (!strcmp(w[0], "congestion"))
		return set_congestion(c, w, n);
	if (!strcmp(w[0], "profile"))
		return set_profile(c, w, n);
	if (!strcmp(w[0], "max_weight") || !strcmp(w[0], "long_delay_ms")) {
		bool mw = w[0][0] == 'm';

		ret = once(c, mw ? &c->pol->max_weight_line :
			   &c->pol->long_delay_line, w[0]);
		if (ret)
			return ret;
		if (n != 2)
			return perr(c, EINVAL, "'%s' takes one value", w[0]);
		ret = mw ? number(c, w[1], 0.1, 100, &v) :
		      number(c, w[1], 1, 3600000, &v);
		if (ret)
			return ret;
		if (mw) {
			c->pol->max_weight = v;
		} else if (v != (int64_t)v) {
			return perr(c, EINVAL, "'%s' is not a whole number",
				    w[1]);
		} else {
			c->pol->long_delay_ms = v;
		}
		return 0;
	}
	return perr(c, EINVAL, "unknown setting '%s'", w[0]);
}

int tsm_policy_parse(const char *text, const char *path,
		     struct tsm_policy *pol, struct tsm_error *err)
{
	struct ctx c = { .pol = pol, .err = err };
	char *copy, *line, *next;
	int ret = 0;

	tsm_policy_init(pol);
	snprintf(pol->path, sizeof(pol->path), "%s", path);
	copy = strdup(text);
	if (!copy)
		return tsm_err(err, ENOMEM, "out of memory");
	for (line = copy; line && !ret; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		c.line++;
		ret = parse_line(&c, line);
	}
	free(copy);
	return ret;
}

int tsm_policy_load(const char *path, struct tsm_policy *pol,
		    struct tsm_error *err)
{
	bool named = path || getenv("TSM_POLICY");
	char *buf;
	size_t n;
	FILE *f;
	int ret;

	tsm_policy_init(pol);
	if (!path)
		path = getenv("TSM_POLICY");
	if (!path)
		path = TSM_POLICY_PATH;
	f = fopen(path, "r");
	if (!f) {
		/* No file at the default place: no policy, all allowed. */
		if (errno == ENOENT && !named)
			return 0;
		return tsm_err(err, errno, "policy %s: %s", path,
			       strerror(errno));
	}
	buf = malloc(MAX_POLICY + 1);
	if (!buf) {
		fclose(f);
		return tsm_err(err, ENOMEM, "out of memory");
	}
	n = fread(buf, 1, MAX_POLICY + 1, f);
	if (ferror(f)) {
		ret = tsm_err(err, EIO, "policy %s: read error", path);
	} else if (n > MAX_POLICY) {
		ret = tsm_err(err, EFBIG, "policy %s: larger than %d bytes",
			      path, MAX_POLICY);
	} else if (memchr(buf, '\0', n)) {
		ret = tsm_err(err, EINVAL, "policy %s: not a text file", path);
	} else {
		buf[n] = '\0';
		ret = tsm_policy_parse(buf, path, pol, err);
	}
	free(buf);
	fclose(f);
	return ret;
}
