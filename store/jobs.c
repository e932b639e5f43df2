/*
 * The store: pairs and jobs, runs, logs, a job's end (finish, cancel,
 * retry) and the job API rows; claims and leases are in claim.c, host
 * registration in hosts.c.  All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "store/builds.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/store_int.h"

/* ---- pairs ---- */

int
store_i_job_insert(struct store *s, int64_t *out, int64_t pair,
    const char *name, const char *point, const struct store_job_new *j,
    int64_t now)
{
	struct db_stmt *st = store_i_stmt(s,
	    "INSERT INTO jobs (pair_id, role, name, point, params, labels,"
	    " max_attempts, runs, max_runs, created, updated, commit_id)"
	    " VALUES (?1, ?2, ?3, ?4, json(?5), json(?6), ?7, ?8, ?9, ?10,"
	    " ?10, ?11)");
	int r = -1;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair);
	store_i_bind_text(st, 2, j->role);
	store_i_bind_text(st, 3, name);
	store_i_bind_text(st, 4, point ? point : "");
	store_i_bind_text(st, 5, j->spec_json);
	store_i_bind_text(st, 6, j->labels_json ? j->labels_json : "[]");
	db_bind_int64(st, 7, j->max_attempts);
	db_bind_int64(st, 8, j->runs);
	db_bind_int64(st, 9, j->max_runs);
	db_bind_int64(st, 10, now);
	if (j->commit_id > 0)
		db_bind_int64(st, 11, j->commit_id);
	if (db_step(st) == DB_DONE) {
		*out = db_last_id(s->db);
		r = 0;
	} else {
		store_i_dberr(s, "insert job");
	}
	store_i_release(s, st);
	/* A kernel job goes through its shared build (store/builds.h). */
	if (r == 0 && s->version >= STORE_BUILDS_VERSION)
		r = store_i_build_link(
		    s, *out, j->spec_json, j->max_attempts, now);
	return r;
}

/* Records which jobs are the pair's base and candidate. */
int
store_i_pair_sides(struct store *s, int64_t pair, int64_t base, int64_t cand)
{
	struct db_stmt *st = store_i_stmt(s,
	    "UPDATE pairs SET base_job_id = ?2, cand_job_id = ?3"
	    " WHERE id = ?1");
	int r;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair);
	db_bind_int64(st, 2, base);
	db_bind_int64(st, 3, cand);
	r = store_i_step_done(s, st, "pair sides");
	store_i_release(s, st);
	return r;
}

static int
pair_create_once(struct store *s, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, const char *name, const char *point,
    const struct store_job_new *base, const struct store_job_new *cand,
    int64_t now)
{
	struct db_stmt *st;
	int64_t pair = 0, b = 0, c = 0;
	int ok = 0;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(
	    s, "INSERT INTO pairs (name, point, created) VALUES (?1, ?2, ?3)");
	if (st != NULL) {
		store_i_bind_text(st, 1, name);
		store_i_bind_text(st, 2, point ? point : "");
		db_bind_int64(st, 3, now);
		if (db_step(st) == DB_DONE) {
			pair = db_last_id(s->db);
			ok = 1;
		} else {
			store_i_dberr(s, "insert pair");
		}
		store_i_release(s, st);
	}
	ok = ok &&
	    store_i_job_insert(s, &b, pair, name, point, base, now) == 0 &&
	    store_i_job_insert(s, &c, pair, name, point, cand, now) == 0 &&
	    store_i_pair_sides(s, pair, b, c) == 0 &&
	    store_i_group_assign(s, pair) == 0;
	if (store_i_tx_end(s, ok) == -1)
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
store_pair_create(struct store *s, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, const char *name, const char *point,
    const struct store_job_new *base, const struct store_job_new *cand,
    int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    pair_create_once(
	        s, out_pair, out_base, out_cand, name, point, base, cand, now));
	return rc;
}

