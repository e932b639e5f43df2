/*
 * The store: hosts, pairs and jobs, claims and leases, runs, logs and the job
 * API rows. All SQL is in store/ (docs/ARCHITECTURE.md).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "common/rounds.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "store/alerts.h"
#include "store/bisect.h"
#include "store/store.h"
#include "store/store_int.h"

/* ---- hosts ---- */

int
store_host_register(struct store *s, int64_t *out_id, const char *name,
    const char *labels_json, const char *inventory_json, int64_t now)
{
	sqlite3_stmt *st;
	int ok = 0;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO hosts (name, labels, inventory, registered,"
	    " last_seen) VALUES (?1, json(?2), json(?3), ?4, ?4)"
	    " ON CONFLICT (name) DO UPDATE SET labels = excluded.labels,"
	    " inventory = excluded.inventory, registered = excluded.registered,"
	    " last_seen = excluded.last_seen RETURNING id");
	if (st != NULL) {
		store_i_bind_text(st, 1, name);
		store_i_bind_text(st, 2, labels_json);
		store_i_bind_text(st, 3, inventory_json);
		sqlite3_bind_int64(st, 4, now);
		if (sqlite3_step(st) == SQLITE_ROW) {
			*out_id = sqlite3_column_int64(st, 0);
			ok = 1;
		} else {
			store_i_dberr(s, "register host");
		}
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_host_id(struct store *s, int64_t *out_id, const char *name)
{
	sqlite3_stmt *st = store_i_cached(
	    s, S_HOST_ID, "SELECT id FROM hosts WHERE name = ?1");
	int r = ERR_NOTFOUND;

	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, name);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*out_id = sqlite3_column_int64(st, 0);
		r = 0;
	} else {
		err_set(&s->err, "host '%s' is not registered", name);
	}
	sqlite3_reset(st);
	return r;
}

int
store_host_seen(struct store *s, int64_t host_id, int64_t now)
{
	sqlite3_stmt *st;
	int64_t q;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	q = store_i_quiet_begin(s);
	st = store_i_cached(
	    s, S_HOST_SEEN, "UPDATE hosts SET last_seen = ?2 WHERE id = ?1");
	ok = st != NULL;
	if (ok) {
		sqlite3_bind_int64(st, 1, host_id);
		sqlite3_bind_int64(st, 2, now);
		ok = store_i_step_done(s, st, "host seen") == 0;
		sqlite3_reset(st);
	}
	store_i_quiet_end(s, q);
	return store_i_tx_end(s, ok);
}

/* ---- pairs ---- */

int
store_i_job_insert(struct store *s, int64_t *out, int64_t pair,
    const char *name, const char *point, const struct store_job_new *j,
    int64_t now)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "INSERT INTO jobs (pair_id, role, name, point, params, labels,"
	    " max_attempts, runs, max_runs, created, updated, commit_id)"
	    " VALUES (?1, ?2, ?3, ?4, json(?5), json(?6), ?7, ?8, ?9, ?10,"
	    " ?10, ?11)");
	int r = -1;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair);
	store_i_bind_text(st, 2, j->role);
	store_i_bind_text(st, 3, name);
	store_i_bind_text(st, 4, point ? point : "");
	store_i_bind_text(st, 5, j->spec_json);
	store_i_bind_text(st, 6, j->labels_json ? j->labels_json : "[]");
	sqlite3_bind_int64(st, 7, j->max_attempts);
	sqlite3_bind_int64(st, 8, j->runs);
	sqlite3_bind_int64(st, 9, j->max_runs);
	sqlite3_bind_int64(st, 10, now);
	if (j->commit_id > 0)
		sqlite3_bind_int64(st, 11, j->commit_id);
	if (sqlite3_step(st) == SQLITE_DONE) {
		*out = sqlite3_last_insert_rowid(s->db);
		r = 0;
	} else {
		store_i_dberr(s, "insert job");
	}
	store_i_release(s, st);
	return r;
}

/* Records which jobs are the pair's base and candidate. */
int
store_i_pair_sides(struct store *s, int64_t pair, int64_t base, int64_t cand)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "UPDATE pairs SET base_job_id = ?2, cand_job_id = ?3"
	    " WHERE id = ?1");
	int r;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair);
	sqlite3_bind_int64(st, 2, base);
	sqlite3_bind_int64(st, 3, cand);
	r = store_i_step_done(s, st, "pair sides");
	store_i_release(s, st);
	return r;
}

int
store_pair_create(struct store *s, int64_t *out_pair, int64_t *out_base,
    int64_t *out_cand, const char *name, const char *point,
    const struct store_job_new *base, const struct store_job_new *cand,
    int64_t now)
{
	sqlite3_stmt *st;
	int64_t pair = 0, b = 0, c = 0;
	int ok = 0;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(
	    s, "INSERT INTO pairs (name, point, created) VALUES (?1, ?2, ?3)");
	if (st != NULL) {
		store_i_bind_text(st, 1, name);
		store_i_bind_text(st, 2, point ? point : "");
		sqlite3_bind_int64(st, 3, now);
		if (sqlite3_step(st) == SQLITE_DONE) {
			pair = sqlite3_last_insert_rowid(s->db);
			ok = 1;
		} else {
			store_i_dberr(s, "insert pair");
		}
		store_i_release(s, st);
	}
	ok = ok &&
	    store_i_job_insert(s, &b, pair, name, point, base, now) == 0 &&
	    store_i_job_insert(s, &c, pair, name, point, cand, now) == 0 &&
	    store_i_pair_sides(s, pair, b, c) == 0 &&
	    store_i_group_assign(s, pair) == 0;
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_pair)
		*out_pair = pair;
	if (out_base)
		*out_base = b;
	if (out_cand)
		*out_cand = c;
	return 0;
}

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
	if (c->partner != NULL) {
		store_claimed_release(c->partner);
		free(c->partner);
	}
	memset(c, 0, sizeof(*c));
}

