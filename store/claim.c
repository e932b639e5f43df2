/*
 * The store: claims and leases.  A runner's claim picks the queued job
 * (or both jobs of a pair in rounds) its host may run, binds the pair to
 * the host and leases the job; heartbeats extend leases, and expired
 * ones are put back.  All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/rounds.h"
#include "common/xalloc.h"
#include "store/builds.h"
#include "store/claim.h"
#include "store/store_int.h"

/* ---- claim and leases ---- */

void
store_claimed_release(struct store_claimed *c)
{
	if (c == NULL)
		return;
	free(c->role);
	free(c->done_runs);
	free(c->instance);
	free(c->spec_json);
	free(c->image_json);
	if (c->partner != NULL) {
		store_claimed_release(c->partner);
		free(c->partner);
	}
	memset(c, 0, sizeof(*c));
}

/*
 * The image of a job linked to a shared build (docs/API.md, the bench
 * job's "kernel.image"): out->image_json, or NULL for another job.
 */
static int
claim_image(
    struct store *s, struct store_claimed *out, int64_t id, const char *inst)
{
	struct db_stmt *st;
	json_t *img = NULL, *files;
	int64_t build = 0;
	int rc;

	st = store_i_stmt(s,
	    "SELECT b.id, b.release, b.config_sha256 FROM jobs j"
	    " JOIN builds b ON b.id = j.build_id WHERE j.id = ?1");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	if ((rc = db_step(st)) == DB_ROW) {
		char bid[64];

		build = db_col_int64(st, 0);
		snprintf(
		    bid, sizeof(bid), "-pwb%lld-%s", (long long)build, inst);
		img = json_pack("{s:I, s:s, s:s?, s:s?, s:{}}", "build",
		    (json_int_t)build, "build_id", bid, "release",
		    store_i_col_text(st, 1), "config_sha256",
		    store_i_col_text(st, 2), "files");
	}
	store_i_release(s, st);
	if (rc != DB_ROW && rc != DB_DONE)
		return store_i_dberr(s, "claim image");
	if (build == 0)
		return 0;
	st = store_i_stmt(s,
	    "SELECT name, sha256, size FROM build_files"
	    " WHERE build_id = ?1 AND name <> 'build.log' ORDER BY name");
	if (st == NULL) {
		json_decref(img);
		return -1;
	}
	db_bind_int64(st, 1, build);
	files = json_object_get(img, "files");
	while ((rc = db_step(st)) == DB_ROW)
		json_object_set_new(files, store_i_col_text(st, 0),
		    json_pack("{s:s, s:I}", "sha256", store_i_col_text(st, 1),
		        "size", (json_int_t)db_col_int64(st, 2)));
	store_i_release(s, st);
	if (rc != DB_DONE) {
		json_decref(img);
		return store_i_dberr(s, "claim image files");
	}
	out->image_json = pwjson_dump(img);
	json_decref(img);
	return 0;
}

/* What the claim of job id hands the runner; called inside the claim
 * transaction. */
static int
claim_read(
    struct store *s, struct store_claimed *out, int64_t id, int64_t round)
{
	struct db_stmt *st;
	const char *inst;
	size_t cap = 0;

	st = store_i_stmt(s,
	    "SELECT params, pair_id, role, attempts, lease_expires,"
	    " coalesce(round_runs, runs), max_runs, round_runs IS NOT NULL"
	    " FROM jobs WHERE id = ?1");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	if (db_step(st) != DB_ROW) {
		store_i_release(s, st);
		return store_i_dberr(s, "claimed job");
	}
	out->job_id = id;
	out->spec_json = store_i_col_dup(st, 0);
	out->pair_id = db_col_int64(st, 1);
	out->role = store_i_col_dup(st, 2);
	out->attempt = db_col_int64(st, 3);
	out->lease_expires = db_col_int64(st, 4);
	out->runs = db_col_int64(st, 5);
	out->max_runs = db_col_int64(st, 6);
	/* The daemon alternates the pair's jobs round by round: this claim
	 * is one round (one boot of a kernel job). */
	out->round = db_col_int(st, 7) ? round : 0;
	store_i_release(s, st);

