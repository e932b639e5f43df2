/*
 * perfwatch series parse [--json] [--config DAEMON.yaml --inbox NAME] MBOX:
 * how perfwatch reads a thread, without a daemon.  Each message with
 * the headers and subject tags the grouping uses, each series they
 * form, and why a message or series was or was not picked up.  With
 * --config and --inbox, also the inbox's `subjects` filter and the
 * tree and branch its `tags` map picks (daemon/series_route), exactly
 * as the inbox watcher decides.  The format is in docs/API.md
 * ("perfwatch series parse").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/opt.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "config/config.h"
#include "daemon/mail.h"
#include "daemon/series_route.h"

static int
parse_usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch series parse [--json] [--config DAEMON.yaml "
	    "--inbox NAME] MBOX\n");
	return 2;
}

/* Where message i is in the series: series index and seq (0 cover). */
struct place {
	long series;
	int seq;
};

static json_t *
str_or_null(const char *s)
{
	return s != NULL && s[0] != '\0' ? json_string(s) : json_null();
}

/* RFC 3339 UTC, or "unknown". */
static json_t *
date_json(long long t)
{
	char d[32];
	time_t tt = (time_t)t;
	struct tm tm;

	if (t < 0 || gmtime_r(&tt, &tm) == NULL)
		return json_string("unknown");
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(d);
}

/* The series whose root has this Message-ID, or -1. */
static long
series_of_root(const struct mail_msg *m, const struct mail_series *ser,
    size_t ns, const char *id)
{
	size_t i;

	for (i = 0; id[0] != '\0' && i < ns; i++)
		if (strcmp(m[ser[i].root].message_id, id) == 0)
			return (long)i;
	return -1;
}

/* Why message i is in no series. */
static char *
why_not(const struct mail_msg *m, size_t i, const struct mail_series *ser,
    size_t ns)
{
	const struct mail_msg *x = &m[i];
	size_t k;

	if (x->tag.reply)
		return xstrdup("a reply (Re:), never a patch");
	if (!x->tag.patch)
		return xstrdup("no PATCH tag in the subject");
	if (x->tag.seq == 0)
		return xstrdup("a cover letter that no patch answers");
	if (x->patch_off < 0)
		return xstrdup("a PATCH subject but no diff in the body");
	if (x->tag.total > CAP_SERIES_PATCHES)
		return xasprintf("more than %d patches", CAP_SERIES_PATCHES);
	for (k = 0; k <= x->nrefs; k++) {
		const char *id = k == 0 ? x->in_reply_to : x->refs[k - 1];
		long s = series_of_root(m, ser, ns, id);

		if (s < 0)
			continue;
		if (x->tag.seq <= ser[s].total &&
		    ser[s].patches[x->tag.seq - 1] >= 0)
			return xasprintf("answers series %ld, whose patch "
			                 "%d is already the message at line "
			                 "%zu (a resend; ignored)",
			    s + 1, x->tag.seq,
			    m[ser[s].patches[x->tag.seq - 1]].line);
		return xasprintf("answers series %ld (v%d, %d patches) but "
		                 "says v%d %d/%d",
		    s + 1, ser[s].version, ser[s].total, x->tag.version,
		    x->tag.seq, x->tag.total);
	}
	if (x->in_reply_to[0] == '\0' && x->nrefs == 0)
		return xasprintf("not threaded, and no cover letter or patch "
		                 "1/%d of v%d comes before it",
		    x->tag.total, x->tag.version);
	return xasprintf("an orphan: In-Reply-To/References name no cover "
	                 "letter or patch 1/%d of v%d in this mbox",
	    x->tag.total, x->tag.version);
}

