// SPDX-License-Identifier: GPL-2.0
/*
 * One side of a lossless-edge test between two guests (run_rel.sh drives
 * both sides and the fault relay).  Messages carry their own check:
 *
 *   u32 nonce   the stream's (a new stream, a new nonce)
 *   u32 index   0, 1, 2, ... within the stream
 *   u32 len     the message's length
 *   u32 crc     CRC32C of the bytes after this header
 *   bytes       pseudo-random, from nonce and index
 *
 * so the receiver checks every byte, the order, that nothing is missing or
 * twice, and that nothing of another stream (an older one) shows up.
 *
 *   send NID DPID NONCE COUNT [SEED]
 *	bind, connect, write COUNT messages of random sizes (blocking);
 *	print "sent N err E blocked B retrans R undelivered U unacked A"
 *	and exit 0 if all were written.  With DPT_REL_BATCH=B in the
 *	environment, runs of 1 to B messages (random) go by one
 *	DP_IOC_SENDV each, a run of 1 by write(): the batches' small
 *	messages share link frames (docs/wire.md, "Bundles").
 *   send-until NID DPID NONCE
 *	write until a write fails (ETIMEDOUT, ECONNRESET ...), print
 *	"sent N err NAME" and exit 0 if it did fail with one of those.
 *   recv DPID NONCE COUNT [STALL_MS [TIMEOUT_S [IDLE_S]]]
 *	bind (pool 256 KiB), sleep STALL_MS without reading (a negative
 *	STALL_MS: sleep -STALL_MS, then go on not reading until SIGUSR1),
 *	then read COUNT messages, for at most TIMEOUT_S (600), and check them;
 *	print "got N bad B full F dup D"; exit 0 if all COUNT arrived intact,
 *	in order, once, with rx_drop_full 0.  Keeps serving until killed or
 *	TIMEOUT_S if COUNT is 0 (restart test), printing progress to stdout.
 *	IDLE_S: give up once nothing arrived for that long (a sender that
 *	failed sends no more: the soak then ends at once, not at TIMEOUT_S).
 *   nonblock NID DPID
 *	bind, connect, write with O_NONBLOCK until the receiver's credit is
 *	used up (the receiver does not read): EAGAIN with every message sent
 *	acknowledged, so neither the congestion window nor a loss holds the
 *	writes back.  Exit 0 if poll() then shows no POLLOUT and another write
 *	still gets EAGAIN.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "dptest.h"

#define HDR	16
#define POOL	(256u * 1024)

static uint8_t buf[65536];

static uint32_t crc32c(const uint8_t *p, size_t n)
{
	static uint32_t t[256];
	uint32_t c = ~0u;
	size_t i;

	if (!t[1])
		for (i = 0; i < 256; i++) {
			uint32_t v = (uint32_t)i;
			int k;

			for (k = 0; k < 8; k++)
				v = (v >> 1) ^ (v & 1 ? 0x82F63B78u : 0);
			t[i] = v;
		}
	for (i = 0; i < n; i++)
		c = (c >> 8) ^ t[(c ^ p[i]) & 0xff];
	return ~c;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t make(uint8_t *m, uint32_t nonce, uint32_t idx, size_t max, uint64_t *s)
{
	uint64_t g = ((uint64_t)nonce << 32 | idx) * 0x9E3779B97F4A7C15ull | 1;
	size_t len = HDR + rnd(s) % (max - HDR + 1), i;
	uint32_t h[4];

	for (i = HDR; i < len; i++)
		m[i] = (uint8_t)rnd(&g);
	h[0] = nonce;
	h[1] = idx;
	h[2] = (uint32_t)len;
	h[3] = crc32c(m + HDR, len - HDR);
	memcpy(m, h, HDR);
	return len;
}

/* 0: good; 1: damaged; 2: another stream's */
static int check(const uint8_t *m, ssize_t n, uint32_t nonce, uint32_t idx)
{
	uint32_t h[4];

	if (n < HDR)
		return 1;
	memcpy(h, m, HDR);
	if (h[0] != nonce)
		return 2;
	return h[1] != idx || h[2] != (uint32_t)n || h[3] != crc32c(m + HDR, n - HDR);
}

