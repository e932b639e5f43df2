/*
 * The e-mail of a report: a plain-text body in the form kernel
 * developers read, and the whole message built with the headers of
 * alert_mail_header.c (daemon/alert.h, docs/ALERTS.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/xalloc.h"
#include "config/config.h"
#include "config/job_yaml.h"
#include "daemon/alert.h"
#include "daemon/alert_mail_int.h"

/* Untrusted text for a body or header: control characters to spaces. */
static void
put_clean(struct buf *b, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s != NULL && s[i] != '\0' && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		buf_putc(b, c < 0x20 || c == 0x7f ? ' ' : (char)c);
	}
}

char *
alert_mail_i_clean(const char *s, size_t max)
{
	struct buf b = BUF_INIT(max + 1);

	put_clean(&b, s ? s : "", max);
	return buf_take(&b);
}

/* Untrusted text, cleaned and wrapped at spaces to lines of at most 78
 * columns (a word longer than a line goes on a line of its own), each
 * line after indent spaces. */
static void
put_wrapped(struct buf *b, const char *s, size_t max, int indent)
{
	char *t = alert_mail_i_clean(s, max), *w, *save = NULL;
	int col = 0;

	for (w = strtok_r(t, " ", &save); w != NULL;
	     w = strtok_r(NULL, " ", &save)) {
		int n = (int)strlen(w);

		if (col > 0 && col + 1 + n > 78) {
			buf_puts(b, "\n");
			col = 0;
		}
		if (col == 0) {
			buf_printf(b, "%*s%s", indent, "", w);
			col = indent + n;
		} else {
			buf_printf(b, " %s", w);
			col += 1 + n;
		}
	}
	if (col > 0)
		buf_puts(b, "\n");
	free(t);
}

static int
addr_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || strchr(".!#$%&'*+/=?^_`{|}~@-", c);
}

int
alert_mail_addr(char *out, size_t n, const char *s)
{
	const char *lt, *gt, *p;
	size_t len, i, at = 0;

	if (s == NULL)
		return -1;
	for (p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return -1; /* CR, LF, NUL...: hostile, not a typo */
	lt = strrchr(s, '<');
	if (lt != NULL && strchr(s, '<') != lt)
		return -1;
	if (lt != NULL) {
		if ((gt = strchr(lt, '>')) == NULL)
			return -1;
		p = lt + 1;
		len = (size_t)(gt - p);
	} else {
		while (*s == ' ')
			s++;
		p = s;
		len = strlen(s);
		while (len > 0 && p[len - 1] == ' ')
			len--;
	}
	if (len == 0 || len >= n || len > 254)
		return -1;
	for (i = 0; i < len; i++) {
		if (!addr_char((unsigned char)p[i]))
			return -1;
		at += p[i] == '@';
	}
	if (at != 1 || p[0] == '@' || p[len - 1] == '@')
		return -1;
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}

/* ---- body ---- */

static void
num(char *out, size_t n, double v)
{
	if (isnan(v))
		snprintf(out, n, "unknown");
	else
		snprintf(out, n, "%.6g", v);
}

static void
spread(char *out, size_t n, double mean, double sd)
{
	if (isnan(mean) || isnan(sd) || mean == 0)
		snprintf(out, n, "    ?");
	else
		snprintf(out, n, "%4.1f%%", 100.0 * sd / fabs(mean));
}

static const char *
jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : NULL;
}

/* "base -pw900, candidate -pw901" (runner text, cleaned). */
static void
build_ids(struct buf *b, const struct alert_report *r)
{
	buf_puts(b, "base ");
	put_clean(b, r->kernel[0].build_id, 128);
	buf_puts(b, ", candidate ");
	put_clean(b, r->kernel[1].build_id, 128);
}

/* The kernel each side ran (docs/KERNEL.md), and the warning when both
 * ran one build. */
