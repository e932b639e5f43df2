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
#include <time.h>

#include "common/caps.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/xalloc.h"
#include "store/alerts.h"
#include "store/bisect.h"
#include "store/store.h"
#include "store/store_int.h"

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
	 * waiting for the watcher to apply them (store/series2.c).
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
	/* v9: alerts (store/alerts.c, docs/ALERTS.md). */
	STORE_ALERT_MIGRATION,

	/*
	 * v10 (fleet, store/hosts.c): explicit sibling groups.  The
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

	/* v15: bisections (store/bisect.c, daemon/bisect.c). */
	STORE_BISECT_MIGRATION,

	/* v16: bisections from history change points, suspect steps. */
	STORE_BISECT_MIGRATION_V16,

	/* v17: rounds (docs/CONFIG.md `rounds`): the runs the job's current
	 * claim is to reach, NULL when the job is not run in rounds. */
	"ALTER TABLE jobs ADD COLUMN round_runs INTEGER;",

	/*
	 * v18: the database's instance id, 12 hex digits made once from
	 * SQLite's randomness (the OS's).  A kernel's build id carries it
	 * (-pw<job>-<instance>, docs/KERNEL.md): a runner's cached image
	 * keeps the build id of the job that built it, and a fresh
	 * database hands out job 1 again.
	 */
	("CREATE TABLE instance (id TEXT NOT NULL);"
	 "INSERT INTO instance (id) VALUES (lower(hex(randomblob(6))));"),

	/*
	 * v19 (issue 17, every page fast at 1M runs): the counts the
	 * overview and the jobs page show (jobs by state, runs, regressions
	 * by state) kept by triggers in one small table, so a page reads a
	 * few rows instead of counting a million: count(*) of runs cost
	 * tens of milliseconds a request at 1M runs.  Every state a CHECK
	 * allows has its row, so the triggers only update; a row deleted by
	 * a foreign-key cascade fires them too.  An index for history pages:
	 * the newest jobs of a name and point, whatever their role, in id
	 * order, so a page stops after its limit instead of sorting all of
	 * them.
	 */
	"CREATE TABLE counts ("
	"  name TEXT PRIMARY KEY,"
	"  n INTEGER NOT NULL) WITHOUT ROWID;"
	"INSERT INTO counts (name, n) SELECT 'runs', count(*) FROM runs;"
	"INSERT INTO counts (name, n) SELECT 'jobs.' || s.v,"
	"  (SELECT count(*) FROM jobs WHERE state = s.v) FROM (SELECT"
	"  'queued' AS v UNION ALL SELECT 'running' UNION ALL SELECT"
	"  'success' UNION ALL SELECT 'failed' UNION ALL SELECT 'cancelled')"
	"  s;"
	"INSERT INTO counts (name, n) SELECT 'regressions.' || s.v,"
	"  (SELECT count(*) FROM regressions WHERE state = s.v) FROM (SELECT"
	"  'new' AS v UNION ALL SELECT 'acknowledged' UNION ALL SELECT"
	"  'invalid' UNION ALL SELECT 'fixed') s;"
	"CREATE TRIGGER counts_runs_ins AFTER INSERT ON runs BEGIN"
	"  UPDATE counts SET n = n + 1 WHERE name = 'runs'; END;"
	"CREATE TRIGGER counts_runs_del AFTER DELETE ON runs BEGIN"
	"  UPDATE counts SET n = n - 1 WHERE name = 'runs'; END;"
	"CREATE TRIGGER counts_jobs_ins AFTER INSERT ON jobs BEGIN"
	"  UPDATE counts SET n = n + 1 WHERE name = 'jobs.' || NEW.state;"
	"  END;"
	"CREATE TRIGGER counts_jobs_del AFTER DELETE ON jobs BEGIN"
	"  UPDATE counts SET n = n - 1 WHERE name = 'jobs.' || OLD.state;"
	"  END;"
	"CREATE TRIGGER counts_jobs_upd AFTER UPDATE OF state ON jobs"
	"  WHEN OLD.state <> NEW.state BEGIN"
	"  UPDATE counts SET n = n - 1 WHERE name = 'jobs.' || OLD.state;"
	"  UPDATE counts SET n = n + 1 WHERE name = 'jobs.' || NEW.state;"
	"  END;"
	"CREATE TRIGGER counts_reg_ins AFTER INSERT ON regressions BEGIN"
	"  UPDATE counts SET n = n + 1 WHERE name = 'regressions.' ||"
	"  NEW.state; END;"
	"CREATE TRIGGER counts_reg_del AFTER DELETE ON regressions BEGIN"
	"  UPDATE counts SET n = n - 1 WHERE name = 'regressions.' ||"
	"  OLD.state; END;"
	"CREATE TRIGGER counts_reg_upd AFTER UPDATE OF state ON regressions"
	"  WHEN OLD.state <> NEW.state BEGIN"
	"  UPDATE counts SET n = n - 1 WHERE name = 'regressions.' ||"
	"  OLD.state;"
	"  UPDATE counts SET n = n + 1 WHERE name = 'regressions.' ||"
	"  NEW.state; END;"
	"CREATE INDEX jobs_name_point_id ON jobs(name, point, id);",
	/*
	 * v20 (issue 17): each job's summary of a metric (the history
	 * page's point: runs, median, least, greatest, and the unit and
	 * direction of its first run) stored when its pair gets its verdict
	 * (store_verdict_done, STORE_I_JOB_VALUES_FILL), so a history page
	 * reads a row a job instead of one a run.  Any change to a job's
	 * runs or metrics drops its rows: until the next verdict the page
	 * reads the runs again, so the summary is never stale.  A run's
	 * metrics are inserted with the run, in its transaction
	 * (store/jobs.c), so the run's insert trigger covers them: a
	 * trigger per inserted metric cost the upload path 21 deletes for
	 * a 20-metric run (make bench-api: 4,299 -> 2,980 uploads/s).
	 */
	"CREATE TABLE job_values ("
	"  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	"  metric TEXT NOT NULL,"
	"  n INTEGER NOT NULL,"
	"  median REAL NOT NULL, lo REAL NOT NULL, hi REAL NOT NULL,"
	"  unit TEXT NOT NULL, better TEXT NOT NULL,"
	"  PRIMARY KEY (job_id, metric)) WITHOUT ROWID;"
	"CREATE TRIGGER job_values_run_ins AFTER INSERT ON runs BEGIN"
	"  DELETE FROM job_values WHERE job_id = NEW.job_id; END;"
	"CREATE TRIGGER job_values_run_del AFTER DELETE ON runs BEGIN"
	"  DELETE FROM job_values WHERE job_id = OLD.job_id; END;"
	"CREATE TRIGGER job_values_run_upd AFTER UPDATE ON runs BEGIN"
	"  DELETE FROM job_values WHERE job_id IN (OLD.job_id, NEW.job_id);"
	"  END;"
	"CREATE TRIGGER job_values_metric_del AFTER DELETE ON metrics BEGIN"
	"  DELETE FROM job_values WHERE job_id ="
	"  (SELECT job_id FROM runs WHERE id = OLD.run_id); END;"
	"CREATE TRIGGER job_values_metric_upd AFTER UPDATE ON metrics BEGIN"
	"  DELETE FROM job_values WHERE job_id IN"
	"  (SELECT job_id FROM runs WHERE id IN (OLD.run_id, NEW.run_id));"
	"  END;" STORE_I_JOB_VALUES_FILL(
	    "SELECT j.id FROM jobs j JOIN pairs p"
	    "  ON p.id = j.pair_id WHERE p.analysed = 1"
	    " UNION SELECT p.base_job_id FROM pairs p"
	    "  WHERE p.analysed = 1") ";",
	/*
	 * v21 (issue 17): the jobs a history page can show, a row a job
	 * with an ok run, keyed by its name, point and its pair's host (0
	 * for none), so a page of one host reads its jobs in order instead
	 * of checking each job of the name for its pair's host and its
	 * runs (at 1M runs of four hosts: 800 jobs checked for a page of
	 * 200).  Triggers keep it in the transaction of each write it
	 * follows: a run stored, discarded or changed, a pair bound to a
	 * host or released, a job's name, point or pair changed; the
	 * foreign key drops the row with its job.
	 */
	"CREATE TABLE history_jobs ("
	"  job_id INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,"
	"  name TEXT NOT NULL, point TEXT NOT NULL,"
	"  host_id INTEGER NOT NULL);"
	"CREATE INDEX history_jobs_host"
	"  ON history_jobs(name, point, host_id, job_id);"
	"CREATE INDEX history_jobs_name ON history_jobs(name, point, job_id);"
	"INSERT INTO history_jobs (job_id, name, point, host_id)"
	"  SELECT j.id, j.name, j.point, coalesce(p.host_id, 0) FROM jobs j"
	"  LEFT JOIN pairs p ON p.id = j.pair_id WHERE EXISTS (SELECT 1"
	"  FROM runs r WHERE r.job_id = j.id AND r.status = 'ok');"
	"CREATE TRIGGER history_jobs_run_ins AFTER INSERT ON runs"
	"  WHEN NEW.status = 'ok' AND NOT EXISTS (SELECT 1 FROM history_jobs"
	"  WHERE job_id = NEW.job_id) BEGIN"
	"  INSERT INTO history_jobs (job_id, name, point, host_id)"
	"  SELECT j.id, j.name, j.point, coalesce(p.host_id, 0) FROM jobs j"
	"  LEFT JOIN pairs p ON p.id = j.pair_id WHERE j.id = NEW.job_id;"
	"  END;"
	"CREATE TRIGGER history_jobs_run_del AFTER DELETE ON runs"
	"  WHEN OLD.status = 'ok' AND NOT EXISTS (SELECT 1 FROM runs"
	"  WHERE job_id = OLD.job_id AND status = 'ok') BEGIN"
	"  DELETE FROM history_jobs WHERE job_id = OLD.job_id; END;"
	"CREATE TRIGGER history_jobs_run_upd AFTER UPDATE OF job_id, status"
	"  ON runs BEGIN"
	"  DELETE FROM history_jobs WHERE job_id IN (OLD.job_id, NEW.job_id);"
	"  INSERT INTO history_jobs (job_id, name, point, host_id)"
	"  SELECT j.id, j.name, j.point, coalesce(p.host_id, 0) FROM jobs j"
	"  LEFT JOIN pairs p ON p.id = j.pair_id"
	"  WHERE j.id IN (OLD.job_id, NEW.job_id) AND EXISTS (SELECT 1"
	"  FROM runs r WHERE r.job_id = j.id AND r.status = 'ok'); END;"
	"CREATE TRIGGER history_jobs_pair_host AFTER UPDATE OF host_id ON pairs"
	"  WHEN OLD.host_id IS NOT NEW.host_id BEGIN"
	"  UPDATE history_jobs SET host_id = coalesce(NEW.host_id, 0)"
	"  WHERE job_id IN (SELECT id FROM jobs WHERE pair_id = NEW.id); END;"
	"CREATE TRIGGER history_jobs_pair_del AFTER DELETE ON pairs BEGIN"
	"  UPDATE history_jobs SET host_id = 0"
	"  WHERE job_id IN (SELECT id FROM jobs WHERE pair_id = OLD.id); END;"
	"CREATE TRIGGER history_jobs_job_upd AFTER UPDATE OF name, point,"
	"  pair_id ON jobs BEGIN"
	"  UPDATE history_jobs SET name = NEW.name, point = NEW.point,"
	"  host_id = coalesce((SELECT host_id FROM pairs"
	"  WHERE id = NEW.pair_id), 0) WHERE job_id = NEW.id; END;",
	/*
	 * v22 (issue 17): a pair's history points, for a pair's change
	 * points (the alert report, a canary's findings): history_points
	 * is keyed by series, so "WHERE pair_id = ?" scanned all of them,
	 * once a pair for every group the alert worker weighs (at 1M runs,
	 * 100,000 points, ~40 % of a core while idle).
	 */
	"CREATE INDEX history_points_pair ON history_points(pair_id);",
	/*
	 * v23 (issue 17): the alert worker's due pairs (store/alerts.h):
	 * each pass grouped every analysed pair with its final comparisons
	 * to find the few it had not seen (at 1M runs, 50,000 pairs, 180 ms
	 * of a core every 5 s while idle).  And the canaries still to judge:
	 * "canary = 1" cannot use pairs_canary (WHERE canary <> 0), so each
	 * canary pass read every pair (another 40 ms every 5 s).
	 */
	STORE_ALERT_DUE_MIGRATION
	"CREATE INDEX pairs_canary_unjudged ON pairs(id) WHERE canary = 1;",
	/*
	 * v24 (issue 17): the queue in pair order, for claims
	 * (store/jobs.c claim_pick): a claim sorted every queued job under
	 * the write lock (8,000 queued: 19 ms, make bench-fleet).
	 */
	"CREATE INDEX jobs_queued ON jobs(state, pair_id) WHERE state = "
	"'queued';",
	/*
	 * v25 (issue 17): each pair's count of queued jobs, kept by
	 * triggers, and the pairs that have any by (host, superseded, id):
	 * the claim's stages read only queued pairs in their order.  The
	 * bound stage read jobs_queued to its end on every claim by a host
	 * with nothing bound to it (the usual case: 8,000 queued jobs, 8,000
	 * index steps and pair lookups under the write lock).
	 */
	"ALTER TABLE pairs ADD COLUMN queued INTEGER NOT NULL DEFAULT 0;"
	"UPDATE pairs SET queued = (SELECT count(*) FROM jobs j"
	"  WHERE j.state = 'queued' AND j.pair_id = pairs.id);"
	"CREATE INDEX pairs_queued ON pairs(host_id, superseded, id)"
	"  WHERE queued > 0;"
	"CREATE TRIGGER pairs_queued_ins AFTER INSERT ON jobs"
	"  WHEN NEW.state = 'queued' AND NEW.pair_id IS NOT NULL BEGIN"
	"  UPDATE pairs SET queued = queued + 1 WHERE id = NEW.pair_id; END;"
	"CREATE TRIGGER pairs_queued_del AFTER DELETE ON jobs"
	"  WHEN OLD.state = 'queued' AND OLD.pair_id IS NOT NULL BEGIN"
	"  UPDATE pairs SET queued = queued - 1 WHERE id = OLD.pair_id; END;"
	"CREATE TRIGGER pairs_queued_upd AFTER UPDATE OF state, pair_id ON jobs"
	"  WHEN (OLD.state = 'queued') <> (NEW.state = 'queued')"
	"  OR OLD.pair_id IS NOT NEW.pair_id BEGIN"
	"  UPDATE pairs SET queued = queued - 1"
	"    WHERE id = OLD.pair_id AND OLD.state = 'queued';"
	"  UPDATE pairs SET queued = queued + 1"
	"    WHERE id = NEW.pair_id AND NEW.state = 'queued'; END;",
	/*
	 * v26 (issue 17): a tree's commits.  /api/v1/trees counted each
	 * tree's commits a request (145 ms at 1M runs, 51,500 commits), and
	 * /api/v1/commits?tree= walked every commit of every tree newest
	 * first to find a page of one (18 ms for a tree with none).  The
	 * count is kept by triggers beside the tree (a commit counts once
	 * it is seen: first_seen), and the page reads this index, a tree's
	 * seen commits in id order (the rowid ends each entry).
	 */
	"ALTER TABLE trees ADD COLUMN ncommits INTEGER NOT NULL DEFAULT 0;"
	"UPDATE trees SET ncommits = (SELECT count(*) FROM commits c"
	"  WHERE c.tree_id = trees.id AND c.first_seen IS NOT NULL);"
	"CREATE INDEX commits_tree_seen ON commits(tree_id)"
	"  WHERE first_seen IS NOT NULL;"
	"CREATE TRIGGER trees_ncommits_ins AFTER INSERT ON commits"
	"  WHEN NEW.first_seen IS NOT NULL BEGIN"
	"  UPDATE trees SET ncommits = ncommits + 1 WHERE id = NEW.tree_id;"
	"  END;"
	"CREATE TRIGGER trees_ncommits_del AFTER DELETE ON commits"
	"  WHEN OLD.first_seen IS NOT NULL BEGIN"
	"  UPDATE trees SET ncommits = ncommits - 1 WHERE id = OLD.tree_id;"
	"  END;"
	"CREATE TRIGGER trees_ncommits_upd AFTER UPDATE OF tree_id, first_seen"
	"  ON commits WHEN (OLD.first_seen IS NULL) <> (NEW.first_seen IS NULL)"
	"  OR OLD.tree_id <> NEW.tree_id BEGIN"
	"  UPDATE trees SET ncommits = ncommits - 1"
	"    WHERE id = OLD.tree_id AND OLD.first_seen IS NOT NULL;"
	"  UPDATE trees SET ncommits = ncommits + 1"
	"    WHERE id = NEW.tree_id AND NEW.first_seen IS NOT NULL; END;",
	/*
	 * v27 (issue 17): the regressions' filters.  A tree, host or
	 * benchmark was found by joining each regression to its pair, job
	 * and commit, newest first to the table's end: 5 ms for a tree with
	 * none at 498 regressions, and the table grows with every finding.
	 * Each regression now holds its tree, host and benchmark (kept by
	 * triggers when its pair or the pair's candidate job changes), and
	 * each filter has an index in id order (the rowid ends each entry).
	 */
	"ALTER TABLE regressions ADD COLUMN tree_id INTEGER;"
	"ALTER TABLE regressions ADD COLUMN host_id INTEGER;"
	"ALTER TABLE regressions ADD COLUMN bench TEXT;"
	"UPDATE regressions SET (tree_id, host_id, bench) ="
	"  (SELECT c.tree_id, p.host_id, p.name FROM comparisons cm"
	"  JOIN pairs p ON p.id = cm.pair_id"
	"  LEFT JOIN jobs j ON j.id = p.cand_job_id"
	"  LEFT JOIN commits c ON c.id = j.commit_id"
	"  WHERE cm.id = regressions.comparison_id);"
	"CREATE INDEX regressions_state ON regressions(state);"
	"CREATE INDEX regressions_tree ON regressions(tree_id);"
	"CREATE INDEX regressions_host ON regressions(host_id);"
	"CREATE INDEX regressions_bench ON regressions(bench);"
	"CREATE TRIGGER regressions_filters_ins AFTER INSERT ON regressions"
	"  BEGIN UPDATE regressions SET (tree_id, host_id, bench) ="
	"  (SELECT c.tree_id, p.host_id, p.name FROM comparisons cm"
	"  JOIN pairs p ON p.id = cm.pair_id"
	"  LEFT JOIN jobs j ON j.id = p.cand_job_id"
	"  LEFT JOIN commits c ON c.id = j.commit_id"
	"  WHERE cm.id = NEW.comparison_id) WHERE id = NEW.id; END;"
	"CREATE TRIGGER regressions_filters_pair AFTER UPDATE OF host_id, name,"
	"  cand_job_id ON pairs BEGIN UPDATE regressions SET"
	"  (tree_id, host_id, bench) = (SELECT (SELECT c.tree_id FROM jobs j"
	"  JOIN commits c ON c.id = j.commit_id WHERE j.id = NEW.cand_job_id),"
	"  NEW.host_id, NEW.name) WHERE comparison_id IN"
	"  (SELECT id FROM comparisons WHERE pair_id = NEW.id); END;"
	"CREATE TRIGGER regressions_filters_job AFTER UPDATE OF commit_id"
	"  ON jobs WHEN NEW.pair_id IS NOT NULL BEGIN UPDATE regressions"
	"  SET tree_id = (SELECT tree_id FROM commits WHERE id = NEW.commit_id)"
	"  WHERE comparison_id IN (SELECT cm.id FROM comparisons cm"
	"  JOIN pairs p ON p.id = cm.pair_id"
	"  WHERE p.id = NEW.pair_id AND p.cand_job_id = NEW.id); END;",
	/*
	 * v28 (issue 17): the alerts' filters.  A state or kind walked
	 * every alert newest first, and a commit (the commit page asks
	 * for its alerts on each view) joined every alert to its report
	 * and commit: the table grows with every delivery.  A commit's
	 * alerts come from alert_reports_commit; these two are the rest.
	 */
	"CREATE INDEX alerts_state ON alerts(state);"
	"CREATE INDEX alerts_kind ON alerts(kind);",
	/*
	 * v29 (issue 17): a tree's history.  history_jobs listed a
	 * series' jobs of every tree, each page checking each job's commit
	 * for the tree asked: a tree measured beside busier ones read the
	 * others' jobs too, and one measured rarely spent a page's scan
	 * budget on them.  Each row holds its job's commit's tree (0 for
	 * none, kept by triggers), and the tree has an index of its own and
	 * with the host.  And the auto-bisect pass's change points after
	 * its cursor: (created, id) was no index, so each pass read them
	 * all, and each one's bisections were a scan of them all; and an
	 * alert report's bisection, found from its pairs (every bisection
	 * was read for each report the alert worker weighed); and the
	 * series of a patch's commit (the git pack of a series job read
	 * every series' patches); the ranges bisected before in a group
	 * (each auto bisection read every bisection); and a series' former
	 * version by its title (each series mailed read every series).
	 */
	"ALTER TABLE history_jobs ADD COLUMN tree_id INTEGER NOT NULL DEFAULT "
	"0;"
	"UPDATE history_jobs SET tree_id = coalesce((SELECT c.tree_id"
	"  FROM jobs j JOIN commits c ON c.id = j.commit_id"
	"  WHERE j.id = history_jobs.job_id), 0);"
	"CREATE INDEX history_jobs_tree"
	"  ON history_jobs(name, point, tree_id, job_id);"
	"CREATE INDEX history_jobs_tree_host"
	"  ON history_jobs(name, point, tree_id, host_id, job_id);"
	"CREATE TRIGGER history_jobs_tree_ins AFTER INSERT ON history_jobs"
	"  BEGIN UPDATE history_jobs SET tree_id = coalesce((SELECT c.tree_id"
	"  FROM jobs j JOIN commits c ON c.id = j.commit_id"
	"  WHERE j.id = NEW.job_id), 0) WHERE job_id = NEW.job_id; END;"
	"CREATE TRIGGER history_jobs_tree_job AFTER UPDATE OF commit_id ON jobs"
	"  BEGIN UPDATE history_jobs SET tree_id = coalesce((SELECT tree_id"
	"  FROM commits WHERE id = NEW.commit_id), 0)"
	"  WHERE job_id = NEW.id; END;"
	"CREATE INDEX change_points_created ON change_points(created);"
	"CREATE INDEX bisections_cp ON bisections(change_point_id)"
	"  WHERE change_point_id IS NOT NULL;"
	"CREATE INDEX bisections_pair ON bisections(pair_id);"
	"CREATE INDEX series_patches_commit ON series_patches(commit_id);"
	"CREATE INDEX bisections_group"
	"  ON bisections(job, host_id, point, metric);"
	"CREATE INDEX series_title ON series(title, author, version);",
	/*
	 * v30 (issue 17): a history's time range.  A page of a range of
	 * dates (`from`, `to`) walked the series newest first and checked
	 * each job's time: a range a few months back at 1M runs spent a
	 * page's scan budget on the jobs after it and came back empty and
	 * partial, nine pages before its first point.  Each row holds its
	 * job's time as the page shows it (its commit's date, else when the
	 * job was made; kept by triggers when the row is made, the job's
	 * commit changes or a commit gets its date), and (name, point,
	 * time) is an index: a range with fewer jobs than a page's budget
	 * is read from it (store/history.c hist_time_drive).
	 */
	"ALTER TABLE history_jobs ADD COLUMN time INTEGER NOT NULL DEFAULT 0;"
	"UPDATE history_jobs SET time = coalesce((SELECT"
	"  coalesce(c.commit_date, j.created) FROM jobs j"
	"  LEFT JOIN commits c ON c.id = j.commit_id"
	"  WHERE j.id = history_jobs.job_id), 0);"
	/* Covering: a range's tree and host are checked in the index. */
	"CREATE INDEX history_jobs_time"
	"  ON history_jobs(name, point, time, job_id, tree_id, host_id);"
	/* One trigger for both of a row's columns (v29's tree alone). */
	"DROP TRIGGER history_jobs_tree_ins;"
	"DROP TRIGGER history_jobs_tree_job;"
	"CREATE TRIGGER history_jobs_cols_ins AFTER INSERT ON history_jobs"
	"  BEGIN UPDATE history_jobs SET (tree_id, time) = (SELECT"
	"  coalesce(c.tree_id, 0), coalesce(c.commit_date, j.created, 0)"
	"  FROM jobs j LEFT JOIN commits c ON c.id = j.commit_id"
	"  WHERE j.id = NEW.job_id) WHERE job_id = NEW.job_id; END;"
	"CREATE TRIGGER history_jobs_cols_job AFTER UPDATE OF commit_id,"
	"  created ON jobs BEGIN UPDATE history_jobs SET (tree_id, time) ="
	"  (SELECT coalesce(c.tree_id, 0), coalesce(c.commit_date,"
	"  NEW.created, 0) FROM (SELECT 1) LEFT JOIN commits c"
	"  ON c.id = NEW.commit_id) WHERE job_id = NEW.id; END;"
	"CREATE TRIGGER history_jobs_time_commit AFTER UPDATE OF commit_date"
	"  ON commits WHEN OLD.commit_date IS NOT NEW.commit_date BEGIN"
	"  UPDATE history_jobs SET time = coalesce(NEW.commit_date,"
	"  (SELECT created FROM jobs WHERE id = history_jobs.job_id), 0)"
	"  WHERE job_id IN (SELECT id FROM jobs WHERE commit_id = NEW.id);"
	"  END;",
	/*
	 * v31 (issue 17): a branch's commits.  A commit's branches are a
	 * list in its row (commits.branches), so a branch filter, of the
	 * commits or of a history, was checked on each commit: a branch
	 * with few commits cost a page its scan budget and came back
	 * partial.  A row a commit and branch it was seen on (the watcher
	 * adds them, store_commit_record; none is ever taken away), by
	 * tree and branch, and by branch across trees; and a watched
	 * branch's count of them (tree_branches.commits, kept by a
	 * trigger), to tell a rare branch from a common one at once.
	 */
	"CREATE TABLE commit_branches ("
	"  tree_id INTEGER NOT NULL,"
	"  branch TEXT NOT NULL,"
	"  commit_id INTEGER NOT NULL REFERENCES commits(id),"
	"  PRIMARY KEY (tree_id, branch, commit_id)) WITHOUT ROWID;"
	"CREATE INDEX commit_branches_branch"
	"  ON commit_branches(branch, commit_id);"
	"WITH RECURSIVE split(tree_id, commit_id, branch, rest) AS ("
	"  SELECT tree_id, id, '', branches || ',' FROM commits"
	"  WHERE branches <> ''"
	"  UNION ALL SELECT tree_id, commit_id,"
	"  substr(rest, 1, instr(rest, ',') - 1),"
	"  substr(rest, instr(rest, ',') + 1) FROM split WHERE rest <> '')"
	"  INSERT OR IGNORE INTO commit_branches (tree_id, branch, commit_id)"
	"  SELECT tree_id, branch, commit_id FROM split WHERE branch <> '';"
	"ALTER TABLE tree_branches ADD COLUMN commits INTEGER NOT NULL"
	"  DEFAULT 0;"
	"UPDATE tree_branches SET commits = (SELECT count(*)"
	"  FROM commit_branches cb WHERE cb.tree_id = tree_branches.tree_id"
	"  AND cb.branch = tree_branches.branch);"
	"CREATE TRIGGER commit_branches_count AFTER INSERT ON commit_branches"
	"  BEGIN UPDATE tree_branches SET commits = commits + 1"
	"  WHERE tree_id = NEW.tree_id AND branch = NEW.branch; END;"
	"CREATE TRIGGER tree_branches_count AFTER INSERT ON tree_branches"
	"  BEGIN UPDATE tree_branches SET commits = (SELECT count(*)"
	"  FROM commit_branches WHERE tree_id = NEW.tree_id"
	"  AND branch = NEW.branch) WHERE tree_id = NEW.tree_id"
	"  AND branch = NEW.branch; END;",

	/*
	 * v32 (issue 17): the store's generation, what the reply cache keys
	 * on (store_data_version).  Every commit moved SQLite's
	 * data_version, a runner's heartbeat too: with a fleet heartbeating
	 * every few seconds, a cached page lived a few milliseconds.  A
	 * write transaction that changed a row adds one to store_gen.n as it
	 * commits (tx_end), unless all it changed was a heartbeat's
	 * (store_heartbeat, store_host_seen).  Not triggers: one a row cost
	 * an upload of 20 metrics twenty more updates, and bench-api half
	 * its uploads a second.
	 */
	"CREATE TABLE store_gen (id INTEGER PRIMARY KEY CHECK (id = 1),"
	"  n INTEGER NOT NULL);"
	"INSERT INTO store_gen (id, n) VALUES (1, 0);",
	/*
	 * v33: each side's mean and sample standard deviation beside its
	 * median (kernel developers quote a mean and its %stddev, as LKP
	 * reports do), written with the comparison from the very values
	 * the verdict compared (store_verdict_put).  Rows written before
	 * stay NULL: unknown, not recomputed from runs that may have
	 * changed since.
	 */
	"ALTER TABLE comparisons ADD COLUMN base_mean REAL;"
	"ALTER TABLE comparisons ADD COLUMN base_sd REAL;"
	"ALTER TABLE comparisons ADD COLUMN cand_mean REAL;"
	"ALTER TABLE comparisons ADD COLUMN cand_sd REAL;",
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
	/* The holder's class and since when (store_write_stats). */
	enum store_writer cls;
	double since;
	uint64_t seq; /* acquisitions so far */
	struct store_write_stat st[STORE_WRITERS];
} write_lock = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0,
	STORE_W_OTHER, 0, 0, { { 0 } } };

