// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the dp selftest programs; see dptest.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include "dp.h"
#include "dptest.h"
#include "ktap.h"

struct dpt_env dpt;

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static int parse_mac(const char *s, uint8_t *m)
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (i = 0; i < 6; i++)
		m[i] = (uint8_t)b[i];
	return 0;
}

int dpt_init(void)
{
	dpt.nsa = env_or("DPT_NSA", "dpA");
	dpt.nsb = env_or("DPT_NSB", "dpB");
	dpt.nida = (uint32_t)strtoul(env_or("DPT_NIDA", "11"), NULL, 0);
	dpt.nidb = (uint32_t)strtoul(env_or("DPT_NIDB", "12"), NULL, 0);
	dpt.ifa = env_or("DPT_IFA", "vethA");
	dpt.ifb = env_or("DPT_IFB", "vethB");
	dpt.rawns = env_or("DPT_RAWNS", dpt.nsb);
	dpt.rawif = env_or("DPT_RAWIF", dpt.ifb);
	dpt.backend = env_or("DPT_BACKEND", "netdev");
	if (getenv("DPT_ROUTEA") && *getenv("DPT_ROUTEA"))
		snprintf(dpt.routea, sizeof(dpt.routea), " %s", getenv("DPT_ROUTEA"));
	if (getenv("DPT_ROUTEB") && *getenv("DPT_ROUTEB"))
		snprintf(dpt.routeb, sizeof(dpt.routeb), " %s", getenv("DPT_ROUTEB"));
	if (parse_mac(env_or("DPT_MACA", "02:00:00:00:00:0b"), dpt.maca) ||
	    parse_mac(env_or("DPT_MACB", "02:00:00:00:00:0c"), dpt.macb) ||
	    !dpt.nida || !dpt.nidb) {
		ktap_diag("bad DPT_* environment");
		return -1;
	}
	return 0;
}

int dpt_ns(const char *name)
{
	static const char *const dirs[] = { "/run/netns", "/var/run/netns" };
	char path[256];
	unsigned int i;
	int fd = -1, r;

	if (!name || !*name)
		return 0;
	if (!strcmp(name, "init"))
		snprintf(path, sizeof(path), "/proc/1/ns/net");
	for (i = 0; i < 2 && fd < 0; i++) {
		if (strcmp(name, "init"))
			snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		ktap_diag("netns %s: %s", name, strerror(errno));
		return -1;
	}
	r = setns(fd, CLONE_NEWNET);
	if (r)
		ktap_diag("setns %s: %s", name, strerror(errno));
	close(fd);
	return r;
}

void dpt_allow_userns(void)
{
	int fd = open("/proc/sys/kernel/unprivileged_userns_clone", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "1\n", 2) != 2)
			ktap_diag("unprivileged_userns_clone: %s", strerror(errno));
		close(fd);
	}
}

int dpt_open(void)
{
	return open(DP_DEVICE_PATH, O_RDWR | O_CLOEXEC);
}

int dpt_bind(int fd, uint32_t dpid, uint32_t pool_size)
{
	struct dp_bind b = { .dpid = dpid, .pool_size = pool_size };

	return ioctl(fd, DP_IOC_BIND, &b);
}

int dpt_ep(const char *ns, uint32_t dpid, uint32_t pool_size)
{
	return dpt_ep_flags(ns, dpid, pool_size, 0);
}