static void
kernels(struct buf *b, const struct alert_report *r)
{
	struct buf l = BUF_INIT(CAP_ERRMSG);
	int i;

	buf_puts(b, "  kernel build ids: ");
	build_ids(b, r);
	buf_puts(b, "\n");
	for (i = 0; i < 2; i++) {
		buf_reset(&l);
		buf_puts(&l, i == 0 ? "base: " : "candidate: ");
		kfacts_line(&l, &r->kernel[i]);
		put_wrapped(b, l.data, 1000, 4);
	}
	buf_release(&l);
	if (r->kernel_warning != NULL) {
		buf_puts(b, "  WARNING, kernels:\n");
		put_wrapped(b, r->kernel_warning, 1000, 4);
	}
}

static void
machine(struct buf *b, const struct alert_report *r)
{
	const struct store_alert_info *x = r->x;
	json_t *inv = x->inventory
	    ? pwjson_parse(x->inventory, strlen(x->inventory), NULL)
	    : NULL;
	const char *cpu = jstr(inv, "cpu_model"), *k = jstr(inv, "kernel");
	json_t *mem = json_object_get(inv, "memory_bytes");

	buf_puts(b, "test machine: ");
	put_clean(b, x->host ? x->host : "unknown", 128);
	buf_puts(b, "\n  cpu: ");
	put_clean(b, cpu ? cpu : "unknown", 128);
	buf_puts(b, "\n  ");
	if (json_is_integer(json_object_get(inv, "sockets")))
		buf_printf(b, "%lld sockets, %lld cores, %lld threads",
		    (long long)json_integer_value(
		        json_object_get(inv, "sockets")),
		    (long long)json_integer_value(
		        json_object_get(inv, "cores")),
		    (long long)json_integer_value(
		        json_object_get(inv, "threads")));
	else
		buf_puts(b, "sockets, cores, threads: unknown");
	if (json_is_integer(mem))
		buf_printf(b, ", %.1f GiB memory",
		    (double)json_integer_value(mem) / (1024.0 * 1024 * 1024));
	else
		buf_puts(b, ", memory unknown");
	buf_puts(b, "\n  kernel at registration: ");
	put_clean(b, k ? k : "unknown", 128);
	buf_puts(b, "\n");
	kernels(b, r);
	if (x->suspect != NULL) {
		/* docs/HOST.md: the sides are not comparable as measured. */
		buf_puts(b,
		    "  host state: SUSPECT, the two sides ran under different "
		    "host states:\n");
		put_wrapped(b, x->suspect, 1000, 4);
	}
	json_decref(inv);
}

/* The charge-path share of the headline's point, judged like any metric,
 * and the symbols of both sides next to each other (docs/MEMCG.md). */
static void
charge(struct buf *b, const struct alert_report *r)
{
	const struct store_alert_info *x = r->x;
	const struct store_alert_cmp *h = r->nchg ? &x->cmp[r->head] : NULL,
	                             *c = NULL;
	size_t i;

	for (i = 0; h != NULL && i < x->ncmp && c == NULL; i++)
		if (strcmp(x->cmp[i].metric, "memcg.charge_path_share_pct") ==
		        0 &&
		    strcmp(x->cmp[i].point ? x->cmp[i].point : "",
		        h->point ? h->point : "") == 0)
			c = &x->cmp[i];
	if (c == NULL && r->charge_runs[0] + r->charge_runs[1] == 0) {
		buf_puts(b,
		    "charge-path share: not measured (no perf profile in "
		    "this report)\n");
		return;
	}
	buf_puts(b, "charge-path share (memcg charge path, % of samples):");
	if (c != NULL) {
		char ch[32];

		alert_mail_i_pct(ch, sizeof(ch), c->change_pct);
		buf_printf(b, "\n  base %.2f%%, candidate %.2f%%, %s, %s\n",
		    c->base_median, c->cand_median, ch, c->verdict);
	} else
		buf_puts(b, " not judged in this report\n");
	if (r->ncharge == 0) {
		buf_printf(b,
		    "  no charge-path symbol sampled (%d base and %d "
		    "candidate profiled runs)\n",
		    r->charge_runs[0], r->charge_runs[1]);
		return;
	}
	buf_printf(b,
	    "  symbols, mean share over %d base and %d candidate profiled "
	    "runs:\n",
	    r->charge_runs[0], r->charge_runs[1]);
	buf_printf(
	    b, "  %-40s %8s %8s %8s\n", "symbol", "base", "cand", "change");
	for (i = 0; i < r->ncharge; i++) {
		const struct chargepath_sym *s = &r->charge[i];
		char sym[41];
		size_t k;

		/* Symbols come from the runner's perf: cleaned, cut. */
		snprintf(sym, sizeof(sym), "%s", s->symbol ? s->symbol : "?");
		for (k = 0; sym[k]; k++)
			if ((unsigned char)sym[k] < 0x20 || sym[k] == 0x7f)
				sym[k] = ' ';
		buf_printf(b, "  %-40s %7.2f%% %7.2f%% %+7.2f\n", sym,
		    s->base_pct, s->cand_pct, s->cand_pct - s->base_pct);
	}
}

