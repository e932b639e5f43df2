/*
 * Mail (mail.h): one message parsed (headers, body, the patch in it, in
 * every form git am takes), and mboxes split into messages.  Header
 * decoding is in mail_header.c, series grouping in mail_series.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/crypto.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "daemon/mail.h"
#include "daemon/mail_int.h"

/* ---- messages ---- */

void
mail_msg_release(struct mail_msg *m)
{
	size_t i;

	if (m == NULL)
		return;
	free(m->message_id);
	free(m->in_reply_to);
	for (i = 0; i < m->nrefs; i++)
		free(m->refs[i]);
	free(m->refs);
	free(m->subject);
	free(m->from);
	free(m->from_name);
	free(m->from_email);
	mail_subject_release(&m->tag);
	free(m->body);
	free(m->message);
	free(m->patch);
	memset(m, 0, sizeof(*m));
}

/* "Name <addr>", "addr (Name)", "addr": name and address. */
static void
split_from(struct mail_msg *m)
{
	const char *f = m->from, *lt = strrchr(f, '<'), *gt;
	size_t nl;

	if (lt != NULL && (gt = strchr(lt, '>')) != NULL) {
		m->from_email =
		    mail_i_capdup(lt + 1, (size_t)(gt - lt - 1), CAP_NAME);
		nl = (size_t)(lt - f);
		while (nl > 0 && f[nl - 1] == ' ')
			nl--;
		if (nl >= 2 && f[0] == '"' && f[nl - 1] == '"') {
			f++;
			nl -= 2;
		}
		m->from_name = mail_i_capdup(f, nl, CAP_NAME);
		return;
	}
	nl = strcspn(f, " (");
	m->from_email = mail_i_capdup(f, nl, CAP_NAME);
	if ((lt = strchr(f, '(')) != NULL && (gt = strchr(lt, ')')) != NULL)
		m->from_name =
		    mail_i_capdup(lt + 1, (size_t)(gt - lt - 1), CAP_NAME);
	else
		m->from_name = xstrdup("");
}

/* The line at p (l bytes, no '\n') and where the next one starts. */
static size_t
line_len(const char *p, const char *end, const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

	*next = nl ? nl + 1 : end;
	if (l > 0 && p[l - 1] == '\r')
		l--;
	return l;
}

/*
 * A file's diff without a "diff --git" line starts at p: "--- OLD" then
 * "+++ NEW" then "@@ -" (diff -u, quilt, stgit: what git apply takes).
 */
static int
traditional_start(const char *p, const char *end)
{
	const char *n1, *n2, *n3;
	size_t l0 = line_len(p, end, &n1), l1, l2;

	if (l0 < 5 || memcmp(p, "--- ", 4) != 0 || n1 >= end)
		return 0;
	l1 = line_len(n1, end, &n2);
	if (l1 < 5 || memcmp(n1, "+++ ", 4) != 0 || n2 >= end)
		return 0;
	l2 = line_len(n2, end, &n3);
	return l2 >= 4 && memcmp(n2, "@@ -", 4) == 0;
}

/*
 * The time diff -N writes for a file one side does not have: the epoch,
 * in UTC or a zone west of it ("1970-01-01 00:00:00.000000000 +0000",
 * "1969-12-31 19:00:00 -0500"), as git apply's has_epoch_timestamp.
 */
static int
epoch_time(const char *t, size_t l)
{
	return (l >= 19 && memcmp(t, "1970-01-01 00:00:00", 19) == 0) ||
	    (l >= 11 && memcmp(t, "1969-12-31 ", 11) == 0);
}

/*
 * The path of a traditional "--- " / "+++ " line (after the 4 bytes)
 * as git apply reads it: up to a tab (diff -u adds the time), with the
 * first directory stripped (-p1: "a/mm/x.c", "linux.orig/mm/x.c" are
 * both "mm/x.c").  "" for /dev/null, NULL for a name git would quote.
 */
