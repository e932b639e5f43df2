/*
 * Dashboard routes.  Each handler validates its parameters, reads the
 * store, and either renders a page (views.h) or dumps the same data as
 * JSON.  Strings in view structs are borrowed from the store's JSON
 * replies, which live in x->keep until the request ends.
 *
 * Comparisons: a pair's row shows the medians of both sides computed
 * here and the change between them until the verdict thread
 * (daemon/verdict.c) has filled the comparisons table; its row then wins
 * (medians, Hodges-Lehmann change, interval, p, verdict, min_effect).
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"
#include "common/caps.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/canary.h"
#include "daemon/dconf.h"
#include "daemon/httpd.h"
#include "daemon/kfacts.h"
#include "daemon/series_versus.h"
#include "daemon/store.h"
#include "daemon/store_alert.h"
#include "daemon/store_bisect.h"
#include "web/api_int.h"
#include "web/reply.h"
#include "web/session.h"
#include "web/views.h"
#include "web/web.h"

#define COOKIE_SESSION "pw_session"
#define COOKIE_PRE "pw_pre" /* login form CSRF (double submit) */
#define PAGE_ROWS 50
#define PAGE_MAX 500
#define RECENT_JOBS 400   /* candidate jobs the overview looks at */
#define OVERVIEW_ITEMS 60 /* commits and pairs it shows */
#define HISTORY_JOBS 200  /* jobs per history page */
#define PAIRS_PER_PAGE 40 /* pairs of one commit or series */
#define FORM_FIELD_MAX 4096

enum { CACHE_PAGE, CACHE_JSON, CACHE_N };

struct web {
	struct session_table *sessions;
	pthread_mutex_t mu; /* the cache */
	struct {
		char *body;
		size_t len;
		int64_t expires_ms; /* monotonic */
	} cache[CACHE_N];
};

/* ---- state across requests ----------------------------------------- */

struct web *
web_new(void)
{
	struct web *w = xcalloc(1, sizeof(*w));

	w->sessions = session_table_new();
	pthread_mutex_init(&w->mu, NULL);
	return w;
}

void
web_free(struct web *w)
{
	int i;

	if (w == NULL)
		return;
	session_table_free(w->sessions);
	for (i = 0; i < CACHE_N; i++)
		free(w->cache[i].body);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

/* A copy of a fresh cached body, or NULL. */
static char *
cache_get(struct web *w, int slot, size_t *len)
{
	char *copy = NULL;

	pthread_mutex_lock(&w->mu);
	if (w->cache[slot].body &&
	    w->cache[slot].expires_ms > clock_mono_ms()) {
		*len = w->cache[slot].len;
		copy = xmalloc(*len + 1);
		memcpy(copy, w->cache[slot].body, *len + 1);
	}
	pthread_mutex_unlock(&w->mu);
	return copy;
}

static void
cache_put(struct web *w, int slot, const char *body, size_t len)
{
	char *copy = xmalloc(len + 1);

	memcpy(copy, body, len);
	copy[len] = '\0';
	pthread_mutex_lock(&w->mu);
	free(w->cache[slot].body);
	w->cache[slot].body = copy;
	w->cache[slot].len = len;
	w->cache[slot].expires_ms = clock_mono_ms() + WEB_CACHE_MS;
	pthread_mutex_unlock(&w->mu);
}

/* ---- small helpers -------------------------------------------------- */

/* A query parameter, NULL when absent or empty. */
static const char *
q(struct ctx *x, const char *key)
{
	const char *v = httpd_query(x->r, key);

	return v && *v ? v : NULL;
}

static json_t *
keep(struct ctx *x, json_t *o)
{
	json_array_append_new(x->keep, o);
	return o;
}

static const char *
jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int64_t
jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v))
		return (int64_t)json_real_value(v);
	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	return 0;
}

