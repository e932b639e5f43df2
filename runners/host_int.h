#ifndef RUNNERS_HOST_INT_H
#define RUNNERS_HOST_INT_H

/*
 * What the files of the host layer share (host.c, host_check.c,
 * host_tune.c): sysfs and procfs reads and writes under a root, and the
 * tuning profile.
 */
#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/err.h"
#include "config/config.h"

#define SYSCPU "/sys/devices/system/cpu"
#define THP "/sys/kernel/mm/transparent_hugepage"
#define NO_TURBO SYSCPU "/intel_pstate/no_turbo"
#define BOOST SYSCPU "/cpufreq/boost"
#define VAL_MAX 8192  /* one sysfs/procfs value we read */
#define CPUS_MAX 4096 /* CPU directories looked at */
#define IRQS_MAX 8192

/* The profile: cfg's host: section, or its defaults. */
struct prof {
	const char *governor; /* NULL: keep */
	enum cfg_turbo turbo;
	enum cfg_thp thp, defrag;
	int smt_off, stop_irqbalance;
	const char *irq_cpus;
};

int host_i_exists(const char *root, const char *path);
/* An available governor list holds want ("performance powersave"). */
int host_i_has_word(const char *list, const char *want);
/* The pid of a running irqbalance under root's /proc, or 0. */
long host_i_irqbalance_pid(const char *root);
int host_i_need_root(const char *root, const char *what, struct err *e);
/* Numbers n of the entries PREFIXn in dir, sorted; count returned. */
size_t host_i_numbered(long *out, size_t max, const char *root, const char *dir,
    const char *prefix);
void host_i_prof_of(struct prof *p, const struct runner_config *cfg);
/* Whole file (at most len-1 bytes) into out; bytes read, or -1. */
ssize_t host_i_rd(char *out, size_t len, const char *root, const char *path);
/* host_i_rd() and host_i_trim(): the value, or NULL when the file cannot be
 * read. */
char *host_i_rdv(char *out, size_t len, const char *root, const char *path);
/*
 * The selected word of a sysfs choice file ("always [madvise] never" ->
 * "madvise"), or the trimmed text when it has no brackets.
 */
void host_i_selected(char *out, size_t len, const char *text);
char *host_i_trim(char *s);
/* Writes val (as one write(2), as sysfs wants it). 0 or -1 (e set). */
int host_i_wr(
    const char *root, const char *path, const char *val, struct err *e);

#endif
