/*
 * The JSON of the typed store's rows (web/rows.h).  The keys and values
 * are the API's (docs/API.md), fixed by a golden file:
 * tests/unit/web_test.c compares the bytes with tests/data/web/rows.json.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/spread.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/json.h"
#include "common/redact.h"
#include "daemon/kfacts.h"
#include "store/alerts.h"
#include "store/claim.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/pairs.h"
#include "web/rows.h"

static json_t *
str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *
id_or_null(int64_t id)
{
	return id > 0 ? json_integer(id) : json_null();
}

static void
set_cursor(json_t *o, int64_t next)
{
	char c[32];

	if (next == 0)
		return;
	snprintf(c, sizeof(c), "%lld", (long long)next);
	json_object_set_new(o, "next_cursor", json_string(c));
}

json_t *
rows_host_json(const struct store_host *h)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(h->id));
	json_object_set_new(o, "name", str_or_null(h->name));
	json_object_set_new(
	    o, "labels", pwjson_doc(h->labels_json, json_array()));
	json_object_set_new(
	    o, "inventory", pwjson_doc(h->inventory_json, json_object()));
	json_object_set_new(
	    o, "state", json_string(h->online ? "online" : "offline"));
	json_object_set_new(o, "current_job", id_or_null(h->current_job));
	json_object_set_new(o, "last_seen", json_integer(h->last_seen));
	json_object_set_new(o, "registered", json_integer(h->registered));
	json_object_set_new(o, "quarantined", str_or_null(h->quarantined));
	json_object_set_new(o, "quarantined_at",
	    h->has_quarantined_at ? json_integer(h->quarantined_at)
	                          : json_null());
	return o;
}

json_t *
rows_hosts_json(const struct store_hosts *l)
{
	json_t *arr = json_array(), *o;
	size_t i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(arr, rows_host_json(&l->v[i]));
	o = json_pack("{s:o}", "hosts", arr);
	set_cursor(o, l->next_cursor);
	return o;
}

static json_t *
job_json(const struct store_job *j)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(j->id));
	json_object_set_new(o, "pair_id", id_or_null(j->pair_id));
	json_object_set_new(o, "role", str_or_null(j->role));
	json_object_set_new(o, "name", str_or_null(j->name));
	json_object_set_new(o, "point", str_or_null(j->point));
	json_object_set_new(o, "state", str_or_null(j->state));
	json_object_set_new(o, "host", str_or_null(j->host));
	json_object_set_new(o, "attempts", json_integer(j->attempts));
	json_object_set_new(o, "runs", json_integer(j->runs));
	json_object_set_new(o, "runs_done", json_integer(j->runs_done));
	json_object_set_new(o, "progress", str_or_null(j->progress));
	json_object_set_new(o, "error", str_or_null(j->error));
	json_object_set_new(o, "created", json_integer(j->created));
	json_object_set_new(o, "updated", json_integer(j->updated));
	json_object_set_new(o, "lease_expires",
	    j->has_lease ? json_integer(j->lease_expires) : json_null());
	json_object_set_new(o, "max_runs", json_integer(j->max_runs));
	json_object_set_new(o, "commit", str_or_null(j->commit));
	json_object_set_new(o, "tree", str_or_null(j->tree));
	json_object_set_new(o, "subject", str_or_null(j->subject));
	return o;
}

json_t *
rows_jobs_json(const struct store_jobs *l)
{
	json_t *arr = json_array(), *o;
	size_t i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(arr, job_json(&l->v[i]));
	o = json_pack("{s:o}", "jobs", arr);
	set_cursor(o, l->next_cursor);
	return o;
}

/* A stored document (a run's profile, host state): its JSON, or its
 * text when it does not parse (NULL when that is not UTF-8 either). */
static json_t *
doc_or_text(const char *text)
{
	json_t *v = pwjson_parse(text, strlen(text), NULL);

	return v ? v : json_string(text);
}

static json_t *
job_run_json(const struct store_job_run *r)
{
	json_t *o = json_object(), *metrics = json_array();
	size_t i;

	json_object_set_new(o, "index", json_integer(r->index));
	json_object_set_new(o, "status", str_or_null(r->status));
	json_object_set_new(o, "host", str_or_null(r->host));
	json_object_set_new(o, "duration_s",
	    isnan(r->duration_s) ? json_null() : json_real(r->duration_s));
	json_object_set_new(o, "error", str_or_null(r->error));
	json_object_set_new(o, "attempt", json_integer(r->attempt));
	json_object_set_new(o, "created", json_integer(r->created));
	/* A metric whose text is not UTF-8 is left out, as before. */
	for (i = 0; i < r->nmetrics; i++)
		json_array_append_new(metrics,
		    json_pack("{s:s, s:f, s:s, s:s}", "name",
		        r->metrics[i].name, "value", r->metrics[i].value,
		        "unit", r->metrics[i].unit, "better",
		        r->metrics[i].better));
	json_object_set_new(o, "metrics", metrics);
	if (r->profile_json != NULL)
		json_object_set_new(o, "profile", doc_or_text(r->profile_json));
	if (r->host_state_json != NULL)
		json_object_set_new(
		    o, "host_state", doc_or_text(r->host_state_json));
	return o;
}