/* A run's metrics go in by statements of 16, 4 or 1 rows: one round
 * trip for many to a database server.  Literals, so that the statement
 * cache (store_i_stmt) keeps them. */
#define METRIC_ROW "(?, ?, ?, ?, ?)"
#define METRIC_ROWS4 METRIC_ROW ", " METRIC_ROW ", " METRIC_ROW ", " METRIC_ROW
#define METRIC_INSERT \
	"INSERT INTO metrics (run_id, name, value, unit, better) VALUES "
static const char metric_insert4[] = METRIC_INSERT METRIC_ROWS4;
static const char metric_insert16[] = METRIC_INSERT METRIC_ROWS4
    ", " METRIC_ROWS4 ", " METRIC_ROWS4 ", " METRIC_ROWS4;

/* Which of the k metrics from i a constraint refuses: the first whose
 * name an earlier one of the run has, or whose 'better' is not one the
 * schema takes; i + k when none. */
static size_t
metric_bad(const struct store_run *run, size_t i, size_t k)
{
	size_t j, e;

	for (j = i; j < i + k; j++) {
		const char *b = run->metrics[j].better;

		for (e = 0; e < j; e++)
			if (strcmp(run->metrics[e].name,
			        run->metrics[j].name) == 0)
				return j;
		if (b == NULL ||
		    (strcmp(b, "higher") != 0 && strcmp(b, "lower") != 0 &&
		        strcmp(b, "info") != 0))
			return j;
	}
	return i + k;
}

/* Which of the k metrics from i a constraint refused (metric_bad); the
 * first of them when it cannot tell. */
static size_t
metric_refused(const struct store_run *run, size_t i, size_t k)
{
	size_t j = metric_bad(run, i, k);

	return j < i + k ? j : i;
}

static int
metric_invalid(struct store *s, const struct store_run *run, size_t j)
{
	return err_setc(&s->err, ERR_INVALID,
	    "field 'metrics[%zu]': duplicate or invalid metric '%s'", j,
	    run->metrics[j].name);
}

/* The run's row as ?1 to ?10 of its INSERT. */
static void
bind_run(struct db_stmt *st, int64_t host_id, const struct store_run *run,
    int64_t now, int64_t attempt)
{
	db_bind_int64(st, 1, run->job_id);
	db_bind_int64(st, 2, run->index);
	db_bind_int64(st, 3, host_id);
	db_bind_int64(st, 4, attempt);
	store_i_bind_text(st, 5, run->status);
	if (run->duration_s >= 0)
		db_bind_double(st, 6, run->duration_s);
	store_i_bind_text(st, 7, run->error);
	db_bind_int64(st, 8, now);
	store_i_bind_text(st, 9, run->profile);
	store_i_bind_text(st, 10, run->host_state);
}

/*
 * PostgreSQL: the run, its metrics (as arrays) and its raw output in
 * one statement, one round trip instead of one for each (and for each
 * 16 metrics).  The same answers as the statements one by one: the run
 * stored already (ERR_EXISTS: nothing inserted, as the ON CONFLICT
 * leaves the metrics nothing to join), a metric a constraint refused
 * (ERR_INVALID naming it: the statement failed whole), else the run's
 * id.  Its tag counts the metrics, so that the commit moves the store's
 * generation (gen_bump).  A run without metrics, whose statement would
 * return no row either way, takes the statements one by one.
 */
static const char run_insert_pg[] =
    "WITH r AS (INSERT INTO runs (job_id, idx, host_id, attempt, status,"
    " duration_s, error, created, profile, host_state)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
    " ON CONFLICT (job_id, idx) DO NOTHING RETURNING id),"
    " x AS (INSERT INTO raw_outputs (run_id, data, size, truncated)"
    " SELECT id, ?15, ?16, ?17 FROM r WHERE ?18 = 1)"
    " INSERT INTO metrics (run_id, name, value, unit, better)"
    " SELECT r.id, t.name, t.value, t.unit, t.better FROM r,"
    " unnest(?11::text[], ?12::float8[], ?13::text[], ?14::text[])"
    " WITH ORDINALITY AS t(name, value, unit, better, n) ORDER BY t.n"
    " RETURNING run_id";