/* What the claim of job id hands the runner; called inside the claim
 * transaction. */
static int
claim_read(
    struct store *s, struct store_claimed *out, int64_t id, int64_t round)
{
	sqlite3_stmt *st;
	const char *inst;
	size_t cap = 0;

	st = store_i_stmt(s,
	    "SELECT params, pair_id, role, attempts, lease_expires,"
	    " coalesce(round_runs, runs), max_runs, round_runs IS NOT NULL"
	    " FROM jobs WHERE id = ?1");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		store_i_release(s, st);
		return store_i_dberr(s, "claimed job");
	}
	out->job_id = id;
	out->spec_json = store_i_col_dup(st, 0);
	out->pair_id = sqlite3_column_int64(st, 1);
	out->role = store_i_col_dup(st, 2);
	out->attempt = sqlite3_column_int64(st, 3);
	out->lease_expires = sqlite3_column_int64(st, 4);
	out->runs = sqlite3_column_int64(st, 5);
	out->max_runs = sqlite3_column_int64(st, 6);
	/* The daemon alternates the pair's jobs round by round: this claim
	 * is one round (one boot of a kernel job). */
	out->round = sqlite3_column_int(st, 7) ? round : 0;
	store_i_release(s, st);

	st = store_i_stmt(
	    s, "SELECT idx FROM runs WHERE job_id = ?1 ORDER BY idx");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (out->ndone == cap) {
			cap = cap ? cap * 2 : 8;
			out->done_runs = xreallocarray(
			    out->done_runs, cap, sizeof(*out->done_runs));
		}
		out->done_runs[out->ndone++] = sqlite3_column_int64(st, 0);
	}
	store_i_release(s, st);
	/* A kernel's build id is -pw<id>-<instance> (docs/KERNEL.md). */
	if (store_instance(s, &inst) != 0)
		return -1;
	out->instance = xstrdup(inst);
	return 0;
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
	sqlite3_stmt *st;
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
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		store_i_release(s, st);
		return store_i_dberr(s, "claim round");
	}
	rounds = sqlite3_column_int64(st, 0);
	runs = sqlite3_column_int64(st, 1);
	done = sqlite3_column_int64(st, 2);
	first = sqlite3_column_int64(st, 3);
	store_i_release(s, st);
	if ((size = rounds_size(first, rounds)) > 0 && runs > 0) {
		r = done / size + 1;
		target = r * size < runs ? r * size : runs;
		*round = r;
	}
	st = store_i_stmt(s, "UPDATE jobs SET round_runs = ?2 WHERE id = ?1");
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (*round > 0)
		sqlite3_bind_int64(st, 2, target);
	else
		sqlite3_bind_null(st, 2);
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

/* A queued job of pair p that the host (h: its row) may run. */
#define CLAIM_PAIR_FITS                                            \
	" AND EXISTS (SELECT 1 FROM jobs j WHERE j.pair_id = p.id" \
	"  AND j.state = 'queued'" CLAIM_HOST_FITS ")"

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
claim_pick(struct store *s, int64_t *out, int *found, int64_t host_id)
{
	/*
	 * A connection opened at an older schema (tests) has no
	 * pairs.queued: the EXISTS in CLAIM_PAIR_FITS alone picks the same
	 * pair, reading every pair.
	 */
#define CLAIM_STAGES(QUEUED)                                             \
	{                                                                \
		"SELECT p.id FROM pairs p JOIN hosts h ON h.id = ?1"     \
		" WHERE " QUEUED " AND p.host_id = ?1" CLAIM_PAIR_FITS   \
		" ORDER BY p.superseded, p.id LIMIT 1",                  \
		    "SELECT p.id FROM pairs p JOIN hosts h ON h.id = ?1" \
		    " WHERE " QUEUED " AND p.host_id IS NULL"            \
		    " AND p.superseded = 0" CLAIM_PAIR_FITS              \
		    " ORDER BY p.id LIMIT 1",                            \
		    "SELECT p.id FROM pairs p JOIN hosts h ON h.id = ?1" \
		    " WHERE " QUEUED " AND p.host_id IS NULL"            \
		    " AND p.superseded > 0" CLAIM_PAIR_FITS              \
		    " ORDER BY p.superseded, p.id LIMIT 1",              \
	}
	static const char *const stages[2][3] = {
		CLAIM_STAGES("p.queued > 0"),
		CLAIM_STAGES("1"),
	};
#undef CLAIM_STAGES
	const char *const *stage = stages[s->version < 25];
	static const char job_sql[] =
	    "SELECT j.id, j.role = 'base',"
	    " (SELECT count(*) FROM runs r WHERE r.job_id = j.id),"
	    " coalesce(json_extract(j.params, '$.rounds'), 1),"
	    " coalesce(json_extract(j.params, '$.runs'), j.runs)"
	    " FROM jobs j JOIN pairs p ON p.id = j.pair_id"
	    " JOIN hosts h ON h.id = ?1"
	    " WHERE j.pair_id = ?2 AND j.state = 'queued'" CLAIM_HOST_FITS
	    " ORDER BY j.role <> 'base', j.id LIMIT 2";
	sqlite3_stmt *st;
	int64_t pair = 0;
	size_t i;
	int rc;

	*found = 0;
	for (i = 0; pair == 0 && i < sizeof(stages[0]) / sizeof(stages[0][0]);
	     i++) {
		if ((st = store_i_stmt(s, stage[i])) == NULL)
			return -1;
		sqlite3_bind_int64(st, 1, host_id);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			pair = sqlite3_column_int64(st, 0);
		store_i_count_steps(s, st);
		store_i_release(s, st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return store_i_dberr(s, "claim select");
	}
	if (pair == 0)
		return 0;
	if ((st = store_i_stmt(s, job_sql)) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, host_id);
	sqlite3_bind_int64(st, 2, pair);
	{
		int64_t id[2], done[2], size = 0;
		int base[2], k = 0;

		while (k < 2 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			id[k] = sqlite3_column_int64(st, 0);
			base[k] = sqlite3_column_int(st, 1);
			done[k] = sqlite3_column_int64(st, 2);
			size = rounds_size(sqlite3_column_int64(st, 4),
			    sqlite3_column_int64(st, 3));
			k++;
		}
		if (k > 0) {
			*out = id[0]; /* the base, else the only one */
			*found = 1;
			rc = SQLITE_DONE;
		}
		if (k == 2 && size > 0) {
			/* Rounds: the side behind catches up; when both
			 * have the same runs, rounds_base_first orders the
			 * round. */
			if (done[0] != done[1])
				*out = id[done[1] < done[0]];
			else if (rounds_base_first(pair, done[0] / size) !=
			    base[0])
				*out = id[1];
		}
	}
	store_i_count_steps(s, st);
	store_i_release(s, st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
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
	sqlite3_stmt *st;
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
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, host_id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		*size = rounds_size(
		    sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 1));
	}
	store_i_release(s, st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_i_dberr(s, "claim partner");
	return 0;
}

/* Job id leased to host_id until now + lease_s, as a claim does. */
static int
claim_lease(
    struct store *s, int64_t id, int64_t host_id, int64_t now, int64_t lease_s)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "UPDATE jobs SET state = 'running', host_id = ?2,"
	    " lease_owner = ?2, lease_expires = ?3,"
	    " attempts = attempts + 1, progress = NULL, updated = ?4"
	    " WHERE id = ?1");
	int rc;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, host_id);
	sqlite3_bind_int64(st, 3, now + lease_s);
	sqlite3_bind_int64(st, 4, now);
	rc = store_i_step_done(s, st, "claim update");
	store_i_release(s, st);
	return rc;
}

