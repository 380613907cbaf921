// SPDX-License-Identifier: GPL-2.0
/*
 * The wait policy of a blocking read (DP_IOC_SET_WAIT, struct dp_wait):
 * its errno contract, the module default, poll_usecs 0 sleeping at once as
 * before, a stream whose every byte is checked with busy polling off and
 * on (nothing lost, nothing out of order; on dp's tulip driver the ring is
 * then serviced by the reader, on a netdev NAPI is driven by it), a signal
 * while polling (EINTR, and the read never slept), and O_NONBLOCK never
 * polling.  The endpoint's wait counters say which phase a read was in.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include "ktap.h"
#include "dptest.h"
#include "dp.h"

#define DPID_A	100
#define DPID_B	200
#define STREAM	3000	/* messages per stream */
#define MSG_MAX	2048	/* bytes of the largest stream message, at most */

static volatile sig_atomic_t sigs;

static void on_sig(int sig)
{
	(void)sig;
	sigs++;
}

static int set_wait(int fd, uint32_t usecs, uint32_t flags)
{
	struct dp_wait w = { .poll_usecs = usecs, .flags = flags };

	return ioctl(fd, DP_IOC_SET_WAIT, &w);
}

static struct dp_ep_stats stats(int fd)
{
	struct dp_ep_stats st;

