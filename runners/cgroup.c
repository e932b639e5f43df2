/*
 * A benchmark's cgroup (runners/cgroup.h): its placement below the
 * runner's own cgroup with its limits, the processes attached to it,
 * its teardown, and the cgroups a dead runner left behind removed.  The
 * hierarchy the machine offers is found in cgroup_detect.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "runners/cgroup.h"
#include "runners/cgroup_int.h"

#define CG_MAX_LEVELS 16
#define CG_KILL_ROUNDS 100  /* x 20 ms: 2 s to empty a cgroup */
#define CG_RMDIR_ROUNDS 100 /* x 20 ms */
#define CG_NOTES_MAX 512

struct cgroup {
	enum cgroup_kind kind;
	int root;
	int sockacct;
	int torn;
	int64_t pids_max;  /* written to the leaf's pids.max, else 0 */
	int64_t pids_seen; /* pids.events "max" already reported */
	char *dir;         /* memory hierarchy directory */
	char *v2dir;       /* cgroup2 directory (== dir on v2), or NULL */
	char *perf;        /* v2dir relative to its mount */
	char *pidsdir;     /* v1 pids hierarchy leaf, or NULL */
	char *leaves[3];   /* created leaves that only the benchmark uses */
	int v2leaf[3];     /* leaves[i] is on cgroup2 (cgroup.kill usable) */
	int nleaves;
	char **created; /* directories made here, in creation order */
	int ncreated;
	char notes[CG_NOTES_MAX];
};

int
cgroup_write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, saved;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	do
		n = write(fd, text, len);
	while (n == -1 && errno == EINTR);
	saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)len ? 0 : -1;
}

/* "/sys/fs/cgroup" + "/a/b" (base "/" adds nothing). */
char *
cgroup_join(const char *mount, const char *path)
{
	if (path == NULL || strcmp(path, "/") == 0 || path[0] == '\0')
		return xstrdup(mount);
	return xasprintf("%s%s%s", mount, path[0] == '/' ? "" : "/", path);
}

int
cgroup_path_check(const char *path, struct err *e)
{
	const char *p;
	int levels = 0;

	if (path == NULL || path[0] == '\0')
		return err_set(e, "cgroup: empty path");
	if (strcmp(path, "root") == 0)
		return 0;
	if (path[0] != '/' || strlen(path) > CAP_NAME)
		return err_set(e,
		    "cgroup: path '%.64s' must be \"root\" or start with '/' "
		    "(at most %d characters)",
		    path, CAP_NAME);
	for (p = path; *p;) {
		const char *start = ++p;

		while (*p && *p != '/') {
			char c = *p;

			if (!((c >= 'a' && c <= 'z') ||
			        (c >= 'A' && c <= 'Z') ||
			        (c >= '0' && c <= '9') || c == '.' ||
			        c == '_' || c == '-'))
				return err_set(e,
				    "cgroup: path '%.64s': character '%c' not "
				    "allowed (use A-Z a-z 0-9 . _ -)",
				    path, c);
			p++;
		}
		if (p == start)
			return err_set(
			    e, "cgroup: path '%.64s': empty component", path);
		if ((p - start == 1 && start[0] == '.') ||
		    (p - start == 2 && start[0] == '.' && start[1] == '.'))
			return err_set(e,
			    "cgroup: path '%.64s': '.' and '..' not allowed",
			    path);
		if (strncmp(start, "cgroup.", 7) == 0 ||
		    strncmp(start, "memory.", 7) == 0)
			return err_set(e,
			    "cgroup: path '%.64s': a component may not start "
			    "with 'cgroup.' or 'memory.'",
			    path);
		if (++levels > CG_MAX_LEVELS)
			return err_set(e,
			    "cgroup: path '%.64s': more than %d "
			    "levels",
			    path, CG_MAX_LEVELS);
	}
	return 0;
}

