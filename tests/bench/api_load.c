/*
 * api_load: a load generator for perfwatchd's runner API, over raw
 * HTTP/1.1 keep-alive sockets (libcurl belongs to common/http.c only).
 *
 *	api_load PORT TOKEN_DIR CLIENTS TOTAL_RUNS METRICS
 *
 * TOKEN_DIR holds admin.token and tokens/rN.token for r1..r(CLIENTS+1).
 * CLIENTS runner threads (r1..) each register, claim a job, upload runs
 * with METRICS metrics each until the job's max_runs, finish it and claim
 * the next, until TOTAL_RUNS uploads are done; a runner that uploaded
 * nothing fails the benchmark (the work must spread).  One more runner
 * (r(CLIENTS+1)) probes claim and heartbeat latency meanwhile.  Needs a
 * job named "bench" in the daemon with a large max_runs.  Prints
 * uploads/s and latency percentiles.
 *
 *	api_load --fleet PORT TOKEN_DIR RUNNERS SECONDS METRICS
 *
 * RUNNERS simulated runners (r1..) in this one process, for SECONDS:
 * each registers, heartbeats every 5 s, claims, uploads the runs its job
 * wants and finishes it.  Prints uploads/s and the claim p99.  With
 * FLEET_RUN_MS=N in the environment each run takes N ms (a sleep before
 * its upload, broken by the heartbeats due in it), as a real one does,
 * instead of none: a paced fleet, whose writes go on beside another
 * benchmark (make bench-web LIVE=1).  Runner n's first run is cut to
 * n % 100 hundredths, so that the fleet does not upload in step.
 *
 *	api_load --fleet --crash ACKDIR PORT TOKEN_DIR RUNNERS SECONDS METRICS
 *
 * The same, while the daemon is killed and restarted on PORT (make
 * check-crash): a request that finds the daemon gone is sent again on a
 * new connection once it is back, as a runner's spool would.  Every
 * upload the daemon acknowledged (201, or 200 {"stored": false} for a
 * retry of one it had stored before it died) is appended to
 * ACKDIR/rN.acks as "JOB INDEX", and every job whose finish was
 * answered 200 to ACKDIR/rN.done as "JOB".  Each claim has an id of its
 * own ("claim_id": "rN-K"), sent again with every try of it.
 * ACKDIR/rN.claims has each claim answered, "JOB ATTEMPT", and "cut"
 * for a claim whose answer was lost with its daemon (the daemon may have
 * leased a job for it, which it hands back to the claim sent again with
 * that id, as the same attempt); ACKDIR/rN.lost each lease
 * the runner lost although it lived: "JOB upload" (an upload answered
 * 409), "JOB finish" (a finish sent once answered 409) or "JOB
 * heartbeat" (a heartbeat answered cancel); ACKDIR/rN.left the job it
 * held when the load ended.  The load ends after SECONDS, or
 * once ACKDIR/stop exists.
 *
 * PORT may list several daemons of one database, "P1,P2,...": runner n
 * talks to the (n % count)th first, and when a request finds its daemon
 * gone it fails over to the next, as a runner with a `servers:` list
 * does; a runner away from its first daemon goes back to it between
 * jobs once it listens again, so that the fleet stays spread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn {
	int fd;
	int at; /* the index in ports[] of the daemon talked to */
	char tok[256];
	char rbuf[1 << 16];
	size_t rlen;
};

#define MAX_PORTS 8
static int ports[MAX_PORTS], nports;
static const char *tokdir;
static int nclients, nmetrics;
static long total_runs;
static long done_runs;        /* __atomic */
static int stop_probe;        /* __atomic */
static const char *crash_dir; /* --crash: survive a killed daemon */

struct lat {
	double *v;
	size_t n, cap;
};

static void
lat_add(struct lat *l, double ms)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (l->v == NULL)
			abort();
	}
	l->v[l->n++] = ms;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
