/*
 * The PostgreSQL backend of store/db.h, on libpq: the only file that
 * includes <libpq-fe.h>.  A statement keeps its SQL with SQLite's
 * ?NNN parameters rewritten to $NNN; its values are bound as text (a
 * blob as bytes) and sent with PQexecParams at its first step, and the
 * rows are then read from the result.  A statement outside a
 * transaction that fails on a serialization failure or a deadlock is
 * sent again; inside one, the caller's transaction has failed and says
 * so (DB_BUSY).  Where SQLite's SQL has planner hints PostgreSQL does
 * not read, the rewrite drops them: "INDEXED BY index", and the ON of a
 * "CROSS JOIN t ON ..." (SQLite's way to fix the join order) makes it a
 * JOIN.  The store's other SQL is what both accept, with SQLite's
 * functions it calls defined in PostgreSQL's schema (migrate_pg.c).
 * PW_PG_TRACE in the environment prints each error with its statement
 * to stderr (make check-pg's logs).
 *
 * A statement run a second time (the store's cached ones: every
 * request's reads, every upload's writes) is prepared on the server
 * under a name of its own (PQprepare, with the parameter types of that
 * run) and then executed by name: parsing and planning it again each
 * time was most of the server's work for a page.  A run whose types
 * differ from the prepared ones (a value bound as another type; NULL
 * fits any) is sent as before.  A new connection has none prepared;
 * finalizing a prepared statement deallocates it.
 *
 * A lost connection (the server restarted, the network went) fails the
 * statement that found it with DB_UNAVAILABLE; the next statement
 * outside a transaction connects again first (PQreset), at most once
 * per wait that doubles from 100 ms to 5 s while the server stays
 * away, and fails at once in between.  A statement that cannot have
 * changed anything, a transaction's BEGIN or a SELECT outside one, is
 * sent once more over a new connection when it found the old one
 * closed: a connection the server closed while it was idle shows it
 * only when something is sent on it.  A transaction the loss cut off
 * is never carried on over the new connection: its statements fail
 * until the caller ends it (its ROLLBACK succeeds, its COMMIT fails).
 * The loss and the return are logged once each.
 *
 * A transaction's BEGIN is not sent on its own: db_begin_write and
 * db_begin_read only note it, and the transaction's first statement
 * takes it along in one round trip (a pipeline of the two, or one
 * query string of both), as it takes the commands db_exec_later noted
 * (an upload's savepoint) and as COMMIT and a statement after it go
 * (db_exec_step).  A transaction that ends without a statement sends
 * nothing.  PostgreSQL takes a REPEATABLE READ transaction's snapshot
 * at its first statement and no lock at BEGIN, so nothing else changes:
 * a failed BEGIN or first statement fails that statement, and the
 * transaction's other statements fail until the caller ends it, as a
 * transaction the server has failed does.  A first statement that found
 * the connection closed is sent again with its BEGIN over a new one:
 * the server rolls back what an unfinished transaction did.
 *
 * A read transaction ends without a round trip of its own: db_end_read
 * sends its COMMIT and does not wait for the answer, which the
 * connection's next use (its next statement, before anything is sent)
 * reads first.  The server commits at once, so no connection is left
 * idle in a transaction holding its snapshot (and VACUUM back) while
 * its thread waits for work.  Only a transaction that read and is in
 * good standing goes so; a write transaction's COMMIT is a statement
 * like any other, waited for, its failure the caller's.  A read-only
 * transaction has nothing to lose: a COMMIT whose answer says the
 * connection was lost ends it as well, and the next statement connects
 * again as after any loss outside a transaction.  The other way,
 * noting the COMMIT to go ahead of the next statement in its pipeline,
 * saves the server's wake-up too, but leaves the snapshot held until
 * then: while a render thread waits for work, or for as long as an
 * event thread sits in its poll, where nothing could send it.
 */
#include <ctype.h>
#include <errno.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/redact.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "store/db.h"
#include "store/db_backend.h"
#include "store/db_pg_sql.h"

/* PostgreSQL's type oids (catalog/pg_type.h, stable across releases). */
#define OID_BOOL 16
#define OID_BYTEA 17
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_OID 26
#define OID_FLOAT4 700
#define OID_FLOAT8 701
#define OID_NUMERIC 1700
#define OID_TEXT 25

/* Tries of a statement outside a transaction that lost to another. */
#define PG_TRIES 5
/* The wait between tries to connect again: first, at most (ms). */
#define PG_RECONNECT_MS 100
#define PG_RECONNECT_MAX_MS 5000
/* Commands db_exec_later keeps for the next statement, at most. */
#define PG_LATER 4

struct pg {
	struct db base;
	PGconn *c;
	char msg[512];
	int code;
	int64_t changes, total, version;
	char shown[256];  /* where, its password redacted */
	int lost;         /* the loss is logged, the return not yet */
	int64_t next_try; /* clock_mono_ms of the next try to connect */
	int wait_ms;
	uint64_t conn_gen; /* connections made: a new one has nothing
	                      prepared */
	uint64_t names;    /* prepared statements named so far */
	int64_t kept_id;   /* db_last_id_keep's, when kept */
	int kept;
	/* A transaction not yet ended has failed under its caller: the
	 * connection was lost in it (TX_LOST), or its BEGIN failed
	 * (TX_NO_BEGIN). */
	int lost_tx;
	/* Commands noted and not yet sent, to go with the next statement
	 * (see the top): the transaction's BEGIN, then db_exec_later's. */
	const char *begin;
	const char *later[PG_LATER];
	int nlater;
	/* A read transaction's COMMIT was sent (db_end_read) and its
	 * answer is still to be read, first thing at the next use. */
	int unread;
	uint64_t trips; /* round trips: waits for the server's answer */
};