	st = store_i_stmt(
	    s, "SELECT idx FROM runs WHERE job_id = ?1 ORDER BY idx");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	while (db_step(st) == DB_ROW) {
		if (out->ndone == cap) {
			cap = cap ? cap * 2 : 8;
			out->done_runs = xreallocarray(
			    out->done_runs, cap, sizeof(*out->done_runs));
		}
		out->done_runs[out->ndone++] = db_col_int64(st, 0);
	}
	store_i_release(s, st);
	/* A kernel's build id is -pw<id>-<instance> (docs/KERNEL.md). */
	if (store_instance(s, &inst) != 0)
		return -1;
	out->instance = xstrdup(inst);
	return s->version < STORE_BUILDS_VERSION
	    ? 0
	    : claim_image(s, out, id, inst);
}

/*
 * Rounds (docs/CONFIG.md `rounds`: R > 1 in the job's spec): rounds of
 * common/rounds.h's size, the last cut at the job's runs; this claim runs
 * the round after the runs already stored, and the job is queued again
 * after it (store_finish), so the pair's other job gets the next turn.
 * Sets jobs.round_runs and *round (0 when the job has no rounds).
 */
static int
claim_round(struct store *s, int64_t *round, int64_t id)
{
	struct db_stmt *st;
	int64_t rounds = 1, runs = 0, done = 0, first, size, r, target = 0;
	int rc;

	*round = 0;
	st = store_i_stmt(s,
	    "SELECT coalesce(json_extract(params, '$.rounds'), 1), runs,"
	    " (SELECT count(*) FROM runs WHERE job_id = ?1),"
	    " coalesce(json_extract(params, '$.runs'), runs)"
	    " FROM jobs WHERE id = ?1");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	if (db_step(st) != DB_ROW) {
		store_i_release(s, st);
		return store_i_dberr(s, "claim round");
	}
	rounds = db_col_int64(st, 0);
	runs = db_col_int64(st, 1);
	done = db_col_int64(st, 2);
	first = db_col_int64(st, 3);
	store_i_release(s, st);
	if ((size = rounds_size(first, rounds)) > 0 && runs > 0) {
		r = done / size + 1;
		target = r * size < runs ? r * size : runs;
		*round = r;
	}
	st = store_i_stmt(s, "UPDATE jobs SET round_runs = ?2 WHERE id = ?1");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	if (*round > 0)
		db_bind_int64(st, 2, target);
	else
		db_bind_null(st, 2);
	rc = store_i_step_done(s, st, "claim round");
	store_i_release(s, st);
	return rc;
}

/* The host may run the queued job j of pair p (h: the host's row). */
#define CLAIM_HOST_FITS                                        \
	" AND (h.quarantined IS NULL OR p.canary <> 0)"        \
	" AND (json_array_length(j.labels) = 0 OR EXISTS"      \
	"  (SELECT 1 FROM json_each(j.labels) jl,"             \
	"   json_each(h.labels) hl WHERE jl.value = hl.value)" \
	"  OR EXISTS (SELECT 1 FROM json_each(j.labels) jn"    \
	"   WHERE jn.value = h.name))"

/*
 * Shared builds (store v36): a job linked to a build waits until the
 * build succeeded, and a runner that may not build (?3 = 1) takes no
 * kernel job it would have to build itself.
 */
#define CLAIM_BUILD_FITS                                             \
	" AND (j.build_id IS NULL OR EXISTS (SELECT 1 FROM builds b" \
	"  WHERE b.id = j.build_id AND b.state = 'success'))"        \
	" AND (?3 = 0 OR j.build_id IS NOT NULL"                     \
	"  OR json_type(j.params, '$.kernel') IS NULL)"

/* A queued job of pair p that the host (h: its row) may run. */
#define CLAIM_PAIR_FITS                                            \
	" AND EXISTS (SELECT 1 FROM jobs j WHERE j.pair_id = p.id" \
	"  AND j.state = 'queued'" CLAIM_HOST_FITS ")"
#define CLAIM_PAIR_FITS_B                                          \
	" AND EXISTS (SELECT 1 FROM jobs j WHERE j.pair_id = p.id" \
	"  AND j.state = 'queued'" CLAIM_HOST_FITS CLAIM_BUILD_FITS ")"

/* The columns claim_side reads, of jobs j. */
#define CLAIM_SIDE_COLS                                         \
	"SELECT j.id, j.role = 'base',"                         \
	" (SELECT count(*) FROM runs r WHERE r.job_id = j.id)," \
	" coalesce(json_extract(j.params, '$.rounds'), 1),"     \
	" coalesce(json_extract(j.params, '$.runs'), j.runs), j.pair_id"

