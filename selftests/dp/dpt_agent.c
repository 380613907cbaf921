// SPDX-License-Identifier: GPL-2.0
/* Test agents: child processes acting as another user; see dpt_agent.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ktap.h"
#include "dptest.h"
#include "dpt_agent.h"

enum {
	OP_BIND = 1, OP_CONNECT, OP_DISCONNECT, OP_WRITE, OP_INFO, OP_STATS,
	OP_WAIT, OP_HEAD, OP_RELEASE, OP_CLOSE, OP_MMAP, OP_OPEN, OP_GETFD,
	OP_PTRACE, OP_FDNUM, OP_GIVE, OP_TAKE, OP_MEMLOCK, OP_VMPIN, OP_USERNS,
	OP_SH, OP_FLOOD, OP_ECHO, OP_PING, OP_UNSHARE_USER, OP_SETEUID,
};

#define SLOTS		64
#define MAXLEN		65536

struct req {
	int32_t op;
	int32_t slot;
	uint32_t a, b, c;
	uint64_t x;
	char s[256];
};

struct rep {
	int64_t ret;
	int32_t err;
	int64_t ret2;
	uint8_t data[256];
};

/* ---- the agent side ---- */

struct slot {
	int fd;
	void *map;
	size_t map_len;
};

static struct slot slots[SLOTS];
static volatile sig_atomic_t flood_stop;
static uint8_t buf[MAXLEN], buf2[MAXLEN];

void dpt_pattern(uint8_t *b, uint32_t len, uint32_t seed)
{
	uint32_t i, x = seed * 2654435761u + 1;

	for (i = 0; i < len; i++) {
		if (i < 4) {
			b[i] = (uint8_t)(seed >> (8 * i));
			continue;
		}
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (uint8_t)x;
	}
}

int dpt_pattern_ok(const uint8_t *b, uint32_t len, uint32_t *seed)
{
	uint32_t s = 0, i;
	uint8_t *want;
	int ok;

	for (i = 0; i < 4 && i < len; i++)
		s |= (uint32_t)b[i] << (8 * i);
	*seed = s;
	want = malloc(len ? len : 1);
	if (!want)
		return 0;
	dpt_pattern(want, len, s);
	ok = !memcmp(want, b, len);
	free(want);
	return ok;
}

static int slot_new(int fd)
{
	int i;

	for (i = 0; i < SLOTS; i++)
		if (!slots[i].fd) {
			slots[i].fd = fd;
			return i;
		}
	close(fd);
	errno = EMFILE;
	return -1;
}

static struct slot *slot_get(int i)
{
	if (i < 0 || i >= SLOTS || !slots[i].fd) {
		errno = EBADSLT;
		return NULL;
	}
	return &slots[i];
}

static void slot_close(struct slot *s)
{
	if (s->map)
		munmap(s->map, s->map_len);
	close(s->fd);
	memset(s, 0, sizeof(*s));
}

static long op_bind(const struct req *q)
{
	struct dp_bind b = { .dpid = q->a, .pool_size = q->b, .flags = q->c };
	int fd = dpt_open(), e;

	if (fd < 0)
		return -1;
	/* slot fds are never 0: 0 marks a free slot */
	if (ioctl(fd, DP_IOC_BIND, &b)) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return slot_new(fd);
}

static long op_addr(const struct req *q)
{
	struct slot *s = slot_get(q->slot);
	struct dp_addr a = { .nid = q->a, .dpid = q->b };

	if (!s)
		return -1;
	return ioctl(s->fd, q->op == OP_CONNECT ? DP_IOC_CONNECT : DP_IOC_DISCONNECT, &a);
}

static long op_write(const struct req *q)
{
	struct slot *s = slot_get(q->slot);

	if (!s)
		return -1;
	if (q->a > MAXLEN) {
		errno = EINVAL;
		return -1;
	}
	dpt_pattern(buf, q->a, q->b);
	return write(s->fd, buf, q->a);
}

