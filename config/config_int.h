#ifndef CONFIG_CONFIG_INT_H
#define CONFIG_CONFIG_INT_H

/*
 * What the files of config/ share; nothing outside config/ includes this
 * (tests/lint/layers.sh).  Which file holds what:
 *   config.c         the errors (file:line:column, in file order), the
 *                    load entry points, freeing
 *   yaml.c           the YAML reader: reads the file, checks its bytes,
 *                    parses it with libyaml (its only user) and copies
 *                    the document into the nodes below
 *   schema.c         the schema engine: a table of fields per mapping
 *                    (types, defaults, bounds, lists, sections, arrays)
 *   check.c          the string validators (names, URLs, paths, CPUs...)
 *   schema_daemon.c, schema_job.c, schema_runner.c: the three schemas,
 *                    their custom fields and whole-file checks
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "config/config.h"

/*
 * A parsed document: yaml.c's copy of libyaml's nodes, in libyaml's
 * order, so that ids (1-based) and marks (0-based) mean what they meant
 * there.  A scalar's value is NUL-terminated and may hold a NUL.
 */
enum cfg_ntype { CFG_NODE_NONE, CFG_NODE_SCALAR, CFG_NODE_SEQ, CFG_NODE_MAP };

struct cfg_pair {
	int key, value; /* node ids */
};

struct cfg_node {
	enum cfg_ntype type;
	size_t line, column; /* 0-based, of the node's start */
	/* A scalar. */
	unsigned char *value;
	size_t length;
	int plain; /* plain style: not quoted, not a block scalar */
	/* A sequence: node ids; a mapping: key/value pairs. */
	int *items;
	size_t nitems;
	struct cfg_pair *pairs;
	size_t npairs;
};

struct cfg_doc {
	struct cfg_node *nodes;
	size_t n;
};

/* ---- errors and the loading context (config.c) ---- */

struct cfg_msg {
	size_t line, col; /* 1-based; 0 = no position */
	size_t seq;
	char *text;
};

struct ctx {
	const char *file;
	char *dir; /* for relative paths; NULL leaves them as written */
	struct cfg_doc *doc;
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
	V_DATABASE, /* V_PATH, or a PostgreSQL URI or conninfo as it is */
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
    struct ctx *, const struct cfg_node *, void *base, const char *path);

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

typedef void (*check_fn)(struct ctx *, void *obj, const struct cfg_node *map,
    const char *path, size_t idx);

struct schema {
	size_t size; /* of one element, for F_ARRAY */
	const struct field *f;
	size_t n;
	check_fn check;
};

#define AT(base, off, type) ((type *)(void *)((char *)(base) + (off)))
#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))
/* Rows of the schemas' field tables (schema_*.c). */

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

/* ---- what each file gives the others ---- */

/*
 * yaml.c: reads path (or uses text when not NULL) and parses it into doc,
 * whose root is then a mapping: 0 with c->doc set, or -1 with errors.
 * The root node (NULL for an empty document); freeing.
 */
int cfg_i_open_doc(struct ctx *c, struct cfg_doc *doc, const char *path,
    const char *text, size_t len);
struct cfg_node *cfg_i_doc_root(const struct cfg_doc *doc);
void cfg_i_doc_free(struct cfg_doc *doc);

/* check.c */
int cfg_i_is_alnum(char ch);
int cfg_i_valid_name(const char *s);
int cfg_i_has_space_or_ctl(const char *s);
int cfg_i_has_ctl(const char *s);
int cfg_i_is_builtin(const char *name, size_t len);
char *cfg_i_check_str(struct ctx *c, const struct cfg_node *n, const char *path,
    const char *s, enum vkind vk, int first_argv);

/* config.c */
__attribute__((format(printf, 5, 6))) void cfg_i_at(struct ctx *c, size_t line,
    size_t col, const char *path, const char *fmt, ...);
__attribute__((format(printf, 4, 5))) void cfg_i_nerr(struct ctx *c,
    const struct cfg_node *n, const char *path, const char *fmt, ...);

/* schema.c */
struct cfg_node *cfg_i_node(const struct ctx *c, int id);
int cfg_i_is_null(const struct cfg_node *n);
const char *cfg_i_describe(const struct cfg_node *n, char *out, size_t outlen);
void cfg_i_join(char *out, size_t len, const char *path, const char *key);
void cfg_i_join_idx(char *out, size_t len, const char *path, size_t i);
const char *cfg_i_scalar(const struct cfg_node *n);
/* How much the keys of mapping map look like schema s's: 2 a key it
 * has, 1 a key within a typo of one (the sniffing of a file's kind). */
int cfg_i_schema_score(
    const struct ctx *c, const struct cfg_node *map, const struct schema *s);
const struct cfg_node *cfg_i_lookup(const struct ctx *c,
    const struct cfg_node *map, const char *key, const struct cfg_node **keyn);
long cfg_i_earlier_dup(
    const struct ctx *c, const struct cfg_node *map, size_t j);
size_t cfg_i_map_len(const struct cfg_node *map);
size_t cfg_i_seq_len(const struct cfg_node *seq);
/* A sequence's length into *cnt; -1 after an error if over CFG_LIST_MAX. */
int cfg_i_list_len(
    struct ctx *c, const struct cfg_node *n, const char *path, size_t *cnt);
int cfg_i_check_keys(struct ctx *c, const struct cfg_node *map,
    const struct schema *s, const char *path);
const char *cfg_i_want_scalar(struct ctx *c, const struct cfg_node *n,
    const char *path, const char *what);
void cfg_i_strlist_free(struct strlist *l);
void cfg_i_load_list(struct ctx *c, const struct cfg_node *n,
    const struct field *f, struct strlist *out, const char *path);
void cfg_i_load_field(struct ctx *c, const struct cfg_node *n,
    const struct field *f, void *base, const char *path);
void cfg_i_load_map(struct ctx *c, const struct cfg_node *map,
    const struct schema *s, void *base, const char *path);
void cfg_i_named_maps(struct ctx *c, const struct cfg_node *n, const char *path,
    const char *what, int (*valid)(const char *), const char *bad_name,
    void (*each)(struct ctx *, const char *name, const struct cfg_node *vn,
        const char *kp, void *arg),
    void *arg);

/* schema_daemon.c */
extern const struct enumv cfg_i_boot_enum[];
extern const struct schema cfg_i_daemon_schema;
/* Where key's value in map is (1-based), or 0:0 when it is absent. */
struct cfg_mark cfg_i_mark(
    const struct ctx *, const struct cfg_node *map, const char *key);
void cfg_i_check_daemon(
    struct ctx *c, struct daemon_config *d, const struct cfg_node *root);

/* schema_job.c */
void cfg_i_axis_free(struct cfg_axis *a);
extern const struct enumv cfg_i_thp_enum[];
extern const struct enumv cfg_i_defrag_enum[];
extern const struct schema cfg_i_job_schema;
void cfg_i_check_job(
    struct ctx *c, struct job_config *job, const struct cfg_node *root);

/* schema_runner.c */
extern const struct schema cfg_i_runner_schema;
void cfg_i_check_runner(
    struct ctx *c, struct runner_config *r, const struct cfg_node *root);

#endif
