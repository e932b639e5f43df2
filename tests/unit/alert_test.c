/*
 * daemon/alert*.c without a server: what a report says (changed metrics,
 * signature, headline), the mail's headers under hostile subjects and
 * names (read back with daemon/mail.c's parser), threading under a
 * series, recipients, and the webhook body.  Delivery against real
 * servers is tests/e2e/t0800 and t0801.
 */
#include <math.h>
#include <string.h>

#include "common/json.h"
#include "common/xalloc.h"
#include "daemon/alert.h"
#include "daemon/mail.h"
#include "store/runs.h"
#include "test.h"

static void
cmp_set(struct store_alert_cmp *c, const char *point, const char *metric,
    const char *verdict, double change)
{
	memset(c, 0, sizeof(*c));
	c->point = xstrdup(point);
	c->metric = xstrdup(metric);
	c->verdict = xstrdup(verdict);
	c->unit = xstrdup("");
	c->better = xstrdup("higher");
	c->base_median = 100;
	c->cand_median = 100 * (1 + change / 100);
	c->change_pct = change;
	c->ci_low = change - 1;
	c->ci_high = change + 1;
	c->base_mean = c->base_median;
	c->base_sd = 2;
	c->cand_mean = c->cand_median;
	c->cand_sd = 1;
	c->n_base = c->n_cand = 5;
}

/* A report of fio on host h1: read_iops and read_bw dropping together
 * (one finding), an unchanged metric and an improvement elsewhere. */
static struct store_alert_info *
info_new(const char *subject, const char *author)
{
	struct store_alert_info *x = xcalloc(1, sizeof(*x));

	x->commit_id = 7;
	x->host_id = 2;
	x->job = xstrdup("fio-memcg");
	x->sha = xstrdup("0123456789abcdef0123456789abcdef01234567");
	x->subject = xstrdup(subject);
	x->author = xstrdup(author);
	x->tree = xstrdup("mm");
	x->branch = xstrdup("mm-new");
	x->base_sha = xstrdup("fedcba9876543210fedcba9876543210fedcba98");
	x->host = xstrdup("epyc-1");
	x->inventory = xstrdup("{\"cpu_model\": \"AMD EPYC 7742\", "
	                       "\"sockets\": 2, \"cores\": 128, \"threads\": "
	                       "256, \"memory_bytes\": 1099511627776, "
	                       "\"kernel\": \"6.12.0\"}");
	x->spec = xstrdup("{\"command\": [\"fio\", \"--output-format=json\"],"
	                  " \"cgroup\": {\"path\": \"/bench\", \"memory_max\":"
	                  " 1073741824}, \"params\": {\"bs\": \"4k\"}, "
	                  "\"runs\": 5, \"boot\": \"none\"}");
	x->ncmp = 4;
	x->cmp = xcalloc(4, sizeof(*x->cmp));
	cmp_set(&x->cmp[0], "bs=4k", "read_iops", "regression", -4.2);
	cmp_set(&x->cmp[1], "bs=4k", "read_bw", "regression", -4.5);
	cmp_set(&x->cmp[2], "bs=4k", "clat_p99", "unchanged", 0.3);
	cmp_set(&x->cmp[3], "bs=64k", "read_bw", "improvement", 2.0);
	return x;
}

static void
with_series(struct store_alert_info *x)
{
	x->series_id = 3;
	x->version = 2;
	x->total = 3;
	x->series_title = xstrdup("memcg: batch the sock stat update");
	x->series_author = xstrdup("Pat Sender <pat@example.org>");
	x->inbox = xstrdup("linux-mm");
	x->series_msgid = xstrdup("cover.1@example.org"); /* as stored */
	x->npatch_msgids = 3;
	x->patch_msgids = xcalloc(3, sizeof(char *));
	x->patch_msgids[0] = xstrdup("p1@example.org");
	x->patch_msgids[1] = xstrdup("p2@example.org");
	x->patch_msgids[2] = xstrdup("p3@example.org");
}

TEST(test_alert__report_groups_changed_metrics)
{
	struct store_alert_info *x = info_new("mm: x", "A <a@example.org>");
	struct alert_report r;

	alert_report_init(&r, x, NULL, 0);
	ASSERT_INTEQ(r.nchg, 3);
	/* The worst verdict with the largest change heads the report. */
	ASSERT_STREQ(x->cmp[r.head].metric, "read_bw");
	ASSERT_STREQ(x->cmp[r.head].point, "bs=4k");
	ASSERT_STREQ(alert_report_event(&r), "regression");
	ASSERT_STREQ(r.signature,
	    "bs=4k|read_bw|regression\n"
	    "bs=4k|read_iops|regression\n"
	    "bs=64k|read_bw|improvement\n");
	alert_report_release(&r);

	/* A suspect comparison makes no regression alert. */
	x->cmp[0].suspect = x->cmp[1].suspect = 1;
	alert_report_init(&r, x, NULL, 0);
	ASSERT_INTEQ(r.nchg, 1);
	ASSERT_STREQ(alert_report_event(&r), "improvement");
	alert_report_release(&r);
	store_alert_info_release(x);
}

