/*
 * The dashboard's commits and regressions: the typed reads of trees,
 * commits, the overview, a commit's page and regressions (store/dash.h),
 * regression triage and the operations counts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "store/dash.h"
#include "store/store_int.h"

/* Column i as a time that may be NULL: *has, and the value (0). */
static int64_t
col_time(struct db_stmt *st, int i, int *has)
{
	*has = db_col_type(st, i) != DB_NULL;
	return db_col_int64(st, i);
}

/* ---- trees ---- */

static void
branch_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_tree_branch *b = row;

	(void)arg;
	b->branch = store_i_web_text(st, 0);
	b->tip = store_i_web_text(st, 1);
	b->updated = col_time(st, 2, &b->has_updated);
	b->state = store_i_web_text(st, 3);
	b->error = store_i_web_text(st, 4);
	b->rewrites = db_col_int64(st, 5);
	b->last_rewrite = store_i_web_text(st, 6);
	b->commits = db_col_int64(st, 7);
}

static void
tree_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_tree *t = row;

	(void)arg;
	t->id = db_col_int64(st, 0);
	t->name = store_i_web_text(st, 1);
	t->url = store_i_web_text(st, 2);
	t->last_fetch = col_time(st, 3, &t->has_last_fetch);
	t->last_ok = col_time(st, 4, &t->has_last_ok);
	t->last_error = store_i_web_text(st, 5);
	t->failures = db_col_int64(st, 6);
	t->next_fetch = col_time(st, 7, &t->has_next_fetch);
	t->commits = db_col_int64(st, 8);
}

int
store_tree_list(struct store *s, struct store_trees *out)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT id, name, url, last_fetch, last_ok, last_error,"
	    " failures, next_fetch, ncommits" /* kept by triggers (v26) */
	    " FROM trees ORDER BY name");
	void *v;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	r = store_i_rows(
	    s, st, &v, &out->n, sizeof(*out->v), tree_scan, NULL, "trees");
	out->v = v;
	for (i = 0; r == 0 && i < out->n; i++) {
		struct store_tree *t = &out->v[i];

		st = store_i_stmt(s,
		    "SELECT branch, tip, updated, state, error, rewrites,"
		    " last_rewrite, commits FROM tree_branches"
		    " WHERE tree_id = ?1"
		    " ORDER BY branch");
		if (st == NULL) {
			r = -1;
			break;
		}
		db_bind_int64(st, 1, t->id);
		r = store_i_rows(s, st, &v, &t->nbranches, sizeof(*t->branches),
		    branch_scan, NULL, "branches");
		t->branches = v;
	}
	if (r != 0)
		store_trees_release(out);
	return r;
}

void
store_trees_release(struct store_trees *l)
{
	size_t i, k;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		struct store_tree *t = &l->v[i];

		for (k = 0; k < t->nbranches; k++) {
			free(t->branches[k].branch);
			free(t->branches[k].tip);
			free(t->branches[k].state);
			free(t->branches[k].error);
			free(t->branches[k].last_rewrite);
		}
		free(t->branches);
		free(t->name);
		free(t->url);
		free(t->last_error);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- commits ---- */

static void
commit_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_commit_row *c = row;

	(void)arg;
	c->id = db_col_int64(st, 0);
	c->sha = store_i_web_text(st, 1);
	c->tree = store_i_web_text(st, 2);
	c->subject = store_i_web_text(st, 3);
	c->author = store_i_web_text(st, 4);
	c->author_date = col_time(st, 5, &c->has_author_date);
	c->committer = store_i_web_text(st, 6);
	c->commit_date = col_time(st, 7, &c->has_commit_date);
	c->parents = store_i_web_text(st, 8);
	c->branches = store_i_web_text(st, 9);
	c->paths_json = store_i_web_text(st, 10);
	c->first_seen = db_col_int64(st, 11);
}

