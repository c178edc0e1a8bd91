/* SPDX-License-Identifier: GPL-2.0 */
/*
 * multfrc:multfrc_update, emitted whenever MulTFRC sets a connection's
 * rate (once per RTT, and on every loss event): the state a user needs to
 * see why the rate is what it is, with the connection's addresses
 * (include/research/sock_trace.h).  Read it with bpftrace
 * (tracepoint:multfrc:multfrc_update) or through tracefs.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM multfrc

#if !defined(_TCP_MULTFRC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TCP_MULTFRC_TRACE_H

#include <linux/tracepoint.h>
#include <research/sock_trace.h>

TRACE_EVENT(multfrc_update,
	    TP_PROTO(const struct sock *sk, u32 n_milli, u32 p_ppb,
		     u32 j_milli, u32 rtt_us, u32 rto_us, u64 x_calc,
		     u64 x_recv, u64 rate, bool slow_start),
	    TP_ARGS(sk, n_milli, p_ppb, j_milli, rtt_us, rto_us, x_calc,
		    x_recv, rate, slow_start),
	    TP_STRUCT__entry(RT_SOCK_FIELDS
			     __field(u32, n_milli)
			     __field(u32, p_ppb)
			     __field(u32, j_milli)
			     __field(u32, rtt_us)
			     __field(u32, rto_us)
			     __field(u64, x_calc)
			     __field(u64, x_recv)
			     __field(u64, rate)
			     __field(bool, slow_start)),
	    TP_fast_assign(RT_STORE_SOCK(sk);
			   __entry->n_milli = n_milli;
			   __entry->p_ppb = p_ppb;
			   __entry->j_milli = j_milli;
			   __entry->rtt_us = rtt_us;
			   __entry->rto_us = rto_us;
			   __entry->x_calc = x_calc;
			   __entry->x_recv = x_recv;
			   __entry->rate = rate;
			   __entry->slow_start = slow_start),
	    TP_printk(RT_SOCK_FMT " n_milli=%u p_ppb=%u j_milli=%u rtt_us=%u rto_us=%u x_calc=%llu x_recv=%llu rate=%llu slow_start=%d",
		      RT_SOCK_ARGS, __entry->n_milli,
		      __entry->p_ppb, __entry->j_milli, __entry->rtt_us,
		      __entry->rto_us, __entry->x_calc, __entry->x_recv,
		      __entry->rate, __entry->slow_start)
);

#endif /* _TCP_MULTFRC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tcp_multfrc_trace
#include <trace/define_trace.h>
