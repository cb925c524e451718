// SPDX-License-Identifier: MIT
/*
 * diagnose.c - dcache-probe --diagnose: the kernel mechanisms libdcprobe
 * asks for (dcp_kfeat.h), rendered as text lines or JSON records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcp_cmd.h"
#include "dcp_diagnose.h"

/*
 * What dcp_fsid_of() takes the root filesystem's UUID from ("none" when it
 * has none); NULL and *ERR when it cannot say.
 */
static const char *root_uuid_from(int *err)
{
	struct dcp_fsid id;
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;

	*err = 0;
	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	ret = dcp_fsid_of(fd, &id);
	close(fd);
	if (ret < 0 && ret != -ENODATA) {
		*err = -ret;
		return NULL;
	}
	return dcp_fsid_from_name(id.from);
}

static void json_str_or_null(struct dcp_buf *b, const char *s)
{
	if (s)
		dcp_buf_json_str(b, s, strlen(s));
	else
		dcp_buf_puts(b, "null");
}

static void record_json(struct dcp_buf *b, enum dcp_kfeat f, int ret,
			const struct dcp_kfeat_result *r, const char *uuid_from, int uuid_err)
{
	const char *since, *call = dcp_kfeat_call(f, &since);
	int err = ret < 0 ? -ret : r->err;

	dcp_buf_printf(b, "{\"type\":\"mechanism\",\"name\":\"%s\",\"call\":", dcp_kfeat_name(f));
	dcp_buf_json_str(b, call, strlen(call));
	dcp_buf_printf(b, ",\"since\":\"%s\",\"state\":\"%s\",\"errno\":", since,
		       ret < 0 ? "unknown" : dcp_kfeat_state_name(r->state));
	json_str_or_null(b, err ? dcp_errno_name(err) : NULL);
	dcp_buf_puts(b, ",\"why\":");
	json_str_or_null(b, ret < 0 ? strerror(-ret) : r->why);
	dcp_buf_printf(b, ",\"required\":%s,\"without\":",
		       dcp_kfeat_required(f) ? "true" : "false");
	json_str_or_null(b, dcp_kfeat_without(f));
	if (f == DCP_KFEAT_FSUUID) {
		dcp_buf_puts(b, ",\"root_uuid_from\":");
		json_str_or_null(b, uuid_from);
		dcp_buf_puts(b, ",\"root_uuid_errno\":");
		json_str_or_null(b, uuid_err ? dcp_errno_name(uuid_err) : NULL);
	}
	dcp_buf_puts(b, "}\n");
}

/* NAME STATE CLAUSE: what its absence changes, and why it is absent. */
static void record_text(struct dcp_buf *b, enum dcp_kfeat f, int ret,
			const struct dcp_kfeat_result *r, const char *uuid_from, int uuid_err)
{
	const char *state = ret < 0 ? "unknown" : dcp_kfeat_state_name(r->state);
	int err = ret < 0 ? -ret : r->err;

	dcp_buf_printf(b, "%-20s %-7s %s%s", dcp_kfeat_name(f), state,
		       ret == 0 && r->state == DCP_KFEAT_PRESENT ? "without it, " : "",
		       dcp_kfeat_without(f));
	if (ret < 0)
		dcp_buf_printf(b, " (not asked: %s)", strerror(-ret));
	else if (err || r->why)
		dcp_buf_printf(b, " (%s%s%s)", err ? dcp_errno_name(err) : "",
			       err && r->why ? ": " : "", r->why ? r->why : "");
	if (f == DCP_KFEAT_FSUUID && uuid_from)
		dcp_buf_printf(b, "; /: UUID from %s", uuid_from);
	else if (f == DCP_KFEAT_FSUUID)
		dcp_buf_printf(b, "; /: UUID unknown (%s)", dcp_errno_name(uuid_err));
	dcp_buf_puts(b, "\n");
}

int dcp_diagnose_run(const struct dcp_opts *o)
{
	struct dcp_buf out = DCP_BUF_INIT;
	unsigned long long n[4] = { 0 }; /* present, absent, blocked, unknown */
	int status = DCP_EXIT_OK, cannot = 0, wret;

	for (int f = 0; f < DCP_KFEAT_NFEATS; f++) {
		struct dcp_kfeat_result r = { DCP_KFEAT_ABSENT, 0, NULL };
		int ret = dcp_kfeat_probe((enum dcp_kfeat)f, &r);
		int uuid_err = 0;
		const char *uuid_from = f == DCP_KFEAT_FSUUID ? root_uuid_from(&uuid_err) : NULL;

		n[ret < 0 ? 3 : r.state]++;
		if (ret < 0 && status == DCP_EXIT_OK)
			status = DCP_EXIT_ERROR;
		if (dcp_kfeat_required((enum dcp_kfeat)f) && (ret < 0 || r.state != DCP_KFEAT_PRESENT))
			cannot = ret < 0 ? ret : -r.err;
		if (o->quiet)
			continue;
		if (o->json)
			record_json(&out, (enum dcp_kfeat)f, ret, &r, uuid_from, uuid_err);
		else
			record_text(&out, (enum dcp_kfeat)f, ret, &r, uuid_from, uuid_err);
	}
	if (cannot)
		status = DCP_EXIT_UNSUPPORTED;
	if (o->json)
		dcp_buf_printf(&out, "{\"type\":\"summary\",\"present\":%llu,\"absent\":%llu,"
			       "\"blocked\":%llu,\"unknown\":%llu,\"can_probe\":%s,\"status\":%d}\n",
			       n[0], n[1], n[2], n[3], cannot ? "false" : "true", status);
	wret = dcp_output_write(&out);
	if (wret < 0 || out.oom) {
		dcp_warn(wret < 0 ? -wret : ENOMEM, "write error");
		status = DCP_EXIT_ERROR;
	}
	dcp_buf_free(&out);
	if (cannot && !o->quiet)
		dcp_warn(0, "%s", dcp_unsupported_reason(cannot));
	if (close(STDOUT_FILENO) < 0 && errno != EBADF) {
		dcp_warn(errno, "write error");
		status = DCP_EXIT_ERROR;
	}
	return dcp_opts_finish(o, status);
}
