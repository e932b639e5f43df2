/*
 * The store: all SQL of perfwatch.  See store.h for the rules.
 */
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/xalloc.h"
#include "daemon/store.h"
#include "daemon/store_alert.h"
#include "daemon/store_bisect.h"
#include "daemon/store_int.h"

const char *const store_job_states[5] = { "queued", "running", "success",
	"failed", "cancelled" };

/*
 * Schema migrations, one step per version: migrations[v] takes a database
 * at user_version v to v + 1.  Never edit a step that has shipped; add a
 * new one.
 */
static const char *const migrations[] = {
	/* v1: the base schema. */
	"CREATE TABLE trees ("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT NOT NULL UNIQUE,"
	"  url TEXT NOT NULL,"
	"  last_fetch INTEGER,"
	"  last_error TEXT);"
	"CREATE TABLE tree_branches ("
	"  tree_id INTEGER NOT NULL REFERENCES trees(id) ON DELETE CASCADE,"
	"  branch TEXT NOT NULL,"
	"  tip TEXT,"
	"  updated INTEGER,"
	"  PRIMARY KEY (tree_id, branch));"
	"CREATE TABLE commits ("
	"  id INTEGER PRIMARY KEY,"
	"  tree_id INTEGER NOT NULL REFERENCES trees(id),"
	"  sha TEXT NOT NULL,"
	"  parents TEXT NOT NULL DEFAULT '',"
	"  author TEXT, author_date INTEGER,"
	"  committer TEXT, commit_date INTEGER,"
	"  subject TEXT,"
	"  touches INTEGER NOT NULL DEFAULT 0,"
	"  branches TEXT NOT NULL DEFAULT '',"
	"  UNIQUE (tree_id, sha));"
	"CREATE TABLE series ("
	"  id INTEGER PRIMARY KEY,"
	"  inbox TEXT NOT NULL,"
	"  message_id TEXT NOT NULL UNIQUE,"
	"  title TEXT, version INTEGER, total INTEGER,"
	"  author TEXT, date INTEGER,"
	"  base_sha TEXT,"
	"  commit_id INTEGER REFERENCES commits(id),"
	"  state TEXT NOT NULL DEFAULT 'new',"
	"  error TEXT);"
	"CREATE TABLE hosts ("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT NOT NULL UNIQUE,"
	"  labels TEXT NOT NULL DEFAULT '[]',"
	"  inventory TEXT NOT NULL DEFAULT '{}',"
	"  registered INTEGER NOT NULL,"
	"  last_seen INTEGER NOT NULL);"
	"CREATE TABLE pairs ("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT NOT NULL,"
	"  point TEXT NOT NULL DEFAULT '',"
	"  host_id INTEGER REFERENCES hosts(id),"
	"  created INTEGER NOT NULL);"
	"CREATE TABLE jobs ("
	"  id INTEGER PRIMARY KEY,"
	"  pair_id INTEGER REFERENCES pairs(id),"
	"  role TEXT NOT NULL CHECK (role IN ('base', 'candidate')),"
	"  name TEXT NOT NULL,"
	"  point TEXT NOT NULL DEFAULT '',"
	"  params TEXT NOT NULL DEFAULT '{}',"
	"  labels TEXT NOT NULL DEFAULT '[]',"
	"  commit_id INTEGER REFERENCES commits(id),"
	"  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN"
	"    ('queued', 'running', 'success', 'failed', 'cancelled')),"
	"  host_id INTEGER REFERENCES hosts(id),"
	"  lease_owner INTEGER REFERENCES hosts(id),"
	"  lease_expires INTEGER,"
	"  attempts INTEGER NOT NULL DEFAULT 0,"
	"  max_attempts INTEGER NOT NULL DEFAULT 3,"
	"  runs INTEGER NOT NULL,"
	"  max_runs INTEGER NOT NULL,"
	"  progress TEXT,"
	"  error TEXT,"
	"  created INTEGER NOT NULL,"
	"  updated INTEGER NOT NULL);"
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY,"
	"  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  host_id INTEGER REFERENCES hosts(id),"
	"  attempt INTEGER NOT NULL DEFAULT 0,"
	"  status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),"
	"  duration_s REAL,"
	"  error TEXT,"
	"  created INTEGER NOT NULL,"
	"  UNIQUE (job_id, idx));"
	"CREATE TABLE metrics ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  name TEXT NOT NULL,"
	"  value REAL NOT NULL,"
	"  unit TEXT NOT NULL DEFAULT '',"
	"  better TEXT NOT NULL CHECK (better IN ('higher', 'lower')),"
	"  PRIMARY KEY (run_id, name)) WITHOUT ROWID;"
	"CREATE TABLE raw_outputs ("
	"  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,"
	"  data BLOB NOT NULL,"
	"  size INTEGER NOT NULL,"
	"  truncated INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE job_logs ("
	"  id INTEGER PRIMARY KEY,"
	"  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	"  created INTEGER NOT NULL,"
	"  text TEXT NOT NULL);"
	"CREATE TABLE comparisons ("
	"  id INTEGER PRIMARY KEY,"
	"  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,"
	"  metric TEXT NOT NULL,"
	"  base_median REAL, cand_median REAL,"
	"  change_pct REAL, ci_low REAL, ci_high REAL, p REAL,"
	"  verdict TEXT NOT NULL CHECK (verdict IN ('regression',"
	"    'improvement', 'unchanged', 'inconclusive', 'unstable')),"
	"  created INTEGER NOT NULL,"
	"  UNIQUE (pair_id, metric));"
	"CREATE TABLE regressions ("
	"  id INTEGER PRIMARY KEY,"
	"  comparison_id INTEGER NOT NULL UNIQUE"
	"    REFERENCES comparisons(id) ON DELETE CASCADE,"
	"  state TEXT NOT NULL DEFAULT 'new' CHECK (state IN"
	"    ('new', 'acknowledged', 'invalid', 'fixed')),"
	"  note TEXT,"
	"  created INTEGER NOT NULL,"
	"  updated INTEGER NOT NULL);"
	"CREATE TABLE alerts ("
	"  id INTEGER PRIMARY KEY,"
	"  kind TEXT NOT NULL,"
	"  key TEXT NOT NULL UNIQUE,"
	"  payload TEXT NOT NULL,"
	"  attempts INTEGER NOT NULL DEFAULT 0,"
	"  next_try INTEGER NOT NULL DEFAULT 0,"
	"  sent INTEGER,"
	"  last_error TEXT,"
	"  created INTEGER NOT NULL);",

	/* v2: indexes for the scheduler's and the read API's hot queries,
	 * and a per-job log size so the log cap is one lookup. */
	"CREATE INDEX jobs_state ON jobs(state, id);"
	"CREATE INDEX jobs_pair ON jobs(pair_id);"
	"CREATE INDEX jobs_lease ON jobs(lease_expires)"
	"  WHERE state = 'running';"
	"CREATE INDEX job_logs_job ON job_logs(job_id, id);"
	"CREATE INDEX alerts_pending ON alerts(next_try) WHERE sent IS NULL;"
	"ALTER TABLE jobs ADD COLUMN log_bytes INTEGER NOT NULL DEFAULT 0;",

	/*
	 * v3 (watch & triggers): a tree's fetch state and backoff, a
	 * branch's state and rewrites, the configured paths a commit
	 * touches, and pairs that name their two jobs, so that a base job
	 * can be shared by several pairs (baseline reuse): jobs.pair_id
	 * stays the pair that created the job, pairs.base_job_id and
	 * pairs.cand_job_id are the pair's two sides.  Pairs made by a
	 * trigger remember tree and branch (coalescing) and may be pinned
	 * to the host they were made for.
	 */
	"ALTER TABLE trees ADD COLUMN last_ok INTEGER;"
	"ALTER TABLE trees ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE trees ADD COLUMN next_fetch INTEGER;"
	"ALTER TABLE tree_branches ADD COLUMN state TEXT NOT NULL"
	"  DEFAULT 'ok';"
	"ALTER TABLE tree_branches ADD COLUMN error TEXT;"
	"ALTER TABLE tree_branches ADD COLUMN rewrites INTEGER NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE tree_branches ADD COLUMN last_rewrite TEXT;"
	"ALTER TABLE commits ADD COLUMN paths TEXT NOT NULL DEFAULT '[]';"
	"ALTER TABLE commits ADD COLUMN first_seen INTEGER;"
	"ALTER TABLE pairs ADD COLUMN base_job_id INTEGER"
	"  REFERENCES jobs(id);"
	"ALTER TABLE pairs ADD COLUMN cand_job_id INTEGER"
	"  REFERENCES jobs(id);"
	"ALTER TABLE pairs ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE pairs ADD COLUMN tree_id INTEGER REFERENCES trees(id);"
	"ALTER TABLE pairs ADD COLUMN branch TEXT;"
	"ALTER TABLE pairs ADD COLUMN tip_only INTEGER NOT NULL DEFAULT 0;"
	"UPDATE pairs SET"
	"  base_job_id = (SELECT min(id) FROM jobs"
	"    WHERE pair_id = pairs.id AND role = 'base'),"
	"  cand_job_id = (SELECT min(id) FROM jobs"
	"    WHERE pair_id = pairs.id AND role = 'candidate');"
	"CREATE INDEX pairs_base_job ON pairs(base_job_id);"
	"CREATE INDEX pairs_cand_job ON pairs(cand_job_id);"
	"CREATE INDEX pairs_branch ON pairs(tree_id, branch, name)"
	"  WHERE tree_id IS NOT NULL;"
	"CREATE INDEX jobs_commit ON jobs(commit_id);"
	"CREATE INDEX commits_sha ON commits(sha);",

	/* v4 (memcg): informational metrics (memcg telemetry, better
	 * 'info': stored and shown, never judged) and the profiled run's
	 * blob.  SQLite cannot change a CHECK: the table is rebuilt. */
	"CREATE TABLE metrics_v4 ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  name TEXT NOT NULL,"
	"  value REAL NOT NULL,"
	"  unit TEXT NOT NULL DEFAULT '',"
	"  better TEXT NOT NULL CHECK (better IN ('higher', 'lower', 'info')),"
	"  PRIMARY KEY (run_id, name)) WITHOUT ROWID;"
	"INSERT INTO metrics_v4 SELECT run_id, name, value, unit, better"
	"  FROM metrics;"
	"DROP TABLE metrics;"
	"ALTER TABLE metrics_v4 RENAME TO metrics;"
	"ALTER TABLE runs ADD COLUMN profile TEXT;",

	/*
	 * v5 (verdict): comparisons say what a verdict was made of and may
	 * be interim (more runs requested) or 'info' (a metric that is shown,
	 * never judged).  SQLite cannot change a CHECK, so comparisons is
	 * rebuilt; regressions, which references it, is copied aside first
	 * so dropping the old table cascades into nothing.  Pairs get an
	 * analysed flag (pending verdicts are found by a partial index);
	 * history series, their points and change points get tables.
	 */
	"CREATE TABLE comparisons_v3 ("
	"  id INTEGER PRIMARY KEY,"
	"  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,"
	"  metric TEXT NOT NULL,"
	"  base_median REAL, cand_median REAL,"
	"  change_pct REAL, ci_low REAL, ci_high REAL, p REAL,"
	"  verdict TEXT NOT NULL CHECK (verdict IN ('regression',"
	"    'improvement', 'unchanged', 'inconclusive', 'unstable',"
	"    'info')),"
	"  created INTEGER NOT NULL,"
	"  host_id INTEGER REFERENCES hosts(id),"
	"  job TEXT, point TEXT, unit TEXT, better TEXT,"
	"  n_base INTEGER, n_cand INTEGER,"
	"  p_adjusted REAL, min_effect REAL,"
	"  final INTEGER NOT NULL DEFAULT 1,"
	"  note TEXT,"
	"  updated INTEGER,"
	"  UNIQUE (pair_id, metric));"
	"INSERT INTO comparisons_v3 (id, pair_id, metric, base_median,"
	"  cand_median, change_pct, ci_low, ci_high, p, verdict, created,"
	"  updated)"
	"  SELECT id, pair_id, metric, base_median, cand_median, change_pct,"
	"  ci_low, ci_high, p, verdict, created, created FROM comparisons;"
	"CREATE TABLE regressions_old AS SELECT * FROM regressions;"
	"DROP TABLE regressions;"
	"DROP TABLE comparisons;"
	"ALTER TABLE comparisons_v3 RENAME TO comparisons;"
	"CREATE TABLE regressions ("
	"  id INTEGER PRIMARY KEY,"
	"  comparison_id INTEGER NOT NULL UNIQUE"
	"    REFERENCES comparisons(id) ON DELETE CASCADE,"
	"  state TEXT NOT NULL DEFAULT 'new' CHECK (state IN"
	"    ('new', 'acknowledged', 'invalid', 'fixed')),"
	"  note TEXT,"
	"  created INTEGER NOT NULL,"
	"  updated INTEGER NOT NULL);"
	"INSERT INTO regressions (id, comparison_id, state, note, created,"
	"  updated) SELECT id, comparison_id, state, note, created, updated"
	"  FROM regressions_old;"
	"DROP TABLE regressions_old;"
	"ALTER TABLE pairs ADD COLUMN analysed INTEGER NOT NULL DEFAULT 0;"
	"UPDATE pairs SET analysed = 1"
	"  WHERE id IN (SELECT pair_id FROM comparisons);"
	"CREATE INDEX pairs_unanalysed ON pairs(id) WHERE analysed = 0;"
	"CREATE INDEX jobs_name_point ON jobs(name, point, role, id);"
	"CREATE TABLE history_series ("
	"  id INTEGER PRIMARY KEY,"
	"  tree TEXT NOT NULL DEFAULT '',"
	"  branch TEXT NOT NULL DEFAULT '',"
	"  host_id INTEGER REFERENCES hosts(id),"
	"  job TEXT NOT NULL, point TEXT NOT NULL, metric TEXT NOT NULL,"
	"  better TEXT NOT NULL,"
	"  UNIQUE (job, point, metric, host_id, tree, branch));"
	"CREATE TABLE history_points ("
	"  series_id INTEGER NOT NULL"
	"    REFERENCES history_series(id) ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,"
	"  job_id INTEGER NOT NULL,"
	"  comparison_id INTEGER,"
	"  value REAL NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  PRIMARY KEY (series_id, seq),"
	"  UNIQUE (series_id, pair_id)) WITHOUT ROWID;"
	"CREATE TABLE change_points ("
	"  id INTEGER PRIMARY KEY,"
	"  series_id INTEGER NOT NULL"
	"    REFERENCES history_series(id) ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  lo_seq INTEGER NOT NULL, hi_seq INTEGER NOT NULL,"
	"  before REAL, after REAL, change_pct REAL, p REAL,"
	"  direction TEXT NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  UNIQUE (series_id, seq));",
	/*
	 * v6: patch series from mailing lists (daemon/series.c): a series
	 * knows the tree and branch it was applied to; each patch has a
	 * row with the synthetic commit made from it; each inbox keeps the
	 * last archive commit the watcher read.
	 */
	"ALTER TABLE series ADD COLUMN tree_id INTEGER REFERENCES trees(id);"
	"ALTER TABLE series ADD COLUMN branch TEXT;"
	"ALTER TABLE series ADD COLUMN ref TEXT;"
	"ALTER TABLE series ADD COLUMN found INTEGER;"
	"ALTER TABLE series ADD COLUMN created INTEGER;"
	"ALTER TABLE series ADD COLUMN updated INTEGER;"
	"CREATE TABLE series_patches ("
	"  series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,"
	"  seq INTEGER NOT NULL,"
	"  message_id TEXT NOT NULL,"
	"  subject TEXT,"
	"  author TEXT,"
	"  date INTEGER,"
	"  commit_id INTEGER REFERENCES commits(id),"
	"  PRIMARY KEY (series_id, seq)) WITHOUT ROWID;"
	"CREATE INDEX series_commit ON series(commit_id);"
	"CREATE TABLE inbox_state ("
	"  name TEXT PRIMARY KEY,"
	"  url TEXT,"
	"  last_commit TEXT,"
	"  last_poll INTEGER,"
	"  last_error TEXT,"
	"  messages INTEGER NOT NULL DEFAULT 0);",

	/*
	 * v7: trigger.coalesce: deprioritise.  A superseded pair stays
	 * queued but is claimed after every pair that is not.
	 */
	"ALTER TABLE pairs ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0;",

	/*
	 * v8 (series): the subject's branch tag, the version a series
	 * supersedes, which patches needed `git am --3way`, and uploads
	 * waiting for the watcher to apply them (daemon/store_series2.c).
	 */
	"ALTER TABLE series ADD COLUMN branch_tag TEXT;"
	"ALTER TABLE series ADD COLUMN supersedes INTEGER"
	"  REFERENCES series(id) ON DELETE SET NULL;"
	"ALTER TABLE series ADD COLUMN fallback TEXT;"
	"ALTER TABLE series_patches ADD COLUMN applied_by TEXT;"
	"CREATE INDEX series_supersedes ON series(supersedes);"
	"CREATE TABLE series_queue ("
	"  id INTEGER PRIMARY KEY,"
	"  tree TEXT NOT NULL,"
	"  branch TEXT NOT NULL,"
	"  mbox BLOB NOT NULL,"
	"  created INTEGER NOT NULL);",
	/* v9: alerts (daemon/store_alert.c, docs/ALERTS.md). */
	STORE_ALERT_MIGRATION,

	/*
	 * v10 (fleet, daemon/store_fleet.c): explicit sibling groups.  The
	 * pairs of one submit or trigger that differ only in the cgroup
	 * axis share pairs.sib_group (the id of the group's first pair);
	 * the claim binds a group to one host and the memcg tax looks
	 * inside it.  Older pairs keep what the old rule (same name and
	 * creation time) made of them.
	 */
	"ALTER TABLE pairs ADD COLUMN sib_group INTEGER;"
	"UPDATE pairs SET sib_group = g.first FROM (SELECT name, created,"
	"  min(id) AS first FROM pairs GROUP BY name, created) g"
	"  WHERE g.name = pairs.name AND g.created = pairs.created;"
	"CREATE INDEX pairs_sib_group ON pairs(sib_group);",

	/*
	 * v11 (fleet): history in commit order.  A commit's first-parent
	 * position (its first parent's plus one; 0 when the parent was
	 * never recorded) orders the points of a history series whatever
	 * order their verdicts came in.  Older commits and points have
	 * none (NULL) and keep their place.
	 */
	"ALTER TABLE commits ADD COLUMN fp_pos INTEGER;"
	"ALTER TABLE history_points ADD COLUMN pos INTEGER;",

	/*
	 * v12 (fleet): patch mail waiting for the rest of its series, per
	 * inbox, as read from the archive (the raw message), so a daemon
	 * restart does not lose a half-arrived series.
	 */
	"CREATE TABLE inbox_pending ("
	"  seq INTEGER PRIMARY KEY,"
	"  inbox TEXT NOT NULL,"
	"  sha TEXT NOT NULL,"
	"  data BLOB NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  UNIQUE (inbox, sha));",

	/*
	 * v13: bench host hygiene (docs/HOST.md).  Each run's host state
	 * (compact JSON from the runner); a pair whose two sides ran under
	 * different host states is suspect, with the differences as text.
	 */
	("ALTER TABLE runs ADD COLUMN host_state TEXT;"
	 "ALTER TABLE pairs ADD COLUMN suspect TEXT;"),

	/*
	 * v14: the canary (daemon/canary.c, docs/HOST.md).  A canary pair
	 * is an A/A pair of a host's reference job on its own kernel
	 * (canary 1: not judged yet, 2: judged); a host a canary found
	 * drifting is quarantined (the reason and when) and claims only
	 * canary jobs until an operator clears it.
	 */
	("ALTER TABLE pairs ADD COLUMN canary INTEGER NOT NULL DEFAULT 0;"
	 "CREATE INDEX pairs_canary ON pairs(host_id, id) WHERE canary <> 0;"
	 "ALTER TABLE hosts ADD COLUMN quarantined TEXT;"
	 "ALTER TABLE hosts ADD COLUMN quarantined_at INTEGER;"),

	/* v15: bisections (daemon/store_bisect.c, daemon/bisect.c). */
	STORE_BISECT_MIGRATION,

	/* v16: bisections from history change points, suspect steps. */
	STORE_BISECT_MIGRATION_V16,
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == STORE_VERSION,
    "STORE_VERSION must match the migration steps");

