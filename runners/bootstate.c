/*
 * The runner's boot state file (see bootstate.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/files.h"
#include "runners/bootstate.h"
#include "runners/cgroup.h"
#include "runners/kernel.h"

#define MAGIC "perfwatch-boot-state 1"
#define STATE_MAX (64 * 1024)

/* A value that fits on one line of the file. */
static int
one_line(const char *s)
{
	return strpbrk(s, "\n\r") == NULL;
}

int
bootstate_write(const char *path, const struct bootstate *st, struct buf *why)
{
	struct buf b = BUF_INIT(STATE_MAX);
	size_t i;
	int first = 1, rc;

	if (!one_line(st->step) || !one_line(st->method) ||
	    !one_line(st->build_id) || !one_line(st->release) ||
	    !one_line(st->image) || !one_line(st->config_sha256)) {
		buf_printf(why, "%s: a value holds a line break", path);
		return -1;
	}
	buf_printf(&b,
	    MAGIC "\njob %" PRId64 "\nattempt %" PRId64
	          "\nlease_expires %" PRId64
	          "\nstep %s\nmethod %s\nround %" PRId64 "\nboot %" PRId64
	          "\nruns_done ",
	    st->job, st->attempt, st->lease_expires, st->step, st->method,
	    st->round, st->boot);
	for (i = 0; i < BOOTSTATE_RUNS_MAX; i++)
		if (st->done[i]) {
			buf_printf(&b, "%s%zu", first ? "" : ",", i);
			first = 0;
		}
	buf_printf(&b,
	    "\nbuild_id %s\nrelease %s\nimage %s\ndeadline %" PRId64 "\n",
	    st->build_id, st->release, st->image, st->deadline);
	if (st->config_sha256[0] != '\0')
		buf_printf(&b, "config_sha256 %s\n", st->config_sha256);
	if (st->cached >= 0)
		buf_printf(&b, "cached %s\n", st->cached ? "yes" : "no");
	if (st->shared_build > 0)
		buf_printf(&b, "shared_build %" PRId64 "\n", st->shared_build);
	if (buf_failed(&b)) {
		buf_printf(why, "%s: state too large", path);
		buf_release(&b);
		return -1;
	}
	rc = files_write(path, b.data, b.len);
	if (rc != 0)
		buf_printf(why, "%s: %s", path, strerror(errno));
	buf_release(&b);
	return rc;
}

static int
str_into(char *dst, size_t n, const char *v)
{
	if (strlen(v) >= n)
		return -1;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int
int_into(int64_t *dst, const char *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0')
		return -1;
	*dst = x;
	return 0;
}

static int
yes_no_into(int *dst, const char *v)
{
	if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
		return -1;
	*dst = strcmp(v, "yes") == 0;
	return 0;
}

static int
runs_into(unsigned char *done, const char *v)
{
	const char *p = v;
	char *end;
	long x;

	if (*p == '\0')
		return 0;
	for (;;) {
		errno = 0;
		x = strtol(p, &end, 10);
		if (errno != 0 || end == p || x < 0 || x >= BOOTSTATE_RUNS_MAX)
			return -1;
		done[x] = 1;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -1;
		p = end + 1;
	}
}

int
bootstate_read(struct bootstate *out, const char *path, struct buf *why)
{
	struct buf b = BUF_INIT(STATE_MAX);
	char *line, *save = NULL, *sp;
	unsigned seen = 0;
	int lineno = 0, bad = 0;

	memset(out, 0, sizeof(*out));
	out->cached = -1;
	if (files_read(&b, path, STATE_MAX) != 0) {
		int en = errno;

		buf_release(&b);
		if (en == ENOENT)
			return ERR_NOTFOUND;
		buf_printf(why, "%s: %s", path, strerror(en));
		return -1;
	}
	for (line = strtok_r(b.data, "\n", &save); line && !bad;
	     line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (lineno == 1) {
			if (strcmp(line, MAGIC) != 0)
				bad = 1;
			continue;
		}
		if ((sp = strchr(line, ' ')) == NULL) {
			bad = 1;
			break;
		}
		*sp++ = '\0';
#define F(k, bit, expr)                \
	else if (strcmp(line, k) == 0) \
	{                              \
		seen |= 1u << (bit);   \
		bad = (expr) != 0;     \
	}
		if (0) {
		}
		F("job", 0, int_into(&out->job, sp))
		F("attempt", 1, int_into(&out->attempt, sp))
		F("lease_expires", 2, int_into(&out->lease_expires, sp))
		F("step", 3, str_into(out->step, sizeof(out->step), sp))
		F("method", 4, str_into(out->method, sizeof(out->method), sp))
		F("round", 5, int_into(&out->round, sp))
		F("boot", 6, int_into(&out->boot, sp))
		F("runs_done", 7, runs_into(out->done, sp))
		F("build_id", 8,
		    str_into(out->build_id, sizeof(out->build_id), sp))
		F("release", 9,
		    str_into(out->release, sizeof(out->release), sp))
		F("image", 10, str_into(out->image, sizeof(out->image), sp))
		F("deadline", 11, int_into(&out->deadline, sp))
		/* Optional (bits 12-14): older states lack them. */
		F("config_sha256", 12,
		    str_into(
		        out->config_sha256, sizeof(out->config_sha256), sp))
		F("cached", 13, yes_no_into(&out->cached, sp))
		F("shared_build", 14, int_into(&out->shared_build, sp))
#undef F
		else bad = 1;
	}
	buf_release(&b);
	if (lineno == 0 || bad) {
		buf_printf(why, "%s:%d: corrupt boot state (not resumed)", path,
		    lineno ? lineno : 1);
		return -1;
	}
	if ((seen & 0xfffu) != 0xfffu) {
		buf_printf(
		    why, "%s: incomplete boot state (not resumed)", path);
		return -1;
	}
	if (out->job <= 0 || out->build_id[0] == '\0') {
		buf_printf(why, "%s: boot state without job or build id", path);
		return -1;
	}
	return 0;
}

enum bootstate_decision
bootstate_decide(const struct bootstate *st, int64_t job,
    const char *proc_version, int64_t now, struct buf *why)
{
	if (job != st->job) {
		buf_printf(why,
		    "boot state of job %" PRId64 " is stale: the daemon gave "
		    "job %" PRId64 " (the old one was requeued or cancelled)",
		    st->job, job);
		return BOOT_OTHER_JOB;
	}
	if (st->deadline > 0 && now > st->deadline) {
		buf_printf(why,
		    "job %" PRId64 ": the host came back %" PRId64 " s after "
		    "its boot deadline",
		    st->job, now - st->deadline);
		return BOOT_TOO_LATE;
	}
	if (kernel_version_check(proc_version, st->build_id, why) != 0)
		return BOOT_WRONG_KERNEL;
	return BOOT_RESUME;
}
