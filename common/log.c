#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/redact.h"

static const char *log_prog = "perfwatch";
static int log_verbose;
static int log_journal;

void
log_init(const char *progname, int verbose)
{
	log_prog = progname;
	log_verbose = verbose;
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

static void __attribute__((format(printf, 2, 0)))
log_vmsg(enum log_level lvl, const char *fmt, va_list ap)
{
	char line[4096];
	size_t n = 0;
	int r;

	if (lvl == LOG_LVL_DEBUG && !log_verbose)
		return;
	if (log_journal) {
		r = snprintf(line, sizeof(line), "<%d>", (int)lvl);
	} else {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		r = snprintf(line, sizeof(line),
		    "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%ld]: ",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		    tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, log_prog,
		    (long)getpid());
	}
	if (r > 0)
		n = (size_t)r;
	r = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	if (r > 0)
		n += (size_t)r < sizeof(line) - n - 1 ? (size_t)r
		                                      : sizeof(line) - n - 2;
	line[n] = '\0';
	/* A URL's credentials never reach the log, whoever wrote the line. */
	if (strstr(line, "://") != NULL) {
		char clean[sizeof(line)];

		n = redact_userinfo_into(clean, sizeof(clean) - 1, line);
		memcpy(line, clean, n);
	}
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, n);
}

void
log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(lvl, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LVL_WARN, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LVL_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LVL_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LVL_ERR, fmt, ap);
	va_end(ap);
	exit(1);
}
