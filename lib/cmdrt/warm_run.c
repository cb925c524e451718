// SPDX-License-Identifier: MIT
/*
 * warm_run.c - one warm run: every path (arguments, then lists) handed to
 * the warming engine (warm.c), its events turned into lines (-v, errors,
 * what still misses after --check), then the -s/-c table, the summary, the
 * metrics and the exit status.  One output buffer per engine thread,
 * written whole lines at a time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dcp_cmd.h"
#include "dcp_tables.h"

static const struct dcp_opts *o;	   /* the shared options */
static struct dcp_warm_run_config env; /* warm's own */
static enum dcp_pr_format fmt;	   /* of the path lines: text, or -0 */

/* --- output: one buffer per worker thread, written whole lines at a time */

static struct dcp_warm *run;
static struct dcp_buf *outbufs; /* one per worker, plus one for main */
static unsigned nbufs;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static int out_err;		 /* first -errno writing stdout */
static atomic_bool out_failed;	 /* out_err is set: stop the run */
static atomic_ullong bad_input;	 /* errors outside the engine: --from, paths */

static void flush_out(struct dcp_buf *b)
{
	pthread_mutex_lock(&out_mu);
	if (!out_err) {
		int ret = dcp_output_write(b);

		if (ret < 0) {
			/* Stop at the first failed write (EPIPE with
			 * SIGPIPE ignored): nobody reads the rest. */
			out_err = ret;
			atomic_store(&out_failed, true);
			if (run)
				dcp_warm_cancel(run);
		}
	}
	dcp_buf_reset(b);
	pthread_mutex_unlock(&out_mu);
}

/* "PATH: [WHAT: ]strerror(ERR)" on stderr, from any thread. */
static void warn_path(const char *path, size_t len, const char *what, int err)
{
	struct dcp_buf q = DCP_BUF_INIT;

	dcp_buf_quote_msg(&q, path, len);
	dcp_buf_putc(&q, '\0');
	dcp_warn(err, "%s%s%s", q.oom ? "(path)" : q.data, what ? ": " : "", what ? what : "");
	dcp_buf_free(&q);
}

static const char *state_of(int ret)
{
	return dcp_state_name(dcp_state_of_errno(ret));
}

static void json_event(struct dcp_buf *b, const struct dcp_warm_event *ev)
{
	bool check = env.flags & DCP_WARM_CHECK;

	if (ev->op == DCP_WARM_OP_DIR) {
		dcp_buf_puts(b, "{\"type\":\"error\",\"path\":");
		dcp_buf_json_str(b, ev->path, ev->pathlen);
		dcp_buf_puts(b, ",\"op\":\"readdir\"");
	} else {
		dcp_buf_puts(b, "{\"type\":\"path\",\"path\":");
		dcp_buf_json_str(b, ev->path, ev->pathlen);
		dcp_buf_printf(b, ",\"warmed\":%s", ev->err ? "false" : "true");
		if (check)
			dcp_buf_printf(b, ",\"before\":\"%s\",\"after\":\"%s\"",
				       state_of(ev->before), state_of(ev->after));
	}
	if (ev->err || ev->probe_err) {
		int err = ev->err ? ev->err : ev->probe_err;

		if (!ev->err)
			dcp_buf_puts(b, ",\"op\":\"probe\"");
		dcp_buf_printf(b, ",\"errno\":\"%s\",\"message\":", dcp_errno_name(err));
		dcp_buf_json_str(b, strerror(err), strlen(strerror(err)));
	}
	dcp_buf_puts(b, "}\n");
}

/*
 * The -s line of one PATH (or with PATH NULL the -c total), as du -s:
 *   text: ENTRIES\tERRORS\tPATH, with --check ENTRIES\tERRORS\tCOLD\tSTILL\tPATH
 *   JSON: {"type":"root","path":...,"entries":N,"errors":N,...}, "total"
 */
