/*
 * Benchmark hygiene, the check: what `perfwatch-runner host check` reports
 * (frequency, turbo, SMT, C-states, THP, NUMA, IRQs, memory, the kernel's
 * command line, cgroup controllers, CPU speed), each ready or not (see
 * host.h and docs/HOST.md).
 */
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "runners/cpuspeed.h"
#include "runners/host.h"
#include "runners/host_int.h"
#include "runners/inventory.h"

/* ---- check ---- */

static void add(struct host_report *r, const char *name, const char *state,
    enum host_status st, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void
add(struct host_report *r, const char *name, const char *state,
    enum host_status st, const char *fmt, ...)
{
	struct host_item *it;
	va_list ap;
	char note[1024];

	r->v = xreallocarray(r->v, r->n + 1, sizeof(*r->v));
	it = &r->v[r->n++];
	it->name = xstrdup(name);
	it->state = xstrdup(state);
	it->status = st;
	it->note = NULL;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(note, sizeof(note), fmt, ap);
		va_end(ap);
		it->note = xstrdup(note);
	}
	if (st == HOST_NOT_READY)
		r->not_ready++;
}

const char *
host_status_name(enum host_status s)
{
	switch (s) {
	case HOST_READY:
		return "ready";
	case HOST_NOT_READY:
		return "not-ready";
	case HOST_UNAVAILABLE:
		return "unavailable";
	case HOST_INFO:
		break;
	}
	return "info";
}

void
host_i_prof_of(struct prof *p, const struct runner_config *cfg)
{
	memset(p, 0, sizeof(*p));
	p->governor = "performance";
	p->turbo = CFG_TURBO_OFF;
	p->smt_off = 1;
	p->stop_irqbalance = 1;
	if (cfg == NULL)
		return;
	p->governor = cfg->host.governor;
	if (p->governor != NULL && strcmp(p->governor, "keep") == 0)
		p->governor = NULL;
	p->turbo = cfg->host.turbo;
	p->thp = cfg->host.thp;
	p->defrag = cfg->host.thp_defrag;
	p->smt_off = cfg->host.smt_off;
	p->stop_irqbalance = cfg->host.stop_irqbalance;
	p->irq_cpus = cfg->host.irq_cpus;
}

static void
check_cpufreq(struct host_report *r, const char *root, const struct prof *p)
{
	long *cpus = xcalloc(CPUS_MAX, sizeof(long));
	size_t n = host_i_numbered(cpus, CPUS_MAX, root, SYSCPU, "cpu"), i,
	       seen = 0;
	char path[256], name[64], v[VAL_MAX], lo[64], hi[64], hw[64], *s;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), SYSCPU "/cpu%ld/cpufreq", cpus[i]);
		if (!host_i_exists(root, path))
			continue;
		seen++;
		snprintf(name, sizeof(name), "cpu%ld.governor", cpus[i]);
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/scaling_governor", cpus[i]);
		if ((s = host_i_rdv(v, sizeof(v), root, path)) == NULL)
			add(r, name, NULL, HOST_UNAVAILABLE, "no %s", path);
		else if (p->governor == NULL)
			add(r, name, s, HOST_INFO, "governor: keep");
		else if (strcmp(s, p->governor) == 0)
			add(r, name, s, HOST_READY, NULL);
		else
			add(r, name, s, HOST_NOT_READY,
			    "wanted %s (host tune sets it)", p->governor);
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/scaling_min_freq", cpus[i]);
		snprintf(lo, sizeof(lo), "%s",
		    (s = host_i_rdv(v, sizeof(v), root, path)) ? s : "unknown");
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/scaling_max_freq", cpus[i]);
		snprintf(hi, sizeof(hi), "%s",
		    (s = host_i_rdv(v, sizeof(v), root, path)) ? s : "unknown");
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/cpuinfo_max_freq", cpus[i]);
		snprintf(hw, sizeof(hw), "%s",
		    (s = host_i_rdv(v, sizeof(v), root, path)) ? s : "unknown");
		snprintf(name, sizeof(name), "cpu%ld.freq_khz", cpus[i]);
		snprintf(v, sizeof(v), "min %s max %s hw_max %s", lo, hi, hw);
		add(r, name, v, HOST_INFO, NULL);
	}
	if (seen == 0)
		add(r, "cpufreq", NULL, HOST_UNAVAILABLE,
		    "no cpufreq on any of %zu CPUs (a VM, or no driver)", n);
	else if ((s = host_i_rdv(v, sizeof(v), root,
	              SYSCPU "/cpu0/cpufreq/scaling_driver")) != NULL)
		add(r, "cpufreq.driver", s, HOST_INFO, NULL);
	if ((s = host_i_rdv(v, sizeof(v), root, SYSCPU "/intel_pstate/status")))
		add(r, "intel_pstate", s, HOST_INFO, NULL);
	if ((s = host_i_rdv(v, sizeof(v), root, SYSCPU "/amd_pstate/status")))
		add(r, "amd_pstate", s, HOST_INFO, NULL);
	free(cpus);
}

