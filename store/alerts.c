/*
 * The store's alert tables: groups, reports and decisions, deliveries and
 * reply commands (see store/alerts.h); one report's content is read in
 * alert_report.c.
 */
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "store/alerts.h"
#include "store/store_int.h"

/* Steps to the end; 0 or -1. */
static int
run(struct store *s, struct db_stmt *st, const char *what)
{
	int rc;

	while ((rc = db_step(st)) == DB_ROW)
		;
	if (rc != DB_DONE)
		return store_i_dberr(s, what);
	return 0;
}

/* ---- groups ---- */

void
store_alert_groups_release(struct store_alert_group *g, size_t n)
{
	size_t i;

	for (i = 0; g != NULL && i < n; i++)
		free(g[i].job);
	free(g);
}

/* Binds a group's (commit, job, host) to ?1, ?2 and ?3, as every
 * statement over one alert group takes them. */
void
store_i_alert_bind_group(
    struct db_stmt *st, int64_t commit_id, const char *job, int64_t host_id)
{
	db_bind_int64(st, 1, commit_id);
	store_i_bind_text(st, 2, job);
	store_i_bind_id(st, 3, host_id);
}

/* Jobs of the same commit and job name still to run on that host. */
static int
group_busy(struct store *s, int *out, const struct store_alert_group *g)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT count(*) FROM pairs p"
	    " JOIN jobs j ON j.id = p.cand_job_id"
	    " JOIN jobs b ON b.id = p.base_job_id"
	    " WHERE j.commit_id = ?1 AND p.name = ?2 AND p.analysed = 0"
	    " AND p.bisect_id IS NULL"
	    " AND (p.host_id IS NULL OR p.host_id IS NOT DISTINCT FROM ?3)"
	    " AND (j.state IN ('queued', 'running')"
	    "   OR b.state IN ('queued', 'running'))");
	int rc;

	*out = 0;
	if (st == NULL)
		return -1;
	store_i_alert_bind_group(st, g->commit_id, g->job, g->host_id);
	rc = db_step(st);
	if (rc == DB_ROW)
		*out = db_col_int64(st, 0) > 0;
	store_i_release(s, st);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "alert group");
}

/* Busy groups a pass steps over before it stops looking further. */
#define ALERT_BUSY_MAX 256

/*
 * g's stamp: the newest of what its pairs' reports would see (their
 * final verdicts, the end of a bisection after them), over every
 * analysed pair of the group, not only the due ones a pass read before
 * its batch was full: the decision marks them all seen up to it, and one
 * left below its own stamp would be reported again.
 */
static int
group_stamp(struct store *s, struct store_alert_group *g)
{
	struct db_stmt *st = store_i_cached(s, S_ALERT_GROUP_STAMP,
	    "SELECT max(st) FROM (SELECT " ALERT_PAIR_STAMP " AS st"
	    " FROM pairs p JOIN jobs j ON j.id = p.cand_job_id"
	    " JOIN comparisons c ON c.pair_id = p.id AND c.final = 1"
	    " WHERE j.commit_id = ?1 AND p.name = ?2 AND c.host_id IS NOT "
	    "DISTINCT FROM ?3"
	    " AND p.analysed = 1 AND p.bisect_id IS NULL GROUP BY p.id) AS w");
	int rc;

	if (st == NULL)
		return -1;
	store_i_alert_bind_group(st, g->commit_id, g->job, g->host_id);
	rc = db_step(st);
	if (rc == DB_ROW && db_col_int64(st, 0) > g->stamp)
		g->stamp = db_col_int64(st, 0);
	store_i_count_steps(s, st);
	db_reset(st); /* a cached statement */
	return rc == DB_ROW ? 0 : store_i_dberr(s, "alert group stamp");
}

static int
same_group(const struct store_alert_group *g, int64_t cid, int64_t hid,
    const char *job)
{
	return g->commit_id == cid && g->host_id == hid &&
	    strcmp(g->job, job) == 0;
}

/* Takes the pairs in ids out of the due queue. */
static int
due_drop_once(struct store *s, const int64_t *ids, size_t n)
{
	struct db_stmt *st;
	size_t i;
	int r = 0;

	if (n == 0)
		return 0;
	if (store_i_tx_begin(s) != 0)
		return -1;
	st = store_i_stmt(s, "DELETE FROM alert_due WHERE pair_id = ?1");
	r = st != NULL ? 0 : -1;
	for (i = 0; r == 0 && i < n; i++) {
		db_reset(st);
		db_bind_int64(st, 1, ids[i]);
		r = run(s, st, "alert due");
	}
	store_i_release(s, st);
	return store_i_tx_end(s, r == 0) == 0 && r == 0 ? 0 : -1;
}