/*
 * Writers of all connections in this process take this lock around
 * BEGIN IMMEDIATE ... COMMIT.  SQLite would serialise them anyway, but
 * its busy handler sleeps in steps of milliseconds; a lock of our own
 * hands the write lock over at once.  busy_timeout still covers other
 * processes.  Urgent writers (a claim, a heartbeat: a runner waits on
 * them, and a lost heartbeat loses a lease) go before waiting uploads:
 * under a stream of uploads from many runners a plain mutex let a claim
 * wait behind dozens of them (issue 12: claim p99 71-99 ms).
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int busy;   /* a writer holds it */
	int urgent; /* urgent writers waiting */
} write_lock = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };

static void
wlock(int urgent)
{
	pthread_mutex_lock(&write_lock.mu);
	write_lock.urgent += urgent;
	while (write_lock.busy || (!urgent && write_lock.urgent > 0))
		pthread_cond_wait(&write_lock.cv, &write_lock.mu);
	write_lock.urgent -= urgent;
	write_lock.busy = 1;
	pthread_mutex_unlock(&write_lock.mu);
}

static void
wunlock(void)
{
	pthread_mutex_lock(&write_lock.mu);
	write_lock.busy = 0;
	pthread_cond_broadcast(&write_lock.cv);
	pthread_mutex_unlock(&write_lock.mu);
}

static int
dberr(struct store *s, const char *what)
{
	return err_set(&s->err, "sqlite: %s: %s (%d)", what,
	    sqlite3_errmsg(s->db), sqlite3_extended_errcode(s->db));
}

static int
exec(struct store *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		err_set(&s->err, "sqlite: %s", msg ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static sqlite3_stmt *
prep(struct store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		dberr(s, "prepare");
		return NULL;
	}
	return st;
}

/* A cached statement, reset and unbound. */
static sqlite3_stmt *
cached(struct store *s, enum stmt_slot slot, const char *sql)
{
	if (s->st[slot] == NULL)
		return s->st[slot] = prep(s, sql);
	sqlite3_reset(s->st[slot]);
	sqlite3_clear_bindings(s->st[slot]);
	return s->st[slot];
}

static void
bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v == NULL)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
}

static const char *
col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? (const char *)t : NULL;
}

/* Steps a statement expected to finish without rows; 0 or -1. */
static int
step_done(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return dberr(s, what);
	return 0;
}

/* For the entity files of the store (store_int.h). */
sqlite3 *
store_db_(struct store *s)
{
	return s->db;
}

struct err *
store_err_(struct store *s)
{
	return &s->err;
}

/* ---- transactions ---- */

static int
tx_begin_as(struct store *s, int urgent)
{
	if (s->in_tx)
		return 0;
	wlock(urgent);
	if (exec(s, "BEGIN IMMEDIATE") == -1) {
		wunlock();
		return -1;
	}
	s->have_wlk = 1;
	return 0;
}

static int
tx_begin(struct store *s)
{
	return tx_begin_as(s, 0);
}

static int
tx_end(struct store *s, int ok)
{
	int r = 0;

	if (s->in_tx)
		return ok ? 0 : -1;
	if (ok && exec(s, "COMMIT") == -1)
		ok = 0;
	if (!ok) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		r = -1;
	}
	s->have_wlk = 0;
	wunlock();
	return r;
}

/* For the other store files (store_int.h). */
int
store_i_dberr(struct store *s, const char *what)
{
	return dberr(s, what);
}

sqlite3_stmt *
store_i_prep(struct store *s, const char *sql)
{
	return prep(s, sql);
}

void
store_i_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	bind_text(st, i, v);
}

char *
store_i_col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? xstrdup((const char *)t) : NULL;
}

double
store_i_col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL
	    ? NAN
	    : sqlite3_column_double(st, i);
}

int
store_i_step_done(struct store *s, sqlite3_stmt *st, const char *what)
{
	return step_done(s, st, what);
}

int
store_i_tx_begin(struct store *s)
{
	return tx_begin(s);
}

int
store_i_tx_end(struct store *s, int ok)
{
	return tx_end(s, ok);
}

int
store_begin(struct store *s)
{
	if (tx_begin(s) == -1)
		return -1;
	s->in_tx = 1;
	return 0;
}

int
store_commit(struct store *s)
{
	s->in_tx = 0;
	return tx_end(s, 1);
}

void
store_rollback(struct store *s)
{
	s->in_tx = 0;
	tx_end(s, 0);
}

/* ---- open, migrate ---- */

int
store_user_version(struct store *s)
{
	sqlite3_stmt *st = prep(s, "PRAGMA user_version");
	int v = -1;

	if (st == NULL)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/*
 * After a migration step that rebuilt a table: a row whose reference
 * is gone fails the upgrade, naming the table (foreign keys are off
 * while migrating, so a rebuild's DROP TABLE cascades nothing).
 */
static int
fk_check(struct store *s)
{
	sqlite3_stmt *st = prep(s, "PRAGMA foreign_key_check");
	int rc;

	if (st == NULL)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		err_set(&s->err,
		    "migration: table %s row %lld refers to a missing row of "
		    "%s",
		    (const char *)sqlite3_column_text(st, 0),
		    (long long)sqlite3_column_int64(st, 1),
		    (const char *)sqlite3_column_text(st, 2));
	else if (rc != SQLITE_DONE)
		dberr(s, "foreign key check");
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int
migrate_tx(struct store *s, int target)
{
	char q[64];
	int v, from;

	if (tx_begin(s) == -1)
		return -1;
	/* Read inside the write transaction: two processes opening a new
	 * file at once must not both run step 1. */
	if ((v = store_user_version(s)) < 0)
		return tx_end(s, 0);
	if (v > STORE_VERSION) {
		err_set(&s->err,
		    "database schema version %d is newer than this "
		    "perfwatchd (%d)",
		    v, STORE_VERSION);
		return tx_end(s, 0);
	}
	for (from = v; v < target; v++) {
		if (exec(s, migrations[v]) == -1)
			return tx_end(s, 0);
		snprintf(q, sizeof(q), "PRAGMA user_version = %d", v + 1);
		if (exec(s, q) == -1)
			return tx_end(s, 0);
	}
	if (from < target && fk_check(s) != 0)
		return tx_end(s, 0);
	return tx_end(s, 1);
}

/*
 * Migrations run with foreign keys off (the pragma is a no-op inside a
 * transaction, so around it): SQLite's way to rebuild a table that other
 * tables refer to (v16).
 */
static int
migrate(struct store *s, int target)
{
	int r;

	if (exec(s, "PRAGMA foreign_keys = OFF") == -1)
		return -1;
	r = migrate_tx(s, target);
	if (exec(s, "PRAGMA foreign_keys = ON") == -1)
		return -1;
	return r;
}

int
store_open_version(
    struct store **out, const char *path, int version, struct err *e)
{
	struct store *s = xcalloc(1, sizeof(*s));
	int flags =
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;

	*out = NULL;
	if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
		err_set(e, "%s: %s", path,
		    s->db ? sqlite3_errmsg(s->db) : "cannot open");
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 5000);
	if (exec(s,
	        "PRAGMA journal_mode = WAL;"
	        "PRAGMA synchronous = NORMAL;"
	        "PRAGMA foreign_keys = ON;") == -1 ||
	    migrate(s, version) == -1) {
		err_set(e, "%s: %s", path, err_msg(&s->err));
		goto fail;
	}
	s->version = version;
	*out = s;
	return 0;
fail:
	store_close(s);
	return -1;
}

int
store_open(struct store **out, const char *path, struct err *e)
{
	return store_open_version(out, path, STORE_VERSION, e);
}

void
store_close(struct store *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < S_NSLOTS; i++)
		sqlite3_finalize(s->st[i]);
	store_i_groups_free(s);
	if (s->in_tx || s->have_wlk) {
		s->in_tx = 0;
		tx_end(s, 0);
	}
	sqlite3_close(s->db);
	free(s);
}

int
store_set_autocheckpoint(struct store *s, int pages)
{
	sqlite3_wal_autocheckpoint(s->db, pages);
	return 0;
}

int
store_checkpoint(struct store *s)
{
	int log = 0, done = 0, rc;

	/* Copy what can be copied without blocking anyone... */
	if (sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
	        &log, &done) != SQLITE_OK)
		return dberr(s, "checkpoint");
	if (log < 2000)
		return 0;
	/* ...then, when the WAL has grown past ~8 MB, restart it while
	 * holding the writers' lock: writers that never pause would
	 * otherwise keep it growing.  Little is left to copy by now. */
	wlock(0);
	rc = sqlite3_wal_checkpoint_v2(
	    s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
	wunlock();
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		return dberr(s, "checkpoint");
	return 0;
}

const char *
store_errmsg(const struct store *s)
{
	return err_msg(&s->err);
}

void
store_errclear(struct store *s)
{
	err_clear(&s->err);
}

/* ---- hosts ---- */

int
store_host_register(struct store *s, int64_t *out_id, const char *name,
    const char *labels_json, const char *inventory_json, int64_t now)
{
	sqlite3_stmt *st;
	int ok = 0;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "INSERT INTO hosts (name, labels, inventory, registered,"
	    " last_seen) VALUES (?1, json(?2), json(?3), ?4, ?4)"
	    " ON CONFLICT (name) DO UPDATE SET labels = excluded.labels,"
	    " inventory = excluded.inventory, registered = excluded.registered,"
	    " last_seen = excluded.last_seen RETURNING id");
	if (st != NULL) {
		bind_text(st, 1, name);
		bind_text(st, 2, labels_json);
		bind_text(st, 3, inventory_json);
		sqlite3_bind_int64(st, 4, now);
		if (sqlite3_step(st) == SQLITE_ROW) {
			*out_id = sqlite3_column_int64(st, 0);
			ok = 1;
		} else {
			dberr(s, "register host");
		}
		sqlite3_finalize(st);
	}
	return tx_end(s, ok);
}

int
store_host_id(struct store *s, int64_t *out_id, const char *name)
{
	sqlite3_stmt *st =
	    cached(s, S_HOST_ID, "SELECT id FROM hosts WHERE name = ?1");
	int r = ERR_NOTFOUND;

	if (st == NULL)
		return -1;
	bind_text(st, 1, name);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*out_id = sqlite3_column_int64(st, 0);
		r = 0;
	} else {
		err_set(&s->err, "host '%s' is not registered", name);
	}
	sqlite3_reset(st);
	return r;
}

int
store_host_seen(struct store *s, int64_t host_id, int64_t now)
{
	sqlite3_stmt *st;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = cached(
	    s, S_HOST_SEEN, "UPDATE hosts SET last_seen = ?2 WHERE id = ?1");
	ok = st != NULL;
	if (ok) {
		sqlite3_bind_int64(st, 1, host_id);
		sqlite3_bind_int64(st, 2, now);
		ok = step_done(s, st, "host seen") == 0;
		sqlite3_reset(st);
	}
	return tx_end(s, ok);
}

/* ---- pairs ---- */

static int
job_insert(struct store *s, int64_t *out, int64_t pair, const char *name,
    const char *point, const struct store_job_new *j, int64_t now)
{
	sqlite3_stmt *st = prep(s,
	    "INSERT INTO jobs (pair_id, role, name, point, params, labels,"
	    " max_attempts, runs, max_runs, created, updated, commit_id)"
	    " VALUES (?1, ?2, ?3, ?4, json(?5), json(?6), ?7, ?8, ?9, ?10,"
	    " ?10, ?11)");
	int r = -1;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair);
	bind_text(st, 2, j->role);
	bind_text(st, 3, name);
	bind_text(st, 4, point ? point : "");
	bind_text(st, 5, j->spec_json);
	bind_text(st, 6, j->labels_json ? j->labels_json : "[]");
	sqlite3_bind_int64(st, 7, j->max_attempts);
	sqlite3_bind_int64(st, 8, j->runs);
	sqlite3_bind_int64(st, 9, j->max_runs);
	sqlite3_bind_int64(st, 10, now);
	if (j->commit_id > 0)
		sqlite3_bind_int64(st, 11, j->commit_id);
	if (sqlite3_step(st) == SQLITE_DONE) {
		*out = sqlite3_last_insert_rowid(s->db);
		r = 0;
	} else {
		dberr(s, "insert job");
	}
	sqlite3_finalize(st);
	return r;
}

/* Records which jobs are the pair's base and candidate. */
static int
pair_sides(struct store *s, int64_t pair, int64_t base, int64_t cand)
{
	sqlite3_stmt *st = prep(s,
	    "UPDATE pairs SET base_job_id = ?2, cand_job_id = ?3"
	    " WHERE id = ?1");
	int r;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair);
	sqlite3_bind_int64(st, 2, base);
	sqlite3_bind_int64(st, 3, cand);
	r = step_done(s, st, "pair sides");
	sqlite3_finalize(st);
	return r;
}

int
store_pair_create(struct store *s, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, const char *name, const char *point,
    const struct store_job_new *base, const struct store_job_new *cand,
    int64_t now)
{
	sqlite3_stmt *st;
	int64_t pair = 0, b = 0, c = 0;
	int ok = 0;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(
	    s, "INSERT INTO pairs (name, point, created) VALUES (?1, ?2, ?3)");
	if (st != NULL) {
		bind_text(st, 1, name);
		bind_text(st, 2, point ? point : "");
		sqlite3_bind_int64(st, 3, now);
		if (sqlite3_step(st) == SQLITE_DONE) {
			pair = sqlite3_last_insert_rowid(s->db);
			ok = 1;
		} else {
			dberr(s, "insert pair");
		}
		sqlite3_finalize(st);
	}
	ok = ok && job_insert(s, &b, pair, name, point, base, now) == 0 &&
	    job_insert(s, &c, pair, name, point, cand, now) == 0 &&
	    pair_sides(s, pair, b, c) == 0 &&
	    store_i_group_assign(s, pair) == 0;
	if (tx_end(s, ok) == -1)
		return -1;
	if (out_pair)
		*out_pair = pair;
	if (out_base)
		*out_base = b;
	if (out_cand)
		*out_cand = c;
	return 0;
}

/* ---- claim and leases ---- */

/* The claim reply for job id; called inside the claim transaction. */
static int
claim_reply(struct store *s, json_t **out, int64_t id)
{
	sqlite3_stmt *st;
	json_t *job = NULL, *done;
	int64_t expires = 0;
	struct err je = { 0 };
	const char *spec;

	st = prep(s,
	    "SELECT params, pair_id, role, attempts, lease_expires, runs,"
	    " max_runs FROM jobs WHERE id = ?1");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return dberr(s, "claimed job");
	}
	spec = col_text(st, 0);
	job = pwjson_parse(spec, strlen(spec), &je);
	if (!json_is_object(job)) {
		json_decref(job);
		job = json_object();
	}
	json_object_set_new(job, "id", json_integer(id));
	json_object_set_new(
	    job, "pair_id", json_integer(sqlite3_column_int64(st, 1)));
	json_object_set_new(job, "role", json_string(col_text(st, 2)));
	json_object_set_new(
	    job, "attempt", json_integer(sqlite3_column_int64(st, 3)));
	json_object_set_new(
	    job, "runs", json_integer(sqlite3_column_int64(st, 5)));
	json_object_set_new(
	    job, "max_runs", json_integer(sqlite3_column_int64(st, 6)));
	expires = sqlite3_column_int64(st, 4);
	sqlite3_finalize(st);

	done = json_array();
	st = prep(s, "SELECT idx FROM runs WHERE job_id = ?1 ORDER BY idx");
	if (st == NULL) {
		json_decref(job);
		json_decref(done);
		return -1;
	}
	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(
		    done, json_integer(sqlite3_column_int64(st, 0)));
	sqlite3_finalize(st);
	json_object_set_new(job, "done_runs", done);
	*out = json_pack(
	    "{s:o, s:I}", "job", job, "lease_expires", (json_int_t)expires);
	return 0;
}