/*
 * Steps st's rows, a pair's jobs (id, is the base, runs stored, rounds,
 * runs, pair; the base first), and sets *out to the one a claim takes
 * first: the base, else the only one; in rounds, the side behind
 * catches up, and when both have the same runs rounds_base_first orders
 * the round.  *n: the rows read (at most 2).  The last db_step's code.
 */
static int
claim_side(struct db_stmt *st, int64_t *out, int *n)
{
	int64_t id[2], done[2], size = 0, pair = 0;
	int base[2], k = 0, rc = DB_DONE;

	while (k < 2 && (rc = db_step(st)) == DB_ROW) {
		id[k] = db_col_int64(st, 0);
		base[k] = db_col_int(st, 1);
		done[k] = db_col_int64(st, 2);
		size = rounds_size(db_col_int64(st, 4), db_col_int64(st, 3));
		pair = db_col_int64(st, 5);
		k++;
	}
	*n = k;
	if (k > 0)
		*out = id[0];
	if (k == 2 && size > 0) {
		if (done[0] != done[1])
			*out = id[done[1] < done[0]];
		else if (rounds_base_first(pair, done[0] / size) != base[0])
			*out = id[1];
	}
	return rc;
}

/*
 * The queued job host_id claims next: the pairs bound to it first, then
 * the unbound ones; superseded pairs (trigger.coalesce) after the rest;
 * older pairs first; within a pair run in rounds, the job with fewer
 * runs first, and with as many the side rounds_base_first names (a
 * balanced order, common/rounds.h), else the base.
 *
 * One ORDER BY over every queued job said the same, but sorted the
 * whole queue on every claim, under the write lock (8,000 queued jobs:
 * 19 ms a claim, and 200 runners' claims p99 1.7 s, make bench-fleet).
 * So the pair comes first, in stages that each read the partial index
 * pairs_queued (host_id, superseded, id) of the pairs with a queued job
 * (store v25) in their order and stop at the first fit: bound to this
 * host, unbound and current (the first queued pair, as a rule),
 * unbound and superseded; then the job within that pair (at most its
 * two).  A host with nothing bound to it reads no index entry in the
 * first stage (it read the whole queue's jobs_queued before v25).
 */
static int
claim_pick(
    struct store *s, int64_t *out, int *found, int64_t host_id, int nobuild)
{
	/*
	 * A connection opened at an older schema (tests) has no
	 * pairs.queued: the EXISTS in CLAIM_PAIR_FITS alone picks the same
	 * pair, reading every pair.
	 */
#define CLAIM_STAGES(QUEUED, FITS, LOCK)                                 \
	{                                                                \
		"SELECT p.id FROM pairs p JOIN hosts h ON h.id = ?1"     \
		" WHERE " QUEUED " AND p.host_id = ?1" FITS              \
		" ORDER BY p.superseded, p.id LIMIT 1" LOCK,             \
		    "SELECT p.id FROM pairs p JOIN hosts h ON h.id = ?1" \
		    " WHERE " QUEUED " AND p.host_id IS NULL"            \
		    " AND p.superseded = 0" FITS                         \
		    " ORDER BY p.id LIMIT 1" LOCK,                       \
		    "SELECT p.id FROM pairs p JOIN hosts h ON h.id = ?1" \
		    " WHERE " QUEUED " AND p.host_id IS NULL"            \
		    " AND p.superseded > 0" FITS                         \
		    " ORDER BY p.superseded, p.id LIMIT 1" LOCK,         \
	}
	/*
	 * PostgreSQL: the pair picked is locked until the claim commits,
	 * and a pair another claim holds is passed over (SKIP LOCKED), so
	 * claims through several daemons take different pairs at once
	 * rather than each waiting on the first's job rows to find them
	 * taken.  NO KEY UPDATE: what the claim's own updates of the pair
	 * take; a job inserted for the pair (a submit) is not kept
	 * waiting.  claim_lease still takes a job only while it is queued:
	 * another writer (a requeue, a cancel) changes jobs without the
	 * pair's lock.
	 */
	static const char *const stages[4][3] = {
		CLAIM_STAGES("p.queued > 0", CLAIM_PAIR_FITS_B, ""),
		CLAIM_STAGES("p.queued > 0", CLAIM_PAIR_FITS, ""),
		CLAIM_STAGES("1", CLAIM_PAIR_FITS, ""),
		CLAIM_STAGES("p.queued > 0", CLAIM_PAIR_FITS_B,
		    " FOR NO KEY UPDATE OF p SKIP LOCKED"),
	};
#undef CLAIM_STAGES
	int builds = s->version >= STORE_BUILDS_VERSION;
	int pg = builds && db_backend(s->db) == DB_PG;
	const char *const *stage = stages[pg ? 3
	        : builds                     ? 0
	        : s->version < 25            ? 2
	                                     : 1];
#define CLAIM_JOB_SQL(FITS)                                                 \
	CLAIM_SIDE_COLS                                                     \
	" FROM jobs j JOIN pairs p ON p.id = j.pair_id"                     \
	" JOIN hosts h ON h.id = ?1"                                        \
	" WHERE j.pair_id = ?2 AND j.state = 'queued'" CLAIM_HOST_FITS FITS \
	" ORDER BY j.role <> 'base', j.id LIMIT 2"
	static const char job_sql_b[] = CLAIM_JOB_SQL(CLAIM_BUILD_FITS);
	static const char job_sql_old[] = CLAIM_JOB_SQL("");
#undef CLAIM_JOB_SQL
	const char *job_sql = builds ? job_sql_b : job_sql_old;
	struct db_stmt *st;
	int64_t pair = 0;
	size_t i;
	int rc;