static void
params(struct buf *b, const struct alert_report *r, json_t *spec,
    const struct store_alert_cmp *c)
{
	json_t *cg = json_object_get(spec, "cgroup"), *pr, *v;
	const char *key;
	json_int_t mm = json_integer_value(json_object_get(cg, "memory_max"));

	buf_puts(b, "parameters:\n  point: ");
	put_clean(b, c && c->point && c->point[0] ? c->point : "(none)", 256);
	buf_puts(b, "\n  cgroup: ");
	put_clean(b, jstr(cg, "path") ? jstr(cg, "path") : "unknown", 256);
	if (mm > 0)
		buf_printf(b, ", memory.max %lld bytes", (long long)mm);
	else
		buf_puts(b, ", memory.max max");
	pr = json_object_get(spec, "params");
	json_object_foreach(pr, key, v)
	{
		if (!json_is_string(v))
			continue;
		buf_puts(b, "\n  ");
		put_clean(b, key, 64);
		buf_puts(b, ": ");
		put_clean(b, json_string_value(v), 256);
	}
	buf_puts(b, "\n  kernel builds: ");
	/* A kernel: block in the job: the runner builds each side's
	 * commit; else both sides run on the running kernel. */
	if (json_is_object(json_object_get(spec, "kernel"))) {
		buf_puts(b, "each side's commit, built by the runner\n    (");
		build_ids(b, r);
		buf_puts(b, ")\n");
	} else
		buf_puts(b,
		    "none: both sides ran on the test machine's "
		    "running kernel\n");
}

static void
table(struct buf *b, const struct alert_report *r)
{
	const struct store_alert_info *x = r->x;
	size_t i;

	buf_puts(b,
	    "      base (±sd)    %change    95% CI of change    "
	    "cand (±sd)\n"
	    "  ---------------- --------- ------------------ "
	    "----------------\n");
	for (i = 0; i < r->nchg && i < ALERT_MAX_ROWS; i++) {
		const struct store_alert_cmp *c = &x->cmp[r->chg[i]];
		char bm[32], cm[32], bs[16], cs[16], ch[32], lo[32], hi[32];

		num(bm, sizeof(bm), c->base_median);
		num(cm, sizeof(cm), c->cand_median);
		spread(bs, sizeof(bs), c->base_mean, c->base_sd);
		spread(cs, sizeof(cs), c->cand_mean, c->cand_sd);
		alert_mail_i_pct(ch, sizeof(ch), c->change_pct);
		alert_mail_i_pct(lo, sizeof(lo), c->ci_low);
		alert_mail_i_pct(hi, sizeof(hi), c->ci_high);
		buf_printf(b, "  %10s ±%s %9s [%7s, %7s] %10s ±%s\n", bm, bs,
		    ch, lo, hi, cm, cs);
		buf_printf(b, "%19s%s.", "", x->job);
		put_clean(b, c->metric, 128);
		buf_printf(b, ": %s, %lld+%lld runs", c->verdict,
		    (long long)c->n_base, (long long)c->n_cand);
		if (c->point && c->point[0]) {
			buf_puts(b, ", ");
			put_clean(b, c->point, 120);
		}
		buf_puts(b, "\n");
	}
	if (r->nchg > ALERT_MAX_ROWS)
		buf_printf(b, "  ... and %zu more on the dashboard\n",
		    r->nchg - ALERT_MAX_ROWS);
}

