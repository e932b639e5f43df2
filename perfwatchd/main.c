/*
 * perfwatchd: the service, and its composition root.  This file starts
 * the parts and wires them: the store (made and migrated once), the
 * scheduler and its ticker, the verdict worker, the HTTP surface (web/),
 * the watcher and the alert, canary and bisect workers; it reloads and
 * stops them in order.  It lives in a folder of its own because it is
 * the one place that uses both daemon/ and web/, and web/ uses daemon/
 * (docs/ARCHITECTURE.md).
 *
 *	perfwatchd [-v] [-n] [--port-file FILE] -c daemon.yaml
 *
 * Runs in the foreground and logs to stderr (journald adds the rest).
 * One perfwatchd a database: it holds DATABASE.lock (common/pidlock.h),
 * or on PostgreSQL an advisory lock on the database's instance id, and
 * a second one on the same database stops at start, naming the first.
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
#include "common/redact.h"
#include "common/version.h"
#include "common/xalloc.h"
#include "config/config.h"
#include "daemon/alert.h"
#include "daemon/bisect.h"
#include "daemon/canary.h"
#include "daemon/dconf.h"
#include "daemon/sched.h"
#include "daemon/verdict.h"
#include "daemon/watch.h"
#include "daemon/worker.h"
#include "git/git.h"
#include "store/builds.h"
#include "store/store.h"
#include "web/api.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: perfwatchd [-v] [-n] [--port-file FILE] "
	    "-c daemon.yaml\n"
	    "       perfwatchd --routes | --version | --help\n"
	    "  -c FILE          the daemon's configuration (required)\n"
	    "  -n               check the configuration and exit\n"
	    "  -v               verbose (debug) logging\n"
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

/* Seconds between looks at the PostgreSQL lock (store_hold_instance). */
#define LOCK_CHECK_S 2

/* 1 when another daemon holds the database's lock now (logged); a
 * server out of reach is no answer yet (0). */
static int
lock_lost(struct store *s)
{
	char me[128], who[256];

	snprintf(me, sizeof(me), "perfwatchd pid %ld", (long)getpid());
	if (store_hold_instance(s, me, who, sizeof(who)) != 1)
		return 0;
	log_msg(LOG_LVL_ERR,
	    "database: another perfwatchd took its lock while the "
	    "connection was lost (%s holds it): stopping",
	    who);
	return 1;
}

int
main(int argc, char **argv)
{
	const char *cfgpath = NULL, *port_file = NULL;
	struct cfg_errors errs = { NULL, 0 };
	struct dconf *conf = NULL;
	struct timespec lock_check = { LOCK_CHECK_S, 0 };
	int status = 0;
	struct api *api = NULL;
	struct sched *sched = NULL;
	struct verdict_worker *verdict = NULL;
	struct store *s = NULL, *lock_store = NULL;
	struct watch *watch = NULL;
	struct worker *alerts = NULL, *canary = NULL, *bisect = NULL;
	struct bisect_cursor bisect_after = { 0, 0,
		0 }; /* the bisect worker's */
	struct err e = { 0 };
	sigset_t set;
	char *lockpath = NULL;
	int i, verbose = 0, check = 0, sig, lockfd = -1;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else if (strcmp(argv[i], "-n") == 0)
			check = 1;
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			cfgpath = argv[++i];
		else if (strcmp(argv[i], "--port-file") == 0 && i + 1 < argc)
			port_file = argv[++i];
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
	/* One daemon a database: two would both poll, claim and alert.
	 * A SQLite file's lock is a file beside it; a PostgreSQL
	 * database's is an advisory lock that a connection of its own
	 * holds until the daemon stops (store_hold_instance). */
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
		gitm_global_shutdown();
		dconf_unref(conf);
		return 1;
	}
	if (database_is_pg(conf->dc->database)) {
		char me[128], who[256], shown[512];
		int held;

		snprintf(me, sizeof(me), "perfwatchd pid %ld", (long)getpid());
		held = store_hold_instance(s, me, who, sizeof(who));
		if (held != 0) {
			redact_conninfo_into(
			    shown, sizeof(shown), conf->dc->database);
			if (held == 1)
				log_msg(LOG_LVL_ERR,
				    "database %s: another perfwatchd runs on "
				    "it (%s holds its lock)",
				    shown, who);
			else
				log_msg(LOG_LVL_ERR, "database %s: %s", shown,
				    store_errmsg(s));
			store_close(s);
			gitm_global_shutdown();
			dconf_unref(conf);
			return 1;
		}
		lock_store = s;
	} else
		store_close(s);
	s = NULL;
	/*
	 * The scheduler's ticker wakes the server's parked claims
	 * (api_tick).  The verdict worker's first pass gives verdicts to
	 * pairs that finished before a crash or restart; later ones follow
	 * each finish.  Then the server listens, and the watcher and the
	 * workers start.
	 */
	sched = sched_new(conf->dc->lease_s, conf->dc->claim_wait_s);
	api = api_new(conf, sched);
	if (sched_start(sched, conf->dc->database, 500, api_tick, api, &e) ==
	        -1 ||
	    verdict_start(&verdict, sched, conf->dc->database, &e) == -1 ||
	    api_listen(api, &e) == -1 ||
	    watch_start(&watch, conf, sched, &e) == -1) {
		log_msg(LOG_LVL_ERR, "%s", err_msg(&e));
		sched_stop(sched);
		api_stop(api);
		verdict_stop(verdict);
		sched_free(sched);
		store_close(lock_store);
		gitm_global_shutdown();
		dconf_unref(conf);
		return 1;
	}
	if (worker_start(&alerts, "alerts", conf, sched, alert_worker_pass,
	        NULL, &e) == -1)
		log_warnx("alerts: %s (no alerts are sent)", err_msg(&e));
	if (worker_start(&canary, "canary", conf, sched, canary_worker_pass,
	        NULL, &e) == -1)
		log_warnx("canary: %s (no canary runs)", err_msg(&e));
	if (worker_start(&bisect, "bisect", conf, sched, bisect_worker_pass,
	        &bisect_after, &e) == -1)
		log_warnx("bisect: %s (nothing is bisected)", err_msg(&e));
	dconf_unref(conf);
	conf = NULL;
	log_info("listening on port %d (config %s)", api_port(api), cfgpath);
	if (port_file != NULL &&
	    write_port_file(port_file, api_port(api)) == -1)
		log_warnx("%s: cannot write port file: %s", port_file,
		    strerror(errno));

	for (;;) {
		/* The PostgreSQL lock is looked at every few seconds: a
		 * server restart drops it with the connection, and another
		 * daemon may have taken it meanwhile. */
		if ((sig = sigtimedwait(&set, NULL, &lock_check)) < 0) {
			if (lock_store != NULL && lock_lost(lock_store) != 0) {
				status = 1;
				break;
			}
			continue;
		}
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
	gitm_global_shutdown();
	pidlock_release(lockfd);
	store_close(lock_store);
	free(lockpath);
	log_info("stopped");
	return status;
}
