/*
 * The store: patch mail taken into no series, with why
 * (store/mail_skipped.h).  All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "store/mail_skipped.h"
#include "store/store_int.h"

/* Mail text as valid UTF-8 of at most the column's cap. */
static void
bind_text(struct db_stmt *st, int i, const char *s, struct buf *b)
{
	buf_reset(b);
	utf8_repair(b, s ? s : "", s ? strlen(s) : 0, STORE_MAIL_SKIPPED_TEXT);
	buf_truncate(b, utf8_cut(b->data, b->len, STORE_MAIL_SKIPPED_TEXT));
	db_bind_text(st, i, b->data, (int)b->len);
}

int
store_mail_skipped_put(struct store *s, const char *inbox,
    const char *message_id, const char *subject, const char *reason,
    int64_t now)
{
	struct buf b = BUF_INIT(STORE_MAIL_SKIPPED_TEXT + 8);
	struct db_stmt *st;
	int r;

	/* A transaction of its own (or the caller's): the pages' cache
	 * moves with it. */
	if (store_i_tx_begin(s) != 0)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO mail_skipped (inbox, message_id, subject, reason,"
	    " created) VALUES (?1, ?2, ?3, ?4, ?5)"
	    " ON CONFLICT (inbox, message_id) DO UPDATE SET"
	    " subject = excluded.subject, reason = excluded.reason,"
	    " created = excluded.created");
	if (st == NULL) {
		buf_release(&b);
		return store_i_tx_end(s, 0);
	}
	/* Each bound before b is reused: a statement keeps its copy. */
	bind_text(st, 1, inbox, &b);
	bind_text(st, 2, message_id, &b);
	bind_text(st, 3, subject, &b);
	bind_text(st, 4, reason, &b);
	db_bind_int64(st, 5, now);
	r = store_i_step_done(s, st, "mail skipped");
	store_i_release(s, st);
	buf_release(&b);
	return store_i_tx_end(s, r == 0);
}

int
store_mail_skipped_drop(
    struct store *s, const char *inbox, const char *message_id)
{
	struct db_stmt *st;
	int r;

	if (store_i_tx_begin(s) != 0)
		return -1;
	st = store_i_stmt(
	    s, "DELETE FROM mail_skipped WHERE inbox = ?1 AND message_id = ?2");
	if (st == NULL)
		return store_i_tx_end(s, 0);
	store_i_bind_text(st, 1, inbox);
	store_i_bind_text(st, 2, message_id);
	r = store_i_step_done(s, st, "mail skipped drop");
	store_i_release(s, st);
	return store_i_tx_end(s, r == 0);
}

static void
scan_skipped(void *row, struct db_stmt *st, void *arg)
{
	struct store_mail_skipped *k = row;

	(void)arg;
	k->id = db_col_int64(st, 0);
	k->inbox = store_i_col_dup(st, 1);
	k->message_id = store_i_col_dup(st, 2);
	k->subject = store_i_col_dup(st, 3);
	k->reason = store_i_col_dup(st, 4);
	k->created = db_col_int64(st, 5);
}

int
store_mail_skipped_list(
    struct store *s, struct store_mail_skipped_list *out, size_t max)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT id, inbox, message_id, subject, reason, created"
	    " FROM mail_skipped ORDER BY id DESC LIMIT ?1");
	void *v = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, (int64_t)max);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), scan_skipped,
	    NULL, "mail skipped");
	out->v = v;
	if (r != 0)
		store_mail_skipped_release(out);
	return r;
}

void
store_mail_skipped_release(struct store_mail_skipped_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].inbox);
		free(l->v[i].message_id);
		free(l->v[i].subject);
		free(l->v[i].reason);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
