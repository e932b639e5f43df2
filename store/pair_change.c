/*
 * The store: a pair's largest change of one verdict (store/pair_change.h),
 * from its comparisons.  All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/pair_change.h"
#include "store/store_int.h"

int
store_pair_change_get(struct store *s, struct store_pair_change *out,
    int64_t pair_id, const char *verdict)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT change_pct, metric FROM comparisons"
	    " WHERE pair_id = ?1 AND verdict = ?2 AND change_pct IS NOT NULL"
	    " ORDER BY abs(change_pct) DESC, metric LIMIT 1");
	int rc;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	db_bind_text(st, 2, verdict, -1);
	rc = db_step(st);
	if (rc == DB_ROW) {
		out->change_pct = db_col_double(st, 0);
		out->metric = store_i_web_text(st, 1);
	}
	store_i_release(s, st);
	if (rc == DB_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld has no %s",
		    (long long)pair_id, verdict);
	return rc == DB_ROW ? 0 : store_i_dberr(s, "pair change");
}

void
store_pair_change_release(struct store_pair_change *c)
{
	if (c == NULL)
		return;
	free(c->metric);
	memset(c, 0, sizeof(*c));
}