TEST(test_alert__addr)
{
	char a[256];

	ASSERT_INTEQ(alert_mail_addr(a, sizeof(a), "Ann <ann@example.org>"), 0);
	ASSERT_STREQ(a, "ann@example.org");
	ASSERT_INTEQ(alert_mail_addr(a, sizeof(a), " b@example.org "), 0);
	ASSERT_STREQ(a, "b@example.org");
	ASSERT_INTEQ(
	    alert_mail_addr(a, sizeof(a), "x <a@b\r\nRCPT TO:<c@d>"), -1);
	ASSERT_INTEQ(alert_mail_addr(a, sizeof(a), "<a b@example.org>"), -1);
	ASSERT_INTEQ(alert_mail_addr(a, sizeof(a), "<a@b@c>"), -1);
	ASSERT_INTEQ(alert_mail_addr(a, sizeof(a), "no address"), -1);
	ASSERT_INTEQ(alert_mail_addr(a, sizeof(a), "<>"), -1);
}

TEST(test_alert__header_hostile)
{
	struct buf b = BUF_INIT(1 << 16);
	size_t i;

	alert_mail_header(
	    &b, "Subject", "x\r\nBcc: evil@example.com\r\n\r\nbody", 0);
	/* One header: the CR LF became spaces, nothing starts a line. */
	ASSERT(strstr(b.data, "\r\nBcc") == NULL);
	ASSERT(strstr(b.data, "\nBcc") == NULL);
	ASSERT(strncmp(b.data, "Subject: x  Bcc: evil@example.com", 33) == 0);
	buf_reset(&b);
	alert_mail_header(
	    &b, "To", "\"Ev\r\nil\" <a@example.org>, Zoë <z@example.org>", 1);
	ASSERT(strstr(b.data, "\r\nil") == NULL);
	ASSERT(strstr(b.data, "=?UTF-8?B?") != NULL);
	for (i = 0; i < b.len; i++)
		ASSERT((unsigned char)b.data[i] < 0x80);
	buf_release(&b);
}

/* Invalid UTF-8 from a commit subject: a run of continuation bytes once
 * left encode_words no character to cut at, and it never returned; now
 * each invalid byte goes out as U+FFFD, in words of at most 75
 * characters, read back by the project's mail parser. */
TEST(test_alert__header_invalid_utf8)
{
	static const char tail[] = " fix \xff\xc3 Zo\xc3\xab "
	                           "\xf0\x9f\x90\xa7\xf0\x9f\x90\xa7";
	struct buf b = BUF_INIT(1 << 16);
	struct mail_msg m;
	struct err e = { 0 };
	const char *p, *w;
	char subj[256];
	size_t i, nrep = 0;

	/* A run longer than a word (45 bytes) that a word starts inside. */
	strcpy(subj, "mm: ");
	memset(subj + 4, 0x80, 100);
	strcpy(subj + 104, tail);
	alert_mail_header(&b, "Subject", subj, 0);
	for (i = 0; i < b.len; i++)
		ASSERT((unsigned char)b.data[i] < 0x80);
	for (p = b.data; (w = strstr(p, "=?UTF-8?B?")) != NULL; p = w + 2) {
		const char *end = strstr(w + 10, "?=");

		ASSERT(end != NULL);
		ASSERT(end + 2 - w <= 75);
	}
	buf_puts(&b, "From: a@example.org\r\n\r\nbody\r\n");
	memset(&m, 0, sizeof(m));
	ASSERT_INTEQ(mail_parse(&m, b.data, b.len, 1, &e), 0);
	ASSERT(m.subject != NULL);
	for (p = m.subject; (p = strstr(p, "\xef\xbf\xbd")) != NULL; p += 3)
		nrep++;
	/* 100 continuation bytes, 0xff and the lone 0xc3. */
	ASSERT_INTEQ(nrep, 102);
	ASSERT(strstr(m.subject, " fix ") != NULL);
	ASSERT(strstr(m.subject, "Zo\xc3\xab") != NULL);
	ASSERT(strstr(m.subject, "\xf0\x9f\x90\xa7\xf0\x9f\x90\xa7") != NULL);
	mail_msg_release(&m);
	buf_release(&b);
}

/* The message read back by the project's mail parser (RFC 2047 and
 * quoted-printable decoding of its own). */
