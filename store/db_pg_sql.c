/*
 * SQLite's SQL as PostgreSQL reads it (db_pg_sql.h): the store's SQL is
 * written once, for both backends, and the PostgreSQL backend
 * (db_pg.c) sends each statement through this rewrite.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/xalloc.h"
#include "store/db_pg_sql.h"

/* The end of a name ("jobs", "json_each(?7)") at s, or s. */
static const char *
skip_name(const char *s)
{
	int depth = 0;

	while (isalnum((unsigned char)*s) || *s == '_')
		s++;
	if (*s != '(')
		return s;
	for (; *s != '\0'; s++) {
		depth += *s == '(';
		depth -= *s == ')';
		if (depth == 0)
			return s + 1;
	}
	return s;
}

/*
 * 1 when the CROSS JOIN at s (SQLite's way to fix the join order) has
 * an ON clause: "CROSS JOIN name [alias] [INDEXED BY index] ON", which
 * PostgreSQL reads as a JOIN.
 */
static int
cross_join_on(const char *s)
{
	const char *e;

	s += strlen(" CROSS JOIN ");
	s = skip_name(s);
	while (*s == ' ')
		s++;
	if (strncasecmp(s, "ON ", 3) == 0)
		return 1;
	e = skip_name(s); /* the alias */
	if (e == s)
		return 0;
	s = e;
	while (*s == ' ')
		s++;
	if (strncasecmp(s, "INDEXED BY ", 11) == 0) {
		s = skip_name(s + 11);
		while (*s == ' ')
			s++;
	}
	return strncasecmp(s, "ON ", 3) == 0;
}

/*
 * SQLite's group_concat(x) is PostgreSQL's string_agg(x, ','): the
 * group_concat the schema defines (migrate_pg.c) calls an SQL function
 * a row, six times string_agg's time (the overview's verdicts of 400
 * jobs: 12 ms against 3).  AGG_DEPTH: how deep such calls nest at most.
 */
#define AGG_DEPTH 8
struct aggs {
	int depth;            /* of the parentheses at the cursor */
	int n;                /* group_concat calls open */
	int at[AGG_DEPTH];    /* the depth inside each */
	int comma[AGG_DEPTH]; /* a separator given */
};

/* 1 when s (not inside a name) starts a call of group_concat. */
static int
group_concat_at(const char *sql, const char *s)
{
	return strncasecmp(s, "group_concat(", 13) == 0 &&
	    (s == sql || !(isalnum((unsigned char)s[-1]) || s[-1] == '_'));
}

/* The parenthesis or comma at *s, copied to *o, tracked in a. */
static void
agg_punct(struct aggs *a, char c, char **o)
{
	int top = a->n > 0 && a->depth == a->at[a->n - 1];

	if (c == ',' && top)
		a->comma[a->n - 1] = 1;
	if (c == ')' && top) {
		if (!a->comma[a->n - 1]) {
			memcpy(*o, ", ','", 5);
			*o += 5;
		}
		a->n--;
	}
	a->depth += (c == '(') - (c == ')');
	*(*o)++ = c;
}

/* db_pg_sql.h */
char *
db_pg_rewrite(const char *sql, int *np)
{
	size_t n = strlen(sql), marks = 0, calls = 0;
	char *out, *o;
	const char *s = sql;
	struct aggs a = { 0 };
	int max = 0, k;
	char q;

	/* A bare ? becomes $N: room for the longest N each, and for each
	 * group_concat's separator. */
	for (s = sql; (s = strchr(s, '?')) != NULL; s++)
		marks++;
	for (s = sql; (s = strchr(s, '(')) != NULL; s++)
		calls++;
	out = o = xmalloc(n + marks * 11 + calls * 5 + 16);
	s = sql;
	while (*s != '\0') {
		if (*s == '\'' || *s == '"') {
			q = *s;
			*o++ = *s++;
			while (*s != '\0') {
				if (*s == q && s[1] == q) {
					*o++ = *s++;
					*o++ = *s++;
					continue;
				}
				if (*s == q)
					break;
				*o++ = *s++;
			}
			if (*s != '\0')
				*o++ = *s++;
		} else if (s[0] == '-' && s[1] == '-') {
			while (*s != '\0' && *s != '\n')
				*o++ = *s++;
		} else if (strncasecmp(s, " CROSS JOIN ", 12) == 0 &&
		    cross_join_on(s)) {
			memcpy(o, " JOIN ", 6);
			o += 6;
			s += 12;
		} else if (strncasecmp(s, " INDEXED BY ", 12) == 0) {
			/* SQLite's index hint: PostgreSQL plans alone. */
			s += 12;
			while (isalnum((unsigned char)*s) || *s == '_')
				s++;
		} else if (group_concat_at(sql, s) && a.n < AGG_DEPTH) {
			memcpy(o, "string_agg(", 11);
			o += 11;
			s += 13;
			a.depth++;
			a.at[a.n] = a.depth;
			a.comma[a.n++] = 0;
		} else if (*s == '(' || *s == ')' || *s == ',') {
			agg_punct(&a, *s++, &o);
		} else if (*s == '?') {
			s++;
			if (isdigit((unsigned char)*s)) {
				k = (int)strtol(s, (char **)&s, 10);
			} else
				k = max + 1;
			if (k > max)
				max = k;
			o += sprintf(o, "$%d", k);
		} else
			*o++ = *s++;
	}
	*o = '\0';
	*np = max;
	return out;
}
