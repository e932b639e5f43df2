/*
 * Shared kernel builds in the store (store/builds.h): the build key
 * (the compiler in it), the dedup of kernel jobs onto builds, a build
 * cancelled, the build a job waits on, a build's log capped, and the
 * eviction policy of the artifact store (least recently used first,
 * never an artifact a queued or running job or a running build needs,
 * uploads in progress counted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/err.h"
#include "common/xalloc.h"
#include "store/builds.h"
#include "store/claim.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/store.h"
#include "tests/unit/test.h"

/* A pair of kernel jobs on commits b and c with base config cfg and
 * kernel.compiler cc (NULL: none named). */
static int64_t
kpair_cc(struct store *s, const char *cfg, const char *cc, const char *b,
    const char *c, int64_t *jobs)
{
	char *spec[2];
	int64_t pair;
	int k;

	for (k = 0; k < 2; k++)
		spec[k] = xasprintf("{\"tree\":{\"url\":\"/src/linux\","
		                    "\"commit\":\"%s\"},\"kernel\":{\"config\":"
		                    "\"%s\",\"fragment\":[\"CONFIG_MEMCG=y\"],"
		                    "%s%s%s\"build_timeout_s\":60}}",
		    k ? c : b, cfg, cc ? "\"compiler\":\"" : "", cc ? cc : "",
		    cc ? "\"," : "");
	pair = test_pair_new(s, "k", "", spec[0], spec[1], 100, jobs);
	free(spec[0]);
	free(spec[1]);
	return pair;
}

static int64_t
kpair(struct store *s, const char *cfg, const char *b, const char *c,
    int64_t *jobs)
{
	return kpair_cc(s, cfg, NULL, b, c, jobs);
}

static int64_t
nbuilds(struct store *s)
{
	struct store_builds l;
	int64_t n;

	if (store_build_list(s, &l, NULL, 500, 0) != 0)
		return -1;
	n = (int64_t)l.n;
	store_builds_release(&l);
	return n;
}

TEST(build_key)
{
	/* python3: hashlib.sha256(b"pw-build-2\0tinyconfig\0CONFIG_A=y\n"
	 * b"CONFIG_B=y\0gcc\0-falign-functions=64\0x86_64")
	 * .hexdigest()[:16] */
	const char *frag[] = { "CONFIG_A=y", "CONFIG_B=y" };
	char k1[17], k2[17], k3[17];

	store_build_key(k1, "tinyconfig", frag, 2, "gcc", "x86_64");
	ASSERT_STREQ(k1, "53a4120b26e15643");
	/* Every input counts, the order of fragment lines too. */
	store_build_key(k2, "defconfig", frag, 2, "gcc", "x86_64");
	ASSERT(strcmp(k1, k2) != 0);
	{
		const char *rev[] = { "CONFIG_B=y", "CONFIG_A=y" };

		store_build_key(k3, "tinyconfig", rev, 2, "gcc", "x86_64");
		ASSERT(strcmp(k1, k3) != 0);
	}
	store_build_key(k3, "tinyconfig", frag, 2, "gcc", "arm64");
	ASSERT(strcmp(k1, k3) != 0);
	/* The compiler is the kernel's: another one, another build. */
	store_build_key(k3, "tinyconfig", frag, 2, "clang", "x86_64");
	ASSERT(strcmp(k1, k3) != 0);
	store_build_key(k3, "tinyconfig", frag, 2, "gcc-12", "x86_64");
	ASSERT(strcmp(k1, k3) != 0);
	/* The separators keep "a" + "b\n" apart from "a\nb" + "". */
	{
		const char *one[] = { "x\ny" }, *two[] = { "x", "y" };

		store_build_key(k2, "c", one, 1, "gcc", "x86_64");
		store_build_key(k3, "c", two, 2, "gcc", "x86_64");
		ASSERT_STREQ(k2, k3); /* joined by "\n": the same text */
		store_build_key(k3, "c\nx", one, 0, "gcc", "x86_64");
		ASSERT(strcmp(k2, k3) != 0);
	}
}

