/*
 * Loading the daemon configuration bundle (see dconf.h).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/http.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"

static void adderr(struct cfg_errors *errs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
adderr(struct cfg_errors *errs, const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	errs->msg = xreallocarray(errs->msg, errs->n + 1, sizeof(*errs->msg));
	errs->msg[errs->n++] = xstrdup(line);
}

/*
 * Reads a token file (http_token_load_strong: the first line, trimmed;
 * refused when others may read it or it is short).  file, at and key
 * say where the daemon file names it.  0, or -1 with an error added.
 */
static int
read_token(unsigned char *out, size_t *out_len, const char *path,
    const char *file, struct cfg_mark at, const char *key,
    struct cfg_errors *errs)
{
	struct err e = { 0 };
	char *tok = NULL;
	size_t n;

	if (http_token_load_strong(&tok, path, &e) != 0) {
		adderr(errs, "%s:%u:%u: %s: %s", file, at.line, at.col, key,
		    err_msg(&e));
		return -1;
	}
	if ((n = strlen(tok)) >= DCONF_TOKEN_MAX) {
		adderr(errs, "%s:%u:%u: %s: %s: longer than %d bytes", file,
		    at.line, at.col, key, path, DCONF_TOKEN_MAX - 1);
		explicit_bzero(tok, n);
		free(tok);
		return -1;
	}
	memcpy(out, tok, n);
	*out_len = n;
	explicit_bzero(tok, n);
	free(tok);
	return 0;
}

static void
dconf_free(struct dconf *c)
{
	config_jobs_free(c->jobs, c->njobs);
	free(c->runners);
	daemon_config_free(c->dc);
	/* Tokens do not linger in freed memory. */
	memset(c, 0, sizeof(*c));
	free(c);
}

int
dconf_load(struct dconf **out, const char *path, struct cfg_errors *errs)
{
	struct dconf *c = xcalloc(1, sizeof(*c));
	size_t before = errs->n, i, j;

	*out = NULL;
	c->refs = 1;
	if (config_load_daemon(&c->dc, path, errs) == -1 || c->dc == NULL) {
		if (errs->n == before)
			adderr(errs, "%s: cannot load", path);
		dconf_free(c);
		return -1;
	}
	/* Job files, checked against this daemon file (trees, inboxes,
	 * host labels, unique names). */
	if (config_load_jobs(&c->jobs, &c->njobs, c->dc, errs) == -1 &&
	    errs->n == before)
		adderr(errs, "%s: cannot load the job files", path);
	/* A runner's canary names a job of these files (docs/HOST.md). */
	for (i = 0; i < c->dc->nrunners; i++) {
		const struct cfg_runner_ref *r = &c->dc->runners[i];

		if (r->canary_job != NULL &&
		    dconf_job(c, r->canary_job) == NULL)
			adderr(errs,
			    "%s:%d:%d: runners[%zu].canary.job: no job named "
			    "'%s' in the job files",
			    path, r->canary_line, r->canary_col, i,
			    r->canary_job);
	}
	if (c->dc->admin_token_file != NULL &&
	    read_token(c->admin, &c->admin_len, c->dc->admin_token_file, path,
	        c->dc->admin_token_at, "admin_token_file", errs) == 0)
		c->has_admin = 1;
	c->runners = xcalloc(c->dc->nrunners + 1, sizeof(*c->runners));
	for (i = 0; i < c->dc->nrunners; i++) {
		struct dconf_runner *r = &c->runners[c->nrunners];
		char key[64];

		r->ref = &c->dc->runners[i];
		if (r->ref->token_file == NULL) {
			adderr(errs, "%s: runner '%s' has no token_file", path,
			    r->ref->name);
			continue;
		}
		snprintf(key, sizeof(key), "runners[%zu].token_file", i);
		if (read_token(r->token, &r->token_len, r->ref->token_file,
		        path, r->ref->token_at, key, errs) == -1)
			continue;
		for (j = 0; j < c->nrunners; j++)
			if (strcmp(c->runners[j].ref->name, r->ref->name) == 0)
				adderr(errs, "%s: runner '%s' is listed twice",
				    path, r->ref->name);
		c->nrunners++;
	}
	if (errs->n > before) {
		dconf_free(c);
		return -1;
	}
	*out = c;
	return 0;
}

struct dconf *
dconf_ref(struct dconf *c)
{
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_ACQ_REL);
	return c;
}

void
dconf_unref(struct dconf *c)
{
	if (c != NULL && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
		dconf_free(c);
}

struct dconf *
dconf_swap(struct dconf **slot, pthread_mutex_t *mu, struct dconf *conf)
{
	struct dconf *old;

	pthread_mutex_lock(mu);
	old = *slot;
	*slot = dconf_ref(conf);
	pthread_mutex_unlock(mu);
	return old;
}

const struct job_config *
dconf_job(const struct dconf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->njobs; i++)
		if (strcmp(c->jobs[i]->name, name) == 0)
			return c->jobs[i];
	return NULL;
}

/* 1 when equal; time depends on the lengths only. */
static int
ct_equal(
    const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
	unsigned char d = (unsigned char)(alen != blen);
	volatile unsigned char v;
	size_t i;

	/* Both buffers are DCONF_TOKEN_MAX long, zero padded; an OR over
	 * all bytes has no data-dependent branch. */
	for (i = 0; i < DCONF_TOKEN_MAX; i++)
		d |= a[i] ^ b[i];
	v = d;
	return v == 0;
}

int
dconf_auth(const struct dconf *c, const char *token,
    const struct dconf_runner **out_runner)
{
	unsigned char t[DCONF_TOKEN_MAX];
	size_t len = strlen(token), i;
	const struct dconf_runner *runner = NULL;
	int who = 0;

	if (out_runner != NULL)
		*out_runner = NULL;
	if (len == 0 || len >= DCONF_TOKEN_MAX)
		return 0;
	memset(t, 0, sizeof(t));
	memcpy(t, token, len);
	/* No early exit: every token is compared every time. */
	if (c->has_admin && ct_equal(t, len, c->admin, c->admin_len))
		who = 1;
	for (i = 0; i < c->nrunners; i++)
		if (ct_equal(
		        t, len, c->runners[i].token, c->runners[i].token_len) &&
		    who == 0) {
			who = 2;
			runner = &c->runners[i];
		}
	memset(t, 0, sizeof(t));
	if (out_runner != NULL)
		*out_runner = runner;
	return who;
}
