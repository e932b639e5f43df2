/*
 * Verdicts: reads a finished pair from the store, asks the analysis
 * module, writes comparisons, regressions, re-queues and history back.
 * See verdict.h for the policy.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "analysis/spread.h"
#include "common/log.h"
#include "common/rounds.h"
#include "common/xalloc.h"
#include "daemon/hygiene.h"
#include "daemon/leases.h"
#include "daemon/sched.h"
#include "daemon/verdict.h"
#include "daemon/verdict_int.h"
#include "store/bisect.h"
#include "store/canary.h"
#include "store/history.h"
#include "store/pairs.h"
#include "store/runs.h"
#include "store/store.h"
#include "store/tx.h"

void
verdict_i_work_release(struct work *w)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		free(w->m[i].base.v);
		free(w->m[i].cand.v);
		free(w->m[i].hist.v);
		free(w->m[i].base_r.v);
		free(w->m[i].cand_r.v);
		free(w->m[i].base_i.v);
		free(w->m[i].cand_i.v);
		free(w->m[i].base_z.v);
		free(w->m[i].cand_z.v);
		free(w->m[i].own_name);
	}
	free(w->m);
	store_vpair_release(&w->pair);
	store_values_release(&w->vals);
	store_vhists_release(&w->hist);
	json_decref(w->spec);
}

const char *
verdict_i_jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static int64_t
jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static void
metric_options(struct metric *m, json_t *spec)
{
	json_t *cfg =
	    json_object_get(json_object_get(spec, "metrics"), m->name);
	const char *b = verdict_i_jstr(cfg, "better");
	json_t *me = json_object_get(cfg, "min_effect_pct");

	if (b != NULL)
		m->better = b;
	m->min_effect = json_is_number(me) && json_number_value(me) > 0
	    ? json_number_value(me)
	    : 1.0;
}

/*
 * The charge-path share (docs/MEMCG.md) is a percentage that is often
 * exactly 0 (no sample in the charge path) or a fraction of a percent, so
 * it is judged on share + CHARGE_SHARE_SHIFT points: a 0 can be compared
 * (logarithms need > 0) and sampling noise around 0.1 % does not read as
 * a 100 % change.  The medians shown stay the measured ones; the change
 * and its interval are those of the shifted values (the note says so).
 */
#define CHARGE_SHARE "memcg.charge_path_share_pct"
#define CHARGE_SHARE_SHIFT 1.0

/* The note of a judged metric: the analysis's, and for the share how
 * it was judged. */
static void
judged_note(struct metric *m)
{
	const char *an = m->res.note;

	if (strcmp(m->name, CHARGE_SHARE) == 0)
		snprintf(m->note, sizeof(m->note),
		    "judged on share + %.0f point%s%s", CHARGE_SHARE_SHIFT,
		    *an ? "; " : "", an);
	else
		snprintf(m->note, sizeof(m->note), "%s", an);
}

static void
shifted(struct vec *out, const struct vec *in)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < in->n; i++)
		verdict_i_vec_add(out, in->v[i] + CHARGE_SHARE_SHIFT);
}

static void
charge_share_compare(struct metric *m, struct analysis_opts *o, struct err *e)
{
	struct vec b, c, h;
	double bm = m->res.base_median, cm = m->res.cand_median;

	shifted(&b, &m->base);
	shifted(&c, &m->cand);
	shifted(&h, &m->hist);
	/* A share of a few samples jumps by whole samples (0 % to 7 %):
	 * sampling, not a mode that would ask for runs past max_runs. */
	o->no_low_modes = 1;
	o->history = h.v;
	o->n_history = h.n;
	if (analysis_compare(&m->res, b.v, b.n, c.v, c.n, o, e) != 0) {
		m->kind = K_INVALID;
		snprintf(
		    m->note, sizeof(m->note), "not analysed: %s", err_msg(e));
		m->res.verdict = ANALYSIS_INCONCLUSIVE;
		m->res.n_base = m->base.n;
		m->res.n_cand = m->cand.n;
	} else {
		m->kind = K_JUDGED;
		judged_note(m);
	}
	m->res.base_median = bm;
	m->res.cand_median = cm;
	free(b.v);
	free(c.v);
	free(h.v);
}

