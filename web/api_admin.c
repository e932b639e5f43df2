/*
 * The admin routes (docs/API.md, "Admin routes"): submit, cancel, retry,
 * a host's quarantine cleared, a series posted as an mbox, a bisection
 * started or cancelled.  Each needs the admin token (web/api.c checks
 * it); the domain work is the daemon's (sched, series, bisect).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/json.h"
#include "common/log.h"
#include "config/config.h"
#include "daemon/bisect.h"
#include "daemon/dconf.h"
#include "daemon/jobspec.h"
#include "daemon/packs.h"
#include "daemon/sched.h"
#include "daemon/series.h"
#include "store/canary.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/store.h"
#include "store/tx.h"
#include "store/watch.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"

#define SHA_BUF 41 /* 40 hex digits and the NUL */

/* ---- admin routes ---- */

/* A side of a pair: params (scalars as strings) and an optional tree. */
struct side {
	json_t *params;    /* object of strings */
	json_t *tree;      /* {"url", "commit"} or NULL */
	int64_t commit_id; /* the commit's row for a configured tree */
};

/*
 * The commit of a side on tree url (name: a configured tree, else NULL).
 * A configured tree's commit may be a unique prefix of a recorded commit;
 * otherwise the runner fetches it by id, so all 40 digits are needed.
 * The job is linked to the commit's row (a stub until the watcher
 * records it).  0, or -1 after replying.
 */
static int
side_commit(struct ctx *x, struct side *sd, const char *what, const char *name,
    const char *url, const char *commit)
{
	char full[SHA_BUF] = "";
	int64_t tree_id = 0;
	size_t i, n = strlen(commit);
	int r;

	if (name != NULL) {
		r = store_tree_sync(x->s, &tree_id, name, url);
		if (r == 0)
			r = store_commit_find(x->s, &sd->commit_id, full,
			    sizeof(full), tree_id, commit);
		if (r == ERR_CONFLICT) {
			reply_err(x, 400, "field '%s.commit': %s", what,
			    store_errmsg(x->s));
			return -1;
		}
		if (r != 0 && r != ERR_NOTFOUND) {
			reply_store_err(x, r);
			return -1;
		}
		store_errclear(x->s);
	}
	if (full[0] == '\0') {
		if (n != SHA_BUF - 1) {
			reply_err(x, 400,
			    "field '%s.commit': '%s' is not a recorded commit "
			    "of this tree; give all 40 hex digits",
			    what, commit);
			return -1;
		}
		for (i = 0; i < n; i++)
			full[i] = (char)(commit[i] >= 'A' && commit[i] <= 'F'
			        ? commit[i] - 'A' + 'a'
			        : commit[i]);
		full[n] = '\0';
		if (tree_id > 0 &&
		    (r = store_commit_stub(
		         x->s, &sd->commit_id, tree_id, full)) != 0) {
			reply_store_err(x, r);
			return -1;
		}
	}
	sd->tree = json_pack("{s:s, s:s}", "url", url, "commit", full);
	if (tree_id > 0)
		packs_tree_spec(sd->tree, x->s, full);
	return 0;
}

