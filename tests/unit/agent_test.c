#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"
#include "runners/agent.h"
#include "runners/exec.h"
#include "tests/unit/test.h"

/* An exec_result as if the command had printed out and exited with code. */
static void
fake_result(struct exec_result *r, const char *out, size_t len, int code,
    const char *err)
{
	memset(r, 0, sizeof(*r));
	r->out = BUF_INIT(CAP_RAW_OUTPUT);
	r->err = BUF_INIT(CAP_RAW_OUTPUT);
	buf_add(&r->out, out, len);
	buf_puts(&r->err, err);
	r->exited = 1;
	r->code = code;
	r->duration_s = 1.5;
}

static int
load(struct buf *b, const char *rel)
{
	FILE *f = fopen(test_fixture(rel), "rb");
	char chunk[8192];
	size_t n;

	if (f == NULL)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(b, chunk, n);
	fclose(f);
	return 0;
}

static const json_t *
metric(json_t *body, const char *name)
{
	json_t *m;
	size_t i;

	json_array_foreach(json_object_get(body, "metrics"), i, m)
	{
		if (strcmp(json_string_value(json_object_get(m, "name")),
		        name) == 0)
			return m;
	}
	return NULL;
}

TEST(test_agent__fio_run_is_ok_with_metrics)
{
	struct buf raw = BUF_INIT(CAP_RAW_OUTPUT * 4);
	struct exec_result r;
	const json_t *m;
	json_t *body;

	ASSERT(load(&raw, "bench/fio.randread.json") == 0);
	fake_result(&r, raw.data, raw.len, 0, "");
	body = agent_run_body(2, "fio", NULL, &r, NULL, CAP_RAW_OUTPUT);
	ASSERT_STREQ(json_string_value(json_object_get(body, "status")), "ok");
	ASSERT_INTEQ(json_integer_value(json_object_get(body, "index")), 2);
	ASSERT(json_is_null(json_object_get(body, "error")));
	ASSERT_NEAR(
	    json_real_value(json_object_get(body, "duration_s")), 1.5, 1e-9);
	m = metric(body, "read_iops");
	ASSERT(m != NULL);
	ASSERT(json_real_value(json_object_get(m, "value")) > 0);
	ASSERT_STREQ(json_string_value(json_object_get(m, "better")), "higher");
	/* The raw output goes up as it was. */
	ASSERT_INTEQ(json_string_length(json_object_get(body, "raw")), raw.len);
	json_decref(body);
	exec_result_release(&r);
	buf_release(&raw);
}

TEST(test_agent__unparsable_output_fails_without_zeros)
{
	static const char out[] = "fio: pid=1, err=2/file:filesetup.c\n";
	struct exec_result r;
	json_t *body;
	const char *err, *raw;

	fake_result(&r, out, sizeof(out) - 1, 0, "");
	body = agent_run_body(0, "fio", NULL, &r, NULL, CAP_RAW_OUTPUT);
	ASSERT_STREQ(
	    json_string_value(json_object_get(body, "status")), "failed");
	ASSERT_INTEQ(json_array_size(json_object_get(body, "metrics")), 0);
	err = json_string_value(json_object_get(body, "error"));
	ASSERT(err != NULL && strncmp(err, "fio", 3) == 0);
	raw = json_string_value(json_object_get(body, "raw"));
	ASSERT_STREQ(raw, out);
	json_decref(body);
	exec_result_release(&r);
}

TEST(test_agent__nonzero_exit_fails_with_stderr_in_raw)
{
	static const char out[] = "latency=5\n";
	struct exec_result r;
	json_t *body;
	const char *raw;

	/* Even parsable output does not count when the command failed. */
	fake_result(&r, out, sizeof(out) - 1, 3, "boom\n");
	body = agent_run_body(1, "keyvalue", NULL, &r, NULL, CAP_RAW_OUTPUT);
	ASSERT_STREQ(
	    json_string_value(json_object_get(body, "status")), "failed");
	ASSERT_STREQ(
	    json_string_value(json_object_get(body, "error")), "exit 3");
	ASSERT_INTEQ(json_array_size(json_object_get(body, "metrics")), 0);
	raw = json_string_value(json_object_get(body, "raw"));
	ASSERT(strstr(raw, "latency=5") != NULL);
	ASSERT(strstr(raw, "--- stderr ---\nboom") != NULL);
	json_decref(body);
	exec_result_release(&r);
}

TEST(test_agent__spawn_error_and_timeout)
{
	struct exec_result r;
	json_t *body;

	body = agent_run_body(4, "fio", NULL, NULL,
	    "fio: No such file or directory", CAP_RAW_OUTPUT);
	ASSERT_STREQ(
	    json_string_value(json_object_get(body, "status")), "failed");
	ASSERT_STREQ(json_string_value(json_object_get(body, "error")),
	    "cannot start: fio: No such file or directory");
	json_decref(body);

	fake_result(&r, "", 0, 0, "");
	r.exited = 0;
	r.timed_out = 1;
	r.signo = 15;
	body = agent_run_body(4, "fio", NULL, &r, NULL, CAP_RAW_OUTPUT);
	ASSERT(strstr(json_string_value(json_object_get(body, "error")),
	           "timed out") != NULL);
	json_decref(body);
	exec_result_release(&r);
}

