/*
 * Patch mail waiting for the rest of its series (store/series.h): kept
 * per inbox until the series is whole, then dropped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/alerts.h"
#include "store/bisect.h"
#include "store/series.h"
#include "store/store_int.h"

static int
mail_pending_put_once(struct store *s, const char *inbox, const char *sha,
    const char *data, size_t len, int64_t now)
{
	struct db_stmt *st;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO inbox_pending (inbox, sha, data, created)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (inbox, sha) DO NOTHING");
	if ((ok = st != NULL)) {
		store_i_bind_text(st, 1, inbox);
		store_i_bind_text(st, 2, sha);
		db_bind_blob(st, 3, data, len);
		db_bind_int64(st, 4, now);
		ok = store_i_step_done(s, st, "pending mail") == 0;
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_mail_pending_put(struct store *s, const char *inbox, const char *sha,
    const char *data, size_t len, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(
	    s, rc, mail_pending_put_once(s, inbox, sha, data, len, now));
	return rc;
}

int
store_mail_pending_each(struct store *s, const char *inbox,
    int (*cb)(const char *, const char *, size_t, void *), void *arg)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT sha, data FROM inbox_pending WHERE inbox = ?1"
	    " ORDER BY seq");
	int rc, r = 0;

	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, inbox);
	while (r == 0 && (rc = db_step(st)) == DB_ROW)
		r = cb(db_col_text(st, 0), (const char *)db_col_blob(st, 1),
		    (size_t)db_col_bytes(st, 1), arg);
	if (r == 0 && rc != DB_DONE)
		r = store_i_dberr(s, "pending mail");
	store_i_release(s, st);
	return r;
}

static int
mail_pending_drop_once(struct store *s, const char *inbox, const char *sha)
{
	struct db_stmt *st;
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

int
store_mail_pending_drop(struct store *s, const char *inbox, const char *sha)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, mail_pending_drop_once(s, inbox, sha));
	return rc;
}
