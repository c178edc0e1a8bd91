// SPDX-License-Identifier: GPL-2.0
/* The running kernel's modules.dep (moddep.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "moddep.h"

char *moddep_read(void)
{
	size_t n, cap = 1 << 20;
	struct utsname u;
	char path[320];
	char *buf;
	FILE *f;

	if (uname(&u))
		return NULL;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	buf = malloc(cap + 1);
	if (buf) {
		/* Debian's modules.dep is ~500 KB; more is not a kernel's. */
		n = fread(buf, 1, cap, f);
		buf[n] = '\0';
	}
	fclose(f);
	return buf;
}

bool moddep_lists(const char *moddep, const char *name)
{
	const char *p;
	char pat[64];
	int n;

	n = snprintf(pat, sizeof(pat), "/%s.ko", name);
	if (n < 0 || (size_t)n >= sizeof(pat))
		return false;
	/* "path/name.ko:" or "path/name.ko.xz" (compressed) */
	for (p = strstr(moddep, pat); p; p = strstr(p + 1, pat)) {
		if (p[n] == ':' || p[n] == '.')
			return true;
	}
	return false;
}
