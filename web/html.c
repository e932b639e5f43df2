#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/utf8.h"
#include "web/html.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */
#define ELLIPSIS "\xe2\x80\xa6"    /* U+2026 */

/*
 * Characters shown as U+FFFD: C0 controls but tab and newline, DEL, C1
 * controls, and the bidirectional embeddings, overrides and isolates that
 * can make text read differently from what it is ("Trojan Source").
 */
static int
replaced(long cp)
{
	if (cp < 0)
		return 1;
	if (cp < 0x20)
		return cp != '\t' && cp != '\n';
	if (cp >= 0x7f && cp <= 0x9f)
		return 1;
	if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
		return 1;
	return 0;
}

/*
 * The escaper behind html_text*.  Plain bytes are copied in runs, which
 * keeps big pages cheap; max_chars (0 = no limit) cuts the text at a
 * character boundary and adds an ellipsis.
 */
static int
emit(struct buf *b, const unsigned char *s, size_t len, size_t max_chars)
{
	size_t i = 0, run = 0, chars = 0;

	while (i < len) {
		unsigned char c = s[i];
		const char *rep = NULL;
		size_t replen = 0, k;
		long cp;

		if (max_chars && chars == max_chars) {
			buf_add(b, s + run, i - run);
			return HTML_LIT(b, ELLIPSIS);
		}
		chars++;
		switch (c) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		default:
			if (c >= 0x20 && c < 0x7f) {
				i++;
				continue;
			}
			/* A byte that starts no valid character is one
			 * U+FFFD (cp is -1 then). */
			if ((k = utf8_decode(s + i, len - i, &cp)) == 0)
				k = 1;
			if (!replaced(cp)) {
				i += k;
				continue;
			}
			buf_add(b, s + run, i - run);
			HTML_LIT(b, REPLACEMENT);
			i += k;
			run = i;
			continue;
		}
		replen = strlen(rep);
		buf_add(b, s + run, i - run);
		buf_add(b, rep, replen);
		i++;
		run = i;
	}
	buf_add(b, s + run, i - run);
	return buf_failed(b) ? -1 : 0;
}

int
html_text(struct buf *b, const char *s)
{
	if (s == NULL)
		return buf_failed(b) ? -1 : 0;
	return emit(b, (const unsigned char *)s, strlen(s), 0);
}

int
html_textn(struct buf *b, const char *s, size_t len)
{
	if (s == NULL)
		return buf_failed(b) ? -1 : 0;
	return emit(b, (const unsigned char *)s, len, 0);
}

int
html_text_trunc(struct buf *b, const char *s, size_t max_chars)
{
	if (s == NULL)
		return buf_failed(b) ? -1 : 0;
	if (max_chars == 0)
		return HTML_LIT(b, ELLIPSIS);
	/* Only the first 4 bytes per character can matter. */
	if (max_chars > SIZE_MAX / 8)
		return emit(b, (const unsigned char *)s, strlen(s), max_chars);
	return emit(b, (const unsigned char *)s, strnlen(s, max_chars * 4 + 4),
	    max_chars);
}

int
html_url(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p, *end;

	if (s == NULL)
		return buf_failed(b) ? -1 : 0;
	p = (const unsigned char *)s;
	end = p + strnlen(s, HTML_URL_MAX);
	for (; p < end; p++) {
		char enc[3];

		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
		    *p == '_' || *p == '~') {
			buf_putc(b, (char)*p);
			continue;
		}
		enc[0] = '%';
		enc[1] = hex[*p >> 4];
		enc[2] = hex[*p & 15];
		buf_add(b, enc, 3);
	}
	return buf_failed(b) ? -1 : 0;
}

/* The decimal digits of v into b, as "%lld" writes them. */
static int
put_int(struct buf *b, long long v)
{
	char d[24];
	size_t i = sizeof(d);
	unsigned long long u =
	    v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;

	do
		d[--i] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		d[--i] = '-';
	return buf_add(b, d + i, sizeof(d) - i);
}

int
html_int(struct buf *b, long long v)
{
	return put_int(b, v);
}

static const double pow10_neg[10] = { 1, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6,
	1e-7, 1e-8, 1e-9 };
static const double pow10_pos[10] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
	1e9 };

/*
 * v with prec (0..9) decimals, as "%.*f" (plus: "%+.*f") writes it:
 * the pages draw thousands of numbers, and printf's exact conversion
 * was a quarter of the history page's time.  v * 10^prec rounded is
 * printf's answer unless v lies near a tie, where the product's
 * rounding error could decide: there, and for large numbers, printf.
 */
static int
put_fixed(struct buf *b, double v, int prec, int plus)
{
	double x = v * pow10_pos[prec], r = nearbyint(x);
	long long n, ip, scale = (long long)pow10_pos[prec];
	char d[16];
	int i;

	if (fabs(x) >= 1e12 || fabs(fabs(x - trunc(x)) - 0.5) < 1e-3)
		return buf_printf(b, plus ? "%+.*f" : "%.*f", prec, v);
	n = (long long)r;
	if (n < 0 || signbit(v))
		buf_putc(b, '-');
	else if (plus)
		buf_putc(b, '+');
	if (n < 0)
		n = -n;
	ip = n / scale;
	put_int(b, ip);
	if (prec == 0)
		return buf_failed(b) ? -1 : 0;
	n -= ip * scale;
	for (i = prec; i-- > 0; n /= 10)
		d[i] = (char)('0' + n % 10);
	buf_putc(b, '.');
	return buf_add(b, d, (size_t)prec);
}

