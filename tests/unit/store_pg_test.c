#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "store/db.h"
#include "store/db_pg_sql.h"
#include "tests/unit/test.h"

/* This connection's server process. */
static long
backend_pid(struct db *d)
{
	struct db_stmt *st = db_prepare(d, "SELECT pg_backend_pid()");
	long pid = -1;

	if (st != NULL && db_step(st) == DB_ROW)
		pid = (long)db_col_int64(st, 0);
	db_finalize(st);
	return pid;
}

/* The server closes victim's connection (as a restart does) while it
 * is idle; 0 once its server process is gone. */
static int close_pid(struct db *killer, long pid);

static int
close_from_server(struct db *killer, struct db *victim)
{
	return close_pid(killer, backend_pid(victim));
}

/* The server closes the connection of its process pid; 0 once the
 * process is gone. */
static int
close_pid(struct db *killer, long pid)
{
	char q[128];
	int i;

	snprintf(q, sizeof(q), "SELECT pg_terminate_backend(%ld)", pid);
	if (pid <= 0 || db_exec(killer, q) != 0)
		return -1;
	for (i = 0; i < 200; i++) {
		struct db_stmt *st;
		int gone;

		snprintf(q, sizeof(q),
		    "SELECT count(*) FROM pg_stat_activity WHERE pid = %ld",
		    pid);
		st = db_prepare(killer, q);
		gone = st != NULL && db_step(st) == DB_ROW &&
		    db_col_int64(st, 0) == 0;
		db_finalize(st);
		if (gone)
			return 0;
		usleep(10000);
	}
	return -1;
}

/*
 * A connection the server closed while it was idle is found closed
 * only by what is sent next.  A transaction's BEGIN, or a SELECT
 * outside one, is then sent again over a new connection and succeeds
 * (a write transaction after a server restart failed with "begin:
 * server closed the connection unexpectedly"); a lone write, which may
 * have taken effect, fails and the next statement connects again.
 */
TEST(test_store_pg__closed_connection_begin_is_sent_again)
{
	struct db *d = NULL, *killer = NULL;
	struct err e = { 0 };
	char *where;
	struct db_stmt *st;

	if (!test_store_pg()) {
		test_skip("PostgreSQL's connections: make check-pg");
		return;
	}
	where = test_store_where("pg_reconnect");
	ASSERT_MSG(db_open(&d, where, &e) == 0, "%s", err_msg(&e));
	ASSERT_MSG(db_open(&killer, where, &e) == 0, "%s", err_msg(&e));
	free(where);

	ASSERT(close_from_server(killer, d) == 0);
	ASSERT_MSG(db_begin_write(d) == 0, "%s", db_errmsg(d));
	ASSERT(db_exec(d, "CREATE TABLE t (n BIGINT)") == 0);
	ASSERT(db_exec(d, "COMMIT") == 0);
	ASSERT(db_connected(d));

	ASSERT(close_from_server(killer, d) == 0);
	ASSERT_MSG(db_begin_read(d) == 0, "%s", db_errmsg(d));
	ASSERT(db_exec(d, "COMMIT") == 0);

	ASSERT(close_from_server(killer, d) == 0);
	st = db_prepare(d, "SELECT count(*) FROM t");
	ASSERT(st != NULL);
	ASSERT_MSG(db_step(st) == DB_ROW, "%s", db_errmsg(d));
	db_finalize(st);

	ASSERT(close_from_server(killer, d) == 0);
	ASSERT(db_exec(d, "INSERT INTO t (n) VALUES (1)") != 0);
	ASSERT(db_errcode(d) == DB_UNAVAILABLE);
	ASSERT(db_exec(d, "INSERT INTO t (n) VALUES (2)") == 0);
	db_close(killer);
	db_close(d);
}

/* Two connections to a new database of the test server, or 0 (the
 * case then skipped). */
static int
open_pg(struct db **d, struct db **other, const char *name)
{
	struct err e = { 0 };
	char *where;

	*d = *other = NULL;
	if (!test_store_pg()) {
		test_skip("PostgreSQL's transactions: make check-pg");
		return 0;
	}
	where = test_store_where(name);
	if (db_open(d, where, &e) != 0 || db_open(other, where, &e) != 0)
		test_fail(__FILE__, __LINE__, "%s", err_msg(&e));
	free(where);
	return 1;
}