TEST(build_dedup)
{
	struct store *s = test_store_open("dedup.db");
	int64_t jobs[2], more[2];

	ASSERT(s != NULL);
	/* Shared off: nothing is linked. */
	store_builds_share(0);
	ASSERT(kpair(s, "tinyconfig", "aaaa", "bbbb", NULL) > 0);
	ASSERT(nbuilds(s) == 0);
	store_builds_share(1);
	/* Two pairs on one commit pair: two builds, four links. */
	ASSERT(kpair(s, "tinyconfig", "aaaa", "bbbb", jobs) > 0);
	ASSERT(kpair(s, "tinyconfig", "aaaa", "bbbb", more) > 0);
	ASSERT(nbuilds(s) == 2);
	/* An A/A pair and another config: one more each. */
	ASSERT(kpair(s, "tinyconfig", "cccc", "cccc", NULL) > 0);
	ASSERT(nbuilds(s) == 3);
	ASSERT(kpair(s, "defconfig", "aaaa", "bbbb", NULL) > 0);
	ASSERT(nbuilds(s) == 5);
	/* The host's own config is never shared. */
	ASSERT(kpair(s, "running", "aaaa", "bbbb", NULL) > 0);
	ASSERT(nbuilds(s) == 5);
	{
		int64_t by[5], reuses = 0;

		ASSERT(store_builds_counts(s, by, &reuses) == 0);
		ASSERT(by[0] == 5);
		ASSERT(reuses == 3); /* the second pair's two, the A/A's one */
	}
	/* A failed build is not reused: a new pair queues a new one. */
	{
		struct store_build_claimed c;
		struct store_build_result res = { 0 };
		int nfail = 0;

		ASSERT(store_host_register(
		           s, &jobs[0], "b1", "[]", "{}", 100) == 0);
		ASSERT(store_build_claim(s, &c, jobs[0], 100, 60) == 0);
		ASSERT(c.id == 1 && c.attempt == 1);
		res.error = "build: make: exit 2: boom\nmore";
		res.build_s = -1;
		res.incremental = -1;
		ASSERT(store_build_finish(
		           s, &nfail, jobs[0], c.id, &res, 101) == 0);
		ASSERT(nfail == 2); /* the bases of both pairs */
		store_build_claimed_release(&c);
		ASSERT(kpair(s, "tinyconfig", "aaaa", "bbbb", NULL) > 0);
		ASSERT(nbuilds(s) == 6);
	}
	/* Naming gcc is naming no compiler: the A/A pair's build again.
	 * Another compiler is another build, handed to its builder. */
	ASSERT(kpair_cc(s, "tinyconfig", "gcc", "cccc", "cccc", NULL) > 0);
	ASSERT(nbuilds(s) == 6);
	ASSERT(kpair_cc(s, "tinyconfig", "clang-17", "cccc", "cccc", NULL) > 0);
	ASSERT(nbuilds(s) == 7);
	{
		struct store_builds l;

		ASSERT(store_build_list(s, &l, NULL, 2, 0) == 0);
		ASSERT(l.n == 2);
		ASSERT_STREQ(l.v[0].cc, "clang-17");
		ASSERT_STREQ(l.v[1].cc, "gcc");
		ASSERT(strcmp(l.v[0].key, l.v[1].key) != 0);
		store_builds_release(&l);
	}
	store_builds_share(0);
	store_close(s);
}

/* The job's error, or "" (a static copy). */
static const char *
job_error(struct store *s, int64_t id)
{
	static char out[256];
	struct store_job_detail d;

	out[0] = '\0';
	if (store_job_get(s, &d, id) == 0 && d.job.error != NULL)
		snprintf(out, sizeof(out), "%s", d.job.error);
	store_job_detail_release(&d);
	return out;
}

