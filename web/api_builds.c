/*
 * Shared kernel builds over HTTP (docs/API.md, "Shared builds"): a
 * builder's claim reply, lease, log, file uploads and finish; the
 * artifact downloads of the bench hosts; and the public reads of the
 * builds.  An upload is decided on its headers (name, hash, length,
 * lease, room in the store) before a body byte is read, and its body
 * streams into the artifact store's temporary file, hashed as it comes.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/artifacts.h"
#include "daemon/builds.h"
#include "daemon/dconf.h"
#include "store/builds.h"
#include "store/store.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"

#define SHA_HEADER "X-Perfwatch-Sha256"

/* ---- a builder's claim and heartbeat ---- */

int
api_builds_claim(struct ctx *x, int64_t host, const char *claim_id)
{
	struct store_build_claimed c;
	json_t *spec, *o;
	char bid[64];
	int r;

	r = builds_claim(x->a->sched, x->s, &c, host, claim_id);
	if (r == ERR_NOTFOUND)
		return 0;
	if (r != 0) {
		reply_store_err(x, r);
		return 1;
	}
	spec = pwjson_doc(c.spec_json, json_object());
	snprintf(bid, sizeof(bid), "-pwb%" PRId64 "-%s", c.id, c.instance);
	o = json_pack("{s:I, s:O, s:O, s:s, s:s, s:s, s:I}", "id",
	    (json_int_t)c.id, "tree", json_object_get(spec, "tree"), "kernel",
	    json_object_get(spec, "kernel"), "key", c.key, "build_id", bid,
	    "instance", c.instance, "attempt", (json_int_t)c.attempt);
	json_decref(spec);
	if (c.repeated)
		log_info("build %" PRId64 " (key %s) handed back to %s on its "
		         "repeated claim %s, attempt %" PRId64 " as before",
		    c.id, c.key, x->runner->ref->name, claim_id, c.attempt);
	else
		log_info("build %" PRId64 " (key %s) claimed by %s", c.id,
		    c.key, x->runner->ref->name);
	reply_json(x, 200,
	    json_pack("{s:o, s:I}", "build", o, "lease_expires",
	        (json_int_t)c.lease_expires));
	store_build_claimed_release(&c);
	return 1;
}

void
api_builds_heartbeat(struct ctx *x, int64_t host, int64_t build)
{
	int64_t exp = 0;
	int r = builds_heartbeat(x->a->sched, x->s, &exp, host, build);

	if (r == ERR_CONFLICT) {
		reply_json(x, 200,
		    json_pack("{s:n, s:b, s:n, s:s}", "lease_expires", "cancel",
		        1, "runs", "reason", store_errmsg(x->s)));
		return;
	}
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200,
	    json_pack("{s:I, s:b, s:n}", "lease_expires", (json_int_t)exp,
	        "cancel", 0, "runs"));
}

/* ---- uploads ---- */

/* An upload in progress: its file, and the room reserved for it in the
 * store, given back once its body was handled (api_builds_put), or when
 * the request ends without that (a client gone, a body too long). */
struct upload {
	struct artifact_put *put;
	int64_t reserved;
};

static int
put_write(void *arg, const void *data, size_t len)
{
	return artifacts_put_write(((struct upload *)arg)->put, data, len);
}

static void
put_close(void *arg)
{
	struct upload *u = arg;

	artifacts_put_free(u->put);
	builds_unreserve(u->reserved);
	free(u);
}

/* The Content-Length of the request: 0 and *out, or -1 when absent or
 * not a number. */
