/*
 * web_gen: the database behind `make bench-web` (tests/bench/web_bench.sh),
 * written with the store's own functions, the way the daemon writes it:
 * commits recorded on a branch, a pair triggered per commit on one of four
 * hosts, each job claimed, its runs stored and finished, and the pair's
 * verdict made by daemon/verdict.c (comparisons, regressions, history,
 * change points).  Every 100th pair measures a three-patch mailed series
 * instead of a tree commit.  No HTTP: a million runs through the runner
 * API one by one would take an hour here.
 *
 *   web_gen DB FROM TO [RUNS [REAL]]
 *
 * makes pairs FROM..TO-1 (RUNS runs per job, default 10: each pair is
 * 2 * RUNS runs), so a second call with FROM = the first call's TO grows
 * the same history.  Only the last REAL pairs (default all) get the real
 * verdict, which costs ~20 ms of analysis a pair here (17 minutes for a
 * million runs); the others a quick one (quick_verdict below).  The values step
 * by 10 % every 100 commits (a regression or an improvement the verdicts find)
 * over 0.5 % noise from a fixed seed.  Prints what it stored.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "common/err.h"
#include "common/json.h"
#include "daemon/store.h"
#include "daemon/verdict.h"

#define HOSTS 4
#define CHUNK 100        /* pairs per write transaction */
#define SERIES_EVERY 100 /* every 100th pair measures a series */
#define STEP_EVERY 100   /* commits between level steps */
#define T0 1700000000

static const char *const host_names[HOSTS] = { "epyc-1", "epyc-2", "xeon-1",
	"xeon-2" };

static uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The sha of tree commit i (kind 0) or of patch k of series i (kind 1+k). */
static void
sha_of(char out[41], int64_t i, int kind)
{
	snprintf(out, 41, "%016" PRIx64 "%016" PRIx64 "%08x",
	    mix((uint64_t)i * 8 + (uint64_t)kind), mix((uint64_t)i + 77777),
	    (unsigned)(i * 8 + kind));
}

/* The level of commit i: 1.0, or 1.1 in every other block of commits. */
static double
level(int64_t i)
{
	return (i / STEP_EVERY) % 2 ? 1.1 : 1.0;
}

/* A normal deviate from a counter-based generator (Box-Muller). */
static double
noise(uint64_t key)
{
	double u1 = ((double)(mix(key) >> 11) + 1) / 9007199254740994.0;
	double u2 = (double)(mix(key ^ 0xabcdef) >> 11) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static void
die(struct store *s, const char *what)
{
	fprintf(stderr, "web_gen: %s: %s\n", what, s ? store_errmsg(s) : "");
	exit(1);
}

static char *
spec_text(const char *sha, int64_t runs)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:[s, s], s:{s:s}, s:{s:s, s:s},"
	                      " s:I, s:I, s:{s:{s:s, s:f}, s:{s:s, s:f}}}",
	    "name", "kv", "point", "x=1", "parser", "keyvalue", "command",
	    "echo", "x={x}", "params", "x", "1", "tree", "url",
	    "https://example.org/bench.git", "commit", sha, "runs",
	    (json_int_t)runs, "max_runs", (json_int_t)runs, "metrics", "ops",
	    "better", "higher", "min_effect_pct", 3.0, "latency_p99", "better",
	    "lower", "min_effect_pct", 3.0);
	char *t = pwjson_dump(o);

	json_decref(o);
	return t;
}

/* Claims job (it must be the one the host gets), stores its runs at
 * level lv and finishes it. */
