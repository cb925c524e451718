/* Unit tests for lib/report.c: quoting, JSON strings, base64, labels. */
#include <string.h>

#include "check.h"
#include "dcprobe.h"

static const char *quote(const char *s, size_t n)
{
	static struct dcp_buf b = DCP_BUF_INIT;

	dcp_buf_reset(&b);
	dcp_buf_quote(&b, s, n);
	dcp_buf_putc(&b, 0);
	return b.data;
}

static const char *json(const char *s, size_t n)
{
	static struct dcp_buf b = DCP_BUF_INIT;

	dcp_buf_reset(&b);
	dcp_buf_json_str(&b, s, n);
	dcp_buf_putc(&b, 0);
	return b.data;
}

static const char *b64(const char *s)
{
	static struct dcp_buf b = DCP_BUF_INIT;

	dcp_buf_reset(&b);
	dcp_buf_base64(&b, s, strlen(s));
	dcp_buf_putc(&b, 0);
	return b.data;
}

static const char *label(const char *s)
{
	static struct dcp_buf b = DCP_BUF_INIT;

	dcp_buf_reset(&b);
	dcp_buf_prom_label(&b, s, strlen(s));
	dcp_buf_putc(&b, 0);
	return b.data;
}

#define Q(lit) quote(lit, sizeof(lit) - 1)
#define J(lit) json(lit, sizeof(lit) - 1)

int main(void)
{
	struct dcp_buf b = DCP_BUF_INIT;

	/* terminal quoting */
	CHECK_STR(Q("plain/name.txt"), "plain/name.txt");
	CHECK_STR(Q("caf\xc3\xa9"), "caf\xc3\xa9");
	CHECK_STR(Q("a\nb"), "a\\nb");
	CHECK_STR(Q("t\tx\r"), "t\\tx\\r");
	CHECK_STR(Q("\x1b]0;owned\x07"), "\\e]0;owned\\x07");
	CHECK_STR(Q("back\\slash"), "back\\\\slash");
	CHECK_STR(Q("bad\xff"), "bad\\xff");
	CHECK_STR(Q("del\x7f"), "del\\x7f");
	CHECK_STR(Q("csi\xc2\x9b"), "csi\\x9b");			  /* C1 CSI */
	CHECK_STR(Q("rlo\xe2\x80\xae"), "rlo\\u202e");		  /* bidi override */
	CHECK_STR(Q("over\xc0\xaf"), "over\\xc0\\xaf");		  /* overlong '/' */
	CHECK_STR(Q("sur\xed\xa0\x80"), "sur\\xed\\xa0\\x80");	  /* surrogate */
	CHECK_STR(Q("cut\xe2\x82"), "cut\\xe2\\x82");		  /* truncated */
	CHECK_STR(Q("nul\0x"), "nul\\x00x");
	CHECK(!dcp_needs_quote("ok", 2));
	CHECK(dcp_needs_quote("a\nb", 3));
	CHECK(dcp_needs_quote("\\", 1));

	/* JSON strings and the bytes form */
	CHECK_STR(J("plain"), "\"plain\"");
	CHECK_STR(J("q\"b\\"), "\"q\\\"b\\\\\"");
	CHECK_STR(J("a\nb\x1b"), "\"a\\nb\\u001b\"");
	CHECK_STR(J("\x7f"), "\"\\u007f\"");
	CHECK_STR(J("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
	CHECK_STR(J("bad\xff"), "{\"bytes\":\"YmFk/w==\"}");
	CHECK_STR(J(""), "\"\"");

	/* base64 (RFC 4648 test vectors) */
	CHECK_STR(b64(""), "");
	CHECK_STR(b64("f"), "Zg==");
	CHECK_STR(b64("fo"), "Zm8=");
	CHECK_STR(b64("foo"), "Zm9v");
	CHECK_STR(b64("foob"), "Zm9vYg==");
	CHECK_STR(b64("fooba"), "Zm9vYmE=");
	CHECK_STR(b64("foobar"), "Zm9vYmFy");

	/* Prometheus label values */
	CHECK_STR(label("/usr"), "/usr");
	CHECK_STR(label("a\"b\\c\nd"), "a\\\"b\\\\\\\\c\\nd");
	CHECK_STR(label("x\xff"), "x\\\\xff");

	/* UTF-8 validation */
	CHECK(dcp_utf8_valid("\xf0\x9f\x98\x80", 4));
	CHECK(!dcp_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
	CHECK(!dcp_utf8_valid("\xe0\x80\xaf", 3));     /* overlong */

	/* buffer growth and printf */
	for (int i = 0; i < 10000; i++)
		dcp_buf_printf(&b, "%d,", i);
	CHECK(!b.oom);
	CHECK(b.len > 40000);
	CHECK(memcmp(b.data, "0,1,2,", 6) == 0);
	dcp_buf_free(&b);
	CHECK(b.data == NULL && b.len == 0);
	return CHECK_DONE();
}