/*
 * A read transaction's BEGIN goes with its first statement; its reads
 * still see one snapshot: another connection's commit between two of
 * them is not seen (nor by a statement run a second time, prepared
 * then), and is seen once the transaction ended.  Without the BEGIN, or
 * with a plain one (READ COMMITTED), the second read would see it.
 */
TEST(test_store_pg__read_tx_sees_one_snapshot)
{
	struct db *d, *other;
	struct db_stmt *st;

	if (!open_pg(&d, &other, "pg_snapshot"))
		return;
	ASSERT(db_exec(other, "CREATE TABLE s (n BIGINT)") == 0);
	ASSERT(db_exec(other, "INSERT INTO s VALUES (1)") == 0);
	st = db_prepare(d, "SELECT count(*) FROM s WHERE n > ?1");
	ASSERT(st != NULL);
	ASSERT(db_begin_read(d) == 0);
	ASSERT(!db_autocommit(d));
	db_bind_int64(st, 1, 0);
	ASSERT_MSG(db_step(st) == DB_ROW, "%s", db_errmsg(d));
	ASSERT_INTEQ(db_col_int64(st, 0), 1);
	ASSERT(db_exec(other, "INSERT INTO s VALUES (2)") == 0);
	db_reset(st);
	ASSERT_MSG(db_step(st) == DB_ROW, "%s", db_errmsg(d));
	ASSERT_INTEQ(db_col_int64(st, 0), 1);
	ASSERT_INTEQ(test_db_number(d, "SELECT count(*) FROM s"), 1);
	ASSERT(db_exec(d, "COMMIT") == 0);
	ASSERT(db_autocommit(d));
	ASSERT_INTEQ(test_db_number(d, "SELECT count(*) FROM s"), 2);
	/* A transaction without a statement sends nothing and ends. */
	ASSERT(db_begin_read(d) == 0);
	ASSERT(db_exec(d, "COMMIT") == 0);
	ASSERT(db_begin_write(d) == 0);
	ASSERT(db_exec(d, "ROLLBACK") == 0);
	ASSERT(db_autocommit(d));
	db_finalize(st);
	db_close(other);
	db_close(d);
}

/*
 * A transaction whose first statement (sent with its BEGIN) failed has
 * failed: its next statement fails too, never runs on its own, and its
 * ROLLBACK leaves the connection as before, the next transaction
 * working.  A first statement that found the connection closed is sent
 * again with its BEGIN over a new one, still inside the transaction:
 * its ROLLBACK undoes it.
 */
TEST(test_store_pg__failed_first_statement_fails_the_tx)
{
	struct db *d, *other;
	struct db_stmt *st;

	if (!open_pg(&d, &other, "pg_first_fails"))
		return;
	ASSERT(db_exec(other, "CREATE TABLE s (n BIGINT)") == 0);
	ASSERT(db_begin_write(d) == 0);
	st = db_prepare(d, "SELECT n FROM no_such_table");
	ASSERT(st != NULL);
	ASSERT(db_step(st) == DB_ERROR);
	ASSERT_MSG(
	    strstr(db_errmsg(d), "no_such_table") != NULL, "%s", db_errmsg(d));
	db_finalize(st);
	ASSERT(!db_autocommit(d));
	ASSERT(db_exec(d, "INSERT INTO s VALUES (1)") != 0);
	ASSERT(db_exec(d, "ROLLBACK") == 0);
	ASSERT(db_autocommit(d));
	ASSERT_INTEQ(test_db_number(other, "SELECT count(*) FROM s"), 0);
	ASSERT(db_begin_write(d) == 0);
	ASSERT_MSG(
	    db_exec(d, "INSERT INTO s VALUES (2)") == 0, "%s", db_errmsg(d));
	ASSERT(db_exec(d, "COMMIT") == 0);
	ASSERT_INTEQ(test_db_number(other, "SELECT count(*) FROM s"), 1);

	ASSERT(close_from_server(other, d) == 0);
	ASSERT(db_begin_write(d) == 0);
	st = db_prepare(d, "INSERT INTO s VALUES (?1)");
	db_bind_int64(st, 1, 3);
	ASSERT_MSG(db_step(st) == DB_DONE, "%s", db_errmsg(d));
	db_finalize(st);
	ASSERT(!db_autocommit(d));
	ASSERT(db_exec(d, "ROLLBACK") == 0);
	ASSERT_INTEQ(test_db_number(other, "SELECT count(*) FROM s"), 1);
	db_close(other);
	db_close(d);
}

