/*
 * Fuzzes daemon/mail: the bytes as an mbox, parsed, grouped into series.
 * Checks the contract: success gives messages with NUL-terminated fields
 * within their caps and series whose patches are patch mail of the right
 * seq; failure names the mbox line.
 *
 * make fuzz-mail (clang -fsanitize=fuzzer,address,undefined).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/caps.h"
#include "daemon/mail.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	for (i = 0; i < ns; i++)
		for (k = 0; k < s[i].total; k++)
			if (s[i].patches[k] >= 0) {
				const struct mail_msg *p = &m[s[i].patches[k]];

				assert(mail_is_patch(p));
				assert(p->tag.seq == k + 1);
			}
	mail_series_free(s, ns);
	mail_msgs_free(m, n);
	return 0;
}
