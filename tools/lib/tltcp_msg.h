/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tools say to the TLTCP module (include/uapi/linux/tltcp.h):
 * attaching the ULP, sections with their deadlines in a control message
 * of sendmsg(MSG_TL), and the TL_INFO counters, read and written as JSON.
 */
#ifndef TOOLS_TLTCP_MSG_H
#define TOOLS_TLTCP_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <linux/tltcp.h>

#ifndef TCP_ULP
#define TCP_ULP		31
#endif

/* Attach the "tltcp" ULP to a connected socket: 0, or -1 with errno
 * (ENOENT: the module is not loaded and may not be loaded for us).
 */
int tl_attach(int fd);

/* Room in msg_control for the deadlines of n sections. */
#define TL_DEADLINES_SPACE(n)	CMSG_SPACE((n) * sizeof(uint64_t))

/*
 * Fill msg's control buffer (of TL_DEADLINES_SPACE(n) bytes or more) with
 * one control message of type TL_DEADLINE (ns from the call) or
 * TL_DEADLINE_ABS (CLOCK_MONOTONIC ns): one deadline per iovec, a section
 * each.  Sets msg_controllen.
 */
void tl_put_deadlines(struct msghdr *msg, int type, const uint64_t *dl,
		      unsigned int n);

/* One section of len bytes, to be abandoned left_ns from now. */
ssize_t tl_send_section(int fd, const void *buf, size_t len,
			uint64_t left_ns, int flags);

/* Room in msg_control for the record of one recvmsg(MSG_TL). */
#define TL_RECORD_SPACE		CMSG_SPACE(sizeof(struct tl_record))

/*
 * The TL_DATA or TL_GAP records that came with a recvmsg(MSG_TL): how
 * many, the first in *rec and its type (TL_DATA or TL_GAP) in *type.  The
 * module sends exactly one with every read.
 */
int tl_records(struct msghdr *msg, struct tl_record *rec, int *type);

/* TL_INFO into *ti (zeroed first): 0, or -1 with errno. */
int tl_get_info(int fd, struct tl_info *ti);
/* TL_ARRIVAL: TL_ARRIVAL_ON or _OFF; 0 or -1 with errno. */
int tl_set_arrival(int fd, uint32_t mode);

/* The counters of struct tl_info by name, in the UAPI's order. */
struct tl_info_field {
	const char *name;
	size_t off;
};

extern const struct tl_info_field tl_info_fields[];
extern const unsigned int tl_info_nfields;

static inline uint64_t tl_info_value(const struct tl_info *ti,
				     const struct tl_info_field *f)
{
	return *(const uint64_t *)((const char *)ti + f->off);
}

/* Each counter as a JSON member "name": value, after first for the first
 * and after sep for the others.
 */
void tl_info_json_members(FILE *f, const struct tl_info *ti,
			  const char *first, const char *sep);

#endif /* TOOLS_TLTCP_MSG_H */
