#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/err.h"
#include "common/files.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "config/config.h"
#include "daemon/dconf.h"
#include "daemon/hygiene.h"
#include "store/alerts.h"
#include "store/bisect.h"
#include "store/canary.h"
#include "store/claim.h"
#include "store/dash.h"
#include "store/history.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/mail_commands.h"
#include "store/pairs.h"
#include "store/series.h"
#include "store/store.h"
#include "store/watch.h"
#include "tests/unit/test.h"
#include "web/api_int.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/reply.h"
#include "web/rows.h"
#include "web/rows_series.h"
#include "web/svg.h"
#include "web/views.h"
#include "web/web_int.h"

/*
 * Hostile strings, as commit subjects, author names, branch names and
 * benchmark output may carry them.  big() is a 1 MB subject.
 */
static const char *const hostile[] = {
	"<script>alert('x')</script>",
	"\"><script>alert(1)</script><a x='",
	"' onmouseover='alert(1)' x='",
	"a&b&amp;c &lt;d&gt; &#60;script&#62;",
	"ctl:\x01\x02\x1b[31mred\r\x7f end",
	"bad utf8:\xff\xfe\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82",
	"bidi:\xe2\x80\xae"
	"evil\xe2\x81\xa6"
	"x",
	"c1:\xc2\x85\xc2\x9b",
	"</td></tr></table><SCRIPT SRC=//x></SCRIPT>",
	"javascript:alert(1)",
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

static char *big_subject;

static const char *
big(void)
{
	static const char unit[] = "<script>alert(1)</script>\"'&\x01\xff"
	                           "\xe2\x80\xae";
	size_t n = 1024 * 1024, i;

	if (big_subject)
		return big_subject;
	big_subject = xmalloc(n + 1);
	for (i = 0; i < n; i++)
		big_subject[i] = unit[i % (sizeof(unit) - 1)];
	big_subject[n] = '\0';
	return big_subject;
}

static const char *
H(size_t i)
{
	if (i % (NHOSTILE + 1) == NHOSTILE)
		return big();
	return hostile[i % (NHOSTILE + 1)];
}

/* ---- page checks ---------------------------------------------------- */

static int
starts_ci(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (tolower((unsigned char)*s) != *prefix)
			return 0;
	return 1;
}

static int
void_element(const char *name, size_t n)
{
	static const char *const v[] = { "meta", "br", "input", "img", "hr",
		"link", "wbr", "col" };
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (strlen(v[i]) == n && strncmp(v[i], name, n) == 0)
			return 1;
	return 0;
}

/*
 * A small tag-balance checker for the markup the renderers emit: every
 * '<' starts a tag (no raw '<' in text), attribute values are quoted and
 * hold no '<', every element but the void ones is closed in order, and
 * every '&' starts a character reference.  Writes why into why.
 */
static int
well_formed(const char *s, char *why, size_t whylen)
{
	const char *stack[256];
	size_t len[256], depth = 0;
	const char *p = s;

	while (*p) {
		const char *name;
		size_t n;
		int closing = 0, selfclose = 0;

		if (*p == '&') {
			const char *q = p + 1;

			if (*q == '#') {
				q++;
				while (isdigit((unsigned char)*q))
					q++;
			} else
				while (isalpha((unsigned char)*q))
					q++;
			if (*q != ';' || q == p + 1) {
				snprintf(why, whylen, "bad '&' at %zu: %.30s",
				    (size_t)(p - s), p);
				return 0;
			}
			p = q + 1;
			continue;
		}
		if (*p == '>') {
			snprintf(why, whylen, "raw '>' at %zu: %.30s",
			    (size_t)(p - s), p);
			return 0;
		}
		if (*p != '<') {
			p++;
			continue;
		}
		if (starts_ci(p, "<!doctype")) {
			p = strchr(p, '>');
			if (p == NULL)
				break;
			p++;
			continue;
		}
		p++;
		if (*p == '/') {
			closing = 1;
			p++;
		}
		name = p;
		while (isalnum((unsigned char)*p))
			p++;
		n = (size_t)(p - name);
		if (n == 0) {
			snprintf(why, whylen, "raw '<' at %zu: %.30s",
			    (size_t)(name - s), name - 1);
			return 0;
		}
		/* Attributes. */
		while (*p && *p != '>') {
			if (*p == '"' || *p == '\'') {
				char q = *p++;

				while (*p && *p != q) {
					if (*p == '<') {
						snprintf(why, whylen,
						    "'<' in attribute at %zu",
						    (size_t)(p - s));
						return 0;
					}
					p++;
				}
				if (*p == '\0')
					break;
				p++;
				continue;
			}
			if (*p == '<') {
				snprintf(why, whylen, "'<' in tag at %zu",
				    (size_t)(p - s));
				return 0;
			}
			if (*p == '/' && p[1] == '>')
				selfclose = 1;
			p++;
		}
		if (*p != '>') {
			snprintf(why, whylen, "unterminated tag <%.*s", (int)n,
			    name);
			return 0;
		}
		p++;
		if (closing) {
			if (depth == 0 || len[depth - 1] != n ||
			    strncmp(stack[depth - 1], name, n) != 0) {
				snprintf(why, whylen,
				    "</%.*s> closes <%.*s> at %zu", (int)n,
				    name, depth ? (int)len[depth - 1] : 0,
				    depth ? stack[depth - 1] : "",
				    (size_t)(name - s));
				return 0;
			}
			depth--;
			continue;
		}
		if (selfclose || void_element(name, n))
			continue;
		if (depth == 256) {
			snprintf(why, whylen, "nesting too deep");
			return 0;
		}
		stack[depth] = name;
		len[depth++] = n;
		/* The CSS has no markup; skip it. */
		if (n == 5 && strncmp(name, "style", 5) == 0) {
			p = strstr(p, "</style>");
			if (p == NULL) {
				snprintf(why, whylen, "unclosed <style>");
				return 0;
			}
		}
	}
	if (depth) {
		snprintf(why, whylen, "unclosed <%.*s>", (int)len[depth - 1],
		    stack[depth - 1]);
		return 0;
	}
	return 1;
}

/* Valid UTF-8, and no control characters but tab and newline. */
static int
clean_utf8(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		size_t k, i;

		if (*p < 0x80) {
			if ((*p < 0x20 && *p != '\n' && *p != '\t') ||
			    *p == 0x7f)
				return 0;
			p++;
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf)
			k = 1;
		else if (*p >= 0xe0 && *p <= 0xef)
			k = 2;
		else if (*p >= 0xf0 && *p <= 0xf4)
			k = 3;
		else
			return 0;
		if ((size_t)(end - p) <= k)
			return 0;
		for (i = 1; i <= k; i++)
			if ((p[i] & 0xc0) != 0x80)
				return 0;
		/* C1 controls and the bidi overrides must be gone. */
		if (p[0] == 0xc2 && p[1] < 0xa0)
			return 0;
		if (p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0xaa &&
		    p[2] <= 0xae)
			return 0;
		if (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 &&
		    p[2] <= 0xa9)
			return 0;
		p += k + 1;
	}
	return 1;
}

static int
contains_ci(const char *s, const char *needle)
{
	for (; *s; s++)
		if (starts_ci(s, needle))
			return 1;
	return 0;
}

static size_t
count(const char *s, const char *needle)
{
	size_t n = 0, l = strlen(needle);

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s += l;
	}
	return n;
}

/* The checks every rendered page must pass. */
#define ASSERT_PAGE(b)                                                        \
	do {                                                                  \
		char why_[256] = "";                                          \
		ASSERT(!buf_failed(b));                                       \
		ASSERT_MSG((b)->len <= VIEW_PAGE_BUDGET, "page is %zu bytes", \
		    (b)->len);                                                \
		ASSERT(strncmp((b)->data, "<!DOCTYPE html>", 15) == 0);       \
		ASSERT_MSG(!contains_ci((b)->data, "<script"),                \
		    "raw <script in page");                                   \
		ASSERT_MSG(!contains_ci((b)->data, "onmouseover='"),          \
		    "attribute escaped its quotes");                          \
		ASSERT_MSG(clean_utf8((b)->data, (b)->len),                   \
		    "control character or bad UTF-8 in page");                \
		ASSERT_MSG(                                                   \
		    well_formed((b)->data, why_, sizeof(why_)), "%s", why_);  \
	} while (0)

/* ---- the escaping helper -------------------------------------------- */

static char *
esc(const char *s)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);

	html_text(&b, s);
	return buf_take(&b);
}

TEST(test_web__text_escapes_markup_and_quotes)
{
	char *s = esc("<a href=\"x\" title='y'>&</a>");

	ASSERT_STREQ(
	    s, "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
	free(s);
	s = esc("plain text, tabs\tand\nnewlines stay");
	ASSERT_STREQ(s, "plain text, tabs\tand\nnewlines stay");
	free(s);
	s = esc("");
	ASSERT_STREQ(s, "");
	free(s);
}

TEST(test_web__text_replaces_controls_and_bad_utf8)
{
	char *s;

	s = esc("a\x01"
	        "b\x1b"
	        "c\r\x7f"
	        "d");
	ASSERT_STREQ(s,
	    "a\xef\xbf\xbd"
	    "b\xef\xbf\xbd"
	    "c\xef\xbf\xbd"
	    "\xef\xbf\xbd"
	    "d");
	free(s);
	/* Lone continuation, overlong '/', surrogate, past U+10FFFF. */
	s = esc("\x80|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82");
	ASSERT(clean_utf8(s, strlen(s)));
	ASSERT(strchr(s, '/') == NULL);
	ASSERT_INTEQ(count(s, "\xef\xbf\xbd"), 1 + 2 + 3 + 4 + 2);
	free(s);
	/* Valid characters of every length survive. */
	s = esc("\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 \xef\xbf\xbd");
	ASSERT_STREQ(s, "\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 \xef\xbf\xbd");
	free(s);
	/* C1 controls and bidi overrides go. */
	s = esc("\xc2\x85\xe2\x80\xae\xe2\x81\xa6");
	ASSERT_STREQ(s, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(s);
}

TEST(test_web__textn_shows_nul)
{
	struct buf b = BUF_INIT(64);

	html_textn(&b, "a\0b", 3);
	ASSERT_STREQ(b.data,
	    "a\xef\xbf\xbd"
	    "b");
	buf_release(&b);
}

TEST(test_web__text_trunc_cuts_on_characters)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);

	html_text_trunc(&b, "abcdef", 3);
	ASSERT_STREQ(b.data, "abc\xe2\x80\xa6");
	buf_reset(&b);
	html_text_trunc(&b, "abc", 3);
	ASSERT_STREQ(b.data, "abc");
	buf_reset(&b);
	/* Multi-byte characters count as one and are never split. */
	html_text_trunc(&b, "\xc3\xa9\xc3\xa9\xc3\xa9", 2);
	ASSERT_STREQ(b.data, "\xc3\xa9\xc3\xa9\xe2\x80\xa6");
	buf_reset(&b);
	html_text_trunc(&b, "<<<<", 2);
	ASSERT_STREQ(b.data, "&lt;&lt;\xe2\x80\xa6");
	buf_reset(&b);
	html_text_trunc(&b, big(), 100);
	ASSERT(b.len < 100 * 8);
	ASSERT(clean_utf8(b.data, b.len));
	ASSERT(!contains_ci(b.data, "<script"));
	buf_release(&b);
}

TEST(test_web__text_overflow_is_sticky)
{
	struct buf b = BUF_INIT(16);

	ASSERT_INTEQ(html_text(&b, "<<<<<<<<"), -1);
	ASSERT(buf_failed(&b));
	ASSERT_INTEQ(html_text(&b, "x"), -1);
	buf_release(&b);
}

TEST(test_web__url_encodes_components)
{
	struct buf b = BUF_INIT(256);

	html_url(&b, "a b/c?d=e&f#g\"'<>~._-\xc3\xa9");
	ASSERT_STREQ(b.data, "a%20b%2Fc%3Fd%3De%26f%23g%22%27%3C%3E~._-%C3%A9");
	buf_release(&b);
}

TEST(test_web__numbers)
{
	struct buf b = BUF_INIT(256);

	html_num(&b, NAN, 2);
	HTML_LIT(&b, "|");
	html_num(&b, -0.0001, 2);
	HTML_LIT(&b, "|");
	html_pct(&b, 31.5, 1);
	HTML_LIT(&b, "|");
	html_pct(&b, -36, 1);
	HTML_LIT(&b, "|");
	html_pct(&b, INFINITY, 1);
	HTML_LIT(&b, "|");
	html_si(&b, 20880000);
	HTML_LIT(&b, "|");
	html_si(&b, 51234.5);
	HTML_LIT(&b, "|");
	html_si(&b, 0.969);
	HTML_LIT(&b, "|");
	html_bytes(&b, 540000000000LL);
	HTML_LIT(&b, "|");
	html_bytes(&b, -1);
	HTML_LIT(&b, "|");
	html_time(&b, 1733000000);
	HTML_LIT(&b, "|");
	html_time(&b, 0);
	ASSERT_STREQ(b.data,
	    "unknown|0.00|+31.5%|-36.0%|unknown|20.88M|51.23k|0.969|503 GiB|"
	    "unknown|2024-11-30 20:53 UTC|unknown");
	buf_release(&b);
}

/* ---- renderers on hostile data -------------------------------------- */

static void
render_overview(struct buf *b, size_t nitems)
{
	struct view_overview_item *items = xcalloc(nitems, sizeof(*items));
	struct view_badge badges[4];
	struct view_overview_group g[3];
	struct view_overview v = { 0 };
	size_t i;

	badges[0] = (struct view_badge){ "fio", "regression", NULL };
	badges[1] = (struct view_badge){ H(0), "running", H(4) };
	badges[2] = (struct view_badge){ H(1), H(2), H(10) };
	badges[3] = (struct view_badge){ "tcp_rr", "improvement", NULL };
	for (i = 0; i < nitems; i++) {
		items[i].kind = (enum view_target)(i % 3);
		items[i].id = H(i + 3);
		items[i].subject = H(i);
		items[i].author = H(i + 1);
		items[i].time = 1733000000 + (int64_t)i;
		items[i].badges = badges;
		items[i].nbadges = 4;
	}
	g[0] = (struct view_overview_group){ H(0), H(10), items, nitems / 2 };
	g[1] = (struct view_overview_group){ H(2), H(5), items + nitems / 2,
		nitems - nitems / 2 };
	g[2] = (struct view_overview_group){ NULL, NULL, items, 1 };
	v.now = 1733000100;
	v.hosts_online = 2;
	v.hosts_total = 3;
	v.queued = 7;
	v.running = 1;
	v.regressions_new = 4;
	v.groups = g;
	v.ngroups = nitems ? 3 : 0;
	view_overview_render(b, &v);
	free(items);
}

TEST(test_web__overview_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);

	render_overview(&b, 22);
	ASSERT_PAGE(&b);
	ASSERT(
	    strstr(b.data, "class=\"badge v-regression\">regression") != NULL);
	ASSERT(
	    strstr(b.data, "class=\"badge v-running\">running ctl:") != NULL);
	/* A hostile verdict is shown as unknown, not as itself. */
	ASSERT(strstr(b.data, "class=\"badge v-unknown\">unknown") != NULL);
	ASSERT(strstr(b.data, "&lt;script&gt;alert(&#39;x&#39;)") != NULL);
	ASSERT(strstr(b.data, "href=\"/series/") != NULL);
	ASSERT(strstr(b.data, "href=\"/pair/") != NULL);
	ASSERT(strstr(b.data, "Submitted pairs") != NULL);
	ASSERT(strstr(b.data, "new regressions: <b>4</b>") != NULL);
	buf_release(&b);
}

TEST(test_web__overview_budget)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);

	render_overview(&b, 5000);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "more rows not shown") != NULL);
	buf_reset(&b);
	render_overview(&b, 0);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "Nothing tested yet") != NULL);
	buf_release(&b);
}

static struct view_cmp_row *
cmp_rows(size_t n)
{
	struct view_cmp_row *r = xcalloc(n, sizeof(*r));
	static const char *const verdict[] = { "regression", "improvement",
		"unchanged", "inconclusive", "unstable", "\"><script>" };
	size_t i;

	for (i = 0; i < n; i++) {
		r[i].host = H(i);
		r[i].bench = H(i + 1);
		r[i].point = H(i + 2);
		r[i].metric = H(i + 3);
		r[i].unit = H(i + 4);
		r[i].better = i % 2 ? "higher" : H(i);
		r[i].base_median = 20.88e6;
		r[i].cand_median = i % 7 ? 27.47e6 : NAN;
		r[i].change_pct = 31.5;
		r[i].ci_low = i % 5 ? 28.0 : NAN;
		r[i].ci_high = 35.1;
		r[i].p = i % 3 ? 0.00001 : 0.2;
		r[i].min_effect = 1;
		r[i].base_n = 5;
		r[i].cand_n = 5;
		r[i].verdict = verdict[i % 6];
		r[i].memcg_tax_pct = i % 2 ? -4.5 : NAN;
		r[i].memcg_tax_base_pct = i % 3 ? -0.7 : NAN;
		r[i].memcg_tax_verdict = i % 2 ? verdict[(i + 1) % 6] : NULL;
		r[i].charge_share_pct = i % 2 ? 44.6 : NAN;
		r[i].charge_share_base_pct = i % 4 ? 12.5 : NAN;
		r[i].pair_id = (int64_t)i + 1;
		r[i].base_job = 2 * (int64_t)i + 1;
		r[i].cand_job = 2 * (int64_t)i + 2;
	}
	return r;
}

