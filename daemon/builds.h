#ifndef DAEMON_BUILDS_H
#define DAEMON_BUILDS_H

/*
 * Shared kernel builds, the scheduler's side (docs/KERNEL.md, "Shared
 * builds"): a builder's claim, lease and finish on top of the store's
 * transactions (store/builds.h), each waking the parked claims when the
 * queue moved, and the artifact store's room (the store picks what to
 * evict, daemon/artifacts.h deletes it).
 */
#include <stdint.h>

#include "common/err.h"

struct sched;
struct store;
struct store_build_claimed;
struct store_build_result;

/* store_build_claim with the scheduler's lease. */
int builds_claim(struct sched *, struct store *,
    struct store_build_claimed *out, int64_t host_id, const char *claim_id);
int builds_heartbeat(struct sched *, struct store *, int64_t *out_expires,
    int64_t host_id, int64_t build_id);
/* store_build_finish; wakes claims (a success makes jobs claimable). */
int builds_finish(struct sched *, struct store *, int *out_failed,
    int64_t host_id, int64_t build_id, const struct store_build_result *);
/* store_build_cancel by the operator; wakes claims. */
int builds_cancel(
    struct sched *, struct store *, int *out_failed, int64_t build_id);
/*
 * Room for an upload of need bytes in the artifact store at dir under
 * max_size, reserved until builds_unreserve: the bytes of the uploads
 * whose bodies are still coming count as stored, so uploads at once
 * cannot together pass max_size (reserved per daemon process).  The
 * store's choice of victims is deleted from dir.  0, ERR_TOOBIG (the
 * store's message: nothing reserved), or -1.
 */
int builds_reserve(
    struct store *, const char *dir, int64_t need, int64_t max_size);
/* Gives back what builds_reserve took, once the upload's file is
 * counted in the store or the upload failed. */
void builds_unreserve(int64_t need);

#endif
