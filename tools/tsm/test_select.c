// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven test of the decision (select.c) and the policy parser
 * (policy.c), with made-up kernel offers: every row of the mapping tables
 * in Documentation/tsm.rst, every fallback, policy overrides and limits,
 * bad requirement combinations and bad policy files.  Prints TAP.
 *
 * A case is three strings: the requirements ("rel=partial life=200"), the
 * kernel's offer (tsm_offer_parse's syntax) and a policy file's text; and
 * what must come out, '|'-separated: "key=value" that must equal the
 * choice's field (as tsm select --kv prints it), "why~text" that the
 * explanation must contain, or "error=EINVAL|msg~text" for a refusal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsm.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Every module and protocol there, for an unprivileged user. */
#define ALL	"cc=cubic,reno,bbr,reno_tw,multfrc,multfrc_0.5,multfrc_2 " \
		"default=cubic multfrc_n=1 tltcp dccp=2,3 sctp"
/* Debian's stock kernel: no project module, DCCP and SCTP not loaded. */
#define STOCK	"cc=cubic,reno,bbr:restricted default=cubic"
/*
 * Machines without the project's modules, as tsm probe sees them: Debian
 * 12's 6.1 for a user (DCCP loads on the probe's socket; bbr, tcp_lp and
 * tcp_vegas are modules that TCP_CONGESTION loads only for
 * CAP_NET_ADMIN), the same kernel for root, a kernel without DCCP
 * (6.16 and later) for a user and for root, and the machine of issue 18
 * (default bbr, cubic not allowed).
 */
#define DEB_CC	"cc=reno,cubic,bbr:loadable,lp:loadable,vegas:loadable"
#define DEB	DEB_CC " default=cubic"
#define DEB_USER	DEB " dccp=2,3"
#define DEB_ROOT	"priv " DEB " dccp=2,3"
#define NODCCP_USER	DEB
#define NODCCP_ROOT	"priv " DEB
#define BBR_HOST	"priv cc=reno,bbr,cubic:restricted default=bbr"
/* ... and with the project's modules installed, not loaded. */
#define NODCCP_MODS	"priv " DEB_CC ",multfrc:loadable,reno_tw:loadable " \
			"default=cubic tltcp=loadable"

struct tcase {
	const char *name;
	const char *req;
	const char *offer;
	const char *policy;
	const char *expect;
};

