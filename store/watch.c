/*
 * The store: watched trees, branches and commits (daemon/watch.c,
 * daemon/trigger.c). All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/alerts.h"
#include "store/bisect.h"
#include "store/store.h"
#include "store/store_int.h"
#include "store/watch.h"

/* Runs st (bound) to the end, no rows wanted; finalizes.  0 or -1. */
static int
run_once(struct store *s, struct db_stmt *st, const char *what)
{
	int r = store_i_step_done(s, st, what);

	store_i_release(s, st);
	return r;
}

static int
tree_sync_once(
    struct store *s, int64_t *out_id, const char *name, const char *url)
{
	struct db_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO trees (name, url) VALUES (?1, ?2)"
	    " ON CONFLICT (name) DO UPDATE SET url = excluded.url"
	    " RETURNING id");
	if ((ok = st != NULL)) {
		store_i_bind_text(st, 1, name);
		store_i_bind_text(st, 2, url);
		if (db_step(st) == DB_ROW)
			*out_id = db_col_int64(st, 0);
		else
			ok = store_i_dberr(s, "tree sync") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_tree_sync(
    struct store *s, int64_t *out_id, const char *name, const char *url)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, tree_sync_once(s, out_id, name, url));
	return rc;
}

int
store_tree_id(struct store *s, int64_t *out_id, const char *name)
{
	struct db_stmt *st =
	    store_i_stmt(s, "SELECT id FROM trees WHERE name = ?1");
	int rc;

	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, name);
	rc = db_step(st);
	if (rc == DB_ROW)
		*out_id = db_col_int64(st, 0);
	store_i_release(s, st);
	if (rc == DB_ROW)
		return 0;
	if (rc != DB_DONE)
		return store_i_dberr(s, "tree id");
	return err_setc(&s->err, ERR_NOTFOUND, "no tree named '%s'", name);
}

static int
tree_polled_once(struct store *s, int64_t tree_id, int64_t now, int fetched,
    const char *error, int64_t failures, int64_t next_fetch)
{
	struct db_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "UPDATE trees SET last_fetch = ?2,"
	    " last_ok = CASE WHEN ?3 <> 0 THEN ?2 ELSE last_ok END,"
	    " last_error = ?4, failures = ?5, next_fetch = ?6 WHERE id = ?1");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, tree_id);
		db_bind_int64(st, 2, now);
		db_bind_int64(st, 3, fetched);
		store_i_bind_text(st, 4, error);
		db_bind_int64(st, 5, failures);
		db_bind_int64(st, 6, next_fetch);
		ok = run_once(s, st, "tree polled") == 0;
	}
	return store_i_tx_end(s, ok);
}

int
store_tree_polled(struct store *s, int64_t tree_id, int64_t now, int fetched,
    const char *error, int64_t failures, int64_t next_fetch)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    tree_polled_once(
	        s, tree_id, now, fetched, error, failures, next_fetch));
	return rc;
}

int
store_branch_tip(struct store *s, char *out, size_t outlen, int64_t tree_id,
    const char *branch)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT tip FROM tree_branches WHERE tree_id = ?1"
	    " AND branch = ?2 AND tip IS NOT NULL");
	int rc;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, tree_id);
	store_i_bind_text(st, 2, branch);
	rc = db_step(st);
	if (rc == DB_ROW)
		snprintf(out, outlen, "%s", store_i_col_text(st, 0));
	store_i_release(s, st);
	if (rc == DB_ROW)
		return 0;
	if (rc != DB_DONE)
		return store_i_dberr(s, "branch tip");
	return ERR_NOTFOUND;
}

