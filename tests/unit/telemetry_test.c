#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "runners/cgroup.h"
#include "runners/telemetry.h"
#include "tests/unit/test.h"

#define MAXM 64

struct got {
	char name[MAXM][CAP_NAME];
	char unit[MAXM][16];
	double value[MAXM];
	int n;
};

static void
collect(const char *name, double v, const char *unit, void *arg)
{
	struct got *g = arg;

	if (g->n == MAXM)
		return;
	snprintf(g->name[g->n], CAP_NAME, "%s", name);
	snprintf(g->unit[g->n], 16, "%s", unit);
	g->value[g->n++] = v;
}

static int
find(const struct got *g, const char *name, double *v)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (strcmp(g->name[i], name) == 0) {
			if (v)
				*v = g->value[i];
			return 1;
		}
	return 0;
}

/* Excerpts in the kernels' formats (v2: Documentation/admin-guide/
 * cgroup-v2.rst field names; v1: this machine's memory.stat). */
static const char v2_before[] = "anon 1000\nfile 2000\nkernel 300\n"
                                "kernel_stack 16384\npercpu 512\nsock 0\n"
                                "slab 100\npgfault 10\npgmajfault 1\n";
static const char v2_after[] = "anon 5000\nfile 2000\nkernel 700\n"
                               "kernel_stack 16384\npercpu 1024\nsock 8192\n"
                               "slab 150\npgfault 110\npgmajfault 1\n"
                               "garbage line here\nnonnumber abc\n";
static const char v1_stat[] = "cache 2326528\nrss 1650688\npgfault 45315\n"
                              "total_cache 2326528\ntotal_rss 1650688\n"
                              "total_pgfault 45315\ntotal_pgmajfault 14\n"
                              "hierarchical_memory_limit 9223372036854771712\n";

TEST(test_telemetry__parse_flat_and_psi)
{
	struct telemetry_snap s = { 0 };
	int64_t v;

	ASSERT_INTEQ(telemetry_parse_flat(&s, "stat.", v2_after), 9);
	ASSERT(telemetry_snap_get(&v, &s, "stat.sock") == 0);
	ASSERT_INTEQ(v, 8192);
	ASSERT(telemetry_snap_get(&v, &s, "stat.nonnumber") == -1);
	ASSERT(telemetry_snap_get(&v, &s, "stat.garbage") == -1);
	ASSERT_INTEQ(telemetry_parse_flat(&s, "stat.", v1_stat), 8);
	ASSERT(
	    telemetry_snap_get(&v, &s, "stat.hierarchical_memory_limit") == 0);
	ASSERT_INTEQ(v, 9223372036854771712LL);
	ASSERT_INTEQ(telemetry_parse_psi(&s,
	                 "some avg10=0.00 avg60=0.00 avg300=0.00 total=123\n"
	                 "full avg10=0.00 avg60=0.00 avg300=0.00 total=45\n"),
	    2);
	ASSERT(telemetry_snap_get(&v, &s, "psi.some") == 0);
	ASSERT_INTEQ(v, 123);
	ASSERT(telemetry_snap_get(&v, &s, "psi.full") == 0);
	ASSERT_INTEQ(v, 45);
	telemetry_snap_release(&s);
}

TEST(test_telemetry__diff_v2_names_and_units)
{
	struct telemetry_snap a = { 0 }, b = { 0 };
	struct got g = { 0 };
	double v;

	telemetry_parse_flat(&b, "stat.", v2_before);
	telemetry_parse_flat(&a, "stat.", v2_after);
	telemetry_parse_flat(&b, "events.", "low 0\nhigh 2\nmax 0\noom 0\n");
	telemetry_parse_flat(&a, "events.", "low 0\nhigh 7\nmax 1\noom 0\n");
	telemetry_snap_put(&a, "peak", 99999);
	telemetry_parse_psi(&b, "some avg10=0 total=100\nfull avg10=0 total=5");
	telemetry_parse_psi(&a, "some avg10=0 total=350\nfull avg10=0 total=5");
	telemetry_diff(&b, &a, CGROUP_V2, 0, 1, collect, &g);
	ASSERT(find(&g, "memcg.sock_delta", &v) && v == 8192);
	ASSERT(find(&g, "memcg.kernel_delta", &v) && v == 400);
	ASSERT(find(&g, "memcg.percpu_delta", &v) && v == 512);
	ASSERT(find(&g, "memcg.pgfault_delta", &v) && v == 100);
	ASSERT(find(&g, "memcg.pgmajfault_delta", &v) && v == 0);
	ASSERT(find(&g, "memcg.events.high", &v) && v == 5);
	ASSERT(find(&g, "memcg.events.max", &v) && v == 1);
	ASSERT(find(&g, "memcg.peak_bytes", &v) && v == 99999);
	ASSERT(find(&g, "memcg.psi.some_us_delta", &v) && v == 250);
	ASSERT(find(&g, "memcg.psi.full_us_delta", &v) && v == 0);
	/* Fields the kernel did not expose produce nothing. */
	ASSERT(!find(&g, "memcg.pgscan_delta", NULL));
	ASSERT(!find(&g, "memcg.usage_delta", NULL));
	ASSERT(!find(&g, "memcg.failcnt_delta", NULL));
	ASSERT(!find(&g, "system.psi_memory.some_us_delta", NULL));
	telemetry_snap_release(&a);
	telemetry_snap_release(&b);
}

