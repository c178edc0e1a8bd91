// SPDX-License-Identifier: GPL-2.0
/* Whether the running kernel has DCCP (dccp_probe.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "dccp_probe.h"

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
	char path[320], line[512];
	struct utsname u;
	bool found = false;
	FILE *f;

	if (uname(&u))
		return false;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/dccp_ipv4.ko") &&
			strchr(line, ':') > strstr(line, "/dccp_ipv4.ko");
	fclose(f);
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