static int endpoint(uint32_t dpid, uint32_t nid, uint32_t peer_dpid)
{
	int fd = dpt_ep_flags(NULL, dpid, nid ? 0 : POOL, 0);

	if (fd < 0) {
		printf("# bind %u: %s\n", dpid, strerror(errno));
		exit(2);
	}
	if (nid && dpt_connect(fd, nid, peer_dpid)) {
		printf("# connect %u/%u: %s\n", nid, peer_dpid, strerror(errno));
		exit(2);
	}
	return fd;
}

static uint32_t max_msg(int fd)
{
	struct dp_info info;

	if (dpt_info(fd, &info))
		return 1000;
	return info.max_msg;
}

static void report_tx(int fd, long sent, int err)
{
	struct dp_ep_stats st;

	dpt_stats(fd, &st);
	printf("sent %ld err %s blocked %llu retrans %llu undelivered %llu unacked %llu\n", sent,
	       err ? strerrorname_np(err) : "0", (unsigned long long)st.tx_blocked,
	       (unsigned long long)st.tx_retrans, (unsigned long long)st.tx_undelivered,
	       (unsigned long long)st.tx_unacked);
	fflush(stdout);
}

#define RUN_MAX	32
static uint8_t run_buf[RUN_MAX][9000];

/*
 * Messages i.. of the stream, @n of them (at most RUN_MAX, each at most
 * 9000 bytes), by one DP_IOC_SENDV to {@nid, @dpid}: how many were
 * accepted, *@err the errno of the first one not.
 */
static long send_run(int fd, uint32_t nid, uint32_t dpid, uint32_t nonce, long i, long n,
		     uint32_t max, uint64_t *s, int *err)
{
	struct dp_send m[RUN_MAX];
	struct dp_sendv v;
	long k, r;

	for (k = 0; k < n; k++) {
		memset(&m[k], 0, sizeof(m[k]));
		m[k].to.nid = nid;
		m[k].to.dpid = dpid;
		m[k].buf = (uintptr_t)run_buf[k];
		m[k].len = (uint32_t)make(run_buf[k], nonce, (uint32_t)(i + k), max, s);
	}
	memset(&v, 0, sizeof(v));
	v.msgs = (uintptr_t)m;
	v.n = (uint32_t)n;
	r = ioctl(fd, DP_IOC_SENDV, &v);
	if (r < 0) {
		*err = errno;
		return 0;
	}
	if (r < n)
		*err = (int)v.err;
	return r;
}

static int cmd_send(uint32_t nid, uint32_t dpid, uint32_t nonce, long count, uint64_t seed,
		    int until)
{
	int fd = endpoint(1000 + nonce % 1000, nid, dpid), err = 0;
	const char *b = getenv("DPT_REL_BATCH");
	long i, n, batch = b ? atol(b) : 0;
	uint32_t max = max_msg(fd);
	uint64_t s = seed | 1;

	if (batch > RUN_MAX || max > sizeof(run_buf[0]))
		batch = 0;
	for (i = 0; until || i < count; ) {
		size_t len;

		n = batch > 1 ? 1 + (long)(rnd(&s) % (uint64_t)batch) : 1;
		if (!until && n > count - i)
			n = count - i;
		if (n > 1) {
			i += send_run(fd, nid, dpid, nonce, i, n, max, &s, &err);
			if (err)
				break;
			continue;
		}
		len = make(buf, nonce, (uint32_t)i, max, &s);
		if (write(fd, buf, len) != (ssize_t)len) {
			err = errno;
			break;
		}
		i++;
	}
	report_tx(fd, i, err);
	if (until)
		return err == ETIMEDOUT || err == ECONNRESET || err == EHOSTUNREACH ? 0 : 1;
	/* Keep the endpoint until every message is acknowledged. */
	for (int t = 0; t < 600; t++) {
		struct dp_ep_stats st;

		if (dpt_stats(fd, &st) || !st.tx_unacked)
			break;
		dpt_sleep_ms(100);
	}
	report_tx(fd, i, err);
	close(fd);
	return i == count ? 0 : 1;
}

