// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests of the "tltcp" TCP upper-layer protocol (time-lined TCP), its
 * user-space contract being include/uapi/linux/tltcp.h.
 *
 * Every test runs in a network namespace of its own, over lo, once with
 * IPv4 and once with IPv6: the fixture connects a client (the sending end,
 * "snd") to an accepted socket (the receiving end, "rcv") and attaches
 * tltcp on both.  Tests that need a shaped link put netem on lo and open a
 * new pair, so that the connection's MSS follows lo's reduced MTU.
 *
 * Section contents are pat(section, offset), a mixing function of both,
 * so every data byte the receiver gets says whether it belongs where the
 * receiver was told it does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <linux/bpf.h>
#include <linux/kcm.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <linux/tltcp.h>

#include "../kselftest_harness.h"

#ifndef TCP_ULP
#define TCP_ULP 31
#endif
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL
#define SEC(x)		((__u64)(x) * NSEC_PER_SEC)
#define MSEC(x)		((__u64)(x) * NSEC_PER_MSEC)

/* TCP_INFO's tcpi_state of a closed socket (include/net/tcp_states.h). */
#define TCP_STATE_CLOSE	7

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_until(__u64 t)
{
	struct timespec ts = {
		.tv_sec = t / NSEC_PER_SEC,
		.tv_nsec = t % NSEC_PER_SEC,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void sleep_ms(unsigned int ms)
{
	sleep_until(now_ns() + MSEC(ms));
}

/*
 * KSELFTEST_TIMEOUT_SCALE (make check-debug sets 4; 1 to 100, else 1):
 * how many times slower than usual the machine may be.  The runner
 * stretches the program's timeout by it, main() each test's, and
 * scaled() what a test that passes never waits out: socket timeouts
 * (set_timeouts()) and deadlines meant never to pass (dl_never()).
 */
static unsigned int timeout_scale(void)
{
	const char *v = getenv("KSELFTEST_TIMEOUT_SCALE");
	int scale = v ? atoi(v) : 1;

	return scale > 1 && scale <= 100 ? scale : 1;
}

static __u64 scaled(__u64 t)
{
	return t * timeout_scale();
}

/* A test's own timeout in seconds (TL_TEST), before main() scales it. */
#define TL_TEST_TIMEOUT	60

/*
 * The relative deadline of sections that must all be delivered whole:
 * twice a test's scaled timeout, so that it cannot pass while a test that
 * passes runs, however slow the machine (a debug kernel under TCG took
 * 29-38 s for what takes 2.5 s of link, 2026-12-07); at most
 * TL_MAX_DEADLINE.
 */
static __u64 dl_never(void)
{
	__u64 t = scaled(SEC(2 * TL_TEST_TIMEOUT));

	return t < TL_MAX_DEADLINE ? t : TL_MAX_DEADLINE;
}

static __u32 rnd(__u32 *state)
{
	__u32 x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

/* The byte at offset @o of section @s. */
static inline __u8 pat(__u64 s, __u64 o)
{
	__u32 x = (__u32)(s * 0x9e3779b1U) ^ (__u32)(o * 0x85ebca77U);

	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 13;
	return x >> 24;
}

static void fill(void *buf, __u64 s, __u64 off, size_t len)
{
	__u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(s, off + i);
}

/* Index of the first byte of @buf that is not section @s from @off, or -1. */
static long mismatch(const void *buf, __u64 s, __u64 off, size_t len)
{
	const __u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(s, off + i))
			return i;
	return -1;
}

static long first_nonzero(const void *buf, size_t len)
{
	const __u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return i;
	return -1;
}

static void *section_buf(__u64 s, size_t len)
{
	void *buf = malloc(len ? len : 1);

	if (buf)
		fill(buf, s, 0, len);
	return buf;
}

/* Memory a forked child writes its results to. */
static void *shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Sockets */

static int tl_attach(int fd)
{
	return setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tltcp", sizeof("tltcp"));
}

/*
 * SO_RCVTIMEO and SO_SNDTIMEO of @ms, stretched by timeout_scale(): a
 * bound on how long a blocking call of a test that passes waits, so that
 * one that fails ends with an error rather than at the test's timeout.
 * The fixture's sockets get TL_SOCK_TIMEOUT_MS, half a test's timeout:
 * 10 s was too short for soft_error_keeps_stream's writer, blocked while
 * the reject rule stalled its stream, in a TCG guest beside another.
 */
#define TL_SOCK_TIMEOUT_MS	30000

static void set_timeouts(int fd, unsigned int ms)
{
	__u64 t = scaled(ms);
	struct timeval tv = { .tv_sec = t / 1000, .tv_usec = (t % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

static int set_u32(int fd, int opt, __u32 val)
{
	return setsockopt(fd, SOL_TLTCP, opt, &val, sizeof(val));
}

static int set_u64(int fd, int opt, __u64 val)
{
	return setsockopt(fd, SOL_TLTCP, opt, &val, sizeof(val));
}

static int get_info(int fd, struct tl_info *info)
{
	socklen_t len = sizeof(*info);
	int ret;

	memset(info, 0, sizeof(*info));
	ret = getsockopt(fd, SOL_TLTCP, TL_INFO, info, &len);
	if (!ret && len != sizeof(*info)) {
		errno = EMSGSIZE;
		return -1;
	}
	return ret;
}

static int tcp_state(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
		return -1;
	return ti.tcpi_state;
}

struct pair_opts {
	bool plain_snd;		/* leave the sending end plain TCP */
	bool plain_rcv;		/* leave the receiving end plain TCP */
	int rcv_window;		/* bound on the receiving end's window */
	bool veth;		/* the receiving end across veth_path() */
};

static void loopback_addr(int family, struct sockaddr_storage *ss,
			  socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		*len = sizeof(*sin6);
	}
}

/* A socket listening on the loopback address, ephemeral port, in @ss. */
static int tl_listener(struct __test_metadata *_metadata, int family,
		       int window, struct sockaddr_storage *ss, socklen_t *len)
{
	int fd, one = 1;

	loopback_addr(family, ss, len);
	fd = socket(family, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	/*
	 * A small receive window, inherited by the accepted socket and in
	 * force from the SYN-ACK on.  TCP_WINDOW_CLAMP alone is not enough:
	 * 6.12 resets the clamp from the receive buffer whenever its
	 * scaling ratio changes, and autotuning grows the buffer.  A fixed
	 * SO_RCVBUF of the same size (doubled by the kernel) bounds the
	 * window on both kernels and turns autotuning off.
	 */
	if (window) {
		ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVBUF,
					&window, sizeof(window)));
		ASSERT_EQ(0, setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP,
					&window, sizeof(window)));
	}
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)ss, *len));
	ASSERT_EQ(0, listen(fd, 1024));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)ss, len));
	return fd;
}

/*
 * A second network namespace, "tlpeer", behind a veth pair from this
 * one: 10.77.0.1 and fd77::1 here, 10.77.0.2 and fd77::2 there, with
 * @netem (a tc netem argument list) on this end's egress, the data's way.
 * Real veth, not lo: a path of 1500-byte packets through the receive
 * backlog, as between two machines' namespaces.
 */
#define PEER_NS		"tlpeer"

static void veth_path(struct __test_metadata *_metadata, const char *netem)
{
	char cmd[256];

	ASSERT_EQ(0, system("ip netns del " PEER_NS " 2>/dev/null; ip netns add " PEER_NS " && "
			    "ip link add tla type veth peer name tlb netns " PEER_NS " && "
			    "ip addr add 10.77.0.1/24 dev tla && "
			    "ip addr add fd77::1/64 dev tla nodad && ip link set tla up && "
			    "ip -n " PEER_NS " link set lo up && "
			    "ip -n " PEER_NS " addr add 10.77.0.2/24 dev tlb && "
			    "ip -n " PEER_NS " addr add fd77::2/64 dev tlb nodad && "
			    "ip -n " PEER_NS " link set tlb up"))
		TH_LOG("could not build the veth path");
	snprintf(cmd, sizeof(cmd), "tc qdisc replace dev tla root netem %s", netem);
	ASSERT_EQ(0, system(cmd)) TH_LOG("'%s' failed", cmd);
}

/* Run socket(2) in the namespace veth_path() made. */
static int peer_socket(struct __test_metadata *_metadata, int family)
{
	int self_ns, peer_ns, fd;

	self_ns = open("/proc/self/ns/net", O_RDONLY);
	peer_ns = open("/run/netns/" PEER_NS, O_RDONLY);
	ASSERT_LE(0, self_ns);
	ASSERT_LE(0, peer_ns);
	ASSERT_EQ(0, setns(peer_ns, CLONE_NEWNET));
	fd = socket(family, SOCK_STREAM, 0);
	ASSERT_EQ(0, setns(self_ns, CLONE_NEWNET));
	close(self_ns);
	close(peer_ns);
	return fd;
}

/* A listener on the peer's end of veth_path(), ephemeral port, in @ss. */
static int peer_listener(struct __test_metadata *_metadata, int family,
			 struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = peer_socket(_metadata, family), one = 1;

	ASSERT_LE(0, fd);
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		ASSERT_EQ(1, inet_pton(AF_INET, "10.77.0.2", &sin->sin_addr));
		*len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		ASSERT_EQ(1, inet_pton(AF_INET6, "fd77::2", &sin6->sin6_addr));
		*len = sizeof(*sin6);
	}
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)ss, *len));
	ASSERT_EQ(0, listen(fd, 16));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)ss, len));
	return fd;
}

/* A connected pair: *snd the client end, *rcv the accepted end. */
static void tl_pair(struct __test_metadata *_metadata, int family,
		    const struct pair_opts *o, int *snd, int *rcv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lfd, c, s;

	if (o->veth)
		lfd = peer_listener(_metadata, family, &ss, &len);
	else
		lfd = tl_listener(_metadata, family, o->rcv_window, &ss, &len);
	c = socket(family, SOCK_STREAM, 0);
	ASSERT_LE(0, c);
	ASSERT_EQ(0, connect(c, (struct sockaddr *)&ss, len));
	s = accept(lfd, NULL, NULL);
	ASSERT_LE(0, s);
	close(lfd);
	set_timeouts(c, TL_SOCK_TIMEOUT_MS);
	set_timeouts(s, TL_SOCK_TIMEOUT_MS);
	*snd = c;
	*rcv = s;
	if (!o->plain_snd)
		ASSERT_EQ(0, tl_attach(c)) {
			TH_LOG("attaching tltcp to the client: %s", strerror(errno));
		}
	if (!o->plain_rcv)
		ASSERT_EQ(0, tl_attach(s)) {
			TH_LOG("attaching tltcp to the accepted socket: %s", strerror(errno));
		}
}

/*
 * Shape lo to @bps bit/s with netem (both directions share it, ACKs
 * included).  lo's 64 KiB MTU would make every packet a quarter of a
 * second at 2 Mbit/s: a 1500-byte MTU and one segment per skb make the
 * queue move packet by packet.  Connections opened afterwards use it.
 */
static void shape_lo(struct __test_metadata *_metadata, unsigned int bps)
{
	char cmd[128];

	ASSERT_EQ(0, system("ip link set dev lo mtu 1500"));
	/* Best effort: older iproute2 cannot set it. */
	if (system("ip link set dev lo gso_max_segs 1 2>/dev/null"))
		TH_LOG("could not set lo's gso_max_segs (continuing)");
	snprintf(cmd, sizeof(cmd),
		 "tc qdisc replace dev lo root netem rate %ubit", bps);
	ASSERT_EQ(0, system(cmd)) {
		TH_LOG("'%s' failed (sch_netem missing?)", cmd);
	}
}

/* Sending */

/*
 * sendmsg() @n sections (@iov) with a control message of type @ctype (0:
 * none) carrying @ndl deadlines.  errno is that of sendmsg().
 */
static ssize_t tl_sendv(int fd, const struct iovec *iov, size_t n,
			const __u64 *dl, size_t ndl, int ctype, int flags)
{
	size_t clen = ctype ? CMSG_SPACE(ndl * sizeof(__u64)) : 0;
	struct msghdr msg = {
		.msg_iov = (struct iovec *)iov,
		.msg_iovlen = n,
	};
	struct cmsghdr *c;
	ssize_t ret;
	int err;

	if (clen) {
		msg.msg_control = calloc(1, clen);
		if (!msg.msg_control)
			return -1;
		msg.msg_controllen = clen;
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_TLTCP;
		c->cmsg_type = ctype;
		c->cmsg_len = CMSG_LEN(ndl * sizeof(__u64));
		memcpy(CMSG_DATA(c), dl, ndl * sizeof(__u64));
	}
	ret = sendmsg(fd, &msg, flags);
	err = errno;
	free(msg.msg_control);
	errno = err;
	return ret;
}

/* One section of @len bytes, numbered @s, relative deadline @dl. */
static ssize_t tl_send1(int fd, __u64 s, size_t len, __u64 dl, int flags)
{
	struct iovec iov = { .iov_len = len };
	ssize_t ret;
	int err;

	iov.iov_base = section_buf(s, len);
	if (!iov.iov_base)
		return -1;
	ret = tl_sendv(fd, &iov, 1, &dl, 1, TL_DEADLINE, flags | MSG_TL);
	err = errno;
	free(iov.iov_base);
	errno = err;
	return ret;
}

/* Wait until the module's queue of @fd is empty; 0 or -1 on timeout. */
static int wait_drained(int fd, unsigned int ms, struct tl_info *info)
{
	__u64 end = now_ns() + MSEC(ms);

	for (;;) {
		if (get_info(fd, info))
			return -1;
		if (!info->bytes_queued && !info->sections_queued)
			return 0;
		if (now_ns() > end)
			return -1;
		sleep_ms(5);
	}
}

/* Receiving */

struct rxmsg {
	ssize_t ret;
	int err;		/* errno when ret < 0 */
	int ncmsg;		/* control messages received */
	int type;		/* TL_DATA, TL_GAP, or -1: something else */
	int mflags;		/* msg_flags */
	struct tl_record r;
};

static void tl_recv(int fd, void *buf, size_t len, int flags,
		    struct rxmsg *m)
{
	union {
		char buf[4 * CMSG_SPACE(sizeof(struct tl_record))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf.buf,
		.msg_controllen = sizeof(cbuf.buf),
	};
	struct cmsghdr *c;

	memset(m, 0, sizeof(*m));
	m->ret = recvmsg(fd, &msg, flags);
	m->err = m->ret < 0 ? errno : 0;
	if (m->ret < 0)
		return;
	m->mflags = msg.msg_flags;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		m->ncmsg++;
		if (c->cmsg_level == SOL_TLTCP &&
		    (c->cmsg_type == TL_DATA || c->cmsg_type == TL_GAP) &&
		    c->cmsg_len == CMSG_LEN(sizeof(struct tl_record))) {
			m->type = c->cmsg_type;
			memcpy(&m->r, CMSG_DATA(c), sizeof(m->r));
		} else {
			m->type = -1;
		}
	}
}

/*
 * What a receiver reading with MSG_TL has seen, checked record by record
 * against the contract: records follow one another in the stream of
 * section bytes, sections are numbered from 0 and covered from offset 0
 * to their length, TL_REC_SECTION_END marks exactly their last record, a
 * gap runs to its section's end, gaps read as zeros and data as
 * pat(section, offset).
 */
struct rx {
	const __u64 *lens;	/* expected section lengths, or NULL */
	__u64 nsec;		/* entries of lens and of the arrays below */
	__u64 *sec_data;	/* per section: data bytes */
	__u64 *sec_gap;		/* per section: gap bytes */
	__u64 stream_off;	/* next record's expected position */
	__u64 section;
	__u64 sec_off;		/* 0: the next record begins a section */
	__u64 sec_len;
	bool in_gap;
	__u64 data, gap;	/* bytes */
	__u64 gaps;		/* sections with a gap */
	__u64 records;
	__u8 *buf;
	size_t bufsz;
};

static int rx_init(struct rx *rx, const __u64 *lens, __u64 nsec, size_t bufsz)
{
	memset(rx, 0, sizeof(*rx));
	rx->lens = lens;
	rx->nsec = nsec;
	rx->bufsz = bufsz;
	rx->buf = malloc(bufsz);
	if (nsec) {
		rx->sec_data = calloc(nsec, sizeof(__u64));
		rx->sec_gap = calloc(nsec, sizeof(__u64));
	}
	return rx->buf && (!nsec || (rx->sec_data && rx->sec_gap)) ? 0 : -1;
}

static void rx_free(struct rx *rx)
{
	free(rx->buf);
	free(rx->sec_data);
	free(rx->sec_gap);
}

/* A record and what was expected, for failure messages. */
static const char *rec_str(const struct rxmsg *m, const struct rx *rx)
{
	static char str[256];

	snprintf(str, sizeof(str),
		 "record: ret %zd type %d stream_off %llu section %llu sec_len %llu sec_off %u len %u flags %#x; expected stream_off %llu section %llu sec_off %llu",
		 m->ret, m->type, (unsigned long long)m->r.stream_off,
		 (unsigned long long)m->r.section,
		 (unsigned long long)m->r.sec_len, m->r.sec_off, m->r.len,
		 m->r.flags, (unsigned long long)rx->stream_off,
		 (unsigned long long)rx->section,
		 (unsigned long long)rx->sec_off);
	return str;
}

static void rx_check(struct __test_metadata *_metadata, struct rx *rx,
		     const struct rxmsg *m)
{
	const struct tl_record *r = &m->r;
	__u64 end, len = m->ret;
	long bad;

	ASSERT_EQ(1, m->ncmsg) TH_LOG("%d control messages, %s",
				      m->ncmsg, rec_str(m, rx));
	ASSERT_TRUE(m->type == TL_DATA || m->type == TL_GAP)
		TH_LOG("not a TL_DATA/TL_GAP record: %s", rec_str(m, rx));
	ASSERT_EQ(0, m->mflags & MSG_CTRUNC);
	ASSERT_EQ(len, r->len) TH_LOG("%s", rec_str(m, rx));
	ASSERT_EQ(rx->stream_off, r->stream_off) TH_LOG("%s", rec_str(m, rx));
	ASSERT_EQ(rx->section, r->section) TH_LOG("%s", rec_str(m, rx));
	ASSERT_EQ(rx->sec_off, r->sec_off) TH_LOG("%s", rec_str(m, rx));
	if (!rx->sec_off) {
		ASSERT_LT(0, r->sec_len) TH_LOG("%s", rec_str(m, rx));
		if (rx->lens) {
			ASSERT_LT(r->section, rx->nsec)
				TH_LOG("section beyond those sent: %s",
				       rec_str(m, rx));
			ASSERT_EQ(rx->lens[r->section], r->sec_len)
				TH_LOG("wrong sec_len: %s", rec_str(m, rx));
		}
		rx->sec_len = r->sec_len;
		rx->in_gap = false;
	} else {
		ASSERT_EQ(rx->sec_len, r->sec_len) TH_LOG("%s", rec_str(m, rx));
	}
	end = (__u64)r->sec_off + r->len;
	ASSERT_LE(end, r->sec_len)
		TH_LOG("record crosses its section's end: %s", rec_str(m, rx));
	ASSERT_EQ(end == r->sec_len ? TL_REC_SECTION_END : 0U, r->flags)
		TH_LOG("flags wrong: %s", rec_str(m, rx));
	if (m->type == TL_GAP) {
		bad = first_nonzero(rx->buf, len);
		ASSERT_EQ(-1, bad) TH_LOG("gap byte %ld not zero: %s", bad,
					  rec_str(m, rx));
		if (!rx->in_gap)
			rx->gaps++;
		rx->in_gap = true;
		rx->gap += len;
		if (rx->sec_gap && r->section < rx->nsec)
			rx->sec_gap[r->section] += len;
	} else {
		ASSERT_FALSE(rx->in_gap)
			TH_LOG("data after a gap in the same section: %s",
			       rec_str(m, rx));
		bad = mismatch(rx->buf, r->section, r->sec_off, len);
		ASSERT_EQ(-1, bad) TH_LOG("data byte %ld wrong: %s", bad,
					  rec_str(m, rx));
		rx->data += len;
		if (rx->sec_data && r->section < rx->nsec)
			rx->sec_data[r->section] += len;
	}
	rx->records++;
	rx->stream_off += len;
	rx->sec_off += len;
	if (end == r->sec_len) {
		rx->section++;
		rx->sec_off = 0;
		rx->in_gap = false;
	}
}

/*
 * One recvmsg(MSG_TL | @flags) of at most @len bytes, checked: returns the
 * bytes (a record was checked), 0 (EOF) or -errno.
 */
static ssize_t rx_one(struct __test_metadata *_metadata, struct rx *rx,
		      int fd, size_t len, int flags)
{
	struct rxmsg m;

	if (len > rx->bufsz)
		len = rx->bufsz;
	memset(rx->buf, 0xa5, len);
	tl_recv(fd, rx->buf, len, flags | MSG_TL, &m);
	if (m.ret < 0)
		return -m.err;
	if (m.ret == 0) {
		/* EOF carries no record. */
		ASSERT_EQ(0, m.ncmsg) TH_LOG("EOF with a control message");
		return 0;
	}
	rx_check(_metadata, rx, &m);
	return m.ret;
}

/* Read records until the current section ends; returns that section. */
static __u64 rx_section(struct __test_metadata *_metadata, struct rx *rx,
			int fd)
{
	__u64 s = rx->section;
	ssize_t ret;

	do {
		ret = rx_one(_metadata, rx, fd, rx->bufsz, 0);
		ASSERT_LT(0, ret) TH_LOG("recvmsg in section %llu: %s",
					 (unsigned long long)s,
					 ret ? strerror(-ret) : "EOF");
	} while (rx->section == s);
	return s;
}

/* Read to EOF; returns 0 or the -errno that ended it. */
static ssize_t rx_to_eof(struct __test_metadata *_metadata, struct rx *rx,
			 int fd, size_t len)
{
	ssize_t ret;

	do {
		ret = rx_one(_metadata, rx, fd, len, 0);
	} while (ret > 0);
	return ret;
}

/* Send one section numbered @s and receive it whole on @rfd. */
static void roundtrip(struct __test_metadata *_metadata, struct rx *rx,
		      int sfd, int rfd, __u64 s, size_t len)
{
	__u64 data = rx->data;

	ASSERT_EQ((ssize_t)len, tl_send1(sfd, s, len, dl_never(), 0))
		TH_LOG("sendmsg: %s", strerror(errno));
	ASSERT_EQ(s, rx->section);
	ASSERT_EQ(s, rx_section(_metadata, rx, rfd));
	ASSERT_EQ(data + len, rx->data) TH_LOG("section %llu not all data",
					       (unsigned long long)s);
}

/* Children: sending ends that run beside a receiving test process. */

struct job {
	int fd;
	int nsec;		/* sections to send (child_send) */
	const __u64 *lens;
	__u64 deadline;		/* relative, ns */
	__u32 seed;		/* random batches of up to 16; 0: one a call */
	bool shut;		/* shutdown(SHUT_WR) at the end */
	/* child_periodic */
	int nper;		/* sections sent one by one, every period */
	int nburst;		/* then sections sent in one call */
	__u64 len, period;
	__u64 sent[32];		/* out: bytes_sent of each periodic section */
	/* child_close */
	int sync_fd;
	int close_rc, close_err;
	__u64 close_ns;
	/* child_drain */
	__u64 data, gaps, bad;
	int rx_err;
	/* child_stream: j->len bytes */
	bool close_at_end;	/* close() at once, else shutdown(SHUT_WR) */
	__u64 written;
	int soft_errs;		/* write() failures it went past */
	int wr_err;		/* errno that stopped it */
};

static pid_t spawn(int (*fn)(struct job *), struct job *j)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(fn(j));
	}
	return pid;
}

static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

/*
 * Read @fd to EOF with MSG_TL, 64 KiB at a time, and expect the @nsec
 * sections of @lens, whole and in order, no gap; with a sender @pid
 * (> 0), expect it to exit 0.
 */
static void expect_delivered(struct __test_metadata *_metadata, int fd,
			     const __u64 *lens, int nsec, pid_t pid)
{
	__u64 total = 0;
	struct rx rx;
	ssize_t ret;
	int i;

	for (i = 0; i < nsec; i++)
		total += lens[i];
	ASSERT_EQ(0, rx_init(&rx, lens, nsec, 65536));
	ret = rx_to_eof(_metadata, &rx, fd, 65536);
	EXPECT_EQ(0, ret) TH_LOG("recvmsg after %llu bytes: %s",
				 (unsigned long long)rx.stream_off,
				 strerror(-ret));
	if (pid > 0)
		EXPECT_EQ(0, reap(pid));
	EXPECT_EQ((__u64)nsec, rx.section);
	EXPECT_EQ(total, rx.data);
	EXPECT_EQ(0, rx.gap);
	rx_free(&rx);
}

/* Send j->nsec sections with blocking sendmsg, in batches. */
static int child_send(struct job *j)
{
	__u32 rng = j->seed;
	int s = 0;

	while (s < j->nsec) {
		int n = j->seed ? 1 + rnd(&rng) % 16 : 1, i, rc = 0;
		struct iovec iov[16];
		__u64 dl[16];
		ssize_t ret, acc;

		if (n > j->nsec - s)
			n = j->nsec - s;
		for (i = 0; i < n; i++) {
			iov[i].iov_len = j->lens[s + i];
			iov[i].iov_base = section_buf(s + i, iov[i].iov_len);
			if (!iov[i].iov_base)
				return 10;
			dl[i] = j->deadline;
		}
		ret = tl_sendv(j->fd, iov, n, dl, n, TL_DEADLINE, MSG_TL);
		if (ret <= 0) {
			fprintf(stderr, "# sender: sendmsg of sections %d..%d returned %zd: %s\n",
				s, s + n - 1, ret, strerror(errno));
			rc = 1;
		}
		for (acc = 0, i = 0; i < n && acc < ret; i++)
			acc += iov[i].iov_len;
		if (!rc && acc != ret) {
			fprintf(stderr, "# sender: sendmsg returned %zd, not whole sections\n",
				ret);
			rc = 2;
		}
		for (n--; n >= 0; n--)
			free(iov[n].iov_base);
		if (rc)
			return rc;
		s += i;
	}
	if (j->shut && shutdown(j->fd, SHUT_WR)) {
		fprintf(stderr, "# sender: shutdown: %s\n", strerror(errno));
		return 3;
	}
	return 0;
}

/*
 * Start child_send on @fd: @nsec sections of @lens bytes, each living
 * @deadline ns, in random batches from @seed (0: one a call), then
 * shutdown(SHUT_WR).  Returns the child's pid, or -1.
 */
