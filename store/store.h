#ifndef STORE_STORE_H
#define STORE_STORE_H

/*
 * The store: every SQL statement of perfwatch lives in store/ (SQLite),
 * one file per entity (docs/ARCHITECTURE.md).  This header holds the
 * connection and the entities without a header of their own (jobs and
 * leases, runs, a pair's reads, verdicts, the watcher's trees and
 * triggers); the others are in store/<entity>.h.  No SQLite type is part
 * of this interface: another backend implements the same prototypes.
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

#define STORE_VERSION 37 /* schema version after every migration */

struct store;

/* Opens (creating if needed) and migrates to STORE_VERSION.  On failure
 * *out is NULL and the message is in e. */
int store_open(struct store **out, const char *path, struct err *e);
/* Same, migrating only up to version (tests build old schemas with it). */
int store_open_version(
    struct store **out, const char *path, int version, struct err *e);
void store_close(struct store *); /* NULL ok */
/*
 * The database's instance id (12 hex digits, made once per database by
 * migration 18): *out (valid while the store is open), 0 or -1.  Kernel
 * build ids carry it, so two databases never name two builds alike.
 */
int store_instance(struct store *, const char **out);
const char *store_errmsg(const struct store *);
/* 1 while the connection to the database server is lost (its
 * statements fail until it is back; store/db_pg.c); a file's: 0. */
int store_unavailable(struct store *);
/*
 * The SQLite virtual machine steps the store's list and page reads took
 * so far (those of store_i_rows, and the history's): the work of a read,
 * which no machine's speed changes, for tests that a page's cost does
 * not grow with what is stored around it.
 */
uint64_t store_read_steps(const struct store *);
void store_errclear(struct store *);
/*
 * WAL checkpoints.  By default each connection checkpoints when the WAL
 * passes 1000 pages, inside the commit that crossed it; a server sets 0
 * on its request threads and calls store_checkpoint() from a background
 * thread instead: a passive pass, and past STORE_WAL_RESET_PAGES WAL
 * pages (store_set_wal_reset) a second one holding the writers' lock, so
 * that the next write starts the WAL over.  It never waits for readers.
 */
#define STORE_WAL_RESET_PAGES 32768 /* 128 MB of 4 KB pages */
int store_set_autocheckpoint(struct store *, int pages);
void store_set_wal_reset(struct store *, int pages);
int store_checkpoint(struct store *);
/* PRAGMA user_version, or -1. */
int store_user_version(struct store *);
/*
 * What a page could show from this store has not changed while *out
 * stays the same: it moves when any connection (this one included)
 * commits a change, except a heartbeat's (a host's last_seen, a job's
 * lease, progress and updated).  It is the store's generation, which a
 * write transaction moves as it commits (migration v32); writes made
 * outside the store's transactions do not move it.  For caches of what
 * was read (web/cache.h), which show what does not move it at most
 * their time to live late.  SQLite: read from the database only when
 * SQLite's data_version or this connection's change count moved since
 * the last call.  PostgreSQL: the process's own count, moved by this
 * process's commits and by store_gen_poll when it finds the generation
 * moved by another process (store/leases.h); no statement.  0, or -1.
 */
struct store_version {
	int64_t gen;
};
int store_data_version(struct store *, struct store_version *out);

/*
 * Write-lock accounting (GET /metrics): how long writers of each class
 * waited for the process write lock and held it (BEGIN IMMEDIATE ...
 * COMMIT), process-wide.  A connection's class is set once after opening
 * (default other); claims and heartbeats count as claim_heartbeat
 * whatever their connection's class.
 */
