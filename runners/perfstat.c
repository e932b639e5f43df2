/*
 * Hardware counters of a run: perf stat around the benchmark, its CSV
 * output, and the per-operation metrics (see perfstat.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "runners/bench/bench.h"
#include "runners/exec.h"
#include "runners/perfstat.h"

#define DEVICES "/sys/bus/event_source/devices"
#define ACK_MS 10000  /* perf's answer to enable and disable */
#define STOP_MS 10000 /* perf writing its counts after SIGINT */
#define CTL_FD 3      /* --control fd:3,4 in perf */
#define ACK_FD 4

/* ---- the output ---- */

void
perfstat_report_init(struct perfstat_report *r)
{
	memset(r, 0, sizeof(*r));
}

void
perfstat_report_release(struct perfstat_report *r)
{
	if (r == NULL)
		return;
	free(r->lines);
	r->lines = NULL;
	r->n = 0;
}

/* One field of a line: [p, e), and its 1-based column. */
struct field {
	const char *p, *e;
	size_t col;
};

static int
field_is(const struct field *f, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(f->e - f->p) == n && memcmp(f->p, s, n) == 0;
}

/* A finite number >= 0 filling the whole field. */
static int
field_num(double *out, const struct field *f)
{
	char tmp[64], *end;
	size_t n = (size_t)(f->e - f->p);

	if (n == 0 || n >= sizeof(tmp) ||
	    !(isdigit((unsigned char)f->p[0]) || f->p[0] == '.'))
		return -1;
	memcpy(tmp, f->p, n);
	tmp[n] = '\0';
	errno = 0;
	*out = strtod(tmp, &end);
	if (*end != '\0' || errno != 0 || !isfinite(*out) || *out < 0)
		return -1;
	return 0;
}

/* The field as a string: it fits, and holds no NUL or control byte. */
static int
field_copy(char *out, size_t len, const struct field *f)
{
	size_t n = (size_t)(f->e - f->p), i;

	if (n >= len)
		return -1;
	for (i = 0; i < n; i++)
		if ((unsigned char)f->p[i] < 0x20 || f->p[i] == 0x7f)
			return -1;
	memcpy(out, f->p, n);
	out[n] = '\0';
	return 0;
}

#define MAX_FIELDS 16

/* Splits [p, e) at commas; returns the number of fields (at most max). */
static size_t
split(struct field *f, size_t max, const char *p, const char *e)
{
	const char *start = p, *s = p;
	size_t n = 0;

	for (;;) {
		const char *c = memchr(s, ',', (size_t)(e - s));

		if (n == max)
			return n;
		f[n].p = s;
		f[n].e = c ? c : e;
		f[n].col = (size_t)(s - start) + 1;
		n++;
		if (c == NULL)
			return n;
		s = c + 1;
	}
}

static int
bad(struct perfstat_report *r, size_t line, const struct field *f,
    const char *what)
{
	int n = (int)(f->e - f->p);

	return err_set(&r->err,
	    "perf stat: line %zu, column %zu: %s, got '%.*s'", line, f->col,
	    what, n > 40 ? 40 : n, f->p);
}