static void note(struct cgroup *cg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
note(struct cgroup *cg, const char *fmt, ...)
{
	size_t l = strlen(cg->notes);
	va_list ap;

	if (l + 3 >= sizeof(cg->notes))
		return;
	if (l)
		cg->notes[l++] = ';', cg->notes[l++] = ' ', cg->notes[l] = 0;
	va_start(ap, fmt);
	vsnprintf(cg->notes + l, sizeof(cg->notes) - l, fmt, ap);
	va_end(ap);
}

/* mkdir one level; records it when it did not exist. */
static int
mk(struct cgroup *cg, const char *dir, struct err *e)
{
	if (mkdir(dir, 0755) == 0) {
		cg->created = xreallocarray(
		    cg->created, (size_t)cg->ncreated + 1, sizeof(char *));
		cg->created[cg->ncreated++] = xstrdup(dir);
		return 0;
	}
	if (errno == EEXIST)
		return 0;
	return err_set(e, "cgroup: mkdir %s: %s", dir, strerror(errno));
}

/* Reads the pids of dir/cgroup.procs into *out (malloc'd); count or -1. */
static int
read_pids(pid_t **out, const char *dir)
{
	struct buf b = BUF_INIT(CG_FILE_MAX);
	char *path = xasprintf("%s/cgroup.procs", dir), *p, *end;
	int n = 0;

	*out = NULL;
	if (files_read(&b, path, CG_FILE_MAX)) {
		free(path);
		buf_release(&b);
		return -1;
	}
	for (p = b.data; *p;) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v > 0) {
			*out =
			    xreallocarray(*out, (size_t)n + 1, sizeof(pid_t));
			(*out)[n++] = (pid_t)v;
		}
		p = end;
		while (*p == '\n' || *p == ' ')
			p++;
	}
	free(path);
	buf_release(&b);
	return n;
}

int
cgroup_count_procs(const char *dir)
{
	pid_t *pids;
	int n = read_pids(&pids, dir);

	free(pids);
	return n;
}

/*
 * v2: enables +memory (and +pids when with_pids) for the children of dir.
 * When dir holds processes (the runner's base cgroup), they move into
 * dir/runner first.
 */
static int
enable_memory(struct cgroup *cg, const char *dir, int is_base, int with_pids,
    struct err *e)
{
	char *ctl = xasprintf("%s/cgroup.subtree_control", dir);
	const char *want = with_pids ? "+memory +pids" : "+memory";
	struct buf cur = BUF_INIT(4096);
	int rc = -1;

	if (files_read(&cur, ctl, 4096) == 0 &&
	    strstr(cur.data, "memory") != NULL &&
	    (!with_pids || strstr(cur.data, "pids") != NULL)) {
		rc = 0;
		goto out;
	}
	if (cgroup_write_file(ctl, want) == 0) {
		rc = 0;
		goto out;
	}
	if (errno == EBUSY && is_base) {
		char *leaf = xasprintf("%s/runner", dir);
		char *procs = xasprintf("%s/cgroup.procs", leaf);
		pid_t *pids = NULL;
		int i, n;

		if (mkdir(leaf, 0755) == -1 && errno != EEXIST) {
			err_set(
			    e, "cgroup: mkdir %s: %s", leaf, strerror(errno));
			goto moved;
		}
		n = read_pids(&pids, dir);
		for (i = 0; i < n; i++) {
			char pid[24];

			snprintf(pid, sizeof(pid), "%d", (int)pids[i]);
			/* A process that exited meanwhile is fine. */
			if (cgroup_write_file(procs, pid) && errno != ESRCH)
				note(cg, "could not move pid %s to %s: %s", pid,
				    leaf, strerror(errno));
		}
		free(pids);
		note(cg,
		    "moved %d process(es) of %s into %s (no internal "
		    "processes with controllers enabled)",
		    n < 0 ? 0 : n, dir, leaf);
		if (cgroup_write_file(ctl, want) == 0)
			rc = 0;
		else
			err_set(e, "cgroup: write %s to %s: %s", want, ctl,
			    strerror(errno));
	moved:
		free(procs);
		free(leaf);
		goto out;
	}
	err_set(e, "cgroup: write %s to %s: %s", want, ctl, strerror(errno));
out:
	buf_release(&cur);
	free(ctl);
	return rc;
}