struct pg_stmt {
	struct db_stmt base;
	char *orig; /* the caller's SQL */
	char *sql;  /* with $N parameters */
	int np;     /* parameters: the greatest N */
	char **val;
	int *len, *fmt;
	unsigned int *type;
	unsigned char *used; /* [N - 1]: $N is in the SQL */
	PGresult *res;
	int ran;             /* sent since the last reset */
	int runs;            /* sent since it was prepared here */
	char name[32];       /* its prepared statement's, "" if none */
	uint64_t gen;        /* the conn_gen it was prepared on */
	unsigned int *ptype; /* the types it was prepared with */
	int row, nrows;      /* the current row (-1 before the first) */
	/* A bytea column of the current row, unescaped. */
	unsigned char *blob;
	size_t blob_len;
	int blob_col;
};

enum { TX_LOST = 1, TX_NO_BEGIN };

#define PG(d) ((struct pg *)(d))
#define PS(s) ((struct pg_stmt *)(s))

static int
code_of(const char *state)
{
	if (state == NULL)
		return DB_ERROR;
	if (strncmp(state, "23", 2) == 0)
		return DB_CONSTRAINT;
	if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 ||
	    strcmp(state, "55P03") == 0)
		return DB_BUSY;
	if (strcmp(state, "53100") == 0)
		return DB_FULL;
	/* A connection failure; the server shutting down or starting. */
	if (strncmp(state, "08", 2) == 0 || strcmp(state, "57P01") == 0 ||
	    strcmp(state, "57P02") == 0 || strcmp(state, "57P03") == 0)
		return DB_UNAVAILABLE;
	return DB_ERROR;
}

/* msg without its trailing newlines, as the connection's last error. */
static int
note(struct pg *p, const char *msg, const char *state)
{
	size_t n;

	snprintf(p->msg, sizeof(p->msg), "%s", msg && *msg ? msg : "error");
	n = strlen(p->msg);
	while (n > 0 && (p->msg[n - 1] == '\n' || p->msg[n - 1] == ' '))
		p->msg[--n] = '\0';
	for (n = 0; p->msg[n] != '\0'; n++)
		if (p->msg[n] == '\n' || p->msg[n] == '\t')
			p->msg[n] = ' ';
	p->code = code_of(state);
	if (getenv("PW_PG_TRACE"))
		fprintf(stderr, "PGERR %s [%s]\n", p->msg, state ? state : "");
	return p->code;
}

static int
note_res(struct pg *p, const PGresult *r)
{
	if (r == NULL)
		return note(p, PQerrorMessage(p->c), NULL);
	return note(p, PQresultErrorMessage(r),
	    PQresultErrorField(r, PG_DIAG_SQLSTATE));
}

static void settle(struct pg *p);

static int
in_tx(struct pg *p)
{
	settle(p);
	return PQtransactionStatus(p->c) != PQTRANS_IDLE;
}

/* In a transaction a failed statement has ended: nothing runs in it
 * but its ROLLBACK. */
static int
in_tx_failed(struct pg *p)
{
	settle(p);
	return PQtransactionStatus(p->c) == PQTRANS_INERROR;
}

/* sql starts with word (any case), a whole word. */
static int
starts(const char *sql, const char *word)
{
	size_t n = strlen(word);

	while (isspace((unsigned char)*sql))
		sql++;
	return strncasecmp(sql, word, n) == 0 &&
	    !isalnum((unsigned char)sql[n]) && sql[n] != '_';
}

static int setup(struct pg *p);

/* 1 when sql may insert a row (and so move lastval()). */
static int
inserts(const char *sql)
{
	for (; *sql != '\0'; sql++)
		if (strncasecmp(sql, "INSERT", 6) == 0)
			return 1;
	return 0;
}

/* sql ends a transaction: COMMIT, END or ROLLBACK (not ROLLBACK TO). */
static int
ends_tx(const char *sql)
{
	return starts(sql, "COMMIT") || starts(sql, "END") ||
	    (starts(sql, "ROLLBACK") && strstr(sql, " TO ") == NULL);
}

/*
 * Before a statement: 0 to send it, DB_DONE when there is nothing to
 * do (a ROLLBACK of a transaction the loss ended), or the error noted.
 */
