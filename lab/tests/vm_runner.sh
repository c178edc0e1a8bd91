#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-tests of the VM runner (python3 -m lab.vm), run on the host (each boots a guest):
# the guest's exit status comes back, a WARN report or a bad taint in the
# guest kernel log fails the run, a guest that dies fails the run, and a
# guest that does not boot in time fails the run.  Prints TAP.
#
# The four guests boot at the same time (nothing here depends on timing
# but the 3 s boot limit, which no guest meets); make check runs the unit
# tests that do not measure time beside them, which roughly halves the
# time the two take one after the other.  The other three may take
# BOOT_S to boot: three at once beside the unit tests, one of them took
# more than lab.vm's default of 120 s in make check on 2026-12-07.
#
# Usage: vm_runner.sh KERNEL_RELEASE RESULTS_DIR

kernel=$1
results=$(realpath "$2")
# python3 -m lab.vm from the repository's top directory.
cd "$(dirname "$0")/../.." || exit 1
vm="${PYTHON:-python3} -m lab.vm --kernel $kernel --results $results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# guest NAME [vm.py options] -- COMMAND: boot one in the background; its
# output goes to $tmp/NAME.log, its exit status to $tmp/NAME.rc.
guest() {
	local name=$1
	shift
	( $vm "$@" > "$tmp/$name.log" 2>&1; echo $? > "$tmp/$name.rc" ) &
}

# result NAME DESCRIPTION TEST: TEST is evaluated with $rc and $log set
# to that guest's exit status and output.
n=0
result() {
	local rc log=$tmp/$1.log
	rc=$(cat "$tmp/$1.rc")
	n=$((n + 1))
	if eval "$3"; then
		echo "ok $n vm-runner: $2"
	else
		echo "not ok $n vm-runner: $2"
		sed 's/^/# /' "$log"
	fi
}

BOOT_S=600
guest exit --boot-timeout $BOOT_S -- 'exit 3'
guest warn --boot-timeout $BOOT_S -- 'echo "WARNING: CPU: 0 PID: 1 at injected.c:1 vm_runner+0x0/0x0" > /dev/kmsg
	echo 512 > /proc/sys/kernel/tainted'
guest crash --boot-timeout $BOOT_S -- 'echo 1 > /proc/sys/kernel/sysrq; echo c > /proc/sysrq-trigger; sleep 30'
guest noboot --boot-timeout 3 -- 'true'
wait

echo "TAP version 13"
echo "1..4"
result exit "guest exit status 3 is returned, clean log" \
	'[ "$rc" = 3 ] && ! grep -q "problems" "$log"'
result warn "a WARN report and a W taint in the guest fail the run" \
	'[ "$rc" = 1 ] && grep -q "vm:   warn: " "$log" &&
	 grep -q "vm:   taint: .*flags W" "$log"'
result crash "a guest that crashes fails the run and its console shows the panic" \
	'[ "$rc" != 0 ] && grep -q "guest ended without a status" "$log" &&
	 grep -q "vm:   .*Kernel panic - not syncing: sysrq triggered crash" "$log"'
result noboot "a guest that does not boot in time fails the run" \
	'[ "$rc" != 0 ] && grep -q "did not boot within 3s" "$log"'
