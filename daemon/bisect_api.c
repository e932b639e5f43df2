/*
 * JSON of the bisection routes (bisect_api.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "daemon/bisect_api.h"
#include "daemon/store.h"
#include "daemon/store_bisect.h"

static json_t *
str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *
num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *
steps_json(struct store *s, int64_t id)
{
	struct store_bisect_step *v = NULL;
	json_t *a = json_array();
	size_t n = 0, i;

	if (store_bisect_steps(s, &v, &n, id) != 0) {
		json_decref(a);
		return NULL;
	}
	for (i = 0; i < n; i++)
		json_array_append_new(a,
		    json_pack("{s:I, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, "
		              "s:o, s:o, s:o, s:I}",
		        "id", (json_int_t)v[i].id, "kind", v[i].kind, "sha",
		        v[i].sha, "subject", str_or_null(v[i].subject),
		        "good_pair",
		        v[i].good_pair ? json_integer(v[i].good_pair)
		                       : json_null(),
		        "bad_pair",
		        v[i].bad_pair ? json_integer(v[i].bad_pair)
		                      : json_null(),
		        "class", str_or_null(v[i].cls), "vs_good",
		        str_or_null(v[i].vs_good), "vs_good_pct",
		        num_or_null(v[i].vs_good_pct), "vs_bad",
		        str_or_null(v[i].vs_bad), "vs_bad_pct",
		        num_or_null(v[i].vs_bad_pct), "note",
		        str_or_null(v[i].note), "updated",
		        (json_int_t)v[i].updated));
	store_bisect_steps_free(v, n);
	return a;
}

json_t *
bisect_api_json(struct store *s, const struct store_bisect *b, int steps)
{
	json_t *o = json_pack("{s:I, s:I, s:I, s:s, s:o, s:s, s:s, s:o, s:s, "
	                      "s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
	                      "s:o, s:s, s:I, s:I, s:b, s:I, s:I}",
	    "id", (json_int_t)b->id, "regression", (json_int_t)b->regression_id,
	    "pair", (json_int_t)b->pair_id, "job", b->job, "host",
	    str_or_null(b->host), "point", b->point, "metric", b->metric,
	    "tree", str_or_null(b->tree), "good", b->good_sha, "bad",
	    b->bad_sha, "state", b->state, "lo", str_or_null(b->lo_sha), "hi",
	    str_or_null(b->hi_sha), "culprit", str_or_null(b->culprit_sha),
	    "culprit_subject", str_or_null(b->culprit_subject), "reason",
	    str_or_null(b->reason), "verify_parent",
	    str_or_null(b->verify_parent), "verify_revert",
	    str_or_null(b->verify_revert), "revert_commit",
	    str_or_null(b->revert_sha), "started_by", b->started_by,
	    "steps_limit", (json_int_t)b->steps_limit, "max_inconclusive",
	    (json_int_t)b->max_inconclusive, "full_dag", b->full_dag, "created",
	    (json_int_t)b->created, "updated", (json_int_t)b->updated);

	/* Where it started: a regression row, or a change point (its id
	 * when started, its commit, branch and change). */
	if (o != NULL) {
		int cp = b->origin && strcmp(b->origin, "change-point") == 0;

		json_object_set_new(o, "regression",
		    b->regression_id > 0 ? json_integer(b->regression_id)
		                         : json_null());
		json_object_set_new(o, "origin",
		    json_string(cp ? "change-point" : "regression"));
		json_object_set_new(o, "change_point",
		    cp ? json_pack("{s:o, s:o, s:o, s:o}", "id",
		             b->change_point_id > 0
		                 ? json_integer(b->change_point_id)
		                 : json_null(),
		             "sha", str_or_null(b->origin_sha), "branch",
		             str_or_null(b->branch), "change_pct",
		             num_or_null(b->origin_pct))
		       : json_null());
	}
	if (o != NULL && steps) {
		json_t *a = steps_json(s, b->id);

		if (a == NULL) {
			json_decref(o);
			return NULL;
		}
		json_object_set_new(o, "steps", a);
	}
	return o;
}

int
bisect_api_get(json_t **out, struct store *s, int64_t id)
{
	struct store_bisect *b = NULL;
	json_t *o;
	int r;

	*out = NULL;
	if ((r = store_bisect_get(s, &b, id)) != 0)
		return r;
	o = bisect_api_json(s, b, 1);
	store_bisect_free(b);
	if (o == NULL)
		return -1;
	*out = json_pack("{s:o}", "bisection", o);
	return 0;
}

int
bisect_api_list(json_t **out, struct store *s, int64_t limit, int64_t cursor)
{
	int64_t *ids = NULL;
	size_t n = 0, i;
	json_t *a;

	*out = NULL;
	if (store_bisect_list(s, &ids, &n, limit, cursor) != 0)
		return -1;
	a = json_array();
	for (i = 0; i < n; i++) {
		struct store_bisect *b = NULL;

		if (store_bisect_get(s, &b, ids[i]) != 0) {
			free(ids);
			json_decref(a);
			return -1;
		}
		json_array_append_new(a, bisect_api_json(s, b, 0));
		store_bisect_free(b);
	}
	*out = json_pack("{s:o}", "bisections", a);
	/* A full page may have more after it: the oldest id is the cursor. */
	if (n > 0 && (int64_t)n == limit && ids[n - 1] > 1) {
		char c[32];

		snprintf(c, sizeof(c), "%lld", (long long)ids[n - 1]);
		json_object_set_new(*out, "next_cursor", json_string(c));
	}
	free(ids);
	return 0;
}
