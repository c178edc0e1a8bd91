// SPDX-License-Identifier: GPL-2.0
/*
 * Time-lined TCP, section buffers: the pages that hold a section's bytes
 * from sendmsg() until TCP has them.
 *
 * A section is copied once, from the user into runs of pages (32 KiB
 * compound pages, or single pages when memory is fragmented), and TCP is
 * then given references to those pages, not a second copy: as sendfile()
 * and kTLS hand TCP their pages (MSG_SPLICE_PAGES since 6.5, sendpage
 * before).  The bytes are never written again once copied in, so TCP may
 * treat its fragments as its own (MSG_NO_SHARED_FRAGS).  TCP holds its own
 * references until the bytes are acknowledged; the section drops ours
 * when it is done with them.  TCP charges the socket for the bytes, not
 * for the pages behind them: a run that fills less than half its pages
 * (a small section, a section's tail) is copied instead, so that what a
 * socket pins stays within twice what it is charged for.
 *
 * The caller holds the socket lock (in softirq, its spinlock: then TCP
 * allocates with the socket's atomic sk_allocation).
 */

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <net/tcp.h>
#include <compat/kcompat.h>

#include "tltcp.h"

/* The largest run: what TCP's own page fragments use. */
#define TLTCP_RUN_ORDER		get_order(SZ_32K)

static struct page *tltcp_run_alloc(u32 left, gfp_t gfp, unsigned int *order)
{
	struct page *page;

	*order = min_t(unsigned int, get_order(left), TLTCP_RUN_ORDER);
	if (*order) {
		page = alloc_pages(gfp | __GFP_COMP | __GFP_NORETRY |
				   __GFP_NOWARN, *order);
		if (page)
			return page;
		*order = 0;
	}
	return alloc_page(gfp);
}

/* Pages for @len bytes, in @b; the bytes of memory they take (the bio_vec
 * array included), or 0 if there is not enough.
 */
u32 tltcp_buf_alloc(struct tltcp_buf *b, u32 len, gfp_t gfp)
{
	u32 max_runs = DIV_ROUND_UP(len, PAGE_SIZE), left = len, mem;

	b->nr = 0;
	b->bv = kvmalloc_array(max_runs, sizeof(*b->bv), gfp);
	if (!b->bv)
		return 0;
	mem = is_vmalloc_addr(b->bv) ?
	      PAGE_ALIGN(max_runs * sizeof(*b->bv)) :
	      kmalloc_size_roundup(max_runs * sizeof(*b->bv));
	while (left) {
		unsigned int order;
		struct page *page = tltcp_run_alloc(left, gfp, &order);
		u32 n = min_t(u32, left, PAGE_SIZE << order);

		if (!page) {
			tltcp_buf_free(b);
			return 0;
		}
		bvec_set_page(&b->bv[b->nr++], page, n, 0);
		mem += PAGE_SIZE << order;
		left -= n;
	}
	return mem;
}

void tltcp_buf_free(struct tltcp_buf *b)
{
	u32 i;

	if (!b->bv)
		return;
	for (i = 0; i < b->nr; i++)
		put_page(b->bv[i].bv_page);
	kvfree(b->bv);
	b->bv = NULL;
	b->nr = 0;
}

/* Copy the section in from @from; false on a fault. */
bool tltcp_buf_fill(struct tltcp_buf *b, struct iov_iter *from)
{
	u32 i;

	for (i = 0; i < b->nr; i++) {
		void *to = page_address(b->bv[i].bv_page);

		if (!copy_from_iter_full(to, b->bv[i].bv_len, from))
			return false;
	}
	return true;
}

/* Move @pos @n bytes on. */
void tltcp_buf_advance(const struct tltcp_buf *b, struct tltcp_buf_pos *pos,
		       u32 n)
{
	while (n) {
		u32 step = min(n, b->bv[pos->idx].bv_len - pos->off);

		pos->off += step;
		n -= step;
		if (pos->off == b->bv[pos->idx].bv_len) {
			pos->idx++;
			pos->off = 0;
		}
	}
}

/* @n bytes of run @bv from @off, copied: as TCP takes a write(). */
static int tltcp_run_copy(struct sock *sk, const struct bio_vec *bv, u32 off,
			  u32 n, bool more)
{
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL | (more ? MSG_MORE : 0),
	};
	struct kvec iov = {
		.iov_base = page_address(bv->bv_page) + bv->bv_offset + off,
		.iov_len = n,
	};

	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &iov, 1, n);
	return tcp_sendmsg_locked(sk, &msg, n);
}

/* Give TCP up to @len bytes from @pos, one run at a time, by reference
 * (or copied, for a run that fills less than half its pages); MSG_MORE
 * unless they end the record (@more false).  Returns what TCP took (@pos
 * moves on by as much), or TCP's error if it took nothing.
 */
int tltcp_buf_send(struct sock *sk, const struct tltcp_buf *b,
		   struct tltcp_buf_pos *pos, u32 len, bool more)
{
	int took = 0;

	while (len) {
		const struct bio_vec *bv = &b->bv[pos->idx];
		u32 n = min(len, bv->bv_len - pos->off);
		int ret;

		if (2 * bv->bv_len < page_size(bv->bv_page))
			ret = tltcp_run_copy(sk, bv, pos->off, n, more || n < len);
		else
			ret = kc_tcp_send_page(sk, bv->bv_page,
					       bv->bv_offset + pos->off, n,
					       more || n < len);
		if (ret <= 0)
			return took ? : ret;
		tltcp_buf_advance(b, pos, ret);
		took += ret;
		len -= ret;
		if (ret < n)
			break;
	}
	return took;
}
