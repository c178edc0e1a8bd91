#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# without_dccp.sh COMMAND...: run COMMAND in a test guest whose kernel
# cannot give DCCP, as on Linux 6.16 and later, which removed it.  Only
# for a throwaway guest (make vm, python3 -m lab.vm: VM_GUEST=1), whose
# /etc and /lib are overlays: an install rule makes modprobe of every DCCP
# module run /bin/false, and modules.dep loses DCCP's lines, so that
# socket(AF_INET, SOCK_DCCP, IPPROTO_DCCP) returns ESOCKTNOSUPPORT and no
# module file is listed, as where DCCP does not exist.  Nothing in the
# product looks at this: the tools find DCCP missing the way they would
# on a newer kernel.
#
#   make vm KVER=6.1 CMD='selftests/without_dccp.sh make -s -C selftests \
#       run_tests TARGETS="tsm flowgen"'

set -u
if [ "${VM_GUEST:-}" != 1 ]; then
	echo "without_dccp.sh: only in a test guest (make vm): it changes /etc/modprobe.d" >&2
	exit 2
fi
for m in dccp_diag dccp_ipv6 dccp_ipv4 dccp; do
	if grep -q "^$m " /proc/modules && ! rmmod "$m"; then
		echo "without_dccp.sh: $m is loaded and in use" >&2
		exit 2
	fi
done
mkdir -p /etc/modprobe.d
for m in dccp dccp_ipv4 dccp_ipv6 dccp_diag; do
	echo "install $m /bin/false"
done > /etc/modprobe.d/zz-without-dccp.conf
# and no module file, as from 6.16 on (the guest's /lib is an overlay too)
sed -i '\|^[^:]*/net/dccp/[^:]*:|d' "/lib/modules/$(uname -r)/modules.dep"
why=$(python3 -c 'import errno, socket
try:
    socket.socket(socket.AF_INET, 6, 33).close()
except OSError as e:
    print(errno.errorcode[e.errno])')
if [ "$why" != ESOCKTNOSUPPORT ]; then
	echo "without_dccp.sh: a DCCP socket still gives '${why:-no error}'" >&2
	exit 2
fi
echo "# without_dccp.sh: DCCP made unavailable: socket() gives $why"
exec "$@"
