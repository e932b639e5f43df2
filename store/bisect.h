#ifndef STORE_BISECT_H
#define STORE_BISECT_H

/*
 * The store's bisection tables (all their SQL is in store/bisect.c),
 * read and written through C structs (daemon/bisect.c decides):
 *
 *  - bisections: one search for the first bad commit of a regression:
 *    its regression, pair, job, host, point and metric, the good and bad
 *    ends, the state (queued, running, done, inconclusive, cancelled),
 *    the narrowed range (lo: the newest commit known good, hi: the
 *    oldest known bad), the culprit, why it ended, the step limit and the
 *    verification results (culprit against its parent; the revert of the
 *    culprit on the bad end).
 *  - bisect_steps: one measured commit: its kind (step, verify-parent,
 *    verify-revert), its two pairs (a step: the commit against the good
 *    end, and against the bad end; a verification: one pair), its class
 *    (good, bad, skip, inconclusive; NULL while measuring) and the
 *    changes of the regression's metric against both ends.
 *  - pairs.bisect_id: the pairs a bisection made.  Their verdicts make
 *    no regressions row and no history point, and no alert report: the
 *    bisection uses them.
 *
 * Every function returns 0 or -1 (store_errmsg()) unless it says more.
 * Strings in the structs are malloc'd and freed by the matching _free.
 */
#include <stddef.h>
#include <stdint.h>

struct store;
struct store_job_new;

#define STORE_BISECT_MIGRATION                                              \
	"CREATE TABLE bisections ("                                         \
	"  id INTEGER PRIMARY KEY,"                                         \
	"  regression_id INTEGER NOT NULL REFERENCES regressions(id)"       \
	"    ON DELETE CASCADE,"                                            \
	"  pair_id INTEGER NOT NULL REFERENCES pairs(id),"                  \
	"  job TEXT NOT NULL,"                                              \
	"  host_id INTEGER REFERENCES hosts(id),"                           \
	"  point TEXT NOT NULL DEFAULT '',"                                 \
	"  metric TEXT NOT NULL,"                                           \
	"  tree_id INTEGER REFERENCES trees(id),"                           \
	"  good_sha TEXT NOT NULL,"                                         \
	"  bad_sha TEXT NOT NULL,"                                          \
	"  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued'," \
	"    'running', 'done', 'inconclusive', 'cancelled')),"             \
	"  lo_sha TEXT, hi_sha TEXT,"                                       \
	"  culprit_sha TEXT,"                                               \
	"  reason TEXT,"                                                    \
	"  steps_limit INTEGER NOT NULL,"                                   \
	"  max_inconclusive INTEGER NOT NULL DEFAULT 2,"                    \
	"  full_dag INTEGER NOT NULL DEFAULT 0,"                            \
	"  started_by TEXT NOT NULL DEFAULT 'auto',"                        \
	"  verify_parent TEXT, verify_revert TEXT, revert_sha TEXT,"        \
	"  created INTEGER NOT NULL,"                                       \
	"  updated INTEGER NOT NULL);"                                      \
	"CREATE INDEX bisections_regression ON bisections(regression_id);"  \
	"CREATE INDEX bisections_live ON bisections(state)"                 \
	"  WHERE state IN ('queued', 'running');"                           \
	"CREATE TABLE bisect_steps ("                                       \
	"  id INTEGER PRIMARY KEY,"                                         \
	"  bisect_id INTEGER NOT NULL REFERENCES bisections(id)"            \
	"    ON DELETE CASCADE,"                                            \
	"  kind TEXT NOT NULL DEFAULT 'step' CHECK (kind IN ('step',"       \
	"    'verify-parent', 'verify-revert')),"                           \
	"  sha TEXT NOT NULL,"                                              \
	"  good_pair_id INTEGER REFERENCES pairs(id),"                      \
	"  bad_pair_id INTEGER REFERENCES pairs(id),"                       \
	"  class TEXT CHECK (class IN ('good', 'bad', 'skip',"              \
	"    'inconclusive')),"                                             \
	"  vs_good TEXT, vs_good_pct REAL,"                                 \
	"  vs_bad TEXT, vs_bad_pct REAL,"                                   \
	"  note TEXT,"                                                      \
	"  created INTEGER NOT NULL,"                                       \
	"  updated INTEGER NOT NULL);"                                      \
	"CREATE INDEX bisect_steps_bisect ON bisect_steps(bisect_id, id);"  \
	"ALTER TABLE pairs ADD COLUMN bisect_id INTEGER"                    \
	"  REFERENCES bisections(id);"                                      \
	"CREATE INDEX pairs_bisect ON pairs(bisect_id)"                     \
	"  WHERE bisect_id IS NOT NULL;"

