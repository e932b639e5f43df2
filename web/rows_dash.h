#ifndef WEB_ROWS_DASH_H
#define WEB_ROWS_DASH_H

/*
 * The JSON of the dashboard's typed reads (daemon/store_dash.h), in the
 * shapes of docs/API.md, with the keys and values the store made before
 * (tests/data/web/dash.json).  Each returns a new reference.
 */
#include "common/json.h"

struct store_trees;
struct store_commits;
struct store_commit_page;
struct store_regressions;

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

#endif