static int
due_drop(struct store *s, const int64_t *ids, size_t n)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, due_drop_once(s, ids, n));
	return rc;
}

int
store_alert_groups(
    struct store *s, struct store_alert_group **out, size_t *out_n, size_t max)
{
	/* Every due pair, with whether it is still to be looked at. */
	struct db_stmt *st = store_i_stmt(s,
	    /* Grouped by d.pair_id alone (one pair, one job, one
	     * alert_pairs row: the max()es pick their one value), so
	     * SQLite streams the groups in alert_due's order and a full
	     * batch stops the read; more keys there sort every due pair
	     * first. */
	    "SELECT d.pair_id, max(j.commit_id), max(p.name), "
	    "max(c.host_id), " ALERT_PAIR_STAMP_OF(
	        "d.pair_id") ", max(p.analysed) = 1 AND max(j.commit_id) IS "
	                     "NOT NULL"
	                     " AND max(p.bisect_id) IS NULL AND count(c.id) > 0"
	                     " AND (max(ap.stamp) IS NULL OR max(ap.stamp) "
	                     "< " ALERT_PAIR_STAMP_OF(
	                         "d.pair_id") ")"
	                                      " FROM alert_due d"
	                                      " LEFT JOIN pairs p ON p.id = "
	                                      "d.pair_id"
	                                      " LEFT JOIN jobs j ON j.id = "
	                                      "p.cand_job_id"
	                                      " LEFT JOIN comparisons c ON "
	                                      "c.pair_id = p.id AND c.final = 1"
	                                      " LEFT JOIN alert_pairs ap ON "
	                                      "ap.pair_id = p.id"
	                                      " GROUP BY d.pair_id ORDER BY "
	                                      "d.pair_id");
	struct store_alert_group *g = NULL, *busy = NULL;
	int64_t *drop = NULL;
	size_t n = 0, nb = 0, nd = 0, i;
	int rc, r = 0, isbusy;

	*out = NULL;
	*out_n = 0;
	if (st == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		int64_t pid = db_col_int64(st, 0);
		int64_t cid = db_col_int64(st, 1);
		const char *job = db_col_text(st, 2);
		int64_t hid = db_col_int64(st, 3);
		int64_t stamp = db_col_int64(st, 4);
		struct store_alert_group ng;

		if (!db_col_int64(st, 5)) {
			drop = xreallocarray(drop, nd + 1, sizeof(*drop));
			drop[nd++] = pid;
			continue;
		}
		job = job ? job : "";
		for (i = 0; i < n && !same_group(&g[i], cid, hid, job); i++)
			;
		if (i < n) {
			if (stamp > g[i].stamp)
				g[i].stamp = stamp;
			continue;
		}
		for (i = 0; i < nb && !same_group(&busy[i], cid, hid, job); i++)
			;
		if (i < nb)
			continue;
		ng.commit_id = cid;
		ng.host_id = hid;
		ng.job = xstrdup(job);
		ng.stamp = stamp;
		/* Only a group whose whole report is known takes a place. */
		if ((r = group_busy(s, &isbusy, &ng)) != 0) {
			free(ng.job);
			break;
		}
		if (isbusy) {
			busy = xreallocarray(busy, nb + 1, sizeof(*busy));
			busy[nb++] = ng;
			if (nb == ALERT_BUSY_MAX)
				break;
			continue;
		}
		if ((r = group_stamp(s, &ng)) != 0) {
			free(ng.job);
			break;
		}
		g = xreallocarray(g, n + 1, sizeof(*g));
		g[n++] = ng;
		/* Full: the rest waits for the next pass (which a full
		 * batch brings soon), so a pass reads what it takes, not
		 * the whole backlog: reading on to the end made draining
		 * 41,000 due pairs (a daemon upgraded onto a 1M-run
		 * store) cost 100 ms a pass, half a core for minutes. */
		if (n == max)
			break;
	}
	store_i_count_steps(s, st);
	store_i_release(s, st);
	store_alert_groups_release(busy, nb);
	if (r == 0 && rc != DB_ROW && rc != DB_DONE)
		r = store_i_dberr(s, "alert groups");
	if (r == 0)
		r = due_drop(s, drop, nd);
	free(drop);
	if (r != 0) {
		store_alert_groups_release(g, n);
		return -1;
	}
	*out = g;
	*out_n = n;
	return 0;
}

