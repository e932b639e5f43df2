/*
 * The runner, shared kernel builds (docs/KERNEL.md, "Shared builds"): a
 * build claimed instead of a job is made with the same kernel_build as a
 * job's kernel (the warm build tree of its configuration, the build id
 * the daemon gave), its files are uploaded to the daemon's artifact
 * store with their sha256, and the build is finished.  The heartbeat
 * thread keeps the build's lease and turns a cancel into a kill.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/files.h"
#include "common/http.h"
#include "common/log.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "runners/agent.h"
#include "runners/agent_int.h"
#include "runners/image.h"
#include "runners/kernel.h"

#define BUILD_LOG_MAX (1024 * 1024) /* the build.log artifact: the tail */
#define PUT_TRIES 5

/* A build being made: where its log goes. */
struct build_run {
	struct agent *a;
	int64_t id;
	struct buf tail; /* everything logged, the last BUILD_LOG_MAX */
};

static void
build_log_text(struct build_run *b, const char *text)
{
	struct buf clean = BUF_INIT(CAP_LOG_APPEND + 8);
	size_t add, drop;

	utf8_repair(&clean, text, strlen(text), CAP_LOG_APPEND);
	log_info("build %" PRId64 ": %s", b->id, clean.data);
	if (client_build_log(b->a->cl, b->id, clean.data) != 0)
		log_debug("build log: %s", client_errmsg(b->a->cl));
	/* Keep the newest BUILD_LOG_MAX bytes for build.log. */
	add = clean.len + 1;
	if (b->tail.len > 0 && b->tail.len + add > BUILD_LOG_MAX) {
		drop = b->tail.len + add - BUILD_LOG_MAX;
		if (drop > b->tail.len)
			drop = b->tail.len;
		memmove(b->tail.data, b->tail.data + drop, b->tail.len - drop);
		b->tail.len -= drop;
		b->tail.data[b->tail.len] = '\0';
	}
	if (add <= BUILD_LOG_MAX) {
		buf_add(&b->tail, clean.data, clean.len);
		buf_putc(&b->tail, '\n');
	}
	buf_release(&clean);
}

static void
build_log_cb(void *arg, const char *text)
{
	build_log_text(arg, text);
}

static void blog(struct build_run *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
blog(struct build_run *b, const char *fmt, ...)
{
	struct buf t = BUF_INIT(CAP_LOG_APPEND);
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&t, fmt, ap);
	va_end(ap);
	build_log_text(b, t.data);
	buf_release(&t);
}

/*
 * POST /builds/{id}/finish, retried while the daemon is away.  0, or
 * the last refusal's code.
 */
static int
build_finish(struct agent *a, int64_t id, json_t *body)
{
	int attempt = 0, rc;

	for (;;) {
		rc = client_build_finish(a->cl, id, body);
		if (rc != ERR_AGAIN || atomic_load(a->stop))
			break;
		http_sleep_ms(http_backoff_ms(&a->backoff, ++attempt), a->stop);
	}
	if (rc != 0)
		log_warnx(
		    "build %" PRId64 ": finish: %s", id, client_errmsg(a->cl));
	else
		log_info("build %" PRId64 ": finished: %s", id,
		    json_string_value(json_object_get(body, "status")));
	return rc;
}

static void
build_fail(struct build_run *b, const char *error)
{
	json_t *body = json_pack("{s:s, s:s}", "status", "failed", "error",
	    error != NULL ? error : "");

	blog(b, "build failed: %s", error);
	build_finish(b->a, b->id, body);
	json_decref(body);
}

/*
 * PUT of one file, retried while the daemon is away.  0, or the code of
 * the refusal (why set; ERR_CONFLICT: the lease is no longer ours).
 */
static int
put_file(
    struct build_run *b, const char *name, const char *path, struct buf *why)
{
	struct agent *a = b->a;
	char sha[65];
	int64_t size;
	int fd, rc = ERR_AGAIN, tries;

