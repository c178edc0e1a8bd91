#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Time-lined TCP on the TLTCP paper's Table 1 dumbbell, 20 s per run: Fig. 5
# (TLTCP and TCP each about half the link, gaps at the deadlines, every
# abandoned byte reported to the receiver), 3 TLTCP + 3 TCP flows sharing
# fairly, and TLTCP (abandoning one RTT ahead) delivering more than twice
# TCP's bytes of a deadline workload on time (experiments/tltcp.toml).
exec "$(dirname "$0")/run_short.sh" tltcp tltcp sctp
