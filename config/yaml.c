/*
 * The YAML reader: reads a file (capped), checks its bytes so every bad
 * character gets a line and column, parses it with libyaml's document
 * API and copies the tree with its positions into struct cfg_doc
 * (config/config_int.h).  libyaml is used in this file only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "config/config_int.h"

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
		cfg_i_at(c, 0, 0, NULL, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		cfg_i_at(c, 0, 0, NULL, "not a regular file");
		close(fd);
		return -1;
	}
	if (st.st_size > CAP_CONFIG_FILE) {
		cfg_i_at(c, 0, 0, NULL,
		    "file too large (%lld bytes, at most %d)",
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
			cfg_i_at(c, 0, 0, NULL, "read error: %s",
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
		long cp;
		size_t n = utf8_decode(s + i, len - i, &cp);

		if (n == 0) {
			cfg_i_at(c, line, col, NULL,
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
			cfg_i_at(c, line, col, NULL,
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
				cfg_i_at(c, line, col, NULL,
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
		if (!UTF8_CONT(text[i]))
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
			} else if (!UTF8_CONT(text[i])) {
				col++;
			}
		}
		cfg_i_at(c, line, col, NULL, "%s",
		    p->problem ? p->problem : "cannot read");
		return;
	}
	if (p->error == YAML_MEMORY_ERROR) {
		cfg_i_at(c, 0, 0, NULL, "out of memory parsing YAML");
		return;
	}
	line = p->problem_mark.line + 1;
	col = p->problem_mark.column + 1;
	end_of_text(text, len, &line, &col);
	if (p->context != NULL) {
		size_t cl = p->context_mark.line + 1;
		size_t cc = p->context_mark.column + 1;

		end_of_text(text, len, &cl, &cc);
		cfg_i_at(c, line, col, NULL, "%s (%s at line %zu, column %zu)",
		    p->problem ? p->problem : "syntax error", p->context, cl,
		    cc);
	} else
		cfg_i_at(c, line, col, NULL, "%s",
		    p->problem ? p->problem : "syntax error");
}

/* Copies libyaml's nodes, in its order, so that ids stay its ids. */
static void
copy_doc(struct cfg_doc *out, yaml_document_t *doc)
{
	size_t i, j, n = (size_t)(doc->nodes.top - doc->nodes.start);

	out->nodes = xcalloc(n, sizeof(*out->nodes));
	out->n = n;
	for (i = 0; i < n; i++) {
		const yaml_node_t *y = &doc->nodes.start[i];
		struct cfg_node *o = &out->nodes[i];

		o->line = y->start_mark.line;
		o->column = y->start_mark.column;
		switch (y->type) {
		case YAML_SCALAR_NODE:
			o->type = CFG_NODE_SCALAR;
			o->length = y->data.scalar.length;
			o->value = xmalloc(o->length + 1);
			memcpy(o->value, y->data.scalar.value, o->length);
			o->value[o->length] = '\0';
			o->plain =
			    y->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			break;
		case YAML_SEQUENCE_NODE:
			o->type = CFG_NODE_SEQ;
			o->nitems = (size_t)(y->data.sequence.items.top -
			    y->data.sequence.items.start);
			o->items = xcalloc(o->nitems + 1, sizeof(*o->items));
			for (j = 0; j < o->nitems; j++)
				o->items[j] = y->data.sequence.items.start[j];
			break;
		case YAML_MAPPING_NODE:
			o->type = CFG_NODE_MAP;
			o->npairs = (size_t)(y->data.mapping.pairs.top -
			    y->data.mapping.pairs.start);
			o->pairs = xcalloc(o->npairs + 1, sizeof(*o->pairs));
			for (j = 0; j < o->npairs; j++) {
				o->pairs[j].key =
				    y->data.mapping.pairs.start[j].key;
				o->pairs[j].value =
				    y->data.mapping.pairs.start[j].value;
			}
			break;
		default:
			o->type = CFG_NODE_NONE;
			break;
		}
	}
}

struct cfg_node *
cfg_i_doc_root(const struct cfg_doc *doc)
{
	return doc->n > 0 ? &doc->nodes[0] : NULL;
}

void
cfg_i_doc_free(struct cfg_doc *doc)
{
	size_t i;

	for (i = 0; i < doc->n; i++) {
		free(doc->nodes[i].value);
		free(doc->nodes[i].items);
		free(doc->nodes[i].pairs);
	}
	free(doc->nodes);
	doc->nodes = NULL;
	doc->n = 0;
}

/*
 * Parses text into out with its root a mapping: 0, or -1 with errors
 * (and nothing in out).
 */
static int
parse_text(struct ctx *c, const char *text, size_t len, struct cfg_doc *out)
{
	yaml_parser_t p;
	yaml_document_t doc, extra;
	yaml_node_t *root, *n2;

	memset(out, 0, sizeof(*out));
	if (check_chars(c, (const unsigned char *)text, len) == -1)
		return -1;
	if (!yaml_parser_initialize(&p)) {
		cfg_i_at(c, 0, 0, NULL, "out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &doc)) {
		parser_error(c, &p, text, len);
		yaml_parser_delete(&p);
		return -1;
	}
	root = yaml_document_get_root_node(&doc);
	if (root == NULL) {
		cfg_i_at(
		    c, 1, 1, NULL, "empty file (expected a mapping of keys)");
		yaml_document_delete(&doc);
		yaml_parser_delete(&p);
		return -1;
	}
	if (!yaml_parser_load(&p, &extra)) {
		parser_error(c, &p, text, len);
		yaml_document_delete(&doc);
		yaml_parser_delete(&p);
		return -1;
	}
	if ((n2 = yaml_document_get_root_node(&extra)) != NULL) {
		cfg_i_at(c, n2->start_mark.line + 1, n2->start_mark.column + 1,
		    NULL, "a second YAML document (a config file holds one)");
		yaml_document_delete(&extra);
		yaml_document_delete(&doc);
		yaml_parser_delete(&p);
		return -1;
	}
	yaml_document_delete(&extra);
	yaml_parser_delete(&p);
	if (root->type != YAML_MAPPING_NODE) {
		cfg_i_at(c, root->start_mark.line + 1,
		    root->start_mark.column + 1, NULL,
		    "expected a mapping of keys at the top, got %s",
		    root->type == YAML_SEQUENCE_NODE ? "a list" : "a scalar");
		yaml_document_delete(&doc);
		return -1;
	}
	copy_doc(out, &doc);
	yaml_document_delete(&doc);
	return 0;
}

/* Reads path (or uses text) and parses it; 0 with c->doc set. */
int
cfg_i_open_doc(struct ctx *c, struct cfg_doc *doc, const char *path,
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