static int
run_insert_one(struct store *s, int64_t *run_id, int64_t host_id,
    const struct store_run *run, int64_t now, int64_t attempt, int *ok)
{
	struct db_stmt *st = store_i_stmt(s, run_insert_pg);
	size_t n = run->nmetrics, i, rawlen = 0;
	const char **names, **units, **betters;
	double *values;
	int r = 0, rc;

	if ((*ok = st != NULL) == 0)
		return 0;
	names = xcalloc(3 * n, sizeof(*names));
	units = names + n;
	betters = units + n;
	values = xcalloc(n, sizeof(*values));
	for (i = 0; i < n; i++) {
		names[i] = run->metrics[i].name;
		units[i] = run->metrics[i].unit ? run->metrics[i].unit : "";
		betters[i] = run->metrics[i].better;
		values[i] = run->metrics[i].value;
	}
	bind_run(st, host_id, run, now, attempt);
	db_bind_text_array(st, 11, names, n);
	db_bind_double_array(st, 12, values, n);
	db_bind_text_array(st, 13, units, n);
	db_bind_text_array(st, 14, betters, n);
	if (run->raw != NULL)
		rawlen = run->raw_len < CAP_RAW_OUTPUT ? run->raw_len
		                                       : CAP_RAW_OUTPUT;
	/* Bound as bytes either way: one prepared statement for both. */
	db_bind_blob(st, 15, run->raw ? run->raw : "", rawlen);
	db_bind_int64(st, 16, run->raw ? (int64_t)run->raw_len : 0);
	db_bind_int64(st, 17, run->raw != NULL && rawlen < run->raw_len);
	db_bind_int64(st, 18, run->raw != NULL);
	rc = db_step(st);
	if (rc == DB_ROW)
		*run_id = db_col_int64(st, 0);
	else if (rc == DB_DONE)
		r = err_setc(&s->err, ERR_EXISTS,
		    "run %lld of job %lld is already stored",
		    (long long)run->index, (long long)run->job_id);
	else if (rc == DB_CONSTRAINT && (i = metric_bad(run, 0, n)) < n)
		r = metric_invalid(s, run, i);
	else
		*ok = store_i_dberr(s, "insert run") == 0;
	store_i_release(s, st);
	free(names);
	free(values);
	return r;
}

/* The statement that inserts k (16, 4 or 1) metrics. */
static struct db_stmt *
metric_stmt(struct store *s, size_t k)
{
	if (k == 16)
		return store_i_stmt(s, metric_insert16);
	if (k == 4)
		return store_i_stmt(s, metric_insert4);
	return store_i_cached(s, S_METRIC_INSERT,
	    "INSERT INTO metrics (run_id, name, value, unit, better)"
	    " VALUES (?1, ?2, ?3, ?4, ?5)");
}

static int
run_add_once(
    struct store *s, int64_t host_id, const struct store_run *run, int64_t now)
{
	struct db_stmt *st;
	int64_t max_runs = 0, attempt = 0, run_id = 0;
	size_t i, j, k, rawlen;
	int r, ok, rc;
	/* PostgreSQL: the run with its metrics in one statement. */
	int pg = db_backend(s->db) == DB_PG && run->nmetrics > 0;