TEST(test_web__commit_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_cmp_row *rows = cmp_rows(13);
	struct view_patch patches[3] = { { .subject = H(0),
		                             .commit = "abc123",
		                             .verdict = "regression" },
		{ .subject = H(10) },
		{ .subject = H(1), .commit = H(1), .verdict = H(2) } };
	struct view_job_ref jobs[2] = { { 7, "base", H(0), "running", H(4),
		                            NULL, 3 },
		{ 8, H(1), H(10), "failed", NULL, H(10), 50 } };
	struct view_commit v = { 0 };
	int kind;

	for (kind = VIEW_COMMIT; kind <= VIEW_PAIR; kind++) {
		v.kind = (enum view_target)kind;
		v.id = kind == VIEW_PAIR ? "3" : H(1);
		v.title = H(10);
		v.author = H(0);
		v.tree = kind == VIEW_PAIR ? NULL : H(2);
		v.branch = H(3);
		v.base = kind == VIEW_PAIR ? NULL : H(4);
		v.time = 1733000000;
		v.rows = rows;
		v.nrows = 13;
		v.patches = kind == VIEW_SERIES ? patches : NULL;
		v.npatches = kind == VIEW_SERIES ? 3 : 0;
		v.jobs = jobs;
		v.njobs = 2;
		v.note = H(5);
		v.pager.next_cursor = kind == VIEW_COMMIT ? H(0) : NULL;
		buf_reset(&b);
		view_commit_render(&b, &v);
		ASSERT_PAGE(&b);
		ASSERT(strstr(b.data, "badge v-regression") != NULL);
		ASSERT(strstr(b.data, "class=\"cibar\"") != NULL);
		ASSERT(strstr(b.data, "+31.50%") != NULL);
		ASSERT(strstr(b.data, "&lt;0.0001") != NULL);
		ASSERT(strstr(b.data, "44.6%") != NULL);
		ASSERT(strstr(b.data,
		           "-4.5%</span> <span class=\"muted\">"
		           "base -0.7%") != NULL);
		ASSERT(strstr(b.data, "base 12.5%") != NULL);
		ASSERT(strstr(b.data, "/api/v1/jobs/8/runs/19/raw") != NULL);
		ASSERT(strstr(b.data, "/api/v1/jobs/8/runs/20/raw") == NULL);
		ASSERT(strstr(b.data, "href=\"/history?") != NULL);
		if (kind == VIEW_SERIES)
			ASSERT(strstr(b.data, "not applied") != NULL);
		if (kind == VIEW_COMMIT)
			ASSERT(strstr(b.data, "rel=\"next\"") != NULL);
	}
	free(rows);
	buf_release(&b);
}

/* Pair page: the kernel each side ran and the same-build warning, both
 * escaped (the text comes from runners); no row when not given. */
TEST(test_web__pair_kernels)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_commit v = { 0 };
	size_t i;

	v.kind = VIEW_PAIR;
	v.id = "3";
	v.title = "fio 4k";
	v.kernel[0] = "6.1.158-pw41 build -pw41 config 93d1b1fde44c (boot "
	              "qemu, cached yes)";
	for (i = 0; i <= NHOSTILE; i++) {
		v.kernel[1] = H(i);
		v.kernel_warning = H(i + 1);
		buf_reset(&b);
		view_commit_render(&b, &v);
		ASSERT_PAGE(&b);
		ASSERT(strstr(b.data,
		           "<th>base kernel</th><td class=\"mono\">kernel: "
		           "6.1.158-pw41 build -pw41 config 93d1b1fde44c") !=
		    NULL);
		ASSERT(strstr(b.data, "<th>candidate kernel</th>") != NULL);
		ASSERT(strstr(b.data, "kernel</span> warning: ") != NULL);
	}
	v.kernel[0] = v.kernel[1] = v.kernel_warning = NULL;
	buf_reset(&b);
	view_commit_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "base kernel") == NULL);
	ASSERT(strstr(b.data, "warning: ") == NULL);
	buf_release(&b);
}

/* A row of the report-order test. */
static struct view_cmp_row
rrow(const char *host, const char *metric, const char *better, double base,
    double cand, double change, const char *verdict)
{
	struct view_cmp_row r = { 0 };

	r.host = host;
	r.bench = "fio";
	r.point = "bs=4k";
	r.metric = metric;
	r.unit = "";
	r.better = better;
	r.base_median = base;
	r.cand_median = cand;
	r.change_pct = change;
	r.ci_low = r.ci_high = r.p = NAN;
	r.min_effect = 2;
	r.base_n = r.cand_n = 5;
	r.verdict = verdict;
	r.memcg_tax_pct = r.memcg_tax_base_pct = NAN;
	r.charge_share_pct = r.charge_share_base_pct = NAN;
	r.pair_id = 1;
	return r;
}

static const char *
at(const char *hay, const char *needle)
{
	const char *p = strstr(hay, needle);

	if (p == NULL) {
		/* Failed; the end of hay makes the order checks fail too. */
		test_fail(__FILE__, __LINE__, "missing %s", needle);
		return hay + strlen(hay);
	}
	return p;
}

/* The pair page reads like a report: the changed metrics first, by
 * significance and size, telemetry last in its own memcg section with
 * absolute differences, host/bench/point once per group, and the range
 * across hosts on a commit page. */
TEST(test_web__commit_report_order)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_cmp_row rows[] = {
		rrow("epyc", "memcg.anon_delta", "info", -1277952, 372736,
		    -129.2, "info"),
		rrow("epyc", "memcg.file_delta", "info", 4096, 8192, 100,
		    "info"),
		rrow("epyc", "latency_p99", "lower", 100, 101, 1, "unchanged"),
		rrow(
		    "epyc", "read_bw", "higher", 2000, 1000, -50, "regression"),
		rrow(
		    "epyc", "write_iops", "higher", 100, 105, 5, "improvement"),
		rrow("epyc", "read_iops", "higher", 2000, 900, -55,
		    "regression"),
		rrow("xeon", "read_iops", "higher", 2000, 1700, -15,
		    "regression"),
		rrow("epyc", "read_clat", "lower", 10, 11, 10, "inconclusive"),
	};
	struct view_commit v = { 0 };
	const char *p_rd, *p_bw, *p_xeon, *p_imp, *p_unch, *p_tel;
	const char *changed, *memcg, *other, *q;
	int groups = 0;

	v.kind = VIEW_COMMIT;
	v.id = "0123456789abcdef0123456789abcdef01234567";
	v.title = "mm: memcg: a change";
	v.rows = rows;
	v.nrows = sizeof(rows) / sizeof(rows[0]);
	view_commit_render(&b, &v);
	ASSERT_PAGE(&b);
	changed = at(b.data, "<h2>What changed</h2>");
	memcg = at(b.data, "<h2>memcg</h2>");
	other = at(b.data, "<h2>Unchanged and inconclusive</h2>");
	ASSERT(changed < memcg && memcg < other);
	/* Regressions by size (read_iops -55% before read_bw -50%, the
	 * xeon's -15% after), then the improvement; all before memcg. */
	p_rd = at(changed, ">read_iops</a>");
	p_bw = at(changed, ">read_bw</a>");
	p_xeon = at(changed, "-15.00%");
	p_imp = at(changed, ">write_iops</a>");
	ASSERT(p_rd < p_bw && p_bw < p_xeon && p_xeon < p_imp && p_imp < memcg);
	/* Unchanged and inconclusive rows only after the memcg facts. */
	p_unch = at(b.data, ">latency_p99</a>");
	ASSERT(p_unch > other);
	ASSERT(at(b.data, ">read_clat</a>") > other);
	/* Telemetry in the memcg section, with absolute differences: no
	 * -129% for a delta that crosses zero. */
	p_tel = at(memcg, "memcg.anon_delta");
	ASSERT(p_tel < other);
	ASSERT(strstr(b.data, "-129.") == NULL);
	ASSERT(strstr(p_tel, "+1.65M") != NULL);
	/* Host, benchmark and point once per group, not on every row: the
	 * changed table has three groups (epyc, xeon, epyc). */
	for (q = changed; (q = strstr(q, "<tr class=\"grp\">")) && q < memcg;
	     q++)
		groups++;
	ASSERT_INTEQ(groups, 3);
	/* The commit page summarises read_iops over both hosts. */
	q = at(b.data, "<h2>Across hosts</h2>");
	ASSERT(strstr(q, "-55.0% &hellip; -15.0% across 2 hosts") != NULL);
	ASSERT(strstr(q, "(2 regression)") != NULL);
	ASSERT(strstr(q, "across 2 hosts, 1 CPU family") != NULL);
	ASSERT(strstr(q,
	           "<li>unknown CPU: -55.0% &hellip; -15.0% on 2 hosts</li>") !=
	    NULL);
	/* By CPU family (common/cpufamily.h): a range for each. */
	rows[5].family = "Zen 2 (Rome)";
	rows[6].family = "Ice Lake-SP";
	buf_reset(&b);
	view_commit_render(&b, &v);
	q = at(b.data, "<h2>Across hosts</h2>");
	ASSERT(strstr(q,
	           "-55.0% &hellip; -15.0% across 2 hosts, 2 CPU families") !=
	    NULL);
	ASSERT(strstr(q,
	           "<li>Zen 2 (Rome): -55.0% on 1 host</li><li>Ice Lake-SP: "
	           "-15.0% on 1 host</li>") != NULL);
	/* A pair page has one host: no such summary. */
	v.kind = VIEW_PAIR;
	v.id = "1";
	buf_reset(&b);
	view_commit_render(&b, &v);
	ASSERT(strstr(b.data, "Across hosts") == NULL);
	/* Nothing changed: said in words. */
	v.rows = &rows[2];
	v.nrows = 1;
	buf_reset(&b);
	view_commit_render(&b, &v);
	ASSERT(
	    strstr(b.data, "No metric changed beyond its min_effect") != NULL);
	buf_release(&b);
}

/*
 * One verdict order for every page: the overview's badge (the worst
 * verdict of a job's comparisons), a series' patch row and the commit
 * page's rows agree, so a badge names the first row of the page it
 * links to.  An improvement is measured news and goes before an
 * inconclusive comparison, which measured nothing beyond its noise.
 */
TEST(test_web__verdict_order_one)
{
	static const char *const order[] = { "regression", "unstable", "failed",
		"running", "queued", "improvement", "inconclusive", "unchanged",
		"info", "bogus" };
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_cmp_row rows[] = {
		rrow("epyc", "read_clat", "lower", 10, 11, 10, "inconclusive"),
		rrow("epyc", "latency_p99", "lower", 100, 101, 1, "unchanged"),
		rrow(
		    "epyc", "write_iops", "higher", 100, 105, 5, "improvement"),
	};
	struct view_commit v = { 0 };
	size_t i;

	for (i = 0; i + 1 < sizeof(order) / sizeof(order[0]); i++)
		ASSERT(layout_verdict_rank(order[i]) <
		    layout_verdict_rank(order[i + 1]));
	ASSERT_INTEQ(layout_verdict_rank(NULL), layout_verdict_rank("bogus"));
	ASSERT_STREQ(layout_worst_verdict("unchanged,inconclusive,improvement"),
	    "improvement");
	ASSERT_STREQ(layout_worst_verdict("inconclusive,unstable"), "unstable");
	ASSERT_STREQ(
	    layout_worst_verdict("unchanged,inconclusive"), "inconclusive");
	ASSERT(layout_worst_verdict("info") == NULL);
	ASSERT(layout_worst_verdict(NULL) == NULL);
	/* The commit page puts the same verdict first. */
	v.kind = VIEW_COMMIT;
	v.id = "0123456789abcdef0123456789abcdef01234567";
	v.title = "mm: memcg: a change";
	v.rows = rows;
	v.nrows = sizeof(rows) / sizeof(rows[0]);
	view_commit_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(at(b.data, ">write_iops</a>") < at(b.data, ">read_clat</a>"));
	ASSERT(at(b.data, ">read_clat</a>") < at(b.data, ">latency_p99</a>"));
	buf_release(&b);
}

TEST(test_web__commit_budget)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_cmp_row *rows = cmp_rows(3000);
	struct view_commit v = { 0 };

	v.kind = VIEW_COMMIT;
	v.id = "0123456789abcdef0123456789abcdef01234567";
	v.title = big();
	v.rows = rows;
	v.nrows = 3000;
	view_commit_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "more rows not shown") != NULL);
	free(rows);
	buf_release(&b);
}

static struct view_hist_point *
hist_points(size_t n)
{
	struct view_hist_point *p = xcalloc(n, sizeof(*p));
	size_t i;

	for (i = 0; i < n; i++) {
		p[i].commit = H(i);
		p[i].subject = H(i + 1);
		p[i].time = 1733000000 + 3600 * (int64_t)i;
		p[i].value = i < n / 2 ? 100 + (double)(i % 3) : 80;
		p[i].low = p[i].value - 1;
		p[i].high = i % 4 ? p[i].value + 1 : NAN;
		p[i].n = 5;
		p[i].alert = i == n / 2 ? H(i + 2) : NULL;
		p[i].pair_id = (int64_t)i;
	}
	return p;
}

TEST(test_web__history_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_hist_point *p = hist_points(40);
	struct view_change_point cps[2] = { { 20, -20.0 }, { 1000, NAN } };
	struct view_history h = { 0 };

	p[3].value = NAN;
	h.tree = H(0);
	h.branch = H(1);
	h.host = H(2);
	h.job = H(3);
	h.point = H(10);
	h.metric = H(4);
	h.unit = H(5);
	h.better = "higher";
	h.from = H(1);
	h.to = H(10);
	h.points = p;
	h.npoints = 40;
	h.cps = cps;
	h.ncps = 2;
	h.pager.next_cursor = H(1);
	view_history_render(&b, &h);
	ASSERT_PAGE(&b);
	/* 39 finite values, one red alert point with a marker. */
	ASSERT_INTEQ(count(b.data, "<circle"), 39);
	ASSERT_INTEQ(count(b.data, "class=\"pt alert\""), 1);
	ASSERT_INTEQ(count(b.data, "class=\"mark\""), 1);
	/* Only the change point inside the data is drawn. */
	ASSERT_INTEQ(count(b.data, "<line class=\"cp\""), 1);
	ASSERT(strstr(b.data, "Change points") != NULL);
	ASSERT(strstr(b.data, "-20.00%") != NULL);
	ASSERT(strstr(b.data, "commits, oldest to newest") != NULL);
	ASSERT(strstr(b.data, "rel=\"next\" href=\"/history?tree=") != NULL);
	free(p);
	buf_release(&b);
}

TEST(test_web__history_many_points_and_empty)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_hist_point *p = hist_points(5000);
	struct view_history h = { 0 };

	h.metric = "throughput";
	h.host = "epyc";
	h.points = p;
	h.npoints = 5000;
	view_history_render(&b, &h);
	ASSERT_PAGE(&b);
	ASSERT(count(b.data, "<circle") <= SVG_MAX_POINTS);
	ASSERT(strstr(b.data, "more rows not shown") != NULL);
	buf_reset(&b);
	h.npoints = 0;
	view_history_render(&b, &h);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, ">no data</text>") != NULL);
	free(p);
	buf_release(&b);
}

static double
attr_num(const char *s, const char *attr)
{
	const char *p = strstr(s, attr);

	return p ? strtod(p + strlen(attr), NULL) : NAN;
}

/*
 * The line path has one M per unbroken run of finite values, and higher
 * values are drawn higher (smaller y).
 */
TEST(test_web__svg_line_breaks_at_unknown)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_hist_point p[5] = { 0 };
	struct view_history h = { 0 };
	const char *d;
	double cx[8], cy[8];
	size_t i, k, moves = 0, circles = 0;

	for (i = 0; i < 5; i++) {
		p[i].value = (double)i;
		p[i].low = p[i].high = NAN;
	}
	p[2].value = NAN;
	h.points = p;
	h.npoints = 5;
	svg_history(&b, &h);
	d = strstr(b.data, "class=\"line\" d=\"");
	ASSERT(d != NULL);
	for (d += 16; *d != '"'; d++)
		moves += *d == 'M';
	ASSERT_INTEQ(moves, 2);
	/* Values grow left to right, so y must shrink as x grows. */
	for (d = b.data; (d = strstr(d, "<circle")) != NULL && circles < 8;
	     d++) {
		cx[circles] = attr_num(d, "cx=\"");
		cy[circles++] = attr_num(d, "cy=\"");
	}
	for (i = 0; i < circles; i++)
		for (k = 0; k < circles; k++)
			ASSERT_MSG(cx[i] <= cx[k] || cy[i] < cy[k],
			    "(%g,%g) vs (%g,%g)", cx[i], cy[i], cx[k], cy[k]);
	ASSERT_INTEQ(circles, 4);
	buf_release(&b);
}

TEST(test_web__ci_bar_relative_to_min_effect)
{
	struct buf b = BUF_INIT(4096);
	const char *band, *bar;
	double bx, bw, cx, cw;

	svg_ci_bar(&b, 2, 3, 4, 1, "regression", 0);
	ASSERT(strstr(b.data, "95% CI +2.00% .. +4.00%") != NULL);
	band = strstr(b.data, "class=\"band\"");
	bar = strstr(b.data, "class=\"ci v-regression\"");
	ASSERT(band && bar);
	bx = attr_num(band, "x=\"");
	bw = attr_num(band, "width=\"");
	cx = attr_num(bar, "x=\"");
	cw = attr_num(bar, "width=\"");
	/* The band is centred on 0 (x=60); the interval lies right of it. */
	ASSERT_NEAR(bx + bw / 2, 60, 0.2);
	ASSERT(cx > bx + bw);
	ASSERT_NEAR(cw, 2 * bw / 2, 0.3);
	buf_reset(&b);
	/* Inside the band: unchanged. */
	svg_ci_bar(&b, -0.5, 0.1, 0.5, 1, "unchanged", NAN);
	band = strstr(b.data, "class=\"band\"");
	bar = strstr(b.data, "class=\"ci v-unchanged\"");
	ASSERT(band && bar);
	ASSERT(attr_num(bar, "x=\"") > attr_num(band, "x=\""));
	buf_reset(&b);
	svg_ci_bar(&b, NAN, 1, 2, 1, "regression", 10);
	ASSERT(strstr(b.data, "unknown") != NULL);
	ASSERT(strstr(b.data, "<svg") == NULL);
	buf_release(&b);
}

/*
 * The interval bars of one table share a scale, said in its header:
 * a +-1% interval beside a -20% one is drawn narrow, not as wide as it.
 */
TEST(test_web__ci_bars_share_a_scale)
{
	struct view_cmp_row r[2];
	struct view_commit v = { 0 };
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	const char *bar[2];
	size_t i;

	memset(r, 0, sizeof(r));
	for (i = 0; i < 2; i++) {
		r[i].host = "h";
		r[i].bench = "b";
		r[i].metric = i ? "wide" : "narrow";
		r[i].better = "higher";
		r[i].verdict = "regression";
		r[i].base_median = r[i].cand_median = 1;
		r[i].base_mean = r[i].base_sd = NAN;
		r[i].cand_mean = r[i].cand_sd = NAN;
		r[i].p = 0.01;
		r[i].min_effect = 1;
		r[i].memcg_tax_pct = r[i].memcg_tax_base_pct = NAN;
		r[i].charge_share_pct = r[i].charge_share_base_pct = NAN;
	}
	r[0].ci_low = -3;
	r[0].change_pct = -2;
	r[0].ci_high = -1;
	r[1].ci_low = -20;
	r[1].change_pct = -15;
	r[1].ci_high = -10;
	v.kind = VIEW_COMMIT;
	v.id = "c";
	v.title = "t";
	v.rows = r;
	v.nrows = 2;
	view_commit_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT_MSG(strstr(b.data,
	               "<th>95% CI <span class=\"muted ci-scale\">bar "
	               "&plusmn;22%</span></th>") != NULL,
	    "the table's header does not say the bars' scale");
	bar[0] = strstr(b.data, "95% CI -3.00% .. -1.00%");
	bar[1] = strstr(b.data, "95% CI -20.00% .. -10.00%");
	ASSERT(bar[0] && bar[1]);
	for (i = 0; i < 2; i++)
		ASSERT(strstr(bar[i], "edges &#177;22.00%</title>") ==
		    strstr(bar[i], "edges"));
	/* 2 of 22 points on a 57-pixel half: about 5 pixels, not 47. */
	bar[0] = strstr(bar[0], "class=\"ci v-regression\"");
	ASSERT(bar[0] != NULL);
	ASSERT(attr_num(bar[0], "width=\"") < 8);
	buf_release(&b);
}