const char *const store_writer_names[STORE_WRITERS] = { "other",
	"claim_heartbeat", "uploads", "verdict", "sched" };

static void
wlock(int urgent, enum store_writer cls)
{
	struct store_write_stat *w;
	double t0 = clock_mono_s();

	if (urgent)
		cls = STORE_W_URGENT;
	w = &write_lock.st[cls];
	pthread_mutex_lock(&write_lock.mu);
	write_lock.urgent += urgent;
	w->waiting++;
	while (write_lock.busy || (!urgent && write_lock.urgent > 0))
		pthread_cond_wait(&write_lock.cv, &write_lock.mu);
	w->waiting--;
	write_lock.urgent -= urgent;
	write_lock.busy = 1;
	write_lock.cls = cls;
	write_lock.since = clock_mono_s();
	w->n++;
	w->last_seq = ++write_lock.seq;
	w->wait_s += write_lock.since - t0;
	if (write_lock.since - t0 > w->wait_max_s)
		w->wait_max_s = write_lock.since - t0;
	pthread_mutex_unlock(&write_lock.mu);
}

static void
wunlock(void)
{
	struct store_write_stat *w;
	double held;

	pthread_mutex_lock(&write_lock.mu);
	held = clock_mono_s() - write_lock.since;
	w = &write_lock.st[write_lock.cls];
	w->hold_s += held;
	if (held > w->hold_max_s)
		w->hold_max_s = held;
	write_lock.busy = 0;
	pthread_cond_broadcast(&write_lock.cv);
	pthread_mutex_unlock(&write_lock.mu);
}

