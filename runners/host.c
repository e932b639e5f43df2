/*
 * Benchmark hygiene on a bench host: check, tune/reset, per-job knobs and
 * the recorded host state (see host.h and docs/HOST.md).
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_ALLOC */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "config/config.h"
#include "runners/cpuspeed.h"
#include "runners/exec.h"
#include "runners/host.h"
#include "runners/inventory.h"

extern char **environ;

#define SYSCPU "/sys/devices/system/cpu"
#define THP "/sys/kernel/mm/transparent_hugepage"
#define NO_TURBO SYSCPU "/intel_pstate/no_turbo"
#define BOOST SYSCPU "/cpufreq/boost"
#define VAL_MAX 8192  /* one sysfs/procfs value we read */
#define CPUS_MAX 4096 /* CPU directories looked at */
#define IRQS_MAX 8192

/* ---- reading and writing files under root ---- */

/* Whole file (at most len-1 bytes) into out; bytes read, or -1. */
static ssize_t
rd(char *out, size_t len, const char *root, const char *path)
{
	char *p = xasprintf("%s%s", root, path);
	ssize_t n = 0, got = 0;
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	free(p);
	out[0] = '\0';
	if (fd < 0)
		return -1;
	while ((size_t)got < len - 1 &&
	    (n = read(fd, out + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	if (n < 0 && got == 0)
		return -1;
	out[got] = '\0';
	return got;
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
		e[-1] = '\0';
	return s;
}

/* rd() and trim(): the value, or NULL when the file cannot be read. */
static char *
rdv(char *out, size_t len, const char *root, const char *path)
{
	if (rd(out, len, root, path) < 0)
		return NULL;
	return trim(out);
}

static int
exists(const char *root, const char *path)
{
	char *p = xasprintf("%s%s", root, path);
	struct stat st;
	int r = stat(p, &st) == 0;

	free(p);
	return r;
}

/*
 * The selected word of a sysfs choice file ("always [madvise] never" ->
 * "madvise"), or the trimmed text when it has no brackets.
 */
static void
selected(char *out, size_t len, const char *text)
{
	const char *a = strchr(text, '['), *b = a ? strchr(a, ']') : NULL;
	char tmp[VAL_MAX], *t;

	if (a != NULL && b != NULL && (size_t)(b - a - 1) < len) {
		memcpy(out, a + 1, (size_t)(b - a - 1));
		out[b - a - 1] = '\0';
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s", text);
	t = trim(tmp);
	snprintf(out, len, "%s", t);
}

/*
 * What a write of val leaves in a sysfs file that held old: a choice file
 * ("always [madvise] never") moves its brackets, any other reads back as
 * val and a newline.  Used only under a fake root (tests), so a round
 * trip there behaves as it does in /sys.
 */
static void
sysfs_mimic(struct buf *b, const char *old, const char *val)
{
	const char *s = old, *e;
	size_t vl = strlen(val);
	char w[VAL_MAX];

	if (strchr(old, '[') == NULL) {
		buf_printf(b, "%s\n", val);
		return;
	}
	for (;;) {
		while (*s == ' ' || *s == '\n')
			s++;
		if (*s == '\0')
			break;
		for (e = s; *e != '\0' && *e != ' ' && *e != '\n'; e++)
			;
		snprintf(w, sizeof(w), "%.*s", (int)(e - s), s);
		if (w[0] == '[')
			memmove(w, w + 1, strlen(w));
		if (w[0] != '\0' && w[strlen(w) - 1] == ']')
			w[strlen(w) - 1] = '\0';
		buf_printf(b, "%s%s%s%s", b->len ? " " : "",
		    strlen(w) == vl && strcmp(w, val) == 0 ? "[" : "", w,
		    strlen(w) == vl && strcmp(w, val) == 0 ? "]" : "");
		s = e;
	}
	buf_printf(b, "\n");
}

/* Writes val (as one write(2), as sysfs wants it). 0 or -1 (e set). */
static int
wr(const char *root, const char *path, const char *val, struct err *e)
{
	char *p = xasprintf("%s%s", root, path), old[VAL_MAX];
	struct buf fake = BUF_INIT(VAL_MAX);
	int fd, rc = 0;
	size_t len;

	if (root[0] != '\0') {
		rd(old, sizeof(old), root, path);
		sysfs_mimic(&fake, old, val);
		val = fake.data;
	}
	/* O_TRUNC matters only for a fake root: sysfs ignores it. */
	fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
	len = strlen(val);

	if (fd < 0 || write(fd, val, len) != (ssize_t)len)
		rc = err_set(
		    e, "%s: cannot write '%s': %s", p, val, strerror(errno));
	if (fd >= 0 && close(fd) != 0 && rc == 0)
		rc = err_set(
		    e, "%s: cannot write '%s': %s", p, val, strerror(errno));
	buf_release(&fake);
	free(p);
	return rc;
}

static int
need_root(const char *root, const char *what, struct err *e)
{
	if (root[0] == '\0' && geteuid() != 0)
		return err_set(e,
		    "%s needs root (running as uid %ld); nothing was changed",
		    what, (long)geteuid());
	return 0;
}

/* Numbers n of the entries PREFIXn in dir, sorted; count returned. */
static size_t
numbered(long *out, size_t max, const char *root, const char *dir,
    const char *prefix)
{
	char *p = xasprintf("%s%s", root, dir), *end;
	size_t n = 0, plen = strlen(prefix), i, j;
	struct dirent *de;
	DIR *d = opendir(p);
	long v, t;

	free(p);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		if (strncmp(de->d_name, prefix, plen) != 0 ||
		    !isdigit((unsigned char)de->d_name[plen]))
			continue;
		v = strtol(de->d_name + plen, &end, 10);
		if (*end == '\0')
			out[n++] = v;
	}
	closedir(d);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && out[j - 1] > out[j]; j--) {
			t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

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

/* The profile: cfg's host: section, or its defaults. */
struct prof {
	const char *governor; /* NULL: keep */
	enum cfg_turbo turbo;
	enum cfg_thp thp, defrag;
	int smt_off, stop_irqbalance;
	const char *irq_cpus;
};

static void
prof_of(struct prof *p, const struct runner_config *cfg)
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
	size_t n = numbered(cpus, CPUS_MAX, root, SYSCPU, "cpu"), i, seen = 0;
	char path[256], name[64], v[VAL_MAX], lo[64], hi[64], hw[64], *s;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), SYSCPU "/cpu%ld/cpufreq", cpus[i]);
		if (!exists(root, path))
			continue;
		seen++;
		snprintf(name, sizeof(name), "cpu%ld.governor", cpus[i]);
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/scaling_governor", cpus[i]);
		if ((s = rdv(v, sizeof(v), root, path)) == NULL)
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
		    (s = rdv(v, sizeof(v), root, path)) ? s : "unknown");
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/scaling_max_freq", cpus[i]);
		snprintf(hi, sizeof(hi), "%s",
		    (s = rdv(v, sizeof(v), root, path)) ? s : "unknown");
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/cpuinfo_max_freq", cpus[i]);
		snprintf(hw, sizeof(hw), "%s",
		    (s = rdv(v, sizeof(v), root, path)) ? s : "unknown");
		snprintf(name, sizeof(name), "cpu%ld.freq_khz", cpus[i]);
		snprintf(v, sizeof(v), "min %s max %s hw_max %s", lo, hi, hw);
		add(r, name, v, HOST_INFO, NULL);
	}
	if (seen == 0)
		add(r, "cpufreq", NULL, HOST_UNAVAILABLE,
		    "no cpufreq on any of %zu CPUs (a VM, or no driver)", n);
	else if ((s = rdv(v, sizeof(v), root,
	              SYSCPU "/cpu0/cpufreq/scaling_driver")) != NULL)
		add(r, "cpufreq.driver", s, HOST_INFO, NULL);
	if ((s = rdv(v, sizeof(v), root, SYSCPU "/intel_pstate/status")))
		add(r, "intel_pstate", s, HOST_INFO, NULL);
	if ((s = rdv(v, sizeof(v), root, SYSCPU "/amd_pstate/status")))
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

	if ((s = rdv(v, sizeof(v), root, path)) == NULL)
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

	ctl = rdv(c, sizeof(c), root, SYSCPU "/smt/control");
	if ((s = rdv(v, sizeof(v), root, SYSCPU "/smt/active")) == NULL) {
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

	if ((s = rdv(v, sizeof(v), root, SYSCPU "/cpuidle/current_driver")))
		add(r, "cpuidle.driver", s, HOST_INFO, NULL);
	if ((s = rdv(
	         v, sizeof(v), root, SYSCPU "/cpuidle/current_governor_ro")) ||
	    (s = rdv(v, sizeof(v), root, SYSCPU "/cpuidle/current_governor")))
		add(r, "cpuidle.governor", s, HOST_INFO, NULL);
	if ((s = rdv(v, sizeof(v), root,
	         "/sys/module/intel_idle/parameters/max_cstate")))
		add(r, "cstate.intel_idle_max", s, HOST_INFO, NULL);
	n = numbered(st, 64, root, SYSCPU "/cpu0/cpuidle", "state");
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu0/cpuidle/state%ld/name", st[i]);
		if ((s = rdv(name, sizeof(name), root, path)) == NULL)
			continue;
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu0/cpuidle/state%ld/disable", st[i]);
		rdv(dis, sizeof(dis), root, path);
		buf_printf(&b, "%s%s%s", b.len ? " " : "", s,
		    strcmp(trim(dis), "1") == 0 ? "(disabled)" : "");
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
	if (rd(v, sizeof(v), root, path) < 0) {
		add(r, name, NULL, HOST_UNAVAILABLE, "no %s", path);
		return;
	}
	selected(sel, sizeof(sel), v);
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
	size_t n = numbered(
	           nodes, 1024, root, "/sys/devices/system/node", "node"),
	       i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
		    "/sys/devices/system/node/node%ld/cpulist", nodes[i]);
		snprintf(name, sizeof(name), "numa.node%ld.cpus", nodes[i]);
		s = rdv(v, sizeof(v), root, path);
		add(r, name, s, s ? HOST_INFO : HOST_UNAVAILABLE, NULL);
	}
	if (n == 0)
		add(r, "numa", NULL, HOST_UNAVAILABLE,
		    "no /sys/devices/system/node/node*");
}

