/* Unit tests for lib/probe_report.c: dcache-probe's record formats. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "check.h"
#include "dcp_cmd.h"

static const char *str(struct dcp_buf *b)
{
	dcp_buf_putc(b, '\0');
	b->len--;
	return b->data;
}

int main(void)
{
	struct dcp_buf b = DCP_BUF_INIT;
	struct dcp_pr_counts c = { .n = { 8, 1, 3, 0 }, .not_visited = 2 };
	struct dcp_pr_counts zero = { 0 };
	struct dcp_mount mt = { .id = 1, .dev = makedev(8, 1), .target = "/boot/efi",
				.fstype = "vfat", .source = "/dev/sda1" };

	CHECK_INT(dcp_pr_total(&c), 12);
	CHECK(dcp_pr_cached_pct(&c) == 75.0);
	CHECK(dcp_pr_cached_pct(&zero) < 0);

	dcp_pr_entry(&b, DCP_PR_TEXT, "/a\nb", 4, 0, DT_REG, 1);
	dcp_pr_entry(&b, DCP_PR_TEXT, "/x", 2, -ENOENT, DT_UNKNOWN, 0);
	dcp_pr_entry(&b, DCP_PR_TEXT, "/y", 2, -EAGAIN, DT_DIR, 2);
	dcp_pr_entry(&b, DCP_PR_TEXT, "/z", 2, -ELOOP, DT_LNK, 3);
	CHECK_STR(str(&b), "cached /a\\nb\nnegative /x\nmiss /y\nerror ELOOP /z\n");
	dcp_buf_reset(&b);

	dcp_pr_entry(&b, DCP_PR_NUL, "/a\nb", 4, 0, DT_REG, 1);
	CHECK_INT(b.len, 5);
	CHECK(memcmp(b.data, "/a\nb", 5) == 0);
	dcp_buf_reset(&b);

	dcp_pr_entry(&b, DCP_PR_JSON, "/z", 2, -ELOOP, DT_LNK, 3);
	CHECK_STR(str(&b), "{\"type\":\"entry\",\"path\":\"/z\",\"state\":\"error\",\"kind\":\"symlink\","
			   "\"depth\":3,\"errno\":\"ELOOP\",\"message\":\"Too many levels of symbolic links\"}\n");
	dcp_buf_reset(&b);

	dcp_pr_unvisited(&b, DCP_PR_TEXT, "/d\n", 3, -EAGAIN, 1);
	CHECK_STR(str(&b), "unvisited /d\\n\n");
	dcp_buf_reset(&b);
	dcp_pr_unvisited(&b, DCP_PR_JSON, "/d", 2, 0, 2);
	CHECK_STR(str(&b), "{\"type\":\"unvisited\",\"path\":\"/d\",\"depth\":2,\"reason\":\"inside-miss\"}\n");
	dcp_buf_reset(&b);
	dcp_pr_unvisited(&b, DCP_PR_NUL, "/d", 2, -EAGAIN, 1);
	CHECK_INT(b.len, 3);
	dcp_buf_reset(&b);

	dcp_pr_walk_error(&b, DCP_PR_TEXT, "/p", 2, EACCES);
	CHECK_INT(b.len, 0);
	dcp_pr_walk_error(&b, DCP_PR_JSON, "/p", 2, EACCES);
	CHECK_STR(str(&b), "{\"type\":\"error\",\"path\":\"/p\",\"errno\":\"EACCES\",\"message\":\"Permission denied\"}\n");
	dcp_buf_reset(&b);

	dcp_pr_dir(&b, DCP_PR_TEXT, "/srv", 4, 0, &c);
	CHECK_STR(str(&b), " 75.0%\t9/12+2?\t/srv\n"); /* 2 dirs not visited */
	dcp_buf_reset(&b);
	dcp_pr_dir(&b, DCP_PR_TEXT, "/srv", 4, 0, &(struct dcp_pr_counts){ .n = { 9, 0, 3, 0 } });
	CHECK_STR(str(&b), " 75.0%\t9/12\t/srv\n");
	dcp_buf_reset(&b);
	/* 999 of 1000 must not round up to a full 100.0%. */
	struct dcp_pr_counts almost = { .n = { 9999, 0, 1, 0 } };
	dcp_pr_dir(&b, DCP_PR_TEXT, "/a", 2, 0, &almost);
	CHECK_STR(str(&b), " 99.9%\t9999/10000\t/a\n");
	dcp_buf_reset(&b);

	dcp_pr_mount(&b, DCP_PR_TEXT, &mt, mt.dev, &c);
	/* vfat never serves lookups from the cache: its 3 misses apart. */
	CHECK_STR(str(&b), "100.0%\t9/9+2?, 3 never cached\tvfat*\t/boot/efi\n");
	dcp_buf_reset(&b);
	dcp_pr_mount(&b, DCP_PR_TEXT, NULL, makedev(0, 99), &zero);
	CHECK_STR(str(&b), "     -\t0/0\tunknown\t?\n"); /* no share of nothing */
	dcp_buf_reset(&b);
	dcp_pr_root(&b, DCP_PR_JSON, "/e", 2, &zero);
	CHECK(strstr(str(&b), "\"cached_percent\":null,") != NULL);
	dcp_buf_reset(&b);
	dcp_pr_summary_text(&b, &zero);
	CHECK_STR(str(&b), "0 paths: 0 cached, 0 negative, 0 miss, 0 error\n");
	dcp_buf_reset(&b);
	dcp_pr_mount(&b, DCP_PR_JSON, &mt, mt.dev, &c);
	CHECK(strstr(str(&b), "\"resolve_cached\":\"never\",\"note\":") != NULL);
	CHECK(strstr(str(&b), "\"dev\":\"8:1\"") != NULL);
	dcp_buf_reset(&b);

	dcp_pr_summary_text(&b, &c);
	CHECK_STR(str(&b), "12 paths: 8 cached, 1 negative, 3 miss, 0 error; at most 75.0% cached; "
			   "2 directories not visited (what they hold is unknown)\n");
	dcp_buf_reset(&b);
	dcp_pr_summary_json(&b, &c, 90, 1.5, 1);
	CHECK_STR(str(&b), "{\"type\":\"summary\",\"paths\":12,\"cached\":8,\"negative\":1,"
			   "\"miss\":3,\"never_cached\":0,\"error\":0,\"not_visited\":2,\"walk_errors\":0,"
			   "\"cached_percent\":75.00,\"complete\":false,\"min_cached\":90,\"elapsed_s\":1.500000,"
			   "\"status\":1}\n");
	dcp_buf_reset(&b);

	/* Misses never cached, apart (issue 43): 2 of c's 3. */
	CHECK(dcp_pr_never_cached(-EAGAIN, "9p"));
	CHECK(dcp_pr_never_cached(-EAGAIN, "sysfs"));
	CHECK(!dcp_pr_never_cached(0, "9p"));
	CHECK(!dcp_pr_never_cached(-ENOENT, "vfat"));
	CHECK(!dcp_pr_never_cached(-EAGAIN, "ext4"));
	CHECK(!dcp_pr_never_cached(-EAGAIN, "nfs")); /* revalidates: cold when it misses */
	CHECK(dcp_pr_cached_pct_split(&c, 2) == 90.0);
	CHECK(dcp_pr_cached_pct_split(&c, 99) == 100.0); /* never more than the misses */
	CHECK(dcp_pr_cached_pct_split(&(struct dcp_pr_counts){ .n = { 0, 0, 4, 0 } }, 4) < 0);
	dcp_pr_summary_text_split(&b, &c, 2);
	CHECK_STR(str(&b), "12 paths: 8 cached, 1 negative, 1 miss, 2 never cached, 0 error; "
			   "at most 90.0% cached; 2 directories not visited (what they hold is unknown)\n");
	dcp_buf_reset(&b);
	dcp_pr_summary_text_split(&b, &(struct dcp_pr_counts){ .n = { 0, 0, 4, 0 } }, 4);
	CHECK_STR(str(&b), "4 paths: 0 cached, 0 negative, 0 miss, 4 never cached, 0 error; "
			   "no share: no path probed is on a filesystem the cache can serve\n");
	dcp_buf_reset(&b);
	dcp_pr_dir_split(&b, DCP_PR_TEXT, "/9", 2, 0, &c, 2);
	CHECK_STR(str(&b), " 90.0%\t9/10+2?, 2 never cached\t/9\n");
	dcp_buf_reset(&b);
	dcp_pr_root_split(&b, DCP_PR_JSON, NULL, 0, &c, 2);
	CHECK(strstr(str(&b), "\"miss\":1,\"never_cached\":2,\"error\":0,") != NULL);
	CHECK(strstr(str(&b), "\"cached_percent\":90.00,") != NULL);
	dcp_buf_reset(&b);
	dcp_pr_summary_json_split(&b, &c, 2, -1, 0, 1);
	CHECK(strstr(str(&b), "\"miss\":1,\"never_cached\":2,") != NULL);
	dcp_buf_reset(&b);

	/*
	 * A tree that could not be walked (its root absent): its root's own
	 * probe is counted, but there is no share of it in any format, and it
	 * is not complete; a walk error below a root leaves a share, not
	 * complete.
	 */
	{
		struct dcp_pr_counts gone = { .walk_errors = 1, .unwalked_roots = 1 };
		struct dcp_pr_counts below = { .walk_errors = 1 };
		struct dcp_prom *gm = dcp_prom_new("dcache-probe");
		struct dcp_pr_prom_series gr = { .path = "/gone", .pathlen = 5, .c = &gone };

		gone.n[DCP_NEGATIVE] = 1;
		below.n[DCP_CACHED] = 3;
		CHECK(dcp_pr_cached_pct(&gone) < 0);
		CHECK(!dcp_pr_complete(&gone));
		CHECK(!dcp_pr_complete(&below));
		CHECK(dcp_pr_cached_pct(&below) == 100.0);
		dcp_pr_root(&b, DCP_PR_TEXT, "/gone", 5, &gone);
		CHECK_STR(str(&b), "     -\t1/1\t/gone\n");
		dcp_buf_reset(&b);
		dcp_pr_root(&b, DCP_PR_JSON, "/gone", 5, &gone);
		CHECK(strstr(str(&b), "\"cached_percent\":null,\"complete\":false") != NULL);
		dcp_buf_reset(&b);
		dcp_pr_summary_text(&b, &gone);
		CHECK_STR(str(&b), "1 path: 0 cached, 1 negative, 0 miss, 0 error; no share: 1 tree "
				   "could not be walked; 1 walk error\n");
		dcp_buf_reset(&b);
		dcp_pr_summary_text(&b, &below);
		CHECK_STR(str(&b), "3 paths: 3 cached, 0 negative, 0 miss, 0 error; at most 100.0% "
				   "cached; 1 walk error\n");
		dcp_buf_reset(&b);
		CHECK(gm != NULL);
		dcp_pr_prometheus(gm, &(struct dcp_pr_prom){ .roots = &gr, .nroots = 1, .total = &gone,
							      .status = 2 });
		CHECK(dcp_prom_write(gm, &b) == 0);
		CHECK(strstr(str(&b), "dcprobe_cached_ratio") == NULL);
		CHECK(strstr(str(&b), "dcprobe_complete{command=\"dcache-probe\",root=\"/gone\"} 0\n") != NULL);
		dcp_prom_free(gm);
		dcp_buf_reset(&b);
	}

	/*
	 * Prometheus: one family once, command label first, a root given
	 * twice is one series (the first one's counts), hostile names escaped.
	 */
	struct dcp_pr_counts c2 = c;
	c2.n[DCP_MISS] = 99;
	struct dcp_pr_prom_series roots[] = {
		{ .path = "/a\"b", .pathlen = 4, .c = &c },
		{ .path = "/n\nl\\\xff", .pathlen = 6, .c = &c },
		{ .path = "/a\"b", .pathlen = 4, .c = &c2 },
	};
	struct dcp_pr_prom p = { .roots = roots, .nroots = 3, .total = &c, .status = 1 };
	struct dcp_prom *m = dcp_prom_new("dcache-probe");
	CHECK(m != NULL);
	dcp_pr_prometheus(m, &p);
	dcp_pr_prometheus(m, &p); /* everything again: nothing new */
	CHECK_INT(dcp_prom_write(m, &b), 0);
	dcp_prom_free(m);
	str(&b);
	CHECK(strstr(b.data, "# HELP dcprobe_paths ") != NULL);
	CHECK(strstr(strstr(b.data, "# HELP dcprobe_paths ") + 1, "# HELP dcprobe_paths ") == NULL);
	CHECK(strstr(b.data, "# TYPE dcprobe_paths gauge\n") != NULL);
	CHECK(strstr(b.data, "dcprobe_paths{command=\"dcache-probe\",root=\"/a\\\"b\",state=\"miss\"} 3\n") != NULL);
	CHECK(strstr(b.data, "state=\"miss\"} 99\n") == NULL);
	CHECK(strstr(b.data, "dcprobe_paths{command=\"dcache-probe\",root=\"/n\\nl\\\\\\\\\\\\xff\",state=\"miss\"} 3\n") != NULL);
	CHECK(strstr(b.data, "dcprobe_cached_ratio{command=\"dcache-probe\",root=\"/a\\\"b\"} 0.75\n") != NULL);
	CHECK(strstr(b.data, "dcprobe_exit_status{command=\"dcache-probe\"} 1\n") != NULL);
	CHECK(strstr(strstr(b.data, "dcprobe_exit_status{") + 1, "dcprobe_exit_status{") == NULL);
	CHECK(strstr(b.data, "# TYPE dcprobe_build_info gauge\n"
			     "dcprobe_build_info{command=\"dcache-probe\",version=\"" DCP_VERSION "\"} 1\n") != NULL);
	CHECK(strstr(strstr(b.data, "dcprobe_build_info{") + 1, "dcprobe_build_info{") == NULL);
	CHECK(strstr(b.data, "dcprobe_mount_paths") == NULL);
	dcp_buf_reset(&b);
	p.nroots = 0;
	m = dcp_prom_new("warm");
	dcp_pr_prometheus(m, &p);
	dcp_prom_write(m, &b);
	dcp_prom_free(m);
	CHECK(strstr(str(&b), "dcprobe_paths{command=\"warm\",state=\"cached\"} 8\n") != NULL);
	dcp_buf_reset(&b);

	/* Run labels (--label): on every series, after command, escaped. */
	m = dcp_prom_new("warm");
	CHECK_INT(dcp_prom_add_label(m, "job", "a\"b\n"), 0);
	CHECK_INT(dcp_prom_add_label(m, "site", "x"), 0);
	dcp_pr_prometheus(m, &p);
	dcp_prom_write(m, &b);
	dcp_prom_free(m);
	str(&b);
	CHECK(strstr(b.data, "dcprobe_paths{command=\"warm\",job=\"a\\\"b\\n\",site=\"x\",state=\"cached\"} 8\n") != NULL);
	CHECK(strstr(b.data, "dcprobe_exit_status{command=\"warm\",job=\"a\\\"b\\n\",site=\"x\"} 1\n") != NULL);
	CHECK(strstr(b.data, "dcprobe_build_info{command=\"warm\",job=\"a\\\"b\\n\",site=\"x\",version=\"" DCP_VERSION
			     "\"} 1\n") != NULL);
	for (const char *l = b.data; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		CHECK(*l == '#' || strncmp(strchr(l, '{'), "{command=\"warm\",job=", 19) == 0);
	dcp_buf_reset(&b);
	CHECK_INT(dcp_prom_label_name_ok("job"), 0);
	CHECK_INT(dcp_prom_label_name_ok("_x9"), 0);
	CHECK_INT(dcp_prom_label_name_ok(""), -EINVAL);
	CHECK_INT(dcp_prom_label_name_ok("9x"), -EINVAL);
	CHECK_INT(dcp_prom_label_name_ok("a-b"), -EINVAL);
	CHECK_INT(dcp_prom_label_name_ok("a.b"), -EINVAL);
	CHECK_INT(dcp_prom_label_name_ok("__name__"), -EPERM);
	CHECK_INT(dcp_prom_label_name_ok("command"), -EEXIST);
	CHECK_INT(dcp_prom_label_name_ok("root"), -EEXIST);
	CHECK_INT(dcp_prom_label_name_ok("mountpoint"), -EEXIST);
	CHECK_INT(dcp_prom_label_name_ok("version"), -EEXIST); /* dcprobe_build_info's */
	CHECK_INT(dcp_prom_label_name_ok("tree"), 0);

	/* Per-device tables: get adds, merge sums. */
	struct dcp_mount_table t1 = { 0 }, t2 = { 0 };
	for (int i = 0; i < 20; i++)
		dcp_mount_table_get(&t1, makedev(8, i % 10))->n[DCP_CACHED]++;
	dcp_mount_table_get(&t2, makedev(8, 3))->n[DCP_MISS] += 5;
	dcp_mount_table_get(&t2, makedev(0, 50))->n[DCP_MISS]++;
	CHECK_INT(t1.n, 10);
	CHECK_INT(dcp_mount_table_merge(&t1, &t2), 0);
	CHECK_INT(t1.n, 11);
	CHECK_INT(dcp_mount_table_get(&t1, makedev(8, 3))->n[DCP_CACHED], 2);
	CHECK_INT(dcp_mount_table_get(&t1, makedev(8, 3))->n[DCP_MISS], 5);
	dcp_mount_table_free(&t1);
	dcp_mount_table_free(&t2);
	CHECK_INT(t1.n, 0);

	/* Progress: quoted, cut at the front to fit the width. */
	dcp_pr_progress(&b, 12, 3456.4, "/usr/l\nib", 80);
	CHECK_STR(str(&b), "\r\033[K12 paths, 3456/s: /usr/l\\nib");
	dcp_buf_reset(&b);
	dcp_pr_progress(&b, 1, 2, "/aaaa/bbbb/cccc/dddd/eeee", 30);
	CHECK_STR(str(&b), "\r\033[K1 path, 2/s: ...ccc/dddd/eeee");
	CHECK_INT(b.len - 4, 29);
	dcp_buf_free(&b);
	return CHECK_DONE();
}
