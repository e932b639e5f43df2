#ifndef WEB_THROTTLE_H
#define WEB_THROTTLE_H

/*
 * Failed logins per client address, in memory: an address may fail
 * THROTTLE_FREE times; from then on each try waits 1 s after its last
 * failure, doubling with each further failure up to THROTTLE_MAX_S.
 * The right token while waiting is refused too (a guesser cannot tell).
 * A success, or THROTTLE_FORGET_S without a failure, forgets the
 * address.  At most THROTTLE_SLOTS addresses are kept (the one failed
 * longest ago makes room).  Thread-safe.
 */
#include <stdint.h>

#define THROTTLE_FREE 5
#define THROTTLE_MAX_S 300
#define THROTTLE_FORGET_S 900
#define THROTTLE_SLOTS 1024

struct throttle;

struct throttle *throttle_new(void);   /* never NULL */
void throttle_free(struct throttle *); /* NULL ok */

/* Seconds addr must still wait at now_ms (monotonic), 0 when it may try. */
long throttle_wait(struct throttle *, const char *addr, int64_t now_ms);
/* One more failure of addr at now_ms. */
void throttle_fail(struct throttle *, const char *addr, int64_t now_ms);
/* addr logged in: its failures are forgotten. */
void throttle_clear(struct throttle *, const char *addr);

#endif