static int
parse_side(struct ctx *x, struct side *sd, const char *what)
{
	static const char *const keys[] = { "params", "tree", "commit", NULL };
	json_t *o = json_object_get(x->body, what), *p, *v;
	const char *k, *tree = NULL, *commit = NULL, *url = NULL;
	const char *name = NULL;
	char pfx[32];
	size_t i;

	sd->params = json_object();
	sd->tree = NULL;
	sd->commit_id = 0;
	if (o == NULL || json_is_null(o))
		return 0;
	if (!json_is_object(o)) {
		reply_err(x, 400, "field '%s': expected an object", what);
		return -1;
	}
	snprintf(pfx, sizeof(pfx), "%s", what);
	if (api_only_keys(x, o, keys, pfx) == -1)
		return -1;
	p = json_object_get(o, "params");
	if (p != NULL && !json_is_null(p)) {
		if (!json_is_object(p)) {
			reply_err(x, 400,
			    "field '%s.params': expected an object", what);
			return -1;
		}
		json_object_foreach(p, k, v)
		{
			char num[64];

			if (json_is_string(v)) {
				json_object_set(sd->params, k, v);
				continue;
			}
			if (json_is_integer(v))
				snprintf(num, sizeof(num),
				    "%" JSON_INTEGER_FORMAT,
				    json_integer_value(v));
			else if (json_is_real(v))
				snprintf(num, sizeof(num), "%.17g",
				    json_real_value(v));
			else if (json_is_boolean(v))
				snprintf(num, sizeof(num), "%s",
				    json_is_true(v) ? "true" : "false");
			else {
				reply_err(x, 400,
				    "field '%s.params.%s': expected a string, "
				    "number or boolean",
				    what, k);
				return -1;
			}
			json_object_set_new(sd->params, k, json_string(num));
		}
	}
	snprintf(pfx, sizeof(pfx), "%s.", what);
	if (api_str_field(x, &tree, o, "tree", 1024, 1, pfx) == -1 ||
	    api_str_field(x, &commit, o, "commit", 64, 1, pfx) == -1)
		return -1;
	if ((tree == NULL) != (commit == NULL)) {
		reply_err(x, 400,
		    "field '%s.%s': missing (tree and commit go "
		    "together)",
		    what, tree ? "commit" : "tree");
		return -1;
	}
	if (tree == NULL)
		return 0;
	for (i = 0; commit[i]; i++)
		if (!strchr("0123456789abcdefABCDEF", commit[i]))
			break;
	if (commit[i] != '\0' || i < 4) {
		reply_err(x, 400,
		    "field '%s.commit': expected a hexadecimal "
		    "commit id",
		    what);
		return -1;
	}
	for (i = 0; i < x->conf->dc->ntrees; i++)
		if (strcmp(x->conf->dc->trees[i].name, tree) == 0 ||
		    strcmp(x->conf->dc->trees[i].url, tree) == 0) {
			url = x->conf->dc->trees[i].url;
			name = x->conf->dc->trees[i].name;
		}
	if (url == NULL && (strstr(tree, "://") != NULL || tree[0] == '/'))
		url = tree;
	if (url == NULL) {
		reply_err(
		    x, 400, "field '%s.tree': unknown tree '%s'", what, tree);
		return -1;
	}
	return side_commit(x, sd, what, name, url, commit);
}

/* The pairs of a submit (struct submit_tx), into t->out: one transaction
 * and one sibling-group scope for them all, since its cgroup points share
 * a host (store/hosts.h).  Run again whole by store_tx_retry when it lost
 * to another transaction, so t->out starts empty each time. */
struct submit_tx {
	const struct job_config *jc;
	const struct side *sides;
	const struct cfg_point *pts;
	size_t npts;
	int64_t runs, max_runs, max_attempts, now;
	const char *ltext;
	json_t *out;
};

static int
submit_pairs(struct store *s, void *arg)
{
	static const struct cfg_point empty = { 0, NULL, NULL, NULL };
	struct submit_tx *t = arg;
	const struct job_config *jc = t->jc;
	size_t i;
	int failed = 0;

	json_array_clear(t->out);
	if (store_begin(s) == -1)
		return -1;
	store_group_begin(s);
	for (i = 0; i < (t->npts ? t->npts : 1) && !failed; i++) {
		const struct cfg_point *pt = t->npts ? &t->pts[i] : &empty;
		json_t *specs[2];
		char *texts[2];
		struct store_job_new jn[2];
		int64_t pair = 0, ids[2] = { 0, 0 };
		int k;

		for (k = 0; k < 2; k++) {
			specs[k] = jobspec_build(jc, pt, t->sides[k].params,
			    t->sides[k].tree, t->runs, t->max_runs);
			texts[k] = pwjson_dump(specs[k]);
			json_decref(specs[k]);
			memset(&jn[k], 0, sizeof(jn[k]));
			jn[k].commit_id = t->sides[k].commit_id;
			jn[k].role = k == 0 ? "base" : "candidate";
			jn[k].spec_json = texts[k];
			jn[k].labels_json = t->ltext;
			jn[k].runs = t->runs;
			jn[k].max_runs = t->max_runs;
			jn[k].max_attempts = t->max_attempts;
		}
		if (store_pair_create(s, &pair, &ids[0], &ids[1], jc->name,
		        pt->label ? pt->label : "", &jn[0], &jn[1],
		        t->now) != 0)
			failed = 1;
		else
			json_array_append_new(t->out,
			    json_pack("{s:I, s:I, s:I, s:s}", "pair_id",
			        (json_int_t)pair, "base_job",
			        (json_int_t)ids[0], "candidate_job",
			        (json_int_t)ids[1], "point",
			        pt->label ? pt->label : ""));
		free(texts[0]);
		free(texts[1]);
	}
	store_group_end(s);
	if (failed) {
		store_rollback(s);
		return -1;
	}
	return store_commit(s) == -1 ? -1 : 0;
}