/* ---- reports and decisions ---- */

void
store_alert_report_release(struct store_alert_report *r)
{
	free(r->signature);
	free(r->message_id);
	free(r->subject);
	memset(r, 0, sizeof(*r));
}

int
store_alert_report_get(
    struct store *s, struct store_alert_report *out, const char *key)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT id, signature, message_id, subject, sent_reports"
	    " FROM alert_reports WHERE key = ?1");
	int rc;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, key);
	rc = db_step(st);
	if (rc == DB_ROW) {
		out->id = db_col_int64(st, 0);
		out->signature = store_i_col_dup(st, 1);
		out->message_id = store_i_col_dup(st, 2);
		out->subject = store_i_col_dup(st, 3);
		out->sent_reports = db_col_int64(st, 4);
	}
	store_i_release(s, st);
	if (rc == DB_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "no report %s", key);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "alert report");
}

static int
decide(struct store *s, const struct store_alert_decision *d, int64_t now)
{
	struct db_stmt *st;
	int64_t rid = 0;
	size_t i;
	int rc;

	st = store_i_stmt(s,
	    "INSERT INTO alert_reports (key, commit_id, series_id, job,"
	    " host_id, signature, message_id, subject, summary, sent_reports,"
	    " created, updated)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)"
	    " ON CONFLICT (key) DO UPDATE SET signature = excluded.signature,"
	    " message_id = coalesce(alert_reports.message_id,"
	    "   excluded.message_id),"
	    " subject = coalesce(alert_reports.subject, excluded.subject),"
	    " summary = excluded.summary,"
	    " sent_reports = alert_reports.sent_reports + ?12,"
	    " updated = excluded.updated RETURNING id");
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, d->key);
	store_i_bind_id(st, 2, d->commit_id);
	store_i_bind_id(st, 3, d->series_id);
	store_i_bind_text(st, 4, d->job);
	store_i_bind_id(st, 5, d->host_id);
	store_i_bind_text(st, 6, d->signature ? d->signature : "");
	store_i_bind_text(st, 7, d->message_id);
	store_i_bind_text(st, 8, d->subject);
	store_i_bind_text(st, 9, d->summary);
	db_bind_int64(st, 10, d->sent_report ? 1 : 0);
	db_bind_int64(st, 11, now);
	db_bind_int64(st, 12, d->sent_report ? 1 : 0);
	rc = db_step(st);
	if (rc == DB_ROW)
		rid = db_col_int64(st, 0);
	store_i_release(s, st);
	if (rc != DB_ROW)
		return store_i_dberr(s, "alert report put");

	/* Every analysed pair of the group is seen, up to the newest
	 * verdict this decision read (a later one is looked at again). */
	st = store_i_stmt(s,
	    "INSERT INTO alert_pairs (pair_id, report_id, stamp)"
	    " SELECT p.id, ?4, min(?5, " ALERT_PAIR_STAMP ") FROM pairs p"
	    " JOIN jobs j ON j.id = p.cand_job_id"
	    " JOIN comparisons c ON c.pair_id = p.id AND c.final = 1"
	    " WHERE j.commit_id = ?1 AND p.name = ?2 AND c.host_id IS NOT "
	    "DISTINCT FROM ?3"
	    " AND p.analysed = 1 GROUP BY p.id"
	    " ON CONFLICT (pair_id) DO UPDATE SET"
	    " report_id = excluded.report_id, stamp = excluded.stamp");
	if (st == NULL)
		return -1;
	store_i_alert_bind_group(st, d->commit_id, d->job, d->host_id);
	db_bind_int64(st, 4, rid);
	db_bind_int64(st, 5, d->stamp);
	if (run(s, st, "alert pairs") != 0) {
		store_i_release(s, st);
		return -1;
	}
	store_i_release(s, st);
	/* Those now seen up to date leave the due queue (a verdict that
	 * came after this decision's read keeps its pair there). */
	st = store_i_stmt(s,
	    "DELETE FROM alert_due WHERE pair_id IN (SELECT p.id FROM pairs p"
	    " JOIN jobs j ON j.id = p.cand_job_id"
	    " JOIN comparisons c ON c.pair_id = p.id AND c.final = 1"
	    " JOIN alert_pairs ap ON ap.pair_id = p.id"
	    " WHERE j.commit_id = ?1 AND p.name = ?2 AND c.host_id IS NOT "
	    "DISTINCT FROM ?3"
	    " AND p.analysed = 1 GROUP BY p.id, ap.pair_id"
	    " HAVING ap.stamp >= " ALERT_PAIR_STAMP ")");
	if (st == NULL)
		return -1;
	store_i_alert_bind_group(st, d->commit_id, d->job, d->host_id);
	if (run(s, st, "alert due") != 0) {
		store_i_release(s, st);
		return -1;
	}
	store_i_release(s, st);

	st = store_i_stmt(s,
	    "INSERT INTO alerts (kind, key, payload, report_id, target,"
	    " subject, followup, state, next_try, created)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?8)"
	    " ON CONFLICT (key) DO NOTHING");
	if (st == NULL)
		return -1;
	for (i = 0; i < d->nalerts; i++) {
		const struct store_alert_new *a = &d->alerts[i];

		db_reset(st);
		store_i_bind_text(st, 1, a->kind);
		store_i_bind_text(st, 2, a->key);
		store_i_bind_text(st, 3, a->payload);
		db_bind_int64(st, 4, rid);
		store_i_bind_text(st, 5, a->target ? a->target : "");
		store_i_bind_text(st, 6, a->subject);
		db_bind_int64(st, 7, a->followup);
		db_bind_int64(st, 8, now);
		if (run(s, st, "alert put") != 0) {
			store_i_release(s, st);
			return -1;
		}
	}
	store_i_release(s, st);
	return 0;
}

