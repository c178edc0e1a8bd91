// SPDX-License-Identifier: GPL-2.0
/*
 * Time-lined TCP, what the machine sees: per network namespace counters
 * in /proc/net/tltcp_stat and the tracepoints (tltcp_trace.h).
 *
 * A socket's own counters (TL_INFO) are its owner's; an administrator
 * wants the namespace's sum without finding every socket.  The counters
 * are per-cpu (SNMP style, like /proc/net/tls_stat): incremented from any
 * context, summed over the CPUs when the file is read.  Each socket keeps
 * a pointer to its namespace's counters (a socket holds its namespace).
 */

#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "tltcp.h"

#define CREATE_TRACE_POINTS
#include "tltcp_trace.h"

/* As /proc/net/tltcp_stat names them, in the enum's order (tltcp.h). */
static const char *const tltcp_mib_names[TLTCP_MIB_MAX] = {
	[TLTCP_MIB_CURR_SOCKETS]	= "TltcpCurrSockets",
	[TLTCP_MIB_SOCKETS]		= "TltcpSockets",
	[TLTCP_MIB_SECTIONS_OFFERED]	= "TltcpSectionsOffered",
	[TLTCP_MIB_SECTIONS_COMPLETED]	= "TltcpSectionsCompleted",
	[TLTCP_MIB_SECTIONS_ABANDONED]	= "TltcpSectionsAbandoned",
	[TLTCP_MIB_BYTES_ABANDONED]	= "TltcpBytesAbandoned",
	[TLTCP_MIB_BYTES_OBSOLETE_LATE]	= "TltcpBytesObsoleteLate",
	[TLTCP_MIB_BYTES_OBSOLETE_RETRANS] = "TltcpBytesObsoleteRetrans",
	[TLTCP_MIB_SECTIONS_RECEIVED]	= "TltcpSectionsReceived",
	[TLTCP_MIB_GAPS_RECEIVED]	= "TltcpGapsReceived",
	[TLTCP_MIB_BYTES_GAP]		= "TltcpBytesGap",
	[TLTCP_MIB_FRAMING_ERRORS]	= "TltcpFramingErrors",
};

struct tltcp_net {
	struct tltcp_mib __percpu	*mib;
};

static unsigned int tltcp_net_id __read_mostly;

struct tltcp_mib __percpu *tltcp_net_mib(const struct net *net)
{
	const struct tltcp_net *tn = net_generic(net, tltcp_net_id);

	return tn->mib;
}

static int tltcp_stat_show(struct seq_file *seq, void *v)
{
	struct tltcp_mib __percpu *mib = tltcp_net_mib(seq->private);
	unsigned long sum[TLTCP_MIB_MAX] = {};
	int cpu, i;

	for_each_possible_cpu(cpu)
		for (i = 0; i < TLTCP_MIB_MAX; i++)
			sum[i] += READ_ONCE(per_cpu_ptr(mib, cpu)->mibs[i]);
	for (i = 0; i < TLTCP_MIB_MAX; i++)
		seq_printf(seq, "%-32s\t%lu\n", tltcp_mib_names[i], sum[i]);
	return 0;
}

static int __net_init tltcp_net_init(struct net *net)
{
	struct tltcp_net *tn = net_generic(net, tltcp_net_id);

	tn->mib = alloc_percpu(struct tltcp_mib);
	if (!tn->mib)
		return -ENOMEM;
	if (!proc_create_net_single("tltcp_stat", 0444, net->proc_net,
				    tltcp_stat_show, NULL)) {
		free_percpu(tn->mib);
		return -ENOMEM;
	}
	return 0;
}

static void __net_exit tltcp_net_exit(struct net *net)
{
	struct tltcp_net *tn = net_generic(net, tltcp_net_id);

	remove_proc_entry("tltcp_stat", net->proc_net);
	free_percpu(tn->mib);
}

static struct pernet_operations tltcp_net_ops = {
	.init	= tltcp_net_init,
	.exit	= tltcp_net_exit,
	.id	= &tltcp_net_id,
	.size	= sizeof(struct tltcp_net),
};

int __init tltcp_stat_init(void)
{
	return register_pernet_subsys(&tltcp_net_ops);
}

void tltcp_stat_exit(void)
{
	unregister_pernet_subsys(&tltcp_net_ops);
}
