#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Take the kselftest framework (lib.mk, kselftest.h, kselftest_harness.h,
# the runner) into selftests/, and checkpatch.pl with its data files into
# build/checkpatch/, from Debian's linux-source-6.1 tarball.  Nothing from
# the kernel is kept in the repository (.gitignore lists these files).
# Extraction takes about 8 s and is redone only when the tarball changes.

set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${LINUX_SOURCE_TARBALL:-$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null || true)}
stamp=$top/build/.ksft-extracted

if [ -z "$tarball" ] || [ ! -r "$tarball" ]; then
	echo "ksft-extract: /usr/src/linux-source-6.1.tar.xz not found: run 'make deps'" >&2
	exit 1
fi
if [ -e "$stamp" ] && [ "$stamp" -nt "$tarball" ] &&
   [ -e "$top/selftests/kselftest_harness.h" ] &&
   [ -e "$top/build/checkpatch/scripts/checkpatch.pl" ]; then
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base=linux-source-6.1
ksft=$base/tools/testing/selftests
tar -xJf "$tarball" -C "$tmp" \
	"$ksft/lib.mk" "$ksft/kselftest.h" "$ksft/kselftest_harness.h" \
	"$ksft/kselftest/runner.sh" "$ksft/kselftest/prefix.pl" \
	"$base/scripts/checkpatch.pl" "$base/scripts/spelling.txt" \
	"$base/scripts/const_structs.checkpatch"

mkdir -p "$top/selftests/kselftest" "$top/build/checkpatch/scripts"
cp "$tmp/$ksft/lib.mk" "$tmp/$ksft/kselftest.h" \
   "$tmp/$ksft/kselftest_harness.h" "$top/selftests/"
cp "$tmp/$ksft/kselftest/runner.sh" "$tmp/$ksft/kselftest/prefix.pl" \
   "$top/selftests/kselftest/"
cp "$tmp/$base/scripts/checkpatch.pl" "$tmp/$base/scripts/spelling.txt" \
   "$tmp/$base/scripts/const_structs.checkpatch" "$top/build/checkpatch/scripts/"
touch "$stamp"
echo "ksft-extract: kselftest framework and checkpatch taken from $tarball" >&2
