/*
 * The store: a series' time to report (daemon/series_latency.h), each
 * stage's time read from the tables that record it: its mail's date,
 * when it was seen and applied, its pairs' runs and verdicts, and the
 * first report mailed.  All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "store/series.h"
#include "store/store_int.h"

/* ---- time to report ---- */

int
store_series_latency_get(
    struct store *s, struct store_series_latency *out, int64_t id)
{
	/* Its pairs: those whose candidate is one of its commits (the
	 * tip, or each patch's with every_patch), bisections' left out. */
	struct db_stmt *st = store_i_stmt(s,
	    "WITH pr AS (SELECT p.id, p.created FROM pairs p"
	    "  JOIN jobs c ON c.id = p.cand_job_id"
	    "  WHERE c.commit_id IN (SELECT commit_id FROM series_patches"
	    "   WHERE series_id = ?1 UNION SELECT commit_id FROM series"
	    "   WHERE id = ?1) AND p.bisect_id IS NULL),"
	    " rs AS (SELECT r.created, r.duration_s FROM runs r"
	    "  JOIN jobs j ON j.id = r.job_id WHERE j.pair_id IN"
	    "  (SELECT id FROM pr))"
	    " SELECT coalesce(s.date, 0), coalesce(s.created, 0),"
	    " coalesce((SELECT min(created) FROM pr),"
	    "  CASE WHEN s.state = 'applied' THEN s.updated END, 0),"
	    " coalesce((SELECT min(created - CAST(coalesce(duration_s, 0)"
	    "  AS INTEGER)) FROM rs), 0),"
	    " coalesce((SELECT max(created) FROM rs), 0),"
	    " coalesce((SELECT max(coalesce(updated, created))"
	    "  FROM comparisons WHERE final = 1"
	    "  AND pair_id IN (SELECT id FROM pr)), 0),"
	    " coalesce((SELECT min(a.sent) FROM alerts a"
	    "  JOIN alert_reports ar ON ar.id = a.report_id"
	    "  WHERE ar.series_id = s.id AND a.kind = 'email'"
	    "  AND a.state = 'sent'), 0)"
	    " FROM series s WHERE s.id = ?1");
	int rc;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	rc = db_step(st);
	if (rc == DB_ROW) {
		out->id = id;
		out->posted = db_col_int64(st, 0);
		out->seen = db_col_int64(st, 1);
		out->applied = db_col_int64(st, 2);
		out->first_run = db_col_int64(st, 3);
		out->last_run = db_col_int64(st, 4);
		out->verdict = db_col_int64(st, 5);
		out->mailed = db_col_int64(st, 6);
	}
	store_i_release(s, st);
	if (rc == DB_DONE)
		return err_setc(
		    &s->err, ERR_NOTFOUND, "no series %lld", (long long)id);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "series latency");
}

int
store_series_latency_list(struct store *s, struct store_series_latency **out,
    size_t *out_n, int64_t since, size_t max)
{
	/* The newest max series by id (series are recorded in time
	 * order), those seen before since left out: at most max rows read,
	 * where a filter on created would walk every older series. */
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT id, coalesce(created, 0) FROM series"
	    " ORDER BY id DESC LIMIT ?1");
	int64_t *ids = NULL;
	size_t n = 0, i;
	int rc;

	*out = NULL;
	*out_n = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, (int64_t)max);
	while ((rc = db_step(st)) == DB_ROW) {
		if (db_col_int64(st, 1) < since)
			continue;
		ids = xreallocarray(ids, n + 1, sizeof(*ids));
		ids[n++] = db_col_int64(st, 0);
	}
	store_i_release(s, st);
	if (rc != DB_DONE) {
		free(ids);
		return store_i_dberr(s, "series latencies");
	}
	*out = xcalloc(n ? n : 1, sizeof(**out));
	for (i = 0; i < n && rc == DB_DONE; i++) {
		int r = store_series_latency_get(s, &(*out)[i], ids[i]);

		if (r == ERR_NOTFOUND) /* deleted meanwhile: all unknown */
			store_errclear(s);
		else if (r != 0)
			rc = -1;
	}
	free(ids);
	if (rc != DB_DONE) {
		free(*out);
		*out = NULL;
		return -1;
	}
	*out_n = n;
	return 0;
}