json_t *
rows_job_detail_json(const struct store_job_detail *d)
{
	json_t *o = job_json(&d->job), *runs = json_array(), *log;
	size_t i;

	for (i = 0; i < d->nruns; i++)
		json_array_append_new(runs, job_run_json(&d->runs[i]));
	/* "runs" is the wanted count in the list; here it is the runs. */
	json_object_set_new(o, "runs_wanted", json_integer(d->job.runs));
	json_object_set_new(o, "runs", runs);
	log = json_stringn(d->log, d->log_len);
	json_object_set_new(o, "log", log ? log : json_string(""));
	return o;
}

static json_t *
num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *
count_or_null(int64_t n)
{
	return n < 0 ? json_null() : json_integer(n);
}

json_t *
rows_comparison_json(const struct store_comparison *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "metric", str_or_null(c->metric));
	json_object_set_new(o, "base_median", num_or_null(c->base_median));
	json_object_set_new(o, "cand_median", num_or_null(c->cand_median));
	/* Schema v33: each side's mean, sample sd and %stddev (LKP's). */
	json_object_set_new(o, "base_mean", num_or_null(c->base_mean));
	json_object_set_new(o, "base_sd", num_or_null(c->base_sd));
	json_object_set_new(o, "base_sd_pct",
	    num_or_null(spread_pct(c->base_mean, c->base_sd)));
	json_object_set_new(o, "cand_mean", num_or_null(c->cand_mean));
	json_object_set_new(o, "cand_sd", num_or_null(c->cand_sd));
	json_object_set_new(o, "cand_sd_pct",
	    num_or_null(spread_pct(c->cand_mean, c->cand_sd)));
	json_object_set_new(o, "change_pct", num_or_null(c->change_pct));
	json_object_set_new(o, "ci_low", num_or_null(c->ci_low));
	json_object_set_new(o, "ci_high", num_or_null(c->ci_high));
	json_object_set_new(o, "p", num_or_null(c->p));
	json_object_set_new(o, "verdict", str_or_null(c->verdict));
	json_object_set_new(o, "p_adjusted", num_or_null(c->p_adjusted));
	json_object_set_new(o, "min_effect_pct", num_or_null(c->min_effect));
	json_object_set_new(o, "unit", str_or_null(c->unit));
	json_object_set_new(o, "better", str_or_null(c->better));
	json_object_set_new(o, "n_base", count_or_null(c->n_base));
	json_object_set_new(o, "n_cand", count_or_null(c->n_cand));
	json_object_set_new(o, "final", json_boolean(c->final));
	json_object_set_new(o, "note", str_or_null(c->note));
	return o;
}

/* A side's job and what it cost: its rounds and, for a kernel job, its
 * boots (null: none recorded; 0: no kernel job, nothing booted). */
static json_t *
pair_side_json(const struct store_pair *p, int i)
{
	json_t *o = job_json(&p->jobs.v[i]);

	json_object_set_new(o, "rounds", json_integer(p->rounds[i]));
	json_object_set_new(o, "boots", count_or_null(p->boots[i]));
	return o;
}

json_t *
rows_pair_json(const struct store_pair *p)
{
	json_t *o = json_object(), *cmp = json_array();
	size_t i;

	json_object_set_new(o, "id", json_integer(p->id));
	json_object_set_new(o, "name", str_or_null(p->name));
	json_object_set_new(o, "point", str_or_null(p->point));
	json_object_set_new(o, "host", str_or_null(p->host));
	json_object_set_new(o, "deprioritised", json_boolean(p->deprioritised));
	json_object_set_new(o, "created", json_integer(p->created));
	json_object_set_new(o, "suspect", str_or_null(p->suspect));
	if (p->jobs.n == 2) {
		json_object_set_new(o, "base", pair_side_json(p, 0));
		json_object_set_new(o, "candidate", pair_side_json(p, 1));
	}
	for (i = 0; i < p->ncmps; i++)
		json_array_append_new(cmp, rows_comparison_json(&p->cmps[i]));
	json_object_set_new(o, "comparisons", cmp);
	return o;
}

static int
is_webhook(const struct store_alert *a)
{
	return a->kind != NULL && strcmp(a->kind, "webhook") == 0 &&
	    a->target != NULL;
}

char *
rows_alert_target(const struct store_alert *a)
{
	return is_webhook(a) ? redact_url_host(a->target)
	                     : redact_userinfo(a->target);
}

