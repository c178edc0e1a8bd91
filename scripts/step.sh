# SPDX-License-Identifier: GPL-2.0
#
# Sourced by scripts/check.sh and scripts/check-debug.sh: step runs one
# host-side step of a check as one TAP line in $host, numbered by $n, its
# output kept in $out/step.log and, on failure, its last 40 lines shown.

step() { # description, command...: one TAP line in host.tap
	local desc=$1 log=$out/step.log
	shift
	n=$((n + 1))
	echo "# $(date +%T) $desc" >&2
	if "$@" > "$log" 2>&1; then
		echo "ok $n $desc" >> "$host"
	else
		echo "not ok $n $desc" >> "$host"
		sed 's/^/# /' "$log" | tail -40 | tee -a "$host" >&2
		return 1
	fi
}