	if (dpt_stats(fd, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

/* 1. The errno contract and the default. */
static void errnos(int a, int b)
{
	struct dp_wait w = { .poll_usecs = 10 }, g;
	char param[32] = "";
	int u, ro, fd, r;

	u = dpt_open();
	KTAP_ERRNO(ioctl(u, DP_IOC_SET_WAIT, &w), EBADFD, "SET_WAIT on an unbound fd: EBADFD");
	KTAP_ERRNO(ioctl(u, DP_IOC_GET_WAIT, &g), EBADFD, "GET_WAIT on an unbound fd: EBADFD");
	close(u);

	r = dpt_param("poll_usecs", "7", param, sizeof(param));
	param[strcspn(param, "\n")] = 0;
	ktap_ok(r == 0, "module parameter poll_usecs (%s) is writable", param);
	memset(&g, 0xff, sizeof(g));
	r = dp_get_wait(b, &g);
	ktap_ok(r == 0 && g.poll_usecs == (uint32_t)atoi(param) && g.flags == 0,
		"a bound endpoint starts with the module's poll_usecs (%s), no flags (got %u, %#x)",
		param, g.poll_usecs, g.flags);
	fd = dpt_ep(dpt.nsb, DPID_B + 1, 0);
	memset(&g, 0xff, sizeof(g));
	r = fd >= 0 ? dp_get_wait(fd, &g) : -1;
	ktap_ok(r == 0 && g.poll_usecs == 7,
		"an endpoint bound after poll_usecs=7 polls 7 us (got %u)", g.poll_usecs);
	memset(&g, 0xff, sizeof(g));
	r = dp_get_wait(b, &g);
	ktap_ok(r == 0 && g.poll_usecs == (uint32_t)atoi(param),
		"one bound before keeps its value (got %u)", g.poll_usecs);
	dpt_param("poll_usecs", param, NULL, 0);
	if (fd >= 0)
		close(fd);

	w.poll_usecs = DP_WAIT_USECS_MAX + 1;
	KTAP_ERRNO(ioctl(b, DP_IOC_SET_WAIT, &w), EINVAL, "poll_usecs over DP_WAIT_USECS_MAX: EINVAL");
	w.poll_usecs = 10;
	w.flags = 0x2;
	KTAP_ERRNO(ioctl(b, DP_IOC_SET_WAIT, &w), EINVAL, "an unknown flag: EINVAL");
	w.flags = 0;
	w.reserved[1] = 1;
	KTAP_ERRNO(ioctl(b, DP_IOC_SET_WAIT, &w), EINVAL, "reserved not 0: EINVAL");
	KTAP_ERRNO(ioctl(b, DP_IOC_SET_WAIT, NULL), EFAULT, "SET_WAIT from NULL: EFAULT");
	KTAP_ERRNO(ioctl(b, DP_IOC_GET_WAIT, NULL), EFAULT, "GET_WAIT to NULL: EFAULT");
	memset(&g, 0xff, sizeof(g));
	r = dp_get_wait(b, &g);
	ktap_ok(r == 0 && g.poll_usecs == (uint32_t)atoi(param) && !g.flags,
		"refused values changed nothing (%u, %#x)", g.poll_usecs, g.flags);
	memset(&g, 0, sizeof(g));
	r = dp_set_wait(b, DP_WAIT_USECS_MAX, DP_WAIT_BUSY_POLL);
	if (!r)
		r = dp_get_wait(b, &g);
	ktap_ok(r == 0 && g.poll_usecs == DP_WAIT_USECS_MAX && g.flags == DP_WAIT_BUSY_POLL,
		"DP_WAIT_USECS_MAX with DP_WAIT_BUSY_POLL is taken and read back");
	memset(&g, 0xff, sizeof(g));
	r = dp_set_wait(a, 0, 0);
	if (!r)
		r = dp_get_wait(a, &g);
	ktap_ok(r == 0 && !g.poll_usecs && !g.flags, "poll_usecs 0 is taken");

	/* SET_WAIT is about reading: an fd not open for reading cannot. */
	if (dpt_ns(dpt.nsb) == 0) {
		struct dp_bind bd = { .dpid = DPID_B + 2 };

		ro = open("/dev/dp", O_WRONLY | O_CLOEXEC);
		ktap_ok(ro >= 0 && ioctl(ro, DP_IOC_BIND, &bd) == 0, "O_WRONLY endpoint bound");
		KTAP_ERRNO(ioctl(ro, DP_IOC_SET_WAIT, &w), EBADF, "SET_WAIT on an O_WRONLY fd: EBADF");
		ktap_ok(ioctl(ro, DP_IOC_GET_WAIT, &g) == 0, "GET_WAIT on it works");
		if (ro >= 0)
			close(ro);
	}
}

/* Child: once b's reader has begun waiting (counter at, above base), send. */
static pid_t send_when_waiting(int a, int b, const struct dp_ep_stats *base,
			       int sleeping, const void *msg, size_t len)
{
	pid_t pid = dpt_fork();
	int i;

	if (pid)
		return pid;
	for (i = 0; i < 2000; i++) {
		struct dp_ep_stats st = stats(b);

		if (sleeping ? st.wait_sleep > base->wait_sleep : st.wait_poll > base->wait_poll)
			break;
		dpt_sleep_ms(5);
	}
	dpt_sleep_ms(20);
	_exit(write(a, msg, len) == (ssize_t)len ? 0 : 1);
}

/* 2. poll_usecs 0: a read sleeps at once, as before there was a policy. */
static void zero(int a, int b)
{
	struct dp_ep_stats s0, s1;
	uint8_t out[300], in[512];
	ssize_t n;
	pid_t pid;
	int status;

	dpt_random(out, sizeof(out));
	ktap_ok(set_wait(b, 0, 0) == 0, "poll_usecs 0");
	s0 = stats(b);
	pid = send_when_waiting(a, b, &s0, 1, out, sizeof(out));
	alarm(30);
	n = read(b, in, sizeof(in));
	alarm(0);
	status = dpt_wait_child(pid, DPT_WAIT_MS);
	s1 = stats(b);
	ktap_ok(n == (ssize_t)sizeof(out) && !memcmp(in, out, sizeof(out)) &&
		status == 0, "the read slept and woke with the message (got %zd, child %d)",
		n, status);
	ktap_ok(s1.wait_poll == s0.wait_poll && s1.wait_sleep == s0.wait_sleep + 1,
		"it did not poll and slept once (wait_poll +%llu, wait_sleep +%llu)",
		(unsigned long long)(s1.wait_poll - s0.wait_poll),
		(unsigned long long)(s1.wait_sleep - s0.wait_sleep));
	sigs = 0;
	ualarm(100000, 0);
	n = read(b, in, sizeof(in));
	ktap_ok(n == -1 && errno == EINTR && sigs == 1, "a signal ends the sleep: EINTR");
}

/* Message i of a stream: length and bytes from the seed, i in front. */
static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	return x ^ (x >> 16);
}

static size_t stream_msg(uint32_t seed, uint32_t i, uint32_t max, uint8_t *m)
{
	size_t len = 4 + mix(seed ^ (i * 0x9e3779b9U)) % (max - 3), j;

	memcpy(m, &i, 4);
	for (j = 4; j < len; j++)
		m[j] = (uint8_t)mix(seed + i * 131 + (uint32_t)j);
	return len;
}

/* Sender of a stream: waits until the reader polls, then writes them all. */
static pid_t stream_sender(int a, int b, uint32_t seed, uint32_t max)
{
	struct dp_ep_stats s0 = stats(b), st;
	static uint8_t m[MSG_MAX];
	pid_t pid = dpt_fork();
	uint32_t i;
	int t;

	if (pid)
		return pid;
	for (t = 0; t < 2000; t++) {
		st = stats(b);
		if (st.wait_poll > s0.wait_poll)
			break;
		dpt_sleep_ms(5);
	}
	for (i = 0; i < STREAM; i++) {
		size_t len = stream_msg(seed, i, max, m);

		if (write(a, m, len) != (ssize_t)len) {
			ktap_diag("write %u: %s", i, strerror(errno));
			_exit(1);
		}
	}
	_exit(0);
}

/* Read a stream with blocking reads; count what is missing or wrong. */
static uint32_t stream_read(int b, uint32_t seed, uint32_t max, uint32_t *bad)
{
	static uint8_t want[MSG_MAX], got[MSG_MAX];
	uint32_t i;

	*bad = 0;
	for (i = 0; i < STREAM; i++) {
		size_t len = stream_msg(seed, i, max, want);
		ssize_t n = read(b, got, sizeof(got));

		if (n < 0) {
			ktap_diag("read %u: %s", i, strerror(errno));
			break;
		}
		if ((size_t)n != len || memcmp(got, want, len)) {
			if (!*bad)
				ktap_diag("message %u: %zd bytes, want %zu, differs", i, n, len);
			++*bad;
		}
	}
	return i;
}

/* TcpExt BusyPollRxPackets of namespace ns: NAPI busy polling's count. */
static long busy_poll_rx(const char *ns)
{
	char names[4096], vals[4096], *n, *v, *sn, *sv;
	long r = -1;
	FILE *f;

	if (dpt_ns(ns))
		return -1;
	f = fopen("/proc/self/net/netstat", "r");
	if (!f)
		return -1;
	/* pairs of lines: "TcpExt: names..." then "TcpExt: values..." */
	while (fgets(names, sizeof(names), f) && fgets(vals, sizeof(vals), f)) {
		if (strncmp(names, "TcpExt:", 7))
			continue;
		n = strtok_r(names, " \n", &sn);
		v = strtok_r(vals, " \n", &sv);
		while (n && v && strcmp(n, "BusyPollRxPackets")) {
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
		if (n && v)
			r = atol(v);
	}
	fclose(f);
	return r;
}

/* Wait until a's sessions have nothing unacknowledged (the last ACKs). */
static struct dp_ep_stats acked(int a)
{
	struct dp_ep_stats st;

	dpt_wait_acked(a, DPT_WAIT_MS, &st);
	return stats(a);	/* all 0xff if it cannot be read */
}

/*
 * Over a veth pair, NAPI (and so busy polling) runs on the receiving side
 * only with GRO on there, and for skbs without a socket only if the
 * sending side has TSO off: set both through the ethtool ioctl.
 */
static int veth_napi(void)
{
	struct ethtool_value ev;
	struct ifreq ifr;
	int s, r = 0;

	if (strncmp(dpt.ifb, "veth", 4))
		return -1;
	if (dpt_ns(dpt.nsb))
		return -1;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dpt.ifb);
	ev.cmd = ETHTOOL_SGRO;
	ev.data = 1;
	ifr.ifr_data = (void *)&ev;
	r |= ioctl(s, SIOCETHTOOL, &ifr);
	close(s);
	if (dpt_ns(dpt.nsa))
		return -1;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dpt.ifa);
	ev.cmd = ETHTOOL_STSO;
	ev.data = 0;
	ifr.ifr_data = (void *)&ev;
	r |= ioctl(s, SIOCETHTOOL, &ifr);
	close(s);
	return r;
}

/* 3. One stream with busy polling off, one with it on: the same result. */
static void streams(int a, int b)
{
	int tulip = !strncmp(dpt.ifb, "tulip", 5), napi = 0, busy, status;
	struct dp_info info;
	uint32_t max, got, bad;
	struct dp_ep_stats s0, s1, sa;
	long t0, t1, p0, p1;
	pid_t pid;

	if (!tulip)
		napi = veth_napi() == 0;
	if (!tulip)
		ktap_diag("veth NAPI (GRO on %s, TSO off %s): %s", dpt.ifb, dpt.ifa,
			  napi ? "on" : "could not be set");
	dpt_info(a, &info);
	max = info.max_msg < MSG_MAX ? info.max_msg : MSG_MAX;
	for (busy = 0; busy <= 1; busy++) {
		const char *how = busy ? "busy polling on" : "busy polling off";

		ktap_ok(set_wait(b, 2000, busy ? DP_WAIT_BUSY_POLL : 0) == 0, "%s, 2000 us", how);
		s0 = stats(b);
		t0 = dpt_sysfs_stat(getenv("DPT_SYSB"), "rx_busy");
		p0 = busy_poll_rx(dpt.nsb);
		pid = stream_sender(a, b, 0x5eed0000U + (uint32_t)busy, max);
		alarm(120);
		got = stream_read(b, 0x5eed0000U + (uint32_t)busy, max, &bad);
		alarm(0);
		status = dpt_wait_child(pid, DPT_WAIT_MS * 3);
		s1 = stats(b);
		sa = acked(a);
		t1 = dpt_sysfs_stat(getenv("DPT_SYSB"), "rx_busy");
		p1 = busy_poll_rx(dpt.nsb);
		ktap_ok(status == 0, "%s: sender wrote %u messages", how, STREAM);
		ktap_ok(got == STREAM && bad == 0,
			"%s: all %u read in order, every byte as sent (read %u, %u differ)",
			how, STREAM, got, bad);
		ktap_ok(sa.tx_undelivered == 0 && sa.tx_unacked == 0 && s1.queued == 0,
			"%s: nothing undelivered, unacked or left over (%llu, %llu, %llu)", how,
			(unsigned long long)sa.tx_undelivered,
			(unsigned long long)sa.tx_unacked, (unsigned long long)s1.queued);
		ktap_ok(s1.wait_poll > s0.wait_poll,
			"%s: reads polled (wait_poll +%llu, hit +%llu, sleep +%llu)", how,
			(unsigned long long)(s1.wait_poll - s0.wait_poll),
			(unsigned long long)(s1.wait_poll_hit - s0.wait_poll_hit),
			(unsigned long long)(s1.wait_sleep - s0.wait_sleep));
		/*
		 * On one CPU the sender is always runnable while the reader
		 * polls, and a poller gives the CPU to a runnable task at
		 * once: frames then arrive while it does not poll.
		 */
		if (busy && sysconf(_SC_NPROCESSORS_ONLN) < 2)
			ktap_skip("one CPU: the poller yields to the sender",
				  "%s: the reader took frames itself (%ld on the tulip ring, "
				  "%ld by NAPI)", how, t1 - t0, p1 - p0);
		else if (tulip)
			ktap_ok(t0 >= 0 && (busy ? t1 > t0 : t1 == t0),
				"%s: frames the reader took off the tulip ring: %ld (%s)", how,
				t1 - t0, busy ? "some" : "none");
		else if (napi)
			ktap_ok(p0 >= 0 && (busy ? p1 > p0 : p1 == p0),
				"%s: packets NAPI busy polling took: %ld (%s)", how, p1 - p0,
				busy ? "some" : "none");
		else
			ktap_skip("no NAPI on this link", "%s: busy polling drove the NIC", how);
	}
}

/* 4. A signal while a read polls: EINTR, and the read never slept. */
static void signal_polling(int b, uint32_t flags)
{
	const char *how = flags ? "busy polling" : "polling";
	struct dp_ep_stats s0 = stats(b), s1;
	pid_t pid = dpt_fork();
	int status, i;

	if (!pid) {
		struct sigaction sa = { .sa_handler = on_sig };	/* no SA_RESTART */
		uint8_t in[64];
		ssize_t n;

		sigs = 0;
		sigaction(SIGUSR1, &sa, NULL);
		n = read(b, in, sizeof(in));
		if (n == -1 && errno == EINTR && sigs == 1)
			_exit(0);
		ktap_diag("child: read %zd (%s), %d signals", n, n < 0 ? strerror(errno) : "data",
			  (int)sigs);
		_exit(1);
	}
	for (i = 0; i < 2000; i++) {
		s1 = stats(b);
		if (s1.wait_poll > s0.wait_poll || s1.wait_sleep > s0.wait_sleep)
			break;
		usleep(200);
	}
	/* poll_usecs is a second: the read is still polling now */
	kill(pid, SIGUSR1);
	status = dpt_wait_child(pid, DPT_WAIT_MS);
	s1 = stats(b);
	ktap_ok(status == 0, "a signal while %s: read() returns EINTR (child %d)", how, status);
	ktap_ok(s1.wait_sleep == s0.wait_sleep && s1.wait_poll_hit == s0.wait_poll_hit,
		"... and it never slept (wait_poll +%llu, hit +%llu, sleep +%llu; seen after %d looks)",
		(unsigned long long)(s1.wait_poll - s0.wait_poll),
		(unsigned long long)(s1.wait_poll_hit - s0.wait_poll_hit),
		(unsigned long long)(s1.wait_sleep - s0.wait_sleep), i);
}

/* 5. O_NONBLOCK never polls, whatever the policy. */
static void nonblock(int b)
{
	struct dp_ep_stats s0, s1;
	uint8_t in[64];
	int fl = fcntl(b, F_GETFL);

	ktap_ok(set_wait(b, DP_WAIT_USECS_MAX, DP_WAIT_BUSY_POLL) == 0, "poll a second, busy");
	fcntl(b, F_SETFL, fl | O_NONBLOCK);
	s0 = stats(b);
	KTAP_ERRNO(read(b, in, sizeof(in)), EAGAIN, "O_NONBLOCK read() on an empty pool: EAGAIN");
	s1 = stats(b);
	ktap_ok(s1.wait_poll == s0.wait_poll && s1.wait_sleep == s0.wait_sleep,
		"... without polling or sleeping");
	fcntl(b, F_SETFL, fl);
}

/*
 * What an operator sees: dpctl ep shows B's wait counters as DP_IOC_STATS
 * gives them to B's owner (nothing reads B meanwhile).
 */
static void dpctl_shows(int b)
{
	const char *ip = dpt_ip();
	struct dp_ep_stats st = stats(b);

	ktap_ok(st.wait_sleep > 0 &&
		dpt_sh("%s netns exec %s dpctl ep | awk '/^dpid %u /{f=1; next} f {print; exit}' | grep -q ' wait_poll %llu wait_poll_hit %llu wait_sleep %llu$'",
		       ip, dpt.nsb, DPID_B, (unsigned long long)st.wait_poll,
		       (unsigned long long)st.wait_poll_hit,
		       (unsigned long long)st.wait_sleep) == 0,
		"dpctl ep shows wait_poll %llu wait_poll_hit %llu wait_sleep %llu",
		(unsigned long long)st.wait_poll, (unsigned long long)st.wait_poll_hit,
		(unsigned long long)st.wait_sleep);
}

int main(void)
{
	struct sigaction sa;
	int a, b;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;		/* no SA_RESTART: read() must return EINTR */
	sigaction(SIGALRM, &sa, NULL);
	dpt_pair(&a, DPID_A, &b, DPID_B);

	errnos(a, b);
	zero(a, b);
	streams(a, b);
	ktap_ok(set_wait(b, DP_WAIT_USECS_MAX, 0) == 0, "poll a second");
	signal_polling(b, 0);
	ktap_ok(set_wait(b, DP_WAIT_USECS_MAX, DP_WAIT_BUSY_POLL) == 0, "busy poll a second");
	signal_polling(b, DP_WAIT_BUSY_POLL);
	nonblock(b);
	dpctl_shows(b);
	close(a);
	close(b);
	ktap_finish();
}
