// SPDX-License-Identifier: GPL-2.0
/* The tools' clock (clock.h). */
#include <time.h>

#include "clock.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int sleep_until(uint64_t when_ns)
{
	struct timespec ts = {
		.tv_sec = when_ns / NSEC_PER_SEC,
		.tv_nsec = when_ns % NSEC_PER_SEC,
	};

	return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}
