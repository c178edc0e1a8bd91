#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Dumbbell of the TCP-like TW paper: 2 Mbit/s 300 ms bottleneck with a
# 20-packet DropTail queue, 10 Mbit/s 1 ms access links.
. "$(dirname "$0")/shape_lib.sh"
check_dumbbell 2000000 300 20 10000000 1 30 10
finish
