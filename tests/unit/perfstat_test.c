/*
 * Hardware counters (runners/perfstat.c): the `perf stat -x,` parser on
 * the real outputs in tests/fixtures/perfstat/ (SOURCES.md says where
 * each came from), the per-operation metrics, the PMU check on a fake
 * sysfs, and perf stat itself on this machine (no PMU: software events
 * through the same -a -G --control path, and hardware events unknown).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/files.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "runners/cgroup.h"
#include "runners/perfstat.h"
#include "tests/unit/test.h"

static int
load(struct buf *b, const char *name)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "perfstat/%s", name);
	buf_reset(b);
	return files_read(b, test_fixture(rel), 1 << 20);
}

/* Parses fixture name; 0 or -1 (r->err set). */
static int
parse_fixture(struct perfstat_report *r, const char *name, int cgroup)
{
	struct buf b = BUF_INIT(1 << 20);
	int rc;

	if (load(&b, name) != 0) {
		buf_release(&b);
		return err_set(&r->err, "cannot read fixture %s", name);
	}
	rc = perfstat_parse(r, b.data, b.len, cgroup);
	buf_release(&b);
	return rc;
}

static const struct perfstat_line *
line_of(const struct perfstat_report *r, const char *event)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->lines[i].event, event) == 0)
			return &r->lines[i];
	return NULL;
}

/* This VM: hardware events are <not supported>, task-clock counts. */
TEST(test_perfstat__vm_hardware_not_supported)
{
	struct perfstat_report r;
	struct perfstat_total t;
	const struct perfstat_line *l;

	perfstat_report_init(&r);
	ASSERT_MSG(parse_fixture(&r, "vm-true-hw-not-supported.csv", 0) == 0,
	    "%s", err_msg(&r.err));
	ASSERT_INTEQ(r.n, 3);
	l = line_of(&r, "instructions");
	ASSERT(l != NULL && l->state == PERFSTAT_NOT_SUPPORTED);
	ASSERT_INTEQ(l->lineno, 5); /* after the 4 header lines */
	ASSERT(!perfstat_total(&t, &r, "instructions"));
	ASSERT_INTEQ(t.not_supported, 1);
	ASSERT_MSG(strstr(t.reason, "instructions: <not supported>") != NULL,
	    "%s", t.reason);
	ASSERT(t.value == 0);
	ASSERT(!perfstat_total(&t, &r, "cycles"));
	l = line_of(&r, "task-clock");
	ASSERT(l != NULL && l->state == PERFSTAT_COUNTED);
	ASSERT_STREQ(l->unit, "msec");
	ASSERT_NEAR(l->value, 0.57, 1e-12);
	ASSERT_NEAR(l->runtime, 568857, 0);
	ASSERT_NEAR(l->pct, 100, 0);
	perfstat_report_release(&r);
}

/* Real software counts of this machine: the number path. */
TEST(test_perfstat__vm_software_counts)
{
	struct perfstat_report r;
	struct perfstat_total t;

	perfstat_report_init(&r);
	ASSERT_MSG(parse_fixture(&r, "vm-sw-counts.csv", 0) == 0, "%s",
	    err_msg(&r.err));
	ASSERT_INTEQ(r.n, 4);
	ASSERT(perfstat_total(&t, &r, "context-switches"));
	ASSERT_NEAR(t.value, 1204, 0);
	ASSERT(perfstat_total(&t, &r, "page-faults"));
	ASSERT_NEAR(t.value, 265, 0);
	ASSERT(perfstat_total(&t, &r, "task-clock"));
	ASSERT_NEAR(t.value, 110.57, 1e-9);
	ASSERT(perfstat_total(&t, &r, "cpu-migrations"));
	ASSERT_NEAR(t.value, 1, 0);
	ASSERT_STREQ(line_of(&r, "task-clock")->cgroup, "");
	perfstat_report_release(&r);
}

