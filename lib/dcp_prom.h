/* SPDX-License-Identifier: MIT */
/*
 * dcp_prom.h - the Prometheus text exposition (format 0.0.4) of the suite,
 * one writer for every command.
 *
 * Every metric is a gauge named dcprobe_*; every series carries the label
 * command="NAME" first (dcache-probe, warm), then the run's own labels
 * (--label: tree="app"...), so that the files of several commands and of
 * several runs of one command can sit side by side in one textfile-collector
 * directory.
 * Samples are collected first and written at the end, grouped by family:
 * HELP and TYPE come exactly once per family, before its first sample, and
 * a family without a sample is not written.  A series (family name and
 * label values) is written once: a repeat, such as the same root given
 * twice, is dropped and the first sample kept.  Label values are escaped
 * by dcp_buf_prom_label(), which is injective, so two different names never
 * become one series.
 */
#ifndef DCP_PROM_H
#define DCP_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "dcp_report.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_prom;

/* dcp_prom_new - an empty set of metrics of COMMAND.  NULL when out of memory. */
struct dcp_prom *dcp_prom_new(const char *command);

/*
 * dcp_prom_label_name_ok - whether NAME may be a run label (--label): 0, or
 * -EINVAL (not a Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*), -EPERM
 * (starts with "__", reserved by Prometheus) or -EEXIST (a label the
 * suite's own series carry: command, root, state..., version).
 */
int dcp_prom_label_name_ok(const char *name);

/*
 * dcp_prom_add_label - add NAME="VALUE" to every series of P, after the
 * command label (a run label: --label).  Returns 0 or -ENOMEM.
 */
int dcp_prom_add_label(struct dcp_prom *p, const char *name, const char *value);

/* dcp_prom_free - release P (NULL is fine). */
void dcp_prom_free(struct dcp_prom *p);

/*
 * dcp_prom_start - begin a sample of gauge FAMILY (a static string), whose
 * HELP text is HELP; the label command="..." is added.  Then any number of
 * dcp_prom_label() calls, and one dcp_prom_value() or dcp_prom_u64().
 */
void dcp_prom_start(struct dcp_prom *p, const char *family, const char *help);

/* dcp_prom_label - add NAME="V" (N bytes, any bytes: escaped) to the sample. */
void dcp_prom_label(struct dcp_prom *p, const char *name, const char *v, size_t n);

/* dcp_prom_labelz - dcp_prom_label() with a NUL-terminated value. */
void dcp_prom_labelz(struct dcp_prom *p, const char *name, const char *v);

/*
 * dcp_prom_value - end the sample with value V, printed with DECIMALS
 * decimals, or as "%.6g" when DECIMALS < 0.  A series already written is
 * dropped.
 */
void dcp_prom_value(struct dcp_prom *p, double v, int decimals);

/* dcp_prom_u64 - dcp_prom_value() for a count. */
void dcp_prom_u64(struct dcp_prom *p, uint64_t v);

/*
 * dcp_prom_run - the four families every command writes about its run:
 *   dcprobe_duration_seconds, dcprobe_exit_status,
 *   dcprobe_last_run_timestamp_seconds (wall clock now), and
 *   dcprobe_build_info{version="RELEASE"} 1.
 */
void dcp_prom_run(struct dcp_prom *p, double duration_s, int status);

/*
 * dcp_prom_write - append every family to OUT.  Returns 0, or -ENOMEM when
 * some sample was lost (OUT->oom is set too).
 */
int dcp_prom_write(const struct dcp_prom *p, struct dcp_buf *out);

#ifdef __cplusplus
}
#endif

#endif