static pid_t spawn_send(int fd, const __u64 *lens, int nsec, __u64 deadline,
			__u32 seed)
{
	struct job *j = shared_alloc(sizeof(*j));

	if (!j)
		return -1;
	j->fd = fd;
	j->nsec = nsec;
	j->lens = lens;
	j->deadline = deadline;
	j->seed = seed;
	j->shut = true;
	return spawn(child_send, j);
}

/*
 * Send j->nper sections of j->len bytes one per j->period, each with a
 * relative deadline j->deadline, and record how many bytes of each the
 * module handed to TCP (bytes_sent once its deadline passed); then
 * j->nburst sections in one call; then drain and shutdown(SHUT_WR).
 */
static int child_periodic(struct job *j)
{
	int n = j->nper + j->nburst, k;
	struct iovec iov[32];
	struct tl_info info;
	__u64 dl[32], t0, prev = 0;
	ssize_t ret;

	if (n > 32)
		return 10;
	for (k = 0; k < n; k++) {
		iov[k].iov_len = j->len;
		iov[k].iov_base = section_buf(k, j->len);
		if (!iov[k].iov_base)
			return 10;
		dl[k] = j->deadline;
	}
	t0 = now_ns();
	for (k = 0; k < j->nper; k++) {
		sleep_until(t0 + k * j->period);
		ret = tl_sendv(j->fd, &iov[k], 1, dl, 1, TL_DEADLINE, MSG_TL);
		if (ret != (ssize_t)j->len) {
			fprintf(stderr, "# sender: section %d: sendmsg returned %zd (%s)\n",
				k, ret, strerror(errno));
			return 1;
		}
		sleep_until(t0 + k * j->period + j->deadline + MSEC(20));
		if (wait_drained(j->fd, 2000, &info)) {
			fprintf(stderr,
				"# sender: section %d still queued 2 s after its deadline\n",
				k);
			return 2;
		}
		j->sent[k] = info.bytes_sent - prev;
		prev = info.bytes_sent;
	}
	if (j->nburst) {
		sleep_until(t0 + j->nper * j->period);
		ret = tl_sendv(j->fd, &iov[j->nper], j->nburst, dl, j->nburst,
			       TL_DEADLINE, MSG_TL);
		if (ret != (ssize_t)(j->nburst * j->len)) {
			fprintf(stderr, "# sender: burst: sendmsg returned %zd (%s)\n",
				ret, strerror(errno));
			return 3;
		}
	}
	if (wait_drained(j->fd, 5000, &info)) {
		fprintf(stderr, "# sender: queue not drained\n");
		return 4;
	}
	if (shutdown(j->fd, SHUT_WR)) {
		fprintf(stderr, "# sender: shutdown: %s\n", strerror(errno));
		return 5;
	}
	return 0;
}

/* Wait for the parent's go, then close j->fd (the last reference). */
static int child_close(struct job *j)
{
	char c;
	__u64 t;

	if (read(j->sync_fd, &c, 1) != 1)
		return 1;
	t = now_ns();
	j->close_rc = close(j->fd);
	j->close_err = errno;
	j->close_ns = now_ns() - t;
	return 0;
}

/* Read j->fd with MSG_TL to EOF, counting data and checking contents. */
static int child_drain(struct job *j)
{
	size_t bufsz = 65536;
	__u8 *buf = malloc(bufsz);
	struct rxmsg m;

	if (!buf)
		return 10;
	for (;;) {
		tl_recv(j->fd, buf, bufsz, MSG_TL, &m);
		if (m.ret <= 0)
			break;
		if (m.type == TL_GAP) {
			j->gaps++;
			continue;
		}
		if (m.type != TL_DATA || m.r.len != m.ret ||
		    mismatch(buf, m.r.section, m.r.sec_off, m.ret) >= 0)
			j->bad++;
		j->data += m.ret;
	}
	j->rx_err = m.ret < 0 ? m.err : 0;
	free(buf);
	return 0;
}

/* The fixture */

FIXTURE(tltcp) {
	int snd;		/* client end, the sender in most tests */
	int rcv;		/* accepted end */
};

FIXTURE_VARIANT(tltcp) {
	int family;
	/*
	 * getsockopt() at an unknown level on a plain TCP socket: the IP
	 * layer answers, and IPv4 (do_ip_getsockopt) says EOPNOTSUPP where
	 * IPv6 says ENOPROTOOPT.  Kernel behaviour, not the module's.
	 */
	int plain_get_errno;
};

FIXTURE_VARIANT_ADD(tltcp, ipv4) {
	.family = AF_INET,
	.plain_get_errno = EOPNOTSUPP,
};

FIXTURE_VARIANT_ADD(tltcp, ipv6) {
	.family = AF_INET6,
	.plain_get_errno = ENOPROTOOPT,
};

static const struct pair_opts default_opts;

/* netdev's debug-kernel runs set KSFT_MACHINE_SLOW=yes (make check-debug
 * does): bounds on a rate or a time that only a fast machine meets are
 * logged there instead of checked.
 */
static bool machine_slow(void)
{
	const char *v = getenv("KSFT_MACHINE_SLOW");

	return v && !strcmp(v, "yes");
}

/* EXPECT_TIMED(COND, FMT, ...): a bound on a rate or a time.  Checked on
 * a normal machine; on a slow one a miss is logged as not counted.
 */
#define EXPECT_TIMED(cond, fmt, ...) do {				\
	if (!machine_slow()) {						\
		EXPECT_TRUE(cond) TH_LOG(fmt, ##__VA_ARGS__);		\
	} else if (!(cond)) {						\
		TH_LOG("not counted on a slow machine: " fmt,		\
		       ##__VA_ARGS__);					\
	}								\
} while (0)

FIXTURE_SETUP(tltcp)
{
	/*
	 * The 6.1 harness has no -t: TLTCP_ONLY="name name..." picks tests,
	 * TLTCP_FAMILY=4 or 6 one family's variants.
	 */
	const char *family = getenv("TLTCP_FAMILY");
	const char *only = getenv("TLTCP_ONLY");

	self->snd = -1;
	self->rcv = -1;
	if (only && !strstr(only, _metadata->name))
		SKIP(return, "not in TLTCP_ONLY");
	if (family && *family &&
	    atoi(family) != (variant->family == AF_INET ? 4 : 6))
		SKIP(return, "not in TLTCP_FAMILY");
	signal(SIGPIPE, SIG_IGN);
	if (system("modprobe tltcp 2>/dev/null"))
		SKIP(return, "the tltcp module is not available");
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, system("ip link set dev lo up"));
	tl_pair(_metadata, variant->family, &default_opts, &self->snd, &self->rcv);
}

FIXTURE_TEARDOWN(tltcp)
{
	if (self->snd >= 0)
		close(self->snd);
	if (self->rcv >= 0)
		close(self->rcv);
}

/* Replace the fixture's pair with one opened with @o. */
static void reopen(struct __test_metadata *_metadata,
		   FIXTURE_DATA(tltcp) *self, const FIXTURE_VARIANT(tltcp) *variant,
		   const struct pair_opts *o)
{
	close(self->snd);
	close(self->rcv);
	self->snd = -1;
	self->rcv = -1;
	tl_pair(_metadata, variant->family, o, &self->snd, &self->rcv);
}

/*
 * The 6.1 harness runs a test's body even when its setup skipped: every
 * test begins with this.
 */
#define SETUP_SKIPPED() do { if (_metadata->skip) return; } while (0)

#define TL_TEST(name) TEST_F_TIMEOUT(tltcp, name, TL_TEST_TIMEOUT)

/*
 * a. Generous deadlines: 200 sections of 1..100000 random bytes, sent in
 * random batches of 1..16 sections per sendmsg, read with MSG_TL into
 * buffers of random sizes.  Every byte arrives intact and in order, the
 * records give every section's number, length and offsets, the section
 * end is flagged exactly at the end, no gap appears, EOF follows the
 * sender's shutdown, and both ends' counters add up.
 */
TL_TEST(deliver_200_sections)
{
	const int nsec = 200;
	__u64 lens[200], total = 0;
	struct tl_info si, ri;
	__u32 rng = 0x7e57c0de;
	struct rx rx;
	ssize_t ret;
	pid_t pid;
	int i;

	SETUP_SKIPPED();
	for (i = 0; i < nsec; i++) {
		lens[i] = 1 + rnd(&rng) % 100000;
		total += lens[i];
	}
	pid = spawn_send(self->snd, lens, nsec, dl_never(), 0x5eed);
	ASSERT_LT(0, pid);

	ASSERT_EQ(0, rx_init(&rx, lens, nsec, 70000));
	set_timeouts(self->rcv, 20000);
	do {
		size_t len = rnd(&rng) % 10 ? 1 + rnd(&rng) % 70000 :
					      1 + rnd(&rng) % 100;

		ret = rx_one(_metadata, &rx, self->rcv, len, 0);
	} while (ret > 0);
	ASSERT_EQ(0, ret) TH_LOG("recvmsg after %llu bytes: %s",
				 (unsigned long long)rx.stream_off, strerror(-ret));
	ASSERT_EQ(0, reap(pid));

	ASSERT_EQ((__u64)nsec, rx.section) TH_LOG("EOF after %llu sections",
						  (unsigned long long)rx.section);
	ASSERT_EQ(0, rx.sec_off);
	ASSERT_EQ(total, rx.data);
	ASSERT_EQ(0, rx.gaps);
	ASSERT_EQ(0, rx.gap);

	ASSERT_EQ(0, get_info(self->snd, &si));
	EXPECT_EQ((__u64)nsec, si.sections_offered);
	EXPECT_EQ((__u64)nsec, si.sections_completed);
	EXPECT_EQ(0, si.sections_abandoned_unsent);
	EXPECT_EQ(0, si.sections_abandoned_partial);
	EXPECT_EQ(total, si.bytes_offered);
	EXPECT_EQ(total, si.bytes_sent);
	EXPECT_EQ(0, si.bytes_abandoned);
	EXPECT_EQ(0, si.bytes_queued);
	EXPECT_EQ(0, si.sections_queued);
	/* The sending end received nothing. */
	EXPECT_EQ(0, si.sections_received);
	EXPECT_EQ(0, si.bytes_received);

	ASSERT_EQ(0, get_info(self->rcv, &ri));
	EXPECT_EQ((__u64)nsec, ri.sections_received);
	EXPECT_EQ(total, ri.bytes_received);
	EXPECT_EQ(0, ri.gaps_received);
	EXPECT_EQ(0, ri.bytes_gap);
	/* The receiving end sent nothing. */
	EXPECT_EQ(0, ri.sections_offered);
	EXPECT_EQ(0, ri.bytes_offered);
	rx_free(&rx);
}

/*
 * Plain write()/read() next to MSG_TL, both ways: a write() is one section
 * with the default deadline (TL_DEFAULT_DEADLINE reads back what was set),
 * read() returns the data of MSG_TL sections, and the accepted end sends
 * its own sections, numbered from 0, to the client.
 */
TL_TEST(plain_io_and_default_deadline)
{
	struct iovec iov[2];
	__u64 dl[2] = { SEC(5), SEC(5) }, v;
	socklen_t len = sizeof(v);
	struct tl_info info;
	__u8 *buf, got[2500];
	size_t n = 0;
	struct rx rx, back;
	ssize_t ret;

	SETUP_SKIPPED();
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 1000));
	ASSERT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_DEFAULT_DEADLINE, &v, &len));
	ASSERT_EQ(sizeof(v), len);
	ASSERT_EQ(0, v) TH_LOG("default deadline is not 'none' by default");
	ASSERT_EQ(0, set_u64(self->snd, TL_DEFAULT_DEADLINE, SEC(5)));
	ASSERT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_DEFAULT_DEADLINE, &v, &len));
	ASSERT_EQ(SEC(5), v);

	/* write(): section 0, read in pieces of at most 1000 bytes */
	buf = section_buf(0, 3000);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(3000, write(self->snd, buf, 3000));
	free(buf);
	ASSERT_EQ(0, rx_section(_metadata, &rx, self->rcv));
	ASSERT_EQ(3000, rx.data);
	ASSERT_LE(3, rx.records);

	/* sections 1 and 2 in one sendmsg, read() gets their bytes only */
	iov[0].iov_len = 2000;
	iov[0].iov_base = section_buf(1, 2000);
	iov[1].iov_len = 500;
	iov[1].iov_base = section_buf(2, 500);
	ASSERT_EQ(2500, tl_sendv(self->snd, iov, 2, dl, 2, TL_DEADLINE, MSG_TL));
	while (n < sizeof(got)) {
		ret = read(self->rcv, got + n, sizeof(got) - n);
		ASSERT_LT(0, ret) TH_LOG("read after %zu bytes: %s", n,
					 ret ? strerror(errno) : "EOF");
		n += ret;
	}
	EXPECT_EQ(0, memcmp(got, iov[0].iov_base, 2000));
	EXPECT_EQ(0, memcmp(got + 2000, iov[1].iov_base, 500));
	free(iov[0].iov_base);
	free(iov[1].iov_base);

	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ(3, info.sections_offered);
	EXPECT_EQ(3, info.sections_completed);
	EXPECT_EQ(5500, info.bytes_offered);
	EXPECT_EQ(5500, info.bytes_sent);
	ASSERT_EQ(0, get_info(self->rcv, &info));
	EXPECT_EQ(3, info.sections_received);
	EXPECT_EQ(5500, info.bytes_received);

	/* The other way: the accepted end's own section 0. */
	ASSERT_EQ(0, rx_init(&back, NULL, 0, 65536));
	roundtrip(_metadata, &back, self->rcv, self->snd, 0, 7000);
	rx_free(&back);
	rx_free(&rx);
}

/*
 * b. Deadlines expire on a 2 Mbit/s link.  Sections 0-4 (100000 bytes,
 * 200 ms deadlines) go one every 300 ms, sections 5-9 in one call; the
 * link carries about 50 kB in 200 ms, so every section loses its end.
 * The receiver's window is about 8 KiB and TL_NOTSENT is 4096, so what
 * TCP holds beyond the deadline stays small.  Data and gap records
 * cover every section from 0 to its length, each gap runs to its
 * section's end, data is correct where it says it is, each periodic
 * section's data is exactly what the sender counted as sent for it, and
 * the counters of both ends agree with what was read.
 */
TL_TEST(deadline_expiry_gaps)
{
	const __u64 len = 100000, deadline = MSEC(200), rate = 2000000;
	const struct pair_opts o = { .rcv_window = 8192 };
	/* Bytes a section can get: the link's, the window, TL_NOTSENT, slack. */
	const __u64 most = rate / 8 * deadline / NSEC_PER_SEC + 8192 + 4096 + 16384;
	__u64 lens[10], completed = 0, unsent = 0, partial = 0, with_data = 0;
	struct tl_info si, ri;
	struct job *j;
	struct rx rx;
	ssize_t ret;
	pid_t pid;
	int k;

	SETUP_SKIPPED();
	shape_lo(_metadata, rate);
	reopen(_metadata, self, variant, &o);
	ASSERT_EQ(0, set_u32(self->snd, TL_NOTSENT, 4096));
	/* Sections larger than a fresh send buffer on this link. */
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 1 << 20));
	for (k = 0; k < 10; k++)
		lens[k] = len;

	j = shared_alloc(sizeof(*j));
	ASSERT_NE(NULL, j);
	j->fd = self->snd;
	j->nper = 5;
	j->nburst = 5;
	j->len = len;
	j->deadline = deadline;
	j->period = MSEC(300);
	pid = spawn(child_periodic, j);
	ASSERT_LT(0, pid);

	ASSERT_EQ(0, rx_init(&rx, lens, 10, 65536));
	ret = rx_to_eof(_metadata, &rx, self->rcv, 65536);
	ASSERT_EQ(0, ret) TH_LOG("recvmsg after %llu bytes: %s",
				 (unsigned long long)rx.stream_off, strerror(-ret));
	ASSERT_EQ(0, reap(pid));
	ASSERT_EQ(10, rx.section) TH_LOG("EOF in section %llu",
					 (unsigned long long)rx.section);
	ASSERT_EQ(0, rx.sec_off);
	ASSERT_EQ(10 * len, rx.data + rx.gap);
	ASSERT_LE(1, rx.gaps);

	for (k = 0; k < 10; k++) {
		TH_LOG("section %d: %llu data, %llu gap%s", k,
		       (unsigned long long)rx.sec_data[k],
		       (unsigned long long)rx.sec_gap[k],
		       k < 5 ? "" : " (burst)");
		if (rx.sec_data[k] == len)
			completed++;
		else if (!rx.sec_data[k])
			unsent++;
		else
			partial++;
		if (rx.sec_data[k])
			with_data++;
		/* the module stopped handing this section to TCP in time */
		EXPECT_GE(most, rx.sec_data[k]) TH_LOG("section %d", k);
		if (k < 5) {
			/* what reached the receiver is what was sent */
			EXPECT_EQ(j->sent[k], rx.sec_data[k]) TH_LOG("section %d", k);
			/* 2 Mbit/s cannot carry 100 kB in 200 ms */
			EXPECT_LT(0, rx.sec_gap[k]) TH_LOG("section %d has no gap", k);
		}
	}
	/* The first gap begins no earlier than the link allows. */
	EXPECT_LE(rate / 8 * deadline / NSEC_PER_SEC * 3 / 10, rx.sec_data[0]);
	/* The last burst sections never got a chance. */
	EXPECT_LE(3, unsent);

	ASSERT_EQ(0, get_info(self->snd, &si));
	EXPECT_EQ(10, si.sections_offered);
	EXPECT_EQ(10 * len, si.bytes_offered);
	EXPECT_EQ(0, si.bytes_queued);
	EXPECT_EQ(0, si.sections_queued);
	EXPECT_EQ(rx.data, si.bytes_sent);
	EXPECT_EQ(rx.gap, si.bytes_abandoned);
	EXPECT_EQ(si.bytes_offered, si.bytes_sent + si.bytes_abandoned);
	EXPECT_EQ(completed, si.sections_completed);
	EXPECT_EQ(unsent, si.sections_abandoned_unsent);
	EXPECT_EQ(partial, si.sections_abandoned_partial);
	/* consistent with the rate: well under 60 % of what was offered */
	EXPECT_GT(si.bytes_offered * 60 / 100, si.bytes_sent);

	ASSERT_EQ(0, get_info(self->rcv, &ri));
	EXPECT_EQ(rx.data, ri.bytes_received);
	EXPECT_EQ(rx.gap, ri.bytes_gap);
	EXPECT_EQ(rx.gaps, ri.gaps_received);
	EXPECT_LE(with_data, ri.sections_received);
	EXPECT_GE(10, ri.sections_received);
	rx_free(&rx);
}

/*
 * c. Without MSG_TL the receiver gets exactly the data pieces, gaps
 * skipped: six 60000-byte sections with 100 ms deadlines, one every
 * 250 ms on a 2 Mbit/s link, read with recv() to EOF, equal byte for byte
 * to the concatenation of each section's first bytes_sent bytes (the
 * sender's count for that section).
 */
TL_TEST(plain_read_skips_gaps)
{
	const __u64 len = 60000;
	const struct pair_opts o = { .rcv_window = 8192 };
	__u8 *got, *want;
	__u64 want_len = 0;
	struct tl_info si, ri;
	size_t n = 0;
	bool cut = false;
	struct job *j;
	ssize_t ret;
	pid_t pid;
	long bad;
	int k;

	SETUP_SKIPPED();
	shape_lo(_metadata, 2000000);
	reopen(_metadata, self, variant, &o);
	ASSERT_EQ(0, set_u32(self->snd, TL_NOTSENT, 4096));
	/*
	 * A section may be as large as the queue's limit, by default the
	 * send buffer, which TCP sizes at connect from the segment's memory
	 * footprint: enough for these 60,000 bytes on Debian's kernels, not
	 * on make check-debug's (EMSGSIZE there).  A limit of its own keeps
	 * the test about what it tests.
	 */
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 4 * len));

	j = shared_alloc(sizeof(*j));
	ASSERT_NE(NULL, j);
	j->fd = self->snd;
	j->nper = 6;
	j->len = len;
	j->deadline = MSEC(100);
	j->period = MSEC(250);
	pid = spawn(child_periodic, j);
	ASSERT_LT(0, pid);

	got = malloc(6 * len);
	want = malloc(6 * len);
	ASSERT_NE(NULL, got);
	ASSERT_NE(NULL, want);
	for (;;) {
		ret = recv(self->rcv, got + n, 6 * len - n, 0);
		if (ret <= 0)
			break;
		n += ret;
	}
	ASSERT_EQ(0, ret) TH_LOG("recv after %zu bytes: %s", n, strerror(errno));
	ASSERT_EQ(0, reap(pid));

	for (k = 0; k < 6; k++) {
		TH_LOG("section %d: %llu bytes sent", k,
		       (unsigned long long)j->sent[k]);
		ASSERT_GE(len, j->sent[k]);
		fill(want + want_len, k, 0, j->sent[k]);
		want_len += j->sent[k];
		if (j->sent[k] < len)
			cut = true;
	}
	/* otherwise this test would not test skipping gaps */
	ASSERT_TRUE(cut) TH_LOG("no section lost bytes to its deadline");
	ASSERT_EQ(want_len, n);
	for (bad = 0; bad < (long)n && got[bad] == want[bad]; bad++)
		;
	ASSERT_EQ((long)n, bad) TH_LOG("byte %ld differs", bad);

	ASSERT_EQ(0, get_info(self->snd, &si));
	EXPECT_EQ((__u64)n, si.bytes_sent);
	EXPECT_EQ(6 * len - n, si.bytes_abandoned);
	ASSERT_EQ(0, get_info(self->rcv, &ri));
	EXPECT_EQ((__u64)n, ri.bytes_received);
	EXPECT_EQ(6 * len - n, ri.bytes_gap);
	free(got);
	free(want);
}

/* sendmsg() with a raw control buffer. */
static ssize_t send_ctl(int fd, const struct iovec *iov, size_t n,
			void *ctl, size_t clen, int flags)
{
	struct msghdr msg = {
		.msg_iov = (struct iovec *)iov,
		.msg_iovlen = n,
		.msg_control = ctl,
		.msg_controllen = clen,
	};

	return sendmsg(fd, &msg, flags);
}

#define EXPECT_ERRNO(err, call) do {					\
	errno = 0;							\
	EXPECT_EQ(-1, (long)(call));					\
	EXPECT_EQ(err, errno) TH_LOG("%s: %s, expected %s", #call,	\
				     strerror(errno), strerror(err));	\
} while (0)

/*
 * d. Malformed deadline control messages: each refused with EINVAL, none
 * queues anything, and the socket then carries a section as usual.
 */
TL_TEST(bad_deadline_cmsgs)
{
	union {
		char buf[2 * CMSG_SPACE(2 * sizeof(__u64))];
		struct cmsghdr align;
	} u;
	__u8 *a = section_buf(0, 100), *b = section_buf(1, 100);
	struct iovec iov[2] = { { a, 100 }, { b, 100 } };
	__u64 dl[3] = { SEC(5), SEC(5), SEC(5) };
	struct msghdr msg = { .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct tl_info info;
	struct cmsghdr *c;
	struct rx rx;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	/* MSG_TL without a deadline control message */
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov, 1, NULL, 0, 0, MSG_TL));
	/* counts that do not match */
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov, 2, dl, 1, TL_DEADLINE, MSG_TL));
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov, 1, dl, 2, TL_DEADLINE, MSG_TL));
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov, 2, dl, 3, TL_DEADLINE_ABS, MSG_TL));
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov, 1, dl, 0, TL_DEADLINE, MSG_TL));
	/* a payload that is not a whole number of __u64 */
	memset(&u, 0, sizeof(u));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_TLTCP;
	c->cmsg_type = TL_DEADLINE;
	c->cmsg_len = CMSG_LEN(12);
	memcpy(CMSG_DATA(c), dl, 12);
	EXPECT_ERRNO(EINVAL, send_ctl(self->snd, iov, 1, u.buf, CMSG_SPACE(12), MSG_TL));
	/* zero deadlines, relative and absolute */
	dl[1] = 0;
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov, 2, dl, 2, TL_DEADLINE, MSG_TL));
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov, 2, dl, 2, TL_DEADLINE_ABS, MSG_TL));
	/* a relative deadline beyond TL_MAX_DEADLINE */
	dl[1] = TL_MAX_DEADLINE + 1;
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov, 2, dl, 2, TL_DEADLINE, MSG_TL));
	dl[1] = SEC(5);
	/* an unknown control message type at SOL_TLTCP */
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov, 1, dl, 1, 99, MSG_TL));
	/* two deadline control messages */
	memset(&u, 0, sizeof(u));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_TLTCP;
	c->cmsg_type = TL_DEADLINE;
	c->cmsg_len = CMSG_LEN(sizeof(__u64));
	memcpy(CMSG_DATA(c), dl, sizeof(__u64));
	c = CMSG_NXTHDR(&msg, c);
	ASSERT_NE(NULL, c);
	c->cmsg_level = SOL_TLTCP;
	c->cmsg_type = TL_DEADLINE;
	c->cmsg_len = CMSG_LEN(sizeof(__u64));
	memcpy(CMSG_DATA(c), dl, sizeof(__u64));
	EXPECT_ERRNO(EINVAL, send_ctl(self->snd, iov, 1, u.buf,
				      2 * CMSG_SPACE(sizeof(__u64)), MSG_TL));
	c->cmsg_type = TL_DEADLINE_ABS;
	EXPECT_ERRNO(EINVAL, send_ctl(self->snd, iov, 1, u.buf,
				      2 * CMSG_SPACE(sizeof(__u64)), MSG_TL));

	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ(0, info.sections_offered) TH_LOG("a refused call queued sections");
	EXPECT_EQ(0, info.bytes_offered);

	/* TL_MAX_DEADLINE itself is valid; the socket still works */
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	ASSERT_EQ(100, tl_send1(self->snd, 0, 100, TL_MAX_DEADLINE, 0))
		TH_LOG("deadline TL_MAX_DEADLINE: %s", strerror(errno));
	ASSERT_EQ(0, rx_section(_metadata, &rx, self->rcv));
	roundtrip(_metadata, &rx, self->snd, self->rcv, 1, 5000);
	EXPECT_EQ(0, rx.gap);
	free(a);
	free(b);
	rx_free(&rx);
}

/*
 * d. Malformed sections: a zero-length one is EINVAL, one of more than
 * TL_MAX_SECTION_LEN bytes EMSGSIZE, more than TL_MAX_SECTIONS of them
 * EMSGSIZE; none of these queues anything.  TL_MAX_SECTIONS one-byte
 * sections in one call are accepted and arrive as that many sections
 * (with deadlines that never pass: in a debug kernel under TCG the 567th
 * outlived 5 s, 2026-12-07).
 */