static long op_query(const struct req *q, struct rep *r)
{
	struct slot *s = slot_get(q->slot);
	unsigned long cmd = q->op == OP_INFO ? DP_IOC_INFO : DP_IOC_STATS;

	if (!s)
		return -1;
	return ioctl(s->fd, cmd, r->data);
}

static int wait_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR && !flood_stop);
	return n > 0 && (p.revents & POLLIN);
}

static long op_head(const struct req *q, struct rep *r)
{
	struct slot *s = slot_get(q->slot);
	struct dpt_head h;
	struct dpt_pool p;
	const struct dp_token *t;
	struct dp_info info;

	if (!s)
		return -1;
	if (!s->map) {
		if (dpt_info(s->fd, &info))
			return -1;
		s->map = mmap(NULL, info.map_size, PROT_READ, MAP_SHARED, s->fd, 0);
		if (s->map == MAP_FAILED) {
			s->map = NULL;
			return -1;
		}
		s->map_len = info.map_size;
	}
	p.map = s->map;
	p.len = s->map_len;
	p.ctrl = s->map;
	p.data = (const uint8_t *)s->map + p.ctrl->ctrl_size;
	t = dpt_head(&p);
	if (!t)
		return 0;
	memset(&h, 0, sizeof(h));
	h.tok = *t;
	h.intact = t->len <= p.ctrl->data_size &&
		   dpt_pattern_ok((const uint8_t *)(t + 1), t->len, &h.seed);
	memcpy(r->data, &h, sizeof(h));
	return 1;
}

static long op_open(const struct req *q)
{
	int fd = open(q->s, (int)q->a | O_CLOEXEC);

	return fd < 0 ? -1 : slot_new(fd);
}

static long op_getfd(const struct req *q)
{
	int pfd = (int)syscall(SYS_pidfd_open, (pid_t)q->a, 0), fd, e;

	if (pfd < 0)
		return -1;
	fd = (int)syscall(SYS_pidfd_getfd, pfd, (int)q->b, 0);
	e = errno;
	close(pfd);
	errno = e;
	return fd < 0 ? -1 : slot_new(fd);
}

static long op_ptrace(const struct req *q)
{
	pid_t pid = (pid_t)q->a;

	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL))
		return -1;
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return 0;
}

static long op_mmap(const struct req *q)
{
	struct slot *s = slot_get(q->slot);
	struct dp_info info;
	size_t len = 4096;
	void *m;

	if (!s)
		return -1;
	if (!dpt_info(s->fd, &info))
		len = info.map_size;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, s->fd, 0);
	if (m == MAP_FAILED)
		return -1;
	munmap(m, len);
	return 0;
}

/* One fd over the control socket, with or without a reply body. */
static int send_fd(int sock, const void *body, size_t n, int fd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)body, .iov_len = n };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		m.msg_control = u.b;
		m.msg_controllen = sizeof(u.b);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &m, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* Receive a message of up to n bytes and the fd it carries (or -1). */
static ssize_t recv_fd(int sock, void *body, size_t n, int *fd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = body, .iov_len = n };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			    .msg_controllen = sizeof(u.b) };
	struct cmsghdr *c;
	ssize_t r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);

	*fd = -1;
	for (c = r > 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	return r;
}

static long op_vmpin(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	if (kb < 0)
		errno = ENOENT;
	return kb;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = -1, e;

	if (fd < 0)
		return -1;
	if (write(fd, s, strlen(s)) == (ssize_t)strlen(s))
		r = 0;
	e = errno;
	close(fd);
	errno = e;
	return r;
}

static long op_userns(const struct req *q)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];

	if (unshare(CLONE_NEWUSER | (q->a ? CLONE_NEWNET : 0)))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned int)uid);
	if (write_file("/proc/self/uid_map", map))
		return -1;
	if (write_file("/proc/self/setgroups", "deny\n"))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned int)gid);
	return write_file("/proc/self/gid_map", map);
}

/*
 * Act as uid inside a user namespace whose maps the test wrote: become its
 * root first (all three uids, so seteuid() can come back to it), then only
 * the effective uid changes: bound endpoints stay open, and the next bind
 * is charged to uid.  A change of credentials clears the death signal.
 */