int dpt_ep_flags(const char *ns, uint32_t dpid, uint32_t pool_size, uint32_t flags)
{
	struct dp_bind b = { .dpid = dpid, .pool_size = pool_size, .flags = flags };
	int fd, e;

	if (dpt_ns(ns))
		return -1;
	fd = dpt_open();
	if (fd < 0)
		return -1;
	if (ioctl(fd, DP_IOC_BIND, &b)) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int dpt_connect(int fd, uint32_t nid, uint32_t dpid)
{
	struct dp_addr a = { .nid = nid, .dpid = dpid };

	return ioctl(fd, DP_IOC_CONNECT, &a);
}

void dpt_pair(int *a, uint32_t dpid_a, int *b, uint32_t dpid_b)
{
	*b = dpt_ep(dpt.nsb, dpid_b, 0);
	*a = dpt_ep(dpt.nsa, dpid_a, 0);
	if (*a < 0 || *b < 0 || dpt_connect(*a, dpt.nidb, dpid_b))
		ktap_bail("endpoints");
}

int dpt_if_mtu(const char *ns, const char *ifname)
{
	struct ifreq ifr;
	int s, r;

	if (!strncmp(ifname, "tulip", 5))
		return 1500;
	if (!strncmp(ifname, "myri", 4))
		return 8192;
	if (dpt_ns(ns))
		return -1;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	r = s >= 0 ? ioctl(s, SIOCGIFMTU, &ifr) : -1;
	if (s >= 0)
		close(s);
	return r ? -1 : ifr.ifr_mtu;
}

int dpt_if_set_mtu(const char *ns, const char *ifname, int mtu)
{
	struct ifreq ifr;
	int s, r;

	if (dpt_ns(ns))
		return -1;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_mtu = mtu;
	r = s >= 0 ? ioctl(s, SIOCSIFMTU, &ifr) : -1;
	if (s >= 0)
		close(s);
	return r;
}

int dpt_info(int fd, struct dp_info *info)
{
	memset(info, 0, sizeof(*info));
	return ioctl(fd, DP_IOC_INFO, info);
}

int dpt_stats(int fd, struct dp_ep_stats *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(fd, DP_IOC_STATS, st);
}

int dpt_wait_acked(int fd, int ms, struct dp_ep_stats *st)
{
	int i;

	for (i = 0; i <= ms / 10; i++) {
		if (dpt_stats(fd, st))
			return -1;
		if (!st->tx_unacked)
			return 0;
		if (i < ms / 10)
			dpt_sleep_ms(10);
	}
	return -1;
}

int dpt_node_stats(const char *ns, struct dp_node_stats *st)
{
	int fd, r, e;

	if (dpt_ns(ns))
		return -1;
	fd = dpt_open();
	if (fd < 0)
		return -1;
	memset(st, 0, sizeof(*st));
	r = ioctl(fd, DP_IOC_NODE_STATS, st);
	e = errno;
	close(fd);
	errno = e;
	return r;
}

uint64_t dpt_ctr(const char *ns, unsigned int ctr)
{
	struct dp_node_stats st;

	if (dpt_node_stats(ns, &st) || ctr >= st.n || ctr >= DP_CTR_SLOTS)
		return UINT64_MAX;
	return st.ctr[ctr];
}

uint32_t dpt_release(int fd, uint32_t n)
{
	int r = ioctl(fd, DP_IOC_RELEASE, &n);

	return r < 0 ? 0 : (uint32_t)r;
}

int dpt_map(int fd, struct dpt_pool *p)
{
	struct dp_info info;

	memset(p, 0, sizeof(*p));
	if (dpt_info(fd, &info))
		return -1;
	p->len = info.map_size;
	p->map = mmap(NULL, p->len, PROT_READ, MAP_SHARED, fd, 0);
	if (p->map == MAP_FAILED) {
		p->map = NULL;
		return -1;
	}
	p->ctrl = p->map;
	p->data = (const uint8_t *)p->map + p->ctrl->ctrl_size;
	return 0;
}

void dpt_unmap(struct dpt_pool *p)
{
	if (p->map)
		munmap(p->map, p->len);
	p->map = NULL;
}

const struct dp_token *dpt_head(const struct dpt_pool *p)
{
	uint64_t prod = __atomic_load_n(&p->ctrl->prod, __ATOMIC_ACQUIRE);
	uint64_t cons = __atomic_load_n(&p->ctrl->cons, __ATOMIC_ACQUIRE);

	if (cons == prod)
		return NULL;
	return (const struct dp_token *)(p->data + (cons & (p->ctrl->data_size - 1)));
}

int dpt_wait_readable(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&pfd, 1, ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	return r > 0 && (pfd.revents & POLLIN);
}

int dpt_wait_arrivals(int fd, uint64_t n, int ms)
{
	struct dp_ep_stats st;
	int waited = 0;

	for (;;) {
		if (dpt_stats(fd, &st))
			return -1;
		if (st.rx_msgs + st.rx_drop_full >= n)
			return 1;
		if (waited >= ms)
			return 0;
		dpt_sleep_ms(10);
		waited += 10;
	}
}

uint64_t dpt_wait_ctr(const char *ns, unsigned int ctr, uint64_t v, int ms)
{
	uint64_t c;
	int waited = 0;

	for (;;) {
		c = dpt_ctr(ns, ctr);
		if (c == UINT64_MAX || c >= v || waited >= ms)
			return c;
		dpt_sleep_ms(10);
		waited += 10;
	}
}

void dpt_random(void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t r = getrandom(p, n, 0);

		if (r <= 0) {	/* no entropy API: any varying bytes will do */
			static uint32_t x = 2463534242u;
			x ^= x << 13; x ^= x >> 17; x ^= x << 5;
			*p++ = (uint8_t)(x ^ (uint32_t)getpid());
			n--;
			continue;
		}
		p += r;
		n -= (size_t)r;
	}
}

