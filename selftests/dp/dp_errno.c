// SPDX-License-Identifier: GPL-2.0
/*
 * Every documented error of the endpoint interface (docs/contract.md):
 * bad pointers (EFAULT), bad bind arguments (EINVAL), wrong or unknown
 * ioctl numbers (ENOTTY), unbound endpoints (EBADFD), sends without an edge
 * (ENOTCONN), too large (EMSGSIZE), node without NID (EADDRNOTAVAIL), without
 * NIC (ENETDOWN), NID not in the NART (EHOSTUNREACH), edge limit (ENOSPC),
 * short read buffers (EMSGSIZE, message stays), a NART address of the wrong
 * length (EHOSTUNREACH), INFO and STATS at their older, shorter sizes, an
 * open mode without the right to send or to release (EBADF), a message
 * running into an unreadable page (EFAULT) -- and that unaligned user
 * pointers work.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdalign.h>
#include <termios.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200
#define ROUTE_A 150	/* test_route_change()'s own */
#define ROUTE_B 250
/* An unmapped address the compiler cannot see through. */
static void *volatile bad_ptr_v = (void *)8;
#define BAD_PTR ((void *)bad_ptr_v)

static int bind_args(int fd, uint32_t dpid, uint32_t pool, uint32_t flags, uint32_t rsv)
{
	struct dp_bind b = { .dpid = dpid, .pool_size = pool, .flags = flags, .reserved = rsv };

	return ioctl(fd, DP_IOC_BIND, &b);
}

static void test_bind_args(void)
{
	static const uint32_t bad_pool[] = {
		1, 4096, DP_POOL_MIN / 2, DP_POOL_MIN - 1, DP_POOL_MIN + 1, DP_POOL_MIN + 4096,
		3 * DP_POOL_MIN, DP_POOL_MAX * 2, DP_POOL_MAX + DP_POOL_MIN, 0x80000000u,
		0xffffffffu,
	};
	struct dp_info info;
	unsigned int i;
	int fd = dpt_open();

	KTAP_ERRNO(ioctl(fd, DP_IOC_BIND, NULL), EFAULT, "BIND with NULL: EFAULT");
	KTAP_ERRNO(ioctl(fd, DP_IOC_BIND, BAD_PTR), EFAULT, "BIND with a bad pointer: EFAULT");
	KTAP_ERRNO(bind_args(fd, 0, 0, 0, 0), EINVAL, "BIND dpid 0: EINVAL");
	KTAP_ERRNO(bind_args(fd, 300, 0, 4, 0), EINVAL, "BIND flags 4 (no DP_ADMIT_* bit): EINVAL");
	KTAP_ERRNO(bind_args(fd, 300, 0, 0x80000000u, 0), EINVAL, "BIND flags 0x80000000: EINVAL");
	KTAP_ERRNO(bind_args(fd, 300, 0, 0, 1), EINVAL, "BIND reserved 1: EINVAL");
	for (i = 0; i < sizeof(bad_pool) / sizeof(bad_pool[0]); i++)
		KTAP_ERRNO(bind_args(fd, 300, bad_pool[i], 0, 0), EINVAL,
			   "BIND pool_size %#x: EINVAL", bad_pool[i]);
	/* The failed binds left the fd unbound and the DPID free. */
	KTAP_ERRNO(dpt_info(fd, &info), EBADFD, "fd is still unbound after failed binds");
	KTAP_SUCCESS(bind_args(fd, 300, DP_POOL_MIN, 0, 0), "BIND pool_size DP_POOL_MIN works");
	KTAP_SUCCESS(dpt_info(fd, &info), "INFO after bind");
	ktap_ok(info.data_size == DP_POOL_MIN, "data_size %u", info.data_size);
	KTAP_ERRNO(bind_args(fd, 301, 0, 0, 0), EISCONN, "second BIND: EISCONN");
	close(fd);
	fd = dpt_open();
	KTAP_SUCCESS(bind_args(fd, 302, 2 * DP_POOL_MIN, 0, 0), "BIND pool_size 2*DP_POOL_MIN works");
	close(fd);
}

