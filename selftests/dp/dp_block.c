// SPDX-License-Identifier: GPL-2.0
/*
 * Blocking receive: read() sleeps on an empty pool and wakes when a message
 * arrives (sent by a child once the parent is asleep in read); O_NONBLOCK
 * gives EAGAIN; a signal interrupts the sleep with EINTR.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* State letter of a task from /proc/PID/stat ('S' = interruptible sleep). */
static char task_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Child: wait until the parent sleeps, then send msg; exit 0 if it slept. */
static pid_t sender(int a, const uint8_t *msg, size_t len)
{
	pid_t parent = getpid(), pid = dpt_fork();
	int i, slept = 0;

	if (pid)
		return pid;
	for (i = 0; i < 2000 && !slept; i++) {
		dpt_sleep_ms(5);
		slept = task_state(parent) == 'S';
	}
	dpt_sleep_ms(50);	/* let it settle in the sleep */
	slept = slept && task_state(parent) == 'S';
	_exit(write(a, msg, len) == (ssize_t)len ? (slept ? 0 : 2) : 1);
}

int main(void)
{
	struct sigaction sa;
	struct itimerval it;
	struct dp_ep_stats st;
	uint8_t out[777], in[1024];
	int a, b, status, fl;
	ssize_t n;
	pid_t pid;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	dpt_pair(&a, DPID_A, &b, DPID_B);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: read() must return EINTR */
	sigaction(SIGALRM, &sa, NULL);

	/* 1. A blocking read is woken by an arriving message. */
	dpt_random(out, sizeof(out));
	pid = sender(a, out, sizeof(out));
	alarm(20);			/* a lost wake-up fails instead of hanging */
	n = read(b, in, sizeof(in));
	alarm(0);
	status = dpt_wait_child(pid, DPT_WAIT_MS);
	ktap_ok(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 1,
		"child sent the message (exit %d)", status != -1 && WIFEXITED(status) ?
		WEXITSTATUS(status) : -1);
	ktap_ok(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"parent was asleep in read() when the message was sent");
	if (n < 0)
		ktap_diag("read: %s (alarms %d)", strerror(errno), (int)alarms);
	ktap_ok(n == (ssize_t)sizeof(out) && !memcmp(in, out, sizeof(out)),
		"blocked read() woke with the %zu-byte message (got %zd)", sizeof(out), n);
	dpt_stats(b, &st);
	ktap_ok(st.queued == 0, "read() released the message");

	/* 2. A signal interrupts the sleep. */
	alarms = 0;
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 200000;
	setitimer(ITIMER_REAL, &it, NULL);
	n = read(b, in, sizeof(in));
	ktap_ok(n == -1 && errno == EINTR && alarms == 1,
		"a signal interrupts a blocked read(): EINTR (got %zd, %s)", n,
		n < 0 ? strerror(errno) : "data");

	/* 3. O_NONBLOCK */
	fl = fcntl(b, F_GETFL);
	fcntl(b, F_SETFL, fl | O_NONBLOCK);
	KTAP_ERRNO(read(b, in, sizeof(in)), EAGAIN, "O_NONBLOCK read() on an empty pool: EAGAIN");
	n = write(a, out, 100);
	ktap_ok(n == 100 && dpt_wait_readable(b, DPT_WAIT_MS) == 1, "message arrives");
	n = read(b, in, sizeof(in));
	ktap_ok(n == 100 && !memcmp(in, out, 100), "O_NONBLOCK read() returns a queued message");
	fcntl(b, F_SETFL, fl);

	/* 4. Two messages: the blocking read returns them one at a time. */
	ktap_ok(write(a, out, 10) == 10 && write(a, out + 10, 20) == 20 &&
		dpt_wait_arrivals(b, 4, DPT_WAIT_MS) == 1, "two more arrive");
	alarm(20);
	n = read(b, in, sizeof(in));
	ktap_ok(n == 10 && !memcmp(in, out, 10), "first read() returns the first message only");
	n = read(b, in, sizeof(in));
	ktap_ok(n == 20 && !memcmp(in, out + 10, 20), "second read() returns the second");
	alarm(0);
	close(a);
	close(b);
	ktap_finish();
}