/* One counter line into out; 0, or -1 with r->err set. */
static int
parse_line(struct perfstat_report *r, struct perfstat_line *out,
    const struct field *f, size_t nf, size_t lineno, int cgroup_column)
{
	size_t rt = cgroup_column ? 4 : 3; /* the run time's field */
	double dummy;

	memset(out, 0, sizeof(*out));
	out->lineno = lineno;
	out->runtime = out->pct = -1;
	if (field_is(&f[0], "<not counted>"))
		out->state = PERFSTAT_NOT_COUNTED;
	else if (field_is(&f[0], "<not supported>"))
		out->state = PERFSTAT_NOT_SUPPORTED;
	else if (field_num(&out->value, &f[0]) == 0)
		out->state = PERFSTAT_COUNTED;
	else
		return bad(r, lineno, &f[0],
		    "expected a count, <not counted> or <not supported>");
	if (nf < rt + 2) {
		struct field end = { f[nf - 1].e, f[nf - 1].e, 0 };

		end.col = (size_t)(f[nf - 1].e - f[0].p) + 1;
		return bad(r, lineno, &end,
		    cgroup_column
		        ? "expected value,unit,event,cgroup,run time,percent"
		        : "expected value,unit,event,run time,percent");
	}
	/* A number here is interval (-I) or per-CPU (-A) output. */
	if (field_num(&dummy, &f[1]) == 0 ||
	    field_copy(out->unit, sizeof(out->unit), &f[1]) != 0)
		return bad(
		    r, lineno, &f[1], "expected a unit (\"msec\" or nothing)");
	if (f[2].p == f[2].e || field_num(&dummy, &f[2]) == 0 ||
	    field_copy(out->event, sizeof(out->event), &f[2]) != 0)
		return bad(r, lineno, &f[2], "expected an event name");
	if (cgroup_column &&
	    (f[3].p == f[3].e ||
	        field_copy(out->cgroup, sizeof(out->cgroup), &f[3]) != 0))
		return bad(r, lineno, &f[3], "expected the cgroup (-G)");
	/* Older perf leaves run time and percent empty when not counted. */
	if (f[rt].p != f[rt].e && field_num(&out->runtime, &f[rt]) != 0)
		return bad(r, lineno, &f[rt], "expected the run time");
	if (f[rt + 1].p != f[rt + 1].e &&
	    (field_num(&out->pct, &f[rt + 1]) != 0 || out->pct > 100))
		return bad(r, lineno, &f[rt + 1],
		    "expected the percent of time counted (0 to 100)");
	if (out->state == PERFSTAT_COUNTED &&
	    (out->runtime < 0 || out->pct < 0))
		return bad(r, lineno, &f[rt],
		    "a count needs its run time and percent");
	return 0;
}

int
perfstat_parse(
    struct perfstat_report *r, const char *text, size_t len, int cgroup_column)
{
	const char *p = text, *end = text + len;
	struct field f[MAX_FIELDS];
	size_t lineno = 0, alloc = 0, nf;

	perfstat_report_release(r);
	err_clear(&r->err);
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end;

		lineno++;
		if (le > p && le[-1] == '\r')
			le--;
		if (le == p || *p == '#')
			goto next;
		nf = split(f, MAX_FIELDS, p, le);
		/* ",,,,,0.04,stalled cycles per insn": a derived metric. */
		if (f[0].p == f[0].e)
			goto next;
		if (r->n == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			r->lines =
			    xreallocarray(r->lines, alloc, sizeof(*r->lines));
		}
		if (parse_line(r, &r->lines[r->n], f, nf, lineno,
		        cgroup_column) != 0) {
			perfstat_report_release(r);
			return -1;
		}
		r->n++;
	next:
		p = eol ? eol + 1 : end;
	}
	if (r->n == 0)
		return err_set(
		    &r->err, "perf stat: no counter in %zu lines", lineno);
	return 0;
}

/* "cpu_core/instructions/" and "instructions" both name instructions. */
static int
event_matches(const char *printed, const char *event)
{
	const char *s = strchr(printed, '/');
	size_t n = strlen(event);

	if (s == NULL)
		return strcmp(printed, event) == 0;
	s++;
	return strncmp(s, event, n) == 0 && s[n] == '/' && s[n + 1] == '\0';
}