	if (store_i_tx_begin(s) == -1)
		return -1;
	/* One lookup: existence, range and lease.  The range is checked
	 * first, so a bad index is a 400 even without the lease. */
	r = store_i_job_lease(s, &max_runs, &attempt, run->job_id, host_id);
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
	if (r == 0 && pg) {
		r = run_insert_one(s, &run_id, host_id, run, now, attempt, &ok);
	} else if (r == 0 || r == ERR_CONFLICT) {
		st = store_i_cached(s, S_RUN_INSERT,
		    "INSERT INTO runs (job_id, idx, host_id, attempt, status,"
		    " duration_s, error, created, profile, host_state)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
		    " ON CONFLICT (job_id, idx) DO NOTHING RETURNING id");
		ok = st != NULL;
		if (ok && r == 0) {
			bind_run(st, host_id, run, now, attempt);
			rc = db_step(st);
			if (rc == DB_ROW)
				run_id = db_col_int64(st, 0);
			else if (rc == DB_DONE)
				r = err_setc(&s->err, ERR_EXISTS,
				    "run %lld of job %lld is already stored",
				    (long long)run->index,
				    (long long)run->job_id);
			else
				ok = store_i_dberr(s, "insert run") == 0;
			db_reset(st);
		}
		if (ok && r == ERR_CONFLICT) {
			/* Stored already from this host?  Then it is a
			 * repeat, not a conflict.  The same index measured
			 * by another host (the job was requeued away from
			 * this one) stays a conflict: this run is refused. */
			struct db_stmt *q = store_i_stmt(s,
			    "SELECT 1 FROM runs WHERE job_id = ?1 AND idx = "
			    "?2 AND host_id IS NOT DISTINCT FROM ?3");

			if ((ok = q != NULL)) {
				db_bind_int64(q, 1, run->job_id);
				db_bind_int64(q, 2, run->index);
				db_bind_int64(q, 3, host_id);
				if (db_step(q) == DB_ROW) {
					err_clear(&s->err);
					r = err_setc(&s->err, ERR_EXISTS,
					    "run %lld of job %lld is already "
					    "stored",
					    (long long)run->index,
					    (long long)run->job_id);
				}
				store_i_release(s, q);
			}
		}
	}
	for (i = 0; !pg && ok && r == 0 && i < run->nmetrics; i += k) {
		k = run->nmetrics - i;
		k = k >= 16 ? 16 : k >= 4 ? 4 : 1;
		st = metric_stmt(s, k);
		if ((ok = st != NULL)) {
			for (j = 0; j < k; j++) {
				const struct store_metric *m =
				    &run->metrics[i + j];
				int b = (int)j * 5;

				db_bind_int64(st, b + 1, run_id);
				store_i_bind_text(st, b + 2, m->name);
				db_bind_double(st, b + 3, m->value);
				store_i_bind_text(
				    st, b + 4, m->unit ? m->unit : "");
				store_i_bind_text(st, b + 5, m->better);
			}
			rc = db_step(st);
			if (rc == DB_CONSTRAINT) {
				r = metric_invalid(
				    s, run, metric_refused(run, i, k));
			} else if (rc != DB_DONE) {
				ok = store_i_dberr(s, "insert metric") == 0;
			}
			if (k == 1)
				db_reset(st);
			else
				store_i_release(s, st);
		}
	}
	if (!pg && ok && r == 0 && run->raw != NULL) {
		rawlen = run->raw_len;
		if (rawlen > CAP_RAW_OUTPUT)
			rawlen = CAP_RAW_OUTPUT;
		st = store_i_cached(s, S_RAW_INSERT,
		    "INSERT INTO raw_outputs (run_id, data, size, truncated)"
		    " VALUES (?1, ?2, ?3, ?4)");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, run_id);
			db_bind_blob(st, 2, run->raw, rawlen);
			db_bind_int64(st, 3, (int64_t)run->raw_len);
			db_bind_int64(st, 4, rawlen < run->raw_len);
			ok = store_i_step_done(s, st, "insert raw output") == 0;
			db_reset(st);
		}
	}
	/* An expected refusal rolls back whatever was written. */
	if (store_i_tx_end(s, ok && r == 0) == -1 && r == 0)
		return -1;
	return ok ? r : -1;
}

int
store_run_add(
    struct store *s, int64_t host_id, const struct store_run *run, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, run_add_once(s, host_id, run, now));
	return rc;
}