static int
alert_decide_once(
    struct store *s, const struct store_alert_decision *d, int64_t now)
{
	if (store_begin(s) != 0)
		return -1;
	if (decide(s, d, now) != 0) {
		store_rollback(s);
		return -1;
	}
	return store_commit(s);
}

int
store_alert_decide(
    struct store *s, const struct store_alert_decision *d, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, alert_decide_once(s, d, now));
	return rc;
}

/* ---- deliveries ---- */

void
store_alerts_release(struct store_alert *a, size_t n)
{
	size_t i;

	for (i = 0; a != NULL && i < n; i++) {
		free(a[i].kind);
		free(a[i].key);
		free(a[i].target);
		free(a[i].state);
		free(a[i].subject);
		free(a[i].last_error);
		free(a[i].payload);
		free(a[i].sha);
		free(a[i].job);
		free(a[i].host);
	}
	free(a);
}

#define ALERT_COLS                                                      \
	"a.id, a.report_id, a.attempts, a.next_try, a.sent, a.created," \
	" a.kind, a.key, a.target, a.state, a.subject, a.last_error,"   \
	" a.followup, c.sha, r.job, h.name, "
/* An alert's report, commit and host, joined to alerts a. */
#define ALERT_JOINS                                        \
	" LEFT JOIN alert_reports r ON r.id = a.report_id" \
	" LEFT JOIN commits c ON c.id = r.commit_id"       \
	" LEFT JOIN hosts h ON h.id = r.host_id"
#define ALERT_FROM " FROM alerts a" ALERT_JOINS

/* A row of ALERT_COLS and its payload (NULL in a list). */
static void
alert_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_alert *x = row;

	(void)arg;
	x->id = db_col_int64(st, 0);
	x->report_id = db_col_int64(st, 1);
	x->attempts = db_col_int64(st, 2);
	x->next_try = db_col_int64(st, 3);
	x->sent = db_col_int64(st, 4);
	x->created = db_col_int64(st, 5);
	x->kind = store_i_col_dup(st, 6);
	x->key = store_i_col_dup(st, 7);
	x->target = store_i_col_dup(st, 8);
	x->state = store_i_col_dup(st, 9);
	x->subject = store_i_col_dup(st, 10);
	x->last_error = store_i_col_dup(st, 11);
	x->followup = db_col_int(st, 12);
	x->sha = store_i_col_dup(st, 13);
	x->job = store_i_col_dup(st, 14);
	x->host = store_i_col_dup(st, 15);
	x->payload = store_i_col_dup(st, 16);
}

