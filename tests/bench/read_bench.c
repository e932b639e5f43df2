/*
 * read_bench: what the read routes cost without HTTP, by
 * stage, in CPU time, on a database web_gen wrote (tests/bench/
 * web_bench.sh keeps one in WEB_BENCH_DBS):
 *
 *   read_bench job DB [ROUNDS]
 *	GET /api/v1/jobs/{id}: the store's read (store_job_get), the JSON
 *	(api_job_json: the read, the rows and the kernel facts) and the
 *	reply bytes (that and pwjson_dump_buf, what web/reply.c writes),
 *	every 10th job a round; microseconds a job for each stage.
 *   read_bench history DB [ROUNDS] [PAGES]
 *	GET /api/v1/history and /history: the store's read
 *	(store_history_list), the JSON (web_history_doc: the read, the
 *	change points and the tree), its reply bytes, and the HTML page;
 *	web_bench.sh's query (host epyc-1, job kv at x=1, metric ops),
 *	PAGES pages of 200 jobs (default and at most 50) from the newest a
 *	round; microseconds a page for each stage, the least of the
 *	rounds, which the shared machine's noise (NOISE.md) lengthens
 *	least.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "store/history.h"
#include "store/jobs.h"
#include "store/store.h"
#include "web/api_int.h"
#include "web/web_int.h"

#define PAGES 50

static double
cpu_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int
job_main(struct store *s, int argc, char **argv)
{
	struct store_stats st;
	int rounds = argc > 2 ? atoi(argv[2]) : 3, k, stage;
	int64_t jobs, id, n = 0;
	double t0, us[3] = { 0 };
	size_t bytes = 0;

	if (store_stats(s, &st, 0, 0) != 0)
		return 1;
	jobs = st.jobs[0] + st.jobs[1] + st.jobs[2] + st.jobs[3] + st.jobs[4];
	for (k = 0; k < rounds; k++)
		for (stage = 0; stage < 3; stage++) {
			t0 = cpu_us();
			for (id = 1; id <= jobs; id += 10) {
				struct store_job_detail d;
				struct buf b = BUF_INIT(CAP_HTTP_REPLY);
				json_t *o = NULL;

				if (stage == 0) {
					if (store_job_get(s, &d, id) != 0)
						return 1;
					store_job_detail_release(&d);
					continue;
				}
				if (api_job_json(s, id, &o) != 0)
					return 1;
				if (stage == 2) {
					pwjson_dump_buf(&b, o);
					bytes += b.len;
					buf_release(&b);
				}
				json_decref(o);
			}
			us[stage] += cpu_us() - t0;
		}
	n = (int64_t)rounds * ((jobs + 9) / 10);
	printf(
	    "jobs %lld, %lld reads a stage\n", (long long)jobs, (long long)n);
	printf("store_job_get      %8.2f us/job\n", us[0] / (double)n);
	printf("+ JSON             %8.2f us/job\n", us[1] / (double)n);
	printf("+ reply bytes      %8.2f us/job (%zu bytes/job)\n",
	    us[2] / (double)n, bytes / (size_t)(n ? n : 1));
	return 0;
}

static int
history_main(struct store *s, int argc, char **argv)
{
	static const char *const names[] = { "store_history_list",
		"+ change points, JSON", "+ reply bytes", "HTML page" };
	struct store_history_q q;
	int64_t cursors[PAGES];
	int rounds = argc > 2 ? atoi(argv[2]) : 3, k, stage, p, npages;
	int want = argc > 3 ? atoi(argv[3]) : PAGES;
	double t0, t, us[4] = { 0 };
	size_t bytes[4] = { 0 }, points = 0;

	memset(&q, 0, sizeof(q));
	q.tree = "bench";
	q.branch = "master";
	q.host = "epyc-1";
	q.job = "kv";
	q.point = "x=1";
	q.metric = "ops";
	q.limit = 200;
	/* The pages' cursors, newest first, from the store's own. */
	if (want < 1 || want > PAGES)
		want = PAGES;
	for (npages = 0; npages < want; npages++) {
		struct store_history h;

		cursors[npages] = q.cursor;
		if (store_history_list(s, &h, &q) != 0) {
			fprintf(stderr, "read_bench: %s\n", store_errmsg(s));
			return 1;
		}
		points += h.n;
		q.cursor = h.next_cursor;
		store_history_release(&h);
		if (q.cursor <= 0) {
			npages++;
			break;
		}
	}
	if (points == 0) {
		fprintf(stderr,
		    "read_bench: no history of kv x=1 ops on "
		    "epyc-1 (a web_gen database?)\n");
		return 1;
	}
	for (k = 0; k < rounds; k++)
		for (stage = 0; stage < 4; stage++) {
			t0 = cpu_us();
			for (p = 0; p < npages; p++) {
				struct buf b = BUF_INIT(CAP_HTTP_REPLY);
				struct store_history h;
				json_t *o = NULL;

				q.cursor = cursors[p];
				if (stage == 0) {
					if (store_history_list(s, &h, &q) != 0)
						return 1;
					store_history_release(&h);
					continue;
				}
				if (web_history_doc(s, &q,
				        stage < 3 ? &o : NULL,
				        stage == 3 ? &b : NULL) != 0)
					return 1;
				if (stage == 2)
					pwjson_dump_buf(&b, o);
				bytes[stage] += b.len;
				buf_release(&b);
				json_decref(o);
			}
			t = cpu_us() - t0;
			if (k == 0 || t < us[stage])
				us[stage] = t;
		}
	printf("history pages %d (%zu points), %d rounds\n", npages, points,
	    rounds);
	for (stage = 0; stage < 4; stage++) {
		printf("%-22s %8.1f us/page", names[stage],
		    us[stage] / (double)npages);
		if (bytes[stage])
			printf(" (%zu bytes/page)",
			    bytes[stage] / (size_t)(rounds * npages));
		printf("\n");
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct store *s = NULL;
	struct err e = { 0 };
	int r;

	if (argc < 3 ||
	    (strcmp(argv[1], "job") != 0 && strcmp(argv[1], "history") != 0)) {
		fprintf(stderr,
		    "usage: read_bench job DB [ROUNDS]\n"
		    "       read_bench history DB [ROUNDS] [PAGES]\n");
		return 2;
	}
	if (store_open(&s, argv[2], &e) != 0) {
		fprintf(stderr, "read_bench: %s\n", err_msg(&e));
		return 1;
	}
	r = strcmp(argv[1], "job") == 0 ? job_main(s, argc - 1, argv + 1)
	                                : history_main(s, argc - 1, argv + 1);
	store_close(s);
	return r;
}