static volatile sig_atomic_t stop, go;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

/*
 * Do not read for @stall_ms; a negative one: for -@stall_ms, then until
 * SIGUSR1 (or SIGTERM), so the script says when its senders have seen the
 * stall.  Its barrier gives up after 1300 s, and so does this.
 */
static void stall(int fd, int stall_ms)
{
	time_t end = time(NULL) + 1300;
	struct dp_ep_stats st;

	dpt_sleep_ms(stall_ms < 0 ? -stall_ms : stall_ms);
	while (stall_ms < 0 && !go && !stop && time(NULL) < end)
		dpt_sleep_ms(50);
	dpt_stats(fd, &st);
	printf("# after %s%d ms not reading: queued %llu rx_drop_full %llu\n",
	       stall_ms < 0 ? "at least " : "", abs(stall_ms), (unsigned long long)st.queued,
	       (unsigned long long)st.rx_drop_full);
}

static int cmd_recv(uint32_t dpid, uint32_t nonce, long count, int stall_ms, int tmo_s,
		    int idle_s)
{
	int fd = endpoint(dpid, 0, 0), r;
	long got = 0, bad = 0, other = 0, i = 0;
	time_t end = time(NULL) + tmo_s, last;
	struct dp_ep_stats st;
	ssize_t n;

	signal(SIGTERM, on_term);
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	if (stall_ms) {
		stall(fd, stall_ms);
		end = time(NULL) + tmo_s;	/* the time to read starts now */
	}
	last = time(NULL);
	while (!stop && (!count || got < count) && time(NULL) < end) {
		if (dpt_wait_readable(fd, 500) != 1) {
			if (idle_s && time(NULL) - last > idle_s) {
				printf("# nothing for %d s after %ld messages: giving up\n", idle_s, got);
				break;
			}
			continue;
		}
		last = time(NULL);
		n = read(fd, buf, sizeof(buf));
		if (n < 0)
			continue;
		r = check(buf, n, nonce, (uint32_t)i);
		if (r == 2) {
			other++;
			printf("# message of another stream (nonce %u index %u)\n",
			       ((uint32_t *)buf)[0], ((uint32_t *)buf)[1]);
		} else if (r) {
			bad++;
			if (bad < 5)
				printf("# message %ld: %zd bytes, index %u: damaged or out of order\n", i,
				       n, ((uint32_t *)buf)[1]);
			i = ((uint32_t *)buf)[1] + 1;	/* resynchronise */
		} else {
			i++;
		}
		got++;
		if (!count && got % 1000 == 0) {
			printf("progress %ld\n", got);
			fflush(stdout);
		}
	}
	dpt_stats(fd, &st);
	printf("got %ld bad %ld other %ld full %llu dup %llu\n", got, bad, other,
	       (unsigned long long)st.rx_drop_full, (unsigned long long)st.rx_dup);
	fflush(stdout);
	close(fd);
	if (!count)
		return bad || other ? 1 : 0;
	return got == count && !bad && !other && !st.rx_drop_full ? 0 : 1;
}

