#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/xalloc.h"

void
buf_init(struct buf *b, size_t max)
{
	*b = BUF_INIT(max);
}

void
buf_release(struct buf *b)
{
	if (b == NULL)
		return;
	if (b->cap)
		free(b->data);
	b->data = (char *)"";
	b->len = b->cap = 0;
	b->overflow = 0;
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	b->overflow = 0;
	if (b->cap)
		b->data[0] = '\0';
}

/* Makes room for n more bytes plus the NUL, or sets overflow. */
static int
buf_grow(struct buf *b, size_t n)
{
	size_t want, ncap;

	if (b->overflow)
		return -1;
	if (n > b->max || b->len > b->max - n) {
		b->overflow = 1;
		return -1;
	}
	want = b->len + n + 1;
	if (want <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < want)
		ncap *= 2;
	if (ncap > b->max + 1)
		ncap = b->max + 1;
	if (b->cap == 0) {
		b->data = xmalloc(ncap);
		b->data[0] = '\0';
	} else
		b->data = xrealloc(b->data, ncap);
	b->cap = ncap;
	return 0;
}

int
buf_add(struct buf *b, const void *p, size_t n)
{
	/* Grown only when the room is not there: jansson's dump writes a
	 * reply in pieces of a few bytes, thousands a reply. */
	if ((b->overflow || n >= b->cap - b->len) && buf_grow(b, n) == -1)
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int
buf_puts(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int
buf_putc(struct buf *b, char c)
{
	return buf_add(b, &c, 1);
}

int
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		b->overflow = 1;
		return -1;
	}
	if (buf_grow(b, (size_t)n) == -1)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

void
buf_truncate(struct buf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->data[len] = '\0';
	}
}

int
buf_failed(const struct buf *b)
{
	return b->overflow;
}

char *
buf_take(struct buf *b)
{
	char *p;

	if (b->cap == 0)
		p = xstrdup("");
	else
		p = b->data;
	b->data = (char *)"";
	b->len = b->cap = 0;
	b->overflow = 0;
	return p;
}
