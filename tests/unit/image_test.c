/*
 * runners/image: a shared build's files downloaded through the runner's
 * client (common/http, libcurl) from a small artifact server in a thread
 * of the test that honours "Range: bytes=N-" as the daemon's GET
 * /api/v1/artifacts/{sha256} does, and misbehaves on demand: a transfer
 * cut short, a corrupted or truncated body, a Range ignored.  Then the
 * cache's least-recently-used trim.
 */
#define _GNU_SOURCE /* strcasestr */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/crypto.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "runners/image.h"
#include "tests/unit/test.h"

#define BID "-pwb4-0a1b2c3d4e5f"
#define NBLOBS 4

/* What the artifact server holds and how it misbehaves. */
struct blob {
	char sha[65];
	char *data;
	size_t len;
};
struct asrv {
	int fd, port;
	struct blob blobs[NBLOBS];
	/* The next reply to a GET of cut_sha: headers for the whole body,
	 * then only cut_at bytes, then the connection closed. */
	char cut_sha[65];
	size_t cut_at;
	int flip;         /* serve every body with its byte 100 changed */
	size_t short_len; /* >0: serve that many bytes as the whole file */
	int ignore_range; /* answer a Range request with 200 and it all */
	atomic_int nget;
	char ranges[16][48]; /* the Range headers received, in order */
	int nranges;
	pthread_t th;
};

static void
send_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0 && (w = send(fd, p, n, MSG_NOSIGNAL)) > 0) {
		p += w;
		n -= (size_t)w;
	}
}

static void
answer(struct asrv *s, int c)
{
	char req[8192], hdr[512], *sha, *range, *sp;
	size_t len = 0, from = 0, n, body_len, send_len;
	ssize_t got;
	struct blob *b = NULL;
	const char *data;
	char *copy = NULL;
	int i, partial = 0;

	while (len < sizeof(req) - 1 &&
	    (got = read(c, req + len, sizeof(req) - 1 - len)) > 0) {
		len += (size_t)got;
		req[len] = '\0';
		if (strstr(req, "\r\n\r\n") != NULL)
			break;
	}
	req[len] = '\0';
	atomic_fetch_add(&s->nget, 1);
	sha = strstr(req, "/api/v1/artifacts/");
	for (i = 0; sha != NULL && i < NBLOBS; i++)
		if (s->blobs[i].data != NULL &&
		    strncmp(sha + 18, s->blobs[i].sha, 64) == 0)
			b = &s->blobs[i];
	if (b == NULL) {
		static const char nf[] =
		    "HTTP/1.1 404 Not Found\r\nContent-Length: 27\r\n"
		    "Connection: close\r\n\r\n{\"error\": \"no such "
		    "file\"}\r\n";
		send_all(c, nf, strlen(nf));
		return;
	}
	data = b->data;
	body_len = s->short_len ? s->short_len : b->len;
	if (s->flip) {
		copy = xmalloc(b->len);
		memcpy(copy, b->data, b->len);
		copy[100] ^= 0x5a;
		data = copy;
	}
	if ((range = strcasestr(req, "\r\nRange: bytes=")) != NULL) {
		if (s->nranges < 16) {
			sp = strstr(range + 2, "\r\n");
			snprintf(s->ranges[s->nranges++], 48, "%.*s",
			    (int)(sp - range - 2), range + 2);
		}
		from = strtoul(range + 15, NULL, 10);
		partial = !s->ignore_range;
	}
	if (!partial)
		from = 0;
	if (from >= body_len && partial) {
		n = (size_t)snprintf(hdr, sizeof(hdr),
		    "HTTP/1.1 416 Range Not Satisfiable\r\n"
		    "Content-Range: bytes */%zu\r\nContent-Length: 0\r\n"
		    "Connection: close\r\n\r\n",
		    body_len);
		send_all(c, hdr, n);
		free(copy);
		return;
	}
	if (partial)
		n = (size_t)snprintf(hdr, sizeof(hdr),
		    "HTTP/1.1 206 Partial Content\r\nContent-Length: %zu\r\n"
		    "Content-Range: bytes %zu-%zu/%zu\r\n"
		    "Connection: close\r\n\r\n",
		    body_len - from, from, body_len - 1, body_len);
	else
		n = (size_t)snprintf(hdr, sizeof(hdr),
		    "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
		    "Connection: close\r\n\r\n",
		    body_len);
	send_all(c, hdr, n);
	send_len = body_len - from;
	if (s->cut_sha[0] && strcmp(s->cut_sha, b->sha) == 0) {
		if (send_len > s->cut_at)
			send_len = s->cut_at;
		s->cut_sha[0] = '\0'; /* once */
	}
	send_all(c, data + from, send_len);
	free(copy);
}