/*
 * One turbo knob: path holds off_val when turbo is off (no_turbo 1,
 * boost 0).  1 when the file exists.
 */
static int
check_turbo_knob(struct host_report *r, const char *root, const struct prof *p,
    const char *path, const char *name, const char *off_val, const char *on_val)
{
	const char *want = p->turbo == CFG_TURBO_OFF ? off_val : on_val;
	char v[VAL_MAX], *s;

	if ((s = host_i_rdv(v, sizeof(v), root, path)) == NULL)
		return 0;
	if (p->turbo == CFG_TURBO_KEEP)
		add(r, name, s, HOST_INFO, "turbo: keep");
	else if (strcmp(s, want) == 0)
		add(r, name, s, HOST_READY, NULL);
	else
		add(r, name, s, HOST_NOT_READY, "turbo %s wanted (%s)",
		    config_turbo_name(p->turbo), want);
	return 1;
}

static void
check_turbo(struct host_report *r, const char *root, const struct prof *p)
{
	int found = check_turbo_knob(
	    r, root, p, NO_TURBO, "turbo.intel_no_turbo", "1", "0");

	found |= check_turbo_knob(
	    r, root, p, BOOST, "turbo.cpufreq_boost", "0", "1");
	if (!found)
		add(r, "turbo", NULL, HOST_UNAVAILABLE,
		    "neither intel_pstate/no_turbo nor cpufreq/boost exists");
}

static void
check_smt(struct host_report *r, const char *root, const struct prof *p)
{
	char v[VAL_MAX], c[VAL_MAX], *s, *ctl;

	ctl = host_i_rdv(c, sizeof(c), root, SYSCPU "/smt/control");
	if ((s = host_i_rdv(v, sizeof(v), root, SYSCPU "/smt/active")) ==
	    NULL) {
		add(r, "smt", NULL, HOST_UNAVAILABLE, "no %s/smt/active",
		    SYSCPU);
		return;
	}
	snprintf(v + strlen(v), sizeof(v) - strlen(v), " (control %s)",
	    ctl ? ctl : "unknown");
	if (!p->smt_off)
		add(r, "smt", s, HOST_INFO, "smt: any");
	else if (s[0] == '0')
		add(r, "smt", s, HOST_READY, NULL);
	else
		add(r, "smt", s, HOST_NOT_READY,
		    "SMT siblings share a core: boot with nosmt or write off "
		    "to smt/control (smt: any accepts it)");
}

