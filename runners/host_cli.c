/*
 * perfwatch-runner host check|tune|reset (docs/HOST.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "config/config.h"
#include "runners/host.h"

#define STATE_NAME "host-tune.json"

static int
usage(FILE *f)
{
	fprintf(f,
	    "usage: perfwatch-runner host check [--json] [-c runner.yaml]\n"
	    "       perfwatch-runner host tune -c runner.yaml [--state FILE]\n"
	    "       perfwatch-runner host reset -c runner.yaml | --state FILE\n"
	    "  check   each item's state and whether it is benchmark-ready\n"
	    "          (exit 1 when something is not ready)\n"
	    "  tune    apply the host: profile of runner.yaml, saving what\n"
	    "          was there in WORKDIR/" STATE_NAME " (needs root)\n"
	    "  reset   put back exactly what tune saved (needs root)\n"
	    "  --root DIR  read and write /sys and /proc under DIR (tests)\n");
	return f == stderr ? 2 : 0;
}

int
host_main(int argc, char **argv)
{
	struct runner_config *cfg = NULL;
	struct cfg_errors errs = { 0 };
	struct buf log = BUF_INIT(1 << 20);
	struct err e = { 0 };
	const char *file = NULL, *root = "", *verb;
	char *state = NULL;
	int json = 0, i, rc = 0;
	size_t k;

	if (argc < 2)
		return usage(stderr);
	verb = argv[1];
	if (strcmp(verb, "-h") == 0 || strcmp(verb, "--help") == 0)
		return usage(stdout);
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 &&
		    strcmp(verb, "check") == 0)
			json = 1;
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			file = argv[++i];
		else if (strcmp(argv[i], "--state") == 0 && i + 1 < argc) {
			free(state);
			state = xstrdup(argv[++i]);
		} else if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
			root = argv[++i];
		else {
			fprintf(stderr,
			    "perfwatch-runner host: unknown argument '%s'\n",
			    argv[i]);
			free(state);
			return usage(stderr);
		}
	}
	if (strcmp(verb, "check") != 0 && strcmp(verb, "tune") != 0 &&
	    strcmp(verb, "reset") != 0) {
		fprintf(stderr, "perfwatch-runner host: unknown command '%s'\n",
		    verb);
		free(state);
		return usage(stderr);
	}
	if (file != NULL && config_load_runner(&cfg, file, &errs) != 0) {
		for (k = 0; k < errs.n; k++)
			fprintf(stderr, "%s\n", errs.msg[k]);
		cfg_errors_free(&errs);
		free(state);
		return 2;
	}
	cfg_errors_free(&errs);
	if (strcmp(verb, "check") == 0) {
		struct host_report r;

		host_check(&r, root, cfg);
		if (json) {
			json_t *o = host_report_json(&r);

			pwjson_print(o, stdout);
			json_decref(o);
		} else
			host_report_print(stdout, &r);
		rc = r.not_ready > 0;
		host_report_release(&r);
		runner_config_free(cfg);
		free(state);
		return rc;
	}
	if (strcmp(verb, "tune") == 0 && cfg == NULL) {
		fprintf(stderr,
		    "perfwatch-runner host tune: -c runner.yaml "
		    "is required (its host: section is the "
		    "profile)\n");
		free(state);
		return 2;
	}
	if (state == NULL && cfg == NULL) {
		fprintf(stderr,
		    "perfwatch-runner host reset: -c runner.yaml "
		    "or --state FILE is required\n");
		return 2;
	}
	if (state == NULL)
		state = xasprintf("%s/%s", cfg->workdir, STATE_NAME);
	if (strcmp(verb, "tune") == 0)
		rc = host_tune(root, cfg, state, &log, &e);
	else
		rc = host_reset(root, state, &log, &e);
	fputs(log.data, stdout);
	if (rc != 0)
		fprintf(stderr, "perfwatch-runner host %s: %s\n", verb,
		    err_msg(&e));
	buf_release(&log);
	runner_config_free(cfg);
	free(state);
	return rc != 0;
}