void
verdict_i_analyse_metric(struct work *w, struct metric *m)
{
	struct analysis_opts o;
	struct err e = { 0 };

	memset(&m->res, 0, sizeof(m->res));
	m->res.n_base = m->base.n;
	m->res.n_cand = m->cand.n;
	m->res.base_median = analysis_median(m->base.v, m->base.n);
	m->res.cand_median = analysis_median(m->cand.v, m->cand.n);
	m->res.change_pct = m->res.ci_low_pct = m->res.ci_high_pct = NAN;
	m->res.p_value = m->res.p_adjusted = NAN;
	m->res.verdict = ANALYSIS_INCONCLUSIVE;
	if (m->res.base_median > 0 && isfinite(m->res.cand_median))
		m->res.change_pct =
		    (m->res.cand_median / m->res.base_median - 1) * 100;
	if (m->better && strcmp(m->better, "info") == 0) {
		m->kind = K_INFO;
		snprintf(m->note, sizeof(m->note),
		    "informational metric: shown, not judged");
		return;
	}
	if (m->base.n == 0 || m->cand.n == 0) {
		m->kind = K_INVALID;
		snprintf(m->note, sizeof(m->note),
		    "not analysed: no ok run of the %s has this metric",
		    m->base.n == 0 ? "base" : "candidate");
		return;
	}
	analysis_opts_init(&o);
	o.better = m->better && strcmp(m->better, "lower") == 0
	    ? ANALYSIS_LOWER
	    : ANALYSIS_HIGHER;
	o.min_effect = m->min_effect;
	o.history = m->hist.v;
	o.n_history = m->hist.n;
	o.first_runs = (size_t)w->first_runs;
	o.max_runs = (size_t)w->max_runs;
	if (m->base_r.n == m->base.n && m->cand_r.n == m->cand.n &&
	    m->base_r.n > 0) {
		o.base_round = m->base_r.v;
		o.cand_round = m->cand_r.v;
	}
	if (m->base_z.n == m->base.n && m->cand_z.n == m->cand.n &&
	    m->base_z.n > 0) {
		o.base_cov = m->base_z.v;
		o.cand_cov = m->cand_z.v;
	}
	o.noise_floor_pct = m->floor_pct;
	if (strcmp(m->name, CHARGE_SHARE) == 0) {
		charge_share_compare(m, &o, &e);
		return;
	}
	if (analysis_compare(&m->res, m->base.v, m->base.n, m->cand.v,
	        m->cand.n, &o, &e) != 0) {
		m->kind = K_INVALID;
		snprintf(
		    m->note, sizeof(m->note), "not analysed: %s", err_msg(&e));
		m->res.verdict = ANALYSIS_INCONCLUSIVE;
		m->res.n_base = m->base.n;
		m->res.n_cand = m->cand.n;
		return;
	}
	m->kind = K_JUDGED;
	snprintf(m->note, sizeof(m->note), "%s", m->res.note);
	if (m->res.adjusted) {
		size_t len = strlen(m->note);

		snprintf(m->note + len, sizeof(m->note) - len,
		    "%sadjusted for other work on the host (%.0f%% of its CPU "
		    "in base runs, %.0f%% in candidate runs)",
		    len ? "; " : "", m->res.adjust_base, m->res.adjust_cand);
	}
}

/* Benjamini-Hochberg across the judged metrics of the pair. */
static void
control_fdr(struct work *w)
{
	struct analysis_result *r = xreallocarray(NULL, w->n + 1, sizeof(*r));
	size_t i, k = 0;

	for (i = 0; i < w->n; i++)
		if (w->m[i].kind == K_JUDGED)
			r[k++] = w->m[i].res;
	analysis_fdr(r, k, VERDICT_FDR_Q);
	for (i = 0, k = 0; i < w->n; i++) {
		if (w->m[i].kind != K_JUDGED)
			continue;
		w->m[i].res = r[k++];
		if (w->m[i].res.note[0] != '\0')
			judged_note(&w->m[i]);
	}
	free(r);
}

/* The run count to ask for, or 0 for final verdicts. */
static int64_t
wanted_runs(struct work *w)
{
	size_t i, want = 0, n;

	for (i = 0; i < w->n; i++) {
		if (w->m[i].kind != K_JUDGED)
			continue;
		n = analysis_next_runs(&w->m[i].res, (size_t)w->cur_runs,
		    (size_t)w->first_runs, (size_t)w->max_runs);
		if (n > want)
			want = n;
	}
	return (int64_t)want > w->cur_runs ? (int64_t)want : 0;
}

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * Change points of the window of one series around the point just placed
 * at seq at (the tail when it went last; a late result that landed
 * earlier in commit order re-examines its own neighbourhood), stored in
 * place of the old ones there.  *out_n counts them.
 */
