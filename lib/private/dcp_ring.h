/* SPDX-License-Identifier: MIT */
/*
 * private/dcp_ring.h - dcp_ring_fresh(): a ring liburing just set up is new
 * memory, told to ThreadSanitizer (not installed: lib/private/ is the
 * library's own).
 *
 * liburing maps and unmaps a ring's memory (its submission and completion
 * queues and its entries) with raw system calls, which ThreadSanitizer
 * does not see.  When a thread's ring is freed and another thread's ring
 * is mapped at the same address later (a program that runs walk after walk
 * does it), ThreadSanitizer takes the new ring's first accesses for races
 * with the old ring's last ones, on memory that no two threads ever shared.
 * So, in a TSan build, every ring's end happens before every later ring's
 * start (dcp_ring_exit() releases one token of the library's, and
 * dcp_ring_fresh() acquires it): a ring reused is ordered after the one it
 * replaces, and a real race between two accesses to one ring is still
 * reported.  In other builds they are io_uring_queue_exit() and nothing.
 * The same holds for any mapping the library unmaps itself (mincore's
 * window over a file, lib/pages.c): a ring mapped later at its address is
 * new memory too (dcp_ring_unmapped()).
 */
#ifndef DCP_PRIVATE_RING_H
#define DCP_PRIVATE_RING_H

#include <liburing.h>

#if defined(__SANITIZE_THREAD__)
#define DCP_RING_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DCP_RING_TSAN 1
#endif
#endif

#ifdef DCP_RING_TSAN
/* ThreadSanitizer's dynamic annotations (a release and an acquire on ADDR). */
void AnnotateHappensBefore(const char *file, int line, const volatile void *addr);
void AnnotateHappensAfter(const char *file, int line, const volatile void *addr);
/* The token (lib/util.c; not exported). */
extern char dcp_ring_token __attribute__((visibility("hidden")));
#endif

/* kernel.io_uring_disabled: 0, 1 or 2; -1 when it cannot be read (lib/uring.c;
 * not exported). */
int dcp_uring_disabled_sysctl(void) __attribute__((visibility("hidden")));

/* After a successful io_uring_queue_init*() of RING. */
static inline void dcp_ring_fresh(struct io_uring *ring)
{
	(void)ring;
#ifdef DCP_RING_TSAN
	AnnotateHappensAfter(__FILE__, __LINE__, &dcp_ring_token);
#endif
}

/* After munmap() of a mapping of the library's own: a ring mapped at its
 * address later is ordered after it. */
static inline void dcp_ring_unmapped(void)
{
#ifdef DCP_RING_TSAN
	AnnotateHappensBefore(__FILE__, __LINE__, &dcp_ring_token);
#endif
}

/* io_uring_queue_exit(RING). */
static inline void dcp_ring_exit(struct io_uring *ring)
{
#ifdef DCP_RING_TSAN
	AnnotateHappensBefore(__FILE__, __LINE__, &dcp_ring_token);
#endif
	io_uring_queue_exit(ring);
}

#endif
