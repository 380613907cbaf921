// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user limits on bound endpoints and pool memory (docs/contract.md):
 *  - uid_max_endpoints: the next bind of that uid fails with EMFILE, in any
 *    of its processes; another uid is not affected; a close makes room;
 *  - uid_max_pool_mb: EDQUOT, likewise, for pools and for edges;
 *  - RLIMIT_MEMLOCK, charged to the user's locked_vm like io_uring and
 *    AF_XDP: ENOBUFS at the limit, shared by the uid's processes; not
 *    applied with CAP_IPC_LOCK (root);
 *  - each pool shows as VmPin in /proc/PID/status of the process that bound
 *    it, and all of it returns to the baseline after close;
 *  - the pool's pages are charged to the binder's memory cgroup (cgroup v2
 *    memory.current) and uncharged after close;
 *  - the default pool cap is a quarter of RAM;
 *  - the subordinate uids of a user namespace count against its owner: a
 *    process of uid 1001 in a namespace root mapped several uids into
 *    binds as those uids, and together they hit uid 1001's caps (EMFILE,
 *    EDQUOT), for uid 1001's own processes too; all is back after close.
 * The limits are module parameters, set through sysfs here; the module is
 * reloaded after the test, so they return to their defaults.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "ktap.h"
#include "dptest.h"
#include "dpt_agent.h"

#define UID_A		1001
#define UID_B		1002
#define POOL		(256u * 1024)
#define MAP_KB		((POOL + DP_POOL_CTRL_SIZE) / 1024)	/* 260 */
#define SMALL		DP_POOL_MIN
#define PARAMS		"/sys/module/dp/parameters/"

static struct dpt_agent alice, alice2, bob, root;

static long param_get(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int param_set(const char *name, long v)
{
	char path[128];
	FILE *f;
	int r;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	r = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) == 0 && r ? 0 : -1;
}

static void close_all(struct dpt_agent *ag, const int *slot, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (slot[i] >= 0)
			dpt_a_close(ag, slot[i]);
}

static void endpoints(void)
{
	long def = param_get("uid_max_endpoints");
	int s[4], o, i;

	ktap_ok(def == 1024, "uid_max_endpoints defaults to %ld (want 1024)", def);
	KTAP_SUCCESS(param_set("uid_max_endpoints", 3), "uid_max_endpoints set to 3");
	for (i = 0; i < 3; i++)
		s[i] = dpt_a_bind(&alice, 3201 + i, SMALL, 0);
	ktap_ok(s[0] >= 0 && s[1] >= 0 && s[2] >= 0, "uid %d binds 3 endpoints", UID_A);
	KTAP_ERRNO(s[3] = dpt_a_bind(&alice, 3204, SMALL, 0), EMFILE, "the 4th: EMFILE");
	KTAP_ERRNO(o = dpt_a_bind(&alice2, 3205, SMALL, 0), EMFILE,
		   "uid %d's process in node B: EMFILE too (per uid, all nodes)", UID_A);
	o = dpt_a_bind(&bob, 3301, SMALL, 0);
	KTAP_SUCCESS(o, "uid %d is not affected", UID_B);
	if (o >= 0)
		dpt_a_close(&bob, o);
	KTAP_SUCCESS(dpt_a_close(&alice, s[0]), "uid %d closes one", UID_A);
	s[0] = dpt_a_bind(&alice, 3204, SMALL, 0);
	KTAP_SUCCESS(s[0], "... and can bind again");
	close_all(&alice, s, 3);
	KTAP_SUCCESS(param_set("uid_max_endpoints", def), "uid_max_endpoints restored");
}

/*
 * Edges are kernel memory too: fill the 1 MiB with 20 KiB pools, then the
 * little that is left with edges; EDQUOT comes well before the 1024-edge
 * limit of an endpoint, and a disconnect makes room for one more.
 */
