// SPDX-License-Identifier: MIT
/*
 * uring_run.c - one uring-open run: each path opened through io_uring,
 * timed, its verdict (inline or punted to io-wq) checked against the
 * kernel's own tracepoints under --trace, its data measured under --pages;
 * or, under --bench, every path with a queue of requests in flight.  Then
 * the lines, the latency summary and the exit status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dcp_cmd.h"

static const struct dcp_opts *o;	    /* the shared options */
static struct dcp_uring_run_config env; /* uring-open's own */
static char **paths;			    /* PATH arguments, then the lists' paths */
static size_t npaths;
static unsigned long long input_errors;	    /* bad records of the lists */

static struct dcp_buf out = DCP_BUF_INIT;
static struct dcp_buf err = DCP_BUF_INIT;
static struct dcp_trace *trace;
static struct dcp_explain *explain; /* --explain */

static void flush(void)
{
	int ret = dcp_output_write(&out);

	if (ret < 0 || out.oom) {
		dcp_warn(ret < 0 ? -ret : ENOMEM, "write error");
		exit(DCP_EXIT_ERROR); /* stop_trace_at_exit() removes the instance */
	}
	dcp_msg_buf(&err);
}

/* Leave no tracefs instance behind when interrupted. */
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT };

static void stop_trace_at_exit(void)
{
	if (trace) {
		struct dcp_trace *t = trace;

		trace = NULL;
		dcp_trace_stop(t);
	}
}

static void on_signal(int sig)
{
	dcp_output_signalled(); /* this handler took --output's place */
	if (trace)
		dcp_trace_abort(trace);
	signal(sig, SIG_DFL);
	raise(sig);
}

static const char *verdict_name(enum dcp_uring_verdict v)
{
	return v == DCP_URING_INLINE ? "inline" : "punted";
}

static const char *const quantile_names[] = { "min", "median", "p99", "max" };

static void quantiles(struct dcp_latency *l, uint64_t q[4])
{
	struct dcp_latency_summary s;

	dcp_latency_summarize(l, &s);
	q[0] = s.min;
	q[1] = s.median;
	q[2] = s.p99;
	q[3] = s.max;
}

static void lat_text(const char *label, struct dcp_latency *l)
{
	uint64_t q[4];

	if (!l->n)
		return;
	quantiles(l, q);
	dcp_buf_printf(&err, "%-7s", label);
	for (int i = 0; i < 4; i++)
		dcp_buf_printf(&err, " %s %.1f", quantile_names[i], q[i] / 1e3);
	dcp_buf_puts(&err, " us\n");
}

static void lat_json(const char *key, struct dcp_latency *l)
{
	uint64_t q[4];

	dcp_buf_printf(&out, ",\"%s\":", key);
	if (!l->n) {
		dcp_buf_puts(&out, "null");
		return;
	}
	quantiles(l, q);
	for (int i = 0; i < 4; i++)
		dcp_buf_printf(&out, "%c\"%s\":%.3f", i ? ',' : '{', quantile_names[i],
			       q[i] / 1e3);
	dcp_buf_putc(&out, '}');
}

struct totals {
	uint64_t opens, inlined, punted, forced, cold, eagain, failed, disagree, timed_out;
	bool inexact; /* some ring had no DEFER_TASKRUN */
	struct dcp_latency all, lat[2];
	struct dcp_pages_counts pages; /* --pages */
	unsigned long long why[DCP_NWHY]; /* --explain: cold opens by reason */
};

/* What the kernel's tracepoints say about request SEQ. */
struct kernel_view {
	bool seen;
	enum dcp_uring_verdict verdict;
	struct dcp_trace_req req;
};

static struct kernel_view kernel_view(uint64_t seq)
{
	struct kernel_view k = { 0 };
	const struct dcp_trace_req *r = dcp_trace_find(trace, seq);

	if (r && r->submitted) {
		k.seen = true;
		k.req = *r;
		k.verdict = r->punted ? DCP_URING_PUNTED : DCP_URING_INLINE;
	}
	return k;
}

