// SPDX-License-Identifier: GPL-2.0
/*
 * tlbench: bulk throughput and CPU cost of one TCP or TLTCP connection,
 * for comparing the two on the same path (make bench).
 *
 *   tlbench -s [-6] [-p PORT] [-T [-S]] [-r BYTES]   receive one connection
 *   tlbench -c HOST [-6] [-p PORT] [-T] [-l BYTES | -L SECTION] [-t SECS]
 *           [-C CC] [-Q QUEUE_BYTES] [-N NOTSENT_BYTES]
 *
 * -T attaches the "tltcp" ULP on both ends.  The client writes blocking
 * write()s of -l bytes (256 KiB), or with -L sections of that many bytes
 * with sendmsg(MSG_TL) and a deadline of an hour; the server reads with
 * recv() (TCP) or recvmsg(MSG_TL) (TLTCP; with -S recv() too, as a
 * stream), up to -r bytes at a time (256 KiB).  -N sets TL_NOTSENT (what
 * TLTCP lets TCP hold unsent; by default autosized by the module).  The
 * section queue is the module's default (the send buffer, as TCP's write queue), but for
 * sections larger than a fresh send buffer: then, or with -Q, TL_SNDQ_LIMIT
 * is four sections (-Q: that many bytes).  Each end prints one
 * line of JSON: the bytes, the seconds, its own CPU time (user and
 * system, from getrusage()) and the times it slept (blocked in a read or a
 * write: voluntary context switches), from the connection's start to its
 * end.
 *
 * Exit status: 0 on success, 1 on a run-time failure, 2 on bad arguments.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "tltcp_msg.h"

#define BUF_LEN		(256 * 1024)

struct opts {
	const char *host;	/* NULL: server */
	const char *port;
	const char *cc;
	int family;
	bool tltcp;
	long long section;	/* 0: write() */
	long long wlen;		/* bytes per write() */
	long long sndq;		/* TL_SNDQ_LIMIT, 0: see run_client() */
	long long notsent;	/* TL_NOTSENT, 0: the module's autosizing */
	bool stream;		/* server: plain reads with -T */
	long long rlen;		/* server: bytes per read at most */
	double secs;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: tlbench -s [-6] [-p PORT] [-T [-S]] [-r BYTES]\n"
		"       tlbench -c HOST [-6] [-p PORT] [-T] [-l BYTES | -L SECTION_BYTES]\n"
		"               [-t SECS] [-C CC] [-Q QUEUE_BYTES] [-N NOTSENT_BYTES]\n");
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	bool server = false;
	int c;

	*o = (struct opts){ .port = "5301", .family = AF_INET, .secs = 5,
			    .wlen = BUF_LEN };
	while ((c = getopt(argc, argv, "sc:6p:Tl:L:t:C:Q:N:Sr:")) != -1) {
		switch (c) {
		case 's': server = true; break;
		case 'c': o->host = optarg; break;
		case '6': o->family = AF_INET6; break;
		case 'p': o->port = optarg; break;
		case 'T': o->tltcp = true; break;
		case 'l': o->wlen = cli_number("-l", optarg, 1, BUF_LEN); break;
		case 'L': o->section = cli_number("-L", optarg, 1, BUF_LEN); break;
		case 't': o->secs = cli_number("-t", optarg, 0.1, 3600); break;
		case 'C': o->cc = optarg; break;
		case 'Q': o->sndq = cli_number("-Q", optarg, 1, 1LL << 30); break;
		case 'N': o->notsent = cli_number("-N", optarg, 1, 1LL << 30); break;
		case 'S': o->stream = true; break;
		case 'r': o->rlen = cli_number("-r", optarg, 1, BUF_LEN); break;
		default: cli_usage_error("bad option");
		}
	}
	if (optind != argc || server == !!o->host)
		cli_usage_error("give one of -s and -c HOST");
	if (o->section && !o->tltcp)
		cli_usage_error("-L needs -T");
	if (o->sndq && !o->section)
		cli_usage_error("-Q needs -L");
	if ((o->notsent && (server || !o->tltcp)) ||
	    (o->stream && (!server || !o->tltcp)))
		cli_usage_error("-N needs -c and -T, -S needs -s and -T");
	if (o->rlen && !server)
		cli_usage_error("-r needs -s");
	if (!o->rlen)
		o->rlen = BUF_LEN;
}

static struct addrinfo *resolve(const struct opts *o)
{
	struct addrinfo hints = {
		.ai_family = o->family,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = o->host ? 0 : AI_PASSIVE,
	};
	struct addrinfo *ai;
	int err = getaddrinfo(o->host, o->port, &hints, &ai);

	if (err)
		cli_die("%s: %s", o->host ? o->host : "listen", gai_strerror(err));
	return ai;
}

static int accept_one(const struct opts *o)
{
	struct addrinfo *ai = resolve(o);
	int one = 1, lfd, fd;

	lfd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 1))
		cli_die("listen: %s", strerror(errno));
	freeaddrinfo(ai);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		cli_die("accept: %s", strerror(errno));
	close(lfd);
	return fd;
}