static void
run_job(struct store *s, int64_t host, int64_t job, int64_t runs, double lv,
    int64_t now, int64_t *nruns)
{
	struct store_claimed c;
	int64_t k;

	if (store_claim(s, &c, host, now, 600) != 0)
		die(s, "claim");
	if (c.job_id != job) {
		fprintf(stderr,
		    "web_gen: host %" PRId64 " claimed another job "
		    "than %" PRId64 "\n",
		    host, job);
		exit(1);
	}
	store_claimed_release(&c);
	for (k = 0; k < runs; k++) {
		struct store_metric m[2];
		struct store_run r;
		char raw[128];
		uint64_t key = (uint64_t)job * 64 + (uint64_t)k;

		m[0].name = "ops";
		m[0].unit = "ops/s";
		m[0].better = "higher";
		m[0].value = 1000 * lv * (1 + 0.005 * noise(key));
		m[1].name = "latency_p99";
		m[1].unit = "us";
		m[1].better = "lower";
		m[1].value = 500 / lv * (1 + 0.005 * noise(key ^ 0x5555));
		snprintf(raw, sizeof(raw), "ops=%.3f\nlatency_p99=%.3f\n",
		    m[0].value, m[1].value);
		memset(&r, 0, sizeof(r));
		r.job_id = job;
		r.index = k;
		r.status = "ok";
		r.duration_s = 1.0;
		r.raw = raw;
		r.raw_len = strlen(raw);
		r.metrics = m;
		r.nmetrics = 2;
		if (store_run_add(s, host, &r, now) != 0)
			die(s, "run");
		(*nruns)++;
	}
	if (store_finish(s, host, job, 1, NULL, now) != 0)
		die(s, "finish");
}

/*
 * The quick verdict of a pair, for the bulk of a large history: per
 * metric the medians and the change as the verdict defines it
 * (analysis_change_pct), regression or improvement beyond the spec's 3 %,
 * else unchanged; no interval, p-value or change point (stored as
 * unknown).  The comparison, regression, history point and the analysed
 * mark are written through the store as verdict.c writes them.
 */
static int64_t
quick_verdict(
    struct store *s, int64_t pair, int64_t host, int64_t cand_job, int64_t now)
{
	static const char *const names[2] = { "latency_p99", "ops" };
	struct store_values o;
	int64_t nreg = 0;
	size_t i, m;

	if (store_verdict_values(s, &o, pair) != 0)
		die(s, "values");
	if (store_begin(s) != 0)
		die(s, "begin");
	for (m = 0; m < 2; m++) {
		double b[32], c[32], bm, cm;
		size_t nb = 0, nc = 0;
		const char *better = m == 0 ? "lower" : "higher";
		struct store_comparison cmp;
		struct store_series_key key;
		int64_t cid = 0;

		for (i = 0; i < o.n; i++) {
			const char *role = o.v[i].role;
			double v = o.v[i].value;

			if (strcmp(o.v[i].metric, names[m]) != 0)
				continue;
			if (strcmp(role, "base") == 0 && nb < 32)
				b[nb++] = v;
			else if (strcmp(role, "candidate") == 0 && nc < 32)
				c[nc++] = v;
		}
		memset(&cmp, 0, sizeof(cmp));
		cmp.metric = names[m];
		cmp.unit = m == 0 ? "us" : "ops/s";
		cmp.better = better;
		cmp.n_base = (int64_t)nb;
		cmp.n_cand = (int64_t)nc;
		cmp.change_pct = analysis_change_pct(b, nb, c, nc);
		bm = analysis_median_inplace(b, nb);
		cm = analysis_median_inplace(c, nc);
		cmp.base_median = bm;
		cmp.cand_median = cm;
		cmp.ci_low = cmp.ci_high = cmp.p = cmp.p_adjusted = NAN;
		cmp.min_effect = 3;
		cmp.final = 1;
		cmp.note = "web_gen: quick verdict (no interval)";
		if (fabs(cmp.change_pct) < 3)
			cmp.verdict = "unchanged";
		else if ((cmp.change_pct > 0) == (m == 1))
			cmp.verdict = "improvement";
		else {
			cmp.verdict = "regression";
			nreg++;
		}
		if (store_verdict_put(s, &cid, pair, &cmp, now) != 0)
			die(s, "comparison");
		memset(&key, 0, sizeof(key));
		key.tree = "bench";
		key.branch = "master";
		key.host_id = host;
		key.job = "kv";
		key.point = "x=1";
		key.metric = names[m];
		key.better = better;
		if (store_history_append(
		        s, NULL, NULL, &key, pair, cand_job, cid, cm, now) != 0)
			die(s, "history");
	}
	if (store_verdict_done(s, pair, now) != 0 || store_commit(s) != 0)
		die(s, "verdict done");
	store_values_release(&o);
	return nreg;
}

