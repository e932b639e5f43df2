/*
 * The runner, a claimed job (runners/agent.h): its spec parsed and its
 * commands rendered, its placement in a cgroup with telemetry and
 * profiles, its warm-up runs, and its tree checked out and built.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/files.h"
#include "common/http.h"
#include "common/log.h"
#include "common/redact.h"
#include "common/xalloc.h"
#include "runners/agent_int.h"
#include "runners/kernel.h"
#include "runners/profile.h"

#define LOG_TAIL 4096 /* stderr bytes copied to the job log */
#define MAX_RUN_INDEX 10000

/* ---- jobs ---- */

void
agent_i_job_release(struct job *j)
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

int
agent_i_job_parse(struct job *j, json_t *o, struct err *e)
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
	        pwjson_str_opt(&j->kcompiler, j->kernel, "compiler", e) != 0 ||
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
int
agent_i_render(char ***out, const struct strlist *tmpl, const struct job *j,
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

void
agent_i_log_stderr_tail(
    struct agent *a, int64_t job, int64_t index, const struct exec_result *r)
{
	size_t off;

	if (r->err.len == 0)
		return;
	off = r->err.len > LOG_TAIL ? r->err.len - LOG_TAIL : 0;
	agent_i_job_log(a, job, "run %" PRId64 " stderr%s:\n%s", index,
	    off ? " (tail)" : "", r->err.data + off);
}

/* ---- memcg: placement, telemetry, profile (docs/MEMCG.md) ---- */

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

void
agent_i_journal_replay(struct agent *a)
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
int
agent_i_place_job(
    struct agent *a, const struct job *j, struct placement *pl, struct buf *why)
{
	struct cgroup_spec spec = { j->cgroup_path, j->memory_max,
		j->memory_high, a->cfg->limits.pids };
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
	agent_i_job_log(a, j->id, "cgroup %s (%s): %s%s%s%s%s", j->cgroup_path,
	    cgroup_kind_name(src.kind), src.memdir,
	    src.v2dir && strcmp(src.v2dir, src.memdir) ? ", cgroup2 " : "",
	    src.v2dir && strcmp(src.v2dir, src.memdir) ? src.v2dir : "",
	    cgroup_notes(pl->cg)[0] ? "; " : "", cgroup_notes(pl->cg));
	return 0;
}

void
agent_i_unplace_job(struct agent *a, int64_t job, struct placement *pl)
{
	struct err e = { 0 };

	while (pl->nfds > 0)
		close(pl->fds[--pl->nfds]);
	telemetry_free(pl->tm);
	pl->tm = NULL;
	if (pl->cg != NULL && cgroup_teardown(pl->cg, &e) != 0)
		agent_i_job_log(a, job, "cgroup teardown: %s", err_msg(&e));
	else if (pl->cg != NULL)
		journal_write(a, NULL);
	cgroup_free(pl->cg);
	pl->cg = NULL;
}

void
agent_i_add_info_metric(
    const char *name, double value, const char *unit, void *arg)
{
	json_array_append_new((json_t *)arg,
	    json_pack("{s:s, s:f, s:s, s:s}", "name", name, "value", value,
	        "unit", unit, "better", "info"));
}

/* The runner's own CPU time (all threads, not its children), seconds. */
double
agent_i_self_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* How one benchmark run is executed (measured, warm-up or profiled). */
void
agent_i_bench_spec(struct exec_spec *spec, struct agent *a, const struct job *j,
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
int
agent_i_warm_up(struct agent *a, const struct job *j, struct host_job *hj,
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
		agent_i_set_progress_text(a, what);
		if (host_job_run_begin(hj, 0, &e) != 0) {
			buf_printf(why, "host: %s", err_msg(&e));
			return -1;
		}
		agent_i_bench_spec(&spec, a, j, pl, argv, scratch, raw_max);
		if (exec_run(&r, &spec, &e) != 0) {
			host_job_run_end(hj);
			buf_printf(
			    why, "warm-up %" PRId64 ": %s", w + 1, err_msg(&e));
			return -1;
		}
		host_job_run_end(hj);
		buf_release(&how);
		exec_describe(&how, &r);
		agent_i_job_log(a, j->id,
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
struct profile *
agent_i_prof_begin(struct agent *a, const struct job *j,
    const struct placement *pl, const char *scratch, int64_t index)
{
	char *dir = xasprintf("%s/profile-%" PRId64, scratch, index);
	struct profile_opts po;
	struct profile *p;

	if (files_mkdir_p(dir) != 0) {
		agent_i_job_log(
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

void
agent_i_prof_end(struct agent *a, const struct job *j, struct profile *p,
    json_t *body, int64_t index)
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
		agent_i_job_log(a, j->id,
		    "run %" PRId64
		    " profile: charge-path share %.3f%% (%s, %s); "
		    "perf record took %.2f%% of one CPU",
		    index, res.share_pct, res.event, res.scope, over);
	else
		agent_i_job_log(a, j->id,
		    "run %" PRId64 " profile: charge-path share unknown: %s",
		    index, res.reason);
	profile_result_release(&res);
}

/*
 * What a directory kept for j's next round must hold (runners/keep.h):
 * its tree, its commit and its build, each argument with its length.
 * NULL when that is too long to say: nothing is kept, every round builds.
 */
char *
agent_i_kept_what(const struct job *j)
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
int
agent_i_prepare_tree(
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

		agent_i_job_log(
		    a, j->id, "checkout %s at %s", shown, j->tree_commit);
		free(shown);
	}
	if (checkout_prepare(&packed, a->cfg->workdir, j->tree_url,
	        j->tree_commit, &pk, scratch, &e) != 0) {
		buf_printf(why, "checkout failed: %s", err_msg(&e));
		return -1;
	}
	if (packed > 0)
		agent_i_job_log(a, j->id,
		    "series commit %s from the daemon's pack "
		    "(%zu bytes)",
		    j->tree_commit, packed);
	agent_i_job_log(
	    a, j->id, "checked out in %" PRId64 " ms", clock_mono_ms() - t0);
	if (runas_own(runas_user(&a->ra), scratch, &e) != 0) {
		buf_printf(why, "checkout failed: %s", err_msg(&e));
		return -1;
	}
	if (j->build.n == 0)
		return 0;
	if (agent_i_render(&bargv, &j->build, j, scratch, a->cfg->name, 0, why,
	        "build") != 0)
		return -1;
	spec = EXEC_SPEC_INIT(bargv);
	spec.cwd = scratch;
	spec.user = runas_user(&a->ra);
	spec.timeout_ms = j->timeout_s * 1000;
	spec.out_max = CAP_LOG_APPEND / 4;
	spec.err_max = CAP_LOG_APPEND / 4;
	spec.cancel = &a->kill;
	agent_i_set_progress_text(a, "build");
	t0 = clock_mono_ms();
	if (exec_run(&r, &spec, &e) != 0) {
		buf_printf(why, "build failed: %s", err_msg(&e));
		config_argv_free(bargv);
		return -1;
	}
	exec_describe(&how, &r);
	agent_i_job_log(a, j->id, "build (%s) %s in %" PRId64 " ms%s%s%s%s",
	    bargv[0], how.data, clock_mono_ms() - t0,
	    r.out.len ? "\nstdout:\n" : "", r.out.data,
	    r.err.len ? "\nstderr:\n" : "", r.err.data);
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
