/*
 * The alerts page, GET /alerts?state=&kind=: the deliveries GET
 * /api/v1/alerts lists, from the same typed read (store_alert_list);
 * and one alert's page, GET /alerts/{id}: what GET /api/v1/alerts/{id}
 * answers, from store_alert_get.  Targets and errors are shown as the
 * JSON shows them (web/rows.c), without a hook's secret path or a
 * URL's credentials.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "store/alerts.h"
#include "web/api_int.h"
#include "web/reply.h"
#include "web/rows.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* q's value when it is one of n values, else NULL (no filter). */
static const char *
one_of(struct ctx *x, const char *q, const char *const *values, size_t n)
{
	const char *s = web_q(x, q);
	size_t i;

	for (i = 0; s && i < n; i++)
		if (strcmp(s, values[i]) == 0)
			return values[i];
	return NULL;
}

void
web_alert_row(struct view_alert *v, const struct store_alert *a, char **shown)
{
	v->id = a->id;
	v->kind = a->kind;
	v->state = a->state;
	v->target = shown[0] = rows_alert_target(a);
	v->subject = a->subject;
	v->error = shown[1] = rows_alert_error(a);
	v->attempts = a->attempts;
	v->sent = a->sent;
	v->followup = a->followup;
	v->sha = a->sha;
}

void
web_alerts(struct ctx *x)
{
	static const char *const states[] = { "pending", "sent", "failed" };
	static const char *const kinds[] = { "email", "webhook" };
	struct store_alert_filter f = { 0 };
	struct store_alert_more more = { 0 };
	struct view_alerts v = { 0 };
	struct view_alert *rows;
	struct store_alert *a = NULL;
	char **shown;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	int64_t cursor = web_q_cursor(x);
	char next[32];
	size_t n = 0, i;
	int r;

	v.state = f.state = one_of(x, "state", states, 3);
	v.kind = f.kind = one_of(x, "kind", kinds, 2);
	f.limit = PAGE_ROWS;
	f.cursor = cursor;
	if ((r = store_alert_list(x->s, &a, &n, &f, &more)) != 0) {
		reply_page_store_err(x, r);
		return;
	}
	rows = xcalloc(n + 1, sizeof(*rows));
	shown = xcalloc(2 * n + 1, sizeof(*shown));
	for (i = 0; i < n; i++)
		web_alert_row(&rows[i], &a[i], &shown[2 * i]);
	v.rows = rows;
	v.nrows = n;
	web_pager(&v.pager, cursor, more.next_cursor, next);
	view_alerts_render(&b, &v);
	for (i = 0; i < 2 * n; i++)
		free(shown[i]);
	free(shown);
	free(rows);
	store_alerts_release(a, n);
	reply_page(x, 200, &b);
}

/* GET /alerts/ID: the delivery, its times and its payload. */
void
web_alert(struct ctx *x)
{
	struct view_alert_page v = { 0 };
	struct store_alert *a = NULL;
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	const char *end;
	int64_t id = web_parse_id(x->rest, &end);
	char *shown[2];
	int r;

	if (id == 0 || *end != '\0') {
		reply_message(x, 404, "Not found", "no such page");
		return;
	}
	if ((r = store_alert_get(x->s, &a, id)) != 0) {
		reply_page_store_err(x, r);
		return;
	}
	web_alert_row(&v.a, a, shown);
	v.delivery = a->key;
	v.benchmark = a->job;
	v.host = a->host;
	v.payload = a->payload;
	v.created = a->created;
	if (strcmp(a->state, "pending") == 0)
		v.next_try = a->next_try;
	view_alert_render(&b, &v);
	free(shown[0]);
	free(shown[1]);
	store_alerts_release(a, 1);
	reply_page(x, 200, &b);
}