static double
jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *
jnumber(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A positive decimal id from text; 0 when it is not one. */
static int64_t
parse_id(const char *s, const char **end)
{
	int64_t v = 0;

	if (s == NULL || !isdigit((unsigned char)*s))
		return 0;
	while (isdigit((unsigned char)*s)) {
		if (v > (INT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (*s++ - '0');
	}
	if (end)
		*end = s;
	return v;
}

/* An integer query parameter in [lo, hi]; dflt when absent; -1 bad. */
static int
q_int(struct ctx *x, int64_t *out, const char *key, int64_t dflt, int64_t lo,
    int64_t hi)
{
	const char *v = q(x, key), *end = NULL;

	*out = dflt;
	if (v == NULL)
		return 0;
	if (strcmp(v, "0") == 0)
		*out = 0;
	else if ((*out = parse_id(v, &end)) == 0 || *end != '\0')
		return -1;
	return *out < lo || *out > hi ? -1 : 0;
}

static double
median(double *v, size_t n)
{
	size_t i, j;

	if (n == 0)
		return NAN;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The value of cookie name in the Cookie header into out, or "". */
static void
cookie(struct ctx *x, const char *name, char *out, size_t len)
{
	const char *h = httpd_header(x->r, "Cookie"), *p;
	size_t n = strlen(name);

	out[0] = '\0';
	for (p = h; p && *p;) {
		while (*p == ' ' || *p == ';')
			p++;
		if (strncmp(p, name, n) == 0 && p[n] == '=') {
			size_t k = strcspn(p + n + 1, ";");

			if (k < len) {
				memcpy(out, p + n + 1, k);
				out[k] = '\0';
			}
			return;
		}
		p += strcspn(p, ";");
	}
}

static int
unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * A field of an application/x-www-form-urlencoded body, decoded into out
 * (capped).  0, or ERR_NOTFOUND when absent.
 */
static int
form(struct ctx *x, const char *key, struct buf *out)
{
	size_t len, n = strlen(key);
	const char *body = httpd_body(x->r, &len), *p = body, *end = body + len;

	buf_reset(out);
	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *f_end = amp ? amp : end;

		if ((size_t)(f_end - p) > n && strncmp(p, key, n) == 0 &&
		    p[n] == '=') {
			for (p += n + 1; p < f_end; p++) {
				int h, l;

				if (*p == '+')
					buf_putc(out, ' ');
				else if (*p == '%' && f_end - p >= 3 &&
				    (h = unhex(p[1])) >= 0 &&
				    (l = unhex(p[2])) >= 0) {
					buf_putc(out, (char)(h * 16 + l));
					p += 2;
				} else
					buf_putc(out, *p);
			}
			return 0;
		}
		if ((size_t)(f_end - p) == n && strncmp(p, key, n) == 0)
			return 0;
		p = f_end + 1;
	}
	return ERR_NOTFOUND;
}

/* ---- replies -------------------------------------------------------- */

static void
security_headers(struct ctx *x)
{
	/* No script may run even if an escape were missed. */
	httpd_reply_header(x->r, "Content-Security-Policy",
	    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
	    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
	httpd_reply_header(x->r, "X-Content-Type-Options", "nosniff");
	httpd_reply_header(x->r, "Referrer-Policy", "same-origin");
	if (x->admin)
		httpd_reply_header(x->r, "Cache-Control", "no-store");
}

static void
reply_page(struct ctx *x, int status, struct buf *b)
{
	size_t len;

	if (buf_failed(b)) {
		buf_release(b);
		httpd_reply(x->r, 500, "text/plain; charset=utf-8",
		    "page too large\n", 15);
		return;
	}
	security_headers(x);
	len = b->len;
	httpd_reply_take(
	    x->r, status, "text/html; charset=utf-8", buf_take(b), len);
}

static void
reply_message(struct ctx *x, int status, const char *title, const char *text)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_message m = { status, title, text };

	view_message_render(&b, &m);
	reply_page(x, status, &b);
}

static void
reply_json(struct ctx *x, int status, json_t *o)
{
	reply_json_take(x->r, status, o, NULL, NULL);
}

static void
keep_cached(void *arg, const char *body, size_t len)
{
	struct ctx *x = arg;

	cache_put(x->a->web, x->cache_slot, body, len);
}

/* reply_json for 200, keeping a copy in the cache slot. */
static void
reply_json_cached(struct ctx *x, json_t *o, int slot)
{
	x->cache_slot = slot;
	reply_json_take(x->r, 200, o, keep_cached, x);
}

static void
reply_json_err(struct ctx *x, int status, const char *msg)
{
	reply_json_error(x->r, status, msg);
}

static void
page_store_err(struct ctx *x, int r)
{
	int status = reply_status_of(r);

	if (status == 500)
		log_warnx("web: %s: %s", httpd_path(x->r), store_errmsg(x->s));
	reply_message(x, status, status == 404 ? "Not found" : "Error",
	    store_errmsg(x->s));
}

static void
json_store_err(struct ctx *x, int r)
{
	int status = reply_status_of(r);

	if (status == 500)
		log_warnx("web: %s: %s", httpd_path(x->r), store_errmsg(x->s));
	reply_json_err(x, status, store_errmsg(x->s));
}

static void
redirect(struct ctx *x, const char *location)
{
	httpd_reply_header(x->r, "Location", location);
	httpd_reply(x->r, 303, "text/plain; charset=utf-8", "see other\n", 10);
}

/* ---- sessions ------------------------------------------------------- */

/* 1 when token is the admin token. */
static int
is_admin_token(struct ctx *x, const char *token)
{
	const struct dconf_runner *runner = NULL;

	return dconf_auth(x->conf, token, &runner) == 1;
}

static void
load_session(struct ctx *x)
{
	cookie(x, COOKIE_SESSION, x->sid, sizeof(x->sid));
	x->admin = x->sid[0] &&
	    session_lookup(x->a->web->sessions, x->sid, x->csrf, x->now) == 0;
}

/* A form post by the logged-in admin with the right CSRF token. */
static int
csrf_ok(struct ctx *x)
{
	struct buf f = BUF_INIT(FORM_FIELD_MAX);
	int ok;

	ok = x->admin && form(x, "csrf", &f) == 0 && !buf_failed(&f) &&
	    session_equal(f.data, x->csrf);
	buf_release(&f);
	return ok;
}

/* ---- comparisons of a pair ----------------------------------------- */

struct cmp_set {
	struct view_cmp_row *rows;
	size_t n, cap;
	struct view_job_ref *jobs;
	size_t njobs, jcap;
};

static void
cmp_set_free(struct cmp_set *c)
{
	free(c->rows);
	free(c->jobs);
}

static double
min_effect(struct ctx *x, const char *job, const char *metric)
{
	const struct job_config *jc = job ? dconf_job(x->conf, job) : NULL;
	size_t i;

	for (i = 0; jc && metric && i < jc->nmetrics; i++)
		if (strcmp(jc->metrics[i].name, metric) == 0)
			return jc->metrics[i].min_effect_pct;
	return 1.0;
}

static void
add_job_ref(struct cmp_set *c, json_t *j)
{
	struct view_job_ref *r;

	if (!json_is_object(j))
		return;
	if (c->njobs == c->jcap) {
		c->jcap = c->jcap ? 2 * c->jcap : 8;
		c->jobs = xreallocarray(c->jobs, c->jcap, sizeof(*c->jobs));
	}
	r = &c->jobs[c->njobs++];
	memset(r, 0, sizeof(*r));
	r->id = jint(j, "id");
	r->role = jstr(j, "role");
	r->host = jstr(j, "host");
	r->state = jstr(j, "state");
	r->progress = jstr(j, "progress");
	r->error = jstr(j, "error");
	r->runs_done = (int)jint(j, "runs_done");
}

static struct view_cmp_row *
new_row(struct cmp_set *c)
{
	struct view_cmp_row *r;

	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->rows = xreallocarray(c->rows, c->cap, sizeof(*c->rows));
	}
	r = &c->rows[c->n++];
	memset(r, 0, sizeof(*r));
	r->base_median = r->cand_median = r->change_pct = NAN;
	r->ci_low = r->ci_high = r->p = NAN;
	r->memcg_tax_pct = r->memcg_tax_base_pct = NAN;
	r->charge_share_pct = r->charge_share_base_pct = NAN;
	return r;
}

/* The values of metric on one side of a pair (free them), *n of them. */
static double *
side_values(json_t *vals, const char *metric, const char *role, size_t *n)
{
	double *v = NULL;
	size_t i, k = 0, cap = 0;
	json_t *o;

	json_array_foreach(vals, i, o)
	{
		const char *mn = jstr(o, "metric"), *r = jstr(o, "role");

		if (!mn || !r || strcmp(mn, metric) || strcmp(r, role))
			continue;
		if (k == cap) {
			cap = cap ? 2 * cap : 16;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[k++] = jnum(o, "value");
	}
	*n = k;
	return v;
}

/* The median of the values of metric on one side of a pair. */
static double
side_median(json_t *vals, const char *metric, const char *role, int *n)
{
	size_t k;
	double *v = side_values(vals, metric, role, &k), m;

	*n = (int)k;
	m = median(v, k);
	free(v);
	return m;
}

/* The runner's charge-path metric (runners/profile.h, docs/MEMCG.md). */
#define CHARGE_SHARE_METRIC "memcg.charge_path_share_pct"
/* Charge-path symbols shown side by side on a pair page. */
#define PAIR_SYMBOLS 15
/* The verdicts' memcg tax comparisons (analysis/memcg_tax.h). */
#define TAX_PREFIX "memcg_tax."

/* The memcg tax of row's metric from the pair's comparisons, if any. */
static void
tax_of(struct view_cmp_row *row, json_t *cmps)
{
	json_t *o;
	size_t i, pl = strlen(TAX_PREFIX);

	json_array_foreach(cmps, i, o)
	{
		const char *m = jstr(o, "metric");

		if (m == NULL || strncmp(m, TAX_PREFIX, pl) != 0 ||
		    strcmp(m + pl, row->metric) != 0)
			continue;
		row->memcg_tax_pct = (jnum(o, "cand_median") - 1) * 100;
		row->memcg_tax_base_pct = (jnum(o, "base_median") - 1) * 100;
		row->memcg_tax_verdict = jstr(o, "verdict");
	}
}

/*
 * Adds the rows of pair id (one per metric) and its two jobs to c.
 * 0, or a store error.
 */
static int
pair_rows(struct ctx *x, struct cmp_set *c, int64_t id, json_t **out_pair)
{
	json_t *pair = NULL, *vals = NULL, *arr, *o, *cmps;
	const char *last = NULL;
	size_t i, first = c->n;
	double share = NAN, share_base = NAN;
	int r, n;

	if ((r = store_pair_get(x->s, &pair, id)) != 0)
		return r;
	keep(x, pair);
	if ((r = store_web_pair_values(x->s, &vals, id)) != 0)
		return r;
	keep(x, vals);
	if (out_pair)
		*out_pair = pair;
	add_job_ref(c, json_object_get(pair, "base"));
	add_job_ref(c, json_object_get(pair, "candidate"));
	arr = json_object_get(vals, "rows");
	cmps = json_object_get(pair, "comparisons");
	json_array_foreach(arr, i, o)
	{
		const char *m = jstr(o, "metric");
		struct view_cmp_row *row;

		if (m == NULL || (last && strcmp(last, m) == 0))
			continue;
		last = m;
		if (strcmp(m, CHARGE_SHARE_METRIC) == 0) {
			/* Its own row too: base and candidate share. */
			share = side_median(arr, m, "candidate", &n);
			share_base = side_median(arr, m, "base", &n);
		}
		row = new_row(c);
		row->metric = m;
		row->unit = jstr(o, "unit");
		row->better = jstr(o, "better");
		row->base_median = side_median(arr, m, "base", &row->base_n);
		row->cand_median =
		    side_median(arr, m, "candidate", &row->cand_n);
		/* Until the comparison below: the change as the verdict
		 * defines it (analysis/analysis.h), not a median ratio. */
		{
			size_t nb, nc;
			double *b = side_values(arr, m, "base", &nb),
			       *cv = side_values(arr, m, "candidate", &nc);

			row->change_pct = analysis_change_pct(b, nb, cv, nc);
			free(b);
			free(cv);
		}
	}
	/* What the comparisons table says wins over the local medians. */
	json_array_foreach(cmps, i, o)
	{
		const char *m = jstr(o, "metric");
		struct view_cmp_row *row = NULL;
		size_t k;

		for (k = first; m && k < c->n; k++)
			if (strcmp(c->rows[k].metric, m) == 0)
				row = &c->rows[k];
		if (m == NULL)
			continue;
		if (row == NULL) {
			/* A row of the verdict's own (a memcg tax): what the
			 * comparison says about it. */
			row = new_row(c);
			row->metric = m;
			row->unit = jstr(o, "unit");
			row->better = jstr(o, "better");
			row->base_n = (int)jint(o, "n_base");
			row->cand_n = (int)jint(o, "n_cand");
		}
		if (isfinite(jnum(o, "base_median")))
			row->base_median = jnum(o, "base_median");
		if (isfinite(jnum(o, "cand_median")))
			row->cand_median = jnum(o, "cand_median");
		if (isfinite(jnum(o, "change_pct")))
			row->change_pct = jnum(o, "change_pct");
		row->ci_low = jnum(o, "ci_low");
		row->ci_high = jnum(o, "ci_high");
		row->p = jnum(o, "p");
		row->verdict = jstr(o, "verdict");
		/* The min_effect the verdict used (NAN: the config's). */
		row->min_effect = jnum(o, "min_effect_pct");
	}
	for (i = first; i < c->n; i++) {
		struct view_cmp_row *row = &c->rows[i];

		row->pair_id = id;
		row->suspect = jstr(pair, "suspect");
		row->host = jstr(pair, "host");
		row->bench = jstr(pair, "name");
		row->point = jstr(pair, "point");
		if (!isfinite(row->min_effect) || row->min_effect <= 0)
			row->min_effect =
			    min_effect(x, row->bench, row->metric);
		row->base_job = jint(json_object_get(pair, "base"), "id");
		row->cand_job = jint(json_object_get(pair, "candidate"), "id");
		if (row->better && strcmp(row->better, "higher") == 0 &&
		    strncmp(row->metric, TAX_PREFIX, strlen(TAX_PREFIX)) != 0) {
			tax_of(row, cmps);
			row->charge_share_pct = share;
			row->charge_share_base_pct = share_base;
		}
	}
	return 0;
}

/* Rows for a list of pair ids ({"pairs": [...]}), at most a page. */
static int
pairs_rows(struct ctx *x, struct cmp_set *c, json_t *pairs)
{
	size_t i;
	json_t *v;
	int r;

	json_array_foreach(pairs, i, v)
	{
		if (i == PAIRS_PER_PAGE)
			break;
		if ((r = pair_rows(x, c, json_integer_value(v), NULL)) != 0)
			return r;
	}
	return 0;
}

static json_t *
rows_json(const struct cmp_set *c)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct view_cmp_row *r = &c->rows[i];
		json_t *o = json_object();

		json_object_set_new(o, "pair_id", json_integer(r->pair_id));
		/* docs/HOST.md: the sides ran under different host states. */
		json_object_set_new(o, "suspect",
		    r->suspect ? json_string(r->suspect) : json_null());
		json_object_set_new(
		    o, "host", r->host ? json_string(r->host) : json_null());
		json_object_set_new(
		    o, "bench", r->bench ? json_string(r->bench) : json_null());
		json_object_set_new(
		    o, "point", r->point ? json_string(r->point) : json_null());
		json_object_set_new(o, "metric", json_string(r->metric));
		json_object_set_new(
		    o, "unit", r->unit ? json_string(r->unit) : json_null());
		json_object_set_new(o, "better",
		    r->better ? json_string(r->better) : json_null());
		json_object_set_new(o, "base_median", jnumber(r->base_median));
		json_object_set_new(o, "cand_median", jnumber(r->cand_median));
		json_object_set_new(o, "change_pct", jnumber(r->change_pct));
		json_object_set_new(o, "ci_low", jnumber(r->ci_low));
		json_object_set_new(o, "ci_high", jnumber(r->ci_high));
		json_object_set_new(o, "p", jnumber(r->p));
		json_object_set_new(
		    o, "min_effect_pct", jnumber(r->min_effect));
		json_object_set_new(o, "base_n", json_integer(r->base_n));
		json_object_set_new(o, "cand_n", json_integer(r->cand_n));
		json_object_set_new(o, "verdict",
		    json_string(r->verdict ? r->verdict : "unknown"));
		json_object_set_new(
		    o, "memcg_tax_pct", jnumber(r->memcg_tax_pct));
		json_object_set_new(
		    o, "memcg_tax_base_pct", jnumber(r->memcg_tax_base_pct));
		json_object_set_new(o, "memcg_tax_verdict",
		    r->memcg_tax_verdict ? json_string(r->memcg_tax_verdict)
		                         : json_null());
		json_object_set_new(
		    o, "charge_path_pct", jnumber(r->charge_share_pct));
		json_object_set_new(o, "charge_path_base_pct",
		    jnumber(r->charge_share_base_pct));
		json_object_set_new(o, "base_job", json_integer(r->base_job));
		json_object_set_new(o, "cand_job", json_integer(r->cand_job));
		json_array_append_new(arr, o);
	}
	return arr;
}

static const char no_analysis[] =
    "Verdicts, confidence intervals and p-values appear once the analysis "
    "has compared the runs; until then the medians of both sides and "
    "their change are shown and the verdict is unknown.";

static int
any_unknown(const struct cmp_set *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->rows[i].verdict == NULL)
			return 1;
	return 0;
}

