#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: everything, from nothing, ending with "N passed, N failed".
#
#   1. install dependencies (scripts/deps.sh)
#   2. build the modules for every target kernel, warnings as errors
#   3. checkpatch --strict over the module sources, and the user-space
#      unit tests that measure time
#   4. the other unit tests, beside the VM runner's self-tests (on the
#      first kernel)
#   5. every selftest in a guest of each target kernel; a guest whose
#      kernel log shows a WARN/BUG/... or a bad taint is a failed test
#
# Environment: CHECK_KERNELS (the kernels whose guests run the selftests,
# default "6.1 6.12 latest": Debian 12's two and the newest Debian kernel
# that scripts/kernels.sh provides; the newest 6.18 is built, not booted,
# for time: CHECK_KERNELS="6.1 6.12 6.18 latest" boots it too),
# BUILD_KERNELS (the kernels the modules are built for with -Werror,
# default 6.1, 6.12, 6.18, latest and CHECK_KERNELS), SKIP_IS_FAIL=1 (count skipped
# tests as failures; CI sets it), CHECK_CPUS (each guest's vCPUs,
# default 1: see below),
# TARGETS (the first kernel's selftest directories, default CHECK_TARGETS
# of selftests/Makefile, the modules', the tools' and the middleware's,
# but for tltcp_stream where a third kernel's guest runs it: the lanes
# below then take about as long; the experiment harness's own checks run
# in make check-experiments),
# TARGETS_LATER (for the second kernel, default those that test this
# project's modules, and the bpftrace scripts shipped for them:
# reno_tw, multfrc, tltcp, bpftrace, each with
# LATER=1, its selection of what depends on the kernel's version: see
# their Makefiles; flowgen is user space over the kernel's TCP, DCCP and
# SCTP, and the streaming example (tltcp_stream) uses only what
# selftests/tltcp checks on every kernel), ENV_FIRST and ENV_LATER (the
# environment of the first and the second kernel's selftests, default
# "FAIRNESS_N=1,4" and "FAIRNESS_N=2": MulTFRC(1) and MulTFRC(4) against
# as many Reno flows on the first kernel, MulTFRC(2) on the second, so
# that each n of the test's default runs once).  TARGETS_NEWER and
# ENV_NEWER choose them for the third kernel on (latest): the same
# module directories with NEWER=1 as well, which leaves out what 6.1 and 6.12
# already ran and does not depend on the kernel's version beyond them
# (multfrc's fairness.sh, tltcp's fuzz.sh), plus the streaming example
# and tsm's tunnel.sh (these kernels have no DCCP: the tunnel's
# fallback), and TLTCP_FAMILY=4: tltcp_test's IPv4 variants only (its
# IPv6 ones run on 6.1 and 6.12).

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
PY=${PYTHON:-python3}
kernels=${CHECK_KERNELS:-6.1 6.12 latest}
build_kernels=${BUILD_KERNELS:-$(printf '%s\n' 6.1 6.12 6.18 latest $kernels | awk '!seen[$0]++')}
out=$top/results/check
rm -rf "$out"
mkdir -p "$out"
host=$out/host.tap
n=0
start=$(date +%s)

. "$top/scripts/step.sh"

echo "TAP version 13" > "$host"
if ! step "dependencies installed" scripts/deps.sh; then
	$PY -m lab.tap_summary "$host" | tee "$out/summary.txt"
	exit 1
fi
# What is installed must be recognised as installed: a second run is fast.
deps_again() {
	local t0=$(date +%s%N) ms
	scripts/deps.sh || return 1
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	echo "second run took ${ms} ms"
	[ $ms -lt 10000 ]
}
step "make deps is idempotent: a second run under 10 s" deps_again
for k in $build_kernels; do
	step "modules build for $k with -Werror" make -s modules KVER="$k" WERROR=1
done
step "tools build with -Werror" make -s tools WERROR=1
step "kselftest framework and selftests build" make -s selftests

# checkpatch and the unit tests that measure time (loopback rates, idle
# timeouts) run on a quiet host; the other unit tests while the VM
# runner's four guests boot and keep both CPUs busy.
first=$(scripts/kver.sh "${kernels%% *}")
echo "# $(date +%T) checkpatch, unit tests that measure time" >&2
scripts/checkpatch.sh > "$out/checkpatch.tap" 2>&1 &
$PY -m lab.tests.run --timed > "$out/unit-timed.tap" 2>&1
wait
echo "# $(date +%T) other unit tests, VM runner self-tests on $first" >&2
$PY -m lab.tests.run --untimed > "$out/unit.tap" 2>&1 &
lab/tests/vm_runner.sh "$first" "$out" > "$out/vm-runner.tap" 2>&1
wait