TEST(test_alert__mail_series_thread_and_encoding)
{
	static const char hostile[] =
	    "memcg: fix\r\nBcc: evil@example.com — ünïcode \"quoted\" =?x?=";
	struct store_alert_info *x = info_new(
	    hostile, "Zoë Ünïcode, Bcc: evil@example.com <zoe@example.org>");
	struct daemon_config dc;
	struct alert_report r;
	struct alert_rcpt rc;
	struct alert_mail_in in;
	struct buf out = BUF_INIT(ALERT_MAIL_MAX);
	struct mail_msg m;
	struct err e = { 0 };
	char *subject, *to[] = { "linux-mm@kvack.org" };
	struct cfg_alert_list lists[1];
	char *cc[] = { "Cgroups <cgroups@vger.kernel.org>" };
	size_t i;
	const char *hdr_end;

	with_series(x);
	memset(&dc, 0, sizeof(dc));
	dc.alerts.from = "perfwatch <perfwatch@example.org>";
	dc.alerts.to.v = to;
	dc.alerts.to.n = 1;
	dc.alerts.mail_author = 1;
	dc.alerts.reply_to_series = 1;
	memset(lists, 0, sizeof(lists));
	lists[0].inbox = "linux-mm";
	lists[0].cc.v = cc;
	lists[0].cc.n = 1;
	dc.alerts.lists = lists;
	dc.alerts.nlists = 1;
	alert_report_init(&r, x, "https://perf.example.org", 1764547200);
	subject = alert_mail_subject(&r, 1);
	ASSERT_STREQ(subject,
	    "Re: [PATCH v2 0/3] memcg: batch the sock stat update: "
	    "fio-memcg.read_bw -4.5% regression");
	alert_rcpt_make(&rc, &dc, x);
	/* The series' author, the configured To, the inbox's Cc list. */
	ASSERT_INTEQ(rc.nenv, 3);
	ASSERT_STREQ(rc.env[0], "pat@example.org");
	ASSERT_STREQ(rc.env[1], "linux-mm@kvack.org");
	ASSERT_STREQ(rc.env[2], "cgroups@vger.kernel.org");
	/* A series of an inbox no list entry names (an upload, another
	 * list): its From: is mailed nothing, the rest is the same. */
	{
		struct alert_rcpt un;

		lists[0].inbox = "other-list";
		alert_rcpt_make(&un, &dc, x);
		ASSERT_INTEQ(un.nenv, 1);
		ASSERT_STREQ(un.env[0], "linux-mm@kvack.org");
		alert_rcpt_release(&un);
		lists[0].inbox = "linux-mm";
	}
	memset(&in, 0, sizeof(in));
	in.r = &r;
	in.from = dc.alerts.from;
	in.subject = subject;
	in.message_id = "<perfwatch.1@example.org>";
	r.archive = "https://lore.kernel.org/linux-mm";
	r.message_id = in.message_id;
	in.in_reply_to = "<cover.1@example.org>";
	in.references = "<cover.1@example.org>";
	in.rcpt = &rc;
	ASSERT_INTEQ(alert_mail_build(&out, &in), 0);
	hdr_end = strstr(out.data, "\r\n\r\n");
	ASSERT(hdr_end != NULL);
	for (i = 0; out.data + i < hdr_end; i++)
		ASSERT((unsigned char)out.data[i] < 0x80);
	ASSERT(strstr(out.data, "\r\nIn-Reply-To: <cover.1@example.org>\r\n"));
	ASSERT(strstr(out.data, "\r\nReferences: <cover.1@example.org>\r\n"));
	ASSERT(
	    strstr(out.data, "\r\nDate: ") || !strncmp(out.data, "Date: ", 6));
	ASSERT(strstr(out.data, "Mon, 01 Dec 2025 00:00:00 +0000") != NULL);
	ASSERT_INTEQ(mail_parse(&m, out.data, out.len, 1, &e), 0);
	ASSERT_STREQ(m.subject, subject);
	ASSERT_STREQ(m.in_reply_to, "cover.1@example.org");
	ASSERT_STREQ(m.message_id, "perfwatch.1@example.org");
	ASSERT_STREQ(m.from_email, "perfwatch@example.org");
	/* The hostile commit subject is in the body, on one line. */
	ASSERT(strstr(m.body, "memcg: fix  Bcc: evil@example.com — ünïcode") !=
	    NULL);
	/* Closes: the report on the list's archive; Link: its page. */
	ASSERT(strstr(m.body,
	           "| Closes: https://lore.kernel.org/linux-mm/"
	           "perfwatch.1@example.org/\n") != NULL);
	ASSERT(strstr(m.body,
	           "| Link: https://perf.example.org/commit/"
	           "0123456789abcdef0123456789abcdef01234567") != NULL);
	ASSERT(strstr(m.body, "read_iops") != NULL);
	ASSERT(strstr(m.body, "-4.5%") != NULL);
	ASSERT(strstr(m.body, "AMD EPYC 7742") != NULL);
	ASSERT(strstr(m.body, "2 sockets, 128 cores, 256 threads") != NULL);
	ASSERT(strstr(m.body, "cgroup: /bench, memory.max 1073741824") != NULL);
	ASSERT(strstr(m.body, "clat_p99") == NULL); /* unchanged: left out */
	mail_msg_release(&m);
	free(subject);
	buf_release(&out);
	alert_rcpt_release(&rc);
	alert_report_release(&r);
	store_alert_info_release(x);
}

