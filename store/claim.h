#ifndef STORE_CLAIM_H
#define STORE_CLAIM_H

/*
 * Claims and leases (store/claim.c): a runner's claim of a job (or both
 * jobs of a pair in rounds), its heartbeats, and the expired leases put
 * back.
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * What a claim hands the runner.  The JSON the runner gets is made at the
 * HTTP edge (web/rows.c rows_claim_json): the stored spec with these
 * fields set.  Text is the struct's own copy.
 */
struct store_claimed {
	int64_t job_id, pair_id;
	char *role;      /* base | candidate */
	int64_t attempt; /* this claim's, from 1 */
	/* The runs this claim is to end at (the round's end, else the
	 * job's) and the job's cap. */
	int64_t runs, max_runs;
	/* The round (docs/CONFIG.md `rounds`), from 1; 0 when the job has
	 * no rounds. */
	int64_t round;
	int64_t *done_runs; /* the indexes stored already, ascending */
	size_t ndone;
	char *instance; /* store_instance, for the kernel's build id */
	int64_t lease_expires;
	char *spec_json; /* the stored spec as stored: the store does not
	                    parse it */
	/* A pair claim (store_claim_pair): the pair's other job, claimed
	 * with this one, and the runs a side a round; else NULL and 0. */
	struct store_claimed *partner;
	int64_t round_size;
	/* A job linked to a shared build (store/builds.h): the image the
	 * runner downloads, the "kernel.image" object as compact JSON
	 * (docs/API.md); else NULL. */
	char *image_json;
	/* 1 when the claim repeated one the host made before with the same
	 * claim id, whose answer it never got: the job handed back with
	 * its lease renewed and no new attempt. */
	int repeated;
};

void store_claimed_release(struct store_claimed *); /* NULL ok */

/*
 * Claims a job for host: a job the host already holds (a restarted
 * runner gets it back), else the first queued job whose labels match the
 * host's (its name counts as a label), whose pair is unbound or bound to this
 * host, preferring pairs bound to this host, then the oldest pair, base before
 * candidate.  The claim binds the pair, and the unbound pairs of its
 * sibling group (store/hosts.h), to the host, counts an attempt and
 * leases the job until now + lease_s.  0 and *out (the caller
 * store_claimed_release()s it), or ERR_NOTFOUND when there is nothing to
 * do; *out is zeroed on every failure.
 */
int store_claim(struct store *, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s);

/*
 * store_claim for a runner that can measure both jobs of a pair in turns
 * (docs/CONFIG.md `rounds`): when the claimed job's pair runs in rounds,
 * is no kernel job, and its other job is queued and fits the host (or
 * this host holds it already), that job is claimed too, as out->partner,
 * and both are to end at their runs (no round by round claims):
 * out->round_size says the runs a side a round.
 */
int store_claim_pair(struct store *, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s);
/*
 * Either of them (pairs) for a runner that may not build kernels
 * (builds 0, the claim's "builds": false): a kernel job it would have
 * to build itself (no shared build) is left for another.
 *
 * claim_id (may be NULL; at most STORE_CLAIM_ID_MAX bytes, checked at
 * the HTTP edge) is the runner's key for this claim, sent again with
 * every try of the claim until an answer reaches it (docs/API.md).  It
 * is kept with each job the claim leases (jobs.lease_claim), so a
 * claim whose answer was lost with its daemon and that comes again
 * with the same id, through any daemon of the database, gets the jobs
 * back that it leased, as they were, without another attempt
 * (out->repeated).  Without an id, or with another, a job the host
 * holds comes back as one more attempt.
 */
int store_claim_as(struct store *, struct store_claimed *out, int64_t host_id,
    int64_t now, int64_t lease_s, int pairs, int builds, const char *claim_id);

/* The longest claim id (docs/API.md: letters, digits, '-' and '_'). */
#define STORE_CLAIM_ID_MAX 64
/* v43: the claim id a job's or a shared build's lease was made for. */
#define STORE_CLAIM_ID_VERSION 43
#define STORE_CLAIM_ID_JOBS "ALTER TABLE jobs ADD COLUMN lease_claim TEXT;"
#define STORE_CLAIM_ID_BUILDS "ALTER TABLE builds ADD COLUMN lease_claim TEXT;"
#define STORE_CLAIM_ID_MIGRATION STORE_CLAIM_ID_JOBS STORE_CLAIM_ID_BUILDS

/*
 * Puts back jobs whose lease expired before now: attempts < max_attempts
 * goes back to queued, else failed with "lease expired N times".  When a
 * requeued job's pair partner has no runs and is not running, the pair's
 * host binding (with its sibling group's pairs that have not started) is
 * released and the runs the requeued job stored on that
 * host are discarded, so any runner may take the pair afresh.  *out_n
 * (may be NULL) counts the jobs changed.
 */
int store_requeue_expired(struct store *, int64_t now, int *out_n);

/*
 * Heartbeat from host.  job_id 0 = idle (only last_seen is updated).
 * 0 and the new expiry and wanted runs, or ERR_CONFLICT when the host
 * does not hold the job's lease any more (cancelled, expired, finished),
 * or ERR_NOTFOUND.
 */
int store_heartbeat(struct store *, int64_t *out_expires, int64_t *out_runs,
    int64_t host_id, int64_t job_id, const char *progress, int64_t now,
    int64_t lease_s);

#endif