/* A three-patch series on top of tree commit i - 1: its tip's row. */
static int64_t
make_series(
    struct store *s, int64_t tree, int64_t i, const char *base, int64_t now)
{
	struct store_series_new sn;
	int64_t id, cid = 0, k;
	char mid[64], parent[41], sha[41], title[96];

	snprintf(mid, sizeof(mid), "<bench-%" PRId64 "@example.org>", i);
	snprintf(title, sizeof(title),
	    "mm: memcg: batch the stock refill, take %" PRId64, i);
	memset(&sn, 0, sizeof(sn));
	sn.inbox = "linux-mm";
	sn.message_id = mid;
	sn.title = title;
	sn.author = "A <a@example.org>";
	sn.version = 1;
	sn.total = 3;
	sn.found = 3;
	sn.date = now;
	sn.tree_id = tree;
	sn.branch = "master";
	if (store_series_create(s, &id, NULL, &sn, now) != 0)
		die(s, "series");
	snprintf(parent, sizeof(parent), "%s", base);
	for (k = 1; k <= 3; k++) {
		struct store_commit c;
		struct store_series_patch p;
		char pmid[80], subj[96];

		sha_of(sha, i, (int)k);
		snprintf(subj, sizeof(subj),
		    "[PATCH %" PRId64 "/3] mm: memcg: part %" PRId64, k, k);
		memset(&c, 0, sizeof(c));
		c.sha = sha;
		c.parents = parent;
		c.author = "A <a@example.org>";
		c.committer = "perfwatch <perfwatch@localhost>";
		c.author_date = c.commit_date = now;
		c.subject = subj;
		c.paths_json = "[\"mm/memcontrol.c\"]";
		if (store_commit_record(s, &cid, NULL, tree, &c, "", now) != 0)
			die(s, "series commit");
		snprintf(pmid, sizeof(pmid),
		    "<bench-%" PRId64 ".%" PRId64 "@example.org>", i, k);
		memset(&p, 0, sizeof(p));
		p.seq = k;
		p.message_id = pmid;
		p.subject = subj;
		p.author = c.author;
		p.date = now;
		p.commit_id = cid;
		if (store_series_patch_put(s, id, &p) != 0)
			die(s, "patch");
		memcpy(parent, sha, sizeof(parent));
	}
	if (store_series_state(s, id, "applied", NULL, base, cid, NULL, now) !=
	    0)
		die(s, "series state");
	return cid;
}