int
perfstat_total(struct perfstat_total *t, const struct perfstat_report *r,
    const char *event)
{
	struct buf why = BUF_INIT(PERFSTAT_REASON_MAX);
	size_t i;

	memset(t, 0, sizeof(*t));
	t->pct = 100;
	for (i = 0; i < r->n; i++) {
		const struct perfstat_line *l = &r->lines[i];

		if (!event_matches(l->event, event))
			continue;
		if (l->state == PERFSTAT_NOT_SUPPORTED) {
			t->not_supported++;
			continue;
		}
		if (l->state == PERFSTAT_NOT_COUNTED) {
			t->not_counted++;
			continue;
		}
		t->counted++;
		t->value += l->value;
		if (l->pct < t->pct)
			t->pct = l->pct;
		if (l->pct < 100)
			buf_printf(&why, "%s%s ran %.2f%% of the time",
			    why.len ? ", " : "", l->event, l->pct);
	}
	if (t->counted == 0 && t->not_supported > 0)
		snprintf(t->reason, sizeof(t->reason),
		    "%s: <not supported> (no PMU of this host counts it)",
		    event);
	else if (t->counted == 0 && t->not_counted > 0)
		snprintf(t->reason, sizeof(t->reason),
		    "%s: <not counted> (the cgroup never ran while counting)",
		    event);
	else if (t->counted == 0)
		snprintf(t->reason, sizeof(t->reason),
		    "%s: not in perf's output", event);
	else if (t->pct < 100)
		snprintf(t->reason, sizeof(t->reason),
		    "%s: multiplexed (%s): perf's scaled estimate is not a "
		    "count",
		    event, why.data);
	else
		t->known = 1;
	if (!t->known)
		t->value = 0;
	buf_release(&why);
	return t->known;
}

/* ---- operations ---- */

static int
is_rate(const char *unit)
{
	size_t n = strlen(unit);

	return (n >= 2 && strcmp(unit + n - 2, "/s") == 0) ||
	    strcmp(unit, "IOPS") == 0;
}

void
perfstat_ops_from(struct perfstat_ops *o, const char *metric, const char *unit,
    double value, double duration_s)
{
	memset(o, 0, sizeof(*o));
	if (unit == NULL) {
		snprintf(o->how, sizeof(o->how),
		    "the run reports no metric '%s' (counters_ops)", metric);
		return;
	}
	if (is_rate(unit)) {
		o->ops = value * duration_s;
		snprintf(o->how, sizeof(o->how), "%s = %.6g %s x %.3f s",
		    metric, value, unit, duration_s);
	} else {
		o->ops = value;
		snprintf(o->how, sizeof(o->how), "%s = %.6g%s%s", metric, value,
		    unit[0] ? " " : "", unit);
	}
	if (!(o->ops > 0) || !isfinite(o->ops)) {
		char why[sizeof(o->how)];

		snprintf(why, sizeof(why), "%s", o->how);
		snprintf(o->how, sizeof(o->how), "no operations (%.200s)", why);
		o->ops = 0;
		return;
	}
	o->known = 1;
}

void
perfstat_ops_parse(struct perfstat_ops *o, const char *metric,
    const char *parser, const char *raw, size_t len, double duration_s)
{
	struct bench_result br;
	const struct bench_metric *m;

	memset(o, 0, sizeof(*o));
	if (metric == NULL) {
		snprintf(o->how, sizeof(o->how),
		    "the job names no counters_ops metric");
		return;
	}
	bench_result_init(&br);
	if (bench_parse(&br, parser, raw, len) != 0) {
		snprintf(o->how, sizeof(o->how), "%s", err_msg(&br.err));
		bench_result_release(&br);
		return;
	}
	m = bench_find(&br, metric);
	perfstat_ops_from(
	    o, metric, m ? m->unit : NULL, m ? m->value : 0, duration_s);
	bench_result_release(&br);
}

/* ---- metrics ---- */