static long op_seteuid(const struct req *q)
{
	if (getuid() != 0 && setresuid(0, 0, 0))
		return -1;
	if (geteuid() != 0 && seteuid(0))
		return -1;
	if (q->a && seteuid((uid_t)q->a))
		return -1;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	return 0;
}

static void on_usr1(int sig)
{
	(void)sig;
	flood_stop = 1;
}

static long op_flood(const struct req *q, struct rep *r)
{
	struct slot *s = slot_get(q->slot);
	long sent = 0, failed = 0;
	uint32_t i = 0;

	if (!s)
		return -1;
	while (!flood_stop) {
		dpt_pattern(buf, q->a, i++);
		if (write(s->fd, buf, q->a) == (ssize_t)q->a)
			sent++;
		else
			failed++;
	}
	r->ret2 = failed;
	return sent;
}

static long op_echo(const struct req *q)
{
	struct slot *s = slot_get(q->slot);
	uint32_t i;
	ssize_t n;

	if (!s)
		return -1;
	for (i = 0; i < q->a; i++) {
		if (!wait_readable(s->fd, (int)q->b))
			break;
		n = read(s->fd, buf, sizeof(buf));
		if (n <= 0 || write(s->fd, buf, (size_t)n) != n)
			break;
	}
	return i;
}

static long op_ping(const struct req *q, struct rep *r)
{
	struct slot *s = slot_get(q->slot);
	uint32_t i, len = q->b;
	ssize_t n;

	if (!s || len > MAXLEN || len < 4) {
		errno = s ? EINVAL : errno;
		return -1;
	}
	for (i = 0; i < q->a; i++) {
		dpt_pattern(buf, len, 0x70000000u + i);
		if (write(s->fd, buf, len) != (ssize_t)len) {
			snprintf((char *)r->data, sizeof(r->data), "ping %u: write: %s", i,
				 strerror(errno));
			break;
		}
		if (!wait_readable(s->fd, (int)q->c)) {
			snprintf((char *)r->data, sizeof(r->data), "ping %u: no reply", i);
			break;
		}
		n = read(s->fd, buf2, sizeof(buf2));
		if (n != (ssize_t)len || memcmp(buf, buf2, len)) {
			snprintf((char *)r->data, sizeof(r->data), "ping %u: reply %zd bytes, %s",
				 i, n, n == (ssize_t)len ? "wrong content" : "wrong length");
			break;
		}
	}
	return i;
}

static long agent_do(int sock, const struct req *q, struct rep *r, int fd_in)
{
	struct slot *s;

	switch (q->op) {
	case OP_BIND: return op_bind(q);
	case OP_CONNECT:
	case OP_DISCONNECT: return op_addr(q);
	case OP_WRITE: return op_write(q);
	case OP_INFO:
	case OP_STATS: return op_query(q, r);
	case OP_WAIT:
		s = slot_get(q->slot);
		return s ? wait_readable(s->fd, (int)q->a) : -1;
	case OP_HEAD: return op_head(q, r);
	case OP_RELEASE: {
		uint32_t n = q->a;

		s = slot_get(q->slot);
		return s ? ioctl(s->fd, DP_IOC_RELEASE, &n) : -1;
	}
	case OP_CLOSE:
		s = slot_get(q->slot);
		if (s)
			slot_close(s);
		return s ? 0 : -1;
	case OP_MMAP: return op_mmap(q);
	case OP_OPEN: return op_open(q);
	case OP_GETFD: return op_getfd(q);
	case OP_PTRACE: return op_ptrace(q);
	case OP_FDNUM:
		s = slot_get(q->slot);
		return s ? s->fd : -1;
	case OP_GIVE:
		s = slot_get(q->slot);
		if (!s)
			return -1;
		r->ret = 0;
		r->err = 0;
		/* the reply itself carries the fd */
		return send_fd(sock, r, sizeof(*r), s->fd) ? -1 : -2;
	case OP_TAKE:
		if (fd_in < 0) {
			errno = EBADF;
			return -1;
		}
		return slot_new(fd_in);
	case OP_MEMLOCK: {
		struct rlimit rl = { .rlim_cur = q->x, .rlim_max = q->x };

		return setrlimit(RLIMIT_MEMLOCK, &rl);
	}
	case OP_VMPIN: return op_vmpin();
	case OP_USERNS: return op_userns(q);
	case OP_UNSHARE_USER: return unshare(CLONE_NEWUSER);
	case OP_SETEUID: return op_seteuid(q);
	case OP_SH: {
		int st = system(q->s);

		return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
	}
	case OP_FLOOD: return op_flood(q, r);
	case OP_ECHO: return op_echo(q);
	case OP_PING: return op_ping(q, r);
	}
	errno = ENOSYS;
	return -1;
}

