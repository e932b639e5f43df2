#ifndef RUNNERS_AGENT_INT_H
#define RUNNERS_AGENT_INT_H

/*
 * What the files of the runner's agent share (agent.c, agent_job.c,
 * agent_kernel.c, agent_claim.c): the agent, a claimed job, its
 * placement, and the helpers that report to the daemon.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/json.h"
#include "config/config.h"
#include "runners/bootstate.h"
#include "runners/cgroup.h"
#include "runners/client.h"
#include "runners/exec.h"
#include "runners/host.h"
#include "runners/kernel.h"
#include "runners/qemu.h"
#include "runners/runas.h"
#include "runners/spool.h"
#include "runners/telemetry.h"

/*
 * A claimed job as the heartbeats see it.  From its finish on
 * (agent_i_finish), a cancel in its heartbeat's reply kills nothing: the
 * daemon answers cancel for a job that is no longer running, and the
 * kill would stop the claim's other job, left running and claimed again
 * later.  Once finished, it has no heartbeats.
 */
enum job_end { JOB_LIVE, JOB_FINISHING, JOB_FINISHED };

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
	 * both (run_pair), under mu; how far this runner has got finishing
	 * each (enum job_end); and the claim's number, so the reply to a
	 * heartbeat sent for an earlier claim of the same job changes
	 * nothing. */
	int64_t job_id, job2_id;
	int job_end, job2_end;
	uint64_t claim_seq;
	/* The shared kernel build this runner holds (0: none), under mu:
	 * heartbeats then carry it instead of a job. */
	int64_t build_id;
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
	const char *kcompiler; /* kernel.compiler, NULL: gcc */
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
struct placement {
	struct cgroup *cg;
	int fds[CGROUP_MAX_FDS];
	int nfds;
	struct telemetry *tm;
};

void agent_i_add_info_metric(
    const char *name, double value, const char *unit, void *arg);
void agent_i_add_metric(
    json_t *metrics, const char *name, double value, const char *unit);
/* How one benchmark run is executed (measured, warm-up or profiled). */
void agent_i_bench_spec(struct exec_spec *spec, struct agent *a,
    const struct job *j, const struct placement *pl, char **argv,
    const char *scratch, size_t raw_max);
/* Spools a run body durably, then tries to send it a few times. */
void agent_i_deliver_run(
    struct agent *a, int64_t job, int64_t index, json_t *body);
int agent_i_finish(
    struct agent *a, int64_t job, const char *status, const char *error);
/*
 * Sends what the spool holds for job (0: every job).  With forever, keeps
 * trying with backoff until it is all sent, *stop, or (for a job) a kill;
 * else one pass.  0 when the spool is empty for job, else ERR_AGAIN.
 */
int agent_i_flush_spool(struct agent *a, int64_t job, int forever);
void agent_i_job_log(struct agent *a, int64_t job, const char *fmt, ...);
int agent_i_job_parse(struct job *j, json_t *o, struct err *e);
void agent_i_job_release(struct job *j);
void agent_i_journal_replay(struct agent *a);
/*
 * What a directory kept for j's next round must hold (runners/keep.h):
 * its tree, its commit and its build, each argument with its length.
 * NULL when that is too long to say: nothing is kept, every round builds.
 */
char *agent_i_kept_what(const struct job *j);
void agent_i_log_stderr_tail(
    struct agent *a, int64_t job, int64_t index, const struct exec_result *r);
/*
 * Places the job's benchmark: 0 (pl ready; pl->cg NULL when the host has
 * no cgroups and the job does not ask for placement), or -1 with why.
 */
int agent_i_place_job(struct agent *a, const struct job *j,
    struct placement *pl, struct buf *why);
/*
 * A job on a commit: checks the commit out into scratch and runs the
 * job's build there (with the job's timeout; output in the job log).
 * 0 ready, 1 cancelled (not ours to finish), -1 failed (why set).
 */
int agent_i_prepare_tree(
    struct agent *a, struct job *j, const char *scratch, struct buf *why);
