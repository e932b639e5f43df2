/* dconf_auth: which token is whose, and the NULL out_runner case. */
#include <string.h>

#include "daemon/dconf.h"
#include "test.h"

static void
fill(struct dconf *c, struct dconf_runner *r)
{
	memset(c, 0, sizeof(*c));
	memset(r, 0, 2 * sizeof(*r));
	c->has_admin = 1;
	memcpy(c->admin, "admin-secret", 12);
	c->admin_len = 12;
	memcpy(r[0].token, "runner-one", 10);
	r[0].token_len = 10;
	memcpy(r[1].token, "runner-two", 10);
	r[1].token_len = 10;
	c->runners = r;
	c->nrunners = 2;
}

TEST(test_dconf__auth_admin_runner_nobody)
{
	struct dconf c;
	struct dconf_runner r[2];
	const struct dconf_runner *who = r;
	char longtok[DCONF_TOKEN_MAX + 8];

	fill(&c, r);
	ASSERT_INTEQ(dconf_auth(&c, "admin-secret", &who), 1);
	ASSERT(who == NULL);
	ASSERT_INTEQ(dconf_auth(&c, "runner-two", &who), 2);
	ASSERT(who == &r[1]);
	ASSERT_INTEQ(dconf_auth(&c, "runner-one", &who), 2);
	ASSERT(who == &r[0]);
	/* A prefix or an extension of a token is not the token. */
	ASSERT_INTEQ(dconf_auth(&c, "runner-on", &who), 0);
	ASSERT(who == NULL);
	ASSERT_INTEQ(dconf_auth(&c, "runner-one1", &who), 0);
	ASSERT_INTEQ(dconf_auth(&c, "admin-secret ", &who), 0);
	who = r;
	ASSERT_INTEQ(dconf_auth(&c, "", &who), 0);
	ASSERT(who == NULL);
	memset(longtok, 'a', sizeof(longtok) - 1);
	longtok[sizeof(longtok) - 1] = '\0';
	ASSERT_INTEQ(dconf_auth(&c, longtok, &who), 0);
	c.has_admin = 0;
	ASSERT_INTEQ(dconf_auth(&c, "admin-secret", &who), 0);
}

TEST(test_dconf__auth_without_out_runner)
{
	struct dconf c;
	struct dconf_runner r[2];

	fill(&c, r);
	ASSERT_INTEQ(dconf_auth(&c, "runner-two", NULL), 2);
	ASSERT_INTEQ(dconf_auth(&c, "admin-secret", NULL), 1);
	ASSERT_INTEQ(dconf_auth(&c, "", NULL), 0);
}