static void agent_loop(int sock)
{
	struct req q;
	struct rep r;
	int fd_in;
	long ret;

	for (;;) {
		ssize_t n = recv_fd(sock, &q, sizeof(q), &fd_in);

		if (n != (ssize_t)sizeof(q))
			_exit(0);
		memset(&r, 0, sizeof(r));
		flood_stop = 0;
		errno = 0;
		ret = agent_do(sock, &q, &r, fd_in);
		if (ret == -2)
			continue;	/* already replied (OP_GIVE) */
		r.ret = ret;
		r.err = ret < 0 ? errno : 0;
		if (send_fd(sock, &r, sizeof(r), -1))
			_exit(1);
	}
}

/*
 * Become uid, keeping the capabilities in caps: effective, and ambient so
 * that programs the agent runs (dpctl through dpt_a_sh) keep them too.
 */
static int drop_to(uid_t uid, uint64_t caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	int cap;

	if (setgroups(0, NULL) || setresgid(uid, uid, uid))
		return -1;
	if (caps && prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L))
		return -1;
	if (setresuid(uid, uid, uid))
		return -1;
	if (!caps)
		return 0;
	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted = d[0].inheritable = (uint32_t)caps;
	d[1].effective = d[1].permitted = d[1].inheritable = (uint32_t)(caps >> 32);
	if (syscall(SYS_capset, &h, d))
		return -1;
	for (cap = 0; cap < 64; cap++)
		if ((caps >> cap) & 1 &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (long)cap, 0L, 0L))
			return -1;
	return 0;
}

int dpt_agent_start(struct dpt_agent *ag, const char *name, const char *ns, uid_t uid,
		    uint64_t keep_caps)
{
	pid_t parent = getpid();
	int sv[2];

	memset(ag, 0, sizeof(*ag));
	ag->name = name;
	ag->uid = uid;
	ag->sock = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ktap_diag("agent %s: socketpair: %s", name, strerror(errno));
		return -1;
	}
	ag->pid = dpt_fork();
	if (ag->pid < 0) {
		ktap_diag("agent %s: fork: %s", name, strerror(errno));
		return -1;
	}
	if (ag->pid == 0) {
		struct sigaction sa = { .sa_handler = on_usr1 };

		close(sv[0]);
		/* stdout belongs to the test's KTAP: agents print nothing there */
		if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(2);
		sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART: writes see EINTR */
		if (dpt_ns(ns) || (uid && drop_to(uid, keep_caps))) {
			fprintf(stderr, "agent %s: setup: %s\n", name, strerror(errno));
			_exit(2);
		}
		/*
		 * A change of credentials clears the parent-death signal and
		 * makes the process non-dumpable (its /proc files root's);
		 * behave like a process the user started.
		 */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_DUMPABLE, 1L, 0L, 0L, 0L);
		if (getppid() != parent)
			_exit(2);
		agent_loop(sv[1]);
		_exit(0);
	}
	close(sv[1]);
	ag->sock = sv[0];
	/* a first round trip: the agent is set up and answering */
	if (dpt_a_fdnum(ag, -1) != -1 || errno != EBADSLT) {
		ktap_diag("agent %s (uid %u in %s) did not start: %s", name, (unsigned int)uid,
			  ns, strerror(errno));
		dpt_agent_stop(ag);
		return -1;
	}
	return 0;
}

