// SPDX-License-Identifier: GPL-2.0
/*
 * Sections with deadlines: the header, and the receiver's accounting.
 *
 * A byte is on time if it arrived no later than its section's deadline; a
 * section is on time if all of its bytes did.  Sections whose sequence
 * numbers never appear (abandoned by PR-SCTP, or lost datagrams) count as
 * missing.  Over TLTCP the receiver is told where the sender abandoned
 * data: such gaps are counted apart, and a section of which only a gap
 * arrived counts as missing.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "sections.h"

void sec_hdr_put(void *buf, uint64_t seq, uint32_t size, uint64_t created,
		 uint64_t deadline, uint32_t offset, uint32_t len)
{
	struct sec_hdr h = {
		.magic = htonl(SEC_MAGIC),
		.size = htonl(size),
		.seq = htobe64(seq),
		.created_ns = htobe64(created),
		.deadline_ns = htobe64(deadline),
		.offset = htonl(offset),
		.len = htonl(len),
	};

	memcpy(buf, &h, sizeof(h));
}

bool sec_hdr_get(const void *buf, size_t n, struct sec_hdr *h)
{
	if (n < sizeof(*h))
		return false;
	memcpy(h, buf, sizeof(*h));
	if (ntohl(h->magic) != SEC_MAGIC)
		return false;
	h->size = ntohl(h->size);
	h->seq = be64toh(h->seq);
	h->created_ns = be64toh(h->created_ns);
	h->deadline_ns = be64toh(h->deadline_ns);
	h->offset = ntohl(h->offset);
	h->len = ntohl(h->len);
	return h->size >= sizeof(*h);
}

/* A new section begins: close the one under way, count skipped ones. */
static void sec_begin(struct sec_rx *rx, const struct sec_hdr *h)
{
	sec_rx_end(rx);
	if (h->seq > rx->next_seq)
		rx->missing += h->seq - rx->next_seq;
	if (h->seq >= rx->next_seq)
		rx->next_seq = h->seq + 1;
	rx->cur = *h;
	rx->cur_got = 0;
	rx->cur_late = false;
	rx->in_section = true;
	rx->sections++;
}

/* Gather a section header's bytes from *p (n of them), across reads.
 * True once a whole header is in *h; a malformed one marks the stream bad.
 */
static bool sec_hdr_take(struct sec_rx *rx, const uint8_t **p, size_t *n,
			 struct sec_hdr *h)
{
	size_t take = sizeof(rx->hdr) - rx->hdr_got;

	if (take > *n)
		take = *n;
	memcpy(rx->hdr + rx->hdr_got, *p, take);
	rx->hdr_got += take;
	*p += take;
	*n -= take;
	if (rx->hdr_got < sizeof(rx->hdr))
		return false;
	rx->hdr_got = 0;
	if (!sec_hdr_get(rx->hdr, sizeof(rx->hdr), h)) {
		rx->bad = true;
		return false;
	}
	return true;
}

/* bytes of the current section arrived at now */
static uint64_t sec_got(struct sec_rx *rx, uint64_t bytes, uint64_t now)
{
	bool in_time = now <= rx->cur.deadline_ns;

	rx->cur_got += bytes;
	if (in_time) {
		rx->on_time_bytes += bytes;
	} else {
		rx->late_bytes += bytes;
		rx->cur_late = true;
	}
	if (rx->cur_got >= rx->cur.size) {
		rx->complete++;
		if (!rx->cur_late)
			rx->on_time++;
		rx->in_section = false;
	}
	return in_time ? bytes : 0;
}

uint64_t sec_rx_stream(struct sec_rx *rx, const uint8_t *p, size_t n,
		       uint64_t now)
{
	uint64_t on_time = 0;

	while (n && !rx->bad) {
		struct sec_hdr h;
		size_t take;

		if (!rx->in_section) {
			if (!sec_hdr_take(rx, &p, &n, &h))
				break;
			h.len = 0;
			sec_begin(rx, &h);
			on_time += sec_got(rx, sizeof(h), now);
			continue;
		}
		take = rx->cur.size - rx->cur_got;
		if (take > n)
			take = n;
		on_time += sec_got(rx, take, now);
		p += take;
		n -= take;
	}
	return on_time;
}

uint64_t sec_rx_datagram(struct sec_rx *rx, const struct sec_hdr *h,
			 uint64_t now)
{
	struct sec_hdr cur = *h;

	if (!rx->in_section || h->seq != rx->cur.seq) {
		if (h->seq < rx->next_seq)
			return 0;	/* a straggler of a closed section */
		cur.len = 0;
		sec_begin(rx, &cur);
	}
	return sec_got(rx, h->len, now);
}

/* TLTCP: the module's section under way is over. */
static void sec_tl_close(struct sec_rx *rx)
{
	if (rx->tl_started && !rx->tl_data)
		rx->missing++;
	rx->in_section = false;
	rx->hdr_got = 0;
	rx->tl_data = false;
	rx->tl_gap = false;
}

/* Each TLTCP section is one flowgen section: its first bytes are the
 * header, sent before any other byte of it (the sender abandons only the
 * unsent rest of a section).  The header's bytes count at the time the
 * header is complete; if a gap cuts the header short, the deadline stays
 * unknown and those few bytes count as late.
 */
uint64_t sec_rx_tl(struct sec_rx *rx, uint64_t tl_section, uint64_t sec_off,
		   const uint8_t *p, size_t n, uint64_t now)
{
	uint64_t on_time = 0;
	struct sec_hdr h;

	if (rx->bad)
		return 0;
	if (!rx->tl_started || tl_section != rx->tl_section) {
		sec_tl_close(rx);
		rx->tl_started = true;
		rx->tl_section = tl_section;
	}
	if (!p) {
		if (!rx->tl_gap)
			rx->gaps++;
		rx->tl_gap = true;
		rx->gap_bytes += n;
		if (!rx->in_section && rx->hdr_got) {
			rx->late_bytes += rx->hdr_got;
			rx->hdr_got = 0;
		}
		rx->in_section = false;
		return 0;
	}
	rx->tl_data = true;
	if (!rx->in_section) {
		if (sec_off != rx->hdr_got) {	/* not where the header is */
			rx->bad = true;
			return 0;
		}
		if (!sec_hdr_take(rx, &p, &n, &h))
			return 0;
		rx->cur = h;
		rx->cur_got = 0;
		rx->cur_late = false;
		rx->in_section = true;
		rx->sections++;
		on_time += sec_got(rx, sizeof(h), now);
	}
	if (n && rx->in_section)
		on_time += sec_got(rx, n, now);
	return on_time;
}

void sec_rx_end(struct sec_rx *rx)
{
	if (rx->tl_started) {
		sec_tl_close(rx);
		rx->tl_started = false;
	}
	rx->in_section = false;
}
