/*
 * Commands by reply (mailcmd.h): the lines of a mail, a report's
 * Message-ID and each line's command, read and checked.  Pure: nothing
 * here touches the store, the network or the mail's sender.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "config/config.h"
#include "daemon/mailcmd.h"
#include "daemon/mailcmd_int.h"

#define CMD_PREFIX "#perfwatch"

size_t
mailcmd_parse(struct mailcmd_line *out, size_t max, const char *body)
{
	const char *p = body ? body : "";
	size_t n = 0, line = 0, pl = strlen(CMD_PREFIX);

	while (*p && n < max) {
		size_t l = strcspn(p, "\n"), k, j = 0;

		line++;
		if (l >= pl && strncmp(p, CMD_PREFIX, pl) == 0 &&
		    (l == pl || p[pl] == ' ' || p[pl] == '\t' ||
		        p[pl] == '\r')) {
			struct mailcmd_line *c = &out[n++];

			c->line = line;
			for (k = pl; k < l && (p[k] == ' ' || p[k] == '\t');
			     k++)
				;
			for (; k < l && j + 1 < sizeof(c->text); k++) {
				unsigned char ch = (unsigned char)p[k];

				c->text[j++] =
				    ch < 0x20 || ch >= 0x7f ? ' ' : (char)ch;
			}
			while (j > 0 && c->text[j - 1] == ' ')
				j--;
			c->text[j] = '\0';
		}
		p += l;
		if (*p == '\n')
			p++;
	}
	return n;
}

int
mailcmd_report_id(
    char sha[13], char *job, size_t jobn, int64_t *host, const char *msgid)
{
	const char *p = msgid, *at, *h, *dot;
	size_t jl;

	if (strncmp(p, "perfwatch.", 10) != 0)
		return -1;
	p += 10;
	if (strspn(p, "0123456789abcdef") < 12 || p[12] != '.')
		return -1;
	memcpy(sha, p, 12);
	sha[12] = '\0';
	p += 13;
	if ((at = strchr(p, '@')) == NULL)
		return -1;
	/* "<job>.h<host>.<n>": the job may hold dots, so from the right. */
	for (dot = at - 1; dot > p && *dot != '.'; dot--)
		;
	for (h = dot - 1; h > p && *h != '.'; h--)
		;
	if (dot <= p || h <= p || h[1] != 'h' || h + 2 >= dot ||
	    (size_t)strspn(h + 2, "0123456789") != (size_t)(dot - h - 2) ||
	    (size_t)strspn(dot + 1, "0123456789") != (size_t)(at - dot - 1))
		return -1;
	jl = (size_t)(h - p);
	if (jl == 0 || jl >= jobn)
		return -1;
	memcpy(job, p, jl);
	job[jl] = '\0';
	*host = strtoll(h + 2, NULL, 10);
	return 0;
}

/* "hosts=a,b" to the labels array ["a","b"]: 0, or -1. */
static int
parse_hosts(char *out, size_t n, const char *list)
{
	size_t len = 0, k;
	const char *p = list;

	if (*p == '\0' || n < 3)
		return -1;
	out[len++] = '[';
	while (*p) {
		size_t l = strcspn(p, ",");

		if (l == 0 || l > 64 ||
		    strspn(p,
		        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
		        "VWXYZ0123456789._:-") < l ||
		    len + l + 4 >= n)
			return -1;
		if (len > 1)
			out[len++] = ',';
		out[len++] = '"';
		for (k = 0; k < l; k++)
			out[len++] = p[k];
		out[len++] = '"';
		p += l;
		if (*p == ',' && *++p == '\0')
			return -1;
	}
	out[len++] = ']';
	out[len] = '\0';
	return 0;
}

/*
 * Where a "test" may fetch from: an https, http or git URL of a host
 * named by a dotted name, or the URL of a tree the daemon watches
 * (file:// trees among them).  Never a local path, an ssh remote or an
 * address by number named by a mail.
 */
static int
test_url_ok(const struct daemon_config *dc, const char *url)
{
	const char *host, *p;
	size_t i, hl;

	for (i = 0; i < dc->ntrees; i++)
		if (strcmp(url, dc->trees[i].url) == 0)
			return 1;
	if (strncmp(url, "https://", 8) == 0)
		host = url + 8;
	else if (strncmp(url, "http://", 7) == 0)
		host = url + 7;
	else if (strncmp(url, "git://", 6) == 0)
		host = url + 6;
	else
		return 0;
	for (p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == '\\')
			return 0;
	/* A public host by name: no user part, no IP literal, no
	 * localhost, so a mail cannot point the daemon or a runner at an
	 * address inside their network by number. */
	hl = strcspn(host, "/:?#");
	if (hl == 0 || memchr(host, '@', strcspn(host, "/?#")) != NULL ||
	    host[0] == '[' || strspn(host, "0123456789.") == hl ||
	    (hl == 9 && strncasecmp(host, "localhost", 9) == 0) ||
	    memchr(host, '.', hl) == NULL)
		return 0;
	return 1;
}

