/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the myrisim host tests: KTAP ok() and the plan. */
#ifndef MYRISIM_TEST_H
#define MYRISIM_TEST_H

#define FABRIC_PLAN	43
#define LANAI_PLAN	23

extern int ntest, nfail;
void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lanai_tests(void);

#endif