static int
read_alerts(struct store *s, struct db_stmt *st, struct store_alert **out,
    size_t *out_n)
{
	void *v;
	int r = store_i_rows(
	    s, st, &v, out_n, sizeof(**out), alert_scan, NULL, "alerts");

	*out = v;
	if (r != 0) {
		store_alerts_release(*out, *out_n);
		*out = NULL;
		*out_n = 0;
	}
	return r;
}

int
store_alert_due(struct store *s, struct store_alert **out, size_t *out_n,
    int64_t now, size_t max)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT " ALERT_COLS "a.payload" ALERT_FROM
	    " WHERE a.state = 'pending'"
	    " AND a.next_try <= ?1"
	    " ORDER BY a.next_try, a.id LIMIT ?2");

	*out = NULL;
	*out_n = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, now);
	db_bind_int64(st, 2, (int64_t)max);
	return read_alerts(s, st, out, out_n);
}

static int
attempt(struct store *s, int64_t id, const char *state, const char *err,
    int64_t next_try, const char *const *rcpt, size_t nrcpt, int64_t now)
{
	struct db_stmt *st = store_i_stmt(s,
	    "UPDATE alerts SET state = ?2, last_error = ?3, next_try = ?4,"
	    " attempts = attempts + 1,"
	    " sent = CASE WHEN ?2 = 'sent' THEN ?5 ELSE sent END"
	    " WHERE id = ?1 AND state = 'pending'");
	size_t i;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	store_i_bind_text(st, 2, state);
	store_i_bind_text(st, 3, err);
	db_bind_int64(st, 4, next_try);
	db_bind_int64(st, 5, now);
	if (run(s, st, "alert attempt") != 0) {
		store_i_release(s, st);
		return -1;
	}
	store_i_release(s, st);
	if (strcmp(state, "sent") != 0 || nrcpt == 0)
		return 0;
	st = store_i_stmt(
	    s, "INSERT INTO alert_sends (recipient, at) VALUES (?1, ?2)");
	if (st == NULL)
		return -1;
	for (i = 0; i < nrcpt; i++) {
		db_reset(st);
		store_i_bind_text(st, 1, rcpt[i]);
		db_bind_int64(st, 2, now);
		if (run(s, st, "alert sends") != 0) {
			store_i_release(s, st);
			return -1;
		}
	}
	store_i_release(s, st);
	return 0;
}

static int
alert_attempt_once(struct store *s, int64_t id, const char *state,
    const char *err, int64_t next_try, const char *const *rcpt, size_t nrcpt,
    int64_t now)
{
	if (store_begin(s) != 0)
		return -1;
	if (attempt(s, id, state, err, next_try, rcpt, nrcpt, now) != 0) {
		store_rollback(s);
		return -1;
	}
	return store_commit(s);
}

int
store_alert_attempt(struct store *s, int64_t id, const char *state,
    const char *err, int64_t next_try, const char *const *rcpt, size_t nrcpt,
    int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    alert_attempt_once(s, id, state, err, next_try, rcpt, nrcpt, now));
	return rc;
}

static int
alert_postpone_once(
    struct store *s, int64_t id, const char *why, int64_t next_try)
{
	struct db_stmt *st = store_i_stmt(s,
	    "UPDATE alerts SET last_error = ?2,"
	    " next_try = ?3"
	    " WHERE id = ?1 AND state = 'pending'");
	int r;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	store_i_bind_text(st, 2, why);
	db_bind_int64(st, 3, next_try);
	if (store_begin(s) != 0) {
		store_i_release(s, st);
		return -1;
	}
	r = run(s, st, "alert postpone");
	store_i_release(s, st);
	if (r != 0) {
		store_rollback(s);
		return -1;
	}
	return store_commit(s);
}

int
store_alert_postpone(
    struct store *s, int64_t id, const char *why, int64_t next_try)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, alert_postpone_once(s, id, why, next_try));
	return rc;
}

int
store_alert_sent_since(
    struct store *s, int64_t *out, const char *recipient, int64_t since)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT count(*) FROM alert_sends"
	    " WHERE recipient = ?1 AND at >= ?2");
	int rc;

	*out = 0;
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, recipient);
	db_bind_int64(st, 2, since);
	rc = db_step(st);
	if (rc == DB_ROW)
		*out = db_col_int64(st, 0);
	store_i_release(s, st);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "alert sends");
}