/* --timeout's duration, as a person says it: "10 s", "500 ms", "1.5 s". */
static const char *timeout_words(void)
{
	static char buf[32];
	uint64_t ns = env.timeout_ns;

	if (ns % 1000000000ULL == 0)
		snprintf(buf, sizeof(buf), "%llu s", (unsigned long long)(ns / 1000000000ULL));
	else if (ns < 1000000000ULL)
		snprintf(buf, sizeof(buf), "%.3g ms", ns / 1e6);
	else
		snprintf(buf, sizeof(buf), "%.4g s", ns / 1e9);
	return buf;
}

/* What an open that timed out (-ETIME from the ring) was. */
static const char *timed_out_message(void)
{
	static char buf[192];

	snprintf(buf, sizeof(buf),
		 "the open was punted to io-wq and had not completed after %s (a FUSE daemon or a "
		 "network server that does not answer?): cancelled", timeout_words());
	return buf;
}

static void print_open(const char *path, uint64_t seq, const char *flags,
		       const struct dcp_uring_result *r, bool exact,
		       const struct kernel_view *k, const struct dcp_why_info *why)
{
	if (o->json) {
		dcp_buf_printf(&out, "{\"type\":\"open\",\"seq\":%llu,\"path\":",
			       (unsigned long long)seq);
		dcp_buf_json_str(&out, path, strlen(path));
		dcp_buf_printf(&out,
			       ",\"op\":\"%s\",\"flags\":\"%s\",\"verdict\":\"%s\",\"forced\":%s,"
			       "\"exact\":%s,\"fd\":%d,\"latency_ns\":%llu,\"latency_us\":%.3f",
			       env.how.cached ? "openat2" : "openat", flags,
			       verdict_name(r->verdict),
			       dcp_uring_forced_async(&env.how) ? "true" : "false",
			       exact ? "true" : "false", r->res < 0 ? -1 : r->res,
			       (unsigned long long)r->latency_ns, r->latency_ns / 1e3);
		if (r->res == -ETIME) {
			const char *m = timed_out_message();

			dcp_buf_puts(&out, ",\"timed_out\":true,\"errno\":\"ETIME\",\"message\":");
			dcp_buf_json_str(&out, m, strlen(m));
		} else if (r->res < 0) {
			dcp_buf_printf(&out, ",\"errno\":\"%s\",\"message\":",
				       dcp_errno_name(r->res));
			dcp_buf_json_str(&out, strerror(-r->res), strlen(strerror(-r->res)));
		}
		if (k) {
			dcp_buf_puts(&out, ",\"kernel\":");
			if (!k->seen)
				dcp_buf_puts(&out, "null");
			else
				dcp_buf_printf(&out,
					       "{\"verdict\":\"%s\",\"submit_req\":%u,"
					       "\"queue_async_work\":%u,\"complete\":%u,"
					       "\"result\":%d,\"agree\":%s}",
					       verdict_name(k->verdict), k->req.submitted,
					       k->req.punted, k->req.completed, k->req.result,
					       k->verdict == r->verdict ? "true" : "false");
		}
		if (why)
			dcp_explain_json(&out, why);
		dcp_buf_puts(&out, "}\n");
		return;
	}
	if (o->quiet) {
		/* No lines, but an error still said (EAGAIN of --cached is the
		 * cold answer: the exit status tells it). */
		if (r->res < 0 && !(r->res == -EAGAIN && env.how.cached)) {
			dcp_msg_path(&err, path, strlen(path));
			dcp_buf_printf(&err, "%s\n", r->res == -ETIME ? timed_out_message()
								     : strerror(-r->res));
		}
		return;
	}
	dcp_buf_printf(&out, "%s %.1f us ", verdict_name(r->verdict), r->latency_ns / 1e3);
	if (r->res >= 0)
		dcp_buf_printf(&out, "fd %d ", r->res);
	else
		dcp_buf_printf(&out, "error %s ", dcp_errno_name(r->res));
	dcp_buf_quote(&out, path, strlen(path));
	if (why) {
		dcp_buf_puts(&out, "  ");
		dcp_explain_text(&out, why);
	}
	dcp_buf_putc(&out, '\n');
	if (r->res < 0) {
		dcp_msg_path(&err, path, strlen(path));
		dcp_buf_printf(&err, "%s\n", r->res == -ETIME ? timed_out_message()
							     : strerror(-r->res));
	}
	if (!k)
		return;
	if (!k->seen)
		dcp_buf_puts(&out, "kernel: no io_uring events traced for this request\n");
	else
		dcp_buf_printf(&out,
			       "kernel: %s (io_uring_submit_req %u, io_uring_queue_async_work %u, "
			       "io_uring_complete %u, result %d)\n",
			       verdict_name(k->verdict), k->req.submitted, k->req.punted,
			       k->req.completed, k->req.result);
}

