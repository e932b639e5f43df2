/*
 * The store: the mail the series of an inbox were made of
 * (store/series_mail.h).  All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "store/series_mail.h"
#include "store/store_int.h"

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
store_series_mail_id_list(
    struct store *s, char ***out, size_t *n, const char *inbox, size_t max)
{
	struct db_stmt *st = store_i_stmt(s,
	    /* the newest by id, then the inbox's: a walk of at most
	     * max rows (an index on inbox would serve one query) */
	    "WITH se AS (SELECT id, message_id, inbox"
	    "  FROM series ORDER BY id DESC LIMIT ?2)"
	    " SELECT message_id FROM se WHERE inbox = ?1"
	    " UNION ALL SELECT p.message_id FROM series_patches p"
	    "  JOIN se ON se.id = p.series_id WHERE se.inbox = ?1");
	char **v = NULL;
	size_t k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, inbox);
	db_bind_int64(st, 2, (int64_t)max);
	while ((rc = db_step(st)) == DB_ROW) {
		const char *id = db_col_text(st, 0);

		v = xreallocarray(v, k + 1, sizeof(*v));
		v[k++] = xstrdup(id ? id : "");
	}
	store_i_release(s, st);
	if (rc != DB_DONE) {
		store_series_mail_ids_release(v, k);
		return store_i_dberr(s, "series mail");
	}
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_str);
	*out = v;
	*n = k;
	return 0;
}

void
store_series_mail_ids_release(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
