/* Unit tests for lib/report.c: quoting, JSON strings, base64, labels. */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dcprobe.h"

/*
 * Two callers with their own units, at once: each says its units once
 * (a server's configuration) and writes 200,000 counts.  With units set
 * for the whole process (dcp_set_byte_units(), before) the one that said
 * its units first got the other's every time.
 */
struct units_job {
	enum dcp_units u;
	const char *want;
	pthread_barrier_t *bar;
	int wrong;
};

static void *units_thread(void *arg)
{
	struct units_job *j = arg;
	struct dcp_buf b = DCP_BUF_INIT;

	pthread_barrier_wait(j->bar);
	for (int k = 0; k < 200000; k++) {
		dcp_buf_reset(&b);
		dcp_buf_bytes(&b, 1536, j->u);
		dcp_buf_putc(&b, 0);
		if (b.oom || strcmp(b.data, j->want) != 0)
			j->wrong++;
	}
	dcp_buf_free(&b);
	return NULL;
}

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

/*
 * The inverse of dcp_buf_quote(), as dcprobe(7) states it: \\ \n \t \r \e,
 * \xHH one byte, \uXXXX one character (its UTF-8 bytes), the rest as is.
 * Quoting is injective when decoding every quoted form gives the name back.
 * Returns the decoded length, or -1 for text that is no quoted form.
 */
/* The DIGITS hex digits at S (N bytes left) in *V; -1 when there are fewer. */
static int hex(const char *s, size_t n, int digits, unsigned *v)
{
	*v = 0;
	if (n < (size_t)digits)
		return -1;
	for (int k = 0; k < digits; k++) {
		const char *d = strchr("0123456789abcdef", s[k]);

		if (!s[k] || !d)
			return -1;
		*v = *v << 4 | (unsigned)(d - "0123456789abcdef");
	}
	return 0;
}

static long unquote(const char *q, size_t n, unsigned char *out)
{
	long o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (q[i] != '\\') {
			out[o++] = (unsigned char)q[i];
			continue;
		}
		if (++i == n)
			return -1;
		switch (q[i]) {
		case '\\': out[o++] = '\\'; break;
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'e': out[o++] = 0x1b; break;
		case 'x':
			if (hex(q + i + 1, n - i - 1, 2, &v) < 0)
				return -1;
			i += 2;
			out[o++] = (unsigned char)v;
			break;
		case 'u':
			if (hex(q + i + 1, n - i - 1, 4, &v) < 0)
				return -1;
			i += 4;
			if (v < 0x80) {
				out[o++] = (unsigned char)v;
			} else if (v < 0x800) {
				out[o++] = (unsigned char)(0xc0 | v >> 6);
				out[o++] = (unsigned char)(0x80 | (v & 0x3f));
			} else {
				out[o++] = (unsigned char)(0xe0 | v >> 12);
				out[o++] = (unsigned char)(0x80 | ((v >> 6) & 0x3f));
				out[o++] = (unsigned char)(0x80 | (v & 0x3f));
			}
			break;
		default:
			return -1;
		}
	}
	return o;
}

/* Every name of LEN bytes whose first byte is one of FIRST quotes to a form
 * that decodes back to it (LEN 1 to 3; the other bytes take every value). */
