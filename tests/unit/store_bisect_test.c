/*
 * The bisection tables (store/bisect.c): schema v16 keeps what v15
 * stored, and a history change point is a bisection's source.
 */
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/alerts.h"
#include "store/bisect.h"
#include "store/history.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/store.h"
#include "store/watch.h"
#include "tests/unit/test.h"

extern char **environ;

static const struct store_job_new job_base = { "base", "{\"parser\":\"fio\"}",
	"[]", 3, 5, 2, 0 };
static const struct store_job_new job_cand = { "candidate",
	"{\"parser\":\"fio\",\"tree\":{\"url\":\"x\"}}", "[]", 3, 5, 2, 0 };

/* Runs the sqlite3 command-line tool on path (the store is the only
 * module linking SQLite; this test plays an old perfwatchd). */
static int
sqlite_cli(const char *path, const char *sql)
{
	char *argv[] = { "sqlite3", (char *)path, (char *)sql, NULL };
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, "sqlite3", NULL, NULL, argv, environ) != 0)
		return -1;
	if (waitpid(pid, &st, 0) == -1)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* v15 rows (a bisection of a regression, its steps, its pairs' tag)
 * survive the v16 rebuild with their ids; the new class and a bisection
 * without a regression row are then accepted. */
TEST(test_store_bisect__v16_keeps_v15_rows)
{
	SKIP_ON_PG("SQLite's schema steps from an older version");

	char *p = test_store_at("v15.db");
	struct store *s = NULL;
	struct store_bisect *b = NULL;
	struct store_bisect_step *st = NULL;
	struct err e = { 0 };
	int64_t pair = 0, tagged = 0;
	size_t n = 0;
	char sql[1024];

	unlink(p);
	ASSERT_MSG(store_open_version(&s, p, 15, &e) == 0, "%s", err_msg(&e));
	ASSERT(store_pair_create(s, &pair, NULL, NULL, "j", "", &job_base,
	           &job_cand, 10) == 0);
	store_close(s);
	snprintf(sql, sizeof(sql),
	    "PRAGMA foreign_keys = ON;"
	    "INSERT INTO comparisons (pair_id, metric, verdict, created)"
	    " VALUES (%lld, 'ops', 'regression', 1);"
	    "INSERT INTO regressions (comparison_id, created, updated)"
	    " VALUES (1, 1, 1);"
	    "INSERT INTO bisections (id, regression_id, pair_id, job, metric,"
	    " good_sha, bad_sha, state, culprit_sha, steps_limit, created,"
	    " updated) VALUES (7, 1, %lld, 'j', 'ops', 'aaa', 'bbb', 'done',"
	    " 'ccc', 16, 1, 2);"
	    "INSERT INTO bisect_steps (bisect_id, sha, good_pair_id, class,"
	    " created, updated) VALUES (7, 'ccc', %lld, 'bad', 1, 1);"
	    "UPDATE pairs SET bisect_id = 7 WHERE id = %lld;",
	    (long long)pair, (long long)pair, (long long)pair, (long long)pair);
	ASSERT(sqlite_cli(p, sql) == 0);

	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	ASSERT_INTEQ(store_user_version(s), STORE_VERSION); /* v16 and later */
	ASSERT(store_bisect_get(s, &b, 7) == 0);
	ASSERT_INTEQ(b->regression_id, 1);
	ASSERT_STREQ(b->origin, "regression");
	ASSERT_STREQ(b->culprit_sha, "ccc");
	ASSERT_INTEQ(b->change_point_id, 0);
	ASSERT(isnan(b->origin_pct));
	store_bisect_release(b);
	ASSERT(store_bisect_step_list(s, &st, &n, 7) == 0);
	ASSERT_INTEQ(n, 1);
	ASSERT_STREQ(st[0].cls, "bad");
	/* v16: a step measured on a suspect pair. */
	ASSERT(store_bisect_step_set(s, st[0].id, "suspect", NULL, NAN, NULL,
	           NAN, "not classified", 3) == 0);
	store_bisect_steps_release(st, n);
	ASSERT(store_bisect_pair_of(s, &tagged, pair) == 0);
	ASSERT_INTEQ(tagged, 7);
	/* The regression's bisection is still found from it. */
	ASSERT(store_bisect_of_regression(s, &b, 1) == 0);
	ASSERT_INTEQ(b->id, 7);
	store_bisect_release(b);
	store_close(s);

	/* Without a regression row only a change point may be the origin. */
	ASSERT(sqlite_cli(p,
	           "INSERT INTO bisections (regression_id, pair_id, job,"
	           " metric, good_sha, bad_sha, steps_limit, created, updated)"
	           " VALUES (NULL, 1, 'j', 'ops', 'a', 'b', 16, 1, 1);") != 0);
	ASSERT(sqlite_cli(p,
	           "INSERT INTO bisections (regression_id, origin, pair_id,"
	           " job, metric, good_sha, bad_sha, steps_limit, created,"
	           " updated) VALUES (NULL, 'change-point', 1, 'j', 'ops', 'a',"
	           " 'b', 16, 1, 1);") == 0);
	free(p);
}

/* A history of 10 tips of a branch on one host, the change between the
 * 5th and the 6th: its change point names both ends' commits, the
 * change point's own pair and the series' host; started once. */
TEST(test_store_bisect__change_point_is_a_source)
{
	SKIP_ON_PG("rows made with the sqlite3 command-line tool");

	char *p = test_store_at("cp.db");
	struct store *s = NULL;
	struct store_bisect_src src;
	struct store_bisect_new bn;
	struct store_bisect *b = NULL;
	struct store_series_key k = { "app", "master", 0, "slowprog", "",
		"time_ms", "lower" };
	struct store_change_point cp = { 5, 5, 5, 80, 200, 150.0, 0.001,
		"regression" };
	struct err e = { 0 };
	int64_t h = 0, tree = 0, series = 0, seq = 0, pairs[10], cands[10];
	int64_t cpid, id = 0, id2 = 0, cands_out[4], ats[4], commits[10];
	struct store_alert_info *info = NULL;
	uint64_t steps, more;
	char sha[10][41], **rg = NULL;
	struct store_cp_rows cps;
	size_t n = 0, i;

	unlink(p);
	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	ASSERT(store_host_register(s, &h, "r1", "[]", "{}", 1) == 0);
	ASSERT(store_tree_sync(s, &tree, "app", "file:///x") == 0);
	k.host_id = h;
	for (i = 0; i < 10; i++) {
		struct store_job_new c = job_cand;
		int64_t cid = 0;

		snprintf(sha[i], sizeof(sha[i]), "%040zx", i + 1);
		ASSERT(store_commit_stub(s, &cid, tree, sha[i]) == 0);
		c.commit_id = commits[i] = cid;
		ASSERT(
		    store_pair_create(s, &pairs[i], NULL, &cands[i], "slowprog",
		        "", &job_base, &c, 10 + (int64_t)i) == 0);
		ASSERT(store_history_append(s, &series, &seq, &k, pairs[i],
		           cands[i], 0, i < 5 ? 80 : 200, 20) == 0);
	}
	ASSERT(store_changepoints_replace(s, series, 0, &cp, 1, 30) == 0);
	/* GET /api/v1/history's change points carry the id to start from. */
	ASSERT(store_history_changepoint_list(s, &cps, "app", "master", "r1",
	           "slowprog", "", "time_ms") == 0);
	ASSERT_INTEQ(cps.n, 1);
	cpid = cps.v[0].id;
	store_cp_rows_release(&cps);
	ASSERT(cpid > 0);

	ASSERT(store_bisect_cp_candidates(s, cands_out, ats, &n, 0, 0, 4) == 0);
	ASSERT_INTEQ(n, 1);
	ASSERT_INTEQ(cands_out[0], cpid);

	ASSERT(store_bisect_src_cp(s, &src, cpid) == 0);
	ASSERT_STREQ(src.good_sha, sha[4]); /* the point before the change */
	ASSERT_STREQ(src.bad_sha, sha[5]);  /* the change point's */
	ASSERT_STREQ(src.origin_sha, sha[5]);
	ASSERT_INTEQ(src.pair_id, pairs[5]);
	ASSERT_INTEQ(src.host_id, h);
	ASSERT_INTEQ(src.change_point_id, cpid);
	ASSERT_INTEQ(src.regression_id, 0);
	ASSERT_STREQ(src.job, "slowprog");
	ASSERT_STREQ(src.metric, "time_ms");
	ASSERT_STREQ(src.branch, "master");
	ASSERT_STREQ(src.tree, "app");
	ASSERT_STREQ(src.direction, "regression");
	ASSERT(fabs(src.origin_pct - 150.0) < 1e-9);

	memset(&bn, 0, sizeof(bn));
	bn.src = &src;
	bn.steps_limit = 16;
	bn.max_inconclusive = 2;
	bn.started_by = "auto";
	ASSERT(store_bisect_create(s, &id, &bn, 40) == 0);
	/* The same range once while it runs. */
	ASSERT_INTEQ(store_bisect_create(s, &id2, &bn, 41), ERR_EXISTS);
	ASSERT_INTEQ(id2, id);
	store_errclear(s);
	store_bisect_src_release(&src);

	ASSERT(store_bisect_get(s, &b, id) == 0);
	ASSERT_STREQ(b->origin, "change-point");
	ASSERT_INTEQ(b->regression_id, 0);
	ASSERT_INTEQ(b->change_point_id, cpid);
	ASSERT_STREQ(b->origin_sha, sha[5]);
	ASSERT_STREQ(b->branch, "master");
	ASSERT_STREQ(b->good_sha, sha[4]);
	ASSERT_STREQ(b->bad_sha, sha[5]);
	ASSERT_INTEQ(b->pair_id, pairs[5]);
	ASSERT_INTEQ(b->host_id, h);
	store_bisect_release(b);

	/* Started from: no more a candidate; its range is known. */
	ASSERT(store_bisect_cp_candidates(s, cands_out, ats, &n, 0, 0, 4) == 0);
	ASSERT_INTEQ(n, 0);
	ASSERT(store_bisect_range_list(
	           s, &rg, &n, "slowprog", h, "", "time_ms", tree) == 0);
	ASSERT_INTEQ(n, 1);
	ASSERT_STREQ(rg[0], sha[4]);
	ASSERT_STREQ(rg[1], sha[5]);
	store_bisect_ranges_release(rg, n);
	ASSERT(store_bisect_range_list(
	           s, &rg, &n, "slowprog", h, "", "other", tree) == 0);
	ASSERT_INTEQ(n, 0);
	store_bisect_ranges_release(rg, n);

	/* Recomputed (later, as the next point arrives): the row may get
	 * its old id back, yet it is a new one to look at (the overlap
	 * check in daemon/bisect.c decides). */
	ASSERT(store_changepoints_replace(s, series, 0, &cp, 1, 50) == 0);
	ASSERT(store_bisect_cp_candidates(s, cands_out, ats, &n, 0, 0, 4) == 0);
	ASSERT_INTEQ(n, 1);
	ASSERT_INTEQ(ats[0], 50);
	/* ... once: after it, nothing. */
	ASSERT(store_bisect_cp_candidates(
	           s, cands_out, ats, &n, ats[0], cands_out[0], 4) == 0);
	ASSERT_INTEQ(n, 0);

	/* The alert report's bisection of its group comes through the
	 * pair's bisections (v29): 300 more of another pair cost it
	 * nothing (before, it read every bisection). */
	steps = store_read_steps(s);
	ASSERT(store_alert_info_get(s, &info, commits[5], "slowprog", h) == 0);
	steps = store_read_steps(s) - steps;
	store_alert_info_release(info);
	ASSERT(sqlite_cli(p,
	           "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1"
	           " FROM n WHERE i < 300) INSERT INTO bisections"
	           " (origin, pair_id, job, metric, good_sha, bad_sha,"
	           " steps_limit, state, created, updated) SELECT"
	           " 'change-point', 1, 'slowprog', 'x', 'a', 'b', 16, 'done',"
	           " 1, 1 FROM n;") == 0);
	more = store_read_steps(s);
	ASSERT(store_alert_info_get(s, &info, commits[5], "slowprog", h) == 0);
	more = store_read_steps(s) - more;
	store_alert_info_release(info);
	ASSERT_MSG(more < steps + 100,
	    "alert info: %llu steps, %llu with 300 more bisections",
	    (unsigned long long)steps, (unsigned long long)more);
	store_close(s);
	free(p);
}

/* A change at the first point has no good end. */
TEST(test_store_bisect__change_at_first_point_has_no_good_end)
{
	char *p = test_store_at("cp0.db");
	struct store *s = NULL;
	struct store_bisect_src src;
	struct store_series_key k = { "app", "master", 0, "j", "", "ops",
		"higher" };
	struct store_change_point cp = { 0, 0, 0, 1, 2, 100, 0.01,
		"regression" };
	struct err e = { 0 };
	int64_t h = 0, tree = 0, series = 0, seq = 0, pair = 0, cand = 0, cid;
	int64_t ids[2], ats[2];
	size_t n = 0;

	unlink(p);
	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	ASSERT(store_host_register(s, &h, "r1", "[]", "{}", 1) == 0);
	ASSERT(store_tree_sync(s, &tree, "app", "file:///x") == 0);
	k.host_id = h;
	{
		struct store_job_new c = job_cand;

		ASSERT(store_commit_stub(s, &cid, tree,
		           "1111111111111111111111111111111111111111") == 0);
		c.commit_id = cid;
		ASSERT(store_pair_create(s, &pair, NULL, &cand, "j", "",
		           &job_base, &c, 1) == 0);
	}
	ASSERT(store_history_append(
	           s, &series, &seq, &k, pair, cand, 0, 5, 2) == 0);
	ASSERT(store_changepoints_replace(s, series, 0, &cp, 1, 3) == 0);
	ASSERT(store_bisect_cp_candidates(s, ids, ats, &n, 0, 0, 2) == 0);
	ASSERT_INTEQ(n, 1);
	ASSERT(store_bisect_src_cp(s, &src, ids[0]) == 0);
	ASSERT(src.good_sha == NULL);
	ASSERT(src.bad_sha != NULL);
	store_bisect_src_release(&src);
	store_close(s);
	free(p);
}

/* Bisections a page at a time, newest first (GET /api/v1/bisect). */
TEST(test_store_bisect__list_pages)
{
	SKIP_ON_PG("rows made with the sqlite3 command-line tool");

	char *p = test_store_at("list.db");
	struct store *s = NULL;
	struct err e = { 0 };
	struct store_bisects l;

	unlink(p);
	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	store_close(s);
	ASSERT(sqlite_cli(p,
	           "INSERT INTO bisections (id, origin, pair_id, job, metric,"
	           " good_sha, bad_sha, state, steps_limit, created, updated)"
	           " VALUES (3, 'change-point', 1, 'j', 'ops', 'a', 'b',"
	           " 'done', 8, 1, 1), (9, 'change-point', 1, 'j', 'ops', 'c',"
	           " 'd', 'done', 8, 2, 2), (12, 'change-point', 1, 'j',"
	           " 'ops', 'e', 'f', 'queued', 8, 3, 3);") == 0);
	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	ASSERT(store_bisect_list(s, &l, 2, 0) == 0);
	ASSERT_INTEQ(l.n, 2);
	ASSERT_INTEQ(l.v[0].id, 12);
	ASSERT_INTEQ(l.v[1].id, 9);
	ASSERT_INTEQ(l.next_cursor, 9);
	store_bisects_release(&l);
	/* The cursor is the last id of the page before. */
	ASSERT(store_bisect_list(s, &l, 2, 9) == 0);
	ASSERT_INTEQ(l.n, 1);
	ASSERT_INTEQ(l.v[0].id, 3);
	ASSERT_INTEQ(l.next_cursor, 0);
	store_bisects_release(&l);
	ASSERT(store_bisect_list(s, &l, 2, 3) == 0);
	ASSERT_INTEQ(l.n, 0);
	store_bisects_release(&l);
	store_close(s);
	free(p);
}