void dpt_agent_stop(struct dpt_agent *ag)
{
	if (ag->sock >= 0)
		close(ag->sock);
	ag->sock = -1;
	if (ag->pid > 0) {
		kill(ag->pid, SIGKILL);
		waitpid(ag->pid, NULL, 0);
	}
	ag->pid = 0;
}

/* ---- the test side ---- */

static int send_req(struct dpt_agent *ag, const struct req *q, int fd)
{
	if (ag->sock < 0 || send_fd(ag->sock, q, sizeof(*q), fd)) {
		errno = ag->sock < 0 ? EPIPE : errno;
		return -1;
	}
	return 0;
}

/* Wait up to ms for the reply; -1 with ETIMEDOUT or EPIPE if none. */
static int get_rep(struct dpt_agent *ag, struct rep *r, int ms, int *fd)
{
	struct pollfd p = { .fd = ag->sock, .events = POLLIN };
	int n, dummy;

	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		ktap_diag("agent %s: no reply in %d ms", ag->name, ms);
		errno = ETIMEDOUT;
		return -1;
	}
	if (recv_fd(ag->sock, r, sizeof(*r), fd ? fd : &dummy) != (ssize_t)sizeof(*r)) {
		errno = EPIPE;
		return -1;
	}
	if (!fd && dummy >= 0)
		close(dummy);
	return 0;
}

static long call(struct dpt_agent *ag, struct req *q, void *out, size_t n)
{
	struct rep r;

	if (send_req(ag, q, -1) || get_rep(ag, &r, DPT_WAIT_MS, NULL))
		return -1;
	if (out)
		memcpy(out, r.data, n);
	errno = r.err;
	return r.ret;
}

