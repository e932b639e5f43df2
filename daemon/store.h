#ifndef DAEMON_STORE_H
#define DAEMON_STORE_H

/*
 * The store: every SQL statement of perfwatch lives in store.c (SQLite).
 *
 * One struct store is one SQLite connection and must be used by one thread
 * at a time; each thread opens its own (store_open).  Connections run in
 * WAL mode with synchronous=NORMAL, foreign keys on and a busy timeout;
 * every write is one BEGIN IMMEDIATE transaction.  Writers inside one
 * process also serialise on a process-wide mutex, so threads queue on a
 * lock instead of sleeping in SQLite's busy handler.
 *
 * Errors: functions return 0, -1 (message in store_errmsg()) or a negative
 * ERR_* code (common/err.h) for the expected outcomes each prototype names;
 * the message then says why ("job 7 is not held by this runner").  Reads
 * that build JSON hand the caller a reference (json_decref()).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/json.h"

#define STORE_VERSION 3 /* schema version after every migration */

struct store;

/* Opens (creating if needed) and migrates to STORE_VERSION.  On failure
 * *out is NULL and the message is in e. */
int store_open(struct store **out, const char *path, struct err *e);
/* Same, migrating only up to version (tests build old schemas with it). */
int store_open_version(
    struct store **out, const char *path, int version, struct err *e);
void store_close(struct store *); /* NULL ok */
const char *store_errmsg(const struct store *);
void store_errclear(struct store *);
/*
 * WAL checkpoints.  By default each connection checkpoints when the WAL
 * passes 1000 pages, inside the commit that crossed it; a server sets 0
 * on its request threads and calls store_checkpoint() (PASSIVE: never
 * waits for readers or writers) from a background thread instead.
 */
int store_set_autocheckpoint(struct store *, int pages);
int store_checkpoint(struct store *);
/* PRAGMA user_version, or -1. */
int store_user_version(struct store *);

/* Explicit transactions around several calls (submit of many pairs).
 * Calls inside an explicit transaction join it. */
int store_begin(struct store *);
int store_commit(struct store *);
void store_rollback(struct store *);

/* ---- hosts ---- */

/* Creates or updates the host by name; labels and inventory are JSON
 * texts (an array of strings, an object). */
int store_host_register(struct store *, int64_t *out_id, const char *name,
    const char *labels_json, const char *inventory_json, int64_t now);
/* 0 and *out_id, or ERR_NOTFOUND. */
int store_host_id(struct store *, int64_t *out_id, const char *name);
int store_host_seen(struct store *, int64_t host_id, int64_t now);

/* ---- jobs and pairs ---- */

struct store_job_new {
	const char *role;        /* base | candidate */
	const char *spec_json;   /* what claim hands to the runner */
	const char *labels_json; /* host labels (array); [] = any host */
	int64_t runs, max_runs, max_attempts;
};

/* One pair: two queued jobs sharing name and point.  Out: pair and job
 * ids (any may be NULL). */
int store_pair_create(struct store *, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, const char *name, const char *point,
    const struct store_job_new *base, const struct store_job_new *cand,
    int64_t now);

/*
 * Claims a job for host: a job the host already holds (a restarted
 * runner gets it back), else the first queued job whose labels match the
 * host's (its name counts as a label), whose pair is unbound or bound to this
 * host, preferring pairs bound to this host, then the oldest pair, base before
 * candidate.  The claim binds the pair to the host, counts an attempt and
 * leases the job until now + lease_s.  0 and *out = {"job": {...},
 * "lease_expires": T} (the job object is the stored spec plus id, pair_id,
 * role, attempt, done_runs), or ERR_NOTFOUND when there is nothing to do.
 */
int store_claim(struct store *, json_t **out, int64_t host_id, int64_t now,
    int64_t lease_s);

/*
 * Puts back jobs whose lease expired before now: attempts < max_attempts
 * goes back to queued, else failed with "lease expired N times".  When a
 * requeued job's pair partner has no runs and is not running, the pair's
 * host binding is released and the runs the requeued job stored on that
 * host are discarded, so any runner may take the pair afresh.  *out_n
 * (may be NULL) counts the jobs changed.
 */
int store_requeue_expired(struct store *, int64_t now, int *out_n);

/*
 * Heartbeat from host.  job_id 0 = idle (only last_seen is updated).
 * 0 and the new expiry and wanted runs, or ERR_CONFLICT when the host
 * does not hold the job's lease any more (cancelled, expired, finished),
 * or ERR_NOTFOUND.
 */
int store_heartbeat(struct store *, int64_t *out_expires, int64_t *out_runs,
    int64_t host_id, int64_t job_id, const char *progress, int64_t now,
    int64_t lease_s);

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
};

