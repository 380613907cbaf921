/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ivshmem server side for one guest (QEMU's docs/specs/ivshmem-spec):
 * a unix socket, a shared memory object and eventfds of its own, so no
 * guest ever sees another's memory.  The simulator is peer MYRI_SIM_PEER
 * (it never connects: it only hands out its doorbell eventfds); the guest
 * gets peer ID 1.  Messages are little-endian int64s, a file descriptor
 * rides with some of them (SCM_RIGHTS).
 */
#ifndef MYRISIM_IVSHMEM_H
#define MYRISIM_IVSHMEM_H

#include <stddef.h>
#include <stdint.h>

#include "dp_myri_sram.h"

#define IVS_GUEST_ID	1

struct ivs_guest {
	char path[108];
	int listen_fd;
	int conn_fd;			/* the QEMU connected now, or -1 */
	int shm_fd;
	uint8_t *sram;			/* MYRI_SRAM_SIZE bytes, mapped */
	int db_fd[MYRI_VECTORS];	/* the guest rings us: we read */
	int irq_fd[MYRI_VECTORS];	/* we interrupt the guest: we write */
	uint64_t connects, refused;
};

/* Socket at @path (an old socket file is replaced), memory, eventfds. */
int ivs_open(struct ivs_guest *g, const char *path);
void ivs_close(struct ivs_guest *g);
/*
 * Take a connection from the listening socket: the first is served the
 * whole protocol (0 or -1), one while another is connected is refused.
 */
int ivs_accept(struct ivs_guest *g);
/* The connected QEMU went away (its socket hung up). */
void ivs_disconnect(struct ivs_guest *g);
/* Doorbell rings on vector @vec since the last call (clears them). */
uint64_t ivs_doorbell(struct ivs_guest *g, int vec);
/* Raise the guest's MSI-X vector @vec. */
void ivs_irq(struct ivs_guest *g, int vec);

#endif
