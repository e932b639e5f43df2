#ifndef DAEMON_DCONF_H
#define DAEMON_DCONF_H

/*
 * The daemon's loaded configuration: daemon.yaml, every job file its
 * `jobs:` globs name, and the tokens its token files hold.  One struct
 * dconf is immutable once loaded and reference counted, so a reload
 * (SIGHUP) builds a new one and swaps the pointer while requests still
 * holding the old one finish with it.
 */
#include <pthread.h>
#include <stddef.h>

#include "config/config.h"

#define DCONF_TOKEN_MAX 256 /* longest token accepted */

struct dconf_runner {
	const struct cfg_runner_ref *ref; /* name, labels */
	unsigned char token[DCONF_TOKEN_MAX];
	size_t token_len;
};

struct dconf {
	int refs; /* __atomic */
	struct daemon_config *dc;
	struct job_config **jobs;
	size_t njobs;
	struct dconf_runner *runners;
	size_t nrunners;
	int has_admin;
	unsigned char admin[DCONF_TOKEN_MAX];
	size_t admin_len;
};

/* Loads and checks everything; 0 and *out (refs 1), or -1 with every
 * problem in errs ("file:line:col: message" or "file: message"). */
int dconf_load(struct dconf **out, const char *path, struct cfg_errors *errs);
struct dconf *dconf_ref(struct dconf *);
void dconf_unref(struct dconf *); /* frees at zero; NULL ok */
/* A reload's swap: *slot takes a ref of conf under mu; the old one is
 * returned, its ref now the caller's (dconf_unref it). */
struct dconf *dconf_swap(
    struct dconf **slot, pthread_mutex_t *mu, struct dconf *conf);
const struct job_config *dconf_job(const struct dconf *, const char *name);

/*
 * Who presents this token: 1 admin, 2 runner (*out_runner set unless
 * out_runner is NULL), 0 nobody.
 * Compares against every token in constant time.
 */
int dconf_auth(const struct dconf *, const char *token,
    const struct dconf_runner **out_runner);

#endif
