/*
 * Every size cap in perfwatch, in one place.  A buffer that grows past its
 * cap fails (sticky overflow) instead of growing without bound; untrusted
 * input from git trees, mailing lists and HTTP bodies is bounded here.
 */
#ifndef COMMON_CAPS_H
#define COMMON_CAPS_H

#define CAP_ERRMSG 512                    /* one error message */
#define CAP_LINE (64 * 1024)              /* one line of text */
#define CAP_CONFIG_FILE (1024 * 1024)     /* a YAML config file */
#define CAP_HTTP_BODY (8 * 1024 * 1024)   /* a request body */
#define CAP_HTTP_REPLY (16 * 1024 * 1024) /* a reply body */
/* A request's head (web/httpd.c: 414, 431 or 400 past these). */
#define CAP_HTTP_PATH 2048           /* the path, without the query */
#define CAP_HTTP_QUERY 4096          /* the query's keys and values */
#define CAP_HTTP_QUERY_ARGS 32       /* parameters in the query */
#define CAP_HTTP_HEADERS (16 * 1024) /* header names and values */
/* The body of an API route that takes a small JSON object (all but the
 * run upload, log, submit and series routes: daemon/api.c). */
#define CAP_HTTP_SMALL_BODY (32 * 1024)
/* The body of a POST anyone may send (the login form's few fields). */
#define CAP_HTTP_ANON_BODY (16 * 1024)
#define CAP_RAW_OUTPUT (1024 * 1024)  /* stored benchmark output */
#define CAP_LOG_APPEND (256 * 1024)   /* one log append */
#define CAP_JOB_LOG (4 * 1024 * 1024) /* a job's whole log */
#define CAP_SUBJECT 1024              /* commit or mail subject */
#define CAP_NAME 256                  /* names: tree, host, metric */
#define CAP_METRICS_PER_RUN 1024
#define CAP_BENCH_INPUT (32 * 1024 * 1024) /* output handed to a parser */
#define CAP_HTML_PAGE (8 * 1024 * 1024)
/* A pack of series commits (GET /api/v1/packs; http.max_pack <= this). */
#define CAP_GIT_PACK (64 * 1024 * 1024)

/* daemon/mail.c: mailing-list messages and mboxes (untrusted). */
#define CAP_MAIL_MESSAGE (8 * 1024 * 1024) /* one message, headers and body */
#define CAP_MAIL_HEADERS (256 * 1024)      /* a message's header block */
#define CAP_MAIL_HEADER 8192               /* one unfolded header value kept */
#define CAP_MAIL_REFS 64            /* References: ids kept (the last ones) */
#define CAP_MAIL_ID 998             /* one Message-ID (RFC 5322 line length) */
#define CAP_MBOX (64 * 1024 * 1024) /* an uploaded mbox */
#define CAP_MBOX_MESSAGES 10000     /* messages in one mbox */
#define CAP_SERIES_PATCHES 500      /* patches in one series */
/* git/series.c: one patch of a series (refused before it is applied). */
#define CAP_PATCH_FILES 10000       /* files one patch touches */
#define CAP_PATCH_HUNK_LINES 100000 /* lines of one hunk, either side */
/* A file a patch writes (a binary literal's size, git am's files), and
 * all of them together: a small mail can hold a huge binary file. */
#define CAP_PATCH_FILE_BYTES (64LL * 1024 * 1024)
#define CAP_PATCH_BYTES (256LL * 1024 * 1024)
/* git/am.c: the git children of one patch, together (then killed), and
 * the heap each may have (RLIMIT_DATA). */
#define CAP_GITAM_SECONDS 120
#define CAP_GITAM_MEMORY (1024LL * 1024 * 1024)

/* runners/profile.c: `perf report --stdio` text and the top-symbols blob. */
#define CAP_PERF_REPORT (32 * 1024 * 1024)
#define CAP_PROFILE_BLOB (64 * 1024)
/* runners/perfstat.c: `perf stat -x,` output of one run. */
#define CAP_PERF_STAT (1024 * 1024)
#define CAP_HOST_STATE (16 * 1024) /* a run's host state (docs/HOST.md) */

#endif
