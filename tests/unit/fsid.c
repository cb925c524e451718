// SPDX-License-Identifier: MIT
/*
 * unit/fsid - a filesystem's UUID and a file's handle as a manifest writes
 * and reads them: the text forms round trip and refuse every malformed
 * spelling; an O_PATH descriptor gives a handle but no UUID (EBADF); the
 * handle of a file is the same from an O_PATH and a reading descriptor,
 * and another file's differs.  (The UUIDs of real ext4, xfs and btrfs
 * images, against blkid, are cmd/identity's.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

static void uuid_text(void)
{
	struct dcp_fsid id = { DCP_FSID_FSUUID, { 0x88, 0x22, 0xe3, 0xf7, 0x33, 0x7c, 0x4f, 0x8b,
						  0x8b, 0x3f, 0xf1, 0x77, 0xb1, 0xcc, 0x19, 0x7c } };
	struct dcp_fsid back = { 0 };
	char buf[DCP_FSID_TEXT];
	static const char *const bad[] = {
		"", "8822e3f7-337c-4f8b-8b3f-f177b1cc197",   /* short */
		"8822e3f7-337c-4f8b-8b3f-f177b1cc197c0",      /* long */
		"8822e3f7337c-4f8b-8b3f-f177b1cc197c-",	      /* dashes elsewhere */
		"8822e3f7-337c-4f8b-8b3f-f177b1cc197g",	      /* not hex */
		"8822e3f7-337c-4f8b-8b3f f177b1cc197c",	      /* a space */
		"8822e3f-7337c-4f8b-8b3f-f177b1cc197c",	      /* a dash in a pair */
	};

	dcp_fsid_text(&id, buf);
	CHECK_STR(buf, "8822e3f7-337c-4f8b-8b3f-f177b1cc197c");
	CHECK_INT(dcp_fsid_parse(buf, strlen(buf), &back), 0);
	CHECK(!memcmp(back.uuid, id.uuid, 16));
	CHECK_INT(dcp_fsid_parse("8822E3F7-337C-4F8B-8B3F-F177B1CC197C", 36, &back), 0);
	CHECK(!memcmp(back.uuid, id.uuid, 16));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (dcp_fsid_parse(bad[i], strlen(bad[i]), &back) != -EINVAL) {
			fprintf(stderr, "uuid \"%s\" was accepted\n", bad[i]);
			check_failures++;
		}
	back.from = DCP_FSID_FSUUID;
	CHECK(dcp_fsid_equal(&id, &back));
	back.uuid[15] ^= 1;
	CHECK(!dcp_fsid_equal(&id, &back));
	/* No UUID is never the same filesystem as another without one. */
	struct dcp_fsid none = { 0 };
	CHECK(!dcp_fsid_equal(&none, &none));
}

static void handle_text(void)
{
	struct dcp_handle h = { 1, 8, { 0x0d, 0, 0, 0, 0x50, 0x9b, 0x6a, 0x4e } }, back;
	char buf[DCP_HANDLE_TEXT];
	static const char *const bad[] = {
		"", ":0d", "1:", "1", "1:0", "1:0d0", "-1:0d", "01:0d", "1:0D", "1:0g", "x:0d",
		"2147483648:0d", "1 :0d", "1:0d ",
	};
	char big[12 + 2 * 129 + 1];

	CHECK_INT(dcp_handle_text(&h, buf), 18);
	CHECK_STR(buf, "1:0d000000509b6a4e");
	CHECK_INT(dcp_handle_parse(buf, strlen(buf), &back), 0);
	CHECK(dcp_handle_equal(&h, &back));
	CHECK_INT(dcp_handle_parse("2147483647:00", 13, &back), 0);
	CHECK_INT(back.type, 2147483647);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (dcp_handle_parse(bad[i], strlen(bad[i]), &back) != -EINVAL) {
			fprintf(stderr, "handle \"%s\" was accepted\n", bad[i]);
			check_failures++;
		}
	/* 128 bytes is the most; 129 is refused. */
	strcpy(big, "77:");
	for (int i = 0; i < 128; i++)
		strcat(big, "ab");
	CHECK_INT(dcp_handle_parse(big, strlen(big), &back), 0);
	CHECK_INT(back.len, 128);
	CHECK_INT(dcp_handle_text(&back, buf), strlen(big));
	CHECK_STR(buf, big);
	strcat(big, "ab");
	CHECK_INT(dcp_handle_parse(big, strlen(big), &back), -EINVAL);
	back = h;
	back.bytes[7] ^= 1;
	CHECK(!dcp_handle_equal(&h, &back));
	back = h;
	back.type = 2;
	CHECK(!dcp_handle_equal(&h, &back));
}

static void descriptors(void)
{
	char dir[] = "/tmp/unit-fsid-XXXXXX", a[64], b[64];
	struct dcp_handle ha, hpath, hb;
	struct dcp_fsid id;
	int fa, pa, fb, ret;

	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	fa = open(a, O_RDWR | O_CREAT | O_EXCL, 0600);
	fb = open(b, O_RDWR | O_CREAT | O_EXCL, 0600);
	pa = open(a, O_PATH);
	CHECK(fa >= 0 && fb >= 0 && pa >= 0);
	/* An O_PATH descriptor takes no ioctl: no UUID from it, said. */
	CHECK_INT(dcp_fsid_of(pa, &id), -EBADF);
	CHECK_INT(id.from, DCP_FSID_NONE);
	ret = dcp_fsid_of(fa, &id);
	CHECK(ret == 0 || ret == -ENODATA);
	CHECK(ret == 0 ? id.from != DCP_FSID_NONE : id.from == DCP_FSID_NONE);
	ret = dcp_handle_of(fa, &ha);
	if (ret == -EOPNOTSUPP) {
		fprintf(stderr, "unit/fsid: %s gives no handles: the handle checks skipped\n", dir);
	} else {
		CHECK_INT(ret, 0);
		CHECK_INT(dcp_handle_of(pa, &hpath), 0);
		CHECK(dcp_handle_equal(&ha, &hpath));
		CHECK_INT(dcp_handle_of(fb, &hb), 0);
		CHECK(!dcp_handle_equal(&ha, &hb));
	}
	CHECK_INT(dcp_handle_of(-1, &hb), -EBADF);
	close(fa);
	close(fb);
	close(pa);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

int main(void)
{
	uuid_text();
	handle_text();
	descriptors();
	return CHECK_DONE();
}
