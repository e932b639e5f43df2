#ifndef DAEMON_API_H
#define DAEMON_API_H

/*
 * The JSON API of docs/API.md: routes, authentication, validation.  It
 * runs the HTTP server (daemon/httpd) and the scheduler's ticker, and
 * gives each server thread its own store connection.
 */
#include "common/err.h"

struct api;
struct dconf;

/* Starts serving with conf (the api takes a reference).  0 and *out, or
 * -1 with e set (database, listen address). */
int api_start(struct api **out, struct dconf *conf, struct err *e);
int api_port(const struct api *);
/* Swaps in a new configuration (takes a reference; the old one is
 * released when its last request ends). */
void api_reload(struct api *, struct dconf *conf);
/* Stops accepting, answers parked long-polls, waits for requests in
 * flight, stops threads, closes the database.  NULL ok. */
void api_stop(struct api *);

#endif