TEST(test_telemetry__diff_v1_sock_only_with_accounting)
{
	struct telemetry_snap a = { 0 }, b = { 0 };
	struct got g = { 0 }, g2 = { 0 };
	double v;

	telemetry_parse_flat(&b, "stat.", v1_stat);
	telemetry_parse_flat(&a, "stat.", v1_stat);
	telemetry_snap_put(&b, "tcp", 0);
	telemetry_snap_put(&a, "tcp", 4096);
	telemetry_snap_put(&b, "failcnt", 3);
	telemetry_snap_put(&a, "failcnt", 10);
	telemetry_snap_put(&a, "peak_since_creation", 5);
	telemetry_parse_psi(&b, "some avg10=0 total=1\nfull avg10=0 total=1");
	telemetry_parse_psi(&a, "some avg10=0 total=9\nfull avg10=0 total=2");
	telemetry_diff(&b, &a, CGROUP_V1, 1, 0, collect, &g);
	ASSERT(!find(&g, "memcg.sock_delta", NULL));
	ASSERT(find(&g, "memcg.failcnt_delta", &v) && v == 7);
	ASSERT(find(&g, "memcg.anon_delta", &v) && v == 0);
	ASSERT(!find(&g, "memcg.percpu_delta", NULL));
	ASSERT(!find(&g, "memcg.peak_bytes", NULL));
	ASSERT(find(&g, "memcg.peak_bytes_since_creation", &v) && v == 5);
	ASSERT(find(&g, "system.psi_memory.some_us_delta", &v) && v == 8);
	ASSERT(!find(&g, "memcg.psi.some_us_delta", NULL));
	telemetry_diff(&b, &a, CGROUP_V1, 1, 1, collect, &g2);
	ASSERT(find(&g2, "memcg.sock_delta", &v) && v == 4096);
	telemetry_snap_release(&a);
	telemetry_snap_release(&b);
}

/* A child allocating 32 MiB in a nested cgroup of this machine. */
TEST(test_telemetry__real_cgroup_child_allocates)
{
	struct cgroup_sys s;
	char *path = xasprintf("/pwtest-tm-%d", (int)getpid());
	struct cgroup_spec spec = { path, 256 << 20, 0 };
	struct cgroup *cg = NULL;
	struct telemetry_src src = { 0 };
	struct telemetry *t;
	struct err e = { 0 };
	struct got g = { 0 };
	char *argv[] = { "dd", "if=/dev/zero", "of=/dev/null", "bs=32M",
		"count=1", "status=none", NULL };
	int fds[CGROUP_MAX_FDS], n, i, status;
	double v;
	pid_t pid;

	cgroup_detect(&s);
	ASSERT_MSG(s.kind != CGROUP_NONE, "%s", s.reason);
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	src.kind = cgroup_kind(cg);
	src.memdir = cgroup_dir(cg);
	src.v2dir = cgroup_v2_dir(cg);
	src.sockacct = cgroup_socket_accounting(cg);
	t = telemetry_new(&src);
	ASSERT_MSG(telemetry_begin(t, &e) == 0, "%s", err_msg(&e));
	n = cgroup_procs_fds(cg, fds, &e);
	ASSERT(n > 0);
	pid = fork();
	if (pid == 0) {
		if (cgroup_attach_fds(fds, n))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	ASSERT(waitpid(pid, &status, 0) == pid);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_MSG(telemetry_end(t, collect, &g, &e) > 0, "%s", err_msg(&e));
	for (i = 0; i < g.n; i++)
		printf("  # %s = %.0f %s\n", g.name[i], g.value[i], g.unit[i]);
	ASSERT(find(&g, "memcg.pgfault_delta", &v));
	ASSERT_MSG(v >= 8192, "pgfault delta %.0f < 8192 (32 MiB of pages)", v);
	ASSERT(find(&g, "memcg.peak_bytes", &v));
	ASSERT_MSG(v >= 32 << 20, "peak %.0f < 32 MiB", v);
	if (cgroup_v2_dir(cg))
		ASSERT_STREQ(telemetry_psi_scope(t), "cgroup");
	ASSERT(find(&g,
	    cgroup_v2_dir(cg) ? "memcg.psi.some_us_delta"
	                      : "system.psi_memory.some_us_delta",
	    NULL));
	telemetry_free(t);
	ASSERT(cgroup_teardown(cg, &e) == 0);
	cgroup_free(cg);
	cgroup_sys_release(&s);
	free(path);
}
