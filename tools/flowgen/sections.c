// SPDX-License-Identifier: GPL-2.0
/*
 * Sections with deadlines: the header, and the receiver's accounting.
 *
 * A byte is on time if it arrived no later than its section's deadline; a
 * section is on time if all of its bytes did.  Sections whose sequence
 * numbers never appear (abandoned by PR-SCTP, or lost datagrams) count as
 * missing.
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

/* bytes of the current section arrived at now */
static uint64_t sec_got(struct sec_rx *rx, uint64_t bytes, uint64_t now)
{
	bool in_time = now <= rx->cur.deadline_ns;

	rx->cur_got += bytes;
	if (in_time)
		rx->on_time_bytes += bytes;
	else
		rx->cur_late = true;
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
			take = sizeof(rx->hdr) - rx->hdr_got;
			if (take > n)
				take = n;
			memcpy(rx->hdr + rx->hdr_got, p, take);
			rx->hdr_got += take;
			p += take;
			n -= take;
			if (rx->hdr_got < sizeof(rx->hdr))
				break;
			rx->hdr_got = 0;
			if (!sec_hdr_get(rx->hdr, sizeof(rx->hdr), &h)) {
				rx->bad = true;
				break;
			}
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

void sec_rx_end(struct sec_rx *rx)
{
	rx->in_section = false;
}