/*
 * --pages: the data residency of what the open gave (lib/pages.c): measured
 * on the descriptor, unknown after RESOLVE_CACHED's EAGAIN, "-" for a failed
 * open, an O_PATH descriptor or anything but a regular file.
 */
static int print_pages(const char *path, const struct dcp_uring_result *r, struct dcp_pages *pg)
{
	int pret;

	*pg = (struct dcp_pages){ 0 };
	if (r->res == -EAGAIN && env.how.cached)
		pret = -EAGAIN;
	else if (r->res < 0 || (fcntl(r->res, F_GETFL) & O_PATH))
		pret = -ENODEV;
	else
		pret = dcp_pages_fd(r->res, pg);
	if (o->json) {
		struct dcp_buf m = DCP_BUF_INIT;

		dcp_pages_json(&m, pret, pg);
		if (!m.oom)
			dcp_pages_json_insert(&out, m.data, m.len);
		dcp_buf_free(&m);
	} else if (!o->quiet) {
		dcp_buf_puts(&out, "data: ");
		dcp_pages_text(&out, pret, pg, o->units);
		out.len--; /* the columns' last space */
		dcp_buf_putc(&out, '\n');
	} else if (dcp_pages_state_of(pret) == DCP_PAGES_FAILED) {
		dcp_msg_path(&err, path, strlen(path));
		dcp_buf_printf(&err, "data: %s\n", dcp_pages_error_message(pret));
	}
	return pret;
}

/* Turn a ring failure into the message and exit status it deserves. */
/* The events traced since the last call, or a warning that they cannot be read. */
static void trace_collect(void)
{
	int ret = dcp_trace_collect(trace);

	if (ret < 0)
		dcp_warn(-ret, "reading the trace buffer in %s", dcp_trace_dir(trace));
}

static void ring_failed(int ret)
{
	flush();
	if (dcp_uring_errno_unsupported(ret))
		dcp_die(DCP_EXIT_UNSUPPORTED, 0, "%s", dcp_uring_unsupported_reason(ret));
	dcp_die(DCP_EXIT_ERROR, -ret, "io_uring");
}

/*
 * The watchdog of an open that blocks in the submit call itself.  The
 * ring's timeout bounds the waits for a completion; but the inline attempt
 * of an open, in io_uring_enter, can block too: its permission check (not
 * covered by the cached lookup) refreshes a FUSE inode's attributes from
 * the daemon, as for the root of a FUSE mount whose attributes expired.
 * Only a fatal signal or the process's exit ends that wait.  So while an
 * open is in the library the watchdog thread keeps its deadline (--timeout
 * and a second); when it passes, the watchdog takes the run over (the main
 * thread is in the kernel, or parks itself as it comes back), says what
 * blocked, leaves --output as it was and exits 2, which kills the thread
 * that waits.
 *
 * --bench keeps many opens in flight for as long as the list lasts, so no
 * deadline fits it: there the watchdog follows the main thread's CPU time
 * instead.  Every wait of the run is bounded by the ring's timeout; a
 * thread that has not run for that long and a second more is blocked in
 * the kernel for good (a submit or a close waiting on a daemon).
 */
