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

/* The sender's options, besides the stream's. */
struct send_opts {
	int family;
	bool json, verbose, per_frame, relative;
	double sndq, notsent;	/* bytes; 0: the module's */
	const char *outname;
};

/* The stream to send: its schedule, descriptor, units and payloads. */
struct plan {
	struct stream_params p;
	struct schedule s;
	char desc[DESC_MAX + 1];
	int desc_len;
	struct unit *units;
	uint32_t nunits;
	uint8_t **payload;	/* by storage index */
	double last_deadline;	/* s after the start */
};

/* What the sender counts. */
struct send_stats {
	uint64_t frames[FT_N], bytes[FT_N];
	uint64_t calls, units_late, total;
	uint64_t t0, t_end;	/* ns */
	double max_lag;		/* s */
	struct tl_info ti;
};

#define MAX_UNIT	(MAX_GOP * 2 + 1)

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

/* The stream's options. */
static bool stream_opt(int c, const char *arg, struct stream_params *p)
{
	switch (c) {
	case 'g':
		if (strlen(arg) > MAX_GOP)
			cli_die("GOP pattern longer than %d", MAX_GOP);
		strcpy(p->gop, arg);
		return true;
	case 'r':
		p->fps = parse_num(arg, "frame rate");
		return true;
	case 's':
		if (sscanf(arg, "%u,%u,%u", &p->size[FT_I], &p->size[FT_P],
			   &p->size[FT_B]) != 3)
			cli_die("bad sizes: %s (I,P,B in bytes)", arg);
		return true;
	case 1:
		p->vary = parse_num(arg, "size variation");
		return true;
	case 2:
		p->seed = parse_num(arg, "seed");
		return true;
	case 'b':
		p->buffer = parse_num(arg, "buffer");
		return true;
	case 't':
		p->duration = parse_num(arg, "duration");
		return true;
	case 4:
		if (!strcmp(arg, "paper"))
			p->deadlines = DL_PAPER;
		else if (!strcmp(arg, "frame"))
			p->deadlines = DL_FRAME;
		else
			cli_die("bad deadline mode %s: paper or frame", arg);
		return true;
	}
	return false;
}

/* TLTCP's queue options. */
static bool queue_opt(int c, const char *arg, struct send_opts *so)
{
	switch (c) {
	case 6:
		so->sndq = parse_num(arg, "TL_SNDQ_LIMIT");
		if (so->sndq > TL_MAX_SNDQ_LIMIT)
			cli_die("TL_SNDQ_LIMIT at most %u", TL_MAX_SNDQ_LIMIT);
		return true;
	case 7:
		so->notsent = parse_num(arg, "TL_NOTSENT");
		if (so->notsent < TL_MIN_NOTSENT ||
		    so->notsent > TL_MAX_NOTSENT)
			cli_die("TL_NOTSENT: %u to %u bytes", TL_MIN_NOTSENT,
				TL_MAX_NOTSENT);
		return true;
	}
	return false;
}

/* How to send, and what to say. */
static bool send_opt(int c, const char *arg, struct send_opts *so)
{
	switch (c) {
	case '4':
		so->family = AF_INET;
		return true;
	case '6':
		so->family = AF_INET6;
		return true;
	case 3:
		so->per_frame = true;
		return true;
	case 5:
		so->relative = true;
		return true;
	case 'J':
		so->json = true;
		return true;
	case 'o':
		so->outname = arg;
		return true;
	case 'v':
		so->verbose = true;
		return true;
	}
	return queue_opt(c, arg, so);
}

static void parse_args(int argc, char **argv, struct stream_params *p,
		       struct send_opts *so)
{
	int c;

	stream_defaults(p);
	while ((c = getopt_long(argc, argv, "46g:r:s:b:t:Jo:vh", lopts,
				NULL)) != -1) {
		if (stream_opt(c, optarg, p) || send_opt(c, optarg, so))
			continue;
		if (c == 'h')
			usage(stdout, 0);
		usage(stderr, 2);
	}
	if (argc - optind != 2)
		usage(stderr, 2);
}

/* The schedule, the descriptor, and what each sendmsg carries: a GOP
 * from its I frame in storage order (with the previous GOP's last B
 * frames, which follow it), or one frame.
 */
