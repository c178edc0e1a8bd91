#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Provide the target kernels that Debian 12 does not carry (called by
# scripts/deps.sh; Documentation/kernels.rst says why it works this way):
#
#   6.18     the newest 6.18 (LTS) image Debian packages
#   latest   the newest kernel image Debian packages at all
#
# Both are resolved from the package lists of KERNEL_SUITES (default
# "trixie trixie-backports sid"), kept in a private apt state below the
# cache directory: the host's apt configuration is not touched.  For each
# target kernel release REL:
#
#   - the image (and, from 7.x, its split linux-binary/linux-modules/
#     linux-base packages) is unpacked with dpkg-deb -x into
#     $KCACHE/kernels/REL/ (boot/vmlinuz-REL or usr/lib/modules/REL/vmlinuz,
#     usr/lib/modules/REL/...), and depmod makes its module indexes; nothing
#     is installed on the host;
#   - the headers, their -common part and the matching linux-kbuild are
#     unpacked into a chroot of the Debian release that built the kernel
#     ($KCACHE/chroot/CODENAME, made with mmdebstrap), which also holds that
#     release's compiler (the headers' gcc-N-for-host dependency) and make:
#     kbuild's fixdep and modpost are linked against that release's libc,
#     and the kernel's configuration records that compiler.  The modules are
#     built inside it (scripts/kchroot.sh).  When a suite no longer lists a
#     release's headers (backports keeps old signed images but only the
#     newest source's headers), they come from the archive's pool, named
#     after the image's Built-Using source version.
#
# $KCACHE/targets/NAME holds the release a target resolved to; kver.sh
# reads it.  $KCACHE/kernels/REL/.ready marks a complete release; a second
# run with everything in place only reads the private lists (about 1 s).
#
# Environment: RT_KCACHE (default /var/cache/research-transports),
# KERNEL_SUITES, KERNEL_MIRROR (default http://deb.debian.org/debian),
# KERNEL_TARGETS (default "6.18 latest"), DEPS_UPDATE=1 (refresh the lists).

set -euo pipefail

