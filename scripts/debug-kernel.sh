#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the check-debug kernel: Debian's linux-source-6.12 with
# KASAN, KFENCE, lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS_TIMERS, kmemleak
# and UBSAN, configured from a minimal base: `make defconfig` plus
# virtme-ng's own fragment (virtme-configkernel --defconfig), the selftests'
# config fragments and scripts/debug-kernel.config.
#
# The build lives outside the work tree, in
#   $DEBUG_KERNEL_CACHE/<source version>-<config hash>/
# and a second run with the same source and fragments reuses it.  All the
# compiling runs under `nice -n 19 ionice -c3` so timed guest runs of other
# users of the machine are not disturbed.
#
# Usage: scripts/debug-kernel.sh [build|path]
#   build  build when missing, then print KEY=value lines (default)
#   path   print the KEY=value lines of an existing build, fail when missing
# Output: KERNEL=<bzImage> MODDIR=<modules_install root> KREL=<release>
#         BUILD=<kbuild output dir, for out-of-tree modules> BUILD_SECONDS=<n>

set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${DEBUG_KERNEL_CACHE:-/var/cache/research-transports/debug-kernel}
SRCPKG=linux-source-6.12
SRCTAR=/usr/src/$SRCPKG.tar.xz
NICE=(nice -n 19 ionice -c3)
MODE=${1:-build}

die() { echo "debug-kernel: $*" >&2; exit 1; }
log() { echo "debug-kernel: $*" >&2; }

[ -r "$SRCTAR" ] || die "$SRCTAR missing: run 'DEPS_DEBUG=1 scripts/deps.sh' (apt-get install $SRCPKG)"
command -v virtme-configkernel >/dev/null || die "virtme-configkernel (virtme-ng) not found"
SRCVER=$(dpkg-query -W -f='${Version}' "$SRCPKG" 2>/dev/null) || die "$SRCPKG is not installed"
VNGVER=$(vng --version 2>/dev/null | head -n1 || echo unknown)

mkdir -p "$CACHE"

# The fragment: the selftests' needs (minus this project's own out-of-tree
# modules, which Kconfig does not know) and the debug options last.  The
# deployment checks (selftests/bpftrace, selftests/pkg: make check-deploy)
# run in Debian's own kernels, never in this one: their options (BTF needs
# pahole and a full debug-info build) stay out.
FRAG=$(mktemp)
trap 'rm -f "$FRAG"' EXIT
{
	for f in "$TOP"/selftests/*/config; do
		case $f in
		*/selftests/bpftrace/config | */selftests/pkg/config) ;;
		*) cat "$f" ;;
		esac
	done |
		grep -v -e '^CONFIG_TLTCP=' -e '^CONFIG_TCP_CONG_MULTFRC=' \
			-e '^CONFIG_TCP_CONG_RENO_TW='
	cat "$TOP/scripts/debug-kernel.config"
} >"$FRAG"

KEY=$( { echo "$SRCVER"; echo "$VNGVER"; cat "$FRAG";
	 sed -n '/^configure()/,/^}/p' "$0"; } | sha256sum | cut -c1-12)
OUT=$CACHE/$SRCVER-$KEY
BUILD=$OUT/build
MODDIR=$OUT/mods

report() {
	local krel

	krel=$(cat "$BUILD/include/config/kernel.release")
	# The image is booted from outside the build tree: virtme-ng takes an
	# image inside a kbuild tree for a "vng --build" one and looks for
	# modules in its .virtme_mods.
	echo "KERNEL=$OUT/vmlinuz-$krel"
	echo "MODDIR=$MODDIR"
	echo "KREL=$krel"
	echo "BUILD=$BUILD"
	echo "BUILD_SECONDS=$(cat "$OUT/build-seconds")"
}

if [ -e "$OUT/done" ]; then
	log "reusing $OUT"
	report
	exit 0
fi
[ "$MODE" = path ] && die "no debug kernel built in $OUT"

exec 9>"$CACHE/.lock"
flock 9
if [ -e "$OUT/done" ]; then
	report
	exit 0
fi

SRC=$CACHE/src-$SRCVER/$SRCPKG
if [ ! -e "$SRC/Makefile" ]; then
	log "unpacking $SRCTAR"
	rm -rf "$CACHE/src-$SRCVER.tmp"
	mkdir -p "$CACHE/src-$SRCVER.tmp"
	"${NICE[@]}" tar -C "$CACHE/src-$SRCVER.tmp" -xJf "$SRCTAR"
	rm -rf "$CACHE/src-$SRCVER"
	mv "$CACHE/src-$SRCVER.tmp" "$CACHE/src-$SRCVER"
fi

configure() {
	rm -rf "$OUT"
	mkdir -p "$BUILD"
	(cd "$SRC" && virtme-configkernel --defconfig --custom "$FRAG" \
		O="$BUILD" >&2)
	# Debug info doubles the build for nothing the log scanner needs:
	# kallsyms already names the function in every report.
	"$SRC/scripts/config" --file "$BUILD/.config" \
		-d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_DWARF4 \
		-d DEBUG_INFO_DWARF5 -e DEBUG_INFO_NONE -d DEBUG_INFO_BTF \
		-d WERROR
	make -s -C "$SRC" O="$BUILD" olddefconfig >&2
}
configure

# Every =y/=m the fragment asks for must have survived olddefconfig (a
# missing dependency silently drops an option).
missing=
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=y|CONFIG_*=m) ;;
	*) continue ;;
	esac
	opt=${line%%=*}
	grep -q "^$opt=[ym]" "$BUILD/.config" || missing="$missing $opt"
done <"$FRAG"
# IP_DCCP left the tree in newer kernels; it is only for the experiments.
missing=$(echo "$missing" | tr ' ' '\n' | grep -v -e '^$' -e '^CONFIG_IP_DCCP' || true)
[ -z "$missing" ] || die "options dropped by Kconfig:" $missing

log "building in $BUILD (niced); see $OUT/build.log"
start=$(date +%s)
if ! "${NICE[@]}" make -C "$SRC" O="$BUILD" -j"$(nproc)" bzImage modules \
	>"$OUT/build.log" 2>&1; then
	tail -n 30 "$OUT/build.log" >&2
	die "build failed"
fi
"${NICE[@]}" make -s -C "$SRC" O="$BUILD" modules_install \
	INSTALL_MOD_PATH="$MODDIR" INSTALL_MOD_STRIP=1 DEPMOD=/sbin/depmod \
	>>"$OUT/build.log" 2>&1 || die "modules_install failed"
cp "$BUILD/arch/x86/boot/bzImage" \
	"$OUT/vmlinuz-$(cat "$BUILD/include/config/kernel.release")"
echo $(( $(date +%s) - start )) >"$OUT/build-seconds"
touch "$OUT/done"
log "built in $(cat "$OUT/build-seconds") s"
report
