/*
 * perfwatch-guest: /init of the initramfs the runner boots with boot: qemu
 * (runners/qemu.h has the console protocol).  A static executable built
 * from the runner's own cgroup, telemetry and exec modules, so the guest
 * exercises the real cgroup v2 placement and telemetry code on a kernel
 * whose v2 memory controller works.
 *
 * It mounts proc, sys, devtmpfs and cgroup2, brings up lo, reads /pw/job
 * ("cgroup /a/b", "memory_max N", "memory_high N", "timeout_ms N",
 * "server 1", "run INDEX" lines; argv vectors NUL-separated in /pw/server
 * and /pw/run-INDEX), places the benchmark, runs each run and prints the
 * results, then reboots (qemu runs with -no-reboot, so that ends it).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "runners/cgroup.h"
#include "runners/exec.h"
#include "runners/telemetry.h"

#define OUT_MAX (1u << 20)
#define CHUNK 256 /* bytes per out/err line (512 hex digits) */
#define MAX_RUNS 1000

static void
hexline(const char *kind, const char *idx, const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char line[CHUNK * 2 + 1];
	size_t off, i, k;

	for (off = 0; off < n; off += CHUNK) {
		k = n - off > CHUNK ? CHUNK : n - off;
		for (i = 0; i < k; i++) {
			line[2 * i] = hex[(unsigned char)p[off + i] >> 4];
			line[2 * i + 1] = hex[(unsigned char)p[off + i] & 15];
		}
		line[2 * k] = '\0';
		printf("PWG1 %s%s%s %s\n", kind, idx[0] ? " " : "", idx, line);
	}
	if (n == 0 && idx[0] == '\0')
		printf("PWG1 %s \n", kind);
	fflush(stdout);
}

static void fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void finish(void) __attribute__((noreturn));

static void
finish(void)
{
	printf("PWG1 done\n");
	fflush(stdout);
	sync();
	reboot(RB_AUTOBOOT);
	_exit(0);
}

static void
fail(const char *fmt, ...)
{
	struct buf b = BUF_INIT(4096);
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	hexline("error", "", b.data, b.len);
	finish();
}

/* A NUL-separated argv file as a NULL-terminated vector. */
static char **
read_argv(const char *path)
{
	struct buf b = BUF_INIT(OUT_MAX);
	char **v = NULL;
	size_t n = 0, i = 0;

	if (files_read(&b, path, OUT_MAX) != 0)
		fail("%s: %s", path, strerror(errno));
	while (i < b.len) {
		v = xreallocarray(v, n + 2, sizeof(char *));
		v[n++] = xstrdup(b.data + i);
		i += strlen(b.data + i) + 1;
	}
	if (n == 0)
		fail("%s: empty argv", path);
	v[n] = NULL;
	buf_release(&b);
	return v;
}

static void
lo_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0)
		return; /* no CONFIG_INET: a benchmark without network */
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
}

struct emit {
	int64_t index;
};

static void
emit_metric(const char *name, double value, const char *unit, void *arg)
{
	struct emit *em = arg;

	printf("PWG1 metric %" PRId64 " %s %.17g %s\n", em->index, name, value,
	    unit && unit[0] ? unit : "-");
}

static void
mounts(void)
{
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/dev", 0755);
	mkdir("/tmp", 01777);
	if (mount("proc", "/proc", "proc", 0, NULL) != 0)
		fail("mount /proc: %s", strerror(errno));
	if (mount("sysfs", "/sys", "sysfs", 0, NULL) != 0)
		fail("mount /sys: %s", strerror(errno));
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL); /* may be there */
	mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
	if (mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL) != 0)
		fail("mount cgroup2 on /sys/fs/cgroup: %s", strerror(errno));
	/* The placement code enables +memory level by level; the root
	 * first, so that a failure here names the kernel's lack. */
	if (cgroup_write_file(
	        "/sys/fs/cgroup/cgroup.subtree_control", "+memory") != 0)
		fail("+memory in /sys/fs/cgroup/cgroup.subtree_control: %s "
		     "(kernel without CONFIG_MEMCG?)",
		    strerror(errno));
}