/*
 * db_exec_step: a COMMIT and a statement after it, in one round trip.
 * The statement sees the commit and runs outside the transaction; when
 * the COMMIT fails (a deferred unique constraint) the statement is not
 * run (its sequence does not move) and the connection goes on.
 */
TEST(test_store_pg__commit_then_step)
{
	struct db *d, *other;
	struct db_stmt *st;
	int step = -1;

	if (!open_pg(&d, &other, "pg_commit_step"))
		return;
	ASSERT(db_exec(other,
	           "CREATE TABLE s (n BIGINT UNIQUE DEFERRABLE INITIALLY "
	           "DEFERRED); CREATE SEQUENCE q") == 0);
	st = db_prepare(d, "SELECT nextval('q'), (SELECT count(*) FROM s)");
	ASSERT(st != NULL);
	ASSERT(db_begin_write(d) == 0);
	ASSERT(db_exec(d, "INSERT INTO s VALUES (1)") == 0);
	ASSERT_MSG(
	    db_exec_step(d, "COMMIT", st, &step) == 0, "%s", db_errmsg(d));
	ASSERT_INTEQ(step, DB_ROW);
	ASSERT_INTEQ(db_col_int64(st, 0), 1);
	ASSERT_INTEQ(db_col_int64(st, 1), 1);
	ASSERT(db_step(st) == DB_DONE);
	ASSERT(db_autocommit(d));
	ASSERT_INTEQ(test_db_number(other, "SELECT count(*) FROM s"), 1);

	ASSERT(db_begin_write(d) == 0);
	ASSERT(db_exec(d, "INSERT INTO s VALUES (1)") == 0);
	ASSERT(db_exec_step(d, "COMMIT", st, &step) == -1);
	ASSERT_INTEQ(step, 0);
	ASSERT(db_errcode(d) == DB_CONSTRAINT);
	db_exec(d, "ROLLBACK");
	ASSERT(db_autocommit(d));
	ASSERT_INTEQ(test_db_number(other, "SELECT last_value FROM q"), 1);
	ASSERT_INTEQ(test_db_number(other, "SELECT count(*) FROM s"), 1);

	/* A transaction without a statement: only the statement runs. */
	ASSERT(db_begin_write(d) == 0);
	ASSERT(db_exec_step(d, "COMMIT", st, &step) == 0);
	ASSERT_INTEQ(step, DB_ROW);
	ASSERT_INTEQ(db_col_int64(st, 0), 2);
	db_finalize(st);
	db_close(other);
	db_close(d);
}

/* The state in pg_stat_activity of the server process pid, once it is
 * "idle" (waiting at most 2 s: the server may not have read what was
 * sent yet), into out. */
static void
settled_state(struct db *other, long pid, char *out, size_t n)
{
	char q[160];
	int i;

	snprintf(out, n, "?");
	snprintf(q, sizeof(q),
	    "SELECT state FROM pg_stat_activity WHERE pid = %ld", pid);
	for (i = 0; i < 200; i++) {
		struct db_stmt *st = db_prepare(other, q);

		if (st != NULL && db_step(st) == DB_ROW &&
		    db_col_text(st, 0) != NULL)
			snprintf(out, n, "%s", db_col_text(st, 0));
		db_finalize(st);
		if (strcmp(out, "idle") == 0)
			return;
		usleep(10000);
	}
}

/*
 * A read transaction of one statement is one round trip: its COMMIT
 * (db_end_read) is sent and not waited for.  The server still commits
 * it at once: the connection, left alone, is not idle in a transaction
 * holding its snapshot.  The write transaction next on the connection
 * is as before (BEGIN with its statement, its COMMIT waited for) and
 * stored; a read after it sees it.
 */
