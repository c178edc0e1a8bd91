// SPDX-License-Identifier: GPL-2.0
/*
 * tltcp_stream_send: stream an MPEG-like video over time-lined TCP.
 *
 *   tltcp_stream_send HOST PORT [options]
 *
 * Connects, attaches the "tltcp" ULP and sends a synthetic video: frames
 * of a GOP pattern (default IBBPBBPBBPBB) at a frame rate (default 25/s),
 * each frame one section, in storage order, with the deadlines of
 * Mukherjee & Brecht's section 4 (stream.c): an I frame and its P frames
 * share the I frame's playout time, a B frame takes its earlier
 * reference's.  Playout times are start + buffer + display index / fps.
 * One sendmsg(MSG_TL) per GOP, at the time its I frame is due (or, with
 * --per-frame, one per frame), carries the sections and their absolute
 * deadlines (TL_DEADLINE_ABS; --relative: TL_DEADLINE).  Section 0 is a
 * one-line descriptor of the stream, so the receiver needs no options.
 * At the end: shutdown, wait for the receiver to close, print TL_INFO.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "parse.h"
#include "stream.h"

static void usage(FILE *out, int status)
{
	fprintf(out,
"usage: %s HOST PORT [options]\n"
"  -4, -6                 IPv4 or IPv6 only (default: as HOST resolves)\n"
"  -g, --gop PATTERN      frame types in display order (IBBPBBPBBPBB)\n"
"  -r, --fps N            frames per second (25)\n"
"  -s, --sizes I,P,B      frame sizes in bytes (40000,15000,6000)\n"
"      --vary PCT         vary sizes by up to +-PCT %% (0), --seed N (1)\n"
"  -b, --buffer SECONDS   playout delay, the receiver's start-up buffer (1)\n"
"  -t, --duration SECONDS length of the video (10)\n"
"      --per-frame        one sendmsg per frame when due (default: per GOP)\n"
"      --deadlines MODE   paper (default): I and its P frames share the I\n"
"                         frame's playout time, B frames their earlier\n"
"                         reference's; frame: each frame its own playout time\n"
"      --relative         relative deadlines (TL_DEADLINE, not _ABS)\n"
"      --sndq BYTES       TL_SNDQ_LIMIT (8388608; 0: the socket's sndbuf)\n"
"      --notsent BYTES    TL_NOTSENT (default: the module's, two MSS)\n"
"  -J, --json             the report in JSON\n"
"  -o, --output FILE      write the report to FILE\n"
"  -v, --verbose          one line per sendmsg on stderr\n",
		cli_prog);
	exit(status);
}

static double parse_num(const char *s, const char *what)
{
	double v;

	if (num_parse(s, 0, 0, INFINITY, &v))
		cli_die("bad %s: %s", what, s);
	return v;
}

static int connect_to(const char *host, const char *port, int family)
{
	struct addrinfo hints = {
		.ai_family = family, .ai_socktype = SOCK_STREAM,
		.ai_protocol = IPPROTO_TCP,
	}, *res, *ai;
	int fd = -1, err, saved = 0;

	err = getaddrinfo(host, port, &hints, &res);
	if (err)
		cli_die("%s port %s: %s", host, port, gai_strerror(err));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		cli_die("connect to %s port %s: %s", host, port, strerror(saved));
	return fd;
}

struct unit {			/* what one sendmsg carries */
	uint32_t first, count;	/* storage indices */
	double due;		/* s after the start */
};

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "gop", required_argument, NULL, 'g' },
		{ "fps", required_argument, NULL, 'r' },
		{ "sizes", required_argument, NULL, 's' },
		{ "vary", required_argument, NULL, 1 },
		{ "seed", required_argument, NULL, 2 },
		{ "buffer", required_argument, NULL, 'b' },
		{ "duration", required_argument, NULL, 't' },
		{ "per-frame", no_argument, NULL, 3 },
		{ "deadlines", required_argument, NULL, 4 },
		{ "relative", no_argument, NULL, 5 },
		{ "sndq", required_argument, NULL, 6 },
		{ "notsent", required_argument, NULL, 7 },
		{ "json", no_argument, NULL, 'J' },
		{ "output", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stream_params p;
	struct schedule s;
	int family = AF_UNSPEC, json = 0, verbose = 0, per_frame = 0;
	int relative = 0, c, fd, t;
	double sndq = 8 << 20, notsent = 0;
	const char *outname = NULL, *why;
	FILE *out = stdout;
	uint64_t frames[FT_N] = { 0 }, bytes[FT_N] = { 0 };
	uint64_t calls = 0, units_late = 0, t0, t_end, total = 0;
	double max_lag = 0, last_deadline = 0;
	struct unit *units;
	uint32_t nunits = 0, k, u;
	char desc[DESC_MAX + 1];
	int desc_len;
	uint8_t **payload;
	struct tl_info ti;

	cli_prog = "tltcp_stream_send";
	stream_defaults(&p);
	while ((c = getopt_long(argc, argv, "46g:r:s:b:t:Jo:vh", lopts,
				NULL)) != -1) {
		switch (c) {
		case '4':
			family = AF_INET;
			break;
		case '6':
			family = AF_INET6;
			break;
		case 'g':
			if (strlen(optarg) > MAX_GOP)
				cli_die("GOP pattern longer than %d", MAX_GOP);
			strcpy(p.gop, optarg);
			break;
		case 'r':
			p.fps = parse_num(optarg, "frame rate");
			break;
		case 's':
			if (sscanf(optarg, "%u,%u,%u", &p.size[FT_I],
				   &p.size[FT_P], &p.size[FT_B]) != 3)
				cli_die("bad sizes: %s (I,P,B in bytes)", optarg);
			break;
		case 1:
			p.vary = parse_num(optarg, "size variation");
			break;
		case 2:
			p.seed = parse_num(optarg, "seed");
			break;
		case 'b':
			p.buffer = parse_num(optarg, "buffer");
			break;
		case 't':
			p.duration = parse_num(optarg, "duration");
			break;
		case 3:
			per_frame = 1;
			break;
		case 4:
			if (!strcmp(optarg, "paper"))
				p.deadlines = DL_PAPER;
			else if (!strcmp(optarg, "frame"))
				p.deadlines = DL_FRAME;
			else
				cli_die("bad deadline mode %s: paper or frame", optarg);
			break;
		case 5:
			relative = 1;
			break;
		case 6:
			sndq = parse_num(optarg, "TL_SNDQ_LIMIT");
			if (sndq > TL_MAX_SNDQ_LIMIT)
				cli_die("TL_SNDQ_LIMIT at most %u", TL_MAX_SNDQ_LIMIT);
			break;
		case 7:
			notsent = parse_num(optarg, "TL_NOTSENT");
			if (notsent < TL_MIN_NOTSENT || notsent > TL_MAX_NOTSENT)
				cli_die("TL_NOTSENT: %u to %u bytes", TL_MIN_NOTSENT,
					TL_MAX_NOTSENT);
			break;
		case 'J':
			json = 1;
			break;
		case 'o':
			outname = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (argc - optind != 2)
		usage(stderr, 2);
	why = stream_check(&p);
	if (why)
		cli_die("%s", why);
	if (schedule_build(&s, &p))
		cli_die("schedule: %s", strerror(errno));
	desc_len = desc_format(&p, s.n, desc, sizeof(desc));
	if (desc_len <= 0 || desc_len >= (int)sizeof(desc))
		cli_die("descriptor too long");

	/* What each sendmsg carries: a GOP from its I frame in storage order
	 * (with the previous GOP's last B frames, which follow it), or one
	 * frame.
	 */
	units = calloc(s.n, sizeof(*units));
	payload = calloc(s.n, sizeof(*payload));
	if (!units || !payload)
		cli_die("out of memory");
	for (k = 0; k < s.n; k++) {
		const struct frame *f = &s.f[s.order[k]];

		if (per_frame || f->type == FT_I || !nunits) {
			units[nunits].first = k;
			units[nunits].due = per_frame ? k / p.fps :
					    f->display / p.fps;
			nunits++;
		}
		units[nunits - 1].count++;
		payload[k] = malloc(f->size);
		if (!payload[k])
			cli_die("out of memory");
		frame_fill(f, payload[k]);
		if (f->deadline > last_deadline)
			last_deadline = f->deadline;
	}

	if (outname) {
		out = fopen(outname, "w");
		if (!out)
			cli_die("%s: %s", outname, strerror(errno));
	}
	signal(SIGPIPE, SIG_IGN);
	fd = connect_to(argv[optind], argv[optind + 1], family);
	tltcp_attach(fd);
	if (sndq) {
		uint32_t v = sndq;

		if (setsockopt(fd, SOL_TLTCP, TL_SNDQ_LIMIT, &v, sizeof(v)))
			cli_die("setsockopt TL_SNDQ_LIMIT: %s", strerror(errno));
	}
	if (notsent) {
		uint32_t v = notsent;

		if (setsockopt(fd, SOL_TLTCP, TL_NOTSENT, &v, sizeof(v)))
			cli_die("setsockopt TL_NOTSENT: %s", strerror(errno));
	}

	t0 = now_ns();
	for (u = 0; u < nunits; u++) {
		uint32_t n = units[u].count + (u == 0), i = 0, j;
		struct iovec iov[MAX_GOP * 2 + 1];
		union {
			char buf[TL_DEADLINES_SPACE(MAX_GOP * 2 + 1)];
			struct cmsghdr align;
		} ctl;
		uint64_t dl[MAX_GOP * 2 + 1], now, want = 0;
		struct msghdr msg = { 0 };
		ssize_t ret;
		double lag;

		if (n > MAX_GOP * 2 + 1)
			cli_die("a GOP of more than %d frames in storage order",
				MAX_GOP * 2);
		while (sleep_until(t0 + (uint64_t)llround(units[u].due * 1e9)) ==
		       EINTR)
			;
		now = now_ns();
		lag = (now - t0) / 1e9 - units[u].due;
		if (lag > max_lag)
			max_lag = lag;
		if (lag > 0.5 / p.fps)
			units_late++;
		if (u == 0) {
			iov[0].iov_base = desc;
			iov[0].iov_len = desc_len;
			dl[0] = t0 + (uint64_t)llround(s.f[0].deadline * 1e9);
			i = 1;
		}
		for (j = 0; j < units[u].count; j++, i++) {
			uint32_t sk = units[u].first + j;
			const struct frame *f = &s.f[s.order[sk]];

			iov[i].iov_base = payload[sk];
			iov[i].iov_len = f->size;
			dl[i] = t0 + (uint64_t)llround(f->deadline * 1e9);
			frames[f->type]++;
			bytes[f->type] += f->size;
		}
		for (j = 0; j < n; j++)
			want += iov[j].iov_len;
		if (relative) {
			/* Relative to the call; an overdue section gets 1 ns. */
			now = now_ns();
			for (j = 0; j < n; j++)
				dl[j] = dl[j] > now ? dl[j] - now : 1;
		}
		msg.msg_iov = iov;
		msg.msg_iovlen = n;
		msg.msg_control = ctl.buf;
		tl_put_deadlines(&msg, relative ? TL_DEADLINE : TL_DEADLINE_ABS,
				 dl, n);
		ret = sendmsg(fd, &msg, MSG_TL);
		calls++;
		if (ret < 0)
			cli_die("sendmsg(MSG_TL) of %u sections: %s", n,
				strerror(errno));
		if ((uint64_t)ret != want)
			cli_die("sendmsg(MSG_TL) queued %zd of %llu bytes", ret,
				(unsigned long long)want);
		total += ret;
		if (verbose)
			fprintf(stderr, "%8.3f s: %u sections, %zd bytes, %.1f ms "
				"behind schedule\n", (now_ns() - t0) / 1e9, n,
				ret, lag * 1e3);
	}
	if (shutdown(fd, SHUT_WR))
		cli_die("shutdown: %s", strerror(errno));

	/* Every section is sent or abandoned by the last deadline; the
	 * receiver closes once it has read them all.
	 */
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = (int64_t)(t0 + (uint64_t)((last_deadline + 60) *
					 1e9)) - (int64_t)now_ns();
		char buf[4096];
		ssize_t r;

		if (left <= 0)
			cli_die("the receiver did not close the connection");
		if (poll(&pfd, 1, (int)(left / 1000000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			cli_die("poll: %s", strerror(errno));
		}
		if (!pfd.revents)
			continue;
		r = recv(fd, buf, sizeof(buf), 0);
		if (!r)
			break;
		if (r < 0 && errno != EINTR && errno != EAGAIN)
			cli_die("waiting for the receiver to close: %s",
				strerror(errno));
	}
	t_end = now_ns();
	if (tl_get_info(fd, &ti))
		cli_die("getsockopt TL_INFO: %s", strerror(errno));
	close(fd);

	if (json) {
		fprintf(out, "{\n  \"role\": \"sender\",\n  \"stream\": ");
		params_json(out, &p, s.n, "  ");
		fprintf(out, ",\n  \"mode\": \"%s\",\n  \"deadline_cmsg\": \"%s\","
			"\n  \"frames\": {", per_frame ? "per-frame" : "per-gop",
			relative ? "TL_DEADLINE" : "TL_DEADLINE_ABS");
		for (t = 0; t < FT_N; t++)
			fprintf(out, "%s\n    \"%s\": {\"offered\": %llu, "
				"\"bytes\": %llu}", t ? "," : "",
				frame_type_name[t], (unsigned long long)frames[t],
				(unsigned long long)bytes[t]);
		fprintf(out, "\n  },\n  \"descriptor_bytes\": %d,\n"
			"  \"sections\": %u,\n  \"bytes\": %llu,\n"
			"  \"sendmsg_calls\": %llu,\n  \"units_late\": %llu,\n"
			"  \"max_lag_ms\": %.3f,\n  \"elapsed\": %.3f,\n"
			"  \"tl_info\": ", desc_len, s.n + 1,
			(unsigned long long)total, (unsigned long long)calls,
			(unsigned long long)units_late, max_lag * 1e3,
			(t_end - t0) / 1e9);
		tl_info_json(out, &ti, "  ");
		fprintf(out, "\n}\n");
	} else {
		fprintf(out, "streamed %u frames (%s at %g/s, buffer %g s, "
			"deadlines: %s) in %llu sendmsg calls, %.1f s\n",
			s.n, p.gop, p.fps, p.buffer,
			p.deadlines == DL_FRAME ? "frame" : "paper",
			(unsigned long long)calls, (t_end - t0) / 1e9);
		for (t = 0; t < FT_N; t++)
			fprintf(out, "  %s frames %6llu  %10llu bytes\n",
				frame_type_name[t], (unsigned long long)frames[t],
				(unsigned long long)bytes[t]);
		fprintf(out, "  behind schedule: %llu sendmsg calls, at most "
			"%.1f ms\n", (unsigned long long)units_late,
			max_lag * 1e3);
		tl_info_table(out, &ti, false);
	}
	if (out != stdout && fclose(out))
		cli_die("%s: %s", outname, strerror(errno));
	for (k = 0; k < s.n; k++)
		free(payload[k]);
	free(payload);
	free(units);
	schedule_free(&s);
	return 0;
}
