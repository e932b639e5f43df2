/*
 * Benchmark hygiene, tune and reset: the writes `perfwatch-runner host
 * tune` plans from the profile, the state file that `host reset` puts
 * back, and irqbalance stopped and started (see host.h and docs/HOST.md).
 */
#define _GNU_SOURCE /* POSIX_SPAWN_SETSID */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "runners/exec.h"
#include "runners/host.h"
#include "runners/host_int.h"

extern char **environ;

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

	if (host_i_rd(v, sizeof(v), root, path) < 0)
		return;
	if (choice)
		host_i_selected(cur, sizeof(cur), v);
	else
		snprintf(cur, sizeof(cur), "%s", host_i_trim(v));
	if (strcmp(cur, want) == 0) {
		buf_printf(p->log, "%s: already %s\n", path, want);
		return;
	}
	host_i_rd(v, sizeof(v), root, path);
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
int
host_i_has_word(const char *list, const char *want)
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
	size_t n = host_i_numbered(cpus, CPUS_MAX, root, SYSCPU, "cpu"), i;
	char path[256], v[VAL_MAX];
	long *irqs;

	for (i = 0; pr->governor != NULL && i < n; i++) {
		snprintf(path, sizeof(path),
		    SYSCPU "/cpu%ld/cpufreq/scaling_available_governors",
		    cpus[i]);
		if (host_i_rd(v, sizeof(v), root, path) >= 0 &&
		    !host_i_has_word(v, pr->governor)) {
			buf_printf(p->log,
			    "cpu%ld: governor %s not available "
			    "(%s); left alone\n",
			    cpus[i], pr->governor, host_i_trim(v));
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
	n = host_i_numbered(irqs, IRQS_MAX, root, "/proc/irq", "");
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
	          r.err.len ? host_i_trim(r.err.data) : "failed");
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
	long pid = host_i_irqbalance_pid(root);
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
	n = host_i_rd(args, sizeof(args), "", path);
	argv = json_array();
	for (i = start = 0; i < n; i++)
		if (args[i] == '\0') {
			json_array_append_new(argv, json_string(args + start));
			start = i + 1;
		}
	o = json_pack("{s:s, s:o, s:b}", "exe", exe, "argv", argv, "systemd",
	    host_i_exists("", "/run/systemd/system"));
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
	for (k = 0; k < 100 && host_i_irqbalance_pid("") == pid; k++)
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

	if (host_i_need_root(root, "host tune", e) != 0)
		return -1;
	if (access(state_file, F_OK) == 0)
		return err_set(e,
		    "%s exists: the host is tuned already (host reset first)",
		    state_file);
	host_i_prof_of(&pr, cfg);
	plan_profile(&p, root, &pr);
	/* Saved before anything changes: a crash mid-way can be reset. */
	if (state_write(state_file, &p, NULL, NULL, e) != 0) {
		plan_release(&p);
		return -1;
	}
	ok = xcalloc(p.n + 1, 1);
	for (i = 0; i < p.n; i++) {
		err_clear(&we);
		if (host_i_wr(root, p.v[i].path, p.v[i].want, &we) == 0) {
			ok[i] = 1;
			changed++;
			host_i_selected(prev, sizeof(prev), p.v[i].saved);
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

	if (host_i_need_root(root, "host reset", e) != 0)
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
		if (host_i_rd(cur, sizeof(cur), root, path) >= 0 &&
		    strcmp(cur, saved) == 0)
			continue; /* never changed (or a crash before) */
		/* A choice file takes the selected word back. */
		host_i_selected(want, sizeof(want), saved);
		err_clear(&le);
		if (host_i_wr(root, path, want, &le) != 0) {
			bad++;
			buf_printf(log, "%s\n", err_msg(&le));
			continue;
		}
		if (host_i_rd(cur, sizeof(cur), root, path) < 0 ||
		    strcmp(cur, saved) != 0) {
			bad++;
			buf_printf(log, "%s: reads back \"%s\", saved \"%s\"\n",
			    path, host_i_trim(cur), want);
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