	*found = 0;
	for (i = 0; pair == 0 && i < sizeof(stages[0]) / sizeof(stages[0][0]);
	     i++) {
		if ((st = store_i_stmt(s, stage[i])) == NULL)
			return -1;
		db_bind_int64(st, 1, host_id);
		if (builds)
			db_bind_int64(st, 3, nobuild);
		rc = db_step(st);
		if (rc == DB_ROW)
			pair = db_col_int64(st, 0);
		store_i_count_steps(s, st);
		store_i_release(s, st);
		if (rc != DB_ROW && rc != DB_DONE)
			return store_i_dberr(s, "claim select");
	}
	if (pair == 0)
		return 0;
	if ((st = store_i_stmt(s, job_sql)) == NULL)
		return -1;
	db_bind_int64(st, 1, host_id);
	db_bind_int64(st, 2, pair);
	if (builds)
		db_bind_int64(st, 3, nobuild);
	{
		int k = 0;

		rc = claim_side(st, out, &k);
		if (k > 0) {
			*found = 1;
			rc = DB_DONE;
		}
	}
	store_i_count_steps(s, st);
	store_i_release(s, st);
	if (rc != DB_ROW && rc != DB_DONE)
		return store_i_dberr(s, "claim select");
	return 0;
}

/*
 * The job of a pair claim that goes with job id (store_claim_pair), or
 * 0: its pair's other job, when the pair runs in rounds, is no kernel
 * job, and the other job is queued and may run on the host, or held by
 * it already (a restarted runner).  *size: the runs a side a round.
 */
static int
claim_partner(
    struct store *s, int64_t *out, int64_t *size, int64_t id, int64_t host_id)
{
	struct db_stmt *st;
	int rc;

	*out = 0;
	*size = 0;
	st = store_i_stmt(s,
	    "SELECT j.id, coalesce(json_extract(c.params, '$.rounds'), 1),"
	    " coalesce(json_extract(c.params, '$.runs'), c.runs)"
	    " FROM jobs c JOIN jobs j ON j.pair_id = c.pair_id AND j.id <> c.id"
	    " JOIN pairs p ON p.id = c.pair_id JOIN hosts h ON h.id = ?2"
	    " WHERE c.id = ?1"
	    " AND coalesce(json_extract(c.params, '$.rounds'), 1) > 1"
	    " AND json_type(c.params, '$.kernel') IS NULL"
	    " AND json_type(j.params, '$.kernel') IS NULL"
	    " AND ((j.state = 'queued'" CLAIM_HOST_FITS ")"
	    "  OR (j.state = 'running' AND j.lease_owner = ?2))"
	    " LIMIT 1");
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	db_bind_int64(st, 2, host_id);
	if ((rc = db_step(st)) == DB_ROW) {
		*out = db_col_int64(st, 0);
		*size = rounds_size(db_col_int64(st, 2), db_col_int64(st, 1));
	}
	store_i_release(s, st);
	if (rc != DB_ROW && rc != DB_DONE)
		return store_i_dberr(s, "claim partner");
	return 0;
}