static struct view_regression *
regressions(size_t n)
{
	struct view_regression *r = xcalloc(n, sizeof(*r));
	size_t i;

	for (i = 0; i < n; i++) {
		r[i].id = (int64_t)i + 1;
		r[i].tree = H(i);
		r[i].branch = i % 2 ? H(i + 1) : NULL;
		r[i].commit = i % 3 ? H(i + 2) : NULL;
		r[i].pair_id = (int64_t)i % 4;
		r[i].subject = H(i + 3);
		r[i].host = H(i + 4);
		r[i].bench = H(i + 5);
		r[i].point = H(i + 6);
		r[i].metric = H(i + 7);
		r[i].change_pct = -12.5;
		r[i].verdict = i % 2 ? "regression" : H(i);
		r[i].state = i % 2 ? "acknowledged" : H(i);
		r[i].note = H(i + 8);
		r[i].created = 1733000000;
	}
	return r;
}

TEST(test_web__regressions_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_regression *rows = regressions(24);
	struct view_regressions v = { 0 };

	v.tree = H(0);
	v.host = H(1);
	v.bench = H(10);
	v.state = "fixed";
	v.rows = rows;
	v.nrows = 24;
	v.pager.next_cursor = H(2);
	v.flash = H(3);
	view_regressions_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "Log in</a> to triage") != NULL);
	ASSERT(strstr(b.data, "name=\"csrf\"") == NULL);
	ASSERT(strstr(b.data, "<option selected>fixed</option>") != NULL);
	buf_reset(&b);
	v.session.admin = 1;
	v.session.csrf = "tok\"en<";
	view_regressions_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "action=\"/regressions/2/triage\"") != NULL);
	ASSERT(
	    strstr(b.data, "name=\"csrf\" value=\"tok&quot;en&lt;\"") != NULL);
	ASSERT(
	    strstr(b.data, "<option selected>acknowledged</option>") != NULL);
	ASSERT(strstr(b.data, "action=\"/logout\"") != NULL);
	buf_reset(&b);
	free(rows);
	rows = regressions(4000);
	v.rows = rows;
	v.nrows = 4000;
	view_regressions_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "more rows not shown") != NULL);
	free(rows);
	/* A page the scan budget stopped says so, not "none match". */
	buf_reset(&b);
	v.rows = NULL;
	v.nrows = 0;
	v.partial = 1;
	view_regressions_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "read the newest regressions here and stopped") !=
	    NULL);
	ASSERT(strstr(b.data, "No regressions match") == NULL);
	buf_reset(&b);
	v.partial = 0;
	view_regressions_render(&b, &v);
	ASSERT(strstr(b.data, "No regressions match") != NULL);
	ASSERT(strstr(b.data, "and stopped") == NULL);
	buf_release(&b);
}

/* Regressions are grouped per report (commit or pair, job, host): fio's
 * read_iops and read_bw of one commit on one host are one finding, the
 * same commit on another host another; a submitted pair says so instead
 * of leaving commit, subject and tree empty. */
TEST(test_web__regressions_grouped)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_regression r[4] = { 0 };
	const char *p, *q;
	int headers = 0;
	size_t i;

	for (i = 0; i < 4; i++) {
		r[i].id = (int64_t)i + 1;
		r[i].tree = "mm";
		r[i].branch = "mm-new";
		r[i].commit = "0123456789abcdef0123456789abcdef01234567";
		r[i].subject = "mm: memcg: a change";
		r[i].pair_id = 7;
		r[i].host = "epyc";
		r[i].bench = "fio";
		r[i].point = "bs=4k";
		r[i].change_pct = -50;
		r[i].verdict = "regression";
	}
	r[0].metric = "read_iops";
	r[1].metric = "read_bw";
	r[1].change_pct = -49.5;
	r[2].metric = "read_iops";
	r[2].host = "xeon";
	r[2].pair_id = 8;
	r[3].metric = "ops";
	r[3].commit = r[3].subject = r[3].tree = r[3].branch = NULL;
	r[3].pair_id = 9;
	r[3].bench = "kv";
	struct view_regressions v = { .rows = r, .nrows = 4 };
	view_regressions_render(&b, &v);
	ASSERT_PAGE(&b);
	for (q = b.data; (q = strstr(q, "<tr class=\"grp report\">")); q++)
		headers++;
	ASSERT_INTEQ(headers, 3);
	p = strstr(b.data,
	    "fio <span class=\"muted\">on</span> epyc "
	    "<span class=\"muted\">(2 metrics)");
	ASSERT(p != NULL);
	/* Both metrics of the epyc report follow its header, before the
	 * xeon report. */
	q = strstr(b.data, "epyc");
	ASSERT(
	    strstr(p, "id=\"r1\"") != NULL && strstr(p, "id=\"r2\"") != NULL);
	ASSERT(strstr(p, "id=\"r2\"") < strstr(p, "xeon"));
	ASSERT(q != NULL);
	ASSERT(strstr(b.data, "a submitted pair (no commit)") != NULL);
	ASSERT(strstr(b.data, "href=\"/pair/9\"") != NULL);
	buf_release(&b);
}

TEST(test_web__hosts_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_host *h = xcalloc(3000, sizeof(*h));
	struct view_hosts v = { 0 };
	size_t i;

	for (i = 0; i < 3000; i++) {
		h[i].id = (int64_t)i + 1;
		h[i].name = H(i);
		h[i].labels = H(i + 1);
		h[i].cpu_model = i % 2 ? "AMD EPYC 7702" : H(i + 2);
		h[i].cpu_vendor = H(i + 3);
		h[i].sockets = i % 2 ? 2 : 0;
		h[i].cores = 128;
		h[i].threads = 256;
		h[i].numa_nodes = 8;
		h[i].memory_bytes = i % 2 ? 540000000000LL : -1;
		h[i].kernel = H(i + 4);
		h[i].cgroup = H(i + 5);
		h[i].state = i % 2 ? "online" : H(i);
		h[i].current_job = i % 2 ? 7 : 0;
		h[i].progress = H(i + 6);
		h[i].last_seen = i % 3 ? 1733000000 : 0;
	}
	v.now = 1733000042;
	v.rows = h;
	v.nrows = 5;
	view_hosts_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "AMD EPYC 7702") != NULL);
	ASSERT(strstr(b.data, "503 GiB") != NULL);
	ASSERT(strstr(b.data, ">online<") != NULL);
	ASSERT(strstr(b.data, ">offline<") != NULL);
	ASSERT(strstr(b.data, "42 s ago") != NULL);
	ASSERT(strstr(b.data, "never") != NULL);
	buf_reset(&b);
	v.nrows = 3000;
	view_hosts_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "more rows not shown") != NULL);
	free(h);
	buf_release(&b);
}

TEST(test_web__jobs_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_job *j = xcalloc(2000, sizeof(*j));
	struct view_jobs v = { 0 };
	size_t i;

	for (i = 0; i < 2000; i++) {
		j[i].id = (int64_t)i + 1;
		j[i].pair_id = (int64_t)i / 2;
		j[i].role = H(i);
		j[i].name = H(i + 1);
		j[i].point = H(i + 2);
		j[i].state = i % 3 ? "running" : H(i);
		j[i].host = H(i + 3);
		j[i].attempts = 2;
		j[i].runs = 10;
		j[i].runs_done = 3;
		j[i].progress = i % 2 ? "run 3/10" : NULL;
		j[i].error = H(i + 4);
		j[i].created = 1733000000;
	}
	v.state = H(1);
	v.rows = j;
	v.nrows = 7;
	v.pager.later = 1;
	v.pager.total = 2000;
	view_jobs_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "badge v-running\">running run 3/10") != NULL);
	ASSERT(strstr(b.data, "2000 in all") != NULL);
	ASSERT(strstr(b.data, "&laquo; newest") != NULL);
	buf_reset(&b);
	v.nrows = 2000;
	view_jobs_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "more rows not shown") != NULL);
	free(j);
	buf_release(&b);
}

/* A job page: its log line by line, escaped, its last lines when long;
 * the three list pages on hostile rows. */
TEST(test_web__job_and_lists_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_job_page v = { 0 };
	struct view_job_run r[2] = { { 0, 1, "ok", NULL, NULL, 1.5 },
		{ 1, 2, H(1), H(2), H(3), NAN } };
	struct view_series_item si[3] = { { 0 } };
	struct view_series_list sl = { si, 3, { 0 } };
	struct view_latency_stage st[2] = {
		{ "pickup", "posted", "seen", 4, 50, 200 },
		{ "<script>", H(1), H(2), 0, 0, 0 },
	};
	struct view_bisect bi[2] = { { 0 } };
	struct view_bisects bl = { bi, 2, { 0 } };
	struct view_alert al[2] = { { 0 } };
	struct view_alerts av = { H(4), H(5), al, 2, { 0 } };
	const char log[] =
	    "line one <b>\r\nline two \x1b[31mred\rthree\n\nfive";
	char *longlog = xmalloc(200 * 1024 + 1);
	size_t i;

	v.title = "Job 7";
	v.job.id = 7;
	v.job.pair_id = 3;
	v.job.role = H(0);
	v.job.name = H(1);
	v.job.state = "running";
	v.job.progress = "run 1/3";
	v.job.commit = H(2);
	v.job.subject = H(3);
	v.job.error = H(4);
	v.runs = r;
	v.nruns = 2;
	v.log = log;
	v.log_len = sizeof(log) - 1;
	view_job_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data,
	           "<pre class=\"log\"><span class=\"ln\">line one &lt;b&gt;"
	           "</span>\n<span class=\"ln\">line two \xef\xbf\xbd[31mred"
	           "</span>\n<span class=\"ln\">three</span>\n"
	           "<span class=\"ln\"></span>\n<span class=\"ln\">five"
	           "</span>\n</pre>") != NULL);
	ASSERT(strstr(b.data, "href=\"/pair/3\"") != NULL);
	ASSERT(strstr(b.data, "href=\"/api/v1/jobs/7/runs/1/raw\"") != NULL);
	/* 200 KiB of lines of 99 bytes: the last ones, whole, and a note. */
	for (i = 0; i < 200 * 1024; i++)
		longlog[i] = i % 100 == 99 ? '\n' : (char)('a' + i % 26);
	longlog[200 * 1024] = '\0';
	v.log = longlog;
	v.log_len = 200 * 1024;
	buf_reset(&b);
	view_job_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "bytes are not shown here") != NULL);
	ASSERT(strstr(b.data, "<span class=\"ln\">") != NULL);
	ASSERT(strstr(strstr(b.data, "<pre"),
	           "<span class=\"ln\">"
	           "efgh") != NULL);
	free(longlog);
	for (i = 0; i < 3; i++) {
		si[i].id = (int64_t)i + 1;
		si[i].title = H(i);
		si[i].author = H(i + 1);
		si[i].tree = i ? H(i + 2) : NULL;
		si[i].branch = H(i + 3);
		si[i].inbox = H(i + 4);
		si[i].state = H(i + 5);
		si[i].commit = H(i + 6);
		si[i].verdicts = "unchanged,regression";
		si[i].version = (int64_t)i;
		si[i].total = -1;
	}
	buf_reset(&b);
	view_series_list_render(&b, &sl);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "href=\"/series/3\"") != NULL);
	ASSERT(strstr(b.data, "badge v-regression") != NULL);
	ASSERT(strstr(b.data, "Time to report") == NULL);
	/* With the last days' time to report: each stage's median and 90th
	 * percentile, unknown where no series knows it. */
	sl.latency_days = 30;
	sl.latency_series = 4;
	sl.stages = st;
	sl.nstages = 2;
	buf_reset(&b);
	view_series_list_render(&b, &sl);
	ASSERT_PAGE(&b);
	ASSERT_MSG(strstr(b.data,
	               "<tr><th scope=\"row\">pickup</th><td>posted</td>"
	               "<td>seen</td><td class=\"n\">4</td><td class=\"n\">50 "
	               "s</td><td class=\"n\">3 min</td></tr>") != NULL,
	    "no pickup stage");
	ASSERT(strstr(b.data, "<th scope=\"row\">&lt;script&gt;") != NULL);
	ASSERT(
	    strstr(b.data, "Of the 4 series seen in the last 30 days") != NULL);
	for (i = 0; i < 2; i++) {
		bi[i].id = (int64_t)i + 1;
		bi[i].regression_id = (int64_t)i + 5;
		bi[i].cp = (int)i;
		bi[i].tree = H(i);
		bi[i].job = H(i + 1);
		bi[i].host = H(i + 2);
		bi[i].metric = H(i + 3);
		bi[i].good = H(i + 4);
		bi[i].bad = H(i + 5);
		bi[i].state = H(i + 6);
		bi[i].culprit = H(i + 7);
		bi[i].culprit_subject = H(i + 8);
		al[i].id = (int64_t)i + 1;
		al[i].kind = H(i);
		al[i].target = H(i + 1);
		al[i].subject = H(i + 2);
		al[i].state = H(i + 3);
		al[i].error = H(i + 4);
		al[i].sha = H(i + 5);
	}
	buf_reset(&b);
	view_bisects_render(&b, &bl);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "href=\"/bisect/2\"") != NULL);
	ASSERT(strstr(b.data, "href=\"/regressions#r5\"") != NULL);
	buf_reset(&b);
	view_alerts_render(&b, &av);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "<th>commit</th>") != NULL);
	ASSERT(strstr(b.data, "No alerts.") == NULL);
	buf_release(&b);
}

/* The trees and commits pages on hostile names: escaped text, encoded
 * links, a tree without a branch or fetch said so. */
TEST(test_web__trees_and_commits_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_tree_branch br[2] = {
		{ H(0), "aaaa", "ok", NULL, 12, 1733000000 },
		{ "a&b c", NULL, "missing", H(1), 0, 0 },
	};
	struct view_tree t[2] = {
		{ H(2), H(3), "warning", H(4), 1733000000, 1733000000, 3, 12,
		    br, 2 },
		{ "<t>", "file:///x", "pending", NULL, 0, 0, 0, 0, NULL, 0 },
	};
	struct view_trees v = { t, 2, { "zz", 1, 0 } };
	struct view_commit_item c[1] = {
		{ "abcdef0123456789", H(5), H(6), "master", 1733000000 },
	};
	struct view_commits vc = { "a&b", "x y", c, 1, { "7", 0, 0 } };

	view_trees_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data,
	           "<a href=\"/commits?tree=%3Ct%3E\">&lt;t&gt;</a>") != NULL);
	ASSERT(strstr(b.data, "branch=a%26b%20c\">a&amp;b c</a>") != NULL);
	ASSERT(strstr(b.data, "No branch seen yet.") != NULL);
	ASSERT(strstr(b.data, "3 failed fetches in a row") != NULL);
	ASSERT(strstr(b.data, "href=\"/commit/aaaa\"") != NULL);
	ASSERT(strstr(b.data, "href=\"/trees?cursor=zz\"") != NULL);
	buf_reset(&b);
	view_commits_render(&b, &vc);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "<h1>Commits of a&amp;b / x y</h1>") != NULL);
	ASSERT(strstr(b.data, "href=\"/commit/abcdef0123456789\"") != NULL);
	ASSERT(
	    strstr(b.data,
	        "/commits?tree=a%26b&amp;branch=x%20y&amp;cursor=7") != NULL);
	buf_release(&b);
}

TEST(test_web__message_and_login_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_message m = { 404, H(0), big() };
	struct view_login l = { H(1), H(2), H(10) };

	view_message_render(&b, &m);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "<h1>404 ") != NULL);
	buf_reset(&b);
	view_login_render(&b, &l);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "type=\"password\"") != NULL);
	ASSERT(strstr(b.data, "name=\"csrf\"") != NULL);
	buf_release(&b);
}

/* The checker itself must catch what it is for, or the tests prove nothing. */
TEST(test_web__checker_catches_bad_markup)
{
	char why[256];

	ASSERT(well_formed("<p><b>x</b></p>", why, sizeof(why)));
	ASSERT(!well_formed("<p><b>x</p></b>", why, sizeof(why)));
	ASSERT(!well_formed("<p>a < b</p>", why, sizeof(why)));
	ASSERT(!well_formed("<p>a & b</p>", why, sizeof(why)));
	ASSERT(!well_formed("<p title=\"<x>\">a</p>", why, sizeof(why)));
	ASSERT(!well_formed("<p>", why, sizeof(why)));
	ASSERT(well_formed(
	    "<p><br><input x=\"1\"><circle r=\"1\"/></p>", why, sizeof(why)));
	ASSERT(!clean_utf8("a\x01", 2));
	ASSERT(!clean_utf8("\xff", 1));
	ASSERT(!clean_utf8("\xe2\x80\xae", 3));
	ASSERT(contains_ci("x<ScRiPt", "<script"));
}

/* A series page: every title, subject and author hostile, one patch row
 * per patch, in seq order, each linking its commit. */
TEST(test_web__series_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_patch p[NHOSTILE + 1];
	struct view_commit v = { 0 };
	size_t i, rows = 0;
	const char *q;

	for (i = 0; i <= NHOSTILE; i++) {
		p[i].seq = (int64_t)i + 1;
		p[i].subject = H(i);
		p[i].author = H(i + 1);
		p[i].commit = i % 2 ? NULL : "0123456789abcdef0123";
		p[i].verdict = NULL;
	}
	for (i = 0; i <= NHOSTILE; i++) {
		v.kind = VIEW_SERIES;
		v.id = "12";
		v.title = H(i);
		v.author = H(i + 2);
		v.tree = H(i + 3);
		v.branch = H(i + 4);
		v.base = H(i + 5);
		v.note = H(i + 6);
		v.patches = p;
		v.npatches = NHOSTILE + 1;
		buf_reset(&b);
		view_commit_render(&b, &v);
		ASSERT_PAGE(&b);
	}
	for (q = b.data; (q = strstr(q, "<tr class=\"patch\">")) != NULL; q++)
		rows++;
	ASSERT_INTEQ(rows, NHOSTILE + 1);
	ASSERT(strstr(b.data, "href=\"/commit/0123456789abcdef0123\"") != NULL);
	ASSERT(strstr(b.data, "not applied") != NULL);
	ASSERT(strstr(b.data, "&lt;script&gt;alert(&#39;x&#39;)") != NULL);
	buf_release(&b);
}