static void test_ioctl_numbers(int fd)
{
	struct termios tio;
	uint64_t big[8] = { 0 };

	KTAP_ERRNO(ioctl(fd, _IOW(DP_IOC_MAGIC, 1, uint64_t), big), ENOTTY,
		   "BIND number with the wrong size: ENOTTY");
	KTAP_ERRNO(ioctl(fd, _IOR(DP_IOC_MAGIC, 5, uint32_t), big), ENOTTY,
		   "INFO number with the wrong size: ENOTTY");
	KTAP_ERRNO(ioctl(fd, _IOW(DP_IOC_MAGIC, 2, struct dp_bind), big), ENOTTY,
		   "CONNECT number with the size of dp_bind: ENOTTY");
	KTAP_ERRNO(ioctl(fd, _IOR(DP_IOC_MAGIC, 8, uint32_t), big), ENOTTY,
		   "NODE_STATS number with the wrong size: ENOTTY");
	KTAP_ERRNO(ioctl(fd, _IO(DP_IOC_MAGIC, 0), 0), ENOTTY, "ioctl 'D' 0: ENOTTY");
	KTAP_ERRNO(ioctl(fd, _IO(DP_IOC_MAGIC, 99), 0), ENOTTY, "ioctl 'D' 99: ENOTTY");
	KTAP_ERRNO(ioctl(fd, _IOW(DP_IOC_MAGIC, 200, struct dp_bind), big), ENOTTY,
		   "ioctl 'D' 200: ENOTTY");
	KTAP_ERRNO(ioctl(fd, _IOW('X', 1, struct dp_bind), big), ENOTTY,
		   "ioctl with another magic: ENOTTY");
	KTAP_ERRNO(tcgetattr(fd, &tio), ENOTTY, "TCGETS: ENOTTY (not a tty)");
}

static void test_unbound(void)
{
	struct dp_addr ad = { .nid = dpt.nidb, .dpid = DPID_B };
	struct dp_send s = { .to = ad, .buf = (uintptr_t)"x", .len = 1 };
	struct dp_node_stats ns;
	struct dp_ep_stats st;
	struct dp_info info;
	uint32_t n = 1;
	char c;
	int fd = dpt_open();

	KTAP_ERRNO(ioctl(fd, DP_IOC_CONNECT, &ad), EBADFD, "unbound CONNECT: EBADFD");
	KTAP_ERRNO(ioctl(fd, DP_IOC_DISCONNECT, &ad), EBADFD, "unbound DISCONNECT: EBADFD");
	KTAP_ERRNO(ioctl(fd, DP_IOC_RELEASE, &n), EBADFD, "unbound RELEASE: EBADFD");
	KTAP_ERRNO(ioctl(fd, DP_IOC_INFO, &info), EBADFD, "unbound INFO: EBADFD");
	KTAP_ERRNO(ioctl(fd, DP_IOC_SEND, &s), EBADFD, "unbound SEND: EBADFD");
	KTAP_ERRNO(ioctl(fd, DP_IOC_STATS, &st), EBADFD, "unbound STATS: EBADFD");
	KTAP_ERRNO(write(fd, "x", 1), EBADFD, "unbound write: EBADFD");
	KTAP_ERRNO(read(fd, &c, 1), EBADFD, "unbound read: EBADFD");
	KTAP_ERRNO(fsync(fd), EBADFD, "unbound fsync: EBADFD");
	KTAP_ERRNO(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0), EBADFD, "unbound mmap: EBADFD");
	memset(&ns, 0xff, sizeof(ns));
	KTAP_SUCCESS(ioctl(fd, DP_IOC_NODE_STATS, &ns), "NODE_STATS works unbound");
	ktap_ok(ns.n == DP_CTR_COUNT && ns.nid == dpt.nida, "NODE_STATS n %u nid %u", ns.n, ns.nid);
	KTAP_ERRNO(ioctl(fd, DP_IOC_NODE_STATS, NULL), EFAULT, "NODE_STATS NULL: EFAULT");
	test_ioctl_numbers(fd);
	close(fd);
}