/* A pair claim's jobs end at their runs: no round_runs. */
static int
claim_whole(struct store *s, int64_t id)
{
	sqlite3_stmt *st =
	    store_i_stmt(s, "UPDATE jobs SET round_runs = NULL WHERE id = ?1");
	int rc;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = store_i_step_done(s, st, "claim whole");
	store_i_release(s, st);
	return rc;
}

static int
claim_tx(struct store *s, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s, int pairs)
{
	sqlite3_stmt *st;
	int64_t id = 0, round = 0, partner = 0, size = 0;
	int rc, ok = 1, found = 0;

	memset(out, 0, sizeof(*out));
	if (store_i_tx_begin_as(s, 1) == -1)
		return -1;
	/* A job this host still holds: its runner restarted and lost it. */
	st = store_i_stmt(s,
	    "SELECT j.id FROM jobs j WHERE j.state = 'running'"
	    " AND j.lease_owner = ?1 ORDER BY j.id LIMIT 1");
	ok = st != NULL;
	if (ok) {
		sqlite3_bind_int64(st, 1, host_id);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			id = sqlite3_column_int64(st, 0);
			found = 1;
		} else if (rc != SQLITE_DONE) {
			ok = store_i_dberr(s, "claim held") == 0;
		}
		store_i_release(s, st);
	}
	if (ok && !found)
		ok = claim_pick(s, &id, &found, host_id) == 0;
	if (ok && found && pairs)
		ok = claim_partner(s, &partner, &size, id, host_id) == 0;
	if (ok && found) {
		ok = claim_lease(s, id, host_id, now, lease_s) == 0;
		if (ok && partner != 0)
			ok =
			    claim_lease(s, partner, host_id, now, lease_s) == 0;
		if (ok) {
			st = store_i_stmt(s,
			    "UPDATE pairs SET host_id = ?2 WHERE id ="
			    " (SELECT pair_id FROM jobs WHERE id = ?1)");
			ok = st != NULL;
			if (ok) {
				sqlite3_bind_int64(st, 1, id);
				sqlite3_bind_int64(st, 2, host_id);
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
				sqlite3_bind_int64(st, 1, id);
				sqlite3_bind_int64(st, 2, host_id);
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
	return 0;
}

int
store_claim(struct store *s, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s)
{
	return claim_tx(s, out, host_id, now, lease_s, 0);
}

int
store_claim_pair(struct store *s, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s)
{
	return claim_tx(s, out, host_id, now, lease_s, 1);
}

int
store_requeue_expired(struct store *s, int64_t now, int *out_n)
{
	sqlite3_stmt *sel, *st;
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
		sqlite3_bind_int64(sel, 1, now);
	while (ok && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(sel, 0);
		int64_t att = sqlite3_column_int64(sel, 1);
		int64_t max = sqlite3_column_int64(sel, 2);
		int64_t pair = sqlite3_column_int64(sel, 3);
		int64_t partner_busy = sqlite3_column_int64(sel, 4);

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
				sqlite3_bind_int64(st, 1, id);
				store_i_bind_text(st, 2, msg);
				sqlite3_bind_int64(st, 3, now);
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
			sqlite3_bind_int64(st, 1, id);
			sqlite3_bind_int64(st, 2, now);
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
			sqlite3_bind_int64(st, 1, pair);
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
			sqlite3_bind_int64(st, 1, pair);
			ok = store_i_step_done(s, st, "release siblings") == 0;
			store_i_release(s, st);
		}
		st = ok ? store_i_stmt(s, "DELETE FROM runs WHERE job_id = ?1")
		        : NULL;
		if (ok && (ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, id);
			ok = store_i_step_done(s, st, "discard runs") == 0;
			store_i_release(s, st);
		}
	}
	if (ok && rc != SQLITE_DONE)
		ok = store_i_dberr(s, "expired leases") == 0;
	store_i_release(s, sel);
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_n)
		*out_n = n;
	return 0;
}