int
store_claim(struct store *s, json_t **out, int64_t host_id, int64_t now,
    int64_t lease_s)
{
	sqlite3_stmt *st;
	int64_t id = 0;
	int rc, ok = 1, found = 0;

	*out = NULL;
	if (tx_begin_as(s, 1) == -1)
		return -1;
	/* A job this host still holds: its runner restarted and lost it. */
	st = prep(s,
	    "SELECT j.id FROM jobs j WHERE j.state = 'running'"
	    " AND j.lease_owner = ?1 ORDER BY j.id LIMIT 1");
	ok = st != NULL;
	if (ok) {
		sqlite3_bind_int64(st, 1, host_id);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			id = sqlite3_column_int64(st, 0);
			found = 1;
		} else if (rc != SQLITE_DONE) {
			ok = dberr(s, "claim held") == 0;
		}
		sqlite3_finalize(st);
	}
	if (ok && !found) {
		st = prep(s,
		    "SELECT j.id FROM jobs j JOIN pairs p ON p.id = j.pair_id"
		    " JOIN hosts h ON h.id = ?1"
		    " WHERE j.state = 'queued'"
		    " AND (p.host_id IS NULL OR p.host_id = ?1)"
		    /* a quarantined host measures only its canary */
		    " AND (h.quarantined IS NULL OR p.canary <> 0)"
		    " AND (json_array_length(j.labels) = 0 OR EXISTS"
		    "  (SELECT 1 FROM json_each(j.labels) jl,"
		    "   json_each(h.labels) hl WHERE jl.value = hl.value)"
		    "  OR EXISTS (SELECT 1 FROM json_each(j.labels) jn"
		    "   WHERE jn.value = h.name))"
		    " ORDER BY p.host_id IS NULL, p.superseded, j.pair_id,"
		    " j.role <> 'base', j.id LIMIT 1");
		ok = st != NULL;
		if (ok) {
			sqlite3_bind_int64(st, 1, host_id);
			if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
				id = sqlite3_column_int64(st, 0);
				found = 1;
			} else if (rc != SQLITE_DONE) {
				ok = dberr(s, "claim select") == 0;
			}
			sqlite3_finalize(st);
		}
	}
	if (ok && found) {
		st = prep(s,
		    "UPDATE jobs SET state = 'running', host_id = ?2,"
		    " lease_owner = ?2, lease_expires = ?3,"
		    " attempts = attempts + 1, progress = NULL, updated = ?4"
		    " WHERE id = ?1");
		ok = st != NULL;
		if (ok) {
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_int64(st, 2, host_id);
			sqlite3_bind_int64(st, 3, now + lease_s);
			sqlite3_bind_int64(st, 4, now);
			ok = step_done(s, st, "claim update") == 0;
			sqlite3_finalize(st);
		}
		if (ok) {
			st = prep(s,
			    "UPDATE pairs SET host_id = ?2 WHERE id ="
			    " (SELECT pair_id FROM jobs WHERE id = ?1)");
			ok = st != NULL;
			if (ok) {
				sqlite3_bind_int64(st, 1, id);
				sqlite3_bind_int64(st, 2, host_id);
				ok = step_done(s, st, "bind pair") == 0;
				sqlite3_finalize(st);
			}
		}
		if (ok) {
			/*
			 * The unbound pairs of its sibling group (the points
			 * of one candidate that differ only in the cgroup,
			 * store_fleet.h) go to the same host, so the memcg
			 * tax divides nested by root runs of one machine.
			 */
			st = prep(s,
			    "UPDATE pairs SET host_id = ?2 WHERE host_id IS "
			    "NULL AND pinned = 0 AND sib_group = (SELECT"
			    " q.sib_group FROM pairs q JOIN jobs j"
			    " ON j.pair_id = q.id WHERE j.id = ?1)");
			ok = st != NULL;
			if (ok) {
				sqlite3_bind_int64(st, 1, id);
				sqlite3_bind_int64(st, 2, host_id);
				ok = step_done(s, st, "bind siblings") == 0;
				sqlite3_finalize(st);
			}
		}
		ok = ok && claim_reply(s, out, id) == 0;
	}
	if (tx_end(s, ok) == -1) {
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	if (!found)
		return ERR_NOTFOUND;
	return 0;
}

int
store_requeue_expired(struct store *s, int64_t now, int *out_n)
{
	sqlite3_stmt *sel, *st;
	int ok, n = 0, rc;

	if (out_n)
		*out_n = 0;
	if (tx_begin(s) == -1)
		return -1;
	sel = prep(s,
	    "SELECT j.id, j.attempts, j.max_attempts, j.pair_id,"
	    " (SELECT count(*) FROM jobs o WHERE o.pair_id = j.pair_id"
	    "   AND o.id <> j.id AND (o.state = 'running' OR EXISTS"
	    "   (SELECT 1 FROM runs r WHERE r.job_id = o.id)))"
	    " + (SELECT count(*) FROM pairs p WHERE p.id = j.pair_id"
	    "   AND p.pinned <> 0)"
	    " FROM jobs j WHERE j.state = 'running' AND j.lease_expires < ?1");
	ok = sel != NULL;
	if (ok)
		sqlite3_bind_int64(sel, 1, now);
	while (ok && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(sel, 0);
		int64_t att = sqlite3_column_int64(sel, 1);
		int64_t max = sqlite3_column_int64(sel, 2);
		int64_t pair = sqlite3_column_int64(sel, 3);
		int64_t partner_busy = sqlite3_column_int64(sel, 4);

		n++;
		if (att >= max) {
			char msg[64];

			snprintf(msg, sizeof(msg), "lease expired %lld times",
			    (long long)att);
			st = prep(s,
			    "UPDATE jobs SET state = 'failed', error = ?2,"
			    " lease_owner = NULL, lease_expires = NULL,"
			    " updated = ?3 WHERE id = ?1");
			if ((ok = st != NULL)) {
				sqlite3_bind_int64(st, 1, id);
				bind_text(st, 2, msg);
				sqlite3_bind_int64(st, 3, now);
				ok = step_done(s, st, "fail job") == 0;
				sqlite3_finalize(st);
			}
			continue;
		}
		st = prep(s,
		    "UPDATE jobs SET state = 'queued', lease_owner = NULL,"
		    " lease_expires = NULL, progress = NULL, updated = ?2"
		    " WHERE id = ?1");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_int64(st, 2, now);
			ok = step_done(s, st, "requeue job") == 0;
			sqlite3_finalize(st);
		}
		if (!ok || partner_busy)
			continue;
		/* Nothing ties the pair to that host any more: release it
		 * and drop what the dead host measured for this job, since
		 * both sides of a pair must come from one host. */
		st = prep(s, "UPDATE pairs SET host_id = NULL WHERE id = ?1");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, pair);
			ok = step_done(s, st, "release pair") == 0;
			sqlite3_finalize(st);
		}
		/* Siblings bound with it that have not started go too. */
		st = ok ? prep(s,
		              "UPDATE pairs SET host_id = NULL WHERE pinned = 0"
		              " AND host_id IS NOT NULL AND sib_group ="
		              " (SELECT sib_group FROM pairs WHERE id = ?1)"
		              " AND NOT EXISTS (SELECT 1 FROM jobs j"
		              "  WHERE j.pair_id = pairs.id AND (j.state <> "
		              "'queued'"
		              "  OR EXISTS (SELECT 1 FROM runs r"
		              "   WHERE r.job_id = j.id)))")
		        : NULL;
		if (ok && (ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, pair);
			ok = step_done(s, st, "release siblings") == 0;
			sqlite3_finalize(st);
		}
		st = ok ? prep(s, "DELETE FROM runs WHERE job_id = ?1") : NULL;
		if (ok && (ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, id);
			ok = step_done(s, st, "discard runs") == 0;
			sqlite3_finalize(st);
		}
	}
	if (ok && rc != SQLITE_DONE)
		ok = dberr(s, "expired leases") == 0;
	sqlite3_finalize(sel);
	if (tx_end(s, ok) == -1)
		return -1;
	if (out_n)
		*out_n = n;
	return 0;
}

/*
 * Loads what a runner call needs about a job, inside a transaction:
 * 0, ERR_NOTFOUND, or ERR_CONFLICT when host does not hold its lease
 * (host_id 0 skips that check).
 */
static int
job_lease(struct store *s, int64_t *out_max_runs, int64_t *out_attempt,
    int64_t job_id, int64_t host_id)
{
	sqlite3_stmt *st = cached(s, S_JOB_LEASE,
	    "SELECT state, lease_owner, max_runs, attempts FROM jobs"
	    " WHERE id = ?1");
	const char *state;
	int64_t owner;
	int r = 0;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_reset(st);
		return err_setc(&s->err, ERR_NOTFOUND, "job %lld not found",
		    (long long)job_id);
	}
	state = col_text(st, 0);
	owner = sqlite3_column_int64(st, 1);
	if (out_max_runs)
		*out_max_runs = sqlite3_column_int64(st, 2);
	if (out_attempt)
		*out_attempt = sqlite3_column_int64(st, 3);
	if (host_id != 0 && (strcmp(state, "running") != 0 || owner != host_id))
		r = err_setc(&s->err, ERR_CONFLICT,
		    "job %lld is %s and not leased to this runner",
		    (long long)job_id, state);
	sqlite3_reset(st);
	return r;
}

int
store_heartbeat(struct store *s, int64_t *out_expires, int64_t *out_runs,
    int64_t host_id, int64_t job_id, const char *progress, int64_t now,
    int64_t lease_s)
{
	sqlite3_stmt *st;
	int r = 0, ok = 1;

	if (tx_begin_as(s, 1) == -1)
		return -1;
	st = cached(
	    s, S_HOST_SEEN, "UPDATE hosts SET last_seen = ?2 WHERE id = ?1");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, host_id);
		sqlite3_bind_int64(st, 2, now);
		ok = step_done(s, st, "host seen") == 0;
		sqlite3_reset(st);
	}
	if (ok && job_id != 0) {
		r = job_lease(s, NULL, NULL, job_id, host_id);
		ok = r != -1;
	}
	if (ok && job_id != 0 && r == 0) {
		st = cached(s, S_HEARTBEAT,
		    "UPDATE jobs SET lease_expires = ?2,"
		    " progress = coalesce(?3, progress), updated = ?4"
		    " WHERE id = ?1 RETURNING lease_expires, runs");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, job_id);
			sqlite3_bind_int64(st, 2, now + lease_s);
			bind_text(st, 3, progress);
			sqlite3_bind_int64(st, 4, now);
			if (sqlite3_step(st) == SQLITE_ROW) {
				*out_expires = sqlite3_column_int64(st, 0);
				*out_runs = sqlite3_column_int64(st, 1);
			} else {
				ok = dberr(s, "heartbeat") == 0;
			}
			sqlite3_reset(st);
		}
	}
	/* A lost lease still commits last_seen. */
	if (tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_run_add(
    struct store *s, int64_t host_id, const struct store_run *run, int64_t now)
{
	sqlite3_stmt *st;
	int64_t max_runs = 0, attempt = 0, run_id = 0;
	size_t i, rawlen;
	int r, ok, rc;

	if (tx_begin(s) == -1)
		return -1;
	/* One lookup: existence, range and lease.  The range is checked
	 * first, so a bad index is a 400 even without the lease. */
	r = job_lease(s, &max_runs, &attempt, run->job_id, host_id);
	ok = r != -1;
	/* Index max_runs is the profiled run's slot (docs/MEMCG.md). */
	if ((r == 0 || r == ERR_CONFLICT) &&
	    (run->index < 0 || run->index > max_runs ||
	        (run->index == max_runs && run->profile == NULL))) {
		err_clear(&s->err);
		r = err_setc(&s->err, ERR_INVALID,
		    "field 'index': %lld is outside [0, %lld)%s",
		    (long long)run->index, (long long)max_runs,
		    run->profile ? " and is not the profile slot" : "");
	}
	if (r == 0 || r == ERR_CONFLICT) {
		st = cached(s, S_RUN_INSERT,
		    "INSERT INTO runs (job_id, idx, host_id, attempt, status,"
		    " duration_s, error, created, profile, host_state)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
		    " ON CONFLICT (job_id, idx) DO NOTHING RETURNING id");
		ok = st != NULL;
		if (ok && r == 0) {
			sqlite3_bind_int64(st, 1, run->job_id);
			sqlite3_bind_int64(st, 2, run->index);
			sqlite3_bind_int64(st, 3, host_id);
			sqlite3_bind_int64(st, 4, attempt);
			bind_text(st, 5, run->status);
			if (run->duration_s >= 0)
				sqlite3_bind_double(st, 6, run->duration_s);
			bind_text(st, 7, run->error);
			sqlite3_bind_int64(st, 8, now);
			bind_text(st, 9, run->profile);
			bind_text(st, 10, run->host_state);
			rc = sqlite3_step(st);
			if (rc == SQLITE_ROW)
				run_id = sqlite3_column_int64(st, 0);
			else if (rc == SQLITE_DONE)
				r = err_setc(&s->err, ERR_EXISTS,
				    "run %lld of job %lld is already stored",
				    (long long)run->index,
				    (long long)run->job_id);
			else
				ok = dberr(s, "insert run") == 0;
			sqlite3_reset(st);
		}
		if (ok && r == ERR_CONFLICT) {
			/* Stored already from this host?  Then it is a
			 * repeat, not a conflict.  The same index measured
			 * by another host (the job was requeued away from
			 * this one) stays a conflict: this run is refused. */
			sqlite3_stmt *q = prep(s,
			    "SELECT 1 FROM runs WHERE job_id = ?1 AND idx = "
			    "?2 AND host_id IS ?3");

			if ((ok = q != NULL)) {
				sqlite3_bind_int64(q, 1, run->job_id);
				sqlite3_bind_int64(q, 2, run->index);
				sqlite3_bind_int64(q, 3, host_id);
				if (sqlite3_step(q) == SQLITE_ROW) {
					err_clear(&s->err);
					r = err_setc(&s->err, ERR_EXISTS,
					    "run %lld of job %lld is already "
					    "stored",
					    (long long)run->index,
					    (long long)run->job_id);
				}
				sqlite3_finalize(q);
			}
		}
	}
	for (i = 0; ok && r == 0 && i < run->nmetrics; i++) {
		const struct store_metric *m = &run->metrics[i];

		st = cached(s, S_METRIC_INSERT,
		    "INSERT INTO metrics (run_id, name, value, unit, better)"
		    " VALUES (?1, ?2, ?3, ?4, ?5)");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, run_id);
			bind_text(st, 2, m->name);
			sqlite3_bind_double(st, 3, m->value);
			bind_text(st, 4, m->unit ? m->unit : "");
			bind_text(st, 5, m->better);
			rc = sqlite3_step(st);
			if ((rc & 0xff) == SQLITE_CONSTRAINT)
				r = err_setc(&s->err, ERR_INVALID,
				    "field 'metrics[%zu]': duplicate or "
				    "invalid metric '%s'",
				    i, m->name);
			else if (rc != SQLITE_DONE)
				ok = dberr(s, "insert metric") == 0;
			sqlite3_reset(st);
		}
	}
	if (ok && r == 0 && run->raw != NULL) {
		rawlen = run->raw_len;
		if (rawlen > CAP_RAW_OUTPUT)
			rawlen = CAP_RAW_OUTPUT;
		st = cached(s, S_RAW_INSERT,
		    "INSERT INTO raw_outputs (run_id, data, size, truncated)"
		    " VALUES (?1, ?2, ?3, ?4)");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, run_id);
			sqlite3_bind_blob(
			    st, 2, run->raw, (int)rawlen, SQLITE_STATIC);
			sqlite3_bind_int64(st, 3, (int64_t)run->raw_len);
			sqlite3_bind_int(st, 4, rawlen < run->raw_len);
			ok = step_done(s, st, "insert raw output") == 0;
			sqlite3_reset(st);
		}
	}
	/* An expected refusal rolls back whatever was written. */
	if (tx_end(s, ok && r == 0) == -1 && r == 0)
		return -1;
	return ok ? r : -1;
}

int
store_log_append(struct store *s, size_t *out_stored, int64_t host_id,
    int64_t job_id, const char *text, size_t len, int64_t now)
{
	static const char marker[] = "\n[log truncated]\n";
	sqlite3_stmt *st;
	int64_t have = 0;
	size_t keep = len;
	int r, ok;

	if (out_stored)
		*out_stored = 0;
	if (tx_begin(s) == -1)
		return -1;
	r = job_lease(s, NULL, NULL, job_id, host_id);
	ok = r != -1;
	if (ok && r == 0) {
		st = prep(s, "SELECT log_bytes FROM jobs WHERE id = ?1");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, job_id);
			if (sqlite3_step(st) == SQLITE_ROW)
				have = sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
		/* log_bytes CAP_JOB_LOG + 1 means "full, marker written". */
		if (have >= CAP_JOB_LOG)
			keep = 0;
		else if (keep > (size_t)(CAP_JOB_LOG - have))
			keep = (size_t)(CAP_JOB_LOG - have);
	}
	if (ok && r == 0 && have <= CAP_JOB_LOG) {
		int full = keep < len;

		st = prep(s,
		    "INSERT INTO job_logs (job_id, created, text)"
		    " VALUES (?1, ?2, ?3 || ?4)");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, job_id);
			sqlite3_bind_int64(st, 2, now);
			sqlite3_bind_text(
			    st, 3, text, (int)keep, SQLITE_TRANSIENT);
			sqlite3_bind_text(
			    st, 4, full ? marker : "", -1, SQLITE_STATIC);
			ok = step_done(s, st, "append log") == 0;
			sqlite3_finalize(st);
		}
		st = ok
		    ? prep(s, "UPDATE jobs SET log_bytes = ?2 WHERE id = ?1")
		    : NULL;
		if (ok && (ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, job_id);
			sqlite3_bind_int64(st, 2,
			    full ? CAP_JOB_LOG + 1 : have + (int64_t)keep);
			ok = step_done(s, st, "log size") == 0;
			sqlite3_finalize(st);
		}
	} else {
		keep = 0;
	}
	if (tx_end(s, ok) == -1)
		return -1;
	if (out_stored && r == 0)
		*out_stored = keep;
	return r;
}

