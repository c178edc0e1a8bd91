#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run_short.sh NAME [MODULE...]: run an experiment's short variant and
# pass or fail on its checks.  Results stay in $EXPERIMENT_OUT/NAME if set.
. "$(dirname "$0")/../lib.sh"
lib_init

name=$1
shift
[ -x "$FLOWGEN" ] || lib_skip "tools/flowgen not built (make tools)"
# DCCP's modules: an experiment that needs them does not apply to a
# kernel without DCCP (lab.experiment refuses it there).
for m in "$@"; do
	case $m in
	dccp*)	lib_require_dccp ;;
	*)	lib_require_module "$m" ;;
	esac
done
out=${EXPERIMENT_OUT:-$TMPD}/$name-short
# with site: the plots need matplotlib
"$PYTHON_SITE" -m lab.experiment run "$name" --short --out "$out"
rc=$?
[ -s "$out/README.md" ] && sed -n '/^## Every run/,/^## Figures/p' "$out/README.md" | sed 's/^/# /'
[ $rc = 0 ] && exit $KSFT_PASS
exit $KSFT_FAIL