static void
check_cstates(struct host_report *r, const char *root)
{
	char v[VAL_MAX], path[256], name[VAL_MAX], dis[16], *s;
	struct buf b = BUF_INIT(VAL_MAX);
	long st[64];
	size_t n, i;

	if ((s = host_i_rdv(
	         v, sizeof(v), root, SYSCPU "/cpuidle/current_driver")))
		add(r, "cpuidle.driver", s, HOST_INFO, NULL);
	if ((s = host_i_rdv(
	         v, sizeof(v), root, SYSCPU "/cpuidle/current_governor_ro")) ||
	    (s = host_i_rdv(
	         v, sizeof(v), root, SYSCPU "/cpuidle/current_governor")))
		add(r, "cpuidle.governor", s, HOST_INFO, NULL);
	if ((s = host_i_rdv(v, sizeof(v), root,
	         "/sys/module/intel_idle/parameters/max_cstate")))
		add(r, "cstate.intel_idle_max", s, HOST_INFO, NULL);
	n = host_i_numbered(st, 64, root, SYSCPU "/cpu0/cpuidle", "state");
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu0/cpuidle/state%ld/name", st[i]);
		if ((s = host_i_rdv(name, sizeof(name), root, path)) == NULL)
			continue;
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu0/cpuidle/state%ld/disable", st[i]);
		host_i_rdv(dis, sizeof(dis), root, path);
		buf_printf(&b, "%s%s%s", b.len ? " " : "", s,
		    strcmp(host_i_trim(dis), "1") == 0 ? "(disabled)" : "");
	}
	if (n > 0)
		add(r, "cpu0.cstates", b.data, HOST_INFO, NULL);
	else
		add(r, "cstates", NULL, HOST_UNAVAILABLE,
		    "no %s/cpu0/cpuidle states", SYSCPU);
	buf_release(&b);
}

static void
check_thp_one(struct host_report *r, const char *root, const char *file,
    enum cfg_thp want, const char *key)
{
	char v[VAL_MAX], sel[64], path[128], name[64];

	snprintf(path, sizeof(path), THP "/%s", file);
	snprintf(name, sizeof(name), "thp.%s", file);
	if (host_i_rd(v, sizeof(v), root, path) < 0) {
		add(r, name, NULL, HOST_UNAVAILABLE, "no %s", path);
		return;
	}
	host_i_selected(sel, sizeof(sel), v);
	if (want == CFG_THP_KEEP)
		add(r, name, sel, HOST_INFO,
		    "%s: keep (a job's host.thp may "
		    "set it)",
		    key);
	else if (strcmp(sel, config_thp_name(want)) == 0)
		add(r, name, sel, HOST_READY, NULL);
	else
		add(r, name, sel, HOST_NOT_READY, "wanted %s (%s)",
		    config_thp_name(want), key);
}

static void
check_numa(struct host_report *r, const char *root)
{
	char v[VAL_MAX], path[128], name[64], *s;
	long nodes[1024];
	size_t n = host_i_numbered(
	           nodes, 1024, root, "/sys/devices/system/node", "node"),
	       i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
		    "/sys/devices/system/node/node%ld/cpulist", nodes[i]);
		snprintf(name, sizeof(name), "numa.node%ld.cpus", nodes[i]);
		s = host_i_rdv(v, sizeof(v), root, path);
		add(r, name, s, s ? HOST_INFO : HOST_UNAVAILABLE, NULL);
	}
	if (n == 0)
		add(r, "numa", NULL, HOST_UNAVAILABLE,
		    "no /sys/devices/system/node/node*");
}

/* The pid of a running irqbalance under root's /proc, or 0. */
long
host_i_irqbalance_pid(const char *root)
{
	long *pids = xcalloc(65536, sizeof(long));
	size_t n = host_i_numbered(pids, 65536, root, "/proc", ""), i;
	char path[64], v[64];
	long found = 0;

	for (i = 0; i < n && !found; i++) {
		snprintf(path, sizeof(path), "/proc/%ld/comm", pids[i]);
		if (host_i_rdv(v, sizeof(v), root, path) != NULL &&
		    strcmp(v, "irqbalance") == 0)
			found = pids[i];
	}
	free(pids);
	return found;
}