static void *
asrv_main(void *arg)
{
	struct asrv *s = arg;
	int c;

	while ((c = accept(s->fd, NULL, NULL)) != -1) {
		answer(s, c);
		shutdown(c, SHUT_WR);
		close(c);
	}
	return NULL;
}

static void
asrv_start(struct asrv *s)
{
	atomic_init(&s->nget, 0);
	s->fd = test_listen(&s->port);
	pthread_create(&s->th, NULL, asrv_main, s);
}

static void
asrv_stop(struct asrv *s)
{
	int i;

	shutdown(s->fd, SHUT_RDWR);
	close(s->fd);
	pthread_join(s->th, NULL);
	for (i = 0; i < NBLOBS; i++)
		free(s->blobs[i].data);
}

/* Blob i of the server and file name of the spec: len bytes of a
 * pattern (text for meta). */
static void
add_file(struct asrv *s, struct image_spec *spec, int i, const char *name,
    const char *text, size_t len)
{
	struct blob *b = &s->blobs[i];
	struct image_file *f = &spec->files[spec->nfiles++];
	size_t k;

	b->len = text != NULL ? strlen(text) : len;
	b->data = xmalloc(b->len + 1);
	if (text != NULL)
		memcpy(b->data, text, b->len);
	else
		for (k = 0; k < len; k++)
			b->data[k] = (char)((k * 7 + (size_t)i) % 251);
	crypto_sha256_hex(b->sha, b->data, b->len);
	snprintf(f->name, sizeof(f->name), "%s", name);
	memcpy(f->sha256, b->sha, 65);
	f->size = (int64_t)b->len;
}

/* One case: the server, the spec of its image, a kernel_tree. */
struct fx {
	struct asrv s;
	struct image_spec spec;
	struct kernel_image img;
	struct image_got got;
	struct buf why;
	char *kd;
	int64_t cache_max;
};

/* A server with a four-file image of build 4 whose meta names
 * meta_bid, its spec, and kernel_tree TMP/name. */
static void
fx_begin(struct fx *f, const char *name, const char *meta_bid)
{
	char *meta = xasprintf("build_id %s\nrelease 6.1.0" BID
	                       "\nconfig_sha256 %064d\ngen_cpio -\n",
	    meta_bid, 0);

	memset(f, 0, sizeof(*f));
	f->why = BUF_INIT(4096);
	f->kd = xasprintf("%s/%s", test_tmpdir(), name);
	f->cache_max = (int64_t)1 << 40;
	f->spec.build = 4;
	snprintf(f->spec.build_id, sizeof(f->spec.build_id), BID);
	snprintf(f->spec.release, sizeof(f->spec.release), "6.1.0" BID);
	snprintf(
	    f->spec.config_sha256, sizeof(f->spec.config_sha256), "%064d", 7);
	add_file(&f->s, &f->spec, 0, "bzImage", NULL, 300000);
	add_file(&f->s, &f->spec, 1, "System.map", NULL, 5000);
	add_file(&f->s, &f->spec, 2, "config", "CONFIG_MEMCG=y\n", 0);
	add_file(&f->s, &f->spec, 3, "meta", meta, 0);
	free(meta);
	asrv_start(&f->s);
}

static void
fx_end(struct fx *f)
{
	asrv_stop(&f->s);
	buf_release(&f->why);
	free(f->kd);
}

