// SPDX-License-Identifier: GPL-2.0
/*
 * Readiness: poll() and epoll report EPOLLOUT always on a bound endpoint,
 * EPOLLIN only while a message is queued; a sleeping poll()/epoll_wait() is
 * woken by an arrival; edge-triggered epoll fires once per arrival; an
 * unbound endpoint reports EPOLLERR.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200

static short poll_now(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM };

	return poll(&p, 1, 0) < 0 ? -1 : p.revents;
}

static uint32_t epoll_now(int ep, int ms)
{
	struct epoll_event ev[2];
	int n = epoll_wait(ep, ev, 2, ms);

	return n == 1 ? ev[0].events : n == 0 ? 0 : 0x80000000u;
}

static int send1(int a)
{
	static const char m[] = "readiness";

	return write(a, m, sizeof(m)) == sizeof(m) ? 0 : -1;
}

/*
 * A child that sends once the parent sleeps in poll/epoll_wait (its state
 * and system call in /proc); it exits 2 if the parent was never seen there,
 * so that "a sleeping poll() wakes" cannot pass on a poll that never slept.
 */
static pid_t late_sender(int a)
{
	static const long polls[] = { SYS_poll, SYS_ppoll, SYS_epoll_wait, SYS_epoll_pwait };
	pid_t parent = getpid(), pid = dpt_fork();
	char what[96];
	int asleep;

	if (pid)
		return pid;
	asleep = dpt_wait_blocked(parent, polls, 4, 10000, what, sizeof(what));
	if (!asleep)
		ktap_diag("late sender: the parent never slept in poll/epoll_wait (%s)", what);
	_exit(send1(a) ? 1 : asleep ? 0 : 2);
}

int main(void)
{
	struct epoll_event ev;
	struct pollfd pfd;
	int a, b, u, ep, r, st;
	short re;
	uint32_t e;
	pid_t pid;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	dpt_pair(&a, DPID_A, &b, DPID_B);

	/* poll() */
	re = poll_now(b);
	ktap_ok(re == (POLLOUT | POLLWRNORM), "poll on empty: POLLOUT|POLLWRNORM only (%#x)", re);
	ktap_ok(send1(a) == 0 && dpt_wait_readable(b, DPT_WAIT_MS) == 1,
		"poll(POLLIN) reports the arrival");
	re = poll_now(b);
	ktap_ok(re == (POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM),
		"poll with a message: POLLIN|POLLRDNORM|POLLOUT|POLLWRNORM (%#x)", re);
	re = poll_now(b);
	ktap_ok(re & POLLIN, "still readable: polling does not consume");
	ktap_ok(dpt_release(b, 1) == 1, "release the message");
	re = poll_now(b);
	ktap_ok(!(re & POLLIN) && (re & POLLOUT), "not readable after release (%#x)", re);
	re = poll_now(a);
	ktap_ok(re == (POLLOUT | POLLWRNORM), "sender: POLLOUT only (%#x)", re);

	/* a sleeping poll() is woken */
	pid = late_sender(a);
	pfd.fd = b;
	pfd.events = POLLIN;
	pfd.revents = 0;
	r = poll(&pfd, 1, 20000);
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	ktap_ok(r == 1 && (pfd.revents & POLLIN) && st == 0,
		"a sleeping poll() wakes on arrival (r %d revents %#x, sender %d)", r, pfd.revents,
		st);
	dpt_release(b, 1);

	/* epoll, level-triggered */
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.events = EPOLLIN | EPOLLOUT;
	ev.data.fd = b;
	KTAP_SUCCESS(epoll_ctl(ep, EPOLL_CTL_ADD, b, &ev), "epoll_ctl ADD");
	e = epoll_now(ep, 0);
	ktap_ok(e == EPOLLOUT, "epoll on empty: EPOLLOUT only (%#x)", e);
	if (send1(a))
		ktap_diag("write: %s", strerror(errno));
	for (r = 0, e = 0; r < 1000 && !(e & EPOLLIN); r++)
		e = epoll_now(ep, 10);
	/*
	 * Did the edge stall: its RTO, backoff, what is unacknowledged.  Shown
	 * before the result, so that the harness keeps it with the failure.
	 */
	if (!(e & EPOLLIN))
		dpt_show_sessions();
	ktap_ok((e & (EPOLLIN | EPOLLOUT)) == (EPOLLIN | EPOLLOUT), "epoll: EPOLLIN|EPOLLOUT after arrival (%#x)", e);
	e = epoll_now(ep, 0);
	ktap_ok(e & EPOLLIN, "level-triggered: still EPOLLIN (%#x)", e);
	dpt_release(b, 1);
	e = epoll_now(ep, 0);
	ktap_ok(e == EPOLLOUT, "epoll after release: EPOLLOUT only (%#x)", e);

	/* epoll, edge-triggered, input only: one event per arrival */
	ev.events = EPOLLIN | EPOLLET;
	epoll_ctl(ep, EPOLL_CTL_MOD, b, &ev);
	e = epoll_now(ep, 0);
	ktap_ok(e == 0, "EPOLLET on empty: no event (%#x)", e);
	pid = late_sender(a);
	e = epoll_now(ep, 20000);
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	if (!(e & EPOLLIN) || st)
		dpt_show_sessions();
	ktap_ok((e & EPOLLIN) && st == 0, "a sleeping epoll_wait wakes on arrival (%#x, sender %d)",
		e, st);
	e = epoll_now(ep, 0);
	ktap_ok(e == 0, "EPOLLET: no second event without a new arrival (%#x)", e);
	send1(a);
	for (r = 0, e = 0; r < 1000 && !(e & EPOLLIN); r++)
		e = epoll_now(ep, 10);
	ktap_ok(e & EPOLLIN, "EPOLLET: a second arrival gives a new event (%#x)", e);
	dpt_release(b, 2);
	close(ep);

	/* unbound */
	dpt_ns(dpt.nsa);
	u = dpt_open();
	re = poll_now(u);
	ktap_ok(re & POLLERR, "poll on an unbound endpoint: POLLERR (%#x)", re);
	close(u);
	close(a);
	close(b);
	ktap_finish();
}
