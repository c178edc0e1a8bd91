// SPDX-License-Identifier: GPL-2.0
/* A command line's errors and numbers (cli.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "parse.h"

const char *cli_prog = "?";	/* each program sets its own */
void (*cli_synopsis)(void);

static void __attribute__((format(printf, 1, 0)))
cli_vmsg(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", cli_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(fmt, ap);
	va_end(ap);
	if (cli_synopsis)
		cli_synopsis();
	exit(2);
}

void cli_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(fmt, ap);
	va_end(ap);
	exit(1);
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
	double v;

	if (num_parse(s, 0, lo, hi, &v))
		cli_usage_error("%s: '%s' is not a number from %g to %g", opt, s,
				lo, hi);
	return v;
}