/* A branch name git accepts, and no option or path trick. */
static int
branch_ok(const char *b)
{
	size_t n = strlen(b);

	return n > 0 && n <= 200 && b[0] != '-' && b[0] != '/' &&
	    b[n - 1] != '/' && strstr(b, "..") == NULL &&
	    strstr(b, "//") == NULL && strstr(b, "@{") == NULL &&
	    strspn(b,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789._/-+") == n &&
	    (n < 5 || strcmp(b + n - 5, ".lock") != 0);
}

static int
is_state(const char *s)
{
	return strcmp(s, "new") == 0 || strcmp(s, "acknowledged") == 0 ||
	    strcmp(s, "invalid") == 0 || strcmp(s, "fixed") == 0;
}

int
mailcmd_cmd_parse(struct mailcmd_cmd *c, char *words,
    const struct daemon_config *dc, const char *from, struct buf *why)
{
	char *save = NULL, *verb = strtok_r(words, " \t", &save);
	char *a1 = strtok_r(NULL, " \t", &save);
	char *a2 = strtok_r(NULL, " \t", &save);
	char *a3 = a2 ? strtok_r(NULL, " \t", &save) : NULL;

	memset(c, 0, sizeof(*c));
	c->op = MAILCMD_TRIAGE;
	if (verb == NULL) {
		buf_puts(why, "no command after #perfwatch");
		return -1;
	}
	if ((strcmp(verb, "invalid") == 0 || strcmp(verb, "ignore") == 0 ||
	        strcmp(verb, "expected") == 0) &&
	    a1 == NULL) {
		c->verb = verb[0] == 'e' ? "expected" : "invalid";
		c->state = verb[0] == 'e' ? "acknowledged" : "invalid";
		snprintf(c->note, sizeof(c->note), "%s (by mail from %s)",
		    verb[0] == 'e' ? "expected" : verb, from);
		return 0;
	}
	if (strcmp(verb, "fixed-by") == 0) {
		size_t n = a1 ? strspn(a1, "0123456789abcdef") : 0;

		if (a1 == NULL || a2 != NULL || n < 7 || n > 40 ||
		    a1[n] != '\0') {
			buf_puts(why,
			    "fixed-by takes one commit id (7 to 40 "
			    "hex digits)");
			return -1;
		}
		c->verb = "fixed-by";
		c->state = "fixed";
		memcpy(c->fixed_by, a1, n + 1);
		snprintf(c->note, sizeof(c->note),
		    "fixed by %s (by mail from %s)", a1, from);
		return 0;
	}
	if (strcmp(verb, "triage") == 0) {
		if (a1 == NULL || a2 != NULL || !is_state(a1)) {
			buf_puts(why,
			    "triage takes one state: new, "
			    "acknowledged, invalid or fixed");
			return -1;
		}
		c->verb = "triage";
		c->state = a1;
		snprintf(
		    c->note, sizeof(c->note), "%s (by mail from %s)", a1, from);
		return 0;
	}
	if (strcmp(verb, "retest") == 0) {
		char *a[2] = { a1, a2 };
		int k;

		c->op = MAILCMD_RETEST;
		c->verb = "retest";
		for (k = 0; k < 2 && a3 == NULL; k++) {
			if (a[k] == NULL)
				continue;
			if (strncmp(a[k], "runs=", 5) == 0 && c->runs == 0 &&
			    strspn(a[k] + 5, "0123456789") ==
			        strlen(a[k] + 5) &&
			    strlen(a[k] + 5) > 0 && strlen(a[k] + 5) <= 4 &&
			    (c->runs = atoll(a[k] + 5)) >= 1 && c->runs <= 1000)
				continue;
			if (strncmp(a[k], "hosts=", 6) == 0 &&
			    c->labels[0] == '\0' &&
			    parse_hosts(
			        c->labels, sizeof(c->labels), a[k] + 6) == 0) {
				snprintf(
				    c->hosts, sizeof(c->hosts), "%s", a[k] + 6);
				continue;
			}
			break;
		}
		if (a3 != NULL || k < 2) {
			buf_puts(why,
			    "retest takes runs=N (1..1000) and "
			    "hosts=LABEL,... (letters, digits, . _ : -), "
			    "each at most once");
			return -1;
		}
		return 0;
	}
	if (strcmp(verb, "test") == 0) {
		c->op = MAILCMD_TEST;
		c->verb = "test";
		if (a1 == NULL)
			return 0; /* the patch inline: mailcmd_handle checks */
		if (a2 == NULL || a3 != NULL) {
			buf_puts(why,
			    "test takes a git URL and a branch, or "
			    "nothing and a patch in the mail");
			return -1;
		}
		if (!test_url_ok(dc, a1)) {
			buf_puts(why,
			    "test fetches only from https://, http:// or "
			    "git:// URLs of a host by name, or a tree this "
			    "perfwatch watches");
			return -1;
		}
		if (!branch_ok(a2)) {
			buf_puts(why, "test: not a branch name");
			return -1;
		}
		c->url = a1;
		c->branch = a2;
		return 0;
	}
	if (strcmp(verb, "bisect") == 0 && a1 == NULL) {
		c->op = MAILCMD_BISECT;
		c->verb = "bisect";
		return 0;
	}
	buf_puts(why,
	    "unknown command; known: invalid, ignore, expected, "
	    "fixed-by <sha>, triage <state>, retest [runs=N] "
	    "[hosts=LABEL,...], bisect, test <git-url> <branch>");
	return -1;
}

void
mailcmd_cmd_normal(char *out, size_t n, const struct mailcmd_cmd *c)
{
	struct buf b = BUF_INIT(1024);

	buf_puts(&b, c->verb ? c->verb : "?");
	if (c->fixed_by[0])
		buf_printf(&b, " %s", c->fixed_by);
	else if (c->verb != NULL && strcmp(c->verb, "triage") == 0)
		buf_printf(&b, " %s", c->state);
	if (c->runs > 0)
		buf_printf(&b, " runs=%lld", (long long)c->runs);
	if (c->hosts[0])
		buf_printf(&b, " hosts=%s", c->hosts);
	if (c->url != NULL)
		buf_printf(&b, " %s %s", c->url, c->branch);
	if (n > 0)
		snprintf(out, n, "%s", b.data);
	buf_release(&b);
}
