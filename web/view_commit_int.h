#ifndef WEB_VIEW_COMMIT_INT_H
#define WEB_VIEW_COMMIT_INT_H

/*
 * What the files of the commit view share (view_commit.c,
 * view_commit_facts.c): how comparison rows are told apart and ordered,
 * and their cells.
 */
#include <stddef.h>

#include "common/buf.h"
#include "web/views.h"

/*
 * A metric measured on several hosts, once: its range of changes "+13.7%
 * ... +26.2% across 3 hosts, 2 CPU families" as a cover letter quotes
 * it, the verdicts among them, and each family's range.
 */
void view_commit_i_across_hosts(
    struct buf *b, const struct view_cmp_row **sorted, size_t n);
/* A change that crosses zero (telemetry deltas do) has no meaningful
 * percentage: show the absolute difference instead. */
void view_commit_i_change_cell(struct buf *b, const struct view_cmp_row *r);
/* A header row when host, benchmark or point differ from the row before,
 * so they are not repeated on every row. */
void view_commit_i_group_row(struct buf *b, const struct view_cmp_row *r,
    const struct view_cmp_row *prev, int cols);
void view_commit_i_history_href(
    struct buf *b, const struct view_commit *v, const struct view_cmp_row *r);
/* Regressions, unstable and improvements, a memcg tax's too (it is also
 * in the memcg section). */
int view_commit_i_is_changed(const struct view_cmp_row *r);
int view_commit_i_is_other(const struct view_cmp_row *r);
int view_commit_i_is_tax(const struct view_cmp_row *r);
/* memcg telemetry: memory.stat deltas, PSI, the charge-path share. */
int view_commit_i_is_telemetry(const struct view_cmp_row *r);
/* The memcg facts: the tax of each nested point's throughput (nested vs
 * root, both kernels), the charge-path share, and memcg telemetry
 * (memory.stat deltas, PSI) as absolute amounts. */
void view_commit_i_memcg_section(struct buf *b, const struct view_commit *v,
    const struct view_cmp_row **sorted, size_t n);
int view_commit_i_same(const char *a, const char *b);
void view_commit_i_value(struct buf *b, double v, const char *unit);

#endif
