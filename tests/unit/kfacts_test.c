/*
 * daemon/kfacts.c: which kernel each side of a pair ran, from the rows
 * runs store_pair_run_meta_list() gives (the store round trip is in
 * store_test).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/xalloc.h"
#include "daemon/kfacts.h"
#include "store/runs.h"
#include "tests/unit/test.h"

#define SHA64 "93d1b1fde44c8a5495b335781bafe52391ba08561eaabd931e43fb591ea35b0a"

/* A run of role (measured or the profile slot) with kernel_build kb
 * (JSON text; NULL: no host state at all), as store_pair_run_meta_list()
 * gives it. */
static void
row(struct store_run_metas *rows, const char *role, int measured,
    const char *kb)
{
	struct store_run_meta *m;

	rows->v = xreallocarray(rows->v, rows->n + 1, sizeof(*rows->v));
	m = &rows->v[rows->n++];
	memset(m, 0, sizeof(*m));
	m->role = xstrdup(role);
	m->measured = measured;
	m->host_state_json = kb ? xasprintf("{\"kernel\": \"6.1.0\", "
	                                    "\"kernel_build\": %s}",
	                              kb)
	                        : NULL;
}

static const char kb41[] =
    "{\"build_id\": \"-pw41\", \"release\": \"6.1.158-pw41\", "
    "\"config_sha256\": \"" SHA64 "\", \"boot\": \"qemu\", "
    "\"cached\": true}";
static const char kb42[] =
    "{\"build_id\": \"-pw42\", \"release\": \"6.1.158-pw42\", "
    "\"config_sha256\": \"" SHA64 "\", \"boot\": \"qemu\", "
    "\"cached\": false}";

TEST(test_kfacts__sides_and_line)
{
	struct store_run_metas rows = { 0 };
	struct kfacts k[2];
	struct buf b = BUF_INIT(1024);

	row(&rows, "base", 1, kb41);
	row(&rows, "base", 1, kb41);
	row(&rows, "candidate", 1, kb42);
	/* The profile slot past max_runs is not a measured run. */
	row(&rows, "candidate", 0, kb41);
	kfacts_sides(k, &rows);
	ASSERT_STREQ(k[0].build_id, "-pw41");
	ASSERT_INTEQ(k[0].runs, 2);
	ASSERT_STREQ(k[1].build_id, "-pw42");
	ASSERT_STREQ(k[1].cached, "no");
	ASSERT_INTEQ(k[1].runs, 1);
	kfacts_line(&b, &k[0]);
	ASSERT_STREQ(b.data,
	    "6.1.158-pw41 build -pw41 config 93d1b1fde44c (boot qemu, "
	    "cached yes)");
	buf_reset(&b);
	ASSERT_INTEQ(kfacts_warning(&b, k, "aa", "bb"), 0);
	ASSERT_STREQ(b.data, "");
	store_run_metas_release(&rows);
	buf_release(&b);
}

TEST(test_kfacts__unknown_mixed_and_running_kernel)
{
	struct store_run_metas rows = { 0 };
	json_t *o;
	struct kfacts k[2];
	struct buf b = BUF_INIT(1024);

	/* No runs at all, and rows NULL: unknown, not made up. */
	kfacts_sides(k, NULL);
	ASSERT_STREQ(k[0].build_id, "unknown");
	ASSERT_STREQ(k[1].config_sha256, "unknown");
	ASSERT_INTEQ(k[0].runs, 0);
	kfacts_line(&b, &k[1]);
	ASSERT_STREQ(b.data, "unknown (no run reported its kernel)");
	/* Base: two builds across its runs; candidate: the running
	 * kernel of a job without kernel: (build none). */
	row(&rows, "base", 1, kb41);
	row(&rows, "base", 1, kb42);
	row(&rows, "candidate", 1,
	    "{\"build_id\": \"none\", \"release\": \"6.1.0-13-amd64\", "
	    "\"config_sha256\": \"unknown\", \"boot\": \"none\", "
	    "\"cached\": null}");
	kfacts_sides(k, &rows);
	ASSERT_STREQ(k[0].build_id, "-pw41 | -pw42");
	ASSERT_STREQ(k[0].config_sha256, SHA64);
	ASSERT_STREQ(k[0].cached, "yes | no");
	buf_reset(&b);
	kfacts_line(&b, &k[1]);
	ASSERT_STREQ(b.data,
	    "6.1.0-13-amd64 build none config unknown (boot none: the "
	    "running kernel)");
	o = kfacts_json(&k[0]);
	ASSERT_STREQ(
	    json_string_value(json_object_get(o, "build_id")), "-pw41 | -pw42");
	ASSERT_INTEQ(json_integer_value(json_object_get(o, "runs")), 2);
	json_decref(o);
	/* Base measured on two kernels: said; neither a mix nor "none"
	 * twice is one build on both sides. */
	buf_reset(&b);
	ASSERT_INTEQ(kfacts_warning(&b, k, "aa", "bb"), 1);
	ASSERT_STREQ(b.data,
	    "the base runs ran on more than one kernel build (-pw41 | "
	    "-pw42): that side mixes the measurements of different kernels");
	buf_reset(&b);
	memcpy(&k[0], &k[1], sizeof(k[0]));
	ASSERT_INTEQ(kfacts_warning(&b, k, "aa", "bb"), 0);
	/* One build and runs that did not say: not two builds. */
	snprintf(k[0].build_id, sizeof(k[0].build_id), "-pw41 | unknown");
	ASSERT_INTEQ(kfacts_warning(&b, k, "aa", "bb"), 0);
	ASSERT_STREQ(b.data, "");
	store_run_metas_release(&rows);
	buf_release(&b);
}