TL_TEST(bad_sections)
{
	const int max = TL_MAX_SECTIONS;
	const size_t big = (size_t)TL_MAX_SECTION_LEN + 1;
	struct iovec *iov = calloc(max + 1, sizeof(*iov));
	__u64 *dl = calloc(max + 1, sizeof(*dl));
	__u8 *a = section_buf(0, 100), *ones = malloc(max + 1);
	struct tl_info info;
	struct rx rx;
	void *huge;
	int i;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, iov);
	ASSERT_NE(NULL, dl);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, ones);
	for (i = 0; i <= max; i++)
		dl[i] = dl_never();

	/* a zero-length section, alone or between others */
	iov[0] = (struct iovec){ a, 100 };
	iov[1] = (struct iovec){ a, 0 };
	iov[2] = (struct iovec){ a, 100 };
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov + 1, 1, dl, 1, TL_DEADLINE, MSG_TL));
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, iov, 3, dl, 3, TL_DEADLINE, MSG_TL));

	/* a section one byte over TL_MAX_SECTION_LEN (never touched) */
	huge = mmap(NULL, big, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0);
	ASSERT_NE(MAP_FAILED, huge);
	iov[1] = (struct iovec){ huge, big };
	EXPECT_ERRNO(EMSGSIZE, tl_sendv(self->snd, iov + 1, 1, dl, 1, TL_DEADLINE, MSG_TL));
	EXPECT_ERRNO(EMSGSIZE, tl_sendv(self->snd, iov, 2, dl, 2, TL_DEADLINE, MSG_TL));
	munmap(huge, big);

	/* TL_MAX_SECTIONS + 1 sections */
	for (i = 0; i <= max; i++) {
		ones[i] = pat(i, 0);
		iov[i] = (struct iovec){ ones + i, 1 };
	}
	EXPECT_ERRNO(EMSGSIZE, tl_sendv(self->snd, iov, max + 1, dl, max + 1,
					TL_DEADLINE, MSG_TL));

	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ(0, info.sections_offered) TH_LOG("a refused call queued sections");

	/* TL_MAX_SECTIONS sections: sections 0..1023, one byte each */
	ASSERT_EQ(max, tl_sendv(self->snd, iov, max, dl, max, TL_DEADLINE, MSG_TL))
		TH_LOG("%d one-byte sections: %s", max, strerror(errno));
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 4096));
	for (i = 0; i < max; i++) {
		ASSERT_EQ((__u64)i, rx_section(_metadata, &rx, self->rcv));
		ASSERT_EQ((__u64)i + 1, rx.data);
	}
	ASSERT_EQ((__u64)max, rx.records) TH_LOG("one-byte sections came in pieces?");
	roundtrip(_metadata, &rx, self->snd, self->rcv, max, 3000);
	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ((__u64)max + 1, info.sections_offered);
	EXPECT_EQ((__u64)max + 1, info.sections_completed);
	free(iov);
	free(dl);
	free(a);
	free(ones);
	rx_free(&rx);
}

/*
 * d. MSG_OOB and MSG_ZEROCOPY are not for sections: EOPNOTSUPP, nothing
 * queued, the socket still works.
 */
TL_TEST(bad_send_flags)
{
	__u8 *a = section_buf(0, 100);
	struct iovec iov = { a, 100 };
	__u64 dl = SEC(5);
	struct tl_info info;
	int one = 1;
	struct rx rx;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, a);
	EXPECT_ERRNO(EOPNOTSUPP, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE,
					  MSG_TL | MSG_OOB));
	/* SO_ZEROCOPY on, so that TCP would honour the flag */
	setsockopt(self->snd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one));
	EXPECT_ERRNO(EOPNOTSUPP, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE,
					  MSG_TL | MSG_ZEROCOPY));
	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ(0, info.sections_offered);
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	roundtrip(_metadata, &rx, self->snd, self->rcv, 0, 2000);
	free(a);
	rx_free(&rx);
}

/*
 * d. An absolute deadline already past: the section is accepted, abandoned
 * at once (sections_abandoned_unsent) and reaches the receiver as one gap
 * over the whole section; a future absolute deadline delivers the next.
 */
TL_TEST(absolute_deadline_in_past)
{
	__u8 *a = section_buf(0, 5000);
	struct iovec iov = { a, 5000 };
	struct tl_info si, ri;
	__u64 dl;
	struct rx rx;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, a);
	dl = now_ns() - MSEC(1);
	ASSERT_EQ(5000, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE_ABS, MSG_TL))
		TH_LOG("past absolute deadline: %s", strerror(errno));
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	ASSERT_EQ(0, rx_section(_metadata, &rx, self->rcv));
	EXPECT_EQ(0, rx.data);
	EXPECT_EQ(5000, rx.gap);
	EXPECT_EQ(1, rx.gaps);

	fill(a, 1, 0, 5000);
	dl = now_ns() + SEC(5);
	ASSERT_EQ(5000, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE_ABS, MSG_TL));
	ASSERT_EQ(1, rx_section(_metadata, &rx, self->rcv));
	EXPECT_EQ(5000, rx.data);

	ASSERT_EQ(0, wait_drained(self->snd, 2000, &si));
	EXPECT_EQ(2, si.sections_offered);
	EXPECT_EQ(1, si.sections_abandoned_unsent);
	EXPECT_EQ(1, si.sections_completed);
	EXPECT_EQ(0, si.sections_abandoned_partial);
	EXPECT_EQ(5000, si.bytes_abandoned);
	EXPECT_EQ(5000, si.bytes_sent);
	ASSERT_EQ(0, get_info(self->rcv, &ri));
	EXPECT_EQ(1, ri.gaps_received);
	EXPECT_EQ(5000, ri.bytes_gap);
	EXPECT_EQ(5000, ri.bytes_received);
	free(a);
	rx_free(&rx);
}

/*
 * d. Socket options at SOL_TLTCP: defaults, ranges, lengths, unknown
 * names; TL_INFO with short, long and negative lengths.
 */
TL_TEST(sockopts)
{
	struct tl_info info;
	socklen_t len;
	__u32 v32;
	__u64 v64;
	__u8 small[8], more[sizeof(struct tl_info) + 16];
	int neg;
	struct rx rx;

	SETUP_SKIPPED();
	/* TL_DEFAULT_DEADLINE */
	EXPECT_EQ(0, set_u64(self->snd, TL_DEFAULT_DEADLINE, TL_MAX_DEADLINE));
	EXPECT_ERRNO(EINVAL, set_u64(self->snd, TL_DEFAULT_DEADLINE, TL_MAX_DEADLINE + 1));
	len = sizeof(v64);
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_DEFAULT_DEADLINE, &v64, &len));
	EXPECT_EQ(TL_MAX_DEADLINE, v64) TH_LOG("a refused value changed the option");
	EXPECT_EQ(0, set_u64(self->snd, TL_DEFAULT_DEADLINE, 0));
	v32 = 1000;
	EXPECT_ERRNO(EINVAL, setsockopt(self->snd, SOL_TLTCP, TL_DEFAULT_DEADLINE,
					&v32, sizeof(v32)));

	/* TL_SNDQ_LIMIT */
	len = sizeof(v32);
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_SNDQ_LIMIT, &v32, &len));
	EXPECT_EQ(sizeof(v32), len);
	EXPECT_EQ(0, v32) TH_LOG("TL_SNDQ_LIMIT is not 0 (SO_SNDBUF) by default");
	EXPECT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 65536));
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_SNDQ_LIMIT, &v32, &len));
	EXPECT_EQ(65536, v32);
	EXPECT_ERRNO(EINVAL, setsockopt(self->snd, SOL_TLTCP, TL_SNDQ_LIMIT, &v32, 2));
	v64 = 4096;
	EXPECT_ERRNO(EINVAL, setsockopt(self->snd, SOL_TLTCP, TL_SNDQ_LIMIT,
					&v64, sizeof(v64)));
	EXPECT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 0));

	/* TL_NOTSENT */
	len = sizeof(v32);
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_NOTSENT, &v32, &len));
	EXPECT_LE(TL_MIN_NOTSENT, v32);
	EXPECT_GE(TL_MAX_NOTSENT, v32);
	EXPECT_ERRNO(EINVAL, set_u32(self->snd, TL_NOTSENT, 0));
	EXPECT_ERRNO(EINVAL, set_u32(self->snd, TL_NOTSENT, TL_MIN_NOTSENT - 1));
	EXPECT_ERRNO(EINVAL, set_u32(self->snd, TL_NOTSENT, TL_MAX_NOTSENT + 1));
	EXPECT_EQ(0, set_u32(self->snd, TL_NOTSENT, TL_MIN_NOTSENT));
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_NOTSENT, &v32, &len));
	EXPECT_EQ(TL_MIN_NOTSENT, v32);
	EXPECT_EQ(0, set_u32(self->snd, TL_NOTSENT, TL_MAX_NOTSENT));
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_NOTSENT, &v32, &len));
	EXPECT_EQ(TL_MAX_NOTSENT, v32);

	/* unknown option names */
	EXPECT_ERRNO(ENOPROTOOPT, set_u32(self->snd, 99, 1));
	len = sizeof(v32);
	EXPECT_ERRNO(ENOPROTOOPT, getsockopt(self->snd, SOL_TLTCP, 99, &v32, &len));

	/* TL_INFO: a prefix, the whole, never more, never a negative length */
	len = sizeof(small);
	memset(small, 0xff, sizeof(small));
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_INFO, small, &len));
	EXPECT_EQ(sizeof(small), len);
	EXPECT_EQ(0, small[0]) TH_LOG("sections_offered of a new socket not 0");
	len = 0;
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_INFO, &info, &len));
	EXPECT_EQ(0, len);
	len = sizeof(more);
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_INFO, more, &len));
	EXPECT_EQ(sizeof(info), len);
	neg = -1;
	EXPECT_ERRNO(EINVAL, getsockopt(self->snd, SOL_TLTCP, TL_INFO, &info,
					(socklen_t *)&neg));

	/* and the socket still works */
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	roundtrip(_metadata, &rx, self->snd, self->rcv, 0, 2000);
	rx_free(&rx);
}

/* What the documentation promises, each statement tested. */

/*
 * An absolute deadline may lie at most TL_MAX_DEADLINE after the call:
 * one second more is EINVAL and queues nothing; one second less is taken
 * and the section delivered.
 */
TL_TEST(doc_abs_deadline_over_an_hour)
{
	__u8 *a = section_buf(0, 1000);
	struct iovec iov = { a, 1000 };
	struct tl_info info;
	struct rx rx;
	__u64 dl;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, a);
	dl = now_ns() + TL_MAX_DEADLINE + SEC(1);
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE_ABS, MSG_TL));
	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ(0, info.sections_offered) TH_LOG("a refused deadline queued a section");
	dl = now_ns() + TL_MAX_DEADLINE - SEC(1);
	ASSERT_EQ(1000, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE_ABS, MSG_TL))
		TH_LOG("an absolute deadline 1 s inside the hour: %s", strerror(errno));
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	ASSERT_EQ(0, rx_section(_metadata, &rx, self->rcv));
	EXPECT_EQ(1000, rx.data);
	EXPECT_EQ(0, rx.gap);
	free(a);
	rx_free(&rx);
}

/*
 * A deadline of 0 is EINVAL, absolute as well as relative: not "already
 * expired" and not the default deadline.  Any other past absolute time,
 * even 1 ns after boot, is taken and abandoned at once.
 */
TL_TEST(doc_abs_deadline_zero)
{
	__u8 *a = section_buf(0, 1000);
	struct iovec iov = { a, 1000 };
	struct tl_info info;
	struct rx rx;
	__u64 dl = 0;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, a);
	ASSERT_EQ(0, set_u64(self->snd, TL_DEFAULT_DEADLINE, SEC(5)));
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE_ABS, MSG_TL));
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE, MSG_TL));
	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ(0, info.sections_offered) TH_LOG("a zero deadline queued a section");
	dl = 1;
	ASSERT_EQ(1000, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE_ABS, MSG_TL))
		TH_LOG("absolute deadline 1: %s", strerror(errno));
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	ASSERT_EQ(0, rx_section(_metadata, &rx, self->rcv));
	EXPECT_EQ(0, rx.data);
	EXPECT_EQ(1000, rx.gap);
	ASSERT_EQ(0, wait_drained(self->snd, 2000, &info));
	EXPECT_EQ(1, info.sections_abandoned_unsent);
	free(a);
	rx_free(&rx);
}

/* Append a control message to @buf at @off; returns the next offset. */
static size_t ctl_put(char *buf, size_t off, int level, int type,
		      const void *data, size_t len)
{
	struct cmsghdr *c = (struct cmsghdr *)(buf + off);

	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), data, len);
	return off + CMSG_SPACE(len);
}

/*
 * Control messages are refused with MSG_TL and without: a sendmsg()
 * without MSG_TL that carries a deadline, a SOL_SOCKET (SO_TIMESTAMPING)
 * or an IP-level message is EINVAL, so is a MSG_TL call whose deadline
 * comes with a SOL_SOCKET message, and none queues anything.  Plain TCP
 * takes the same SO_TIMESTAMPING message; write() still works.
 */
TL_TEST(doc_cmsgs_without_msg_tl)
{
	union {
		char buf[2 * CMSG_SPACE(sizeof(__u64))];
		struct cmsghdr align;
	} u;
	__u32 ts = SOF_TIMESTAMPING_TX_SOFTWARE;
	__u8 *a = section_buf(0, 100);
	struct iovec iov = { a, 100 };
	struct tl_info info;
	__u64 dl = SEC(5);
	int ttl = 5, p1, p2;
	struct rx rx;
	size_t clen;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, a);
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE, 0));
	EXPECT_ERRNO(EINVAL, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE_ABS, 0));
	memset(&u, 0, sizeof(u));
	clen = ctl_put(u.buf, 0, SOL_SOCKET, SO_TIMESTAMPING, &ts, sizeof(ts));
	EXPECT_ERRNO(EINVAL, send_ctl(self->snd, &iov, 1, u.buf, clen, 0));
	memset(&u, 0, sizeof(u));
	clen = ctl_put(u.buf, 0, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
	EXPECT_ERRNO(EINVAL, send_ctl(self->snd, &iov, 1, u.buf, clen, 0));
	memset(&u, 0, sizeof(u));
	clen = ctl_put(u.buf, 0, SOL_TLTCP, TL_DEADLINE, &dl, sizeof(dl));
	clen = ctl_put(u.buf, clen, SOL_SOCKET, SO_TIMESTAMPING, &ts, sizeof(ts));
	EXPECT_ERRNO(EINVAL, send_ctl(self->snd, &iov, 1, u.buf, clen, MSG_TL));
	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ(0, info.sections_offered) TH_LOG("a refused call queued a section");

	/* without control messages, data flows */
	ASSERT_EQ(100, write(self->snd, a, 100));
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	ASSERT_EQ(0, rx_section(_metadata, &rx, self->rcv));
	EXPECT_EQ(100, rx.data);
	rx_free(&rx);

	/* plain TCP honours the SO_TIMESTAMPING message */
	tl_pair(_metadata, variant->family,
		&(struct pair_opts){ .plain_snd = true, .plain_rcv = true }, &p1, &p2);
	memset(&u, 0, sizeof(u));
	clen = ctl_put(u.buf, 0, SOL_SOCKET, SO_TIMESTAMPING, &ts, sizeof(ts));
	EXPECT_EQ(100, send_ctl(p1, &iov, 1, u.buf, clen, 0))
		TH_LOG("plain TCP: %s", strerror(errno));
	close(p1);
	close(p2);
	free(a);
}

/*
 * No socket inherits tltcp: a listener refuses it (ENOTCONN), so a socket
 * it accepts is plain TCP (SOL_TLTCP getsockopt fails) until it attaches
 * tltcp itself, and then it works.
 */
TL_TEST(doc_accepted_socket_not_attached)
{
	struct sockaddr_storage ss;
	socklen_t alen, len;
	struct tl_info info;
	int lfd, c, s;
	struct rx rx;

	SETUP_SKIPPED();
	lfd = tl_listener(_metadata, variant->family, 0, &ss, &alen);
	EXPECT_ERRNO(ENOTCONN, tl_attach(lfd));
	c = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_LE(0, c);
	ASSERT_EQ(0, connect(c, (struct sockaddr *)&ss, alen));
	s = accept(lfd, NULL, NULL);
	ASSERT_LE(0, s);
	close(lfd);
	set_timeouts(c, TL_SOCK_TIMEOUT_MS);
	set_timeouts(s, TL_SOCK_TIMEOUT_MS);
	len = sizeof(info);
	EXPECT_ERRNO(variant->plain_get_errno,
		     getsockopt(s, SOL_TLTCP, TL_INFO, &info, &len));
	ASSERT_EQ(0, tl_attach(c)) TH_LOG("client: %s", strerror(errno));
	ASSERT_EQ(0, tl_attach(s)) TH_LOG("accepted socket: %s", strerror(errno));
	ASSERT_EQ(0, get_info(s, &info));
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	roundtrip(_metadata, &rx, c, s, 0, 1000);
	rx_free(&rx);
	close(c);
	close(s);
}

/*
 * TL_SNDQ_LIMIT 0 means "follow SO_SNDBUF" and reads back as 0, not as
 * the SO_SNDBUF value in use.
 */
TL_TEST(doc_sndq_limit_zero_reads_zero)
{
	int sndbuf = 32768;
	socklen_t len;
	__u32 v;

	SETUP_SKIPPED();
	ASSERT_EQ(0, setsockopt(self->snd, SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf)));
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 65536));
	len = sizeof(v);
	ASSERT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_SNDQ_LIMIT, &v, &len));
	EXPECT_EQ(65536, v);
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 0));
	v = 1;
	len = sizeof(v);
	ASSERT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_SNDQ_LIMIT, &v, &len));
	EXPECT_EQ(sizeof(v), len);
	EXPECT_EQ(0, v) TH_LOG("TL_SNDQ_LIMIT 0 reads back as %u", v);
}

/*
 * Option errors.  A value out of range is EINVAL and changes nothing
 * (TL_DEFAULT_DEADLINE 0..TL_MAX_DEADLINE, TL_SNDQ_LIMIT
 * 0..TL_MAX_SNDQ_LIMIT, TL_NOTSENT TL_MIN_NOTSENT..TL_MAX_NOTSENT, bounds
 * included).  setsockopt() wants optlen exactly the option's size, else
 * EINVAL; getsockopt() a length at least that (TL_INFO: any, a prefix)
 * and sets it to the size.  An unknown name, and setting TL_INFO, is
 * ENOPROTOOPT; a bad address EFAULT.
 */
TL_TEST(doc_sockopt_errors)
{
	static const int u32_opts[] = { TL_SNDQ_LIMIT, TL_NOTSENT, TL_ARRIVAL };
	__u64 v64, big[2] = {};
	socklen_t len;
	__u32 v32 = 0;
	unsigned int i;

	SETUP_SKIPPED();
	/* TL_DEFAULT_DEADLINE */
	EXPECT_EQ(0, set_u64(self->snd, TL_DEFAULT_DEADLINE, 0));
	EXPECT_EQ(0, set_u64(self->snd, TL_DEFAULT_DEADLINE, TL_MAX_DEADLINE));
	EXPECT_ERRNO(EINVAL, set_u64(self->snd, TL_DEFAULT_DEADLINE, TL_MAX_DEADLINE + 1));
	EXPECT_ERRNO(EINVAL, set_u64(self->snd, TL_DEFAULT_DEADLINE, ~0ULL));
	len = sizeof(v64);
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_DEFAULT_DEADLINE, &v64, &len));
	EXPECT_EQ(TL_MAX_DEADLINE, v64);
	/* TL_SNDQ_LIMIT */
	EXPECT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, TL_MAX_SNDQ_LIMIT));
	EXPECT_ERRNO(EINVAL, set_u32(self->snd, TL_SNDQ_LIMIT, TL_MAX_SNDQ_LIMIT + 1));
	len = sizeof(v32);
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_SNDQ_LIMIT, &v32, &len));
	EXPECT_EQ(TL_MAX_SNDQ_LIMIT, v32);
	EXPECT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 0));
	/* TL_NOTSENT */
	EXPECT_EQ(0, set_u32(self->snd, TL_NOTSENT, 4096));
	EXPECT_ERRNO(EINVAL, set_u32(self->snd, TL_NOTSENT, 0));
	EXPECT_ERRNO(EINVAL, set_u32(self->snd, TL_NOTSENT, TL_MIN_NOTSENT - 1));
	EXPECT_ERRNO(EINVAL, set_u32(self->snd, TL_NOTSENT, TL_MAX_NOTSENT + 1));
	len = sizeof(v32);
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_NOTSENT, &v32, &len));
	EXPECT_EQ(4096, v32);

	/* lengths */
	v64 = SEC(1);
	EXPECT_ERRNO(EINVAL, setsockopt(self->snd, SOL_TLTCP, TL_DEFAULT_DEADLINE,
					&v64, sizeof(__u32)));
	EXPECT_ERRNO(EINVAL, setsockopt(self->snd, SOL_TLTCP, TL_DEFAULT_DEADLINE,
					big, sizeof(big)));
	len = sizeof(__u32);
	EXPECT_ERRNO(EINVAL, getsockopt(self->snd, SOL_TLTCP, TL_DEFAULT_DEADLINE,
					&v64, &len));
	for (i = 0; i < ARRAY_SIZE(u32_opts); i++) {
		int opt = u32_opts[i];

		v32 = 8192;
		EXPECT_ERRNO(EINVAL, setsockopt(self->snd, SOL_TLTCP, opt, &v32, 2));
		EXPECT_ERRNO(EINVAL, setsockopt(self->snd, SOL_TLTCP, opt, NULL, 0));
		EXPECT_ERRNO(EINVAL, setsockopt(self->snd, SOL_TLTCP, opt, big,
						sizeof(__u64)));
		len = 2;
		EXPECT_ERRNO(EINVAL, getsockopt(self->snd, SOL_TLTCP, opt, &v32, &len));
		len = sizeof(big);
		EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, opt, big, &len));
		EXPECT_EQ(sizeof(__u32), len) TH_LOG("option %d", opt);
	}

	/* unknown names; TL_INFO is read-only; bad addresses */
	EXPECT_ERRNO(ENOPROTOOPT, set_u32(self->snd, 0, 1));
	EXPECT_ERRNO(ENOPROTOOPT, set_u32(self->snd, TL_ARRIVAL + 1, 1));
	EXPECT_ERRNO(ENOPROTOOPT, set_u32(self->snd, TL_INFO, 1));
	len = sizeof(v32);
	EXPECT_ERRNO(ENOPROTOOPT, getsockopt(self->snd, SOL_TLTCP, 0, &v32, &len));
	EXPECT_ERRNO(ENOPROTOOPT, getsockopt(self->snd, SOL_TLTCP, TL_ARRIVAL + 1,
					     &v32, &len));
	EXPECT_ERRNO(EFAULT, setsockopt(self->snd, SOL_TLTCP, TL_NOTSENT, NULL,
					sizeof(__u32)));
	len = sizeof(v32);
	EXPECT_ERRNO(EFAULT, getsockopt(self->snd, SOL_TLTCP, TL_NOTSENT, NULL, &len));
}

#define WIRE_HDR_LEN	20
#define WIRE_HELLO	1
#define WIRE_DATA	2
#define WIRE_ABANDON	3
#define WIRE_MAGIC	0x544c5443	/* "TLTC" */

/* A record header as Documentation/tltcp.rst gives it (big-endian). */
static void wire_hdr(__u8 *p, __u8 type, __u32 len, __u32 sec, __u32 off,
		     __u32 slen)
{
	__u32 f[4] = { htonl(len), htonl(sec), htonl(off), htonl(slen) };

	p[0] = type;
	p[1] = 0;	/* flags */
	p[2] = 0;	/* resv */
	p[3] = 0;
	memcpy(p + 4, f, sizeof(f));
}

static const char *hex20(const __u8 *p)
{
	static char s[3 * WIRE_HDR_LEN + 1];
	int i;

	for (i = 0; i < WIRE_HDR_LEN; i++)
		snprintf(s + 3 * i, 4, "%02x ", p[i]);
	return s;
}

/*
 * The bytes a tltcp sender puts on the wire, read raw by a plain TCP
 * receiver: nothing until its first record, then the HELLO (type 1, len
 * 0, section "TLTC", sec_off 1, sec_len 0), a DATA record and its
 * payload, and the ABANDON record of a section abandoned whole.
 */
TL_TEST(doc_wire_format_sent)
{
	const struct pair_opts o = { .plain_rcv = true };
	__u8 want[WIRE_HDR_LEN], got[WIRE_HDR_LEN + 100];
	__u8 *a = section_buf(1, 50);
	struct pollfd pfd = { .events = POLLIN };
	struct iovec iov = { a, 50 };
	__u64 dl;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, a);
	reopen(_metadata, self, variant, &o);
	pfd.fd = self->rcv;
	EXPECT_EQ(0, poll(&pfd, 1, 200)) TH_LOG("bytes before the first record");

	ASSERT_EQ(100, tl_send1(self->snd, 0, 100, SEC(5), 0));
	ASSERT_EQ(WIRE_HDR_LEN, recv(self->rcv, got, WIRE_HDR_LEN, MSG_WAITALL));
	wire_hdr(want, WIRE_HELLO, 0, WIRE_MAGIC, 1, 0);
	EXPECT_EQ(0, memcmp(want, got, WIRE_HDR_LEN)) TH_LOG("HELLO: %s", hex20(got));
	ASSERT_EQ(WIRE_HDR_LEN + 100, recv(self->rcv, got, sizeof(got), MSG_WAITALL));
	wire_hdr(want, WIRE_DATA, 100, 0, 0, 100);
	EXPECT_EQ(0, memcmp(want, got, WIRE_HDR_LEN)) TH_LOG("DATA: %s", hex20(got));
	EXPECT_EQ(-1, mismatch(got + WIRE_HDR_LEN, 0, 0, 100));

	dl = now_ns() - MSEC(1);
	ASSERT_EQ(50, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE_ABS, MSG_TL));
	ASSERT_EQ(WIRE_HDR_LEN, recv(self->rcv, got, WIRE_HDR_LEN, MSG_WAITALL));
	wire_hdr(want, WIRE_ABANDON, 50, 1, 0, 50);
	EXPECT_EQ(0, memcmp(want, got, WIRE_HDR_LEN)) TH_LOG("ABANDON: %s", hex20(got));
	free(a);
}