void dpt_sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

int dpt_wait_blocked(pid_t pid, const long *nrs, int n, int ms, char *what, size_t wlen)
{
	char path[64], st[512], sc[256], *p;
	char state = '?';
	long nr = -1;
	int i, k;

	for (i = 0; i <= ms / 5; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		state = '?';
		if (!read_small(path, st, sizeof(st))) {
			p = strrchr(st, ')');
			if (p && p[1] == ' ')
				state = p[2];
		}
		snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
		nr = -1;
		if (!read_small(path, sc, sizeof(sc)))
			nr = strtol(sc, NULL, 10);
		for (k = 0; k < n && state == 'S'; k++)
			if (nr == nrs[k]) {
				snprintf(what, wlen, "state S in system call %ld", nr);
				return 1;
			}
		dpt_sleep_ms(5);
	}
	snprintf(what, wlen, "state %c, system call %ld after %d ms", state, nr, ms);
	return 0;
}

pid_t dpt_fork(void)
{
	pid_t parent = getpid(), pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(99);
	}
	return pid;
}

int dpt_wait_child(pid_t pid, int ms)
{
	int status, waited = 0;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		if (waited >= ms) {
			ktap_diag("child %d did not finish in %d ms: killed", (int)pid, ms);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		dpt_sleep_ms(5);
		waited += 5;
	}
}

int dpt_param(const char *name, const char *val, char *old, size_t len)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/module/dp/parameters/%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (old) {
		n = read(fd, old, len - 1);
		old[n > 0 ? n : 0] = 0;
	}
	n = pwrite(fd, val, strlen(val), 0);
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

const char *dpt_ip(void)
{
	const char *ip = getenv("DPT_IP");

	return ip && *ip ? ip : "ip";
}

int dpt_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fflush(stdout);
	r = system(cmd);
	if (r == -1 || !WIFEXITED(r))
		return -1;
	return WEXITSTATUS(r);
}

/*
 * Through ktap_diag(), not straight to stdout: the KTAP document is kept
 * until the test ends, and the harness keeps the diagnostics just before a
 * failed result with it, so a command's output must land in order.
 */
void dpt_sh_diag(const char *fmt, ...)
{
	char body[1000], cmd[1024], line[512];
	int n = 0;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "{ %s\n} 2>&1", body);	/* all of it, stderr too */
	fflush(stdout);
	f = popen(cmd, "r");
	if (!f) {
		ktap_diag("popen: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (n++ < 120) {
			line[strcspn(line, "\n")] = '\0';
			ktap_diag("  %s", line);
		}
	pclose(f);
}

long dpt_ep_field(const char *ns, uint32_t dpid, const char *key)
{
	char cmd[256], line[512], *tok, *save;
	long v = -1;
	FILE *f;

	if (ns && *ns)
		snprintf(cmd, sizeof(cmd), "%s netns exec %s dpctl ep 2>/dev/null", dpt_ip(), ns);
	else
		snprintf(cmd, sizeof(cmd), "dpctl ep 2>/dev/null");
	fflush(stdout);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* the endpoint's own line: "dpid N uid U pool P queued Q ..." */
		if (strncmp(line, "dpid ", 5) || strtoul(line + 5, NULL, 10) != dpid)
			continue;
		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
			if (!strcmp(tok, key)) {
				tok = strtok_r(NULL, " \n", &save);
				if (tok)
					v = strtol(tok, NULL, 10);
				break;
			}
	}
	if (pclose(f) != 0)
		return -1;
	return v;
}