static json_t *
message_json(const struct mail_msg *m, size_t i, const struct place *pl,
    const struct mail_series *ser, size_t ns)
{
	const struct mail_msg *x = &m[i];
	json_t *o, *refs = json_array(), *tags;
	char *why = NULL;
	const char *role;
	size_t k;

	for (k = 0; k < x->nrefs; k++)
		json_array_append_new(refs, json_string(x->refs[k]));
	tags = json_pack("{s:b, s:b, s:b, s:b, s:b, s:i, s:i, s:i, s:o, s:s}",
	    "patch", x->tag.patch, "reply", x->tag.reply, "rfc", x->tag.rfc,
	    "resend", x->tag.resend, "patchset", x->tag.set, "version",
	    x->tag.version, "seq", x->tag.seq, "total", x->tag.total, "branch",
	    str_or_null(x->tag.branch), "other", x->tag.prefix);
	if (pl[i].series >= 0)
		role = pl[i].seq == 0 ? "cover" : "patch";
	else {
		role = "ignored";
		why = why_not(m, i, ser, ns);
	}
	o = json_pack("{s:I, s:o, s:o, s:o, s:s, s:o, s:s, s:o, s:b, s:s, "
	              "s:o, s:o}",
	    "line", (json_int_t)x->line, "message_id",
	    str_or_null(x->message_id), "in_reply_to",
	    str_or_null(x->in_reply_to), "references", refs, "from", x->from,
	    "date", date_json(x->date), "subject", x->subject, "tags", tags,
	    "diff", x->patch_off >= 0, "role", role, "series",
	    pl[i].series >= 0 ? json_integer(pl[i].series + 1) : json_null(),
	    "reason", why ? json_string(why) : json_null());
	free(why);
	return o;
}

static json_t *
series_json(const struct mail_msg *m, const struct mail_series *s, size_t idx,
    const struct daemon_config *dc, const struct cfg_inbox *in)
{
	json_t *o, *patches = json_array(), *missing = json_array();
	json_t *route = json_null();
	char *why;
	int k, picked = s->complete;

	for (k = 0; k < s->total; k++) {
		if (s->patches[k] < 0) {
			json_array_append_new(missing, json_integer(k + 1));
			continue;
		}
		json_array_append_new(patches,
		    json_pack("{s:i, s:I, s:o, s:s}", "seq", k + 1, "line",
		        (json_int_t)m[s->patches[k]].line, "message_id",
		        str_or_null(m[s->patches[k]].message_id), "title",
		        m[s->patches[k]].tag.title));
	}
	if (!s->complete) {
		struct buf b = BUF_INIT(CAP_ERRMSG);

		for (k = 0; k < s->total; k++)
			if (s->patches[k] < 0)
				buf_printf(
				    &b, "%s%d", b.len ? ", " : "", k + 1);
		why = xasprintf("incomplete: %d of %d patches, missing %s (an "
		                "inbox waits for them; an upload records the "
		                "series as incomplete)",
		    s->found, s->total, b.data);
		buf_release(&b);
	} else {
		why = xasprintf("complete: applied on %s",
		    s->base_commit[0]
		        ? "its base-commit when the tree has it, else the "
		          "branch tip"
		        : "the branch tip");
	}
	if (in != NULL) {
		struct series_route rt;

		series_route(&rt, dc, in, m, s);
		route = json_pack("{s:o, s:o, s:o}", "tree",
		    str_or_null(rt.tree ? rt.tree->name : NULL), "branch",
		    str_or_null(rt.branch), "tag", str_or_null(rt.tag));
		if (picked && !series_wanted(in, m, s)) {
			free(why);
			why = xasprintf("no subject contains one of inbox "
			                "%s's subjects keywords",
			    in->name);
			picked = 0;
		} else if (picked && (rt.tree == NULL || rt.branch == NULL)) {
			free(why);
			why = xstrdup("no tree or branch to apply it on");
			picked = 0;
		} else if (picked) {
			char *w = xasprintf("%s; tree %s, branch %s (%s)", why,
			    rt.tree->name, rt.branch,
			    rt.tag ? "from the subject tag"
			           : "the inbox's default");

			free(why);
			why = w;
		}
	}
	o = json_pack("{s:I, s:s, s:i, s:s, s:s, s:i, s:i, s:b, s:o, s:o, "
	              "s:o, s:o, s:o, s:b, s:s, s:o}",
	    "series", (json_int_t)idx + 1, "title", s->title, "version",
	    s->version, "author", s->author, "message_id", s->message_id,
	    "total", s->total, "found", s->found, "complete", s->complete,
	    "missing", missing, "patches", patches, "cover",
	    s->cover >= 0
	        ? json_pack("{s:I, s:o}", "line", (json_int_t)m[s->cover].line,
	              "message_id", str_or_null(m[s->cover].message_id))
	        : json_null(),
	    "base_commit", str_or_null(s->base_commit), "branch_tag",
	    str_or_null(s->branch_tag), "picked", picked, "reason", why,
	    "route", route);
	free(why);
	return o;
}

