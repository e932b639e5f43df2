#ifndef DAEMON_MAILCMD_INT_H
#define DAEMON_MAILCMD_INT_H

/*
 * What the two halves of the commands by reply share: a command line
 * read into what it asks (mailcmd_parse.c, pure) and carried out
 * (mailcmd.c, the store and the answer).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "git/git.h"

struct daemon_config;

/* Room for a command's canonical form (mailcmd_cmd_normal): a line is
 * at most 95 bytes (struct mailcmd_line), its canonical form no longer
 * than the line and an alias's few letters. */
#define MAILCMD_NORMAL 128

enum mailcmd_op {
	MAILCMD_TRIAGE,
	MAILCMD_RETEST,
	MAILCMD_BISECT,
	MAILCMD_TEST
};

struct mailcmd_cmd {
	enum mailcmd_op op;
	const char *verb;  /* the command's own name ("ignore" reads as
	                      "invalid": verb is "invalid") */
	const char *state; /* MAILCMD_TRIAGE */
	char note[400];
	char fixed_by[41]; /* fixed-by's commit id, "" for other verbs */
	int64_t runs;      /* MAILCMD_RETEST: 0 keeps the pair's */
	char labels[256];  /* MAILCMD_RETEST: hosts=, a JSON array; "" keeps */
	char hosts[256];   /* the same as written: "a,b"; "" keeps */
	/* MAILCMD_TEST: the branch of url to measure (both NULL: the patch
	 * inline), its tip once resolved */
	const char *url, *branch;
	char sha[GITM_SHA_SIZE];
};

/*
 * One line (the words after "#perfwatch", which c's strings point into
 * and which must outlive c) to a command: 0, or -1 with why in why
 * (for the answer).  FROM is the sender's address, for the triage note.
 * A test's URL is checked against dc's trees.  Pure.
 */
int mailcmd_cmd_parse(struct mailcmd_cmd *c, char *words,
    const struct daemon_config *dc, const char *from, struct buf *why);

/*
 * c in one canonical form, whatever the spacing, order and aliases of
 * its line: "invalid", "expected", "fixed-by <sha>", "triage <state>",
 * "retest[ runs=N][ hosts=A,B]", "bisect", "test[ <url> <branch>]".
 * Two lines that ask the same read the same.  Pure.
 */
void mailcmd_cmd_normal(char *out, size_t n, const struct mailcmd_cmd *c);

#endif
