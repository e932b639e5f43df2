/*
 * Failed logins per client address (see throttle.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "web/throttle.h"

#define ADDR_MAX 64 /* an IPv6 address in text is at most 45 */

struct slot {
	char addr[ADDR_MAX];
	unsigned fails;
	int64_t last_ms; /* of the last failure */
};

struct throttle {
	pthread_mutex_t mu;
	struct slot s[THROTTLE_SLOTS];
};

struct throttle *
throttle_new(void)
{
	struct throttle *t = xcalloc(1, sizeof(*t));

	pthread_mutex_init(&t->mu, NULL);
	return t;
}

void
throttle_free(struct throttle *t)
{
	if (t == NULL)
		return;
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* addr's slot, or NULL; a slot idle THROTTLE_FORGET_S is emptied. */
static struct slot *
find(struct throttle *t, const char *addr, int64_t now_ms)
{
	size_t i;

	for (i = 0; i < THROTTLE_SLOTS; i++) {
		struct slot *s = &t->s[i];

		if (s->fails == 0 || strcmp(s->addr, addr) != 0)
			continue;
		if (now_ms - s->last_ms >= (int64_t)THROTTLE_FORGET_S * 1000) {
			s->fails = 0;
			return NULL;
		}
		return s;
	}
	return NULL;
}

/* The wait after n failures, seconds. */
static long
wait_after(unsigned n)
{
	long w;

	if (n < THROTTLE_FREE)
		return 0;
	n -= THROTTLE_FREE;
	w = n < 16 ? 1L << n : THROTTLE_MAX_S;
	return w < THROTTLE_MAX_S ? w : THROTTLE_MAX_S;
}

long
throttle_wait(struct throttle *t, const char *addr, int64_t now_ms)
{
	struct slot *s;
	long left = 0;

	pthread_mutex_lock(&t->mu);
	if ((s = find(t, addr, now_ms)) != NULL) {
		int64_t until =
		    s->last_ms + (int64_t)wait_after(s->fails) * 1000;

		if (until > now_ms)
			left = (long)((until - now_ms + 999) / 1000);
	}
	pthread_mutex_unlock(&t->mu);
	return left;
}

void
throttle_fail(struct throttle *t, const char *addr, int64_t now_ms)
{
	struct slot *s;
	size_t i;

	pthread_mutex_lock(&t->mu);
	if ((s = find(t, addr, now_ms)) == NULL) {
		s = &t->s[0];
		for (i = 0; i < THROTTLE_SLOTS; i++) {
			if (t->s[i].fails == 0) {
				s = &t->s[i];
				break;
			}
			if (t->s[i].last_ms < s->last_ms)
				s = &t->s[i];
		}
		memset(s, 0, sizeof(*s));
		strncpy(s->addr, addr, sizeof(s->addr) - 1);
	}
	if (s->fails < 64)
		s->fails++;
	s->last_ms = now_ms;
	pthread_mutex_unlock(&t->mu);
}

void
throttle_clear(struct throttle *t, const char *addr)
{
	size_t i;

	pthread_mutex_lock(&t->mu);
	for (i = 0; i < THROTTLE_SLOTS; i++)
		if (t->s[i].fails != 0 && strcmp(t->s[i].addr, addr) == 0)
			t->s[i].fails = 0;
	pthread_mutex_unlock(&t->mu);
}
