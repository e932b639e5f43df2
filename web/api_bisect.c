/*
 * The public reads of bisections (docs/API.md, docs/BISECT.md): one
 * with its steps, and the list.
 */

#include "common/json.h"
#include "store/bisect.h"
#include "web/api.h"
#include "web/api_int.h"
#include "web/reply.h"
#include "web/rows_dash.h"
#include "web/web_int.h"

int
api_bisect_json(struct store *s, int64_t id, json_t **out)
{
	struct store_bisect *b = NULL;
	struct store_bisect_step *st = NULL;
	size_t n = 0;
	json_t *o;
	int r;

	*out = NULL;
	if ((r = store_bisect_get(s, &b, id)) != 0)
		return r;
	if ((r = store_bisect_step_list(s, &st, &n, id)) != 0) {
		store_bisect_release(b);
		return r;
	}
	if ((o = rows_bisect_json(b)) != NULL)
		json_object_set_new(o, "steps", rows_bisect_steps_json(st, n));
	store_bisect_steps_release(st, n);
	store_bisect_release(b);
	if (o == NULL)
		return -1;
	*out = json_pack("{s:o}", "bisection", o);
	return 0;
}

int
api_bisects_json(struct store *s, int64_t limit, int64_t cursor, json_t **out)
{
	struct store_bisects l;
	int r;

	*out = NULL;
	if ((r = store_bisect_list(s, &l, limit, cursor)) != 0)
		return r;
	*out = rows_bisects_json(&l);
	store_bisects_release(&l);
	return 0;
}

void
api_read_bisect(struct ctx *x)
{
	json_t *out = NULL;
	int r;

	if ((r = web_bisect_json(x, x->id[0], &out)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}

void
api_read_bisects(struct ctx *x)
{
	json_t *out = NULL;
	int64_t limit, cursor;
	int r;

	if (api_query_page(x, &limit, &cursor) == -1)
		return;
	if ((r = api_bisects_json(x->s, limit, cursor, &out)) != 0) {
		reply_store_err(x, r);
		return;
	}
	reply_json(x, 200, out);
}
