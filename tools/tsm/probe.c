// SPDX-License-Identifier: GPL-2.0
/*
 * What the running kernel offers: registered and loadable congestion
 * controls, the tltcp ULP, DCCP and its CCIDs, SCTP and PR-SCTP.  The
 * result is a plain struct tsm_offer so that the decision can be fed a
 * made-up one instead (tsm_offer_parse, the CLI's --assume): the machines
 * this is developed on have none of the modules.
 *
 * "Loadable" means a module file the kernel's own autoload would find:
 * TCP_CONGESTION and TCP_ULP load modules for CAP_NET_ADMIN only, so the
 * decision counts a loadable algorithm only for privileged callers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/dccp.h>
#include <netinet/in.h>

#include "internal.h"
#include "moddep.h"

#ifndef SOCK_DCCP
#define SOCK_DCCP	6
#endif
#ifndef IPPROTO_DCCP
#define IPPROTO_DCCP	33
#endif
#ifndef SOL_DCCP
#define SOL_DCCP	269
#endif

#define CAP_NET_ADMIN_BIT	12

/*
 * Algorithms the mapping table and its fallbacks may choose, looked for as
 * module files: tcp_lp and tcp_vegas are the kernel's low-priority
 * algorithms, a Scavenger's fallbacks.
 */
static const char *const table_cc[] = {
	"bbr", "cubic", "reno_tw", "multfrc", "lp", "vegas",
};

static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

static int add_cc(struct tsm_offer *off, const char *name,
		  enum tsm_state state, bool allowed)
{
	int i = tsm_offer_cc(off, name);

	if (i < 0) {
		if (off->n_cc == TSM_MAX_CC || strlen(name) >= TSM_NAME_LEN)
			return -E2BIG;
		i = off->n_cc++;
		snprintf(off->cc[i].name, TSM_NAME_LEN, "%s", name);
		off->cc[i].state = state;
	}
	if (state > off->cc[i].state)
		off->cc[i].state = state;
	off->cc[i].allowed |= allowed;
	return 0;
}

/* Each word of a sysctl list: registered, and allowed if 'allowed'. */
static void read_cc_list(struct tsm_offer *off, const char *path,
			 bool allowed)
{
	char buf[1024], *save = NULL, *w;

	if (read_text(path, buf, sizeof(buf)))
		return;
	for (w = strtok_r(buf, " \t\n", &save); w;
	     w = strtok_r(NULL, " \t\n", &save))
		add_cc(off, w, TSM_LOADED, allowed);
}

static bool privileged(void)
{
	char buf[4096], *p;
	unsigned long long eff;

	if (read_text("/proc/self/status", buf, sizeof(buf)))
		return geteuid() == 0;
	p = strstr(buf, "CapEff:");
	if (!p || sscanf(p + 7, "%llx", &eff) != 1)
		return geteuid() == 0;
	return eff & (1ULL << CAP_NET_ADMIN_BIT);
}

static uint32_t parse_milli(const char *s)
{
	double v = strtod(s, NULL);

	return v > 0 ? (uint32_t)(v * 1000 + 0.5) : 0;
}

/*
 * DCCP is loaded if a DCCP socket opens, loadable if not but its module
 * file is there (socket() does not load dccp_ipv4: it has no alias), and
 * absent otherwise, as from Linux 6.16 on.  No kernel version is looked
 * at; the errno of socket() is kept for the explanation.
 */
static void probe_dccp(struct tsm_offer *off, const char *moddep)
{
	uint8_t ccids[8];
	socklen_t len = sizeof(ccids);
	unsigned int i;
	int fd;

	fd = socket(AF_INET, SOCK_DCCP, IPPROTO_DCCP);
	if (fd < 0) {
		off->dccp_err = errno;
		off->dccp = moddep && moddep_lists(moddep, "dccp_ipv4") ?
			    TSM_LOADABLE : TSM_ABSENT;
		return;
	}
	off->dccp = TSM_LOADED;
	if (!getsockopt(fd, SOL_DCCP, DCCP_SOCKOPT_AVAILABLE_CCIDS, ccids,
			&len)) {
		for (i = 0; i < len && i < sizeof(ccids); i++) {
			if (ccids[i] == 2 || ccids[i] == 3)
				off->ccid[ccids[i]] = true;
		}
	}
	close(fd);
}

static void probe_sctp(struct tsm_offer *off, const char *moddep)
{
	char buf[16];
	int fd;

	fd = socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP);
	if (fd < 0) {
		off->sctp = moddep && moddep_lists(moddep, "sctp") ?
			    TSM_LOADABLE : TSM_ABSENT;
		return;
	}
	close(fd);
	off->sctp = TSM_LOADED;
	off->prsctp = !read_text("/proc/sys/net/sctp/prsctp_enable", buf,
				 sizeof(buf)) && atoi(buf) == 1;
}

