/*
 * The cgroups the machine offers (runners/cgroup.h): the hierarchy found
 * in /proc/self/mountinfo and /proc/self/cgroup (cgroup_detect), the
 * check that the runner may manage its subtree, and struct cgroup_sys.
 * A benchmark's placement in them is cgroup.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/files.h"
#include "common/xalloc.h"
#include "runners/cgroup.h"
#include "runners/cgroup_int.h"

const char *
cgroup_kind_name(enum cgroup_kind k)
{
	switch (k) {
	case CGROUP_V1:
		return "v1";
	case CGROUP_V2:
		return "v2";
	default:
		return "none";
	}
}

void
cgroup_sys_release(struct cgroup_sys *s)
{
	if (s == NULL)
		return;
	free(s->mount);
	free(s->base);
	free(s->v2_mount);
	free(s->v2_base);
	free(s->pids_mount);
	free(s->pids_base);
	memset(s, 0, sizeof(*s));
}

void
cgroup_sys_set(struct cgroup_sys *s, enum cgroup_kind kind, const char *mount,
    const char *base, const char *v2_mount, const char *v2_base)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->mount = xstrdup(mount);
	s->base = xstrdup(base ? base : "/");
	s->v2_mount = xstrdup(v2_mount);
	s->v2_base = v2_mount ? xstrdup(v2_base ? v2_base : "/") : NULL;
	if (kind == CGROUP_NONE)
		snprintf(s->reason, sizeof(s->reason), "cgroups disabled");
}

/* 1 when the comma-separated list has the word. */
static int
has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t l = end ? (size_t)(end - p) : strlen(p);

		if (l == wl && strncmp(p, word, wl) == 0)
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *
unescape(const char *s)
{
	char *out = xmalloc(strlen(s) + 1), *o = out;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
			    (s[3] - '0'));
			s += 4;
		} else
			*o++ = *s++;
	}
	*o = '\0';
	return out;
}

/*
 * The runner's cgroup as seen through a mount whose root is mroot: a
 * bind-mounted sub-tree shows paths relative to it.
 */
static char *
rel_to_mount(const char *path, const char *mroot)
{
	size_t l = strlen(mroot);

	if (strcmp(mroot, "/") == 0)
		return xstrdup(path);
	if (strncmp(path, mroot, l) == 0 && (path[l] == '/' || !path[l]))
		return xstrdup(path[l] ? path + l : "/");
	return xstrdup(path);
}

