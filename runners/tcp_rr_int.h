#ifndef RUNNERS_TCP_RR_INT_H
#define RUNNERS_TCP_RR_INT_H

/*
 * What the files of perfwatch-tcp-rr share (tcp_rr.c, tcp_rr_client.c,
 * tcp_rr_server.c): options output, socket helpers and the handshake's
 * size.
 */
#include <netdb.h>
#include <stdio.h>

#include "common/err.h"
#include "runners/tcp_rr.h"

#define TCP_RR_MAGIC "PWR1" /* the handshake's first 4 bytes */
#define HELLO_LEN 12
#define IOBUF (64 * 1024)
#define MAX_EVENTS 256

void tcp_rr_i_print_opts(FILE *f, const struct tcp_rr_opts *o, int port);
void tcp_rr_i_print_rusage(FILE *f, const char *suffix);
void tcp_rr_i_raise_nofile(void);
int tcp_rr_i_resolve(struct addrinfo **out, const struct tcp_rr_opts *o,
    int passive, struct err *e);
int tcp_rr_i_set_nonblock(int fd);

#endif
