/*
 * The workers' leases and the polled change signal (store/leases.h).
 * Only PostgreSQL runs this SQL: a SQLite database has one daemon.  Each
 * statement runs alone, outside the store's transactions, so it never
 * moves the store's generation and never waits for the process's write
 * lock; a serialization failure is retried by the backend.  The leases'
 * statements are PostgreSQL's own SQL (its clock): prepared with
 * store_i_prep, not from the statement cache, whose statements
 * tests/lint/store_plans.py has SQLite plan.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "store/counts.h"
#include "store/leases.h"
#include "store/store_int.h"

/* The database's clock, in milliseconds since the epoch. */
#define NOW_MS "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

static void
fill(struct store_lease *out, int held, const char *holder, int64_t held_ms,
    int64_t left_ms)
{
	out->db_ms = 0;
	out->held = held;
	snprintf(out->holder, sizeof(out->holder), "%s", holder ? holder : "");
	out->held_ms = held_ms;
	out->left_ms = left_ms;
}

int
store_lease_take(struct store *s, struct store_lease *out, const char *name,
    const char *me, int64_t lease_ms)
{
	struct db_stmt *st;
	int rc;

	if (db_backend(s->db) != DB_PG) {
		fill(out, 1, me, 0, lease_ms);
		return 0;
	}
	fill(out, 0, "", 0, 0);
	/*
	 * Taken when there is no row, when its hold has ended, or when me
	 * holds it (its start stays, unless its hold had ended).  The first
	 * row is the lease as it is after the statement: me's when the
	 * insert or update took place, else the row as it was.
	 */
	st = store_i_prep(s,
	    "WITH c AS (SELECT " NOW_MS " AS ms),"
	    " up AS (INSERT INTO worker_leases AS l (name, holder, taken_ms,"
	    "  expires_ms) SELECT ?1::text, ?2::text, c.ms, c.ms + ?3 FROM c"
	    "  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,"
	    "  taken_ms = CASE WHEN l.holder = excluded.holder AND"
	    "  l.expires_ms > excluded.taken_ms THEN l.taken_ms"
	    "  ELSE excluded.taken_ms END, expires_ms = excluded.expires_ms"
	    "  WHERE l.holder = excluded.holder"
	    "  OR l.expires_ms <= excluded.taken_ms"
	    "  RETURNING l.holder, l.taken_ms, l.expires_ms)"
	    " SELECT 1, u.holder, c.ms - u.taken_ms, u.expires_ms - c.ms,"
	    " c.ms FROM up u, c"
	    " UNION ALL SELECT 0, l.holder, c.ms - l.taken_ms,"
	    " l.expires_ms - c.ms, c.ms FROM worker_leases l, c WHERE l.name = "
	    "?1::text"
	    " AND NOT EXISTS (SELECT 1 FROM up)");
	if (st == NULL)
		return -1;
	db_bind_text(st, 1, name, -1);
	db_bind_text(st, 2, me, -1);
	db_bind_int64(st, 3, lease_ms);
	rc = db_step(st);
	if (rc == DB_ROW) {
		fill(out, db_col_int(st, 0), db_col_text(st, 1),
		    db_col_int64(st, 2), db_col_int64(st, 3));
		out->db_ms = db_col_int64(st, 4);
	} else if (rc != DB_DONE)
		store_i_dberr(s, "lease");
	db_finalize(st);
	return rc == DB_ROW || rc == DB_DONE ? 0 : -1;
}

int
store_lease_release(struct store *s, const char *name, const char *me)
{
	struct db_stmt *st;
	int rc;

	if (db_backend(s->db) != DB_PG)
		return 0;
	st = store_i_prep(s,
	    "UPDATE worker_leases SET expires_ms = " NOW_MS
	    " WHERE name = ?1::text AND holder = ?2::text");
	if (st == NULL)
		return -1;
	db_bind_text(st, 1, name, -1);
	db_bind_text(st, 2, me, -1);
	rc = store_i_step_done(s, st, "lease release");
	db_finalize(st);
	return rc;
}

/* The generation the last poll of this process read (-1: none yet),
 * and this process's own moves of it counted then. */
static pthread_mutex_t poll_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t polled = -1, polled_own;

/*
 * Another process moved the generation when it moved by more than this
 * process's own moves since the last poll.  Those are counted just
 * before they move it (store.c, gen_bump) and read before the
 * generation, so one counted and not yet made hides another's move from
 * this poll, which the next poll then sees: a move is told at most a
 * tick late, never lost.  From schema v40 the generation is the
 * sequence store_gen_seq (last_value: the latest nextval of any
 * session, committed or not, as a sequence has no transactions); the
 * statement is PostgreSQL's own, prepared each poll.
 */
int
store_gen_poll(struct store *s)
{
	struct db_stmt *st;
	int64_t n, own;
	int moved, other, seq, rc;

	if (db_backend(s->db) != DB_PG || s->version < STORE_GEN_VERSION)
		return 0;
	own = store_i_gen_own();
	seq = s->version >= STORE_COUNTS_VERSION;
	st = seq ? store_i_prep(s, "SELECT last_value FROM store_gen_seq")
	         : store_i_stmt(s, "SELECT n FROM store_gen WHERE id = 1");
	if (st == NULL)
		return -1;
	rc = db_step(st);
	n = rc == DB_ROW ? db_col_int64(st, 0) : 0;
	if (rc != DB_ROW)
		store_i_dberr(s, "store generation");
	if (seq)
		db_finalize(st);
	else
		store_i_release(s, st);
	if (rc != DB_ROW)
		return -1;
	pthread_mutex_lock(&poll_mu);
	moved = polled >= 0 && n != polled;
	other = polled >= 0 && n - polled > own - polled_own;
	polled = n;
	polled_own = own;
	pthread_mutex_unlock(&poll_mu);
	if (moved)
		store_i_gen_moved();
	return other;
}