/* The runner's own invocation (-o, -a -G): the cgroup column. */
TEST(test_perfstat__vm_cgroup_column)
{
	struct perfstat_report r;
	struct perfstat_total t;
	const struct perfstat_line *l;

	perfstat_report_init(&r);
	ASSERT_MSG(parse_fixture(&r, "vm-cgroup-sw-counts.csv", 1) == 0, "%s",
	    err_msg(&r.err));
	ASSERT_INTEQ(r.n, 4);
	l = line_of(&r, "page-faults");
	ASSERT(l != NULL);
	ASSERT_STREQ(l->cgroup, "pwfix-5008");
	ASSERT_NEAR(l->value, 265, 0);
	ASSERT_NEAR(l->runtime, 67074510, 0);
	ASSERT(perfstat_total(&t, &r, "context-switches"));
	ASSERT_NEAR(t.value, 111, 0);
	/* Hardware events of the same invocation on this VM. */
	ASSERT_MSG(parse_fixture(&r, "vm-cgroup-hw-not-supported.csv", 1) == 0,
	    "%s", err_msg(&r.err));
	ASSERT_INTEQ(r.n, 4);
	ASSERT(!perfstat_total(&t, &r, "instructions"));
	ASSERT(strstr(t.reason, "<not supported>") != NULL);
	ASSERT(perfstat_total(&t, &r, "page-faults"));
	ASSERT_NEAR(t.value, 268, 0);
	perfstat_report_release(&r);
}

/* Nothing ran in the cgroup: <not counted>, never a 0. */
TEST(test_perfstat__vm_not_counted)
{
	struct perfstat_report r;
	struct perfstat_total t;

	perfstat_report_init(&r);
	ASSERT_MSG(parse_fixture(&r, "vm-cgroup-not-counted.csv", 1) == 0, "%s",
	    err_msg(&r.err));
	ASSERT_INTEQ(r.n, 4);
	ASSERT(line_of(&r, "task-clock")->state == PERFSTAT_NOT_COUNTED);
	ASSERT_STREQ(line_of(&r, "task-clock")->unit, "msec");
	ASSERT(!perfstat_total(&t, &r, "task-clock"));
	ASSERT_INTEQ(t.not_counted, 1);
	ASSERT_MSG(strstr(t.reason, "<not counted>") != NULL, "%s", t.reason);
	ASSERT(!perfstat_total(&t, &r, "context-switches"));
	ASSERT(!perfstat_total(&t, &r, "instructions"));
	ASSERT(strstr(t.reason, "<not supported>") != NULL);
	perfstat_report_release(&r);
}

/* Published hardware counts: IPC as perf printed it (1.61). */
TEST(test_perfstat__handbook_hardware_counts)
{
	struct perfstat_report r;
	struct perfstat_total ins, cyc;

	perfstat_report_init(&r);
	ASSERT_MSG(parse_fixture(&r, "handbook-main-default.csv", 0) == 0, "%s",
	    err_msg(&r.err));
	/* 11 counters; ",,,,,0.04,stalled cycles per insn" is skipped. */
	ASSERT_INTEQ(r.n, 10);
	ASSERT(perfstat_total(&ins, &r, "instructions"));
	ASSERT(perfstat_total(&cyc, &r, "cycles"));
	ASSERT_NEAR(ins.value, 425064193324.0, 0);
	ASSERT_NEAR(cyc.value, 264690533400.0, 0);
	ASSERT_NEAR(ins.value / cyc.value, 1.61, 0.005);
	/* "stalled-cycles-frontend" is not "cycles". */
	ASSERT_INTEQ(cyc.counted, 1);
	ASSERT_INTEQ(line_of(&r, "branches")->lineno, 16);
	/* The -o file: perf's "# started on" header and blank line. */
	ASSERT_MSG(parse_fixture(&r, "handbook-main-o-file.csv", 0) == 0, "%s",
	    err_msg(&r.err));
	ASSERT_INTEQ(r.n, 2);
	ASSERT(perfstat_total(&ins, &r, "instructions"));
	ASSERT_NEAR(ins.value, 425115750611.0, 0);
	ASSERT(!perfstat_total(&cyc, &r, "cycles"));
	ASSERT_MSG(strstr(cyc.reason, "not in perf's output") != NULL, "%s",
	    cyc.reason);
	perfstat_report_release(&r);
}

