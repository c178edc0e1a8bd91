#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In a guest of the debug kernel (make check-debug), after the tests: ask
# kmemleak for a scan and print one TAP line, "ok" when it reports no
# unreferenced object.  The report goes to FILE (and to the guest's log
# through the kernel's own "N new suspected memory leaks" line, which the
# VM runner's log scanner also fails on).
#
# Usage: kmemleak-scan.sh FILE

out=${1:-/dev/null}
km=/sys/kernel/debug/kmemleak
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
if [ ! -e "$km" ]; then
	echo "not ok 1 kmemleak scan: $km missing (kmemleak off?)"
	exit 1
fi
# Objects younger than 5 s are never reported, and one scan can miss
# a pointer held only in a register: settle, scan twice.
sleep 6
echo scan > "$km" || { echo "not ok 1 kmemleak scan: scan refused"; exit 1; }
sleep 6
echo scan > "$km"
cat "$km" > "$out"
leaks=$(grep -c '^unreferenced object' "$out")
if [ "$leaks" = 0 ]; then
	echo "ok 1 kmemleak scan: no unreferenced object"
	exit 0
fi
echo "not ok 1 kmemleak scan: $leaks unreferenced objects"
sed 's/^/# /' "$out" | head -60
exit 1
