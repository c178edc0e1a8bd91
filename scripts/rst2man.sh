#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A man page from one of Documentation/*.rst with docutils' rst2man
# (python3-docutils): the document's title gives way to the page's name
# and one-line summary, :doc: references become plain names, the rest is
# the document as it stands.
#
#   scripts/rst2man.sh NAME SECTION "SUMMARY" DOC.rst OUT

set -euo pipefail
[ $# = 5 ] || { echo "usage: $0 NAME SECTION SUMMARY DOC.rst OUT" >&2; exit 2; }
name=$1 section=$2 summary=$3 doc=$4 out=$5
rst2man=$(command -v rst2man || command -v rst2man.py) ||
	{ echo "rst2man.sh: rst2man not found (apt-get install python3-docutils)" >&2; exit 1; }

bar() { printf '%*s\n' "$1" '' | tr ' ' "$2"; }
{
	bar ${#name} =; echo "$name"; bar ${#name} =; echo
	bar ${#summary} -; echo "$summary"; bar ${#summary} -; echo
	echo ":Manual section: $section"
	echo ":Manual group: research transports"
	echo
	# The body: everything after the document's own (overlined) title.
	awk 'done { print; next }
	     /^=+$/ { bars++; if (bars == 2) done = 1; next }
	     bars == 0 && !/^\.\. / && NF { done = 1; print }' "$doc" |
		sed -E 's/:doc:`([^`<]*<)?([^`>]*)>?`/\2/g'
} | "$rst2man" --halt=warning - "$out"
