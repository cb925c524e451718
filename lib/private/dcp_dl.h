/* SPDX-License-Identifier: MIT */
/*
 * private/dcp_dl.h - why a dlopen() failed, as an errno (not installed:
 * lib/private/ is the library's own).
 *
 * dlopen() sets no errno; dlerror() says why in words.  A library that is
 * there but could not be mapped (an address-space limit, ulimit -v: "failed
 * to map segment from shared object", "Cannot allocate memory") is ENOMEM,
 * a run out of descriptors EMFILE, not the ELIBACC of a library that is
 * missing or lacks a function: "below a resource floor a run says so in
 * words" (DESIGN.md), and "out of memory" is what happened.
 */
#ifndef DCP_PRIVATE_DL_H
#define DCP_PRIVATE_DL_H

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

/* The -errno of the dlopen() that just failed (reads dlerror()). */
static inline int dcp_dlopen_errno(void)
{
	const char *e = dlerror();

	if (!e)
		return -ELIBACC;
	if (strstr(e, "Cannot allocate memory") || strstr(e, "failed to map segment") ||
	    strstr(e, "cannot allocate") || strstr(e, "out of memory"))
		return -ENOMEM;
	if (strstr(e, "Too many open files") || strstr(e, "Error 24"))
		return -EMFILE;
	return -ELIBACC;
}

#endif
