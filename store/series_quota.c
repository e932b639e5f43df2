/*
 * The store: counts behind an inbox's limits (store/series_quota.h).
 * All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <stdint.h>

#include "store/series_quota.h"
#include "store/store_int.h"

/* One count of st, bound by the caller: 0, or -1. */
static int
count_of(struct store *s, struct db_stmt *st, int64_t *out, const char *what)
{
	int rc = db_step(st);

	*out = rc == DB_ROW ? db_col_int64(st, 0) : 0;
	store_i_release(s, st);
	return rc == DB_ROW ? 0 : store_i_dberr(s, what);
}

int
store_series_from_sender(struct store *s, int64_t *out, const char *inbox,
    const char *email, int64_t since, int64_t except_id)
{
	/* series.author is "Name <email>": the address is its end, the
	 * name is whatever the sender wrote. */
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT count(*) FROM series WHERE inbox = ?1"
	    " AND created >= ?3 AND id <> ?4"
	    " AND lower(substr(author, -length(?2) - 2))"
	    "  = '<' || lower(?2) || '>'");

	*out = 0;
	if (st == NULL)
		return -1;
	db_bind_text(st, 1, inbox, -1);
	db_bind_text(st, 2, email, -1);
	db_bind_int64(st, 3, since);
	db_bind_int64(st, 4, except_id);
	return count_of(s, st, out, "series from a sender");
}

int
store_series_inbox_queued(struct store *s, int64_t *out, const char *inbox)
{
	/* From the queue's side: it is bounded by the limit, an inbox's
	 * series are not. */
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT count(*) FROM jobs j WHERE j.state = 'queued'"
	    " AND (EXISTS (SELECT 1 FROM series x WHERE"
	    "  x.commit_id = j.commit_id AND x.inbox = ?1)"
	    " OR EXISTS (SELECT 1 FROM series_patches p"
	    "  JOIN series x ON x.id = p.series_id"
	    "  WHERE p.commit_id = j.commit_id AND x.inbox = ?1))");

	*out = 0;
	if (st == NULL)
		return -1;
	db_bind_text(st, 1, inbox, -1);
	return count_of(s, st, out, "queued jobs of an inbox");
}
