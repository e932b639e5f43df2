/*
 * Mail: RFC 5322 / 2047 parsing, mboxes, patch series (see mail.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/crypto.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "daemon/mail.h"

/* ---- small helpers ---- */

static char *
capdup(const char *s, size_t len, size_t max)
{
	return xstrndup(s, utf8_cut(s, len, max));
}

/* Decimal digits s[0..n) (n < 10) to a number. */
static int
atoi_n(const char *s, size_t n)
{
	int v = 0;
	size_t i;

	for (i = 0; i < n && i < 9; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Quoted-printable into b; header: '_' is a space (RFC 2047 Q). */
static void
qp_decode(struct buf *b, const char *s, size_t len, int header)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '=' && i + 2 < len && hexval(s[i + 1]) >= 0 &&
		    hexval(s[i + 2]) >= 0) {
			buf_putc(b,
			    (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2])));
			i += 2;
		} else if (s[i] == '=' && !header &&
		    (i + 1 == len || s[i + 1] == '\n' ||
		        (s[i + 1] == '\r' && i + 2 < len &&
		            s[i + 2] == '\n'))) {
			/* Soft line break. */
			i += i + 1 < len && s[i + 1] == '\r' ? 2 : 1;
		} else if (s[i] == '_' && header) {
			buf_putc(b, ' ');
		} else {
			buf_putc(b, s[i]);
		}
	}
}

/* Latin-1 bytes to UTF-8. */
static void
latin1_to_utf8(struct buf *b, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x80) {
			buf_putc(b, (char)c);
		} else {
			buf_putc(b, (char)(0xc0 | (c >> 6)));
			buf_putc(b, (char)(0x80 | (c & 0x3f)));
		}
	}
}

/*
 * Decodes one encoded-word "=?cs?E?text?=" at s (len bytes available)
 * into b: the length consumed, or 0 when it is not one we decode.
 */
static size_t
encoded_word(struct buf *b, const char *s, size_t len)
{
	const char *cs, *q1, *q2, *end;
	struct buf raw = BUF_INIT(CAP_MAIL_HEADER);
	int latin1;
	char enc;

	if (len < 8 || s[0] != '=' || s[1] != '?')
		return 0;
	cs = s + 2;
	q1 = memchr(cs, '?', len - 2);
	if (q1 == NULL || q1 + 3 >= s + len || q1[2] != '?')
		return 0;
	enc = (char)toupper((unsigned char)q1[1]);
	if (enc != 'B' && enc != 'Q')
		return 0;
	q2 = q1 + 3;
	end = NULL;
	for (const char *p = q2; p + 1 < s + len; p++) {
		if (p[0] == '?' && p[1] == '=') {
			end = p;
			break;
		}
		if (p[0] == ' ' || p[0] == '\t')
			return 0; /* encoded-words hold no white space */
	}
	if (end == NULL)
		return 0;
	{
		size_t cl = (size_t)(q1 - cs);
		const char *star = memchr(cs, '*', cl); /* RFC 2231 language */

		if (star != NULL)
			cl = (size_t)(star - cs);
		if ((cl == 5 && strncasecmp(cs, "utf-8", 5) == 0) ||
		    (cl == 8 && strncasecmp(cs, "us-ascii", 8) == 0))
			latin1 = 0;
		else if ((cl == 10 && strncasecmp(cs, "iso-8859-1", 10) == 0) ||
		    (cl == 11 && strncasecmp(cs, "iso-8859-15", 11) == 0) ||
		    (cl == 12 && strncasecmp(cs, "windows-1252", 12) == 0) ||
		    (cl == 6 && strncasecmp(cs, "latin1", 6) == 0))
			latin1 = 1;
		else
			return 0;
	}
	if (enc == 'B')
		crypto_b64_decode(&raw, q2, (size_t)(end - q2));
	else
		qp_decode(&raw, q2, (size_t)(end - q2), 1);
	if (latin1)
		latin1_to_utf8(b, raw.data, raw.len);
	else
		buf_add(b, raw.data, raw.len);
	buf_release(&raw);
	return (size_t)(end + 2 - s);
}

/*
 * An unfolded header value to UTF-8 text: encoded-words decoded (the
 * white space between two adjacent ones dropped), control characters
 * and white-space runs made one space, trimmed.
 */
