#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "web/session.h"

struct session {
	char id[SESSION_ID_LEN + 1];
	char csrf[SESSION_ID_LEN + 1];
	int64_t expires;
};

struct session_table {
	pthread_mutex_t mu;
	struct session s[SESSION_MAX];
};

struct session_table *
session_table_new(void)
{
	struct session_table *t = xcalloc(1, sizeof(*t));

	pthread_mutex_init(&t->mu, NULL);
	return t;
}

void
session_table_free(struct session_table *t)
{
	if (t == NULL)
		return;
	pthread_mutex_destroy(&t->mu);
	explicit_bzero(t->s, sizeof(t->s));
	free(t);
}

int
session_random_hex(char *out, size_t nbytes)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[64];
	size_t got = 0, i;

	if (nbytes > sizeof(raw))
		return -1;
	while (got < nbytes) {
		ssize_t n = getrandom(raw + got, nbytes - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	for (i = 0; i < nbytes; i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[2 * nbytes] = '\0';
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

int
session_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char d = la != lb;

	/* Compare over b's length so the time does not depend on a. */
	for (i = 0; i < lb; i++)
		d |= (unsigned char)(b[i] ^ (i < la ? a[i] : 0));
	return d == 0;
}

int
session_create(struct session_table *t, char id[SESSION_ID_LEN + 1],
    char csrf[SESSION_ID_LEN + 1], int64_t now)
{
	size_t i, slot = 0;

	if (session_random_hex(id, SESSION_ID_LEN / 2) == -1 ||
	    session_random_hex(csrf, SESSION_ID_LEN / 2) == -1)
		return -1;
	pthread_mutex_lock(&t->mu);
	/* A free or expired slot, else the one that expires first. */
	for (i = 0; i < SESSION_MAX; i++) {
		if (t->s[i].expires <= now) {
			slot = i;
			break;
		}
		if (t->s[i].expires < t->s[slot].expires)
			slot = i;
	}
	memcpy(t->s[slot].id, id, SESSION_ID_LEN + 1);
	memcpy(t->s[slot].csrf, csrf, SESSION_ID_LEN + 1);
	t->s[slot].expires = now + SESSION_TTL;
	pthread_mutex_unlock(&t->mu);
	return 0;
}

int
session_lookup(struct session_table *t, const char *id,
    char csrf[SESSION_ID_LEN + 1], int64_t now)
{
	size_t i;
	int r = ERR_NOTFOUND;

	if (id == NULL || strlen(id) != SESSION_ID_LEN)
		return ERR_NOTFOUND;
	pthread_mutex_lock(&t->mu);
	for (i = 0; i < SESSION_MAX; i++) {
		if (t->s[i].expires > now && session_equal(id, t->s[i].id)) {
			memcpy(csrf, t->s[i].csrf, SESSION_ID_LEN + 1);
			r = 0;
			break;
		}
	}
	pthread_mutex_unlock(&t->mu);
	return r;
}

void
session_drop(struct session_table *t, const char *id)
{
	size_t i;

	if (id == NULL)
		return;
	pthread_mutex_lock(&t->mu);
	for (i = 0; i < SESSION_MAX; i++)
		if (t->s[i].expires && strcmp(id, t->s[i].id) == 0) {
			explicit_bzero(&t->s[i], sizeof(t->s[i]));
			break;
		}
	pthread_mutex_unlock(&t->mu);
}