	if (image_file_sha256(sha, &size, path) != 0) {
		buf_printf(
		    why, "upload: %s: %s: %s", name, path, strerror(errno));
		return ERR_INVALID;
	}
	for (tries = 1; tries <= PUT_TRIES; tries++) {
		if (atomic_load(&a->kill))
			return ERR_AGAIN;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			buf_printf(why, "upload: %s: %s: %s", name, path,
			    strerror(errno));
			return ERR_INVALID;
		}
		rc = client_build_put(a->cl, b->id, name, fd, size, sha,
		    60000 + (long)(size / 262144) * 1000);
		close(fd);
		if (rc != ERR_AGAIN)
			break;
		log_warnx("build %" PRId64 ": upload %s: %s; retrying", b->id,
		    name, client_errmsg(a->cl));
		http_sleep_ms(http_backoff_ms(&a->backoff, tries), &a->kill);
	}
	if (rc == 0)
		blog(b, "upload: %s: %" PRId64 " bytes, sha256 %s", name, size,
		    sha);
	else
		buf_printf(why, "upload: %s: %s", name, client_errmsg(a->cl));
	return rc;
}

/* The directory part of path (the image directory of its files). */
static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
}

/* The build's files to the daemon.  0, or put_file's code (why). */
static int
put_files(struct build_run *b, const struct kernel_image *img, struct buf *why)
{
	char *dir = dir_of(img->image),
	     *logp = xasprintf(
	         "%s/build-%" PRId64 ".log", b->a->cfg->workdir, b->id);
	const char *names[] = { "bzImage", "System.map", "config", "meta",
		"gen_init_cpio", NULL };
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && names[i] != NULL; i++) {
		char *p = xasprintf("%s/%s", dir, names[i]);

		/* gen_init_cpio only when the tree built one. */
		if (strcmp(names[i], "gen_init_cpio") != 0 ||
		    img->gen_cpio[0] != '\0')
			rc = put_file(b, names[i], p, why);
		free(p);
	}
	if (rc == 0) {
		blog(b, "upload: build.log: the last %zu bytes of this log",
		    b->tail.len);
		if (files_write(logp, b->tail.data, b->tail.len) != 0) {
			buf_printf(why, "upload: build.log: %s: %s", logp,
			    strerror(errno));
			rc = ERR_INVALID;
		} else
			rc = put_file(b, "build.log", logp, why);
		unlink(logp);
	}
	free(logp);
	free(dir);
	return rc;
}