/* A fetch into the case's kernel_tree through a client of its own. */
static int
fx_fetch(struct fx *f)
{
	char *url = xasprintf("http://127.0.0.1:%d", f->s.port);
	struct client *cl = client_new(url, "tok");
	struct image_req rq;
	int rc;

	memset(&rq, 0, sizeof(rq));
	rq.kdir = f->kd;
	rq.cl = cl;
	rq.cache_max = f->cache_max;
	buf_reset(&f->why);
	rc = image_fetch(&f->img, &f->got, &rq, &f->spec, &f->why);
	client_free(cl);
	free(url);
	return rc;
}

/* KDIR/shared/BID/name (malloc'd). */
static char *
fx_path(const struct fx *f, const char *name)
{
	return xasprintf("%s/shared/" BID "/%s", f->kd, name);
}

/* Whether KDIR/shared/BID/name holds blob i's bytes. */
static int
fx_holds(const struct fx *f, const char *name, int i)
{
	struct buf got = BUF_INIT(1 << 20);
	char *p = fx_path(f, name);
	const struct blob *b = &f->s.blobs[i];
	int ok = files_read(&got, p, 1 << 20) == 0 && got.len == b->len &&
	    memcmp(got.data, b->data, b->len) == 0;

	buf_release(&got);
	free(p);
	return ok;
}

static int
fx_exists(const struct fx *f, const char *name)
{
	char *p = fx_path(f, name);
	int ok = access(p, F_OK) == 0;

	free(p);
	return ok;
}

/* name.part of the image holds the first n bytes of blob i. */
static int
fx_part(const struct fx *f, const char *name, int i, size_t n)
{
	char *d = xasprintf("%s/shared/" BID, f->kd),
	     *p = xasprintf("%s/%s.part", d, name);
	int rc =
	    files_mkdir_p(d) == 0 && files_write(p, f->s.blobs[i].data, n) == 0;

	free(d);
	free(p);
	return rc;
}

static int64_t
fx_total(const struct fx *f)
{
	return (int64_t)(f->s.blobs[0].len + f->s.blobs[1].len +
	    f->s.blobs[2].len + f->s.blobs[3].len);
}

TEST(test_image__download_then_cached)
{
	struct fx f;
	int n;

	fx_begin(&f, "fresh", BID);
	ASSERT_MSG(fx_fetch(&f) == 0, "%s", f.why.data);
	ASSERT_INTEQ(f.got.cached, 0);
	ASSERT_INTEQ(f.got.bytes, fx_total(&f));
	ASSERT_INTEQ(f.got.resumed_at, -1);
	ASSERT_INTEQ(f.img.cached, 0);
	ASSERT_INTEQ(f.img.shared_build, 4);
	ASSERT_STREQ(f.img.build_id, BID);
	ASSERT_STREQ(f.img.release, "6.1.0" BID);
	ASSERT_STREQ(f.img.gen_cpio, "");
	ASSERT(fx_holds(&f, "bzImage", 0));
	ASSERT(strstr(f.img.image, "/shared/" BID "/bzImage") != NULL);
	ASSERT(!fx_exists(&f, "bzImage.part"));
	/* Again: nothing downloaded, every file hashed and found good. */
	n = atomic_load(&f.s.nget);
	ASSERT_MSG(fx_fetch(&f) == 0, "%s", f.why.data);
	ASSERT_INTEQ(f.got.cached, 1);
	ASSERT_INTEQ(f.img.cached, 1);
	ASSERT_INTEQ(f.got.bytes, 0);
	ASSERT_INTEQ(atomic_load(&f.s.nget), n);
	fx_end(&f);
}