size_t
perfstat_derive(struct perfstat_metric out[PERFSTAT_MAX_METRICS],
    const struct perfstat_total *ins, const struct perfstat_total *cyc,
    const struct perfstat_ops *ops)
{
	size_t n = 0;
	int op = ops != NULL && ops->known && ops->ops > 0;

	if (ins->known)
		out[n++] = (struct perfstat_metric){ "perf.instructions",
			"instructions", "info", ins->value };
	if (cyc->known)
		out[n++] = (struct perfstat_metric){ "perf.cycles", "cycles",
			"info", cyc->value };
	if (ins->known && cyc->known && cyc->value > 0)
		out[n++] = (struct perfstat_metric){ "perf.ipc", "insn/cycle",
			"higher", ins->value / cyc->value };
	if (ins->known && op)
		out[n++] = (struct perfstat_metric){ "perf.instructions_per_op",
			"instructions/op", "lower", ins->value / ops->ops };
	if (cyc->known && op)
		out[n++] = (struct perfstat_metric){ "perf.cycles_per_op",
			"cycles/op", "lower", cyc->value / ops->ops };
	return n;
}

/* ---- the PMU ---- */

static int
core_pmu(const char *name)
{
	return strcmp(name, "cpu") == 0 || strcmp(name, "cpu_core") == 0 ||
	    strcmp(name, "cpu_atom") == 0 || strncmp(name, "armv8_", 6) == 0 ||
	    strncmp(name, "armv7_", 6) == 0;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
perfstat_pmu(char *out, size_t len, const char *devices)
{
	const char *dir = devices ? devices : DEVICES;
	DIR *d = opendir(dir);
	struct dirent *de;
	char *names[16];
	size_t n = 0, i, off = 0;

	if (d == NULL) {
		snprintf(out, len, "no PMU on this host: cannot read %s: %s",
		    dir, strerror(errno));
		return 0;
	}
	while ((de = readdir(d)) != NULL && n < 16)
		if (core_pmu(de->d_name))
			names[n++] = xstrdup(de->d_name);
	closedir(d);
	if (n == 0) {
		snprintf(out, len,
		    "no PMU on this host: %s has no cpu, cpu_core, cpu_atom, "
		    "armv7_* or armv8_* entry (no hardware counters, as in a "
		    "virtual machine without a virtual PMU)",
		    dir);
		return 0;
	}
	qsort(names, n, sizeof(*names), by_name);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (off < len)
			off += (size_t)snprintf(out + off, len - off, "%s%s",
			    i ? "+" : "", names[i]);
		free(names[i]);
	}
	return 1;
}

/* ---- perf stat around a run ---- */

struct perfstat {
	char *perf, *dir, *out, *errf, *cgroup, *events;
	pid_t pid;
	int ctl, ack; /* our ends: commands to perf, its answers (sockets) */
	int usable;
	char pmu[64];
	char reason[PERFSTAT_REASON_MAX];
};

/* Sends cmd ("enable", "disable") and waits for perf's "ack".  0 or -1. */
static int
command(struct perfstat *p, const char *cmd)
{
	char line[32], ack[16];
	struct pollfd pfd = { p->ack, POLLIN, 0 };
	size_t n = (size_t)snprintf(line, sizeof(line), "%s\n", cmd);
	ssize_t got;

	/* A socket: a perf that died is EPIPE, not SIGPIPE. */
	if (send(p->ctl, line, n, MSG_NOSIGNAL) != (ssize_t)n)
		return -1;
	if (poll(&pfd, 1, ACK_MS) != 1)
		return -1;
	got = read(p->ack, ack, sizeof(ack) - 1);
	if (got < 3 || memcmp(ack, "ack", 3) != 0)
		return -1;
	return 0;
}

/* fd moved to >= 10, close-on-exec, so dup2 to 3 and 4 cannot clash. */
static int
high_fd(int fd)
{
	int h = fcntl(fd, F_DUPFD_CLOEXEC, 10);

	close(fd);
	return h;
}

/*
 * fork + exec of perf with its control fds as 3 and 4, stdin /dev/null,
 * stdout /dev/null, stderr to errf.  perf dies with the runner
 * (PR_SET_PDEATHSIG): an orphaned `perf stat -a` would wait for ever.
 * The signal comes when the thread that forked ends: the runner's jobs
 * run on its main thread, which lives as long as the process.
 */