static void test_bad_pointers(int a)
{
	KTAP_ERRNO(ioctl(a, DP_IOC_INFO, NULL), EFAULT, "INFO NULL: EFAULT");
	KTAP_ERRNO(ioctl(a, DP_IOC_STATS, NULL), EFAULT, "STATS NULL: EFAULT");
	KTAP_ERRNO(ioctl(a, DP_IOC_CONNECT, NULL), EFAULT, "CONNECT NULL: EFAULT");
	KTAP_ERRNO(ioctl(a, DP_IOC_DISCONNECT, NULL), EFAULT, "DISCONNECT NULL: EFAULT");
	KTAP_ERRNO(ioctl(a, DP_IOC_RELEASE, NULL), EFAULT, "RELEASE NULL: EFAULT");
	KTAP_ERRNO(ioctl(a, DP_IOC_SEND, NULL), EFAULT, "SEND NULL: EFAULT");
	KTAP_ERRNO(ioctl(a, DP_IOC_INFO, BAD_PTR), EFAULT, "INFO bad pointer: EFAULT");
	KTAP_ERRNO(ioctl(a, DP_IOC_INFO, (void *)"read-only string"), EFAULT,
		   "INFO into read-only memory: EFAULT");
	KTAP_ERRNO(ioctl(a, DP_IOC_CONNECT, BAD_PTR), EFAULT, "CONNECT bad pointer: EFAULT");
}

static void test_edges(int a, int b)
{
	struct dp_addr ad = { .nid = dpt.nidb, .dpid = DPID_B };
	struct dp_send s;
	struct dp_info info;
	char m[16] = "edge";
	uint32_t i;
	int r = 0;

	KTAP_ERRNO(write(a, m, 4), ENOTCONN, "write without connect: ENOTCONN");
	{
		static char big[70000];

		/* docs/contract.md: no current edge is ENOTCONN, whatever len */
		KTAP_ERRNO(write(a, big, sizeof(big)), ENOTCONN,
			   "write of 70000 bytes without connect: ENOTCONN, not EMSGSIZE");
	}
	s = (struct dp_send){ .to = ad, .buf = (uintptr_t)m, .len = 4 };
	KTAP_ERRNO(ioctl(a, DP_IOC_SEND, &s), ENOTCONN, "SEND to an unconnected edge: ENOTCONN");
	KTAP_ERRNO(ioctl(a, DP_IOC_DISCONNECT, &ad), ENOTCONN, "DISCONNECT of an absent edge: ENOTCONN");
	KTAP_ERRNO(dpt_connect(a, 0, DPID_B), EINVAL, "CONNECT nid 0: EINVAL");
	KTAP_ERRNO(dpt_connect(a, dpt.nidb, 0), EINVAL, "CONNECT dpid 0: EINVAL");
	KTAP_SUCCESS(dpt_connect(a, dpt.nidb, DPID_B), "CONNECT A->B");
	KTAP_SUCCESS(dpt_connect(a, dpt.nidb, DPID_B), "CONNECT again is a no-op");
	dpt_info(a, &info);
	ktap_ok(info.n_edges == 1, "one edge after two identical connects (%u)", info.n_edges);
	s.flags = 1;
	KTAP_ERRNO(ioctl(a, DP_IOC_SEND, &s), EINVAL, "SEND flags 1: EINVAL");
	s.flags = 0;
	KTAP_ERRNO(write(a, BAD_PTR, 10), EFAULT, "write from a bad buffer: EFAULT");
	s.buf = (uintptr_t)BAD_PTR;
	KTAP_ERRNO(ioctl(a, DP_IOC_SEND, &s), EFAULT, "SEND from a bad buffer: EFAULT");

	/* The edge limit. */
	for (i = 1; i < 1024 && !r; i++)
		r = dpt_connect(a, 1000 + i, 7);
	ktap_ok(!r, "1024 edges can be connected");
	r = 0;
	dpt_info(a, &info);
	ktap_ok(info.n_edges == 1024, "n_edges %u", info.n_edges);
	KTAP_ERRNO(dpt_connect(a, 5000, 7), ENOSPC, "edge 1025: ENOSPC");
	KTAP_SUCCESS(dpt_connect(a, 1001, 7), "re-connecting an existing edge still works at the limit");
	dpt_info(a, &info);
	ktap_ok(info.cur.nid == 1001 && info.cur.dpid == 7, "... and makes it current (%u/%u)",
		info.cur.nid, info.cur.dpid);
	KTAP_ERRNO(write(a, m, 4), EHOSTUNREACH, "write to NID 1001 (not in the NART): EHOSTUNREACH");
	for (i = 1; i < 1024 && !r; i++)
		r = ioctl(a, DP_IOC_DISCONNECT, &(struct dp_addr){ .nid = 1000 + i, .dpid = 7 });
	ktap_ok(!r, "disconnect the 1023 extra edges");
	dpt_info(a, &info);
	ktap_ok(info.n_edges == 1, "n_edges back to %u", info.n_edges);
	KTAP_SUCCESS(dpt_connect(a, dpt.nidb, DPID_B), "CONNECT A->B current again");
	(void)b;
}

