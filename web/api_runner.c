/*
 * The runner routes (docs/API.md, "Runner routes"): register, heartbeat,
 * the long-poll claim, run upload, log, finish, and the packs of series
 * commits.  Each needs the calling runner's token (web/api.c checks it)
 * and, past register, a registered host.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/clock.h"
#include "common/cpufamily.h"
#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "daemon/packs.h"
#include "daemon/sched.h"
#include "store/batch.h"
#include "store/claim.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/store.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"
#include "web/rows.h"

#define PROGRESS_MAX 256

/* ---- runner routes ---- */

static int
check_inventory(struct ctx *x, json_t *inv)
{
	static const char *const strs[] = { "cpu_model", "cpu_vendor", "kernel",
		NULL };
	static const char *const ints[] = { "sockets", "cores", "threads",
		"numa_nodes", "memory_bytes", NULL };
	const char *cg = NULL;
	json_t *v;
	int i;

	if (!json_is_object(inv)) {
		reply_err(x, 400, "field 'inventory': expected an object");
		return -1;
	}
	for (i = 0; strs[i]; i++)
		if ((v = json_object_get(inv, strs[i])) != NULL &&
		    !json_is_null(v) &&
		    (!json_is_string(v) || json_string_length(v) > CAP_NAME)) {
			reply_err(x, 400,
			    "field 'inventory.%s': expected a string of at "
			    "most %d bytes",
			    strs[i], CAP_NAME);
			return -1;
		}
	for (i = 0; ints[i]; i++)
		if ((v = json_object_get(inv, ints[i])) != NULL &&
		    !json_is_null(v) &&
		    (!json_is_integer(v) || json_integer_value(v) < 0)) {
			reply_err(x, 400,
			    "field 'inventory.%s': expected a non-negative "
			    "integer",
			    ints[i]);
			return -1;
		}
	if (api_str_field(x, &cg, inv, "cgroup", 8, 1, "inventory.") == -1)
		return -1;
	if (cg != NULL && strcmp(cg, "v1") != 0 && strcmp(cg, "v2") != 0 &&
	    strcmp(cg, "none") != 0) {
		reply_err(x, 400,
		    "field 'inventory.cgroup': expected v1, v2 or none");
		return -1;
	}
	if (json_dumpb(inv, NULL, 0, JSON_COMPACT) > 64 * 1024) {
		reply_err(x, 400, "field 'inventory': larger than 64 KiB");
		return -1;
	}
	return 0;
}

static int
check_reported_labels(struct ctx *x, json_t *v)
{
	size_t i;

	if (!json_is_array(v) || json_array_size(v) > 64) {
		reply_err(x, 400,
		    "field 'labels': expected an array of at most 64 strings");
		return -1;
	}
	for (i = 0; i < json_array_size(v); i++) {
		json_t *l = json_array_get(v, i);

		if (!json_is_string(l) || json_string_length(l) == 0 ||
		    json_string_length(l) > CAP_NAME) {
			reply_err(x, 400,
			    "field 'labels[%zu]': expected a non-empty string",
			    i);
			return -1;
		}
	}
	return 0;
}

/*
 * vendor:<v> and family:<f> from the CPU the runner reports in its
 * inventory (common/cpufamily.h), after the configured labels: a job's
 * hosts: can pin a CPU generation.  They say what the runner reported,
 * as the inventory on /hosts does; unknown when it names no known CPU.
 */
static void
add_derived_labels(json_t *labels, json_t *inv)
{
	char vendor[CPUFAMILY_LABEL_MAX], family[CPUFAMILY_LABEL_MAX];

	cpufamily_labels(json_string_value(json_object_get(inv, "cpu_model")),
	    json_string_value(json_object_get(inv, "cpu_vendor")), vendor,
	    family);
	json_array_append_new(labels, json_string(vendor));
	json_array_append_new(labels, json_string(family));
}

