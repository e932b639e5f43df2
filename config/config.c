/*
 * The YAML loader: libyaml's document API gives a tree with positions;
 * one schema table per file kind (as Redis' config table) says which keys
 * exist, their type, where they go, their default and bounds.  Every
 * problem is collected as "file:line:col: key: message" and the load goes
 * on, so a user sees all errors of a file at once.
 *
 * libyaml is used in this file only.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "config/config.h"

/* ---- errors ---- */

struct cfg_msg {
	size_t line, col; /* 1-based; 0 = no position */
	size_t seq;
	char *text;
};

struct ctx {
	const char *file;
	char *dir; /* for relative paths; NULL leaves them as written */
	yaml_document_t *doc;
	struct cfg_msg *msgs;
	size_t nmsgs, capmsgs, dropped;
	/* Job loading: the job being built and the daemon to check against. */
	struct job_config *job;
	const struct daemon_config *daemon;
	struct job_config *const *others; /* for unique job names */
	size_t nothers;
	/* Daemon loading: the daemon being built. */
	struct daemon_config *dcfg;
};

void
cfg_errors_free(struct cfg_errors *e)
{
	size_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->n; i++)
		free(e->msg[i]);
	free(e->msg);
	e->msg = NULL;
	e->n = 0;
}

static void
errors_push(struct cfg_errors *e, char *s)
{
	e->msg = xreallocarray(e->msg, e->n + 1, sizeof(char *));
	e->msg[e->n++] = s;
}

void
cfg_errors_add(struct cfg_errors *e, const char *fmt, ...)
{
	struct buf b = BUF_INIT(CAP_ERRMSG);
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	errors_push(e, buf_take(&b));
}

__attribute__((format(printf, 5, 0))) static void
vmsg(struct ctx *c, size_t line, size_t col, const char *path, const char *fmt,
    va_list ap)
{
	struct buf b = BUF_INIT(CAP_ERRMSG);
	struct cfg_msg *m;

	if (c->nmsgs >= CFG_ERRORS_MAX) {
		c->dropped++;
		return;
	}
	if (path != NULL && *path != '\0')
		buf_printf(&b, "%s: ", path);
	buf_vprintf(&b, fmt, ap);
	if (c->nmsgs == c->capmsgs) {
		c->capmsgs = c->capmsgs ? c->capmsgs * 2 : 8;
		c->msgs = xreallocarray(c->msgs, c->capmsgs, sizeof(*c->msgs));
	}
	m = &c->msgs[c->nmsgs];
	m->line = line;
	m->col = col;
	m->seq = c->nmsgs++;
	m->text = buf_take(&b);
}

__attribute__((format(printf, 5, 6))) static void
at(struct ctx *c, size_t line, size_t col, const char *path, const char *fmt,
    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(c, line, col, path, fmt, ap);
	va_end(ap);
}

/* An error at a node (libyaml marks are 0-based). */
__attribute__((format(printf, 4, 5))) static void
nerr(
    struct ctx *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (n != NULL)
		vmsg(c, n->start_mark.line + 1, n->start_mark.column + 1, path,
		    fmt, ap);
	else
		vmsg(c, 0, 0, path, fmt, ap);
	va_end(ap);
}

static int
msg_cmp(const void *a, const void *b)
{
	const struct cfg_msg *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Moves the collected messages, in file order, to errs. */
static int
ctx_flush(struct ctx *c, struct cfg_errors *errs)
{
	size_t i, n = c->nmsgs;

	if (c->nmsgs > 0)
		qsort(c->msgs, c->nmsgs, sizeof(*c->msgs), msg_cmp);
	for (i = 0; i < c->nmsgs; i++) {
		struct cfg_msg *m = &c->msgs[i];

		if (errs != NULL && m->line > 0)
			cfg_errors_add(errs, "%s:%zu:%zu: %s", c->file, m->line,
			    m->col, m->text);
		else if (errs != NULL)
			cfg_errors_add(errs, "%s: %s", c->file, m->text);
		free(m->text);
	}
	if (c->dropped > 0 && errs != NULL)
		cfg_errors_add(
		    errs, "%s: %zu more errors not shown", c->file, c->dropped);
	free(c->msgs);
	c->msgs = NULL;
	c->nmsgs = c->capmsgs = 0;
	n += c->dropped;
	c->dropped = 0;
	return n > 0 ? -1 : 0;
}

/* ---- reading and parsing ---- */

static int
read_file(char **out, size_t *len, const char *path, struct ctx *c)
{
	struct stat st;
	char *data;
	size_t got = 0;
	ssize_t r;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		at(c, 0, 0, NULL, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		at(c, 0, 0, NULL, "not a regular file");
		close(fd);
		return -1;
	}
	if (st.st_size > CAP_CONFIG_FILE) {
		at(c, 0, 0, NULL, "file too large (%lld bytes, at most %d)",
		    (long long)st.st_size, CAP_CONFIG_FILE);
		close(fd);
		return -1;
	}
	data = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		r = read(fd, data + got, (size_t)st.st_size - got);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			at(c, 0, 0, NULL, "read error: %s",
			    r == 0 ? "file shrank" : strerror(errno));
			free(data);
			close(fd);
			return -1;
		}
		got += (size_t)r;
	}
	close(fd);
	data[got] = '\0';
	*out = data;
	*len = got;
	return 0;
}

/*
 * Checks the bytes before libyaml sees them, so that every bad character
 * gets a line and column: invalid UTF-8, and characters YAML forbids
 * (controls other than tab and line breaks, NUL included).
 */
static int
check_chars(struct ctx *c, const unsigned char *s, size_t len)
{
	size_t i = 0, line = 1, col = 1;
	int bad = 0;

	while (i < len) {
		unsigned char b = s[i];
		uint32_t cp;
		size_t n, k;

		if (b < 0x80) {
			n = 1;
			cp = b;
		} else if (b >= 0xc2 && b <= 0xdf) {
			n = 2;
			cp = b & 0x1f;
		} else if (b >= 0xe0 && b <= 0xef) {
			n = 3;
			cp = b & 0x0f;
		} else if (b >= 0xf0 && b <= 0xf4) {
			n = 4;
			cp = b & 0x07;
		} else {
			n = 0;
			cp = 0;
		}
		for (k = 1; n > 0 && k < n; k++) {
			if (i + k >= len || (s[i + k] & 0xc0) != 0x80) {
				n = 0;
				break;
			}
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (n == 0 ||
		    (n == 3 &&
		        (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) {
			at(c, line, col, NULL,
			    "invalid UTF-8 byte 0x%02x (the file must be "
			    "UTF-8)",
			    b);
			bad = 1;
			/* Resynchronise on the next byte. */
			i++;
			col++;
			continue;
		}
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
		    cp == 0x7f || (cp >= 0x80 && cp < 0xa0 && cp != 0x85) ||
		    cp == 0xfffe || cp == 0xffff) {
			at(c, line, col, NULL,
			    "control character U+%04X is not allowed",
			    (unsigned)cp);
			bad = 1;
		}
		if (cp == '\n' ||
		    (cp == '\r' && !(i + 1 < len && s[i + 1] == '\n'))) {
			line++;
			col = 1;
		} else if (cp != '\r') {
			col++;
		}
		i += n;
	}
	return bad ? -1 : 0;
}

/* Column of the first tab in the line's leading blanks, or 0. */
static size_t
leading_tab(const char *s, size_t len, size_t i)
{
	size_t j;

	for (j = i; j < len && (s[j] == ' ' || s[j] == '\t'); j++)
		if (s[j] == '\t')
			return j - i + 1;
	return 0;
}

/*
 * After libyaml gave up on a line indented with a tab: libyaml's words
 * for it are obscure, so name each line whose indentation has a tab
 * (comment lines aside).  0 when the failing line has no such tab, or
 * when every such line is a comment ("\t#"): nothing was said then, and
 * libyaml's own message must be (a parse that fails with no message
 * read as a success with no job, and the API's job_yaml crashed on it).
 */
static int
report_tabs(struct ctx *c, const char *s, size_t len, size_t bad_line)
{
	size_t i = 0, line = 1, col, start = 0, j, said = 0;

	/* Find the failing line. */
	for (i = 0; i < len && line < bad_line; i++)
		if (s[i] == '\n') {
			line++;
			start = i + 1;
		}
	if (line != bad_line || leading_tab(s, len, start) == 0)
		return 0;
	for (i = 0, line = 1; i < len; line++) {
		if ((col = leading_tab(s, len, i)) > 0) {
			for (j = i; j < len && (s[j] == ' ' || s[j] == '\t');
			     j++)
				;
			if (j >= len || s[j] != '#') {
				at(c, line, col, NULL,
				    "tab character in indentation (YAML "
				    "indents with spaces)");
				said++;
			}
		}
		while (i < len && s[i] != '\n')
			i++;
		i++;
	}
	return said > 0;
}

/*
 * libyaml puts an error at the end of a file without a final newline on
 * a line that does not exist; move it to the end of the last line.
 */
static void
end_of_text(const char *text, size_t len, size_t *line, size_t *col)
{
	size_t i, nl = 0, last = 0, c = 1;

	for (i = 0; i < len; i++)
		if (text[i] == '\n') {
			nl++;
			last = i + 1;
		}
	if (len == 0 || text[len - 1] == '\n' || *line <= nl + 1)
		return;
	for (i = last; i < len; i++)
		if (((unsigned char)text[i] & 0xc0) != 0x80)
			c++;
	*line = nl + 1;
	*col = c;
}

static void
parser_error(struct ctx *c, yaml_parser_t *p, const char *text, size_t len)
{
	size_t line, col;

	if (p->error != YAML_READER_ERROR &&
	    report_tabs(c, text, len, p->problem_mark.line + 1))
		return;
	if (p->error == YAML_READER_ERROR) {
		/* Reader errors carry a byte offset, not a mark. */
		size_t i;

		line = 1;
		col = 1;
		for (i = 0; i < p->problem_offset && i < len; i++) {
			if (text[i] == '\n') {
				line++;
				col = 1;
			} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
				col++;
			}
		}
		at(c, line, col, NULL, "%s",
		    p->problem ? p->problem : "cannot read");
		return;
	}
	if (p->error == YAML_MEMORY_ERROR) {
		at(c, 0, 0, NULL, "out of memory parsing YAML");
		return;
	}
	line = p->problem_mark.line + 1;
	col = p->problem_mark.column + 1;
	end_of_text(text, len, &line, &col);
	if (p->context != NULL) {
		size_t cl = p->context_mark.line + 1;
		size_t cc = p->context_mark.column + 1;

		end_of_text(text, len, &cl, &cc);
		at(c, line, col, NULL, "%s (%s at line %zu, column %zu)",
		    p->problem ? p->problem : "syntax error", p->context, cl,
		    cc);
	} else
		at(c, line, col, NULL, "%s",
		    p->problem ? p->problem : "syntax error");
}

static yaml_node_t *
node(const struct ctx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}

static int
is_null(const yaml_node_t *n)
{
	const char *v;

	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	v = (const char *)n->data.scalar.value;
	return n->data.scalar.length == 0 || strcmp(v, "~") == 0 ||
	    strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
	    strcmp(v, "NULL") == 0;
}

/*
 * Parses text into doc with its root a mapping: 0, or -1 with errors
 * (the document is then already deleted).
 */
static int
parse_text(struct ctx *c, const char *text, size_t len, yaml_document_t *doc)
{
	yaml_parser_t p;
	yaml_document_t extra;
	yaml_node_t *root, *n2;

	if (check_chars(c, (const unsigned char *)text, len) == -1)
		return -1;
	if (!yaml_parser_initialize(&p)) {
		at(c, 0, 0, NULL, "out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, doc)) {
		parser_error(c, &p, text, len);
		yaml_parser_delete(&p);
		return -1;
	}
	root = yaml_document_get_root_node(doc);
	if (root == NULL) {
		at(c, 1, 1, NULL, "empty file (expected a mapping of keys)");
		yaml_document_delete(doc);
		yaml_parser_delete(&p);
		return -1;
	}
	if (!yaml_parser_load(&p, &extra)) {
		parser_error(c, &p, text, len);
		yaml_document_delete(doc);
		yaml_parser_delete(&p);
		return -1;
	}
	if ((n2 = yaml_document_get_root_node(&extra)) != NULL) {
		at(c, n2->start_mark.line + 1, n2->start_mark.column + 1, NULL,
		    "a second YAML document (a config file holds one)");
		yaml_document_delete(&extra);
		yaml_document_delete(doc);
		yaml_parser_delete(&p);
		return -1;
	}
	yaml_document_delete(&extra);
	yaml_parser_delete(&p);
	if (root->type != YAML_MAPPING_NODE) {
		nerr(c, root, NULL,
		    "expected a mapping of keys at the top, got %s",
		    root->type == YAML_SEQUENCE_NODE ? "a list" : "a scalar");
		yaml_document_delete(doc);
		return -1;
	}
	return 0;
}

/* ---- describing values in messages ---- */

/* "a list", "nothing", or the scalar quoted and cut to 40 characters. */
static const char *
describe(const yaml_node_t *n, char *out, size_t outlen)
{
	struct buf b = BUF_INIT(64);
	size_t i, len;
	const unsigned char *v;

	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (is_null(n))
		return "nothing";
	v = n->data.scalar.value;
	len = n->data.scalar.length;
	buf_putc(&b, '"');
	for (i = 0; i < len && i < 40; i++)
		buf_putc(&b, v[i] < 0x20 || v[i] == 0x7f ? '?' : (char)v[i]);
	/* Do not cut a UTF-8 sequence in half. */
	while (i < len && (v[i] & 0xc0) == 0x80 && i < 44)
		buf_putc(&b, (char)v[i++]);
	if (i < len)
		buf_puts(&b, "...");
	buf_putc(&b, '"');
	snprintf(out, outlen, "%s", b.data);
	buf_release(&b);
	return out;
}

/* Key paths ("trees[0].url") are cut, never overflowed, when too long. */
static void
join(char *out, size_t len, const char *path, const char *key)
{
	int r;

	if (path == NULL || *path == '\0')
		r = snprintf(out, len, "%s", key);
	else
		r = snprintf(out, len, "%s.%s", path, key);
	if (r < 0 || (size_t)r >= len)
		out[len - 1] = '\0';
}

static void
join_idx(char *out, size_t len, const char *path, size_t i)
{
	int r = snprintf(out, len, "%s[%zu]", path, i);

	if (r < 0 || (size_t)r >= len)
		out[len - 1] = '\0';
}

/* ---- the schema ---- */

enum ftype {
	F_STR,
	F_INT,
	F_DURATION,
	F_SIZE,
	F_PERCENT,
	F_BOOL,
	F_ENUM,
	F_LIST,    /* list of strings */
	F_SECTION, /* nested mapping, same struct */
	F_ARRAY,   /* list of mappings into an array of structs */
	F_CUSTOM
};

/* How a string (or each string of a list) is checked. */
enum vkind {
	V_ANY,
	V_NAME,     /* [A-Za-z0-9][A-Za-z0-9._-]*, CFG_NAME_MAX */
	V_PATH,     /* a local path; relative ones resolved */
	V_HTTPURL,  /* http:// or https:// */
	V_GITURL,   /* URL, scp-like, or local path */
	V_SMTPURL,  /* smtp:// or smtps:// */
	V_HOSTPORT, /* host:port, [v6]:port */
	V_ARGV,     /* argv element: placeholders checked */
	V_REF,      /* git branch or glob: no spaces */
	V_REPOPATH, /* path inside a repository */
	V_KCONFIG,  /* CONFIG_X=... or "# CONFIG_X is not set" */
	V_TREEREF,  /* names a tree of the daemon */
	V_INBOXREF, /* names an inbox of the daemon */
	V_LABEL,    /* a host label (a name) */
	V_CPUS,     /* a CPU list "0-3,8", or "node:N" (runner host:) */
	V_CPULIST,  /* a CPU list only */
	V_GOVERNOR  /* a cpufreq governor name, or "keep" */
};

#define F_REQ 0x1
#define F_NONEMPTY 0x2
#define F_UNIQUE 0x4

struct enumv {
	const char *name;
	int val;
};

struct schema;
struct field;
typedef void (*handler_fn)(
    struct ctx *, const yaml_node_t *, void *base, const char *path);

struct field {
	const char *key;
	enum ftype type;
	unsigned flags;
	size_t off;
	const char *def;
	int64_t min, max;
	enum vkind vk;
	const struct enumv *enums;
	const struct schema *sub;
	size_t off_n; /* F_ARRAY: offset of the count */
	handler_fn fn;
};

typedef void (*check_fn)(struct ctx *, void *obj, const yaml_node_t *map,
    const char *path, size_t idx);

struct schema {
	size_t size; /* of one element, for F_ARRAY */
	const struct field *f;
	size_t n;
	check_fn check;
};

#define AT(base, off, type) ((type *)(void *)((char *)(base) + (off)))
#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

static const char *
scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* The value node of key in map, or NULL; *keyn gets the key node. */
static const yaml_node_t *
lookup(const struct ctx *c, const yaml_node_t *map, const char *key,
    const yaml_node_t **keyn)
{
	yaml_node_pair_t *p;
	size_t len = strlen(key);

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = node(c, p->key);

		if (k != NULL && k->type == YAML_SCALAR_NODE &&
		    k->data.scalar.length == len &&
		    memcmp(k->data.scalar.value, key, len) == 0) {
			if (keyn != NULL)
				*keyn = k;
			return node(c, p->value);
		}
	}
	return NULL;
}

/* Index of an earlier pair with the same key as pair j, or -1. */
static long
earlier_dup(const struct ctx *c, const yaml_node_t *map, size_t j)
{
	yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
	const yaml_node_t *kj = node(c, pairs[j].key), *ki;
	size_t i;

	if (kj == NULL || kj->type != YAML_SCALAR_NODE)
		return -1;
	for (i = 0; i < j; i++) {
		ki = node(c, pairs[i].key);
		if (ki != NULL && ki->type == YAML_SCALAR_NODE &&
		    ki->data.scalar.length == kj->data.scalar.length &&
		    memcmp(ki->data.scalar.value, kj->data.scalar.value,
		        kj->data.scalar.length) == 0)
			return (long)i;
	}
	return -1;
}

static size_t
map_len(const yaml_node_t *map)
{
	return (size_t)(map->data.mapping.pairs.top -
	    map->data.mapping.pairs.start);
}

static size_t
seq_len(const yaml_node_t *seq)
{
	return (size_t)(seq->data.sequence.items.top -
	    seq->data.sequence.items.start);
}

/* Levenshtein distance, for "did you mean". */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, prev, cur, tmp;
	size_t row[CFG_NAME_MAX + 1];

	if (la > CFG_NAME_MAX || lb > CFG_NAME_MAX)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			tmp = prev + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < tmp)
				tmp = row[j] + 1;
			if (row[j - 1] + 1 < tmp)
				tmp = row[j - 1] + 1;
			row[j] = tmp;
			prev = cur;
		}
	}
	return row[lb];
}