/* Runs one UPDATE on job id with now bound as ?2. */
static int
job_update(
    struct store *s, int64_t id, int64_t now, const char *sql, const char *text)
{
	sqlite3_stmt *st = prep(s, sql);
	int r;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, now);
	if (text != NULL)
		bind_text(st, 3, text);
	r = step_done(s, st, "update job");
	sqlite3_finalize(st);
	return r;
}

int
store_finish(struct store *s, int64_t host_id, int64_t job_id, int ok_job,
    const char *error, int64_t now)
{
	int r, ok;

	if (tx_begin(s) == -1)
		return -1;
	r = job_lease(s, NULL, NULL, job_id, host_id);
	ok = r != -1;
	if (ok && r == 0)
		ok = job_update(s, job_id, now,
		         ok_job ? "UPDATE jobs SET state = 'success',"
		                  " lease_owner = NULL, lease_expires = NULL,"
		                  " error = NULL, updated = ?2 WHERE id = ?1"
		                : "UPDATE jobs SET state = 'failed',"
		                  " lease_owner = NULL, lease_expires = NULL,"
		                  " error = ?3, updated = ?2 WHERE id = ?1",
		         ok_job ? NULL : (error ? error : "failed")) == 0;
	if (tx_end(s, ok) == -1)
		return -1;
	return r;
}

/* The state of job id into buf, or ERR_NOTFOUND. */
static int
job_state(struct store *s, char *buf, size_t len, int64_t id)
{
	sqlite3_stmt *st = prep(s, "SELECT state FROM jobs WHERE id = ?1");
	int r;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		snprintf(buf, len, "%s", col_text(st, 0));
		r = 0;
	} else {
		r = err_setc(
		    &s->err, ERR_NOTFOUND, "job %lld not found", (long long)id);
	}
	sqlite3_finalize(st);
	return r;
}

int
store_cancel(struct store *s, int64_t job_id, int64_t now)
{
	char state[16];
	int r, ok;

	if (tx_begin(s) == -1)
		return -1;
	r = job_state(s, state, sizeof(state), job_id);
	ok = r != -1;
	if (r == 0 && strcmp(state, "queued") != 0 &&
	    strcmp(state, "running") != 0)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "job %lld is %s; only queued or running jobs can be "
		    "cancelled",
		    (long long)job_id, state);
	if (ok && r == 0)
		ok = job_update(s, job_id, now,
		         "UPDATE jobs SET state = 'cancelled',"
		         " lease_owner = NULL, lease_expires = NULL,"
		         " error = 'cancelled', updated = ?2 WHERE id = ?1",
		         NULL) == 0;
	if (tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_retry(struct store *s, int64_t job_id, int64_t now)
{
	char state[16];
	int r, ok;

	if (tx_begin(s) == -1)
		return -1;
	r = job_state(s, state, sizeof(state), job_id);
	ok = r != -1;
	if (r == 0 && strcmp(state, "failed") != 0 &&
	    strcmp(state, "cancelled") != 0)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "job %lld is %s; only failed or cancelled jobs can be "
		    "retried",
		    (long long)job_id, state);
	if (ok && r == 0)
		ok = job_update(s, job_id, now,
		         "UPDATE jobs SET state = 'queued', attempts = 0,"
		         " lease_owner = NULL, lease_expires = NULL,"
		         " error = NULL, progress = NULL, updated = ?2"
		         " WHERE id = ?1",
		         NULL) == 0 &&
		    job_update(s, job_id, now,
		        "DELETE FROM runs WHERE job_id = ?1"
		        " AND status = 'failed' AND ?2 IS NOT NULL",
		        NULL) == 0;
	if (tx_end(s, ok) == -1)
		return -1;
	return r;
}

/* ---- reads ---- */

#define JOB_COLS                                                      \
	"j.id, j.pair_id, j.role, j.name, j.point, j.state, h.name,"  \
	" j.attempts, j.runs, (SELECT count(*) FROM runs r"           \
	" WHERE r.job_id = j.id AND r.idx < j.max_runs), j.progress," \
	" j.error, j.created,"                                        \
	" j.updated, j.lease_expires, j.max_runs, c.sha, t.name,"     \
	" c.subject "
#define JOB_FROM                                             \
	" FROM jobs j LEFT JOIN hosts h ON h.id = j.host_id" \
	" LEFT JOIN commits c ON c.id = j.commit_id"         \
	" LEFT JOIN trees t ON t.id = c.tree_id "

static json_t *
text_or_null(sqlite3_stmt *st, int i)
{
	const char *t = col_text(st, i);

	return t ? json_string(t) : json_null();
}

static json_t *
job_row(sqlite3_stmt *st)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(sqlite3_column_int64(st, 0)));
	json_object_set_new(o, "pair_id",
	    sqlite3_column_type(st, 1) == SQLITE_NULL
	        ? json_null()
	        : json_integer(sqlite3_column_int64(st, 1)));
	json_object_set_new(o, "role", text_or_null(st, 2));
	json_object_set_new(o, "name", text_or_null(st, 3));
	json_object_set_new(o, "point", text_or_null(st, 4));
	json_object_set_new(o, "state", text_or_null(st, 5));
	json_object_set_new(o, "host", text_or_null(st, 6));
	json_object_set_new(
	    o, "attempts", json_integer(sqlite3_column_int64(st, 7)));
	json_object_set_new(
	    o, "runs", json_integer(sqlite3_column_int64(st, 8)));
	json_object_set_new(
	    o, "runs_done", json_integer(sqlite3_column_int64(st, 9)));
	json_object_set_new(o, "progress", text_or_null(st, 10));
	json_object_set_new(o, "error", text_or_null(st, 11));
	json_object_set_new(
	    o, "created", json_integer(sqlite3_column_int64(st, 12)));
	json_object_set_new(
	    o, "updated", json_integer(sqlite3_column_int64(st, 13)));
	json_object_set_new(o, "lease_expires",
	    sqlite3_column_type(st, 14) == SQLITE_NULL
	        ? json_null()
	        : json_integer(sqlite3_column_int64(st, 14)));
	json_object_set_new(
	    o, "max_runs", json_integer(sqlite3_column_int64(st, 15)));
	/* What the job measures: a commit of a tree (null for a submitted
	 * pair without one). */
	json_object_set_new(o, "commit", text_or_null(st, 16));
	json_object_set_new(o, "tree", text_or_null(st, 17));
	json_object_set_new(o, "subject", text_or_null(st, 18));
	return o;
}

int
store_jobs_list(struct store *s, json_t **out, const char *state, int64_t limit,
    int64_t cursor)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT " JOB_COLS JOB_FROM
	    " WHERE (?1 IS NULL OR j.state = ?1) AND (?2 = 0 OR j.id < ?2)"
	    " ORDER BY j.id DESC LIMIT ?3");
	json_t *arr, *o;
	int64_t last = 0, n = 0;
	int rc;

	*out = NULL;
	if (st == NULL)
		return -1;
	bind_text(st, 1, state);
	sqlite3_bind_int64(st, 2, cursor);
	sqlite3_bind_int64(st, 3, limit);
	arr = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		last = sqlite3_column_int64(st, 0);
		n++;
		json_array_append_new(arr, job_row(st));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(arr);
		return dberr(s, "list jobs");
	}
	o = json_pack("{s:o}", "jobs", arr);
	if (n == limit && last > 1) {
		char c[32];

		snprintf(c, sizeof(c), "%lld", (long long)last);
		json_object_set_new(o, "next_cursor", json_string(c));
	}
	*out = o;
	return 0;
}

/* The job row for id, or NULL (ERR_NOTFOUND in *r). */
static json_t *
job_one(struct store *s, int64_t id, int *r)
{
	sqlite3_stmt *st =
	    prep(s, "SELECT " JOB_COLS JOB_FROM "WHERE j.id = ?1");
	json_t *o = NULL;
	int rc;

	*r = -1;
	if (st == NULL)
		return NULL;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		o = job_row(st);
		*r = 0;
	} else if (rc == SQLITE_DONE) {
		*r = err_setc(
		    &s->err, ERR_NOTFOUND, "job %lld not found", (long long)id);
	} else {
		dberr(s, "job");
	}
	sqlite3_finalize(st);
	return o;
}

static int
job_runs(struct store *s, json_t *job, int64_t id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT r.id, r.idx, r.status, h.name, r.duration_s, r.error,"
	    " r.attempt, r.created, m.name, m.value, m.unit, m.better,"
	    " r.profile, r.host_state FROM runs r"
	    " LEFT JOIN hosts h ON h.id = r.host_id"
	    " LEFT JOIN metrics m ON m.run_id = r.id"
	    " WHERE r.job_id = ?1 ORDER BY r.idx, m.name");
	json_t *runs = json_array(), *run = NULL, *metrics = NULL;
	int64_t cur = -1;
	int rc;

	if (st == NULL) {
		json_decref(runs);
		return -1;
	}
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int64(st, 0) != cur) {
			cur = sqlite3_column_int64(st, 0);
			metrics = json_array();
			run = json_object();
			json_object_set_new(run, "index",
			    json_integer(sqlite3_column_int64(st, 1)));
			json_object_set_new(run, "status", text_or_null(st, 2));
			json_object_set_new(run, "host", text_or_null(st, 3));
			json_object_set_new(run, "duration_s",
			    sqlite3_column_type(st, 4) == SQLITE_NULL
			        ? json_null()
			        : json_real(sqlite3_column_double(st, 4)));
			json_object_set_new(run, "error", text_or_null(st, 5));
			json_object_set_new(run, "attempt",
			    json_integer(sqlite3_column_int64(st, 6)));
			json_object_set_new(run, "created",
			    json_integer(sqlite3_column_int64(st, 7)));
			json_object_set_new(run, "metrics", metrics);
			if (sqlite3_column_type(st, 12) != SQLITE_NULL) {
				const char *pj = col_text(st, 12);
				json_t *pv = pwjson_parse(pj, strlen(pj), NULL);

				json_object_set_new(
				    run, "profile", pv ? pv : json_string(pj));
			}
			if (sqlite3_column_type(st, 13) != SQLITE_NULL) {
				const char *hj = col_text(st, 13);
				json_t *hv = pwjson_parse(hj, strlen(hj), NULL);

				json_object_set_new(run, "host_state",
				    hv ? hv : json_string(hj));
			}
			json_array_append_new(runs, run);
		}
		if (sqlite3_column_type(st, 8) != SQLITE_NULL)
			json_array_append_new(metrics,
			    json_pack("{s:s, s:f, s:s, s:s}", "name",
			        col_text(st, 8), "value",
			        sqlite3_column_double(st, 9), "unit",
			        col_text(st, 10), "better", col_text(st, 11)));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(runs);
		return dberr(s, "runs");
	}
	json_object_set_new(job, "runs_list", runs);
	return 0;
}

/* The last bytes of the job log (the tail a reader wants). */
static int
job_log_tail(struct store *s, json_t *job, int64_t id)
{
	sqlite3_stmt *st = prep(
	    s, "SELECT text FROM job_logs WHERE job_id = ?1 ORDER BY id DESC");
	struct buf b = BUF_INIT(CAP_JOB_LOG);
	char **parts = NULL;
	size_t n = 0, total = 0, i;
	const size_t tail = 64 * 1024;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	while (total < tail && sqlite3_step(st) == SQLITE_ROW) {
		const char *t = col_text(st, 0);

		parts = xreallocarray(parts, n + 1, sizeof(*parts));
		parts[n++] = xstrdup(t ? t : "");
		total += strlen(parts[n - 1]);
	}
	sqlite3_finalize(st);
	for (i = n; i > 0; i--) {
		buf_puts(&b, parts[i - 1]);
		free(parts[i - 1]);
	}
	free(parts);
	i = b.len > tail ? b.len - tail : 0;
	/* Start on a UTF-8 character boundary. */
	while (i < b.len && ((unsigned char)b.data[i] & 0xc0) == 0x80)
		i++;
	json_object_set_new(job, "log", json_stringn(b.data + i, b.len - i));
	if (json_object_get(job, "log") == NULL)
		json_object_set_new(job, "log", json_string(""));
	buf_release(&b);
	return 0;
}

int
store_job_get(struct store *s, json_t **out, int64_t job_id)
{
	json_t *o;
	int r;

	*out = NULL;
	if ((o = job_one(s, job_id, &r)) == NULL)
		return r;
	if (job_runs(s, o, job_id) == -1 || job_log_tail(s, o, job_id) == -1) {
		json_decref(o);
		return -1;
	}
	/* "runs" stays the wanted count, as in the list; the run objects
	 * go under "runs" only in this view, as docs/API.md says. */
	json_object_set(o, "runs_wanted", json_object_get(o, "runs"));
	json_object_set(o, "runs", json_object_get(o, "runs_list"));
	json_object_del(o, "runs_list");
	*out = o;
	return 0;
}

int
store_run_raw(struct store *s, struct buf *b, int64_t job_id, int64_t idx)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT x.data FROM runs r JOIN raw_outputs x ON x.run_id = r.id"
	    " WHERE r.job_id = ?1 AND r.idx = ?2");
	int r = 0;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, idx);
	if (sqlite3_step(st) == SQLITE_ROW)
		buf_add(b, sqlite3_column_blob(st, 0),
		    (size_t)sqlite3_column_bytes(st, 0));
	else
		r = err_setc(&s->err, ERR_NOTFOUND,
		    "job %lld has no raw output for run %lld",
		    (long long)job_id, (long long)idx);
	sqlite3_finalize(st);
	return r;
}

static json_t *
json_text(const char *t, json_t *dflt)
{
	struct err e = { 0 };
	json_t *v = t ? pwjson_parse(t, strlen(t), &e) : NULL;

	if (v == NULL)
		return dflt;
	json_decref(dflt);
	return v;
}

int
store_hosts_list(struct store *s, json_t **out, int64_t limit, int64_t cursor,
    int64_t now, int64_t online_s)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT h.id, h.name, h.labels, h.inventory, h.last_seen,"
	    " (SELECT j.id FROM jobs j WHERE j.lease_owner = h.id"
	    "  AND j.state = 'running' LIMIT 1), h.registered,"
	    " h.quarantined, h.quarantined_at"
	    " FROM hosts h WHERE h.id > ?1 ORDER BY h.id LIMIT ?2");
	json_t *arr, *o;
	int64_t last = 0, n = 0;
	int rc;

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, cursor);
	sqlite3_bind_int64(st, 2, limit);
	arr = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t seen = sqlite3_column_int64(st, 4);

		last = sqlite3_column_int64(st, 0);
		n++;
		o = json_object();
		json_object_set_new(o, "id", json_integer(last));
		json_object_set_new(o, "name", text_or_null(st, 1));
		json_object_set_new(
		    o, "labels", json_text(col_text(st, 2), json_array()));
		json_object_set_new(
		    o, "inventory", json_text(col_text(st, 3), json_object()));
		json_object_set_new(o, "state",
		    json_string(seen >= now - online_s ? "online" : "offline"));
		json_object_set_new(o, "current_job",
		    sqlite3_column_type(st, 5) == SQLITE_NULL
		        ? json_null()
		        : json_integer(sqlite3_column_int64(st, 5)));
		json_object_set_new(o, "last_seen", json_integer(seen));
		json_object_set_new(
		    o, "registered", json_integer(sqlite3_column_int64(st, 6)));
		/* docs/HOST.md: a canary found the host drifting. */
		json_object_set_new(o, "quarantined", text_or_null(st, 7));
		json_object_set_new(o, "quarantined_at",
		    sqlite3_column_type(st, 8) == SQLITE_NULL
		        ? json_null()
		        : json_integer(sqlite3_column_int64(st, 8)));
		json_array_append_new(arr, o);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(arr);
		return dberr(s, "list hosts");
	}
	o = json_pack("{s:o}", "hosts", arr);
	if (n == limit) {
		char c[32];

		snprintf(c, sizeof(c), "%lld", (long long)last);
		json_object_set_new(o, "next_cursor", json_string(c));
	}
	*out = o;
	return 0;
}

int
store_pair_get(struct store *s, json_t **out, int64_t pair_id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT p.name, p.point, h.name, p.created,"
	    " coalesce(p.base_job_id, (SELECT id FROM jobs"
	    "  WHERE pair_id = p.id AND role = 'base')),"
	    " coalesce(p.cand_job_id, (SELECT id FROM jobs"
	    "  WHERE pair_id = p.id AND role = 'candidate')),"
	    " p.superseded, p.suspect"
	    " FROM pairs p LEFT JOIN hosts h ON h.id = p.host_id"
	    " WHERE p.id = ?1");
	json_t *o, *cmp, *j;
	int64_t ids[2];
	int i, r;

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld not found",
		    (long long)pair_id);
	}
	o = json_object();
	json_object_set_new(o, "id", json_integer(pair_id));
	json_object_set_new(o, "name", text_or_null(st, 0));
	json_object_set_new(o, "point", text_or_null(st, 1));
	json_object_set_new(o, "host", text_or_null(st, 2));
	json_object_set_new(
	    o, "deprioritised", json_boolean(sqlite3_column_int(st, 6) != 0));
	json_object_set_new(
	    o, "created", json_integer(sqlite3_column_int64(st, 3)));
	/* Host hygiene: why the two sides are not comparable, or null. */
	json_object_set_new(o, "suspect", text_or_null(st, 7));
	ids[0] = sqlite3_column_int64(st, 4);
	ids[1] = sqlite3_column_int64(st, 5);
	sqlite3_finalize(st);
	for (i = 0; i < 2; i++) {
		if ((j = job_one(s, ids[i], &r)) == NULL) {
			json_decref(o);
			return -1;
		}
		json_object_set_new(o, i == 0 ? "base" : "candidate", j);
	}
	st = prep(s,
	    "SELECT metric, base_median, cand_median, change_pct, ci_low,"
	    " ci_high, p, verdict, p_adjusted, min_effect, unit, better,"
	    " n_base, n_cand, final, note FROM comparisons WHERE pair_id = ?1"
	    " ORDER BY metric");
	if (st == NULL) {
		json_decref(o);
		return -1;
	}
	sqlite3_bind_int64(st, 1, pair_id);
	cmp = json_array();
	while (sqlite3_step(st) == SQLITE_ROW) {
		json_t *c = json_object();
		static const char *const k[] = { "base_median", "cand_median",
			"change_pct", "ci_low", "ci_high", "p" };

		json_object_set_new(c, "metric", text_or_null(st, 0));
		for (i = 0; i < 6; i++)
			json_object_set_new(c, k[i],
			    sqlite3_column_type(st, i + 1) == SQLITE_NULL
			        ? json_null()
			        : json_real(sqlite3_column_double(st, i + 1)));
		json_object_set_new(c, "verdict", text_or_null(st, 7));
		for (i = 0; i < 2; i++)
			json_object_set_new(c,
			    i == 0 ? "p_adjusted" : "min_effect_pct",
			    sqlite3_column_type(st, i + 8) == SQLITE_NULL
			        ? json_null()
			        : json_real(sqlite3_column_double(st, i + 8)));
		json_object_set_new(c, "unit", text_or_null(st, 10));
		json_object_set_new(c, "better", text_or_null(st, 11));
		for (i = 0; i < 2; i++)
			json_object_set_new(c, i == 0 ? "n_base" : "n_cand",
			    sqlite3_column_type(st, i + 12) == SQLITE_NULL
			        ? json_null()
			        : json_integer(
			              sqlite3_column_int64(st, i + 12)));
		json_object_set_new(
		    c, "final", json_boolean(sqlite3_column_int(st, 14)));
		json_object_set_new(c, "note", text_or_null(st, 15));
		json_array_append_new(cmp, c);
	}
	sqlite3_finalize(st);
	json_object_set_new(o, "comparisons", cmp);
	*out = o;
	return 0;
}

