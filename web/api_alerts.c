/*
 * The public reads of report deliveries (docs/API.md, docs/ALERTS.md):
 * the alerts list with its filters, and one alert.
 */
#include <string.h>

#include "common/json.h"
#include "store/alerts.h"
#include "web/api.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"
#include "web/rows.h"

/* GET /api/v1/alerts?state=&kind=&commit=&limit=&cursor= (docs/API.md). */
void
api_read_alerts(struct ctx *x)
{
	struct store_alert_filter f = { 0 };
	struct store_alert_more more;
	struct store_alert *a = NULL;
	json_t *out;
	size_t n;
	int r;

	f.state = httpd_query(x->r, "state");
	f.kind = httpd_query(x->r, "kind");
	f.sha = httpd_query(x->r, "commit");
	if (f.state && strcmp(f.state, "pending") && strcmp(f.state, "sent") &&
	    strcmp(f.state, "failed")) {
		reply_err(x, 400,
		    "parameter 'state': expected pending, sent or failed");
		return;
	}
	if (f.kind && strcmp(f.kind, "email") && strcmp(f.kind, "webhook")) {
		reply_err(
		    x, 400, "parameter 'kind': expected email or webhook");
		return;
	}
	if (api_query_page(x, &f.limit, &f.cursor) == -1)
		return;
	if ((r = store_alert_list(x->s, &a, &n, &f, &more)) != 0) {
		reply_store_err(x, r);
		return;
	}
	out = rows_alerts_json(a, n, &more);
	store_alerts_release(a, n);
	reply_json(x, 200, out);
}

void
api_read_alert(struct ctx *x)
{
	struct store_alert *a = NULL;
	json_t *out;
	int r;

	if ((r = store_alert_get(x->s, &a, x->id[0])) != 0) {
		reply_store_err(x, r);
		return;
	}
	out = rows_alert_json(a, 1);
	store_alerts_release(a, 1);
	reply_json(x, 200, out);
}
