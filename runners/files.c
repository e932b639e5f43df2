/*
 * File helpers (see files.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/xalloc.h"
#include "runners/cgroup.h"
#include "runners/files.h"

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

	if (cgroup_read_file(&b, from, max) != 0) {
		buf_release(&b);
		return -1;
	}
	rc = files_write(to, b.data, b.len);
	buf_release(&b);
	return rc;
}
