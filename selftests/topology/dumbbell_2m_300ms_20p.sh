#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Dumbbell of the TCP-like TW paper: 2 Mbit/s 300 ms bottleneck with a
# 20-packet DropTail queue, 10 Mbit/s 1 ms access links.
. "$(dirname "$0")/shape_lib.sh"
shape_init
#
# The queue is a fifth of the path's 100-packet BDP: one loss-based flow
# cannot keep such a link busy.  CUBIC's window after a loss is 0.7 of
# 120 packets, 84, and slow start's overshoot at a 604 ms RTT costs
# several RTTs of recovery.  The flow measured 96.5 % and 91.6 % of the
# link's payload rate in two runs (2026-11); 12 % still fails a link
# built with 20 % less rate.
TCP_TOLERANCE=12
shape_check_dumbbell 2000000 300 20 10000000 1 30 10
lib_finish