/* A whole host's counts, with metric-group lines (perf >= 6.5). */
TEST(test_perfstat__spr_metric_groups_skipped)
{
	struct perfstat_report r;
	struct perfstat_total ins, cyc;

	perfstat_report_init(&r);
	ASSERT_MSG(parse_fixture(&r, "lkml-spr-default.csv", 0) == 0, "%s",
	    err_msg(&r.err));
	ASSERT_INTEQ(r.n, 8);
	ASSERT(perfstat_total(&ins, &r, "instructions"));
	ASSERT(perfstat_total(&cyc, &r, "cycles"));
	ASSERT_NEAR(ins.value, 37977214, 0);
	ASSERT_NEAR(cyc.value, 52288305, 0);
	ASSERT_NEAR(ins.value / cyc.value, 0.73, 0.005);
	perfstat_report_release(&r);
}

/* Hybrid: cpu_core/ and cpu_atom/ lines add up. */
TEST(test_perfstat__hybrid_pmus_summed)
{
	struct perfstat_report r;
	struct perfstat_total ins, cyc;

	perfstat_report_init(&r);
	ASSERT_MSG(parse_fixture(&r, "lkml-hybrid-default.csv", 0) == 0, "%s",
	    err_msg(&r.err));
	ASSERT_INTEQ(r.n, 12);
	ASSERT(perfstat_total(&ins, &r, "instructions"));
	ASSERT(perfstat_total(&cyc, &r, "cycles"));
	ASSERT_INTEQ(ins.counted, 2);
	ASSERT_NEAR(ins.value, 9222630 + 1256594, 0);
	ASSERT_NEAR(cyc.value, 8632400 + 3359282, 0);
	ASSERT_NEAR(ins.pct, 100, 0);
	ASSERT_STREQ(line_of(&r, "cpu_atom/instructions/")->event,
	    "cpu_atom/instructions/");
	perfstat_report_release(&r);
}

/* Multiplexed (54 % and 63 %): a scaled estimate is not judged. */
TEST(test_perfstat__multiplexed_is_unknown)
{
	struct perfstat_report r;
	struct perfstat_total ins, cyc;

	perfstat_report_init(&r);
	ASSERT_MSG(parse_fixture(&r, "lkml-hybrid-multiplexed.csv", 0) == 0,
	    "%s", err_msg(&r.err));
	ASSERT_INTEQ(r.n, 12);
	ASSERT_NEAR(line_of(&r, "cpu_atom/cycles/")->pct, 54, 0);
	ASSERT(!perfstat_total(&ins, &r, "instructions"));
	ASSERT_INTEQ(ins.counted, 2);
	ASSERT_NEAR(ins.pct, 63, 0);
	ASSERT(ins.value == 0);
	ASSERT_MSG(strstr(ins.reason,
	               "instructions: multiplexed "
	               "(cpu_atom/instructions/ ran 63.00% of "
	               "the time)") != NULL,
	    "%s", ins.reason);
	ASSERT(!perfstat_total(&cyc, &r, "cycles"));
	ASSERT(strstr(cyc.reason, "cpu_atom/cycles/ ran 54.00%") != NULL);
	perfstat_report_release(&r);
}

/* Interval output (-I) is refused, naming the line and the column. */
TEST(test_perfstat__interval_output_refused)
{
	struct perfstat_report r;

	perfstat_report_init(&r);
	ASSERT(parse_fixture(&r, "lkml-interval.csv", 0) == -1);
	ASSERT_MSG(strstr(err_msg(&r.err),
	               "perf stat: line 7, column 1: expected a count, <not "
	               "counted> or <not supported>, got '     "
	               "1.001323097'") != NULL,
	    "%s", err_msg(&r.err));
	ASSERT_INTEQ(r.n, 0);
	perfstat_report_release(&r);
}

static void
expect_error(const char *text, int cgroup, const char *want)
{
	struct perfstat_report r;
	int rc;

	perfstat_report_init(&r);
	rc = perfstat_parse(&r, text, strlen(text), cgroup);
	ASSERT_MSG(rc == -1, "accepted: %s", text);
	ASSERT_MSG(strstr(err_msg(&r.err), want) != NULL,
	    "\"%s\": error \"%s\", want \"%s\"", text, err_msg(&r.err), want);
	perfstat_report_release(&r);
}

/*
 * Damaged lines, made here from the handbook's real
 * "425115750611,,instructions,64005529152,100.00,," by changing one
 * field each.
 */
