#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The shape checks must be able to fail: build a dumbbell with 20% more
# delay, then one with 20% less rate, than the checks expect, and require
# the RTT and the TCP goodput checks respectively to fail.
. "$(dirname "$0")/../lib.sh"
lib_init

dir=$(dirname "$0")
run_faulty() { # fault check-pattern checks-to-run
	TOPO_FAULT=$1 SHAPE_CHECKS=$3 "$dir/dumbbell_10m_50ms_bdp.sh" \
		> "$TMPD/$1.out" 2>&1
	local rc=$?
	sed 's/^/#   /' "$TMPD/$1.out"
	[ $rc = $KSFT_FAIL ] && grep -q "^not ok .*$2" "$TMPD/$1.out"
}
lib_check "20% more delay fails the RTT checks" run_faulty delay "ping RTT" rtt
lib_check "20% less rate fails the goodput check" run_faulty rate "TCP goodput" tcp
lib_finish
