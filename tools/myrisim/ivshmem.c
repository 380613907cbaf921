// SPDX-License-Identifier: GPL-2.0
/*
 * The ivshmem server protocol, one guest per socket.  On connect the guest
 * gets, in order: the protocol version (0); its own ID; -1 with the shared
 * memory's fd; the simulator's ID once per vector, each with the eventfd
 * that rings the simulator (the guest's doorbell writes to peer
 * MYRI_SIM_PEER land there); and its own ID once per vector, each with the
 * eventfd the simulator writes to raise that MSI-X vector.  The memory and
 * the eventfds outlive a connection, so a guest that reboots finds them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <endian.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ivshmem.h"

/* One message: @v as a little-endian int64, with @fd unless it is -1. */
static int send_msg(int sock, int64_t v, int fd)
{
	uint64_t le = htole64((uint64_t)v);
	struct iovec iov = { &le, sizeof(le) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &m, MSG_NOSIGNAL) == (ssize_t)sizeof(le) ? 0 : -1;
}

static int serve(struct ivs_guest *g, int sock)
{
	int i, err = 0;

	err |= send_msg(sock, 0, -1);			/* protocol version */
	err |= send_msg(sock, IVS_GUEST_ID, -1);	/* your ID */
	err |= send_msg(sock, -1, g->shm_fd);		/* the memory */
	for (i = 0; i < MYRI_VECTORS; i++)		/* peer 0: us */
		err |= send_msg(sock, MYRI_SIM_PEER, g->db_fd[i]);
	for (i = 0; i < MYRI_VECTORS; i++)		/* your vectors */
		err |= send_msg(sock, IVS_GUEST_ID, g->irq_fd[i]);
	return err ? -1 : 0;
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void init_fds(struct ivs_guest *g)
{
	int i;

	memset(g, 0, sizeof(*g));
	g->listen_fd = g->conn_fd = g->shm_fd = -1;
	for (i = 0; i < MYRI_VECTORS; i++)
		g->db_fd[i] = g->irq_fd[i] = -1;
}

int ivs_open(struct ivs_guest *g, const char *path)
{
	void *p;
	int i;

	init_fds(g);
	snprintf(g->path, sizeof(g->path), "%s", path);
	g->shm_fd = memfd_create("myrisim-sram", MFD_CLOEXEC);
	if (g->shm_fd < 0 || ftruncate(g->shm_fd, MYRI_SRAM_SIZE))
		goto fail;
	p = mmap(NULL, MYRI_SRAM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, g->shm_fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	g->sram = p;
	for (i = 0; i < MYRI_VECTORS; i++) {
		g->db_fd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		g->irq_fd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (g->db_fd[i] < 0 || g->irq_fd[i] < 0)
			goto fail;
	}
	g->listen_fd = listen_on(path);
	if (g->listen_fd < 0)
		goto fail;
	return 0;
fail:
	ivs_close(g);
	return -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void ivs_close(struct ivs_guest *g)
{
	int i;

	if (g->listen_fd >= 0)
		unlink(g->path);
	close_fd(&g->listen_fd);
	close_fd(&g->conn_fd);
	for (i = 0; i < MYRI_VECTORS; i++) {
		close_fd(&g->db_fd[i]);
		close_fd(&g->irq_fd[i]);
	}
	if (g->sram)
		munmap(g->sram, MYRI_SRAM_SIZE);
	g->sram = NULL;
	close_fd(&g->shm_fd);
}

int ivs_accept(struct ivs_guest *g)
{
	int fd = accept4(g->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return -1;
	if (g->conn_fd >= 0) {		/* one QEMU per guest */
		g->refused++;
		close(fd);
		return -1;
	}
	if (serve(g, fd)) {
		close(fd);
		return -1;
	}
	g->conn_fd = fd;
	g->connects++;
	return 0;
}

void ivs_disconnect(struct ivs_guest *g)
{
	close_fd(&g->conn_fd);
}

uint64_t ivs_doorbell(struct ivs_guest *g, int vec)
{
	uint64_t n = 0;

	if (vec < 0 || vec >= MYRI_VECTORS || read(g->db_fd[vec], &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

void ivs_irq(struct ivs_guest *g, int vec)
{
	uint64_t one = 1;
	ssize_t n;

	if (vec < 0 || vec >= MYRI_VECTORS)
		return;
	n = write(g->irq_fd[vec], &one, sizeof(one));
	(void)n;	/* fails only when the count is saturated: still pending */
}