/* The API and the dashboard answer a store error with the same status
 * (they used to differ on ERR_EXISTS: 409 and 500). */
TEST(test_web__one_status_per_error)
{
	ASSERT_INTEQ(reply_status_of(ERR_NOTFOUND), 404);
	ASSERT_INTEQ(reply_status_of(ERR_INVALID), 400);
	ASSERT_INTEQ(reply_status_of(ERR_CONFLICT), 409);
	ASSERT_INTEQ(reply_status_of(ERR_EXISTS), 409);
	ASSERT_INTEQ(reply_status_of(-1), 500);
	ASSERT_INTEQ(reply_status_of(0), 500);
}

/* ---- the hosts and jobs reads: the same JSON bytes ---- */

/*
 * A store with every field of a host row and a job row set, hostile
 * text included: two hosts (one online and holding a job, one
 * quarantined), a tree and commit, two pairs (one job running with
 * progress and a lease, one failed with an error).
 */
static void
rows_store(struct store **out)
{
	struct store *s = NULL;
	struct err e = { 0 };
	static int nth;
	/* A new file each time: the tests that use it run in any order. */
	char *p = xasprintf("%s/rows%d.db", test_tmpdir(), ++nth);
	struct store_job_new base = { "base", "{\"parser\":\"fio\"}", "[]", 3,
		5, 2, 0 };
	struct store_job_new cand = { "candidate", "{\"parser\":\"fio\"}", "[]",
		3, 5, 2, 0 };
	struct store_commit c = { "0123456789abcdef0123456789abcdef01234567",
		"", "A <a@x>", "C <c@x>", 1000, 1001, hostile[1], "[]" };
	int64_t ha, hb, tree, cid, pair1, pair2, job, exp, runs;
	struct store_claimed cl;

	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	free(p);
	ASSERT(store_tree_sync(s, &tree, "linux<&>", "https://x/l.git") == 0);
	ASSERT(
	    store_commit_record(s, &cid, NULL, tree, &c, "master", 1002) == 0);
	ASSERT(store_host_register(s, &ha, "epyc-1", "[\"epyc\",\"x\\\"<y\"]",
	           "{\"cpu_model\":\"EPYC <9654>\",\"cores\":96,"
	           "\"memory_bytes\":1073741824}",
	           1000) == 0);
	ASSERT(store_host_register(s, &hb, hostile[0], "[]", "{}", 1100) == 0);
	base.commit_id = cand.commit_id = cid;
	ASSERT(store_pair_create(s, &pair1, NULL, NULL, "fio-randread", "bs=4k",
	           &base, &cand, 1200) == 0);
	base.commit_id = cand.commit_id = 0;
	ASSERT(store_pair_create(s, &pair2, NULL, NULL, hostile[2], "", &base,
	           &cand, 1300) == 0);
	ASSERT(store_claim(s, &cl, ha, 1400, 60) == 0);
	job = cl.job_id;
	store_claimed_release(&cl);
	ASSERT(store_heartbeat(
	           s, &exp, &runs, ha, job, "run 1/3 <b>", 1410, 60) == 0);
	ASSERT(store_claim(s, &cl, hb, 1500, 60) == 0);
	job = cl.job_id;
	store_claimed_release(&cl);
	ASSERT(store_finish(s, hb, job, 0, "boom \"x\" </pre>", 1510) == 0);
	ASSERT(store_canary_judge(s, pair2, "cv 9% > 3% <i>", 1520) == 0);
	*out = s;
}

/*
 * 0 when b holds the bytes of tests/data/web/NAME.json (NAME with an
 * extension: that file); else -1 after
 * a failure message, with b's bytes in the scratch directory's NAME.out.
 */
static int
same_as_golden(const struct buf *b, const char *name)
{
	struct buf want = BUF_INIT(1 << 20);
	/* NAME.json, or NAME as it is when it has an extension. */
	const char *ext = strchr(name, '.') ? "" : ".json";
	char *golden = xasprintf("tests/data/web/%s%s", name, ext);
	char *out = xasprintf("%s/%s.out", test_tmpdir(), name);
	int r = -1;

	if (files_write(out, b->data, b->len) != 0)
		test_fail(__FILE__, __LINE__, "%s: %s", out, strerror(errno));
	else if (files_read(&want, test_srcpath(golden), 1 << 20) != 0)
		test_fail(
		    __FILE__, __LINE__, "%s: %s", golden, strerror(errno));
	else if (b->len != want.len || memcmp(b->data, want.data, b->len))
		test_fail(__FILE__, __LINE__,
		    "the JSON differs from %s: see %s", golden, out);
	else
		r = 0;
	free(golden);
	free(out);
	buf_release(&want);
	return r;
}

static void
rows_hosts(struct buf *b, struct store *s, int64_t limit, int64_t cursor)
{
	struct store_hosts l;
	json_t *o;

	ASSERT(store_host_list(s, &l, limit, cursor, 1800, 500) == 0);
	o = rows_hosts_json(&l);
	store_hosts_release(&l);
	pwjson_dump_buf(b, o);
	buf_putc(b, '\n');
	json_decref(o);
}

static void
rows_jobs(struct buf *b, struct store *s, const char *state, int64_t limit,
    int64_t cursor)
{
	struct store_jobs l;
	json_t *o;

	ASSERT(store_job_list(s, &l, state, limit, cursor) == 0);
	o = rows_jobs_json(&l);
	store_jobs_release(&l);
	pwjson_dump_buf(b, o);
	buf_putc(b, '\n');
	json_decref(o);
}

/*
 * GET /api/v1/hosts and /api/v1/jobs (and the pages drawn from the same
 * rows) answer the bytes tests/data/web/rows.json holds: that file was
 * written by the store of before the typed reads (fc0d8d1), when it made
 * the JSON itself; now the store returns structs and web/rows.c makes it.  On a
 * difference the bytes made now are in the scratch directory's rows.out.
 */
TEST(test_web__hosts_jobs_json_unchanged)
{
	struct buf b = BUF_INIT(1 << 20);
	struct store *s = NULL;

	rows_store(&s);
	ASSERT(s != NULL);
	rows_hosts(&b, s, 50, 0);
	rows_hosts(&b, s, 1, 0);
	rows_hosts(&b, s, 1, 1);
	rows_hosts(&b, s, 1, 2);
	rows_jobs(&b, s, NULL, 50, 0);
	rows_jobs(&b, s, NULL, 3, 0);
	rows_jobs(&b, s, NULL, 3, 2);
	rows_jobs(&b, s, "failed", 50, 0);
	rows_jobs(&b, s, "running", 50, 0);
	rows_jobs(&b, s, "cancelled", 50, 0);
	store_close(s);
	ASSERT(same_as_golden(&b, "rows") == 0);
	buf_release(&b);
}

/* ---- the pairs and comparisons reads: the same JSON bytes */

/* The id of the one running job of s, or 0. */
static int64_t
running_job(struct store *s)
{
	struct store_jobs l;
	int64_t id = 0;

	if (store_job_list(s, &l, "running", 50, 0) == 0 && l.n == 1)
		id = l.v[0].id;
	store_jobs_release(&l);
	return id;
}

/*
 * rows_store's store and more: runs with metrics and host states on the
 * running job, and three comparisons of pair 1 (a final regression with
 * a note of hostile text and its sides' means and sds, the candidate's sd
 * unknown; an interim one with unknowns, written without them, as
 * before schema v33; a memcg tax).
 */
static void
pairs_store(struct store **out)
{
	static const struct store_metric m[] = {
		{ "iops", "ops/s", "higher", 1000.5 },
		{ "lat <p99>", "us", "lower", 12.25 },
	};
	struct store_comparison c[3] = {
		{ "iops", "ops/s", "higher", "regression", NULL, 3, 5, 1000.5,
		    900.25, -10.02, -12.5, -7.5, 0.001, 0.003, 2, 1, 1, 1000,
		    2.5, 900.5, NAN },
		{ "lat <p99>", "us", "lower", "inconclusive", NULL, 3, 2, 12.25,
		    NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0 },
		{ "memcg_tax.iops", "ratio", "info", "info", NULL, 3, 5, 1.02,
		    1.05, 2.9, 1, 4, 0.2, NAN, NAN, 1 },
	};
	struct store *s = NULL;
	int64_t job, i;

	c[0].note = hostile[0];
	rows_store(&s);
	ASSERT(s != NULL);
	job = running_job(s);
	ASSERT(job > 0);
	for (i = 0; i < 2; i++) {
		struct store_run r = { job, i, "ok", 1.5 + (double)i, NULL,
			"raw <x>", 7, m, 2, NULL,
			"{\"kernel_build\":{\"build_id\":\"b1 <x>\","
			"\"release\":\"6.8.0-pw\",\"boot\":\"qemu\","
			"\"cached\":true}}" };

		ASSERT(store_run_add(s, 1, &r, 1600 + i) == 0);
	}
	for (i = 0; i < 3; i++)
		ASSERT(store_verdict_put(s, NULL, 1, &c[i], 1700) == 0);
	*out = s;
}

/* A line into b of what route (api_job_json) answers for id. */
static void
id_api(struct buf *b, struct store *s, int64_t id,
    int (*route)(struct store *, int64_t, json_t **))
{
	json_t *o = NULL;

	ASSERT(route(s, id, &o) == 0);
	pwjson_dump_buf(b, o);
	buf_putc(b, '\n');
	json_decref(o);
}

/* A line of o's JSON into b; o and the keep of x (the views' strings)
 * are released. */
static void
ctx_dump(struct buf *b, struct ctx *x, json_t *o)
{
	pwjson_dump_buf(b, o);
	buf_putc(b, '\n');
	json_decref(o);
	json_decref(x->keep);
}

/* GET /api/v1/pairs/{id}'s answer (api_pair_json) as a line into b. */
static void
pair_api(struct buf *b, struct store *s, int64_t id)
{
	struct dconf conf = { 0 };
	struct ctx x = { 0 };
	json_t *o = NULL;

	x.s = s;
	x.conf = &conf;
	x.now = 2000;
	x.online_s = 1000;
	x.keep = json_array();
	ASSERT(api_pair_json(&x, id, &o) == 0);
	ctx_dump(b, &x, o);
}

static void
target_api(
    struct buf *b, struct store *s, enum view_target kind, const char *id)
{
	struct dconf conf = { 0 };
	struct ctx x = { 0 };
	json_t *o = NULL;

	x.s = s;
	x.conf = &conf;
	x.keep = json_array();
	ASSERT(web_target_json(&x, kind, id, &o) == 0);
	ctx_dump(b, &x, o);
}

/*
 * GET /api/v1/pairs/{id} and /api/v1/comparisons (pair and commit) answer
 * the bytes tests/data/web/pairs.json holds, which the store wrote when it
 * made the pair's JSON itself (before the typed pair read).  On a
 * difference the bytes made now are in the scratch directory's
 * pairs.out.
 */
TEST(test_web__pairs_comparisons_json_unchanged)
{
	struct buf b = BUF_INIT(1 << 20);
	struct store *s = NULL;
	json_t *o = NULL;

	pairs_store(&s);
	ASSERT(s != NULL);
	pair_api(&b, s, 1);
	pair_api(&b, s, 2);
	{
		struct ctx x = { 0 };

		x.s = s;
		x.keep = json_array();
		ASSERT_INTEQ(api_pair_json(&x, 999, &o), ERR_NOTFOUND);
		json_decref(x.keep);
	}
	ASSERT(o == NULL);
	target_api(&b, s, VIEW_PAIR, "1");
	target_api(&b, s, VIEW_PAIR, "2");
	target_api(
	    &b, s, VIEW_COMMIT, "0123456789abcdef0123456789abcdef01234567");
	store_close(s);
	ASSERT(same_as_golden(&b, "pairs") == 0);
	buf_release(&b);
}

/*
 * What a kernel developer quotes beside a median (LKP's reports): each
 * side's mean and %stddev, the interval as text, the runs, and what the
 * pair cost.  A kernel job (its spec has "kernel") in 3 rounds: the
 * base's values of "v <x>" are 10, 12, 14 (mean 12, sd 2, 16.7%) over 2
 * boots, the candidate's 100, 110, 120 (mean 110, sd 10, 9.1%) over 3.
 * Before the verdict the page computes them from the runs; then the
 * comparison's own (schema v33), as the verdict wrote them, win.
 */
static void
spread_store(struct store **out, int64_t *out_pair)
{
	static const char spec[] = "{\"parser\":\"keyvalue\",\"rounds\":3,"
	                           "\"kernel\":{\"config\":\"defconfig\"}}";
	static const double vals[2][3] = { { 10, 12, 14 }, { 100, 110, 120 } };
	static const double boot[2][3] = { { 1, 1, 2 }, { 1, 2, 3 } };
	struct store_job_new base = { "base", spec, "[]", 3, 3, 2, 0 };
	struct store_job_new cand = { "candidate", spec, "[]", 3, 3, 2, 0 };
	struct store *s = NULL;
	struct err e = { 0 };
	struct store_claimed cl;
	char *p = xasprintf("%s/spread.db", test_tmpdir());
	int64_t host, pair, k, i;

	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	free(p);
	ASSERT(store_host_register(s, &host, "epyc-1", "[]", "{}", 1000) == 0);
	ASSERT(store_pair_create(s, &pair, NULL, NULL, "kbench <b>", "x=1",
	           &base, &cand, 1100) == 0);
	for (k = 0; k < 2; k++) {
		int side;

		ASSERT(store_claim(s, &cl, host, 1200 + k, 600) == 0);
		side = strcmp(cl.role, "base") == 0 ? 0 : 1;
		for (i = 0; i < 3; i++) {
			struct store_metric m[] = {
				{ "v <x>", "ops/s", "higher", vals[side][i] },
				{ "kernel.boot", "", "info", boot[side][i] },
			};
			struct store_run r = { cl.job_id, i, "ok", 1.0, NULL,
				NULL, 0, m, 2, NULL, NULL };

			ASSERT_MSG(store_run_add(s, host, &r, 1300 + i) == 0,
			    "run %lld of %s: %s", (long long)i, cl.role,
			    store_errmsg(s));
		}
		/* All its runs in one claim: done, the other side next. */
		ASSERT(store_finish(s, host, cl.job_id, 1, NULL, 1310) == 0);
		store_claimed_release(&cl);
	}
	*out = s;
	*out_pair = pair;
}

static void
pair_page(struct buf *html, struct store *s, const char *id)
{
	struct dconf conf = { 0 };
	struct ctx x = { 0 };
	struct buf b;

	x.s = s;
	x.conf = &conf;
	x.keep = json_array();
	ASSERT(web_target_html(&x, VIEW_PAIR, id, &b) == 0);
	buf_add(html, b.data, b.len);
	buf_release(&b);
	json_decref(x.keep);
}

/* The comparisons row of metric in o's "comparisons". */
static json_t *
cmp_of(json_t *o, const char *metric)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(o, "comparisons"), i,
	    v) if (strcmp(json_string_value(json_object_get(v, "metric")),
	               metric) == 0) return v;
	return NULL;
}

