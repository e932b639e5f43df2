#ifndef DAEMON_SERIES_ROUTE_H
#define DAEMON_SERIES_ROUTE_H

/*
 * Where an inbox's series goes, and whether it is taken at all.  Pure:
 * reads the daemon config and the grouped mail (daemon/mail), nothing
 * else, so `perfwatch series parse --config` explains exactly what the
 * watcher does.
 *
 * The branch a patch names in its subject tag ("[PATCH mm-unstable v3
 * 2/5]", "[PATCHSET cgroup/for-7.0-fixes]") picks the tree and branch
 * through the inbox's `tags` map; a series whose tags name nothing in
 * the map goes to the inbox's tree and branch.  A "base-commit:"
 * trailer still comes first when the chosen tree's mirror has that
 * commit (daemon/series); the route only says which branch tip is the
 * base otherwise.
 */
#include <stddef.h>

struct daemon_config;
struct cfg_inbox;
struct cfg_tree;
struct mail_msg;
struct mail_series;

struct series_route {
	const struct cfg_tree *tree; /* NULL: the tree is not configured */
	const char *branch;
	const char *tag; /* the inbox tag that matched, or NULL */
};

/* Fills out for series ms of msgs received by inbox in. */
void series_route(struct series_route *out, const struct daemon_config *,
    const struct cfg_inbox *in, const struct mail_msg *msgs,
    const struct mail_series *ms);

/*
 * 1 when some subject of the series (root or patch) contains one of the
 * inbox's `subjects` keywords (any case), or the inbox has none; else 0.
 */
int series_wanted(const struct cfg_inbox *in, const struct mail_msg *msgs,
    const struct mail_series *ms);

#endif
