/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Numbers on a command line: the whole argument, finite, within bounds.
 * Each tool words its own message for each way a number can be wrong.
 */
#ifndef TOOLS_PARSE_H
#define TOOLS_PARSE_H

enum num_err {
	NUM_OK,
	NUM_BAD,		/* not a (finite) number */
	NUM_TRAILING,		/* characters after it */
	NUM_RANGE,		/* outside lo..hi */
};

/* A k, M or G after the number multiplies it by 1e3, 1e6 or 1e9. */
#define NUM_SUFFIX	1u

/* s as a number in *v, checked against lo..hi after any suffix. */
enum num_err num_parse(const char *s, unsigned int flags, double lo,
		       double hi, double *v);

#endif /* TOOLS_PARSE_H */