enum store_writer {
	STORE_W_OTHER,   /* request threads, watchers, alerts */
	STORE_W_URGENT,  /* claims and heartbeats */
	STORE_W_UPLOADS, /* the upload batch writer (store/batch.h) */
	STORE_W_VERDICT, /* the verdict worker */
	STORE_W_SCHED,   /* the scheduler's ticker: requeue, checkpoints */
	STORE_WRITERS
};
extern const char *const store_writer_names[STORE_WRITERS];
struct store_write_stat {
	uint64_t n;            /* write transactions */
	double wait_s, hold_s; /* sums, seconds */
	double wait_max_s, hold_max_s;
	int waiting;       /* writers waiting now */
	uint64_t last_seq; /* when the class last took the lock: a count of
	                      all acquisitions (tests check the order) */
};
void store_set_writer(struct store *, enum store_writer);
void store_write_stats(struct store_write_stat out[STORE_WRITERS]);

/* Explicit transactions around several calls (submit of many pairs).
 * Calls inside an explicit transaction join it. */
int store_begin(struct store *);
int store_commit(struct store *);
void store_rollback(struct store *);
/*
 * A read transaction around the reads of one reply: one snapshot, and
 * one WAL read lock for them all instead of one per statement (each
 * took and dropped its own, a fcntl and the file's mutex both ways: a
 * quarter of the uncached pair page).  A write on the connection ends
 * it first; store_read_end after that, or with none open, does
 * nothing.
 */
int store_read_begin(struct store *);
void store_read_end(struct store *);

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
	int64_t commit_id; /* commits.id of the commit it measures, or 0 */
};

/* One pair: two queued jobs sharing name and point.  Out: pair and job
 * ids (any may be NULL). */
int store_pair_create(struct store *, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, const char *name, const char *point,
    const struct store_job_new *base, const struct store_job_new *cand,
    int64_t now);

/*
 * What a claim hands the runner.  The JSON the runner gets is made at the
 * HTTP edge (web/rows.c rows_claim_json): the stored spec with these
 * fields set.  Text is the struct's own copy.
 */
struct store_claimed {
	int64_t job_id, pair_id;
	char *role;      /* base | candidate */
	int64_t attempt; /* this claim's, from 1 */
	/* The runs this claim is to end at (the round's end, else the
	 * job's) and the job's cap. */
	int64_t runs, max_runs;
	/* The round (docs/CONFIG.md `rounds`), from 1; 0 when the job has
	 * no rounds. */
	int64_t round;
	int64_t *done_runs; /* the indexes stored already, ascending */
	size_t ndone;
	char *instance; /* store_instance, for the kernel's build id */
	int64_t lease_expires;
	char *spec_json; /* the stored spec as stored: the store does not
	                    parse it */
	/* A pair claim (store_claim_pair): the pair's other job, claimed
	 * with this one, and the runs a side a round; else NULL and 0. */
	struct store_claimed *partner;
	int64_t round_size;
	/* A job linked to a shared build (store/builds.h): the image the
	 * runner downloads, the "kernel.image" object as compact JSON
	 * (docs/API.md); else NULL. */
	char *image_json;
};

void store_claimed_release(struct store_claimed *); /* NULL ok */

/*
 * Claims a job for host: a job the host already holds (a restarted
 * runner gets it back), else the first queued job whose labels match the
 * host's (its name counts as a label), whose pair is unbound or bound to this
 * host, preferring pairs bound to this host, then the oldest pair, base before
 * candidate.  The claim binds the pair, and the unbound pairs of its
 * sibling group (store/hosts.h), to the host, counts an attempt and
 * leases the job until now + lease_s.  0 and *out (the caller
 * store_claimed_release()s it), or ERR_NOTFOUND when there is nothing to
 * do; *out is zeroed on every failure.
 */
int store_claim(struct store *, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s);

/*
 * store_claim for a runner that can measure both jobs of a pair in turns
 * (docs/CONFIG.md `rounds`): when the claimed job's pair runs in rounds,
 * is no kernel job, and its other job is queued and fits the host (or
 * this host holds it already), that job is claimed too, as out->partner,
 * and both are to end at their runs (no round by round claims):
 * out->round_size says the runs a side a round.
 */
int store_claim_pair(struct store *, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s);
/*
 * Either of them (pairs) for a runner that may not build kernels
 * (builds 0, the claim's "builds": false): a kernel job it would have
 * to build itself (no shared build) is left for another.
 */
int store_claim_as(struct store *, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s, int pairs, int builds);