/* The pid of a running irqbalance under root's /proc, or 0. */
static long
irqbalance_pid(const char *root)
{
	long *pids = xcalloc(65536, sizeof(long));
	size_t n = numbered(pids, 65536, root, "/proc", ""), i;
	char path[64], v[64];
	long found = 0;

	for (i = 0; i < n && !found; i++) {
		snprintf(path, sizeof(path), "/proc/%ld/comm", pids[i]);
		if (rdv(v, sizeof(v), root, path) != NULL &&
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
	size_t n = numbered(irqs, IRQS_MAX, root, "/proc/irq", ""), i, off = 0;
	char path[64], v[VAL_MAX], *s;

	*total = 0;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/irq/%ld/smp_affinity_list",
		    irqs[i]);
		if ((s = rdv(v, sizeof(v), root, path)) == NULL)
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
	long pid = irqbalance_pid(root);
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
	s = rdv(v, sizeof(v), root, "/proc/sys/vm/swappiness");
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

	if ((s = rdv(v, sizeof(v), root, "/proc/cmdline")) != NULL) {
		add(r, "cmdline", s, HOST_INFO, NULL);
		for (i = 0; words[i] != NULL; i++)
			cmdline_word(r, s, words[i]);
	} else
		add(r, "cmdline", NULL, HOST_UNAVAILABLE, "no /proc/cmdline");
	s = rdv(v, sizeof(v), root, "/proc/sys/kernel/randomize_va_space");
	add(r, "aslr", s, s ? HOST_INFO : HOST_UNAVAILABLE,
	    "randomize_va_space (2 = full)");
	s = rdv(v, sizeof(v), root, "/proc/sys/kernel/perf_event_paranoid");
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
			s = rdv(v, sizeof(v), root, path);
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
	prof_of(&p, cfg);
	s = rdv(v, sizeof(v), root, SYSCPU "/online");
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

/* ---- tune / reset ---- */

struct change {
	char *path, *saved, *want;
};

struct plan {
	struct change *v;
	size_t n;
	struct buf *log;
};

/* Plans writing want to path when it exists and holds something else. */
static void
plan_write(struct plan *p, const char *root, const char *path, const char *want,
    int choice)
{
	char v[VAL_MAX], cur[VAL_MAX];

	if (rd(v, sizeof(v), root, path) < 0)
		return;
	if (choice)
		selected(cur, sizeof(cur), v);
	else
		snprintf(cur, sizeof(cur), "%s", trim(v));
	if (strcmp(cur, want) == 0) {
		buf_printf(p->log, "%s: already %s\n", path, want);
		return;
	}
	rd(v, sizeof(v), root, path);
	p->v = xreallocarray(p->v, p->n + 1, sizeof(*p->v));
	p->v[p->n].path = xstrdup(path);
	p->v[p->n].saved = xstrdup(v);
	p->v[p->n].want = xstrdup(want);
	p->n++;
}

static void
plan_release(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].path);
		free(p->v[i].saved);
		free(p->v[i].want);
	}
	free(p->v);
}