/*
 * Checks a mapping's keys: each a plain string, no duplicates, and (when
 * s is given) each one the schema knows.  Every pair gets one message at
 * most.  Returns nonzero when the mapping has too many keys to go on.
 */
static int
check_keys(struct ctx *c, const yaml_node_t *map, const struct schema *s,
    const char *path)
{
	yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
	size_t n = map_len(map), j, i;
	char kp[512];

	if (n > CFG_LIST_MAX) {
		nerr(c, map, path, "too many keys (%zu, at most %d)", n,
		    CFG_LIST_MAX);
		return -1;
	}
	for (j = 0; j < n; j++) {
		const yaml_node_t *k = node(c, pairs[j].key);
		long d;

		if (k == NULL)
			continue;
		if (k->type != YAML_SCALAR_NODE || is_null(k)) {
			nerr(c, k, path, "keys must be strings");
			continue;
		}
		join(kp, sizeof(kp), path, scalar(k));
		if ((d = earlier_dup(c, map, j)) >= 0) {
			const yaml_node_t *first = node(c, pairs[d].key);

			nerr(c, k, kp, "duplicate key (first at line %zu)",
			    (size_t)first->start_mark.line + 1);
			continue;
		}
		if (s == NULL)
			continue;
		for (i = 0; i < s->n; i++)
			if (strcmp(s->f[i].key, scalar(k)) == 0 &&
			    strlen(scalar(k)) == k->data.scalar.length)
				break;
		if (i < s->n)
			continue;
		{
			const char *best = NULL;
			size_t bd = 3, dist;

			for (i = 0; i < s->n; i++) {
				dist = edit_distance(scalar(k), s->f[i].key);
				if (dist < bd) {
					bd = dist;
					best = s->f[i].key;
				}
			}
			if (best != NULL)
				nerr(c, k, kp,
				    "unknown key (did you mean '%s'?)", best);
			else
				nerr(c, k, kp, "unknown key");
		}
	}
	return 0;
}

static const char *
type_name(const struct field *f)
{
	switch (f->type) {
	case F_STR:
		return "a string";
	case F_INT:
		return "an integer";
	case F_DURATION:
		return "a duration (e.g. 90s, 5m, 1h)";
	case F_SIZE:
		return "a size (e.g. 512K, 64M, 1G)";
	case F_PERCENT:
		return "a percentage (e.g. 2%)";
	case F_BOOL:
		return "true or false";
	case F_ENUM:
		return "a name";
	case F_LIST:
		return "a list";
	case F_SECTION:
	case F_ARRAY:
	case F_CUSTOM:
		break;
	}
	return f->type == F_ARRAY ? "a list" : "a mapping";
}

/*
 * A scalar's text, or NULL after reporting that n is not a usable scalar
 * (a collection, nothing, or a string with a NUL inside).
 */
static const char *
want_scalar(
    struct ctx *c, const yaml_node_t *n, const char *path, const char *what)
{
	char d[96];

	if (n->type != YAML_SCALAR_NODE) {
		nerr(c, n, path, "expected %s, got %s", what,
		    describe(n, d, sizeof(d)));
		return NULL;
	}
	if (is_null(n)) {
		nerr(c, n, path, "no value (expected %s)", what);
		return NULL;
	}
	if (strlen(scalar(n)) != n->data.scalar.length) {
		nerr(c, n, path, "contains a NUL character");
		return NULL;
	}
	return scalar(n);
}

static int
is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9');
}

static int
valid_name(const char *s)
{
	size_t i;

	if (!is_alnum(s[0]))
		return 0;
	for (i = 1; s[i] != '\0'; i++)
		if (!is_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-')
			return 0;
	return i <= CFG_NAME_MAX;
}

static int
has_space_or_ctl(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 1;
	return 0;
}

static int
has_ctl(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			return 1;
	return 0;
}

/* "scheme://host..." with one of the schemes, a non-empty host. */
static int
url_with_scheme(const char *s, const char *const *schemes)
{
	size_t i, n;

	for (i = 0; schemes[i] != NULL; i++) {
		n = strlen(schemes[i]);
		if (strncmp(s, schemes[i], n) != 0 ||
		    strncmp(s + n, "://", 3) != 0 || s[n + 3] == '\0')
			continue;
		/* Only file:// may leave the host empty (file:///srv/x). */
		if (s[n + 3] == '/' &&
		    (strcmp(schemes[i], "file") != 0 || s[n + 4] == '\0'))
			continue;
		return !has_space_or_ctl(s);
	}
	return 0;
}

static int
valid_hostport(const char *s)
{
	const char *colon;
	long port = 0;
	size_t i;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (end == NULL || end == s + 1 || end[1] != ':')
			return 0;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL || colon == s ||
		    memchr(s, ':', (size_t)(colon - s)))
			return 0;
		for (i = 0; s + i < colon; i++)
			if (!is_alnum(s[i]) && s[i] != '.' && s[i] != '-' &&
			    s[i] != '_')
				return 0;
	}
	if (colon[1] == '\0' || strlen(colon + 1) > 5)
		return 0;
	for (i = 1; colon[i] != '\0'; i++) {
		if (colon[i] < '0' || colon[i] > '9')
			return 0;
		port = port * 10 + (colon[i] - '0');
	}
	return port <= 65535;
}

/* Relative to the config file's directory, unless c->dir is NULL. */
static char *
resolve_path(const struct ctx *c, const char *s)
{
	if (s[0] == '/' || c->dir == NULL || strcmp(s, ":memory:") == 0)
		return xstrdup(s);
	return xasprintf("%s/%s", c->dir, s);
}

static int
is_builtin(const char *name, size_t len)
{
	size_t i;

	for (i = 0; config_builtin_params[i] != NULL; i++)
		if (strlen(config_builtin_params[i]) == len &&
		    memcmp(config_builtin_params[i], name, len) == 0)
			return 1;
	return 0;
}

static int
is_axis(const struct job_config *job, const char *name, size_t len)
{
	size_t i;

	for (i = 0; job != NULL && i < job->naxes; i++)
		if (strlen(job->axes[i].name) == len &&
		    memcmp(job->axes[i].name, name, len) == 0)
			return 1;
	return 0;
}

static void
known_params(const struct job_config *job, struct buf *b)
{
	size_t i;

	for (i = 0; job != NULL && i < job->naxes; i++)
		buf_printf(b, "%s%s", b->len ? ", " : "", job->axes[i].name);
	for (i = 0; config_builtin_params[i] != NULL; i++)
		buf_printf(
		    b, "%s%s", b->len ? ", " : "", config_builtin_params[i]);
}

static void
check_placeholders(
    struct ctx *c, const yaml_node_t *n, const char *path, const char *s)
{
	size_t pos = 0, off, len;

	while (config_next_placeholder(s, &pos, &off, &len) == 0) {
		struct buf b = BUF_INIT(CAP_ERRMSG);

		if (is_axis(c->job, s + off, len) || is_builtin(s + off, len))
			continue;
		known_params(c->job, &b);
		nerr(c, n, path, "unknown placeholder {%.*s} (known: %s)",
		    (int)len, s + off, b.data);
		buf_release(&b);
	}
}

