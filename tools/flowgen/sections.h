/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sections with deadlines (flowgen -D SIZE,PERIOD,DEADLINE): every PERIOD
 * the sending application offers SIZE bytes that are useful only until
 * DEADLINE after they were offered.  Each section starts with a header
 * that names it; over a datagram transport every datagram carries one, with
 * the offset of its bytes in the section.  The receiver counts the bytes
 * and sections that arrived complete before their deadline.  Times are
 * CLOCK_MONOTONIC nanoseconds, which network namespaces of one machine
 * share.
 */
#ifndef FLOWGEN_SECTIONS_H
#define FLOWGEN_SECTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEC_MAGIC	0x7365636eu	/* "secn" */

/* On the wire, in network byte order. */
struct sec_hdr {
	uint32_t magic;
	uint32_t size;		/* bytes in the section, header included */
	uint64_t seq;		/* 0, 1, 2, ... */
	uint64_t created_ns;	/* when the application offered it */
	uint64_t deadline_ns;	/* when it stops being useful */
	uint32_t offset;	/* datagrams: where this one's bytes start */
	uint32_t len;		/* datagrams: bytes in this one */
};

void sec_hdr_put(void *buf, uint64_t seq, uint32_t size, uint64_t created,
		 uint64_t deadline, uint32_t offset, uint32_t len);
bool sec_hdr_get(const void *buf, size_t n, struct sec_hdr *h);

/* What the receiver learns. */
struct sec_rx {
	uint64_t sections;	/* seen, in part or whole */
	uint64_t complete;	/* every byte arrived */
	uint64_t on_time;	/* complete before the deadline */
	uint64_t on_time_bytes;
	uint64_t late_bytes;	/* arrived after their deadline */
	uint64_t missing;	/* sequence numbers never seen; TLTCP:
				 * sections of which only a gap arrived
				 */
	uint64_t gap_bytes;	/* TLTCP: bytes the sender abandoned */
	uint64_t gaps;		/* TLTCP: sections with a gap */
	/* parser state */
	uint64_t next_seq;
	struct sec_hdr cur;	/* the section being received */
	uint64_t cur_got;	/* its bytes so far */
	bool cur_late;		/* some of them came after the deadline */
	bool in_section;
	uint8_t hdr[sizeof(struct sec_hdr)];
	size_t hdr_got;
	bool bad;		/* the stream is not sections */
	/* TLTCP: the module's section being received */
	bool tl_started;
	uint64_t tl_section;
	bool tl_data;		/* some of its data arrived */
	bool tl_gap;		/* its gap began */
};

/* Stream transports: feed every byte read, in order.  Returns the bytes
 * of sections that completed on time within this chunk.
 */
uint64_t sec_rx_stream(struct sec_rx *rx, const uint8_t *p, size_t n,
		       uint64_t now);
/* Datagram transports: one datagram. */
uint64_t sec_rx_datagram(struct sec_rx *rx, const struct sec_hdr *h,
			 uint64_t now);
/* TLTCP: one record of recvmsg(MSG_TL), data (p) or a gap (p NULL), of
 * the module's section number tl_section, sec_off bytes into it.  One
 * flowgen section is one TLTCP section.  Returns the bytes on time.
 */
uint64_t sec_rx_tl(struct sec_rx *rx, uint64_t tl_section, uint64_t sec_off,
		   const uint8_t *p, size_t n, uint64_t now);
/* The flow ended: account for the section under way. */
void sec_rx_end(struct sec_rx *rx);

#endif /* FLOWGEN_SECTIONS_H */
