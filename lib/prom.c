// SPDX-License-Identifier: MIT
/*
 * prom.c - the Prometheus exposition writer shared by the commands: families
 * written once each, series written once each (dcp_prom.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcp_prom.h"

struct family {
	const char *name;
	const char *help;
	struct dcp_buf body; /* its samples */
};

struct dcp_prom {
	char *command;
	char **labels;	    /* the run's labels: name, value, name, value... */
	size_t nlabels;	    /* names */
	struct family *fam;
	size_t nfam, capfam;
	struct family *cur; /* family of the sample being built */
	struct dcp_buf key; /* the sample being built: name{labels} */
	bool open;	    /* key holds a '{' not yet closed */
	/* series written so far: an open-addressing set of keys */
	char **set;
	size_t nset, capset;
	bool oom;
};

struct dcp_prom *dcp_prom_new(const char *command)
{
	struct dcp_prom *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->command = strdup(command);
	if (!p->command) {
		free(p);
		return NULL;
	}
	return p;
}

void dcp_prom_free(struct dcp_prom *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nfam; i++)
		dcp_buf_free(&p->fam[i].body);
	for (size_t i = 0; i < p->capset; i++)
		free(p->set[i]);
	free(p->set);
	free(p->fam);
	dcp_buf_free(&p->key);
	for (size_t i = 0; i < 2 * p->nlabels; i++)
		free(p->labels[i]);
	free(p->labels);
	free(p->command);
	free(p);
}

/* Every label name a series of the suite carries: a run label may not be one. */
static const char *const own_labels[] = {
	"command", "root", "state", "fstype", "mount_id", "mountpoint", "path", "kind", "version",
};