/*
 * profile: true (docs/MEMCG.md): perf record around measured run index,
 * which then uploads its own metrics plus the charge-path share, the
 * profiler's overhead and the profile blob.  NULL when the directory
 * cannot be made (logged; the run goes on unprofiled).
 */
struct profile *agent_i_prof_begin(struct agent *a, const struct job *j,
    const struct placement *pl, const char *scratch, int64_t index);
void agent_i_prof_end(struct agent *a, const struct job *j, struct profile *p,
    json_t *body, int64_t index);
/*
 * Renders a template with the point's values and the built-ins (docs/
 * CONFIG.md): server, workdir, run (the 1-based run index; 0 for build
 * and server_command, which run once), host (the runner's name), cpus.
 */
int agent_i_render(char ***out, const struct strlist *tmpl, const struct job *j,
    const char *scratch, const char *host, int run, struct buf *why,
    const char *what);
/*
 * After a restart with a boot state: what to do with the claimed job.
 * 0 run it as usual (a fresh job, or a stale state), 1 resume it on the
 * booted kernel (a->kround, a->kboot set), -1 it was finished (failure).
 */
int agent_i_resume_job(struct agent *a, struct job *j);
/*
 * Runs a claimed job to the end.  0 when it was finished with success, 1
 * when finished with failure or dropped (cancel, lease lost, stop).
 */
int agent_i_run_job(struct agent *a, json_t *jo);
/*
 * A job on a kernel commit: build (or reuse) its kernel, then boot it
 * once per round, runs/rounds runs each (and one more boot for runs the
 * daemon adds).  Finishes the job.  0 success, 1 otherwise.
 */
int agent_i_run_kernel_job(struct agent *a, struct job *j, json_t *jo,
    const char *scratch, size_t raw_max);
/* The job log's line of the kernel a job boots (or a build made):
 * "kernel: build_id=... release=... cached=yes|no ...". */
void agent_i_kernel_line(char *out, size_t n, const struct kernel_image *img);
/*
 * A claimed shared kernel build (docs/KERNEL.md, "Shared builds"): the
 * kernel built in this runner's build tree of its (tree, key), its files
 * uploaded with their sha256, the build finished.  0 when finished with
 * success, 1 otherwise (failed, cancelled, lease lost, stopping).
 */
int agent_i_run_build(struct agent *a, json_t *bo);
/* The build held (0: none; any job is dropped from the heartbeats). */
void agent_i_set_build(struct agent *a, int64_t build);
/*
 * Both jobs of a pair in one claim (docs/CONFIG.md `rounds`): each side
 * checked out and built once, then measured in turns on this host, round
 * by round, each round's order drawn by rounds_base_first, so the base
 * and candidate runs of a round are seconds apart at most and a drift of
 * the host falls out of the within-round contrasts.  jo is the claimed
 * job, po its partner; runs and cancels are per job, as in run_job.
 * 0 when both were finished with success.
 */
int agent_i_run_pair(struct agent *a, json_t *jo, json_t *po);
int64_t agent_i_runs_wanted(struct agent *a);
/* The runner's own CPU time (all threads, not its children), seconds. */
double agent_i_self_cpu_s(void);
void agent_i_set_job(struct agent *a, int64_t job, int64_t runs);
/* The claim's second job (0: none), kept leased by hb_main too. */
void agent_i_set_job2(struct agent *a, int64_t job);
void agent_i_set_progress(struct agent *a, int64_t i, int64_t n);
void agent_i_set_progress_text(struct agent *a, const char *text);
char *agent_i_state_path(const struct agent *a);
void agent_i_unplace_job(struct agent *a, int64_t job, struct placement *pl);
/*
 * The job's host.warmup runs: executed like the measured ones (same
 * placement, pinning, drop_caches, pause), their outcome logged, nothing
 * uploaded.  0, or -1 when the job must fail (why set); a cancel just
 * returns 0 (the caller sees a->kill).
 */
int agent_i_warm_up(struct agent *a, const struct job *j, struct host_job *hj,
    const struct placement *pl, char **argv, const char *scratch,
    size_t raw_max, struct buf *why);

#endif
