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

/* KC_ITER_IOV: the iovec array of an ITER_IOVEC iterator. */
#ifdef KC_ITER_IOV
#define kc_iter_iov(i)	iter_iov(i)
#else
#define kc_iter_iov(i)	((i)->iov)
#endif

#endif /* _KCOMPAT_H */