int
store_i_log_room(struct store *s, const char *sql, int64_t id, size_t len,
    int64_t *have, size_t *keep)
{
	struct db_stmt *st = store_i_stmt(s, sql);

	*have = 0;
	*keep = len;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	if (db_step(st) == DB_ROW)
		*have = db_col_int64(st, 0);
	store_i_release(s, st);
	if (*have >= CAP_JOB_LOG)
		*keep = 0;
	else if (*keep > (size_t)(CAP_JOB_LOG - *have))
		*keep = (size_t)(CAP_JOB_LOG - *have);
	return 0;
}

static int
log_append_once(struct store *s, size_t *out_stored, int64_t host_id,
    int64_t job_id, const char *text, size_t len, int64_t now)
{
	static const char marker[] = "\n[log truncated]\n";
	struct db_stmt *st;
	int64_t have = 0;
	size_t keep = len;
	int r, ok;

	if (out_stored)
		*out_stored = 0;
	if (store_i_tx_begin(s) == -1)
		return -1;
	r = store_i_job_lease(s, NULL, NULL, job_id, host_id);
	ok = r != -1;
	if (ok && r == 0)
		ok = store_i_log_room(s,
		         "SELECT log_bytes FROM jobs WHERE id = ?1", job_id,
		         len, &have, &keep) == 0;
	if (ok && r == 0 && have <= CAP_JOB_LOG) {
		int full = keep < len;

		st = store_i_stmt(s,
		    "INSERT INTO job_logs (job_id, created, text)"
		    " VALUES (?1, ?2, ?3 || ?4)");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, job_id);
			db_bind_int64(st, 2, now);
			db_bind_text(st, 3, text, (int)keep);
			db_bind_text(st, 4, full ? marker : "", -1);
			ok = store_i_step_done(s, st, "append log") == 0;
			store_i_release(s, st);
		}
		st = ok ? store_i_stmt(
		              s, "UPDATE jobs SET log_bytes = ?2 WHERE id = ?1")
		        : NULL;
		if (ok && (ok = st != NULL)) {
			db_bind_int64(st, 1, job_id);
			db_bind_int64(st, 2,
			    full ? CAP_JOB_LOG + 1 : have + (int64_t)keep);
			ok = store_i_step_done(s, st, "log size") == 0;
			store_i_release(s, st);
		}
	} else {
		keep = 0;
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_stored && r == 0)
		*out_stored = keep;
	return r;
}

int
store_log_append(struct store *s, size_t *out_stored, int64_t host_id,
    int64_t job_id, const char *text, size_t len, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    log_append_once(s, out_stored, host_id, job_id, text, len, now));
	return rc;
}

/* Runs one UPDATE on job id with now bound as ?2; sql: a literal (the
 * statement cache keys on it). */
static int
job_update(
    struct store *s, int64_t id, int64_t now, const char *sql, const char *text)
{
	struct db_stmt *st = store_i_stmt(s, sql);
	int r;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	db_bind_int64(st, 2, now);
	if (text != NULL)
		store_i_bind_text(st, 3, text);
	r = store_i_step_done(s, st, "update job");
	store_i_release(s, st);
	return r;
}