int dpt_a_bind(struct dpt_agent *ag, uint32_t dpid, uint32_t pool, uint32_t admit)
{
	struct req q = { .op = OP_BIND, .a = dpid, .b = pool, .c = admit };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_connect(struct dpt_agent *ag, int slot, uint32_t nid, uint32_t dpid)
{
	struct req q = { .op = OP_CONNECT, .slot = slot, .a = nid, .b = dpid };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_disconnect(struct dpt_agent *ag, int slot, uint32_t nid, uint32_t dpid)
{
	struct req q = { .op = OP_DISCONNECT, .slot = slot, .a = nid, .b = dpid };

	return (int)call(ag, &q, NULL, 0);
}

long dpt_a_write(struct dpt_agent *ag, int slot, uint32_t len, uint32_t seed)
{
	struct req q = { .op = OP_WRITE, .slot = slot, .a = len, .b = seed };

	return call(ag, &q, NULL, 0);
}

int dpt_a_info(struct dpt_agent *ag, int slot, struct dp_info *info)
{
	struct req q = { .op = OP_INFO, .slot = slot };

	memset(info, 0, sizeof(*info));
	return (int)call(ag, &q, info, sizeof(*info));
}

int dpt_a_stats(struct dpt_agent *ag, int slot, struct dp_ep_stats *st)
{
	struct req q = { .op = OP_STATS, .slot = slot };

	memset(st, 0, sizeof(*st));
	return (int)call(ag, &q, st, sizeof(*st));
}

int dpt_a_wait(struct dpt_agent *ag, int slot, int ms)
{
	struct req q = { .op = OP_WAIT, .slot = slot, .a = (uint32_t)ms };
	struct rep r;

	if (send_req(ag, &q, -1) || get_rep(ag, &r, ms + DPT_WAIT_MS, NULL))
		return -1;
	errno = r.err;
	return (int)r.ret;
}

int dpt_a_head(struct dpt_agent *ag, int slot, struct dpt_head *h)
{
	struct req q = { .op = OP_HEAD, .slot = slot };

	memset(h, 0, sizeof(*h));
	return (int)call(ag, &q, h, sizeof(*h));
}

int dpt_a_release(struct dpt_agent *ag, int slot, uint32_t n)
{
	struct req q = { .op = OP_RELEASE, .slot = slot, .a = n };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_close(struct dpt_agent *ag, int slot)
{
	struct req q = { .op = OP_CLOSE, .slot = slot };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_mmap(struct dpt_agent *ag, int slot)
{
	struct req q = { .op = OP_MMAP, .slot = slot };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_open(struct dpt_agent *ag, const char *path, int flags)
{
	struct req q = { .op = OP_OPEN, .a = (uint32_t)flags };

	snprintf(q.s, sizeof(q.s), "%s", path);
	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_pidfd_getfd(struct dpt_agent *ag, pid_t pid, int fd)
{
	struct req q = { .op = OP_GETFD, .a = (uint32_t)pid, .b = (uint32_t)fd };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_ptrace_attach(struct dpt_agent *ag, pid_t pid)
{
	struct req q = { .op = OP_PTRACE, .a = (uint32_t)pid };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_fdnum(struct dpt_agent *ag, int slot)
{
	struct req q = { .op = OP_FDNUM, .slot = slot };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_give(struct dpt_agent *ag, int slot)
{
	struct req q = { .op = OP_GIVE, .slot = slot };
	struct rep r;
	int fd;

	if (send_req(ag, &q, -1) || get_rep(ag, &r, DPT_WAIT_MS, &fd))
		return -1;
	if (r.ret < 0) {
		errno = r.err;
		return -1;
	}
	if (fd < 0)
		errno = EBADF;
	return fd;
}

int dpt_a_take(struct dpt_agent *ag, int fd)
{
	struct req q = { .op = OP_TAKE };
	struct rep r;

	if (send_req(ag, &q, fd) || get_rep(ag, &r, DPT_WAIT_MS, NULL))
		return -1;
	errno = r.err;
	return (int)r.ret;
}

int dpt_a_memlock(struct dpt_agent *ag, uint64_t bytes)
{
	struct req q = { .op = OP_MEMLOCK, .x = bytes };

	return (int)call(ag, &q, NULL, 0);
}

long dpt_a_vmpin(struct dpt_agent *ag)
{
	struct req q = { .op = OP_VMPIN };

	return call(ag, &q, NULL, 0);
}

int dpt_a_userns(struct dpt_agent *ag, int netns)
{
	struct req q = { .op = OP_USERNS, .a = (uint32_t)!!netns };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_unshare_user(struct dpt_agent *ag)
{
	struct req q = { .op = OP_UNSHARE_USER };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_seteuid(struct dpt_agent *ag, uid_t uid)
{
	struct req q = { .op = OP_SETEUID, .a = (uint32_t)uid };

	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_sh(struct dpt_agent *ag, const char *cmd)
{
	struct req q = { .op = OP_SH };

	snprintf(q.s, sizeof(q.s), "%s", cmd);
	return (int)call(ag, &q, NULL, 0);
}

int dpt_a_flood_start(struct dpt_agent *ag, int slot, uint32_t len)
{
	struct req q = { .op = OP_FLOOD, .slot = slot, .a = len };

	return send_req(ag, &q, -1);
}

int dpt_a_flood_stop(struct dpt_agent *ag)
{
	return kill(ag->pid, SIGUSR1);
}

int dpt_a_echo_start(struct dpt_agent *ag, int slot, uint32_t n, int ms)
{
	struct req q = { .op = OP_ECHO, .slot = slot, .a = n, .b = (uint32_t)ms };

	return send_req(ag, &q, -1);
}

int dpt_a_ping_start(struct dpt_agent *ag, int slot, uint32_t n, uint32_t len, int ms)
{
	struct req q = { .op = OP_PING, .slot = slot, .a = n, .b = len, .c = (uint32_t)ms };

	return send_req(ag, &q, -1);
}

long dpt_a_result(struct dpt_agent *ag, int ms, long *err2)
{
	struct rep r;

	if (get_rep(ag, &r, ms, NULL))
		return -1;
	if (r.data[0])
		ktap_diag("agent %s: %.*s", ag->name, (int)sizeof(r.data), (const char *)r.data);
	if (err2)
		*err2 = (long)r.ret2;
	errno = r.err;
	return (long)r.ret;
}
