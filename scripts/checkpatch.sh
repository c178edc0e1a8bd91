#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict over every module source (net/, include/), with the
# checkpatch taken from the linux-source package (scripts/ksft-extract.sh).
# Prints one TAP line per file.

top=$(cd "$(dirname "$0")/.." && pwd)
cp=$top/build/checkpatch/scripts/checkpatch.pl
[ -x "$cp" ] || chmod +x "$cp" 2>/dev/null
[ -e "$cp" ] || { echo "checkpatch: run 'make ksft' first" >&2; exit 1; }

cd "$top" || exit 1
files=$(git ls-files --cached --others --exclude-standard 'net/*.c' 'net/*.h' 'include/*.h' 2>/dev/null ||
	find net include -name '*.[ch]')
n=0 failed=0
echo "TAP version 13"
echo "1..$(echo $files | wc -w)"
for f in $files; do
	n=$((n + 1))
	# Justified exceptions, one per line in scripts/checkpatch.ignore:
	# "<file> <TYPE>  # why".
	extra=$(awk -v f="$f" '$1 == f { printf ",%s", $2 }' \
		"$top/scripts/checkpatch.ignore" 2>/dev/null)
	if out=$(perl "$cp" --strict --no-tree --quiet --show-types \
		 --ignore "SPDX_LICENSE_TAG$extra" -f "$f" 2>&1) && [ -z "$out" ]; then
		echo "ok $n checkpatch: $f"
	else
		echo "not ok $n checkpatch: $f"
		echo "$out" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
done
[ $failed = 0 ]