static int
series_changepoints(struct store *s, size_t *out_n, int64_t series, int64_t at,
    const struct metric *m, int64_t now)
{
	struct analysis_cp_opts o;
	struct analysis_cps cps = { NULL, 0, 0, 0 };
	struct store_change_point *sc = NULL;
	struct err e = { 0 };
	double *v = NULL;
	int64_t *seq = NULL, from, to = INT64_MAX, total = 0;
	size_t n = 0, i;
	int r;

	*out_n = 0;
	if (store_history_window(
	        s, &v, &seq, &n, &total, series, at, VERDICT_CP_WINDOW) == -1)
		return -1;
	analysis_cp_opts_init(&o);
	o.better =
	    strcmp(m->better, "lower") == 0 ? ANALYSIS_LOWER : ANALYSIS_HIGHER;
	o.min_effect = m->min_effect;
	if (n < 2 * o.min_segment ||
	    analysis_changepoints(&cps, v, n, &o, &e) != 0) {
		/* Too short to tell (or a value the store should never
		 * hold): the recorded change points stay as they are. */
		free(v);
		free(seq);
		return 0;
	}
	/* A change within min_segment of the window's ends cannot be
	 * seen again from this window: keep what was recorded there. */
	from = seq[0] == 0 ? 0 : seq[0] + (int64_t)o.min_segment;
	if (seq[n - 1] < total - 1)
		to = seq[n - 1] - (int64_t)o.min_segment;
	sc = xreallocarray(NULL, cps.n + 1, sizeof(*sc));
	for (i = 0; i < cps.n; i++) {
		const struct analysis_cp *c = &cps.cp[i];

		sc[i].seq = seq[c->index];
		sc[i].lo_seq = seq[c->lo < n ? c->lo : n - 1];
		sc[i].hi_seq = seq[c->hi < n ? c->hi : n - 1];
		sc[i].before = c->before;
		sc[i].after = c->after;
		sc[i].change_pct = c->change_pct;
		sc[i].p = c->p_value;
		sc[i].direction = analysis_verdict_name(c->direction);
	}
	r = store_changepoints_replace_range(
	    s, series, from, to, sc, cps.n, now);
	if (r == 0)
		*out_n = cps.n;
	free(sc);
	analysis_cps_release(&cps);
	free(v);
	free(seq);
	return r;
}

/* Appends a final judged metric to its series (one per branch of the
 * candidate's commit, or the "submitted" series) and updates their
 * change points. */
static int
history_append(struct store *s, struct verdict_outcome *out, struct work *w,
    const struct metric *m, int64_t now)
{
	const struct store_vside *cand = &w->pair.cand;
	const char *tree = cand->tree, *branches = cand->branches;
	struct store_series_key k;
	char *list, *br, *save = NULL;
	int64_t series = 0, seq = 0;
	size_t ncp = 0;
	int r = 0;

	if (!(m->res.cand_median > 0) || !isfinite(m->res.cand_median))
		return 0;
	memset(&k, 0, sizeof(k));
	k.tree = tree ? tree : "";
	k.branch = "";
	k.host_id = w->pair.host_id;
	k.job = w->pair.name;
	k.point = w->pair.point;
	k.metric = m->name;
	k.better = m->better;
	/* A commit on several branches is in each branch's series. */
	list = xstrdup(tree && branches ? branches : "");
	br = strtok_r(list, ",", &save);
	do {
		if (br != NULL)
			k.branch = br;
		r = store_history_append(s, &series, &seq, &k, w->pair.pair_id,
		    cand->id, m->cmp_id, m->res.cand_median, now);
		if (r == 0)
			r = series_changepoints(s, &ncp, series, seq, m, now);
		out->change_points += ncp;
	} while (
	    r == 0 && br != NULL && (br = strtok_r(NULL, ",", &save)) != NULL);
	free(list);
	return r;
}

static const char *
verdict_word(const struct metric *m)
{
	if (m->kind == K_INFO)
		return "info";
	if (m->kind == K_INVALID)
		return "inconclusive";
	return analysis_verdict_name(m->res.verdict);
}

/* Writes the comparison rows (and the regressions and history that
 * follow from final ones) in the open transaction. */
int
verdict_i_write_rows(struct store *s, struct verdict_outcome *out,
    struct work *w, int64_t more, int64_t now)
{
	int64_t pair = w->pair.pair_id;
	size_t i;
	int r = 0;