/*
 * A page of commits (store_commit_list) is one index's range
 * (store_i_list_page): a tree's seen commits (v26; CROSS: the tree
 * first, none of another tree's is read), or every tree's, or a
 * branch's of a tree or of every tree (v31, commit_branches).  Before,
 * a branch was checked on each commit, within the page's scan budget (a
 * branch with no commit read 10,000 of the 51,500 at 1M runs: 9 ms, and
 * came back partial).
 */
enum commits_drive { CM_ALL, CM_TREE, CM_BRANCH, CM_TREE_BRANCH };
/* Each a FROM clause (ending in WHERE's first terms) and its key. */
#define CM_ALL_DRIVE(stmt)                                      \
	stmt(" FROM commits c JOIN trees t ON t.id = c.tree_id" \
	     " WHERE CAST(?1 AS TEXT) IS NULL AND",             \
	    "c.id")
#define CM_BRANCH_DRIVE(stmt)                                          \
	stmt(" FROM commit_branches cb"                                \
	     " INDEXED BY commit_branches_branch"                      \
	     " CROSS JOIN commits c ON c.id = cb.commit_id"            \
	     " JOIN trees t ON t.id = c.tree_id"                       \
	     " WHERE CAST(?1 AS TEXT) IS NULL AND cb.branch = ?2 AND", \
	    "cb.commit_id")
#define CM_DRIVES(stmt)                                                  \
	{                                                                \
		[CM_ALL] = CM_ALL_DRIVE(stmt),                           \
		[CM_TREE] = stmt(" FROM trees t CROSS JOIN commits c"    \
		                 " INDEXED BY commits_tree_seen"         \
		                 " ON c.tree_id = t.id"                  \
		                 " WHERE t.name = ?1 AND",               \
		    "c.id"),                                             \
		[CM_BRANCH] = CM_BRANCH_DRIVE(stmt),                     \
		[CM_TREE_BRANCH] = stmt(" FROM trees t"                  \
		                        " CROSS JOIN commit_branches cb" \
		                        " ON cb.tree_id = t.id"          \
		                        " AND cb.branch = ?2"            \
		                        " CROSS JOIN commits c"          \
		                        " ON c.id = cb.commit_id"        \
		                        " WHERE t.name = ?1 AND",        \
		    "cb.commit_id"),                                     \
	}
/*
 * PostgreSQL's: the tree's id looked up first (a value, not a join), so
 * the range is one index's (commits_tree_seen, v41; the key of
 * commit_branches) read newest first and stopped at the page: joined
 * to the tree, a generic plan's estimate of a branch's commits (one row
 * where the tree's statistics were not made yet) sorted all 50,000 of
 * master's for a page of 50 (98 ms).
 */
#define CM_TREE_ID " (SELECT id FROM trees WHERE name = ?1)"
#define CM_DRIVES_PG(stmt)                                                   \
	{                                                                    \
		[CM_ALL] = CM_ALL_DRIVE(stmt),                               \
		[CM_TREE] = stmt(" FROM commits c"                           \
		                 " JOIN trees t ON t.id = c.tree_id"         \
		                 " WHERE c.tree_id =" CM_TREE_ID " AND",     \
		    "c.id"),                                                 \
		[CM_BRANCH] = CM_BRANCH_DRIVE(stmt),                         \
		[CM_TREE_BRANCH] = stmt(" FROM commit_branches cb"           \
		                        " JOIN commits c"                    \
		                        " ON c.id = cb.commit_id"            \
		                        " JOIN trees t ON t.id = cb.tree_id" \
		                        " WHERE cb.tree_id =" CM_TREE_ID     \
		                        " AND cb.branch = ?2 AND",           \
		    "cb.commit_id"),                                         \
	}
#define CM_ROWS(from, key)                                                  \
	"SELECT c.id, c.sha, t.name, c.subject, c.author,"                  \
	" c.author_date, c.committer, c.commit_date, c.parents,"            \
	" c.branches, c.paths, c.first_seen" from                           \
	" c.first_seen IS NOT NULL AND " key " >= ?12 AND " key " < ?10"    \
	" AND (CAST(?2 AS TEXT) IS NULL OR instr(',' || c.branches || ','," \
	"  ',' || ?2 || ',') > 0) ORDER BY " key " DESC LIMIT ?11"

