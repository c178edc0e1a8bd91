#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: research-transports-dkms and research-transports-tools, built
# by Debian's own tooling (dpkg-buildpackage, debhelper, dh-dkms) from a
# copy of the tree's files (tracked or new, not ignored), so that the
# package never picks up build results.  The packages land in $1.
#
#   scripts/mkdeb.sh OUTDIR

set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUTDIR}
for c in dpkg-buildpackage dh dh_dkms; do
	command -v $c >/dev/null ||
		{ echo "mkdeb: $c missing (make deps installs debhelper, dh-dkms)" >&2; exit 1; }
done
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
deb=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
[ "${deb%%-*}" = "$ver" ] ||
	{ echo "mkdeb: dkms.conf says $ver, debian/changelog $deb" >&2; exit 1; }

rm -rf "$out"
src=$out/research-transports-$ver
mkdir -p "$src"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 -I{} sh -c 'test -e "{}" && cp --parents -a "{}" "$0"' "$src")
(cd "$src" && dpkg-buildpackage -b -us -uc --no-sign >"$out/build.log" 2>&1) || {
	tail -30 "$out/build.log" >&2
	echo "mkdeb: dpkg-buildpackage failed, log in $out/build.log" >&2
	exit 1
}
ls "$out"/*.deb