	for (i = 0; r == 0 && i < w->n; i++) {
		struct metric *m = &w->m[i];
		struct store_comparison c;
		struct spread sb, sc;
		char note[sizeof(m->note) + 96];

		memset(&c, 0, sizeof(c));
		c.metric = m->name;
		c.unit = m->unit;
		c.better = m->better ? m->better : "higher";
		c.verdict = verdict_word(m);
		c.note = m->note[0] ? m->note : NULL;
		c.n_base = (int64_t)m->base.n;
		c.n_cand = (int64_t)m->cand.n;
		c.base_median = m->res.base_median;
		c.cand_median = m->res.cand_median;
		/* Each side's mean and %stddev beside its median, of the
		 * same values (every kind of metric has them). */
		spread_of(&sb, m->base.v, m->base.n);
		spread_of(&sc, m->cand.v, m->cand.n);
		c.has_spread = 1;
		c.base_mean = sb.mean;
		c.base_sd = sb.sd;
		c.cand_mean = sc.mean;
		c.cand_sd = sc.sd;
		c.change_pct = m->res.change_pct;
		c.ci_low = m->kind == K_JUDGED ? m->res.ci_low_pct : NAN;
		c.ci_high = m->kind == K_JUDGED ? m->res.ci_high_pct : NAN;
		c.p = m->kind == K_JUDGED ? m->res.p_value : NAN;
		c.p_adjusted = m->kind == K_JUDGED ? m->res.p_adjusted : NAN;
		c.min_effect = m->min_effect;
		c.final = more == 0;
		if (more && m->kind == K_JUDGED) {
			/* Nothing is said before the last look. */
			snprintf(note, sizeof(note),
			    "more runs requested (%lld); at %zu/%zu runs: "
			    "%s%s%s",
			    (long long)more, m->base.n, m->cand.n,
			    analysis_verdict_name(m->res.verdict),
			    m->note[0] ? ", " : "", m->note);
			c.note = note;
			c.verdict = "inconclusive";
		}
		r = store_verdict_put(s, &m->cmp_id, pair, &c, now);
		if (r != 0)
			break;
		out->metrics++;
		if (strcmp(c.verdict, "inconclusive") == 0)
			out->inconclusive++;
		if (more)
			continue;
		if (strcmp(c.verdict, "regression") == 0)
			out->regressions++;
		else if (strcmp(c.verdict, "unstable") == 0)
			out->unstable++;
		else if (strcmp(c.verdict, "improvement") == 0)
			out->improvements++;
		/* A bisection's pairs measure for the bisection: no
		 * history point of their own (daemon/bisect.c). */
		if (m->kind == K_JUDGED && w->bisect == 0)
			r = history_append(s, out, w, m, now);
	}
	return r;
}

/* Writes the comparisons (and what follows from them) in the open
 * transaction. */
static int
write_results(struct store *s, struct verdict_outcome *out, struct work *w,
    int64_t more, int64_t now)
{
	int64_t pair = w->pair.pair_id;
	int r = verdict_i_write_rows(s, out, w, more, now);

	if (r != 0)
		return r;
	if (more) {
		out->state = VERDICT_MORE_RUNS;
		out->runs = more;
		return store_verdict_requeue(
		    s, pair, more, ANALYSIS_MODE_MAX_RUNS, now);
	}
	out->state = VERDICT_FINAL;
	return store_verdict_done(s, pair, now);
}

/* A verdict's writes (struct verdict_tx): one transaction that first
 * checks nobody decided meanwhile.  0 with t->out filled (zeroed when
 * another decided first), or -1 with t->out zeroed.  store_tx_retry runs
 * it again whole after a lost race: it fills t->out afresh. */
struct verdict_tx {
	struct work *w;
	struct verdict_outcome *out;
	int64_t pair_id, more, now;
};