struct commits_q {
	const char *tree, *branch;
};

static void
commits_bind(struct db_stmt *st, const void *arg)
{
	const struct commits_q *q = arg;

	store_i_bind_text(st, 1, q->tree);
	store_i_bind_text(st, 2, q->branch);
}

static int64_t
commit_id(const void *row)
{
	return ((const struct store_commit_row *)row)->id;
}

int
store_commit_list(struct store *s, struct store_commits *out, const char *tree,
    const char *branch, int64_t limit, int64_t cursor)
{
	static const char *const rows[] = CM_DRIVES(CM_ROWS);
	static const char *const rows_pg[] = CM_DRIVES_PG(CM_ROWS);
	enum commits_drive d = (tree != NULL ? CM_TREE : CM_ALL) +
	    (branch != NULL ? CM_BRANCH : CM_ALL);
	struct commits_q q = { tree, branch };
	void *v = NULL;
	/* One kind of filter, one range: no windows, no budget. */
	struct store_i_list l = { s, NULL,
		db_backend(s->db) == DB_PG ? rows_pg[d] : rows[d], commits_bind,
		&q, &v, &out->n, sizeof(*out->v), commit_scan, NULL,
		"commits" };
	int r, capped;

	memset(out, 0, sizeof(*out));
	r = store_i_list_page(
	    &l, 1, cursor, limit, 0, &capped, &out->next_cursor, commit_id);
	out->v = v;
	if (r != 0) {
		store_commits_release(out);
		return -1;
	}
	return 0;
}

void
store_commits_release(struct store_commits *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		struct store_commit_row *c = &l->v[i];

		free(c->sha);
		free(c->tree);
		free(c->subject);
		free(c->author);
		free(c->committer);
		free(c->parents);
		free(c->branches);
		free(c->paths_json);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- the overview ---- */

static void
recent_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_recent_job *j = row;

	(void)arg;
	j->id = db_col_int64(st, 0);
	j->pair_id = db_col_int64(st, 1);
	j->name = store_i_web_text(st, 2);
	j->point = store_i_web_text(st, 3);
	j->state = store_i_web_text(st, 4);
	j->progress = store_i_web_text(st, 5);
	j->created = db_col_int64(st, 6);
	j->commit_id = db_col_int64(st, 7);
	j->sha = store_i_web_text(st, 8);
	j->subject = store_i_web_text(st, 9);
	j->author = store_i_web_text(st, 10);
	j->time = db_col_int64(st, 11);
	j->tree = store_i_web_text(st, 12);
	j->branches = store_i_web_text(st, 13);
	j->series_id = db_col_int64(st, 14);
	j->series_title = store_i_web_text(st, 15);
	j->base_state = store_i_web_text(st, 16);
	j->base_progress = store_i_web_text(st, 17);
	j->verdicts = store_i_web_text(st, 18);
}

/* The recent jobs' columns (recent_scan), of the candidate j, its
 * base b, its commit c in tree t and its series se (a series' tip is on
 * no branch: the branch it targets). */
#define RECENT_COLS                                                      \
	"SELECT j.id, j.pair_id, j.name, j.point, j.state, j.progress,"  \
	" j.created, j.commit_id, c.sha, c.subject, c.author,"           \
	" coalesce(c.commit_date, j.created), t.name,"                   \
	" CASE WHEN se.id IS NOT NULL AND coalesce(c.branches, '') = ''" \
	"  THEN se.branch ELSE c.branches END,"                          \
	" se.id, se.title, b.state, b.progress,"                         \
	" (SELECT group_concat(verdict) FROM comparisons"                \
	"  WHERE pair_id = j.pair_id)"
/* A bisection's synthetic commit (its revert of the culprit), never
 * seen on a branch, is no commit of the overview's. */