static int cmd_nonblock(uint32_t nid, uint32_t dpid)
{
	int fd = endpoint(999, nid, dpid), fl, n = 0, waits = 0, err = 0, full = 0, werr;
	struct pollfd p = { .events = POLLOUT };
	long spins = 0, polls = 0;
	time_t end = time(NULL) + 150;
	struct dp_ep_stats st = { 0 };
	uint64_t s = 5;
	size_t len = 0;
	ssize_t w;

	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	p.fd = fd;
	/*
	 * Each wait is 1 s; 120 of them, or 150 s in all, bound a link that
	 * lost everything.  A 256 KiB pool holds far fewer than 100000.
	 */
	while (waits < 120 && n < 100000 && time(NULL) < end) {
		if (!len)
			len = make(buf, 77, (uint32_t)n, 1000, &s);
		if (write(fd, buf, len) == (ssize_t)len) {
			n++;
			len = 0;
			spins = 0;
			continue;
		}
		err = errno;
		if (err != EAGAIN)
			break;
		/*
		 * EAGAIN while the session opens, or while the congestion window
		 * is full, passes: POLLOUT comes back.  With the receiver's
		 * credit used up it does not.
		 */
		polls++;
		if (poll(&p, 1, 1000) == 1 && (p.revents & POLLOUT)) {
			/* POLLOUT, yet the write says EAGAIN again and again? */
			if (++spins == 100000) {
				dpt_stats(fd, &st);
				printf("# poll() says POLLOUT (0x%x) but write() EAGAIN, %ld times: %d written, unacked %llu\n",
				       p.revents, spins, n, (unsigned long long)st.tx_unacked);
				break;
			}
			continue;
		}
		/*
		 * No POLLOUT for a while: is it the receiver's credit?  Only
		 * once something was sent (the session is open) and nothing is
		 * in flight; while messages are unacknowledged (a loss, the
		 * timer's retransmission pending) the window opens again.
		 */
		waits++;
		if (dpt_stats(fd, &st))
			break;
		if (n > 0 && !st.tx_unacked) {
			full = 1;
			break;
		}
		if (waits <= 5 || waits % 10 == 0)
			printf("# wait %d: %d written, %ld polls, unacked %llu retrans %llu\n", waits, n,
			       polls, (unsigned long long)st.tx_unacked,
			       (unsigned long long)st.tx_retrans);
	}
	p.revents = 0;
	fl = poll(&p, 1, 500);
	w = write(fd, buf, len ? len : make(buf, 77, (uint32_t)n, 1000, &s));
	werr = w < 0 ? errno : 0;
	printf("nonblock: %d written in %ld polls, then %s, %s; poll revents 0x%x; another write %s\n",
	       n, polls, err ? strerrorname_np(err) : "no error",
	       full ? "all acknowledged" : "still unacknowledged", fl == 1 ? p.revents : 0,
	       w < 0 ? strerrorname_np(werr) : "succeeded");
	fflush(stdout);
	if (n > 0 && full && !(fl == 1 && (p.revents & POLLOUT)) && werr == EAGAIN)
		return 0;
	/* where the session stands, for the log */
	if (system("dpctl ep | sed -n '/^dpid 999 /,/^dpid [^9]/p' | sed 's/^/# /'"))
		printf("# dpctl ep failed\n");
	return 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 6 && !strcmp(argv[1], "send"))
		return cmd_send(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0),
				strtoul(argv[4], NULL, 0), strtol(argv[5], NULL, 0),
				argc > 6 ? strtoull(argv[6], NULL, 0) : 1, 0);
	if (argc >= 5 && !strcmp(argv[1], "send-until"))
		return cmd_send(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0),
				strtoul(argv[4], NULL, 0), 0, 7, 1);
	if (argc >= 5 && !strcmp(argv[1], "recv"))
		return cmd_recv(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0),
				strtol(argv[4], NULL, 0), argc > 5 ? atoi(argv[5]) : 0,
				argc > 6 ? atoi(argv[6]) : 600, argc > 7 ? atoi(argv[7]) : 0);
	if (argc >= 4 && !strcmp(argv[1], "nonblock"))
		return cmd_nonblock(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
	fprintf(stderr, "usage: see the comment at the top of dp_rel_peer.c\n");
	return 2;
}