static void plan_stream(struct plan *pl, bool per_frame)
{
	const char *why = stream_check(&pl->p);
	uint32_t k;

	if (why)
		cli_die("%s", why);
	if (schedule_build(&pl->s, &pl->p))
		cli_die("schedule: %s", strerror(errno));
	pl->desc_len = desc_format(&pl->p, pl->s.n, pl->desc,
				   sizeof(pl->desc));
	if (pl->desc_len <= 0 || pl->desc_len >= (int)sizeof(pl->desc))
		cli_die("descriptor too long");
	pl->units = calloc(pl->s.n, sizeof(*pl->units));
	pl->payload = calloc(pl->s.n, sizeof(*pl->payload));
	if (!pl->units || !pl->payload)
		cli_die("out of memory");
	for (k = 0; k < pl->s.n; k++) {
		const struct frame *f = &pl->s.f[pl->s.order[k]];

		if (per_frame || f->type == FT_I || !pl->nunits) {
			pl->units[pl->nunits].first = k;
			pl->units[pl->nunits].due = per_frame ? k / pl->p.fps :
						    f->display / pl->p.fps;
			pl->nunits++;
		}
		pl->units[pl->nunits - 1].count++;
		pl->payload[k] = malloc(f->size);
		if (!pl->payload[k])
			cli_die("out of memory");
		frame_fill(f, pl->payload[k]);
		if (f->deadline > pl->last_deadline)
			pl->last_deadline = f->deadline;
	}
}

static void plan_free(struct plan *pl)
{
	uint32_t k;

	for (k = 0; k < pl->s.n; k++)
		free(pl->payload[k]);
	free(pl->payload);
	free(pl->units);
	schedule_free(&pl->s);
}

/* Connected, with tltcp attached and its queue limits set. */
static int open_stream(const char *host, const char *port,
		       const struct send_opts *so)
{
	int fd = connect_to(host, port, so->family);
	uint32_t v;

	tltcp_attach(fd);
	if (so->sndq) {
		v = so->sndq;
		if (setsockopt(fd, SOL_TLTCP, TL_SNDQ_LIMIT, &v, sizeof(v)))
			cli_die("setsockopt TL_SNDQ_LIMIT: %s", strerror(errno));
	}
	if (so->notsent) {
		v = so->notsent;
		if (setsockopt(fd, SOL_TLTCP, TL_NOTSENT, &v, sizeof(v)))
			cli_die("setsockopt TL_NOTSENT: %s", strerror(errno));
	}
	return fd;
}

/* Unit u's sections (the descriptor first in unit 0), with their
 * absolute deadlines.
 */
static void unit_sections(const struct plan *pl, uint32_t u,
			  uint64_t t0, struct iovec *iov, uint64_t *dl,
			  struct send_stats *st)
{
	const struct unit *un = &pl->units[u];
	uint32_t i = 0, j;

	if (u == 0) {
		iov[0].iov_base = (void *)pl->desc;
		iov[0].iov_len = pl->desc_len;
		dl[0] = t0 + (uint64_t)llround(pl->s.f[0].deadline * 1e9);
		i = 1;
	}
	for (j = 0; j < un->count; j++, i++) {
		uint32_t sk = un->first + j;
		const struct frame *f = &pl->s.f[pl->s.order[sk]];

		iov[i].iov_base = pl->payload[sk];
		iov[i].iov_len = f->size;
		dl[i] = t0 + (uint64_t)llround(f->deadline * 1e9);
		st->frames[f->type]++;
		st->bytes[f->type] += f->size;
	}
}

/* Sleep until unit u is due; how late it is then, in seconds. */
static double unit_wait(const struct plan *pl, uint32_t u,
			struct send_stats *st)
{
	double lag;

	while (sleep_until(st->t0 + (uint64_t)llround(pl->units[u].due * 1e9)) ==
	       EINTR)
		;
	lag = (now_ns() - st->t0) / 1e9 - pl->units[u].due;
	if (lag > st->max_lag)
		st->max_lag = lag;
	if (lag > 0.5 / pl->p.fps)
		st->units_late++;
	return lag;
}

/* One sendmsg(MSG_TL) of unit u's sections, when it is due. */
static void send_unit(int fd, const struct plan *pl, uint32_t u,
		      const struct send_opts *so, struct send_stats *st)
{
	uint32_t n = pl->units[u].count + (u == 0), j;
	union {
		char buf[TL_DEADLINES_SPACE(MAX_UNIT)];
		struct cmsghdr align;
	} ctl;
	uint64_t dl[MAX_UNIT], now, want = 0;
	struct iovec iov[MAX_UNIT];
	struct msghdr msg = { 0 };
	ssize_t ret;
	double lag;

	if (n > MAX_UNIT)
		cli_die("a GOP of more than %d frames in storage order",
			MAX_GOP * 2);
	lag = unit_wait(pl, u, st);
	unit_sections(pl, u, st->t0, iov, dl, st);
	for (j = 0; j < n; j++)
		want += iov[j].iov_len;
	if (so->relative) {
		/* Relative to the call; an overdue section gets 1 ns. */
		now = now_ns();
		for (j = 0; j < n; j++)
			dl[j] = dl[j] > now ? dl[j] - now : 1;
	}
	msg.msg_iov = iov;
	msg.msg_iovlen = n;
	msg.msg_control = ctl.buf;
	tl_put_deadlines(&msg, so->relative ? TL_DEADLINE : TL_DEADLINE_ABS,
			 dl, n);
	ret = sendmsg(fd, &msg, MSG_TL);
	st->calls++;
	if (ret < 0)
		cli_die("sendmsg(MSG_TL) of %u sections: %s", n, strerror(errno));
	if ((uint64_t)ret != want)
		cli_die("sendmsg(MSG_TL) queued %zd of %llu bytes", ret,
			(unsigned long long)want);
	st->total += ret;
	if (so->verbose)
		fprintf(stderr, "%8.3f s: %u sections, %zd bytes, %.1f ms "
			"behind schedule\n", (now_ns() - st->t0) / 1e9, n, ret,
			lag * 1e3);
}