static int
finish_once(struct store *s, int64_t host_id, int64_t job_id, int ok_job,
    const char *error, int64_t now)
{
	int r, ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	r = store_i_job_lease(s, NULL, NULL, job_id, host_id);
	ok = r != -1;
	/* A round of a job run in rounds, with runs still to do: queued
	 * again for its next round, which is not another attempt. */
	if (ok && r == 0 && ok_job)
		ok = job_update(s, job_id, now,
		         "UPDATE jobs SET state = 'queued', lease_owner = NULL,"
		         " lease_expires = NULL, attempts = max(attempts - 1, "
		         "0),"
		         " round_runs = NULL, updated = ?2"
		         " WHERE id = ?1 AND round_runs IS NOT NULL"
		         " AND (SELECT count(*) FROM runs WHERE job_id = ?1) < "
		         "runs",
		         NULL) == 0;
	/* A shared build's image that did not arrive intact (docs/KERNEL.md,
	 * "Shared builds"): the job is queued again, once. */
	if (ok && r == 0 && !ok_job && error != NULL &&
	    s->version >= STORE_BUILDS_VERSION)
		ok = job_update(s, job_id, now,
		         "UPDATE jobs SET state = 'queued', lease_owner = NULL,"
		         " lease_expires = NULL, round_runs = NULL,"
		         " progress = NULL, image_retries = image_retries + 1,"
		         " updated = ?2 WHERE id = ?1 AND image_retries = 0"
		         " AND build_id IS NOT NULL"
		         " AND substr(?3, 1, 6) = 'image:'",
		         error) == 0;
	if (ok && r == 0)
		ok = job_update(s, job_id, now,
		         ok_job
		             ? "UPDATE jobs SET state = 'success',"
		               " lease_owner = NULL, lease_expires = NULL,"
		               " error = NULL, round_runs = NULL, updated = ?2"
		               " WHERE id = ?1 AND state = 'running'"
		             : "UPDATE jobs SET state = 'failed',"
		               " lease_owner = NULL, lease_expires = NULL,"
		               " error = ?3, updated = ?2 WHERE id = ?1"
		               " AND state = 'running'",
		         ok_job ? NULL : (error ? error : "failed")) == 0;
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_finish(struct store *s, int64_t host_id, int64_t job_id, int ok_job,
    const char *error, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(
	    s, rc, finish_once(s, host_id, job_id, ok_job, error, now));
	return rc;
}

/* The state of job id into buf, or ERR_NOTFOUND. */
static int
job_state(struct store *s, char *buf, size_t len, int64_t id)
{
	struct db_stmt *st =
	    store_i_stmt(s, "SELECT state FROM jobs WHERE id = ?1");
	int r;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	if (db_step(st) == DB_ROW) {
		snprintf(buf, len, "%s", store_i_col_text(st, 0));
		r = 0;
	} else {
		r = err_setc(
		    &s->err, ERR_NOTFOUND, "job %lld not found", (long long)id);
	}
	store_i_release(s, st);
	return r;
}

static int
cancel_once(struct store *s, int64_t job_id, int64_t now)
{
	char state[16];
	int r, ok;

	if (store_i_tx_begin(s) == -1)
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
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_cancel(struct store *s, int64_t job_id, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, cancel_once(s, job_id, now));
	return rc;
}

static int
job_retry_once(struct store *s, int64_t job_id, int64_t now)
{
	char state[16];
	int r, ok;

	if (store_i_tx_begin(s) == -1)
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
		        NULL) == 0 &&
		    (s->version < STORE_BUILDS_VERSION ||
		        store_i_build_relink(s, job_id, now) == 0);
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_retry(struct store *s, int64_t job_id, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, job_retry_once(s, job_id, now));
	return rc;
}

/* ---- reads ---- */

#define JOB_COLS STORE_I_JOB_COLS
#define JOB_FROM STORE_I_JOB_FROM

void
store_i_job_scan(struct store_job *j, struct db_stmt *st)
{
	memset(j, 0, sizeof(*j));
	j->id = db_col_int64(st, 0);
	j->pair_id = db_col_int64(st, 1);
	j->role = store_i_col_dup(st, 2);
	j->name = store_i_col_dup(st, 3);
	j->point = store_i_col_dup(st, 4);
	j->state = store_i_col_dup(st, 5);
	j->host = store_i_col_dup(st, 6);
	j->attempts = db_col_int64(st, 7);
	j->runs = db_col_int64(st, 8);
	j->runs_done = db_col_int64(st, 9);
	j->progress = store_i_col_dup(st, 10);
	j->error = store_i_col_dup(st, 11);
	j->created = db_col_int64(st, 12);
	j->updated = db_col_int64(st, 13);
	j->has_lease = db_col_type(st, 14) != DB_NULL;
	j->lease_expires = db_col_int64(st, 14);
	j->max_runs = db_col_int64(st, 15);
	j->commit = store_i_col_dup(st, 16);
	j->tree = store_i_col_dup(st, 17);
	j->subject = store_i_col_dup(st, 18);
}

