/*
 * The runner, a claim measured (runners/agent.h): each side of the
 * claim opened (tree, build, commands), placed once, and measured run by
 * run; one job alone, or both jobs of a pair in turns, round by round.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "common/files.h"
#include "common/http.h"
#include "common/log.h"
#include "common/rounds.h"
#include "common/run_metrics.h"
#include "common/xalloc.h"
#include "runners/agent.h"
#include "runners/agent_int.h"
#include "runners/keep.h"
#include "runners/perfstat.h"
#include "runners/profile.h"

#define SERVER_SETTLE_MS 500 /* server_command's time to start listening */

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
	if (agent_i_job_parse(&sd->j, jo, &e) != 0) {
		agent_i_finish(a, id, "failure", err_msg(&e));
		agent_i_job_release(&sd->j);
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
		sd->what = agent_i_kept_what(&sd->j);
	if (sd->j.kernel == NULL)
		sd->kept = keep_take(a->jobs_dir, sd->j.id, sd->what);
	if (files_mkdir_p(sd->scratch) != 0 ||
	    runas_own(runas_user(&a->ra), sd->scratch, &e) != 0) {
		buf_printf(&why, "%s: %s", sd->scratch,
		    e.set ? err_msg(&e) : strerror(errno));
		agent_i_finish(a, sd->j.id, "failure", why.data);
		goto out;
	}
	if (a->have_bs) {
		int rr = agent_i_resume_job(a, &sd->j);

		if (rr < 0)
			goto out;
		sd->resumed = rr == 1;
	}
	if (sd->j.kernel != NULL && !sd->resumed) {
		sd->ret =
		    agent_i_run_kernel_job(a, &sd->j, jo, sd->scratch, raw_max);
		goto out;
	}
	/* A resumed kernel job runs on the booted kernel: no checkout. */
	if (sd->kept)
		agent_i_job_log(a, sd->j.id,
		    "tree and build kept from this job's last round here "
		    "(%.12s): no checkout, no build",
		    sd->j.tree_commit);
	else if (sd->j.tree != NULL && sd->j.kernel == NULL) {
		int br = agent_i_prepare_tree(a, &sd->j, sd->scratch, &why);

		if (br == 1)
			goto out; /* cancelled or stopping */
		if (br != 0) {
			agent_i_finish(a, sd->j.id, "failure", why.data);
			goto out;
		}
	}
	if (agent_i_render(&sd->argv, &sd->j.command, &sd->j, sd->scratch,
	        a->cfg->name, 1, &why, "command") != 0 ||
	    (sd->j.server_command.n > 0 &&
	        agent_i_render(&sd->sargv, &sd->j.server_command, &sd->j,
	            sd->scratch, a->cfg->name, 0, &why,
	            "server_command") != 0)) {
		agent_i_finish(a, sd->j.id, "failure", why.data);
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
		agent_i_finish(a, sd->j.id, "failure", why);
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
/*
 * host.other_cpu_pct (docs/ANALYSIS.md, "Other work on the host"): the
 * share of the host's CPU time that other work used during the run, an
 * informational metric the verdict adjusts every judged metric for.
 * Nothing when /proc/stat could not be read.
 */
static void
other_work(json_t *metrics, const struct host_cpu_sample *a,
    const struct host_cpu_sample *b, double own_s)
{
	double pct = host_other_cpu_pct(a, b, own_s);

	if (!isnan(pct))
		agent_i_add_info_metric(OTHER_CPU_METRIC, pct, "%", metrics);
}

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
	struct host_cpu_sample hc0, hc1;
	double cpu0, cpu1;
	json_t *body, *hstate;
	int tm_ok, rc = 0;

	if (sd->ran > 0 && hj->pause_ms > 0)
		http_sleep_ms(hj->pause_ms, &a->kill);
	agent_i_set_progress(a, i + 1, n);
	/* {run}: this run's index (rendered as 1 by side_open). */
	config_argv_free(sd->argv);
	sd->argv = NULL;
	if (agent_i_render(&sd->argv, &j->command, j, sd->scratch, a->cfg->name,
	        i + 1, &why, "command") != 0) {
		side_fail(a, sd, why.data);
		rc = -1;
		goto out;
	}
	agent_i_bench_spec(&spec, a, j, pl, sd->argv, sd->scratch, raw_max);
	if (host_job_run_begin(hj, 0, &e) != 0) {
		buf_printf(&why, "host: %s", err_msg(&e));
		side_fail(a, sd, why.data);
		rc = -1;
		goto out;
	}
	tm_ok = pl->tm != NULL && telemetry_begin(pl->tm, &te) == 0;
	prof = j->profile && (j->profile_runs <= 0 || i < j->profile_runs)
	    ? agent_i_prof_begin(a, j, pl, sd->scratch, i)
	    : NULL;
	/* counters: true (docs/MEMCG.md): perf stat on the run. */
	ctr = j->counters ? perfstat_begin(sd->scratch, i,
	                        pl->cg ? cgroup_perf_name(pl->cg) : NULL)
	                  : NULL;
	cpu0 = agent_i_self_cpu_s();
	host_cpu_sample(&hc0, hj->root);
	if (exec_run(&r, &spec, &e) == 0 && r.cancelled) {
		/* Not a measurement: a later attempt redoes it. */
		host_job_run_end(hj);
		profile_free(prof);
		perfstat_free(ctr);
		exec_result_release(&r);
		rc = 1;
		goto out;
	}
	host_cpu_sample(&hc1, hj->root);
	cpu1 = agent_i_self_cpu_s();
	if (j->counters) { /* stopped at once: the window is the run */
		perfstat_stop(ctr, &cres);
		perfstat_free(ctr);
	}
	host_job_run_end(hj);
	if (pl->cg != NULL && !e.set)
		cgroup_pids_refusals(pl->cg, r.limits, sizeof(r.limits));
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
	              NULL, "none", -1, 0));
	json_object_set_new(body, "host_state", hstate);
	if (prof != NULL)
		agent_i_prof_end(a, j, prof, body, i);
	if (j->counters) {
		struct buf cl = BUF_INIT(CAP_ERRMSG);

		perfstat_finish(body, &cres, j->counters_ops, j->parser, &r.out,
		    r.duration_s, &cl);
		agent_i_job_log(a, j->id, "run %" PRId64 " %s", i, cl.data);
		buf_release(&cl);
	}
	if (tm_ok &&
	    strcmp(json_string_value(json_object_get(body, "status")), "ok") ==
	        0 &&
	    telemetry_end(pl->tm, agent_i_add_info_metric,
	        json_object_get(body, "metrics"), &te) < 0)
		agent_i_job_log(
		    a, j->id, "run %" PRId64 " telemetry: %s", i, err_msg(&te));
	if (!e.set &&
	    strcmp(json_string_value(json_object_get(body, "status")), "ok") ==
	        0)
		other_work(json_object_get(body, "metrics"), &hc0, &hc1,
		    r.cpu_s + (cpu1 - cpu0));
	if (a->kround > 0 &&
	    strcmp(json_string_value(json_object_get(body, "status")), "ok") ==
	        0) {
		agent_i_add_metric(json_object_get(body, "metrics"),
		    "kernel.round", (double)a->kround, "");
		agent_i_add_metric(json_object_get(body, "metrics"),
		    "kernel.boot", (double)a->kboot, "");
	}
	if (!e.set)
		agent_i_job_log(a, j->id,
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
			agent_i_log_stderr_tail(a, j->id, i, &r);
	}
	exec_result_release(&r);
	agent_i_deliver_run(a, j->id, i, body);
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
		agent_i_flush_spool(a, sd->j.id, 0);
		goto out;
	}
	/* Every run must be stored before the job is declared finished. */
	if (agent_i_flush_spool(a, sd->j.id, 1) != 0)
		goto out;
	if (sd->ran > 0 && sd->ok == 0) {
		buf_printf(&why, "all %" PRId64 " runs failed; first: %s",
		    sd->ran, sd->first_err);
		agent_i_finish(a, sd->j.id, "failure", why.data);
	} else if (agent_i_finish(a, sd->j.id, "success", NULL) == 0)
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
	agent_i_job_release(&sd->j);
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

	if (agent_i_place_job(a, &sd->j, &ce->pl, &why) == 0) {
		/* host: pinning, THP, drop_caches, warm-up, pause
		 * (runners/host.h) */
		if (host_job_begin(&ce->hj, "", sd->j.host, &ce->hlog, &e) ==
		    0) {
			/* Each side's log says where its runs ran. */
			for (k = 0; ce->hlog.len > 0 && k < n; k++)
				if (!sides[k].ended)
					agent_i_job_log(a, sides[k].j.id, "%s",
					    ce->hlog.data);
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
	agent_i_unplace_job(a, id, &ce->pl);
	agent_i_set_job2(a, 0);
	agent_i_set_job(a, 0, 0);
	json_decref(a->kfacts);
	a->kfacts = NULL;
}

/*
 * Runs a claimed job to the end.  0 when it was finished with success, 1
 * when finished with failure or dropped (cancel, lease lost, stop).
 */
int
agent_i_run_job(struct agent *a, json_t *jo)
{
	struct buf why = BUF_INIT(CAP_ERRMSG);
	struct claim_env ce;
	struct side sd;
	int64_t i, n, id;

	claim_env_init(a, &ce);
	id = json_integer_value(json_object_get(jo, "id"));
	a->kround = 0;
	agent_i_set_job(a, id, json_integer_value(json_object_get(jo, "runs")));
	if (side_open(a, &sd, jo, ce.raw_max) != 0)
		goto out;
	if (claim_begin(a, &ce, &sd, &sd, 1) != 0 ||
	    side_server_start(a, &sd, NULL, &ce) != 0)
		goto out;
	if (ce.hj.warmup > 0 &&
	    agent_i_warm_up(a, &sd.j, &ce.hj, &ce.pl, sd.argv, sd.scratch,
	        ce.raw_max, &why) != 0) {
		side_fail(a, &sd, why.data);
		goto out;
	}
	for (i = 0; i < (n = agent_i_runs_wanted(a)) && i < sd.j.max_runs;
	     i++) {
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
int
agent_i_run_pair(struct agent *a, json_t *jo, json_t *po)
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
	agent_i_set_job(
	    a, id[0], json_integer_value(json_object_get(o[0], "runs")));
	agent_i_set_job2(a, id[1]);
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
		agent_i_job_log(a, id[t],
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
				    agent_i_warm_up(a, &sd->j, &ce.hj, &ce.pl,
				        sd->argv, sd->scratch, ce.raw_max,
				        &why) != 0) {
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
