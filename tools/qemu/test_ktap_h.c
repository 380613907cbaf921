/* SPDX-License-Identifier: GPL-2.0 */
/* selftests/dp/ktap.h on the host: test_harness.py runs it with each ending. */
#define _GNU_SOURCE
#include "ktap.h"
#include <sys/wait.h>
int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "finish";

	ktap_start();
	ktap_ok(1, "first");
	ktap_diag("a diagnostic");
	if (fork() == 0) {
		ktap_diag("from the child");
		exit(0);
	}
	wait(NULL);
	ktap_ok(1, "second");
	if (!strcmp(how, "skip"))
		ktap_exit_skip("nothing here");
	if (!strcmp(how, "exit"))
		exit(0);
	if (!strcmp(how, "term"))
		raise(SIGTERM);
	if (!strcmp(how, "segv"))
		*(volatile int *)0 = 1;
	ktap_finish();
}