pct(struct lat *l, double p)
{
	size_t i;

	if (l->n == 0)
		return 0;
	qsort(l->v, l->n, sizeof(*l->v), cmp_d);
	i = (size_t)(p / 100.0 * (double)(l->n - 1) + 0.5);
	return l->v[i];
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
read_token(char *out, size_t len, const char *name)
{
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", tokdir, name);
	if ((f = fopen(path, "r")) == NULL) {
		perror(path);
		exit(1);
	}
	n = fread(out, 1, len - 1, f);
	fclose(f);
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
}

static void
conn_open(struct conn *c)
{
	struct sockaddr_in sa;
	int one = 1, tries = 0;

	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)ports[c->at]);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	while (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		struct timespec pause = { 0, 50 * 1000 * 1000 };

		if (crash_dir == NULL) {
			perror("connect");
			exit(1);
		}
		/* The daemon is being restarted: the next one, or this one
		 * again after a pause. */
		close(c->fd);
		c->at = (c->at + 1) % nports;
		sa.sin_port = htons((uint16_t)ports[c->at]);
		if (++tries % nports == 0)
			nanosleep(&pause, NULL);
		c->fd = socket(AF_INET, SOCK_STREAM, 0);
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->rlen = 0;
}

/* --crash: a connection to ports[at] if it listens now; 0 or -1. */
static int
conn_try(struct conn *c, int at)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)ports[at]);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	close(c->fd);
	c->fd = fd;
	c->at = at;
	c->rlen = 0;
	return 0;
}

/* 0, or -1 in --crash mode when the daemon went away. */
static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			if (crash_dir != NULL)
				return -1;
			perror("write");
			exit(1);
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One request; returns the status, the body in c->rbuf (NUL-ended);
 * -1 in --crash mode when the connection broke. */
static int
request(struct conn *c, const char *path, const char *body)
{
	char head[1024], *end, *cl;
	size_t blen = strlen(body), hl, need;
	ssize_t r;
	int hn, status;

	hn = snprintf(head, sizeof(head),
	    "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Authorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
	    path, c->tok, blen);
	c->rlen = 0;
	if (write_all(c->fd, head, (size_t)hn) == -1 ||
	    write_all(c->fd, body, blen) == -1)
		return -1;
	for (;;) {
		r = read(
		    c->fd, c->rbuf + c->rlen, sizeof(c->rbuf) - 1 - c->rlen);
		if (r <= 0 && crash_dir != NULL)
			return -1; /* the daemon went away */
		if (r <= 0) {
			fprintf(stderr, "read: connection closed\n");
			exit(1);
		}
		c->rlen += (size_t)r;
		c->rbuf[c->rlen] = '\0';
		if ((end = strstr(c->rbuf, "\r\n\r\n")) == NULL)
			continue;
		hl = (size_t)(end - c->rbuf) + 4;
		cl = strstr(c->rbuf, "Content-Length: ");
		if (cl == NULL)
			cl = strstr(c->rbuf, "content-length: ");
		need = hl + (cl && cl < end ? strtoul(cl + 16, NULL, 10) : 0);
		if (c->rlen >= need)
			break;
	}
	status = (int)strtol(c->rbuf + 9, NULL, 10);
	memmove(c->rbuf, c->rbuf + hl, c->rlen - hl + 1);
	return status;
}

static long
json_int(const char *body, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	if ((p = strstr(body, k)) == NULL)
		return -1;
	return strtol(p + strlen(k), NULL, 10);
}

/* One request that must answer want, else the benchmark stops. */
static void
expect(struct conn *c, const char *path, const char *body, int want,
    const char *what)
{
	int st = request(c, path, body);

	if (st != want) {
		fprintf(stderr, "%s %d: %s\n", what, st, c->rbuf);
		exit(1);
	}
}

static void
login(struct conn *c, int n)
{
	char name[64], body[256];

	snprintf(name, sizeof(name), "tokens/r%d.token", n);
	read_token(c->tok, sizeof(c->tok), name);
	conn_open(c);
	snprintf(body, sizeof(body), "{\"name\":\"r%d\"}", n);
	if (request(c, "/api/v1/runners/register", body) != 200) {
		fprintf(stderr, "register: %s\n", c->rbuf);
		exit(1);
	}
}

