/*
 * The store: the artifact store's room (store/builds.h).  The bytes the
 * artifacts take are a count kept with them (counts 'artifacts.bytes');
 * making room for an upload evicts the least recently used artifacts no
 * waiting job needs and marks their builds evicted.  All SQL is in
 * store/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "store/builds.h"
#include "store/store_int.h"

void
store_build_victims_release(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int
store_artifacts_bytes(struct store *s, int64_t *out)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT coalesce(max(n), 0) FROM count_totals"
	    " WHERE name = 'artifacts.bytes'");
	int r = 0;

	*out = 0;
	if (st == NULL)
		return -1;
	if (db_step(st) == DB_ROW)
		*out = db_col_int64(st, 0);
	else
		r = store_i_dberr(s, "artifact bytes");
	store_i_release(s, st);
	return r;
}

/* An artifact some build holds that a queued or running job waits on,
 * or that is being built. */
#define ARTIFACT_NEEDED(A)                                           \
	"EXISTS (SELECT 1 FROM build_files f JOIN builds b"          \
	" ON b.id = f.build_id WHERE f.sha256 = " A                  \
	" AND (b.state IN ('queued', 'running') OR EXISTS (SELECT 1" \
	"  FROM jobs j WHERE j.build_id = b.id"                      \
	"  AND j.state IN ('queued', 'running'))))"

static int
artifacts_make_room_once(struct store *s, char ***victims, size_t *n,
    int64_t need, int64_t pending, int64_t max_size)
{
	struct db_stmt *st;
	int64_t total = 0, freed = 0, held = 0;
	size_t cap = 0, i;
	int ok, rc, r = 0;

	*victims = NULL;
	*n = 0;
	if (store_i_tx_begin(s) == -1)
		return -1;
	ok = store_artifacts_bytes(s, &total) == 0;
	/* What uploads in progress will add is as good as stored. */
	need += pending;
	if (ok && total + need > max_size) {
		st = store_i_stmt(s,
		    "SELECT a.sha256, a.size FROM artifacts a"
		    " WHERE NOT " ARTIFACT_NEEDED(
		        "a.sha256") " ORDER BY a.last_used, a.sha256");
		if ((ok = st != NULL)) {
			while (total - freed + need > max_size &&
			    (rc = db_step(st)) == DB_ROW) {
				if (*n == cap) {
					cap = cap ? 2 * cap : 8;
					*victims = xreallocarray(
					    *victims, cap, sizeof(**victims));
				}
				(*victims)[(*n)++] = store_i_col_dup(st, 0);
				freed += db_col_int64(st, 1);
			}
			store_i_release(s, st);
		}
		if (ok && total - freed + need > max_size) {
			held = total - freed;
			if (pending > 0)
				r = err_setc(&s->err, ERR_TOOBIG,
				    "artifact store full (builds.max_size "
				    "%lld): %lld bytes held by builds that "
				    "queued jobs need, %lld promised to "
				    "uploads in progress",
				    (long long)max_size, (long long)held,
				    (long long)pending);
			else
				r = err_setc(&s->err, ERR_TOOBIG,
				    "artifact store full (builds.max_size "
				    "%lld): %lld bytes held by builds that "
				    "queued jobs need",
				    (long long)max_size, (long long)held);
			store_build_victims_release(*victims, *n);
			*victims = NULL;
			*n = 0;
		}
	}
	for (i = 0; ok && i < *n; i++) {
		st = store_i_stmt(s,
		    "UPDATE builds SET evicted = 1 WHERE id IN"
		    " (SELECT build_id FROM build_files WHERE sha256 = ?1)");
		if ((ok = st != NULL)) {
			store_i_bind_text(st, 1, (*victims)[i]);
			ok = store_i_step_done(s, st, "evict build") == 0;
			store_i_release(s, st);
		}
		st = ok ? store_i_stmt(s,
		              "DELETE FROM artifacts WHERE sha256 = ?1"
		              " RETURNING size")
		        : NULL;
		if (ok && (ok = st != NULL)) {
			int64_t gone = 0;

			store_i_bind_text(st, 1, (*victims)[i]);
			if ((rc = db_step(st)) == DB_ROW) {
				gone = db_col_int64(st, 0);
				rc = db_step(st);
			}
			if (rc != DB_DONE)
				ok = store_i_dberr(s, "evict artifact") == 0;
			store_i_release(s, st);
			ok = ok &&
			    store_i_count_add(s, "artifacts.bytes", -gone) == 0;
		}
	}
	if (store_i_tx_end(s, ok) == -1) {
		store_build_victims_release(*victims, *n);
		*victims = NULL;
		*n = 0;
		return -1;
	}
	return r;
}

int
store_artifacts_make_room(struct store *s, char ***victims, size_t *n,
    int64_t need, int64_t pending, int64_t max_size)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    artifacts_make_room_once(s, victims, n, need, pending, max_size));
	return rc;
}

static int
artifact_use_once(
    struct store *s, int64_t *out_size, const char *sha256, int64_t now)
{
	struct db_stmt *st;
	int r = 0, ok, rc;

	*out_size = 0;
	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "UPDATE artifacts SET last_used = ?2 WHERE sha256 = ?1"
	    " RETURNING size");
	if ((ok = st != NULL)) {
		store_i_bind_text(st, 1, sha256);
		db_bind_int64(st, 2, now);
		if ((rc = db_step(st)) == DB_ROW)
			*out_size = db_col_int64(st, 0);
		else if (rc == DB_DONE)
			r = err_setc(&s->err, ERR_NOTFOUND,
			    "artifact %s is not stored", sha256);
		else
			ok = store_i_dberr(s, "artifact") == 0;
		store_i_release(s, st);
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_artifact_use(
    struct store *s, int64_t *out_size, const char *sha256, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, artifact_use_once(s, out_size, sha256, now));
	return rc;
}