/*
 * v16: a bisection may start from a history change point instead of a
 * regression row (regression_id NULL, origin 'change-point'; the change
 * point's id when it was started, its commit, branch and change kept:
 * change points are recomputed as points arrive and their ids do not
 * last), and a step measured on a suspect pair or quarantined host is
 * class 'suspect' (not classified, measured again).  SQLite cannot drop
 * a NOT NULL or change a CHECK in place: both tables are rebuilt, ids
 * kept (store.c runs migrations with foreign keys off and checks them
 * after).
 */
#define STORE_BISECT_MIGRATION_V16                                          \
	"CREATE TABLE bisections_v16 ("                                     \
	"  id INTEGER PRIMARY KEY,"                                         \
	"  regression_id INTEGER REFERENCES regressions(id)"                \
	"    ON DELETE CASCADE,"                                            \
	"  origin TEXT NOT NULL DEFAULT 'regression' CHECK (origin IN"      \
	"    ('regression', 'change-point')),"                              \
	"  change_point_id INTEGER,"                                        \
	"  origin_sha TEXT, branch TEXT, origin_pct REAL,"                  \
	"  pair_id INTEGER NOT NULL REFERENCES pairs(id),"                  \
	"  job TEXT NOT NULL,"                                              \
	"  host_id INTEGER REFERENCES hosts(id),"                           \
	"  point TEXT NOT NULL DEFAULT '',"                                 \
	"  metric TEXT NOT NULL,"                                           \
	"  tree_id INTEGER REFERENCES trees(id),"                           \
	"  good_sha TEXT NOT NULL,"                                         \
	"  bad_sha TEXT NOT NULL,"                                          \
	"  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued'," \
	"    'running', 'done', 'inconclusive', 'cancelled')),"             \
	"  lo_sha TEXT, hi_sha TEXT,"                                       \
	"  culprit_sha TEXT,"                                               \
	"  reason TEXT,"                                                    \
	"  steps_limit INTEGER NOT NULL,"                                   \
	"  max_inconclusive INTEGER NOT NULL DEFAULT 2,"                    \
	"  full_dag INTEGER NOT NULL DEFAULT 0,"                            \
	"  started_by TEXT NOT NULL DEFAULT 'auto',"                        \
	"  verify_parent TEXT, verify_revert TEXT, revert_sha TEXT,"        \
	"  created INTEGER NOT NULL,"                                       \
	"  updated INTEGER NOT NULL,"                                       \
	"  CHECK (regression_id IS NOT NULL OR origin = 'change-point'));"  \
	"INSERT INTO bisections_v16 (id, regression_id, pair_id, job,"      \
	"  host_id, point, metric, tree_id, good_sha, bad_sha, state,"      \
	"  lo_sha, hi_sha, culprit_sha, reason, steps_limit,"               \
	"  max_inconclusive, full_dag, started_by, verify_parent,"          \
	"  verify_revert, revert_sha, created, updated)"                    \
	"  SELECT id, regression_id, pair_id, job, host_id, point, metric," \
	"  tree_id, good_sha, bad_sha, state, lo_sha, hi_sha, culprit_sha," \
	"  reason, steps_limit, max_inconclusive, full_dag, started_by,"    \
	"  verify_parent, verify_revert, revert_sha, created, updated"      \
	"  FROM bisections;"                                                \
	"CREATE TABLE bisect_steps_v16 ("                                   \
	"  id INTEGER PRIMARY KEY,"                                         \
	"  bisect_id INTEGER NOT NULL REFERENCES bisections(id)"            \
	"    ON DELETE CASCADE,"                                            \
	"  kind TEXT NOT NULL DEFAULT 'step' CHECK (kind IN ('step',"       \
	"    'verify-parent', 'verify-revert')),"                           \
	"  sha TEXT NOT NULL,"                                              \
	"  good_pair_id INTEGER REFERENCES pairs(id),"                      \
	"  bad_pair_id INTEGER REFERENCES pairs(id),"                       \
	"  class TEXT CHECK (class IN ('good', 'bad', 'skip',"              \
	"    'inconclusive', 'suspect')),"                                  \
	"  vs_good TEXT, vs_good_pct REAL,"                                 \
	"  vs_bad TEXT, vs_bad_pct REAL,"                                   \
	"  note TEXT,"                                                      \
	"  created INTEGER NOT NULL,"                                       \
	"  updated INTEGER NOT NULL);"                                      \
	"INSERT INTO bisect_steps_v16 SELECT * FROM bisect_steps;"          \
	"DROP TABLE bisect_steps;"                                          \
	"DROP TABLE bisections;"                                            \
	"ALTER TABLE bisections_v16 RENAME TO bisections;"                  \
	"ALTER TABLE bisect_steps_v16 RENAME TO bisect_steps;"              \
	"CREATE INDEX bisections_regression ON bisections(regression_id);"  \
	"CREATE INDEX bisections_live ON bisections(state)"                 \
	"  WHERE state IN ('queued', 'running');"                           \
	"CREATE INDEX bisections_change_point ON bisections(job, host_id,"  \
	"  point, metric) WHERE origin = 'change-point';"                   \
	"CREATE INDEX bisect_steps_bisect ON bisect_steps(bisect_id, id);"

