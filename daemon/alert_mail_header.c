/*
 * The headers of a report's e-mail (daemon/alert.h, docs/ALERTS.md):
 * RFC 2047 encoded words and folding, mailboxes with no CR/LF from
 * untrusted text, the recipients, and the subject.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "daemon/alert.h"
#include "daemon/alert_mail_int.h"

/* ---- headers ---- */

int
alert_mail_i_is_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

/*
 * Appends text as RFC 2047 encoded words (=?UTF-8?B?...?=), never
 * splitting a UTF-8 sequence, each word at most 75 characters; words are
 * separated by folding white space.  *col tracks the line length.  Text
 * from git and mail is untrusted: what is not valid UTF-8 goes out as
 * U+FFFD (a run of continuation bytes once left no character to cut at,
 * and the loop never moved).
 */
static void
encode_words(struct buf *b, const char *s, size_t *col)
{
	struct buf t = BUF_INIT(4 * strlen(s) + 1);
	size_t i, n, room;
	long cp;

	utf8_repair(&t, s, strlen(s), t.max);
	for (i = 0; i < t.len; i += n) {
		/* 45 bytes give 60 base64 characters: 72 with the frame;
		 * the first word fits in what is left of the line. */
		n = t.len - i > 45 ? 45 : t.len - i;
		if (i > 0 || *col + 12 + 8 > 78) {
			if (i > 0 || *col > 1) {
				buf_puts(b, "\r\n ");
				*col = 1;
			}
		}
		room = *col + 12 < 78 ? (78 - *col - 12) / 4 * 3 : 3;
		if (room < 3)
			room = 3;
		if (n > room)
			n = room;
		/* The text is valid, so a cut is at most 3 bytes back; it
		 * leaves nothing only where a 4-byte character meets a
		 * 3-byte room, and that character goes whole. */
		n = utf8_cut(t.data + i, t.len - i, n);
		if (n == 0)
			n = utf8_decode(
			    (const unsigned char *)t.data + i, t.len - i, &cp);
		buf_puts(b, "=?UTF-8?B?");
		crypto_b64_encode(b, t.data + i, n);
		buf_puts(b, "?=");
		*col += 12 + (n + 2) / 3 * 4;
	}
	buf_release(&t);
}

/* Plain text, folded at spaces before 78 columns. */
static void
fold_text(struct buf *b, const char *s, size_t *col)
{
	while (*s) {
		const char *sp = strchr(s + 1, ' ');
		size_t w = sp ? (size_t)(sp - s) : strlen(s);

		if (*col + w > 78 && *col > 1 && *s == ' ') {
			buf_puts(b, "\r\n");
			*col = 0;
		}
		buf_add(b, s, w);
		*col += w;
		s += w;
	}
}

static void
header_text(struct buf *b, const char *v, size_t *col)
{
	if (alert_mail_i_is_ascii(v))
		fold_text(b, v, col);
	else
		encode_words(b, v, col);
}

/* One mailbox "Name <a@b>": the name encoded when needed, quoted when
 * it holds specials. */
static void
header_mailbox(struct buf *b, const char *m, size_t *col)
{
	char addr[256];
	const char *lt = strrchr(m, '<');

	if (alert_mail_addr(addr, sizeof(addr), m) != 0)
		return;
	if (lt != NULL && lt > m) {
		char *name = xstrndup(m, (size_t)(lt - m));
		size_t n = strlen(name);

		while (n > 0 && name[n - 1] == ' ')
			name[--n] = '\0';
		if (name[0] == '"' && n > 1 && name[n - 1] == '"') {
			memmove(name, name + 1, n - 2);
			name[n - 2] = '\0';
		}
		if (name[0] != '\0') {
			if (!alert_mail_i_is_ascii(name))
				encode_words(b, name, col);
			else if (strpbrk(name, "()<>[]:;@\\,.\"") != NULL) {
				char *q = name;

				buf_putc(b, '"');
				for (; *q; q++) {
					if (*q == '"' || *q == '\\')
						buf_putc(b, '\\');
					buf_putc(b, *q);
				}
				buf_putc(b, '"');
				*col += strlen(name) + 2;
			} else {
				buf_puts(b, name);
				*col += strlen(name);
			}
			buf_putc(b, ' ');
			(*col)++;
		}
		free(name);
	}
	if (*col + strlen(addr) + 2 > 78 && *col > 1 && b->len > 0 &&
	    b->data[b->len - 1] == ' ') {
		buf_puts(b, "\r\n ");
		*col = 1;
	}
	buf_printf(b, "<%s>", addr);
	*col += strlen(addr) + 2;
}

