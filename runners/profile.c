#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "runners/cgroup.h"
#include "runners/exec.h"
#include "runners/profile.h"

#define PROFILE_FREQ "999"
#define PROFILE_STOP_MS 30000    /* perf record writing its data */
#define PROFILE_REPORT_MS 120000 /* perf report on a big perf.data */

static const char *const default_syms[] = { "try_charge_memcg",
	"mem_cgroup_charge*", "__mem_cgroup_charge", "mem_cgroup_sk_charge",
	"mem_cgroup_sk_uncharge", "mod_memcg_state", "__mod_memcg_state",
	"__mod_memcg_lruvec_state", "refill_stock", "consume_stock",
	"drain_stock", "obj_cgroup_charge*", "page_counter_*", NULL };

const char *const *
profile_default_symbols(void)
{
	return default_syms;
}

int
profile_symbol_matches(const char *name, const char *const *globs)
{
	size_t i;

	for (i = 0; globs[i]; i++)
		if (fnmatch(globs[i], name, 0) == 0)
			return 1;
	return 0;
}

void
profile_report_init(struct profile_report *r)
{
	memset(r, 0, sizeof(*r));
}

void
profile_report_release(struct profile_report *r)
{
	if (r == NULL)
		return;
	free(r->syms);
	r->syms = NULL;
	r->n = 0;
}

static int
by_pct(const void *a, const void *b)
{
	const struct profile_sym *x = a, *y = b;

	if (x->pct != y->pct)
		return x->pct < y->pct ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* "# Samples: 11K of event 'cpu-clock'" */
static void
header_line(struct profile_report *r, const char *l, size_t len)
{
	const char *p = l, *end = l + len, *q;
	char tmp[256];

	if (len >= sizeof(tmp))
		return;
	memcpy(tmp, l, len);
	tmp[len] = '\0';
	if ((p = strstr(tmp, "# Samples: ")) == NULL)
		return;
	p += 11;
	q = strchr(p, ' ');
	if (q && (size_t)(q - p) < sizeof(r->samples))
		snprintf(
		    r->samples, sizeof(r->samples), "%.*s", (int)(q - p), p);
	if ((p = strstr(tmp, "of event '")) != NULL) {
		p += 10;
		q = strchr(p, '\'');
		if (q && (size_t)(q - p) < sizeof(r->event))
			snprintf(r->event, sizeof(r->event), "%.*s",
			    (int)(q - p), p);
	}
	(void)end;
}

int
profile_parse_report(struct profile_report *r, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t alloc = 0, lineno = 0;
	int header = 0;

	profile_report_release(r);
	err_clear(&r->err);
	r->event[0] = r->samples[0] = '\0';
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end, *q = p, *s, *t;
		struct profile_sym sym;
		char num[32];
		size_t nl;

		lineno++;
		if (q < le && *q == '#') {
			header = 1;
			header_line(r, q, (size_t)(le - q));
			goto next;
		}
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if (q == le)
			goto next;
		/* "53.71%  [k] symbol   [IPC columns]" */
		for (nl = 0; q + nl < le && nl < sizeof(num) - 1 &&
		     (isdigit((unsigned char)q[nl]) || q[nl] == '.');
		     nl++)
			num[nl] = q[nl];
		num[nl] = '\0';
		if (nl == 0 || q + nl >= le || q[nl] != '%')
			return err_set(&r->err,
			    "perf report: line %zu: expected \"N.NN%%  [x] "
			    "symbol\"",
			    lineno);
		q += nl + 1;
		while (q < le && *q == ' ')
			q++;
		if (le - q < 4 || q[0] != '[' || q[2] != ']' || q[3] != ' ')
			return err_set(&r->err,
			    "perf report: line %zu: expected \"[k]\" or "
			    "\"[.]\" "
			    "after the percentage",
			    lineno);
		sym.space = q[1];
		sym.pct = strtod(num, NULL);
		s = q + 4;
		while (s < le && *s == ' ')
			s++;
		/* The symbol ends at a run of two blanks (padding, IPC). */
		for (t = s;
		     t < le && !(t[0] == ' ' && (t + 1 == le || t[1] == ' '));
		     t++)
			;
		if (t == s)
			return err_set(&r->err,
			    "perf report: line %zu: empty symbol", lineno);
		snprintf(sym.name, sizeof(sym.name), "%.*s", (int)(t - s), s);
		if (r->n == alloc) {
			alloc = alloc ? alloc * 2 : 256;
			r->syms = xreallocarray(r->syms, alloc, sizeof(sym));
		}
		r->syms[r->n++] = sym;
	next:
		p = eol ? eol + 1 : end;
	}
	if (!header && r->n == 0)
		return err_set(&r->err, "perf report: empty output");
	if (r->n == 0)
		return err_set(&r->err, "perf report: no samples%s%s",
		    r->samples[0] ? " (Samples: " : "",
		    r->samples[0] ? r->samples : "");
	qsort(r->syms, r->n, sizeof(*r->syms), by_pct);
	return 0;
}