struct client {
	int n;
	struct lat up;
	pthread_t t;
};

static void *
client(void *arg)
{
	struct client *cl = arg;
	struct conn *c = calloc(1, sizeof(*c));
	char *body = malloc(64 * 1024), path[128];
	long job, max, i;
	int m, st;
	size_t off;
	double t0;

	login(c, cl->n);
	for (;;) {
		if (__atomic_load_n(&done_runs, __ATOMIC_RELAXED) >= total_runs)
			break;
		st = request(c, "/api/v1/jobs/claim", "{\"wait_s\":1}");
		if (st == 204)
			continue;
		if (st != 200) {
			fprintf(stderr, "claim %d: %s\n", st, c->rbuf);
			exit(1);
		}
		job = json_int(c->rbuf, "id");
		max = json_int(c->rbuf, "max_runs");
		snprintf(path, sizeof(path), "/api/v1/jobs/%ld/runs", job);
		for (i = 0; i < max; i++) {
			if (__atomic_add_fetch(
			        &done_runs, 1, __ATOMIC_RELAXED) > total_runs)
				break;
			off = (size_t)snprintf(body, 64 * 1024,
			    "{\"index\":%ld,\"status\":\"ok\","
			    "\"duration_s\":1.25,\"raw\":\"bench output "
			    "line\\n\",\"metrics\":[",
			    i);
			for (m = 0; m < nmetrics; m++)
				off += (size_t)snprintf(body + off,
				    64 * 1024 - off,
				    "%s{\"name\":\"metric_%02d\",\"value\":"
				    "%d.%03ld,\"unit\":\"ops/s\",\"better\":"
				    "\"higher\"}",
				    m ? "," : "", m, 1000 + m, i % 1000);
			snprintf(body + off, 64 * 1024 - off, "]}");
			t0 = now_ms();
			st = request(c, path, body);
			lat_add(&cl->up, now_ms() - t0);
			if (st != 201) {
				fprintf(stderr, "upload %d: %s\n", st, c->rbuf);
				exit(1);
			}
		}
		snprintf(path, sizeof(path), "/api/v1/jobs/%ld/finish", job);
		expect(c, path, "{\"status\":\"success\"}", 200, "finish");
	}
	close(c->fd);
	free(c);
	free(body);
	return NULL;
}

struct probe {
	struct lat claim, hb;
	pthread_t t;
};

static void *
prober(void *arg)
{
	struct probe *p = arg;
	struct conn *c = calloc(1, sizeof(*c));
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	char body[128];
	long job = 0;
	double t0;
	int st;

	login(c, nclients + 1);
	while (!__atomic_load_n(&stop_probe, __ATOMIC_RELAXED)) {
		t0 = now_ms();
		st = request(c, "/api/v1/jobs/claim", "{\"wait_s\":0}");
		lat_add(&p->claim, now_ms() - t0);
		if (st == 200)
			job = json_int(c->rbuf, "id");
		snprintf(body, sizeof(body),
		    "{\"job_id\":%ld,\"progress\":\"probe\"}", job);
		t0 = now_ms();
		st = request(c, "/api/v1/runners/heartbeat", body);
		lat_add(&p->hb, now_ms() - t0);
		if (st != 200) {
			fprintf(stderr, "heartbeat %d: %s\n", st, c->rbuf);
			exit(1);
		}
		nanosleep(&pause, NULL);
	}
	close(c->fd);
	free(c);
	return NULL;
}

/*
 * --fleet: many simulated runners against one daemon for a fixed time.
 * Each registers, heartbeats every 5 s, claims (long-poll 1 s), uploads
 * the runs its job wants and finishes it, again and again.
 */
static int fleet_secs;
static double fleet_end;
static long fleet_run_ms; /* FLEET_RUN_MS: how long a run takes */

struct frunner {
	int n;
	struct lat claim;
	size_t uploads, claims, empty;
	pthread_t t;
};

static void
fleet_heartbeat(struct conn *c, double *last, long job)
{
	char body[128];

	if (now_ms() - *last < 5000)
		return;
	snprintf(body, sizeof(body), "{\"job_id\":%ld}", job);
	expect(c, "/api/v1/runners/heartbeat", body, 200, "heartbeat");
	*last = now_ms();
}

