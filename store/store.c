/*
 * The store's connection: opening a database (migrate.c brings its
 * schema up to date), the process-wide writer lock, transactions, the
 * data version, the statement and paging helpers every entity file uses
 * (store_int.h) and the text helpers of the reads.  See store.h for the
 * rules.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "store/counts.h"
#include "store/jobs.h"
#include "store/store.h"
#include "store/store_int.h"
#include "store/tx.h"

const char *const store_job_states[5] = { "queued", "running", "success",
	"failed", "cancelled" };

/*
 * Writers of all connections in this process take this lock around
 * BEGIN IMMEDIATE ... COMMIT.  SQLite would serialise them anyway, but
 * its busy handler sleeps in steps of milliseconds; a lock of our own
 * hands the write lock over at once.  busy_timeout still covers other
 * processes.  Urgent writers (a claim, a heartbeat: a runner waits on
 * them, and a lost heartbeat loses a lease) go before waiting uploads:
 * under a stream of uploads from many runners a plain mutex let a claim
 * wait behind dozens of them.
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

/* The backend's name in the store's errors. */
static const char *
backend(struct store *s)
{
	return db_backend(s->db) == DB_PG ? "postgresql" : "sqlite";
}

static int
dberr(struct store *s, const char *what)
{
	s->lost_race |= db_errcode(s->db) == DB_BUSY;
	return err_set(
	    &s->err, "%s: %s: %s", backend(s), what, db_errmsg(s->db));
}

/* The connection's last error as the store's; -1. */
static int
exec_failed(struct store *s)
{
	s->lost_race |= db_errcode(s->db) == DB_BUSY;
	return err_set(&s->err, "%s: %s", backend(s), db_errmsg(s->db));
}

static int
exec(struct store *s, const char *sql)
{
	if (db_exec(s->db, sql) != 0)
		return exec_failed(s);
	return 0;
}

static struct db_stmt *
prep(struct store *s, const char *sql)
{
	struct db_stmt *st = db_prepare(s->db, sql);

	if (st == NULL)
		dberr(s, "prepare");
	return st;
}

/* A cached statement, reset and unbound. */
struct db_stmt *
store_i_cached(struct store *s, enum stmt_slot slot, const char *sql)
{
	if (s->st[slot] == NULL)
		return s->st[slot] = prep(s, sql);
	db_reset(s->st[slot]);
	db_clear_bindings(s->st[slot]);
	return s->st[slot];
}

static void
bind_text(struct db_stmt *st, int i, const char *v)
{
	db_bind_text(st, i, v, -1);
}

void
store_i_bind_id(struct db_stmt *st, int i, int64_t v)
{
	if (v > 0)
		db_bind_int64(st, i, v);
	else
		db_bind_null(st, i);
}

void
store_i_bind_num(struct db_stmt *st, int i, double v)
{
	if (isfinite(v))
		db_bind_double(st, i, v);
	else
		db_bind_null(st, i);
}

int
store_i_tx_again(struct store *s, int try)
{
	struct timespec ts = { 0, (long)(1 + try * try) * 5000000L };

	if (s->in_tx || try + 1 >= STORE_TX_TRIES || !s->lost_race)
		return 0;
	nanosleep(&ts, NULL);
	store_errclear(s);
	s->lost_race = 0;
	return 1;
}

int
store_tx_retry(
    struct store *s, int (*fn)(struct store *s, void *arg), void *arg)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, fn(s, arg));
	return rc;
}

int
store_tx_lost(const struct store *s)
{
	return s->lost_race;
}

int
store_i_write1(struct store *s, struct db_stmt *st, const char *what)
{
	int rc, try;

	if (st == NULL)
		return -1;
	for (try = 0;; try++) {
		if (store_i_tx_begin(s) != 0)
			break;
		rc = db_step(st);
		if (rc != DB_DONE && rc != DB_ROW) {
			store_i_dberr(s, what);
			store_i_tx_end(s, 0);
		} else if (store_i_tx_end(s, 1) == 0) {
			store_i_release(s, st);
			return 0;
		}
		if (!store_i_tx_again(s, try))
			break;
		db_reset(st);
	}
	store_i_release(s, st);
	return -1;
}

const char *
store_i_col_text(struct db_stmt *st, int i)
{
	return db_col_text(st, i);
}