static void summary_row(struct dcp_buf *b, const char *path, size_t len,
			const struct dcp_warm_stats *st)
{
	bool check = env.flags & DCP_WARM_CHECK;

	if (o->json) {
		dcp_buf_puts(b, path ? "{\"type\":\"root\",\"path\":" : "{\"type\":\"total\"");
		if (path)
			dcp_buf_json_str(b, path, len);
		dcp_buf_printf(b, ",\"entries\":%llu,\"errors\":%llu",
			       (unsigned long long)st->entries, (unsigned long long)st->errors);
		if (check)
			dcp_buf_printf(b, ",\"cold\":%llu,\"cached_before\":%llu,"
				       "\"cached_after\":%llu,\"newly_warmed\":%llu,"
				       "\"still_miss\":%llu",
				       (unsigned long long)st->cold,
				       (unsigned long long)st->cached_before,
				       (unsigned long long)st->cached_after,
				       (unsigned long long)st->newly_warmed,
				       (unsigned long long)st->still_miss);
		dcp_buf_puts(b, "}\n");
		return;
	}
	dcp_buf_printf(b, "%llu\t%llu\t", (unsigned long long)st->entries,
		       (unsigned long long)st->errors);
	if (check)
		dcp_buf_printf(b, "%llu\t%llu\t", (unsigned long long)st->cold,
			       (unsigned long long)st->still_miss);
	dcp_pr_path(b, fmt, path ? path : "total", path ? len : 5);
}

/* Called on the engine's threads: errors, still-missing entries, -v. */
static void report(const struct dcp_warm_event *ev, void *arg)
{
	struct dcp_buf *b = &outbufs[ev->worker];
	bool check = env.flags & DCP_WARM_CHECK;

	(void)arg;
	if (o->json) {
		if (ev->err || ev->probe_err || o->verbose || (check && ev->after == -EAGAIN))
			json_event(b, ev);
	} else {
		if (ev->err == EREMOTE && ev->op == DCP_WARM_OP_DIR)
			warn_path(ev->path, ev->pathlen,
				  "not entered: an open there may wait on a FUSE daemon or a server; "
				  "warm it as a PATH of its own", 0);
		else if (ev->err)
			warn_path(ev->path, ev->pathlen,
				  ev->op == DCP_WARM_OP_DIR ? "cannot read directory" : NULL,
				  ev->err);
		else if (ev->probe_err)
			warn_path(ev->path, ev->pathlen, "cannot probe", ev->probe_err);
		/* -v lists what was warmed; failures went to stderr above. */
		if (ev->op == DCP_WARM_OP_STAT && !o->prometheus && !ev->err &&
		    (o->verbose || (check && ev->after == -EAGAIN))) {
			if (check)
				dcp_buf_printf(b, "%s %s ", state_of(ev->before),
					       state_of(ev->after));
			dcp_pr_path(b, fmt, ev->path, ev->pathlen);
		}
	}
	if (b->len > 65536 || ((ev->err || ev->probe_err) && o->json))
		flush_out(b);
}

/* --- progress ------------------------------------------------------------ */

static void tick(void *arg)
{
	struct dcp_warm_stats st;
	struct dcp_buf b = DCP_BUF_INIT;
	double s;

	(void)arg;
	dcp_warm_snapshot(run, &st);
	s = (double)st.elapsed_ns / 1e9;
	dcp_buf_printf(&b, "\r\033[K%s: ", program_invocation_name);
	dcp_buf_count(&b, st.entries, "entry", "entries");
	dcp_buf_puts(&b, ", ");
	dcp_buf_count(&b, st.errors, "error", "errors");
	dcp_buf_printf(&b, ", %.0f/s", s > 0 ? (double)st.entries / s : 0.0);
	dcp_msg_progress(&b);
	dcp_buf_free(&b);
}

/* --- --manifest: a restore instead of paths ------------------------------- */

static struct dcp_mounts *mounts; /* static: reachable until exit */
static struct dcp_manifest_restore_stats restored; /* what the restore did */

/*
 * An entry not restored: said as a failed path is (one call at a time); a
 * file whose data a limit left out the same way, its JSON record saying
 * which limit ("left_out") instead of an errno and its message.
 */
static void manifest_report(const struct dcp_manifest_event *ev, void *arg)
{
	const struct dcp_manifest_entry *e = ev->entry;
	const char *msg = ev->what ? ev->what : strerror(ev->err);
	struct dcp_buf *b = arg;

	if (!o->json) {
		warn_path(e->path, e->len, ev->what, ev->what ? 0 : ev->err);
		return;
	}
	dcp_buf_puts(b, "{\"type\":\"path\",\"path\":");
	dcp_buf_json_str(b, e->path, e->len);
	dcp_buf_printf(b, ",\"warmed\":false,\"record\":%zu", e->record);
	if (ev->err) {
		dcp_buf_printf(b, ",\"errno\":\"%s\",\"message\":", dcp_errno_name(ev->err));
		dcp_buf_json_str(b, msg, strlen(msg));
	} else {
		dcp_buf_printf(b, ",\"left_out\":\"%s\"", ev->left_out == DCP_PAGES_LIMIT_FILE_SIZE ?
			       "max_file_size" : "max_bytes");
	}
	dcp_buf_puts(b, "}\n");
	if (b->len > 65536)
		flush_out(b);
}

