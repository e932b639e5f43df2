#ifndef WEB_API_H
#define WEB_API_H

/*
 * The HTTP surface (docs/API.md): the route table, authentication, and
 * the dispatch to the handlers of web/api_runner.c, api_admin.c, the
 * public reads' web/api_*.c and the dashboard (web/page_*.c).  It runs the HTTP
 * server (web/httpd) and the scheduler's ticker, and gives each server thread
 * its own store connection.  The handlers' side: web/api_int.h.
 */
#include <stddef.h>

#include "common/err.h"

struct api;
struct dconf;
struct leases;
struct sched;

/*
 * The server's life, driven by the composition root (perfwatchd/main.c),
 * which owns the scheduler and its ticker:
 *	api = api_new(conf, sched);
 *	sched_start(sched, db, ms, api_tick, api, e);   (then the workers)
 *	api_listen(api, e);
 *	...
 *	sched_stop(sched);   (no tick after this)
 *	api_stop(api);
 */
/* A server for conf (a reference is taken) whose handlers queue work on
 * sched (borrowed; it must outlive the api).  Not listening yet; never
 * NULL. */
struct api *api_new(struct dconf *conf, struct sched *sched);
/* Listens on conf's address with its http: limits.  0, or -1 with e set
 * (the address). */
int api_listen(struct api *, struct err *e);
/* The scheduler's tick callback (arg: the api): wakes the parked claims
 * when the queue moved (changed) or their wait is over. */
void api_tick(void *arg, int changed);
/* Row i of the one route table (0, or -1 past its end): pattern as
 * web/api_int.h's struct route says ('#' an id, '*' one last segment, a
 * '/' at the end a prefix); auth "none", "runner", "admin" or "session";
 * table "api", or "web" for the dashboard's routes (web/page_*.c). */
int api_route_at(size_t i, const char **method, const char **pattern,
    const char **auth, const char **table);
int api_port(const struct api *);
/* Before api_listen: the daemon's role.  reads_only (perfwatchd --role
 * web): every route but a GET answers 503, naming the role.  leases
 * (borrowed, may be NULL): the workers /metrics says it runs. */
void api_set_role(struct api *, int reads_only, struct leases *leases);
/* Swaps in a new configuration (takes a reference; the old one is
 * released when its last request ends). */
void api_reload(struct api *, struct dconf *conf);
/* Stops accepting, answers parked long-polls, waits for requests in
 * flight, closes its store connections and frees.  The ticker must be
 * stopped first (sched_stop).  NULL ok. */
void api_stop(struct api *);

#endif