int
profile_charge_share(
    double *out, const struct profile_report *r, const char *const *globs)
{
	size_t i;
	int kernel = 0, matched = 0;
	double sum = 0;

	for (i = 0; i < r->n; i++) {
		if (r->syms[i].space != 'k')
			continue;
		kernel = 1;
		/* An unresolved kernel address is no symbol. */
		if (strncmp(r->syms[i].name, "0x", 2) == 0)
			continue;
		if (profile_symbol_matches(r->syms[i].name, globs)) {
			sum += r->syms[i].pct;
			matched++;
		}
	}
	if (!kernel)
		return ERR_NOTFOUND;
	*out = sum;
	return matched;
}

int
profile_kallsyms_check(
    const char *path, const char *const *globs, char *reason, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int nonzero = 0, found = 0;

	if (f == NULL) {
		snprintf(
		    reason, len, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char addr[32], type[4], name[256];

		if (sscanf(line, "%31s %3s %255s", addr, type, name) != 3)
			continue;
		if (strspn(addr, "0") != strlen(addr))
			nonzero = 1;
		if (!found && profile_symbol_matches(name, globs))
			found = 1;
		if (found && nonzero)
			break;
	}
	fclose(f);
	if (!nonzero) {
		snprintf(reason, len,
		    "kernel symbol addresses are hidden in %s "
		    "(kernel.kptr_restrict; perf cannot resolve kernel "
		    "symbols)",
		    path);
		return -1;
	}
	if (!found) {
		snprintf(reason, len,
		    "the kernel has none of the charge-path symbols in %s",
		    path);
		return 0;
	}
	return 1;
}

int
profile_blob(struct buf *b, const struct profile_report *r, const char *scope,
    const double *share, const char *reason, const char *const *globs)
{
	json_t *o = json_object(), *top = json_array(), *m = json_array();
	size_t i;
	int rc;

	json_object_set_new(o, "event", json_string(r ? r->event : ""));
	json_object_set_new(o, "samples", json_string(r ? r->samples : ""));
	json_object_set_new(o, "scope", json_string(scope ? scope : ""));
	json_object_set_new(
	    o, "share_pct", share ? json_real(*share) : json_null());
	json_object_set_new(o, "reason",
	    reason && reason[0] ? json_string(reason) : json_null());
	for (i = 0; r && i < r->n; i++) {
		json_t *s;

		if (r->syms[i].space == 'k' &&
		    profile_symbol_matches(r->syms[i].name, globs) &&
		    json_array_size(m) < 100) {
			s = json_object();
			json_object_set_new(
			    s, "symbol", json_string(r->syms[i].name));
			json_object_set_new(
			    s, "pct", json_real(r->syms[i].pct));
			json_array_append_new(m, s);
		}
		if (i < PROFILE_TOP) {
			char sp[2] = { r->syms[i].space, 0 };

			s = json_object();
			json_object_set_new(
			    s, "symbol", json_string(r->syms[i].name));
			json_object_set_new(s, "space", json_string(sp));
			json_object_set_new(
			    s, "pct", json_real(r->syms[i].pct));
			json_array_append_new(top, s);
		}
	}
	json_object_set_new(o, "matched", m);
	json_object_set_new(o, "top", top);
	rc = pwjson_dump_buf(b, o);
	json_decref(o);
	return rc;
}

void
profile_result_release(struct profile_result *res)
{
	if (res == NULL)
		return;
	free(res->blob);
	res->blob = NULL;
}

struct profile {
	struct profile_opts o;
	char *perf, *dir, *data, *cgroup, *kallsyms;
	const char *const *syms;
	pid_t pid;
	double started; /* clock_mono_s() when perf record started */
	int usable;
	char reason[PROFILE_REASON_MAX];
	char event[32];
	char scope[256];
};

/* fork + exec argv, stdout/stderr to files (or /dev/null). */
static pid_t
spawn(char *const argv[], const char *out, const char *errf)
{
	pid_t pid = fork();

	if (pid == 0) {
		int o = open(out ? out : "/dev/null",
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int e = open(errf ? errf : "/dev/null",
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (o == -1 || e == -1 || nul == -1)
			_exit(126);
		dup2(nul, 0);
		dup2(o, 1);
		dup2(e, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int
run(char *const argv[], const char *out, const char *err, long ms)
{
	pid_t pid = spawn(argv, out, err);
	int st;

	if (pid < 0)
		return -1;
	st = exec_wait_bounded(pid, ms, NULL);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int
file_has(const char *path, const char *needle)
{
	struct buf b = BUF_INIT(1 << 16);
	int found = files_read(&b, path, 1 << 16) == 0 &&
	    strstr(b.data, needle) != NULL;

	buf_release(&b);
	return found;
}

/* Returns 0 when perf can be started, else the reason in p->reason. */
static int
probe(struct profile *p)
{
	char *ver[] = { p->perf, "--version", NULL };
	char *stat[] = { p->perf, "stat", "-x,", "-e", "cycles", "true", NULL };
	char *errf = xasprintf("%s/perf-stat.err", p->dir);
	int paranoid = 2, kptr = 0, rc;

	if (run(ver, NULL, NULL, 10000) != 0) {
		snprintf(p->reason, sizeof(p->reason),
		    "perf not found or not working ('%s --version' failed); "
		    "install the linux-perf package",
		    p->perf);
		free(errf);
		return -1;
	}
	files_read_int("/proc/sys/kernel/perf_event_paranoid", &paranoid);
	files_read_int("/proc/sys/kernel/kptr_restrict", &kptr);
	if (geteuid() != 0 && paranoid > 0) {
		snprintf(p->reason, sizeof(p->reason),
		    "system-wide perf record needs root or CAP_PERFMON: "
		    "kernel.perf_event_paranoid=%d (the runner changes no "
		    "sysctl; set it to -1 or run as root)",
		    paranoid);
		free(errf);
		return -1;
	}
	if (kptr >= 2 || (kptr == 1 && geteuid() != 0)) {
		snprintf(p->reason, sizeof(p->reason),
		    "kernel.kptr_restrict=%d hides kernel symbols from this "
		    "runner (the runner changes no sysctl)",
		    kptr);
		free(errf);
		return -1;
	}
	rc = profile_kallsyms_check(
	    p->kallsyms, p->syms, p->reason, sizeof(p->reason));
	if (rc != 1) {
		free(errf);
		return -1;
	}
	/* Hardware cycles when counted, else the cpu-clock timer. */
	rc = run(stat, NULL, errf, 10000);
	if (rc == 0 && !file_has(errf, "<not supported>") &&
	    !file_has(errf, "<not counted>"))
		snprintf(p->event, sizeof(p->event), "cycles");
	else
		snprintf(p->event, sizeof(p->event), "cpu-clock");
	free(errf);
	return 0;
}

struct profile *
profile_start(const struct profile_opts *o)
{
	struct profile *p = xcalloc(1, sizeof(*p));
	char *argv[16];
	char *errf;
	int n = 0, i;
	struct stat st;

	p->o = *o;
	p->perf = xstrdup(o->perf ? o->perf : "perf");
	p->dir = xstrdup(o->dir);
	p->cgroup = xstrdup(o->cgroup);
	p->kallsyms = xstrdup(o->kallsyms ? o->kallsyms : "/proc/kallsyms");
	p->syms = o->symbols ? o->symbols : default_syms;
	p->data = xasprintf("%s/perf.data", o->dir);
	p->pid = -1;
	if (probe(p))
		return p;
	if (p->cgroup)
		snprintf(p->scope, sizeof(p->scope), "cgroup %s", p->cgroup);
	else
		snprintf(p->scope, sizeof(p->scope),
		    "system-wide (the placement has no cgroup2 directory "
		    "for perf -G)");
	argv[n++] = p->perf;
	argv[n++] = "record";
	argv[n++] = "-e";
	argv[n++] = p->event;
	argv[n++] = "-F";
	argv[n++] = PROFILE_FREQ;
	argv[n++] = "-a";
	if (p->cgroup) {
		argv[n++] = "-G";
		argv[n++] = p->cgroup;
	}
	argv[n++] = "-o";
	argv[n++] = p->data;
	argv[n] = NULL;
	unlink(p->data);
	errf = xasprintf("%s/perf-record.err", p->dir);
	p->started = clock_mono_s();
	p->pid = spawn(argv, NULL, errf);
	free(errf);
	if (p->pid < 0) {
		snprintf(
		    p->reason, sizeof(p->reason), "fork: %s", strerror(errno));
		return p;
	}
	/* perf creates its output before it enables the events. */
	for (i = 0; i < 250 && stat(p->data, &st) != 0; i++) {
		if (waitpid(p->pid, NULL, WNOHANG) == p->pid) {
			p->pid = -1;
			snprintf(p->reason, sizeof(p->reason),
			    "perf record exited at start (see %s/"
			    "perf-record.err)",
			    p->dir);
			return p;
		}
		clock_sleep_ms(20);
	}
	clock_sleep_ms(200);
	p->usable = 1;
	return p;
}

void
profile_stop(struct profile *p, struct profile_result *res)
{
	char *rep = xasprintf("%s/perf-report.txt", p->dir);
	char *errf = xasprintf("%s/perf-report.err", p->dir);
	char *argv[] = { p->perf, "report", "-i", p->data, "--stdio",
		"--no-children", "--sort", "symbol", NULL };
	struct profile_report r;
	struct buf text = BUF_INIT(CAP_PERF_REPORT),
	           blob = BUF_INIT(CAP_PROFILE_BLOB);
	double share = 0;
	struct rusage ru;
	int st, m;

	memset(res, 0, sizeof(*res));
	profile_report_init(&r);
	snprintf(res->event, sizeof(res->event), "%s", p->event);
	snprintf(res->scope, sizeof(res->scope), "%s", p->scope);
	if (!p->usable) {
		snprintf(res->reason, sizeof(res->reason), "%s", p->reason);
		goto out;
	}
	kill(p->pid, SIGINT);
	st = exec_wait_bounded(p->pid, PROFILE_STOP_MS, &ru);
	/* The profiler's own cost while the benchmark ran (docs/MEMCG.md). */
	res->perf_wall_s = clock_mono_s() - p->started;
	if (st != -1) {
		res->perf_cpu_s = (double)ru.ru_utime.tv_sec +
		    ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		    ru.ru_stime.tv_usec / 1e6;
		res->perf_cpu_known = 1;
	}
	p->pid = -1;
	p->usable = 0;
	if (st == -1) {
		snprintf(res->reason, sizeof(res->reason),
		    "perf record did not stop within %d s",
		    PROFILE_STOP_MS / 1000);
		goto out;
	}
	if (run(argv, rep, errf, PROFILE_REPORT_MS) != 0) {
		snprintf(res->reason, sizeof(res->reason),
		    "perf report failed (see %s)", errf);
		goto out;
	}
	if (files_read(&text, rep, CAP_PERF_REPORT)) {
		snprintf(res->reason, sizeof(res->reason), "cannot read %s: %s",
		    rep, strerror(errno));
		goto out;
	}
	if (profile_parse_report(&r, text.data, text.len)) {
		snprintf(
		    res->reason, sizeof(res->reason), "%s", err_msg(&r.err));
		goto out;
	}
	m = profile_charge_share(&share, &r, p->syms);
	if (m == ERR_NOTFOUND) {
		snprintf(res->reason, sizeof(res->reason),
		    "the profile has no resolved kernel sample (%s samples)",
		    r.samples);
		goto out;
	}
	res->known = 1;
	res->share_pct = share;
out:
	if (profile_blob(&blob, r.n ? &r : NULL, res->scope,
	        res->known ? &share : NULL, res->reason, p->syms) == 0)
		res->blob = buf_take(&blob);
	buf_release(&blob);
	buf_release(&text);
	profile_report_release(&r);
	free(rep);
	free(errf);
}

void
profile_free(struct profile *p)
{
	if (p == NULL)
		return;
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	free(p->perf);
	free(p->dir);
	free(p->data);
	free(p->cgroup);
	free(p->kallsyms);
	free(p);
}
