#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/runfile.h"
#include "common/buf.h"
#include "common/caps.h"
#include "common/files.h"
#include "common/json.h"
#include "common/xalloc.h"

#define NUM_TOKEN_MAX 64

static struct runfile_metric *
metric_get(struct runfile *rf, const char *name, int labels)
{
	struct runfile_metric *m = runfile_find(rf, name);

	if (m != NULL)
		return m;
	rf->m = xreallocarray(rf->m, rf->n + 1, sizeof(*rf->m));
	m = &rf->m[rf->n++];
	memset(m, 0, sizeof(*m));
	m->name = xstrdup(name);
	if (labels)
		m->label = xmalloc(sizeof(*m->label)); /* grown with v */
	return m;
}

static void
metric_add(
    struct runfile_metric *m, double v, const char *label, size_t label_len)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->v = xreallocarray(m->v, m->cap, sizeof(*m->v));
		if (m->label != NULL)
			m->label =
			    xreallocarray(m->label, m->cap, sizeof(*m->label));
	}
	if (m->label != NULL)
		m->label[m->n] =
		    label != NULL ? xstrndup(label, label_len) : NULL;
	m->v[m->n++] = v;
}

struct runfile_metric *
runfile_find(struct runfile *rf, const char *name)
{
	size_t i;

	for (i = 0; i < rf->n; i++)
		if (strcmp(rf->m[i].name, name) == 0)
			return &rf->m[i];
	return NULL;
}

void
runfile_release(struct runfile *rf)
{
	size_t i, j;

	if (rf == NULL)
		return;
	for (i = 0; i < rf->n; i++) {
		struct runfile_metric *m = &rf->m[i];

		free(m->name);
		free(m->unit);
		free(m->bad);
		if (m->label != NULL)
			for (j = 0; j < m->n; j++)
				free(m->label[j]);
		free(m->label);
		free(m->v);
	}
	free(rf->m);
	memset(rf, 0, sizeof(*rf));
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Parses the token [p, p+len) as a finite positive number. */
static int
parse_value(double *out, const char *p, size_t len, const char *path,
    size_t line, struct err *e)
{
	char tok[NUM_TOKEN_MAX + 1], *end;
	double v;

	if (len > NUM_TOKEN_MAX)
		return err_set(e, "%s:%zu: not a number", path, line);
	memcpy(tok, p, len);
	tok[len] = '\0';
	errno = 0;
	v = strtod(tok, &end);
	if (end == tok || *end != '\0')
		return err_set(
		    e, "%s:%zu: not a number: '%s'", path, line, tok);
	if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1))
		return err_set(
		    e, "%s:%zu: not a finite number: '%s'", path, line, tok);
	if (!(v > 0))
		return err_set(e,
		    "%s:%zu: %s is not positive (the analysis takes "
		    "logarithms)",
		    path, line, tok);
	*out = v;
	return 0;
}

static int
load_plain(struct runfile *rf, const char *data, size_t len, const char *path,
    int labels, struct err *e)
{
	struct runfile_metric *m = metric_get(rf, "value", labels);
	size_t pos = 0, line = 0;

	while (pos < len) {
		const char *tok[3];
		size_t toklen[3], ntok = 0, end = pos, i;
		double v = 0;

		line++;
		while (end < len && data[end] != '\n')
			end++;
		/* Tokens of this line up to a '#' comment. */
		for (i = pos; i < end && data[i] != '#';) {
			size_t s;

			while (i < end && is_blank(data[i]))
				i++;
			if (i >= end || data[i] == '#')
				break;
			s = i;
			while (i < end && !is_blank(data[i]) && data[i] != '#')
				i++;
			if (ntok == 3)
				return err_set(e, "%s:%zu: expected %s", path,
				    line,
				    labels ? "VALUE or LABEL VALUE"
				           : "one number");
			tok[ntok] = data + s;
			toklen[ntok++] = i - s;
		}
		pos = end + 1;
		if (ntok == 0)
			continue;
		if (ntok > (labels ? 2u : 1u))
			return err_set(e, "%s:%zu: expected %s", path, line,
			    labels ? "VALUE or LABEL VALUE" : "one number");
		for (i = 0; i < ntok; i++)
			if (memchr(tok[i], '\0', toklen[i]) != NULL)
				return err_set(
				    e, "%s:%zu: NUL byte", path, line);
		if (parse_value(&v, tok[ntok - 1], toklen[ntok - 1], path, line,
		        e) != 0)
			return -1;
		if (ntok == 2 && toklen[0] > CAP_NAME)
			return err_set(e, "%s:%zu: label longer than %d bytes",
			    path, line, CAP_NAME);
		metric_add(m, v, ntok == 2 ? tok[0] : NULL, toklen[0]);
	}
	if (m->n == 0)
		return err_set(e, "%s: no values", path);
	return 0;
}