static char *
header_text(const char *s, size_t len, int decode)
{
	struct buf b = BUF_INIT(CAP_MAIL_HEADER);
	struct buf w = BUF_INIT(CAP_MAIL_HEADER);
	size_t i = 0, pending_ws = 0, n;
	int last_ew = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			pending_ws++;
			i++;
			continue;
		}
		buf_reset(&w);
		n = decode ? encoded_word(&w, s + i, len - i) : 0;
		if (n > 0) {
			/* White space between two encoded-words is dropped. */
			if (pending_ws && !last_ew && b.len > 0)
				buf_putc(&b, ' ');
			for (size_t k = 0; k < w.len; k++) {
				unsigned char wc = (unsigned char)w.data[k];

				buf_putc(&b,
				    wc < 0x20 || wc == 0x7f ? ' ' : (char)wc);
			}
			last_ew = 1;
			pending_ws = 0;
			i += n;
			continue;
		}
		if (pending_ws && b.len > 0)
			buf_putc(&b, ' ');
		pending_ws = 0;
		last_ew = 0;
		buf_putc(&b, c < 0x20 || c == 0x7f ? ' ' : (char)c);
		i++;
	}
	buf_release(&w);
	if (buf_failed(&b)) {
		size_t l = utf8_cut(b.data, b.len, CAP_MAIL_HEADER - 1);

		b.overflow = 0;
		buf_truncate(&b, l);
	}
	return buf_take(&b);
}

/* ASCII case-insensitive substring test. */
static int
strcasestr_ascii(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return 0;
}

/* ---- headers ---- */

/* Finds the end of the header block: the offset of the body. */
static size_t
header_end(const char *d, size_t len, size_t *hlen)
{
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(d + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - d) : len;
		size_t l = e - i;

		if (l == 0 || (l == 1 && d[i] == '\r')) {
			*hlen = i;
			return nl ? e + 1 : len;
		}
		i = nl ? e + 1 : len;
	}
	*hlen = len;
	return len;
}

/* The unfolded value of the first header NAME, or NULL. */
static char *
header_get(const char *d, size_t hlen, const char *name, size_t *out_len)
{
	size_t nl = strlen(name), i = 0;
	struct buf b = BUF_INIT(CAP_MAIL_HEADER);
	int found = 0;

	while (i < hlen) {
		const char *eol = memchr(d + i, '\n', hlen - i);
		size_t e = eol ? (size_t)(eol - d) : hlen;

		if (found) {
			if (d[i] != ' ' && d[i] != '\t')
				break;
			buf_add(&b, d + i, e - i);
		} else if (e - i > nl && d[i + nl] == ':' &&
		    strncasecmp(d + i, name, nl) == 0) {
			found = 1;
			buf_add(&b, d + i + nl + 1, e - i - nl - 1);
		}
		i = e + 1;
	}
	if (!found) {
		buf_release(&b);
		return NULL;
	}
	if (buf_failed(&b)) {
		b.overflow = 0;
		buf_truncate(&b, utf8_cut(b.data, b.len, CAP_MAIL_HEADER - 1));
	}
	*out_len = b.len;
	return buf_take(&b);
}

/* The ids "<...>" of a header value, in order; at most max, the last. */
static size_t
msg_ids(char ***out, const char *v, size_t max)
{
	char **ids = NULL;
	size_t n = 0;
	const char *p = v;

	while ((p = strchr(p, '<')) != NULL) {
		const char *q = strchr(p + 1, '>');

		if (q == NULL)
			break;
		if (q > p + 1 && (size_t)(q - p - 1) <= CAP_MAIL_ID) {
			if (n == max) {
				free(ids[0]);
				memmove(ids, ids + 1, (n - 1) * sizeof(*ids));
				n--;
			}
			ids = xreallocarray(ids, n + 1, sizeof(*ids));
			ids[n++] = xstrndup(p + 1, (size_t)(q - p - 1));
		}
		p = q + 1;
	}
	*out = ids;
	return n;
}

