/*
 * The store's alert tables, one report's content: the changes of a
 * commit, series or bisection that a report mails, with their pairs,
 * kernels, hosts and the machine they ran on (see store/alerts.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "store/alerts.h"
#include "store/store_int.h"

/* ---- one report's content ---- */

void
store_alert_info_release(struct store_alert_info *x)
{
	size_t i;

	if (x == NULL)
		return;
	free(x->job);
	free(x->sha);
	free(x->subject);
	free(x->author);
	free(x->tree);
	free(x->branch);
	free(x->base_sha);
	free(x->series_title);
	free(x->series_author);
	free(x->inbox);
	free(x->series_msgid);
	for (i = 0; i < x->npatch_msgids; i++)
		free(x->patch_msgids[i]);
	free(x->patch_msgids);
	free(x->series_base);
	free(x->patch_msgid);
	free(x->patch_subject);
	free(x->host);
	free(x->inventory);
	free(x->spec);
	free(x->bisect);
	free(x->bisect_state);
	free(x->bisect_parent);
	free(x->bisect_revert);
	free(x->bisect_reason);
	free(x->bisect_origin);
	free(x->suspect);
	for (i = 0; i < x->ncmp; i++) {
		struct store_alert_cmp *c = &x->cmp[i];

		free(c->point);
		free(c->metric);
		free(c->unit);
		free(c->better);
		free(c->verdict);
		free(c->note);
	}
	free(x->cmp);
	for (i = 0; i < x->ncp; i++) {
		free(x->cp[i].point);
		free(x->cp[i].metric);
		free(x->cp[i].direction);
		free(x->cp[i].lo_sha);
		free(x->cp[i].hi_sha);
	}
	free(x->cp);
	free(x->pairs);
	free(x);
}

static double
sd_of(double mean, double meansq, int64_t n)
{
	double v;

	if (isnan(mean) || isnan(meansq) || n < 2)
		return NAN;
	v = (meansq - mean * mean) * (double)n / (double)(n - 1);
	return v > 0 ? sqrt(v) : 0;
}

static int
info_commit(struct store *s, struct store_alert_info *x)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT c.sha, c.subject, c.author, t.name FROM commits c"
	    " JOIN trees t ON t.id = c.tree_id WHERE c.id = ?1");
	int rc;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, x->commit_id);
	rc = db_step(st);
	if (rc == DB_ROW) {
		x->sha = store_i_col_dup(st, 0);
		x->subject = store_i_col_dup(st, 1);
		x->author = store_i_col_dup(st, 2);
		x->tree = store_i_col_dup(st, 3);
	}
	store_i_release(s, st);
	if (rc == DB_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "commit %lld",
		    (long long)x->commit_id);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "alert commit");
}

static int
info_series(struct store *s, struct store_alert_info *x)
{
	/* The series whose tip this is, else the newest series with a
	 * patch whose commit this is; that patch, either way. */
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT s.id, s.title, s.version, s.total, s.author, s.inbox,"
	    " s.message_id, s.branch, s.base_sha, p.seq, p.message_id,"
	    " p.subject"
	    " FROM series s LEFT JOIN series_patches p"
	    "  ON p.series_id = s.id AND p.commit_id = ?1"
	    " WHERE s.commit_id = ?1"
	    "  OR s.id IN (SELECT series_id FROM series_patches"
	    "   WHERE commit_id = ?1)"
	    " ORDER BY s.commit_id = ?1 DESC, s.id DESC LIMIT 1");
	int rc;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, x->commit_id);
	rc = db_step(st);
	if (rc == DB_ROW) {
		x->series_base = store_i_col_dup(st, 8);
		x->patch_seq = db_col_int64(st, 9);
		x->patch_msgid = store_i_col_dup(st, 10);
		x->patch_subject = store_i_col_dup(st, 11);
		x->series_id = db_col_int64(st, 0);
		x->series_title = store_i_col_dup(st, 1);
		x->version = db_col_int64(st, 2);
		x->total = db_col_int64(st, 3);
		x->series_author = store_i_col_dup(st, 4);
		x->inbox = store_i_col_dup(st, 5);
		x->series_msgid = store_i_col_dup(st, 6);
		if (x->branch == NULL)
			x->branch = store_i_col_dup(st, 7);
	}
	store_i_release(s, st);
	if (rc != DB_ROW && rc != DB_DONE)
		return store_i_dberr(s, "alert series");
	if (x->series_id == 0)
		return 0;
	st = store_i_stmt(s,
	    "SELECT message_id FROM series_patches"
	    " WHERE series_id = ?1 ORDER BY seq");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, x->series_id);
	while ((rc = db_step(st)) == DB_ROW) {
		x->patch_msgids = xreallocarray(x->patch_msgids,
		    x->npatch_msgids + 1, sizeof(*x->patch_msgids));
		x->patch_msgids[x->npatch_msgids++] = store_i_col_dup(st, 0);
	}
	store_i_release(s, st);
	return rc == DB_DONE ? 0 : store_i_dberr(s, "alert patches");
}

