// SPDX-License-Identifier: GPL-2.0
/*
 * dp_eth: UDP and TCP transfers whose every byte is checked, for Ethernet
 * over Myrinet (myri0, run_myri.sh) or any IPv4 link.
 *
 *   dp_eth tcp-recv PORT BYTES SEED IDLE_S
 *	accept one connection, read to its end: exactly BYTES bytes of
 *	SEED's pattern, or exit 1 (the first wrong offset is printed)
 *   dp_eth tcp-send ADDR PORT BYTES SEED
 *	connect (retrying for 30 s), send BYTES bytes of SEED's pattern in
 *	writes of varied sizes, close, wait for the receiver's close
 *   dp_eth udp-echo PORT IDLE_S
 *	send every datagram back to its sender; exit after a "BYE" or
 *	IDLE_S seconds without one (exit 1)
 *   dp_eth udp-send ADDR PORT COUNT MAXSIZE SEED
 *	COUNT datagrams of 4..MAXSIZE bytes (the first 4 bytes, the
 *	smallest and the largest first; the rest random): a 4-byte index,
 *	then SEED's pattern; each must come back whole and unchanged (a lost
 *	one is sent again, up to 20 times, 300 ms apart), or exit 1
 *
 * Servers print "ready" once bound.  Nothing is assumed about timing.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define UDP_MAX		65507
#define UDP_TRIES	20
#define UDP_WAIT_MS	300

static uint8_t pat(uint32_t seed, uint32_t idx, uint64_t off)
{
	uint64_t x = (off + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed << 32 | idx);

	x ^= x >> 29;
	return (uint8_t)(x * 0xbf58476d1ce4e5b9ull >> 56);
}

static unsigned long num(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || !*s || v > max) {
		fprintf(stderr, "dp_eth: bad number \"%s\"\n", s);
		exit(2);
	}
	return v;
}

static struct sockaddr_in addr_of(const char *host, const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	a.sin_port = htons((uint16_t)num(port, 65535));
	if (host && inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		fprintf(stderr, "dp_eth: bad address \"%s\"\n", host);
		exit(2);
	}
	return a;
}

static int sock_bound(int type, const char *port)
{
	struct sockaddr_in a = addr_of(NULL, port);
	int one = 1, fd = socket(AF_INET, type, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("dp_eth: socket/bind");
		exit(2);
	}
	return fd;
}

/* Wait up to @ms for @fd to be readable: 1, or 0 on timeout. */
static int wait_in(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

static int tcp_recv(char **argv)
{
	int ls = sock_bound(SOCK_STREAM, argv[0]), fd;
	uint64_t bytes = num(argv[1], ~0ul), off = 0, bad = ~0ull;
	uint32_t seed = (uint32_t)num(argv[2], UINT32_MAX);
	int idle = (int)num(argv[3], 3600);
	static uint8_t buf[65536];
	ssize_t n, i;

	if (listen(ls, 1)) {
		perror("dp_eth: listen");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	if (!wait_in(ls, idle * 1000)) {
		printf("tcp: no connection within %d s\n", idle);
		return 1;
	}
	fd = accept(ls, NULL, NULL);
	if (fd < 0) {
		perror("dp_eth: accept");
		return 1;
	}
	while (wait_in(fd, idle * 1000) && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++)
			if (bad == ~0ull && buf[i] != pat(seed, 0, off + (uint64_t)i))
				bad = off + (uint64_t)i;
		off += (uint64_t)n;
	}
	close(fd);
	printf("tcp: got %llu of %llu bytes, %s\n", (unsigned long long)off,
	       (unsigned long long)bytes, bad == ~0ull ? "all intact" : "WRONG");
	if (bad != ~0ull)
		printf("tcp: first wrong byte at offset %llu\n", (unsigned long long)bad);
	return off == bytes && bad == ~0ull ? 0 : 1;
}

static int tcp_send(char **argv)
{
	struct sockaddr_in a = addr_of(argv[0], argv[1]);
	uint64_t bytes = num(argv[2], ~0ul), off = 0;
	uint32_t seed = (uint32_t)num(argv[3], UINT32_MAX);
	static uint8_t buf[65536];
	int fd = -1, tries;
	size_t len, i;
	ssize_t n;

	for (tries = 0; tries < 300; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)))
			break;
		close(fd);
		fd = -1;
		usleep(100000);
	}
	if (fd < 0) {
		perror("dp_eth: connect");
		return 1;
	}
	srand(seed);
	while (off < bytes) {
		len = 1 + (size_t)rand() % sizeof(buf);
		if (len > bytes - off)
			len = (size_t)(bytes - off);
		for (i = 0; i < len; i++)
			buf[i] = pat(seed, 0, off + i);
		n = write(fd, buf, len);
		if (n <= 0) {
			perror("dp_eth: write");
			return 1;
		}
		off += (uint64_t)n;
	}
	shutdown(fd, SHUT_WR);
	while (wait_in(fd, 60000) && read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	printf("tcp: sent %llu bytes\n", (unsigned long long)off);
	return 0;
}