/* One id: the first <...>, else the trimmed value. */
static char *
one_id(const char *v)
{
	char **ids;
	size_t n = msg_ids(&ids, v ? v : "", 1), i;
	char *r;

	if (n > 0) {
		r = ids[0];
		for (i = 1; i < n; i++)
			free(ids[i]);
		free(ids);
		return r;
	}
	free(ids);
	if (v == NULL)
		return xstrdup("");
	while (isspace((unsigned char)*v))
		v++;
	r = capdup(v, strcspn(v, " \t\r\n"), CAP_MAIL_ID);
	return r;
}

/* ---- dates ---- */

static long long
days_from_civil(long long y, int m, int d)
{
	long long era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (unsigned)((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1);
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (long long)doe - 719468;
}

static const char *const months[] = { "jan", "feb", "mar", "apr", "may", "jun",
	"jul", "aug", "sep", "oct", "nov", "dec" };

static int
num(const char **p, int mindig, int maxdig, long *out)
{
	long v = 0;
	int k = 0;

	while (k < maxdig && isdigit((unsigned char)**p)) {
		v = v * 10 + (**p - '0');
		(*p)++;
		k++;
	}
	*out = v;
	return k >= mindig ? 0 : -1;
}

static void
skip_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\r' || **p == '\n')
		(*p)++;
}

int
mail_date(long long *out, int *tz, const char *s)
{
	const char *p = s;
	long d, y, hh, mm, ss = 0, z;
	int mon = -1, i, sign = 1;

	*out = -1;
	*tz = 0;
	skip_ws(&p);
	if (isalpha((unsigned char)*p)) { /* day of week */
		while (isalpha((unsigned char)*p))
			p++;
		if (*p == ',')
			p++;
		skip_ws(&p);
	}
	if (num(&p, 1, 2, &d) != 0)
		return -1;
	skip_ws(&p);
	for (i = 0; i < 12; i++)
		if (strncasecmp(p, months[i], 3) == 0)
			mon = i + 1;
	if (mon < 0)
		return -1;
	while (isalpha((unsigned char)*p))
		p++;
	skip_ws(&p);
	if (num(&p, 2, 4, &y) != 0)
		return -1;
	if (y < 50)
		y += 2000;
	else if (y < 1000)
		y += 1900;
	skip_ws(&p);
	if (num(&p, 1, 2, &hh) != 0 || *p++ != ':' || num(&p, 2, 2, &mm) != 0)
		return -1;
	if (*p == ':') {
		p++;
		if (num(&p, 2, 2, &ss) != 0)
			return -1;
	}
	skip_ws(&p);
	z = 0;
	if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		p++;
		if (num(&p, 4, 4, &z) != 0)
			return -1;
		z = sign * ((z / 100) * 60 + z % 100);
	} /* else "GMT", "UT", or obsolete zones: taken as UTC */
	if (d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 60)
		return -1;
	*out = days_from_civil(y, mon, (int)d) * 86400 + hh * 3600 + mm * 60 +
	    ss - z * 60;
	*tz = (int)z;
	return 0;
}

/* ---- subjects ---- */

static int
word_is(const char *w, size_t n, const char *s)
{
	return strlen(s) == n && strncasecmp(w, s, n) == 0;
}

/* Reads one bracketed tag's words into out. */
static void
tag_words(
    struct mail_subject *out, const char *t, size_t len, struct buf *prefix)
{
	size_t i = 0;

	while (i < len) {
		size_t j;

		while (i < len && (t[i] == ' ' || t[i] == ','))
			i++;
		j = i;
		while (j < len && t[j] != ' ' && t[j] != ',')
			j++;
		if (j == i)
			break;
		const char *w = t + i;
		size_t n = j - i;
		const char *slash = memchr(w, '/', n);

		if (word_is(w, n, "PATCH")) {
			out->patch = 1;
		} else if (n > 6 && n < 13 &&
		    strncasecmp(w, "PATCHv", 6) == 0 &&
		    strspn(w + 6, "0123456789") == n - 6) {
			/* "[PATCHv2 1/3]": git format-patch -v2 with the
			 * prefix written without its space. */
			out->patch = 1;
			out->version = atoi_n(w + 6, n - 6);
		} else if (word_is(w, n, "PATCHSET")) {
			/* Tejun Heo's "[PATCHSET cgroup/for-5.5] title" cover
			 * letters, answered by "[PATCH 1/6]" mail. */
			out->patch = out->set = 1;
		} else if (word_is(w, n, "RFC")) {
			out->rfc = 1;
		} else if (word_is(w, n, "RESEND")) {
			out->resend = 1;
		} else if ((w[0] == 'v' || w[0] == 'V') && n > 1 &&
		    strspn(w + 1, "0123456789") == n - 1 && n < 8) {
			out->version = atoi_n(w + 1, n - 1);
		} else if (slash != NULL && slash > w && slash < w + n - 1 &&
		    strspn(w, "0123456789") == (size_t)(slash - w) &&
		    strspn(slash + 1, "0123456789") ==
		        (size_t)(w + n - slash - 1) &&
		    n < 16) {
			out->seq = atoi_n(w, (size_t)(slash - w));
			out->total =
			    atoi_n(slash + 1, (size_t)(w + n - slash - 1));
		} else {
			if (prefix->len)
				buf_putc(prefix, ' ');
			buf_add(prefix, w, n);
		}
		i = j;
	}
}