static const struct tcase cases[] = {
	/* Table 1 and 2: transport rows and the feature filter. */
	{ "T1 full: TCP", "", ALL, NULL,
	  "transport=TCP|row=1|cc=cubic|why~TCP: full reliability; cc cubic (kernel default)" },
	{ "T1 full, msg boundaries required: SCTP", "bound=require", ALL, NULL,
	  "transport=SCTP|row=1|pr=off|unordered=0" },
	{ "T1 full, perMsgReliability required: SCTP", "permsg=require", ALL,
	  NULL, "transport=SCTP|pr=off" },
	{ "T1 full, order prohibited: SCTP unordered", "order=prohibit", ALL,
	  NULL, "transport=SCTP|unordered=1|why~unordered" },
	{ "T1 full, order avoided: TCP (avoid is tuning only)",
	  "order=avoid", ALL, NULL, "transport=TCP" },
	{ "T1 full, boundaries prohibited: TCP", "bound=prohibit", ALL, NULL,
	  "transport=TCP" },
	{ "T1 fallback: boundaries, no SCTP: TLTCP without deadline",
	  "bound=require", "cc=cubic,reno tltcp", NULL,
	  "transport=TLTCP|deadline_ns=0|cc=cubic|why~messages as sections"
	  "|why~fallback from SCTP" },
	{ "T1 fallback: boundaries, neither SCTP nor TLTCP",
	  "bound=require", STOCK, NULL,
	  "error=EPROTONOSUPPORT|msg~SCTP not available|msg~TLTCP module absent" },
	{ "T1 full, order prohibited and boundaries prohibited: nothing",
	  "order=prohibit bound=prohibit", ALL, NULL,
	  "error=EINVAL|msg~no transport can meet" },
	{ "T2 partial: TLTCP with the lifetime as default deadline",
	  "rel=partial life=200", ALL, NULL,
	  "transport=TLTCP|row=2|deadline_ns=200000000|cc=cubic"
	  "|why~TLTCP: partial reliability with 200 ms lifetime; module loaded" },
	{ "T2 fallback: TLTCP absent: SCTP PR-SCTP TTL",
	  "rel=partial life=200", "cc=cubic,reno sctp", NULL,
	  "transport=SCTP|pr=ttl|pr_value=200|unordered=0"
	  "|why~fallback from TLTCP (module absent)" },
	{ "T2 fallback: TLTCP loadable, unprivileged: SCTP",
	  "rel=partial life=200", "cc=cubic,reno tltcp=loadable sctp", NULL,
	  "transport=SCTP|why~modprobe tltcp" },
	{ "T2 TLTCP loadable, privileged: TLTCP loaded on use",
	  "rel=partial life=200", "priv cc=cubic,reno tltcp=loadable sctp",
	  NULL, "transport=TLTCP|why~module loaded on use" },
	{ "T2 partial, order prohibited: SCTP unordered",
	  "rel=partial life=50 order=prohibit", ALL, NULL,
	  "transport=SCTP|pr=ttl|pr_value=50|unordered=1" },
	{ "T2 partial, boundaries prohibited: nothing",
	  "rel=partial life=50 bound=prohibit", ALL, NULL,
	  "error=EINVAL|msg~TCP preserves message boundaries" },
	{ "T2 fallback: no TLTCP, SCTP without PR-SCTP",
	  "rel=partial life=200", "cc=reno sctp=nopr", NULL,
	  "error=EPROTONOSUPPORT|msg~PR-SCTP disabled" },
	{ "T2 partial, Scavenger: TLTCP over multfrc_0.5",
	  "rel=partial life=200 prof=scavenger", ALL, NULL,
	  "transport=TLTCP|cc=multfrc_0.5|weight=0.5" },
	{ "T3 none: DCCP CCID 2", "rel=none", ALL, NULL,
	  "transport=DCCP|row=3|ccid=2|why~DCCP: no reliability, CCID 2" },
	{ "T3 none, Constant-Rate Streaming: DCCP CCID 3",
	  "rel=none prof=constant-rate", ALL, NULL,
	  "transport=DCCP|ccid=3|why~TFRC" },
	{ "T3 none, Low Latency/Interactive: DCCP CCID 3",
	  "rel=none prof=interactive", ALL, NULL, "transport=DCCP|ccid=3" },
	{ "T3 none, Capacity-Seeking: DCCP CCID 2",
	  "rel=none prof=capacity-seeking", ALL, NULL,
	  "transport=DCCP|ccid=2" },
	{ "T3 fallback: CCID 3 absent: CCID 2",
	  "rel=none prof=constant-rate", "cc=reno dccp=2", NULL,
	  "transport=DCCP|ccid=2|why~fallback from CCID 3" },
	{ "T3 fallback: CCID 2 absent: CCID 3", "rel=none", "cc=reno dccp=3",
	  NULL, "transport=DCCP|ccid=3" },
	{ "T3 none, order required: SCTP without retransmission",
	  "rel=none order=require", ALL, NULL,
	  "transport=SCTP|pr=rtx|pr_value=0|unordered=0|why~no retransmission" },
	{ "T3 none, perMsgReliability required: SCTP",
	  "rel=none permsg=require", ALL, NULL, "transport=SCTP|pr=rtx" },
	{ "T3 fallback: DCCP absent: SCTP", "rel=none", "cc=reno sctp", NULL,
	  "transport=SCTP|pr=rtx|why~fallback from DCCP (not in this kernel)" },
	{ "T3 fallback: DCCP loadable, not loaded: says modprobe",
	  "rel=none", "cc=reno dccp=loadable sctp", NULL,
	  "transport=SCTP|why~fallback from DCCP (module not loaded: modprobe dccp_ipv4)" },
	{ "T3 none, order required, no SCTP: TCP, never UDP",
	  "rel=none order=require", "cc=reno dccp=2,3", NULL,
	  "transport=TCP|row=3|cc=reno|why~TCP: no reliability asked, full given" },
	{ "T3 none, no DCCP, no SCTP: TCP with the kernel default",
	  "rel=none", STOCK, NULL,
	  "transport=TCP|row=3|cc=cubic|why~fallback from DCCP (not in this kernel)" },
	{ "T3 none, boundaries required, nothing offered: refused, never UDP",
	  "rel=none bound=require", STOCK, NULL,
	  "error=EPROTONOSUPPORT|msg~DCCP not in this kernel|msg~SCTP not available|msg~TCP does not preserve message boundaries" },
	{ "T3 none, Constant-Rate, no DCCP: TFRC's equation over TCP",
	  "rel=none prof=constant-rate", NODCCP_MODS, NULL,
	  "transport=TCP|row=3|cc=multfrc|weight=1|why~TFRC's equation for CCID 3's smooth rate|why~loaded on use|why~fallback from DCCP (not in this kernel)" },
	{ "T3 none, Interactive, no DCCP: TFRC's equation, no Nagle",
	  "rel=none prof=interactive", NODCCP_MODS, NULL,
	  "transport=TCP|cc=multfrc|weight=1|nodelay=1" },
	{ "T3 none, policy ccid 3, no DCCP: TFRC's equation",
	  "rel=none", NODCCP_MODS, "profile default ccid 3",
	  "transport=TCP|cc=multfrc|weight=1" },
	{ "T3 none, Default, no DCCP: CCID 2's stand-in, kernel default",
	  "rel=none", NODCCP_MODS, NULL, "transport=TCP|cc=cubic" },
	{ "T3 none, Constant-Rate, no DCCP, no MulTFRC: reno, said so",
	  "rel=none prof=constant-rate", NODCCP_USER, NULL,
	  "transport=TCP|cc=reno|weight=0|why~fallback from multfrc (absent)" },
	{ "T3 none, Scavenger, no DCCP: weight honoured over TCP",
	  "rel=none prof=scavenger", "priv " DEB_CC ",multfrc_0.5 default=cubic", NULL,
	  "transport=TCP|cc=multfrc_0.5|weight=0.5" },
	{ "T3 none, weight: not honoured, said so", "rel=none weight=2", ALL,
	  NULL, "transport=DCCP|why~weight not honoured" },
	{ "T3 none, max rate: not enforced, said so", "rel=none max=1000000",
	  ALL, NULL, "transport=DCCP|max_pacing_rate=0|why~max rate not enforced" },

	/* Table 3: congestion control of TCP and TLTCP. */
	{ "C1 weight 2: multfrc_2", "weight=2", ALL, NULL,
	  "transport=TCP|cc=multfrc_2|weight=2|why~weight 2" },
	{ "C1 fallback: no multfrc_2 instance, module n = 2: multfrc",
	  "weight=2", "cc=cubic,reno,multfrc multfrc_n=2", NULL,
	  "cc=multfrc|weight=2|why~cc multfrc (weight 2)" },
	{ "C1 fallback: module's n is not the weight: instance, else reno",
	  "weight=0.5", "cc=cubic,reno,multfrc multfrc_n=2", NULL,
	  "cc=reno|why~fallback from multfrc_0.5 (absent)" },
	{ "C1 fallback: no instance for weight 3: cubic, with a warning",
	  "weight=3", ALL, NULL,
	  "cc=cubic|weight=0|why~warning: weight 3 not honoured: one flow's share" },
	{ "C1 weight 3, default bbr: cubic, never bbr", "weight=3", BBR_HOST,
	  NULL, "cc=cubic|why~warning: weight 3 not honoured" },
	{ "C1 weight 3, cubic not allowed: reno, with a warning", "weight=3",
	  "cc=reno,bbr,cubic:restricted default=bbr", NULL,
	  "cc=reno|why~warning: weight 3 not honoured" },
	{ "C1 weight 0.3, lp loaded: lp, not honoured", "weight=0.3",
	  "cc=cubic,reno,lp,vegas", NULL,
	  "cc=lp|weight=0|why~weight 0.3 not honoured: a low-priority algorithm" },
	{ "C1 explicit weight wins over the policy's profile cc",
	  "weight=2 prof=interactive", ALL, "profile interactive cc reno",
	  "cc=multfrc_2" },
	{ "C2 policy profile cc", "prof=interactive", ALL,
	  "# site policy\nprofile interactive cc reno_tw\n",
	  "cc=reno_tw|nodelay=1|why~policy for Low Latency/Interactive, t.conf:2" },
	{ "C2 policy profile cc absent: fallback to default",
	  "prof=default", "cc=cubic,reno", "profile default cc vegas",
	  "cc=cubic|why~fallback from vegas (absent)" },
	{ "C3 Scavenger: multfrc_0.5", "prof=scavenger", ALL, NULL,
	  "transport=TCP|cc=multfrc_0.5|weight=0.5|why~Scavenger, weight 0.5" },
	{ "C3 Scavenger, weight 0.5 given: same", "prof=scavenger weight=0.5",
	  ALL, NULL, "cc=multfrc_0.5" },
	{ "C3 Scavenger, policy weight 0.25", "prof=scavenger",
	  "cc=cubic,reno,multfrc_0.25", "profile scavenger weight 0.25",
	  "cc=multfrc_0.25|weight=0.25" },
	{ "C3 Scavenger, MulTFRC absent: reno, not the default",
	  "prof=scavenger", STOCK, NULL,
	  "cc=reno|why~fallback from multfrc_0.5 (absent)|why~not honoured" },
	{ "C3 Scavenger on issue 18's machine: reno, never bbr",
	  "prof=scavenger", BBR_HOST, NULL,
	  "cc=reno|why~fallback from lp (absent)|why~fallback from vegas (absent)" },
	{ "C3 Scavenger, Debian user: lp needs CAP_NET_ADMIN: reno",
	  "prof=scavenger", DEB_USER, NULL,
	  "cc=reno|why~fallback from lp (module not loaded)" },
	{ "C3 Scavenger, Debian root: tcp_lp loaded on use",
	  "prof=scavenger", DEB_ROOT, NULL,
	  "cc=lp|why~cc lp (fallback for Scavenger, weight 0.5), loaded on use" },
	{ "C3 Scavenger, only vegas: vegas", "prof=scavenger",
	  "cc=cubic,reno,vegas", NULL, "cc=vegas" },
	{ "C3 Scavenger, policy weight 0.25 absent: lp", "prof=scavenger",
	  "cc=cubic,reno,lp", "profile scavenger weight 0.25",
	  "cc=lp|why~weight 0.25 not honoured" },
	{ "C4 long delay: reno_tw", "delay=600", ALL, NULL,
	  "cc=reno_tw|why~path delay 600 ms >= 400 ms" },
	{ "C4 short delay: default", "delay=300", ALL, NULL, "cc=cubic" },
	{ "C4 policy long_delay_ms 200", "delay=300", ALL, "long_delay_ms 200",
	  "cc=reno_tw" },
	{ "C4 fallback: reno_tw absent", "delay=600", "cc=cubic,reno", NULL,
	  "cc=cubic|why~fallback from reno_tw" },
	{ "C4 reno_tw loadable, unprivileged: default", "delay=600",
	  "cc=cubic,reno,reno_tw:loadable", NULL,
	  "cc=cubic|why~reno_tw (module not loaded)" },
	{ "C4 reno_tw loadable, privileged: loaded on use", "delay=600",
	  "priv cc=cubic,reno,reno_tw:loadable", NULL,
	  "cc=reno_tw|why~loaded on use" },
	{ "C5 Default: kernel default", "prof=default",
	  "cc=cubic,reno,bbr default=bbr", NULL, "cc=bbr|why~kernel default" },
	{ "C5 Low Latency/Interactive: bbr, no Nagle", "prof=interactive", ALL,
	  NULL, "cc=bbr|nodelay=1" },
	{ "C5 Low Latency/Non-Interactive: bbr", "prof=non-interactive", ALL,
	  NULL, "cc=bbr|nodelay=0" },
	{ "C5 Constant-Rate Streaming: multfrc (n = 1)", "prof=constant-rate",
	  ALL, NULL, "cc=multfrc|weight=1|why~smooth rate" },
	{ "C5 Constant-Rate Streaming, module's n is 2: reno, not multfrc",
	  "prof=constant-rate", "cc=cubic,reno,multfrc multfrc_n=2", NULL,
	  "cc=reno|why~fallback for Constant-Rate Streaming" },
	{ "C5 Constant-Rate Streaming, default bbr: reno", "prof=constant-rate",
	  BBR_HOST, NULL, "cc=reno" },
	{ "C5 Capacity-Seeking, cubic absent: reno, not the default bbr",
	  "prof=capacity-seeking", "cc=reno,bbr default=bbr", NULL,
	  "cc=reno|why~fallback from cubic (absent)" },
	{ "C5 Interactive, Debian user: bbr not loaded: cubic",
	  "prof=interactive", DEB_USER, NULL,
	  "cc=cubic|nodelay=1|why~fallback from bbr (module not loaded)" },
	{ "C5 Interactive, Debian root: bbr loaded on use",
	  "prof=interactive", DEB_ROOT, NULL, "cc=bbr|why~loaded on use" },
	{ "C4 long delay, reno_tw absent, default bbr: cubic, never bbr",
	  "delay=600", BBR_HOST, NULL, "cc=cubic" },
	{ "C2 policy cc absent for Scavenger: the Scavenger chain",
	  "prof=scavenger", "cc=cubic,reno,vegas", "profile scavenger cc nv",
	  "cc=vegas|why~fallback from nv (absent)|why~fallback from multfrc_0.5" },
	{ "C5 Constant-Rate Streaming, MulTFRC loadable, privileged",
	  "prof=constant-rate", "priv cc=cubic,reno,multfrc:loadable", NULL,
	  "cc=multfrc|weight=1|why~loaded on use" },
	{ "C5 Capacity-Seeking: cubic", "prof=capacity-seeking",
	  "cc=reno,bbr,cubic default=bbr", NULL, "cc=cubic" },
	{ "C5 fallback: bbr restricted, unprivileged", "prof=interactive",
	  STOCK, NULL,
	  "cc=cubic|why~bbr (not in tcp_allowed_congestion_control)" },
	{ "C5 bbr restricted, privileged: bbr", "prof=interactive",
	  "priv " STOCK, NULL, "cc=bbr" },
	{ "C max rate: paced", "max=8M", ALL, NULL,
	  "max_pacing_rate=1000000|why~paced at most 8000000" },
	{ "C min rate: a hint, said so", "min=1M", ALL, NULL,
	  "transport=TCP|why~min rate not guaranteed" },

	/* Table 4: DCCP's CCID, policy override. */
	{ "D policy profile ccid 3", "rel=none", ALL, "profile default ccid 3",
	  "ccid=3" },

	/* Policy: allowed transports and algorithms, limits. */
	{ "P transports without TLTCP: partial goes to SCTP",
	  "rel=partial life=100", ALL, "transports TCP SCTP DCCP",
	  "transport=SCTP|why~fallback from TLTCP (not allowed by policy)" },
	{ "P transports TCP only: partial refused with file:line",
	  "rel=partial life=100", ALL, "\ntransports TCP",
	  "error=EPERM|msg~TLTCP not allowed by policy (t.conf:2)" },
	{ "P congestion list without bbr: interactive gets cubic",
	  "prof=interactive", ALL, "congestion cubic reno",
	  "cc=cubic|why~bbr (not allowed by policy)" },
	{ "P 'multfrc' allows every instance", "weight=2", ALL,
	  "congestion multfrc reno", "cc=multfrc_2" },
	{ "P no allowed algorithm: TCP skipped, SCTP", "", ALL,
	  "congestion vegas", "transport=SCTP" },
	{ "P no allowed algorithm, no SCTP: refused", "", "cc=cubic,reno",
	  "congestion vegas",
	  "error=EPROTONOSUPPORT|msg~no allowed congestion control" },
	{ "P max_weight: unprivileged weight 4 refused", "weight=4", ALL,
	  "max_weight 2",
	  "error=EPERM|msg~weight 4 above 2|msg~t.conf:1" },
	{ "P max_weight: privileged weight 4 allowed", "weight=4",
	  "priv cc=cubic,reno,multfrc_4", "max_weight 2", "cc=multfrc_4" },
	{ "P max_weight: weight below the limit", "weight=2", ALL,
	  "max_weight 2", "cc=multfrc_2" },

	/* Bad requirement combinations. */
	{ "E weight 0", "weight=0", ALL, NULL,
	  "error=EINVAL|msg~weight must be positive" },
	{ "E weight negative", "weight=-1", ALL, NULL,
	  "error=EINVAL|msg~weight must be positive" },
	{ "E weight below MulTFRC's range", "weight=0.05", ALL, NULL,
	  "error=ERANGE|msg~outside 0.1..100" },
	{ "E weight above MulTFRC's range", "weight=101", ALL, NULL,
	  "error=ERANGE" },
	{ "E negative lifetime", "rel=partial life=-5", ALL, NULL,
	  "error=EINVAL|msg~msgLifetime is negative" },
	{ "E lifetime over one hour", "rel=partial life=3600001", ALL, NULL,
	  "error=ERANGE|msg~over one hour" },
	{ "E partial without lifetime", "rel=partial", ALL, NULL,
	  "error=EINVAL|msg~partial needs a msgLifetime" },
	{ "E lifetime with full reliability", "life=100", ALL, NULL,
	  "error=EINVAL|msg~reliability is full" },
	{ "E lifetime without reliability", "rel=none life=100", ALL, NULL,
	  "error=EINVAL|msg~reliability is none" },
	{ "E min rate above max rate", "min=2000 max=1000", ALL, NULL,
	  "error=EINVAL|msg~min rate 2000 bit/s above max rate 1000" },
	{ "E negative path delay", "delay=-1", ALL, NULL,
	  "error=EINVAL|msg~path delay is negative" },
	{ "E Scavenger with weight above 1", "prof=scavenger weight=2", ALL,
	  NULL, "error=EINVAL|msg~Scavenger with weight 2" },

	/* Bad policy files: the message names file and line. */
	{ "F unknown setting", "", ALL, "# ok\nfrobnicate 1",
	  "error=EINVAL|msg~t.conf:2: unknown setting 'frobnicate'" },
	{ "F UDP in transports", "", ALL, "\n\ntransports TCP UDP",
	  "error=EINVAL|msg~t.conf:3: UDP has no congestion control" },
	{ "F unknown transport", "", ALL, "transports TCP QUIC",
	  "error=EINVAL|msg~t.conf:1: unknown transport 'QUIC'" },
	{ "F setting twice", "", ALL, "transports TCP\ntransports SCTP",
	  "error=EINVAL|msg~t.conf:2: 'transports' given twice (first at line 1)" },
	{ "F not a number", "", ALL, "max_weight abc",
	  "error=EINVAL|msg~t.conf:1: 'abc' is not a number" },
	{ "F number out of range", "", ALL, "\tmax_weight 1000  # too much",
	  "error=ERANGE|msg~t.conf:1: 1000 outside 0.1..100" },
	{ "F long_delay_ms not whole", "", ALL, "long_delay_ms 1.5",
	  "error=EINVAL|msg~t.conf:1: '1.5' is not a whole number" },
	{ "F unknown profile", "", ALL, "profile bulk cc reno",
	  "error=EINVAL|msg~t.conf:1: unknown profile 'bulk'" },
	{ "F profile setting unknown", "", ALL, "profile default rate 1",
	  "error=EINVAL|msg~unknown profile setting 'rate'" },
	{ "F profile line too short", "", ALL, "profile default cc",
	  "error=EINVAL|msg~usage: profile" },
	{ "F bad CCID", "", ALL, "profile default ccid 4",
	  "error=EINVAL|msg~t.conf:1: CCID is 2 or 3" },
	{ "F Scavenger weight 1", "", ALL, "profile scavenger weight 1",
	  "error=EINVAL|msg~must be below 1" },
	{ "F congestion without names", "", ALL, "congestion",
	  "error=EINVAL|msg~needs at least one algorithm" },
	{ "F congestion name too long", "", ALL,
	  "congestion cubic this_is_far_too_long",
	  "error=EINVAL|msg~longer than 15" },
	{ "F congestion name with a bad character", "", ALL,
	  "congestion cu/bic", "error=EINVAL|msg~bad character '/'" },
	{ "F max_weight twice", "", ALL, "max_weight 2\n\nmax_weight 3",
	  "error=EINVAL|msg~t.conf:3: 'max_weight' given twice (first at line 1)" },
	{ "F max_weight without a value", "", ALL, "max_weight",
	  "error=EINVAL|msg~takes one value" },
	{ "F a good policy with comments parses", "", ALL,
	  "# comment\n\ntransports TCP TLTCP  # tcp-based only\n"
	  "congestion cubic reno multfrc\nmax_weight 2\nlong_delay_ms 500\n"
	  "profile scavenger weight 0.25\nprofile constant-rate ccid 3\n"
	  "profile Capacity-Seeking cc cubic\n",
	  "transport=TCP|cc=cubic" },
};

