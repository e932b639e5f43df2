/*
 * The artifact store's files (daemon/artifacts.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crypto.h"
#include "common/xalloc.h"
#include "daemon/artifacts.h"

struct artifact_put {
	char *dir, *tmp;
	int fd, failed, done;
	uint64_t size;
	struct crypto_sha256 *hash;
};

int
artifacts_sha_ok(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

/* mkdir -p of one level under an existing parent. */
static int
mkdir1(const char *path)
{
	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
	return -1;
}

/* fsync of a directory, so a rename in it survives a crash. */
static int
sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	if (fd < 0)
		return -1;
	r = fsync(fd);
	close(fd);
	return r;
}

int
artifacts_put_begin(struct artifact_put **out, const char *dir, struct err *e)
{
	struct artifact_put *p;
	char *tdir = xasprintf("%s/tmp", dir);

	*out = NULL;
	if (mkdir1(dir) == -1 || mkdir1(tdir) == -1) {
		err_set(e, "artifact store %s: %s", tdir, strerror(errno));
		free(tdir);
		return -1;
	}
	p = xcalloc(1, sizeof(*p));
	p->dir = xstrdup(dir);
	p->tmp = xasprintf("%s/put-XXXXXX", tdir);
	free(tdir);
	if ((p->fd = mkstemp(p->tmp)) < 0) {
		err_set(e, "artifact store %s: %s", p->tmp, strerror(errno));
		free(p->tmp);
		p->tmp = NULL;
		artifacts_put_free(p);
		return -1;
	}
	p->hash = crypto_sha256_new();
	*out = p;
	return 0;
}

int
artifacts_put_write(struct artifact_put *p, const void *data, size_t len)
{
	const char *c = data;
	ssize_t n;

	if (p->failed)
		return -1;
	crypto_sha256_update(p->hash, data, len);
	p->size += len;
	while (len > 0) {
		n = write(p->fd, c, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			p->failed = errno ? errno : EIO;
			return -1;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

uint64_t
artifacts_put_size(const struct artifact_put *p)
{
	return p->size;
}

int
artifacts_put_commit(
    struct artifact_put *p, char sha[65], const char *want, struct err *e)
{
	char sub[PATH_MAX], dst[PATH_MAX + 80];
	struct stat st;

	crypto_sha256_end(p->hash, sha);
	p->hash = NULL;
	if (p->failed)
		return err_set(e, "artifact store: writing %s: %s", p->tmp,
		    strerror(p->failed));
	if (strcmp(sha, want) != 0)
		return err_setc(e, ERR_INVALID,
		    "body sha256 %s does not match X-Perfwatch-Sha256 %s", sha,
		    want);
	snprintf(sub, sizeof(sub), "%s/%.2s", p->dir, sha);
	snprintf(dst, sizeof(dst), "%s/%s", sub, sha);
	if (mkdir1(sub) == -1)
		return err_set(
		    e, "artifact store %s: %s", sub, strerror(errno));
	/* The same content stored before: keep that file. */
	if (stat(dst, &st) == 0 && (uint64_t)st.st_size == p->size)
		return 0;
	if (fsync(p->fd) != 0 || rename(p->tmp, dst) != 0)
		return err_set(
		    e, "artifact store %s: %s", dst, strerror(errno));
	p->done = 1;
	if (sync_dir(sub) != 0)
		return err_set(
		    e, "artifact store %s: %s", sub, strerror(errno));
	return 0;
}

void
artifacts_put_free(struct artifact_put *p)
{
	if (p == NULL)
		return;
	if (p->fd >= 0)
		close(p->fd);
	if (p->tmp != NULL && !p->done)
		unlink(p->tmp);
	crypto_sha256_free(p->hash);
	free(p->tmp);
	free(p->dir);
	free(p);
}

int
artifacts_open(const char *dir, const char *sha, uint64_t *size)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (!artifacts_sha_ok(sha)) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%.2s/%s", dir, sha, sha);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

int
artifacts_remove(const char *dir, const char *sha)
{
	char path[PATH_MAX];

	if (!artifacts_sha_ok(sha)) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%.2s/%s", dir, sha, sha);
	if (unlink(path) != 0 && errno != ENOENT)
		return -1;
	return 0;
}