static void
job_release(struct store_job *j)
{
	free(j->role);
	free(j->name);
	free(j->point);
	free(j->state);
	free(j->host);
	free(j->progress);
	free(j->error);
	free(j->commit);
	free(j->tree);
	free(j->subject);
}

static void
job_scan_row(void *row, struct db_stmt *st, void *arg)
{
	(void)arg;
	store_i_job_scan(row, st);
}

int
store_job_list(struct store *s, struct store_jobs *out, const char *state,
    int64_t limit, int64_t cursor)
{
	/* Of a state: a range of index jobs_state (state, id). */
	struct db_stmt *st = store_i_stmt(s,
	    state != NULL
	        ? "SELECT " JOB_COLS JOB_FROM
	          " WHERE j.state = ?1 AND j.id < ?2 ORDER BY j.id DESC"
	          " LIMIT ?3"
	        : "SELECT " JOB_COLS JOB_FROM
	          " WHERE j.id < ?2 ORDER BY j.id DESC LIMIT ?3");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	r = store_i_state_page(s, st, state, limit, cursor, &v, &out->n,
	    sizeof(*out->v), job_scan_row, offsetof(struct store_job, id),
	    "list jobs", &out->next_cursor);
	out->v = v;
	if (r != 0)
		store_jobs_release(out);
	return r;
}