void
api_admin_submit(struct ctx *x)
{
	static const char *const keys[] = { "job", "job_yaml", "base",
		"candidate", "runs", NULL };
	const char *name = NULL, *yaml = NULL;
	struct job_config *own = NULL;
	const struct job_config *jc;
	struct side sides[2] = { { NULL, NULL }, { NULL, NULL } };
	struct cfg_point *pts = NULL;
	struct submit_tx t;
	size_t npts = 0, i;
	int64_t runs = 0, max_runs, now = api_now_s();
	json_t *out = NULL, *labels = NULL;
	char *ltext = NULL;

	if (api_parse_body(x, 0) == -1 ||
	    api_only_keys(x, x->body, keys, "body") == -1)
		return;
	if (api_str_field(x, &name, x->body, "job", CAP_NAME, 1, "") == -1 ||
	    api_str_field(
	        x, &yaml, x->body, "job_yaml", CAP_CONFIG_FILE, 1, "") == -1)
		return;
	if ((name == NULL) == (yaml == NULL)) {
		reply_err(x, 400,
		    "field 'job': give exactly one of 'job' and "
		    "'job_yaml'");
		return;
	}
	if (pwjson_int_opt(&runs, x->body, "runs", &x->err) == -1) {
		api_bad(x);
		return;
	}
	if (json_object_get(x->body, "runs") != NULL &&
	    (runs < 1 || runs > 1000)) {
		reply_err(x, 400, "field 'runs': expected 1..1000");
		return;
	}
	if (parse_side(x, &sides[0], "base") == -1 ||
	    parse_side(x, &sides[1], "candidate") == -1)
		goto out;
	if (name != NULL) {
		if ((jc = dconf_job(x->conf, name)) == NULL) {
			reply_err(
			    x, 404, "field 'job': no job named '%s'", name);
			goto out;
		}
	} else {
		struct cfg_errors errs = { NULL, 0 };

		if (config_parse_job_for(&own, "job_yaml", yaml, strlen(yaml),
		        x->conf->dc, &errs) == -1) {
			reply_err(x, 400, "field 'job_yaml': %s",
			    errs.n ? errs.msg[0] : "invalid job");
			cfg_errors_free(&errs);
			goto out;
		}
		cfg_errors_free(&errs);
		jc = own;
	}
	if (runs == 0)
		runs = jc->runs;
	max_runs = jc->max_runs > runs ? jc->max_runs : runs;
	config_expand(&pts, &npts, jc);
	if (npts == 0 && jc->naxes > 0) {
		reply_err(x, 400,
		    "job '%s': the matrix has no points left "
		    "after exclude",
		    jc->name);
		goto out;
	}
	labels = jobspec_strlist(&jc->hosts);
	ltext = pwjson_dump(labels);
	out = json_array();
	t = (struct submit_tx){ .jc = jc,
		.sides = sides,
		.pts = pts,
		.npts = npts,
		.runs = runs,
		.max_runs = max_runs,
		.max_attempts = x->conf->dc->max_attempts,
		.now = now,
		.ltext = ltext,
		.out = out };
	if (store_tx_retry(x->s, submit_pairs, &t) != 0) {
		reply_store_err(x, -1);
		goto out;
	}
	log_info(
	    "submitted %zu pair(s) of job %s", json_array_size(out), jc->name);
	sched_notify(x->a->sched);
	reply_json(x, 201, json_pack("{s:O}", "pairs", out));
out:
	json_decref(out);
	json_decref(labels);
	free(ltext);
	config_points_free(pts, npts);
	job_config_free(own);
	for (i = 0; i < 2; i++) {
		json_decref(sides[i].params);
		json_decref(sides[i].tree);
	}
}