void
store_write_stats(struct store_write_stat out[STORE_WRITERS])
{
	pthread_mutex_lock(&write_lock.mu);
	memcpy(out, write_lock.st, sizeof(write_lock.st));
	pthread_mutex_unlock(&write_lock.mu);
}

void
store_set_writer(struct store *s, enum store_writer cls)
{
	s->writer = cls;
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
sqlite3_stmt *
store_i_cached(struct store *s, enum stmt_slot slot, const char *sql)
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

void
store_i_bind_id(sqlite3_stmt *st, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

void
store_i_bind_num(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

int
store_i_write1(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc;

	if (st == NULL)
		return -1;
	if (store_i_tx_begin(s) != 0) {
		store_i_release(s, st);
		return -1;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		store_i_dberr(s, what);
		store_i_release(s, st);
		store_i_tx_end(s, 0);
		return -1;
	}
	store_i_release(s, st);
	return store_i_tx_end(s, 1);
}

const char *
store_i_col_text(sqlite3_stmt *st, int i)
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

/* ---- transactions ---- */

int
store_i_tx_begin_as(struct store *s, int urgent)
{
	if (s->in_tx)
		return 0;
	store_read_end(s);
	wlock(urgent, s->writer);
	if (exec(s, "BEGIN IMMEDIATE") == -1) {
		wunlock();
		return -1;
	}
	s->have_wlk = 1;
	s->tx_changes0 = sqlite3_total_changes64(s->db);
	s->tx_quiet = 0;
	return 0;
}

int64_t
store_i_quiet_begin(struct store *s)
{
	return sqlite3_total_changes64(s->db);
}

void
store_i_quiet_end(struct store *s, int64_t begin)
{
	s->tx_quiet += sqlite3_total_changes64(s->db) - begin;
}

/* The store's generation moves with a commit that changed a row beside
 * a heartbeat's (migration v32). */
static int
gen_bump(struct store *s)
{
	sqlite3_stmt *st;
	int r;

	if (s->version < STORE_GEN_VERSION ||
	    sqlite3_total_changes64(s->db) - s->tx_changes0 - s->tx_quiet <= 0)
		return 0;
	st = store_i_cached(
	    s, S_GEN_BUMP, "UPDATE store_gen SET n = n + 1 WHERE id = 1");
	if (st == NULL)
		return -1;
	r = step_done(s, st, "store generation");
	sqlite3_reset(st);
	return r;
}

static int
tx_begin(struct store *s)
{
	return store_i_tx_begin_as(s, 0);
}

static int
tx_end(struct store *s, int ok)
{
	int r = 0;

	if (s->in_tx)
		return ok ? 0 : -1;
	if (ok && (gen_bump(s) == -1 || exec(s, "COMMIT") == -1))
		ok = 0;
	if (!ok) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		r = -1;
	}
	s->have_wlk = 0;
	wunlock();
	return r;
}

/* For the other store files (store/store_int.h). */
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
store_i_rows(struct store *s, sqlite3_stmt *st, void **v, size_t *n,
    size_t size, void (*scan)(void *row, sqlite3_stmt *st, void *arg),
    void *arg, const char *what)
{
	size_t cap = 0;
	char *row;
	int rc;

	*v = NULL;
	*n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*v = xreallocarray(*v, cap, size);
		}
		row = (char *)*v + *n * size;
		memset(row, 0, size);
		scan(row, st, arg);
		(*n)++;
	}
	store_i_count_steps(s, st);
	store_i_release(s, st);
	return rc == SQLITE_DONE ? 0 : store_i_dberr(s, what);
}

