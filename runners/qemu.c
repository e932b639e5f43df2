/*
 * boot: qemu (see qemu.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/xalloc.h"
#include "runners/cgroup.h"
#include "runners/qemu.h"

#define KVM_CREATE_VM_IOCTL 0xAE01 /* _IO(KVMIO, 0x01), linux/kvm.h */
#define CONSOLE_TAIL 8192
#define CPIO_MAX (512u << 20)
#define QEMU_MEMORY "512"

/* ---- console protocol ---- */

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int
unhex(struct buf *b, const char *s, size_t n)
{
	size_t i;
	int hi, lo;
	char c;

	if (n % 2 != 0)
		return -1;
	for (i = 0; i < n; i += 2) {
		if ((hi = hexval((unsigned char)s[i])) < 0 ||
		    (lo = hexval((unsigned char)s[i + 1])) < 0)
			return -1;
		c = (char)(hi << 4 | lo);
		buf_add(b, &c, 1);
	}
	return 0;
}

static struct qemu_run *
run_at(struct qemu_result *out, int64_t index, size_t out_max)
{
	size_t i;
	struct qemu_run *r;

	for (i = 0; i < out->nruns; i++)
		if (out->runs[i].index == index)
			return &out->runs[i];
	if (out->nruns >= QEMU_MAX_RUNS)
		return NULL;
	out->runs = xreallocarray(out->runs, out->nruns + 1, sizeof(*r));
	r = &out->runs[out->nruns++];
	memset(r, 0, sizeof(*r));
	r->index = index;
	r->r.out = BUF_INIT(out_max);
	r->r.err = BUF_INIT(out_max);
	return r;
}

void
qemu_result_release(struct qemu_result *q)
{
	size_t i;

	if (q == NULL)
		return;
	for (i = 0; i < q->nruns; i++) {
		exec_result_release(&q->runs[i].r);
		free(q->runs[i].m);
	}
	free(q->runs);
	buf_release(&q->console);
	memset(q, 0, sizeof(*q));
}

static int
parse_line(struct qemu_result *out, char *line, size_t out_max, struct buf *why,
    int lineno)
{
	char kind[16], name[64], unit[16];
	long long idx, code, signo, exited, tmo, nout, nerr;
	double v, secs;
	int off = 0;
	struct qemu_run *r;
	struct buf tmp;

	if (sscanf(line, "PWG1 %15s %n", kind, &off) != 1)
		goto bad;
	if (strcmp(kind, "done") == 0) {
		out->done = 1;
		return 0;
	}
	if (strcmp(kind, "version") == 0 || strcmp(kind, "error") == 0) {
		char *dst = kind[0] == 'v' ? out->version : out->error;
		size_t cap =
		    kind[0] == 'v' ? sizeof(out->version) : sizeof(out->error);

		tmp = BUF_INIT(cap - 1);
		if (unhex(&tmp, line + off, strlen(line + off)) != 0 ||
		    buf_failed(&tmp)) {
			buf_release(&tmp);
			goto bad;
		}
		memcpy(dst, tmp.data, tmp.len + 1);
		buf_release(&tmp);
		return 0;
	}
	if (sscanf(line + off, "%lld", &idx) != 1 || idx < 0 ||
	    (r = run_at(out, idx, out_max)) == NULL)
		goto bad;
	if (strcmp(kind, "out") == 0 || strcmp(kind, "err") == 0) {
		const char *hex = strchr(line + off, ' ');
		struct buf *b = kind[0] == 'o' ? &r->r.out : &r->r.err;
		size_t before = b->len;

		if (hex == NULL)
			goto bad;
		hex++;
		if (unhex(b, hex, strlen(hex)) != 0)
			goto bad;
		if (buf_failed(b) || b->len - before < strlen(hex) / 2)
			*(kind[0] == 'o' ? &r->r.out_truncated
			                 : &r->r.err_truncated) = 1;
		return 0;
	}
	if (strcmp(kind, "metric") == 0) {
		if (sscanf(line + off, "%lld %63s %lf %15s", &idx, name, &v,
		        unit) != 4)
			goto bad;
		if (r->nm >= QEMU_MAX_METRICS)
			return 0;
		r->m = xreallocarray(r->m, r->nm + 1, sizeof(*r->m));
		snprintf(
		    r->m[r->nm].name, sizeof(r->m[r->nm].name), "%s", name);
		snprintf(
		    r->m[r->nm].unit, sizeof(r->m[r->nm].unit), "%s", unit);
		r->m[r->nm++].value = v;
		return 0;
	}
	if (strcmp(kind, "end") == 0) {
		if (sscanf(line + off, "%lld %lld %lld %lld %lld %lf %lld %lld",
		        &idx, &exited, &code, &signo, &tmo, &secs, &nout,
		        &nerr) != 8)
			goto bad;
		if (!r->r.out_truncated && (size_t)nout != r->r.out.len) {
			buf_printf(why,
			    "console line %d: run %lld: %lld stdout bytes "
			    "announced, %zu arrived (console output lost)",
			    lineno, idx, nout, r->r.out.len);
			return -1;
		}
		if (!r->r.err_truncated && (size_t)nerr != r->r.err.len) {
			buf_printf(why,
			    "console line %d: run %lld: %lld stderr bytes "
			    "announced, %zu arrived (console output lost)",
			    lineno, idx, nerr, r->r.err.len);
			return -1;
		}
		r->ended = 1;
		r->r.exited = exited != 0;
		r->r.code = (int)code;
		r->r.signo = (int)signo;
		r->r.timed_out = tmo != 0;
		r->r.duration_s = secs;
		return 0;
	}
bad:
	buf_printf(
	    why, "console line %d: bad guest line \"%.80s\"", lineno, line);
	return -1;
}