/* The first word of the tag's other words that names a branch. */
static char *
branch_word(const char *prefix)
{
	const char *w = prefix;

	while (*w) {
		size_t n = strcspn(w, " "), i;
		int lower = 0;

		for (i = 0; i < n; i++)
			lower |= w[i] >= 'a' && w[i] <= 'z';
		if (lower &&
		    strspn(w,
		        "abcdefghijklmnopqrstuvwxyz"
		        "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		        "0123456789._/+-") >= n)
			return xstrndup(w, n);
		w += n;
		while (*w == ' ')
			w++;
	}
	return xstrdup("");
}

/* Skips "Re:", "Aw:", "Fwd:", "Fw:" (any case), repeated: 1 when any. */
static int
skip_reply(const char **p)
{
	static const char *const pre[] = {
		"re:", "aw:", "fwd:", "fw:", "re :"
	};
	int any = 0, again = 1;
	size_t i;

	while (again) {
		again = 0;
		while (**p == ' ')
			(*p)++;
		for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			if (strncasecmp(*p, pre[i], strlen(pre[i])) == 0) {
				*p += strlen(pre[i]);
				any = again = 1;
			}
	}
	return any;
}

void
mail_subject_parse(struct mail_subject *out, const char *subject)
{
	struct buf prefix = BUF_INIT(CAP_SUBJECT);
	const char *p = subject ? subject : "";
	size_t l;

	memset(out, 0, sizeof(*out));
	out->version = 1;
	out->seq = 1;
	out->total = 1;
	out->reply = skip_reply(&p);
	while (*p == '[') {
		const char *q = strchr(p, ']');

		if (q == NULL)
			break;
		tag_words(out, p + 1, (size_t)(q - p - 1), &prefix);
		p = q + 1;
		while (*p == ' ')
			p++;
		if (skip_reply(&p))
			out->reply = 1;
	}
	if (out->total < 1 || out->seq > out->total) {
		/* "[PATCH 3/0]": nonsense counters, not a series member. */
		out->seq = 1;
		out->total = 1;
	}
	if (out->version < 1)
		out->version = 1;
	if (out->set && out->seq == 1 && out->total == 1)
		out->seq = out->total = 0;
	l = strlen(p);
	while (l > 0 && p[l - 1] == ' ')
		l--;
	out->title = capdup(p, l, CAP_SUBJECT);
	if (buf_failed(&prefix)) {
		prefix.overflow = 0;
		buf_truncate(&prefix, utf8_cut(prefix.data, prefix.len, 255));
	}
	out->prefix = buf_take(&prefix);
	out->branch = branch_word(out->prefix);
}

void
mail_subject_release(struct mail_subject *s)
{
	if (s == NULL)
		return;
	free(s->prefix);
	free(s->branch);
	free(s->title);
	s->prefix = s->branch = s->title = NULL;
}

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
		m->from_email = capdup(lt + 1, (size_t)(gt - lt - 1), CAP_NAME);
		nl = (size_t)(lt - f);
		while (nl > 0 && f[nl - 1] == ' ')
			nl--;
		if (nl >= 2 && f[0] == '"' && f[nl - 1] == '"') {
			f++;
			nl -= 2;
		}
		m->from_name = capdup(f, nl, CAP_NAME);
		return;
	}
	nl = strcspn(f, " (");
	m->from_email = capdup(f, nl, CAP_NAME);
	if ((lt = strchr(f, '(')) != NULL && (gt = strchr(lt, ')')) != NULL)
		m->from_name = capdup(lt + 1, (size_t)(gt - lt - 1), CAP_NAME);
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
	boff = header_end(d, len, &hlen);
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
	v = header_get(d, hlen, "Message-ID", &vl);
	out->message_id = one_id(v);
	free(v);
	v = header_get(d, hlen, "In-Reply-To", &vl);
	out->in_reply_to = one_id(v);
	free(v);
	v = header_get(d, hlen, "References", &vl);
	out->nrefs = v ? msg_ids(&out->refs, v, CAP_MAIL_REFS) : 0;
	free(v);
	v = header_get(d, hlen, "Subject", &vl);
	out->subject = v ? header_text(v, vl, 1) : xstrdup("");
	free(v);
	if (strlen(out->subject) > CAP_SUBJECT)
		out->subject[utf8_cut(
		    out->subject, strlen(out->subject), CAP_SUBJECT)] = '\0';
	v = header_get(d, hlen, "From", &vl);
	out->from = v ? header_text(v, vl, 1) : xstrdup("");
	free(v);
	if (strlen(out->from) > CAP_NAME)
		out->from[utf8_cut(out->from, strlen(out->from), CAP_NAME)] =
		    '\0';
	split_from(out);
	v = header_get(d, hlen, "Date", &vl);
	if (v != NULL && mail_date(&out->date, &out->tz, v) != 0) {
		out->date = -1;
		out->tz = 0;
	}
	free(v);
	mail_subject_parse(&out->tag, out->subject);
	cte = header_get(d, hlen, "Content-Transfer-Encoding", &vl);
	if (cte != NULL && strcasestr_ascii(cte, "quoted-printable"))
		qp_decode(&body, d + boff, len - boff, 0);
	else if (cte != NULL && strcasestr_ascii(cte, "base64"))
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

/* ---- series ---- */

struct idx_ent {
	const char *id;
	size_t i;
};

struct idx {
	const struct mail_msg *msgs;
	struct idx_ent *ord; /* sorted by message id, then position */
	size_t n;
};

static int
cmp_id(const void *a, const void *b)
{
	const struct idx_ent *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	if (c != 0)
		return c;
	return x->i < y->i ? -1 : 1;
}

/* The first message with this id, or -1. */
static long
find_id(const struct idx *ix, const char *id)
{
	size_t lo = 0, hi = ix->n;

	if (id == NULL || id[0] == '\0')
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->ord[mid].id, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ix->n && strcmp(ix->ord[lo].id, id) == 0)
		return (long)ix->ord[lo].i;
	return -1;
}