int
store_i_rows_append(struct store *s, sqlite3_stmt *st, void **v, size_t *n,
    size_t size, void (*scan)(void *row, sqlite3_stmt *st, void *arg),
    void *arg, const char *what, int64_t *got)
{
	void *w;
	size_t k;
	int r = store_i_rows(s, st, &w, &k, size, scan, arg, what);

	if (k > 0) {
		*v = xreallocarray(*v, *n + k, size);
		memcpy((char *)*v + *n * size, w, k * size);
		*n += k;
	}
	free(w);
	*got = (int64_t)k;
	return r;
}

void
store_i_count_steps(struct store *s, sqlite3_stmt *st)
{
	s->read_steps +=
	    (uint64_t)sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 1);
}

uint64_t
store_read_steps(const struct store *s)
{
	return s->read_steps;
}

int64_t
store_i_below(int64_t cursor)
{
	return cursor > 0 ? cursor : INT64_MAX;
}

int
store_i_scan_page(const struct store_i_scan *sc, int64_t cursor, int64_t limit,
    int64_t budget, int *capped, int64_t *floor)
{
	int64_t below = store_i_below(cursor), w = limit * 2, got, n, read = 0;
	int64_t more;

	*capped = 0;
	*floor = 0;
	for (;;) {
		if (w > budget)
			w = budget;
		if (sc->window(sc->arg, below, w, floor, &got) != 0)
			return -1;
		if (got > 0) {
			if (sc->rows(
			        sc->arg, *floor, below, limit - read, &n) != 0)
				return -1;
			read += n;
		}
		budget -= got;
		if (read >= limit || got < w)
			return 0; /* full, or the list ends in this window */
		below = *floor;
		if (budget <= 0) {
			/* Spent: the next page goes on below this one,
			 * unless the list ends just here. */
			if (sc->window(sc->arg, below, 1, &more, &got) != 0)
				return -1;
			*capped = got > 0;
			return 0;
		}
		w *= 4;
	}
}

