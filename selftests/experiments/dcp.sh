#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# DCCP CCID 3 on the DCP paper's 10 Mbit/s, 50 ms link with a BDP queue
# (experiments/dcp.toml, short variant: 50 s runs): alone it uses
# at least half the link; when one Reno flow joins it at 10 s, its share
# from 20 s on is within a factor of two of the Reno flow's (loose
# bounds for a 50 s run; the paper reports 60-80 % alone and F slightly
# below 1).
exec "$(dirname "$0")/run_short.sh" dcp dccp_ipv4 dccp_ipv6