static int
info_cmps(struct store *s, struct store_alert_info *x)
{
	/* Mean and spread of each side from its ok runs (NULL for derived
	 * metrics such as memcg_tax.*, which have no runs of their own). */
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT c.pair_id, p.base_job_id, p.cand_job_id, c.point,"
	    " c.metric, c.unit, c.better, c.verdict, c.note, c.base_median,"
	    " c.cand_median, c.change_pct, c.ci_low, c.ci_high, c.n_base,"
	    " c.n_cand,"
	    " (SELECT avg(m.value) FROM runs r JOIN metrics m ON m.run_id = "
	    "r.id"
	    "   WHERE r.job_id = p.base_job_id AND r.status = 'ok'"
	    "   AND m.name = c.metric),"
	    " (SELECT avg(m.value * m.value) FROM runs r"
	    "   JOIN metrics m ON m.run_id = r.id"
	    "   WHERE r.job_id = p.base_job_id AND r.status = 'ok'"
	    "   AND m.name = c.metric),"
	    " (SELECT avg(m.value) FROM runs r JOIN metrics m ON m.run_id = "
	    "r.id"
	    "   WHERE r.job_id = p.cand_job_id AND r.status = 'ok'"
	    "   AND m.name = c.metric),"
	    " (SELECT avg(m.value * m.value) FROM runs r"
	    "   JOIN metrics m ON m.run_id = r.id"
	    "   WHERE r.job_id = p.cand_job_id AND r.status = 'ok'"
	    "   AND m.name = c.metric),"
	    " p.branch, (SELECT sha FROM commits WHERE id ="
	    "   (SELECT commit_id FROM jobs WHERE id = p.base_job_id)),"
	    " (SELECT params FROM jobs WHERE id = p.cand_job_id),"
	    " p.suspect IS NOT NULL"
	    " FROM comparisons c"
	    " JOIN pairs p ON p.id = c.pair_id"
	    " JOIN jobs j ON j.id = p.cand_job_id"
	    " WHERE j.commit_id = ?1 AND p.name = ?2 AND c.host_id IS NOT "
	    "DISTINCT FROM ?3"
	    " AND p.analysed = 1 AND c.final = 1 AND c.verdict <> 'info'"
	    " AND p.bisect_id IS NULL"
	    /* the newest verdict of each point against each base: a
	     * retest replaces; a series tip against its parent patch
	     * (trigger.every_patch) does not replace it against the
	     * series' base, which measures another change */
	    " AND p.id = (SELECT max(p2.id) FROM pairs p2"
	    "   JOIN jobs j2 ON j2.id = p2.cand_job_id"
	    "   JOIN jobs b2 ON b2.id = p2.base_job_id"
	    "   JOIN comparisons c2 ON c2.pair_id = p2.id AND c2.final = 1"
	    "   WHERE j2.commit_id = j.commit_id AND p2.name = p.name"
	    "   AND p2.point = p.point AND c2.host_id IS NOT DISTINCT FROM "
	    "c.host_id"
	    "   AND b2.commit_id IS NOT DISTINCT FROM (SELECT commit_id"
	    "    FROM jobs WHERE id = p.base_job_id)"
	    "   AND p2.analysed = 1 AND p2.bisect_id IS NULL)"
	    " ORDER BY c.point, c.metric");
	int rc;

	if (st == NULL)
		return -1;
	store_i_alert_bind_group(st, x->commit_id, x->job, x->host_id);
	while ((rc = db_step(st)) == DB_ROW) {
		struct store_alert_cmp *c;
		int64_t pair = db_col_int64(st, 0);
		size_t i;

		x->cmp = xreallocarray(x->cmp, x->ncmp + 1, sizeof(*x->cmp));
		c = &x->cmp[x->ncmp++];
		memset(c, 0, sizeof(*c));
		c->pair_id = pair;
		c->base_job_id = db_col_int64(st, 1);
		c->cand_job_id = db_col_int64(st, 2);
		c->point = store_i_col_dup(st, 3);
		c->metric = store_i_col_dup(st, 4);
		c->unit = store_i_col_dup(st, 5);
		c->better = store_i_col_dup(st, 6);
		c->verdict = store_i_col_dup(st, 7);
		c->note = store_i_col_dup(st, 8);
		c->base_median = store_i_col_num(st, 9);
		c->cand_median = store_i_col_num(st, 10);
		c->change_pct = store_i_col_num(st, 11);
		c->ci_low = store_i_col_num(st, 12);
		c->ci_high = store_i_col_num(st, 13);
		c->n_base = db_col_int64(st, 14);
		c->n_cand = db_col_int64(st, 15);
		c->base_mean = store_i_col_num(st, 16);
		c->base_sd =
		    sd_of(c->base_mean, store_i_col_num(st, 17), c->n_base);
		c->cand_mean = store_i_col_num(st, 18);
		c->cand_sd =
		    sd_of(c->cand_mean, store_i_col_num(st, 19), c->n_cand);
		/* docs/HOST.md: the sides ran under different host states */
		c->suspect = db_col_int(st, 23) != 0;
		if (x->branch == NULL)
			x->branch = store_i_col_dup(st, 20);
		if (x->base_sha == NULL)
			x->base_sha = store_i_col_dup(st, 21);
		for (i = 0; i < x->npairs; i++)
			if (x->pairs[i] == pair)
				break;
		if (i == x->npairs) {
			x->pairs = xreallocarray(
			    x->pairs, x->npairs + 1, sizeof(*x->pairs));
			x->pairs[x->npairs++] = pair;
		}
		if (x->spec == NULL)
			x->spec = store_i_col_dup(st, 22);
	}
	store_i_release(s, st);
	return rc == DB_DONE ? 0 : store_i_dberr(s, "alert comparisons");
}