/* A run of ms: a sleep broken by the heartbeats that fall due in it, as
 * a real runner's agent heartbeats every few seconds however long its
 * run (so that heartbeats and uploads are separate writes). */
static void
fleet_run(struct conn *c, double *hb, long job, double ms)
{
	double end = now_ms() + ms, t, wake;

	while ((t = now_ms()) < end && t < fleet_end) {
		struct timespec ts;

		wake = *hb + 5000 < end ? *hb + 5000 : end;
		if (wake > t) {
			ts.tv_sec = (time_t)((wake - t) / 1000);
			ts.tv_nsec =
			    (long)(((wake - t) - 1000.0 * (double)ts.tv_sec) *
			        1e6);
			nanosleep(&ts, NULL);
		}
		fleet_heartbeat(c, hb, job);
	}
}

/* --crash: ACKDIR/stop, which ends the load before SECONDS are up. */
static char stop_path[1024];

/* The load's time is up, or (--crash) it was told to stop. */
static int
fleet_over(void)
{
	return now_ms() >= fleet_end ||
	    (stop_path[0] != '\0' && access(stop_path, F_OK) == 0);
}

/*
 * --crash: request() again on a new connection (re-registered), to the
 * next daemon of PORT's list, until one answers, or the time is up (-1).
 */
static int
crash_request_cut(
    struct conn *c, int n, const char *path, const char *body, int *cut)
{
	char reg[64];
	int st;

	while ((st = request(c, path, body)) == -1) {
		/* Sent, maybe done, its answer lost with the daemon. */
		if (cut != NULL)
			*cut = 1;
		if (fleet_over())
			return -1;
		close(c->fd);
		c->at = (c->at + 1) % nports;
		conn_open(c);
		snprintf(reg, sizeof(reg), "{\"name\":\"r%d\"}", n);
		if (request(c, "/api/v1/runners/register", reg) != 200)
			continue; /* gone again, or not ready: retry */
	}
	return st;
}

static int
crash_request(struct conn *c, int n, const char *path, const char *body)
{
	return crash_request_cut(c, n, path, body, NULL);
}

/* ACKDIR/rN.NAME, for writing. */
static FILE *
crash_file(int n, const char *name)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/r%d.%s", crash_dir, n, name);
	if ((f = fopen(path, "w")) == NULL) {
		perror(path);
		exit(1);
	}
	return f;
}

/* A heartbeat's answer that the job's lease is gone. */
static int
lease_cancelled(const char *body)
{
	return strstr(body, "\"cancel\": true") != NULL ||
	    strstr(body, "\"cancel\":true") != NULL;
}

