#ifndef STORE_STORE_INT_H
#define STORE_STORE_INT_H

/*
 * What the store's files share: the connection's state and the
 * statement, transaction and paging helpers (store.c, stmt.c), the
 * schema steps (migrate.c), and what one entity's file offers another.
 * Only store/ includes this (the database layer's types are here, never
 * in the public headers); everyone else uses store.h and the entity
 * headers.
 */
#include "common/err.h"
#include "store/db.h"
#include "store/jobs.h"
#include "store/store.h"

/* Prepared statements, cached per connection by slot. */
enum stmt_slot {
	S_JOB_LEASE,
	S_RUN_INSERT,
	S_METRIC_INSERT,
	S_RAW_INSERT,
	S_HEARTBEAT,
	S_HOST_SEEN,
	S_HOST_ID,
	S_SAVEPOINT, /* store/batch.c */
	S_ROLLBACK_TO,
	S_RELEASE,
	S_GEN, /* store_data_version */
	S_GEN_BUMP,
	S_GEN_SEQ, /* PostgreSQL's bump (store.c, gen_seq_bump) */
	/* store/history.c: store_history_list's rows, then its windows
	 * (hist_window), each of all hosts and trees, a host's, a tree's,
	 * and a tree's of a host (enum hist_from). */
	S_HISTORY,
	S_HISTORY_HOST,
	S_HISTORY_TREE,
	S_HISTORY_TREE_HOST,
	S_HISTORY_WIN,
	S_HISTORY_WIN_HOST,
	S_HISTORY_WIN_TREE,
	S_HISTORY_WIN_TREE_HOST,
	S_HISTORY_IDS, /* a page's rows by their ids */
	/* A rare filter's jobs, to a cap: a range of dates, a branch. */
	S_HISTORY_IDS_TIME,
	S_HISTORY_IDS_TREE_BRANCH,
	S_HISTORY_IDS_BRANCH,
	S_HISTORY_BRANCH_N, /* a branch's commits and its tree's */
	S_HISTORY_BRANCH_N_ALL,
	S_HISTORY_NEWEST,    /* a series' newest time */
	S_HISTORY_RUNS,      /* a job's values without its summary */
	S_ALERT_GROUP_STAMP, /* store/alerts.c: a report group's newest */
	S_NSLOTS
};

/*
 * The statement that stores the summaries (table job_values, schema v20)
 * of the jobs the SELECT `jobs` lists: for each metric of their runs
 * with status ok, the number of values, the median (the middle value, or
 * the two middle ones' mean, (a + b) / 2 as analysis_median), the least
 * and greatest, and the unit and direction of the first run.
 */
#define STORE_I_JOB_VALUES_FILL(jobs)                                          \
	"INSERT INTO job_values (job_id, metric, n, median, lo,"               \
	" hi, unit, better) SELECT job_id, name, n,"                           \
	" CASE WHEN n % 2 = 1 THEN max(value) FILTER (WHERE k = (n + 1) / 2)"  \
	"  ELSE (max(value) FILTER (WHERE k = n / 2)"                          \
	"  + max(value) FILTER (WHERE k = n / 2 + 1)) / 2 END,"                \
	" min(value), max(value), max(unit) FILTER (WHERE f = 1),"             \
	" max(better) FILTER (WHERE f = 1) FROM (SELECT r.job_id, m.name,"     \
	"  m.value, m.unit, m.better, row_number() OVER (PARTITION BY"         \
	"  r.job_id, m.name ORDER BY m.value) AS k, row_number() OVER"         \
	"  (PARTITION BY r.job_id, m.name ORDER BY r.idx) AS f, count(*)"      \
	"  OVER (PARTITION BY r.job_id, m.name) AS n"                          \
	"  FROM runs r JOIN metrics m ON m.run_id = r.id"                      \
	"  WHERE r.status = 'ok' AND r.job_id IN (" jobs ")) AS v"             \
	" GROUP BY job_id, name, n ON CONFLICT (job_id, metric) DO UPDATE SET" \
	" n = excluded.n, median = excluded.median, lo = excluded.lo,"         \
	" hi = excluded.hi, unit = excluded.unit, better = excluded.better"

struct fleet_group; /* store/hosts.c */

