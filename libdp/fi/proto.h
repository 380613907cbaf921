/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The provider's header in front of every dp message it sends.
 *
 * A libfabric message is sent as one or more segments, each one dp
 * message: this header, then up to a segment's bytes of payload.  dp
 * edges are lossless and in order, and an endpoint sends all segments of
 * one message before the next message, so a receiver reassembles per
 * source: offset 0 starts a message, the segment that reaches total ends
 * it.  Host byte order: dp links one cluster of one architecture (written
 * down in docs/mpi.md).
 */
#ifndef DPFI_PROTO_H
#define DPFI_PROTO_H

#include <stdint.h>

#define DPFI_PROTO_VERSION	1

#define DPFI_HF_TAGGED		0x01	/* fi_tsend*: tag is valid */
#define DPFI_HF_DATA		0x02	/* remote CQ data is valid */

struct dpfi_hdr {
	uint8_t version;		/* DPFI_PROTO_VERSION */
	uint8_t flags;			/* DPFI_HF_* */
	uint16_t reserved;		/* 0 */
	uint32_t reserved2;		/* 0 */
	uint64_t tag;
	uint64_t data;			/* remote CQ data */
	uint64_t total;			/* bytes of the whole message */
	uint64_t offset;		/* of this segment's payload in the message */
};

_Static_assert(sizeof(struct dpfi_hdr) == 40, "dpfi_hdr is 40 bytes");

#endif /* DPFI_PROTO_H */
