// SPDX-License-Identifier: GPL-2.0
/* What the tools say to the TLTCP module (tltcp_msg.h). */
#include <netinet/in.h>
#include <string.h>
#include <sys/uio.h>

#include "tltcp_msg.h"

int tl_attach(int fd)
{
	return setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tltcp", sizeof("tltcp"));
}

void tl_put_deadlines(struct msghdr *msg, int type, const uint64_t *dl,
		      unsigned int n)
{
	struct cmsghdr *cm;

	msg->msg_controllen = TL_DEADLINES_SPACE(n);
	memset(msg->msg_control, 0, msg->msg_controllen);
	cm = CMSG_FIRSTHDR(msg);
	cm->cmsg_level = SOL_TLTCP;
	cm->cmsg_type = type;
	cm->cmsg_len = CMSG_LEN(n * sizeof(uint64_t));
	memcpy(CMSG_DATA(cm), dl, n * sizeof(uint64_t));
}

ssize_t tl_send_section(int fd, const void *buf, size_t len,
			uint64_t left_ns, int flags)
{
	union {
		char buf[TL_DEADLINES_SPACE(1)];
		struct cmsghdr align;
	} cb;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb.buf,
	};

	tl_put_deadlines(&msg, TL_DEADLINE, &left_ns, 1);
	return sendmsg(fd, &msg, MSG_TL | flags);
}

int tl_records(struct msghdr *msg, struct tl_record *rec, int *type)
{
	struct cmsghdr *cm;
	int n = 0;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_TLTCP ||
		    (cm->cmsg_type != TL_DATA && cm->cmsg_type != TL_GAP) ||
		    cm->cmsg_len < CMSG_LEN(sizeof(*rec)))
			continue;
		if (!n++) {
			memcpy(rec, CMSG_DATA(cm), sizeof(*rec));
			*type = cm->cmsg_type;
		}
	}
	return n;
}

int tl_set_arrival(int fd, uint32_t mode)
{
	return setsockopt(fd, SOL_TLTCP, TL_ARRIVAL, &mode, sizeof(mode));
}

int tl_get_info(int fd, struct tl_info *ti)
{
	socklen_t len = sizeof(*ti);

	memset(ti, 0, sizeof(*ti));
	return getsockopt(fd, SOL_TLTCP, TL_INFO, ti, &len);
}

#define TL_FIELD(x)	{ #x, offsetof(struct tl_info, x) }
const struct tl_info_field tl_info_fields[] = {
	TL_FIELD(sections_offered), TL_FIELD(sections_completed),
	TL_FIELD(sections_abandoned_unsent),
	TL_FIELD(sections_abandoned_partial), TL_FIELD(bytes_offered),
	TL_FIELD(bytes_sent), TL_FIELD(bytes_abandoned),
	TL_FIELD(bytes_obsolete_late), TL_FIELD(bytes_obsolete_retrans),
	TL_FIELD(bytes_queued), TL_FIELD(sections_queued),
	TL_FIELD(sections_received), TL_FIELD(bytes_received),
	TL_FIELD(gaps_received), TL_FIELD(bytes_gap),
	TL_FIELD(sections_abandoned_early), TL_FIELD(arrival_samples),
	TL_FIELD(arrival_early_ns), TL_FIELD(arrival_late_ns),
	TL_FIELD(arrival_early_max_ns), TL_FIELD(arrival_late_max_ns),
};

#undef TL_FIELD
const unsigned int tl_info_nfields = sizeof(tl_info_fields) /
				     sizeof(tl_info_fields[0]);

void tl_info_json_members(FILE *f, const struct tl_info *ti,
			  const char *first, const char *sep)
{
	unsigned int i;

	for (i = 0; i < tl_info_nfields; i++)
		fprintf(f, "%s\"%s\": %llu", i ? sep : first,
			tl_info_fields[i].name,
			(unsigned long long)tl_info_value(ti, &tl_info_fields[i]));
}