/* A transfer cut mid-way is resumed where it stopped. */
TEST(test_image__cut_transfer_resumes)
{
	struct fx f;

	fx_begin(&f, "cut", BID);
	memcpy(f.s.cut_sha, f.s.blobs[0].sha, 65);
	f.s.cut_at = 120000;
	ASSERT_MSG(fx_fetch(&f) == 0, "%s", f.why.data);
	ASSERT_INTEQ(f.got.resumed_at, 120000);
	ASSERT_INTEQ(f.s.nranges, 1);
	ASSERT_STREQ(f.s.ranges[0], "Range: bytes=120000-");
	/* Each byte once: 120000 before the cut, the rest after. */
	ASSERT_INTEQ(f.got.bytes, fx_total(&f));
	ASSERT(fx_holds(&f, "bzImage", 0));
	fx_end(&f);
}

/* A part left by an earlier runner process (killed mid-download). */
TEST(test_image__part_left_resumes)
{
	struct fx f;

	fx_begin(&f, "part", BID);
	ASSERT(fx_part(&f, "bzImage", 0, 1000));
	ASSERT_MSG(fx_fetch(&f) == 0, "%s", f.why.data);
	ASSERT_INTEQ(f.got.resumed_at, 1000);
	ASSERT_STREQ(f.s.ranges[0], "Range: bytes=1000-");
	ASSERT_INTEQ(f.got.cached, 0);
	ASSERT_INTEQ(f.got.bytes, fx_total(&f) - 1000);
	ASSERT(fx_holds(&f, "bzImage", 0));
	fx_end(&f);
}

/* A server that sends the whole file to a ranged request (200). */
TEST(test_image__range_ignored_starts_over)
{
	struct fx f;

	fx_begin(&f, "norange", BID);
	f.s.ignore_range = 1;
	ASSERT(fx_part(&f, "bzImage", 0, 5000));
	ASSERT_MSG(fx_fetch(&f) == 0, "%s", f.why.data);
	ASSERT_INTEQ(f.s.nranges, 1);
	ASSERT(fx_holds(&f, "bzImage", 0));
	fx_end(&f);
}

/* The refusal names the bytes' hash and the artifact; neither the part
 * nor a file is left to boot or to resume. */
static void
assert_refused(const struct fx *f)
{
	char want[512];

	snprintf(want, sizeof(want), "image: bzImage: sha256 ");
	ASSERT_MSG(
	    strncmp(f->why.data, want, strlen(want)) == 0, "%s", f->why.data);
	snprintf(want, sizeof(want), ", expected %s (GET /api/v1/artifacts/%s)",
	    f->s.blobs[0].sha, f->s.blobs[0].sha);
	ASSERT_MSG(strstr(f->why.data, want) != NULL, "%s", f->why.data);
	ASSERT(!fx_exists(f, "bzImage.part"));
	ASSERT(!fx_exists(f, "bzImage"));
}

TEST(test_image__corrupted_refused)
{
	struct fx f;
	char bad[65];

	fx_begin(&f, "corrupt", BID);
	f.s.flip = 1;
	ASSERT_INTEQ(fx_fetch(&f), -1);
	assert_refused(&f);
	/* The hash named is the one of the bytes received. */
	f.s.blobs[0].data[100] ^= 0x5a;
	crypto_sha256_hex(bad, f.s.blobs[0].data, f.s.blobs[0].len);
	f.s.blobs[0].data[100] ^= 0x5a;
	ASSERT_MSG(strstr(f.why.data, bad) != NULL, "%s", f.why.data);
	/* Served right again: the next fetch downloads it whole. */
	f.s.flip = 0;
	ASSERT_MSG(fx_fetch(&f) == 0, "%s", f.why.data);
	ASSERT_INTEQ(f.got.resumed_at, -1);
	ASSERT(fx_holds(&f, "bzImage", 0));
	fx_end(&f);
}

/* The server's copy is short, with a Content-Length to match. */
TEST(test_image__truncated_refused)
{
	struct fx f;

	fx_begin(&f, "short", BID);
	f.s.short_len = 200000;
	ASSERT_INTEQ(fx_fetch(&f), -1);
	assert_refused(&f);
	fx_end(&f);
}

