/*
 * The schema: its migration steps, one per version, and the runner
 * that takes a database from its user_version to the one asked for.
 */
#include <stdio.h>

#include "common/err.h"
#include "store/alerts.h"
#include "store/bisect.h"
#include "store/builds.h"
#include "store/claim.h"
#include "store/counts.h"
#include "store/leases.h"
#include "store/mail_commands.h"
#include "store/mail_skipped.h"
#include "store/series_pack.h"
#include "store/series_quota.h"
#include "store/store.h"
#include "store/store_int.h"

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
	 * waiting for the watcher to apply them (store/series.c).
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
	 * v19 (every page fast at 1M runs): the counts the
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
	 * v20: each job's summary of a metric (the history
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
	 * v21: the jobs a history page can show, a row a job
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
	 * v22: a pair's history points, for a pair's change
	 * points (the alert report, a canary's findings): history_points
	 * is keyed by series, so "WHERE pair_id = ?" scanned all of them,
	 * once a pair for every group the alert worker weighs (at 1M runs,
	 * 100,000 points, ~40 % of a core while idle).
	 */
	"CREATE INDEX history_points_pair ON history_points(pair_id);",
	/*
	 * v23: the alert worker's due pairs (store/alerts.h):
	 * each pass grouped every analysed pair with its final comparisons
	 * to find the few it had not seen (at 1M runs, 50,000 pairs, 180 ms
	 * of a core every 5 s while idle).  And the canaries still to judge:
	 * "canary = 1" cannot use pairs_canary (WHERE canary <> 0), so each
	 * canary pass read every pair (another 40 ms every 5 s).
	 */
	STORE_ALERT_DUE_MIGRATION
	"CREATE INDEX pairs_canary_unjudged ON pairs(id) WHERE canary = 1;",
	/*
	 * v24: the queue in pair order, for claims
	 * (store/jobs.c claim_pick): a claim sorted every queued job under
	 * the write lock (8,000 queued: 19 ms, make bench-fleet).
	 */
	"CREATE INDEX jobs_queued ON jobs(state, pair_id) WHERE state = "
	"'queued';",
	/*
	 * v25: each pair's count of queued jobs, kept by
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
	 * v26: a tree's commits.  /api/v1/trees counted each
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
	 * v27: the regressions' filters.  A tree, host or
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
	 * v28: the alerts' filters.  A state or kind walked
	 * every alert newest first, and a commit (the commit page asks
	 * for its alerts on each view) joined every alert to its report
	 * and commit: the table grows with every delivery.  A commit's
	 * alerts come from alert_reports_commit; these two are the rest.
	 */
	"CREATE INDEX alerts_state ON alerts(state);"
	"CREATE INDEX alerts_kind ON alerts(kind);",
	/*
	 * v29: a tree's history.  history_jobs listed a
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
	 * v30: a history's time range.  A page of a range of
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
	 * v31: a branch's commits.  A commit's branches are a
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
	 * v32: the store's generation, what the reply cache keys
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
	/* v34: an inbox's series by time (store/series_quota.h). */
	STORE_SERIES_QUOTA_MIGRATION,
	/* v35: the commands read by mail (store/mail_commands.h). */
	STORE_MAIL_COMMANDS_MIGRATION,
	/* v36: shared kernel builds and their artifacts (store/builds.h). */
	STORE_BUILDS_MIGRATION,
	/* v37: a mail command as read, beside its line
	 * (store/mail_commands.h); patch mail taken into no series, with
	 * why (store/mail_skipped.h). */
	STORE_MAIL_COMMANDS_PARSED_MIGRATION STORE_MAIL_SKIPPED_MIGRATION,
	/* v38: the leases on the daemons' workers (store/leases.h). */
	STORE_LEASES_MIGRATION,
	/* v39: a series' alert reports by an index (the series page's
	 * first mail sent), not by a scan of every report. */
	"CREATE INDEX alert_reports_series ON alert_reports(series_id)"
	" WHERE series_id IS NOT NULL;",
	/* v40: the counts as their readers take them (store/counts.h). */
	STORE_COUNTS_MIGRATION,
	/* v41: PostgreSQL's indexes of alerts by state and kind and of a
	 * tree's commits end in the id (migrate_pg.c); SQLite's end in the
	 * rowid, which is that id: nothing to add. */
	"",
	/* v42: an applied series' pack, for every daemon of a database
	 * (store/series_pack.h). */
	STORE_SERIES_PACK_MIGRATION,
	/* v43: the claim id a job's lease was made for (store/claim.h). */
	STORE_CLAIM_ID_MIGRATION,
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == STORE_VERSION,
    "STORE_VERSION must match the migration steps");

int
store_user_version(struct store *s)
{
	struct db_stmt *st;
	int v = -1;

	if (db_backend(s->db) == DB_PG)
		return store_i_pg_version(s);
	if ((st = store_i_stmt(s, "PRAGMA user_version")) == NULL)
		return -1;
	if (db_step(st) == DB_ROW)
		v = db_col_int(st, 0);
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
	struct db_stmt *st = store_i_stmt(s, "PRAGMA foreign_key_check");
	int rc;

	if (st == NULL)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW)
		err_set(&s->err,
		    "migration: table %s row %lld refers to a missing row of "
		    "%s",
		    db_col_text(st, 0), (long long)db_col_int64(st, 1),
		    db_col_text(st, 2));
	else if (rc != DB_DONE)
		store_i_dberr(s, "foreign key check");
	store_i_release(s, st);
	return rc == DB_DONE ? 0 : -1;
}

int
store_i_version_known(struct store *s, int v)
{
	if (v > STORE_VERSION)
		return err_set(&s->err,
		    "database schema version %d is newer than this "
		    "perfwatchd (%d)",
		    v, STORE_VERSION);
	return 0;
}

static int
migrate_tx(struct store *s, int target)
{
	char q[64];
	int v, from;

	if (store_i_tx_begin(s) == -1)
		return -1;
	/* Read inside the write transaction: two processes opening a new
	 * file at once must not both run step 1. */
	if ((v = store_user_version(s)) < 0)
		return store_i_tx_end(s, 0);
	if (store_i_version_known(s, v) != 0)
		return store_i_tx_end(s, 0);
	for (from = v; v < target; v++) {
		if (store_i_exec(s, migrations[v]) == -1)
			return store_i_tx_end(s, 0);
		snprintf(q, sizeof(q), "PRAGMA user_version = %d", v + 1);
		if (store_i_exec(s, q) == -1)
			return store_i_tx_end(s, 0);
	}
	if (from < target && fk_check(s) != 0)
		return store_i_tx_end(s, 0);
	return store_i_tx_end(s, 1);
}

/*
 * Migrations run with foreign keys off (the pragma is a no-op inside a
 * transaction, so around it): SQLite's way to rebuild a table that other
 * tables refer to (v16).
 */
int
store_i_migrate(struct store *s, int target)
{
	int r;

	if (db_backend(s->db) == DB_PG)
		return store_i_migrate_pg(s, target);
	if (store_i_exec(s, "PRAGMA foreign_keys = OFF") == -1)
		return -1;
	r = migrate_tx(s, target);
	if (store_i_exec(s, "PRAGMA foreign_keys = ON") == -1)
		return -1;
	return r;
}