static void
links(struct buf *b, const struct alert_report *r)
{
	const struct store_alert_info *x = r->x;

	if (r->public_url == NULL) {
		buf_puts(b, "dashboard: unknown (public_url is not set)\n");
		return;
	}
	buf_printf(b, "dashboard:\n  %s/commit/%s\n", r->public_url,
	    x->sha ? x->sha : "");
	if (x->series_id > 0)
		buf_printf(b, "  %s/series/%lld\n", r->public_url,
		    (long long)x->series_id);
}

/* What a bisection of this report's regression found (daemon/bisect.c):
 * the culprit and its verification, or why it named none. */
static void
bisect_block(struct buf *b, const struct store_alert_info *x)
{
	if (x->bisect_state != NULL && x->bisect_origin != NULL) {
		buf_puts(b, "\n");
		put_clean(b, x->bisect_origin, 256);
		buf_puts(b, ":");
	}
	if (x->bisect != NULL) {
		buf_puts(b, "\nbisected to ");
		put_clean(b, x->bisect, 256);
		buf_puts(b, "\n");
		if (x->bisect_parent != NULL) {
			buf_puts(b, "  against its parent: ");
			put_clean(b, x->bisect_parent, 300);
			buf_puts(b, "\n");
		}
		if (x->bisect_revert != NULL) {
			buf_puts(b, "  its revert on this commit: ");
			put_clean(b, x->bisect_revert, 300);
			buf_puts(b, "\n");
		}
	} else if (x->bisect_state != NULL) {
		buf_puts(b, "\nbisection ");
		put_clean(b, x->bisect_state, 32);
		buf_puts(b, ", no culprit named: ");
		put_clean(b, x->bisect_reason, 400);
		buf_puts(b, "\n");
	}
}

static void
followup_body(struct buf *b, const struct alert_report *r)
{
	const char *p;

	buf_puts(b,
	    "Hello,\n\nmore measurements changed what perfwatch "
	    "reported earlier in this thread\n");
	buf_puts(b, "for ");
	put_clean(b, r->x->job, 64);
	buf_puts(b, " on ");
	put_clean(b, r->x->host ? r->x->host : "unknown", 64);
	buf_printf(b, " (commit %.12s).\n\n", r->x->sha ? r->x->sha : "?");
	if (r->x->bisect_state != NULL) {
		bisect_block(b, r->x);
		buf_puts(b, "\n");
	}
	if (r->nchg == 0)
		buf_puts(b,
		    "Now: every metric reported before is unchanged "
		    "or inconclusive.\n\n");
	else {
		buf_puts(b, "Now:\n\n");
		table(b, r);
		buf_puts(b, "\n");
	}
	buf_puts(b, "Reported before (point|metric|verdict):\n");
	if (r->prev == NULL || r->prev[0] == '\0')
		buf_puts(b,
		    "  nothing: every metric was unchanged or "
		    "inconclusive\n");
	for (p = r->prev ? r->prev : ""; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, n);

		buf_puts(b, "  ");
		put_clean(b, line, 256);
		buf_puts(b, "\n");
		free(line);
		p += n + (nl != NULL);
	}
	buf_puts(b, "\n");
	links(b, r);
}

/*
 * One argument of the job's command with the runner's placeholders
 * (docs/CONFIG.md "Commands") as a reader runs it by hand in the
 * checkout: {workdir} is ".", {run} 1, {cpus} $(nproc), {host} the
 * machine, {server} 127.0.0.1; a job parameter its value.  Others stay.
 */
static void
put_arg(struct buf *b, const char *s, json_t *spec, const char *host)
{
	json_t *pr = json_object_get(spec, "params");

	while (*s) {
		const char *c = strchr(s, '}');
		size_t n = c && *s == '{' ? (size_t)(c - s - 1) : 0;
		char name[64];
		const char *v = NULL;

		if (n == 0 || n >= sizeof(name) ||
		    strspn(s + 1, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
		        n) {
			buf_putc(b, *s >= 0x20 && *s != 0x7f ? *s : ' ');
			s++;
			continue;
		}
		memcpy(name, s + 1, n);
		name[n] = '\0';
		if (json_is_string(json_object_get(pr, name)))
			v = json_string_value(json_object_get(pr, name));
		else if (strcmp(name, "workdir") == 0)
			v = ".";
		else if (strcmp(name, "run") == 0)
			v = "1";
		else if (strcmp(name, "cpus") == 0)
			v = "$(nproc)";
		else if (strcmp(name, "server") == 0)
			v = "127.0.0.1";
		else if (strcmp(name, "host") == 0)
			v = host ? host : "localhost";
		if (v != NULL)
			put_clean(b, v, 256);
		else
			buf_add(b, s, n + 2);
		s += n + 2;
	}
}

static void
put_argv(struct buf *b, json_t *arr, json_t *spec, const char *host)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(v);
		char *c = alert_mail_i_clean(s ? s : "", 512);

		buf_puts(b, i ? " " : "  ");
		put_arg(b, c, spec, host);
		free(c);
	}
	buf_putc(b, '\n');
}

