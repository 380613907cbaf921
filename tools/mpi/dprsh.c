// SPDX-License-Identifier: GPL-2.0
/*
 * dprsh: a minimal remote shell for the QEMU guests, which have no ssh, so
 * that Open MPI's mpirun can start its orted on the other guests
 * (mpirun --mca plm_rsh_agent dprsh).  For test guests on a private
 * emulated link only: there is no authentication at all.
 *
 *   dprsh -d ADDR [PORT]     server: listen on ADDR:PORT (default 7722) and
 *                            run each connection's command with /bin/sh -c
 *   dprsh HOST CMD [ARG...]  client: run "CMD ARG..." (joined with spaces,
 *                            as ssh does) on HOST, copy its output (stdout
 *                            and stderr together) to stdout, exit with its
 *                            status (255: no connection or lost)
 *
 * The port is DPRSH_PORT when set.  Wire: the client sends a 4-byte
 * big-endian length and the command; the server sends frames of one type
 * byte ('o' output, 'x' exit), a 4-byte big-endian length and the data (for
 * 'x' the exit status as 4 bytes).  When the client goes away the server
 * sends SIGTERM to the command's process group, as sshd hangs up.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CMD (1 << 20)

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int send_frame(int fd, char type, const void *data, uint32_t len)
{
	unsigned char h[5];
	uint32_t be = htonl(len);

	h[0] = (unsigned char)type;
	memcpy(h + 1, &be, 4);
	if (write_all(fd, h, 5))
		return -1;
	return len ? write_all(fd, data, len) : 0;
}

static const char *port_of(const char *arg)
{
	const char *e = getenv("DPRSH_PORT");

	return arg ? arg : (e && *e ? e : "7722");
}

/* One connection: read the command, run it, forward its output and status. */
static void serve(int s)
{
	uint32_t len;
	char *cmd;
	int pfd[2], st = 0, sock_open = 1;
	pid_t pid;
	char buf[16384];

	if (read_all(s, &len, 4))
		_exit(1);
	len = ntohl(len);
	if (len == 0 || len > MAX_CMD)
		_exit(1);
	cmd = malloc(len + 1);
	if (!cmd || read_all(s, cmd, len))
		_exit(1);
	cmd[len] = 0;
	if (pipe(pfd))
		_exit(1);
	pid = fork();
	if (pid < 0)
		_exit(1);
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		setsid();
		dup2(nul, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		close(s);
		if (nul > 2)
			close(nul);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		struct pollfd p[2] = { { pfd[0], POLLIN, 0 }, { s, POLLIN, 0 } };
		int np = sock_open ? 2 : 1;

		if (poll(p, (nfds_t)np, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (np == 2 && p[1].revents) {
			/* the client sends nothing more: readable means it hung up */
			kill(-pid, SIGTERM);
			sock_open = 0;
		}
		if (p[0].revents) {
			ssize_t r = read(pfd[0], buf, sizeof(buf));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			if (sock_open && send_frame(s, 'o', buf, (uint32_t)r)) {
				kill(-pid, SIGTERM);
				sock_open = 0;
			}
		}
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (sock_open) {
		uint32_t code = WIFEXITED(st) ? (uint32_t)WEXITSTATUS(st) :
			       128u + (uint32_t)WTERMSIG(st);
		uint32_t be = htonl(code);

		send_frame(s, 'x', &be, 4);
	}
	_exit(0);
}

static int server(const char *addr, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST };
	struct addrinfo *ai;
	int one = 1, l, rc;

	rc = getaddrinfo(addr, port, &hints, &ai);
	if (rc) {
		fprintf(stderr, "dprsh: %s:%s: %s\n", addr, port, gai_strerror(rc));
		return 1;
	}
	l = socket(ai->ai_family, ai->ai_socktype, 0);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, ai->ai_addr, ai->ai_addrlen) || listen(l, 16)) {
		perror("dprsh: listen");
		return 1;
	}
	freeaddrinfo(ai);
	signal(SIGCHLD, SIG_IGN);	/* connection handlers reap themselves */
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		int s = accept(l, NULL, NULL);

		if (s < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("dprsh: accept");
			return 1;
		}
		pid_t pid = fork();

		if (pid == 0) {
			close(l);
			signal(SIGCHLD, SIG_DFL);
			setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			serve(s);
		}
		close(s);
	}
}

static int client(const char *host, int argc, char **argv)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	size_t len = 0;
	char *cmd;
	uint32_t be;
	int s, rc;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (len == 0 || len > MAX_CMD) {
		fprintf(stderr, "dprsh: no command, or too long\n");
		return 255;
	}
	cmd = malloc(len);
	if (!cmd)
		return 255;
	cmd[0] = 0;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(cmd, " ");
		strcat(cmd, argv[i]);
	}
	rc = getaddrinfo(host, port_of(NULL), &hints, &ai);
	if (rc) {
		fprintf(stderr, "dprsh: %s: %s\n", host, gai_strerror(rc));
		return 255;
	}
	s = socket(ai->ai_family, ai->ai_socktype, 0);
	if (s < 0 || connect(s, ai->ai_addr, ai->ai_addrlen)) {
		fprintf(stderr, "dprsh: %s: %s\n", host, strerror(errno));
		return 255;
	}
	freeaddrinfo(ai);
	len = strlen(cmd);
	be = htonl((uint32_t)len);
	if (write_all(s, &be, 4) || write_all(s, cmd, len)) {
		fprintf(stderr, "dprsh: %s: send: %s\n", host, strerror(errno));
		return 255;
	}
	for (;;) {
		unsigned char h[5];
		uint32_t n;
		char buf[16384];

		if (read_all(s, h, 5))
			break;
		memcpy(&be, h + 1, 4);
		n = ntohl(be);
		if (h[0] == 'x' && n == 4 && !read_all(s, &be, 4))
			return (int)(ntohl(be) & 0xff);
		if (h[0] != 'o')
			break;
		while (n) {
			uint32_t k = n < sizeof(buf) ? n : (uint32_t)sizeof(buf);

			if (read_all(s, buf, k))
				goto lost;
			if (write_all(1, buf, k))
				return 255;
			n -= k;
		}
	}
lost:
	fprintf(stderr, "dprsh: %s: connection lost\n", host);
	return 255;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "-d"))
		return server(argv[2], port_of(argc > 3 ? argv[3] : NULL));
	if (argc < 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: dprsh -d ADDR [PORT] | dprsh HOST CMD [ARG...]\n");
		return 255;
	}
	return client(argv[1], argc - 2, argv + 2);
}