int
agent_i_run_build(struct agent *a, json_t *bo)
{
	const struct runner_config *cfg = a->cfg;
	struct build_run b = { a, 0, BUF_INIT(BUILD_LOG_MAX + 8) };
	struct kernel_req kr;
	struct kernel_image img;
	struct strlist frag = { NULL, 0 };
	struct buf why = BUF_INIT(CAP_ERRMSG * 4);
	struct err e = { 0 };
	json_t *tree, *kernel, *fo, *v, *body;
	const char *url = NULL, *commit = NULL, *pack = NULL, *config = NULL,
	           *build_id = NULL, *key = NULL, *cc = NULL;
	int64_t timeout_s = 7200, attempt = 1;
	char compiler[256], line[CAP_ERRMSG];
	size_t i;
	int rc, ret = 1;

	if (pwjson_int(&b.id, bo, "id", &e) != 0 || b.id <= 0) {
		log_warnx(
		    "claim: build: %s", e.set ? err_msg(&e) : "bad build id");
		goto out;
	}
	agent_i_set_build(a, b.id);
	agent_i_set_progress_text(a, "build");
	tree = json_object_get(bo, "tree");
	kernel = json_object_get(bo, "kernel");
	fo = json_object_get(kernel, "fragment");
	if (!json_is_object(tree) || !json_is_object(kernel) ||
	    pwjson_str(&url, tree, "url", &e) != 0 ||
	    pwjson_str(&commit, tree, "commit", &e) != 0 ||
	    pwjson_str_opt(&pack, tree, "pack", &e) != 0 ||
	    pwjson_str(&config, kernel, "config", &e) != 0 ||
	    pwjson_str_opt(&cc, kernel, "compiler", &e) != 0 ||
	    pwjson_int_opt(&timeout_s, kernel, "build_timeout_s", &e) != 0 ||
	    pwjson_str(&build_id, bo, "build_id", &e) != 0 ||
	    pwjson_str_opt(&key, bo, "key", &e) != 0 ||
	    pwjson_int_opt(&attempt, bo, "attempt", &e) != 0 ||
	    (fo != NULL && !json_is_null(fo) && !json_is_array(fo))) {
		buf_printf(&why, "claim: build: %s",
		    e.set ? err_msg(&e)
		          : "expected tree and kernel objects and a "
		            "fragment array");
		build_fail(&b, why.data);
		goto out;
	}
	frag.v = xcalloc(json_array_size(fo) + 1, sizeof(char *));
	json_array_foreach(fo, i, v)
	{
		if (!json_is_string(v)) {
			build_fail(&b,
			    "claim: build: kernel.fragment: "
			    "expected strings");
			goto out;
		}
		frag.v[frag.n++] = (char *)json_string_value(v);
	}
	if (cfg->kernel_tree == NULL) {
		buf_printf(&why,
		    "runner %s has no kernel_tree (runner.yaml): it cannot "
		    "build kernels; give it one, or build: false",
		    cfg->name);
		build_fail(&b, why.data);
		goto out;
	}
	blog(&b,
	    "build %" PRId64 " (attempt %" PRId64 ") on %s: %.12s of %s, "
	    "kernel.config %s, compiler %s, key %s, build id %s",
	    b.id, attempt, cfg->name, commit, url, config, cc ? cc : "gcc",
	    key ? key : "?", build_id);
	memset(&kr, 0, sizeof(kr));
	kr.kdir = cfg->kernel_tree;
	kr.url = url;
	kr.commit = commit;
	kr.pack.cl = a->cl;
	kr.pack.path = pack;
	kr.config = config;
	kr.fragment = &frag;
	kr.compiler = cc;
	kr.build_id = build_id;
	kr.timeout_ms = timeout_s * 1000;
	kr.cancel = &a->kill;
	kr.user = runas_user(&a->ra);
	kr.log = build_log_cb;
	kr.arg = &b;
	rc = kernel_build(&img, &kr, &why);
	if (rc == 1 || atomic_load(&a->kill)) {
		/* Cancelled, lease lost, or stopping: not ours to finish. */
		log_warnx("build %" PRId64 ": stopped", b.id);
		goto out;
	}
	if (rc != 0) {
		struct buf fb = BUF_INIT(CAP_ERRMSG * 4);

		buf_printf(&fb, "build: %s", why.data);
		build_fail(&b, fb.data);
		buf_release(&fb);
		goto out;
	}
	agent_i_kernel_line(line, sizeof(line), &img);
	build_log_text(&b, line);
	agent_i_set_progress_text(a, "upload");
	buf_reset(&why);
	rc = put_files(&b, &img, &why);
	if (rc == ERR_CONFLICT || atomic_load(&a->kill)) {
		log_warnx("build %" PRId64 ": %s; not finished here", b.id,
		    rc == ERR_CONFLICT ? why.data : "stopped");
		goto out;
	}
	if (rc != 0) {
		build_fail(&b, why.data);
		goto out;
	}
	kernel_compiler(compiler, sizeof(compiler), cc);
	body = json_pack("{s:s, s:s, s:s, s:f, s:b, s:s}", "status", "success",
	    "release", img.release, "config_sha256", img.config_sha256,
	    "build_s", img.build_s, "incremental", img.incremental, "compiler",
	    compiler);
	if (build_finish(a, b.id, body) == 0)
		ret = 0;
	json_decref(body);
out:
	agent_i_set_build(a, 0);
	free(frag.v);
	buf_release(&b.tail);
	buf_release(&why);
	return ret;
}
