// SPDX-License-Identifier: GPL-2.0
/*
 * A sender whose buffer faults must not hold up the node.  The buffer of a
 * write() is a userfaultfd page nobody serves yet, so the copy of the
 * user's bytes cannot finish; meanwhile the node's NIC is detached
 * (dpctl node detach; "link" as argument: the veth is deleted, which
 * detaches under rtnl).  The detach must finish while the fault is still
 * pending; once the page is served, the write ends with ENETDOWN, and the
 * node works again after a re-attach.  Before the fix the NIC reference
 * was held across the fault: the detach, and with it rtnl, waited for as
 * long as the fault's owner liked (here: forever).
 *
 * Root only (userfaultfd for kernel faults); exits with KSFT_SKIP when
 * userfaultfd is missing.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200
#define DETACH_MS 20000		/* a detach takes well under a second */

static int a_fd;
static char *page;
static long w_ret;
static int w_err, w_done;

static void *writer(void *arg)
{
	long r = write(a_fd, page, 100);

	(void)arg;
	w_err = errno;
	w_ret = r;
	__atomic_store_n(&w_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int uffd_page(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		ktap_exit_skip("no userfaultfd");
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		ktap_bail("mmap");
	reg.range.start = (unsigned long)page;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		ktap_exit_skip("userfaultfd cannot register");
	return uffd;
}

static void serve(int uffd)
{
	struct uffdio_zeropage zp = {
		.range = { .start = (unsigned long)page, .len = 4096 },
	};

	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp) && errno != EEXIST)
		ktap_diag("UFFDIO_ZEROPAGE: %s", strerror(errno));
}

/* The detach, in a child; its pid. */
static pid_t detach(const char *how)
{
	pid_t pid = dpt_fork();

	if (pid == 0) {
		if (!strcmp(how, "link"))
			execlp(dpt_ip(), "ip", "-n", dpt.nsa,
			       "link", "del", dpt.ifa, (char *)NULL);
		else if (!dpt_ns(dpt.nsa))
			execlp("dpctl", "dpctl", "node", "detach", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Wait up to ms for the child; its status, or -1 if it is still running. */
static int wait_ms(pid_t pid, int ms)
{
	int st, waited;

	for (waited = 0; waited < ms; waited += 20) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		dpt_sleep_ms(20);
	}
	return -1;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "dpctl";
	pthread_t th;
	int b, uffd, st;
	pid_t pid;

	ktap_start();
	if (dpt_init())
		return KSFT_FAIL;
	if (!strcmp(how, "link") && strcmp(dpt.backend, "netdev"))
		ktap_exit_skip("no Linux netdev over dp's own NIC drivers (tulip, myri)");
	uffd = uffd_page();
	dpt_pair(&a_fd, DPID_A, &b, DPID_B);
	pthread_create(&th, NULL, writer, NULL);
	{
		/* the writer ran: its page fault is waiting on the userfaultfd */
		struct pollfd pf = { .fd = uffd, .events = POLLIN };

		ktap_ok(poll(&pf, 1, DPT_WAIT_MS) == 1 && (pf.revents & POLLIN) &&
			!__atomic_load_n(&w_done, __ATOMIC_ACQUIRE),
			"write() waits on its faulting buffer (its fault is pending)");
	}
	pid = detach(how);
	st = wait_ms(pid, DETACH_MS);
	ktap_ok(st != -1, "detach (%s) finishes while the sender's page fault is pending", how);
	/* Serve the fault first: a stuck detach then finishes too. */
	serve(uffd);
	if (st == -1)
		st = wait_ms(pid, DETACH_MS);
	ktap_ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "detach succeeded (status %#x)",
		st);
	pthread_join(th, NULL);
	ktap_ok(w_ret == -1 && w_err == ENETDOWN, "the write then fails with ENETDOWN (got %ld, %s)",
		w_ret, strerror(w_err));
	if (strcmp(how, "link")) {
		const char *be = dpt.backend;

		ktap_ok(dpt_sh("'%s' netns exec %s dpctl node set dev %s backend %s",
			       dpt_ip(), dpt.nsa, dpt.ifa,
			       be) == 0 &&
			write(a_fd, "again", 5) == 5 && dpt_wait_readable(b, DPT_WAIT_MS) == 1,
			"after a re-attach a message goes through again");
	}
	close(a_fd);
	close(b);
	ktap_finish();
}
