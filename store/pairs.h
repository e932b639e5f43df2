#ifndef STORE_PAIRS_H
#define STORE_PAIRS_H

/*
 * Pairs and their verdicts (store/pairs.c): a pair's read, the verdict
 * reads and writes (daemon/verdict.c), the pairs a trigger makes or
 * supersedes and a pair's hygiene mark.
 *
 * A pair names its two sides (pairs.base_job_id, pairs.cand_job_id);
 * jobs.pair_id is the pair that created the job.  A base job may be
 * shared by several pairs (baseline reuse), so read a pair's sides
 * through the pair's columns, never through jobs.pair_id.
 */
#include <stddef.h>
#include <stdint.h>

#include "store/jobs.h"

struct store;
struct store_values;

/*
 * A pair with its two jobs and its comparisons (store_pair_get; the
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
	/* The inventory (JSON, as the runner registered it) of the pair's
	 * host and of the host each side ran on (its job's, else the
	 * pair's); NULL where unknown. */
	char *host_inventory, *inventory[2];
};
/* 0, ERR_NOTFOUND (no such pair), or -1 (a side's job is missing too). */
int store_pair_get(struct store *, struct store_pair *out, int64_t pair_id);
void store_pair_release(struct store_pair *); /* NULL ok */
/*
 * The pairs ids[0..n) as store_pair_get reads each, in out[0..n) (the
 * caller's n elements; out[i] is ids[i]'s, its id 0 where no such
 * pair), in a few statements whatever n (a page of pairs, a
 * bisection's steps): 0, or -1 (a side's job missing, or the store's
 * error) with out released.  Release each with store_pair_release.
 */
int store_pair_get_many(
    struct store *, struct store_pair *out, const int64_t *ids, size_t n);

/*
 * ---- verdicts (daemon/verdict.c) ----
 * What the verdict glue reads and writes.  The writes join an explicit
 * transaction (store_begin), so a pair's comparisons, regressions,
 * re-queue and history land together or not at all.
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
int store_verdict_pair_get(
    struct store *, struct store_vpair *out, int64_t pair_id);
void store_vpair_release(struct store_vpair *); /* NULL ok */
/* The metric values of the pair's runs with status ok (run index below
 * max_runs: a profile slot is not a run), ordered by metric, role, run;
 * store_values_release.  0 or -1. */
int store_verdict_value_list(
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
int store_verdict_sibling_list(
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
int store_verdict_history_list(struct store *, struct store_vhists *out,
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
 * the history (store_history_list). */
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

/* Marks the pair suspect with why, or clears it (why NULL). */
int store_hygiene_set(struct store *, int64_t pair_id, const char *why);
/*
 * For alerts: 0 and *out_why (malloc'd: how the sides differ; the caller
 * frees) when the pair is suspect, *out_why NULL when it is not;
 * ERR_NOTFOUND.  No regression alert is sent on a suspect pair.
 */
int store_hygiene_suspect(struct store *, char **out_why, int64_t pair_id);

/*
 * Shared bases under adaptive runs.  A base job shared by several pairs
 * can be re-opened for more runs by one pair while another pair's
 * verdict is being computed from it.  The verdict remembers each side's
 * job, wanted runs and stored runs as it read them (store_verdict_pair_get's
 * runs and stored); before it writes, in its transaction, this says
 * whether they are still so.  0, or ERR_CONFLICT (the message names the
 * job that changed): the verdict is dropped and made again later from a
 * complete side.
 */
struct store_side_stamp {
	int64_t job_id, runs, stored;
};
int store_verdict_unchanged(
    struct store *, const struct store_side_stamp *sides, size_t n);

#endif