static void manifest_bad(size_t record, const char *what, void *arg)
{
	dcp_opts_input_error(o, arg, o->manifest, record, 0, what);
}

/*
 * Read the manifest and restore it, a window at a time (memory does not
 * follow its size); its counts into *ST, its problems into B.
 */
static void run_manifest(struct dcp_warm_stats *st, struct dcp_buf *b)
{
	struct dcp_manifest_restore_opts ro = {
		.threads = o->jobs, .pages = &env.pages, .mounts = mounts,
		.report = manifest_report, .arg = b,
	};
	struct dcp_manifest_restore_stats rs = { 0 };
	struct dcp_manifest_reader *x;
	unsigned long long bad = 0;
	FILE *f = dcp_opts_manifest_fopen(o);
	int ret = f ? dcp_manifest_open(f, false, manifest_bad, &bad, &x) : -errno;

	if (ret < 0) {
		static const struct dcp_manifest none;

		dcp_opts_input_error(o, &bad, o->manifest, 0, -ret, NULL);
		dcp_manifest_restore(&none, &ro, &rs); /* nothing: its counts all the same */
	} else {
		ret = dcp_manifest_restore_from(x, &ro, &rs);
		/* A read error (ENOMEM too) names its line; what came before is restored. */
		if (ret < 0 && dcp_manifest_line(x))
			dcp_opts_input_error(o, &bad, o->manifest, dcp_manifest_line(x), -ret, NULL);
		else if (ret < 0) {
			struct dcp_buf q = DCP_BUF_INIT;

			dcp_warn(-ret, "cannot restore %s", dcp_quoted(&q, o->manifest));
			dcp_buf_free(&q);
			bad++;
		}
		if (dcp_manifest_entries(x))
			dcp_opts_manifest_notice(o, o->manifest, dcp_manifest_format(x));
		dcp_manifest_close(x);
	}
	dcp_opts_manifest_fclose(o, f);
	restored = rs;
	st->entries += rs.entries;
	st->errors += rs.errors;
	bad_input += bad;
	if (rs.elapsed_ns > st->elapsed_ns)
		st->elapsed_ns = rs.elapsed_ns;
	st->jobs = rs.jobs;
}

/* --- the run -------------------------------------------------------------- */

static int add_path(const char *path, void *ctx)
{
	int ret;

	(void)ctx;
	if (atomic_load(&out_failed))
		return -ECANCELED;
	ret = dcp_warm_add(run, path);
	if (ret == -ECANCELED && atomic_load(&out_failed))
		return ret; /* the write error is reported at the end */
	if (ret == -ENOMEM) {
		warn_path(path, strlen(path), NULL, ENOMEM);
		bad_input++;
	} else if (ret < 0) {
		dcp_die(DCP_EXIT_ERROR, -ret, "warming stopped");
	}
	return 0;
}

static void summary_text(const struct dcp_warm_stats *st, double secs, double rate)
{
	struct dcp_buf b = DCP_BUF_INIT;

	dcp_buf_printf(&b, "%s: ", program_invocation_name);
	dcp_buf_count(&b, st->entries, "entry", "entries");
	if (env.flags & DCP_WARM_CHECK)
		dcp_buf_printf(&b, ": %llu were cold, %llu now cached (%llu newly warmed), "
			       "%llu still miss",
			       (unsigned long long)st->cold, (unsigned long long)st->cached_after,
			       (unsigned long long)st->newly_warmed,
			       (unsigned long long)st->still_miss);
	dcp_buf_puts(&b, ", ");
	dcp_buf_count(&b, st->errors, "error", "errors");
	dcp_buf_printf(&b, " in %.3f s (%.0f entries/s)\n", secs, rate);
	dcp_msg_buf(&b);
	dcp_buf_free(&b);
}

/*
 * --manifest: what came back of the manifest, in one line: the entries
 * restored of those it recorded cached or negative, the data read, the
 * misses it recorded (left alone), and what could not be restored.
 */