int
store_stats(
    struct store *s, struct store_stats *out, int64_t now, int64_t online_s)
{
	sqlite3_stmt *st;
	int i;

	memset(out, 0, sizeof(*out));
	st = prep(s, "SELECT state, count(*) FROM jobs GROUP BY state");
	if (st == NULL)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW)
		for (i = 0; i < 5; i++)
			if (strcmp(col_text(st, 0), store_job_states[i]) == 0)
				out->jobs[i] = sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
	st = prep(s,
	    "SELECT count(*), count(*) FILTER (WHERE last_seen >= ?1),"
	    " (SELECT count(*) FROM runs) FROM hosts");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, now - online_s);
	if (sqlite3_step(st) == SQLITE_ROW) {
		out->hosts = sqlite3_column_int64(st, 0);
		out->hosts_online = sqlite3_column_int64(st, 1);
		out->runs = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return 0;
}

/*
 * ---- dashboard reads and triage (web/, issue 7) ----
 * Kept in one block at the end to ease merges; see store.h.
 */

/*
 * A JSON string of untrusted text.  jansson refuses invalid UTF-8, so
 * such text is kept with each byte that is not part of a valid character
 * (and each NUL) replaced by '?'.
 */
static json_t *
web_string(const char *t, size_t n)
{
	json_t *v;
	char *c;
	size_t i;

	if (t == NULL)
		return json_null();
	if ((v = json_stringn(t, n)) != NULL)
		return v;
	c = xmalloc(n + 1);
	memcpy(c, t, n);
	c[n] = '\0';
	for (i = 0; i < n; i++) {
		json_t *one;
		size_t k = 1;

		if ((unsigned char)c[i] < 0x80) {
			if (c[i] == '\0')
				c[i] = '?';
			continue;
		}
		while (k < 4 && i + k < n &&
		    ((unsigned char)c[i + k] & 0xc0) == 0x80)
			k++;
		one = json_stringn(c + i, k);
		if (one == NULL)
			c[i] = '?';
		else
			i += k - 1;
		json_decref(one);
	}
	v = json_stringn(c, n);
	free(c);
	return v ? v : json_string("");
}

/* One row as an object keyed by the column names, typed as stored. */
static json_t *
web_row(sqlite3_stmt *st)
{
	json_t *o = json_object();
	int i, n = sqlite3_column_count(st);

	for (i = 0; i < n; i++) {
		json_t *v;

		switch (sqlite3_column_type(st, i)) {
		case SQLITE_INTEGER:
			v = json_integer(sqlite3_column_int64(st, i));
			break;
		case SQLITE_FLOAT:
			v = json_real(sqlite3_column_double(st, i));
			break;
		case SQLITE_NULL:
			v = json_null();
			break;
		default:
			v = web_string(col_text(st, i),
			    (size_t)sqlite3_column_bytes(st, i));
			break;
		}
		json_object_set_new(o, sqlite3_column_name(st, i), v);
	}
	return o;
}

/* Steps st to the end into *out = {"rows": [...]}; finalizes st. */
static int
web_rows(struct store *s, sqlite3_stmt *st, json_t **out, const char *what)
{
	json_t *arr = json_array();
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(arr, web_row(st));
	if (rc != SQLITE_DONE) {
		dberr(s, what);
		sqlite3_finalize(st);
		json_decref(arr);
		return -1;
	}
	sqlite3_finalize(st);
	*out = json_pack("{s:o}", "rows", arr);
	return 0;
}

int
store_web_recent(struct store *s, json_t **out, int64_t limit)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT j.id, j.pair_id, j.name, j.point, j.state, j.progress,"
	    " j.created, j.commit_id, c.sha, c.subject, c.author,"
	    " coalesce(c.commit_date, j.created) AS time, t.name AS tree,"
	    " c.branches, se.id AS series_id, se.title AS series_title,"
	    " b.state AS base_state, b.progress AS base_progress,"
	    " (SELECT group_concat(verdict) FROM comparisons"
	    "  WHERE pair_id = j.pair_id) AS verdicts"
	    " FROM jobs j"
	    " LEFT JOIN jobs b ON b.id ="
	    "  (SELECT base_job_id FROM pairs WHERE id = j.pair_id)"
	    " LEFT JOIN commits c ON c.id = j.commit_id"
	    " LEFT JOIN trees t ON t.id = c.tree_id"
	    " LEFT JOIN series se ON se.commit_id = j.commit_id"
	    " WHERE j.role = 'candidate' ORDER BY j.id DESC LIMIT ?1");

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, limit);
	return web_rows(s, st, out, "recent jobs");
}

int
store_web_regression_counts(struct store *s, json_t **out)
{
	sqlite3_stmt *st =
	    prep(s, "SELECT state, count(*) FROM regressions GROUP BY state");
	json_t *o;
	int rc;

	*out = NULL;
	if (st == NULL)
		return -1;
	o = json_pack("{s:i, s:i, s:i, s:i}", "new", 0, "acknowledged", 0,
	    "invalid", 0, "fixed", 0);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_set_new(o, col_text(st, 0),
		    json_integer(sqlite3_column_int64(st, 1)));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(o);
		return dberr(s, "regression counts");
	}
	*out = o;
	return 0;
}

/* Pair ids of candidate jobs on a commit, newest first. */
static json_t *
web_commit_pairs(struct store *s, int64_t commit_id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT DISTINCT pair_id FROM jobs WHERE commit_id = ?1"
	    " AND role = 'candidate' AND pair_id IS NOT NULL"
	    " ORDER BY pair_id DESC");
	json_t *arr;

	if (st == NULL)
		return NULL;
	sqlite3_bind_int64(st, 1, commit_id);
	arr = json_array();
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(
		    arr, json_integer(sqlite3_column_int64(st, 0)));
	sqlite3_finalize(st);
	return arr;
}

static int
web_hex(const char *sha)
{
	size_t n = strlen(sha);

	if (n < 4 || n > 64)
		return 0;
	return strspn(sha, "0123456789abcdef") == n;
}

int
store_web_commit(struct store *s, json_t **out, const char *sha)
{
	sqlite3_stmt *st;
	json_t *rows = NULL, *arr, *c, *pairs, *se = NULL;
	int64_t id;
	int r;

	*out = NULL;
	if (!web_hex(sha))
		return err_setc(&s->err, ERR_NOTFOUND,
		    "commit: expected 4 to 64 lowercase hex digits");
	st = prep(s,
	    "SELECT c.id, c.sha, c.subject, c.author,"
	    " coalesce(c.commit_date, c.author_date) AS time, t.name AS tree,"
	    " c.branches, c.parents FROM commits c"
	    " JOIN trees t ON t.id = c.tree_id"
	    " WHERE c.sha >= ?1 AND c.sha < ?1 || 'g' LIMIT 2");
	if (st == NULL)
		return -1;
	bind_text(st, 1, sha);
	if ((r = web_rows(s, st, &rows, "commit")) != 0)
		return r;
	arr = json_object_get(rows, "rows");
	if (json_array_size(arr) == 0) {
		json_decref(rows);
		return err_setc(
		    &s->err, ERR_NOTFOUND, "commit %s not found", sha);
	}
	if (json_array_size(arr) > 1) {
		json_decref(rows);
		return err_setc(&s->err, ERR_CONFLICT,
		    "commit prefix %s is ambiguous", sha);
	}
	c = json_incref(json_array_get(arr, 0));
	json_decref(rows);
	id = json_integer_value(json_object_get(c, "id"));
	if ((pairs = web_commit_pairs(s, id)) == NULL) {
		json_decref(c);
		return -1;
	}
	st = prep(s, "SELECT id, title FROM series WHERE commit_id = ?1");
	if (st != NULL) {
		sqlite3_bind_int64(st, 1, id);
		if (sqlite3_step(st) == SQLITE_ROW)
			se = web_row(st);
		sqlite3_finalize(st);
	}
	*out = json_pack("{s:o, s:o, s:o}", "commit", c, "pairs", pairs,
	    "series", se ? se : json_null());
	return 0;
}

static json_t *series_patches(struct store *, int64_t);

/* The pairs measuring a series' tip against its base (not the
 * every_patch pair of the last patch against the one before). */
static json_t *
series_tip_pairs(struct store *s, int64_t id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT DISTINCT p.id FROM series se"
	    " JOIN jobs cj ON cj.commit_id = se.commit_id"
	    "  AND cj.role = 'candidate'"
	    " JOIN pairs p ON p.cand_job_id = cj.id AND p.bisect_id IS NULL"
	    " JOIN jobs bj ON bj.id = p.base_job_id"
	    " LEFT JOIN commits bc ON bc.id = bj.commit_id"
	    " WHERE se.id = ?1 AND (se.base_sha IS NULL"
	    "  OR bc.sha = se.base_sha)"
	    " ORDER BY p.id DESC");
	json_t *arr;

	if (st == NULL)
		return NULL;
	sqlite3_bind_int64(st, 1, id);
	arr = json_array();
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(
		    arr, json_integer(sqlite3_column_int64(st, 0)));
	sqlite3_finalize(st);
	return arr;
}

int
store_web_series(struct store *s, json_t **out, int64_t id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT se.id, se.inbox, se.title, se.version, se.total,"
	    " se.author, se.date AS time, se.state, se.error,"
	    " se.commit_id, c.sha AS commit_sha, se.base_sha, se.branch,"
	    " se.found, t.name AS tree, se.branch_tag, se.supersedes,"
	    " se.fallback FROM series se"
	    " LEFT JOIN commits c ON c.id = se.commit_id"
	    " LEFT JOIN trees t ON t.id = se.tree_id WHERE se.id = ?1");
	json_t *o, *pairs, *patches;
	int64_t cid;

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return err_setc(&s->err, ERR_NOTFOUND, "series %lld not found",
		    (long long)id);
	}
	o = web_row(st);
	sqlite3_finalize(st);
	cid = json_integer_value(json_object_get(o, "commit_id"));
	pairs = cid ? series_tip_pairs(s, id) : json_array();
	if (pairs == NULL) {
		json_decref(o);
		return -1;
	}
	if ((patches = series_patches(s, id)) == NULL) {
		json_decref(o);
		json_decref(pairs);
		return -1;
	}
	*out = json_pack(
	    "{s:o, s:o, s:o}", "series", o, "pairs", pairs, "patches", patches);
	return 0;
}

int
store_web_pair_values(struct store *s, json_t **out, int64_t pair_id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT j.role, m.name AS metric, m.unit, m.better, m.value,"
	    " r.idx AS run FROM pairs p JOIN jobs j"
	    " ON j.id IN (p.base_job_id, p.cand_job_id)"
	    " JOIN runs r ON r.job_id = j.id"
	    " AND r.status = 'ok' JOIN metrics m ON m.run_id = r.id"
	    " WHERE p.id = ?1 ORDER BY m.name, j.role, r.idx");

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	return web_rows(s, st, out, "pair values");
}

int
store_web_history(struct store *s, json_t **out, const char *tree,
    const char *branch, const char *host, const char *job, const char *point,
    const char *metric, int64_t from, int64_t to, int64_t limit, int64_t cursor)
{
	/*
	 * The newest `limit` jobs that match go in the inner query, so the
	 * work is bounded by the page, not by the history's length.
	 */
	sqlite3_stmt *st = prep(s,
	    "WITH js AS (SELECT j.id, j.pair_id, j.role, j.commit_id,"
	    "  coalesce(c.commit_date, j.created) AS time, h.name AS host"
	    "  FROM jobs j LEFT JOIN commits c ON c.id = j.commit_id"
	    "  LEFT JOIN trees t ON t.id = c.tree_id"
	    "  LEFT JOIN pairs p ON p.id = j.pair_id"
	    "  LEFT JOIN hosts h ON h.id = p.host_id"
	    "  WHERE j.name = ?1 AND j.point = ?2"
	    "  AND (?3 IS NULL OR t.name = ?3)"
	    "  AND (?4 IS NULL OR instr(',' || c.branches || ',',"
	    "   ',' || ?4 || ',') > 0)"
	    "  AND (?5 IS NULL OR h.name = ?5)"
	    "  AND (?7 = 0 OR coalesce(c.commit_date, j.created) >= ?7)"
	    "  AND (?8 = 0 OR coalesce(c.commit_date, j.created) <= ?8)"
	    "  AND (?10 = 0 OR j.id < ?10)"
	    "  AND EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id"
	    "   AND r.status = 'ok')"
	    "  ORDER BY j.id DESC LIMIT ?9)"
	    " SELECT js.id AS job_id, js.pair_id, js.role, c.sha, c.subject,"
	    " js.time, js.host, m.value, m.unit, m.better,"
	    " (SELECT rg.state FROM comparisons cm JOIN regressions rg"
	    "  ON rg.comparison_id = cm.id WHERE cm.pair_id = js.pair_id"
	    "  AND cm.metric = ?6 AND js.role = 'candidate')"
	    "  AS regression"
	    " FROM js JOIN runs r ON r.job_id = js.id AND r.status = 'ok'"
	    " JOIN metrics m ON m.run_id = r.id AND m.name = ?6"
	    " LEFT JOIN commits c ON c.id = js.commit_id"
	    " ORDER BY js.time, js.id, r.idx");

	*out = NULL;
	if (st == NULL)
		return -1;
	bind_text(st, 1, job);
	bind_text(st, 2, point ? point : "");
	bind_text(st, 3, tree);
	bind_text(st, 4, branch);
	bind_text(st, 5, host);
	bind_text(st, 6, metric);
	sqlite3_bind_int64(st, 7, from);
	sqlite3_bind_int64(st, 8, to);
	sqlite3_bind_int64(st, 9, limit);
	sqlite3_bind_int64(st, 10, cursor);
	return web_rows(s, st, out, "history");
}

int
store_web_commit_time(struct store *s, int64_t *out, const char *sha)
{
	sqlite3_stmt *st;
	int r = 0;

	if (!web_hex(sha))
		return err_setc(&s->err, ERR_NOTFOUND,
		    "commit: expected 4 to 64 lowercase hex digits");
	st = prep(s,
	    "SELECT coalesce(commit_date, author_date) FROM commits"
	    " WHERE sha >= ?1 AND sha < ?1 || 'g' LIMIT 1");
	if (st == NULL)
		return -1;
	bind_text(st, 1, sha);
	if (sqlite3_step(st) == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else
		r = err_setc(&s->err, ERR_NOTFOUND, "commit %s not found", sha);
	sqlite3_finalize(st);
	return r;
}

int
store_web_regressions(struct store *s, json_t **out, const char *tree,
    const char *host, const char *bench, const char *state, int64_t limit,
    int64_t cursor)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT rg.id, rg.state, rg.note, rg.created, rg.updated,"
	    " cm.metric, cm.change_pct, cm.verdict, p.id AS pair_id,"
	    " p.name AS bench, p.point, h.name AS host, c.sha, c.subject,"
	    " t.name AS tree, c.branches,"
	    /* its newest bisection (daemon/store_bisect.c) */
	    " b.id AS bisect_id, b.state AS bisect_state,"
	    " b.culprit_sha AS culprit, (SELECT subject FROM commits"
	    "  WHERE tree_id = b.tree_id AND sha = b.culprit_sha)"
	    "  AS culprit_subject, b.verify_parent, b.verify_revert,"
	    " b.reason AS bisect_reason, p.suspect"
	    " FROM regressions rg JOIN comparisons cm ON cm.id = "
	    "rg.comparison_id"
	    " JOIN pairs p ON p.id = cm.pair_id"
	    " LEFT JOIN bisections b ON b.id = (SELECT max(id) FROM"
	    "  bisections WHERE regression_id = rg.id)"
	    " LEFT JOIN hosts h ON h.id = p.host_id"
	    " LEFT JOIN jobs j ON j.pair_id = p.id AND j.role = 'candidate'"
	    " LEFT JOIN commits c ON c.id = j.commit_id"
	    " LEFT JOIN trees t ON t.id = c.tree_id"
	    " WHERE (?1 IS NULL OR t.name = ?1) AND (?2 IS NULL OR h.name = ?2)"
	    " AND (?3 IS NULL OR p.name = ?3) AND (?4 IS NULL OR rg.state = ?4)"
	    " AND (?6 = 0 OR rg.id < ?6)"
	    " ORDER BY rg.id DESC LIMIT ?5");

	*out = NULL;
	if (st == NULL)
		return -1;
	bind_text(st, 1, tree);
	bind_text(st, 2, host);
	bind_text(st, 3, bench);
	bind_text(st, 4, state);
	sqlite3_bind_int64(st, 5, limit);
	sqlite3_bind_int64(st, 6, cursor);
	return web_rows(s, st, out, "regressions");
}

