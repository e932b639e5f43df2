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
#include "runners/profile.h"
#include "tests/unit/test.h"

static const char *real_report =
    "tests/data/perf/report-cpu-clock-memcg-v1.txt";

static int
load(struct buf *b, const char *rel)
{
	return files_read(b, test_srcpath(rel), 64 << 20);
}

static double
pct_of(const struct profile_report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->syms[i].name, name) == 0)
			return r->syms[i].pct;
	return -1;
}

/* The captured report (see tests/data/perf/README). */
TEST(test_profile__parses_real_report)
{
	struct buf b = BUF_INIT(64 << 20);
	struct profile_report r;
	double share = -1;
	size_t i;
	double sum = 0;

	ASSERT(load(&b, real_report) == 0);
	profile_report_init(&r);
	ASSERT_MSG(profile_parse_report(&r, b.data, b.len) == 0, "%s",
	    err_msg(&r.err));
	ASSERT_STREQ(r.event, "cpu-clock");
	ASSERT_STREQ(r.samples, "11K");
	/* 1273 lines: 11 header lines, 3 lines of tip, 2 blank. */
	ASSERT_INTEQ(r.n, 1257);
	ASSERT(r.syms[0].pct >= r.syms[1].pct);
	ASSERT_STREQ(r.syms[0].name, "pvm_irq_enable");
	ASSERT_INTEQ(r.syms[0].space, 'k');
	ASSERT_NEAR(r.syms[0].pct, 25.80, 1e-9);
	ASSERT_NEAR(pct_of(&r, "__memmove_avx512_unaligned_erms"), 11.36, 1e-9);
	ASSERT_INTEQ(r.syms[2].space, '.');
	ASSERT_NEAR(pct_of(&r, "page_counter_uncharge"), 0.53, 1e-9);
	ASSERT_NEAR(pct_of(&r, "refill_stock"), 0.01, 1e-9);
	for (i = 0; i < r.n; i++)
		sum += r.syms[i].pct;
	/* perf rounds each line to 0.01: 1257 roundings. */
	ASSERT_NEAR(sum, 100.0, 1257 * 0.005);
	/*
	 * Charge path by the defaults: page_counter_uncharge 0.53,
	 * page_counter_charge 0.22, try_charge_memcg 0.04, mod_memcg_state
	 * 0.03, obj_cgroup_charge_pages 0.03, page_counter_try_charge 0.01,
	 * refill_stock 0.01 = 0.87 (grep of the file).
	 */
	ASSERT_INTEQ(
	    profile_charge_share(&share, &r, profile_default_symbols()), 7);
	ASSERT_NEAR(share, 0.87, 1e-9);
	profile_report_release(&r);
	buf_release(&b);
}

TEST(test_profile__globs)
{
	const char *const *d = profile_default_symbols();
	const char *const only[] = { "refill_stock", NULL };

	ASSERT(profile_symbol_matches("mem_cgroup_charge_skmem", d));
	ASSERT(profile_symbol_matches("page_counter_try_charge", d));
	ASSERT(profile_symbol_matches("obj_cgroup_charge", d));
	ASSERT(!profile_symbol_matches("mem_cgroup_uncharge", d));
	ASSERT(!profile_symbol_matches("xpage_counter_charge", d));
	ASSERT(profile_symbol_matches("refill_stock", only));
	ASSERT(!profile_symbol_matches("consume_stock", only));
}

TEST(test_profile__broken_and_userspace_only)
{
	struct profile_report r;
	double share = 42;
	const char user_only[] = "# Samples: 3 of event 'cpu-clock'\n#\n"
	                         "    90.00%  [.] main\n    10.00%  [.] "
	                         "try_charge_memcg\n";
	const char garbage[] = "# header\n    12.5  [k] foo\n";
	const char empty_samples[] = "# Samples: 0 of event 'cpu-clock'\n";

	profile_report_init(&r);
	ASSERT(profile_parse_report(&r, garbage, strlen(garbage)) == -1);
	ASSERT(strstr(err_msg(&r.err), "line 2") != NULL);
	ASSERT(profile_parse_report(&r, "", 0) == -1);
	ASSERT(strstr(err_msg(&r.err), "empty") != NULL);
	ASSERT(profile_parse_report(&r, empty_samples, strlen(empty_samples)) ==
	    -1);
	ASSERT(strstr(err_msg(&r.err), "no samples") != NULL);
	ASSERT(profile_parse_report(&r, user_only, strlen(user_only)) == 0);
	ASSERT_INTEQ(r.n, 2);
	/* A user-space symbol of the same name is not the kernel's: no
	 * kernel sample at all, so the share is unknown, not 0. */
	ASSERT_INTEQ(
	    profile_charge_share(&share, &r, profile_default_symbols()),
	    ERR_NOTFOUND);
	ASSERT_NEAR(share, 42, 0);
	profile_report_release(&r);
}