static int
ready(struct pg *p, const char *sql)
{
	int64_t now;
	int why;

	settle(p);
	if (p->kept && inserts(sql))
		p->kept = 0;
	if (starts(sql, "BEGIN"))
		p->lost_tx = 0;
	if (p->lost_tx) {
		why = p->lost_tx;
		if (ends_tx(sql))
			p->lost_tx = 0;
		if (starts(sql, "ROLLBACK") && p->lost_tx == 0)
			return DB_DONE;
		if (why == TX_NO_BEGIN)
			return note(p,
			    "the transaction's BEGIN failed: nothing of it was "
			    "committed",
			    NULL);
		return note(p,
		    "the connection was lost inside the transaction: nothing "
		    "of it was committed",
		    "08006");
	}
	if (PQstatus(p->c) == CONNECTION_OK)
		return 0;
	if (starts(sql, "ROLLBACK") && strstr(sql, " TO ") == NULL)
		return DB_DONE;
	now = clock_mono_ms();
	if (now < p->next_try) {
		char m[128];

		snprintf(m, sizeof(m),
		    "the connection is lost; the next try in %lld ms",
		    (long long)(p->next_try - now));
		return note(p, m, "08006");
	}
	PQreset(p->c);
	if (PQstatus(p->c) != CONNECTION_OK || setup(p) != 0) {
		p->wait_ms = p->wait_ms == 0 ? PG_RECONNECT_MS : p->wait_ms * 2;
		if (p->wait_ms > PG_RECONNECT_MAX_MS)
			p->wait_ms = PG_RECONNECT_MAX_MS;
		p->next_try = now + p->wait_ms;
		return note(p, PQerrorMessage(p->c), "08006");
	}
	p->wait_ms = 0;
	p->next_try = 0;
	p->conn_gen++;
	if (p->lost)
		log_info("postgresql %s: connected again", p->shown);
	p->lost = 0;
	return 0;
}

/* sql ends the transaction: a ROLLBACK undoes what the noted commands
 * would do (they are dropped); with its BEGIN noted, nothing is sent. */
static int
ends_unsent(struct pg *p, const char *sql)
{
	if (!ends_tx(sql))
		return 0;
	if (starts(sql, "ROLLBACK"))
		p->nlater = 0;
	if (p->begin == NULL)
		return 0;
	p->begin = NULL;
	p->nlater = 0;
	return 1;
}

/* The commands noted, then first when not NULL, into out: how many. */
static int
noted(struct pg *p, const char *first, const char **out)
{
	int n = 0, i;

	if (p->begin != NULL)
		out[n++] = p->begin;
	for (i = 0; i < p->nlater; i++)
		out[n++] = p->later[i];
	if (first != NULL)
		out[n++] = first;
	return n;
}

/* The noted commands were sent: no more to send. */
static void
noted_sent(struct pg *p)
{
	p->begin = NULL;
	p->nlater = 0;
}

/* A statement sent with the noted commands (a savepoint; the
 * transaction's BEGIN when began) failed for good: unless the server
 * holds the transaction (failed), the caller's next statements must
 * fail until it ends it, never run on their own. */
static void
noted_failed(struct pg *p, int began)
{
	noted_sent(p);
	if (PQstatus(p->c) != CONNECTION_OK)
		p->lost_tx = TX_LOST;
	else if (began && !in_tx(p))
		p->lost_tx = TX_NO_BEGIN;
}

/* After a failed statement sent in transaction state was: 1 when the
 * connection is gone (the error then DB_UNAVAILABLE). */
static int
gone(struct pg *p, PGTransactionStatusType was)
{
	if (PQstatus(p->c) == CONNECTION_OK)
		return 0;
	p->code = DB_UNAVAILABLE;
	p->lost_tx = was != PQTRANS_IDLE ? TX_LOST : 0;
	if (!p->lost)
		log_warnx(
		    "postgresql %s: connection lost: %s", p->shown, p->msg);
	p->lost = 1;
	return 1;
}

/* The answer to a read transaction's COMMIT sent before (db_end_read),
 * read: a failure there ends the transaction, which had nothing to
 * lose, and leaves a lost connection to the next statement's ready. */
static void
settle(struct pg *p)
{
	PGresult *r;

	if (!p->unread)
		return;
	p->unread = 0;
	while ((r = PQgetResult(p->c)) != NULL) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			note_res(p, r);
		PQclear(r);
	}
	gone(p, PQTRANS_IDLE);
}

/* sql, sent in transaction state was, may be sent again over a new
 * connection after the old one was found closed (see the top). */
static int
resendable(const char *sql, PGTransactionStatusType was)
{
	return was == PQTRANS_IDLE &&
	    (starts(sql, "BEGIN") || starts(sql, "SELECT"));
}

static void
backoff(int try)
{
	struct timespec ts = { 0, (long)(1 + try * try) * 5000000L };

	nanosleep(&ts, NULL);
}

/* The rows a command changed, from its tag. */
static void
count_changes(struct pg *p, PGresult *r)
{
	const char *n = PQcmdTuples(r);
	const char *tag = PQcmdStatus(r);

	if (n[0] == '\0')
		return;
	if (strncmp(tag, "INSERT", 6) != 0 && strncmp(tag, "UPDATE", 6) != 0 &&
	    strncmp(tag, "DELETE", 6) != 0 && strncmp(tag, "MERGE", 5) != 0)
		return;
	p->changes = strtoll(n, NULL, 10);
	p->total += p->changes;
}

static void
pg_close(struct db *d)
{
	struct pg *p = PG(d);

	PQfinish(p->c);
	free(p);
}