long dpt_sysfs_stat(const char *dir, const char *name)
{
	char path[512], key[128];
	long v, r = -1;
	FILE *f;

	if (!dir || !*dir)
		return -1;
	snprintf(path, sizeof(path), "%s/dp_stats", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (r < 0 && fscanf(f, "%127s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			r = v;
	fclose(f);
	return r;
}

long dpt_if_frames(const char *ns, const char *ifname, const char *sys, int rx)
{
	char line[512], name[64];
	long v[10], r = -1;
	FILE *f;

	if (!strncmp(ifname, "tulip", 5))
		return dpt_sysfs_stat(sys, rx ? "rx_frames" : "tx_frames");
	if (!strncmp(ifname, "myri", 4))
		return dpt_sysfs_stat(sys, rx ? "rx_packets" : "tx_packets");
	if (dpt_ns(ns))
		return -1;
	f = fopen("/proc/net/dev", "r");	/* the namespace's own devices */
	if (!f)
		return -1;
	while (r < 0 && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!c)
			continue;
		*c = ' ';
		/*
		 * receive: bytes packets errs drop fifo frame compressed
		 * multicast; transmit: bytes packets ...
		 */
		if (sscanf(line, "%63s %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld", name,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
			   &v[8], &v[9]) == 11 && !strcmp(name, ifname))
			r = rx ? v[1] : v[9];
	}
	fclose(f);
	return r;
}

const char *dpt_ctr_name(unsigned int ctr)
{
	const char *name = dp_counter_name(ctr);

	return name ? name : "?";
}

/* Whether node counter i counts messages or frames lost (a *_drop_*). */
int dpt_ctr_is_drop(unsigned int i)
{
	const char *n = dpt_ctr_name(i);

	return n && strstr(n, "_drop_") != NULL;
}

void dpt_tracefs_mount(void)
{
	if (access(DPT_TRACEFS "/events", F_OK))
		mount("tracefs", DPT_TRACEFS, "tracefs", 0, NULL);
}

int dpt_tracefs_write(const char *file, const char *val)
{
	char path[256];
	int fd, ok;

	snprintf(path, sizeof(path), DPT_TRACEFS "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

int dpt_tracefs_start(void)
{
	return dpt_tracefs_write("trace", "") || dpt_tracefs_write("tracing_on", "1") ? -1 : 0;
}

int dpt_trace(const char *ev, int on)
{
	char file[128];

	dpt_tracefs_mount();
	snprintf(file, sizeof(file), "events/dp/%s/enable", ev);
	if (on && dpt_tracefs_start())
		return -1;
	return dpt_tracefs_write(file, on ? "1" : "0");
}

unsigned int dpt_trace_diag(const char *ev, const char *prefix)
{
	return dpt_trace_unlike(ev, NULL, prefix);
}

unsigned int dpt_trace_unlike(const char *ev, const char *like, const char *prefix)
{
	char tag[64], line[512];
	unsigned int n = 0;
	FILE *f;

	snprintf(tag, sizeof(tag), " %s: ", ev);
	f = fopen(DPT_TRACEFS "/trace", "re");
	if (!f)
		return like ? 1 : 0;
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, tag);

		if (!at || (like && strstr(at, like)))
			continue;
		line[strcspn(line, "\n")] = 0;
		ktap_diag("%s%s", prefix, at + 1);
		n++;
	}
	fclose(f);
	return n;
}

/*
 * The endpoints' sessions on both nodes (dpctl ep: each edge's snd_una,
 * snd_nxt, RTO, backoff and how long ago the peer was heard; each sender's
 * rcv_nxt at the receiver) and their counters (a receiver refusing as
 * full, or for length), as diagnostics: for a direction that did not
 * settle, whether its sender still retransmits and hears the receiver, or
 * went quiet with something unacknowledged.
 */
void dpt_show_sessions(void)
{
	dpt_sh_diag("for ns in '%s' '%s'; do x=; [ -z \"$ns\" ] || [ \"$ns\" = init ] || x=\"ip netns exec $ns\"; "
		    "echo \"dpctl ep in ${ns:-init}:\"; $x dpctl ep; "
		    "echo \"dpctl stats in ${ns:-init} (non-zero):\"; $x dpctl stats | grep -v ' 0$'; "
		    "done | grep -v '^ *$'",
		    dpt.nsa, dpt.nsb);
}