/*
 * Every profile's whole chain (Documentation/tsm.rst, Table 3's
 * fallbacks): with every algorithm there, the choice, then the choice
 * with that one gone, and so on until TCP has none left.  A chain never
 * holds an algorithm more aggressive than what was asked, and bbr only
 * where the row asks for it.
 */
#define EVERY_CC	"cc=reno,cubic,bbr,reno_tw,lp,vegas,multfrc,multfrc_0.3," \
			"multfrc_0.5,multfrc_2"
/* every algorithm, no DCCP, no SCTP: reliability none gets TCP */
#define EVERY	"priv " EVERY_CC " default=cubic multfrc_n=1 tltcp"

struct chain_case {
	const char *name;
	const char *req;
	const char *offer;
	const char *policy;
	const char *chain;	/* the algorithms, best first */
};

static const struct chain_case chain_cases[] = {
	{ "chain Default", "", EVERY, NULL, "cubic reno" },
	{ "chain Default, kernel default bbr (the administrator's)", "",
	  "priv " EVERY_CC " default=bbr", NULL, "bbr reno" },
	{ "chain Scavenger", "prof=scavenger", EVERY, NULL,
	  "multfrc_0.5 lp vegas reno" },
	{ "chain Scavenger, kernel default bbr", "prof=scavenger",
	  "priv " EVERY_CC " default=bbr", NULL, "multfrc_0.5 lp vegas reno" },
	{ "chain Low Latency/Interactive", "prof=interactive", EVERY, NULL,
	  "bbr cubic reno" },
	{ "chain Low Latency/Non-Interactive", "prof=non-interactive", EVERY,
	  NULL, "bbr cubic reno" },
	{ "chain Constant-Rate Streaming", "prof=constant-rate", EVERY, NULL,
	  "multfrc reno" },
	{ "chain Capacity-Seeking", "prof=capacity-seeking", EVERY, NULL,
	  "cubic reno" },
	{ "chain Capacity-Seeking, kernel default bbr", "prof=capacity-seeking",
	  "priv " EVERY_CC " default=bbr", NULL, "cubic reno" },
	{ "chain weight 2", "weight=2", EVERY, NULL, "multfrc_2 cubic reno" },
	{ "chain weight 2, kernel default bbr", "weight=2",
	  "priv " EVERY_CC " default=bbr", NULL, "multfrc_2 cubic reno" },
	{ "chain weight 0.3", "weight=0.3", EVERY, NULL,
	  "multfrc_0.3 lp vegas reno" },
	{ "chain long delay", "delay=600", EVERY, NULL, "reno_tw cubic reno" },
	{ "chain policy cc for Interactive, then the row", "prof=interactive",
	  EVERY, "profile interactive cc vegas", "vegas bbr cubic reno" },
	{ "chain policy cc for Scavenger, then the row", "prof=scavenger",
	  EVERY, "profile scavenger cc vegas", "vegas multfrc_0.5 lp reno" },
	{ "chain policy weight for Default", "", EVERY,
	  "profile default weight 2", "multfrc_2 cubic reno" },
	{ "chain policy congestion list", "prof=scavenger", EVERY,
	  "congestion multfrc reno cubic", "multfrc_0.5 reno" },
	{ "chain none, no DCCP: Default over TCP", "rel=none", EVERY, NULL,
	  "cubic reno" },
	{ "chain none, no DCCP: Constant-Rate, TFRC's equation", "rel=none "
	  "prof=constant-rate", EVERY, NULL, "multfrc reno" },
	{ "chain none, no DCCP: Interactive, TFRC's equation, never bbr",
	  "rel=none prof=interactive", EVERY, NULL, "multfrc reno" },
	{ "chain none, no DCCP: Scavenger", "rel=none prof=scavenger", EVERY,
	  NULL, "multfrc_0.5 lp vegas reno" },
	{ "chain partial (TLTCP): Scavenger", "rel=partial life=200 "
	  "prof=scavenger", EVERY, NULL, "multfrc_0.5 lp vegas reno" },
	{ "chain partial (TLTCP): weight 2", "rel=partial life=200 weight=2",
	  EVERY, NULL, "multfrc_2 cubic reno" },
};