int
store_web_triage(struct store *s, int64_t id, const char *state,
    const char *note, int64_t now)
{
	static const char *const ok[] = { "new", "acknowledged", "invalid",
		"fixed" };
	sqlite3_stmt *st;
	size_t i;
	int r = 0;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (state && strcmp(state, ok[i]) == 0)
			break;
	if (i == sizeof(ok) / sizeof(ok[0]))
		return err_setc(&s->err, ERR_INVALID,
		    "state: expected new, acknowledged, invalid or fixed");
	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "UPDATE regressions SET state = ?2, note = coalesce(?3, note),"
	    " updated = ?4 WHERE id = ?1");
	if (st == NULL) {
		tx_end(s, 0);
		return -1;
	}
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, state);
	bind_text(st, 3, note);
	sqlite3_bind_int64(st, 4, now);
	if (step_done(s, st, "triage") == -1)
		r = -1;
	else if (sqlite3_changes(s->db) == 0)
		r = err_setc(&s->err, ERR_NOTFOUND, "regression %lld not found",
		    (long long)id);
	sqlite3_finalize(st);
	if (tx_end(s, r == 0) == -1 && r == 0)
		r = -1;
	return r;
}

int
store_web_ops(
    struct store *s, int64_t *out_alerts_pending, int64_t *out_fetch_errors)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT (SELECT count(*) FROM alerts WHERE state = 'pending'),"
	    " (SELECT count(*) FROM trees WHERE last_error IS NOT NULL)");

	*out_alerts_pending = *out_fetch_errors = 0;
	if (st == NULL)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*out_alerts_pending = sqlite3_column_int64(st, 0);
		*out_fetch_errors = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return 0;
}

/*
 * ---- verdicts (daemon/verdict.c) ----
 * Kept in one block at the end to ease merges; see store.h.
 */

static void
bind_num(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

int
store_verdict_pending(struct store *s, int64_t *out, size_t max, size_t *out_n)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT p.id FROM pairs p WHERE p.analysed = 0"
	    " AND (SELECT count(*) FROM jobs j WHERE j.id IN (p.base_job_id, "
	    "p.cand_job_id)"
	    "  AND j.state = 'success') = 2"
	    " ORDER BY p.id LIMIT ?1");
	size_t n = 0;
	int rc;

	*out_n = 0;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, (int64_t)max);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW)
		out[n++] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (n < max && rc != SQLITE_DONE)
		return dberr(s, "pending verdicts");
	*out_n = n;
	return 0;
}

int
store_verdict_pair(struct store *s, json_t **out, int64_t pair_id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT p.name, p.point, p.host_id, h.name, p.analysed, j.role,"
	    " j.id, j.state, j.runs, j.max_runs, j.params, t.name,"
	    " c.branches, (SELECT count(*) FROM runs r WHERE r.job_id = j.id)"
	    " FROM pairs p"
	    " LEFT JOIN hosts h ON h.id = p.host_id"
	    " JOIN jobs j ON j.id IN (p.base_job_id, p.cand_job_id)"
	    " LEFT JOIN commits c ON c.id = j.commit_id"
	    " LEFT JOIN trees t ON t.id = c.tree_id"
	    " WHERE p.id = ?1 ORDER BY j.id");
	json_t *o = NULL;
	int rc;

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *spec = col_text(st, 10);
		json_t *side = json_object();

		if (o == NULL) {
			o = json_object();
			json_object_set_new(
			    o, "pair_id", json_integer(pair_id));
			json_object_set_new(o, "name", text_or_null(st, 0));
			json_object_set_new(o, "point", text_or_null(st, 1));
			json_object_set_new(o, "host_id",
			    json_integer(sqlite3_column_int64(st, 2)));
			json_object_set_new(o, "host", text_or_null(st, 3));
			json_object_set_new(o, "analysed",
			    json_integer(sqlite3_column_int64(st, 4)));
		}
		json_object_set_new(
		    side, "id", json_integer(sqlite3_column_int64(st, 6)));
		json_object_set_new(side, "state", text_or_null(st, 7));
		json_object_set_new(
		    side, "runs", json_integer(sqlite3_column_int64(st, 8)));
		json_object_set_new(side, "max_runs",
		    json_integer(sqlite3_column_int64(st, 9)));
		json_object_set_new(
		    side, "spec", json_text(spec, json_object()));
		json_object_set_new(side, "tree", text_or_null(st, 11));
		json_object_set_new(side, "branches", text_or_null(st, 12));
		json_object_set_new(
		    side, "stored", json_integer(sqlite3_column_int64(st, 13)));
		json_object_set_new(o, col_text(st, 5), side);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(o);
		return dberr(s, "verdict pair");
	}
	if (o == NULL || json_object_get(o, "base") == NULL ||
	    json_object_get(o, "candidate") == NULL) {
		json_decref(o);
		return err_setc(&s->err, ERR_NOTFOUND,
		    "pair %lld not found or without both jobs",
		    (long long)pair_id);
	}
	*out = o;
	return 0;
}

int
store_verdict_values(struct store *s, json_t **out, int64_t pair_id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT j.role, m.name AS metric, m.unit, m.better, m.value,"
	    " r.idx AS run FROM jobs j JOIN runs r ON r.job_id = j.id"
	    " AND r.status = 'ok' AND r.idx < j.max_runs"
	    " JOIN metrics m ON m.run_id = r.id"
	    " WHERE j.id IN (SELECT base_job_id FROM pairs WHERE id = ?1"
	    " UNION ALL SELECT cand_job_id FROM pairs WHERE id = ?1)"
	    " ORDER BY m.name, j.role, r.idx");

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	return web_rows(s, st, out, "verdict values");
}

int
store_verdict_siblings(struct store *s, json_t **out, int64_t pair_id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT p.id AS pair_id, p.point, p.analysed,"
	    " b.params AS base_spec, c.params AS cand_spec"
	    " FROM pairs me JOIN pairs p"
	    "  ON p.sib_group = me.sib_group AND p.host_id = me.host_id"
	    " JOIN jobs b ON b.id = p.base_job_id"
	    " JOIN jobs c ON c.id = p.cand_job_id"
	    " WHERE me.id = ?1 ORDER BY p.id");

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	return web_rows(s, st, out, "memcg tax siblings");
}

int
store_verdict_history(
    struct store *s, json_t **out, int64_t pair_id, int64_t max_jobs)
{
	sqlite3_stmt *st = prep(s,
	    "WITH me AS (SELECT name, point, host_id FROM pairs"
	    "  WHERE id = ?1),"
	    " js AS (SELECT j.id FROM jobs j JOIN me"
	    "  ON j.name = me.name AND j.point = me.point"
	    "  JOIN pairs p ON p.id = j.pair_id AND p.host_id = me.host_id"
	    "  AND p.bisect_id IS NULL"
	    "  WHERE j.role = 'base' AND j.state = 'success'"
	    "  AND j.pair_id < ?1 ORDER BY j.id DESC LIMIT ?2)"
	    " SELECT m.name AS metric, js.id AS job, m.value FROM js"
	    " JOIN jobs j ON j.id = js.id"
	    " JOIN runs r ON r.job_id = js.id AND r.status = 'ok'"
	    "  AND r.idx < j.max_runs"
	    "  AND r.host_id = (SELECT host_id FROM me)"
	    " JOIN metrics m ON m.run_id = r.id"
	    " ORDER BY m.name, js.id, r.idx");

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	sqlite3_bind_int64(st, 2, max_jobs);
	return web_rows(s, st, out, "baseline history");
}

int
store_verdict_put(struct store *s, int64_t *out_id, int64_t pair_id,
    const struct store_comparison *c, int64_t now)
{
	sqlite3_stmt *st;
	int64_t id = 0;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "INSERT INTO comparisons (pair_id, metric, base_median,"
	    " cand_median, change_pct, ci_low, ci_high, p, verdict, created,"
	    " host_id, job, point, unit, better, n_base, n_cand, p_adjusted,"
	    " min_effect, final, note, updated)"
	    " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, p.host_id,"
	    " p.name, p.point, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?10"
	    " FROM pairs p WHERE p.id = ?1"
	    " ON CONFLICT (pair_id, metric) DO UPDATE SET"
	    " base_median = excluded.base_median,"
	    " cand_median = excluded.cand_median,"
	    " change_pct = excluded.change_pct, ci_low = excluded.ci_low,"
	    " ci_high = excluded.ci_high, p = excluded.p,"
	    " verdict = excluded.verdict, host_id = excluded.host_id,"
	    " job = excluded.job, point = excluded.point,"
	    " unit = excluded.unit, better = excluded.better,"
	    " n_base = excluded.n_base, n_cand = excluded.n_cand,"
	    " p_adjusted = excluded.p_adjusted,"
	    " min_effect = excluded.min_effect, final = excluded.final,"
	    " note = excluded.note, updated = excluded.updated"
	    " RETURNING id");
	ok = st != NULL;
	if (ok) {
		sqlite3_bind_int64(st, 1, pair_id);
		bind_text(st, 2, c->metric);
		bind_num(st, 3, c->base_median);
		bind_num(st, 4, c->cand_median);
		bind_num(st, 5, c->change_pct);
		bind_num(st, 6, c->ci_low);
		bind_num(st, 7, c->ci_high);
		bind_num(st, 8, c->p);
		bind_text(st, 9, c->verdict);
		sqlite3_bind_int64(st, 10, now);
		bind_text(st, 11, c->unit);
		bind_text(st, 12, c->better);
		sqlite3_bind_int64(st, 13, c->n_base);
		sqlite3_bind_int64(st, 14, c->n_cand);
		bind_num(st, 15, c->p_adjusted);
		bind_num(st, 16, c->min_effect);
		sqlite3_bind_int(st, 17, c->final != 0);
		bind_text(st, 18, c->note);
		if (sqlite3_step(st) == SQLITE_ROW)
			id = sqlite3_column_int64(st, 0);
		else
			ok = dberr(s, "store comparison") == 0;
		sqlite3_finalize(st);
	}
	if (ok && id == 0)
		ok = err_set(&s->err, "pair %lld not found",
		         (long long)pair_id) == 0;
	if (ok && c->final &&
	    (strcmp(c->verdict, "regression") == 0 ||
	        strcmp(c->verdict, "unstable") == 0)) {
		/* A bisection's pair is a measurement for the bisection,
		 * not a finding of its own. */
		st = prep(s,
		    "INSERT INTO regressions (comparison_id, state, created,"
		    " updated) SELECT ?1, 'new', ?2, ?2 FROM pairs"
		    " WHERE id = ?3 AND bisect_id IS NULL"
		    " ON CONFLICT (comparison_id) DO NOTHING");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_int64(st, 2, now);
			sqlite3_bind_int64(st, 3, pair_id);
			ok = step_done(s, st, "store regression") == 0;
			sqlite3_finalize(st);
		}
	}
	if (tx_end(s, ok) == -1)
		return -1;
	if (out_id)
		*out_id = id;
	return 0;
}

int
store_verdict_check(struct store *s, int64_t pair_id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT p.analysed, (SELECT count(*) FROM jobs j"
	    " WHERE j.id IN (p.base_job_id, p.cand_job_id) AND j.state = "
	    "'success')"
	    " FROM pairs p WHERE p.id = ?1");
	int r = 0;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	if (sqlite3_step(st) != SQLITE_ROW)
		r = err_setc(&s->err, ERR_CONFLICT, "pair %lld not found",
		    (long long)pair_id);
	else if (sqlite3_column_int64(st, 0) != 0)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "pair %lld already has its verdict", (long long)pair_id);
	else if (sqlite3_column_int64(st, 1) != 2)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "pair %lld: a job has not succeeded", (long long)pair_id);
	sqlite3_finalize(st);
	return r;
}

int
store_verdict_done(struct store *s, int64_t pair_id, int64_t now)
{
	sqlite3_stmt *st;
	int ok;

	(void)now;
	if (tx_begin(s) == -1)
		return -1;
	st = prep(s, "UPDATE pairs SET analysed = 1 WHERE id = ?1");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, pair_id);
		ok = step_done(s, st, "verdict done") == 0;
		sqlite3_finalize(st);
	}
	return tx_end(s, ok);
}

int
store_verdict_requeue(
    struct store *s, int64_t pair_id, int64_t runs, int64_t now)
{
	sqlite3_stmt *st;
	int64_t ids[2] = { 0, 0 }, have[2] = { 0, 0 };
	int ok, r = 0, n = 0, k, more = 0;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "SELECT id, state, runs, max_runs FROM jobs WHERE id IN "
	    "(SELECT base_job_id FROM pairs WHERE id = ?1"
	    " UNION ALL SELECT cand_job_id FROM pairs WHERE id = ?1)");
	ok = st != NULL;
	if (ok) {
		sqlite3_bind_int64(st, 1, pair_id);
		while (r == 0 && sqlite3_step(st) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0);

			if (n < 2) {
				ids[n] = id;
				have[n] = sqlite3_column_int64(st, 2);
			}
			n++;
			if (strcmp(col_text(st, 1), "success") != 0)
				r = err_setc(&s->err, ERR_CONFLICT,
				    "job %lld is %s, not success",
				    (long long)id, col_text(st, 1));
			else if (runs > sqlite3_column_int64(st, 3))
				r = err_setc(&s->err, ERR_CONFLICT,
				    "job %lld: %lld runs is above its max_runs "
				    "%lld",
				    (long long)id, (long long)runs,
				    (long long)sqlite3_column_int64(st, 3));
			else if (runs > sqlite3_column_int64(st, 2))
				more++;
		}
		sqlite3_finalize(st);
	}
	if (ok && r == 0 && n != 2)
		r = err_setc(&s->err, ERR_CONFLICT, "pair %lld has %d jobs",
		    (long long)pair_id, n);
	if (ok && r == 0 && more == 0)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "pair %lld: both jobs have %lld runs already",
		    (long long)pair_id, (long long)runs);
	/*
	 * Only the sides short of runs go back to the queue: a base shared
	 * with another pair may have them already (that pair asked first),
	 * and then only the candidate runs more.
	 */
	for (k = 0; ok && r == 0 && k < 2; k++) {
		if (have[k] >= runs)
			continue;
		st = prep(s,
		    "UPDATE jobs SET state = 'queued', runs = ?2, attempts = 0,"
		    " lease_owner = NULL, lease_expires = NULL,"
		    " progress = NULL, error = NULL, updated = ?3"
		    " WHERE id = ?1");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, ids[k]);
			sqlite3_bind_int64(st, 2, runs);
			sqlite3_bind_int64(st, 3, now);
			ok = step_done(s, st, "requeue pair") == 0;
			sqlite3_finalize(st);
		}
	}
	if (tx_end(s, ok && r == 0) == -1 && r == 0)
		return -1;
	return ok ? r : -1;
}

/* ---- metric history and change points ---- */

int
store_history_append(struct store *s, int64_t *out_series, int64_t *out_seq,
    const struct store_series_key *k, int64_t pair_id, int64_t job_id,
    int64_t comparison_id, double value, int64_t now)
{
	sqlite3_stmt *st;
	int64_t series = 0, seq = 0;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "INSERT INTO history_series (tree, branch, host_id, job, point,"
	    " metric, better) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT (job, point, metric, host_id, tree, branch)"
	    " DO UPDATE SET better = excluded.better RETURNING id");
	ok = st != NULL;
	if (ok) {
		bind_text(st, 1, k->tree ? k->tree : "");
		bind_text(st, 2, k->branch ? k->branch : "");
		sqlite3_bind_int64(st, 3, k->host_id);
		bind_text(st, 4, k->job);
		bind_text(st, 5, k->point ? k->point : "");
		bind_text(st, 6, k->metric);
		bind_text(st, 7, k->better);
		if (sqlite3_step(st) == SQLITE_ROW)
			series = sqlite3_column_int64(st, 0);
		else
			ok = dberr(s, "history series") == 0;
		sqlite3_finalize(st);
	}
	/* In the branch's commit order (store_fleet.c). */
	ok = ok &&
	    store_i_history_insert(
	        s, series, pair_id, job_id, comparison_id, value, now) == 0;
	st = ok ? prep(s,
	              "SELECT seq FROM history_points WHERE series_id = ?1"
	              " AND pair_id = ?2")
	        : NULL;
	if (ok && (ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, series);
		sqlite3_bind_int64(st, 2, pair_id);
		if (sqlite3_step(st) == SQLITE_ROW)
			seq = sqlite3_column_int64(st, 0);
		else
			ok = dberr(s, "history point seq") == 0;
		sqlite3_finalize(st);
	}
	if (tx_end(s, ok) == -1)
		return -1;
	if (out_series)
		*out_series = series;
	if (out_seq)
		*out_seq = seq;
	return 0;
}

int
store_history_tail(struct store *s, double **out_values, int64_t **out_seqs,
    size_t *out_n, int64_t series, size_t max)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT seq, value FROM (SELECT seq, value FROM history_points"
	    " WHERE series_id = ?1 ORDER BY seq DESC LIMIT ?2) ORDER BY seq");
	double *v = NULL;
	int64_t *q = NULL;
	size_t n = 0, cap = 0;
	int rc;

	*out_values = NULL;
	*out_seqs = NULL;
	*out_n = 0;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, series);
	sqlite3_bind_int64(st, 2, (int64_t)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = xreallocarray(v, cap, sizeof(*v));
			q = xreallocarray(q, cap, sizeof(*q));
		}
		q[n] = sqlite3_column_int64(st, 0);
		v[n++] = sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		free(q);
		return dberr(s, "history tail");
	}
	*out_values = v;
	*out_seqs = q;
	*out_n = n;
	return 0;
}

int
store_changepoints_replace(struct store *s, int64_t series, int64_t from_seq,
    const struct store_change_point *cps, size_t n, int64_t now)
{
	return store_changepoints_replace_range(
	    s, series, from_seq, INT64_MAX, cps, n, now);
}

