/*
 * Replies and checks shared by the API and the dashboard (web/reply.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/json.h"
#include "common/log.h"
#include "store/store.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"
#include "web/views.h"
#include "web/web_int.h"

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

static void
json_take(struct httpd_req *r, int status, json_t *o)
{
	struct buf b = BUF_INIT(CAP_HTTP_REPLY);
	size_t len;

	if (pwjson_reply_buf(&b, o) == -1 || buf_putc(&b, '\n') == -1) {
		buf_release(&b);
		httpd_reply(r, 500, "application/json",
		    "{\"error\":\"reply too large\"}\n", 28);
	} else {
		len = b.len;
		httpd_reply_take(
		    r, status, "application/json", buf_take(&b), len);
	}
	json_decref(o);
}

static void
json_error(struct httpd_req *r, int status, const char *msg)
{
	json_take(
	    r, status, json_pack("{s:o}", "error", pwjson_string_lossy(msg)));
}

void
reply_json(struct ctx *x, int status, json_t *o)
{
	json_take(x->r, status, o);
}

void
reply_err(struct ctx *x, int status, const char *fmt, ...)
{
	char msg[CAP_ERRMSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* The database server away: a retry later may well succeed. */
	if (status == 500 && x->s != NULL && store_unavailable(x->s))
		status = 503;
	if (status >= 500)
		log_warnx("%s %s: %d %s", httpd_method(x->r), httpd_path(x->r),
		    status, msg);
	json_error(x->r, status, msg);
}

void
reply_store_err(struct ctx *x, int r)
{
	const char *m = store_errmsg(x->s);

	reply_err(x, reply_status_of(r), "%s", m[0] ? m : "store error");
}

void
reply_page(struct ctx *x, int status, struct buf *b)
{
	size_t len;

	if (buf_failed(b)) {
		buf_release(b);
		httpd_reply(x->r, 500, "text/plain; charset=utf-8",
		    "page too large\n", 15);
		return;
	}
	web_security_headers(x);
	len = b->len;
	httpd_reply_take(
	    x->r, status, "text/html; charset=utf-8", buf_take(b), len);
}

void
reply_message(struct ctx *x, int status, const char *title, const char *text)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_message m = { status, title, text };

	view_message_render(&b, &m);
	reply_page(x, status, &b);
}

void
reply_page_store_err(struct ctx *x, int r)
{
	int status = reply_status_of(r);

	if (status == 500 && x->s != NULL && store_unavailable(x->s))
		status = 503;
	if (status == 500)
		log_warnx("web: %s: %s", httpd_path(x->r), store_errmsg(x->s));
	reply_message(x, status, status == 404 ? "Not found" : "Error",
	    store_errmsg(x->s));
}

const char *
reply_bearer(struct httpd_req *r)
{
	const char *h = httpd_header(r, "Authorization");

	if (h == NULL || strncmp(h, "Bearer ", 7) != 0 || h[7] == '\0') {
		json_error(r, 401,
		    "missing bearer token (Authorization: Bearer TOKEN)");
		return NULL;
	}
	return h + 7;
}