TEST(test_kfacts__same_build_both_sides_warns)
{
	struct store_run_metas rows = { 0 };
	struct kfacts k[2];
	struct buf b = BUF_INIT(1024);

	row(&rows, "base", 1, kb41);
	row(&rows, "candidate", 1, kb41);
	kfacts_sides(k, &rows);
	ASSERT_INTEQ(kfacts_warning(&b, k, "aa", "bb"), 1);
	ASSERT(strstr(b.data,
	           "both sides ran the same kernel build -pw41 "
	           "(6.1.158-pw41)") != NULL);
	/* Commits unknown: still suspicious. */
	buf_reset(&b);
	ASSERT_INTEQ(kfacts_warning(&b, k, NULL, "bb"), 1);
	/* An A/A pair (one commit): one build is right. */
	buf_reset(&b);
	ASSERT_INTEQ(kfacts_warning(&b, k, "aa", "aa"), 0);
	store_run_metas_release(&rows);
	buf_release(&b);
}

/* Runner text: control characters are cleaned, a long value is cut at
 * a UTF-8 boundary (the JSON stays valid), duplicates fold. */
TEST(test_kfacts__hostile_values)
{
	struct store_run_metas rows = { 0 };
	json_t *o;
	struct kfacts k[2];
	struct buf kb = BUF_INIT(4096);
	char *s;
	int i;

	buf_puts(&kb, "{\"build_id\": \"-pw1\\r\\nBcc: x\", \"release\": \"");
	for (i = 0; i < 300; i++)
		buf_puts(&kb, "\xc3\xa9"); /* é: 600 bytes */
	buf_puts(&kb, "\", \"boot\": 7}");
	row(&rows, "base", 1, kb.data);
	kfacts_sides(k, &rows);
	ASSERT_STREQ(k[0].build_id, "-pw1  Bcc: x");
	ASSERT(strlen(k[0].release) < KFACTS_VAL);
	ASSERT_INTEQ(strlen(k[0].release) % 2, 0);
	ASSERT_STREQ(k[0].boot, "unknown"); /* not a string */
	o = kfacts_json(&k[0]);
	ASSERT(o != NULL);
	s = json_dumps(o, JSON_COMPACT);
	ASSERT(s != NULL);
	free(s);
	json_decref(o);
	store_run_metas_release(&rows);
	buf_release(&kb);
}

TEST(test_kfacts__pair)
{
	struct store_run_metas rows = { 0 };
	struct kfacts_pair k;
	struct buf b = BUF_INIT(CAP_ERRMSG);

	row(&rows, "base", 1, kb41);
	row(&rows, "candidate", 1, kb41);
	kfacts_pair(&k, &rows, "aa", "bb");
	ASSERT_STREQ(k.side[0].build_id, "-pw41");
	ASSERT_STREQ(k.side[1].build_id, "-pw41");
	/* The warning is kfacts_warning's text for the same sides. */
	ASSERT_INTEQ(kfacts_warning(&b, k.side, "aa", "bb"), 1);
	ASSERT_STREQ(k.warning, b.data);
	/* An A/A pair (one commit) may run one build: no warning. */
	kfacts_pair(&k, &rows, "aa", "aa");
	ASSERT_STREQ(k.warning, "");
	kfacts_pair(&k, NULL, "aa", "bb");
	ASSERT_STREQ(k.side[1].release, "unknown");
	ASSERT_INTEQ(k.side[1].runs, 0);
	ASSERT_STREQ(k.warning, "");
	store_run_metas_release(&rows);
	buf_release(&b);
}
