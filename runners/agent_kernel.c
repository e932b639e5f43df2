/*
 * The runner, kernel jobs (docs/KERNEL.md): the kernel built (or taken
 * from the cache), booted under qemu, kexec or a reboot round by round,
 * the runs measured on it, and a job resumed after the host came back.
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

#include "common/buf.h"
#include "common/files.h"
#include "common/http.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "runners/agent.h"
#include "runners/agent_int.h"
#include "runners/image.h"
#include "runners/kernel.h"

/* ---- kernel jobs (docs/KERNEL.md) ---- */

static void
kernel_log(void *arg, const char *text)
{
	struct agent *a = arg;

	agent_i_job_log(a, a->job_id, "%s", text);
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

void
agent_i_add_metric(
    json_t *metrics, const char *name, double value, const char *unit)
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
		if (agent_i_render(&argvs[i], &j->command, j, "/tmp",
		        a->cfg->name, (int)idx[i] + 1, why, "command") != 0)
			goto out;
	if (j->server_command.n > 0 &&
	    agent_i_render(&sargv, &j->server_command, j, "/tmp", a->cfg->name,
	        0, why, "server_command") != 0)
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
		agent_i_job_log(a, j->id,
		    "boot %" PRId64 ": qemu %s; every boot of this runner "
		    "uses it",
		    boot, d);
	}
	agent_i_job_log(a, j->id,
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
				agent_i_add_metric(metrics, qrun->m[k].name,
				    qrun->m[k].value,
				    strcmp(qrun->m[k].unit, "-") == 0
				        ? ""
				        : qrun->m[k].unit);
			agent_i_add_metric(
			    metrics, "kernel.round", (double)round, "");
			agent_i_add_metric(
			    metrics, "kernel.boot", (double)boot, "");
			agent_i_add_metric(
			    metrics, "kernel.kvm", qr.kvm ? 1 : 0, "");
			(*ok)++;
		} else if (first_err[0] == '\0')
			snprintf(first_err, first_len, "run %" PRId64 ": %s",
			    idx[i],
			    json_string_value(json_object_get(body, "error")));
		json_object_set_new(body, "host_state",
		    json_pack("{s:o}", "kernel_build",
		        agent_kernel_facts(img->build_id, rel,
		            img->config_sha256, "qemu", img->cached,
		            img->shared_build)));
		agent_i_deliver_run(a, j->id, idx[i], body);
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

char *
agent_i_state_path(const struct agent *a)
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
	agent_i_job_log(a, a->job_id, "boot: %s: %s%s%s", what, how.data,
	    r.err.len ? "\n" : "", r.err.data);
	if (r.exited && r.code == 0)
		rc = 0;
	else
		buf_printf(why, "boot: %s: %s: %s", what, how.data, r.err.data);
	exec_result_release(&r);
	buf_release(&how);
	return rc;
}

/* runner.yaml's reboot_entry with each "{release}" made release into
 * out: 0, or -1 when it does not fit. */