/*
 * A third-party peer writing the documented records by hand: a HELLO;
 * section 0 (30 bytes) as DATA of 12 and of 8 bytes and an ABANDON of
 * the last 10; section 1 (5 bytes) as one DATA record.  The tltcp
 * receiver returns 20 data bytes, a 10-byte gap and 5 data bytes, then
 * EOF.  A HELLO with len 4 (and 4 bytes after it), or with version 2,
 * resets the connection: EPROTO.
 */
TL_TEST(doc_wire_format_received)
{
	const struct pair_opts o = { .plain_snd = true };
	const __u64 lens[2] = { 30, 5 };
	__u8 buf[5 * WIRE_HDR_LEN + 30], *p = buf;
	struct rxmsg m;
	struct rx rx;
	ssize_t ret;
	int i;

	SETUP_SKIPPED();
	reopen(_metadata, self, variant, &o);
	wire_hdr(p, WIRE_HELLO, 0, WIRE_MAGIC, 1, 0);
	p += WIRE_HDR_LEN;
	wire_hdr(p, WIRE_DATA, 12, 0, 0, 30);
	fill(p + WIRE_HDR_LEN, 0, 0, 12);
	p += WIRE_HDR_LEN + 12;
	wire_hdr(p, WIRE_DATA, 8, 0, 12, 30);
	fill(p + WIRE_HDR_LEN, 0, 12, 8);
	p += WIRE_HDR_LEN + 8;
	wire_hdr(p, WIRE_ABANDON, 10, 0, 20, 30);
	p += WIRE_HDR_LEN;
	wire_hdr(p, WIRE_DATA, 5, 1, 0, 5);
	fill(p + WIRE_HDR_LEN, 1, 0, 5);
	p += WIRE_HDR_LEN + 5;
	ASSERT_EQ(p - buf, write(self->snd, buf, p - buf));
	ASSERT_EQ(0, shutdown(self->snd, SHUT_WR));
	ASSERT_EQ(0, rx_init(&rx, lens, 2, 65536));
	ret = rx_to_eof(_metadata, &rx, self->rcv, 65536);
	EXPECT_EQ(0, ret) TH_LOG("recvmsg: %s", strerror(-ret));
	EXPECT_EQ(2, rx.section);
	EXPECT_EQ(25, rx.data);
	EXPECT_EQ(10, rx.gap);
	rx_free(&rx);

	for (i = 0; i < 2; i++) {
		reopen(_metadata, self, variant, &o);
		memset(buf, 0, sizeof(buf));
		wire_hdr(buf, WIRE_HELLO, i ? 0 : 4, WIRE_MAGIC, i ? 2 : 1, 0);
		ASSERT_EQ(WIRE_HDR_LEN + 4, write(self->snd, buf, WIRE_HDR_LEN + 4));
		tl_recv(self->rcv, buf, sizeof(buf), MSG_TL, &m);
		EXPECT_EQ(-1, m.ret);
		EXPECT_EQ(EPROTO, m.err) TH_LOG("HELLO with %s: %s",
						i ? "version 2" : "len 4", strerror(m.err));
	}
}

/* /proc/net/tltcp_stat, in the order the module prints it. */
enum {
	ST_CURR_SOCKETS, ST_SOCKETS, ST_OFFERED, ST_COMPLETED, ST_ABANDONED,
	ST_BYTES_ABANDONED, ST_OBSOLETE_LATE, ST_OBSOLETE_RETRANS,
	ST_RECEIVED, ST_GAPS, ST_BYTES_GAP, ST_FRAMING_ERRORS, ST_MAX
};

static const char stat_names[ST_MAX][32] = {
	"TltcpCurrSockets", "TltcpSockets", "TltcpSectionsOffered",
	"TltcpSectionsCompleted", "TltcpSectionsAbandoned",
	"TltcpBytesAbandoned", "TltcpBytesObsoleteLate",
	"TltcpBytesObsoleteRetrans", "TltcpSectionsReceived",
	"TltcpGapsReceived", "TltcpBytesGap", "TltcpFramingErrors",
};

/* The calling thread's namespace's counters; the number of lines read
 * in the expected order (ST_MAX when the file is as documented).
 */
static int stat_read(unsigned long long v[ST_MAX])
{
	FILE *f = fopen("/proc/net/tltcp_stat", "r");
	char name[64];
	int n = 0;

	if (!f)
		return -1;
	while (n < ST_MAX && fscanf(f, "%63s %llu", name, &v[n]) == 2 &&
	       !strcmp(name, stat_names[n]))
		n++;
	if (fscanf(f, "%63s", name) == 1)
		n = -2;		/* more than documented */
	fclose(f);
	return n;
}

static void stat_expect(struct __test_metadata *_metadata,
			const unsigned long long want[ST_MAX], const char *when)
{
	unsigned long long got[ST_MAX];
	int i;

	ASSERT_EQ(ST_MAX, stat_read(got)) TH_LOG("%s: /proc/net/tltcp_stat", when);
	for (i = 0; i < ST_MAX; i++)
		EXPECT_EQ(want[i], got[i]) TH_LOG("%s: %s", when, stat_names[i]);
}

#define TRACE_INST	"/sys/kernel/tracing/instances/tltcp_selftest"

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* What an event of tracepoint @ev printed, the first line that has all
 * of @want's words; NULL if none.  Free it.
 */
static char *trace_find(const char *ev, const char *const want[], int n)
{
	FILE *f = fopen(TRACE_INST "/trace", "r");
	char line[1024];
	int i;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, ev))
			continue;
		for (i = 0; i < n && strstr(line, want[i]); i++)
			;
		if (i == n) {
			fclose(f);
			return strdup(line);
		}
	}
	fclose(f);
	return NULL;
}

static unsigned int local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	return ntohs(ss.ss_family == AF_INET ?
		     ((struct sockaddr_in *)&ss)->sin_port :
		     ((struct sockaddr_in6 *)&ss)->sin6_port);
}

/*
 * The namespace's counters (/proc/net/tltcp_stat) and the tracepoints
 * tltcp:tltcp_section_abandoned and tltcp:tltcp_gap.  The fixture's fresh
 * namespace holds its two sockets; one section abandoned whole (5000
 * bytes) and one completed give exact counts; a second fresh namespace
 * sees zeros; a peer that breaks the framing counts once.  Each event
 * appears once with the family, the addresses and the sockets' ports.
 * ss -tie shows tcp-ulp-tltcp on both ends.
 */
TL_TEST(proc_stat_and_tracepoints)
{
	unsigned long long want[ST_MAX] = {
		[ST_CURR_SOCKETS] = 2, [ST_SOCKETS] = 2,
	};
	const struct pair_opts plain_snd = { .plain_snd = true };
	bool v6 = variant->family == AF_INET6;
	char ev_ports[64], gap_ports[64];
	const char *ab_want[] = {
		v6 ? "family=AF_INET6 " : "family=AF_INET ", ev_ports,
		v6 ? "saddrv6=::1 daddrv6=::1" : "saddr=127.0.0.1 daddr=127.0.0.1",
		"section=0 len=5000 sent=0 abandoned=5000 ",
	};
	const char *gap_want[] = {
		ab_want[0], gap_ports, ab_want[2],
		"section=0 sec_off=0 sec_len=5000 len=5000 stream_off=0",
	};
	__u8 *a = section_buf(0, 5000), buf[WIRE_HDR_LEN + 4] = {};
	struct iovec iov = { a, 5000 };
	struct tl_info si;
	struct rxmsg m;
	struct rx rx;
	int status;
	char *line;
	pid_t pid;
	__u64 dl;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, a);
	stat_expect(_metadata, want, "after the pair attached");
	/* As root, ss names the ULP of both ends (INET_DIAG_ULP_INFO). */
	EXPECT_EQ(0, system("test \"$(ss -Htie state established | grep -c 'tcp-ulp-tltcp')\" = 2"))
		TH_LOG("ss -tie does not show tcp-ulp-tltcp on both ends");

	rmdir(TRACE_INST);
	ASSERT_EQ(0, mkdir(TRACE_INST, 0755)) TH_LOG("tracefs: %s", strerror(errno));
	ASSERT_EQ(0, write_str(TRACE_INST "/events/tltcp/enable", "1"));
	snprintf(ev_ports, sizeof(ev_ports), "sport=%u dport=%u ",
		 local_port(self->snd), local_port(self->rcv));
	snprintf(gap_ports, sizeof(gap_ports), "sport=%u dport=%u ",
		 local_port(self->rcv), local_port(self->snd));

	dl = now_ns() - MSEC(1);
	ASSERT_EQ(5000, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE_ABS, MSG_TL));
	fill(a, 1, 0, 5000);
	dl = now_ns() + SEC(5);
	ASSERT_EQ(5000, tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE_ABS, MSG_TL));
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	ASSERT_EQ(0, rx_section(_metadata, &rx, self->rcv));
	ASSERT_EQ(1, rx_section(_metadata, &rx, self->rcv));
	ASSERT_EQ(0, wait_drained(self->snd, 2000, &si));
	write_str(TRACE_INST "/events/tltcp/enable", "0");
	want[ST_OFFERED] = 2;
	want[ST_COMPLETED] = 1;
	want[ST_ABANDONED] = 1;
	want[ST_BYTES_ABANDONED] = 5000;
	want[ST_RECEIVED] = 2;
	want[ST_GAPS] = 1;
	want[ST_BYTES_GAP] = 5000;
	stat_expect(_metadata, want, "after the exchange");

	line = trace_find("tltcp_section_abandoned:", ab_want, 4);
	EXPECT_NE(NULL, line) TH_LOG("no tltcp_section_abandoned with %s%s", ev_ports, ab_want[3]);
	free(line);
	line = trace_find("tltcp_gap:", gap_want, 4);
	EXPECT_NE(NULL, line) TH_LOG("no tltcp_gap with %s%s", gap_ports, gap_want[3]);
	free(line);
	rmdir(TRACE_INST);

	/* Another namespace has its own counters, all zero. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		unsigned long long got[ST_MAX];
		int i;

		if (unshare(CLONE_NEWNET) || stat_read(got) != ST_MAX)
			_exit(2);
		for (i = 0; i < ST_MAX; i++)
			if (got[i])
				_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("a new namespace's counters are not all 0 (2: unreadable)");

	/* Closing gives the sockets back; a HELLO of version 2 breaks the
	 * framing: one error, the receiving socket still attached.
	 */
	reopen(_metadata, self, variant, &plain_snd);
	wire_hdr(buf, WIRE_HELLO, 0, WIRE_MAGIC, 2, 0);
	ASSERT_EQ(WIRE_HDR_LEN, write(self->snd, buf, WIRE_HDR_LEN));
	tl_recv(self->rcv, buf, sizeof(buf), MSG_TL, &m);
	EXPECT_EQ(EPROTO, m.err);
	want[ST_CURR_SOCKETS] = 1;
	want[ST_SOCKETS] = 3;
	want[ST_FRAMING_ERRORS] = 1;
	stat_expect(_metadata, want, "after a broken HELLO");
	rx_free(&rx);
	free(a);
}

static volatile sig_atomic_t sigpipes;

static void count_sigpipe(int sig)
{
	sigpipes++;
}

/* Wait until the peer's reset has closed @fd. */
static void reset_by_peer(struct __test_metadata *_metadata,
			  FIXTURE_DATA(tltcp) *self)
{
	const struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	__u64 t_end = now_ns() + SEC(10);
	int st;

	ASSERT_EQ(0, setsockopt(self->rcv, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	ASSERT_EQ(0, close(self->rcv));
	self->rcv = -1;
	while ((st = tcp_state(self->snd)) != TCP_STATE_CLOSE && now_ns() < t_end)
		sleep_ms(10);
	ASSERT_EQ(TCP_STATE_CLOSE, st) TH_LOG("the reset never arrived");
}

/*
 * The EPIPE row.  After shutdown(SHUT_WR), sendmsg() and write() are
 * EPIPE with SIGPIPE (none with MSG_NOSIGNAL).  After a reset a call with
 * bad arguments is still EINVAL; the first call past them fails with the
 * socket's error, ECONNRESET, without SIGPIPE, and takes it as reading
 * SO_ERROR would (SO_ERROR then reads 0); the calls after it are EPIPE
 * with SIGPIPE.
 */
TL_TEST(doc_epipe_or_socket_error)
{
	struct sigaction sa = { .sa_handler = count_sigpipe };
	__u8 *a = section_buf(0, 100);
	socklen_t len = sizeof(int);
	int err = -1;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, a);
	ASSERT_EQ(0, sigaction(SIGPIPE, &sa, NULL));
	sigpipes = 0;
	ASSERT_EQ(0, shutdown(self->snd, SHUT_WR));
	EXPECT_ERRNO(EPIPE, tl_send1(self->snd, 0, 100, SEC(5), MSG_NOSIGNAL));
	EXPECT_EQ(0, sigpipes);
	EXPECT_ERRNO(EPIPE, tl_send1(self->snd, 0, 100, SEC(5), 0));
	EXPECT_EQ(1, sigpipes);
	EXPECT_ERRNO(EPIPE, write(self->snd, a, 100));
	EXPECT_EQ(2, sigpipes);

	reopen(_metadata, self, variant, &default_opts);
	reset_by_peer(_metadata, self);
	sigpipes = 0;
	/* arguments first: a bad call does not take the error */
	EXPECT_ERRNO(EINVAL, tl_send1(self->snd, 0, 100, 0, 0));
	EXPECT_ERRNO(ECONNRESET, tl_send1(self->snd, 0, 100, SEC(5), 0));
	EXPECT_EQ(0, sigpipes);
	EXPECT_EQ(0, getsockopt(self->snd, SOL_SOCKET, SO_ERROR, &err, &len));
	EXPECT_EQ(0, err) TH_LOG("SO_ERROR after the failed call: %s", strerror(err));
	EXPECT_ERRNO(EPIPE, tl_send1(self->snd, 0, 100, SEC(5), 0));
	EXPECT_EQ(1, sigpipes);
	EXPECT_ERRNO(EPIPE, write(self->snd, a, 100));
	EXPECT_EQ(2, sigpipes);
	signal(SIGPIPE, SIG_IGN);
	free(a);
}

/* A sendmsg() of one section in a thread of its own. */
struct blocked_send {
	int fd;
	__u64 s;		/* section number (its contents) */
	size_t len;
	ssize_t ret;
	int err;
	__u64 end_ns;
	int done;
};

static void *blocked_send_fn(void *arg)
{
	struct blocked_send *b = arg;

	b->ret = tl_send1(b->fd, b->s, b->len, dl_never(), MSG_NOSIGNAL);
	b->err = errno;
	b->end_ns = now_ns();
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Queue sections of @len on @fd until it stays unwritable for 300 ms. */
static int fill_until_stalled(struct __test_metadata *_metadata, int fd,
			      size_t len)
{
	__u64 t_end = now_ns() + SEC(20);
	struct pollfd pfd;
	int n = 0;

	do {
		while (tl_send1(fd, n, len, dl_never(), MSG_DONTWAIT) == (ssize_t)len)
			n++;
		EXPECT_EQ(EAGAIN, errno) TH_LOG("sendmsg: %s", strerror(errno));
		if (now_ns() > t_end || errno != EAGAIN)
			return -1;
		pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	} while (poll(&pfd, 1, 300) != 0);
	return n;
}

/*
 * A sender blocked for room (queue full, the peer not reading) returns
 * EPIPE as soon as another thread calls shutdown(SHUT_WR): within a
 * second, not at SO_SNDTIMEO (TL_SOCK_TIMEOUT_MS).  The sections queued
 * before still arrive whole, then EOF.
 */
TL_TEST(doc_shutdown_wakes_blocked_sender)
{
	const struct pair_opts o = { .rcv_window = 16384 };
	struct blocked_send b = { .len = 16384 };
	struct tl_info info;
	int queued;
	struct rx rx;
	pthread_t th;
	ssize_t ret;
	__u64 t;

	SETUP_SKIPPED();
	reopen(_metadata, self, variant, &o);
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 65536));
	ASSERT_EQ(0, set_u32(self->snd, TL_NOTSENT, 4096));
	queued = fill_until_stalled(_metadata, self->snd, b.len);
	ASSERT_LT(0, queued) TH_LOG("the queue never stayed full");

	b.fd = self->snd;
	b.s = queued;
	ASSERT_EQ(0, pthread_create(&th, NULL, blocked_send_fn, &b));
	sleep_ms(300);
	EXPECT_FALSE(__atomic_load_n(&b.done, __ATOMIC_ACQUIRE))
		TH_LOG("sendmsg did not block: %zd (%s)", b.ret, strerror(b.err));
	t = now_ns();
	ASSERT_EQ(0, shutdown(self->snd, SHUT_WR));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(-1, b.ret);
	EXPECT_EQ(EPIPE, b.err) TH_LOG("the blocked sendmsg: %s", strerror(b.err));
	EXPECT_GT(t + SEC(1), b.end_ns)
		TH_LOG("it returned %llu ms after shutdown()",
		       (unsigned long long)((b.end_ns - t) / NSEC_PER_MSEC));

	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	set_timeouts(self->rcv, 20000);
	ret = rx_to_eof(_metadata, &rx, self->rcv, 65536);
	EXPECT_EQ(0, ret) TH_LOG("recvmsg: %s", strerror(-ret));
	EXPECT_EQ((__u64)queued, rx.section);
	EXPECT_EQ(queued * b.len, rx.data);
	EXPECT_EQ(0, rx.gap);
	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ((__u64)queued, info.sections_offered);
	rx_free(&rx);
}

struct lock_hammer {
	int fd;
	int stop;
	long calls;
};

static void *lock_hammer_fn(void *arg)
{
	struct lock_hammer *h = arg;
	int one = 1;

	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		h->calls++;
	}
	return NULL;
}

/*
 * TCP defers its TCP Small Queues handler (and its write timer) while a
 * thread owns the socket, to release_sock(), whose tcp_release_cb() runs
 * it in that thread but under the socket's spinlock with BH disabled.
 * When the handler sends data it calls write_space, and the module
 * refills TCP from its queue: that refill must not sleep.  In a kernel
 * with DEBUG_ATOMIC_SLEEP (make check-debug) it once logged "sleeping
 * function called from invalid context" in tcp_sendmsg_locked(), found
 * by the UAPI fuzzer (through a deferred zero-window probe).  Here a
 * child sends sections across a 20 Mbit/s, 2 ms netem path on lo (netem
 * holds the packets, so TSQ throttles the flow and frees it from
 * softirq), two threads keep the sending socket owned with setsockopt(),
 * and every byte must arrive.  It did not reproduce the report with the
 * module from before the fix (one run in the debug kernel, 2026-11-26):
 * the fuzzer, which found it, stays its regression test in make
 * check-debug; this one checks the stream under that contention.
 */
TL_TEST(tx_refill_from_release_cb)
{
	const int nsec = 200;
	struct lock_hammer h[2] = {};
	__u64 lens[200];
	pthread_t th[2];
	pid_t pid;
	int i;

	SETUP_SKIPPED();
	for (i = 0; i < nsec; i++)
		lens[i] = 32768;
	shape_lo(_metadata, 20000000);
	ASSERT_EQ(0, system("tc qdisc change dev lo root netem rate 20000000bit delay 2ms"));
	reopen(_metadata, self, variant, &default_opts);
	set_timeouts(self->rcv, 20000);
	set_timeouts(self->snd, 20000);
	pid = spawn_send(self->snd, lens, nsec, dl_never(), 0);
	ASSERT_LT(0, pid);
	for (i = 0; i < 2; i++) {
		h[i].fd = self->snd;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, lock_hammer_fn, &h[i]));
	}

	expect_delivered(_metadata, self->rcv, lens, nsec, pid);
	for (i = 0; i < 2; i++) {
		__atomic_store_n(&h[i].stop, 1, __ATOMIC_RELEASE);
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	}
	TH_LOG("%ld and %ld setsockopt calls", h[0].calls, h[1].calls);
}

/*
 * TCP calls write_space from inside its transmit loop too
 * (tcp_event_new_data_sent()), and then still reads the skb it has just
 * sent.  The module used to refill TCP there, in the owner's context, when
 * release_sock() ran the backlog: tcp_sendmsg_locked() may run the
 * backlog again (after 16 new skbs in one call), and the ACKs in it freed
 * that skb.  make check-debug's KASAN reported the use-after-free in
 * tcp_write_xmit() (6.12 debug kernel, 2026-11-29, in this program's run;
 * which test was not logged).  Here the conditions it needs, made
 * likely: a fast veth path (ACKs back within microseconds), segmentation
 * offloads off on the sender's side (TCP's size goal is one MSS, so a
 * 32 KiB page run is more than 16 skbs), records of 64 KiB (TL_NOTSENT),
 * and a sender that owns its socket most of the time, queueing sections
 * in calls of up to sixteen.  Every byte must arrive in order; a kernel
 * with KASAN also fails the run on its report.  It did not reproduce the
 * report with the module from before the fix (eight runs in the debug
 * kernel, 2026-11-29): make check-debug's whole tltcp_test, which found
 * it, stays its regression test; this one checks the stream on that path.
 */
TL_TEST(tx_refill_from_backlog)
{
	const struct pair_opts o = { .veth = true };
	const int nsec = 512;
	__u64 lens[512];
	pid_t pid;
	int i;

	SETUP_SKIPPED();
	for (i = 0; i < nsec; i++)
		lens[i] = 32768;
	veth_path(_metadata, "limit 10000");
	ASSERT_EQ(0, system("ethtool -K tla gso off tso off >/dev/null"));
	reopen(_metadata, self, variant, &o);
	/* records of 64 KiB, not a slow guest's millisecond of sending */
	ASSERT_EQ(0, set_u32(self->snd, TL_NOTSENT, 1 << 20));
	set_timeouts(self->rcv, 20000);
	set_timeouts(self->snd, 20000);
	pid = spawn_send(self->snd, lens, nsec, dl_never(), 0x5eed);
	ASSERT_LT(0, pid);

	expect_delivered(_metadata, self->rcv, lens, nsec, pid);
	EXPECT_EQ(0, system("ip netns del " PEER_NS));
}

/* Account for @n bytes of section @s read without a record. */
static void rx_skip(struct rx *rx, __u64 s, __u64 sec_len, __u64 n)
{
	rx->section = s;
	rx->sec_len = sec_len;
	rx->sec_off += n;
	rx->stream_off += n;
	rx->data += n;
	if (rx->sec_off == sec_len) {
		rx->section++;
		rx->sec_off = 0;
	}
}

/*
 * d. A receive control buffer too small for the record, or none: the data
 * still comes, with MSG_CTRUNC (as put_cmsg() does), and reading goes on.
 */
TL_TEST(recv_ctrunc)
{
	union {
		char buf[CMSG_SPACE(4)];
		struct cmsghdr align;
	} ctl;
	char data[4096];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t ret;
	struct rx rx;
	int s;

	SETUP_SKIPPED();
	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	for (s = 0; s < 2; s++) {
		ASSERT_EQ(1000, tl_send1(self->snd, s, 1000, SEC(5), 0));
		msg.msg_control = s ? NULL : ctl.buf;
		msg.msg_controllen = s ? 0 : sizeof(ctl.buf);
		msg.msg_flags = 0;
		ret = recvmsg(self->rcv, &msg, MSG_TL);
		ASSERT_LT(0, ret) TH_LOG("recvmsg: %s", strerror(errno));
		ASSERT_GE(1000, ret);
		EXPECT_NE(0, msg.msg_flags & MSG_CTRUNC)
			TH_LOG("control buffer of %zu bytes", (size_t)msg.msg_controllen);
		EXPECT_EQ(-1, mismatch(data, s, 0, ret));
		rx_skip(&rx, s, 1000, ret);
		/* the rest of the section with its records */
		if (ret < 1000)
			ASSERT_EQ((__u64)s, rx_section(_metadata, &rx, self->rcv));
	}
	roundtrip(_metadata, &rx, self->snd, self->rcv, 2, 1000);
	rx_free(&rx);
}

/* Receiver: stalls, non-blocking reads, shutdown, short exchanges. */

/* Send j->nsec sections (j->lens) in one sendmsg(MSG_TL), then SHUT_WR. */
static int child_send_one_call(struct job *j)
{
	struct iovec *iov = calloc(j->nsec, sizeof(*iov));
	__u64 *dl = calloc(j->nsec, sizeof(*dl));
	ssize_t ret, total = 0;
	int i;

	if (!iov || !dl)
		return 10;
	for (i = 0; i < j->nsec; i++) {
		iov[i].iov_len = j->lens[i];
		iov[i].iov_base = section_buf(i, j->lens[i]);
		if (!iov[i].iov_base)
			return 10;
		dl[i] = j->deadline;
		total += j->lens[i];
	}
	ret = tl_sendv(j->fd, iov, j->nsec, dl, j->nsec, TL_DEADLINE, MSG_TL);
	if (ret != total) {
		fprintf(stderr, "# sender: sendmsg of %d sections returned %zd of %zd: %s\n",
			j->nsec, ret, total, strerror(errno));
		return 1;
	}
	if (shutdown(j->fd, SHUT_WR)) {
		fprintf(stderr, "# sender: shutdown: %s\n", strerror(errno));
		return 3;
	}
	for (i = 0; i < j->nsec; i++)
		free(iov[i].iov_base);
	free(iov);
	free(dl);
	return 0;
}

/* Read to EOF without MSG_TL in pieces of @bufsz; @want holds @len bytes. */
static void plain_to_eof(struct __test_metadata *_metadata, int fd,
			 size_t bufsz, const __u8 *want, size_t len)
{
	__u8 *buf = malloc(bufsz);
	size_t n = 0;
	ssize_t ret;

	ASSERT_NE(NULL, buf);
	for (;;) {
		ret = recv(fd, buf, bufsz, 0);
		if (ret <= 0)
			break;
		ASSERT_GE(len, n + ret) TH_LOG("more bytes than were sent");
		ASSERT_EQ(0, memcmp(buf, want + n, ret))
			TH_LOG("bytes %zu..%zu differ", n, n + ret);
		n += ret;
	}
	ASSERT_EQ(0, ret) TH_LOG("recv after %zu of %zu bytes: %s", n, len,
				 strerror(errno));
	ASSERT_EQ(len, n);
	free(buf);
}

/*
 * 1024 sections of 1..3000 bytes in one sendmsg(MSG_TL) with deadlines
 * that never pass (dl_never()), over a 5 Mbit/s link with 10 ms each
 * way, read to EOF with MSG_TL and without, into 100-byte and 64 KiB
 * buffers, from the start or after 1.5 s (the receive buffer full, the
 * window closed).  The receiver never stalls with data queued (a stalled
 * read times out after 5 s, scaled), every byte arrives where it
 * belongs, nothing is abandoned, and each run takes less than 15 s (2.5 s
 * of link; a timed bound).
 */
