#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/xalloc.h"
#include "config/config.h"
#include "tests/unit/test.h"

#include <sys/stat.h>

/* A failed load leaves *out NULL. */
#define ASSERT_NULL_IF_FAILED(rc, p)                                    \
	do {                                                            \
		if ((rc) != 0 && (p) != NULL) {                         \
			test_fail(__FILE__, __LINE__, "*out not NULL"); \
			return -2;                                      \
		}                                                       \
	} while (0)

static int
mkdir_p(const char *p)
{
	return mkdir(p, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* Writes text to a file in the scratch directory; returns its path. */
static const char *
write_tmp(const char *name, const char *text)
{
	static char path[8][512];
	static int slot;
	char *p = path[slot++ % 8];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", test_tmpdir(), name);
	f = fopen(p, "w");
	if (f == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	return p;
}

static int
load_any(const char *path, struct cfg_errors *errs)
{
	enum cfg_kind k = config_sniff_kind(path, errs);
	struct daemon_config *d;
	struct job_config *j;
	struct runner_config *r;
	int rc = -1;

	switch (k) {
	case CFG_KIND_DAEMON:
		rc = config_load_daemon(&d, path, errs);
		daemon_config_free(d);
		break;
	case CFG_KIND_JOB:
		rc = config_load_job(&j, path, errs);
		job_config_free(j);
		break;
	case CFG_KIND_RUNNER:
		rc = config_load_runner(&r, path, errs);
		runner_config_free(r);
		break;
	case CFG_KIND_UNKNOWN:
		break;
	}
	return rc;
}

/* Every file under config/examples loads without an error. */
TEST(test_config__every_example_passes)
{
	static const char *const dirs[] = { "config/examples",
		"config/examples/jobs" };
	size_t i, nfiles = 0;

	for (i = 0; i < 2; i++) {
		DIR *dir = opendir(test_srcpath(dirs[i]));
		struct dirent *de;

		ASSERT(dir != NULL);
		while ((de = readdir(dir)) != NULL) {
			struct cfg_errors errs = { 0 };
			char path[1024];
			size_t len = strlen(de->d_name);
			int rc;

			if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
				continue;
			snprintf(
			    path, sizeof(path), "%s/%s", dirs[i], de->d_name);
			rc = load_any(test_srcpath(path), &errs);
			if (rc != 0 || errs.n != 0) {
				test_fail(__FILE__, __LINE__, "%s: %s", path,
				    errs.n ? errs.msg[0] : "no kind");
				cfg_errors_free(&errs);
				closedir(dir);
				return;
			}
			nfiles++;
		}
		closedir(dir);
	}
	ASSERT(nfiles >= 7);
}

/* Loads a daemon file of text: 0 or -1; errs keeps the messages. */
static int
load_daemon_text(const char *text, struct cfg_errors *errs)
{
	struct daemon_config *d = NULL;
	int rc =
	    config_load_daemon(&d, write_tmp("cleartext.yaml", text), errs);

	daemon_config_free(d);
	return rc;
}

/* Plain HTTP off loopback and SMTP AUTH without TLS load only when the
 * file says so (tests/data/config/bad/daemon-cleartext.yaml: refused). */
TEST(test_config__cleartext_said_explicitly)
{
	static const char *const ok[] = {
		"listen: 127.0.0.2:8080\n",
		"listen: \"[::1]:8080\"\n",
		"listen: localhost:8080\n",
		"listen: 0.0.0.0:8080\ninsecure_http: true\n",
		"listen: 10.0.0.1:8080\ntls:\n  cert_file: c.pem\n"
		"  key_file: k.pem\n",
		"listen: 127.0.0.1:1\nalerts:\n  email:\n    smtp: "
		"smtps://m:465\n    from: a@b\n    to: [c@d]\n    auth_file: "
		"a\n",
		"listen: 127.0.0.1:1\nalerts:\n  email:\n    smtp: "
		"smtp://m:25\n"
		"    from: a@b\n    to: [c@d]\n    auth_file: a\n    "
		"starttls: true\n",
		"listen: 127.0.0.1:1\nalerts:\n  email:\n    smtp: "
		"smtp://m:25\n"
		"    from: a@b\n    to: [c@d]\n    auth_file: a\n    "
		"insecure_auth: true\n",
	};
	static const char *const bad[] = { "listen: 10.0.0.1:8080\n",
		"listen: \"[::]:8080\"\n", "listen: perf.example.org:80\n",
		"listen: 128.0.0.1:80\n" };
	char text[512];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct cfg_errors errs = { 0 };

		snprintf(text, sizeof(text), "database: x.db\nmirrors: m\n%s",
		    ok[i]);
		ASSERT_INTEQ(load_daemon_text(text, &errs), 0);
		ASSERT_INTEQ(errs.n, 0);
		cfg_errors_free(&errs);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cfg_errors errs = { 0 };

		snprintf(text, sizeof(text), "database: x.db\nmirrors: m\n%s",
		    bad[i]);
		ASSERT_INTEQ(load_daemon_text(text, &errs), -1);
		ASSERT_INTEQ(errs.n, 1);
		ASSERT(strstr(errs.msg[0], "cleartext.yaml:3:9: listen: ") !=
		    NULL);
		ASSERT(strstr(errs.msg[0], "insecure_http: true") != NULL);
		cfg_errors_free(&errs);
	}
}

/* The example daemon's jobs: glob is relative to the daemon file. */
TEST(test_config__daemon_example_loads_its_jobs)
{
	struct cfg_errors errs = { 0 };
	struct daemon_config *d;
	struct job_config **jobs;
	size_t n, i;
	int seen_tcp = 0;

	ASSERT_INTEQ(config_load_daemon(&d,
	                 test_srcpath("config/examples/daemon.yaml"), &errs),
	    0);
	ASSERT_STREQ(d->listen, "127.0.0.1:8080");
	ASSERT_STREQ(d->jobs.v[0], "config/examples/jobs/*.yaml");
	ASSERT_INTEQ(d->ntrees, 2);
	ASSERT_INTEQ(d->trees[0].poll_s, 300);
	ASSERT_INTEQ(d->inboxes[0].poll_s, 600);
	ASSERT_STREQ(d->inboxes[0].branch, "mm-new");
	ASSERT_INTEQ(d->alerts.reply_to_series, 1);
	ASSERT_INTEQ(d->http_max_body, 8 << 20);
	ASSERT_INTEQ(d->http_max_pack, 64 << 20);
	ASSERT_INTEQ(d->lease_s, 60);
	ASSERT_INTEQ(config_load_jobs(&jobs, &n, d, &errs), 0);
	ASSERT_INTEQ(errs.n, 0);
	ASSERT(n >= 4);
	for (i = 0; i < n; i++)
		if (strcmp(jobs[i]->name, "tcp_rr-memcg") == 0)
			seen_tcp = 1;
	ASSERT(seen_tcp);
	config_jobs_free(jobs, n);
	daemon_config_free(d);
}

TEST(test_config__job_fields_and_defaults)
{
	static const char text[] = "name: t\n"
	                           "parser: neper\n"
	                           "command: [tcp_rr, -F, \"{flows}\"]\n"
	                           "matrix:\n"
	                           "  flows: [10, 20]\n";
	struct cfg_errors errs = { 0 };
	struct job_config *j;

	ASSERT_INTEQ(
	    config_parse_job(&j, "t.yaml", text, strlen(text), &errs), 0);
	ASSERT_STREQ(j->name, "t");
	ASSERT_INTEQ(j->parser, CFG_PARSER_NEPER);
	ASSERT_INTEQ(j->runs, 5);
	ASSERT_INTEQ(j->max_runs, 24);
	ASSERT_INTEQ(j->timeout_s, 600);
	ASSERT_INTEQ(j->trigger.every_commit, 1);
	ASSERT_INTEQ(j->baseline, CFG_BASELINE_PARENT);
	ASSERT(j->baseline_ref == NULL);
	ASSERT_STREQ(j->kernel.config, "defconfig");
	ASSERT_STREQ(j->kernel.compiler, "gcc");
	ASSERT_INTEQ(j->memory_max, 0);
	ASSERT_INTEQ(j->profile, 0);
	ASSERT_INTEQ(j->nmetrics, 0);
	ASSERT_INTEQ(j->naxes, 1);
	ASSERT_INTEQ(j->axes[0].values.n, 2);
	job_config_free(j);
}

TEST(test_config__tcp_rr_example_values)
{
	struct cfg_errors errs = { 0 };
	struct job_config *j;

	ASSERT_INTEQ(
	    config_load_job(
	        &j, test_srcpath("config/examples/jobs/tcp_rr.yaml"), &errs),
	    0);
	ASSERT_STREQ(j->command.v[0], "tcp_rr");
	ASSERT_INTEQ(j->nmetrics, 2);
	ASSERT_STREQ(j->metrics[1].name, "latency_p99");
	ASSERT_INTEQ(j->metrics[1].better, CFG_BETTER_LOWER);
	ASSERT_NEAR(j->metrics[1].min_effect_pct, 3.0, 1e-9);
	ASSERT_STREQ(j->kernel.fragment.v[1], "CONFIG_MEMCG_KMEM=y");
	ASSERT_INTEQ(j->timeout_s, 600);
	job_config_free(j);
}

TEST(test_config__expand_with_exclude)
{
	static const char text[] = "name: t\n"
	                           "parser: fio\n"
	                           "command: [fio]\n"
	                           "matrix:\n"
	                           "  a: [1, 2, 3]\n"
	                           "  b: [x, y]\n"
	                           "exclude:\n"
	                           "  - {a: 2}\n"
	                           "  - {a: 3, b: x}\n";
	struct cfg_errors errs = { 0 };
	struct job_config *j;
	struct cfg_point *pts;
	size_t n;

	ASSERT_INTEQ(
	    config_parse_job(&j, "t.yaml", text, strlen(text), &errs), 0);
	ASSERT_INTEQ(j->nexclude, 2);
	ASSERT_STREQ(j->exclude[1].label, "a=3,b=x");
	config_expand(&pts, &n, j);
	ASSERT_INTEQ(n, 3);
	ASSERT_STREQ(pts[0].label, "a=1,b=x");
	ASSERT_STREQ(pts[1].label, "a=1,b=y");
	ASSERT_STREQ(pts[2].label, "a=3,b=y");
	ASSERT_STREQ(config_point_get(&pts[2], "b"), "y");
	ASSERT(config_point_get(&pts[2], "c") == NULL);
	config_points_free(pts, n);
	job_config_free(j);
}

TEST(test_config__expand_without_matrix_is_one_point)
{
	static const char text[] = "name: t\nparser: json\ncommand: [x]\n";
	struct cfg_errors errs = { 0 };
	struct job_config *j;
	struct cfg_point *pts;
	size_t n;

	ASSERT_INTEQ(
	    config_parse_job(&j, "t.yaml", text, strlen(text), &errs), 0);
	config_expand(&pts, &n, j);
	ASSERT_INTEQ(n, 1);
	ASSERT_INTEQ(pts[0].n, 0);
	ASSERT_STREQ(pts[0].label, "");
	config_points_free(pts, n);
	job_config_free(j);
}

TEST(test_config__render_argv)
{
	char *tv[] = { "tcp_rr", "-H", "{server}", "-F", "{flows}",
		"--x={flows}/{threads}{", "{not a placeholder}", "" };
	struct strlist tmpl = { tv, 8 };
	char *keys[] = { "flows", "threads" }, *vals[] = { "10", "2" };
	struct cfg_point p = { 2, keys, vals, NULL };
	const char *extra[] = { "server", "127.0.0.1", NULL };
	char **argv, err[256];

	ASSERT_INTEQ(
	    config_render_argv(&argv, &tmpl, &p, extra, err, sizeof(err)), 0);
	ASSERT_STREQ(argv[0], "tcp_rr");
	ASSERT_STREQ(argv[2], "127.0.0.1");
	ASSERT_STREQ(argv[4], "10");
	ASSERT_STREQ(argv[5], "--x=10/2{");
	ASSERT_STREQ(argv[6], "{not a placeholder}");
	ASSERT_STREQ(argv[7], "");
	ASSERT(argv[8] == NULL);
	config_argv_free(argv);

	tv[2] = "{workdir}";
	ASSERT_INTEQ(
	    config_render_argv(&argv, &tmpl, &p, extra, err, sizeof(err)), -1);
	ASSERT(argv == NULL);
	ASSERT_STREQ(err, "argument 2 \"{workdir}\": no value for {workdir}");
}

TEST(test_config__scalar_parsers)
{
	int64_t v;
	double d;
	int b;
	enum cfg_parser p;

	ASSERT_INTEQ(config_parse_duration(&v, "90s"), 0);
	ASSERT_INTEQ(v, 90);
	ASSERT_INTEQ(config_parse_duration(&v, "5m"), 0);
	ASSERT_INTEQ(v, 300);
	ASSERT_INTEQ(config_parse_duration(&v, "1h30m"), 0);
	ASSERT_INTEQ(v, 5400);
	ASSERT_INTEQ(config_parse_duration(&v, "2d"), 0);
	ASSERT_INTEQ(v, 172800);
	ASSERT_INTEQ(config_parse_duration(&v, "45"), 0);
	ASSERT_INTEQ(v, 45);
	ASSERT_INTEQ(config_parse_duration(&v, ""), -1);
	ASSERT_INTEQ(config_parse_duration(&v,
	                 "5"
	                 "x"),
	    -1);
	ASSERT_INTEQ(config_parse_duration(&v, "m"), -1);
	ASSERT_INTEQ(config_parse_duration(&v, "1.5h"), -1);
	ASSERT_INTEQ(config_parse_duration(&v, "99999999999999999999s"), -1);

	ASSERT_INTEQ(config_parse_size(&v, "64M"), 0);
	ASSERT_INTEQ(v, 64 << 20);
	ASSERT_INTEQ(config_parse_size(&v, "4k"), 0);
	ASSERT_INTEQ(v, 4096);
	ASSERT_INTEQ(config_parse_size(&v, "2GiB"), 0);
	ASSERT_INTEQ(v, (int64_t)2 << 30);
	ASSERT_INTEQ(config_parse_size(&v, "100"), 0);
	ASSERT_INTEQ(v, 100);
	ASSERT_INTEQ(config_parse_size(&v, "100B"), 0);
	ASSERT_INTEQ(config_parse_size(&v, "1X"), -1);
	ASSERT_INTEQ(config_parse_size(&v, "M"), -1);
	ASSERT_INTEQ(config_parse_size(&v, "-1M"), -1);
	ASSERT_INTEQ(config_parse_size(&v, "99999999999T"), -1);

	ASSERT_INTEQ(config_parse_percent(&d, "2%"), 0);
	ASSERT_NEAR(d, 2.0, 1e-12);
	ASSERT_INTEQ(config_parse_percent(&d, "0.5%"), 0);
	ASSERT_NEAR(d, 0.5, 1e-12);
	ASSERT_INTEQ(config_parse_percent(&d, "2"), -1);
	ASSERT_INTEQ(config_parse_percent(&d, "%"), -1);
	ASSERT_INTEQ(config_parse_percent(&d, "2%%"), -1);

	ASSERT_INTEQ(config_parse_bool(&b, "yes"), 0);
	ASSERT_INTEQ(b, 1);
	ASSERT_INTEQ(config_parse_bool(&b, "false"), 0);
	ASSERT_INTEQ(b, 0);
	ASSERT_INTEQ(config_parse_bool(&b, "1"), -1);

	ASSERT_INTEQ(config_parser_from_name(&p, "will-it-scale"), 0);
	ASSERT_INTEQ(p, CFG_PARSER_WIS);
	ASSERT_STREQ(config_parser_name(p), "will-it-scale");
	ASSERT_INTEQ(config_parser_from_name(&p, "keyvalue"), 0);
	ASSERT_STREQ(config_parser_name(p), "keyvalue");
	ASSERT_INTEQ(config_parser_from_name(&p, "Neper"), -1);
	ASSERT_STREQ(config_boot_name(CFG_BOOT_KEXEC), "kexec");
}

TEST(test_config__sniff_kind)
{
	struct cfg_errors errs = { 0 };
	const char *p;

	p = write_tmp("k1.yaml", "server: http://a:1\nname: r\n");
	ASSERT_INTEQ(config_sniff_kind(p, &errs), CFG_KIND_RUNNER);
	p = write_tmp("k2.yaml", "listen: a:1\n");
	ASSERT_INTEQ(config_sniff_kind(p, &errs), CFG_KIND_DAEMON);
	p = write_tmp("k3.yaml", "command: [x]\n");
	ASSERT_INTEQ(config_sniff_kind(p, &errs), CFG_KIND_JOB);
	ASSERT_INTEQ(errs.n, 0);
	/* A typo of the deciding key: the other keys decide. */
	p = write_tmp("k5.yaml", "lisen: a:1\ndatabase: /x.db\n");
	ASSERT_INTEQ(config_sniff_kind(p, &errs), CFG_KIND_DAEMON);
	p = write_tmp("k6.yaml", "sever: http://a:1\ntoken_file: t\n");
	ASSERT_INTEQ(config_sniff_kind(p, &errs), CFG_KIND_RUNNER);
	ASSERT_INTEQ(errs.n, 0);
	p = write_tmp("k4.yaml", "name: x\n");
	ASSERT_INTEQ(config_sniff_kind(p, &errs), CFG_KIND_UNKNOWN);
	ASSERT_INTEQ(errs.n, 1);
	ASSERT(
	    strstr(errs.msg[0], "k4.yaml:1:1: cannot tell the kind") != NULL);
	cfg_errors_free(&errs);
}

static int
load_kind(const char *kind, const char *path, struct cfg_errors *errs)
{
	struct daemon_config *d;
	struct job_config *j;
	struct runner_config *r;
	int rc;

	if (strcmp(kind, "daemon") == 0) {
		rc = config_load_daemon(&d, path, errs);
		ASSERT_NULL_IF_FAILED(rc, d);
		daemon_config_free(d);
	} else if (strcmp(kind, "runner") == 0) {
		rc = config_load_runner(&r, path, errs);
		ASSERT_NULL_IF_FAILED(rc, r);
		runner_config_free(r);
	} else {
		rc = config_load_job(&j, path, errs);
		ASSERT_NULL_IF_FAILED(rc, j);
		job_config_free(j);
	}
	return rc;
}

/*
 * The table of bad files: tests/data/config/bad/KIND-*.yaml, each ending
 * in "# expect: LINE:COL: message" lines that list every error the loader
 * must report, exactly and in order.
 */
TEST(test_config__bad_files_table)
{
	const char *dirpath = test_srcpath("tests/data/config/bad");
	DIR *dir = opendir(dirpath);
	struct dirent *de;
	size_t nfiles = 0;

	ASSERT(dir != NULL);
	while ((de = readdir(dir)) != NULL) {
		struct cfg_errors errs = { 0 };
		char path[1024], line[8192], kind[16];
		const char *dash;
		size_t len = strlen(de->d_name), nexp = 0, prefix;
		FILE *f;
		int rc;

		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
			continue;
		dash = strchr(de->d_name, '-');
		ASSERT(dash != NULL && (size_t)(dash - de->d_name) < 16);
		snprintf(kind, sizeof(kind), "%.*s", (int)(dash - de->d_name),
		    de->d_name);
		snprintf(path, sizeof(path), "%s/%s", dirpath, de->d_name);
		rc = load_kind(kind, path, &errs);
		ASSERT_MSG(rc == -1, "%s: loaded without error", path);
		f = fopen(path, "r");
		ASSERT(f != NULL);
		prefix = strlen(path) + 1;
		while (fgets(line, sizeof(line), f) != NULL) {
			line[strcspn(line, "\n")] = '\0';
			if (strncmp(line, "# expect: ", 10) != 0)
				continue;
			if (nexp >= errs.n ||
			    strncmp(errs.msg[nexp], path, prefix - 1) != 0 ||
			    strcmp(errs.msg[nexp] + prefix, line + 10) != 0) {
				test_fail(__FILE__, __LINE__,
				    "%s: expected \"%s\", got \"%s\"",
				    de->d_name, line + 10,
				    nexp < errs.n ? errs.msg[nexp] : "(none)");
				fclose(f);
				cfg_errors_free(&errs);
				closedir(dir);
				return;
			}
			nexp++;
		}
		fclose(f);
		if (nexp == 0 || nexp != errs.n) {
			test_fail(__FILE__, __LINE__,
			    "%s: %zu errors expected, %zu reported (first "
			    "extra: %s)",
			    de->d_name, nexp, errs.n,
			    errs.n > nexp ? errs.msg[nexp] : "-");
			cfg_errors_free(&errs);
			closedir(dir);
			return;
		}
		cfg_errors_free(&errs);
		nfiles++;
	}
	closedir(dir);
	ASSERT(nfiles >= 38);
}

TEST(test_config__empty_file_and_missing_file)
{
	struct cfg_errors errs = { 0 };
	struct job_config *j;
	char want[1024];
	const char *p = write_tmp("empty.yaml", "");

	ASSERT_INTEQ(config_load_job(&j, p, &errs), -1);
	ASSERT(j == NULL);
	ASSERT_INTEQ(errs.n, 1);
	snprintf(want, sizeof(want),
	    "%s:1:1: empty file (expected a mapping of keys)", p);
	ASSERT_STREQ(errs.msg[0], want);
	cfg_errors_free(&errs);

	ASSERT_INTEQ(config_load_job(&j, "/nonexistent/x.yaml", &errs), -1);
	ASSERT_INTEQ(errs.n, 1);
	ASSERT_STREQ(errs.msg[0],
	    "/nonexistent/x.yaml: cannot open: No such file or directory");
	cfg_errors_free(&errs);

	ASSERT_INTEQ(config_parse_job(&j, "upload", "runs: [", 7, &errs), -1);
	ASSERT_INTEQ(errs.n, 1);
	ASSERT_STREQ(errs.msg[0],
	    "upload:1:8: did not find expected node content (while parsing a "
	    "flow node at line 1, column 8)");
	cfg_errors_free(&errs);
}

/* Relative paths are resolved against the file's directory. */
TEST(test_config__relative_paths)
{
	struct cfg_errors errs = { 0 };
	struct runner_config *r;
	char want[1024];
	const char *p = write_tmp("runner.yaml",
	    "server: https://perf.example.org\n"
	    "name: r1\n"
	    "token_file: tokens/r1\n"
	    "workdir: /var/lib/w\n");

	ASSERT_INTEQ(config_load_runner(&r, p, &errs), 0);
	snprintf(want, sizeof(want), "%s/tokens/r1", test_tmpdir());
	ASSERT_STREQ(r->token_file, want);
	ASSERT_STREQ(r->workdir, "/var/lib/w");
	ASSERT_INTEQ(r->boot, CFG_BOOT_NONE);
	ASSERT(r->kernel_tree == NULL);
	ASSERT_INTEQ(r->heartbeat_s, 10);
	ASSERT_INTEQ(r->max_output, 1 << 20);
	/* Shared builds: a runner builds unless told not to; 4G of images. */
	ASSERT_INTEQ(r->build, 1);
	ASSERT_INTEQ(r->image_cache_max, (int64_t)4 << 30);
	ASSERT_INTEQ(r->limits.nproc, 4096);
	ASSERT_INTEQ(r->limits.nofile, 65536);
	ASSERT_INTEQ(r->limits.pids, 8192);
	runner_config_free(r);
	p = write_tmp("bench.yaml",
	    "server: https://perf.example.org\n"
	    "name: h1\n"
	    "token_file: tokens/h1\n"
	    "workdir: /var/lib/w\n"
	    "boot: kexec\n"
	    "kernel_tree: /var/lib/k\n"
	    "build: false\n"
	    "image_cache_max: 512M\n");
	ASSERT_INTEQ(config_load_runner(&r, p, &errs), 0);
	ASSERT_INTEQ(r->build, 0);
	ASSERT_INTEQ(r->image_cache_max, (int64_t)512 << 20);
	runner_config_free(r);
}

/* runner.yaml limits: set, and a bad one named by file, line, column. */
TEST(test_config__runner_limits)
{
	struct cfg_errors errs = { 0 };
	struct runner_config *r;
	const char *p = write_tmp("limits.yaml",
	    "server: https://perf.example.org\n"
	    "name: r1\n"
	    "token_file: /t\n"
	    "workdir: /w\n"
	    "limits:\n"
	    "  nproc: 64\n"
	    "  nofile: 0\n");

	ASSERT_INTEQ(config_load_runner(&r, p, &errs), 0);
	ASSERT_INTEQ(r->limits.nproc, 64);
	ASSERT_INTEQ(r->limits.nofile, 0);
	ASSERT_INTEQ(r->limits.pids, 8192);
	runner_config_free(r);
	p = write_tmp("limits.yaml",
	    "server: https://perf.example.org\n"
	    "name: r1\n"
	    "token_file: /t\n"
	    "workdir: /w\n"
	    "limits:\n"
	    "  nproc: -1\n");
	ASSERT(config_load_runner(&r, p, &errs) != 0);
	ASSERT(errs.n == 1);
	ASSERT_MSG(
	    strstr(errs.msg[0], "limits.yaml:6:10: limits.nproc") != NULL, "%s",
	    errs.msg[0]);
	cfg_errors_free(&errs);
}

/*
 * The servers a runner fails over between: server first, then servers,
 * server the first of them; servers alone make a runner config too.
 */
TEST(test_config__runner_servers)
{
	struct cfg_errors errs = { 0 };
	struct runner_config *r;
	const char *p = write_tmp("servers.yaml",
	    "server: http://a.example:8080/\n"
	    "servers: [http://b.example:8080, https://c.example]\n"
	    "name: r1\n"
	    "token_file: /t\n"
	    "workdir: /w\n");

	ASSERT_INTEQ(config_load_runner(&r, p, &errs), 0);
	ASSERT_INTEQ(r->servers.n, 3);
	ASSERT_STREQ(r->servers.v[0], "http://a.example:8080/");
	ASSERT_STREQ(r->servers.v[1], "http://b.example:8080");
	ASSERT_STREQ(r->servers.v[2], "https://c.example");
	ASSERT_STREQ(r->server, "http://a.example:8080/");
	runner_config_free(r);

	p = write_tmp("servers.yaml",
	    "servers: [http://b.example:8080, https://c.example]\n"
	    "name: r1\n"
	    "token_file: /t\n"
	    "workdir: /w\n");
	ASSERT_INTEQ(config_sniff_kind(p, &errs), CFG_KIND_RUNNER);
	ASSERT_INTEQ(config_load_runner(&r, p, &errs), 0);
	ASSERT_INTEQ(r->servers.n, 2);
	ASSERT_STREQ(r->server, "http://b.example:8080");
	runner_config_free(r);

	p = write_tmp("servers.yaml",
	    "server: http://a.example:8080\n"
	    "name: r1\n"
	    "token_file: /t\n"
	    "workdir: /w\n");
	ASSERT_INTEQ(config_load_runner(&r, p, &errs), 0);
	ASSERT_INTEQ(r->servers.n, 1);
	ASSERT_STREQ(r->servers.v[0], "http://a.example:8080");
	runner_config_free(r);
	ASSERT_INTEQ(errs.n, 0);
	cfg_errors_free(&errs);
}

/*
 * A daemon with its jobs: cross-references (trees, inboxes, host labels),
 * duplicate job names across files, a literal path that is missing.
 */
TEST(test_config__daemon_jobs_cross_references)
{
	struct cfg_errors errs = { 0 };
	struct daemon_config *d;
	struct job_config **jobs;
	size_t n, i;
	char want[1024];
	const char *dp, *dir = test_tmpdir();
	char sub[512];

	snprintf(sub, sizeof(sub), "%s/jobs", dir);
	ASSERT(mkdir_p(sub) == 0);
	write_tmp("jobs/a.yaml",
	    "name: a\nparser: fio\ncommand: [fio]\n"
	    "trigger: {trees: [mm], inboxes: [linux-mm]}\nhosts: [epyc]\n");
	write_tmp("jobs/b.yaml",
	    "name: a\nparser: fio\ncommand: [fio]\n"
	    "trigger: {trees: [net], inboxes: [lkml]}\n"
	    "hosts: [arm, r1]\n");
	dp = write_tmp("d.yaml",
	    "listen: 127.0.0.1:0\n"
	    "database: db.sqlite\n"
	    "mirrors: git\n"
	    "jobs: [jobs/*.yaml, jobs/a.yaml, none/*.yaml, missing.yaml]\n"
	    "trees: [{name: mm, url: /srv/mm, branches: [main]}]\n"
	    "inboxes: [{name: linux-mm, url: /srv/lm, tree: mm}]\n"
	    "runners: [{name: r1, token_file: t, labels: [epyc]}]\n");
	ASSERT_INTEQ(config_load_daemon(&d, dp, &errs), 0);
	snprintf(want, sizeof(want), "%s/db.sqlite", dir);
	ASSERT_STREQ(d->database, want);
	ASSERT_STREQ(d->inboxes[0].branch, "main");
	ASSERT_INTEQ(config_load_jobs(&jobs, &n, d, &errs), -1);
	/* a.yaml loads (once, though matched twice); b.yaml does not. */
	ASSERT_INTEQ(n, 1);
	ASSERT_STREQ(jobs[0]->name, "a");
	ASSERT_INTEQ(errs.n, 5);
	for (i = 0; i < errs.n; i++)
		ASSERT_MSG(
		    strstr(errs.msg[i], dir) == errs.msg[i], "%s", errs.msg[i]);
	ASSERT(strstr(errs.msg[0],
	           "/jobs/b.yaml:1:7: name: job 'a' is already defined in ") !=
	    NULL);
	ASSERT(strstr(errs.msg[1],
	           "/jobs/b.yaml:4:19: trigger.trees[0]: no tree named 'net' "
	           "in ") != NULL);
	ASSERT(
	    strstr(errs.msg[2],
	        "/jobs/b.yaml:4:35: trigger.inboxes[0]: no inbox named 'lkml' "
	        "in ") != NULL);
	ASSERT(strstr(errs.msg[3],
	           "/jobs/b.yaml:5:9: hosts[0]: no runner in ") != NULL);
	ASSERT(strstr(errs.msg[3], "carries the label 'arm'") != NULL);
	ASSERT(strstr(errs.msg[4], "/d.yaml:4:47: jobs[3]: no such file '") !=
	    NULL);
	config_jobs_free(jobs, n);
	daemon_config_free(d);
	cfg_errors_free(&errs);
}

/*
 * Labels the daemon derives from a runner's CPU (vendor:, family:) are
 * no configured runner's, yet a job may name them; a family the daemon
 * can never derive is an error that lists the ones it can.
 */
TEST(test_config__hosts_derived_cpu_labels)
{
	struct cfg_errors errs = { 0 };
	struct daemon_config *d;
	struct job_config **jobs;
	size_t n;
	const char *dp;

	write_tmp("derived-a.yaml",
	    "name: a\nparser: fio\ncommand: [fio]\n"
	    "hosts: [family:ice-lake-sp, vendor:amd, family:unknown]\n");
	write_tmp("derived-b.yaml",
	    "name: b\nparser: fio\ncommand: [fio]\n"
	    "hosts: [family:zen2, vendor:arm]\n");
	dp = write_tmp("derived.yaml",
	    "listen: 127.0.0.1:0\n"
	    "database: db.sqlite\n"
	    "mirrors: git\n"
	    "jobs: [derived-*.yaml]\n"
	    "runners: [{name: r1, token_file: t, labels: [epyc]}]\n");
	ASSERT_INTEQ(config_load_daemon(&d, dp, &errs), 0);
	ASSERT_INTEQ(config_load_jobs(&jobs, &n, d, &errs), -1);
	ASSERT_INTEQ(n, 1);
	ASSERT_STREQ(jobs[0]->name, "a");
	ASSERT_INTEQ(errs.n, 2);
	ASSERT_MSG(strstr(errs.msg[0],
	               "/derived-b.yaml:4:9: hosts[0]: 'family:zen2' is not a "
	               "label a runner can have: family: is one of ") != NULL,
	    "%s", errs.msg[0]);
	ASSERT(strstr(errs.msg[0], "zen-2-rome, ") != NULL);
	ASSERT(strstr(errs.msg[0], "ice-lake-sp, ") != NULL);
	ASSERT_MSG(strstr(errs.msg[1],
	               "hosts[1]: 'vendor:arm' is not a label a runner can "
	               "have: vendor: is one of amd, intel, unknown") != NULL,
	    "%s", errs.msg[1]);
	config_jobs_free(jobs, n);
	daemon_config_free(d);
	cfg_errors_free(&errs);
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = xmalloc((size_t)n + 1);
	*len = fread(data, 1, (size_t)n, f);
	fclose(f);
	return data;
}

/* Parses text as a job; a load either succeeds or reports an error. */
static int
parse_consistent(const char *text, size_t len)
{
	struct cfg_errors errs = { 0 };
	struct job_config *j;
	int rc = config_parse_job(&j, "m", text, len, &errs);
	int ok = (rc == 0 && j != NULL && errs.n == 0) ||
	    (rc == -1 && j == NULL && errs.n > 0);
	size_t i;

	for (i = 0; i < errs.n; i++)
		if (strncmp(errs.msg[i], "m:", 2) != 0)
			ok = 0;
	job_config_free(j);
	cfg_errors_free(&errs);
	return ok;
}

/*
 * Every prefix of every example and bad file, and copies with bytes
 * replaced by YAML-significant ones, load or fail cleanly (the sanitizers
 * watch for the rest).  A cheap stand-in for the fuzzer between runs.
 */
TEST(test_config__truncated_and_mutated_inputs)
{
	static const char *const files[] = {
		"config/examples/jobs/tcp_rr.yaml",
		"config/examples/jobs/will-it-scale.yaml",
		"config/examples/demo-fio.yaml",
		"tests/data/config/bad/job-exclude.yaml",
		"tests/data/config/bad/job-utf8.yaml",
		"tests/data/config/bad/job-metrics.yaml",
	};
	static const char flips[] = { '\t', '{', ':', '\n', '\0', '&', '*',
		(char)0xc3 };
	size_t fi, len, i, k;

	for (fi = 0; fi < sizeof(files) / sizeof(files[0]); fi++) {
		char *text = slurp(test_srcpath(files[fi]), &len);

		ASSERT(text != NULL);
		for (i = 0; i <= len; i++)
			ASSERT_MSG(parse_consistent(text, i), "%s cut at %zu",
			    files[fi], i);
		for (i = 0; i < len; i += 5)
			for (k = 0; k < sizeof(flips); k++) {
				char saved = text[i];

				text[i] = flips[k];
				ASSERT_MSG(parse_consistent(text, len),
				    "%s byte %zu = 0x%02x", files[fi], i,
				    (unsigned char)flips[k]);
				text[i] = saved;
			}
		free(text);
	}
}

/* An uploaded job checked against a daemon names its place as given. */
TEST(test_config__parse_job_for_daemon)
{
	static const char text[] = "name: up\nparser: json\ncommand: [x]\n"
	                           "trigger: {trees: [nope]}\n";
	struct cfg_errors errs = { 0 };
	struct daemon_config *d;
	struct job_config *j;

	ASSERT_INTEQ(config_load_daemon(&d,
	                 test_srcpath("config/examples/daemon.yaml"), &errs),
	    0);
	ASSERT_INTEQ(
	    config_parse_job_for(&j, "upload", text, strlen(text), d, &errs),
	    -1);
	ASSERT_INTEQ(errs.n, 1);
	ASSERT_STREQ(errs.msg[0],
	    "upload:4:19: trigger.trees[0]: no tree named 'nope' in "
	    "config/examples/daemon.yaml");
	cfg_errors_free(&errs);
	ASSERT_INTEQ(
	    config_parse_job_for(&j, "upload", text, strlen(text), NULL, &errs),
	    0);
	job_config_free(j);
	daemon_config_free(d);
}

/* inboxes[].tags: subject tag to tree and branch; errors name the tag. */
TEST(test_config__inbox_tags)
{
	struct cfg_errors errs = { 0 };
	struct daemon_config *d;
	const char *dp;

	dp = write_tmp("tags.yaml",
	    "listen: 127.0.0.1:0\ndatabase: db.sqlite\nmirrors: git\n"
	    "trees:\n"
	    "  - {name: mm, url: /srv/mm, branches: [mm-new, mm-unstable]}\n"
	    "  - {name: cgroup, url: /srv/cg, branches: [for-7.0-fixes]}\n"
	    "inboxes:\n"
	    "  - name: cgroups\n"
	    "    url: /srv/lm\n"
	    "    tree: mm\n"
	    "    tags:\n"
	    "      mm-unstable: {branch: mm-unstable}\n"
	    "      cgroup/for-7.0-fixes: {tree: cgroup, branch: "
	    "for-7.0-fixes}\n");
	ASSERT_INTEQ(config_load_daemon(&d, dp, &errs), 0);
	ASSERT_INTEQ(d->inboxes[0].ntags, 2);
	ASSERT_STREQ(d->inboxes[0].tags[0].tag, "mm-unstable");
	ASSERT_STREQ(d->inboxes[0].tags[0].tree, "mm");
	ASSERT_STREQ(d->inboxes[0].tags[0].branch, "mm-unstable");
	ASSERT_STREQ(d->inboxes[0].tags[1].tag, "cgroup/for-7.0-fixes");
	ASSERT_STREQ(d->inboxes[0].tags[1].tree, "cgroup");
	daemon_config_free(d);

	dp = write_tmp("tags-bad.yaml",
	    "listen: 127.0.0.1:0\ndatabase: db.sqlite\nmirrors: git\n"
	    "trees: [{name: mm, url: /srv/mm, branches: [mm-new]}]\n"
	    "inboxes:\n"
	    "  - name: cgroups\n"
	    "    url: /srv/lm\n"
	    "    tree: mm\n"
	    "    tags:\n"
	    "      mm-unstable: {branch: mm-unstable}\n"
	    "      net-next: {tree: net, branch: main}\n"
	    "      \"a tag\": {branch: mm-new}\n"
	    "      x: {branch: mm-new, colour: red}\n");
	ASSERT_INTEQ(config_load_daemon(&d, dp, &errs), -1);
	ASSERT_INTEQ(errs.n, 4);
	ASSERT_MSG(strstr(errs.msg[0],
	               ":10:20: inboxes[0].tags.mm-unstable: tree 'mm' does "
	               "not watch a branch 'mm-unstable'") != NULL,
	    "%s", errs.msg[0]);
	ASSERT_MSG(strstr(errs.msg[1],
	               ":11:17: inboxes[0].tags.net-next: no tree named "
	               "'net'") != NULL,
	    "%s", errs.msg[1]);
	ASSERT_MSG(strstr(errs.msg[2],
	               ":12:7: inboxes[0].tags.a tag: not a "
	               "subject tag") != NULL,
	    "%s", errs.msg[2]);
	ASSERT_MSG(
	    strstr(errs.msg[3],
	        ":13:27: inboxes[0].tags.x.colour: unknown key") != NULL &&
	        strstr(errs.msg[3], "colour") != NULL,
	    "%s", errs.msg[3]);
	cfg_errors_free(&errs);
}

/* host: keys of a job and a runner (docs/CONFIG.md), and CPU lists. */
TEST(test_config__host_sections_and_cpulists)
{
	static const char text[] = "name: t\nparser: fio\ncommand: [fio]\n"
	                           "profile: true\nprofile_runs: 2\n"
	                           "host:\n  cpus: node:1\n"
	                           "  server_cpus: \"0-1,4\"\n  thp: never\n"
	                           "  drop_caches: true\n  warmup: 3\n"
	                           "  pause: 1m\n";
	static const char plain[] = "name: t\nparser: fio\ncommand: [fio]\n";
	struct cfg_errors errs = { 0 };
	struct job_config *j;
	unsigned char m[2];

	ASSERT_INTEQ(
	    config_parse_job(&j, "t.yaml", text, strlen(text), &errs), 0);
	ASSERT_STREQ(j->host.cpus, "node:1");
	ASSERT_STREQ(j->host.server_cpus, "0-1,4");
	ASSERT_INTEQ(j->host.thp, CFG_THP_NEVER);
	ASSERT_INTEQ(j->host.drop_caches, 1);
	ASSERT_INTEQ(j->host.warmup, 3);
	ASSERT_INTEQ(j->host.pause_s, 60);
	ASSERT_INTEQ(j->profile_runs, 2);
	ASSERT_NEAR(j->profile_min_effect_pct, 10, 1e-9);
	job_config_free(j);
	ASSERT_INTEQ(
	    config_parse_job(&j, "t.yaml", plain, strlen(plain), &errs), 0);
	ASSERT(j->host.cpus == NULL && j->host.server_cpus == NULL);
	ASSERT_INTEQ(j->host.thp, CFG_THP_KEEP);
	ASSERT_INTEQ(j->host.drop_caches, 0);
	ASSERT_INTEQ(j->host.warmup, 0);
	ASSERT_INTEQ(j->host.pause_s, 0);
	ASSERT_INTEQ(j->profile_runs, 0);
	job_config_free(j);

	ASSERT_INTEQ(config_parse_cpulist(m, 16, "0-2,9,11-12"), 0);
	ASSERT_INTEQ(m[0], 0x07);
	ASSERT_INTEQ(m[1], 0x1a);
	ASSERT_INTEQ(config_parse_cpulist(m, 16, "15"), 0);
	ASSERT_INTEQ(m[1], 0x80);
	ASSERT_INTEQ(config_parse_cpulist(m, 16, "16"), -1);
	ASSERT_INTEQ(config_parse_cpulist(m, 16, "3-1"), -1);
	ASSERT_INTEQ(config_parse_cpulist(m, 16, "1,"), -1);
	ASSERT_INTEQ(config_parse_cpulist(m, 16, ""), -1);
	ASSERT_INTEQ(config_parse_cpulist(m, 16, "a"), -1);
	ASSERT_STREQ(config_thp_name(CFG_THP_DEFER_MADVISE), "defer+madvise");
	ASSERT_STREQ(config_turbo_name(CFG_TURBO_KEEP), "keep");
}

/* counters: and counters_ops: (docs/CONFIG.md, docs/MEMCG.md). */
TEST(test_config__counters_keys)
{
	static const char on[] = "name: t\nparser: neper\ncommand: [x]\n"
	                         "counters: true\n"
	                         "counters_ops: num_transactions\n";
	static const char plain[] = "name: t\nparser: fio\ncommand: [fio]\n";
	static const char orphan[] = "name: t\nparser: fio\ncommand: [fio]\n"
	                             "counters_ops: read_iops\n";
	static const char bad[] = "name: t\nparser: fio\ncommand: [fio]\n"
	                          "counters: yes please\n"
	                          "counters_ops: \"a b\"\n";
	struct cfg_errors errs = { 0 };
	struct job_config *j;

	ASSERT_INTEQ(config_parse_job(&j, "t.yaml", on, strlen(on), &errs), 0);
	ASSERT_INTEQ(j->counters, 1);
	ASSERT_STREQ(j->counters_ops, "num_transactions");
	job_config_free(j);
	ASSERT_INTEQ(
	    config_parse_job(&j, "t.yaml", plain, strlen(plain), &errs), 0);
	ASSERT_INTEQ(j->counters, 0);
	ASSERT(j->counters_ops == NULL);
	job_config_free(j);
	ASSERT_INTEQ(
	    config_parse_job(&j, "t.yaml", orphan, strlen(orphan), &errs), -1);
	ASSERT_INTEQ(errs.n, 1);
	ASSERT_MSG(
	    strstr(errs.msg[0],
	        "t.yaml:4:15: counters_ops: needs counters: true") != NULL,
	    "%s", errs.msg[0]);
	cfg_errors_free(&errs);
	ASSERT_INTEQ(
	    config_parse_job(&j, "t.yaml", bad, strlen(bad), &errs), -1);
	ASSERT_INTEQ(errs.n, 2);
	ASSERT_MSG(strstr(errs.msg[0], "t.yaml:4:11: counters:") != NULL, "%s",
	    errs.msg[0]);
	ASSERT_MSG(strstr(errs.msg[1],
	               "t.yaml:5:15: counters_ops: \"a b\" is not a valid "
	               "metric name") != NULL,
	    "%s", errs.msg[1]);
	cfg_errors_free(&errs);
}

/* Whether errs holds the message want exactly. */
static int
has_msg(const struct cfg_errors *errs, const char *want)
{
	size_t i;

	for (i = 0; i < errs->n; i++)
		if (strcmp(errs->msg[i], want) == 0)
			return 1;
	return 0;
}

/*
 * A list, a job's exclude and a list of mappings (a daemon's trees) hold
 * CFG_LIST_MAX entries at most: one more is one error naming the key.
 */
TEST(test_config__lists_capped)
{
	struct cfg_errors errs = { 0 };
	struct buf b = BUF_INIT(1 << 20);
	struct daemon_config *d;
	struct job_config *j;
	char want[1024];
	const char *p;
	size_t i;

	buf_puts(&b, "name: x\ncommand: [");
	for (i = 0; i <= CFG_LIST_MAX; i++)
		buf_puts(&b, i ? ", a" : "a");
	buf_puts(&b, "]\nexclude: [");
	for (i = 0; i <= CFG_LIST_MAX; i++)
		buf_puts(&b, i ? ", {}" : "{}");
	buf_puts(&b, "]\n");
	ASSERT_INTEQ(config_parse_job(&j, "t.yaml", b.data, b.len, &errs), -1);
	ASSERT(has_msg(&errs,
	    "t.yaml:2:10: command: too many entries (1025, at most 1024)"));
	ASSERT(has_msg(&errs,
	    "t.yaml:3:10: exclude: too many entries (1025, at most 1024)"));
	cfg_errors_free(&errs);

	buf_reset(&b);
	buf_puts(&b, "listen: 127.0.0.1:1\ntrees: [");
	for (i = 0; i <= CFG_LIST_MAX; i++)
		buf_puts(&b, i ? ", {}" : "{}");
	buf_puts(&b, "]\n");
	p = write_tmp("many-trees.yaml", b.data);
	ASSERT(p != NULL);
	ASSERT_INTEQ(config_load_daemon(&d, p, &errs), -1);
	ASSERT(d == NULL);
	snprintf(want, sizeof(want),
	    "%s:2:8: trees: too many entries (1025, at most 1024)", p);
	ASSERT(has_msg(&errs, want));
	cfg_errors_free(&errs);
	buf_release(&b);
}

/* database: a PostgreSQL URI or conninfo is kept as written (a path
 * would be resolved against the daemon file's directory). */
TEST(test_config__database_postgresql)
{
	static const char *const kept[] = {
		"postgresql://pw@db.example/perfwatch?sslmode=require",
		"host=/run/postgresql dbname=perfwatch",
	};
	struct cfg_errors errs = { 0 };
	struct daemon_config *d;
	char text[256];
	const char *dp;
	size_t i;

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		snprintf(text, sizeof(text),
		    "listen: 127.0.0.1:0\ndatabase: \"%s\"\nmirrors: git\n",
		    kept[i]);
		dp = write_tmp("pg.yaml", text);
		ASSERT_INTEQ(config_load_daemon(&d, dp, &errs), 0);
		ASSERT_STREQ(d->database, kept[i]);
		daemon_config_free(d);
	}
}

/* builds: (docs/CONFIG.md): defaults, the store beside a SQLite file,
 * required for PostgreSQL when shared, max_file within max_size. */
TEST(test_config__builds_section)
{
	struct cfg_errors errs = { 0 };
	struct daemon_config *d;
	const char *dp;

	dp = write_tmp("b1.yaml",
	    "listen: 127.0.0.1:0\ndatabase: /var/lib/pw/pw.db\nmirrors: git\n");
	ASSERT_INTEQ(config_load_daemon(&d, dp, &errs), 0);
	ASSERT_INTEQ(d->builds.shared, 0);
	ASSERT_STREQ(d->builds.dir, "/var/lib/pw/artifacts");
	ASSERT(d->builds.max_size == (int64_t)10 << 30);
	ASSERT(d->builds.max_file == (int64_t)512 << 20);
	daemon_config_free(d);
	dp = write_tmp("b2.yaml",
	    "listen: 127.0.0.1:0\ndatabase: \"postgresql://pw@db/pw\"\n"
	    "mirrors: git\nbuilds:\n  shared: true\n");
	ASSERT(config_load_daemon(&d, dp, &errs) != 0);
	ASSERT(
	    errs.n == 1 && strstr(errs.msg[0], "builds.dir: required") != NULL);
	cfg_errors_free(&errs);
	dp = write_tmp("b3.yaml",
	    "listen: 127.0.0.1:0\ndatabase: pw.db\nmirrors: git\n"
	    "builds:\n  shared: true\n  max_size: 1M\n  max_file: 2M\n");
	ASSERT(config_load_daemon(&d, dp, &errs) != 0);
	ASSERT(errs.n == 1 &&
	    strstr(errs.msg[0],
	        "builds.max_file: 2097152 is more than "
	        "builds.max_size (1048576)") != NULL);
	cfg_errors_free(&errs);
}