/*
 * Puts back jobs whose lease expired before now: attempts < max_attempts
 * goes back to queued, else failed with "lease expired N times".  When a
 * requeued job's pair partner has no runs and is not running, the pair's
 * host binding (with its sibling group's pairs that have not started) is
 * released and the runs the requeued job stored on that
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

/* ---- typed reads ----
 * The model the rest of the store follows (docs/ARCHITECTURE.md): a read
 * fills structs the caller releases, and the JSON of the API is made at
 * the HTTP edge (web/rows.h), not here.  Text fields are NULL when the
 * column is; a stored JSON document (labels, inventory) stays its text.
 */

/* A host (GET /api/v1/hosts, /hosts). */
struct store_host {
	int64_t id;
	char *name;
	char *labels_json;    /* as registered: a JSON array, or NULL */
	char *inventory_json; /* as registered: a JSON object, or NULL */
	int online;           /* last_seen >= now - online_s */
	int64_t current_job;  /* the running job it holds, 0 for none */
	int64_t last_seen, registered;
	char *quarantined; /* why a canary quarantined it, or NULL */
	int has_quarantined_at;
	int64_t quarantined_at;
};
struct store_hosts {
	struct store_host *v;
	size_t n;
	int64_t next_cursor; /* the cursor of the next page, 0 at the end */
};
/* Hosts with id > cursor, by id, at most limit: 0, or -1 (errmsg). */
int store_hosts_get(struct store *, struct store_hosts *out, int64_t limit,
    int64_t cursor, int64_t now, int64_t online_s);
void store_hosts_release(struct store_hosts *); /* NULL ok */

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
int store_jobs_get(struct store *, struct store_jobs *out, const char *state,
    int64_t limit, int64_t cursor);
void store_jobs_release(struct store_jobs *); /* NULL ok */

/*
 * A pair with its two jobs and its comparisons (store_pair_read; the
 * JSON of GET /api/v1/pairs/{id} is web/rows.c's).  The comparisons'
 * strings are the list's own; their doubles are NAN and their counts -1
 * where the column is NULL.
 */
struct store_pair {
	int64_t id;
	char *name, *point, *host; /* NULL where unknown */
	int64_t created;
	int deprioritised; /* superseded by a newer pair of its series */
	char *suspect;     /* host hygiene: why the sides differ, or NULL */
	struct store_jobs jobs;        /* v[0] the base, v[1] the candidate */
	struct store_comparison *cmps; /* by metric */
	size_t ncmps;
	/*
	 * What each side (base, candidate) cost: its spec's `rounds` (1
	 * when absent), whether it is a kernel job (its spec has "kernel":
	 * the runner builds and boots the commit), and for a kernel job the
	 * boots its runs record (distinct `kernel.boot` values; -1 when no
	 * run recorded one).  A job that is no kernel job boots nothing: 0.
	 */
	int64_t rounds[2], boots[2];
	int kernel[2];
};
/* 0, ERR_NOTFOUND (no such pair), or -1 (a side's job is missing too). */
int store_pair_read(struct store *, struct store_pair *out, int64_t pair_id);
void store_pair_release(struct store_pair *); /* NULL ok */

/* A metric value of one side of a pair, from a run with status ok. */
struct store_value {
	char *role, *metric, *unit, *better;
	double value;
	int64_t run; /* the run's index */
};
struct store_values {
	struct store_value *v;
	size_t n;
};
/* Both sides' values, by metric, role and run: 0 or -1. */
int store_pair_values(
    struct store *, struct store_values *out, int64_t pair_id);
void store_values_release(struct store_values *); /* NULL ok */

/* ---- reads (JSON shapes are those of docs/API.md) ---- */

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

/*
 * ---- dashboard reads and triage (web/) ----
 * Each read hands back
 * {"rows": [...]}: one object per row, keys the column names below, values
 * typed as stored (null when NULL).  Lists run newest first; cursor 0 =
 * from the newest, else an id from the previous page ("before this id").
 */