static int
content_length(struct ctx *x, uint64_t *out)
{
	const char *cl = httpd_header(x->r, "Content-Length");
	char *end;

	if (cl == NULL || *cl < '0' || *cl > '9')
		return -1;
	errno = 0;
	*out = strtoull(cl, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : 0;
}

size_t
api_builds_put_head(struct ctx *x)
{
	const struct daemon_config *dc = x->conf->dc;
	const char *name = x->rest, *sha = httpd_header(x->r, SHA_HEADER);
	struct artifact_put *p;
	struct upload *u;
	uint64_t len;
	int64_t host;
	int r;

	if (!store_build_file_name_ok(name)) {
		reply_err(x, 400,
		    "path: '%.64s' is not a build file (bzImage, System.map, "
		    "config, gen_init_cpio, meta, build.log)",
		    name);
		return 0;
	}
	if (sha == NULL || !artifacts_sha_ok(sha)) {
		reply_err(x, 400,
		    "header " SHA_HEADER ": expected 64 lowercase hex digits");
		return 0;
	}
	if (content_length(x, &len) == -1) {
		reply_err(x, 411, "header Content-Length: required");
		return 0;
	}
	if (len > (uint64_t)dc->builds.max_file) {
		reply_err(x, 413,
		    "body: %" PRIu64 " bytes, more than builds.max_file "
		    "(%" PRId64 ")",
		    len, dc->builds.max_file);
		return 0;
	}
	if (dc->builds.dir == NULL) {
		reply_err(x, 409, "builds.dir: no artifact store configured");
		return 0;
	}
	if ((x->s = api_thread_store(x->a, &x->err)) == NULL) {
		reply_err(x, 503, "database: %s", err_msg(&x->err));
		return 0;
	}
	if ((host = api_runner_host(x)) < 0)
		return 0;
	if ((r = store_build_held(x->s, host, x->id[0])) != 0) {
		reply_store_err(x, r);
		return 0;
	}
	/* Reserved before a body byte is taken: uploads at once cannot
	 * each pass the room check and together pass max_size. */
	r = builds_reserve(
	    x->s, dc->builds.dir, (int64_t)len, dc->builds.max_size);
	if (r == ERR_TOOBIG) {
		reply_err(x, 413, "%s", store_errmsg(x->s));
		return 0;
	}
	if (r != 0) {
		reply_store_err(x, r);
		return 0;
	}
	if (artifacts_put_begin(&p, dc->builds.dir, &x->err) == -1) {
		builds_unreserve((int64_t)len);
		reply_err(x, 500, "%s", err_msg(&x->err));
		return 0;
	}
	u = xcalloc(1, sizeof(*u));
	u->put = p;
	u->reserved = (int64_t)len;
	httpd_sink(x->r, put_write, put_close, u, len);
	return SIZE_MAX;
}

/* The upload's body is all there: checked, stored, counted. */
static void
put_body(struct ctx *x, struct upload *u)
{
	struct artifact_put *p = u != NULL ? u->put : NULL;
	const char *want = httpd_header(x->r, SHA_HEADER);
	char sha[65];
	uint64_t len = 0, size;
	int64_t host;
	int r;

	if (p == NULL || want == NULL) {
		reply_err(x, 500, "upload: no body was taken");
		return;
	}
	if (httpd_sink_failed(x->r)) {
		reply_err(x, 500, "artifact store: a write failed");
		return;
	}
	size = artifacts_put_size(p);
	if (content_length(x, &len) == -1 || len != size) {
		reply_err(x, 400,
		    "body: %" PRIu64 " bytes, Content-Length said %" PRIu64,
		    size, len);
		return;
	}
	r = artifacts_put_commit(p, sha, want, &x->err);
	if (r != 0) {
		reply_err(
		    x, r == ERR_INVALID ? 400 : 500, "%s", err_msg(&x->err));
		return;
	}
	if ((host = api_runner_host(x)) < 0)
		return;
	r = store_build_file(
	    x->s, host, x->id[0], x->rest, sha, (int64_t)size, api_now_s());
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	log_info("build %" PRId64 ": %s stored (%" PRIu64 " bytes, %s)",
	    x->id[0], x->rest, size, sha);
	reply_json(x, 201,
	    json_pack("{s:s, s:I}", "sha256", sha, "size", (json_int_t)size));
}

void
api_builds_put(struct ctx *x)
{
	struct upload *u = httpd_sink_arg(x->r);

	put_body(x, u);
	/* Counted in the store, or refused: the room goes back before the
	 * reply does, so the builder's next upload finds it. */
	if (u != NULL) {
		builds_unreserve(u->reserved);
		u->reserved = 0;
	}
}

/* ---- log and finish ---- */

void
api_builds_log(struct ctx *x)
{
	size_t len, kept = 0;
	const char *text = httpd_body(x->r, &len);
	int64_t host;
	int r;

	if (len > CAP_LOG_APPEND) {
		reply_err(x, 400,
		    "body: %zu bytes, more than the %d a log "
		    "append takes",
		    len, CAP_LOG_APPEND);
		return;
	}
	if ((host = api_runner_host(x)) < 0)
		return;
	r = store_build_log(
	    x->s, &kept, host, x->id[0], text ? text : "", len, api_now_s());
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, json_pack("{s:I}", "stored", (json_int_t)kept));
}