/* An address header from mailboxes kept apart (names may hold commas). */
void
alert_mail_i_header_mailboxes(
    struct buf *b, const char *name, char *const *v, size_t n)
{
	size_t col = strlen(name) + 2, i;

	buf_printf(b, "%s: ", name);
	for (i = 0; i < n; i++) {
		if (i) {
			buf_puts(b, ",\r\n ");
			col = 1;
		}
		header_mailbox(b, v[i], &col);
	}
	buf_puts(b, "\r\n");
}

void
alert_mail_header(struct buf *b, const char *name, const char *value, int addr)
{
	char *v = alert_mail_i_clean(value, CAP_SUBJECT * 4);
	size_t col = strlen(name) + 2;

	buf_printf(b, "%s: ", name);
	if (!addr)
		header_text(b, v, &col);
	else {
		/* A list of mailboxes, split at commas outside quotes. */
		char *p = v, *start = v;
		int q = 0, first = 1;

		for (;; p++) {
			if (*p == '"')
				q = !q;
			if (*p != '\0' && (*p != ',' || q))
				continue;
			{
				char save = *p;

				*p = '\0';
				if (strchr(start, '@') != NULL) {
					if (!first) {
						buf_puts(b, ",\r\n ");
						col = 1;
					}
					header_mailbox(b, start, &col);
					first = 0;
				}
				*p = save;
			}
			if (*p == '\0')
				break;
			start = p + 1;
		}
	}
	buf_puts(b, "\r\n");
	free(v);
}

/* ---- recipients ---- */

void
alert_rcpt_release(struct alert_rcpt *r)
{
	size_t i;

	for (i = 0; i < r->nto; i++)
		free(r->to[i]);
	for (i = 0; i < r->ncc; i++)
		free(r->cc[i]);
	for (i = 0; i < r->nenv; i++)
		free(r->env[i]);
	free(r->to);
	free(r->cc);
	free(r->env);
	free(r->test_note);
	memset(r, 0, sizeof(*r));
}

static void
add_env(struct alert_rcpt *r, const char *addr)
{
	size_t i;

	for (i = 0; i < r->nenv; i++)
		if (strcasecmp(r->env[i], addr) == 0)
			return;
	r->env = xreallocarray(r->env, r->nenv + 1, sizeof(*r->env));
	r->env[r->nenv++] = xstrdup(addr);
}

/* Adds a mailbox to To (cc 0) or Cc; an unusable address is left out. */
static void
add_rcpt(struct alert_rcpt *r, const char *m, int cc)
{
	char addr[256];
	char ***v = cc ? &r->cc : &r->to;
	size_t *n = cc ? &r->ncc : &r->nto;

	if (m == NULL || alert_mail_addr(addr, sizeof(addr), m) != 0)
		return;
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = alert_mail_i_clean(m, 512);
	add_env(r, addr);
}

/*
 * 1 when the author may be mailed: a tree's commit, or a series whose
 * inbox an alerts.email.lists[] entry names (its mail came through that
 * list, which the report goes to as well).  A series' From: is whatever
 * its sender wrote: of an upload, or of an inbox no list entry vouches
 * for, it would make perfwatch mail anyone.
 */
static int
author_listed(const struct daemon_config *dc, const struct store_alert_info *x)
{
	size_t i;

	if (x->series_author == NULL)
		return 1;
	for (i = 0; x->inbox != NULL && i < dc->alerts.nlists; i++)
		if (dc->alerts.lists[i].inbox != NULL &&
		    strcmp(dc->alerts.lists[i].inbox, x->inbox) == 0)
			return 1;
	return 0;
}