/* ---- overview ------------------------------------------------------- */

/* Badges rank: the most urgent news first. */
static int
rank(const char *v)
{
	static const char *const order[] = { "regression", "unstable", "failed",
		"running", "queued", "inconclusive", "improvement",
		"unchanged" };
	size_t i;

	for (i = 0; v && i < sizeof(order) / sizeof(order[0]); i++)
		if (strcmp(v, order[i]) == 0)
			return (int)i;
	return 99;
}

/* The worst verdict of a comma-separated list, or NULL. */
static const char *
worst_verdict(const char *vs)
{
	static const char *const words[] = { "regression", "unstable",
		"inconclusive", "improvement", "unchanged" };
	size_t i;

	for (i = 0; vs && i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(vs, words[i]))
			return words[i];
	return NULL;
}

/* What one candidate job (and its base) says, as a verdict-like word. */
static const char *
job_verdict(json_t *j, const char **progress)
{
	const char *cs = jstr(j, "state"), *bs = jstr(j, "base_state");
	const char *vs = jstr(j, "verdicts");

	*progress = NULL;
	if ((cs && strcmp(cs, "running") == 0) ||
	    (bs && strcmp(bs, "running") == 0)) {
		*progress = cs && strcmp(cs, "running") == 0
		    ? jstr(j, "progress")
		    : jstr(j, "base_progress");
		return "running";
	}
	if ((cs && strcmp(cs, "failed") == 0) ||
	    (bs && strcmp(bs, "failed") == 0))
		return "failed";
	if ((cs && strcmp(cs, "queued") == 0) ||
	    (bs && strcmp(bs, "queued") == 0))
		return "queued";
	return worst_verdict(vs); /* NULL: unknown */
}

struct ov_item {
	struct view_overview_item it;
	struct view_badge badges[16];
	char key[32];
	const char *tree, *branch;
	char id[24];
};

static json_t *
overview_build(struct ctx *x, struct view_overview *v,
    struct ov_item **out_items, struct view_overview_group **out_groups,
    int *err)
{
	struct store_stats st;
	json_t *recent = NULL, *counts = NULL, *rows, *j;
	struct ov_item *items = xcalloc(OVERVIEW_ITEMS, sizeof(*items));
	struct view_overview_group *g = xcalloc(OVERVIEW_ITEMS + 1, sizeof(*g));
	size_t i, n = 0, ng = 0, k;
	int r;

	*out_items = items;
	*out_groups = g;
	memset(v, 0, sizeof(*v));
	v->now = x->now;
	if ((r = store_stats(x->s, &st, x->now, x->online_s)) != 0 ||
	    (r = store_web_regression_counts(x->s, &counts)) != 0 ||
	    (r = store_web_recent(x->s, &recent, RECENT_JOBS)) != 0) {
		*err = r;
		return NULL;
	}
	keep(x, counts);
	keep(x, recent);
	v->hosts_online = (int)st.hosts_online;
	v->hosts_total = (int)st.hosts;
	v->queued = st.jobs[0];
	v->running = st.jobs[1];
	v->regressions_new = jint(counts, "new");
	rows = json_object_get(recent, "rows");
	json_array_foreach(rows, i, j)
	{
		struct ov_item *it = NULL;
		char key[32];
		const char *name = jstr(j, "name"), *verdict, *progress;
		int64_t cid = jint(j, "commit_id");

		if (cid)
			snprintf(key, sizeof(key), "c%lld", (long long)cid);
		else
			snprintf(key, sizeof(key), "p%lld",
			    (long long)jint(j, "pair_id"));
		for (k = 0; k < n; k++)
			if (strcmp(items[k].key, key) == 0)
				it = &items[k];
		if (it == NULL) {
			if (n == OVERVIEW_ITEMS)
				continue;
			it = &items[n++];
			memcpy(it->key, key, sizeof(key));
			if (jint(j, "series_id")) {
				it->it.kind = VIEW_SERIES;
				snprintf(it->id, sizeof(it->id), "%lld",
				    (long long)jint(j, "series_id"));
				it->it.id = it->id;
				it->it.subject = jstr(j, "series_title");
			} else if (cid) {
				it->it.kind = VIEW_COMMIT;
				it->it.id = jstr(j, "sha");
				it->it.subject = jstr(j, "subject");
			} else {
				it->it.kind = VIEW_PAIR;
				snprintf(it->id, sizeof(it->id), "%lld",
				    (long long)jint(j, "pair_id"));
				it->it.id = it->id;
				it->it.subject = jstr(j, "point");
			}
			it->it.author = jstr(j, "author");
			it->it.time = jint(j, "time");
			it->it.badges = it->badges;
			it->tree = jstr(j, "tree");
			it->branch = jstr(j, "branches");
		}
		verdict = job_verdict(j, &progress);
		for (k = 0; k < it->it.nbadges; k++)
			if (name && it->badges[k].bench &&
			    strcmp(it->badges[k].bench, name) == 0)
				break;
		if (k == it->it.nbadges) {
			if (k == sizeof(it->badges) / sizeof(it->badges[0]))
				continue;
			it->it.nbadges++;
			it->badges[k].bench = name;
			it->badges[k].verdict = verdict;
			it->badges[k].progress = progress;
		} else if (rank(verdict) < rank(it->badges[k].verdict)) {
			it->badges[k].verdict = verdict;
			it->badges[k].progress = progress;
		}
	}
	/* Groups: one per tree and branch list, in order of first use;
	 * items of a group are contiguous because items are re-ordered. */
	{
		struct ov_item *sorted = xcalloc(n ? n : 1, sizeof(*sorted));
		size_t m = 0;

		for (i = 0; i < n; i++) {
			const char *t = items[i].tree, *b = items[i].branch;
			int seen = 0;

			for (k = 0; k < i; k++)
				if ((items[k].tree == t ||
				        (t && items[k].tree &&
				            strcmp(items[k].tree, t) == 0)) &&
				    (items[k].branch == b ||
				        (b && items[k].branch &&
				            strcmp(items[k].branch, b) == 0)))
					seen = 1;
			if (seen)
				continue;
			g[ng].tree = t;
			g[ng].branch = b;
			g[ng].nitems = 0;
			for (k = i; k < n; k++) {
				const char *t2 = items[k].tree;
				const char *b2 = items[k].branch;

				if ((t2 == t || (t && t2 && !strcmp(t, t2))) &&
				    (b2 == b || (b && b2 && !strcmp(b, b2)))) {
					sorted[m++] = items[k];
					g[ng].nitems++;
				}
			}
			ng++;
		}
		memcpy(items, sorted, m * sizeof(*items));
		free(sorted);
		/* The badges moved with their items. */
		for (i = 0; i < m; i++)
			items[i].it.badges = items[i].badges;
	}
	v->groups = g;
	v->ngroups = ng;
	*err = 0;
	return rows;
}