static void test_sizes(int a, int b)
{
	static uint8_t out[70000], in[70000], big[1u << 20];
	volatile size_t huge = DP_POOL_MAX / 2 + 1;	/* never read: not a buffer size */
	struct dp_ep_stats st0, st1;
	struct dp_info info;
	ssize_t r;

	dpt_info(a, &info);
	dpt_stats(b, &st0);
	/* more than any receiver's pool takes: refused before anything is read */
	KTAP_ERRNO(write(a, out, huge), EMSGSIZE, "write DP_POOL_MAX/2+1: EMSGSIZE");
	r = write(a, out, 0);
	ktap_ok(r == 0, "write of 0 bytes returns 0 (%zd)", r);
	dpt_random(out, 100);
	r = write(a, out, 100);
	ktap_ok(r == 100 && dpt_wait_readable(b, DPT_WAIT_MS) == 1, "100-byte message arrives");
	dpt_stats(b, &st1);
	ktap_ok(st1.rx_msgs == st0.rx_msgs + 1 && st1.queued == 1,
		"only the 100-byte message arrived (0-byte write sent nothing)");
	KTAP_ERRNO(read(b, in, 99), EMSGSIZE, "read with a 99-byte buffer: EMSGSIZE");
	KTAP_ERRNO(read(b, in, 1), EMSGSIZE, "read with a 1-byte buffer: EMSGSIZE");
	dpt_stats(b, &st1);
	ktap_ok(st1.queued == 1, "the message stays queued");
	r = read(b, in, 100);
	ktap_ok(r == 100 && !memcmp(in, out, 100), "read with 100 bytes gets it (%zd)", r);
	/* the session is open: max_msg is what B announced (larger than a frame) */
	dpt_info(a, &info);
	ktap_ok(info.max_msg >= sizeof(out) && info.max_msg < sizeof(big),
		"max_msg %u once open: B's pool limit", info.max_msg);
	KTAP_ERRNO(write(a, big, info.max_msg < sizeof(big) ? info.max_msg + 1 : 0), EMSGSIZE,
		   "write max_msg+1 (%u): EMSGSIZE", info.max_msg + 1);
	dpt_random(out, sizeof(out));
	r = write(a, out, sizeof(out));
	ktap_ok(r == sizeof(out) && dpt_wait_readable(b, DPT_WAIT_MS) == 1 &&
		read(b, in, sizeof(in)) == sizeof(out) && !memcmp(in, out, sizeof(out)),
		"write 70000 (fragmented) arrives intact (%zd)", r);
}

