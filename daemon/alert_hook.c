/*
 * The webhook of a report: its JSON body and one signed POST
 * (daemon/alert.h, docs/ALERTS.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/http.h"
#include "common/json.h"
#include "common/redact.h"
#include "common/xalloc.h"
#include "daemon/alert.h"

static json_t *
jnum(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *
jstrn(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *
metric_obj(const struct alert_report *r, const struct store_alert_cmp *c)
{
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
	                 "s:I, s:I, s:s, s:s}",
	    "point", c->point ? c->point : "", "metric", c->metric, "unit",
	    jstrn(c->unit), "better", jstrn(c->better), "base_median",
	    jnum(c->base_median), "cand_median", jnum(c->cand_median),
	    "change_pct", jnum(c->change_pct), "ci_low_pct", jnum(c->ci_low),
	    "ci_high_pct", jnum(c->ci_high), "note", jstrn(c->note), "n_base",
	    (json_int_t)c->n_base, "n_cand", (json_int_t)c->n_cand, "verdict",
	    c->verdict, "benchmark", r->x->job);
}

char *
alert_hook_body(const struct alert_report *r, const char *delivery, int slack,
    const char *subject)
{
	const struct store_alert_info *x = r->x;
	json_t *o, *metrics = json_array(), *cps = json_array(), *series;
	char *url = NULL, *s;
	size_t i;

	for (i = 0; i < r->nchg; i++)
		json_array_append_new(
		    metrics, metric_obj(r, &x->cmp[r->chg[i]]));
	for (i = 0; i < x->ncp; i++) {
		const struct store_alert_cp *c = &x->cp[i];

		json_array_append_new(cps,
		    json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}",
		        "point", c->point ? c->point : "", "metric", c->metric,
		        "direction", jstrn(c->direction), "before",
		        jnum(c->before), "after", jnum(c->after), "change_pct",
		        jnum(c->change_pct), "from_commit", jstrn(c->lo_sha),
		        "to_commit", jstrn(c->hi_sha)));
	}
	if (x->series_id > 0)
		series = json_pack("{s:I, s:o, s:I, s:I, s:o, s:o, s:o}", "id",
		    (json_int_t)x->series_id, "title", jstrn(x->series_title),
		    "version", (json_int_t)x->version, "total",
		    (json_int_t)x->total, "message_id", jstrn(x->series_msgid),
		    "inbox", jstrn(x->inbox), "author",
		    jstrn(x->series_author));
	else
		series = json_null();
	if (r->public_url != NULL)
		url = xasprintf(
		    "%s/commit/%s", r->public_url, x->sha ? x->sha : "");
	o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:o, s:o, s:o}, s:o, s:o, "
	              "s:s, s:o, s:o, s:o, s:o, s:o}",
	    "event", r->followup ? "report.followup" : "report", "verdict",
	    alert_report_event(r), "delivery", delivery, "tree", jstrn(x->tree),
	    "branch", jstrn(x->branch), "commit", "sha", jstrn(x->sha),
	    "subject", jstrn(x->subject), "author", jstrn(x->author),
	    "base_commit", jstrn(x->base_sha), "series", series, "benchmark",
	    x->job, "host", jstrn(x->host), "metrics", metrics, "change_points",
	    cps, "url", jstrn(url), "bisect",
	    x->bisect_state == NULL
	        ? json_null()
	        : json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o}", "id",
	              (json_int_t)x->bisect_id, "state", x->bisect_state,
	              "culprit", jstrn(x->bisect), "verify_parent",
	              jstrn(x->bisect_parent), "verify_revert",
	              jstrn(x->bisect_revert), "reason",
	              jstrn(x->bisect_reason), "origin",
	              jstrn(x->bisect_origin)));
	if (o != NULL)
		json_object_set_new(o, "suspect", jstrn(x->suspect));
	/* docs/KERNEL.md: the kernel each side of the headline pair ran. */
	if (o != NULL)
		json_object_set_new(o, "kernel",
		    json_pack("{s:o, s:o, s:o}", "base",
		        kfacts_json(&r->kernel[0]), "candidate",
		        kfacts_json(&r->kernel[1]), "warning",
		        jstrn(r->kernel_warning)));
	if (o != NULL && r->charge_runs[0] + r->charge_runs[1] > 0) {
		/* docs/MEMCG.md: the headline pair's charge-path symbols. */
		json_t *syms = json_array();
		size_t k;

		for (k = 0; k < r->ncharge; k++)
			json_array_append_new(syms,
			    json_pack("{s:s, s:f, s:f}", "symbol",
			        r->charge[k].symbol ? r->charge[k].symbol : "?",
			        "base_pct", r->charge[k].base_pct, "cand_pct",
			        r->charge[k].cand_pct));
		json_object_set_new(o, "charge_path",
		    json_pack("{s:i, s:i, s:o}", "base_runs", r->charge_runs[0],
		        "cand_runs", r->charge_runs[1], "symbols", syms));
	} else if (o != NULL)
		json_object_set_new(o, "charge_path", json_null());
	if (o != NULL && r->followup)
		json_object_set_new(o, "previous", jstrn(r->prev));
	if (o != NULL && slack) {
		struct buf t = BUF_INIT(64 * 1024);

		buf_puts(&t, subject ? subject : alert_report_event(r));
		if (url != NULL)
			buf_printf(&t, "\n%s", url);
		json_object_set_new(o, "text", json_string(t.data));
		buf_release(&t);
	}
	s = o ? pwjson_dump(o) : xstrdup("{}");
	json_decref(o);
	free(url);
	return s;
}