/*
 * The groups point into an array of struct ov_item, whose first member
 * is the view item; the renderer walks view items, so they are copied
 * into a plain array here.
 */
static struct view_overview_item *
flatten(struct view_overview_group *g, size_t ng, struct ov_item *items)
{
	size_t i, k, total = 0, at = 0;
	struct view_overview_item *flat;

	for (i = 0; i < ng; i++)
		total += g[i].nitems;
	flat = xcalloc(total ? total : 1, sizeof(*flat));
	for (i = 0; i < ng; i++) {
		size_t start = at;

		for (k = 0; k < g[i].nitems; k++)
			flat[at++] = items[start + k].it;
		g[i].items = &flat[start];
	}
	return flat;
}

void
web_overview(struct ctx *x)
{
	struct view_overview v;
	struct ov_item *items;
	struct view_overview_group *g;
	struct view_overview_item *flat;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	char *cached;
	size_t len;
	int r;

	if ((cached = cache_get(x->a->web, CACHE_PAGE, &len)) != NULL) {
		security_headers(x);
		httpd_reply_take(
		    x->r, 200, "text/html; charset=utf-8", cached, len);
		return;
	}
	if (overview_build(x, &v, &items, &g, &r) == NULL) {
		free(items);
		free(g);
		page_store_err(x, r);
		return;
	}
	flat = flatten(g, v.ngroups, items);
	view_overview_render(&b, &v);
	free(flat);
	free(items);
	free(g);
	if (!buf_failed(&b))
		cache_put(x->a->web, CACHE_PAGE, b.data, b.len);
	reply_page(x, 200, &b);
}

void
web_overview_json(struct ctx *x)
{
	struct view_overview v;
	struct ov_item *items;
	struct view_overview_group *g;
	json_t *o, *groups;
	size_t i, k, at = 0, len;
	char *cached;
	int r;

	if ((cached = cache_get(x->a->web, CACHE_JSON, &len)) != NULL) {
		httpd_reply_take(x->r, 200, "application/json", cached, len);
		return;
	}
	if (overview_build(x, &v, &items, &g, &r) == NULL) {
		free(items);
		free(g);
		json_store_err(x, r);
		return;
	}
	groups = json_array();
	for (i = 0; i < v.ngroups; i++) {
		json_t *arr = json_array();

		for (k = 0; k < g[i].nitems; k++, at++) {
			const struct view_overview_item *it = &items[at].it;
			json_t *bs = json_array();
			size_t m;

			for (m = 0; m < it->nbadges; m++)
				json_array_append_new(bs,
				    json_pack("{s:s?, s:s, s:s?}", "bench",
				        it->badges[m].bench, "verdict",
				        it->badges[m].verdict
				            ? it->badges[m].verdict
				            : "unknown",
				        "progress", it->badges[m].progress));
			json_array_append_new(arr,
			    json_pack("{s:s, s:s?, s:s?, s:s?, s:I, s:o}",
			        "kind",
			        it->kind == VIEW_COMMIT       ? "commit"
			            : it->kind == VIEW_SERIES ? "series"
			                                      : "pair",
			        "id", it->id, "subject", it->subject, "author",
			        it->author, "time", (json_int_t)it->time,
			        "benches", bs));
		}
		json_array_append_new(groups,
		    json_pack("{s:s?, s:s?, s:o}", "tree", g[i].tree, "branch",
		        g[i].branch, "items", arr));
	}
	o = json_pack("{s:i, s:i, s:I, s:I, s:I, s:o}", "hosts_online",
	    v.hosts_online, "hosts", v.hosts_total, "queued",
	    (json_int_t)v.queued, "running", (json_int_t)v.running,
	    "regressions_new", (json_int_t)v.regressions_new, "groups", groups);
	free(items);
	free(g);
	reply_json_cached(x, o, CACHE_JSON);
}

/* ---- commit, series, pair ------------------------------------------ */

/* "versus_previous": vN vs vN-1 (daemon/series_versus) into o. */
static int
series_versus_add(struct ctx *x, json_t *o, int64_t id)
{
	struct err e = { 0 };
	json_t *vs = NULL;
	int r = series_versus(&vs, x->s, x->conf, id, &e);

	if (r != 0) {
		log_warnx(
		    "series %lld: vN vs vN-1: %s", (long long)id, err_msg(&e));
		return r == ERR_NOTFOUND ? r : -1;
	}
	json_object_set_new(o, "versus_previous", vs);
	return 0;
}

/* The rows of a commit (sha), series (id) or pair (id). */
static int
target_rows(struct ctx *x, enum view_target kind, const char *id,
    struct cmp_set *c, json_t **out_info)
{
	json_t *o = NULL, *pair = NULL;
	int64_t n;
	int r;

	*out_info = NULL;
	switch (kind) {
	case VIEW_COMMIT:
		if ((r = store_web_commit(x->s, &o, id)) != 0)
			return r;
		keep(x, o);
		*out_info = o;
		return pairs_rows(x, c, json_object_get(o, "pairs"));
	case VIEW_SERIES:
		if ((n = parse_id(id, NULL)) == 0)
			return ERR_NOTFOUND;
		if ((r = store_web_series(x->s, &o, n)) != 0)
			return r;
		keep(x, o);
		*out_info = o;
		if ((r = series_versus_add(x, o, n)) != 0)
			return r;
		return pairs_rows(x, c, json_object_get(o, "pairs"));
	case VIEW_PAIR:
		if ((n = parse_id(id, NULL)) == 0)
			return ERR_NOTFOUND;
		if ((r = pair_rows(x, c, n, &pair)) != 0)
			return r;
		*out_info = pair;
		return 0;
	}
	return ERR_NOTFOUND;
}

/* The rows of "versus_previous" for the page; *out is the caller's. */
static void
versus_view(struct view_commit *v, json_t *vs, struct view_versus_row **out)
{
	json_t *rows = json_object_get(vs, "rows"), *prev;
	size_t n = json_array_size(rows), k;

	*out = NULL;
	prev = json_object_get(vs, "previous");
	if (!json_is_object(prev))
		return;
	v->prev_id = jint(prev, "id");
	v->prev_version = jint(prev, "version");
	*out = xcalloc(n ? n : 1, sizeof(**out));
	for (k = 0; k < n; k++) {
		json_t *r = json_array_get(rows, k);
		struct view_versus_row *w = &(*out)[k];

		w->host = jstr(r, "host");
		w->job = jstr(r, "job");
		w->point = jstr(r, "point");
		w->metric = jstr(r, "metric");
		w->unit = jstr(r, "unit");
		w->prev_median = jnum(r, "previous_median");
		w->median = jnum(r, "median");
		w->change_pct = jnum(r, "change_pct");
		w->ci_low = jnum(r, "ci_low");
		w->ci_high = jnum(r, "ci_high");
		w->verdict = jstr(r, "verdict");
	}
	v->versus = *out;
	v->nversus = n;
}

static int
valid_id(enum view_target kind, const char *id, const char **end)
{
	const char *p = id;

	if (kind == VIEW_COMMIT)
		while (isxdigit((unsigned char)*p))
			p++;
	else
		while (isdigit((unsigned char)*p))
			p++;
	*end = p;
	return p > id && p - id <= 64;
}

/* Pair page: the kernel each side ran and the same-build warning
 * (daemon/kfacts.h), kept alive with the page's other JSON. */
static void
pair_kernels(
    struct ctx *x, struct view_commit *v, json_t *pair, const json_t *rows)
{
	struct kfacts k[2];
	struct buf b = BUF_INIT(CAP_ERRMSG);
	int i;

	kfacts_sides(k, rows);
	for (i = 0; i < 2; i++) {
		buf_reset(&b);
		kfacts_line(&b, &k[i]);
		v->kernel[i] = json_string_value(keep(x, json_string(b.data)));
	}
	buf_reset(&b);
	if (kfacts_warning(&b, k, jstr(json_object_get(pair, "base"), "commit"),
	        jstr(json_object_get(pair, "candidate"), "commit")))
		v->kernel_warning =
		    json_string_value(keep(x, json_string(b.data)));
	buf_release(&b);
}