static int
is_cover(const struct mail_msg *m)
{
	return m->tag.patch && !m->tag.reply && m->tag.seq == 0 &&
	    (m->tag.total > 1 || m->tag.set);
}

/* Patch b may be in root a's series: same version and count, or a is a
 * PATCHSET cover letter, whose patches carry neither. */
static int
same_series(const struct mail_msg *a, const struct mail_msg *b)
{
	if (a->tag.set && a->tag.total == 0)
		return !b->tag.set;
	return a->tag.version == b->tag.version && a->tag.total == b->tag.total;
}

/* Among the ids p answers (In-Reply-To, then References newest first),
 * the first message that root_of says is a root and WANT accepts. */
static long
find_root(const struct idx *ix, const long *root_of, const struct mail_msg *p,
    int want_cover)
{
	size_t k;
	long j;

	for (k = 0; k <= p->nrefs; k++) {
		const char *id =
		    k == 0 ? p->in_reply_to : p->refs[p->nrefs - k];

		j = find_id(ix, id);
		if (j < 0 || root_of[j] != j || !same_series(&ix->msgs[j], p))
			continue;
		if (want_cover ? is_cover(&ix->msgs[j])
		               : ix->msgs[j].tag.seq == 1)
			return j;
	}
	return -1;
}

/*
 * A patch that answers an earlier version of itself ("[PATCH v2 3/5]"
 * in reply to v1's 3/5: a partial reroll, as b4 reads one): the
 * message it replaces (same seq and total, lower version, in a series),
 * or -1.
 */
