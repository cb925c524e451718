// SPDX-License-Identifier: MIT
/* notify.c - sd_notify(3)'s datagram to $NOTIFY_SOCKET, without libsystemd (dcp_notify.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dcp_notify.h"

int dcp_notify(const char *state)
{
	const char *e = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	ssize_t n;
	int fd;

	if (!e || !*e)
		return 0;
	len = strlen(e);
	if ((e[0] != '/' && e[0] != '@') || len < 2 || len >= sizeof(sa.sun_path))
		return -EAFNOSUPPORT; /* vsock: and other addresses are not ours to speak */
	memcpy(sa.sun_path, e, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (e[0] == '/')));
	len = n < 0 ? (size_t)errno : 0;
	close(fd);
	return n < 0 ? -(int)len : 1;
}