static char *
traditional_path(const char *s, size_t l)
{
	size_t n = 0;
	const char *slash;

	while (n < l && s[n] != '\t')
		n++;
	if (n < l && epoch_time(s + n + 1, l - n - 1))
		return xstrdup(""); /* diff -N: a file that is not there */
	while (n > 0 && s[n - 1] == ' ')
		n--;
	if (n == 9 && memcmp(s, "/dev/null", 9) == 0)
		return xstrdup("");
	for (size_t i = 0; i < n; i++)
		if (s[i] == ' ' || s[i] == '"' || s[i] == '\\' ||
		    (unsigned char)s[i] < 0x20)
			return NULL;
	slash = memchr(s, '/', n);
	if (slash != NULL && slash + 1 < s + n) {
		n -= (size_t)(slash + 1 - s);
		s = slash + 1;
	}
	return n > 0 ? xstrndup(s, n) : NULL;
}

/*
 * The diff from d (len bytes) in the form libgit2 parses: a file diff
 * without a "diff --git" line gets one, with its paths made git's
 * ("a/P", "b/P") and a "new file" / "deleted file" line for /dev/null;
 * git diffs pass as they are.  Lines git apply skips between files
 * ("Index:", "=====", "diff -u ...") are kept: libgit2 skips them too.
 */
static char *
git_form(const char *d, size_t len, size_t *out_len)
{
	struct buf b = BUF_INIT(CAP_MAIL_MESSAGE);
	const char *p = d, *end = d + len, *next;
	int in_git = 0;

	while (p < end) {
		size_t l = line_len(p, end, &next);

		if (l > 11 && memcmp(p, "diff --git ", 11) == 0)
			in_git = 1;
		else if (l >= 4 && memcmp(p, "@@ -", 4) == 0)
			in_git = 0;
		if (!in_git && traditional_start(p, end)) {
			const char *n2;
			size_t l1 = line_len(next, end, &n2);
			char *o = traditional_path(p + 4, l - 4);
			char *n = traditional_path(next + 4, l1 - 4);

			if (o != NULL && n != NULL && (o[0] || n[0])) {
				const char *name = n[0] ? n : o;

				buf_printf(
				    &b, "diff --git a/%s b/%s\n", name, name);
				if (!o[0])
					buf_puts(&b, "new file mode 100644\n");
				if (!n[0])
					buf_puts(
					    &b, "deleted file mode 100644\n");
				if (o[0])
					buf_printf(&b, "--- a/%s\n", name);
				else
					buf_puts(&b, "--- /dev/null\n");
				if (n[0])
					buf_printf(&b, "+++ b/%s\n", name);
				else
					buf_puts(&b, "+++ /dev/null\n");
				free(o);
				free(n);
				p = n2;
				continue;
			}
			free(o);
			free(n);
		}
		buf_add(&b, p, (size_t)(next - p));
		p = next;
	}
	if (buf_failed(&b)) {
		/* Over the cap only by the added lines: keep it as written. */
		buf_release(&b);
		*out_len = len;
		return xstrndup(d, len);
	}
	*out_len = b.len;
	return buf_take(&b);
}

/*
 * Where the commit message ends and the diff starts, as git mailinfo
 * splits them: the message ends at the first "---" line, "diff -" line,
 * "Index: " line or diff; the diff is the first "diff --git" line or
 * the first traditional file diff (traditional_start).
 */