# The guest's TAP on our stderr: result lines with the seconds since the
# guest started (the runner hands over a directory's output when its
# tests are done, so that is the resolution), and a failed test's own
# output before its line, so that a CI log says why and where the time
# goes.
show_results() {
	awk 'function now(	t) { "date +%s" | getline t; close("date +%s"); return t }
	BEGIN { start = now() }
	/^#/ { buf[n++ % 40] = $0; next }
	/^(not )?ok / {
		if ($1 == "not")
			for (i = (n > 40 ? n - 40 : 0); i < n; i++)
				print buf[i % 40]
		print $0 " [+" now() - start " s]"; n = 0; fflush() }'
}

# run_guest KERNEL CPUS ENV TARGETS MAKE_ARGS: the selftests in a guest of
# KERNEL into selftests-KERNEL.tap, its guest result last.
run_guest() {
	local k=$1 cpus=$2 env=$3 targets=$4 make_args=$5 tap rel rc
	tap=$out/selftests-$k.tap
	if ! rel=$(scripts/kver.sh "$k"); then
		echo "not ok 1 kernel $k installed with headers" > "$tap"
		return
	fi
	echo "# $(date +%T) selftests in the $rel guest ($cpus vCPU)" >&2
	$PY -m lab.vm --kernel "$rel" --modules "build/$rel" \
		--results "$out" --timeout 3600 --cpus "$cpus" -- \
		"$env make -s --no-print-directory -C selftests run_tests TARGETS='$targets' $make_args" \
		2> "$out/vm-$k.log" | sed -u "s/^\(\(not \)\?ok [0-9]* selftests\): /\1[$k]: /" \
		| tee "$tap" | show_results >&2
	rc=${PIPESTATUS[0]}
	# The guest's result has its own plan: after a guest that died
	# mid-directory it must not stand in for that directory's missing
	# results (lab/tap_summary.py counts those as failed).
	echo "1..1" >> "$tap"
	if [ "$rc" = 0 ]; then
		echo "ok 1 guest $rel: booted, kernel log clean" >> "$tap"
	else
		echo "not ok 1 guest $rel: boot, status or kernel log (vm exit $rc)" >> "$tap"
		sed 's/^/# /' "$out/vm-$k.log" >> "$tap"
	fi
	grep '^vm: ' "$out/vm-$k.log" >&2
}

# The second kernel's guest runs with LATER=1, the third's on with
# NEWER=1 too, one after another.
later_lane() {
	local nk=1 k
	for k in "$@"; do
		nk=$((nk + 1))
		if [ $nk = 2 ]; then
			run_guest "$k" "$cpus" "${ENV_LATER-FAIRNESS_N=2}" \
				"$later_targets" "LATER=1"
		else
			run_guest "$k" "$cpus" "${ENV_NEWER-TLTCP_FAMILY=4}" \
				"${TARGETS_NEWER:-$module_targets tltcp_stream tsm}" \
				"LATER=1 NEWER=1"
		fi
	done
}

# Guests of one vCPU (the default) run in two lanes, as the host has two
# CPUs: the first kernel's in one, the others' one after another in the
# other.  Under TCG a guest of one vCPU ran the 6.12 selection in 513 s
# where one of two took 569, and it has no second vCPU to run a stale
# translation while the kernel patches its code (the int3 faults that
# killed guests of two: Documentation/building.rst).  Guests of two vCPUs
# (CHECK_CPUS=2) run one after another.
# The bpftrace scripts run in the second kernel's guest (6.12: BTF, and
# the bpftrace of Debian 12 knows it): 100 s in a guest of one vCPU
# beside two other guests (2026-11-26).
module_targets="reno_tw multfrc tltcp"
later_targets=${TARGETS_LATER:-$module_targets bpftrace}
cpus=${CHECK_CPUS:-1}
set -- $kernels
first=$1
# The streaming example runs in the third kernel's guest, if there is one.
drop=
[ $# -ge 3 ] && drop=tltcp_stream
first_targets=${TARGETS:-$(make -s --no-print-directory -C selftests print-check-targets |
	tr ' ' '\n' | grep -vx "${drop:-.^}" | tr '\n' ' ')}
shift
if [ "$cpus" -ge 2 ]; then
	run_guest "$first" "$cpus" "${ENV_FIRST-FAIRNESS_N=1,4}" "$first_targets" ""
	later_lane "$@"
else
	run_guest "$first" "$cpus" "${ENV_FIRST-FAIRNESS_N=1,4}" "$first_targets" "" &
	later_lane "$@" &
	wait
fi

echo "# $(date +%T) done in $(( $(date +%s) - start ))s" >&2
args=()
[ "${SKIP_IS_FAIL:-0}" = 1 ] && args+=(--skip-is-fail)
$PY -m lab.tap_summary "${args[@]}" "$out"/*.tap | tee "$out/summary.txt"
exit "${PIPESTATUS[0]}"