/* A JSON string field for text output, control characters made '?'. */
static void
put(struct buf *b, json_t *o, const char *key, size_t max)
{
	json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		cli_put_clean(b, json_string_value(v), max);
	else if (json_is_integer(v))
		buf_printf(b, "%lld", (long long)json_integer_value(v));
	else
		buf_puts(b, "-");
}

static void
print_text(json_t *root)
{
	struct buf b = BUF_INIT(CAP_LINE);
	json_t *o, *t;
	size_t i;

	json_array_foreach(json_object_get(root, "messages"), i, o)
	{
		t = json_object_get(o, "tags");
		buf_reset(&b);
		buf_puts(&b, "message at line ");
		put(&b, o, "line", 20);
		buf_puts(&b, ": ");
		put(&b, o, "message_id", 200);
		buf_puts(&b, "\n  subject: ");
		put(&b, o, "subject", 200);
		buf_puts(&b, "\n  from: ");
		put(&b, o, "from", 200);
		buf_puts(&b, "; date: ");
		put(&b, o, "date", 40);
		buf_puts(&b, "; in-reply-to: ");
		put(&b, o, "in_reply_to", 200);
		buf_printf(&b, "\n  tags: %s%s%sv%lld %lld/%lld, branch ",
		    json_is_true(json_object_get(t, "patch")) ? ""
		                                              : "no PATCH, ",
		    json_is_true(json_object_get(t, "rfc")) ? "RFC, " : "",
		    json_is_true(json_object_get(t, "patchset")) ? "PATCHSET, "
		                                                 : "",
		    (long long)json_integer_value(
		        json_object_get(t, "version")),
		    (long long)json_integer_value(json_object_get(t, "seq")),
		    (long long)json_integer_value(json_object_get(t, "total")));
		put(&b, t, "branch", 100);
		buf_puts(&b, "\n  ");
		if (json_is_null(json_object_get(o, "series"))) {
			buf_puts(&b, "ignored: ");
			put(&b, o, "reason", 300);
		} else {
			put(&b, o, "role", 10);
			buf_puts(&b, " of series ");
			put(&b, o, "series", 20);
		}
		printf("%s\n", b.data);
	}
	json_array_foreach(json_object_get(root, "series"), i, o)
	{
		buf_reset(&b);
		buf_puts(&b, "series ");
		put(&b, o, "series", 20);
		buf_puts(&b, ": \"");
		put(&b, o, "title", 200);
		buf_puts(&b, "\" v");
		put(&b, o, "version", 20);
		buf_puts(&b, " by ");
		put(&b, o, "author", 200);
		buf_puts(&b, ", ");
		put(&b, o, "found", 20);
		buf_puts(&b, "/");
		put(&b, o, "total", 20);
		buf_puts(&b, " patches\n  root: ");
		put(&b, o, "message_id", 200);
		buf_printf(&b, " (%s)\n  base-commit: ",
		    json_is_null(json_object_get(o, "cover"))
		        ? "no cover letter"
		        : "cover letter");
		put(&b, o, "base_commit", 64);
		buf_puts(&b, "; branch tag: ");
		put(&b, o, "branch_tag", 100);
		buf_printf(&b, "\n  %s: ",
		    json_is_true(json_object_get(o, "picked"))
		        ? "picked up"
		        : "not picked up");
		put(&b, o, "reason", 400);
		printf("%s\n", b.data);
	}
	o = json_object_get(root, "summary");
#define N(k) ((long long)json_integer_value(json_object_get(o, k)))
	printf("summary: %lld messages, %lld patch mails, %lld series (%lld "
	       "complete, %lld picked up), %lld patch mails in a series, "
	       "%lld orphans\n",
	    N("messages"), N("patches"), N("series"), N("complete"),
	    N("picked"), N("in_series"), N("orphans"));
#undef N
	buf_release(&b);
}

