#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "tests/unit/test.h"
#include "web/cache.h"

static const int conf_a = 1, conf_b = 2;

static struct cache_stamp
stamp(int64_t gen, const void *conf, int64_t ms)
{
	struct cache_stamp st;

	memset(&st, 0, sizeof(st));
	st.v.gen = gen;
	st.conf = conf;
	st.now_ms = ms;
	return st;
}

static struct cache_reply
reply(const char *body)
{
	struct cache_reply r;

	memset(&r, 0, sizeof(r));
	r.body = body;
	r.len = strlen(body);
	r.content_type = "text/html; charset=utf-8";
	r.nhdr = 2;
	r.hdr[0] = "X-Frame-Options";
	r.hdr[1] = "DENY";
	r.hdr[2] = "Cache-Control";
	r.hdr[3] = "no-cache";
	return r;
}

static int
has(struct cache *c, const char *key, struct cache_stamp st)
{
	struct cache_reply r;

	return cache_get(c, &r, key, strlen(key), &st);
}

TEST(test_cache__keeps_the_reply_bytes_type_and_headers)
{
	struct cache *c = cache_new();
	struct cache_stamp st = stamp(7, &conf_a, 1000);
	struct cache_reply in = reply("<p>a \0 b</p>"), out;

	in.len = 12; /* with the NUL inside */
	cache_put(c, "/pair/1?", 8, &in, &st);
	st.now_ms = 1500;
	ASSERT(cache_get(c, &out, "/pair/1?", 8, &st) == 1);
	ASSERT_INTEQ(out.len, 12);
	ASSERT(memcmp(out.body, "<p>a \0 b</p>", 12) == 0);
	ASSERT_STREQ(out.content_type, "text/html; charset=utf-8");
	ASSERT_INTEQ(out.nhdr, 2);
	ASSERT_STREQ(out.hdr[0], "X-Frame-Options");
	ASSERT_STREQ(out.hdr[3], "no-cache");
	/* The query is part of the key. */
	ASSERT(!has(c,
	    "/pair/1?x\x1f"
	    "1\x1e",
	    st));
	ASSERT(!has(c, "/pair/10?", st));
	cache_free(c);
}

/* A commit by any connection (data), one by the reader's own connection
 * (own), a reload (conf) and the clock each make the entry stale. */
TEST(test_cache__a_change_or_a_second_makes_it_stale)
{
	struct cache *c = cache_new();
	struct cache_stamp st = stamp(7, &conf_a, 1000);
	struct cache_reply in = reply("x");
	struct cache_stats cs;

	cache_put(c, "k", 1, &in, &st);
	ASSERT(has(c, "k", stamp(7, &conf_a, 1999)));
	ASSERT(!has(c, "k", stamp(8, &conf_a, 1001)));
	/* A stale entry is dropped, not served later. */
	ASSERT(!has(c, "k", stamp(7, &conf_a, 1001)));
	cache_put(c, "k", 1, &in, &st);
	ASSERT(!has(c, "k", stamp(7, &conf_b, 1001)));
	cache_put(c, "k", 1, &in, &st);
	ASSERT(!has(c, "k", stamp(7, &conf_a, 1000 + CACHE_TTL_MS)));
	cache_put(c, "k", 1, &in, &st);
	ASSERT(!has(c, "k", stamp(7, &conf_a, 999))); /* clock went back */
	cache_stats(c, &cs);
	ASSERT_INTEQ(cs.hits, 1);
	ASSERT_INTEQ(cs.misses, 5);
	ASSERT_INTEQ(cs.entries, 0);
	ASSERT_INTEQ(cs.bytes, 0);
	cache_free(c);
}

TEST(test_cache__replacing_a_key_keeps_one_entry)
{
	struct cache *c = cache_new();
	struct cache_stamp st = stamp(1, &conf_a, 0);
	struct cache_reply a = reply("first"), b = reply("second"), out;
	struct cache_stats cs;

	cache_put(c, "k", 1, &a, &st);
	st.v.gen = 2;
	cache_put(c, "k", 1, &b, &st);
	cache_stats(c, &cs);
	ASSERT_INTEQ(cs.entries, 1);
	ASSERT(cache_get(c, &out, "k", 1, &st) == 1);
	ASSERT(out.len == 6 && memcmp(out.body, "second", 6) == 0);
	cache_free(c);
}

/* At most CACHE_ENTRIES entries: the least recently used goes. */
TEST(test_cache__the_least_recently_used_goes_first)
{
	struct cache *c = cache_new();
	struct cache_stamp st = stamp(1, &conf_a, 0);
	struct cache_reply in = reply("v");
	struct cache_stats cs;
	char key[32];
	int i;

	for (i = 0; i < CACHE_ENTRIES; i++) {
		snprintf(key, sizeof(key), "/k/%d", i);
		cache_put(c, key, strlen(key), &in, &st);
	}
	ASSERT(has(c, "/k/0", st)); /* now the most recent */
	cache_put(c, "/new", 4, &in, &st);
	cache_stats(c, &cs);
	ASSERT_INTEQ(cs.entries, CACHE_ENTRIES);
	ASSERT(has(c, "/k/0", st));
	ASSERT(!has(c, "/k/1", st));
	ASSERT(has(c, "/k/2", st));
	ASSERT(has(c, "/new", st));
	cache_free(c);
}

/* At most CACHE_BYTES of bodies; a body above CACHE_BODY_MAX is not
 * kept at all. */
TEST(test_cache__bytes_are_bounded)
{
	struct cache *c = cache_new();
	struct cache_stamp st = stamp(1, &conf_a, 0);
	struct cache_reply in = reply("");
	struct cache_stats cs;
	char *big = xmalloc(CACHE_BODY_MAX + 1), key[32];
	int i, n = 2 * CACHE_BYTES / CACHE_BODY_MAX;

	memset(big, 'b', CACHE_BODY_MAX + 1);
	in.body = big;
	in.len = CACHE_BODY_MAX + 1;
	cache_put(c, "huge", 4, &in, &st);
	ASSERT(!has(c, "huge", st));
	in.len = CACHE_BODY_MAX;
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "/b/%d", i);
		cache_put(c, key, strlen(key), &in, &st);
	}
	cache_stats(c, &cs);
	ASSERT_MSG(cs.bytes <= CACHE_BYTES, "%zu bytes", cs.bytes);
	ASSERT(cs.entries < (size_t)n && cs.entries > 0);
	snprintf(key, sizeof(key), "/b/%d", n - 1);
	ASSERT(has(c, key, st)); /* the newest stays */
	ASSERT(!has(c, "/b/0", st));
	/* More headers than an entry holds: not kept. */
	in = reply("h");
	in.nhdr = CACHE_HEADERS + 1;
	cache_put(c, "hdrs", 4, &in, &st);
	ASSERT(!has(c, "hdrs", st));
	free(big);
	cache_free(c);
}
