/*
 * Requests per client address (see ratelimit.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "web/ratelimit.h"

#define ADDR_MAX 48 /* an IPv6 address in text is at most 45 */
#define PROBE 8     /* slots an address may take, from its hash on */

struct slot {
	char addr[ADDR_MAX]; /* "" when free */
	double tokens;
	int64_t last_ms;
};

struct ratelimit {
	pthread_mutex_t mu;
	double rate, burst;
	struct slot s[RATELIMIT_SLOTS];
};

struct ratelimit *
ratelimit_new(unsigned rate, unsigned burst)
{
	struct ratelimit *l = xcalloc(1, sizeof(*l));

	pthread_mutex_init(&l->mu, NULL);
	l->rate = rate > 0 ? rate : 1;
	l->burst = burst > 0 ? burst : 1;
	return l;
}

void
ratelimit_free(struct ratelimit *l)
{
	if (l == NULL)
		return;
	pthread_mutex_destroy(&l->mu);
	free(l);
}

/* FNV-1a of the address. */
static size_t
hash(const char *a)
{
	uint32_t h = 2166136261u;

	for (; *a != '\0'; a++)
		h = (h ^ (unsigned char)*a) * 16777619u;
	return h % RATELIMIT_SLOTS;
}

/* addr's slot: its own, else a free one, else the one idle longest
 * (reset to a full bucket). */
static struct slot *
slot_of(struct ratelimit *l, const char *addr, int64_t now_ms)
{
	size_t h = hash(addr), i;
	struct slot *pick = NULL, *s;

	for (i = 0; i < PROBE; i++) {
		s = &l->s[(h + i) % RATELIMIT_SLOTS];
		if (strcmp(s->addr, addr) == 0)
			return s;
		if (pick != NULL && pick->addr[0] == '\0')
			continue;
		if (pick == NULL || s->addr[0] == '\0' ||
		    s->last_ms < pick->last_ms)
			pick = s;
	}
	memset(pick, 0, sizeof(*pick));
	strncpy(pick->addr, addr, sizeof(pick->addr) - 1);
	pick->tokens = l->burst;
	pick->last_ms = now_ms;
	return pick;
}

long
ratelimit_take(struct ratelimit *l, const char *addr, int64_t now_ms)
{
	struct slot *s;
	long wait = 0;

	pthread_mutex_lock(&l->mu);
	s = slot_of(l, addr, now_ms);
	if (now_ms > s->last_ms) {
		s->tokens += (double)(now_ms - s->last_ms) * l->rate / 1000.0;
		if (s->tokens > l->burst)
			s->tokens = l->burst;
		s->last_ms = now_ms;
	}
	if (s->tokens >= 1.0)
		s->tokens -= 1.0;
	else
		wait = (long)((1.0 - s->tokens) / l->rate) + 1;
	pthread_mutex_unlock(&l->mu);
	return wait;
}
