/*
 * Shared kernel builds, the scheduler's side (daemon/builds.h).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "daemon/artifacts.h"
#include "daemon/builds.h"
#include "daemon/sched.h"
#include "store/builds.h"

/* The bytes promised to uploads in progress (builds_reserve), and the
 * lock that makes a room check and its reservation one step. */
static pthread_mutex_t room_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t room_reserved;

int
builds_claim(struct sched *s, struct store *st, struct store_build_claimed *out,
    int64_t host_id, const char *claim_id)
{
	return store_build_claim_as(
	    st, out, host_id, sched_now_s(s), sched_lease_s(s), claim_id);
}

int
builds_heartbeat(struct sched *s, struct store *st, int64_t *out_expires,
    int64_t host_id, int64_t build_id)
{
	return store_build_heartbeat(st, out_expires, host_id, build_id,
	    sched_now_s(s), sched_lease_s(s));
}

int
builds_finish(struct sched *s, struct store *st, int *out_failed,
    int64_t host_id, int64_t build_id, const struct store_build_result *res)
{
	int r = store_build_finish(
	    st, out_failed, host_id, build_id, res, sched_now_s(s));

	if (r == 0)
		sched_notify(s);
	return r;
}

int
builds_cancel(struct sched *s, struct store *st, int *out_failed, int64_t id)
{
	int r = store_build_cancel(
	    st, out_failed, id, "cancelled by the operator", sched_now_s(s));

	if (r == 0)
		sched_notify(s);
	return r;
}

void
builds_unreserve(int64_t need)
{
	pthread_mutex_lock(&room_mu);
	room_reserved -= need;
	pthread_mutex_unlock(&room_mu);
}

int
builds_reserve(
    struct store *st, const char *dir, int64_t need, int64_t max_size)
{
	char **v = NULL;
	size_t n = 0, i;
	int r;

	pthread_mutex_lock(&room_mu);
	r = store_artifacts_make_room(
	    st, &v, &n, need, room_reserved, max_size);
	if (r == 0)
		room_reserved += need;
	pthread_mutex_unlock(&room_mu);
	/* The rows are gone first: a file without a row is only space,
	 * a row without its file would be handed out. */
	for (i = 0; i < n; i++) {
		if (artifacts_remove(dir, v[i]) != 0)
			log_warnx("artifact store: removing %s: %s", v[i],
			    strerror(errno));
		else
			log_info("artifact store: evicted %s", v[i]);
	}
	store_build_victims_release(v, n);
	return r;
}