/*
 * A page of alerts (store_alert_list) is driven by one index
 * (store_i_list_page): of its commit's reports, else its state, else its
 * kind (schema v28), else of all, newest first; the other filters are
 * checked on each alert, within the page's scan budget.
 *
 * Each shape of filters (which of state, kind and commit a page gives)
 * has a rows statement of its own that holds only the predicates of
 * those filters, picked by al_shape(): one statement for all of them,
 * each filter written "(?N IS NULL OR ...)", had no plan that fits
 * every filter, so PostgreSQL planned it again on each run, the commit
 * page's alerts too.  A shape of one filter reads its drive's range
 * alone (no floor: store_i_list_page binds none).  A whole sha (40
 * digits, the commit page's) is looked up by equality, which
 * PostgreSQL's generic plan estimates as the one commit it is; a prefix
 * range it estimates as hundreds, so it plans that shape on each run.
 * SQLite is held to the drive's index (INDEXED BY, which PostgreSQL's
 * rewrite drops): the other filters are checked on its rows.
 */
enum alert_drive { AL_ALL, AL_COMMIT, AL_SHA, AL_STATE, AL_KIND, AL_DRIVES };
enum {
	AL_F_STATE = 1,
	AL_F_KIND = 2,
	AL_F_COMMIT = 4, /* a prefix */
	AL_F_SHA = 8,    /* a whole sha */
	AL_SHAPES = 16
};

/* Each filter's predicate. */
#define AL_P_STATE " AND a.state = ?1"
#define AL_P_KIND " AND a.kind = ?2"
#define AL_P_REPORTS(commits)                                     \
	" AND a.report_id IN (SELECT r2.id FROM alert_reports r2" \
	" WHERE r2.commit_id IN (SELECT id FROM commits WHERE " commits "))"
#define AL_P_COMMIT AL_P_REPORTS("sha >= ?3 AND sha < ?3 || 'g'")
#define AL_P_SHA AL_P_REPORTS("sha = ?3")
#define AL_WINDOW(ix, drive)                                          \
	"SELECT min(id), count(*) FROM (SELECT a.id FROM alerts a" ix \
	" WHERE a.id < ?10" drive " ORDER BY a.id DESC LIMIT ?11) AS w"
/* ix: SQLite's index of the drive; then the shape's predicates.  The
 * floor ?12 (0 for a shape of one filter) keeps PostgreSQL's generic
 * plan as cheap as its custom ones, so it keeps that plan. */
#define AL_ROWS(ix, drive, other)                                \
	"SELECT " ALERT_COLS "NULL FROM alerts a" ix ALERT_JOINS \
	" WHERE a.id >= ?12 AND a.id < ?10" drive other          \
	" ORDER BY a.id DESC LIMIT ?11"
#define AL_IX_COMMIT " INDEXED BY alerts_report"
#define AL_IX_STATE " INDEXED BY alerts_state"
#define AL_IX_KIND " INDEXED BY alerts_kind"
/* A commit's shapes: c its bit (AL_F_COMMIT or AL_F_SHA), p its
 * predicate. */
#define AL_COMMIT_SHAPES(c, p)                                   \
	[c] = AL_ROWS(AL_IX_COMMIT, p, ""),                      \
	[c | AL_F_STATE] = AL_ROWS(AL_IX_COMMIT, p, AL_P_STATE), \
	[c | AL_F_KIND] = AL_ROWS(AL_IX_COMMIT, p, AL_P_KIND),   \
	[c | AL_F_STATE | AL_F_KIND] =                           \
	    AL_ROWS(AL_IX_COMMIT, p, AL_P_STATE AL_P_KIND)

static const char *const al_window[AL_DRIVES] = {
	[AL_ALL] = AL_WINDOW("", ""),
	[AL_COMMIT] = AL_WINDOW(AL_IX_COMMIT, AL_P_COMMIT),
	[AL_SHA] = AL_WINDOW(AL_IX_COMMIT, AL_P_SHA),
	[AL_STATE] = AL_WINDOW(AL_IX_STATE, AL_P_STATE),
	[AL_KIND] = AL_WINDOW(AL_IX_KIND, AL_P_KIND),
};