/*
 * Stores one run and its metrics in one transaction.  0 when stored,
 * ERR_EXISTS when (job, index) is already stored (nothing changes),
 * ERR_NOTFOUND (no such job), ERR_INVALID (index outside [0, max_runs),
 * or [0, max_runs] for a run with a profile,
 * duplicate metric), ERR_CONFLICT (host does not hold the lease).
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

/* ---- reads (JSON shapes are those of docs/API.md) ---- */

/* Jobs newest first; state NULL = all; cursor 0 = from the newest.
 * {"jobs": [...], "next_cursor": "N"} (next_cursor absent at the end). */
int store_jobs_list(struct store *, json_t **out, const char *state,
    int64_t limit, int64_t cursor);
/* One job with runs, metrics and the log tail.  ERR_NOTFOUND. */
int store_job_get(struct store *, json_t **out, int64_t job_id);
/* The raw output of a run into b.  ERR_NOTFOUND. */
int store_run_raw(struct store *, struct buf *b, int64_t job_id, int64_t idx);
/* Hosts; online when last_seen >= now - online_s. */
int store_hosts_list(struct store *, json_t **out, int64_t limit,
    int64_t cursor, int64_t now, int64_t online_s);
/* {"id", "name", "point", "host", "base": JOB, "candidate": JOB,
 * "comparisons": [...]} or ERR_NOTFOUND. */
int store_pair_get(struct store *, json_t **out, int64_t pair_id);

struct store_stats {
	int64_t jobs[5]; /* queued, running, success, failed, cancelled */
	int64_t hosts, hosts_online, runs;
};
int store_stats(
    struct store *, struct store_stats *, int64_t now, int64_t online_s);
extern const char *const store_job_states[5];

#endif

/*
 * ---- dashboard reads and triage (web/, issue 7) ----
 * Kept in one block at the end to ease merges.  Each read hands back
 * {"rows": [...]}: one object per row, keys the column names below, values
 * typed as stored (null when NULL).  Lists run newest first; cursor 0 =
 * from the newest, else an id from the previous page ("before this id").
 */

/*
 * The newest candidate jobs with what the overview groups them by: id,
 * pair_id, name, point, state, progress, created, commit_id, sha, subject,
 * author, time (commit date, else job creation), tree, branches,
 * series_id, series_title, base_state, base_progress, verdicts (the pair's
 * comparison verdicts, comma-separated, or null).
 */
int store_web_recent(struct store *, json_t **out, int64_t limit);
/* Regressions by triage state: {"new": N, ...} as an object. */
int store_web_regression_counts(struct store *, json_t **out);

/*
 * A commit by full sha or unique prefix (hex, >= 4 characters), with its
 * pairs: {"commit": {id, sha, subject, author, time, tree, branches,
 * parents}, "pairs": [pair ids, newest first], "series": {id, title} or
 * null}.  ERR_NOTFOUND; ERR_CONFLICT when the prefix is ambiguous.
 */
int store_web_commit(struct store *, json_t **out, const char *sha);
/* A series: {"series": {id, inbox, title, version, total, author, time,
 * state, error, commit_sha}, "pairs": [...]}.  ERR_NOTFOUND. */
int store_web_series(struct store *, json_t **out, int64_t id);
/*
 * The metric values of both sides of a pair, from runs with status ok:
 * rows of {role, metric, unit, better, value, run} ordered by metric.
 */
int store_web_pair_values(struct store *, json_t **out, int64_t pair_id);

/*
 * A metric's history: one row per stored value of metric in jobs named
 * job at point, on host (NULL any), on commits of tree and branch (NULL:
 * any; with both NULL, jobs without a commit are included too), with a
 * time in [from, to] (0 = open):  job_id, pair_id, role, sha, subject,
 * time, host, value, unit, better, regression (triage state when the
 * pair's comparison of this metric is a regression, else null).  At most
 * limit jobs, the newest before cursor (a job id), returned oldest first.
 */
int store_web_history(struct store *, json_t **out, const char *tree,
    const char *branch, const char *host, const char *job, const char *point,
    const char *metric, int64_t from, int64_t to, int64_t limit,
    int64_t cursor);
/* The commit time of a commit (sha or prefix), for history ranges. */
int store_web_commit_time(struct store *, int64_t *out, const char *sha);

/*
 * Regressions, newest first, filtered (NULL = any): id, state, note,
 * created, updated, metric, change_pct, verdict, pair_id, bench, point,
 * host, sha, subject, tree, branches.
 */
int store_web_regressions(struct store *, json_t **out, const char *tree,
    const char *host, const char *bench, const char *state, int64_t limit,
    int64_t cursor);
/*
 * Sets a regression's triage state (new, acknowledged, invalid, fixed)
 * and note (NULL keeps it).  ERR_NOTFOUND, ERR_INVALID (state).
 */
int store_web_triage(struct store *, int64_t id, const char *state,
    const char *note, int64_t now);
/* Operations gauges: alerts not yet sent, trees whose last fetch failed. */
int store_web_ops(
    struct store *, int64_t *out_alerts_pending, int64_t *out_fetch_errors);