#define RECENT_FROM                                                 \
	" FROM jobs j"                                              \
	" LEFT JOIN jobs b ON b.id ="                               \
	"  (SELECT base_job_id FROM pairs WHERE id = j.pair_id)"    \
	" LEFT JOIN commits c ON c.id = j.commit_id"                \
	" LEFT JOIN trees t ON t.id = c.tree_id"                    \
	" LEFT JOIN series se ON se.commit_id = j.commit_id"        \
	" WHERE j.role = 'candidate'"                               \
	" AND NOT (c.first_seen IS NULL AND (SELECT bisect_id FROM" \
	"  pairs WHERE id = j.pair_id) IS NOT NULL)"                \
	" ORDER BY j.id DESC LIMIT ?1"
/*
 * PostgreSQL's generic plan of RECENT_FROM takes LIMIT ?1 for a tenth
 * of the jobs and hash-joins every commit, pair and job for them (33 ms
 * at 100,000 runs): here the page of candidates comes first, newest
 * first by id, then each one's rows (0.7 ms).  A commit with no row, or
 * no first_seen, is as c.first_seen NULL is in RECENT_FROM.  Each
 * candidate's commit is read once, as the page is chosen (LIMIT 1: a
 * lookup by id, never a join the plan could hash), and carried out with
 * its job as the columns c names (1,200 buffers fewer a page of 400).
 */
#define RECENT_FROM_PG                                                       \
	" FROM (SELECT j.*, c.sha, c.subject, c.author, c.commit_date,"      \
	"  c.branches, c.tree_id FROM jobs j LEFT JOIN LATERAL (SELECT sha," \
	"  subject, author, commit_date, branches, tree_id, first_seen"      \
	"  FROM commits c WHERE c.id = j.commit_id LIMIT 1) c ON true"       \
	" WHERE j.role = 'candidate' AND NOT (c.first_seen IS NULL"          \
	"  AND (SELECT bisect_id FROM pairs WHERE id = j.pair_id)"           \
	"  IS NOT NULL) ORDER BY j.id DESC LIMIT ?1) j"                      \
	" LEFT JOIN LATERAL (SELECT b.state, b.progress FROM pairs pb"       \
	"  JOIN jobs b ON b.id = pb.base_job_id"                             \
	"  WHERE pb.id = j.pair_id) b ON true"                               \
	" CROSS JOIN LATERAL (SELECT j.sha, j.subject, j.author,"            \
	"  j.commit_date, j.branches, j.tree_id) c"                          \
	" LEFT JOIN LATERAL (SELECT name FROM trees t"                       \
	"  WHERE t.id = c.tree_id) t ON true"                                \
	" LEFT JOIN LATERAL (SELECT * FROM series se"                        \
	"  WHERE se.commit_id = j.commit_id) se ON true"                     \
	" ORDER BY j.id DESC"

int
store_recent_list(struct store *s, struct store_recent *out, int64_t limit)
{
	struct db_stmt *st = db_backend(s->db) == DB_PG
	    ? store_i_stmt(s, RECENT_COLS RECENT_FROM_PG)
	    : store_i_stmt(s, RECENT_COLS RECENT_FROM);
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, limit);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), recent_scan, NULL,
	    "recent jobs");
	out->v = v;
	if (r != 0)
		store_recent_release(out);
	return r;
}

void
store_recent_release(struct store_recent *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		struct store_recent_job *j = &l->v[i];

		free(j->name);
		free(j->point);
		free(j->state);
		free(j->progress);
		free(j->sha);
		free(j->subject);
		free(j->author);
		free(j->tree);
		free(j->branches);
		free(j->series_title);
		free(j->base_state);
		free(j->base_progress);
		free(j->verdicts);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

const char *const store_regression_states[STORE_REGRESSION_STATES] = { "new",
	"acknowledged", "invalid", "fixed" };

int
store_regression_counts_get(
    struct store *s, struct store_regression_counts *out)
{
	/* The triggers' counts (store/counts.h). */
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT substr(name, 13), n FROM count_totals"
	    " WHERE name LIKE 'regressions.%'");
	int rc, i;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		for (i = 0; i < STORE_REGRESSION_STATES; i++)
			if (strcmp(store_i_col_text(st, 0),
			        store_regression_states[i]) == 0)
				out->n[i] = db_col_int64(st, 1);
	store_i_release(s, st);
	if (rc != DB_DONE)
		return store_i_dberr(s, "regression counts");
	return 0;
}