int
cmd_series_parse(int argc, char **argv)
{
	const char *file = NULL, *cfile = NULL, *iname = NULL;
	struct buf mbox = BUF_INIT(CAP_MBOX);
	struct daemon_config *dc = NULL;
	const struct cfg_inbox *in = NULL;
	struct mail_msg *m = NULL;
	struct mail_series *ser = NULL;
	struct place *pl = NULL;
	struct err e = { 0 };
	json_t *root, *msgs, *sers;
	size_t n = 0, ns = 0, orphans = 0, i, patches = 0, inser = 0;
	size_t complete = 0, picked = 0;
	int json = 0, rc = 2, k, npos;
	const struct opt_spec spec[] = { OPT_VAL("config", &cfile),
		OPT_VAL("inbox", &iname), OPT_FLAG("json", &json), OPT_END };

	if (opt_parse("series parse", argc - 1, argv + 1, spec, &file, 1,
	        &npos) != 0) {
		rc = parse_usage();
		goto out;
	}
	if (file == NULL || (cfile == NULL) != (iname == NULL)) {
		rc = parse_usage();
		goto out;
	}
	rc = 1;
	if (cfile != NULL) {
		struct cfg_errors errs = { 0 };

		if (config_load_daemon(&dc, cfile, &errs) != 0) {
			for (i = 0; i < errs.n; i++)
				fprintf(stderr, "%s\n", errs.msg[i]);
			cfg_errors_free(&errs);
			goto out;
		}
		cfg_errors_free(&errs);
		for (i = 0; i < dc->ninboxes; i++)
			if (strcmp(dc->inboxes[i].name, iname) == 0)
				in = &dc->inboxes[i];
		if (in == NULL) {
			fprintf(stderr,
			    "perfwatch series parse: %s: no inbox named "
			    "'%s'\n",
			    cfile, iname);
			goto out;
		}
	}
	if (cli_read_file(&mbox, file) != 0)
		goto out;
	if (mail_mbox_parse(&m, &n, mbox.data, mbox.len, &e) != 0) {
		fprintf(stderr, "perfwatch series parse: %s: %s\n", file,
		    err_msg(&e));
		goto out;
	}
	mail_group(&ser, &ns, &orphans, m, n);
	pl = xcalloc(n ? n : 1, sizeof(*pl));
	for (i = 0; i < n; i++)
		pl[i].series = -1;
	/* A message is listed in the first series it is in: a partial
	 * reroll's series borrows the earlier version's other patches. */
	for (i = 0; i < ns; i++) {
		if (ser[i].cover >= 0 && pl[ser[i].cover].series < 0) {
			pl[ser[i].cover].series = (long)i;
			pl[ser[i].cover].seq = 0;
		}
		for (k = 0; k < ser[i].total; k++)
			if (ser[i].patches[k] >= 0 &&
			    pl[ser[i].patches[k]].series < 0) {
				pl[ser[i].patches[k]].series = (long)i;
				pl[ser[i].patches[k]].seq = k + 1;
				inser++;
			}
	}
	msgs = json_array();
	sers = json_array();
	for (i = 0; i < n; i++) {
		patches += (size_t)mail_is_patch(&m[i]);
		json_array_append_new(msgs, message_json(m, i, pl, ser, ns));
	}
	for (i = 0; i < ns; i++) {
		json_t *o = series_json(m, &ser[i], i, dc, in);

		complete += (size_t)ser[i].complete;
		picked += (size_t)json_is_true(json_object_get(o, "picked"));
		json_array_append_new(sers, o);
	}
	root = json_pack("{s:o, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
	    "messages", msgs, "series", sers, "summary", "messages",
	    (json_int_t)n, "patches", (json_int_t)patches, "series",
	    (json_int_t)ns, "complete", (json_int_t)complete, "picked",
	    (json_int_t)picked, "in_series", (json_int_t)inser, "orphans",
	    (json_int_t)orphans);
	if (json)
		pwjson_print(root, stdout);
	else
		print_text(root);
	json_decref(root);
	rc = 0;
out:
	free(pl);
	mail_series_free(ser, ns);
	mail_msgs_free(m, n);
	buf_release(&mbox);
	daemon_config_free(dc);
	return rc;
}