static void
split_body(struct mail_msg *m)
{
	const char *b = m->body, *end = b + m->body_len, *p = b, *next;
	const char *msg_end = NULL, *diff = NULL;

	while (p < end) {
		size_t l = line_len(p, end, &next);

		if (msg_end == NULL && diff == NULL &&
		    ((l >= 3 && memcmp(p, "---", 3) == 0 &&
		         (l == 3 || p[3] == ' ')) ||
		        (l > 6 && memcmp(p, "diff -", 6) == 0) ||
		        (l > 7 && memcmp(p, "Index: ", 7) == 0)))
			msg_end = p;
		if (diff == NULL &&
		    ((l > 11 && memcmp(p, "diff --git ", 11) == 0) ||
		        traditional_start(p, end)))
			diff = p;
		if (m->base_commit[0] == '\0' && l >= 53 &&
		    memcmp(p, "base-commit: ", 13) == 0 &&
		    strspn(p + 13, "0123456789abcdef") == 40) {
			memcpy(m->base_commit, p + 13, 40);
			m->base_commit[40] = '\0';
		}
		p = next;
	}
	if (msg_end == NULL || (diff != NULL && diff < msg_end))
		msg_end = diff ? diff : end;
	m->patch_off = diff ? (long)(diff - b) : -1;
	if (diff != NULL)
		m->patch = git_form(diff, (size_t)(end - diff), &m->patch_len);
	/* The message without trailing blank lines. */
	while (msg_end > b &&
	    (msg_end[-1] == '\n' || msg_end[-1] == '\r' || msg_end[-1] == ' '))
		msg_end--;
	m->message = xstrndup(b, (size_t)(msg_end - b));
}

static int
has_crlf(const char *d, size_t len)
{
	const char *cr = memchr(d, '\r', len);

	while (cr != NULL && cr + 1 < d + len) {
		if (cr[1] == '\n')
			return 1;
		cr = memchr(cr + 1, '\r', (size_t)(d + len - cr - 1));
	}
	return 0;
}

/* A copy of d without the CR of each CRLF; *len updated. */
static char *
crlf_to_lf(const char *d, size_t *len)
{
	char *o = xmalloc(*len + 1);
	size_t i, k = 0;

	for (i = 0; i < *len; i++)
		if (!(d[i] == '\r' && i + 1 < *len && d[i + 1] == '\n'))
			o[k++] = d[i];
	o[k] = '\0';
	*len = k;
	return o;
}

static int parse_lf(struct mail_msg *out, const char *d, size_t len,
    const char *where, struct err *e);

int
mail_parse(
    struct mail_msg *out, const char *d, size_t len, size_t line, struct err *e)
{
	char *lf = NULL, where[48] = "";
	int r;

	memset(out, 0, sizeof(*out));
	/* A message stored with its mbox "From " line: skip that line. */
	if (len >= 5 && memcmp(d, "From ", 5) == 0) {
		const char *nl = memchr(d, '\n', len);
		size_t skip = nl ? (size_t)(nl - d) + 1 : len;

		d += skip;
		len -= skip;
		if (line > 0)
			line++;
	}
	if (line > 0)
		snprintf(where, sizeof(where), "mbox line %zu: ", line);
	if (len <= CAP_MAIL_MESSAGE && has_crlf(d, len)) {
		lf = crlf_to_lf(d, &len);
		d = lf;
	}
	out->line = line;
	out->date = -1;
	out->patch_off = -1;
	r = parse_lf(out, d, len, where, e);
	free(lf);
	return r;
}

static int
parse_lf(struct mail_msg *out, const char *d, size_t len, const char *where,
    struct err *e)
{
	size_t hlen, boff, vl;
	char *v, *cte;
	struct buf body = BUF_INIT(CAP_MAIL_MESSAGE);

