#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Feature checks for include/compat/kcompat.h: look at the headers of the
# kernel we build against and print one -DKC_* compiler flag per feature
# found.  Checks look for the feature itself, not for a version number,
# because Debian's stable kernels carry backports.
#
# Usage: kcompat.sh <kernel source or headers tree>
#
# Every probe names a flag, a header below include/, and two Perl regular
# expressions (grep -P, matched across lines): one that matches only when
# the feature is there, one that matches only when it is not.  A probe
# fails closed: if neither matches (the header changed in a way nobody
# has looked at), it prints KCOMPAT_FAILED:<flag>, which stops the build
# (Kbuild), instead of guessing.  A wrong guess here can be a silent
# hole, e.g. sendfile() bypassing the TLTCP framing.

tree=$1
if [ -z "$tree" ] || [ ! -d "$tree/include" ]; then
	echo "usage: kcompat.sh <kernel tree with include/>" >&2
	exit 1
fi

probe() { # flag header present-regex absent-regex
	if grep -Pzq -- "$3" "$tree/include/$2" 2>/dev/null; then
		printf -- '-D%s ' "$1"
	elif ! grep -Pzq -- "$4" "$tree/include/$2" 2>/dev/null; then
		echo "kcompat.sh: probe $1: include/$2 matches neither" \
		     "pattern; update include/compat/kcompat.sh" >&2
		printf -- 'KCOMPAT_FAILED:%s ' "$1"
	fi
}

# 6.10: cong_control() gained the ACK's sequence and flags.
probe KC_CONG_CONTROL_ACK_FLAG net/tcp.h \
	'\(\*cong_control\)\(struct sock \*sk, u32 ack, int flag,' \
	'\(\*cong_control\)\(struct sock \*sk, const struct rate_sample \*rs\)'
# 6.4: an ITER_IOVEC's array is iter_iov(i), no longer i->iov.
probe KC_ITER_IOV linux/uio.h \
	'iter_iov\(const struct iov_iter \*' \
	'\n\s*const struct iovec \*iov;'
# Until 6.5: struct proto has sendpage (sendfile() uses it); from 6.5
# splice_eof instead.
probe KC_PROTO_SENDPAGE net/sock.h \
	'\(\*sendpage\)\(struct sock \*sk' \
	'\n\s*void\s+\(\*splice_eof\)\(struct socket \*sock\);'
# Until 6.5: proto_ops has sendpage_locked (KCM and others write through it).
probe KC_OPS_SENDPAGE_LOCKED linux/net.h \
	'\(\*sendpage_locked\)\(struct sock \*sk' \
	'\(\*read_skb\)\(struct sock \*sk, skb_read_actor_t recv_actor\);\s*\n\s*int\s+\(\*sendmsg_locked\)'
# 6.2 (backported to 6.1.x): sk_page_frag() gives current->task_frag
# whenever the socket's sk_use_task_frag allows it; before, only for
# sleeping allocations.
probe KC_SK_USE_TASK_FRAG net/sock.h \
	'\n\s*bool\s+sk_use_task_frag;' \
	'sk_page_frag\(struct sock \*sk\)\s*\{\s*if \(\(sk->sk_allocation'
# 6.5: pages go to TCP by reference through sendmsg(MSG_SPLICE_PAGES);
# before, through do_tcp_sendpages().
probe KC_TCP_SPLICE_PAGES linux/skbuff.h \
	'ssize_t skb_splice_from_iter\(struct sk_buff \*skb' \
	'int skb_append_pagefrags\(struct sk_buff \*skb, struct page \*page,'
# 7.x: struct proto's recvmsg() lost its int *addr_len parameter.
probe KC_RECVMSG_ADDR_LEN net/sock.h \
	'\(\*recvmsg\)\(struct sock \*sk, struct msghdr \*msg,\s*size_t len, int flags, int \*addr_len\);' \
	'\(\*recvmsg\)\(struct sock \*sk, struct msghdr \*msg,\s*size_t len, int flags\);'
# 6.13: hrtimer_setup() sets a timer's function with its clock and mode;
# hrtimer_init() (and assigning .function) went away in 6.15.
probe KC_HRTIMER_SETUP linux/hrtimer.h \
	'extern void hrtimer_setup\(struct hrtimer \*timer,' \
	'extern void hrtimer_init\(struct hrtimer \*timer, clockid_t which_clock,'
echo