char *
rows_alert_error(const struct store_alert *a)
{
	char *e = redact_userinfo(a->last_error), *p;
	struct buf b = BUF_INIT(SIZE_MAX);

	if (e == NULL || !is_webhook(a) || a->target[0] == '\0' ||
	    strstr(e, a->target) == NULL)
		return e;
	{
		char *host = redact_url_host(a->target);
		const char *s = e;

		while ((p = strstr(s, a->target)) != NULL) {
			buf_add(&b, s, (size_t)(p - s));
			buf_puts(&b, host);
			s = p + strlen(a->target);
		}
		buf_puts(&b, s);
		free(host);
	}
	free(e);
	return buf_take(&b);
}

json_t *
rows_alert_json(const struct store_alert *a, int payload)
{
	char *target = rows_alert_target(a), *error = rows_alert_error(a);
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:o, s:I, s:o, s:o, "
	                      "s:I, s:b, s:o, s:o, s:o}",
	    "id", (json_int_t)a->id, "kind", a->kind, "state", a->state,
	    "delivery", a->key, "target", str_or_null(target), "subject",
	    str_or_null(a->subject), "attempts", (json_int_t)a->attempts,
	    "last_error", str_or_null(error), "sent",
	    a->sent ? json_integer(a->sent) : json_null(), "created",
	    (json_int_t)a->created, "followup", a->followup, "commit",
	    str_or_null(a->sha), "benchmark", str_or_null(a->job), "host",
	    str_or_null(a->host));

	if (o != NULL)
		json_object_set_new(o, "next_try",
		    strcmp(a->state, "pending") == 0 ? json_integer(a->next_try)
		                                     : json_null());
	if (o != NULL && payload)
		json_object_set_new(o, "payload", str_or_null(a->payload));
	free(target);
	free(error);
	return o;
}

json_t *
rows_alerts_json(
    const struct store_alert *a, size_t n, const struct store_alert_more *more)
{
	json_t *arr = json_array(), *o;
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(arr, rows_alert_json(&a[i], 0));
	o = json_pack("{s:o, s:o}", "alerts", arr, "next_cursor",
	    more->next_cursor > 0 ? json_integer(more->next_cursor)
	                          : json_null());
	if (o != NULL && more->capped)
		json_object_set_new(o, "partial", json_true());
	return o;
}

/* The job object of claim c (its partner's too, but no lease). */
static json_t *
claim_job_json(const struct store_claimed *c)
{
	struct err e = { 0 };
	json_t *job = NULL, *done = json_array();
	size_t i;

	/* The spec is the stored document; the claim's fields replace any
	 * the spec has of the same name. */
	if (c->spec_json != NULL)
		job = pwjson_parse(c->spec_json, strlen(c->spec_json), &e);
	if (!json_is_object(job)) {
		json_decref(job);
		job = json_object();
	}
	json_object_set_new(job, "id", json_integer(c->job_id));
	json_object_set_new(job, "pair_id", json_integer(c->pair_id));
	json_object_set_new(job, "role", json_string(c->role ? c->role : ""));
	json_object_set_new(job, "attempt", json_integer(c->attempt));
	json_object_set_new(job, "runs", json_integer(c->runs));
	json_object_set_new(job, "max_runs", json_integer(c->max_runs));
	if (c->round > 0) {
		json_object_set_new(job, "round", json_integer(c->round));
		json_object_set_new(job, "rounds", json_integer(1));
	}
	for (i = 0; i < c->ndone; i++)
		json_array_append_new(done, json_integer(c->done_runs[i]));
	json_object_set_new(job, "done_runs", done);
	json_object_set_new(
	    job, "instance", json_string(c->instance ? c->instance : ""));
	/* A shared build's image: the runner downloads it instead of
	 * building (docs/KERNEL.md, "Shared builds"). */
	if (c->image_json != NULL &&
	    json_is_object(json_object_get(job, "kernel")))
		json_object_set_new(json_object_get(job, "kernel"), "image",
		    pwjson_doc(c->image_json, json_object()));
	return job;
}

json_t *
rows_claim_json(const struct store_claimed *c)
{
	json_t *job = claim_job_json(c);

	if (c->partner != NULL) {
		json_object_set_new(job, "partner", claim_job_json(c->partner));
		json_object_set_new(
		    job, "round_size", json_integer(c->round_size));
	}
	return json_pack("{s:o, s:I}", "job", job, "lease_expires",
	    (json_int_t)c->lease_expires);
}

void
rows_pair_kernels_json(json_t *pair, const struct kfacts_pair *k)
{
	json_t *base = json_object_get(pair, "base"),
	       *cand = json_object_get(pair, "candidate");

	if (json_is_object(base))
		json_object_set_new(base, "kernel", kfacts_json(&k->side[0]));
	if (json_is_object(cand))
		json_object_set_new(cand, "kernel", kfacts_json(&k->side[1]));
	json_object_set_new(pair, "kernel_warning",
	    k->warning[0] != '\0' ? json_string(k->warning) : json_null());
}
