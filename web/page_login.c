/*
 * The admin login: GET and POST /login (the admin token, a CSRF cookie),
 * POST /logout; and the favicon.
 */
#include <stdio.h>
#include <string.h>

#include "common/caps.h"
#include "common/clock.h"
#include "common/log.h"
#include "daemon/dconf.h"
#include "web/api_int.h"
#include "web/httpd.h"
#include "web/reply.h"
#include "web/session.h"
#include "web/throttle.h"
#include "web/views.h"
#include "web/web.h"
#include "web/web_int.h"

/* ---- login ---------------------------------------------------------- */

static void
set_cookie(struct ctx *x, const char *name, const char *value, int max_age)
{
	char c[256];

	snprintf(c, sizeof(c),
	    "%s=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%d%s", name,
	    value, max_age, httpd_tls(x->r) ? "; Secure" : "");
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
	const unsigned char *p;

	if (next == NULL || next[0] != '/' || next[1] == '/' ||
	    strlen(next) > 200)
		return "/regressions";
	/* Browsers drop tabs and newlines from a URL and read a backslash
	 * as a slash: "/\t/evil.example" is "//evil.example", off-site. A
	 * path of ours has no white space, control byte or backslash. */
	for (p = (const unsigned char *)next; *p != '\0'; p++)
		if (*p <= ' ' || *p == 0x7f || *p == '\\')
			return "/regressions";
	return next;
}

void
web_login(struct ctx *x)
{
	login_form(x, 200, NULL, safe_next(web_q(x, "next")));
}

void
web_login_post(struct ctx *x)
{
	struct buf tok = BUF_INIT(DCONF_TOKEN_MAX + 1),
	           csrf = BUF_INIT(FORM_FIELD_MAX),
	           next = BUF_INIT(FORM_FIELD_MAX);
	char pre[SESSION_ID_LEN + 8], id[SESSION_ID_LEN + 1],
	    cs[SESSION_ID_LEN + 1];
	const char *dest, *peer = httpd_peer(x->r);
	struct throttle *th = x->a->web->logins;
	char msg[128], after[24];
	long wait;

	web_cookie(x, COOKIE_PRE, pre, sizeof(pre));
	if (web_form(x, "next", &next) != 0 || buf_failed(&next))
		buf_reset(&next);
	dest = safe_next(next.len ? next.data : NULL);
	if (!pre[0] || web_form(x, "csrf", &csrf) != 0 || buf_failed(&csrf) ||
	    !session_equal(csrf.data, pre)) {
		login_form(x, 403, "The form expired; try again.", dest);
		goto out;
	}
	/* After failures from this address, no token is looked at until
	 * its wait is over: guessing costs time (web/throttle.h). */
	if ((wait = throttle_wait(th, peer, clock_mono_ms())) > 0) {
		snprintf(after, sizeof(after), "%ld", wait);
		httpd_reply_header(x->r, "Retry-After", after);
		snprintf(msg, sizeof(msg),
		    "Too many failed logins from your address; try again in "
		    "%ld s.",
		    wait);
		login_form(x, 429, msg, dest);
		goto out;
	}
	if (web_form(x, "token", &tok) != 0 || buf_failed(&tok) ||
	    !web_is_admin_token(x, tok.data)) {
		throttle_fail(th, peer, clock_mono_ms());
		log_info("web: failed admin login from %s", peer);
		login_form(x, 403, "Wrong token.", dest);
		goto out;
	}
	throttle_clear(th, peer);
	if (session_create(x->a->web->sessions, id, cs, x->now) == -1) {
		reply_message(x, 500, "Error", "no randomness");
		goto out;
	}
	set_cookie(x, COOKIE_SESSION, id, SESSION_TTL);
	set_cookie(x, COOKIE_PRE, "", 0);
	web_redirect(x, dest);
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
	web_redirect(x, "/regressions");
}

/* No icon: an empty answer instead of a 404 in every browser log. */
void
web_favicon(struct ctx *x)
{
	httpd_reply_header(x->r, "Cache-Control", "max-age=86400");
	httpd_reply(x->r, 204, "image/x-icon", "", 0);
}