TEST(test_perfstat__garbage_names_line_and_column)
{
	struct perfstat_report r;
	const char *ok = "# started on Wed Apr 24 11:18:56 2024\n\n"
	                 "425115750611,,instructions,64005529152,100.00,,\n"
	                 "<not counted>,,cycles,,,,\n";

	expect_error("42511575x611,,instructions,64005529152,100.00,,\n", 0,
	    "line 1, column 1: expected a count");
	expect_error("425115750611,,,64005529152,100.00,,\n", 0,
	    "line 1, column 15: expected an event name");
	expect_error("425115750611,,instructions,64005529152,1O0.00,,\n", 0,
	    "line 1, column 40: expected the percent");
	expect_error("425115750611,,instructions,64005529152,250.00,,\n", 0,
	    "line 1, column 40: expected the percent");
	expect_error("425115750611,,instructions,64005529152\n", 0,
	    "line 1, column 39: expected value,unit,event,run time,percent");
	expect_error("425115750611,,instructions,64005529152,100.00,,\n", 1,
	    "line 1, column 40: a count needs its run time and percent");
	expect_error("425115750611,,instructions,x,100.00,,\n", 0,
	    "line 1, column 28: expected the run time");
	expect_error("# header\n425115750611,,instructions,64005529152,100.00,,"
	             "\nPerformance counter stats for 'true':\n",
	    0, "line 3, column 1: expected a count");
	expect_error("425115750611,42,instructions,64005529152,100.00,,\n", 0,
	    "line 1, column 14: expected a unit");
	expect_error("", 0, "perf stat: no counter in 0 lines");
	/* A NUL in the event (found by tests/fuzz/perfstat_fuzz.c). */
	{
		static const char nul[] =
		    "2397300420,,branch\0misses,1,100.00,,\n";
		struct perfstat_report z;

		perfstat_report_init(&z);
		ASSERT(perfstat_parse(&z, nul, sizeof(nul) - 1, 0) == -1);
		ASSERT_MSG(
		    strstr(err_msg(&z.err),
		        "line 1, column 13: expected an event name") != NULL,
		    "%s", err_msg(&z.err));
		perfstat_report_release(&z);
	}
	expect_error("# started on Wed Apr 24 11:18:56 2024\n\n", 0,
	    "no counter in 2 lines");
	/* An older perf leaves run time and percent of <not counted> empty. */
	perfstat_report_init(&r);
	ASSERT_MSG(
	    perfstat_parse(&r, ok, strlen(ok), 0) == 0, "%s", err_msg(&r.err));
	ASSERT_INTEQ(r.n, 2);
	ASSERT(r.lines[1].state == PERFSTAT_NOT_COUNTED);
	ASSERT(r.lines[1].runtime < 0 && r.lines[1].pct < 0);
	perfstat_report_release(&r);
}

TEST(test_perfstat__ops)
{
	struct perfstat_ops o;
	struct buf b = BUF_INIT(1 << 20);

	perfstat_ops_from(&o, "num_transactions", "", 329605, 10.0);
	ASSERT(o.known);
	ASSERT_NEAR(o.ops, 329605, 0);
	ASSERT_STREQ(o.how, "num_transactions = 329605");
	perfstat_ops_from(&o, "throughput", "trans/s", 33009.84, 10.0);
	ASSERT(o.known);
	ASSERT_NEAR(o.ops, 330098.4, 1e-6);
	ASSERT_STREQ(o.how, "throughput = 33009.8 trans/s x 10.000 s");
	perfstat_ops_from(&o, "read_iops", "IOPS", 1000, 2.5);
	ASSERT(o.known);
	ASSERT_NEAR(o.ops, 2500, 1e-9);
	perfstat_ops_from(&o, "read_bw", "MiB/s", 100, 2);
	ASSERT_NEAR(o.ops, 200, 1e-9);
	perfstat_ops_from(&o, "ops", NULL, 0, 1);
	ASSERT(!o.known);
	ASSERT_STREQ(o.how, "the run reports no metric 'ops' (counters_ops)");
	perfstat_ops_from(&o, "ops", "", 0, 1);
	ASSERT(!o.known);
	ASSERT_STREQ(o.how, "no operations (ops = 0)");
	/* From the real neper output, parsed again by its parser. */
	ASSERT(files_read(&b, test_fixture("bench/neper.tcp_rr.server.txt"),
	           1 << 20) == 0);
	perfstat_ops_parse(&o, "num_transactions", "neper", b.data, b.len, 10);
	ASSERT_MSG(o.known, "%s", o.how);
	ASSERT_NEAR(o.ops, 329605, 0);
	perfstat_ops_parse(&o, "throughput", "neper", b.data, b.len, 10);
	ASSERT(o.known);
	ASSERT_NEAR(o.ops, 330098.4, 1e-6);
	perfstat_ops_parse(&o, "no_such", "neper", b.data, b.len, 10);
	ASSERT(!o.known);
	perfstat_ops_parse(&o, NULL, "neper", b.data, b.len, 10);
	ASSERT(!o.known);
	ASSERT_STREQ(o.how, "the job names no counters_ops metric");
	perfstat_ops_parse(&o, "ops", "neper", "garbage\n", 8, 10);
	ASSERT(!o.known);
	ASSERT(o.how[0] != '\0');
	buf_release(&b);
}

