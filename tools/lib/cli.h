/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A command line's errors, worded the same way in every tool: a bad
 * argument is "PROGRAM: why" and exit status 2 (after the program's
 * synopsis, if it has one to show), a run-time failure "PROGRAM: why" and
 * exit status 1.  Numbers are parsed with the same strictness.
 */
#ifndef TOOLS_CLI_H
#define TOOLS_CLI_H

/* What names the program in messages: "tsm", "tsm tunnel", "flowgen". */
extern const char *cli_prog;

/* Printed to stderr after a usage error's message, if set. */
extern void (*cli_synopsis)(void);

void __attribute__((noreturn, format(printf, 1, 2)))
cli_usage_error(const char *fmt, ...);

void __attribute__((noreturn, format(printf, 1, 2)))
cli_die(const char *fmt, ...);

/* A whole decimal number, the whole of s; otherwise a usage error. */
long long cli_integer(const char *opt, const char *s);

/* A number from lo to hi, the whole of s; otherwise a usage error. */
double cli_number(const char *opt, const char *s, double lo, double hi);

#endif /* TOOLS_CLI_H */
