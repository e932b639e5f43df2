/*
 * Kernel builds for jobs on a kernel commit (see kernel.h): the source
 * prepared, the config made (or reused), make run as the bench user, the
 * image kept; the pure parts are in kernel_config.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/crypto.h"
#include "common/files.h"
#include "common/xalloc.h"
#include "git/git.h"
#include "runners/kernel.h"
#include "runners/kernel_int.h"
#include "runners/runas.h"

extern char **environ;

#define OBJ "pw-obj"               /* make O=, inside src/ */
#define STEP_OUT_MAX (1024 * 1024) /* output kept per step */
#define STEP_TAIL 3000             /* bytes of it in a failure */
#define CONFIG_STEP_MS (10L * 60 * 1000)
#define STREAM_MS 10000 /* build output to the job log this often */
#define INPUTS_REC OBJ "/.pw-config-inputs" /* kernel_config_reuse */
#define INPUT_FILE_MAX (16u << 20)
#define TOOL_MS 30000

/* ---- steps ---- */

static void klog(const struct kernel_req *rq, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void
kernel_i_vlog(
    void (*log)(void *, const char *), void *arg, const char *fmt, va_list ap)
{
	struct buf b = BUF_INIT(CAP_LOG_APPEND);

	if (log == NULL)
		return;
	buf_vprintf(&b, fmt, ap);
	log(arg, b.data);
	buf_release(&b);
}

static void
klog(const struct kernel_req *rq, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kernel_i_vlog(rq->log, rq->arg, fmt, ap);
	va_end(ap);
}

static const char *
tail_of(const struct buf *b, size_t n)
{
	return b->data + (b->len > n ? b->len - n : 0);
}

/* Streams a step's new output to the job log every STREAM_MS. */
struct stream {
	const struct kernel_req *rq;
	const char *what;
	size_t sent_out, sent_err;
};

static void
stream_more(void *arg, const struct exec_result *r)
{
	struct stream *st = arg;
	size_t no = r->out.len - st->sent_out, ne = r->err.len - st->sent_err;

	if (no == 0 && ne == 0)
		return;
	/* The log takes CAP_LOG_APPEND per append: send the newest. */
	if (no > CAP_LOG_APPEND / 2)
		st->sent_out = r->out.len - CAP_LOG_APPEND / 2;
	if (ne > CAP_LOG_APPEND / 4)
		st->sent_err = r->err.len - CAP_LOG_APPEND / 4;
	klog(st->rq, "kernel %s (running):\n%s%s", st->what,
	    r->out.data + st->sent_out, r->err.data + st->sent_err);
	st->sent_out = r->out.len;
	st->sent_err = r->err.len;
}

/*
 * Runs one build step in cwd.  0 ok, 1 cancelled, -1 failed (why:
 * "WHAT: exit 2: <output tail>").  The output tail goes to the job log.
 */
static int
step(const struct kernel_req *rq, char *const *argv, const char *cwd,
    char *const *env, int64_t timeout_ms, const char *what, struct buf *why)
{
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };
	struct buf how = BUF_INIT(CAP_ERRMSG);
	const struct buf *out;
	struct stream st = { rq, what, 0, 0 };
	double t0 = clock_mono_s();
	int rc;

	if (rq->user != NULL) {
		char *obj = xasprintf("%s/" OBJ, cwd),
		     *cc = xasprintf("%s/ccache", rq->kdir);
		int bad = (files_mkdir_p(obj) != 0 || files_mkdir_p(cc) != 0)
		    ? errno
		    : 0;

		if (bad == 0 &&
		    (runas_own(rq->user, obj, &e) != 0 ||
		        runas_own(rq->user, cc, &e) != 0))
			bad = -1;
		free(obj);
		free(cc);
		if (bad != 0) {
			buf_printf(why, "%s: %s", what,
			    bad > 0 ? strerror(bad) : err_msg(&e));
			return -1;
		}
	}
	s.user = rq->user;
	s.progress = rq->log != NULL ? stream_more : NULL;
	s.progress_arg = &st;
	s.progress_ms = STREAM_MS;
	s.cwd = cwd;
	s.env = env;
	s.timeout_ms = timeout_ms;
	s.out_max = STEP_OUT_MAX;
	s.err_max = STEP_OUT_MAX;
	s.cancel = rq->cancel;
	if (exec_run(&r, &s, &e) != 0) {
		buf_printf(why, "%s: %s", what, err_msg(&e));
		buf_release(&how);
		return -1;
	}
	exec_describe(&how, &r);
	out = r.err.len ? &r.err : &r.out;
	if (r.cancelled)
		rc = 1;
	else if (r.exited && r.code == 0)
		rc = 0;
	else {
		buf_printf(why, "%s: %s:\n%s", what, how.data,
		    tail_of(out, STEP_TAIL));
		rc = -1;
	}
	/* The rest of the output the stream has not sent yet. */
	klog(rq, "kernel %s: %s in %.1f s%s%s%s", what, how.data,
	    clock_mono_s() - t0,
	    r.out.len > st.sent_out || r.err.len > st.sent_err ? "\n" : "",
	    tail_of(&r.out,
	        r.out.len - st.sent_out > STEP_TAIL ? STEP_TAIL
	                                            : r.out.len - st.sent_out),
	    tail_of(&r.err,
	        r.err.len - st.sent_err > STEP_TAIL ? STEP_TAIL
	                                            : r.err.len - st.sent_err));
	exec_result_release(&r);
	buf_release(&how);
	return rc;
}

