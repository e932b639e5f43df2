#ifndef STORE_HOSTS_H
#define STORE_HOSTS_H

/*
 * Hosts and the fleet (store/hosts.c); the hosts list is declared in
 * store.h.
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

#endif
