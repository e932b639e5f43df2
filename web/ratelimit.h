#ifndef WEB_RATELIMIT_H
#define WEB_RATELIMIT_H

/*
 * Requests per client address (http.per_ip_rate, http.per_ip_burst): a
 * bucket per address fills with rate tokens a second up to burst; each
 * request takes one, and one that finds none is refused.  Addresses are
 * kept in a fixed table (RATELIMIT_SLOTS, a few slots per hash); a new
 * address takes the slot of its hash left alone longest.  Thread-safe.
 */
#include <stdint.h>

#define RATELIMIT_SLOTS 4096

struct ratelimit;

/* rate a second, burst at most (at least 1); never NULL. */
struct ratelimit *ratelimit_new(unsigned rate, unsigned burst);
void ratelimit_free(struct ratelimit *); /* NULL ok */

/*
 * One request of addr at now_ms (monotonic): 0 when a token was taken,
 * else the seconds (at least 1) until one will be there.
 */
long ratelimit_take(struct ratelimit *, const char *addr, int64_t now_ms);

#endif
