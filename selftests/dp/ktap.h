/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KTAP output for the dp selftest programs (kselftest style), in the order
 * of the kernel's KTAP specification (Documentation/dev-tools/ktap.rst):
 * the version line, the plan, then one "ok N desc" / "not ok N desc" per
 * check with "# ..." diagnostics between them.
 *
 * A program's checks depend on what it finds (sizes, loops, early stops), so
 * it does not know its plan at the start.  The results and diagnostics are
 * kept in memory, in order, and printed after the version line and the plan
 * when the program ends: ktap_finish(), ktap_exit_skip(), an exit() without
 * them, or a fatal signal (SIGTERM from the runner's timeout, SIGSEGV, ...),
 * the last three with one more failed result that says so.  Only the process
 * that called ktap_start() keeps results; a forked child's diagnostics go
 * straight to stdout.  The runners indent a program's output as subtests of
 * one top-level result.  Exit status: 0 all passed, 1 a failure, 4 skipped
 * (KSFT_SKIP).
 */
#ifndef _DP_KTAP_H
#define _DP_KTAP_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

/*
 * One state for the whole program: weak definitions, which the linker
 * merges, so that the shared helpers (dptest.c, dpt_agent.c) keep their
 * diagnostics in the same document as the test's own results, in order.
 * Static copies gave each file its own: a helper's diagnostics went
 * straight to stdout, ahead of the version line, and the harness could
 * not keep them with the failure they explained.
 */
#define KTAP_SHARED __attribute__((weak))
KTAP_SHARED int ktap_n, ktap_failed;
KTAP_SHARED char *ktap_buf;
KTAP_SHARED size_t ktap_len, ktap_cap;
KTAP_SHARED pid_t ktap_pid;
KTAP_SHARED int ktap_lock;	/* threads share the buffer */
KTAP_SHARED volatile sig_atomic_t ktap_done;

static inline void ktap_take(void)
{
	while (__atomic_exchange_n(&ktap_lock, 1, __ATOMIC_ACQUIRE))
		;
}

static inline void ktap_give(void)
{
	__atomic_store_n(&ktap_lock, 0, __ATOMIC_RELEASE);
}

/* Append to the kept output (ktap_lock held). */
static inline void ktap_vkeep(const char *fmt, va_list ap)
{
	va_list aq;
	size_t need;
	char *nb;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	need = ktap_len + (size_t)n + 1;
	if (need > ktap_cap) {
		size_t cap = ktap_cap ? ktap_cap : 4096;

		while (cap < need)
			cap *= 2;
		nb = realloc(ktap_buf, cap);
		if (!nb)
			return;
		ktap_buf = nb;
		ktap_cap = cap;
	}
	vsnprintf(ktap_buf + ktap_len, ktap_cap - ktap_len, fmt, ap);
	ktap_len += (size_t)n;
}

static inline void ktap_keep(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void ktap_keep(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vkeep(fmt, ap);
	va_end(ap);
}

static inline int ktap_keeper(void)
{
	return ktap_pid && getpid() == ktap_pid;
}

/* Keep (the process that started) or print (a child, or no ktap_start). */
static inline void ktap_vout(const char *fmt, va_list ap)
{
	if (ktap_keeper())
		ktap_vkeep(fmt, ap);
	else
		vprintf(fmt, ap);
}

static inline void ktap_out(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void ktap_out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vout(fmt, ap);
	va_end(ap);
}

static inline void ktap_write(const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(STDOUT_FILENO, p, n);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* "1..N" or "N" into b (no stdio: also called from a signal handler). */
static inline size_t ktap_utoa(char *b, unsigned int v)
{
	char t[16];
	size_t n = 0, i;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		b[i] = t[n - 1 - i];
	return n;
}

/*
 * Print the version line, the plan, the kept lines and, when why is set,
 * one more failed result that says why the program ended early.  Once.
 */
static inline void ktap_flush(const char *plan_directive, const char *why)
{
	char head[96];
	size_t h = 0;
	unsigned int plan = (unsigned int)ktap_n + (why ? 1 : 0);

	if (!ktap_pid && !ktap_done) {
		/* never started (a helper program): a trailing plan, as TAP allows */
		ktap_done = 1;
		printf("1..%d\n", ktap_n);
		fflush(stdout);
		return;
	}
	if (ktap_done || !ktap_keeper())
		return;
	ktap_done = 1;
	fflush(stdout);
	memcpy(head, "KTAP version 1\n1..", 18);
	h = 18 + ktap_utoa(head + 18, plan_directive ? 0 : plan);
	ktap_write(head, h);
	if (plan_directive)
		ktap_write(plan_directive, strlen(plan_directive));
	ktap_write("\n", 1);
	if (ktap_buf)
		ktap_write(ktap_buf, ktap_len);
	if (why) {
		ktap_write("not ok ", 7);
		h = ktap_utoa(head, plan);
		ktap_write(head, h);
		ktap_write(" ", 1);
		ktap_write(why, strlen(why));
		ktap_write("\n", 1);
	}
}

static inline void ktap_on_exit(void)
{
	ktap_flush(NULL, "the program exited before its end (exit() outside ktap_finish)");
}

/* A fatal signal: print what was kept with a failed result, then die of it. */
static inline void ktap_crash(int sig)
{
	const char *why = sig == SIGTERM ? "terminated (SIGTERM: the runner's timeout?)" :
			  sig == SIGSEGV ? "killed by SIGSEGV" :
			  sig == SIGBUS ? "killed by SIGBUS" :
			  sig == SIGABRT ? "killed by SIGABRT" : "killed by a fatal signal";

	ktap_flush(NULL, why);
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void ktap_start(void)
{
	static const int sigs[] = { SIGTERM, SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
	struct sigaction sa;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_pid = getpid();
	atexit(ktap_on_exit);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ktap_crash;
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static inline void ktap_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void ktap_diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_take();
	ktap_out("# ");
	ktap_vout(fmt, ap);
	ktap_out("\n");
	ktap_give();
	va_end(ap);
}

static inline int ktap_result(int ok, const char *fmt, va_list ap)
{
	ktap_take();
	ktap_n++;
	if (!ok)
		ktap_failed++;
	ktap_out("%s %d ", ok ? "ok" : "not ok", ktap_n);
	ktap_vout(fmt, ap);
	ktap_out("\n");
	ktap_give();
	return ok;
}

/* One check: returns cond so a test can stop depending on it. */
static inline int ktap_ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int ktap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = ktap_result(!!cond, fmt, ap);
	va_end(ap);
	return r;
}

static inline void ktap_skip(const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void ktap_skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	ktap_take();
	ktap_n++;
	ktap_out("ok %d ", ktap_n);
	va_start(ap, fmt);
	ktap_vout(fmt, ap);
	va_end(ap);
	ktap_out(" # SKIP %s\n", reason);
	ktap_give();
}

/* Prints the version line, the plan and the results; exits with the kselftest status. */
static inline __attribute__((noreturn)) void ktap_finish(void)
{
	ktap_flush(NULL, NULL);
	exit(ktap_failed ? KSFT_FAIL : KSFT_PASS);
}

/*
 * The program cannot run at all here: "1..0 # SKIP reason".  Checks made
 * before it stay as results, and the skip is one more.
 */
static inline __attribute__((noreturn)) void ktap_exit_skip(const char *reason)
{
	char d[256];

	if (ktap_n) {
		ktap_skip(reason, "the rest of this program");
		ktap_finish();
	}
	snprintf(d, sizeof(d), " # SKIP %s", reason);
	ktap_flush(d, NULL);
	exit(KSFT_SKIP);
}

/* A precondition failed: report it as a failed check and stop. */
static inline __attribute__((noreturn)) void ktap_bail(const char *what)
{
	int e = errno;

	ktap_ok(0, "%s (errno %d %s)", what, e, strerror(e));
	ktap_finish();
}

/* Expect expr to fail with -1 and errno e. */
#define KTAP_ERRNO(expr, e, ...)					\
	({								\
		long _r;						\
		int _e;							\
		errno = 0;						\
		_r = (long)(expr);					\
		_e = errno;						\
		if (!(_r == -1 && _e == (e)))				\
			ktap_diag("%s: got %ld errno %d (%s), want -1 errno %d (%s)", \
				  #expr, _r, _e, strerror(_e), (e), strerror(e)); \
		ktap_ok(_r == -1 && _e == (e), __VA_ARGS__);		\
	})

/* Expect expr to succeed (not -1); prints errno otherwise. */
#define KTAP_SUCCESS(expr, ...)						\
	({								\
		long _r;						\
		errno = 0;						\
		_r = (long)(expr);					\
		if (_r == -1)						\
			ktap_diag("%s: errno %d (%s)", #expr, errno,	\
				  strerror(errno));			\
		ktap_ok(_r != -1, __VA_ARGS__);				\
	})

#endif /* _DP_KTAP_H */