/*
 * What a bisection starts from: a regression row (regression_id), or a
 * history change point (change_point_id; regression_id 0).
 */
struct store_bisect_src {
	int64_t regression_id, pair_id, host_id, tree_id;
	char *job, *point, *metric, *tree; /* tree: NULL when none */
	char *good_sha, *bad_sha;          /* NULL: no commit recorded */
	char *spec, *labels;               /* the candidate job's */
	int64_t max_attempts;
	int of_bisect; /* the regression is itself a bisection's pair's */
	/* A change point: its id, the commit of its point, the history's
	 * branch, its direction and change (after vs before, percent). */
	int64_t change_point_id;
	char *origin_sha, *branch, *direction;
	double origin_pct; /* NAN: unknown, or not a change point */
};
void store_bisect_src_release(struct store_bisect_src *);
/* 0 and *out, or ERR_NOTFOUND (no such regression). */
int store_bisect_src_get(
    struct store *, struct store_bisect_src *out, int64_t regression_id);
/* The pair's part of a source (its job, point, host, spec, labels,
 * max_attempts, commits): 0 and *out, or ERR_NOTFOUND. */
int store_bisect_src_pair(
    struct store *, struct store_bisect_src *out, int64_t pair_id);
/*
 * A change point of a branch's history: the good end is the commit of
 * the last point before the change's interval (lo_seq - 1), the bad end
 * that of its last point (hi_seq; the change lies in [lo_seq, hi_seq],
 * usually one point, the change point's own), pair_id the change
 * point's own point's pair (its spec is the steps'), host, job, point
 * and metric the series'.  good_sha NULL when the change is at the
 * first point.  0 and *out, or ERR_NOTFOUND (no such change point: they
 * are recomputed as points arrive).
 */
int store_bisect_src_cp(
    struct store *, struct store_bisect_src *out, int64_t change_point_id);

struct store_bisect_new {
	const struct store_bisect_src *src;
	int64_t steps_limit, max_inconclusive;
	int full_dag;
	const char *started_by; /* auto | manual */
};
/* A new queued bisection: 0 and *out_id, or ERR_EXISTS (the regression
 * has a queued or running one, or a change point's range is being
 * bisected for the same job, host, point and metric: *out_id is that
 * one). */
int store_bisect_create(struct store *, int64_t *out_id,
    const struct store_bisect_new *, int64_t now);

struct store_bisect {
	int64_t id, regression_id, pair_id, host_id, tree_id;
	/* origin: "regression" or "change-point" (change_point_id: its id
	 * when started; origin_sha its commit, branch the history's,
	 * origin_pct its change, NAN unknown) */
	char *origin, *origin_sha, *branch;
	int64_t change_point_id;
	double origin_pct;
	char *job, *point, *metric, *host, *tree;
	char *good_sha, *bad_sha, *lo_sha, *hi_sha;
	char *state, *culprit_sha, *culprit_subject, *reason, *started_by;
	char *verify_parent, *verify_revert, *revert_sha;
	int64_t steps_limit, max_inconclusive;
	int full_dag;
	int64_t created, updated;
};
void store_bisect_release(struct store_bisect *); /* NULL ok */
/* 0 and *out, or ERR_NOTFOUND. */
int store_bisect_get(struct store *, struct store_bisect **out, int64_t id);
/*
 * The ranges of every bisection (any state, any origin) of job on
 * host at point for metric on tree: good and bad shas, 2 * *n strings
 * in *out (caller frees with store_bisect_ranges_release).
 */
int store_bisect_range_list(struct store *, char ***out, size_t *n,
    const char *job, int64_t host_id, const char *point, const char *metric,
    int64_t tree_id);
void store_bisect_ranges_release(char **, size_t n);
/* The newest bisection of a regression: 0 and *out, or ERR_NOTFOUND. */
int store_bisect_of_regression(
    struct store *, struct store_bisect **out, int64_t regression_id);
/* Ids of the queued and running bisections, oldest first (caller frees). */
int store_bisect_live(struct store *, int64_t **out, size_t *n);
/* Bisections newest first, at most limit, older than cursor (0: from the
 * newest), with the next page's cursor (0 at the end); the caller
 * releases them with store_bisects_release (NULL ok). */