/* An available governor list holds want ("performance powersave"). */
static int
has_word(const char *list, const char *want)
{
	size_t len = strlen(want);
	const char *s = list;

	while ((s = strstr(s, want)) != NULL) {
		if ((s == list || s[-1] == ' ') &&
		    (s[len] == '\0' || isspace((unsigned char)s[len])))
			return 1;
		s += len;
	}
	return 0;
}

static void
plan_profile(struct plan *p, const char *root, const struct prof *pr)
{
	long *cpus = xcalloc(CPUS_MAX, sizeof(long));
	size_t n = numbered(cpus, CPUS_MAX, root, SYSCPU, "cpu"), i;
	char path[256], v[VAL_MAX];
	long *irqs;

	for (i = 0; pr->governor != NULL && i < n; i++) {
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/scaling_available_governors",
		    cpus[i]);
		if (rd(v, sizeof(v), root, path) >= 0 &&
		    !has_word(v, pr->governor)) {
			buf_printf(p->log,
			    "cpu%ld: governor %s not available "
			    "(%s); left alone\n",
			    cpus[i], pr->governor, trim(v));
			continue;
		}
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/scaling_governor", cpus[i]);
		plan_write(p, root, path, pr->governor, 0);
	}
	free(cpus);
	if (pr->turbo != CFG_TURBO_KEEP) {
		plan_write(p, root, NO_TURBO,
		    pr->turbo == CFG_TURBO_OFF ? "1" : "0", 0);
		plan_write(
		    p, root, BOOST, pr->turbo == CFG_TURBO_OFF ? "0" : "1", 0);
	}
	if (pr->thp != CFG_THP_KEEP)
		plan_write(
		    p, root, THP "/enabled", config_thp_name(pr->thp), 1);
	if (pr->defrag != CFG_THP_KEEP)
		plan_write(
		    p, root, THP "/defrag", config_thp_name(pr->defrag), 1);
	if (pr->irq_cpus == NULL)
		return;
	irqs = xcalloc(IRQS_MAX, sizeof(long));
	n = numbered(irqs, IRQS_MAX, root, "/proc/irq", "");
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/irq/%ld/smp_affinity_list",
		    irqs[i]);
		plan_write(p, root, path, pr->irq_cpus, 0);
	}
	free(irqs);
}