/* Every section is sent or abandoned by the last deadline; the receiver
 * closes once it has read them all.
 */
static void wait_close(int fd, uint64_t t0, double last_deadline)
{
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
}

static void report_json(FILE *out, const struct plan *pl,
			const struct send_opts *so,
			const struct send_stats *st)
{
	int t;

	fprintf(out, "{\n  \"role\": \"sender\",\n  \"stream\": ");
	params_json(out, &pl->p, pl->s.n, "  ");
	fprintf(out, ",\n  \"mode\": \"%s\",\n  \"deadline_cmsg\": \"%s\","
		"\n  \"frames\": {", so->per_frame ? "per-frame" : "per-gop",
		so->relative ? "TL_DEADLINE" : "TL_DEADLINE_ABS");
	for (t = 0; t < FT_N; t++)
		fprintf(out, "%s\n    \"%s\": {\"offered\": %llu, "
			"\"bytes\": %llu}", t ? "," : "",
			frame_type_name[t], (unsigned long long)st->frames[t],
			(unsigned long long)st->bytes[t]);
	fprintf(out, "\n  },\n  \"descriptor_bytes\": %d,\n"
		"  \"sections\": %u,\n  \"bytes\": %llu,\n"
		"  \"sendmsg_calls\": %llu,\n  \"units_late\": %llu,\n"
		"  \"max_lag_ms\": %.3f,\n  \"elapsed\": %.3f,\n"
		"  \"tl_info\": ", pl->desc_len, pl->s.n + 1,
		(unsigned long long)st->total, (unsigned long long)st->calls,
		(unsigned long long)st->units_late, st->max_lag * 1e3,
		(st->t_end - st->t0) / 1e9);
	tl_info_json(out, &st->ti, "  ");
	fprintf(out, "\n}\n");
}

static void report_text(FILE *out, const struct plan *pl,
			const struct send_stats *st)
{
	const struct stream_params *p = &pl->p;
	int t;

	fprintf(out, "streamed %u frames (%s at %g/s, buffer %g s, "
		"deadlines: %s) in %llu sendmsg calls, %.1f s\n",
		pl->s.n, p->gop, p->fps, p->buffer,
		p->deadlines == DL_FRAME ? "frame" : "paper",
		(unsigned long long)st->calls, (st->t_end - st->t0) / 1e9);
	for (t = 0; t < FT_N; t++)
		fprintf(out, "  %s frames %6llu  %10llu bytes\n",
			frame_type_name[t], (unsigned long long)st->frames[t],
			(unsigned long long)st->bytes[t]);
	fprintf(out, "  behind schedule: %llu sendmsg calls, at most "
		"%.1f ms\n", (unsigned long long)st->units_late,
		st->max_lag * 1e3);
	tl_info_table(out, &st->ti, false);
}

int main(int argc, char **argv)
{
	struct send_opts so = { .family = AF_UNSPEC, .sndq = 8 << 20 };
	struct plan pl = { 0 };
	struct send_stats st = { 0 };
	FILE *out = stdout;
	uint32_t u;
	int fd;

	cli_prog = "tltcp_stream_send";
	parse_args(argc, argv, &pl.p, &so);
	plan_stream(&pl, so.per_frame);
	if (so.outname) {
		out = fopen(so.outname, "w");
		if (!out)
			cli_die("%s: %s", so.outname, strerror(errno));
	}
	signal(SIGPIPE, SIG_IGN);
	fd = open_stream(argv[optind], argv[optind + 1], &so);
	st.t0 = now_ns();
	for (u = 0; u < pl.nunits; u++)
		send_unit(fd, &pl, u, &so, &st);
	if (shutdown(fd, SHUT_WR))
		cli_die("shutdown: %s", strerror(errno));
	wait_close(fd, st.t0, pl.last_deadline);
	st.t_end = now_ns();
	if (tl_get_info(fd, &st.ti))
		cli_die("getsockopt TL_INFO: %s", strerror(errno));
	close(fd);
	if (so.json)
		report_json(out, &pl, &so, &st);
	else
		report_text(out, &pl, &st);
	if (out != stdout && fclose(out))
		cli_die("%s: %s", so.outname, strerror(errno));
	plan_free(&pl);
	return 0;
}
