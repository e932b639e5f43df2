/*
 * Mail headers (mail.h): RFC 5322 header fields, RFC 2047 encoded words
 * and quoted-printable, Message-IDs, dates, and patch subjects with
 * their tags ([PATCH net-next v3 2/5], RESEND, RFC).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/crypto.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "daemon/mail_int.h"

/* ---- small helpers ---- */

char *
mail_i_capdup(const char *s, size_t len, size_t max)
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
void
mail_i_qp_decode(struct buf *b, const char *s, size_t len, int header)
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
		mail_i_qp_decode(&raw, q2, (size_t)(end - q2), 1);
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
char *
mail_i_header_text(const char *s, size_t len, int decode)
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
int
mail_i_strcasestr_ascii(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return 0;
}

/* ---- headers ---- */

/* Finds the end of the header block: the offset of the body. */
size_t
mail_i_header_end(const char *d, size_t len, size_t *hlen)
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
char *
mail_i_header_get(const char *d, size_t hlen, const char *name, size_t *out_len)
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
size_t
mail_i_msg_ids(char ***out, const char *v, size_t max)
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
char *
mail_i_one_id(const char *v)
{
	char **ids;
	size_t n = mail_i_msg_ids(&ids, v ? v : "", 1), i;
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
	r = mail_i_capdup(v, strcspn(v, " \t\r\n"), CAP_MAIL_ID);
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
	out->title = mail_i_capdup(p, l, CAP_SUBJECT);
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
