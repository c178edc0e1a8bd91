#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Dumbbell of the DCP paper: 10 Mbit/s, 50 ms one-way, BDP-sized queue.
. "$(dirname "$0")/shape_lib.sh"
shape_init
shape_check_dumbbell 10000000 50 bdp 0 0 12 4
lib_finish
