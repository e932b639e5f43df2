#ifndef STORE_MAIL_COMMANDS_H
#define STORE_MAIL_COMMANDS_H

/*
 * The commands perfwatch read by mail (daemon/mailcmd.h), each line of
 * each command mail as one row: who sent it (the mail's address), the
 * command as parsed, the mail's Message-ID and line, when, and what it
 * did (done, with the pairs or the series it made) or why it was
 * refused.  Beside the line as written, the command as it was read, in
 * one canonical form ("retest runs=8 hosts=a,b" for "retest
 * hosts=a,b   runs=08"), so two mails that ask the same read the same.  The
 * series page and GET /api/v1/series/{id} list those of a series' reports, the
 * commit page and GET /api/v1/commits/{sha} those of the commit's.  All SQL is
 * in store/ (docs/ARCHITECTURE.md).
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * The migration step (SQLite; store/migrate_pg.c has PostgreSQL's
 * types): a command by (Message-ID, line) once, a series' commands by
 * an index and a commit's (the report's) by another, the pairs each
 * made.
 */
#define STORE_MAIL_COMMANDS_MIGRATION                                         \
	"CREATE TABLE mail_commands ("                                        \
	"  id INTEGER PRIMARY KEY,"                                           \
	"  series_id INTEGER REFERENCES series(id) ON DELETE CASCADE,"        \
	"  commit_sha TEXT, job TEXT NOT NULL,"                               \
	"  message_id TEXT NOT NULL, line INTEGER NOT NULL,"                  \
	"  sender TEXT NOT NULL, command TEXT NOT NULL,"                      \
	"  outcome TEXT NOT NULL CHECK (outcome IN ('done', 'refused')),"     \
	"  reason TEXT NOT NULL,"                                             \
	"  made_series_id INTEGER REFERENCES series(id) ON DELETE SET NULL,"  \
	"  created INTEGER NOT NULL,"                                         \
	"  UNIQUE (message_id, line));"                                       \
	"CREATE INDEX mail_commands_series ON mail_commands(series_id, id);"  \
	"CREATE INDEX mail_commands_commit ON mail_commands(commit_sha, id);" \
	"CREATE TABLE mail_command_pairs ("                                   \
	"  command_id INTEGER NOT NULL"                                       \
	"   REFERENCES mail_commands(id) ON DELETE CASCADE,"                  \
	"  pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE,"  \
	"  PRIMARY KEY (command_id, pair_id));"

/* The next step: the command as read beside the line (NULL: the line
 * read as no command). */
#define STORE_MAIL_COMMANDS_PARSED_MIGRATION \
	"ALTER TABLE mail_commands ADD COLUMN parsed TEXT;"

/* Caps on what a row keeps of mail text (bytes). */
#define STORE_MAIL_COMMAND_TEXT 200
#define STORE_MAIL_COMMAND_REASON 600

/* The pairs one command row links at most. */
#define STORE_MAIL_COMMAND_PAIRS 64

struct store_mail_command {
	int64_t id;
	int64_t series_id;      /* the report's series, 0: none */
	int64_t made_series_id; /* a test's own series, 0: none */
	int64_t line, created;
	char *commit_sha, *job, *message_id, *sender, *command;
	char *parsed;   /* the command in canonical form, NULL: none */
	char *outcome;  /* done | refused */
	char *reason;   /* what it did, or why not */
	int64_t *pairs; /* the pairs it made, ascending */
	size_t npairs;
};

struct store_mail_commands {
	struct store_mail_command *v;
	size_t n;
};
void store_mail_commands_release(struct store_mail_commands *);

/* One row to write; text longer than the caps above is cut. */
struct store_mail_command_new {
	int64_t series_id, made_series_id; /* 0: none */
	const char *commit_sha, *job, *message_id, *sender, *command;
	const char *parsed; /* NULL: the line read as no command */
	int64_t line;
	int done; /* 1: done, 0: refused */
	const char *reason;
	const int64_t *pairs;
	size_t npairs;
};

/*
 * Records c, joining the caller's transaction (store_begin) if any.
 * 0; ERR_EXISTS when that Message-ID's line is recorded already; -1
 * with store_errmsg().
 */
int store_mail_command_put(
    struct store *, const struct store_mail_command_new *c, int64_t now);

/* 1 when a command of that Message-ID is recorded, 0 when not, -1. */
int store_mail_command_known(struct store *, const char *message_id);

/*
 * The newest max commands on reports of series_id, oldest first, each
 * with its pairs: 0, or -1 (out then empty).
 */
int store_mail_commands_of_series(struct store *,
    struct store_mail_commands *out, int64_t series_id, size_t max);
/* The same for the reports of the commit sha (40 hex digits). */
int store_mail_commands_of_commit(struct store *,
    struct store_mail_commands *out, const char *sha, size_t max);

#endif