static int
valid_kconfig(const char *s)
{
	size_t i;

	if (strncmp(s, "# CONFIG_", 9) == 0) {
		for (i = 9; is_alnum(s[i]) || s[i] == '_'; i++)
			;
		return i > 9 && strcmp(s + i, " is not set") == 0;
	}
	if (strncmp(s, "CONFIG_", 7) != 0)
		return 0;
	for (i = 7; is_alnum(s[i]) || s[i] == '_'; i++)
		;
	return i > 7 && s[i] == '=' && s[i + 1] != '\0';
}

/* "0-3,8" (V_CPULIST), or also "node:N" (V_CPUS). */
static int
valid_cpus(const char *s, enum vkind vk)
{
	unsigned char mask[CFG_CPUS_MAX / 8];
	size_t i;

	if (vk == V_CPUS && strncmp(s, "node:", 5) == 0) {
		for (i = 5; s[i] >= '0' && s[i] <= '9'; i++)
			;
		return i > 5 && i <= 9 && s[i] == '\0';
	}
	return config_parse_cpulist(mask, CFG_CPUS_MAX, s) == 0;
}

static int
runner_has_label(const struct daemon_config *d, const char *label)
{
	size_t i, j;

	for (i = 0; i < d->nrunners; i++) {
		if (strcmp(d->runners[i].name, label) == 0)
			return 1;
		for (j = 0; j < d->runners[i].labels.n; j++)
			if (strcmp(d->runners[i].labels.v[j], label) == 0)
				return 1;
	}
	return 0;
}

/*
 * Checks one string value by kind; a malloc'd copy (paths resolved) or
 * NULL after reporting.
 */
static char *
check_str(struct ctx *c, const yaml_node_t *n, const char *path, const char *s,
    enum vkind vk, int first_argv)
{
	static const char *const http[] = { "http", "https", NULL };
	static const char *const git[] = { "http", "https", "git", "ssh",
		"file", NULL };
	static const char *const smtp[] = { "smtp", "smtps", NULL };
	char d[96];
	size_t len = strlen(s), i;
	size_t max =
	    vk == V_NAME || vk == V_LABEL || vk == V_TREEREF || vk == V_INBOXREF
	    ? CFG_NAME_MAX
	    : CFG_STR_MAX;

