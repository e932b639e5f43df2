/*
 * netperf's classic (non-omni-keyword) output.
 *
 * A test block is a title line ("TCP REQUEST/RESPONSE TEST from ..."),
 * column headers, and a result line whose fields are all numbers:
 *   *_RR, *_CRR   send recv req resp elapsed rate [cpu_l cpu_r sd_l sd_r]
 *   UDP_STREAM    sock msg elapsed okay errors tput [cpu sd], then the
 *                 receive side: sock elapsed okay tput [cpu_r sd_r]
 *   other STREAM  recv send msg elapsed tput [cpu_l cpu_r sd_l sd_r]
 * Several blocks (concurrent clients, as LKP runs them) are added up:
 *   throughput (and throughput_recv for UDP_STREAM): the sum over
 *     clients, in trans/s for request/response tests and Mbit/s (10^6
 *     bits/s, netperf's default) for streams;
 *   throughput_per_client: the mean (LKP's Throughput_Mbps);
 *   clients; local/remote_cpu_util (%) and local/remote_service_demand
 *   (us/Tr or us/KB) as means over clients.
 * Lines outside blocks (command echoes) are ignored; a "netperf: ..."
 * error line, or a block without its result line, is an error.
 */
#include <string.h>

#include "runners/bench/bench_int.h"

enum kind { K_NONE, K_RR, K_STREAM, K_UDP_STREAM };

struct acc {
	int clients;
	double tput, recv;
	double cpu_l, cpu_r, sd_l, sd_r;
	int ncpu_l, ncpu_r; /* clients that reported CPU figures */
};

static enum kind
title_kind(const char *line)
{
	if (strstr(line, "REQUEST/RESPONSE") != NULL)
		return K_RR;
	if (strstr(line, "UDP STREAM") != NULL ||
	    strstr(line, "UDP_STREAM") != NULL)
		return K_UDP_STREAM;
	if (strstr(line, "STREAM") != NULL || strstr(line, "MAERTS") != NULL ||
	    strstr(line, "SENDFILE") != NULL)
		return K_STREAM;
	return K_NONE;
}

static int
is_title(const char *line)
{
	return strstr(line, " TEST") != NULL &&
	    (strstr(line, " from ") != NULL || strstr(line, " to ") != NULL);
}

/* All fields numbers: their count, else 0. */
static int
numeric_fields(char *line, double *v, int max)
{
	char *f[16];
	int n, i;

	if ((n = bench_split(line, 0, f, 16)) <= 0 || n > max)
		return 0;
	for (i = 0; i < n; i++)
		if (bench_strtod(f[i], &v[i]) == -1)
			return 0;
	return n;
}

