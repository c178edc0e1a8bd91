#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: the project's headline runs in the guest, one after the other,
# each on its own network (lab/demo/<part>.sh):
#   dumbbell  a TCP flow across a dumbbell: configured beside measured
#   tltcp     TLTCP at work: the TLTCP paper's Fig. 5
#   multfrc   MulTFRC(2) beside two Reno flows
#
# Environment: DEMO_PARTS (default all three, in this order), DEMO_SECONDS
# and each part's own (see its header).  Fails if a part fails.

parts=${DEMO_PARTS:-dumbbell tltcp multfrc}
dir=$(dirname "$0")
rc=0
for part in $parts; do
	if [ ! -x "$dir/$part.sh" ]; then
		echo "demo: no part '$part' (lab/demo/)" >&2
		rc=1
		continue
	fi
	echo
	echo "=== demo: $part ==="
	"$dir/$part.sh" || { echo "demo: part '$part' failed" >&2; rc=1; }
done
exit $rc
