#ifndef STORE_COUNTS_H
#define STORE_COUNTS_H

/*
 * The store's running counts (the overview's totals: runs, jobs and
 * regressions by state, the builds' figures), kept by triggers so that
 * no page counts a million rows.
 *
 * A count is the row of counts by its name plus the rows of
 * count_shards by that name; the view count_totals adds them up, and
 * every reader (and `perfwatch store check`) reads that.  SQLite's
 * triggers add to counts itself: one writer at a time holds the whole
 * file anyway.  PostgreSQL's add to a shard, a row of count_shards by
 * (name, shard) where shard is the adding connection's backend pid
 * modulo STORE_COUNT_SHARDS: one counts row updated by every upload and
 * claim would be locked by each writer until it commits, and every
 * other daemon's writer would wait for it there (two daemons stored
 * fewer uploads than one).  A connection's shard row is its own, as a
 * rule; two connections on one shard wait for each other only, never
 * for the rest.  The shards of one name are at most
 * STORE_COUNT_SHARDS rows, so reading a count stays a lookup.
 *
 * Both backends have both tables (perfwatch store copy copies them
 * as they are, each side's view summing what it holds).
 */
#define STORE_COUNTS_VERSION 40
#define STORE_COUNT_SHARDS 64
#define STORE_COUNT_SHARDS_S "64"

#define STORE_COUNTS_MIGRATION                                            \
	"CREATE TABLE count_shards (name TEXT NOT NULL, shard BIGINT NOT" \
	" NULL, n BIGINT NOT NULL, PRIMARY KEY (name, shard));"           \
	"CREATE VIEW count_totals AS SELECT counts.name AS name,"         \
	" CAST(counts.n + coalesce((SELECT sum(s.n) FROM count_shards s"  \
	" WHERE s.name = counts.name), 0) AS BIGINT) AS n FROM counts;"

/* PostgreSQL's triggers, each a function adding to its connection's
 * shard (count_shard_add). */
#define STORE_COUNTS_TRIGGER_PG(F, BODY)                               \
	"CREATE OR REPLACE FUNCTION " F "() RETURNS trigger LANGUAGE " \
	"plpgsql AS $$ BEGIN " BODY " RETURN NULL; END $$;"
#define STORE_COUNTS_STATE_PG(KIND)                                     \
	"IF OLD.state <> NEW.state THEN PERFORM count_shard_add('" KIND \
	".' || OLD.state, -1); PERFORM count_shard_add('" KIND ".' ||"  \
	" NEW.state, 1); END IF;"

#define STORE_COUNT_SHARD_ADD_PG                                            \
	"CREATE FUNCTION count_shard_add(k text, d bigint) RETURNS void"    \
	" LANGUAGE plpgsql AS $$ BEGIN INSERT INTO count_shards (name,"     \
	" shard, n) VALUES (k, pg_backend_pid() % " STORE_COUNT_SHARDS_S    \
	", d) ON CONFLICT (name, shard) DO UPDATE SET n = count_shards.n +" \
	" excluded.n; END $$;"

#endif
