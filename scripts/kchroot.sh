#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command in a kernel build chroot made by scripts/kernels.sh:
#
#   kchroot.sh ROOT COMMAND [ARG...]
#
# In a private mount namespace (nothing stays mounted afterwards) /proc,
# /tmp, a few device nodes and this repository (at the same path, so that
# the symlinks of a build directory resolve) are bound into ROOT.  The
# chroot's /dev is a fresh tmpfs with the host's null, zero, full, random,
# urandom and tty bound onto files: a tool in the chroot that unlinks and
# recreates /dev/null (a failing compiler run with -o /dev/null as root)
# meets a busy mount point, not the host's device node.  As root this uses unshare --mount; otherwise a user namespace
# maps the caller to root (files written keep the caller's ownership).

set -euo pipefail

root=$(realpath "$1")
shift
top=$(cd "$(dirname "$0")/.." && pwd -P)
[ -x "$root/bin/sh" ] || { echo "kchroot: $root is not a chroot; run 'make deps'" >&2; exit 1; }

userns=()
[ "$(id -u)" = 0 ] || userns=(--map-root-user)

# The mounts are made by a shell inside the new namespace; the paths and
# the command are its arguments, never spliced into its text.
exec unshare "${userns[@]}" --mount --propagation private -- sh -c '
	root=$1 top=$2
	shift 2
	mkdir -p "$root$top" "$root/tmp" "$root/proc" "$root/dev"
	mount -t tmpfs -o mode=755,size=1m devtmp "$root/dev" || exit 1
	for d in null zero full random urandom tty; do
		: > "$root/dev/$d" && mount --bind "/dev/$d" "$root/dev/$d" ||
			exit 1
	done
	ln -s /proc/self/fd "$root/dev/fd"
	mkdir "$root/dev/pts" "$root/dev/shm"
	mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts" &&
		ln -s pts/ptmx "$root/dev/ptmx"
	mount -t proc proc "$root/proc" &&
	mount --bind /tmp "$root/tmp" &&
	mount --bind "$top" "$root$top" || exit 1
	exec chroot "$root" /usr/bin/env \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		"$@"' kchroot "$root" "$top" "$@"
