// SPDX-License-Identifier: GPL-2.0
/*
 * The tunnel client's packet-filter redirection: an nftables table of its
 * own, inet tsm_tunnel_<port>, whose nat chains redirect the chosen UDP
 * traffic to the client's port.  Locally sent datagrams are caught at the
 * output hook (optionally only a uid's or a cgroup's), forwarded ones at
 * prerouting; the tunnel's own sockets carry TUN_MARK and are skipped.
 * Replies go back through conntrack, which restores the original source.
 *
 * The table is loaded with nft -f, replacing a leftover of the same name
 * atomically, and deleted on exit; tun_redirect_cleanup() deletes what a
 * killed client left behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "tunnel.h"

#define TABLE_PREFIX	"tsm_tunnel_"

/* Runs nft with args, script (if any) on its standard input. */
static int run_nft(const char *const args[], const char *script, FILE *out,
		   struct tsm_error *err)
{
	int in[2], outp[2], status;
	char buf[4096];
	const char *argv[8];
	size_t n, i;
	pid_t pid;

	argv[0] = "nft";
	for (i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	if (pipe2(in, O_CLOEXEC) || pipe2(outp, O_CLOEXEC))
		return tsm_err(err, errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return tsm_err(err, errno, "fork: %s", strerror(errno));
	if (!pid) {
		dup2(in[0], 0);
		dup2(outp[1], 1);
		execvp("nft", (char *const *)argv);
		execv("/usr/sbin/nft", (char *const *)argv);
		fprintf(stderr, "tsm: nft: %s (apt-get install nftables)\n",
			strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(outp[1]);
	if (script && write(in[1], script, strlen(script)) < 0)
		fprintf(stderr, "tsm: nft: %s\n", strerror(errno));
	close(in[1]);
	while ((n = read(outp[0], buf, sizeof(buf))) > 0 && n != (size_t)-1)
		if (out)
			fwrite(buf, 1, n, out);
	close(outp[0]);
	if (waitpid(pid, &status, 0) < 0)
		return tsm_err(err, errno, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return tsm_err(err, WIFEXITED(status) &&
			       WEXITSTATUS(status) == 127 ? ENOENT : EIO,
			       "nft %s failed (exit %d)", args[0],
			       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

/* nft's cgroupv2 match needs the path's depth below the root. */
static int cgroup_level(const char *path)
{
	int level = 0;
	const char *p;

	for (p = path; *p; p++)
		if (*p != '/' && (p == path || p[-1] == '/'))
			level++;
	return level;
}

int tun_redirect_install(const struct tun_redirect *r, struct tsm_error *err)
{
	static const char *const args[] = { "-f", "-", NULL };
	char match[512] = "", script[2048];
	const char *cg = r->cgroup;

	if (r->uid >= 0)
		tsm_append(match, sizeof(match), " meta skuid %ld", r->uid);
	if (cg) {
		while (*cg == '/')
			cg++;
		if (!*cg || strchr(cg, '"'))
			return tsm_err(err, EINVAL, "bad cgroup path '%s'",
				       r->cgroup);
		tsm_append(match, sizeof(match),
			   " socket cgroupv2 level %d \"%s\"", cgroup_level(cg),
			   cg);
	}
	script[0] = 0;
	tsm_append(script, sizeof(script),
		   "add table inet " TABLE_PREFIX "%d\n"
		   "delete table inet " TABLE_PREFIX "%d\n"
		   "table inet " TABLE_PREFIX "%d {\n"
		   "\tchain output {\n"
		   "\t\ttype nat hook output priority -100; policy accept;\n"
		   "\t\tmeta mark 0x%x return\n"
		   "\t\tudp dport %d%s redirect to :%d\n"
		   "\t}\n",
		   r->port, r->port, r->port, TUN_MARK, r->port, match,
		   r->to_port);
	/* Forwarded traffic has no local uid or cgroup. */
	if (!match[0])
		tsm_append(script, sizeof(script),
			   "\tchain prerouting {\n"
			   "\t\ttype nat hook prerouting priority -100; policy accept;\n"
			   "\t\tudp dport %d redirect to :%d\n"
			   "\t}\n", r->port, r->to_port);
	tsm_append(script, sizeof(script), "}\n");
	return run_nft(args, script, NULL, err);
}

int tun_redirect_remove(int port, struct tsm_error *err)
{
	char table[32];
	const char *const args[] = { "delete", "table", "inet", table, NULL };

	snprintf(table, sizeof(table), TABLE_PREFIX "%d", port);
	return run_nft(args, NULL, NULL, err);
}

int tun_redirect_cleanup(int port, struct tsm_error *err)
{
	static const char *const args[] = { "list", "tables", NULL };
	char *list = NULL, *line, *save, *name;
	int ret, removed = 0, p;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&list, &len);
	if (!f)
		return tsm_err(err, errno, "%s", strerror(errno));
	ret = run_nft(args, NULL, f, err);
	fclose(f);
	for (line = strtok_r(list, "\n", &save); !ret && line;
	     line = strtok_r(NULL, "\n", &save)) {
		name = strstr(line, "table inet " TABLE_PREFIX);
		if (!name)
			continue;
		p = atoi(name + strlen("table inet " TABLE_PREFIX));
		if (p <= 0 || (port && p != port))
			continue;
		ret = tun_redirect_remove(p, err);
		if (!ret) {
			printf("removed table inet " TABLE_PREFIX "%d\n", p);
			removed++;
		}
	}
	free(list);
	if (!ret && !removed)
		printf("no tsm_tunnel table to remove\n");
	return ret;
}