void
api_runner_register(struct ctx *x)
{
	static const char *const keys[] = { "name", "labels", "inventory",
		NULL };
	const struct cfg_runner_ref *ref = x->runner->ref;
	const char *name = NULL;
	json_t *labels, *inv, *reported;
	char *ltext, *itext;
	int64_t id = 0;
	size_t i;
	int r;

	if (api_parse_body(x, 0) == -1 ||
	    api_only_keys(x, x->body, keys, "body") == -1)
		return;
	if (api_str_field(x, &name, x->body, "name", CAP_NAME, 0, "") == -1)
		return;
	if (strcmp(name, ref->name) != 0) {
		reply_err(x, 403,
		    "field 'name': '%s' does not match this token's runner",
		    name);
		return;
	}
	/* Scheduling trusts only the daemon's configuration for this token:
	 * labels the runner reports are checked and kept in its inventory
	 * (shown on /hosts), but never widen the jobs it may claim. */
	labels = json_array();
	for (i = 0; i < ref->labels.n; i++)
		json_array_append_new(labels, json_string(ref->labels.v[i]));
	reported = json_object_get(x->body, "labels");
	if (reported != NULL && !json_is_null(reported) &&
	    check_reported_labels(x, reported) == -1) {
		json_decref(labels);
		return;
	}
	inv = json_object_get(x->body, "inventory");
	if (inv == NULL || json_is_null(inv)) {
		inv = json_object();
	} else {
		if (check_inventory(x, inv) == -1) {
			json_decref(labels);
			return;
		}
		inv = json_deep_copy(inv);
	}
	if (reported != NULL && json_is_array(reported) &&
	    json_array_size(reported) > 0)
		json_object_set(inv, "reported_labels", reported);
	add_derived_labels(labels, inv);
	ltext = pwjson_dump(labels);
	itext = pwjson_dump(inv);
	r = store_host_register(x->s, &id, name, ltext, itext, api_now_s());
	free(ltext);
	free(itext);
	json_decref(labels);
	json_decref(inv);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	log_info("runner %s registered from %s (host %" PRId64 ")", name,
	    httpd_peer(x->r), id);
	sched_notify(x->a->sched);
	reply_json(x, 200,
	    json_pack("{s:I, s:I, s:I}", "host_id", (json_int_t)id,
	        "heartbeat_s", (json_int_t)api_heartbeat_s(x->conf), "lease_s",
	        (json_int_t)sched_lease_s(x->a->sched)));
}

void
api_runner_heartbeat(struct ctx *x)
{
	static const char *const keys[] = { "job_id", "progress", "boot_s",
		"build_id", NULL };
	int64_t job = 0, host, exp = 0, runs = 0, boot_s = 0, build = 0;
	const char *progress = NULL;
	int r;

	if (api_parse_body(x, 1) == -1 ||
	    api_only_keys(x, x->body, keys, "body") == -1)
		return;
	if (pwjson_int_opt(&job, x->body, "job_id", &x->err) == -1 ||
	    pwjson_int_opt(&build, x->body, "build_id", &x->err) == -1 ||
	    pwjson_int_opt(&boot_s, x->body, "boot_s", &x->err) == -1) {
		api_bad(x);
		return;
	}
	if (boot_s < 0 || boot_s > 86400) {
		reply_err(x, 400, "field 'boot_s': expected 0..86400 seconds");
		return;
	}
	if (job < 0) {
		reply_err(x, 400, "field 'job_id': expected a job id");
		return;
	}
	if (build < 0 || (build > 0 && job > 0)) {
		reply_err(x, 400,
		    "field 'build_id': expected a build id, and no job_id "
		    "beside it");
		return;
	}
	if (api_str_field(
	        x, &progress, x->body, "progress", PROGRESS_MAX, 1, "") == -1)
		return;
	if ((host = api_runner_host(x)) < 0)
		return;
	if (build > 0) {
		api_builds_heartbeat(x, host, build);
		return;
	}
	r = sched_heartbeat_boot(
	    x->a->sched, x->s, &exp, &runs, host, job, progress, boot_s);
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
	if (job == 0)
		reply_json(x, 200,
		    json_pack("{s:n, s:b, s:n}", "lease_expires", "cancel", 0,
		        "runs"));
	else
		reply_json(x, 200,
		    json_pack("{s:I, s:b, s:I}", "lease_expires",
		        (json_int_t)exp, "cancel", 0, "runs",
		        (json_int_t)runs));
}

