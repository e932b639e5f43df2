/*
 * The store: the commands read by mail (store/mail_commands.h).  All
 * SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "store/mail_commands.h"
#include "store/store_int.h"

/* Mail text as valid UTF-8 of at most max bytes (the column's cap). */
static void
bind_mail_text(
    struct db_stmt *st, int i, const char *s, size_t max, struct buf *b)
{
	buf_reset(b);
	utf8_repair(b, s ? s : "", s ? strlen(s) : 0, max);
	buf_truncate(b, utf8_cut(b->data, b->len, max));
	db_bind_text(st, i, b->data, (int)b->len);
}

static int
put_pairs(struct store *s, int64_t id, const int64_t *pairs, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < STORE_MAIL_COMMAND_PAIRS; i++) {
		struct db_stmt *st = store_i_stmt(s,
		    "INSERT INTO mail_command_pairs (command_id, pair_id)"
		    " VALUES (?1, ?2) ON CONFLICT DO NOTHING");
		int r;

		if (st == NULL)
			return -1;
		db_bind_int64(st, 1, id);
		db_bind_int64(st, 2, pairs[i]);
		r = store_i_step_done(s, st, "mail command pair");
		store_i_release(s, st);
		if (r != 0)
			return -1;
	}
	return 0;
}

static int
mail_command_put_once(
    struct store *s, const struct store_mail_command_new *c, int64_t now)
{
	struct db_stmt *st;
	struct buf b = BUF_INIT(STORE_MAIL_COMMAND_REASON + 8);
	int64_t id;
	int rc;

	if (store_i_tx_begin(s) != 0)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO mail_commands (series_id, commit_sha, job,"
	    " message_id, line, sender, command, outcome, reason,"
	    " made_series_id, created, parsed)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
	    " ON CONFLICT (message_id, line) DO NOTHING");
	if (st == NULL) {
		buf_release(&b);
		return store_i_tx_end(s, 0);
	}
	store_i_bind_id(st, 1, c->series_id);
	store_i_bind_text(st, 2, c->commit_sha);
	bind_mail_text(st, 3, c->job, STORE_MAIL_COMMAND_TEXT, &b);
	/* Bound before b is reused: a statement keeps its own copy. */
	bind_mail_text(st, 4, c->message_id, STORE_MAIL_COMMAND_REASON, &b);
	db_bind_int64(st, 5, c->line);
	bind_mail_text(st, 6, c->sender, STORE_MAIL_COMMAND_TEXT, &b);
	bind_mail_text(st, 7, c->command, STORE_MAIL_COMMAND_TEXT, &b);
	store_i_bind_text(st, 8, c->done ? "done" : "refused");
	bind_mail_text(st, 9, c->reason, STORE_MAIL_COMMAND_REASON, &b);
	store_i_bind_id(st, 10, c->made_series_id);
	db_bind_int64(st, 11, now);
	if (c->parsed != NULL)
		bind_mail_text(st, 12, c->parsed, STORE_MAIL_COMMAND_TEXT, &b);
	else
		db_bind_null(st, 12);
	rc = db_step(st);
	store_i_release(s, st);
	buf_release(&b);
	if (rc != DB_DONE) {
		store_i_dberr(s, "mail command");
		return store_i_tx_end(s, 0);
	}
	if (db_changes(s->db) == 0) {
		store_i_tx_end(s, 0);
		return err_setc(&s->err, ERR_EXISTS,
		    "mail command %.200s line %lld: recorded already",
		    c->message_id, (long long)c->line);
	}
	id = db_last_id(s->db);
	if (put_pairs(s, id, c->pairs, c->npairs) != 0)
		return store_i_tx_end(s, 0);
	return store_i_tx_end(s, 1);
}

int
store_mail_command_put(
    struct store *s, const struct store_mail_command_new *c, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, mail_command_put_once(s, c, now));
	return rc;
}

int
store_mail_command_known(struct store *s, const char *message_id)
{
	struct db_stmt *st = store_i_stmt(
	    s, "SELECT 1 FROM mail_commands WHERE message_id = ?1 LIMIT 1");
	int rc;

	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, message_id);
	rc = db_step(st);
	store_i_release(s, st);
	if (rc == DB_ROW)
		return 1;
	return rc == DB_DONE ? 0 : store_i_dberr(s, "mail command known");
}