/* The environment of make: ours plus CCACHE_DIR. */
static char **
make_env(const char *kdir)
{
	size_t n = 0, i;
	char **env;

	while (environ[n] != NULL)
		n++;
	env = xcalloc(n + 2, sizeof(char *));
	for (i = 0; i < n; i++)
		env[i] = environ[i];
	env[n] = xasprintf("CCACHE_DIR=%s/ccache", kdir);
	return env;
}

/* 1 when the job names no compiler but gcc: make gets no CC. */
static int
cc_default(const char *compiler)
{
	return compiler == NULL || strcmp(compiler, "gcc") == 0;
}

/* 1 when prog is an executable in PATH. */
static int
in_path(const char *prog)
{
	const char *path = getenv("PATH"), *p, *c;
	char buf[4096];
	int found = 0;

	for (p = path ? path : "/usr/bin:/bin"; !found && *p; p = c) {
		c = strchr(p, ':');
		if (c == NULL)
			c = p + strlen(p);
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(c - p), p, prog);
		found = access(buf, X_OK) == 0;
		if (*c == ':')
			c++;
	}
	return found;
}

/* The config inputs' paths under src/rel (kernel_config_input_path). */
struct paths {
	char **v;
	size_t n;
};

static int
walk_inputs(struct paths *ps, const char *src, const char *rel, struct buf *why)
{
	char *dir = rel[0] ? xasprintf("%s/%s", src, rel) : xstrdup(src), *r;
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);
	int type, rc = 0;

	if (d == NULL) {
		buf_printf(why, "%s: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		/* Dot files are ours (.pw-commit) or kbuild's. */
		if (e->d_name[0] == '.' ||
		    (rel[0] == '\0' && strcmp(e->d_name, OBJ) == 0))
			continue;
		type = e->d_type;
		if (type == DT_UNKNOWN || type == DT_LNK)
			type = fstatat(dirfd(d), e->d_name, &st, 0) != 0
			    ? DT_UNKNOWN
			    : S_ISDIR(st.st_mode) ? DT_DIR
			    : S_ISREG(st.st_mode) ? DT_REG
			                          : DT_UNKNOWN;
		r = rel[0] ? xasprintf("%s/%s", rel, e->d_name)
		           : xstrdup(e->d_name);
		if (type == DT_DIR && e->d_type != DT_LNK)
			rc = walk_inputs(ps, src, r, why);
		else if (type == DT_REG && kernel_config_input_path(r)) {
			ps->v = xreallocarray(ps->v, ps->n + 1, sizeof(char *));
			ps->v[ps->n++] = r;
			continue;
		}
		free(r);
	}
	closedir(d);
	free(dir);
	return rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
kernel_config_inputs(char out[65], const char *src, const char *tools,
    const char *config, const char *base_text, const struct strlist *fragment,
    struct buf *why)
{
	struct buf b = BUF_INIT(CONFIG_MAX * 2), f = BUF_INIT(INPUT_FILE_MAX);
	struct paths ps = { NULL, 0 };
	char hex[65], *path;
	size_t i;
	int rc = -1;

	buf_printf(&b, "config %s\nalign %s\ntools %s\n", config,
	    KERNEL_ALIGN_FLAGS, tools);
	if (base_text != NULL) {
		crypto_sha256_hex(hex, base_text, strlen(base_text));
		buf_printf(&b, "text %s\n", hex);
	}
	for (i = 0; fragment != NULL && i < fragment->n; i++)
		buf_printf(&b, "fragment %s\n", fragment->v[i]);
	if (walk_inputs(&ps, src, "", why) != 0)
		goto out;
	/* readdir's order is the file system's: sort. */
	qsort(ps.v, ps.n, sizeof(char *), cmp_str);
	for (i = 0; i < ps.n; i++) {
		path = xasprintf("%s/%s", src, ps.v[i]);
		if (files_read(&f, path, INPUT_FILE_MAX) != 0) {
			buf_printf(why, "%s: %s", path, strerror(errno));
			free(path);
			goto out;
		}
		free(path);
		crypto_sha256_hex(hex, f.data, f.len);
		buf_printf(&b, "file %s %s\n", ps.v[i], hex);
	}
	if (buf_failed(&b)) {
		buf_printf(why, "config inputs: more than %d bytes of names",
		    CONFIG_MAX * 2);
		goto out;
	}
	crypto_sha256_hex(out, b.data, b.len);
	rc = 0;
out:
	for (i = 0; i < ps.n; i++)
		free(ps.v[i]);
	free(ps.v);
	buf_release(&b);
	buf_release(&f);
	return rc;
}

void
kernel_tool_versions(struct buf *out, const char *compiler)
{
	/* What kbuild's auto.conf.cmd compares ($(CC_VERSION_TEXT), ...)
	 * and the tools Kconfig asks for their versions. */
	const char *const tools[] = { compiler != NULL ? compiler : "gcc", "ld",
		"pahole", "rustc", "bindgen", NULL };
	struct exec_result r;
	struct err e = { 0 };
	size_t i;

	for (i = 0; tools[i] != NULL; i++) {
		char *argv[] = { (char *)tools[i], "--version", NULL };
		struct exec_spec s = EXEC_SPEC_INIT(argv);

		s.timeout_ms = TOOL_MS;
		s.out_max = 4096;
		s.err_max = 4096;
		if (!in_path(tools[i]) || exec_run(&r, &s, &e) != 0) {
			buf_printf(out, "%s none\n", tools[i]);
			err_clear(&e);
			continue;
		}
		buf_printf(out, "%s %.*s (exit %d)\n", tools[i],
		    (int)strcspn(r.out.data, "\n"), r.out.data,
		    r.exited ? r.code : -1);
		exec_result_release(&r);
	}
}

/* The base config as text when it is not a make target (else NULL). */
static int
base_text(
    char **out, const struct kernel_req *rq, const char *src, struct buf *why)
{
	struct buf b = BUF_INIT(CONFIG_MAX);
	char *path;

	*out = NULL;
	if (kernel_config_is_target(rq->config))
		return 0;
	if (strcmp(rq->config, "running") == 0) {
		char *argv[] = { "zcat", "/proc/config.gz", NULL };
		struct exec_spec s = EXEC_SPEC_INIT(argv);
		struct exec_result r;
		struct err e = { 0 };

		s.out_max = CONFIG_MAX;
		s.timeout_ms = 60000;
		if (exec_run(&r, &s, &e) != 0) {
			buf_printf(
			    why, "kernel.config running: %s", err_msg(&e));
			return -1;
		}
		if (!r.exited || r.code != 0 || r.out_truncated) {
			buf_printf(why,
			    "kernel.config running: /proc/config.gz "
			    "unreadable (this kernel lacks "
			    "CONFIG_IKCONFIG_PROC?)"
			    ": %s",
			    r.err.data);
			exec_result_release(&r);
			return -1;
		}
		*out = xstrdup(r.out.data);
		exec_result_release(&r);
		return 0;
	}
	if (rq->config[0] == '/' || strstr(rq->config, "..") != NULL) {
		buf_printf(why,
		    "kernel.config '%s': a make target, \"running\" or a "
		    "path inside the tree",
		    rq->config);
		return -1;
	}
	if (src == NULL)
		return 0; /* the key is computed again once checked out */
	path = xasprintf("%s/%s", src, rq->config);
	if (files_read(&b, path, CONFIG_MAX) != 0) {
		buf_printf(why, "kernel.config '%s': %s: %s", rq->config, path,
		    strerror(errno));
		free(path);
		buf_release(&b);
		return -1;
	}
	free(path);
	*out = xstrdup(b.data);
	buf_release(&b);
	return 0;
}

/* Exports (or updates) the commit into src; 0 or -1 (why). */
static int
prepare_source(struct kernel_image *out, const struct kernel_req *rq,
    const char *src, struct buf *why)
{
	struct gitm_opts o;
	struct gitm_repo *repo;
	char *trees = xasprintf("%s/trees", rq->kdir),
	     *mark = xasprintf("%s/.pw-commit", src), *obj, prev[41],
	     prev_clone[1024];
	struct buf mb = BUF_INIT(2048);
	struct err fe = { 0 };
	enum kernel_src_plan plan;
	double t0 = clock_mono_s();
	int rc = -1;

	memset(&o, 0, sizeof(o));
	o.timeout_ms = 30L * 60 * 1000;
	o.transfer = GITM_XFER_AUTO;
	if (files_mkdir_p(trees) != 0) {
		buf_printf(why, "%s: mkdir: %s", trees, strerror(errno));
		goto out;
	}
	repo = gitm_repo_for_url(trees, rq->url, &o);
	if (checkout_fetch(NULL, repo, rq->commit, &rq->pack, &fe) != 0) {
		buf_printf(why, "%s", err_msg(&fe));
		gitm_repo_free(repo);
		goto out;
	}
	plan = kernel_source_plan(
	    files_read(&mb, mark, 2047) == 0 ? mb.data : NULL, rq->commit,
	    gitm_path(repo), prev, prev_clone, sizeof(prev_clone));
	/* A half-written tree must never be taken for either commit. */
	unlink(mark);
	if (plan == KERNEL_SRC_BORROW &&
	    gitm_borrow_objects(repo, prev_clone) != 0) {
		klog(rq, "kernel source: the clone of %.12s: %s", prev,
		    gitm_errmsg(repo));
		gitm_clearerr(repo);
	}
	if (plan == KERNEL_SRC_SAME)
		rc = 0;
	else if (plan != KERNEL_SRC_EXPORT &&
	    gitm_checkout_update(
	        &out->changed_files, repo, prev, rq->commit, src) == 0)
		rc = 0;
	else {
		if (plan != KERNEL_SRC_EXPORT)
			klog(rq,
			    "kernel source: update from %.12s failed (%s); "
			    "exporting afresh",
			    prev, gitm_errmsg(repo));
		gitm_clearerr(repo);
		plan = KERNEL_SRC_EXPORT;
		if (gitm_checkout(repo, rq->commit, src) == 0)
			rc = 0;
		else
			buf_printf(why, "checkout %.12s: %s", rq->commit,
			    gitm_errmsg(repo));
	}
	out->incremental = rc == 0 && plan != KERNEL_SRC_EXPORT;
	if (rc == 0) {
		obj = xasprintf("%s/" OBJ, src);
		if (files_mkdir_p(obj) != 0) {
			buf_printf(why, "%s: mkdir: %s", obj, strerror(errno));
			rc = -1;
		}
		free(obj);
	}
	/* The source is at the commit whatever the build does next; the
	 * clone it came from is where the next update reads it. */
	buf_reset(&mb);
	buf_printf(&mb, "%s\n%s\n", rq->commit, gitm_path(repo));
	if (rc == 0 && files_write(mark, mb.data, mb.len) != 0) {
		buf_printf(why, "%s: %s", mark, strerror(errno));
		rc = -1;
	}
	if (rc == 0)
		klog(rq, "kernel source %.12s: %s in %.1f s", rq->commit,
		    plan == KERNEL_SRC_EXPORT     ? "exported"
		        : plan == KERNEL_SRC_SAME ? "already there"
		        : plan == KERNEL_SRC_BORROW
		        ? "updated over the previous build (from another clone)"
		        : "updated over the previous build",
		    clock_mono_s() - t0);
	gitm_repo_free(repo);
out:
	buf_release(&mb);
	free(trees);
	free(mark);
	return rc;
}

/*
 * Base config, fragment merge, olddefconfig, dropped-option check.  The
 * first three are skipped when their inputs are those of the tree's last
 * .config (kernel_config_reuse): they took 7-48 s of every incremental
 * build here, for the same .config.
 */
static int
make_config(struct kernel_image *out, const struct kernel_req *rq,
    const char *src, const char *btext, struct buf *why)
{
	char *dotconfig = xasprintf("%s/" OBJ "/.config", src),
	     *frag = xasprintf("%s/" OBJ "/pw-fragment.config", src),
	     *recp = xasprintf("%s/" INPUTS_REC, src), inputs[65], sha[65],
	     cc_arg[96] = "";
	struct buf fb = BUF_INIT(CONFIG_MAX), cfg = BUF_INIT(CONFIG_MAX),
	           dropped = BUF_INIT(CAP_ERRMSG), tools = BUF_INIT(4096),
	           rec = BUF_INIT(4096);
	double t0 = clock_mono_s();
	size_t i;
	int rc = -1, have_rec, have_cfg;

	/* Kconfig asks the compiler what it is (CC_IS_CLANG, ...). */
	if (!cc_default(rq->compiler))
		snprintf(cc_arg, sizeof(cc_arg), "CC=%s", rq->compiler);
	kernel_tool_versions(&tools, rq->compiler);
	if (kernel_config_inputs(inputs, src, tools.data, rq->config, btext,
	        rq->fragment, why) != 0)
		goto out;
	have_rec = files_read(&rec, recp, 4095) == 0;
	have_cfg = files_read(&cfg, dotconfig, CONFIG_MAX) == 0;
	if (have_cfg)
		crypto_sha256_hex(sha, cfg.data, cfg.len);
	if (kernel_config_reuse(
	        have_rec ? rec.data : NULL, inputs, have_cfg ? sha : NULL)) {
		out->config_reused = 1;
		klog(rq,
		    "kernel config: inputs unchanged since the last .config "
		    "(inputs %.12s, .config %.12s): %s, merge_config.sh and "
		    "olddefconfig skipped (%.1f s)",
		    inputs, sha, rq->config, clock_mono_s() - t0);
		goto check;
	}
	klog(rq, "kernel config: %s (inputs %.12s); running the config steps",
	    !have_rec       ? "no record of the last .config's inputs"
	        : !have_cfg ? "no .config"
	                    : "inputs or .config changed",
	    inputs);
	/* A failed step must not leave the old record to a changed tree. */
	if (unlink(recp) != 0 && errno != ENOENT) {
		buf_printf(why, "%s: %s", recp, strerror(errno));
		goto out;
	}
	if (btext == NULL) {
		char *argv[] = { "make", "O=" OBJ, (char *)rq->config,
			cc_arg[0] ? cc_arg : NULL, NULL };

		if ((rc = step(rq, argv, src, NULL, CONFIG_STEP_MS, rq->config,
		         why)) != 0)
			goto out;
	} else if (files_write(dotconfig, btext, strlen(btext)) != 0) {
		buf_printf(why, "%s: %s", dotconfig, strerror(errno));
		goto out;
	}
	for (i = 0; rq->fragment != NULL && i < rq->fragment->n; i++)
		buf_printf(&fb, "%s\n", rq->fragment->v[i]);
	if (files_write(frag, fb.data, fb.len) != 0) {
		buf_printf(why, "%s: %s", frag, strerror(errno));
		rc = -1;
		goto out;
	}
	{
		char *argv[] = { "scripts/kconfig/merge_config.sh", "-m", "-O",
			OBJ, OBJ "/.config", OBJ "/pw-fragment.config", NULL };
		char *argv2[] = { "make", "O=" OBJ, "olddefconfig",
			cc_arg[0] ? cc_arg : NULL, NULL };

		if ((rc = step(rq, argv, src, NULL, CONFIG_STEP_MS,
		         "merge_config.sh", why)) != 0 ||
		    (rc = step(rq, argv2, src, NULL, CONFIG_STEP_MS,
		         "olddefconfig", why)) != 0)
			goto out;
	}
	rc = -1;
	if (files_read(&cfg, dotconfig, CONFIG_MAX) != 0) {
		buf_printf(why, "%s: %s", dotconfig, strerror(errno));
		goto out;
	}
	crypto_sha256_hex(sha, cfg.data, cfg.len);
check:
	rc = -1;
	if (kernel_fragment_dropped(&dropped, cfg.data, rq->fragment) > 0) {
		buf_printf(why,
		    "kernel.fragment: dropped by olddefconfig (a missing "
		    "dependency or an unknown option): %s",
		    dropped.data);
		goto out;
	}
	memcpy(out->config_sha256, sha, sizeof(sha));
	if (!out->config_reused) {
		buf_reset(&rec);
		buf_printf(&rec, "inputs %s\nconfig_sha256 %s\n", inputs, sha);
		if (files_write(recp, rec.data, rec.len) != 0) {
			buf_printf(why, "%s: %s", recp, strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	buf_release(&fb);
	buf_release(&cfg);
	buf_release(&dropped);
	buf_release(&tools);
	buf_release(&rec);
	free(dotconfig);
	free(frag);
	free(recp);
	return rc;
}

static int
run_make(struct kernel_image *out, const struct kernel_req *rq, const char *src,
    struct buf *why)
{
	char jobs[32], lv[64], cc[96];
	char *argv[12], **env = make_env(rq->kdir);
	long nc = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = 0;
	int rc;

	snprintf(jobs, sizeof(jobs), "-j%ld", nc > 0 ? nc : 1);
	snprintf(lv, sizeof(lv), "LOCALVERSION=%s", out->build_id);
	argv[n++] = "make";
	argv[n++] = "O=" OBJ;
	argv[n++] = jobs;
	argv[n++] = "KCFLAGS=" KERNEL_ALIGN_FLAGS;
	argv[n++] = lv;
	argv[n++] = "KBUILD_BUILD_USER=perfwatch";
	argv[n++] = "KBUILD_BUILD_HOST=perfwatch";
	/* gcc without ccache: kbuild's own default, no CC given. */
	if (in_path("ccache") || !cc_default(rq->compiler)) {
		snprintf(cc, sizeof(cc), "CC=%s%s",
		    in_path("ccache") ? "ccache " : "",
		    rq->compiler != NULL ? rq->compiler : "gcc");
		argv[n++] = cc;
	}
	argv[n++] = "bzImage";
	argv[n] = NULL;
	rc = step(rq, argv, src, env, rq->timeout_ms, "make bzImage", why);
	/* Only the last entry is ours; the others are environ's. */
	n = 0;
	while (env[n] != NULL)
		n++;
	free(env[n - 1]);
	free(env);
	return rc;
}

void
kernel_compiler(char *out, size_t n, const char *compiler)
{
	const char *cc = compiler != NULL ? compiler : "gcc";
	char *argv[] = { (char *)cc, "--version", NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };

	out[0] = '\0';
	s.timeout_ms = TOOL_MS;
	s.out_max = 4096;
	s.err_max = 4096;
	if (!in_path(cc) || exec_run(&r, &s, &e) != 0)
		return;
	if (r.exited && r.code == 0)
		snprintf(
		    out, n, "%.*s", (int)strcspn(r.out.data, "\n"), r.out.data);
	exec_result_release(&r);
}

int
kernel_build(
    struct kernel_image *out, const struct kernel_req *rq, struct buf *why)
{
	char key[17], *bdir = NULL, *src = NULL, *idir = NULL, *tmp = NULL,
	              *p = NULL, *btext = NULL;
	struct buf meta = BUF_INIT(4096), rel = BUF_INIT(256);
	double t0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (rq->build_id != NULL) {
		if (!kernel_shared_build_id_ok(rq->build_id)) {
			buf_printf(why,
			    "build id '%.48s': expected -pwb<build>-<instance>",
			    rq->build_id);
			return -1;
		}
		snprintf(
		    out->build_id, sizeof(out->build_id), "%s", rq->build_id);
	} else if (kernel_build_id(out->build_id, sizeof(out->build_id),
	               rq->job, rq->instance) != 0) {
		buf_printf(why,
		    "instance '%.32s': expected 1 to 16 lowercase "
		    "hex digits",
		    rq->instance);
		return -1;
	}
	if (strlen(rq->commit) != 40 ||
	    strspn(rq->commit, "0123456789abcdef") != 40) {
		buf_printf(
		    why, "commit '%.64s': expected 40 hex digits", rq->commit);
		return -1;
	}
	if (!cc_default(rq->compiler) &&
	    (!kernel_compiler_ok(rq->compiler) || !in_path(rq->compiler))) {
		buf_printf(why,
		    "kernel.compiler: '%.64s' is not a compiler in this "
		    "runner's PATH",
		    rq->compiler);
		return -1;
	}
	if (base_text(&btext, rq, NULL, why) != 0)
		return -1;
	/* A file base is keyed by its text once the tree is out (below). */
	kernel_config_key(key, rq->config, btext, rq->fragment, rq->compiler);
	idir = xasprintf("%s/images/%s-%s%s", rq->kdir, rq->commit, key,
	    rq->build_id != NULL ? rq->build_id : "");
	p = xasprintf("%s/meta", idir);
	if (kernel_config_is_target(rq->config) ||
	    strcmp(rq->config, "running") == 0) {
		if (files_read(&meta, p, 4096) == 0 &&
		    kernel_i_meta_get(meta.data, "build_id", out->build_id,
		        sizeof(out->build_id)) == 0 &&
		    kernel_i_meta_get(meta.data, "release", out->release,
		        sizeof(out->release)) == 0 &&
		    kernel_i_meta_get(meta.data, "config_sha256",
		        out->config_sha256, sizeof(out->config_sha256)) == 0) {
			snprintf(
			    out->image, sizeof(out->image), "%s/bzImage", idir);
			snprintf(out->system_map, sizeof(out->system_map),
			    "%s/System.map", idir);
			/* meta names the tool inside the image dir. */
			if (kernel_i_meta_get(meta.data, "gen_cpio",
			        out->gen_cpio, sizeof(out->gen_cpio)) != 0 ||
			    strcmp(out->gen_cpio, "-") == 0)
				out->gen_cpio[0] = '\0';
			else
				snprintf(out->gen_cpio, sizeof(out->gen_cpio),
				    "%s/gen_init_cpio", idir);
			out->cached = 1;
			klog(rq, "kernel %.12s: cached image %s (build id %s)",
			    rq->commit, out->image, out->build_id);
			rc = 0;
			goto out;
		}
	}
	bdir = xasprintf("%s/build-%s", rq->kdir, key);
	src = xasprintf("%s/src", bdir);
	t0 = clock_mono_s();
	if (files_mkdir_p(bdir) != 0) {
		buf_printf(why, "%s: mkdir: %s", bdir, strerror(errno));
		goto out;
	}
	if (prepare_source(out, rq, src, why) != 0)
		goto out;
	if (btext == NULL && base_text(&btext, rq, src, why) != 0)
		goto out;
	if ((rc = make_config(out, rq, src, btext, why)) != 0 ||
	    (rc = run_make(out, rq, src, why)) != 0)
		goto out;
	rc = -1;
	free(p);
	p = xasprintf("%s/" OBJ "/include/config/kernel.release", src);
	if (files_read(&rel, p, 255) != 0) {
		buf_printf(why, "%s: %s", p, strerror(errno));
		goto out;
	}
	while (rel.len > 0 && rel.data[rel.len - 1] == '\n')
		rel.data[--rel.len] = '\0';
	snprintf(out->release, sizeof(out->release), "%s", rel.data);
	out->build_s = clock_mono_s() - t0;
	/* The image directory appears whole or not at all. */
	tmp = xasprintf("%s.tmp%ld", idir, (long)getpid());
	if (files_mkdir_p(tmp) != 0) {
		buf_printf(why, "%s: mkdir: %s", tmp, strerror(errno));
		goto out;
	}
	free(p);
	p = xasprintf("%s/" OBJ "/arch/x86/boot/bzImage", src);
	{
		char *img = xasprintf("%s/bzImage", tmp),
		     *cfg = xasprintf("%s/config", tmp),
		     *dc = xasprintf("%s/" OBJ "/.config", src),
		     *gc = xasprintf("%s/" OBJ "/usr/gen_init_cpio", src),
		     *gct = xasprintf("%s/gen_init_cpio", tmp),
		     *mp = xasprintf("%s/meta", tmp),
		     *sm = xasprintf("%s/" OBJ "/System.map", src),
		     *smt = xasprintf("%s/System.map", tmp);
		int have_gc = access(gc, X_OK) == 0;

		buf_reset(&meta);
		buf_printf(&meta,
		    "build_id %s\nrelease %s\nconfig_sha256 %s\ncommit %s\n"
		    "gen_cpio %s\nbuild_s %.1f\n",
		    out->build_id, out->release, out->config_sha256, rq->commit,
		    have_gc ? "gen_init_cpio" : "-", out->build_s);
		if (files_copy(p, img, 256u << 20) != 0 ||
		    files_copy(dc, cfg, 256u << 20) != 0 ||
		    files_copy(sm, smt, 256u << 20) != 0 ||
		    (have_gc &&
		        (files_copy(gc, gct, 256u << 20) != 0 ||
		            chmod(gct, 0755) != 0)) ||
		    files_write(mp, meta.data, meta.len) != 0)
			buf_printf(why, "saving the image in %s: %s", tmp,
			    strerror(errno));
		free(img);
		free(cfg);
		free(dc);
		free(gc);
		free(gct);
		free(mp);
		free(sm);
		free(smt);
		if (why->len > 0)
			goto out;
		if (have_gc)
			snprintf(out->gen_cpio, sizeof(out->gen_cpio),
			    "%s/gen_init_cpio", idir);
	}
	if (rename(tmp, idir) != 0 && errno != EEXIST && errno != ENOTEMPTY) {
		buf_printf(why, "%s: rename: %s", idir, strerror(errno));
		goto out;
	}
	snprintf(out->image, sizeof(out->image), "%s/bzImage", idir);
	snprintf(
	    out->system_map, sizeof(out->system_map), "%s/System.map", idir);
	klog(rq,
	    "kernel %.12s built: %s, .config sha256 %s, %.1f s (%s, %zu "
	    "files changed)",
	    rq->commit, out->release, out->config_sha256, out->build_s,
	    out->incremental ? "incremental" : "cold", out->changed_files);
	rc = 0;
out:
	buf_release(&meta);
	buf_release(&rel);
	free(bdir);
	free(src);
	free(idir);
	free(tmp);
	free(p);
	free(btext);
	return rc;
}