/* A list of spec's strings with the placeholders filled (put_arg). */
static void
filled_list(struct strlist *out, json_t *arr, json_t *spec, const char *host)
{
	size_t i;
	json_t *v;

	out->v = xcalloc(json_array_size(arr) + 1, sizeof(*out->v));
	out->n = 0;
	json_array_foreach(arr, i, v)
	{
		struct buf a = BUF_INIT(1024);
		char *c = alert_mail_i_clean(
		    json_string_value(v) ? json_string_value(v) : "", 512);

		put_arg(&a, c, spec, host);
		out->v[out->n++] = buf_take(&a);
		free(c);
	}
}

/*
 * The job as the YAML of a job file, its placeholders filled as in the
 * commands above, so that a reader runs the same job by hand or with
 * a perfwatch of their own.  Nothing when the spec names no parser
 * this perfwatch knows.
 */
static void
job_yaml(struct buf *b, json_t *spec, const char *host)
{
	struct job_config j;
	json_t *m = json_object_get(spec, "metrics"), *v;
	const char *name;
	size_t i;

	memset(&j, 0, sizeof(j));
	if (config_parser_from_name(&j.parser,
	        json_string_value(json_object_get(spec, "parser"))
	            ? json_string_value(json_object_get(spec, "parser"))
	            : "") != 0)
		return;
	j.name =
	    alert_mail_i_clean(json_string_value(json_object_get(spec, "name"))
	            ? json_string_value(json_object_get(spec, "name"))
	            : "job",
	        64);
	filled_list(&j.build, json_object_get(spec, "build"), spec, host);
	filled_list(&j.command, json_object_get(spec, "command"), spec, host);
	j.runs = json_integer_value(json_object_get(spec, "runs"));
	j.max_runs = json_integer_value(json_object_get(spec, "max_runs"));
	j.timeout_s = json_integer_value(json_object_get(spec, "timeout_s"));
	j.metrics = xcalloc(json_object_size(m) + 1, sizeof(*j.metrics));
	json_object_foreach(m, name, v)
	{
		struct cfg_metric *c = &j.metrics[j.nmetrics++];
		const char *better =
		    json_string_value(json_object_get(v, "better"));

		c->name = alert_mail_i_clean(name, 128);
		c->better = better && strcmp(better, "lower") == 0
		    ? CFG_BETTER_LOWER
		    : CFG_BETTER_HIGHER;
		c->min_effect_pct =
		    json_number_value(json_object_get(v, "min_effect_pct"));
	}
	buf_puts(b, "the job, as a perfwatch job file:\n");
	config_job_yaml(b, "  ", &j);
	for (i = 0; i < j.nmetrics; i++)
		free(j.metrics[i].name);
	free(j.metrics);
	for (i = 0; i < j.build.n; i++)
		free(j.build.v[i]);
	for (i = 0; i < j.command.n; i++)
		free(j.command.v[i]);
	free(j.build.v);
	free(j.command.v);
	free(j.name);
}

/*
 * "To reproduce", for a reader of the list with nothing but git (and
 * b4): the public tree and its commits, the series' patches by their
 * Message-ID (a series' commits are perfwatch's own, in no public
 * tree), then the job's build and command with placeholders filled in.
 */
