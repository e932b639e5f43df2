#ifndef STORE_JOBS_H
#define STORE_JOBS_H

/*
 * Jobs (store/jobs.c): a pair's two jobs made, the runs and log a runner
 * uploads, a job's end (finish, cancel, retry), the jobs list and one
 * job's read, and the counts by state (store_stats, read in pairs.c).
 * Claims and leases are store/claim.h, a pair's reads store/pairs.h.
 */
#include <stddef.h>
#include <stdint.h>

struct buf;
struct store;

struct store_job_new {
	const char *role;        /* base | candidate */
	const char *spec_json;   /* what claim hands to the runner */
	const char *labels_json; /* host labels (array); [] = any host */
	int64_t runs, max_runs, max_attempts;
	int64_t commit_id; /* commits.id of the commit it measures, or 0 */
};

/* One pair: two queued jobs sharing name and point.  Out: pair and job
 * ids (any may be NULL). */
int store_pair_create(struct store *, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, const char *name, const char *point,
    const struct store_job_new *base, const struct store_job_new *cand,
    int64_t now);

struct store_metric {
	const char *name, *unit, *better; /* higher | lower | info */
	double value;
};

struct store_run {
	int64_t job_id, index;
	const char *status; /* ok | failed */
	double duration_s;  /* < 0: unknown */
	const char *error;  /* NULL ok */
	const char *raw;    /* NULL ok; stored capped at CAP_RAW_OUTPUT */
	size_t raw_len;
	const struct store_metric *metrics;
	size_t nmetrics;
	/* The profiled run's blob (compact JSON, docs/MEMCG.md), or NULL.
	 * A run with a profile may use index max_runs (the profile slot). */
	const char *profile;
	/* The host state the run ran under (compact JSON, docs/HOST.md),
	 * or NULL. */
	const char *host_state;
};

/*
 * Stores one run and its metrics in one transaction.  0 when stored,
 * ERR_EXISTS when (job, index) is already stored (nothing changes),
 * ERR_NOTFOUND (no such job), ERR_INVALID (index outside [0, max_runs),
 * or [0, max_runs] for a run with a profile,
 * duplicate metric), ERR_CONFLICT (host does not hold the lease).  A
 * host without the lease gets ERR_EXISTS only for a run it stored itself
 * (a resend); the same index stored by the host that took the requeued
 * job over is ERR_CONFLICT: a cut-off runner's spooled run is refused,
 * never counted as stored.
 */
int store_run_add(
    struct store *, int64_t host_id, const struct store_run *, int64_t now);

/* Appends to the job log, capped at CAP_JOB_LOG per job (then a marker
 * and nothing more).  *out_stored (may be NULL) is the bytes kept.
 * ERR_NOTFOUND, ERR_CONFLICT as store_run_add. */
int store_log_append(struct store *, size_t *out_stored, int64_t host_id,
    int64_t job_id, const char *text, size_t len, int64_t now);

/* Finishes a job the host holds: success or failed with error text.
 * ERR_NOTFOUND, ERR_CONFLICT. */
int store_finish(struct store *, int64_t host_id, int64_t job_id, int ok,
    const char *error, int64_t now);

/* Admin.  Cancel: queued or running -> cancelled.  Retry: failed or
 * cancelled -> queued with attempts reset and failed runs dropped.
 * ERR_NOTFOUND, ERR_CONFLICT (wrong state; the message names it). */
int store_cancel(struct store *, int64_t job_id, int64_t now);
int store_retry(struct store *, int64_t job_id, int64_t now);

/* A job (GET /api/v1/jobs, /jobs). */
struct store_job {
	int64_t id;
	int64_t pair_id; /* 0 for none */
	char *role, *name, *point, *state;
	char *host; /* the host that holds or ran it, or NULL */
	int64_t attempts, runs, runs_done, max_runs;
	char *progress, *error;
	int64_t created, updated;
	int has_lease;
	int64_t lease_expires;
	/* What it measures: a commit of a tree (NULL for a submitted pair
	 * without one). */
	char *commit, *tree, *subject;
};
struct store_jobs {
	struct store_job *v;
	size_t n;
	int64_t next_cursor; /* the cursor of the next page, 0 at the end */
};
/* Jobs newest first with id < cursor (0: from the newest), state NULL
 * for all, at most limit: 0, or -1 (errmsg). */
int store_job_list(struct store *, struct store_jobs *out, const char *state,
    int64_t limit, int64_t cursor);
void store_jobs_release(struct store_jobs *); /* NULL ok */

/*
 * One job with its runs, their metrics and the log tail (GET
 * /api/v1/jobs/{id}, /jobs/{id}/log; the JSON is web/rows.c's).  A run's
 * profile and host state are the documents as stored, their text.
 */
struct store_run_metric {
	char *name, *unit, *better;
	double value;
};
struct store_job_run {
	int64_t index;
	char *status, *host;
	double duration_s; /* NAN: unknown */
	char *error;
	int64_t attempt, created;
	char *profile_json, *host_state_json; /* NULL for none */
	struct store_run_metric *metrics;     /* by name */
	size_t nmetrics;
};
struct store_job_detail {
	struct store_job job;
	struct store_job_run *runs; /* by index */
	size_t nruns;
	/* The log's last 64 KiB (from a character boundary) as stored: not
	 * always UTF-8, no NUL inside; log[log_len] is NUL. */
	char *log;
	size_t log_len;
};
/* 0, ERR_NOTFOUND, or -1 (errmsg); the caller releases *out. */
int store_job_get(struct store *, struct store_job_detail *out, int64_t job_id);
void store_job_detail_release(struct store_job_detail *); /* NULL ok */
/* The raw output of a run into b.  ERR_NOTFOUND. */
int store_run_raw(struct store *, struct buf *b, int64_t job_id, int64_t idx);

struct store_stats {
	int64_t jobs[5]; /* queued, running, success, failed, cancelled */
	int64_t hosts, hosts_online, runs;
};
int store_stats(
    struct store *, struct store_stats *, int64_t now, int64_t online_s);
extern const char *const store_job_states[5];

#endif