TEST(test_alert__test_mode_and_quiet)
{
	struct store_alert_info *x = info_new("mm: x", "A <a@example.org>");
	struct daemon_config dc;
	struct alert_rcpt rc;
	struct cfg_alert_list l;
	char *to[] = { "list@example.org" };

	memset(&dc, 0, sizeof(dc));
	dc.alerts.to.v = to;
	dc.alerts.to.n = 1;
	dc.alerts.mail_author = 1;
	dc.alerts.test_to = "me@example.org";
	alert_rcpt_make(&rc, &dc, x);
	ASSERT_INTEQ(rc.nenv, 1);
	ASSERT_STREQ(rc.env[0], "me@example.org");
	ASSERT_STREQ(rc.test_note, "a@example.org, list@example.org");
	ASSERT_INTEQ(rc.quiet, 0);
	alert_rcpt_release(&rc);
	memset(&l, 0, sizeof(l));
	l.tree = "mm";
	l.quiet = 1;
	dc.alerts.lists = &l;
	dc.alerts.nlists = 1;
	alert_rcpt_make(&rc, &dc, x);
	ASSERT_INTEQ(rc.quiet, 1);
	alert_rcpt_release(&rc);
	store_alert_info_release(x);
}

/* The signature covers the timestamp: the same body at another time
 * signs differently, so an old POST cannot be replayed as a new one.
 * Expected values from Python's hmac (docs/ALERTS.md's receiver). */
TEST(test_alert__hook_sign_timestamp)
{
	char a[65], b[65];

	ASSERT_INTEQ(alert_hook_sign(a, "k3y", 1700000000, "{\"a\":1}", 7), 0);
	ASSERT_STREQ(a,
	    "fd5a70e965043f7df6309c2c3b5ff5a8ffa99b1f5175e9a311459e73c4634d4a");
	ASSERT_INTEQ(alert_hook_sign(b, "k3y", 1700000001, "{\"a\":1}", 7), 0);
	ASSERT(strcmp(a, b) != 0);
}

TEST(test_alert__hook_body)
{
	struct store_alert_info *x = info_new("mm: <x>", "A <a@example.org>");
	struct alert_report r;
	json_t *o, *m;
	char *s;

	alert_report_init(&r, x, "https://perf.example.org", 0);
	s = alert_hook_body(&r, "c7/fio-memcg/h2#1/hook0", 1, "the subject");
	o = pwjson_parse(s, strlen(s), NULL);
	ASSERT(o != NULL);
	ASSERT_STREQ(json_string_value(json_object_get(o, "event")), "report");
	ASSERT_STREQ(
	    json_string_value(json_object_get(o, "verdict")), "regression");
	ASSERT_STREQ(
	    json_string_value(json_object_get(o, "benchmark")), "fio-memcg");
	ASSERT_STREQ(json_string_value(json_object_get(o, "host")), "epyc-1");
	ASSERT_STREQ(json_string_value(json_object_get(
	                 json_object_get(o, "commit"), "subject")),
	    "mm: <x>");
	ASSERT_INTEQ(json_array_size(json_object_get(o, "metrics")), 3);
	m = json_array_get(json_object_get(o, "metrics"), 0);
	ASSERT_STREQ(
	    json_string_value(json_object_get(m, "metric")), "read_iops");
	ASSERT(fabs(json_real_value(json_object_get(m, "change_pct")) + 4.2) <
	    1e-9);
	ASSERT_STREQ(json_string_value(json_object_get(o, "text")),
	    "the subject\nhttps://perf.example.org/commit/"
	    "0123456789abcdef0123456789abcdef01234567");
	ASSERT(json_is_null(json_object_get(o, "series")));
	json_decref(o);
	free(s);
	alert_report_release(&r);
	store_alert_info_release(x);
}

/* A report with a suspect pair (docs/HOST.md) says so, wrapped to 78
 * columns in the mail and as "suspect" in the webhook; without one the
 * webhook's field is null and the mail has no such line. */
