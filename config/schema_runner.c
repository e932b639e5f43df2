/*
 * The runner's schema (perfwatch-runner.yaml) and its host section.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "config/config_int.h"

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
	    .enums = cfg_i_thp_enum },
	{ .key = "thp_defrag",
	    .type = F_ENUM,
	    .off = offsetof(struct runner_config, host.thp_defrag),
	    .def = "keep",
	    .enums = cfg_i_defrag_enum },
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

/* Runner limits: what a command from a tree or a mail may hold. */
static const struct field runlimits_fields[] = {
	NUM("nproc", F_INT, struct runner_config, limits.nproc, "4096", 0,
	    (int64_t)1 << 22),
	NUM("nofile", F_INT, struct runner_config, limits.nofile, "65536", 0,
	    (int64_t)1 << 20),
	NUM("pids", F_INT, struct runner_config, limits.pids, "8192", 0,
	    (int64_t)1 << 22),
};
static const struct schema runlimits_schema = { 0, runlimits_fields,
	NFIELDS(runlimits_fields), NULL };

static const struct field runner_fields[] = {
	STR("server", struct runner_config, server, 0, V_HTTPURL),
	LIST("servers", struct runner_config, servers, F_NONEMPTY | F_UNIQUE,
	    V_HTTPURL),
	STR("name", struct runner_config, name, F_REQ, V_NAME),
	STR("token_file", struct runner_config, token_file, F_REQ, V_PATH),
	STR("workdir", struct runner_config, workdir, F_REQ, V_PATH),
	STR("kernel_tree", struct runner_config, kernel_tree, 0, V_PATH),
	STR("guest_dir", struct runner_config, guest_dir, 0, V_PATH),
	STR("user", struct runner_config, user, 0, V_NAME),
	STR("ca_file", struct runner_config, ca_file, 0, V_PATH),
	{ .key = "reboot_entry",
	    .type = F_STR,
	    .off = offsetof(struct runner_config, reboot_entry),
	    .def = "Advanced options for Debian GNU/Linux>Debian GNU/Linux, "
	           "with Linux {release}",
	    .vk = V_ANY },
	{ .key = "boot",
	    .type = F_ENUM,
	    .off = offsetof(struct runner_config, boot),
	    .def = "none",
	    .enums = cfg_i_boot_enum },
	LIST("labels", struct runner_config, labels, F_UNIQUE, V_NAME),
	NUM("heartbeat", F_DURATION, struct runner_config, heartbeat_s, "10s",
	    1, 600),
	NUM("max_output", F_SIZE, struct runner_config, max_output, "1M", 4096,
	    (int64_t)64 << 20),
	NUM("keep_builds", F_INT, struct runner_config, keep_builds, "4", 0,
	    64),
	{ .key = "pair_claims",
	    .type = F_BOOL,
	    .off = offsetof(struct runner_config, pair_claims),
	    .def = "true" },
	{ .key = "build",
	    .type = F_BOOL,
	    .off = offsetof(struct runner_config, build),
	    .def = "true" },
	NUM("image_cache_max", F_SIZE, struct runner_config, image_cache_max,
	    "4G", 0, (int64_t)1 << 50),
	{ .key = "host", .type = F_SECTION, .sub = &runhost_schema },
	{ .key = "limits", .type = F_SECTION, .sub = &runlimits_schema },
};
const struct schema cfg_i_runner_schema = { sizeof(struct runner_config),
	runner_fields, NFIELDS(runner_fields), NULL };

/* s without its trailing slashes is t's: they name one server. */
static int
same_server(const char *s, const char *t)
{
	size_t n = strlen(s), m = strlen(t);

	while (n > 0 && s[n - 1] == '/')
		n--;
	while (m > 0 && t[m - 1] == '/')
		m--;
	return n == m && memcmp(s, t, n) == 0;
}

/* The index of the first item of list n that reads v (n->nitems: none);
 * the loaded list leaves out the items that were not valid. */
static size_t
item_of(const struct ctx *c, const struct cfg_node *n, const char *v)
{
	const struct cfg_node *e;
	size_t k;

	for (k = 0; k < n->nitems; k++) {
		e = cfg_i_node(c, n->items[k]);
		if (e != NULL && e->type == CFG_NODE_SCALAR &&
		    strcmp(cfg_i_scalar(e), v) == 0)
			break;
	}
	return k;
}

/*
 * The servers the runner fails over between, in the order it tries
 * them: server first (the one a runner config has always named), then
 * servers.  At least one; none twice.  r->server is the first of them.
 */
void
cfg_i_check_runner(
    struct ctx *c, struct runner_config *r, const struct cfg_node *root)
{
	struct strlist all;
	const struct cfg_node *n;
	char ip[64];
	size_t i, k;

	if (root == NULL) /* an empty file: said as such */
		return;
	n = cfg_i_lookup(c, root, "servers", NULL);
	if (r->server == NULL && r->servers.n == 0) {
		/* A bad value of either is reported as such. */
		if (n == NULL && cfg_i_lookup(c, root, "server", NULL) == NULL)
			cfg_i_nerr(c, root, NULL,
			    "missing required key 'server' (or 'servers', "
			    "a list to fail over between)");
		return;
	}
	all.v = xcalloc(r->servers.n + 2, sizeof(char *));
	all.n = 0;
	if (r->server != NULL)
		all.v[all.n++] = xstrdup(r->server);
	for (i = 0; i < r->servers.n; i++) {
		if (r->server != NULL &&
		    same_server(r->server, r->servers.v[i])) {
			k = item_of(c, n, r->servers.v[i]);
			cfg_i_join_idx(ip, sizeof(ip), "servers", k);
			cfg_i_nerr(c,
			    k < n->nitems ? cfg_i_node(c, n->items[k]) : n, ip,
			    "the same server as 'server'");
		}
		all.v[all.n++] = r->servers.v[i];
		r->servers.v[i] = NULL;
	}
	cfg_i_strlist_free(&r->servers);
	r->servers = all;
	if (r->server == NULL)
		r->server = xstrdup(all.v[0]);
}
