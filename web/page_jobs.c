/*
 * The jobs page, GET /jobs (filtered by state), a job's page at GET
 * /jobs/{id} and its log as text at GET /jobs/{id}/log.  They read the
 * typed store (struct store_job, struct store_job_detail) as the JSON
 * of GET /api/v1/jobs/{id} does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/jobs.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

static const char *
job_state_filter(struct ctx *x)
{
	const char *s = web_q(x, "state");
	int i;

	for (i = 0; s && i < 5; i++)
		if (strcmp(s, store_job_states[i]) == 0)
			return store_job_states[i];
	return NULL;
}

/* A job's row for a page: its strings are j's. */
static void
job_view(struct view_job *g, const struct store_job *j)
{
	g->id = j->id;
	g->pair_id = j->pair_id;
	g->role = j->role;
	g->name = j->name;
	g->point = j->point;
	g->state = j->state;
	g->host = j->host;
	g->attempts = (int)j->attempts;
	g->runs = (int)j->runs;
	g->runs_done = (int)j->runs_done;
	g->progress = j->progress;
	g->error = j->error;
	g->created = j->created;
	g->updated = j->updated;
	g->commit = j->commit;
	g->tree = j->tree;
	g->subject = j->subject;
}

void
web_jobs(struct ctx *x)
{
	struct view_jobs v = { 0 };
	struct view_job *rows;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct store_stats st;
	struct store_jobs l;
	char next[32];
	int64_t cursor;
	size_t i;
	int r;

	cursor = web_q_cursor(x);
	v.state = job_state_filter(x);
	r = store_job_list(x->s, &l, v.state, PAGE_ROWS, cursor);
	if (r != 0) {
		reply_page_store_err(x, r);
		return;
	}
	rows = xcalloc(l.n + 1, sizeof(*rows));
	for (i = 0; i < l.n; i++) {
		job_view(&rows[i], &l.v[i]);
	}
	v.rows = rows;
	v.nrows = l.n;
	web_pager(&v.pager, cursor, l.next_cursor, next);
	if (store_stats(x->s, &st, x->now, x->online_s) == 0) {
		if (v.state == NULL)
			for (i = 0; i < 5; i++)
				v.pager.total += st.jobs[i];
		else
			for (i = 0; i < 5; i++)
				if (strcmp(v.state, store_job_states[i]) == 0)
					v.pager.total = st.jobs[i];
	}
	view_jobs_render(&b, &v);
	free(rows);
	store_jobs_release(&l);
	reply_page(x, 200, &b);
}

int
web_job_log_text(struct store *s, int64_t id, struct buf *out)
{
	struct store_job_detail d;
	json_t *v;
	int r;

	if ((r = store_job_get(s, &d, id)) != 0)
		return r;
	/* The log as the job's JSON gives it: "" when it is not UTF-8
	 * (jansson's own check, the one GET /api/v1/jobs/{id} makes). */
	v = json_stringn(d.log, d.log_len);
	r = v ? buf_add(out, d.log, d.log_len) : 0;
	json_decref(v);
	store_job_detail_release(&d);
	return r;
}

/* GET /jobs/ID: the job, its runs and its log line by line. */
static void
job_page(struct ctx *x, int64_t id)
{
	struct store_job_detail d;
	struct view_job_page v = { 0 };
	struct view_job_run *runs;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	char title[32];
	size_t i;
	int r;

	if ((r = store_job_get(x->s, &d, id)) != 0) {
		reply_page_store_err(x, r);
		return;
	}
	snprintf(title, sizeof(title), "Job %lld", (long long)id);
	v.title = title;
	job_view(&v.job, &d.job);
	runs = xcalloc(d.nruns + 1, sizeof(*runs));
	for (i = 0; i < d.nruns; i++) {
		runs[i].index = d.runs[i].index;
		runs[i].attempt = d.runs[i].attempt;
		runs[i].status = d.runs[i].status;
		runs[i].host = d.runs[i].host;
		runs[i].error = d.runs[i].error;
		runs[i].duration_s = d.runs[i].duration_s;
	}
	v.runs = runs;
	v.nruns = d.nruns;
	v.log = d.log;
	v.log_len = d.log_len;
	view_job_render(&b, &v);
	free(runs);
	store_job_detail_release(&d);
	reply_page(x, 200, &b);
}

/* GET /jobs/ID: its page; GET /jobs/ID/log: the log tail as text. */
void
web_job(struct ctx *x)
{
	struct buf b = BUF_INIT(CAP_JOB_LOG + 1);
	const char *end;
	int64_t id = web_parse_id(x->rest, &end);
	size_t len;
	int r;

	if (id != 0 && *end == '\0') {
		job_page(x, id);
		return;
	}
	if (id == 0 || strcmp(end, "/log") != 0) {
		reply_message(x, 404, "Not found", "no such page");
		return;
	}
	if ((r = web_job_log_text(x->s, id, &b)) != 0) {
		buf_release(&b);
		reply_page_store_err(x, r);
		return;
	}
	len = b.len;
	httpd_reply_header(x->r, "X-Content-Type-Options", "nosniff");
	httpd_reply_take(
	    x->r, 200, "text/plain; charset=utf-8", buf_take(&b), len);
}
