/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tsm command line's shared argument handling: every subcommand
 * reports a bad argument the same way ("PROGRAM: why", exit status 2) and
 * parses numbers with the same strictness.
 */
#ifndef TSM_CLI_H
#define TSM_CLI_H

/* What names the program in messages: "tsm", "tsm tunnel". */
extern const char *cli_prog;

void __attribute__((noreturn, format(printf, 1, 2)))
cli_usage_error(const char *fmt, ...);

/* A whole decimal number, the whole of s; otherwise a usage error. */
long long cli_integer(const char *opt, const char *s);

/* A number from lo to hi, the whole of s; otherwise a usage error. */
double cli_number(const char *opt, const char *s, double lo, double hi);

#endif /* TSM_CLI_H */