static pid_t
spawn(char *const argv[], int ctl, int ack, const char *errf)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		int e =
		    open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (e == -1 || nul == -1 ||
		    prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
		    getppid() != parent || dup2(nul, 0) == -1 ||
		    dup2(nul, 1) == -1 || dup2(e, 2) == -1 ||
		    dup2(ctl, CTL_FD) == -1 || dup2(ack, ACK_FD) == -1)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* "FIRST LINE OF path (path)", or "see path": perf's own words. */
static void
first_line(char *out, size_t len, const char *path)
{
	struct buf b = BUF_INIT(4096);
	const char *p;
	size_t n = 0;

	if (files_read(&b, path, 4096) == 0 && b.len > 0) {
		for (p = b.data; *p == '\n'; p++)
			;
		n = strcspn(p, "\n");
		if (n > 0)
			snprintf(out, len, "%.*s (%s)",
			    (int)(n > 160 ? 160 : n), p, path);
	}
	if (n == 0)
		snprintf(out, len, "see %s", path);
	buf_release(&b);
}

/* Why counting is impossible here, or 0 with p->pmu set. */
static int
probe(struct perfstat *p, const struct perfstat_opts *o)
{
	char pmu[PERFSTAT_REASON_MAX];
	int paranoid = 2;

	if (!o->no_pmu_check) {
		if (!perfstat_pmu(pmu, sizeof(pmu), o->devices)) {
			snprintf(p->reason, sizeof(p->reason), "%s", pmu);
			return -1;
		}
		snprintf(p->pmu, sizeof(p->pmu), "%.63s", pmu);
	}
	if (p->cgroup == NULL) {
		snprintf(p->reason, sizeof(p->reason),
		    "the benchmark has no cgroup2 directory for perf -G "
		    "(counting every process of the host is no measurement "
		    "of the benchmark)");
		return -1;
	}
	files_read_int("/proc/sys/kernel/perf_event_paranoid", &paranoid);
	if (geteuid() != 0 && paranoid > 0) {
		snprintf(p->reason, sizeof(p->reason),
		    "counting a cgroup on every CPU needs root or "
		    "CAP_PERFMON: kernel.perf_event_paranoid=%d (the runner "
		    "changes no sysctl; set it to 0 or run as root)",
		    paranoid);
		return -1;
	}
	return 0;
}

struct perfstat *
perfstat_start(const struct perfstat_opts *o)
{
	struct perfstat *p = xcalloc(1, sizeof(*p));
	int ctl[2] = { -1, -1 }, ack[2] = { -1, -1 }, st;
	char *argv[20];
	int n = 0;

	p->perf = xstrdup(o->perf ? o->perf : "perf");
	p->dir = xstrdup(o->dir);
	p->out = xasprintf("%s/perf-stat.csv", o->dir);
	p->errf = xasprintf("%s/perf-stat.err", o->dir);
	p->cgroup = o->cgroup ? xstrdup(o->cgroup) : NULL;
	p->events = xstrdup(o->events ? o->events : PERFSTAT_EVENTS);
	p->pid = -1;
	p->ctl = p->ack = -1;
	if (probe(p, o) != 0)
		return p;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ack) != 0) {
		snprintf(p->reason, sizeof(p->reason), "socketpair: %s",
		    strerror(errno));
		goto fail;
	}
	ctl[1] = high_fd(ctl[1]);
	ack[1] = high_fd(ack[1]);
	if (ctl[1] == -1 || ack[1] == -1) {
		snprintf(
		    p->reason, sizeof(p->reason), "fcntl: %s", strerror(errno));
		goto fail;
	}
	argv[n++] = p->perf;
	argv[n++] = "stat";
	argv[n++] = "-x,";
	argv[n++] = "-o";
	argv[n++] = p->out;
	argv[n++] = "-a";
	argv[n++] = "-D";
	argv[n++] = "-1";
	argv[n++] = "--control";
	argv[n++] = "fd:3,4";
	argv[n++] = "-e";
	argv[n++] = p->events;
	/* After -e: perf 6.1 refuses -G before the events it applies to. */
	argv[n++] = "-G";
	argv[n++] = p->cgroup;
	argv[n] = NULL;
	unlink(p->out);
	p->pid = spawn(argv, ctl[1], ack[1], p->errf);
	if (p->pid < 0) {
		snprintf(
		    p->reason, sizeof(p->reason), "fork: %s", strerror(errno));
		goto fail;
	}
	close(ctl[1]);
	close(ack[1]);
	ctl[1] = ack[1] = -1;
	p->ctl = ctl[0];
	p->ack = ack[0];
	ctl[0] = ack[0] = -1;
	if (command(p, "enable") == 0) {
		p->usable = 1;
		return p;
	}
	/* perf exited (or hangs): say why from its exit and stderr. */
	kill(p->pid, SIGKILL);
	st = exec_wait_bounded(p->pid, STOP_MS, NULL);
	p->pid = -1;
	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
		snprintf(p->reason, sizeof(p->reason),
		    "perf not found ('%s'); install the linux-perf package",
		    p->perf);
	else {
		char why[256];

		first_line(why, sizeof(why), p->errf);
		snprintf(p->reason, sizeof(p->reason),
		    "perf stat did not start counting: %s", why);
	}