struct small_run {
	bool tl;		/* read with MSG_TL */
	size_t bufsz;
	unsigned int late;	/* ms before the first read */
};

static void many_small_sections(struct __test_metadata *_metadata,
				FIXTURE_DATA(tltcp) *self,
				const FIXTURE_VARIANT(tltcp) *variant,
				const struct pair_opts *o,
				const struct small_run *runs, unsigned int nruns)
{
	const int nsec = 1024;
	__u64 lens[1024], total = 0, t0, took;
	__u32 rng = 0x51a11;
	struct tl_info si;
	__u8 *want;
	unsigned int r;
	struct job *j;
	struct rx rx;
	ssize_t ret;
	pid_t pid;
	int k;

	for (k = 0; k < nsec; k++) {
		lens[k] = 1 + rnd(&rng) % 3000;
		total += lens[k];
	}
	want = malloc(total);
	ASSERT_NE(NULL, want);
	for (k = 0, total = 0; k < nsec; k++) {
		fill(want + total, k, 0, lens[k]);
		total += lens[k];
	}
	j = shared_alloc(sizeof(*j));
	ASSERT_NE(NULL, j);

	for (r = 0; r < nruns; r++) {
		reopen(_metadata, self, variant, o);
		set_timeouts(self->rcv, 5000);
		set_timeouts(self->snd, 30000);
		memset(j, 0, sizeof(*j));
		j->fd = self->snd;
		j->nsec = nsec;
		j->lens = lens;
		j->deadline = dl_never();
		t0 = now_ns();
		pid = spawn(child_send_one_call, j);
		ASSERT_LT(0, pid);
		/* a late reader finds its buffer full, the window closed */
		sleep_ms(runs[r].late);
		if (runs[r].tl) {
			ASSERT_EQ(0, rx_init(&rx, lens, nsec, runs[r].bufsz));
			ret = rx_to_eof(_metadata, &rx, self->rcv, runs[r].bufsz);
			if (ret && system("ss -tmni >&2"))
				TH_LOG("ss failed");
			ASSERT_EQ(0, ret) TH_LOG("MSG_TL, %zu-byte buffer: recvmsg after %llu of %llu bytes: %s",
						 runs[r].bufsz,
						 (unsigned long long)rx.stream_off,
						 (unsigned long long)total, strerror(-ret));
			EXPECT_EQ((__u64)nsec, rx.section);
			EXPECT_EQ(total, rx.data);
			EXPECT_EQ(0, rx.gap);
			rx_free(&rx);
		} else {
			plain_to_eof(_metadata, self->rcv, runs[r].bufsz, want,
				     total);
		}
		took = now_ns() - t0;
		ASSERT_EQ(0, reap(pid));
		TH_LOG("%s, %zu-byte buffer, reading after %u ms: %llu bytes in %llu ms",
		       runs[r].tl ? "MSG_TL" : "plain", runs[r].bufsz,
		       runs[r].late, (unsigned long long)total,
		       (unsigned long long)(took / NSEC_PER_MSEC));
		/* 2.5 s of link; a debug kernel sharing the machine took 16 s,
		 * 29-38 s on a day the machine was twice as slow (2026-12-07;
		 * the stall this guards against fails the read after 5 s).
		 */
		EXPECT_TIMED(took < SEC(15), "%llu ms, bound 15,000",
			     (unsigned long long)(took / NSEC_PER_MSEC));
		ASSERT_EQ(0, get_info(self->snd, &si));
		EXPECT_EQ(0, si.bytes_abandoned);
	}
	free(want);
}

TL_TEST(rx_many_small_sections_slow_link)
{
	static const struct small_run runs[] = {
		{ true, 100, 0 }, { true, 65536, 0 },
		{ false, 100, 0 }, { false, 65536, 0 },
		{ true, 100, 1500 }, { false, 65536, 1500 },
	};

	SETUP_SKIPPED();
	shape_lo(_metadata, 5000000);
	ASSERT_EQ(0, system("tc qdisc change dev lo root netem rate 5000000bit delay 10ms"));
	many_small_sections(_metadata, self, variant, &default_opts, runs,
			    sizeof(runs) / sizeof(runs[0]));
}

/*
 * The same across a veth pair to another namespace, 5 Mbit/s and 20 ms
 * on the data's way, where the stall was first reported (a reader
 * blocked in recvmsg(MSG_TL) with 91,711 bytes queued, the window
 * closed); lo with netem did not show it with the module of then.
 */
TL_TEST(rx_many_small_sections_veth)
{
	static const struct small_run runs[] = {
		{ true, 100, 0 }, { true, 65536, 1500 }, { false, 65536, 0 },
	};
	const struct pair_opts o = { .veth = true };

	SETUP_SKIPPED();
	veth_path(_metadata, "rate 5000000bit delay 20ms");
	many_small_sections(_metadata, self, variant, &o, runs,
			    sizeof(runs) / sizeof(runs[0]));
	EXPECT_EQ(0, system("ip netns del " PEER_NS));
}

/*
 * recvmsg(MSG_TL | @flags) on @fd fails with EAGAIN after @min_ms to
 * @max_ms, scaled (@what names the case).
 */
static void expect_eagain(struct __test_metadata *_metadata, int fd,
			  int flags, unsigned int min_ms, unsigned int max_ms,
			  const char *what)
{
	struct rxmsg m;
	char buf[4096];
	__u64 t, took;

	t = now_ns();
	tl_recv(fd, buf, sizeof(buf), MSG_TL | flags, &m);
	took = now_ns() - t;
	EXPECT_EQ(-1, m.ret);
	EXPECT_EQ(EAGAIN, m.err) TH_LOG("%s: %s after %llu ms", what,
					strerror(m.err),
					(unsigned long long)(took / NSEC_PER_MSEC));
	EXPECT_LE(MSEC(min_ms), took);
	EXPECT_GT(scaled(MSEC(max_ms)), took);
}

/*
 * The bound on a read with SO_RCVTIMEO of 200 ms: ten times that, as a
 * one-vCPU guest beside others can lose its CPU for a while.  A read that
 * ignores the timeout still fails, at the test's alarm or timeout.
 */
#define RCVTIMEO_MAX_MS	2000

/*
 * A reader blocked in recv() does not hold up a non-blocking one: with
 * thread A (here a child sharing the socket) blocked in recvmsg(MSG_TL),
 * recvmsg(MSG_DONTWAIT) and a read with O_NONBLOCK fail with EAGAIN at
 * once, and a read with SO_RCVTIMEO of 200 ms fails with EAGAIN after
 * about 200 ms.  An alarm ends a call that waits for A instead (EINTR).
 */
static void on_alarm(int sig)
{
}

TL_TEST(rx_nonblocking_beside_blocked_reader)
{
	const struct sigaction sa = { .sa_handler = on_alarm };
	const struct timeval tv = { .tv_usec = 200000 }, forever = {};
	struct job *j;
	__u64 t, took;
	char buf[4096];
	pid_t pid;

	SETUP_SKIPPED();
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setsockopt(self->rcv, SOL_SOCKET, SO_RCVTIMEO, &forever,
				sizeof(forever)));
	j = shared_alloc(sizeof(*j));
	ASSERT_NE(NULL, j);
	j->fd = self->rcv;
	pid = spawn(child_drain, j);
	ASSERT_LT(0, pid);
	sleep_ms(300);	/* A is blocked in recvmsg() */

	alarm(3 * timeout_scale());
	expect_eagain(_metadata, self->rcv, MSG_DONTWAIT, 0, 100,
		      "MSG_DONTWAIT");

	ASSERT_EQ(0, set_nonblock(self->rcv, true));
	alarm(3 * timeout_scale());
	t = now_ns();
	errno = 0;
	EXPECT_EQ(-1, read(self->rcv, buf, sizeof(buf)));
	took = now_ns() - t;
	EXPECT_EQ(EAGAIN, errno) TH_LOG("O_NONBLOCK: %s after %llu ms",
					strerror(errno),
					(unsigned long long)(took / NSEC_PER_MSEC));
	EXPECT_GT(scaled(MSEC(100)), took);
	ASSERT_EQ(0, set_nonblock(self->rcv, false));

	ASSERT_EQ(0, setsockopt(self->rcv, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	alarm(3 * timeout_scale());
	expect_eagain(_metadata, self->rcv, 0, 150, RCVTIMEO_MAX_MS,
		      "SO_RCVTIMEO 200 ms");
	alarm(0);

	/* A still gets what comes, then EOF. */
	ASSERT_EQ(1000, tl_send1(self->snd, 0, 1000, SEC(5), 0));
	ASSERT_EQ(0, shutdown(self->snd, SHUT_WR));
	ASSERT_EQ(0, reap(pid));
	EXPECT_EQ(0, j->rx_err) TH_LOG("reader A: %s", strerror(j->rx_err));
	EXPECT_EQ(1000, j->data);
	EXPECT_EQ(0, j->bad);
	signal(SIGALRM, SIG_DFL);
}

/*
 * A read parses what TCP has queued itself, and waits for more itself:
 * alone, a reader with SO_RCVTIMEO of 200 ms gets EAGAIN after about
 * 200 ms.  An application that asked TCP for control messages of its own
 * still gets them beside TL_DATA: TCP_CM_INQ with TCP_INQ, SCM_TIMESTAMP
 * with SO_TIMESTAMP (such a socket reads through TCP's recvmsg).  Those
 * reads have the fixture's timeout again: 200 ms would fail one in a
 * guest that loses its CPU for that long between the send and the read.
 */
TL_TEST(rx_tcp_cmsgs_and_timeout)
{
	const struct timeval tv = { .tv_usec = 200000 };
	union {
		char buf[4 * CMSG_SPACE(sizeof(struct tl_record))];
		struct cmsghdr align;
	} cbuf;
	const int one = 1;
	bool inq, ts, data;
	struct cmsghdr *c;
	char buf[4096];
	int k, tsfd;

	SETUP_SKIPPED();
	/* The kernel stamps received packets once a socket asks, but turns
	 * that on in a work item: a guest that ran the sender before it
	 * delivered section 1 unstamped (7.3 and 6.12, 2026-12-07).  A
	 * socket of its own asks first, so that it is on by the time the
	 * 200 ms below have passed.
	 */
	tsfd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, tsfd);
	ASSERT_EQ(0, setsockopt(tsfd, SOL_SOCKET, SO_TIMESTAMP, &one,
				sizeof(one)));
	ASSERT_EQ(0, setsockopt(self->rcv, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
	expect_eagain(_metadata, self->rcv, 0, 150, RCVTIMEO_MAX_MS,
		      "SO_RCVTIMEO 200 ms");
	set_timeouts(self->rcv, TL_SOCK_TIMEOUT_MS);

	ASSERT_EQ(0, setsockopt(self->rcv, IPPROTO_TCP, TCP_INQ, &one,
				sizeof(one)));
	for (k = 0; k < 2; k++) {
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr msg = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = cbuf.buf,
			.msg_controllen = sizeof(cbuf.buf),
		};

		if (k)
			ASSERT_EQ(0, setsockopt(self->rcv, SOL_SOCKET,
						SO_TIMESTAMP, &one, sizeof(one)));
		ASSERT_EQ(1000, tl_send1(self->snd, k, 1000, SEC(5), 0));
		ASSERT_EQ(1000, recvmsg(self->rcv, &msg, MSG_TL))
			TH_LOG("recvmsg: %s", strerror(errno));
		inq = ts = data = false;
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			inq |= c->cmsg_level == SOL_TCP &&
			       c->cmsg_type == TCP_CM_INQ;
			ts |= c->cmsg_level == SOL_SOCKET &&
			      c->cmsg_type == SCM_TIMESTAMP;
			data |= c->cmsg_level == SOL_TLTCP &&
				c->cmsg_type == TL_DATA;
		}
		EXPECT_TRUE(inq) TH_LOG("section %d: no TCP_CM_INQ", k);
		EXPECT_EQ(k == 1, ts) TH_LOG("section %d: SCM_TIMESTAMP %s", k,
					     ts ? "unasked" : "missing");
		EXPECT_TRUE(data) TH_LOG("section %d: no TL_DATA", k);
		EXPECT_EQ(-1, mismatch(buf, k, 0, 1000));
	}
	close(tsfd);
}

/* Write a HELLO, as an end that attached tltcp does first. */
static void wire_hello(struct __test_metadata *_metadata, int fd)
{
	__u8 h[WIRE_HDR_LEN];

	wire_hdr(h, WIRE_HELLO, 0, WIRE_MAGIC, 1, 0);
	ASSERT_EQ(WIRE_HDR_LEN, write(fd, h, sizeof(h)));
}

/* Read exactly @len bytes of a plain TCP socket. */
static void read_full(struct __test_metadata *_metadata, int fd, void *buf,
		      size_t len)
{
	size_t n = 0;
	ssize_t ret;

	while (n < len) {
		ret = recv(fd, (__u8 *)buf + n, len - n, 0);
		ASSERT_LT(0, ret) TH_LOG("after %zu of %zu bytes: %s", n, len,
					 ret ? strerror(errno) : "EOF");
		n += ret;
	}
}

/*
 * shutdown(SHUT_RD) in the middle of a record (a plain peer announced
 * 1000 bytes and sent 500): reads return 0 from then on, the connection
 * is not reset, and the receiving end still sends a section that the peer
 * reads intact, HELLO and record as the module frames them.
 */
TL_TEST(rx_shut_rd_mid_record)
{
	const struct pair_opts o = { .plain_snd = true };
	__u8 h[WIRE_HDR_LEN], data[1000], got[1000];
	struct rxmsg m;

	SETUP_SKIPPED();
	reopen(_metadata, self, variant, &o);
	wire_hello(_metadata, self->snd);
	wire_hdr(h, WIRE_DATA, 1000, 0, 0, 1000);
	fill(data, 0, 0, 500);
	ASSERT_EQ(WIRE_HDR_LEN, write(self->snd, h, sizeof(h)));
	ASSERT_EQ(500, write(self->snd, data, 500));
	tl_recv(self->rcv, got, sizeof(got), MSG_TL, &m);
	ASSERT_EQ(500, m.ret) TH_LOG("recvmsg: %s", strerror(m.err));
	ASSERT_EQ(-1, mismatch(got, 0, 0, 500));

	ASSERT_EQ(0, shutdown(self->rcv, SHUT_RD));
	tl_recv(self->rcv, got, sizeof(got), MSG_TL, &m);
	EXPECT_EQ(0, m.ret) TH_LOG("recvmsg after SHUT_RD: %zd (%s)", m.ret,
				   strerror(m.err));
	EXPECT_EQ(0, recv(self->rcv, got, sizeof(got), MSG_DONTWAIT));

	/* The other direction still works. */
	ASSERT_EQ(1000, tl_send1(self->rcv, 0, 1000, SEC(5), 0))
		TH_LOG("sendmsg after SHUT_RD: %s", strerror(errno));
	read_full(_metadata, self->snd, h, sizeof(h));
	EXPECT_EQ(WIRE_HELLO, h[0]);
	read_full(_metadata, self->snd, h, sizeof(h));
	EXPECT_EQ(WIRE_DATA, h[0]);
	EXPECT_EQ(htonl(1000), *(__u32 *)(h + 4));
	read_full(_metadata, self->snd, got, 1000);
	EXPECT_EQ(-1, mismatch(got, 0, 0, 1000));
}

struct blocked_recv {
	int fd;
	__u8 buf[1000];
	struct rxmsg m;
};

static void *blocked_recv_fn(void *arg)
{
	struct blocked_recv *b = arg;

	tl_recv(b->fd, b->buf, sizeof(b->buf), MSG_TL, &b->m);
	return NULL;
}

/*
 * shutdown(SHUT_RD) from another thread while a reader waits for the
 * payload of a header it has parsed: the reader returns 0, not the header
 * parser's "one header read" as a byte count (a read of 1 without a
 * record, which the UAPI fuzzer once met in a one-vCPU 6.12 guest).
 */
TL_TEST(rx_shut_rd_waiting_for_payload)
{
	const struct pair_opts o = { .plain_snd = true };
	struct blocked_recv b = {};
	__u8 h[WIRE_HDR_LEN];
	pthread_t t;

	SETUP_SKIPPED();
	reopen(_metadata, self, variant, &o);
	wire_hello(_metadata, self->snd);
	wire_hdr(h, WIRE_DATA, 100, 0, 0, 100);
	ASSERT_EQ(WIRE_HDR_LEN, write(self->snd, h, sizeof(h)));
	set_timeouts(self->rcv, 5000);
	b.fd = self->rcv;
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_recv_fn, &b));
	sleep_ms(300);
	ASSERT_EQ(0, shutdown(self->rcv, SHUT_RD));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, b.m.ret) TH_LOG("recvmsg: %zd (%s), %d control messages",
				     b.m.ret, strerror(b.m.err), b.m.ncmsg);
	EXPECT_EQ(0, b.m.ncmsg);
}

/* poll() with a 0 timeout: is @fd readable? */
static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/*
 * poll() reports POLLIN only when a read would return something: not for
 * the HELLO alone, a partial header, or a header without its payload;
 * not for a gap to a plain reader (one that last read without MSG_TL);
 * yes for data, for a gap to a MSG_TL reader, and for EOF.  Whenever it
 * does, a non-blocking read succeeds.
 */
TL_TEST(rx_poll_framing_only)
{
	const struct pair_opts o = { .plain_snd = true };
	__u8 h[WIRE_HDR_LEN], data[100], got[200];
	struct rxmsg m;

	SETUP_SKIPPED();
	reopen(_metadata, self, variant, &o);
	wire_hello(_metadata, self->snd);
	sleep_ms(100);
	EXPECT_FALSE(readable(self->rcv)) TH_LOG("readable with the HELLO alone");

	wire_hdr(h, WIRE_DATA, 100, 0, 0, 100);
	ASSERT_EQ(10, write(self->snd, h, 10));
	sleep_ms(100);
	EXPECT_FALSE(readable(self->rcv)) TH_LOG("readable with half a header");
	ASSERT_EQ(10, write(self->snd, h + 10, 10));
	sleep_ms(100);
	EXPECT_FALSE(readable(self->rcv)) TH_LOG("readable with a header alone");
	fill(data, 0, 0, 100);
	ASSERT_EQ(100, write(self->snd, data, 100));
	sleep_ms(100);
	EXPECT_TRUE(readable(self->rcv));
	tl_recv(self->rcv, got, sizeof(got), MSG_TL | MSG_DONTWAIT, &m);
	ASSERT_EQ(100, m.ret) TH_LOG("recvmsg: %s", strerror(m.err));
	EXPECT_EQ(TL_DATA, m.type);
	EXPECT_EQ(-1, mismatch(got, 0, 0, 100));

	/* A plain reader: a gap alone is nothing to read. */
	EXPECT_ERRNO(EAGAIN, recv(self->rcv, got, sizeof(got), MSG_DONTWAIT));
	wire_hdr(h, WIRE_ABANDON, 50, 1, 0, 50);
	ASSERT_EQ(WIRE_HDR_LEN, write(self->snd, h, sizeof(h)));
	sleep_ms(100);
	EXPECT_FALSE(readable(self->rcv)) TH_LOG("readable with a gap, plain reader");
	EXPECT_ERRNO(EAGAIN, recv(self->rcv, got, sizeof(got), MSG_DONTWAIT));
	wire_hdr(h, WIRE_DATA, 10, 2, 0, 10);
	ASSERT_EQ(WIRE_HDR_LEN, write(self->snd, h, sizeof(h)));
	fill(data, 2, 0, 10);
	ASSERT_EQ(10, write(self->snd, data, 10));
	sleep_ms(100);
	EXPECT_TRUE(readable(self->rcv));
	ASSERT_EQ(10, recv(self->rcv, got, sizeof(got), MSG_DONTWAIT));
	EXPECT_EQ(-1, mismatch(got, 2, 0, 10));

	/* A MSG_TL reader: a gap is something to read. */
	tl_recv(self->rcv, got, sizeof(got), MSG_TL | MSG_DONTWAIT, &m);
	EXPECT_EQ(EAGAIN, m.err);
	wire_hdr(h, WIRE_ABANDON, 40, 3, 0, 40);
	ASSERT_EQ(WIRE_HDR_LEN, write(self->snd, h, sizeof(h)));
	sleep_ms(100);
	EXPECT_TRUE(readable(self->rcv)) TH_LOG("a gap not readable to MSG_TL");
	tl_recv(self->rcv, got, sizeof(got), MSG_TL | MSG_DONTWAIT, &m);
	ASSERT_EQ(40, m.ret) TH_LOG("recvmsg: %s", strerror(m.err));
	EXPECT_EQ(TL_GAP, m.type);
	EXPECT_FALSE(readable(self->rcv));

	/* EOF is readable. */
	ASSERT_EQ(0, shutdown(self->snd, SHUT_WR));
	sleep_ms(100);
	EXPECT_TRUE(readable(self->rcv));
	tl_recv(self->rcv, got, sizeof(got), MSG_TL | MSG_DONTWAIT, &m);
	EXPECT_EQ(0, m.ret) TH_LOG("recvmsg at EOF: %zd (%s)", m.ret, strerror(m.err));
}

/*
 * A short exchange: the client attaches, sends one 1000-byte section and
 * shuts down its sending side (or closes) before the server accepts; the
 * server accepts 0.5 s later (its socket in CLOSE_WAIT), attaches and
 * reads the section intact, then EOF.  A server that shut down its own
 * sending side before attaching (FIN_WAIT, here CLOSE once acknowledged)
 * still reads; its sendmsg() fails with EPIPE.
 */
TL_TEST(rx_attach_after_peer_closed)
{
	static const char * const name[] = {
		"client shut down", "client closed", "both shut down",
	};
	struct sockaddr_storage ss;
	socklen_t len;
	int how, lfd, c, s;
	struct rx rx;
	ssize_t ret;

	SETUP_SKIPPED();
	for (how = 0; how < 3; how++) {
		lfd = tl_listener(_metadata, variant->family, 0, &ss, &len);
		c = socket(variant->family, SOCK_STREAM, 0);
		ASSERT_LE(0, c);
		ASSERT_EQ(0, connect(c, (struct sockaddr *)&ss, len));
		ASSERT_EQ(0, tl_attach(c));
		ASSERT_EQ(1000, tl_send1(c, 0, 1000, SEC(5), 0));
		ASSERT_EQ(0, how == 1 ? close(c) : shutdown(c, SHUT_WR));
		sleep_ms(500);
		s = accept(lfd, NULL, NULL);
		ASSERT_LE(0, s);
		close(lfd);
		set_timeouts(s, 5000);
		if (how == 2) {
			/* FIN_WAIT, then CLOSE once the client acknowledges */
			ASSERT_EQ(0, shutdown(s, SHUT_WR));
			sleep_ms(100);
		}
		ASSERT_EQ(0, tl_attach(s)) TH_LOG("%s: attaching in state %d: %s",
						  name[how], tcp_state(s),
						  strerror(errno));
		ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
		ret = rx_to_eof(_metadata, &rx, s, 65536);
		EXPECT_EQ(0, ret) TH_LOG("%s: recvmsg: %s", name[how],
					 strerror(-ret));
		EXPECT_EQ(1000, rx.data) TH_LOG("%s", name[how]);
		EXPECT_EQ(1, rx.section) TH_LOG("%s", name[how]);
		if (how == 2)
			EXPECT_ERRNO(EPIPE, tl_send1(s, 0, 100, SEC(5), MSG_NOSIGNAL));
		rx_free(&rx);
		close(s);
		if (how != 1)
			close(c);
	}
}

/*
 * e. Where tltcp is not: SOL_TLTCP options on a plain TCP socket fail
 * (ENOPROTOOPT; getsockopt on IPv4: EOPNOTSUPP, the IP layer's answer);
 * attaching on a listening or an unconnected socket is ENOTCONN; attaching
 * twice is EEXIST.
 */
TL_TEST(attach_errors)
{
	struct sockaddr_storage ss;
	struct tl_info info;
	socklen_t len;
	int p1, p2, lfd, fd;

	SETUP_SKIPPED();
	tl_pair(_metadata, variant->family,
		&(struct pair_opts){ .plain_snd = true, .plain_rcv = true }, &p1, &p2);
	len = sizeof(info);
	EXPECT_ERRNO(variant->plain_get_errno,
		     getsockopt(p1, SOL_TLTCP, TL_INFO, &info, &len));
	EXPECT_ERRNO(ENOPROTOOPT, set_u32(p1, TL_NOTSENT, 4096));
	EXPECT_ERRNO(ENOPROTOOPT, set_u64(p2, TL_DEFAULT_DEADLINE, SEC(1)));
	close(p1);
	close(p2);

	lfd = tl_listener(_metadata, variant->family, 0, &ss, &len);
	EXPECT_ERRNO(ENOTCONN, tl_attach(lfd));
	close(lfd);
	fd = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	EXPECT_ERRNO(ENOTCONN, tl_attach(fd));
	close(fd);

	EXPECT_ERRNO(EEXIST, tl_attach(self->snd));
	EXPECT_ERRNO(EEXIST, tl_attach(self->rcv));
}

/*
 * f. A non-blocking sender: with TL_SNDQ_LIMIT 65536 and a receiver that
 * does not read, 16384-byte sections are taken until EAGAIN; the queue
 * then holds what the limit allows and poll() says not writable.  When
 * the receiver reads, a poll() waiting for POLLOUT wakes within 5 s;
 * after shutdown(SHUT_WR) the reader gets every section whole, then EOF.
 */
