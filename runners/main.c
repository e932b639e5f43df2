/*
 * perfwatch-runner [-v] -c runner.yaml [--once]
 *
 * The agent on a bench host: registers, claims jobs, runs them, uploads
 * results.  SIGTERM or SIGINT stops it: the running benchmark is killed
 * (its job goes back to the queue when the lease expires) and unsent runs
 * stay in WORKDIR/spool for the next start.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/http.h"
#include "common/log.h"
#include "common/version.h"
#include "common/xalloc.h"
#include "config/config.h"
#include "git/git.h"
#include "runners/agent.h"
#include "runners/host.h"

static atomic_int stop_flag;

static void
on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop_flag, 1);
}

/* --once: the tries at reaching the server before giving up (about 7 s
 * of waits between them), and each try's connect and total limits. */
#define ONCE_TRIES 5
#define ONCE_CONNECT_MS 3000
#define ONCE_TOTAL_MS 10000

/*
 * --once: whether one of the servers answers at all (GET /healthz, any
 * HTTP status; an https server verified against ca_file, NULL: the
 * system's CAs), each tried in turn within ONCE_TRIES rounds with a
 * backoff between them; else 1 after saying so.  The agent itself
 * waits out servers that are away for as long as it takes, which a
 * one-shot run (a cron job, a CI step) must not.
 */
static int
server_reachable(const struct strlist *servers, const char *ca_file)
{
	struct http_retry retry = { ONCE_TRIES, 500, 4000, &stop_flag };
	struct http_reply rep = HTTP_REPLY_INIT;
	struct http *h = http_new();
	char *url;
	size_t i, n;
	int rc = ERR_AGAIN, t;

	http_set_timeouts(h, ONCE_CONNECT_MS, ONCE_TOTAL_MS);
	if (ca_file != NULL)
		http_set_cainfo(h, ca_file);
	for (t = 0; t < ONCE_TRIES && rc != 0; t++) {
		if (t > 0)
			http_sleep_ms(http_backoff_ms(&retry, t), &stop_flag);
		if (atomic_load(&stop_flag))
			break;
		for (i = 0; i < servers->n && rc != 0; i++) {
			n = strlen(servers->v[i]);
			while (n > 0 && servers->v[i][n - 1] == '/')
				n--;
			url = xasprintf("%.*s/healthz", (int)n, servers->v[i]);
			rc = http_request(&rep, h, "GET", url, NULL, 0);
			http_reply_release(&rep);
			free(url);
		}
	}
	if (rc != 0) {
		fprintf(stderr, "perfwatch-runner: server%s",
		    servers->n > 1 ? "s" : "");
		for (i = 0; i < servers->n; i++)
			fprintf(
			    stderr, "%s %s", i > 0 ? "," : "", servers->v[i]);
		fprintf(stderr, " unreachable after %d tries: %s\n", ONCE_TRIES,
		    http_errmsg(h));
	}
	http_free(h);
	return rc != 0;
}

static int
usage(FILE *f)
{
	fprintf(f,
	    "usage: perfwatch-runner [-v] -c runner.yaml [--once]\n"
	    "       perfwatch-runner host check|tune|reset ... (host -h)\n"
	    "       perfwatch-runner --version\n"
	    "  -c FILE   runner configuration (required)\n"
	    "  -v        verbose (debug) logging\n"
	    "  --once    claim and run at most one job, then exit; an\n"
	    "            unreachable server is given up after a few tries\n"
	    "            (exit 0: no job, or the job succeeded)\n");
	return f == stderr ? 2 : 0;
}

int
main(int argc, char **argv)
{
	struct runner_config *cfg = NULL;
	struct cfg_errors errs = { 0 };
	struct sigaction sa;
	struct err e = { 0 };
	const char *file = NULL;
	char *token = NULL;
	int verbose = 0, once = 0, i, rc;
	size_t k;

	if (argc > 1 && strcmp(argv[1], "host") == 0)
		return host_main(argc - 1, argv + 1);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else if (strcmp(argv[i], "--once") == 0)
			once = 1;
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			file = argv[++i];
		else if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			return usage(stdout);
		else if (strcmp(argv[i], "--version") == 0) {
			printf("perfwatch-runner %s\n", pw_version());
			return 0;
		} else {
			fprintf(stderr,
			    "perfwatch-runner: unknown argument "
			    "'%s'\n",
			    argv[i]);
			return usage(stderr);
		}
	}
	if (file == NULL)
		return usage(stderr);
	log_init("perfwatch-runner", verbose);
	if (config_load_runner(&cfg, file, &errs) != 0) {
		for (k = 0; k < errs.n; k++)
			fprintf(stderr, "%s\n", errs.msg[k]);
		cfg_errors_free(&errs);
		return 2;
	}
	cfg_errors_free(&errs);
	if (http_token_load_strong(&token, cfg->token_file, &e) != 0) {
		fprintf(stderr, "%s:%u:%u: token_file: %s\n", file,
		    cfg->token_at.line, cfg->token_at.col, err_msg(&e));
		runner_config_free(cfg);
		return 2;
	}
	if (http_global_init() != 0)
		return 1;
	/* Jobs on a commit check it out with libgit2 (runners/checkout). */
	if (gitm_global_init(0) != 0) {
		fprintf(
		    stderr, "perfwatch-runner: cannot initialise libgit2\n");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (once && server_reachable(&cfg->servers, cfg->ca_file) != 0) {
		free(token);
		runner_config_free(cfg);
		http_global_cleanup();
		return 1;
	}
	rc = agent_run(cfg, token, once, &stop_flag);

	if (atomic_load(&stop_flag))
		log_info("stopped");
	free(token);
	runner_config_free(cfg);
	gitm_global_shutdown();
	http_global_cleanup();
	return rc;
}
