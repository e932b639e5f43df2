/*
 * The daemon's schema (perfwatchd.yaml): trees, inboxes and their tags,
 * runners, alerts (webhooks, e-mail), http, the scheduler, and its
 * whole-file check.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/database.h"
#include "common/xalloc.h"
#include "config/config_int.h"

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
add_inbox_tag(struct ctx *c, const char *name, const struct cfg_node *vn,
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
	cfg_i_load_map(c, vn, &inbox_tag_schema, t, kp);
	if (t->tree == NULL && in->tree != NULL)
		t->tree = xstrdup(in->tree);
	if (d == NULL || t->tree == NULL || t->branch == NULL)
		return;
	for (j = 0; j < d->ntrees; j++)
		if (d->trees[j].name != NULL &&
		    strcmp(d->trees[j].name, t->tree) == 0)
			tree = &d->trees[j];
	if (tree == NULL) {
		cfg_i_nerr(c, vn, kp, "no tree named '%s' in trees", t->tree);
		return;
	}
	for (j = 0; j < tree->branches.n; j++)
		if (strcmp(tree->branches.v[j], t->branch) == 0)
			return;
	cfg_i_nerr(c, vn, kp, "tree '%s' does not watch a branch '%s'", t->tree,
	    t->branch);
}

static void
h_inbox_tags(
    struct ctx *c, const struct cfg_node *n, void *base, const char *path)
{
	cfg_i_named_maps(c, n, path, "{tree: NAME, branch: NAME}", valid_tag,
	    "not a subject tag (letters, digits, '.', '_', '/', '+', '-')",
	    add_inbox_tag, base);
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
check_tree(struct ctx *c, void *obj, const struct cfg_node *map,
    const char *path, size_t idx)
{
	struct cfg_tree *t = obj;
	const struct cfg_node *nn;
	size_t i;

	(void)path;
	if (t->name == NULL ||
	    (nn = cfg_i_lookup(c, map, "name", NULL)) == NULL)
		return;
	for (i = 0; i < idx; i++)
		if (t[-(long)(idx - i)].name != NULL &&
		    strcmp(t[-(long)(idx - i)].name, t->name) == 0) {
			char kp[512];

			cfg_i_join(kp, sizeof(kp), path, "name");
			cfg_i_nerr(
			    c, nn, kp, "tree '%s' is defined twice", t->name);
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
	STR("archive", struct cfg_inbox, archive, 0, V_HTTPURL),
	LIST("subjects", struct cfg_inbox, subjects, F_UNIQUE, V_ANY),
	NUM("poll", F_DURATION, struct cfg_inbox, poll_s, "10m", 1, 86400),
	{ .key = "tags", .type = F_CUSTOM, .fn = h_inbox_tags },
	{ .key = "commands_from_anyone",
	    .type = F_BOOL,
	    .off = offsetof(struct cfg_inbox, commands_from_anyone),
	    .def = "false" },
	NUM("series_per_sender_day", F_INT, struct cfg_inbox,
	    series_per_sender_day, "20", 1, 100000),
	NUM("max_queued_jobs", F_INT, struct cfg_inbox, max_queued_jobs, "200",
	    1, 1000000),
};

static void
check_inbox(struct ctx *c, void *obj, const struct cfg_node *map,
    const char *path, size_t idx)
{
	struct cfg_inbox *in = obj;
	const struct daemon_config *d = c->dcfg;
	const struct cfg_tree *t = NULL;
	const struct cfg_node *nn;
	char kp[512];
	size_t i;

	if (in->name != NULL &&
	    (nn = cfg_i_lookup(c, map, "name", NULL)) != NULL)
		for (i = 0; i < idx; i++)
			if (in[-(long)(idx - i)].name != NULL &&
			    strcmp(in[-(long)(idx - i)].name, in->name) == 0) {
				cfg_i_join(kp, sizeof(kp), path, "name");
				cfg_i_nerr(c, nn, kp,
				    "inbox '%s' is defined twice", in->name);
				break;
			}
	if (in->tree == NULL || d == NULL)
		return;
	for (i = 0; i < d->ntrees; i++)
		if (d->trees[i].name != NULL &&
		    strcmp(d->trees[i].name, in->tree) == 0)
			t = &d->trees[i];
	if (t == NULL) {
		cfg_i_join(kp, sizeof(kp), path, "tree");
		cfg_i_nerr(c, cfg_i_lookup(c, map, "tree", NULL), kp,
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
	cfg_i_join(kp, sizeof(kp), path, "branch");
	cfg_i_nerr(c, cfg_i_lookup(c, map, "branch", NULL), kp,
	    "tree '%s' does not watch a branch '%s'", t->name, in->branch);
}

static const struct schema inbox_schema = { sizeof(struct cfg_inbox),
	inbox_fields, NFIELDS(inbox_fields), check_inbox };

const struct enumv cfg_i_boot_enum[] = {
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
	    .enums = cfg_i_boot_enum },
	{ .key = "canary", .type = F_SECTION, .sub = &canary_schema },
};

static void
check_runref(struct ctx *c, void *obj, const struct cfg_node *map,
    const char *path, size_t idx)
{
	struct cfg_runner_ref *r = obj;
	const struct cfg_node *nn;
	size_t i;

	r->boot_set = cfg_i_lookup(c, map, "boot", NULL) != NULL;
	r->token_at = cfg_i_mark(c, map, "token_file");
	if ((nn = cfg_i_lookup(c, map, "canary", NULL)) != NULL &&
	    nn->type == CFG_NODE_MAP &&
	    (nn = cfg_i_lookup(c, nn, "job", NULL)) != NULL) {
		r->canary_line = (int)nn->line + 1;
		r->canary_col = (int)nn->column + 1;
	}
	if (r->name == NULL ||
	    (nn = cfg_i_lookup(c, map, "name", NULL)) == NULL)
		return;
	for (i = 0; i < idx; i++)
		if (r[-(long)(idx - i)].name != NULL &&
		    strcmp(r[-(long)(idx - i)].name, r->name) == 0) {
			char kp[512];

			cfg_i_join(kp, sizeof(kp), path, "name");
			cfg_i_nerr(
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
check_alert_list(struct ctx *c, void *obj, const struct cfg_node *map,
    const char *path, size_t idx)
{
	struct cfg_alert_list *l = obj;
	const struct daemon_config *d = c->dcfg;
	char kp[512];
	size_t i;

	(void)idx;
	if ((l->tree == NULL) == (l->inbox == NULL)) {
		cfg_i_nerr(c, map, path, "needs exactly one of tree or inbox");
		return;
	}
	if (d == NULL)
		return;
	if (l->tree != NULL) {
		for (i = 0; i < d->ntrees; i++)
			if (d->trees[i].name != NULL &&
			    strcmp(d->trees[i].name, l->tree) == 0)
				return;
		cfg_i_join(kp, sizeof(kp), path, "tree");
		cfg_i_nerr(c, cfg_i_lookup(c, map, "tree", NULL), kp,
		    "no tree named '%s' in trees", l->tree);
		return;
	}
	for (i = 0; i < d->ninboxes; i++)
		if (d->inboxes[i].name != NULL &&
		    strcmp(d->inboxes[i].name, l->inbox) == 0)
			return;
	cfg_i_join(kp, sizeof(kp), path, "inbox");
	cfg_i_nerr(c, cfg_i_lookup(c, map, "inbox", NULL), kp,
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
	{ .key = "insecure_auth",
	    .type = F_BOOL,
	    .off = offsetof(struct daemon_config, alerts.insecure_auth),
	    .def = "false" },
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
	NUM("per_ip_rate", F_INT, struct daemon_config, http_per_ip_rate, "0",
	    0, 1000000),
	NUM("per_ip_burst", F_INT, struct daemon_config, http_per_ip_burst, "0",
	    0, 1000000),
	NUM("timeout", F_DURATION, struct daemon_config, http_timeout_s, "30s",
	    1, 3600),
	NUM("max_body", F_SIZE, struct daemon_config, http_max_body, "8M", 1024,
	    (int64_t)64 << 20),
	NUM("max_pack", F_SIZE, struct daemon_config, http_max_pack, "64M",
	    1024, (int64_t)64 << 20),
};
static const struct schema http_schema = { 0, http_fields, NFIELDS(http_fields),
	NULL };

static const struct field tls_fields[] = {
	STR("cert_file", struct daemon_config, tls_cert_file, 0, V_PATH),
	STR("key_file", struct daemon_config, tls_key_file, 0, V_PATH),
};
static const struct schema tls_schema = { 0, tls_fields, NFIELDS(tls_fields),
	NULL };

static const struct field sched_fields[] = {
	NUM("claim_wait", F_DURATION, struct daemon_config, claim_wait_s, "30s",
	    1, 600),
	NUM("lease", F_DURATION, struct daemon_config, lease_s, "60s", 10,
	    86400),
	NUM("max_attempts", F_INT, struct daemon_config, max_attempts, "3", 1,
	    100),
	NUM("worker_lease", F_DURATION, struct daemon_config, worker_lease_s,
	    "10s", 3, 600),
};
static const struct schema sched_schema = { 0, sched_fields,
	NFIELDS(sched_fields), NULL };

static const struct field builds_fields[] = {
	{ .key = "shared",
	    .type = F_BOOL,
	    .off = offsetof(struct daemon_config, builds.shared),
	    .def = "false" },
	STR("dir", struct daemon_config, builds.dir, 0, V_PATH),
	NUM("max_size", F_SIZE, struct daemon_config, builds.max_size, "10G",
	    1024, INT64_MAX),
	NUM("max_file", F_SIZE, struct daemon_config, builds.max_file, "512M",
	    1024, INT64_MAX),
};
static const struct schema builds_schema = { 0, builds_fields,
	NFIELDS(builds_fields), NULL };

static void
h_jobs(struct ctx *c, const struct cfg_node *n, void *base, const char *path)
{
	static const struct field f = {
		.key = "jobs", .type = F_LIST, .flags = F_UNIQUE, .vk = V_PATH
	};
	struct daemon_config *d = base;
	int *it;
	size_t i;

	if (n == NULL)
		return;
	cfg_i_load_list(c, n, &f, &d->jobs, path);
	if (n->type != CFG_NODE_SEQ || d->jobs.n != cfg_i_seq_len(n))
		return;
	d->jobs_at = xcalloc(d->jobs.n + 1, sizeof(*d->jobs_at));
	for (i = 0, it = n->items; i < d->jobs.n; i++, it++) {
		const struct cfg_node *e = cfg_i_node(c, *it);

		d->jobs_at[i].line = (unsigned)e->line + 1;
		d->jobs_at[i].col = (unsigned)e->column + 1;
	}
}

static const struct field daemon_fields[] = {
	STR("listen", struct daemon_config, listen, F_REQ, V_HOSTPORT),
	STR("database", struct daemon_config, database, F_REQ, V_DATABASE),
	STR("mirrors", struct daemon_config, mirrors, F_REQ, V_PATH),
	STR("public_url", struct daemon_config, public_url, 0, V_HTTPURL),
	STR("admin_token_file", struct daemon_config, admin_token_file, 0,
	    V_PATH),
	{ .key = "jobs", .type = F_CUSTOM, .fn = h_jobs },
	LIST("maintainers", struct daemon_config, maintainers, F_UNIQUE, V_ANY),
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
	{ .key = "tls", .type = F_SECTION, .sub = &tls_schema },
	{ .key = "insecure_http",
	    .type = F_BOOL,
	    .off = offsetof(struct daemon_config, insecure_http),
	    .def = "false" },
	{ .key = "scheduler", .type = F_SECTION, .sub = &sched_schema },
	{ .key = "builds", .type = F_SECTION, .sub = &builds_schema },
};
const struct schema cfg_i_daemon_schema = { sizeof(struct daemon_config),
	daemon_fields, NFIELDS(daemon_fields), NULL };

/* ---- whole-file checks ---- */

