#ifndef STORE_HOSTS_H
#define STORE_HOSTS_H

/*
 * Hosts and the fleet (store/hosts.c): registration, lookup and label
 * matching, the hosts list and sibling groups.
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

/* Creates or updates the host by name; labels and inventory are JSON
 * texts (an array of strings, an object). */
int store_host_register(struct store *, int64_t *out_id, const char *name,
    const char *labels_json, const char *inventory_json, int64_t now);
/* 0 and *out_id, or ERR_NOTFOUND. */
int store_host_id(struct store *, int64_t *out_id, const char *name);
int store_host_seen(struct store *, int64_t host_id, int64_t now);

/*
 * Hosts a job with these labels (JSON array; [] = any) may run on: the
 * host carries one of them or is named by one.  *out (caller frees) has
 * *n ids, oldest host first.
 */
int store_hosts_matching(
    struct store *, int64_t **out, size_t *n, const char *labels_json);

/* A host (GET /api/v1/hosts, /hosts). */
struct store_host {
	int64_t id;
	char *name;
	char *labels_json;    /* as registered: a JSON array, or NULL */
	char *inventory_json; /* as registered: a JSON object, or NULL */
	int online;           /* last_seen >= now - online_s */
	int64_t current_job;  /* the running job it holds, 0 for none */
	int64_t last_seen, registered;
	char *quarantined; /* why a canary quarantined it, or NULL */
	int has_quarantined_at;
	int64_t quarantined_at;
};
struct store_hosts {
	struct store_host *v;
	size_t n;
	int64_t next_cursor; /* the cursor of the next page, 0 at the end */
};
/* Hosts with id > cursor, by id, at most limit: 0, or -1 (errmsg). */
int store_host_list(struct store *, struct store_hosts *out, int64_t limit,
    int64_t cursor, int64_t now, int64_t online_s);
void store_hosts_release(struct store_hosts *); /* NULL ok */

void store_group_begin(struct store *);
void store_group_end(struct store *);
/* The pair's group id (its first pair's id), 0 when it has none. */
int store_pair_group(struct store *, int64_t *out_group, int64_t pair_id);

#endif