static int
pg_exec(struct db *d, const char *sql)
{
	struct pg *p = PG(d);
	PGTransactionStatusType was;
	PGresult *r;
	ExecStatusType st;
	const char *pre[PG_LATER + 2];
	char *q;
	size_t len;
	int try, rc, npre, i, pend, resent = 0;

	if (ends_unsent(p, sql))
		return 0;
	for (try = 0;; try++) {
		pend = p->begin != NULL;
		npre = noted(p, sql, pre);
		if ((rc = ready(p, sql)) != 0) {
			if (npre > 1)
				noted_failed(p, pend);
			return rc == DB_DONE ? 0 : -1;
		}
		was = PQtransactionStatus(p->c);
		if (npre > 1) {
			/* One query string: the server runs each only when
			 * those before it succeeded. */
			for (len = 1, i = 0; i < npre; i++)
				len += strlen(pre[i]) + 2;
			q = xmalloc(len);
			for (len = 0, i = 0; i < npre; i++)
				len += (size_t)sprintf(
				    q + len, "%s%s", i > 0 ? "; " : "", pre[i]);
			r = PQexec(p->c, q);
			free(q);
		} else
			r = PQexec(p->c, sql);
		p->trips++;
		st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
		if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
			noted_sent(p);
			count_changes(p, r);
			PQclear(r);
			return 0;
		}
		note_res(p, r);
		PQclear(r);
		if (gone(p, pend ? PQTRANS_INTRANS : was)) {
			if (resent++ == 0 && (pend || resendable(sql, was))) {
				p->lost_tx = 0;
				continue;
			}
			if (npre > 1)
				noted_failed(p, pend);
			return -1;
		}
		if (npre > 1) {
			noted_failed(p, pend);
			return -1;
		}
		if (p->code != DB_BUSY || in_tx(p) || try + 1 >= PG_TRIES)
			return -1;
		backoff(try);
	}
}

static const char *
pg_errmsg(struct db *d)
{
	return PG(d)->msg;
}

static int
pg_errcode(struct db *d)
{
	return PG(d)->code;
}

/* Noted, sent with the transaction's first statement (see the top). */
static int
pg_begin_write(struct db *d)
{
	PG(d)->begin = "BEGIN";
	PG(d)->lost_tx = 0;
	return 0;
}

static int
pg_begin_read(struct db *d)
{
	PG(d)->begin = "BEGIN ISOLATION LEVEL REPEATABLE READ";
	PG(d)->lost_tx = 0;
	return 0;
}

/* The COMMIT sent and not waited for (see the top): a read-only
 * transaction in good standing only; any other goes as before. */
static int
pg_end_read(struct db *d)
{
	struct pg *p = PG(d);

	if (ends_unsent(p, "COMMIT"))
		return 0;
	settle(p);
	if (p->lost_tx || p->nlater > 0 || PQstatus(p->c) != CONNECTION_OK ||
	    PQtransactionStatus(p->c) != PQTRANS_INTRANS)
		return pg_exec(d, "COMMIT");
	if (!PQsendQuery(p->c, "COMMIT")) {
		note(p, PQerrorMessage(p->c), NULL);
		/* Lost: the server ends the transaction. */
		return gone(p, PQTRANS_IDLE) ? 0 : -1;
	}
	p->unread = 1;
	return 0;
}

static uint64_t
pg_round_trips(struct db *d)
{
	return PG(d)->trips;
}

/* Kept for the next statement (see the top); one command, no
 * parameters, a string that outlives the statement (a literal). */
static int
pg_exec_later(struct db *d, const char *sql)
{
	struct pg *p = PG(d);

	if (p->nlater == PG_LATER)
		return pg_exec(d, sql);
	p->later[p->nlater++] = sql;
	return 0;
}

/* A lost connection has ended its transaction; a noted BEGIN has begun
 * one. */
static int
pg_autocommit(struct db *d)
{
	if (PG(d)->begin != NULL)
		return 0;
	settle(PG(d));
	return PQstatus(PG(d)->c) != CONNECTION_OK || !in_tx(PG(d));
}

static int
pg_connected(struct db *d)
{
	return PQstatus(PG(d)->c) == CONNECTION_OK;
}

/* Which $N the rewritten SQL holds (outside literals: a '$' is
 * nowhere else in the store's SQL but in a function body). */
static void
mark_used(struct pg_stmt *s)
{
	const char *p;
	long k;

	for (p = s->sql; (p = strchr(p, '$')) != NULL;) {
		p++;
		if (!isdigit((unsigned char)*p))
			continue;
		k = strtol(p, (char **)&p, 10);
		if (k >= 1 && k <= s->np)
			s->used[k - 1] = 1;
	}
}

static struct db_stmt *
pg_prepare(struct db *d, const char *sql)
{
	struct pg_stmt *s = xcalloc(1, sizeof(*s));

	s->base.db = d;
	s->orig = xstrdup(sql);
	s->sql = db_pg_rewrite(sql, &s->np);
	if (s->np > 0) {
		s->val = xcalloc((size_t)s->np, sizeof(*s->val));
		s->len = xcalloc((size_t)s->np, sizeof(*s->len));
		s->fmt = xcalloc((size_t)s->np, sizeof(*s->fmt));
		s->type = xcalloc((size_t)s->np, sizeof(*s->type));
		s->used = xcalloc((size_t)s->np, 1);
		mark_used(s);
	}
	s->row = -1;
	s->blob_col = -1;
	return &s->base;
}

static const char *
pg_sql(struct db_stmt *s)
{
	return PS(s)->orig;
}

/* Parameter i (from 1) set to a copy of n bytes of v, or to NULL. */
static void
bind(struct pg_stmt *s, int i, const void *v, size_t n, unsigned int type,
    int fmt)
{
	if (i < 1 || i > s->np)
		return;
	i--;
	free(s->val[i]);
	s->val[i] = NULL;
	s->len[i] = 0;
	s->fmt[i] = fmt;
	s->type[i] = type;
	if (v == NULL)
		return;
	s->val[i] = xmalloc(n + 1);
	memcpy(s->val[i], v, n);
	s->val[i][n] = '\0';
	s->len[i] = (int)n;
}