/* Unaligned user pointers: structs and buffers at odd addresses. */
static void test_unaligned(int a, int b)
{
	alignas(16) static uint8_t raw[4096], in[512];
	struct dp_info ref, *pi = (void *)(raw + 1);
	struct dp_addr *pa = (void *)(raw + 3);
	struct dp_send *ps = (void *)(raw + 129);
	struct dp_ep_stats *pst = (void *)(raw + 257);
	uint32_t *pn = (void *)(raw + 401);
	struct dp_bind *pb = (void *)(raw + 511);
	uint8_t *msg = raw + 1025;
	struct dp_info i2;
	ssize_t r;
	int fd;

	dpt_info(a, &ref);
	memset(raw, 0, sizeof(raw));
	KTAP_SUCCESS(ioctl(a, DP_IOC_INFO, pi), "INFO into an odd address");
	memcpy(&i2, pi, sizeof(i2));
	ktap_ok(!memcmp(&i2, &ref, sizeof(ref)), "... gives the same info");
	memcpy(pa, &(struct dp_addr){ .nid = dpt.nidb, .dpid = DPID_B }, sizeof(*pa));
	KTAP_SUCCESS(ioctl(a, DP_IOC_CONNECT, pa), "CONNECT from an odd address");
	dpt_random(msg, 77);
	r = write(a, msg, 77);
	ktap_ok(r == 77 && dpt_wait_readable(b, DPT_WAIT_MS) == 1, "write from an odd buffer");
	r = read(b, in + 3, 77);
	ktap_ok(r == 77 && !memcmp(in + 3, msg, 77), "read into an odd buffer");
	memcpy(ps, &(struct dp_send){ .to = { dpt.nidb, DPID_B }, .buf = (uintptr_t)(msg + 2),
				      .len = 33 }, sizeof(*ps));
	KTAP_SUCCESS(ioctl(a, DP_IOC_SEND, ps), "SEND: struct and buffer at odd addresses");
	ktap_ok(dpt_wait_readable(b, DPT_WAIT_MS) == 1, "... arrives");
	memcpy(pn, &(uint32_t){ 5 }, 4);
	KTAP_SUCCESS(ioctl(b, DP_IOC_STATS, pst), "STATS into an odd address");
	{
		struct dp_ep_stats s2;

		memcpy(&s2, pst, sizeof(s2));
		ktap_ok(s2.queued == 1, "... queued %llu", (unsigned long long)s2.queued);
	}
	r = ioctl(b, DP_IOC_RELEASE, pn);
	ktap_ok(r == 1, "RELEASE count at an odd address releases 1 (%zd)", r);
	fd = dpt_open();
	memcpy(pb, &(struct dp_bind){ .dpid = 400 }, sizeof(*pb));
	KTAP_SUCCESS(ioctl(fd, DP_IOC_BIND, pb), "BIND from an odd address");
	close(fd);
}

/*
 * A message whose bytes run into an unreadable page: EFAULT, and nothing of
 * it sent (the copy and its checksum's pass, one loop, fail part way:
 * docs/reliability.md section 7).  Then messages of every length from 1 to
 * 200 bytes, from odd addresses, arrive intact: the copy's loops by 64
 * bytes, by 8 and by the byte, each ending anywhere.
 */
static void test_straddle(int a, int b)
{
	static uint8_t in[256];
	long pg = sysconf(_SC_PAGESIZE);
	struct dp_ep_stats st0, st1;
	uint8_t *map, *p;
	uint32_t len;
	int ok = 1;

	map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (map == MAP_FAILED || mprotect(map + pg, (size_t)pg, PROT_NONE))
		ktap_bail("straddle: mmap");
	p = map + pg - 77;	/* 77 readable bytes, then the unreadable page */
	dpt_random(p, 77);
	dpt_stats(b, &st0);
	KTAP_ERRNO(write(a, p, 200), EFAULT,
		   "write of 200 bytes, the last 123 unreadable: EFAULT");
	KTAP_ERRNO(write(a, p - 3, 81), EFAULT,
		   "write of 81 bytes, the last 1 unreadable: EFAULT");
	for (len = 1; len <= 200 && ok; len++) {
		p = map + 1 + len % 7;
		dpt_random(p, len);
		ok = write(a, p, len) == (ssize_t)len &&
		     dpt_wait_readable(b, DPT_WAIT_MS) == 1 &&
		     read(b, in, sizeof(in)) == (ssize_t)len && !memcmp(in, p, len);
	}
	ktap_ok(ok, "messages of 1 to 200 bytes from odd addresses arrive intact (to %u)",
		len - 1);
	dpt_stats(b, &st1);
	ktap_ok(st1.rx_msgs == st0.rx_msgs + 200,
		"200 messages arrived, none of the faulted writes (%llu)",
		(unsigned long long)(st1.rx_msgs - st0.rx_msgs));
	munmap(map, (size_t)pg * 2);
}