/* Picks of a claim that other perfwatchd took first, in one
 * transaction, before it gives up as a lost race (claim_tx retries). */
#define CLAIM_PICKS 32

/*
 * Job id leased to host_id until now + lease_s, as a claim does, if it
 * is still queued or this host's.  Another perfwatchd on the database
 * may have leased it since this one read it (PostgreSQL's writes do not
 * exclude each other's reads): then nothing is leased, and the claim
 * lost a race (ERR_CONFLICT, lost_race set), never handing one job to
 * two runners.  The lease keeps claim_id (NULL: none); a job this host
 * holds under the same claim id is the repeat of a claim whose answer
 * was lost, and counts no attempt.
 */
static int
claim_lease(struct store *s, int64_t id, int64_t host_id, int64_t now,
    int64_t lease_s, const char *claim_id)
{
	int keyed = s->version >= STORE_CLAIM_ID_VERSION;
	struct db_stmt *st = store_i_stmt(s,
	    keyed ? "UPDATE jobs SET state = 'running', host_id = ?2,"
	            " lease_owner = ?2, lease_expires = ?3,"
	            " attempts = attempts + CASE WHEN state = 'running'"
	            " AND lease_owner = ?2 AND lease_claim = ?5 THEN 0 ELSE 1"
	            " END, lease_claim = ?5, progress = NULL, updated = ?4"
	            " WHERE id = ?1 AND (state = 'queued' OR (state ="
	            " 'running' AND lease_owner = ?2))"
	          : "UPDATE jobs SET state = 'running', host_id = ?2,"
	            " lease_owner = ?2, lease_expires = ?3,"
	            " attempts = attempts + 1, progress = NULL, updated = ?4"
	            " WHERE id = ?1 AND (state = 'queued' OR (state ="
	            " 'running' AND lease_owner = ?2))");
	int rc;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	db_bind_int64(st, 2, host_id);
	db_bind_int64(st, 3, now + lease_s);
	db_bind_int64(st, 4, now);
	if (keyed)
		store_i_bind_text(st, 5, claim_id);
	rc = store_i_step_done(s, st, "claim update");
	store_i_release(s, st);
	if (rc == 0 && db_changes(s->db) != 1) {
		s->lost_race = 1;
		return err_setc(&s->err, ERR_CONFLICT,
		    "job %lld was claimed by another perfwatchd meanwhile",
		    (long long)id);
	}
	return rc;
}

/*
 * The job host_id holds (a restarted runner's, or one leased for a claim
 * whose answer was lost), the one leased for claim_id first: *id, 0 for
 * none, and *repeated when it was leased for claim_id.
 */
static int
claim_held(struct store *s, int64_t *id, int *repeated, int64_t host_id,
    const char *claim_id)
{
	int keyed = s->version >= STORE_CLAIM_ID_VERSION;
	struct db_stmt *st = store_i_stmt(s,
	    keyed ? "SELECT j.id, CASE WHEN j.lease_claim = ?2 THEN 1 ELSE 0"
	            " END FROM jobs j WHERE j.state = 'running'"
	            " AND j.lease_owner = ?1 ORDER BY 2 DESC, j.id LIMIT 1"
	          : "SELECT j.id, 0 FROM jobs j WHERE j.state = 'running'"
	            " AND j.lease_owner = ?1 ORDER BY j.id LIMIT 1");
	int rc;

	*id = 0;
	*repeated = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, host_id);
	if (keyed)
		store_i_bind_text(st, 2, claim_id);
	if ((rc = db_step(st)) == DB_ROW) {
		*id = db_col_int64(st, 0);
		*repeated = claim_id != NULL && db_col_int(st, 1) != 0;
	}
	store_i_release(s, st);
	if (rc != DB_ROW && rc != DB_DONE)
		return store_i_dberr(s, "claim held");
	return 0;
}

/* A pair claim's jobs end at their runs: no round_runs. */
static int
claim_whole(struct store *s, int64_t id)
{
	struct db_stmt *st =
	    store_i_stmt(s, "UPDATE jobs SET round_runs = NULL WHERE id = ?1");
	int rc;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, id);
	rc = store_i_step_done(s, st, "claim whole");
	store_i_release(s, st);
	return rc;
}

/*
 * A pair claim repeated (the same claim id) gets its two jobs back as
 * the claim first handed them: *id the one claim_pick took, *partner
 * the other.  Nothing was stored for either since, so the same rule
 * picks the same job.
 */
