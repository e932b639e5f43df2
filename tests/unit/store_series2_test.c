/*
 * store/series.c: superseding versions, the upload queue, branch
 * tags and the 3-way note, store/mail_commands.c: the commands by
 * mail on a series' reports, and store/mail_skipped.c: patch mail in no
 * series, on a real SQLite file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/jobs.h"
#include "store/mail_commands.h"
#include "store/mail_skipped.h"
#include "store/series.h"
#include "store/store.h"
#include "tests/unit/test.h"

static int64_t
series(struct store *s, const char *mid, const char *title, const char *author,
    int64_t version)
{
	struct store_series_new n = { "upload", mid, title, author, version, 2,
		2, 100, 0, "master" };
	int64_t id = 0;

	if (store_series_create(s, &id, NULL, &n, 100) != 0)
		return -1;
	return id;
}

TEST(test_store_series2__previous_version)
{
	struct store *s = test_store_open("prev.db");
	int64_t v1, v2, v3, other, w1, w2, prev;
	const char *chain[] = { "nowhere@x", "w1@x" };

	ASSERT(s != NULL);
	v1 = series(s, "v1@x", "memcg: batch", "A <a@x>", 1);
	other = series(s, "o@x", "memcg: batch", "B <b@x>", 1);
	v2 = series(s, "v2@x", "memcg: batch", "A <a@x>", 2);
	v3 = series(s, "v3@x", "memcg: batch", "A <a@x>", 3);
	ASSERT(v1 > 0 && other > 0 && v2 > 0 && v3 > 0);
	/* Same title and author: the newest lower version. */
	ASSERT(store_series_previous(s, &prev, v3, NULL, 0) == 0);
	ASSERT_INTEQ(prev, v2);
	ASSERT(store_series_previous(s, &prev, v2, NULL, 0) == 0);
	ASSERT_INTEQ(prev, v1);
	ASSERT(store_series_previous(s, &prev, v1, NULL, 0) == 0);
	ASSERT_INTEQ(prev, 0);
	/* A retitled v2 is found by the Message-ID chain only. */
	w1 = series(s, "w1@x", "mm: old title", "C <c@x>", 1);
	w2 = series(s, "w2@x", "mm: new title", "C <c@x>", 2);
	ASSERT(store_series_previous(s, &prev, w2, NULL, 0) == 0);
	ASSERT_INTEQ(prev, 0);
	ASSERT(store_series_previous(s, &prev, w2, chain, 2) == 0);
	ASSERT_INTEQ(prev, w1);
	/* Never a higher or equal version through the chain. */
	chain[1] = "w2@x";
	ASSERT(store_series_previous(s, &prev, w1, chain, 2) == 0);
	ASSERT_INTEQ(prev, 0);
	store_close(s);
}

TEST(test_store_series2__meta_in_json)
{
	struct store *s = test_store_open("meta.db");
	int64_t v1, v2;
	struct store_series_row se;

	ASSERT(s != NULL);
	v1 = series(s, "v1@x", "t", "A <a@x>", 1);
	v2 = series(s, "v2@x", "t", "A <a@x>", 2);
	ASSERT(store_series_meta(s, v2, "cgroup/for-7.0-fixes", v1) == 0);
	ASSERT(store_series_fallback(s, v2, "patch 2/2: git am --3way") == 0);
	ASSERT(store_series_get(s, &se, v2) == 0);
	ASSERT_STREQ(se.branch_tag, "cgroup/for-7.0-fixes");
	ASSERT_INTEQ(se.supersedes, v1);
	ASSERT_STREQ(se.fallback, "patch 2/2: git am --3way");
	store_series_release(&se);
	ASSERT(store_series_meta(s, v2, "", 0) == 0);
	ASSERT(store_series_get(s, &se, v2) == 0);
	ASSERT(se.branch_tag == NULL);
	ASSERT(se.supersedes == 0);
	store_series_release(&se);
	store_close(s);
}