static void restore_text(const struct dcp_warm_stats *st, double secs)
{
	const struct dcp_manifest_restore_stats *rs = &restored;
	const struct dcp_pages_budget *p = &env.pages;
	struct dcp_buf b = DCP_BUF_INIT;
	uint64_t misses = rs->skipped - rs->skipped_errors;

	(void)st;
	dcp_buf_printf(&b, "%s: restored %llu of ", program_invocation_name,
		       (unsigned long long)rs->entries);
	dcp_buf_count(&b, rs->entries + rs->errors, "entry", "entries");
	dcp_buf_puts(&b, ", ");
	dcp_buf_count(&b, dcp_pages_budget_read(&p->files), "file", "files");
	dcp_buf_puts(&b, ", ");
	dcp_buf_bytes(&b, dcp_pages_budget_read(&p->bytes), o->units);
	dcp_buf_printf(&b, " bytes read, %llu left out by limits in %.3f s; ",
		       (unsigned long long)dcp_pages_budget_read(&p->skipped), secs);
	dcp_buf_count(&b, misses, "recorded miss", "recorded misses");
	if (rs->skipped_errors) {
		dcp_buf_puts(&b, " and ");
		dcp_buf_count(&b, rs->skipped_errors, "recorded error", "recorded errors");
	}
	dcp_buf_puts(&b, " skipped");
	if (rs->errors)
		dcp_buf_printf(&b, "; %llu not restored (%llu changed since the manifest)",
			       (unsigned long long)rs->errors, (unsigned long long)rs->changed);
	dcp_buf_putc(&b, '\n');
	dcp_msg_buf(&b);
	dcp_buf_free(&b);
}

/* "RESIDENT/PAGES" of --check: page counts, or bytes under -h and --si. */
static void resident_of(struct dcp_buf *b, uint64_t resident, uint64_t pages)
{
	dcp_tbl_pages(b, resident, dcp_tbl_page_bytes(resident), o->units);
	dcp_buf_putc(b, '/');
	dcp_tbl_pages(b, pages, dcp_tbl_page_bytes(pages), o->units);
}

/* --pages: what was read, and with --check the residency before and after. */
static void pages_text(struct dcp_buf *b)
{
	const struct dcp_pages_budget *p = &env.pages;
	uint64_t pages = dcp_pages_budget_read(&p->pages);

	dcp_buf_printf(b, "%s: data: ", program_invocation_name);
	dcp_buf_count(b, dcp_pages_budget_read(&p->files), "file", "files");
	dcp_buf_puts(b, ", ");
	dcp_buf_bytes(b, dcp_pages_budget_read(&p->bytes), o->units);
	dcp_buf_printf(b, " bytes read, %llu left out by limits",
		       (unsigned long long)dcp_pages_budget_read(&p->skipped));
	if (env.flags & DCP_WARM_CHECK) {
		uint64_t before = dcp_pages_budget_read(&p->resident_before);
		uint64_t after = dcp_pages_budget_read(&p->resident_after);

		/* Pages, or under -h and --si the bytes they hold, as the
		 * tables write them (dcp_tables.h). */
		dcp_buf_puts(b, "; resident before ");
		resident_of(b, before, pages);
		if (o->units == DCP_UNITS_BYTES)
			dcp_buf_puts(b, " pages");
		if (pages) /* no share of nothing */
			dcp_buf_printf(b, " (%.1f%%)", 100.0 * (double)before / (double)pages);
		dcp_buf_puts(b, ", after ");
		resident_of(b, after, pages);
		if (pages)
			dcp_buf_printf(b, " (%.1f%%)", 100.0 * (double)after / (double)pages);
	}
	if ((env.flags & DCP_WARM_CHECK) && dcp_pages_budget_read(&p->unmeasured))
		dcp_buf_printf(b, "; %llu not measured (permission)",
			       (unsigned long long)dcp_pages_budget_read(&p->unmeasured));
	dcp_buf_putc(b, '\n');
}

static void pages_json(struct dcp_buf *b)
{
	const struct dcp_pages_budget *p = &env.pages;
	struct dcp_buf m = DCP_BUF_INIT;

	dcp_buf_printf(&m, ",\"data\":{\"files\":%llu,\"bytes_read\":%llu,\"left_out\":%llu,"
		       "\"errors\":%llu,\"max_bytes\":%llu", (unsigned long long)dcp_pages_budget_read(&p->files),
		       (unsigned long long)dcp_pages_budget_read(&p->bytes),
		       (unsigned long long)dcp_pages_budget_read(&p->skipped),
		       (unsigned long long)dcp_pages_budget_read(&p->errors),
		       (unsigned long long)p->max_bytes);
	if (env.flags & DCP_WARM_CHECK)
		dcp_buf_printf(&m, ",\"pages\":%llu,\"resident_before\":%llu,"
			       "\"resident_after\":%llu,\"not_measured\":%llu,\"method\":\"%s\"",
			       (unsigned long long)dcp_pages_budget_read(&p->pages),
			       (unsigned long long)dcp_pages_budget_read(&p->resident_before),
			       (unsigned long long)dcp_pages_budget_read(&p->resident_after),
			       (unsigned long long)dcp_pages_budget_read(&p->unmeasured),
			       dcp_pages_method_name(dcp_pages_support()));
	dcp_buf_putc(&m, '}');
	if (!m.oom)
		dcp_pages_json_insert(b, m.data, m.len);
	dcp_buf_free(&m);
}