/* ---- a commit ---- */

static void
pair_id_scan(void *row, struct db_stmt *st, void *arg)
{
	(void)arg;
	*(int64_t *)row = db_col_int64(st, 0);
}

int
store_commit_page_get(
    struct store *s, struct store_commit_page *out, const char *sha)
{
	struct db_stmt *st;
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (!store_i_web_hex(sha))
		return err_setc(&s->err, ERR_NOTFOUND,
		    "commit: expected 4 to 64 lowercase hex digits");
	st = store_i_stmt(s,
	    "SELECT c.id, c.sha, c.subject, c.author,"
	    " coalesce(c.commit_date, c.author_date), t.name,"
	    " c.branches, c.parents FROM commits c"
	    " JOIN trees t ON t.id = c.tree_id"
	    " WHERE c.sha >= ?1 AND c.sha < ?1 || 'g' LIMIT 2");
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, sha);
	if ((r = db_step(st)) != DB_ROW) {
		store_i_release(s, st);
		if (r != DB_DONE)
			return store_i_dberr(s, "commit");
		return err_setc(
		    &s->err, ERR_NOTFOUND, "commit %s not found", sha);
	}
	out->id = db_col_int64(st, 0);
	out->sha = store_i_web_text(st, 1);
	out->subject = store_i_web_text(st, 2);
	out->author = store_i_web_text(st, 3);
	out->time = col_time(st, 4, &out->has_time);
	out->tree = store_i_web_text(st, 5);
	out->branches = store_i_web_text(st, 6);
	out->parents = store_i_web_text(st, 7);
	r = db_step(st);
	store_i_release(s, st);
	if (r == DB_ROW) {
		store_commit_page_release(out);
		return err_setc(&s->err, ERR_CONFLICT,
		    "commit prefix %s is ambiguous", sha);
	}
	st = store_i_stmt(s,
	    "SELECT DISTINCT pair_id FROM jobs WHERE commit_id = ?1"
	    " AND role = 'candidate' AND pair_id IS NOT NULL"
	    " ORDER BY pair_id DESC");
	if (st == NULL) {
		store_commit_page_release(out);
		return -1;
	}
	db_bind_int64(st, 1, out->id);
	r = store_i_rows(s, st, &v, &out->npairs, sizeof(*out->pairs),
	    pair_id_scan, NULL, "commit pairs");
	out->pairs = v;
	if (r != 0) {
		store_commit_page_release(out);
		return r;
	}
	st = store_i_stmt(
	    s, "SELECT id, title FROM series WHERE commit_id = ?1");
	if (st != NULL) {
		db_bind_int64(st, 1, out->id);
		if (db_step(st) == DB_ROW) {
			out->series_id = db_col_int64(st, 0);
			out->series_title = store_i_web_text(st, 1);
		}
		store_i_release(s, st);
	}
	return 0;
}

void
store_commit_page_release(struct store_commit_page *c)
{
	if (c == NULL)
		return;
	free(c->sha);
	free(c->subject);
	free(c->author);
	free(c->tree);
	free(c->branches);
	free(c->parents);
	free(c->pairs);
	free(c->series_title);
	memset(c, 0, sizeof(*c));
}

/* ---- regressions ---- */