/* The overview's jobs and counts and a commit's page are typed reads:
 * store/dash.h. */
/* A series for its page: store_web_series, store/series.h. */

/*
 * A metric's history: the jobs named job at point, on host (NULL any), on
 * commits of tree and branch (NULL: any; with both NULL, jobs without a
 * commit are included too), with a time in [from, to] (0 = open) and a
 * stored value of metric in a run with status ok.  At most limit jobs,
 * the newest before cursor (a job id), returned oldest first (by time,
 * then id).  Text is as the JSON rows had it: bytes that are not UTF-8
 * are '?'.  A job whose pair has its verdict comes with its stored
 * summary, another with its values.  A range of dates with fewer of the
 * series' jobs than the scan budget is read from its own index (schema
 * v30) and never partial.
 */
struct store_history_q {
	const char *tree, *branch, *host, *job, *point, *metric;
	int64_t from, to, limit, cursor;
	/* At most this many of the series' jobs are examined for a page
	 * (0: STORE_HISTORY_SCAN): filters that pass few of them end the
	 * page early, with a cursor to go on (store_history.capped). */
	int64_t scan;
};
/* ~8 ms of a core at 1M runs, when the filters pass none. */
#define STORE_HISTORY_SCAN 10000
struct store_hist_job {
	int64_t job_id, pair_id, time; /* time: commit date, else created */
	char *role, *sha, *subject;    /* sha and subject NULL: no commit */
	/* The triage state when the pair's comparison of metric is a
	 * regression and this is its candidate job, else NULL. */
	char *regression;
	/* Its stored summary (schema v20, when its pair got its verdict):
	 * values NULL.  Else values (nvalues of them, in run order) are
	 * what to summarise, and n and the rest 0. */
	int64_t n;
	double median, lo, hi;
	double *values;
	size_t nvalues;
};
struct store_history {
	struct store_hist_job *v;
	size_t n;
	char *unit, *better; /* the metric's, NULL when no job has it */
	/* The cursor of the next page (jobs below it), 0 at the end: the
	 * page is in time order, so its least job id, as
	 * store_i_next_cursor has it for lists paging downwards. */
	int64_t next_cursor;
	/* 1 when the page stopped at its scan budget before it was full:
	 * next_cursor goes on below the jobs it examined. */
	int capped;
};
int store_history_get(
    struct store *, struct store_history *out, const struct store_history_q *);
void store_history_release(struct store_history *);
/* The commit time of a commit (sha or prefix), for history ranges. */
int store_web_commit_time(struct store *, int64_t *out, const char *sha);

/* Regressions are a typed read: store/dash.h. */
/*
 * Sets a regression's triage state (new, acknowledged, invalid, fixed)
 * and note (NULL keeps it).  ERR_NOTFOUND, ERR_INVALID (state).
 */
int store_web_triage(struct store *, int64_t id, const char *state,
    const char *note, int64_t now);
/* Operations gauges: alerts not yet sent, trees whose last fetch failed. */
int store_web_ops(
    struct store *, int64_t *out_alerts_pending, int64_t *out_fetch_errors);

/*
 * ---- verdicts (daemon/verdict.c) ----
 * What the verdict glue reads and writes; kept in one block to ease
 * merges.  The writes join an explicit transaction (store_begin), so a
 * pair's comparisons, regressions, re-queue and history land together or
 * not at all.
 */

/* Up to max pairs whose two jobs succeeded and that have no final
 * verdict yet, oldest first, into out; *out_n of them. */
int store_verdict_pending(
    struct store *, int64_t *out, size_t max, size_t *out_n);

/*
 * What a verdict needs about a pair (typed reads; the caller
 * releases).  A side: its job, state, wanted runs and max_runs, its spec
 * (the stored document's text), its commit's tree name and branches
 * (comma-separated; NULL: no commit), and the runs stored
 * (store_verdict_unchanged).
 */
