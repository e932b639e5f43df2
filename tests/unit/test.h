#ifndef TESTS_UNIT_TEST_H
#define TESTS_UNIT_TEST_H

/*
 * A tiny unit-test harness in the spirit of clar.  Each test binary links
 * tests/unit/test.c (which has main()); cases register themselves:
 *
 *	TEST(test_buf__grows) { ASSERT(...); ASSERT_STREQ(a, b); }
 *
 * Run all cases: ./buf_test.  One case: ./buf_test test_buf__grows.
 * Every case prints "PASS name" or "FAIL name: file:line: why"; the
 * binary exits non-zero when any case failed.  A failed ASSERT returns
 * from the case.  tests/run adds the cases up into "N passed, N failed".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct store;

void test_register(const char *, void (*)(void));
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A scratch directory for the current binary, removed at exit. */
const char *test_tmpdir(void);
/*
 * Where a new store named name goes (a malloc'd string): a file in
 * test_tmpdir(), or, when PW_TEST_PG names a PostgreSQL server (a
 * conninfo: make check-pg), a new empty database there, so that one
 * suite runs on both backends.  The same name again is the same store.
 */
char *test_store_where(const char *name);
/* test_store_where of the name fmt makes (printf). */
char *test_store_at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A store opened (and migrated) at test_store_at(fmt, ...), or NULL
 * with the reason printed. */
struct store *test_store_open(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* A queued pair of job name at point: base and candidate with these
 * specs, no host labels, one run, three attempts, made at time at.  Its
 * id (and jobs[0], jobs[1] its jobs when jobs is not NULL), or -1. */
int64_t test_pair_new(struct store *, const char *name, const char *point,
    const char *base_spec, const char *cand_spec, int64_t at, int64_t *jobs);
struct db;
/* The one number the query sql gives on the connection, or -1. */
int64_t test_db_number(struct db *, const char *sql);
/* Appends id to the list of ids out ("id,id"; *len its length so far,
 * n its size). */
void test_ids_add(char *out, size_t n, size_t *len, int64_t id);
/*
 * A filtered list read by pages against want, what its filters pass
 * worked out by hand: pages(arg, limit, scan, got, n) writes into got
 * (test_ids_add) the ids of every page of one paging, from the newest,
 * following the cursors.  The pagings: whole pages (50) and 3 a page,
 * each within the default scan budget (0) and one of 4.  0 when each
 * lists want; else -1 with the first that does not in got, and its
 * *limit and *scan.
 */
int test_pagings(
    int (*pages)(void *arg, int64_t limit, int64_t scan, char *got, size_t n),
    void *arg, const char *want, char *got, size_t n, int64_t *limit,
    int64_t *scan);
/* 1 when the stores are PostgreSQL's (PW_TEST_PG). */
int test_store_pg(void);
/* Ends the current case as "SKIP name: why" (neither passed nor
 * failed). */
void test_skip(const char *why);
/* A case that checks what only SQLite has (its older schema versions,
 * its virtual machine's steps, its WAL) skips on PostgreSQL. */
#define SKIP_ON_PG(why)                 \
	do {                            \
		if (test_store_pg()) {  \
			test_skip(why); \
			return;         \
		}                       \
	} while (0)
/* Path of a fixture: under $PERFWATCH_FIXTURES, else tests/fixtures. */
const char *test_fixture(const char *rel);
/* Path inside the source tree (tests run from the top directory). */
const char *test_srcpath(const char *rel);
/* Writes text to root/rel, making its directories (fake /sys, /proc). */
void test_write_file(const char *root, const char *rel, const char *text);
/* A socket listening on 127.0.0.1, on a port of the system's choice
 * (*port), for a test's own server thread. */
int test_listen(int *port);

#define TEST(name)                                                \
	static void name(void);                                   \
	__attribute__((constructor)) static void reg_##name(void) \
	{                                                         \
		test_register(#name, name);                       \
	}                                                         \
	static void name(void)

#define ASSERT(c)                                                \
	do {                                                     \
		if (!(c)) {                                      \
			test_fail(__FILE__, __LINE__, "%s", #c); \
			return;                                  \
		}                                                \
	} while (0)

#define ASSERT_MSG(c, ...)                                          \
	do {                                                        \
		if (!(c)) {                                         \
			test_fail(__FILE__, __LINE__, __VA_ARGS__); \
			return;                                     \
		}                                                   \
	} while (0)

#define ASSERT_STREQ(a, b)                                             \
	do {                                                           \
		const char *a_ = (a), *b_ = (b);                       \
		if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) { \
			test_fail(__FILE__, __LINE__,                  \
			    "%s == %s: \"%s\" != \"%s\"", #a, #b,      \
			    a_ ? a_ : "(null)", b_ ? b_ : "(null)");   \
			return;                                        \
		}                                                      \
	} while (0)

#define ASSERT_INTEQ(a, b)                                             \
	do {                                                           \
		long long a_ = (long long)(a), b_ = (long long)(b);    \
		if (a_ != b_) {                                        \
			test_fail(__FILE__, __LINE__,                  \
			    "%s == %s: %lld != %lld", #a, #b, a_, b_); \
			return;                                        \
		}                                                      \
	} while (0)

/* |a - b| <= tol */
#define ASSERT_NEAR(a, b, tol)                                              \
	do {                                                                \
		double a_ = (a), b_ = (b);                                  \
		if (!(fabs(a_ - b_) <= (tol))) {                            \
			test_fail(__FILE__, __LINE__,                       \
			    "%s ~ %s: %.10g vs %.10g (tol %g)", #a, #b, a_, \
			    b_, (double)(tol));                             \
			return;                                             \
		}                                                           \
	} while (0)

#endif
