// SPDX-License-Identifier: GPL-2.0
/*
 * libtsm_preload.so: the policy's congestion control for the TCP sockets
 * of an unmodified application (Documentation/tsm-guide.rst):
 *
 *   TSM_PROFILE=scavenger LD_PRELOAD=.../libtsm_preload.so app
 *   tsm run --capacityProfile scavenger -- app
 *
 * Only socket() is interposed.  TCP_CONGESTION is set right after the
 * socket is created: before any handshake (connect(), sendto() with
 * MSG_FASTOPEN, listen()), so the connection starts with the algorithm,
 * and a listener's accepted sockets inherit it; and before the
 * application's own setsockopt(TCP_CONGESTION), which therefore still
 * wins.
 *
 * The decision is libtsm's (tsm_select_cc(): Table 3 and its fallbacks)
 * and is made once per process, on its first TCP socket: that call reads
 * the policy and probes the kernel.  From the decision the library keeps
 * the chain of algorithms libtsm would fall back through (the choice,
 * then what tsm_select_cc() picks with it absent, and so on); every later
 * socket() costs one setsockopt() and allocates nothing.  If the kernel
 * refuses an algorithm after all (EPERM: not in
 * net.ipv4.tcp_allowed_congestion_control for a caller without
 * CAP_NET_ADMIN; ENOENT: absent, not loadable), the library moves to the
 * next one for this socket and every later one, says so in one line on
 * standard error, once, and when the chain is spent leaves the kernel
 * default.  The application never sees any of it: socket() returns what
 * the real socket() returned, with errno as it left it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tsm.h"

#define CHAIN_MAX	8	/* the row's choices and fallbacks (select.c) */
#define PREFIX		"tsm_preload: "

static char chain[CHAIN_MAX][TSM_NAME_LEN];	/* best first */
static int n_chain;		/* 0: leave every socket alone */
static atomic_int cur;		/* chain entry in use; n_chain: none left */
static bool nodelay, quiet;

static int (*real_socket)(int domain, int type, int protocol);
static pthread_once_t sym_once = PTHREAD_ONCE_INIT;
static pthread_once_t decide_once = PTHREAD_ONCE_INIT;
/* The probe opens sockets of its own: they pass through untouched. */
static __thread bool deciding __attribute__((tls_model("initial-exec")));

/*
 * One line to standard error (unless TSM_QUIET) with write(): no stdio,
 * no allocation.
 */
static void say(const char *first, ...)
{
	char line[2 * TSM_MSG_LEN];
	const char *part;
	size_t n, k;
	va_list ap;

	if (quiet)
		return;
	n = strlen(PREFIX);
	memcpy(line, PREFIX, n);
	va_start(ap, first);
	for (part = first; part; part = va_arg(ap, const char *)) {
		k = strlen(part);
		if (k > sizeof(line) - 1 - n)
			k = sizeof(line) - 1 - n;
		memcpy(line + n, part, k);
		n += k;
	}
	va_end(ap);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0)
		return;		/* nowhere to report it */
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/* The requirements from the environment; false (and said) if bad. */
static bool env_req(struct tsm_req *req)
{
	const char *v;
	char *end;

	tsm_req_init(req);
	v = getenv("TSM_PROFILE");
	if (v && *v && tsm_parse_profile(v, &req->profile)) {
		say("TSM_PROFILE: unknown profile '", v, "'", NULL);
		return false;
	}
	v = getenv("TSM_WEIGHT");
	if (v && *v) {
		errno = 0;
		req->weight = strtod(v, &end);
		if (end == v || *end || errno) {
			say("TSM_WEIGHT: '", v, "' is not a number", NULL);
			return false;
		}
	}
	v = getenv("TSM_PATH_DELAY");
	if (v && *v) {
		errno = 0;
		req->path_delay_ms = strtoll(v, &end, 10);
		if (end == v || *end || errno) {
			say("TSM_PATH_DELAY: '", v,
			    "' is not a whole number of ms", NULL);
			return false;
		}
	}
	return true;
}