static int
claim_repeat_order(struct store *s, int64_t *id, int64_t *partner)
{
	struct db_stmt *st = store_i_stmt(s,
	    CLAIM_SIDE_COLS " FROM jobs j WHERE j.id IN (?1, ?2)"
	                    " ORDER BY j.role <> 'base', j.id");
	int64_t first = *id;
	int rc, k = 0;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, *id);
	db_bind_int64(st, 2, *partner);
	rc = claim_side(st, &first, &k);
	store_i_release(s, st);
	if (rc != DB_ROW && rc != DB_DONE)
		return store_i_dberr(s, "claim repeated");
	if (k == 2 && first != *id) {
		*partner = *id;
		*id = first;
	}
	return 0;
}

static int
claim_once(struct store *s, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s, int pairs, int nobuild, const char *claim_id)
{
	struct db_stmt *st;
	int64_t id = 0, round = 0, partner = 0, size = 0;
	int rc, ok = 1, found = 0, held = 0, repeated = 0, tries;

	memset(out, 0, sizeof(*out));
	if (store_i_tx_begin_as(s, 1) == -1)
		return -1;
	/* A job this host still holds: its runner restarted and lost it,
	 * or the answer to the claim that leased it was lost. */
	ok = claim_held(s, &id, &repeated, host_id, claim_id) == 0;
	found = held = ok && id != 0;
	if (ok && !found)
		ok = claim_pick(s, &id, &found, host_id, nobuild) == 0;
	/* A job another perfwatchd leased meanwhile: its commit is seen
	 * by the next statement (PostgreSQL reads what is committed by
	 * each statement's start), so pick again, in this transaction. */
	for (tries = 0; ok && found && !held && tries < CLAIM_PICKS; tries++) {
		if ((rc = claim_lease(
		         s, id, host_id, now, lease_s, claim_id)) == 0)
			break;
		if (rc != ERR_CONFLICT || tries + 1 == CLAIM_PICKS) {
			ok = 0;
			break;
		}
		err_clear(&s->err);
		s->lost_race = 0;
		ok = claim_pick(s, &id, &found, host_id, nobuild) == 0;
	}
	if (ok && found && pairs)
		ok = claim_partner(s, &partner, &size, id, host_id) == 0;
	if (ok && repeated && partner != 0)
		ok = claim_repeat_order(s, &id, &partner) == 0;
	if (ok && found) {
		if (held)
			ok = claim_lease(
			         s, id, host_id, now, lease_s, claim_id) == 0;
		if (ok && partner != 0)
			ok = claim_lease(s, partner, host_id, now, lease_s,
			         claim_id) == 0;
		if (ok) {
			st = store_i_stmt(s,
			    "UPDATE pairs SET host_id = ?2 WHERE id ="
			    " (SELECT pair_id FROM jobs WHERE id = ?1)");
			ok = st != NULL;
			if (ok) {
				db_bind_int64(st, 1, id);
				db_bind_int64(st, 2, host_id);
				ok = store_i_step_done(s, st, "bind pair") == 0;
				store_i_release(s, st);
			}
		}
		if (ok) {
			/*
			 * The unbound pairs of its sibling group (the points
			 * of one candidate that differ only in the cgroup,
			 * store/hosts.h) go to the same host, so the memcg
			 * tax divides nested by root runs of one machine.
			 */
			st = store_i_stmt(s,
			    "UPDATE pairs SET host_id = ?2 WHERE host_id IS "
			    "NULL AND pinned = 0 AND sib_group = (SELECT"
			    " q.sib_group FROM pairs q JOIN jobs j"
			    " ON j.pair_id = q.id WHERE j.id = ?1)");
			ok = st != NULL;
			if (ok) {
				db_bind_int64(st, 1, id);
				db_bind_int64(st, 2, host_id);
				ok = store_i_step_done(
				         s, st, "bind siblings") == 0;
				store_i_release(s, st);
			}
		}
		if (partner != 0) {
			ok = ok && claim_whole(s, id) == 0 &&
			    claim_whole(s, partner) == 0;
			ok = ok && claim_read(s, out, id, 0) == 0;
			if (ok) {
				out->partner =
				    xcalloc(1, sizeof(*out->partner));
				out->round_size = size;
				ok = claim_read(s, out->partner, partner, 0) ==
				    0;
			}
		} else {
			ok = ok && claim_round(s, &round, id) == 0;
			ok = ok && claim_read(s, out, id, round) == 0;
		}
	}
	if (store_i_tx_end(s, ok) == -1) {
		store_claimed_release(out);
		return -1;
	}
	if (!found)
		return ERR_NOTFOUND;
	out->repeated = repeated;
	return 0;
}

