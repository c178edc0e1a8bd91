// SPDX-License-Identifier: GPL-2.0
/*
 * tltcp_stream_recv: receive a tltcp_stream_send video and simulate its
 * playout.
 *
 *   tltcp_stream_recv PORT [options]
 *
 * Accepts one connection, attaches the "tltcp" ULP and reads with
 * recvmsg(MSG_TL): every call returns one piece of one section (TL_DATA)
 * or one gap (TL_GAP) with a struct tl_record saying where it belongs.
 * Those records alone tell which bytes of which section (frame) arrived;
 * the frame headers in the payload and the payload pattern only verify
 * them.  Section 0 is the sender's descriptor of the stream (frame types,
 * rate, buffer), from which the schedule is rebuilt (stream.c).
 *
 * Playout starts when the first byte of the stream arrives: frame d is
 * displayed at that time + buffer + d / fps if it arrived whole by then
 * and its references are displayable (P: the previous I or P frame; B:
 * the previous and the next one).  The report counts, per frame type,
 * frames received whole, partially or not at all (all gaps), whole but
 * late, and displayed, and the gaps and their bytes.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "stream.h"

#define RBUF	(64 << 10)

static void usage(FILE *out, int status)
{
	fprintf(out,
"usage: %s PORT [options]\n"
"  -4, -6                 listen on IPv4 (default) or IPv6\n"
"  -B, --bind ADDR        listen on ADDR (its family)\n"
"  -b, --buffer SECONDS   playout delay (default: the sender's)\n"
"  -T, --timeout SECONDS  give up after this long without data (60, 0: never)\n"
"  -J, --json             the report in JSON\n"
"  -o, --output FILE      write the report to FILE\n"
"  -f, --frames FILE      one CSV line per frame to FILE\n"
"  -v, --verbose          print every record on stderr\n",
		cli_prog);
	exit(status);
}

/* What arrived of one section. */
struct section {
	bool seen, ended;
	uint32_t len;
	uint32_t next_off;	/* sec_off of the next record expected */
	uint32_t data, gap;	/* bytes */
	uint64_t done_ns;	/* when its last piece arrived */
	uint64_t last_data_ns;
	uint8_t hdr[FRAME_HDR_LEN];
	uint32_t hdr_have;	/* header bytes received as data */
};

struct counts {
	uint64_t total, whole, partial, lost, missing, late, on_time, displayed;
	uint64_t bytes, data, gap;
};

struct recv_state {
	struct section desc_sec;
	char desc[DESC_MAX];
	bool have_schedule;
	struct schedule s;
	struct section *sec;		/* frames, by storage index */
	uint64_t t_first;		/* first byte of the stream */
	uint64_t stream_off;		/* data + gap bytes so far */
	uint64_t cur;			/* section being received */
	bool started, in_section;
	/* totals, all sections */
	uint64_t records, data_records, gap_records, gaps, data_bytes;
	uint64_t gap_bytes, sections;
	uint64_t record_errors, header_errors, corrupt_bytes, gap_not_zero;
	uint64_t last_gap_end, last_gap_sec;
	bool any_gap;
	int verbose;
};

static int listen_on(const char *addr, const char *port, int family)
{
	struct addrinfo hints = {
		.ai_family = family, .ai_socktype = SOCK_STREAM,
		.ai_protocol = IPPROTO_TCP, .ai_flags = AI_PASSIVE,
	}, *res;
	int fd, err, one = 1;

	if (addr)
		hints.ai_flags |= AI_NUMERICHOST;
	err = getaddrinfo(addr, port, &hints, &res);
	if (err)
		cli_die("%s port %s: %s", addr ? addr : "*", port,
			gai_strerror(err));
	fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
	if (fd < 0)
		cli_die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (res->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 1))
		cli_die("listen on port %s: %s", port, strerror(errno));
	freeaddrinfo(res);
	return fd;
}