/* Long-poll state kept on the request between handler calls. */
struct claim_state {
	int64_t deadline_ms;
	int pairs;  /* the runner measures a pair's jobs in turns */
	int builds; /* the runner may build kernels (shared builds) */
	/* The runner's key for this claim, "" for none (docs/API.md). */
	char claim_id[STORE_CLAIM_ID_MAX + 1];
};

/*
 * The claim's optional "claim_id" into out ("" when absent): 1 to
 * STORE_CLAIM_ID_MAX letters, digits, '-' or '_', since it is kept in
 * the database and named in logs.  -1 after a 400 reply.
 */
static int
claim_id_field(struct ctx *x, char out[STORE_CLAIM_ID_MAX + 1])
{
	const char *v = NULL;
	size_t i;

	out[0] = '\0';
	if (api_str_field(
	        x, &v, x->body, "claim_id", STORE_CLAIM_ID_MAX, 1, "") == -1)
		return -1;
	if (v == NULL)
		return 0;
	for (i = 0; v[i] != '\0'; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') ||
		        (v[i] >= 'A' && v[i] <= 'Z') ||
		        (v[i] >= '0' && v[i] <= '9') || v[i] == '-' ||
		        v[i] == '_'))
			break;
	if (i == 0 || v[i] != '\0') {
		reply_err(x, 400,
		    "field 'claim_id': expected 1 to %d letters, digits, '-' "
		    "or '_'",
		    STORE_CLAIM_ID_MAX);
		return -1;
	}
	memcpy(out, v, i + 1);
	return 0;
}

static void
park(struct ctx *x, int64_t deadline_ms)
{
	struct api *a = x->a;

	/* Under the lock, so the ticker cannot unpark before the park. */
	pthread_mutex_lock(&a->mu);
	a->waiters =
	    xreallocarray(a->waiters, a->nwaiters + 1, sizeof(*a->waiters));
	a->waiters[a->nwaiters].req = x->r;
	a->waiters[a->nwaiters].deadline_ms = deadline_ms;
	a->nwaiters++;
	httpd_park(x->r);
	pthread_mutex_unlock(&a->mu);
}

