#ifndef RUNNERS_RUNAS_H
#define RUNNERS_RUNAS_H

/*
 * Who runs what comes from a tree or a mail (runner.yaml `user`): the
 * tree's build, the benchmark and its server, a kernel's config and make.
 * The runner keeps root for what needs it (cgroups, boots, host tuning,
 * drop_caches); these commands get an unprivileged user (runners/exec.h,
 * exec_spec.user), and the directories they work in are given to it.
 */
#include <stdint.h>

#include "common/err.h"
#include "runners/exec.h"

struct runas {
	struct exec_user u;
	int drop; /* 0: commands run as the runner (not root, or user: root) */
};

/*
 * From the configured user (NULL: unset).  Run as root: that user, by
 * default "perfwatch-bench" when the host has it, else "nobody";
 * "root" keeps commands as root (logged).  Not run as root: nothing to
 * switch; a user other than the runner's own is an error.  0, or -1 with
 * e naming runner.yaml's `user`.
 */
int runas_init(struct runas *, const char *user, struct err *e);
/* The RLIMIT_NPROC and RLIMIT_NOFILE of those commands (runner.yaml
 * limits.nproc, limits.nofile; 0: the runner's own), each at most the
 * runner's own hard limit.  Nothing when no user is switched to. */
void runas_limit(struct runas *, int64_t nproc, int64_t nofile);
void runas_release(struct runas *);
/* The exec_spec.user of commands (NULL when nothing is dropped). */
const struct exec_user *runas_user(const struct runas *);
/* Gives path and everything under it (links not followed) to user u;
 * nothing when u is NULL.  0, or -1 with e set. */
int runas_own(const struct exec_user *u, const char *path, struct err *e);
/* Lets u reach paths under dir (search bits for all; the names inside
 * stay unlisted when they were).  Nothing when u is NULL.  0, or -1. */
int runas_traverse(const struct exec_user *u, const char *dir, struct err *e);
/* Whether u may search every directory above path (it may not list
 * the job directories' parents otherwise): 0, or -1 with e naming the
 * first that stops it.  0 when u is NULL. */
int runas_reachable(const struct exec_user *u, const char *path, struct err *e);
/* Keeps dir (the spool) the runner's only, mode 0700, when u is set. */
int runas_private(const struct exec_user *u, const char *dir, struct err *e);

#endif
