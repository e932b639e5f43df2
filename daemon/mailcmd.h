#ifndef DAEMON_MAILCMD_H
#define DAEMON_MAILCMD_H

/*
 * Commands by reply, as syzbot's "#syz": a message in a watched inbox
 * that answers a perfwatch report (its In-Reply-To, or one of its
 * References, is the Message-ID of a report perfwatch mailed,
 * "perfwatch.<sha12>.<job>.h<host>.<n>@...") and has lines that start
 * "#perfwatch " acts on that report's regressions and pairs:
 *
 *   #perfwatch invalid          the regressions: invalid
 *   #perfwatch ignore           the same
 *   #perfwatch expected         acknowledged, note "expected"
 *   #perfwatch fixed-by <sha>   fixed, note "fixed by <sha>"
 *   #perfwatch triage <state>   new, acknowledged, invalid or fixed
 *   #perfwatch retest [runs=N] [hosts=LABEL,...]
 *                               each pair of the report made again,
 *                               with N runs, on hosts with the labels
 *                               (the newest verdict replaces the old)
 *   #perfwatch bisect           a bisection of its first regression
 *   #perfwatch test <git-url> <branch>
 *                               the branch's tip measured against the
 *                               report's base, one pair per pair of
 *                               the report, as syzbot's "#syz test";
 *                               the runner fetches it from the URL
 *                               (https, http, git, or a watched tree's)
 *   #perfwatch test             (alone) the patch inline in the mail
 *                               applied on the report's series base as
 *                               a one-patch series of its own, rooted
 *                               at the mail: measured and reported as
 *                               a posted series (series_ingest_one)
 *
 * through what the dashboard and the admin API call (store_regression_triage,
 * store_pair_create, bisect_begin); each triage note says who sent it.
 * Who may command: the report's authors (the series' sender, and the
 * author of the commit it is of: the patch's for a series), the
 * daemon's `maintainers:`, and anyone when the inbox sets
 * `commands_from_anyone`.
 *
 * Each message is acted on once: its answer, one mail threaded under it
 * (alerts key "command/<Message-ID>"), and a record of each line (who
 * sent it, the line, the command it was read as in canonical form,
 * when, done with the pairs or series it made or refused and why:
 * store/mail_commands.h, shown on the series page)
 * are written in the transaction that does what it asks, and a message
 * answered or recorded before is skipped.
 * The answer quotes each line and says "done: ..." or why not (an
 * unknown command or argument naming its line, a sender not allowed,
 * nothing to retest, a test's branch not on its remote); when a line
 * is refused nothing is done.  A test's branch is listed from its
 * remote before anything is written.  Quoted
 * lines ("> #perfwatch ...") are not commands.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct store;
struct dconf;
struct cfg_inbox;
struct mail_msg;

#define MAILCMD_MAX 8 /* command lines of one message looked at */

struct mailcmd_line {
	size_t line;   /* in the body, 1-based */
	char text[96]; /* the line after "#perfwatch ", cut, cleaned */
};

/* The command lines of a body (at most max): their count.  Pure. */
size_t mailcmd_parse(struct mailcmd_line *out, size_t max, const char *body);

/*
 * A report Message-ID (without <>) to its commit prefix, job and host:
 * 0, or -1 when it is not one perfwatch makes.  Pure.
 */
int mailcmd_report_id(
    char sha[13], char *job, size_t jobn, int64_t *host, const char *msgid);

struct mailcmd_result {
	int handled;  /* 1: a command mail for a report (answered) */
	size_t pairs; /* pairs a retest made */
};

/*
 * Acts on m when it is a command mail (see above) from INBOX.  0 (also
 * when it is none: out->handled 0), or -1 with e set (the store
 * failed; nothing was done, the message may be read again).
 */
int mailcmd_handle(struct mailcmd_result *out, struct store *,
    const struct dconf *, const struct cfg_inbox *inbox,
    const struct mail_msg *m, int64_t now, struct err *e);

#endif