static void edges(struct dpt_agent *ag, int e, uint32_t dpid)
{
	int small[32], n, i, err = 0;

	for (n = 0; n < 32; n++) {
		small[n] = dpt_a_bind(ag, dpid + (uint32_t)n, SMALL, 0);
		if (small[n] < 0) {
			err = errno;
			break;
		}
	}
	ktap_ok(err == EDQUOT && n > 0, "%d more 20 KiB pools fill the rest: then EDQUOT (%s)", n,
		strerror(err));
	for (i = 0, err = 0; i < 1024; i++)
		if (dpt_a_connect(ag, e, 5000 + i, 1)) {
			err = errno;
			break;
		}
	ktap_ok(err == EDQUOT && i > 0 && i < 1024,
		"edges count too: EDQUOT after %d edges (%s)", i, strerror(err));
	ktap_ok(i > 0 && !dpt_a_disconnect(ag, e, 5000, 1) &&
		!dpt_a_connect(ag, e, 6000, 1), "a disconnect makes room for another edge");
	close_all(ag, small, n);
}

static void pool_memory(void)
{
	long def = param_get("uid_max_pool_mb");
	int s[5], i;

	KTAP_SUCCESS(param_set("uid_max_pool_mb", 1), "uid_max_pool_mb set to 1");
	for (i = 0; i < 3; i++)
		s[i] = dpt_a_bind(&alice, 3211 + i, POOL, 0);
	ktap_ok(s[0] >= 0 && s[1] >= 0 && s[2] >= 0, "uid %d binds 3 x %u KiB (780 KiB)", UID_A,
		MAP_KB);
	KTAP_ERRNO(s[3] = dpt_a_bind(&alice, 3214, POOL, 0), EDQUOT, "a 4th (1040 KiB): EDQUOT");
	KTAP_ERRNO(dpt_a_bind(&alice2, 3215, POOL, 0), EDQUOT,
		   "from uid %d's process in node B: EDQUOT", UID_A);
	s[3] = dpt_a_bind(&alice, 3214, SMALL, 0);
	KTAP_SUCCESS(s[3], "a 20 KiB one still fits (800 KiB)");
	s[4] = dpt_a_bind(&bob, 3311, POOL, 0);
	KTAP_SUCCESS(s[4], "uid %d is not affected", UID_B);
	if (s[4] >= 0)
		dpt_a_close(&bob, s[4]);
	edges(&alice, s[0], 3240);
	close_all(&alice, s, 4);
	for (i = 0; i < 3; i++)
		s[i] = dpt_a_bind(&alice, 3211 + i, POOL, 0);
	ktap_ok(s[0] >= 0 && s[1] >= 0 && s[2] >= 0, "after close, 3 x %u KiB fit again", MAP_KB);
	close_all(&alice, s, 3);
	KTAP_SUCCESS(param_set("uid_max_pool_mb", def), "uid_max_pool_mb restored");
}

#define SUBUID		200000	/* outer uids of the namespace's 0..SUBUIDS-1 */
#define SUBUIDS		8

/* As root: map the agent's user namespace's ids 0.. to SUBUID.. (uid and gid). */
static int map_subids(pid_t pid)
{
	static const char *const files[] = { "uid_map", "gid_map" };
	char path[64], map[64];
	unsigned int i;
	int fd, n, r;

	n = snprintf(map, sizeof(map), "0 %u %u\n", SUBUID, SUBUIDS);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, files[i]);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		r = write(fd, map, (size_t)n) == n ? 0 : -1;
		close(fd);
		if (r)
			return -1;
	}
	return 0;
}

/* As uid (in the agent's namespace), bind n endpoints into slot[]: how many. */
static int bind_as(struct dpt_agent *ag, uid_t uid, uint32_t dpid, uint32_t pool, int *slot,
		   int n)
{
	int i;

	if (dpt_a_seteuid(ag, uid)) {
		ktap_diag("%s: seteuid(%u): %s", ag->name, (unsigned int)uid, strerror(errno));
		return 0;
	}
	for (i = 0; i < n; i++) {
		slot[i] = dpt_a_bind(ag, dpid + (uint32_t)i, pool, 0);
		if (slot[i] < 0)
			break;
	}
	return i;
}