static void
pg_bind_int64(struct db_stmt *st, int i, int64_t v)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%lld", (long long)v);

	bind(PS(st), i, b, (size_t)n, OID_INT8, 0);
}

/* A double as PostgreSQL reads it, into b (40 bytes): its length. */
static int
double_text(char *b, double v)
{
	if (isnan(v))
		return snprintf(b, 40, "NaN");
	if (isinf(v))
		return snprintf(b, 40, "%sInfinity", v < 0 ? "-" : "");
	return snprintf(b, 40, "%.17g", v);
}

static void
pg_bind_double(struct db_stmt *st, int i, double v)
{
	char b[40];
	int n = double_text(b, v);

	bind(PS(st), i, b, (size_t)n, OID_FLOAT8, 0);
}

static void
pg_bind_text(struct db_stmt *st, int i, const char *v, int n)
{
	size_t len = n < 0 ? strlen(v) : (size_t)n, k, j;
	const unsigned char *u = (const unsigned char *)v;
	char *c;
	long cp;

	for (k = 0; k < len; k += j)
		if (u[k] == 0 || (j = utf8_decode(u + k, len - k, &cp)) == 0)
			break;
	if (k == len) {
		bind(PS(st), i, v, len, 0, 0);
		return;
	}
	/* PostgreSQL's text holds valid UTF-8 without NULs: each byte of
	 * anything else as '?', as the store's readers show it. */
	c = xmalloc(len);
	memcpy(c, v, len);
	for (k = 0; k < len; k += j) {
		j = u[k] == 0 ? 0 : utf8_decode(u + k, len - k, &cp);
		if (j == 0) {
			c[k] = '?';
			j = 1;
		}
	}
	bind(PS(st), i, c, len, 0, 0);
	free(c);
}

static void
pg_bind_blob(struct db_stmt *st, int i, const void *v, size_t n)
{
	bind(PS(st), i, v ? v : "", n, OID_BYTEA, 1);
}

static void
pg_bind_null(struct db_stmt *st, int i)
{
	bind(PS(st), i, NULL, 0, 0, 0);
}

/* An array literal of n texts ("{"a","b\"c",NULL}"), bound as text. */
static void
pg_bind_text_array(struct db_stmt *st, int i, const char *const *v, size_t n)
{
	size_t k, len = 3;
	const char *c;
	char *b, *o;

	for (k = 0; k < n; k++)
		len += v[k] ? 2 * strlen(v[k]) + 3 : 5;
	o = b = xmalloc(len);
	*o++ = '{';
	for (k = 0; k < n; k++) {
		if (k > 0)
			*o++ = ',';
		if (v[k] == NULL) {
			memcpy(o, "NULL", 4);
			o += 4;
			continue;
		}
		*o++ = '"';
		for (c = v[k]; *c != '\0'; c++) {
			if (*c == '"' || *c == '\\')
				*o++ = '\\';
			*o++ = *c;
		}
		*o++ = '"';
	}
	*o++ = '}';
	pg_bind_text(st, i, b, (int)(o - b));
	free(b);
}

static void
pg_bind_double_array(struct db_stmt *st, int i, const double *v, size_t n)
{
	char *b = xmalloc(n * 41 + 3), *o = b;
	size_t k;

	*o++ = '{';
	for (k = 0; k < n; k++) {
		if (k > 0)
			*o++ = ',';
		o += double_text(o, v[k]);
	}
	*o++ = '}';
	bind(PS(st), i, b, (size_t)(o - b), 0, 0);
	free(b);
}

static void
drop_result(struct pg_stmt *s)
{
	PQclear(s->res);
	s->res = NULL;
	s->row = -1;
	s->nrows = 0;
	free(s->blob);
	s->blob = NULL;
	s->blob_col = -1;
}

/* A statement worth preparing: a query, not a command of the session
 * or the transaction. */
static int
preparable(const char *sql)
{
	return starts(sql, "SELECT") || starts(sql, "INSERT") ||
	    starts(sql, "UPDATE") || starts(sql, "DELETE") ||
	    starts(sql, "WITH");
}

/* 1 when this run of s can execute its prepared statement: prepared on
 * this connection (now, if it was not yet and may), with the types
 * bound; 0 to send it unnamed; -1 with *failed the result of a prepare
 * that failed (a lock it waited for too long, say), which is then the
 * run's. */
static int
use_prepared(struct pg *p, struct pg_stmt *s, int may, PGresult **failed)
{
	PGresult *r;
	int i;

	if (s->name[0] != '\0' && s->gen == p->conn_gen) {
		for (i = 0; i < s->np; i++)
			if (s->type[i] != s->ptype[i] &&
			    !(s->val[i] == NULL && s->type[i] == 0))
				return 0;
		return 1;
	}
	if (s->runs++ < 1 || !may || !preparable(s->sql) || in_tx_failed(p))
		return 0;
	snprintf(
	    s->name, sizeof(s->name), "pw%llu", (unsigned long long)++p->names);
	r = PQprepare(p->c, s->name, s->sql, s->np, s->type);
	p->trips++;
	if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
		s->name[0] = '\0';
		*failed = r;
		return -1;
	}
	PQclear(r);
	s->gen = p->conn_gen;
	if (s->ptype == NULL && s->np > 0)
		s->ptype = xcalloc((size_t)s->np, sizeof(*s->ptype));
	for (i = 0; i < s->np; i++)
		s->ptype[i] = s->type[i];
	return 1;
}

