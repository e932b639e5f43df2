/*
 * Loading a config file: the entry points of config/config.h, the
 * messages collected as "file:line:col: key: message" (the load goes on,
 * so a user sees all errors of a file at once, in file order), and
 * freeing.  The reader is yaml.c, the schema engine schema.c, the
 * schemas schema_{daemon,job,runner}.c (config/config_int.h).
 */
#include <glob.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "config/config_int.h"

void
cfg_errors_free(struct cfg_errors *e)
{
	size_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->n; i++)
		free(e->msg[i]);
	free(e->msg);
	e->msg = NULL;
	e->n = 0;
}

static void
errors_push(struct cfg_errors *e, char *s)
{
	e->msg = xreallocarray(e->msg, e->n + 1, sizeof(char *));
	e->msg[e->n++] = s;
}

void
cfg_errors_add(struct cfg_errors *e, const char *fmt, ...)
{
	struct buf b = BUF_INIT(CAP_ERRMSG);
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	errors_push(e, buf_take(&b));
}

__attribute__((format(printf, 5, 0))) static void
vmsg(struct ctx *c, size_t line, size_t col, const char *path, const char *fmt,
    va_list ap)
{
	struct buf b = BUF_INIT(CAP_ERRMSG);
	struct cfg_msg *m;

	if (c->nmsgs >= CFG_ERRORS_MAX) {
		c->dropped++;
		return;
	}
	if (path != NULL && *path != '\0')
		buf_printf(&b, "%s: ", path);
	buf_vprintf(&b, fmt, ap);
	if (c->nmsgs == c->capmsgs) {
		c->capmsgs = c->capmsgs ? c->capmsgs * 2 : 8;
		c->msgs = xreallocarray(c->msgs, c->capmsgs, sizeof(*c->msgs));
	}
	m = &c->msgs[c->nmsgs];
	m->line = line;
	m->col = col;
	m->seq = c->nmsgs++;
	m->text = buf_take(&b);
}

__attribute__((format(printf, 5, 6))) void
cfg_i_at(struct ctx *c, size_t line, size_t col, const char *path,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(c, line, col, path, fmt, ap);
	va_end(ap);
}

/* An error at a node (its marks are 0-based, as libyaml's). */
__attribute__((format(printf, 4, 5))) void
cfg_i_nerr(struct ctx *c, const struct cfg_node *n, const char *path,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (n != NULL)
		vmsg(c, n->line + 1, n->column + 1, path, fmt, ap);
	else
		vmsg(c, 0, 0, path, fmt, ap);
	va_end(ap);
}