int
main(void)
{
	struct buf job = BUF_INIT(1u << 16), ver = BUF_INIT(1024);
	struct cgroup_spec spec = { "root", 0, 0 };
	struct cgroup_sys cgs;
	struct cgroup *cg = NULL;
	struct telemetry_src src;
	struct telemetry *tm;
	struct exec_proc *server = NULL;
	struct err e = { 0 };
	int64_t runs[MAX_RUNS], timeout_ms = 600000;
	size_t nruns = 0, i;
	char *line, *save = NULL, cgpath[256] = "root";
	int fds[CGROUP_MAX_FDS], nfds = 0, want_server = 0;
	long long v;

	setenv("PATH", "/bin", 1);
	setenv("HOME", "/tmp", 1);
	mounts();
	lo_up();
	if (files_read(&ver, "/proc/version", 1000) == 0) {
		while (ver.len && ver.data[ver.len - 1] == '\n')
			ver.data[--ver.len] = '\0';
		hexline("version", "", ver.data, ver.len);
	}
	if (files_read(&job, "/pw/job", 1u << 16) != 0)
		fail("/pw/job: %s", strerror(errno));
	for (line = strtok_r(job.data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "cgroup %255s", cgpath) == 1)
			continue;
		if (sscanf(line, "memory_max %lld", &v) == 1)
			spec.memory_max = v;
		else if (sscanf(line, "memory_high %lld", &v) == 1)
			spec.memory_high = v;
		else if (sscanf(line, "timeout_ms %lld", &v) == 1)
			timeout_ms = v;
		else if (sscanf(line, "server %lld", &v) == 1)
			want_server = v != 0;
		else if (sscanf(line, "run %lld", &v) == 1 && nruns < MAX_RUNS)
			runs[nruns++] = v;
		else
			fail("/pw/job: bad line \"%.80s\"", line);
	}
	spec.path = cgpath;
	cgroup_detect(&cgs);
	if (cgs.kind != CGROUP_V2)
		fail("cgroup v2 with memory not usable in the guest: %s",
		    cgs.reason);
	if (cgroup_place(&cg, &cgs, &spec, &e) != 0 ||
	    (nfds = cgroup_procs_fds(cg, fds, &e)) < 0)
		fail("cgroup %s: %s", cgpath, err_msg(&e));
	memset(&src, 0, sizeof(src));
	src.kind = cgroup_kind(cg);
	src.memdir = cgroup_dir(cg);
	src.v2dir = cgroup_v2_dir(cg);
	src.sockacct = cgroup_socket_accounting(cg);
	tm = telemetry_new(&src);
	if (want_server) {
		char **sargv = read_argv("/pw/server");
		struct exec_spec s = EXEC_SPEC_INIT(sargv);
		struct timespec ts = { 0, 500 * 1000000L };

		s.cwd = "/tmp";
		s.procs_fds = fds;
		s.n_procs_fds = nfds;
		if (exec_start(&server, &s, &e) != 0)
			fail("server_command: %s", err_msg(&e));
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < nruns; i++) {
		char path[64], idx[24];
		char **argv;
		struct exec_spec s;
		struct exec_result r;
		struct emit em = { runs[i] };
		int tm_ok;

		snprintf(path, sizeof(path), "/pw/run-%" PRId64, runs[i]);
		snprintf(idx, sizeof(idx), "%" PRId64, runs[i]);
		argv = read_argv(path);
		s = EXEC_SPEC_INIT(argv);
		s.cwd = "/tmp";
		s.timeout_ms = timeout_ms;
		s.out_max = OUT_MAX;
		s.err_max = OUT_MAX;
		s.procs_fds = fds;
		s.n_procs_fds = nfds;
		err_clear(&e);
		tm_ok = telemetry_begin(tm, &e) == 0;
		if (exec_run(&r, &s, &e) != 0)
			fail("run %s: %s", idx, err_msg(&e));
		if (tm_ok && telemetry_end(tm, emit_metric, &em, &e) < 0)
			printf(
			    "PWG1 metric %s guest.telemetry_failed 1 -\n", idx);
		hexline("out", idx, r.out.data, r.out.len);
		hexline("err", idx, r.err.data, r.err.len);
		printf("PWG1 end %s %d %d %d %d %.6f %zu %zu\n", idx, r.exited,
		    r.code, r.signo, r.timed_out, r.duration_s, r.out.len,
		    r.err.len);
		fflush(stdout);
		exec_result_release(&r);
	}
	exec_stop(server);
	telemetry_free(tm);
	cgroup_free(cg);
	finish();
}