fail:
	if (ctl[0] != -1)
		close(ctl[0]);
	if (ctl[1] != -1)
		close(ctl[1]);
	if (ack[0] != -1)
		close(ack[0]);
	if (ack[1] != -1)
		close(ack[1]);
	return p;
}

void
perfstat_result_release(struct perfstat_result *res)
{
	if (res == NULL)
		return;
	perfstat_report_release(&res->report);
}

/* The reasons of the counters perf did not count. */
static void
result_reason(struct perfstat_result *res)
{
	snprintf(res->reason, sizeof(res->reason), "%.250s%s%.250s",
	    res->ins.known ? "" : res->ins.reason,
	    !res->ins.known && !res->cyc.known ? "; " : "",
	    res->cyc.known ? "" : res->cyc.reason);
	/* One of the two may still be a count, and is reported. */
	res->counted = res->ins.known || res->cyc.known;
}

void
perfstat_stop(struct perfstat *p, struct perfstat_result *res)
{
	struct buf text = BUF_INIT(CAP_PERF_STAT);
	int st, disabled;

	memset(res, 0, sizeof(*res));
	perfstat_report_init(&res->report);
	snprintf(res->pmu, sizeof(res->pmu), "%s", p->pmu);
	if (!p->usable) {
		snprintf(res->reason, sizeof(res->reason), "%s", p->reason);
		return;
	}
	p->usable = 0;
	disabled = command(p, "disable") == 0;
	kill(p->pid, SIGINT);
	st = exec_wait_bounded(p->pid, STOP_MS, NULL);
	p->pid = -1;
	if (!disabled) {
		snprintf(res->reason, sizeof(res->reason),
		    "perf stat did not acknowledge 'disable' (see %s)",
		    p->errf);
		goto out;
	}
	if (st == -1) {
		snprintf(res->reason, sizeof(res->reason),
		    "perf stat did not stop within %d s", STOP_MS / 1000);
		goto out;
	}
	if (files_read(&text, p->out, CAP_PERF_STAT) != 0) {
		snprintf(res->reason, sizeof(res->reason), "cannot read %s: %s",
		    p->out, strerror(errno));
		goto out;
	}
	if (perfstat_parse(&res->report, text.data, text.len, 1) != 0) {
		snprintf(res->reason, sizeof(res->reason), "%s",
		    err_msg(&res->report.err));
		goto out;
	}
	perfstat_total(&res->ins, &res->report, "instructions");
	perfstat_total(&res->cyc, &res->report, "cycles");
	result_reason(res);
out:
	buf_release(&text);
}

