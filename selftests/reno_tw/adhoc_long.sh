#!/bin/bash
# ad hoc (not committed): 5 Mbit/s, 275 ms, 50 packets, MSS 1448: reno_tw vs bbr alone
. "$(dirname "$0")/../lib.sh"
lib_init
lib_require_module tcp_reno_tw
modprobe tcp_bbr
lib_topo_up dumbbell --rate 5mbit --delay 275ms --queue 50 \
	--access-rate 50mbit --access-delay 1ms
port=5201
for cc in reno_tw bbr reno_tw bbr; do
	out=$TMPD/$cc.$port.json
	lib_iperf_flow s1 d1 $port "$out" -t 60 -C $cc
	lib_reap_jobs 80
	lib_log "$cc: $(lib_json "$out" "(lambda r: ('mean10-60', round(sum(r[10:60]) / len(r[10:60])), 't90', next((i + 1 for i in range(len(r)) if r[i] >= 0.9 * 4.8e6), -1), 'retr', d['end']['sum_sent'].get('retransmits', -1), ','.join(str(round(x / 1e3)) for x in r[:15])))([iv['sum']['bits_per_second'] for iv in d['intervals']])")"
	port=$((port + 1))
done
lib_finish
