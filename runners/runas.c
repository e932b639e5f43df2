/*
 * runner.yaml `user` (runners/runas.h): the account is looked up once at
 * start; ownership is handed over with lchown over the tree (nftw,
 * FTW_PHYS), so a link the tree made never redirects it.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/xalloc.h"
#include "runners/runas.h"

/* Unset `user`: the dedicated account when the host has it (make
 * install makes it), else nobody. */
#define RUNAS_DEDICATED "perfwatch-bench"
#define RUNAS_FALLBACK "nobody"

int
runas_init(struct runas *ra, const char *user, struct err *e)
{
	struct passwd *pw;

	memset(ra, 0, sizeof(*ra));
	if (geteuid() != 0) {
		pw = getpwuid(geteuid());
		if (user != NULL && (pw == NULL || strcmp(pw->pw_name, user)))
			return err_set(e,
			    "user: %s: the runner runs as uid %ld, not root, "
			    "and cannot switch to another user (start it as "
			    "root, or as %s, or leave user unset)",
			    user, (long)geteuid(), user);
		return 0;
	}
	if (user == NULL)
		user = getpwnam(RUNAS_DEDICATED) != NULL ? RUNAS_DEDICATED
		                                         : RUNAS_FALLBACK;
	if ((pw = getpwnam(user)) == NULL)
		return err_set(e,
		    "user: no user '%s' on this host (make it, e.g. useradd "
		    "--system perfwatch-bench, or name another)",
		    user);
	if (pw->pw_uid == 0) {
		log_warnx("user: %s: builds and benchmarks from trees and "
		          "mail run as root",
		    user);
		return 0;
	}
	ra->u.uid = pw->pw_uid;
	ra->u.gid = pw->pw_gid;
	ra->u.name = xstrdup(pw->pw_name);
	ra->u.home = xstrdup(pw->pw_dir && *pw->pw_dir ? pw->pw_dir : "/");
	ra->drop = 1;
	log_info("builds and benchmarks run as %s (uid %ld, gid %ld)",
	    ra->u.name, (long)ra->u.uid, (long)ra->u.gid);
	return 0;
}

/* At most the runner's own hard limit: a limit only ever lowers. */
static rlim_t
clamp(int resource, const char *name, int64_t want)
{
	struct rlimit own;

	if (want <= 0)
		return 0;
	if (getrlimit(resource, &own) == 0 && own.rlim_max != RLIM_INFINITY &&
	    (rlim_t)want > own.rlim_max) {
		log_info("limits.%s %lld is above the runner's own hard limit; "
		         "its commands get %llu",
		    name, (long long)want, (unsigned long long)own.rlim_max);
		return own.rlim_max;
	}
	return (rlim_t)want;
}

void
runas_limit(struct runas *ra, int64_t nproc, int64_t nofile)
{
	if (!ra->drop)
		return;
	ra->u.nproc = clamp(RLIMIT_NPROC, "nproc", nproc);
	ra->u.nofile = clamp(RLIMIT_NOFILE, "nofile", nofile);
	log_info("their limits: RLIMIT_NPROC %llu, RLIMIT_NOFILE %llu (0: the "
	         "runner's own)",
	    (unsigned long long)ra->u.nproc, (unsigned long long)ra->u.nofile);
}

void
runas_release(struct runas *ra)
{
	free((char *)ra->u.name);
	free((char *)ra->u.home);
	memset(ra, 0, sizeof(*ra));
}

const struct exec_user *
runas_user(const struct runas *ra)
{
	return ra->drop ? &ra->u : NULL;
}

/* nftw has no argument for its callback. */
static _Thread_local const struct exec_user *own_u;
static _Thread_local int own_errno;

static int
own_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)flag;
	(void)f;
	if (st->st_uid == own_u->uid && st->st_gid == own_u->gid)
		return 0;
	if (lchown(path, own_u->uid, own_u->gid) != 0) {
		own_errno = errno;
		return 1;
	}
	return 0;
}

int
runas_own(const struct exec_user *u, const char *path, struct err *e)
{
	int rc;

	if (u == NULL)
		return 0;
	own_u = u;
	own_errno = 0;
	rc = nftw(path, own_one, 32, FTW_PHYS);
	if (rc != 0)
		return err_set(e, "%s: giving it to user %s: %s", path, u->name,
		    strerror(own_errno ? own_errno : errno));
	return 0;
}

int
runas_traverse(const struct exec_user *u, const char *dir, struct err *e)
{
	struct stat st;

	if (u == NULL)
		return 0;
	if (stat(dir, &st) != 0)
		return err_set(e, "%s: %s", dir, strerror(errno));
	if ((st.st_mode & 0111) != 0111 &&
	    chmod(dir, (st.st_mode & 07777) | 0111) != 0)
		return err_set(e, "%s: chmod: %s", dir, strerror(errno));
	return 0;
}

int
runas_private(const struct exec_user *u, const char *dir, struct err *e)
{
	if (u != NULL && chmod(dir, 0700) != 0)
		return err_set(e, "%s: chmod: %s", dir, strerror(errno));
	return 0;
}

int
runas_reachable(const struct exec_user *u, const char *path, struct err *e)
{
	char *p, *slash;
	struct stat st;
	int rc = 0;

	if (u == NULL || path[0] != '/')
		return 0;
	p = xstrdup(path);
	for (slash = p; rc == 0 && slash != NULL;
	     slash = strchr(slash + 1, '/')) {
		mode_t need;
		char keep = slash[1];

		slash[1] = '\0';
		if (stat(p, &st) == 0) {
			need = st.st_uid == u->uid ? S_IXUSR
			    : st.st_gid == u->gid  ? S_IXGRP
			                           : S_IXOTH;
			if ((st.st_mode & need) == 0)
				rc = err_set(e,
				    "workdir %s: user %s cannot reach it: %s "
				    "is mode %04o (let others search it, or "
				    "move the workdir, or name another user)",
				    path, u->name, p,
				    (unsigned)(st.st_mode & 07777));
		}
		slash[1] = keep;
	}
	free(p);
	return rc;
}