static long
rerolled(const struct idx *ix, const long *root_of, const struct mail_msg *p)
{
	long j = find_id(ix, p->in_reply_to);
	const struct mail_msg *o;

	if (j < 0 || root_of[j] < 0)
		return -1;
	o = &ix->msgs[j];
	if (!mail_is_patch(o) || o->tag.seq != p->tag.seq ||
	    o->tag.total != p->tag.total || o->tag.version >= p->tag.version)
		return -1;
	return j;
}

/* The message names no message it answers. */
static int
threaded(const struct mail_msg *m)
{
	return m->in_reply_to[0] != '\0' || m->nrefs > 0;
}

/*
 * Mail that is not threaded (`git format-patch` without --thread, where
 * nothing says which series a patch is in): the nearest root before
 * message i in the run of unthreaded patch mail that i ends, with the
 * same version and total; a cover
 * letter only when cover_only.  Not the same sender: format-patch sends
 * the cover letter as the committer and each patch as its author.
 * -1 when none.
 */
static long
unthreaded_root(
    const struct mail_msg *msgs, const long *root_of, size_t i, int cover_only)
{
	const struct mail_msg *m = &msgs[i];
	size_t j;

	for (j = i; j-- > 0;) {
		const struct mail_msg *c = &msgs[j];

		/* Only a run of unthreaded patch mail, as format-patch
		 * writes it: an archive interleaves other mail. */
		if (threaded(c) || !c->tag.patch || c->tag.reply)
			return -1;
		if (root_of[j] != (long)j || !same_series(c, m) ||
		    c->tag.total == 1)
			continue;
		if (is_cover(c) || (!cover_only && c->tag.seq == 1))
			return (long)j;
	}
	return -1;
}

/* FNV-1a, for ids of mail that has no Message-ID. */
static unsigned long long
fnv(unsigned long long h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (h ^ 0xff) * 1099511628211ULL;
}

void
mail_series_free(struct mail_series *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s != NULL; i++)
		free(s[i].patches);
	free(s);
}

