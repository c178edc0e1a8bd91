#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MulTFRC, 20 s per run, two runs at a time: MulTFRC(2) against two Reno
# flows on a 12 Mbit/s RED bottleneck (normalized throughput), four
# parallel Reno flows beside the MulTFRC equation fed with what they
# measured (1 % uniform loss over RED), and MulTFRC(2) and two Reno flows
# through loss stepping from 1 % to 10 % to 0.5 % (experiments/
# multfrc.toml).  make check-experiments runs it.
exec "$(dirname "$0")/run_short.sh" multfrc tcp_multfrc
