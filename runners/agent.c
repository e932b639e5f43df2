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
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/files.h"
#include "common/http.h"
#include "common/log.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "runners/agent.h"
#include "runners/agent_int.h"
#include "runners/bench/bench.h"
#include "runners/inventory.h"
#include "runners/keep.h"

#define CLAIM_WAIT_S 30
#define SEND_TRIES 3 /* per run, before leaving it to the spool */

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
    const char *config_sha256, const char *boot, int cached,
    int64_t shared_build)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "build_id",
	    text_or_unknown(build_id), "release", text_or_unknown(release),
	    "config_sha256", text_or_unknown(config_sha256), "boot",
	    text_or_unknown(boot), "cached",
	    cached < 0 ? json_null() : json_boolean(cached), "shared_build",
	    shared_build > 0 ? json_integer(shared_build) : json_null());
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
int
agent_i_flush_spool(struct agent *a, int64_t job, int forever)
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
void
agent_i_deliver_run(struct agent *a, int64_t job, int64_t index, json_t *body)
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
void agent_i_job_log(struct agent *a, int64_t job, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void
agent_i_job_log(struct agent *a, int64_t job, const char *fmt, ...)
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

/* Job's end as the heartbeats see it (enum job_end), when it is one of
 * the claim's jobs. */
static void
set_job_end(struct agent *a, int64_t job, int end)
{
	pthread_mutex_lock(&a->mu);
	if (job != 0 && job == a->job_id)
		a->job_end = end;
	if (job != 0 && job == a->job2_id)
		a->job2_end = end;
	pthread_mutex_unlock(&a->mu);
}

int
agent_i_finish(
    struct agent *a, int64_t job, const char *status, const char *error)
{
	int attempt = 0, rc;

	/* Before the finish is sent: a heartbeat the daemon answers after
	 * it says cancel, which is about this job only. */
	set_job_end(a, job, JOB_FINISHING);
	for (;;) {
		rc = client_finish(a->cl, job, status, error);
		if (rc != ERR_AGAIN || atomic_load(a->stop))
			break;
		http_sleep_ms(http_backoff_ms(&a->backoff, ++attempt), a->stop);
	}
	/* Stored, or refused for good: its lease is of no more use. */
	if (rc != ERR_AGAIN)
		set_job_end(a, job, JOB_FINISHED);
	if (rc != 0)
		log_warnx(
		    "job %" PRId64 ": finish: %s", job, client_errmsg(a->cl));
	else
		log_info("job %" PRId64 ": finished: %s%s%s", job, status,
		    error ? ": " : "", error ? error : "");
	return rc;
}

/* ---- heartbeat thread ---- */

/* What the heartbeats are about from now on: a job, a build or none. */
static void
set_claim(struct agent *a, int64_t job, int64_t build, int64_t runs)
{
	pthread_mutex_lock(&a->mu);
	a->job_id = job;
	a->build_id = build;
	if (build != 0)
		a->job2_id = 0;
	a->job_end = JOB_LIVE;
	a->job2_end = JOB_LIVE;
	a->claim_seq++;
	a->runs_wanted = runs;
	a->boot_lease_s = 0;
	a->progress[0] = '\0';
	a->hb_force = 1;
	atomic_store(&a->kill, 0);
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

void
agent_i_set_job(struct agent *a, int64_t job, int64_t runs)
{
	set_claim(a, job, 0, runs);
}

/* The claim's second job (0: none), kept leased by hb_main too. */
void
agent_i_set_job2(struct agent *a, int64_t job)
{
	pthread_mutex_lock(&a->mu);
	a->job2_id = job;
	a->job2_end = JOB_LIVE;
	a->hb_force = 1;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

void
agent_i_set_build(struct agent *a, int64_t build)
{
	set_claim(a, 0, build, 0);
}

void
agent_i_set_progress(struct agent *a, int64_t i, int64_t n)
{
	pthread_mutex_lock(&a->mu);
	snprintf(
	    a->progress, sizeof(a->progress), "run %" PRId64 "/%" PRId64, i, n);
	/* One heartbeat per run keeps the shown progress current. */
	a->hb_force = 1;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

void
agent_i_set_progress_text(struct agent *a, const char *text)
{
	pthread_mutex_lock(&a->mu);
	snprintf(a->progress, sizeof(a->progress), "%s", text);
	a->hb_force = 1;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

int64_t
agent_i_runs_wanted(struct agent *a)
{
	int64_t n;

	pthread_mutex_lock(&a->mu);
	n = a->runs_wanted;
	pthread_mutex_unlock(&a->mu);
	return n;
}

/* Whether a cancel for job, asked about in claim seq, kills the running
 * benchmark (under mu): it is a job of that claim, still the current
 * one, not being finished, and none came before. */
static int
job_cancels(struct agent *a, int64_t job, uint64_t seq)
{
	if (job == 0 || seq != a->claim_seq || atomic_load(&a->kill))
		return 0;
	return (job == a->job_id && a->job_end == JOB_LIVE) ||
	    (job == a->job2_id && a->job2_end == JOB_LIVE);
}

static void *
hb_main(void *arg)
{
	struct agent *a = arg;
	int64_t next = 0, now, job, job2, build, runs, runs2, boot_s;
	uint64_t seq;
	char progress[sizeof(a->progress)];
	struct timespec ts;
	int cancel, cancel2, rc, failing = 0;

	pthread_mutex_lock(&a->mu);
	while (!a->hb_quit) {
		if (atomic_load(a->stop) &&
		    (a->job_id != 0 || a->build_id != 0))
			atomic_store(&a->kill, 1);
		now = clock_mono_ms();
		if (a->hb_force || now >= next) {
			a->hb_force = 0;
			/* A finished job has no heartbeat; the claim's
			 * other job carries the progress then. */
			job = a->job_end == JOB_FINISHED ? 0 : a->job_id;
			job2 = a->job2_end == JOB_FINISHED ? 0 : a->job2_id;
			if (job == 0) {
				job = job2;
				job2 = 0;
			}
			build = a->build_id;
			seq = a->claim_seq;
			boot_s = a->boot_lease_s;
			memcpy(progress, a->progress, sizeof(progress));
			a->hb_busy = 1;
			pthread_mutex_unlock(&a->mu);
			cancel = 0;
			runs = 0;
			/* A build's lease, else the job's (or idle). */
			rc = build != 0
			    ? client_heartbeat_build(&cancel, a->hb_cl, build,
			          progress[0] ? progress : NULL)
			    : client_heartbeat_boot(&cancel, &runs, a->hb_cl,
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
			if (rc == 0 && build != 0 && build == a->build_id &&
			    cancel && !atomic_load(&a->kill)) {
				log_warnx("build %" PRId64
				          ": cancelled by the daemon (or its "
				          "lease went elsewhere)",
				    build);
				atomic_store(&a->kill, 1);
			}
			if (rc == 0 && build == 0 && cancel &&
			    job_cancels(a, job, seq)) {
				log_warnx("job %" PRId64
				          ": cancelled by the daemon",
				    job);
				atomic_store(&a->kill, 1);
			}
			if (rc == 0 && job != 0 && job == a->job_id &&
			    seq == a->claim_seq && runs > 0)
				a->runs_wanted = runs;
			if (rc == 0 && cancel2 && job_cancels(a, job2, seq)) {
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
	    cfg->name, client_server(a->cl), a->heartbeat_s, lease);
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
	json_t *job, *build;
	int rc, ret = 0, attempt = 0, hb_started = 0;

	memset(&a, 0, sizeof(a));
	a.cfg = cfg;
	a.stop = stop;
	a.once = once;
	a.heartbeat_s = cfg->heartbeat_s > 0 ? cfg->heartbeat_s : 10;
	a.backoff = (struct http_retry){ 0, 250, 10000, stop };
	if (cfg->servers.n > 0) {
		a.cl = client_new_list(
		    (const char *const *)cfg->servers.v, cfg->servers.n, token);
		a.hb_cl = client_new_list(
		    (const char *const *)cfg->servers.v, cfg->servers.n, token);
	} else {
		a.cl = client_new(cfg->server, token);
		a.hb_cl = client_new(cfg->server, token);
	}
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
	log_info("cgroups: %s%s%s%s", cgroup_kind_name(a.cgs.kind),
	    a.cgs.kind == CGROUP_NONE ? ": " : "",
	    a.cgs.kind == CGROUP_NONE ? a.cgs.reason : "",
	    a.cgs.kind == CGROUP_NONE ? ""
	        : a.cgs.v2_pids || a.cgs.pids_mount
	        ? " (limits.pids as pids.max)"
	        : " (limits.pids not enforced: no writable pids "
	          "controller)");
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
	runas_limit(&a.ra, cfg->limits.nproc, cfg->limits.nofile);
	if (cgroup_check_subtree(&a.cgs, &e) != 0) {
		log_warnx("%s", err_msg(&e));
		ret = 1;
		goto out;
	}
	/* Kept builds within this config's number (keep_builds 0: none). */
	keep_prune(a.jobs_dir, cfg->keep_builds);
	agent_i_journal_replay(&a);
	{
		struct buf why = BUF_INIT(CAP_ERRMSG);
		char *sp = agent_i_state_path(&a);

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
	agent_i_flush_spool(&a, 0, 0);

	while (!atomic_load(stop)) {
		rc = client_claim(&job, &build, a.cl, CLAIM_WAIT_S,
		    cfg->pair_claims, cfg->build);
		if (rc == ERR_NOTFOUND) {
			attempt = 0;
			if (once) {
				log_info("no job to claim");
				break;
			}
			agent_i_flush_spool(&a, 0, 0);
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
		if (build != NULL) {
			rc = agent_i_run_build(&a, build);
			json_decref(build);
			if (once) {
				ret = rc;
				break;
			}
			continue;
		}
		rc = json_is_object(json_object_get(job, "partner"))
		    ? agent_i_run_pair(&a, job, json_object_get(job, "partner"))
		    : agent_i_run_job(&a, job);
		json_decref(job);
		if (once) {
			ret = rc;
			break;
		}
	}
	if (once || atomic_load(stop))
		agent_i_flush_spool(&a, 0, 0);
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
