/*
 * Kernel images built elsewhere (see image.h): the claim's kernel.image
 * read, each file downloaded (resumed) and verified, the cache trimmed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crypto.h"
#include "common/files.h"
#include "common/http.h"
#include "common/xalloc.h"
#include "runners/image.h"
#include "runners/kernel_int.h"

#define FETCH_TRIES 5 /* a cut transfer is resumed this often */
#define META_MAX 4096
#define USED ".used"

static const char *const file_names[] = { "bzImage", "System.map", "config",
	"meta", "gen_init_cpio", NULL };
static const char *const required[] = { "bzImage", "System.map", "config",
	"meta", NULL };

static int
is_sha256(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

static int
known_name(const char *name, const char *const *names)
{
	size_t i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

static const struct image_file *
spec_file(const struct image_spec *spec, const char *name)
{
	size_t i;

	for (i = 0; i < spec->nfiles; i++)
		if (strcmp(spec->files[i].name, name) == 0)
			return &spec->files[i];
	return NULL;
}

/* A string field of at most n - 1 bytes, one line: 0 or -1 (e set). */
static int
text_field(
    char *out, size_t n, json_t *o, const char *key, int req, struct err *e)
{
	const char *v = NULL;

	out[0] = '\0';
	if ((req ? pwjson_str(&v, o, key, e) : pwjson_str_opt(&v, o, key, e)) !=
	    0)
		return err_set(e, "field 'kernel.image': %s", err_msg(e));
	if (v == NULL)
		return 0;
	if (strlen(v) >= n || strpbrk(v, "\n\r/ ") != NULL)
		return err_set(e,
		    "field 'kernel.image.%s': expected one word of at most "
		    "%zu bytes",
		    key, n - 1);
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

int
image_spec_parse(struct image_spec *out, json_t *image, struct err *e)
{
	json_t *files, *fo;
	const char *name, *sha;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(image))
		return err_set(e, "field 'kernel.image': expected an object");
	if (pwjson_int(&out->build, image, "build", e) != 0)
		return err_set(e, "field 'kernel.image': %s", err_msg(e));
	if (out->build <= 0)
		return err_set(e,
		    "field 'kernel.image.build': expected a "
		    "build id");
	if (text_field(out->build_id, sizeof(out->build_id), image, "build_id",
	        1, e) != 0 ||
	    text_field(out->release, sizeof(out->release), image, "release", 0,
	        e) != 0 ||
	    text_field(out->config_sha256, sizeof(out->config_sha256), image,
	        "config_sha256", 0, e) != 0)
		return -1;
	if (!kernel_shared_build_id_ok(out->build_id))
		return err_set(e,
		    "field 'kernel.image.build_id': '%s' is not "
		    "-pwb<build>-<instance>",
		    out->build_id);
	if (out->config_sha256[0] != '\0' && !is_sha256(out->config_sha256))
		return err_set(e,
		    "field 'kernel.image.config_sha256': "
		    "expected 64 hex digits");
	files = json_object_get(image, "files");
	if (!json_is_object(files))
		return err_set(
		    e, "field 'kernel.image.files': expected an object");
	json_object_foreach(files, name, fo)
	{
		struct image_file *f;

		if (!known_name(name, file_names))
			return err_set(e,
			    "field 'kernel.image.files': unknown file '%.64s'",
			    name);
		f = &out->files[out->nfiles++];
		snprintf(f->name, sizeof(f->name), "%s", name);
		if (!json_is_object(fo) ||
		    pwjson_str(&sha, fo, "sha256", e) != 0 ||
		    pwjson_int(&f->size, fo, "size", e) != 0)
			return err_set(e, "field 'kernel.image.files.%s': %s",
			    name, e->set ? err_msg(e) : "expected an object");
		if (!is_sha256(sha))
			return err_set(e,
			    "field 'kernel.image.files.%s.sha256': expected "
			    "64 lowercase hex digits",
			    name);
		memcpy(f->sha256, sha, 65);
		if (f->size < 0)
			return err_set(e,
			    "field 'kernel.image.files.%s.size': negative",
			    name);
	}
	for (i = 0; required[i] != NULL; i++)
		if (spec_file(out, required[i]) == NULL)
			return err_set(e, "field 'kernel.image.files': no '%s'",
			    required[i]);
	return 0;
}

int
image_file_sha256(char out[65], int64_t *size, const char *path)
{
	struct crypto_sha256 *h;
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), en;

	if (fd < 0)
		return -1;
	h = crypto_sha256_new();
	*size = 0;
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		crypto_sha256_update(h, chunk, (size_t)n);
		*size += n;
	}
	if (n < 0) {
		en = errno;
		crypto_sha256_free(h);
		close(fd);
		errno = en;
		return -1;
	}
	crypto_sha256_end(h, out);
	close(fd);
	return 0;
}