static int
list_window(void *arg, int64_t below, int64_t w, int64_t *floor, int64_t *n)
{
	const struct store_i_list *l = arg;
	sqlite3_stmt *st = store_i_stmt(l->s, l->window_sql);
	int rc;

	if (st == NULL)
		return -1;
	l->bind(st, l->q);
	sqlite3_bind_int64(st, 10, below);
	sqlite3_bind_int64(st, 11, w);
	rc = store_i_scan_window(l->s, st, floor, n, l->what);
	store_i_release(l->s, st);
	return rc;
}

static int
list_rows(void *arg, int64_t floor, int64_t below, int64_t want, int64_t *got)
{
	const struct store_i_list *l = arg;
	sqlite3_stmt *st = store_i_stmt(l->s, l->rows_sql);

	*got = 0;
	if (st == NULL)
		return -1;
	l->bind(st, l->q);
	sqlite3_bind_int64(st, 10, below);
	sqlite3_bind_int64(st, 11, want);
	sqlite3_bind_int64(st, 12, floor);
	return store_i_rows_append(
	    l->s, st, l->v, l->n, l->size, l->scan, l->scan_arg, l->what, got);
}

int
store_i_list_page(const struct store_i_list *l, int kinds, int64_t cursor,
    int64_t limit, int64_t budget, int *capped, int64_t *next,
    int64_t (*last_id)(const void *row))
{
	struct store_i_scan sc = { list_window, list_rows, (void *)l };
	int64_t floor = 0, n;
	int r;

	*capped = 0;
	r = kinds > 1
	    ? store_i_scan_page(&sc, cursor, limit, budget, capped, &floor)
	    : list_rows((void *)l, 0, store_i_below(cursor), limit, &n);
	if (r != 0)
		return -1;
	*next = *capped
	    ? floor
	    : store_i_next_cursor(*l->n, limit,
	          *l->n ? last_id((const char *)*l->v + (*l->n - 1) * l->size)
	                : 0,
	          STORE_I_DESC);
	return 0;
}