/* The metrics from the handbook's counts; ops = 1e6 for the arithmetic. */
TEST(test_perfstat__derive)
{
	struct perfstat_report r;
	struct perfstat_total ins, cyc, none;
	struct perfstat_metric m[PERFSTAT_MAX_METRICS];
	struct perfstat_ops o;
	size_t n;

	perfstat_report_init(&r);
	ASSERT(parse_fixture(&r, "handbook-main-default.csv", 0) == 0);
	perfstat_total(&ins, &r, "instructions");
	perfstat_total(&cyc, &r, "cycles");
	perfstat_ops_from(&o, "ops", "", 1e6, 64.7);
	n = perfstat_derive(m, &ins, &cyc, &o);
	ASSERT_INTEQ(n, 5);
	ASSERT_STREQ(m[0].name, "perf.instructions");
	ASSERT_STREQ(m[0].better, "info");
	ASSERT_STREQ(m[1].name, "perf.cycles");
	ASSERT_STREQ(m[2].name, "perf.ipc");
	ASSERT_STREQ(m[2].better, "higher");
	ASSERT_STREQ(m[2].unit, "insn/cycle");
	ASSERT_NEAR(m[2].value, 425064193324.0 / 264690533400.0, 1e-12);
	ASSERT_STREQ(m[3].name, "perf.instructions_per_op");
	ASSERT_STREQ(m[3].better, "lower");
	ASSERT_STREQ(m[3].unit, "instructions/op");
	ASSERT_NEAR(m[3].value, 425064.193324, 1e-6);
	ASSERT_STREQ(m[4].name, "perf.cycles_per_op");
	ASSERT_STREQ(m[4].better, "lower");
	ASSERT_NEAR(m[4].value, 264690.5334, 1e-6);
	/* Ops unknown: totals and IPC only. */
	perfstat_ops_from(&o, "ops", NULL, 0, 1);
	ASSERT_INTEQ(perfstat_derive(m, &ins, &cyc, &o), 3);
	ASSERT_INTEQ(perfstat_derive(m, &ins, &cyc, NULL), 3);
	/* Cycles unknown: no IPC, no cycles per op. */
	perfstat_total(&none, &r, "no-such-event");
	perfstat_ops_from(&o, "ops", "", 1e6, 64.7);
	n = perfstat_derive(m, &ins, &none, &o);
	ASSERT_INTEQ(n, 2);
	ASSERT_STREQ(m[1].name, "perf.instructions_per_op");
	ASSERT_INTEQ(perfstat_derive(m, &none, &none, &o), 0);
	perfstat_report_release(&r);
}

static char *
fake_devices(const char *name, const char *const *entries)
{
	char *root = xasprintf("%s/%s", test_tmpdir(), name);
	size_t i;

	for (i = 0; entries[i]; i++)
		test_write_file(root, entries[i], "4\n");
	mkdir(root, 0755);
	return root;
}

