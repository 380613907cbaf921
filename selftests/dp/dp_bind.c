// SPDX-License-Identifier: GPL-2.0
/*
 * DPID binding: a DPID is held by one endpoint per node; a duplicate bind
 * fails with EADDRINUSE; the DPID is free again after close() and after the
 * holding process is killed (also when it had the pool mapped).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "ktap.h"
#include "dptest.h"

/* A child that takes dpid in ns, optionally maps the pool, then waits. */
static pid_t holder(uint32_t dpid, int map)
{
	int p[2];
	pid_t pid;
	char c = 0;

	if (pipe(p))
		return -1;
	pid = dpt_fork();
	if (pid == 0) {
		int fd = dpt_ep(dpt.nsa, dpid, 0);
		struct dpt_pool pool;

		c = fd >= 0 ? 'b' : 'e';
		if (fd >= 0 && map && dpt_map(fd, &pool))
			c = 'm';
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1 || c != 'b') {
		ktap_diag("holder child failed to bind/map (%c)", c);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		pid = -1;
	}
	close(p[0]);
	return pid;
}

static void test_killed(uint32_t dpid, int map)
{
	pid_t pid = holder(dpid, map);
	int fd, st;

	if (!ktap_ok(pid > 0, "child process binds DPID %u%s", dpid, map ? " and maps the pool" : ""))
		return;
	dpt_ns(dpt.nsa);
	fd = dpt_open();
	KTAP_ERRNO(dpt_bind(fd, dpid, 0), EADDRINUSE,
		   "DPID %u held by another process: EADDRINUSE", dpid);
	kill(pid, SIGKILL);
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	ktap_ok(st != -1 && WIFSIGNALED(st), "holder killed");
	KTAP_SUCCESS(dpt_bind(fd, dpid, 0), "DPID %u free after the holder was killed", dpid);
	close(fd);
}

int main(void)
{
	struct dp_info info;
	int a1, a2, b1;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");

	a1 = dpt_ep(dpt.nsa, 100, 0);
	if (!KTAP_SUCCESS(a1, "bind DPID 100 in node A"))
		ktap_finish();
	KTAP_SUCCESS(dpt_info(a1, &info), "DP_IOC_INFO on the bound endpoint");
	ktap_ok(info.dpid == 100 && info.nid == dpt.nida,
		"info reports dpid %u nid %u (want 100, %u)", info.dpid, info.nid, dpt.nida);
	ktap_ok(info.data_size == 262144 && info.map_size == DP_POOL_CTRL_SIZE + 262144,
		"default pool: data_size %u map_size %u", info.data_size, info.map_size);

	a2 = dpt_open();
	KTAP_ERRNO(dpt_bind(a2, 100, 0), EADDRINUSE, "second bind of DPID 100 in A: EADDRINUSE");
	KTAP_ERRNO(dpt_bind(a1, 101, 0), EISCONN, "bind on a bound fd: EISCONN");
	KTAP_SUCCESS(dpt_bind(a2, 101, 0), "the failed fd can still bind another DPID");
	close(a2);

	b1 = dpt_ep(dpt.nsb, 100, 0);
	KTAP_SUCCESS(b1, "DPID 100 in node B is independent of node A");
	if (b1 >= 0)
		close(b1);

	dpt_ns(dpt.nsa);
	close(a1);
	a2 = dpt_open();
	KTAP_SUCCESS(dpt_bind(a2, 100, 0), "DPID 100 free again after close()");
	close(a2);

	/* Only the last reference frees it: a dup keeps the endpoint. */
	a1 = dpt_ep(dpt.nsa, 102, 0);
	a2 = dup(a1);
	close(a1);
	a1 = dpt_open();
	KTAP_ERRNO(dpt_bind(a1, 102, 0), EADDRINUSE, "DPID 102 still held through a dup()ed fd");
	close(a2);
	KTAP_SUCCESS(dpt_bind(a1, 102, 0), "DPID 102 free after the last fd closed");
	close(a1);

	test_killed(103, 0);
	test_killed(104, 1);
	ktap_finish();
}