/* A claim that lost to another daemon's runs again. */
static int
claim_tx(struct store *s, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s, int pairs, int nobuild, const char *claim_id)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    claim_once(
	        s, out, host_id, now, lease_s, pairs, nobuild, claim_id));
	return rc;
}

int
store_claim(struct store *s, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s)
{
	return claim_tx(s, out, host_id, now, lease_s, 0, 0, NULL);
}

int
store_claim_pair(struct store *s, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s)
{
	return claim_tx(s, out, host_id, now, lease_s, 1, 0, NULL);
}

int
store_claim_as(struct store *s, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s, int pairs, int builds, const char *claim_id)
{
	return claim_tx(
	    s, out, host_id, now, lease_s, pairs, !builds, claim_id);
}

static int
requeue_expired_once(struct store *s, int64_t now, int *out_n)
{
	struct db_stmt *sel, *st;
	int ok, n = 0, rc;

	if (out_n)
		*out_n = 0;
	if (store_i_tx_begin(s) == -1)
		return -1;
	sel = store_i_stmt(s,
	    "SELECT j.id, j.attempts, j.max_attempts, j.pair_id,"
	    " (SELECT count(*) FROM jobs o WHERE o.pair_id = j.pair_id"
	    "   AND o.id <> j.id AND (o.state = 'running' OR EXISTS"
	    "   (SELECT 1 FROM runs r WHERE r.job_id = o.id)))"
	    " + (SELECT count(*) FROM pairs p WHERE p.id = j.pair_id"
	    "   AND p.pinned <> 0)"
	    " FROM jobs j WHERE j.state = 'running' AND j.lease_expires < ?1");
	ok = sel != NULL;
	if (ok)
		db_bind_int64(sel, 1, now);
	while (ok && (rc = db_step(sel)) == DB_ROW) {
		int64_t id = db_col_int64(sel, 0);
		int64_t att = db_col_int64(sel, 1);
		int64_t max = db_col_int64(sel, 2);
		int64_t pair = db_col_int64(sel, 3);
		int64_t partner_busy = db_col_int64(sel, 4);

		n++;
		if (att >= max) {
			char msg[64];

			snprintf(msg, sizeof(msg), "lease expired %lld times",
			    (long long)att);
			st = store_i_stmt(s,
			    "UPDATE jobs SET state = 'failed', error = ?2,"
			    " lease_owner = NULL, lease_expires = NULL,"
			    " updated = ?3 WHERE id = ?1");
			if ((ok = st != NULL)) {
				db_bind_int64(st, 1, id);
				store_i_bind_text(st, 2, msg);
				db_bind_int64(st, 3, now);
				ok = store_i_step_done(s, st, "fail job") == 0;
				store_i_release(s, st);
			}
			continue;
		}
		st = store_i_stmt(s,
		    "UPDATE jobs SET state = 'queued', lease_owner = NULL,"
		    " lease_expires = NULL, progress = NULL, updated = ?2"
		    " WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, id);
			db_bind_int64(st, 2, now);
			ok = store_i_step_done(s, st, "requeue job") == 0;
			store_i_release(s, st);
		}
		if (!ok || partner_busy)
			continue;
		/* Nothing ties the pair to that host any more: release it
		 * and drop what the dead host measured for this job, since
		 * both sides of a pair must come from one host. */
		st = store_i_stmt(
		    s, "UPDATE pairs SET host_id = NULL WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, pair);
			ok = store_i_step_done(s, st, "release pair") == 0;
			store_i_release(s, st);
		}
		/* Siblings bound with it that have not started go too. */
		st = ok ? store_i_stmt(s,
		              "UPDATE pairs SET host_id = NULL WHERE pinned = 0"
		              " AND host_id IS NOT NULL AND sib_group ="
		              " (SELECT sib_group FROM pairs WHERE id = ?1)"
		              " AND NOT EXISTS (SELECT 1 FROM jobs j"
		              "  WHERE j.pair_id = pairs.id AND (j.state <> "
		              "'queued'"
		              "  OR EXISTS (SELECT 1 FROM runs r"
		              "   WHERE r.job_id = j.id)))")
		        : NULL;
		if (ok && (ok = st != NULL)) {
			db_bind_int64(st, 1, pair);
			ok = store_i_step_done(s, st, "release siblings") == 0;
			store_i_release(s, st);
		}
		st = ok ? store_i_stmt(s, "DELETE FROM runs WHERE job_id = ?1")
		        : NULL;
		if (ok && (ok = st != NULL)) {
			db_bind_int64(st, 1, id);
			ok = store_i_step_done(s, st, "discard runs") == 0;
			store_i_release(s, st);
		}
	}
	if (ok && rc != DB_DONE)
		ok = store_i_dberr(s, "expired leases") == 0;
	store_i_release(s, sel);
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_n)
		*out_n = n;
	return 0;
}

