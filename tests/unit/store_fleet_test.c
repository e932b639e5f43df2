/*
 * The store's fleet additions (store/hosts.c): explicit sibling
 * groups, so a push of many commits spreads over every runner while the
 * cgroup points of one candidate share a host.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/claim.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/pairs.h"
#include "store/store.h"
#include "tests/unit/test.h"

/* A pair of job j at point cgroup=cg measuring candidate commit csha. */
static int64_t
mkpair(struct store *s, const char *cg, const char *csha, int64_t at)
{
	char *spec[2], *label = xasprintf("cgroup=%s", cg);
	int64_t pair;
	int k;

	for (k = 0; k < 2; k++)
		spec[k] = xasprintf("{\"params\":{\"cgroup\":\"%s\"},"
		                    "\"point\":\"%s\",\"cgroup\":{\"path\":"
		                    "\"%s\",\"memory_max\":0},\"tree\":"
		                    "{\"commit\":\"%s\"}}",
		    cg, label, cg, k ? csha : "base0");
	pair = test_pair_new(s, "j", label, spec[0], spec[1], at, NULL);
	free(spec[0]);
	free(spec[1]);
	free(label);
	return pair;
}

/* host claims a job and finishes it at once: the job's pair, or 0. */
static int64_t
claim_pair(struct store *s, int64_t host)
{
	struct store_claimed c;
	int64_t pair;

	if (store_claim(s, &c, host, 100, 60) != 0)
		return 0;
	pair = c.pair_id;
	if (store_finish(s, host, c.job_id, 1, NULL, 101) != 0)
		pair = 0;
	store_claimed_release(&c);
	return pair;
}

/*
 * Twelve commits of one push, made in the same second (one trigger) with
 * a root and a nested point each: three hosts claiming in turn each get
 * work, and every commit's two points are on one host.
 */
TEST(test_store_fleet__push_spreads_siblings_stay)
{
	struct store *s = test_store_open("spread.db");
	int64_t h[3], root[12], nest[12], g1, g2, pair;
	int got[3] = { 0, 0, 0 }, i, k;
	struct store_pair a, b;

	ASSERT(s != NULL);
	for (k = 0; k < 3; k++) {
		char name[16];

		snprintf(name, sizeof(name), "h%d", k);
		ASSERT(store_host_register(s, &h[k], name, "[]", "{}", 1) == 0);
	}
	for (i = 0; i < 12; i++) {
		char sha[16];

		snprintf(sha, sizeof(sha), "c%02d", i);
		store_group_begin(s); /* one candidate of the trigger */
		root[i] = mkpair(s, "root", sha, 50);
		nest[i] = mkpair(s, "/a/b", sha, 50);
		store_group_end(s);
		ASSERT(root[i] > 0 && nest[i] > 0);
		ASSERT(store_pair_group(s, &g1, root[i]) == 0);
		ASSERT(store_pair_group(s, &g2, nest[i]) == 0);
		ASSERT_INTEQ(g1, root[i]);
		ASSERT_INTEQ(g2, root[i]);
	}
	/* The hosts claim in turn: none finds the queue bound elsewhere. */
	for (i = 0; i < 4; i++)
		for (k = 0; k < 3; k++) {
			pair = claim_pair(s, h[k]);
			ASSERT_MSG(
			    pair > 0, "claim %d of h%d found nothing", i, k);
			got[k]++;
		}
	for (k = 0; k < 3; k++)
		ASSERT_INTEQ(got[k], 4);
	/* Every commit claimed so far has both points on one host. */
	for (i = 0; i < 12; i++) {
		ASSERT(store_pair_get(s, &a, root[i]) == 0);
		ASSERT(store_pair_get(s, &b, nest[i]) == 0);
		ASSERT(a.host == b.host ||
		    (a.host && b.host && strcmp(a.host, b.host) == 0));
		store_pair_release(&a);
		store_pair_release(&b);
	}
	store_close(s);
}

/* Pairs made outside a scope, or in two scopes of the same second, are
 * groups of their own: the creation time decides nothing. */
TEST(test_store_fleet__no_group_from_timestamps)
{
	struct store *s = test_store_open("apart.db");
	int64_t p1, p2, p3, g1, g2, g3;

	ASSERT(s != NULL);
	p1 = mkpair(s, "root", "c1", 7);
	p2 = mkpair(s, "/n", "c1", 7);
	store_group_begin(s);
	p3 = mkpair(s, "/n", "c1", 7);
	store_group_end(s);
	ASSERT(store_pair_group(s, &g1, p1) == 0);
	ASSERT(store_pair_group(s, &g2, p2) == 0);
	ASSERT(store_pair_group(s, &g3, p3) == 0);
	ASSERT_INTEQ(g1, p1);
	ASSERT_INTEQ(g2, p2);
	ASSERT_INTEQ(g3, p3);
	ASSERT_INTEQ(store_pair_group(s, &g1, 999), ERR_NOTFOUND);
	store_close(s);
}

/* Upgrading a v7 database groups its pairs by the old rule (name and
 * creation time), so pairs in flight keep their memcg tax. */
TEST(test_store_fleet__migration_keeps_old_groups)
{
	SKIP_ON_PG("SQLite's schema steps from an older version");

	struct store *s = NULL;
	struct err e = { 0 };
	char *p = test_store_at("old7.db");
	int64_t p1, p2, p3, g;

	ASSERT(store_open_version(&s, p, 7, &e) == 0);
	p1 = mkpair(s, "root", "c1", 7);
	p2 = mkpair(s, "/n", "c1", 7);
	p3 = mkpair(s, "/n", "c1", 8);
	store_close(s);
	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	ASSERT(store_pair_group(s, &g, p2) == 0);
	ASSERT_INTEQ(g, p1);
	ASSERT(store_pair_group(s, &g, p3) == 0);
	ASSERT_INTEQ(g, p3);
	store_close(s);
	free(p);
}
