#include "common/utf8.h"

#include "common/buf.h"

size_t
utf8_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	len = max;
	while (len > 0 && UTF8_CONT(s[len]))
		len--;
	return len;
}

size_t
utf8_tail(const char *s, size_t len, size_t max)
{
	size_t i = len > max ? len - max : 0;

	while (i < len && UTF8_CONT(s[i]))
		i++;
	return i;
}

size_t
utf8_decode(const unsigned char *s, size_t n, long *cp)
{
	unsigned char lo = 0x80, hi = 0xbf, c;
	size_t need, i;
	long v;

	*cp = -1;
	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	/* A continuation byte, C0 and C1 (always overlong) and F5-FF (past
	 * U+10FFFF) start nothing. */
	if (c < 0xc2 || c > 0xf4)
		return 0;
	need = c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
	v = c & (0x3f >> need);
	/* The second byte's range rules out the other overlongs, the
	 * surrogates and the values past U+10FFFF (RFC 3629, section 4). */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < need + 1)
		return 0;
	for (i = 1; i <= need; i++) {
		unsigned char d = s[i];

		if (d < (i == 1 ? lo : 0x80) || d > (i == 1 ? hi : 0xbf))
			return 0;
		v = (v << 6) | (d & 0x3f);
	}
	*cp = v;
	return need + 1;
}

void
utf8_repair(struct buf *b, const char *s, size_t len, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n, start = b->len;
	long cp;

	while (i < len && b->len - start < max) {
		/* NUL is valid UTF-8, but not text. */
		n = u[i] != '\0' ? utf8_decode(u + i, len - i, &cp) : 0;
		if (n == 0) {
			buf_add(b, "\xef\xbf\xbd", 3);
			i++;
		} else {
			buf_add(b, s + i, n);
			i += n;
		}
	}
}
