/*
 * config/job_yaml: a job written back as job-file YAML reads back, by
 * the job loader itself, as the same job, whatever its strings hold.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "config/config.h"
#include "config/job_yaml.h"
#include "tests/unit/test.h"

TEST(test_job_yaml__round_trip)
{
	static const char text[] =
	    "name: \"fio.read\"\n"
	    "parser: fio\n"
	    "build: [make, \"-j4\"]\n"
	    "command: [fio, \"--name=a \\\"b\\\" \\\\ c: d, [e]\", "
	    "\"#x\", \"{bs}\"]\n"
	    "runs: 7\n"
	    "max_runs: 20\n"
	    "timeout: 90s\n"
	    "matrix:\n"
	    "  bs: [4k]\n"
	    "metrics:\n"
	    "  read.iops: {better: higher, min_effect: 2.5%}\n"
	    "  \"clat:p99/us\": {better: lower, min_effect: 10%}\n";
	struct cfg_errors errs = { 0 };
	struct job_config *j, *k;
	struct buf b = BUF_INIT(1 << 16);
	size_t i;

	ASSERT_MSG(
	    config_parse_job(&j, "t.yaml", text, strlen(text), &errs) == 0,
	    "%s", errs.n ? errs.msg[0] : "");
	/* A control byte is escaped, never written raw (the loader then
	 * refuses it, as it would in any job file). */
	free(j->command.v[3]);
	j->command.v[3] = strdup("4k\x01");
	config_job_yaml(&b, "  ", j);
	ASSERT(strstr(b.data, "    - \"4k\\x01\"\n") != NULL);
	ASSERT(strchr(b.data, '\x01') == NULL);
	/* The placeholder filled as a report fills it. */
	buf_reset(&b);
	j->command.v[3][2] = '\0';
	config_job_yaml(&b, "  ", j);
	ASSERT_MSG(
	    strstr(b.data, "  name: \"fio.read\"\n") == b.data, "%s", b.data);
	ASSERT(strstr(b.data, "\n  command:\n    - \"fio\"\n") != NULL);
	ASSERT_MSG(config_parse_job(&k, "back.yaml", b.data, b.len, &errs) == 0,
	    "%s\n%s", errs.n ? errs.msg[0] : "", b.data);
	ASSERT_STREQ(k->name, j->name);
	ASSERT_INTEQ(k->parser, CFG_PARSER_FIO);
	ASSERT_INTEQ(k->build.n, 2);
	ASSERT_STREQ(k->build.v[1], "-j4");
	ASSERT_INTEQ(k->command.n, 4);
	for (i = 0; i < 4; i++)
		ASSERT_STREQ(k->command.v[i], j->command.v[i]);
	ASSERT_INTEQ(k->runs, 7);
	ASSERT_INTEQ(k->max_runs, 20);
	ASSERT_INTEQ(k->timeout_s, 90);
	ASSERT_INTEQ(k->nmetrics, 2);
	for (i = 0; i < 2; i++) {
		ASSERT_STREQ(k->metrics[i].name, j->metrics[i].name);
		ASSERT_INTEQ(k->metrics[i].better, j->metrics[i].better);
		ASSERT(k->metrics[i].min_effect_pct ==
		    j->metrics[i].min_effect_pct);
	}
	job_config_free(k);
	job_config_free(j);
	cfg_errors_free(&errs);
	buf_release(&b);
}