/* By shape: its AL_F_* bits (never both AL_F_COMMIT and AL_F_SHA). */
static const char *const al_rows[AL_SHAPES] = {
	[0] = AL_ROWS("", "", ""),
	[AL_F_STATE] = AL_ROWS(AL_IX_STATE, AL_P_STATE, ""),
	[AL_F_KIND] = AL_ROWS(AL_IX_KIND, AL_P_KIND, ""),
	[AL_F_STATE | AL_F_KIND] = AL_ROWS(AL_IX_STATE, AL_P_STATE, AL_P_KIND),
	AL_COMMIT_SHAPES(AL_F_COMMIT, AL_P_COMMIT),
	AL_COMMIT_SHAPES(AL_F_SHA, AL_P_SHA),
};

/* f's shape (AL_F_* bits) and, in *drive, the index that drives it. */
static unsigned
al_shape(const struct store_alert_filter *f, enum alert_drive *drive)
{
	unsigned m = (f->state ? AL_F_STATE : 0) | (f->kind ? AL_F_KIND : 0);

	if (f->sha != NULL)
		m |= strlen(f->sha) == 40 ? AL_F_SHA : AL_F_COMMIT;
	*drive = m & AL_F_SHA ? AL_SHA
	    : m & AL_F_COMMIT ? AL_COMMIT
	    : m & AL_F_STATE  ? AL_STATE
	    : m & AL_F_KIND   ? AL_KIND
	                      : AL_ALL;
	return m;
}

static void
alert_bind(struct db_stmt *st, const void *arg)
{
	const struct store_alert_filter *f = arg;

	store_i_bind_text(st, 1, f->state);
	store_i_bind_text(st, 2, f->kind);
	store_i_bind_text(st, 3, f->sha);
}

static int64_t
alert_id(const void *row)
{
	return ((const struct store_alert *)row)->id;
}

int
store_alert_list(struct store *s, struct store_alert **out, size_t *out_n,
    const struct store_alert_filter *f, struct store_alert_more *more)
{
	enum alert_drive d;
	unsigned shape = al_shape(f, &d);
	void *v = NULL;
	struct store_i_list l = { s, al_window[d], al_rows[shape], alert_bind,
		f, &v, out_n, sizeof(**out), alert_scan, NULL, "alerts" };
	struct store_alert_more m;
	int64_t limit = f->limit > 0 ? f->limit : 50;
	int r;

	*out = NULL;
	*out_n = 0;
	if (limit > 500)
		limit = 500;
	r = store_i_list_page(&l,
	    (f->state != NULL) + (f->kind != NULL) + (f->sha != NULL),
	    f->cursor, limit, f->scan > 0 ? f->scan : STORE_ALERTS_SCAN,
	    &m.capped, &m.next_cursor, alert_id);
	if (r != 0) {
		store_alerts_release(v, *out_n);
		*out_n = 0;
		return -1;
	}
	*out = v;
	if (more != NULL)
		*more = m;
	return 0;
}

int
store_alert_get(struct store *s, struct store_alert **out, int64_t id)
{
	struct db_stmt *st = store_i_stmt(
	    s, "SELECT " ALERT_COLS "a.payload" ALERT_FROM " WHERE a.id = ?1");
	size_t n;
	int r;

	*out = NULL;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	if ((r = read_alerts(s, st, out, &n)) != 0)
		return r;
	if (n == 0)
		return err_setc(&s->err, ERR_NOTFOUND, "alert %lld not found",
		    (long long)id);
	return 0;
}

int
store_alert_counts(struct store *s, int64_t *out_pending, int64_t *out_failed)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT (SELECT count(*) FROM alerts WHERE state = 'pending'),"
	    " (SELECT count(*) FROM alerts WHERE state = 'failed')");
	int rc;

	*out_pending = *out_failed = 0;
	if (st == NULL)
		return -1;
	rc = db_step(st);
	if (rc == DB_ROW) {
		*out_pending = db_col_int64(st, 0);
		*out_failed = db_col_int64(st, 1);
	}
	store_i_release(s, st);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "alert counts");
}

/* ---- commands by reply (daemon/mailcmd.c) ---- */

int
store_alert_report_find(struct store *s, int64_t *out_commit,
    const char *sha_prefix, const char *job, int64_t host_id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT r.commit_id FROM commits c"
	    " JOIN alert_reports r ON r.commit_id = c.id"
	    " WHERE c.sha >= lower(?3) AND c.sha < lower(?3) || 'g'"
	    " AND r.job = ?1 AND r.host_id IS NOT DISTINCT FROM ?2"
	    " AND r.message_id IS NOT NULL"
	    " ORDER BY r.id DESC LIMIT 1");
	int rc;

	*out_commit = 0;
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, job);
	store_i_bind_id(st, 2, host_id);
	store_i_bind_text(st, 3, sha_prefix);
	rc = db_step(st);
	if (rc == DB_ROW)
		*out_commit = db_col_int64(st, 0);
	store_i_release(s, st);
	if (rc == DB_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "no report of %s %s",
		    sha_prefix, job);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "report by id");
}

