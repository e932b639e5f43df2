/*
 * perfwatchd: the service, and its composition root.  This file starts
 * the parts and wires them: the store (made and migrated once), the
 * scheduler and its ticker, the verdict worker, the HTTP surface (web/),
 * the watcher and the alert, canary and bisect workers; it reloads and
 * stops them in order.  It lives in a folder of its own because it is
 * the one place that uses both daemon/ and web/, and web/ uses daemon/
 * (docs/ARCHITECTURE.md).
 *
 *	perfwatchd [-v] [-n] [--role all|web] [--port-file FILE] -c daemon.yaml
 *
 * Runs in the foreground and logs to stderr (journald adds the rest).
 * On SQLite one perfwatchd a database: it holds DATABASE.lock
 * (common/pidlock.h), and a second one on the same file stops at start,
 * naming the first.  On PostgreSQL any number share a database: each
 * serves HTTP, and each background worker runs on the one daemon that
 * holds its lease (daemon/leases.h), taken over by another within
 * scheduler.worker_lease and a second when its holder dies.  A daemon
 * of role web (--role web; PostgreSQL only) serves the pages and the
 * GET routes, answers 503 to the others and runs no worker.
 * SIGTERM/SIGINT: stop accepting, finish the requests in flight, close
 * the database, exit 0.  SIGHUP: load and check the configuration again;
 * on any error log every error and keep the running one, else swap it in
 * (an atomically replaced, reference-counted struct dconf: requests that
 * started under the old configuration finish with it).  Only the listen
 * address, database and http: limits need a restart.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/database.h"
#include "common/err.h"
#include "common/log.h"
#include "common/pidlock.h"
#include "common/version.h"
#include "common/xalloc.h"
#include "config/config.h"
#include "daemon/alert.h"
#include "daemon/bisect.h"
#include "daemon/canary.h"
#include "daemon/dconf.h"
#include "daemon/leases.h"
#include "daemon/sched.h"
#include "daemon/verdict.h"
#include "daemon/watch.h"
#include "daemon/worker.h"
#include "git/git.h"
#include "store/builds.h"
#include "store/leases.h"
#include "store/store.h"
#include "web/api.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: perfwatchd [-v] [-n] [--role all|web] [--port-file FILE] "
	    "-c daemon.yaml\n"
	    "       perfwatchd --routes | --version | --help\n"
	    "  -c FILE          the daemon's configuration (required)\n"
	    "  -n               check the configuration and exit\n"
	    "  -v               verbose (debug) logging\n"
	    "  --role all       serve HTTP and run the background workers\n"
	    "                   this daemon holds the leases of (default)\n"
	    "  --role web       serve pages and GET routes only (503 to the\n"
	    "                   others), run no worker; PostgreSQL only\n"
	    "  --port-file FILE write the port listened on to FILE\n"
	    "  --routes         print the HTTP routes and exit\n");
	exit(f == stdout ? 0 : 2);
}

/* --routes: every route of the one table the server dispatches on, in
 * its order, one per line, "METHOD PATTERN AUTH TABLE" (docs/API.md;
 * the authorisation sweep t0305 walks this list). */
static void
print_routes(void)
{
	const char *m, *p, *a, *t;
	size_t i;

	for (i = 0; api_route_at(i, &m, &p, &a, &t) == 0; i++)
		printf("%s %s %s %s\n", m, p, a, t);
}

static void
print_errors(const struct cfg_errors *errs)
{
	size_t i;

	for (i = 0; i < errs->n; i++)
		log_msg(LOG_LVL_ERR, "%s", errs->msg[i]);
}

/* Writes the port atomically (temp file + rename), so a reader never
 * sees a partial number. */
