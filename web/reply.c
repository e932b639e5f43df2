/*
 * Replies and checks shared by the API and the dashboard (web/reply.h).
 */
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "web/httpd.h"
#include "web/reply.h"

int
reply_status_of(int err)
{
	switch (err) {
	case ERR_NOTFOUND:
		return 404;
	case ERR_INVALID:
		return 400;
	case ERR_CONFLICT:
	case ERR_EXISTS:
		return 409;
	default:
		return 500;
	}
}

void
reply_json_take(
    struct httpd_req *r, int status, json_t *o, reply_keep_fn *keep, void *arg)
{
	struct buf b = BUF_INIT(CAP_HTTP_REPLY);
	size_t len;

	if (pwjson_reply_buf(&b, o) == -1 || buf_putc(&b, '\n') == -1) {
		buf_release(&b);
		httpd_reply(r, 500, "application/json",
		    "{\"error\":\"reply too large\"}\n", 28);
	} else {
		if (keep != NULL)
			keep(arg, b.data, b.len);
		len = b.len;
		httpd_reply_take(
		    r, status, "application/json", buf_take(&b), len);
	}
	json_decref(o);
}

void
reply_json_error(struct httpd_req *r, int status, const char *msg)
{
	reply_json_take(r, status,
	    json_pack("{s:o}", "error", pwjson_string_lossy(msg)), NULL, NULL);
}

const char *
reply_bearer(struct httpd_req *r)
{
	const char *h = httpd_header(r, "Authorization");

	if (h == NULL || strncmp(h, "Bearer ", 7) != 0 || h[7] == '\0') {
		reply_json_error(r, 401,
		    "missing bearer token (Authorization: Bearer TOKEN)");
		return NULL;
	}
	return h + 7;
}