static int
info_cps(struct store *s, struct store_alert_info *x)
{
	struct db_stmt *st;
	size_t i;
	int rc = DB_DONE;

	st = store_i_stmt(s,
	    "SELECT hs.point, hs.metric, cp.direction, cp.before, cp.after,"
	    " cp.change_pct, cp.p,"
	    " (SELECT c.sha FROM history_points lo JOIN jobs j"
	    "   ON j.id = lo.job_id JOIN commits c ON c.id = j.commit_id"
	    "   WHERE lo.series_id = cp.series_id AND lo.seq = cp.lo_seq),"
	    " (SELECT c.sha FROM history_points hi JOIN jobs j"
	    "   ON j.id = hi.job_id JOIN commits c ON c.id = j.commit_id"
	    "   WHERE hi.series_id = cp.series_id AND hi.seq = cp.hi_seq)"
	    " FROM history_points hp"
	    " JOIN change_points cp ON cp.series_id = hp.series_id"
	    "   AND cp.seq = hp.seq"
	    " JOIN history_series hs ON hs.id = hp.series_id"
	    " WHERE hp.pair_id = ?1 ORDER BY hs.point, hs.metric");
	if (st == NULL)
		return -1;
	for (i = 0; i < x->npairs; i++) {
		db_reset(st);
		db_bind_int64(st, 1, x->pairs[i]);
		while ((rc = db_step(st)) == DB_ROW) {
			struct store_alert_cp *c;

			x->cp =
			    xreallocarray(x->cp, x->ncp + 1, sizeof(*x->cp));
			c = &x->cp[x->ncp++];
			c->point = store_i_col_dup(st, 0);
			c->metric = store_i_col_dup(st, 1);
			c->direction = store_i_col_dup(st, 2);
			c->before = store_i_col_num(st, 3);
			c->after = store_i_col_num(st, 4);
			c->change_pct = store_i_col_num(st, 5);
			c->p = store_i_col_num(st, 6);
			c->lo_sha = store_i_col_dup(st, 7);
			c->hi_sha = store_i_col_dup(st, 8);
		}
		if (rc != DB_DONE)
			break;
	}
	store_i_release(s, st);
	return rc == DB_DONE ? 0 : store_i_dberr(s, "alert change points");
}