/* IRQs under /proc/irq with an smp_affinity_list; how many differ. */
static size_t
irqs_off(const char *root, const char *want, size_t *total)
{
	long *irqs = xcalloc(IRQS_MAX, sizeof(long));
	size_t n = host_i_numbered(irqs, IRQS_MAX, root, "/proc/irq", ""), i,
	       off = 0;
	char path[64], v[VAL_MAX], *s;

	*total = 0;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/irq/%ld/smp_affinity_list",
		    irqs[i]);
		if ((s = host_i_rdv(v, sizeof(v), root, path)) == NULL)
			continue;
		(*total)++;
		if (want != NULL && strcmp(s, want) != 0)
			off++;
	}
	free(irqs);
	return off;
}

static void
check_irqs(struct host_report *r, const char *root, const struct prof *p)
{
	long pid = host_i_irqbalance_pid(root);
	size_t total, off;
	char v[128];

	snprintf(v, sizeof(v), pid ? "running (pid %ld)" : "not running", pid);
	if (!p->stop_irqbalance)
		add(r, "irqbalance", v, HOST_INFO, "stop_irqbalance: false");
	else if (pid == 0)
		add(r, "irqbalance", v, HOST_READY, NULL);
	else
		add(r, "irqbalance", v, HOST_NOT_READY,
		    "it moves IRQs onto benchmark CPUs (host tune stops it)");
	off = irqs_off(root, p->irq_cpus, &total);
	snprintf(v, sizeof(v), "%zu IRQs", total);
	if (total == 0)
		add(r, "irq.affinity", NULL, HOST_UNAVAILABLE,
		    "no /proc/irq/*/smp_affinity_list");
	else if (p->irq_cpus == NULL)
		add(r, "irq.affinity", v, HOST_INFO, "irq_cpus not set");
	else if (off == 0)
		add(r, "irq.affinity", v, HOST_READY, "all on %s", p->irq_cpus);
	else
		add(r, "irq.affinity", v, HOST_NOT_READY,
		    "%zu not on irq_cpus %s (host tune moves them)", off,
		    p->irq_cpus);
}

static void
check_memory(struct host_report *r, const char *root)
{
	char v[VAL_MAX], line[512], *s;
	long swaps = 0, kb, total = 0;
	char *p = xasprintf("%s/proc/swaps", root);
	FILE *f = fopen(p, "r");

	free(p);
	if (f == NULL)
		add(r, "swap", NULL, HOST_UNAVAILABLE, "no /proc/swaps");
	else {
		while (fgets(line, sizeof(line), f) != NULL)
			if (line[0] == '/' &&
			    sscanf(line, "%*s %*s %ld", &kb) == 1) {
				swaps++;
				total += kb;
			}
		fclose(f);
		if (swaps == 0)
			snprintf(v, sizeof(v), "off");
		else
			snprintf(
			    v, sizeof(v), "%ld devices, %ld kB", swaps, total);
		add(r, "swap", v, HOST_INFO, NULL);
	}
	s = host_i_rdv(v, sizeof(v), root, "/proc/sys/vm/swappiness");
	add(r, "vm.swappiness", s, s ? HOST_INFO : HOST_UNAVAILABLE, NULL);
}

/* The value of word KEY= on the command line, or "not set". */
static void
cmdline_word(struct host_report *r, const char *cmd, const char *key)
{
	char name[64], v[VAL_MAX];
	size_t klen = strlen(key);
	const char *s = cmd, *e;

	snprintf(name, sizeof(name), "cmdline.%s", key);
	for (;;) {
		while (*s == ' ')
			s++;
		if (*s == '\0')
			break;
		e = strchr(s, ' ');
		if (e == NULL)
			e = s + strlen(s);
		if (strncmp(s, key, klen) == 0 &&
		    (s[klen] == '=' || s + klen == e)) {
			snprintf(v, sizeof(v), "%.*s", (int)(e - s), s);
			add(r, name, v, HOST_INFO, NULL);
			return;
		}
		s = e;
	}
	add(r, name, "not set", HOST_INFO, NULL);
}