/* The saved state: {"files": [{path, saved}], "irqbalance": {...}}. */
static int
state_write(const char *file, const struct plan *p, const unsigned char *ok,
    json_t *irqb, struct err *e)
{
	json_t *o = json_object(), *files = json_array();
	char *tmp = xasprintf("%s.tmp", file), *text;
	size_t i, len;
	int fd, rc = 0;

	for (i = 0; i < p->n; i++)
		if (ok == NULL || ok[i])
			json_array_append_new(files,
			    json_pack("{s:s, s:s}", "path", p->v[i].path,
			        "saved", p->v[i].saved));
	json_object_set_new(o, "files", files);
	if (irqb != NULL)
		json_object_set(o, "irqbalance", irqb);
	text = pwjson_dump(o);
	json_decref(o);
	len = strlen(text);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) != 0)
		rc = err_set(e, "%s: %s", tmp, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (rc == 0 && rename(tmp, file) != 0)
		rc = err_set(e, "%s: rename: %s", file, strerror(errno));
	free(text);
	free(tmp);
	return rc;
}

/* Runs argv to its end (systemctl); 0 when it exited 0. */
static int
run_quiet(char *const *argv, struct err *e)
{
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	int rc;

	s.timeout_ms = 30000;
	if (exec_run(&r, &s, e) != 0)
		return -1;
	rc = r.exited && r.code == 0
	    ? 0
	    : err_set(e, "%s %s %s: %s", argv[0], argv[1], argv[2],
	          r.err.len ? trim(r.err.data) : "failed");
	exec_result_release(&r);
	return rc;
}

/*
 * Stops irqbalance (systemctl when systemd runs the host, else SIGTERM),
 * returning what host_reset needs to start it again, or NULL when it was
 * not running or could not be stopped (log says which).
 */
