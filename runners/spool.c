#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "runners/spool.h"

struct spool {
	char *dir, *rejected;
};

/* mkdir -p, the error naming the path. */
static int
mkdir_p(const char *path, struct err *e)
{
	if (files_mkdir_p(path) == -1)
		return err_set(e, "%s: mkdir: %s", path, strerror(errno));
	return 0;
}

static char *
entry_path(const char *dir, int64_t job, int64_t index)
{
	return xasprintf(
	    "%s/run-%" PRId64 "-%" PRId64 ".json", dir, job, index);
}

/* "run-J-I.json" -> job, index; 0 or -1 for other names. */
static int
parse_name(struct spool_entry *out, const char *name)
{
	long long j, i;
	int used = 0;

	if (sscanf(name, "run-%lld-%lld.json%n", &j, &i, &used) != 2 ||
	    name[used] != '\0' || j <= 0 || i < 0)
		return -1;
	out->job_id = j;
	out->index = i;
	return 0;
}

static int
fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd == -1)
		return -1;
	fsync(fd);
	close(fd);
	return 0;
}

int
spool_open(struct spool **out, const char *dir, struct err *e)
{
	struct spool *s;
	struct dirent *d;
	DIR *dp;
	char *p;

	*out = NULL;
	s = xcalloc(1, sizeof(*s));
	s->dir = xstrdup(dir);
	s->rejected = xasprintf("%s/rejected", dir);
	if (mkdir_p(s->dir, e) == -1 || mkdir_p(s->rejected, e) == -1) {
		spool_free(s);
		return -1;
	}
	/* A crash between write and rename leaves a .tmp: never sent. */
	if ((dp = opendir(s->dir)) != NULL) {
		while ((d = readdir(dp)) != NULL) {
			size_t n = strlen(d->d_name);

			if (n > 4 && strcmp(d->d_name + n - 4, ".tmp") == 0) {
				p = xasprintf("%s/%s", s->dir, d->d_name);
				unlink(p);
				free(p);
			}
		}
		closedir(dp);
	}
	*out = s;
	return 0;
}

void
spool_free(struct spool *s)
{
	if (s == NULL)
		return;
	free(s->dir);
	free(s->rejected);
	free(s);
}

int
spool_put(struct spool *s, int64_t job, int64_t index, const char *body,
    size_t len, struct err *e)
{
	char *path = entry_path(s->dir, job, index);
	char *tmp = xasprintf("%s.tmp", path);
	size_t off = 0;
	ssize_t n;
	int fd, ret = -1;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd == -1) {
		err_set(e, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	while (off < len) {
		n = write(fd, body + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			err_set(e, "%s: write: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		off += (size_t)n;
	}
	if (fsync(fd) == -1) {
		err_set(e, "%s: fsync: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) == -1) {
		err_set(e, "%s: rename: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	fsync_dir(s->dir);
	ret = 0;
out:
	free(tmp);
	free(path);
	return ret;
}

int
spool_get(
    struct buf *out, struct spool *s, int64_t job, int64_t index, struct err *e)
{
	char *path = entry_path(s->dir, job, index);
	int fd, ret = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		ret = errno == ENOENT ? ERR_NOTFOUND : -1;
		err_set(e, "%s: %s", path, strerror(errno));
		free(path);
		return ret;
	}
	if (files_read_fd(out, fd, out->max) == -1)
		ret = errno == EFBIG
		    ? err_set(e, "%s: larger than %zu bytes", path, out->max)
		    : err_set(e, "%s: read: %s", path, strerror(errno));
	close(fd);
	free(path);
	return ret;
}

int
spool_remove(struct spool *s, int64_t job, int64_t index, struct err *e)
{
	char *path = entry_path(s->dir, job, index);
	int ret = 0;

	if (unlink(path) == -1 && errno != ENOENT)
		ret = err_set(e, "%s: unlink: %s", path, strerror(errno));
	else
		fsync_dir(s->dir);
	free(path);
	return ret;
}

int
spool_reject(struct spool *s, int64_t job, int64_t index, struct err *e)
{
	char *from = entry_path(s->dir, job, index);
	char *to = entry_path(s->rejected, job, index);
	int ret = 0;

	if (rename(from, to) == -1 && errno != ENOENT)
		ret = err_set(e, "%s: rename: %s", from, strerror(errno));
	free(from);
	free(to);
	return ret;
}

static int
entry_cmp(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;

	if (x->job_id != y->job_id)
		return x->job_id < y->job_id ? -1 : 1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return 0;
}

int
spool_list(struct spool_entry **out, size_t *n, struct spool *s, int64_t job,
    struct err *e)
{
	struct spool_entry *v = NULL, ent;
	size_t cnt = 0, cap = 0;
	struct dirent *d;
	DIR *dp;

	*out = NULL;
	*n = 0;
	if ((dp = opendir(s->dir)) == NULL)
		return err_set(e, "%s: %s", s->dir, strerror(errno));
	while ((d = readdir(dp)) != NULL) {
		if (parse_name(&ent, d->d_name) == -1)
			continue;
		if (job != 0 && ent.job_id != job)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[cnt++] = ent;
	}
	closedir(dp);
	if (cnt > 0)
		qsort(v, cnt, sizeof(*v), entry_cmp);
	*out = v;
	*n = cnt;
	return 0;
}