struct store_vside {
	int64_t id;
	char *state;
	int64_t runs, max_runs;
	char *spec_json; /* the job spec as stored, or NULL */
	char *tree, *branches;
	int64_t stored;
};
struct store_vpair {
	int64_t pair_id;
	char *name, *point;
	int64_t host_id; /* 0: no host yet */
	char *host;      /* its name, or NULL */
	int analysed;
	struct store_vside base, cand;
};
/* 0, ERR_NOTFOUND (no such pair, or a side is missing), or -1. */
int store_verdict_pair(
    struct store *, struct store_vpair *out, int64_t pair_id);
void store_vpair_release(struct store_vpair *); /* NULL ok */
/* The metric values of the pair's runs with status ok (run index below
 * max_runs: a profile slot is not a run), ordered by metric, role, run;
 * store_values_release.  0 or -1. */
int store_verdict_values(
    struct store *, struct store_values *out, int64_t pair_id);
/*
 * The candidates for a pair's memcg-tax siblings (daemon/verdict.c
 * decides): the pairs of its sibling group (store/hosts.h) bound to the
 * same host, the pair itself included; none when the pair has no host
 * yet.  By id; the specs are the jobs' spec texts (non-UTF-8 bytes '?').
 */
struct store_vsib {
	int64_t pair_id;
	char *point;
	int analysed;
	char *base_spec_json, *cand_spec_json; /* NULL: none */
};
struct store_vsibs {
	struct store_vsib *v;
	size_t n;
};
int store_verdict_siblings(
    struct store *, struct store_vsibs *out, int64_t pair_id);
void store_vsibs_release(struct store_vsibs *); /* NULL ok */
/*
 * The baseline's history: values of the ok runs of successful base jobs
 * of earlier pairs (id below pair_id) with the same job name and point,
 * measured on the pair's host; the newest max_jobs such jobs.  Ordered
 * by metric, job and run.
 */
struct store_vhist {
	char *metric;
	int64_t job; /* the base job */
	double value;
};
struct store_vhists {
	struct store_vhist *v;
	size_t n;
};
int store_verdict_history(struct store *, struct store_vhists *out,
    int64_t pair_id, int64_t max_jobs);
void store_vhists_release(struct store_vhists *); /* NULL ok */

/* One comparison row.  Doubles: NAN = unknown (stored as NULL). */
struct store_comparison {
	const char *metric, *unit, *better; /* better: higher|lower|info */
	const char *verdict;                /* regression improvement unchanged
	                                       inconclusive unstable info */
	const char *note;                   /* NULL ok */
	int64_t n_base, n_cand;
	double base_median, cand_median, change_pct, ci_low, ci_high;
	double p, p_adjusted, min_effect;
	int final; /* 0: interim, more runs were requested */
	/*
	 * Each side's mean and sample standard deviation (schema v33; its
	 * %stddev is analysis/spread.h's spread_pct), of the same n_base /
	 * n_cand values as the medians; NAN: unknown (sd with fewer than 2).
	 * A writer that leaves has_spread 0 writes none of them (a new row
	 * has them unknown), so a zeroed struct never claims a mean of 0;
	 * a read sets it when the row has any of them.
	 */
	int has_spread;
	double base_mean, base_sd, cand_mean, cand_sd;
};

/*
 * Inserts or replaces the comparison of (pair, metric), keeping its id.
 * A final regression or unstable verdict also creates its regressions
 * row (state new) unless one exists.  *out_id (may be NULL) is the
 * comparison id.
 */
int store_verdict_put(struct store *, int64_t *out_id, int64_t pair_id,
    const struct store_comparison *, int64_t now);
/* 0 when the pair still waits for its verdict (both jobs success, not
 * analysed), ERR_CONFLICT when not (the message says why). */
int store_verdict_check(struct store *, int64_t pair_id);
/* Marks the pair's verdict final, and stores its jobs' summaries for
 * the history (store_history_get). */