/*
 * Loads what a runner call needs about a job, inside a transaction:
 * 0, ERR_NOTFOUND, or ERR_CONFLICT when host does not hold its lease
 * (host_id 0 skips that check).
 */
static int
job_lease(struct store *s, int64_t *out_max_runs, int64_t *out_attempt,
    int64_t job_id, int64_t host_id)
{
	sqlite3_stmt *st = store_i_cached(s, S_JOB_LEASE,
	    "SELECT state, lease_owner, max_runs, attempts FROM jobs"
	    " WHERE id = ?1");
	const char *state;
	int64_t owner;
	int r = 0;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_reset(st);
		return err_setc(&s->err, ERR_NOTFOUND, "job %lld not found",
		    (long long)job_id);
	}
	state = store_i_col_text(st, 0);
	owner = sqlite3_column_int64(st, 1);
	if (out_max_runs)
		*out_max_runs = sqlite3_column_int64(st, 2);
	if (out_attempt)
		*out_attempt = sqlite3_column_int64(st, 3);
	if (host_id != 0 && (strcmp(state, "running") != 0 || owner != host_id))
		r = err_setc(&s->err, ERR_CONFLICT,
		    "job %lld is %s and not leased to this runner",
		    (long long)job_id, state);
	sqlite3_reset(st);
	return r;
}

int
store_heartbeat(struct store *s, int64_t *out_expires, int64_t *out_runs,
    int64_t host_id, int64_t job_id, const char *progress, int64_t now,
    int64_t lease_s)
{
	sqlite3_stmt *st;
	int64_t q;
	int r = 0, ok = 1;

	if (store_i_tx_begin_as(s, 1) == -1)
		return -1;
	/* What it writes does not move the store's generation. */
	q = store_i_quiet_begin(s);
	st = store_i_cached(
	    s, S_HOST_SEEN, "UPDATE hosts SET last_seen = ?2 WHERE id = ?1");
	if ((ok = st != NULL)) {
		sqlite3_bind_int64(st, 1, host_id);
		sqlite3_bind_int64(st, 2, now);
		ok = store_i_step_done(s, st, "host seen") == 0;
		sqlite3_reset(st);
	}
	if (ok && job_id != 0) {
		r = job_lease(s, NULL, NULL, job_id, host_id);
		ok = r != -1;
	}
	if (ok && job_id != 0 && r == 0) {
		st = store_i_cached(s, S_HEARTBEAT,
		    "UPDATE jobs SET lease_expires = ?2,"
		    " progress = coalesce(?3, progress), updated = ?4"
		    " WHERE id = ?1 RETURNING lease_expires,"
		    " coalesce(round_runs, runs)");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, job_id);
			sqlite3_bind_int64(st, 2, now + lease_s);
			store_i_bind_text(st, 3, progress);
			sqlite3_bind_int64(st, 4, now);
			if (sqlite3_step(st) == SQLITE_ROW) {
				*out_expires = sqlite3_column_int64(st, 0);
				*out_runs = sqlite3_column_int64(st, 1);
			} else {
				ok = store_i_dberr(s, "heartbeat") == 0;
			}
			sqlite3_reset(st);
		}
	}
	store_i_quiet_end(s, q);
	/* A lost lease still commits last_seen. */
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_run_add(
    struct store *s, int64_t host_id, const struct store_run *run, int64_t now)
{
	sqlite3_stmt *st;
	int64_t max_runs = 0, attempt = 0, run_id = 0;
	size_t i, rawlen;
	int r, ok, rc;