static json_t *
irqbalance_stop(const char *root, struct buf *log)
{
	static char *const stop[] = { "systemctl", "stop", "irqbalance.service",
		NULL };
	long pid = irqbalance_pid(root);
	char path[64], exe[4096], args[VAL_MAX];
	struct err e = { 0 };
	json_t *argv, *o;
	ssize_t n, i, start;
	int k;

	if (pid == 0)
		return NULL;
	if (root[0] != '\0') {
		/* A fake /proc: its pids are not processes to signal. */
		buf_printf(log,
		    "irqbalance: pid %ld under a fake root; "
		    "left alone\n",
		    pid);
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) < 0) {
		buf_printf(log, "irqbalance: %s: %s; left running\n", path,
		    strerror(errno));
		return NULL;
	}
	exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	n = rd(args, sizeof(args), "", path);
	argv = json_array();
	for (i = start = 0; i < n; i++)
		if (args[i] == '\0') {
			json_array_append_new(argv, json_string(args + start));
			start = i + 1;
		}
	o = json_pack("{s:s, s:o, s:b}", "exe", exe, "argv", argv, "systemd",
	    exists("", "/run/systemd/system"));
	if (json_is_true(json_object_get(o, "systemd"))) {
		if (run_quiet(stop, &e) != 0) {
			buf_printf(
			    log, "irqbalance: %s; left running\n", err_msg(&e));
			json_decref(o);
			return NULL;
		}
	} else if (kill((pid_t)pid, SIGTERM) != 0) {
		buf_printf(log, "irqbalance: kill %ld: %s; left running\n", pid,
		    strerror(errno));
		json_decref(o);
		return NULL;
	}
	for (k = 0; k < 100 && irqbalance_pid("") == pid; k++)
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	buf_printf(log, "irqbalance: stopped (pid %ld)\n", pid);
	return o;
}

static int
irqbalance_start(json_t *o, struct buf *log, struct err *e)
{
	static char *const start[] = { "systemctl", "start",
		"irqbalance.service", NULL };
	json_t *argv = json_object_get(o, "argv"), *v;
	const char *exe = json_string_value(json_object_get(o, "exe"));
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char **av;
	size_t i, n = json_array_size(argv);
	pid_t pid;
	int rc;

	if (json_is_true(json_object_get(o, "systemd"))) {
		if (run_quiet(start, e) != 0)
			return -1;
		buf_printf(log, "irqbalance: started (systemd)\n");
		return 0;
	}
	if (exe == NULL || n == 0)
		return err_set(e, "irqbalance: the saved state has no command");
	av = xcalloc(n + 1, sizeof(char *));
	json_array_foreach(argv, i, v) av[i] = (char *)json_string_value(v);
	/* Its own session, like the daemon it was: not in our group. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID);
	rc = posix_spawn(&pid, exe, &fa, &at, av, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(av);
	if (rc != 0)
		return err_set(
		    e, "irqbalance: cannot start %s: %s", exe, strerror(rc));
	buf_printf(log, "irqbalance: started %s (pid %ld)\n", exe, (long)pid);
	return 0;
}

int
host_tune(const char *root, const struct runner_config *cfg,
    const char *state_file, struct buf *log, struct err *e)
{
	struct plan p = { .log = log };
	struct prof pr;
	unsigned char *ok;
	struct err we = { 0 };
	json_t *irqb = NULL;
	char prev[VAL_MAX];
	size_t i, changed = 0, failed = 0;
	int rc;

	if (need_root(root, "host tune", e) != 0)
		return -1;
	if (access(state_file, F_OK) == 0)
		return err_set(e,
		    "%s exists: the host is tuned already (host reset first)",
		    state_file);
	prof_of(&pr, cfg);
	plan_profile(&p, root, &pr);
	/* Saved before anything changes: a crash mid-way can be reset. */
	if (state_write(state_file, &p, NULL, NULL, e) != 0) {
		plan_release(&p);
		return -1;
	}
	ok = xcalloc(p.n + 1, 1);
	for (i = 0; i < p.n; i++) {
		err_clear(&we);
		if (wr(root, p.v[i].path, p.v[i].want, &we) == 0) {
			ok[i] = 1;
			changed++;
			selected(prev, sizeof(prev), p.v[i].saved);
			buf_printf(log, "%s: %s -> %s\n", p.v[i].path, prev,
			    p.v[i].want);
		} else {
			failed++;
			buf_printf(log, "%s; left as it was\n", err_msg(&we));
		}
	}
	if (pr.stop_irqbalance)
		irqb = irqbalance_stop(root, log);
	rc = state_write(state_file, &p, ok, irqb, e);
	buf_printf(log, "tuned: %zu changed, %zu refused%s\n", changed, failed,
	    irqb ? ", irqbalance stopped" : "");
	json_decref(irqb);
	free(ok);
	plan_release(&p);
	return rc;
}