/* The newest ended bisection of the group's pairs (store/bisect.h). */
static int
info_bisect(struct store *s, struct store_alert_info *x)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT b.id, b.state, b.culprit_sha, (SELECT subject FROM"
	    "  commits WHERE tree_id = b.tree_id AND sha = b.culprit_sha),"
	    " b.verify_parent, b.verify_revert, b.reason,"
	    " b.origin = 'change-point', b.origin_sha, b.branch"
	    " FROM bisections b"
	    " JOIN pairs p ON p.id = b.pair_id"
	    " JOIN jobs j ON j.id = p.cand_job_id"
	    " WHERE j.commit_id = ?1 AND p.name = ?2 AND p.host_id IS NOT "
	    "DISTINCT FROM ?3"
	    " AND b.state IN ('done', 'inconclusive')"
	    " ORDER BY b.id DESC LIMIT 1");
	int rc;

	if (st == NULL)
		return -1;
	store_i_alert_bind_group(st, x->commit_id, x->job, x->host_id);
	rc = db_step(st);
	if (rc == DB_ROW) {
		const char *sha = db_col_text(st, 2);
		const char *subj = db_col_text(st, 3);

		x->bisect_id = db_col_int64(st, 0);
		x->bisect_state = store_i_col_dup(st, 1);
		if (sha != NULL)
			x->bisect = xasprintf(
			    "%.12s %s", sha, subj ? subj : "(subject unknown)");
		if (db_col_type(st, 4) != DB_NULL)
			x->bisect_parent = store_i_col_dup(st, 4);
		if (db_col_type(st, 5) != DB_NULL)
			x->bisect_revert = store_i_col_dup(st, 5);
		if (db_col_type(st, 6) != DB_NULL)
			x->bisect_reason = store_i_col_dup(st, 6);
		if (db_col_int(st, 7)) {
			const char *o = db_col_text(st, 8);
			const char *br = db_col_text(st, 9);

			x->bisect_origin = xasprintf("bisected from the change "
			                             "point at %.12s on %s "
			                             "history",
			    o ? o : "unknown", br && br[0] ? br : "unknown");
		}
	}
	store_i_count_steps(s, st);
	store_i_release(s, st);
	return rc == DB_ROW || rc == DB_DONE ? 0
	                                     : store_i_dberr(s, "alert bisect");
}

/* The first suspect pair's reason (docs/HOST.md), if any. */
static int
info_suspect(struct store *s, struct store_alert_info *x)
{
	struct db_stmt *st;
	size_t i;
	int rc = DB_DONE;

	if ((st = store_i_stmt(s,
	         "SELECT suspect FROM pairs WHERE id = ?1"
	         " AND suspect IS NOT NULL")) == NULL)
		return -1;
	for (i = 0; i < x->npairs && x->suspect == NULL; i++) {
		db_reset(st);
		db_bind_int64(st, 1, x->pairs[i]);
		if ((rc = db_step(st)) == DB_ROW) {
			x->suspect = store_i_col_dup(st, 0);
			rc = DB_DONE;
		} else if (rc != DB_DONE)
			break;
	}
	store_i_release(s, st);
	return rc == DB_DONE ? 0 : store_i_dberr(s, "alert suspect");
}

/*
 * A pair made by the submit API names no branch (pairs.branch is NULL):
 * the branches the watcher recorded the commit on say where it is
 * (comma-separated, in the order seen); a commit on none stays unknown.
 */
static int
info_commit_branches(struct store *s, struct store_alert_info *x)
{
	struct db_stmt *st = store_i_stmt(
	    s, "SELECT branches FROM commits WHERE id = ?1 AND branches <> ''");
	int rc;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, x->commit_id);
	if ((rc = db_step(st)) == DB_ROW)
		x->branch = store_i_col_dup(st, 0);
	store_i_release(s, st);
	return rc == DB_ROW || rc == DB_DONE
	    ? 0
	    : store_i_dberr(s, "alert commit branches");
}

int
store_alert_info_get(struct store *s, struct store_alert_info **out,
    int64_t commit_id, const char *job, int64_t host_id)
{
	struct store_alert_info *x = xcalloc(1, sizeof(*x));
	struct db_stmt *st;
	int r;

	*out = NULL;
	x->commit_id = commit_id;
	x->host_id = host_id;
	x->job = xstrdup(job);
	if ((r = info_commit(s, x)) != 0 || (r = info_cmps(s, x)) != 0 ||
	    (r = info_series(s, x)) != 0 || (r = info_cps(s, x)) != 0 ||
	    (r = info_bisect(s, x)) != 0 ||
	    (x->branch == NULL && (r = info_commit_branches(s, x)) != 0))
		goto fail;
	if ((st = store_i_stmt(s,
	         "SELECT name, inventory FROM hosts WHERE id = ?1")) == NULL) {
		r = -1;
		goto fail;
	}
	db_bind_int64(st, 1, host_id);
	if (db_step(st) == DB_ROW) {
		x->host = store_i_col_dup(st, 0);
		x->inventory = store_i_col_dup(st, 1);
	}
	store_i_release(s, st);
	if ((r = info_suspect(s, x)) != 0)
		goto fail;
	*out = x;
	return 0;
fail:
	store_alert_info_release(x);
	return r;
}