int
alert_hook_sign(char sig[65], const char *secret, long long ts,
    const char *body, size_t len)
{
	struct buf m = BUF_INIT(len + 32);
	int rc;

	buf_printf(&m, "%lld.", ts);
	buf_add(&m, body, len);
	rc = buf_failed(&m) ? -1
	                    : crypto_hmac_sha256_hex(
	                          sig, secret, strlen(secret), m.data, m.len);
	buf_release(&m);
	return rc;
}

int
alert_hook_post(const char *url, const char *secret, const char *event,
    const char *delivery, const char *body, long timeout_ms,
    long *retry_after_s, struct err *e)
{
	struct http_reply rep = HTTP_REPLY_INIT;
	struct http *h = http_new();
	char sig[65], *hdr[6];
	size_t i;
	size_t len = strlen(body);
	long long ts = (long long)time(NULL);
	int rc;

	*retry_after_s = -1;
	/* Each attempt is signed at its own time: a retry is fresh, a
	 * captured POST replayed later is old (docs/ALERTS.md). */
	if (alert_hook_sign(sig, secret, ts, body, len) != 0) {
		http_free(h);
		return err_set(e, "cannot compute the HMAC");
	}
	hdr[0] = xasprintf("X-Perfwatch-Signature: sha256=%s", sig);
	hdr[1] = xasprintf("X-Perfwatch-Event: %s", event);
	hdr[2] = xasprintf("X-Perfwatch-Delivery: %s", delivery);
	hdr[3] = xstrdup("User-Agent: perfwatch");
	/* The same key under the name receivers that dedupe by the IETF
	 * draft's Idempotency-Key look for: a retry after a crash between
	 * the receiver's 2xx and the store's "sent" carries it too. */
	hdr[4] = xasprintf("Idempotency-Key: %s", delivery);
	hdr[5] = xasprintf("X-Perfwatch-Timestamp: %lld", ts);
	http_set_headers(h, (const char *const *)hdr, 6);
	http_set_timeouts(h, timeout_ms < 5000 ? timeout_ms : 5000, timeout_ms);
	rc = http_post_json(&rep, h, url, body, len);
	if (rc != 0) {
		err_set(e, "%s", http_errmsg(h));
		rc = rc == ERR_AGAIN ? ERR_AGAIN : -1;
	} else if (rep.status / 100 == 2) {
		rc = 0;
	} else {
		char *host = redact_url_host(url);

		err_set(e, "%s: HTTP %ld", host, rep.status);
		free(host);
		*retry_after_s = rep.status == 429 || rep.status >= 500
		    ? rep.retry_after_s
		    : -1;
		rc = http_retryable(0, rep.status) ? ERR_AGAIN : -1;
	}
	http_reply_release(&rep);
	http_free(h);
	for (i = 0; i < 6; i++)
		free(hdr[i]);
	return rc;
}