/*
 * INFO and STATS grew at the end; their v1 sizes still work, others do not.
 * Each size is compared with a full read just before it, so @a's counters
 * must stand still: its message to b acknowledged first (on a slow kernel
 * the ACK came between the two reads and tx_unacked changed).
 */
static void test_old_sizes(int a)
{
	uint8_t v1[64];
	struct dp_info info;
	struct dp_ep_stats st;

	ktap_ok(dpt_wait_acked(a, DPT_WAIT_MS, &st) == 0,
		"sizes: what a sent is acknowledged, its counters stand still");
	dpt_info(a, &info);
	memset(v1, 0xee, sizeof(v1));
	KTAP_SUCCESS(ioctl(a, _IOC(_IOC_READ, DP_IOC_MAGIC, 5, 32), v1), "INFO at its v1 size (32)");
	ktap_ok(!memcmp(v1, &info, 32) && v1[32] == 0xee,
		"... fills the first 32 bytes of struct dp_info and nothing more");
	dpt_stats(a, &st);
	memset(v1, 0xee, sizeof(v1));
	KTAP_SUCCESS(ioctl(a, _IOC(_IOC_READ, DP_IOC_MAGIC, 7, 48), v1), "STATS at its v1 size (48)");
	ktap_ok(!memcmp(v1, &st, 48) && v1[48] == 0xee,
		"... fills the first 48 bytes of struct dp_ep_stats and nothing more");
	{
		uint8_t v3[128];

		dpt_stats(a, &st);
		memset(v3, 0xee, sizeof(v3));
		KTAP_SUCCESS(ioctl(a, _IOC(_IOC_READ, DP_IOC_MAGIC, 7, 96), v3),
			     "STATS at its size before the wait counters (96)");
		ktap_ok(!memcmp(v3, &st, 96) && v3[96] == 0xee,
			"... fills the first 96 bytes of struct dp_ep_stats and nothing more");
	}
	KTAP_ERRNO(ioctl(a, _IOC(_IOC_READ, DP_IOC_MAGIC, 5, 36), v1), ENOTTY, "INFO at 36 bytes: ENOTTY");
	KTAP_ERRNO(ioctl(a, _IOC(_IOC_READ, DP_IOC_MAGIC, 7, 64), v1), ENOTTY,
		   "STATS at 64 bytes: ENOTTY");
}

/* A NART entry whose address is not a MAC is no route (and leaks nothing). */
static void test_nart_alen(int a)
{
	const char *ip = dpt_ip();
	uint64_t c0;

	if (!KTAP_SUCCESS(dpt_sh("%s netns exec %s dpctl nart add 77 02:00:01", ip, dpt.nsa) ? -1 : 0,
			  "root adds NID 77 with a 3-byte link address"))
		return;
	c0 = dpt_ctr(dpt.nsa, DP_CTR_TX_DROP_NO_ROUTE);
	dpt_connect(a, 77, 5);
	KTAP_ERRNO(write(a, "x", 1), EHOSTUNREACH, "write to NID 77: EHOSTUNREACH");
	ktap_ok(dpt_ctr(dpt.nsa, DP_CTR_TX_DROP_NO_ROUTE) == c0 + 1, "... counted in tx_drop_no_route");
	dpt_sh("%s netns exec %s dpctl nart del 77", ip, dpt.nsa);
	ioctl(a, DP_IOC_DISCONNECT, &(struct dp_addr){ .nid = 77, .dpid = 5 });
	dpt_connect(a, dpt.nidb, DPID_B);
}

/* @fd's pool took in @n messages in all within 10 s, none dropped full. */
static int route_arrived(int fd, uint64_t n)
{
	struct dp_ep_stats st;

	return dpt_wait_arrivals(fd, n, 10000) == 1 && !dpt_stats(fd, &st) &&
	       st.rx_msgs == n && !st.rx_drop_full;
}

