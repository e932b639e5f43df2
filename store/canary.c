/*
 * The canary's tables (store/canary.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "store/canary.h"
#include "store/store_int.h"
void
store_canary_host_release(struct store_canary_host *h)
{
	free(h->quarantined);
	memset(h, 0, sizeof(*h));
}

int
store_canary_host_get(struct store *s, struct store_canary_host *out,
    const char *host, const char *job)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT h.id, h.quarantined, h.quarantined_at, p.id,"
	    " coalesce((SELECT max(j.updated) FROM jobs j"
	    "  WHERE j.pair_id = p.id), p.created),"
	    " EXISTS (SELECT 1 FROM jobs j WHERE j.pair_id = p.id"
	    "  AND j.state IN ('queued', 'running'))"
	    " FROM hosts h LEFT JOIN pairs p ON p.id = (SELECT max(q.id)"
	    "  FROM pairs q WHERE q.host_id = h.id AND q.canary <> 0"
	    "  AND q.name = ?2)"
	    " WHERE h.name = ?1");
	int rc;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, host);
	store_i_bind_text(st, 2, job);
	rc = db_step(st);
	if (rc == DB_ROW) {
		out->host_id = db_col_int64(st, 0);
		out->quarantined = store_i_col_dup(st, 1);
		out->quarantined_at = db_col_int64(st, 2);
		out->last_pair = db_col_int64(st, 3);
		out->last_done = db_col_int64(st, 4);
		out->open = db_col_int(st, 5);
	}
	store_i_release(s, st);
	if (rc == DB_ROW)
		return 0;
	if (rc == DB_DONE)
		return ERR_NOTFOUND;
	return store_i_dberr(s, "canary host");
}

int
store_canary_unjudged(struct store *s, int64_t **out, size_t *out_n, size_t max)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT id FROM pairs WHERE canary = 1 AND analysed = 1"
	    " AND NOT EXISTS (SELECT 1 FROM comparisons c"
	    "  WHERE c.pair_id = pairs.id AND c.final = 0)"
	    " ORDER BY id LIMIT ?1");
	int rc;

	*out = NULL;
	*out_n = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, (int64_t)max);
	while ((rc = db_step(st)) == DB_ROW) {
		*out = xreallocarray(*out, *out_n + 1, sizeof(**out));
		(*out)[(*out_n)++] = db_col_int64(st, 0);
	}
	store_i_count_steps(s, st);
	store_i_release(s, st);
	return rc == DB_DONE ? 0 : store_i_dberr(s, "canary pairs");
}

void
store_canary_findings_release(struct store_canary_finding *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(f[i].metric);
		free(f[i].verdict);
	}
	free(f);
}

int
store_canary_finding_list(struct store *s, struct store_canary_finding **out,
    size_t *out_n, int64_t *out_host, int64_t pair_id)
{
	/* Judged metrics only: memcg telemetry is shown, not judged. */
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT metric, verdict, change_pct FROM comparisons"
	    " WHERE pair_id = ?1 AND final = 1 AND verdict <> 'info'"
	    " UNION ALL SELECT hs.metric, 'change point', cp.change_pct"
	    " FROM history_points hp JOIN change_points cp"
	    "  ON cp.series_id = hp.series_id AND cp.seq = hp.seq"
	    " JOIN history_series hs ON hs.id = hp.series_id"
	    " WHERE hp.pair_id = ?1"
	    " ORDER BY 1");
	int rc;

	*out = NULL;
	*out_n = 0;
	*out_host = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	while ((rc = db_step(st)) == DB_ROW) {
		struct store_canary_finding *f;

		*out = xreallocarray(*out, *out_n + 1, sizeof(**out));
		f = &(*out)[(*out_n)++];
		f->metric = store_i_col_dup(st, 0);
		f->verdict = store_i_col_dup(st, 1);
		f->change_pct =
		    db_col_type(st, 2) == DB_NULL ? 0 : db_col_double(st, 2);
	}
	store_i_release(s, st);
	if (rc != DB_DONE)
		return store_i_dberr(s, "canary findings");
	if ((st = store_i_stmt(s, "SELECT host_id FROM pairs WHERE id = ?1")) ==
	    NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	if (db_step(st) == DB_ROW)
		*out_host = db_col_int64(st, 0);
	store_i_release(s, st);
	return 0;
}

