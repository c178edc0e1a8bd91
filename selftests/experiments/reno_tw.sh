#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TCP-like TW beside NewReno on the paper's 2 Mbit/s, 300 ms link, 40 s:
# TW fills the link within a few RTTs and takes most of it; TCP-like from
# ssthresh 20 does not (experiments/reno_tw.toml).
exec "$(dirname "$0")/run_short.sh" reno_tw tcp_reno_tw
