# SPDX-License-Identifier: GPL-2.0
"""The VM runner: python3 -m lab.vm boots a kernel in virtme-ng, runs a
command in it (guest.sh) and fails the run on a bad kernel log
(kmsg_scan)."""
