/* pingpong: the paper's SPMD ping-pong over libdp.
 * Run "pingpong 1 NID_OF_RANK_0" on one node, then "pingpong 0 NID_OF_RANK_1"
 * on the other.  Build: cc -O2 pingpong.c $(pkg-config --cflags --libs libdp)
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <dp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITERS 1000
#define DPID_BASE 1100 /* rank r binds DPID 1100 + r (below 1024 needs privilege) */

/* Busy-wait for the next message: dp_read makes no system call. */
static ssize_t wait_msg(int fd, char **msg)
{
	ssize_t n;

	while ((n = dp_read(fd, msg)) == 0)
		;
	return n;
}

int main(int argc, char **argv)
{
	char buf[1500], *msg;
	struct timespec t0, t1;
	int rank, fd, i;
	size_t size;
	ssize_t n;

	if (argc < 3) {
		fprintf(stderr, "usage: pingpong RANK(0|1) PEER_NID [SIZE]\n");
		return 2;
	}
	rank = atoi(argv[1]) != 0;
	size = argc > 3 ? (size_t)atoi(argv[3]) : 1;
	if (size < 1 || size > sizeof(buf))
		size = 1;
	fd = dp_open(DPID_BASE + rank);
	if (fd < 0 || dp_connect(fd, (uint32_t)atoi(argv[2]), DPID_BASE + !rank) < 0) {
		perror("dp_open/dp_connect");
		return 1;
	}
	memset(buf, 'x', size);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < ITERS; i++) {
		if (rank == 0 && dp_write(fd, buf, size) < 0)
			break;
		n = wait_msg(fd, &msg);
		if (n < 0)
			break;
		if (rank == 1 && i == 0) {
			const struct dp_token *t = dp_token_of(fd, msg);

			printf("first ping from NID %u DPID %u uid %u\n",
			       t->src_nid, t->src_dpid, t->src_uid);
		}
		/* Rank 1 echoes straight out of the read-only pool: no copy. */
		if (rank == 1 && dp_write(fd, msg, (size_t)n) < 0)
			break;
		dp_fsync(fd, 1); /* release the message */
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (i < ITERS) {
		perror("pingpong");
		return 1;
	}
	if (rank == 0)
		printf("%zu bytes: %.2f us round trip\n", size,
		       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / ITERS / 1e3);
	dp_close(fd);
	return 0;
}
