#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "runners/telemetry.h"

#define TM_FILE_MAX (256 * 1024)
#define TM_KEYS_MAX 512 /* a memory.stat has about 80 */

struct telemetry {
	struct telemetry_src src;
	char *memdir, *v2dir, *psi_proc;
	struct telemetry_snap before;
	int peak_fd; /* v2 memory.peak kept open across the run */
	int peak_reset;
	int psi_system; /* -1 none, 0 cgroup, 1 system */
};

void
telemetry_snap_release(struct telemetry_snap *s)
{
	if (s == NULL)
		return;
	free(s->kv);
	s->kv = NULL;
	s->n = 0;
}

void
telemetry_snap_put(struct telemetry_snap *s, const char *key, int64_t v)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->kv[i].key, key) == 0) {
			s->kv[i].value = v;
			return;
		}
	if (s->n >= TM_KEYS_MAX || strlen(key) >= TELEMETRY_KEY_MAX)
		return;
	s->kv = xreallocarray(s->kv, s->n + 1, sizeof(*s->kv));
	snprintf(s->kv[s->n].key, TELEMETRY_KEY_MAX, "%s", key);
	s->kv[s->n].value = v;
	s->n++;
}

int
telemetry_snap_get(
    int64_t *out, const struct telemetry_snap *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->kv[i].key, key) == 0) {
			*out = s->kv[i].value;
			return 0;
		}
	return -1;
}

int
telemetry_parse_flat(
    struct telemetry_snap *s, const char *prefix, const char *text)
{
	const char *p = text;
	int added = 0;