enum { IDLE, BUSY, TAKEN };
static _Atomic int dog_state = IDLE;
static _Atomic uint64_t dog_deadline; /* CLOCK_MONOTONIC ns while BUSY */
static const char *_Atomic dog_path;  /* the path in the library; NULL: --bench */
static clockid_t dog_cpu;	      /* --bench: the main thread's CPU clock */
static pthread_t dog;
static bool dog_started;

/* The main thread's CPU time, ns (0 if it cannot be read: never a stall). */
static uint64_t main_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(dog_cpu, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *watchdog(void *arg)
{
	uint64_t cpu = 0, still_since = 0, last = 0;

	(void)arg;
	for (;;) {
		struct timespec ts = { .tv_nsec = 50 * 1000000 };
		uint64_t d = atomic_load(&dog_deadline), now, gap;
		const char *p = atomic_load(&dog_path);
		int busy = BUSY;

		nanosleep(&ts, NULL);
		now = dcp_now_ns();
		gap = last ? now - last : 0;
		last = now;
		/*
		 * A sleep of 50 ms that took over a second: the whole process was
		 * stopped (^Z, SIGSTOP) or not run.  That time is nobody's wait:
		 * the deadline moves by it, and a stall is counted anew.
		 */
		if (gap > 1000000000ULL) {
			if (d && p)
				atomic_compare_exchange_strong(&dog_deadline, &d, d + gap);
			still_since = 0;
			continue;
		}
		if (d && !p) {
			/* --bench: a stall is time without CPU, not time. */
			uint64_t c = main_cpu_ns();

			if (!c || c != cpu || !still_since) {
				cpu = c;
				still_since = now;
				continue;
			}
			d = still_since + env.timeout_ns + 1000000000ULL;
		} else {
			still_since = 0;
		}
		if (!d || now < d || (p ? atomic_load(&dog_deadline) != d : !atomic_load(&dog_deadline)) ||
		    !atomic_compare_exchange_strong(&dog_state, &busy, TAKEN))
			continue;

		(void)dcp_output_write(&out); /* the lines so far (to stdout) */
		dcp_output_signalled();	      /* --output as it was, no temporary */
		dcp_msg_buf(&err);
		if (p) {
			dcp_msg_path(&err, p, strlen(p));
			dcp_buf_puts(&err, "the open");
		} else {
			dcp_buf_printf(&err, "%s: an open", program_invocation_name);
		}
		dcp_buf_printf(&err, " blocked in the submit call itself (its inline attempt "
			       "waits on a FUSE daemon or a network server that does not answer) and "
			       "had not returned after more than %s: the run ends here, incomplete\n",
			       timeout_words());
		dcp_msg_buf(&err);
		exit(DCP_EXIT_ERROR);
	}
	return NULL;
}

/* Before a call into the library that may block on PATH (NULL: --bench's whole run). */
static void dog_arm(const char *path)
{
	if (!path && pthread_getcpuclockid(pthread_self(), &dog_cpu) != 0)
		return; /* no CPU clock: --bench is bounded by the ring's timeout alone */
	if (!dog_started) {
		sigset_t all, old;

		/* The watchdog takes no signal: they stay the main thread's. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		dog_started = pthread_create(&dog, NULL, watchdog, NULL) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (dog_started)
			pthread_detach(dog);
	}
	atomic_store(&dog_path, path);
	atomic_store(&dog_state, BUSY);
	atomic_store(&dog_deadline, dcp_now_ns() + env.timeout_ns + 1000000000ULL);
}

/* After it: back to idle, or parked for good when the watchdog took over. */
static void dog_disarm(void)
{
	int busy = BUSY;

	atomic_store(&dog_deadline, 0);
	if (!atomic_compare_exchange_strong(&dog_state, &busy, IDLE))
		for (;;)
			pause();
}

static void open_one(const char *path, uint64_t seq, const char *flags,
		     struct totals *t)
{
	struct dcp_uring_result r;
	struct kernel_view k;
	struct dcp_uring *ring;
	bool exact;
	int ret;

	ret = dcp_uring_new(8, env.no_defer ? DCP_URING_NO_DEFER : 0, &ring);
	if (ret < 0)
		ring_failed(ret);
	exact = dcp_uring_exact(ring);
	t->inexact |= !exact;
	dcp_uring_set_timeout(ring, env.timeout_ns);
	/*
	 * --explain: probing does no I/O, so the path is explained before the
	 * open, which would warm it, and the open still finds it as it was.
	 */
	struct dcp_why_info why = { .why = DCP_WHY_UNKNOWN };

	if (explain) {
		unsigned pf = (env.how.flags & O_NOFOLLOW) ? 0 : DCP_FOLLOW;

		if (dcp_probe_at(env.how.dirfd, path, pf) == -EAGAIN &&
		    dcp_explain_path(explain, 0, path, pf, &why) < 0)
			why = (struct dcp_why_info){ .why = DCP_WHY_UNKNOWN };
	}
	dog_arm(path);
	ret = dcp_uring_open(ring, path, &env.how, seq, &r);
	dog_disarm();
	/*
	 * After a timeout the open's worker may still wait on the daemon: the
	 * ring's teardown (its close) does not wait for it, the kernel's exit
	 * work does, and the process's exit kills the worker.
	 */
	dcp_uring_free(ring);
	if (ret == -ETIME)
		t->timed_out++; /* r.res is -ETIME: a failed open, said below */
	else if (ret < 0)
		ring_failed(ret);
	if (trace) {
		trace_collect();
		k = kernel_view(seq);
		if (!k.seen || k.verdict != r.verdict) {
			t->disagree++;
			dcp_msg_path(&err, path, strlen(path));
			if (!k.seen)
				dcp_buf_puts(&err, "the trace has no io_uring events for this open\n");
			else
				dcp_buf_printf(&err, "the kernel's trace says %s, the ring said %s\n",
					       verdict_name(k.verdict), verdict_name(r.verdict));
		}
	}
	/* A forced punt says nothing about the cache; RESOLVE_CACHED's EAGAIN does. */
	bool forced = r.verdict == DCP_URING_PUNTED && dcp_uring_forced_async(&env.how);
	bool missed = r.res == -EAGAIN && env.how.cached;
	bool cold = (r.verdict == DCP_URING_PUNTED && !forced) || missed;

	if (explain && cold)
		t->why[why.why]++;
	print_open(path, seq, flags, &r, exact, trace ? &k : NULL,
		   explain && cold ? &why : NULL);
	if (env.pages) {
		struct dcp_pages pg;

		dcp_pages_count(&t->pages, print_pages(path, &r, &pg), &pg);
	}
	if (r.res >= 0)
		close(r.res);

	t->opens++;
	if (dcp_latency_add(&t->all, r.latency_ns) < 0 ||
	    dcp_latency_add(&t->lat[r.verdict], r.latency_ns) < 0)
		dcp_die(DCP_EXIT_ERROR, ENOMEM, "latency table");
	if (r.verdict == DCP_URING_INLINE)
		t->inlined++;
	else
		t->punted++;
	t->forced += forced;
	t->eagain += missed;
	if (cold)
		t->cold++;
	if (r.res < 0 && !missed)
		t->failed++;
	if (out.len > 65536)
		flush();
}

static int status_of(const struct totals *t)
{
	if (t->failed || t->disagree || t->pages.failed || input_errors)
		return DCP_EXIT_ERROR;
	return t->cold ? DCP_EXIT_COLD : DCP_EXIT_OK;
}

static void summary(struct totals *t)
{
	bool exact = !t->inexact;
	int status = status_of(t);

	if (o->json) {
		dcp_opts_input_records(&out);
		dcp_buf_printf(&out,
			       "{\"type\":\"summary\",\"opens\":%llu,\"inline\":%llu,\"punted\":%llu,"
			       "\"forced\":%llu,\"eagain\":%llu,\"failed\":%llu,\"exact\":%s",
			       (unsigned long long)t->opens, (unsigned long long)t->inlined,
			       (unsigned long long)t->punted, (unsigned long long)t->forced,
			       (unsigned long long)t->eagain, (unsigned long long)t->failed,
			       exact ? "true" : "false");
		if (t->timed_out)
			dcp_buf_printf(&out, ",\"timed_out\":%llu", (unsigned long long)t->timed_out);
		if (trace)
			dcp_buf_printf(&out, ",\"disagreements\":%llu",
				       (unsigned long long)t->disagree);
		lat_json("latency_us", &t->all);
		lat_json("inline_us", &t->lat[DCP_URING_INLINE]);
		lat_json("punted_us", &t->lat[DCP_URING_PUNTED]);
		if (explain)
			dcp_why_counts_json(&out, t->why);
		dcp_buf_printf(&out, ",\"status\":%d}\n", status);
		if (env.pages) {
			struct dcp_buf m = DCP_BUF_INIT;

			dcp_pages_json_counts(&m, &t->pages, -1);
			if (!m.oom)
				dcp_pages_json_insert(&out, m.data, m.len);
			dcp_buf_free(&m);
		}
		return;
	}
	if (o->quiet || t->opens < 2)
		return;
	dcp_buf_count(&err, t->opens, "open", "opens");
	dcp_buf_printf(&err, ": %llu inline, %llu punted, %llu EAGAIN, %llu failed\n",
		       (unsigned long long)t->inlined,
		       (unsigned long long)t->punted, (unsigned long long)t->eagain,
		       (unsigned long long)t->failed);
	lat_text("all", &t->all);
	lat_text("inline", &t->lat[DCP_URING_INLINE]);
	lat_text("punted", &t->lat[DCP_URING_PUNTED]);
	if (explain)
		dcp_why_counts_text(&err, t->why);
}

static int keep_path(const char *path, void *ctx)
{
	static size_t cap;

	(void)ctx;
	if (npaths == cap) {
		char **v = realloc(paths, (cap = cap ? 2 * cap : 1024) * sizeof(*v));

		if (!v)
			dcp_die(DCP_EXIT_ERROR, ENOMEM, "the list of paths");
		paths = v;
	}
	paths[npaths] = strdup(path);
	if (!paths[npaths++])
		dcp_die(DCP_EXIT_ERROR, ENOMEM, "the list of paths");
	return 0;
}

/*
 * Every path, read before anything is timed.  Bad records are said and
 * skipped, as in every command: the others are opened, and the exit
 * status is 2 (input_errors).
 */
static void read_paths(void)
{
	dcp_opts_each_path(o, keep_path, NULL, &input_errors);
	/* Nothing to open (empty lists): done; bad lists said why. */
	if (!npaths)
		exit(input_errors ? DCP_EXIT_ERROR : DCP_EXIT_OK);
}

static int bench(void)
{
	const char *mode = env.how.async ? "async" : env.how.cached ? "cached" : "inline-first";
	struct dcp_uring_batch b;
	struct dcp_uring *ring;
	unsigned char *verdicts;
	uint64_t disagree = 0, kpunted = 0, timed_out;
	size_t n = npaths;
	int ret, status;

	verdicts = calloc(n, 1);
	if (!verdicts)
		dcp_die(DCP_EXIT_ERROR, ENOMEM, "verdicts");
	if (env.how.direct) {
		/* A fixed-file table of --depth slots must fit RLIMIT_NOFILE:
		 * raise the soft limit as far as the hard one allows (the
		 * library uses fewer slots beyond that). */
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < env.depth &&
		    rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max < env.depth ? rl.rlim_max : env.depth;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	ret = dcp_uring_new(env.depth, env.no_defer ? DCP_URING_NO_DEFER : 0, &ring);
	if (ret < 0)
		ring_failed(ret);
	dcp_uring_set_timeout(ring, env.timeout_ns);
	if (trace)
		dcp_trace_collect(trace); /* start from an empty buffer */
	dog_arm(NULL);
	ret = dcp_uring_open_all(ring, (const char *const *)paths, n, env.depth,
				 &env.how, verdicts, &b);
	dog_disarm();
	if (ret < 0 && ret != -ETIME)
		ring_failed(ret);
	timed_out = dcp_uring_timed_out(ring);
	if (timed_out) {
		uint64_t left = n - b.opens - timed_out;

		dcp_buf_count(&err, timed_out, "open", "opens");
		dcp_buf_printf(&err, " punted to io-wq had not completed after %s (a FUSE daemon or "
			       "a network server that does not answer?): cancelled", timeout_words());
		if (left)
			dcp_buf_printf(&err, "; %llu more not opened", (unsigned long long)left);
		dcp_buf_putc(&err, '\n');
	}
	if (trace) {
		trace_collect();
		for (size_t i = 0; i < n; i++) {
			const struct dcp_trace_req *r = dcp_trace_find(trace, i);
			bool punted = r && r->punted;

			kpunted += punted;
			disagree += !r || !r->submitted || punted != (verdicts[i] == DCP_URING_PUNTED);
		}
	}

	if (b.failed) {
		const char *p = paths[b.first_error_index];

		dcp_msg_path(&err, p, strlen(p));
		dcp_buf_printf(&err, "%s", strerror(-b.first_error));
		if (b.failed > 1)
			dcp_buf_printf(&err, " (and %llu more failed opens)",
				       (unsigned long long)b.failed - 1);
		dcp_buf_putc(&err, '\n');
	}
	if (disagree) {
		dcp_buf_count(&err, disagree, "open", "opens");
		dcp_buf_puts(&err, ": the kernel's trace and the ring disagree\n");
	}
	if (b.failed || timed_out || disagree || input_errors)
		status = DCP_EXIT_ERROR;
	else if (b.missed || (b.punted && !dcp_uring_forced_async(&env.how)))
		status = DCP_EXIT_COLD;
	else
		status = DCP_EXIT_OK;
	if (o->json) {
		dcp_opts_input_records(&out);
		dcp_buf_printf(&out,
			       "{\"type\":\"bench\",\"mode\":\"%s\",\"direct\":%s,\"depth\":%u,\"opens\":%llu,"
			       "\"inline\":%llu,\"punted\":%llu,\"eagain\":%llu,\"failed\":%llu,\"exact\":%s,"
			       "\"elapsed_ns\":%llu,\"elapsed_ms\":%.3f,\"cpu_ms\":%.3f",
			       mode, env.how.direct ? "true" : "false", b.depth,
			       (unsigned long long)b.opens,
			       (unsigned long long)b.inlined, (unsigned long long)b.punted,
			       (unsigned long long)b.missed, (unsigned long long)b.failed,
			       dcp_uring_exact(ring) ? "true" : "false",
			       (unsigned long long)b.elapsed_ns, b.elapsed_ns / 1e6, b.cpu_ns / 1e6);
		if (timed_out)
			dcp_buf_printf(&out, ",\"timed_out\":%llu", (unsigned long long)timed_out);
		if (trace)
			dcp_buf_printf(&out, ",\"kernel_punted\":%llu,\"disagreements\":%llu",
				       (unsigned long long)kpunted, (unsigned long long)disagree);
		dcp_buf_printf(&out, "}\n{\"type\":\"summary\",\"opens\":%llu,\"status\":%d}\n",
			       (unsigned long long)b.opens, status);
	} else if (!o->quiet) {
		dcp_buf_printf(&out, "%s: ", mode);
		dcp_buf_count(&out, b.opens, "open", "opens");
		dcp_buf_printf(&out, " in %.3f ms, %.3f ms CPU (depth %u%s): %llu inline, "
			       "%llu punted, %llu EAGAIN, %llu failed\n",
			       b.elapsed_ns / 1e6, b.cpu_ns / 1e6,
			       b.depth, env.how.direct ? ", direct" : "",
			       (unsigned long long)b.inlined, (unsigned long long)b.punted,
			       (unsigned long long)b.missed, (unsigned long long)b.failed);
		if (trace)
			dcp_buf_printf(&out, "kernel: %llu punted (io_uring_queue_async_work), "
				       "%llu disagreements\n",
				       (unsigned long long)kpunted, (unsigned long long)disagree);
	}
	dcp_uring_free(ring);
	free(verdicts);
	return status;
}

static void start_trace(void)
{
	int ret = dcp_trace_start(getpid(), env.bench ? 32768 : 0, &trace);

	if (ret == -ENOENT)
		dcp_die(DCP_EXIT_UNSUPPORTED, 0,
			"--trace needs tracefs: mount it with 'mount -t tracefs nodev /sys/kernel/tracing'");
	if (ret == -EACCES || ret == -EPERM)
		dcp_die(DCP_EXIT_UNSUPPORTED, 0, "--trace needs root (tracefs is not accessible)");
	if (ret == -EOPNOTSUPP)
		dcp_die(DCP_EXIT_UNSUPPORTED, 0, "--trace: this kernel has no io_uring tracepoints");
	if (ret < 0)
		dcp_die(DCP_EXIT_UNSUPPORTED, -ret, "--trace: cannot set up a tracefs instance");
	/*
	 * The instance (events on, a 32 MiB per-CPU buffer with --bench) must
	 * go on every way out: exit() and error() after a bad list, a failed
	 * ring or a write error, and the signals that end us, SIGPIPE from
	 * a closed pipe included.  A signal the parent ignores stays ignored.
	 */
	atexit(stop_trace_at_exit);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(*fatal_signals); i++) {
		struct sigaction sa;

		if (sigaction(fatal_signals[i], NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			continue;
		signal(fatal_signals[i], on_signal);
	}
}


int dcp_uring_run(const struct dcp_opts *opts, const struct dcp_uring_run_config *cfg)
{
	struct totals t = {
		.all = DCP_LATENCY_INIT,
		.lat = { DCP_LATENCY_INIT, DCP_LATENCY_INIT },
	};
	char flags[256];
	uint64_t seq = 0;
	int ret, status;

	o = opts;
	env = *cfg;
	ret = dcp_uring_support(env.how.cached);
	if (ret < 0) {
		if (dcp_uring_errno_unsupported(ret))
			dcp_die(DCP_EXIT_UNSUPPORTED, 0, "%s", dcp_uring_unsupported_reason(ret));
		dcp_die(DCP_EXIT_ERROR, -ret, "io_uring");
	}
	if (env.pages) {
		ret = dcp_pages_support();
		if (ret < 0)
			dcp_die(DCP_EXIT_UNSUPPORTED, 0, "%s", dcp_pages_unsupported_reason(ret));
	}
	dcp_open_flags_format(env.how.flags, flags, sizeof(flags));
	if (!o->quiet && (env.how.flags & (O_CREAT | O_TRUNC | (O_TMPFILE & ~O_DIRECTORY))))
		dcp_warn(0, "note: the kernel never tries O_CREAT, O_TRUNC or O_TMPFILE opens "
			 "inline: they are always punted to io-wq");
	read_paths();
	if (env.trace)
		start_trace();
	if (o->explain) {
		ret = dcp_explain_new(1, &explain);
		if (ret < 0)
			dcp_die(DCP_EXIT_ERROR, -ret, "--explain");
	}

	if (env.bench) {
		status = bench();
	} else {
		for (size_t i = 0; i < npaths; i++)
			for (uint64_t rep = 0; rep < env.count; rep++)
				open_one(paths[i], ++seq, flags, &t);
		summary(&t);
		status = status_of(&t);
		dcp_latency_free(&t.all);
		dcp_latency_free(&t.lat[0]);
		dcp_latency_free(&t.lat[1]);
	}
	if (trace) {
		struct dcp_trace *tr = trace;

		trace = NULL; /* before the exit handler could see it freed */
		ret = dcp_trace_stop(tr);
		if (ret < 0)
			dcp_warn(-ret, "removing the tracefs instance");
	}
	flush();
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	if (close(STDOUT_FILENO) < 0 && errno != EBADF) {
		dcp_warn(errno, "write error");
		return DCP_EXIT_ERROR;
	}
	return dcp_opts_finish(o, status);
}