void
api_runner_claim(struct ctx *x)
{
	static const char *const keys[] = { "wait_s", "pairs", "builds",
		"claim_id", NULL };
	struct claim_state *cs = *httpd_slot(x->r);
	int64_t wait = 0, host;
	struct store_claimed c;
	char claim_id[STORE_CLAIM_ID_MAX + 1];
	const char *key;
	int r, stopping, pairs = 0, builds = 1;

	if (cs == NULL) {
		if (api_parse_body(x, 1) == -1 ||
		    api_only_keys(x, x->body, keys, "body") == -1)
			return;
		if (pwjson_int_opt(&wait, x->body, "wait_s", &x->err) == -1 ||
		    pwjson_bool_opt(&pairs, x->body, "pairs", &x->err) == -1 ||
		    pwjson_bool_opt(&builds, x->body, "builds", &x->err) ==
		        -1) {
			api_bad(x);
			return;
		}
		if (claim_id_field(x, claim_id) == -1)
			return;
		if (wait < 0) {
			reply_err(x, 400, "field 'wait_s': must be >= 0");
			return;
		}
		if (wait > sched_claim_wait_s(x->a->sched))
			wait = sched_claim_wait_s(x->a->sched);
		cs = xcalloc(1, sizeof(*cs));
		cs->deadline_ms = clock_mono_ms() + wait * 1000;
		cs->pairs = pairs;
		cs->builds = builds;
		memcpy(cs->claim_id, claim_id, sizeof(cs->claim_id));
		*httpd_slot(x->r) = cs;
	}
	if ((host = api_runner_host(x)) < 0)
		return;
	/* Builds first: the bench jobs waiting on one are not claimable
	 * before it succeeded anyway. */
	key = cs->claim_id[0] != '\0' ? cs->claim_id : NULL;
	if (cs->builds && api_builds_claim(x, host, key))
		return;
	r = sched_claim_as(
	    x->a->sched, x->s, &c, host, cs->pairs, cs->builds, key);
	if (r == 0) {
		if (c.repeated)
			log_info("job %" PRId64
			         " (%s) handed back to %s on its "
			         "repeated claim %s, attempt %" PRId64
			         " as before%s",
			    c.job_id, c.role, x->runner->ref->name,
			    cs->claim_id, c.attempt,
			    c.partner != NULL ? ", with its pair's other job"
			                      : "");
		else
			log_info("job %" PRId64 " (%s) claimed by %s%s",
			    c.job_id, c.role, x->runner->ref->name,
			    c.partner != NULL ? ", with its pair's other job"
			                      : "");
		reply_json(x, 200, rows_claim_json(&c));
		store_claimed_release(&c);
		return;
	}
	if (r != ERR_NOTFOUND) {
		reply_store_err(x, r);
		return;
	}
	pthread_mutex_lock(&x->a->mu);
	stopping = x->a->stopping;
	pthread_mutex_unlock(&x->a->mu);
	if (stopping || clock_mono_ms() >= cs->deadline_ms) {
		httpd_reply(x->r, 204, "application/json", "", 0);
		return;
	}
	park(x, cs->deadline_ms);
}

/* The number in the path for a job route; replies 404 when missing. */
static int
job_path(struct ctx *x, int64_t *out)
{
	*out = x->id[0];
	return 0;
}

static int
parse_metric(struct ctx *x, struct store_metric *m, json_t *o, size_t i)
{
	static const char *const keys[] = { "name", "value", "unit", "better",
		NULL };
	char pfx[64];
	json_t *v;

	snprintf(pfx, sizeof(pfx), "metrics[%zu].", i);
	if (!json_is_object(o)) {
		reply_err(
		    x, 400, "field 'metrics[%zu]': expected an object", i);
		return -1;
	}
	snprintf(pfx, sizeof(pfx), "metrics[%zu]", i);
	if (api_only_keys(x, o, keys, pfx) == -1)
		return -1;
	snprintf(pfx, sizeof(pfx), "metrics[%zu].", i);
	m->unit = NULL;
	if (api_str_field(x, &m->name, o, "name", CAP_NAME, 0, pfx) == -1 ||
	    api_str_field(x, &m->unit, o, "unit", 64, 1, pfx) == -1 ||
	    api_str_field(x, &m->better, o, "better", 16, 0, pfx) == -1)
		return -1;
	if (m->name[0] == '\0') {
		reply_err(x, 400, "field '%sname': empty", pfx);
		return -1;
	}
	/* info: shown, never judged (memcg telemetry, docs/MEMCG.md). */
	if (strcmp(m->better, "higher") != 0 &&
	    strcmp(m->better, "lower") != 0 && strcmp(m->better, "info") != 0) {
		reply_err(x, 400,
		    "field '%sbetter': expected higher, lower or info", pfx);
		return -1;
	}
	v = json_object_get(o, "value");
	if (v == NULL || !json_is_number(v)) {
		reply_err(x, 400, "field '%svalue': expected a number", pfx);
		return -1;
	}
	m->value = json_number_value(v);
	return 0;
}

/* The batch writer has stored (or refused) a parked upload. */
static void
upload_done(void *arg)
{
	httpd_unpark(arg);
}

