#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything this project needs on Debian 12 (bookworm): the two
# Debian 12 target kernels (image + headers of the same version), the
# newest 6.18 and the newest Debian kernel (scripts/kernels.sh: unpacked
# into /var/cache/research-transports, built in a chroot), the VM runner
# (virtme-ng, QEMU, busybox, kmod), the kernel source for checkpatch and the
# kselftest headers, the networking tools and the plotting library; the
# Python packages Debian lacks go into the project's own virtual environment.
#
# Idempotent: when everything is present it only reads dpkg's database and
# apt's lists, which takes well under a second.  Kernel versions are resolved
# from apt's lists at install time, never hard-coded: the mirror moves.
#
# Environment:
#   DEPS_UPDATE=1   refresh apt's lists first (otherwise only done when a
#                   package is missing or the lists are empty)
#   DEPS_DRY_RUN=1  print what would be installed, install nothing
#   KERNEL_TARGETS  the kernels scripts/kernels.sh provides (default
#                   "6.18 latest"; empty: none)
#   RT_VENV         the project's Python virtual environment (default
#                   /opt/research-transports/venv; must be visible in the
#                   guest, so not below /var/cache or /tmp)
#   DEPS_DEBUG=1    also the debug kernel's source, linux-source-6.12
#                   (make check-debug only; make check does not need it)

set -euo pipefail

VIRTME_NG_VERSION=1.42

die() { echo "deps: $*" >&2; exit 1; }
log() { echo "deps: $*" >&2; }

if [ ! -r /etc/debian_version ] || ! command -v apt-get >/dev/null ||
   ! command -v dpkg-query >/dev/null; then
	die "this is not a Debian system with apt; install by hand the packages listed in README (section 'Dependencies')"
fi
case "$(cut -d. -f1 /etc/debian_version)" in
12|bookworm*) ;;
*) log "warning: tested on Debian 12 (bookworm), this is $(cat /etc/debian_version)" ;;
esac

SUDO=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || die "must run as root or have sudo"
	SUDO=sudo
fi

# Packages whose name does not depend on the kernel version.
BASE_PKGS=(
	build-essential bc bison flex libelf-dev
	qemu-system-x86 busybox-static kmod
	mmdebstrap debian-archive-keyring
	linux-source-6.1 xz-utils
	iproute2 iputils-ping ethtool iperf3 bpftrace bpftool tcpdump procps psmisc nftables
	linux-perf
	python3 python3-venv python3-matplotlib
	dkms debhelper dh-dkms python3-docutils
)

installed() { # pkg -> 0 when installed
	dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | grep -q '^ii'
}

lists_empty() {
	! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null
}

# Newest version of a kernel flavour that has both an image and headers.
# $1: regex matching the image package's version part, e.g. '6\.1\.0-[0-9]+'
newest_kernel() {
	local re=$1 v
	for v in $(apt-cache pkgnames linux-image- 2>/dev/null |
		   sed -nE "s/^linux-image-(${re})-amd64$/\1/p" | sort -rV); do
		if apt-cache show "linux-headers-$v-amd64" >/dev/null 2>&1; then
			echo "$v-amd64"
			return 0
		fi
	done
	return 1
}

resolve_kernels() {
	K61=$(newest_kernel '6\.1\.0-[0-9]+') || K61=
	K612=$(newest_kernel '6\.12\.[0-9]+\+deb12') || K612=
}

wanted_pkgs() {
	WANT=("${BASE_PKGS[@]}")
	[ "${DEPS_DEBUG:-0}" = 1 ] && WANT+=(linux-source-6.12)
	[ -n "$K61" ] && WANT+=("linux-image-$K61" "linux-headers-$K61")
	[ -n "$K612" ] && WANT+=("linux-image-$K612" "linux-headers-$K612")
	MISSING=()
	local p
	for p in "${WANT[@]}"; do
		installed "$p" || MISSING+=("$p")
	done
}

if [ "${DEPS_UPDATE:-0}" = 1 ] || lists_empty; then
	log "apt-get update"
	$SUDO apt-get update -qq