static int connect_one(const struct opts *o)
{
	struct addrinfo *ai = resolve(o);
	int fd = socket(ai->ai_family, SOCK_STREAM, 0);

	if (fd < 0)
		cli_die("socket: %s", strerror(errno));
	if (o->cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->cc,
				strlen(o->cc)))
		cli_die("TCP_CONGESTION %s: %s", o->cc, strerror(errno));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen))
		cli_die("connect: %s", strerror(errno));
	freeaddrinfo(ai);
	return fd;
}

/* CPU seconds so far; *@sleeps: the times the process slept (voluntary
 * context switches: blocked in a read or a write).
 */
static double cpu_secs(long *sleeps)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*sleeps = ru.ru_nvcsw;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void report(const char *end, long long bytes, uint64_t t0,
		   double cpu0, long sleeps0)
{
	long sleeps;
	double cpu = cpu_secs(&sleeps) - cpu0;

	printf("{\"end\": \"%s\", \"bytes\": %lld, \"seconds\": %.6f, \"cpu_seconds\": %.6f, \"sleeps\": %ld}\n",
	       end, bytes, (now_ns() - t0) / 1e9, cpu, sleeps - sleeps0);
}

/* One read: bytes of data (gaps count nothing), 0 at the end. */
static ssize_t read_some(int fd, char *buf, size_t len, bool tltcp)
{
	char ctl[TL_RECORD_SPACE];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct tl_record rec;
	ssize_t n;
	int type;

	if (!tltcp)
		return recv(fd, buf, len, 0);
	n = recvmsg(fd, &msg, MSG_TL);
	if (n > 0 && tl_records(&msg, &rec, &type) && type == TL_GAP)
		return -2;
	return n;
}

static void run_server(const struct opts *o, char *buf)
{
	int fd = accept_one(o);
	uint64_t t0 = now_ns();
	long long bytes = 0;
	long sleeps0;
	double cpu0 = cpu_secs(&sleeps0);
	ssize_t n;

	if (o->tltcp && tl_attach(fd))
		cli_die("TCP_ULP tltcp: %s", strerror(errno));
	while ((n = read_some(fd, buf, (size_t)o->rlen,
			      o->tltcp && !o->stream)) != 0) {
		if (n == -2)
			continue;
		if (n < 0)
			cli_die("read: %s", strerror(errno));
		bytes += n;
	}
	report("receiver", bytes, t0, cpu0, sleeps0);
	close(fd);
}

/* A deadline that never comes within the run: sections are all sent. */
static ssize_t write_some(const struct opts *o, int fd, const char *buf)
{
	if (o->section)
		return tl_send_section(fd, buf, (size_t)o->section,
				       TL_MAX_DEADLINE, 0);
	return write(fd, buf, (size_t)o->wlen);
}

static void run_client(const struct opts *o, char *buf)
{
	uint32_t limit = o->sndq ? (uint32_t)o->sndq : 4 * (uint32_t)o->section;
	int fd = connect_one(o), sndbuf = 0;
	socklen_t len = sizeof(sndbuf);
	uint64_t t0 = now_ns(), end;
	long long bytes = 0;
	long sleeps0;
	double cpu0 = cpu_secs(&sleeps0);
	ssize_t n;

	if (o->tltcp && tl_attach(fd))
		cli_die("TCP_ULP tltcp: %s", strerror(errno));
	/* A fresh send buffer is smaller than a large section, which the
	 * queue would refuse; a smaller one fits, and a fixed limit would
	 * keep the queue small where TCP's write queue grows.
	 */
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len))
		cli_die("SO_SNDBUF: %s", strerror(errno));
	if (o->notsent) {
		uint32_t ns = (uint32_t)o->notsent;

		if (setsockopt(fd, SOL_TLTCP, TL_NOTSENT, &ns, sizeof(ns)))
			cli_die("TL_NOTSENT: %s", strerror(errno));
	}
	if (o->section && (o->sndq || o->section > sndbuf) &&
	    setsockopt(fd, SOL_TLTCP, TL_SNDQ_LIMIT, &limit, sizeof(limit)))
		cli_die("TL_SNDQ_LIMIT: %s", strerror(errno));
	end = t0 + (uint64_t)(o->secs * NSEC_PER_SEC);
	while (now_ns() < end) {
		n = write_some(o, fd, buf);
		if (n < 0)
			cli_die("write: %s", strerror(errno));
		bytes += n;
	}
	/* The bytes are sent when the receiver has them: wait for its EOF. */
	shutdown(fd, SHUT_WR);
	while (recv(fd, buf, BUF_LEN, 0) > 0)
		;
	report("sender", bytes, t0, cpu0, sleeps0);
	close(fd);
}

int main(int argc, char **argv)
{
	struct opts o;
	char *buf;

	cli_prog = "tlbench";
	cli_synopsis = usage;
	parse_opts(argc, argv, &o);
	buf = calloc(1, BUF_LEN);
	if (!buf)
		cli_die("out of memory");
	if (o.host)
		run_client(&o, buf);
	else
		run_server(&o, buf);
	free(buf);
	return 0;
}