TL_TEST(nonblocking_sender)
{
	const size_t len = 16384;
	__u8 *buf = malloc(len);
	struct iovec iov = { buf, len };
	__u64 dl = dl_never(), t_end;
	struct pollfd pfd;
	struct tl_info info;
	int sections = 0, i;
	bool stalled = false;
	struct job *j;
	ssize_t ret;
	pid_t pid;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, buf);
	shape_lo(_metadata, 10000000);
	reopen(_metadata, self, variant, &default_opts);
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 65536));
	ASSERT_EQ(0, set_u32(self->snd, TL_NOTSENT, 4096));
	ASSERT_EQ(0, set_nonblock(self->snd, true));

	/* Fill until the whole path stalls: EAGAIN, and no POLLOUT for 500 ms. */
	t_end = now_ns() + SEC(20);
	while (!stalled) {
		for (i = 0; i < 1000; i++) {
			fill(buf, sections, 0, len);
			ret = tl_sendv(self->snd, &iov, 1, &dl, 1, TL_DEADLINE,
				       MSG_TL);
			if (ret < 0)
				break;
			ASSERT_EQ((ssize_t)len, ret);
			sections++;
		}
		ASSERT_EQ(-1, ret) TH_LOG("1000 sections taken without EAGAIN");
		ASSERT_EQ(EAGAIN, errno) TH_LOG("sendmsg: %s", strerror(errno));
		pfd = (struct pollfd){ .fd = self->snd, .events = POLLOUT };
		stalled = poll(&pfd, 1, 500) == 0;
		ASSERT_GT(t_end, now_ns()) TH_LOG("the sender never stalled");
	}
	TH_LOG("%d sections queued before the stall", sections);
	pfd.revents = 0;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	EXPECT_EQ(0, pfd.revents & POLLOUT);
	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_LT(0, info.bytes_queued);
	EXPECT_GE(65536 + len, info.bytes_queued);
	EXPECT_EQ((__u64)sections, info.sections_offered);

	/* The receiver reads; a blocked poll() for POLLOUT wakes. */
	j = shared_alloc(sizeof(*j));
	ASSERT_NE(NULL, j);
	j->fd = self->rcv;
	pid = spawn(child_drain, j);
	ASSERT_LT(0, pid);
	pfd.revents = 0;
	ASSERT_EQ(1, poll(&pfd, 1, 5000)) TH_LOG("no POLLOUT within 5 s of reading");
	EXPECT_NE(0, pfd.revents & POLLOUT);

	ASSERT_EQ(0, set_nonblock(self->snd, false));
	ASSERT_EQ(0, shutdown(self->snd, SHUT_WR));
	ASSERT_EQ(0, reap(pid));
	EXPECT_EQ(0, j->rx_err) TH_LOG("reader: %s", strerror(j->rx_err));
	EXPECT_EQ(0, j->bad);
	EXPECT_EQ(0, j->gaps);
	EXPECT_EQ((__u64)sections * len, j->data);
	free(buf);
}

/*
 * f. A non-blocking receiver: with nothing but the handshake's records,
 * recvmsg(MSG_TL) and read() are EAGAIN and poll() reports no POLLIN;
 * when a section arrives poll() wakes with POLLIN and it is read; then
 * EAGAIN again.
 */
TL_TEST(nonblocking_receiver)
{
	struct pollfd pfd = { .fd = self->rcv, .events = POLLIN };
	struct rxmsg m;
	char buf[4096];
	struct rx rx;

	SETUP_SKIPPED();
	sleep_ms(200);	/* whatever attaching sent has arrived */
	tl_recv(self->rcv, buf, sizeof(buf), MSG_TL | MSG_DONTWAIT, &m);
	EXPECT_EQ(-1, m.ret);
	EXPECT_EQ(EAGAIN, m.err) TH_LOG("recvmsg: %s", strerror(m.err));
	ASSERT_EQ(0, set_nonblock(self->rcv, true));
	tl_recv(self->rcv, buf, sizeof(buf), MSG_TL, &m);
	EXPECT_EQ(-1, m.ret);
	EXPECT_EQ(EAGAIN, m.err) TH_LOG("recvmsg: %s", strerror(m.err));
	EXPECT_ERRNO(EAGAIN, read(self->rcv, buf, sizeof(buf)));
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
	ASSERT_EQ(1000, tl_send1(self->snd, 0, 1000, SEC(5), 0));
	ASSERT_EQ(1, poll(&pfd, 1, 5000)) TH_LOG("no POLLIN within 5 s");
	EXPECT_NE(0, pfd.revents & POLLIN);
	ASSERT_EQ(0, rx_section(_metadata, &rx, self->rcv));
	EXPECT_EQ(1000, rx.data);
	pfd.revents = 0;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	tl_recv(self->rcv, buf, sizeof(buf), MSG_TL, &m);
	EXPECT_EQ(EAGAIN, m.err);
	rx_free(&rx);
}

/*
 * g. A peer that did not attach tltcp: its plain bytes are not a tltcp
 * stream, and the tltcp receiver's recvmsg() fails with EPROTO, which
 * SO_ERROR then reports.
 */
TL_TEST(peer_without_tltcp)
{
	const struct pair_opts o = { .plain_snd = true };
	char junk[256], buf[4096];
	socklen_t len = sizeof(int);
	struct rxmsg m;
	int err = 0;

	SETUP_SKIPPED();
	reopen(_metadata, self, variant, &o);
	memset(junk, 'x', sizeof(junk));
	memcpy(junk, "GET / HTTP/1.0\r\n\r\n", 18);
	ASSERT_EQ((ssize_t)sizeof(junk), write(self->snd, junk, sizeof(junk)));
	set_timeouts(self->rcv, 5000);
	tl_recv(self->rcv, buf, sizeof(buf), MSG_TL, &m);
	EXPECT_EQ(-1, m.ret) TH_LOG("recvmsg returned %zd, type %d", m.ret, m.type);
	EXPECT_EQ(EPROTO, m.err) TH_LOG("recvmsg: %s", strerror(m.err));
	EXPECT_EQ(0, getsockopt(self->rcv, SOL_SOCKET, SO_ERROR, &err, &len));
	EXPECT_EQ(EPROTO, err) TH_LOG("SO_ERROR: %s", strerror(err));
}

/*
 * shutdown(SHUT_WR) with sections queued: the queue is flushed, then the
 * FIN; the receiver reads every section whole, then EOF.
 */
TL_TEST(shutdown_flushes_queue)
{
	const int nsec = 20;
	const size_t len = 15000;
	__u64 lens[20];
	struct tl_info info;
	int k;

	SETUP_SKIPPED();
	shape_lo(_metadata, 2000000);
	reopen(_metadata, self, variant, &default_opts);
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 1 << 20));
	for (k = 0; k < nsec; k++) {
		lens[k] = len;
		ASSERT_EQ((ssize_t)len, tl_send1(self->snd, k, len, dl_never(),
						 MSG_DONTWAIT))
			TH_LOG("section %d: %s", k, strerror(errno));
	}
	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_LT(0, info.bytes_queued) TH_LOG("nothing left queued to flush");
	ASSERT_EQ(0, shutdown(self->snd, SHUT_WR));

	expect_delivered(_metadata, self->rcv, lens, nsec, 0);
	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ((__u64)nsec, info.sections_completed);
	EXPECT_EQ(0, info.bytes_queued);
}

/*
 * h. close() with sections queued and no linger: close() returns at once
 * and the queue is handed to TCP whole, so the receiver gets every
 * section, then EOF.
 */
TL_TEST(close_with_pending)
{
	const size_t len = 16384;
	__u64 lens[40];
	struct tl_info info;
	int k, queued = 0;
	struct rx rx;
	ssize_t ret;

	SETUP_SKIPPED();
	shape_lo(_metadata, 1000000);
	reopen(_metadata, self, variant, &default_opts);
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 1 << 20));
	for (k = 0; k < 40; k++) {
		lens[k] = len;
		if (tl_send1(self->snd, k, len, dl_never(), MSG_DONTWAIT) != (ssize_t)len)
			break;
		queued++;
	}
	ASSERT_LE(10, queued) TH_LOG("only %d sections queued: %s", queued,
				     strerror(errno));
	ASSERT_EQ(0, get_info(self->snd, &info));
	ASSERT_LT(0, info.bytes_queued);
	ASSERT_EQ(0, close(self->snd));
	self->snd = -1;

	ASSERT_EQ(0, rx_init(&rx, lens, queued, 65536));
	set_timeouts(self->rcv, 15000);
	ret = rx_to_eof(_metadata, &rx, self->rcv, 65536);
	TH_LOG("after close: %llu bytes in %llu records, then %s",
	       (unsigned long long)rx.data, (unsigned long long)rx.records,
	       ret ? strerror(-ret) : "EOF");
	EXPECT_EQ(0, ret) TH_LOG("reading ended with %s", strerror(-ret));
	EXPECT_EQ(queued * len, rx.data);
	EXPECT_EQ(0, rx.gap);
	rx_free(&rx);
}

/*
 * Over a 2 Mbit/s link, queue @nsec sections of @len bytes (lengths in
 * @lens), set SO_LINGER to @linger seconds (none if negative) and close()
 * the sender in a child that holds the last reference (its result in
 * *@jp), then read to EOF into @rx.  With @attach_ms the receiving end is
 * attached that many milliseconds after the close() began; with
 * @hand_hello it first writes a HELLO by hand, as an end that sends its
 * HELLO at attach does (earlier versions of this module), which then
 * reaches the closing sender late.  Returns what ended the reading (0:
 * EOF).
 */
static ssize_t close_lingering(struct __test_metadata *_metadata,
			       FIXTURE_DATA(tltcp) *self,
			       const FIXTURE_VARIANT(tltcp) *variant,
			       int linger, int nsec, size_t len, __u64 *lens,
			       int attach_ms, bool hand_hello, struct job **jp,
			       struct rx *rx)
{
	const struct pair_opts late = { .plain_rcv = true };
	const struct linger lg = { .l_onoff = 1, .l_linger = linger };
	int sync[2], k;
	struct job *j;
	ssize_t ret;
	pid_t pid;

	shape_lo(_metadata, 2000000);
	reopen(_metadata, self, variant, attach_ms ? &late : &default_opts);
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 1 << 20));
	if (linger >= 0)
		ASSERT_EQ(0, setsockopt(self->snd, SOL_SOCKET, SO_LINGER, &lg,
					sizeof(lg)));
	for (k = 0; k < nsec; k++) {
		lens[k] = len;
		ASSERT_EQ((ssize_t)len, tl_send1(self->snd, k, len, dl_never(),
						 MSG_DONTWAIT));
	}
	ASSERT_EQ(0, pipe(sync));
	j = shared_alloc(sizeof(*j));
	ASSERT_NE(NULL, j);
	j->fd = self->snd;
	j->sync_fd = sync[0];
	pid = spawn(child_close, j);
	ASSERT_LT(0, pid);
	close(self->snd);
	self->snd = -1;
	ASSERT_EQ(1, write(sync[1], "c", 1));
	if (attach_ms) {
		sleep_ms(attach_ms);
		if (hand_hello)
			wire_hello(_metadata, self->rcv);
		ASSERT_EQ(0, tl_attach(self->rcv));
	}

	ASSERT_EQ(0, rx_init(rx, lens, nsec, 65536));
	set_timeouts(self->rcv, 20000);
	ret = rx_to_eof(_metadata, rx, self->rcv, 65536);
	ASSERT_EQ(0, reap(pid));
	close(sync[0]);
	close(sync[1]);
	*jp = j;
	return ret;
}

/*
 * close() with SO_LINGER {1, 10} (@linger; none if negative): 150 kB of
 * queued sections take about 0.6 s at 2 Mbit/s, well within the linger
 * time: close() returns 0 in time and the receiver gets every section
 * whole, then EOF.  @attach_ms and @hand_hello: see close_lingering().
 */
static void close_flushes(struct __test_metadata *_metadata,
			  FIXTURE_DATA(tltcp) *self,
			  const FIXTURE_VARIANT(tltcp) *variant, int linger,
			  int attach_ms, bool hand_hello)
{
	const int nsec = 10;
	const size_t len = 15000;
	__u64 lens[10];
	struct job *j;
	struct rx rx;
	ssize_t ret;

	ret = close_lingering(_metadata, self, variant, linger, nsec, len, lens,
			      attach_ms, hand_hello, &j, &rx);
	ASSERT_EQ(0, ret) TH_LOG("recvmsg after %llu bytes: %s",
				 (unsigned long long)rx.stream_off, strerror(-ret));
	EXPECT_EQ((__u64)nsec, rx.section);
	EXPECT_EQ(nsec * len, rx.data);
	EXPECT_EQ(0, rx.gap);
	EXPECT_EQ(0, j->close_rc) TH_LOG("close: %s", strerror(j->close_err));
	EXPECT_GT(SEC(linger > 0 ? linger : 0) + MSEC(500), j->close_ns);
	rx_free(&rx);
}

/* h. The peer attached from the start. */
TL_TEST(close_linger_flushes)
{
	SETUP_SKIPPED();
	close_flushes(_metadata, self, variant, 10, 0, false);
}

/*
 * h2. The same, with the peer's HELLO arriving while close() lingers (the
 * receiving end writes one by hand 200 ms into it, as a peer that sends
 * its HELLO at attach does; over a slow link such a HELLO can also wait
 * behind the sender's data).  Data the sender never read makes TCP reset
 * a closing connection; the HELLO is the module's, not the application's,
 * so it must not: every section, then EOF.  CI saw the race once on 6.12
 * (ECONNRESET after 147,460 of 150,000 bytes), when this module sent its
 * HELLO at attach.
 */
TL_TEST(close_linger_peer_hello_late)
{
	SETUP_SKIPPED();
	close_flushes(_metadata, self, variant, 10, 200, true);
}

/*
 * h3. No SO_LINGER: close() returns at once and the receiving end
 * attaches 200 ms later, with most of the data still on its way.  An end
 * that only receives sends no HELLO, so nothing reaches the closed
 * sender and TCP does not reset it: every section, then EOF.  (With the
 * HELLO sent at attach the reader got ECONNRESET.)
 */
TL_TEST(close_peer_attaches_late)
{
	SETUP_SKIPPED();
	close_flushes(_metadata, self, variant, -1, 200, false);
}

/*
 * i. The peer resets with sections queued: the next sendmsg() fails with
 * ECONNRESET or EPIPE (not SIGPIPE: MSG_NOSIGNAL), so do later ones, and
 * TL_INFO stays readable.
 */
TL_TEST(reset_with_pending)
{
	const struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	const size_t len = 16384;
	struct tl_info info;
	__u64 t_end;
	int k, st;

	SETUP_SKIPPED();
	shape_lo(_metadata, 1000000);
	reopen(_metadata, self, variant, &default_opts);
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 1 << 20));
	for (k = 0; k < 20; k++)
		ASSERT_EQ((ssize_t)len, tl_send1(self->snd, k, len, SEC(30), MSG_DONTWAIT))
			TH_LOG("section %d: %s", k, strerror(errno));
	sleep_ms(100);
	ASSERT_EQ(0, get_info(self->snd, &info));
	ASSERT_LT(0, info.bytes_queued) TH_LOG("nothing pending");

	ASSERT_EQ(0, setsockopt(self->rcv, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	ASSERT_EQ(0, close(self->rcv));
	self->rcv = -1;
	t_end = now_ns() + SEC(10);
	while ((st = tcp_state(self->snd)) != TCP_STATE_CLOSE && now_ns() < t_end)
		sleep_ms(10);
	ASSERT_EQ(TCP_STATE_CLOSE, st) TH_LOG("the reset never arrived");

	for (k = 0; k < 2; k++) {
		errno = 0;
		EXPECT_EQ(-1, tl_send1(self->snd, 20 + k, len, SEC(5),
				       MSG_NOSIGNAL | MSG_DONTWAIT));
		EXPECT_TRUE(errno == ECONNRESET || errno == EPIPE)
			TH_LOG("sendmsg %d after the reset: %s", k, strerror(errno));
	}
	ASSERT_EQ(0, get_info(self->snd, &info)) TH_LOG("TL_INFO: %s", strerror(errno));
	EXPECT_EQ(20, info.sections_offered);
}

/* Send-side hardening: memory bounds, close, socket errors, sizes. */

/* Write j->len bytes with write(): pattern section 0, stream offsets. */
static int child_stream(struct job *j)
{
	const size_t chunk = 65536;
	__u8 *buf = malloc(chunk);
	ssize_t ret;

	if (!buf)
		return 10;
	while (j->written < j->len) {
		size_t n = j->len - j->written < chunk ? j->len - j->written : chunk;

		fill(buf, 0, j->written, n);
		ret = write(j->fd, buf, n);
		if (ret > 0) {
			j->written += ret;
			continue;
		}
		/* A soft error (ICMP with IP_RECVERR) is reported once. */
		if (ret < 0 && (errno == EHOSTUNREACH || errno == ENETUNREACH ||
				errno == ECONNREFUSED) && j->soft_errs++ < 100000)
			continue;
		j->wr_err = errno;
		return 1;
	}
	free(buf);
	if (j->close_at_end)
		return close(j->fd) ? 2 : 0;
	return shutdown(j->fd, SHUT_WR) ? 3 : 0;
}

/*
 * Read a byte stream of pattern section 0 to its end with recv(): bytes
 * in *got, the offset of the first wrong byte in *bad (-1: none).  0 at
 * EOF, else -errno.
 */
static int read_stream(int fd, __u64 *got, long long *bad)
{
	const size_t bufsz = 65536;
	__u8 *buf = malloc(bufsz);
	ssize_t ret;
	long i;

	*got = 0;
	*bad = -1;
	if (!buf)
		return -ENOMEM;
	while ((ret = recv(fd, buf, bufsz, 0)) > 0) {
		i = mismatch(buf, 0, *got, ret);
		if (i >= 0 && *bad < 0)
			*bad = *got + i;
		*got += ret;
	}
	free(buf);
	return ret ? -errno : 0;
}

/*
 * close() right after write() across a 5 Mbit/s link: the module's queue
 * still holds most of it.  The receiver gets every byte in order, then
 * EOF (or an error, never a clean EOF after a hole).
 */
TL_TEST(close_after_write_loses_nothing)
{
	const __u64 total = 2 << 20;
	struct job *j;
	long long bad;
	__u64 got, t0;
	pid_t pid;
	int ret;

	SETUP_SKIPPED();
	shape_lo(_metadata, 5000000);
	reopen(_metadata, self, variant, &default_opts);
	j = shared_alloc(sizeof(*j));
	ASSERT_NE(NULL, j);
	j->fd = self->snd;
	j->len = total;
	j->close_at_end = true;
	pid = spawn(child_stream, j);
	ASSERT_LT(0, pid);
	close(self->snd);
	self->snd = -1;

	set_timeouts(self->rcv, 20000);
	t0 = now_ns();
	ret = read_stream(self->rcv, &got, &bad);
	TH_LOG("%llu of %llu bytes, then %s, %llu ms after the writer began",
	       (unsigned long long)got, (unsigned long long)total,
	       ret ? strerror(-ret) : "EOF",
	       (unsigned long long)((now_ns() - t0) / NSEC_PER_MSEC));
	ASSERT_EQ(0, reap(pid)) TH_LOG("writer: %s", strerror(j->wr_err));
	EXPECT_EQ(-1, bad) TH_LOG("byte %lld is wrong", bad);
	if (ret == 0) {
		EXPECT_EQ(total, got) TH_LOG("clean EOF after %llu of %llu bytes",
					     (unsigned long long)got,
					     (unsigned long long)total);
	} else {
		TH_LOG("after %llu bytes: %s (an error, not a silent loss)",
		       (unsigned long long)got, strerror(-ret));
	}
	EXPECT_EQ(0, ret) TH_LOG("nothing should stop the delivery: %s",
				 strerror(-ret));
}

/*
 * SO_LINGER for one second with more queued than the link carries in
 * that time: close() returns after about a second, not two (the module's
 * linger, then TCP's), and the rest is still delivered after it.
 */
TL_TEST(close_lingers_once)
{
	const int nsec = 20;
	const size_t len = 30000;
	__u64 lens[20];
	struct job *j;
	struct rx rx;
	ssize_t ret;

	SETUP_SKIPPED();
	/* 600 kB at 2 Mbit/s: about 2.4 s, past the linger time. */
	ret = close_lingering(_metadata, self, variant, 1, nsec, len, lens,
			      0, false, &j, &rx);
	EXPECT_EQ(0, j->close_rc) TH_LOG("close: %s", strerror(j->close_err));
	TH_LOG("close() with SO_LINGER 1 s took %llu ms",
	       (unsigned long long)(j->close_ns / NSEC_PER_MSEC));
	EXPECT_LT(MSEC(800), j->close_ns);
	/* Twice the linger time is the defect.  A debug kernel under TCG
	 * took 1124-3257 ms to return from the one wait, depending on what
	 * else ran on the machine: there the bound is logged only.
	 */
	EXPECT_TIMED(j->close_ns < MSEC(1500), "close took %llu ms, bound 1500",
		     (unsigned long long)(j->close_ns / NSEC_PER_MSEC));
	EXPECT_EQ(0, ret) TH_LOG("recvmsg: %s", strerror(-ret));
	EXPECT_EQ((__u64)nsec, rx.section);
	EXPECT_EQ(nsec * len, rx.data);
	EXPECT_EQ(0, rx.gap);
	rx_free(&rx);
}

/*
 * A soft socket error on a live connection: with IP_RECVERR, ICMP port
 * unreachable for the data path (an nft reject rule, for a second) sets
 * the sender's socket error while TCP stays established and recovers.
 * The application sees the error; the stream goes on intact.  (Over lo
 * the ICMP for a packet sent by the lock owner arrives while the socket
 * is still owned and TCP keeps it as a soft error only; the errors that
 * count come with retransmissions from TCP's timer, hence a second.)
 */
TL_TEST(soft_error_keeps_stream)
{
	/* 6.7 s at 20 Mbit/s, long enough to be still writing when the
	 * rule comes: a 4 MiB stream was all in the socket buffers by then
	 * in the debug kernel and saw no error.  A slow machine gets time
	 * from KSELFTEST_TIMEOUT_SCALE (main()).
	 */
	const __u64 total = 16 << 20;
	struct sockaddr_storage ss;
	socklen_t slen = sizeof(ss);
	int sndbuf = 131072;
	struct job *j;
	char cmd[256];
	long long bad;
	int one = 1, k;
	pid_t pid, rej;
	__u64 got;
	int ret;

	SETUP_SKIPPED();
	if (system("nft --version >/dev/null 2>&1"))
		SKIP(return, "nft is not installed");
	shape_lo(_metadata, 20000000);
	/* A delay makes the ICMP arrive from netem's timer, not while the
	 * sender that caused it still owns the socket (TCP then keeps it as
	 * sk_err_soft only, see the comment above).
	 */
	ASSERT_EQ(0, system("tc qdisc change dev lo root netem rate 20000000bit delay 5ms"));
	reopen(_metadata, self, variant, &default_opts);
	if (variant->family == AF_INET)
		ret = setsockopt(self->snd, SOL_IP, IP_RECVERR, &one, sizeof(one));
	else
		ret = setsockopt(self->snd, SOL_IPV6, IPV6_RECVERR, &one, sizeof(one));
	ASSERT_EQ(0, ret);
	/* Small queues keep the writer writing, mostly asleep for room,
	 * until the stream's last second: an error reaches write() only
	 * while the writer still writes, and TCP sets it for write() only
	 * while the socket is not owned.  With the default queues the
	 * writer was done in a few seconds and none reached it (6.12 and
	 * 7.3 guests beside others, 2026-12-07).
	 */
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 131072));
	ASSERT_EQ(0, setsockopt(self->snd, SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf)));
	ASSERT_EQ(0, getsockname(self->rcv, (struct sockaddr *)&ss, &slen));
	j = shared_alloc(sizeof(*j));
	ASSERT_NE(NULL, j);
	j->fd = self->snd;
	j->len = total;
	pid = spawn(child_stream, j);
	ASSERT_LT(0, pid);

	/* The rule comes for a second and goes, while the receiver reads,
	 * again until an error has reached the writer (over lo an ICMP is
	 * often processed while the socket is owned, and TCP then keeps it
	 * as a soft error only).  Each rule can meet a retransmission TCP
	 * has backed off, and stall the stream for longer: a writer
	 * outlasted a 10-s SO_SNDTIMEO in a 6.18 guest, hence the fixture's
	 * 30 s.  Waiting for the stream to move before the next rule left
	 * too few rules in the stream's life: a 7.3 guest saw no error
	 * (2026-12-07).
	 */
	ASSERT_EQ(0, system("nft add table inet tl_rej && nft add chain inet tl_rej "
			    "out '{ type filter hook output priority 0; }'"));
	snprintf(cmd, sizeof(cmd),
		 "nft add rule inet tl_rej out tcp dport %u reject "
		 "with icmpx type port-unreachable",
		 ntohs(((struct sockaddr_in *)&ss)->sin_port));
	rej = fork();
	ASSERT_LE(0, rej);
	if (!rej) {
		for (k = 0; k < 6 && !j->soft_errs && j->written < j->len; k++) {
			sleep_ms(300);
			if (system(cmd))
				_exit(1);
			sleep_ms(1000);
			if (system("nft flush chain inet tl_rej out"))
				_exit(2);
		}
		_exit(0);
	}
	set_timeouts(self->rcv, TL_SOCK_TIMEOUT_MS);
	ret = read_stream(self->rcv, &got, &bad);
	ASSERT_EQ(0, reap(pid)) TH_LOG("writer: %s", strerror(j->wr_err));
	ASSERT_EQ(0, reap(rej)) TH_LOG("the nft rule could not be changed");
	system("nft delete table inet tl_rej");
	TH_LOG("the writer saw %d soft errors", j->soft_errs);
	EXPECT_EQ(0, ret) TH_LOG("after %llu bytes: %s", (unsigned long long)got,
				 strerror(-ret));
	EXPECT_EQ(-1, bad) TH_LOG("byte %lld is wrong", bad);
	EXPECT_EQ(j->written, got);
	EXPECT_EQ(total, j->written);
	EXPECT_LT(0, j->soft_errs) TH_LOG("no ICMP error reached the sender");
}

/*
 * sendmsg(MSG_TL) whose sections add up to MAX_RW_COUNT or more: the
 * kernel cuts such an iovec, which would shorten a section silently, so
 * the call is refused whole.
 */
TL_TEST(sections_over_max_rw_count)
{
	const size_t len = 64 << 20;
	struct iovec iov[32];
	__u64 dl[32];
	void *buf;
	int k;

	SETUP_SKIPPED();
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 64 << 20));
	buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	for (k = 0; k < 32; k++) {
		iov[k].iov_base = buf;
		iov[k].iov_len = len;
		dl[k] = SEC(10);
	}
	/* 32 x 64 MiB is 2 GiB: the last section would lose 4 KiB. */
	EXPECT_ERRNO(EMSGSIZE, tl_sendv(self->snd, iov, 32, dl, 32, TL_DEADLINE,
					MSG_TL | MSG_DONTWAIT));
	/* Below the cut, the same call is fine. */
	iov[0].iov_len = 1 << 20;
	iov[1].iov_len = 1 << 20;
	EXPECT_EQ(2 << 20, tl_sendv(self->snd, iov, 2, dl, 2, TL_DEADLINE,
				    MSG_TL | MSG_DONTWAIT)) TH_LOG("%s", strerror(errno));
	munmap(buf, len);
}

/*
 * A section that expires while TCP is still taking its first record: the
 * bytes of it TCP holds but has not sent go out late, and that is what
 * bytes_obsolete_late counts, which needs the record's end from its start
 * (more than nothing, less than all that was handed over).  TCP takes the
 * record in parts: a small SO_SNDBUF, a TL_NOTSENT as large as a record.
 */
