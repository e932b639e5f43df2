/*
 * The store: the kept git packs of applied series (store/series_pack.h).
 */
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "store/series_pack.h"
#include "store/store_int.h"

int
store_series_pack_put(struct store *s, int64_t series_id, const char *tip,
    size_t commits, const void *pack, size_t len)
{
	struct db_stmt *st;
	int r;

	if (store_i_tx_begin(s) != 0)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO series_packs (series_id, tip, commits, bytes, pack)"
	    " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (series_id) DO UPDATE"
	    " SET tip = excluded.tip, commits = excluded.commits,"
	    " bytes = excluded.bytes, pack = excluded.pack");
	if (st == NULL)
		return store_i_tx_end(s, 0);
	db_bind_int64(st, 1, series_id);
	store_i_bind_text(st, 2, tip);
	db_bind_int64(st, 3, (int64_t)commits);
	db_bind_int64(st, 4, (int64_t)len);
	if (pack != NULL)
		db_bind_blob(st, 5, pack, len);
	else
		db_bind_null(st, 5);
	r = store_i_step_done(s, st, "series pack");
	store_i_release(s, st);
	return store_i_tx_end(s, r == 0);
}

int
store_series_pack_get(struct store *s, struct buf *out, size_t *out_commits,
    size_t *out_bytes, const char *ref)
{
	struct db_stmt *st;
	int rc, r = 0;

	*out_commits = *out_bytes = 0;
	st = store_i_stmt(s,
	    "SELECT p.commits, p.bytes, p.pack FROM series_packs p"
	    " JOIN series se ON se.id = p.series_id WHERE se.ref = ?1");
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, ref);
	rc = db_step(st);
	if (rc == DB_ROW) {
		*out_commits = (size_t)db_col_int64(st, 0);
		*out_bytes = (size_t)db_col_int64(st, 1);
		if (db_col_type(st, 2) != DB_NULL) {
			size_t n = (size_t)db_col_bytes(st, 2);

			if (n > out->max ||
			    buf_add(out, db_col_blob(st, 2), n) != 0)
				r = err_setc(&s->err, ERR_TOOBIG,
				    "the pack of %s is %zu bytes", ref, n);
		}
	} else if (rc == DB_DONE) {
		r = err_setc(&s->err, ERR_NOTFOUND,
		    "no pack of %s is kept in the store", ref);
	} else {
		r = store_i_dberr(s, "series pack");
	}
	store_i_release(s, st);
	return r;
}