	if (store_i_tx_begin(s) == -1)
		return -1;
	/* One lookup: existence, range and lease.  The range is checked
	 * first, so a bad index is a 400 even without the lease. */
	r = job_lease(s, &max_runs, &attempt, run->job_id, host_id);
	ok = r != -1;
	/* Index max_runs is the profiled run's slot (docs/MEMCG.md). */
	if ((r == 0 || r == ERR_CONFLICT) &&
	    (run->index < 0 || run->index > max_runs ||
	        (run->index == max_runs && run->profile == NULL))) {
		err_clear(&s->err);
		r = err_setc(&s->err, ERR_INVALID,
		    "field 'index': %lld is outside [0, %lld)%s",
		    (long long)run->index, (long long)max_runs,
		    run->profile ? " and is not the profile slot" : "");
	}
	if (r == 0 || r == ERR_CONFLICT) {
		st = store_i_cached(s, S_RUN_INSERT,
		    "INSERT INTO runs (job_id, idx, host_id, attempt, status,"
		    " duration_s, error, created, profile, host_state)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
		    " ON CONFLICT (job_id, idx) DO NOTHING RETURNING id");
		ok = st != NULL;
		if (ok && r == 0) {
			sqlite3_bind_int64(st, 1, run->job_id);
			sqlite3_bind_int64(st, 2, run->index);
			sqlite3_bind_int64(st, 3, host_id);
			sqlite3_bind_int64(st, 4, attempt);
			store_i_bind_text(st, 5, run->status);
			if (run->duration_s >= 0)
				sqlite3_bind_double(st, 6, run->duration_s);
			store_i_bind_text(st, 7, run->error);
			sqlite3_bind_int64(st, 8, now);
			store_i_bind_text(st, 9, run->profile);
			store_i_bind_text(st, 10, run->host_state);
			rc = sqlite3_step(st);
			if (rc == SQLITE_ROW)
				run_id = sqlite3_column_int64(st, 0);
			else if (rc == SQLITE_DONE)
				r = err_setc(&s->err, ERR_EXISTS,
				    "run %lld of job %lld is already stored",
				    (long long)run->index,
				    (long long)run->job_id);
			else
				ok = store_i_dberr(s, "insert run") == 0;
			sqlite3_reset(st);
		}
		if (ok && r == ERR_CONFLICT) {
			/* Stored already from this host?  Then it is a
			 * repeat, not a conflict.  The same index measured
			 * by another host (the job was requeued away from
			 * this one) stays a conflict: this run is refused. */
			sqlite3_stmt *q = store_i_stmt(s,
			    "SELECT 1 FROM runs WHERE job_id = ?1 AND idx = "
			    "?2 AND host_id IS ?3");

			if ((ok = q != NULL)) {
				sqlite3_bind_int64(q, 1, run->job_id);
				sqlite3_bind_int64(q, 2, run->index);
				sqlite3_bind_int64(q, 3, host_id);
				if (sqlite3_step(q) == SQLITE_ROW) {
					err_clear(&s->err);
					r = err_setc(&s->err, ERR_EXISTS,
					    "run %lld of job %lld is already "
					    "stored",
					    (long long)run->index,
					    (long long)run->job_id);
				}
				store_i_release(s, q);
			}
		}
	}
	for (i = 0; ok && r == 0 && i < run->nmetrics; i++) {
		const struct store_metric *m = &run->metrics[i];

		st = store_i_cached(s, S_METRIC_INSERT,
		    "INSERT INTO metrics (run_id, name, value, unit, better)"
		    " VALUES (?1, ?2, ?3, ?4, ?5)");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, run_id);
			store_i_bind_text(st, 2, m->name);
			sqlite3_bind_double(st, 3, m->value);
			store_i_bind_text(st, 4, m->unit ? m->unit : "");
			store_i_bind_text(st, 5, m->better);
			rc = sqlite3_step(st);
			if ((rc & 0xff) == SQLITE_CONSTRAINT)
				r = err_setc(&s->err, ERR_INVALID,
				    "field 'metrics[%zu]': duplicate or "
				    "invalid metric '%s'",
				    i, m->name);
			else if (rc != SQLITE_DONE)
				ok = store_i_dberr(s, "insert metric") == 0;
			sqlite3_reset(st);
		}
	}
	if (ok && r == 0 && run->raw != NULL) {
		rawlen = run->raw_len;
		if (rawlen > CAP_RAW_OUTPUT)
			rawlen = CAP_RAW_OUTPUT;
		st = store_i_cached(s, S_RAW_INSERT,
		    "INSERT INTO raw_outputs (run_id, data, size, truncated)"
		    " VALUES (?1, ?2, ?3, ?4)");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, run_id);
			sqlite3_bind_blob(
			    st, 2, run->raw, (int)rawlen, SQLITE_STATIC);
			sqlite3_bind_int64(st, 3, (int64_t)run->raw_len);
			sqlite3_bind_int(st, 4, rawlen < run->raw_len);
			ok = store_i_step_done(s, st, "insert raw output") == 0;
			sqlite3_reset(st);
		}
	}
	/* An expected refusal rolls back whatever was written. */
	if (store_i_tx_end(s, ok && r == 0) == -1 && r == 0)
		return -1;
	return ok ? r : -1;
}

int
store_log_append(struct store *s, size_t *out_stored, int64_t host_id,
    int64_t job_id, const char *text, size_t len, int64_t now)
{
	static const char marker[] = "\n[log truncated]\n";
	sqlite3_stmt *st;
	int64_t have = 0;
	size_t keep = len;
	int r, ok;

	if (out_stored)
		*out_stored = 0;
	if (store_i_tx_begin(s) == -1)
		return -1;
	r = job_lease(s, NULL, NULL, job_id, host_id);
	ok = r != -1;
	if (ok && r == 0) {
		st =
		    store_i_stmt(s, "SELECT log_bytes FROM jobs WHERE id = ?1");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, job_id);
			if (sqlite3_step(st) == SQLITE_ROW)
				have = sqlite3_column_int64(st, 0);
			store_i_release(s, st);
		}
		/* log_bytes CAP_JOB_LOG + 1 means "full, marker written". */
		if (have >= CAP_JOB_LOG)
			keep = 0;
		else if (keep > (size_t)(CAP_JOB_LOG - have))
			keep = (size_t)(CAP_JOB_LOG - have);
	}
	if (ok && r == 0 && have <= CAP_JOB_LOG) {
		int full = keep < len;

		st = store_i_stmt(s,
		    "INSERT INTO job_logs (job_id, created, text)"
		    " VALUES (?1, ?2, ?3 || ?4)");
		if ((ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, job_id);
			sqlite3_bind_int64(st, 2, now);
			sqlite3_bind_text(
			    st, 3, text, (int)keep, SQLITE_TRANSIENT);
			sqlite3_bind_text(
			    st, 4, full ? marker : "", -1, SQLITE_STATIC);
			ok = store_i_step_done(s, st, "append log") == 0;
			store_i_release(s, st);
		}
		st = ok ? store_i_stmt(
		              s, "UPDATE jobs SET log_bytes = ?2 WHERE id = ?1")
		        : NULL;
		if (ok && (ok = st != NULL)) {
			sqlite3_bind_int64(st, 1, job_id);
			sqlite3_bind_int64(st, 2,
			    full ? CAP_JOB_LOG + 1 : have + (int64_t)keep);
			ok = store_i_step_done(s, st, "log size") == 0;
			store_i_release(s, st);
		}
	} else {
		keep = 0;
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_stored && r == 0)
		*out_stored = keep;
	return r;
}