void
api_builds_finish(struct ctx *x)
{
	static const char *const keys[] = { "status", "error", "release",
		"config_sha256", "build_s", "incremental", "compiler", NULL };
	struct store_build_result res = { 0 };
	const char *status = NULL;
	int64_t host;
	int inc = -1, nfail = 0, r;

	res.build_s = -1;
	if (api_parse_body(x, 0) == -1 ||
	    api_only_keys(x, x->body, keys, "body") == -1)
		return;
	if (api_str_field(x, &status, x->body, "status", 16, 0, "") == -1 ||
	    api_str_field(
	        x, &res.error, x->body, "error", CAP_ERRMSG * 8, 1, "") == -1 ||
	    api_str_field(x, &res.release, x->body, "release", 256, 1, "") ==
	        -1 ||
	    api_str_field(x, &res.config_sha256, x->body, "config_sha256", 64,
	        1, "") == -1 ||
	    api_str_field(x, &res.compiler, x->body, "compiler", 256, 1, "") ==
	        -1)
		return;
	if (pwjson_num_opt(&res.build_s, x->body, "build_s", &x->err) == -1 ||
	    pwjson_bool_opt(&inc, x->body, "incremental", &x->err) == -1) {
		api_bad(x);
		return;
	}
	if (json_object_get(x->body, "build_s") != NULL &&
	    (!isfinite(res.build_s) || res.build_s < 0)) {
		reply_err(x, 400, "field 'build_s': expected seconds >= 0");
		return;
	}
	res.incremental = json_object_get(x->body, "incremental") ? inc : -1;
	if (strcmp(status, "success") == 0)
		res.ok = 1;
	else if (strcmp(status, "failed") != 0 &&
	    strcmp(status, "failure") != 0) {
		reply_err(x, 400, "field 'status': expected success or failed");
		return;
	}
	if (!res.ok && (res.error == NULL || res.error[0] == '\0'))
		res.error = "failed";
	if ((host = api_runner_host(x)) < 0)
		return;
	r = builds_finish(x->a->sched, x->s, &nfail, host, x->id[0], &res);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	log_info("build %" PRId64 " finished by %s: %s%s", x->id[0],
	    x->runner->ref->name, res.ok ? "success" : "failed",
	    nfail > 0 ? " (its waiting jobs failed)" : "");
	reply_json(x, 200,
	    json_pack("{s:I, s:s, s:i}", "id", (json_int_t)x->id[0], "state",
	        res.ok ? "success" : "failed", "jobs_failed", nfail));
}

/* POST /api/v1/builds/{id}/cancel: the operator stops a queued or
 * running build; the jobs waiting on it fail, saying so. */
void
api_builds_cancel(struct ctx *x)
{
	int nfail = 0, r = builds_cancel(x->a->sched, x->s, &nfail, x->id[0]);

	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	log_info("build %" PRId64 " cancelled by the operator (%d waiting "
	         "job(s) failed)",
	    x->id[0], nfail);
	reply_json(x, 200,
	    json_pack("{s:I, s:s, s:i}", "id", (json_int_t)x->id[0], "state",
	        "cancelled", "jobs_failed", nfail));
}

/* ---- downloads ---- */

/* "bytes=N-" or "bytes=N-M" into [*from, *to]; 0, or -1 when range is
 * another form (then the whole file is sent). */
static int
parse_range(const char *range, uint64_t size, uint64_t *from, uint64_t *to)
{
	char *end;

	if (range == NULL || strncmp(range, "bytes=", 6) != 0 ||
	    range[6] < '0' || range[6] > '9')
		return -1;
	errno = 0;
	*from = strtoull(range + 6, &end, 10);
	if (errno != 0 || *end != '-')
		return -1;
	end++;
	if (*end == '\0') {
		*to = size > 0 ? size - 1 : 0;
		return 0;
	}
	if (*end < '0' || *end > '9')
		return -1;
	*to = strtoull(end, &end, 10);
	if (errno != 0 || *end != '\0' || *to < *from)
		return -1;
	if (*to >= size && size > 0)
		*to = size - 1;
	return 0;
}