static double
jnum(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

TEST(test_web__pair_side_spread_and_cost)
{
	struct store_comparison c = { "v <x>", "ops/s", "higher", "improvement",
		NULL, 3, 3, 12, 110, 816.7, -1.2, 3.4, 0.0123, 0.0246, 1, 1, 1,
		12, 2, 110, NAN };
	struct store *s = NULL;
	struct dconf conf = { 0 };
	struct ctx x = { 0 };
	struct buf html = BUF_INIT(1 << 20);
	json_t *o = NULL, *r;
	char id[32];
	int64_t pair;

	spread_store(&s, &pair);
	ASSERT(s != NULL);
	snprintf(id, sizeof(id), "%lld", (long long)pair);

	/* No verdict yet: the page's own numbers, from the runs. */
	x.s = s;
	x.conf = &conf;
	x.keep = json_array();
	ASSERT(web_target_json(&x, VIEW_PAIR, id, &o) == 0);
	r = cmp_of(o, "v <x>");
	ASSERT(r != NULL);
	ASSERT_NEAR(jnum(r, "base_mean"), 12, 1e-9);
	ASSERT_NEAR(jnum(r, "base_sd"), 2, 1e-9);
	ASSERT_NEAR(jnum(r, "base_sd_pct"), 100.0 / 6, 1e-9);
	ASSERT_NEAR(jnum(r, "cand_mean"), 110, 1e-9);
	ASSERT_NEAR(jnum(r, "cand_sd"), 10, 1e-9);
	ASSERT_NEAR(jnum(r, "cand_sd_pct"), 1000.0 / 110, 1e-9);
	ASSERT_INTEQ(json_integer_value(json_object_get(r, "base_n")), 3);
	ASSERT_INTEQ(json_integer_value(json_object_get(r, "cand_n")), 3);
	json_decref(o);
	json_decref(x.keep);
	pair_page(&html, s, id);
	ASSERT(!buf_failed(&html));
	ASSERT_MSG(strstr(html.data, ">v &lt;x&gt;</a>") != NULL,
	    "metric not escaped");
	ASSERT_MSG(strstr(html.data,
	               "<td class=\"n mean\">12 &plusmn;2 <span "
	               "class=\"muted\">(16.7%)</span></td>") != NULL,
	    "no base mean 12 &plusmn;2 (16.7%%)");
	ASSERT_MSG(strstr(html.data,
	               "<td class=\"n mean\">110 &plusmn;10 <span "
	               "class=\"muted\">(9.1%)</span></td>") != NULL,
	    "no candidate mean 110 &plusmn;10 (9.1%%)");
	ASSERT_MSG(strstr(html.data, "<td class=\"n\">3 / 3</td>") != NULL,
	    "no runs per side");
	/* What it cost: 3 rounds a side (in the sides table, not again in
	 * the head), and the boots the runs record. */
	ASSERT_MSG(strstr(html.data, "<tr><th>rounds</th>") == NULL,
	    "the rounds said twice");
	ASSERT_MSG(strstr(html.data,
	               "</td><td class=\"n\">3</td></tr>\n</table>\n<h2>What "
	               "changed</h2>") != NULL,
	    "no rounds in the sides table");
	ASSERT_MSG(strstr(html.data,
	               "<tr><th>boots</th><td class=\"cost\">base 2, "
	               "candidate 3 <span class=\"muted\">(5 in all;") != NULL,
	    "no boots row");
	ASSERT(strstr(html.data, "kbench &lt;b&gt;") != NULL);
	ASSERT(strstr(html.data, "kbench <b>") == NULL);

	/* The verdict's row (as daemon/verdict.c writes it) wins: its
	 * interval as text, its means, its unknown candidate sd. */
	ASSERT(store_verdict_put(s, NULL, pair, &c, 1400) == 0);
	/* As its API route calls it: no page's keep. */
	x.keep = NULL;
	ASSERT(api_pair_json(&x, pair, &o) == 0);
	ASSERT(x.keep == NULL);
	r = cmp_of(o, "v <x>");
	ASSERT(r != NULL);
	ASSERT_NEAR(jnum(r, "base_mean"), 12, 0);
	ASSERT_NEAR(jnum(r, "base_sd"), 2, 0);
	ASSERT_NEAR(jnum(r, "base_sd_pct"), 100.0 / 6, 1e-9);
	ASSERT_NEAR(jnum(r, "cand_mean"), 110, 0);
	ASSERT(json_is_null(json_object_get(r, "cand_sd")));
	ASSERT(json_is_null(json_object_get(r, "cand_sd_pct")));
	ASSERT_INTEQ(json_integer_value(
	                 json_object_get(json_object_get(o, "base"), "rounds")),
	    3);
	ASSERT_INTEQ(json_integer_value(
	                 json_object_get(json_object_get(o, "base"), "boots")),
	    2);
	ASSERT_INTEQ(json_integer_value(json_object_get(
	                 json_object_get(o, "candidate"), "boots")),
	    3);
	/* What was compared, as the page's sides: base then candidate. */
	{
		json_t *sides = json_object_get(o, "sides");
		json_t *sb = json_array_get(sides, 0),
		       *sc = json_array_get(sides, 1);

		ASSERT_INTEQ(json_array_size(sides), 2);
		ASSERT_STREQ(web_jstr(sb, "role"), "base");
		ASSERT_STREQ(web_jstr(sc, "role"), "candidate");
		ASSERT_INTEQ(
		    json_integer_value(json_object_get(sb, "rounds")), 3);
		ASSERT_INTEQ(
		    json_integer_value(json_object_get(sb, "pair_id")), pair);
		ASSERT(json_object_get(sc, "kernel") != NULL);
		ASSERT(json_object_get(sc, "cpu_model") != NULL);
	}
	json_decref(o);
	json_decref(x.keep);
	buf_reset(&html);
	pair_page(&html, s, id);
	ASSERT_MSG(
	    strstr(html.data,
	        "<span class=\"ci-text\">[-1.20%, +3.40%]</span>") != NULL,
	    "no interval as text");
	ASSERT_MSG(strstr(html.data,
	               "<td class=\"n mean\">110 &plusmn;unknown</td>") != NULL,
	    "the candidate's unknown sd is not shown unknown");
	ASSERT(strstr(html.data, "<td class=\"n\">0.0123</td>") != NULL);
	store_close(s);
	buf_release(&html);
}

/*
 * A comparison page names what ran where before its numbers: each side's
 * commit, tree, host, CPU model and family, kernel, runs and rounds, all
 * escaped; a commit page links each side's pair.
 */
TEST(test_web__pages_name_each_side)
{
	struct dconf conf = { 0 };
	struct ctx x = { 0 };
	struct buf b;
	struct store *s = NULL;
	const char *base, *cand;

	pairs_store(&s);
	ASSERT(s != NULL);
	x.s = s;
	x.conf = &conf;
	x.now = 2000;
	x.online_s = 1000;
	x.keep = json_array();
	ASSERT(web_target_html(&x, VIEW_PAIR, "1", &b) == 0);
	ASSERT_PAGE(&b);
	base = strstr(b.data, "<tr class=\"side\"><th scope=\"row\">base</th>");
	ASSERT_MSG(base != NULL, "no base side line");
	cand = strstr(base, "<th scope=\"row\">candidate</th>");
	ASSERT_MSG(cand != NULL, "no candidate side line");
	ASSERT(strstr(base,
	           "href=\"/commit/0123456789abcdef0123456789abcdef"
	           "01234567\"") != NULL);
	ASSERT(
	    strstr(base, "<td>linux&lt;&amp;&gt;</td><td>epyc-1</td>") != NULL);
	ASSERT_MSG(strstr(base,
	               "<td class=\"cpu\">EPYC &lt;9654&gt; <span "
	               "class=\"muted\">(Zen 4 (Genoa))</span></td>") != NULL,
	    "no CPU model and family");
	ASSERT_MSG(
	    strstr(base,
	        "<td class=\"mono kernel\">6.8.0-pw build b1 &lt;x&gt; "
	        "config unknown (boot qemu, cached yes)</td>"
	        "<td class=\"n\">2</td><td class=\"n\">1</td></tr>") < cand,
	    "no base kernel, runs and rounds");
	ASSERT(strstr(b.data, "EPYC <9654>") == NULL);
	/* Said once: the head repeats no side's commit, kernel or rounds. */
	ASSERT_MSG(strstr(b.data, "class=\"side-base\"") == NULL &&
	        strstr(b.data, "class=\"side-cand\"") == NULL,
	    "the pair page names its commits twice");
	ASSERT_MSG(strstr(b.data, "<th>base kernel</th>") == NULL &&
	        strstr(b.data, "<th>candidate kernel</th>") == NULL,
	    "the pair page names its kernels twice");
	ASSERT_MSG(strstr(b.data, "<tr><th>rounds</th>") == NULL,
	    "the pair page says its rounds twice");
	buf_release(&b);
	ASSERT(web_target_html(&x, VIEW_COMMIT,
	           "0123456789abcdef0123456789abcdef01234567", &b) == 0);
	ASSERT_PAGE(&b);
	ASSERT_MSG(strstr(b.data,
	               "<tr class=\"side\"><td class=\"nw\"><a "
	               "href=\"/pair/1\">pair 1</a> fio-randread") != NULL,
	    "the commit page's sides do not link their pair");
	buf_release(&b);
	json_decref(x.keep);
	store_close(s);
}

/*
 * The overview's badge says by how much: of a finished pair's
 * regressions the largest change (-12.5% of "v <x>", not -3%), and its
 * JSON the same; a page without one says nothing more.
 */
TEST(test_web__overview_badge_change)
{
	struct store_comparison c[2] = {
		{ "v <x>", "ops/s", "higher", "regression", NULL, 3, 3, 12,
		    10.5, -12.5, -14, -11, 0.01, 0.02, 2, 1, 0 },
		{ "w", "ops/s", "higher", "regression", NULL, 3, 3, 12, 11.6,
		    -3, -4, -2, 0.01, 0.02, 2, 1, 0 },
	};
	struct dconf conf = { 0 };
	struct ctx x = { 0 };
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_badge bg = { "fio", "regression", NULL, 1, -12.5, "v <x>" };
	struct view_overview_item it = { VIEW_PAIR, "1", "s", "a", 1, &bg, 1 };
	struct view_overview_group g = { NULL, NULL, &it, 1 };
	struct view_overview v = { 0 };
	struct store *s = NULL;
	json_t *o = NULL, *badge;
	int64_t pair;

	spread_store(&s, &pair);
	ASSERT(s != NULL);
	ASSERT(store_verdict_put(s, NULL, pair, &c[0], 1400) == 0);
	ASSERT(store_verdict_put(s, NULL, pair, &c[1], 1400) == 0);
	x.s = s;
	x.conf = &conf;
	x.now = 2000;
	x.online_s = 1000;
	x.keep = json_array();
	ASSERT(web_overview_doc(&x, &o) == 0);
	badge = json_array_get(
	    json_object_get(
	        json_array_get(
	            json_object_get(
	                json_array_get(json_object_get(o, "groups"), 0),
	                "items"),
	            0),
	        "benches"),
	    0);
	ASSERT_MSG(badge != NULL, "no badge");
	ASSERT(strcmp(json_string_value(json_object_get(badge, "verdict")),
	           "regression") == 0);
	ASSERT_NEAR(jnum(badge, "change_pct"), -12.5, 1e-9);
	ASSERT(strcmp(json_string_value(json_object_get(badge, "metric")),
	           "v <x>") == 0);
	json_decref(o);
	json_decref(x.keep);
	store_close(s);

	v.groups = &g;
	v.ngroups = 1;
	view_overview_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT_MSG(
	    strstr(b.data,
	        "regression</span> <span class=\"change\">-12.5% "
	        "<span class=\"muted\">v &lt;x&gt;</span></span>") != NULL,
	    "the badge does not say by how much");
	bg.has_change = 0;
	buf_reset(&b);
	view_overview_render(&b, &v);
	ASSERT(strstr(b.data, "class=\"change\"") == NULL);
	buf_release(&b);
}

/*
 * A bisection's step says how sure each comparison is: its interval in
 * text, each side's mean &plusmn; sd (%stddev) and runs; and below the
 * steps, where each side ran.
 */
TEST(test_web__bisect_steps_how_sure)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_bisect_step st = { "step", H(0), H(1), "bad", "unchanged",
		"regression", 0.2, -10.2, H(2), 7, 8,
		{ -1, 1.5, { 100, 99.8 }, { 2, 1 }, { 5, 5 } },
		{ -12.5, -8.25, { 100, 90 }, { 2, NAN }, { 5, 4 } } };
	struct view_side sd[2] = {
		{ 8, "fio", "", "base", { "aaaa", H(3) }, "linux", "h1", H(4),
		    "Zen 4 (Genoa)", H(5), 5, 1 },
		{ 8, "fio", "", "candidate", { "bbbb", NULL }, NULL, NULL, NULL,
		    NULL, NULL, -1, -1 },
	};
	struct view_bisect v = { 0 };

	v.id = 1;
	v.regression_id = 2;
	v.state = "done";
	v.metric = "ops";
	v.steps = &st;
	v.nsteps = 1;
	v.sides = sd;
	v.nsides = 2;
	view_bisect_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT_MSG(strstr(b.data,
	               "-10.2% <span class=\"ci-text\">[-12.50%, -8.25%]"
	               "</span> <a href=\"/pair/8\">pair 8</a>") != NULL,
	    "no interval of the step against its bad end");
	ASSERT_MSG(strstr(b.data,
	               "100 &plusmn;2 <span class=\"muted\">(2.0%)</span> "
	               "&rarr; 90 &plusmn;unknown <span class=\"muted\">"
	               "(5 / 4 runs)</span>") != NULL,
	    "no means, spreads and runs of the step's sides");
	ASSERT(strstr(b.data, "[-1.00%, +1.50%]") != NULL);
	ASSERT_MSG(
	    strstr(b.data, "<h2 id=\"sides\">What was compared</h2>") != NULL,
	    "no sides under the steps");
	ASSERT(strstr(b.data, "(family unknown)") != NULL);
	ASSERT(strstr(b.data, "Zen 4 (Genoa)") != NULL);
	buf_release(&b);
}

/* A job that builds no kernel boots nothing; one whose runs record no
 * boot has its boots unknown (null), never 0. */
TEST(test_web__pair_boots_unknown_or_none)
{
	struct store_job_new plain = { "base", "{\"parser\":\"fio\"}", "[]", 2,
		2, 2, 0 };
	struct store_job_new kern = { "candidate",
		"{\"parser\":\"fio\",\"kernel\":{}}", "[]", 2, 2, 2, 0 };
	struct store *s = NULL;
	struct err e = { 0 };
	struct store_pair p;
	struct buf html = BUF_INIT(1 << 20);
	char *path = xasprintf("%s/boots.db", test_tmpdir());
	int64_t pair;
	json_t *o;

	ASSERT_MSG(store_open(&s, path, &e) == 0, "%s", err_msg(&e));
	free(path);
	ASSERT(store_pair_create(
	           s, &pair, NULL, NULL, "k", "", &plain, &kern, 1000) == 0);
	ASSERT(store_pair_get(s, &p, pair) == 0);
	ASSERT_INTEQ(p.rounds[0], 1);
	ASSERT_INTEQ(p.rounds[1], 1);
	ASSERT_INTEQ(p.kernel[0], 0);
	ASSERT_INTEQ(p.kernel[1], 1);
	ASSERT_INTEQ(p.boots[0], 0);
	ASSERT_INTEQ(p.boots[1], -1);
	o = rows_pair_json(&p);
	ASSERT_INTEQ(json_integer_value(
	                 json_object_get(json_object_get(o, "base"), "boots")),
	    0);
	ASSERT(json_is_null(
	    json_object_get(json_object_get(o, "candidate"), "boots")));
	json_decref(o);
	store_pair_release(&p);
	pair_page(&html, s, "1");
	ASSERT_MSG(strstr(html.data,
	               "<tr><th>boots</th><td class=\"cost\">base 0, "
	               "candidate unknown <span") != NULL,
	    "boots not unknown");
	store_close(s);
	buf_release(&html);
}

/* ---- the alerts reads: the same JSON bytes ---- */

/*
 * pairs_store's store and a report of commit 1 with three deliveries:
 * an e-mail sent, a webhook failed with an error of hostile text, a
 * webhook still pending.
 */
static void
alerts_store(struct store **out)
{
	struct store_alert_new a[3] = {
		{ "email", "r1#1/email", "a@example.org, b@example.org",
		    "[linux] fio-randread: regression",
		    "Subject: x\r\n\r\nbody", 0 },
		{ "webhook", "r1#1/hook0", "http://127.0.0.1:1/h", NULL, "{}",
		    1 },
		{ "webhook", "r1#1/hook1", "http://127.0.0.1:2/<h>", NULL,
		    "{\"x\":1}", 0 },
	};
	struct store_alert_decision d;
	const char *rcpt[] = { "a@example.org" };
	struct store *s = NULL;

	pairs_store(&s);
	ASSERT(s != NULL);
	memset(&d, 0, sizeof(d));
	d.key = "c1/fio-randread/h1";
	d.commit_id = 1;
	d.host_id = 1;
	d.job = "fio-randread";
	d.signature = "iops:regression";
	d.message_id = "<m1@example.org>";
	d.subject = "[linux] fio-randread: regression";
	d.summary = "regression: 1 changed metric(s)";
	d.sent_report = 1;
	d.stamp = 1700;
	d.alerts = a;
	d.nalerts = 3;
	ASSERT(store_alert_decide(s, &d, 1800) == 0);
	ASSERT(store_alert_attempt(s, 1, "sent", NULL, 0, rcpt, 1, 1810) == 0);
	ASSERT(store_alert_attempt(
	           s, 2, "failed", hostile[1], 0, NULL, 0, 1820) == 0);
	ASSERT(store_alert_attempt(s, 3, "pending", "connect: refused", 1900,
	           NULL, 0, 1830) == 0);
	*out = s;
}

static void
alerts_list(struct buf *b, struct store *s, const char *state, const char *kind,
    int64_t limit, int64_t cursor)
{
	struct store_alert_filter f = { state, kind, NULL, limit, cursor };
	struct store_alert_more more;
	struct store_alert *a = NULL;
	json_t *o;
	size_t n;

	ASSERT(store_alert_list(s, &a, &n, &f, &more) == 0);
	o = rows_alerts_json(a, n, &more);
	store_alerts_release(a, n);
	pwjson_dump_buf(b, o);
	buf_putc(b, '\n');
	json_decref(o);
}

static void
alerts_one(struct buf *b, struct store *s, int64_t id)
{
	struct store_alert *a = NULL;
	json_t *o;

	ASSERT(store_alert_get(s, &a, id) == 0);
	o = rows_alert_json(a, 1);
	store_alerts_release(a, 1);
	pwjson_dump_buf(b, o);
	buf_putc(b, '\n');
	json_decref(o);
}

/*
 * GET /api/v1/alerts (filters, pages) and /api/v1/alerts/{id} answer the
 * bytes tests/data/web/alerts.json holds, written when daemon/alert_api.c
 * made them (now web/rows.c does).  On a difference the bytes made now are in
 * the scratch directory's alerts.out.
 */
TEST(test_web__alerts_json_unchanged)
{
	struct buf b = BUF_INIT(1 << 20);
	struct store *s = NULL;

	alerts_store(&s);
	ASSERT(s != NULL);
	alerts_list(&b, s, NULL, NULL, 50, 0);
	alerts_list(&b, s, NULL, NULL, 2, 0);
	alerts_list(&b, s, NULL, NULL, 2, 2);
	alerts_list(&b, s, "sent", NULL, 50, 0);
	alerts_list(&b, s, "pending", "webhook", 50, 0);
	alerts_one(&b, s, 1);
	alerts_one(&b, s, 2);
	alerts_one(&b, s, 3);
	store_close(s);
	ASSERT(same_as_golden(&b, "alerts") == 0);
	buf_release(&b);
}

/*
 * An alert's page on hostile fields: every one escaped, its facts shown,
 * a mail's CRLF a newline, a payload past the page's share cut and said
 * so; the alerts table links each row to its page.
 */
TEST(test_web__alert_page_hostile)
{
	struct buf b = BUF_INIT(CAP_HTML_PAGE);
	struct view_alert_page v = { { 0 } };
	struct view_alert row = { 0 };
	struct view_alerts list = { NULL, NULL, &row, 1, { 0 } };
	size_t i;

	v.a.id = 42;
	v.a.kind = H(2);
	v.a.state = "pending";
	v.a.target = H(1);
	v.a.subject = H(0);
	v.a.error = H(8);
	v.a.attempts = 3;
	v.a.sha = "0123456789abcdef0123456789abcdef01234567";
	v.delivery = H(4);
	v.benchmark = H(5);
	v.host = H(6);
	v.payload = "Subject: <b>x</b>\r\n\r\nbody line";
	v.created = 1733000000;
	v.next_try = 1733000600;
	view_alert_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "<h1>Alert 42</h1>") != NULL);
	ASSERT(strstr(b.data, "&lt;script&gt;alert(&#39;x&#39;)") != NULL);
	ASSERT(strstr(b.data, "&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;") != NULL);
	ASSERT(strstr(b.data, "<th>attempts</th><td>3</td>") != NULL);
	ASSERT(strstr(b.data, "<th>next try</th><td>2024-11-30 21:") != NULL);
	ASSERT(strstr(b.data, "href=\"/commit/0123456789abcdef") != NULL);
	ASSERT(strstr(b.data,
	           "Subject: &lt;b&gt;x&lt;/b&gt;\n\nbody line</pre>") != NULL);
	ASSERT(strstr(b.data, "bytes.</p>") == NULL);
	/* Each hostile value in each field. */
	for (i = 0; i <= NHOSTILE; i++) {
		v.a.kind = v.a.state = v.a.target = v.a.subject = H(i);
		v.a.error = v.delivery = v.benchmark = v.host = H(i + 1);
		v.payload = H(i + 2);
		v.a.sha = NULL;
		buf_reset(&b);
		view_alert_render(&b, &v);
		ASSERT_PAGE(&b);
	}
	/* A 1 MB payload: its first share, and how much there was. */
	v.payload = big();
	buf_reset(&b);
	view_alert_render(&b, &v);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, " of 1048576 bytes.</p>") != NULL);
	row.id = 42;
	row.subject = H(0);
	buf_reset(&b);
	view_alerts_render(&b, &list);
	ASSERT_PAGE(&b);
	ASSERT(strstr(b.data, "<a href=\"/alerts/42\">42</a>") != NULL);
	buf_release(&b);
}