struct store {
	struct db *db;
	struct err err;
	int in_tx;                /* inside store_begin() */
	int have_wlk;             /* inside a write transaction (tx_begin) */
	int wlocked;              /* holds the process write lock */
	int reading;              /* inside store_read_begin() */
	int version;              /* the schema version it was opened at */
	enum store_writer writer; /* its class in the write-lock stats */
	int wal_reset_pages;      /* store_checkpoint's locked pass */
	struct db_stmt *st[S_NSLOTS];
	/* Open sibling-group scope (store_group_begin), else NULL. */
	struct fleet_group *groups;
	size_t ngroups;
	int group_scope;
	char instance[17];         /* store_instance, "" until read */
	struct store_stmts *stmts; /* store/stmt.c */
	uint64_t read_steps;       /* store_read_steps */
	/* store_data_version: the generation last read, and SQLite's
	 * data_version and the change count it was read at. */
	int64_t gen, gen_dv, gen_own;
	int gen_ok;
	/* The write transaction's rows changed when it began, and those
	 * of them a heartbeat changed (store_i_quiet_end): tx_end moves
	 * store_gen when there are others. */
	int64_t tx_changes0, tx_quiet;
	int tx_moved; /* tx_end's transaction moved store_gen */
	int gen_owed; /* PostgreSQL: a commit's bump failed (gen_seq_bump) */
	/* A statement of the write transaction lost to another
	 * (DB_BUSY): store_i_tx_again.  Kept until the next transaction
	 * begins: on PostgreSQL the statements after it fail for another
	 * reason (the transaction is aborted). */
	int lost_race;
};

#define STORE_GEN_VERSION 32 /* the migration that made store_gen */

/* store.c */
/* Around the statements of a heartbeat, whose changes (a host's
 * last_seen, a job's lease, progress and updated) do not move the
 * store's generation (store_data_version): begin gives the change count
 * for end. */
int64_t store_i_quiet_begin(struct store *);
void store_i_quiet_end(struct store *, int64_t begin);
/* PostgreSQL: the store's generation moved (a commit of this process,
 * or store_gen_poll found another's): this process's data version
 * moves (store_data_version). */
void store_i_gen_moved(void);
/* PostgreSQL: this process's commits that moved the store's generation
 * so far, counted from just before each COMMIT (store_gen_poll). */
int64_t store_i_gen_own(void);
int store_i_dberr(struct store *, const char *what);
/* db_exec of sql (no rows); 0, or -1 with the error in s. */
int store_i_exec(struct store *, const char *sql);
/* migrate.c: the schema steps up to version target, in one write
 * transaction with foreign keys off around it; 0 or -1. */
int store_i_migrate(struct store *, int target);
/* migrate_pg.c: PostgreSQL's steps (store_i_migrate's), and the version
 * a database is at (0: new), or -1. */
int store_i_migrate_pg(struct store *, int target);
int store_i_pg_version(struct store *);
/* migrate.c: 0, or -1 with the error when version v is newer than this
 * program's STORE_VERSION. */
int store_i_version_known(struct store *, int v);
struct db_stmt *store_i_prep(struct store *, const char *sql);
void store_i_bind_text(struct db_stmt *, int i, const char *v);
/* NULL for an id <= 0 / for a number not finite. */
void store_i_bind_id(struct db_stmt *, int i, int64_t v);
void store_i_bind_num(struct db_stmt *, int i, double v);
/* Steps st (bound; finalized in any case) in its own transaction, or
 * the caller's store_begin: 0 or -1 with the store's error set. */
int store_i_write1(struct store *, struct db_stmt *st, const char *what);
/* Column i as a copy (NULL for NULL), as a number (NaN for NULL). */
char *store_i_col_dup(struct db_stmt *, int i);
double store_i_col_num(struct db_stmt *, int i);
int store_i_step_done(struct store *, struct db_stmt *, const char *what);
/* Adds st's virtual machine steps since the last call to the store's
 * read_steps (store_read_steps), before st is reset or finalized. */
void store_i_count_steps(struct store *, struct db_stmt *);
/*
 * Steps st (bound) to its end and releases it (store_i_release: a
 * cached statement is reset, another finalized): each row appends one
 * zeroed element of size bytes to the array *v (*n of them, grown by
 * doubling) that scan(element, st, arg) fills.  0, or store_i_dberr's
 * -1 with the rows read so far in *v for the caller's release.
 */
int store_i_rows(struct store *, struct db_stmt *st, void **v, size_t *n,
    size_t size, void (*scan)(void *row, struct db_stmt *st, void *arg),
    void *arg, const char *what);
/* store_i_rows, the rows appended to the *n already in *v; how many
 * into *got. */
int store_i_rows_append(struct store *, struct db_stmt *st, void **v, size_t *n,
    size_t size, void (*scan)(void *row, struct db_stmt *st, void *arg),
    void *arg, const char *what, int64_t *got);
