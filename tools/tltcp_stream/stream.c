// SPDX-License-Identifier: GPL-2.0
/*
 * The schedule of an MPEG-like stream and what both ends of tltcp_stream
 * share; see stream.h.
 *
 * Frames are numbered in display order.  An I frame and the P frames that
 * follow it up to the next I form a GOP (the pattern gives the types in
 * display order; it starts with an I).  A P frame needs the previous I or
 * P frame, a B frame the previous and the next one.  Frames are stored and
 * sent in decoding order: each I or P frame, then the B frames displayed
 * just before it, so that a B frame follows both of its references.  The
 * stream ends with an I or P frame: B frames after the last one would have
 * nothing to refer to and are not generated.
 *
 * Frame d is displayed at buffer + d / fps after the start of the stream
 * (its playout time).  Its deadline follows the paper (Mukherjee & Brecht,
 * ICNP 2000, section 4): an I frame and the P frames that depend on it,
 * directly or through other P frames, share one deadline, the playout time
 * of the I frame, the earliest of them; a B frame takes the deadline of the
 * earlier frame it depends on.  With the "frame" mode every frame has its
 * own playout time as deadline instead (a comparison, not the paper's).
 */

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "stream.h"

#ifndef TCP_ULP
#define TCP_ULP 31
#endif

const char *const frame_type_name[FT_N] = { "I", "P", "B" };

void stream_defaults(struct stream_params *p)
{
	memset(p, 0, sizeof(*p));
	strcpy(p->gop, "IBBPBBPBBPBB");
	p->fps = 25;
	p->buffer = 1;
	p->duration = 10;
	p->size[FT_I] = 40000;
	p->size[FT_P] = 15000;
	p->size[FT_B] = 6000;
	p->vary = 0;
	p->seed = 1;
	p->deadlines = DL_PAPER;
}

static int type_of(char c)
{
	switch (c) {
	case 'I':
		return FT_I;
	case 'P':
		return FT_P;
	case 'B':
		return FT_B;
	}
	return -1;
}

