#ifndef DAEMON_HYGIENE_H
#define DAEMON_HYGIENE_H

/*
 * Bench host hygiene on the daemon side (docs/HOST.md): each run carries
 * the host state it ran under; a pair whose base and candidate ran under
 * different states (governor, turbo, THP, SMT, pinning, command line,
 * microcode, drop_caches -- not the kernel, which is what a pair changes,
 * nor the command line's BOOT_IMAGE=) is "suspect": the dashboard marks
 * it and no regression alert is sent on it (store_hygiene_suspect()).
 */
#include "common/buf.h"
#include "common/json.h"

struct store;
struct store_run_metas;

/*
 * rows: a pair's runs as store_pair_run_meta_list() gives them (runs not
 * measured are left out).  Returns how many keys
 * differ between the sides or within one side, and says which in why
 * ("governor: powersave (base) vs performance (candidate)"); 0 when all
 * agree or no run recorded a state.  A side without any recorded state
 * while the other has some counts as one difference.
 */
int hygiene_compare(struct buf *why, const struct store_run_metas *rows);

/* Reads the pair's states and sets or clears its suspect mark (inside
 * the caller's transaction, if any).  0, or -1 (store_errmsg()). */
int hygiene_mark(struct store *, int64_t pair_id);

#endif