int
html_num(struct buf *b, double v, int prec)
{
	if (!isfinite(v))
		return HTML_LIT(b, "unknown");
	if (prec < 0)
		prec = 0;
	if (prec > 9)
		prec = 9;
	/* Avoid printing "-0.00" for tiny negative values. */
	if (fabs(v) < 0.5 * pow10_neg[prec])
		v = 0;
	return put_fixed(b, v, prec, 0);
}

int
html_pct(struct buf *b, double v, int prec)
{
	if (!isfinite(v))
		return HTML_LIT(b, "unknown");
	if (prec < 0)
		prec = 0;
	if (prec > 9)
		prec = 9;
	if (fabs(v) < 0.5 * pow10_neg[prec])
		v = 0;
	if (put_fixed(b, v, prec, 1) == -1)
		return -1;
	return buf_putc(b, '%');
}

/*
 * v as "%.Ng" (N = digits, 3 or 4) writes it, for 1e-4 <= |v| < 9999
 * without printf (the history page writes six numbers a point): %.Ng
 * is %f with N - 1 - X decimals (X the exponent after rounding to N
 * digits) and the trailing zeros dropped.  With X taken before rounding
 * the only difference is a value that rounds up to the next power of
 * ten, whose extra decimal is a zero that goes anyway.  A value of more
 * integer digits than N is rounded to N significant ones and printed
 * whole (1234 to 3 digits: 1230, where %.3g says 1.23e+03); 9999.5 and
 * up would become "1e+04" and take printf, as do the smaller and
 * larger magnitudes.
 */
static int
put_g(struct buf *b, double v, int digits)
{
	double a = fabs(v);
	size_t n;
	int prec;

	if (!(a >= 1e-4 && a < 9999))
		return buf_printf(b, "%.*g", digits, v);
	prec = digits - 1 - (int)floor(log10(a));
	if (prec < 0) {
		v = nearbyint(v * pow10_neg[-prec]) * pow10_pos[-prec];
		prec = 0;
	}
	if (put_fixed(b, v, prec, 0) == -1)
		return -1;
	if (prec == 0)
		return 0;
	n = b->len;
	while (b->data[n - 1] == '0')
		n--;
	if (b->data[n - 1] == '.')
		n--;
	buf_truncate(b, n);
	return 0;
}

int
html_si(struct buf *b, double v)
{
	return html_si_digits(b, v, 4);
}

int
html_si_digits(struct buf *b, double v, int digits)
{
	/* Below 10,000 the plain number is short enough. */
	static const struct {
		double from, scale;
		char suffix;
	} si[] = { { 1e12, 1e12, 'T' }, { 1e9, 1e9, 'G' }, { 1e6, 1e6, 'M' },
		{ 1e4, 1e3, 'k' } };
	size_t i;

	if (!isfinite(v))
		return HTML_LIT(b, "unknown");
	if (digits < 3)
		digits = 3;
	if (digits > 4)
		digits = 4;
	for (i = 0; i < sizeof(si) / sizeof(si[0]); i++) {
		if (fabs(v) >= si[i].from) {
			double x = v / si[i].scale, ax = fabs(x);
			/* digits in all, at most 2 decimals: 1.23M, 12.34k
			 * (4) or 12.3k (3), 123.4M (4) or 123M (3). */
			int dec = digits - (ax >= 100 ? 3 : ax >= 10 ? 2 : 1);

			if (put_fixed(b, x, dec > 2 ? 2 : dec, 0) == -1)
				return -1;
			return buf_putc(b, si[i].suffix);
		}
	}
	return put_g(b, v, digits);
}

int
html_bytes(struct buf *b, long long v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB",
		"PiB" };
	double x = (double)v;
	size_t i = 0;

	if (v < 0)
		return HTML_LIT(b, "unknown");
	while (x >= 1024 && i + 1 < sizeof(unit) / sizeof(unit[0])) {
		x /= 1024;
		i++;
	}
	if (i == 0)
		buf_printf(b, "%lld", v);
	else
		buf_printf(b, x >= 100 ? "%.0f" : "%.1f", x);
	buf_putc(b, ' ');
	return buf_puts(b, unit[i]);
}

int
html_time(struct buf *b, int64_t t)
{
	char tmp[64];
	struct tm tm;
	time_t tt = (time_t)t;

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL ||
	    strftime(tmp, sizeof(tmp), "%Y-%m-%d %H:%M UTC", &tm) == 0)
		return HTML_LIT(b, "unknown");
	return buf_puts(b, tmp);
}

int
html_ago(struct buf *b, int64_t s)
{
	if (s < 0)
		s = 0;
	if (s < 120)
		return buf_printf(b, "%lld s", (long long)s);
	if (s < 2 * 3600)
		return buf_printf(b, "%lld min", (long long)(s / 60));
	if (s < 2 * 86400)
		return buf_printf(b, "%lld h", (long long)(s / 3600));
	return buf_printf(b, "%lld d", (long long)(s / 86400));
}
