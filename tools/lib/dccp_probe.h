/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether the running kernel has DCCP, asked the only way that holds on
 * every kernel: by opening a DCCP socket.  The kernel loads dccp_ipv4 or
 * dccp_ipv6 on that socket() itself (for any caller), so a failure means
 * that this process cannot have DCCP here: Linux removed it in 6.16, a
 * kernel may be built without it, or an administrator may block its
 * modules.  No kernel version is looked at.
 */
#ifndef TOOLS_DCCP_PROBE_H
#define TOOLS_DCCP_PROBE_H

#include <stdbool.h>

/* 0 if a DCCP socket of the family (AF_INET, AF_INET6) opens, else the
 * errno of socket().
 */
int dccp_probe(int family);

/* Whether socket()'s errno says the kernel has no DCCP (rather than,
 * say, a lack of memory or of descriptors).
 */
bool dccp_errno_absent(int err);

#endif /* TOOLS_DCCP_PROBE_H */