int
host_reset(
    const char *root, const char *state_file, struct buf *log, struct err *e)
{
	struct err le = { 0 };
	json_t *st, *files, *f, *irqb;
	char cur[VAL_MAX], want[VAL_MAX];
	const char *path, *saved;
	size_t i, bad = 0, back = 0;

	if (need_root(root, "host reset", e) != 0)
		return -1;
	if ((st = pwjson_load_file(state_file, 16 << 20, &le)) == NULL)
		return err_set(
		    e, "%s: %s (nothing to reset?)", state_file, err_msg(&le));
	files = json_object_get(st, "files");
	json_array_foreach(files, i, f)
	{
		path = json_string_value(json_object_get(f, "path"));
		saved = json_string_value(json_object_get(f, "saved"));
		if (path == NULL || saved == NULL) {
			bad++;
			buf_printf(log, "%s: files[%zu]: no path or saved\n",
			    state_file, i);
			continue;
		}
		if (rd(cur, sizeof(cur), root, path) >= 0 &&
		    strcmp(cur, saved) == 0)
			continue; /* never changed (or a crash before) */
		/* A choice file takes the selected word back. */
		selected(want, sizeof(want), saved);
		err_clear(&le);
		if (wr(root, path, want, &le) != 0) {
			bad++;
			buf_printf(log, "%s\n", err_msg(&le));
			continue;
		}
		if (rd(cur, sizeof(cur), root, path) < 0 ||
		    strcmp(cur, saved) != 0) {
			bad++;
			buf_printf(log, "%s: reads back \"%s\", saved \"%s\"\n",
			    path, trim(cur), want);
			continue;
		}
		back++;
		buf_printf(log, "%s: back to %s\n", path, want);
	}
	if ((irqb = json_object_get(st, "irqbalance")) != NULL) {
		err_clear(&le);
		if (irqbalance_start(irqb, log, &le) != 0) {
			bad++;
			buf_printf(log, "%s\n", err_msg(&le));
		}
	}
	json_decref(st);
	buf_printf(log, "reset: %zu restored, %zu failed\n", back, bad);
	if (bad > 0)
		return err_set(e,
		    "%zu item%s not restored (see above); %s kept", bad,
		    bad == 1 ? "" : "s", state_file);
	if (unlink(state_file) != 0)
		return err_set(e, "%s: %s", state_file, strerror(errno));
	return 0;
}

/* ---- per job ---- */

int
host_cpus_resolve(char **out, const char *root, const char *spec, struct err *e)
{
	unsigned char want[CFG_CPUS_MAX / 8], have[CFG_CPUS_MAX / 8];
	char v[VAL_MAX], path[96], *s;
	const char *list = spec;
	size_t i;

	*out = NULL;
	if (strncmp(spec, "node:", 5) == 0) {
		snprintf(path, sizeof(path),
		    "/sys/devices/system/node/node%s/cpulist", spec + 5);
		if ((s = rdv(v, sizeof(v), root, path)) == NULL)
			return err_set(e,
			    "host.cpus %s: no NUMA node %s on "
			    "this host (%s)",
			    spec, spec + 5, path);
		if (*s == '\0')
			return err_set(e, "host.cpus %s: node %s has no CPUs",
			    spec, spec + 5);
		list = s;
	}
	if (config_parse_cpulist(want, CFG_CPUS_MAX, list) != 0)
		return err_set(e, "host.cpus: '%s' is not a CPU list", list);
	if ((s = rdv(v + 0, sizeof(v), root, SYSCPU "/online")) != NULL &&
	    config_parse_cpulist(have, CFG_CPUS_MAX, s) == 0)
		for (i = 0; i < CFG_CPUS_MAX; i++)
			if ((want[i / 8] >> (i % 8) & 1) &&
			    !(have[i / 8] >> (i % 8) & 1))
				return err_set(e,
				    "host.cpus %s: CPU %zu is "
				    "not online here (online: %s)",
				    spec, i, s);
	*out = xstrdup(list);
	return 0;
}

int
host_pin(struct host_pin *saved, const char *cpulist, struct err *e)
{
	unsigned char want[CFG_CPUS_MAX / 8];
	size_t sz = CPU_ALLOC_SIZE(CFG_CPUS_MAX), i;
	cpu_set_t *set;

	memset(saved, 0, sizeof(*saved));
	if (config_parse_cpulist(want, CFG_CPUS_MAX, cpulist) != 0)
		return err_set(e, "'%s' is not a CPU list", cpulist);
	if (sched_getaffinity(
	        0, sizeof(saved->mask), (cpu_set_t *)(void *)saved->mask) != 0)
		return err_set(e, "sched_getaffinity: %s", strerror(errno));
	set = CPU_ALLOC(CFG_CPUS_MAX);
	CPU_ZERO_S(sz, set);
	for (i = 0; i < CFG_CPUS_MAX; i++)
		if (want[i / 8] >> (i % 8) & 1)
			CPU_SET_S(i, sz, set);
	if (sched_setaffinity(0, sz, set) != 0) {
		CPU_FREE(set);
		return err_set(
		    e, "pinning to %s: %s", cpulist, strerror(errno));
	}
	CPU_FREE(set);
	saved->active = 1;
	return 0;
}