/* Called again once the upload's batch committed: the reply. */
static void
run_reply(struct ctx *x, const struct store_upload *u)
{
	const char *msg;
	int r = store_upload_result(u, &msg);

	if (r == 0) {
		__atomic_add_fetch(&x->a->runs_stored, 1, __ATOMIC_RELAXED);
		reply_json(x, 201, json_pack("{s:b}", "stored", 1));
	} else if (r == ERR_EXISTS) {
		reply_json(x, 200, json_pack("{s:b}", "stored", 0));
	} else {
		reply_err(
		    x, reply_status_of(r), "%s", msg[0] ? msg : "store error");
	}
}

void
api_runner_run(struct ctx *x)
{
	static const char *const keys[] = { "index", "status", "duration_s",
		"metrics", "raw", "error", "profile", "host_state", NULL };
	struct buf hstate = BUF_INIT(CAP_HOST_STATE);
	struct store_run run;
	struct store_metric *ms = NULL;
	struct buf prof = BUF_INIT(CAP_PROFILE_BLOB);
	struct store_upload *u = *httpd_slot(x->r);
	json_t *arr, *raw, *pj;
	int64_t host;
	size_t i, n = 0;

	if (u != NULL) {
		run_reply(x, u);
		return;
	}
	memset(&run, 0, sizeof(run));
	job_path(x, &run.job_id);
	if (api_parse_body(x, 0) == -1 ||
	    api_only_keys(x, x->body, keys, "body") == -1)
		goto out;
	run.duration_s = -1;
	if (pwjson_int(&run.index, x->body, "index", &x->err) == -1 ||
	    pwjson_num_opt(&run.duration_s, x->body, "duration_s", &x->err) ==
	        -1) {
		api_bad(x);
		goto out;
	}
	if (api_str_field(x, &run.status, x->body, "status", 16, 0, "") == -1 ||
	    api_str_field(
	        x, &run.error, x->body, "error", CAP_ERRMSG * 8, 1, "") == -1)
		goto out;
	if (strcmp(run.status, "ok") != 0 &&
	    strcmp(run.status, "failed") != 0) {
		reply_err(x, 400, "field 'status': expected ok or failed");
		goto out;
	}
	if (json_object_get(x->body, "duration_s") != NULL &&
	    !json_is_null(json_object_get(x->body, "duration_s")) &&
	    run.duration_s < 0) {
		reply_err(x, 400, "field 'duration_s': must be >= 0");
		goto out;
	}
	raw = json_object_get(x->body, "raw");
	if (raw != NULL && !json_is_null(raw)) {
		if (!json_is_string(raw)) {
			reply_err(x, 400, "field 'raw': expected a string");
			goto out;
		}
		run.raw = json_string_value(raw);
		run.raw_len = json_string_length(raw);
	}
	/* The profiled run's blob: an object, kept as compact JSON. */
	pj = json_object_get(x->body, "profile");
	if (pj != NULL && !json_is_null(pj)) {
		if (!json_is_object(pj)) {
			reply_err(
			    x, 400, "field 'profile': expected an object");
			goto out;
		}
		if (pwjson_dump_buf(&prof, pj) != 0) {
			reply_err(x, 400, "field 'profile': more than %d bytes",
			    CAP_PROFILE_BLOB);
			goto out;
		}
		run.profile = prof.data;
	}
	/* The host state the run ran under (docs/HOST.md). */
	pj = json_object_get(x->body, "host_state");
	if (pj != NULL && !json_is_null(pj)) {
		if (!json_is_object(pj) || pwjson_dump_buf(&hstate, pj) != 0) {
			reply_err(x, 400,
			    "field 'host_state': expected an object of at "
			    "most %d bytes",
			    CAP_HOST_STATE);
			goto out;
		}
		run.host_state = hstate.data;
	}
	arr = json_object_get(x->body, "metrics");
	if (arr != NULL && !json_is_null(arr)) {
		if (!json_is_array(arr)) {
			reply_err(x, 400, "field 'metrics': expected an array");
			goto out;
		}
		n = json_array_size(arr);
		if (n > CAP_METRICS_PER_RUN) {
			reply_err(x, 400, "field 'metrics': more than %d",
			    CAP_METRICS_PER_RUN);
			goto out;
		}
		ms = xcalloc(n + 1, sizeof(*ms));
		for (i = 0; i < n; i++)
			if (parse_metric(
			        x, &ms[i], json_array_get(arr, i), i) == -1) {
				goto out;
			}
	}
	run.metrics = ms;
	run.nmetrics = n;
	if ((host = api_runner_host(x)) < 0) {
		goto out;
	}
	/* Group commit: parked until the batch holding it has committed
	 * (parked first, so the writer cannot unpark it before). */
	u = store_upload_new(host, &run, api_now_s(), upload_done, x->r);
	*httpd_slot(x->r) = u;
out:
	free(ms);
	buf_release(&prof);
	buf_release(&hstate);
	/* u is set only when the run was taken; every error replied. */
	if (u != NULL) {
		httpd_park(x->r);
		store_batch_add(x->a->batch, u);
	}
}