static int
branch_update_once(struct store *s, int64_t tree_id, const char *branch,
    const char *tip, const char *state, const char *error, const char *rewrite,
    int64_t now)
{
	struct db_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO tree_branches (tree_id, branch, tip, updated, state,"
	    " error, rewrites, last_rewrite)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
	    " CASE WHEN CAST(?7 AS TEXT) IS NULL THEN 0 ELSE 1 END, ?7)"
	    " ON CONFLICT (tree_id, branch) DO UPDATE SET"
	    " tip = coalesce(excluded.tip, tree_branches.tip),"
	    " updated = CASE WHEN excluded.tip IS NOT NULL"
	    "   AND excluded.tip IS DISTINCT FROM tree_branches.tip THEN ?4"
	    "   ELSE coalesce(tree_branches.updated, ?4) END,"
	    " state = excluded.state, error = excluded.error,"
	    " rewrites = tree_branches.rewrites"
	    "  + CASE WHEN CAST(?7 AS TEXT) IS NULL THEN 0 ELSE 1 END,"
	    " last_rewrite = coalesce(?7, tree_branches.last_rewrite)");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, tree_id);
		store_i_bind_text(st, 2, branch);
		store_i_bind_text(st, 3, tip);
		db_bind_int64(st, 4, now);
		store_i_bind_text(st, 5, state);
		store_i_bind_text(st, 6, error);
		store_i_bind_text(st, 7, rewrite);
		ok = run_once(s, st, "branch update") == 0;
	}
	return store_i_tx_end(s, ok);
}

int
store_branch_update(struct store *s, int64_t tree_id, const char *branch,
    const char *tip, const char *state, const char *error, const char *rewrite,
    int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    branch_update_once(
	        s, tree_id, branch, tip, state, error, rewrite, now));
	return rc;
}

static int
commit_record_once(struct store *s, int64_t *out_id, int *out_new,
    int64_t tree_id, const struct store_commit *c, const char *branch,
    int64_t now)
{
	struct db_stmt *st;
	int ok, rc, fresh = 1;
	int64_t id = 0;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "SELECT id, first_seen IS NULL FROM commits"
	    " WHERE tree_id = ?1 AND sha = ?2");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, tree_id);
		store_i_bind_text(st, 2, c->sha);
		if ((rc = db_step(st)) == DB_ROW) {
			id = db_col_int64(st, 0);
			fresh = db_col_int(st, 1);
		} else if (rc != DB_DONE) {
			ok = store_i_dberr(s, "commit lookup") == 0;
		}
		store_i_release(s, st);
	}
	if (ok && id == 0) {
		st = store_i_stmt(s,
		    "INSERT INTO commits (tree_id, sha, parents, author,"
		    " author_date, committer, commit_date, subject, touches,"
		    " branches, paths, first_seen)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
		    " CASE WHEN json_array_length(json(?9)) > 0 THEN 1 ELSE 0 "
		    "END,"
		    " ?10, json(?9), ?11)");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, tree_id);
			store_i_bind_text(st, 2, c->sha);
			store_i_bind_text(st, 3, c->parents ? c->parents : "");
			store_i_bind_text(st, 4, c->author);
			db_bind_int64(st, 5, c->author_date);
			store_i_bind_text(st, 6, c->committer);
			db_bind_int64(st, 7, c->commit_date);
			store_i_bind_text(st, 8, c->subject);
			store_i_bind_text(
			    st, 9, c->paths_json ? c->paths_json : "[]");
			store_i_bind_text(st, 10, branch);
			db_bind_int64(st, 11, now);
			ok = store_i_step_done(s, st, "commit insert") == 0;
			id = db_last_id(s->db);
			store_i_release(s, st);
		}
	} else if (ok) {
		/* Known: gains the branch; a submitted stub gets its
		 * details. */
		st = store_i_stmt(s,
		    "UPDATE commits SET branches = CASE"
		    "  WHEN CAST(?2 AS TEXT) IS NULL OR instr(',' || branches "
		    "|| ',',"
		    "   ',' || ?2 || ',') > 0 THEN branches"
		    "  WHEN branches = '' THEN ?2"
		    "  ELSE branches || ',' || ?2 END,"
		    " parents = CASE WHEN first_seen IS NULL THEN ?3"
		    "  ELSE parents END,"
		    " author = coalesce(author, ?4),"
		    " author_date = coalesce(author_date, ?5),"
		    " committer = coalesce(committer, ?6),"
		    " commit_date = coalesce(commit_date, ?7),"
		    " subject = coalesce(subject, ?8),"
		    " paths = CASE WHEN first_seen IS NULL THEN json(?9)"
		    "  ELSE paths END,"
		    " touches = CASE WHEN first_seen IS NULL"
		    "  THEN CASE WHEN json_array_length(json(?9)) > 0 THEN 1 "
		    "ELSE 0 END ELSE touches END,"
		    " first_seen = coalesce(first_seen, ?10)"
		    " WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, id);
			store_i_bind_text(st, 2, branch);
			store_i_bind_text(st, 3, c->parents ? c->parents : "");
			store_i_bind_text(st, 4, c->author);
			db_bind_int64(st, 5, c->author_date);
			store_i_bind_text(st, 6, c->committer);
			db_bind_int64(st, 7, c->commit_date);
			store_i_bind_text(st, 8, c->subject);
			store_i_bind_text(
			    st, 9, c->paths_json ? c->paths_json : "[]");
			db_bind_int64(st, 10, now);
			ok = run_once(s, st, "commit update") == 0;
		}
	}
	/* The branch's own row (schema v31), for its filters; a
	 * connection opened at an older schema (tests) has none. */
	if (ok && branch != NULL && s->version >= 31) {
		st = store_i_stmt(s,
		    "INSERT INTO commit_branches (tree_id, branch, commit_id)"
		    " VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, tree_id);
			store_i_bind_text(st, 2, branch);
			db_bind_int64(st, 3, id);
			ok = run_once(s, st, "commit branch") == 0;
		}
	}
	ok = ok && store_i_commit_position(s, id) == 0;
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	*out_id = id;
	if (out_new)
		*out_new = fresh;
	return 0;
}