static void
check_kernel(struct host_report *r, const char *root)
{
	static const char *const words[] = { "isolcpus", "nohz_full",
		"mitigations", "nosmt", "intel_pstate", NULL };
	char v[VAL_MAX], *s;
	json_t *inv;
	const char *cg;
	size_t i;

	if ((s = host_i_rdv(v, sizeof(v), root, "/proc/cmdline")) != NULL) {
		add(r, "cmdline", s, HOST_INFO, NULL);
		for (i = 0; words[i] != NULL; i++)
			cmdline_word(r, s, words[i]);
	} else
		add(r, "cmdline", NULL, HOST_UNAVAILABLE, "no /proc/cmdline");
	s = host_i_rdv(
	    v, sizeof(v), root, "/proc/sys/kernel/randomize_va_space");
	add(r, "aslr", s, s ? HOST_INFO : HOST_UNAVAILABLE,
	    "randomize_va_space (2 = full)");
	s = host_i_rdv(
	    v, sizeof(v), root, "/proc/sys/kernel/perf_event_paranoid");
	add(r, "perf_event_paranoid", s, s ? HOST_INFO : HOST_UNAVAILABLE,
	    "profile: true runs perf as the runner's user: <= 1 or root");
	inv = host_state(root, NULL);
	add(r, "kernel", json_string_value(json_object_get(inv, "kernel")),
	    HOST_INFO, NULL);
	add(r, "microcode",
	    json_string_value(json_object_get(inv, "microcode")), HOST_INFO,
	    NULL);
	json_decref(inv);
	inv = inventory_collect(root);
	cg = json_string_value(json_object_get(inv, "cgroup"));
	if (cg == NULL || strcmp(cg, "none") == 0)
		add(r, "memcg.version", cg ? cg : NULL, HOST_NOT_READY,
		    "no memory cgroup controller: nested-memcg jobs cannot "
		    "run");
	else
		add(r, "memcg.version", cg, HOST_READY, NULL);
	json_decref(inv);
}

/* Controllers: cgroup.controllers of each cgroup2 mount, v1 mounts. */
static void
check_controllers(struct host_report *r, const char *root)
{
	char *p = xasprintf("%s/proc/mounts", root), line[1024], dev[256],
	     mnt[512], type[64], opts[512], v[VAL_MAX], path[600], *s;
	struct buf b = BUF_INIT(VAL_MAX);
	FILE *f = fopen(p, "r");

	free(p);
	if (f == NULL) {
		add(r, "memcg.controllers", NULL, HOST_UNAVAILABLE,
		    "no /proc/mounts");
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%255s %511s %63s %511s", dev, mnt, type,
		        opts) != 4)
			continue;
		if (strcmp(type, "cgroup2") == 0) {
			snprintf(
			    path, sizeof(path), "%s/cgroup.controllers", mnt);
			s = host_i_rdv(v, sizeof(v), root, path);
			buf_printf(&b, "%sv2 %s: %s", b.len ? "; " : "", mnt,
			    s && *s ? s : "(none)");
		} else if (strcmp(type, "cgroup") == 0 &&
		    strstr(opts, "memory") != NULL)
			buf_printf(
			    &b, "%sv1 memory %s", b.len ? "; " : "", mnt);
	}
	fclose(f);
	add(r, "memcg.controllers", b.len ? b.data : "none", HOST_INFO, NULL);
	buf_release(&b);
}

/*
 * cpus.speed: the same loop timed on each CPU this process may use
 * (runners/cpuspeed.h); not ready when the slowest is more than
 * CPUSPEED_SPREAD times the fastest.  Only on the real host: under a
 * fake root there is nothing of its own to time.
 */