static void ilog(const struct image_req *rq, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
ilog(const struct image_req *rq, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kernel_i_vlog(rq->log, rq->arg, fmt, ap);
	va_end(ap);
}

/* The mismatch every refused file is named by (docs/KERNEL.md). */
static void
mismatch(struct buf *why, const struct image_file *f, const char *got)
{
	buf_printf(why,
	    "image: %s: sha256 %s, expected %s (GET /api/v1/artifacts/%s)",
	    f->name, got, f->sha256, f->sha256);
}

/*
 * Downloads f into DIR/NAME.part (resumed when it is there), verifies
 * it and renames it to DIR/NAME.  0, 1 cancelled, -1 failed (why).
 */
static int
download(const struct image_req *rq, const struct image_file *f,
    const char *dir, struct image_got *got, struct buf *why)
{
	struct http_retry backoff = { 0, 250, 5000, rq->cancel };
	char *part = xasprintf("%s/%s.part", dir, f->name),
	     *final = xasprintf("%s/%s", dir, f->name), sha[65];
	struct stat st;
	int64_t have, n, size;
	long status, total_ms;
	int tries, fd, rc = -1, restarted;

	/* Slow enough for a remote daemon: 256 KiB/s, a minute at least. */
	total_ms = 60000 + (long)(f->size / 262144) * 1000;
	for (tries = 1;; tries++) {
		if (rq->cancel != NULL && atomic_load(rq->cancel)) {
			rc = 1;
			goto out;
		}
		have = stat(part, &st) == 0 ? (int64_t)st.st_size : 0;
		if (have > f->size) {
			unlink(part);
			have = 0;
		}
		if (have == f->size && have > 0)
			break; /* a part left whole: verified below */
		fd = open(part, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || lseek(fd, (off_t)have, SEEK_SET) != (off_t)have) {
			buf_printf(why, "image: %s: %s: %s", f->name, part,
			    strerror(errno));
			if (fd >= 0)
				close(fd);
			goto out;
		}
		if (have > 0) {
			if (got->resumed_at < 0)
				got->resumed_at = have;
			ilog(rq,
			    "image: %s: resuming at %" PRId64 " of %" PRId64
			    " bytes",
			    f->name, have, f->size);
		}
		rc = client_artifact_get(&status, &n, &restarted, rq->cl,
		    f->sha256, fd, have, total_ms);
		if (fsync(fd) != 0 || close(fd) != 0) {
			buf_printf(why, "image: %s: %s: %s", f->name, part,
			    strerror(errno));
			rc = -1;
			goto out;
		}
		got->bytes += n;
		if (restarted)
			ilog(rq,
			    "image: %s: the server sent the whole file to a "
			    "ranged request; written from the start",
			    f->name);
		if (rc == 0)
			break;
		if (status == 416 && tries < FETCH_TRIES) {
			/* Our part does not fit the file: start over. */
			unlink(part);
			continue;
		}
		if (rc == ERR_AGAIN && tries < FETCH_TRIES &&
		    !(rq->cancel != NULL && atomic_load(rq->cancel))) {
			ilog(rq,
			    "image: %s: transfer cut after %" PRId64
			    " bytes (%s); resuming",
			    f->name, n, client_errmsg(rq->cl));
			http_sleep_ms(
			    http_backoff_ms(&backoff, tries), rq->cancel);
			continue;
		}
		if (rq->cancel != NULL && atomic_load(rq->cancel)) {
			rc = 1;
			goto out;
		}
		buf_printf(why, "image: %s: %s%s", f->name,
		    client_errmsg(rq->cl),
		    rc == ERR_AGAIN ? " (the part is kept for a resume)" : "");
		rc = -1;
		goto out;
	}
	rc = -1;
	if (image_file_sha256(sha, &size, part) != 0) {
		buf_printf(
		    why, "image: %s: %s: %s", f->name, part, strerror(errno));
		goto out;
	}
	if (size != f->size || strcmp(sha, f->sha256) != 0) {
		/* Never kept: a resume would only extend the wrong bytes. */
		unlink(part);
		ilog(rq,
		    "image: %s: refused: %" PRId64 " bytes hashing to %s, "
		    "expected %" PRId64 " bytes hashing to %s",
		    f->name, size, sha, f->size, f->sha256);
		mismatch(why, f, sha);
		goto out;
	}
	if (rename(part, final) != 0) {
		buf_printf(
		    why, "image: %s: %s: %s", f->name, final, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(part);
	free(final);
	return rc;
}

/* DIR/.used touched: this image was just used. */
static void
touch_used(const char *dir)
{
	char *p = xasprintf("%s/" USED, dir);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	free(p);
}

int
image_fetch(struct kernel_image *out, struct image_got *got,
    const struct image_req *rq, const struct image_spec *spec, struct buf *why)
{
	char *root = xasprintf("%s/shared", rq->kdir),
	     *dir = xasprintf("%s/%s", root, spec->build_id), *p = NULL,
	     sha[65], bid[48];
	struct buf meta = BUF_INIT(META_MAX);
	int64_t size;
	size_t i;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(got, 0, sizeof(*got));
	got->cached = 1;
	got->resumed_at = -1;
	if (files_mkdir_p(dir) != 0) {
		buf_printf(why, "image: %s: mkdir: %s", dir, strerror(errno));
		goto out;
	}
	/* In use from now on: a trim by another fetch passes it by. */
	touch_used(dir);
	for (i = 0; i < spec->nfiles; i++) {
		const struct image_file *f = &spec->files[i];

		free(p);
		p = xasprintf("%s/%s", dir, f->name);
		if (image_file_sha256(sha, &size, p) == 0) {
			if (size == f->size && strcmp(sha, f->sha256) == 0)
				continue;
			ilog(rq,
			    "image: %s: the kept copy hashes to %s, expected "
			    "%s: downloading it again",
			    f->name, sha, f->sha256);
			unlink(p);
		}
		got->cached = 0;
		if ((rc = download(rq, f, dir, got, why)) != 0)
			goto out;
		rc = -1;
	}
	free(p);
	p = xasprintf("%s/meta", dir);
	if (files_read(&meta, p, META_MAX) != 0) {
		buf_printf(why, "image: meta: %s: %s", p, strerror(errno));
		goto out;
	}
	/* The builder's record must name this build. */
	if (kernel_i_meta_get(meta.data, "build_id", bid, sizeof(bid)) != 0 ||
	    strcmp(bid, spec->build_id) != 0) {
		buf_printf(why,
		    "image: meta: build id %.47s, expected %s (build %" PRId64
		    ")",
		    kernel_i_meta_get(
		        meta.data, "build_id", bid, sizeof(bid)) == 0
		        ? bid
		        : "none",
		    spec->build_id, spec->build);
		goto out;
	}
	snprintf(out->build_id, sizeof(out->build_id), "%s", spec->build_id);
	if (spec->release[0] != '\0')
		snprintf(
		    out->release, sizeof(out->release), "%s", spec->release);
	else if (kernel_i_meta_get(meta.data, "release", out->release,
	             sizeof(out->release)) != 0)
		out->release[0] = '\0';
	if (spec->config_sha256[0] != '\0')
		memcpy(out->config_sha256, spec->config_sha256, 65);
	else if (kernel_i_meta_get(meta.data, "config_sha256",
	             out->config_sha256, sizeof(out->config_sha256)) != 0)
		out->config_sha256[0] = '\0';
	snprintf(out->image, sizeof(out->image), "%s/bzImage", dir);
	snprintf(
	    out->system_map, sizeof(out->system_map), "%s/System.map", dir);
	if (spec_file(spec, "gen_init_cpio") != NULL) {
		snprintf(out->gen_cpio, sizeof(out->gen_cpio),
		    "%s/gen_init_cpio", dir);
		if (chmod(out->gen_cpio, 0755) != 0) {
			buf_printf(why, "image: gen_init_cpio: %s: %s",
			    out->gen_cpio, strerror(errno));
			goto out;
		}
	}
	out->cached = got->cached;
	out->shared_build = spec->build;
	touch_used(dir);
	if (!got->cached)
		got->evicted =
		    image_cache_trim(root, rq->cache_max, spec->build_id, NULL);
	rc = 0;
out:
	buf_release(&meta);
	free(root);
	free(dir);
	free(p);
	return rc;
}

/* ---- the cache ---- */

struct cached {
	char *name;
	int64_t size;
	struct timespec used;
};

static int
older(const void *a, const void *b)
{
	const struct cached *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The bytes of the regular files directly in dir. */
static int64_t
dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	int64_t n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		        0 &&
		    S_ISREG(st.st_mode))
			n += (int64_t)st.st_size;
	closedir(d);
	return n;
}

size_t
image_cache_trim(const char *dir, int64_t max, const char *keep, int64_t *left)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	struct cached *v = NULL;
	size_t n = 0, i, removed = 0;
	int64_t total = 0;
	char *p;

	if (left != NULL)
		*left = 0;
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) !=
		        0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n].name = xstrdup(e->d_name);
		v[n].used = st.st_mtim;
		p = xasprintf("%s/%s/" USED, dir, e->d_name);
		if (stat(p, &st) == 0)
			v[n].used = st.st_mtim;
		free(p);
		p = xasprintf("%s/%s", dir, e->d_name);
		v[n].size = dir_bytes(p);
		free(p);
		total += v[n].size;
		n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), older);
	for (i = 0; i < n && total > max; i++) {
		if (keep != NULL && strcmp(v[i].name, keep) == 0)
			continue;
		p = xasprintf("%s/%s", dir, v[i].name);
		if (files_rm_rf(p) == 0) {
			total -= v[i].size;
			removed++;
		}
		free(p);
	}
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	if (left != NULL)
		*left = total;
	return removed;
}