/* A kept copy changed on disk is downloaded again, not booted. */
TEST(test_image__bad_kept_copy_downloaded_again)
{
	struct fx f;
	char *p;

	fx_begin(&f, "kept", BID);
	ASSERT_MSG(fx_fetch(&f) == 0, "%s", f.why.data);
	p = fx_path(&f, "System.map");
	ASSERT_INTEQ(files_write(p, "junk", 4), 0);
	free(p);
	ASSERT_MSG(fx_fetch(&f) == 0, "%s", f.why.data);
	ASSERT_INTEQ(f.got.cached, 0);
	ASSERT_INTEQ(f.got.bytes, 5000);
	ASSERT(fx_holds(&f, "System.map", 1));
	fx_end(&f);
}

/* The builder's meta must name the build the claim names. */
TEST(test_image__meta_of_another_build_refused)
{
	struct fx f;

	fx_begin(&f, "meta", "-pwb5-0a1b2c3d4e5f");
	ASSERT_INTEQ(fx_fetch(&f), -1);
	ASSERT_STREQ(f.why.data,
	    "image: meta: build id -pwb5-0a1b2c3d4e5f, expected " BID
	    " (build 4)");
	fx_end(&f);
}

TEST(test_image__missing_artifact_named)
{
	struct fx f;

	fx_begin(&f, "gone", BID);
	memset(f.spec.files[1].sha256, 'a', 64);
	ASSERT_INTEQ(fx_fetch(&f), -1);
	ASSERT_MSG(
	    strncmp(f.why.data, "image: System.map: GET /api/v1/artifacts/aaaa",
	        45) == 0 &&
	        strstr(f.why.data, "HTTP 404: no such file") != NULL,
	    "%s", f.why.data);
	fx_end(&f);
}

TEST(test_image__spec_parse)
{
	struct image_spec spec;
	struct err e = { 0 };
	char sha[65];
	json_t *o;
	char *text;

	memset(sha, 'b', 64);
	sha[64] = '\0';
	text = xasprintf(
	    "{\"build\": 4, \"build_id\": \"" BID "\", \"release\": "
	    "\"6.1.0" BID "\", \"config_sha256\": \"%s\", \"files\": {"
	    "\"bzImage\": {\"sha256\": \"%s\", \"size\": 10},"
	    "\"System.map\": {\"sha256\": \"%s\", \"size\": 1},"
	    "\"config\": {\"sha256\": \"%s\", \"size\": 1},"
	    "\"meta\": {\"sha256\": \"%s\", \"size\": 1},"
	    "\"gen_init_cpio\": {\"sha256\": \"%s\", \"size\": 1}}}",
	    sha, sha, sha, sha, sha, sha);
	o = pwjson_parse(text, strlen(text), &e);
	ASSERT(o != NULL);
	ASSERT_MSG(image_spec_parse(&spec, o, &e) == 0, "%s", err_msg(&e));
	ASSERT_INTEQ(spec.nfiles, 5);
	ASSERT_INTEQ(spec.build, 4);
	/* A build id that is not a shared build's: no directory of it. */
	json_object_set_new(o, "build_id", json_string("../../etc"));
	err_clear(&e);
	ASSERT(image_spec_parse(&spec, o, &e) != 0);
	ASSERT_STREQ(err_msg(&e),
	    "field 'kernel.image.build_id': expected one word of at most 47 "
	    "bytes");
	json_object_set_new(o, "build_id", json_string("-pw4-0a1b"));
	err_clear(&e);
	ASSERT(image_spec_parse(&spec, o, &e) != 0);
	ASSERT_MSG(strstr(err_msg(&e), "is not -pwb<build>-<instance>") != NULL,
	    "%s", err_msg(&e));
	json_object_set_new(o, "build_id", json_string(BID));
	json_object_set_new(json_object_get(o, "files"), "../x",
	    json_pack("{s:s, s:i}", "sha256", sha, "size", 1));
	err_clear(&e);
	ASSERT(image_spec_parse(&spec, o, &e) != 0);
	ASSERT_STREQ(
	    err_msg(&e), "field 'kernel.image.files': unknown file '../x'");
	json_object_del(json_object_get(o, "files"), "../x");
	json_object_del(json_object_get(o, "files"), "meta");
	err_clear(&e);
	ASSERT(image_spec_parse(&spec, o, &e) != 0);
	ASSERT_STREQ(err_msg(&e), "field 'kernel.image.files': no 'meta'");
	json_object_set_new(json_object_get(o, "files"), "meta",
	    json_pack("{s:s, s:i}", "sha256", "ABC", "size", 1));
	err_clear(&e);
	ASSERT(image_spec_parse(&spec, o, &e) != 0);
	ASSERT_STREQ(err_msg(&e),
	    "field 'kernel.image.files.meta.sha256': expected 64 lowercase "
	    "hex digits");
	json_decref(o);
	free(text);
}