static void
reproduce(struct buf *b, const struct alert_report *r, json_t *spec)
{
	const struct store_alert_info *x = r->x;
	int64_t k = alert_pinned_patch(x);
	int series = x->series_id > 0 && x->series_msgid != NULL &&
	    strncmp(x->series_msgid, "no-message-id-", 14) != 0;

	buf_puts(b, "\nto reproduce (each side on the same machine):\n");
	buf_puts(b, "  git fetch ");
	put_clean(b, r->tree_url ? r->tree_url : "<the tree>", 512);
	buf_puts(b, " ");
	put_clean(b, x->branch && x->branch[0] ? x->branch : "HEAD", 128);
	if (series) {
		buf_printf(b, "\n  git checkout %.40s     # the series' base\n",
		    x->series_base ? x->series_base
		                   : (x->base_sha ? x->base_sha : "?"));
		if (k > 0)
			buf_printf(b, "  b4 am -P 1-%lld ", (long long)k);
		else
			buf_puts(b, "  b4 am ");
		put_clean(b, x->series_msgid, 256);
		buf_puts(b, "\n  git am ./*.mbx");
		if (k > 2)
			buf_printf(b,
			    "                 # patches 1..%lld (the base "
			    "side: 1..%lld)\n",
			    (long long)k, (long long)k - 1);
		else if (k == 2)
			buf_puts(b,
			    "                 # patches 1..2 (the base "
			    "side: patch 1)\n");
		else if (k == 1)
			buf_puts(b,
			    "                 # patch 1 (the base side: "
			    "the series' base)\n");
		else
			buf_puts(b, "\n");
		/* The list's own archive when the inbox names one. */
		if (r->archive != NULL && r->archive[0]) {
			buf_puts(b, "  (the series: ");
			put_clean(b, r->archive, 256);
			if (r->archive[strlen(r->archive) - 1] != '/')
				buf_putc(b, '/');
			put_clean(b, x->series_msgid, 256);
			buf_puts(b, "/)\n");
		} else {
			buf_puts(
			    b, "  (the series: https://lore.kernel.org/r/");
			put_clean(b, x->series_msgid, 256);
			buf_puts(b, ")\n");
		}
	} else {
		buf_printf(b, "\n  git checkout %.40s\n  (base: %.40s)\n",
		    x->sha ? x->sha : "?",
		    x->base_sha ? x->base_sha : "unknown");
	}
	buf_puts(b, "then, in the checkout of each side:\n");
	if (json_array_size(json_object_get(spec, "build")) > 0)
		put_argv(b, json_object_get(spec, "build"), spec, x->host);
	put_argv(b, json_object_get(spec, "command"), spec, x->host);
	buf_puts(b, "  (job ");
	put_clean(b, x->job, 64);
	buf_printf(b, ", %lld runs per side, in turns)\n",
	    (long long)json_integer_value(json_object_get(spec, "runs")));
	job_yaml(b, spec, x->host);
}