int dcp_prom_label_name_ok(const char *name)
{
	if (!(*name == '_' || (*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z')))
		return -EINVAL;
	for (const char *c = name + 1; *c; c++)
		if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9')))
			return -EINVAL;
	if (name[0] == '_' && name[1] == '_')
		return -EPERM;
	for (size_t i = 0; i < sizeof(own_labels) / sizeof(own_labels[0]); i++)
		if (!strcmp(name, own_labels[i]))
			return -EEXIST;
	return 0;
}

int dcp_prom_add_label(struct dcp_prom *p, const char *name, const char *value)
{
	char **v = realloc(p->labels, 2 * (p->nlabels + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	p->labels = v;
	v[2 * p->nlabels] = strdup(name);
	v[2 * p->nlabels + 1] = strdup(value);
	if (!v[2 * p->nlabels] || !v[2 * p->nlabels + 1]) {
		free(v[2 * p->nlabels]);
		free(v[2 * p->nlabels + 1]);
		return -ENOMEM;
	}
	p->nlabels++;
	return 0;
}

static struct family *family(struct dcp_prom *p, const char *name, const char *help)
{
	if (p->cur && !strcmp(p->cur->name, name))
		return p->cur;
	for (size_t i = 0; i < p->nfam; i++)
		if (!strcmp(p->fam[i].name, name))
			return &p->fam[i];
	if (p->nfam == p->capfam) {
		size_t cap = p->capfam ? 2 * p->capfam : 16;
		struct family *v = realloc(p->fam, cap * sizeof(*v));

		if (!v)
			return NULL;
		p->fam = v;
		p->capfam = cap;
	}
	p->fam[p->nfam] = (struct family){ name, help, DCP_BUF_INIT };
	return &p->fam[p->nfam++];
}

void dcp_prom_start(struct dcp_prom *p, const char *name, const char *help)
{
	p->cur = family(p, name, help);
	if (!p->cur)
		p->oom = true;
	dcp_buf_reset(&p->key);
	dcp_buf_puts(&p->key, name);
	p->open = false;
	dcp_prom_labelz(p, "command", p->command);
	for (size_t i = 0; i < p->nlabels; i++)
		dcp_prom_labelz(p, p->labels[2 * i], p->labels[2 * i + 1]);
}

void dcp_prom_label(struct dcp_prom *p, const char *name, const char *v, size_t n)
{
	dcp_buf_putc(&p->key, p->open ? ',' : '{');
	p->open = true;
	dcp_buf_puts(&p->key, name);
	dcp_buf_puts(&p->key, "=\"");
	dcp_buf_prom_label(&p->key, v, n);
	dcp_buf_putc(&p->key, '"');
}

void dcp_prom_labelz(struct dcp_prom *p, const char *name, const char *v)
{
	dcp_prom_label(p, name, v, strlen(v));
}

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

/* Slot of KEY (N bytes) in SET of CAP (a power of two): its own, or an empty one. */
static size_t slot(char **set, size_t cap, const char *key, size_t n)
{
	size_t i = hash(key, n) & (cap - 1);

	while (set[i] && (strlen(set[i]) != n || memcmp(set[i], key, n)))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Add KEY to the set of series written: false when it was there already. */
static bool first_time(struct dcp_prom *p, const char *key, size_t n)
{
	size_t i;

	if (2 * (p->nset + 1) > p->capset) {
		size_t cap = p->capset ? 2 * p->capset : 256;
		char **v = calloc(cap, sizeof(*v));

		if (!v) {
			p->oom = true;
			return true; /* written, unchecked: better than lost */
		}
		for (size_t k = 0; k < p->capset; k++)
			if (p->set[k])
				v[slot(v, cap, p->set[k], strlen(p->set[k]))] = p->set[k];
		free(p->set);
		p->set = v;
		p->capset = cap;
	}
	i = slot(p->set, p->capset, key, n);
	if (p->set[i])
		return false;
	p->set[i] = strndup(key, n);
	if (!p->set[i])
		p->oom = true;
	else
		p->nset++;
	return true;
}

void dcp_prom_value(struct dcp_prom *p, double v, int decimals)
{
	if (p->open)
		dcp_buf_putc(&p->key, '}');
	p->open = false;
	if (p->key.oom || !p->cur) {
		p->oom = true;
		return;
	}
	if (!first_time(p, p->key.data, p->key.len))
		return;
	dcp_buf_add(&p->cur->body, p->key.data, p->key.len);
	dcp_buf_putc(&p->cur->body, ' ');
	if (decimals < 0)
		dcp_buf_printf(&p->cur->body, "%.6g\n", v);
	else
		dcp_buf_printf(&p->cur->body, "%.*f\n", decimals, v);
}

void dcp_prom_u64(struct dcp_prom *p, uint64_t v)
{
	/* Exact up to 2^53, which no count here reaches. */
	dcp_prom_value(p, (double)v, 0);
}

void dcp_prom_run(struct dcp_prom *p, double duration_s, int status)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	dcp_prom_start(p, "dcprobe_duration_seconds", "Wall time of the run.");
	dcp_prom_value(p, duration_s, 6);
	dcp_prom_start(p, "dcprobe_exit_status",
		       "Exit status of the run (0 all cached or done, 1 cold, 2 error, "
		       "3 cannot probe here, 64 usage error).");
	dcp_prom_value(p, status, 0);
	dcp_prom_start(p, "dcprobe_last_run_timestamp_seconds", "Unix time at the end of the run.");
	dcp_prom_value(p, (double)now.tv_sec + (double)now.tv_nsec / 1e9, 3);
	dcp_prom_start(p, "dcprobe_build_info",
		       "The dcprobe release that wrote these metrics, in the label version (always 1).");
	dcp_prom_labelz(p, "version", DCP_VERSION);
	dcp_prom_value(p, 1, 0);
}

int dcp_prom_write(const struct dcp_prom *p, struct dcp_buf *out)
{
	bool oom = p->oom;

	for (size_t i = 0; i < p->nfam; i++) {
		const struct family *f = &p->fam[i];

		if (!f->body.len)
			continue;
		dcp_buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", f->name, f->help, f->name);
		dcp_buf_add(out, f->body.data, f->body.len);
		oom |= f->body.oom;
	}
	if (oom)
		out->oom = true;
	return oom ? -ENOMEM : 0;
}