TEST(test_store_pg__read_tx_end_costs_no_round_trip)
{
	struct db *d, *other;
	struct db_stmt *st;
	uint64_t t0;
	char state[64];
	long pid;

	if (!open_pg(&d, &other, "pg_read_end"))
		return;
	ASSERT(db_exec(other, "CREATE TABLE s (n BIGINT)") == 0);
	pid = backend_pid(d);
	ASSERT(pid > 0);
	st = db_prepare(d, "SELECT count(*) FROM s");
	ASSERT(st != NULL);
	t0 = db_round_trips(d);
	ASSERT(db_begin_read(d) == 0);
	ASSERT_MSG(db_step(st) == DB_ROW, "%s", db_errmsg(d));
	ASSERT_INTEQ(db_col_int64(st, 0), 0);
	ASSERT(db_end_read(d) == 0);
	ASSERT_INTEQ(db_round_trips(d) - t0, 1);
	settled_state(other, pid, state, sizeof(state));
	ASSERT_STREQ(state, "idle");
	ASSERT(db_autocommit(d));

	/* A write next: its BEGIN and statement, then its COMMIT. */
	t0 = db_round_trips(d);
	ASSERT(db_begin_write(d) == 0);
	ASSERT_MSG(
	    db_exec(d, "INSERT INTO s VALUES (1)") == 0, "%s", db_errmsg(d));
	ASSERT(db_exec(d, "COMMIT") == 0);
	ASSERT_INTEQ(db_round_trips(d) - t0, 2);
	ASSERT_INTEQ(test_db_number(other, "SELECT count(*) FROM s"), 1);

	/* A read, then a write whose statement runs after its COMMIT. */
	db_reset(st);
	ASSERT(db_begin_read(d) == 0);
	ASSERT(db_step(st) == DB_ROW);
	ASSERT_INTEQ(db_col_int64(st, 0), 1);
	ASSERT(db_end_read(d) == 0);
	ASSERT(db_begin_write(d) == 0);
	ASSERT_MSG(
	    db_exec(d, "INSERT INTO s VALUES (2)") == 0, "%s", db_errmsg(d));
	ASSERT(!db_autocommit(d));
	ASSERT(db_exec(d, "COMMIT") == 0);
	ASSERT(db_autocommit(d));
	ASSERT_INTEQ(test_db_number(other, "SELECT count(*) FROM s"), 2);
	db_reset(st);
	ASSERT(db_begin_read(d) == 0);
	ASSERT(db_step(st) == DB_ROW);
	ASSERT_INTEQ(db_col_int64(st, 0), 2);
	ASSERT(db_end_read(d) == 0);
	/* A read transaction without a statement sends nothing. */
	t0 = db_round_trips(d);
	ASSERT(db_begin_read(d) == 0);
	ASSERT(db_end_read(d) == 0);
	ASSERT_INTEQ(db_round_trips(d) - t0, 0);
	db_finalize(st);
	settled_state(other, pid, state, sizeof(state));
	ASSERT_STREQ(state, "idle");
	db_close(other);
	db_close(d);
}

/*
 * A read transaction's COMMIT that meets a lost connection (the server
 * closed it inside the transaction, or after the COMMIT was sent)
 * loses nothing and fails nothing after it: the next transaction, a
 * write, connects again and is stored, as is a lone read.
 */
TEST(test_store_pg__read_commit_meets_lost_connection)
{
	struct db *d, *other;
	struct db_stmt *st;
	long pid;
	int i;

	if (!open_pg(&d, &other, "pg_read_end_lost"))
		return;
	ASSERT(db_exec(other, "CREATE TABLE s (n BIGINT)") == 0);
	st = db_prepare(d, "SELECT count(*) FROM s");
	ASSERT(st != NULL);
	for (i = 0; i < 2; i++) {
		pid = backend_pid(d);

		db_reset(st);
		ASSERT(db_begin_read(d) == 0);
		ASSERT_MSG(db_step(st) == DB_ROW, "%s", db_errmsg(d));
		ASSERT_INTEQ(db_col_int64(st, 0), i);
		if (i == 0)
			ASSERT(close_pid(other, pid) == 0);
		ASSERT(db_end_read(d) == 0);
		if (i == 1)
			ASSERT(close_pid(other, pid) == 0);
		ASSERT(db_begin_write(d) == 0);
		ASSERT_MSG(db_exec(d, "INSERT INTO s VALUES (1)") == 0, "%s",
		    db_errmsg(d));
		ASSERT_MSG(db_exec(d, "COMMIT") == 0, "%s", db_errmsg(d));
		ASSERT(db_autocommit(d));
		ASSERT_INTEQ(
		    test_db_number(other, "SELECT count(*) FROM s"), i + 1);
	}
	/* Lost after the COMMIT was sent: a lone read next. */
	pid = backend_pid(d);
	db_reset(st);
	ASSERT(db_begin_read(d) == 0);
	ASSERT(db_step(st) == DB_ROW);
	ASSERT(db_end_read(d) == 0);
	ASSERT(close_pid(other, pid) == 0);
	ASSERT_INTEQ(test_db_number(d, "SELECT count(*) FROM s"), 2);
	db_finalize(st);
	db_close(other);
	db_close(d);
}