int
cgroup_detect(struct cgroup_sys *s)
{
	struct buf mi = BUF_INIT(CG_FILE_MAX), pc = BUF_INIT(CG_FILE_MAX);
	char *v1m = NULL, *v1root = NULL, *v2m = NULL, *v2root = NULL;
	char *v1path = NULL, *v2path = NULL, *line, *save = NULL;
	char *pm = NULL, *proot = NULL, *ppath = NULL;

	memset(s, 0, sizeof(*s));
	s->kind = CGROUP_NONE;
	if (files_read(&mi, "/proc/self/mountinfo", CG_FILE_MAX) ||
	    files_read(&pc, "/proc/self/cgroup", CG_FILE_MAX)) {
		snprintf(s->reason, sizeof(s->reason),
		    "cannot read /proc/self/mountinfo or /proc/self/cgroup: %s",
		    strerror(errno));
		goto out;
	}
	for (line = strtok_r(mi.data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[12], *p = line, *sep, *tok, *s2 = NULL;
		int n = 0;

		/* id parent maj:min root mountpoint opts ... - type src sopts
		 */
		if ((sep = strstr(line, " - ")) == NULL)
			continue;
		*sep = '\0';
		for (tok = strtok_r(p, " ", &s2); tok && n < 5;
		     tok = strtok_r(NULL, " ", &s2))
			f[n++] = tok;
		if (n < 5)
			continue;
		s2 = NULL;
		f[5] = strtok_r(sep + 3, " ", &s2);
		f[6] = strtok_r(NULL, " ", &s2);
		f[7] = strtok_r(NULL, " ", &s2);
		if (f[5] == NULL)
			continue;
		if (strcmp(f[5], "cgroup2") == 0 && v2m == NULL) {
			v2m = unescape(f[4]);
			v2root = unescape(f[3]);
		} else if (strcmp(f[5], "cgroup") == 0 && f[7] &&
		    has_word(f[7], "memory") && v1m == NULL) {
			v1m = unescape(f[4]);
			v1root = unescape(f[3]);
		} else if (strcmp(f[5], "cgroup") == 0 && f[7] &&
		    has_word(f[7], "pids") && pm == NULL) {
			pm = unescape(f[4]);
			proot = unescape(f[3]);
		}
	}
	save = NULL;
	for (line = strtok_r(pc.data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2;

		if (c1 == NULL || (c2 = strchr(c1 + 1, ':')) == NULL)
			continue;
		*c2 = '\0';
		if (strcmp(line, "0:") == 0 && c1[1] == '\0')
			v2path = xstrdup(c2 + 1);
		else if (has_word(c1 + 1, "memory"))
			v1path = xstrdup(c2 + 1);
		else if (has_word(c1 + 1, "pids") && ppath == NULL)
			ppath = xstrdup(c2 + 1);
	}
	if (v2m && v2path) {
		char *base = rel_to_mount(v2path, v2root);
		char *dir = cgroup_join(v2m, base);
		char *ctl = xasprintf("%s/cgroup.controllers", dir);
		struct buf c = BUF_INIT(4096);
		char *w, *s3 = NULL;
		int mem = 0, pids = 0;

		if (files_read(&c, ctl, 4096) == 0)
			for (w = strtok_r(c.data, " \n", &s3); w;
			     w = strtok_r(NULL, " \n", &s3)) {
				mem |= strcmp(w, "memory") == 0;
				pids |= strcmp(w, "pids") == 0;
			}
		if (mem && access(dir, W_OK) == 0) {
			s->kind = CGROUP_V2;
			s->mount = xstrdup(v2m);
			s->base = xstrdup(base);
			s->v2_pids = pids;
		} else if (mem) {
			s->denied = 1;
			snprintf(s->reason, sizeof(s->reason),
			    "cgroup2: %s is not writable: %s", dir,
			    strerror(errno));
		}
		s->v2_mount = xstrdup(v2m);
		s->v2_base = xstrdup(base);
		if (access(dir, W_OK) != 0) {
			/* No companion we cannot write into. */
			free(s->v2_mount);
			free(s->v2_base);
			s->v2_mount = s->v2_base = NULL;
		}
		buf_release(&c);
		free(ctl);
		free(dir);
		free(base);
	}
	if (s->kind == CGROUP_NONE && v1m && v1path) {
		char *base = rel_to_mount(v1path, v1root);
		char *dir = cgroup_join(v1m, base);

		if (access(dir, W_OK) == 0) {
			s->kind = CGROUP_V1;
			s->mount = xstrdup(v1m);
			s->base = xstrdup(base);
			s->denied = 0;
			s->reason[0] = '\0';
		} else {
			snprintf(s->reason, sizeof(s->reason),
			    "cgroup v1 memory hierarchy: %s is not writable: "
			    "%s",
			    dir, strerror(errno));
			s->denied = 1;
		}
		free(dir);
		free(base);
	}
	if (s->kind == CGROUP_V1 && pm && ppath) {
		char *base = rel_to_mount(ppath, proot);
		char *dir = cgroup_join(pm, base);

		/* Not writable: limits.pids stays unenforced, as on a host
		 * without the controller (the runner's start says so). */
		if (access(dir, W_OK) == 0) {
			s->pids_mount = xstrdup(pm);
			s->pids_base = xstrdup(base);
		}
		free(dir);
		free(base);
	}
	if (s->kind == CGROUP_NONE && s->reason[0] == '\0')
		snprintf(s->reason, sizeof(s->reason), "%s",
		    v2m ? "cgroup2 is mounted but its memory controller is "
		          "not available to the runner's cgroup, and there "
		          "is no cgroup v1 memory hierarchy"
		        : "no cgroup2 mount and no cgroup v1 memory hierarchy "
		          "in /proc/self/mountinfo");
	if (s->kind == CGROUP_NONE) {
		free(s->v2_mount);
		free(s->v2_base);
		s->v2_mount = s->v2_base = NULL;
	}
out:
	free(pm);
	free(proot);
	free(ppath);
	free(v1m);
	free(v1root);
	free(v2m);
	free(v2root);
	free(v1path);
	free(v2path);
	buf_release(&mi);
	buf_release(&pc);
	return 0;
}

/* Makes dir/perfwatch-check-PID, writes one of its files, removes it. */
static int
check_one(const char *mount, const char *base, const char *file,
    const char *value, struct err *e)
{
	char *top = cgroup_join(mount, base);
	char *dir = xasprintf("%s/perfwatch-check-%d", top, (int)getpid());
	char *path = xasprintf("%s/%s", dir, file);
	int rc = 0;

	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		rc = err_set(e,
		    "cgroup: cannot create %s: %s (the runner's cgroup %s "
		    "must be its to manage: run it as root with systemd "
		    "Delegate=yes, or set PERFWATCH_NO_CGROUPS=1)",
		    dir, strerror(errno), top);
	else {
		if (cgroup_write_file(path, value) == -1)
			rc = err_set(e,
			    "cgroup: cannot write %s: %s (the runner's "
			    "cgroup %s must be its to manage: systemd "
			    "Delegate=yes)",
			    path, strerror(errno), top);
		if (rmdir(dir) == -1 && rc == 0)
			rc = err_set(e, "cgroup: cannot remove %s: %s", dir,
			    strerror(errno));
	}
	free(path);
	free(dir);
	free(top);
	return rc;
}

int
cgroup_check_subtree(const struct cgroup_sys *s, struct err *e)
{
	if (s->kind == CGROUP_NONE && s->denied && geteuid() == 0)
		return err_set(e,
		    "cgroup: %s (a runner run as root must be able to manage "
		    "its cgroup: systemd Delegate=yes, a writable cgroupfs; "
		    "or set PERFWATCH_NO_CGROUPS=1)",
		    s->reason);
	if (s->kind == CGROUP_NONE)
		return 0;
	if (check_one(s->mount, s->base,
	        s->kind == CGROUP_V2 ? "cgroup.max.descendants"
	                             : "memory.limit_in_bytes",
	        s->kind == CGROUP_V2 ? "max" : "-1", e))
		return -1;
	if (s->kind == CGROUP_V1 && s->v2_mount != NULL &&
	    check_one(
	        s->v2_mount, s->v2_base, "cgroup.max.descendants", "max", e))
		return -1;
	if (s->kind == CGROUP_V1 && s->pids_mount != NULL &&
	    check_one(s->pids_mount, s->pids_base, "pids.max", "max", e))
		return -1;
	return 0;
}