TEST(build_cancel)
{
	struct store *s = test_store_open("cancel.db");
	struct store_build_claimed c;
	struct store_job_build jb;
	int64_t host, jobs[2], exp = 0;
	int nfail = 0;

	ASSERT(s != NULL);
	store_builds_share(1);
	ASSERT(store_host_register(s, &host, "b1", "[]", "{}", 100) == 0);
	ASSERT(kpair(s, "tinyconfig", "aaaa", "bbbb", jobs) > 0);
	ASSERT(store_job_build_get(s, &jb, jobs[1]) == 0);
	ASSERT(jb.id == 2);
	ASSERT_STREQ(jb.state, "queued");
	ASSERT(jb.error == NULL);
	store_job_build_release(&jb);
	/* A running build: its builder loses the lease, its job fails. */
	ASSERT(store_build_claim(s, &c, host, 100, 60) == 0);
	ASSERT(c.id == 1);
	store_build_claimed_release(&c);
	ASSERT(store_build_cancel(
	           s, &nfail, 1, "cancelled by the operator", 110) == 0);
	ASSERT(nfail == 1);
	ASSERT(
	    store_build_heartbeat(s, &exp, host, 1, 111, 60) == ERR_CONFLICT);
	ASSERT_STREQ(job_error(s, jobs[0]),
	    "build cancelled: build 1: cancelled by the operator");
	ASSERT(store_job_build_get(s, &jb, jobs[0]) == 0);
	ASSERT(jb.id == 1);
	ASSERT_STREQ(jb.state, "cancelled");
	ASSERT_STREQ(jb.error, "cancelled by the operator");
	store_job_build_release(&jb);
	/* Once ended, no second cancel; no such build. */
	ASSERT(store_build_cancel(s, NULL, 1, "x", 112) == ERR_CONFLICT);
	ASSERT(strstr(store_errmsg(s), "build 1 is cancelled") != NULL);
	ASSERT(store_build_cancel(s, NULL, 99, "x", 112) == ERR_NOTFOUND);
	/* A queued build; its job fails too. */
	ASSERT(store_build_cancel(
	           s, &nfail, 2, "cancelled by the operator", 113) == 0);
	ASSERT(nfail == 1);
	/* A job retried after its build was cancelled gets a new build. */
	ASSERT(store_retry(s, jobs[0], 120) == 0);
	ASSERT(store_job_build_get(s, &jb, jobs[0]) == 0);
	ASSERT(jb.id == 3);
	ASSERT_STREQ(jb.state, "queued");
	store_job_build_release(&jb);
	/* A job that is no shared kernel job waits on no build. */
	store_builds_share(0);
	ASSERT(kpair(s, "tinyconfig", "aaaa", "bbbb", jobs) > 0);
	ASSERT(store_job_build_get(s, &jb, jobs[0]) == 0);
	ASSERT(jb.id == 0 && jb.state == NULL);
	store_job_build_release(&jb);
	ASSERT(store_job_build_get(s, &jb, 999) == ERR_NOTFOUND);
	{
		/* Several jobs' builds in one read, each as its own read
		 * gives it; a job asked twice; a missing job fails all. */
		struct store_job_build many[3], one;
		int64_t ids[3] = { 1, jobs[0], 1 }, bad[2] = { 1, 999 };
		size_t i;

		ASSERT(store_job_build_get_many(s, many, ids, 3) == 0);
		ASSERT(many[0].id == 3 && many[2].id == 3 && many[1].id == 0);
		for (i = 0; i < 3; i++) {
			ASSERT(store_job_build_get(s, &one, ids[i]) == 0);
			ASSERT(many[i].id == one.id);
			ASSERT((many[i].state == NULL) == (one.state == NULL));
			ASSERT(one.state == NULL ||
			    strcmp(many[i].state, one.state) == 0);
			ASSERT((many[i].error == NULL) == (one.error == NULL));
			ASSERT(one.error == NULL ||
			    strcmp(many[i].error, one.error) == 0);
			store_job_build_release(&one);
			store_job_build_release(&many[i]);
		}
		ASSERT(
		    store_job_build_get_many(s, many, bad, 2) == ERR_NOTFOUND);
		ASSERT(many[0].state == NULL && many[1].state == NULL);
		ASSERT(store_job_build_get_many(s, many, ids, 0) == 0);
	}
	store_close(s);
}

/* A build's log takes CAP_JOB_LOG bytes, then its marker; only the
 * holder of its lease appends. */
/*
 * A builder's claim whose answer was lost, sent again with the same
 * claim id (store_claim_as), gets the build back as the same attempt;
 * with another id, or none, it is one more.
 */