/*
 * A live edge follows the NART: the route it keeps from its last frame is
 * looked up again once the table changed.  With B's entry deleted its
 * next write finds no route (EHOSTUNREACH, counted) and is not sent; with
 * the entry back, the next arrives.  Endpoints of its own, so that their
 * pool has room and the edge its credit; and no idle give-back of that
 * credit while dpctl runs (a write without credit probes, and without a
 * route its probe goes nowhere: ETIMEDOUT, later).  The first message is
 * acknowledged before the entry goes: B's ACK arriving after it would be
 * dropped (a source not in the NART), and the first message's
 * retransmission, finding no route either, counted beside the write's.
 */
static void test_route_change(void)
{
	const uint8_t *m = dpt.macb;
	const char *ip = dpt_ip();
	struct dp_ep_stats st;
	uint64_t c0, c1;
	char idle[32];
	int a, b;

	if (dpt_param("credit_idle_ms", "600000", idle, sizeof(idle)))
		ktap_bail("credit_idle_ms");
	b = dpt_ep(dpt.nsb, ROUTE_B, 0);
	a = dpt_ep(dpt.nsa, ROUTE_A, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, ROUTE_B))
		ktap_bail("route test's endpoints");
	ktap_ok(write(a, "r1", 2) == 2 && route_arrived(b, 1) &&
		!dpt_wait_acked(a, 10000, &st),
		"a message on a new edge to B arrives, acknowledged (its route now kept)");
	c0 = dpt_ctr(dpt.nsa, DP_CTR_TX_DROP_NO_ROUTE);
	dpt_sh("%s netns exec %s dpctl nart del %u", ip, dpt.nsa, dpt.nidb);
	KTAP_ERRNO(write(a, "r2", 2), EHOSTUNREACH,
		   "B's NART entry deleted: the next write on the edge, EHOSTUNREACH");
	c1 = dpt_ctr(dpt.nsa, DP_CTR_TX_DROP_NO_ROUTE);
	if (c1 != c0 + 1)
		ktap_diag("tx_drop_no_route %llu before, %llu after",
			  (unsigned long long)c0, (unsigned long long)c1);
	ktap_ok(c1 == c0 + 1, "... counted in tx_drop_no_route");
	dpt_sh("%s netns exec %s dpctl nart add %u %02x:%02x:%02x:%02x:%02x:%02x%s",
	       ip, dpt.nsa, dpt.nidb, m[0], m[1], m[2], m[3], m[4], m[5],
	       dpt.routeb);
	ktap_ok(write(a, "r3", 2) == 2 && route_arrived(b, 2),
		"the entry back: the next write arrives");
	close(a);
	close(b);
	dpt_param("credit_idle_ms", idle, NULL, 0);
}

/*
 * The open mode, as for read(2) and write(2): an O_RDONLY endpoint only
 * receives (CONNECT, DISCONNECT, SEND: EBADF), an O_WRONLY one only sends
 * (RELEASE, fsync: EBADF); BIND, INFO and STATS work on either.
 */