/* Runs one UPDATE on job id with now bound as ?2; sql: a literal (the
 * statement cache keys on it). */
static int
job_update(
    struct store *s, int64_t id, int64_t now, const char *sql, const char *text)
{
	sqlite3_stmt *st = store_i_stmt(s, sql);
	int r;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, now);
	if (text != NULL)
		store_i_bind_text(st, 3, text);
	r = store_i_step_done(s, st, "update job");
	store_i_release(s, st);
	return r;
}

int
store_finish(struct store *s, int64_t host_id, int64_t job_id, int ok_job,
    const char *error, int64_t now)
{
	int r, ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	r = job_lease(s, NULL, NULL, job_id, host_id);
	ok = r != -1;
	/* A round of a job run in rounds, with runs still to do: queued
	 * again for its next round, which is not another attempt. */
	if (ok && r == 0 && ok_job)
		ok = job_update(s, job_id, now,
		         "UPDATE jobs SET state = 'queued', lease_owner = NULL,"
		         " lease_expires = NULL, attempts = max(attempts - 1, "
		         "0),"
		         " round_runs = NULL, updated = ?2"
		         " WHERE id = ?1 AND round_runs IS NOT NULL"
		         " AND (SELECT count(*) FROM runs WHERE job_id = ?1) < "
		         "runs",
		         NULL) == 0;
	if (ok && r == 0)
		ok = job_update(s, job_id, now,
		         ok_job
		             ? "UPDATE jobs SET state = 'success',"
		               " lease_owner = NULL, lease_expires = NULL,"
		               " error = NULL, round_runs = NULL, updated = ?2"
		               " WHERE id = ?1 AND state = 'running'"
		             : "UPDATE jobs SET state = 'failed',"
		               " lease_owner = NULL, lease_expires = NULL,"
		               " error = ?3, updated = ?2 WHERE id = ?1",
		         ok_job ? NULL : (error ? error : "failed")) == 0;
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

/* The state of job id into buf, or ERR_NOTFOUND. */
static int
job_state(struct store *s, char *buf, size_t len, int64_t id)
{
	sqlite3_stmt *st =
	    store_i_stmt(s, "SELECT state FROM jobs WHERE id = ?1");
	int r;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		snprintf(buf, len, "%s", store_i_col_text(st, 0));
		r = 0;
	} else {
		r = err_setc(
		    &s->err, ERR_NOTFOUND, "job %lld not found", (long long)id);
	}
	store_i_release(s, st);
	return r;
}

int
store_cancel(struct store *s, int64_t job_id, int64_t now)
{
	char state[16];
	int r, ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	r = job_state(s, state, sizeof(state), job_id);
	ok = r != -1;
	if (r == 0 && strcmp(state, "queued") != 0 &&
	    strcmp(state, "running") != 0)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "job %lld is %s; only queued or running jobs can be "
		    "cancelled",
		    (long long)job_id, state);
	if (ok && r == 0)
		ok = job_update(s, job_id, now,
		         "UPDATE jobs SET state = 'cancelled',"
		         " lease_owner = NULL, lease_expires = NULL,"
		         " error = 'cancelled', updated = ?2 WHERE id = ?1",
		         NULL) == 0;
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_retry(struct store *s, int64_t job_id, int64_t now)
{
	char state[16];
	int r, ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	r = job_state(s, state, sizeof(state), job_id);
	ok = r != -1;
	if (r == 0 && strcmp(state, "failed") != 0 &&
	    strcmp(state, "cancelled") != 0)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "job %lld is %s; only failed or cancelled jobs can be "
		    "retried",
		    (long long)job_id, state);
	if (ok && r == 0)
		ok = job_update(s, job_id, now,
		         "UPDATE jobs SET state = 'queued', attempts = 0,"
		         " lease_owner = NULL, lease_expires = NULL,"
		         " error = NULL, progress = NULL, updated = ?2"
		         " WHERE id = ?1",
		         NULL) == 0 &&
		    job_update(s, job_id, now,
		        "DELETE FROM runs WHERE job_id = ?1"
		        " AND status = 'failed' AND ?2 IS NOT NULL",
		        NULL) == 0;
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

/* ---- reads ---- */

#define JOB_COLS                                                      \
	"j.id, j.pair_id, j.role, j.name, j.point, j.state, h.name,"  \
	" j.attempts, j.runs, (SELECT count(*) FROM runs r"           \
	" WHERE r.job_id = j.id AND r.idx < j.max_runs), j.progress," \
	" j.error, j.created,"                                        \
	" j.updated, j.lease_expires, j.max_runs, c.sha, t.name,"     \
	" c.subject "
#define JOB_FROM                                             \
	" FROM jobs j LEFT JOIN hosts h ON h.id = j.host_id" \
	" LEFT JOIN commits c ON c.id = j.commit_id"         \
	" LEFT JOIN trees t ON t.id = c.tree_id "

