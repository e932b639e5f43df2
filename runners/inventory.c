#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "common/caps.h"
#include "common/xalloc.h"
#include "runners/inventory.h"

#define MAX_IDS 4096

static FILE *
open_under(const char *root, const char *path)
{
	char *p = xasprintf("%s%s", root, path);
	FILE *f = fopen(p, "r");

	free(p);
	return f;
}

/* Splits "key<tabs>: value" in place; 0 or -1. */
static int
split_kv(char *line, char **key, char **val)
{
	char *colon = strchr(line, ':'), *e;

	if (colon == NULL)
		return -1;
	*colon = '\0';
	for (e = colon; e > line && isspace((unsigned char)e[-1]); e--)
		e[-1] = '\0';
	*key = line;
	*val = colon + 1;
	while (isspace((unsigned char)**val))
		(*val)++;
	for (e = *val + strlen(*val); e > *val && isspace((unsigned char)e[-1]);
	     e--)
		e[-1] = '\0';
	return 0;
}

static int
add_unique(long *ids, size_t *n, long id)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (ids[i] == id)
			return 0;
	if (*n == MAX_IDS)
		return -1;
	ids[(*n)++] = id;
	return 0;
}

static void
cpuinfo(json_t *inv, const char *root)
{
	char line[CAP_LINE], *k, *v, *model = NULL, *vendor = NULL;
	long *sockets = xcalloc(MAX_IDS, sizeof(long));
	long *cores = xcalloc(MAX_IDS, sizeof(long));
	long phys = -1;
	size_t nsock = 0, ncore = 0;
	long threads = 0;
	FILE *f;

	if ((f = open_under(root, "/proc/cpuinfo")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (split_kv(line, &k, &v) == -1)
				continue;
			if (strcmp(k, "processor") == 0) {
				threads++;
				phys = -1;
			} else if (strcmp(k, "model name") == 0 && !model)
				model = xstrdup(v);
			else if (strcmp(k, "vendor_id") == 0 && !vendor)
				vendor = xstrdup(v);
			else if (strcmp(k, "physical id") == 0) {
				phys = strtol(v, NULL, 10);
				add_unique(sockets, &nsock, phys);
			} else if (strcmp(k, "core id") == 0 && phys >= 0) {
				/* Core ids repeat across sockets. */
				add_unique(cores, &ncore,
				    phys * 65536 + strtol(v, NULL, 10));
			}
		}
		fclose(f);
	}
	json_object_set_new(
	    inv, "cpu_model", model ? json_string(model) : json_null());
	json_object_set_new(
	    inv, "cpu_vendor", vendor ? json_string(vendor) : json_null());
	json_object_set_new(inv, "sockets",
	    nsock ? json_integer((json_int_t)nsock) : json_null());
	json_object_set_new(inv, "cores",
	    ncore ? json_integer((json_int_t)ncore) : json_null());
	json_object_set_new(
	    inv, "threads", threads ? json_integer(threads) : json_null());
	free(model);
	free(vendor);
	free(sockets);
	free(cores);
}

static void
numa(json_t *inv, const char *root)
{
	char *p = xasprintf("%s/sys/devices/system/node", root);
	struct dirent *d;
	DIR *dp;
	long n = 0;

	if ((dp = opendir(p)) != NULL) {
		while ((d = readdir(dp)) != NULL)
			if (strncmp(d->d_name, "node", 4) == 0 &&
			    isdigit((unsigned char)d->d_name[4]))
				n++;
		closedir(dp);
	}
	free(p);
	json_object_set_new(
	    inv, "numa_nodes", n ? json_integer(n) : json_null());
}

static void
meminfo(json_t *inv, const char *root)
{
	char line[CAP_LINE], *k, *v, *end;
	long long kb = -1;
	FILE *f;

	if ((f = open_under(root, "/proc/meminfo")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (split_kv(line, &k, &v) == -1 ||
			    strcmp(k, "MemTotal") != 0)
				continue;
			kb = strtoll(v, &end, 10);
			if (end == v || strncmp(end, " kB", 3) != 0)
				kb = -1;
			break;
		}
		fclose(f);
	}
	json_object_set_new(inv, "memory_bytes",
	    kb > 0 ? json_integer((json_int_t)kb * 1024) : json_null());
}

static void
kernel(json_t *inv, const char *root)
{
	char line[256];
	struct utsname u;
	FILE *f;
	size_t n;

	if ((f = open_under(root, "/proc/sys/kernel/osrelease")) != NULL) {
		if (fgets(line, sizeof(line), f) != NULL) {
			n = strcspn(line, "\r\n");
			line[n] = '\0';
			if (n > 0) {
				json_object_set_new(
				    inv, "kernel", json_string(line));
				fclose(f);
				return;
			}
		}
		fclose(f);
	}
	if (root[0] == '\0' && uname(&u) == 0)
		json_object_set_new(inv, "kernel", json_string(u.release));
	else
		json_object_set_new(inv, "kernel", json_null());
}

static void
cgroup(json_t *inv, const char *root)
{
	char line[CAP_LINE], dev[256], mnt[1024], type[64], opts[1024];
	int v2_main = 0, v2_any = 0, v1_mem = 0;
	const char *res = "none";
	FILE *f;

	if ((f = open_under(root, "/proc/mounts")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, "%255s %1023s %63s %1023s", dev, mnt,
			        type, opts) != 4)
				continue;
			if (strcmp(type, "cgroup2") == 0) {
				v2_any = 1;
				if (strcmp(mnt, "/sys/fs/cgroup") == 0)
					v2_main = 1;
			} else if (strcmp(type, "cgroup") == 0) {
				char *o, *save = NULL;

				for (o = strtok_r(opts, ",", &save); o;
				     o = strtok_r(NULL, ",", &save))
					if (strcmp(o, "memory") == 0)
						v1_mem = 1;
			}
		}
		fclose(f);
	}
	/* The memory controller decides: memcg is what we measure. */
	if (v2_main)
		res = "v2";
	else if (v1_mem)
		res = "v1";
	else if (v2_any)
		res = "v2";
	json_object_set_new(inv, "cgroup", json_string(res));
}

json_t *
inventory_collect(const char *root)
{
	json_t *inv = json_object();

	cpuinfo(inv, root);
	numa(inv, root);
	meminfo(inv, root);
	kernel(inv, root);
	cgroup(inv, root);
	return inv;
}