TEST(test_alert__suspect_host_state)
{
	struct store_alert_info *x = info_new("mm: x", "A <a@example.org>");
	struct alert_report r;
	struct alert_mail_in in;
	struct alert_rcpt rc;
	struct buf out = BUF_INIT(ALERT_MAIL_MAX);
	char *to[] = { "a@example.org" }, *s, *line, *save = NULL;
	json_t *o;

	memset(&rc, 0, sizeof(rc));
	rc.to = rc.env = to;
	rc.nto = rc.nenv = 1;
	x->suspect = xstrdup(
	    "turbo: base off, candidate on; governor: base performance, "
	    "candidate mixed: performance,powersave; thp: base never, "
	    "candidate always\r\nBcc: x@example.com");
	alert_report_init(&r, x, NULL, 0);
	memset(&in, 0, sizeof(in));
	in.r = &r;
	in.from = "perfwatch <p@example.org>";
	in.subject = "s";
	in.message_id = "<m@example.org>";
	in.rcpt = &rc;
	ASSERT_INTEQ(alert_mail_build(&out, &in), 0);
	ASSERT(strstr(out.data, "host state: SUSPECT") != NULL);
	ASSERT(strstr(out.data, "turbo: base off, candidate on;") != NULL);
	ASSERT(strstr(out.data, "\r\nBcc:") == NULL);
	for (line = strtok_r(strstr(out.data, "\r\n\r\n"), "\r\n", &save);
	     line != NULL; line = strtok_r(NULL, "\r\n", &save))
		ASSERT_MSG(strlen(line) <= 78 || strstr(line, "://") != NULL,
		    "long line: %s", line);
	s = alert_hook_body(&r, "k#1/hook0", 0, "s");
	o = pwjson_parse(s, strlen(s), NULL);
	ASSERT(o != NULL);
	ASSERT(strncmp(json_string_value(json_object_get(o, "suspect")),
	           "turbo: base off", 15) == 0);
	json_decref(o);
	free(s);
	alert_report_release(&r);
	buf_release(&out);

	free(x->suspect);
	x->suspect = NULL;
	alert_report_init(&r, x, NULL, 0);
	ASSERT_INTEQ(alert_mail_build(&out, &in), 0);
	ASSERT(strstr(out.data, "SUSPECT") == NULL);
	s = alert_hook_body(&r, "k#1/hook0", 0, "s");
	o = pwjson_parse(s, strlen(s), NULL);
	ASSERT(json_is_null(json_object_get(o, "suspect")));
	json_decref(o);
	free(s);
	alert_report_release(&r);
	buf_release(&out);
	store_alert_info_release(x);
}

/* The charge path in a report (docs/MEMCG.md): the judged share of the
 * headline's point and the symbols of both sides next to each other, in
 * the mail and the webhook; "not measured" only without any profile. */
TEST(test_alert__charge_path)
{
	struct store_alert_info *x = info_new("mm: x", "A <a@example.org>");
	struct alert_report r;
	struct buf b = BUF_INIT(1 << 16);
	char *s;
	json_t *o, *c;

	alert_report_init(&r, x, NULL, 0);
	alert_mail_body(&b, &r);
	ASSERT(strstr(b.data, "charge-path share: not measured") != NULL);
	s = alert_hook_body(&r, "k#1/hook0", 0, "s");
	o = pwjson_parse(s, strlen(s), NULL);
	ASSERT(json_is_null(json_object_get(o, "charge_path")));
	json_decref(o);
	free(s);
	alert_report_release(&r);
	buf_release(&b);

	x->cmp = xreallocarray(x->cmp, x->ncmp + 1, sizeof(*x->cmp));
	cmp_set(&x->cmp[x->ncmp++], "bs=4k", "memcg.charge_path_share_pct",
	    "regression", 200.0);
	x->cmp[x->ncmp - 1].base_median = 10;
	x->cmp[x->ncmp - 1].cand_median = 30;
	alert_report_init(&r, x, NULL, 0);
	r.charge[0].symbol = "try_charge_memcg";
	r.charge[0].base_pct = 6;
	r.charge[0].cand_pct = 21.5;
	r.charge[1].symbol = "page_counter_try_charge\r\nBcc: x";
	r.charge[1].base_pct = 4;
	r.charge[1].cand_pct = 8.5;
	r.ncharge = 2;
	r.charge_runs[0] = r.charge_runs[1] = 5;
	alert_mail_body(&b, &r);
	ASSERT_MSG(strstr(b.data,
	               "base 10.00%, candidate 30.00%, +200.0%, "
	               "regression") != NULL,
	    "%s", b.data);
	ASSERT(
	    strstr(b.data, "mean share over 5 base and 5 candidate") != NULL);
	ASSERT(strstr(b.data, "try_charge_memcg") != NULL);
	ASSERT(strstr(b.data, "+15.50") != NULL);
	ASSERT(strstr(b.data, "\nBcc") == NULL);
	ASSERT(strstr(b.data, "not measured (no perf") == NULL);
	s = alert_hook_body(&r, "k#1/hook0", 0, "s");
	o = pwjson_parse(s, strlen(s), NULL);
	c = json_object_get(o, "charge_path");
	ASSERT_INTEQ(json_integer_value(json_object_get(c, "base_runs")), 5);
	ASSERT_STREQ(
	    json_string_value(json_object_get(
	        json_array_get(json_object_get(c, "symbols"), 0), "symbol")),
	    "try_charge_memcg");
	json_decref(o);
	free(s);
	r.ncharge = 0; /* the symbols are the test's, not a keep's */
	alert_report_release(&r);
	buf_release(&b);
	store_alert_info_release(x);
}