TEST(test_store_series2__queue)
{
	struct store *s = test_store_open("queue.db");
	struct store_series_job j;
	int64_t q1, q2, n, id, ids[1];
	struct store_series_row se;
	static const char mb[] = "From x\nSubject: a\0b\n";

	ASSERT(s != NULL);
	ASSERT(store_series_dequeue(s, &j) == ERR_NOTFOUND);
	ASSERT(store_series_enqueue(
	           s, &q1, "mm", "mm-new", mb, sizeof(mb) - 1, 10) == 0);
	ASSERT(store_series_enqueue(s, &q2, "net", "main", "x", 1, 11) == 0);
	ASSERT(q2 > q1);
	ASSERT(store_series_queued(s, &n) == 0);
	ASSERT_INTEQ(n, 2);
	/* Oldest first; the bytes come back whole, NUL included. */
	ASSERT(store_series_dequeue(s, &j) == 0);
	ASSERT_INTEQ(j.id, q1);
	ASSERT_STREQ(j.tree, "mm");
	ASSERT_STREQ(j.branch, "mm-new");
	ASSERT_INTEQ(j.len, sizeof(mb) - 1);
	ASSERT(memcmp(j.mbox, mb, j.len) == 0);
	store_series_job_release(&j);
	ASSERT(store_series_queue_done(s, q1) == 0);
	ASSERT(store_series_dequeue(s, &j) == 0);
	ASSERT_INTEQ(j.id, q2);
	store_series_job_release(&j);
	ASSERT(store_series_queue_done(s, q2) == 0);
	ASSERT(store_series_dequeue(s, &j) == ERR_NOTFOUND);
	/* Marking leaves an applied series alone. */
	id = series(s, "m@x", "t", "A <a@x>", 1);
	ids[0] = id;
	ASSERT(store_series_mark(s, ids, 1, "waiting", 20) == 0);
	ASSERT(store_series_get(s, &se, id) == 0);
	ASSERT_STREQ(se.state, "waiting");
	store_series_release(&se);
	ASSERT(
	    store_series_state(s, id, "applied", NULL, NULL, 0, NULL, 21) == 0);
	ASSERT(store_series_mark(s, ids, 1, "waiting", 22) == 0);
	ASSERT(store_series_get(s, &se, id) == 0);
	ASSERT_STREQ(se.state, "applied");
	store_series_release(&se);
	store_close(s);
}

