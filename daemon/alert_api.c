/*
 * Alerts at the HTTP edge: the JSON of GET /api/v1/alerts[/{id}] made
 * from the store's structs (docs/API.md).
 */
#include <string.h>

#include "common/json.h"
#include "daemon/alert_api.h"

static json_t *
s_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *
alert_obj(const struct store_alert *a, int payload)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:o, s:I, s:o, s:o, "
	                      "s:I, s:b, s:o, s:o, s:o}",
	    "id", (json_int_t)a->id, "kind", a->kind, "state", a->state,
	    "delivery", a->key, "target", s_or_null(a->target), "subject",
	    s_or_null(a->subject), "attempts", (json_int_t)a->attempts,
	    "last_error", s_or_null(a->last_error), "sent",
	    a->sent ? json_integer(a->sent) : json_null(), "created",
	    (json_int_t)a->created, "followup", a->followup, "commit",
	    s_or_null(a->sha), "benchmark", s_or_null(a->job), "host",
	    s_or_null(a->host));

	if (o != NULL)
		json_object_set_new(o, "next_try",
		    strcmp(a->state, "pending") == 0 ? json_integer(a->next_try)
		                                     : json_null());
	if (o != NULL && payload)
		json_object_set_new(o, "payload", s_or_null(a->payload));
	return o;
}

int
alert_api_list(
    json_t **out, struct store *s, const struct store_alert_filter *f)
{
	struct store_alert *a = NULL;
	json_t *arr;
	size_t n, i;
	int r;

	*out = NULL;
	if ((r = store_alert_list(s, &a, &n, f)) != 0)
		return r;
	arr = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr, alert_obj(&a[i], 0));
	*out = json_pack("{s:o, s:o}", "alerts", arr, "next_cursor",
	    n > 0 && (int64_t)n == (f->limit > 0 ? f->limit : 50)
	        ? json_integer(a[n - 1].id)
	        : json_null());
	store_alerts_free(a, n);
	return 0;
}

int
alert_api_get(json_t **out, struct store *s, int64_t id)
{
	struct store_alert *a = NULL;
	int r;

	*out = NULL;
	if ((r = store_alert_get(s, &a, id)) != 0)
		return r;
	*out = alert_obj(a, 1);
	store_alerts_free(a, 1);
	return 0;
}
