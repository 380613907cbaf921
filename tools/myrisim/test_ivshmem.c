// SPDX-License-Identifier: GPL-2.0
/*
 * The ivshmem server protocol over a real unix socket, the test playing
 * QEMU's side (docs/specs/ivshmem-spec): the message order and values, the
 * fds that come with them, the memory being the simulator's, doorbells
 * reaching the simulator and interrupts reaching the guest, one QEMU per
 * socket, a reconnect, and two guests never sharing memory.  KTAP.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ivshmem.h"

#define PLAN 12
#define NMSG (3 + 2 * MYRI_VECTORS)

static int ntest, nfail;

static void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", cond ? "ok" : "not ok", ++ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		nfail++;
}

struct msg {
	int64_t v;
	int fd;
};

static int dial(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One message; 0, or -1 on EOF or error. */
static int recv_msg(int sock, struct msg *m)
{
	uint64_t le;
	struct iovec iov = { &le, sizeof(le) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	struct pollfd p = { sock, POLLIN, 0 };

	if (poll(&p, 1, 2000) != 1 || recvmsg(sock, &h, 0) != sizeof(le))
		return -1;
	m->v = (int64_t)le64toh(le);
	m->fd = -1;
	c = CMSG_FIRSTHDR(&h);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(&m->fd, CMSG_DATA(c), sizeof(int));
	return 0;
}

/* A QEMU's connection: all NMSG messages, or fewer on error. */
static int handshake(int sock, struct msg *m)
{
	int n = 0;

	while (n < NMSG && recv_msg(sock, &m[n]) == 0)
		n++;
	return n;
}

static void close_msgs(struct msg *m, int n)
{
	while (n--)
		if (m[n].fd >= 0)
			close(m[n].fd);
}

static int order_ok(const struct msg *m)
{
	int i, good = m[0].v == 0 && m[0].fd < 0 && m[1].v == IVS_GUEST_ID && m[1].fd < 0 &&
		      m[2].v == -1 && m[2].fd >= 0;

	for (i = 0; i < MYRI_VECTORS; i++) {
		good &= m[3 + i].v == MYRI_SIM_PEER && m[3 + i].fd >= 0;
		good &= m[3 + MYRI_VECTORS + i].v == IVS_GUEST_ID &&
			m[3 + MYRI_VECTORS + i].fd >= 0;
	}
	return good;
}

int main(void)
{
	char dir[] = "/tmp/myrisim-test-XXXXXX", p0[128], p1[128];
	struct ivs_guest g0, g1;
	struct msg m[NMSG], m1[NMSG], extra;
	uint8_t *map;
	uint64_t one = 1, v = 0;
	struct stat s0, s1;
	int c0, c1, n, rc;

	printf("KTAP version 1\n1..%d\n", PLAN);
	if (!mkdtemp(dir))
		return 1;
	snprintf(p0, sizeof(p0), "%s/h0.sock", dir);
	snprintf(p1, sizeof(p1), "%s/h1.sock", dir);
	rc = ivs_open(&g0, p0) | ivs_open(&g1, p1);
	ok(rc == 0, "two guests' sockets, memory and eventfds");
	memcpy(g0.sram, MYRI_SIGNATURE, MYRI_SIG_LEN);

	c0 = dial(p0);
	ivs_accept(&g0);
	n = handshake(c0, m);
	ok(n == NMSG && order_ok(m),
	   "%d messages: version 0, ID %d, -1 + memory, peer %d x %d + fd, ID x %d + fd", n,
	   IVS_GUEST_ID, MYRI_SIM_PEER, MYRI_VECTORS, MYRI_VECTORS);
	map = n == NMSG ? mmap(NULL, MYRI_SRAM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, m[2].fd, 0)
			: MAP_FAILED;
	ok(map != MAP_FAILED && !memcmp(map, MYRI_SIGNATURE, MYRI_SIG_LEN),
	   "the memory is the simulator's: the signature shows through");
	if (map != MAP_FAILED) {
		map[4096] = 0x5a;
		ok(g0.sram[4096] == 0x5a, "and the guest's writes show on the simulator's side");
	} else {
		ok(0, "and the guest's writes show on the simulator's side");
	}
	ok(n == NMSG && write(m[3 + MYRI_DB_SEND].fd, &one, 8) == 8 &&
	   write(m[3 + MYRI_DB_SEND].fd, &one, 8) == 8 && ivs_doorbell(&g0, MYRI_DB_SEND) == 2 &&
	   ivs_doorbell(&g0, MYRI_DB_RECV) == 0,
	   "two doorbell rings on vector %d reach the simulator, none on another", MYRI_DB_SEND);
	ivs_irq(&g0, MYRI_IRQ_EVENT);
	ok(n == NMSG && read(m[3 + MYRI_VECTORS + MYRI_IRQ_EVENT].fd, &v, 8) == 8 && v == 1,
	   "an interrupt on vector %d reaches the guest's eventfd", MYRI_IRQ_EVENT);

	c1 = dial(p0);
	ivs_accept(&g0);
	ok(recv_msg(c1, &extra) < 0 && g0.refused == 1,
	   "a second QEMU on the same socket is refused, not served");
	close(c1);

	close(c0);
	ivs_disconnect(&g0);
	c0 = dial(p0);
	ok(c0 >= 0 && ivs_accept(&g0) == 0 && handshake(c0, m1) == NMSG && order_ok(m1) &&
	   g0.connects == 2, "after a disconnect a new QEMU is served again");
	rc = fstat(m[2].fd, &s0) | fstat(m1[2].fd, &s1);
	ok(rc == 0 && s0.st_ino == s1.st_ino && s0.st_size == MYRI_SRAM_SIZE,
	   "with the same memory (%lld bytes)", (long long)s0.st_size);
	close_msgs(m1, NMSG);
	close(c0);

	c1 = dial(p1);
	ivs_accept(&g1);
	ok(handshake(c1, m1) == NMSG && fstat(m1[2].fd, &s1) == 0 && s0.st_ino != s1.st_ino,
	   "guest 1's memory is another object");
	ok(g1.sram[4096] == 0 && memcmp(g1.sram, MYRI_SIGNATURE, MYRI_SIG_LEN),
	   "and guest 0's bytes are not in it");
	close_msgs(m1, NMSG);
	close(c1);

	if (map != MAP_FAILED)
		munmap(map, MYRI_SRAM_SIZE);
	close_msgs(m, n);
	ivs_close(&g0);
	ivs_close(&g1);
	ok(access(p0, F_OK) && access(p1, F_OK) && rmdir(dir) == 0,
	   "closing removes the sockets");
	printf("# %d of %d failed\n", nfail, ntest);
	return nfail || ntest != PLAN;
}
