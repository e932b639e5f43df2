/*
 * runners/host: the readers against a fake root laid out as /sys and
 * /proc are (this VM has no cpufreq, turbo or irqbalance), tune/reset
 * round trips there, and the parts that work on this machine for real
 * (pinning the calling thread).  The real /sys round trip (THP) is
 * tests/e2e/t0670-host.sh.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "common/xalloc.h"
#include "config/config.h"
#include "runners/host.h"
#include "tests/unit/test.h"

/* The whole file, malloc'd ("" when missing). */
static char *
slurp(const char *root, const char *rel)
{
	char *p = xasprintf("%s%s", root, rel), *out = xcalloc(1, 65536);
	FILE *f = fopen(p, "r");

	if (f != NULL) {
		size_t n = fread(out, 1, 65535, f);

		out[n] = '\0';
		fclose(f);
	}
	free(p);
	return out;
}

static const struct host_item *
item(const struct host_report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return &r->v[i];
	return NULL;
}

/* An Intel-like two-CPU host, one node, SMT on, irqbalance running. */
static char *
fake_host(const char *name)
{
	char *root = xasprintf("%s/%s", test_tmpdir(), name);

	test_write_file(root, "/sys/devices/system/cpu/online", "0-1\n");
	test_write_file(root,
	    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
	    "powersave\n");
	test_write_file(root,
	    "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
	    "performance\n");
	test_write_file(root,
	    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_available_governors",
	    "performance powersave\n");
	test_write_file(root,
	    "/sys/devices/system/cpu/cpu1/cpufreq/scaling_available_governors",
	    "performance powersave\n");
	test_write_file(root,
	    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver",
	    "intel_pstate\n");
	test_write_file(root,
	    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_min_freq",
	    "800000\n");
	test_write_file(root,
	    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq",
	    "3900000\n");
	test_write_file(
	    root, "/sys/devices/system/cpu/intel_pstate/no_turbo", "0\n");
	test_write_file(
	    root, "/sys/devices/system/cpu/intel_pstate/status", "active\n");
	test_write_file(root, "/sys/devices/system/cpu/smt/active", "1\n");
	test_write_file(root, "/sys/devices/system/cpu/smt/control", "on\n");
	test_write_file(
	    root, "/sys/devices/system/cpu/cpu0/cpuidle/state0/name", "POLL\n");
	test_write_file(
	    root, "/sys/devices/system/cpu/cpu0/cpuidle/state1/name", "C6\n");
	test_write_file(
	    root, "/sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "1\n");
	test_write_file(root, "/sys/kernel/mm/transparent_hugepage/enabled",
	    "always [madvise] never\n");
	test_write_file(root, "/sys/kernel/mm/transparent_hugepage/defrag",
	    "always defer defer+madvise [madvise] never\n");
	test_write_file(
	    root, "/sys/devices/system/node/node0/cpulist", "0-1\n");
	test_write_file(root, "/proc/4242/comm", "irqbalance\n");
	test_write_file(root, "/proc/1/comm", "init\n");
	test_write_file(root, "/proc/irq/5/smp_affinity_list", "0-1\n");
	test_write_file(root, "/proc/irq/9/smp_affinity_list", "1\n");
	test_write_file(root, "/proc/swaps",
	    "Filename\tType\tSize\tUsed\tPriority\n"
	    "/dev/sda2 partition 1048572 0 -2\n");
	test_write_file(root, "/proc/cmdline",
	    "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=1 mitigations=off\n");
	test_write_file(root, "/proc/sys/kernel/randomize_va_space", "2\n");
	test_write_file(root, "/proc/sys/kernel/perf_event_paranoid", "2\n");
	test_write_file(root, "/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
	test_write_file(root, "/proc/cpuinfo",
	    "processor\t: 0\nvendor_id\t: GenuineIntel\n"
	    "microcode\t: 0xd0003b9\n\nprocessor\t: 1\n"
	    "microcode\t: 0xd0003b9\n");
	test_write_file(
	    root, "/proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n");
	test_write_file(root, "/sys/fs/cgroup/cgroup.controllers",
	    "cpuset cpu io memory pids\n");
	return root;
}

TEST(test_host__check_untuned_fake_host)
{
	char *root = fake_host("untuned");
	struct host_report r;
	const struct host_item *it;
	json_t *j;

	host_check(&r, root, NULL);
	ASSERT((it = item(&r, "cpu0.governor")) != NULL);
	ASSERT_STREQ(it->state, "powersave");
	ASSERT_INTEQ(it->status, HOST_NOT_READY);
	ASSERT((it = item(&r, "cpu1.governor")) != NULL);
	ASSERT_INTEQ(it->status, HOST_READY);
	ASSERT((it = item(&r, "cpufreq.driver")) != NULL);
	ASSERT_STREQ(it->state, "intel_pstate");
	ASSERT((it = item(&r, "cpu0.freq_khz")) != NULL);
	ASSERT_STREQ(it->state, "min 800000 max 3900000 hw_max unknown");
	ASSERT((it = item(&r, "turbo.intel_no_turbo")) != NULL);
	ASSERT_INTEQ(it->status, HOST_NOT_READY);
	ASSERT(item(&r, "turbo") == NULL);
	ASSERT((it = item(&r, "smt")) != NULL);
	ASSERT_INTEQ(it->status, HOST_NOT_READY);
	ASSERT((it = item(&r, "cpu0.cstates")) != NULL);
	ASSERT_STREQ(it->state, "POLL C6(disabled)");
	ASSERT((it = item(&r, "thp.enabled")) != NULL);
	ASSERT_STREQ(it->state, "madvise");
	ASSERT_INTEQ(it->status, HOST_INFO);
	ASSERT((it = item(&r, "irqbalance")) != NULL);
	ASSERT_STREQ(it->state, "running (pid 4242)");
	ASSERT_INTEQ(it->status, HOST_NOT_READY);
	ASSERT((it = item(&r, "swap")) != NULL);
	ASSERT_STREQ(it->state, "1 devices, 1048572 kB");
	ASSERT((it = item(&r, "cmdline.isolcpus")) != NULL);
	ASSERT_STREQ(it->state, "isolcpus=1");
	ASSERT((it = item(&r, "cmdline.nohz_full")) != NULL);
	ASSERT_STREQ(it->state, "not set");
	ASSERT((it = item(&r, "numa.node0.cpus")) != NULL);
	ASSERT_STREQ(it->state, "0-1");
	ASSERT((it = item(&r, "microcode")) != NULL);
	ASSERT_STREQ(it->state, "0xd0003b9");
	ASSERT((it = item(&r, "memcg.version")) != NULL);
	ASSERT_STREQ(it->state, "v2");
	ASSERT_INTEQ(it->status, HOST_READY);
	ASSERT((it = item(&r, "memcg.controllers")) != NULL);
	ASSERT_STREQ(it->state, "v2 /sys/fs/cgroup: cpuset cpu io memory pids");
	/* governor cpu0, no_turbo, smt, irqbalance */
	ASSERT_INTEQ(r.not_ready, 4);
	j = host_report_json(&r);
	ASSERT(json_is_false(json_object_get(j, "ready")));
	ASSERT_INTEQ(json_integer_value(json_object_get(j, "not_ready")), 4);
	ASSERT_INTEQ(json_array_size(json_object_get(j, "items")), r.n);
	json_decref(j);
	host_report_release(&r);
	free(root);
}

TEST(test_host__check_empty_root_is_unavailable_not_a_failure)
{
	char *root = xasprintf("%s/empty", test_tmpdir());
	struct host_report r;
	const struct host_item *it;
	size_t i;

	mkdir(root, 0755);
	host_check(&r, root, NULL);
	ASSERT((it = item(&r, "cpufreq")) != NULL);
	ASSERT_INTEQ(it->status, HOST_UNAVAILABLE);
	ASSERT(it->state == NULL);
	ASSERT((it = item(&r, "turbo")) != NULL);
	ASSERT_INTEQ(it->status, HOST_UNAVAILABLE);
	ASSERT((it = item(&r, "smt")) != NULL);
	ASSERT_INTEQ(it->status, HOST_UNAVAILABLE);
	ASSERT((it = item(&r, "thp.enabled")) != NULL);
	ASSERT_INTEQ(it->status, HOST_UNAVAILABLE);
	/* Nothing made up: an unavailable item has no state. */
	for (i = 0; i < r.n; i++)
		if (r.v[i].status == HOST_UNAVAILABLE)
			ASSERT_MSG(r.v[i].state == NULL, "%s has state %s",
			    r.v[i].name, r.v[i].state);
	/* Without a memory controller a memcg bench host is not ready. */
	ASSERT((it = item(&r, "memcg.version")) != NULL);
	ASSERT_INTEQ(it->status, HOST_NOT_READY);
	ASSERT_INTEQ(r.not_ready, 1);
	host_report_release(&r);
	free(root);
}

static struct runner_config *
runner_cfg(const char *text)
{
	char *p = xasprintf("%s/runner-%d.yaml", test_tmpdir(), rand());
	struct runner_config *cfg = NULL;
	struct cfg_errors errs = { 0 };
	FILE *f = fopen(p, "w");

	fputs(text, f);
	fclose(f);
	if (config_load_runner(&cfg, p, &errs) != 0) {
		size_t i;

		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msg[i]);
	}
	cfg_errors_free(&errs);
	free(p);
	return cfg;
}

#define RUNNER_HEAD                                              \
	"server: http://127.0.0.1:1\nname: r1\ntoken_file: /x\n" \
	"workdir: /tmp\n"

TEST(test_host__profile_from_config_judges_the_check)
{
	char *root = fake_host("profile");
	struct runner_config *cfg = runner_cfg(RUNNER_HEAD
	    "host:\n  governor: powersave\n  turbo: on\n  thp: never\n"
	    "  smt: any\n  stop_irqbalance: false\n  irq_cpus: \"0\"\n");
	struct host_report r;
	const struct host_item *it;

	ASSERT(cfg != NULL);
	host_check(&r, root, cfg);
	ASSERT_INTEQ(item(&r, "cpu0.governor")->status, HOST_READY);
	ASSERT_INTEQ(item(&r, "cpu1.governor")->status, HOST_NOT_READY);
	ASSERT_INTEQ(item(&r, "turbo.intel_no_turbo")->status, HOST_READY);
	ASSERT_INTEQ(item(&r, "smt")->status, HOST_INFO);
	ASSERT_INTEQ(item(&r, "irqbalance")->status, HOST_INFO);
	ASSERT((it = item(&r, "thp.enabled")) != NULL);
	ASSERT_INTEQ(it->status, HOST_NOT_READY);
	ASSERT((it = item(&r, "irq.affinity")) != NULL);
	ASSERT_INTEQ(it->status, HOST_NOT_READY);
	ASSERT_STREQ(it->note, "2 not on irq_cpus 0 (host tune moves them)");
	ASSERT_INTEQ(r.not_ready, 3);
	host_report_release(&r);
	runner_config_free(cfg);
	free(root);
}

static const char *const knobs[] = {
	"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
	"/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
	"/sys/devices/system/cpu/intel_pstate/no_turbo",
	"/sys/kernel/mm/transparent_hugepage/enabled",
	"/sys/kernel/mm/transparent_hugepage/defrag",
	"/proc/irq/5/smp_affinity_list",
	"/proc/irq/9/smp_affinity_list",
	NULL,
};

TEST(test_host__tune_then_reset_restores_byte_for_byte)
{
	char *root = fake_host("tune");
	char *state = xasprintf("%s/tune-state.json", test_tmpdir());
	struct runner_config *cfg = runner_cfg(RUNNER_HEAD
	    "host:\n  thp: never\n  thp_defrag: defer\n  irq_cpus: \"0\"\n");
	struct buf log = BUF_INIT(1 << 20);
	struct err e = { 0 };
	char *before[8], *s;
	struct host_report r;
	size_t i;

	ASSERT(cfg != NULL);
	for (i = 0; knobs[i] != NULL; i++)
		before[i] = slurp(root, knobs[i]);
	ASSERT_MSG(
	    host_tune(root, cfg, state, &log, &e) == 0, "%s", err_msg(&e));
	ASSERT(access(state, F_OK) == 0);
	s = slurp(root, knobs[0]);
	ASSERT_STREQ(s, "performance\n");
	free(s);
	s = slurp(root, "/sys/devices/system/cpu/intel_pstate/no_turbo");
	ASSERT_STREQ(s, "1\n");
	free(s);
	s = slurp(root, "/sys/kernel/mm/transparent_hugepage/enabled");
	ASSERT_STREQ(s, "always madvise [never]\n");
	free(s);
	s = slurp(root, "/sys/kernel/mm/transparent_hugepage/defrag");
	ASSERT_STREQ(s, "always [defer] defer+madvise madvise never\n");
	free(s);
	s = slurp(root, "/proc/irq/5/smp_affinity_list");
	ASSERT_STREQ(s, "0\n");
	free(s);
	ASSERT(strstr(log.data,
	           "cpu1/cpufreq/scaling_governor: already "
	           "performance") != NULL);
	/* The fake irqbalance is no process: left alone, said so. */
	ASSERT(
	    strstr(log.data, "irqbalance: pid 4242 under a fake root") != NULL);
	/* Tuned now: every knob it manages is ready. */
	host_check(&r, root, cfg);
	ASSERT_INTEQ(item(&r, "cpu0.governor")->status, HOST_READY);
	ASSERT_INTEQ(item(&r, "thp.enabled")->status, HOST_READY);
	ASSERT_INTEQ(item(&r, "irq.affinity")->status, HOST_READY);
	host_report_release(&r);
	/* A second tune would save the tuned state as "previous". */
	err_clear(&e);
	ASSERT(host_tune(root, cfg, state, &log, &e) == -1);
	ASSERT(strstr(err_msg(&e), "tuned already") != NULL);

	buf_release(&log);
	log = BUF_INIT(1 << 20);
	err_clear(&e);
	ASSERT_MSG(host_reset(root, state, &log, &e) == 0, "%s: %s",
	    err_msg(&e), log.data);
	for (i = 0; knobs[i] != NULL; i++) {
		s = slurp(root, knobs[i]);
		ASSERT_MSG(strcmp(s, before[i]) == 0, "%s: \"%s\" != \"%s\"",
		    knobs[i], s, before[i]);
		free(s);
		free(before[i]);
	}
	ASSERT(access(state, F_OK) != 0);
	ASSERT(strstr(log.data, "reset: 6 restored, 0 failed") != NULL);
	buf_release(&log);
	runner_config_free(cfg);
	free(state);
	free(root);
}

TEST(test_host__reset_reports_a_file_that_does_not_read_back)
{
	char *root = fake_host("reset-bad");
	char *state = xasprintf("%s/bad-state.json", test_tmpdir());
	struct buf log = BUF_INIT(1 << 20);
	struct err e = { 0 };
	FILE *f = fopen(state, "w");

	/* Saved text no write can produce: the check must catch it. */
	fputs("{\"files\": [{\"path\": \"/proc/irq/9/smp_affinity_list\", "
	      "\"saved\": \"1 \\n\"}]}",
	    f);
	fclose(f);
	ASSERT(host_reset(root, state, &log, &e) == -1);
	ASSERT(strstr(log.data, "/proc/irq/9/smp_affinity_list: reads back") !=
	    NULL);
	ASSERT(access(state, F_OK) == 0); /* kept for another try */
	err_clear(&e);
	ASSERT(host_reset(root, "/nonexistent/state.json", &log, &e) == -1);
	ASSERT(strstr(err_msg(&e), "nothing to reset") != NULL);
	buf_release(&log);
	free(state);
	free(root);
}

TEST(test_host__state_records_what_the_run_ran_under)
{
	char *root = fake_host("state");
	json_t *st = host_state(root, "1");
	json_t *empty;
	char *er = xasprintf("%s/state-empty", test_tmpdir());

	ASSERT_STREQ(json_string_value(json_object_get(st, "governor")),
	    "mixed: powersave,performance");
	ASSERT_STREQ(json_string_value(json_object_get(st, "turbo")), "on");
	ASSERT_STREQ(json_string_value(json_object_get(st, "thp")), "madvise");
	ASSERT_STREQ(json_string_value(json_object_get(st, "smt")), "on");
	ASSERT_STREQ(
	    json_string_value(json_object_get(st, "microcode")), "0xd0003b9");
	ASSERT_STREQ(
	    json_string_value(json_object_get(st, "kernel")), "6.1.0-18-amd64");
	ASSERT_STREQ(json_string_value(json_object_get(st, "pinning")), "1");
	ASSERT(strstr(json_string_value(json_object_get(st, "cmdline")),
	           "isolcpus=1") != NULL);
	json_decref(st);
	mkdir(er, 0755);
	empty = host_state(er, NULL);
	ASSERT_STREQ(
	    json_string_value(json_object_get(empty, "governor")), "unknown");
	ASSERT_STREQ(
	    json_string_value(json_object_get(empty, "turbo")), "unknown");
	ASSERT_STREQ(
	    json_string_value(json_object_get(empty, "microcode")), "unknown");
	ASSERT_STREQ(
	    json_string_value(json_object_get(empty, "pinning")), "none");
	json_decref(empty);
	free(er);
	free(root);
}

TEST(test_host__cpus_resolve_nodes_and_online_cpus)
{
	char *root = fake_host("cpus"), *out = NULL;
	struct err e = { 0 };

	test_write_file(root, "/sys/devices/system/node/node1/cpulist", "\n");
	ASSERT(host_cpus_resolve(&out, root, "node:0", &e) == 0);
	ASSERT_STREQ(out, "0-1");
	free(out);
	ASSERT(host_cpus_resolve(&out, root, "1", &e) == 0);
	ASSERT_STREQ(out, "1");
	free(out);
	ASSERT(host_cpus_resolve(&out, root, "node:7", &e) == -1);
	ASSERT(strstr(err_msg(&e), "no NUMA node 7") != NULL);
	err_clear(&e);
	ASSERT(host_cpus_resolve(&out, root, "node:1", &e) == -1);
	ASSERT(strstr(err_msg(&e), "has no CPUs") != NULL);
	err_clear(&e);
	ASSERT(host_cpus_resolve(&out, root, "0-3", &e) == -1);
	ASSERT(strstr(err_msg(&e), "CPU 2 is not online") != NULL);
	ASSERT(out == NULL);
	free(root);
}

TEST(test_host__thp_set_restore_and_drop_caches_on_fake_root)
{
	char *root = fake_host("thp"), *s;
	char saved[256];
	struct err e = { 0 };

	ASSERT_INTEQ(host_thp_set(saved, sizeof(saved), root, "keep", &e), 1);
	ASSERT_INTEQ(
	    host_thp_set(saved, sizeof(saved), root, "madvise", &e), 1);
	ASSERT_INTEQ(host_thp_set(saved, sizeof(saved), root, "never", &e), 0);
	s = slurp(root, "/sys/kernel/mm/transparent_hugepage/enabled");
	ASSERT_STREQ(s, "always madvise [never]\n");
	free(s);
	ASSERT(host_thp_restore(root, saved, &e) == 0);
	s = slurp(root, "/sys/kernel/mm/transparent_hugepage/enabled");
	ASSERT_STREQ(s, "always [madvise] never\n");
	free(s);
	test_write_file(root, "/proc/sys/vm/drop_caches", "");
	ASSERT(host_drop_caches(root, &e) == 0);
	s = slurp(root, "/proc/sys/vm/drop_caches");
	ASSERT_STREQ(s, "3\n");
	free(s);
	free(root);
}

/*
 * Other work's share between two /proc/stat samples: the busy ticks
 * (steal too, idle and iowait not) less the run's own CPU time, over
 * all ticks; clamped; unknown (NAN) without a readable /proc/stat.  And
 * on this machine for real: a spin of the caller's own is not counted.
 */
TEST(test_host__other_cpu_share)
{
	char *root = xasprintf("%s/cpustat", test_tmpdir());
	struct host_cpu_sample a, b;
	long hz = sysconf(_SC_CLK_TCK);
	double own = 100.0 / (double)hz, pct, t0;
	volatile double sink = 0;
	struct timespec ts;

	/* user nice system idle iowait irq softirq steal guest gnice */
	test_write_file(root, "/proc/stat",
	    "cpu  1000 0 500 8000 100 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n");
	host_cpu_sample(&a, root);
	ASSERT(a.ok);
	ASSERT_INTEQ(a.busy, 1500);
	ASSERT_INTEQ(a.total, 9600);
	/* 1000 ticks pass: 300 busy (200 user, 50 irq, 50 steal), 700
	 * idle; 100 of them were the run's own. */
	test_write_file(
	    root, "/proc/stat", "cpu  1200 0 500 8650 150 50 0 50 0 0\n");
	host_cpu_sample(&b, root);
	ASSERT_INTEQ(b.busy, 1800);
	ASSERT_INTEQ(b.total, 10600);
	pct = host_other_cpu_pct(&a, &b, own);
	ASSERT(fabs(pct - 20.0) < 1e-9);
	ASSERT(fabs(host_other_cpu_pct(&a, &b, 0) - 30.0) < 1e-9);
	ASSERT(host_other_cpu_pct(&a, &b, 10 * own) == 0);
	ASSERT(isnan(host_other_cpu_pct(&b, &a, 0)));
	test_write_file(root, "/proc/stat", "intr 5\n");
	host_cpu_sample(&b, root);
	ASSERT(!b.ok);
	ASSERT(isnan(host_other_cpu_pct(&a, &b, 0)));
	free(root);

	/* Real: 0.3 s of our own spinning, which we subtract. */
	host_cpu_sample(&a, "");
	ASSERT(a.ok);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	t0 = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	do {
		sink += 1;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while ((double)ts.tv_sec + ts.tv_nsec / 1e9 - t0 < 0.3);
	host_cpu_sample(&b, "");
	pct = host_other_cpu_pct(
	    &a, &b, (double)ts.tv_sec + ts.tv_nsec / 1e9 - t0);
	ASSERT(pct >= 0 && pct <= 100);
	ASSERT(!isnan(host_other_cpu_pct(&a, &b, 0)));
	ASSERT(host_other_cpu_pct(&a, &b, 0) >= pct);
}

TEST(test_host__pin_the_calling_thread_for_real)
{
	struct host_pin saved;
	struct err e = { 0 };
	cpu_set_t now, before;
	const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	ASSERT(sched_getaffinity(0, sizeof(before), &before) == 0);
	ASSERT_MSG(host_pin(&saved, "0", &e) == 0, "%s", err_msg(&e));
	ASSERT(sched_getaffinity(0, sizeof(now), &now) == 0);
	ASSERT_INTEQ(CPU_COUNT(&now), 1);
	ASSERT(CPU_ISSET(0, &now));
	host_unpin(&saved);
	ASSERT(sched_getaffinity(0, sizeof(now), &now) == 0);
	ASSERT(CPU_EQUAL(&now, &before));
	ASSERT(host_pin(&saved, "x", &e) == -1);
	/* A CPU this machine lacks is refused by the kernel, not ignored. */
	err_clear(&e);
	ASSERT(host_pin(&saved, "4095", &e) == -1 || ncpu >= 4096);
}