int
qemu_parse_console(struct qemu_result *out, const char *text, size_t len,
    size_t out_max, struct buf *why)
{
	const char *p = text, *end = text + len, *nl, *mark;
	struct buf line = BUF_INIT(1u << 20);
	int lineno = 0, rc = 0;
	size_t n;

	memset(out, 0, sizeof(*out));
	out->console = BUF_INIT(CONSOLE_TAIL);
	while (p < end && rc == 0) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		lineno++;
		buf_reset(&line);
		buf_add(&line, p, n);
		while (line.len > 0 && (line.data[line.len - 1] == '\r'))
			line.data[--line.len] = '\0';
		/* Kernel messages may precede a frame on the same line. */
		mark = strstr(line.data, "PWG1 ");
		if (mark != NULL)
			rc =
			    parse_line(out, (char *)mark, out_max, why, lineno);
		else if (out->console.len + n + 1 < CONSOLE_TAIL) {
			buf_add(&out->console, p, n);
			buf_add(&out->console, "\n", 1);
		}
		p = nl ? nl + 1 : end;
	}
	buf_release(&line);
	return rc;
}

/* ---- host side ---- */

int
qemu_kvm_usable(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC), vm;

	if (fd < 0)
		return 0;
	vm = ioctl(fd, KVM_CREATE_VM_IOCTL, 0);
	close(fd);
	if (vm < 0)
		return 0;
	close(vm);
	return 1;
}

int
qemu_accel_pick(struct qemu_accel *ac, int (*probe)(void))
{
	if (ac->state == QEMU_ACCEL_UNKNOWN) {
		if (probe())
			ac->state = QEMU_ACCEL_KVM_UNTRIED;
		else {
			ac->state = QEMU_ACCEL_TCG;
			snprintf(ac->why, sizeof(ac->why),
			    "/dev/kvm cannot create a VM here");
		}
	}
	return ac->state != QEMU_ACCEL_TCG;
}

int
qemu_accel_after_kvm(
    struct qemu_accel *ac, int failed_early, const char *qemu_err)
{
	char *p;

	if (!failed_early) {
		ac->state = QEMU_ACCEL_KVM;
		return 0;
	}
	ac->state = QEMU_ACCEL_TCG;
	snprintf(ac->why, sizeof(ac->why), "qemu with KVM failed: %.200s",
	    qemu_err && qemu_err[0] ? qemu_err : "(no message)");
	/* One line in the logs: qemu's stderr has several. */
	for (p = ac->why; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	while (p > ac->why && p[-1] == ' ')
		*--p = '\0';
	return 1;
}

void
qemu_accel_describe(char *out, size_t n, const struct qemu_accel *ac)
{
	if (ac->state == QEMU_ACCEL_KVM)
		snprintf(out, n, "KVM");
	else if (ac->state == QEMU_ACCEL_TCG)
		snprintf(out, n, "TCG: %s", ac->why);
	else
		snprintf(out, n, "not decided yet");
}

int
qemu_is_static(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i, r = 1;

	if (fd < 0)
		return -1;
	if (read(fd, &eh, sizeof(eh)) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64) {
		close(fd);
		return -1;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph),
		        (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
		    (ssize_t)sizeof(ph)) {
			r = -1;
			break;
		}
		if (ph.p_type == PT_INTERP) {
			r = 0;
			break;
		}
	}
	close(fd);
	return r;
}

