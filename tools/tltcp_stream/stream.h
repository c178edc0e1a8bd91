/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tltcp_stream_send and tltcp_stream_recv share: the MPEG-like
 * schedule (frame types, display and storage order, playout times and the
 * deadlines of Mukherjee & Brecht's section 4), the stream descriptor and
 * frame header on the wire, the payload pattern, and helpers.
 */
#ifndef TLTCP_STREAM_H
#define TLTCP_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/tltcp.h>

#include "cli.h"
#include "clock.h"
#include "tltcp_msg.h"

#define MAX_GOP		64
#define MAX_FRAMES	(1U << 20)
#define MIN_FRAME_SIZE	64
#define MAX_FRAME_SIZE	(16U << 20)
#define NO_REF		UINT32_MAX

/* The descriptor (section 0) is a text line, at most this long. */
#define DESC_MAX	512
#define DESC_NAME	"tltcp_stream"
#define DESC_VERSION	1

/* Each frame's payload starts with this header (big-endian on the wire). */
#define FRAME_MAGIC	0x544c4652U	/* "TLFR" */
#define FRAME_HDR_LEN	24

enum frame_type { FT_I, FT_P, FT_B, FT_N };

enum deadline_mode {
	DL_PAPER,	/* a GOP's anchors share the I frame's playout time,
			 * B frames take their earlier reference's deadline
			 */
	DL_FRAME,	/* every frame its own playout time (for comparison) */
};

struct stream_params {
	char gop[MAX_GOP + 1];		/* frame types in display order */
	double fps;
	double buffer;			/* s: playout delay (start-up buffer) */
	double duration;		/* s */
	uint32_t size[FT_N];		/* bytes per frame type */
	uint32_t vary;			/* +- percent of size, 0: fixed */
	uint32_t seed;
	enum deadline_mode deadlines;
};

struct frame {
	uint32_t display;		/* display index */
	uint32_t storage;		/* storage (sending) index */
	enum frame_type type;
	uint32_t size;
	uint32_t prev_ref, next_ref;	/* display indices needed, or NO_REF */
	uint32_t gop;			/* GOP (I frame) it belongs to */
	double playout;			/* s after the stream's start */
	double deadline;		/* s after the stream's start */
};

struct schedule {
	struct stream_params p;
	uint32_t n;			/* frames */
	struct frame *f;		/* by display index */
	uint32_t *order;		/* storage index -> display index */
};

/* The frame header, host order. */
struct frame_hdr {
	uint32_t magic;
	uint32_t storage;
	uint32_t display;
	uint8_t type;			/* 'I', 'P' or 'B' */
	uint32_t size;
	uint32_t gop;
};

extern const char *const frame_type_name[FT_N];

void stream_defaults(struct stream_params *p);
/* Check parameters; NULL if good, else why not. */
const char *stream_check(const struct stream_params *p);
/* Build the schedule; 0, or -1 with errno set. */
int schedule_build(struct schedule *s, const struct stream_params *p);
void schedule_free(struct schedule *s);

/* The descriptor line: format into buf (returns its length), parse. */
int desc_format(const struct stream_params *p, uint32_t nframes, char *buf,
		size_t size);
const char *desc_parse(const char *buf, size_t len, struct stream_params *p,
		       uint32_t *nframes);

void frame_hdr_pack(const struct frame *f, uint8_t *out);
void frame_hdr_unpack(const uint8_t *in, struct frame_hdr *h);
/* The payload byte at offset off (>= FRAME_HDR_LEN) of a frame. */
static inline uint8_t payload_byte(uint32_t storage, uint32_t off)
{
	uint32_t x = off * 2654435761U + storage * 40503U;

	return (uint8_t)(x >> 13);
}
void frame_fill(const struct frame *f, uint8_t *buf);

/* Attach the tltcp ULP; on failure print why and exit 1. */
void tltcp_attach(int fd);

void tl_info_json(FILE *out, const struct tl_info *ti, const char *indent);
void tl_info_table(FILE *out, const struct tl_info *ti, bool receiver);
void params_json(FILE *out, const struct stream_params *p, uint32_t nframes,
		 const char *indent);

#endif /* TLTCP_STREAM_H */
