/* SPDX-License-Identifier: MIT */
/*
 * dcp_notify.h - tell the service manager how a long run is going
 * (sd_notify(3)'s protocol, without libsystemd): a datagram to the AF_UNIX
 * socket $NOTIFY_SOCKET names ("@name" for an abstract one), when set.
 *
 * The commands' runtime (a recording's READY=1, STATUS=, STOPPING=1).
 */
#ifndef DCP_NOTIFY_H
#define DCP_NOTIFY_H

/*
 * dcp_notify - send STATE ("READY=1", "STATUS=...") to $NOTIFY_SOCKET.
 * Returns 1 when sent, 0 when NOTIFY_SOCKET is not set, or -errno (an
 * address that is no AF_UNIX path, or the send failed).
 */
int dcp_notify(const char *state);

#endif