	if (len > CAP_MAIL_MESSAGE)
		return err_setc(e, ERR_TOOBIG,
		    "%smessage of %zu bytes is over the %d byte cap", where,
		    len, CAP_MAIL_MESSAGE);
	boff = mail_i_header_end(d, len, &hlen);
	if (hlen > CAP_MAIL_HEADERS)
		return err_setc(e, ERR_TOOBIG, "%sheader block over %d bytes",
		    where, CAP_MAIL_HEADERS);
	/* A header block starts with "Name:" (no space before the colon). */
	{
		size_t k = 0;

		while (k < hlen && d[k] > ' ' && d[k] != ':' && d[k] < 0x7f)
			k++;
		if (hlen == 0 || k == 0 || k >= hlen || d[k] != ':')
			return err_setc(e, ERR_INVALID,
			    "%snot a mail message (no header block)", where);
	}
	v = mail_i_header_get(d, hlen, "Message-ID", &vl);
	out->message_id = mail_i_one_id(v);
	free(v);
	v = mail_i_header_get(d, hlen, "In-Reply-To", &vl);
	out->in_reply_to = mail_i_one_id(v);
	free(v);
	v = mail_i_header_get(d, hlen, "References", &vl);
	out->nrefs = v ? mail_i_msg_ids(&out->refs, v, CAP_MAIL_REFS) : 0;
	free(v);
	v = mail_i_header_get(d, hlen, "Subject", &vl);
	out->subject = v ? mail_i_header_text(v, vl, 1) : xstrdup("");
	free(v);
	if (strlen(out->subject) > CAP_SUBJECT)
		out->subject[utf8_cut(
		    out->subject, strlen(out->subject), CAP_SUBJECT)] = '\0';
	v = mail_i_header_get(d, hlen, "From", &vl);
	out->from = v ? mail_i_header_text(v, vl, 1) : xstrdup("");
	free(v);
	if (strlen(out->from) > CAP_NAME)
		out->from[utf8_cut(out->from, strlen(out->from), CAP_NAME)] =
		    '\0';
	split_from(out);
	v = mail_i_header_get(d, hlen, "Date", &vl);
	if (v != NULL && mail_date(&out->date, &out->tz, v) != 0) {
		out->date = -1;
		out->tz = 0;
	}
	free(v);
	mail_subject_parse(&out->tag, out->subject);
	cte = mail_i_header_get(d, hlen, "Content-Transfer-Encoding", &vl);
	if (cte != NULL && mail_i_strcasestr_ascii(cte, "quoted-printable"))
		mail_i_qp_decode(&body, d + boff, len - boff, 0);
	else if (cte != NULL && mail_i_strcasestr_ascii(cte, "base64"))
		crypto_b64_decode(&body, d + boff, len - boff);
	else
		buf_add(&body, d + boff, len - boff);
	free(cte);
	if (buf_failed(&body)) {
		buf_release(&body);
		mail_msg_release(out);
		return err_setc(e, ERR_TOOBIG, "%sbody over %d bytes", where,
		    CAP_MAIL_MESSAGE);
	}
	out->body_len = body.len;
	out->body = buf_take(&body);
	split_body(out);
	return 0;
}

int
mail_is_patch(const struct mail_msg *m)
{
	return m->tag.patch && !m->tag.reply && m->patch_off >= 0;
}

/* ---- mboxes ---- */

void
mail_parts_free(struct mail_part *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && p != NULL; i++)
		free(p[i].data);
	free(p);
}

/* "From " at the start of a line, as the separator, not as text. */
static int
is_from_line(const char *p, size_t l)
{
	return l >= 5 && memcmp(p, "From ", 5) == 0;
}

/*
 * An mbox separator as git mailsplit tells one (its is_from_line): a
 * "From " line of 20 bytes or more whose last ':' has digits "d?dd:dd"
 * around it and a year over 90 after.  l excludes the newline.
 */
static int
is_separator(const char *p, size_t l)
{
	const char *c;

	if (l > 0 && p[l - 1] == '\r')
		l--;
	if (l < 20 || !is_from_line(p, l))
		return 0;
	for (c = p + l - 2; c >= p + 5 && *c != ':'; c--)
		;
	if (c < p + 9 || c + 3 > p + l)
		return 0;
	if (!isdigit((unsigned char)c[-4]) || !isdigit((unsigned char)c[-2]) ||
	    !isdigit((unsigned char)c[-1]) || !isdigit((unsigned char)c[1]) ||
	    !isdigit((unsigned char)c[2]))
		return 0;
	return strtol(c + 3, NULL, 10) > 90;
}

int
mail_mbox_split(struct mail_part **out, size_t *n, const char *data, size_t len,
    struct err *e)
{
	struct mail_part *parts = NULL;
	struct buf cur = BUF_INIT(CAP_MAIL_MESSAGE);
	size_t np = 0, line = 0, start_line = 1, i = 0;
	const char *rest;
	int in_msg = 0, r = 0;

