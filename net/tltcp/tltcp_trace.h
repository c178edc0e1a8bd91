/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tltcp:tltcp_section_abandoned, on the sender when a section's deadline
 * passes before all of it was handed to TCP (late_ns: how long after the
 * deadline the lifetime timer acted) or close drops it, and
 * tltcp:tltcp_gap, on the receiver when the ABANDON record that reports
 * the gap arrives.  Both carry the connection's addresses and ports
 * (include/research/sock_trace.h).  Read them with bpftrace
 * (tools/bpftrace/tltcp.bt) or through tracefs.
 *
 * Two TRACE_EVENTs rather than one DECLARE_EVENT_CLASS: but for the
 * socket's fields (RT_SOCK_FIELDS, already shared) they record different
 * things, so a class would have nothing else to share.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tltcp

#if !defined(_TLTCP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TLTCP_TRACE_H

#include <linux/tracepoint.h>
#include <research/sock_trace.h>

TRACE_EVENT(tltcp_section_abandoned,
	    TP_PROTO(const struct sock *sk, u64 section, u32 len, u32 sent,
		     u64 deadline_ns),
	    TP_ARGS(sk, section, len, sent, deadline_ns),
	    TP_STRUCT__entry(RT_SOCK_FIELDS
			     __field(u64, section)
			     __field(u32, len)
			     __field(u32, sent)
			     __field(u32, abandoned)
			     __field(u64, deadline_ns)
			     __field(u64, late_ns)),
	    TP_fast_assign(RT_STORE_SOCK(sk);
			   __entry->section = section;
			   __entry->len = len;
			   __entry->sent = sent;
			   __entry->abandoned = len - sent;
			   __entry->deadline_ns = deadline_ns;
			   /* 0: abandoned before its deadline (close) */
			   __entry->late_ns = ktime_get_ns();
			   __entry->late_ns = __entry->late_ns > deadline_ns ?
					      __entry->late_ns - deadline_ns : 0),
	    TP_printk(RT_SOCK_FMT " section=%llu len=%u sent=%u abandoned=%u deadline_ns=%llu late_ns=%llu",
		      RT_SOCK_ARGS, __entry->section, __entry->len,
		      __entry->sent, __entry->abandoned, __entry->deadline_ns,
		      __entry->late_ns)
);

TRACE_EVENT(tltcp_gap,
	    TP_PROTO(const struct sock *sk, u64 section, u32 sec_off,
		     u32 sec_len, u32 len, u64 stream_off),
	    TP_ARGS(sk, section, sec_off, sec_len, len, stream_off),
	    TP_STRUCT__entry(RT_SOCK_FIELDS
			     __field(u64, section)
			     __field(u32, sec_off)
			     __field(u32, sec_len)
			     __field(u32, len)
			     __field(u64, stream_off)),
	    TP_fast_assign(RT_STORE_SOCK(sk);
			   __entry->section = section;
			   __entry->sec_off = sec_off;
			   __entry->sec_len = sec_len;
			   __entry->len = len;
			   __entry->stream_off = stream_off),
	    TP_printk(RT_SOCK_FMT " section=%llu sec_off=%u sec_len=%u len=%u stream_off=%llu",
		      RT_SOCK_ARGS, __entry->section,
		      __entry->sec_off, __entry->sec_len, __entry->len,
		      __entry->stream_off)
);

#endif /* _TLTCP_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tltcp_trace
#include <trace/define_trace.h>
