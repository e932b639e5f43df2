#ifndef DAEMON_MAIL_H
#define DAEMON_MAIL_H

/*
 * Mailing-list mail: RFC 5322 messages, mboxes and patch series.  Pure:
 * the module reads only the bytes it is handed and does no I/O.
 *
 * Everything in a message is untrusted: every field is copied with a cap
 * (common/caps.h), cut on a UTF-8 boundary; nothing is interpreted
 * beyond what is parsed here.  Header values are unfolded; Subject and
 * From have their RFC 2047 encoded-words (B and Q; utf-8, us-ascii and
 * iso-8859-1/15, windows-1252 as latin-1) decoded to UTF-8, others are
 * left as written.  A body in quoted-printable or base64 is decoded.
 *
 * Errors: 0, -1 or ERR_INVALID / ERR_TOOBIG with the message in e,
 * naming the mbox line where there is one.
 */
#include <stddef.h>

#include "common/err.h"

/* What a subject's [...] tags say. */
struct mail_subject {
	int reply;    /* "Re:" (or "Aw:", "Fwd:"): a reply, never a patch */
	int patch;    /* a PATCH tag is present */
	int rfc;      /* RFC */
	int resend;   /* RESEND */
	int set;      /* PATCHSET: a cover letter without m/n (seq 0, total 0:
	                 the count comes from the patches answering it) */
	int version;  /* vN, 1 when absent */
	int seq;      /* m of m/n; 0 for a cover letter; 1 when absent */
	int total;    /* n of m/n; 1 when absent */
	char *prefix; /* the other words of the tag ("net-next"), or "" */
	/* The branch the patch names: the first word of prefix that has a
	 * lower-case letter ("mm-unstable", "cgroup/for-7.0-fixes",
	 * "net-next", "-next"; not "AUTOSEL" or "4.19"), or "". */
	char *branch;
	char *title; /* the subject without tags and Re: */
};

/* Parses SUBJECT (already decoded).  Never fails; release the strings. */
void mail_subject_parse(struct mail_subject *out, const char *subject);
void mail_subject_release(struct mail_subject *);

struct mail_msg {
	size_t line;       /* first line in the mbox (1-based), 0 if none */
	char *message_id;  /* without <>, "" when missing */
	char *in_reply_to; /* without <>, "" when missing */
	char **refs;       /* References, oldest first, without <> */
	size_t nrefs;
	char *subject; /* decoded, whitespace runs made one space */
	char *from;    /* decoded: "Name <addr>" as written */
	char *from_name, *from_email; /* split; "" when unknown */
	long long date;               /* seconds since the epoch, -1 unknown */
	int tz;                       /* minutes east of UTC */
	struct mail_subject tag;
	char *body; /* decoded body */
	size_t body_len;
	/* The commit message: body before the "---" line (or the diff). */
	char *message;
	/* Offset in body of the diff, or -1: no patch.  The diff starts at
	 * the first "diff --git" line or the first file diff without one
	 * ("--- a/x" "+++ b/x" "@@ -", as quilt and stgit send). */
	long patch_off;
	/* The diff from patch_off as a git diff (a "diff --git" line added
	 * to each file that has none; git apply's -p1 paths), or NULL. */
	char *patch;
	size_t patch_len;
	char base_commit[41]; /* "base-commit:" trailer, or "" */
};

/*
 * Parses one message (headers, blank line, body; LF or CRLF: CR before
 * LF is dropped from the raw message, as git mailsplit does, not from a
 * base64 or quoted-printable body once decoded).  The
 * line number is only used in messages.  0, or ERR_INVALID / ERR_TOOBIG
 * with e set (no header block, a message over CAP_MAIL_MESSAGE).
 */
int mail_parse(struct mail_msg *out, const char *data, size_t len, size_t line,
    struct err *e);
void mail_msg_release(struct mail_msg *); /* NULL ok */

/* A patch: not a reply, has a PATCH tag and a diff. */
int mail_is_patch(const struct mail_msg *);

/* One message of an mbox: its text with ">From " unescaped. */
struct mail_part {
	char *data;
	size_t len;
	size_t line; /* its first line in the mbox (after "From "), 1-based */
};