TEST(test_agent__raw_is_capped_and_valid_utf8)
{
	/* Invalid bytes, a NUL, an overlong '/', a split 3-byte sequence. */
	static const char out[] = "a\xff"
	                          "b\0c\xc0\xaf"
	                          "d\xe2\x82";
	struct exec_result r;
	json_t *body;
	const char *raw;
	char *dump;

	fake_result(&r, out, sizeof(out) - 1, 1, "");
	body = agent_run_body(0, "keyvalue", NULL, &r, NULL, CAP_RAW_OUTPUT);
	raw = json_string_value(json_object_get(body, "raw"));
	ASSERT(raw != NULL);
	ASSERT_STREQ(raw,
	    "a\xef\xbf\xbd"
	    "b\xef\xbf\xbd"
	    "c\xef\xbf\xbd\xef\xbf\xbd"
	    "d\xef\xbf\xbd\xef\xbf\xbd");
	dump = pwjson_dump(body);
	ASSERT(dump != NULL && strstr(dump, "\"raw\"") != NULL);
	free(dump);
	json_decref(body);
	exec_result_release(&r);

	fake_result(&r, "0123456789", 10, 1, "");
	body = agent_run_body(0, "keyvalue", NULL, &r, NULL, 4);
	ASSERT_STREQ(json_string_value(json_object_get(body, "raw")), "0123");
	json_decref(body);
	exec_result_release(&r);
}

TEST(test_agent__directions_from_the_job_config)
{
	static const char out[] = "ops=1200 ops/s\nlat=35.5 us\nnote=x\n";
	static const char dj[] = "{\"ops\": {\"better\": \"higher\"}}";
	struct exec_result r;
	struct err e = { 0 };
	json_t *dirs, *body;
	const json_t *m;

	/* keyvalue cannot tell a direction: only the job config can. */
	fake_result(&r, out, sizeof(out) - 1, 0, "");
	body = agent_run_body(0, "keyvalue", NULL, &r, NULL, CAP_RAW_OUTPUT);
	ASSERT_STREQ(
	    json_string_value(json_object_get(body, "status")), "failed");
	ASSERT(strstr(json_string_value(json_object_get(body, "error")),
	           "no metric with a direction (ops, lat)") != NULL);
	json_decref(body);

	dirs = pwjson_parse(dj, sizeof(dj) - 1, &e);
	ASSERT(dirs != NULL);
	body = agent_run_body(0, "keyvalue", dirs, &r, NULL, CAP_RAW_OUTPUT);
	ASSERT_STREQ(json_string_value(json_object_get(body, "status")), "ok");
	ASSERT(json_is_null(json_object_get(body, "error")));
	ASSERT_INTEQ(json_array_size(json_object_get(body, "metrics")), 1);
	m = metric(body, "ops");
	ASSERT(m != NULL);
	ASSERT_NEAR(json_real_value(json_object_get(m, "value")), 1200, 1e-9);
	ASSERT_STREQ(json_string_value(json_object_get(m, "better")), "higher");
	ASSERT(metric(body, "lat") == NULL);
	json_decref(body);
	json_decref(dirs);
	exec_result_release(&r);
}

/* What a run says of its kernel: a booted build, or the running kernel
 * that no job built; what is not known is "unknown"/null, never made up. */
TEST(test_agent__kernel_facts)
{
	json_t *k = agent_kernel_facts(
	    "-pw17", "6.1.158-pw17", "93d1b1fde44c8a54", "qemu", 1, 0);
	char *s;

	ASSERT_STREQ(
	    json_string_value(json_object_get(k, "build_id")), "-pw17");
	ASSERT_STREQ(
	    json_string_value(json_object_get(k, "release")), "6.1.158-pw17");
	ASSERT_STREQ(json_string_value(json_object_get(k, "config_sha256")),
	    "93d1b1fde44c8a54");
	ASSERT_STREQ(json_string_value(json_object_get(k, "boot")), "qemu");
	ASSERT(json_is_true(json_object_get(k, "cached")));
	ASSERT(json_is_null(json_object_get(k, "shared_build")));
	json_decref(k);
	/* An image downloaded from the daemon's shared build 4. */
	k = agent_kernel_facts("-pwb4-0a1b", "6.1.158-pwb4-0a1b",
	    "93d1b1fde44c8a54", "kexec", 0, 4);
	ASSERT_INTEQ(json_integer_value(json_object_get(k, "shared_build")), 4);
	json_decref(k);
	k = agent_kernel_facts("none", "6.1.0-13-amd64", NULL, "none", -1, 0);
	ASSERT_STREQ(json_string_value(json_object_get(k, "build_id")), "none");
	ASSERT_STREQ(
	    json_string_value(json_object_get(k, "config_sha256")), "unknown");
	ASSERT(json_is_null(json_object_get(k, "cached")));
	json_decref(k);
	/* Bytes that are not UTF-8 text are not a release either. */
	k = agent_kernel_facts("-pw3", "6.1\xff\xfe", "", "kexec", 0, 0);
	ASSERT(k != NULL);
	ASSERT_STREQ(
	    json_string_value(json_object_get(k, "release")), "unknown");
	json_decref(k);
	k = agent_kernel_facts("-pw3", "", "", "kexec", 0, 0);
	ASSERT_STREQ(
	    json_string_value(json_object_get(k, "release")), "unknown");
	ASSERT(json_is_false(json_object_get(k, "cached")));
	s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
	ASSERT_STREQ(s,
	    "{\"boot\":\"kexec\",\"build_id\":\"-pw3\",\"cached\":false,"
	    "\"config_sha256\":\"unknown\",\"release\":\"unknown\","
	    "\"shared_build\":null}");
	free(s);
	json_decref(k);
}
