/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal KTAP output for the dp selftest programs (kselftest style).
 *
 * A program prints "KTAP version 1", one "ok N desc" / "not ok N desc" per
 * check, "# ..." diagnostics, and its plan "1..N" last (the plan may follow
 * the results).  The runners indent a program's output as subtests of one
 * top-level result.  Exit status: 0 all passed, 1 a failure, 4 skipped
 * (KSFT_SKIP).  Only the parent process of a test prints results.
 */
#ifndef _DP_KTAP_H
#define _DP_KTAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

static int ktap_n __attribute__((unused)), ktap_failed __attribute__((unused));

static inline void ktap_start(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n");
}

static inline void ktap_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void ktap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline int ktap_result(int ok, const char *fmt, va_list ap)
{
	ktap_n++;
	if (!ok)
		ktap_failed++;
	printf("%s %d ", ok ? "ok" : "not ok", ktap_n);
	vprintf(fmt, ap);
	printf("\n");
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

	ktap_n++;
	printf("ok %d ", ktap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", reason);
}

/* Prints the plan and exits with the kselftest status. */
static inline __attribute__((noreturn)) void ktap_finish(void)
{
	printf("1..%d\n", ktap_n);
	fflush(stdout);
	exit(ktap_failed ? KSFT_FAIL : KSFT_PASS);
}

/* The program cannot run at all here. */
static inline __attribute__((noreturn)) void ktap_exit_skip(const char *reason)
{
	printf("1..0 # SKIP %s\n", reason);
	fflush(stdout);
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