int
store_i_scan_window(struct store *s, sqlite3_stmt *st, int64_t *floor,
    int64_t *got, const char *what)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW) {
		*floor = sqlite3_column_int64(st, 0);
		*got = sqlite3_column_int64(st, 1);
	}
	store_i_count_steps(s, st);
	return rc == SQLITE_ROW ? 0 : store_i_dberr(s, what);
}

int64_t
store_i_next_cursor(
    size_t n, int64_t limit, int64_t last, enum store_i_order order)
{
	if (n == 0 || (int64_t)n != limit)
		return 0;
	if (order == STORE_I_DESC && last <= 1)
		return 0;
	return last;
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

int
store_read_begin(struct store *s)
{
	sqlite3_stmt *st;
	int rc;

	if (s->in_tx || s->reading)
		return 0;
	if ((st = store_i_stmt(s, "BEGIN")) == NULL)
		return -1;
	rc = sqlite3_step(st);
	store_i_release(s, st);
	if (rc != SQLITE_DONE)
		return dberr(s, "begin read");
	s->reading = 1;
	return 0;
}

void
store_read_end(struct store *s)
{
	sqlite3_stmt *st;
	int ok;

	if (!s->reading)
		return;
	s->reading = 0;
	st = store_i_stmt(s, "COMMIT");
	ok = st != NULL && sqlite3_step(st) == SQLITE_DONE;
	store_i_release(s, st);
	/* Only reads ran: a failed COMMIT leaves nothing to undo but the
	 * transaction itself. */
	if (!ok && !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int
store_data_version(struct store *s, struct store_version *out)
{
	sqlite3_stmt *st =
	    store_i_cached(s, S_DATA_VERSION, "PRAGMA data_version");
	int64_t dv, own;

	out->gen = -1;
	if (st == NULL)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_reset(st);
		return dberr(s, "data version");
	}
	dv = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	/* data_version does not move for this connection's own commits. */
	own = sqlite3_total_changes64(s->db);
	if (!s->gen_ok || dv != s->gen_dv || own != s->gen_own) {
		/* Read after data_version: never older than what it says. */
		st = store_i_cached(
		    s, S_GEN, "SELECT n FROM store_gen WHERE id = 1");
		if (st == NULL)
			return -1;
		if (sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_reset(st);
			s->gen_ok = 0;
			return dberr(s, "store generation");
		}
		s->gen = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		s->gen_dv = dv;
		s->gen_own = own;
		s->gen_ok = 1;
	}
	out->gen = s->gen;
	return 0;
}

/* ---- open, migrate ---- */

int
store_user_version(struct store *s)
{
	sqlite3_stmt *st = store_i_stmt(s, "PRAGMA user_version");
	int v = -1;

	if (st == NULL)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	store_i_release(s, st);
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
	sqlite3_stmt *st = store_i_stmt(s, "PRAGMA foreign_key_check");
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
	store_i_release(s, st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_instance(struct store *s, const char **out)
{
	sqlite3_stmt *st;
	const char *id;
	int rc = -1;

	*out = s->instance;
	if (s->instance[0] != '\0')
		return 0;
	if ((st = store_i_stmt(s, "SELECT id FROM instance LIMIT 1")) == NULL)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW &&
	    (id = (const char *)sqlite3_column_text(st, 0)) != NULL &&
	    strlen(id) > 0 && strlen(id) < sizeof(s->instance)) {
		memcpy(s->instance, id, strlen(id) + 1);
		rc = 0;
	} else
		err_set(&s->err, "sqlite: the database has no instance id");
	store_i_release(s, st);
	return rc;
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

/*
 * Before SQLite's first use: no memory statistics.  With them on (the
 * default) every sqlite3_malloc and free takes one mutex for the whole
 * process, and the page threads queued on it (a seventh of the
 * uncached pair page's time, futex waits included).  The daemon reads
 * none of them.
 */
static void
sqlite_setup(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int
store_open_version(
    struct store **out, const char *path, int version, struct err *e)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct store *s = xcalloc(1, sizeof(*s));
	int flags =
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;

	*out = NULL;
	pthread_once(&once, sqlite_setup);
	if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
		err_set(e, "%s: %s", path,
		    s->db ? sqlite3_errmsg(s->db) : "cannot open");
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 5000);
	if (exec(s,
	        "PRAGMA journal_mode = WAL;"
	        "PRAGMA journal_size_limit = 4194304;"
	        "PRAGMA synchronous = NORMAL;"
	        "PRAGMA foreign_keys = ON;") == -1 ||
	    migrate(s, version) == -1) {
		err_set(e, "%s: %s", path, err_msg(&s->err));
		goto fail;
	}
	s->version = version;
	s->wal_reset_pages = STORE_WAL_RESET_PAGES;
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
	store_i_stmts_free(s);
	store_i_groups_free(s);
	if (s->in_tx || s->have_wlk) {
		s->in_tx = 0;
		tx_end(s, 0);
	}
	sqlite3_close(s->db);
	free(s);
}

void
store_set_wal_reset(struct store *s, int pages)
{
	s->wal_reset_pages = pages;
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

	/* Copy what can be copied without blocking anyone (this pass also
	 * does the slow part: syncing the WAL written since the last one
	 * and the database after the copy)... */
	if (sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
	        &log, &done) != SQLITE_OK)
		return dberr(s, "checkpoint");
	if (log < s->wal_reset_pages)
		return 0;
	/*
	 * ...then, when the WAL has grown past wal_reset_pages (writers
	 * that never pause keep the passive pass from reaching its end;
	 * when they pause it does, and the next write starts the WAL over
	 * by itself), copy what was added meanwhile while holding the
	 * writers' lock: with nobody appending this pass reaches the end,
	 * and the next write starts the WAL over (truncated to
	 * journal_size_limit).  This pass syncs the WAL and the database,
	 * and an fsync on a busy disk took up to 3 s in bench-api, every
	 * writer waiting: hence a large threshold, so that it happens once
	 * per 128 MB of sustained writing, not once per 8 MB.  It is passive
	 * because RESTART and TRUNCATE also wait for every reader (a
	 * verdict's long read, a dashboard page) while holding the lock.  A
	 * reader still on old frames only puts the reset off to a later
	 * tick.
	 */
	wlock(0, s->writer);
	rc = sqlite3_wal_checkpoint_v2(
	    s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
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

static void
cp_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_cp_row *c = row;

	(void)arg;
	c->id = sqlite3_column_int64(st, 0);
	c->series_id = sqlite3_column_int64(st, 1);
	c->tree = store_i_col_dup(st, 2);
	c->branch = store_i_col_dup(st, 3);
	c->host = store_i_col_dup(st, 4);
	c->seq = sqlite3_column_int64(st, 5);
	c->job_id = sqlite3_column_int64(st, 6);
	c->lo_job_id = sqlite3_column_int64(st, 7);
	c->hi_job_id = sqlite3_column_int64(st, 8);
	c->pair_id = sqlite3_column_int64(st, 9);
	c->before = store_i_col_num(st, 10);
	c->after = store_i_col_num(st, 11);
	c->change_pct = store_i_col_num(st, 12);
	c->p = store_i_col_num(st, 13);
	c->direction = store_i_col_dup(st, 14);
}

int
store_history_changepoints(struct store *s, struct store_cp_rows *out,
    const char *tree, const char *branch, const char *host, const char *job,
    const char *point, const char *metric)
{
	sqlite3_stmt *st = store_i_stmt(s,
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
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	bind_text(st, 1, job);
	bind_text(st, 2, point ? point : "");
	bind_text(st, 3, metric);
	bind_text(st, 4, tree);
	bind_text(st, 5, branch);
	bind_text(st, 6, host);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), cp_scan, NULL,
	    "change points");
	out->v = v;
	if (r != 0)
		store_cp_rows_release(out);
	return r;
}

void
store_cp_rows_release(struct store_cp_rows *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].tree);
		free(l->v[i].branch);
		free(l->v[i].host);
		free(l->v[i].direction);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* A base job that p may share: 0 and *out (0 when there is none). */
static int
reusable_base(struct store *s, int64_t *out, const struct store_trigger_pair *p,
    int64_t now)
{
	sqlite3_stmt *st = store_i_stmt(s,
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
	store_i_release(s, st);
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
	st = ok ? store_i_stmt(s,
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
		store_i_release(s, st);
	}
	if (out_reused)
		*out_reused = b != 0;
	ok = ok &&
	    (b != 0 ||
	        store_i_job_insert(
	            s, &b, pair, p->name, p->point, p->base, now) == 0) &&
	    store_i_job_insert(s, &c, pair, p->name, p->point, p->cand, now) ==
	        0 &&
	    store_i_pair_sides(s, pair, b, c) == 0 &&
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

static void
pending_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_pending *p = row;

	(void)arg;
	p->pair_id = sqlite3_column_int64(st, 0);
	p->sha = store_i_col_dup(st, 1);
	p->tip_only = sqlite3_column_int(st, 2) != 0;
}

int
store_trigger_pending(struct store *s, struct store_pendings *out,
    int64_t tree_id, const char *branch, const char *name)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT p.id AS pair_id, c.sha, p.tip_only FROM pairs p"
	    " JOIN jobs j ON j.id = p.cand_job_id"
	    " LEFT JOIN commits c ON c.id = j.commit_id"
	    " WHERE p.tree_id = ?1 AND p.branch = ?2 AND p.name = ?3"
	    " AND j.state = 'queued'"
	    /* measured, back in the queue for more runs: not waiting */
	    " AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id)"
	    " ORDER BY p.id");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, tree_id);
	bind_text(st, 2, branch);
	bind_text(st, 3, name);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), pending_scan,
	    NULL, "pending pairs");
	out->v = v;
	if (r != 0)
		store_pendings_release(out);
	return r;
}