/* Steps a statement expected to finish without rows; 0 or -1. */
static int
step_done(struct store *s, struct db_stmt *st, const char *what)
{
	int rc = db_step(st);

	if (rc != DB_DONE && rc != DB_ROW)
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
	s->lost_race = 0;
	/* PostgreSQL locks rows, not the database: its writers go at once,
	 * each waiting only for the rows another holds. */
	s->wlocked = db_backend(s->db) != DB_PG;
	if (s->wlocked)
		wlock(urgent, s->writer);
	if (db_begin_write(s->db) != 0) {
		dberr(s, "begin");
		if (s->wlocked)
			wunlock();
		s->wlocked = 0;
		return -1;
	}
	s->have_wlk = 1;
	s->tx_changes0 = db_total_changes(s->db);
	s->tx_quiet = 0;
	return 0;
}

int64_t
store_i_quiet_begin(struct store *s)
{
	return db_total_changes(s->db);
}

void
store_i_quiet_end(struct store *s, int64_t begin)
{
	s->tx_quiet += db_total_changes(s->db) - begin;
}

/*
 * PostgreSQL's data version of this process (store_data_version): it
 * moves after each commit here that moved the store's generation, and
 * when store_gen_poll finds the generation moved.  pg_own_moves counts
 * this process's commits that move the generation, from just before
 * their COMMIT (less those that failed), for store_gen_poll to tell
 * them from another process's.  __atomic.
 */
static int64_t pg_data_version, pg_own_moves;

void
store_i_gen_moved(void)
{
	__atomic_add_fetch(&pg_data_version, 1, __ATOMIC_RELEASE);
}

int64_t
store_i_gen_own(void)
{
	return __atomic_load_n(&pg_own_moves, __ATOMIC_ACQUIRE);
}

/*
 * The store's generation moves with a commit that changed a row beside
 * a heartbeat's (migration v32): on SQLite store_gen.n, one more inside
 * the transaction.  gen_bump says whether this one moves it, and on
 * SQLite moves it; 0 or -1.
 *
 * On PostgreSQL (v40) the generation is the sequence store_gen_seq,
 * moved by gen_seq_bump after the COMMIT, in the COMMIT's round trip.
 * A row updated by every write transaction would be locked by each
 * until it commits: every other writer, of this daemon and of the
 * others, would wait for it there.
 * nextval locks no row and is never rolled back.  What must hold: a
 * page cached before a commit is not served after it, here at once and
 * on another daemon at most one poll (store_gen_poll) later.
 *  - Here: this process's data version moves after the COMMIT (tx_end),
 *    so a page made before it is keyed at the old version.
 *  - Another daemon: its poll reads the sequence and moves its data
 *    version when it moved.  The bump follows the COMMIT, so every read
 *    after the poll that saw it sees the commit.  A bump before the
 *    COMMIT (a sequence ignores the transaction) could be seen first: a
 *    page made then from the old rows would be cached at the new
 *    generation and outlive the commit.
 *  - A transaction that fails never bumps; a bump never goes back, so
 *    a generation read once is never read again after another commit.
 *  - A bump lost after its COMMIT (the connection dropped between the
 *    two) is owed: the next transaction's end on this connection pays
 *    it.  A daemon killed in between leaves the others' caches one
 *    commit behind until the next write through any daemon moves the
 *    generation (the next upload, claim or verdict), or until that
 *    daemon starts again: a process's first write transaction on
 *    PostgreSQL pays such a debt (pg_start_owed), in its COMMIT's round
 *    trip.  Opening a connection bumps nothing: a process that never
 *    writes (a daemon of role web, a page thread) never owes.
 */
static int pg_start_owed = 1;

static int
gen_bump(struct store *s)
{
	struct db_stmt *st;
	int r;

	if (s->version < STORE_GEN_VERSION ||
	    db_total_changes(s->db) - s->tx_changes0 - s->tx_quiet <= 0)
		return 0;
	if (db_backend(s->db) == DB_PG && s->version >= STORE_COUNTS_VERSION) {
		s->tx_moved = 1;
		return 0;
	}
	st = store_i_cached(
	    s, S_GEN_BUMP, "UPDATE store_gen SET n = n + 1 WHERE id = 1");
	if (st == NULL)
		return -1;
	r = step_done(s, st, "store generation");
	db_reset(st);
	s->tx_moved = r == 0;
	return r;
}