	while (*p) {
		const char *eol = strchr(p, '\n'), *sp;
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char key[TELEMETRY_KEY_MAX], num[32];
		size_t kl, nl, i;
		int ok = 1;

		sp = memchr(p, ' ', len);
		if (sp && (kl = (size_t)(sp - p)) > 0 &&
		    strlen(prefix) + kl < sizeof(key) &&
		    (nl = len - kl - 1) > 0 && nl < sizeof(num)) {
			for (i = 0; i < kl; i++)
				ok &= isalnum((unsigned char)p[i]) ||
				    p[i] == '_' || p[i] == '.';
			memcpy(num, sp + 1, nl);
			num[nl] = '\0';
			for (i = 0; i < nl; i++)
				ok &= isdigit((unsigned char)num[i]) ||
				    (i == 0 && num[i] == '-');
			if (ok) {
				char *end;
				long long v;

				errno = 0;
				v = strtoll(num, &end, 10);
				if (errno == 0 && *end == '\0' && end != num) {
					snprintf(key, sizeof(key), "%s%.*s",
					    prefix, (int)kl, p);
					telemetry_snap_put(s, key, v);
					added++;
				}
			}
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	return added;
}

int
telemetry_parse_psi(struct telemetry_snap *s, const char *text)
{
	const char *which[2] = { "some", "full" };
	int i, found = 0;

	for (i = 0; i < 2; i++) {
		const char *line = text, *t;

		while (line && strncmp(line, which[i], 4) != 0) {
			line = strchr(line, '\n');
			line = line ? line + 1 : NULL;
		}
		if (line == NULL)
			continue;
		t = strstr(line, "total=");
		if (t &&
		    (strchr(line, '\n') == NULL || t < strchr(line, '\n'))) {
			char key[16], *end;
			long long v = strtoll(t + 6, &end, 10);

			if (end != t + 6) {
				snprintf(key, sizeof(key), "psi.%s", which[i]);
				telemetry_snap_put(s, key, v);
				found++;
			}
		}
	}
	return found;
}

struct field {
	const char *name;    /* memcg.<name>_delta */
	const char *v2, *v1; /* snapshot keys, NULL = not exposed */
	const char *unit;
};

static const struct field fields[] = {
	{ "sock", "stat.sock", "tcp", "B" },
	{ "kernel", "stat.kernel", "kmem", "B" },
	{ "kernel_stack", "stat.kernel_stack", NULL, "B" },
	{ "slab", "stat.slab", NULL, "B" },
	{ "percpu", "stat.percpu", NULL, "B" },
	{ "anon", "stat.anon", "stat.total_rss", "B" },
	{ "file", "stat.file", "stat.total_cache", "B" },
	{ "pgfault", "stat.pgfault", "stat.total_pgfault", "" },
	{ "pgmajfault", "stat.pgmajfault", "stat.total_pgmajfault", "" },
	{ "pgscan", "stat.pgscan", NULL, "" },
	{ "pgsteal", "stat.pgsteal", NULL, "" },
	{ "pgpgin", NULL, "stat.total_pgpgin", "" },
	{ "pgpgout", NULL, "stat.total_pgpgout", "" },
	{ "workingset_refault_anon", "stat.workingset_refault_anon",
	    "stat.total_workingset_refault_anon", "" },
	{ "workingset_refault_file", "stat.workingset_refault_file",
	    "stat.total_workingset_refault_file", "" },
	{ "usage", "usage", "usage", "B" },
	{ "failcnt", NULL, "failcnt", "" },
};

int
telemetry_diff(const struct telemetry_snap *b, const struct telemetry_snap *a,
    enum cgroup_kind kind, int psi_system, int sockacct, telemetry_emit_fn emit,
    void *arg)
{
	char name[CAP_NAME];
	int64_t x, y;
	size_t i;
	int n = 0;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *key =
		    kind == CGROUP_V2 ? fields[i].v2 : fields[i].v1;

		if (key == NULL)
			continue;
		if (kind != CGROUP_V2 && strcmp(fields[i].name, "sock") == 0 &&
		    !sockacct)
			continue;
		if (telemetry_snap_get(&x, b, key) ||
		    telemetry_snap_get(&y, a, key))
			continue;
		snprintf(name, sizeof(name), "memcg.%s_delta", fields[i].name);
		emit(name, (double)(y - x), fields[i].unit, arg);
		n++;
	}
	for (i = 0; i < a->n; i++) {
		if (strncmp(a->kv[i].key, "events.", 7) != 0 ||
		    telemetry_snap_get(&x, b, a->kv[i].key))
			continue;
		snprintf(name, sizeof(name), "memcg.%s", a->kv[i].key);
		emit(name, (double)(a->kv[i].value - x), "", arg);
		n++;
	}
	if (telemetry_snap_get(&y, a, "peak") == 0) {
		emit("memcg.peak_bytes", (double)y, "B", arg);
		n++;
	} else if (telemetry_snap_get(&y, a, "peak_since_creation") == 0) {
		emit("memcg.peak_bytes_since_creation", (double)y, "B", arg);
		n++;
	}
	for (i = 0; i < 2; i++) {
		const char *k = i ? "psi.full" : "psi.some";

		if (telemetry_snap_get(&x, b, k) ||
		    telemetry_snap_get(&y, a, k))
			continue;
		snprintf(name, sizeof(name), "%s.%s_us_delta",
		    psi_system ? "system.psi_memory" : "memcg.psi",
		    i ? "full" : "some");
		emit(name, (double)(y - x), "us", arg);
		n++;
	}
	return n;
}

struct telemetry *
telemetry_new(const struct telemetry_src *src)
{
	struct telemetry *t = xcalloc(1, sizeof(*t));

	t->src = *src;
	t->memdir = xstrdup(src->memdir);
	t->v2dir = xstrdup(src->v2dir);
	t->psi_proc =
	    xstrdup(src->psi_proc ? src->psi_proc : "/proc/pressure/memory");
	t->peak_fd = -1;
	t->psi_system = -1;
	return t;
}

void
telemetry_free(struct telemetry *t)
{
	if (t == NULL)
		return;
	if (t->peak_fd != -1)
		close(t->peak_fd);
	telemetry_snap_release(&t->before);
	free(t->memdir);
	free(t->v2dir);
	free(t->psi_proc);
	free(t);
}

const char *
telemetry_psi_scope(const struct telemetry *t)
{
	return t->psi_system < 0 ? "none" : t->psi_system ? "system" : "cgroup";
}

/* Reads dir/file into the snapshot with parse; absent files are skipped. */
static int
read_into(struct telemetry_snap *s, struct buf *b, const char *dir,
    const char *file, const char *prefix)
{
	char *path = xasprintf("%s/%s", dir, file);
	int rc = files_read(b, path, TM_FILE_MAX);

	free(path);
	if (rc)
		return -1;
	if (prefix)
		return telemetry_parse_flat(s, prefix, b->data) > 0 ? 0 : -1;
	return 0;
}

/* A file holding one integer, stored under key. */
static void
read_one(struct telemetry_snap *s, struct buf *b, const char *dir,
    const char *file, const char *key)
{
	char *end;
	long long v;

	if (read_into(s, b, dir, file, NULL))
		return;
	errno = 0;
	v = strtoll(b->data, &end, 10);
	if (errno == 0 && end != b->data && (*end == '\n' || *end == '\0'))
		telemetry_snap_put(s, key, v);
}

static int
snapshot(
    struct telemetry *t, struct telemetry_snap *s, int after, struct err *e)
{
	struct buf b = BUF_INIT(TM_FILE_MAX);
	int v2 = t->src.kind == CGROUP_V2;