TEST(test_perfstat__pmu_detection)
{
	const char *vm[] = { "/software/type", "/tracepoint/type",
		"/breakpoint/type", "/msr/type", "/uprobe/type", NULL };
	const char *intel[] = { "/cpu/type", "/software/type", "/msr/type",
		NULL };
	const char *hybrid[] = { "/cpu_core/type", "/cpu_atom/type",
		"/software/type", NULL };
	const char *arm[] = { "/armv8_pmuv3_0/type", "/software/type", NULL };
	char out[PERFSTAT_REASON_MAX], *d;

	d = fake_devices("vm", vm);
	ASSERT(perfstat_pmu(out, sizeof(out), d) == 0);
	ASSERT_MSG(strstr(out, "no PMU on this host") != NULL, "%s", out);
	free(d);
	d = fake_devices("intel", intel);
	ASSERT(perfstat_pmu(out, sizeof(out), d) == 1);
	ASSERT_STREQ(out, "cpu");
	free(d);
	d = fake_devices("hybrid", hybrid);
	ASSERT(perfstat_pmu(out, sizeof(out), d) == 1);
	ASSERT_STREQ(out, "cpu_atom+cpu_core");
	free(d);
	d = fake_devices("arm", arm);
	ASSERT(perfstat_pmu(out, sizeof(out), d) == 1);
	ASSERT_STREQ(out, "armv8_pmuv3_0");
	free(d);
	ASSERT(perfstat_pmu(out, sizeof(out), "/nonexistent/devices") == 0);
	ASSERT(strstr(out, "cannot read /nonexistent/devices") != NULL);
	/* This machine, for the log: the VM has none. */
	printf("  # this host: %d %s\n", perfstat_pmu(out, sizeof(out), NULL),
	    out);
}

/* No PMU: inert, unknown with the reason, perf never started. */
TEST(test_perfstat__no_pmu_is_unknown)
{
	const char *vm[] = { "/software/type", NULL };
	struct perfstat_opts o = { 0 };
	struct perfstat_result res;
	struct perfstat *p;
	struct stat st;
	char *d = fake_devices("vm2", vm), *dir, *errf;

	dir = xasprintf("%s/nopmu", test_tmpdir());
	errf = xasprintf("%s/perf-stat.err", dir);
	ASSERT(mkdir(dir, 0755) == 0);
	o.dir = dir;
	o.devices = d;
	o.cgroup = "/anything";
	p = perfstat_start(&o);
	perfstat_stop(p, &res);
	ASSERT(!res.counted);
	ASSERT_MSG(strstr(res.reason, "no PMU on this host") != NULL &&
	        strstr(res.reason, "virtual machine without a virtual PMU)") !=
	            NULL,
	    "%s", res.reason);
	ASSERT_STREQ(res.pmu, "");
	ASSERT(!res.ins.known && !res.cyc.known);
	/* perf was never started: it left no stderr file. */
	ASSERT(stat(errf, &st) != 0);
	perfstat_result_release(&res);
	perfstat_free(p);
	free(d);
	free(dir);
	free(errf);
}

TEST(test_perfstat__no_cgroup_or_no_perf_is_unknown)
{
	struct perfstat_opts o = { 0 };
	struct perfstat_result res;
	struct perfstat *p;

	o.dir = test_tmpdir();
	o.no_pmu_check = 1;
	p = perfstat_start(&o);
	perfstat_stop(p, &res);
	ASSERT(!res.counted);
	ASSERT_MSG(
	    strstr(res.reason, "no cgroup2 directory for perf -G") != NULL,
	    "%s", res.reason);
	perfstat_result_release(&res);
	perfstat_free(p);
	o.cgroup = "/";
	o.perf = "/nonexistent/perf";
	p = perfstat_start(&o);
	perfstat_stop(p, &res);
	ASSERT(!res.counted);
	ASSERT_MSG(
	    strstr(res.reason, "perf not found") != NULL, "%s", res.reason);
	perfstat_result_release(&res);
	perfstat_free(p);
	/* perf itself refuses: its words are the reason. */
	o.perf = NULL;
	o.cgroup = "no-such-cgroup-of-perfwatch";
	p = perfstat_start(&o);
	perfstat_stop(p, &res);
	ASSERT(!res.counted);
	ASSERT_MSG(
	    strstr(res.reason, "perf stat did not start counting") != NULL,
	    "%s", res.reason);
	printf("  # %s\n", res.reason);
	perfstat_result_release(&res);
	perfstat_free(p);
}

/*
 * perf stat for real, the runner's invocation, around a child placed in
 * a nested cgroup that writes 64 MiB to a file.  events: NULL for the
 * hardware ones.
 */
