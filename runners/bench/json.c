/*
 * Generic JSON: either our own format (what `perfwatch parse --json`
 * prints, so its output parses back to the same metrics)
 *	{"metrics":[{"name":"x","value":1.5,"unit":"us","better":"lower"}]}
 * where unit and better are optional (better defaults to "info"), or a
 * flat object whose number fields are metrics (better "info").  In a flat
 * object, strings, booleans and null are skipped; nested objects and
 * arrays are skipped too, since their meaning is unknown.
 */
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "runners/bench/bench_int.h"

static int
parse_list(struct bench_result *out, json_t *list)
{
	static const char *const keys[] = { "name", "value", "unit", "better",
		NULL };
	json_t *m;
	size_t i;

	if (!json_is_array(list))
		return err_set(&out->err, "field 'metrics': expected an array");
	json_array_foreach(list, i, m)
	{
		const char *name = NULL, *unit = "", *better = "info";
		char what[48];
		double v;
		int b;

		snprintf(what, sizeof(what), "metrics[%zu]", i);
		if (pwjson_only_keys(m, keys, what, &out->err) < 0)
			return -1;
		if (pwjson_str(&name, m, "name", &out->err) < 0 ||
		    pwjson_num(&v, m, "value", &out->err) < 0 ||
		    pwjson_str_opt(&unit, m, "unit", &out->err) < 0 ||
		    pwjson_str_opt(&better, m, "better", &out->err) < 0) {
			char msg[CAP_ERRMSG];

			memcpy(msg, out->err.msg, sizeof(msg));
			err_clear(&out->err);
			return err_set(&out->err, "%s: %s", what, msg);
		}
		if (bench_better_parse(&b, better) < 0)
			return err_set(&out->err,
			    "field '%s.better': '%.20s' is not higher, "
			    "lower or info",
			    what, better);
		if (bench_add(out, name, v, unit, b) < 0) {
			char msg[CAP_ERRMSG];

			memcpy(msg, out->err.msg, sizeof(msg));
			err_clear(&out->err);
			return err_set(&out->err, "%s: %s", what, msg);
		}
	}
	return 0;
}

int
bench_json_parse(struct bench_result *out, const char *raw, size_t len)
{
	json_t *root, *v;
	const char *k;
	int rc = 0;

	if ((root = pwjson_parse(raw, len, &out->err)) == NULL)
		return -1;
	if (!json_is_object(root)) {
		json_decref(root);
		return err_set(&out->err, "expected a JSON object at the top");
	}
	if ((v = json_object_get(root, "metrics")) != NULL &&
	    json_object_size(root) == 1) {
		rc = parse_list(out, v);
	} else {
		json_object_foreach(root, k, v)
		{
			if (!json_is_number(v))
				continue;
			if ((rc = bench_add(out, k, json_number_value(v), "",
			         BENCH_INFO)) < 0) {
				char msg[CAP_ERRMSG];

				memcpy(msg, out->err.msg, sizeof(msg));
				err_clear(&out->err);
				rc = err_set(
				    &out->err, "field '%.60s': %s", k, msg);
				break;
			}
		}
		if (rc == 0 && out->n == 0)
			rc = err_set(&out->err,
			    "no number field in the top-level object");
	}
	json_decref(root);
	return rc;
}