/* Endpoints: 2 + 2 of the namespace's uids 1 and 2 fill uid 1001's cap of 4. */
static void subuid_endpoints(struct dpt_agent *sub)
{
	long def = param_get("uid_max_endpoints");
	int s[8], a[5], n, o, i, e;

	KTAP_SUCCESS(param_set("uid_max_endpoints", 4), "uid_max_endpoints set to 4");
	n = bind_as(sub, 1, 3401, SMALL, s, 2);
	n += bind_as(sub, 2, 3403, SMALL, s + n, 2);
	ktap_ok(n == 4, "its uids 1 and 2 (%u, %u) bind 2 endpoints each (%d)", SUBUID + 1,
		SUBUID + 2, n);
	o = bind_as(sub, 3, 3405, SMALL, s + n, 1);
	e = errno;
	n += o;
	ktap_ok(o == 0 && e == EMFILE,
		"its uid 3 (%u), holding none itself: EMFILE, uid %d's cap is reached (%s)",
		SUBUID + 3, UID_A, o ? "bound" : strerror(e));
	KTAP_ERRNO(o = dpt_a_bind(&alice, 3406, SMALL, 0), EMFILE,
		   "uid %d's own process outside the namespace: EMFILE", UID_A);
	close_all(&alice, &o, 1);	/* should it have bound, for the tests after */
	o = dpt_a_bind(&bob, 3407, SMALL, 0);
	KTAP_SUCCESS(o, "uid %d is not affected", UID_B);
	if (o >= 0)
		dpt_a_close(&bob, o);
	close_all(sub, s, n);
	for (i = 0; i < 5; i++)
		a[i] = dpt_a_bind(&alice, 3411 + i, SMALL, 0);
	ktap_ok(a[0] >= 0 && a[1] >= 0 && a[2] >= 0 && a[3] >= 0 && a[4] < 0 && errno == EMFILE,
		"after close, uid %d binds 4 again and the 5th gets EMFILE", UID_A);
	close_all(&alice, a, 5);
	ktap_ok(bind_as(sub, 3, 3405, SMALL, s, 4) == 4,
		"and the namespace's uid 3 binds 4 alone");
	close_all(sub, s, 4);
	KTAP_SUCCESS(param_set("uid_max_endpoints", def), "uid_max_endpoints restored");
}

/* Pool memory: 3 x 260 KiB over uids 1 and 2, then the 4th is over 1 MiB. */
static void subuid_memory(struct dpt_agent *sub)
{
	long def = param_get("uid_max_pool_mb");
	int s[4], n, o, e;

	KTAP_SUCCESS(param_set("uid_max_pool_mb", 1), "uid_max_pool_mb set to 1");
	n = bind_as(sub, 1, 3421, POOL, s, 2);
	n += bind_as(sub, 2, 3423, POOL, s + n, 1);
	ktap_ok(n == 3, "its uids 1 and 2 bind 3 x %u KiB (%d)", MAP_KB, n);
	o = bind_as(sub, 2, 3424, POOL, s + n, 1);
	e = errno;
	n += o;
	ktap_ok(o == 0 && e == EDQUOT, "a 4th (1040 KiB for uid %d): EDQUOT (%s)", UID_A,
		o ? "bound" : strerror(e));
	KTAP_ERRNO(o = dpt_a_bind(&alice, 3425, POOL, 0), EDQUOT,
		   "uid %d's own process: EDQUOT too", UID_A);
	close_all(&alice, &o, 1);
	edges(sub, s[0], 3440);	/* its uid 2's pools, its uid 1's edges */
	close_all(sub, s, n);
	n = bind_as(sub, 3, 3421, POOL, s, 3);
	ktap_ok(n == 3, "after close, 3 x %u KiB fit again (%d)", MAP_KB, n);
	close_all(sub, s, n);
	KTAP_SUCCESS(param_set("uid_max_pool_mb", def), "uid_max_pool_mb restored");
}

/*
 * Subordinate uids: uid 1001 makes a user namespace, root maps 8 uids into
 * it (SUBUID..), and the agent binds as several of them.
 */
static void subuids(void)
{
	struct dpt_agent sub;

	dpt_allow_userns();
	if (dpt_agent_start(&sub, "sub", dpt.nsa, UID_A, 0)) {
		ktap_ok(0, "start the subordinate-uid agent");
		return;
	}
	if (!KTAP_SUCCESS(dpt_a_unshare_user(&sub), "uid %d makes a user namespace", UID_A) ||
	    !KTAP_SUCCESS(map_subids(sub.pid), "root maps its uids and gids 0..%d to %u..%u",
			  SUBUIDS - 1, SUBUID, SUBUID + SUBUIDS - 1)) {
		dpt_agent_stop(&sub);
		return;
	}
	subuid_endpoints(&sub);
	subuid_memory(&sub);
	dpt_agent_stop(&sub);
}

