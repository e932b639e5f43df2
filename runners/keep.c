/*
 * A job's built tree kept between its rounds (see keep.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "runners/keep.h"

/* A mark names a tree, a commit and a build: well under this. */
#define KEEP_MARK_MAX (64 * 1024)

static char *
job_dir(const char *dir, int64_t id)
{
	return xasprintf("%s/%" PRId64, dir, id);
}

static char *
mark_path(const char *dir, int64_t id)
{
	return xasprintf("%s/%" PRId64 ".kept", dir, id);
}

void
keep_drop(const char *dir, int64_t id)
{
	char *d = job_dir(dir, id), *m = mark_path(dir, id);

	unlink(m);
	files_rm_rf(d);
	free(d);
	free(m);
}

int
keep_take(const char *dir, int64_t id, const char *what)
{
	char *d = job_dir(dir, id), *m = mark_path(dir, id);
	struct buf b = BUF_INIT(KEEP_MARK_MAX);
	struct stat st;
	int r = 0;

	if (what != NULL && files_read(&b, m, KEEP_MARK_MAX) == 0 &&
	    b.len == strlen(what) && memcmp(b.data, what, b.len) == 0 &&
	    stat(d, &st) == 0 && S_ISDIR(st.st_mode))
		r = 1;
	/* Taken, or not what this round needs: no mark either way. */
	if (r == 1)
		unlink(m);
	else
		keep_drop(dir, id);
	buf_release(&b);
	free(d);
	free(m);
	return r;
}

struct kept {
	int64_t id;
	struct timespec t;
};

/* Oldest first; ties by job id. */
static int
kept_cmp(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->t.tv_sec != y->t.tv_sec)
		return x->t.tv_sec < y->t.tv_sec ? -1 : 1;
	if (x->t.tv_nsec != y->t.tv_nsec)
		return x->t.tv_nsec < y->t.tv_nsec ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

void
keep_prune(const char *dir, int64_t max)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	struct kept *v = NULL;
	size_t n = 0, cap = 0, i;

	if (dp == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		char *end;
		struct stat st;
		long long id;

		errno = 0;
		id = strtoll(de->d_name, &end, 10);
		if (errno != 0 || end == de->d_name || id <= 0 ||
		    strcmp(end, ".kept") != 0)
			continue;
		if (fstatat(dirfd(dp), de->d_name, &st, 0) != 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[n].id = id;
		v[n].t = st.st_mtim;
		n++;
	}
	closedir(dp);
	if (n > 1)
		qsort(v, n, sizeof(*v), kept_cmp);
	/* The oldest first, until max are left. */
	for (i = 0; i + (size_t)(max > 0 ? max : 0) < n; i++)
		keep_drop(dir, v[i].id);
	free(v);
}

void
keep_put(const char *dir, int64_t id, const char *what, int64_t max)
{
	char *m;

	if (what == NULL || max <= 0) {
		keep_drop(dir, id);
		return;
	}
	m = mark_path(dir, id);
	if (files_write(m, what, strlen(what)) != 0)
		keep_drop(dir, id);
	free(m);
	keep_prune(dir, max);
}