void
host_unpin(struct host_pin *saved)
{
	if (saved == NULL || !saved->active)
		return;
	sched_setaffinity(
	    0, sizeof(saved->mask), (cpu_set_t *)(void *)saved->mask);
	saved->active = 0;
}

int
host_thp_set(
    char *saved, size_t len, const char *root, const char *mode, struct err *e)
{
	char cur[64];

	saved[0] = '\0';
	if (mode == NULL || strcmp(mode, "keep") == 0)
		return 1;
	if (rd(saved, len, root, THP "/enabled") < 0)
		return err_set(
		    e, "host.thp: no %s%s/enabled on this host", root, THP);
	selected(cur, sizeof(cur), saved);
	if (strcmp(cur, mode) == 0) {
		saved[0] = '\0';
		return 1;
	}
	if (need_root(root, "host.thp", e) != 0 ||
	    wr(root, THP "/enabled", mode, e) != 0) {
		saved[0] = '\0';
		return -1;
	}
	return 0;
}

int
host_thp_restore(const char *root, const char *saved, struct err *e)
{
	char want[64];

	if (saved == NULL || saved[0] == '\0')
		return 0;
	selected(want, sizeof(want), saved);
	return wr(root, THP "/enabled", want, e);
}

int
host_drop_caches(const char *root, struct err *e)
{
	sync();
	return wr(root, "/proc/sys/vm/drop_caches", "3", e);
}

/* ---- recorded state ---- */

static void
state_governor(json_t *o, const char *root)
{
	long *cpus = xcalloc(CPUS_MAX, sizeof(long));
	size_t n = numbered(cpus, CPUS_MAX, root, SYSCPU, "cpu"), i;
	struct buf b = BUF_INIT(1024);
	char path[128], v[VAL_MAX], *s;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/scaling_governor", cpus[i]);
		if ((s = rdv(v, sizeof(v), root, path)) == NULL)
			continue;
		/* Distinct values, in CPU order. */
		if (b.len == 0)
			buf_printf(&b, "%s", s);
		else if (!has_word(b.data, s))
			buf_printf(&b, ",%s", s);
	}
	if (b.len == 0)
		json_object_set_new(o, "governor", json_string("unknown"));
	else if (strchr(b.data, ',') != NULL) {
		char *m = xasprintf("mixed: %s", b.data);

		json_object_set_new(o, "governor", json_string(m));
		free(m);
	} else
		json_object_set_new(o, "governor", json_string(b.data));
	buf_release(&b);
	free(cpus);
}

static void
set_or_unknown(json_t *o, const char *key, const char *v)
{
	json_object_set_new(o, key, json_string(v ? v : "unknown"));
}

json_t *
host_state(const char *root, const char *pinning)
{
	json_t *o = json_object();
	char v[VAL_MAX], sel[64], line[512], *s, *p;
	FILE *f;

	state_governor(o, root);
	if ((s = rdv(v, sizeof(v), root, NO_TURBO)) != NULL)
		set_or_unknown(o, "turbo", s[0] == '1' ? "off" : "on");
	else if ((s = rdv(v, sizeof(v), root, BOOST)) != NULL)
		set_or_unknown(o, "turbo", s[0] == '0' ? "off" : "on");
	else
		set_or_unknown(o, "turbo", NULL);
	if (rd(v, sizeof(v), root, THP "/enabled") >= 0) {
		selected(sel, sizeof(sel), v);
		set_or_unknown(o, "thp", sel);
	} else
		set_or_unknown(o, "thp", NULL);
	if (rd(v, sizeof(v), root, THP "/defrag") >= 0) {
		selected(sel, sizeof(sel), v);
		set_or_unknown(o, "thp_defrag", sel);
	} else
		set_or_unknown(o, "thp_defrag", NULL);
	s = rdv(v, sizeof(v), root, SYSCPU "/smt/active");
	set_or_unknown(o, "smt", s ? (s[0] == '0' ? "off" : "on") : NULL);
	set_or_unknown(o, "cmdline", rdv(v, sizeof(v), root, "/proc/cmdline"));
	set_or_unknown(
	    o, "kernel", rdv(v, sizeof(v), root, "/proc/sys/kernel/osrelease"));
	s = NULL;
	p = xasprintf("%s/proc/cpuinfo", root);
	if ((f = fopen(p, "r")) != NULL) {
		while (s == NULL && fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "microcode", 9) == 0 &&
			    (s = strchr(line, ':')) != NULL)
				s = trim(s + 1);
		fclose(f);
	}
	free(p);
	set_or_unknown(o, "microcode", s);
	set_or_unknown(o, "pinning", pinning ? pinning : "none");
	return o;
}

