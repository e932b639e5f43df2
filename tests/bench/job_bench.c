/*
 * job_bench: what GET /api/v1/jobs/{id} costs without HTTP (issue 17),
 * by stage, in CPU time: the store's read (store_job_get), the JSON
 * (api_job_json: the read, the rows and the kernel facts) and the reply
 * bytes (that and pwjson_dump_buf, what web/reply.c writes).
 *
 *   job_bench DB [ROUNDS]
 *
 * DB is a database web_gen wrote (tests/bench/web_bench.sh keeps one in
 * WEB_BENCH_DBS); each round reads every 10th job.  Prints microseconds
 * per job for each stage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "daemon/store.h"
#include "web/api_int.h"

static double
cpu_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int
main(int argc, char **argv)
{
	struct store *s = NULL;
	struct store_stats st;
	struct err e = { 0 };
	int rounds = argc > 2 ? atoi(argv[2]) : 3, k, stage;
	int64_t jobs, id, n = 0;
	double t0, us[3] = { 0 };
	size_t bytes = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: job_bench DB [ROUNDS]\n");
		return 2;
	}
	if (store_open(&s, argv[1], &e) != 0) {
		fprintf(stderr, "job_bench: %s\n", err_msg(&e));
		return 1;
	}
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
	store_close(s);
	return 0;
}
