/*
 * Unit tests for the terminal safety of every output escaping in
 * lib/report.c: JSON strings and Prometheus labels must not carry C1
 * controls, bidi overrides or other controls raw (JSON Lines and .prom
 * files end up on terminals too), and JSON must still decode to the name.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dcprobe.h"

static const char *json(const char *s, size_t n)
{
	static struct dcp_buf b = DCP_BUF_INIT;

	dcp_buf_reset(&b);
	dcp_buf_json_str(&b, s, n);
	dcp_buf_putc(&b, 0);
	return b.data;
}

static const char *label(const char *s, size_t n)
{
	static struct dcp_buf b = DCP_BUF_INIT;

	dcp_buf_reset(&b);
	dcp_buf_prom_label(&b, s, n);
	dcp_buf_putc(&b, 0);
	return b.data;
}

#define J(lit) json(lit, sizeof(lit) - 1)
#define L(lit) label(lit, sizeof(lit) - 1)

int main(void)
{
	/* JSON: C1 CSI, bidi override and isolate, LRM, line separators. */
	CHECK_STR(J("csi\xc2\x9b" "31m"), "\"csi\\u009b31m\"");
	CHECK_STR(J("rlo\xe2\x80\xae" "txt"), "\"rlo\\u202etxt\"");
	CHECK_STR(J("iso\xe2\x81\xa6"), "\"iso\\u2066\"");
	CHECK_STR(J("lrm\xe2\x80\x8e"), "\"lrm\\u200e\"");
	CHECK_STR(J("ls\xe2\x80\xa8ps\xe2\x80\xa9"), "\"ls\\u2028ps\\u2029\"");
	CHECK_STR(J("\x1b]0;t\x07"), "\"\\u001b]0;t\\u0007\"");
	CHECK_STR(J("nul\0x"), "\"nul\\u0000x\"");
	/* Printable non-ASCII stays as it is. */
	CHECK_STR(J("caf\xc3\xa9 \xf0\x9f\x92\xa5"), "\"caf\xc3\xa9 \xf0\x9f\x92\xa5\"");
	CHECK_STR(J("\xc2\xa0nbsp"), "\"\xc2\xa0nbsp\"");

	/* Prometheus labels: the same code points become visible text. */
	CHECK_STR(L("a\x1b[31m"), "a\\\\x1b[31m");
	CHECK_STR(L("t\tr\r"), "t\\\\x09r\\\\x0d");
	CHECK_STR(L("csi\xc2\x9b"), "csi\\\\u009b");
	CHECK_STR(L("csi\x9b"), "csi\\\\x9b"); /* the raw byte: not the same text */
	CHECK_STR(L("rlo\xe2\x80\xae"), "rlo\\\\u202e");
	CHECK_STR(L("caf\xc3\xa9"), "caf\xc3\xa9");
	CHECK_STR(L("n\nq\"b\\"), "n\\nq\\\"b\\\\\\\\");
	/* Injective: a real ESC and the four characters \x1b differ. */
	CHECK_STR(L("\\x1b"), "\\\\\\\\x1b");
	{
		char *esc = strdup(L("\x1b"));

		CHECK(esc && strcmp(esc, L("\\x1b")) != 0);
		free(esc);
	}
	return CHECK_DONE();
}
