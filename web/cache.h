#ifndef WEB_CACHE_H
#define WEB_CACHE_H

/*
 * Replies of public GET routes kept for as long as what they read has
 * not changed (so every page stays fast at 1M runs).  An entry holds the
 * request's path and query, the reply (status 200: body, content type,
 * headers) and the store version and configuration it was made under
 * (store/store.h store_data_version): it is served again only while the
 * version is the same, so a result, a triage or a finished job that is
 * committed makes the next request render afresh, and for at most
 * CACHE_TTL_MS, so what a page says about time (ages, hosts online)
 * and what a heartbeat writes (a running job's progress, which does not
 * move the version) stays as fresh as the overview's.  A reply is kept only
 * when the version did not move while it was made.
 *
 * One cache per request thread (each thread has its own connection, and
 * versions are those of a connection); not thread-safe.  Bounded: at most
 * CACHE_ENTRIES entries and CACHE_BYTES of bodies, the least recently
 * used going first; a body above CACHE_BODY_MAX is not kept.
 */
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define CACHE_TTL_MS 1000
#define CACHE_ENTRIES 64
#define CACHE_BYTES (4 * 1024 * 1024)
#define CACHE_BODY_MAX (512 * 1024)
#define CACHE_HEADERS 8

struct cache;

/* The state a reply was made under: the store's version and the
 * configuration (a reload makes a new one). */
struct cache_stamp {
	struct store_version v;
	const void *conf;
	int64_t now_ms; /* monotonic */
};

struct cache_reply {
	const char *body, *content_type;
	size_t len;
	int nhdr;
	const char *hdr[2 * CACHE_HEADERS]; /* name, value pairs */
};

struct cache *cache_new(void);   /* never NULL */
void cache_free(struct cache *); /* NULL ok */
/* 1 and *out (valid until the next call on c) when key has a reply made
 * under the same version and configuration, less than CACHE_TTL_MS
 * before st->now_ms; else 0. */
int cache_get(struct cache *c, struct cache_reply *out, const char *key,
    size_t keylen, const struct cache_stamp *st);
/* Keeps a copy of r for key (replacing an older one), made under st;
 * does nothing when the body is above CACHE_BODY_MAX or r has more than
 * CACHE_HEADERS headers. */
void cache_put(struct cache *c, const char *key, size_t keylen,
    const struct cache_reply *r, const struct cache_stamp *st);

struct cache_stats {
	uint64_t hits, misses, stored;
	size_t entries, bytes;
};
void cache_stats(const struct cache *c, struct cache_stats *out);

#endif
