/*
 * The store's fleet tables: sibling groups (store/hosts.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "store/hosts.h"
#include "store/store.h"
#include "store/store_int.h"

struct fleet_group {
	char *key;
	int64_t id;
};

void
store_i_groups_free(struct store *s)
{
	size_t i;

	for (i = 0; i < s->ngroups; i++)
		free(s->groups[i].key);
	free(s->groups);
	s->groups = NULL;
	s->ngroups = 0;
}

void
store_group_begin(struct store *s)
{
	store_i_groups_free(s);
	s->group_scope = 1;
}

void
store_group_end(struct store *s)
{
	store_i_groups_free(s);
	s->group_scope = 0;
}

/*
 * What the pairs of one group have in common, as one text: everything
 * but the cgroup axis (the same fields daemon/verdict.c leaves out when
 * it matches siblings).
 */
static const char group_key_sql[] =
    "SELECT p.name || char(31) || ifnull(p.host_id, '') || char(31)"
    " || c.labels || char(31) || ifnull(b.commit_id, '') || char(31)"
    " || ifnull(c.commit_id, '') || char(31)"
    " || json_remove(b.params, '$.point', '$.params.cgroup',"
    "  '$.cgroup.path') || char(31)"
    " || json_remove(c.params, '$.point', '$.params.cgroup',"
    "  '$.cgroup.path')"
    " FROM pairs p JOIN jobs b ON b.id = p.base_job_id"
    " JOIN jobs c ON c.id = p.cand_job_id WHERE p.id = ?1";

int
store_i_group_assign(struct store *s, int64_t pair_id)
{
	sqlite3_stmt *st;
	const unsigned char *k;
	int64_t group = pair_id;
	size_t i;
	int r;

	/* A connection opened at an older schema (tests) has no groups. */
	if (s->version < 10)
		return 0;
	if (s->group_scope) {
		if ((st = store_i_stmt(s, group_key_sql)) == NULL)
			return -1;
		sqlite3_bind_int64(st, 1, pair_id);
		if (sqlite3_step(st) != SQLITE_ROW ||
		    (k = sqlite3_column_text(st, 0)) == NULL) {
			store_i_release(s, st);
			return store_i_dberr(s, "sibling group key");
		}
		for (i = 0; i < s->ngroups; i++)
			if (strcmp(s->groups[i].key, (const char *)k) == 0)
				break;
		if (i < s->ngroups) {
			group = s->groups[i].id;
		} else {
			s->groups = xreallocarray(
			    s->groups, s->ngroups + 1, sizeof(*s->groups));
			s->groups[s->ngroups].key = xstrdup((const char *)k);
			s->groups[s->ngroups++].id = pair_id;
		}
		store_i_release(s, st);
	}
	if ((st = store_i_stmt(
	         s, "UPDATE pairs SET sib_group = ?2 WHERE id = ?1")) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	sqlite3_bind_int64(st, 2, group);
	r = store_i_step_done(s, st, "sibling group");
	store_i_release(s, st);
	return r;
}

int
store_pair_group(struct store *s, int64_t *out_group, int64_t pair_id)
{
	sqlite3_stmt *st =
	    store_i_stmt(s, "SELECT sib_group FROM pairs WHERE id = ?1");
	int rc;

	*out_group = 0;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out_group = sqlite3_column_int64(st, 0);
	store_i_release(s, st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld not found",
		    (long long)pair_id);
	return store_i_dberr(s, "pair group");
}

int
store_verdict_unchanged(
    struct store *s, const struct store_side_stamp *sides, size_t n)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT j.runs, (SELECT count(*) FROM runs r WHERE r.job_id = "
	    "j.id),"
	    " j.state FROM jobs j WHERE j.id = ?1");
	size_t i;
	int r = 0, rc;

	if (st == NULL)
		return -1;
	for (i = 0; r == 0 && i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, sides[i].job_id);
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			r = store_i_dberr(s, "verdict sides");
			break;
		}
		if (rc == SQLITE_DONE ||
		    sqlite3_column_int64(st, 0) != sides[i].runs ||
		    sqlite3_column_int64(st, 1) != sides[i].stored ||
		    strcmp((const char *)sqlite3_column_text(st, 2),
		        "success") != 0)
			r = err_setc(&s->err, ERR_CONFLICT,
			    "job %lld changed while its verdict was made",
			    (long long)sides[i].job_id);
	}
	store_i_release(s, st);
	return r;
}

/* ---- history in commit order ---- */

int
store_i_commit_position(struct store *s, int64_t commit_id)
{
	sqlite3_stmt *st;
	int r;

	if (s->version < 11)
		return 0;
	/* Parents are recorded before their children (the watcher walks
	 * oldest first), so the first parent's position is known here. */
	st = store_i_stmt(s,
	    "UPDATE commits SET fp_pos = coalesce((SELECT p.fp_pos + 1"
	    " FROM commits p WHERE p.tree_id = commits.tree_id AND p.sha ="
	    "  CASE WHEN instr(commits.parents, ' ') > 0"
	    "  THEN substr(commits.parents, 1, instr(commits.parents, ' ') - 1)"
	    "  ELSE commits.parents END), 0)"
	    " WHERE id = ?1 AND fp_pos IS NULL AND first_seen IS NOT NULL");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, commit_id);
	r = store_i_step_done(s, st, "commit position");
	store_i_release(s, st);
	return r;
}