/* ---- the history reads: the same JSON and page bytes ---- */

/* Claims a job on host, stores runs of ops and a hostile metric near
 * lv, finishes it. */
static void
hist_run(struct store *s, int64_t host, int64_t runs, double lv, int64_t now)
{
	struct store_claimed cl;
	int64_t job, k;

	ASSERT(store_claim(s, &cl, host, now, 60) == 0);
	job = cl.job_id;
	store_claimed_release(&cl);
	for (k = 0; k < runs; k++) {
		struct store_metric m[2] = {
			{ "ops", "ops/s", "higher",
			    lv * (1 + 0.01 * (double)((job * 7 + k * 3) % 5)) },
			{ "lat <p99>", "us", "lower", 1e6 / lv + (double)k },
		};
		struct store_run r = { job, k, "ok", 1.0, NULL, "raw", 3, m, 2,
			NULL, NULL };

		ASSERT(store_run_add(s, host, &r, now) == 0);
	}
	ASSERT(store_finish(s, host, job, 1, NULL, now) == 0);
}

/*
 * A branch of 12 commits (one subject hostile) measured on two hosts,
 * a submitted pair without a commit, the verdicts of most pairs (some
 * with their summaries stored, two without: their values are read), a
 * regression, and change points in the series of host h1 and h2.
 */
static void
history_store(struct store **out)
{
	struct store *s = NULL;
	struct err e = { 0 };
	static int nth;
	char *p = xasprintf("%s/hist%d.db", test_tmpdir(), ++nth);
	struct store_job_new base = { "base", "{\"parser\":\"fio\"}", "[]", 3,
		5, 2, 0 };
	struct store_job_new cand = { "candidate", "{\"parser\":\"fio\"}", "[]",
		3, 5, 2, 0 };
	int64_t host[2], tree, cid[13], series[2] = { 0, 0 }, seq, pair, cj;
	int i;

	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	free(p);
	ASSERT(store_tree_sync(s, &tree, "bench<&>", "https://x/b.git") == 0);
	ASSERT(store_host_register(s, &host[0], "h1", "[]", "{}", 1000) == 0);
	ASSERT(store_host_register(s, &host[1], hostile[0], "[]", "{}", 1000) ==
	    0);
	for (i = 0; i <= 12; i++) {
		char sha[41];
		struct store_commit c = { sha, "", "A <a@x>", "C <c@x>",
			2000 + 100 * i, 2001 + 100 * i,
			i == 5 ? hostile[1] : "mm: a change", "[]" };

		snprintf(sha, sizeof(sha), "%040x", 0xabc000 + i);
		ASSERT(store_commit_record(
		           s, &cid[i], NULL, tree, &c, "master", 3000) == 0);
	}
	for (i = 1; i <= 12; i++) {
		int h = i % 3 == 0;
		double lv = i >= 7 ? 1100 : 1000;
		struct store_comparison c = { "ops", "ops/s", "higher",
			i == 7 ? "regression" : "unchanged", NULL, 3, 3, 1000,
			lv, (lv - 1000) / 10, -1, 1, 0.01, 0.02, 2, 1 };
		struct store_series_key key = { "bench<&>", "master", host[h],
			"kv", "x=1", "ops", "higher" };
		int64_t cmp = 0;

		base.commit_id = cid[i - 1];
		cand.commit_id = cid[i];
		ASSERT(store_pair_create(s, &pair, NULL, &cj, "kv", "x=1",
		           &base, &cand, 4000 + i) == 0);
		hist_run(s, host[h], 3, 1000, 4100 + i);
		hist_run(s, host[h], 3, lv, 4100 + i);
		if (i == 4 || i == 11)
			continue; /* no verdict yet: the values are read */
		ASSERT(store_verdict_put(s, &cmp, pair, &c, 4200 + i) == 0);
		ASSERT(store_history_append(s, &series[h], &seq, &key, pair, cj,
		           cmp, lv, 4200 + i) == 0);
		if (i != 10)
			ASSERT(store_verdict_done(s, pair, 4200 + i) == 0);
	}
	/* A submitted pair: no commit. */
	base.commit_id = cand.commit_id = 0;
	ASSERT(store_pair_create(
	           s, &pair, NULL, NULL, "kv", "x=1", &base, &cand, 5000) == 0);
	hist_run(s, host[0], 3, 1000, 5001);
	hist_run(s, host[0], 3, 990, 5002);
	{
		struct store_change_point c0[2] = {
			{ 1, 0, 2, 1000, 1010.5, 1.05, 0.2, "improvement" },
			{ 4, 3, 5, 1000, 1100, 10, 0.001, "improvement" },
		};
		struct store_change_point c1[1] = {
			{ 2, 1, 2, 1100, 1000.25, -9.09, NAN, "regression" },
		};

		ASSERT(store_changepoints_replace(
		           s, series[0], 0, c0, 2, 6000) == 0);
		ASSERT(store_changepoints_replace(
		           s, series[1], 0, c1, 1, 6000) == 0);
	}
	*out = s;
}

static void
history_doc(struct buf *b, struct buf *html, struct store *s,
    const struct store_history_q *q)
{
	json_t *o = NULL;

	ASSERT(web_history_doc(s, q, &o, html) == 0);
	pwjson_dump_buf(b, o);
	buf_putc(b, '\n');
	json_decref(o);
	buf_putc(html, '\n');
}

/*
 * GET /api/v1/history and /history answer the bytes
 * tests/data/web/history.json and history.html hold, the API's and the
 * page's bytes (docs/API.md).  On a difference
 * the bytes made now are in the scratch directory's history.out.
 */
TEST(test_web__history_json_unchanged)
{
	struct buf b = BUF_INIT(1 << 20), html = BUF_INIT(4 << 20);
	struct store *s = NULL;
	struct store_history_q q[] = {
		{ "bench<&>", "master", "h1", "kv", "x=1", "ops", 0, 0, 200,
		    0 },
		{ "bench<&>", "master", NULL, "kv", "x=1", "ops", 0, 0, 200,
		    0 },
		{ NULL, NULL, NULL, "kv", "x=1", "ops", 0, 0, 200, 0 },
		{ NULL, NULL, hostile[0], "kv", "x=1", "lat <p99>", 0, 0, 200,
		    0 },
		{ "bench<&>", "master", NULL, "kv", "x=1", "ops", 0, 0, 5, 0 },
		{ "bench<&>", "master", NULL, "kv", "x=1", "ops", 0, 0, 5, 14 },
		{ "bench<&>", "master", NULL, "kv", "x=1", "ops", 2300, 2801,
		    200, 0 },
		{ "bench<&>", "other", NULL, "kv", "x=1", "ops", 0, 0, 200, 0 },
		{ NULL, NULL, NULL, "kv", "x=2", "ops", 0, 0, 200, 0 },
	};
	size_t i;

	history_store(&s);
	ASSERT(s != NULL);
	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		history_doc(&b, &html, s, &q[i]);
	store_close(s);
	ASSERT(same_as_golden(&b, "history") == 0);
	ASSERT(same_as_golden(&html, "history.html") == 0);
	buf_release(&b);
	buf_release(&html);
}

/* ---- the series reads: the same JSON and HTML bytes ---- */

/*
 * pairs_store's store and three series: v1 applied on commit 1 (the
 * candidate of pair 1, so it has verdicts) with a branch tag, a
 * fallback and a patch not applied; v2 superseding it, failed with an
 * error of hostile text, no tree and an unknown date; v3 as created.
 */
static void
series_store(struct store **out)
{
	static const char sha[] = "0123456789abcdef0123456789abcdef01234567";
	struct store_series_new n = { "lkml<&>", "v1@x", NULL, "A <a@x>", 1, 2,
		2, 900, 1, "master" };
	struct store_series_patch pp = { 1, "v1.1@x", NULL, "A <a@x>", 901, 1 };
	struct store *s = NULL;
	int64_t v1, v2, v3;

	pairs_store(&s);
	ASSERT(s != NULL);
	n.title = hostile[1];
	pp.subject = hostile[2];
	ASSERT(store_series_create(s, &v1, NULL, &n, 950) == 0);
	ASSERT(store_series_patch_put(s, v1, &pp) == 0);
	pp.seq = 2;
	pp.message_id = "v1.2@x";
	pp.subject = "memcg: two \"quoted\"";
	pp.date = -1;
	pp.commit_id = 0;
	ASSERT(store_series_patch_put(s, v1, &pp) == 0);
	ASSERT(store_series_patch_how(s, v1, 1, "git am --3way") == 0);
	ASSERT(store_series_state(s, v1, "applied", NULL, sha, 1,
	           "refs/perfwatch/series/1", 960) == 0);
	ASSERT(store_series_meta(s, v1, hostile[2], 0) == 0);
	ASSERT(store_series_fallback(s, v1, "1/2") == 0);
	n.inbox = "upload";
	n.message_id = "v2@x";
	n.version = 2;
	n.total = 1;
	n.found = 1;
	n.date = -1;
	n.tree_id = 0;
	n.branch = NULL;
	ASSERT(store_series_create(s, &v2, NULL, &n, 970) == 0);
	pp.seq = 1;
	pp.message_id = "v2.1@x";
	pp.subject = hostile[0];
	ASSERT(store_series_patch_put(s, v2, &pp) == 0);
	ASSERT(store_series_meta(s, v2, NULL, v1) == 0);
	ASSERT(store_series_state(
	           s, v2, "failed", hostile[0], NULL, 0, NULL, 980) == 0);
	n.message_id = "v3@x";
	n.title = "memcg: three";
	n.version = 1;
	ASSERT(store_series_create(s, &v3, NULL, &n, 990) == 0);
	ASSERT(v1 == 1 && v2 == 2 && v3 == 3);
	/* Commands by mail on v1's report: one refused, its mail text
	 * hostile; one done that made pair 1 and series 3, read as a
	 * canonical form other than its line. */
	{
		static const int64_t pair1[] = { 1 };
		struct store_mail_command_new c = { 0 };

		c.series_id = v1;
		c.commit_sha = sha;
		c.job = "fio-randread";
		c.message_id = "c1@x";
		c.sender = "m<a>@x";
		c.command = hostile[0];
		c.line = 3;
		c.reason = hostile[1];
		ASSERT(store_mail_command_put(s, &c, 995) == 0);
		c.message_id = "c2@x";
		c.sender = "boss@x";
		c.command = "retest runs=03";
		c.parsed = "retest runs=3";
		c.line = 1;
		c.done = 1;
		c.reason = "1 pair(s) of fio-randread queued again";
		c.pairs = pair1;
		c.npairs = 1;
		c.made_series_id = v3;
		ASSERT(store_mail_command_put(s, &c, 996) == 0);
	}
	*out = s;
}

static void
series_dump(struct buf *b, json_t *o)
{
	pwjson_dump_buf(b, o);
	buf_putc(b, '\n');
	json_decref(o);
}

static void
series_list(struct buf *b, struct store *s, int64_t limit, int64_t cursor)
{
	struct store_series_list l;

	ASSERT(store_series_list(s, &l, limit, cursor) == 0);
	series_dump(b, rows_series_list_json(&l));
	store_series_list_release(&l);
}

static void
series_html(struct buf *html, struct store *s, const char *id)
{
	struct dconf conf = { 0 };
	struct ctx x = { 0 };
	struct buf b;

	x.s = s;
	x.conf = &conf;
	x.keep = json_array();
	ASSERT(web_target_html(&x, VIEW_SERIES, id, &b) == 0);
	buf_add(html, b.data, b.len);
	buf_putc(html, '\n');
	buf_release(&b);
	json_decref(x.keep);
}

/*
 * GET /api/v1/series (store_series_list, as api_read_series answers
 * it), GET /api/v1/series/{id} and /api/v1/comparisons?series= (the
 * same document, its comparisons read through the tip's pairs), the
 * store's series (store_series_get) and the /series/{id}
 * page answer the bytes tests/data/web/series.json and series.html
 * hold, which the code of before the typed series reads wrote.  On a
 * difference the bytes made now are in the scratch directory's
 * series.out.
 */
TEST(test_web__series_json_unchanged)
{
	struct buf b = BUF_INIT(1 << 20), html = BUF_INIT(4 << 20);
	struct store *s = NULL;
	struct store_series_row sr;
	const char *ids[] = { "1", "2", "3" };
	size_t i;

	series_store(&s);
	ASSERT(s != NULL);
	series_list(&b, s, 50, 0);
	series_list(&b, s, 2, 0);
	series_list(&b, s, 2, 2);
	for (i = 0; i < 3; i++) {
		target_api(&b, s, VIEW_SERIES, ids[i]);
		ASSERT(store_series_get(s, &sr, (int64_t)i + 1) == 0);
		series_dump(&b, rows_series_json(&sr));
		store_series_release(&sr);
		series_html(&html, s, ids[i]);
	}
	ASSERT_INTEQ(store_series_get(s, &sr, 999), ERR_NOTFOUND);
	ASSERT(sr.id == 0 && sr.patches == NULL);
	store_close(s);
	ASSERT(same_as_golden(&b, "series") == 0);
	ASSERT(same_as_golden(&html, "series.html") == 0);
	buf_release(&b);
	buf_release(&html);
}

/*
 * Two commits, each the candidate of a pair whose two jobs ran on one
 * host (ok runs with metrics), and two series: v1 applied on the first
 * commit, v2 (superseding v1) on the second.  The candidates share
 * "iops" (a clear drop) and "lat <p99>" (the same values); "rss" only
 * v2 measured, so it has no vN vs vN-1 row.
 */
static void
versus_store(struct store **out)
{
	static const char *sha[] = { "1111111111111111111111111111111111111111",
		"2222222222222222222222222222222222222222" };
	struct store *s = NULL;
	struct err e = { 0 };
	static int nth;
	char *p = xasprintf("%s/versus%d.db", test_tmpdir(), ++nth);
	struct store_job_new base = { "base", "{\"parser\":\"fio\"}", "[]", 5,
		5, 2, 0 };
	struct store_job_new cand = { "candidate", "{\"parser\":\"fio\"}", "[]",
		5, 5, 2, 0 };
	struct store_series_new n = { "upload", "v1@x", "memcg: <v>", "A <a@x>",
		1, 1, 1, 900, 0, NULL };
	int64_t h, tree, cid[2], pair, bj, cj, v[2], job, k, i, c;
	struct store_claimed cl;

	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	free(p);
	ASSERT(store_tree_sync(s, &tree, "linux", "https://x/l.git") == 0);
	ASSERT(store_host_register(s, &h, "epyc-1", "[]", "{}", 1000) == 0);
	for (c = 0; c < 2; c++) {
		struct store_commit cm = { sha[c], "", "A <a@x>", "C <c@x>",
			1000 + c, 1001 + c, "memcg: v", "[]" };

		ASSERT(store_commit_record(
		           s, &cid[c], NULL, tree, &cm, "master", 1002) == 0);
		base.commit_id = cand.commit_id = cid[c];
		ASSERT(store_pair_create(s, &pair, &bj, &cj, "fio-randread",
		           "bs=4k", &base, &cand, 1200 + c) == 0);
		for (k = 0; k < 2; k++) {
			ASSERT(store_claim(s, &cl, h, 1300 + c, 60) == 0);
			job = cl.job_id;
			store_claimed_release(&cl);
			ASSERT(job == bj || job == cj);
			for (i = 0; i < 5; i++) {
				struct store_metric m[] = {
					{ "iops", "ops/s", "higher",
					    (c ? 900.0 : 1000.0) + (double)i },
					{ "lat <p99>", "us", "lower", 12.25 },
					{ "rss", "MiB", "lower",
					    64 + (double)i },
				};
				struct store_run r = { job, i, "ok", 1.5, NULL,
					NULL, 0, m, c ? 3 : 2, NULL, NULL };

				ASSERT(store_run_add(s, h, &r, 1310 + c) == 0);
			}
			ASSERT(store_finish(s, h, job, 1, NULL, 1320 + c) == 0);
		}
	}
	for (c = 0; c < 2; c++) {
		ASSERT(store_series_create(s, &v[c], NULL, &n, 950 + c) == 0);
		ASSERT(store_series_state(s, v[c], "applied", NULL, sha[c],
		           cid[c], NULL, 960 + c) == 0);
		n.message_id = "v2@x";
		n.version = 2;
	}
	ASSERT(store_series_meta(s, v[1], NULL, v[0]) == 0);
	*out = s;
}

/*
 * GET /api/v1/series/{id} of a v2 whose v1 was measured too (a
 * "versus_previous" with rows), and its /series/{id} page, answer the
 * bytes tests/data/web/versus.json and versus.html hold, which the
 * code of before the typed vN vs vN-1 (series_versus made the JSON)
 * wrote.  On a difference the bytes made now are in the scratch
 * directory's versus.out.
 */
TEST(test_web__series_versus_unchanged)
{
	struct buf b = BUF_INIT(1 << 20), html = BUF_INIT(4 << 20);
	struct store *s = NULL;
	const char *q;
	int nrows;

	versus_store(&s);
	ASSERT(s != NULL);
	target_api(&b, s, VIEW_SERIES, "1");
	target_api(&b, s, VIEW_SERIES, "2");
	series_html(&html, s, "2");
	store_close(s);
	/* Not a vacuous golden: v2's rows compare both measured metrics. */
	ASSERT(strstr(b.data, "\"previous\":{\"id\":1,\"version\":1}") != NULL);
	ASSERT(strstr(b.data, "\"metric\":\"iops\"") != NULL);
	ASSERT(strstr(b.data, "\"metric\":\"lat <p99>\"") != NULL);
	for (q = b.data, nrows = 0; (q = strstr(q, "\"n_previous\"")); q++)
		nrows++;
	ASSERT_INTEQ(nrows, 2); /* rss: v2 only */
	ASSERT(same_as_golden(&b, "versus") == 0);
	ASSERT(same_as_golden(&html, "versus.html") == 0);
	buf_release(&b);
	buf_release(&html);
}

/* html_num and html_pct write what "%.*f" and "%+.*f%%" do (their fast
 * path rounds itself), over ties, near-ties, signs and magnitudes. */
