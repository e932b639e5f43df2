/*
 * perfwatch config check [--kind job|daemon|runner] FILE...
 * perfwatch config expand JOB.yaml
 *
 * check: "FILE: configuration OK" on stdout per good file, every error on
 * stderr as "file:line:col: key: message"; exit 1 when any file has an
 * error, 2 on usage errors.  A daemon config's jobs: files are checked too.
 * expand: one line per matrix point ("flows=10000 threads=128"), then
 * "N points".
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "config/config.h"

static void
print_errors(struct cfg_errors *errs)
{
	size_t i;

	for (i = 0; i < errs->n; i++)
		fprintf(stderr, "%s\n", errs->msg[i]);
}

static int
check_one(const char *path, enum cfg_kind kind)
{
	struct cfg_errors errs = { 0 };
	int rc = 0;

	if (kind == CFG_KIND_UNKNOWN)
		kind = config_sniff_kind(path, &errs);
	switch (kind) {
	case CFG_KIND_JOB: {
		struct job_config *job;

		rc = config_load_job(&job, path, &errs);
		job_config_free(job);
		break;
	}
	case CFG_KIND_RUNNER: {
		struct runner_config *r;

		rc = config_load_runner(&r, path, &errs);
		runner_config_free(r);
		break;
	}
	case CFG_KIND_DAEMON: {
		struct daemon_config *d;
		struct job_config **jobs = NULL;
		size_t njobs = 0, i;

		rc = config_load_daemon(&d, path, &errs);
		if (rc == 0) {
			rc = config_load_jobs(&jobs, &njobs, d, &errs);
			if (rc == 0)
				for (i = 0; i < njobs; i++)
					printf(
					    "%s: configuration OK (job %s)\n",
					    jobs[i]->file, jobs[i]->name);
			config_jobs_free(jobs, njobs);
		}
		daemon_config_free(d);
		break;
	}
	case CFG_KIND_UNKNOWN:
		rc = -1;
		break;
	}
	if (rc == 0 && errs.n == 0)
		printf("%s: configuration OK\n", path);
	else
		rc = -1;
	print_errors(&errs);
	cfg_errors_free(&errs);
	return rc;
}

static int
usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch config check [--kind job|daemon|runner] "
	    "FILE...\n"
	    "       perfwatch config expand JOB.yaml\n");
	return 2;
}

static int
cmd_check(int argc, char **argv)
{
	enum cfg_kind kind = CFG_KIND_UNKNOWN;
	int i = 1, bad = 0;

	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *k = NULL;

		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc)
			k = argv[++i];
		else if (strncmp(argv[i], "--kind=", 7) == 0)
			k = argv[i] + 7;
		else
			return usage();
		if (strcmp(k, "job") == 0)
			kind = CFG_KIND_JOB;
		else if (strcmp(k, "daemon") == 0)
			kind = CFG_KIND_DAEMON;
		else if (strcmp(k, "runner") == 0)
			kind = CFG_KIND_RUNNER;
		else {
			fprintf(stderr,
			    "perfwatch config: --kind must be job, daemon or "
			    "runner, not '%s'\n",
			    k);
			return 2;
		}
	}
	if (i >= argc)
		return usage();
	for (; i < argc; i++)
		if (check_one(argv[i], kind) != 0)
			bad = 1;
	return bad;
}

static int
cmd_expand(int argc, char **argv)
{
	struct cfg_errors errs = { 0 };
	struct job_config *job;
	struct cfg_point *pts;
	size_t n, i, k;

	if (argc != 2)
		return usage();
	if (config_load_job(&job, argv[1], &errs) == -1) {
		print_errors(&errs);
		cfg_errors_free(&errs);
		return 1;
	}
	config_expand(&pts, &n, job);
	for (i = 0; i < n; i++) {
		if (pts[i].n == 0)
			printf("(no parameters)");
		for (k = 0; k < pts[i].n; k++)
			printf("%s%s=%s", k ? " " : "", pts[i].keys[k],
			    pts[i].values[k]);
		printf("\n");
	}
	printf("%zu point%s\n", n, n == 1 ? "" : "s");
	config_points_free(pts, n);
	job_config_free(job);
	cfg_errors_free(&errs);
	return 0;
}

int
cmd_config(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "expand") == 0)
		return cmd_expand(argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage();
		return 0;
	}
	fprintf(stderr, "perfwatch config: unknown subcommand '%s'\n", argv[1]);
	return usage();
}