static int
verdict_write(struct store *s, void *arg)
{
	struct verdict_tx *t = arg;
	const struct store_vside *base = &t->w->pair.base;
	const struct store_vside *cand = &t->w->pair.cand;
	struct verdict_outcome *out = t->out;
	int r;

	memset(out, 0, sizeof(*out));
	if (store_begin(s) == -1)
		return -1;
	r = store_verdict_check(s, t->pair_id);
	if (r == 0) {
		/* A shared base re-run for another pair meanwhile: this
		 * verdict read a side that is not the one now stored. */
		struct store_side_stamp ss[2];

		ss[0].job_id = base->id;
		ss[0].runs = base->runs;
		ss[0].stored = base->stored;
		ss[1].job_id = cand->id;
		ss[1].runs = cand->runs;
		ss[1].stored = cand->stored;
		r = store_verdict_unchanged(s, ss, 2);
	}
	if (r == ERR_CONFLICT) {
		store_rollback(s);
		store_errclear(s);
		return 0;
	}
	if (r == 0)
		r = write_results(s, out, t->w, t->more, t->now);
	/* Did both sides run under the same host state? (hygiene.h) */
	if (r == 0)
		r = hygiene_mark(s, t->pair_id);
	if (r == 0 && out->state == VERDICT_FINAL)
		r = verdict_i_memcg_tax_after(s, out, t->pair_id, t->now);
	if (r != 0) {
		store_rollback(s);
		memset(out, 0, sizeof(*out));
		return -1;
	}
	if (store_commit(s) != 0) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	return 0;
}

int
verdict_pair(
    struct store *s, struct verdict_outcome *out, int64_t pair_id, int64_t now)
{
	struct work w;
	struct verdict_tx t;
	const struct store_vside *base, *cand;
	int64_t more;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	r = store_verdict_pair_get(s, &w.pair, pair_id);
	if (r == ERR_NOTFOUND) {
		store_errclear(s);
		return 0;
	}
	if (r != 0)
		return -1;
	base = &w.pair.base;
	cand = &w.pair.cand;
	if (w.pair.analysed || base->state == NULL || cand->state == NULL ||
	    strcmp(base->state, "success") || strcmp(cand->state, "success")) {
		verdict_i_work_release(&w);
		return 0;
	}
	if (store_bisect_pair_of(s, &w.bisect, pair_id) != 0 ||
	    store_verdict_value_list(s, &w.vals, pair_id) != 0 ||
	    store_verdict_history_list(
	        s, &w.hist, pair_id, VERDICT_HISTORY_JOBS) != 0) {
		verdict_i_work_release(&w);
		return -1;
	}
	/* The spec's text as stored; one that does not parse is {}. */
	w.spec = pwjson_doc(cand->spec_json, json_object());
	w.cur_runs = min64(base->runs, cand->runs);
	/* The job's own cap: a suspected low mode raises the jobs' (store
	 * max_past), not the one the looks were planned for. */
	w.max_runs = jint(w.spec, "max_runs");
	if (w.max_runs <= 0)
		w.max_runs = min64(base->max_runs, cand->max_runs);
	w.first_runs = jint(w.spec, "runs");
	if (w.first_runs <= 0 || w.first_runs > w.cur_runs)
		w.first_runs = w.cur_runs;
	w.round_size =
	    rounds_size(jint(w.spec, "runs"), jint(w.spec, "rounds"));
	verdict_i_group(&w);
	for (i = 0; i < w.n; i++) {
		metric_options(&w.m[i], w.spec);
		if (store_canary_floor(s, &w.m[i].floor_pct, pair_id,
		        w.m[i].name, VERDICT_FLOOR_PAIRS,
		        VERDICT_FLOOR_LEAST) != 0) {
			verdict_i_work_release(&w);
			return -1;
		}
		verdict_i_analyse_metric(&w, &w.m[i]);
	}
	control_fdr(&w);
	more = wanted_runs(&w);

	/* The statistics ran outside any lock; the writes are one
	 * transaction, run again whole when it lost to another. */
	t = (struct verdict_tx){ .w = &w,
		.out = out,
		.pair_id = pair_id,
		.more = more,
		.now = now };
	r = store_tx_retry(s, verdict_write, &t);
	verdict_i_work_release(&w);
	return r == 0 ? 0 : -1;
}