int store_verdict_done(struct store *, int64_t pair_id, int64_t now);
/*
 * Adaptive runs: re-opens the jobs of a pair (state success) that have
 * fewer than runs wanted: queued with runs, attempts reset, lease and
 * progress cleared.  A side that has them already (a base shared with a
 * pair that asked first) stays as it is.  The pair keeps its host binding
 * and the stored runs stay (the claim's done_runs lets the runner
 * continue).  runs may pass a job's max_runs up to max_past (a suspected
 * low mode, docs/ANALYSIS.md), which then raises the job's max_runs.
 * ERR_CONFLICT when a job is not success, runs is above a job's max_runs
 * and max_past, or neither job is short of runs.
 */
int store_verdict_requeue(struct store *, int64_t pair_id, int64_t runs,
    int64_t max_past, int64_t now);

/* ---- metric history and change points ---- */

/* A history series: tree and branch "" for submitted pairs. */
struct store_series_key {
	const char *tree, *branch;
	int64_t host_id;
	const char *job, *point, *metric, *better;
};

/*
 * Adds the candidate median of a pair to its series (created on first
 * use); adding the same pair again changes nothing.  The point goes where
 * its candidate commit's first-parent position puts it among the points
 * that have one (a late verdict lands before later commits, which move
 * up one seq with their change points); a point without a position
 * (submitted pairs, commits recorded before schema v9) goes last.
 * *out_series and *out_seq (0-based position) may be NULL.
 */
int store_history_append(struct store *, int64_t *out_series, int64_t *out_seq,
    const struct store_series_key *, int64_t pair_id, int64_t job_id,
    int64_t comparison_id, double value, int64_t now);
/*
 * The last max points of a series, oldest first: *out_values and
 * *out_seqs (caller frees both), *out_n.
 */
int store_history_tail(struct store *, double **out_values, int64_t **out_seqs,
    size_t *out_n, int64_t series, size_t max);

struct store_change_point {
	int64_t seq;            /* first point after the change */
	int64_t lo_seq, hi_seq; /* the change lies in [lo, hi] */
	double before, after, change_pct, p;
	const char *direction; /* regression | improvement */
};

/* Replaces the series' change points at seq >= from_seq by cps. */
int store_changepoints_replace(struct store *, int64_t series, int64_t from_seq,
    const struct store_change_point *cps, size_t n, int64_t now);
/* The same for from_seq <= seq <= to_seq (cps outside are dropped). */
int store_changepoints_replace_range(struct store *, int64_t series,
    int64_t from_seq, int64_t to_seq, const struct store_change_point *cps,
    size_t n, int64_t now);
/*
 * Change points for a history page, filtered like store_history_get
 * (NULL: any; tree and branch NULL include submitted pairs), by series
 * and seq (a typed read; the caller releases).  The job ids are
 * the candidate jobs of the points at seq, lo_seq and hi_seq.
 */
struct store_cp_row {
	int64_t id, series_id;
	char *tree, *branch, *host; /* the series'; host NULL: none */
	int64_t seq;
	int64_t job_id, lo_job_id, hi_job_id, pair_id; /* 0: no such point */
	double before, after, change_pct, p;           /* NAN: unknown */
	char *direction; /* regression | improvement */
};
struct store_cp_rows {
	struct store_cp_row *v;
	size_t n;
};
int store_history_changepoints(struct store *, struct store_cp_rows *out,
    const char *tree, const char *branch, const char *host, const char *job,
    const char *point, const char *metric);
void store_cp_rows_release(struct store_cp_rows *); /* NULL ok */

/*
 * ---- watch & triggers (daemon/watch.c, daemon/trigger.c) ----
 *
 * A pair names its two sides (pairs.base_job_id, pairs.cand_job_id);
 * jobs.pair_id is the pair that created the job.  A base job may be
 * shared by several pairs (baseline reuse), so read a pair's sides
 * through the pair's columns, never through jobs.pair_id.
 */

/* Creates the tree by name or updates its URL: 0 and *out_id. */
int store_tree_sync(
    struct store *, int64_t *out_id, const char *name, const char *url);
/* 0 and *out_id, or ERR_NOTFOUND. */
int store_tree_id(struct store *, int64_t *out_id, const char *name);
/*
 * After a poll: last_fetch = now; fetched: last_ok = now.  error (NULL
 * when all went well) is the tree's last error: the fetch's, or the
 * problems of its branches.  failures and next_fetch (Unix time) are the
 * backoff state.
 */