/* "rel=partial life=200 ..." into a request; 0 or -1 (bad test). */
static int parse_req(const char *s, struct tsm_req *req)
{
	char *copy = strdup(s), *save = NULL, *w, *v;
	int ret = 0;

	tsm_req_init(req);
	for (w = strtok_r(copy, " ", &save); w && !ret;
	     w = strtok_r(NULL, " ", &save)) {
		v = strchr(w, '=');
		if (!v) {
			ret = -1;
			break;
		}
		*v++ = '\0';
		if (!strcmp(w, "rel"))
			ret = tsm_parse_reliability(v, &req->reliability);
		else if (!strcmp(w, "bound"))
			ret = tsm_parse_pref(v, &req->preserve_msg_boundaries);
		else if (!strcmp(w, "order"))
			ret = tsm_parse_pref(v, &req->preserve_order);
		else if (!strcmp(w, "permsg"))
			ret = tsm_parse_pref(v, &req->per_msg_reliability);
		else if (!strcmp(w, "prof"))
			ret = tsm_parse_profile(v, &req->profile);
		else if (!strcmp(w, "life"))
			req->msg_lifetime_ms = atoll(v);
		else if (!strcmp(w, "weight"))
			req->weight = atof(v);
		else if (!strcmp(w, "delay"))
			req->path_delay_ms = atoll(v);
		else if (!strcmp(w, "min"))
			req->min_rate = strtoull(v, NULL, 10);
		else if (!strcmp(w, "max"))
			req->max_rate = strtoull(v, NULL, 10) *
					(strchr(v, 'M') ? 1000000 : 1);
		else
			ret = -1;
	}
	free(copy);
	return ret;
}

