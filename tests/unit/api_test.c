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

/*
 * What the table answers for method and path: the handler (NULL: none),
 * the status (200, 404 no route, 405 another method's path), the ids and
 * the rest (a '*' segment or a prefix's rest).
 */
static const struct {
	const char *method, *path;
	api_handler *fn;
	int status;
	int64_t id0, id1;
	const char *rest;
} cases[] = {
	/* '#' ids, two at most; digits only, far from overflowing. */
	{ "GET", "/api/v1/jobs/12/runs/3/raw", api_read_raw, 200, 12, 3, "" },
	{ "POST", "/api/v1/jobs/7/runs", api_runner_run, 200, 7, -1, "" },
	{ "GET", "/api/v1/jobs/123456789012345678", api_read_job, 200,
	    123456789012345678LL, -1, "" },
	{ "GET", "/api/v1/jobs/1x", NULL, 404, -1, -1, "" },
	{ "GET", "/api/v1/jobs/99999999999999999999", NULL, 404, -1, -1, "" },
	/* '*' is one segment, never empty, never two. */
	{ "GET", "/api/v1/packs/abc", api_runner_pack, 200, -1, -1, "abc" },
	{ "GET", "/api/v1/packs/a/b", NULL, 404, -1, -1, "" },
	{ "GET", "/api/v1/packs/", NULL, 404, -1, -1, "" },
	/* A pattern ending in '/' takes any non-empty rest, slashes too;
	 * its handler checks it (a bad sha is the page's 404). */
	{ "GET", "/commit/abc/def", web_commit, 200, -1, -1, "abc/def" },
	{ "POST", "/api/v1/regressions/5/triage", web_triage_json, 200, -1, -1,
	    "5/triage" },
	/* An exact route beside a prefix. */
	{ "GET", "/api/v1/series", api_read_series, 200, -1, -1, "" },
	{ "GET", "/api/v1/series/4", web_series_json, 200, -1, -1, "4" },
	{ "GET", "/jobs", web_jobs, 200, -1, -1, "" },
	{ "GET", "/jobs/3/log", web_job, 200, -1, -1, "3/log" },
	{ "GET", "/jobs/3", web_job, 200, -1, -1, "3" },
	{ "GET", "/series", web_series_list, 200, -1, -1, "" },
	{ "GET", "/series/4", web_series, 200, -1, -1, "4" },
	{ "GET", "/bisect", web_bisects, 200, -1, -1, "" },
	{ "GET", "/alerts", web_alerts, 200, -1, -1, "" },
	/* "/" is exact. */
	{ "GET", "/", web_overview, 200, -1, -1, "" },
	{ "GET", "/nothing", NULL, 404, -1, -1, "" },
	/* A known path with another method is 405, for pages too. */
	{ "DELETE", "/api/v1/jobs", NULL, 405, -1, -1, "" },
	{ "GET", "/api/v1/jobs/claim", NULL, 405, -1, -1, "" },
	{ "GET", "/logout", NULL, 405, -1, -1, "" },
	{ "GET", "/api/v1/nothing", NULL, 404, -1, -1, "" },
};

TEST(test_api__matcher)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct route *rt;
		const char *rest = NULL;
		int64_t id[2] = { -1, -1 };
		int st = 0;

		rt = api_route_find(
		    cases[i].method, cases[i].path, id, &rest, &st);
		ASSERT_MSG(st == cases[i].status, "%s %s: status %d, want %d",
		    cases[i].method, cases[i].path, st, cases[i].status);
		ASSERT_MSG((rt ? rt->fn : NULL) == cases[i].fn,
		    "%s %s: another handler", cases[i].method, cases[i].path);
		if (rt == NULL)
			continue;
		ASSERT_MSG(id[0] == cases[i].id0 && id[1] == cases[i].id1,
		    "%s %s: ids %lld %lld", cases[i].method, cases[i].path,
		    (long long)id[0], (long long)id[1]);
		ASSERT_STREQ(rest, cases[i].rest);
	}
}

TEST(test_api__auth)
{
	const struct route *rt;
	const char *rest;
	int64_t id[2];
	int st;

	/* The dashboard's triage: the admin token for its JSON, a session
	 * for its form; the runner's routes want a runner. */
	rt = api_route_find(
	    "POST", "/api/v1/regressions/5/triage", id, &rest, &st);
	ASSERT(rt != NULL && rt->auth == AUTH_ADMIN && rt->page);
	rt = api_route_find("POST", "/regressions/5/triage", id, &rest, &st);
	ASSERT(rt != NULL && rt->auth == AUTH_SESSION && rt->page);
	rt = api_route_find("POST", "/api/v1/jobs/claim", id, &rest, &st);
	ASSERT(rt != NULL && rt->auth == AUTH_RUNNER && !rt->page);
	rt = api_route_find("POST", "/login", id, &rest, &st);
	ASSERT(rt != NULL && rt->auth == AUTH_NONE);
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
		rt = api_route_find(m, path, id, &rest, &st);
		ASSERT_MSG(rt != NULL && strcmp(rt->pattern, p) == 0,
		    "%s %s: found %s", m, path, rt ? rt->pattern : "nothing");
		ASSERT_MSG(strcmp(t, rt->page ? "web" : "api") == 0,
		    "%s %s: table %s", m, p, t);
		pages += rt->page;
	}
	ASSERT_MSG(i >= 40 && pages >= 20, "%zu routes, %zu pages", i, pages);
	ASSERT(api_route_at(i, &m, &p, &a, &t) == -1);
}
