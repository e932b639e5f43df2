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

/* {"trees": [{name, url, last_fetch, last_ok, last_error, failures,
 * next_fetch, commits, branches: [{branch, tip, updated, state, error,
 * rewrites, last_rewrite}]}]} (unknowns null) */
json_t *rows_trees_json(const struct store_trees *);
/* {"commits": [{id, sha, tree, subject, author, author_date, committer,
 * commit_date, parents: [...], branches: [...], paths: [...],
 * first_seen}], "next_cursor": "N"} (next_cursor absent at the end) */
json_t *rows_commits_json(const struct store_commits *);

#endif