static void
check_cpu_speed(struct host_report *r, const char *root)
{
	struct err e = { 0 };
	char name[48], v[160];
	int cpus[CPUS_MAX];
	double *ms, spread;
	size_t n, i, slow, fast;

	if (root[0] != '\0') {
		add(r, "cpus.speed", NULL, HOST_UNAVAILABLE,
		    "not measured under --root: it times the real CPUs");
		return;
	}
	if (cpuspeed_cpus(cpus, CPUS_MAX, &n, &e) != 0) {
		add(r, "cpus.speed", NULL, HOST_UNAVAILABLE, "%s", err_msg(&e));
		return;
	}
	if (n < 2) {
		add(r, "cpus.speed", "one CPU", HOST_INFO, NULL);
		return;
	}
	ms = xcalloc(n, sizeof(*ms));
	if (cpuspeed_measure(ms, cpus, n, &e) != 0) {
		add(r, "cpus.speed", NULL, HOST_UNAVAILABLE, "%s", err_msg(&e));
		goto out;
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "cpu%d.speed_ms", cpus[i]);
		snprintf(v, sizeof(v), "%.2f", ms[i]);
		add(r, name, v, HOST_INFO, NULL);
	}
	spread = cpuspeed_spread(ms, n, &slow, &fast);
	if (spread == 0) {
		add(r, "cpus.speed", NULL, HOST_UNAVAILABLE,
		    "no CPU gave a time");
		goto out;
	}
	snprintf(v, sizeof(v),
	    "x%.2f (slowest cpu%d %.2f ms, fastest cpu%d %.2f ms)", spread,
	    cpus[slow], ms[slow], cpus[fast], ms[fast]);
	if (spread > CPUSPEED_SPREAD)
		add(r, "cpus.speed", v, HOST_NOT_READY,
		    "the same loop takes x%.2f as long on cpu%d as on cpu%d "
		    "(more than x%.2f): a busy neighbour on its physical core "
		    "(a VM), a busy SMT sibling, thermal or power capping; pin "
		    "benchmarks to CPUs of one speed (host.cpus)",
		    spread, cpus[slow], cpus[fast], CPUSPEED_SPREAD);
	else
		add(r, "cpus.speed", v, HOST_READY, NULL);
out:
	free(ms);
}

void
host_check(
    struct host_report *out, const char *root, const struct runner_config *cfg)
{
	char v[VAL_MAX], *s;
	struct prof p;

	memset(out, 0, sizeof(*out));
	host_i_prof_of(&p, cfg);
	s = host_i_rdv(v, sizeof(v), root, SYSCPU "/online");
	add(out, "cpus.online", s, s ? HOST_INFO : HOST_UNAVAILABLE, NULL);
	check_cpu_speed(out, root);
	check_cpufreq(out, root, &p);
	check_turbo(out, root, &p);
	check_smt(out, root, &p);
	check_cstates(out, root);
	check_thp_one(out, root, "enabled", p.thp, "thp");
	check_thp_one(out, root, "defrag", p.defrag, "thp_defrag");
	check_numa(out, root);
	check_irqs(out, root, &p);
	check_memory(out, root);
	check_kernel(out, root);
	check_controllers(out, root);
}

void
host_report_release(struct host_report *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].state);
		free(r->v[i].note);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

json_t *
host_report_json(const struct host_report *r)
{
	json_t *o = json_object(), *items = json_array();
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct host_item *it = &r->v[i];

		json_array_append_new(items,
		    json_pack("{s:s, s:s?, s:s, s:s?}", "name", it->name,
		        "state", it->state, "status",
		        host_status_name(it->status), "note", it->note));
	}
	json_object_set_new(o, "ready", json_boolean(r->not_ready == 0));
	json_object_set_new(
	    o, "not_ready", json_integer((json_int_t)r->not_ready));
	json_object_set_new(o, "items", items);
	return o;
}

void
host_report_print(FILE *f, const struct host_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct host_item *it = &r->v[i];

		fprintf(f, "%-24s %-12s %s%s%s\n", it->name,
		    host_status_name(it->status),
		    it->state ? it->state : "unavailable",
		    it->note ? "  -- " : "", it->note ? it->note : "");
	}
	if (r->not_ready == 0)
		fprintf(f, "benchmark-ready\n");
	else
		fprintf(f, "%zu item%s not benchmark-ready\n", r->not_ready,
		    r->not_ready == 1 ? "" : "s");
}