/* The next query's result of a pipeline (NULL when none came), the
 * NULL that ends it consumed. */
static PGresult *
next_result(PGconn *c)
{
	PGresult *r = PQgetResult(c), *x;

	while (r != NULL && PQresultStatus(r) != PGRES_PIPELINE_SYNC &&
	    (x = PQgetResult(c)) != NULL) {
		PQclear(x);
		if (PQstatus(c) != CONNECTION_OK)
			break;
	}
	return r;
}

static int ok_status(const PGresult *r);

/*
 * Sends the n commands pre (no parameters: a BEGIN, a savepoint, a
 * COMMIT) and then s (by its prepared name when prep) in one pipeline,
 * one round trip: *failed the result of the first of pre that failed
 * (NULL: none did), s->res s's (PGRES_PIPELINE_ABORTED after a failed
 * one), NULL when none came (PQerrorMessage then says why).
 */
static void
send_pipe(struct pg *p, const char *const *pre, int n, struct pg_stmt *s,
    int prep, PGresult **failed)
{
	const char *const *val = (const char *const *)s->val;
	PGresult *r;
	int sent = 1, i;

	*failed = NULL;
	s->res = NULL;
	p->trips++;
	if (!PQenterPipelineMode(p->c)) {
		*failed = PQmakeEmptyPGresult(p->c, PGRES_FATAL_ERROR);
		return;
	}
	for (i = 0; sent && i < n; i++)
		sent = PQsendQueryParams(
		    p->c, pre[i], 0, NULL, NULL, NULL, NULL, 0);
	sent = sent &&
	    (prep > 0 ? PQsendQueryPrepared(
	                    p->c, s->name, s->np, val, s->len, s->fmt, 0)
	              : PQsendQueryParams(p->c, s->sql, s->np, s->type, val,
	                    s->len, s->fmt, 0)) &&
	    PQpipelineSync(p->c);
	if (sent) {
		for (i = 0; i < n; i++) {
			r = next_result(p->c);
			if (*failed == NULL && !ok_status(r))
				*failed = r != NULL ? r
				                    : PQmakeEmptyPGresult(p->c,
				                          PGRES_FATAL_ERROR);
			else
				PQclear(r);
		}
		s->res = next_result(p->c);
	} else {
		*failed = PQmakeEmptyPGresult(p->c, PGRES_FATAL_ERROR);
		if (PQstatus(p->c) == CONNECTION_OK)
			PQpipelineSync(p->c); /* what was sent, to its end */
	}
	/* Up to the sync (or the connection's end). */
	while ((r = PQgetResult(p->c)) != NULL) {
		int sync = PQresultStatus(r) == PGRES_PIPELINE_SYNC;

		PQclear(r);
		if (sync || PQstatus(p->c) != CONNECTION_OK)
			break;
	}
	PQexitPipelineMode(p->c);
}

static int
ok_status(const PGresult *r)
{
	ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;

	return st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK;
}

/*
 * Runs s; after first (a COMMIT, db_exec_step) when it is not NULL,
 * *first_ok then 1 once first succeeded.  The noted commands go before
 * them the same way.  0 or the error's DB_* code.
 */
static int
run(struct pg_stmt *s, const char *first, int *first_ok)
{
	struct pg *p = PG(s->base.db);
	PGTransactionStatusType was;
	PGresult *fr;
	const char *pre[PG_LATER + 2];
	int try, rc, prep, pend, npre, nnoted, resent = 0;

	/* A parameter the SQL does not use has no type PostgreSQL could
	 * infer: text. */
	for (try = 0; try < s->np; try++)
		if (!s->used[try] && s->type[try] == 0)
			s->type[try] = OID_TEXT;
	if (first != NULL && ends_unsent(p, first)) {
		*first_ok = 1;
		first = NULL;
	}
	if (first == NULL && ends_unsent(p, s->sql))
		return 0;
	if (p->kept && inserts(s->sql))
		p->kept = 0;
	for (try = 0;; try++) {
		/* A BEGIN noted: the transaction has not begun. */
		pend = p->begin != NULL;
		npre = noted(p, first, pre);
		nnoted = npre - (first != NULL);
		if ((rc = ready(p, first != NULL ? first : s->sql)) != 0) {
			if (nnoted > 0)
				noted_failed(p, pend);
			return rc == DB_DONE ? 0 : rc;
		}
		was = PQtransactionStatus(p->c);
		fr = NULL;
		/* Not prepared between the COMMIT and its transaction's
		 * statements: a failed prepare would fail the transaction. */
		prep = use_prepared(p, s, first == NULL, &s->res);
		if (prep >= 0 && npre > 0) {
			send_pipe(p, pre, npre, s, prep, &fr);
			if (fr != NULL) {
				drop_result(s);
				s->res = fr;
			} else {
				noted_sent(p);
				pend = nnoted = 0;
			}
			if (fr == NULL && first != NULL) {
				*first_ok = 1;
				was = PQTRANS_IDLE; /* s ran after the COMMIT */
			}
		} else if (prep > 0) {
			s->res = PQexecPrepared(p->c, s->name, s->np,
			    (const char *const *)s->val, s->len, s->fmt, 0);
			p->trips++;
		} else if (prep == 0) {
			s->res = PQexecParams(p->c, s->sql, s->np, s->type,
			    (const char *const *)s->val, s->len, s->fmt, 0);
			p->trips++;
		}
		if (ok_status(s->res)) {
			noted_sent(p);
			s->nrows = PQntuples(s->res);
			count_changes(p, s->res);
			return 0;
		}
		note_res(p, s->res);
		if (getenv("PW_PG_TRACE"))
			fprintf(stderr, "PGSQL %s\n", s->sql);
		drop_result(s);
		if (gone(p, pend ? PQTRANS_INTRANS : was)) {
			if (resent++ == 0 &&
			    (pend || (npre == 0 && resendable(s->sql, was)))) {
				p->lost_tx = 0;
				continue;
			}
			if (nnoted > 0)
				noted_failed(p, pend);
			return p->code;
		}
		if (nnoted > 0)
			noted_failed(p, pend);
		if (npre > 0 || p->code != DB_BUSY || in_tx(p) ||
		    try + 1 >= PG_TRIES)
			return p->code;
		backoff(try);
	}
}