static void
real_run(const char *events, struct perfstat_result *res, char **dirout)
{
	struct cgroup_sys s;
	char *path = xasprintf("/pwtest-ps-%d", (int)getpid());
	struct cgroup_spec spec = { path, 0, 0 };
	struct cgroup *cg = NULL;
	struct err e = { 0 };
	struct perfstat_opts o = { 0 };
	struct perfstat *p;
	char *of = xasprintf("of=%s/ddout", test_tmpdir());
	char *argv[] = { "dd", "if=/dev/zero", of, "bs=1M", "count=64",
		"status=none", NULL };
	int fds[CGROUP_MAX_FDS], n, i, status;
	char *dir = xasprintf("%s/ps-%s", test_tmpdir(), events ? "sw" : "hw");
	pid_t pid;

	memset(res, 0, sizeof(*res));
	*dirout = dir;
	ASSERT(mkdir(dir, 0755) == 0);
	cgroup_detect(&s);
	ASSERT_MSG(s.kind != CGROUP_NONE, "%s", s.reason);
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	ASSERT_MSG(
	    cgroup_perf_name(cg) != NULL, "no cgroup2 directory on this host");
	o.dir = dir;
	o.cgroup = cgroup_perf_name(cg);
	o.events = events;
	o.no_pmu_check = 1;
	p = perfstat_start(&o);
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
	perfstat_stop(p, res);
	perfstat_free(p);
	ASSERT(cgroup_teardown(cg, &e) == 0);
	cgroup_free(cg);
	cgroup_sys_release(&s);
	free(path);
	free(of);
}

/* Software events: the whole -a -G --control path counts here too. */
TEST(test_perfstat__real_software_events_in_cgroup)
{
	struct perfstat_result res;
	struct perfstat_total t;
	struct buf b = BUF_INIT(1 << 20);
	char *dir = NULL, *csv;
	size_t i;

	real_run("task-clock,context-switches,page-faults", &res, &dir);
	ASSERT(dir != NULL);
	csv = xasprintf("%s/perf-stat.csv", dir);
	ASSERT(files_read(&b, csv, 1 << 20) == 0);
	printf("  # %s", b.data);
	ASSERT_MSG(
	    res.report.n == 3, "%zu lines: %s", res.report.n, res.reason);
	for (i = 0; i < res.report.n; i++)
		ASSERT(
		    strstr(res.report.lines[i].cgroup, "pwtest-ps-") != NULL);
	ASSERT(perfstat_total(&t, &res.report, "task-clock"));
	ASSERT(t.value > 0);
	ASSERT(perfstat_total(&t, &res.report, "page-faults"));
	ASSERT(t.value > 0);
	/* Not the counters asked of a real run: unknown, not zero. */
	ASSERT(!res.counted && !res.ins.known && !res.cyc.known);
	ASSERT(
	    strstr(res.reason, "instructions: not in perf's output") != NULL);
	perfstat_result_release(&res);
	buf_release(&b);
	free(csv);
	free(dir);
}

/* instructions,cycles: counted on a host with a PMU, else unknown. */
TEST(test_perfstat__real_hardware_events)
{
	struct perfstat_result res;
	char out[PERFSTAT_REASON_MAX], *dir = NULL;
	int pmu = perfstat_pmu(out, sizeof(out), NULL);

	real_run(NULL, &res, &dir);
	printf("  # pmu %d: counted %d, %.0f instructions, %.0f cycles: %s\n",
	    pmu, res.counted, res.ins.value, res.cyc.value, res.reason);
	if (pmu) {
		ASSERT_MSG(res.counted && res.ins.known && res.cyc.known, "%s",
		    res.reason);
		ASSERT(res.ins.value > 0 && res.cyc.value > 0);
	} else {
		ASSERT(!res.counted);
		ASSERT_MSG(
		    strstr(res.reason, "instructions: <not supported>") != NULL,
		    "%s", res.reason);
		ASSERT(strstr(res.reason, "cycles: <not supported>") != NULL);
	}
	perfstat_result_release(&res);
	free(dir);
}

static json_t *
body_of(const char *status)
{
	return json_pack("{s:s, s:[], s:{s:s}}", "status", status, "metrics",
	    "host_state", "thp", "never");
}