static void summary_json(struct dcp_buf *b, const struct dcp_warm_stats *st,
			 double secs, double rate, unsigned jobs, int status)
{
	dcp_buf_printf(b, "{\"type\":\"summary\",\"entries\":%llu,\"errors\":%llu",
		       (unsigned long long)st->entries, (unsigned long long)st->errors);
	if (env.flags & DCP_WARM_CHECK)
		dcp_buf_printf(b, ",\"cold\":%llu,\"cached_before\":%llu,\"cached_after\":%llu,"
			       "\"newly_warmed\":%llu,\"still_miss\":%llu",
			       (unsigned long long)st->cold, (unsigned long long)st->cached_before,
			       (unsigned long long)st->cached_after,
			       (unsigned long long)st->newly_warmed,
			       (unsigned long long)st->still_miss);
	if (o->manifest)
		dcp_buf_printf(b, ",\"restore\":{\"recorded\":%llu,\"to_restore\":%llu,"
			       "\"restored\":%llu,\"skipped\":%llu,\"skipped_errors\":%llu,"
			       "\"not_restored\":%llu,\"changed\":%llu}",
			       (unsigned long long)restored.recorded,
			       (unsigned long long)(restored.entries + restored.errors),
			       (unsigned long long)restored.entries,
			       (unsigned long long)restored.skipped,
			       (unsigned long long)restored.skipped_errors,
			       (unsigned long long)restored.errors,
			       (unsigned long long)restored.changed);
	dcp_buf_printf(b, ",\"elapsed_s\":%.6f,\"entries_per_s\":%.1f,\"jobs\":%u,\"status\":%d}\n",
		       secs, rate, jobs, status);
}