/* uid_max_pool_mb defaults to a quarter of RAM (MemTotal), in MiB. */
static void pool_default(void)
{
	long def = param_get("uid_max_pool_mb"), kb = -1, want;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	want = (kb / 4) >> 8 >> 2;	/* pages, MiB, a quarter */
	if (want < DP_POOL_MAX / (1024 * 1024) + 1)
		want = DP_POOL_MAX / (1024 * 1024) + 1;
	ktap_ok(kb > 0 && def == want, "uid_max_pool_mb defaults to %ld MiB (MemTotal %ld kB: %ld)",
		def, kb, want);
}

/* VmPin of ag is base + kb, waiting a little for nothing: it is synchronous. */
static int vmpin_is(struct dpt_agent *ag, long want)
{
	long v = dpt_a_vmpin(ag);

	if (v != want)
		ktap_diag("%s: VmPin %ld kB, want %ld", ag->name, v, want);
	return v == want;
}

static void memlock(void)
{
	long base = dpt_a_vmpin(&alice), base2 = dpt_a_vmpin(&alice2), rbase;
	int s[3], t[2];

	if (!ktap_ok(base >= 0 && base2 >= 0, "VmPin readable (uid %d: %ld kB)", UID_A, base))
		return;
	KTAP_SUCCESS(dpt_a_memlock(&alice, 600 * 1024) | dpt_a_memlock(&alice2, 600 * 1024),
		     "RLIMIT_MEMLOCK 600 KiB for both processes of uid %d", UID_A);
	s[0] = dpt_a_bind(&alice, 3221, POOL, 0);
	ktap_ok(s[0] >= 0 && vmpin_is(&alice, base + MAP_KB), "a %u KiB pool: VmPin +%u kB",
		MAP_KB, MAP_KB);
	s[1] = dpt_a_bind(&alice, 3222, POOL, 0);
	ktap_ok(s[1] >= 0 && vmpin_is(&alice, base + 2 * MAP_KB), "a second: VmPin +%u kB",
		2 * MAP_KB);
	KTAP_ERRNO(s[2] = dpt_a_bind(&alice, 3223, POOL, 0), ENOBUFS,
		   "a third (780 KiB > 600 KiB): ENOBUFS");
	ktap_ok(vmpin_is(&alice, base + 2 * MAP_KB), "VmPin unchanged by the refused bind");
	KTAP_ERRNO(t[0] = dpt_a_bind(&alice2, 3224, POOL, 0), ENOBUFS,
		   "the other process of uid %d: ENOBUFS (locked_vm is per user)", UID_A);
	t[0] = dpt_a_bind(&alice2, 3224, SMALL, 0);
	ktap_ok(t[0] >= 0 && vmpin_is(&alice2, base2 + 20), "a 20 KiB pool fits (540 KiB)");
	close_all(&alice2, t, 1);
	ktap_ok(vmpin_is(&alice2, base2), "closed: its VmPin is back to %ld kB", base2);
	close_all(&alice, s, 2);
	ktap_ok(vmpin_is(&alice, base), "both closed: VmPin back to %ld kB", base);
	t[0] = dpt_a_bind(&alice2, 3225, POOL, 0);
	t[1] = dpt_a_bind(&alice2, 3226, POOL, 0);
	ktap_ok(t[0] >= 0 && t[1] >= 0, "the user's locked memory was returned: 2 pools fit again");
	close_all(&alice2, t, 2);

	rbase = dpt_a_vmpin(&root);
	KTAP_SUCCESS(dpt_a_memlock(&root, 0), "root: RLIMIT_MEMLOCK 0");
	s[0] = dpt_a_bind(&root, 3227, POOL, 0);
	ktap_ok(s[0] >= 0 && vmpin_is(&root, rbase + MAP_KB),
		"root (CAP_IPC_LOCK) binds anyway, still shown in VmPin");
	close_all(&root, s, 1);
	ktap_ok(vmpin_is(&root, rbase), "closed: root's VmPin back to %ld kB", rbase);
}

