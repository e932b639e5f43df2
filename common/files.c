/*
 * File helpers (see files.h).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/files.h"
#include "common/xalloc.h"

int
files_read_fd(struct buf *b, int fd, size_t max)
{
	char chunk[4096];
	ssize_t n;

	buf_reset(b);
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (b->len + (size_t)n > max || buf_add(b, chunk, (size_t)n)) {
			n = -1;
			errno = EFBIG;
			break;
		}
	}
	return n == 0 ? 0 : -1;
}

int
files_read_int(const char *path, int *out)
{
	struct buf b = BUF_INIT(64);
	int rc = files_read(&b, path, 64);

	if (rc == 0)
		*out = (int)strtol(b.data, NULL, 10);
	buf_release(&b);
	return rc;
}

int
files_read(struct buf *b, const char *path, size_t max)
{
	int fd, rc, saved;

	buf_reset(b);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	rc = files_read_fd(b, fd, max);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int
files_mkdir_p(const char *path)
{
	char *p = xstrdup(path), *s;
	int rc = 0;

	for (s = p + 1; *s && rc == 0; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) == -1 && errno != EEXIST)
			rc = -1;
		*s = '/';
	}
	if (rc == 0 && mkdir(p, 0755) == -1 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

int
files_write(const char *path, const void *data, size_t len)
{
	char *tmp = xasprintf("%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	int rc = -1, saved;

	if (f != NULL) {
		rc = fwrite(data, 1, len, f) == len ? 0 : -1;
		if (fflush(f) != 0 || fsync(fileno(f)) != 0)
			rc = -1;
		if (fclose(f) != 0)
			rc = -1;
		if (rc == 0 && rename(tmp, path) != 0)
			rc = -1;
		saved = errno;
		if (rc != 0)
			unlink(tmp);
		errno = saved;
	}
	free(tmp);
	return rc;
}

int
files_copy(const char *from, const char *to, size_t max)
{
	struct buf b = BUF_INIT(max);
	int rc;

	if (files_read(&b, from, max) != 0) {
		buf_release(&b);
		return -1;
	}
	rc = files_write(to, b.data, b.len);
	buf_release(&b);
	return rc;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int
files_rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : -1;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