static void
regression_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_regression *g = row;

	(void)arg;
	g->id = db_col_int64(st, 0);
	g->state = store_i_web_text(st, 1);
	g->note = store_i_web_text(st, 2);
	g->created = db_col_int64(st, 3);
	g->updated = db_col_int64(st, 4);
	g->metric = store_i_web_text(st, 5);
	g->change_pct = store_i_col_num(st, 6);
	g->verdict = store_i_web_text(st, 7);
	g->pair_id = db_col_int64(st, 8);
	g->bench = store_i_web_text(st, 9);
	g->point = store_i_web_text(st, 10);
	g->host = store_i_web_text(st, 11);
	g->sha = store_i_web_text(st, 12);
	g->subject = store_i_web_text(st, 13);
	g->tree = store_i_web_text(st, 14);
	g->branches = store_i_web_text(st, 15);
	g->bisect_id = db_col_int64(st, 16);
	g->bisect_state = store_i_web_text(st, 17);
	g->culprit = store_i_web_text(st, 18);
	g->culprit_subject = store_i_web_text(st, 19);
	g->verify_parent = store_i_web_text(st, 20);
	g->verify_revert = store_i_web_text(st, 21);
	g->bisect_reason = store_i_web_text(st, 22);
	g->suspect = store_i_web_text(st, 23);
	g->series_id = db_col_int64(st, 24);
}

/*
 * A regressions page (store_regression_list) is driven by one index
 * (store_i_list_page): of its host, else its tree, else its benchmark,
 * else its state, else of all, newest first.  A filter of one kind is
 * that index's range; the others of a page are checked on the
 * regression's own columns (schema v27), within its scan budget.  Each
 * shape of filters has a rows statement of its own with only their
 * predicates, as a page of alerts has (store/alerts.c), SQLite held to
 * the drive's index.
 */
enum reg_drive { REG_ALL, REG_HOST, REG_TREE, REG_BENCH, REG_STATE };
enum {
	REG_F_TREE = 1,
	REG_F_HOST = 2,
	REG_F_BENCH = 4,
	REG_F_STATE = 8,
	REG_SHAPES = 16
};

/* Each filter's predicate. */
#define REG_P_TREE " AND rg.tree_id = (SELECT id FROM trees WHERE name = ?1)"
#define REG_P_HOST " AND rg.host_id = (SELECT id FROM hosts WHERE name = ?2)"
#define REG_P_BENCH " AND rg.bench = ?3"
#define REG_P_STATE " AND rg.state = ?4"
#define REG_WINDOW(drive)                                                 \
	"SELECT min(id), count(*) FROM (SELECT rg.id FROM regressions rg" \
	" WHERE rg.id < ?10" drive " ORDER BY rg.id DESC LIMIT ?11) AS w"
/* ix: SQLite's index of the drive; then the shape's predicates.  Its
 * newest bisection's too (store/bisect.c). */
#define REG_ROWS(ix, tree, host, bench, state)                          \
	"SELECT rg.id, rg.state, rg.note, rg.created, rg.updated,"      \
	" cm.metric, cm.change_pct, cm.verdict, p.id, p.name, p.point," \
	" h.name, c.sha, c.subject, t.name, c.branches,"                \
	" b.id, b.state, b.culprit_sha, (SELECT subject FROM commits"   \
	"  WHERE tree_id = b.tree_id AND sha = b.culprit_sha),"         \
	" b.verify_parent, b.verify_revert, b.reason, p.suspect,"       \
	" (SELECT max(se.id) FROM series se WHERE se.commit_id = c.id)" \
	" FROM regressions rg" ix " JOIN comparisons cm"                \
	" ON cm.id = rg.comparison_id"                                  \
	" JOIN pairs p ON p.id = cm.pair_id"                            \
	" LEFT JOIN bisections b ON b.id = (SELECT max(id) FROM"        \
	"  bisections WHERE regression_id = rg.id)"                     \
	" LEFT JOIN hosts h ON h.id = p.host_id"                        \
	" LEFT JOIN jobs j ON j.id = p.cand_job_id"                     \
	" LEFT JOIN commits c ON c.id = j.commit_id"                    \
	" LEFT JOIN trees t ON t.id = c.tree_id"                        \
	" WHERE rg.id >= ?12 AND rg.id < ?10" tree host bench state     \
	" ORDER BY rg.id DESC LIMIT ?11"
#define REG_IX_TREE " INDEXED BY regressions_tree"
#define REG_IX_HOST " INDEXED BY regressions_host"
#define REG_IX_BENCH " INDEXED BY regressions_bench"
#define REG_IX_STATE " INDEXED BY regressions_state"
/* The host's shapes, by their other filters. */
#define REG_ROWS_HOST(tree, bench, state) \
	REG_ROWS(REG_IX_HOST, tree, REG_P_HOST, bench, state)
