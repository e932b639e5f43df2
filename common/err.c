#include <stdarg.h>
#include <stdio.h>

#include "common/err.h"

void
err_clear(struct err *e)
{
	e->set = 0;
	e->msg[0] = '\0';
}

static void __attribute__((format(printf, 2, 0)))
err_vset(struct err *e, const char *fmt, va_list ap)
{
	if (e == NULL || e->set)
		return;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	e->set = 1;
}

int
err_set(struct err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, fmt, ap);
	va_end(ap);
	return -1;
}

int
err_setc(struct err *e, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, fmt, ap);
	va_end(ap);
	return code;
}

const char *
err_msg(const struct err *e)
{
	return (e != NULL && e->set) ? e->msg : "";
}