const char *stream_check(const struct stream_params *p)
{
	size_t len = strnlen(p->gop, MAX_GOP + 1), i;
	int t;

	if (!len || len > MAX_GOP)
		return "GOP pattern: 1 to 64 frame types";
	for (i = 0; i < len; i++)
		if (type_of(p->gop[i]) < 0)
			return "GOP pattern: only I, P and B";
	if (p->gop[0] != 'I')
		return "GOP pattern: must start with an I frame";
	if (!(p->fps > 0 && p->fps <= 1000))
		return "frame rate: more than 0, at most 1000 frames/s";
	if (!(p->buffer > 0 && p->buffer <= 600))
		return "playout buffer: more than 0, at most 600 s";
	if (!(p->duration > 0 && p->duration <= 86400))
		return "duration: more than 0, at most 86400 s";
	if (p->duration * p->fps >= MAX_FRAMES)
		return "too many frames (duration x frame rate)";
	if (p->buffer + p->duration + 60 >= TL_MAX_DEADLINE / 1e9)
		return "buffer + duration: deadlines would exceed TL_MAX_DEADLINE";
	for (t = 0; t < FT_N; t++)
		if (p->size[t] < MIN_FRAME_SIZE || p->size[t] > MAX_FRAME_SIZE)
			return "frame sizes: 64 bytes to 16 MiB";
	if (p->vary > 90)
		return "size variation: at most 90 %";
	return NULL;
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint32_t frame_size(const struct stream_params *p, int type,
			   uint32_t d)
{
	double base = p->size[type], u, s;

	if (!p->vary)
		return p->size[type];
	/* u uniform in [-1, 1), the same on both ends. */
	u = (double)(mix64(((uint64_t)p->seed << 32) | d) >> 11) /
	    (double)(1ULL << 53) * 2 - 1;
	s = base * (1 + u * p->vary / 100.0);
	if (s < MIN_FRAME_SIZE)
		s = MIN_FRAME_SIZE;
	if (s > MAX_FRAME_SIZE)
		s = MAX_FRAME_SIZE;
	return (uint32_t)s;
}

int schedule_build(struct schedule *s, const struct stream_params *p)
{
	uint32_t len = strlen(p->gop), n, d, k, last_anchor = NO_REF;
	uint32_t gops = 0, gop_start = 0;

	memset(s, 0, sizeof(*s));
	s->p = *p;
	n = (uint32_t)floor(p->duration * p->fps + 1e-9);
	if (!n)
		n = 1;
	while (n > 1 && p->gop[(n - 1) % len] == 'B')
		n--;
	s->f = calloc(n, sizeof(*s->f));
	s->order = calloc(n, sizeof(*s->order));
	if (!s->f || !s->order) {
		schedule_free(s);
		errno = ENOMEM;
		return -1;
	}
	s->n = n;

	for (d = 0; d < n; d++) {
		struct frame *f = &s->f[d];

		f->display = d;
		f->type = type_of(p->gop[d % len]);
		f->size = frame_size(p, f->type, d);
		f->playout = p->buffer + d / p->fps;
		f->prev_ref = f->next_ref = NO_REF;
		if (f->type == FT_I) {
			gop_start = d;
			f->gop = gops++;
		} else {
			f->gop = gops - 1;
			f->prev_ref = last_anchor;
		}
		if (f->type == FT_B) {
			f->deadline = s->f[last_anchor].deadline;
			continue;
		}
		f->deadline = p->buffer + gop_start / p->fps;
		last_anchor = d;
	}
	/* The next reference of B frames, and the decoding order. */
	k = 0;
	last_anchor = NO_REF;
	for (d = 0; d < n; d++) {
		uint32_t b;

		if (s->f[d].type == FT_B)
			continue;
		s->order[k++] = d;
		for (b = last_anchor == NO_REF ? 0 : last_anchor + 1; b < d; b++) {
			s->f[b].next_ref = d;
			s->order[k++] = b;
		}
		last_anchor = d;
	}
	for (k = 0; k < n; k++)
		s->f[s->order[k]].storage = k;
	if (p->deadlines == DL_FRAME)
		for (d = 0; d < n; d++)
			s->f[d].deadline = s->f[d].playout;
	return 0;
}

void schedule_free(struct schedule *s)
{
	free(s->f);
	free(s->order);
	s->f = NULL;
	s->order = NULL;
	s->n = 0;
}

int desc_format(const struct stream_params *p, uint32_t nframes, char *buf,
		size_t size)
{
	return snprintf(buf, size,
			"%s %d gop=%s fps=%.17g buffer=%.17g duration=%.17g "
			"frames=%u sizes=%u,%u,%u vary=%u seed=%u deadlines=%s\n",
			DESC_NAME, DESC_VERSION, p->gop, p->fps, p->buffer,
			p->duration, nframes, p->size[FT_I], p->size[FT_P],
			p->size[FT_B], p->vary, p->seed,
			p->deadlines == DL_FRAME ? "frame" : "paper");
}

const char *desc_parse(const char *buf, size_t len, struct stream_params *p,
		       uint32_t *nframes)
{
	char line[DESC_MAX + 1], *tok, *save = NULL, *v;
	unsigned int seen = 0;
	int version;

	if (!len || len > DESC_MAX || buf[len - 1] != '\n')
		return "not a stream descriptor";
	memcpy(line, buf, len);
	line[len - 1] = 0;
	memset(p, 0, sizeof(*p));
	tok = strtok_r(line, " ", &save);
	if (!tok || strcmp(tok, DESC_NAME))
		return "not a stream descriptor";
	tok = strtok_r(NULL, " ", &save);
	if (!tok || sscanf(tok, "%d", &version) != 1 || version != DESC_VERSION)
		return "unknown descriptor version";
	while ((tok = strtok_r(NULL, " ", &save))) {
		v = strchr(tok, '=');
		if (!v)
			return "malformed descriptor";
		*v++ = 0;
		if (!strcmp(tok, "gop") && strlen(v) <= MAX_GOP) {
			strcpy(p->gop, v);
			seen |= 1;
		} else if (!strcmp(tok, "fps")) {
			p->fps = strtod(v, NULL);
			seen |= 2;
		} else if (!strcmp(tok, "buffer")) {
			p->buffer = strtod(v, NULL);
			seen |= 4;
		} else if (!strcmp(tok, "duration")) {
			p->duration = strtod(v, NULL);
			seen |= 8;
		} else if (!strcmp(tok, "frames")) {
			*nframes = strtoul(v, NULL, 10);
			seen |= 16;
		} else if (!strcmp(tok, "sizes")) {
			if (sscanf(v, "%u,%u,%u", &p->size[FT_I], &p->size[FT_P],
				   &p->size[FT_B]) != 3)
				return "malformed descriptor";
			seen |= 32;
		} else if (!strcmp(tok, "vary")) {
			p->vary = strtoul(v, NULL, 10);
		} else if (!strcmp(tok, "seed")) {
			p->seed = strtoul(v, NULL, 10);
		} else if (!strcmp(tok, "deadlines")) {
			p->deadlines = strcmp(v, "frame") ? DL_PAPER : DL_FRAME;
		}
	}
	if (seen != 63)
		return "incomplete descriptor";
	return stream_check(p);
}

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = v >> 24;
	b[1] = v >> 16;
	b[2] = v >> 8;
	b[3] = v;
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

void frame_hdr_pack(const struct frame *f, uint8_t *out)
{
	memset(out, 0, FRAME_HDR_LEN);
	put32(out, FRAME_MAGIC);
	put32(out + 4, f->storage);
	put32(out + 8, f->display);
	out[12] = frame_type_name[f->type][0];
	put32(out + 16, f->size);
	put32(out + 20, f->gop);
}

void frame_hdr_unpack(const uint8_t *in, struct frame_hdr *h)
{
	h->magic = get32(in);
	h->storage = get32(in + 4);
	h->display = get32(in + 8);
	h->type = in[12];
	h->size = get32(in + 16);
	h->gop = get32(in + 20);
}

void frame_fill(const struct frame *f, uint8_t *buf)
{
	uint32_t o;

	frame_hdr_pack(f, buf);
	for (o = FRAME_HDR_LEN; o < f->size; o++)
		buf[o] = payload_byte(f->storage, o);
}

void tltcp_attach(int fd)
{
	if (!tl_attach(fd))
		return;
	if (errno == ENOENT)
		fprintf(stderr, "%s: tltcp not available: modprobe tltcp "
			"(setsockopt TCP_ULP: %s)\n", cli_prog, strerror(errno));
	else
		fprintf(stderr, "%s: cannot attach tltcp: setsockopt TCP_ULP: "
			"%s\n", cli_prog, strerror(errno));
	exit(1);
}

/* TL_INFO as a JSON object, its members on lines of their own. */
void tl_info_json(FILE *out, const struct tl_info *ti, const char *indent)
{
	char first[64], sep[64];

	snprintf(first, sizeof(first), "\n%s  ", indent);
	snprintf(sep, sizeof(sep), ",\n%s  ", indent);
	fprintf(out, "{");
	tl_info_json_members(out, ti, first, sep);
	fprintf(out, "\n%s}", indent);
}

/* The receiver's counters are those of what it received, and gaps. */
static bool tl_receiver_field(const char *name)
{
	return strstr(name, "received") || !strcmp(name, "bytes_gap");
}

void tl_info_table(FILE *out, const struct tl_info *ti, bool receiver)
{
	const struct tl_info_field *f;
	unsigned int i;

	fprintf(out, "TL_INFO (%s):\n", receiver ? "receiver" : "sender");
	for (i = 0; i < tl_info_nfields; i++) {
		f = &tl_info_fields[i];
		if (receiver == tl_receiver_field(f->name))
			fprintf(out, "  %-28s %llu\n", f->name,
				(unsigned long long)tl_info_value(ti, f));
	}
}

void params_json(FILE *out, const struct stream_params *p, uint32_t nframes,
		 const char *indent)
{
	fprintf(out, "{\n%s  \"gop\": \"%s\",\n%s  \"fps\": %g,\n"
		"%s  \"buffer\": %g,\n%s  \"duration\": %g,\n"
		"%s  \"frames\": %u,\n"
		"%s  \"sizes\": {\"I\": %u, \"P\": %u, \"B\": %u},\n"
		"%s  \"vary\": %u,\n%s  \"seed\": %u,\n"
		"%s  \"deadlines\": \"%s\"\n%s}",
		indent, p->gop, indent, p->fps, indent, p->buffer, indent,
		p->duration, indent, nframes, indent, p->size[FT_I],
		p->size[FT_P], p->size[FT_B], indent, p->vary, indent, p->seed,
		indent, p->deadlines == DL_FRAME ? "frame" : "paper", indent);
}
