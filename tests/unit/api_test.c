/*
 * The one route table of the HTTP surface (web/api.c): its matcher, and
 * that every route answers the path t0305's sweep makes for it.
 */
#include <stdint.h>
#include <string.h>

#include "tests/unit/test.h"
#include "web/api.h"
#include "web/api_int.h"
#include "web/web.h"

/* The route of method and path, its status (200 found, 404, 405) in *st. */
static const struct route *
find(const char *method, const char *path, int64_t id[2], const char **rest,
    int *st)
{
	id[0] = id[1] = -1;
	*rest = NULL;
	return api_route_find(method, path, id, rest, st);
}

TEST(test_api__ids_and_segments)
{
	const struct route *rt;
	const char *rest;
	int64_t id[2];
	int st;

	rt = find("GET", "/api/v1/jobs/12/runs/3/raw", id, &rest, &st);
	ASSERT(rt != NULL && rt->fn == api_read_raw);
	ASSERT_INTEQ(st, 200);
	ASSERT_INTEQ(id[0], 12);
	ASSERT_INTEQ(id[1], 3);
	rt = find("POST", "/api/v1/jobs/7/runs", id, &rest, &st);
	ASSERT(rt != NULL && rt->fn == api_runner_run && id[0] == 7);
	/* '*' is one segment, never empty, never two. */
	rt = find("GET", "/api/v1/packs/abc", id, &rest, &st);
	ASSERT(rt != NULL && rt->fn == api_runner_pack);
	ASSERT_STREQ(rest, "abc");
	ASSERT(find("GET", "/api/v1/packs/a/b", id, &rest, &st) == NULL);
	ASSERT_INTEQ(st, 404);
	ASSERT(find("GET", "/api/v1/packs/", id, &rest, &st) == NULL);
	/* An id is digits only, and far from overflowing 63 bits. */
	ASSERT(find("GET", "/api/v1/jobs/1x", id, &rest, &st) == NULL);
	ASSERT(find("GET", "/api/v1/jobs/99999999999999999999", id, &rest,
	           &st) == NULL);
	ASSERT_INTEQ(st, 404);
	rt = find("GET", "/api/v1/jobs/123456789012345678", id, &rest, &st);
	ASSERT(rt != NULL && rt->fn == api_read_job);
	ASSERT_INTEQ(id[0], 123456789012345678LL);
}

TEST(test_api__prefixes)
{
	const struct route *rt;
	const char *rest;
	int64_t id[2];
	int st;

	/* A pattern ending in '/' takes any non-empty rest, slashes too;
	 * its handler checks it (a bad sha is the page's 404). */
	rt = find("GET", "/commit/abc/def", id, &rest, &st);
	ASSERT(rt != NULL && rt->fn == web_commit);
	ASSERT_STREQ(rest, "abc/def");
	rt = find("POST", "/api/v1/regressions/5/triage", id, &rest, &st);
	ASSERT(
	    rt != NULL && rt->fn == web_triage_json && rt->auth == AUTH_ADMIN);
	ASSERT_STREQ(rest, "5/triage");
	/* The exact route and the prefix beside it. */
	rt = find("GET", "/api/v1/series", id, &rest, &st);
	ASSERT(rt != NULL && rt->fn == api_read_series);
	rt = find("GET", "/api/v1/series/4", id, &rest, &st);
	ASSERT(rt != NULL && rt->fn == web_series_json);
	ASSERT_STREQ(rest, "4");
	rt = find("GET", "/jobs", id, &rest, &st);
	ASSERT(rt != NULL && rt->fn == web_jobs);
	ASSERT_STREQ(rest, "");
	/* "/" is exact. */
	rt = find("GET", "/", id, &rest, &st);
	ASSERT(rt != NULL && rt->fn == web_overview);
	ASSERT(find("GET", "/nothing", id, &rest, &st) == NULL);
	ASSERT_INTEQ(st, 404);
}

TEST(test_api__method_not_allowed)
{
	const char *rest;
	int64_t id[2];
	int st;

	/* A known path with another method is 405, for pages too. */
	ASSERT(find("DELETE", "/api/v1/jobs", id, &rest, &st) == NULL);
	ASSERT_INTEQ(st, 405);
	ASSERT(find("GET", "/api/v1/jobs/claim", id, &rest, &st) == NULL);
	ASSERT_INTEQ(st, 405);
	ASSERT(find("GET", "/logout", id, &rest, &st) == NULL);
	ASSERT_INTEQ(st, 405);
	ASSERT(find("GET", "/api/v1/nothing", id, &rest, &st) == NULL);
	ASSERT_INTEQ(st, 404);
}

/* The path t0305 calls for a pattern: '#' 1, '*' x, a prefix plus "1". */
static void
concrete(char *out, size_t len, const char *pattern)
{
	size_t n = 0, plen = strlen(pattern);
	const char *p;

	for (p = pattern; *p && n + 2 < len; p++)
		out[n++] = *p == '#' ? '1' : *p == '*' ? 'x' : *p;
	if (plen > 1 && pattern[plen - 1] == '/' && n + 2 < len)
		out[n++] = '1';
	out[n] = '\0';
}

TEST(test_api__every_route_found)
{
	const char *m, *p, *a, *t, *rest;
	char path[256];
	int64_t id[2];
	size_t i, pages = 0;
	int st;

	for (i = 0; api_route_at(i, &m, &p, &a, &t) == 0; i++) {
		const struct route *rt;

		concrete(path, sizeof(path), p);
		rt = find(m, path, id, &rest, &st);
		ASSERT_MSG(rt != NULL && strcmp(rt->pattern, p) == 0,
		    "%s %s: found %s", m, path, rt ? rt->pattern : "nothing");
		ASSERT_MSG(strcmp(t, rt->page ? "web" : "api") == 0,
		    "%s %s: table %s", m, p, t);
		pages += rt->page;
	}
	ASSERT_MSG(i >= 40 && pages >= 20, "%zu routes, %zu pages", i, pages);
	ASSERT(api_route_at(i, &m, &p, &a, &t) == -1);
}