int
store_alert_regressions(struct store *s, int64_t **out, size_t *out_n,
    const int64_t *pairs, size_t npairs)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT r.id FROM regressions r"
	    " JOIN comparisons c ON c.id = r.comparison_id"
	    " WHERE c.pair_id = ?1 ORDER BY r.id");
	size_t i;
	int rc = DB_DONE;

	*out = NULL;
	*out_n = 0;
	if (st == NULL)
		return -1;
	for (i = 0; i < npairs && rc == DB_DONE; i++) {
		db_reset(st);
		db_bind_int64(st, 1, pairs[i]);
		while ((rc = db_step(st)) == DB_ROW) {
			*out = xreallocarray(*out, *out_n + 1, sizeof(**out));
			(*out)[(*out_n)++] = db_col_int64(st, 0);
		}
	}
	store_i_release(s, st);
	return rc == DB_DONE ? 0 : store_i_dberr(s, "report regressions");
}

void
store_pair_again_release(struct store_pair_again *p)
{
	int k;

	if (p == NULL)
		return;
	free(p->name);
	free(p->point);
	for (k = 0; k < 2; k++) {
		free(p->side[k].spec);
		free(p->side[k].labels);
	}
	memset(p, 0, sizeof(*p));
}

int
store_pair_again_get(struct store *s, struct store_pair_again *out, int64_t id)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT p.name, p.point, j.role, j.params, j.labels, j.runs,"
	    " j.max_runs, j.max_attempts, j.commit_id"
	    " FROM pairs p JOIN jobs j ON j.pair_id = p.id"
	    " WHERE p.id = ?1 ORDER BY j.role = 'candidate'");
	int rc, k = 0;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	while ((rc = db_step(st)) == DB_ROW && k < 2) {
		if (k == 0) {
			out->name = store_i_col_dup(st, 0);
			out->point = store_i_col_dup(st, 1);
		}
		out->side[k].spec = store_i_col_dup(st, 3);
		out->side[k].labels = store_i_col_dup(st, 4);
		out->side[k].runs = db_col_int64(st, 5);
		out->side[k].max_runs = db_col_int64(st, 6);
		out->side[k].max_attempts = db_col_int64(st, 7);
		out->side[k].commit_id = db_col_int64(st, 8);
		k++;
	}
	store_i_release(s, st);
	if (rc != DB_DONE && rc != DB_ROW) {
		store_pair_again_release(out);
		return store_i_dberr(s, "pair jobs");
	}
	if (k < 2) {
		store_pair_again_release(out);
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld has no jobs",
		    (long long)id);
	}
	return 0;
}

int
store_alert_key_known(struct store *s, const char *key)
{
	struct db_stmt *st =
	    store_i_stmt(s, "SELECT 1 FROM alerts WHERE key = ?1");
	int rc;

	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, key);
	rc = db_step(st);
	store_i_release(s, st);
	if (rc == DB_ROW)
		return 1;
	return rc == DB_DONE ? 0 : store_i_dberr(s, "alert key");
}

int
store_alert_mail_put(
    struct store *s, const struct store_alert_new *a, int64_t now)
{
	struct db_stmt *st = store_i_stmt(s,
	    "INSERT INTO alerts (kind, key, payload, target, subject,"
	    " followup, state, next_try, created)"
	    " VALUES ('email', ?1, ?2, ?3, ?4, 1, 'pending', ?5, ?5)"
	    " ON CONFLICT (key) DO NOTHING");
	int rc;

	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, a->key);
	store_i_bind_text(st, 2, a->payload);
	store_i_bind_text(st, 3, a->target);
	store_i_bind_text(st, 4, a->subject);
	db_bind_int64(st, 5, now);
	rc = db_step(st);
	store_i_release(s, st);
	if (rc != DB_DONE)
		return store_i_dberr(s, "command answer");
	return db_changes(s->db) > 0
	    ? 0
	    : err_setc(&s->err, ERR_EXISTS, "%s: already answered", a->key);
}