int
store_changepoints_replace_range(struct store *s, int64_t series,
    int64_t from_seq, int64_t to_seq, const struct store_change_point *cps,
    size_t n, int64_t now)
{
	sqlite3_stmt *st;
	size_t i;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "DELETE FROM change_points WHERE series_id = ?1 AND seq >= ?2"
	    " AND seq <= ?3");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, series);
		sqlite3_bind_int64(st, 2, from_seq);
		sqlite3_bind_int64(st, 3, to_seq);
		ok = step_done(s, st, "drop change points") == 0;
		sqlite3_finalize(st);
	}
	for (i = 0; ok && i < n; i++) {
		if (cps[i].seq < from_seq || cps[i].seq > to_seq)
			continue;
		st = prep(s,
		    "INSERT INTO change_points (series_id, seq, lo_seq, hi_seq,"
		    " before, after, change_pct, p, direction, created)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
		    " ON CONFLICT (series_id, seq) DO NOTHING");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, series);
			sqlite3_bind_int64(st, 2, cps[i].seq);
			sqlite3_bind_int64(st, 3, cps[i].lo_seq);
			sqlite3_bind_int64(st, 4, cps[i].hi_seq);
			bind_num(st, 5, cps[i].before);
			bind_num(st, 6, cps[i].after);
			bind_num(st, 7, cps[i].change_pct);
			bind_num(st, 8, cps[i].p);
			bind_text(st, 9, cps[i].direction);
			sqlite3_bind_int64(st, 10, now);
			ok = step_done(s, st, "store change point") == 0;
			sqlite3_finalize(st);
		}
	}
	return tx_end(s, ok);
}

int
store_history_changepoints(struct store *s, json_t **out, const char *tree,
    const char *branch, const char *host, const char *job, const char *point,
    const char *metric)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT cp.id, cp.series_id, hs.tree, hs.branch, h.name AS host,"
	    " cp.seq,"
	    " (SELECT job_id FROM history_points WHERE series_id ="
	    "  cp.series_id AND seq = cp.seq) AS job_id,"
	    " (SELECT job_id FROM history_points WHERE series_id ="
	    "  cp.series_id AND seq = cp.lo_seq) AS lo_job_id,"
	    " (SELECT job_id FROM history_points WHERE series_id ="
	    "  cp.series_id AND seq = cp.hi_seq) AS hi_job_id,"
	    " (SELECT pair_id FROM history_points WHERE series_id ="
	    "  cp.series_id AND seq = cp.seq) AS pair_id,"
	    " cp.before, cp.after, cp.change_pct, cp.p, cp.direction"
	    " FROM change_points cp"
	    " JOIN history_series hs ON hs.id = cp.series_id"
	    " LEFT JOIN hosts h ON h.id = hs.host_id"
	    " WHERE hs.job = ?1 AND hs.point = ?2 AND hs.metric = ?3"
	    " AND (?4 IS NULL OR hs.tree = ?4)"
	    " AND (?5 IS NULL OR hs.branch = ?5)"
	    " AND (?6 IS NULL OR h.name = ?6)"
	    " ORDER BY cp.series_id, cp.seq");

	*out = NULL;
	if (st == NULL)
		return -1;
	bind_text(st, 1, job);
	bind_text(st, 2, point ? point : "");
	bind_text(st, 3, metric);
	bind_text(st, 4, tree);
	bind_text(st, 5, branch);
	bind_text(st, 6, host);
	return web_rows(s, st, out, "change points");
}

/*
 * ---- watch & triggers (daemon/watch.c, daemon/trigger.c) ----
 * Kept in one block at the end to ease merges; see store.h.
 */

/* Runs st (bound) to the end, no rows wanted; finalizes.  0 or -1. */
static int
run_once(struct store *s, sqlite3_stmt *st, const char *what)
{
	int r = step_done(s, st, what);

	sqlite3_finalize(st);
	return r;
}

int
store_tree_sync(
    struct store *s, int64_t *out_id, const char *name, const char *url)
{
	sqlite3_stmt *st;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "INSERT INTO trees (name, url) VALUES (?1, ?2)"
	    " ON CONFLICT (name) DO UPDATE SET url = excluded.url"
	    " RETURNING id");
	if ((ok = st != NULL)) {
		bind_text(st, 1, name);
		bind_text(st, 2, url);
		if (sqlite3_step(st) == SQLITE_ROW)
			*out_id = sqlite3_column_int64(st, 0);
		else
			ok = dberr(s, "tree sync") == 0;
		sqlite3_finalize(st);
	}
	return tx_end(s, ok);
}

int
store_tree_id(struct store *s, int64_t *out_id, const char *name)
{
	sqlite3_stmt *st = prep(s, "SELECT id FROM trees WHERE name = ?1");
	int rc;

	if (st == NULL)
		return -1;
	bind_text(st, 1, name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out_id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc != SQLITE_DONE)
		return dberr(s, "tree id");
	return err_setc(&s->err, ERR_NOTFOUND, "no tree named '%s'", name);
}

int
store_tree_polled(struct store *s, int64_t tree_id, int64_t now, int fetched,
    const char *error, int64_t failures, int64_t next_fetch)
{
	sqlite3_stmt *st;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "UPDATE trees SET last_fetch = ?2,"
	    " last_ok = CASE WHEN ?3 THEN ?2 ELSE last_ok END,"
	    " last_error = ?4, failures = ?5, next_fetch = ?6 WHERE id = ?1");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, tree_id);
		sqlite3_bind_int64(st, 2, now);
		sqlite3_bind_int(st, 3, fetched);
		bind_text(st, 4, error);
		sqlite3_bind_int64(st, 5, failures);
		sqlite3_bind_int64(st, 6, next_fetch);
		ok = run_once(s, st, "tree polled") == 0;
	}
	return tx_end(s, ok);
}

int
store_branch_tip(struct store *s, char *out, size_t outlen, int64_t tree_id,
    const char *branch)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT tip FROM tree_branches WHERE tree_id = ?1"
	    " AND branch = ?2 AND tip IS NOT NULL");
	int rc;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, tree_id);
	bind_text(st, 2, branch);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		snprintf(out, outlen, "%s", col_text(st, 0));
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc != SQLITE_DONE)
		return dberr(s, "branch tip");
	return ERR_NOTFOUND;
}

int
store_branch_update(struct store *s, int64_t tree_id, const char *branch,
    const char *tip, const char *state, const char *error, const char *rewrite,
    int64_t now)
{
	sqlite3_stmt *st;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "INSERT INTO tree_branches (tree_id, branch, tip, updated, state,"
	    " error, rewrites, last_rewrite)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7 IS NOT NULL, ?7)"
	    " ON CONFLICT (tree_id, branch) DO UPDATE SET"
	    " tip = coalesce(excluded.tip, tip),"
	    " updated = CASE WHEN excluded.tip IS NOT NULL"
	    "   AND excluded.tip IS NOT tip THEN ?4"
	    "   ELSE coalesce(updated, ?4) END,"
	    " state = excluded.state, error = excluded.error,"
	    " rewrites = rewrites + (?7 IS NOT NULL),"
	    " last_rewrite = coalesce(?7, last_rewrite)");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, tree_id);
		bind_text(st, 2, branch);
		bind_text(st, 3, tip);
		sqlite3_bind_int64(st, 4, now);
		bind_text(st, 5, state);
		bind_text(st, 6, error);
		bind_text(st, 7, rewrite);
		ok = run_once(s, st, "branch update") == 0;
	}
	return tx_end(s, ok);
}

int
store_commit_record(struct store *s, int64_t *out_id, int *out_new,
    int64_t tree_id, const struct store_commit *c, const char *branch,
    int64_t now)
{
	sqlite3_stmt *st;
	int ok, rc, fresh = 1;
	int64_t id = 0;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "SELECT id, first_seen IS NULL FROM commits"
	    " WHERE tree_id = ?1 AND sha = ?2");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, tree_id);
		bind_text(st, 2, c->sha);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			id = sqlite3_column_int64(st, 0);
			fresh = sqlite3_column_int(st, 1);
		} else if (rc != SQLITE_DONE) {
			ok = dberr(s, "commit lookup") == 0;
		}
		sqlite3_finalize(st);
	}
	if (ok && id == 0) {
		st = prep(s,
		    "INSERT INTO commits (tree_id, sha, parents, author,"
		    " author_date, committer, commit_date, subject, touches,"
		    " branches, paths, first_seen)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
		    " json_array_length(json(?9)) > 0, ?10, json(?9), ?11)");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, tree_id);
			bind_text(st, 2, c->sha);
			bind_text(st, 3, c->parents ? c->parents : "");
			bind_text(st, 4, c->author);
			sqlite3_bind_int64(st, 5, c->author_date);
			bind_text(st, 6, c->committer);
			sqlite3_bind_int64(st, 7, c->commit_date);
			bind_text(st, 8, c->subject);
			bind_text(st, 9, c->paths_json ? c->paths_json : "[]");
			bind_text(st, 10, branch);
			sqlite3_bind_int64(st, 11, now);
			ok = step_done(s, st, "commit insert") == 0;
			id = sqlite3_last_insert_rowid(s->db);
			sqlite3_finalize(st);
		}
	} else if (ok) {
		/* Known: gains the branch; a submitted stub gets its
		 * details. */
		st = prep(s,
		    "UPDATE commits SET branches = CASE"
		    "  WHEN ?2 IS NULL OR instr(',' || branches || ',',"
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
		    "  THEN json_array_length(json(?9)) > 0 ELSE touches END,"
		    " first_seen = coalesce(first_seen, ?10)"
		    " WHERE id = ?1");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, id);
			bind_text(st, 2, branch);
			bind_text(st, 3, c->parents ? c->parents : "");
			bind_text(st, 4, c->author);
			sqlite3_bind_int64(st, 5, c->author_date);
			bind_text(st, 6, c->committer);
			sqlite3_bind_int64(st, 7, c->commit_date);
			bind_text(st, 8, c->subject);
			bind_text(st, 9, c->paths_json ? c->paths_json : "[]");
			sqlite3_bind_int64(st, 10, now);
			ok = run_once(s, st, "commit update") == 0;
		}
	}
	ok = ok && store_i_commit_position(s, id) == 0;
	if (tx_end(s, ok) == -1)
		return -1;
	*out_id = id;
	if (out_new)
		*out_new = fresh;
	return 0;
}

int
store_commit_find(struct store *s, int64_t *out_id, char *out_sha,
    size_t outlen, int64_t tree_id, const char *sha)
{
	sqlite3_stmt *st;
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
	st = prep(s,
	    "SELECT id, sha FROM commits WHERE tree_id = ?1"
	    " AND sha >= ?2 AND sha < ?3 ORDER BY id LIMIT 2");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, tree_id);
	bind_text(st, 2, lo);
	bind_text(st, 3, hi);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (found++ == 0) {
			*out_id = sqlite3_column_int64(st, 0);
			snprintf(out_sha, outlen, "%s", col_text(st, 1));
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return dberr(s, "commit find");
	if (found == 0)
		return err_setc(
		    &s->err, ERR_NOTFOUND, "commit %s is not recorded", lo);
	if (found > 1)
		return err_setc(
		    &s->err, ERR_CONFLICT, "commit prefix %s is ambiguous", lo);
	return 0;
}

int
store_commit_stub(
    struct store *s, int64_t *out_id, int64_t tree_id, const char *sha)
{
	sqlite3_stmt *st;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "INSERT INTO commits (tree_id, sha) VALUES (?1, ?2)"
	    " ON CONFLICT (tree_id, sha) DO UPDATE SET sha = sha"
	    " RETURNING id");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, tree_id);
		bind_text(st, 2, sha);
		if (sqlite3_step(st) == SQLITE_ROW)
			*out_id = sqlite3_column_int64(st, 0);
		else
			ok = dberr(s, "commit stub") == 0;
		sqlite3_finalize(st);
	}
	return tx_end(s, ok);
}

int
store_hosts_matching(
    struct store *s, int64_t **out, size_t *n, const char *labels_json)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT h.id FROM hosts h WHERE json_array_length(json(?1)) = 0"
	    " OR EXISTS (SELECT 1 FROM json_each(json(?1)) jl,"
	    "  json_each(h.labels) hl WHERE jl.value = hl.value)"
	    " OR EXISTS (SELECT 1 FROM json_each(json(?1)) jn"
	    "  WHERE jn.value = h.name)"
	    " ORDER BY h.id");
	int64_t *v = NULL;
	size_t k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	bind_text(st, 1, labels_json ? labels_json : "[]");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xreallocarray(v, k + 1, sizeof(*v));
		v[k++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		return dberr(s, "hosts matching");
	}
	*out = v;
	*n = k;
	return 0;
}

/* A base job that p may share: 0 and *out (0 when there is none). */
static int
reusable_base(struct store *s, int64_t *out, const struct store_trigger_pair *p,
    int64_t now)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT j.id FROM jobs j JOIN pairs o ON o.id = j.pair_id"
	    " WHERE j.role = 'base' AND j.name = ?1 AND j.point = ?2"
	    " AND j.params = json(?3) AND o.host_id = ?4"
	    " AND j.commit_id IS ?5"
	    " AND j.state IN ('queued', 'running', 'success')"
	    " AND j.updated >= ?6 ORDER BY j.id DESC LIMIT 1");
	int rc;

	*out = 0;
	if (st == NULL)
		return -1;
	bind_text(st, 1, p->name);
	bind_text(st, 2, p->point ? p->point : "");
	bind_text(st, 3, p->base->spec_json);
	sqlite3_bind_int64(st, 4, p->host_id);
	if (p->base->commit_id > 0)
		sqlite3_bind_int64(st, 5, p->base->commit_id);
	sqlite3_bind_int64(st, 6, now - p->reuse_age);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return dberr(s, "reusable base");
	return 0;
}

int
store_trigger_pair(struct store *s, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, int *out_reused, const struct store_trigger_pair *p,
    int64_t now)
{
	sqlite3_stmt *st;
	int64_t pair = 0, b = 0, c = 0;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	ok = 1;
	if (p->host_id > 0 && p->reuse_age > 0)
		ok = reusable_base(s, &b, p, now) == 0;
	st = ok ? prep(s,
	              "INSERT INTO pairs (name, point, host_id, created,"
	              " pinned, tree_id, branch, tip_only, canary)"
	              " VALUES (?1, ?2, ?3, ?4, ?3 IS NOT NULL, ?5, ?6, ?7,"
	              " ?8)")
	        : NULL;
	if (ok && (ok = st != NULL)) {
		bind_text(st, 1, p->name);
		bind_text(st, 2, p->point ? p->point : "");
		if (p->host_id > 0)
			sqlite3_bind_int64(st, 3, p->host_id);
		sqlite3_bind_int64(st, 4, now);
		if (p->tree_id > 0)
			sqlite3_bind_int64(st, 5, p->tree_id);
		bind_text(st, 6, p->branch);
		sqlite3_bind_int(st, 7, p->tip_only);
		sqlite3_bind_int(st, 8, p->canary ? 1 : 0);
		ok = step_done(s, st, "insert pair") == 0;
		pair = sqlite3_last_insert_rowid(s->db);
		sqlite3_finalize(st);
	}
	if (out_reused)
		*out_reused = b != 0;
	ok = ok &&
	    (b != 0 ||
	        job_insert(s, &b, pair, p->name, p->point, p->base, now) ==
	            0) &&
	    job_insert(s, &c, pair, p->name, p->point, p->cand, now) == 0 &&
	    pair_sides(s, pair, b, c) == 0 &&
	    store_i_group_assign(s, pair) == 0;
	if (tx_end(s, ok) == -1)
		return -1;
	if (out_pair)
		*out_pair = pair;
	if (out_base)
		*out_base = b;
	if (out_cand)
		*out_cand = c;
	return 0;
}

int
store_trigger_pending(struct store *s, json_t **out, int64_t tree_id,
    const char *branch, const char *name)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT p.id AS pair_id, c.sha, p.tip_only FROM pairs p"
	    " JOIN jobs j ON j.id = p.cand_job_id"
	    " LEFT JOIN commits c ON c.id = j.commit_id"
	    " WHERE p.tree_id = ?1 AND p.branch = ?2 AND p.name = ?3"
	    " AND j.state = 'queued'"
	    /* measured, back in the queue for more runs: not waiting */
	    " AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id)"
	    " ORDER BY p.id");

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, tree_id);
	bind_text(st, 2, branch);
	bind_text(st, 3, name);
	return web_rows(s, st, out, "pending pairs");
}

int
store_pair_supersede(struct store *s, int *out_n, int64_t pair_id,
    const char *reason, int64_t now)
{
	static const char *const sql[2] = {
		"UPDATE jobs SET state = 'cancelled', error = ?2, updated = ?3"
		" WHERE state = 'queued' AND id ="
		" (SELECT cand_job_id FROM pairs WHERE id = ?1)"
		" AND NOT EXISTS (SELECT 1 FROM runs WHERE job_id = jobs.id)",
		"UPDATE jobs SET state = 'cancelled', error = ?2, updated = ?3"
		" WHERE state = 'queued' AND id ="
		" (SELECT base_job_id FROM pairs WHERE id = ?1)"
		/* only with its candidate (one with runs stays) */
		" AND EXISTS (SELECT 1 FROM pairs me"
		"  JOIN jobs mc ON mc.id = me.cand_job_id"
		"  WHERE me.id = ?1 AND mc.state = 'cancelled')"
		" AND NOT EXISTS (SELECT 1 FROM pairs o"
		"  JOIN jobs oc ON oc.id = o.cand_job_id"
		"  WHERE o.base_job_id = jobs.id AND o.id <> ?1"
		"  AND oc.state <> 'cancelled')",
	};
	sqlite3_stmt *st;
	int ok = 1, i, n = 0;

	if (tx_begin(s) == -1)
		return -1;
	for (i = 0; i < 2 && ok; i++) {
		if ((ok = (st = prep(s, sql[i])) != NULL) == 0)
			break;
		sqlite3_bind_int64(st, 1, pair_id);
		bind_text(st, 2, reason);
		sqlite3_bind_int64(st, 3, now);
		ok = step_done(s, st, "supersede") == 0;
		n += sqlite3_changes(s->db);
		sqlite3_finalize(st);
	}
	if (tx_end(s, ok) == -1)
		return -1;
	if (out_n)
		*out_n = n;
	return 0;
}

