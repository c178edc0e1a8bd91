#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# DCCP CCID 3 on the DCP paper's 10 Mbit/s, 50 ms link, 30 s: alone it
# should use at least half the link; against one Reno flow its share
# should be within a factor of two of fair (scripts/experiments/dcp.toml).
#
# Not in TEST_PROGS: on 6.1 Linux's CCID 3 got 40 % of the link alone and
# F = 0.24 against Reno in 30 s, and its receiver logged
# "BUG: please report to dccp@vger.kernel.org ... tfrc_rx_hist_sample_rtt()"
# (a DCCP_BUG diagnostic, no oops), which fails a guest run.  Run it by
# hand: make vm CMD='selftests/experiments/dcp.sh'
exec "$(dirname "$0")/run_short.sh" dcp dccp_ipv4 dccp_ipv6
