/*
 * The runner agent.  Two threads: this one claims and runs jobs; the
 * heartbeat thread (hb_main) keeps the lease alive, reports progress and
 * is the one place that decides to kill the running benchmark (a cancel
 * from the daemon, or SIGTERM).  They share struct agent's job fields under
 * the mutex; the kill decision is an atomic flag exec_run() polls.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/http.h"
#include "common/log.h"
#include "common/redact.h"
#include "common/rounds.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "config/config.h"
#include "runners/agent.h"
#include "runners/bench/bench.h"
#include "runners/bootstate.h"
#include "runners/cgroup.h"
#include "runners/checkout.h"
#include "runners/client.h"
#include "runners/host.h"
#include "runners/inventory.h"
#include "runners/keep.h"
#include "runners/kernel.h"
#include "runners/perfstat.h"
#include "runners/profile.h"
#include "runners/qemu.h"
#include "runners/runas.h"
#include "runners/spool.h"
#include "runners/telemetry.h"

#define CLAIM_WAIT_S 30
#define SERVER_SETTLE_MS 500 /* server_command's time to start listening */
#define SEND_TRIES 3         /* per run, before leaving it to the spool */
#define LOG_TAIL 4096        /* stderr bytes copied to the job log */
#define MAX_RUN_INDEX 10000

struct agent {
	const struct runner_config *cfg;
	atomic_int *stop;
	int once;
	struct client *cl;    /* this thread's */
	struct client *hb_cl; /* the heartbeat thread's */
	struct spool *spool;
	char *jobs_dir;
	int64_t heartbeat_s, lease_s;
	struct http_retry backoff;

	pthread_t hb;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int hb_quit, hb_force;
	/* The current job, and its pair's other job when a claim holds
	 * both (run_pair), under mu. */
	int64_t job_id, job2_id;
	char progress[96];
	int64_t runs_wanted;
	/* Kill the running benchmark: set by hb_main, polled by exec. */
	atomic_int kill;
	/* The host's cgroups (docs/MEMCG.md), detected once at start. */
	struct cgroup_sys cgs;
	/* kexec/reboot (docs/KERNEL.md): the lease to ask for while the
	 * host boots (under mu), the state found at start, and the round
	 * and boot of the runs of a resumed job (info metrics). */
	int64_t boot_lease_s;
	/* A heartbeat is on its way (under mu): a boot waits for it, or a
	 * run lease it asked for could land after the boot lease. */
	int hb_busy;
	struct bootstate bs;
	int have_bs;
	int64_t kround, kboot;
	/* The kernel facts of a resumed job's runs (agent_kernel_facts). */
	json_t *kfacts;
	/* boot: qemu: KVM or TCG, decided once per process (qemu.h). */
	struct qemu_accel accel;
	/* Who runs builds and benchmarks (runner.yaml user). */
	struct runas ra;
};

/* ---- helpers ---- */

static json_t *
text_json(const char *p, size_t len, size_t max)
{
	struct buf b = BUF_INIT(max + 8);
	json_t *v;

	utf8_repair(&b, p, len, max);
	v = json_stringn(b.data, b.len);
	buf_release(&b);
	return v != NULL ? v : json_string("");
}

/* ---- run bodies ---- */

/* The job config's direction for a metric, else the parser's. */
static const char *
direction(const json_t *directions, const struct bench_metric *bm)
{
	const char *b = json_string_value(
	    json_object_get(json_object_get(directions, bm->name), "better"));

	if (b != NULL && (strcmp(b, "higher") == 0 || strcmp(b, "lower") == 0))
		return b;
	if (bm->better == BENCH_INFO)
		return NULL;
	return bench_better_str(bm->better);
}

json_t *
agent_run_body(int64_t index, const char *parser, const json_t *directions,
    const struct exec_result *r, const char *spawn_error, size_t raw_max)
{
	json_t *body = json_object(), *metrics = json_array(), *m;
	struct bench_result br;
	struct buf why = BUF_INIT(CAP_ERRMSG);
	struct buf raw = BUF_INIT(raw_max + 64);
	int ok = 0;
	size_t i;

	bench_result_init(&br);
	json_object_set_new(body, "index", json_integer(index));
	if (spawn_error != NULL) {
		buf_printf(&why, "cannot start: %s", spawn_error);
		json_object_set_new(body, "duration_s", json_real(0));
	} else {
		json_object_set_new(
		    body, "duration_s", json_real(r->duration_s));
		if (r->timed_out || r->cancelled || !r->exited ||
		    r->code != 0) {
			exec_describe(&why, r);
		} else if (bench_parse(&br, parser, r->out.data, r->out.len) !=
		    0) {
			/* Unparsable output is a failure, never zeros. */
			buf_printf(&why, "%s", err_msg(&br.err));
		} else {
			ok = 1;
		}
		if (r->out_truncated && !ok)
			buf_printf(&why, " (stdout truncated at %zu bytes)",
			    r->out.len);
		buf_add(&raw, r->out.data, r->out.len);
		if (!ok && r->err.len > 0) {
			buf_puts(&raw, "\n--- stderr ---\n");
			buf_add(&raw, r->err.data, r->err.len);
		}
	}
	for (i = 0; ok && i < br.n; i++) {
		const struct bench_metric *bm = &br.metrics[i];
		const char *better = direction(directions, bm);

		if (better == NULL) {
			if (why.len < 200)
				buf_printf(&why, "%s%s", why.len ? ", " : "",
				    bm->name);
			continue;
		}
		m = json_object();
		json_object_set_new(m, "name", json_string(bm->name));
		json_object_set_new(m, "value", json_real(bm->value));
		json_object_set_new(m, "unit", json_string(bm->unit));
		json_object_set_new(m, "better", json_string(better));
		json_array_append_new(metrics, m);
	}
	if (ok && json_array_size(metrics) == 0) {
		struct buf names = BUF_INIT(CAP_ERRMSG);

		buf_add(&names, why.data, why.len);
		buf_reset(&why);
		buf_printf(&why,
		    "no metric with a direction (%s): name them under "
		    "metrics: in the job config with better: higher|lower",
		    names.data);
		buf_release(&names);
		ok = 0;
	} else if (ok)
		buf_reset(&why);
	json_object_set_new(body, "status", json_string(ok ? "ok" : "failed"));
	json_object_set_new(body, "metrics", metrics);
	json_object_set_new(body, "raw", text_json(raw.data, raw.len, raw_max));
	json_object_set_new(body, "error",
	    ok ? json_null() : text_json(why.data, why.len, CAP_ERRMSG));
	bench_result_release(&br);
	buf_release(&why);
	buf_release(&raw);
	return body;
}

/* s as a JSON string; "unknown" when it is NULL, empty or not UTF-8
 * (a release read from a guest console is untrusted text). */
static json_t *
text_or_unknown(const char *s)
{
	json_t *v = s != NULL && *s != '\0' ? json_string(s) : NULL;

	return v != NULL ? v : json_string("unknown");
}

json_t *
agent_kernel_facts(const char *build_id, const char *release,
    const char *config_sha256, const char *boot, int cached)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "build_id",
	    text_or_unknown(build_id), "release", text_or_unknown(release),
	    "config_sha256", text_or_unknown(config_sha256), "boot",
	    text_or_unknown(boot), "cached",
	    cached < 0 ? json_null() : json_boolean(cached));
}

/* ---- uploads through the spool ---- */

/*
 * Sends one spooled run once.  2xx: deleted.  A permanent refusal (409:
 * the lease went to someone else; other 4xx): moved to rejected/.
 * Returns 0, ERR_AGAIN (still spooled) or the refusal's code.
 */
static int
send_spooled(struct agent *a, int64_t job, int64_t index)
{
	struct buf body = BUF_INIT(CAP_HTTP_BODY);
	struct err e = { 0 };
	int rc;

	if ((rc = spool_get(&body, a->spool, job, index, &e)) != 0) {
		buf_release(&body);
		if (rc == ERR_NOTFOUND)
			return 0;
		log_warnx("spool: %s", err_msg(&e));
		return ERR_AGAIN;
	}
	rc = client_upload_run(a->cl, job, body.data, body.len);
	buf_release(&body);
	if (rc == 0) {
		log_debug(
		    "job %" PRId64 ": run %" PRId64 " uploaded", job, index);
		if (spool_remove(a->spool, job, index, &e) != 0)
			log_warnx("spool: %s", err_msg(&e));
	} else if (rc == ERR_AGAIN) {
		log_debug("job %" PRId64 ": run %" PRId64 " not sent: %s", job,
		    index, client_errmsg(a->cl));
	} else {
		log_warnx("job %" PRId64 ": run %" PRId64
		          " refused, kept in spool/rejected: %s",
		    job, index, client_errmsg(a->cl));
		if (spool_reject(a->spool, job, index, &e) != 0)
			log_warnx("spool: %s", err_msg(&e));
	}
	return rc;
}

/*
 * Sends what the spool holds for job (0: every job).  With forever, keeps
 * trying with backoff until it is all sent, *stop, or (for a job) a kill;
 * else one pass.  0 when the spool is empty for job, else ERR_AGAIN.
 */
static int
flush_spool(struct agent *a, int64_t job, int forever)
{
	struct spool_entry *v;
	struct err e = { 0 };
	size_t n, i;
	int attempt = 0, again;

	for (;;) {
		if (spool_list(&v, &n, a->spool, job, &e) != 0) {
			log_warnx("spool: %s", err_msg(&e));
			return ERR_AGAIN;
		}
		again = 0;
		for (i = 0; i < n && !again; i++)
			if (send_spooled(a, v[i].job_id, v[i].index) ==
			    ERR_AGAIN)
				again = 1;
		free(v);
		if (!again)
			return 0;
		if (!forever || atomic_load(a->stop) ||
		    (job != 0 && atomic_load(&a->kill)))
			return ERR_AGAIN;
		if (attempt++ == 0)
			log_warnx("uploads pending, retrying: %s",
			    client_errmsg(a->cl));
		http_sleep_ms(http_backoff_ms(&a->backoff, attempt), a->stop);
	}
}

/* Spools a run body durably, then tries to send it a few times. */
static void
deliver_run(struct agent *a, int64_t job, int64_t index, json_t *body)
{
	char *s = pwjson_dump(body);
	struct err e = { 0 };
	int tries;

	if (spool_put(a->spool, job, index, s, strlen(s), &e) != 0) {
		/* A full disk must not lose the run: send it directly. */
		log_warnx("spool: %s", err_msg(&e));
		for (tries = 0; tries < SEND_TRIES; tries++) {
			if (client_upload_run(a->cl, job, s, strlen(s)) !=
			    ERR_AGAIN)
				break;
			http_sleep_ms(
			    http_backoff_ms(&a->backoff, tries + 1), a->stop);
		}
		free(s);
		return;
	}
	free(s);
	for (tries = 1; tries <= SEND_TRIES; tries++) {
		if (send_spooled(a, job, index) != ERR_AGAIN)
			return;
		if (tries < SEND_TRIES)
			http_sleep_ms(
			    http_backoff_ms(&a->backoff, tries), a->stop);
	}
	log_warnx("job %" PRId64 ": run %" PRId64 " spooled, will resend: %s",
	    job, index, client_errmsg(a->cl));
}