/* dir/name when executable, else NULL. */
static char *
exe_in(const char *dir, size_t dlen, const char *name)
{
	char *p = xasprintf("%.*s/%s", (int)dlen, dir, name);

	if (access(p, X_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/* A benchmark binary for the guest: the guest dir first, then PATH. */
static char *
find_prog(const char *guest_dir, const char *name)
{
	const char *path = getenv("PATH"), *p, *c;
	char *f;

	if (strchr(name, '/') != NULL)
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	if ((f = exe_in(guest_dir, strlen(guest_dir), name)) != NULL)
		return f;
	for (p = path ? path : "/usr/bin:/bin"; *p; p = c) {
		c = strchr(p, ':');
		if (c == NULL)
			c = p + strlen(p);
		if ((f = exe_in(p, (size_t)(c - p), name)) != NULL)
			return f;
		if (*c == ':')
			c++;
	}
	return NULL;
}

static int
write_all(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int rc;

	if (f == NULL)
		return -1;
	rc = fwrite(data, 1, len, f) == len ? 0 : -1;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* argv as NUL-separated strings in a file. */
static int
write_argv(const char *path, char *const *argv)
{
	struct buf b = BUF_INIT(CAP_RAW_OUTPUT);
	size_t i;
	int rc;

	for (i = 0; argv[i] != NULL; i++)
		buf_add(&b, argv[i], strlen(argv[i]) + 1);
	rc = buf_failed(&b) ? -1 : write_all(path, b.data, b.len);
	buf_release(&b);
	return rc;
}

static int
space_free(const char *s)
{
	return strpbrk(s, " \t\n\r") == NULL;
}

/* One benchmark binary into the spec (once per name). */
static int
add_prog(struct buf *spec, struct buf *seen, const char *guest_dir,
    const char *name, struct buf *why)
{
	const char *base = strrchr(name, '/');
	char *f;
	int st;

	base = base ? base + 1 : name;
	if (strstr(seen->data, base) != NULL)
		return 0;
	if ((f = find_prog(guest_dir, name)) == NULL) {
		buf_printf(why,
		    "boot qemu: benchmark '%s' found neither in %s nor in PATH",
		    name, guest_dir);
		return -1;
	}
	if ((st = qemu_is_static(f)) != 1) {
		buf_printf(why,
		    "boot qemu: %s %s: the guest has no shared libraries, "
		    "benchmarks must be static executables (put one in %s)",
		    f,
		    st == 0 ? "is dynamically linked" : "is not an ELF64 file",
		    guest_dir);
		free(f);
		return -1;
	}
	if (!space_free(f) || !space_free(base)) {
		buf_printf(why, "boot qemu: '%s': white space in the path", f);
		free(f);
		return -1;
	}
	buf_printf(spec, "file /bin/%s %s 0755 0 0\n", base, f);
	buf_printf(seen, "|%s|", base);
	free(f);
	return 0;
}

/* Writes dir/initramfs.cpio; 0 or -1 (why). */
static int
make_initramfs(const struct qemu_req *rq, struct buf *why)
{
	struct buf spec = BUF_INIT(1u << 20), seen = BUF_INIT(1u << 16),
	           job = BUF_INIT(1u << 16);
	char *guest = xasprintf("%s/perfwatch-guest", rq->guest_dir),
	     *specf = xasprintf("%s/initramfs.list", rq->dir),
	     *jobf = xasprintf("%s/job", rq->dir),
	     *cpio = xasprintf("%s/initramfs.cpio", rq->dir), *p;
	const char *busybox = "/bin/busybox";
	char *argv[] = { (char *)rq->gen_cpio, specf, NULL };
	struct exec_spec s = EXEC_SPEC_INIT(argv);
	struct exec_result r;
	struct err e = { 0 };
	size_t i;
	int rc = -1;

	if (!space_free(rq->dir) || !space_free(rq->guest_dir)) {
		buf_printf(why, "boot qemu: white space in %s or %s", rq->dir,
		    rq->guest_dir);
		goto out;
	}
	if (qemu_is_static(guest) != 1) {
		buf_printf(why,
		    "boot qemu: %s missing or not static (make builds it "
		    "into build/bin/guest/)",
		    guest);
		goto out;
	}
	if (qemu_is_static(busybox) != 1) {
		buf_printf(why,
		    "boot qemu: %s missing or not static (install "
		    "busybox-static)",
		    busybox);
		goto out;
	}
	buf_printf(&spec,
	    "dir /dev 0755 0 0\nnod /dev/console 0600 0 0 c 5 1\n"
	    "nod /dev/null 0666 0 0 c 1 3\ndir /bin 0755 0 0\n"
	    "dir /proc 0755 0 0\ndir /sys 0755 0 0\ndir /tmp 01777 0 0\n"
	    "dir /pw 0755 0 0\nfile /init %s 0755 0 0\n"
	    "file /bin/busybox %s 0755 0 0\nslink /bin/sh busybox 0777 0 0\n"
	    "file /pw/job %s 0644 0 0\n",
	    guest, busybox, jobf);
	buf_printf(&seen, "|perfwatch-guest|busybox|sh|");
	buf_printf(&job,
	    "cgroup %s\nmemory_max %" PRId64 "\nmemory_high %" PRId64
	    "\ntimeout_ms %" PRId64 "\n",
	    rq->cgroup_path, rq->memory_max, rq->memory_high,
	    rq->run_timeout_ms);
	if (rq->server_argv != NULL) {
		p = xasprintf("%s/server.argv", rq->dir);
		if (add_prog(&spec, &seen, rq->guest_dir, rq->server_argv[0],
		        why) != 0 ||
		    write_argv(p, rq->server_argv) != 0) {
			if (why->len == 0)
				buf_printf(why, "%s: %s", p, strerror(errno));
			free(p);
			goto out;
		}
		buf_printf(&spec, "file /pw/server %s 0644 0 0\n", p);
		buf_printf(&job, "server 1\n");
		free(p);
	}
	for (i = 0; i < rq->nruns; i++) {
		p = xasprintf(
		    "%s/run-%" PRId64 ".argv", rq->dir, rq->run_index[i]);
		if (add_prog(&spec, &seen, rq->guest_dir, rq->run_argv[i][0],
		        why) != 0 ||
		    write_argv(p, rq->run_argv[i]) != 0) {
			if (why->len == 0)
				buf_printf(why, "%s: %s", p, strerror(errno));
			free(p);
			goto out;
		}
		buf_printf(&spec, "file /pw/run-%" PRId64 " %s 0644 0 0\n",
		    rq->run_index[i], p);
		buf_printf(&job, "run %" PRId64 "\n", rq->run_index[i]);
		free(p);
	}
	if (buf_failed(&spec) || buf_failed(&job) ||
	    write_all(specf, spec.data, spec.len) != 0 ||
	    write_all(jobf, job.data, job.len) != 0) {
		buf_printf(
		    why, "boot qemu: writing %s: %s", specf, strerror(errno));
		goto out;
	}
	s.out_max = CPIO_MAX;
	s.timeout_ms = 120000;
	if (exec_run(&r, &s, &e) != 0) {
		buf_printf(why, "boot qemu: %s: %s", rq->gen_cpio, err_msg(&e));
		goto out;
	}
	if (!r.exited || r.code != 0 || r.out_truncated)
		buf_printf(
		    why, "boot qemu: gen_init_cpio failed: %s", r.err.data);
	else if (write_all(cpio, r.out.data, r.out.len) != 0)
		buf_printf(why, "boot qemu: %s: %s", cpio, strerror(errno));
	else
		rc = 0;
	exec_result_release(&r);
out:
	buf_release(&spec);
	buf_release(&seen);
	buf_release(&job);
	free(guest);
	free(specf);
	free(jobf);
	free(cpio);
	return rc;
}

int
qemu_boot(struct qemu_result *out, const struct qemu_req *rq, struct buf *why)
{
	char *cpio = xasprintf("%s/initramfs.cpio", rq->dir);
	char smp[16];
	char *argv[24];
	struct exec_spec s;
	struct exec_result r;
	struct err e = { 0 };
	size_t n = 0, cap;
	int rc = -1, kvm, tried;
	long nc = sysconf(_SC_NPROCESSORS_ONLN);

	memset(out, 0, sizeof(*out));
	if (rq->gen_cpio == NULL || rq->gen_cpio[0] == '\0') {
		buf_printf(why,
		    "boot qemu: the kernel has no usr/gen_init_cpio (needs "
		    "CONFIG_BLK_DEV_INITRD=y)");
		goto out;
	}
	if (make_initramfs(rq, why) != 0)
		goto out;
	tried = rq->accel->state == QEMU_ACCEL_UNKNOWN ||
	    rq->accel->state == QEMU_ACCEL_KVM_UNTRIED;
	kvm = qemu_accel_pick(rq->accel, qemu_kvm_usable);
	for (;;) {
		/* icount (TCG) runs one vCPU thread anyway. */
		snprintf(smp, sizeof(smp), "%d", nc > 1 && kvm ? 2 : 1);
		n = 0;
		argv[n++] = "qemu-system-x86_64";
		argv[n++] = "-m";
		argv[n++] = QEMU_MEMORY;
		argv[n++] = "-smp";
		argv[n++] = smp;
		argv[n++] = "-accel";
		argv[n++] = kvm ? "kvm" : "tcg";
		if (kvm) {
			argv[n++] = "-cpu";
			argv[n++] = "host";
		} else {
			/*
			 * TCG: guest time from the instruction count, not the
			 * host clock, so what the guest measures does not
			 * depend on how busy the host is (a shared 2-core host
			 * swung tcp_rr 20x between two boots of one kernel).
			 */
			argv[n++] = "-icount";
			argv[n++] = "shift=1,sleep=off";
		}
		argv[n++] = "-nographic";
		argv[n++] = "-no-reboot";
		argv[n++] = "-kernel";
		argv[n++] = (char *)rq->image;
		argv[n++] = "-initrd";
		argv[n++] = cpio;
		argv[n++] = "-append";
		argv[n++] = "console=ttyS0 panic=-1 quiet loglevel=1";
		argv[n] = NULL;
		s = EXEC_SPEC_INIT(argv);
		s.cwd = rq->dir;
		s.timeout_ms = rq->boot_timeout_ms +
		    (int64_t)rq->nruns * rq->run_timeout_ms + 5000;
		cap =
		    (rq->nruns + 1) * (rq->out_max * 2 + 4096) * 2 + (1u << 20);
		s.out_max = cap;
		s.err_max = 1u << 16;
		s.cancel = rq->cancel;
		if (exec_run(&r, &s, &e) != 0) {
			buf_printf(why, "boot qemu: %s", err_msg(&e));
			goto out;
		}
		/*
		 * /dev/kvm may create a VM and still not run one (qemu.h):
		 * qemu fails before the guest says anything.  Boot again
		 * under TCG, and so does every later boot of this process.
		 */
		if (kvm && !r.cancelled &&
		    qemu_accel_after_kvm(rq->accel,
		        !r.timed_out && !(r.exited && r.code == 0) &&
		            strstr(r.out.data, "PWG1 ") == NULL,
		        r.err.data)) {
			snprintf(out->kvm_error, sizeof(out->kvm_error),
			    "%.200s", r.err.data);
			exec_result_release(&r);
			kvm = 0;
			continue;
		}
		break;
	}
	if (r.cancelled) {
		exec_result_release(&r);
		rc = 1;
		goto out;
	}
	{
		char kerr[sizeof(out->kvm_error)];

		memcpy(kerr, out->kvm_error, sizeof(kerr));
		if (qemu_parse_console(
		        out, r.out.data, r.out.len, rq->out_max, why) != 0) {
			exec_result_release(&r);
			goto out;
		}
		memcpy(out->kvm_error, kerr, sizeof(kerr));
	}
	out->kvm = kvm;
	/* The boot that took the process out of UNKNOWN or KVM_UNTRIED. */
	out->accel_decided = tried &&
	    (rq->accel->state == QEMU_ACCEL_KVM ||
	        rq->accel->state == QEMU_ACCEL_TCG);
	out->boot_s = r.duration_s;
	if (r.timed_out && !out->done)
		buf_printf(why,
		    "boot qemu: timed out after %.0f s (boot timeout %" PRId64
		    " s + %zu runs); console tail:\n%s",
		    r.duration_s, rq->boot_timeout_ms / 1000, rq->nruns,
		    out->console.data);
	else if (!out->done)
		buf_printf(why,
		    "boot qemu: the guest did not finish (qemu %s%s%s); "
		    "console tail:\n%s",
		    r.exited ? "exited" : "was killed", r.err.len ? ": " : "",
		    r.err.data, out->console.data);
	else
		rc = 0;
	exec_result_release(&r);
out:
	free(cpio);
	return rc;
}