static void test_modes(void)
{
	struct dp_addr to_r = { .nid = dpt.nida, .dpid = 500 };
	struct dp_send s = { .to = to_r, .buf = (uintptr_t)"m", .len = 1 };
	struct dp_ep_stats st;
	struct dp_info info;
	uint32_t n = 1;
	char c;
	int r = open("/dev/dp", O_RDONLY | O_CLOEXEC), w = open("/dev/dp", O_WRONLY | O_CLOEXEC);

	if (!ktap_ok(r >= 0 && w >= 0, "open /dev/dp O_RDONLY and O_WRONLY"))
		return;
	KTAP_ERRNO(ioctl(r, DP_IOC_CONNECT, &to_r), EBADF,
		   "O_RDONLY, unbound: CONNECT EBADF (the mode is checked first)");
	KTAP_SUCCESS(dpt_bind(r, 500, 0), "BIND on an O_RDONLY fd (a receive-only endpoint)");
	KTAP_SUCCESS(dpt_bind(w, 501, 0), "BIND on an O_WRONLY fd");
	KTAP_ERRNO(ioctl(r, DP_IOC_CONNECT, &to_r), EBADF, "O_RDONLY: CONNECT EBADF");
	KTAP_ERRNO(ioctl(r, DP_IOC_DISCONNECT, &to_r), EBADF, "O_RDONLY: DISCONNECT EBADF");
	KTAP_ERRNO(ioctl(r, DP_IOC_SEND, &s), EBADF, "O_RDONLY: SEND EBADF");
	KTAP_ERRNO(write(r, "m", 1), EBADF, "O_RDONLY: write EBADF");
	KTAP_ERRNO(ioctl(w, DP_IOC_RELEASE, &n), EBADF, "O_WRONLY: RELEASE EBADF");
	KTAP_ERRNO(fsync(w), EBADF, "O_WRONLY: fsync EBADF");
	KTAP_ERRNO(fdatasync(w), EBADF, "O_WRONLY: fdatasync EBADF");
	KTAP_ERRNO(read(w, &c, 1), EBADF, "O_WRONLY: read EBADF");
	KTAP_ERRNO(mmap(NULL, 4096, PROT_READ, MAP_SHARED, w, 0), EACCES, "O_WRONLY: mmap EACCES");
	ktap_ok(!dpt_info(r, &info) && !dpt_info(w, &info) && !dpt_stats(r, &st) &&
		!dpt_stats(w, &st), "INFO and STATS work on both");
	/* The one-way pair works: w sends, r receives and releases. */
	KTAP_SUCCESS(ioctl(w, DP_IOC_CONNECT, &to_r), "O_WRONLY: CONNECT to the O_RDONLY endpoint");
	ktap_ok(write(w, "m", 1) == 1 && dpt_wait_readable(r, DPT_WAIT_MS) == 1,
		"O_WRONLY: write, and the O_RDONLY endpoint receives");
	ktap_ok(ioctl(r, DP_IOC_RELEASE, &n) == 1 && !dpt_stats(r, &st) && st.queued == 0,
		"O_RDONLY: RELEASE releases it");
	ktap_ok(write(w, "n", 1) == 1 && dpt_wait_readable(r, DPT_WAIT_MS) == 1 && !fsync(r) &&
		!dpt_stats(r, &st) && st.queued == 0, "O_RDONLY: fsync releases the next");
	close(r);
	close(w);
}

/* Nodes without NID and without NIC (namespaces made by the runner). */
static void test_nodes(void)
{
	const char *nonid = getenv("DPT_NSN"), *nonic = getenv("DPT_NSL");
	int fd;

	if (nonid && *nonid) {
		fd = dpt_ep(nonid, 100, 0);
		if (KTAP_SUCCESS(fd, "bind in a node without NID")) {
			KTAP_SUCCESS(dpt_connect(fd, 5, 5), "connect works there (NART not consulted)");
			KTAP_ERRNO(write(fd, "x", 1), EADDRNOTAVAIL, "write from a node without NID: EADDRNOTAVAIL");
			close(fd);
		}
	} else {
		ktap_skip("DPT_NSN not set", "write from a node without NID");
	}
	if (nonic && *nonic) {
		fd = dpt_ep(nonic, 100, 0);
		if (KTAP_SUCCESS(fd, "bind in a node with NID but no NIC")) {
			dpt_connect(fd, 9999, 5);
			KTAP_ERRNO(write(fd, "x", 1), ENETDOWN, "write to a remote NID without NIC: ENETDOWN");
			close(fd);
		}
	} else {
		ktap_skip("DPT_NSL not set", "write to a remote NID without NIC");
	}
}

int main(void)
{
	int a, b;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	if (dpt_ns(dpt.nsa))
		ktap_bail("enter node A");
	test_bind_args();
	test_unbound();
	b = dpt_ep(dpt.nsb, DPID_B, 0);
	a = dpt_ep(dpt.nsa, DPID_A, 0);
	if (a < 0 || b < 0)
		ktap_bail("endpoints");
	test_bad_pointers(a);
	test_edges(a, b);
	test_sizes(a, b);
	test_unaligned(a, b);
	test_straddle(a, b);
	test_ioctl_numbers(a);
	test_old_sizes(a);
	test_nart_alen(a);
	close(a);
	close(b);
	test_route_change();
	test_modes();
	test_nodes();
	ktap_finish();
}
