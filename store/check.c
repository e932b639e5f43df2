/* The store's consistency checks (store/check.h). */
#include "store/check.h"

#include "store/db.h"
#include "store/store_int.h"

struct rule {
	const char *name, *rule;
	int sqlite_only;
	const char *sql; /* one row: the count of rows that break it */
};

static const struct rule rules[] = {
	{ "integrity", "SQLite's quick_check finds the file sound", 1,
	    "SELECT count(*) FROM pragma_quick_check"
	    " WHERE quick_check <> 'ok'" },
	{ "foreign_keys", "every reference names a row that is there", 1,
	    "SELECT count(*) FROM pragma_foreign_key_check" },
	{ "runs_twice", "a job's run index is stored once", 0,
	    "SELECT count(*) FROM (SELECT job_id, idx FROM runs"
	    " GROUP BY job_id, idx HAVING count(*) > 1) t" },
	{ "runs_without_job", "each run belongs to a job that is there", 0,
	    "SELECT count(*) FROM runs r"
	    " WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = r.job_id)" },
	{ "metrics_without_run", "each metric belongs to a run that is there",
	    0,
	    "SELECT count(*) FROM metrics m"
	    " WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = m.run_id)" },
	{ "pairs_without_jobs", "a pair's two jobs are there", 0,
	    "SELECT count(*) FROM pairs p WHERE (p.base_job_id IS NOT NULL"
	    " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = p.base_job_id))"
	    " OR (p.cand_job_id IS NOT NULL AND NOT EXISTS"
	    " (SELECT 1 FROM jobs j WHERE j.id = p.cand_job_id))" },
	{ "jobs_over_max", "no job has more runs than its max_runs and one", 0,
	    "SELECT count(*) FROM jobs j WHERE"
	    " (SELECT count(*) FROM runs r WHERE r.job_id = j.id)"
	    " > j.max_runs + 1" },
	{ "pair_queue_counts",
	    "a pair's queued is the count of its queued jobs", 0,
	    "SELECT count(*) FROM pairs p WHERE p.queued <>"
	    " (SELECT count(*) FROM jobs j"
	    " WHERE j.pair_id = p.id AND j.state = 'queued')" },
	{ "counts_runs", "counts' runs is the count of the runs", 0,
	    "SELECT count(*) FROM count_totals c WHERE c.name = 'runs'"
	    " AND c.n <> (SELECT count(*) FROM runs)" },
	{ "counts_jobs", "counts' jobs.STATE is the count of jobs in STATE", 0,
	    "SELECT count(*) FROM count_totals c WHERE c.name LIKE 'jobs.%'"
	    " AND c.n <> (SELECT count(*) FROM jobs j"
	    " WHERE 'jobs.' || j.state = c.name)" },
	{ "counts_regressions",
	    "counts' regressions.STATE is the count of regressions in STATE", 0,
	    "SELECT count(*) FROM count_totals c WHERE c.name LIKE "
	    "'regressions.%'"
	    " AND c.n <> (SELECT count(*) FROM regressions g"
	    " WHERE 'regressions.' || g.state = c.name)" },
	{ "comparisons_without_pair",
	    "each comparison belongs to a pair that is there", 0,
	    "SELECT count(*) FROM comparisons c"
	    " WHERE NOT EXISTS (SELECT 1 FROM pairs p WHERE p.id = "
	    "c.pair_id)" },
};
#define NRULES (sizeof(rules) / sizeof(rules[0]))

static int
applies(const struct store *s, const struct rule *r)
{
	return !r->sqlite_only || db_backend(s->db) == DB_SQLITE;
}

size_t
store_check_count(const struct store *s)
{
	size_t i, n = 0;

	for (i = 0; i < NRULES; i++)
		n += (size_t)applies(s, &rules[i]);
	return n;
}

int
store_check(struct store *s, struct store_check_result *out)
{
	size_t i, n = 0;
	int r = 0;

	if (store_read_begin(s) != 0)
		return -1;
	for (i = 0; i < NRULES && r == 0; i++) {
		struct db_stmt *st;

		if (!applies(s, &rules[i]))
			continue;
		out[n].name = rules[i].name;
		out[n].rule = rules[i].rule;
		out[n].bad = 0;
		if ((st = store_i_stmt(s, rules[i].sql)) == NULL) {
			r = -1;
			break;
		}
		if (db_step(st) == DB_ROW)
			out[n].bad = db_col_int64(st, 0);
		else
			r = store_i_dberr(s, rules[i].name);
		store_i_release(s, st);
		n++;
	}
	store_read_end(s);
	return r;
}