fi
resolve_kernels
wanted_pkgs
if [ ${#MISSING[@]} -gt 0 ] && [ "${DEPS_UPDATE:-0}" != 1 ]; then
	# Something is missing: refresh the lists so we install the newest.
	log "apt-get update (missing: ${MISSING[*]})"
	$SUDO apt-get update -qq
	resolve_kernels
	wanted_pkgs
fi
[ -n "$K61" ] || die "no linux-image-6.1.0-*-amd64 with matching headers in apt's lists (is bookworm in sources.list?)"
[ -n "$K612" ] || die "no linux-image-6.12.*+deb12-amd64 with matching headers in apt's lists (is bookworm-security in sources.list?)"

if [ ${#MISSING[@]} -gt 0 ]; then
	if [ "${DEPS_DRY_RUN:-0}" = 1 ]; then
		echo "would install: ${MISSING[*]}"
	else
		log "installing: ${MISSING[*]}"
		# The guest builds its own initramfs (virtme-ng); skip the
		# host-side one that a kernel image's postinst would make.
		$SUDO env DEBIAN_FRONTEND=noninteractive INITRD=No \
			apt-get install -y -qq --no-install-recommends \
			"${MISSING[@]}" >/dev/null
	fi
fi

# The project's Python: a virtual environment of Debian's python3 (never a
# pyenv or other python3 first in PATH) that sees Debian's packages
# (python3-matplotlib) and holds what Debian 12 does not package, virtme-ng,
# pinned, from PyPI.  Nothing is installed into a system Python, so pip
# needs no --break-system-packages.  It lives in /opt, not /var/cache: the
# guest shares the host's file system but mounts a tmpfs over /var/cache,
# and the guest's commands run the same interpreter (lab/vm).  The Makefile
# puts $RT_VENV/bin first in PATH and runs the lab with its python3.
RT_VENV=${RT_VENV:-/opt/research-transports/venv}
VPY=$RT_VENV/bin/python3
venv_ok() { # the venv runs, sees matplotlib and has the pinned vng
	[ -x "$RT_VENV/bin/vng" ] && "$VPY" -c '
import importlib.metadata as m, importlib.util as u, sys
sys.exit(u.find_spec("matplotlib") is None or
         m.version("virtme-ng") != sys.argv[1])' "$VIRTME_NG_VERSION" 2>/dev/null
}
if ! venv_ok; then
	if [ "${DEPS_DRY_RUN:-0}" = 1 ]; then
		echo "would create: $RT_VENV (python3 -m venv, virtme-ng==$VIRTME_NG_VERSION from PyPI)"
	else
		log "setting up $RT_VENV: virtme-ng==$VIRTME_NG_VERSION from PyPI"
		[ -x "$VPY" ] || $SUDO /usr/bin/python3 -m venv --system-site-packages "$RT_VENV" ||
			die "python3 -m venv $RT_VENV failed (is python3-venv installed?)"
		# --ignore-installed: a virtme-ng in a system site (an older
		# deps.sh put one there) must not stand in for the venv's own.
		$SUDO "$VPY" -m pip install -q --disable-pip-version-check \
			--ignore-installed "virtme-ng==$VIRTME_NG_VERSION" ||
			die "pip install virtme-ng into $RT_VENV failed"
		"$VPY" -c 'import matplotlib' 2>/dev/null ||
			$SUDO "$VPY" -m pip install -q --disable-pip-version-check matplotlib ||
			die "matplotlib: neither Debian's python3-matplotlib nor PyPI's in $RT_VENV"
		venv_ok || die "$RT_VENV is not usable"
	fi
fi

# The kernels Debian 12 does not carry: newest 6.18, newest at all.
if [ -n "${KERNEL_TARGETS-6.18 latest}" ]; then
	if [ "${DEPS_DRY_RUN:-0}" = 1 ]; then
		echo "would provide kernels: ${KERNEL_TARGETS-6.18 latest}"
	else
		$SUDO env KERNEL_TARGETS="${KERNEL_TARGETS-6.18 latest}" \
			DEPS_UPDATE="${DEPS_UPDATE:-0}" \
			${RT_KCACHE:+RT_KCACHE="$RT_KCACHE"} \
			"$(dirname "$0")/kernels.sh"
	fi
fi

log "ok: kernels $K61 and $K612"
