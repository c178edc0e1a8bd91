/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel helpers net/ipv4/tcp_multfrc_eq.c uses, for building it
 * in user space.  Each is the obvious C; none is copied from the kernel.
 */
#ifndef _MULTFRC_KERNEL_SHIM_H
#define _MULTFRC_KERNEL_SHIM_H

#include <stdint.h>

typedef uint64_t u64;
typedef uint32_t u32;

#define U64_MAX		UINT64_MAX
#define U32_MAX		UINT32_MAX
#define BIT_ULL(n)	(1ULL << (n))
#define USEC_PER_SEC	1000000UL
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define max(a, b)	((a) > (b) ? (a) : (b))
#define swap(a, b) \
	do { __typeof__(a) __t = (a); (a) = (b); (b) = __t; } while (0)

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static inline u64 div64_u64(u64 a, u64 b)
{
	return a / b;
}

/* floor(sqrt(x)), by Newton's method on integers */
static inline u32 int_sqrt64(u64 x)
{
	u64 r, y;

	if (x < 2)
		return (u32)x;
	r = x;
	y = (x >> 1) + 1;
	while (y < r) {
		r = y;
		y = (r + x / r) >> 1;
	}
	return (u32)r;
}

#endif
