// SPDX-License-Identifier: GPL-2.0
/* Numbers on a command line (parse.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "parse.h"

/* k/K, m/M, g/G: the multiplier of a suffix, 1 for none. */
static double suffix_mul(char c)
{
	if (c == 'k' || c == 'K')
		return 1e3;
	if (c == 'm' || c == 'M')
		return 1e6;
	if (c == 'g' || c == 'G')
		return 1e9;
	return 1;
}

enum num_err num_parse(const char *s, unsigned int flags, double lo,
		       double hi, double *v)
{
	double mul;
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || !isfinite(*v))
		return NUM_BAD;
	mul = flags & NUM_SUFFIX ? suffix_mul(*end) : 1;
	if (mul != 1) {
		*v *= mul;
		end++;
	}
	if (*end)
		return NUM_TRAILING;
	if (*v < lo || *v > hi)
		return NUM_RANGE;
	return NUM_OK;
}
