#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Dumbbell of the TLTCP paper: 1.5 Mbit/s, 20 ms one-way, 400-packet queue.
. "$(dirname "$0")/shape_lib.sh"
shape_init
shape_check_dumbbell 1500000 20 400 0 0 12 4
lib_finish