TEST(build_claim_id_repeat)
{
	struct store *s = test_store_open("claimid.db");
	struct store_build_claimed c;
	int64_t host, jobs[2], id = 0;
	static const struct {
		const char *key;
		int64_t attempt;
		int repeated;
	} tries[] = { { "b-1", 1, 0 }, { "b-1", 1, 1 }, { "b-2", 2, 0 },
		{ NULL, 3, 0 }, { "b-1", 4, 0 } };
	size_t i;

	ASSERT(s != NULL);
	store_builds_share(1);
	ASSERT(store_host_register(s, &host, "b1", "[]", "{}", 100) == 0);
	ASSERT(kpair(s, "tinyconfig", "aaaa", "bbbb", jobs) > 0);
	for (i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		ASSERT(store_build_claim_as(s, &c, host, 100 + (int64_t)i, 60,
		           tries[i].key) == 0);
		if (i == 0)
			id = c.id;
		ASSERT_INTEQ(c.id, id);
		ASSERT_INTEQ(c.attempt, tries[i].attempt);
		ASSERT_INTEQ(c.repeated, tries[i].repeated);
		store_build_claimed_release(&c);
	}
	store_builds_share(0);
	store_close(s);
}

TEST(build_log_capped)
{
	struct store *s = test_store_open("log.db");
	struct store_build_claimed c;
	struct store_build_row b;
	int64_t host, other, jobs[2];
	size_t kept = 0, total = 0, len = CAP_LOG_APPEND;
	char *chunk = xmalloc(len);
	int i;

	ASSERT(s != NULL);
	memset(chunk, 'x', len);
	store_builds_share(1);
	ASSERT(store_host_register(s, &host, "b1", "[]", "{}", 100) == 0);
	ASSERT(store_host_register(s, &other, "b2", "[]", "{}", 100) == 0);
	ASSERT(kpair(s, "tinyconfig", "aaaa", "bbbb", jobs) > 0);
	ASSERT(store_build_claim(s, &c, host, 100, 60) == 0);
	ASSERT_INTEQ(
	    store_build_log(s, &kept, other, c.id, "x", 1, 100), ERR_CONFLICT);
	for (i = 0; i < CAP_JOB_LOG / CAP_LOG_APPEND + 3; i++) {
		ASSERT(store_build_log(s, &kept, host, c.id, chunk, len, 101) ==
		    0);
		total += kept;
	}
	ASSERT_INTEQ(total, CAP_JOB_LOG);
	ASSERT(store_build_get(s, &b, c.id) == 0);
	ASSERT(strstr(b.log, "[log truncated]") != NULL);
	store_build_row_release(&b);
	store_build_claimed_release(&c);
	store_builds_share(0);
	free(chunk);
	store_close(s);
}

/* Claims the next build for host, stores files of the given sizes and
 * finishes it: its id, or -1. */
static int64_t
build_done(struct store *s, int64_t host, int64_t bz, int64_t now)
{
	static const char *const names[] = { "bzImage", "config", "System.map",
		"meta" };
	struct store_build_claimed c;
	struct store_build_result res = { 1, NULL, "6.1", NULL, NULL, 1, 0 };
	char sha[65];
	int64_t id;
	int i;

	if (store_build_claim(s, &c, host, now, 60) != 0)
		return -1;
	id = c.id;
	store_build_claimed_release(&c);
	for (i = 0; i < 4; i++) {
		snprintf(sha, sizeof(sha), "%02lld%062d", (long long)id, i);
		if (store_build_file(
		        s, host, id, names[i], sha, i == 0 ? bz : 10, now) != 0)
			return -1;
	}
	if (store_build_finish(s, NULL, host, id, &res, now) != 0)
		return -1;
	return id;
}

