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
# Every check is one line: a flag, a header below include/, and an extended
# regular expression that matches only when the feature is there.

tree=$1
if [ -z "$tree" ] || [ ! -d "$tree/include" ]; then
	echo "usage: kcompat.sh <kernel tree with include/>" >&2
	exit 1
fi

check() { # flag header regex
	if grep -Eq "$3" "$tree/include/$2" 2>/dev/null; then
		printf -- '-D%s ' "$1"
	fi
}

# 6.10: cong_control() gained the ACK's sequence and flags.
check KC_CONG_CONTROL_ACK_FLAG net/tcp.h \
	'\(\*cong_control\)\(struct sock \*sk, u32 ack, int flag,'
# 6.4: an ITER_IOVEC's array is iter_iov(i), no longer i->iov.
check KC_ITER_IOV linux/uio.h 'iter_iov\(const struct iov_iter \*'
# Until 6.5: struct proto has sendpage (sendfile() uses it).
check KC_PROTO_SENDPAGE net/sock.h '\(\*sendpage\)\(struct sock \*sk'
echo