int store_tree_polled(struct store *, int64_t tree_id, int64_t now, int fetched,
    const char *error, int64_t failures, int64_t next_fetch);
/* The recorded tip of a branch into out: 0, or ERR_NOTFOUND (no tip). */
int store_branch_tip(struct store *, char *out, size_t outlen, int64_t tree_id,
    const char *branch);
/*
 * Sets a branch's row: tip (NULL keeps it), state ("ok" or "missing"),
 * error (NULL clears), rewrite (non-NULL: a force push was seen; counted
 * and kept as last_rewrite).
 */
int store_branch_update(struct store *, int64_t tree_id, const char *branch,
    const char *tip, const char *state, const char *error, const char *rewrite,
    int64_t now);

struct store_commit {
	const char *sha;
	const char *parents;            /* space-separated shas */
	const char *author, *committer; /* "Name <email>" */
	int64_t author_date, commit_date;
	const char *subject;
	const char *paths_json; /* the tree's paths it touches, an array */
};
/*
 * Records a commit seen on branch, once per tree: a commit already
 * recorded only gains the branch.  *out_new (may be NULL) is 1 when the
 * watcher had not recorded it before (a row made by a submit of that
 * commit counts as new).
 */
int store_commit_record(struct store *, int64_t *out_id, int *out_new,
    int64_t tree_id, const struct store_commit *, const char *branch,
    int64_t now);
/*
 * A commit of tree by full sha or unique prefix (>= 4 hex digits): 0 with
 * *out_id and the full sha, ERR_NOTFOUND, ERR_CONFLICT (ambiguous).
 */
int store_commit_find(struct store *, int64_t *out_id, char *out_sha,
    size_t outlen, int64_t tree_id, const char *sha);
/* A commit row (stub: sha only) for a submitted commit: 0, *out_id. */
int store_commit_stub(
    struct store *, int64_t *out_id, int64_t tree_id, const char *sha);

/*
 * Hosts a job with these labels (JSON array; [] = any) may run on: the
 * host carries one of them or is named by one.  *out (caller frees) has
 * *n ids, oldest host first.
 */
int store_hosts_matching(
    struct store *, int64_t **out, size_t *n, const char *labels_json);

struct store_trigger_pair {
	const char *name, *point;
	int64_t host_id; /* the pair is pinned to this host; 0: unbound */
	int64_t tree_id; /* where the trigger came from */
	const char *branch;
	int tip_only;      /* made for a branch tip only (every_commit off) */
	int canary;        /* an A/A canary pair (daemon/canary.h) */
	int64_t reuse_age; /* seconds; 0: never share a base job */
	const struct store_job_new *base, *cand;
};
/*
 * One triggered pair in one transaction.  With a host and reuse_age, a
 * base job with the same spec (hence commit and point), name and host,
 * queued, running or successful and updated within reuse_age, becomes
 * this pair's base instead of a new one (*out_reused = 1).
 */
int store_trigger_pair(struct store *, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, int *out_reused, const struct store_trigger_pair *,
    int64_t now);
/*
 * Pairs of job name triggered from tree/branch whose candidate is still
 * queued and has no runs (one measured and requeued for more runs by the
 * verdict is not waiting: a push must not supersede it), by id; the
 * caller releases the list.  0 or -1.
 */
struct store_pending {
	int64_t pair_id;
	char *sha;    /* the candidate's commit, or NULL */
	int tip_only; /* an old tip is superseded only by a new tip pair */
};
struct store_pendings {
	struct store_pending *v;
	size_t n;
};
int store_trigger_pending(struct store *, struct store_pendings *out,
    int64_t tree_id, const char *branch, const char *name);
void store_pendings_release(struct store_pendings *); /* NULL ok */
/*
 * Cancels a superseded pair: its candidate if still queued and never
 * run (a pair requeued for more runs stays), its base with it if still
 * queued and no other live pair shares it; error text = reason.
 * *out_n (may be NULL): jobs cancelled.
 */