/* Wait until fd is readable; false after timeout_s without. */
static bool wait_readable(int fd, double timeout_s)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret;

	do {
		ret = poll(&pfd, 1, timeout_s > 0 ? (int)(timeout_s * 1000) : -1);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		cli_die("poll: %s", strerror(errno));
	return ret > 0;
}

static void record_error(struct recv_state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void record_error(struct recv_state *st, const char *fmt, ...)
{
	va_list ap;

	if (st->record_errors++ < 10) {
		fprintf(stderr, "%s: bad record: ", cli_prog);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

static void start_schedule(struct recv_state *st, double buffer)
{
	struct stream_params p;
	uint32_t n = 0;
	const char *why;

	why = desc_parse(st->desc, st->desc_sec.data, &p, &n);
	if (why)
		cli_die("stream descriptor: %s", why);
	if (buffer > 0)
		p.buffer = buffer;
	if (schedule_build(&st->s, &p))
		cli_die("schedule: %s", strerror(errno));
	/* The deadlines the sender used do not matter here, playout does. */
	if (st->s.n != n)
		cli_die("stream descriptor: %u frames, but its schedule has %u", n,
			st->s.n);
	st->sec = calloc(n, sizeof(*st->sec));
	if (!st->sec)
		cli_die("out of memory");
	st->have_schedule = true;
}

/* The record follows the one before it in the stream and its section. */
static void take_order(struct recv_state *st, const struct tl_record *r,
		       uint32_t ret)
{
	st->records++;
	if (r->len != ret)
		record_error(st, "len %u but recvmsg returned %u", r->len, ret);
	if (r->stream_off != st->stream_off)
		record_error(st, "stream_off %llu, expected %llu",
			     (unsigned long long)r->stream_off,
			     (unsigned long long)st->stream_off);
	st->stream_off += ret;
	if (st->in_section) {
		if (r->section != st->cur)
			record_error(st, "section %llu inside section %llu",
				     (unsigned long long)r->section,
				     (unsigned long long)st->cur);
	} else {
		uint64_t next = st->started ? st->cur + 1 : 0;

		if (r->section != next || r->sec_off)
			record_error(st, "section %llu offset %u, expected "
				     "section %llu offset 0",
				     (unsigned long long)r->section, r->sec_off,
				     (unsigned long long)next);
		st->cur = r->section;
		st->started = true;
		st->in_section = true;
		st->sections++;
	}
	if (!!(r->flags & TL_REC_SECTION_END) !=
	    ((uint64_t)r->sec_off + r->len == r->sec_len))
		record_error(st, "section %llu: end flag %u at %u + %u of %llu",
			     (unsigned long long)r->section, r->flags,
			     r->sec_off, r->len,
			     (unsigned long long)r->sec_len);
	if (r->flags & TL_REC_SECTION_END || r->sec_off + r->len >= r->sec_len)
		st->in_section = false;
}

/* The stream's totals of data and gaps. */
static void take_totals(struct recv_state *st, int type,
			const struct tl_record *r, const uint8_t *buf,
			uint32_t ret, uint64_t now)
{
	uint32_t i;

	if (type != TL_GAP) {
		st->data_records++;
		st->data_bytes += ret;
		if (!st->t_first)
			st->t_first = now;
		return;
	}
	st->gap_records++;
	st->gap_bytes += ret;
	if (!st->any_gap || st->last_gap_sec != r->section ||
	    st->last_gap_end != r->stream_off)
		st->gaps++;
	st->any_gap = true;
	st->last_gap_sec = r->section;
	st->last_gap_end = r->stream_off + ret;
	for (i = 0; i < ret; i++)
		if (buf[i]) {
			st->gap_not_zero++;
			break;
		}
}

/* Section 0: the stream's descriptor; its end starts the schedule. */
static void take_descriptor(struct recv_state *st, int type,
			    const struct tl_record *r, const uint8_t *buf,
			    uint32_t ret, double buffer)
{
	if (type == TL_GAP)
		cli_die("stream descriptor lost (a gap in section 0): its "
			"deadline passed before it was sent");
	if (r->sec_len > DESC_MAX || r->sec_off + ret > r->sec_len)
		cli_die("stream descriptor too long (%llu bytes)",
			(unsigned long long)r->sec_len);
	memcpy(st->desc + r->sec_off, buf, ret);
	st->desc_sec.data += ret;
	if (r->flags & TL_REC_SECTION_END)
		start_schedule(st, buffer);
}

/* A frame's data: its header kept, its payload checked. */
static void take_data(struct recv_state *st, struct section *sec,
		      const struct tl_record *r, const uint8_t *buf,
		      uint32_t ret, uint64_t now)
{
	uint32_t i;

	sec->data += ret;
	sec->last_data_ns = now;
	for (i = 0; i < ret; i++) {
		uint32_t o = r->sec_off + i;

		if (o < FRAME_HDR_LEN) {
			sec->hdr[o] = buf[i];
			sec->hdr_have++;
		} else if (buf[i] != payload_byte(r->section - 1, o)) {
			st->corrupt_bytes++;
		}
	}
}

/* Sections 1..n: the frames, by storage index + 1. */
static void take_frame(struct recv_state *st, int type,
		       const struct tl_record *r, const uint8_t *buf,
		       uint32_t ret, uint64_t now)
{
	struct section *sec;

	if (!st->have_schedule)
		cli_die("section %llu before the stream descriptor",
			(unsigned long long)r->section);
	if (r->section > st->s.n) {
		record_error(st, "section %llu: the stream has %u frames",
			     (unsigned long long)r->section, st->s.n);
		return;
	}
	sec = &st->sec[r->section - 1];
	if (!sec->seen) {
		sec->seen = true;
		sec->len = r->sec_len;
		if (r->sec_len != st->s.f[st->s.order[r->section - 1]].size)
			st->header_errors++;
	}
	if (r->sec_off != sec->next_off || r->sec_len != sec->len ||
	    r->sec_off + ret > sec->len) {
		record_error(st, "section %llu: [%u, +%u) of %llu after %u",
			     (unsigned long long)r->section, r->sec_off, ret,
			     (unsigned long long)r->sec_len, sec->next_off);
		return;
	}
	sec->next_off += ret;
	if (type == TL_GAP)
		sec->gap += ret;
	else
		take_data(st, sec, r, buf, ret, now);
	if (sec->next_off == sec->len) {
		sec->ended = true;
		sec->done_ns = now;
	}
}

/* One record: rec describes buf[0, ret). */
static void take(struct recv_state *st, int type, const struct tl_record *r,
		 const uint8_t *buf, uint32_t ret, uint64_t now, double buffer)
{
	take_order(st, r, ret);
	if (st->verbose)
		fprintf(stderr, "%10.6f %s section %llu [%u, %u) of %llu%s\n",
			st->t_first ? (now - st->t_first) / 1e9 : 0.0,
			type == TL_GAP ? "GAP " : "DATA",
			(unsigned long long)r->section, r->sec_off,
			r->sec_off + r->len, (unsigned long long)r->sec_len,
			r->flags & TL_REC_SECTION_END ? " end" : "");
	take_totals(st, type, r, buf, ret, now);
	if (r->section == 0)
		take_descriptor(st, type, r, buf, ret, buffer);
	else
		take_frame(st, type, r, buf, ret, now);
}

/* The header of a frame received with it matches the schedule. */
static void check_header(struct recv_state *st, uint32_t k)
{
	const struct frame *f = &st->s.f[st->s.order[k]];
	const struct section *sec = &st->sec[k];
	struct frame_hdr h;

	if (sec->hdr_have < FRAME_HDR_LEN)
		return;
	frame_hdr_unpack(sec->hdr, &h);
	if (h.magic != FRAME_MAGIC || h.storage != k ||
	    h.display != f->display || h.type != frame_type_name[f->type][0] ||
	    h.size != f->size || h.gop != f->gop)
		st->header_errors++;
}

/* The frame arrived whole by its playout time. */
static bool in_time(const struct recv_state *st, const struct frame *f)
{
	const struct section *sec = &st->sec[f->storage];

	return sec->ended && sec->data == f->size &&
	       sec->last_data_ns <= st->t_first +
				    (uint64_t)llround(f->playout * 1e9);
}

static void counts_json(FILE *out, const char *name, const struct counts *c,
			bool last)
{
	fprintf(out, "    \"%s\": {\"total\": %llu, \"whole\": %llu, "
		"\"partial\": %llu, \"lost\": %llu, \"not_received\": %llu, "
		"\"late\": %llu, \"on_time\": %llu, \"displayed\": %llu, "
		"\"displayed_fraction\": %.4f, \"bytes\": %llu, "
		"\"data_bytes\": %llu, \"gap_bytes\": %llu}%s\n", name,
		(unsigned long long)c->total, (unsigned long long)c->whole,
		(unsigned long long)c->partial, (unsigned long long)c->lost,
		(unsigned long long)c->missing, (unsigned long long)c->late,
		(unsigned long long)c->on_time,
		(unsigned long long)c->displayed,
		c->total ? (double)c->displayed / c->total : 0.0,
		(unsigned long long)c->bytes, (unsigned long long)c->data,
		(unsigned long long)c->gap, last ? "" : ",");
}

/* The receiver's options. */
struct recv_opts {
	int family;
	bool json;
	const char *bind_addr, *outname, *framesname;
	double buffer, timeout;		/* s */
};

static const struct option lopts[] = {
	{ "bind", required_argument, NULL, 'B' },
	{ "buffer", required_argument, NULL, 'b' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "json", no_argument, NULL, 'J' },
	{ "output", required_argument, NULL, 'o' },
	{ "frames", required_argument, NULL, 'f' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static bool recv_opt(int c, const char *arg, struct recv_opts *ro)
{
	switch (c) {
	case '4':
		ro->family = AF_INET;
		return true;
	case '6':
		ro->family = AF_INET6;
		return true;
	case 'B':
		ro->bind_addr = arg;
		ro->family = AF_UNSPEC;
		return true;
	case 'b':
		ro->buffer = strtod(arg, NULL);
		if (!(ro->buffer > 0 && ro->buffer <= 600))
			cli_die("bad buffer: %s", arg);
		return true;
	case 'T':
		ro->timeout = strtod(arg, NULL);
		if (!(ro->timeout >= 0))
			cli_die("bad timeout: %s", arg);
		return true;
	case 'J':
		ro->json = true;
		return true;
	case 'o':
		ro->outname = arg;
		return true;
	case 'f':
		ro->framesname = arg;
		return true;
	}
	return false;
}

static void parse_args(int argc, char **argv, struct recv_opts *ro,
		       struct recv_state *st)
{
	int c;

	while ((c = getopt_long(argc, argv, "46B:b:T:Jo:f:vh", lopts,
				NULL)) != -1) {
		if (recv_opt(c, optarg, ro))
			continue;
		if (c == 'v') {
			st->verbose = 1;
			continue;
		}
		if (c == 'h')
			usage(stdout, 0);
		usage(stderr, 2);
	}
	if (argc - optind != 1)
		usage(stderr, 2);
}

/* The sender's connection, with tltcp attached. */
static int accept_stream(const struct recv_opts *ro, const char *port)
{
	int lfd = listen_on(ro->bind_addr, port, ro->family), fd;

	if (!wait_readable(lfd, ro->timeout))
		cli_die("no connection within %g s", ro->timeout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		cli_die("accept: %s", strerror(errno));
	close(lfd);
	tltcp_attach(fd);
	return fd;
}

/* One recvmsg(MSG_TL): its length (0 at the end, -1 to try again), and
 * its one TL_DATA or TL_GAP record.
 */
static ssize_t read_record(int fd, uint8_t *buf, double timeout,
			   struct tl_record *rec, int *type)
{
	union {
		char buf[TL_RECORD_SPACE * 2];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = RBUF };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	ssize_t ret;
	int n;

	if (!wait_readable(fd, timeout))
		cli_die("no data for %g s", timeout);
	ret = recvmsg(fd, &msg, MSG_TL);
	if (ret < 0 && (errno == EINTR || errno == EAGAIN))
		return -1;
	if (ret < 0)
		cli_die("recvmsg(MSG_TL): %s", strerror(errno));
	if (!ret)
		return 0;
	if (msg.msg_flags & MSG_CTRUNC)
		cli_die("recvmsg(MSG_TL): control message truncated");
	n = tl_records(&msg, rec, type);
	if (n != 1)
		cli_die("recvmsg(MSG_TL) returned %zd bytes with %d TL_DATA/"
			"TL_GAP records (one expected)", ret, n);
	return ret;
}

/* The stream, record by record, until the sender closes. */
static void receive(struct recv_state *st, int fd, uint8_t *buf,
		    const struct recv_opts *ro)
{
	struct tl_record rec;
	int type = 0;
	ssize_t ret;

	while ((ret = read_record(fd, buf, ro->timeout, &rec, &type))) {
		if (ret > 0)
			take(st, type, &rec, buf, ret, now_ns(), ro->buffer);
	}
}

/*
 * Playout.  A frame is displayable if it arrived whole by its playout
 * time and its references are displayable: I and P frames first, in
 * display order (a P frame's reference comes before it), then B frames
 * (their next reference comes after them).
 */
static uint8_t *playout(const struct recv_state *st)
{
	uint8_t *ok = calloc(st->s.n, 1);
	uint32_t d;
	int t;

	if (!ok)
		cli_die("out of memory");
	for (t = 0; t < 2; t++)
		for (d = 0; d < st->s.n; d++) {
			const struct frame *f = &st->s.f[d];

			if ((f->type == FT_B) != t)
				continue;
			ok[d] = in_time(st, f) &&
				(f->prev_ref == NO_REF || ok[f->prev_ref]) &&
				(f->next_ref == NO_REF || ok[f->next_ref]);
		}
	return ok;
}

/* What became of the frames, per type and in all. */
struct tally {
	struct counts cnt[FT_N + 1];
	double min_slack;		/* ms, of the frames that came whole */
};

/* A frame into its type's counts and the total. */
static void count_frame(struct tally *ty, const struct recv_state *st,
			const struct frame *f, bool whole, bool displayed)
{
	const struct section *sec = &st->sec[f->storage];
	int tt;

	for (tt = 0; tt < 2; tt++) {
		struct counts *cc = &ty->cnt[tt ? FT_N : f->type];

		cc->total++;
		cc->bytes += f->size;
		cc->data += sec->data;
		cc->gap += sec->gap;
		if (!sec->seen) {
			cc->missing++;
			cc->lost++;
		} else if (whole) {
			cc->whole++;
			if (in_time(st, f))
				cc->on_time++;
			else
				cc->late++;
		} else if (sec->data) {
			cc->partial++;
		} else {
			cc->lost++;
		}
		cc->displayed += displayed;
	}
}

/* --frames: one CSV line per frame. */
static FILE *frames_open(const char *name)
{
	FILE *f;

	if (!name)
		return NULL;
	f = fopen(name, "w");
	if (!f)
		cli_die("%s: %s", name, strerror(errno));
	fprintf(f, "display,storage,type,size,data,gap,"
		"arrival_ms,playout_ms,status,displayed\n");
	return f;
}

static void frame_line(FILE *fcsv, const struct recv_state *st,
		       const struct frame *f, uint32_t d, bool whole,
		       bool displayed)
{
	const struct section *sec = &st->sec[f->storage];
	const char *status = !sec->seen ? "not_received" :
			     whole ? (in_time(st, f) ? "on_time" : "late") :
			     sec->data ? "partial" : "lost";

	fprintf(fcsv, "%u,%u,%s,%u,%u,%u,%.3f,%.3f,%s,%d\n", d, f->storage,
		frame_type_name[f->type], f->size, sec->data, sec->gap,
		sec->last_data_ns ? ((double)sec->last_data_ns -
				     (double)st->t_first) / 1e6 : -1,
		f->playout * 1e3, status, displayed);
}

/* Every frame: its header checked, counted, and on --frames's line. */
static void tally_frames(struct tally *ty, struct recv_state *st,
			 const uint8_t *ok, const char *framesname)
{
	FILE *fcsv = frames_open(framesname);
	uint32_t d;

	ty->min_slack = INFINITY;
	for (d = 0; d < st->s.n; d++) {
		const struct frame *f = &st->s.f[d];
		const struct section *sec = &st->sec[f->storage];
		uint64_t playout = st->t_first +
				   (uint64_t)llround(f->playout * 1e9);
		bool whole = sec->ended && sec->data == f->size;
		double slack;

		check_header(st, f->storage);
		if (whole) {
			slack = ((double)playout -
				 (double)sec->last_data_ns) / 1e6;
			if (slack < ty->min_slack)
				ty->min_slack = slack;
		}
		count_frame(ty, st, f, whole, ok[d]);
		if (fcsv)
			frame_line(fcsv, st, f, d, whole, ok[d]);
	}
	if (fcsv && fclose(fcsv))
		cli_die("%s: %s", framesname, strerror(errno));
}

static void report_json(FILE *out, const struct recv_state *st,
			const struct tally *ty, bool consistent,
			const struct tl_info *ti)
{
	const struct counts *all = &ty->cnt[FT_N];
	int t;

	fprintf(out, "{\n  \"role\": \"receiver\",\n  \"stream\": ");
	params_json(out, &st->s.p, st->s.n, "  ");
	fprintf(out, ",\n  \"frames\": {\n");
	for (t = 0; t <= FT_N; t++)
		counts_json(out, t < FT_N ? frame_type_name[t] : "all",
			    &ty->cnt[t], t == FT_N);
	fprintf(out, "  },\n  \"quality\": %.4f,\n"
		"  \"min_slack_ms\": %.3f,\n"
		"  \"sections\": %llu,\n  \"records\": %llu,\n"
		"  \"data_records\": %llu,\n  \"gap_records\": %llu,\n"
		"  \"data_bytes\": %llu,\n  \"gaps\": %llu,\n"
		"  \"gap_bytes\": %llu,\n  \"record_errors\": %llu,\n"
		"  \"header_errors\": %llu,\n  \"corrupt_bytes\": %llu,\n"
		"  \"gap_not_zero\": %llu,\n"
		"  \"consistent_with_tl_info\": %s,\n  \"tl_info\": ",
		all->total ? (double)all->displayed / all->total : 0.0,
		isfinite(ty->min_slack) ? ty->min_slack : 0.0,
		(unsigned long long)st->sections,
		(unsigned long long)st->records,
		(unsigned long long)st->data_records,
		(unsigned long long)st->gap_records,
		(unsigned long long)st->data_bytes,
		(unsigned long long)st->gaps,
		(unsigned long long)st->gap_bytes,
		(unsigned long long)st->record_errors,
		(unsigned long long)st->header_errors,
		(unsigned long long)st->corrupt_bytes,
		(unsigned long long)st->gap_not_zero,
		consistent ? "true" : "false");
	tl_info_json(out, ti, "  ");
	fprintf(out, "\n}\n");
}

/* The table of frames by type, and the quality. */
static void report_frames(FILE *out, const struct tally *ty)
{
	const struct counts *c, *all = &ty->cnt[FT_N];
	int t;

	fprintf(out, "  type  total  whole partial   lost   late "
		"displayed\n");
	for (t = 0; t <= FT_N; t++) {
		c = &ty->cnt[t];
		fprintf(out, "  %-4s %6llu %6llu %7llu %6llu %6llu %6llu "
			"(%.1f %%)\n", t < FT_N ? frame_type_name[t] : "all",
			(unsigned long long)c->total,
			(unsigned long long)c->whole,
			(unsigned long long)c->partial,
			(unsigned long long)c->lost,
			(unsigned long long)c->late,
			(unsigned long long)c->displayed,
			c->total ? 100.0 * c->displayed / c->total : 0.0);
	}
	fprintf(out, "  quality: %.1f %% of the frames displayed\n",
		all->total ? 100.0 * all->displayed / all->total : 0.0);
}

static void report_text(FILE *out, const struct recv_state *st,
			const struct tally *ty, bool consistent,
			const struct tl_info *ti)
{
	fprintf(out, "received %u frames (%s at %g/s, playout buffer "
		"%g s)\n", st->s.n, st->s.p.gop, st->s.p.fps, st->s.p.buffer);
	report_frames(out, ty);
	fprintf(out, "  gaps: %llu, %llu bytes; data: %llu bytes in "
		"%llu sections\n", (unsigned long long)st->gaps,
		(unsigned long long)st->gap_bytes,
		(unsigned long long)st->data_bytes,
		(unsigned long long)st->sections);
	if (ty->cnt[FT_N].missing)
		fprintf(out, "  %llu frames never arrived (the stream "
			"ended early)\n",
			(unsigned long long)ty->cnt[FT_N].missing);
	if (st->record_errors || st->header_errors || st->corrupt_bytes ||
	    st->gap_not_zero)
		fprintf(out, "  ERRORS: %llu bad records, %llu bad frame "
			"headers, %llu corrupt bytes, %llu gaps not "
			"zero-filled\n",
			(unsigned long long)st->record_errors,
			(unsigned long long)st->header_errors,
			(unsigned long long)st->corrupt_bytes,
			(unsigned long long)st->gap_not_zero);
	if (!consistent)
		fprintf(out, "  TL_INFO disagrees with the records read\n");
	tl_info_table(out, ti, true);
}

/* What TL_INFO counted is what the records said. */
static bool consistent_with(const struct recv_state *st,
			    const struct tl_info *ti)
{
	return ti->bytes_received == st->data_bytes &&
	       ti->bytes_gap == st->gap_bytes &&
	       ti->gaps_received == st->gaps &&
	       ti->sections_received == st->sections;
}

int main(int argc, char **argv)
{
	struct recv_opts ro = { .family = AF_INET, .timeout = 60 };
	struct recv_state st = { 0 };
	struct tally ty = { 0 };
	bool consistent, errors;
	FILE *out = stdout;
	struct tl_info ti;
	uint8_t *buf, *ok;
	int fd;

	cli_prog = "tltcp_stream_recv";
	parse_args(argc, argv, &ro, &st);
	buf = malloc(RBUF);
	if (!buf)
		cli_die("out of memory");
	fd = accept_stream(&ro, argv[optind]);
	receive(&st, fd, buf, &ro);
	if (tl_get_info(fd, &ti))
		cli_die("getsockopt TL_INFO: %s", strerror(errno));
	close(fd);
	if (!st.have_schedule)
		cli_die("the connection ended before the stream descriptor");
	if (st.in_section)
		record_error(&st, "the stream ended inside section %llu",
			     (unsigned long long)st.cur);
	ok = playout(&st);
	tally_frames(&ty, &st, ok, ro.framesname);
	consistent = consistent_with(&st, &ti);
	if (ro.outname) {
		out = fopen(ro.outname, "w");
		if (!out)
			cli_die("%s: %s", ro.outname, strerror(errno));
	}
	if (ro.json)
		report_json(out, &st, &ty, consistent, &ti);
	else
		report_text(out, &st, &ty, consistent, &ti);
	if (out != stdout && fclose(out))
		cli_die("%s: %s", ro.outname, strerror(errno));
	errors = st.record_errors || st.header_errors || st.corrupt_bytes ||
		 st.gap_not_zero || !consistent;
	if (errors)
		fprintf(stderr, "%s: the stream differs from what was sent or "
			"from TL_INFO (see the report)\n", cli_prog);
	free(ok);
	free(st.sec);
	free(buf);
	schedule_free(&st.s);
	return errors ? 1 : 0;
}
