/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Time-lined TCP (TLTCP): the user-space interface of the "tltcp" TCP
 * upper-layer protocol.  See Documentation/tltcp.rst.
 *
 * Both ends attach the ULP to a connected TCP socket:
 *
 *	setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tltcp", sizeof("tltcp"));
 *
 * Sender: sendmsg(fd, &msg, MSG_TL).  Every element of msg_iov is one
 * section; a SOL_TLTCP / TL_DEADLINE control message carries one __u64
 * deadline in nanoseconds per section (relative to the call, or absolute
 * CLOCK_MONOTONIC with TL_DEADLINE_ABS).  The unsent part of a section is
 * abandoned when its deadline passes (with TL_ARRIVAL_ON, as soon as it
 * can no longer arrive by it).  Without MSG_TL, data goes as one
 * section with the socket's default deadline (TL_DEFAULT_DEADLINE, 0:
 * none, fully reliable).
 *
 * Receiver: recvmsg(fd, &msg, MSG_TL) returns the bytes of one piece of one
 * section, or one gap, with a SOL_TLTCP control message of type TL_DATA or
 * TL_GAP holding a struct tl_record.  For a gap the buffer is zero-filled
 * and the return value is the gap's length (at most the buffer's).
 * Without MSG_TL, recvmsg returns the data bytes only and skips gaps.
 *
 * Fields are fixed-width, 64-bit ones first, structures a multiple of
 * 8 bytes: the same layout for 32- and 64-bit programs.
 */
#ifndef _UAPI_LINUX_TLTCP_H
#define _UAPI_LINUX_TLTCP_H

#include <linux/types.h>

/* Socket option level and control message level ("TL"). */
#define SOL_TLTCP		0x544c

/* sendmsg() and recvmsg() flag: time-lined data. */
#define MSG_TL			0x400000

/* Control message types at SOL_TLTCP. */
#define TL_DEADLINE		1	/* sendmsg: __u64 ns per section */
#define TL_DEADLINE_ABS		2	/* same, absolute CLOCK_MONOTONIC */
#define TL_DATA			3	/* recvmsg: struct tl_record */
#define TL_GAP			4	/* recvmsg: struct tl_record */

/* Socket options at SOL_TLTCP. */
#define TL_INFO			1	/* get: struct tl_info */
#define TL_DEFAULT_DEADLINE	2	/* get/set: __u64 ns, 0 = none */
#define TL_SNDQ_LIMIT		3	/* get/set: __u32 bytes, 0 = SO_SNDBUF */
#define TL_NOTSENT		4	/* get/set: __u32 bytes ahead of snd_nxt */
#define TL_ARRIVAL		5	/* get/set: __u32 TL_ARRIVAL_* */

/* TL_ARRIVAL values: whose clock a deadline is on. */
#define TL_ARRIVAL_OFF		0	/* default: the sender's.  The unsent
					 * part of a section is abandoned when
					 * its deadline passes; sections go in
					 * the order they were queued.
					 */
#define TL_ARRIVAL_ON		1	/* the receiver's.  A section is
					 * abandoned as soon as its last byte
					 * can no longer arrive by its deadline
					 * (estimated from TCP's RTT and
					 * delivery rate and the bytes ahead
					 * of it), and queued sections go
					 * earliest deadline first.
					 */

/* Limits. */
#define TL_MAX_SECTIONS		1024	/* sections per sendmsg (UIO_MAXIOV) */
#define TL_MAX_SECTION_LEN	(64U << 20)	/* bytes in one section */
#define TL_MAX_DEADLINE		(3600ULL * 1000000000ULL)	/* one hour */
#define TL_MIN_NOTSENT		1024
#define TL_MAX_NOTSENT		(4U << 20)
#define TL_MAX_SNDQ_LIMIT	(256U << 20)

/* What one recvmsg(MSG_TL) returned. */
struct tl_record {
	__u64 stream_off;	/* offset of its first byte in the stream of
				 * section bytes (data and gaps)
				 */
	__u64 section;		/* section number, counted from 0 in the
				 * order the sections were sent
				 */
	__u64 sec_len;		/* length of that section */
	__u32 sec_off;		/* offset of its first byte in the section */
	__u32 len;		/* bytes returned (data) or skipped (gap) */
	__u32 flags;		/* TL_REC_* */
	__u32 reserved;
};

#define TL_REC_SECTION_END	0x1	/* the section ends with this record */

/* Counters of one socket (TL_INFO); sender ones count what this end sent. */
struct tl_info {
	__u64 sections_offered;		/* sections the application queued */
	__u64 sections_completed;	/* every byte handed to TCP */
	__u64 sections_abandoned_unsent;	/* abandoned before any byte */
	__u64 sections_abandoned_partial;	/* abandoned after some bytes */
	__u64 bytes_offered;
	__u64 bytes_sent;		/* section bytes handed to TCP */
	__u64 bytes_abandoned;		/* never handed to TCP */
	__u64 bytes_obsolete_late;	/* handed to TCP before the deadline
					 * but first sent by TCP after it
					 */
	__u64 bytes_obsolete_retrans;	/* TCP retransmissions while its
					 * oldest unacknowledged byte was
					 * obsolete (an estimate)
					 */
	__u64 bytes_queued;		/* waiting in the module's queue */
	__u64 sections_queued;
	__u64 sections_received;	/* receiver: sections begun */
	__u64 bytes_received;		/* receiver: data bytes */
	__u64 gaps_received;		/* receiver: gaps (abandoned ranges) */
	__u64 bytes_gap;		/* receiver: bytes in gaps */
	__u64 reserved;
	/* Appended; TL_INFO returns as much as the caller's length takes. */
	__u64 sections_abandoned_early;	/* TL_ARRIVAL: abandoned before the
					 * deadline, as unable to arrive by it
					 */
	/* TL_ARRIVAL: the arrival estimate's error.  For each section whose
	 * last byte TCP took, the arrival predicted then is compared with the
	 * arrival measured as the time of the ACK that covers that byte, less
	 * half the minimum RTT.  Mean error: (late - early) / samples.
	 */
	__u64 arrival_samples;
	__u64 arrival_early_ns;		/* sum over arrivals before prediction */
	__u64 arrival_late_ns;		/* sum over arrivals after prediction */
	__u64 arrival_early_max_ns;
	__u64 arrival_late_max_ns;
};

#endif /* _UAPI_LINUX_TLTCP_H */