/*
 * The next page's cursor of a list page (docs/API.md): n rows read of
 * limit asked, the last with id last.  A page that is not full is the
 * last (0).  STORE_I_DESC lists (newest first: the cursor gives the ids
 * below it) also end at id 1, since ids start at 1; STORE_I_ASC lists
 * (the ids above the cursor) go on.  Else last.
 */
enum store_i_order { STORE_I_DESC, STORE_I_ASC };
int64_t store_i_next_cursor(
    size_t n, int64_t limit, int64_t last, enum store_i_order order);
/*
 * What a STORE_I_DESC list binds for "id < ?": its cursor, or (none, 0)
 * the greatest id.  A bound, never "(? = 0 OR id < ?)": that is no range
 * of an index, and a deep page would scan every row above it.
 */
int64_t store_i_below(int64_t cursor);
/*
 * A page of a list newest first by state: st's SQL (NULL: -1) binds ?1
 * the state (NULL: any), ?2 store_i_below(cursor) and ?3 limit.  Its
 * rows as store_i_rows reads them, *next the next page's cursor from the
 * int64_t id at id_off in the last row.  0, or -1 with the rows read so
 * far in *v for the caller's release.
 */
int store_i_state_page(struct store *, struct db_stmt *st, const char *state,
    int64_t limit, int64_t cursor, void **v, size_t *n, size_t size,
    void (*scan)(void *row, struct db_stmt *st, void *arg), size_t id_off,
    const char *what, int64_t *next);
/*
 * A page of a list newest first whose filters are no range of an index
 * (a branch, a time range): read in windows of the list's index, each
 * four times the last (the first twice the page), until the page is
 * full, the list ends or budget ids were read, so a filter that passes
 * few costs a page its budget, not the whole list.  window(arg, below,
 * w, &floor, &got): the least id of the w newest below `below` and how
 * many (fewer than w: the list ends).  rows(arg, floor, below, want,
 * &n): at most want rows of [floor, below) appended by the caller, n of
 * them.  0 or -1; *capped 1 when the budget ended the page with more
 * below *floor, the page's cursor then.
 */
struct store_i_scan {
	int (*window)(
	    void *arg, int64_t below, int64_t w, int64_t *floor, int64_t *got);
	int (*rows)(
	    void *arg, int64_t floor, int64_t below, int64_t want, int64_t *n);
	void *arg;
};
int store_i_scan_page(const struct store_i_scan *, int64_t cursor,
    int64_t limit, int64_t budget, int *capped, int64_t *floor);
/*
 * A list page driven by one index (store_i_list_page): window_sql and
 * rows_sql are the drive's two statements, bound by bind(st, q) (the
 * filters, ?1 to ?9) and the page's ?10 (below), ?11 (how many) and,
 * of rows_sql, ?12 (floor).  window_sql reads "SELECT min(id),
 * count(*) FROM (...)" of the index alone; rows_sql the rows of
 * [floor, below) that pass every filter, newest first, each appended
 * to *v (*n, of size bytes) by scan(row, st, scan_arg).
 */
struct store_i_list {
	struct store *s;
	const char *window_sql, *rows_sql;
	void (*bind)(struct db_stmt *st, const void *q);
	const void *q;
	void **v;
	size_t *n, size;
	void (*scan)(void *row, struct db_stmt *st, void *arg);
	void *scan_arg;
	const char *what;
};
/* The page below cursor, at most limit rows: one kind of filter (kinds
 * 0 or 1) is the drive's range and is read at once; more read windows
 * within budget (store_i_scan_page: *capped, then *next the cursor
 * below the rows read).  *next the next page's cursor, 0 at the end;
 * last_id(row) a row's id.  0 or -1. */
int store_i_list_page(const struct store_i_list *, int kinds, int64_t cursor,
    int64_t limit, int64_t budget, int *capped, int64_t *next,
    int64_t (*last_id)(const void *row));
/* A window's statement (bound, "SELECT min(id), count(*) FROM (...)")
 * stepped: *floor and *got; 0 or store_i_dberr's -1 naming what.  The
 * caller resets or releases st. */
int store_i_scan_window(struct store *, struct db_stmt *st, int64_t *floor,
    int64_t *got, const char *what);
int store_i_tx_begin(struct store *);
int store_i_tx_end(struct store *, int ok);
/*
 * After a write transaction of its own failed (try counts from 0): 1,
 * after a short wait, when it should run again from its start because
 * it lost to another (a deadlock, a serialization failure, a lock:
 * DB_BUSY) and tries are left (STORE_TX_TRIES); 0 to give up, and
 * inside the caller's store_begin, whose transaction has failed whole.
 * The store's error is cleared for the next try.
 */