/* Runs one statement of a series with two int binds; 0 or -1.  sql: a
 * literal (the statement cache keys on it). */
static int
exec2(struct store *s, const char *sql, int64_t a, int64_t b, const char *what)
{
	sqlite3_stmt *st = store_i_stmt(s, sql);
	int r;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	r = store_i_step_done(s, st, what);
	store_i_release(s, st);
	return r;
}

/*
 * Making room at seq ?2 of series ?1: the later points and their change
 * points move up one.  seq is part of a unique key, so the move goes
 * through negative values (-(seq + 2), then back to seq + 1).
 */
static const char *const moves[] = {
	"UPDATE history_points SET seq = -(seq + 2)"
	" WHERE series_id = ?1 AND seq >= ?2",
	"UPDATE history_points SET seq = -seq - 1"
	" WHERE series_id = ?1 AND seq < 0 AND ?2 >= 0",
	"UPDATE change_points"
	" SET seq = CASE WHEN seq >= ?2 THEN -(seq + 2) ELSE seq END,"
	" lo_seq = lo_seq + (lo_seq >= ?2), hi_seq = hi_seq + (hi_seq >= ?2)"
	" WHERE series_id = ?1 AND (seq >= ?2 OR hi_seq >= ?2)",
	"UPDATE change_points SET seq = -seq - 1"
	" WHERE series_id = ?1 AND seq < 0 AND ?2 >= 0",
};

int
store_i_history_insert(struct store *s, int64_t series, int64_t pair_id,
    int64_t job_id, int64_t comparison_id, double value, int64_t now)
{
	sqlite3_stmt *st;
	int64_t seq = -1;
	size_t i;
	int have_pos = 0, rc, r;

	/*
	 * Where it goes: before the first point of a later commit, else
	 * last.  The candidate's commit position, when it has one.
	 */
	st = store_i_stmt(s,
	    "SELECT EXISTS (SELECT 1 FROM history_points"
	    "  WHERE series_id = ?1 AND pair_id = ?2),"
	    " c.fp_pos, (SELECT min(h.seq) FROM history_points h"
	    "  WHERE h.series_id = ?1 AND h.pos > c.fp_pos),"
	    " (SELECT coalesce(max(seq) + 1, 0) FROM history_points"
	    "  WHERE series_id = ?1)"
	    " FROM (SELECT 1) LEFT JOIN jobs j ON j.id = ?3"
	    " LEFT JOIN commits c ON c.id = j.commit_id");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, series);
	sqlite3_bind_int64(st, 2, pair_id);
	sqlite3_bind_int64(st, 3, job_id);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		store_i_release(s, st);
		return store_i_dberr(s, "history place");
	}
	if (sqlite3_column_int(st, 0)) {
		store_i_release(s, st);
		return 0; /* the pair is there already */
	}
	have_pos = sqlite3_column_type(st, 1) != SQLITE_NULL;
	if (have_pos && sqlite3_column_type(st, 2) != SQLITE_NULL)
		seq = sqlite3_column_int64(st, 2);
	else
		seq = sqlite3_column_int64(st, 3);
	store_i_release(s, st);
	for (i = 0, r = 0; r == 0 && i < sizeof(moves) / sizeof(moves[0]); i++)
		r = exec2(s, moves[i], series, seq, "history move");
	if (r != 0)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO history_points (series_id, seq, pair_id, job_id,"
	    " comparison_id, value, created, pos)"
	    " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7,"
	    " (SELECT c.fp_pos FROM jobs j JOIN commits c"
	    "  ON c.id = j.commit_id WHERE j.id = ?4)");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, series);
	sqlite3_bind_int64(st, 2, seq);
	sqlite3_bind_int64(st, 3, pair_id);
	sqlite3_bind_int64(st, 4, job_id);
	if (comparison_id > 0)
		sqlite3_bind_int64(st, 5, comparison_id);
	sqlite3_bind_double(st, 6, value);
	sqlite3_bind_int64(st, 7, now);
	r = store_i_step_done(s, st, "history point");
	store_i_release(s, st);
	return r;
}

