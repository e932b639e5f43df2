#ifndef STORE_COPY_H
#define STORE_COPY_H

/*
 * A whole store copied into another (`perfwatch store copy`): SQLite
 * into PostgreSQL or back, or into another of the same kind.  Both at
 * this program's schema version (STORE_VERSION); the target new, or at
 * that version with no rows but those the schema starts with.  Every
 * table's rows with their ids, in one transaction on the target, so a
 * failed copy leaves it as empty as it was; PostgreSQL's id sequences
 * then start past the greatest id copied.  Each table is read back
 * inside that transaction and its count and checksum compared with
 * the source's before the commit.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct store_copy_table {
	char *name;
	int64_t rows;
	uint64_t sum; /* of its rows' values, in no order (either side) */
};

struct store_copy_report {
	struct store_copy_table *t;
	size_t n;
};

/* from and to: where, as the daemon's `database:` names it.  0, or -1
 * with e naming the side and what is wrong. */
int store_copy(const char *from, const char *to, struct store_copy_report *out,
    struct err *e);
void store_copy_report_release(struct store_copy_report *);

#endif
