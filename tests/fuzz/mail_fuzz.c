/*
 * Fuzzes daemon/mail: the bytes as an mbox, parsed, grouped into series,
 * each series routed (daemon/series_route: subject tag to tree and
 * branch) as the inbox of config/examples/daemon.yaml would.  Checks the
 * contract: success gives messages with NUL-terminated fields within
 * their caps and series whose patches are patch mail of the right seq,
 * routed to a configured tree and a branch; failure names the mbox line.
 *
 * make fuzz FUZZ_TARGETS=mail (clang -fsanitize=fuzzer,address,undefined).
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/caps.h"
#include "config/config.h"
#include "daemon/mail.h"
#include "daemon/series_route.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The example's trees and linux-mm inbox, with its tag map. */
static const char daemon_yaml[] =
    "listen: 127.0.0.1:0\ndatabase: /nonexistent/pw.db\n"
    "mirrors: /nonexistent/git\n"
    "trees:\n"
    "  - {name: mm, url: 'file:///mm.git', branches: [mm-new, mm-unstable]}\n"
    "  - {name: linus, url: 'file:///linus.git', branches: [master]}\n"
    "inboxes:\n"
    "  - name: linux-mm\n    url: 'file:///inbox.git'\n"
    "    tree: mm\n    branch: mm-new\n"
    "    subjects: [memcg, memcontrol, cgroup]\n"
    "    tags:\n      mm-unstable: {branch: mm-unstable}\n"
    "      linus: {tree: linus, branch: master}\n";
static struct daemon_config *dc;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	struct cfg_errors errs = { NULL, 0 };
	FILE *f;
	int fd;

	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "%s/pwfuzz-mail.XXXXXX",
	    tmp && *tmp ? tmp : "/tmp");
	if ((fd = mkstemp(path)) == -1 || (f = fdopen(fd, "w")) == NULL ||
	    fputs(daemon_yaml, f) < 0 || fclose(f) != 0)
		abort();
	if (config_load_daemon(&dc, path, &errs) != 0) {
		fprintf(stderr, "mail_fuzz: %s\n", errs.n ? errs.msg[0] : "?");
		abort();
	}
	unlink(path);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mail_msg *m = NULL;
	struct mail_series *s = NULL;
	struct err e = { 0 };
	size_t n = 0, ns = 0, orphans = 0, i;
	int k, rc;

	rc = mail_mbox_parse(&m, &n, (const char *)data, size, &e);
	if (rc != 0) {
		assert(strncmp(err_msg(&e), "mbox", 4) == 0);
		return 0;
	}
	for (i = 0; i < n; i++) {
		assert(strlen(m[i].subject) <= CAP_SUBJECT);
		assert(strlen(m[i].from) <= CAP_NAME);
		assert(strlen(m[i].message_id) <= CAP_MAIL_ID);
		assert(m[i].nrefs <= CAP_MAIL_REFS);
		assert(m[i].patch_off < (long)m[i].body_len + 1);
	}
	mail_group(&s, &ns, &orphans, m, n);
	for (i = 0; i < ns; i++) {
		struct series_route rt;

		series_route(&rt, dc, &dc->inboxes[0], m, &s[i]);
		assert(rt.tree != NULL && rt.branch != NULL);
		(void)series_wanted(&dc->inboxes[0], m, &s[i]);
		for (k = 0; k < s[i].total; k++)
			if (s[i].patches[k] >= 0) {
				const struct mail_msg *p = &m[s[i].patches[k]];

				assert(mail_is_patch(p));
				assert(p->tag.seq == k + 1);
			}
	}
	mail_series_free(s, ns);
	mail_msgs_free(m, n);
	return 0;
}