static void
cancel_retry(struct ctx *x, int cancel)
{
	int r;

	if (cancel)
		r = sched_cancel(x->a->sched, x->s, x->id[0]);
	else
		r = sched_retry(x->a->sched, x->s, x->id[0]);
	if (r != 0) {
		reply_store_err(x, r);
		return;
	}
	log_info("job %" PRId64 " %s", x->id[0],
	    cancel ? "cancelled" : "queued again");
	reply_json(x, 200,
	    json_pack("{s:I, s:s}", "id", (json_int_t)x->id[0], "state",
	        cancel ? "cancelled" : "queued"));
}

void
api_admin_cancel(struct ctx *x)
{
	cancel_retry(x, 1);
}

void
api_admin_retry(struct ctx *x)
{
	cancel_retry(x, 0);
}

/* POST /api/v1/hosts/{id}/clear: the operator lifts a quarantine. */
void
api_admin_host_clear(struct ctx *x)
{
	struct store_hosts l;
	const char *name = NULL;
	int r;

	if ((r = store_host_list(x->s, &l, 1, x->id[0] - 1, api_now_s(),
	         3 * api_heartbeat_s(x->conf))) != 0) {
		reply_store_err(x, r);
		return;
	}
	if (l.n == 1 && l.v[0].id == x->id[0])
		name = l.v[0].name;
	if (name == NULL) {
		store_hosts_release(&l);
		reply_err(x, 404, "no host %lld", (long long)x->id[0]);
		return;
	}
	if ((r = store_host_clear(x->s, name)) != 0) {
		store_hosts_release(&l);
		reply_store_err(x, r);
		return;
	}
	log_info("host %s: quarantine cleared by the operator", name);
	store_hosts_release(&l);
	reply_json(x, 200,
	    json_pack("{s:I, s:n}", "id", (json_int_t)x->id[0], "quarantined"));
}

/* ---- series (daemon/series) ---- */

/*
 * POST /api/v1/series: the body is an mbox (or one message); query tree
 * and branch say where the series go (defaults: the only tree, its
 * first branch).  The series are recorded 'waiting' and the mbox is
 * queued: the watcher's upload thread applies and triggers them.
 */
