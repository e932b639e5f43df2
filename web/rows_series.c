/*
 * The JSON of the typed series reads (web/rows_series.h).  The keys and
 * values are the API's (docs/API.md), fixed by a golden file:
 * tests/unit/web_test.c compares the bytes with
 * tests/data/web/series.json.
 */
#include <math.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/json.h"
#include "daemon/series_latency.h"
#include "daemon/series_versus.h"
#include "store/mail_commands.h"
#include "store/mail_skipped.h"
#include "store/series.h"
#include "web/rows_series.h"

static void
set_str(json_t *o, const char *key, const char *s)
{
	json_object_set_new(o, key, s ? json_string(s) : json_null());
}

/* v unless it is none (the store's 0 for an id, -1 for a count). */
static void
set_int(json_t *o, const char *key, int64_t v, int64_t none)
{
	json_object_set_new(o, key, v == none ? json_null() : json_integer(v));
}

static void
set_has(json_t *o, const char *key, int has, int64_t v)
{
	json_object_set_new(o, key, has ? json_integer(v) : json_null());
}

static json_t *
patches_json(const struct store_series_row *r)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < r->npatches; i++) {
		const struct store_series_patch_row *p = &r->patches[i];
		json_t *o = json_object();

		json_object_set_new(o, "seq", json_integer(p->seq));
		set_str(o, "message_id", p->message_id);
		set_str(o, "subject", p->subject);
		set_str(o, "author", p->author);
		set_has(o, "date", p->has_date, p->date);
		set_int(o, "commit_id", p->commit_id, 0);
		set_str(o, "sha", p->sha);
		set_str(o, "applied_by", p->applied_by);
		set_str(o, "verdicts", p->verdicts);
		json_array_append_new(arr, o);
	}
	return arr;
}

/* The keys both shapes of a series have. */
static json_t *
series_common(const struct store_series_row *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(r->id));
	set_str(o, "inbox", r->inbox);
	set_str(o, "title", r->title);
	set_int(o, "version", r->version, -1);
	set_int(o, "total", r->total, -1);
	set_int(o, "found", r->found, -1);
	set_str(o, "author", r->author);
	set_has(o, "time", r->has_time, r->time);
	set_str(o, "state", r->state);
	set_str(o, "error", r->error);
	set_str(o, "tree", r->tree);
	set_str(o, "branch", r->branch);
	set_str(o, "base_sha", r->base_sha);
	set_int(o, "commit_id", r->commit_id, 0);
	set_str(o, "commit_sha", r->commit_sha);
	set_str(o, "branch_tag", r->branch_tag);
	set_int(o, "supersedes", r->supersedes, 0);
	set_str(o, "fallback", r->fallback);
	return o;
}

static json_t *
series_row(const struct store_series_row *r)
{
	json_t *o = series_common(r);

	set_str(o, "message_id", r->message_id);
	set_str(o, "ref", r->ref);
	set_has(o, "created", r->has_created, r->created);
	set_has(o, "updated", r->has_updated, r->updated);
	set_str(o, "verdicts", r->verdicts);
	return o;
}

json_t *
rows_series_list_json(const struct store_series_list *l)
{
	json_t *arr = json_array(), *o;
	char c[32];
	size_t i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(arr, series_row(&l->v[i]));
	o = json_pack("{s:o}", "series", arr);
	if (l->next_cursor != 0) {
		snprintf(c, sizeof(c), "%lld", (long long)l->next_cursor);
		json_object_set_new(o, "next_cursor", json_string(c));
	}
	return o;
}

json_t *
rows_series_json(const struct store_series_row *r)
{
	json_t *o = series_row(r);

	json_object_set_new(o, "patches", patches_json(r));
	return json_pack("{s:o}", "series", o);
}

json_t *
rows_series_page_json(const struct store_series_row *r)
{
	json_t *pairs = json_array();
	size_t i;

	for (i = 0; i < r->npairs; i++)
		json_array_append_new(pairs, json_integer(r->pairs[i]));
	return json_pack("{s:o, s:o, s:o}", "series", series_common(r), "pairs",
	    pairs, "patches", patches_json(r));
}

