/* SPDX-License-Identifier: MIT */
/*
 * private/dcp_thread.h - how the library starts a thread (not installed:
 * lib/private/ is the library's own).
 *
 * Every thread of the library runs with every asynchronous signal blocked,
 * whatever the mask of the thread that called in: a program's handlers
 * (SIGINT, SIGTERM...) then run on its own threads, never on a walker or a
 * reader of the library, whose system calls a handler installed without
 * SA_RESTART would interrupt.  The signals the kernel sends to the thread
 * that caused them (SIGPIPE for a write to a closed pipe from a program's
 * callback, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS) stay
 * unblocked: they act by the process's disposition, as on any thread (a
 * command dies of SIGPIPE as `yes | head` does; a program that ignores
 * SIGPIPE gets EPIPE; a fault is never held back).  The mask is set at
 * creation (pthread_attr_setsigmask_np, glibc 2.32): no existing thread's
 * mask changes, and the new thread never runs unblocked.
 */
#ifndef DCP_PRIVATE_THREAD_H
#define DCP_PRIVATE_THREAD_H

#include <stddef.h>
#include <pthread.h>
#include <signal.h>

/* pthread_create() with the mask above in the new thread; 0 or an errno value. */
static inline int dcp_thread_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
	static const int own[] = { SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };
	pthread_attr_t attr;
	sigset_t mask;
	int ret;

	ret = pthread_attr_init(&attr);
	if (ret)
		return ret;
	sigfillset(&mask);
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		sigdelset(&mask, own[i]);
	ret = pthread_attr_setsigmask_np(&attr, &mask);
	if (!ret)
		ret = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return ret;
}

#endif
