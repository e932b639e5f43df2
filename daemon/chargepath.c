/*
 * Differential top charge-path symbols of a pair (chargepath.h).
 */
#include <math.h>
#include <string.h>

#include "daemon/chargepath.h"
#include "store/runs.h"

#define SYMS_MAX 256

size_t
chargepath_diff(struct chargepath_sym *out, size_t max, int out_runs[2],
    const struct store_run_metas *rows, json_t **keep)
{
	struct chargepath_sym all[SYMS_MAX], t;
	json_t *parsed = json_array(), *blob, *m;
	double sum[SYMS_MAX][2];
	int runs[2] = { 0, 0 };
	size_t i, k, n = 0, a, b;
	const char *role, *text, *sym;
	int side;

	memset(sum, 0, sizeof(sum));
	for (i = 0; rows != NULL && i < rows->n; i++) {
		role = rows->v[i].role;
		text = rows->v[i].profile_json;
		/* A document that does not parse says nothing (the runs
		 * route stored it re-encoded, so none has duplicate keys). */
		if (role == NULL || text == NULL ||
		    (blob = pwjson_parse(text, strlen(text), NULL)) == NULL)
			continue;
		json_array_append_new(parsed, blob);
		if (!json_is_number(json_object_get(blob, "share_pct")))
			continue; /* unknown share: no numbers to average */
		side = strcmp(role, "base") == 0 ? 0 : 1;
		runs[side]++;
		json_array_foreach(json_object_get(blob, "matched"), k, m)
		{
			sym = json_string_value(json_object_get(m, "symbol"));
			if (sym == NULL)
				continue;
			for (a = 0; a < n && strcmp(all[a].symbol, sym); a++)
				;
			if (a == n) {
				if (n == SYMS_MAX)
					continue;
				memset(&all[n], 0, sizeof(all[n]));
				all[n++].symbol = sym;
			}
			sum[a][side] +=
			    json_number_value(json_object_get(m, "pct"));
		}
	}
	for (a = 0; a < n; a++) {
		all[a].base_pct = runs[0] ? sum[a][0] / runs[0] : NAN;
		all[a].cand_pct = runs[1] ? sum[a][1] / runs[1] : NAN;
	}
	/* Largest change first (an unknown side sorts by the other). */
	for (a = 1; a < n; a++)
		for (b = a; b > 0; b--) {
			double d0 = fabs(
			    (isnan(all[b - 1].cand_pct) ? 0
			                                : all[b - 1].cand_pct) -
			    (isnan(all[b - 1].base_pct) ? 0
			                                : all[b - 1].base_pct));
			double d1 = fabs(
			    (isnan(all[b].cand_pct) ? 0 : all[b].cand_pct) -
			    (isnan(all[b].base_pct) ? 0 : all[b].base_pct));

			if (d1 <= d0)
				break;
			t = all[b];
			all[b] = all[b - 1];
			all[b - 1] = t;
		}
	for (a = 0; a < n && a < max; a++)
		out[a] = all[a];
	out_runs[0] = runs[0];
	out_runs[1] = runs[1];
	/* The symbols point into the parsed blobs: the caller keeps them. */
	*keep = parsed;
	return a;
}