TL_TEST(obsolete_late_in_first_record)
{
	const size_t len = 200000;
	struct tl_info info;
	int sndbuf = 8192, k;

	SETUP_SKIPPED();
	shape_lo(_metadata, 2000000);
	for (k = 0; k < 4; k++) {
		reopen(_metadata, self, variant, &default_opts);
		ASSERT_EQ(0, setsockopt(self->snd, SOL_SOCKET, SO_SNDBUF, &sndbuf,
					sizeof(sndbuf)));
		ASSERT_EQ(0, set_u32(self->snd, TL_NOTSENT, 65536));
		ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 1 << 20));
		ASSERT_EQ((ssize_t)len, tl_send1(self->snd, k, len, MSEC(50),
						 MSG_DONTWAIT));
		sleep_ms(300);
		ASSERT_EQ(0, get_info(self->snd, &info));
		ASSERT_EQ(1, info.sections_abandoned_partial);
		TH_LOG("connection %d: %llu bytes handed to TCP, %llu late", k,
		       (unsigned long long)info.bytes_sent,
		       (unsigned long long)info.bytes_obsolete_late);
		EXPECT_LT(0, info.bytes_obsolete_late);
		EXPECT_GT(info.bytes_sent, info.bytes_obsolete_late);
	}
}

/* A KCM parser: every message is 4 bytes (r0 = 4; exit). */
static int kcm_parser(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 4 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	return syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

/*
 * KCM writes into the lower socket from the kernel.  Whatever path it
 * takes, nothing raw may enter the framed stream: the receiver gets the
 * message as data or nothing, never a framing error.  (Debian's 6.1 and
 * 6.12 KCM write through the socket's sendpage and sendmsg, which the
 * module frames; sendmsg_locked and sendpage_locked, which other
 * in-kernel writers use, are refused.)
 */
TL_TEST(kcm_cannot_write_raw)
{
	struct kcm_attach att;
	int kcm, prog, ret;
	char buf[64];

	SETUP_SKIPPED();
	kcm = socket(AF_KCM, SOCK_DGRAM, KCMPROTO_CONNECTED);
	if (kcm < 0)
		SKIP(return, "no AF_KCM: %s", strerror(errno));
	prog = kcm_parser();
	ASSERT_LE(0, prog) TH_LOG("BPF_PROG_LOAD: %s", strerror(errno));
	att.fd = self->snd;
	att.bpf_fd = prog;
	ret = ioctl(kcm, SIOCKCMATTACH, &att);
	if (!ret) {
		EXPECT_EQ(4, send(kcm, "RAW!", 4, MSG_DONTWAIT))
			TH_LOG("send on KCM: %s", strerror(errno));
		sleep_ms(300);
	} else {
		TH_LOG("KCM refused the socket (%s): nothing can get through",
		       strerror(errno));
	}
	ret = recv(self->rcv, buf, sizeof(buf), MSG_DONTWAIT);
	if (ret < 0) {
		EXPECT_EQ(EAGAIN, errno) TH_LOG("the receiver got: %s", strerror(errno));
	} else {
		EXPECT_TRUE(ret == 4 && !memcmp(buf, "RAW!", 4))
			TH_LOG("the receiver got %d bytes", ret);
	}
	close(kcm);
	close(prog);
}

/* Memory */

/* A /proc/meminfo value in kB, or -1. */
static long long meminfo_kb(const char *key)
{
	char line[256];
	long long v = -1;
	size_t klen = strlen(key);
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = atoll(line + klen + 1);
			break;
		}
	fclose(f);
	return v;
}

/* TCP's memory in pages (/proc/net/sockstat "mem"), or -1. */
static long long sockstat_tcp_pages(void)
{
	long long inuse, orphan, tw, alloc, mem = -1;
	char line[256];
	FILE *f = fopen("/proc/net/sockstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TCP: inuse %lld orphan %lld tw %lld alloc %lld mem %lld",
			   &inuse, &orphan, &tw, &alloc, &mem) == 5)
			break;
	fclose(f);
	return mem;
}

/*
 * What a user pins: @n connected pairs whose receivers never read, each
 * sender filled without blocking until it refuses.  With @tl, both ends
 * run tltcp and the sender offers MSG_TL sections of @sec_len bytes, then
 * write() data.  Results in the job.
 */
struct pin_job {
	int family, n;
	bool tl, drop_privileges;
	__u32 sndq_limit;	/* TL_SNDQ_LIMIT to ask for, 0: none */
	size_t sec_len;
	void *buf;		/* sec_len bytes, or NULL: the child's own */
	/* out */
	int limit_errno;	/* of setting sndq_limit, 0: accepted */
	int big_errno;		/* of a 64 MiB section */
	int stop_errno;		/* what the last send said */
	__u64 offered;		/* bytes accepted */
	__u64 held_tcp;		/* pin_compare(): plain TCP's held */
	__u64 held;		/* bytes the senders held when they refused */
	__u64 sndbuf;		/* their SO_SNDBUF then, summed */
	long long free_before, free_after;		/* kB */
	long long sockstat_before, sockstat;		/* pages */
	bool ready;
};

/* Sections as large as the socket takes (from j->sec_len down), then
 * plain writes, until the socket refuses.
 */
/* What the sender holds the moment it refused more: TCP's write queue
 * (SIOCOUTQ: unacknowledged and unsent bytes) and tltcp's own queue.
 * Unlike the bytes accepted, it does not count what reached the
 * receiver meanwhile, which depends on how fast the machine runs.
 */
static void held_by_sender(struct pin_job *j, int fd)
{
	struct tl_info info;
	socklen_t len;
	int outq, buf;

	if (!ioctl(fd, SIOCOUTQ, &outq) && outq > 0)
		j->held += outq;
	len = sizeof(buf);
	if (!getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, &len) && buf > 0)
		j->sndbuf += buf;
	len = sizeof(info);
	if (j->tl && !getsockopt(fd, SOL_TLTCP, TL_INFO, &info, &len))
		j->held += info.bytes_queued;
}

static void pin_fill(struct pin_job *j, int fd)
{
	size_t len = j->sec_len;
	__u64 dl = SEC(600);
	struct iovec iov;
	ssize_t ret;

	for (;;) {
		iov.iov_base = j->buf;
		iov.iov_len = len;
		if (j->tl)
			ret = tl_sendv(fd, &iov, 1, &dl, 1, TL_DEADLINE,
				       MSG_TL | MSG_DONTWAIT);
		else
			ret = send(fd, j->buf, len, MSG_DONTWAIT);
		if (ret < 0 && errno == EMSGSIZE && len > 1024) {
			len /= 2;
			continue;
		}
		if (ret <= 0)
			break;
		j->offered += ret;
	}
	j->stop_errno = errno;
	while ((ret = send(fd, j->buf, 65536, MSG_DONTWAIT)) > 0)
		j->offered += ret;
	held_by_sender(j, fd);
}

/* Is a 64 MiB section refused?  On a pair of its own, before measuring. */
static int pin_probe_big(struct pin_job *j, int lfd,
			 const struct sockaddr_storage *ss, socklen_t slen)
{
	struct iovec iov = { .iov_len = 64 << 20 };
	__u64 dl = SEC(600);
	int c, s;

	c = socket(j->family, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (const struct sockaddr *)ss, slen))
		return -1;
	s = accept(lfd, NULL, NULL);
	if (s < 0 || tl_attach(c) || tl_attach(s))
		return -1;
	iov.iov_base = malloc(iov.iov_len);
	if (!iov.iov_base)
		return -1;
	memset(iov.iov_base, 1, iov.iov_len);
	j->big_errno = tl_sendv(c, &iov, 1, &dl, 1, TL_DEADLINE,
				MSG_TL | MSG_DONTWAIT) < 0 ? errno : 0;
	free(iov.iov_base);
	close(s);
	close(c);
	return 0;
}

static int child_pin(struct pin_job *j)
{
	int *snd = calloc(j->n, sizeof(int)), *rcv = calloc(j->n, sizeof(int));
	struct sockaddr_storage ss;
	socklen_t slen;
	int lfd, k;

	if (!snd || !rcv)
		return 10;
	if (!j->buf) {
		j->buf = malloc(j->sec_len);
		if (!j->buf)
			return 10;
		memset(j->buf, 0x5a, j->sec_len);
	}
	if (j->drop_privileges &&
	    (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
		return 11;
	loopback_addr(j->family, &ss, &slen);
	lfd = socket(j->family, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&ss, slen) ||
	    listen(lfd, j->n) || getsockname(lfd, (struct sockaddr *)&ss, &slen))
		return 12;
	if (j->tl && j->drop_privileges && pin_probe_big(j, lfd, &ss, slen))
		return 16;
	j->free_before = meminfo_kb("MemFree");
	j->sockstat_before = sockstat_tcp_pages();
	for (k = 0; k < j->n; k++) {
		snd[k] = socket(j->family, SOCK_STREAM, 0);
		if (snd[k] < 0 || connect(snd[k], (struct sockaddr *)&ss, slen))
			return 13;
		rcv[k] = accept(lfd, NULL, NULL);
		if (rcv[k] < 0)
			return 14;
		if (j->tl && (tl_attach(snd[k]) || tl_attach(rcv[k])))
			return 15;
		if (j->tl && j->sndq_limit &&
		    set_u32(snd[k], TL_SNDQ_LIMIT, j->sndq_limit) && !k)
			j->limit_errno = errno;
		pin_fill(j, snd[k]);
	}
	/* Let TCP settle: what it holds in flight lands at the receivers. */
	sleep_ms(1000);
	j->free_after = meminfo_kb("MemFree");
	j->sockstat = sockstat_tcp_pages();
	j->ready = true;
	/* Receivers first: their unread data resets the senders. */
	for (k = 0; k < j->n; k++)
		close(rcv[k]);
	for (k = 0; k < j->n; k++)
		close(snd[k]);
	return 0;
}

/* Run child_pin with @j, return with its results in @j. */
static void run_pin(struct __test_metadata *_metadata, struct pin_job *j)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(child_pin(j));
	}
	EXPECT_EQ(0, reap(pid));
	/* Let the resets and the frees happen before the next run. */
	sleep_ms(1500);
}

/*
 * Kernel memory pinned per pair by @n pairs of an unprivileged user, plain
 * TCP then tltcp (its job in @tl), on lo as shaped now: kB of free memory
 * in @kb[0] (TCP) and @kb[1] (tltcp), kB of TCP's accounted memory
 * (/proc/net/sockstat) in @acct[0] and @acct[1].
 */
static void pin_compare(struct __test_metadata *_metadata, int family, int n,
			long long kb[2], long long acct[2], struct pin_job *tl)
{
	struct pin_job *tcp = shared_alloc(sizeof(*tcp));

	ASSERT_NE(NULL, tcp);
	*tcp = (struct pin_job){ .family = family, .n = n,
				 .drop_privileges = true, .sec_len = 1 << 20 };
	*tl = *tcp;
	tl->tl = true;
	tl->sndq_limit = 256 << 20;
	run_pin(_metadata, tcp);
	run_pin(_metadata, tl);
	ASSERT_TRUE(tcp->ready && tl->ready);
	tl->held_tcp = tcp->held;
	kb[0] = (tcp->free_before - tcp->free_after) / n;
	kb[1] = (tl->free_before - tl->free_after) / n;
	acct[0] = (tcp->sockstat - tcp->sockstat_before) * 4 / n;
	acct[1] = (tl->sockstat - tl->sockstat_before) * 4 / n;
	TH_LOG("%d pairs: pinned per pair: TCP %lld kB (%llu B offered, %llu B held, SO_SNDBUF %llu, sockstat +%lld kB), "
	       "tltcp %lld kB (%llu B offered, %llu B held, SO_SNDBUF %llu, sockstat +%lld kB)", n,
	       kb[0], (unsigned long long)tcp->offered / n,
	       (unsigned long long)tcp->held / n,
	       (unsigned long long)tcp->sndbuf / n, acct[0], kb[1],
	       (unsigned long long)tl->offered / n,
	       (unsigned long long)tl->held / n,
	       (unsigned long long)tl->sndbuf / n, acct[1]);
	munmap(tcp, sizeof(*tcp));
}

/*
 * An unprivileged user cannot raise TL_SNDQ_LIMIT beyond what SO_SNDBUF
 * would give (EPERM) nor queue a section beyond the limits (EMSGSIZE),
 * and pairs whose receivers never read pin at most about twice what plain
 * TCP pins on the same path: over lo, in TCP's accounting and in the
 * free memory of the machine (a few MB per pair: anything uncharged
 * would show), and across a
 * 5 Mbit/s link, where a fresh connection's buffers stay small (50-100 kB
 * per pair, below the noise of both the free-memory count and sockstat's,
 * which per-CPU reserves blur), in the bytes the senders held when they
 * refused more (not the bytes they accepted: in a debug kernel, slow
 * enough for more to reach the receivers while the sender fills its
 * queue, tltcp's accepted 2.25 times TCP's, 2026-11-26).
 */
TL_TEST(unprivileged_memory_bound)
{
	long long kb[2], acct[2];
	struct pin_job *tl;

	SETUP_SKIPPED();
	tl = shared_alloc(sizeof(*tl));
	ASSERT_NE(NULL, tl);
	pin_compare(_metadata, variant->family, 8, kb, acct, tl);
	EXPECT_EQ(EPERM, tl->limit_errno);
	EXPECT_EQ(EMSGSIZE, tl->big_errno) TH_LOG("64 MiB section: %s",
						  strerror(tl->big_errno));
	EXPECT_EQ(EAGAIN, tl->stop_errno) TH_LOG("the queue ended with %s",
						 strerror(tl->stop_errno));
	EXPECT_LT(0, acct[0]);
	/* TCP's own count of what it holds (sockstat) is the stable
	 * yardstick: its free-memory drop ranges from half of that (7.x:
	 * over lo, the sender's clones and the receiver share pages) to
	 * all of it.  tltcp's charge stays within twice TCP's, what it
	 * takes from free memory within twice the larger of TCP's two,
	 * and what it takes is charged (free memory is noisy: half again,
	 * plus 512 kB).
	 */
	EXPECT_GE(2 * acct[0], acct[1]);
	EXPECT_GE(2 * (kb[0] > acct[0] ? kb[0] : acct[0]), kb[1]);
	EXPECT_GE(acct[1] + acct[1] / 2 + 512, kb[1]);

	shape_lo(_metadata, 5000000);
	pin_compare(_metadata, variant->family, 64, kb, acct, tl);
	EXPECT_EQ(EAGAIN, tl->stop_errno) TH_LOG("the queue ended with %s",
						 strerror(tl->stop_errno));
	EXPECT_LT(0, tl->held);
	/* The module's own bound: what a socket holds stays below its
	 * SO_SNDBUF but for one admitted section, itself at most SO_SNDBUF
	 * (tltcp_max_section()).
	 */
	EXPECT_GE(2 * tl->sndbuf, tl->held);
	/* Against plain TCP's run: both send buffers grow with their
	 * connections' windows, which on a slow machine grow differently
	 * from run to run (the debug kernel beside another guest: TCP held
	 * 52,746 B per pair, tltcp 121,511, 2026-11-26); logged there.
	 */
	EXPECT_TIMED(tl->held <= 2 * tl->held_tcp,
		     "tltcp held %llu B, twice TCP's %llu B",
		     (unsigned long long)tl->held,
		     (unsigned long long)(2 * tl->held_tcp));
}

/* Write @val to the initial network namespace's /proc/sys/@path (tcp_mem
 * is global), saving the old value in @old (may be NULL).
 */
static int write_init_sysctl(const char *path, const char *val, char *old,
			     size_t oldlen)
{
	int self_ns = open("/proc/self/ns/net", O_RDONLY);
	int init_ns = open("/proc/1/ns/net", O_RDONLY);
	int ret = -1;
	FILE *f;

	if (self_ns < 0 || init_ns < 0 || setns(init_ns, CLONE_NEWNET))
		goto out;
	if (old) {
		f = fopen(path, "r");
		if (!f || !fgets(old, oldlen, f))
			goto back;
		fclose(f);
	}
	f = fopen(path, "w");
	if (f) {
		ret = fputs(val, f) < 0 ? -1 : 0;
		if (fclose(f))
			ret = -1;
	}
back:
	if (setns(self_ns, CLONE_NEWNET))
		ret = -1;
out:
	close(self_ns);
	close(init_ns);
	return ret;
}

/*
 * A small tcp_mem (hard limit 16 MiB) and a privileged sender asking
 * for 32 MiB queues on 16 connections: TCP's memory stays about at the
 * hard limit (TCP itself may force one skb per socket past it).
 */
TL_TEST(tcp_mem_bounds_queue)
{
	const long long hard = 4096;	/* pages */
	struct pin_job *tl;
	char old[128];

	SETUP_SKIPPED();
	tl = shared_alloc(sizeof(*tl));
	ASSERT_NE(NULL, tl);
	*tl = (struct pin_job){ .family = variant->family, .n = 16, .tl = true,
				.sndq_limit = 32 << 20, .sec_len = 1 << 20 };
	ASSERT_EQ(0, write_init_sysctl("/proc/sys/net/ipv4/tcp_mem",
				       "2048 3072 4096", old, sizeof(old)));
	run_pin(_metadata, tl);
	ASSERT_EQ(0, write_init_sysctl("/proc/sys/net/ipv4/tcp_mem", old,
				       NULL, 0));
	ASSERT_TRUE(tl->ready);
	TH_LOG("tcp_mem hard limit %lld pages: sockstat says %lld, %llu B offered",
	       hard, tl->sockstat, (unsigned long long)tl->offered);
	EXPECT_EQ(0, tl->limit_errno);
	EXPECT_GE(hard + 16 * 64, tl->sockstat);
}

/*
 * A sender in a memory cgroup of 128 MiB that asks for 512 MiB of queue:
 * the cgroup's peak stays within its limit, and the machine's free
 * memory does not drop by much more than it.
 */
TL_TEST(memcg_bounds_queue)
{
	char dir[128], path[192], line[64];
	long long peak = -1, drop;
	struct pin_job *tl;
	pid_t pid;
	FILE *f;

	SETUP_SKIPPED();
	if (access("/sys/fs/cgroup/cgroup.subtree_control", W_OK))
		SKIP(return, "no cgroup v2 hierarchy at /sys/fs/cgroup");
	if (system("echo +memory > /sys/fs/cgroup/cgroup.subtree_control"))
		SKIP(return, "the memory controller is not available");
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/tltcp-test-%d", getpid());
	ASSERT_EQ(0, mkdir(dir, 0755));
	snprintf(path, sizeof(path), "echo 128M > %s/memory.max", dir);
	ASSERT_EQ(0, system(path));
	snprintf(path, sizeof(path), "echo 0 > %s/memory.swap.max 2>/dev/null", dir);
	if (system(path))
		TH_LOG("no memory.swap.max (no swap accounting): continuing");

	tl = shared_alloc(sizeof(*tl));
	ASSERT_NE(NULL, tl);
	*tl = (struct pin_job){ .family = variant->family, .n = 16, .tl = true,
				.sndq_limit = 32 << 20, .sec_len = 4 << 20 };
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* The data buffer is charged where it was touched: outside. */
		tl->buf = malloc(tl->sec_len);
		if (!tl->buf)
			_exit(21);
		memset(tl->buf, 0x5a, tl->sec_len);
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		f = fopen(path, "w");
		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
			_exit(20);
		_exit(child_pin(tl));
	}
	/* Killed by the cgroup's OOM killer is a bound kept, too. */
	TH_LOG("the child ended with %d", reap(pid));
	snprintf(path, sizeof(path), "%s/memory.peak", dir);
	f = fopen(path, "r");
	if (f && fgets(line, sizeof(line), f))
		peak = atoll(line);
	if (f)
		fclose(f);
	sleep_ms(1500);
	rmdir(dir);
	drop = tl->ready ? tl->free_before - tl->free_after : -1;
	TH_LOG("memory.peak %lld kB, free memory dropped by %lld kB, %llu B offered",
	       peak >> 10, drop, (unsigned long long)tl->offered);
	ASSERT_LT(0, peak) TH_LOG("no memory.peak");
	/* A task the cgroup kills may still charge a page or two. */
	EXPECT_GE((128LL << 20) + (256 << 10), peak);
	if (tl->ready)
		EXPECT_GE((128 + 32) << 10, drop);
}

/*
 * j. 1000 connections at once, tltcp on both ends of each: every one
 * carries its own 1000-byte section intact.
 */
TL_TEST(thousand_connections)
{
	const int n = 1000;
	const struct rlimit rl = { 4096, 4096 };
	struct sockaddr_storage ss;
	int *c = calloc(n, sizeof(int)), *s = calloc(n, sizeof(int));
	__u8 buf[2000];
	struct rxmsg m;
	socklen_t len;
	int lfd, i;
	__u32 got;

	SETUP_SKIPPED();
	ASSERT_NE(NULL, c);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	lfd = tl_listener(_metadata, variant->family, 0, &ss, &len);
	for (i = 0; i < n; i++) {
		c[i] = socket(variant->family, SOCK_STREAM, 0);
		ASSERT_LE(0, c[i]) TH_LOG("socket %d: %s", i, strerror(errno));
		ASSERT_EQ(0, connect(c[i], (struct sockaddr *)&ss, len))
			TH_LOG("connect %d: %s", i, strerror(errno));
		s[i] = accept(lfd, NULL, NULL);
		ASSERT_LE(0, s[i]) TH_LOG("accept %d: %s", i, strerror(errno));
		set_timeouts(c[i], 10000);
		set_timeouts(s[i], 10000);
		ASSERT_EQ(0, tl_attach(c[i])) TH_LOG("attach %d: %s", i, strerror(errno));
		ASSERT_EQ(0, tl_attach(s[i])) TH_LOG("attach %d: %s", i, strerror(errno));
	}
	close(lfd);
	for (i = 0; i < n; i++) {
		/* section 0 of every connection, made distinct by i */
		__u8 *p = section_buf(i, 1000);
		struct iovec iov = { p, 1000 };
		__u64 dl = dl_never();

		ASSERT_NE(NULL, p);
		ASSERT_EQ(1000, tl_sendv(c[i], &iov, 1, &dl, 1, TL_DEADLINE, MSG_TL))
			TH_LOG("send %d: %s", i, strerror(errno));
		free(p);
	}
	for (i = 0; i < n; i++) {
		for (got = 0; got < 1000; got += m.ret) {
			tl_recv(s[i], buf, sizeof(buf), MSG_TL, &m);
			ASSERT_LT(0, m.ret) TH_LOG("connection %d: %s", i,
						   m.ret ? strerror(m.err) : "EOF");
			ASSERT_EQ(TL_DATA, m.type) TH_LOG("connection %d", i);
			ASSERT_EQ(0, m.r.section);
			ASSERT_EQ(1000, m.r.sec_len);
			ASSERT_EQ(got, m.r.sec_off);
			ASSERT_EQ(-1, mismatch(buf, i, got, m.ret))
				TH_LOG("connection %d: wrong data", i);
		}
		ASSERT_EQ(1000, got);
		ASSERT_EQ(TL_REC_SECTION_END, m.r.flags);
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, close(c[i]));
		ASSERT_EQ(0, close(s[i]));
	}
	free(c);
	free(s);
}

/*
 * k. The module cannot be removed while a socket uses it; the sockets
 * keep working; afterwards the module is loaded again for what follows.
 */
TL_TEST(rmmod_refused_while_used)
{
	char line[256];
	bool listed = false;
	FILE *f;
	struct rx rx;

	SETUP_SKIPPED();
	EXPECT_NE(0, system("rmmod tltcp 2>/dev/null"))
		TH_LOG("rmmod tltcp succeeded with tltcp sockets open");
	f = fopen("/proc/modules", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "tltcp ", 6))
			listed = true;
	fclose(f);
	EXPECT_TRUE(listed);
	if (listed) {
		ASSERT_EQ(0, rx_init(&rx, NULL, 0, 65536));
		roundtrip(_metadata, &rx, self->snd, self->rcv, 0, 3000);
		rx_free(&rx);
	}
	close(self->snd);
	close(self->rcv);
	self->snd = -1;
	self->rcv = -1;
	ASSERT_EQ(0, system("modprobe tltcp"));
}

/*
 * A section larger than the queue limit is refused (EMSGSIZE): it could
 * overshoot the limit by its size.  Once the limit is raised, a blocking
 * sendmsg() takes it whole and it is delivered intact.
 */
TL_TEST(section_larger_than_queue_limit)
{
	const __u64 lens[1] = { 1 << 20 };
	pid_t pid;

	SETUP_SKIPPED();
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 65536));
	EXPECT_EQ(-1, tl_send1(self->snd, 0, 65537, SEC(20), 0));
	EXPECT_EQ(EMSGSIZE, errno);
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 1 << 20));
	pid = spawn_send(self->snd, lens, 1, dl_never(), 0);
	ASSERT_LT(0, pid);
	set_timeouts(self->rcv, 20000);
	expect_delivered(_metadata, self->rcv, lens, 1, pid);
}

/* A millisecond of @rate bytes/s times @f, clamped as the module clamps. */
static __u32 ms_of(double rate, double f, __u32 mss)
{
	double lo = 2.0 * mss > 1024 ? 2.0 * mss : 1024, hi = 131072;
	double b = rate / 1000 * f;

	if (hi < lo)
		hi = lo;
	return b < lo ? lo : b > hi ? hi : b;
}

/* TCP's pacing rate in bytes/s (tcpi_pacing_rate, which glibc's tcp_info
 * lacks), 0 if the kernel does not report it.
 */
static __u64 pacing_rate(int fd)
{
	struct {
		struct tcp_info ti;
		__u64 pacing_rate;
	} info;
	socklen_t len = sizeof(info);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) ||
	    len < sizeof(info))
		return 0;
	return info.pacing_rate;
}

/* What the module should report as TL_NOTSENT for a pacing rate: one
 * 1024th of a second of it (sk_pacing_shift 10), clamped.
 */
static __u32 notsent_of_pacing(__u64 pacing, __u32 mss)
{
	return ms_of(pacing / 1024.0 * 1000, 1, mss);
}

struct notsent_sample {
	__u32 notsent;		/* median TL_NOTSENT in the second half */
	unsigned int n;		/* samples taken */
	unsigned int tracked;	/* of which within a quarter of the pacing */
	__u64 pacing;		/* median pacing rate, bytes/s */
	double rate;		/* what the receiver got, bytes/s */
};

static void sort_u64(__u64 *v, int n)
{
	int i, k;

	for (i = 1; i < n; i++)
		for (k = i; k > 0 && v[k - 1] > v[k]; k--) {
			__u64 t = v[k];

			v[k] = v[k - 1];
			v[k - 1] = t;
		}
}