void
perfstat_free(struct perfstat *p)
{
	if (p == NULL)
		return;
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	if (p->ctl != -1)
		close(p->ctl);
	if (p->ack != -1)
		close(p->ack);
	free(p->perf);
	free(p->dir);
	free(p->out);
	free(p->errf);
	free(p->cgroup);
	free(p->events);
	free(p);
}

/* ---- the upload ---- */

void
perfstat_apply(json_t *body, const struct perfstat_result *res,
    const struct perfstat_ops *ops, struct buf *log)
{
	struct perfstat_metric m[PERFSTAT_MAX_METRICS];
	json_t *metrics = json_object_get(body, "metrics");
	json_t *hs = json_object_get(body, "host_state");
	const char *status = json_string_value(json_object_get(body, "status"));
	int ok = status != NULL && strcmp(status, "ok") == 0;
	size_t i, n = perfstat_derive(m, &res->ins, &res->cyc, ops);

	if (json_is_object(hs))
		json_object_set_new(hs, "counters",
		    json_pack("{s:s, s:o, s:o}", "state",
		        res->counted ? "counted" : "unknown", "pmu",
		        res->pmu[0] ? json_string(res->pmu) : json_null(),
		        "reason",
		        res->reason[0] ? json_string(res->reason)
		                       : json_null()));
	if (!res->counted) {
		buf_printf(log, "counters: unknown: %s", res->reason);
		return;
	}
	if (!ok) {
		buf_printf(log, "counters: not reported (the run failed)");
		return;
	}
	for (i = 0; json_is_array(metrics) && i < n; i++)
		json_array_append_new(metrics,
		    json_pack("{s:s, s:f, s:s, s:s}", "name", m[i].name,
		        "value", m[i].value, "unit", m[i].unit, "better",
		        m[i].better));
	buf_printf(log, "counters:");
	if (res->ins.known)
		buf_printf(log, " %.0f instructions", res->ins.value);
	if (res->cyc.known)
		buf_printf(log, "%s %.0f cycles", res->ins.known ? "," : "",
		    res->cyc.value);
	if (res->ins.known && res->cyc.known && res->cyc.value > 0)
		buf_printf(log, " (IPC %.3f)", res->ins.value / res->cyc.value);
	if (ops->known) {
		if (res->ins.known)
			buf_printf(log, ", %.1f instructions/op",
			    res->ins.value / ops->ops);
		if (res->cyc.known)
			buf_printf(
			    log, ", %.1f cycles/op", res->cyc.value / ops->ops);
		buf_printf(log, " (ops: %s)", ops->how);
	} else
		buf_printf(log, "; per operation unknown: %s", ops->how);
	if (res->reason[0])
		buf_printf(log, "; %s", res->reason);
}

/* ---- the runner's calls ---- */

struct perfstat *
perfstat_begin(const char *scratch, int64_t index, const char *cgroup)
{
	char *dir = xasprintf("%s/counters-%" PRId64, scratch, index);
	struct perfstat_opts o;
	struct perfstat *p;

	files_mkdir_p(dir); /* else perf cannot write: the reason says so */
	memset(&o, 0, sizeof(o));
	o.dir = dir;
	o.cgroup = cgroup;
	p = perfstat_start(&o);
	free(dir);
	return p;
}

void
perfstat_finish(json_t *body, struct perfstat_result *res,
    const char *counters_ops, const char *parser, const struct buf *out,
    double duration_s, struct buf *log)
{
	const char *st = json_string_value(json_object_get(body, "status"));
	struct perfstat_ops ops;

	memset(&ops, 0, sizeof(ops));
	if (st != NULL && strcmp(st, "ok") == 0)
		perfstat_ops_parse(&ops, counters_ops, parser, out->data,
		    out->len, duration_s);
	perfstat_apply(body, res, &ops, log);
	perfstat_result_release(res);
}