static int
canary_judge_once(
    struct store *s, int64_t pair_id, const char *why, int64_t now)
{
	struct db_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s, "UPDATE pairs SET canary = 2 WHERE id = ?1");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, pair_id);
		ok = store_i_step_done(s, st, "canary judged") == 0;
		store_i_release(s, st);
	}
	if (ok && why != NULL) {
		st = store_i_stmt(s,
		    "UPDATE hosts SET quarantined = ?2, quarantined_at = ?3"
		    " WHERE id = (SELECT host_id FROM pairs WHERE id = ?1)"
		    " AND quarantined IS NULL");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, pair_id);
			store_i_bind_text(st, 2, why);
			db_bind_int64(st, 3, now);
			ok = store_i_step_done(s, st, "quarantine") == 0;
			store_i_release(s, st);
		}
	}
	return store_i_tx_end(s, ok);
}

int
store_canary_judge(
    struct store *s, int64_t pair_id, const char *why, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, canary_judge_once(s, pair_id, why, now));
	return rc;
}

static int
host_clear_once(struct store *s, const char *host)
{
	struct db_stmt *st;
	int ok, n = 0;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "UPDATE hosts SET quarantined = NULL, quarantined_at = NULL"
	    " WHERE name = ?1");
	if ((ok = st != NULL)) {
		store_i_bind_text(st, 1, host);
		ok = store_i_step_done(s, st, "clear quarantine") == 0;
		n = db_changes(s->db);
		store_i_release(s, st);
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (n == 0)
		return err_setc(
		    &s->err, ERR_NOTFOUND, "no host named '%s'", host);
	return 0;
}

int
store_host_clear(struct store *s, const char *host)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, host_clear_once(s, host));
	return rc;
}

void
store_canary_moments_release(struct store_canary_moment *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(m[i].metric);
	free(m);
}

int
store_canary_moment_list(struct store *s, struct store_canary_moment **out,
    size_t *out_n, int64_t host_id, const char *job, size_t pairs)
{
	/* Measured runs only (idx < max_runs: not a profiled extra run). */
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT m.name, j.id, count(*), sum(m.value),"
	    " sum(m.value * m.value)"
	    " FROM pairs p JOIN jobs j ON j.pair_id = p.id"
	    " JOIN runs r ON r.job_id = j.id AND r.status = 'ok'"
	    "  AND r.idx < j.max_runs"
	    " JOIN metrics m ON m.run_id = r.id"
	    " WHERE p.id IN (SELECT id FROM pairs WHERE host_id = ?1"
	    "  AND canary <> 0 AND name = ?2 ORDER BY id DESC LIMIT ?3)"
	    " AND m.name NOT LIKE 'memcg.%'"
	    " GROUP BY m.name, j.id ORDER BY m.name, j.id");
	int rc;

	*out = NULL;
	*out_n = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, host_id);
	store_i_bind_text(st, 2, job);
	db_bind_int64(st, 3, (int64_t)pairs);
	while ((rc = db_step(st)) == DB_ROW) {
		struct store_canary_moment *m;

		*out = xreallocarray(*out, *out_n + 1, sizeof(**out));
		m = &(*out)[(*out_n)++];
		m->metric = store_i_col_dup(st, 0);
		m->job_id = db_col_int64(st, 1);
		m->n = db_col_int64(st, 2);
		m->sum = db_col_double(st, 3);
		m->sumsq = db_col_double(st, 4);
	}
	store_i_release(s, st);
	return rc == DB_DONE ? 0 : store_i_dberr(s, "canary moments");
}

int
store_canary_floor(struct store *s, double *out_pct, int64_t pair_id,
    const char *metric, size_t pairs, size_t least)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT abs(c.change_pct) FROM pairs me"
	    " JOIN pairs p ON p.host_id = me.host_id AND p.canary <> 0"
	    "  AND p.id <> me.id"
	    " JOIN comparisons c ON c.pair_id = p.id AND c.metric = ?2"
	    "  AND c.final = 1 AND c.change_pct IS NOT NULL"
	    " WHERE me.id = ?1 AND me.canary = 0"
	    " ORDER BY p.id DESC LIMIT ?3");
	double max = 0;
	size_t n = 0;
	int rc;

	*out_pct = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	store_i_bind_text(st, 2, metric);
	db_bind_int64(st, 3, (int64_t)pairs);
	while ((rc = db_step(st)) == DB_ROW) {
		double v = db_col_double(st, 0);

		if (v > max)
			max = v;
		n++;
	}
	store_i_release(s, st);
	if (rc != DB_DONE)
		return store_i_dberr(s, "canary floor");
	if (n >= least)
		*out_pct = max;
	return 0;
}