KCACHE=${RT_KCACHE:-/var/cache/research-transports}
SUITES=${KERNEL_SUITES:-trixie trixie-backports sid}
MIRROR=${KERNEL_MIRROR:-http://deb.debian.org/debian}
TARGETS=${KERNEL_TARGETS:-6.18 latest}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
APTDIR=$KCACHE/apt
ARCH=amd64

die() { echo "kernels: $*" >&2; exit 1; }
log() { echo "kernels: $*" >&2; }

APT_OPTS=(
	-o "Dir::Etc::SourceList=$APTDIR/sources.list"
	-o Dir::Etc::SourceParts=/nonexistent
	-o "Dir::State::Lists=$APTDIR/lists"
	-o "Dir::State::status=$APTDIR/status"
	-o "Dir::Cache=$APTDIR"
	-o "Dir::Cache::archives=$APTDIR/archives"
	-o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin
	-o "APT::Architecture=$ARCH" -o "APT::Architectures::=$ARCH"
	-o Acquire::Languages=none
	-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
	-o APT::Sandbox::User=root
)
acache() { apt-cache "${APT_OPTS[@]}" "$@"; }
aget() { apt-get -qq "${APT_OPTS[@]}" "$@"; }

setup_apt() {
	local s want
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/archives/partial"
	[ -e "$APTDIR/status" ] || : > "$APTDIR/status"
	want=$(for s in $SUITES; do
		echo "deb [signed-by=$KEYRING] $MIRROR $s main"
	done)
	if [ "$(cat "$APTDIR/sources.list" 2>/dev/null)" != "$want" ]; then
		echo "$want" > "$APTDIR/sources.list"
		rm -f "$APTDIR"/lists/*_Packages*
	fi
}

lists_empty() { ! compgen -G "$APTDIR/lists/*_Packages*" >/dev/null; }

update_lists() {
	log "apt-get update ($SUITES)"
	aget update || die "apt-get update of $SUITES failed"
}

# Field $2 of package $1's newest entry in the lists.
field() {
	acache show "$1" 2>/dev/null | sed -n "s/^$2: //p" | head -1
}

# Suite (e.g. trixie-backports) that lists package $1.
suite_of() {
	acache madison "$1" 2>/dev/null |
		awk -F'|' 'NR == 1 { split($3, a, " "); split(a[2], b, "/"); print b[1] }'
}

# Releases (REL, e.g. 6.18.15+deb13-amd64) of the generic amd64 flavour
# whose image is in the lists, newest first; $1: a regex for REL.
candidates() {
	local re=$1 names
	names=$(acache pkgnames linux-image- 2>/dev/null |
		grep -E "^linux-image-${re}$") || return 0
	# madison lists only packages that have a version (not virtual ones).
	# shellcheck disable=SC2086
	acache madison $names 2>/dev/null | awk '{ print $1 }' | sort -u |
		sed 's/^linux-image-//' | sort -rV
}

target_regex() {
	case "$1" in
	latest)	echo '[0-9]+\.[0-9]+\.[0-9]+\+deb[0-9]+-amd64' ;;
	[0-9]*.[0-9]*)
		echo "${1//./\\.}"'\.[0-9]+\+deb[0-9]+-amd64' ;;
	*)	die "unknown kernel target '$1'" ;;
	esac
}

# Fetch package $1 (version $2, architecture $3) into $APTDIR/archives:
# from the lists when they carry it, else from the pool of source
# package linux.  Prints the .deb's path.
fetch() {
	local pkg=$1 ver=$2 arch=$3 f url
	f=$APTDIR/archives/${pkg}_${ver//:/%3a}_${arch}.deb
	if [ ! -s "$f" ]; then
		if [ "$(field "$pkg" Version)" = "$ver" ]; then
			(cd "$APTDIR/archives" && aget download "$pkg=$ver") ||
				return 1
		else
			url=$MIRROR/pool/main/l/linux/${pkg}_${ver#*:}_${arch}.deb
			/usr/lib/apt/apt-helper -qq download-file "$url" "$f.part" \
				>/dev/null 2>&1 || { rm -f "$f.part"; return 1; }
			mv "$f.part" "$f"
		fi
	fi
	echo "$f"
}

# Names in a Depends field, first alternative, without versions.
dep_names() {
	tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/:any//; s/[[:space:]]//g' |
		grep -v '^$'
}

# The build chroot of Debian release $1 (trixie, sid...), with suite $2
# (e.g. trixie-backports) in its sources too.
make_chroot() {
	local codename=$1 suite=$2 root=$KCACHE/chroot/$1 srcs
	srcs=("deb $MIRROR $codename main")
	[ "$suite" != "$codename" ] && srcs+=("deb $MIRROR $suite main")
	if [ -x "$root/usr/bin/apt-get" ]; then
		if ! grep -qs " $suite main" "$root/etc/apt/sources.list"; then
			echo "deb $MIRROR $suite main" >> "$root/etc/apt/sources.list"
		fi
		return 0
	fi
	command -v mmdebstrap >/dev/null ||
		die "mmdebstrap missing (scripts/deps.sh installs it)"
	log "creating the $codename build chroot in $root (a few minutes)"
	rm -rf "$root.tmp"
	mkdir -p "$KCACHE/chroot"
	nice -n 10 mmdebstrap --quiet --variant=apt --include=make \
		--aptopt='Acquire::Languages "none"' \
		--dpkgopt='path-exclude=/usr/share/{doc,man,locale}/*' \
		"$codename" "$root.tmp" "${srcs[@]}" >&2 ||
		die "mmdebstrap $codename failed"
	mv "$root.tmp" "$root"
}

# Install packages $2... from the chroot's own lists into chroot $1.
chroot_install() {
	local root=$1
	shift
	local out
	# apt's and the maintainer scripts' chatter only when it failed.
	if ! out=$("$(dirname "$0")/kchroot.sh" "$root" sh -c \
		'apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		 apt-get install -y -qq --no-install-recommends "$@"' \
		install "$@" 2>&1); then
		echo "$out" | tail -20 >&2
		return 1
	fi
}

# Provide release $1 (image unpacked, headers in its build chroot).
provide() {
	local rel=$1 kdir=$KCACHE/kernels/$1 img=linux-image-$1
	local ver suite codename srcver abi root deps p d f debs=()

	ver=$(field "$img" Version)
	suite=$(suite_of "$img")
	codename=${suite%%-*}
	srcver=$(field "$img" Built-Using | sed -nE 's/.*\blinux \(= ([^)]+)\).*/\1/p')
	[ -n "$srcver" ] || srcver=$ver
	abi=${rel%-amd64}
	root=$KCACHE/chroot/$codename
	log "providing $rel ($suite, linux $srcver)"

	# Image: the image package and the packages of this release it
	# depends on (7.x splits it into linux-binary, -modules, -base).
	f=$(fetch "$img" "$ver" $ARCH) || return 1
	debs=("$f")
	for d in $(dpkg-deb -f "$f" Depends | dep_names | grep -F -- "$rel"); do
		[ -n "$(field "$d" Version)" ] || continue	# virtual
		f=$(fetch "$d" "$ver" $ARCH) || return 1
		debs+=("$f")
	done
	# Headers, their common part and kbuild, of the source version.
	f=$(fetch "linux-headers-$rel" "$srcver" $ARCH) || {
		log "no linux-headers-$rel $srcver in the lists or the pool"
		return 1
	}
	deps=$(dpkg-deb -f "$f" Depends | dep_names)
	local hdebs=("$f")
	f=$(fetch "linux-headers-$abi-common" "$srcver" all) || return 1
	hdebs+=("$f")
	f=$(fetch "linux-kbuild-$abi" "$srcver" $ARCH) || return 1
	hdebs+=("$f")
	deps+=" $(dpkg-deb -f "$f" Depends | dep_names)"

	rm -rf "$kdir.tmp"
	mkdir -p "$kdir.tmp"
	for f in "${debs[@]}"; do
		dpkg-deb -x "$f" "$kdir.tmp"
	done
	[ -d "$kdir.tmp/usr/lib/modules/$rel" ] ||
		die "$rel: no usr/lib/modules/$rel in its packages"
	log "depmod for $rel (about 30 s)"
	depmod -b "$kdir.tmp/usr" "$rel" 2>/dev/null ||
		die "$rel: depmod failed"

	make_chroot "$codename" "$suite"
	# The build's tools from the chroot's release: the headers' own
	# dependencies (gcc-N-for-host...) and kbuild's libraries, but not
	# the packages of this release, which are unpacked below.
	local want=(make binutils)
	for p in $deps; do
		case "$p" in
		*"$abi"*|linux-base*|linux-headers-*|linux-kbuild-*) ;;
		*) want+=("$p") ;;
		esac
	done
	chroot_install "$root" "${want[@]}" || die "installing ${want[*]} in $root failed"
	for f in "${hdebs[@]}"; do
		dpkg-deb -x "$f" "$root"
	done
	[ -e "$root/usr/src/linux-headers-$rel/Makefile" ] ||
		die "$rel: no /usr/src/linux-headers-$rel in its headers"

	ln -sfn "../../chroot/$codename" "$kdir.tmp/chroot"
	echo "$srcver $suite" > "$kdir.tmp/source"
	rm -rf "$kdir"
	mv "$kdir.tmp" "$kdir"
	touch "$kdir/.ready"
}

# Resolve target $1 to a release and provide it; prints the release.
resolve() {
	local name=$1 rel
	for rel in $(candidates "$(target_regex "$name")"); do
		if [ -e "$KCACHE/kernels/$rel/.ready" ]; then
			echo "$rel"
			return 0
		fi
		if provide "$rel"; then
			echo "$rel"
			return 0
		fi
		log "$rel cannot be provided, trying an older $name"
	done
	return 1
}

main() {
	local t rel out=() missing=0
	command -v dpkg-deb >/dev/null || die "dpkg-deb missing"
	mkdir -p "$KCACHE/targets" "$KCACHE/kernels"
	setup_apt
	if [ "${DEPS_UPDATE:-0}" = 1 ] || lists_empty; then
		update_lists
	fi
	for t in $TARGETS; do
		if ! rel=$(resolve "$t"); then
			log "no $t kernel with headers in $SUITES"
			missing=1
			continue
		fi
		echo "$rel" > "$KCACHE/targets/$t.tmp"
		mv "$KCACHE/targets/$t.tmp" "$KCACHE/targets/$t"
		out+=("$t=$rel")
	done
	log "ok: ${out[*]}"
	return $missing
}

main "$@"