static void
target_page(struct ctx *x, enum view_target kind)
{
	struct cmp_set c = { 0 };
	struct view_commit v = { 0 };
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	json_t *info, *ci, *se;
	const char *end;
	char id[72];
	char title[512], note[CAP_ERRMSG + 64];
	struct view_patch *pv = NULL;
	struct view_versus_row *vv = NULL;
	struct store_alert *al = NULL;
	struct view_alert *va = NULL;
	size_t nal = 0;
	struct chargepath_sym syms[PAIR_SYMBOLS];
	json_t *pa, *prof = NULL, *blobs = NULL;
	size_t np = 0, k;
	int r;

	if (!valid_id(kind, x->rest, &end) || *end != '\0') {
		reply_message(x, 404, "Not found", "no such page");
		return;
	}
	snprintf(id, sizeof(id), "%s", x->rest);
	if ((r = target_rows(x, kind, id, &c, &info)) != 0) {
		cmp_set_free(&c);
		page_store_err(x, r);
		return;
	}
	v.kind = kind;
	v.id = id;
	switch (kind) {
	case VIEW_COMMIT:
		ci = json_object_get(info, "commit");
		se = json_object_get(info, "series");
		v.id = jstr(ci, "sha");
		v.title = jstr(ci, "subject");
		v.author = jstr(ci, "author");
		v.tree = jstr(ci, "tree");
		v.branch = jstr(ci, "branches");
		v.base = "the parent commit (or the job's baseline)";
		v.time = jint(ci, "time");
		if (json_is_object(se))
			v.note = jstr(se, "title");
		if (v.id != NULL) {
			struct store_alert_filter f = { 0 };

			f.sha = v.id;
			f.limit = 50;
			if (store_alert_list(x->s, &al, &nal, &f) != 0)
				nal = 0;
			va = xcalloc(nal + 1, sizeof(*va));
			for (k = 0; k < nal; k++) {
				va[k].id = al[k].id;
				va[k].kind = al[k].kind;
				va[k].state = al[k].state;
				va[k].target = al[k].target;
				va[k].subject = al[k].subject;
				va[k].error = al[k].last_error;
				va[k].attempts = al[k].attempts;
				va[k].sent = al[k].sent;
				va[k].followup = al[k].followup;
			}
			v.alerts = va;
			v.nalerts = nal;
		}
		break;
	case VIEW_SERIES:
		se = json_object_get(info, "series");
		v.title = jstr(se, "title");
		v.author = jstr(se, "author");
		v.tree =
		    jstr(se, "tree") ? jstr(se, "tree") : jstr(se, "inbox");
		v.branch = jstr(se, "branch") ? jstr(se, "branch") : "";
		v.base = jstr(se, "base_sha") ? jstr(se, "base_sha")
		                              : "the series' base commit";
		v.time = jint(se, "time");
		pa = json_object_get(info, "patches");
		np = json_array_size(pa);
		pv = xcalloc(np ? np : 1, sizeof(*pv));
		for (k = 0; k < np; k++) {
			json_t *pj = json_array_get(pa, k);

			pv[k].seq = jint(pj, "seq");
			pv[k].subject = jstr(pj, "subject");
			pv[k].author = jstr(pj, "author");
			pv[k].commit = jstr(pj, "sha");
			pv[k].verdict = worst_verdict(jstr(pj, "verdicts"));
		}
		v.patches = pv;
		v.npatches = np;
		v.branch_tag = jstr(se, "branch_tag");
		v.fallback = jstr(se, "fallback");
		v.version = jint(se, "version");
		versus_view(&v, json_object_get(info, "versus_previous"), &vv);
		if (jstr(se, "error") != NULL) {
			snprintf(note, sizeof(note), "series %s: %s",
			    jstr(se, "state") ? jstr(se, "state") : "?",
			    jstr(se, "error"));
			v.note = note;
		} else if (jstr(se, "state") != NULL &&
		    strcmp(jstr(se, "state"), "applied") != 0) {
			snprintf(
			    note, sizeof(note), "series %s", jstr(se, "state"));
			v.note = note;
		}
		break;
	case VIEW_PAIR:
		snprintf(title, sizeof(title), "%s %s",
		    jstr(info, "name") ? jstr(info, "name") : "pair",
		    jstr(info, "point") ? jstr(info, "point") : "");
		v.title = title;
		v.base = "the base job of this pair, on the same host";
		v.time = jint(info, "created");
		v.suspect = jstr(info, "suspect");
		if (store_pair_run_meta(x->s, &prof, strtoll(id, NULL, 10)) ==
		    0) {
			keep(x, prof);
			v.nsymbols =
			    chargepath_diff(syms, PAIR_SYMBOLS, v.profiled_runs,
			        json_object_get(prof, "rows"), &blobs);
			keep(x, blobs);
			v.symbols = syms;
			pair_kernels(
			    x, &v, info, json_object_get(prof, "rows"));
		} else
			store_errclear(x->s);
		break;
	}
	v.rows = c.rows;
	v.nrows = c.n;
	v.jobs = c.jobs;
	v.njobs = c.njobs;
	/* The series tip is what was measured: its patch row shows the
	 * worst verdict of the comparisons; the patches below it were not
	 * measured on their own. */
	for (k = 0; kind == VIEW_SERIES && k < np; k++) {
		const char *tip =
		    jstr(json_object_get(info, "series"), "commit_sha");
		size_t i;

		if (pv[k].commit == NULL || tip == NULL ||
		    strcmp(pv[k].commit, tip) != 0) {
			continue;
		}
		for (i = 0; i < c.n; i++)
			if (strcmp(c.rows[i].verdict ? c.rows[i].verdict : "",
			        "info") != 0 &&
			    (pv[k].verdict == NULL ||
			        rank(c.rows[i].verdict) < rank(pv[k].verdict)))
				pv[k].verdict = c.rows[i].verdict;
	}
	if (v.note == NULL && any_unknown(&c))
		v.note = no_analysis;
	view_commit_render(&b, &v);
	free(va);
	store_alerts_free(al, nal);
	free(pv);
	free(vv);
	cmp_set_free(&c);
	reply_page(x, 200, &b);
}

void
web_commit(struct ctx *x)
{
	target_page(x, VIEW_COMMIT);
}

void
web_series(struct ctx *x)
{
	target_page(x, VIEW_SERIES);
}

void
web_pair(struct ctx *x)
{
	target_page(x, VIEW_PAIR);
}

static void
target_json(struct ctx *x, enum view_target kind, const char *id)
{
	struct cmp_set c = { 0 };
	json_t *info, *o;
	const char *end;
	int r;

	if (id == NULL || !valid_id(kind, id, &end) || *end != '\0') {
		reply_json_err(x, 404, "expected a commit sha or a numeric id");
		return;
	}
	if ((r = target_rows(x, kind, id, &c, &info)) != 0) {
		cmp_set_free(&c);
		json_store_err(x, r);
		return;
	}
	o = kind == VIEW_PAIR ? json_object() : json_deep_copy(info);
	json_object_set_new(o, "comparisons", rows_json(&c));
	cmp_set_free(&c);
	reply_json(x, 200, o);
}

void
web_commit_json(struct ctx *x)
{
	target_json(x, VIEW_COMMIT, x->rest);
}

void
web_series_json(struct ctx *x)
{
	target_json(x, VIEW_SERIES, x->rest);
}

void
web_comparisons_json(struct ctx *x)
{
	if (q(x, "commit"))
		target_json(x, VIEW_COMMIT, q(x, "commit"));
	else if (q(x, "series"))
		target_json(x, VIEW_SERIES, q(x, "series"));
	else if (q(x, "pair"))
		target_json(x, VIEW_PAIR, q(x, "pair"));
	else
		reply_json_err(x, 400,
		    "parameter 'commit', 'series' or 'pair' is required");
}

/* ---- history -------------------------------------------------------- */

/* "YYYY-MM-DD" or a commit sha (prefix) to a time; 0 ok, -1 bad. */
static int
parse_when(struct ctx *x, const char *s, int end_of_day, int64_t *out)
{
	struct tm tm;
	int y, m, d;
	char extra;

	*out = 0;
	if (s == NULL)
		return 0;
	if (sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &extra) == 3 && y >= 1970 &&
	    m >= 1 && m <= 12 && d >= 1 && d <= 31) {
		memset(&tm, 0, sizeof(tm));
		tm.tm_year = y - 1900;
		tm.tm_mon = m - 1;
		tm.tm_mday = d;
		*out = (int64_t)timegm(&tm) + (end_of_day ? 86399 : 0);
		return 0;
	}
	return store_web_commit_time(x->s, out, s) == 0 ? 0 : -1;
}

struct hist {
	struct view_history v;
	struct view_hist_point *pts;
	int64_t *job_ids;
	size_t n;
	struct view_change_point *cps;
	json_t **cp_rows; /* the store's row of each change point */
	char (*alerts)[48];
	char (*labels)[48];
	int64_t next_cursor;
	char next[24];
};

static void
hist_free(struct hist *h)
{
	free(h->pts);
	free(h->job_ids);
	free(h->cps);
	free(h->cp_rows);
	free(h->alerts);
	free(h->labels);
}

/*
 * The change points the verdicts found in the series shown: each is drawn
 * at the point of its candidate job (the first point after the change),
 * when that job is on this page.
 */
