#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The middleware's tunnel on the paper's congestion-collapse topology
# (experiments/tsm.toml): two growing UDP sources collapse the
# throughput at the sinks over RED and, each through a DCCP CCID 3 tunnel,
# do not; 3 + 3 VoIP flows: the lower branch's full queue delays it by
# about 4.8 s, and through one-packet tunnels the sinks get more.
exec "$(dirname "$0")/run_short.sh" tsm dccp_ipv4 dccp_ipv6