int
bench_netperf_parse(struct bench_result *out, const char *raw, size_t len)
{
	struct bench_lines l;
	struct acc a;
	enum kind kind = K_NONE, cur = K_NONE;
	/* 0: outside, 1: want result, 2: want UDP receive line, 3: done */
	int state = 0, title_line = 0, rc;
	const char *unit = "", *sdunit = "";

	memset(&a, 0, sizeof(a));
	bench_lines_init(&l, raw, len);
	while ((rc = bench_lines_next(&l, &out->err)) == 1) {
		char *line = bench_trim(l.line);
		double v[16];
		int n;

		if (strncmp(line, "netperf:", 8) == 0 ||
		    strncmp(line, "netserver:", 10) == 0 ||
		    strstr(line, "establish control") != NULL ||
		    strstr(line, "establish_control") != NULL) {
			rc = err_set(
			    &out->err, "line %d: %.200s", l.lineno, line);
			break;
		}
		if (is_title(line)) {
			if (state == 1 || state == 2) {
				rc = err_set(&out->err,
				    "line %d: the test at line %d has no "
				    "result line",
				    l.lineno, title_line);
				break;
			}
			if ((cur = title_kind(line)) == K_NONE) {
				rc = err_set(&out->err,
				    "line %d: unsupported test: '%.80s'",
				    l.lineno, line);
				break;
			}
			if (kind != K_NONE && cur != kind) {
				rc = err_set(&out->err,
				    "line %d: a different kind of test than "
				    "the blocks before",
				    l.lineno);
				break;
			}
			kind = cur;
			state = 1;
			title_line = l.lineno;
			continue;
		}
		if (state != 1 && state != 2)
			continue;
		if ((n = numeric_fields(line, v, 16)) == 0)
			continue; /* a header line */
		if (state == 2) {
			if (n < 4) {
				rc = err_set(&out->err,
				    "line %d: expected the UDP receive line",
				    l.lineno);
				break;
			}
			a.recv += v[3];
			if (n >= 6) {
				a.cpu_r += v[4];
				a.sd_r += v[5];
				a.ncpu_r++;
			}
			state = 3;
			continue;
		}
		if (kind == K_RR && n >= 6) {
			a.tput += v[5];
			if (n >= 10) {
				a.cpu_l += v[6];
				a.cpu_r += v[7];
				a.sd_l += v[8];
				a.sd_r += v[9];
				a.ncpu_l++;
				a.ncpu_r++;
			}
		} else if (kind == K_UDP_STREAM && n >= 6) {
			a.tput += v[5];
			if (n >= 8) {
				a.cpu_l += v[6];
				a.sd_l += v[7];
				a.ncpu_l++;
			}
		} else if (kind == K_STREAM && n >= 5) {
			a.tput += v[4];
			if (n >= 9) {
				a.cpu_l += v[5];
				a.cpu_r += v[6];
				a.sd_l += v[7];
				a.sd_r += v[8];
				a.ncpu_l++;
				a.ncpu_r++;
			}
		} else {
			rc = err_set(&out->err,
			    "line %d: %d fields: too few for the result of "
			    "the test at line %d",
			    l.lineno, n, title_line);
			break;
		}
		a.clients++;
		state = kind == K_UDP_STREAM ? 2 : 3;
	}
	if (rc == 0 && (state == 1 || state == 2))
		rc = err_set(&out->err,
		    "line %d: output ends before the result of the test at "
		    "line %d (truncated?)",
		    l.lineno, title_line);
	if (rc == 0 && a.clients == 0)
		rc = err_set(&out->err,
		    "line %d: no netperf test block (a line like \"TCP "
		    "REQUEST/RESPONSE TEST from ...\")",
		    l.lineno > 0 ? l.lineno : 1);
	if (rc == 0) {
		unit = kind == K_RR ? "trans/s" : "Mbit/s";
		sdunit = kind == K_RR ? "us/Tr" : "us/KB";
		rc = bench_add(out, "throughput", a.tput, unit, BENCH_HIGHER);
	}
	if (rc == 0)
		rc = bench_add(out, "throughput_per_client", a.tput / a.clients,
		    unit, BENCH_HIGHER);
	if (rc == 0)
		rc = bench_add(out, "clients", a.clients, "", BENCH_INFO);
	if (rc == 0 && kind == K_UDP_STREAM) {
		rc = bench_add(
		    out, "throughput_recv", a.recv, unit, BENCH_HIGHER);
		if (rc == 0)
			rc = bench_add(out, "throughput_recv_per_client",
			    a.recv / a.clients, unit, BENCH_HIGHER);
	}
	if (rc == 0 && a.ncpu_l > 0) {
		rc = bench_add(
		    out, "local_cpu_util", a.cpu_l / a.ncpu_l, "%", BENCH_INFO);
		if (rc == 0)
			rc = bench_add(out, "local_service_demand",
			    a.sd_l / a.ncpu_l, sdunit, BENCH_LOWER);
	}
	if (rc == 0 && a.ncpu_r > 0) {
		rc = bench_add(out, "remote_cpu_util", a.cpu_r / a.ncpu_r, "%",
		    BENCH_INFO);
		if (rc == 0)
			rc = bench_add(out, "remote_service_demand",
			    a.sd_r / a.ncpu_r, sdunit, BENCH_LOWER);
	}
	bench_lines_release(&l);
	return rc == 0 ? 0 : -1;
}