static int
hist_changepoints(struct ctx *x, struct hist *h)
{
	json_t *o = NULL, *rows, *row;
	size_t i, k;
	int r;

	r = store_history_changepoints(x->s, &o, h->v.tree, h->v.branch,
	    h->v.host, h->v.job, h->v.point, h->v.metric);
	if (r != 0)
		return r;
	keep(x, o);
	rows = json_object_get(o, "rows");
	h->cps = xcalloc(json_array_size(rows) + 1, sizeof(*h->cps));
	h->cp_rows = xcalloc(json_array_size(rows) + 1, sizeof(*h->cp_rows));
	json_array_foreach(rows, i, row)
	{
		int64_t jid = jint(row, "job_id");

		for (k = 0; k < h->n; k++)
			if (h->job_ids[k] == jid)
				break;
		if (k == h->n)
			continue;
		h->cps[h->v.ncps].index = k;
		h->cps[h->v.ncps].shift_pct = jnum(row, "change_pct");
		h->cp_rows[h->v.ncps++] = row;
	}
	h->v.cps = h->cps;
	return 0;
}

/* Fills h from the query; 0, a store error, or ERR_INVALID (msg set). */
static int
hist_build(struct ctx *x, struct hist *h, const char **msg)
{
	json_t *o = NULL, *rows, *row;
	int64_t from, to, cursor;
	double *vals = NULL;
	size_t i, nv = 0, cap = 0;
	int r;

	memset(h, 0, sizeof(*h));
	h->v.tree = q(x, "tree");
	h->v.branch = q(x, "branch");
	h->v.host = q(x, "host");
	h->v.job = q(x, "job");
	h->v.point = q(x, "point");
	h->v.metric = q(x, "metric");
	h->v.from = q(x, "from");
	h->v.to = q(x, "to");
	if (h->v.job == NULL || h->v.metric == NULL) {
		*msg = "parameters 'job' and 'metric' are required (follow a "
		       "metric link from a commit or pair page)";
		return ERR_INVALID;
	}
	if (parse_when(x, h->v.from, 0, &from) == -1 ||
	    parse_when(x, h->v.to, 1, &to) == -1) {
		*msg = "'from' and 'to' take a date YYYY-MM-DD or a known "
		       "commit";
		return ERR_INVALID;
	}
	if (q_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1) {
		*msg = "'cursor' must be a job id";
		return ERR_INVALID;
	}
	r = store_web_history(x->s, &o, h->v.tree, h->v.branch, h->v.host,
	    h->v.job, h->v.point, h->v.metric, from, to, HISTORY_JOBS, cursor);
	if (r != 0)
		return r;
	keep(x, o);
	rows = json_object_get(o, "rows");
	h->pts = xcalloc(json_array_size(rows) + 1, sizeof(*h->pts));
	h->job_ids = xcalloc(json_array_size(rows) + 1, sizeof(*h->job_ids));
	h->alerts = xcalloc(json_array_size(rows) + 1, sizeof(*h->alerts));
	h->labels = xcalloc(json_array_size(rows) + 1, sizeof(*h->labels));
	h->next_cursor = INT64_MAX;
	json_array_foreach(rows, i, row)
	{
		int64_t jid = jint(row, "job_id");
		struct view_hist_point *p;

		if (h->n == 0 || h->job_ids[h->n - 1] != jid) {
			if (h->n) {
				p = &h->pts[h->n - 1];
				p->n = (int)nv;
				p->value = median(vals, nv);
				p->low = vals[0];
				p->high = vals[nv - 1];
			}
			nv = 0;
			p = &h->pts[h->n];
			h->job_ids[h->n++] = jid;
			if (jid < h->next_cursor)
				h->next_cursor = jid;
			p->commit = jstr(row, "sha");
			p->subject = jstr(row, "subject");
			p->time = jint(row, "time");
			p->pair_id = jint(row, "pair_id");
			if (h->v.unit == NULL)
				h->v.unit = jstr(row, "unit");
			if (h->v.better == NULL)
				h->v.better = jstr(row, "better");
			if (p->subject == NULL) {
				/* A pair without a commit. */
				snprintf(h->labels[h->n - 1],
				    sizeof(h->labels[0]), "pair %lld, %s",
				    (long long)p->pair_id,
				    jstr(row, "role") ? jstr(row, "role") : "");
				p->subject = h->labels[h->n - 1];
			}
			if (jstr(row, "regression")) {
				snprintf(h->alerts[h->n - 1],
				    sizeof(h->alerts[0]), "regression (%s)",
				    jstr(row, "regression"));
				p->alert = h->alerts[h->n - 1];
			}
		}
		if (nv == cap) {
			cap = cap ? 2 * cap : 16;
			vals = xreallocarray(vals, cap, sizeof(*vals));
		}
		vals[nv++] = jnum(row, "value");
	}
	if (h->n) {
		struct view_hist_point *p = &h->pts[h->n - 1];

		p->n = (int)nv;
		p->value = median(vals, nv);
		p->low = vals[0];
		p->high = vals[nv - 1];
	}
	free(vals);
	h->v.points = h->pts;
	h->v.npoints = h->n;
	if ((r = hist_changepoints(x, h)) != 0)
		return r;
	h->v.pager.later = cursor != 0;
	if (h->n >= HISTORY_JOBS && h->next_cursor > 1) {
		snprintf(h->next, sizeof(h->next), "%lld",
		    (long long)h->next_cursor);
		h->v.pager.next_cursor = h->next;
	}
	return 0;
}

void
web_history(struct ctx *x)
{
	struct hist h;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	const char *msg = NULL;
	int r;

	if ((r = hist_build(x, &h, &msg)) != 0) {
		hist_free(&h);
		if (msg)
			reply_message(x, 400, "Bad request", msg);
		else
			page_store_err(x, r);
		return;
	}
	view_history_render(&b, &h.v);
	hist_free(&h);
	reply_page(x, 200, &b);
}

void
web_history_json(struct ctx *x)
{
	struct hist h;
	const char *msg = NULL;
	json_t *pts, *o, *cps;
	size_t i;
	int r;

	if ((r = hist_build(x, &h, &msg)) != 0) {
		hist_free(&h);
		if (msg)
			reply_json_err(x, 400, msg);
		else
			json_store_err(x, r);
		return;
	}
	pts = json_array();
	for (i = 0; i < h.n; i++) {
		const struct view_hist_point *p = &h.pts[i];

		json_array_append_new(pts,
		    json_pack("{s:I, s:I, s:s?, s:s?, s:I, s:o, s:o, s:o, s:i, "
		              "s:s?}",
		        "job_id", (json_int_t)h.job_ids[i], "pair_id",
		        (json_int_t)p->pair_id, "commit", p->commit, "subject",
		        p->subject, "time", (json_int_t)p->time, "median",
		        jnumber(p->value), "min", jnumber(p->low), "max",
		        jnumber(p->high), "runs", p->n, "alert", p->alert));
	}
	cps = json_array();
	for (i = 0; i < h.v.ncps; i++) {
		json_t *row = h.cp_rows[i];

		json_array_append_new(cps,
		    json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:s?}",
		        "id", (json_int_t)jint(row, "id"), "index",
		        (json_int_t)h.cps[i].index, "job_id",
		        (json_int_t)jint(row, "job_id"), "pair_id",
		        (json_int_t)jint(row, "pair_id"), "before",
		        jnumber(jnum(row, "before")), "after",
		        jnumber(jnum(row, "after")), "change_pct",
		        jnumber(jnum(row, "change_pct")), "p",
		        jnumber(jnum(row, "p")), "direction",
		        jstr(row, "direction")));
	}
	o = json_pack("{s:s?, s:s?, s:o, s:o}", "unit", h.v.unit, "better",
	    h.v.better, "points", pts, "change_points", cps);
	if (h.v.pager.next_cursor)
		json_object_set_new(
		    o, "next_cursor", json_string(h.v.pager.next_cursor));
	hist_free(&h);
	reply_json(x, 200, o);
}

/* ---- regressions and triage ---------------------------------------- */

static const char *
state_filter(struct ctx *x)
{
	static const char *const ok[] = { "new", "acknowledged", "invalid",
		"fixed" };
	const char *s = q(x, "state");
	size_t i;

	for (i = 0; s && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(s, ok[i]) == 0)
			return ok[i];
	return NULL;
}

void
web_regressions(struct ctx *x)
{
	struct view_regressions v = { 0 };
	struct view_regression *rows;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	json_t *o = NULL, *arr, *row;
	int64_t cursor, last = 0, saved;
	char next[24], flash[64];
	size_t i;
	int r;

	if (q_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1)
		cursor = 0;
	v.tree = q(x, "tree");
	v.host = q(x, "host");
	v.bench = q(x, "bench");
	v.state = state_filter(x);
	r = store_web_regressions(
	    x->s, &o, v.tree, v.host, v.bench, v.state, PAGE_ROWS, cursor);
	if (r != 0) {
		page_store_err(x, r);
		return;
	}
	keep(x, o);
	arr = json_object_get(o, "rows");
	rows = xcalloc(json_array_size(arr) + 1, sizeof(*rows));
	json_array_foreach(arr, i, row)
	{
		struct view_regression *g = &rows[i];

		g->id = last = jint(row, "id");
		g->tree = jstr(row, "tree");
		g->branch = jstr(row, "branches");
		g->commit = jstr(row, "sha");
		g->subject = jstr(row, "subject");
		g->pair_id = jint(row, "pair_id");
		g->host = jstr(row, "host");
		g->bench = jstr(row, "bench");
		g->point = jstr(row, "point");
		g->metric = jstr(row, "metric");
		g->change_pct = jnum(row, "change_pct");
		g->verdict = jstr(row, "verdict");
		g->state = jstr(row, "state");
		g->note = jstr(row, "note");
		g->created = jint(row, "created");
		g->updated = jint(row, "updated");
		g->bisect_id = jint(row, "bisect_id");
		g->bisect_state = jstr(row, "bisect_state");
		g->culprit = jstr(row, "culprit");
		g->suspect = jstr(row, "suspect");
	}
	v.rows = rows;
	v.nrows = json_array_size(arr);
	v.pager.later = cursor != 0;
	if (v.nrows == PAGE_ROWS && last > 1) {
		snprintf(next, sizeof(next), "%lld", (long long)last);
		v.pager.next_cursor = next;
	}
	v.session.admin = x->admin;
	v.session.csrf = x->admin ? x->csrf : NULL;
	if (q_int(x, &saved, "saved", 0, 0, INT64_MAX) == 0 && saved) {
		snprintf(flash, sizeof(flash), "Regression %lld saved.",
		    (long long)saved);
		v.flash = flash;
	}
	view_regressions_render(&b, &v);
	free(rows);
	reply_page(x, 200, &b);
}