void
api_admin_series_post(struct ctx *x)
{
	const struct daemon_config *dc = x->conf->dc;
	const char *tname = httpd_query(x->r, "tree");
	const char *branch = httpd_query(x->r, "branch");
	const struct cfg_tree *tree = NULL;
	struct series_ingest in;
	struct series_result res;
	size_t len, i;
	const char *body = httpd_body(x->r, &len);
	json_t *ids, *states, *out;
	int r;

	if (tname != NULL && *tname != '\0') {
		for (i = 0; i < dc->ntrees; i++)
			if (strcmp(dc->trees[i].name, tname) == 0)
				tree = &dc->trees[i];
		if (tree == NULL) {
			reply_err(x, 400, "query 'tree': unknown tree '%.64s'",
			    tname);
			return;
		}
	} else if (dc->ntrees == 1) {
		tree = &dc->trees[0];
	} else {
		reply_err(x, 400,
		    "query 'tree': required (%zu trees are configured)",
		    dc->ntrees);
		return;
	}
	if (branch == NULL || *branch == '\0') {
		if (tree->branches.n == 0) {
			reply_err(x, 400,
			    "query 'branch': required (tree %s names no "
			    "branch)",
			    tree->name);
			return;
		}
		branch = tree->branches.v[0];
	}
	if (strlen(branch) > CAP_NAME || strstr(branch, "..") != NULL ||
	    strspn(branch,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789._-/") != strlen(branch)) {
		reply_err(x, 400, "query 'branch': not a branch name");
		return;
	}
	if (len == 0) {
		reply_err(x, 400, "body: expected an mbox, got nothing");
		return;
	}
	memset(&in, 0, sizeof(in));
	in.conf = x->conf;
	in.tree = tree;
	in.branch = branch;
	in.inbox = NULL;
	in.now = api_now_s();
	r = series_enqueue_mbox(&res, x->s, &in, body, len, &x->err);
	if (r == ERR_INVALID || r == ERR_TOOBIG) {
		reply_err(x, r == ERR_TOOBIG ? 413 : 400, "body: %s",
		    err_msg(&x->err));
		series_result_release(&res);
		return;
	}
	if (r != 0) {
		reply_err(x, 500, "%s", err_msg(&x->err));
		series_result_release(&res);
		return;
	}
	if (res.n == 0) {
		reply_err(x, 400,
		    "body: no patch series in %zu message(s) (%zu patches, "
		    "%zu without their series)",
		    res.messages, res.patches, res.orphans);
		series_result_release(&res);
		return;
	}
	ids = json_array();
	states = json_array();
	for (i = 0; i < res.n; i++) {
		json_array_append_new(ids, json_integer(res.ids[i]));
		json_array_append_new(states, json_string(res.states[i]));
	}
	out = json_pack("{s:o, s:o, s:i, s:i, s:i, s:i, s:o}", "series", ids,
	    "states", states, "messages", (json_int_t)res.messages, "patches",
	    (json_int_t)res.patches, "orphans", (json_int_t)res.orphans,
	    "known", (json_int_t)res.known, "queue",
	    res.queue_id ? json_integer(res.queue_id) : json_null());
	series_result_release(&res);
	reply_json(x, 202, out);
}

/* ---- bisections (daemon/bisect.c, docs/API.md) ---- */

void
api_admin_bisect_post(struct ctx *x)
{
	static const char *const keys[] = { "regression", "change_point",
		NULL };
	json_t *out = NULL, *jr, *jc;
	const char *field;
	int64_t from = 0, id = 0;
	int r;

	if (api_parse_body(x, 0) == -1 ||
	    api_only_keys(x, x->body, keys, "body") == -1)
		return;
	/* One origin: a regression row, or a history change point. */
	jr = json_object_get(x->body, "regression");
	jc = json_object_get(x->body, "change_point");
	field = jc != NULL ? "change_point" : "regression";
	if (jr != NULL && jc != NULL) {
		reply_err(x, 400,
		    "fields 'regression' and 'change_point': give one of "
		    "them");
		return;
	}
	if (!json_is_integer(jc ? jc : jr) ||
	    (from = json_integer_value(jc ? jc : jr)) <= 0) {
		reply_err(x, 400, "field '%s': expected a %s id", field,
		    jc ? "change point" : "regression");
		return;
	}
	r = jc ? bisect_begin_cp(
	             x->s, x->conf, &id, from, "manual", api_now_s(), &x->err)
	       : bisect_begin(
	             x->s, x->conf, &id, from, "manual", api_now_s(), &x->err);
	if (r == ERR_NOTFOUND) {
		reply_err(x, 404, "field '%s': %s", field, err_msg(&x->err));
		return;
	}
	if (r == ERR_INVALID) {
		reply_err(x, 400, "field '%s': %s", field, err_msg(&x->err));
		return;
	}
	if (r == ERR_EXISTS) {
		reply_err(x, 409, "%s", err_msg(&x->err));
		return;
	}
	if (r != 0) {
		reply_err(x, 500, "%s", err_msg(&x->err));
		return;
	}
	sched_notify(x->a->sched); /* the bisect worker looks at once */
	if ((r = api_bisect_json(x->s, id, &out)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 201, out);
}

void
api_admin_bisect_cancel(struct ctx *x)
{
	json_t *out = NULL;
	int r = bisect_cancel(x->s, x->id[0], api_now_s(), &x->err);

	if (r == ERR_NOTFOUND || r == ERR_CONFLICT) {
		reply_err(
		    x, r == ERR_NOTFOUND ? 404 : 409, "%s", err_msg(&x->err));
		return;
	}
	if (r != 0) {
		reply_err(x, 500, "%s", err_msg(&x->err));
		return;
	}
	sched_notify(x->a->sched);
	if ((r = api_bisect_json(x->s, x->id[0], &out)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}