TEST(test_store_series2__mail_commands)
{
	struct store *s = test_store_open("mailcmd.db");
	struct store_job_new jb = { "base", "{}", "[]", 1, 1, 1, 0 };
	struct store_job_new jc = { "candidate", "{}", "[]", 1, 1, 1, 0 };
	struct store_mail_command_new c = { 0 };
	struct store_mail_commands l;
	int64_t sid, other, p1 = 0, p2 = 0, pairs[2];
	char longer[STORE_MAIL_COMMAND_REASON * 2];

	ASSERT(s != NULL);
	sid = series(s, "c1@x", "memcg: batch", "A <a@x>", 1);
	other = series(s, "c2@x", "memcg: other", "A <a@x>", 1);
	ASSERT(sid > 0 && other > 0);
	ASSERT(
	    store_pair_create(s, &p1, NULL, NULL, "j", "", &jb, &jc, 10) == 0);
	ASSERT(
	    store_pair_create(s, &p2, NULL, NULL, "j", "", &jb, &jc, 10) == 0);
	ASSERT_INTEQ(store_mail_command_known(s, "m1@x"), 0);
	/* A refusal: no pairs; its mail text cut and made valid UTF-8. */
	memset(longer, 'y', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	longer[3] = (char)0xff;
	c.series_id = sid;
	c.commit_sha = "0123456789abcdef0123456789abcdef01234567";
	c.job = "score";
	c.message_id = "m1@x";
	c.sender = "mallory@x";
	c.command = "retest runs=<b>";
	c.line = 3;
	c.reason = longer;
	ASSERT(store_mail_command_put(s, &c, 100) == 0);
	ASSERT_INTEQ(store_mail_command_known(s, "m1@x"), 1);
	/* The same Message-ID and line again: recorded already. */
	ASSERT_INTEQ(store_mail_command_put(s, &c, 101), ERR_EXISTS);
	store_errclear(s);
	/* Done, with the two pairs it made; another series' is not its. */
	pairs[0] = p2;
	pairs[1] = p1;
	c.message_id = "m2@x";
	c.sender = "boss@x";
	c.command = "retest   runs=02";
	c.parsed = "retest runs=2";
	c.line = 1;
	c.done = 1;
	c.reason = "2 pair(s) queued again";
	c.pairs = pairs;
	c.npairs = 2;
	ASSERT(store_mail_command_put(s, &c, 102) == 0);
	c.series_id = other;
	c.message_id = "m3@x";
	c.npairs = 0;
	c.made_series_id = sid;
	ASSERT(store_mail_command_put(s, &c, 103) == 0);
	ASSERT(store_mail_commands_of_series(s, &l, sid, 10) == 0);
	ASSERT_INTEQ(l.n, 2);
	ASSERT_STREQ(l.v[0].sender, "mallory@x");
	ASSERT_STREQ(l.v[0].command, "retest runs=<b>");
	ASSERT(l.v[0].parsed == NULL); /* read as no command */
	ASSERT_STREQ(l.v[0].outcome, "refused");
	ASSERT_INTEQ(l.v[0].line, 3);
	ASSERT_INTEQ(l.v[0].created, 100);
	ASSERT_INTEQ(l.v[0].npairs, 0);
	ASSERT(strlen(l.v[0].reason) <= STORE_MAIL_COMMAND_REASON);
	ASSERT(strncmp(l.v[0].reason, "yyy\xef\xbf\xbdyyy", 9) == 0);
	ASSERT_STREQ(l.v[1].outcome, "done");
	ASSERT_STREQ(l.v[1].command, "retest   runs=02");
	ASSERT_STREQ(l.v[1].parsed, "retest runs=2");
	ASSERT_INTEQ(l.v[1].npairs, 2);
	ASSERT_INTEQ(l.v[1].pairs[0], p1 < p2 ? p1 : p2);
	ASSERT_INTEQ(l.v[1].pairs[1], p1 < p2 ? p2 : p1);
	ASSERT_INTEQ(l.v[1].made_series_id, 0);
	store_mail_commands_release(&l);
	/* The newest max, oldest first. */
	ASSERT(store_mail_commands_of_series(s, &l, sid, 1) == 0);
	ASSERT_INTEQ(l.n, 1);
	ASSERT_STREQ(l.v[0].message_id, "m2@x");
	ASSERT_INTEQ(l.v[0].npairs, 2);
	store_mail_commands_release(&l);
	ASSERT(store_mail_commands_of_series(s, &l, other, 10) == 0);
	ASSERT_INTEQ(l.n, 1);
	ASSERT_INTEQ(l.v[0].made_series_id, sid);
	store_mail_commands_release(&l);
	/* A commit's: those of its reports, whatever their series. */
	ASSERT(store_mail_commands_of_commit(s, &l, c.commit_sha, 10) == 0);
	ASSERT_INTEQ(l.n, 3);
	ASSERT_INTEQ(l.v[1].npairs, 2);
	store_mail_commands_release(&l);
	ASSERT(store_mail_commands_of_commit(s, &l, "ffff", 10) == 0);
	ASSERT_INTEQ(l.n, 0);
	store_mail_commands_release(&l);
	store_close(s);
}

TEST(test_store_series2__mail_skipped)
{
	struct store *s = test_store_open("skipped.db");
	struct store_mail_skipped_list l;
	char longer[STORE_MAIL_SKIPPED_TEXT * 2];

	ASSERT(s != NULL);
	memset(longer, 'z', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	longer[1] = (char)0xfe;
	ASSERT(store_mail_skipped_put(s, "lm", "p2@x", "[PATCH 2/3] a",
	           "it answers <gone@x>, which is not among the mail read",
	           100) == 0);
	ASSERT(store_mail_skipped_put(s, "lm", "q@x", longer, "no diff", 101) ==
	    0);
	/* The same inbox and Message-ID again: one row, the newer why. */
	ASSERT(store_mail_skipped_put(s, "lm", "p2@x", "[PATCH 2/3] a",
	           "a second copy", 102) == 0);
	/* Another inbox's copy of the same mail is its own row. */
	ASSERT(store_mail_skipped_put(s, "other", "p2@x", "x", "y", 103) == 0);
	ASSERT(store_mail_skipped_list(s, &l, 10) == 0);
	ASSERT_INTEQ(l.n, 3);
	ASSERT_STREQ(l.v[0].inbox, "other");
	ASSERT_STREQ(l.v[1].message_id, "q@x");
	ASSERT(strlen(l.v[1].subject) <= STORE_MAIL_SKIPPED_TEXT);
	ASSERT(strncmp(l.v[1].subject, "z\xef\xbf\xbdz", 5) == 0);
	ASSERT_STREQ(l.v[2].reason, "a second copy");
	ASSERT_INTEQ(l.v[2].created, 102);
	store_mail_skipped_release(&l);
	/* Joined a series: gone from its inbox only. */
	ASSERT(store_mail_skipped_drop(s, "lm", "p2@x") == 0);
	ASSERT(store_mail_skipped_drop(s, "lm", "never@x") == 0);
	ASSERT(store_mail_skipped_list(s, &l, 1) == 0);
	ASSERT_INTEQ(l.n, 1);
	ASSERT_STREQ(l.v[0].inbox, "other");
	store_mail_skipped_release(&l);
	ASSERT(store_mail_skipped_list(s, &l, 10) == 0);
	ASSERT_INTEQ(l.n, 2);
	store_mail_skipped_release(&l);
	store_close(s);
}