/* ---- a job's host: section ---- */

int
host_job_begin(struct host_job *hj, const char *root, json_t *spec,
    struct buf *log, struct err *e)
{
	const char *cpus = NULL, *scpus = NULL, *thp = NULL;
	struct err te = { 0 };
	int64_t pause = 0;
	int rc;

	memset(hj, 0, sizeof(*hj));
	hj->root = root;
	if (spec == NULL || json_is_null(spec))
		return 0;
	if (!json_is_object(spec))
		return err_set(e, "field 'host': expected an object");
	if (pwjson_str_opt(&cpus, spec, "cpus", e) != 0 ||
	    pwjson_str_opt(&scpus, spec, "server_cpus", e) != 0 ||
	    pwjson_str_opt(&thp, spec, "thp", e) != 0 ||
	    pwjson_bool_opt(&hj->drop_caches, spec, "drop_caches", e) != 0 ||
	    pwjson_int_opt(&hj->warmup, spec, "warmup", e) != 0 ||
	    pwjson_int_opt(&pause, spec, "pause_s", e) != 0)
		return err_set(e, "field 'host': %s", err_msg(e));
	if (hj->warmup < 0 || hj->warmup > 100 || pause < 0 || pause > 3600)
		return err_set(
		    e, "field 'host': warmup or pause_s out of range");
	hj->pause_ms = pause * 1000;
	if (cpus != NULL && host_cpus_resolve(&hj->cpus, root, cpus, e) != 0)
		return -1;
	if (scpus != NULL &&
	    host_cpus_resolve(&hj->server_cpus, root, scpus, e) != 0)
		return -1;
	rc = host_thp_set(hj->thp_saved, sizeof(hj->thp_saved), root, thp, &te);
	if (rc == 0)
		buf_printf(log, "host.thp: %s for this job\n", thp);
	else if (rc < 0)
		/* Not a failure: the run records the THP mode it had. */
		buf_printf(log, "host.thp: %s; runs record THP as it is\n",
		    err_msg(&te));
	if (hj->cpus)
		buf_printf(log, "host.cpus: benchmark on CPUs %s\n", hj->cpus);
	if (hj->server_cpus)
		buf_printf(log, "host.server_cpus: server on CPUs %s\n",
		    hj->server_cpus);
	return 0;
}

void
host_job_end(struct host_job *hj, struct buf *log)
{
	struct err e = { 0 };

	host_unpin(&hj->pin);
	if (hj->thp_saved[0] != '\0' &&
	    host_thp_restore(hj->root, hj->thp_saved, &e) != 0)
		buf_printf(log, "host.thp: restore: %s\n", err_msg(&e));
	hj->thp_saved[0] = '\0';
	free(hj->cpus);
	free(hj->server_cpus);
	hj->cpus = hj->server_cpus = NULL;
}

int
host_job_run_begin(struct host_job *hj, int server, struct err *e)
{
	struct err de = { 0 };
	const char *cpus = server ? hj->server_cpus : hj->cpus;

	if (!server && hj->drop_caches) {
		if (host_drop_caches(hj->root, &de) == 0)
			snprintf(hj->dropped, sizeof(hj->dropped), "done");
		else
			snprintf(hj->dropped, sizeof(hj->dropped), "failed: %s",
			    err_msg(&de));
	}
	if (cpus != NULL)
		return host_pin(&hj->pin, cpus, e);
	return 0;
}

void
host_job_run_end(struct host_job *hj)
{
	host_unpin(&hj->pin);
}

json_t *
host_job_state(const struct host_job *hj)
{
	json_t *o = host_state(hj->root, hj->cpus);

	json_object_set_new(o, "drop_caches",
	    json_string(!hj->drop_caches ? "off"
	            : hj->dropped[0]     ? hj->dropped
	                                 : "unknown"));
	return o;
}