static int
pg_step(struct db_stmt *st)
{
	struct pg_stmt *s = PS(st);
	int rc;

	if (!s->ran) {
		s->ran = 1;
		if ((rc = run(s, NULL, NULL)) != 0)
			return rc;
	}
	if (s->res == NULL)
		return DB_DONE;
	free(s->blob);
	s->blob = NULL;
	s->blob_col = -1;
	if (s->row + 1 < s->nrows) {
		s->row++;
		return DB_ROW;
	}
	s->row = s->nrows;
	return DB_DONE;
}

static int
pg_exec_step(struct db *d, const char *sql, struct db_stmt *st, int *step)
{
	struct pg_stmt *s = PS(st);
	int rc, first_ok = 0;

	(void)d;
	drop_result(s);
	s->ran = 1;
	rc = run(s, sql, &first_ok);
	*step = rc != 0 ? rc : pg_step(st);
	if (!first_ok) {
		*step = 0;
		return -1;
	}
	return 0;
}

static int
pg_col_count(struct db_stmt *st)
{
	return PS(st)->res ? PQnfields(PS(st)->res) : 0;
}

/* Column i of the current row as text, NULL for NULL or no row. */
static const char *
cell(struct pg_stmt *s, int i)
{
	if (s->res == NULL || s->row < 0 || s->row >= s->nrows || i < 0 ||
	    i >= PQnfields(s->res) || PQgetisnull(s->res, s->row, i))
		return NULL;
	return PQgetvalue(s->res, s->row, i);
}

static enum db_type
pg_col_type(struct db_stmt *st, int i)
{
	struct pg_stmt *s = PS(st);

	if (cell(s, i) == NULL)
		return DB_NULL;
	switch (PQftype(s->res, i)) {
	case OID_BOOL:
	case OID_INT2:
	case OID_INT4:
	case OID_INT8:
	case OID_OID:
		return DB_INTEGER;
	case OID_FLOAT4:
	case OID_FLOAT8:
	case OID_NUMERIC:
		return DB_FLOAT;
	case OID_BYTEA:
		return DB_BLOB;
	default:
		return DB_TEXT;
	}
}

static double
pg_col_double(struct db_stmt *st, int i)
{
	const char *t = cell(PS(st), i);

	if (t == NULL)
		return 0;
	if (t[0] == 't' && t[1] == '\0')
		return 1;
	return strtod(t, NULL);
}

static int64_t
pg_col_int64(struct db_stmt *st, int i)
{
	const char *t = cell(PS(st), i);
	char *end;
	long long v;
	double d;

	if (t == NULL)
		return 0;
	if (t[0] == 't' && t[1] == '\0')
		return 1;
	errno = 0;
	v = strtoll(t, &end, 10);
	if (*end == '\0' && errno == 0)
		return v;
	/* A number with a fraction or an exponent: truncated, as SQLite
	 * converts a REAL. */
	d = strtod(t, NULL);
	if (!isfinite(d))
		return 0;
	if (d >= 9.2233720368547758e18)
		return INT64_MAX;
	if (d <= -9.2233720368547758e18)
		return INT64_MIN;
	return (int64_t)d;
}

/* The unescaped bytes of bytea column i of the current row. */
static const unsigned char *
blob_of(struct pg_stmt *s, int i, size_t *n)
{
	const char *t = cell(s, i);

	if (t == NULL)
		return NULL;
	if (s->blob_col != i) {
		free(s->blob);
		s->blob = NULL;
		s->blob =
		    PQunescapeBytea((const unsigned char *)t, &s->blob_len);
		s->blob_col = i;
		if (s->blob == NULL)
			return NULL;
	}
	*n = s->blob_len;
	return s->blob;
}

static const char *
pg_col_text(struct db_stmt *st, int i)
{
	struct pg_stmt *s = PS(st);
	const char *t = cell(s, i);
	size_t n;

	if (t != NULL && PQftype(s->res, i) == OID_BYTEA)
		return (const char *)blob_of(s, i, &n);
	return t;
}

static const void *
pg_col_blob(struct db_stmt *st, int i)
{
	struct pg_stmt *s = PS(st);
	const char *t = cell(s, i);
	size_t n;

	if (t != NULL && PQftype(s->res, i) == OID_BYTEA)
		return blob_of(s, i, &n);
	return t;
}

static int
pg_col_bytes(struct db_stmt *st, int i)
{
	struct pg_stmt *s = PS(st);
	const char *t = cell(s, i);
	size_t n = 0;

	if (t == NULL)
		return 0;
	if (PQftype(s->res, i) == OID_BYTEA)
		return blob_of(s, i, &n) ? (int)n : 0;
	return PQgetlength(s->res, s->row, i);
}