struct store_bisects {
	struct store_bisect *v;
	size_t n;
	int64_t next_cursor;
};
int store_bisect_list(
    struct store *, struct store_bisects *out, int64_t limit, int64_t cursor);
void store_bisects_release(struct store_bisects *);

/*
 * Sets fields of a bisection: NULL keeps a string, "" clears it (the
 * state is never cleared).
 */
struct store_bisect_set {
	const char *state, *lo_sha, *hi_sha, *culprit_sha, *reason;
	const char *verify_parent, *verify_revert, *revert_sha;
};
int store_bisect_update(
    struct store *, int64_t id, const struct store_bisect_set *, int64_t now);

struct store_bisect_step {
	int64_t id, bisect_id;
	char *kind, *sha, *subject;     /* subject: NULL when not recorded */
	int64_t good_pair, bad_pair;    /* 0: none */
	char *cls;                      /* NULL while measuring */
	char *vs_good, *vs_bad;         /* verdicts, NULL: none yet */
	double vs_good_pct, vs_bad_pct; /* NAN: unknown */
	char *note;
	int64_t created, updated;
};
void store_bisect_steps_release(struct store_bisect_step *, size_t n);
/* The steps of a bisection, oldest first. */
int store_bisect_step_list(struct store *, struct store_bisect_step **out,
    size_t *n, int64_t bisect_id);
int store_bisect_step_add(struct store *, int64_t *out_id, int64_t bisect_id,
    const char *kind, const char *sha, int64_t good_pair, int64_t bad_pair,
    int64_t now);
/* Sets a step's class (NULL keeps), verdicts and note (NULL keeps). */
int store_bisect_step_set(struct store *, int64_t step_id, const char *cls,
    const char *vs_good, double vs_good_pct, const char *vs_bad,
    double vs_bad_pct, const char *note, int64_t now);

/*
 * A pair of a bisection, pinned to host, its jobs measuring the commits
 * whose rows are in base->commit_id and cand->commit_id.  0, *out_pair.
 */
int store_bisect_pair(struct store *, int64_t *out_pair, int64_t bisect_id,
    const char *name, const char *point, int64_t host_id, int64_t tree_id,
    const struct store_job_new *base, const struct store_job_new *cand,
    int64_t now);

/* Where a bisection's pair stands, for the regression's metric. */
struct store_bisect_pair_state {
	char base_state[16], cand_state[16];
	char *base_error, *cand_error; /* NULL: none */
	int analysed;
	char *verdict; /* the metric's final comparison, NULL: none */
	double change_pct, min_effect; /* NAN: unknown */
	char *better;                  /* NULL: unknown */
	char *suspect; /* why the pair is suspect (docs/HOST.md), NULL */
};
void store_bisect_pair_state_release(struct store_bisect_pair_state *);
int store_bisect_pair_state_get(struct store *,
    struct store_bisect_pair_state *out, int64_t pair_id, const char *metric);
/* Cancels the queued and running jobs of a bisection's pairs. */
int store_bisect_cancel_jobs(
    struct store *, int64_t bisect_id, const char *why, int64_t now);
/* *out: the bisection that made pair_id, 0 when none. */
int store_bisect_pair_of(struct store *, int64_t *out, int64_t pair_id);
/* A host's last_seen (0: unknown host) and quarantine (docs/HOST.md:
 * *why NULL when none, else the reason, caller frees; *since). */
int store_bisect_host(
    struct store *, int64_t *seen, char **why, int64_t *since, int64_t host_id);
/* The first line of a commit's message as recorded, or NULL. */
char *store_bisect_subject(struct store *, int64_t tree_id, const char *sha);

/*
 * Regressions above after_id that no bisection has started on, whose
 * comparison is final and whose pair is neither a bisection's nor
 * suspect (docs/HOST.md), oldest first,
 * at most max: ids into out (capacity max), *n of them.
 */
int store_bisect_candidates(
    struct store *, int64_t *out, size_t *n, int64_t after_id, size_t max);

/*
 * Change points in the regression direction recorded after (after_at,
 * after_id) (created, id: change points are recomputed as points arrive,
 * and a recomputed one may get an old id back) that no bisection was
 * started from, oldest first, at most max: ids into out and their
 * creation times into out_at (capacity max), *n of them.
 */
int store_bisect_cp_candidates(struct store *, int64_t *out, int64_t *out_at,
    size_t *n, int64_t after_at, int64_t after_id, size_t max);

/*
 * baseline: previous-tip: the commit of the newest candidate job of job
 * name, made for a tip of tree/branch on host (any state but cancelled).
 * 0 and out, or ERR_NOTFOUND.
 */
int store_bisect_previous_tip(struct store *, char *out, size_t outlen,
    int64_t tree_id, const char *branch, const char *name, int64_t host_id);

#endif