	if (len > max) {
		nerr(c, n, path, "too long (%zu bytes, at most %zu)", len, max);
		return NULL;
	}
	switch (vk) {
	case V_ANY:
		if (has_ctl(s)) {
			nerr(c, n, path, "contains a control character");
			return NULL;
		}
		break;
	case V_NAME:
	case V_LABEL:
	case V_TREEREF:
	case V_INBOXREF:
		if (!valid_name(s)) {
			nerr(c, n, path,
			    "%s is not a valid name (a letter or digit, then "
			    "letters, digits, '.', '_', '-')",
			    describe(n, d, sizeof(d)));
			return NULL;
		}
		if (vk == V_TREEREF && c->daemon != NULL) {
			for (i = 0; i < c->daemon->ntrees; i++)
				if (strcmp(c->daemon->trees[i].name, s) == 0)
					break;
			if (i == c->daemon->ntrees) {
				nerr(c, n, path, "no tree named '%s' in %s", s,
				    c->daemon->file);
				return NULL;
			}
		}
		if (vk == V_INBOXREF && c->daemon != NULL) {
			for (i = 0; i < c->daemon->ninboxes; i++)
				if (strcmp(c->daemon->inboxes[i].name, s) == 0)
					break;
			if (i == c->daemon->ninboxes) {
				nerr(c, n, path, "no inbox named '%s' in %s", s,
				    c->daemon->file);
				return NULL;
			}
		}
		if (vk == V_LABEL && c->daemon != NULL &&
		    c->daemon->nrunners > 0 &&
		    !runner_has_label(c->daemon, s)) {
			nerr(c, n, path,
			    "no runner in %s carries the label '%s'",
			    c->daemon->file, s);
			return NULL;
		}
		break;
	case V_PATH:
		if (len == 0 || has_ctl(s)) {
			nerr(c, n, path, "%s is not a valid path",
			    describe(n, d, sizeof(d)));
			return NULL;
		}
		return resolve_path(c, s);
	case V_HTTPURL:
		if (!url_with_scheme(s, http)) {
			nerr(c, n, path, "%s is not an http:// or https:// URL",
			    describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	case V_SMTPURL:
		if (!url_with_scheme(s, smtp)) {
			nerr(c, n, path, "%s is not an smtp:// or smtps:// URL",
			    describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	case V_GITURL:
		if (strstr(s, "://") != NULL) {
			if (!url_with_scheme(s, git)) {
				nerr(c, n, path,
				    "%s is not a git URL (http, https, git, "
				    "ssh, file) or a path",
				    describe(n, d, sizeof(d)));
				return NULL;
			}
			break;
		}
		if (len == 0 || has_ctl(s)) {
			nerr(c, n, path, "%s is not a git URL or a path",
			    describe(n, d, sizeof(d)));
			return NULL;
		}
		/* scp-like host:path stays; a local path is resolved. */
		{
			const char *colon = strchr(s, ':');
			const char *slash = strchr(s, '/');

			if (colon != NULL && (slash == NULL || colon < slash))
				break;
		}
		return resolve_path(c, s);
	case V_HOSTPORT:
		if (!valid_hostport(s)) {
			nerr(c, n, path,
			    "%s is not host:port (e.g. 127.0.0.1:8080, "
			    "[::1]:8080)",
			    describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	case V_ARGV:
		if (has_ctl(s)) {
			nerr(c, n, path, "contains a control character");
			return NULL;
		}
		if (first_argv && len == 0) {
			nerr(c, n, path, "the program name is empty");
			return NULL;
		}
		check_placeholders(c, n, path, s);
		break;
	case V_REF:
	case V_REPOPATH:
		if (len == 0 || has_space_or_ctl(s)) {
			nerr(c, n, path,
			    "%s is not valid (no spaces or control characters)",
			    describe(n, d, sizeof(d)));
			return NULL;
		}
		if (vk == V_REPOPATH && s[0] == '/') {
			nerr(c, n, path,
			    "%s must be relative to the repository top",
			    describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	case V_CPUS:
	case V_CPULIST:
		if (!valid_cpus(s, vk)) {
			nerr(c, n, path, "%s is not a CPU list (e.g. 0-3,8)%s",
			    describe(n, d, sizeof(d)),
			    vk == V_CPUS ? " or node:N" : "");
			return NULL;
		}
		break;
	case V_GOVERNOR:
		if (len == 0 || len > 15 || !valid_name(s)) {
			nerr(c, n, path,
			    "%s is not a cpufreq governor name (performance, "
			    "powersave, ..., or keep)",
			    describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	case V_KCONFIG:
		if (!valid_kconfig(s)) {
			nerr(c, n, path,
			    "%s is not a config line (CONFIG_FOO=y or "
			    "\"# CONFIG_FOO is not set\")",
			    describe(n, d, sizeof(d)));
			return NULL;
		}
		break;
	}
	return xstrdup(s);
}

static void
strlist_free(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void
load_list(struct ctx *c, const yaml_node_t *n, const struct field *f,
    struct strlist *out, const char *path)
{
	yaml_node_item_t *it;
	size_t i, j, cnt;
	char ip[512], d[96];

	if (n->type != YAML_SEQUENCE_NODE) {
		if (is_null(n))
			nerr(c, n, path, "no value (expected a list)");
		else
			nerr(c, n, path, "expected a list, got %s",
			    describe(n, d, sizeof(d)));
		return;
	}
	cnt = seq_len(n);
	if (cnt > CFG_LIST_MAX) {
		nerr(c, n, path, "too many entries (%zu, at most %d)", cnt,
		    CFG_LIST_MAX);
		return;
	}
	if (cnt == 0 && (f->flags & F_NONEMPTY)) {
		nerr(c, n, path, "must not be empty");
		return;
	}
	out->v = xcalloc(cnt + 1, sizeof(char *));
	for (i = 0, it = n->data.sequence.items.start; i < cnt; i++, it++) {
		const yaml_node_t *e = node(c, *it);
		const char *s;
		char *v;

		join_idx(ip, sizeof(ip), path, i);
		if (e == NULL ||
		    (s = want_scalar(c, e, ip, "a string")) == NULL)
			continue;
		if ((v = check_str(c, e, ip, s, f->vk, i == 0)) == NULL)
			continue;
		if (f->flags & F_UNIQUE) {
			for (j = 0; j < out->n; j++)
				if (strcmp(out->v[j], v) == 0)
					break;
			if (j < out->n) {
				nerr(c, e, ip, "'%s' is listed twice", s);
				free(v);
				continue;
			}
		}
		out->v[out->n++] = v;
	}
}

static void
fmt_bound(char *out, size_t len, const struct field *f, int64_t v)
{
	if (f->type == F_DURATION) {
		if (v % 86400 == 0 && v > 0)
			snprintf(out, len, "%lldd", (long long)(v / 86400));
		else if (v % 3600 == 0 && v > 0)
			snprintf(out, len, "%lldh", (long long)(v / 3600));
		else if (v % 60 == 0 && v > 0)
			snprintf(out, len, "%lldm", (long long)(v / 60));
		else
			snprintf(out, len, "%llds", (long long)v);
	} else if (f->type == F_SIZE) {
		if (v % ((int64_t)1 << 40) == 0 && v > 0)
			snprintf(out, len, "%lldT", (long long)(v >> 40));
		else if (v % ((int64_t)1 << 30) == 0 && v > 0)
			snprintf(out, len, "%lldG", (long long)(v >> 30));
		else if (v % ((int64_t)1 << 20) == 0 && v > 0)
			snprintf(out, len, "%lldM", (long long)(v >> 20));
		else if (v % 1024 == 0 && v > 0)
			snprintf(out, len, "%lldK", (long long)(v >> 10));
		else
			snprintf(out, len, "%lld", (long long)v);
	} else {
		snprintf(out, len, "%lld", (long long)v);
	}
}

static int
parse_int(int64_t *out, const char *s)
{
	int64_t v = 0;
	int neg = 0;

	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (INT64_MAX - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (*s != '\0')
		return -1;
	*out = neg ? -v : v;
	return 0;
}

/* Parses a numeric-ish scalar of field f into *out; -1 when malformed. */
static int
parse_num(const struct field *f, const char *s, int64_t *out)
{
	switch (f->type) {
	case F_INT:
		return parse_int(out, s);
	case F_DURATION:
		return config_parse_duration(out, s);
	case F_SIZE:
		return config_parse_size(out, s);
	default:
		return -1;
	}
}

static void load_map(struct ctx *, const yaml_node_t *, const struct schema *,
    void *, const char *);

static void
enum_list(const struct enumv *e, struct buf *b)
{
	for (; e->name != NULL; e++)
		buf_printf(b, "%s%s", b->len ? ", " : "", e->name);
}

static void
load_field(struct ctx *c, const yaml_node_t *n, const struct field *f,
    void *base, const char *path)
{
	const char *s;
	char d[96], lo[32], hi[32];
	int64_t v;
	double pct;
	int b;

	switch (f->type) {
	case F_STR: {
		char *val;

		if ((s = want_scalar(c, n, path, "a string")) == NULL)
			return;
		if ((val = check_str(c, n, path, s, f->vk, 1)) == NULL)
			return;
		free(*AT(base, f->off, char *));
		*AT(base, f->off, char *) = val;
		return;
	}
	case F_INT:
	case F_DURATION:
	case F_SIZE:
		if ((s = want_scalar(c, n, path, type_name(f))) == NULL)
			return;
		if (parse_num(f, s, &v) == -1 ||
		    (f->type == F_INT &&
		        n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)) {
			nerr(c, n, path, "expected %s, got %s%s", type_name(f),
			    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
			        ? ""
			        : "a quoted string ",
			    describe(n, d, sizeof(d)));
			return;
		}
		if (v < f->min || v > f->max) {
			fmt_bound(lo, sizeof(lo), f, f->min);
			fmt_bound(hi, sizeof(hi), f, f->max);
			nerr(c, n, path, "%s is out of range (%s..%s)", s, lo,
			    hi);
			return;
		}
		*AT(base, f->off, int64_t) = v;
		return;
	case F_PERCENT:
		if ((s = want_scalar(c, n, path, type_name(f))) == NULL)
			return;
		if (config_parse_percent(&pct, s) == -1) {
			nerr(c, n, path, "expected %s, got %s", type_name(f),
			    describe(n, d, sizeof(d)));
			return;
		}
		if (pct < (double)f->min || pct > (double)f->max) {
			nerr(c, n, path, "%s is out of range (%lld%%..%lld%%)",
			    s, (long long)f->min, (long long)f->max);
			return;
		}
		*AT(base, f->off, double) = pct;
		return;
	case F_BOOL:
		if ((s = want_scalar(c, n, path, type_name(f))) == NULL)
			return;
		if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
		    config_parse_bool(&b, s) == -1) {
			nerr(c, n, path, "expected true or false, got %s%s",
			    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
			        ? ""
			        : "a quoted string ",
			    describe(n, d, sizeof(d)));
			return;
		}
		*AT(base, f->off, int) = b;
		return;
	case F_ENUM: {
		const struct enumv *e;
		struct buf names = BUF_INIT(CAP_ERRMSG);

		if ((s = want_scalar(c, n, path, "a name")) == NULL)
			return;
		for (e = f->enums; e->name != NULL; e++)
			if (strcmp(e->name, s) == 0) {
				*AT(base, f->off, int) = e->val;
				return;
			}
		enum_list(f->enums, &names);
		nerr(c, n, path, "%s is not one of %s",
		    describe(n, d, sizeof(d)), names.data);
		buf_release(&names);
		return;
	}
	case F_LIST: {
		struct strlist *l = AT(base, f->off, struct strlist);

		strlist_free(l);
		load_list(c, n, f, l, path);
		return;
	}
	case F_SECTION:
		if (n->type != YAML_MAPPING_NODE) {
			nerr(c, n, path, "expected a mapping, got %s",
			    describe(n, d, sizeof(d)));
			load_map(c, NULL, f->sub, base, path);
			return;
		}
		load_map(c, n, f->sub, base, path);
		return;
	case F_ARRAY: {
		yaml_node_item_t *it;
		size_t i, cnt;
		char *arr;
		char ip[512];

		if (n->type != YAML_SEQUENCE_NODE) {
			nerr(c, n, path, "expected a list, got %s",
			    describe(n, d, sizeof(d)));
			return;
		}
		cnt = seq_len(n);
		if (cnt > CFG_LIST_MAX) {
			nerr(c, n, path, "too many entries (%zu, at most %d)",
			    cnt, CFG_LIST_MAX);
			return;
		}
		arr = xcalloc(cnt ? cnt : 1, f->sub->size);
		*AT(base, f->off, void *) = arr;
		*AT(base, f->off_n, size_t) = cnt;
		for (i = 0, it = n->data.sequence.items.start; i < cnt;
		     i++, it++) {
			const yaml_node_t *e = node(c, *it);
			void *elem = arr + i * f->sub->size;

			join_idx(ip, sizeof(ip), path, i);
			if (e == NULL || e->type != YAML_MAPPING_NODE) {
				if (e != NULL)
					nerr(c, e, ip,
					    "expected a mapping, got %s",
					    describe(e, d, sizeof(d)));
				load_map(c, NULL, f->sub, elem, ip);
				continue;
			}
			load_map(c, e, f->sub, elem, ip);
			if (f->sub->check != NULL)
				f->sub->check(c, elem, e, ip, i);
		}
		return;
	}
	case F_CUSTOM:
		f->fn(c, n, base, path);
		return;
	}
}

static void
apply_default(
    struct ctx *c, const struct field *f, void *base, const char *path)
{
	int64_t v;
	int b;

	switch (f->type) {
	case F_STR:
		if (f->def != NULL)
			*AT(base, f->off, char *) = xstrdup(f->def);
		return;
	case F_INT:
	case F_DURATION:
	case F_SIZE:
		if (f->def != NULL && parse_num(f, f->def, &v) == 0)
			*AT(base, f->off, int64_t) = v;
		return;
	case F_PERCENT:
		if (f->def != NULL)
			config_parse_percent(AT(base, f->off, double), f->def);
		return;
	case F_BOOL:
		if (f->def != NULL && config_parse_bool(&b, f->def) == 0)
			*AT(base, f->off, int) = b;
		return;
	case F_ENUM: {
		const struct enumv *e;

		for (e = f->enums; f->def != NULL && e->name != NULL; e++)
			if (strcmp(e->name, f->def) == 0)
				*AT(base, f->off, int) = e->val;
		return;
	}
	case F_SECTION:
		load_map(c, NULL, f->sub, base, path);
		return;
	case F_LIST:
	case F_ARRAY:
		return;
	case F_CUSTOM:
		f->fn(c, NULL, base, path);
		return;
	}
}

/*
 * Loads a mapping into base by the schema, in the schema's order (so a
 * field may rely on an earlier one, as command on matrix).  map NULL
 * applies the defaults of an absent section.
 */
static void
load_map(struct ctx *c, const yaml_node_t *map, const struct schema *s,
    void *base, const char *path)
{
	size_t i;
	char kp[512];

	if (map != NULL && check_keys(c, map, s, path) != 0)
		map = NULL;
	for (i = 0; i < s->n; i++) {
		const struct field *f = &s->f[i];
		const yaml_node_t *v = NULL, *k = NULL;

		join(kp, sizeof(kp), path, f->key);
		if (map != NULL)
			v = lookup(c, map, f->key, &k);
		if (v == NULL) {
			if (map != NULL && (f->flags & F_REQ))
				nerr(c, map, path, "missing required key '%s'",
				    f->key);
			apply_default(c, f, base, kp);
			continue;
		}
		load_field(c, v, f, base, kp);
	}
}

/* ---- custom fields of a job ---- */

static void
axis_free(struct cfg_axis *a)
{
	free(a->name);
	strlist_free(&a->values);
}

static int
valid_cgroup(const char *s)
{
	const char *p;

	if (strcmp(s, "root") == 0)
		return 1;
	if (s[0] != '/' || s[1] == '\0')
		return 0;
	for (p = s + 1; *p != '\0'; p++) {
		/* Components: [A-Za-z0-9._-]+, not "." or "..". */
		const char *start = p;

		while (*p != '\0' && *p != '/') {
			if (!is_alnum(*p) && *p != '.' && *p != '_' &&
			    *p != '-')
				return 0;
			p++;
		}
		if (p == start || (p - start == 1 && start[0] == '.') ||
		    (p - start == 2 && start[0] == '.' && start[1] == '.'))
			return 0;
		if (*p == '\0')
			break;
	}
	return s[strlen(s) - 1] != '/';
}

/* Checks one axis value and appends it; bad ones are reported, left out. */
static void
add_value(
    struct ctx *c, struct cfg_axis *ax, const yaml_node_t *e, const char *vp)
{
	const char *s;
	char d[96];
	size_t k;

	if (e == NULL || (s = want_scalar(c, e, vp, "a value")) == NULL)
		return;
	for (k = 0; k < ax->values.n; k++)
		if (strcmp(ax->values.v[k], s) == 0) {
			nerr(c, e, vp, "'%s' is listed twice", s);
			return;
		}
	if (strlen(s) > CFG_VALUE_MAX || has_ctl(s) || strchr(s, ',') != NULL ||
	    strchr(s, '=') != NULL) {
		nerr(c, e, vp,
		    "value %s must be at most %d characters, without ',', '=' "
		    "or control characters",
		    describe(e, d, sizeof(d)), CFG_VALUE_MAX);
		return;
	}
	if (strcmp(ax->name, "cgroup") == 0 && !valid_cgroup(s)) {
		nerr(c, e, vp,
		    "%s is not 'root' or an absolute cgroup path like /bench "
		    "or /a/b",
		    describe(e, d, sizeof(d)));
		return;
	}
	ax->values.v[ax->values.n++] = xstrdup(s);
}

static void
h_matrix(struct ctx *c, const yaml_node_t *n, void *base, const char *path)
{
	struct job_config *job = base;
	yaml_node_pair_t *p;
	size_t i, j, cnt;
	uint64_t total = 1;
	char d[96], ap[512], vp[512];

	if (n == NULL)
		return;
	if (n->type != YAML_MAPPING_NODE) {
		nerr(c, n, path,
		    "expected a mapping of axes (name: [values]), got %s",
		    describe(n, d, sizeof(d)));
		return;
	}
	if (check_keys(c, n, NULL, path) != 0)
		return;
	cnt = map_len(n);
	if (cnt > CFG_AXES_MAX) {
		nerr(c, n, path, "too many axes (%zu, at most %d)", cnt,
		    CFG_AXES_MAX);
		return;
	}
	job->axes = xcalloc(cnt ? cnt : 1, sizeof(*job->axes));
	for (i = 0, p = n->data.mapping.pairs.start; i < cnt; i++, p++) {
		const yaml_node_t *kn = node(c, p->key),
		                  *vn = node(c, p->value);
		struct cfg_axis *ax;
		const char *name;

		if (kn == NULL || vn == NULL || kn->type != YAML_SCALAR_NODE ||
		    is_null(kn) || earlier_dup(c, n, i) >= 0)
			continue; /* reported by check_keys */
		name = scalar(kn);
		join(ap, sizeof(ap), path, name);
		if (!valid_name(name) || strchr(name, '.') != NULL ||
		    strchr(name, '-') != NULL) {
			nerr(c, kn, ap,
			    "not a valid axis name (letters, digits, '_'; at "
			    "most %d)",
			    CFG_NAME_MAX);
			/* Keep the name: {name} in commands is then known. */
			ax = &job->axes[job->naxes++];
			memset(ax, 0, sizeof(*ax));
			ax->name = xstrdup(name);
			continue;
		}
		if (is_builtin(name, strlen(name))) {
			nerr(c, kn, ap,
			    "'%s' is a built-in parameter and cannot be an "
			    "axis",
			    name);
			continue;
		}
		ax = &job->axes[job->naxes];
		memset(ax, 0, sizeof(*ax));
		ax->name = xstrdup(name);
		if (vn->type == YAML_SCALAR_NODE && !is_null(vn)) {
			/* A scalar is a one-value axis. */
			ax->values.v = xcalloc(2, sizeof(char *));
			add_value(c, ax, vn, ap);
		} else if (vn->type != YAML_SEQUENCE_NODE || seq_len(vn) == 0) {
			nerr(c, vn, ap,
			    "expected a non-empty list of values, got %s",
			    vn->type == YAML_SEQUENCE_NODE
			        ? "an empty list"
			        : describe(vn, d, sizeof(d)));
		} else if (seq_len(vn) > CFG_AXIS_VALUES_MAX) {
			nerr(c, vn, ap, "too many values (%zu, at most %d)",
			    seq_len(vn), CFG_AXIS_VALUES_MAX);
		} else {
			yaml_node_item_t *it = vn->data.sequence.items.start;

			ax->values.v = xcalloc(seq_len(vn) + 1, sizeof(char *));
			for (j = 0; j < seq_len(vn); j++, it++) {
				join_idx(vp, sizeof(vp), ap, j);
				add_value(c, ax, node(c, *it), vp);
			}
		}
		job->naxes++;
		if (ax->values.n > 0 && total <= CFG_POINTS_MAX)
			total *= ax->values.n;
	}
	if (total > CFG_POINTS_MAX)
		nerr(c, n, path, "expands to more than %d points",
		    CFG_POINTS_MAX);
}

static struct cfg_axis *
find_axis(struct job_config *job, const char *name)
{
	size_t i;

	for (i = 0; i < job->naxes; i++)
		if (strcmp(job->axes[i].name, name) == 0)
			return &job->axes[i];
	return NULL;
}

static void
h_exclude(struct ctx *c, const yaml_node_t *n, void *base, const char *path)
{
	struct job_config *job = base;
	yaml_node_item_t *it;
	size_t i, j, k, cnt;
	char d[96], ep[512], kp[512];

	if (n == NULL)
		return;
	if (n->type != YAML_SEQUENCE_NODE) {
		nerr(c, n, path, "expected a list of partial points, got %s",
		    describe(n, d, sizeof(d)));
		return;
	}
	cnt = seq_len(n);
	if (cnt > CFG_LIST_MAX) {
		nerr(c, n, path, "too many entries (%zu, at most %d)", cnt,
		    CFG_LIST_MAX);
		return;
	}
	job->exclude = xcalloc(cnt ? cnt : 1, sizeof(*job->exclude));
	for (i = 0, it = n->data.sequence.items.start; i < cnt; i++, it++) {
		const yaml_node_t *e = node(c, *it);
		struct cfg_point *pt;
		yaml_node_pair_t *p;
		int bad = 0;

		join_idx(ep, sizeof(ep), path, i);
		if (e == NULL || e->type != YAML_MAPPING_NODE) {
			if (e != NULL)
				nerr(c, e, ep,
				    "expected a mapping of axis: value, got %s",
				    describe(e, d, sizeof(d)));
			continue;
		}
		if (map_len(e) == 0) {
			nerr(c, e, ep,
			    "an empty entry would exclude every point");
			continue;
		}
		if (check_keys(c, e, NULL, ep) != 0)
			continue;
		pt = &job->exclude[job->nexclude];
		memset(pt, 0, sizeof(*pt));
		pt->keys = xcalloc(map_len(e) + 1, sizeof(char *));
		pt->values = xcalloc(map_len(e) + 1, sizeof(char *));
		for (j = 0, p = e->data.mapping.pairs.start; j < map_len(e);
		     j++, p++) {
			const yaml_node_t *kn = node(c, p->key),
			                  *vn = node(c, p->value);
			struct cfg_axis *ax;
			const char *v;

			if (kn == NULL || vn == NULL ||
			    kn->type != YAML_SCALAR_NODE || is_null(kn) ||
			    earlier_dup(c, e, j) >= 0) {
				bad = 1;
				continue;
			}
			join(kp, sizeof(kp), ep, scalar(kn));
			if ((ax = find_axis(job, scalar(kn))) == NULL) {
				struct buf names = BUF_INIT(CAP_ERRMSG);

				for (k = 0; k < job->naxes; k++)
					buf_printf(&names, "%s%s",
					    k ? ", " : "", job->axes[k].name);
				nerr(c, kn, kp,
				    "no axis named '%s' in matrix%s%s%s",
				    scalar(kn), names.len ? " (axes: " : "",
				    names.data, names.len ? ")" : "");
				buf_release(&names);
				bad = 1;
				continue;
			}
			if ((v = want_scalar(c, vn, kp, "a value")) == NULL) {
				bad = 1;
				continue;
			}
			for (k = 0; k < ax->values.n; k++)
				if (strcmp(ax->values.v[k], v) == 0)
					break;
			if (k == ax->values.n) {
				struct buf names = BUF_INIT(CAP_ERRMSG);
				size_t m;

				for (m = 0; m < ax->values.n; m++)
					buf_printf(&names, "%s%s",
					    m ? ", " : "", ax->values.v[m]);
				nerr(c, vn, kp,
				    "%s is not a value of axis %s (values: %s)",
				    describe(vn, d, sizeof(d)), ax->name,
				    names.data);
				buf_release(&names);
				bad = 1;
				continue;
			}
			pt->keys[pt->n] = ax->name;
			pt->values[pt->n] = ax->values.v[k];
			pt->n++;
		}
		if (bad) {
			free(pt->keys);
			free(pt->values);
			memset(pt, 0, sizeof(*pt));
			continue;
		}
		pt->label = config_point_label(pt);
		job->nexclude++;
	}
}

static const struct enumv better_enum[] = {
	{ "higher", CFG_BETTER_HIGHER },
	{ "lower", CFG_BETTER_LOWER },
	{ NULL, 0 },
};

static const struct field metric_fields[] = {
	{ .key = "better",
	    .type = F_ENUM,
	    .flags = F_REQ,
	    .off = offsetof(struct cfg_metric, better),
	    .enums = better_enum },
	{ .key = "min_effect",
	    .type = F_PERCENT,
	    .off = offsetof(struct cfg_metric, min_effect_pct),
	    .def = "1%",
	    .min = 0,
	    .max = 100 },
};
static const struct schema metric_schema = { sizeof(struct cfg_metric),
	metric_fields, NFIELDS(metric_fields), NULL };

static int
valid_metric_name(const char *s)
{
	size_t i;

	if (!is_alnum(s[0]))
		return 0;
	for (i = 1; s[i] != '\0'; i++)
		if (!is_alnum(s[i]) && s[i] != '.' && s[i] != '_' &&
		    s[i] != '-' && s[i] != ':' && s[i] != '/')
			return 0;
	return i < CAP_NAME;
}

/*
 * A mapping of NAME: {mapping} entries (a job's metrics, an inbox's
 * tags).  Checks the whole node (expecting `what`) and each entry: a
 * name valid() accepts (else `bad_name`), a mapping value; each() gets
 * the good ones with their path ("metrics.throughput").
 */
static void
named_maps(struct ctx *c, const yaml_node_t *n, const char *path,
    const char *what, int (*valid)(const char *), const char *bad_name,
    void (*each)(struct ctx *, const char *name, const yaml_node_t *vn,
        const char *kp, void *arg),
    void *arg)
{
	yaml_node_pair_t *p;
	size_t i, cnt;
	char d[96], kp[512];

	if (n == NULL)
		return;
	if (n->type != YAML_MAPPING_NODE) {
		nerr(c, n, path, "expected a mapping (NAME: %s), got %s", what,
		    describe(n, d, sizeof(d)));
		return;
	}
	if (check_keys(c, n, NULL, path) != 0)
		return;
	cnt = map_len(n);
	for (i = 0, p = n->data.mapping.pairs.start; i < cnt; i++, p++) {
		const yaml_node_t *kn = node(c, p->key),
		                  *vn = node(c, p->value);

		if (kn == NULL || vn == NULL || kn->type != YAML_SCALAR_NODE ||
		    is_null(kn) || earlier_dup(c, n, i) >= 0)
			continue;
		join(kp, sizeof(kp), path, scalar(kn));
		if (!valid(scalar(kn))) {
			nerr(c, kn, kp, "%s", bad_name);
			continue;
		}
		if (vn->type != YAML_MAPPING_NODE) {
			nerr(c, vn, kp, "expected a mapping %s, got %s", what,
			    describe(vn, d, sizeof(d)));
			continue;
		}
		each(c, scalar(kn), vn, kp, arg);
	}
}

static void
add_metric(struct ctx *c, const char *name, const yaml_node_t *vn,
    const char *kp, void *arg)
{
	struct job_config *job = arg;
	struct cfg_metric *m;

	job->metrics = xreallocarray(
	    job->metrics, job->nmetrics + 1, sizeof(*job->metrics));
	m = &job->metrics[job->nmetrics++];
	memset(m, 0, sizeof(*m));
	m->name = xstrdup(name);
	load_map(c, vn, &metric_schema, m, kp);
}

static void
h_metrics(struct ctx *c, const yaml_node_t *n, void *base, const char *path)
{
	named_maps(c, n, path, "{better: higher|lower, min_effect: N%}",
	    valid_metric_name,
	    "not a valid metric name (letters, digits, '.', '_', '-', ':', "
	    "'/')",
	    add_metric, base);
}

static void
h_baseline(struct ctx *c, const yaml_node_t *n, void *base, const char *path)
{
	struct job_config *job = base;
	const char *s, *ref = NULL;
	char d[96];

	if (n == NULL) {
		job->baseline = CFG_BASELINE_PARENT;
		return;
	}
	if ((s = want_scalar(c, n, path,
	         "parent, previous-tip, branch-base:REF or ref:REF")) == NULL)
		return;
	if (strcmp(s, "parent") == 0) {
		job->baseline = CFG_BASELINE_PARENT;
		return;
	}
	if (strcmp(s, "previous-tip") == 0) {
		job->baseline = CFG_BASELINE_PREVIOUS_TIP;
		return;
	}
	if (strncmp(s, "branch-base:", 12) == 0) {
		job->baseline = CFG_BASELINE_BRANCH_BASE;
		ref = s + 12;
	} else if (strncmp(s, "ref:", 4) == 0) {
		job->baseline = CFG_BASELINE_REF;
		ref = s + 4;
	} else {
		nerr(c, n, path,
		    "%s is not one of parent, previous-tip, branch-base:REF, "
		    "ref:REF",
		    describe(n, d, sizeof(d)));
		return;
	}
	if (*ref == '\0' || has_space_or_ctl(ref) || strlen(ref) > CAP_NAME) {
		nerr(c, n, path, "%s: the ref after ':' is empty or invalid",
		    describe(n, d, sizeof(d)));
		return;
	}
	job->baseline_ref = xstrdup(ref);
}

/* inboxes[].tags: TAG: {tree: NAME, branch: NAME}. */
static const struct field inbox_tag_fields[] = {
	{ .key = "tree",
	    .type = F_STR,
	    .off = offsetof(struct cfg_inbox_tag, tree),
	    .vk = V_NAME },
	{ .key = "branch",
	    .type = F_STR,
	    .flags = F_REQ,
	    .off = offsetof(struct cfg_inbox_tag, branch),
	    .vk = V_REF },
};
static const struct schema inbox_tag_schema = { sizeof(struct cfg_inbox_tag),
	inbox_tag_fields, NFIELDS(inbox_tag_fields), NULL };

/* A subject tag: the characters of branch names, as in [PATCH TAG]. */
static int
valid_tag(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < CFG_NAME_MAX && s[0] != '/' &&
	    strspn(s,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789._/+-") == n;
}

static void
add_inbox_tag(struct ctx *c, const char *name, const yaml_node_t *vn,
    const char *kp, void *arg)
{
	struct cfg_inbox *in = arg;
	const struct daemon_config *d = c->dcfg;
	const struct cfg_tree *tree = NULL;
	struct cfg_inbox_tag *t;
	size_t j;

	in->tags = xreallocarray(in->tags, in->ntags + 1, sizeof(*in->tags));
	t = &in->tags[in->ntags++];
	memset(t, 0, sizeof(*t));
	t->tag = xstrdup(name);
	load_map(c, vn, &inbox_tag_schema, t, kp);
	if (t->tree == NULL && in->tree != NULL)
		t->tree = xstrdup(in->tree);
	if (d == NULL || t->tree == NULL || t->branch == NULL)
		return;
	for (j = 0; j < d->ntrees; j++)
		if (d->trees[j].name != NULL &&
		    strcmp(d->trees[j].name, t->tree) == 0)
			tree = &d->trees[j];
	if (tree == NULL) {
		nerr(c, vn, kp, "no tree named '%s' in trees", t->tree);
		return;
	}
	for (j = 0; j < tree->branches.n; j++)
		if (strcmp(tree->branches.v[j], t->branch) == 0)
			return;
	nerr(c, vn, kp, "tree '%s' does not watch a branch '%s'", t->tree,
	    t->branch);
}

static void
h_inbox_tags(struct ctx *c, const yaml_node_t *n, void *base, const char *path)
{
	named_maps(c, n, path, "{tree: NAME, branch: NAME}", valid_tag,
	    "not a subject tag (letters, digits, '.', '_', '/', '+', '-')",
	    add_inbox_tag, base);
}

/* ---- the three schemas ---- */

#define STR(k, st, m, fl, v)                                                  \
	{                                                                     \
		.key = k, .type = F_STR, .flags = fl, .off = offsetof(st, m), \
		.vk = v                                                       \
	}
#define LIST(k, st, m, fl, v)                                                  \
	{                                                                      \
		.key = k, .type = F_LIST, .flags = fl, .off = offsetof(st, m), \
		.vk = v                                                        \
	}
#define NUM(k, t, st, m, d, lo, hi)                                    \
	{                                                              \
		.key = k, .type = t, .off = offsetof(st, m), .def = d, \
		.min = lo, .max = hi                                   \
	}

static const struct field tree_fields[] = {
	STR("name", struct cfg_tree, name, F_REQ, V_NAME),
	STR("url", struct cfg_tree, url, F_REQ, V_GITURL),
	LIST("branches", struct cfg_tree, branches,
	    F_REQ | F_NONEMPTY | F_UNIQUE, V_REF),
	LIST("paths", struct cfg_tree, paths, F_UNIQUE, V_REPOPATH),
	NUM("poll", F_DURATION, struct cfg_tree, poll_s, "5m", 1, 86400),
};

static void
check_tree(struct ctx *c, void *obj, const yaml_node_t *map, const char *path,
    size_t idx)
{
	struct cfg_tree *t = obj;
	const yaml_node_t *nn;
	size_t i;

	(void)path;
	if (t->name == NULL || (nn = lookup(c, map, "name", NULL)) == NULL)
		return;
	for (i = 0; i < idx; i++)
		if (t[-(long)(idx - i)].name != NULL &&
		    strcmp(t[-(long)(idx - i)].name, t->name) == 0) {
			char kp[512];

			join(kp, sizeof(kp), path, "name");
			nerr(c, nn, kp, "tree '%s' is defined twice", t->name);
			return;
		}
}

static const struct schema tree_schema = { sizeof(struct cfg_tree), tree_fields,
	NFIELDS(tree_fields), check_tree };

static const struct field inbox_fields[] = {
	STR("name", struct cfg_inbox, name, F_REQ, V_NAME),
	STR("url", struct cfg_inbox, url, F_REQ, V_GITURL),
	STR("tree", struct cfg_inbox, tree, F_REQ, V_NAME),
	STR("branch", struct cfg_inbox, branch, 0, V_REF),
	LIST("subjects", struct cfg_inbox, subjects, F_UNIQUE, V_ANY),
	NUM("poll", F_DURATION, struct cfg_inbox, poll_s, "10m", 1, 86400),
	{ .key = "tags", .type = F_CUSTOM, .fn = h_inbox_tags },
};

static void
check_inbox(struct ctx *c, void *obj, const yaml_node_t *map, const char *path,
    size_t idx)
{
	struct cfg_inbox *in = obj;
	const struct daemon_config *d = c->dcfg;
	const struct cfg_tree *t = NULL;
	const yaml_node_t *nn;
	char kp[512];
	size_t i;

	if (in->name != NULL && (nn = lookup(c, map, "name", NULL)) != NULL)
		for (i = 0; i < idx; i++)
			if (in[-(long)(idx - i)].name != NULL &&
			    strcmp(in[-(long)(idx - i)].name, in->name) == 0) {
				join(kp, sizeof(kp), path, "name");
				nerr(c, nn, kp, "inbox '%s' is defined twice",
				    in->name);
				break;
			}
	if (in->tree == NULL || d == NULL)
		return;
	for (i = 0; i < d->ntrees; i++)
		if (d->trees[i].name != NULL &&
		    strcmp(d->trees[i].name, in->tree) == 0)
			t = &d->trees[i];
	if (t == NULL) {
		join(kp, sizeof(kp), path, "tree");
		nerr(c, lookup(c, map, "tree", NULL), kp,
		    "no tree named '%s' in trees", in->tree);
		return;
	}
	if (in->branch == NULL) {
		if (t->branches.n > 0)
			in->branch = xstrdup(t->branches.v[0]);
		return;
	}
	for (i = 0; i < t->branches.n; i++)
		if (strcmp(t->branches.v[i], in->branch) == 0)
			return;
	join(kp, sizeof(kp), path, "branch");
	nerr(c, lookup(c, map, "branch", NULL), kp,
	    "tree '%s' does not watch a branch '%s'", t->name, in->branch);
}

static const struct schema inbox_schema = { sizeof(struct cfg_inbox),
	inbox_fields, NFIELDS(inbox_fields), check_inbox };

static const struct enumv boot_enum[] = {
	{ "kexec", CFG_BOOT_KEXEC },
	{ "reboot", CFG_BOOT_REBOOT },
	{ "qemu", CFG_BOOT_QEMU },
	{ "none", CFG_BOOT_NONE },
	{ NULL, 0 },
};

static const struct field canary_fields[] = {
	STR("job", struct cfg_runner_ref, canary_job, F_REQ, V_NAME),
	NUM("every", F_DURATION, struct cfg_runner_ref, canary_every_s, "1h", 1,
	    7 * 86400),
};
static const struct schema canary_schema = { 0, canary_fields,
	NFIELDS(canary_fields), NULL };

static const struct field runref_fields[] = {
	STR("name", struct cfg_runner_ref, name, F_REQ, V_NAME),
	STR("token_file", struct cfg_runner_ref, token_file, F_REQ, V_PATH),
	LIST("labels", struct cfg_runner_ref, labels, F_UNIQUE, V_NAME),
	{ .key = "boot",
	    .type = F_ENUM,
	    .off = offsetof(struct cfg_runner_ref, boot),
	    .def = "none",
	    .enums = boot_enum },
	{ .key = "canary", .type = F_SECTION, .sub = &canary_schema },
};

static void
check_runref(struct ctx *c, void *obj, const yaml_node_t *map, const char *path,
    size_t idx)
{
	struct cfg_runner_ref *r = obj;
	const yaml_node_t *nn;
	size_t i;

	r->boot_set = lookup(c, map, "boot", NULL) != NULL;
	if ((nn = lookup(c, map, "canary", NULL)) != NULL &&
	    nn->type == YAML_MAPPING_NODE &&
	    (nn = lookup(c, nn, "job", NULL)) != NULL) {
		r->canary_line = (int)nn->start_mark.line + 1;
		r->canary_col = (int)nn->start_mark.column + 1;
	}
	if (r->name == NULL || (nn = lookup(c, map, "name", NULL)) == NULL)
		return;
	for (i = 0; i < idx; i++)
		if (r[-(long)(idx - i)].name != NULL &&
		    strcmp(r[-(long)(idx - i)].name, r->name) == 0) {
			char kp[512];

			join(kp, sizeof(kp), path, "name");
			nerr(
			    c, nn, kp, "runner '%s' is defined twice", r->name);
			return;
		}
}

static const struct schema runref_schema = { sizeof(struct cfg_runner_ref),
	runref_fields, NFIELDS(runref_fields), check_runref };

static const struct field webhook_fields[] = {
	STR("url", struct cfg_webhook, url, F_REQ, V_HTTPURL),
	STR("secret_file", struct cfg_webhook, secret_file, F_REQ, V_PATH),
	{ .key = "slack",
	    .type = F_BOOL,
	    .off = offsetof(struct cfg_webhook, slack),
	    .def = "false" },
	NUM("timeout", F_DURATION, struct cfg_webhook, timeout_s, "10s", 1,
	    600),
};

static const struct field alert_list_fields[] = {
	STR("tree", struct cfg_alert_list, tree, 0, V_NAME),
	STR("inbox", struct cfg_alert_list, inbox, 0, V_NAME),
	LIST("cc", struct cfg_alert_list, cc, F_UNIQUE, V_ANY),
	{ .key = "quiet",
	    .type = F_BOOL,
	    .off = offsetof(struct cfg_alert_list, quiet),
	    .def = "false" },
};

static void
check_alert_list(struct ctx *c, void *obj, const yaml_node_t *map,
    const char *path, size_t idx)
{
	struct cfg_alert_list *l = obj;
	const struct daemon_config *d = c->dcfg;
	char kp[512];
	size_t i;

	(void)idx;
	if ((l->tree == NULL) == (l->inbox == NULL)) {
		nerr(c, map, path, "needs exactly one of tree or inbox");
		return;
	}
	if (d == NULL)
		return;
	if (l->tree != NULL) {
		for (i = 0; i < d->ntrees; i++)
			if (d->trees[i].name != NULL &&
			    strcmp(d->trees[i].name, l->tree) == 0)
				return;
		join(kp, sizeof(kp), path, "tree");
		nerr(c, lookup(c, map, "tree", NULL), kp,
		    "no tree named '%s' in trees", l->tree);
		return;
	}
	for (i = 0; i < d->ninboxes; i++)
		if (d->inboxes[i].name != NULL &&
		    strcmp(d->inboxes[i].name, l->inbox) == 0)
			return;
	join(kp, sizeof(kp), path, "inbox");
	nerr(c, lookup(c, map, "inbox", NULL), kp,
	    "no inbox named '%s' in inboxes", l->inbox);
}

static const struct schema alert_list_schema = { sizeof(struct cfg_alert_list),
	alert_list_fields, NFIELDS(alert_list_fields), check_alert_list };
static const struct schema webhook_schema = { sizeof(struct cfg_webhook),
	webhook_fields, NFIELDS(webhook_fields), NULL };

static const struct field email_fields[] = {
	STR("smtp", struct daemon_config, alerts.smtp, F_REQ, V_SMTPURL),
	STR("from", struct daemon_config, alerts.from, F_REQ, V_ANY),
	LIST("to", struct daemon_config, alerts.to,
	    F_REQ | F_NONEMPTY | F_UNIQUE, V_ANY),
	{ .key = "reply_to_series",
	    .type = F_BOOL,
	    .off = offsetof(struct daemon_config, alerts.reply_to_series),
	    .def = "true" },
	{ .key = "starttls",
	    .type = F_BOOL,
	    .off = offsetof(struct daemon_config, alerts.starttls),
	    .def = "false" },
	STR("auth_file", struct daemon_config, alerts.auth_file, 0, V_PATH),
	STR("ca_file", struct daemon_config, alerts.ca_file, 0, V_PATH),
	{ .key = "mail_author",
	    .type = F_BOOL,
	    .off = offsetof(struct daemon_config, alerts.mail_author),
	    .def = "true" },
	STR("test_to", struct daemon_config, alerts.test_to, 0, V_ANY),
	NUM("rate_limit", F_INT, struct daemon_config, alerts.rate_limit, "30",
	    0, 100000),
	{ .key = "lists",
	    .type = F_ARRAY,
	    .off = offsetof(struct daemon_config, alerts.lists),
	    .off_n = offsetof(struct daemon_config, alerts.nlists),
	    .sub = &alert_list_schema },
};
static const struct schema email_schema = { 0, email_fields,
	NFIELDS(email_fields), NULL };

static const struct field alerts_fields[] = {
	{ .key = "email", .type = F_SECTION, .sub = &email_schema },
	{ .key = "webhooks",
	    .type = F_ARRAY,
	    .off = offsetof(struct daemon_config, alerts.webhooks),
	    .off_n = offsetof(struct daemon_config, alerts.nwebhooks),
	    .sub = &webhook_schema },
	NUM("max_attempts", F_INT, struct daemon_config, alerts.max_attempts,
	    "8", 1, 100),
	NUM("backoff", F_DURATION, struct daemon_config, alerts.backoff_s,
	    "30s", 1, 3600),
	NUM("backoff_max", F_DURATION, struct daemon_config,
	    alerts.backoff_max_s, "1h", 1, 86400),
	NUM("poll", F_DURATION, struct daemon_config, alerts.poll_s, "5s", 1,
	    600),
};
static const struct schema alerts_schema = { 0, alerts_fields,
	NFIELDS(alerts_fields), NULL };

static const struct field http_fields[] = {
	NUM("threads", F_INT, struct daemon_config, http_threads, "4", 1, 256),
	NUM("max_connections", F_INT, struct daemon_config,
	    http_max_connections, "256", 1, 65536),
	NUM("per_ip", F_INT, struct daemon_config, http_per_ip, "64", 1, 65536),
	NUM("timeout", F_DURATION, struct daemon_config, http_timeout_s, "30s",
	    1, 3600),
	NUM("max_body", F_SIZE, struct daemon_config, http_max_body, "8M", 1024,
	    (int64_t)64 << 20),
	NUM("max_pack", F_SIZE, struct daemon_config, http_max_pack, "64M",
	    1024, (int64_t)64 << 20),
};
static const struct schema http_schema = { 0, http_fields, NFIELDS(http_fields),
	NULL };

static const struct field sched_fields[] = {
	NUM("claim_wait", F_DURATION, struct daemon_config, claim_wait_s, "30s",
	    1, 600),
	NUM("lease", F_DURATION, struct daemon_config, lease_s, "60s", 10,
	    86400),
	NUM("max_attempts", F_INT, struct daemon_config, max_attempts, "3", 1,
	    100),
};
static const struct schema sched_schema = { 0, sched_fields,
	NFIELDS(sched_fields), NULL };

static void
h_jobs(struct ctx *c, const yaml_node_t *n, void *base, const char *path)
{
	static const struct field f = {
		.key = "jobs", .type = F_LIST, .flags = F_UNIQUE, .vk = V_PATH
	};
	struct daemon_config *d = base;
	yaml_node_item_t *it;
	size_t i;

	if (n == NULL)
		return;
	load_list(c, n, &f, &d->jobs, path);
	if (n->type != YAML_SEQUENCE_NODE || d->jobs.n != seq_len(n))
		return;
	d->jobs_at = xcalloc(d->jobs.n + 1, sizeof(*d->jobs_at));
	for (i = 0, it = n->data.sequence.items.start; i < d->jobs.n;
	     i++, it++) {
		const yaml_node_t *e = node(c, *it);

		d->jobs_at[i].line = (unsigned)e->start_mark.line + 1;
		d->jobs_at[i].col = (unsigned)e->start_mark.column + 1;
	}
}

static const struct field daemon_fields[] = {
	STR("listen", struct daemon_config, listen, F_REQ, V_HOSTPORT),
	STR("database", struct daemon_config, database, F_REQ, V_PATH),
	STR("mirrors", struct daemon_config, mirrors, F_REQ, V_PATH),
	STR("public_url", struct daemon_config, public_url, 0, V_HTTPURL),
	STR("admin_token_file", struct daemon_config, admin_token_file, 0,
	    V_PATH),
	{ .key = "jobs", .type = F_CUSTOM, .fn = h_jobs },
	{ .key = "trees",
	    .type = F_ARRAY,
	    .off = offsetof(struct daemon_config, trees),
	    .off_n = offsetof(struct daemon_config, ntrees),
	    .sub = &tree_schema },
	{ .key = "inboxes",
	    .type = F_ARRAY,
	    .off = offsetof(struct daemon_config, inboxes),
	    .off_n = offsetof(struct daemon_config, ninboxes),
	    .sub = &inbox_schema },
	{ .key = "runners",
	    .type = F_ARRAY,
	    .off = offsetof(struct daemon_config, runners),
	    .off_n = offsetof(struct daemon_config, nrunners),
	    .sub = &runref_schema },
	{ .key = "alerts", .type = F_SECTION, .sub = &alerts_schema },
	{ .key = "http", .type = F_SECTION, .sub = &http_schema },
	{ .key = "scheduler", .type = F_SECTION, .sub = &sched_schema },
};
static const struct schema daemon_schema = { sizeof(struct daemon_config),
	daemon_fields, NFIELDS(daemon_fields), NULL };

static const struct enumv parser_enum[] = {
	{ "neper", CFG_PARSER_NEPER },
	{ "fio", CFG_PARSER_FIO },
	{ "will-it-scale", CFG_PARSER_WIS },
	{ "netperf", CFG_PARSER_NETPERF },
	{ "keyvalue", CFG_PARSER_KEYVALUE },
	{ "json", CFG_PARSER_JSON },
	{ NULL, 0 },
};

static const struct enumv coalesce_enum[] = {
	{ "cancel", CFG_COALESCE_CANCEL },
	{ "keep", CFG_COALESCE_KEEP },
	{ "deprioritise", CFG_COALESCE_DEPRIORITISE },
	{ NULL, 0 },
};

static const struct field trigger_fields[] = {
	LIST("trees", struct job_config, trigger.trees, F_UNIQUE, V_TREEREF),
	LIST("branches", struct job_config, trigger.branches, F_UNIQUE, V_REF),
	LIST("paths", struct job_config, trigger.paths, F_UNIQUE, V_REPOPATH),
	LIST("inboxes", struct job_config, trigger.inboxes, F_UNIQUE,
	    V_INBOXREF),
	{ .key = "every_commit",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, trigger.every_commit),
	    .def = "true" },
	{ .key = "every_patch",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, trigger.every_patch),
	    .def = "false" },
	{ .key = "coalesce",
	    .type = F_ENUM,
	    .off = offsetof(struct job_config, trigger.coalesce),
	    .def = "cancel",
	    .enums = coalesce_enum },
	NUM("baseline_max_age", F_DURATION, struct job_config,
	    trigger.baseline_max_age_s, "7d", 0, 366 * 86400),
};
static const struct schema trigger_schema = { 0, trigger_fields,
	NFIELDS(trigger_fields), NULL };

static const struct field kernel_fields[] = {
	{ .key = "config",
	    .type = F_STR,
	    .off = offsetof(struct job_config, kernel.config),
	    .def = "defconfig",
	    .vk = V_REF },
	LIST("fragment", struct job_config, kernel.fragment, F_UNIQUE,
	    V_KCONFIG),
	NUM("build_timeout", F_DURATION, struct job_config,
	    kernel.build_timeout_s, "2h", 60, 86400),
	NUM("boot_timeout", F_DURATION, struct job_config,
	    kernel.boot_timeout_s, "10m", 10, 86400),
};
static const struct schema kernel_schema = { 0, kernel_fields,
	NFIELDS(kernel_fields), NULL };

static const struct field bisect_fields[] = {
	{ .key = "auto",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, bisect.automatic),
	    .def = "true" },
	{ .key = "full_dag",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, bisect.full_dag),
	    .def = "false" },
	NUM("max_steps", F_INT, struct job_config, bisect.max_steps, "16", 1,
	    64),
	NUM("max_inconclusive", F_INT, struct job_config,
	    bisect.max_inconclusive, "2", 0, 64),
	NUM("host_timeout", F_DURATION, struct job_config,
	    bisect.host_timeout_s, "1h", 10, 7 * 86400),
};
static const struct schema bisect_schema = { 0, bisect_fields,
	NFIELDS(bisect_fields), NULL };

static const struct enumv thp_enum[] = {
	{ "keep", CFG_THP_KEEP },
	{ "always", CFG_THP_ALWAYS },
	{ "madvise", CFG_THP_MADVISE },
	{ "never", CFG_THP_NEVER },
	{ NULL, 0 },
};

static const struct enumv defrag_enum[] = {
	{ "keep", CFG_THP_KEEP },
	{ "always", CFG_THP_ALWAYS },
	{ "defer", CFG_THP_DEFER },
	{ "defer+madvise", CFG_THP_DEFER_MADVISE },
	{ "madvise", CFG_THP_MADVISE },
	{ "never", CFG_THP_NEVER },
	{ NULL, 0 },
};

/* Job host: benchmark hygiene of one job (runners/host.h). */
static const struct field jobhost_fields[] = {
	STR("cpus", struct job_config, host.cpus, 0, V_CPUS),
	STR("server_cpus", struct job_config, host.server_cpus, 0, V_CPUS),
	{ .key = "thp",
	    .type = F_ENUM,
	    .off = offsetof(struct job_config, host.thp),
	    .def = "keep",
	    .enums = thp_enum },
	{ .key = "drop_caches",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, host.drop_caches),
	    .def = "false" },
	NUM("warmup", F_INT, struct job_config, host.warmup, "0", 0, 100),
	NUM("pause", F_DURATION, struct job_config, host.pause_s, "0s", 0,
	    3600),
};
static const struct schema jobhost_schema = { 0, jobhost_fields,
	NFIELDS(jobhost_fields), NULL };

static void
h_name(struct ctx *c, const yaml_node_t *n, void *base, const char *path)
{
	static const struct field f = { .key = "name",
		.type = F_STR,
		.off = offsetof(struct job_config, name),
		.vk = V_NAME };
	struct job_config *job = base;
	size_t i;

	if (n == NULL)
		return;
	load_field(c, n, &f, base, path);
	if (job->name == NULL)
		return;
	for (i = 0; i < c->nothers; i++)
		if (c->others[i]->name != NULL &&
		    strcmp(c->others[i]->name, job->name) == 0) {
			nerr(c, n, path, "job '%s' is already defined in %s",
			    job->name, c->others[i]->file);
			return;
		}
}

static const struct field job_fields[] = {
	{ .key = "name", .type = F_CUSTOM, .flags = F_REQ, .fn = h_name },
	{ .key = "parser",
	    .type = F_ENUM,
	    .flags = F_REQ,
	    .off = offsetof(struct job_config, parser),
	    .enums = parser_enum },
	/* Before the commands: their placeholders name the axes. */
	{ .key = "matrix", .type = F_CUSTOM, .fn = h_matrix },
	{ .key = "exclude", .type = F_CUSTOM, .fn = h_exclude },
	LIST("command", struct job_config, command, F_REQ | F_NONEMPTY, V_ARGV),
	LIST("server_command", struct job_config, server_command, 0, V_ARGV),
	LIST("build", struct job_config, build, 0, V_ARGV),
	{ .key = "trigger", .type = F_SECTION, .sub = &trigger_schema },
	LIST("hosts", struct job_config, hosts, F_UNIQUE, V_LABEL),
	{ .key = "baseline", .type = F_CUSTOM, .fn = h_baseline },
	{ .key = "kernel", .type = F_SECTION, .sub = &kernel_schema },
	{ .key = "bisect", .type = F_SECTION, .sub = &bisect_schema },
	NUM("runs", F_INT, struct job_config, runs, "5", 1, 100),
	NUM("max_runs", F_INT, struct job_config, max_runs, "12", 1, 1000),
	NUM("rounds", F_INT, struct job_config, rounds, "1", 1, 100),
	{ .key = "profile",
	    .type = F_BOOL,
	    .off = offsetof(struct job_config, profile),
	    .def = "false" },
	NUM("profile_runs", F_INT, struct job_config, profile_runs, "0", 0,
	    1000),
	{ .key = "profile_min_effect",
	    .type = F_PERCENT,
	    .off = offsetof(struct job_config, profile_min_effect_pct),
	    .def = "10%",
	    .min = 0,
	    .max = 100 },
	{ .key = "metrics", .type = F_CUSTOM, .fn = h_metrics },
	NUM("timeout", F_DURATION, struct job_config, timeout_s, "10m", 1,
	    86400),
	NUM("memory_max", F_SIZE, struct job_config, memory_max, NULL,
	    (int64_t)1 << 20, (int64_t)1 << 50),
	NUM("memory_high", F_SIZE, struct job_config, memory_high, NULL,
	    (int64_t)1 << 20, (int64_t)1 << 50),
	{ .key = "host", .type = F_SECTION, .sub = &jobhost_schema },
};
static const struct schema job_schema = { sizeof(struct job_config), job_fields,
	NFIELDS(job_fields), NULL };

static const struct enumv turbo_enum[] = {
	{ "off", CFG_TURBO_OFF },
	{ "on", CFG_TURBO_ON },
	{ "keep", CFG_TURBO_KEEP },
	{ NULL, 0 },
};

static const struct enumv smt_enum[] = {
	{ "off", 1 },
	{ "any", 0 },
	{ NULL, 0 },
};

/* Runner host: the tuning profile (runners/host.h). */
static const struct field runhost_fields[] = {
	{ .key = "governor",
	    .type = F_STR,
	    .off = offsetof(struct runner_config, host.governor),
	    .def = "performance",
	    .vk = V_GOVERNOR },
	{ .key = "turbo",
	    .type = F_ENUM,
	    .off = offsetof(struct runner_config, host.turbo),
	    .def = "off",
	    .enums = turbo_enum },
	{ .key = "thp",
	    .type = F_ENUM,
	    .off = offsetof(struct runner_config, host.thp),
	    .def = "keep",
	    .enums = thp_enum },
	{ .key = "thp_defrag",
	    .type = F_ENUM,
	    .off = offsetof(struct runner_config, host.thp_defrag),
	    .def = "keep",
	    .enums = defrag_enum },
	{ .key = "smt",
	    .type = F_ENUM,
	    .off = offsetof(struct runner_config, host.smt_off),
	    .def = "off",
	    .enums = smt_enum },
	{ .key = "stop_irqbalance",
	    .type = F_BOOL,
	    .off = offsetof(struct runner_config, host.stop_irqbalance),
	    .def = "true" },
	STR("irq_cpus", struct runner_config, host.irq_cpus, 0, V_CPULIST),
};
static const struct schema runhost_schema = { 0, runhost_fields,
	NFIELDS(runhost_fields), NULL };

static const struct field runner_fields[] = {
	STR("server", struct runner_config, server, F_REQ, V_HTTPURL),
	STR("name", struct runner_config, name, F_REQ, V_NAME),
	STR("token_file", struct runner_config, token_file, F_REQ, V_PATH),
	STR("workdir", struct runner_config, workdir, F_REQ, V_PATH),
	STR("kernel_tree", struct runner_config, kernel_tree, 0, V_PATH),
	STR("guest_dir", struct runner_config, guest_dir, 0, V_PATH),
	{ .key = "boot",
	    .type = F_ENUM,
	    .off = offsetof(struct runner_config, boot),
	    .def = "none",
	    .enums = boot_enum },
	LIST("labels", struct runner_config, labels, F_UNIQUE, V_NAME),
	NUM("heartbeat", F_DURATION, struct runner_config, heartbeat_s, "10s",
	    1, 600),
	NUM("max_output", F_SIZE, struct runner_config, max_output, "1M", 4096,
	    (int64_t)64 << 20),
	{ .key = "host", .type = F_SECTION, .sub = &runhost_schema },
};
static const struct schema runner_schema = { sizeof(struct runner_config),
	runner_fields, NFIELDS(runner_fields), NULL };

/* ---- whole-file checks ---- */

static void
check_daemon(struct ctx *c, struct daemon_config *d, const yaml_node_t *root)
{
	const yaml_node_t *http, *n;

	if (d->http_per_ip > d->http_max_connections &&
	    (http = lookup(c, root, "http", NULL)) != NULL &&
	    http->type == YAML_MAPPING_NODE &&
	    (n = lookup(c, http, "per_ip", NULL)) != NULL)
		nerr(c, n, "http.per_ip",
		    "%lld is more than http.max_connections (%lld)",
		    (long long)d->http_per_ip,
		    (long long)d->http_max_connections);
}

static int
has_nested_cgroup(const struct job_config *job)
{
	size_t i, j;

	for (i = 0; i < job->naxes; i++)
		if (strcmp(job->axes[i].name, "cgroup") == 0)
			for (j = 0; j < job->axes[i].values.n; j++)
				if (job->axes[i].values.v[j][0] == '/')
					return 1;
	return 0;
}

/* 1 when runner r may run job (its hosts labels, or any without). */
static int
runner_fits(const struct cfg_runner_ref *r, const struct job_config *job)
{
	size_t i, k;

	if (job->hosts.n == 0)
		return 1;
	for (i = 0; i < job->hosts.n; i++) {
		if (strcmp(job->hosts.v[i], r->name) == 0)
			return 1;
		for (k = 0; k < r->labels.n; k++)
			if (strcmp(job->hosts.v[i], r->labels.v[k]) == 0)
				return 1;
	}
	return 0;
}

/*
 * A job that builds a kernel, whose runners (those the daemon config
 * says how they boot) all have boot: none, could never be measured: the
 * runners refuse it at claim time.  Say so now.
 */
static void
check_kernel_hosts(
    struct ctx *c, const struct job_config *job, const yaml_node_t *n)
{
	char names[512] = "";
	size_t i, fit = 0, none = 0, len = 0;

	for (i = 0; i < c->daemon->nrunners; i++) {
		const struct cfg_runner_ref *r = &c->daemon->runners[i];

		if (!runner_fits(r, job))
			continue;
		fit++;
		if (!r->boot_set || r->boot != CFG_BOOT_NONE)
			continue;
		none++;
		len += (size_t)snprintf(names + len,
		    len < sizeof(names) ? sizeof(names) - len : 0, "%s%s",
		    none > 1 ? ", " : "", r->name);
		if (len >= sizeof(names))
			len = sizeof(names) - 1;
	}
	if (fit > 0 && none == fit)
		nerr(c, n, "kernel",
		    "the job builds a kernel, but every runner it can run on "
		    "has boot: none (%s) and would refuse it",
		    names);
}

static void
check_job(struct ctx *c, struct job_config *job, const yaml_node_t *root)
{
	const yaml_node_t *n, *mx = lookup(c, root, "memory_max", NULL),
	                      *mh = lookup(c, root, "memory_high", NULL);

	if ((n = lookup(c, root, "kernel", NULL)) != NULL) {
		job->kernel.build = 1;
		if (job->build.n > 0)
			nerr(c, n, "kernel",
			    "a job builds either a kernel (kernel:) or its "
			    "tree (build:), not both");
	}
	if (job->kernel.build && c->daemon != NULL &&
	    (n = lookup(c, root, "kernel", NULL)) != NULL)
		check_kernel_hosts(c, job, n);
	if (job->rounds > job->runs && (n = lookup(c, root, "rounds", NULL)))
		nerr(c, n, "rounds", "%lld is more than runs (%lld)",
		    (long long)job->rounds, (long long)job->runs);
	if (job->runs > job->max_runs) {
		if ((n = lookup(c, root, "runs", NULL)) != NULL)
			nerr(c, n, "runs", "%lld is more than max_runs (%lld)",
			    (long long)job->runs, (long long)job->max_runs);
		else if ((n = lookup(c, root, "max_runs", NULL)) != NULL)
			nerr(c, n, "max_runs",
			    "%lld is less than runs (%lld by default)",
			    (long long)job->max_runs, (long long)job->runs);
	}
	if (!job->profile &&
	    (n = lookup(c, root, "profile_runs", NULL)) != NULL &&
	    job->profile_runs > 0)
		nerr(c, n, "profile_runs", "needs profile: true");
	if (job->memory_max > 0 && job->memory_high > job->memory_max && mh &&
	    mx)
		nerr(c, mh, "memory_high", "%s is more than memory_max (%s)",
		    scalar(mh), scalar(mx));
	if ((job->memory_max > 0 || job->memory_high > 0) &&
	    !has_nested_cgroup(job))
		nerr(c, mx ? mx : mh, mx ? "memory_max" : "memory_high",
		    "applies to a nested cgroup, but matrix.cgroup has none "
		    "(e.g. cgroup: [root, /bench])");
	if (job->naxes > 0 && job->nexclude > 0 &&
	    (n = lookup(c, root, "exclude", NULL)) != NULL) {
		struct cfg_point *pts;
		size_t npts;

		config_expand(&pts, &npts, job);
		if (npts == 0)
			nerr(c, n, "exclude",
			    "excludes every point of the matrix");
		config_points_free(pts, npts);
	}
}

/* ---- loading ---- */

static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return NULL; /* the current directory: paths stay as written */
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

/* Reads path (or uses text) and parses it; 0 with c->doc set. */
static int
open_doc(struct ctx *c, yaml_document_t *doc, const char *path,
    const char *text, size_t len)
{
	char *data = NULL;
	int rc;

	if (text == NULL) {
		if (read_file(&data, &len, path, c) == -1)
			return -1;
		text = data;
	}
	rc = parse_text(c, text, len, doc);
	free(data);
	if (rc == 0)
		c->doc = doc;
	return rc;
}

static void
ctx_init(struct ctx *c, const char *file, int resolve)
{
	memset(c, 0, sizeof(*c));
	c->file = file;
	c->dir = resolve ? dir_of(file) : NULL;
}

static int
ctx_done(struct ctx *c, struct cfg_errors *errs)
{
	free(c->dir);
	c->dir = NULL;
	if (c->doc != NULL)
		yaml_document_delete(c->doc);
	c->doc = NULL;
	return ctx_flush(c, errs);
}

int
config_load_daemon(
    struct daemon_config **out, const char *path, struct cfg_errors *errs)
{
	struct daemon_config *d;
	yaml_document_t doc;
	struct ctx c;

	*out = NULL;
	ctx_init(&c, path, 1);
	if (open_doc(&c, &doc, path, NULL, 0) == -1)
		return ctx_done(&c, errs);
	d = xcalloc(1, sizeof(*d));
	d->file = xstrdup(path);
	c.dcfg = d;
	load_map(&c, yaml_document_get_root_node(&doc), &daemon_schema, d, "");
	check_daemon(&c, d, yaml_document_get_root_node(&doc));
	if (ctx_done(&c, errs) == -1) {
		daemon_config_free(d);
		return -1;
	}
	*out = d;
	return 0;
}

static int
load_job(struct job_config **out, struct ctx *c, const char *path,
    const char *text, size_t len, struct cfg_errors *errs)
{
	struct job_config *job;
	yaml_document_t doc;

	*out = NULL;
	if (open_doc(c, &doc, path, text, len) == -1)
		return ctx_done(c, errs);
	job = xcalloc(1, sizeof(*job));
	job->file = xstrdup(path);
	c->job = job;
	load_map(c, yaml_document_get_root_node(&doc), &job_schema, job, "");
	check_job(c, job, yaml_document_get_root_node(&doc));
	if (ctx_done(c, errs) == -1) {
		job_config_free(job);
		return -1;
	}
	*out = job;
	return 0;
}

int
config_load_job_for(struct job_config **out, const char *path,
    const struct daemon_config *d, struct cfg_errors *errs)
{
	struct ctx c;

	ctx_init(&c, path, 1);
	c.daemon = d;
	return load_job(out, &c, path, NULL, 0, errs);
}

int
config_load_job(
    struct job_config **out, const char *path, struct cfg_errors *errs)
{
	return config_load_job_for(out, path, NULL, errs);
}

int
config_parse_job_for(struct job_config **out, const char *name,
    const char *text, size_t len, const struct daemon_config *d,
    struct cfg_errors *errs)
{
	struct ctx c;

	ctx_init(&c, name, 0);
	c.daemon = d;
	return load_job(out, &c, name, text, len, errs);
}

int
config_parse_job(struct job_config **out, const char *name, const char *text,
    size_t len, struct cfg_errors *errs)
{
	return config_parse_job_for(out, name, text, len, NULL, errs);
}

int
config_load_runner(
    struct runner_config **out, const char *path, struct cfg_errors *errs)
{
	struct runner_config *r;
	yaml_document_t doc;
	struct ctx c;
	const yaml_node_t *root;

	*out = NULL;
	ctx_init(&c, path, 1);
	if (open_doc(&c, &doc, path, NULL, 0) == -1)
		return ctx_done(&c, errs);
	r = xcalloc(1, sizeof(*r));
	r->file = xstrdup(path);
	root = yaml_document_get_root_node(&doc);
	load_map(&c, root, &runner_schema, r, "");
	if (r->boot != CFG_BOOT_NONE && r->kernel_tree == NULL &&
	    lookup(&c, root, "kernel_tree", NULL) == NULL)
		nerr(&c, root, NULL,
		    "missing required key 'kernel_tree' (boot is %s)",
		    config_boot_name(r->boot));
	if (ctx_done(&c, errs) == -1) {
		runner_config_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

int
config_load_jobs(struct job_config ***out, size_t *n,
    const struct daemon_config *d, struct cfg_errors *errs)
{
	struct job_config **jobs = NULL, *job;
	size_t njobs = 0, i, k, m;
	int rc = 0;

	for (i = 0; i < d->jobs.n; i++) {
		const char *pat = d->jobs.v[i];
		glob_t g;
		int gr;

		memset(&g, 0, sizeof(g));
		gr = glob(pat, 0, NULL, &g);
		if (gr == GLOB_NOMATCH || (gr == 0 && g.gl_pathc == 0)) {
			if (strpbrk(pat, "*?[") == NULL) {
				if (d->jobs_at != NULL)
					cfg_errors_add(errs,
					    "%s:%u:%u: jobs[%zu]: no such file "
					    "'%s'",
					    d->file, d->jobs_at[i].line,
					    d->jobs_at[i].col, i, pat);
				else
					cfg_errors_add(errs,
					    "%s: jobs[%zu]: no such file '%s'",
					    d->file, i, pat);
				rc = -1;
			}
			globfree(&g);
			continue;
		}
		if (gr != 0) {
			cfg_errors_add(errs, "%s: jobs[%zu]: cannot read '%s'",
			    d->file, i, pat);
			rc = -1;
			globfree(&g);
			continue;
		}
		for (k = 0; k < g.gl_pathc; k++) {
			struct ctx c;

			for (m = 0; m < njobs; m++)
				if (strcmp(jobs[m]->file, g.gl_pathv[k]) == 0)
					break;
			if (m < njobs)
				continue;
			ctx_init(&c, g.gl_pathv[k], 1);
			c.daemon = d;
			c.others = jobs;
			c.nothers = njobs;
			/* c.file must outlive g: load_job copies it. */
			if (load_job(&job, &c, g.gl_pathv[k], NULL, 0, errs) ==
			    -1) {
				rc = -1;
				continue;
			}
			jobs = xreallocarray(jobs, njobs + 1, sizeof(*jobs));
			jobs[njobs++] = job;
		}
		globfree(&g);
	}
	*out = jobs;
	*n = njobs;
	return rc;
}

void
config_jobs_free(struct job_config **jobs, size_t n)
{
	size_t i;

	if (jobs == NULL)
		return;
	for (i = 0; i < n; i++)
		job_config_free(jobs[i]);
	free(jobs);
}

enum cfg_kind
config_sniff_kind(const char *path, struct cfg_errors *errs)
{
	yaml_document_t doc;
	const yaml_node_t *root;
	enum cfg_kind k = CFG_KIND_UNKNOWN;
	int found = 0;
	struct ctx c;

	ctx_init(&c, path, 0);
	if (open_doc(&c, &doc, path, NULL, 0) == -1) {
		ctx_done(&c, errs);
		return CFG_KIND_UNKNOWN;
	}
	root = yaml_document_get_root_node(&doc);
	if (lookup(&c, root, "command", NULL) != NULL) {
		k = CFG_KIND_JOB;
		found++;
	}
	if (lookup(&c, root, "listen", NULL) != NULL) {
		k = CFG_KIND_DAEMON;
		found++;
	}
	if (lookup(&c, root, "server", NULL) != NULL) {
		k = CFG_KIND_RUNNER;
		found++;
	}
	if (found != 1) {
		nerr(&c, root, NULL,
		    "cannot tell the kind of file: a job has 'command', a "
		    "daemon config 'listen', a runner config 'server'%s; use "
		    "--kind",
		    found ? " (it has several)" : "");
		k = CFG_KIND_UNKNOWN;
	}
	ctx_done(&c, errs);
	return k;
}

/* ---- freeing ---- */

void
daemon_config_free(struct daemon_config *d)
{
	size_t i, j;

	if (d == NULL)
		return;
	free(d->file);
	free(d->listen);
	free(d->database);
	free(d->mirrors);
	free(d->public_url);
	free(d->admin_token_file);
	strlist_free(&d->jobs);
	free(d->jobs_at);
	for (i = 0; i < d->ntrees; i++) {
		free(d->trees[i].name);
		free(d->trees[i].url);
		strlist_free(&d->trees[i].branches);
		strlist_free(&d->trees[i].paths);
	}
	free(d->trees);
	for (i = 0; i < d->ninboxes; i++) {
		free(d->inboxes[i].name);
		free(d->inboxes[i].url);
		free(d->inboxes[i].tree);
		free(d->inboxes[i].branch);
		strlist_free(&d->inboxes[i].subjects);
		for (j = 0; j < d->inboxes[i].ntags; j++) {
			free(d->inboxes[i].tags[j].tag);
			free(d->inboxes[i].tags[j].tree);
			free(d->inboxes[i].tags[j].branch);
		}
		free(d->inboxes[i].tags);
	}
	free(d->inboxes);
	for (i = 0; i < d->nrunners; i++) {
		free(d->runners[i].name);
		free(d->runners[i].token_file);
		free(d->runners[i].canary_job);
		strlist_free(&d->runners[i].labels);
	}
	free(d->runners);
	free(d->alerts.smtp);
	free(d->alerts.from);
	strlist_free(&d->alerts.to);
	free(d->alerts.auth_file);
	free(d->alerts.ca_file);
	free(d->alerts.test_to);
	for (i = 0; i < d->alerts.nlists; i++) {
		free(d->alerts.lists[i].tree);
		free(d->alerts.lists[i].inbox);
		strlist_free(&d->alerts.lists[i].cc);
	}
	free(d->alerts.lists);
	for (i = 0; i < d->alerts.nwebhooks; i++) {
		free(d->alerts.webhooks[i].url);
		free(d->alerts.webhooks[i].secret_file);
	}
	free(d->alerts.webhooks);
	free(d);
}

void
job_config_free(struct job_config *job)
{
	size_t i;

	if (job == NULL)
		return;
	free(job->file);
	free(job->name);
	strlist_free(&job->command);
	strlist_free(&job->server_command);
	strlist_free(&job->build);
	strlist_free(&job->trigger.trees);
	strlist_free(&job->trigger.branches);
	strlist_free(&job->trigger.paths);
	strlist_free(&job->trigger.inboxes);
	strlist_free(&job->hosts);
	free(job->baseline_ref);
	free(job->kernel.config);
	strlist_free(&job->kernel.fragment);
	free(job->host.cpus);
	free(job->host.server_cpus);
	for (i = 0; i < job->naxes; i++)
		axis_free(&job->axes[i]);
	free(job->axes);
	for (i = 0; i < job->nexclude; i++) {
		free(job->exclude[i].keys);
		free(job->exclude[i].values);
		free(job->exclude[i].label);
	}
	free(job->exclude);
	for (i = 0; i < job->nmetrics; i++)
		free(job->metrics[i].name);
	free(job->metrics);
	free(job);
}

void
runner_config_free(struct runner_config *r)
{
	if (r == NULL)
		return;
	free(r->file);
	free(r->server);
	free(r->name);
	free(r->token_file);
	free(r->workdir);
	free(r->kernel_tree);
	free(r->guest_dir);
	free(r->host.governor);
	free(r->host.irq_cpus);
	strlist_free(&r->labels);
	free(r);
}