/* The tree's (no host). */
#define REG_ROWS_TREE(bench, state) \
	REG_ROWS(REG_IX_TREE, REG_P_TREE, "", bench, state)
/* The benchmark's (no host or tree). */
#define REG_ROWS_BENCH(state) REG_ROWS(REG_IX_BENCH, "", "", REG_P_BENCH, state)

static const char *const reg_window[] = {
	[REG_ALL] = REG_WINDOW(""),
	[REG_HOST] = REG_WINDOW(REG_P_HOST),
	[REG_TREE] = REG_WINDOW(REG_P_TREE),
	[REG_BENCH] = REG_WINDOW(REG_P_BENCH),
	[REG_STATE] = REG_WINDOW(REG_P_STATE),
};

/* By shape: its REG_F_* bits. */
static const char *const reg_rows[REG_SHAPES] = {
	[0] = REG_ROWS("", "", "", "", ""),
	[REG_F_STATE] = REG_ROWS(REG_IX_STATE, "", "", "", REG_P_STATE),
	[REG_F_BENCH] = REG_ROWS_BENCH(""),
	[REG_F_BENCH | REG_F_STATE] = REG_ROWS_BENCH(REG_P_STATE),
	[REG_F_TREE] = REG_ROWS_TREE("", ""),
	[REG_F_TREE | REG_F_STATE] = REG_ROWS_TREE("", REG_P_STATE),
	[REG_F_TREE | REG_F_BENCH] = REG_ROWS_TREE(REG_P_BENCH, ""),
	[REG_F_TREE | REG_F_BENCH | REG_F_STATE] =
	    REG_ROWS_TREE(REG_P_BENCH, REG_P_STATE),
	[REG_F_HOST] = REG_ROWS_HOST("", "", ""),
	[REG_F_HOST | REG_F_STATE] = REG_ROWS_HOST("", "", REG_P_STATE),
	[REG_F_HOST | REG_F_BENCH] = REG_ROWS_HOST("", REG_P_BENCH, ""),
	[REG_F_HOST | REG_F_BENCH | REG_F_STATE] =
	    REG_ROWS_HOST("", REG_P_BENCH, REG_P_STATE),
	[REG_F_HOST | REG_F_TREE] = REG_ROWS_HOST(REG_P_TREE, "", ""),
	[REG_F_HOST | REG_F_TREE | REG_F_STATE] =
	    REG_ROWS_HOST(REG_P_TREE, "", REG_P_STATE),
	[REG_F_HOST | REG_F_TREE | REG_F_BENCH] =
	    REG_ROWS_HOST(REG_P_TREE, REG_P_BENCH, ""),
	[REG_F_HOST | REG_F_TREE | REG_F_BENCH | REG_F_STATE] =
	    REG_ROWS_HOST(REG_P_TREE, REG_P_BENCH, REG_P_STATE),
};

/* The page's filters, ?1 to ?4 of both statements. */
static void
reg_bind(struct db_stmt *st, const void *arg)
{
	const struct store_regressions_q *q = arg;

	store_i_bind_text(st, 1, q->tree);
	store_i_bind_text(st, 2, q->host);
	store_i_bind_text(st, 3, q->bench);
	store_i_bind_text(st, 4, q->state);
}

static int64_t
reg_id(const void *row)
{
	return ((const struct store_regression *)row)->id;
}