void
store_pendings_release(struct store_pendings *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->v[i].sha);
	free(l->v);
	memset(l, 0, sizeof(*l));
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
		store_i_release(s, st);
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

	st = store_i_stmt(s,
	    "UPDATE pairs SET superseded = 1 WHERE id = ?1 AND superseded = 0"
	    " AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = pairs.cand_job_id"
	    "  AND j.state = 'queued')");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	r = step_done(s, st, "deprioritise");
	if (r == 0 && out_n)
		*out_n = sqlite3_changes(s->db);
	store_i_release(s, st);
	return r;
}

/* ---- bench host hygiene (docs/HOST.md) ---- */

static void
run_meta_scan(void *row, sqlite3_stmt *st, void *arg)
{
	struct store_run_meta *m = row;

	(void)arg;
	m->role = store_i_col_dup(st, 0);
	m->run = sqlite3_column_int64(st, 1);
	m->measured = sqlite3_column_int(st, 2) != 0;
	/* The documents as the JSON rows had them (non-UTF-8 bytes '?'). */
	m->host_state_json = store_i_web_text(st, 3);
	m->profile_json = store_i_web_text(st, 4);
}

int
store_pair_run_meta(
    struct store *s, struct store_run_metas *out, int64_t pair_id)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT j.role, r.idx AS run, r.idx < j.max_runs AS measured,"
	    " r.host_state, r.profile"
	    " FROM jobs j JOIN runs r ON r.job_id = j.id AND r.status = 'ok'"
	    " WHERE j.id IN (SELECT base_job_id FROM pairs WHERE id = ?1"
	    " UNION ALL SELECT cand_job_id FROM pairs WHERE id = ?1)"
	    " ORDER BY j.role, r.idx");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), run_meta_scan,
	    NULL, "pair runs");
	out->v = v;
	if (r != 0)
		store_run_metas_release(out);
	return r;
}

void
store_run_metas_release(struct store_run_metas *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].role);
		free(l->v[i].host_state_json);
		free(l->v[i].profile_json);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int
store_hygiene_set(struct store *s, int64_t pair_id, const char *why)
{
	sqlite3_stmt *st;
	int ok;

	if (tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s, "UPDATE pairs SET suspect = ?2 WHERE id = ?1");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, pair_id);
		bind_text(st, 2, why);
		ok = step_done(s, st, "pair suspect") == 0;
		store_i_release(s, st);
	}
	return tx_end(s, ok);
}

int
store_hygiene_suspect(struct store *s, char **out_why, int64_t pair_id)
{
	sqlite3_stmt *st =
	    store_i_stmt(s, "SELECT suspect FROM pairs WHERE id = ?1");
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
		store_i_release(s, st);
		return 0;
	}
	store_i_release(s, st);
	if (rc == SQLITE_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld not found",
		    (long long)pair_id);
	return dberr(s, "pair suspect");
}