	if (read_into(s, &b, t->memdir, "memory.stat", "stat.")) {
		buf_release(&b);
		return err_set(e, "telemetry: cannot read %s/memory.stat: %s",
		    t->memdir, strerror(errno));
	}
	if (v2) {
		read_into(s, &b, t->memdir, "memory.events", "events.");
		read_one(s, &b, t->memdir, "memory.current", "usage");
	} else {
		struct telemetry_snap oc = { 0 };
		int64_t v;

		read_one(s, &b, t->memdir, "memory.failcnt", "failcnt");
		read_one(s, &b, t->memdir, "memory.usage_in_bytes", "usage");
		read_one(
		    s, &b, t->memdir, "memory.kmem.usage_in_bytes", "kmem");
		read_one(
		    s, &b, t->memdir, "memory.kmem.tcp.usage_in_bytes", "tcp");
		if (read_into(&oc, &b, t->memdir, "memory.oom_control", "") ==
		        0 &&
		    telemetry_snap_get(&v, &oc, "oom_kill") == 0)
			telemetry_snap_put(s, "events.oom_kill", v);
		telemetry_snap_release(&oc);
	}
	if (after) {
		if (v2 && t->peak_fd != -1) {
			char tmp[32];
			ssize_t n = pread(t->peak_fd, tmp, sizeof(tmp) - 1, 0);

			if (n > 0) {
				tmp[n] = '\0';
				telemetry_snap_put(s,
				    t->peak_reset ? "peak"
				                  : "peak_since_creation",
				    strtoll(tmp, NULL, 10));
			}
		} else if (!v2) {
			int64_t v;
			struct telemetry_snap one = { 0 };

			read_one(&one, &b, t->memdir,
			    "memory.max_usage_in_bytes", "p");
			if (telemetry_snap_get(&v, &one, "p") == 0)
				telemetry_snap_put(s,
				    t->peak_reset ? "peak"
				                  : "peak_since_creation",
				    v);
			telemetry_snap_release(&one);
		}
	}
	/*
	 * PSI: the benchmark's cgroup2 directory, else system-wide; the
	 * source is chosen before the run and kept for the snapshot after.
	 */
	if (!after) {
		t->psi_system = -1;
		if (t->v2dir &&
		    read_into(s, &b, t->v2dir, "memory.pressure", NULL) == 0 &&
		    telemetry_parse_psi(s, b.data) > 0)
			t->psi_system = 0;
		else if (files_read(&b, t->psi_proc, TM_FILE_MAX) == 0 &&
		    telemetry_parse_psi(s, b.data) > 0)
			t->psi_system = 1;
	} else if (t->psi_system == 0) {
		if (read_into(s, &b, t->v2dir, "memory.pressure", NULL) == 0)
			telemetry_parse_psi(s, b.data);
	} else if (t->psi_system == 1) {
		if (files_read(&b, t->psi_proc, TM_FILE_MAX) == 0)
			telemetry_parse_psi(s, b.data);
	}
	buf_release(&b);
	return 0;
}

int
telemetry_begin(struct telemetry *t, struct err *e)
{
	char *path;

	telemetry_snap_release(&t->before);
	if (t->peak_fd != -1)
		close(t->peak_fd);
	t->peak_fd = -1;
	t->peak_reset = 0;
	if (t->src.kind == CGROUP_V2) {
		path = xasprintf("%s/memory.peak", t->memdir);
		t->peak_fd = open(path, O_RDWR | O_CLOEXEC);
		if (t->peak_fd == -1)
			t->peak_fd = open(path, O_RDONLY | O_CLOEXEC);
		else
			t->peak_reset = write(t->peak_fd, "reset", 5) == 5;
		free(path);
	} else {
		path = xasprintf("%s/memory.max_usage_in_bytes", t->memdir);
		t->peak_reset = cgroup_write_file(path, "0") == 0;
		free(path);
	}
	return snapshot(t, &t->before, 0, e);
}

int
telemetry_end(
    struct telemetry *t, telemetry_emit_fn emit, void *arg, struct err *e)
{
	struct telemetry_snap after = { 0 };
	int n;

	if (snapshot(t, &after, 1, e)) {
		telemetry_snap_release(&after);
		return -1;
	}
	n = telemetry_diff(&t->before, &after, t->src.kind, t->psi_system == 1,
	    t->src.sockacct, emit, arg);
	telemetry_snap_release(&after);
	return n;
}