/* ---- a bisection (daemon/bisect.c) --------------------------------- */

void
web_bisect(struct ctx *x)
{
	struct view_bisect v;
	struct view_bisect_step *vs;
	struct store_bisect *bi = NULL;
	struct store_bisect_step *st = NULL;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	size_t n = 0, i;
	char *end;
	long long id;
	int r;

	id = strtoll(x->rest, &end, 10);
	if (*x->rest < '0' || *x->rest > '9' || *end != '\0' || id <= 0) {
		reply_message(x, 404, "Not found", "expected /bisect/ID");
		return;
	}
	if ((r = store_bisect_get(x->s, &bi, id)) != 0 ||
	    (r = store_bisect_steps(x->s, &st, &n, id)) != 0) {
		store_bisect_free(bi);
		page_store_err(x, r);
		return;
	}
	memset(&v, 0, sizeof(v));
	v.id = bi->id;
	v.regression_id = bi->regression_id;
	v.pair_id = bi->pair_id;
	v.cp = bi->origin && strcmp(bi->origin, "change-point") == 0;
	v.change_point_id = bi->change_point_id;
	v.origin_sha = bi->origin_sha;
	v.branch = bi->branch;
	v.origin_pct = bi->origin_pct;
	v.state = bi->state;
	v.job = bi->job;
	v.host = bi->host;
	v.point = bi->point;
	v.metric = bi->metric;
	v.tree = bi->tree;
	v.good = bi->good_sha;
	v.bad = bi->bad_sha;
	v.lo = bi->lo_sha;
	v.hi = bi->hi_sha;
	v.culprit = bi->culprit_sha;
	v.culprit_subject = bi->culprit_subject;
	v.reason = bi->reason;
	v.verify_parent = bi->verify_parent;
	v.verify_revert = bi->verify_revert;
	v.revert = bi->revert_sha;
	vs = xcalloc(n + 1, sizeof(*vs));
	for (i = 0; i < n; i++) {
		vs[i].kind = st[i].kind;
		vs[i].sha = st[i].sha;
		vs[i].subject = st[i].subject;
		vs[i].cls = st[i].cls;
		vs[i].vs_good = st[i].vs_good;
		vs[i].vs_bad = st[i].vs_bad;
		vs[i].vs_good_pct = st[i].vs_good_pct;
		vs[i].vs_bad_pct = st[i].vs_bad_pct;
		vs[i].note = st[i].note;
		vs[i].good_pair = st[i].good_pair;
		vs[i].bad_pair = st[i].bad_pair;
	}
	v.steps = vs;
	v.nsteps = n;
	view_bisect_render(&b, &v);
	free(vs);
	store_bisect_steps_free(st, n);
	store_bisect_free(bi);
	reply_page(x, 200, &b);
}

void
web_regressions_json(struct ctx *x)
{
	json_t *o = NULL, *out;
	int64_t limit, cursor;
	size_t n;
	int r;

	if (q_int(x, &limit, "limit", PAGE_ROWS, 1, PAGE_MAX) == -1 ||
	    q_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1) {
		reply_json_err(x, 400,
		    "parameters 'limit' (1..500) and 'cursor' take integers");
		return;
	}
	if (q(x, "state") && state_filter(x) == NULL) {
		reply_json_err(x, 400,
		    "parameter 'state': expected new, acknowledged, invalid or "
		    "fixed");
		return;
	}
	r = store_web_regressions(x->s, &o, q(x, "tree"), q(x, "host"),
	    q(x, "bench"), state_filter(x), limit, cursor);
	if (r != 0) {
		json_store_err(x, r);
		return;
	}
	out = json_pack("{s:O}", "regressions", json_object_get(o, "rows"));
	n = json_array_size(json_object_get(o, "rows"));
	if ((int64_t)n == limit && n > 0) {
		char c[24];
		int64_t last = jint(
		    json_array_get(json_object_get(o, "rows"), n - 1), "id");

		snprintf(c, sizeof(c), "%lld", (long long)last);
		if (last > 1)
			json_object_set_new(out, "next_cursor", json_string(c));
	}
	json_decref(o);
	reply_json(x, 200, out);
}

/* "/regressions/ID/triage" -> ID, else 0. */
static int64_t
triage_id(const char *rest)
{
	const char *end;
	int64_t id = parse_id(rest, &end);

	return id && strcmp(end, "/triage") == 0 ? id : 0;
}

void
web_triage(struct ctx *x)
{
	struct buf state = BUF_INIT(64), note = BUF_INIT(FORM_FIELD_MAX);
	int64_t id = triage_id(x->rest);
	char loc[96];
	int r;

	if (id == 0) {
		reply_message(x, 404, "Not found", "no such page");
		goto out;
	}
	if (form(x, "state", &state) != 0 || buf_failed(&state) ||
	    buf_failed(&note)) {
		reply_message(
		    x, 400, "Bad request", "form field 'state' needed");
		goto out;
	}
	if (form(x, "note", &note) != 0)
		buf_reset(&note);
	if (buf_failed(&note) || note.len > 1000) {
		reply_message(
		    x, 400, "Bad request", "note: at most 1000 bytes");
		goto out;
	}
	r = store_web_triage(
	    x->s, id, state.data, note.len ? note.data : NULL, x->now);
	if (r != 0) {
		page_store_err(x, r);
		goto out;
	}
	snprintf(loc, sizeof(loc), "/regressions?saved=%lld#r%lld",
	    (long long)id, (long long)id);
	redirect(x, loc);
out:
	buf_release(&state);
	buf_release(&note);
}

void
web_triage_json(struct ctx *x)
{
	static const char *const keys[] = { "state", "note", NULL };
	const char *state = NULL, *note = NULL, *body;
	struct err e = { 0 };
	json_t *o;
	int64_t id = triage_id(x->rest);
	size_t len;
	int r;

	if (id == 0) {
		reply_json_err(
		    x, 404, "expected /api/v1/regressions/ID/triage");
		return;
	}
	body = httpd_body(x->r, &len);
	if ((o = pwjson_parse(body, len, &e)) == NULL) {
		reply_json_err(x, 400, err_msg(&e));
		return;
	}
	if (!json_is_object(o) || pwjson_only_keys(o, keys, "body", &e) == -1 ||
	    pwjson_str(&state, o, "state", &e) == -1 ||
	    pwjson_str_opt(&note, o, "note", &e) == -1) {
		reply_json_err(x, 400,
		    err_msg(&e)[0] ? err_msg(&e) : "expected a JSON object");
		json_decref(o);
		return;
	}
	if (note && strlen(note) > 1000) {
		reply_json_err(x, 400, "field 'note': at most 1000 bytes");
		json_decref(o);
		return;
	}
	if ((r = store_web_triage(x->s, id, state, note, x->now)) != 0)
		json_store_err(x, r);
	else
		reply_json(x, 200,
		    json_pack(
		        "{s:I, s:s}", "id", (json_int_t)id, "state", state));
	json_decref(o);
}

/* ---- hosts and jobs ------------------------------------------------- */

/* The host's canary and noise floor (daemon/canary.h). */
static void
host_canary(struct ctx *x, struct view_host *v, json_t *h)
{
	json_t *c = v->name
	    ? canary_host_json(x->s, x->conf, v->name, jint(h, "id"))
	    : NULL;
	json_t *arr, *z;
	struct view_noise *n;
	size_t i;

	if (c == NULL)
		return;
	keep(x, c);
	v->canary_job = jstr(c, "job");
	v->canary_every_s = jint(c, "every_s");
	v->canary_runs = jint(c, "runs_per_side");
	arr = json_object_get(c, "noise");
	n = xcalloc(json_array_size(arr) + 1, sizeof(*n)); /* p_hosts frees */
	json_array_foreach(arr, i, z)
	{
		n[i].metric = jstr(z, "metric");
		n[i].runs = jint(z, "runs");
		n[i].cv_pct = jnum(z, "cv_pct");
		n[i].mde_pct = jnum(z, "mde_pct");
		n[i].mde_max_runs_pct = jnum(z, "mde_max_runs_pct");
	}
	v->noise = n;
	v->nnoise = json_array_size(arr);
}

