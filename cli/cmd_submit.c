/*
 * perfwatch submit: a base/candidate pair on the running kernel, one pair
 * per matrix point (POST /api/v1/submit).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opt.h"
#include "common/caps.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "config/config.h"

static int
submit_usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch submit [--server URL] [--token-file FILE]\n"
	    "           (--job NAME | --job-file JOB.yaml) [--runs N]\n"
	    "           [--base-param K=V]... [--cand-param K=V]... "
	    "[--json]\n");
	return 2;
}

/* "k=v" into params; -1 with a message for a bad or repeated key. */
static int
add_param(json_t *params, const char *kv, const char *opt)
{
	const char *eq = strchr(kv, '=');
	char *key;
	json_t *val;

	if (eq == NULL || eq == kv) {
		fprintf(stderr, "perfwatch submit: %s: '%s' is not KEY=VALUE\n",
		    opt, kv);
		return -1;
	}
	key = xstrndup(kv, (size_t)(eq - kv));
	if (json_object_get(params, key) != NULL) {
		fprintf(stderr, "perfwatch submit: %s: '%s' given twice\n", opt,
		    key);
		free(key);
		return -1;
	}
	if ((val = json_string(eq + 1)) == NULL) {
		fprintf(stderr, "perfwatch submit: %s: '%s' is not UTF-8\n",
		    opt, key);
		free(key);
		return -1;
	}
	json_object_set_new(params, key, val);
	free(key);
	return 0;
}

/*
 * The job file's text, after checking it here so errors come back as
 * FILE:line:column rather than from the server.
 */
static json_t *
job_file_text(const char *path)
{
	struct cfg_errors errs = { 0 };
	struct job_config *jc = NULL;
	struct buf b = BUF_INIT(CAP_CONFIG_FILE);
	json_t *v = NULL;
	size_t k;
	int fd, rc, saved;

	if (config_load_job(&jc, path, &errs) != 0) {
		for (k = 0; k < errs.n; k++)
			fprintf(stderr, "%s\n", errs.msg[k]);
		cfg_errors_free(&errs);
		return NULL;
	}
	cfg_errors_free(&errs);
	job_config_free(jc);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		perror(path);
		return NULL;
	}
	rc = files_read_fd(&b, fd, CAP_CONFIG_FILE);
	saved = errno;
	close(fd);
	if (rc == -1 && saved == EFBIG)
		fprintf(stderr, "%s: larger than %d bytes\n", path,
		    CAP_CONFIG_FILE);
	else if (rc == -1)
		fprintf(stderr, "%s: %s\n", path, strerror(saved));
	else if ((v = json_stringn(b.data, b.len)) == NULL)
		fprintf(stderr, "%s: not UTF-8 text\n", path);
	buf_release(&b);
	return v;
}

static void
print_pairs(json_t *reply)
{
	json_t *pairs = json_object_get(reply, "pairs"), *p;
	struct cli_table t;
	size_t i;

	cli_table_init(&t, 4);
	cli_table_add(&t,
	    (char *[]){ xstrdup("PAIR"), xstrdup("BASE"), xstrdup("CANDIDATE"),
	        xstrdup("POINT") });
	json_array_foreach(pairs, i, p)
	{
		cli_table_add(&t,
		    (char *[]){ cli_field(p, "pair_id"),
		        cli_field(p, "base_job"), cli_field(p, "candidate_job"),
		        cli_field(p, "point") });
	}
	cli_table_print(&t);
	cli_table_free(&t);
}

static int
base_param(void *params, const char *kv)
{
	return add_param(params, kv, "--base-param");
}

static int
cand_param(void *params, const char *kv)
{
	return add_param(params, kv, "--cand-param");
}

int
cmd_submit(int argc, char **argv)
{
	const char *server = NULL, *token_file = NULL, *job = NULL;
	const char *job_file = NULL, *runs_s = NULL;
	json_t *body = json_object(), *bp = json_object(), *cp = json_object();
	json_t *reply = NULL, *text;
	struct cli_api api;
	int npos, json = 0, rc = 2;
	int64_t runs = 0;
	char *s;
	const struct opt_spec spec[] = { OPT_API(&server, &token_file, &json),
		OPT_VAL("job", &job), OPT_VAL("job-file", &job_file),
		OPT_VAL("runs", &runs_s),
		OPT_EACH("base-param", base_param, bp),
		OPT_EACH("cand-param", cand_param, cp), OPT_END };

	memset(&api, 0, sizeof(api));
	if (opt_parse("submit", argc, argv, spec, NULL, 0, &npos) != 0) {
		rc = submit_usage();
		goto out;
	}
	if ((job == NULL) == (job_file == NULL)) {
		fprintf(stderr,
		    "perfwatch submit: give one of --job and "
		    "--job-file\n");
		rc = submit_usage();
		goto out;
	}
	if (runs_s != NULL &&
	    cli_int_arg(&runs, "submit", "--runs", runs_s, 1, 10000) != 0)
		goto out;
	if (job != NULL)
		json_object_set_new(body, "job", json_string(job));
	else {
		if ((text = job_file_text(job_file)) == NULL) {
			rc = 1;
			goto out;
		}
		json_object_set_new(body, "job_yaml", text);
	}
	json_object_set_new(body, "base", json_pack("{sO}", "params", bp));
	json_object_set_new(body, "candidate", json_pack("{sO}", "params", cp));
	if (runs > 0)
		json_object_set_new(body, "runs", json_integer(runs));

	if ((rc = cli_api_open(&api, "submit", server, token_file, 1)) != 0)
		goto out;
	s = pwjson_dump(body);
	rc = cli_api_call(&reply, &api, "POST", "/api/v1/submit", s);
	free(s);
	if (rc == 0) {
		if (json)
			cli_print_body(&api);
		else
			print_pairs(reply);
	}
out:
	cli_api_close(&api);
	json_decref(reply);
	json_decref(body);
	json_decref(bp);
	json_decref(cp);
	return rc;
}