static const char *pr_name(enum tsm_pr p)
{
	return p == TSM_PR_TTL ? "ttl" : p == TSM_PR_RTX ? "rtx" : "off";
}

/* The value of a key of the choice, as tsm select --kv prints it. */
static void field(const struct tsm_choice *ch, const char *key, char *buf,
		  size_t len)
{
	if (!strcmp(key, "transport"))
		snprintf(buf, len, "%s", tsm_transport_name(ch->transport));
	else if (!strcmp(key, "row"))
		snprintf(buf, len, "%d", ch->row);
	else if (!strcmp(key, "cc"))
		snprintf(buf, len, "%s", ch->cc);
	else if (!strcmp(key, "weight"))
		snprintf(buf, len, "%g", ch->weight);
	else if (!strcmp(key, "ccid"))
		snprintf(buf, len, "%d", ch->ccid);
	else if (!strcmp(key, "deadline_ns"))
		snprintf(buf, len, "%llu", (unsigned long long)ch->deadline_ns);
	else if (!strcmp(key, "pr"))
		snprintf(buf, len, "%s", pr_name(ch->pr_policy));
	else if (!strcmp(key, "pr_value"))
		snprintf(buf, len, "%u", ch->pr_value);
	else if (!strcmp(key, "unordered"))
		snprintf(buf, len, "%d", ch->unordered);
	else if (!strcmp(key, "nodelay"))
		snprintf(buf, len, "%d", ch->nodelay);
	else if (!strcmp(key, "max_pacing_rate"))
		snprintf(buf, len, "%llu",
			 (unsigned long long)ch->max_pacing_rate);
	else
		snprintf(buf, len, "<unknown key %s>", key);
}