static void
pg_reset(struct db_stmt *st)
{
	drop_result(PS(st));
	PS(st)->ran = 0;
}

static void
pg_clear_bindings(struct db_stmt *st)
{
	struct pg_stmt *s = PS(st);
	int i;

	for (i = 1; i <= s->np; i++)
		bind(s, i, NULL, 0, 0, 0);
}

static void
pg_finalize(struct db_stmt *st)
{
	struct pg_stmt *s = PS(st);

	pg_reset(st);
	pg_clear_bindings(st);
	settle(PG(st->db));
	if (s->name[0] != '\0' && s->gen == PG(st->db)->conn_gen &&
	    PQstatus(PG(st->db)->c) == CONNECTION_OK &&
	    !in_tx_failed(PG(st->db))) {
		char q[64];

		snprintf(q, sizeof(q), "DEALLOCATE %s", s->name);
		PQclear(PQexec(PG(st->db)->c, q));
		PG(st->db)->trips++;
	}
	free(s->ptype);
	free(s->val);
	free(s->len);
	free(s->fmt);
	free(s->type);
	free(s->used);
	free(s->sql);
	free(s->orig);
	free(s);
}

static uint64_t
pg_stmt_work(struct db_stmt *st)
{
	(void)st;
	return 0;
}

static int64_t
pg_changes(struct db *d)
{
	return PG(d)->changes;
}

static int64_t
pg_total_changes(struct db *d)
{
	return PG(d)->total;
}

static int64_t
pg_last_id(struct db *d)
{
	struct pg *p = PG(d);
	PGresult *r;
	int64_t id = 0;

	if (p->kept)
		return p->kept_id;
	settle(p);
	r = PQexec(p->c, "SELECT lastval()");
	p->trips++;
	if (r != NULL && PQresultStatus(r) == PGRES_TUPLES_OK &&
	    PQntuples(r) == 1)
		id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	else
		note_res(p, r);
	PQclear(r);
	return id;
}

static void
pg_last_id_keep(struct db *d, int64_t id)
{
	PG(d)->kept_id = id;
	PG(d)->kept = 1;
}

/* PostgreSQL tells no data version: every call is a new one (the store
 * keeps a process's own, store_data_version). */
static int
pg_data_version(struct db *d, int64_t *out)
{
	*out = ++PG(d)->version;
	return 0;
}

static int
pg_checkpoint(struct db *d, int *log)
{
	(void)d;
	*log = 0;
	return 0;
}

static void
pg_autocheckpoint(struct db *d, int pages)
{
	(void)d;
	(void)pages;
}

static const struct db_ops pg_ops = { DB_PG, pg_close, pg_exec, pg_errmsg,
	pg_errcode, pg_begin_write, pg_begin_read, pg_autocommit, pg_prepare,
	pg_sql, pg_bind_int64, pg_bind_double, pg_bind_text, pg_bind_blob,
	pg_bind_null, pg_step, pg_col_count, pg_col_type, pg_col_int64,
	pg_col_double, pg_col_text, pg_col_blob, pg_col_bytes, pg_reset,
	pg_clear_bindings, pg_finalize, pg_stmt_work, pg_changes,
	pg_total_changes, pg_last_id, pg_data_version, pg_checkpoint,
	pg_autocheckpoint, pg_connected, pg_last_id_keep, pg_bind_text_array,
	pg_bind_double_array, pg_exec_step, pg_exec_later, pg_end_read,
	pg_round_trips };

/* Notices (a NOTICE from CREATE ... IF NOT EXISTS) are not errors and
 * do not go to stderr. */
static void
no_notice(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* The session's settings, on each connection. */
static int
setup(struct pg *p)
{
	const char *begin = p->begin;
	int rc, nlater = p->nlater;

	/* Noted commands wait for their transaction's next statement. */
	p->begin = NULL;
	p->nlater = 0;
	rc = pg_exec(&p->base,
	    "SET client_min_messages = warning;"
	    "SET standard_conforming_strings = on;"
	    /* The store's statements are short: compiling one (past
	     * jit_above_cost, as a generic plan's estimate may be) costs
	     * 100 ms and more, its run a millisecond. */
	    "SET jit = off;");
	p->begin = begin;
	p->nlater = nlater;
	return rc;
}

int
db_pg_open(struct db **out, const char *where, struct err *e)
{
	struct pg *p = xcalloc(1, sizeof(*p));
	char shown[1024];

	*out = NULL;
	p->base.ops = &pg_ops;
	redact_conninfo_into(p->shown, sizeof(p->shown), where);
	p->c = PQconnectdb(where);
	if (p->c == NULL || PQstatus(p->c) != CONNECTION_OK) {
		redact_conninfo_into(shown, sizeof(shown), where);
		note(p, p->c ? PQerrorMessage(p->c) : "out of memory", NULL);
		err_set(e, "%s: postgresql: %s", shown, p->msg);
		pg_close(&p->base);
		return -1;
	}
	PQsetNoticeProcessor(p->c, no_notice, NULL);
	if (setup(p) != 0) {
		redact_conninfo_into(shown, sizeof(shown), where);
		err_set(e, "%s: postgresql: %s", shown, p->msg);
		pg_close(&p->base);
		return -1;
	}
	*out = &p->base;
	return 0;
}
