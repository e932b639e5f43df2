/*
 * Benchmark hygiene on a bench host, per job: pinning, THP and caches
 * around each run, the recorded host state, and the sysfs and procfs
 * reads and writes that the check (host_check.c) and tune
 * (host_tune.c) share, and other work's share of the CPU during a run
 * (see host.h and docs/HOST.md).
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_ALLOC */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "runners/host.h"
#include "runners/host_int.h"

/* ---- reading and writing files under root ---- */

/* Whole file (at most len-1 bytes) into out; bytes read, or -1. */
ssize_t
host_i_rd(char *out, size_t len, const char *root, const char *path)
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

char *
host_i_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
		e[-1] = '\0';
	return s;
}

/* host_i_rd() and host_i_trim(): the value, or NULL when the file cannot be
 * read. */
char *
host_i_rdv(char *out, size_t len, const char *root, const char *path)
{
	if (host_i_rd(out, len, root, path) < 0)
		return NULL;
	return host_i_trim(out);
}

int
host_i_exists(const char *root, const char *path)
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
void
host_i_selected(char *out, size_t len, const char *text)
{
	const char *a = strchr(text, '['), *b = a ? strchr(a, ']') : NULL;
	char tmp[VAL_MAX], *t;

	if (a != NULL && b != NULL && (size_t)(b - a - 1) < len) {
		memcpy(out, a + 1, (size_t)(b - a - 1));
		out[b - a - 1] = '\0';
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s", text);
	t = host_i_trim(tmp);
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
int
host_i_wr(const char *root, const char *path, const char *val, struct err *e)
{
	char *p = xasprintf("%s%s", root, path), old[VAL_MAX];
	struct buf fake = BUF_INIT(VAL_MAX);
	int fd, rc = 0;
	size_t len;

	if (root[0] != '\0') {
		host_i_rd(old, sizeof(old), root, path);
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

int
host_i_need_root(const char *root, const char *what, struct err *e)
{
	if (root[0] == '\0' && geteuid() != 0)
		return err_set(e,
		    "%s needs root (running as uid %ld); nothing was changed",
		    what, (long)geteuid());
	return 0;
}

/* Numbers n of the entries PREFIXn in dir, sorted; count returned. */
size_t
host_i_numbered(long *out, size_t max, const char *root, const char *dir,
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
		if ((s = host_i_rdv(v, sizeof(v), root, path)) == NULL)
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
	if ((s = host_i_rdv(v + 0, sizeof(v), root, SYSCPU "/online")) !=
	        NULL &&
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
	if (host_i_rd(saved, len, root, THP "/enabled") < 0)
		return err_set(
		    e, "host.thp: no %s%s/enabled on this host", root, THP);
	host_i_selected(cur, sizeof(cur), saved);
	if (strcmp(cur, mode) == 0) {
		saved[0] = '\0';
		return 1;
	}
	if (host_i_need_root(root, "host.thp", e) != 0 ||
	    host_i_wr(root, THP "/enabled", mode, e) != 0) {
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
	host_i_selected(want, sizeof(want), saved);
	return host_i_wr(root, THP "/enabled", want, e);
}

int
host_drop_caches(const char *root, struct err *e)
{
	sync();
	return host_i_wr(root, "/proc/sys/vm/drop_caches", "3", e);
}

/* ---- recorded state ---- */

static void
state_governor(json_t *o, const char *root)
{
	long *cpus = xcalloc(CPUS_MAX, sizeof(long));
	size_t n = host_i_numbered(cpus, CPUS_MAX, root, SYSCPU, "cpu"), i;
	struct buf b = BUF_INIT(1024);
	char path[128], v[VAL_MAX], *s;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/scaling_governor", cpus[i]);
		if ((s = host_i_rdv(v, sizeof(v), root, path)) == NULL)
			continue;
		/* Distinct values, in CPU order. */
		if (b.len == 0)
			buf_printf(&b, "%s", s);
		else if (!host_i_has_word(b.data, s))
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
	if ((s = host_i_rdv(v, sizeof(v), root, NO_TURBO)) != NULL)
		set_or_unknown(o, "turbo", s[0] == '1' ? "off" : "on");
	else if ((s = host_i_rdv(v, sizeof(v), root, BOOST)) != NULL)
		set_or_unknown(o, "turbo", s[0] == '0' ? "off" : "on");
	else
		set_or_unknown(o, "turbo", NULL);
	if (host_i_rd(v, sizeof(v), root, THP "/enabled") >= 0) {
		host_i_selected(sel, sizeof(sel), v);
		set_or_unknown(o, "thp", sel);
	} else
		set_or_unknown(o, "thp", NULL);
	if (host_i_rd(v, sizeof(v), root, THP "/defrag") >= 0) {
		host_i_selected(sel, sizeof(sel), v);
		set_or_unknown(o, "thp_defrag", sel);
	} else
		set_or_unknown(o, "thp_defrag", NULL);
	s = host_i_rdv(v, sizeof(v), root, SYSCPU "/smt/active");
	set_or_unknown(o, "smt", s ? (s[0] == '0' ? "off" : "on") : NULL);
	set_or_unknown(
	    o, "cmdline", host_i_rdv(v, sizeof(v), root, "/proc/cmdline"));
	set_or_unknown(o, "kernel",
	    host_i_rdv(v, sizeof(v), root, "/proc/sys/kernel/osrelease"));
	s = NULL;
	p = xasprintf("%s/proc/cpuinfo", root);
	if ((f = fopen(p, "r")) != NULL) {
		while (s == NULL && fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "microcode", 9) == 0 &&
			    (s = strchr(line, ':')) != NULL)
				s = host_i_trim(s + 1);
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

/* ---- other work's CPU time ---- */

void
host_cpu_sample(struct host_cpu_sample *out, const char *root)
{
	char text[1024];
	long long v[8] = { 0 };
	int n;

	memset(out, 0, sizeof(*out));
	if (host_i_rd(text, sizeof(text), root, "/proc/stat") <= 0)
		return;
	n = sscanf(text, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0],
	    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n < 5)
		return;
	/* user nice system idle iowait irq softirq steal */
	out->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	out->total = out->busy + v[3] + v[4];
	out->ok = 1;
}

double
host_other_cpu_pct(const struct host_cpu_sample *a,
    const struct host_cpu_sample *b, double own_s)
{
	long hz = sysconf(_SC_CLK_TCK);
	double busy, pct;

	if (!a->ok || !b->ok || b->total <= a->total || hz <= 0)
		return NAN;
	busy = (double)(b->busy - a->busy) - own_s * (double)hz;
	pct = 100.0 * busy / (double)(b->total - a->total);
	return pct < 0 ? 0 : pct > 100 ? 100 : pct;
}
