/* SPDX-License-Identifier: MIT */
/*
 * dcp_output.h - where a command's standard output goes.
 *
 * --output=FILE (node_exporter's textfile convention): the output is
 * written to a new file beside FILE (same directory, so the rename is
 * atomic) and renamed onto FILE only when all of it was written and
 * flushed.  A reader of FILE sees the old file or the new one, whole,
 * never a half.  The new file has no name while it is written
 * (O_TMPFILE) and a temporary one (".NAME.XXXXXX", which the textfile
 * collector, reading only *.prom, ignores) only for the moment of the
 * rename, with the ending signals blocked; where the filesystem makes
 * no such file, or it could not be linked later (no /proc), it is made
 * under the temporary name from the start, and the signals that end a
 * process by default (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM,
 * SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM; those not ignored)
 * remove it before the process ends as it would have.  Only SIGKILL
 * (or a crash) can leave one, and then only in that fallback.
 *
 * The new file is what '>' would make: FILE's mode (its permission bits),
 * owner and group, or for a new FILE 0666 & ~umask; set while the file is
 * empty or has no name, and again before the rename if FILE changed,
 * narrowing first: it is never readable by anyone FILE was not.  A caller
 * that may not give a file away (not root) keeps it as its own, without
 * the group's bits unless it may give it FILE's group.
 *
 * FILE is a regular file or absent: anything else (a directory, a FIFO, a
 * device, a socket, a symbolic link, whatever it points to) is refused
 * before the run, and again at the rename.  In a sticky directory that
 * others may write (/tmp), a file of another user than the caller and the
 * directory's owner is refused too, as fs.protected_regular=2 refuses an
 * O_CREAT open of it, whatever the sysctl says.  Every name is looked up
 * relative to FILE's directory, opened once (the path to it may hold
 * symbolic links); a temporary name is made with O_EXCL|O_NOFOLLOW (or
 * linkat(), which never follows the name); at the rename FILE is checked
 * again and exchanged with the new file (RENAME_EXCHANGE), what left FILE
 * checked once more and put back if it is not what was checked (a FIFO
 * swapped in at the last moment), a regular file removed: nothing stays
 * under the temporary name.  An absent FILE is renamed onto with
 * RENAME_NOREPLACE.  A filesystem without these (NFS) gets a plain rename
 * after the check.
 *
 * dcp_output_write() is the one writer of standard output for the four
 * commands: it remembers the first failed write, so that a file that lost
 * a write is never renamed into place.
 *
 * Functions return 0 or -errno; nothing here prints or exits.
 */
#ifndef DCP_OUTPUT_H
#define DCP_OUTPUT_H

#include "dcp_report.h"

struct dcp_output;

/*
 * dcp_output_open - check FILE, then create the new file beside it (with
 * FILE's mode, owner and group, or 0666 & ~umask) and make it standard
 * output; catch the ending signals (restored by commit and discard, when
 * no other handler took their place meanwhile).  Holds two
 * descriptors (the directory and the file), moved to the top of
 * RLIMIT_NOFILE.  Returns 0 and *OUT; -EPERM and *WHY, a phrase ("is a
 * FIFO, not a regular file"), when FILE may not be replaced; or -errno
 * (FILE's directory missing or not writable...).
 */
int dcp_output_open(const char *file, struct dcp_output **out, const char **why);

/* dcp_output_truncate - empty the temporary file (a run that stopped short). */
int dcp_output_truncate(struct dcp_output *out);

/*
 * dcp_output_commit - flush the temporary file to disk and rename it onto
 * FILE, checked again; on any failure remove it, leaving FILE as it was
 * (-EPERM and *WHY when FILE, or the temporary file, changed into what may
 * not be replaced).  Frees OUT.
 */
int dcp_output_commit(struct dcp_output *out, const char **why);

/* dcp_output_discard - remove the temporary file, leaving FILE as it was.  Frees OUT. */
void dcp_output_discard(struct dcp_output *out);

/*
 * dcp_output_signalled - remove the temporary name now, if there is one
 * (async-signal safe): for a signal handler that takes the place of
 * dcp_output_open()'s before the process ends.
 */
void dcp_output_signalled(void);

/*
 * dcp_output_write - write B whole to standard output (dcp_buf_write) and
 * empty it; the first failure is remembered (dcp_output_failed).  Callers
 * serialise their writes.  Returns 0 or -errno.
 */
int dcp_output_write(struct dcp_buf *b);

/* dcp_output_failed - the -errno of the first failed dcp_output_write(), or 0. */
int dcp_output_failed(void);

#endif