int tsm_probe(struct tsm_offer *off, struct tsm_error *err)
{
	char buf[1024], *moddep;
	unsigned int i;

	memset(off, 0, sizeof(*off));
	(void)err;
	off->privileged = privileged();
	read_cc_list(off, "/proc/sys/net/ipv4/tcp_available_congestion_control",
		     false);
	read_cc_list(off, "/proc/sys/net/ipv4/tcp_allowed_congestion_control",
		     true);
	if (!read_text("/proc/sys/net/ipv4/tcp_congestion_control", buf,
		       sizeof(buf)))
		snprintf(off->default_cc, TSM_NAME_LEN, "%.*s",
			 (int)strcspn(buf, "\n"), buf);
	if (!read_text("/sys/module/tcp_multfrc/parameters/n", buf,
		       sizeof(buf)))
		off->multfrc_n_milli = parse_milli(buf);

	moddep = moddep_read();
	for (i = 0; moddep && i < ARRAY_SIZE(table_cc); i++) {
		snprintf(buf, sizeof(buf), "tcp_%s", table_cc[i]);
		if (moddep_lists(moddep, buf))
			add_cc(off, table_cc[i], TSM_LOADABLE, false);
	}
	if (!read_text("/proc/sys/net/ipv4/tcp_available_ulp", buf,
		       sizeof(buf)) && strstr(buf, "tltcp"))
		off->tltcp = TSM_LOADED;
	else if (moddep && moddep_lists(moddep, "tltcp"))
		off->tltcp = TSM_LOADABLE;
	probe_dccp(off, moddep);
	probe_sctp(off, moddep);
	free(moddep);
	return 0;
}

static int state_word(const char *s, enum tsm_state *st)
{
	if (!s || !strcmp(s, "loaded"))
		*st = TSM_LOADED;
	else if (!strcmp(s, "loadable"))
		*st = TSM_LOADABLE;
	else if (!strcmp(s, "absent"))
		*st = TSM_ABSENT;
	else
		return -EINVAL;
	return 0;
}

/*
 * "priv cc=reno,cubic,bbr:restricted,reno_tw:loadable default=cubic
 *  multfrc_n=1 tltcp[=loadable] dccp=2,3 sctp[=nopr|loadable]"
 * A cc is loaded and allowed unless marked :restricted (loaded, not in
 * tcp_allowed_congestion_control) or :loadable; default= defaults to the
 * first cc; what is not named is absent.
 */
static int offer_word(struct tsm_offer *off, char *w)
{
	char *v = strchr(w, '='), *s2 = NULL, *c, *flag;
	enum tsm_state st;
	bool allowed;
	int ret = 0;

	if (v)
		*v++ = '\0';
	if (!strcmp(w, "priv") && !v) {
		off->privileged = true;
	} else if (!strcmp(w, "cc") && v) {
		for (c = strtok_r(v, ",", &s2); c && !ret;
		     c = strtok_r(NULL, ",", &s2)) {
			st = TSM_LOADED;
			allowed = true;
			flag = strchr(c, ':');
			if (flag) {
				*flag++ = '\0';
				if (!strcmp(flag, "restricted")) {
					allowed = false;
				} else if (!strcmp(flag, "loadable")) {
					st = TSM_LOADABLE;
					allowed = false;
				} else {
					return -EINVAL;
				}
			}
			ret = add_cc(off, c, st, allowed);
			if (!ret && !off->default_cc[0])
				snprintf(off->default_cc, TSM_NAME_LEN, "%s",
					 c);
		}
	} else if (!strcmp(w, "default") && v) {
		snprintf(off->default_cc, TSM_NAME_LEN, "%s", v);
	} else if (!strcmp(w, "multfrc_n") && v) {
		off->multfrc_n_milli = parse_milli(v);
	} else if (!strcmp(w, "tltcp")) {
		ret = state_word(v, &off->tltcp);
	} else if (!strcmp(w, "dccp")) {
		off->dccp = TSM_LOADED;
		if (v && !strcmp(v, "loadable"))
			off->dccp = TSM_LOADABLE;
		else if (v && !strcmp(v, "2,3"))
			memset(off->ccid + 2, true, 2);
		else if (v && (!strcmp(v, "2") || !strcmp(v, "3")))
			off->ccid[*v - '0'] = true;
		else
			ret = -EINVAL;
	} else if (!strcmp(w, "sctp")) {
		off->sctp = TSM_LOADED;
		off->prsctp = !v;
		if (v && !strcmp(v, "loadable"))
			off->sctp = TSM_LOADABLE;
		else if (v && strcmp(v, "nopr"))
			ret = -EINVAL;
	} else {
		ret = -EINVAL;
	}
	return ret;
}

/*
 * "priv cc=reno,cubic,bbr:restricted,reno_tw:loadable default=cubic
 *  multfrc_n=1 tltcp[=loadable] dccp=2,3 sctp[=nopr|loadable]"
 * A cc is loaded and allowed unless marked :restricted (loaded, not in
 * tcp_allowed_congestion_control) or :loadable; default= defaults to the
 * first cc; what is not named is absent.
 */
int tsm_offer_parse(const char *spec, struct tsm_offer *off,
		    struct tsm_error *err)
{
	char *copy = strdup(spec), *save = NULL, *w, word[64];
	int ret = 0;

	if (!copy)
		return tsm_err(err, ENOMEM, "out of memory");
	memset(off, 0, sizeof(*off));
	for (w = strtok_r(copy, " \t;", &save); w;
	     w = strtok_r(NULL, " \t;", &save)) {
		snprintf(word, sizeof(word), "%s", w);
		ret = offer_word(off, w);
		if (ret) {
			tsm_err(err, EINVAL,
				"--assume: cannot parse '%s' (priv cc=NAME[:restricted|:loadable],... default=NAME multfrc_n=N tltcp[=loadable] dccp=2,3|2|3|loadable sctp[=nopr|loadable])",
				word);
			break;
		}
	}
	free(copy);
	return ret;
}