static void *
crash_runner(void *arg)
{
	struct frunner *fr = arg;
	struct conn *c = calloc(1, sizeof(*c));
	char *body = malloc(64 * 1024), path[128], ack[1024], reg[64];
	char claim[96];
	double hb = now_ms();
	long job, runs, i;
	size_t off;
	int m, st, cut, home = fr->n % nports;
	FILE *acks = crash_file(fr->n, "acks"),
	     *done = crash_file(fr->n, "done");
	FILE *claims = crash_file(fr->n, "claims"),
	     *lost = crash_file(fr->n, "lost");
	FILE *left = crash_file(fr->n, "left");
	int gone;

	c->at = home;
	/* Registers, the daemon up or not (crash_request does it again
	 * on every new connection). */
	snprintf(ack, sizeof(ack), "tokens/r%d.token", fr->n);
	read_token(c->tok, sizeof(c->tok), ack);
	conn_open(c);
	snprintf(reg, sizeof(reg), "{\"name\":\"r%d\"}", fr->n);
	if (crash_request(c, fr->n, "/api/v1/runners/register", reg) != 200)
		goto out;
	while (!fleet_over()) {
		double t0;

		/* Back to the first daemon once it listens again (a failed
		 * register there fails over on the claim's request). */
		if (c->at != home && conn_try(c, home) == 0)
			request(c, "/api/v1/runners/register", reg);
		t0 = now_ms();
		cut = 0;
		/* Each claim its own id, sent again with every try of it, as
		 * perfwatch-runner does (docs/API.md "claim_id"). */
		snprintf(claim, sizeof(claim),
		    "{\"wait_s\":1,\"claim_id\":\"r%d-%zu\"}", fr->n,
		    fr->claims);
		st = crash_request_cut(
		    c, fr->n, "/api/v1/jobs/claim", claim, &cut);
		fr->claims++;
		/* A claim the dead daemon may have leased a job for: the
		 * daemon hands that job back to the claim sent again with
		 * its id, on any daemon, as the same attempt. */
		if (cut)
			fprintf(claims, "cut\n");
		if (st == 204 || st == -1) {
			fr->empty++;
			continue;
		}
		/* Includes the wait for a restart when the daemon died. */
		lat_add(&fr->claim, now_ms() - t0);
		if (st != 200) {
			fprintf(stderr, "claim %d: %s\n", st, c->rbuf);
			exit(1);
		}
		job = json_int(c->rbuf, "id");
		runs = json_int(c->rbuf, "runs");
		fprintf(claims, "%ld %ld\n", job, json_int(c->rbuf, "attempt"));
		snprintf(path, sizeof(path), "/api/v1/jobs/%ld/runs", job);
		gone = 0;
		for (i = 0; i < runs && !fleet_over(); i++) {
			if (now_ms() - hb >= 5000) {
				snprintf(
				    ack, sizeof(ack), "{\"job_id\":%ld}", job);
				st = crash_request(
				    c, fr->n, "/api/v1/runners/heartbeat", ack);
				hb = now_ms();
				if (st == 200 && lease_cancelled(c->rbuf)) {
					fprintf(lost, "%ld heartbeat\n", job);
					gone = 1;
					break;
				}
			}
			off = (size_t)snprintf(body, 64 * 1024,
			    "{\"index\":%ld,\"status\":\"ok\",\"metrics\":[",
			    i);
			for (m = 0; m < nmetrics; m++)
				off += (size_t)snprintf(body + off,
				    64 * 1024 - off,
				    "%s{\"name\":\"m%02d\",\"value\":%d,"
				    "\"better\":\"higher\"}",
				    m ? "," : "", m, 1000 + m);
			snprintf(body + off, 64 * 1024 - off, "]}");
			st = crash_request(c, fr->n, path, body);
			if (st == 201 || st == 200) {
				/* 200 {"stored": false}: a retry of an upload
				 * stored before the daemon died. */
				fprintf(acks, "%ld %ld\n", job, i);
				fr->uploads++;
			} else if (st == 409) {
				/* The lease was lost although this runner
				 * lived: claim again. */
				fprintf(lost, "%ld upload\n", job);
				gone = 1;
				break;
			} else if (st != -1) {
				fprintf(stderr, "upload %d: %s\n", st, c->rbuf);
				exit(1);
			}
		}
		/* Left running when the load ended: its lease runs out. */
		if (i < runs && !gone)
			fprintf(left, "%ld\n", job);
		if (i == runs) {
			snprintf(
			    path, sizeof(path), "/api/v1/jobs/%ld/finish", job);
			cut = 0;
			st = crash_request_cut(
			    c, fr->n, path, "{\"status\":\"success\"}", &cut);
			if (st == 200)
				fprintf(done, "%ld\n", job);
			/* 409 to a finish sent once: the lease was gone (sent
			 * again, the first may have finished it). */
			if (st == 409 && !cut)
				fprintf(lost, "%ld finish\n", job);
			if (st == -1) /* the load ended before its answer */
				fprintf(left, "%ld\n", job);
			if (st != 200 && st != 409 && st != -1) {
				fprintf(stderr, "finish %d: %s\n", st, c->rbuf);
				exit(1);
			}
		}
	}
out:
	fclose(acks);
	fclose(done);
	fclose(claims);
	fclose(lost);
	fclose(left);
	close(c->fd);
	free(c);
	free(body);
	return NULL;
}

