/*
 * perfwatch-tcp-rr: see runners/tcp_rr.h.  Exit 0 with results on
 * stdout, 1 on a failed run (message on stderr), 2 on a usage error.
 */
#include <stdio.h>

#include "common/err.h"
#include "runners/tcp_rr.h"

int
main(int argc, char **argv)
{
	struct tcp_rr_opts o;
	struct err e;
	int rc;

	err_clear(&e);
	tcp_rr_opts_init(&o);
	if ((rc = tcp_rr_opts_parse(&o, argc, argv, &e)) != 0) {
		if (rc == 1)
			return 0;
		fprintf(
		    stderr, "perfwatch-tcp-rr: %s (try --help)\n", err_msg(&e));
		return 2;
	}
	rc = o.client ? tcp_rr_client(&o, stdout, &e)
	              : tcp_rr_server(&o, stdout, &e);
	if (rc != 0) {
		fprintf(stderr, "perfwatch-tcp-rr: %s\n", err_msg(&e));
		return 1;
	}
	return 0;
}