TEST(eviction_policy)
{
	struct store *s = test_store_open("evict.db");
	struct store_claimed cl;
	char **v = NULL;
	size_t n = 0, i;
	int64_t host, j1[2], j2[2], b1, b2, held;
	int r;

	ASSERT(s != NULL);
	store_builds_share(1);
	ASSERT(store_host_register(s, &host, "b1", "[]", "{}", 100) == 0);
	ASSERT(kpair(s, "tinyconfig", "1111", "1111", j1) > 0);
	ASSERT(kpair(s, "tinyconfig", "2222", "2222", j2) > 0);
	b1 = build_done(s, host, 1000, 100);
	b2 = build_done(s, host, 1000, 200);
	ASSERT(b1 == 1 && b2 == 2);
	ASSERT(store_artifacts_bytes(s, &held) == 0);
	ASSERT(held == 2 * 1030);
	/* Room enough: nothing goes. */
	ASSERT(store_artifacts_make_room(s, &v, &n, 100, 0, 4000) == 0);
	ASSERT(n == 0);
	/* Uploads in progress count as stored: the same 100 bytes do not
	 * fit beside 1900 promised ones. */
	r = store_artifacts_make_room(s, &v, &n, 100, 1900, 4000);
	ASSERT(r == ERR_TOOBIG && n == 0);
	ASSERT_STREQ(store_errmsg(s),
	    "artifact store full (builds.max_size 4000): 2060 bytes held by "
	    "builds that queued jobs need, 1900 promised to uploads in "
	    "progress");
	store_errclear(s);
	/* Both builds have queued jobs: nothing may go. */
	r = store_artifacts_make_room(s, &v, &n, 3000, 0, 4000);
	ASSERT(r == ERR_TOOBIG && n == 0);
	ASSERT_STREQ(store_errmsg(s),
	    "artifact store full (builds.max_size 4000): 2060 bytes held by "
	    "builds that queued jobs need");
	/* Build 1's jobs run and finish: its artifacts may go, build 2's
	 * (jobs queued) may not. */
	for (i = 0; i < 2; i++) {
		ASSERT(store_claim(s, &cl, host, 300, 60) == 0);
		ASSERT(cl.pair_id == 1);
		ASSERT(cl.image_json != NULL);
		ASSERT(strstr(cl.image_json, "\"build\":1") != NULL);
		ASSERT(store_finish(s, host, cl.job_id, 1, NULL, 301) == 0);
		store_claimed_release(&cl);
	}
	/* A used artifact of build 2 is newer; the LRU one of build 1 goes
	 * first, then only as many as needed. */
	ASSERT(store_artifacts_make_room(s, &v, &n, 1950, 0, 4000) == 0);
	ASSERT(n == 1);
	ASSERT(strncmp(v[0], "01", 2) == 0);
	store_build_victims_release(v, n);
	{
		struct store_build_row r1, r2;

		ASSERT(store_build_get(s, &r1, b1) == 0);
		ASSERT(store_build_get(s, &r2, b2) == 0);
		ASSERT(r1.evicted == 1 && r2.evicted == 0);
		store_build_row_release(&r1);
		store_build_row_release(&r2);
	}
	/* More than build 1 holds: refused, build 2 untouched. */
	r = store_artifacts_make_room(s, &v, &n, 3900, 0, 4000);
	ASSERT(r == ERR_TOOBIG && n == 0);
	ASSERT(store_artifacts_bytes(s, &held) == 0);
	ASSERT(held == 30 + 1030);
	/* An evicted build is not reused: the same key queues a new one. */
	ASSERT(kpair(s, "tinyconfig", "1111", "1111", NULL) > 0);
	ASSERT(nbuilds(s) == 3);
	/* A running build's files are never evicted, even unneeded by
	 * jobs: build 3 holds a file while build 2's jobs finish. */
	{
		struct store_build_claimed c;
		char sha[65];

		ASSERT(store_build_claim(s, &c, host, 400, 60) == 0);
		ASSERT(c.id == 3);
		memset(sha, 'e', 64);
		sha[64] = '\0';
		ASSERT(store_build_file(s, host, 3, "bzImage", sha, 500, 400) ==
		    0);
		store_build_claimed_release(&c);
	}
	for (i = 0; i < 2; i++) {
		ASSERT(store_claim(s, &cl, host, 500, 60) == 0);
		ASSERT(cl.pair_id == 2);
		ASSERT(store_finish(s, host, cl.job_id, 1, NULL, 501) == 0);
		store_claimed_release(&cl);
	}
	/* Everything of builds 1 and 2 may go now; build 3's file not. */
	r = store_artifacts_make_room(s, &v, &n, 4000, 0, 4000);
	ASSERT(r == ERR_TOOBIG);
	ASSERT(store_artifacts_make_room(s, &v, &n, 3500, 0, 4000) == 0);
	ASSERT(n == 7);
	for (i = 0; i < n; i++)
		ASSERT(v[i][0] != 'e');
	store_build_victims_release(v, n);
	ASSERT(store_artifacts_bytes(s, &held) == 0);
	ASSERT(held == 500);
	store_builds_share(0);
	store_close(s);
}
