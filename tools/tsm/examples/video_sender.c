// SPDX-License-Identifier: GPL-2.0
/*
 * The guide's video sender (Documentation/tsm-guide.rst): frames that are
 * worthless once late, sent through libtsm, which picks TLTCP with each
 * frame a section whose deadline is the frame's lifetime (SCTP with
 * PR-SCTP where TLTCP is not offered).
 *
 *   video_sender HOST PORT [FPS [SECONDS [LIFETIME_MS]]]
 *
 * Defaults: 25 frames/s for 10 s, 200 ms lifetime; a keyframe of 30 kB
 * every second, 6 kB frames between.  The receiver is
 *   tsm recv PORT --reliability partial --msgLifetime 200 \
 *           --preserveMsgBoundaries require
 * Built by tools/tsm/Makefile so that it keeps compiling.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tsm.h"

#define KEYFRAME	30000
#define FRAME		6000

static void wait_until(struct timespec *t, long step_ns)
{
	t->tv_nsec += step_ns;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL);
}

int main(int argc, char **argv)
{
	static char frame[KEYFRAME];
	struct tsm_error err = { 0 };
	struct tsm_policy pol;
	struct tsm_choice ch;
	struct tsm_offer off;
	struct tsm_stats st;
	struct tsm_req req;
	int fps, secs, i, fd;
	struct timespec t;
	size_t len;

	if (argc < 3 || argc > 6)
		errx(2, "usage: video_sender HOST PORT [FPS [SECONDS [LIFETIME_MS]]]");
	fps = argc > 3 ? atoi(argv[3]) : 25;
	secs = argc > 4 ? atoi(argv[4]) : 10;
	if (fps < 1 || fps > 1000 || secs < 1)
		errx(2, "FPS 1..1000, SECONDS at least 1");

	/* What the application needs, in RFC 9622's words. */
	tsm_req_init(&req);
	req.reliability = TSM_REL_PARTIAL;	/* a late frame is useless */
	req.msg_lifetime_ms = argc > 5 ? atoi(argv[5]) : 200;
	req.preserve_msg_boundaries = TSM_PREF_REQUIRE;	/* frame = message */

	/* The administrator's policy, the kernel's offer, the choice. */
	if (tsm_policy_load(NULL, &pol, &err) || tsm_probe(&off, &err) ||
	    tsm_select(&req, &pol, &off, &ch, &err))
		errx(1, "%s", err.msg);
	fprintf(stderr, "%s\n", ch.why);

	fd = tsm_connect(argv[1], argv[2], &ch, &err);
	if (fd < 0)
		errx(1, "%s", err.msg);
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (i = 0; i < fps * secs; i++) {
		len = i % fps ? FRAME : KEYFRAME;
		memset(frame, 'a' + i % 26, len);
		/* One message: over TLTCP one section with the lifetime. */
		if (tsm_send(fd, &ch, frame, len, &err) < 0)
			errx(1, "frame %d: %s", i, err.msg);
		wait_until(&t, 1000000000L / fps);
	}
	if (!tsm_stats(fd, &ch, &st, &err)) {
		fprintf(stderr, "%d frames", fps * secs);
		if (st.known & TSM_ST_RTT)
			fprintf(stderr, ", rtt %u us", st.rtt_us);
		if (st.known & TSM_ST_MISSES)
			fprintf(stderr, ", %llu missed their deadline",
				(unsigned long long)st.deadline_misses);
		fprintf(stderr, "\n");
	}
	tsm_close(fd, &ch, 10);
	return 0;
}
