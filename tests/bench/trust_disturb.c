/*
 * trust_disturb.c - the drifting load of `make eval-trust`
 * (tests/bench/trust_eval.sh).
 *
 * One child per CPU this process may use, pinned there, alternates busy
 * and idle phases of random length (uniform in [min, max] seconds, 0.5
 * to 3 by default), each CPU on its own draw, until the duration has
 * passed or the harness is gone.  A busy phase streams over a buffer of
 * its own (16 MiB per CPU by default; 0: a pure spin): CPU time, and
 * traffic on the shared cache and memory bus, as another tenant's work
 * would bring.  The load is bounded three ways: -d, the parent's death
 * (PR_SET_PDEATHSIG, for the master and for each child), and the
 * harness's own kill at exit.
 *
 *   trust_disturb [-d SECONDS] [-m MIB] [-p MIN,MAX] [-s SEED] [-l LOG]
 *
 * With -l, each phase appends a line "cpu start busy|idle seconds" to LOG
 * (start in seconds since the disturber began), so the harness can say
 * how much of the time each CPU was busy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 1024

struct opts {
	double duration;
	double min, max;
	size_t bytes;
	uint64_t seed;
	const char *log;
};

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* splitmix64: a different, reproducible stream for each CPU. */
static uint64_t
next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double
uniform(uint64_t *s, double lo, double hi)
{
	return lo + (hi - lo) * ((next_rand(s) >> 11) * 0x1.0p-53);
}

static void
log_phase(int fd, int cpu, double start, const char *what, double len)
{
	char line[96];
	int n;

	if (fd < 0)
		return;
	n = snprintf(
	    line, sizeof(line), "%d %.3f %s %.3f\n", cpu, start, what, len);
	/* One short O_APPEND write: lines of two CPUs do not mix. */
	if (n > 0 && write(fd, line, (size_t)n) < 0)
		return;
}

static void
busy(volatile unsigned char *buf, size_t bytes, double until)
{
	size_t i = 0;
	unsigned long spins = 0;

	while (now() < until) {
		if (bytes == 0) {
			/* Check the clock only now and then. */
			for (spins = 0; spins < 100000; spins++)
				__asm__ volatile("" ::: "memory");
			continue;
		}
		/* A read-modify-write of one cache line after another. */
		for (spins = 0; spins < 65536; spins++) {
			buf[i]++;
			if ((i += 64) >= bytes)
				i = 0;
		}
	}
}

static void
child(int cpu, const struct opts *o, double t0, int fd)
{
	volatile unsigned char *buf = NULL;
	uint64_t seed = o->seed ^ ((uint64_t)cpu << 32);
	double end = t0 + o->duration, t, len;
	cpu_set_t set;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		fprintf(stderr, "trust_disturb: cpu %d: %s\n", cpu,
		    strerror(errno));
	if (o->bytes > 0 && (buf = calloc(1, o->bytes)) == NULL) {
		perror("trust_disturb: calloc");
		_exit(1);
	}
	/* Half the CPUs start idle, so the first seconds are mixed too. */
	for (int on = cpu % 2 == 0; (t = now()) < end; on = !on) {
		len = uniform(&seed, o->min, o->max);
		if (t + len > end)
			len = end - t;
		log_phase(fd, cpu, t - t0, on ? "busy" : "idle", len);
		if (on) {
			busy(buf, o->bytes, t + len);
		} else {
			struct timespec ts = { (time_t)len,
				(long)((len - (time_t)len) * 1e9) };

			while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
				;
		}
	}
	_exit(0);
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: trust_disturb [-d SECONDS] [-m MIB] "
	    "[-p MIN,MAX] [-s SEED] [-l LOG]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct opts o = { 3600, 0.5, 3, 16u << 20, 1, NULL };
	pid_t kids[MAX_CPUS];
	int nkids = 0, fd = -1, c, status = 0;
	cpu_set_t allowed;
	pid_t parent = getppid();
	double t0;
	char *end;

	while ((c = getopt(argc, argv, "d:m:p:s:l:")) != -1) {
		switch (c) {
		case 'd':
			o.duration = strtod(optarg, &end);
			if (*end != '\0' || !(o.duration > 0))
				usage();
			break;
		case 'm':
			o.bytes = (size_t)strtoul(optarg, &end, 10) << 20;
			if (*end != '\0')
				usage();
			break;
		case 'p':
			if (sscanf(optarg, "%lf,%lf", &o.min, &o.max) != 2 ||
			    !(o.min > 0) || o.max < o.min)
				usage();
			break;
		case 's':
			o.seed = strtoull(optarg, &end, 10);
			if (*end != '\0')
				usage();
			break;
		case 'l':
			o.log = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	/* Gone with the harness even when it is killed by SIGKILL. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		return 0;
	if (o.log != NULL &&
	    (fd = open(o.log, O_WRONLY | O_CREAT | O_APPEND, 0600)) < 0) {
		perror(o.log);
		return 1;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		perror("sched_getaffinity");
		return 1;
	}
	t0 = now();
	for (int cpu = 0; cpu < CPU_SETSIZE && nkids < MAX_CPUS; cpu++) {
		pid_t p;

		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if ((p = fork()) < 0) {
			perror("fork");
			break;
		}
		if (p == 0)
			child(cpu, &o, t0, fd);
		kids[nkids++] = p;
	}
	printf("trust_disturb: %d CPUs, phases %.1f-%.1f s, %zu MiB each, "
	       "%.0f s at most\n",
	    nkids, o.min, o.max, o.bytes >> 20, o.duration);
	fflush(stdout);
	/* A SIGTERM ends the master; PR_SET_PDEATHSIG ends the children. */
	for (int i = 0; i < nkids; i++) {
		int st;

		while (waitpid(kids[i], &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			status = 1;
	}
	return status;
}
