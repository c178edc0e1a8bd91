#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the guest (started by lab/vm through virtme-ng).
#
#   vm-guest.sh STATE_DIR MODULE_DIR CMD_TIMEOUT [MODULE_INDEXES [KMODS]]
#
# STATE_DIR is shared read-write with the host.  It holds the command to run
# (cmd) and receives: booted (uptime when this script started), kmsg (the
# kernel log, streamed while the command runs, so that it survives a guest
# that dies), dmesg (the whole log at the end), taint and status (the
# command's exit status).
#
# The modules found in MODULE_DIR are installed into the guest's throwaway
# /lib/modules/$(uname -r)/extra, so that modprobe, and the kernel's own
# autoload (TCP_CONGESTION, TCP_ULP), find them as on a real machine.  The
# indexes that say where they are come from MODULE_INDEXES, made by the
# host's depmod (vm.py); without it the guest runs depmod (30 s in TCG).
# KMODS, for a kernel that is not installed on the host (--image), is the
# root its own modules were installed into: the guest's /lib/modules/
# $(uname -r) is made from it.

state=$1
moddir=$2
cmd_timeout=$3
modindex=${4:-}
kmods=${5:-}

cut -d' ' -f1 /proc/uptime > "$state/booted"

# The guest sees the host's file system; keep the usual sbin paths first.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export VM_GUEST=1

dmesg --follow --notime > "$state/kmsg" 2>/dev/null &
kmsg_pid=$!

# A kernel unpacked outside /lib/modules (scripts/kernels.sh) arrives as
# a symlink that virtme made to the host's directory: make it a directory
# of links to the host's files, so that extra/ and the indexes written
# below stay in the guest.
mdir=/lib/modules/$(uname -r)
if [ -L "$mdir" ]; then
	src=$(readlink -f "$mdir")
	rm "$mdir" && mkdir -p "$mdir" && ln -s "$src"/* "$mdir"/
fi

krel=$(uname -r)
if [ -n "$kmods" ] && [ -d "$kmods/lib/modules/$krel" ] &&
   [ ! -e "/lib/modules/$krel/modules.dep" ]; then
	mkdir -p "/lib/modules/$krel"
	cp -a "$kmods/lib/modules/$krel/." "/lib/modules/$krel/"
	depmod -a
fi

if [ -n "$moddir" ] && [ -d "$moddir" ]; then
	extra=/lib/modules/$(uname -r)/extra
	mkdir -p "$extra"
	find "$moddir" -name '*.ko' -exec cp {} "$extra/" \;
	if [ -n "$modindex" ] && [ -s "$modindex/modules.dep.bin" ]; then
		rm -f "/lib/modules/$(uname -r)"/modules.*
		cp "$modindex"/modules.* "/lib/modules/$(uname -r)/"
	else
		depmod -a
	fi
fi

# Networking test defaults that a real machine has and the bare guest not.
ip link set lo up 2>/dev/null

# The command's standard error joins its output: vng would hand it to the
# host's standard error with the kernel's console, which vm.py keeps in a
# file, and a long run's progress would go unseen.
timeout --kill-after=10 "$cmd_timeout" bash "$state/cmd" 2>&1
rc=$?
if [ $rc = 124 ]; then
	echo "vm: command timed out after ${cmd_timeout}s" >&2
fi

# Let deferred reports (RCU callbacks, workqueues) reach the log.
sleep 1
kill "$kmsg_pid" 2>/dev/null
dmesg > "$state/dmesg"
cat /proc/sys/kernel/tainted > "$state/taint"
echo "$rc" > "$state/status"
sync
exit "$rc"