/* The JOB_COLS of one row into j (its strings are j's own). */
static void
job_scan(struct store_job *j, sqlite3_stmt *st)
{
	memset(j, 0, sizeof(*j));
	j->id = sqlite3_column_int64(st, 0);
	j->pair_id = sqlite3_column_int64(st, 1);
	j->role = store_i_col_dup(st, 2);
	j->name = store_i_col_dup(st, 3);
	j->point = store_i_col_dup(st, 4);
	j->state = store_i_col_dup(st, 5);
	j->host = store_i_col_dup(st, 6);
	j->attempts = sqlite3_column_int64(st, 7);
	j->runs = sqlite3_column_int64(st, 8);
	j->runs_done = sqlite3_column_int64(st, 9);
	j->progress = store_i_col_dup(st, 10);
	j->error = store_i_col_dup(st, 11);
	j->created = sqlite3_column_int64(st, 12);
	j->updated = sqlite3_column_int64(st, 13);
	j->has_lease = sqlite3_column_type(st, 14) != SQLITE_NULL;
	j->lease_expires = sqlite3_column_int64(st, 14);
	j->max_runs = sqlite3_column_int64(st, 15);
	j->commit = store_i_col_dup(st, 16);
	j->tree = store_i_col_dup(st, 17);
	j->subject = store_i_col_dup(st, 18);
}

static void
job_release(struct store_job *j)
{
	free(j->role);
	free(j->name);
	free(j->point);
	free(j->state);
	free(j->host);
	free(j->progress);
	free(j->error);
	free(j->commit);
	free(j->tree);
	free(j->subject);
}

static void
job_scan_row(void *row, sqlite3_stmt *st, void *arg)
{
	(void)arg;
	job_scan(row, st);
}

int
store_jobs_get(struct store *s, struct store_jobs *out, const char *state,
    int64_t limit, int64_t cursor)
{
	/* Of a state: a range of index jobs_state (state, id). */
	sqlite3_stmt *st = store_i_stmt(s,
	    state != NULL
	        ? "SELECT " JOB_COLS JOB_FROM
	          " WHERE j.state = ?1 AND j.id < ?2 ORDER BY j.id DESC"
	          " LIMIT ?3"
	        : "SELECT " JOB_COLS JOB_FROM
	          " WHERE j.id < ?2 ORDER BY j.id DESC LIMIT ?3");
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, state);
	sqlite3_bind_int64(st, 2, store_i_below(cursor));
	sqlite3_bind_int64(st, 3, limit);
	r = store_i_rows(s, st, &v, &out->n, sizeof(*out->v), job_scan_row,
	    NULL, "list jobs");
	out->v = v;
	if (r != 0) {
		store_jobs_release(out);
		return r;
	}
	out->next_cursor = store_i_next_cursor(
	    out->n, limit, out->n ? out->v[out->n - 1].id : 0, STORE_I_DESC);
	return 0;
}

void
store_jobs_release(struct store_jobs *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		job_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int
store_i_jobs_of(
    struct store *s, struct store_jobs *out, const int64_t *ids, size_t n)
{
	sqlite3_stmt *st;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	out->v = xcalloc(n ? n : 1, sizeof(*out->v));
	for (i = 0; i < n; i++) {
		st = store_i_stmt(
		    s, "SELECT " JOB_COLS JOB_FROM "WHERE j.id = ?1");
		if (st == NULL)
			goto fail;
		sqlite3_bind_int64(st, 1, ids[i]);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			job_scan(&out->v[out->n++], st);
		store_i_release(s, st);
		if (rc == SQLITE_DONE) {
			err_setc(&s->err, ERR_NOTFOUND, "job %lld not found",
			    (long long)ids[i]);
			goto fail;
		}
		if (rc != SQLITE_ROW) {
			store_i_dberr(s, "job");
			goto fail;
		}
	}
	return 0;
fail:
	store_jobs_release(out);
	return -1;
}

/* The job row of id into *out (store_jobs_release's strings):
 * 0, ERR_NOTFOUND or -1. */
int
store_i_job_one(struct store *s, struct store_job *out, int64_t id)
{
	sqlite3_stmt *st =
	    store_i_stmt(s, "SELECT " JOB_COLS JOB_FROM "WHERE j.id = ?1");
	int rc, r = -1;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		job_scan(out, st);
		r = 0;
	} else if (rc == SQLITE_DONE) {
		r = err_setc(
		    &s->err, ERR_NOTFOUND, "job %lld not found", (long long)id);
	} else {
		store_i_dberr(s, "job");
	}
	store_i_release(s, st);
	return r;
}

static void
run_release(struct store_job_run *r)
{
	size_t i;

	for (i = 0; i < r->nmetrics; i++) {
		free(r->metrics[i].name);
		free(r->metrics[i].unit);
		free(r->metrics[i].better);
	}
	free(r->metrics);
	free(r->status);
	free(r->host);
	free(r->error);
	free(r->profile_json);
	free(r->host_state_json);
}

