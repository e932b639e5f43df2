/*
 * The dashboard's shared part (web/web.h, web/web_int.h): the state kept
 * across requests (sessions), the small helpers of
 * the page files (web/page_*.c), their replies, the admin session, and
 * what web/api.c calls around a dashboard route.
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"
#include "web/session.h"
#include "web/throttle.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* ---- state across requests ----------------------------------------- */

struct web *
web_new(void)
{
	struct web *w = xcalloc(1, sizeof(*w));

	w->sessions = session_table_new();
	w->logins = throttle_new();
	return w;
}

void
web_free(struct web *w)
{
	if (w == NULL)
		return;
	session_table_free(w->sessions);
	throttle_free(w->logins);
	free(w);
}

/* ---- small helpers -------------------------------------------------- */

/* A query parameter, NULL when absent or empty. */
const char *
web_q(struct ctx *x, const char *key)
{
	const char *v = httpd_query(x->r, key);

	return v && *v ? v : NULL;
}

json_t *
web_keep(struct ctx *x, json_t *o)
{
	json_array_append_new(x->keep, o);
	return o;
}

const char *
web_jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

int64_t
web_jint(json_t *o, const char *key)
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

double
web_jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

json_t *
web_jnumber(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A positive decimal id from text; 0 when it is not one. */
int64_t
web_parse_id(const char *s, const char **end)
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
int
web_q_int(struct ctx *x, int64_t *out, const char *key, int64_t dflt,
    int64_t lo, int64_t hi)
{
	const char *v = web_q(x, key), *end = NULL;

	*out = dflt;
	if (v == NULL)
		return 0;
	if (strcmp(v, "0") == 0)
		*out = 0;
	else if ((*out = web_parse_id(v, &end)) == 0 || *end != '\0')
		return -1;
	return *out < lo || *out > hi ? -1 : 0;
}

int64_t
web_q_cursor(struct ctx *x)
{
	int64_t cursor;

	if (web_q_int(x, &cursor, "cursor", 0, 0, INT64_MAX) == -1)
		cursor = 0;
	return cursor;
}

void
web_pager(
    struct view_pager *p, int64_t cursor, int64_t next_cursor, char next[32])
{
	p->later = cursor != 0;
	if (next_cursor != 0) {
		snprintf(next, 32, "%lld", (long long)next_cursor);
		p->next_cursor = next;
	}
}

/* The value of cookie name in the Cookie header into out, or "". */
void
web_cookie(struct ctx *x, const char *name, char *out, size_t len)
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
int
web_form(struct ctx *x, const char *key, struct buf *out)
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

void
web_security_headers(struct ctx *x)
{
	/* No script may run even if an escape were missed. */
	httpd_reply_header(x->r, "Content-Security-Policy",
	    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
	    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
	httpd_reply_header(x->r, "X-Content-Type-Options", "nosniff");
	httpd_reply_header(x->r, "Referrer-Policy", "same-origin");
	if (x->admin)
		httpd_reply_header(x->r, "Cache-Control", "no-store");
	/* Over TLS, browsers keep to it for a year. */
	if (httpd_tls(x->r))
		httpd_reply_header(
		    x->r, "Strict-Transport-Security", "max-age=31536000");
}

void
web_redirect(struct ctx *x, const char *location)
{
	httpd_reply_header(x->r, "Location", location);
	httpd_reply(x->r, 303, "text/plain; charset=utf-8", "see other\n", 10);
}

/* ---- sessions ------------------------------------------------------- */

/* 1 when token is the admin token. */
int
web_is_admin_token(struct ctx *x, const char *token)
{
	const struct dconf_runner *runner = NULL;

	return dconf_auth(x->conf, token, &runner) == 1;
}

static void
load_session(struct ctx *x)
{
	web_cookie(x, COOKIE_SESSION, x->sid, sizeof(x->sid));
	x->admin = x->sid[0] &&
	    session_lookup(x->a->web->sessions, x->sid, x->csrf, x->now) == 0;
}

/* A form post by the logged-in admin with the right CSRF token. */
static int
csrf_ok(struct ctx *x)
{
	struct buf f = BUF_INIT(FORM_FIELD_MAX);
	int ok;

	ok = x->admin && web_form(x, "csrf", &f) == 0 && !buf_failed(&f) &&
	    session_equal(f.data, x->csrf);
	buf_release(&f);
	return ok;
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

/* On the head of a form post: an admin session, whose form (and CSRF
 * token) web_session_ok checks once the body is in. */
int
web_session_head_ok(struct ctx *x)
{
	if (x->admin)
		return 0;
	reply_message(x, 403, "Forbidden",
	    "log in as admin, and post the form from the page (CSRF "
	    "token missing or wrong)");
	return -1;
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