static int
load_metric(struct runfile *rf, json_t *jm, size_t ri, size_t mi,
    const char *path, struct err *e)
{
	json_t *jn, *jv, *ju, *jb;
	struct runfile_metric *m;
	const char *name;
	double v;

	if (!json_is_object(jm))
		return err_set(e,
		    "%s: runs[%zu].metrics[%zu]: expected an object", path, ri,
		    mi);
	jn = json_object_get(jm, "name");
	jv = json_object_get(jm, "value");
	ju = json_object_get(jm, "unit");
	jb = json_object_get(jm, "better");
	if (!json_is_string(jn) || json_string_length(jn) == 0 ||
	    json_string_length(jn) > CAP_NAME)
		return err_set(e,
		    "%s: runs[%zu].metrics[%zu].name: expected a name", path,
		    ri, mi);
	name = json_string_value(jn);
	if (jv == NULL || json_is_null(jv))
		return 0; /* a metric the run could not measure */
	if (!json_is_number(jv))
		return err_set(e,
		    "%s: runs[%zu].metrics[%zu].value: expected a number", path,
		    ri, mi);
	if (ju != NULL && !json_is_null(ju) && !json_is_string(ju))
		return err_set(e,
		    "%s: runs[%zu].metrics[%zu].unit: expected a string", path,
		    ri, mi);
	/* better "info" (memcg telemetry, docs/MEMCG.md): shown by the
	 * service, never judged, so not loaded for analysis. */
	if (json_is_string(jb) && strcmp(json_string_value(jb), "info") == 0)
		return 0;
	if (jb != NULL && !json_is_null(jb) &&
	    (!json_is_string(jb) ||
	        (strcmp(json_string_value(jb), "higher") != 0 &&
	            strcmp(json_string_value(jb), "lower") != 0)))
		return err_set(e,
		    "%s: runs[%zu].metrics[%zu].better: expected \"higher\", "
		    "\"lower\" or \"info\"",
		    path, ri, mi);
	m = metric_get(rf, name, 0);
	if (m->unit == NULL && json_is_string(ju))
		m->unit = xstrdup(json_string_value(ju));
	if (m->better == 0 && json_is_string(jb))
		m->better = strcmp(json_string_value(jb), "higher") == 0
		    ? ANALYSIS_HIGHER
		    : ANALYSIS_LOWER;
	v = json_number_value(jv);
	if (!(v > 0) && m->bad == NULL)
		m->bad = xasprintf("%s: runs[%zu].metrics[%zu] '%s': value %g "
		                   "is not positive (the analysis takes "
		                   "logarithms)",
		    path, ri, mi, name, v);
	metric_add(m, v, NULL, 0);
	return 0;
}

static int
load_json(struct runfile *rf, const char *path, struct err *e)
{
	json_t *root, *runs, *run;
	size_t ri, mi, total = 0;
	int rc = -1;

	if ((root = pwjson_load_file(path, CAP_HTTP_REPLY, e)) == NULL)
		return -1;
	rf->json = 1;
	runs = json_object_get(root, "runs");
	if (!json_is_array(runs)) {
		err_set(e, "%s: runs: expected an array of runs", path);
		goto out;
	}
	json_array_foreach(runs, ri, run)
	{
		json_t *st, *ms, *jm;

		if (!json_is_object(run)) {
			err_set(
			    e, "%s: runs[%zu]: expected an object", path, ri);
			goto out;
		}
		st = json_object_get(run, "status");
		if (st != NULL && !json_is_null(st)) {
			if (!json_is_string(st)) {
				err_set(e,
				    "%s: runs[%zu].status: expected a "
				    "string",
				    path, ri);
				goto out;
			}
			if (strcmp(json_string_value(st), "ok") != 0)
				continue;
		}
		ms = json_object_get(run, "metrics");
		if (ms == NULL || json_is_null(ms))
			continue;
		if (!json_is_array(ms)) {
			err_set(e, "%s: runs[%zu].metrics: expected an array",
			    path, ri);
			goto out;
		}
		json_array_foreach(ms, mi, jm)
		{
			if (load_metric(rf, jm, ri, mi, path, e) != 0)
				goto out;
			total++;
		}
	}
	if (total == 0) {
		err_set(e, "%s: no metric values in any run", path);
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int
runfile_load(struct runfile *out, const char *path, int labels, struct err *e)
{
	struct buf b;
	size_t i;
	int fd, rc, saved;

	memset(out, 0, sizeof(*out));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return err_set(e, "%s: cannot open: %s", path, strerror(errno));
	buf_init(&b, CAP_HTTP_REPLY);
	rc = files_read_fd(&b, fd, CAP_HTTP_REPLY);
	saved = errno;
	close(fd);
	if (rc == -1) {
		buf_release(&b);
		if (saved == EFBIG)
			return err_set(e, "%s: larger than %d bytes", path,
			    CAP_HTTP_REPLY);
		return err_set(e, "%s: read error", path);
	}
	for (i = 0; i < b.len && isspace((unsigned char)b.data[i]); i++)
		;
	if (i < b.len && b.data[i] == '{')
		rc = load_json(out, path, e);
	else
		rc = load_plain(out, b.data, b.len, path, labels, e);
	buf_release(&b);
	if (rc != 0)
		runfile_release(out);
	return rc;
}