static void *
fleet_runner(void *arg)
{
	struct frunner *fr = arg;
	struct conn *c = calloc(1, sizeof(*c));
	char *body = malloc(64 * 1024), path[128];
	double t0, hb = now_ms();
	long job, runs, i;
	size_t off;
	int m, st, first = 1;

	login(c, fr->n);
	while (now_ms() < fleet_end) {
		fleet_heartbeat(c, &hb, 0);
		t0 = now_ms();
		st = request(c, "/api/v1/jobs/claim", "{\"wait_s\":1}");
		fr->claims++;
		if (st == 204) {
			fr->empty++;
			continue;
		}
		lat_add(&fr->claim, now_ms() - t0);
		if (st != 200) {
			fprintf(stderr, "claim %d: %s\n", st, c->rbuf);
			exit(1);
		}
		job = json_int(c->rbuf, "id");
		runs = json_int(c->rbuf, "runs");
		snprintf(path, sizeof(path), "/api/v1/jobs/%ld/runs", job);
		for (i = 0; i < runs && now_ms() < fleet_end; i++) {
			/* The first run of runner n is n % 100 hundredths of
			 * a run: runners that all started at once do not
			 * upload in step. */
			if (fleet_run_ms > 0)
				fleet_run(c, &hb, job,
				    (double)fleet_run_ms *
				        (first ? (fr->n % 100) / 100.0 : 1.0));
			first = 0;
			fleet_heartbeat(c, &hb, job);
			off = (size_t)snprintf(body, 64 * 1024,
			    "{\"index\":%ld,\"status\":\"ok\",\"metrics\":[",
			    i);
			for (m = 0; m < nmetrics; m++)
				off += (size_t)snprintf(body + off,
				    64 * 1024 - off,
				    "%s{\"name\":\"m%02d\",\"value\":%d,"
				    "\"better\":\"higher\"}",
				    m ? "," : "", m, 1000 + m);
			snprintf(body + off, 64 * 1024 - off, "]}");
			expect(c, path, body, 201, "upload");
			fr->uploads++;
		}
		if (i == runs) {
			snprintf(
			    path, sizeof(path), "/api/v1/jobs/%ld/finish", job);
			expect(
			    c, path, "{\"status\":\"success\"}", 200, "finish");
		}
	}
	close(c->fd);
	free(c);
	free(body);
	return NULL;
}

