/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels these modules build against (Debian's
 * 6.1 and 6.12, and whatever a user's workstation runs).
 *
 * The KC_* feature macros are not version checks: kcompat.sh, next to this
 * file, looks for each feature in the headers of the kernel being built
 * against and the Kbuild file passes what it found as -DKC_* flags, so a Debian stable
 * kernel that backports a change gets the new code path.
 */
#ifndef _KCOMPAT_H
#define _KCOMPAT_H

/*
 * KC_CONG_CONTROL_ACK_FLAG: since 6.10 tcp_congestion_ops.cong_control()
 * also receives the ACK's sequence number and the FLAG_* bits of
 * tcp_ack().  Declare the hook as "static void f(KC_CONG_CONTROL_ARGS)";
 * its body sees the arguments sk and rs on every kernel.
 */
#ifdef KC_CONG_CONTROL_ACK_FLAG
#define KC_CONG_CONTROL_ARGS \
	struct sock *sk, u32 ack __always_unused, \
	int flag __always_unused, const struct rate_sample *rs
#else
#define KC_CONG_CONTROL_ARGS \
	struct sock *sk, const struct rate_sample *rs
#endif

/*
 * KC_RECVMSG_ADDR_LEN: until 7.x struct proto's recvmsg() also takes
 * int *addr_len (the length of the peer address it wrote to msg_name).
 * Declare a recvmsg hook as "int f(KC_RECVMSG_ARGS)"; its body sees sk,
 * msg, len and flags on every kernel, and passes KC_RECVMSG_ADDR_LEN_PTR
 * (the caller's pointer, or NULL where there is none) to code that calls
 * another protocol's recvmsg through kc_proto_recvmsg(), which drops it
 * where the hook has no such parameter.
 */
#ifdef KC_RECVMSG_ADDR_LEN
#define KC_RECVMSG_ARGS \
	struct sock *sk, struct msghdr *msg, size_t len, int flags, \
	int *addr_len
#define KC_RECVMSG_ADDR_LEN_PTR	addr_len
#else
#define KC_RECVMSG_ARGS \
	struct sock *sk, struct msghdr *msg, size_t len, int flags
#define KC_RECVMSG_ADDR_LEN_PTR	NULL
#endif

static inline int kc_proto_recvmsg(struct proto *prot, struct sock *sk,
				   struct msghdr *msg, size_t len, int flags,
				   int *addr_len)
{
#ifdef KC_RECVMSG_ADDR_LEN
	return prot->recvmsg(sk, msg, len, flags, addr_len);
#else
	return prot->recvmsg(sk, msg, len, flags);
#endif
}

/* KC_ITER_IOV: the iovec array of an ITER_IOVEC iterator. */
#ifdef KC_ITER_IOV
#define kc_iter_iov(i)	iter_iov(i)
#else
#define kc_iter_iov(i)	((i)->iov)
#endif

/*
 * KC_SK_USE_TASK_FRAG: code that runs in softirq on a socket's behalf
 * must not be given the interrupted task's page fragment.  Where the
 * socket has sk_use_task_frag, clear it for that time (and restore the
 * value returned); before it, a GFP_ATOMIC sk_allocation was enough.
 */
static inline bool kc_sk_use_task_frag(struct sock *sk, bool use)
{
#ifdef KC_SK_USE_TASK_FRAG
	bool old = sk->sk_use_task_frag;

	sk->sk_use_task_frag = use;
	return old;
#else
	return use;
#endif
}

/*
 * KC_TCP_SPLICE_PAGES: give TCP @size bytes of @page from @offset by
 * reference (the caller holds the socket lock and never writes the page
 * again); MSG_MORE if more follows at once.  Since 6.5 through
 * sendmsg(MSG_SPLICE_PAGES), before through do_tcp_sendpages().
 */
static inline int kc_tcp_send_page(struct sock *sk, struct page *page,
				   int offset, size_t size, bool more)
{
	int flags = MSG_DONTWAIT | MSG_NOSIGNAL | MSG_NO_SHARED_FRAGS;
#ifdef KC_TCP_SPLICE_PAGES
	struct msghdr msg = {
		.msg_flags = flags | MSG_SPLICE_PAGES | (more ? MSG_MORE : 0),
	};
	struct bio_vec bv;

	bvec_set_page(&bv, page, size, offset);
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &bv, 1, size);
	return tcp_sendmsg_locked(sk, &msg, size);
#else
	if (more)
		flags |= MSG_MORE | MSG_SENDPAGE_NOTLAST;
	return do_tcp_sendpages(sk, page, offset, size, flags);
#endif
}

/*
 * KC_HRTIMER_SETUP: initialise an hrtimer with its callback.  Since 6.13
 * hrtimer_setup() does both (and from 6.15 it is the only way); before,
 * hrtimer_init() and then the function member.
 */
static inline void
kc_hrtimer_setup(struct hrtimer *timer,
		 enum hrtimer_restart (*function)(struct hrtimer *),
		 clockid_t clock_id, enum hrtimer_mode mode)
{
#ifdef KC_HRTIMER_SETUP
	hrtimer_setup(timer, function, clock_id, mode);
#else
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
#endif
}

#endif /* _KCOMPAT_H */