/* The runs of job id, by index, each with its metrics by name. */
static int
job_runs(struct store *s, struct store_job_detail *d, int64_t id)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT r.id, r.idx, r.status, h.name, r.duration_s, r.error,"
	    " r.attempt, r.created, m.name, m.value, m.unit, m.better,"
	    " r.profile, r.host_state FROM runs r"
	    " LEFT JOIN hosts h ON h.id = r.host_id"
	    " LEFT JOIN metrics m ON m.run_id = r.id"
	    " WHERE r.job_id = ?1 ORDER BY r.idx, m.name");
	struct store_job_run *run = NULL;
	size_t cap = 0, mcap = 0;
	int64_t cur = -1;
	int rc;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int64(st, 0) != cur) {
			cur = sqlite3_column_int64(st, 0);
			if (d->nruns == cap) {
				cap = cap ? cap * 2 : 8;
				d->runs =
				    xreallocarray(d->runs, cap, sizeof(*run));
			}
			run = &d->runs[d->nruns++];
			memset(run, 0, sizeof(*run));
			mcap = 0;
			run->index = sqlite3_column_int64(st, 1);
			run->status = store_i_col_dup(st, 2);
			run->host = store_i_col_dup(st, 3);
			run->duration_s =
			    sqlite3_column_type(st, 4) == SQLITE_NULL
			    ? NAN
			    : sqlite3_column_double(st, 4);
			run->error = store_i_col_dup(st, 5);
			run->attempt = sqlite3_column_int64(st, 6);
			run->created = sqlite3_column_int64(st, 7);
			run->profile_json = store_i_col_dup(st, 12);
			run->host_state_json = store_i_col_dup(st, 13);
		}
		if (sqlite3_column_type(st, 8) != SQLITE_NULL) {
			struct store_run_metric *m;

			if (run->nmetrics == mcap) {
				mcap = mcap ? mcap * 2 : 4;
				run->metrics = xreallocarray(
				    run->metrics, mcap, sizeof(*m));
			}
			m = &run->metrics[run->nmetrics++];
			m->name = store_i_col_dup(st, 8);
			m->value = sqlite3_column_double(st, 9);
			m->unit = store_i_col_dup(st, 10);
			m->better = store_i_col_dup(st, 11);
		}
	}
	if (rc != SQLITE_DONE)
		store_i_dberr(s, "runs");
	store_i_release(s, st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The last bytes of the job log (the tail a reader wants), from a
 * UTF-8 character boundary. */
static int
job_log_tail(struct store *s, struct store_job_detail *d, int64_t id)
{
	sqlite3_stmt *st = store_i_stmt(
	    s, "SELECT text FROM job_logs WHERE job_id = ?1 ORDER BY id DESC");
	struct buf b = BUF_INIT(CAP_JOB_LOG);
	char **parts = NULL;
	size_t n = 0, total = 0, i;
	const size_t tail = 64 * 1024;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	while (total < tail && sqlite3_step(st) == SQLITE_ROW) {
		const char *t = store_i_col_text(st, 0);

		parts = xreallocarray(parts, n + 1, sizeof(*parts));
		parts[n++] = xstrdup(t ? t : "");
		total += strlen(parts[n - 1]);
	}
	store_i_release(s, st);
	for (i = n; i > 0; i--) {
		buf_puts(&b, parts[i - 1]);
		free(parts[i - 1]);
	}
	free(parts);
	i = utf8_tail(b.data, b.len, tail);
	d->log_len = b.len - i;
	d->log = xmalloc(d->log_len + 1);
	memcpy(d->log, b.data + i, d->log_len);
	d->log[d->log_len] = '\0';
	buf_release(&b);
	return 0;
}

int
store_job_get(struct store *s, struct store_job_detail *out, int64_t job_id)
{
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = store_i_job_one(s, &out->job, job_id)) != 0)
		return r;
	if (job_runs(s, out, job_id) == -1 ||
	    job_log_tail(s, out, job_id) == -1) {
		store_job_detail_release(out);
		return -1;
	}
	return 0;
}

void
store_job_detail_release(struct store_job_detail *d)
{
	size_t i;

	if (d == NULL)
		return;
	job_release(&d->job);
	for (i = 0; i < d->nruns; i++)
		run_release(&d->runs[i]);
	free(d->runs);
	free(d->log);
	memset(d, 0, sizeof(*d));
}

int
store_run_raw(struct store *s, struct buf *b, int64_t job_id, int64_t idx)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT x.data FROM runs r JOIN raw_outputs x ON x.run_id = r.id"
	    " WHERE r.job_id = ?1 AND r.idx = ?2");
	int r = 0;

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, idx);
	if (sqlite3_step(st) == SQLITE_ROW)
		buf_add(b, sqlite3_column_blob(st, 0),
		    (size_t)sqlite3_column_bytes(st, 0));
	else
		r = err_setc(&s->err, ERR_NOTFOUND,
		    "job %lld has no raw output for run %lld",
		    (long long)job_id, (long long)idx);
	store_i_release(s, st);
	return r;
}

int
store_hosts_matching(
    struct store *s, int64_t **out, size_t *n, const char *labels_json)
{
	sqlite3_stmt *st = store_i_stmt(s,
	    "SELECT h.id FROM hosts h WHERE json_array_length(json(?1)) = 0"
	    " OR EXISTS (SELECT 1 FROM json_each(json(?1)) jl,"
	    "  json_each(h.labels) hl WHERE jl.value = hl.value)"
	    " OR EXISTS (SELECT 1 FROM json_each(json(?1)) jn"
	    "  WHERE jn.value = h.name)"
	    " ORDER BY h.id");
	int64_t *v = NULL;
	size_t k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, labels_json ? labels_json : "[]");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xreallocarray(v, k + 1, sizeof(*v));
		v[k++] = sqlite3_column_int64(st, 0);
	}
	store_i_release(s, st);
	if (rc != SQLITE_DONE) {
		free(v);
		return store_i_dberr(s, "hosts matching");
	}
	*out = v;
	*n = k;
	return 0;
}
