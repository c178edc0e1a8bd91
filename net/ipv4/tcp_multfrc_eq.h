/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MulTFRC throughput equation: the rate of n parallel TCP flows as a
 * function of the loss event rate, the packets lost per loss event, the
 * RTT and the RTO, its inverse, and the window that goes with a rate
 * (see tcp_multfrc_eq.c).  Integer arithmetic only; the
 * same source builds into tcp_multfrc.ko and into a user-space test
 * (tools/testing/multfrc), which provides the few kernel helpers it uses.
 */
#ifndef _TCP_MULTFRC_EQ_H
#define _TCP_MULTFRC_EQ_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/types.h>
#endif

#define MULTFRC_N_MIN		100	/* n = 0.1, in thousandths */
#define MULTFRC_N_MAX		100000	/* n = 100 */
#define MULTFRC_P_ONE		BIT_ULL(32)	/* p = 1 in the unit of p */

struct multfrc_eq_in {
	u32 n_milli;	/* n x 1000, MULTFRC_N_MIN..MULTFRC_N_MAX */
	u32 p;		/* loss event rate x 2^32, 1..2^32 - 1 */
	u32 j_milli;	/* packets lost per loss event x 1000, >= 1000 */
	u32 rtt_us;	/* round-trip time, > 0 */
	u32 rto_us;	/* retransmission timeout, > 0 */
	u32 mss;	/* segment size in bytes, > 0 */
	u32 b;		/* packets acknowledged by one ACK, >= 1 */
};

u64 multfrc_eq_rate(const struct multfrc_eq_in *in);
u64 multfrc_eq_tcp_rate(const struct multfrc_eq_in *in);
u64 multfrc_eq_flows_rate(const struct multfrc_eq_in *in);
u64 multfrc_eq_send_rate(const struct multfrc_eq_in *in);
u32 multfrc_eq_loss_rate(const struct multfrc_eq_in *in, u64 rate);
u32 multfrc_eq_loss_interval(const struct multfrc_eq_in *in, u64 rate);
u32 multfrc_eq_cwnd(u64 rate, u32 rtt_us, u32 mss, u32 lo, u32 hi);

#endif /* _TCP_MULTFRC_EQ_H */