/* The offer with name gone, so that tsm_select_cc() picks what follows. */
static bool drop_cc(struct tsm_offer *off, const char *name)
{
	int i;

	for (i = 0; i < off->n_cc; i++) {
		if (!strcmp(off->cc[i].name, name)) {
			off->cc[i].state = TSM_ABSENT;
			off->cc[i].allowed = false;
			return true;
		}
	}
	return false;
}

static void decide(void)
{
	struct tsm_error err = { 0 };
	const char *assume = getenv("TSM_ASSUME");
	bool verbose = env_on("TSM_VERBOSE");
	struct tsm_policy pol;
	struct tsm_offer off;
	struct tsm_choice ch;
	struct tsm_req req;
	int i;

	deciding = true;
	quiet = env_on("TSM_QUIET") && !verbose;
	if (!env_req(&req))
		goto untouched;
	if (tsm_policy_load(NULL, &pol, &err) ||
	    (assume ? tsm_offer_parse(assume, &off, &err) :
	     tsm_probe(&off, &err)))
		goto error;
	for (i = 0; i < CHAIN_MAX; i++) {
		if (tsm_select_cc(&req, &pol, &off, &ch, &err)) {
			if (!i)
				goto error;
			break;
		}
		if (!i) {
			nodelay = ch.nodelay;
			if (verbose || ch.cc_fallback)
				say(ch.why, NULL);
		}
		snprintf(chain[i], TSM_NAME_LEN, "%s", ch.cc);
		if (!drop_cc(&off, ch.cc)) {
			i++;
			break;
		}
	}
	n_chain = i;
	deciding = false;
	return;
error:
	say(err.msg, NULL);
untouched:
	/* Never worse than no preload: bad settings leave sockets alone. */
	say("TCP sockets keep the kernel default", NULL);
	deciding = false;
}

/* Without a next socket() (never seen), the system call itself. */
static int sys_socket(int domain, int type, int protocol)
{
	return syscall(SYS_socket, domain, type, protocol);
}

static void resolve(void)
{
	real_socket = dlsym(RTLD_NEXT, "socket");
	if (!real_socket)
		real_socket = sys_socket;
}

static bool is_tcp(int domain, int type, int protocol)
{
	type &= ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	return (domain == AF_INET || domain == AF_INET6) &&
	       type == SOCK_STREAM && (!protocol || protocol == IPPROTO_TCP);
}

/*
 * The chain from the entry in use on.  cur only grows; the thread that
 * moves it past a refused algorithm reports that, once.
 */
static void set_cc(int fd)
{
	int k = atomic_load_explicit(&cur, memory_order_relaxed);
	const char *cc, *why;
	int one = 1, seen, e;

	while (k < n_chain) {
		cc = chain[k];
		if (!setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc,
				strlen(cc)))
			break;
		e = errno;
		seen = k;
		if (!atomic_compare_exchange_strong(&cur, &seen, k + 1)) {
			k = seen;	/* another thread moved on already */
			continue;
		}
		why = e == EPERM ?
		      " (EPERM: not in net.ipv4.tcp_allowed_congestion_control)" :
		      e == ENOENT ? " (ENOENT: not available)" : " (refused)";
		k++;
		say("congestion control ", cc, why, k < n_chain ?
		    "; falling back to " : "; the kernel default stays",
		    k < n_chain ? chain[k] : "", NULL);
	}
	if (nodelay)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int socket(int domain, int type, int protocol)
{
	int fd, saved;

	pthread_once(&sym_once, resolve);
	fd = real_socket(domain, type, protocol);
	if (fd < 0 || deciding || !is_tcp(domain, type, protocol))
		return fd;
	saved = errno;
	pthread_once(&decide_once, decide);
	set_cc(fd);
	errno = saved;
	return fd;
}
