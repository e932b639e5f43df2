#ifndef DAEMON_WORKER_H
#define DAEMON_WORKER_H

/*
 * A background worker of the daemon (the alert worker, the canary): a
 * thread with its own store connection that calls pass() when the
 * scheduler's generation moves or when the wait pass() asked for is up,
 * with the configuration of the moment (worker_reload swaps it, as
 * SIGHUP does).  pass() returns how long to wait, in milliseconds; it
 * logs its own errors.
 */
#include <stdint.h>

#include "common/err.h"
#include "daemon/leases.h"

struct dconf;
struct sched;
struct store;

typedef int64_t (*worker_pass_fn)(
    struct store *, const struct dconf *, struct sched *, void *arg);

struct worker;
/* 0 and *out, or -1 with e set (the store could not be opened, or the
 * thread not started); name is for messages.  pass() runs only while
 * leases holds lease (daemon/leases.h; NULL: always). */
int worker_start(struct worker **out, const char *name, struct dconf *,
    struct sched *, struct leases *leases, enum lease_worker lease,
    worker_pass_fn, void *arg, struct err *e);
void worker_reload(struct worker *, struct dconf *); /* NULL ok */
void worker_stop(struct worker *);                   /* joins; NULL ok */

#endif