void
api_artifact_get(struct ctx *x)
{
	const char *dir = x->conf->dc->builds.dir, *sha = x->rest;
	uint64_t size = 0, from = 0, to = 0;
	int64_t stored = 0;
	char etag[70], cr[96];
	int fd, r, ranged;

	if (!artifacts_sha_ok(sha)) {
		reply_err(x, 400,
		    "path: '%.80s' is not a sha256 (64 lowercase hex digits)",
		    sha);
		return;
	}
	r = store_artifact_use(x->s, &stored, sha, api_now_s());
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	if (dir == NULL || (fd = artifacts_open(dir, sha, &size)) < 0) {
		reply_err(
		    x, 404, "artifact %s: not in the artifact store", sha);
		return;
	}
	snprintf(etag, sizeof(etag), "\"%s\"", sha);
	ranged =
	    parse_range(httpd_header(x->r, "Range"), size, &from, &to) == 0;
	if (ranged && from >= size) {
		close(fd);
		snprintf(cr, sizeof(cr), "bytes */%" PRIu64, size);
		httpd_reply_header(x->r, "Content-Range", cr);
		reply_err(x, 416,
		    "header Range: starts at %" PRIu64
		    ", past the end of %" PRIu64 " bytes",
		    from, size);
		return;
	}
	httpd_reply_header(x->r, "ETag", etag);
	httpd_reply_header(x->r, "Accept-Ranges", "bytes");
	if (ranged) {
		snprintf(cr, sizeof(cr),
		    "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, from, to, size);
		httpd_reply_header(x->r, "Content-Range", cr);
		httpd_reply_fd(x->r, 206, "application/octet-stream", fd, from,
		    to - from + 1);
		__atomic_add_fetch(&x->a->artifact_bytes_served, to - from + 1,
		    __ATOMIC_RELAXED);
		return;
	}
	httpd_reply_fd(x->r, 200, "application/octet-stream", fd, 0, size);
	__atomic_add_fetch(
	    &x->a->artifact_bytes_served, size, __ATOMIC_RELAXED);
}

/* ---- reads ---- */

static json_t *
time_or_null(int64_t t)
{
	return t > 0 ? json_integer(t) : json_null();
}

static json_t *
str_or_null(const char *s)
{
	return s != NULL ? pwjson_string_lossy(s) : json_null();
}

json_t *
api_build_json(struct ctx *x, const struct store_build_row *b)
{
	json_t *o, *frag;
	char bid[64];

	if (store_build_id_text(x->s, bid, sizeof(bid), b->id) != 0)
		snprintf(bid, sizeof(bid), "-pwb%" PRId64, b->id);
	frag = pwjson_doc(b->fragment_json, json_array());
	o = json_pack("{s:I, s:o, s:o, s:s, s:o, s:o, s:s, s:o, s:I,"
	              " s:I, s:o, s:o, s:o, s:I, s:o, s:s, s:o, s:o,"
	              " s:b, s:o}",
	    "id", (json_int_t)b->id, "tree", str_or_null(b->url), "commit",
	    str_or_null(b->sha), "key", b->key ? b->key : "", "config",
	    str_or_null(b->config), "fragment", frag, "state",
	    b->state ? b->state : "", "builder", str_or_null(b->host),
	    "attempts", (json_int_t)b->attempts, "created",
	    (json_int_t)b->created, "started", time_or_null(b->started),
	    "finished", time_or_null(b->finished), "build_s",
	    isnan(b->build_s) ? json_null() : json_real(b->build_s), "size",
	    (json_int_t)b->size, "release", str_or_null(b->release), "build_id",
	    bid, "error", str_or_null(b->error), "compiler",
	    str_or_null(b->compiler), "evicted", b->evicted, "incremental",
	    b->incremental < 0 ? json_null() : json_boolean(b->incremental));
	/* The key's compiler; "compiler" is the version line the builder
	 * reported. */
	json_object_set_new(o, "cc", str_or_null(b->cc));
	return o;
}

int
api_jobs_build_json(
    struct store *s, const int64_t *job_ids, size_t n, json_t **out)
{
	struct store_job_build *b = xcalloc(n + 1, sizeof(*b));
	char bid[64];
	size_t i;
	int r;

	for (i = 0; i < n; i++)
		out[i] = NULL;
	if ((r = store_job_build_get_many(s, b, job_ids, n)) != 0) {
		free(b);
		return r;
	}
	for (i = 0; i < n; i++) {
		if (b[i].id == 0) {
			out[i] = json_null();
			continue;
		}
		if (store_build_id_text(s, bid, sizeof(bid), b[i].id) != 0)
			snprintf(bid, sizeof(bid), "-pwb%" PRId64, b[i].id);
		out[i] = json_pack("{s:I, s:s, s:s, s:o}", "id",
		    (json_int_t)b[i].id, "state", b[i].state ? b[i].state : "",
		    "build_id", bid, "error", str_or_null(b[i].error));
		store_job_build_release(&b[i]);
	}
	free(b);
	return 0;
}

int
api_job_build_json(struct store *s, int64_t job_id, json_t **out)
{
	return api_jobs_build_json(s, &job_id, 1, out);
}

void
api_read_builds(struct ctx *x)
{
	static const char *const states[] = { "queued", "running", "success",
		"failed", "cancelled", NULL };
	const char *state = httpd_query(x->r, "state");
	struct store_builds l;
	int64_t limit, cursor;
	json_t *arr;
	size_t i;
	int r;

	if (state != NULL && *state == '\0')
		state = NULL;
	if (state != NULL) {
		for (i = 0; states[i] != NULL; i++)
			if (strcmp(state, states[i]) == 0)
				break;
		if (states[i] == NULL) {
			reply_err(x, 400,
			    "parameter 'state': expected queued, running, "
			    "success, failed or cancelled");
			return;
		}
	}
	if (api_query_page(x, &limit, &cursor) == -1)
		return;
	if ((r = store_build_list(x->s, &l, state, limit, cursor)) != 0) {
		reply_store_err(x, r);
		return;
	}
	arr = json_array();
	for (i = 0; i < l.n; i++)
		json_array_append_new(arr, api_build_json(x, &l.v[i]));
	reply_json(x, 200,
	    json_pack("{s:o, s:o}", "builds", arr, "next_cursor",
	        l.next_cursor > 0 ? json_integer(l.next_cursor) : json_null()));
	store_builds_release(&l);
}

void
api_read_build(struct ctx *x)
{
	struct store_build_row b;
	json_t *o, *files, *jobs;
	size_t i;
	int r;

	if ((r = store_build_get(x->s, &b, x->id[0])) != 0) {
		reply_store_err(x, r);
		return;
	}
	o = api_build_json(x, &b);
	files = json_object();
	for (i = 0; i < b.nfiles; i++)
		json_object_set_new(files, b.files[i].name,
		    json_pack("{s:s, s:I}", "sha256", b.files[i].sha256, "size",
		        (json_int_t)b.files[i].size));
	jobs = json_array();
	for (i = 0; i < b.nwaiters; i++)
		json_array_append_new(jobs,
		    json_pack("{s:I, s:o, s:s, s:s}", "id",
		        (json_int_t)b.waiters[i].job_id, "pair_id",
		        b.waiters[i].pair_id > 0
		            ? json_integer(b.waiters[i].pair_id)
		            : json_null(),
		        "role", b.waiters[i].role ? b.waiters[i].role : "",
		        "state", b.waiters[i].state ? b.waiters[i].state : ""));
	json_object_set_new(o, "files", files);
	json_object_set_new(o, "jobs", jobs);
	json_object_set_new(o, "log", str_or_null(b.log));
	store_build_row_release(&b);
	reply_json(x, 200, o);
}

/* ---- /metrics ---- */

void
api_builds_metrics(struct ctx *x, struct buf *b)
{
	static const char *const states[] = { "queued", "running", "success",
		"failed", "cancelled" };
	int64_t by[5], reuses = 0, bytes = 0;
	size_t i;

	if (store_builds_counts(x->s, by, &reuses) != 0 ||
	    store_artifacts_bytes(x->s, &bytes) != 0)
		return;
	buf_puts(b,
	    "# HELP perfwatch_builds_total Shared kernel builds by state.\n"
	    "# TYPE perfwatch_builds_total gauge\n");
	for (i = 0; i < 5; i++) {
		buf_puts(b, "perfwatch_builds_total{state=\"");
		buf_puts(b, states[i]);
		buf_printf(b, "\"} %" PRId64 "\n", by[i]);
	}
	buf_printf(b,
	    "# HELP perfwatch_build_reuses_total Kernel jobs linked to a "
	    "build that existed.\n"
	    "# TYPE perfwatch_build_reuses_total counter\n"
	    "perfwatch_build_reuses_total %" PRId64 "\n"
	    "# HELP perfwatch_artifact_bytes_served_total Artifact bytes "
	    "handed to runners.\n"
	    "# TYPE perfwatch_artifact_bytes_served_total counter\n"
	    "perfwatch_artifact_bytes_served_total %" PRIu64 "\n"
	    "# HELP perfwatch_artifact_store_bytes Bytes the artifact "
	    "store holds.\n"
	    "# TYPE perfwatch_artifact_store_bytes gauge\n"
	    "perfwatch_artifact_store_bytes %" PRId64 "\n",
	    reuses,
	    __atomic_load_n(&x->a->artifact_bytes_served, __ATOMIC_RELAXED),
	    bytes);
}