static void
scan_command(void *row, struct db_stmt *st, void *arg)
{
	struct store_mail_command *c = row;

	(void)arg;
	c->id = db_col_int64(st, 0);
	c->series_id = db_col_int64(st, 1);
	c->commit_sha = store_i_col_dup(st, 2);
	c->job = store_i_col_dup(st, 3);
	c->message_id = store_i_col_dup(st, 4);
	c->line = db_col_int64(st, 5);
	c->sender = store_i_col_dup(st, 6);
	c->command = store_i_col_dup(st, 7);
	c->outcome = store_i_col_dup(st, 8);
	c->reason = store_i_col_dup(st, 9);
	c->made_series_id = db_col_int64(st, 10);
	c->created = db_col_int64(st, 11);
	c->parsed = store_i_col_dup(st, 12);
}

/* Whose commands: a series' (by id) or a commit's (by sha), each with
 * its list and its pairs' statements (?1 the key; the list's ?2 its
 * length, the pairs' ?2 the least command id listed). */
struct of {
	const char *list_sql, *pairs_sql;
	int64_t id;
	const char *sha;
};

#define COMMAND_COLUMNS                                                 \
	"SELECT * FROM (SELECT id, coalesce(series_id, 0), commit_sha," \
	" job, message_id, line, sender, command, outcome, reason,"     \
	" coalesce(made_series_id, 0), created, parsed FROM mail_commands"

static void
bind_key(struct db_stmt *st, const struct of *w)
{
	if (w->sha != NULL)
		store_i_bind_text(st, 1, w->sha);
	else
		db_bind_int64(st, 1, w->id);
}

/* Each command's pairs, from one read of those of the list's. */
static int
commands_pairs(struct store *s, struct store_mail_commands *out,
    const struct of *w, int64_t least)
{
	struct db_stmt *st = store_i_stmt(s, w->pairs_sql);
	size_t k = 0;
	int rc;

	if (st == NULL)
		return -1;
	bind_key(st, w);
	db_bind_int64(st, 2, least);
	while ((rc = db_step(st)) == DB_ROW) {
		int64_t cid = db_col_int64(st, 0);
		struct store_mail_command *c;

		while (k < out->n && out->v[k].id < cid)
			k++;
		if (k == out->n)
			break;
		c = &out->v[k];
		if (c->id != cid || c->npairs >= STORE_MAIL_COMMAND_PAIRS)
			continue;
		c->pairs =
		    xreallocarray(c->pairs, c->npairs + 1, sizeof(*c->pairs));
		c->pairs[c->npairs++] = db_col_int64(st, 1);
	}
	store_i_release(s, st);
	return rc == DB_ROW || rc == DB_DONE
	    ? 0
	    : store_i_dberr(s, "mail command pairs");
}

/* The newest max of w's by its index, turned oldest first. */
static int
commands_of(struct store *s, struct store_mail_commands *out,
    const struct of *w, size_t max)
{
	struct db_stmt *st = store_i_stmt(s, w->list_sql);
	void *v = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	bind_key(st, w);
	db_bind_int64(st, 2, (int64_t)max);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), scan_command,
	    NULL, "mail commands");
	out->v = v;
	if (r == 0 && out->n > 0)
		r = commands_pairs(s, out, w, out->v[0].id);
	if (r != 0)
		store_mail_commands_release(out);
	return r;
}

int
store_mail_commands_of_series(struct store *s, struct store_mail_commands *out,
    int64_t series_id, size_t max)
{
	const struct of w = {
		.list_sql = COMMAND_COLUMNS
		" WHERE series_id = ?1 ORDER BY id DESC LIMIT ?2) AS c"
		" ORDER BY id",
		.pairs_sql =
		    "SELECT p.command_id, p.pair_id FROM mail_command_pairs p"
		    " JOIN mail_commands c ON c.id = p.command_id"
		    " WHERE c.series_id = ?1 AND c.id >= ?2"
		    " ORDER BY p.command_id, p.pair_id",
		.id = series_id,
	};

	return commands_of(s, out, &w, max);
}

int
store_mail_commands_of_commit(struct store *s, struct store_mail_commands *out,
    const char *sha, size_t max)
{
	const struct of w = {
		.list_sql = COMMAND_COLUMNS
		" WHERE commit_sha = ?1 ORDER BY id DESC LIMIT ?2) AS c"
		" ORDER BY id",
		.pairs_sql =
		    "SELECT p.command_id, p.pair_id FROM mail_command_pairs p"
		    " JOIN mail_commands c ON c.id = p.command_id"
		    " WHERE c.commit_sha = ?1 AND c.id >= ?2"
		    " ORDER BY p.command_id, p.pair_id",
		.sha = sha,
	};

	return commands_of(s, out, &w, max);
}

void
store_mail_commands_release(struct store_mail_commands *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		struct store_mail_command *c = &l->v[i];

		free(c->commit_sha);
		free(c->job);
		free(c->message_id);
		free(c->sender);
		free(c->command);
		free(c->parsed);
		free(c->outcome);
		free(c->reason);
		free(c->pairs);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