int
main(int argc, char **argv)
{
	struct store *s;
	struct err e = { 0 };
	int64_t from, to, runs = 10, tree, hosts[HOSTS], i, nruns = 0;
	int64_t npairs = 0, nfinal = 0, nreg = 0, nquick = 0, real;
	char sha[41], parent[41];
	int h;

	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: web_gen DB FROM TO [RUNS [REAL]]\n");
		return 2;
	}
	from = strtoll(argv[2], NULL, 10);
	to = strtoll(argv[3], NULL, 10);
	if (argc >= 5)
		runs = strtoll(argv[4], NULL, 10);
	real = argc == 6 ? strtoll(argv[5], NULL, 10) : to - from;
	if (from < 0 || to < from || runs < 2 || runs > 20) {
		fprintf(stderr, "web_gen: bad FROM, TO or RUNS\n");
		return 2;
	}
	if (store_open(&s, argv[1], &e) != 0) {
		fprintf(stderr, "web_gen: %s\n", err_msg(&e));
		return 1;
	}
	if (store_tree_sync(
	        s, &tree, "bench", "https://example.org/bench.git") != 0)
		die(s, "tree");
	for (h = 0; h < HOSTS; h++)
		if (store_host_register(s, &hosts[h], host_names[h],
		        "[\"bench\"]", "{\"cpu_model\":\"bench\",\"cores\":64}",
		        T0 + to * 60) != 0)
			die(s, "host");
	for (i = from; i < to;) {
		int64_t first = i, pair_ids[CHUNK], cand_ids[CHUNK], n = 0, k;

		if (store_begin(s) != 0)
			die(s, "begin");
		for (; i < to && n < CHUNK; i++, n++) {
			int64_t now = T0 + i * 60, host = hosts[i % HOSTS];
			int64_t cand_id, base_id, pair, bj, cj;
			int series = i % SERIES_EVERY == SERIES_EVERY - 1;
			struct store_commit c;
			struct store_job_new jn[2];
			struct store_trigger_pair tp;
			char subj[96], *texts[2];

			sha_of(parent, i - 1, 0);
			sha_of(sha, i, 0);
			memset(&c, 0, sizeof(c));
			c.sha = sha;
			c.parents = i > 0 ? parent : "";
			c.author = "Dev <dev@example.org>";
			c.committer = c.author;
			c.author_date = c.commit_date = now;
			snprintf(subj, sizeof(subj),
			    "mm: memcg: change %" PRId64 " <&>", i);
			c.subject = subj;
			c.paths_json = "[\"mm/memcontrol.c\"]";
			if (i == 0 ||
			    store_commit_find(
			        s, &base_id, NULL, 0, tree, parent) != 0)
				base_id = 0;
			if (store_commit_record(s, &cand_id, NULL, tree, &c,
			        "master", now) != 0)
				die(s, "commit");
			if (series) {
				/* The series on top of this commit,
				 * measured against it. */
				base_id = cand_id;
				memcpy(parent, sha, sizeof(parent));
				cand_id = make_series(s, tree, i, sha, now);
				sha_of(sha, i, 3);
			}
			texts[0] = spec_text(parent, runs);
			texts[1] = spec_text(sha, runs);
			for (k = 0; k < 2; k++) {
				memset(&jn[k], 0, sizeof(jn[k]));
				jn[k].role = k == 0 ? "base" : "candidate";
				jn[k].spec_json = texts[k];
				jn[k].labels_json = "[]";
				jn[k].runs = runs;
				jn[k].max_runs = runs;
				jn[k].max_attempts = 3;
				jn[k].commit_id = k == 0 ? base_id : cand_id;
			}
			memset(&tp, 0, sizeof(tp));
			tp.name = "kv";
			tp.point = "x=1";
			tp.host_id = host;
			tp.tree_id = tree;
			tp.branch = "master";
			tp.base = &jn[0];
			tp.cand = &jn[1];
			if (store_trigger_pair(
			        s, &pair, &bj, &cj, NULL, &tp, now) != 0)
				die(s, "pair");
			free(texts[0]);
			free(texts[1]);
			/* The series' base is the commit it sits on; a
			 * tree pair's base is the parent, one level
			 * back. */
			run_job(s, host, bj, runs, level(series ? i : i - 1),
			    now, &nruns);
			run_job(s, host, cj, runs, level(i), now, &nruns);
			pair_ids[n] = pair;
			cand_ids[n] = cj;
			npairs++;
		}
		if (store_commit(s) != 0)
			die(s, "commit");
		/* Each verdict is its own transaction, as in the daemon. */
		for (k = 0; k < n; k++) {
			struct verdict_outcome vo;

			if (first + k < to - real) {
				nreg += quick_verdict(s, pair_ids[k],
				    hosts[(first + k) % HOSTS], cand_ids[k],
				    T0 + (first + k) * 60 + 30);
				nquick++;
				continue;
			}
			if (verdict_pair(s, &vo, pair_ids[k],
			        T0 + (first + k) * 60 + 30) != 0)
				die(s, "verdict");
			nfinal += vo.state == VERDICT_FINAL;
			nreg += (int64_t)(vo.regressions + vo.unstable);
		}
		if ((i - from) % 5000 == 0 || i == to)
			fprintf(stderr, "web_gen: %" PRId64 "/%" PRId64 "\n",
			    i - from, to - from);
	}
	printf("pairs %" PRId64 " runs %" PRId64 " quick %" PRId64
	       " final %" PRId64 " regressions %" PRId64 "\n",
	    npairs, nruns, nquick, nfinal, nreg);
	store_close(s);
	return 0;
}
