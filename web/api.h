#ifndef WEB_API_H
#define WEB_API_H

/*
 * The HTTP surface (docs/API.md): the route table, authentication, and
 * the dispatch to the handlers of web/api_runner.c, api_admin.c,
 * api_read.c and the dashboard (web/web.c).  It runs the HTTP server
 * (daemon/httpd) and the scheduler's ticker, and gives each server
 * thread its own store connection.  The handlers' side: web/api_int.h.
 */
#include <stddef.h>

#include "common/err.h"

struct api;
struct dconf;
struct sched;

/* Starts serving with conf (the api takes a reference).  0 and *out, or
 * -1 with e set (database, listen address). */
int api_start(struct api **out, struct dconf *conf, struct err *e);
/* Route i of the API's table (0, or -1 past its end): in pattern '#'
 * is an id and '*' one last segment; auth is "none", "runner" or
 * "admin".  The dashboard's routes: web_route_at (web/web.h). */
int api_route_at(
    size_t i, const char **method, const char **pattern, const char **auth);
int api_port(const struct api *);
/* The scheduler, for other threads that queue work (the watcher). */
struct sched *api_sched(struct api *);
/* Swaps in a new configuration (takes a reference; the old one is
 * released when its last request ends). */
void api_reload(struct api *, struct dconf *conf);
/* Stops accepting, answers parked long-polls, waits for requests in
 * flight, stops threads, closes the database.  NULL ok. */
void api_stop(struct api *);

#endif
