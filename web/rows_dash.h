#ifndef WEB_ROWS_DASH_H
#define WEB_ROWS_DASH_H

/*
 * The JSON of the dashboard's typed reads (store/dash.h), in the
 * shapes of docs/API.md, with the keys and values the store made before
 * (tests/data/web/dash.json).  Each returns a new reference.
 */
#include <stddef.h>

#include "common/json.h"

struct store_trees;
struct store_commits;
struct store_commit_page;
struct store_regressions;
struct store_bisect;
struct store_bisect_step;
struct store_bisects;

/* {"trees": [{name, url, last_fetch, last_ok, last_error, failures,
 * next_fetch, commits, branches: [{branch, tip, updated, state, error,
 * rewrites, last_rewrite}]}]} (unknowns null) */
json_t *rows_trees_json(const struct store_trees *);
/* {"commits": [{id, sha, tree, subject, author, author_date, committer,
 * commit_date, parents: [...], branches: [...], paths: [...],
 * first_seen}], "next_cursor": "N"} (next_cursor absent at the end) */
json_t *rows_commits_json(const struct store_commits *);
/* {"commit": {id, sha, subject, author, time, tree, branches, parents},
 * "pairs": [ids], "series": {id, title} or null} (branches and parents
 * the stored text) */
json_t *rows_commit_page_json(const struct store_commit_page *);
/* {"regressions": [{id, state, note, created, updated, metric,
 * change_pct, verdict, pair_id, bench, point, host, sha, subject, tree,
 * branches, bisect_id, bisect_state, culprit, culprit_subject,
 * verify_parent, verify_revert, bisect_reason, suspect}], "next_cursor":
 * "N"} (unknowns null; next_cursor absent at the end) */
json_t *rows_regressions_json(const struct store_regressions *);
/* A bisection of GET /api/v1/bisections[/{id}]: {id, regression, pair,
 * job, host, point, metric, tree, good, bad, state, lo, hi, culprit,
 * culprit_subject, reason, verify_parent, verify_revert, revert_commit,
 * started_by, steps_limit, max_inconclusive, full_dag, created, updated,
 * origin, change_point: {id, sha, branch, change_pct} or null}
 * (unknowns null), or NULL when it cannot be made. */
json_t *rows_bisect_json(const struct store_bisect *);
/* Its "steps": [{id, kind, sha, subject, good_pair, bad_pair, class,
 * vs_good, vs_good_pct, vs_bad, vs_bad_pct, note, updated}]. */
json_t *rows_bisect_steps_json(const struct store_bisect_step *, size_t n);
/* {"bisections": [...without steps], "next_cursor": "N"} (next_cursor
 * absent at the end) */
json_t *rows_bisects_json(const struct store_bisects *);

#endif
