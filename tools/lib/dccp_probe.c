// SPDX-License-Identifier: GPL-2.0
/* Whether the running kernel has DCCP (dccp_probe.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dccp_probe.h"
#include "moddep.h"

#ifndef SOCK_DCCP
#define SOCK_DCCP	6
#endif
#ifndef IPPROTO_DCCP
#define IPPROTO_DCCP	33
#endif

int dccp_probe(int family)
{
	int fd = socket(family, SOCK_DCCP, IPPROTO_DCCP);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

bool dccp_module_file(void)
{
	char *moddep = moddep_read();
	bool found;

	found = moddep && moddep_lists(moddep, "dccp_ipv4");
	free(moddep);
	return found;
}

bool dccp_errno_absent(int err)
{
	switch (err) {
	case ESOCKTNOSUPPORT:	/* no protocol of type SOCK_DCCP */
	case EPROTONOSUPPORT:	/* the type, but not protocol 33 */
	case EAFNOSUPPORT:	/* no such family (IPv6 off) */
	case EINVAL:		/* a type the kernel does not know */
		return true;
	default:
		return false;
	}
}
