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

/*
 * socket.c, for the tunnel (tunnel_conn.c): a connect that does not block
 * (the first address only; finish it once the socket is writable), and
 * one non-blocking attempt at one message (TLTCP: a section with the
 * default deadline), -1 and errno on failure, never SIGPIPE.
 */
int tsm_connect_start(const char *host, const char *port,
		      const struct tsm_choice *ch, struct tsm_error *err);
int tsm_connect_finish(int fd, const struct tsm_choice *ch,
		       struct tsm_error *err);
ssize_t tsm_send_once(int fd, const struct tsm_choice *ch, const void *buf,
		      size_t len, int flags);

#endif /* TSM_INTERNAL_H */