	*out = NULL;
	*n = 0;
	if (len > CAP_MBOX)
		return err_setc(e, ERR_TOOBIG,
		    "mbox of %zu bytes is over the "
		    "%d byte cap",
		    len, CAP_MBOX);
	while (i < len && (data[i] == '\n' || data[i] == '\r')) {
		i++;
		line++;
	}
	if (i == len)
		return err_setc(e, ERR_INVALID, "mbox line 1: empty mbox");
	if (!is_separator(data + i, line_len(data + i, data + len, &rest))) {
		/* One bare message. */
		parts = xcalloc(1, sizeof(*parts));
		/* Not xstrndup: the bytes may hold a NUL. */
		parts[0].data = xmalloc(len - i + 1);
		memcpy(parts[0].data, data + i, len - i);
		parts[0].data[len - i] = '\0';
		parts[0].len = len - i;
		parts[0].line = line + 1;
		*out = parts;
		*n = 1;
		return 0;
	}
	while (i < len) {
		const char *p = data + i, *nl = memchr(p, '\n', len - i);
		size_t l = nl ? (size_t)(nl - p) : len - i, k;

		line++;
		if (is_separator(p, l)) {
			if (in_msg) {
				if (np == CAP_MBOX_MESSAGES) {
					r = err_setc(e, ERR_TOOBIG,
					    "mbox line %zu: more than %d "
					    "messages",
					    line, CAP_MBOX_MESSAGES);
					break;
				}
				parts = xreallocarray(
				    parts, np + 1, sizeof(*parts));
				parts[np].len = cur.len;
				parts[np].line = start_line;
				parts[np++].data = buf_take(&cur);
			}
			in_msg = 1;
			start_line = line + 1;
		} else {
			/* mboxrd: ">From " and ">>From " lose one '>'. */
			for (k = 0; k < l && p[k] == '>'; k++)
				;
			if (k > 0 && is_from_line(p + k, l - k))
				p++, l--;
			/* git mailsplit drops the CR of CRLF. */
			buf_add(&cur, p, l > 0 && p[l - 1] == '\r' ? l - 1 : l);
			buf_putc(&cur, '\n');
			if (buf_failed(&cur)) {
				r = err_setc(e, ERR_TOOBIG,
				    "mbox line %zu: message over %d bytes",
				    start_line, CAP_MAIL_MESSAGE);
				break;
			}
		}
		if (nl)
			i = (size_t)(nl - data) + 1;
		else
			i = len;
	}
	if (r == 0 && in_msg) {
		parts = xreallocarray(parts, np + 1, sizeof(*parts));
		parts[np].len = cur.len;
		parts[np].line = start_line;
		parts[np++].data = buf_take(&cur);
	}
	buf_release(&cur);
	if (r != 0) {
		mail_parts_free(parts, np);
		return r;
	}
	*out = parts;
	*n = np;
	return 0;
}

void
mail_msgs_free(struct mail_msg *m, size_t n)
{
	size_t i;

	for (i = 0; i < n && m != NULL; i++)
		mail_msg_release(&m[i]);
	free(m);
}

int
mail_mbox_parse(struct mail_msg **out, size_t *n, const char *data, size_t len,
    struct err *e)
{
	struct mail_part *parts;
	struct mail_msg *msgs;
	size_t np, i;
	int r;

	*out = NULL;
	*n = 0;
	if ((r = mail_mbox_split(&parts, &np, data, len, e)) != 0)
		return r;
	msgs = xcalloc(np ? np : 1, sizeof(*msgs));
	for (i = 0; i < np; i++) {
		if ((r = mail_parse(&msgs[i], parts[i].data, parts[i].len,
		         parts[i].line, e)) != 0) {
			mail_msgs_free(msgs, i);
			mail_parts_free(parts, np);
			return r;
		}
	}
	mail_parts_free(parts, np);
	*out = msgs;
	*n = np;
	return 0;
}