static bool run_case(const struct tcase *c, char *diag, size_t dlen)
{
	char *copy, *save = NULL, *w, got[TSM_MSG_LEN];
	struct tsm_error err = { 0 };
	struct tsm_policy pol;
	struct tsm_offer off;
	struct tsm_choice ch;
	struct tsm_req req;
	bool ok = true;
	int ret;

	diag[0] = '\0';
	if (parse_req(c->req, &req)) {
		snprintf(diag, dlen, "bad requirement string");
		return false;
	}
	if (tsm_offer_parse(c->offer, &off, &err)) {
		snprintf(diag, dlen, "bad offer: %s", err.msg);
		return false;
	}
	tsm_policy_init(&pol);
	ret = 0;
	if (c->policy)
		ret = tsm_policy_parse(c->policy, "t.conf", &pol, &err);
	if (!ret)
		ret = tsm_select(&req, &pol, &off, &ch, &err);
	copy = strdup(c->expect);
	for (w = strtok_r(copy, "|", &save); w;
	     w = strtok_r(NULL, "|", &save)) {
		char *v = strchr(w, '='), *t = strchr(w, '~');

		if (!strncmp(w, "error=", 6)) {
			const char *name = ret ? strerrorname_np(-ret) : "none";

			if (!name || strcmp(name, w + 6)) {
				snprintf(diag, dlen, "want %s, got %s (%s%s)",
					 w + 6, name ? name : "?",
					 ret ? err.msg : "", ret ? "" : ch.why);
				ok = false;
			}
		} else if (!strncmp(w, "msg~", 4)) {
			if (!ret || !strstr(err.msg, w + 4)) {
				snprintf(diag, dlen, "message lacks '%s': %s",
					 w + 4, ret ? err.msg : "(no error)");
				ok = false;
			}
		} else if (ret) {
			snprintf(diag, dlen, "unexpected error: %s", err.msg);
			ok = false;
		} else if (t && (!v || t < v)) {
			*t = '\0';
			if (!strstr(ch.why, t + 1)) {
				snprintf(diag, dlen, "why lacks '%s': %s",
					 t + 1, ch.why);
				ok = false;
			}
		} else if (v) {
			*v = '\0';
			field(&ch, w, got, sizeof(got));
			if (strcmp(got, v + 1)) {
				snprintf(diag, dlen, "%s=%s, want %s (%s)", w,
					 got, v + 1, ch.why);
				ok = false;
			}
		}
		if (!ok)
			break;
	}
	free(copy);
	return ok;
}