/* An image directory of n bytes last used `age` seconds ago. */
static void
cache_dir(const char *root, const char *name, size_t n, int age)
{
	char *d = xasprintf("%s/%s", root, name),
	     *f = xasprintf("%s/%s/bzImage", root, name),
	     *u = xasprintf("%s/%s/.used", root, name), *z = xcalloc(1, n + 1);
	struct timespec ts[2];

	ASSERT_INTEQ(files_mkdir_p(d), 0);
	ASSERT_INTEQ(files_write(f, z, n), 0);
	ASSERT_INTEQ(files_write(u, "", 0), 0);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age;
	ts[1] = ts[0];
	ASSERT_INTEQ(utimensat(AT_FDCWD, u, ts, 0), 0);
	free(d);
	free(f);
	free(u);
	free(z);
}

static int
present(const char *root, const char *name)
{
	char *d = xasprintf("%s/%s", root, name);
	int ok = access(d, F_OK) == 0;

	free(d);
	return ok;
}

TEST(test_image__cache_trim_lru_never_the_one_in_use)
{
	char *root = xasprintf("%s/trim/shared", test_tmpdir());
	int64_t left = 0;

	cache_dir(root, "-pwb1-aa", 4000, 400); /* oldest: in use */
	cache_dir(root, "-pwb2-aa", 4000, 300);
	cache_dir(root, "-pwb3-aa", 4000, 200);
	cache_dir(root, "-pwb4-aa", 4000, 100);
	/* Under the cap: nothing goes. */
	ASSERT_INTEQ(image_cache_trim(root, 16000, "-pwb1-aa", &left), 0);
	ASSERT_INTEQ(left, 16000);
	/* 9000: the least recently used but the one in use go first. */
	ASSERT_INTEQ(image_cache_trim(root, 9000, "-pwb1-aa", &left), 2);
	ASSERT_INTEQ(left, 8000);
	ASSERT(present(root, "-pwb1-aa"));
	ASSERT(!present(root, "-pwb2-aa"));
	ASSERT(!present(root, "-pwb3-aa"));
	ASSERT(present(root, "-pwb4-aa"));
	/* A cap below the image in use: every other one goes, not it. */
	ASSERT_INTEQ(image_cache_trim(root, 0, "-pwb1-aa", &left), 1);
	ASSERT_INTEQ(left, 4000);
	ASSERT(present(root, "-pwb1-aa"));
	ASSERT(!present(root, "-pwb4-aa"));
	free(root);
}

/* A fetch beyond image_cache_max trims the cache, keeping its image. */
TEST(test_image__fetch_trims_the_cache)
{
	struct fx f;
	char *root;

	fx_begin(&f, "fetchtrim", BID);
	root = xasprintf("%s/shared", f.kd);
	cache_dir(root, "-pwb1-aa", 100000, 300);
	cache_dir(root, "-pwb2-aa", 100000, 200);
	f.cache_max = 420000; /* this image (~305 KB) and one of 100 KB */
	ASSERT_MSG(fx_fetch(&f) == 0, "%s", f.why.data);
	ASSERT_INTEQ(f.got.evicted, 1);
	ASSERT(!present(root, "-pwb1-aa"));
	ASSERT(present(root, "-pwb2-aa"));
	ASSERT(present(root, BID));
	free(root);
	fx_end(&f);
}