void
alert_mail_body(struct buf *b, const struct alert_report *r)
{
	const struct store_alert_info *x = r->x;
	const struct store_alert_cmp *h = r->nchg ? &x->cmp[r->head] : NULL;
	json_t *spec =
	    x->spec ? pwjson_parse(x->spec, strlen(x->spec), NULL) : NULL;
	char ch[32], lo[32], hi[32];
	size_t i, ntax = 0;

	if (r->followup) {
		followup_body(b, r);
		json_decref(spec);
		return;
	}
	alert_mail_i_pct(ch, sizeof(ch), h ? h->change_pct : NAN);
	alert_mail_i_pct(lo, sizeof(lo), h ? h->ci_low : NAN);
	alert_mail_i_pct(hi, sizeof(hi), h ? h->ci_high : NAN);
	buf_puts(b, "Hello,\n\nperfwatch found a ");
	if (h == NULL && x->bisect_origin != NULL) {
		/* No pair of this commit changed: a history change point,
		 * bisected (docs/BISECT.md). */
		buf_puts(b, "change point on the history of ");
		put_clean(b, x->job, 64);
		if (x->ncp > 0) {
			buf_puts(b, ".");
			put_clean(b, x->cp[0].metric, 128);
		}
		buf_puts(b, " at:\n\n");
	} else {
		buf_printf(
		    b, "%s %s of %s.", ch, h ? h->verdict : "change", x->job);
		put_clean(b, h ? h->metric : "?", 128);
		buf_puts(b, " on:\n\n");
	}
	buf_printf(b, "commit: %.12s (\"", x->sha ? x->sha : "?");
	put_clean(b, x->subject, 200);
	/* A series' commits are made here from the mail: no public tree
	 * has them ("To reproduce" takes the mail instead). */
	buf_puts(b,
	    x->series_id > 0 ? "\", perfwatch's commit of the mail)" : "\")");
	buf_puts(b, "\nauthor: ");
	put_clean(b, x->author ? x->author : "unknown", 200);
	buf_puts(b, "\ntree:   ");
	put_clean(b, x->tree ? x->tree : "unknown", 64);
	buf_puts(b, " ");
	put_clean(b, x->branch ? x->branch : "(branch unknown)", 128);
	buf_printf(
	    b, "\nbase:   %.12s\n", x->base_sha ? x->base_sha : "unknown");
	if (x->series_id > 0) {
		buf_printf(b, "series: [PATCH v%lld 0/%lld] ",
		    (long long)x->version, (long long)x->total);
		put_clean(b, x->series_title, 200);
		buf_puts(b, "\n        from ");
		put_clean(b, x->inbox ? x->inbox : "unknown", 64);
		buf_puts(b, ", ");
		put_clean(b, x->series_msgid, 256);
		buf_puts(b, "\n");
	}
	links(b, r);
	buf_puts(b, "\nhow sure: ");
	buf_printf(b,
	    "change %s, 95%% CI [%s, %s],\n  %lld base and %lld "
	    "candidate runs, verdict %s",
	    ch, lo, hi, h ? (long long)h->n_base : 0LL,
	    h ? (long long)h->n_cand : 0LL, h ? h->verdict : "unknown");
	buf_puts(b,
	    h && strcmp(h->verdict, "unstable") == 0
	        ? "\n  (unstable: the candidate's runs are bimodal or far "
	          "noisier than\n  the base's; this wins over the "
	          "median)\n\n"
	        : "\n  (the 95% bootstrap interval of the change of medians "
	          "lies beyond\n  the metric's min_effect; the false "
	          "discovery rate is controlled\n  across the job's "
	          "metrics)\n\n");
	machine(b, r);
	buf_puts(b, "\n");
	params(b, r, spec, h);
	buf_puts(b,
	    "\nchanged metrics (medians; spread is the sd of the "
	    "runs):\n\n");
	table(b, r);
	for (i = 0; i < x->ncmp; i++)
		if (strncmp(x->cmp[i].metric, "memcg_tax.", 10) == 0) {
			char c2[32];

			if (ntax++ == 0)
				buf_puts(b,
				    "\nmemcg tax (nested vs root memcg "
				    "on the same kernel):\n");
			alert_mail_i_pct(c2, sizeof(c2), x->cmp[i].change_pct);
			buf_puts(b, "  ");
			put_clean(b, x->cmp[i].metric, 128);
			buf_printf(b, " %s %s\n", c2, x->cmp[i].verdict);
		}
	if (ntax == 0)
		buf_puts(b,
		    "\nmemcg tax: not measured (no root sibling in "
		    "this job's matrix)\n");
	charge(b, r);
	for (i = 0; i < x->ncp; i++) {
		const struct store_alert_cp *c = &x->cp[i];
		char c2[32];

		if (i == 0)
			buf_puts(
			    b, "\nhistory change points at this commit:\n");
		alert_mail_i_pct(c2, sizeof(c2), c->change_pct);
		buf_puts(b, "  ");
		put_clean(b, c->metric, 128);
		buf_printf(b, " %s (%s), between %.12s and %.12s\n", c2,
		    c->direction ? c->direction : "?",
		    c->lo_sha ? c->lo_sha : "unknown",
		    c->hi_sha ? c->hi_sha : "unknown");
	}
	bisect_block(b, x);
	reproduce(b, r, spec);
	buf_puts(b,
	    "\nIf you fix the issue in a separate patch, kindly add "
	    "these tags:\n");
	buf_puts(b, "| Reported-by: ");
	put_clean(b, r->from ? r->from : "perfwatch", 256);
	buf_puts(b, "\n");
	if (r->archive != NULL && r->message_id != NULL) {
		/* The Message-ID is ours (perfwatch.<hex>.<job>...@host):
		 * only the brackets to drop. */
		size_t l = strlen(r->message_id);
		const char *id = r->message_id + (r->message_id[0] == '<');

		l -= (size_t)(id - r->message_id);
		if (l > 0 && id[l - 1] == '>')
			l--;
		buf_printf(b, "| Closes: %s%s%.*s/\n", r->archive,
		    r->archive[strlen(r->archive) - 1] == '/' ? "" : "/",
		    (int)l, id);
	}
	if (r->public_url != NULL)
		buf_printf(b, "| Link: %s/commit/%s\n", r->public_url,
		    x->sha ? x->sha : "");
	buf_puts(b,
	    "\n-- \nperfwatch, a performance-regression CI for memcg "
	    "work\n");
	json_decref(spec);
}