/* Stream for @secs seconds from the fixture's sender (a child writes);
 * over the second half, every 50 ms, read TL_NOTSENT between two reads of
 * TCP's pacing rate: a sample tracks the pacing rate when it lies within a
 * quarter of what the two rates give.  @out gets the medians, the counts
 * and the bytes per second the receiver got meanwhile.
 */
static void stream_notsent(struct __test_metadata *_metadata,
			   FIXTURE_DATA(tltcp) *self, unsigned int secs,
			   __u32 mss, struct notsent_sample *out)
{
	const size_t bufsz = 65536;
	__u64 t0, half, end, got = 0, next;
	__u64 v[256], pr[256], pa, pb;
	__u8 *buf = malloc(bufsz);
	unsigned int tracked = 0;
	socklen_t len;
	struct job *j;
	ssize_t ret;
	int n = 0;
	__u32 x;
	pid_t pid;

	ASSERT_NE(NULL, buf);
	j = shared_alloc(sizeof(*j));
	ASSERT_NE(NULL, j);
	j->fd = self->snd;
	j->len = 1ULL << 40;
	pid = spawn(child_stream, j);
	ASSERT_LT(0, pid);
	set_timeouts(self->rcv, 1000);
	t0 = now_ns();
	half = t0 + SEC(secs) / 2;
	end = t0 + SEC(secs);
	next = half;
	while (now_ns() < end) {
		ret = recv(self->rcv, buf, bufsz, 0);
		ASSERT_LT(0, ret) TH_LOG("recv: %s", strerror(errno));
		if (now_ns() >= half)
			got += ret;
		if (now_ns() >= next && n < 256) {
			pa = pacing_rate(self->snd);
			len = sizeof(x);
			ASSERT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_NOTSENT,
						&x, &len));
			pb = pacing_rate(self->snd);
			ASSERT_NE(0, pa);
			ASSERT_NE(0, pb);
			if (x >= notsent_of_pacing(pa < pb ? pa : pb, mss) * 3 / 4 &&
			    x <= notsent_of_pacing(pa > pb ? pa : pb, mss) * 5 / 4)
				tracked++;
			v[n] = x;
			pr[n] = pa;
			n++;
			next += MSEC(50);
		}
	}
	kill(pid, SIGKILL);
	reap(pid);
	ASSERT_LT(0, n);
	sort_u64(v, n);
	sort_u64(pr, n);
	out->notsent = v[n / 2];
	out->pacing = pr[n / 2];
	out->n = n;
	out->tracked = tracked;
	out->rate = got * 1e9 / (end - half);
	free(buf);
	munmap(j, sizeof(*j));
}

/*
 * The feed TCP gets is autosized: about a millisecond of sending at TCP's
 * pacing rate (1.2 to 2 times what cwnd / srtt allows), at least two
 * segments, at most 128 KiB.  Across lo with a 1500-byte MTU, unshaped,
 * at 50 Mbit/s and at 1.5 Mbit/s, in the second half of a transfer:
 * TL_NOTSENT tracks the pacing rate TCP_INFO reports (nine samples in
 * ten within a quarter of it) and its median is at least half a
 * millisecond of the rate the receiver measured.
 * Shaped, where the machine carried the link (80 % of its rate or more:
 * headers and the ACKs, which share lo's netem, take about 6 %), it is at
 * most four milliseconds of the rate the receiver measured: two segments
 * at 1.5 Mbit/s, between the bounds at 50 Mbit/s.  Where the
 * CPU, not the link, limits the rate, TCP's pacing rate runs ahead of
 * what is carried and of the link alike (6.12 guests that carried 27.1
 * and 22.5 of the 50 Mbit/s paced at 115.5 and 363, TL_NOTSENT 13,867
 * and 42,484 bytes: 2.2 and 6.8 ms of the link, 2026-12-07); there the
 * feed is held to the pacing rate only, and logged in milliseconds of
 * the link and of what was carried.
 * Unshaped, the rate is what the CPU delivers, and TCP's pacing rate
 * runs ahead of it (1.3 to 34 Gbit/s against 0.24 to 0.51 measured in
 * TCG guests, 2026-11-27), the more so the busier the machine: there,
 * TL_NOTSENT is compared with the pacing rate only.  The bounds that
 * depend on the machine carrying 50 Mbit/s are logged, not counted, on
 * a slow machine (EXPECT_TIMED).
 */
TL_TEST(notsent_follows_rate)
{
	static const unsigned int bps[] = { 0, 50000000, 1500000 };
	struct notsent_sample m[3];
	char link[32];
	socklen_t len;
	int mss, i;

	SETUP_SKIPPED();
	ASSERT_EQ(0, system("ip link set dev lo mtu 1500"));
	for (i = 0; i < 3; i++) {
		if (bps[i])
			shape_lo(_metadata, bps[i]);
		reopen(_metadata, self, variant, &default_opts);
		len = sizeof(mss);
		ASSERT_EQ(0, getsockopt(self->snd, IPPROTO_TCP, TCP_MAXSEG,
					&mss, &len));
		stream_notsent(_metadata, self, bps[i] ? 4 : 2, mss, &m[i]);
		if (bps[i])
			snprintf(link, sizeof(link), "at %.1f Mbit/s",
				 bps[i] * 1e-6);
		else
			snprintf(link, sizeof(link), "unshaped");
		TH_LOG("lo %s: %.1f Mbit/s, pacing %.1f Mbit/s, TL_NOTSENT %u (MSS %d), %u of %u samples track the pacing rate",
		       link, m[i].rate * 8e-6, m[i].pacing * 8e-6,
		       m[i].notsent, mss, m[i].tracked, m[i].n);
		EXPECT_LE(m[i].n * 9, m[i].tracked * 10);
		EXPECT_LE(ms_of(m[i].rate, 0.5, mss), m[i].notsent);
		if (!bps[i])
			continue;
		if (m[i].rate * 8 >= bps[i] * 0.8)
			EXPECT_TIMED(m[i].notsent <= ms_of(m[i].rate, 4, mss),
				     "TL_NOTSENT %u above 4 ms of the rate",
				     m[i].notsent);
		else
			TH_LOG("%.0f %% carried: TL_NOTSENT %.1f ms of the link, %.1f of that",
			       m[i].rate * 800 / bps[i],
			       m[i].notsent * 8e3 / bps[i],
			       m[i].notsent * 1e3 / m[i].rate);
	}
	EXPECT_EQ(2 * mss, m[2].notsent);
	/* It grows with the rate, if the machine carries 50 Mbit/s: the
	 * debug kernel delivered 3.4 there (2026-11-27), two segments' worth.
	 */
	EXPECT_TIMED(m[2].notsent < m[1].notsent,
		     "TL_NOTSENT %u at 1.5 Mbit/s, %u at 50", m[2].notsent,
		     m[1].notsent);
	EXPECT_TIMED(m[1].notsent < m[0].notsent,
		     "TL_NOTSENT %u at 50 Mbit/s, %u unshaped", m[1].notsent,
		     m[0].notsent);
}

/*
 * What a deadline cannot take back is what TCP holds unsent (TL_NOTSENT)
 * plus the record in progress.  Sections that expire while they are being
 * sent, one sendmsg() each, the next once the deadline of the last has
 * passed, across lo at 1.5 Mbit/s (four 64 KiB sections living 100 ms)
 * and unshaped (64 MiB sections, 4 MiB with KSFT_MACHINE_SLOW=yes):
 * bytes_obsolete_late per section abandoned part-way is at most twice
 * TL_NOTSENT plus two headers.
 * Unshaped, how long a section takes depends on the machine and the
 * kernel, and it varies from one section to the next (3 s, then less than
 * 1.5 s, in a 6.12 guest): the first section, without a deadline, times
 * the path, the next live half that long, and each next one lives half
 * as long again if the last was sent whole, half again longer if it was
 * abandoned before its first byte, until two are abandoned part-way (at
 * most eight tries).
 */
TL_TEST(obsolete_late_within_feed)
{
	static const struct {
		unsigned int bps, tries;
		__u64 len, life;
	} c[] = {
		{ 1500000, 4, 64 << 10, MSEC(100) },
		{ 0, 8, 64 << 20, 0 },
	};
	unsigned int i, k, s, hits;
	struct tl_info info, was;
	__u64 sec_len;
	socklen_t len;
	struct job *j;
	__u64 life;
	__u32 v;
	pid_t pid;

	SETUP_SKIPPED();
	ASSERT_EQ(0, system("ip link set dev lo mtu 1500"));
	j = shared_alloc(sizeof(*j));
	ASSERT_NE(NULL, j);
	for (i = 0; i < 2; i++) {
		if (c[i].bps)
			shape_lo(_metadata, c[i].bps);
		else
			ASSERT_EQ(0, system("tc qdisc del dev lo root 2>/dev/null;"
					    " ip link set dev lo gso_max_segs 65535"
					    " 2>/dev/null; true"));
		/* A slow machine (the debug kernel: over 20 s for 64 MiB)
		 * would not finish eight of them in the test's 60 s.
		 */
		sec_len = c[i].len;
		if (!c[i].bps && machine_slow())
			sec_len = 4 << 20;
		reopen(_metadata, self, variant, &default_opts);
		ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 2 * sec_len));
		memset(j, 0, sizeof(*j));
		j->fd = self->rcv;
		pid = spawn(child_drain, j);
		ASSERT_LT(0, pid);
		s = 0;	/* the receiver checks section s against fill(s) */
		life = c[i].life;
		if (!life) {
			__u64 t0 = now_ns(), dl = SEC(600);

			ASSERT_EQ((ssize_t)sec_len,
				  tl_send1(self->snd, s++, sec_len, dl, 0));
			/* 0.5 s in Debian's kernels, over 20 s in the
			 * debug kernel (KASAN, lockdep) under TCG
			 */
			ASSERT_EQ(0, wait_drained(self->snd, 120000, &info));
			life = (now_ns() - t0) / 2;
		}
		/* TL_NOTSENT follows the rate: the largest seen while the
		 * sections were being sent bounds what each left late.
		 */
		v = 0;
		hits = 0;
		for (k = 0; k < c[i].tries && hits < 2; k++) {
			__u64 end;

			ASSERT_EQ(0, get_info(self->snd, &was));
			ASSERT_EQ((ssize_t)sec_len,
				  tl_send1(self->snd, s++, sec_len, life, 0));
			end = now_ns() + life + MSEC(5);
			while (now_ns() < end) {
				__u32 cur;

				len = sizeof(cur);
				ASSERT_EQ(0, getsockopt(self->snd, SOL_TLTCP,
							TL_NOTSENT, &cur, &len));
				v = cur > v ? cur : v;
				sleep_ms(2);
			}
			ASSERT_EQ(0, wait_drained(self->snd, 20000, &info));
			if (c[i].bps)
				continue;
			if (info.sections_abandoned_partial >
			    was.sections_abandoned_partial)
				hits++;
			else if (info.sections_completed >
				 was.sections_completed)
				life /= 2;
			else
				life += life / 2;
			life = life < MSEC(5) ? MSEC(5) : life;
		}
		ASSERT_EQ(0, shutdown(self->snd, SHUT_WR));
		EXPECT_EQ(0, reap(pid));
		EXPECT_EQ(0, j->bad);
		TH_LOG("%s: %u sections sent, %llu abandoned part-way (the last living %llu ms), %llu bytes late, TL_NOTSENT up to %u",
		       c[i].bps ? "1.5 Mbit/s" : "unshaped", s,
		       (unsigned long long)info.sections_abandoned_partial,
		       (unsigned long long)life / 1000000,
		       (unsigned long long)info.bytes_obsolete_late, v);
		EXPECT_LT(0, info.sections_abandoned_partial);
		EXPECT_GE(info.sections_abandoned_partial *
			  (2ULL * v + 2 * 20), info.bytes_obsolete_late);
	}
}

/* Arrival-aware deadlines (TL_ARRIVAL) */

/*
 * TL_ARRIVAL: off by default, TL_ARRIVAL_ON and _OFF read back, any other
 * value or length fails with EINVAL and leaves the option as it was;
 * TL_INFO returns the counters appended for it.
 */
TL_TEST(arrival_sockopt)
{
	struct tl_info info;
	socklen_t len;
	__u64 v64 = TL_ARRIVAL_ON;
	__u32 v32;

	SETUP_SKIPPED();
	len = sizeof(v32);
	v32 = 0xdead;
	ASSERT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_ARRIVAL, &v32, &len))
		TH_LOG("getsockopt(TL_ARRIVAL): %s", strerror(errno));
	EXPECT_EQ(sizeof(v32), len);
	EXPECT_EQ(TL_ARRIVAL_OFF, v32) TH_LOG("TL_ARRIVAL on by default");
	EXPECT_EQ(0, set_u32(self->snd, TL_ARRIVAL, TL_ARRIVAL_ON));
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_ARRIVAL, &v32, &len));
	EXPECT_EQ(TL_ARRIVAL_ON, v32);
	EXPECT_ERRNO(EINVAL, set_u32(self->snd, TL_ARRIVAL, 2));
	EXPECT_ERRNO(EINVAL, set_u32(self->snd, TL_ARRIVAL, ~0U));
	EXPECT_ERRNO(EINVAL, setsockopt(self->snd, SOL_TLTCP, TL_ARRIVAL,
					&v32, 2));
	EXPECT_ERRNO(EINVAL, setsockopt(self->snd, SOL_TLTCP, TL_ARRIVAL,
					&v64, sizeof(v64)));
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_ARRIVAL, &v32, &len));
	EXPECT_EQ(TL_ARRIVAL_ON, v32) TH_LOG("a refused value changed it");
	len = 2;
	EXPECT_ERRNO(EINVAL, getsockopt(self->snd, SOL_TLTCP, TL_ARRIVAL,
					&v32, &len));
	EXPECT_EQ(0, set_u32(self->snd, TL_ARRIVAL, TL_ARRIVAL_OFF));
	len = sizeof(v32);
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_ARRIVAL, &v32, &len));
	EXPECT_EQ(TL_ARRIVAL_OFF, v32);

	len = sizeof(info);
	memset(&info, 0xff, sizeof(info));
	EXPECT_EQ(0, getsockopt(self->snd, SOL_TLTCP, TL_INFO, &info, &len));
	EXPECT_EQ(sizeof(info), len);
	EXPECT_EQ(0, info.sections_abandoned_early);
	EXPECT_EQ(0, info.arrival_samples);
	EXPECT_EQ(0, info.arrival_late_max_ns);
}

/*
 * The order the receiver sees five sections in, queued by one sendmsg()
 * with deadlines 600, 500, 400, 300 and 200 s behind a TL_NOTSENT of 1 KB:
 * as queued without TL_ARRIVAL, earliest deadline first with it, except
 * the first, which TCP had begun to take (records never interleave).  The
 * sections are told apart by their contents: pat(s, offset).
 * With deadlines ten times shorter the arrival estimate abandoned the
 * section with 20 s to live, 40 KB behind TCP on lo, in two runs of
 * about six in busy 6.12 and 7.3 guests (2026-12-07): the bytes ahead of
 * it, counted below zero behind a finished record, had wrapped
 * (arrival_after_large_record).  This test is of the order; a failure
 * logs srtt and cwnd.
 */
static void arrival_order(struct __test_metadata *_metadata, int sfd,
			  int rfd, int *order)
{
	static const __u64 dl[5] = { SEC(600), SEC(500), SEC(400), SEC(300),
				     SEC(200) };
	static const size_t lens[5] = { 32000, 8000, 8000, 8000, 8000 };
	struct iovec iov[5];
	__u8 *buf = malloc(65536);
	struct rxmsg m;
	__u64 got = 0, want = 0, base = 0;
	int k, n = 0, cur = -1;

	for (k = 0; k < 5; k++)
		order[k] = -1;
	ASSERT_NE(NULL, buf);
	for (k = 0; k < 5; k++) {
		iov[k].iov_base = section_buf(k, lens[k]);
		iov[k].iov_len = lens[k];
		ASSERT_NE(NULL, iov[k].iov_base);
		want += lens[k];
	}
	ASSERT_EQ((ssize_t)want, tl_sendv(sfd, iov, 5, dl, 5, TL_DEADLINE,
					  MSG_TL))
		TH_LOG("sendmsg: %s", strerror(errno));
	while (got < want) {
		tl_recv(rfd, buf, 65536, MSG_TL, &m);
		ASSERT_LT(0, m.ret) TH_LOG("recvmsg after %llu bytes: %s",
					   (unsigned long long)got,
					   m.ret ? strerror(m.err) : "EOF");
		if (m.type != TL_DATA) {
			socklen_t tlen = sizeof(struct tcp_info);
			struct tcp_info ti = {};
			struct tl_info info;

			ASSERT_EQ(0, get_info(sfd, &info));
			getsockopt(sfd, IPPROTO_TCP, TCP_INFO, &ti, &tlen);
			ASSERT_EQ(TL_DATA, m.type)
				TH_LOG("a gap in section %llu; %llu abandoned early (srtt %u us, cwnd %u)",
				       (unsigned long long)m.r.section,
				       (unsigned long long)info.sections_abandoned_early,
				       ti.tcpi_rtt, ti.tcpi_snd_cwnd);
		}
		if (!m.r.sec_off) {
			ASSERT_GT(5, n);
			for (cur = 0; cur < 5; cur++)
				if (m.r.sec_len == lens[cur] &&
				    mismatch(buf, cur, 0, m.ret) == -1)
					break;
			ASSERT_GT(5, cur) TH_LOG("section %llu is none sent",
						 (unsigned long long)m.r.section);
			/* numbered in the order they went out */
			if (!n)
				base = m.r.section;
			ASSERT_EQ(base + n, m.r.section);
			order[n++] = cur;
		}
		EXPECT_EQ(-1, mismatch(buf, cur, m.r.sec_off, m.ret));
		got += m.ret;
	}
	for (k = 0; k < 5; k++)
		free(iov[k].iov_base);
	free(buf);
}

TL_TEST(arrival_edf_order)
{
	static const int fifo[5] = { 0, 1, 2, 3, 4 };
	static const int edf[5] = { 0, 4, 3, 2, 1 };
	int order[5];

	SETUP_SKIPPED();
	set_timeouts(self->rcv, 10000);
	ASSERT_EQ(0, set_u32(self->snd, TL_SNDQ_LIMIT, 262144));
	ASSERT_EQ(0, set_u32(self->snd, TL_NOTSENT, TL_MIN_NOTSENT));

	arrival_order(_metadata, self->snd, self->rcv, order);
	EXPECT_EQ(0, memcmp(fifo, order, sizeof(order)))
		TH_LOG("without TL_ARRIVAL received in the order %d %d %d %d %d",
		       order[0], order[1], order[2], order[3], order[4]);

	ASSERT_EQ(0, set_u32(self->snd, TL_ARRIVAL, TL_ARRIVAL_ON));
	arrival_order(_metadata, self->snd, self->rcv, order);
	EXPECT_EQ(0, memcmp(edf, order, sizeof(order)))
		TH_LOG("with TL_ARRIVAL received in the order %d %d %d %d %d",
		       order[0], order[1], order[2], order[3], order[4]);
}

/*
 * A record TCP has taken whole leaves nothing of itself ahead of the
 * sections behind it.  The arrival estimate counts the rest of the record
 * in progress as its length less what TCP took; a finished record used to
 * keep what TCP had taken, so behind one larger than the sections queued
 * after it the count went below zero and wrapped, and those sections
 * looked as if exabytes were ahead of them: abandoned early, with any
 * deadline under 1.8e19 ns / the estimated rate (the section with 20 s to
 * live that arrival_edf_order saw abandoned in busy guests, 2026-12-07).
 * With 10 ms of delay each way (netem on lo: a rate estimate of tens of
 * MB/s, so that the wrapped count means minutes), a section of 20000
 * bytes in one record (TL_NOTSENT 64 KiB) received whole, then two of
 * 100 bytes with 2 s to live: both arrive as data, and nothing was
 * abandoned early.
 */
TL_TEST(arrival_after_large_record)
{
	static const __u64 lens[3] = { 20000, 100, 100 };
	static const __u64 dl[2] = { SEC(2), SEC(2) };
	struct iovec iov[2];
	struct tl_info info;
	struct rx rx;
	int k;

	SETUP_SKIPPED();
	ASSERT_EQ(0, system("tc qdisc replace dev lo root netem delay 10ms"))
		TH_LOG("netem missing?");
	reopen(_metadata, self, variant, &default_opts);
	set_timeouts(self->rcv, 10000);
	ASSERT_EQ(0, set_u32(self->snd, TL_NOTSENT, 65536));
	ASSERT_EQ(0, set_u32(self->snd, TL_ARRIVAL, TL_ARRIVAL_ON));
	ASSERT_EQ(0, rx_init(&rx, lens, 3, 65536));
	ASSERT_EQ(20000, tl_send1(self->snd, 0, 20000, SEC(10), 0))
		TH_LOG("sendmsg: %s", strerror(errno));
	ASSERT_EQ(0, rx_section(_metadata, &rx, self->rcv));

	for (k = 0; k < 2; k++) {
		iov[k].iov_base = section_buf(k + 1, 100);
		iov[k].iov_len = 100;
		ASSERT_NE(NULL, iov[k].iov_base);
	}
	ASSERT_EQ(200, tl_sendv(self->snd, iov, 2, dl, 2, TL_DEADLINE, MSG_TL))
		TH_LOG("sendmsg: %s", strerror(errno));
	for (k = 0; k < 2; k++)
		free(iov[k].iov_base);
	ASSERT_EQ(1, rx_section(_metadata, &rx, self->rcv));
	ASSERT_EQ(2, rx_section(_metadata, &rx, self->rcv));
	EXPECT_EQ(100, rx.sec_data[1]);
	EXPECT_EQ(100, rx.sec_data[2]);
	EXPECT_EQ(0, rx.sec_gap[1] + rx.sec_gap[2]);
	ASSERT_EQ(0, get_info(self->snd, &info));
	EXPECT_EQ(0, info.sections_abandoned_early);
	rx_free(&rx);
}

/*
 * A section that cannot arrive in time is abandoned before any byte of it
 * is sent.  With 100 ms of delay each way (netem on lo), a section whose
 * deadline is 60 ms away cannot arrive by it: without TL_ARRIVAL TCP is
 * given its bytes at once (the deadline is the sender's); with it, none,
 * and the receiver gets one gap for it.  A section with 3 s to live is
 * delivered whole, and its arrival was predicted within 60 ms either way
 * (TL_INFO): a prediction of a whole srtt would be 100 ms too late.
 * With TCP_NODELAY: under Nagle's algorithm TCP holds the section's
 * sub-MSS tail until the bytes in flight are acknowledged, a round trip
 * the estimate does not model (181-307 ms late without it, within 2 ms
 * either way with it, 6.1 and 6.18 guests, 2026-11-27).
 */
TL_TEST(arrival_abandon_unreachable)
{
	static const __u64 lens[3] = { 10000, 10000, 10000 };
	struct tl_info a, b, c;
	struct rx rx;
	int one = 1;

	SETUP_SKIPPED();
	ASSERT_EQ(0, system("tc qdisc replace dev lo root netem delay 100ms"))
		TH_LOG("netem missing?");
	reopen(_metadata, self, variant, &default_opts);
	set_timeouts(self->rcv, 10000);
	ASSERT_EQ(0, rx_init(&rx, lens, 3, 65536));

	ASSERT_EQ(10000, tl_send1(self->snd, 0, 10000, MSEC(60), 0));
	ASSERT_EQ(0, get_info(self->snd, &a));
	EXPECT_LT(0, a.bytes_sent) TH_LOG("the sender-side deadline sent nothing");
	EXPECT_EQ(0, a.sections_abandoned_early);

	ASSERT_EQ(0, set_u32(self->snd, TL_ARRIVAL, TL_ARRIVAL_ON));
	ASSERT_EQ(10000, tl_send1(self->snd, 1, 10000, MSEC(60), 0));
	ASSERT_EQ(0, get_info(self->snd, &b));
	EXPECT_EQ(a.bytes_sent, b.bytes_sent) TH_LOG("%llu bytes of the section sent",
						     (unsigned long long)(b.bytes_sent - a.bytes_sent));
	EXPECT_EQ(a.sections_abandoned_unsent + 1, b.sections_abandoned_unsent);
	EXPECT_EQ(1, b.sections_abandoned_early);

	ASSERT_EQ(0, setsockopt(self->snd, IPPROTO_TCP, TCP_NODELAY, &one,
				sizeof(one)));
	ASSERT_EQ(10000, tl_send1(self->snd, 2, 10000, SEC(3), 0));
	ASSERT_EQ(0, rx_section(_metadata, &rx, self->rcv));
	ASSERT_EQ(1, rx_section(_metadata, &rx, self->rcv));
	ASSERT_EQ(2, rx_section(_metadata, &rx, self->rcv));
	ASSERT_EQ(0, setsockopt(self->rcv, IPPROTO_TCP, TCP_QUICKACK, &one,
				sizeof(one)));
	EXPECT_EQ(0, rx.sec_data[1]);
	EXPECT_EQ(10000, rx.sec_gap[1]);
	EXPECT_EQ(10000, rx.sec_data[2]);
	EXPECT_EQ(0, rx.sec_gap[2]);
	rx_free(&rx);

	/* The ACK of section 2's last byte comes 100 ms after it arrived. */
	sleep_ms(300);
	ASSERT_EQ(0, get_info(self->snd, &c));
	EXPECT_EQ(1, c.sections_abandoned_early);
	EXPECT_EQ(1, c.arrival_samples);
	TH_LOG("arrival error: %llu ns early, %llu ns late",
	       (unsigned long long)c.arrival_early_ns,
	       (unsigned long long)c.arrival_late_ns);
	EXPECT_GT(MSEC(60), c.arrival_early_max_ns);
	EXPECT_TIMED(c.arrival_late_max_ns < MSEC(60),
		     "arrival predicted %llu ns early",
		     (unsigned long long)c.arrival_late_max_ns);
}

/* TEST_HARNESS_MAIN, and KSELFTEST_TIMEOUT_SCALE (make check-debug: 4)
 * stretches each test's own timeout as the runner stretches the whole
 * program's: in the KASAN guest under TCG, tests of 10-20 s here were
 * killed at the harness's 60 s while the guest shared the machine.
 */
static void __attribute__((constructor)) tl_constructor_order_last(void)
{
	if (!__constructor_order)
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;
}

int main(int argc, char **argv)
{
	unsigned int scale = timeout_scale();
	struct __fixture_metadata *f;
	struct __test_metadata *t;

	if (scale > 1)
		for (f = __fixture_list; f; f = f->next)
			for (t = f->tests; t; t = t->next)
				t->timeout *= scale;
	return test_harness_run(argc, argv);
}
