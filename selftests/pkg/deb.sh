#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages of 'make deb' on the running kernel, as an
# administrator uses them: install research-transports-dkms and
# research-transports-tools with dpkg, DKMS builds and installs the modules
# for this kernel, modprobe loads each by name, a TLTCP flow with reno_tw
# runs with the packaged flowgen, then both packages are purged and nothing
# of them is left: no file they listed, no DKMS tree, no module, no
# modules.dep entry.
#
# Where it may run: only in the project's guest.  virtme-ng shares the
# host's root file system read-only (QEMU's 9p export is readonly=on) and
# puts a throwaway tmpfs overlay on /etc, /lib, /usr, /var and /tmp, so that
# dpkg and DKMS write only into guest memory.  The test checks exactly that
# before it touches anything and skips otherwise.
. "$(dirname "$0")/../lib.sh"
lib_init

DEBS=${DEBS:-$REPO/build/deb}
MODS="tltcp tcp_multfrc tcp_reno_tw"
KREL=$(uname -r)

[ "${VM_GUEST:-}" = 1 ] || lib_skip "installs packages: runs only in the VM (make vm)"
for d in /etc /lib /usr /var; do
	[ "$(findmnt -no FSTYPE --target $d)" = overlay ] ||
		lib_skip "$d is not a throwaway overlay: installing would change the host"
done
[ "$(findmnt -no OPTIONS --target / | tr , '\n' | grep -x ro)" = ro ] ||
	lib_skip "/ is writable: installing could change the host"
lib_require_cmd dpkg dkms
dkms_deb=$(ls "$DEBS"/research-transports-dkms_*_all.deb 2>/dev/null | tail -1)
tools_deb=$(ls "$DEBS"/research-transports-tools_*_amd64.deb 2>/dev/null | tail -1)
[ -n "$dkms_deb" ] && [ -n "$tools_deb" ] || lib_skip "no packages in $DEBS (make deb)"
[ -e "/lib/modules/$KREL/build/Makefile" ] || lib_skip "no headers for $KREL"

# DKMS builds for the running kernel and the newest one with headers:
# hide the other kernels' headers (in the throwaway overlay), compiling
# under TCG is slow enough for one.
for b in /lib/modules/*/build; do
	[ "$b" = "/lib/modules/$KREL/build" ] || rm -f "$b"
done

# The guest installs the tree's own modules into extra/: out of the way,
# so that what loads can only be what DKMS built.
for m in $MODS; do
	rmmod "$m" 2>/dev/null
	rm -f "/lib/modules/$KREL/extra/$m.ko"
done

# stamped CMD...: run it, each line of its output after the seconds it
# came at (STAMPED_SECS: how long it took); DKMS compiling under TCG takes
# minutes, and this says where.  SECONDS itself is lib_finish's.
stamped() {
	local t0=$SECONDS line rc

	"$@" 2>&1 | while IFS= read -r line; do
		printf '%4d %s\n' "$((SECONDS - t0))" "$line"
	done
	rc=${PIPESTATUS[0]}
	STAMPED_SECS=$((SECONDS - t0))
	return "$rc"
}

# man-db's trigger re-indexes every manual page after each dpkg run: 200-
# 320 s of the 6.12 guest's install and purge under TCG, and nothing this
# test looks at.  Switched off as "man-db/auto-update false" does, in the
# throwaway overlay.
rm -f /var/lib/man-db/auto-update

stamped dpkg -i "$dkms_deb" "$tools_deb" > "$TMPD/install.log"
rc=$?
lib_log "dpkg -i: exit $rc in $STAMPED_SECS s"
sed 's/^/#   /' "$TMPD/install.log" | tail -30
lib_check "dpkg installs both packages" test $rc = 0
dpkg -L research-transports-dkms research-transports-tools 2>/dev/null |
	sort -u > "$TMPD/files"
status=$(dkms status research-transports 2>&1)
lib_log "dkms status: $status"
lib_check "DKMS built and installed the modules for $KREL" \
	grep -q "$KREL.*: installed" <<< "$status"

for m in $MODS; do
	path=$(modinfo -n "$m" 2>/dev/null)
	lib_check "modprobe $m loads DKMS's build ($path)" \
		eval "modprobe $m && grep -q '^$m ' /proc/modules && [[ $path == */updates/dkms/$m.ko* ]]"
done

lib_check "the tools' man pages are installed" test -s /usr/share/man/man1/flowgen.1.gz -a \
	-s /usr/share/man/man7/tltcp.7.gz -a -s /usr/share/man/man1/tsm.1.gz

FLOWGEN=/usr/bin/flowgen
lib_topo_up dumbbell --rate 10mbit --delay 5ms --queue bdp
lib_flowgen_flow s1 d1 "$TMPD/flow.json" -P tltcp -C reno_tw -D 20000,0.1,1 -t 3 ||
	lib_log "the flow failed"
read -r got gaps <<< "$(lib_flowgen_summary "$TMPD/flow.json" bytes gaps)"
sent=$(lib_flowgen_summary "$TMPD/flow.json.snd" tl.bytes_sent)
cc=$(lib_json "$TMPD/flow.json.snd" "d.get('congestion')")
lib_log "packaged flowgen, TLTCP over $cc: $sent bytes sent, $got received, $gaps gaps"
lib_check "a TLTCP flow with reno_tw delivers what it sent" \
	test "${got:-0}" -gt 500000 -a "$got" = "$sent" -a "$cc" = reno_tw
lib_topo_down

for m in $MODS; do
	rmmod "$m" || lib_log "rmmod $m failed"
done
stamped dpkg --purge research-transports-tools research-transports-dkms > "$TMPD/purge.log"
rc=$?
lib_log "dpkg --purge: exit $rc in $STAMPED_SECS s"
sed 's/^/#   /' "$TMPD/purge.log" | tail -30
lib_check "dpkg purges both packages" test $rc = 0

left=$(while read -r f; do [ -f "$f" ] && echo "$f"; done < "$TMPD/files")
lib_check "no file of either package is left${left:+: $left}" test -z "$left"
left=$(ls -d /var/lib/dkms/research-transports /usr/src/research-transports-* \
	/lib/modules/*/updates/dkms/{tltcp,tcp_multfrc,tcp_reno_tw}.ko* 2>/dev/null)
lib_check "no DKMS tree, source or module is left${left:+: $left}" test -z "$left"
lib_check "modules.dep does not name the modules any more" \
	eval "! grep -qE '(tltcp|tcp_multfrc|tcp_reno_tw)\\.ko' /lib/modules/$KREL/modules.dep"
lib_finish
