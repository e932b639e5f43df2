/*
 * The reply cache of the public GET routes (web/cache.h): a small array
 * searched linearly, since it holds at most CACHE_ENTRIES replies.
 */
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "web/cache.h"

struct entry {
	char *key;
	size_t keylen;
	uint64_t hash;
	char *body; /* body, then content type and headers, one block */
	size_t len, size;
	const char *ctype;
	int nhdr;
	const char *hdr[2 * CACHE_HEADERS];
	struct cache_stamp st;
	uint64_t used; /* the tick of its last use */
};

struct cache {
	struct entry e[CACHE_ENTRIES];
	size_t bytes;
	uint64_t tick;
	uint64_t hits, misses, stored;
};

static uint64_t
hash_of(const char *k, size_t n)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)k[i]) * 1099511628211ULL;
	return h;
}

struct cache *
cache_new(void)
{
	return xcalloc(1, sizeof(struct cache));
}

static void
drop(struct cache *c, struct entry *e)
{
	c->bytes -= e->size;
	free(e->key);
	free(e->body);
	memset(e, 0, sizeof(*e));
}

void
cache_free(struct cache *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < CACHE_ENTRIES; i++)
		if (c->e[i].key != NULL)
			drop(c, &c->e[i]);
	free(c);
}

static struct entry *
find(struct cache *c, const char *key, size_t keylen, uint64_t h)
{
	size_t i;

	for (i = 0; i < CACHE_ENTRIES; i++) {
		struct entry *e = &c->e[i];

		if (e->key != NULL && e->hash == h && e->keylen == keylen &&
		    memcmp(e->key, key, keylen) == 0)
			return e;
	}
	return NULL;
}

static int
fresh(const struct entry *e, const struct cache_stamp *st)
{
	return e->st.v.gen == st->v.gen && e->st.conf == st->conf &&
	    st->now_ms >= e->st.now_ms &&
	    st->now_ms - e->st.now_ms < CACHE_TTL_MS;
}

int
cache_get(struct cache *c, struct cache_reply *out, const char *key,
    size_t keylen, const struct cache_stamp *st)
{
	struct entry *e = find(c, key, keylen, hash_of(key, keylen));
	int i;

	if (e == NULL || !fresh(e, st)) {
		if (e != NULL)
			drop(c, e);
		c->misses++;
		return 0;
	}
	e->used = ++c->tick;
	c->hits++;
	out->body = e->body;
	out->len = e->len;
	out->content_type = e->ctype;
	out->nhdr = e->nhdr;
	for (i = 0; i < 2 * e->nhdr; i++)
		out->hdr[i] = e->hdr[i];
	return 1;
}

/* The entry to fill: key's own, a free one, else the least recently
 * used. */
static struct entry *
slot_for(struct cache *c, const char *key, size_t keylen, uint64_t h)
{
	struct entry *e = find(c, key, keylen, h), *lru = NULL;
	size_t i;

	if (e != NULL)
		return e;
	for (i = 0; i < CACHE_ENTRIES; i++) {
		if (c->e[i].key == NULL)
			return &c->e[i];
		if (lru == NULL || c->e[i].used < lru->used)
			lru = &c->e[i];
	}
	return lru;
}

/* Makes room for size more bytes, oldest first. */
static void
shrink(struct cache *c, size_t size)
{
	while (c->bytes + size > CACHE_BYTES) {
		struct entry *lru = NULL;
		size_t i;

		for (i = 0; i < CACHE_ENTRIES; i++)
			if (c->e[i].key != NULL &&
			    (lru == NULL || c->e[i].used < lru->used))
				lru = &c->e[i];
		if (lru == NULL)
			return;
		drop(c, lru);
	}
}

void
cache_put(struct cache *c, const char *key, size_t keylen,
    const struct cache_reply *r, const struct cache_stamp *st)
{
	uint64_t h = hash_of(key, keylen);
	struct entry *e;
	size_t size = r->len + 1, i, n;
	char *p;

	if (r->len > CACHE_BODY_MAX || r->nhdr > CACHE_HEADERS || r->nhdr < 0)
		return;
	size += strlen(r->content_type ? r->content_type : "") + 1;
	for (i = 0; i < 2 * (size_t)r->nhdr; i++)
		size += strlen(r->hdr[i]) + 1;
	e = slot_for(c, key, keylen, h);
	if (e->key != NULL)
		drop(c, e);
	shrink(c, size);
	e->key = xmalloc(keylen + 1);
	memcpy(e->key, key, keylen);
	e->key[keylen] = '\0';
	e->keylen = keylen;
	e->hash = h;
	e->body = p = xmalloc(size);
	e->size = size;
	memcpy(p, r->body, r->len);
	p[r->len] = '\0';
	p += r->len + 1;
	e->len = r->len;
	n = strlen(r->content_type ? r->content_type : "") + 1;
	memcpy(p, r->content_type ? r->content_type : "", n);
	e->ctype = p;
	p += n;
	for (i = 0; i < 2 * (size_t)r->nhdr; i++) {
		n = strlen(r->hdr[i]) + 1;
		memcpy(p, r->hdr[i], n);
		e->hdr[i] = p;
		p += n;
	}
	e->nhdr = r->nhdr;
	e->st = *st;
	e->used = ++c->tick;
	c->bytes += size;
	c->stored++;
}

void
cache_stats(const struct cache *c, struct cache_stats *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->hits = c->hits;
	out->misses = c->misses;
	out->stored = c->stored;
	out->bytes = c->bytes;
	for (i = 0; i < CACHE_ENTRIES; i++)
		out->entries += c->e[i].key != NULL;
}