void
store_jobs_release(struct store_jobs *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		job_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* The job row of id into *out (store_jobs_release's strings):
 * 0, ERR_NOTFOUND or -1. */
int
store_i_job_one(struct store *s, struct store_job *out, int64_t id)
{
	struct db_stmt *st =
	    store_i_stmt(s, "SELECT " JOB_COLS JOB_FROM "WHERE j.id = ?1");
	int rc, r = -1;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	rc = db_step(st);
	if (rc == DB_ROW) {
		store_i_job_scan(out, st);
		r = 0;
	} else if (rc == DB_DONE) {
		r = err_setc(
		    &s->err, ERR_NOTFOUND, "job %lld not found", (long long)id);
	} else {
		store_i_dberr(s, "job");
	}
	store_i_release(s, st);
	return r;
}

static void
run_release(struct store_job_run *r)
{
	size_t i;

	for (i = 0; i < r->nmetrics; i++) {
		free(r->metrics[i].name);
		free(r->metrics[i].unit);
		free(r->metrics[i].better);
	}
	free(r->metrics);
	free(r->status);
	free(r->host);
	free(r->error);
	free(r->profile_json);
	free(r->host_state_json);
}

/* The runs of job id, by index, each with its metrics by name. */
static int
job_runs(struct store *s, struct store_job_detail *d, int64_t id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT r.id, r.idx, r.status, h.name, r.duration_s, r.error,"
	    " r.attempt, r.created, m.name, m.value, m.unit, m.better,"
	    " r.profile, r.host_state FROM runs r"
	    " LEFT JOIN hosts h ON h.id = r.host_id"
	    " LEFT JOIN metrics m ON m.run_id = r.id"
	    " WHERE r.job_id = ?1 ORDER BY r.idx, m.name");
	struct store_job_run *run = NULL;
	size_t cap = 0, mcap = 0;
	int64_t cur = -1;
	int rc;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	while ((rc = db_step(st)) == DB_ROW) {
		if (db_col_int64(st, 0) != cur) {
			cur = db_col_int64(st, 0);
			if (d->nruns == cap) {
				cap = cap ? cap * 2 : 8;
				d->runs =
				    xreallocarray(d->runs, cap, sizeof(*run));
			}
			run = &d->runs[d->nruns++];
			memset(run, 0, sizeof(*run));
			mcap = 0;
			run->index = db_col_int64(st, 1);
			run->status = store_i_col_dup(st, 2);
			run->host = store_i_col_dup(st, 3);
			run->duration_s = db_col_type(st, 4) == DB_NULL
			    ? NAN
			    : db_col_double(st, 4);
			run->error = store_i_col_dup(st, 5);
			run->attempt = db_col_int64(st, 6);
			run->created = db_col_int64(st, 7);
			run->profile_json = store_i_col_dup(st, 12);
			run->host_state_json = store_i_col_dup(st, 13);
		}
		if (db_col_type(st, 8) != DB_NULL) {
			struct store_run_metric *m;

			if (run->nmetrics == mcap) {
				mcap = mcap ? mcap * 2 : 4;
				run->metrics = xreallocarray(
				    run->metrics, mcap, sizeof(*m));
			}
			m = &run->metrics[run->nmetrics++];
			m->name = store_i_col_dup(st, 8);
			m->value = db_col_double(st, 9);
			m->unit = store_i_col_dup(st, 10);
			m->better = store_i_col_dup(st, 11);
		}
	}
	if (rc != DB_DONE)
		store_i_dberr(s, "runs");
	store_i_release(s, st);
	return rc == DB_DONE ? 0 : -1;
}

/* The last bytes of the job log (the tail a reader wants), from a
 * UTF-8 character boundary. */
static int
job_log_tail(struct store *s, struct store_job_detail *d, int64_t id)
{
	struct db_stmt *st = store_i_stmt(
	    s, "SELECT text FROM job_logs WHERE job_id = ?1 ORDER BY id DESC");
	struct buf b = BUF_INIT(CAP_JOB_LOG);
	char **parts = NULL;
	size_t n = 0, total = 0, i;
	const size_t tail = 64 * 1024;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	while (total < tail && db_step(st) == DB_ROW) {
		const char *t = store_i_col_text(st, 0);

		parts = xreallocarray(parts, n + 1, sizeof(*parts));
		parts[n++] = xstrdup(t ? t : "");
		total += strlen(parts[n - 1]);
	}
	store_i_release(s, st);
	for (i = n; i > 0; i--) {
		buf_puts(&b, parts[i - 1]);
		free(parts[i - 1]);
	}
	free(parts);
	i = utf8_tail(b.data, b.len, tail);
	d->log_len = b.len - i;
	d->log = xmalloc(d->log_len + 1);
	memcpy(d->log, b.data + i, d->log_len);
	d->log[d->log_len] = '\0';
	buf_release(&b);
	return 0;
}

int
store_job_get(struct store *s, struct store_job_detail *out, int64_t job_id)
{
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = store_i_job_one(s, &out->job, job_id)) != 0)
		return r;
	if (job_runs(s, out, job_id) == -1 ||
	    job_log_tail(s, out, job_id) == -1) {
		store_job_detail_release(out);
		return -1;
	}
	return 0;
}

void
store_job_detail_release(struct store_job_detail *d)
{
	size_t i;

	if (d == NULL)
		return;
	job_release(&d->job);
	for (i = 0; i < d->nruns; i++)
		run_release(&d->runs[i]);
	free(d->runs);
	free(d->log);
	memset(d, 0, sizeof(*d));
}

int
store_run_raw(struct store *s, struct buf *b, int64_t job_id, int64_t idx)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT x.data FROM runs r JOIN raw_outputs x ON x.run_id = r.id"
	    " WHERE r.job_id = ?1 AND r.idx = ?2");
	int r = 0;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, job_id);
	db_bind_int64(st, 2, idx);
	if (db_step(st) == DB_ROW)
		buf_add(b, db_col_blob(st, 0), (size_t)db_col_bytes(st, 0));
	else
		r = err_setc(&s->err, ERR_NOTFOUND,
		    "job %lld has no raw output for run %lld",
		    (long long)job_id, (long long)idx);
	store_i_release(s, st);
	return r;
}