static int
set_limit(const char *dir, const char *file, int64_t v, struct err *e)
{
	char *path = xasprintf("%s/%s", dir, file), val[32];
	int rc = 0;

	snprintf(val, sizeof(val), "%lld", (long long)v);
	if (cgroup_write_file(path, val))
		rc = err_set(e, "cgroup: write %s to %s: %s", val, path,
		    strerror(errno));
	free(path);
	return rc;
}

/* 1 when our pid is listed in dir/cgroup.procs. */
static int
holds_self(const char *dir)
{
	pid_t *pids, self = getpid();
	int i, n = read_pids(&pids, dir), found = 0;

	for (i = 0; i < n; i++)
		found |= pids[i] == self;
	free(pids);
	return found;
}

/* Creates each level of path below base in mount; returns the leaf. */
static char *
make_path(struct cgroup *cg, const char *mount, const char *base,
    const char *path, int v2mem, int v2pids, struct err *e)
{
	char *cur = cgroup_join(mount, base), *p = xstrdup(path), *c,
	     *save = NULL;
	int first = 1;

	for (c = strtok_r(p, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		char *next;

		if (v2mem && enable_memory(cg, cur, first, v2pids, e))
			goto fail;
		first = 0;
		next = xasprintf("%s/%s", cur, c);
		free(cur);
		cur = next;
		if (mk(cg, cur, e))
			goto fail;
	}
	free(p);
	return cur;
fail:
	free(p);
	free(cur);
	return NULL;
}

int
cgroup_place(struct cgroup **out, const struct cgroup_sys *sys,
    const struct cgroup_spec *spec, struct err *e)
{
	struct cgroup *cg;

	*out = NULL;
	if (cgroup_path_check(spec->path, e))
		return -1;
	if (sys->kind == CGROUP_NONE || sys->mount == NULL)
		return err_set(e, "cgroup placement '%s' impossible: %s",
		    spec->path, sys->reason[0] ? sys->reason : "no cgroups");
	cg = xcalloc(1, sizeof(*cg));
	cg->kind = sys->kind;
	cg->root = strcmp(spec->path, "root") == 0;
	if (cg->root) {
		char *dir = cgroup_join(sys->mount, sys->base);
		char *leaf = xasprintf("%s/runner", dir);

		/* After a v2 nested placement the runner lives in a leaf. */
		if (sys->kind == CGROUP_V2 && !holds_self(dir) &&
		    holds_self(leaf)) {
			free(dir);
			dir = leaf;
		} else
			free(leaf);
		cg->dir = dir;
		if (spec->memory_max || spec->memory_high)
			note(cg,
			    "memory_max/memory_high ignored for root: the "
			    "runner's own cgroup is not limited");
	} else {
		cg->dir = make_path(cg, sys->mount, sys->base, spec->path,
		    sys->kind == CGROUP_V2,
		    sys->kind == CGROUP_V2 && sys->v2_pids &&
		        spec->pids_max > 0,
		    e);
		if (cg->dir == NULL)
			goto fail;
		cg->leaves[cg->nleaves] = xstrdup(cg->dir);
		cg->v2leaf[cg->nleaves++] = sys->kind == CGROUP_V2;
	}
	if (sys->kind == CGROUP_V2) {
		cg->v2dir = xstrdup(cg->dir);
		cg->sockacct = 1;
		if (!cg->root && spec->memory_max &&
		    set_limit(cg->dir, "memory.max", spec->memory_max, e))
			goto fail;
		if (!cg->root && spec->memory_high &&
		    set_limit(cg->dir, "memory.high", spec->memory_high, e))
			goto fail;
		if (!cg->root && spec->pids_max > 0 && sys->v2_pids) {
			if (set_limit(cg->dir, "pids.max", spec->pids_max, e))
				goto fail;
			cg->pids_max = spec->pids_max;
			note(cg, "pids.max %lld", (long long)spec->pids_max);
		}
	} else {
		if (!cg->root && spec->memory_max &&
		    set_limit(
		        cg->dir, "memory.limit_in_bytes", spec->memory_max, e))
			goto fail;
		if (!cg->root && spec->memory_high &&
		    set_limit(cg->dir, "memory.soft_limit_in_bytes",
		        spec->memory_high, e))
			goto fail;
		if (!cg->root) {
			char *f = xasprintf(
			    "%s/memory.kmem.tcp.limit_in_bytes", cg->dir);

			cg->sockacct = cgroup_write_file(f, "-1") == 0;
			if (!cg->sockacct)
				note(cg,
				    "v1 socket accounting not enabled "
				    "(%s: %s)",
				    f, strerror(errno));
			free(f);
		}
		if (spec->pids_max > 0 && sys->pids_mount) {
			/* Companion pids leaf: limits.pids as pids.max, also
			 * for a root memcg placement (its own hierarchy).  One
			 * leaf per runner process, whatever the job's path:
			 * the runners of a host often share their cgroup in
			 * this hierarchy, and a leaf at the job's path would
			 * be another runner's too. */
			char *name =
			    xasprintf("/perfwatch-root-%d", (int)getpid());

			cg->pidsdir = make_path(
			    cg, sys->pids_mount, sys->pids_base, name, 0, 0, e);
			free(name);
			if (cg->pidsdir == NULL)
				goto fail;
			cg->leaves[cg->nleaves] = xstrdup(cg->pidsdir);
			cg->v2leaf[cg->nleaves++] = 0;
			if (set_limit(
			        cg->pidsdir, "pids.max", spec->pids_max, e))
				goto fail;
			cg->pids_max = spec->pids_max;
			note(cg, "pids.max %lld (v1)",
			    (long long)spec->pids_max);
		}
		if (sys->v2_mount) {
			/* Companion cgroup2 directory: PSI and perf -G. */
			char *name = cg->root
			    ? xasprintf("/perfwatch-root-%d", (int)getpid())
			    : xstrdup(spec->path);

			cg->v2dir = make_path(
			    cg, sys->v2_mount, sys->v2_base, name, 0, 0, e);
			free(name);
			if (cg->v2dir == NULL)
				goto fail;
			cg->leaves[cg->nleaves] = xstrdup(cg->v2dir);
			cg->v2leaf[cg->nleaves++] = 1;
		}
	}
	if (cg->v2dir) {
		const char *m =
		    sys->kind == CGROUP_V2 ? sys->mount : sys->v2_mount;
		const char *rel = cg->v2dir + strlen(m);

		cg->perf = xstrdup(rel[0] ? rel : "/");
	}
	*out = cg;
	return 0;
fail:
	cgroup_free(cg);
	return -1;
}

int
cgroup_procs_fds(
    const struct cgroup *cg, int fds[CGROUP_MAX_FDS], struct err *e)
{
	const char *dirs[CGROUP_MAX_FDS] = { cg->dir, NULL, cg->pidsdir };
	int i, n = 0;

	if (cg->v2dir && cg->v2dir != cg->dir && strcmp(cg->v2dir, cg->dir))
		dirs[1] = cg->v2dir;
	for (i = 0; i < CGROUP_MAX_FDS; i++) {
		char *path;

		if (dirs[i] == NULL)
			continue;
		path = xasprintf("%s/cgroup.procs", dirs[i]);
		fds[n] = open(path, O_WRONLY | O_CLOEXEC);
		if (fds[n] == -1) {
			err_set(
			    e, "cgroup: open %s: %s", path, strerror(errno));
			free(path);
			while (n > 0)
				close(fds[--n]);
			return -1;
		}
		free(path);
		n++;
	}
	return n;
}

int
cgroup_attach_self_fd(int fd)
{
	ssize_t n;

	do
		n = write(fd, "0", 1);
	while (n == -1 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

int
cgroup_attach_fds(const int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (cgroup_attach_self_fd(fds[i]))
			return -1;
	return 0;
}

const char *
cgroup_dir(const struct cgroup *cg)
{
	return cg->dir;
}

const char *
cgroup_v2_dir(const struct cgroup *cg)
{
	return cg->v2dir;
}

const char *
cgroup_perf_name(const struct cgroup *cg)
{
	return cg->perf;
}

enum cgroup_kind
cgroup_kind(const struct cgroup *cg)
{
	return cg->kind;
}

int
cgroup_is_root(const struct cgroup *cg)
{
	return cg->root;
}

int
cgroup_socket_accounting(const struct cgroup *cg)
{
	return cg->sockacct;
}

const char *
cgroup_notes(const struct cgroup *cg)
{
	return cg->notes;
}

void
cgroup_pids_refusals(struct cgroup *cg, char *dst, size_t n)
{
	struct buf b = BUF_INIT(4096);
	char *path, *p;
	long long hits = 0;
	size_t l = strlen(dst);

	if (cg->pids_max <= 0)
		return;
	path = xasprintf("%s/pids.events", cg->pidsdir ? cg->pidsdir : cg->dir);
	if (files_read(&b, path, 4096) == 0 &&
	    (p = strstr(b.data, "max ")) != NULL)
		hits = strtoll(p + 4, NULL, 10);
	if (hits > cg->pids_seen && l < n)
		snprintf(dst + l, n - l, "%spids.max %lld (%lld forks refused)",
		    l > 0 ? ", " : "", (long long)cg->pids_max,
		    hits - (long long)cg->pids_seen);
	if (hits > cg->pids_seen)
		cg->pids_seen = hits;
	free(path);
	buf_release(&b);
}

/* Empties a leaf: cgroup.kill on v2, else SIGKILL per pid, bounded. */
static int
kill_leftovers(const char *dir, int v2, struct err *e)
{
	char *killf = xasprintf("%s/cgroup.kill", dir);
	int round, usekill = v2 && access(killf, F_OK) == 0;

	for (round = 0; round < CG_KILL_ROUNDS; round++) {
		pid_t *pids;
		int i, n = read_pids(&pids, dir);

		if (n <= 0) {
			free(pids);
			free(killf);
			if (n < 0 && errno != ENOENT)
				return err_set(e,
				    "cgroup: read %s/cgroup.procs: %s", dir,
				    strerror(errno));
			return 0;
		}
		if (usekill && cgroup_write_file(killf, "1") == 0)
			;
		else
			for (i = 0; i < n; i++)
				if (pids[i] != getpid())
					kill(pids[i], SIGKILL);
		free(pids);
		clock_sleep_ms(20);
	}
	free(killf);
	return err_set(e, "cgroup: %s still has processes after %d ms", dir,
	    CG_KILL_ROUNDS * 20);
}

int
cgroup_teardown(struct cgroup *cg, struct err *e)
{
	int i, rc = 0;

	if (cg == NULL || cg->torn)
		return 0;
	cg->torn = 1;
	/* cgroup2 leaves first: cgroup.kill is atomic against forks. */
	for (i = cg->nleaves - 1; i >= 0; i--)
		if (kill_leftovers(cg->leaves[i], cg->v2leaf[i], e))
			rc = -1;
	for (i = cg->ncreated - 1; i >= 0; i--) {
		int round;

		for (round = 0; round < CG_RMDIR_ROUNDS; round++) {
			if (rmdir(cg->created[i]) == 0 || errno == ENOENT)
				break;
			if (errno != EBUSY) {
				rc = err_set(e, "cgroup: rmdir %s: %s",
				    cg->created[i], strerror(errno));
				break;
			}
			clock_sleep_ms(20);
		}
		if (round == CG_RMDIR_ROUNDS)
			rc = err_set(
			    e, "cgroup: rmdir %s: still busy", cg->created[i]);
	}
	return rc;
}

void
cgroup_free(struct cgroup *cg)
{
	int i;

	if (cg == NULL)
		return;
	cgroup_teardown(cg, NULL);
	for (i = 0; i < cg->ncreated; i++)
		free(cg->created[i]);
	free(cg->created);
	for (i = 0; i < cg->nleaves; i++)
		free(cg->leaves[i]);
	free(cg->dir);
	free(cg->v2dir);
	free(cg->pidsdir);
	free(cg->perf);
	free(cg);
}

size_t
cgroup_created_count(const struct cgroup *cg)
{
	return (size_t)cg->ncreated;
}

const char *
cgroup_created_dir(const struct cgroup *cg, size_t i)
{
	return i < (size_t)cg->ncreated ? cg->created[i] : NULL;
}

/* 1 when dir is strictly below mount+base (no "..", no escape). */
static int
below(const char *dir, const char *mount, const char *base)
{
	char *top;
	size_t l;
	int ok;

	if (mount == NULL || strstr(dir, "/../") || strstr(dir, "/./"))
		return 0;
	top = cgroup_join(mount, base);
	l = strlen(top);
	ok = strncmp(dir, top, l) == 0 && dir[l] == '/' && dir[l + 1] != '\0';
	free(top);
	return ok;
}

/* Kills what is in dir and removes it; 1 removed, 0 gone, -1 (e). */
static int
remove_one(const char *dir, int v2, struct err *e)
{
	int round;

	if (access(dir, F_OK) != 0)
		return 0;
	if (kill_leftovers(dir, v2, e))
		return -1;
	for (round = 0; round < CG_RMDIR_ROUNDS; round++) {
		if (rmdir(dir) == 0)
			return 1;
		if (errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			break;
		clock_sleep_ms(20);
	}
	return err_set(e, "cgroup: rmdir %s: %s", dir, strerror(errno));
}

int
cgroup_remove_stale(
    const struct cgroup_sys *sys, char *const *dirs, size_t n, struct err *e)
{
	size_t i;
	int removed = 0, r, rc = 0;

	for (i = n; i-- > 0;) {
		int v2 = sys->v2_mount &&
		    below(dirs[i], sys->v2_mount, sys->v2_base);

		if (!v2 && !below(dirs[i], sys->mount, sys->base) &&
		    !below(dirs[i], sys->pids_mount, sys->pids_base)) {
			rc = err_set(e,
			    "cgroup: %s is not below the runner's cgroup; "
			    "left alone",
			    dirs[i]);
			continue;
		}
		v2 |= sys->kind == CGROUP_V2;
		if ((r = remove_one(dirs[i], v2, e)) < 0)
			rc = -1;
		else
			removed += r;
	}
	return rc ? rc : removed;
}

/* Removes the perfwatch-root-PID leaves of dead runners below top. */
static int
sweep_top(char *top, int v2, struct err *e)
{
	DIR *d;
	struct dirent *de;
	int removed = 0, rc = 0;

	if ((d = opendir(top)) == NULL) {
		free(top);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		char *end, *dir;
		long pid;

		if (strncmp(de->d_name, "perfwatch-root-", 15) != 0)
			continue;
		pid = strtol(de->d_name + 15, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		dir = xasprintf("%s/%s", top, de->d_name);
		switch (remove_one(dir, v2, e)) {
		case -1:
			rc = -1;
			break;
		case 1:
			removed++;
			break;
		}
		free(dir);
	}
	closedir(d);
	free(top);
	return rc ? rc : removed;
}

int
cgroup_sweep_stale(const struct cgroup_sys *sys, struct err *e)
{
	int r, removed = 0, rc = 0;

	if (sys->kind != CGROUP_V1)
		return 0;
	if (sys->v2_mount != NULL) {
		if ((r = sweep_top(
		         cgroup_join(sys->v2_mount, sys->v2_base), 1, e)) < 0)
			rc = -1;
		else
			removed += r;
	}
	if (sys->pids_mount != NULL) {
		r = sweep_top(
		    cgroup_join(sys->pids_mount, sys->pids_base), 0, e);
		if (r < 0)
			rc = -1;
		else
			removed += r;
	}
	return rc ? rc : removed;
}