static int quote_round_trips(size_t len, const unsigned char *first, size_t nfirst)
{
	struct dcp_buf b = DCP_BUF_INIT;
	unsigned char name[3], back[64];
	int bad = 0;

	for (size_t f = 0; f < nfirst; f++) {
		for (uint32_t rest = 0; rest < (1u << (8 * (len - 1))); rest++) {
			name[0] = first[f];
			for (size_t k = 1; k < len; k++)
				name[k] = (unsigned char)(rest >> (8 * (k - 1)));
			dcp_buf_reset(&b);
			dcp_buf_quote(&b, (const char *)name, len);
			if (b.oom || unquote(b.data, b.len, back) != (long)len ||
			    memcmp(back, name, len) != 0) {
				if (bad++ < 5)
					fprintf(stderr, "quote of %02x %02x %02x does not decode back\n",
						name[0], len > 1 ? name[1] : 0, len > 2 ? name[2] : 0);
			}
		}
	}
	dcp_buf_free(&b);
	return bad;
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
	CHECK_STR(Q("csi\xc2\x9b"), "csi\\u009b");		  /* C1 CSI: a character */
	CHECK_STR(Q("csi\x9b"), "csi\\x9b");			  /* a raw byte */
	CHECK_STR(Q("nel\xc2\x85\x85"), "nel\\u0085\\x85");
	CHECK_STR(Q("\xc2\x9f\xc2\xa0"), "\\u009f\xc2\xa0");	  /* C1's last; NBSP as is */
	CHECK_STR(Q("rlo\xe2\x80\xae"), "rlo\\u202e");		  /* bidi override */
	CHECK_STR(Q("over\xc0\xaf"), "over\\xc0\\xaf");		  /* overlong '/' */
	CHECK_STR(Q("sur\xed\xa0\x80"), "sur\\xed\\xa0\\x80");	  /* surrogate */
	CHECK_STR(Q("cut\xe2\x82"), "cut\\xe2\\x82");		  /* truncated */
	CHECK_STR(Q("nul\0x"), "nul\\x00x");
	/* Injective: every name of 1 or 2 bytes, and of 3 bytes starting with
	 * a byte that opens a sequence (or none), decodes back. */
	{
		unsigned char all[256], lead[] = { 'a', '\\', 0x1b, 0x7f, 0x85, 0x9b, 0xc2,
						   0xc3, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xff };

		for (int i = 0; i < 256; i++)
			all[i] = (unsigned char)i;
		CHECK_INT(quote_round_trips(1, all, 256), 0);
		CHECK_INT(quote_round_trips(2, all, 256), 0);
		CHECK_INT(quote_round_trips(3, lead, sizeof(lead)), 0);
	}
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
	CHECK(strcmp(label("\x9b"), "\\\\x9b") == 0);
	CHECK_STR(label("\xc2\x9b"), "\\\\u009b"); /* not the raw byte's \\x9b */

	/* UTF-8 validation */
	CHECK(dcp_utf8_valid("\xf0\x9f\x98\x80", 4));
	CHECK(!dcp_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
	CHECK(!dcp_utf8_valid("\xe0\x80\xaf", 3));     /* overlong */

	/* names in messages: always between quotes, a quote inside escaped */
	dcp_buf_reset(&b);
	dcp_buf_quote_msg(&b, "it's a\nb", 8);
	CHECK(b.len == 12 && memcmp(b.data, "'it\\'s a\\nb'", 12) == 0);
	dcp_buf_reset(&b);
	{
		struct dcp_buf q = DCP_BUF_INIT;

		CHECK(strcmp(dcp_quoted(&q, "/srv/a b"), "'/srv/a b'") == 0);
		dcp_buf_free(&q);
	}

	/* rows in a fixed order: by root, then path (pre or post), then rank */
	{
		static const char *const paths[] = { "t/b", "t", "t/a/x", "t/a", "t/a-b", "t/ab" };
		struct dcp_rows r = { 0 };
		struct dcp_buf o = DCP_BUF_INIT;

		for (size_t i = 0; i < 6; i++) {
			char rec[16];
			int n = snprintf(rec, sizeof(rec), "%s;", paths[i]);

			dcp_rows_add(&r, 0, paths[i], strlen(paths[i]), 0, rec, (size_t)n);
		}
		dcp_rows_add(&r, 1, "a", 1, 1, "A2;", 3); /* a later root, later */
		dcp_rows_add(&r, 1, "a", 1, 0, "A1;", 3); /* the lower rank first */
		dcp_rows_write(&r, DCP_ROWS_PREORDER, &o);
		CHECK(o.len == 33 && memcmp(o.data, "t;t/a;t/a/x;t/a-b;t/ab;t/b;A1;A2;", 33) == 0);
		CHECK(r.n == 0);
		dcp_buf_reset(&o);
		for (size_t i = 0; i < 6; i++)
			dcp_rows_add(&r, 0, paths[i], strlen(paths[i]), 0, paths[i], strlen(paths[i]));
		dcp_rows_write(&r, DCP_ROWS_POSTORDER, &o); /* du's order */
		CHECK(o.len == 21 && memcmp(o.data, "t/a/xt/at/a-bt/abt/bt", 21) == 0);
		CHECK(dcp_path_cmp("/", 1, "/usr", 4, DCP_ROWS_PREORDER) < 0);
		CHECK(dcp_path_cmp("/", 1, "/usr", 4, DCP_ROWS_POSTORDER) > 0);
		dcp_rows_free(&r);
		dcp_buf_free(&o);
	}

	/* byte counts: digits, or rounded up as du -h / du --si */
	{
		static const struct {
			enum dcp_units u;
			uint64_t n;
			const char *want;
		} t[] = {
			{ DCP_UNITS_BYTES, 1610612736, "1610612736" },
			{ DCP_UNITS_IEC, 0, "0" },
			{ DCP_UNITS_IEC, 1023, "1023" },
			{ DCP_UNITS_IEC, 1024, "1.0K" },
			{ DCP_UNITS_IEC, 1025, "1.1K" },
			{ DCP_UNITS_IEC, 1536, "1.5K" },
			{ DCP_UNITS_IEC, 10239, "10K" },
			{ DCP_UNITS_IEC, 10241, "11K" },
			{ DCP_UNITS_IEC, 1048575, "1.0M" },
			{ DCP_UNITS_IEC, 1610612736, "1.5G" },
			{ DCP_UNITS_SI, 999, "999" },
			{ DCP_UNITS_SI, 1000, "1.0k" },
			{ DCP_UNITS_SI, 1610612736, "1.7G" },
			{ DCP_UNITS_IEC, UINT64_MAX, "16E" },
		};

		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			dcp_buf_reset(&b);
			dcp_buf_bytes(&b, t[i].n, t[i].u);
			dcp_buf_putc(&b, 0);
			if (strcmp(b.data, t[i].want) != 0)
				fprintf(stderr, "bytes %llu: %s, want %s\n",
					(unsigned long long)t[i].n, b.data, t[i].want);
			CHECK(strcmp(b.data, t[i].want) == 0);
		}
		dcp_buf_reset(&b);
	}
	{
		pthread_barrier_t bar;
		struct units_job j[2] = { { DCP_UNITS_IEC, "1.5K", &bar, 0 },
					  { DCP_UNITS_SI, "1.6k", &bar, 0 } };
		pthread_t t[2];

		pthread_barrier_init(&bar, NULL, 2);
		for (int i = 0; i < 2; i++)
			CHECK_INT(pthread_create(&t[i], NULL, units_thread, &j[i]), 0);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&bar);
		CHECK_INT(j[0].wrong, 0);
		CHECK_INT(j[1].wrong, 0);
	}

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