/* Best effort: the log is for humans, a lost line is not worth a retry. */
static void job_log(struct agent *a, int64_t job, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
job_log(struct agent *a, int64_t job, const char *fmt, ...)
{
	struct buf raw = BUF_INIT(CAP_LOG_APPEND),
	           clean = BUF_INIT(CAP_LOG_APPEND + 8);
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&raw, fmt, ap);
	va_end(ap);
	utf8_repair(&clean, raw.data, raw.len, CAP_LOG_APPEND);
	log_info("job %" PRId64 ": %s", job, clean.data);
	if (client_log(a->cl, job, clean.data) != 0)
		log_debug("log: %s", client_errmsg(a->cl));
	buf_release(&raw);
	buf_release(&clean);
}

static int
finish(struct agent *a, int64_t job, const char *status, const char *error)
{
	int attempt = 0, rc;

	for (;;) {
		rc = client_finish(a->cl, job, status, error);
		if (rc != ERR_AGAIN || atomic_load(a->stop))
			break;
		http_sleep_ms(http_backoff_ms(&a->backoff, ++attempt), a->stop);
	}
	if (rc != 0)
		log_warnx(
		    "job %" PRId64 ": finish: %s", job, client_errmsg(a->cl));
	else
		log_info("job %" PRId64 ": finished: %s%s%s", job, status,
		    error ? ": " : "", error ? error : "");
	return rc;
}

/* ---- heartbeat thread ---- */