/* xorshift: values of every magnitude (an integer of up to 44 bits over
 * 2^0..2^(span-1)), ties made often by few bits of mantissa (eighths). */
static double
xs_value(uint64_t *x, unsigned span, int eighths)
{
	double v;

	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	v = (double)(int64_t)(*x >> 20) / (double)(1ULL << (*x % span));
	return eighths ? floor(v * 8) / 8 : v;
}

TEST(test_web__html_numbers_as_printf)
{
	static const double fixed[] = { 0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.125,
		0.375, 1.005, 2.675, 1e-10, -1e-10, 0.004999, -0.005, 0.005,
		999999.995, 123456789.125, 1e11, 1e12 + 0.5, -1e13, 9.9999999,
		1e300, -4.35, 450.05, 0.05, 1e-5 };
	struct buf got = BUF_INIT(1 << 16);
	char want[512];
	uint64_t x = 88172645463325252ULL;
	size_t i, n = sizeof(fixed) / sizeof(fixed[0]);
	int prec;

	for (i = 0; i < n + 50000; i++) {
		double v;

		v = i < n ? fixed[i] : xs_value(&x, 40, i % 3 == 0);
		for (prec = 0; prec <= 9; prec++) {
			double z = fabs(v) < 0.5 * pow(10, -prec) ? 0 : v;

			buf_reset(&got);
			html_num(&got, v, prec);
			snprintf(want, sizeof(want), "%.*f", prec, z);
			ASSERT_STREQ(got.data, want);
			buf_reset(&got);
			html_pct(&got, v, prec);
			snprintf(want, sizeof(want), "%+.*f%%", prec, z);
			ASSERT_STREQ(got.data, want);
		}
	}
	/* html_si: "%.*f" and a suffix from 10,000 up, "%.4g" below, as
	 * printf writes them, at the decades' edges and over values of
	 * every magnitude (with ties). */
	{
		static const double si[] = { 0, -0.0, 1e-4, 9.99999e-5,
			0.00012345, 0.5, 1, 9.9995, 9.99949, 99.995, 999.95,
			9998.9, 9999, 9999.4, 9999.5, 9999.99, 1e4, 99995,
			999949.9, 1e6, 2.5e12, -0.001, -12.345, -9999.6, 1e300,
			1234.5, 0.30000000000000004 };
		size_t k;

		for (k = 0; k < sizeof(si) / sizeof(si[0]) + 50000; k++) {
			double v, a;

			v = k < sizeof(si) / sizeof(si[0])
			    ? si[k]
			    : xs_value(&x, 56, k % 3 == 0);
			a = fabs(v);
			if (a >= 1e12)
				snprintf(want, sizeof(want), "%.*fT",
				    fabs(v / 1e12) >= 100 ? 1 : 2, v / 1e12);
			else if (a >= 1e9)
				snprintf(want, sizeof(want), "%.*fG",
				    fabs(v / 1e9) >= 100 ? 1 : 2, v / 1e9);
			else if (a >= 1e6)
				snprintf(want, sizeof(want), "%.*fM",
				    fabs(v / 1e6) >= 100 ? 1 : 2, v / 1e6);
			else if (a >= 1e4)
				snprintf(want, sizeof(want), "%.*fk",
				    fabs(v / 1e3) >= 100 ? 1 : 2, v / 1e3);
			else
				snprintf(want, sizeof(want), "%.4g", v);
			buf_reset(&got);
			html_si(&got, v);
			ASSERT_STREQ(got.data, want);
		}
	}
	/* html_si_digits with 3 (a spread): "%.3g" below 1,000, whole
	 * numbers of 3 significant digits to 9,999, a suffix from 10,000
	 * up with 3 digits in all. */
	{
		static const struct {
			double v;
			const char *want;
		} three[] = { { 1.58113883008, "1.58" }, { 2, "2" },
			{ 0.0456789, "0.0457" }, { 999.4, "999" },
			{ 999.6, "1000" }, { 1234, "1230" }, { -9876, "-9880" },
			{ 12345, "12.3k" }, { 123456, "123k" },
			{ 1234567, "1.23M" }, { 25800, "25.8k" },
			{ NAN, "unknown" } };
		size_t k;

		for (k = 0; k < sizeof(three) / sizeof(three[0]); k++) {
			buf_reset(&got);
			html_si_digits(&got, three[k].v, 3);
			ASSERT_STREQ(got.data, three[k].want);
		}
		for (k = 0; k < 50000; k++) {
			double v = xs_value(&x, 40, k % 3 == 0);

			if (!(fabs(v) < 999.4))
				continue;
			snprintf(want, sizeof(want), "%.3g", v);
			buf_reset(&got);
			html_si_digits(&got, v, 3);
			ASSERT_STREQ(got.data, want);
		}
	}
	buf_reset(&got);
	html_int(&got, -9223372036854775807LL - 1);
	ASSERT_STREQ(got.data, "-9223372036854775808");
	buf_reset(&got);
	html_int(&got, 0);
	ASSERT_STREQ(got.data, "0");
	buf_release(&got);
}

/* ---- the dashboard's reads: the same JSON bytes ---- */

/*
 * pairs_store's store and more: a second tree with two commits (one with
 * two parents, on two branches, with paths and a subject of bytes that
 * are not UTF-8) and a series on one, branch rows with an error and a
 * rewrite, a poll that failed and one that did not, a pair on the second
 * tree, the regression triaged with a hostile note and a bisection of it
 * with a step.
 */
static void
dash_store(struct store **out)
{
	struct store_commit c1 = { "aaaa111111111111111111111111111111111111",
		"0123456789abcdef0123456789abcdef01234567", "M <m@x>",
		"N <n@x>", 2000, 2001, hostile[5], "[\"mm/memcontrol.c\"]" };
	struct store_commit c2 = { "aaaa222222222222222222222222222222222222",
		"0123456789abcdef0123456789abcdef01234567 "
		"aaaa111111111111111111111111111111111111",
		hostile[3], "N <n@x>", 2100, 2101, hostile[0], "[]" };
	struct store_series_new sn = { "upload", "<s1@x>", hostile[6],
		"S <s@x>", 2, 3, 3, 2050, 0, "next" };
	struct store_job_new base = { "base", "{\"parser\":\"fio\"}", "[]", 3,
		5, 2, 0 };
	struct store_job_new cand = { "candidate", "{\"parser\":\"fio\"}", "[]",
		3, 5, 2, 0 };
	struct store_bisect_src src;
	struct store_bisect_new bn = { &src, 20, 2, 0, "manual" };
	struct store *s = NULL;
	int64_t mm, lx, id1, id2, se, bi, step;

	pairs_store(&s);
	ASSERT(s != NULL);
	ASSERT(store_tree_id(s, &lx, "linux<&>") == 0);
	ASSERT(store_tree_sync(s, &mm, "mm", "https://x/mm.git") == 0);
	ASSERT(store_commit_record(s, &id1, NULL, mm, &c1, "next", 2200) == 0);
	ASSERT(store_commit_record(s, &id2, NULL, mm, &c2, "next", 2210) == 0);
	ASSERT(
	    store_commit_record(s, &id2, NULL, mm, &c2, "master", 2220) == 0);
	ASSERT(store_branch_update(s, lx, "master",
	           "0123456789abcdef0123456789abcdef01234567", "ok", NULL, NULL,
	           2230) == 0);
	ASSERT(store_branch_update(
	           s, mm, "next", c2.sha, "ok", NULL, "forced <x>", 2240) == 0);
	ASSERT(store_branch_update(s, mm, "gone", NULL, "missing", hostile[1],
	           NULL, 2250) == 0);
	ASSERT(store_tree_polled(s, lx, 2260, 1, NULL, 0, 2560) == 0);
	ASSERT(store_tree_polled(s, mm, 2270, 0, hostile[2], 3, 2900) == 0);
	sn.tree_id = mm;
	ASSERT(store_series_create(s, &se, NULL, &sn, 2280) == 0);
	ASSERT(store_series_state(
	           s, se, "applied", NULL, c1.sha, id2, "refs/x", 2290) == 0);
	cand.commit_id = id2;
	base.commit_id = id1;
	ASSERT(store_pair_create(s, NULL, NULL, NULL, "mm-bench", "memcg=on",
	           &base, &cand, 2300) == 0);
	ASSERT(store_regression_triage(
	           s, 1, "acknowledged", hostile[4], 2310) == 0);
	ASSERT(store_bisect_src_get(s, &src, 1) == 0);
	ASSERT(store_bisect_create(s, &bi, &bn, 2320) == 0);
	store_bisect_src_release(&src);
	ASSERT(store_bisect_step_add(
	           s, &step, bi, "step", c1.sha, 0, 0, 2330) == 0);
	ASSERT(store_bisect_step_set(s, step, "bad", "regression", -9.5,
	           "unchanged", NAN, hostile[7], 2340) == 0);
	*out = s;
}

static void
dash_dump(struct buf *b, json_t *o)
{
	pwjson_dump_buf(b, o);
	buf_putc(b, '\n');
	json_decref(o);
}

/*
 * GET /api/v1/trees, /api/v1/commits, /api/v1/overview, the commit's
 * /api/v1/commits/{sha}, /api/v1/regressions and the bisections' routes
 * answer the bytes tests/data/web/dash.json holds, written when the store
 * made those rows as JSON (store_i_web_row) and daemon/bisect_api.c the
 * bisections' (now the store returns structs and web/rows_dash.c makes
 * the JSON).  On a difference the bytes made now are in the scratch
 * directory's dash.out.
 */
TEST(test_web__dash_json_unchanged)
{
	struct cfg_tree trees[2] = { { 0 }, { 0 } };
	char *lx_branches[] = { "master" }, *paths[] = { "mm/", "include/" };
	struct daemon_config dc = { 0 };
	struct buf b = BUF_INIT(1 << 20);
	struct dconf conf = { 0 };
	struct ctx x = { 0 };
	struct store *s = NULL;
	json_t *o = NULL;

	trees[0].name = "linux<&>";
	trees[0].url = "https://x/l.git";
	trees[0].branches.v = lx_branches;
	trees[0].branches.n = 1;
	trees[0].poll_s = 300;
	trees[1].name = "net";
	trees[1].url = "https://x/net.git";
	trees[1].paths.v = paths;
	trees[1].paths.n = 2;
	trees[1].poll_s = 60;
	dc.trees = trees;
	dc.ntrees = 2;
	conf.dc = &dc;
	dash_store(&s);
	ASSERT(s != NULL);
	ASSERT(api_trees_json(s, &dc, NULL, 50, &o) == 0);
	dash_dump(&b, o);
	ASSERT(api_trees_json(s, &dc, NULL, 1, &o) == 0);
	dash_dump(&b, o);
	ASSERT(api_trees_json(s, &dc, "linux<&>", 1, &o) == 0);
	dash_dump(&b, o);
	ASSERT(api_commits_json(s, NULL, NULL, 50, 0, &o) == 0);
	dash_dump(&b, o);
	ASSERT(api_commits_json(s, "mm", "master", 50, 0, &o) == 0);
	dash_dump(&b, o);
	ASSERT(api_commits_json(s, NULL, NULL, 1, 0, &o) == 0);
	dash_dump(&b, o);
	ASSERT(api_commits_json(s, NULL, NULL, 1, 3, &o) == 0);
	dash_dump(&b, o);
	x.s = s;
	x.conf = &conf;
	x.now = 2400;
	x.online_s = 1000;
	x.keep = json_array();
	ASSERT(web_overview_doc(&x, &o) == 0);
	dash_dump(&b, o);
	ASSERT(web_target_json(&x, VIEW_COMMIT, "aaaa2", &o) == 0);
	dash_dump(&b, o);
	ASSERT(web_target_json(&x, VIEW_COMMIT,
	           "aaaa111111111111111111111111111111111111", &o) == 0);
	dash_dump(&b, o);
	ASSERT_INTEQ(
	    web_target_json(&x, VIEW_COMMIT, "aaaa", &o), ERR_CONFLICT);
	ASSERT_INTEQ(
	    web_target_json(&x, VIEW_COMMIT, "ffff", &o), ERR_NOTFOUND);
	json_decref(x.keep);
	ASSERT(web_regressions_doc(s, &o, NULL, NULL, NULL, NULL, 50, 0) == 0);
	dash_dump(&b, o);
	ASSERT(web_regressions_doc(s, &o, "linux<&>", "epyc-1", "fio-randread",
	           "acknowledged", 1, 0) == 0);
	dash_dump(&b, o);
	ASSERT(web_regressions_doc(s, &o, NULL, NULL, NULL, "new", 50, 0) == 0);
	dash_dump(&b, o);
	ASSERT(api_bisects_json(s, 50, 0, &o) == 0);
	dash_dump(&b, o);
	ASSERT(api_bisect_json(s, 1, &o) == 0);
	dash_dump(&b, o);
	ASSERT_INTEQ(api_bisect_json(s, 99, &o), ERR_NOTFOUND);
	store_close(s);
	ASSERT(same_as_golden(&b, "dash") == 0);
	buf_release(&b);
}

/* ---- the next page's cursor of every list route ---- */

/*
 * Full pages (limit rows returned exactly) of each paged list route:
 * GET /api/v1/jobs, /hosts, /commits, /regressions, /bisect (dash_store)
 * and /series (series_store), among them pages whose last row has id 1.
 * The lists newest first give the ids below the cursor, so a full page
 * ending at id 1 is the last (docs/API.md: next_cursor absent on the
 * last page); /hosts goes up from the cursor, so its full page ending
 * at id 1 has a next.  The bytes are tests/data/web/cursors.json.
 */
TEST(test_web__list_cursors_unchanged)
{
	struct buf b = BUF_INIT(1 << 20);
	struct store *s = NULL;
	struct store_commits cl;
	struct store_hosts hl;
	struct store_series_list sl;
	json_t *o = NULL;

	dash_store(&s);
	ASSERT(s != NULL);
	rows_jobs(&b, s, NULL, 1, 0);
	rows_jobs(&b, s, NULL, 1, 2); /* job 1 */
	rows_jobs(&b, s, NULL, 2, 3); /* jobs 2, 1 */
	rows_hosts(&b, s, 1, 0);      /* host 1: host 2 comes next */
	rows_hosts(&b, s, 2, 0);
	ASSERT(api_commits_json(s, NULL, NULL, 1, 2, &o) == 0); /* commit 1 */
	dash_dump(&b, o);
	ASSERT(api_commits_json(s, NULL, NULL, 3, 0, &o) == 0);
	dash_dump(&b, o);
	ASSERT(web_regressions_doc(s, &o, NULL, NULL, NULL, NULL, 1, 0) == 0);
	dash_dump(&b, o);
	ASSERT(api_bisects_json(s, 1, 0, &o) == 0);
	dash_dump(&b, o);
	/* The rule itself, on the structs: a full page newest first ends
	 * at id 1; one going up does not. */
	ASSERT(store_commit_list(s, &cl, NULL, NULL, 1, 2) == 0);
	ASSERT(cl.n == 1 && cl.v[0].id == 1 && cl.next_cursor == 0);
	store_commits_release(&cl);
	ASSERT(store_commit_list(s, &cl, NULL, NULL, 1, 3) == 0);
	ASSERT(cl.n == 1 && cl.next_cursor == 2);
	store_commits_release(&cl);
	ASSERT(store_host_list(s, &hl, 1, 0, 0, 1) == 0);
	ASSERT(hl.n == 1 && hl.v[0].id == 1 && hl.next_cursor == 1);
	store_hosts_release(&hl);
	store_close(s);
	series_store(&s);
	ASSERT(s != NULL);
	series_list(&b, s, 1, 0);
	series_list(&b, s, 1, 2); /* series 1 */
	series_list(&b, s, 3, 0);
	ASSERT(store_series_list(s, &sl, 3, 0) == 0);
	ASSERT(sl.n == 3 && sl.v[2].id == 1 && sl.next_cursor == 0);
	store_series_list_release(&sl);
	store_close(s);
	ASSERT(same_as_golden(&b, "cursors") == 0);
	buf_release(&b);
}

/* ---- a pair's runs (store_pair_run_meta_list): the same JSON bytes */

/* One ok run of job on host h with its host state and profile (NULL:
 * none); the job is the host's claimed one. */
static void
meta_run(struct store *s, int64_t h, int64_t job, int64_t idx,
    const char *host_state, const char *profile)
{
	static const struct store_metric m[] = {
		{ "iops", "ops/s", "higher", 100 },
	};
	struct store_run r = { job, idx, "ok", 1, NULL, "raw", 3, m, 1, profile,
		host_state };

	ASSERT(store_run_add(s, h, &r, 200 + idx) == 0);
}

#define META_STATE(gov, kb) \
	"{\"governor\":\"" gov "\",\"thp\":\"never\",\"kernel_build\":" kb "}"
#define META_KB(id, cached)                                                 \
	"{\"build_id\":\"" id "\",\"release\":\"6.8.0" id "\","             \
	"\"config_sha256\":\"93d1b1fde44c8a5495b335781bafe52391ba08561eaab" \
	"d931e43fb591ea35b0a\",\"boot\":\"kexec\",\"cached\":" cached "}"

/*
 * Two pairs whose runs say which kernel ran and under which host state:
 * pair 1's base ran two builds and has a profile slot (index max_runs,
 * not measured) on a third; its candidate has hostile and non-UTF-8
 * text, a run without a state, and another governor (hygiene_mark makes
 * the pair suspect).  Pair 2's sides ran one build on unknown commits.
 */