static int
reboot_entry(char *out, size_t n, const char *tmpl, const char *release)
{
	struct buf b = BUF_INIT(n - 1);
	const char *p = tmpl, *q;
	int rc;

	while ((q = strstr(p, "{release}")) != NULL) {
		buf_add(&b, p, (size_t)(q - p));
		buf_puts(&b, release);
		p = q + strlen("{release}");
	}
	buf_puts(&b, p);
	rc = buf_failed(&b) ? -1 : 0;
	snprintf(out, n, "%s", rc == 0 ? b.data : "");
	buf_release(&b);
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
	char *path = agent_i_state_path(a), pg[96];
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
	st.shared_build = img->shared_build;
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
	agent_i_job_log(a, j->id, "boot: state written to %s; %s into %s (%s)",
	    path, st.method, img->release, img->image);
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

		if (reboot_entry(entry, sizeof(entry), a->cfg->reboot_entry,
		        img->release) != 0) {
			buf_printf(why,
			    "reboot_entry: longer than %zu bytes "
			    "with the release %s",
			    sizeof(entry) - 1, img->release);
			unlink(path);
			goto out;
		}
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
int
agent_i_resume_job(struct agent *a, struct job *j)
{
	struct buf why = BUF_INIT(CAP_ERRMSG), ver = BUF_INIT(1100);
	char *path = agent_i_state_path(a);
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

		agent_i_job_log(a, j->id,
		    "boot: resumed after %s on %s (expected build id %s)",
		    a->bs.method, ver.data, a->bs.build_id);
		a->kround = a->bs.round;
		a->kboot = a->bs.boot;
		if (kernel_version_release(rel, sizeof(rel), ver.data) != 0)
			rel[0] = '\0';
		json_decref(a->kfacts);
		a->kfacts =
		    agent_kernel_facts(a->bs.build_id, rel, a->bs.config_sha256,
		        a->bs.method, a->bs.cached, a->bs.shared_build);
		rc = 1;
		break;
	}
	case BOOT_WRONG_KERNEL:
		agent_i_finish(a, j->id, "failure", why.data);
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

void
agent_i_kernel_line(char *out, size_t n, const struct kernel_image *img)
{
	/* Nothing was configured for an image built elsewhere. */
	snprintf(out, n,
	    "kernel: build_id=%s release=%s config_sha256=%s cached=%s "
	    "incremental=%s build_s=%.1f config_steps=%s",
	    img->build_id, img->release, img->config_sha256,
	    img->cached ? "yes" : "no", img->incremental ? "yes" : "no",
	    img->build_s,
	    img->cached || img->shared_build > 0 ? "none"
	        : img->config_reused             ? "skipped"
	                                         : "ran");
}

/*
 * The job's kernel.image (a shared build, docs/KERNEL.md): downloaded
 * into kernel_tree/shared/ or found there, verified, logged.  0 with
 * *img, 1 cancelled, -1 failed (why: "image: ...", a job failure of
 * kind build).
 */
static int
shared_image(struct agent *a, struct job *j, json_t *image,
    struct kernel_image *img, struct buf *why)
{
	struct image_spec spec;
	struct image_req rq;
	struct image_got got;
	struct err e = { 0 };
	char resumed[64] = "", line[CAP_ERRMSG];
	int rc;

	if (image_spec_parse(&spec, image, &e) != 0) {
		buf_printf(why, "image: %s", err_msg(&e));
		return -1;
	}
	memset(&rq, 0, sizeof(rq));
	rq.kdir = a->cfg->kernel_tree;
	rq.cl = a->cl;
	rq.cancel = &a->kill;
	rq.cache_max = a->cfg->image_cache_max;
	rq.log = kernel_log;
	rq.arg = a;
	agent_i_set_progress_text(a, "download");
	rc = image_fetch(img, &got, &rq, &spec, why);
	if (rc != 0)
		return rc;
	agent_i_kernel_line(line, sizeof(line), img);
	agent_i_job_log(a, j->id, "%s", line);
	if (got.resumed_at >= 0)
		snprintf(resumed, sizeof(resumed), " (resumed at %" PRId64 ")",
		    got.resumed_at);
	if (got.cached)
		agent_i_job_log(a, j->id,
		    "image: build %" PRId64 " from the local cache",
		    spec.build);
	else
		agent_i_job_log(a, j->id,
		    "image: downloaded %" PRId64 " bytes from build %" PRId64
		    "%s; %zu older image%s removed from the cache",
		    got.bytes, spec.build, resumed, got.evicted,
		    got.evicted == 1 ? "" : "s");
	return 0;
}

/*
 * A job on a kernel commit: build (or reuse) its kernel, then boot it
 * once per round, runs/rounds runs each (and one more boot for runs the
 * daemon adds).  Finishes the job.  0 success, 1 otherwise.
 */
int
agent_i_run_kernel_job(struct agent *a, struct job *j, json_t *jo,
    const char *scratch, size_t raw_max)
{
	const struct runner_config *cfg = a->cfg;
	struct kernel_req kr;
	struct kernel_image img;
	struct buf why = BUF_INIT(CAP_ERRMSG * 4);
	char first_err[CAP_ERRMSG] = "", msg[CAP_ERRMSG];
	json_t *image;
	int64_t *idx = xcalloc((size_t)j->max_runs + 1, sizeof(int64_t));
	int64_t n, ok = 0, ran = 0, boot = 0, round, i, lo, hi;
	size_t k;
	int rc, ret = 1;

	image = json_object_get(j->kernel, "image");
	if (image != NULL && json_is_null(image))
		image = NULL;
	if (cfg->boot == CFG_BOOT_NONE || (image == NULL && !cfg->build)) {
		snprintf(msg, sizeof(msg),
		    "refused: the job asks for a kernel build (kernel.config "
		    "%s) and runner %s has %s",
		    j->kconfig, cfg->name,
		    cfg->boot == CFG_BOOT_NONE
		        ? "boot: none (it only measures the running kernel)"
		        : "build: false (it boots images built elsewhere: "
		          "builds.shared in daemon.yaml)");
		agent_i_finish(a, j->id, "failure", msg);
		goto out;
	}
	if (image != NULL) {
		/* A shared build's image: downloaded, never built here. */
		rc = shared_image(a, j, image, &img, &why);
		if (rc == 1)
			goto out;
		if (rc != 0) {
			agent_i_finish(a, j->id, "failure", why.data);
			goto out;
		}
		goto boot;
	}
	memset(&kr, 0, sizeof(kr));
	kr.kdir = cfg->kernel_tree;
	kr.url = j->tree_url;
	kr.commit = j->tree_commit;
	kr.pack.cl = a->cl;
	kr.pack.path = j->tree_pack;
	kr.config = j->kconfig;
	kr.fragment = &j->kfragment;
	kr.compiler = j->kcompiler;
	kr.job = j->id;
	kr.instance = j->instance;
	kr.timeout_ms = j->build_timeout_s * 1000;
	kr.cancel = &a->kill;
	kr.user = runas_user(&a->ra);
	kr.log = kernel_log;
	kr.arg = a;
	agent_i_set_progress_text(a, "build");
	rc = kernel_build(&img, &kr, &why);
	if (rc == 1)
		goto out;
	if (rc != 0) {
		/* A job failure of kind build, never a zero metric. */
		struct buf fb = BUF_INIT(CAP_ERRMSG * 4);

		buf_printf(&fb, "build: %s", why.data);
		agent_i_finish(a, j->id, "failure", fb.data);
		buf_release(&fb);
		goto out;
	}
	agent_i_kernel_line(msg, sizeof(msg), &img);
	agent_i_job_log(a, j->id, "%s", msg);
boot:
	if (cfg->boot != CFG_BOOT_QEMU) {
		/* kexec / reboot: the runs happen after the restart. */
		if (j->rounds > 1)
			agent_i_job_log(a, j->id,
			    "rounds: %" PRId64 " asked; boot: %s boots once "
			    "per job",
			    j->rounds, config_boot_name(cfg->boot));
		buf_reset(&why);
		if (boot_host(a, j, &img, jo, &why) < 0)
			agent_i_finish(a, j->id, "failure", why.data);
		goto out;
	}
	/* The daemon's round r is this job's r-th boot. */
	if (j->round > 0)
		boot = j->round - 1;
	for (round = 1;; round++) {
		n = agent_i_runs_wanted(a);
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
			agent_i_set_progress_text(a, pg);
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
			agent_i_finish(a, j->id, "failure", why.data);
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
		agent_i_flush_spool(a, j->id, 0);
		goto out;
	}
	if (agent_i_flush_spool(a, j->id, 1) != 0)
		goto out;
	if (ran > 0 && ok == 0) {
		buf_reset(&why);
		buf_printf(&why, "all %" PRId64 " runs failed; first: %s", ran,
		    first_err);
		agent_i_finish(a, j->id, "failure", why.data);
	} else if (agent_i_finish(a, j->id, "success", NULL) == 0)
		ret = 0;
out:
	free(idx);
	buf_release(&why);
	return ret;
}
