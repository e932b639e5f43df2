#ifndef RUNNERS_HOST_H
#define RUNNERS_HOST_H

/*
 * Benchmark hygiene on a bench host (docs/HOST.md): what state the host
 * is in (`perfwatch-runner host check`), tuning it for benchmarks and
 * putting back exactly what was there before (`host tune` / `host
 * reset`), the per-job settings of a job's `host:` section (CPU pinning,
 * THP mode, drop_caches), and the host state each run records.
 *
 * root prefixes every /sys and /proc path: "" for the real system, a
 * directory laid out like them in tests.  Knobs this host does not expose
 * are "unavailable": never a failure, never a guessed value.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"

struct runner_config;

enum host_status {
	HOST_READY,       /* benchmark-ready */
	HOST_NOT_READY,   /* would move results: tune or fix it */
	HOST_UNAVAILABLE, /* this host does not expose it */
	HOST_INFO         /* recorded, not judged */
};

struct host_item {
	char *name;  /* "cpu0.governor", "thp.enabled" */
	char *state; /* current state; NULL when unavailable */
	enum host_status status;
	char *note; /* why not ready, what ready means; may be NULL */
};

struct host_report {
	struct host_item *v;
	size_t n;
	size_t not_ready; /* items with HOST_NOT_READY */
};

/*
 * Reads every item (see docs/HOST.md for the list) and judges it against
 * the profile in cfg's host: section (NULL: the defaults -- governor
 * performance, turbo off, SMT off, irqbalance stopped).  Never fails:
 * what cannot be read is HOST_UNAVAILABLE.  Release with
 * host_report_release().
 */
void host_check(
    struct host_report *out, const char *root, const struct runner_config *);
void host_report_release(struct host_report *);
/* {"ready": bool, "not_ready": N, "items": [{name, state, status, note}]} */
json_t *host_report_json(const struct host_report *);
/* One line an item: "name  state  status  note". */
void host_report_print(FILE *, const struct host_report *);
const char *host_status_name(enum host_status);

/*
 * Applies cfg's tuning profile: cpufreq governor on every CPU, turbo
 * (intel_pstate no_turbo, cpufreq boost), THP enabled/defrag, IRQ
 * affinity (host.irq_cpus), irqbalance stopped.  The previous contents of
 * every file it writes, and the irqbalance it stopped, are saved first in
 * state_file (JSON), so host_reset() can put them back.  Needs root on the
 * real system (root ""): otherwise nothing is changed and -1 says so.  A
 * state_file that already exists means the host is tuned: -1 (reset
 * first), so the saved state is always the untuned one.  Every change and
 * every knob left alone goes to log, one line each.  0, or -1 (e set;
 * what was changed before a failure is saved and can be reset).
 */
int host_tune(const char *root, const struct runner_config *,
    const char *state_file, struct buf *log, struct err *);
/*
 * Writes back what state_file saved, restarts a stopped irqbalance, and
 * checks that each file reads back byte for byte as saved (a mismatch is
 * an error naming the file).  The state file is removed when all went
 * back.  Needs root like host_tune.  0, or -1 (e set).
 */
int host_reset(
    const char *root, const char *state_file, struct buf *log, struct err *);

/*
 * A job's CPU pinning spec ("0-3,8" or "node:N", docs/CONFIG.md) as a
 * CPU list: a node's list is read from /sys/devices/system/node/nodeN/
 * cpulist.  *out is malloc'd ("0-3,8").  0, or -1 (e set: no such node,
 * a CPU this host does not have).
 */
int host_cpus_resolve(
    char **out, const char *root, const char *spec, struct err *);

/*
 * Pins the calling thread to cpulist, remembering its old affinity in
 * *saved; a process it then spawns (posix_spawn, fork) inherits the
 * pinning with all its threads.  host_unpin() puts the old one back.
 * 0, or -1 (e set).
 */
struct host_pin {
	unsigned char mask[512]; /* the old affinity (cpu_set_t bytes) */
	int active;
};
int host_pin(struct host_pin *saved, const char *cpulist, struct err *);
void host_unpin(struct host_pin *);

/*
 * A job's THP mode (host.thp): sets /sys/kernel/mm/transparent_hugepage/
 * enabled to mode for the job, remembering the old contents in *saved
 * (at least 64 bytes); host_thp_restore() writes it back.  mode NULL or
 * "keep": nothing.  0, 1 when nothing needed changing, -1 (e set: not
 * root, no THP on this host).
 */
int host_thp_set(
    char *saved, size_t len, const char *root, const char *mode, struct err *);
int host_thp_restore(const char *root, const char *saved, struct err *);

/* sync(2), then 3 into /proc/sys/vm/drop_caches.  0 or -1 (e set). */
int host_drop_caches(const char *root, struct err *);

/*
 * The host state a run ran under: {governor, turbo, thp, thp_defrag, smt,
 * cmdline, microcode, kernel, pinning} as strings, "unknown" for what
 * this host does not show ("mixed: a,b" when CPUs differ).  pinning is
 * the resolved CPU list of the benchmark, NULL for none.  Never NULL.
 */
json_t *host_state(const char *root, const char *pinning);

/*
 * A job's host: section (the job spec's "host" object: cpus, server_cpus,
 * thp, drop_caches, warmup, pause_s) while the job runs.
 *
 *	host_job_begin()           resolve pinning, set THP for the job
 *	host_job_run_begin(0)      drop caches, pin this thread; spawn; then
 *	host_job_run_end()         unpin
 *	host_job_state()           what the run ran under
 *	host_job_end()             THP back, free
 *
 * begin fails (-1, e set) only for what makes the job impossible (a
 * NUMA node or CPU this host lacks); a THP mode it cannot set is logged
 * and recorded in each run's state instead.
 */
struct host_job {
	const char *root;
	char *cpus, *server_cpus; /* resolved CPU lists, or NULL */
	char thp_saved[256];      /* THP to put back, or "" */
	int drop_caches;
	int64_t warmup, pause_ms;
	char dropped[CAP_ERRMSG]; /* last drop_caches outcome */
	struct host_pin pin;
};
int host_job_begin(struct host_job *, const char *root, json_t *spec,
    struct buf *log, struct err *);
/* server: pin for server_command (no drop_caches). 0 or -1 (e set). */
int host_job_run_begin(struct host_job *, int server, struct err *);
void host_job_run_end(struct host_job *);
/* host_state() plus "drop_caches": off, done, failed: why. */
json_t *host_job_state(const struct host_job *);
void host_job_end(struct host_job *, struct buf *log);

/*
 * Other work on the host during a run: the host's CPU time from
 * /proc/stat's first line (all CPUs) in clock ticks, busy (user, nice,
 * system, irq, softirq, steal) and total (busy plus idle and iowait).
 * ok 0 when root/proc/stat could not be read.
 */
struct host_cpu_sample {
	int64_t busy, total;
	int ok;
};
void host_cpu_sample(struct host_cpu_sample *, const char *root);
/*
 * The share of the host's CPU time between a and b that other work used:
 * (busy - own) / total in percent, own_s being the run's own CPU time
 * (the benchmark's and the runner's), clamped to [0, 100].  NAN when a
 * sample failed or no time passed.  A server_command counts as other
 * work: it is a process of its own the runner does not wait for.
 */
double host_other_cpu_pct(const struct host_cpu_sample *a,
    const struct host_cpu_sample *b, double own_s);

/* perfwatch-runner host ... (argv[0] is "host"); the exit status. */
int host_main(int argc, char **argv);

#endif