/*
 * Splits an mbox (mboxrd: "From " lines start messages, ">From "
 * ">>From " lose one '>').  A "From " line is a separator only when it
 * ends in a time and a year, as git mailsplit reads one ("From <sha>
 * Mon Sep 17 00:00:00 2001"): a body line "From the start ..." is not.  A
 * single message without a "From " line is one part.  0 and *out
 * (mail_parts_free), or ERR_INVALID (empty, or text before the first "From "
 * line: the error names line 1), ERR_TOOBIG (more than CAP_MBOX bytes or
 * CAP_MBOX_MESSAGES messages).
 */
int mail_mbox_split(struct mail_part **out, size_t *n, const char *data,
    size_t len, struct err *e);
void mail_parts_free(struct mail_part *, size_t);

/*
 * Parses every message of an mbox: 0 and *out (mail_msgs_free), or the
 * error of the first message that does not parse, naming its line.
 */
int mail_mbox_parse(struct mail_msg **out, size_t *n, const char *data,
    size_t len, struct err *e);
void mail_msgs_free(struct mail_msg *, size_t);

/*
 * A series: its root message (the cover letter 0/n or a "[PATCHSET ...]"
 * cover, else patch 1/n, else a lone [PATCH]) and the patches that are
 * the root or answer it (In-Reply-To or References), by seq.  A
 * PATCHSET's patches ("[PATCH 3/6]") may carry another version and no
 * tag: the count is the first answering patch's, the version and tag
 * the cover's.
 */
struct mail_series {
	size_t root;   /* index of the root message in msgs */
	long cover;    /* index of the cover letter, or -1 */
	long *patches; /* [total]: patches[k] is seq k + 1's index, or -1 */
	int total, version, found;
	int complete;            /* every 1..total is present */
	const char *title;       /* the root's title (borrowed from msgs) */
	const char *author;      /* the root's From */
	const char *message_id;  /* the root's; made up when it has none */
	const char *base_commit; /* first "base-commit:" of the series, or "" */
	const char *branch_tag;  /* the root's tag.branch, else the first
	                            patch's that has one, or "" */
	long long date;
	char idbuf[64];
};

/*
 * Groups the messages into series, in the order their roots appear.
 * A patch joins the series whose root it names in In-Reply-To or
 * References (same version and total).  Mail that names no other
 * message (`git format-patch` without --thread) joins the nearest root
 * before it, unthreaded too, with the same version and total.  A
 * patch that finds no root is an orphan, counted in *out_orphans (may be NULL),
 * unless it answers an earlier version of itself ("[PATCH v2 3/5]" in
 * reply to v1's 3/5, a partial reroll): then it is the root of a series
 * of its version made of it and the other patches (and cover letter) of
 * the series the patch it replaces is in, as b4 assembles one; that
 * series' messages stay in theirs too.
 * A second message with the same seq in a series (a resend) is ignored.  Series
 * with more than CAP_SERIES_PATCHES patches are skipped.  Never fails.
 */
void mail_group(struct mail_series **out, size_t *n, size_t *out_orphans,
    const struct mail_msg *msgs, size_t nmsgs);
/*
 * Why msgs[i], patch mail that is in none of the series mail_group made
 * of msgs (ser, ns), joined none, in out (n bytes): its number outside
 * its count, a second copy of a patch its series has, a series of more
 * than CAP_SERIES_PATCHES patches, the message it answers not read or
 * starting no series of its count and version, or no series before it
 * for mail that names no other; or, for mail tagged as patch m/n (not
 * a cover letter), that it has no diff this parser reads.  "" when it
 * is in a series or is no patch.  Pure.
 */
void mail_orphan_why(char *out, size_t n, const struct mail_msg *msgs,
    size_t nmsgs, const struct mail_series *ser, size_t ns, size_t i);
void mail_series_free(struct mail_series *, size_t);

/* RFC 5322 date to seconds since the epoch: 0 or -1 (*tz minutes). */
int mail_date(long long *out, int *tz, const char *s);

#endif
