// SPDX-License-Identifier: GPL-2.0
/*
 * An ordinary TCP application for the tests of libtsm_preload.so: it
 * knows nothing of tsm, and prints what it sees of its own sockets, so
 * that a test can run it with and without the preload and compare.
 *
 *   test_preload [-C ALGO] [-t THREADS] [-w]
 *
 * One line each: errno after a successful socket() (set to EDOM before),
 * errno of a failing socket(), whether UDP and AF_UNIX stream sockets
 * were made, the congestion control of a listener, a client connected to
 * it over loopback and the accepted socket, and of THREADS x 50 sockets
 * made concurrently (every algorithm seen, with counts).  -C sets the
 * algorithm itself on the listener and the client, as iperf3 -C does.
 * -w: prints "ready PORT" and holds the connection until standard input
 * closes (for ss).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <err.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PER_THREAD	50
#define MAX_THREADS	16

static char seen[MAX_THREADS * PER_THREAD][16];

static void cc_of(int fd, char *buf, socklen_t len)
{
	memset(buf, 0, len);
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, buf, &len))
		snprintf(buf, len, "error:%s", strerrorname_np(errno));
}

static void *make_sockets(void *arg)
{
	long t = (long)arg;
	int i, fd;

	for (i = 0; i < PER_THREAD; i++) {
		fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
		if (fd < 0)
			err(1, "socket");
		cc_of(fd, seen[t * PER_THREAD + i], sizeof(seen[0]));
		close(fd);
	}
	return NULL;
}

static void many_sockets(int n)
{
	pthread_t th[MAX_THREADS];
	int i, j, count;
	long t;

	for (t = 0; t < n; t++)
		pthread_create(&th[t], NULL, make_sockets, (void *)t);
	for (t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	printf("threads %d x %d:", n, PER_THREAD);
	for (i = 0; i < n * PER_THREAD; i++) {
		for (j = 0; j < i && strcmp(seen[i], seen[j]); j++)
			;
		if (j < i)
			continue;
		for (count = 0, j = i; j < n * PER_THREAD; j++)
			count += !strcmp(seen[i], seen[j]);
		printf(" %s=%d", seen[i], count);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	const char *algo = NULL;
	int lfd, cfd, afd, fd, c, nthreads = 0, hold = 0;
	char cc[16];

	while ((c = getopt(argc, argv, "C:t:w")) != -1) {
		switch (c) {
		case 'C':
			algo = optarg;
			break;
		case 't':
			nthreads = atoi(optarg);
			if (nthreads < 0 || nthreads > MAX_THREADS)
				errx(2, "-t: 0..%d", MAX_THREADS);
			break;
		case 'w':
			hold = 1;
			break;
		default:
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	errno = EDOM;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	printf("errno after socket(): %s\n", strerrorname_np(errno));
	close(fd);
	errno = 0;
	fd = socket(AF_INET, SOCK_STREAM, IPPROTO_UDP);
	printf("socket(TCP, IPPROTO_UDP): %d %s\n", fd,
	       strerrorname_np(errno));
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	printf("udp socket: %s\n", fd >= 0 ? "yes" : "no");
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	printf("unix stream socket: %s\n", fd >= 0 ? "yes" : "no");
	close(fd);

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, IPPROTO_TCP);
	if (lfd < 0 || cfd < 0)
		err(1, "socket");
	if (algo &&
	    (setsockopt(lfd, IPPROTO_TCP, TCP_CONGESTION, algo, strlen(algo)) ||
	     setsockopt(cfd, IPPROTO_TCP, TCP_CONGESTION, algo, strlen(algo))))
		err(1, "TCP_CONGESTION %s", algo);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (void *)&a, sizeof(a)) || listen(lfd, 1) ||
	    getsockname(lfd, (void *)&a, &alen))
		err(1, "listen");
	if (connect(cfd, (void *)&a, sizeof(a)) && errno != EINPROGRESS)
		err(1, "connect");
	afd = accept(lfd, NULL, NULL);
	if (afd < 0)
		err(1, "accept");
	cc_of(lfd, cc, sizeof(cc));
	printf("listener: %s\n", cc);
	cc_of(cfd, cc, sizeof(cc));
	printf("client: %s\n", cc);
	cc_of(afd, cc, sizeof(cc));
	printf("accepted: %s\n", cc);
	if (nthreads)
		many_sockets(nthreads);
	if (hold) {
		printf("ready %d\n", ntohs(a.sin_port));
		while (read(0, cc, sizeof(cc)) > 0)
			;
	}
	close(afd);
	close(cfd);
	close(lfd);
	return 0;
}
