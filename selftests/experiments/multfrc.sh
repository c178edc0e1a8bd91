#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MulTFRC, 20 s per run, four runs at once: MulTFRC(2) against two Reno
# flows on a 12 Mbit/s DropTail bottleneck (normalized throughput), four
# parallel Reno flows beside the MulTFRC equation fed with what they
# measured (1 % uniform loss over RED), and MulTFRC(2) and two Reno flows
# through loss stepping from 1 % to 10 % to 0.5 % (scripts/experiments/
# multfrc.toml).
#
# Not in TEST_PROGS yet: on 6.1 (2026-11-23) MulTFRC(2) recovered to only
# 1937 kbit/s after the loss stepped from 10 % back to 0.5 % (bound 3000;
# two Reno flows reached 9091).  Run it by hand:
# make vm CMD='selftests/experiments/multfrc.sh'
exec "$(dirname "$0")/run_short.sh" multfrc tcp_multfrc