/* PostgreSQL: moves the generation after a commit (gen_bump), counted
 * as this process's own move from before it; when it fails the move is
 * owed and the error dropped: the commit stands.  With commit, the
 * transaction's COMMIT goes first, in the same round trip (the bump is
 * sent only when the COMMIT succeeded): 0, or -1 when the COMMIT failed
 * (nothing moved, a debt still owed). */
static int
gen_seq_bump(struct store *s, int commit)
{
	struct db_stmt *st;
	int rc = DB_ERROR;

	__atomic_add_fetch(&pg_own_moves, 1, __ATOMIC_RELEASE);
	if (s->st[S_GEN_SEQ] == NULL)
		s->st[S_GEN_SEQ] = prep(s, "SELECT store_gen_bump()");
	st = s->st[S_GEN_SEQ];
	if (commit &&
	    (st != NULL ? db_exec_step(s->db, "COMMIT", st, &rc)
	                : db_exec(s->db, "COMMIT")) != 0) {
		__atomic_sub_fetch(&pg_own_moves, 1, __ATOMIC_RELEASE);
		exec_failed(s);
		if (st != NULL)
			db_reset(st);
		return -1;
	}
	if (st != NULL) {
		if (!commit)
			rc = db_step(st);
		/* nextval moves lastval(), the last insert id a caller may
		 * read after the commit: the one from before is kept. */
		if (rc == DB_ROW && db_col_type(st, 0) != DB_NULL)
			db_last_id_keep(s->db, db_col_int64(st, 0));
		db_reset(st);
	}
	s->gen_owed = rc != DB_ROW;
	if (s->gen_owed) {
		__atomic_sub_fetch(&pg_own_moves, 1, __ATOMIC_RELEASE);
		err_clear(&s->err);
	}
	return 0;
}

static int
tx_begin(struct store *s)
{
	return store_i_tx_begin_as(s, 0);
}

static int
tx_end(struct store *s, int ok)
{
	int r = 0, own, seq, start = 0;

	if (s->in_tx)
		return ok ? 0 : -1;
	s->tx_moved = 0;
	if (ok && gen_bump(s) == -1)
		ok = 0;
	seq = db_backend(s->db) == DB_PG && s->version >= STORE_COUNTS_VERSION;
	own = ok && s->tx_moved && db_backend(s->db) == DB_PG;
	/* Counted before the COMMIT (store_gen_poll); a sequence's bump
	 * counts itself, after it. */
	if (own && !seq)
		__atomic_add_fetch(&pg_own_moves, 1, __ATOMIC_RELEASE);
	/* The sequence's bump follows the COMMIT in its round trip. */
	if (ok && seq && __atomic_load_n(&pg_start_owed, __ATOMIC_RELAXED))
		start =
		    __atomic_exchange_n(&pg_start_owed, 0, __ATOMIC_ACQ_REL);
	if (ok && seq && (own || s->gen_owed || start)) {
		if (gen_seq_bump(s, 1) == -1) {
			ok = 0;
			if (start) /* still owed */
				__atomic_store_n(
				    &pg_start_owed, 1, __ATOMIC_RELEASE);
		}
	} else if (ok && exec(s, "COMMIT") == -1)
		ok = 0;
	if (!ok) {
		if (own && !seq)
			__atomic_sub_fetch(&pg_own_moves, 1, __ATOMIC_RELEASE);
		db_exec(s->db, "ROLLBACK");
		r = -1;
		if (seq && s->gen_owed)
			gen_seq_bump(s, 0);
	}
	if (ok && own)
		store_i_gen_moved();
	if (s->wlocked)
		wunlock();
	s->have_wlk = s->wlocked = 0;
	return r;
}

/* For the other store files (store/store_int.h). */
int
store_i_exec(struct store *s, const char *sql)
{
	return exec(s, sql);
}

int
store_i_dberr(struct store *s, const char *what)
{
	return dberr(s, what);
}

struct db_stmt *
store_i_prep(struct store *s, const char *sql)
{
	return prep(s, sql);
}

void
store_i_bind_text(struct db_stmt *st, int i, const char *v)
{
	bind_text(st, i, v);
}

char *
store_i_col_dup(struct db_stmt *st, int i)
{
	const char *t = db_col_text(st, i);

	return t ? xstrdup(t) : NULL;
}

