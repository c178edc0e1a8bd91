/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A connection's addresses in a tracepoint, the way the kernel's tcp:*
 * events record them: the family, both ports, the IPv4 addresses and the
 * IPv6 ones (an IPv4 connection's as v4-mapped addresses), so that one
 * bpftrace script or trace filter serves both families.  Use
 * RT_SOCK_FIELDS in TP_STRUCT__entry, RT_STORE_SOCK(sk) in TP_fast_assign
 * and RT_SOCK_FMT, RT_SOCK_ARGS in TP_printk.
 */
#ifndef _RESEARCH_SOCK_TRACE_H
#define _RESEARCH_SOCK_TRACE_H

#include <linux/ipv6.h>
#include <linux/string.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>

#define RT_SOCK_FIELDS \
	__field(const void *, skaddr) \
	__field(u16, family) \
	__field(u16, sport) \
	__field(u16, dport) \
	__array(u8, saddr, 4) \
	__array(u8, daddr, 4) \
	__array(u8, saddr_v6, 16) \
	__array(u8, daddr_v6, 16)

#define RT_SOCK_FMT \
	"family=%s sport=%u dport=%u saddr=%pI4 daddr=%pI4 saddrv6=%pI6c daddrv6=%pI6c"

/* Bare __entry: the kernel checks that %pI4/%pI6c read REC->field. */
#define RT_SOCK_ARGS \
	__print_symbolic(__entry->family, { AF_INET, "AF_INET" }, \
			 { AF_INET6, "AF_INET6" }), \
	__entry->sport, __entry->dport, __entry->saddr, __entry->daddr, \
	__entry->saddr_v6, __entry->daddr_v6

static inline void rt_store_sock(const struct sock *sk, const void **skaddr,
				 u16 *family, u16 *sport, u16 *dport,
				 u8 *saddr, u8 *daddr, u8 *saddr_v6,
				 u8 *daddr_v6)
{
	const struct inet_sock *inet = inet_sk(sk);
	struct in6_addr s6, d6;

	*skaddr = sk;
	*family = sk->sk_family;
	*sport = ntohs(inet->inet_sport);
	*dport = ntohs(inet->inet_dport);
	memcpy(saddr, &inet->inet_saddr, 4);
	memcpy(daddr, &inet->inet_daddr, 4);
	ipv6_addr_set_v4mapped(inet->inet_saddr, &s6);
	ipv6_addr_set_v4mapped(inet->inet_daddr, &d6);
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		s6 = sk->sk_v6_rcv_saddr;
		d6 = sk->sk_v6_daddr;
	}
#endif
	memcpy(saddr_v6, &s6, 16);
	memcpy(daddr_v6, &d6, 16);
}

/* Inside TP_fast_assign, where __entry is the event's record. */
#define RT_STORE_SOCK(sk) \
	rt_store_sock(sk, &__entry->skaddr, &__entry->family, \
		      &__entry->sport, &__entry->dport, __entry->saddr, \
		      __entry->daddr, __entry->saddr_v6, __entry->daddr_v6)

#endif /* _RESEARCH_SOCK_TRACE_H */
