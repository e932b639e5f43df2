#ifndef STORE_SERIES_PACK_H
#define STORE_SERIES_PACK_H

/*
 * The git pack of an applied series (its commits over its base, as GET
 * /api/v1/packs serves them, daemon/packs.h), kept in the store when the
 * watcher applies the series: the series' commits exist only in the
 * watcher's mirror, and every perfwatchd on the database must be able
 * to hand them to a runner that claimed a job on one (a runner failing
 * over to another daemon, or the watcher moved to another one).  All
 * SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

struct store;

/* The migration step: SQLite's, then PostgreSQL's.  pack is NULL when
 * the series was larger than http.max_pack (bytes says how large); a
 * pack is read by its series' ref (series_ref). */
#define STORE_SERIES_PACK_TABLE(INT, BLOB)                      \
	"CREATE TABLE series_packs ("                           \
	"  series_id " INT " PRIMARY KEY REFERENCES series(id)" \
	"   ON DELETE CASCADE,"                                 \
	"  tip TEXT NOT NULL, commits " INT " NOT NULL,"        \
	"  bytes " INT " NOT NULL, pack " BLOB ");"             \
	"CREATE INDEX series_ref ON series(ref) WHERE ref IS NOT NULL;"
#define STORE_SERIES_PACK_MIGRATION STORE_SERIES_PACK_TABLE("INTEGER", "BLOB")
#define STORE_SERIES_PACK_MIGRATION_PG \
	STORE_SERIES_PACK_TABLE("BIGINT", "BYTEA")

/*
 * Keeps the pack of series id (tip: its last commit; commits of them in
 * pack, of len bytes; pack NULL: too large to keep, len its size).
 * 0, or -1 with store_errmsg().
 */
int store_series_pack_put(struct store *, int64_t series_id, const char *tip,
    size_t commits, const void *pack, size_t len);

/*
 * The kept pack of the series whose git ref is ref
 * ("refs/perfwatch/series/ID"): 0 with the pack appended to out (empty
 * when it was too large to keep: *out_bytes says how large it was) and
 * *out_commits set, ERR_NOTFOUND (none kept), ERR_TOOBIG (larger than
 * out's max), or -1.
 */
int store_series_pack_get(struct store *, struct buf *out, size_t *out_commits,
    size_t *out_bytes, const char *ref);

#endif
