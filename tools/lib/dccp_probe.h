/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether the running kernel has DCCP, asked without a kernel version: a
 * DCCP socket opens where its module is loaded (dccp_ipv4 has no module
 * alias, so socket() does not load it); where it does not open, the
 * kernel has DCCP if the module file is there (modprobe dccp_ipv4), and
 * none otherwise: Linux removed DCCP in 6.16.
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

/* Whether this kernel's modules.dep lists dccp_ipv4 (moddep.h). */
bool dccp_module_file(void);

#endif /* TOOLS_DCCP_PROBE_H */