void
web_hosts(struct ctx *x)
{
	struct view_hosts v = { 0 };
	struct view_host *rows;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	json_t *o = NULL, *arr, *h;
	int64_t cursor;
	size_t i;
	int r;

	if (q_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1)
		cursor = 0;
	r = store_hosts_list(x->s, &o, PAGE_ROWS, cursor, x->now, x->online_s);
	if (r != 0) {
		page_store_err(x, r);
		return;
	}
	keep(x, o);
	arr = json_object_get(o, "hosts");
	rows = xcalloc(json_array_size(arr) + 1, sizeof(*rows));
	json_array_foreach(arr, i, h)
	{
		json_t *inv = json_object_get(h, "inventory");
		json_t *labels = json_object_get(h, "labels");
		struct view_host *v_ = &rows[i];

		v_->id = jint(h, "id");
		v_->name = jstr(h, "name");
		if (json_array_size(labels)) {
			/* Labels as one comma-separated string. */
			struct buf l = BUF_INIT(CAP_LINE);
			size_t k;
			json_t *lv, *s;

			json_array_foreach(labels, k, lv)
			{
				if (!json_is_string(lv))
					continue;
				if (l.len)
					buf_puts(&l, ", ");
				buf_puts(&l, json_string_value(lv));
			}
			s = keep(x, json_stringn_nocheck(l.data, l.len));
			v_->labels = json_string_value(s);
			buf_release(&l);
		}
		v_->cpu_model = jstr(inv, "cpu_model");
		v_->cpu_vendor = jstr(inv, "cpu_vendor");
		v_->sockets = (int)jint(inv, "sockets");
		v_->cores = (int)jint(inv, "cores");
		v_->threads = (int)jint(inv, "threads");
		v_->numa_nodes = (int)jint(inv, "numa_nodes");
		v_->memory_bytes =
		    json_is_number(json_object_get(inv, "memory_bytes"))
		    ? jint(inv, "memory_bytes")
		    : -1;
		v_->kernel = jstr(inv, "kernel");
		v_->cgroup = jstr(inv, "cgroup");
		v_->state = jstr(h, "state");
		v_->current_job = jint(h, "current_job");
		v_->last_seen = jint(h, "last_seen");
		v_->quarantined = jstr(h, "quarantined");
		host_canary(x, v_, h);
	}
	v.now = x->now;
	v.rows = rows;
	v.nrows = json_array_size(arr);
	v.pager.later = cursor != 0;
	v.pager.next_cursor = jstr(o, "next_cursor");
	view_hosts_render(&b, &v);
	for (i = 0; i < v.nrows; i++)
		free((void *)rows[i].noise);
	free(rows);
	reply_page(x, 200, &b);
}

static const char *
job_state_filter(struct ctx *x)
{
	const char *s = q(x, "state");
	int i;

	for (i = 0; s && i < 5; i++)
		if (strcmp(s, store_job_states[i]) == 0)
			return store_job_states[i];
	return NULL;
}

void
web_jobs(struct ctx *x)
{
	struct view_jobs v = { 0 };
	struct view_job *rows;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct store_stats st;
	json_t *o = NULL, *arr, *j;
	int64_t cursor;
	size_t i;
	int r;

	if (q_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1)
		cursor = 0;
	v.state = job_state_filter(x);
	r = store_jobs_list(x->s, &o, v.state, PAGE_ROWS, cursor);
	if (r != 0) {
		page_store_err(x, r);
		return;
	}
	keep(x, o);
	arr = json_object_get(o, "jobs");
	rows = xcalloc(json_array_size(arr) + 1, sizeof(*rows));
	json_array_foreach(arr, i, j)
	{
		struct view_job *g = &rows[i];

		g->id = jint(j, "id");
		g->pair_id = jint(j, "pair_id");
		g->role = jstr(j, "role");
		g->name = jstr(j, "name");
		g->point = jstr(j, "point");
		g->state = jstr(j, "state");
		g->host = jstr(j, "host");
		g->attempts = (int)jint(j, "attempts");
		g->runs = (int)jint(j, "runs");
		g->runs_done = (int)jint(j, "runs_done");
		g->progress = jstr(j, "progress");
		g->error = jstr(j, "error");
		g->created = jint(j, "created");
		g->updated = jint(j, "updated");
		g->commit = jstr(j, "commit");
		g->tree = jstr(j, "tree");
		g->subject = jstr(j, "subject");
	}
	v.rows = rows;
	v.nrows = json_array_size(arr);
	v.pager.later = cursor != 0;
	v.pager.next_cursor = jstr(o, "next_cursor");
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
	reply_page(x, 200, &b);
}

/* GET /jobs/ID/log: the log tail as text. */
void
web_job_log(struct ctx *x)
{
	const char *end;
	int64_t id = parse_id(x->rest, &end);
	json_t *o = NULL;
	const char *log;
	int r;

	if (id == 0 || strcmp(end, "/log") != 0) {
		reply_message(x, 404, "Not found", "no such page");
		return;
	}
	if ((r = store_job_get(x->s, &o, id)) != 0) {
		page_store_err(x, r);
		return;
	}
	keep(x, o);
	log = jstr(o, "log");
	httpd_reply_header(x->r, "X-Content-Type-Options", "nosniff");
	httpd_reply(x->r, 200, "text/plain; charset=utf-8", log ? log : "",
	    log ? strlen(log) : 0);
}

/* ---- login ---------------------------------------------------------- */

static void
set_cookie(struct ctx *x, const char *name, const char *value, int max_age)
{
	char c[256];

	snprintf(c, sizeof(c),
	    "%s=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%d", name, value,
	    max_age);
	httpd_reply_header(x->r, "Set-Cookie", c);
}

static void
login_form(struct ctx *x, int status, const char *error, const char *next)
{
	struct view_login v = { 0 };
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	char pre[SESSION_ID_LEN + 1];

	if (session_random_hex(pre, SESSION_ID_LEN / 2) == -1) {
		reply_message(x, 500, "Error", "no randomness");
		return;
	}
	set_cookie(x, COOKIE_PRE, pre, 3600);
	v.csrf = pre;
	v.error = error;
	v.next = next;
	view_login_render(&b, &v);
	reply_page(x, status, &b);
}

/* Where to go after login: a local path only. */
static const char *
safe_next(const char *next)
{
	if (next == NULL || next[0] != '/' || next[1] == '/' ||
	    next[1] == '\\' || strlen(next) > 200 || strpbrk(next, "\r\n"))
		return "/regressions";
	return next;
}

void
web_login(struct ctx *x)
{
	login_form(x, 200, NULL, safe_next(q(x, "next")));
}

void
web_login_post(struct ctx *x)
{
	struct buf tok = BUF_INIT(DCONF_TOKEN_MAX + 1),
	           csrf = BUF_INIT(FORM_FIELD_MAX),
	           next = BUF_INIT(FORM_FIELD_MAX);
	char pre[SESSION_ID_LEN + 8], id[SESSION_ID_LEN + 1],
	    cs[SESSION_ID_LEN + 1];
	const char *dest;

	cookie(x, COOKIE_PRE, pre, sizeof(pre));
	if (form(x, "next", &next) != 0 || buf_failed(&next))
		buf_reset(&next);
	dest = safe_next(next.len ? next.data : NULL);
	if (!pre[0] || form(x, "csrf", &csrf) != 0 || buf_failed(&csrf) ||
	    !session_equal(csrf.data, pre)) {
		login_form(x, 403, "The form expired; try again.", dest);
		goto out;
	}
	if (form(x, "token", &tok) != 0 || buf_failed(&tok) ||
	    !is_admin_token(x, tok.data)) {
		log_info("web: failed admin login from %s", httpd_peer(x->r));
		login_form(x, 403, "Wrong token.", dest);
		goto out;
	}
	if (session_create(x->a->web->sessions, id, cs, x->now) == -1) {
		reply_message(x, 500, "Error", "no randomness");
		goto out;
	}
	set_cookie(x, COOKIE_SESSION, id, SESSION_TTL);
	set_cookie(x, COOKIE_PRE, "", 0);
	redirect(x, dest);
out:
	explicit_bzero(tok.data, tok.len);
	buf_release(&tok);
	buf_release(&csrf);
	buf_release(&next);
}

void
web_logout(struct ctx *x)
{
	session_drop(x->a->web->sessions, x->sid);
	set_cookie(x, COOKIE_SESSION, "", 0);
	redirect(x, "/regressions");
}

/* No icon: an empty answer instead of a 404 in every browser log. */
void
web_favicon(struct ctx *x)
{
	httpd_reply_header(x->r, "Cache-Control", "max-age=86400");
	httpd_reply(x->r, 204, "image/x-icon", "", 0);
}

/* ---- what web/api.c calls around a dashboard route ------------------- */

void
web_begin(struct ctx *x)
{
	x->keep = json_array();
	load_session(x);
}

void
web_end(struct ctx *x)
{
	json_decref(x->keep);
	x->keep = NULL;
}

int
web_session_ok(struct ctx *x)
{
	if (csrf_ok(x))
		return 0;
	reply_message(x, 403, "Forbidden",
	    "log in as admin, and post the form from the page (CSRF "
	    "token missing or wrong)");
	return -1;
}