int
verdict_pending(struct store *s, size_t *out_done, size_t *out_more, size_t max,
    int64_t now)
{
	int64_t ids[VERDICT_BATCH];
	size_t n = 0, i, done = 0, more = 0;
	int failed = 0;

	if (out_done)
		*out_done = 0;
	if (out_more)
		*out_more = 0;
	if (max > VERDICT_BATCH)
		max = VERDICT_BATCH;
	if (store_verdict_pending(s, ids, max, &n) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		struct verdict_outcome o;

		if (verdict_pair(s, &o, ids[i], now) == -1) {
			log_warnx("verdict: pair %lld: %s", (long long)ids[i],
			    store_errmsg(s));
			failed = 1;
			continue;
		}
		if (o.state == VERDICT_FINAL) {
			done++;
			log_info(
			    "verdict: pair %lld: %zu metrics, %zu "
			    "regression(s), %zu unstable, %zu "
			    "improvement(s), %zu inconclusive, %zu change "
			    "point(s) in its series; %zu memcg tax row(s), "
			    "%zu of them regression or unstable",
			    (long long)ids[i], o.metrics, o.regressions,
			    o.unstable, o.improvements, o.inconclusive,
			    o.change_points, o.tax, o.tax_regressions);
		} else if (o.state == VERDICT_MORE_RUNS) {
			more++;
			log_info("verdict: pair %lld: %zu inconclusive of %zu "
			         "metrics, both jobs re-queued for %lld runs",
			    (long long)ids[i], o.inconclusive, o.metrics,
			    (long long)o.runs);
		}
	}
	if (out_done)
		*out_done = done;
	if (out_more)
		*out_more = more;
	return failed ? -1 : 0;
}

/* ---- the thread ---- */

struct verdict_worker {
	pthread_t thread;
	pthread_mutex_t mu;
	int stop;
	struct sched *sched;
	struct store *store;
	struct leases *leases;
};

static int
stopping(struct verdict_worker *w)
{
	int v;

	pthread_mutex_lock(&w->mu);
	v = w->stop;
	pthread_mutex_unlock(&w->mu);
	return v;
}

static void *
worker(void *arg)
{
	struct verdict_worker *w = arg;
	size_t done, more;
	uint64_t gen;
	int backoff = 0, r;

	/*
	 * Verdicts are background work: a pair's statistics can take many
	 * seconds of CPU (Hodges-Lehmann with bootstrap on 1,000-run
	 * sides: 45 s a pair in make bench-api, a third of the daemon's
	 * CPU), and on a small machine they took that from the request
	 * threads, whose claims and heartbeats keep leases alive.  Linux
	 * keeps a nice value per thread; this one goes VERDICT_NICE above
	 * the daemon's (at most 19).  Failing to set it changes nothing
	 * else.
	 */
	{
		id_t tid = (id_t)syscall(SYS_gettid);
		int prio;

		errno = 0;
		prio = getpriority(PRIO_PROCESS, tid);
		if (errno == 0)
			prio =
			    prio + VERDICT_NICE > 19 ? 19 : prio + VERDICT_NICE;
		if (errno != 0 || setpriority(PRIO_PROCESS, tid, prio) == -1)
			log_warnx(
			    "verdict: cannot lower the worker's priority");
	}
	for (;;) {
		gen = sched_generation(w->sched);
		if (stopping(w))
			break;
		if (!leases_held(w->leases, LEASE_VERDICT)) {
			sched_wait(w->sched, gen, LEASE_IDLE_MS);
			continue;
		}
		store_errclear(w->store);
		r = verdict_pending(
		    w->store, &done, &more, VERDICT_BATCH, (int64_t)time(NULL));
		/* Re-queued jobs for the claims; stored verdicts for the
		 * workers that read them (the bisection's next step, the
		 * alerts), which would else wait for their next tick. */
		if (more > 0 || done > 0)
			sched_notify(w->sched);
		if (r == -1) {
			/* Logged per pair; back off so a pair that keeps
			 * failing does not spin. */
			backoff = backoff ? backoff * 2 : 1000;
			if (backoff > 60000)
				backoff = 60000;
		} else {
			backoff = 0;
			if (done + more == VERDICT_BATCH)
				continue; /* more may be waiting */
		}
		sched_wait(w->sched, gen, backoff ? backoff : 5000);
	}
	return NULL;
}

int
verdict_start(struct verdict_worker **out, struct sched *sched,
    const char *dbpath, struct leases *leases, struct err *e)
{
	struct verdict_worker *w = xcalloc(1, sizeof(*w));

	*out = NULL;
	pthread_mutex_init(&w->mu, NULL);
	w->sched = sched;
	w->leases = leases;
	if (store_open(&w->store, dbpath, e) == -1) {
		pthread_mutex_destroy(&w->mu);
		free(w);
		return -1;
	}
	store_set_writer(w->store, STORE_W_VERDICT);
	if (pthread_create(&w->thread, NULL, worker, w) != 0) {
		store_close(w->store);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return err_set(e, "verdict: cannot start thread");
	}
	*out = w;
	return 0;
}

void
verdict_stop(struct verdict_worker *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_mutex_unlock(&w->mu);
	sched_notify(w->sched);
	pthread_join(w->thread, NULL);
	store_close(w->store);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
