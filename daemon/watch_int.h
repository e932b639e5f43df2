#ifndef DAEMON_WATCH_INT_H
#define DAEMON_WATCH_INT_H

/*
 * What the files of the watcher share (watch.c, watch_inbox.c): the
 * watcher, one tree's or inbox's thread, and their helpers.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "daemon/dconf.h"
#include "daemon/mail.h"
#include "git/git.h"

/* Patch mails of series already taken, kept (in memory only) so that a
 * later "[PATCH v2 3/5]" answering v1's 3/5 finds v1's other patches. */
#define WATCH_INBOX_DONE 1000
#define TW_QUEUE 2 /* the thread applying uploaded series */

struct leases;
struct tw; /* one tree's thread */

struct watch {
	pthread_mutex_t mu; /* conf, trees */
	pthread_cond_t cv;  /* stop and reload wake-ups */
	struct dconf *conf;
	struct sched *sched;
	struct leases *leases; /* the threads poll while LEASE_WATCH is held */
	char *dbpath;
	struct tw **trees;
	size_t ntrees;
};

/* A branch as this thread last saw it: logs only changes. */
struct seen {
	char *branch;
	int missing;
};

struct tw {
	struct watch *w;
	char *name;
	int inbox; /* an inbox's thread (1), the upload queue's (TW_QUEUE),
	              else a tree's (0) */
	/* Inbox: patch mail whose series is not complete yet, oldest
	 * first, and the archive commit of each; kept in the store too
	 * (store_mail_pending_*), reloaded on the first poll. */
	struct mail_msg *pending;
	char **pending_sha;
	size_t npending;
	int pending_loaded;
	/* The patch mail of series taken, oldest first, at most
	 * WATCH_INBOX_DONE, and their archive commits: kept in the store
	 * too, so a partial reroll after a restart finds the rest of its
	 * series (reloaded with the waiting mail, told apart by
	 * store_series_mail_id_list). */
	struct mail_msg *done;
	char **done_sha;
	size_t ndone;
	pthread_t th;
	atomic_int quit;
	/* The thread's own state. */
	struct store *s;
	struct gitm_repo *repo;
	char *url;
	int64_t tree_id;
	int64_t failures;
	struct seen *seen;
	size_t nseen;
};

/* The delay before the next poll after `failures` failed ones. */
int64_t watch_i_next_delay(int64_t poll_s, int64_t failures);
int64_t watch_i_now_s(void);
/* One inbox cycle: fetch, read new messages, ingest complete series. */
int64_t watch_i_poll_inbox(
    struct tw *t, const struct dconf *conf, const struct cfg_inbox *in);

#endif