/* 1 when listen's host is a loopback address (127/8, ::1, localhost). */
static int
loopback_listen(const char *listen)
{
	char host[64];
	const char *end;
	size_t n;
	struct in_addr a4;
	struct in6_addr a6;

	if (listen[0] == '[') {
		listen++;
		end = strchr(listen, ']');
	} else
		end = strrchr(listen, ':');
	if (end == NULL || (n = (size_t)(end - listen)) >= sizeof(host))
		return 0;
	memcpy(host, listen, n);
	host[n] = '\0';
	if (strcmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* The node of a key in a section of root (alerts.email.auth_file). */
static const struct cfg_node *
lookup2(struct ctx *c, const struct cfg_node *root, const char *sec,
    const char *sub, const char *key)
{
	const struct cfg_node *n = cfg_i_lookup(c, root, sec, NULL);

	if (n != NULL && sub != NULL && n->type == CFG_NODE_MAP)
		n = cfg_i_lookup(c, n, sub, NULL);
	if (n == NULL || n->type != CFG_NODE_MAP)
		return NULL;
	return cfg_i_lookup(c, n, key, NULL);
}

void
cfg_i_check_daemon(
    struct ctx *c, struct daemon_config *d, const struct cfg_node *root)
{
	const struct cfg_node *http, *n;

	d->admin_token_at = cfg_i_mark(c, root, "admin_token_file");
	if (d->http_per_ip > d->http_max_connections &&
	    (http = cfg_i_lookup(c, root, "http", NULL)) != NULL &&
	    http->type == CFG_NODE_MAP &&
	    (n = cfg_i_lookup(c, http, "per_ip", NULL)) != NULL)
		cfg_i_nerr(c, n, "http.per_ip",
		    "%lld is more than http.max_connections (%lld)",
		    (long long)d->http_per_ip,
		    (long long)d->http_max_connections);
	if ((d->tls_cert_file == NULL) != (d->tls_key_file == NULL) &&
	    (n = cfg_i_lookup(c, root, "tls", NULL)) != NULL)
		cfg_i_nerr(c, n, "tls",
		    "cert_file and key_file go together (%s is missing)",
		    d->tls_cert_file == NULL ? "cert_file" : "key_file");
	/* Runner and admin tokens and the session cookie cross this port. */
	if (d->listen != NULL && d->tls_cert_file == NULL &&
	    !d->insecure_http && !loopback_listen(d->listen) &&
	    (n = cfg_i_lookup(c, root, "listen", NULL)) != NULL)
		cfg_i_nerr(c, n, "listen",
		    "%s is not a loopback address and tls is not set: "
		    "tokens would cross the network in the clear; set "
		    "tls.cert_file and tls.key_file, or insecure_http: true",
		    d->listen);
	/* The artifact store of shared builds: beside a SQLite file by
	 * default; a PostgreSQL database has no directory here. */
	if (d->builds.dir == NULL && d->database != NULL &&
	    !database_is_pg(d->database)) {
		const char *slash = strrchr(d->database, '/');

		d->builds.dir = slash == NULL
		    ? xstrdup("artifacts")
		    : xasprintf("%.*s/artifacts", (int)(slash - d->database),
		          d->database);
	}
	if (d->builds.shared && d->builds.dir == NULL &&
	    (n = cfg_i_lookup(c, root, "builds", NULL)) != NULL)
		cfg_i_nerr(c, n, "builds.dir",
		    "required when builds.shared is true and the database "
		    "is PostgreSQL (where the artifact store lives)");
	if (d->builds.max_file > d->builds.max_size &&
	    (n = lookup2(c, root, "builds", NULL, "max_file")) != NULL)
		cfg_i_nerr(c, n, "builds.max_file",
		    "%lld is more than builds.max_size (%lld)",
		    (long long)d->builds.max_file,
		    (long long)d->builds.max_size);
	/* The password would cross the network in the clear. */
	if (d->alerts.auth_file != NULL && d->alerts.smtp != NULL &&
	    strncmp(d->alerts.smtp, "smtp://", 7) == 0 && !d->alerts.starttls &&
	    !d->alerts.insecure_auth &&
	    (n = lookup2(c, root, "alerts", "email", "auth_file")) != NULL)
		cfg_i_nerr(c, n, "alerts.email.auth_file",
		    "SMTP AUTH over smtp:// without STARTTLS sends the "
		    "password in the clear; use smtps://, set "
		    "alerts.email.starttls: true, or "
		    "alerts.email.insecure_auth: true");
}
