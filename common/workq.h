#ifndef COMMON_WORKQ_H
#define COMMON_WORKQ_H

/*
 * A fixed pool of threads that run submitted functions in order of
 * submission: work taken off a thread that must not wait for it (the
 * HTTP event threads, web/api.c).  After workq_stop() has run what was
 * queued and joined the threads, workq_submit() runs the function in
 * the caller's thread: a submit never fails and nothing is dropped.
 */
struct workq;

struct workq *workq_new(int nthreads); /* never NULL; nthreads >= 1 */
void workq_submit(struct workq *, void (*fn)(void *), void *arg);
/* Runs what is queued, then joins the threads; idempotent. */
void workq_stop(struct workq *);
void workq_free(struct workq *); /* stops first; NULL ok */
/* How many functions are queued and not yet started. */
unsigned workq_queued(struct workq *);

#endif