/* A figure of the analysis: null unless finite (series_versus' rule). */
static json_t *
known_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *
rows_series_versus_json(const struct series_versus *v)
{
	json_t *rows = json_array();
	size_t i;

	for (i = 0; i < v->nrows; i++) {
		const struct series_versus_row *r = &v->rows[i];

		json_array_append_new(rows,
		    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o, "
		              "s:o, s:o, s:o, s:s, s:I, s:I}",
		        "host", r->host, "job", r->job, "point", r->point,
		        "metric", r->metric, "unit", r->unit, "better",
		        r->better, "previous_median", known_num(r->prev_median),
		        "median", known_num(r->median), "change_pct",
		        known_num(r->change_pct), "ci_low",
		        known_num(r->ci_low), "ci_high", known_num(r->ci_high),
		        "p", known_num(r->p), "verdict", r->verdict,
		        "n_previous", (json_int_t)r->n_prev, "n",
		        (json_int_t)r->n));
	}
	return json_pack("{s:o, s:I, s:o}", "previous",
	    v->prev_id > 0
	        ? json_pack("{s:I, s:I}", "id", (json_int_t)v->prev_id,
	              "version", (json_int_t)v->prev_version)
	        : json_null(),
	    "version", (json_int_t)v->version, "rows", rows);
}

/* ---- time to report ---- */

static json_t *
time_or_null(int64_t t)
{
	return t > 0 ? json_integer((json_int_t)t) : json_null();
}

json_t *
rows_series_latency_json(const struct store_series_latency *l)
{
	json_t *o = json_object(), *st = json_object();
	struct buf b = BUF_INIT(1024);
	size_t k;

	json_object_set_new(o, "posted", time_or_null(l->posted));
	json_object_set_new(o, "seen", time_or_null(l->seen));
	json_object_set_new(o, "applied", time_or_null(l->applied));
	json_object_set_new(o, "first_run", time_or_null(l->first_run));
	json_object_set_new(o, "last_run", time_or_null(l->last_run));
	json_object_set_new(o, "verdict", time_or_null(l->verdict));
	json_object_set_new(o, "mailed", time_or_null(l->mailed));
	for (k = 0; k < SERIES_STAGES; k++) {
		int64_t s = series_stage_s(l, k);

		json_object_set_new(st, series_stages[k].name,
		    s >= 0 ? json_integer((json_int_t)s) : json_null());
	}
	json_object_set_new(o, "stages", st);
	series_latency_text(&b, l);
	json_object_set_new(o, "summary", json_string(b.data ? b.data : ""));
	buf_release(&b);
	return o;
}

json_t *
rows_latency_summary_json(
    const struct series_stage_sum *sum, size_t nseries, int64_t since)
{
	json_t *a = json_array();
	size_t k;

	for (k = 0; k < SERIES_STAGES; k++)
		json_array_append_new(a,
		    json_pack("{s:s, s:s, s:s, s:I, s:o, s:o}", "stage",
		        series_stages[k].name, "from", series_stages[k].from,
		        "to", series_stages[k].to, "n", (json_int_t)sum[k].n,
		        "median_s",
		        sum[k].n ? json_integer((json_int_t)sum[k].median)
		                 : json_null(),
		        "p90_s",
		        sum[k].n ? json_integer((json_int_t)sum[k].p90)
		                 : json_null()));
	return json_pack("{s:I, s:I, s:o}", "series", (json_int_t)nseries,
	    "since", (json_int_t)since, "stages", a);
}

json_t *
rows_mail_commands_json(const struct store_mail_commands *l)
{
	json_t *arr = json_array();
	size_t i, k;

	for (i = 0; i < l->n; i++) {
		const struct store_mail_command *c = &l->v[i];
		json_t *o = json_object(), *pairs = json_array();

		json_object_set_new(o, "id", json_integer(c->id));
		set_str(o, "sender", c->sender);
		set_str(o, "command", c->command);
		set_str(o, "parsed", c->parsed);
		json_object_set_new(o, "line", json_integer(c->line));
		set_str(o, "message_id", c->message_id);
		json_object_set_new(o, "at", json_integer(c->created));
		set_str(o, "job", c->job);
		set_str(o, "commit", c->commit_sha);
		set_str(o, "outcome", c->outcome);
		set_str(o, "reason", c->reason);
		for (k = 0; k < c->npairs; k++)
			json_array_append_new(pairs, json_integer(c->pairs[k]));
		json_object_set_new(o, "pairs", pairs);
		set_int(o, "series", c->made_series_id, 0);
		json_array_append_new(arr, o);
	}
	return arr;
}

json_t *
rows_mail_skipped_json(const struct store_mail_skipped_list *l)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct store_mail_skipped *k = &l->v[i];
		json_t *o = json_object();

		set_str(o, "inbox", k->inbox);
		set_str(o, "message_id", k->message_id);
		set_str(o, "subject", k->subject);
		set_str(o, "reason", k->reason);
		json_object_set_new(o, "at", json_integer(k->created));
		json_array_append_new(arr, o);
	}
	return arr;
}