TEST(test_perfstat__apply)
{
	struct perfstat_result res;
	struct perfstat_ops o;
	struct buf log = BUF_INIT(4096);
	json_t *b = body_of("ok"), *c;

	/* Counted: the hybrid host's real totals, ops 1000. */
	memset(&res, 0, sizeof(res));
	perfstat_report_init(&res.report);
	ASSERT(parse_fixture(&res.report, "lkml-hybrid-default.csv", 0) == 0);
	perfstat_total(&res.ins, &res.report, "instructions");
	perfstat_total(&res.cyc, &res.report, "cycles");
	res.counted = 1;
	snprintf(res.pmu, sizeof(res.pmu), "cpu_atom+cpu_core");
	perfstat_ops_from(&o, "ops", "", 1000, 1);
	perfstat_apply(b, &res, &o, &log);
	ASSERT_INTEQ(json_array_size(json_object_get(b, "metrics")), 5);
	c = json_object_get(json_object_get(b, "host_state"), "counters");
	ASSERT_STREQ(json_string_value(json_object_get(c, "state")), "counted");
	ASSERT_STREQ(
	    json_string_value(json_object_get(c, "pmu")), "cpu_atom+cpu_core");
	ASSERT(json_is_null(json_object_get(c, "reason")));
	ASSERT_STREQ(json_string_value(json_object_get(
	                 json_object_get(b, "host_state"), "thp")),
	    "never");
	ASSERT_MSG(strstr(log.data,
	               "counters: 10479224 instructions, "
	               "11991682 cycles (IPC 0.874), 10479.2 "
	               "instructions/op, 11991.7 cycles/op (ops: "
	               "ops = 1000)") != NULL,
	    "%s", log.data);
	json_decref(b);
	buf_reset(&log);
	/* A failed run gets the state, no metrics. */
	b = body_of("failed");
	perfstat_apply(b, &res, &o, &log);
	ASSERT_INTEQ(json_array_size(json_object_get(b, "metrics")), 0);
	ASSERT(strstr(log.data, "not reported") != NULL);
	json_decref(b);
	buf_reset(&log);
	perfstat_result_release(&res);
	/* Unknown (this VM): no metric, the reason in the run and the log. */
	memset(&res, 0, sizeof(res));
	snprintf(res.reason, sizeof(res.reason),
	    "no PMU on this host: /sys/bus/event_source/devices has no cpu");
	b = body_of("ok");
	perfstat_apply(b, &res, &o, &log);
	ASSERT_INTEQ(json_array_size(json_object_get(b, "metrics")), 0);
	c = json_object_get(json_object_get(b, "host_state"), "counters");
	ASSERT_STREQ(json_string_value(json_object_get(c, "state")), "unknown");
	ASSERT(json_is_null(json_object_get(c, "pmu")));
	ASSERT(strstr(json_string_value(json_object_get(c, "reason")),
	           "no PMU") != NULL);
	ASSERT_MSG(strncmp(log.data, "counters: unknown: no PMU on this host",
	               38) == 0,
	    "%s", log.data);
	json_decref(b);
	buf_release(&log);
}

/*
 * The runner's finish: the operations from the run's own output (the
 * real neper output, num_transactions 329605) over real hybrid counts.
 */
TEST(test_perfstat__finish_with_ops_from_output)
{
	struct perfstat_result res;
	struct buf out = BUF_INIT(1 << 20), log = BUF_INIT(4096);
	json_t *b = body_of("ok"), *m;
	size_t i;
	double ipo = -1;

	ASSERT(files_read(&out, test_fixture("bench/neper.tcp_rr.server.txt"),
	           1 << 20) == 0);
	memset(&res, 0, sizeof(res));
	perfstat_report_init(&res.report);
	ASSERT(parse_fixture(&res.report, "lkml-hybrid-default.csv", 0) == 0);
	perfstat_total(&res.ins, &res.report, "instructions");
	perfstat_total(&res.cyc, &res.report, "cycles");
	res.counted = 1;
	perfstat_finish(b, &res, "num_transactions", "neper", &out, 10.0, &log);
	ASSERT(res.report.lines == NULL); /* released */
	json_array_foreach(json_object_get(b, "metrics"), i, m)
	{
		if (strcmp(json_string_value(json_object_get(m, "name")),
		        "perf.instructions_per_op") == 0)
			ipo = json_number_value(json_object_get(m, "value"));
	}
	ASSERT_NEAR(ipo, 10479224.0 / 329605, 1e-9);
	ASSERT_MSG(strstr(log.data, "(ops: num_transactions = 329605)") != NULL,
	    "%s", log.data);
	json_decref(b);
	buf_release(&out);
	buf_release(&log);
}
