/* Unit tests for lib/explain.c: reason names and the output forms. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "dcprobe.h"

static const char *str(struct dcp_buf *b)
{
	dcp_buf_putc(b, 0);
	b->len--;
	return b->data;
}

int main(void)
{
	struct dcp_buf b = DCP_BUF_INIT;
	const char *path = "/srv/a/b/c";
	struct dcp_why_info r = { .why = DCP_WHY_NOT_CACHED, .first_miss = path, .len = 8 };
	struct dcp_why_info l = {
		.why = DCP_WHY_SYMLINK, .first_miss = "/srv/real/dir", .len = 13,
		.link = "/srv/l1", .linklen = 7, .link_why = DCP_WHY_MOUNT_POINT,
	};
	struct dcp_why_info u = { .why = DCP_WHY_UNKNOWN };
	unsigned long long n[DCP_NWHY] = { 0 };

	/* Every reason has a distinct name that parses back. */
	for (int i = 0; i < DCP_NWHY; i++) {
		CHECK(dcp_why_name(i) != NULL);
		CHECK_INT(dcp_why_parse(dcp_why_name(i)), i);
	}
	CHECK(dcp_why_name(DCP_NWHY) == NULL);
	CHECK_INT(dcp_why_parse("cold"), -EINVAL);
	CHECK_STR(dcp_why_name(DCP_WHY_INSIDE_MISS), "inside-miss");
	CHECK_STR(dcp_why_name(DCP_WHY_NO_NEGATIVE), "no-negative");

	/* Text and JSON inserted into records. */
	dcp_buf_puts(&b, "miss /srv/a/b/c\n");
	dcp_explain_insert(&b, false, &r);
	CHECK_STR(str(&b), "miss /srv/a/b/c  (first miss: /srv/a/b: not-cached)\n");
	dcp_buf_reset(&b);
	dcp_buf_puts(&b, "{\"type\":\"entry\"}\n");
	dcp_explain_insert(&b, true, &l);
	CHECK_STR(str(&b), "{\"type\":\"entry\",\"first_miss\":\"/srv/real/dir\",\"reason\":\"symlink\","
			   "\"link\":\"/srv/l1\",\"link_reason\":\"mount-point\"}\n");
	dcp_buf_reset(&b);
	dcp_buf_add(&b, "/srv/a\0", 7); /* a NUL record: left alone */
	dcp_explain_insert(&b, false, &r);
	CHECK_INT(b.len, 7);
	dcp_explain_insert(&b, true, &r);
	CHECK_INT(b.len, 7);
	/* The format is the caller's: a text record ending in '}' stays text. */
	dcp_buf_reset(&b);
	dcp_buf_puts(&b, "miss nothere}\n");
	dcp_explain_insert(&b, false, &(struct dcp_why_info){ .why = DCP_WHY_NOT_CACHED,
							      .first_miss = "nothere}", .len = 8 });
	CHECK_STR(str(&b), "miss nothere}  (first miss: nothere}: not-cached)\n");
	dcp_buf_reset(&b);
	dcp_buf_puts(&b, "miss {\"a\":1}\n");
	dcp_explain_insert(&b, false, &r);
	CHECK_STR(str(&b), "miss {\"a\":1}  (first miss: /srv/a/b: not-cached)\n");
	dcp_buf_reset(&b);
	dcp_explain_text(&b, &u);
	CHECK_STR(str(&b), "(first miss: unknown)");
	dcp_buf_reset(&b);
	dcp_explain_json(&b, &u);
	CHECK_STR(str(&b), ",\"first_miss\":null,\"reason\":\"unknown\"");
	dcp_buf_reset(&b);
	dcp_explain_text(&b, &(struct dcp_why_info){ .why = DCP_WHY_PSEUDO, .first_miss = "/x\ny",
						       .len = 4 });
	CHECK_STR(str(&b), "(first miss: /x\\ny: pseudo)");

	/* Counts. */
	dcp_buf_reset(&b);
	dcp_why_counts_text(&b, n);
	CHECK_STR(str(&b), "misses by reason: none\n");
	n[DCP_WHY_NOT_CACHED] = 20;
	n[DCP_WHY_REVALIDATING] = 80;
	dcp_buf_reset(&b);
	dcp_why_counts_text(&b, n);
	CHECK_STR(str(&b), "misses by reason: 20 not-cached, 80 revalidating\n");
	dcp_buf_reset(&b);
	dcp_buf_puts(&b, " 50.0%\t1/2\tnfs4*\t/mnt/nfs\n");
	dcp_why_table_row(&b, 0, false, n);
	CHECK_STR(str(&b), " 50.0%\t1/2\tnfs4*\tnot-cached:20,revalidating:80\t/mnt/nfs\n");
	dcp_buf_reset(&b);
	dcp_buf_puts(&b, "{\"type\":\"mount\"}\n");
	dcp_why_table_row(&b, 0, true, n);
	CHECK(strstr(str(&b), "\"reasons\":{\"not-cached\":20,\"mount-point\":0,") != NULL);
	CHECK(strstr(str(&b), "\"unknown\":0}}\n") != NULL);
	dcp_buf_free(&b);
	return CHECK_DONE();
}
