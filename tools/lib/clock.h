/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tools' clock: CLOCK_MONOTONIC in nanoseconds, which network
 * namespaces share, so that a sender's timestamps are a receiver's.
 */
#ifndef TOOLS_CLOCK_H
#define TOOLS_CLOCK_H

#include <stdint.h>

#define NSEC_PER_SEC	1000000000ull

uint64_t now_ns(void);

static inline uint64_t now_ms(void)
{
	return now_ns() / 1000000;
}

/*
 * Sleep until CLOCK_MONOTONIC reads when_ns (at once if it is past).
 * Returns 0, or EINTR if a signal handler ran first, so that a caller's
 * stop flag is seen; a caller that has no such flag sleeps again.
 */
int sleep_until(uint64_t when_ns);

#endif /* TOOLS_CLOCK_H */
