#ifndef RUNNERS_CGROUP_INT_H
#define RUNNERS_CGROUP_INT_H

/*
 * What the cgroup files share: cgroup_detect.c finds the hierarchy,
 * cgroup.c places a benchmark in it.
 */

#define CG_FILE_MAX (256 * 1024) /* cgroup.procs, mountinfo, memory.stat */

/* "/sys/fs/cgroup" + "/a/b" (base "/" adds nothing): malloc'd. */
char *cgroup_join(const char *mount, const char *path);

#endif
