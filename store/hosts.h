#ifndef STORE_HOSTS_H
#define STORE_HOSTS_H

/*
 * The store's fleet tables (issue 12), kept apart from store.c so the
 * store's split by entity can take them as they are.
 *
 * Sibling groups.  The points of one candidate that differ only in the
 * cgroup axis (root and nested) must run on one host: the memcg tax
 * divides nested by root runs of the same machine.  They form a sibling
 * group, pairs.sib_group, given explicitly when the pairs are made: the
 * pairs created between store_group_begin() and store_group_end() on one
 * connection (one submit, one candidate of a trigger) whose job name,
 * host, labels, base and candidate commits and specs are the same once
 * the cgroup axis (params.cgroup, cgroup.path, point) is left out share
 * a group.  A pair made outside a scope is a group of its own.  Nothing
 * is inferred from creation times, so pairs of different candidates or
 * submits are free to spread over the fleet.
 */
#include <stddef.h>
#include <stdint.h>

struct store;

void store_group_begin(struct store *);
void store_group_end(struct store *);
/* The pair's group id (its first pair's id), 0 when it has none. */
int store_pair_group(struct store *, int64_t *out_group, int64_t pair_id);

/*
 * Shared bases under adaptive runs.  A base job shared by several pairs
 * can be re-opened for more runs by one pair while another pair's
 * verdict is being computed from it.  The verdict remembers each side's
 * job, wanted runs and stored runs as it read them (store_verdict_pair's
 * runs and stored); before it writes, in its transaction, this says
 * whether they are still so.  0, or ERR_CONFLICT (the message names the
 * job that changed): the verdict is dropped and made again later from a
 * complete side.
 */
struct store_side_stamp {
	int64_t job_id, runs, stored;
};
int store_verdict_unchanged(
    struct store *, const struct store_side_stamp *sides, size_t n);

/*
 * History in commit order (store_history_append places a point by its
 * commit's first-parent position).  A point that lands inside a series
 * must have its neighbourhood looked at again: the window of at most max
 * points with seq around in its middle (as far as the series' ends let
 * it), oldest first: *out_values and *out_seqs (caller frees both),
 * *out_n, and *out_total the series' length.
 */
int store_history_window(struct store *, double **out_values,
    int64_t **out_seqs, size_t *out_n, int64_t *out_total, int64_t series,
    int64_t around, size_t max);

/*
 * Patch mail waiting for the rest of its series (daemon/watch.c), kept
 * as the raw archive message under (inbox, archive commit sha), so a
 * restarted daemon picks a half-arrived series up again.  Put: once per
 * (inbox, sha), a repeat changes nothing.  Each: calls cb for the
 * inbox's messages oldest first, stops at cb's first nonzero return
 * (returned).  Drop: removes one (none there is fine).
 */
int store_mail_pending_put(struct store *, const char *inbox, const char *sha,
    const char *data, size_t len, int64_t now);
int store_mail_pending_each(struct store *, const char *inbox,
    int (*cb)(const char *sha, const char *data, size_t len, void *arg),
    void *arg);
int store_mail_pending_drop(struct store *, const char *inbox, const char *sha);

#endif