static int
msg_cmp(const void *a, const void *b)
{
	const struct cfg_msg *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Moves the collected messages, in file order, to errs. */
static int
ctx_flush(struct ctx *c, struct cfg_errors *errs)
{
	size_t i, n = c->nmsgs;

	if (c->nmsgs > 0)
		qsort(c->msgs, c->nmsgs, sizeof(*c->msgs), msg_cmp);
	for (i = 0; i < c->nmsgs; i++) {
		struct cfg_msg *m = &c->msgs[i];

		if (errs != NULL && m->line > 0)
			cfg_errors_add(errs, "%s:%zu:%zu: %s", c->file, m->line,
			    m->col, m->text);
		else if (errs != NULL)
			cfg_errors_add(errs, "%s: %s", c->file, m->text);
		free(m->text);
	}
	if (c->dropped > 0 && errs != NULL)
		cfg_errors_add(
		    errs, "%s: %zu more errors not shown", c->file, c->dropped);
	free(c->msgs);
	c->msgs = NULL;
	c->nmsgs = c->capmsgs = 0;
	n += c->dropped;
	c->dropped = 0;
	return n > 0 ? -1 : 0;
}

/* ---- loading ---- */

static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return NULL; /* the current directory: paths stay as written */
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

static void
ctx_init(struct ctx *c, const char *file, int resolve)
{
	memset(c, 0, sizeof(*c));
	c->file = file;
	c->dir = resolve ? dir_of(file) : NULL;
}

static int
ctx_done(struct ctx *c, struct cfg_errors *errs)
{
	free(c->dir);
	c->dir = NULL;
	if (c->doc != NULL)
		cfg_i_doc_free(c->doc);
	c->doc = NULL;
	return ctx_flush(c, errs);
}

int
config_load_daemon(
    struct daemon_config **out, const char *path, struct cfg_errors *errs)
{
	struct daemon_config *d;
	struct cfg_doc doc;
	struct ctx c;

	*out = NULL;
	ctx_init(&c, path, 1);
	if (cfg_i_open_doc(&c, &doc, path, NULL, 0) == -1)
		return ctx_done(&c, errs);
	d = xcalloc(1, sizeof(*d));
	d->file = xstrdup(path);
	c.dcfg = d;
	cfg_i_load_map(&c, cfg_i_doc_root(&doc), &cfg_i_daemon_schema, d, "");
	cfg_i_check_daemon(&c, d, cfg_i_doc_root(&doc));
	if (ctx_done(&c, errs) == -1) {
		daemon_config_free(d);
		return -1;
	}
	*out = d;
	return 0;
}

static int
load_job(struct job_config **out, struct ctx *c, const char *path,
    const char *text, size_t len, struct cfg_errors *errs)
{
	struct job_config *job;
	struct cfg_doc doc;

	*out = NULL;
	if (cfg_i_open_doc(c, &doc, path, text, len) == -1)
		return ctx_done(c, errs);
	job = xcalloc(1, sizeof(*job));
	job->file = xstrdup(path);
	c->job = job;
	cfg_i_load_map(c, cfg_i_doc_root(&doc), &cfg_i_job_schema, job, "");
	cfg_i_check_job(c, job, cfg_i_doc_root(&doc));
	if (ctx_done(c, errs) == -1) {
		job_config_free(job);
		return -1;
	}
	*out = job;
	return 0;
}

int
config_load_job_for(struct job_config **out, const char *path,
    const struct daemon_config *d, struct cfg_errors *errs)
{
	struct ctx c;

	ctx_init(&c, path, 1);
	c.daemon = d;
	return load_job(out, &c, path, NULL, 0, errs);
}

int
config_load_job(
    struct job_config **out, const char *path, struct cfg_errors *errs)
{
	return config_load_job_for(out, path, NULL, errs);
}

int
config_parse_job_for(struct job_config **out, const char *name,
    const char *text, size_t len, const struct daemon_config *d,
    struct cfg_errors *errs)
{
	struct ctx c;

	ctx_init(&c, name, 0);
	c.daemon = d;
	return load_job(out, &c, name, text, len, errs);
}

int
config_parse_job(struct job_config **out, const char *name, const char *text,
    size_t len, struct cfg_errors *errs)
{
	return config_parse_job_for(out, name, text, len, NULL, errs);
}

int
config_load_runner(
    struct runner_config **out, const char *path, struct cfg_errors *errs)
{
	struct runner_config *r;
	struct cfg_doc doc;
	struct ctx c;
	const struct cfg_node *root;

	*out = NULL;
	ctx_init(&c, path, 1);
	if (cfg_i_open_doc(&c, &doc, path, NULL, 0) == -1)
		return ctx_done(&c, errs);
	r = xcalloc(1, sizeof(*r));
	r->file = xstrdup(path);
	root = cfg_i_doc_root(&doc);
	cfg_i_load_map(&c, root, &cfg_i_runner_schema, r, "");
	cfg_i_check_runner(&c, r, root);
	r->token_at = cfg_i_mark(&c, root, "token_file");
	if (r->boot != CFG_BOOT_NONE && r->kernel_tree == NULL &&
	    cfg_i_lookup(&c, root, "kernel_tree", NULL) == NULL)
		cfg_i_nerr(&c, root, NULL,
		    "missing required key 'kernel_tree' (boot is %s)",
		    config_boot_name(r->boot));
	if (ctx_done(&c, errs) == -1) {
		runner_config_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

int
config_load_jobs(struct job_config ***out, size_t *n,
    const struct daemon_config *d, struct cfg_errors *errs)
{
	struct job_config **jobs = NULL, *job;
	size_t njobs = 0, i, k, m;
	int rc = 0;

	for (i = 0; i < d->jobs.n; i++) {
		const char *pat = d->jobs.v[i];
		glob_t g;
		int gr;

		memset(&g, 0, sizeof(g));
		gr = glob(pat, 0, NULL, &g);
		if (gr == GLOB_NOMATCH || (gr == 0 && g.gl_pathc == 0)) {
			if (strpbrk(pat, "*?[") == NULL) {
				if (d->jobs_at != NULL)
					cfg_errors_add(errs,
					    "%s:%u:%u: jobs[%zu]: no such file "
					    "'%s'",
					    d->file, d->jobs_at[i].line,
					    d->jobs_at[i].col, i, pat);
				else
					cfg_errors_add(errs,
					    "%s: jobs[%zu]: no such file '%s'",
					    d->file, i, pat);
				rc = -1;
			}
			globfree(&g);
			continue;
		}
		if (gr != 0) {
			cfg_errors_add(errs, "%s: jobs[%zu]: cannot read '%s'",
			    d->file, i, pat);
			rc = -1;
			globfree(&g);
			continue;
		}
		for (k = 0; k < g.gl_pathc; k++) {
			struct ctx c;

			for (m = 0; m < njobs; m++)
				if (strcmp(jobs[m]->file, g.gl_pathv[k]) == 0)
					break;
			if (m < njobs)
				continue;
			ctx_init(&c, g.gl_pathv[k], 1);
			c.daemon = d;
			c.others = jobs;
			c.nothers = njobs;
			/* c.file must outlive g: load_job copies it. */
			if (load_job(&job, &c, g.gl_pathv[k], NULL, 0, errs) ==
			    -1) {
				rc = -1;
				continue;
			}
			jobs = xreallocarray(jobs, njobs + 1, sizeof(*jobs));
			jobs[njobs++] = job;
		}
		globfree(&g);
	}
	*out = jobs;
	*n = njobs;
	return rc;
}

void
config_jobs_free(struct job_config **jobs, size_t n)
{
	size_t i;

	if (jobs == NULL)
		return;
	for (i = 0; i < n; i++)
		job_config_free(jobs[i]);
	free(jobs);
}

enum cfg_kind
config_sniff_kind(const char *path, struct cfg_errors *errs)
{
	struct cfg_doc doc;
	const struct cfg_node *root;
	enum cfg_kind k = CFG_KIND_UNKNOWN;
	int found = 0;
	struct ctx c;

	ctx_init(&c, path, 0);
	if (cfg_i_open_doc(&c, &doc, path, NULL, 0) == -1) {
		ctx_done(&c, errs);
		return CFG_KIND_UNKNOWN;
	}
	root = cfg_i_doc_root(&doc);
	if (cfg_i_lookup(&c, root, "command", NULL) != NULL) {
		k = CFG_KIND_JOB;
		found++;
	}
	if (cfg_i_lookup(&c, root, "listen", NULL) != NULL) {
		k = CFG_KIND_DAEMON;
		found++;
	}
	if (cfg_i_lookup(&c, root, "server", NULL) != NULL ||
	    cfg_i_lookup(&c, root, "servers", NULL) != NULL) {
		k = CFG_KIND_RUNNER;
		found++;
	}
	if (found == 0) {
		/* No deciding key (a typo of it, say): the kind whose keys
		 * the file's look most like, when one does clearly. */
		int sd = cfg_i_schema_score(&c, root, &cfg_i_daemon_schema),
		    sj = cfg_i_schema_score(&c, root, &cfg_i_job_schema),
		    sr = cfg_i_schema_score(&c, root, &cfg_i_runner_schema);

		if (sd > sj && sd > sr)
			k = CFG_KIND_DAEMON, found = 1;
		else if (sj > sd && sj > sr)
			k = CFG_KIND_JOB, found = 1;
		else if (sr > sd && sr > sj)
			k = CFG_KIND_RUNNER, found = 1;
	}
	if (found != 1) {
		cfg_i_nerr(&c, root, NULL,
		    "cannot tell the kind of file: a job has 'command', a "
		    "daemon config 'listen', a runner config 'server'%s; use "
		    "--kind",
		    found ? " (it has several)" : "");
		k = CFG_KIND_UNKNOWN;
	}
	ctx_done(&c, errs);
	return k;
}

/* ---- freeing ---- */

void
daemon_config_free(struct daemon_config *d)
{
	size_t i, j;

	if (d == NULL)
		return;
	free(d->file);
	free(d->listen);
	free(d->tls_cert_file);
	free(d->tls_key_file);
	free(d->database);
	free(d->mirrors);
	free(d->public_url);
	free(d->admin_token_file);
	free(d->builds.dir);
	cfg_i_strlist_free(&d->jobs);
	cfg_i_strlist_free(&d->maintainers);
	free(d->jobs_at);
	for (i = 0; i < d->ntrees; i++) {
		free(d->trees[i].name);
		free(d->trees[i].url);
		cfg_i_strlist_free(&d->trees[i].branches);
		cfg_i_strlist_free(&d->trees[i].paths);
	}
	free(d->trees);
	for (i = 0; i < d->ninboxes; i++) {
		free(d->inboxes[i].name);
		free(d->inboxes[i].url);
		free(d->inboxes[i].tree);
		free(d->inboxes[i].branch);
		free(d->inboxes[i].archive);
		cfg_i_strlist_free(&d->inboxes[i].subjects);
		for (j = 0; j < d->inboxes[i].ntags; j++) {
			free(d->inboxes[i].tags[j].tag);
			free(d->inboxes[i].tags[j].tree);
			free(d->inboxes[i].tags[j].branch);
		}
		free(d->inboxes[i].tags);
	}
	free(d->inboxes);
	for (i = 0; i < d->nrunners; i++) {
		free(d->runners[i].name);
		free(d->runners[i].token_file);
		free(d->runners[i].canary_job);
		cfg_i_strlist_free(&d->runners[i].labels);
	}
	free(d->runners);
	free(d->alerts.smtp);
	free(d->alerts.from);
	cfg_i_strlist_free(&d->alerts.to);
	free(d->alerts.auth_file);
	free(d->alerts.ca_file);
	free(d->alerts.test_to);
	for (i = 0; i < d->alerts.nlists; i++) {
		free(d->alerts.lists[i].tree);
		free(d->alerts.lists[i].inbox);
		cfg_i_strlist_free(&d->alerts.lists[i].cc);
	}
	free(d->alerts.lists);
	for (i = 0; i < d->alerts.nwebhooks; i++) {
		free(d->alerts.webhooks[i].url);
		free(d->alerts.webhooks[i].secret_file);
	}
	free(d->alerts.webhooks);
	free(d);
}

void
job_config_free(struct job_config *job)
{
	size_t i;

	if (job == NULL)
		return;
	free(job->file);
	free(job->name);
	cfg_i_strlist_free(&job->command);
	cfg_i_strlist_free(&job->server_command);
	cfg_i_strlist_free(&job->build);
	cfg_i_strlist_free(&job->trigger.trees);
	cfg_i_strlist_free(&job->trigger.branches);
	cfg_i_strlist_free(&job->trigger.paths);
	cfg_i_strlist_free(&job->trigger.inboxes);
	cfg_i_strlist_free(&job->hosts);
	free(job->baseline_ref);
	free(job->counters_ops);
	free(job->kernel.config);
	free(job->kernel.compiler);
	cfg_i_strlist_free(&job->kernel.fragment);
	free(job->host.cpus);
	free(job->host.server_cpus);
	for (i = 0; i < job->naxes; i++)
		cfg_i_axis_free(&job->axes[i]);
	free(job->axes);
	for (i = 0; i < job->nexclude; i++) {
		free(job->exclude[i].keys);
		free(job->exclude[i].values);
		free(job->exclude[i].label);
	}
	free(job->exclude);
	for (i = 0; i < job->nmetrics; i++)
		free(job->metrics[i].name);
	free(job->metrics);
	free(job);
}

void
runner_config_free(struct runner_config *r)
{
	if (r == NULL)
		return;
	free(r->file);
	free(r->server);
	cfg_i_strlist_free(&r->servers);
	free(r->name);
	free(r->user);
	free(r->ca_file);
	free(r->token_file);
	free(r->workdir);
	free(r->kernel_tree);
	free(r->guest_dir);
	free(r->reboot_entry);
	free(r->host.governor);
	free(r->host.irq_cpus);
	cfg_i_strlist_free(&r->labels);
	free(r);
}