int dcp_warm_run(const struct dcp_opts *shared, const struct dcp_warm_run_config *cfg)
{
	struct dcp_warm_opts wo;
	struct dcp_warm_stats st;
	struct dcp_progress *prog = NULL;
	struct dcp_buf *mainbuf;
	struct dcp_warm_stats mst = { 0 };
	unsigned long long bad_input_n = 0;
	double secs, rate;
	int ret, status;

	o = shared;
	env = *cfg;
	fmt = dcp_opts_format(o);
	env.flags |= (o->recursive ? DCP_WARM_RECURSIVE : 0) | (o->xdev ? DCP_WARM_XDEV : 0) |
		     (o->follow == DCP_FOLLOW_ALL ? DCP_WARM_FOLLOW : 0) |
		     (o->follow == DCP_FOLLOW_ROOTS ? DCP_WARM_FOLLOW_ROOTS : 0);
	if (o->manifest)
		env.flags |= DCP_WARM_PAGES; /* a manifest restores data too */
	if (o->recursive || o->manifest) {
		ret = dcp_mounts_load(NULL, &mounts);
		if (ret < 0)
			dcp_die(DCP_EXIT_ERROR, -ret, "cannot read the mount table");
	}

	ret = dcp_opts_can_probe(env.flags & DCP_WARM_CHECK,
				 (env.flags & DCP_WARM_PAGES) && (env.flags & DCP_WARM_CHECK));
	if (ret != DCP_EXIT_OK)
		return ret;
	if ((env.flags & DCP_WARM_PAGES) && !env.pages.max_bytes)
		env.pages.max_bytes = dcp_pages_default_max_bytes();
	if (o->verbose)
		env.flags |= DCP_WARM_REPORT_ALL;
	if (o->prometheus || o->summary)
		env.flags |= DCP_WARM_ROOT_STATS; /* per root with -r */

	wo = (struct dcp_warm_opts){
		.flags = env.flags,
		.threads = o->manifest ? 1 : o->jobs, /* a manifest has its own */
		.max_depth = o->max_depth,
		.excludes = o->excludes,
		.filter = &o->filter,
		.mounts = mounts,
		.report = report,
		.pages = &env.pages,
	};
	ret = dcp_warm_new(&wo, &run);
	if (ret < 0)
		dcp_die(DCP_EXIT_ERROR, -ret, "cannot start");
	nbufs = dcp_warm_threads(run) + 1;
	outbufs = calloc(nbufs, sizeof(*outbufs));
	if (!outbufs)
		dcp_die(DCP_EXIT_ERROR, ENOMEM, "cannot start");
	mainbuf = &outbufs[nbufs - 1];

	if (dcp_opts_progress(o, o->verbose || (env.flags & DCP_WARM_CHECK)))
		dcp_progress_start(tick, NULL, 500000000, 250000000, &prog);

	dcp_opts_each_path(o, add_path, NULL, &bad_input_n);
	bad_input += bad_input_n;
	if (o->manifest)
		run_manifest(&mst, mainbuf);

	/* The timer reads the run: stop it before the run is freed. */
	ret = dcp_warm_wait(run);
	if (dcp_progress_stop(prog) > 0)
		dcp_msg_progress_clear();
	dcp_warm_snapshot(run, &st);
	if (o->manifest) {
		st.entries = mst.entries;
		st.errors = mst.errors;
		st.jobs = mst.jobs;
		if (mst.elapsed_ns > st.elapsed_ns)
			st.elapsed_ns = mst.elapsed_ns;
	}
	if (ret == -ECANCELED && atomic_load(&out_failed))
		ret = 0; /* we stopped it: "write error" below says why */
	if (ret < 0)
		dcp_warn(-ret, "warming failed");
	for (unsigned i = 0; i + 1 < nbufs; i++)
		flush_out(&outbufs[i]);

	st.errors += bad_input;
	secs = (double)st.elapsed_ns / 1e9;
	rate = secs > 0 ? (double)st.entries / secs : 0;
	if (st.errors || ret < 0)
		status = DCP_EXIT_ERROR;
	else if (st.still_miss || restored.left_out)
		status = DCP_EXIT_COLD; /* not all of it warm: a restore cut short too */
	else
		status = DCP_EXIT_OK;

	if (o->summary && !o->quiet && !o->prometheus) {
		if (dcp_opts_headings(o))
			dcp_buf_puts(mainbuf, (env.flags & DCP_WARM_CHECK) ?
				     "ENTRIES\tERRORS\tCOLD\tSTILL\tPATH\n" : "ENTRIES\tERRORS\tPATH\n");
		for (size_t i = 0; o->recursive && i < dcp_warm_nroots(run); i++) {
			struct dcp_warm_stats rs;
			const char *path = dcp_warm_root(run, i, &rs);

			if (path)
				summary_row(mainbuf, path, strlen(path), &rs);
		}
		if (o->total)
			summary_row(mainbuf, NULL, 0, &st);
	}
	if (o->json) {
		dcp_opts_input_records(mainbuf);
		summary_json(mainbuf, &st, secs, rate, st.jobs, status);
	}
	if (o->json && (env.flags & DCP_WARM_PAGES))
		pages_json(mainbuf);
	else if (o->prometheus) {
		struct dcp_prom *m = dcp_opts_prom_new(o);

		if (!m || dcp_warm_prometheus(m, run, &st, status) < 0 ||
		    dcp_prom_write(m, mainbuf) < 0)
			dcp_die(DCP_EXIT_ERROR, ENOMEM, "--prometheus");
		dcp_prom_free(m);
	}
	dcp_warm_finish(run, NULL);
	run = NULL;
	flush_out(mainbuf);
	/*
	 * The summary on stderr: not in the machine formats, not under -q;
	 * under -s (whose lines say it all) only for a person at a terminal.
	 */
	if (!o->json && !o->prometheus && !o->quiet && o->manifest) {
		restore_text(&st, secs);
	} else if (!o->json && !o->prometheus && !o->quiet &&
		   (!o->summary || isatty(STDERR_FILENO))) {
		summary_text(&st, secs, rate);
		if (env.flags & DCP_WARM_PAGES) {
			struct dcp_buf pb = DCP_BUF_INIT;

			pages_text(&pb);
			dcp_msg_buf(&pb);
			dcp_buf_free(&pb);
		}
	}

	if (out_err || (close(STDOUT_FILENO) < 0 && errno != EBADF)) {
		dcp_warn(out_err ? -out_err : errno, "write error");
		return DCP_EXIT_ERROR;
	}
	for (unsigned i = 0; i < nbufs; i++)
		dcp_buf_free(&outbufs[i]);
	free(outbufs);
	return dcp_opts_finish(o, status);
}