int
store_regression_list(struct store *s, struct store_regressions *out,
    const struct store_regressions_q *q)
{
	unsigned shape = (q->tree ? REG_F_TREE : 0) |
	    (q->host ? REG_F_HOST : 0) | (q->bench ? REG_F_BENCH : 0) |
	    (q->state ? REG_F_STATE : 0);
	enum reg_drive d = q->host ? REG_HOST
	    : q->tree              ? REG_TREE
	    : q->bench             ? REG_BENCH
	    : q->state             ? REG_STATE
	                           : REG_ALL;
	void *v = NULL;
	struct store_i_list l = { s, reg_window[d], reg_rows[shape], reg_bind,
		q, &v, &out->n, sizeof(*out->v), regression_scan, NULL,
		"regressions" };
	int r;

	memset(out, 0, sizeof(*out));
	r = store_i_list_page(&l,
	    (q->tree != NULL) + (q->host != NULL) + (q->bench != NULL) +
	        (q->state != NULL),
	    q->cursor, q->limit, q->scan > 0 ? q->scan : STORE_REGRESSIONS_SCAN,
	    &out->capped, &out->next_cursor, reg_id);
	out->v = v;
	if (r != 0) {
		store_regressions_release(out);
		return -1;
	}
	return 0;
}

void
store_regressions_release(struct store_regressions *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		struct store_regression *g = &l->v[i];

		free(g->state);
		free(g->note);
		free(g->metric);
		free(g->verdict);
		free(g->bench);
		free(g->point);
		free(g->host);
		free(g->sha);
		free(g->subject);
		free(g->tree);
		free(g->branches);
		free(g->bisect_state);
		free(g->culprit);
		free(g->culprit_subject);
		free(g->verify_parent);
		free(g->verify_revert);
		free(g->bisect_reason);
		free(g->suspect);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int
store_commit_time_get(struct store *s, int64_t *out, const char *sha)
{
	struct db_stmt *st;
	int r = 0;

	if (!store_i_web_hex(sha))
		return err_setc(&s->err, ERR_NOTFOUND,
		    "commit: expected 4 to 64 lowercase hex digits");
	st = store_i_stmt(s,
	    "SELECT coalesce(commit_date, author_date) FROM commits"
	    " WHERE sha >= ?1 AND sha < ?1 || 'g' LIMIT 1");
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, sha);
	if (db_step(st) == DB_ROW)
		*out = db_col_int64(st, 0);
	else
		r = err_setc(&s->err, ERR_NOTFOUND, "commit %s not found", sha);
	store_i_release(s, st);
	return r;
}

static int
web_triage_once(struct store *s, int64_t id, const char *state,
    const char *note, int64_t now)
{
	static const char *const ok[] = { "new", "acknowledged", "invalid",
		"fixed" };
	struct db_stmt *st;
	size_t i;
	int r = 0;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (state && strcmp(state, ok[i]) == 0)
			break;
	if (i == sizeof(ok) / sizeof(ok[0]))
		return err_setc(&s->err, ERR_INVALID,
		    "state: expected new, acknowledged, invalid or fixed");
	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "UPDATE regressions SET state = ?2, note = coalesce(?3, note),"
	    " updated = ?4 WHERE id = ?1");
	if (st == NULL) {
		store_i_tx_end(s, 0);
		return -1;
	}
	db_bind_int64(st, 1, id);
	store_i_bind_text(st, 2, state);
	store_i_bind_text(st, 3, note);
	db_bind_int64(st, 4, now);
	if (store_i_step_done(s, st, "triage") == -1)
		r = -1;
	else if (db_changes(s->db) == 0)
		r = err_setc(&s->err, ERR_NOTFOUND, "regression %lld not found",
		    (long long)id);
	store_i_release(s, st);
	if (store_i_tx_end(s, r == 0) == -1 && r == 0)
		r = -1;
	return r;
}

int
store_regression_triage(struct store *s, int64_t id, const char *state,
    const char *note, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, web_triage_once(s, id, state, note, now));
	return rc;
}

int
store_ops_gauges_get(
    struct store *s, int64_t *out_alerts_pending, int64_t *out_fetch_errors)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT (SELECT count(*) FROM alerts WHERE state = 'pending'),"
	    " (SELECT count(*) FROM trees WHERE last_error IS NOT NULL)");

	*out_alerts_pending = *out_fetch_errors = 0;
	if (st == NULL)
		return -1;
	if (db_step(st) == DB_ROW) {
		*out_alerts_pending = db_col_int64(st, 0);
		*out_fetch_errors = db_col_int64(st, 1);
	}
	store_i_release(s, st);
	return 0;
}
