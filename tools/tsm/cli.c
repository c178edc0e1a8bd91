// SPDX-License-Identifier: GPL-2.0
/* The tsm command line's shared argument handling (cli.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

const char *cli_prog = "tsm";

void cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

long long cli_integer(const char *opt, const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end || errno)
		cli_usage_error("%s: '%s' is not a whole number", opt, s);
	return v;
}

double cli_number(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || isnan(v) || v < lo || v > hi)
		cli_usage_error("%s: '%s' is not a number from %g to %g", opt, s,
				lo, hi);
	return v;
}