int
store_requeue_expired(struct store *s, int64_t now, int *out_n)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, requeue_expired_once(s, now, out_n));
	return rc;
}

/*
 * Loads what a runner call needs about a job, inside a transaction:
 * 0, ERR_NOTFOUND, or ERR_CONFLICT when host does not hold its lease
 * (host_id 0 skips that check).
 */
int
store_i_job_lease(struct store *s, int64_t *out_max_runs, int64_t *out_attempt,
    int64_t job_id, int64_t host_id)
{
	struct db_stmt *st = store_i_cached(s, S_JOB_LEASE,
	    "SELECT state, lease_owner, max_runs, attempts FROM jobs"
	    " WHERE id = ?1");
	const char *state;
	int64_t owner;
	int r = 0;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, job_id);
	if (db_step(st) != DB_ROW) {
		db_reset(st);
		return err_setc(&s->err, ERR_NOTFOUND, "job %lld not found",
		    (long long)job_id);
	}
	state = store_i_col_text(st, 0);
	owner = db_col_int64(st, 1);
	if (out_max_runs)
		*out_max_runs = db_col_int64(st, 2);
	if (out_attempt)
		*out_attempt = db_col_int64(st, 3);
	if (host_id != 0 && (strcmp(state, "running") != 0 || owner != host_id))
		r = err_setc(&s->err, ERR_CONFLICT,
		    "job %lld is %s and not leased to this runner",
		    (long long)job_id, state);
	db_reset(st);
	return r;
}

static int
heartbeat_once(struct store *s, int64_t *out_expires, int64_t *out_runs,
    int64_t host_id, int64_t job_id, const char *progress, int64_t now,
    int64_t lease_s)
{
	struct db_stmt *st;
	int64_t q;
	int r = 0, ok = 1;

	if (store_i_tx_begin_as(s, 1) == -1)
		return -1;
	/* What it writes does not move the store's generation. */
	q = store_i_quiet_begin(s);
	st = store_i_cached(
	    s, S_HOST_SEEN, "UPDATE hosts SET last_seen = ?2 WHERE id = ?1");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, host_id);
		db_bind_int64(st, 2, now);
		ok = store_i_step_done(s, st, "host seen") == 0;
		db_reset(st);
	}
	if (ok && job_id != 0) {
		r = store_i_job_lease(s, NULL, NULL, job_id, host_id);
		ok = r != -1;
	}
	if (ok && job_id != 0 && r == 0) {
		st = store_i_cached(s, S_HEARTBEAT,
		    "UPDATE jobs SET lease_expires = ?2,"
		    " progress = coalesce(?3, progress), updated = ?4"
		    " WHERE id = ?1 RETURNING lease_expires,"
		    " coalesce(round_runs, runs)");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, job_id);
			db_bind_int64(st, 2, now + lease_s);
			store_i_bind_text(st, 3, progress);
			db_bind_int64(st, 4, now);
			if (db_step(st) == DB_ROW) {
				*out_expires = db_col_int64(st, 0);
				*out_runs = db_col_int64(st, 1);
			} else {
				ok = store_i_dberr(s, "heartbeat") == 0;
			}
			db_reset(st);
		}
	}
	store_i_quiet_end(s, q);
	/* A lost lease still commits last_seen. */
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_heartbeat(struct store *s, int64_t *out_expires, int64_t *out_runs,
    int64_t host_id, int64_t job_id, const char *progress, int64_t now,
    int64_t lease_s)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    heartbeat_once(s, out_expires, out_runs, host_id, job_id, progress,
	        now, lease_s));
	return rc;
}