int
store_pair_deprioritise(struct store *s, int *out_n, int64_t pair_id)
{
	sqlite3_stmt *st;
	int r;

	st = prep(s,
	    "UPDATE pairs SET superseded = 1 WHERE id = ?1 AND superseded = 0"
	    " AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = pairs.cand_job_id"
	    "  AND j.state = 'queued')");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	r = step_done(s, st, "deprioritise");
	if (r == 0 && out_n)
		*out_n = sqlite3_changes(s->db);
	sqlite3_finalize(st);
	return r;
}

/* Parses the JSON text of column name in each row of rows (in place). */
static void
rows_json_col(json_t *rows, const char *name)
{
	json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
	{
		const char *t = json_string_value(json_object_get(row, name));

		json_object_set_new(row, name, json_text(t, json_array()));
	}
}

/* Splits the string column name of each row at sep into an array. */
static void
rows_split_col(json_t *rows, const char *name, char sep)
{
	json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
	{
		const char *t = json_string_value(json_object_get(row, name));
		json_t *arr = json_array();

		while (t != NULL && *t) {
			const char *e = strchr(t, sep);
			size_t len = e ? (size_t)(e - t) : strlen(t);

			if (len > 0)
				json_array_append_new(
				    arr, json_stringn(t, len));
			t = e ? e + 1 : NULL;
		}
		json_object_set_new(row, name, arr);
	}
}

int
store_trees_list(struct store *s, json_t **out)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT id, name, url, last_fetch, last_ok, last_error,"
	    " failures, next_fetch,"
	    " (SELECT count(*) FROM commits c WHERE c.tree_id = t.id"
	    "  AND c.first_seen IS NOT NULL) AS commits"
	    " FROM trees t ORDER BY name");
	json_t *trees = NULL, *bs = NULL, *row;
	size_t i;

	*out = NULL;
	if (st == NULL || web_rows(s, st, &trees, "trees") == -1)
		return -1;
	json_array_foreach(json_object_get(trees, "rows"), i, row)
	{
		int64_t id = json_integer_value(json_object_get(row, "id"));

		st = prep(s,
		    "SELECT branch, tip, updated, state, error, rewrites,"
		    " last_rewrite FROM tree_branches WHERE tree_id = ?1"
		    " ORDER BY branch");
		if (st == NULL) {
			json_decref(trees);
			return -1;
		}
		sqlite3_bind_int64(st, 1, id);
		if (web_rows(s, st, &bs, "branches") == -1) {
			json_decref(trees);
			return -1;
		}
		json_object_set(row, "branches", json_object_get(bs, "rows"));
		json_object_del(row, "id");
		json_decref(bs);
	}
	*out = json_pack("{s:O}", "trees", json_object_get(trees, "rows"));
	json_decref(trees);
	return 0;
}

int
store_commits_list(struct store *s, json_t **out, const char *tree,
    const char *branch, int64_t limit, int64_t cursor)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT c.id, c.sha, t.name AS tree, c.subject, c.author,"
	    " c.author_date, c.committer, c.commit_date, c.parents,"
	    " c.branches, c.paths, c.first_seen"
	    " FROM commits c JOIN trees t ON t.id = c.tree_id"
	    " WHERE (?1 IS NULL OR t.name = ?1)"
	    " AND (?2 IS NULL OR instr(',' || c.branches || ',',"
	    "  ',' || ?2 || ',') > 0)"
	    " AND (?3 = 0 OR c.id < ?3) AND c.first_seen IS NOT NULL"
	    " ORDER BY c.id DESC LIMIT ?4");
	json_t *res = NULL, *rows, *last;
	char num[32];

	*out = NULL;
	if (st == NULL)
		return -1;
	bind_text(st, 1, tree);
	bind_text(st, 2, branch);
	sqlite3_bind_int64(st, 3, cursor);
	sqlite3_bind_int64(st, 4, limit);
	if (web_rows(s, st, &res, "commits") == -1)
		return -1;
	rows = json_object_get(res, "rows");
	rows_json_col(rows, "paths");
	rows_split_col(rows, "parents", ' ');
	rows_split_col(rows, "branches", ',');
	*out = json_pack("{s:O}", "commits", rows);
	if ((int64_t)json_array_size(rows) == limit &&
	    (last = json_array_get(rows, json_array_size(rows) - 1)) != NULL) {
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(json_object_get(last, "id")));
		json_object_set_new(*out, "next_cursor", json_string(num));
	}
	json_decref(res);
	return 0;
}

/* ---- series (daemon/series.c) ---- */

int
store_series_create(struct store *s, int64_t *out_id, int *out_new,
    const struct store_series_new *n, int64_t now)
{
	sqlite3_stmt *st;
	int ok, rc;
	int64_t id = 0;

	*out_id = 0;
	if (out_new != NULL)
		*out_new = 0;
	if (tx_begin(s) == -1)
		return -1;
	st = prep(s, "SELECT id FROM series WHERE message_id = ?1");
	if ((ok = st != NULL)) {
		bind_text(st, 1, n->message_id);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW)
			id = sqlite3_column_int64(st, 0);
		else if (rc != SQLITE_DONE)
			ok = dberr(s, "series lookup") == 0;
		sqlite3_finalize(st);
	}
	if (ok && id == 0) {
		st = prep(s,
		    "INSERT INTO series (inbox, message_id, title, version,"
		    " total, found, author, date, tree_id, branch, state,"
		    " created, updated)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'new',"
		    " ?11, ?11)");
		if ((ok = st != NULL)) {
			bind_text(st, 1, n->inbox);
			bind_text(st, 2, n->message_id);
			bind_text(st, 3, n->title);
			sqlite3_bind_int64(st, 4, n->version);
			sqlite3_bind_int64(st, 5, n->total);
			sqlite3_bind_int64(st, 6, n->found);
			bind_text(st, 7, n->author);
			if (n->date >= 0)
				sqlite3_bind_int64(st, 8, n->date);
			if (n->tree_id > 0)
				sqlite3_bind_int64(st, 9, n->tree_id);
			bind_text(st, 10, n->branch);
			sqlite3_bind_int64(st, 11, now);
			ok = step_done(s, st, "series insert") == 0;
			id = sqlite3_last_insert_rowid(s->db);
			sqlite3_finalize(st);
		}
		if (ok && out_new != NULL)
			*out_new = 1;
	}
	if (tx_end(s, ok) == -1)
		return -1;
	*out_id = id;
	return 0;
}

int
store_series_patch_put(
    struct store *s, int64_t series_id, const struct store_series_patch *p)
{
	sqlite3_stmt *st;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "INSERT INTO series_patches (series_id, seq, message_id,"
	    " subject, author, date, commit_id)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT (series_id, seq) DO UPDATE SET"
	    " message_id = excluded.message_id, subject = excluded.subject,"
	    " author = excluded.author, date = excluded.date,"
	    " commit_id = excluded.commit_id");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, series_id);
		sqlite3_bind_int64(st, 2, p->seq);
		bind_text(st, 3, p->message_id);
		bind_text(st, 4, p->subject);
		bind_text(st, 5, p->author);
		if (p->date >= 0)
			sqlite3_bind_int64(st, 6, p->date);
		if (p->commit_id > 0)
			sqlite3_bind_int64(st, 7, p->commit_id);
		ok = step_done(s, st, "series patch") == 0;
		sqlite3_finalize(st);
	}
	return tx_end(s, ok);
}

int
store_series_state(struct store *s, int64_t id, const char *state,
    const char *error, const char *base_sha, int64_t commit_id, const char *ref,
    int64_t now)
{
	sqlite3_stmt *st;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "UPDATE series SET state = ?2, error = ?3,"
	    " base_sha = coalesce(?4, base_sha),"
	    " commit_id = CASE WHEN ?5 > 0 THEN ?5 ELSE commit_id END,"
	    " ref = coalesce(?6, ref), updated = ?7 WHERE id = ?1");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, state);
		bind_text(st, 3, error);
		bind_text(st, 4, base_sha);
		sqlite3_bind_int64(st, 5, commit_id);
		bind_text(st, 6, ref);
		sqlite3_bind_int64(st, 7, now);
		ok = step_done(s, st, "series state") == 0;
		if (ok && sqlite3_changes(s->db) == 0)
			ok = err_setc(&s->err, ERR_NOTFOUND,
			         "series %lld not found", (long long)id) == 0;
		sqlite3_finalize(st);
	}
	if (!ok && s->err.set && strstr(err_msg(&s->err), "not found")) {
		tx_end(s, 0);
		return ERR_NOTFOUND;
	}
	return tx_end(s, ok);
}

#define SERIES_COLS                                                       \
	"se.id, se.inbox, se.message_id, se.title, se.version, se.total," \
	" se.found, se.author, se.date AS time, se.state, se.error,"      \
	" t.name AS tree, se.branch, se.base_sha, se.ref, se.commit_id,"  \
	" c.sha AS commit_sha, se.created, se.updated,"                   \
	" se.branch_tag, se.supersedes, se.fallback,"                     \
	" (SELECT group_concat(cm.verdict) FROM jobs j"                   \
	"  JOIN pairs p ON p.cand_job_id = j.id AND p.bisect_id IS NULL"  \
	"  JOIN comparisons cm ON cm.pair_id = p.id"                      \
	"  WHERE j.commit_id = se.commit_id AND j.role = 'candidate'"     \
	"  AND (se.base_sha IS NULL OR (SELECT bc.sha FROM jobs bj"       \
	"   JOIN commits bc ON bc.id = bj.commit_id"                      \
	"   WHERE bj.id = p.base_job_id) = se.base_sha)) AS verdicts"     \
	" FROM series se LEFT JOIN trees t ON t.id = se.tree_id"          \
	" LEFT JOIN commits c ON c.id = se.commit_id"

int
store_series_list(struct store *s, json_t **out, int64_t limit, int64_t cursor)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT " SERIES_COLS " WHERE (?1 = 0 OR se.id < ?1)"
	    " ORDER BY se.id DESC LIMIT ?2");
	json_t *res = NULL, *rows, *last;
	char num[32];

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, cursor);
	sqlite3_bind_int64(st, 2, limit);
	if (web_rows(s, st, &res, "series") == -1)
		return -1;
	rows = json_object_get(res, "rows");
	*out = json_pack("{s:O}", "series", rows);
	if ((int64_t)json_array_size(rows) == limit &&
	    (last = json_array_get(rows, json_array_size(rows) - 1)) != NULL) {
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(json_object_get(last, "id")));
		json_object_set_new(*out, "next_cursor", json_string(num));
	}
	json_decref(res);
	return 0;
}

/* The patch rows of a series, by seq, with their commits. */
/* A patch's verdicts against its parent (trigger.every_patch): pairs
 * whose candidate is the patch and whose base is the previous patch, or
 * the series base for patch 1. */
#define PATCH_VERDICTS                                                \
	"(SELECT group_concat(cm.verdict) FROM jobs cj"               \
	" JOIN pairs pr ON pr.cand_job_id = cj.id"                    \
	"  AND pr.bisect_id IS NULL"                                  \
	" JOIN jobs bj ON bj.id = pr.base_job_id"                     \
	" JOIN comparisons cm ON cm.pair_id = pr.id"                  \
	" WHERE cj.commit_id = p.commit_id AND cj.role = 'candidate'" \
	" AND bj.commit_id = COALESCE((SELECT pp.commit_id"           \
	"  FROM series_patches pp WHERE pp.series_id = p.series_id"   \
	"  AND pp.seq = p.seq - 1), (SELECT bc.id FROM series se"     \
	"  JOIN commits bc ON bc.sha = se.base_sha"                   \
	"  WHERE se.id = p.series_id))) AS verdicts"

static json_t *
series_patches(struct store *s, int64_t id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT p.seq, p.message_id, p.subject, p.author, p.date,"
	    " p.commit_id, c.sha, p.applied_by, " PATCH_VERDICTS
	    " FROM series_patches p"
	    " LEFT JOIN commits c ON c.id = p.commit_id"
	    " WHERE p.series_id = ?1 ORDER BY p.seq");
	json_t *res = NULL, *rows;

	if (st == NULL)
		return NULL;
	sqlite3_bind_int64(st, 1, id);
	if (web_rows(s, st, &res, "series patches") == -1)
		return NULL;
	rows = json_incref(json_object_get(res, "rows"));
	json_decref(res);
	return rows;
}

int
store_series_get(struct store *s, json_t **out, int64_t id)
{
	sqlite3_stmt *st = prep(s, "SELECT " SERIES_COLS " WHERE se.id = ?1");
	json_t *o, *patches;

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return err_setc(&s->err, ERR_NOTFOUND, "series %lld not found",
		    (long long)id);
	}
	o = web_row(st);
	sqlite3_finalize(st);
	if ((patches = series_patches(s, id)) == NULL) {
		json_decref(o);
		return -1;
	}
	json_object_set_new(o, "patches", patches);
	*out = json_pack("{s:o}", "series", o);
	return 0;
}

int
store_series_comparisons(struct store *s, json_t **out, int64_t id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT cm.id, cm.pair_id, p.name AS job, p.point, h.name AS host,"
	    " cm.metric, cm.unit, cm.better, cm.base_median, cm.cand_median,"
	    " cm.change_pct, cm.ci_low, cm.ci_high, cm.p, cm.p_adjusted,"
	    " cm.verdict, cm.final, cm.n_base, cm.n_cand, p.suspect"
	    " FROM series se JOIN jobs j ON j.commit_id = se.commit_id"
	    "  AND j.role = 'candidate'"
	    " JOIN pairs p ON p.id = j.pair_id"
	    " JOIN comparisons cm ON cm.pair_id = p.id"
	    " LEFT JOIN hosts h ON h.id = p.host_id"
	    " WHERE se.id = ?1 ORDER BY cm.pair_id, cm.metric");
	sqlite3_stmt *chk = prep(s, "SELECT 1 FROM series WHERE id = ?1");
	json_t *res = NULL;
	int found;

	*out = NULL;
	if (st == NULL || chk == NULL) {
		sqlite3_finalize(st);
		sqlite3_finalize(chk);
		return -1;
	}
	sqlite3_bind_int64(chk, 1, id);
	found = sqlite3_step(chk) == SQLITE_ROW;
	sqlite3_finalize(chk);
	if (!found) {
		sqlite3_finalize(st);
		return err_setc(&s->err, ERR_NOTFOUND, "series %lld not found",
		    (long long)id);
	}
	sqlite3_bind_int64(st, 1, id);
	if (web_rows(s, st, &res, "series comparisons") == -1)
		return -1;
	*out = json_pack("{s:O}", "comparisons", json_object_get(res, "rows"));
	json_decref(res);
	return 0;
}

int
store_inbox_get(
    struct store *s, char *out_last, size_t outlen, const char *name)
{
	sqlite3_stmt *st =
	    prep(s, "SELECT last_commit FROM inbox_state WHERE name = ?1");
	int rc;

	out_last[0] = '\0';
	if (st == NULL)
		return -1;
	bind_text(st, 1, name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && col_text(st, 0) != NULL)
		snprintf(out_last, outlen, "%s", col_text(st, 0));
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return dberr(s, "inbox state");
	return 0;
}

int
store_inbox_put(struct store *s, const char *name, const char *url,
    const char *last_commit, const char *error, int64_t messages, int64_t now)
{
	sqlite3_stmt *st;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s,
	    "INSERT INTO inbox_state (name, url, last_commit, last_poll,"
	    " last_error, messages) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
	    " ON CONFLICT (name) DO UPDATE SET url = excluded.url,"
	    " last_commit = coalesce(excluded.last_commit, last_commit),"
	    " last_poll = excluded.last_poll,"
	    " last_error = excluded.last_error,"
	    " messages = messages + excluded.messages");
	if ((ok = st != NULL)) {
		bind_text(st, 1, name);
		bind_text(st, 2, url);
		bind_text(st, 3, last_commit);
		sqlite3_bind_int64(st, 4, now);
		bind_text(st, 5, error);
		sqlite3_bind_int64(st, 6, messages);
		ok = step_done(s, st, "inbox state") == 0;
		sqlite3_finalize(st);
	}
	return tx_end(s, ok);
}

/* ---- for the other store files (daemon/store_int.h) ---- */

sqlite3_stmt *
store__prep(struct store *s, const char *sql)
{
	return prep(s, sql);
}

int
store__tx(struct store *s, int begin, int ok)
{
	return begin ? tx_begin(s) : tx_end(s, ok);
}

int
store__dberr(struct store *s, const char *what)
{
	return dberr(s, what);
}

sqlite3 *
store__db(struct store *s)
{
	return s->db;
}

/* ---- bench host hygiene (docs/HOST.md) ---- */

int
store_pair_run_meta(struct store *s, json_t **out, int64_t pair_id)
{
	sqlite3_stmt *st = prep(s,
	    "SELECT j.role, r.idx AS run, r.idx < j.max_runs AS measured,"
	    " r.host_state, r.profile"
	    " FROM jobs j JOIN runs r ON r.job_id = j.id AND r.status = 'ok'"
	    " WHERE j.id IN (SELECT base_job_id FROM pairs WHERE id = ?1"
	    " UNION ALL SELECT cand_job_id FROM pairs WHERE id = ?1)"
	    " ORDER BY j.role, r.idx");

	*out = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	return web_rows(s, st, out, "pair runs");
}

int
store_hygiene_set(struct store *s, int64_t pair_id, const char *why)
{
	sqlite3_stmt *st;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = prep(s, "UPDATE pairs SET suspect = ?2 WHERE id = ?1");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, pair_id);
		bind_text(st, 2, why);
		ok = step_done(s, st, "pair suspect") == 0;
		sqlite3_finalize(st);
	}
	return tx_end(s, ok);
}

int
store_hygiene_suspect(struct store *s, char **out_why, int64_t pair_id)
{
	sqlite3_stmt *st = prep(s, "SELECT suspect FROM pairs WHERE id = ?1");
	int rc;

	*out_why = NULL;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_NULL)
			*out_why =
			    xstrdup((const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		return 0;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld not found",
		    (long long)pair_id);
	return dberr(s, "pair suspect");
}