double
store_i_col_num(struct db_stmt *st, int i)
{
	return db_col_type(st, i) == DB_NULL ? NAN : db_col_double(st, i);
}

int
store_i_step_done(struct store *s, struct db_stmt *st, const char *what)
{
	return step_done(s, st, what);
}

int
store_i_rows(struct store *s, struct db_stmt *st, void **v, size_t *n,
    size_t size, void (*scan)(void *row, struct db_stmt *st, void *arg),
    void *arg, const char *what)
{
	size_t cap = 0;
	char *row;
	int rc;

	*v = NULL;
	*n = 0;
	while ((rc = db_step(st)) == DB_ROW) {
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
	return rc == DB_DONE ? 0 : store_i_dberr(s, what);
}

int
store_i_rows_append(struct store *s, struct db_stmt *st, void **v, size_t *n,
    size_t size, void (*scan)(void *row, struct db_stmt *st, void *arg),
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
store_i_count_steps(struct store *s, struct db_stmt *st)
{
	s->read_steps += db_stmt_work(st);
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
store_i_state_page(struct store *s, struct db_stmt *st, const char *state,
    int64_t limit, int64_t cursor, void **v, size_t *n, size_t size,
    void (*scan)(void *row, struct db_stmt *st, void *arg), size_t id_off,
    const char *what, int64_t *next)
{
	int64_t last = 0;
	int r;

	*v = NULL;
	*n = 0;
	*next = 0;
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, state);
	db_bind_int64(st, 2, store_i_below(cursor));
	db_bind_int64(st, 3, limit);
	r = store_i_rows(s, st, v, n, size, scan, NULL, what);
	if (r != 0)
		return r;
	if (*n > 0)
		memcpy(
		    &last, (char *)*v + (*n - 1) * size + id_off, sizeof(last));
	*next = store_i_next_cursor(*n, limit, last, STORE_I_DESC);
	return 0;
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
	struct db_stmt *st = store_i_stmt(l->s, l->window_sql);
	int rc;

	if (st == NULL)
		return -1;
	l->bind(st, l->q);
	db_bind_int64(st, 10, below);
	db_bind_int64(st, 11, w);
	rc = store_i_scan_window(l->s, st, floor, n, l->what);
	store_i_release(l->s, st);
	return rc;
}

static int
list_rows(void *arg, int64_t floor, int64_t below, int64_t want, int64_t *got)
{
	const struct store_i_list *l = arg;
	struct db_stmt *st = store_i_stmt(l->s, l->rows_sql);

	*got = 0;
	if (st == NULL)
		return -1;
	l->bind(st, l->q);
	db_bind_int64(st, 10, below);
	db_bind_int64(st, 11, want);
	db_bind_int64(st, 12, floor);
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
store_i_scan_window(struct store *s, struct db_stmt *st, int64_t *floor,
    int64_t *got, const char *what)
{
	int rc = db_step(st);

	if (rc == DB_ROW) {
		*floor = db_col_int64(st, 0);
		*got = db_col_int64(st, 1);
	}
	store_i_count_steps(s, st);
	return rc == DB_ROW ? 0 : store_i_dberr(s, what);
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
	if (s->in_tx || s->reading)
		return 0;
	if (db_begin_read(s->db) != 0)
		return dberr(s, "begin read");
	s->reading = 1;
	return 0;
}

void
store_read_end(struct store *s)
{
	struct db_stmt *st;
	int ok;

	if (!s->reading)
		return;
	s->reading = 0;
	if (db_backend(s->db) == DB_PG) {
		/* Its COMMIT not waited for (store/db_pg.c). */
		ok = db_end_read(s->db) == 0;
	} else {
		st = store_i_stmt(s, "COMMIT");
		ok = st != NULL && db_step(st) == DB_DONE;
		store_i_release(s, st);
	}
	/* Only reads ran: a failed COMMIT leaves nothing to undo but the
	 * transaction itself. */
	if (!ok && !db_autocommit(s->db))
		db_exec(s->db, "ROLLBACK");
}

int
store_data_version(struct store *s, struct store_version *out)
{
	struct db_stmt *st;
	int64_t dv, own;

	out->gen = -1;
	if (db_backend(s->db) == DB_PG) {
		out->gen = __atomic_load_n(&pg_data_version, __ATOMIC_ACQUIRE);
		return 0;
	}
	if (db_data_version(s->db, &dv) != 0)
		return dberr(s, "data version");
	/* data_version does not move for this connection's own commits. */
	own = db_total_changes(s->db);
	if (!s->gen_ok || dv != s->gen_dv || own != s->gen_own) {
		/* Read after data_version: never older than what it says. */
		st = store_i_cached(
		    s, S_GEN, "SELECT n FROM store_gen WHERE id = 1");
		if (st == NULL)
			return -1;
		if (db_step(st) != DB_ROW) {
			db_reset(st);
			s->gen_ok = 0;
			return dberr(s, "store generation");
		}
		s->gen = db_col_int64(st, 0);
		db_reset(st);
		s->gen_dv = dv;
		s->gen_own = own;
		s->gen_ok = 1;
	}
	out->gen = s->gen;
	return 0;
}

/* ---- open ---- */

int
store_instance(struct store *s, const char **out)
{
	struct db_stmt *st;
	const char *id;
	int rc = -1;

	*out = s->instance;
	if (s->instance[0] != '\0')
		return 0;
	if ((st = store_i_stmt(s, "SELECT id FROM instance LIMIT 1")) == NULL)
		return -1;
	if (db_step(st) == DB_ROW && (id = db_col_text(st, 0)) != NULL &&
	    strlen(id) > 0 && strlen(id) < sizeof(s->instance)) {
		memcpy(s->instance, id, strlen(id) + 1);
		rc = 0;
	} else
		err_set(&s->err, "sqlite: the database has no instance id");
	store_i_release(s, st);
	return rc;
}

int
store_open_version(
    struct store **out, const char *path, int version, struct err *e)
{
	struct store *s = xcalloc(1, sizeof(*s));

	*out = NULL;
	if (db_open(&s->db, path, e) != 0)
		goto fail;
	if (store_i_migrate(s, version) == -1) {
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
		db_finalize(s->st[i]);
	store_i_stmts_free(s);
	store_i_groups_free(s);
	if (s->in_tx || s->have_wlk) {
		s->in_tx = 0;
		tx_end(s, 0);
	}
	db_close(s->db);
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
	db_autocheckpoint(s->db, pages);
	return 0;
}

int
store_checkpoint(struct store *s)
{
	int log = 0, rc;

	/* Copy what can be copied without blocking anyone (this pass also
	 * does the slow part: syncing the WAL written since the last one
	 * and the database after the copy)... */
	if (db_checkpoint(s->db, &log) != 0)
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
	rc = db_checkpoint(s->db, &log);
	wunlock();
	if (rc != 0 && rc != DB_BUSY)
		return dberr(s, "checkpoint");
	return 0;
}

int
store_unavailable(struct store *s)
{
	return !db_connected(s->db);
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
	s->lost_race = 0;
}

/*
 * A copy of n bytes of untrusted text with each byte that is not part of
 * a valid UTF-8 character (and each NUL) replaced by '?': jansson refuses
 * invalid UTF-8.  As when jansson judged a lead byte with the (up to 3)
 * continuation bytes after it, a character that a stray continuation
 * byte follows is replaced too, byte by byte ("\xc3\xa9\xa9" is "???"):
 * the rows' text stays what it was.
 */
static char *
web_clean(const char *t, size_t n)
{
	const unsigned char *u = (const unsigned char *)t;
	char *c = xmalloc(n + 1);
	size_t i, k;
	long cp;

	memcpy(c, t, n);
	c[n] = '\0';
	for (i = 0; i < n; i++) {
		if (u[i] < 0x80) {
			if (u[i] == '\0')
				c[i] = '?';
			continue;
		}
		k = utf8_decode(u + i, n - i, &cp);
		if (k == 0 || (k < 4 && i + k < n && UTF8_CONT(u[i + k])))
			c[i] = '?';
		else
			i += k - 1;
	}
	return c;
}

char *
store_i_web_text(struct db_stmt *st, int i)
{
	const char *t = store_i_col_text(st, i);

	return t ? web_clean(t, (size_t)db_col_bytes(st, i)) : NULL;
}

int
store_i_web_hex(const char *sha)
{
	size_t n = strlen(sha);

	if (n < 4 || n > 64)
		return 0;
	return strspn(sha, "0123456789abcdef") == n;
}