int store_pair_supersede(struct store *, int *out_n, int64_t pair_id,
    const char *reason, int64_t now);
/*
 * Marks a superseded pair (coalesce: deprioritise): it stays queued and is
 * claimed after every pair that is not.  *out_n (may be NULL): 1 when the
 * pair was marked now, 0 when it already was or has started.
 */
int store_pair_deprioritise(struct store *, int *out_n, int64_t pair_id);

/* The trees and commits of GET /api/v1/trees and /commits are typed
 * reads: store/dash.h. */

/*
 * ---- patch series (daemon/series.c) ----
 * A series (table series) is one root message (cover letter or first
 * patch) of an inbox or an upload; each patch has a series_patches row
 * with the synthetic commit made from it.  States: new (recorded),
 * applied (commits made), failed (error says which patch and file),
 * incomplete (patches missing).
 */
struct store_series_new {
	const char *inbox; /* inbox name, or "upload" */
	const char *message_id;
	const char *title, *author;
	int64_t version, total, found, date; /* date < 0: unknown */
	int64_t tree_id;                     /* 0: none */
	const char *branch;
};
/* Creates the series, or finds the one with this root message_id
 * (*out_new = 0; out_new may be NULL).  0 and *out_id, or -1. */
int store_series_create(struct store *, int64_t *out_id, int *out_new,
    const struct store_series_new *, int64_t now);

struct store_series_patch {
	int64_t seq;
	const char *message_id, *subject, *author;
	int64_t date;      /* < 0: unknown */
	int64_t commit_id; /* its synthetic commit's row, or 0 */
};
/* Inserts or replaces the patch row (series, seq). */
int store_series_patch_put(
    struct store *, int64_t series_id, const struct store_series_patch *);
/* Sets state and error (NULL clears); base_sha and ref NULL keep,
 * commit_id 0 keeps (the tip's row).  ERR_NOTFOUND. */
int store_series_state(struct store *, int64_t id, const char *state,
    const char *error, const char *base_sha, int64_t commit_id, const char *ref,
    int64_t now);
/* The typed series reads (the list, one, the page's):
 * store/series.h. */

/* The inbox watcher's state: the last archive commit read ("" none). */
int store_inbox_get(
    struct store *, char *out_last, size_t outlen, const char *name);
/* last_commit NULL keeps it; messages is added to the count. */
int store_inbox_put(struct store *, const char *name, const char *url,
    const char *last_commit, const char *error, int64_t messages, int64_t now);

/*
 * ---- bench host hygiene and charge path (docs/HOST.md, docs/MEMCG.md;
 * daemon/hygiene.c, daemon/chargepath.c) ----
 * What a pair's ok runs recorded, by role and run (a typed read, issue
 * 13).  The documents stay the text the runner uploaded, with bytes that
 * are not UTF-8 as '?'; the readers parse what they need.
 */
struct store_run_meta {
	char *role;   /* base | candidate */
	int64_t run;  /* the run's index */
	int measured; /* 1: index below max_runs; 0: the profile slot */
	char *host_state_json; /* docs/HOST.md: a JSON object, or NULL */
	char *profile_json;    /* docs/MEMCG.md: a JSON object, or NULL */
};
struct store_run_metas {
	struct store_run_meta *v;
	size_t n;
};
/* 0 (no runs: n 0) or -1 (errmsg). */
int store_pair_run_meta(
    struct store *, struct store_run_metas *out, int64_t pair_id);
void store_run_metas_release(struct store_run_metas *); /* NULL ok */
/* Marks the pair suspect with why, or clears it (why NULL). */
int store_hygiene_set(struct store *, int64_t pair_id, const char *why);
/*
 * For alerts: 0 and *out_why (malloc'd: how the sides differ; the caller
 * frees) when the pair is suspect, *out_why NULL when it is not;
 * ERR_NOTFOUND.  No regression alert is sent on a suspect pair.
 */
int store_hygiene_suspect(struct store *, char **out_why, int64_t pair_id);

#endif
