/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the library's files, not part of its interface. */
#ifndef TSM_INTERNAL_H
#define TSM_INTERNAL_H

#include "tsm.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Fills err (if any) and returns -code, so callers can "return tsm_err()". */
int tsm_err(struct tsm_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Appends to a fixed buffer, truncating; never overflows. */
void tsm_append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Index of name in the offer, or -1. */
int tsm_offer_cc(const struct tsm_offer *off, const char *name);

#endif /* TSM_INTERNAL_H */