#define CGROOT		"/sys/fs/cgroup"
#define CGTEST		CGROOT "/dp-quota"
#define BIG		(4u * 1024 * 1024)

static int put(const char *path, const char *fmt, long v)
{
	FILE *f = fopen(path, "w");
	int r;

	if (!f)
		return -1;
	r = fprintf(f, fmt, v) > 0;
	return fclose(f) == 0 && r ? 0 : -1;
}

static long long memcg_current(void)
{
	long long v = -1;
	FILE *f = fopen(CGTEST "/memory.current", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* A cgroup v2 group with the memory controller holding the agent. */
static int memcg_setup(pid_t pid)
{
	if (access(CGROOT "/cgroup.controllers", F_OK)) {
		mkdir(CGROOT, 0755);
		if (mount("none", CGROOT, "cgroup2", 0, NULL))
			return -1;
	}
	put(CGROOT "/cgroup.subtree_control", "+memory\n", 0);
	if (mkdir(CGTEST, 0755) && errno != EEXIST)
		return -1;
	return put(CGTEST "/cgroup.procs", "%ld\n", (long)pid);
}

/* memory.current of the group has dropped to at most want, within the wait. */
static long long memcg_drops_to(long long want)
{
	long long v = memcg_current();
	int waited;

	for (waited = 0; v > want && waited < DPT_WAIT_MS; waited += 20) {
		dpt_sleep_ms(20);
		v = memcg_current();
	}
	return v;
}

/* Whether the running kernel has the memory controller (CONFIG_MEMCG). */
static int kernel_has_memcg(void)
{
	char line[128];
	FILE *f = fopen("/proc/cgroups", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "memory\t", 7);
	fclose(f);
	return found;
}

static void memcg(void)
{
	struct dpt_agent carl;
	long long m0, m1, m2;
	int s;

	/* The sanitizer kernel (make check-debug) is built without it. */
	if (!kernel_has_memcg()) {
		ktap_skip("kernel without CONFIG_MEMCG", "pool memory charged to the memory cgroup");
		return;
	}
	if (dpt_agent_start(&carl, "carl", dpt.nsa, UID_A, 0)) {
		ktap_ok(0, "start an agent for the memory cgroup");
		return;
	}
	if (!ktap_ok(memcg_setup(carl.pid) == 0 && memcg_current() >= 0,
		     "uid %d's process in a cgroup v2 group with the memory controller", UID_A)) {
		dpt_agent_stop(&carl);
		return;
	}
	m0 = memcg_current();
	s = dpt_a_bind(&carl, 3231, BIG, 0);
	m1 = memcg_current();
	/* per-CPU charge batching may hide up to 64 pages either way */
	ktap_ok(s >= 0 && m1 - m0 >= BIG - 512 * 1024,
		"a 4 MiB pool raises the group's memory.current by %lld KiB", (m1 - m0) / 1024);
	if (s >= 0)
		dpt_a_close(&carl, s);
	m2 = memcg_drops_to(m1 - (BIG - 512 * 1024));
	ktap_ok(m1 - m2 >= BIG - 512 * 1024,
		"after close (and an RCU grace period) it is uncharged: -%lld KiB",
		(m1 - m2) / 1024);
	dpt_agent_stop(&carl);
	rmdir(CGTEST);
}

int main(void)
{
	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	if (dpt_agent_start(&alice, "alice", dpt.nsa, UID_A, 0) ||
	    dpt_agent_start(&alice2, "alice2", dpt.nsb, UID_A, 0) ||
	    dpt_agent_start(&bob, "bob", dpt.nsa, UID_B, 0) ||
	    dpt_agent_start(&root, "root", dpt.nsa, 0, 0))
		ktap_bail("start the agents");
	pool_default();
	endpoints();
	pool_memory();
	subuids();
	memlock();
	memcg();
	dpt_agent_stop(&alice);
	dpt_agent_stop(&alice2);
	dpt_agent_stop(&bob);
	dpt_agent_stop(&root);
	ktap_finish();
}