static int
fleet_main(int n)
{
	struct frunner *fr = calloc((size_t)n, sizeof(*fr));
	struct lat all = { 0 };
	size_t up = 0, claims = 0, empty = 0, k, busy = 0;
	double t0 = now_ms();
	int i;

	fleet_end = t0 + fleet_secs * 1000.0;
	for (i = 0; i < n; i++) {
		fr[i].n = i + 1;
		if (pthread_create(&fr[i].t, NULL,
		        crash_dir ? crash_runner : fleet_runner, &fr[i]) != 0) {
			fprintf(stderr, "pthread_create failed at %d\n", i);
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		pthread_join(fr[i].t, NULL);
		up += fr[i].uploads;
		claims += fr[i].claims;
		empty += fr[i].empty;
		busy += fr[i].uploads > 0;
		for (k = 0; k < fr[i].claim.n; k++)
			lat_add(&all, fr[i].claim.v[k]);
		free(fr[i].claim.v);
	}
	printf("fleet: %d runners for %.1f s: %zu uploads = %.0f/s; "
	       "%zu claims (%zu found nothing); %zu runners uploaded\n",
	    n, (now_ms() - t0) / 1e3, up, (double)up / ((now_ms() - t0) / 1e3),
	    claims, empty, busy);
	printf("fleet: claim latency ms (claims that got a job): p50 %.2f "
	       "p99 %.2f max %.2f (n=%zu)\n",
	    pct(&all, 50), pct(&all, 99), pct(&all, 100), all.n);
	free(all.v);
	free(fr);
	return 0;
}

/* PORT, or several ports of daemons of one database: "P1,P2,...". */
static void
parse_ports(const char *list)
{
	const char *arg = list;
	char *end;

	do {
		long p = strtol(arg, &end, 10);

		if (end == arg || p <= 0 || p > 65535 || nports == MAX_PORTS ||
		    (*end != ',' && *end != '\0')) {
			fprintf(stderr, "api_load: bad PORT list '%s'\n", list);
			exit(2);
		}
		ports[nports++] = (int)p;
		arg = end + 1;
	} while (*end == ',');
}

int
main(int argc, char **argv)
{
	struct client *cl;
	struct probe pr;
	struct lat all = { 0 };
	double t0, secs;
	int i, idle;
	size_t k;

	if (argc == 9 && strcmp(argv[1], "--fleet") == 0 &&
	    strcmp(argv[2], "--crash") == 0) {
		crash_dir = argv[3];
		snprintf(stop_path, sizeof(stop_path), "%s/stop", crash_dir);
		argv[3] = argv[1]; /* then as --fleet PORT ... */
		argv += 2;
		argc -= 2;
	}
	if (argc == 7 && strcmp(argv[1], "--fleet") == 0) {
		parse_ports(argv[2]);
		tokdir = argv[3];
		fleet_secs = (int)strtol(argv[5], NULL, 10);
		nmetrics = (int)strtol(argv[6], NULL, 10);
		if (getenv("FLEET_RUN_MS") != NULL)
			fleet_run_ms = strtol(getenv("FLEET_RUN_MS"), NULL, 10);
		return fleet_main((int)strtol(argv[4], NULL, 10));
	}
	if (argc != 6) {
		fprintf(stderr,
		    "usage: api_load PORT TOKEN_DIR CLIENTS "
		    "TOTAL_RUNS METRICS\n");
		return 2;
	}
	parse_ports(argv[1]);
	tokdir = argv[2];
	nclients = (int)strtol(argv[3], NULL, 10);
	total_runs = strtol(argv[4], NULL, 10);
	nmetrics = (int)strtol(argv[5], NULL, 10);
	cl = calloc((size_t)nclients, sizeof(*cl));
	memset(&pr, 0, sizeof(pr));
	t0 = now_ms();
	for (i = 0; i < nclients; i++) {
		cl[i].n = i + 1;
		pthread_create(&cl[i].t, NULL, client, &cl[i]);
	}
	pthread_create(&pr.t, NULL, prober, &pr);
	for (i = 0; i < nclients; i++)
		pthread_join(cl[i].t, NULL);
	secs = (now_ms() - t0) / 1e3;
	__atomic_store_n(&stop_probe, 1, __ATOMIC_RELAXED);
	pthread_join(pr.t, NULL);
	idle = 0;
	printf("uploads per runner:");
	for (i = 0; i < nclients; i++) {
		printf(" r%d %zu", cl[i].n, cl[i].up.n);
		idle += cl[i].up.n == 0;
		for (k = 0; k < cl[i].up.n; k++)
			lat_add(&all, cl[i].up.v[k]);
		free(cl[i].up.v);
	}
	printf("\n");
	printf("uploads: %zu in %.2f s = %.0f/s (%d clients, %d metrics "
	       "per run)\n",
	    all.n, secs, (double)all.n / secs, nclients, nmetrics);
	printf("upload latency ms: p50 %.2f p99 %.2f max %.2f\n", pct(&all, 50),
	    pct(&all, 99), pct(&all, 100));
	printf("claim latency ms under load: p50 %.2f p99 %.2f (n=%zu)\n",
	    pct(&pr.claim, 50), pct(&pr.claim, 99), pr.claim.n);
	printf("heartbeat latency ms under load: p50 %.2f p99 %.2f (n=%zu)\n",
	    pct(&pr.hb, 50), pct(&pr.hb, 99), pr.hb.n);
	free(all.v);
	free(pr.claim.v);
	free(pr.hb.v);
	free(cl);
	if (idle > 0) {
		/* A fleet that leaves runners idle does not spread the work. */
		fprintf(
		    stderr, "api_load: %d runner(s) uploaded nothing\n", idle);
		return 1;
	}
	return 0;
}