int
store_commit_record(struct store *s, int64_t *out_id, int *out_new,
    int64_t tree_id, const struct store_commit *c, const char *branch,
    int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    commit_record_once(s, out_id, out_new, tree_id, c, branch, now));
	return rc;
}

int
store_commit_find(struct store *s, int64_t *out_id, char *out_sha,
    size_t outlen, int64_t tree_id, const char *sha)
{
	struct db_stmt *st;
	size_t n = strlen(sha), i;
	char lo[64], hi[64];
	int rc, found = 0;

	if (n < 4 || n > 40)
		return err_setc(&s->err, ERR_NOTFOUND,
		    "commit '%.64s': expected 4 to 40 hex digits", sha);
	for (i = 0; i < n; i++) {
		char ch = sha[i];

		if (ch >= 'A' && ch <= 'F')
			ch = (char)(ch - 'A' + 'a');
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return err_setc(&s->err, ERR_NOTFOUND,
			    "commit '%.64s': not hexadecimal", sha);
		lo[i] = hi[i] = ch;
	}
	lo[n] = '\0';
	hi[n] = 'g';
	hi[n + 1] = '\0';
	st = store_i_stmt(s,
	    "SELECT id, sha FROM commits WHERE tree_id = ?1"
	    " AND sha >= ?2 AND sha < ?3 ORDER BY id LIMIT 2");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, tree_id);
	store_i_bind_text(st, 2, lo);
	store_i_bind_text(st, 3, hi);
	while ((rc = db_step(st)) == DB_ROW) {
		if (found++ == 0) {
			*out_id = db_col_int64(st, 0);
			snprintf(
			    out_sha, outlen, "%s", store_i_col_text(st, 1));
		}
	}
	store_i_release(s, st);
	if (rc != DB_DONE)
		return store_i_dberr(s, "commit find");
	if (found == 0)
		return err_setc(
		    &s->err, ERR_NOTFOUND, "commit %s is not recorded", lo);
	if (found > 1)
		return err_setc(
		    &s->err, ERR_CONFLICT, "commit prefix %s is ambiguous", lo);
	return 0;
}

static int
commit_stub_once(
    struct store *s, int64_t *out_id, int64_t tree_id, const char *sha)
{
	struct db_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO commits (tree_id, sha) VALUES (?1, ?2)"
	    " ON CONFLICT (tree_id, sha) DO UPDATE SET sha = excluded.sha"
	    " RETURNING id");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, tree_id);
		store_i_bind_text(st, 2, sha);
		if (db_step(st) == DB_ROW)
			*out_id = db_col_int64(st, 0);
		else
			ok = store_i_dberr(s, "commit stub") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_commit_stub(
    struct store *s, int64_t *out_id, int64_t tree_id, const char *sha)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, commit_stub_once(s, out_id, tree_id, sha));
	return rc;
}