void
mail_group(struct mail_series **out, size_t *n, size_t *out_orphans,
    const struct mail_msg *msgs, size_t nmsgs)
{
	struct idx ix = { msgs, NULL, nmsgs };
	long *root_of = xcalloc(nmsgs ? nmsgs : 1, sizeof(*root_of));
	long *slot = xcalloc(nmsgs ? nmsgs : 1, sizeof(*slot));
	long *reroll_of = xcalloc(nmsgs ? nmsgs : 1, sizeof(*reroll_of));
	struct mail_series *ser = NULL;
	size_t i, ns = 0, orphans = 0;

	ix.ord = xcalloc(nmsgs ? nmsgs : 1, sizeof(*ix.ord));
	for (i = 0; i < nmsgs; i++) {
		ix.ord[i].id = msgs[i].message_id;
		ix.ord[i].i = i;
	}
	qsort(ix.ord, nmsgs, sizeof(*ix.ord), cmp_id);
	for (i = 0; i < nmsgs; i++) {
		const struct mail_msg *m = &msgs[i];

		root_of[i] = reroll_of[i] = -1;
		if (is_cover(m) || (mail_is_patch(m) && m->tag.total == 1))
			root_of[i] = (long)i;
	}
	/* Patch 1/n is the root when it answers no cover letter. */
	for (i = 0; i < nmsgs; i++) {
		const struct mail_msg *m = &msgs[i];

		if (!mail_is_patch(m) || m->tag.total == 1 || m->tag.seq != 1)
			continue;
		if (find_root(&ix, root_of, m, 1) < 0 &&
		    (threaded(m) || unthreaded_root(msgs, root_of, i, 1) < 0))
			root_of[i] = (long)i;
	}
	for (i = 0; i < nmsgs; i++) {
		const struct mail_msg *m = &msgs[i];
		long r;

		if (!mail_is_patch(m) || m->tag.total == 1 ||
		    root_of[i] == (long)i)
			continue;
		r = find_root(&ix, root_of, m, 1);
		if (r < 0)
			r = find_root(&ix, root_of, m, 0);
		if (r < 0 && !threaded(m))
			r = unthreaded_root(msgs, root_of, i, 0);
		if (r < 0 && (reroll_of[i] = rerolled(&ix, root_of, m)) >= 0)
			root_of[i] = (long)i; /* its own series */
		else if (r < 0)
			orphans++;
		else
			root_of[i] = r; /* not a root: never matched above */
	}
	/* One series per root, in order. */
	for (i = 0; i < nmsgs; i++) {
		const struct mail_msg *m = &msgs[i];
		struct mail_series *s;
		int k;

		int total = m->tag.total;
		size_t j;

		slot[i] = -1;
		if (root_of[i] != (long)i)
			continue;
		/* A PATCHSET's count: the first patch answering it says. */
		for (j = i + 1; total == 0 && j < nmsgs; j++)
			if (root_of[j] == (long)i)
				total = msgs[j].tag.total;
		if (total < 1 || total > CAP_SERIES_PATCHES)
			continue;
		ser = xreallocarray(ser, ns + 1, sizeof(*ser));
		s = &ser[ns];
		memset(s, 0, sizeof(*s));
		s->root = i;
		s->cover = is_cover(m) ? (long)i : -1;
		s->total = total;
		s->version = m->tag.version;
		s->patches = xcalloc((size_t)s->total, sizeof(*s->patches));
		for (k = 0; k < s->total; k++)
			s->patches[k] = -1;
		s->title = m->tag.title;
		s->author = m->from;
		s->message_id = m->message_id;
		s->date = m->date;
		s->base_commit = "";
		slot[i] = (long)ns++;
	}
	for (i = 0; i < nmsgs; i++) {
		const struct mail_msg *m = &msgs[i];
		struct mail_series *s;
		long r = root_of[i];

		if (r < 0 || slot[r] < 0 || !mail_is_patch(m))
			continue;
		s = &ser[slot[r]];
		if (m->tag.seq < 1 || m->tag.seq > s->total ||
		    s->patches[m->tag.seq - 1] >= 0)
			continue; /* a resend of a seq already found */
		s->patches[m->tag.seq - 1] = (long)i;
		s->found++;
	}
	/* A partial reroll: the other patches are those of the series the
	 * patch it replaces is in (its cover letter too: the base). */
	for (i = 0; i < nmsgs; i++) {
		long j = reroll_of[i], r;
		struct mail_series *s, *old;

		if (j < 0 || slot[i] < 0 || (r = root_of[j]) < 0 || slot[r] < 0)
			continue;
		s = &ser[slot[i]];
		old = &ser[slot[r]];
		if (old->total != s->total)
			continue;
		s->cover = old->cover;
		s->title = old->title;
		for (int k = 0; k < s->total; k++)
			if (s->patches[k] < 0 && old->patches[k] >= 0) {
				s->patches[k] = old->patches[k];
				s->found++;
			}
	}
	for (i = 0; i < ns; i++) {
		struct mail_series *s = &ser[i];
		const struct mail_msg *m = &msgs[s->root];
		int k;

		if (m->message_id[0] == '\0') {
			char date[32];

			snprintf(date, sizeof(date), "%lld", m->date);
			snprintf(s->idbuf, sizeof(s->idbuf),
			    "no-message-id-%016llx@perfwatch",
			    fnv(fnv(fnv(14695981039346656037ULL, m->from),
			            m->subject),
			        date));
			s->message_id = s->idbuf;
		}
		s->complete = s->found == s->total;
		s->branch_tag = m->tag.branch;
		for (k = 0; k < s->total && !s->branch_tag[0]; k++)
			if (s->patches[k] >= 0)
				s->branch_tag = msgs[s->patches[k]].tag.branch;
		if (s->cover >= 0 && msgs[s->cover].base_commit[0])
			s->base_commit = msgs[s->cover].base_commit;
		for (k = 0; k < s->total && !s->base_commit[0]; k++)
			if (s->patches[k] >= 0 &&
			    msgs[s->patches[k]].base_commit[0])
				s->base_commit =
				    msgs[s->patches[k]].base_commit;
	}
	free(ix.ord);
	free(root_of);
	free(slot);
	free(reroll_of);
	*out = ser;
	*n = ns;
	if (out_orphans != NULL)
		*out_orphans = orphans;
}
