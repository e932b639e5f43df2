#ifndef COMMON_LOG_H
#define COMMON_LOG_H

/*
 * Logging to stderr, one line per call, journald-friendly: a "<N>" syslog
 * priority prefix when stderr is the journal (JOURNAL_STREAM set), else a
 * timestamp.  Thread-safe: each line is written with one write(2).
 */
enum log_level {
	LOG_LVL_ERR = 3,
	LOG_LVL_WARN = 4,
	LOG_LVL_INFO = 6,
	LOG_LVL_DEBUG = 7
};

void log_init(const char *progname, int verbose);
void log_msg(enum log_level, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
/* Logs and exits 1. */
_Noreturn void fatalx(const char *, ...) __attribute__((format(printf, 1, 2)));

#endif