/* The offer without name, so that the next choice is what follows it. */
static void drop_cc(struct tsm_offer *off, const char *name)
{
	int i;

	for (i = 0; i < off->n_cc; i++) {
		if (!strcmp(off->cc[i].name, name)) {
			off->cc[i].state = TSM_ABSENT;
			off->cc[i].allowed = false;
		}
	}
}

static bool run_chain(const struct chain_case *c, char *diag, size_t dlen)
{
	struct tsm_error err = { 0 };
	char got[256] = "";
	struct tsm_policy pol;
	struct tsm_offer off;
	struct tsm_choice ch;
	struct tsm_req req;
	int i;

	if (parse_req(c->req, &req) || tsm_offer_parse(c->offer, &off, &err)) {
		snprintf(diag, dlen, "bad requirement or offer");
		return false;
	}
	tsm_policy_init(&pol);
	if (c->policy && tsm_policy_parse(c->policy, "t.conf", &pol, &err)) {
		snprintf(diag, dlen, "bad policy: %s", err.msg);
		return false;
	}
	for (i = 0; i < 16; i++) {
		if (tsm_select(&req, &pol, &off, &ch, &err) ||
		    (ch.transport != TSM_TCP && ch.transport != TSM_TLTCP))
			break;
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
			 i ? " " : "", ch.cc);
		drop_cc(&off, ch.cc);
	}
	if (!strcmp(got, c->chain))
		return true;
	snprintf(diag, dlen, "chain '%s', want '%s'", got, c->chain);
	return false;
}

int main(void)
{
	unsigned int i, j, failed = 0;
	char diag[1024];

	printf("TAP version 13\n1..%zu\n",
	       ARRAY_SIZE(cases) + ARRAY_SIZE(chain_cases));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		bool ok = run_case(&cases[i], diag, sizeof(diag));

		printf("%sok %u %s\n", ok ? "" : "not ", i + 1, cases[i].name);
		if (!ok) {
			printf("# %s\n", diag);
			failed++;
		}
	}
	for (j = 0; j < ARRAY_SIZE(chain_cases); j++) {
		bool ok = run_chain(&chain_cases[j], diag, sizeof(diag));

		printf("%sok %u %s\n", ok ? "" : "not ", ++i,
		       chain_cases[j].name);
		if (!ok) {
			printf("# %s\n", diag);
			failed++;
		}
	}
	return failed ? 1 : 0;
}
