#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-tests of scripts/vm.py, run on the host (each boots a guest):
# the guest's exit status comes back, a WARN report or a bad taint in the
# guest kernel log fails the run, a guest that dies fails the run, and a
# guest that does not boot in time fails the run.  Prints TAP.
#
# Usage: vm_runner.sh KERNEL_RELEASE RESULTS_DIR

kernel=$1
results=$2
vm="${PYTHON:-python3} $(dirname "$0")/../vm.py --kernel $kernel --results $results"
n=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

result() { # description, then a command that must succeed
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n vm-runner: $desc"
	else
		echo "not ok $n vm-runner: $desc"
		sed 's/^/# /' "$log"
	fi
}

echo "TAP version 13"
echo "1..4"

$vm -- 'exit 3' > "$log" 2>&1
rc=$?
result "guest exit status 3 is returned, clean log" \
	eval '[ $rc = 3 ] && ! grep -q "problems" "$log"'

$vm -- 'echo "WARNING: CPU: 0 PID: 1 at injected.c:1 vm_runner+0x0/0x0" > /dev/kmsg
	echo 512 > /proc/sys/kernel/tainted' > "$log" 2>&1
rc=$?
result "a WARN report and a W taint in the guest fail the run" \
	eval '[ $rc = 1 ] && grep -q "vm:   warn: " "$log" && grep -q "vm:   taint: .*flags W" "$log"'

$vm -- 'echo 1 > /proc/sys/kernel/sysrq; echo c > /proc/sysrq-trigger; sleep 30' > "$log" 2>&1
rc=$?
result "a guest that crashes fails the run and its console shows the panic" \
	eval '[ $rc != 0 ] && grep -q "guest ended without a status" "$log" &&
		grep -q "vm:   .*Kernel panic - not syncing: sysrq triggered crash" "$log"'

$vm --boot-timeout 3 -- 'true' > "$log" 2>&1
rc=$?
result "a guest that does not boot in time fails the run" \
	eval '[ $rc != 0 ] && grep -q "did not boot within 3s" "$log"'