#define STORE_TX_TRIES 5
int store_i_tx_again(struct store *, int try);
/*
 * Every write transaction of the store's own goes through this: rc =
 * call, a function that runs one transaction from store_i_tx_begin to
 * store_i_tx_end and returns -1 when it failed, evaluated again from its
 * start while store_i_tx_again says the transaction lost to another (on
 * PostgreSQL a serialization failure, a deadlock or a lock timeout: a
 * 40001, 40P01 or 55P03 ends the whole transaction, so no statement of
 * it can be tried alone).  A macro because the transactions' arguments
 * differ; inside the caller's store_begin it runs call once.
 */
#define STORE_I_TX_RETRY(s, rc, call)                                          \
	do {                                                                   \
		int try_ = 0;                                                  \
		while (((rc) = (call)) == -1 && store_i_tx_again((s), try_++)) \
			;                                                      \
	} while (0)

/*
 * store/stmt.c: the statement cache.  store_i_stmt(s, sql) gives sql
 * (a string literal: the cache keys on its address) prepared, reset and
 * unbound, or NULL with the store's error; the caller hands it back with
 * store_i_release (never db_finalize), which resets a cached one
 * and finalizes any other.  store_close frees them.
 */
struct db_stmt *store_i_stmt(struct store *, const char *sql);
void store_i_release(struct store *, struct db_stmt *);
void store_i_stmts_free(struct store *);

/*
 * A list of ids in one statement: its SQL holds STORE_I_IDS, the
 * placeholders ?1 to ?STORE_I_IDS_MAX (an IN list; the statement's
 * other parameters come after them), and store_i_bind_ids binds
 * ids[0..n) to them, at most STORE_I_IDS_MAX, the slots past n to
 * ids[0] (n > 0), which an IN list reads as the one id: how many it
 * bound.  A longer list is read a statement each STORE_I_IDS_MAX ids,
 * so a page of N objects costs one round trip, not N.
 */
#define STORE_I_IDS_MAX 64
#define STORE_I_IDS                        \
	"?1,?2,?3,?4,?5,?6,?7,?8,"         \
	"?9,?10,?11,?12,?13,?14,?15,?16,"  \
	"?17,?18,?19,?20,?21,?22,?23,?24," \
	"?25,?26,?27,?28,?29,?30,?31,?32," \
	"?33,?34,?35,?36,?37,?38,?39,?40," \
	"?41,?42,?43,?44,?45,?46,?47,?48," \
	"?49,?50,?51,?52,?53,?54,?55,?56," \
	"?57,?58,?59,?60,?61,?62,?63,?64"
size_t store_i_bind_ids(struct db_stmt *, const int64_t *ids, size_t n);
/*
 * Runs sql (STORE_I_IDS its parameters, each row's id in column idcol)
 * for the distinct ids of ids[0..n), a statement each STORE_I_IDS_MAX
 * of them, and calls row(arg, i, st) for each of its rows and each i
 * with ids[i] that row's id, in the statement's order: 0 (n 0: no
 * statement), or -1 with the store's error (what names the read).
 */
int store_i_ids_rows(struct store *, const char *sql, int idcol,
    const int64_t *ids, size_t n,
    void (*row)(void *arg, size_t i, struct db_stmt *st), void *arg,
    const char *what);
/* One more zeroed element of size bytes at the end of *v (*n of them,
 * grown by doubling): its address, *n counting it. */
void *store_i_grow(void **v, size_t *n, size_t size);
/*
 * store_i_ids_rows into lists: out[i] (a struct of stride bytes whose
 * first members are the array "T *v" and its count "size_t n", as
 * struct store_values) gets for each row of ids[i] one more zeroed
 * element of size bytes, which scan(element, st, NULL) fills.  0, or
 * -1 with the rows read so far in the lists for the caller's release.
 */
int store_i_ids_lists(struct store *, const char *sql, int idcol,
    const int64_t *ids, size_t n, void *out, size_t stride, size_t size,
    void (*scan)(void *row, struct db_stmt *st, void *arg), const char *what);

/* store/hosts.c: gives a new pair its sibling group (pairs.sib_group),
 * inside the transaction that made it. */
int store_i_group_assign(struct store *, int64_t pair_id);
void store_i_groups_free(struct store *);
/* store/hosts.c: sets commits.fp_pos of a recorded commit. */
int store_i_commit_position(struct store *, int64_t commit_id);
/* store/hosts.c: the history point of pair in series, at its place in
 * commit order (store_history_append). */
int store_i_history_insert(struct store *, int64_t series, int64_t pair_id,
    int64_t job_id, int64_t comparison_id, double value, int64_t now);