static void
meta_store(struct store **out)
{
	struct store_job_new base = { "base", "{\"parser\":\"fio\"}", "[]", 2,
		2, 2, 0 };
	struct store_job_new cand = { "candidate", "{\"parser\":\"fio\"}", "[]",
		2, 2, 2, 0 };
	struct store *s = NULL;
	struct err e = { 0 };
	static int nth;
	/* A new file each time: two tests use it. */
	char *p = xasprintf("%s/meta%d.db", test_tmpdir(), ++nth);
	int64_t h, pair, b, c;
	struct store_claimed cl;

	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	free(p);
	ASSERT(store_host_register(s, &h, "h1", "[]", "{}", 100) == 0);
	ASSERT(store_pair_create(
	           s, &pair, &b, &c, "fio", "bs=4k", &base, &cand, 100) == 0);
	ASSERT(store_claim(s, &cl, h, 110, 600) == 0);
	store_claimed_release(&cl);
	meta_run(s, h, b, 0, META_STATE("powersave", META_KB("-pw41", "true")),
	    NULL);
	meta_run(s, h, b, 1, META_STATE("powersave", META_KB("-pw42", "true")),
	    NULL);
	meta_run(s, h, b, 2, META_STATE("powersave", META_KB("-pw99", "false")),
	    "{\"share_pct\":2.5,\"matched\":[{\"symbol\":\"try_charge_memcg\","
	    "\"pct\":2.5}]}");
	ASSERT(store_finish(s, h, b, 1, NULL, 300) == 0);
	ASSERT(store_claim(s, &cl, h, 310, 600) == 0);
	store_claimed_release(&cl);
	meta_run(s, h, c, 0,
	    "{\"governor\":\"performance <b>\",\"kernel_build\":{\"build_id\":"
	    "\"-pw43 </td>\\r\\n\",\"release\":\"bad \xff\xfe utf8\","
	    "\"boot\":7,\"cached\":null}}",
	    NULL);
	meta_run(s, h, c, 1, NULL, "not json");
	ASSERT(store_finish(s, h, c, 1, NULL, 400) == 0);
	ASSERT(hygiene_mark(s, pair) == 0);
	ASSERT(store_pair_create(
	           s, &pair, &b, &c, "fio", "bs=8k", &base, &cand, 500) == 0);
	ASSERT(store_claim(s, &cl, h, 510, 600) == 0);
	store_claimed_release(&cl);
	meta_run(s, h, b, 0,
	    META_STATE("performance", META_KB("-pw41", "true")), NULL);
	ASSERT(store_finish(s, h, b, 1, NULL, 520) == 0);
	ASSERT(store_claim(s, &cl, h, 530, 600) == 0);
	store_claimed_release(&cl);
	meta_run(s, h, c, 0,
	    META_STATE("performance", META_KB("-pw41", "true")), NULL);
	ASSERT(hygiene_mark(s, pair) == 0);
	*out = s;
}

/*
 * GET /api/v1/pairs/{id}'s kernel facts, kernel warning and suspect mark
 * (made from store_pair_run_meta_list's rows) are the bytes of
 * tests/data/web/runmeta.json, which the store wrote when those rows were
 * JSON (before the typed read).
 */
TEST(test_web__pair_run_meta_json_unchanged)
{
	struct buf b = BUF_INIT(1 << 20);
	struct store *s = NULL;

	meta_store(&s);
	ASSERT(s != NULL);
	pair_api(&b, s, 1);
	pair_api(&b, s, 2);
	store_close(s);
	ASSERT(same_as_golden(&b, "runmeta") == 0);
	buf_release(&b);
}

/* ---- the history's change points: the same JSON bytes ---- */

/*
 * Four submitted pairs of job kv on host h1, each candidate a point of
 * the series, and two change points in it: a regression with all its
 * numbers, an improvement with unknown ones.
 */
static void
hist_store(struct store **out)
{
	struct store_job_new base = { "base", "{}", "[]", 1, 1, 2, 0 };
	struct store_job_new cand = { "candidate", "{}", "[]", 1, 1, 2, 0 };
	struct store_change_point cp[2] = {
		{ 1, 0, 1, 100, 90.5, -9.5, 0.001, "regression" },
		{ 3, 2, 3, 90.5, NAN, NAN, NAN, "improvement" },
	};
	struct store_series_key key = { "", "", 0, "kv", "x=1", "iops",
		"higher" };
	struct store *s = NULL;
	struct err e = { 0 };
	char *p = xasprintf("%s/hist.db", test_tmpdir());
	int64_t h, pair, b, c, series = 0, k;
	struct store_claimed cl;

	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	free(p);
	ASSERT(store_host_register(s, &h, "h1", "[]", "{}", 100) == 0);
	key.host_id = h;
	for (k = 0; k < 4; k++) {
		ASSERT(store_pair_create(s, &pair, &b, &c, "kv", "x=1", &base,
		           &cand, 100 + k) == 0);
		ASSERT(store_claim(s, &cl, h, 110 + k, 600) == 0);
		store_claimed_release(&cl);
		meta_run(s, h, b, 0, NULL, NULL);
		ASSERT(store_finish(s, h, b, 1, NULL, 120 + k) == 0);
		ASSERT(store_claim(s, &cl, h, 130 + k, 600) == 0);
		store_claimed_release(&cl);
		meta_run(s, h, c, 0, NULL, NULL);
		ASSERT(store_finish(s, h, c, 1, NULL, 140 + k) == 0);
		ASSERT(store_history_append(s, &series, NULL, &key, pair, c, 0,
		           100 - (double)k, 150 + k) == 0);
	}
	ASSERT(store_changepoints_replace(s, series, 0, cp, 2, 900) == 0);
	*out = s;
}

static void
hist_api(struct buf *b, struct store *s, const char *host, int64_t limit,
    int64_t cursor)
{
	struct store_history_q q = { NULL, NULL, host, "kv", "x=1", "iops", 0,
		0, limit, cursor };
	struct ctx x = { 0 };
	json_t *o = NULL;

	x.s = s;
	x.keep = json_array();
	ASSERT(web_history_doc(s, &q, &o, NULL) == 0);
	ctx_dump(b, &x, o);
}

/*
 * GET /api/v1/history answers the bytes tests/data/web/history_cps.json
 * holds, which the route wrote when the store gave the change points as
 * JSON rows (before the typed read): the whole series, a page of it
 * (a change point off the page is left out) and another host's (none).
 */
TEST(test_web__history_cps_json_unchanged)
{
	struct buf b = BUF_INIT(1 << 20);
	struct store *s = NULL;

	hist_store(&s);
	ASSERT(s != NULL);
	hist_api(&b, s, "h1", 200, 0);
	hist_api(&b, s, NULL, 2, 0);
	hist_api(&b, s, NULL, 2, 7);
	hist_api(&b, s, hostile[0], 200, 0);
	store_close(s);
	ASSERT(same_as_golden(&b, "history_cps") == 0);
	buf_release(&b);
}

/* ---- the runner's claim: the same JSON bytes ---- */

/* The specs the claim fixture stores: plain, a document with nesting,
 * unicode, big and small numbers and the keys the claim sets itself
 * (which the claim's values replace), rounds with a kernel, a spec
 * that is not an object (the claim starts from {}), and the two points
 * of a sibling group (the same but for the cgroup axis). */
static const char *const claim_specs[] = {
	"{\"parser\":\"fio\"}",
	"{\"cmd\":[\"fio\",\"--name=<script>'\\\"&\"],\"env\":{\"LANG\":"
	"\"C.UTF-8\",\"greet\":\"h\xc3\xa9llo \xe6\x97\xa5\xe6\x9c\xac "
	"\\u00e9 \\ud83d\\ude00\",\"ctl\":\"a\\u0001\\t\\\\b\"},\"nested\":"
	"{\"a\":[1,2.5,{\"b\":null,\"c\":[true,false,[]]}],\"o\":{},"
	"\"big\":9007199254740993,\"neg\":-1,\"tiny\":1e-300,\"pi\":"
	"3.14159265358979},\"id\":999,\"role\":\"spec <role>\","
	"\"done_runs\":\"x\",\"attempt\":-5,\"instance\":\"mine\","
	"\"round\":7,\"lease_expires\":1}",
	"{\"params\":{\"cgroup\":\"root\"},\"point\":\"cgroup=root\","
	"\"boot\":\"runner\",\"rounds\":2,\"kernel\":{\"config\":"
	"\"defconfig\",\"fragment\":[\"CONFIG_MEMCG=y\"],"
	"\"build_timeout_s\":3600,\"boot_timeout_s\":300},\"tree\":"
	"{\"commit\":\"0123456789abcdef\"},\"runs\":4,\"max_runs\":6}",
	"[1,\"x\"]",
	"{\"params\":{\"cgroup\":\"root\"},\"point\":\"cgroup=root\","
	"\"cgroup\":{\"path\":\"root\",\"memory_max\":0}}",
	"{\"params\":{\"cgroup\":\"/a/b\"},\"point\":\"cgroup=/a/b\","
	"\"cgroup\":{\"path\":\"/a/b\",\"memory_max\":0}}",
};

/* A pair at point of claim_specs[spec] for both jobs, runs of
 * max_runs. */
static void
claim_pair_new(struct store *s, const char *name, const char *point, int spec,
    int64_t runs, int64_t max_runs, int64_t at)
{
	struct store_job_new j[2] = {
		{ "base", claim_specs[spec], "[]", runs, max_runs, 3, 0 },
		{ "candidate", claim_specs[spec], "[]", runs, max_runs, 3, 0 },
	};
	ASSERT(store_pair_create(
	           s, NULL, NULL, NULL, name, point, &j[0], &j[1], at) == 0);
}

/* Runs [from, to) of job, each with one metric. */
static void
claim_runs(struct store *s, int64_t host, int64_t job, int64_t from, int64_t to,
    int64_t at)
{
	static const struct store_metric m[] = { { "iops", "ops/s", "higher",
	    1000 } };
	int64_t i;

	for (i = from; i < to; i++) {
		struct store_run r = { job, i, "ok", 1, NULL, "raw", 3, m, 1,
			NULL, NULL };

		ASSERT(store_run_add(s, host, &r, at) == 0);
	}
}

/*
 * One claim's reply as POST /api/v1/jobs/claim sends it (the reply
 * function's dump and newline) into b, the store's instance id written
 * as INSTANCE (it is random per database); *out is the job's id.
 */
static void
claim_line(int64_t *out, struct buf *b, struct store *s, int64_t host,
    int64_t now, int64_t lease_s)
{
	struct buf one = BUF_INIT(1 << 20);
	const char *inst = NULL, *p, *hit;
	struct store_claimed cl;
	json_t *o;

	ASSERT(store_instance(s, &inst) == 0);
	ASSERT(store_claim(s, &cl, host, now, lease_s) == 0);
	*out = cl.job_id;
	o = rows_claim_json(&cl);
	store_claimed_release(&cl);
	pwjson_dump_buf(&one, o);
	buf_putc(&one, '\n');
	json_decref(o);
	for (p = one.data; (hit = strstr(p, inst)) != NULL;
	     p = hit + strlen(inst)) {
		buf_add(b, p, (size_t)(hit - p));
		buf_puts(b, "INSTANCE");
	}
	buf_puts(b, p);
	buf_release(&one);
}

/*
 * POST /api/v1/jobs/claim answers the bytes tests/data/web/claim.json
 * holds, which the store wrote when it made the claim's JSON itself
 * (before the typed claim; now the store returns a struct store_claimed
 * and web/rows.c makes the JSON): a plain pair, a rich spec, a job claimed
 * again by its restarted runner (attempt 2, runs done), a kernel pair in
 * rounds (round by round, base and candidate in turn), a spec that is
 * not an object, and a sibling group that goes to one host.  On a
 * difference the bytes made now are in the scratch directory's
 * claim.out.
 */
TEST(test_web__claim_json_unchanged)
{
	struct buf b = BUF_INIT(1 << 20);
	struct store *s = NULL;
	struct err e = { 0 };
	char *p = xasprintf("%s/claim.db", test_tmpdir());
	int64_t h1, h2, job, again, k;
	struct store_claimed cl;

	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	free(p);
	ASSERT(
	    store_host_register(s, &h1, "epyc-1", "[\"epyc\"]", "{}", 10) == 0);
	ASSERT(store_host_register(s, &h2, hostile[0], "[]", "{}", 10) == 0);
	claim_pair_new(s, "plain", "", 0, 3, 5, 20);
	claim_pair_new(s, hostile[1], hostile[2], 1, 1, 2, 21);
	claim_pair_new(s, "retried", "", 0, 3, 5, 22);
	claim_pair_new(s, "kernel", "cgroup=root", 2, 4, 6, 23);
	claim_pair_new(s, "array", "", 3, 1, 1, 24);
	store_group_begin(s);
	claim_pair_new(s, "sib", "cgroup=root", 4, 1, 1, 25);
	claim_pair_new(s, "sib", "cgroup=/a/b", 5, 1, 1, 25);
	store_group_end(s);

	/* plain, rich: each job claimed and finished. */
	for (k = 0; k < 4; k++) {
		claim_line(&job, &b, s, h1, 100 + k, 60);
		ASSERT(store_finish(s, h1, job, 1, NULL, 101 + k) == 0);
	}
	/* retried: its runner restarts after two runs and claims again. */
	claim_line(&job, &b, s, h1, 200, 600);
	claim_runs(s, h1, job, 0, 2, 201);
	claim_line(&again, &b, s, h1, 210, 600);
	ASSERT_INTEQ(again, job);
	ASSERT(store_finish(s, h1, job, 1, NULL, 211) == 0);
	claim_line(&job, &b, s, h1, 220, 600);
	ASSERT(store_finish(s, h1, job, 1, NULL, 221) == 0);
	/* kernel in two rounds of two runs, each round's order from
	 * common/rounds.h. */
	for (k = 0; k < 4; k++) {
		claim_line(&job, &b, s, h1, 300 + 10 * k, 900);
		claim_runs(s, h1, job, (k / 2) * 2, (k / 2) * 2 + 2, 301 + k);
		ASSERT(store_finish(s, h1, job, 1, NULL, 302 + 10 * k) == 0);
	}
	/* the non-object spec. */
	for (k = 0; k < 2; k++) {
		claim_line(&job, &b, s, h1, 400 + k, 60);
		ASSERT(store_finish(s, h1, job, 1, NULL, 401 + k) == 0);
	}
	/* the sibling group: h2 takes the first and so both. */
	claim_line(&job, &b, s, h2, 500, 60);
	ASSERT_INTEQ(store_claim(s, &cl, h1, 501, 60), ERR_NOTFOUND);
	ASSERT(cl.job_id == 0 && cl.spec_json == NULL);
	ASSERT(store_finish(s, h2, job, 1, NULL, 502) == 0);
	for (k = 0; k < 3; k++) {
		claim_line(&job, &b, s, h2, 510 + k, 60);
		ASSERT(store_finish(s, h2, job, 1, NULL, 511 + k) == 0);
	}
	ASSERT_INTEQ(store_claim(s, &cl, h2, 600, 60), ERR_NOTFOUND);
	ASSERT(cl.job_id == 0 && cl.spec_json == NULL);
	store_close(s);
	ASSERT(same_as_golden(&b, "claim") == 0);
	buf_release(&b);
}

/* ---- a job's detail: the same JSON bytes ---- */

/*
 * pairs_store's store and more on its running job (host 1): a failed
 * run with hostile error text and no duration, the profile slot's run
 * with nested, non-ASCII documents, and a log of more than the 64 KiB
 * tail in multi-byte characters ending in the hostile strings (quotes,
 * markup, control bytes) that are UTF-8.  Host 2 then takes a queued job and
 * logs bytes that are not UTF-8; the last job stays queued with nothing.
 */
static void
job_store(struct store **out)
{
	static const struct store_metric m[] = {
		{ "\xc3\xa9t\xc3\xa9 \"q\"", "\xc2\xb5s", "lower", 0.125 },
	};
	struct store_run fail = { 0, 2, "failed", -1,
		"boom \"x\" <b>&amp;\t\x01\x1b[31m\r\n end", NULL, 0, NULL, 0,
		NULL, NULL };
	struct store_run prof = { 0, 5, "ok", 2.75, NULL, "raw", 3, m, 1,
		"{\"share_pct\":2.5,\"matched\":[{\"symbol\":\"try_charge "
		"\xc3\xbc\xe2\x82\xac\",\"pct\":2.5}],\"z\":{\"b\":{\"a\":[1,"
		"2.5,null,true,\"\\u0001<\"]}},\"a\":{}}",
		"{\"thp\":\"never\",\"governor\":\"\xe6\x80\xa7\xe8\x83\xbd\","
		"\"kernel_build\":{\"release\":\"6.8.0-pw <x>\",\"build_id\":"
		"\"b2\",\"boot\":\"kexec\",\"cached\":false}}" };
	static const char unit[] = "\xc3\xa9\xe2\x82\xac\"<";
	static const char bad[] = "ok \xff\xfe bad\n";
	struct buf log = BUF_INIT(1 << 20);
	struct store *s = NULL;
	int64_t job, other;
	struct store_claimed cl;
	size_t i;

	pairs_store(&s);
	ASSERT(s != NULL);
	job = running_job(s);
	ASSERT(job > 0);
	fail.job_id = prof.job_id = job;
	ASSERT(store_run_add(s, 1, &fail, 1620) == 0);
	ASSERT(store_run_add(s, 1, &prof, 1630) == 0);
	for (i = 0; log.len < 70 * 1024; i++)
		buf_puts(&log, unit);
	ASSERT(store_log_append(s, NULL, 1, job, log.data, log.len, 1640) == 0);
	/* All but the one that is not UTF-8 (that would empty the tail). */
	for (i = 0; i < NHOSTILE; i++)
		if (i != 5)
			ASSERT(store_log_append(s, NULL, 1, job, hostile[i],
			           strlen(hostile[i]), 1650) == 0);
	buf_release(&log);
	ASSERT(store_claim(s, &cl, 2, 1700, 60) == 0);
	other = cl.job_id;
	store_claimed_release(&cl);
	ASSERT(other > 0);
	ASSERT(store_log_append(
	           s, NULL, 2, other, bad, sizeof(bad) - 1, 1710) == 0);
	*out = s;
}

static void
job_log(struct buf *b, struct store *s, int64_t id)
{
	buf_printf(b, "--- job %lld\n", (long long)id);
	ASSERT(web_job_log_text(s, id, b) == 0);
	buf_putc(b, '\n');
}

/*
 * GET /api/v1/jobs/{id} and the log page /jobs/{id}/log answer the bytes
 * of tests/data/web/job.json and job_log.txt, which the store wrote when
 * it made the job's JSON itself (before the typed job read): job_store's
 * jobs (running with runs, a profile and a long log; failed; running
 * with a log that is not UTF-8; queued) and meta_store's (done, with the
 * kernel builds their runs booted).
 */
TEST(test_web__job_json_unchanged)
{
	struct buf b = BUF_INIT(1 << 20), t = BUF_INIT(1 << 20);
	struct store *s = NULL;
	json_t *o = NULL;
	int64_t id;

	job_store(&s);
	ASSERT(s != NULL);
	for (id = 1; id <= 4; id++) {
		id_api(&b, s, id, api_job_json);
		job_log(&t, s, id);
	}
	ASSERT_INTEQ(api_job_json(s, 999, &o), ERR_NOTFOUND);
	ASSERT(o == NULL);
	ASSERT_INTEQ(web_job_log_text(s, 999, &t), ERR_NOTFOUND);
	store_close(s);
	meta_store(&s);
	ASSERT(s != NULL);
	for (id = 1; id <= 4; id++) {
		id_api(&b, s, id, api_job_json);
		job_log(&t, s, id);
	}
	store_close(s);
	ASSERT(same_as_golden(&b, "job") == 0);
	ASSERT(same_as_golden(&t, "job_log.txt") == 0);
	buf_release(&b);
	buf_release(&t);
}
