/* SPDX-License-Identifier: MIT */
/*
 * dcp_msg.h - the one writer of the commands' diagnostics on stderr.
 *
 * Every message of every command goes through here: it is formatted whole
 * ("PROGRAM: TEXT[: STRERROR]\n", worded as error(3) words it, PROGRAM
 * being program_invocation_name) and written with a single write(2) under
 * one lock, so that messages from several threads never share a line.
 * glibc's error(3) writes a message in three or four pieces, which threads
 * interleave ("cannot walk Acannot walk B: Too many open files").
 *
 * The writer also owns the progress line (a terminal line rewritten in
 * place, without '\n'): a message clears it in the same write.
 *
 * These functions are for the commands; the probing modules of the library
 * never print.  ERR is a positive errno value, or 0 for none, as error(3).
 */
#ifndef DCP_MSG_H
#define DCP_MSG_H

#include "dcp_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dcp_warn - "PROGRAM: FMT...[: strerror(ERR)]\n" on stderr. */
void dcp_warn(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* dcp_die - dcp_warn(), then exit(STATUS). */
void dcp_die(int status, int err, const char *fmt, ...) __attribute__((noreturn))
	__attribute__((format(printf, 3, 4)));

/*
 * dcp_msg_buf - write the whole lines in B that the command formatted itself
 * (per-path error records, a summary), in one write under the same lock,
 * and empty B.
 */
void dcp_msg_buf(struct dcp_buf *b);

/*
 * dcp_msg_path - start a message about PATH (LEN bytes) in B, for
 * dcp_msg_buf(): "PROGRAM: 'PATH': ".  The caller adds the rest and '\n'.
 */
void dcp_msg_path(struct dcp_buf *b, const char *path, size_t len);

/*
 * dcp_msg_progress - show the progress line in B (starting with "\r\033[K",
 * without '\n') and empty B; the next message, or dcp_msg_progress_clear(),
 * erases it first.
 */
void dcp_msg_progress(struct dcp_buf *b);

/* dcp_msg_progress_clear - erase the progress line, if one is shown. */
void dcp_msg_progress_clear(void);

#ifdef __cplusplus
}
#endif

#endif
