/*
 * The public reads of jobs and pairs (docs/API.md): the job list, a
 * job with its runs, log tail and kernel facts, a run's raw output, and a
 * pair with its jobs, comparisons, each side's kernel and its sides.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"
#include "daemon/kfacts.h"
#include "store/jobs.h"
#include "store/pairs.h"
#include "store/runs.h"
#include "web/api.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"
#include "web/rows.h"
#include "web/sides.h"

void
api_read_jobs(struct ctx *x)
{
	const char *state = httpd_query(x->r, "state");
	struct store_jobs l;
	int64_t limit, cursor;
	json_t *out;
	int i, r;

	if (state != NULL && *state == '\0')
		state = NULL;
	if (state != NULL) {
		for (i = 0; i < 5; i++)
			if (strcmp(state, store_job_states[i]) == 0)
				break;
		if (i == 5) {
			reply_err(x, 400,
			    "parameter 'state': expected queued, "
			    "running, success, failed or cancelled");
			return;
		}
	}
	if (api_query_page(x, &limit, &cursor) == -1)
		return;
	if ((r = store_job_list(x->s, &l, state, limit, cursor)) != 0) {
		reply_store_err(x, r);
		return;
	}
	out = rows_jobs_json(&l);
	store_jobs_release(&l);
	reply_json(x, 200, out);
}

/* "kernel": what the job's measured runs say of the kernel they ran on
 * (daemon/kfacts.h); each run's own facts are in its host_state. */
static void
job_kernel(json_t *job)
{
	json_t *states = json_array(), *run;
	json_int_t max = json_integer_value(json_object_get(job, "max_runs"));
	struct kfacts k;
	const char *st;
	size_t i;

	json_array_foreach(json_object_get(job, "runs"), i, run)
	{
		st = json_string_value(json_object_get(run, "status"));
		if (st == NULL || strcmp(st, "ok") != 0 ||
		    json_integer_value(json_object_get(run, "index")) >= max)
			continue;
		json_array_append(states,
		    json_object_get(run, "host_state")
		        ? json_object_get(run, "host_state")
		        : json_null());
	}
	kfacts_side(&k, states);
	json_object_set_new(job, "kernel", kfacts_json(&k));
	json_decref(states);
}

/* "build": the shared build the job waits on (or waited on), else null;
 * the job's JSON goes on error. */
static int
job_build(struct store *s, json_t *job, int64_t id)
{
	json_t *b;
	int r = api_job_build_json(s, id, &b);

	if (r == 0)
		json_object_set_new(job, "build", b);
	return r;
}

int
api_job_json(struct store *s, int64_t id, json_t **out)
{
	struct store_job_detail d;
	int r;

	*out = NULL;
	if ((r = store_job_get(s, &d, id)) != 0)
		return r;
	*out = rows_job_detail_json(&d);
	store_job_detail_release(&d);
	job_kernel(*out);
	if ((r = job_build(s, *out, id)) != 0) {
		json_decref(*out);
		*out = NULL;
	}
	return r;
}

void
api_read_job(struct ctx *x)
{
	json_t *out = NULL;
	int r;

	if ((r = api_job_json(x->s, x->id[0], &out)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

void
api_read_raw(struct ctx *x)
{
	struct buf b = BUF_INIT(CAP_RAW_OUTPUT + 1);
	size_t len;
	int r;

	if ((r = store_run_raw(x->s, &b, x->id[0], x->id[1])) != 0) {
		buf_release(&b);
		{
			reply_store_err(x, r);
			return;
		}
	}
	len = b.len;
	/* A benchmark's output: text, whatever bytes it holds. */
	httpd_reply_header(x->r, "X-Content-Type-Options", "nosniff");
	httpd_reply_take(
	    x->r, 200, "text/plain; charset=utf-8", buf_take(&b), len);
}

/* api_pair_json's work, with x->keep set. */
static int
pair_json(struct ctx *x, int64_t id, json_t **out)
{
	const struct store_pair *pp[1];
	struct store_pair p;
	struct store_run_metas rows;
	struct kfacts_pair k;
	struct view_side *sides = NULL;
	size_t nsides = 0;
	int r;

	if ((r = store_pair_get(x->s, &p, id)) != 0)
		return r;
	/* Which kernel each side ran (docs/KERNEL.md). */
	if (store_pair_run_meta_list(x->s, &rows, id) != 0) {
		store_pair_release(&p);
		return -1;
	}
	kfacts_pair(&k, &rows, p.jobs.n == 2 ? p.jobs.v[0].commit : NULL,
	    p.jobs.n == 2 ? p.jobs.v[1].commit : NULL);
	/* What was compared, as the pair page's "What was compared". */
	pp[0] = &p;
	r = web_sides_get(x, pp, &rows, 1, &sides, &nsides);
	store_run_metas_release(&rows);
	if (r != 0) {
		free(sides);
		store_pair_release(&p);
		return r;
	}
	*out = rows_pair_json(&p);
	json_object_set_new(*out, "sides", web_sides_json(sides, nsides));
	free(sides);
	rows_pair_kernels_json(*out, &k);
	if (p.jobs.n == 2) {
		/* Both sides' builds in one read. */
		int64_t ids[2] = { p.jobs.v[0].id, p.jobs.v[1].id };
		json_t *b[2];

		if ((r = api_jobs_build_json(x->s, ids, 2, b)) != 0) {
			json_decref(*out);
			*out = NULL;
		} else {
			json_object_set_new(
			    json_object_get(*out, "base"), "build", b[0]);
			json_object_set_new(
			    json_object_get(*out, "candidate"), "build", b[1]);
		}
	}
	store_pair_release(&p);
	return r;
}

int
api_pair_json(struct ctx *x, int64_t id, json_t **out)
{
	/* An API route has no keep (a page's, web_begin): the sides'
	 * strings live in one of ours until their JSON copies them. */
	json_t *keep = x->keep == NULL ? json_array() : NULL;
	int r;

	*out = NULL;
	if (keep != NULL)
		x->keep = keep;
	r = pair_json(x, id, out);
	if (keep != NULL) {
		x->keep = NULL;
		json_decref(keep);
	}
	return r;
}

void
api_read_pair(struct ctx *x)
{
	json_t *out = NULL;
	int r;

	if ((r = api_pair_json(x, x->id[0], &out)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}