/* Shared by the store's files (defined in the file named). */
struct db_stmt *store_i_cached(
    struct store *s, enum stmt_slot slot, const char *sql); /* store.c */
const char *store_i_col_text(struct db_stmt *st, int i);    /* store.c */
int store_i_tx_begin_as(struct store *s, int urgent);       /* store.c */
int store_i_job_insert(struct store *s, int64_t *out, int64_t pair,
    const char *name, const char *point, const struct store_job_new *j,
    int64_t now); /* store/jobs.c */
int store_i_pair_sides(struct store *s, int64_t pair, int64_t base,
    int64_t cand); /* store/jobs.c */
/* store/builds.c: links a job just made to the shared build its spec
 * asks for (nothing while builds are not shared, or for a job that is
 * no kernel job); relinks a job queued again whose build can no longer
 * serve it.  Inside the caller's transaction: 0 or -1. */
int store_i_build_link(struct store *s, int64_t job_id, const char *spec_json,
    int64_t max_attempts, int64_t now);
int store_i_build_relink(struct store *s, int64_t job_id, int64_t now);
/* store/builds.c: adds d to the store-wide count name (table counts:
 * the bytes the artifacts hold, the build reuses), in the caller's
 * transaction. */
int store_i_count_add(struct store *s, const char *name, int64_t d);
/* store/jobs.c: the room of a log capped at CAP_JOB_LOG (a job's, a
 * build's): the bytes stored, log_bytes of row id as sql (a literal)
 * selects it, into *have (CAP_JOB_LOG + 1: full, its marker written),
 * and how many of len more bytes fit into *keep.  In the caller's
 * transaction: 0 or -1. */
int store_i_log_room(struct store *s, const char *sql, int64_t id, size_t len,
    int64_t *have, size_t *keep);
/* store/jobs.c: the job row of id (store_jobs_release's strings): 0,
 * ERR_NOTFOUND or -1. */
int store_i_job_one(struct store *s, struct store_job *out, int64_t id);
/* store/jobs.c: a job's row as the store reads it, STORE_I_JOB_COLS
 * (19 columns, from 0) STORE_I_JOB_FROM (the job j), into j (its
 * strings its own; store_jobs_release). */
#define STORE_I_JOB_COLS                                              \
	"j.id, j.pair_id, j.role, j.name, j.point, j.state, h.name,"  \
	" j.attempts, j.runs, (SELECT count(*) FROM runs r"           \
	" WHERE r.job_id = j.id AND r.idx < j.max_runs), j.progress," \
	" j.error, j.created,"                                        \
	" j.updated, j.lease_expires, j.max_runs, c.sha, t.name,"     \
	" c.subject "
#define STORE_I_JOB_FROM                                     \
	" FROM jobs j LEFT JOIN hosts h ON h.id = j.host_id" \
	" LEFT JOIN commits c ON c.id = j.commit_id"         \
	" LEFT JOIN trees t ON t.id = c.tree_id "
void store_i_job_scan(struct store_job *j, struct db_stmt *st);
/* Column i as a copy with bytes that are not UTF-8 (and NULs) as '?',
 * as the JSON rows once gave it; NULL for NULL. */
char *store_i_web_text(struct db_stmt *st, int i); /* store/history.c */
/* 1 when sha is 4 to 64 lowercase hex digits (a commit or prefix). */
int store_i_web_hex(const char *sha); /* store/history.c */
/* store/history.c: a struct store_value from (role, metric, unit, better,
 * value, run), the store_i_rows scan of the value reads. */
void store_i_value_scan(void *row, struct db_stmt *st, void *arg);
/* store/series.c: the patches of series id into out->patches; a row of
 * store_series_page_get' columns into r. */
struct store_series_row;
int store_i_series_patches(
    struct store *s, struct store_series_row *out, int64_t id);
void store_i_series_scan_web(struct store_series_row *r, struct db_stmt *st);

/*
 * jobs.c and claim.c: loads what a runner call needs about a job, inside
 * a transaction: 0, ERR_NOTFOUND, or ERR_CONFLICT when host does not
 * hold its lease (host_id 0 skips that check).
 */
int store_i_job_lease(struct store *s, int64_t *out_max_runs,
    int64_t *out_attempt, int64_t job_id, int64_t host_id);

/* alerts.c and alert_report.c: binds a group's (commit, job, host) to ?1, ?2
 * and ?3, as every statement over one alert group takes them. */
void store_i_alert_bind_group(
    struct db_stmt *st, int64_t commit_id, const char *job, int64_t host_id);

#endif