void
api_runner_log(struct ctx *x)
{
	static const char *const keys[] = { "text", NULL };
	const char *text = NULL;
	char *line = NULL;
	int64_t job, host;
	size_t kept = 0, len;
	int r;

	job_path(x, &job);
	if (api_parse_body(x, 0) == -1 ||
	    api_only_keys(x, x->body, keys, "body") == -1)
		return;
	if (api_str_field(x, &text, x->body, "text", CAP_LOG_APPEND, 0, "") ==
	    -1)
		return;
	if ((host = api_runner_host(x)) < 0)
		return;
	/* An entry ends its line: the next one starts a line of its own. */
	len = json_string_length(json_object_get(x->body, "text"));
	if (len > 0 && text[len - 1] != '\n') {
		line = xmalloc(len + 2);
		memcpy(line, text, len);
		line[len++] = '\n';
		line[len] = '\0';
		text = line;
	}
	r = store_log_append(x->s, &kept, host, job, text, len, api_now_s());
	free(line);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, json_pack("{s:I}", "stored", (json_int_t)kept));
}

void
api_runner_finish(struct ctx *x)
{
	static const char *const keys[] = { "status", "error", NULL };
	const char *status = NULL, *error = NULL;
	int64_t job, host;
	int ok, r;

	job_path(x, &job);
	if (api_parse_body(x, 0) == -1 ||
	    api_only_keys(x, x->body, keys, "body") == -1)
		return;
	if (api_str_field(x, &status, x->body, "status", 16, 0, "") == -1 ||
	    api_str_field(x, &error, x->body, "error", CAP_ERRMSG * 8, 1, "") ==
	        -1)
		return;
	if (strcmp(status, "success") == 0) {
		ok = 1;
	} else if (strcmp(status, "failure") == 0) {
		ok = 0;
	} else {
		reply_err(
		    x, 400, "field 'status': expected success or failure");
		return;
	}
	if ((host = api_runner_host(x)) < 0)
		return;
	r = sched_finish(x->a->sched, x->s, host, job, ok, error);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	log_info("job %" PRId64 " finished by %s: %s", job,
	    x->runner->ref->name, ok ? "success" : "failure");
	reply_json(x, 200,
	    json_pack("{s:I, s:s}", "id", (json_int_t)job, "state",
	        ok ? "success" : "failed"));
}

/* The pack of a series commit for a runner that cannot see the mirror. */
void
api_runner_pack(struct ctx *x)
{
	struct buf b;
	int status = packs_build(
	    &b, &x->err, x->s, x->conf->dc, x->rest, httpd_query(x->r, "have"));
	size_t len = b.len;

	if (status != 200) {
		reply_err(x, status, "%s", err_msg(&x->err));
		return;
	}
	httpd_reply_take(
	    x->r, 200, "application/x-git-packfile", buf_take(&b), len);
}
