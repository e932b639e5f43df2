#ifndef STORE_DASH_H
#define STORE_DASH_H

/*
 * The typed reads of the dashboard and the read API (docs/ARCHITECTURE.md
 * "The typed store"): trees, commits, the
 * overview's jobs and counts, a commit, regressions.  Each fills
 * structs the caller releases with the matching _release (NULL ok); the
 * JSON of the API is made at the HTTP edge (web/rows_dash.h).  Text is
 * the struct's own copy, NULL where the column is NULL, with the bytes
 * that are not UTF-8 (and NULs) as '?', as the JSON rows had it.  A time
 * that may be absent has a has_ flag.  0, or -1 (store_errmsg()) unless
 * a prototype says more.
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/* The commit time of a commit (sha or prefix), for history ranges. */
int store_commit_time_get(struct store *, int64_t *out, const char *sha);

/*
 * Sets a regression's triage state (new, acknowledged, invalid, fixed)
 * and note (NULL keeps it).  ERR_NOTFOUND, ERR_INVALID (state).
 */
int store_regression_triage(struct store *, int64_t id, const char *state,
    const char *note, int64_t now);
/* Operations gauges: alerts not yet sent, trees whose last fetch failed. */
int store_ops_gauges_get(
    struct store *, int64_t *out_alerts_pending, int64_t *out_fetch_errors);

/* A branch of a tree as the watcher last saw it. */
struct store_tree_branch {
	char *branch;
	char *tip; /* NULL: no tip recorded */
	int has_updated;
	int64_t updated;
	char *state; /* ok | missing */
	char *error, *last_rewrite;
	int64_t rewrites; /* force pushes seen */
	int64_t commits;  /* recorded on it (schema v31) */
};
/* A tree (GET /api/v1/trees). */
struct store_tree {
	int64_t id;
	char *name, *url;
	int has_last_fetch, has_last_ok, has_next_fetch;
	int64_t last_fetch, last_ok, next_fetch;
	char *last_error;
	int64_t failures; /* fetches failed in a row (backoff) */
	int64_t commits;  /* commits the watcher recorded */
	struct store_tree_branch *branches; /* by branch */
	size_t nbranches;
};
struct store_trees {
	struct store_tree *v;
	size_t n;
};
/* Every tree, by name, with its branches. */
int store_tree_list(struct store *, struct store_trees *out);
void store_trees_release(struct store_trees *);

/* A commit the watcher recorded (GET /api/v1/commits). */
struct store_commit_row {
	int64_t id;
	char *sha, *tree, *subject, *author, *committer;
	int has_author_date, has_commit_date;
	int64_t author_date, commit_date;
	char *parents;    /* space-separated shas, as stored */
	char *branches;   /* comma-separated, as stored */
	char *paths_json; /* the tree's paths it touches: a JSON array */
	int64_t first_seen;
};
struct store_commits {
	struct store_commit_row *v;
	size_t n;
	int64_t next_cursor; /* the cursor of the next page, 0 at the end */
};
/* Commits newest first with id < cursor (0: from the newest), filtered
 * by tree and branch (NULL: any), at most limit: each page one index's
 * range (a branch's: schema v31). */
int store_commit_list(struct store *, struct store_commits *out,
    const char *tree, const char *branch, int64_t limit, int64_t cursor);
void store_commits_release(struct store_commits *);

/*
 * A candidate job of the overview, newest first, with what the overview
 * groups it by.  Ids are 0 where there is none.
 */
struct store_recent_job {
	int64_t id, pair_id;
	char *name, *point, *state, *progress;
	int64_t created;
	int64_t commit_id; /* 0: a submitted pair without a commit */
	char *sha, *subject, *author;
	int64_t time;          /* the commit date, else the job's creation */
	char *tree, *branches; /* a series tip's: the branch it targets */
	int64_t series_id;     /* the series whose tip it measures, or 0 */
	char *series_title;
	char *base_state, *base_progress; /* its pair's base job's */
	char *verdicts; /* its pair's verdicts, comma-separated, or NULL */
};
struct store_recent {
	struct store_recent_job *v;
	size_t n;
};
/* The newest limit candidate jobs, but those of a bisection measuring a
 * commit no branch has (its revert of the culprit). */
int store_recent_list(struct store *, struct store_recent *out, int64_t limit);
void store_recent_release(struct store_recent *);

/* Regressions by triage state, in the order of store_regression_states. */
#define STORE_REGRESSION_STATES 4
extern const char *const store_regression_states[STORE_REGRESSION_STATES];
struct store_regression_counts {
	int64_t n[STORE_REGRESSION_STATES]; /* new, acknowledged, ... */
};
int store_regression_counts_get(
    struct store *, struct store_regression_counts *out);

/* A commit with the pairs measuring it (the commit page). */
struct store_commit_page {
	int64_t id;
	char *sha, *subject, *author;
	int has_time;
	int64_t time; /* the commit date, else the author date */
	char *tree;
	char *branches; /* comma-separated, as stored */
	char *parents;  /* space-separated, as stored */
	int64_t *pairs; /* pair ids of its candidate jobs, newest first */
	size_t npairs;
	int64_t series_id; /* the series whose tip it is, or 0 */
	char *series_title;
};
/* By full sha or unique prefix (4 to 64 lowercase hex digits): 0,
 * ERR_NOTFOUND, ERR_CONFLICT (the prefix is ambiguous), or -1. */
int store_commit_page_get(
    struct store *, struct store_commit_page *out, const char *sha);
void store_commit_page_release(struct store_commit_page *);

/* A regression with what triage shows of it and its newest bisection. */
struct store_regression {
	int64_t id;
	char *state, *note;
	int64_t created, updated;
	char *metric;
	double change_pct; /* NAN: unknown */
	char *verdict;
	int64_t pair_id;
	char *bench, *point, *host;
	char *sha, *subject, *tree, *branches; /* NULL: no commit */
	/* Its newest bisection (store/bisect.c): bisect_id 0 and the
	 * rest NULL when none. */
	int64_t bisect_id;
	char *bisect_state, *culprit, *culprit_subject;
	char *verify_parent, *verify_revert, *bisect_reason;
	char *suspect;     /* docs/HOST.md: why the pair is suspect, or NULL */
	int64_t series_id; /* the series whose tip sha is, or 0 */
};
struct store_regressions {
	struct store_regression *v;
	size_t n;
	int64_t next_cursor; /* the cursor of the next page, 0 at the end */
	/* 1: the scan budget ended the page before limit; next_cursor
	 * goes on below the regressions read. */
	int capped;
};
/* A page of two or more kinds of filter reads at most this many
 * regressions (one kind is an index range, schema v27). */
#define STORE_REGRESSIONS_SCAN 10000
struct store_regressions_q {
	const char *tree, *host, *bench, *state; /* NULL: any */
	int64_t limit;
	int64_t cursor; /* id < cursor; 0: from the newest */
	int64_t scan;   /* the budget of regressions read; 0: the default */
};
/* Regressions newest first, filtered, at most limit. */
int store_regression_list(struct store *, struct store_regressions *out,
    const struct store_regressions_q *);
void store_regressions_release(struct store_regressions *);

#endif