/* Runs as store_pair_run_meta_list gives them: one measured run per side with
 * the kernel facts the runner uploads (NULL: an older runner, none). */
static struct store_run_metas
kernel_rows(const char *base_id, const char *cand_id)
{
	struct store_run_metas rows = { xcalloc(2, sizeof(*rows.v)), 2 };
	const char *ids[2] = { base_id, cand_id };
	int i;

	for (i = 0; i < 2; i++) {
		rows.v[i].role = xstrdup(i == 0 ? "base" : "candidate");
		rows.v[i].measured = 1;
		rows.v[i].host_state_json = ids[i] == NULL
		    ? NULL
		    : xasprintf(
		          "{\"thp\": \"never\", \"kernel_build\": "
		          "{\"build_id\": \"%s\", \"release\": "
		          "\"6.1.158%s\", \"config_sha256\": "
		          "\"93d1b1fde44c8a5495b335781bafe52391ba08561eaabd"
		          "931e43fb591ea35b0a\", \"boot\": \"qemu\", "
		          "\"cached\": %s}}",
		          ids[i], ids[i], i == 0 ? "true" : "false");
	}
	return rows;
}

/* The build ids of both sides in "test machine" and the parameters, the
 * webhook's "kernel"; "unknown" when the runs said nothing; a warning
 * when both sides of two commits ran one build. */