static void
set_job(struct agent *a, int64_t job, int64_t runs)
{
	pthread_mutex_lock(&a->mu);
	a->job_id = job;
	a->runs_wanted = runs;
	a->boot_lease_s = 0;
	a->progress[0] = '\0';
	a->hb_force = 1;
	atomic_store(&a->kill, 0);
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

/* The claim's second job (0: none), kept leased by hb_main too. */
static void
set_job2(struct agent *a, int64_t job)
{
	pthread_mutex_lock(&a->mu);
	a->job2_id = job;
	a->hb_force = 1;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

static void
set_progress(struct agent *a, int64_t i, int64_t n)
{
	pthread_mutex_lock(&a->mu);
	snprintf(
	    a->progress, sizeof(a->progress), "run %" PRId64 "/%" PRId64, i, n);
	/* One heartbeat per run keeps the shown progress current. */
	a->hb_force = 1;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

static void
set_progress_text(struct agent *a, const char *text)
{
	pthread_mutex_lock(&a->mu);
	snprintf(a->progress, sizeof(a->progress), "%s", text);
	a->hb_force = 1;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

static int64_t
runs_wanted(struct agent *a)
{
	int64_t n;

	pthread_mutex_lock(&a->mu);
	n = a->runs_wanted;
	pthread_mutex_unlock(&a->mu);
	return n;
}

static void *
hb_main(void *arg)
{
	struct agent *a = arg;
	int64_t next = 0, now, job, job2, runs, runs2, boot_s;
	char progress[sizeof(a->progress)];
	struct timespec ts;
	int cancel, cancel2, rc, failing = 0;

	pthread_mutex_lock(&a->mu);
	while (!a->hb_quit) {
		if (atomic_load(a->stop) && a->job_id != 0)
			atomic_store(&a->kill, 1);
		now = clock_mono_ms();
		if (a->hb_force || now >= next) {
			a->hb_force = 0;
			job = a->job_id;
			job2 = a->job2_id;
			boot_s = a->boot_lease_s;
			memcpy(progress, a->progress, sizeof(progress));
			a->hb_busy = 1;
			pthread_mutex_unlock(&a->mu);
			cancel = 0;
			runs = 0;
			rc = client_heartbeat_boot(&cancel, &runs, a->hb_cl,
			    job, progress[0] ? progress : NULL, boot_s);
			cancel2 = 0;
			if (rc == 0 && job2 != 0)
				rc = client_heartbeat_boot(
				    &cancel2, &runs2, a->hb_cl, job2, NULL, 0);
			if (rc != 0 && !failing)
				log_warnx(
				    "heartbeat: %s", client_errmsg(a->hb_cl));
			else if (rc == 0 && failing)
				log_info("heartbeat: daemon reachable again");
			failing = rc != 0;
			pthread_mutex_lock(&a->mu);
			a->hb_busy = 0;
			pthread_cond_broadcast(&a->cv);
			if (rc == 0 && job != 0 && job == a->job_id) {
				if (cancel && !atomic_load(&a->kill)) {
					log_warnx("job %" PRId64
					          ": cancelled by the daemon",
					    job);
					atomic_store(&a->kill, 1);
				}
				if (runs > 0)
					a->runs_wanted = runs;
			}
			if (rc == 0 && job2 != 0 && job2 == a->job2_id &&
			    cancel2 && !atomic_load(&a->kill)) {
				log_warnx("job %" PRId64
				          ": cancelled by the daemon",
				    job2);
				atomic_store(&a->kill, 1);
			}
			next = clock_mono_ms() + a->heartbeat_s * 1000;
			continue;
		}
		/* Wake every 200 ms to notice *stop (set by a signal). */
		now = clock_mono_ms();
		clock_deadline(&ts,
		    next - now > 200 ? 200
		        : next > now ? next - now
		                     : 0);
		pthread_cond_timedwait(&a->cv, &a->mu, &ts);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* ---- jobs ---- */

struct job {
	int64_t id, runs, max_runs, timeout_s;
	int64_t memory_max, memory_high;
	int profile;
	int64_t profile_runs;     /* 0: all */
	int counters;             /* perf stat per run (docs/MEMCG.md) */
	const char *counters_ops; /* the metric counting operations */
	const char *parser, *cgroup_path;
	const char *tree_url, *tree_commit; /* jobs on a commit */
	const char *tree_pack; /* a series commit's pack route, or NULL */
	struct strlist command, server_command, build;
	/* A kernel job (docs/KERNEL.md): the "kernel" object, else NULL. */
	json_t *kernel;
	const char *kconfig;
	struct strlist kfragment;
	int64_t build_timeout_s, boot_timeout_s, rounds;
	int64_t round;        /* the daemon's round of this claim, 0: none */
	const char *instance; /* the daemon database's, NULL: not sent */
	struct cfg_point point;
	json_t *tree, *directions;
	json_t *host; /* the spec's host: object (runners/host.h) or NULL */
	unsigned char *done; /* done[i]: run i is stored */
	size_t ndone;
};

static void
job_release(struct job *j)
{
	size_t i;

	free(j->command.v);
	free(j->server_command.v);
	free(j->build.v);
	free(j->kfragment.v);
	for (i = 0; i < j->point.n; i++) {
		free(j->point.keys[i]);
		free(j->point.values[i]);
	}
	free(j->point.keys);
	free(j->point.values);
	free(j->point.label);
	free(j->done);
}

/* A JSON array of strings as a strlist borrowing the strings. */
static int
strlist_from(struct strlist *out, json_t *arr, const char *what, struct err *e)
{
	size_t i;
	json_t *v;

	out->v = NULL;
	out->n = 0;
	if (arr == NULL || json_is_null(arr))
		return 0;
	if (!json_is_array(arr))
		return err_set(e, "field '%s': expected array", what);
	out->v = xcalloc(json_array_size(arr) + 1, sizeof(char *));
	json_array_foreach(arr, i, v)
	{
		if (!json_is_string(v))
			return err_set(
			    e, "field '%s[%zu]': expected string", what, i);
		out->v[out->n++] = (char *)json_string_value(v);
	}
	return 0;
}

static int
job_parse(struct job *j, json_t *o, struct err *e)
{
	json_t *params, *cg, *done, *v;
	const char *key;
	char bid[64];
	size_t i;

	memset(j, 0, sizeof(*j));
	j->max_runs = 0;
	j->timeout_s = 600;
	j->cgroup_path = "root";
	if (pwjson_int(&j->id, o, "id", e) ||
	    pwjson_str(&j->parser, o, "parser", e) ||
	    pwjson_int(&j->runs, o, "runs", e) ||
	    pwjson_int_opt(&j->max_runs, o, "max_runs", e) ||
	    pwjson_int_opt(&j->timeout_s, o, "timeout_s", e))
		return -1;
	if (strlist_from(
	        &j->command, json_object_get(o, "command"), "command", e) ||
	    strlist_from(&j->server_command,
	        json_object_get(o, "server_command"), "server_command", e) ||
	    strlist_from(&j->build, json_object_get(o, "build"), "build", e))
		return -1;
	if (j->command.n == 0)
		return err_set(e, "field 'command': empty");
	if (j->max_runs < j->runs)
		j->max_runs = j->runs;
	if (j->max_runs > MAX_RUN_INDEX)
		return err_set(e, "field 'max_runs': over %d", MAX_RUN_INDEX);
	j->tree = json_object_get(o, "tree");
	if (j->tree != NULL && json_is_null(j->tree))
		j->tree = NULL;
	if (j->tree != NULL &&
	    (pwjson_str(&j->tree_url, j->tree, "url", e) ||
	        pwjson_str(&j->tree_commit, j->tree, "commit", e) ||
	        pwjson_str_opt(&j->tree_pack, j->tree, "pack", e)))
		return err_set(e, "field 'tree': %s", err_msg(e));
	j->directions = json_object_get(o, "metrics");
	j->kernel = json_object_get(o, "kernel");
	if (j->kernel != NULL && json_is_null(j->kernel))
		j->kernel = NULL;
	j->rounds = 1;
	j->round = 0;
	j->build_timeout_s = 7200;
	j->boot_timeout_s = 600;
	if (j->kernel != NULL &&
	    (!json_is_object(j->kernel) ||
	        pwjson_str(&j->kconfig, j->kernel, "config", e) != 0 ||
	        strlist_from(&j->kfragment,
	            json_object_get(j->kernel, "fragment"), "kernel.fragment",
	            e) != 0 ||
	        pwjson_int_opt(&j->build_timeout_s, j->kernel,
	            "build_timeout_s", e) != 0 ||
	        pwjson_int_opt(
	            &j->boot_timeout_s, j->kernel, "boot_timeout_s", e) != 0 ||
	        pwjson_int_opt(&j->rounds, o, "rounds", e) != 0 ||
	        pwjson_int_opt(&j->round, o, "round", e) != 0))
		return err_set(e, "field 'kernel': %s",
		    e->set ? err_msg(e) : "expected object");
	if (j->kernel != NULL && j->tree == NULL)
		return err_set(
		    e, "field 'kernel': a kernel job needs a 'tree'");
	if (pwjson_str_opt(&j->instance, o, "instance", e) != 0)
		return -1;
	if (kernel_build_id(bid, sizeof(bid), j->id, j->instance) != 0)
		return err_set(e,
		    "field 'instance': expected 1 to 16 lowercase hex digits");
	if (j->rounds < 1 || j->rounds > j->runs)
		j->rounds = j->rounds < 1 ? 1 : j->runs;
	j->host = json_object_get(o, "host");
	if ((cg = json_object_get(o, "cgroup")) != NULL && json_is_object(cg) &&
	    (pwjson_str_opt(&j->cgroup_path, cg, "path", e) != 0 ||
	        pwjson_int_opt(&j->memory_max, cg, "memory_max", e) != 0 ||
	        pwjson_int_opt(&j->memory_high, cg, "memory_high", e) != 0))
		return -1;
	if (pwjson_bool_opt(&j->profile, o, "profile", e) != 0 ||
	    pwjson_int_opt(&j->profile_runs, o, "profile_runs", e) != 0 ||
	    pwjson_bool_opt(&j->counters, o, "counters", e) != 0 ||
	    pwjson_str_opt(&j->counters_ops, o, "counters_ops", e) != 0)
		return -1;

	params = json_object_get(o, "params");
	if (params != NULL && !json_is_object(params))
		return err_set(e, "field 'params': expected object");
	j->point.keys = xcalloc(json_object_size(params) + 1, sizeof(char *));
	j->point.values = xcalloc(json_object_size(params) + 1, sizeof(char *));
	json_object_foreach(params, key, v)
	{
		char *val;

		if (json_is_string(v))
			val = xstrdup(json_string_value(v));
		else if (json_is_integer(v))
			val = xasprintf(
			    "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		else if (json_is_real(v))
			val = xasprintf("%.17g", json_real_value(v));
		else if (json_is_boolean(v))
			val = xstrdup(json_is_true(v) ? "true" : "false");
		else
			return err_set(
			    e, "field 'params.%s': not a scalar", key);
		j->point.keys[j->point.n] = xstrdup(key);
		j->point.values[j->point.n] = val;
		j->point.n++;
	}
	j->point.label = xstrdup("");

	j->ndone = (size_t)j->max_runs;
	j->done = xcalloc(j->ndone + 1, 1);
	done = json_object_get(o, "done_runs");
	if (done != NULL && !json_is_array(done))
		return err_set(e, "field 'done_runs': expected array");
	json_array_foreach(done, i, v)
	{
		json_int_t k = json_integer_value(v);

		if (!json_is_integer(v))
			return err_set(e,
			    "field 'done_runs[%zu]': expected "
			    "integer",
			    i);
		/* done[max_runs]: the profiled run (docs/MEMCG.md). */
		if (k >= 0 && (size_t)k <= j->ndone)
			j->done[k] = 1;
	}
	return 0;
}

static int
has_param(const struct cfg_point *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->keys[i], key) == 0)
			return 1;
	return 0;
}

/*
 * Renders a template with the point's values and the built-ins (docs/
 * CONFIG.md): server, workdir, run (the 1-based run index; 0 for build
 * and server_command, which run once), host (the runner's name), cpus.
 */
static int
render(char ***out, const struct strlist *tmpl, const struct job *j,
    const char *scratch, const char *host, int run, struct buf *why,
    const char *what)
{
	const char *extra[12];
	char errbuf[CAP_ERRMSG], runs[24], cpus[24];
	long nc = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = 0;

	snprintf(runs, sizeof(runs), "%d", run);
	snprintf(cpus, sizeof(cpus), "%ld", nc > 0 ? nc : 1);
	if (!has_param(&j->point, "server")) {
		extra[n++] = "server";
		extra[n++] = "127.0.0.1";
	}
	extra[n++] = "workdir";
	extra[n++] = scratch;
	extra[n++] = "run";
	extra[n++] = runs;
	extra[n++] = "host";
	extra[n++] = host;
	extra[n++] = "cpus";
	extra[n++] = cpus;
	extra[n] = NULL;
	errbuf[0] = '\0';
	if (config_render_argv(
	        out, tmpl, &j->point, extra, errbuf, sizeof(errbuf)) != 0) {
		buf_printf(why, "%s: %s", what, errbuf);
		return -1;
	}
	return 0;
}

static void
log_stderr_tail(
    struct agent *a, int64_t job, int64_t index, const struct exec_result *r)
{
	size_t off;

	if (r->err.len == 0)
		return;
	off = r->err.len > LOG_TAIL ? r->err.len - LOG_TAIL : 0;
	job_log(a, job, "run %" PRId64 " stderr%s:\n%s", index,
	    off ? " (tail)" : "", r->err.data + off);
}

/* ---- memcg: placement, telemetry, profile (docs/MEMCG.md) ---- */

struct placement {
	struct cgroup *cg;
	int fds[CGROUP_MAX_FDS];
	int nfds;
	struct telemetry *tm;
};

/*
 * The cgroups a running job created, journalled in the workdir, so a
 * runner killed mid-job removes them at its next start.
 */
static char *
journal_path(const struct agent *a)
{
	return xasprintf("%s/cgroups.journal", a->cfg->workdir);
}

static void
journal_write(struct agent *a, const struct cgroup *cg)
{
	char *path = journal_path(a), *tmp = xasprintf("%s.tmp", path);
	size_t i, n = cg ? cgroup_created_count(cg) : 0;
	FILE *f;

	if (n == 0) {
		unlink(path);
		goto out;
	}
	if ((f = fopen(tmp, "w")) == NULL) {
		log_warnx("%s: %s", tmp, strerror(errno));
		goto out;
	}
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n", cgroup_created_dir(cg, i));
	if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0 ||
	    rename(tmp, path) != 0)
		log_warnx("%s: %s", path, strerror(errno));
out:
	free(tmp);
	free(path);
}

static void
journal_replay(struct agent *a)
{
	char *path = journal_path(a), **dirs = NULL, *line, *save = NULL;
	struct buf b = BUF_INIT(CAP_LOG_APPEND);
	struct err e = { 0 };
	size_t n = 0;
	int r;

	if (a->cgs.kind != CGROUP_NONE &&
	    (r = cgroup_sweep_stale(&a->cgs, &e)) != 0)
		log_info("cgroups of dead runners: %s%d removed",
		    r < 0 ? err_msg(&e) : "", r < 0 ? 0 : r);
	err_clear(&e);
	if (a->cgs.kind == CGROUP_NONE ||
	    files_read(&b, path, CAP_LOG_APPEND) != 0)
		goto out;
	for (line = strtok_r(b.data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		dirs = xreallocarray(dirs, n + 1, sizeof(char *));
		dirs[n++] = line;
	}
	r = cgroup_remove_stale(&a->cgs, dirs, n, &e);
	if (r < 0)
		log_warnx("cgroups left by a previous run: %s", err_msg(&e));
	else
		log_info("cgroups left by a previous run: %d removed", r);
	unlink(path);
out:
	free(dirs);
	buf_release(&b);
	free(path);
}

/*
 * Places the job's benchmark: 0 (pl ready; pl->cg NULL when the host has
 * no cgroups and the job does not ask for placement), or -1 with why.
 */
static int
place_job(
    struct agent *a, const struct job *j, struct placement *pl, struct buf *why)
{
	struct cgroup_spec spec = { j->cgroup_path, j->memory_max,
		j->memory_high };
	struct telemetry_src src;
	struct err e = { 0 };
	int n;

	memset(pl, 0, sizeof(*pl));
	if (a->cgs.kind == CGROUP_NONE) {
		if (!has_param(&j->point, "cgroup"))
			return 0;
		buf_printf(why,
		    "the job needs cgroup placement (cgroup=%s) and this "
		    "runner has no usable cgroups: %s",
		    j->cgroup_path, a->cgs.reason);
		return -1;
	}
	if (cgroup_place(&pl->cg, &a->cgs, &spec, &e) != 0 ||
	    (n = cgroup_procs_fds(pl->cg, pl->fds, &e)) < 0) {
		buf_printf(why, "%s", err_msg(&e));
		return -1;
	}
	pl->nfds = n;
	journal_write(a, pl->cg);
	memset(&src, 0, sizeof(src));
	src.kind = cgroup_kind(pl->cg);
	src.memdir = cgroup_dir(pl->cg);
	src.v2dir = cgroup_v2_dir(pl->cg);
	src.sockacct = cgroup_socket_accounting(pl->cg);
	pl->tm = telemetry_new(&src);
	job_log(a, j->id, "cgroup %s (%s): %s%s%s%s%s", j->cgroup_path,
	    cgroup_kind_name(src.kind), src.memdir,
	    src.v2dir && strcmp(src.v2dir, src.memdir) ? ", cgroup2 " : "",
	    src.v2dir && strcmp(src.v2dir, src.memdir) ? src.v2dir : "",
	    cgroup_notes(pl->cg)[0] ? "; " : "", cgroup_notes(pl->cg));
	return 0;
}

static void
unplace_job(struct agent *a, int64_t job, struct placement *pl)
{
	struct err e = { 0 };

	while (pl->nfds > 0)
		close(pl->fds[--pl->nfds]);
	telemetry_free(pl->tm);
	pl->tm = NULL;
	if (pl->cg != NULL && cgroup_teardown(pl->cg, &e) != 0)
		job_log(a, job, "cgroup teardown: %s", err_msg(&e));
	else if (pl->cg != NULL)
		journal_write(a, NULL);
	cgroup_free(pl->cg);
	pl->cg = NULL;
}

static void
add_info_metric(const char *name, double value, const char *unit, void *arg)
{
	json_array_append_new((json_t *)arg,
	    json_pack("{s:s, s:f, s:s, s:s}", "name", name, "value", value,
	        "unit", unit, "better", "info"));
}

/* The runner's own CPU time (all threads, not its children), seconds. */
static double
self_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* How one benchmark run is executed (measured, warm-up or profiled). */
static void
bench_spec(struct exec_spec *spec, struct agent *a, const struct job *j,
    const struct placement *pl, char **argv, const char *scratch,
    size_t raw_max)
{
	*spec = EXEC_SPEC_INIT(argv);
	spec->cwd = scratch;
	spec->timeout_ms = j->timeout_s * 1000;
	spec->out_max = raw_max;
	spec->err_max = raw_max;
	spec->cancel = &a->kill;
	spec->procs_fds = pl->fds;
	spec->n_procs_fds = pl->nfds;
	spec->user = runas_user(&a->ra);
}

/*
 * The job's host.warmup runs: executed like the measured ones (same
 * placement, pinning, drop_caches, pause), their outcome logged, nothing
 * uploaded.  0, or -1 when the job must fail (why set); a cancel just
 * returns 0 (the caller sees a->kill).
 */
static int
warm_up(struct agent *a, const struct job *j, struct host_job *hj,
    const struct placement *pl, char **argv, const char *scratch,
    size_t raw_max, struct buf *why)
{
	struct exec_spec spec;
	struct exec_result r;
	struct buf how = BUF_INIT(CAP_ERRMSG);
	struct err e = { 0 };
	char what[64];
	int64_t w;

	for (w = 0; w < hj->warmup && !atomic_load(&a->kill); w++) {
		if (w > 0 && hj->pause_ms > 0)
			http_sleep_ms(hj->pause_ms, &a->kill);
		snprintf(what, sizeof(what), "warm-up %" PRId64 "/%" PRId64,
		    w + 1, hj->warmup);
		set_progress_text(a, what);
		if (host_job_run_begin(hj, 0, &e) != 0) {
			buf_printf(why, "host: %s", err_msg(&e));
			return -1;
		}
		bench_spec(&spec, a, j, pl, argv, scratch, raw_max);
		if (exec_run(&r, &spec, &e) != 0) {
			host_job_run_end(hj);
			buf_printf(
			    why, "warm-up %" PRId64 ": %s", w + 1, err_msg(&e));
			return -1;
		}
		host_job_run_end(hj);
		buf_release(&how);
		exec_describe(&how, &r);
		job_log(a, j->id,
		    "warm-up %" PRId64 "/%" PRId64 ": %s in %.3f s (not "
		    "reported)",
		    w + 1, hj->warmup, how.data, r.duration_s);
		exec_result_release(&r);
	}
	buf_release(&how);
	if (hj->warmup > 0 && hj->pause_ms > 0 && !atomic_load(&a->kill))
		http_sleep_ms(hj->pause_ms, &a->kill);
	return 0;
}

/*
 * profile: true (docs/MEMCG.md): perf record around measured run index,
 * which then uploads its own metrics plus the charge-path share, the
 * profiler's overhead and the profile blob.  NULL when the directory
 * cannot be made (logged; the run goes on unprofiled).
 */
static struct profile *
prof_begin(struct agent *a, const struct job *j, const struct placement *pl,
    const char *scratch, int64_t index)
{
	char *dir = xasprintf("%s/profile-%" PRId64, scratch, index);
	struct profile_opts po;
	struct profile *p;

	if (files_mkdir_p(dir) != 0) {
		job_log(
		    a, j->id, "profile: mkdir %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	memset(&po, 0, sizeof(po));
	po.dir = dir;
	po.cgroup = pl->cg ? cgroup_perf_name(pl->cg) : NULL;
	p = profile_start(&po);
	free(dir);
	return p;
}

static void
prof_end(struct agent *a, const struct job *j, struct profile *p, json_t *body,
    int64_t index)
{
	struct profile_result res;
	json_t *metrics = json_object_get(body, "metrics"), *blob = NULL;
	double over = 0;

	profile_stop(p, &res);
	profile_free(p);
	if (!json_is_array(metrics) ||
	    strcmp(json_string_value(json_object_get(body, "status")), "ok")) {
		profile_result_release(&res);
		return;
	}
	if (res.known)
		json_array_append_new(metrics,
		    json_pack("{s:s, s:f, s:s, s:s}", "name",
		        "memcg.charge_path_share_pct", "value", res.share_pct,
		        "unit", "%", "better", "lower"));
	/* perf record's CPU over its wall time: % of one CPU it took. */
	if (res.perf_cpu_known && res.perf_wall_s > 0) {
		over = 100.0 * res.perf_cpu_s / res.perf_wall_s;
		json_array_append_new(metrics,
		    json_pack("{s:s, s:f, s:s, s:s}", "name",
		        "profile.perf_cpu_pct", "value", over, "unit", "%",
		        "better", "info"));
	}
	if (res.blob != NULL)
		blob = pwjson_parse(res.blob, strlen(res.blob), NULL);
	if (blob == NULL)
		blob = json_pack("{s:n, s:s}", "share_pct", "reason",
		    res.reason[0] ? res.reason : "no profile");
	if (res.perf_cpu_known)
		json_object_set_new(
		    blob, "perf_cpu_s", json_real(res.perf_cpu_s));
	json_object_set_new(body, "profile", blob);
	if (res.known)
		job_log(a, j->id,
		    "run %" PRId64
		    " profile: charge-path share %.3f%% (%s, %s); "
		    "perf record took %.2f%% of one CPU",
		    index, res.share_pct, res.event, res.scope, over);
	else
		job_log(a, j->id,
		    "run %" PRId64 " profile: charge-path share unknown: %s",
		    index, res.reason);
	profile_result_release(&res);
}

/*
 * What a directory kept for j's next round must hold (runners/keep.h):
 * its tree, its commit and its build, each argument with its length.
 * NULL when that is too long to say: nothing is kept, every round builds.
 */
static char *
kept_what(const struct job *j)
{
	struct buf b = BUF_INIT(CAP_ERRMSG * 16);
	size_t i;

	buf_printf(&b, "tree %s\ncommit %s\n", j->tree_url, j->tree_commit);
	for (i = 0; i < j->build.n; i++)
		buf_printf(
		    &b, "build %zu %s\n", strlen(j->build.v[i]), j->build.v[i]);
	if (buf_failed(&b)) {
		buf_release(&b);
		return NULL;
	}
	return buf_take(&b);
}

/*
 * A job on a commit: checks the commit out into scratch and runs the
 * job's build there (with the job's timeout; output in the job log).
 * 0 ready, 1 cancelled (not ours to finish), -1 failed (why set).
 */
static int
prepare_tree(
    struct agent *a, struct job *j, const char *scratch, struct buf *why)
{
	struct exec_result r;
	struct exec_spec spec;
	struct err e = { 0 };
	struct buf how = BUF_INIT(CAP_ERRMSG);
	char **bargv = NULL;
	int64_t t0 = clock_mono_ms();
	size_t off;
	int ret = -1;

	struct checkout_pack pk = { a->cl, j->tree_pack };
	size_t packed = 0;

	{
		char *shown = redact_userinfo(j->tree_url);

		job_log(a, j->id, "checkout %s at %s", shown, j->tree_commit);
		free(shown);
	}
	if (checkout_prepare(&packed, a->cfg->workdir, j->tree_url,
	        j->tree_commit, &pk, scratch, &e) != 0) {
		buf_printf(why, "checkout failed: %s", err_msg(&e));
		return -1;
	}
	if (packed > 0)
		job_log(a, j->id,
		    "series commit %s from the daemon's pack "
		    "(%zu bytes)",
		    j->tree_commit, packed);
	job_log(
	    a, j->id, "checked out in %" PRId64 " ms", clock_mono_ms() - t0);
	if (runas_own(runas_user(&a->ra), scratch, &e) != 0) {
		buf_printf(why, "checkout failed: %s", err_msg(&e));
		return -1;
	}
	if (j->build.n == 0)
		return 0;
	if (render(&bargv, &j->build, j, scratch, a->cfg->name, 0, why,
	        "build") != 0)
		return -1;
	spec = EXEC_SPEC_INIT(bargv);
	spec.cwd = scratch;
	spec.user = runas_user(&a->ra);
	spec.timeout_ms = j->timeout_s * 1000;
	spec.out_max = CAP_LOG_APPEND / 4;
	spec.err_max = CAP_LOG_APPEND / 4;
	spec.cancel = &a->kill;
	set_progress_text(a, "build");
	t0 = clock_mono_ms();
	if (exec_run(&r, &spec, &e) != 0) {
		buf_printf(why, "build failed: %s", err_msg(&e));
		config_argv_free(bargv);
		return -1;
	}
	exec_describe(&how, &r);
	job_log(a, j->id, "build (%s) %s in %" PRId64 " ms%s%s%s%s", bargv[0],
	    how.data, clock_mono_ms() - t0, r.out.len ? "\nstdout:\n" : "",
	    r.out.data, r.err.len ? "\nstderr:\n" : "", r.err.data);
	if (r.cancelled)
		ret = 1;
	else if (r.exited && r.code == 0)
		ret = 0;
	else {
		const struct buf *tail = r.err.len ? &r.err : &r.out;

		off = tail->len > LOG_TAIL / 4 ? tail->len - LOG_TAIL / 4 : 0;
		buf_printf(
		    why, "build failed: %s: %s", how.data, tail->data + off);
	}
	exec_result_release(&r);
	buf_release(&how);
	config_argv_free(bargv);
	return ret;
}

/* ---- kernel jobs (docs/KERNEL.md) ---- */

static void
kernel_log(void *arg, const char *text)
{
	struct agent *a = arg;

	job_log(a, a->job_id, "%s", text);
}

/* Where the static guest binaries are: guest_dir, else EXE_DIR/guest. */
static char *
guest_dir(const struct runner_config *cfg)
{
	char exe[4096], *slash, *d;
	ssize_t n;

	if (cfg->guest_dir != NULL)
		return xstrdup(cfg->guest_dir);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return xstrdup("guest");
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	/* The build tree (bin/guest), else make install's layout. */
	d = xasprintf("%s/guest", exe);
	if (access(d, X_OK) == 0)
		return d;
	free(d);
	return xasprintf("%s/../lib/perfwatch/guest", exe);
}

static void
add_metric(json_t *metrics, const char *name, double value, const char *unit)
{
	json_array_append_new(metrics,
	    json_pack("{s:s, s:f, s:s, s:s}", "name", name, "value", value,
	        "unit", unit, "better", "info"));
}

/*
 * One boot of the job's kernel in qemu for the runs idx[0..n-1]; uploads
 * each.  0 booted (runs uploaded, *ok counts the good ones), 1 cancelled,
 * -1 failed (why).
 */
static int
qemu_round(struct agent *a, struct job *j, const struct kernel_image *img,
    const char *scratch, const int64_t *idx, size_t n, int64_t round,
    int64_t boot, size_t raw_max, int64_t *ok, char *first_err,
    size_t first_len, struct buf *why)
{
	struct qemu_req rq;
	struct qemu_result qr;
	char ***argvs = xcalloc(n + 1, sizeof(char **)), **sargv = NULL,
	     *gdir = guest_dir(a->cfg),
	     *dir = xasprintf("%s/boot-%" PRId64, scratch, boot);
	char rel[128];
	size_t i, k;
	int rc = -1;

	memset(&qr, 0, sizeof(qr));
	if (files_mkdir_p(dir) != 0) {
		buf_printf(why, "%s: mkdir: %s", dir, strerror(errno));
		goto out;
	}
	for (i = 0; i < n; i++)
		if (render(&argvs[i], &j->command, j, "/tmp", a->cfg->name,
		        (int)idx[i] + 1, why, "command") != 0)
			goto out;
	if (j->server_command.n > 0 &&
	    render(&sargv, &j->server_command, j, "/tmp", a->cfg->name, 0, why,
	        "server_command") != 0)
		goto out;
	memset(&rq, 0, sizeof(rq));
	rq.image = img->image;
	rq.gen_cpio = img->gen_cpio;
	rq.dir = dir;
	rq.guest_dir = gdir;
	rq.server_argv = sargv;
	rq.run_argv = argvs;
	rq.run_index = idx;
	rq.nruns = n;
	rq.cgroup_path = j->cgroup_path;
	rq.memory_max = j->memory_max;
	rq.memory_high = j->memory_high;
	rq.run_timeout_ms = j->timeout_s * 1000;
	rq.boot_timeout_ms = j->boot_timeout_s * 1000;
	rq.out_max = raw_max;
	rq.cancel = &a->kill;
	rq.accel = &a->accel;
	rc = qemu_boot(&qr, &rq, why);
	if (rc != 0)
		goto out;
	if (qr.accel_decided) {
		char d[320];

		/* Once per runner process: later boots do not try KVM. */
		qemu_accel_describe(d, sizeof(d), &a->accel);
		log_info("qemu: %s; every boot of this runner uses it", d);
		job_log(a, j->id,
		    "boot %" PRId64 ": qemu %s; every boot of this runner "
		    "uses it",
		    boot, d);
	}
	job_log(a, j->id,
	    "boot %" PRId64 " (round %" PRId64 "): qemu %s, %zu runs, %.1f s; "
	    "guest: %s",
	    boot, round, qr.kvm ? "KVM" : "TCG", n, qr.boot_s,
	    qr.version[0] ? qr.version : "unknown");
	if (qr.error[0]) {
		buf_printf(why, "boot qemu: guest: %s", qr.error);
		rc = -1;
		goto out;
	}
	if (kernel_version_check(qr.version, img->build_id, why) != 0) {
		rc = -1;
		goto out;
	}
	/* The guest's release as verified; host: keys do not apply in the
	 * guest (docs/HOST.md), so the state is the kernel facts alone. */
	if (kernel_version_release(rel, sizeof(rel), qr.version) != 0)
		rel[0] = '\0';
	for (i = 0; i < n; i++) {
		struct qemu_run *qrun = NULL;
		json_t *body, *metrics;
		const char *st;

		for (k = 0; k < qr.nruns; k++)
			if (qr.runs[k].index == idx[i])
				qrun = &qr.runs[k];
		if (qrun != NULL && qrun->ended)
			body = agent_run_body(idx[i], j->parser, j->directions,
			    &qrun->r, NULL, raw_max);
		else
			body = agent_run_body(idx[i], j->parser, j->directions,
			    NULL, "the run did not finish in the guest",
			    raw_max);
		st = json_string_value(json_object_get(body, "status"));
		metrics = json_object_get(body, "metrics");
		if (strcmp(st, "ok") == 0 && json_is_array(metrics)) {
			for (k = 0; qrun != NULL && k < qrun->nm; k++)
				add_metric(metrics, qrun->m[k].name,
				    qrun->m[k].value,
				    strcmp(qrun->m[k].unit, "-") == 0
				        ? ""
				        : qrun->m[k].unit);
			add_metric(metrics, "kernel.round", (double)round, "");
			add_metric(metrics, "kernel.boot", (double)boot, "");
			add_metric(metrics, "kernel.kvm", qr.kvm ? 1 : 0, "");
			(*ok)++;
		} else if (first_err[0] == '\0')
			snprintf(first_err, first_len, "run %" PRId64 ": %s",
			    idx[i],
			    json_string_value(json_object_get(body, "error")));
		json_object_set_new(body, "host_state",
		    json_pack("{s:o}", "kernel_build",
		        agent_kernel_facts(img->build_id, rel,
		            img->config_sha256, "qemu", img->cached)));
		deliver_run(a, j->id, idx[i], body);
		json_decref(body);
	}
	rc = 0;
out:
	qemu_result_release(&qr);
	for (i = 0; i < n; i++)
		config_argv_free(argvs[i]);
	free(argvs);
	config_argv_free(sargv);
	free(gdir);
	free(dir);
	return rc;
}

static char *
state_path(const struct agent *a)
{
	return xasprintf("%s/boot.state", a->cfg->workdir);
}

/* The running kernel's /proc/version (PERFWATCH_PROC_VERSION: a file
 * standing in for it, for the tests of kexec and reboot). */
static void
proc_version(struct buf *out)
{
	const char *p = getenv("PERFWATCH_PROC_VERSION");

	if (files_read(out, p && *p ? p : "/proc/version", 1024) != 0)
		buf_reset(out);
	while (out->len > 0 && out->data[out->len - 1] == '\n')
		out->data[--out->len] = '\0';
}

/* One boot command; 0, or -1 with why ("kexec -l: exit 1: ..."). */
static int
boot_cmd(struct agent *a, char **argv, const char *what, struct buf *why)
{
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };
	struct buf how = BUF_INIT(CAP_ERRMSG);
	int rc = -1;

	s.timeout_ms = 120000;
	s.out_max = 65536;
	s.err_max = 65536;
	s.cancel = &a->kill;
	if (exec_run(&r, &s, &e) != 0) {
		buf_printf(why, "boot: %s: %s", what, err_msg(&e));
		return -1;
	}
	exec_describe(&how, &r);
	job_log(a, a->job_id, "boot: %s: %s%s%s", what, how.data,
	    r.err.len ? "\n" : "", r.err.data);
	if (r.exited && r.code == 0)
		rc = 0;
	else
		buf_printf(why, "boot: %s: %s: %s", what, how.data, r.err.data);
	exec_result_release(&r);
	buf_release(&how);
	return rc;
}

/*
 * boot: kexec | reboot.  Writes the state file, asks the daemon for the
 * boot lease, runs the boot programs and waits to be ended by the boot.
 * Returns only when the boot did not happen: 1 stopped or cancelled, -1
 * failed (why; the state file is removed).
 */
static int
boot_host(struct agent *a, struct job *j, const struct kernel_image *img,
    json_t *jo, struct buf *why)
{
	struct bootstate st;
	char *path = state_path(a), pg[96];
	int64_t attempt = 1, waited;
	size_t i;
	int rc = -1, kexec = a->cfg->boot == CFG_BOOT_KEXEC;

	memset(&st, 0, sizeof(st));
	pwjson_int_opt(&attempt, jo, "attempt", NULL);
	st.job = j->id;
	st.attempt = attempt;
	snprintf(st.step, sizeof(st.step), "boot");
	snprintf(
	    st.method, sizeof(st.method), "%s", kexec ? "kexec" : "reboot");
	st.round = 1;
	st.boot = 1;
	for (i = 0; i < j->ndone && i < BOOTSTATE_RUNS_MAX; i++)
		st.done[i] = j->done[i];
	snprintf(st.build_id, sizeof(st.build_id), "%s", img->build_id);
	snprintf(st.release, sizeof(st.release), "%s", img->release);
	snprintf(st.image, sizeof(st.image), "%s", img->image);
	snprintf(st.config_sha256, sizeof(st.config_sha256), "%s",
	    img->config_sha256);
	st.cached = img->cached;
	st.deadline = (int64_t)time(NULL) + j->boot_timeout_s;
	st.lease_expires = st.deadline;
	if (bootstate_write(path, &st, why) != 0)
		goto out;
	/* The daemon must know before the host goes down.  The heartbeat
	 * thread asks for the boot lease from now on, and one of its
	 * heartbeats already on its way (a run lease) lands before ours:
	 * else it could cut the boot lease short (t0821, under load). */
	snprintf(pg, sizeof(pg), "boot %s %s", st.method, img->build_id);
	pthread_mutex_lock(&a->mu);
	a->boot_lease_s = j->boot_timeout_s;
	while (a->hb_busy)
		pthread_cond_wait(&a->cv, &a->mu);
	pthread_mutex_unlock(&a->mu);
	if (client_heartbeat_boot(
	        NULL, NULL, a->cl, j->id, pg, j->boot_timeout_s) != 0) {
		buf_printf(why,
		    "boot: the daemon did not take the boot lease: %s",
		    client_errmsg(a->cl));
		pthread_mutex_lock(&a->mu);
		a->boot_lease_s = 0;
		pthread_mutex_unlock(&a->mu);
		unlink(path);
		goto out;
	}
	pthread_mutex_lock(&a->mu);
	snprintf(a->progress, sizeof(a->progress), "%s", pg);
	pthread_mutex_unlock(&a->mu);
	job_log(a, j->id, "boot: state written to %s; %s into %s (%s)", path,
	    st.method, img->release, img->image);
	if (kexec) {
		char *l[] = { "kexec", "-l", (char *)img->image,
			"--reuse-cmdline", NULL };
		char *x[] = { "kexec", "-e", NULL };

		if (boot_cmd(a, l, "kexec -l", why) != 0 ||
		    boot_cmd(a, x, "kexec -e", why) != 0) {
			unlink(path);
			goto out;
		}
	} else {
		char entry[256];
		char *inst[] = { "installkernel", (char *)img->release,
			(char *)img->image, (char *)img->system_map, "/boot",
			NULL };
		char *ug[] = { "update-grub", NULL };
		char *gr[] = { "grub-reboot", entry, NULL };
		char *rb[] = { "reboot", NULL };

		snprintf(entry, sizeof(entry),
		    "Advanced options for Debian GNU/Linux>Debian GNU/Linux, "
		    "with Linux %s",
		    img->release);
		if (boot_cmd(a, inst, "installkernel", why) != 0 ||
		    boot_cmd(a, ug, "update-grub", why) != 0 ||
		    boot_cmd(a, gr, "grub-reboot", why) != 0 ||
		    boot_cmd(a, rb, "reboot", why) != 0) {
			unlink(path);
			goto out;
		}
	}
	/* The boot ends this process; still here after the timeout, the
	 * boot did not happen. */
	for (waited = 0;
	     waited < j->boot_timeout_s * 1000 && !atomic_load(&a->kill);
	     waited += 500)
		http_sleep_ms(500, &a->kill);
	if (atomic_load(&a->kill)) {
		rc = 1;
		goto out;
	}
	unlink(path);
	buf_printf(why,
	    "boot: %s returned and the host kept running for %" PRId64
	    " s (boot timeout)",
	    st.method, j->boot_timeout_s);
out:
	free(path);
	return rc;
}

/*
 * After a restart with a boot state: what to do with the claimed job.
 * 0 run it as usual (a fresh job, or a stale state), 1 resume it on the
 * booted kernel (a->kround, a->kboot set), -1 it was finished (failure).
 */
static int
resume_job(struct agent *a, struct job *j)
{
	struct buf why = BUF_INIT(CAP_ERRMSG), ver = BUF_INIT(1100);
	char *path = state_path(a);
	enum bootstate_decision d;
	int rc = 0;

	a->have_bs = 0;
	proc_version(&ver);
	d = bootstate_decide(
	    &a->bs, j->id, ver.data, (int64_t)time(NULL), &why);
	unlink(path);
	switch (d) {
	case BOOT_RESUME: {
		char rel[128];

		job_log(a, j->id,
		    "boot: resumed after %s on %s (expected build id %s)",
		    a->bs.method, ver.data, a->bs.build_id);
		a->kround = a->bs.round;
		a->kboot = a->bs.boot;
		if (kernel_version_release(rel, sizeof(rel), ver.data) != 0)
			rel[0] = '\0';
		json_decref(a->kfacts);
		a->kfacts = agent_kernel_facts(a->bs.build_id, rel,
		    a->bs.config_sha256, a->bs.method, a->bs.cached);
		rc = 1;
		break;
	}
	case BOOT_WRONG_KERNEL:
		finish(a, j->id, "failure", why.data);
		rc = -1;
		break;
	case BOOT_OTHER_JOB:
	case BOOT_TOO_LATE:
		log_warnx("%s", why.data);
		break;
	}
	buf_release(&why);
	buf_release(&ver);
	free(path);
	return rc;
}

/*
 * A job on a kernel commit: build (or reuse) its kernel, then boot it
 * once per round, runs/rounds runs each (and one more boot for runs the
 * daemon adds).  Finishes the job.  0 success, 1 otherwise.
 */
static int
run_kernel_job(struct agent *a, struct job *j, json_t *jo, const char *scratch,
    size_t raw_max)
{
	const struct runner_config *cfg = a->cfg;
	struct kernel_req kr;
	struct kernel_image img;
	struct buf why = BUF_INIT(CAP_ERRMSG * 4);
	char first_err[CAP_ERRMSG] = "", msg[CAP_ERRMSG];
	int64_t *idx = xcalloc((size_t)j->max_runs + 1, sizeof(int64_t));
	int64_t n, ok = 0, ran = 0, boot = 0, round, i, lo, hi;
	size_t k;
	int rc, ret = 1;

	if (cfg->boot == CFG_BOOT_NONE) {
		snprintf(msg, sizeof(msg),
		    "refused: the job asks for a kernel build (kernel.config "
		    "%s) and runner %s has boot: none (it only measures the "
		    "running kernel)",
		    j->kconfig, cfg->name);
		finish(a, j->id, "failure", msg);
		goto out;
	}
	memset(&kr, 0, sizeof(kr));
	kr.kdir = cfg->kernel_tree;
	kr.url = j->tree_url;
	kr.commit = j->tree_commit;
	kr.pack.cl = a->cl;
	kr.pack.path = j->tree_pack;
	kr.config = j->kconfig;
	kr.fragment = &j->kfragment;
	kr.job = j->id;
	kr.instance = j->instance;
	kr.timeout_ms = j->build_timeout_s * 1000;
	kr.cancel = &a->kill;
	kr.user = runas_user(&a->ra);
	kr.log = kernel_log;
	kr.arg = a;
	set_progress_text(a, "build");
	rc = kernel_build(&img, &kr, &why);
	if (rc == 1)
		goto out;
	if (rc != 0) {
		/* A job failure of kind build, never a zero metric. */
		struct buf fb = BUF_INIT(CAP_ERRMSG * 4);

		buf_printf(&fb, "build: %s", why.data);
		finish(a, j->id, "failure", fb.data);
		buf_release(&fb);
		goto out;
	}
	job_log(a, j->id,
	    "kernel: build_id=%s release=%s config_sha256=%s cached=%s "
	    "incremental=%s build_s=%.1f config_steps=%s",
	    img.build_id, img.release, img.config_sha256,
	    img.cached ? "yes" : "no", img.incremental ? "yes" : "no",
	    img.build_s,
	    img.cached              ? "none"
	        : img.config_reused ? "skipped"
	                            : "ran");
	if (cfg->boot != CFG_BOOT_QEMU) {
		/* kexec / reboot: the runs happen after the restart. */
		if (j->rounds > 1)
			job_log(a, j->id,
			    "rounds: %" PRId64 " asked; boot: %s boots once "
			    "per job",
			    j->rounds, config_boot_name(cfg->boot));
		buf_reset(&why);
		if (boot_host(a, j, &img, jo, &why) < 0)
			finish(a, j->id, "failure", why.data);
		goto out;
	}
	/* The daemon's round r is this job's r-th boot. */
	if (j->round > 0)
		boot = j->round - 1;
	for (round = 1;; round++) {
		n = runs_wanted(a);
		if (n > j->max_runs)
			n = j->max_runs;
		/* The daemon's round: its runs (those below n) in one boot.
		 * Else round r of R takes runs [n(r-1)/R, nr/R); later
		 * rounds (more runs asked for) take the rest in one boot. */
		lo = j->round > 0        ? 0
		    : round <= j->rounds ? n * (round - 1) / j->rounds
		                         : 0;
		hi = j->round > 0        ? n
		    : round <= j->rounds ? n * round / j->rounds
		                         : n;
		k = 0;
		for (i = lo; i < hi; i++)
			if (!((size_t)i < j->ndone && j->done[i]))
				idx[k++] = i;
		if (k == 0) {
			if (round >= j->rounds)
				break;
			continue;
		}
		if (atomic_load(&a->kill))
			break;
		boot++;
		{
			char pg[64];

			snprintf(pg, sizeof(pg),
			    "boot %" PRId64 " round %" PRId64, boot, round);
			set_progress_text(a, pg);
		}
		buf_reset(&why);
		rc = qemu_round(a, j, &img, scratch, idx, k,
		    j->round > 0             ? j->round
		        : round <= j->rounds ? round
		                             : j->rounds,
		    boot, raw_max, &ok, first_err, sizeof(first_err), &why);
		if (rc == 1)
			break;
		if (rc != 0) {
			finish(a, j->id, "failure", why.data);
			goto out;
		}
		for (i = 0; i < (int64_t)k; i++)
			j->done[idx[i]] = 1;
		ran += (int64_t)k;
		if (j->round > 0)
			break;
	}
	if (atomic_load(&a->kill)) {
		log_warnx("job %" PRId64 ": stopped after %" PRId64 " runs",
		    j->id, ran);
		flush_spool(a, j->id, 0);
		goto out;
	}
	if (flush_spool(a, j->id, 1) != 0)
		goto out;
	if (ran > 0 && ok == 0) {
		buf_reset(&why);
		buf_printf(&why, "all %" PRId64 " runs failed; first: %s", ran,
		    first_err);
		finish(a, j->id, "failure", why.data);
	} else if (finish(a, j->id, "success", NULL) == 0)
		ret = 0;
out:
	free(idx);
	buf_release(&why);
	return ret;
}

/*
 * One job of a claim: its parsed spec, its scratch directory (the tree
 * and build), its commands, its server and its tally.  A claim holds one
 * side, or both sides of a pair measured in turns (run_pair).
 */
struct side {
	struct job j;
	char *scratch, *what;
	int kept, resumed;
	char **argv, **sargv;
	struct exec_proc *server;
	int64_t ran, ok;
	char first_err[CAP_ERRMSG];
	int ended; /* finished (or dropped) already: nothing more to run */
	int ret;   /* 0: finished with success */
};

/* Where a claim's runs run: one placement and one set of host settings
 * for its sides (a pair's sides share them: one spec, one point). */
struct claim_env {
	struct placement pl;
	struct host_job hj;
	struct buf hlog;
	size_t raw_max;
};

/*
 * Gets side sd of claim object jo ready to measure: parsed, its tree
 * checked out and built (or kept from its last round), its commands
 * rendered.  A kernel job is run to its end here (run_kernel_job).  0
 * ready, else the side ended (finished with failure, or not ours).
 */
static int
side_open(struct agent *a, struct side *sd, json_t *jo, size_t raw_max)
{
	struct buf why = BUF_INIT(CAP_ERRMSG);
	struct err e = { 0 };
	int64_t id;
	int rc = 1;

	memset(sd, 0, sizeof(*sd));
	sd->ret = 1;
	sd->ended = 1;
	if (pwjson_int(&id, jo, "id", &e) != 0) {
		log_warnx("claim: %s", err_msg(&e));
		return 1;
	}
	if (job_parse(&sd->j, jo, &e) != 0) {
		finish(a, id, "failure", err_msg(&e));
		job_release(&sd->j);
		memset(&sd->j, 0, sizeof(sd->j));
		return 1;
	}
	log_info("job %" PRId64 ": %s, %" PRId64 " runs, parser %s", sd->j.id,
	    sd->j.command.v[0], sd->j.runs, sd->j.parser);
	sd->scratch = xasprintf("%s/%" PRId64, a->jobs_dir, sd->j.id);
	/* A job on a commit may find its last round's tree and build
	 * here; any other directory of that id is removed first. */
	if (sd->j.tree != NULL && sd->j.kernel == NULL &&
	    a->cfg->keep_builds > 0)
		sd->what = kept_what(&sd->j);
	if (sd->j.kernel == NULL)
		sd->kept = keep_take(a->jobs_dir, sd->j.id, sd->what);
	if (files_mkdir_p(sd->scratch) != 0 ||
	    runas_own(runas_user(&a->ra), sd->scratch, &e) != 0) {
		buf_printf(&why, "%s: %s", sd->scratch,
		    e.set ? err_msg(&e) : strerror(errno));
		finish(a, sd->j.id, "failure", why.data);
		goto out;
	}
	if (a->have_bs) {
		int rr = resume_job(a, &sd->j);

		if (rr < 0)
			goto out;
		sd->resumed = rr == 1;
	}
	if (sd->j.kernel != NULL && !sd->resumed) {
		sd->ret = run_kernel_job(a, &sd->j, jo, sd->scratch, raw_max);
		goto out;
	}
	/* A resumed kernel job runs on the booted kernel: no checkout. */
	if (sd->kept)
		job_log(a, sd->j.id,
		    "tree and build kept from this job's last round here "
		    "(%.12s): no checkout, no build",
		    sd->j.tree_commit);
	else if (sd->j.tree != NULL && sd->j.kernel == NULL) {
		int br = prepare_tree(a, &sd->j, sd->scratch, &why);

		if (br == 1)
			goto out; /* cancelled or stopping */
		if (br != 0) {
			finish(a, sd->j.id, "failure", why.data);
			goto out;
		}
	}
	if (render(&sd->argv, &sd->j.command, &sd->j, sd->scratch, a->cfg->name,
	        1, &why, "command") != 0 ||
	    (sd->j.server_command.n > 0 &&
	        render(&sd->sargv, &sd->j.server_command, &sd->j, sd->scratch,
	            a->cfg->name, 0, &why, "server_command") != 0)) {
		finish(a, sd->j.id, "failure", why.data);
		goto out;
	}
	sd->ended = 0;
	rc = 0;
out:
	buf_release(&why);
	return rc;
}

/* Ends sd with failure why (once). */
static void
side_fail(struct agent *a, struct side *sd, const char *why)
{
	if (!sd->ended)
		finish(a, sd->j.id, "failure", why);
	sd->ended = 1;
}

/*
 * Starts sd's server_command (none: 0).  0, or -1 with sd ended, and
 * also (NULL, or the other side sharing that server) with it.
 */
static int
side_server_start(
    struct agent *a, struct side *sd, struct side *also, struct claim_env *ce)
{
	struct host_job *hj = &ce->hj;
	const struct placement *pl = &ce->pl;
	struct exec_spec spec;
	struct buf why = BUF_INIT(CAP_ERRMSG);
	struct err e = { 0 };
	int rc = 0;

	if (sd->sargv == NULL || sd->server != NULL)
		return 0;
	spec = EXEC_SPEC_INIT(sd->sargv);
	spec.cwd = sd->scratch;
	spec.user = runas_user(&a->ra);
	spec.procs_fds = pl->fds;
	spec.n_procs_fds = pl->nfds;
	if (host_job_run_begin(hj, 1, &e) != 0 ||
	    exec_start(&sd->server, &spec, &e) != 0) {
		host_job_run_end(hj);
		buf_printf(&why, "server_command: %s", err_msg(&e));
		rc = -1;
		goto out;
	}
	host_job_run_end(hj);
	http_sleep_ms(SERVER_SETTLE_MS, &a->kill);
	if (!exec_alive(sd->server)) {
		buf_printf(&why, "server_command exited before the benchmark");
		rc = -1;
	}
out:
	if (rc != 0) {
		side_fail(a, sd, why.data);
		if (also != NULL)
			side_fail(a, also, why.data);
	}
	buf_release(&why);
	return rc;
}

/*
 * Measured run i of sd (pl, hj: its placement and host settings),
 * uploaded.  0 go on, 1 stop (cancelled: not a measurement), -1 sd
 * ended with failure.
 */
static int
side_run(struct agent *a, struct side *sd, struct claim_env *ce, int64_t i,
    int64_t n)
{
	struct host_job *hj = &ce->hj;
	struct placement *pl = &ce->pl;
	size_t raw_max = ce->raw_max;
	struct job *j = &sd->j;
	struct buf why = BUF_INIT(CAP_ERRMSG);
	struct exec_spec spec;
	struct exec_result r;
	struct err e = { 0 }, te = { 0 };
	struct profile *prof;
	struct perfstat *ctr;
	struct perfstat_result cres;
	double cpu0, cpu1;
	json_t *body, *hstate;
	int tm_ok, rc = 0;

	if (sd->ran > 0 && hj->pause_ms > 0)
		http_sleep_ms(hj->pause_ms, &a->kill);
	set_progress(a, i + 1, n);
	/* {run}: this run's index (rendered as 1 by side_open). */
	config_argv_free(sd->argv);
	sd->argv = NULL;
	if (render(&sd->argv, &j->command, j, sd->scratch, a->cfg->name, i + 1,
	        &why, "command") != 0) {
		side_fail(a, sd, why.data);
		rc = -1;
		goto out;
	}
	bench_spec(&spec, a, j, pl, sd->argv, sd->scratch, raw_max);
	if (host_job_run_begin(hj, 0, &e) != 0) {
		buf_printf(&why, "host: %s", err_msg(&e));
		side_fail(a, sd, why.data);
		rc = -1;
		goto out;
	}
	tm_ok = pl->tm != NULL && telemetry_begin(pl->tm, &te) == 0;
	prof = j->profile && (j->profile_runs <= 0 || i < j->profile_runs)
	    ? prof_begin(a, j, pl, sd->scratch, i)
	    : NULL;
	/* counters: true (docs/MEMCG.md): perf stat on the run. */
	ctr = j->counters ? perfstat_begin(sd->scratch, i,
	                        pl->cg ? cgroup_perf_name(pl->cg) : NULL)
	                  : NULL;
	cpu0 = self_cpu_s();
	if (exec_run(&r, &spec, &e) == 0 && r.cancelled) {
		/* Not a measurement: a later attempt redoes it. */
		host_job_run_end(hj);
		profile_free(prof);
		perfstat_free(ctr);
		exec_result_release(&r);
		rc = 1;
		goto out;
	}
	cpu1 = self_cpu_s();
	if (j->counters) { /* stopped at once: the window is the run */
		perfstat_stop(ctr, &cres);
		perfstat_free(ctr);
	}
	host_job_run_end(hj);
	body = agent_run_body(i, j->parser, j->directions, &r,
	    e.set ? err_msg(&e) : NULL, raw_max);
	hstate = host_job_state(hj);
	/* The kernel the run ran on: the booted build of a resumed
	 * kernel job, else the running kernel, which no job built. */
	json_object_set_new(hstate, "kernel_build",
	    sd->resumed && a->kfacts != NULL
	        ? json_deep_copy(a->kfacts)
	        : agent_kernel_facts("none",
	              json_string_value(json_object_get(hstate, "kernel")),
	              NULL, "none", -1));
	json_object_set_new(body, "host_state", hstate);
	if (prof != NULL)
		prof_end(a, j, prof, body, i);
	if (j->counters) {
		struct buf cl = BUF_INIT(CAP_ERRMSG);

		perfstat_finish(body, &cres, j->counters_ops, j->parser, &r.out,
		    r.duration_s, &cl);
		job_log(a, j->id, "run %" PRId64 " %s", i, cl.data);
		buf_release(&cl);
	}
	if (tm_ok &&
	    strcmp(json_string_value(json_object_get(body, "status")), "ok") ==
	        0 &&
	    telemetry_end(pl->tm, add_info_metric,
	        json_object_get(body, "metrics"), &te) < 0)
		job_log(
		    a, j->id, "run %" PRId64 " telemetry: %s", i, err_msg(&te));
	if (a->kround > 0 &&
	    strcmp(json_string_value(json_object_get(body, "status")), "ok") ==
	        0) {
		add_metric(json_object_get(body, "metrics"), "kernel.round",
		    (double)a->kround, "");
		add_metric(json_object_get(body, "metrics"), "kernel.boot",
		    (double)a->kboot, "");
	}
	if (!e.set)
		job_log(a, j->id,
		    "run %" PRId64 ": runner CPU %.3f s over %.3f s (%.2f%%)",
		    i, cpu1 - cpu0, r.duration_s,
		    r.duration_s > 0 ? 100.0 * (cpu1 - cpu0) / r.duration_s
		                     : 0.0);
	sd->ran++;
	if (strcmp(json_string_value(json_object_get(body, "status")), "ok") ==
	    0)
		sd->ok++;
	else {
		const char *msg =
		    json_string_value(json_object_get(body, "error"));

		log_warnx("job %" PRId64 ": run %" PRId64 " failed: %s", j->id,
		    i, msg);
		if (sd->first_err[0] == '\0')
			snprintf(sd->first_err, sizeof(sd->first_err),
			    "run %" PRId64 ": %s", i, msg);
		if (!e.set)
			log_stderr_tail(a, j->id, i, &r);
	}
	exec_result_release(&r);
	deliver_run(a, j->id, i, body);
	json_decref(body);
	if (sd->server != NULL && !exec_alive(sd->server)) {
		side_fail(a, sd, "server_command exited during the benchmark");
		rc = -1;
	}
out:
	buf_release(&why);
	return rc;
}

/* After sd's runs: stored, then finished by its tally (once). */
static void
side_finish(struct agent *a, struct side *sd)
{
	struct buf why = BUF_INIT(CAP_ERRMSG);

	exec_stop(sd->server);
	sd->server = NULL;
	if (sd->ended)
		goto out;
	sd->ended = 1;
	if (atomic_load(&a->kill)) {
		/* Cancelled, lease lost or stopping: not ours to finish. */
		log_warnx("job %" PRId64 ": stopped after %" PRId64 " runs",
		    sd->j.id, sd->ran);
		flush_spool(a, sd->j.id, 0);
		goto out;
	}
	/* Every run must be stored before the job is declared finished. */
	if (flush_spool(a, sd->j.id, 1) != 0)
		goto out;
	if (sd->ran > 0 && sd->ok == 0) {
		buf_printf(&why, "all %" PRId64 " runs failed; first: %s",
		    sd->ran, sd->first_err);
		finish(a, sd->j.id, "failure", why.data);
	} else if (finish(a, sd->j.id, "success", NULL) == 0)
		sd->ret = 0;
out:
	buf_release(&why);
}

static void
side_release(struct agent *a, struct side *sd)
{
	exec_stop(sd->server);
	/* Kept for the job's next round only after a round that finished
	 * with success (its tree built); else removed. */
	if (sd->scratch != NULL && sd->j.kernel == NULL)
		keep_put(a->jobs_dir, sd->j.id, sd->ret == 0 ? sd->what : NULL,
		    a->cfg->keep_builds);
	else if (sd->scratch != NULL)
		files_rm_rf(sd->scratch);
	free(sd->scratch);
	free(sd->what);
	config_argv_free(sd->argv);
	config_argv_free(sd->sargv);
	job_release(&sd->j);
}

/* An empty claim_env for claims of this runner. */
static void
claim_env_init(struct agent *a, struct claim_env *ce)
{
	memset(ce, 0, sizeof(*ce));
	ce->hlog = BUF_INIT(CAP_ERRMSG * 8);
	ce->raw_max = a->cfg->max_output > 0 ? (size_t)a->cfg->max_output
	                                     : CAP_RAW_OUTPUT;
}

/*
 * ce's placement and host settings, from sd's spec.  0, or -1 with
 * every side in sides ended.
 */
static int
claim_begin(struct agent *a, struct claim_env *ce, struct side *sd,
    struct side *sides, size_t n)
{
	struct buf why = BUF_INIT(CAP_ERRMSG);
	struct err e = { 0 };
	size_t k;

	if (place_job(a, &sd->j, &ce->pl, &why) == 0) {
		/* host: pinning, THP, drop_caches, warm-up, pause
		 * (runners/host.h) */
		if (host_job_begin(&ce->hj, "", sd->j.host, &ce->hlog, &e) ==
		    0) {
			if (ce->hlog.len > 0)
				job_log(a, sd->j.id, "%s", ce->hlog.data);
			buf_release(&why);
			return 0;
		}
		buf_printf(&why, "host: %s", err_msg(&e));
	}
	for (k = 0; k < n; k++)
		side_fail(a, &sides[k], why.data);
	buf_release(&why);
	return -1;
}

/* After a claim (id: its first job): the host as it was, no job. */
static void
claim_end(struct agent *a, struct claim_env *ce, int64_t id)
{
	buf_release(&ce->hlog);
	host_job_end(&ce->hj, &ce->hlog);
	if (ce->hlog.len > 0)
		log_warnx("job %" PRId64 ": %s", id, ce->hlog.data);
	buf_release(&ce->hlog);
	unplace_job(a, id, &ce->pl);
	set_job2(a, 0);
	set_job(a, 0, 0);
	json_decref(a->kfacts);
	a->kfacts = NULL;
}

/*
 * Runs a claimed job to the end.  0 when it was finished with success, 1
 * when finished with failure or dropped (cancel, lease lost, stop).
 */
static int
run_job(struct agent *a, json_t *jo)
{
	struct buf why = BUF_INIT(CAP_ERRMSG);
	struct claim_env ce;
	struct side sd;
	int64_t i, n, id;

	claim_env_init(a, &ce);
	id = json_integer_value(json_object_get(jo, "id"));
	a->kround = 0;
	set_job(a, id, json_integer_value(json_object_get(jo, "runs")));
	if (side_open(a, &sd, jo, ce.raw_max) != 0)
		goto out;
	if (claim_begin(a, &ce, &sd, &sd, 1) != 0 ||
	    side_server_start(a, &sd, NULL, &ce) != 0)
		goto out;
	if (ce.hj.warmup > 0 &&
	    warm_up(a, &sd.j, &ce.hj, &ce.pl, sd.argv, sd.scratch, ce.raw_max,
	        &why) != 0) {
		side_fail(a, &sd, why.data);
		goto out;
	}
	for (i = 0; i < (n = runs_wanted(a)) && i < sd.j.max_runs; i++) {
		if (atomic_load(&a->kill))
			break;
		if ((size_t)i < sd.j.ndone && sd.j.done[i])
			continue;
		if (side_run(a, &sd, &ce, i, n) != 0)
			break;
	}
	side_finish(a, &sd);
out:
	exec_stop(sd.server);
	sd.server = NULL;
	claim_end(a, &ce, id);
	side_release(a, &sd);
	buf_release(&why);
	return sd.ret;
}

/*
 * Whether the sides of a pair can share one server_command process: the
 * same command, run from no tree (so the same binary); else each side
 * starts its own, and only one runs at a time.
 */
static int
server_shared(const struct side *s0, const struct side *s1)
{
	size_t i;

	if (s0->sargv == NULL || s1->sargv == NULL || s0->j.tree != NULL ||
	    s1->j.tree != NULL)
		return 0;
	for (i = 0; s0->sargv[i] != NULL && s1->sargv[i] != NULL; i++)
		if (strcmp(s0->sargv[i], s1->sargv[i]) != 0)
			return 0;
	return s0->sargv[i] == NULL && s1->sargv[i] == NULL;
}

/*
 * Both jobs of a pair in one claim (docs/CONFIG.md `rounds`): each side
 * checked out and built once, then measured in turns on this host, round
 * by round, each round's order drawn by rounds_base_first, so the base
 * and candidate runs of a round are seconds apart at most and a drift of
 * the host falls out of the within-round contrasts.  jo is the claimed
 * job, po its partner; runs and cancels are per job, as in run_job.
 * 0 when both were finished with success.
 */
static int
run_pair(struct agent *a, json_t *jo, json_t *po)
{
	struct buf why = BUF_INIT(CAP_ERRMSG);
	struct claim_env ce;
	struct side sides[2], *sd, *owner = NULL, *srv = NULL;
	json_t *o[2];
	int64_t pair, size, k, i, nmax = 0, id[2];
	int t, first, shared, rc = 0, warmed[2] = { 0, 0 };

	/* sides[0] the base, sides[1] the candidate. */
	first = strcmp(json_string_value(json_object_get(jo, "role"))
	                ? json_string_value(json_object_get(jo, "role"))
	                : "",
	            "base") == 0;
	o[0] = first ? jo : po;
	o[1] = first ? po : jo;
	for (t = 0; t < 2; t++)
		id[t] = json_integer_value(json_object_get(o[t], "id"));
	pair = json_integer_value(json_object_get(jo, "pair_id"));
	size = json_integer_value(json_object_get(jo, "round_size"));
	if (size < 1)
		size = 1;
	claim_env_init(a, &ce);
	a->kround = 0;
	set_job(a, id[0], json_integer_value(json_object_get(o[0], "runs")));
	set_job2(a, id[1]);
	for (t = 0; t < 2; t++) {
		side_open(a, &sides[t], o[t], ce.raw_max);
		if (!sides[t].ended && owner == NULL)
			owner = &sides[t];
		if (!sides[t].ended && sides[t].j.runs > nmax)
			nmax = sides[t].j.runs;
	}
	if (owner == NULL || claim_begin(a, &ce, owner, sides, 2) != 0)
		goto out;
	shared = server_shared(&sides[0], &sides[1]);
	for (t = 0; t < 2; t++)
		job_log(a, id[t],
		    "measured in turns with job %" PRId64 " (the %s) on this "
		    "host: rounds of %" PRId64 " run%s a side, each round's "
		    "order drawn%s",
		    id[1 - t], t ? "base" : "candidate", size,
		    size == 1 ? "" : "s",
		    sides[0].sargv == NULL ? ""
		        : shared           ? "; one server_command for both"
		                           : "; each side's server_command "
		                             "runs during its turns");
	for (k = 0; k * size < nmax && !atomic_load(&a->kill); k++) {
		first = rounds_base_first(pair, k) ? 0 : 1;
		for (t = 0; t < 2 && !atomic_load(&a->kill); t++) {
			sd = &sides[t == 0 ? first : 1 - first];
			for (i = k * size; !sd->ended && i < (k + 1) * size &&
			     i < sd->j.runs && i < sd->j.max_runs;
			     i++) {
				if ((size_t)i < sd->j.ndone && sd->j.done[i])
					continue;
				/* Its server up, the other's down. */
				if (sd->sargv != NULL && shared &&
				    srv == NULL) {
					if (side_server_start(a, &sides[0],
					        &sides[1], &ce) != 0)
						break;
					srv = &sides[0];
				} else if (sd->sargv != NULL && !shared &&
				    srv != sd) {
					if (srv != NULL) {
						exec_stop(srv->server);
						srv->server = NULL;
					}
					srv = NULL;
					if (side_server_start(
					        a, sd, NULL, &ce) != 0)
						break;
					srv = sd;
				}
				if (srv != NULL && srv != sd && shared &&
				    !exec_alive(srv->server)) {
					side_fail(a, sd,
					    "server_command exited during the "
					    "benchmark");
					break;
				}
				if (!warmed[sd - sides] && ce.hj.warmup > 0 &&
				    warm_up(a, &sd->j, &ce.hj, &ce.pl, sd->argv,
				        sd->scratch, ce.raw_max, &why) != 0) {
					side_fail(a, sd, why.data);
					break;
				}
				warmed[sd - sides] = 1;
				rc = side_run(a, sd, &ce, i, sd->j.runs);
				if (rc != 0)
					break;
			}
			if (rc == 1)
				goto done; /* cancelled: not a measurement */
			rc = 0;
		}
	}
done:
	for (t = 0; t < 2; t++)
		side_finish(a, &sides[t]);
out:
	for (t = 0; t < 2; t++) {
		exec_stop(sides[t].server);
		sides[t].server = NULL;
	}
	claim_end(a, &ce, id[0]);
	for (t = 0; t < 2; t++)
		side_release(a, &sides[t]);
	buf_release(&why);
	return sides[0].ret || sides[1].ret;
}

/* ---- main loop ---- */

static int
register_host(struct agent *a)
{
	const struct runner_config *cfg = a->cfg;
	json_t *body = json_object(), *labels = json_array(), *inv;
	int64_t hb = 0, lease = 0;
	int attempt = 0, rc;
	size_t i;

	json_object_set_new(body, "name", json_string(cfg->name));
	for (i = 0; i < cfg->labels.n; i++)
		json_array_append_new(labels, json_string(cfg->labels.v[i]));
	json_object_set_new(body, "labels", labels);
	inv = inventory_collect("");
	/* What the runner can use decides, not only what is mounted. */
	json_object_set_new(
	    inv, "cgroup", json_string(cgroup_kind_name(a->cgs.kind)));
	if (a->cgs.kind == CGROUP_NONE)
		json_object_set_new(
		    inv, "cgroup_reason", json_string(a->cgs.reason));
	json_object_set_new(body, "inventory", inv);
	for (;;) {
		rc = client_register(&hb, &lease, a->cl, body);
		if (rc == 0 || rc != ERR_AGAIN || atomic_load(a->stop))
			break;
		if (attempt++ == 0)
			log_warnx("%s; retrying", client_errmsg(a->cl));
		http_sleep_ms(http_backoff_ms(&a->backoff, attempt), a->stop);
	}
	json_decref(body);
	if (rc != 0) {
		log_warnx("%s", client_errmsg(a->cl));
		return -1;
	}
	/* The daemon's interval is an upper bound: it knows its lease. */
	if (hb > 0 && hb < a->heartbeat_s)
		a->heartbeat_s = hb;
	if (lease > 0 && a->heartbeat_s * 3 > lease)
		a->heartbeat_s = lease / 3 > 0 ? lease / 3 : 1;
	a->lease_s = lease;
	log_info("registered as %s with %s (heartbeat %" PRId64
	         " s, lease %" PRId64 " s)",
	    cfg->name, cfg->server, a->heartbeat_s, lease);
	return 0;
}

int
agent_run(const struct runner_config *cfg, const char *token, int once,
    atomic_int *stop)
{
	struct agent a;
	struct err e = { 0 };
	pthread_condattr_t ca;
	char *spool_dir;
	json_t *job;
	int rc, ret = 0, attempt = 0, hb_started = 0;

	memset(&a, 0, sizeof(a));
	a.cfg = cfg;
	a.stop = stop;
	a.once = once;
	a.heartbeat_s = cfg->heartbeat_s > 0 ? cfg->heartbeat_s : 10;
	a.backoff = (struct http_retry){ 0, 250, 10000, stop };
	a.cl = client_new(cfg->server, token);
	a.hb_cl = client_new(cfg->server, token);
	client_set_stop(a.cl, stop);
	client_set_stop(a.hb_cl, stop);
	client_set_ca(a.cl, cfg->ca_file);
	client_set_ca(a.hb_cl, cfg->ca_file);
	atomic_init(&a.kill, 0);
	pthread_mutex_init(&a.mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a.cv, &ca);
	pthread_condattr_destroy(&ca);

	/* PERFWATCH_NO_CGROUPS=1: the operator keeps benchmarks unplaced. */
	if (getenv("PERFWATCH_NO_CGROUPS") != NULL &&
	    strcmp(getenv("PERFWATCH_NO_CGROUPS"), "1") == 0) {
		cgroup_sys_set(&a.cgs, CGROUP_NONE, NULL, NULL, NULL, NULL);
		snprintf(a.cgs.reason, sizeof(a.cgs.reason),
		    "disabled by PERFWATCH_NO_CGROUPS=1");
	} else
		cgroup_detect(&a.cgs);
	log_info("cgroups: %s%s%s", cgroup_kind_name(a.cgs.kind),
	    a.cgs.kind == CGROUP_NONE ? ": " : "",
	    a.cgs.kind == CGROUP_NONE ? a.cgs.reason : "");
	spool_dir = xasprintf("%s/spool", cfg->workdir);
	a.jobs_dir = xasprintf("%s/jobs", cfg->workdir);
	if (spool_open(&a.spool, spool_dir, &e) != 0 ||
	    files_mkdir_p(a.jobs_dir) != 0 ||
	    runas_init(&a.ra, cfg->user, &e) != 0 ||
	    runas_reachable(runas_user(&a.ra), cfg->workdir, &e) != 0 ||
	    runas_traverse(runas_user(&a.ra), cfg->workdir, &e) != 0 ||
	    runas_traverse(runas_user(&a.ra), a.jobs_dir, &e) != 0 ||
	    runas_private(runas_user(&a.ra), spool_dir, &e) != 0) {
		log_warnx("workdir %s: %s", cfg->workdir,
		    e.set ? err_msg(&e) : strerror(errno));
		ret = 1;
		goto out;
	}
	/* Kept builds within this config's number (keep_builds 0: none). */
	keep_prune(a.jobs_dir, cfg->keep_builds);
	journal_replay(&a);
	{
		struct buf why = BUF_INIT(CAP_ERRMSG);
		char *sp = state_path(&a);

		rc = bootstate_read(&a.bs, sp, &why);
		if (rc == 0) {
			a.have_bs = 1;
			log_info("boot state: job %" PRId64 " booted (%s) into "
			         "%s; resuming it",
			    a.bs.job, a.bs.method, a.bs.build_id);
		} else if (rc != ERR_NOTFOUND) {
			log_warnx("%s", why.data);
			unlink(sp);
		}
		free(sp);
		buf_release(&why);
	}
	if (register_host(&a) != 0) {
		ret = 1;
		goto out;
	}
	if (pthread_create(&a.hb, NULL, hb_main, &a) != 0) {
		log_warnx("pthread_create failed");
		ret = 1;
		goto out;
	}
	hb_started = 1;
	/* Runs left over from before a crash or a daemon outage. */
	flush_spool(&a, 0, 0);

	while (!atomic_load(stop)) {
		rc = client_claim(&job, a.cl, CLAIM_WAIT_S, cfg->pair_claims);
		if (rc == ERR_NOTFOUND) {
			attempt = 0;
			if (once) {
				log_info("no job to claim");
				break;
			}
			flush_spool(&a, 0, 0);
			continue;
		}
		if (rc != 0) {
			if (atomic_load(stop))
				break;
			log_warnx("%s", client_errmsg(a.cl));
			if (once && rc != ERR_AGAIN) {
				ret = 1;
				break;
			}
			http_sleep_ms(
			    http_backoff_ms(&a.backoff, ++attempt), stop);
			continue;
		}
		attempt = 0;
		rc = json_is_object(json_object_get(job, "partner"))
		    ? run_pair(&a, job, json_object_get(job, "partner"))
		    : run_job(&a, job);
		json_decref(job);
		if (once) {
			ret = rc;
			break;
		}
	}
	if (once || atomic_load(stop))
		flush_spool(&a, 0, 0);
out:
	if (hb_started) {
		pthread_mutex_lock(&a.mu);
		a.hb_quit = 1;
		pthread_cond_signal(&a.cv);
		pthread_mutex_unlock(&a.mu);
		pthread_join(a.hb, NULL);
	}
	pthread_cond_destroy(&a.cv);
	pthread_mutex_destroy(&a.mu);
	client_free(a.cl);
	client_free(a.hb_cl);
	spool_free(a.spool);
	free(spool_dir);
	free(a.jobs_dir);
	runas_release(&a.ra);
	cgroup_sys_release(&a.cgs);
	return ret;
}