static int
write_port_file(const char *path, int port)
{
	char tmp[4096], num[32];
	int fd, n;

	n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -1;
	n = snprintf(num, sizeof(num), "%d\n", port);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		return -1;
	if (write(fd, num, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	close(fd);
	return rename(tmp, path);
}

/* This daemon's name as a lease holder: its pid and host. */
static void
holder_name(char *out, size_t size)
{
	char host[64]; /* HOST_NAME_MAX + 1 */

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	snprintf(out, size, "perfwatchd pid %ld on %s", (long)getpid(), host);
}

int
main(int argc, char **argv)
{
	const char *cfgpath = NULL, *port_file = NULL, *role = "all";
	struct cfg_errors errs = { NULL, 0 };
	struct dconf *conf = NULL;
	struct api *api = NULL;
	struct sched *sched = NULL;
	struct verdict_worker *verdict = NULL;
	struct store *s = NULL;
	struct watch *watch = NULL;
	struct leases *leases = NULL;
	struct worker *alerts = NULL, *canary = NULL, *bisect = NULL;
	struct bisect_cursor bisect_after = { 0, 0,
		0 }; /* the bisect worker's */
	struct err e = { 0 };
	sigset_t set;
	char *lockpath = NULL, me[STORE_LEASE_HOLDER_MAX];
	int i, verbose = 0, check = 0, sig, lockfd = -1, web = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else if (strcmp(argv[i], "-n") == 0)
			check = 1;
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			cfgpath = argv[++i];
		else if (strcmp(argv[i], "--port-file") == 0 && i + 1 < argc)
			port_file = argv[++i];
		else if (strcmp(argv[i], "--role") == 0 && i + 1 < argc)
			role = argv[++i];
		else if (strcmp(argv[i], "--routes") == 0) {
			print_routes();
			return 0;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("perfwatchd %s\n", pw_version());
			return 0;
		} else if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			usage(stdout);
		else
			usage(stderr);
	}
	if (cfgpath == NULL)
		usage(stderr);
	if (strcmp(role, "web") == 0)
		web = 1;
	else if (strcmp(role, "all") != 0) {
		fprintf(stderr, "perfwatchd: --role %s: expected all or web\n",
		    role);
		return 2;
	}

	/* Library set-up before any thread starts. */
	signal(SIGPIPE, SIG_IGN);
	json_object_seed(0);
	/*
	 * glibc gives freed memory at the top of each thread's arena back
	 * with madvise() as soon as 128 KiB are free; under load every
	 * request thread then flushes TLBs on all CPUs many times a
	 * second.  Keep up to 8 MiB per arena instead.  Setting it ends
	 * glibc's moving mmap threshold, which stays at 128 KiB: each reply
	 * past that (a 90 KB history page's buffer doubles to 128 KiB) was
	 * an mmap, page faults and an munmap, a third of that page's time.
	 * Up to 4 MiB come from the arenas.
	 */
	mallopt(M_TRIM_THRESHOLD, 8 * 1024 * 1024);
	mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
	log_init("perfwatchd", verbose);

	if (dconf_load(&conf, cfgpath, &errs) == -1) {
		if (check)
			for (i = 0; (size_t)i < errs.n; i++)
				fprintf(stderr, "%s\n", errs.msg[i]);
		else
			print_errors(&errs);
		cfg_errors_free(&errs);
		return 1;
	}
	if (check) {
		printf("configuration OK\n");
		dconf_unref(conf);
		return 0;
	}
	store_builds_share(conf->dc->builds.shared);

	/* Signals are taken synchronously by this thread; the server
	 * threads inherit the blocked mask and never see them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	/* A silent server stalls a poll (and a shutdown) at most a minute. */
	if (gitm_global_init(60000) == -1) {
		log_msg(LOG_LVL_ERR, "cannot initialise libgit2");
		dconf_unref(conf);
		return 1;
	}
	if (web && !database_is_pg(conf->dc->database)) {
		log_msg(LOG_LVL_ERR,
		    "--role web needs a PostgreSQL database: on SQLite (%s) "
		    "the one perfwatchd runs the workers",
		    conf->dc->database);
		gitm_global_shutdown();
		dconf_unref(conf);
		return 1;
	}
	/* One daemon a SQLite file: two would both poll, claim and alert.
	 * Its lock is a file beside it.  Several daemons share a
	 * PostgreSQL database, and the leases keep each worker on one. */
	lockpath = database_is_pg(conf->dc->database)
	    ? NULL
	    : xasprintf("%s.lock", conf->dc->database);
	if (lockpath != NULL && (lockfd = pidlock_take(lockpath, &e)) < 0) {
		log_msg(LOG_LVL_ERR, "database %s: %s%s", conf->dc->database,
		    err_msg(&e),
		    lockfd == ERR_EXISTS ? ": another perfwatchd runs on it"
		                         : "");
		free(lockpath);
		gitm_global_shutdown();
		dconf_unref(conf);
		return 1;
	}
	/* The database is made and migrated once, before any thread opens
	 * it. */
	if (store_open(&s, conf->dc->database, &e) == -1) {
		log_msg(LOG_LVL_ERR, "%s", err_msg(&e));
		pidlock_release(lockfd);
		free(lockpath);
		gitm_global_shutdown();
		dconf_unref(conf);
		return 1;
	}
	store_close(s);
	s = NULL;
	/*
	 * The leases' keeper takes the workers' leases first; the workers
	 * run while it holds theirs.  The scheduler's ticker wakes the
	 * server's parked claims (api_tick).  The verdict worker's first
	 * pass gives verdicts to pairs that finished before a crash or
	 * restart; later ones follow each finish.  Then the server
	 * listens, and the watcher and the workers start.  A daemon of
	 * role web starts the ticker and the server only.
	 */
	sched = sched_new(conf->dc->lease_s, conf->dc->claim_wait_s);
	holder_name(me, sizeof(me));
	if (web)
		leases = leases_none();
	else if (leases_start(&leases, conf->dc->database, me,
	             conf->dc->worker_lease_s, sched, &e) == -1) {
		log_msg(LOG_LVL_ERR, "%s", err_msg(&e));
		sched_free(sched);
		pidlock_release(lockfd);
		free(lockpath);
		gitm_global_shutdown();
		dconf_unref(conf);
		return 1;
	}
	api = api_new(conf, sched);
	api_set_role(api, web, leases);
	if (sched_start(sched, conf->dc->database, 500, api_tick, api, leases,
	        &e) == -1 ||
	    (!web &&
	        verdict_start(
	            &verdict, sched, conf->dc->database, leases, &e) == -1) ||
	    api_listen(api, &e) == -1 ||
	    (!web && watch_start(&watch, conf, sched, leases, &e) == -1)) {
		log_msg(LOG_LVL_ERR, "%s", err_msg(&e));
		sched_stop(sched);
		api_stop(api);
		verdict_stop(verdict);
		sched_free(sched);
		leases_stop(leases);
		pidlock_release(lockfd);
		free(lockpath);
		gitm_global_shutdown();
		dconf_unref(conf);
		return 1;
	}
	if (!web &&
	    worker_start(&alerts, "alerts", conf, sched, leases, LEASE_ALERTS,
	        alert_worker_pass, NULL, &e) == -1)
		log_warnx("alerts: %s (no alerts are sent)", err_msg(&e));
	if (!web &&
	    worker_start(&canary, "canary", conf, sched, leases, LEASE_CANARY,
	        canary_worker_pass, NULL, &e) == -1)
		log_warnx("canary: %s (no canary runs)", err_msg(&e));
	if (!web &&
	    worker_start(&bisect, "bisect", conf, sched, leases, LEASE_BISECT,
	        bisect_worker_pass, &bisect_after, &e) == -1)
		log_warnx("bisect: %s (nothing is bisected)", err_msg(&e));
	log_info("listening on port %d (config %s, role %s, %s)", api_port(api),
	    cfgpath, web ? "web" : "all", me);
	dconf_unref(conf);
	conf = NULL;
	if (port_file != NULL &&
	    write_port_file(port_file, api_port(api)) == -1)
		log_warnx("%s: cannot write port file: %s", port_file,
		    strerror(errno));

	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			struct dconf *nc = NULL;

			log_info("SIGHUP: reloading %s", cfgpath);
			if (dconf_load(&nc, cfgpath, &errs) == -1) {
				print_errors(&errs);
				log_warnx("reload failed with %zu error(s); "
				          "keeping the running configuration",
				    errs.n);
				cfg_errors_free(&errs);
				continue;
			}
			store_builds_share(nc->dc->builds.shared);
			api_reload(api, nc);
			sched_set_params(
			    sched, nc->dc->lease_s, nc->dc->claim_wait_s);
			leases_set_time(leases, nc->dc->worker_lease_s);
			watch_reload(watch, nc);
			worker_reload(alerts, nc);
			worker_reload(canary, nc);
			worker_reload(bisect, nc);
			dconf_unref(nc);
			log_info("configuration reloaded");
			continue;
		}
		log_info(
		    "%s: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		break;
	}
	worker_stop(bisect);
	worker_stop(canary);
	worker_stop(alerts);
	watch_stop(watch);
	/* No tick after this: api_stop answers the parked claims itself. */
	sched_stop(sched);
	api_stop(api);
	verdict_stop(verdict);
	sched_free(sched);
	/* The workers have stopped: another daemon may take them now. */
	leases_stop(leases);
	gitm_global_shutdown();
	pidlock_release(lockfd);
	free(lockpath);
	log_info("stopped");
	return 0;
}