TEST(test_alert__kernel_build_ids)
{
	struct store_alert_info *x = info_new("mm: x", "A <a@example.org>");
	struct alert_report r;
	struct buf out = BUF_INIT(ALERT_MAIL_MAX);
	struct store_run_metas rows;
	json_t *o, *k;
	char *s, *line, *save = NULL;

	free(x->spec);
	x->spec = xstrdup("{\"command\": [\"fio\"], \"boot\": \"runner\", "
	                  "\"kernel\": {\"config\": \"tinyconfig\"}}");
	/* Known: each side its own build. */
	alert_report_init(&r, x, NULL, 0);
	rows = kernel_rows("-pw41", "-pw42");
	alert_report_kernel(&r, &rows);
	store_run_metas_release(&rows);
	alert_mail_body(&out, &r);
	ASSERT_MSG(
	    strstr(out.data,
	        "  kernel build ids: base -pw41, candidate -pw42\n") != NULL,
	    "%s", out.data);
	ASSERT_MSG(strstr(out.data,
	               "    base: 6.1.158-pw41 build -pw41 config "
	               "93d1b1fde44c (boot qemu, cached yes)\n") != NULL,
	    "%s", out.data);
	ASSERT(strstr(out.data,
	           "    candidate: 6.1.158-pw42 build -pw42 config "
	           "93d1b1fde44c (boot qemu, cached\n    no)\n") != NULL);
	ASSERT(strstr(out.data,
	           "each side's commit, built by the runner\n"
	           "    (base -pw41, candidate -pw42)\n") != NULL);
	ASSERT(strstr(out.data, "unknown)") == NULL);
	ASSERT(strstr(out.data, "WARNING") == NULL);
	for (line = strtok_r(out.data, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		ASSERT_MSG(strlen(line) <= 78 || strstr(line, "://") != NULL,
		    "long line: %s", line);
	s = alert_hook_body(&r, "k#1/hook0", 0, "s");
	o = pwjson_parse(s, strlen(s), NULL);
	k = json_object_get(o, "kernel");
	ASSERT_STREQ(json_string_value(json_object_get(
	                 json_object_get(k, "base"), "build_id")),
	    "-pw41");
	ASSERT_STREQ(json_string_value(json_object_get(
	                 json_object_get(k, "candidate"), "release")),
	    "6.1.158-pw42");
	ASSERT_STREQ(json_string_value(json_object_get(
	                 json_object_get(k, "candidate"), "cached")),
	    "no");
	ASSERT(json_is_null(json_object_get(k, "warning")));
	json_decref(o);
	free(s);
	alert_report_release(&r);

	/* The same build on both sides of two commits: said, loudly. */
	buf_reset(&out);
	alert_report_init(&r, x, NULL, 0);
	rows = kernel_rows("-pw41", "-pw41");
	alert_report_kernel(&r, &rows);
	store_run_metas_release(&rows);
	alert_mail_body(&out, &r);
	ASSERT_MSG(strstr(out.data,
	               "  WARNING, kernels:\n"
	               "    both sides ran the same kernel build -pw41 "
	               "(6.1.158-pw41) though base and\n"
	               "    candidate are different commits") != NULL,
	    "%s", out.data);
	s = alert_hook_body(&r, "k#1/hook0", 0, "s");
	o = pwjson_parse(s, strlen(s), NULL);
	ASSERT(strstr(json_string_value(json_object_get(
	                  json_object_get(o, "kernel"), "warning")),
	           "the candidate's kernel was not measured") != NULL);
	json_decref(o);
	free(s);
	alert_report_release(&r);
	/* ... but not for an A/A pair: one commit, one build is right. */
	buf_reset(&out);
	free(x->base_sha);
	x->base_sha = xstrdup(x->sha);
	alert_report_init(&r, x, NULL, 0);
	rows = kernel_rows("-pw41", "-pw41");
	alert_report_kernel(&r, &rows);
	store_run_metas_release(&rows);
	alert_mail_body(&out, &r);
	ASSERT(strstr(out.data, "WARNING") == NULL);
	alert_report_release(&r);

	/* An older runner said nothing: unknown, never made up. */
	buf_reset(&out);
	alert_report_init(&r, x, NULL, 0);
	rows = kernel_rows(NULL, NULL);
	alert_report_kernel(&r, &rows);
	store_run_metas_release(&rows);
	alert_mail_body(&out, &r);
	ASSERT(strstr(out.data,
	           "  kernel build ids: base unknown, candidate unknown\n"
	           "    base: unknown (no run reported its kernel)\n") != NULL);
	ASSERT(strstr(out.data, "(base unknown, candidate unknown)") != NULL);
	s = alert_hook_body(&r, "k#1/hook0", 0, "s");
	o = pwjson_parse(s, strlen(s), NULL);
	ASSERT_STREQ(json_string_value(json_object_get(
	                 json_object_get(json_object_get(o, "kernel"), "base"),
	                 "build_id")),
	    "unknown");
	json_decref(o);
	free(s);
	alert_report_release(&r);

	/* A job without kernel: both sides on the running kernel. */
	buf_reset(&out);
	free(x->spec);
	x->spec = xstrdup("{\"command\": [\"fio\"], \"boot\": \"runner\"}");
	alert_report_init(&r, x, NULL, 0);
	alert_mail_body(&out, &r);
	ASSERT(strstr(out.data,
	           "kernel builds: none: both sides ran on the test "
	           "machine's running kernel\n") != NULL);
	alert_report_release(&r);
	buf_release(&out);
	store_alert_info_release(x);
}

/* A bisection started from a history change point (docs/BISECT.md): no
 * pair of the commit changed, the ended bisection is the report; mail,
 * subject and webhook say where it started. */
TEST(test_alert__change_point_bisection)
{
	struct store_alert_info *x = info_new("mm: y", "A <a@example.org>");
	struct alert_report r;
	struct alert_mail_in in;
	struct alert_rcpt rc;
	struct buf out = BUF_INIT(ALERT_MAIL_MAX);
	char *to[] = { "a@example.org" }, *s, *subj;
	json_t *o, *b;
	size_t i;

	for (i = 0; i < x->ncmp; i++) {
		free(x->cmp[i].verdict);
		x->cmp[i].verdict = xstrdup("unchanged");
	}
	alert_report_init(&r, x, NULL, 0);
	ASSERT_INTEQ(r.nchg, 0);
	alert_report_release(&r);
	x->bisect_id = 3;
	x->bisect_state = xstrdup("done");
	x->bisect = xstrdup("89abcdef0123 mm: slower\r\nBcc: x@example.com");
	x->bisect_parent = xstrdup("shows the regression: regression +150.0% "
	                           "against its parent");
	x->bisect_origin = xstrdup("bisected from the change point at "
	                           "0123456789ab on mm-new history");
	alert_report_init(&r, x, NULL, 0);
	subj = alert_mail_subject(&r, 0);
	ASSERT_MSG(strstr(subj, "fio-memcg: history change point") != NULL,
	    "%s", subj);
	memset(&rc, 0, sizeof(rc));
	rc.to = rc.env = to;
	rc.nto = rc.nenv = 1;
	memset(&in, 0, sizeof(in));
	in.r = &r;
	in.from = "perfwatch <p@example.org>";
	in.subject = subj;
	in.message_id = "<m@example.org>";
	in.rcpt = &rc;
	ASSERT_INTEQ(alert_mail_build(&out, &in), 0);
	ASSERT(strstr(out.data,
	           "found a change point on the history of "
	           "fio-memcg at:") != NULL);
	ASSERT(strstr(out.data,
	           "bisected from the change point at "
	           "0123456789ab on mm-new history:") != NULL);
	ASSERT(strstr(out.data, "bisected to 89abcdef0123 mm: slower") != NULL);
	ASSERT(strstr(out.data, "\r\nBcc:") == NULL);
	s = alert_hook_body(&r, "k#1/hook0", 0, "s");
	o = pwjson_parse(s, strlen(s), NULL);
	b = json_object_get(o, "bisect");
	ASSERT(json_is_object(b));
	ASSERT_STREQ(json_string_value(json_object_get(b, "origin")),
	    "bisected from the change point at 0123456789ab on mm-new "
	    "history");
	json_decref(o);
	free(s);
	free(subj);
	alert_report_release(&r);
	buf_release(&out);
	store_alert_info_release(x);
}

TEST(test_alert__subject_branch)
{
	struct store_alert_info *x = info_new("mm: x", "A <a@example.org>");
	struct alert_report r;
	char *s;

	alert_report_init(&r, x, NULL, 0);
	s = alert_mail_subject(&r, 1);
	ASSERT_STREQ(s,
	    "[mm:mm-new] 0123456789ab mm: x: fio-memcg.read_bw -4.5% "
	    "regression");
	free(s);
	/* A submitted pair on a commit the watcher saw on two branches
	 * (store_alert_info_get): the first names it. */
	free(x->branch);
	x->branch = xstrdup("memcg,mm-unstable");
	s = alert_mail_subject(&r, 1);
	ASSERT_STREQ(s,
	    "[mm:memcg] 0123456789ab mm: x: fio-memcg.read_bw -4.5% "
	    "regression");
	free(s);
	/* No branch at all: none is made up ("[mm:?]" before). */
	free(x->branch);
	x->branch = NULL;
	s = alert_mail_subject(&r, 1);
	ASSERT_STREQ(
	    s, "[mm] 0123456789ab mm: x: fio-memcg.read_bw -4.5% regression");
	free(s);
	alert_report_release(&r);
	store_alert_info_release(x);
}

/* trigger.every_patch pinned the change to patch 2/3: the subject is
 * that patch's with the metric and size; "To reproduce" fetches the
 * public tree's base and the series' first two patches by Message-ID,
 * fills in the runner's placeholders and names no file of this
 * repository. */
TEST(test_alert__pinned_patch_report)
{
	struct store_alert_info *x = info_new("mm: x", "A <a@example.org>");
	struct alert_report r;
	struct buf b = BUF_INIT(ALERT_MAIL_MAX);
	char *subject;

	with_series(x);
	free(x->spec);
	x->spec = xstrdup("{\"command\": [\"{workdir}/prog\", \"--bs={bs}\","
	                  " \"-j{cpus}\", \"{nope}\"], \"build\": [\"make\"],"
	                  " \"params\": {\"bs\": \"4k\"}, \"runs\": 5}");
	x->series_base = xstrdup("1111111111111111111111111111111111111111");
	x->patch_seq = 2;
	x->patch_msgid = xstrdup("p2@example.org");
	x->patch_subject = xstrdup("memcg: the second step");
	/* Patch 2 of 3 against its parent: pinned. */
	ASSERT_INTEQ(alert_pinned_patch(x), 2);
	alert_report_init(&r, x, "https://perf.example.org", 1764547200);
	r.tree_url = xstrdup("https://git.example.org/mm.git");
	subject = alert_mail_subject(&r, 1);
	ASSERT_STREQ(subject,
	    "Re: [PATCH v2 2/3] memcg: the second step: fio-memcg.read_bw "
	    "-4.5% regression");
	alert_mail_body(&b, &r);
	ASSERT_MSG(strstr(b.data,
	               "  git fetch https://git.example.org/mm.git mm-new\n"
	               "  git checkout 1111111111111111111111111111111111111111"
	               "     # the series' base\n"
	               "  b4 am -P 1-2 cover.1@example.org\n") != NULL,
	    "%s", b.data);
	ASSERT(strstr(b.data,
	           "https://lore.kernel.org/r/cover.1@example.org") != NULL);
	ASSERT_MSG(strstr(b.data,
	               "  make\n  ./prog --bs=4k -j$(nproc) {nope}\n") != NULL,
	    "%s", b.data);
	ASSERT(strstr(b.data, "{workdir}") == NULL);
	ASSERT(strstr(b.data, "docs/") == NULL);
	/* The synthetic commit is no checkout target. */
	ASSERT(strstr(b.data, "git checkout 0123456789abcdef") == NULL);
	free(subject);
	alert_report_release(&r);
	/* The last patch against the series' base is the whole series. */
	x->patch_seq = 3;
	free(x->base_sha);
	x->base_sha = xstrdup(x->series_base);
	ASSERT_INTEQ(alert_pinned_patch(x), 0);
	/* ... and against patch 2's commit, patch 3 alone. */
	free(x->base_sha);
	x->base_sha = xstrdup("2222222222222222222222222222222222222222");
	ASSERT_INTEQ(alert_pinned_patch(x), 3);
	buf_release(&b);
	store_alert_info_release(x);
}
