#include "common/utf8.h"

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
	/* The second byte's range rules out overlongs, surrogates and
	 * values past U+10FFFF (RFC 3629, section 4). */
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
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* past U+10FFFF */
	} else {
		return 0;
	}
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