/* Whether no line passes RFC 5321's 998 octets. */
static int
short_lines(const char *s)
{
	size_t n = 0, max = 0;

	for (; *s; s++) {
		n = *s == '\n' ? 0 : n + 1;
		if (n > max)
			max = n;
	}
	return max <= 998;
}

/* Quoted-printable (RFC 2045) of LF-ended text, CRLF line ends. */
static void
qp(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t col = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int enc = c == '=' || c >= 0x80 ||
		    ((c == ' ' || c == '\t') && (s[1] == '\n' || s[1] == '\0'));

		if (c == '\n') {
			buf_puts(out, "\r\n");
			col = 0;
			continue;
		}
		if (col + (enc ? 3 : 1) > 75) {
			buf_puts(out, "=\r\n");
			col = 0;
		}
		if (enc) {
			buf_putc(out, '=');
			buf_putc(out, hex[c >> 4]);
			buf_putc(out, hex[c & 15]);
			col += 3;
		} else {
			buf_putc(out, (char)c);
			col++;
		}
	}
}

int
alert_mail_build(struct buf *out, const struct alert_mail_in *in)
{
	struct buf body = BUF_INIT(ALERT_MAIL_MAX);
	char date[64];
	struct tm tm;
	time_t t = (time_t)(in->r != NULL ? in->r->now : in->now);

	buf_reset(out);
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	alert_mail_header(out, "Date", date, 0);
	alert_mail_header(out, "From", in->from, 1);
	alert_mail_i_header_mailboxes(out, "To", in->rcpt->to, in->rcpt->nto);
	if (in->rcpt->ncc > 0)
		alert_mail_i_header_mailboxes(
		    out, "Cc", in->rcpt->cc, in->rcpt->ncc);
	alert_mail_header(out, "Subject", in->subject, 0);
	alert_mail_header(out, "Message-ID", in->message_id, 0);
	if (in->in_reply_to != NULL)
		alert_mail_header(out, "In-Reply-To", in->in_reply_to, 0);
	if (in->references != NULL)
		alert_mail_header(out, "References", in->references, 0);
	if (in->rcpt->test_note != NULL)
		alert_mail_header(
		    out, "X-Perfwatch-Test-Mode", in->rcpt->test_note, 0);
	alert_mail_header(out, "X-Perfwatch-Event",
	    in->r == NULL         ? in->event
	        : in->r->followup ? "report.followup"
	                          : "report",
	    0);
	buf_puts(out,
	    "MIME-Version: 1.0\r\n"
	    "Content-Type: text/plain; charset=UTF-8\r\n");
	if (in->r != NULL)
		alert_mail_body(&body, in->r);
	else
		buf_puts(&body, in->text);
	if (alert_mail_i_is_ascii(body.data) || short_lines(body.data)) {
		char *p;

		/* 8bit as kernel mail is (lines are bounded: every
		 * untrusted string is cut); quoted-printable otherwise. */
		buf_printf(out, "Content-Transfer-Encoding: %s\r\n\r\n",
		    alert_mail_i_is_ascii(body.data) ? "7bit" : "8bit");
		for (p = body.data; *p; p++) {
			if (*p == '\n')
				buf_putc(out, '\r');
			buf_putc(out, *p);
		}
	} else {
		buf_puts(out,
		    "Content-Transfer-Encoding: quoted-printable\r\n"
		    "\r\n");
		qp(out, body.data);
	}
	buf_release(&body);
	return buf_failed(out) ? -1 : 0;
}