void
alert_rcpt_make(struct alert_rcpt *out, const struct daemon_config *dc,
    const struct store_alert_info *x)
{
	struct alert_rcpt all;
	const char *author = x->series_author ? x->series_author : x->author;
	struct buf note = BUF_INIT(8192);
	size_t i, j;

	memset(out, 0, sizeof(*out));
	memset(&all, 0, sizeof(all));
	if (dc->alerts.mail_author && author_listed(dc, x))
		add_rcpt(&all, author, 0);
	for (i = 0; i < dc->alerts.to.n; i++)
		add_rcpt(&all, dc->alerts.to.v[i], 0);
	for (i = 0; i < dc->alerts.nlists; i++) {
		const struct cfg_alert_list *l = &dc->alerts.lists[i];
		int match =
		    (l->tree && x->tree && strcmp(l->tree, x->tree) == 0) ||
		    (l->inbox && x->inbox && strcmp(l->inbox, x->inbox) == 0);

		if (!match)
			continue;
		if (l->quiet)
			all.quiet = 1;
		for (j = 0; j < l->cc.n; j++)
			add_rcpt(&all, l->cc.v[j], 1);
	}
	if (dc->alerts.test_to == NULL) {
		*out = all;
		return;
	}
	/* Test mode: one address gets it, the body says who would have. */
	out->quiet = all.quiet;
	add_rcpt(out, dc->alerts.test_to, 0);
	for (i = 0; i < all.nenv; i++)
		buf_printf(&note, "%s%s", i ? ", " : "", all.env[i]);
	out->test_note = buf_take(&note);
	alert_rcpt_release(&all);
}

/* ---- subject ---- */

void
alert_mail_i_pct(char *out, size_t n, double v)
{
	if (isnan(v))
		snprintf(out, n, "unknown");
	else
		snprintf(out, n, "%+.1f%%", v);
}

char *
alert_mail_subject(const struct alert_report *r, int reply_to_series)
{
	const struct store_alert_info *x = r->x;
	const struct store_alert_cmp *h = r->nchg ? &x->cmp[r->head] : NULL;
	char what[CAP_SUBJECT], change[32];
	char *subj = alert_mail_i_clean(x->subject, 200), *title, *s;

	if (h != NULL) {
		alert_mail_i_pct(change, sizeof(change), h->change_pct);
		snprintf(what, sizeof(what), "%s.%s %s %s", x->job, h->metric,
		    change, h->verdict);
	} else if (x->ncp > 0 && x->bisect_origin != NULL) {
		/* A bisected change point where no pair changed. */
		alert_mail_i_pct(change, sizeof(change), x->cp[0].change_pct);
		snprintf(what, sizeof(what), "%s.%s %s history change point",
		    x->job, x->cp[0].metric, change);
	} else if (x->bisect_origin != NULL) {
		/* ... recomputed away since (the bisection kept its range). */
		snprintf(
		    what, sizeof(what), "%s: history change point", x->job);
	} else
		snprintf(what, sizeof(what), "%s: no change", x->job);
	if (alert_series_threaded(x, reply_to_series)) {
		/* The mail it answers, then what changed, as the kernel test
		 * robot's replies read: "Re: [PATCH v2 2/3] title: job.metric
		 * -4.1% regression".  A report pinned to one patch answers
		 * that patch; a cover letter is the series' own Message-ID,
		 * not a patch's: patch 0. */
		long long k = (long long)alert_pinned_patch(x);

		if (k == 0 && x->npatch_msgids > 0 &&
		    x->patch_msgids[0] != NULL &&
		    strcmp(x->patch_msgids[0], x->series_msgid) == 0)
			k = 1;
		title = alert_mail_i_clean(k > 0 && alert_pinned_patch(x) > 0
		        ? x->patch_subject
		        : x->series_title,
		    200);
		s = xasprintf("Re: [PATCH v%lld %lld/%lld] %s: %s",
		    (long long)(x->version > 0 ? x->version : 1), k,
		    (long long)x->total, title, what);
		free(title);
	} else if (x->branch != NULL && x->branch[0] != '\0')
		/* The first of a commit's branches (the body lists all). */
		s = xasprintf("[%s:%.*s] %.12s %s: %s", x->tree ? x->tree : "?",
		    (int)strcspn(x->branch, ","), x->branch,
		    x->sha ? x->sha : "?", subj, what);
	else
		s = xasprintf("[%s] %.12s %s: %s", x->tree ? x->tree : "?",
		    x->sha ? x->sha : "?", subj, what);
	free(subj);
	return s;
}