int
store_history_window(struct store *s, double **out_values, int64_t **out_seqs,
    size_t *out_n, int64_t *out_total, int64_t series, int64_t around,
    size_t max)
{
	sqlite3_stmt *st;
	int64_t total = 0, from;
	double *v = NULL;
	int64_t *q = NULL;
	size_t n = 0;
	int rc;

	*out_values = NULL;
	*out_seqs = NULL;
	*out_n = 0;
	*out_total = 0;
	st = store_i_stmt(
	    s, "SELECT count(*) FROM history_points WHERE series_id = ?1");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, series);
	if (sqlite3_step(st) == SQLITE_ROW)
		total = sqlite3_column_int64(st, 0);
	store_i_release(s, st);
	/* max points with around in the middle, as far as the ends let. */
	from = around - (int64_t)max / 2;
	if (from > total - (int64_t)max)
		from = total - (int64_t)max;
	if (from < 0)
		from = 0;
	st = store_i_stmt(s,
	    "SELECT seq, value FROM history_points WHERE series_id = ?1"
	    " AND seq >= ?2 ORDER BY seq LIMIT ?3");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, series);
	sqlite3_bind_int64(st, 2, from);
	sqlite3_bind_int64(st, 3, (int64_t)max);
	v = xreallocarray(NULL, max + 1, sizeof(*v));
	q = xreallocarray(NULL, max + 1, sizeof(*q));
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		q[n] = sqlite3_column_int64(st, 0);
		v[n++] = sqlite3_column_double(st, 1);
	}
	store_i_release(s, st);
	if (n < max && rc != SQLITE_DONE) {
		free(v);
		free(q);
		return store_i_dberr(s, "history window");
	}
	*out_values = v;
	*out_seqs = q;
	*out_n = n;
	*out_total = total;
	return 0;
}

/* ---- patch mail waiting for its series ---- */

int
store_mail_pending_put(struct store *s, const char *inbox, const char *sha,
    const char *data, size_t len, int64_t now)
{
	sqlite3_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO inbox_pending (inbox, sha, data, created)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (inbox, sha) DO NOTHING");
	if ((ok = st != NULL)) {
		store_i_bind_text(st, 1, inbox);
		store_i_bind_text(st, 2, sha);
		sqlite3_bind_blob(st, 3, data, (int)len, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, now);
		ok = store_i_step_done(s, st, "pending mail") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_mail_pending_each(struct store *s, const char *inbox,
    int (*cb)(const char *, const char *, size_t, void *), void *arg)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT sha, data FROM inbox_pending WHERE inbox = ?1"
	    " ORDER BY seq");
	int rc, r = 0;

	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, inbox);
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
		r = cb((const char *)sqlite3_column_text(st, 0),
		    (const char *)sqlite3_column_blob(st, 1),
		    (size_t)sqlite3_column_bytes(st, 1), arg);
	if (r == 0 && rc != SQLITE_DONE)
		r = store_i_dberr(s, "pending mail");
	store_i_release(s, st);
	return r;
}

int
store_mail_pending_drop(struct store *s, const char *inbox, const char *sha)
{
	sqlite3_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(
	    s, "DELETE FROM inbox_pending WHERE inbox = ?1 AND sha = ?2");
	if ((ok = st != NULL)) {
		store_i_bind_text(st, 1, inbox);
		store_i_bind_text(st, 2, sha);
		ok = store_i_step_done(s, st, "drop pending mail") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

/* What a host row's "online" is judged against (store_hosts_get). */
struct host_clock {
	int64_t now, online_s;
};

static void
host_scan(void *row, sqlite3_stmt *st, void *arg)
{
	const struct host_clock *k = arg;
	struct store_host *h = row;

	h->id = sqlite3_column_int64(st, 0);
	h->name = store_i_col_dup(st, 1);
	h->labels_json = store_i_col_dup(st, 2);
	h->inventory_json = store_i_col_dup(st, 3);
	h->last_seen = sqlite3_column_int64(st, 4);
	h->online = h->last_seen >= k->now - k->online_s;
	h->current_job = sqlite3_column_int64(st, 5);
	h->registered = sqlite3_column_int64(st, 6);
	/* docs/HOST.md: a canary found the host drifting. */
	h->quarantined = store_i_col_dup(st, 7);
	h->has_quarantined_at = sqlite3_column_type(st, 8) != SQLITE_NULL;
	h->quarantined_at = sqlite3_column_int64(st, 8);
}

int
store_hosts_get(struct store *s, struct store_hosts *out, int64_t limit,
    int64_t cursor, int64_t now, int64_t online_s)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT h.id, h.name, h.labels, h.inventory, h.last_seen,"
	    " (SELECT j.id FROM jobs j WHERE j.lease_owner = h.id"
	    "  AND j.state = 'running' LIMIT 1), h.registered,"
	    " h.quarantined, h.quarantined_at"
	    " FROM hosts h WHERE h.id > ?1 ORDER BY h.id LIMIT ?2");
	struct host_clock k = { now, online_s };
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, cursor);
	sqlite3_bind_int64(st, 2, limit);
	r = store_i_rows(
	    s, st, &v, &out->n, sizeof(*out->v), host_scan, &k, "list hosts");
	out->v = v;
	if (r != 0) {
		store_hosts_release(out);
		return r;
	}
	/* Hosts page upwards (h.id > cursor): id 1 is not an end. */
	out->next_cursor = store_i_next_cursor(
	    out->n, limit, out->n ? out->v[out->n - 1].id : 0, STORE_I_ASC);
	return 0;
}

void
store_hosts_release(struct store_hosts *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].labels_json);
		free(l->v[i].inventory_json);
		free(l->v[i].quarantined);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