TEST(test_profile__kallsyms_check)
{
	char *p = xasprintf("%s/kallsyms", test_tmpdir());
	char reason[256];
	FILE *f;

	f = fopen(p, "w");
	ASSERT(f);
	fputs("0000000000000000 T startup_64\n0000000000000000 t "
	      "try_charge_memcg\n",
	    f);
	fclose(f);
	ASSERT_INTEQ(profile_kallsyms_check(
	                 p, profile_default_symbols(), reason, sizeof(reason)),
	    -1);
	ASSERT(strstr(reason, "kptr_restrict") != NULL);
	f = fopen(p, "w");
	fputs("ffffffff81000000 T startup_64\nffffffff81000100 T other\n", f);
	fclose(f);
	ASSERT_INTEQ(profile_kallsyms_check(
	                 p, profile_default_symbols(), reason, sizeof(reason)),
	    0);
	ASSERT(strstr(reason, "none of the charge-path symbols") != NULL);
	ASSERT_INTEQ(profile_kallsyms_check("/proc/kallsyms",
	                 profile_default_symbols(), reason, sizeof(reason)),
	    1);
	free(p);
}

TEST(test_profile__missing_perf_is_unknown)
{
	struct profile_opts o = { 0 };
	struct profile_result res;
	struct profile *p;

	o.perf = "/nonexistent/perf";
	o.dir = test_tmpdir();
	p = profile_start(&o);
	profile_stop(p, &res);
	ASSERT(!res.known);
	ASSERT(strstr(res.reason, "perf not found") != NULL);
	ASSERT(res.blob && strstr(res.blob, "\"share_pct\":null") != NULL);
	profile_result_release(&res);
	profile_free(p);
}

TEST(test_profile__kernel_without_symbols_is_unknown)
{
	struct profile_opts o = { 0 };
	const char *const syms[] = { "no_such_symbol_in_any_kernel", NULL };
	struct profile_result res;
	struct profile *p;

	o.dir = test_tmpdir();
	o.symbols = syms;
	p = profile_start(&o);
	profile_stop(p, &res);
	ASSERT(!res.known);
	ASSERT_MSG(strstr(res.reason, "none of the charge-path") != NULL, "%s",
	    res.reason);
	profile_result_release(&res);
	profile_free(p);
}

/*
 * A real perf record of a child in a nested cgroup that writes 256 MiB
 * to a file (page cache charged to its memcg): scope is the cgroup when the
 * host has a cgroup2 mount, the share is known, the blob is JSON.
 */
TEST(test_profile__real_record_in_cgroup)
{
	struct cgroup_sys s;
	char *path = xasprintf("/pwtest-pf-%d", (int)getpid());
	struct cgroup_spec spec = { path, 0, 0 };
	struct cgroup *cg = NULL;
	struct err e = { 0 };
	struct profile_opts o = { 0 };
	struct profile_result res;
	struct profile *p;
	char *of = xasprintf("of=%s/ddout", test_tmpdir());
	char *argv[] = { "dd", "if=/dev/zero", of, "bs=1M", "count=256",
		"status=none", NULL };
	int fds[CGROUP_MAX_FDS], n, i, status;
	char *dir = xasprintf("%s/prof", test_tmpdir());
	json_t *j;
	pid_t pid;

	ASSERT(mkdir(dir, 0755) == 0);
	cgroup_detect(&s);
	ASSERT_MSG(s.kind != CGROUP_NONE, "%s", s.reason);
	ASSERT_MSG(cgroup_place(&cg, &s, &spec, &e) == 0, "%s", err_msg(&e));
	o.dir = dir;
	o.cgroup = cgroup_perf_name(cg);
	p = profile_start(&o);
	n = cgroup_procs_fds(cg, fds, &e);
	ASSERT(n > 0);
	pid = fork();
	if (pid == 0) {
		if (cgroup_attach_fds(fds, n))
			_exit(126);
		/* perf record takes a moment to start sampling, longer on a
		 * loaded host, and dd is done in a tenth of a second: give
		 * it that moment (a benchmark's runs last seconds). */
		usleep(500 * 1000);
		execvp(argv[0], argv);
		_exit(127);
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	ASSERT(waitpid(pid, &status, 0) == pid);
	profile_stop(p, &res);
	profile_free(p);
	printf("  # known=%d share=%.3f%% event=%s scope=%s reason=%s\n",
	    res.known, res.share_pct, res.event, res.scope, res.reason);
	ASSERT_MSG(res.known, "%s", res.reason);
	ASSERT(res.share_pct >= 0 && res.share_pct <= 100);
	if (o.cgroup)
		ASSERT(strstr(res.scope, "cgroup") != NULL);
	ASSERT(res.blob != NULL);
	j = pwjson_parse(res.blob, strlen(res.blob), &e);
	ASSERT_MSG(j != NULL, "%s", err_msg(&e));
	ASSERT(json_array_size(json_object_get(j, "top")) > 0);
	ASSERT(json_array_size(json_object_get(j, "top")) <= PROFILE_TOP);
	json_decref(j);
	profile_result_release(&res);
	ASSERT(cgroup_teardown(cg, &e) == 0);
	cgroup_free(cg);
	cgroup_sys_release(&s);
	free(dir);
	free(path);
	free(of);
}