static int udp_echo(char **argv)
{
	int fd = sock_bound(SOCK_DGRAM, argv[0]);
	int idle = (int)num(argv[1], 3600);
	static uint8_t buf[UDP_MAX];
	unsigned long echoed = 0;
	struct sockaddr_in from;
	socklen_t fl;
	ssize_t n;

	printf("ready\n");
	fflush(stdout);
	while (wait_in(fd, idle * 1000)) {
		fl = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n == 3 && !memcmp(buf, "BYE", 3)) {
			printf("udp: echoed %lu datagrams\n", echoed);
			return 0;
		}
		if (n > 0 && sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl) == n)
			echoed++;
	}
	printf("udp: no BYE within %d s (echoed %lu)\n", idle, echoed);
	return 1;
}

/* Datagram @i of @len bytes: its index, then the pattern. */
static void udp_fill(uint8_t *b, uint32_t seed, uint32_t i, size_t len)
{
	size_t k;

	memcpy(b, &i, 4);
	for (k = 4; k < len; k++)
		b[k] = pat(seed, i, k);
}

/* Send datagram @i until it comes back: 0 intact, 1 wrong, -1 never back. */
static int udp_one(int fd, const uint8_t *out, uint8_t *in, size_t len, uint32_t i,
		   unsigned long *resent)
{
	int tries;
	ssize_t n;
	uint32_t got;

	for (tries = 0; tries < UDP_TRIES; tries++) {
		if (tries)
			(*resent)++;
		if (send(fd, out, len, 0) != (ssize_t)len && errno != ENOBUFS &&
		    errno != ECONNREFUSED)
			return 1;
		while (wait_in(fd, UDP_WAIT_MS)) {
			n = recv(fd, in, UDP_MAX, 0);
			if (n < 4)
				continue;	/* an error (ECONNREFUSED) or a runt */
			memcpy(&got, in, 4);
			if (got != i)
				continue;	/* a late copy of an earlier one */
			if ((size_t)n != len || memcmp(in, out, len)) {
				printf("udp: datagram %u came back changed (%zd of %zu bytes)\n",
				       i, n, len);
				return 1;
			}
			return 0;
		}
	}
	printf("udp: datagram %u (%zu bytes) never came back\n", i, len);
	return -1;
}

static int udp_send(char **argv)
{
	struct sockaddr_in a = addr_of(argv[0], argv[1]);
	unsigned long count = num(argv[2], 1000000), resent = 0, bytes = 0, good = 0;
	size_t max = num(argv[3], UDP_MAX), len;
	uint32_t seed = (uint32_t)num(argv[4], UINT32_MAX), i;
	static uint8_t out[UDP_MAX], in[UDP_MAX];
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (max < 4) {
		fprintf(stderr, "dp_eth: MAXSIZE must be at least 4\n");
		return 2;
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("dp_eth: udp socket");
		return 1;
	}
	srand(seed);
	for (i = 0; i < count && !err; i++) {
		len = i == 0 ? 4 : i == 1 ? max : 4 + (size_t)rand() % (max - 3);
		udp_fill(out, seed, i, len);
		err = udp_one(fd, out, in, len, i, &resent);
		if (!err) {
			good++;
			bytes += len;
		}
	}
	for (i = 0; i < 3; i++)
		send(fd, "BYE", 3, 0);
	printf("udp: %lu of %lu datagrams (%lu bytes) echoed intact, %lu sent again\n",
	       good, count, bytes, resent);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "tcp-recv"))
		return tcp_recv(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "tcp-send"))
		return tcp_send(argv + 2);
	if (argc == 4 && !strcmp(argv[1], "udp-echo"))
		return udp_echo(argv + 2);
	if (argc == 7 && !strcmp(argv[1], "udp-send"))
		return udp_send(argv + 2);
	fprintf(stderr, "usage: dp_eth tcp-recv PORT BYTES SEED IDLE_S | tcp-send ADDR PORT BYTES SEED |\n"
		"       udp-echo PORT IDLE_S | udp-send ADDR PORT COUNT MAXSIZE SEED\n");
	return 2;
}