/*
 * db_exec_later: savepoint commands go with the next statement, in
 * order, and keep their meaning: a ROLLBACK TO the savepoint opened
 * before a statement undoes that statement only; a full ROLLBACK drops
 * the commands still waiting.  A command that fails (a savepoint that
 * does not exist) fails the statement it went with, with its own
 * error, and the transaction, whose ROLLBACK leaves the connection
 * working.
 */
TEST(test_store_pg__later_commands_go_with_the_next_statement)
{
	struct db *d, *other;

	if (!open_pg(&d, &other, "pg_later"))
		return;
	ASSERT(db_exec(other, "CREATE TABLE s (n BIGINT)") == 0);
	ASSERT(db_begin_write(d) == 0);
	ASSERT(db_exec_later(d, "SAVEPOINT a") == 0);
	ASSERT(db_exec(d, "INSERT INTO s VALUES (1)") == 0);
	ASSERT(db_exec_later(d, "RELEASE a") == 0);
	ASSERT(db_exec_later(d, "SAVEPOINT a") == 0);
	ASSERT_INTEQ(test_db_number(d, "SELECT count(*) FROM s"), 1);
	ASSERT(db_exec(d, "INSERT INTO s VALUES (2)") == 0);
	ASSERT(db_exec(d, "ROLLBACK TO a") == 0);
	ASSERT(db_exec_later(d, "RELEASE a") == 0);
	ASSERT(db_exec(d, "COMMIT") == 0);
	ASSERT_INTEQ(test_db_number(other, "SELECT sum(n) FROM s"), 1);

	ASSERT(db_begin_write(d) == 0);
	ASSERT(db_exec(d, "INSERT INTO s VALUES (4)") == 0);
	ASSERT(db_exec_later(d, "RELEASE nope") == 0);
	ASSERT(db_exec(d, "ROLLBACK") == 0);
	ASSERT(db_autocommit(d));
	ASSERT_INTEQ(test_db_number(d, "SELECT sum(n) FROM s"), 1);

	ASSERT(db_begin_write(d) == 0);
	ASSERT(db_exec_later(d, "RELEASE nope") == 0);
	ASSERT(test_db_number(d, "SELECT count(*) FROM s") == -1);
	ASSERT_MSG(strstr(db_errmsg(d), "nope") != NULL, "%s", db_errmsg(d));
	ASSERT(!db_autocommit(d));
	ASSERT(db_exec(d, "INSERT INTO s VALUES (8)") != 0);
	ASSERT(db_exec(d, "ROLLBACK") == 0);
	ASSERT(db_autocommit(d));
	ASSERT_INTEQ(test_db_number(d, "SELECT sum(n) FROM s"), 1);
	db_close(other);
	db_close(d);
}

/* SQLite's SQL as PostgreSQL reads it: group_concat becomes the
 * native string_agg (',' between values unless a separator is given),
 * inside other calls too; a name that merely ends so, a string and the
 * parameters are left as they are. */
TEST(test_store_pg__rewrite_group_concat)
{
	static const struct {
		const char *sql, *pg;
		int np;
	} c[] = {
		{ "SELECT group_concat(verdict) FROM t WHERE id = ?1",
		    "SELECT string_agg(verdict, ',') FROM t WHERE id = $1", 1 },
		{ "SELECT coalesce(group_concat(name, ' '), '') FROM t",
		    "SELECT coalesce(string_agg(name, ' '), '') FROM t", 0 },
		{ "SELECT GROUP_CONCAT(substr(a, 1, ?)), f(b, c) FROM t",
		    "SELECT string_agg(substr(a, 1, $1), ','), f(b, c) FROM t",
		    1 },
		{ "SELECT my_group_concat(a), 'group_concat(x)' FROM t",
		    "SELECT my_group_concat(a), 'group_concat(x)' FROM t", 0 },
	};
	size_t i;
	int np;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *out = db_pg_rewrite(c[i].sql, &np);

		ASSERT_STREQ(out, c[i].pg);
		ASSERT_INTEQ(np, c[i].np);
		free(out);
	}
}
