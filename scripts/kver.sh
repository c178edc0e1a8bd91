#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Resolve a target name to the release of an installed Debian kernel:
#   6.1   -> newest installed 6.1.0-N-amd64
#   6.12  -> newest installed 6.12.X+deb12-amd64
#   6.18, latest, or another name scripts/kernels.sh provides
#         -> the release it resolved to (in $RT_KCACHE/targets/NAME), an
#            image unpacked below $RT_KCACHE/kernels and headers in a
#            build chroot (default RT_KCACHE=/var/cache/research-transports)
#   other -> printed as given (a full release such as 6.1.0-56-amd64)
# "Installed" means both the image (/boot/vmlinuz-*) and the headers
# (/lib/modules/*/build) are present, or the release is complete in the
# cache.  Prints nothing and fails otherwise.

set -euo pipefail

target=${1:-6.1}
case "$target" in
6.1)	re='^6\.1\.0-[0-9]+-amd64$' ;;
6.12)	re='^6\.12\.[0-9]+\+deb12-amd64$' ;;
*)
	kcache=${RT_KCACHE:-/var/cache/research-transports}
	if [ -e "$kcache/targets/$target" ]; then
		rel=$(cat "$kcache/targets/$target")
		if [ -e "$kcache/kernels/$rel/.ready" ]; then
			echo "$rel"
			exit 0
		fi
		echo "kver: $target ($rel) is incomplete; run 'make deps'" >&2
		exit 1
	fi
	case "$target" in
	*.*.*|*-*) echo "$target"; exit 0 ;;
	esac
	echo "kver: no $target kernel provided; run 'make deps'" >&2
	exit 1
	;;
esac

for v in $(ls /lib/modules 2>/dev/null | grep -E "$re" | sort -rV); do
	if [ -e "/lib/modules/$v/build/Makefile" ] && [ -e "/boot/vmlinuz-$v" ]; then
		echo "$v"
		exit 0
	fi
done
echo "kver: no installed $target kernel with headers; run 'make deps'" >&2
exit 1
