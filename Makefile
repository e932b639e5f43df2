# perfwatch: one non-recursive Makefile.
#
#   make            build perfwatchd, perfwatch-runner, perfwatch into $(OUT)/bin
#   make check      build everything with ASan+UBSan and run every test
#   make check-pg   the store's tests against a PostgreSQL server of their own
#   make deps       install the Debian packages the build, tests and demo need
#   make demo       run the service end to end on this machine
#   make check-fresh  make demo + make check in a fresh Debian 12 chroot
#   make install    PREFIX=/usr/local DESTDIR= (as root: and the accounts)
#   make format-check, make lint, make bench, make eval-stats, make fuzz,
#   make check-tsan
#   make check-deploy  the deployment test across network namespaces (root)
#   WERROR=1        make warnings errors (the project's CI, .ci/run)
#
# Sources are found by directory: every .c in a component folder is part of
# the program library, except main.c files, which make the programs.

OUT	?= build
PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
# Where install-users makes the accounts: this host, unless DESTDIR says
# the install is a package's (empty: none made).
USERS_ROOT ?= $(if $(DESTDIR),,/)
SYSCONFDIR ?= /etc

CC	?= cc
ifeq ($(V),1)
Q	=
else
Q	= @
endif
PKGS	 = libgit2 libmicrohttpd libcurl yaml-0.1 sqlite3 libpq jansson libcrypto
# Evaluated when this make starts: the targets that install packages first
# (demo, check) run the build in a sub-make, which reads them again after
# `make deps` has run. A build with no libraries found stops here instead
# of failing to link with hundreds of undefined references.
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
NO_BUILD_GOALS = deps clean format format-check check-fresh
ifneq ($(filter-out $(NO_BUILD_GOALS) demo check,$(or $(MAKECMDGOALS),all)),)
ifeq ($(PKG_LIBS),)
$(error pkg-config finds none of $(PKGS): run `make deps` (as root) first; \
  pkg-config says: $(shell pkg-config --libs $(PKGS) 2>&1 | head -n 1))
endif
endif

WARN	 = -Wall -Wextra -Wpedantic -Wshadow -Wformat=2 -Wmissing-prototypes \
	   -Wno-missing-field-initializers -Wstrict-prototypes -Wvla
# Warnings fail the build only where asked (WERROR=1, as .ci/run does):
# a user's environment (CI=true on every GitHub or GitLab job) does not
# turn a new compiler's new warning into a broken build.
ifeq ($(WERROR),1)
WARN	+= -Werror
endif
BASE_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
	   -I. $(PKG_CFLAGS) $(WARN) -g
CFLAGS	?= -O2
LDLIBS	 = $(PKG_LIBS) -lpthread -lm

SAN_FLAGS = -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	    -fno-omit-frame-pointer

DIRS	 = common git config analysis store daemon runners runners/bench web cli perfwatchd
ALL_SRCS := $(foreach d,$(DIRS),$(wildcard $(d)/*.c))
MAIN_SRCS = perfwatchd/main.c runners/main.c cli/main.c runners/tcp_rr_main.c
LIB_SRCS := $(filter-out $(MAIN_SRCS),$(ALL_SRCS))
HDRS	:= $(foreach d,$(DIRS),$(wildcard $(d)/*.h)) tests/unit/test.h

PROGS	 = perfwatchd perfwatch-runner perfwatch perfwatch-tcp-rr
perfwatchd_MAIN = perfwatchd/main.c
perfwatch-runner_MAIN = runners/main.c
perfwatch_MAIN = cli/main.c
perfwatch-tcp-rr_MAIN = runners/tcp_rr_main.c

UNIT_SRCS := $(wildcard tests/unit/*_test.c)
UNIT_NAMES := $(UNIT_SRCS:tests/unit/%.c=%)

# Two flavours: $(OUT)/rel (optimised) and $(OUT)/san (sanitizers, tests).
REL	 = $(OUT)/rel
SAN	 = $(OUT)/san

all: $(PROGS:%=$(OUT)/bin/%)

$(OUT)/bin/%: $(REL)/bin/%
	@mkdir -p $(@D)
	$(Q)cp -f $< $@

# Layers (docs/ARCHITECTURE.md): each folder is one archive,
# and may use only the folders its EDGES_ line names.  A program links
# its archives in the order of its _LAYERS line (users before what they
# use), so a call against the edges fails to link; tests/lint/layers.sh
# (make lint, and t0702 in make check) checks every #include against the
# same edges.  git (the layer on libgit2) uses common alone; daemon and
# runners use it.  store (all SQL, the one user of SQLite) uses common
# alone; daemon, web and cli use it.  web (the HTTP surface) uses
# daemon, never the reverse; perfwatchd/ holds only the daemon's main.c,
# the composition root that starts both (docs/ARCHITECTURE.md).
EDGES_common	    =
EDGES_git	    = common
EDGES_store	    = common
EDGES_config	    = common
EDGES_analysis	    = common
EDGES_runners/bench = common
EDGES_runners	    = runners/bench config git common
EDGES_daemon	    = store analysis config git common
EDGES_web	    = daemon store analysis config common
EDGES_cli	    = daemon store runners/bench analysis config common
EDGES_perfwatchd    = web daemon store analysis config git common
perfwatchd_LAYERS	= web daemon store analysis config git common
perfwatch-runner_LAYERS	= runners runners/bench config git common
perfwatch_LAYERS	= cli daemon store runners/bench analysis config common
perfwatch-tcp-rr_LAYERS	= runners common
layer_lib = $(1)/lib/$(subst /,-,$(2)).a
layer_srcs = $(filter-out $(MAIN_SRCS),$(wildcard $(1)/*.c))
layer_link = $(foreach l,$(2),$(call layer_lib,$(1),$(l)))

# Objects depend on the headers they include (-MMD -MP), not on all.
DEPFLAGS = -MMD -MP

define flavour
$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo '  CC      $$@')
	$$(Q)$$(CC) $$(BASE_CFLAGS) $$(DEPFLAGS) $(2) -c -o $$@ $$<

# Everything in one archive: the unit tests and benchmarks link it.  The
# folders are prerequisites too: a deleted or moved source changes its
# folder, and the archive is made again without the stale object.
$(1)/libperfwatch.a: $$(LIB_SRCS:%.c=$(1)/obj/%.o) $$(DIRS)
	@rm -f $$@
	$$(Q)ar rcs $$@ $$(filter %.o,$$^)

$(foreach d,$(DIRS),$(call layer_rule,$(1),$(d)))
endef

define layer_rule
$(call layer_lib,$(1),$(2)): $$(patsubst %.c,$(1)/obj/%.o,$$(call layer_srcs,$(2))) $(2)
	@mkdir -p $$(@D)
	@rm -f $$@
	$$(Q)ar rcs $$@ $$(filter %.o,$$^)

endef

define program
$(1)/bin/$(2): $(1)/obj/$$($(2)_MAIN:.c=.o) $$(foreach l,$$($(2)_LAYERS),$$(call layer_lib,$(1),$$(l)))
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo '  LD      $$@')
	$$(Q)$$(CC) $(3) -o $$@ $(1)/obj/$$($(2)_MAIN:.c=.o) \
	    $$(call layer_link,$(1),$$($(2)_LAYERS)) $$(LDFLAGS) $$(LDLIBS)
endef

# --version prints the tree built (git describe; "unknown" outside git):
# common/version.c alone gets it, and is built again when it changes.
PW_VERSION := $(shell git describe --always --dirty 2>/dev/null | tr -cd '[:alnum:]._+-')
PW_VERSION := $(or $(PW_VERSION),unknown)
$(REL)/obj/common/version.o $(SAN)/obj/common/version.o: $(OUT)/version.txt
$(REL)/obj/common/version.o $(SAN)/obj/common/version.o: \
    BASE_CFLAGS += -DPERFWATCH_VERSION='"$(PW_VERSION)"'
$(OUT)/version.txt: FORCE
	@mkdir -p $(@D)
	@echo '$(PW_VERSION)' | cmp -s - $@ || echo '$(PW_VERSION)' >$@
.PHONY: FORCE
FORCE:

$(eval $(call flavour,$(REL),$$(CFLAGS)))
$(eval $(call flavour,$(SAN),$$(SAN_FLAGS)))

$(foreach p,$(PROGS),$(eval $(call program,$(REL),$(p),$$(CFLAGS))))
$(foreach p,$(PROGS),$(eval $(call program,$(SAN),$(p),$$(SAN_FLAGS))))

$(SAN)/tests/%_test: $(SAN)/obj/tests/unit/%_test.o $(SAN)/obj/tests/unit/test.o $(SAN)/libperfwatch.a
	@mkdir -p $(@D)
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(SAN_FLAGS) -o $@ $< $(SAN)/obj/tests/unit/test.o $(SAN)/libperfwatch.a $(LDFLAGS) $(LDLIBS)

check-build: $(PROGS:%=$(SAN)/bin/%) $(UNIT_NAMES:%=$(SAN)/tests/%)

# The benchmarks' own tools (make bench-web), built with the tests and
# run on a small database by t0705, so a store change that breaks them
# fails make check instead of the next benchmark.
BENCH_TOOLS = web_gen read_bench
$(SAN)/tests/bench/%: $(SAN)/obj/tests/bench/%.o $(SAN)/libperfwatch.a
	@mkdir -p $(@D)
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(SAN_FLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

check-build: $(BENCH_TOOLS:%=$(SAN)/tests/bench/%)

-include $(shell find $(OUT) -path $(OUT)/fresh -prune -o -path '*/obj/*.d' \
	-type f -print 2>/dev/null)
# An object built before -MMD (no .d beside it) depends on every header,
# once, so an old build tree is not left with stale objects.
DEP_OBJS = $(foreach f,$(REL) $(SAN),$(patsubst %.c,$(f)/obj/%.o,\
	$(ALL_SRCS) $(UNIT_SRCS) tests/unit/test.c))
$(foreach o,$(DEP_OBJS),$(if $(wildcard $(o:.o=.d)),,$(if $(wildcard \
	$(o)),$(eval $(o): $(HDRS)))))

# THE test command: unit tests, then end-to-end tests, one summary line.
check: deps
	@$(MAKE) --no-print-directory check-build
	@OUT=$(OUT) tests/run

# A deployment across network namespaces, HTTPS and runners as nobody,
# with the security findings replayed (root; not part of check).
check-deploy: check-build
	@PERFWATCH_BIN=$(abspath $(SAN))/bin tests/deploy/fleet-deploy.sh

check-only: check-build
	@OUT=$(OUT) tests/run

# make check-pg: the store's unit suite and the end-to-end tests that
# exercise the store, against a PostgreSQL server the tests start in a
# temporary directory, and two daemons on it killed under 200 runners'
# load (t0368) (tests/check-pg.sh; not part of make check).
check-pg: check-build $(REL)/bench/api_load
	@OUT=$(OUT) tests/check-pg.sh

deps:
	@scripts/deps.sh

# deps, then a new make for the build: pkg-config is read after install.
demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

# The README's two commands in a debootstrapped Debian 12 chroot, from
# nothing (slow: ~20 min; not part of make check). scripts/check-fresh.sh.
check-fresh:
	@OUT=$(OUT) scripts/check-fresh.sh

install: all install-units install-users
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)/perfwatch/jobs
	install -m 755 $(PROGS:%=$(OUT)/bin/%) $(DESTDIR)$(BINDIR)
	install -m 644 config/examples/*.yaml $(DESTDIR)$(SYSCONFDIR)/perfwatch/
	install -m 644 config/examples/jobs/*.yaml \
	    $(DESTDIR)$(SYSCONFDIR)/perfwatch/jobs/

install-units:
	install -d $(DESTDIR)$(SYSTEMDDIR)
	sed 's|@BINDIR@|$(BINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    dist/systemd/perfwatchd.service.in \
	    > $(DESTDIR)$(SYSTEMDDIR)/perfwatchd.service
	sed 's|@BINDIR@|$(BINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    dist/systemd/perfwatch-runner.service.in \
	    > $(DESTDIR)$(SYSTEMDDIR)/perfwatch-runner.service

# The accounts the units run as (dist/sysusers.d/perfwatch.conf): made
# once on this host when run as root, left as they are after.
install-users:
	install -d $(DESTDIR)$(SYSUSERSDIR)
	install -m 644 dist/sysusers.d/perfwatch.conf $(DESTDIR)$(SYSUSERSDIR)/
	@dist/mkusers.sh '$(USERS_ROOT)' dist/sysusers.d/perfwatch.conf

FMT_SRCS = $(ALL_SRCS) $(HDRS) $(UNIT_SRCS) tests/unit/test.c \
	   $(wildcard tests/fuzz/*.c tests/bench/*.c )

format:
	clang-format -i $(FMT_SRCS)

format-check:
	@clang-format --dry-run --Werror $(FMT_SRCS) && echo "format OK"

clean:
	rm -rf $(OUT)

.PHONY: all check check-deploy check-build check-fresh check-pg deps demo install install-units install-users format format-check clean
.SECONDARY:

# ---- fuzzing (docs/FUZZ.md): libFuzzer targets, tests/fuzz ----
#   make fuzz         builds every target and runs each for FUZZ_TIME
#                     seconds (default 60), one after the other, on a
#                     corpus seeded by tests/fuzz/seeds.sh (tests/data,
#                     tests/fixtures, the regression inputs kept in
#                     tests/data/fuzz/<target>/); FUZZ_TARGETS picks some.
#   make fuzz-build   builds them only ($(OUT)/fuzz/<target>_fuzz);
#                     check-build does when clang has libFuzzer, and
#                     tests/e2e/t0950-fuzz-smoke.sh replays each seed
#                     corpus once (no mutation) in make check.
# Library code is compiled with -fsanitize=fuzzer-no-link into its own
# archive; it leaves out web/httpd.c (libmicrohttpd: api_fuzz answers
# the handlers' httpd_* calls itself) and web/api.c (which api_fuzz
# includes to reach its static dispatch).
FUZZ_CC	  ?= clang
FUZZ_TIME ?= 60
FUZZ_ALL   = bench config mail api patch qemu perfstat
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_DIR   = $(OUT)/fuzz
FUZZ_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	     -fno-sanitize-recover=all
HAVE_LIBFUZZER := $(shell echo 'int LLVMFuzzerTestOneInput(const char *d, \
	unsigned long n){return 0;}' | $(FUZZ_CC) -x c -fsanitize=fuzzer \
	-o /dev/null - 2>/dev/null && echo yes)
FUZZ_LIB_SRCS := $(filter-out web/api.c web/httpd.c,$(LIB_SRCS))

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo '  FUZZCC  $@')
	$(Q)$(FUZZ_CC) $(BASE_CFLAGS) $(DEPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link \
	    -c -o $@ $<

$(FUZZ_DIR)/libfuzz.a: $(FUZZ_LIB_SRCS:%.c=$(FUZZ_DIR)/obj/%.o)
	@rm -f $@
	$(Q)ar rcs $@ $^

# api_fuzz.c includes web/api.c.
$(FUZZ_DIR)/obj/tests/fuzz/api_fuzz.o: web/api.c

$(FUZZ_DIR)/%_fuzz: $(FUZZ_DIR)/obj/tests/fuzz/%_fuzz.o $(FUZZ_DIR)/libfuzz.a
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LDFLAGS) \
	    $(LDLIBS)

fuzz-build: $(FUZZ_ALL:%=$(FUZZ_DIR)/%_fuzz)

fuzz: fuzz-build
	@OUT=$(OUT) tests/fuzz/run.sh $(FUZZ_TIME) $(FUZZ_TARGETS)

ifeq ($(HAVE_LIBFUZZER),yes)
check-build: fuzz-build
endif

.PHONY: fuzz fuzz-build
# ---- ThreadSanitizer (docs/FUZZ.md): make check-tsan ----
# The daemon, the runner, the tools and the unit tests built with
# -fsanitize=thread under $(OUT)/tsan (a make of its own, so nothing is
# mixed with the ASan objects), then the unit tests and the e2e tests
# that run the daemon's threads: the API and its libmicrohttpd pool
# (t03*), runner and spool (t035*), watcher and series (t041*-t043*),
# verdict worker (t051*), canary worker (t0672), three runners in network
# namespaces (t0680), alert worker (t080*), bisect worker (t085*).  A race
# stops the test (halt_on_error); tests/tsan.supp holds the library false
# positives.
# Not part of make check.  TSan maps its shadow at fixed addresses: with
# more than 28 bits of mmap randomisation (some newer kernels) it dies at
# start, so the run is wrapped in setarch -R there.
TSAN_FLAGS = -O1 -g -fsanitize=thread -fno-omit-frame-pointer
TSAN_TESTS ?= _test t03 t041 t042 t043 t051 t0672 t0680 t0712 t080 t085
TSAN_WRAP := $(shell [ "$$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || \
	echo 0)" -gt 28 ] && echo "setarch $$(uname -m) -R")

tsan-build: $(PROGS:%=$(SAN)/bin/%) $(UNIT_NAMES:%=$(SAN)/tests/%)

check-tsan: deps
	@$(MAKE) --no-print-directory OUT=$(OUT)/tsan SAN_FLAGS='$(TSAN_FLAGS)' \
	    tsan-build
	@rm -rf $(OUT)/tsan/reports && mkdir -p $(OUT)/tsan/reports
	@OUT=$(OUT)/tsan SAN_LOG_DIR=$(abspath $(OUT))/tsan/reports \
	    TEST_TIMEOUT=$${TEST_TIMEOUT:-3600} \
	    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 log_path=$(abspath $(OUT))/tsan/reports/report suppressions=$(CURDIR)/tests/tsan.supp" \
	    $(TSAN_WRAP) tests/run $(TSAN_TESTS)

.PHONY: check-tsan tsan-build

# ---- daemon (store, sched, api): API load benchmark ----
# make bench-api: uploads/s with 8 clients x 20 metrics, claim/heartbeat
# p99 under load, daemon RSS after 100,000 runs (tests/bench/api_bench.sh).
# make bench-api BACKEND=all (or pg): 200 runners against SQLite with one
# daemon, PostgreSQL with one and with two daemons (a server of the
# bench's own, tests/lib_pg.sh), alternated in ROUNDS rounds, side by side.
$(REL)/bench/api_load: tests/bench/api_load.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< -lpthread

# The same load tool with runners named b1.. instead of r1..: the second
# daemon's load in BACKEND=pg (one name on two daemons is one host).
$(REL)/bench/api_load_b: tests/bench/api_load.c
	@mkdir -p $(@D)
	$(Q)sed 's/r%d/b%d/g' $< >$@.c && grep -q '"{\\"name\\":\\"b%d' $@.c || \
	    { echo "api_load.c names its runners otherwise: fix $@'s rule"; exit 1; }
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $@.c -lpthread

# make bench-api REF=main: the same load against the optimised build of
# REF too (git archive of REF into $(OUT)/bench-ref, built there once per
# commit), alternating ref new ref new (ROUNDS=2 pairs).
bench-api: $(REL)/bin/perfwatchd $(REL)/bench/api_load $(REL)/bench/api_load_b
ifneq ($(REF),)
	@set -e; d=$(OUT)/bench-ref; c=$$(git rev-parse --verify '$(REF)^{commit}'); \
	if [ "$$(cat $$d/commit 2>/dev/null)" != "$$c" ]; then \
		rm -rf $$d && mkdir -p $$d/src; \
		git archive "$$c" | tar -x -C $$d/src; \
		echo "building the reference $(REF) ($$c) in $$d"; \
		nice -n 10 $(MAKE) --no-print-directory -C $$d/src OUT=build \
		    build/rel/bin/perfwatchd >$$d/build.log 2>&1 || \
		    { tail -20 $$d/build.log; exit 1; }; \
		echo "$$c" >$$d/commit; \
	fi; \
	REF_BIN=$(abspath $(OUT))/bench-ref/src/build/rel/bin OUT=$(OUT) \
	    BACKEND=$(BACKEND) tests/bench/api_bench.sh
else
	@OUT=$(OUT) BACKEND=$(BACKEND) tests/bench/api_bench.sh
endif

.PHONY: bench-api

# --- web: dashboard lint (also run by tests/e2e/t0700-web-lint.sh)
# and its benchmark: wrk at 64 connections against every page
# kind and read route at 100,000 and 1,000,000 stored runs, next to nginx
# serving the same bytes (tests/bench/web_bench.sh; BENCH_SECS per
# measurement, default 5; BENCH_SCALES, default "100000 1000000").  The
# database is written by tests/bench/web_gen.c through the store.
# BACKEND=pg or all: the pages of a daemon on PostgreSQL too (the store
# copied into a server of the bench's own by perfwatch store copy).
lint-web:
	@tests/lint/web_lint.sh && echo "web lint OK"

# make lint: the HTML lint and the layering check (tests/lint/layers.sh:
# every #include against the EDGES_ lines above).
lint: lint-web
	@tests/lint/layers.sh && echo "layers OK"

$(REL)/bin/web_gen: $(REL)/obj/tests/bench/web_gen.o $(REL)/libperfwatch.a
	@mkdir -p $(@D)
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# read_bench job|history DB: GET /api/v1/jobs/{id}'s, and
# /api/v1/history's and /history's, CPU time by stage, no HTTP (a
# database web_bench.sh kept in WEB_BENCH_DBS).
$(REL)/bin/read_bench: $(REL)/obj/tests/bench/read_bench.o $(REL)/libperfwatch.a
	@mkdir -p $(@D)
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

bench-web: all $(REL)/bin/web_gen $(REL)/bench/api_load
	@OUT=$(OUT) BACKEND=$(BACKEND) tests/bench/web_bench.sh $(or $(BENCH_SECS),5) "$(or $(BENCH_SCALES),100000 1000000)"

.PHONY: lint lint-web bench-web

# --- git module (git/): benchmark against the git command line ---
# make bench-git: a cached 100,000-commit repository under $(OUT)/bench-git
# (about 20 s to generate once), then first copy, 1,000 new commits with
# a path filter, and 1,000 idle polls, side by side with git.
$(REL)/tests/git_bench: $(REL)/obj/tests/bench/git_bench.o $(REL)/libperfwatch.a
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

bench-git: $(REL)/tests/git_bench
	$(REL)/tests/git_bench $(OUT)/bench-git

.PHONY: bench-git
# --- the tree's shape and build: largest file, files over
# 1,000 lines, duplicates pairs, full build and one-header rebuild times of
# HEAD next to REF (default main), back to back with the load average
# (tests/bench/build_bench.sh; a few minutes, not part of make check).
bench-build:
	@REF=$(or $(REF),main) tests/bench/build_bench.sh

.PHONY: bench-build
# --- the mailing-list loop's time to report: `make bench-latency` runs
# a real perfwatchd and perfwatch-runner on an archive it writes, posts
# SERIES one-patch series with a BENCH_S-second benchmark and prints
# each stage (pickup, queue, measure, verdict and mail) next to the
# goals, the benchmark's own time the reference
# (tests/bench/latency_bench.sh; about 3 min with the defaults; not part
# of make check).
bench-latency: all
	@OUT=$(OUT) tests/bench/latency_bench.sh

.PHONY: bench-latency

# make bench-mirror: the daemon's first fetch of a kernel tree (Debian's
# linux-source imported as git, cached under /var/tmp, served over smart
# HTTP): seconds and bytes (tests/bench/mirror_bench.sh; PATHS="mm
# include" for a subset; the whole tree takes many minutes; not part of
# make check).
bench-mirror: all
	@OUT=$(OUT) tests/bench/mirror_bench.sh

.PHONY: bench-mirror
# --- analysis (analysis/): the synthetic evaluation of the statistics,
# `make eval-stats` (a few minutes; not part of make check).
# tests/bench/eval_stats.c prints the tables kept in docs/ANALYSIS.md.
# EVAL_ARGS: a trial-count scale and table letters, e.g. "0.2 fct".
$(REL)/bin/eval_stats: $(REL)/obj/tests/bench/eval_stats.o $(REL)/libperfwatch.a
	@mkdir -p $(@D)
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

eval-stats: $(REL)/bin/eval_stats
	$(REL)/bin/eval_stats $(EVAL_ARGS)

.PHONY: eval-stats
# --- the whole service on this machine: `make eval-trust`
# runs a real perfwatchd and perfwatch-runner on a git tree of a compiled
# memory walk under a drifting load it starts and stops itself
# (tests/bench/trust_disturb.c): false alarms and mails per 100 no-op
# commits, and the share of +3/+10/+25 % changes found, for the old
# schedule (rounds: 1) and the tree's defaults side by side in one run
# (tests/bench/trust_eval.sh; 20-40 min; knobs NOOPS, CHANGES, SIZES,
# SEED, DISTURB, OLD_KEYS, NEW_KEYS in the script; not part of make check).
$(REL)/bench/trust_disturb: tests/bench/trust_disturb.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $<

eval-trust: all $(REL)/bench/trust_disturb
	@OUT=$(OUT) tests/bench/trust_eval.sh

.PHONY: eval-trust
# ---- kernels (docs/KERNEL.md) ----
# The qemu guest's static programs: /init (perfwatch-guest, built from the
# runner's cgroup, telemetry and exec modules) and static benchmarks
# (perfwatch-tcp-rr, perfwatch-pagefault), next to each runner binary in
# bin/guest/, where boot: qemu looks for them (runner key guest_dir).
GUEST_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. \
	       $(WARN) -O2 -g -static
GUEST_LIB = runners/cgroup.c runners/telemetry.c runners/exec.c \
	    common/buf.c common/clock.c common/err.c common/files.c \
	    common/xalloc.c runners/cgroup_detect.c
GUEST_DIRS = $(OUT)/bin/guest $(REL)/bin/guest $(SAN)/bin/guest

TCP_RR_SRCS = runners/tcp_rr.c runners/tcp_rr_client.c \
	      runners/tcp_rr_server.c runners/tcp_rr_main.c
define guest_progs
$(1)/perfwatch-guest: runners/guest/guest.c $(GUEST_LIB) $(HDRS)
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo '  LD      $$@ (static)')
	$$(Q)$$(CC) $$(GUEST_CFLAGS) -o $$@ runners/guest/guest.c $$(GUEST_LIB)
$(1)/perfwatch-pagefault: runners/guest/pagefault.c common/clock.c $(HDRS)
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo '  LD      $$@ (static)')
	$$(Q)$$(CC) $$(GUEST_CFLAGS) -o $$@ runners/guest/pagefault.c \
	    common/clock.c
$(1)/perfwatch-tcp-rr: $(TCP_RR_SRCS) common/clock.c common/err.c common/xalloc.c $(HDRS)
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo '  LD      $$@ (static)')
	$$(Q)$$(CC) $$(GUEST_CFLAGS) -o $$@ $(TCP_RR_SRCS) \
	    common/clock.c common/err.c common/xalloc.c -lpthread -lm
endef
$(foreach d,$(GUEST_DIRS),$(eval $(call guest_progs,$(d))))
GUEST_BINS = $(foreach d,$(GUEST_DIRS),$(d)/perfwatch-guest \
	     $(d)/perfwatch-pagefault $(d)/perfwatch-tcp-rr)
all: $(GUEST_BINS)
check-build: $(GUEST_BINS)
FMT_SRCS += runners/guest/guest.c runners/guest/pagefault.c
install: install-guest
install-guest: $(OUT)/bin/guest/perfwatch-guest $(OUT)/bin/guest/perfwatch-pagefault $(OUT)/bin/guest/perfwatch-tcp-rr
	install -d $(DESTDIR)$(PREFIX)/lib/perfwatch/guest
	install -m 755 $^ $(DESTDIR)$(PREFIX)/lib/perfwatch/guest

# make check-kernel: Debian's linux-source-6.1 as a git repository with a
# memcg-path patch, both kernels built and booted in qemu through a real
# perfwatchd and runner (slow, ~20 min cold; tests/kernel/check-kernel.sh).
# KERNEL_CACHE keeps the repository, the runner's build cache and the
# tiny kernel the e2e test t0820 boots when present.
KERNEL_CACHE ?= /var/tmp/perfwatch-kernel
check-kernel: all
	@OUT=$(OUT) KERNEL_CACHE=$(KERNEL_CACHE) tests/kernel/check-kernel.sh

# make check-kernel-bisect: eight kernel commits on top of check-kernel's
# base, one of them the 20 us spin, one a broken build, bisected by a
# real perfwatchd and runner that build and boot each step in qemu
# (slow; reuses check-kernel's build cache in KERNEL_CACHE/ktree;
# tests/kernel/check-kernel-bisect.sh).
check-kernel-bisect: all
	@OUT=$(OUT) KERNEL_CACHE=$(KERNEL_CACHE) tests/kernel/check-kernel-bisect.sh

# make check-kernel-fleet: check-kernel's pair and a second candidate on
# two bench runners, each building its kernels and then with shared
# builds from one builder, side by side: kernels compiled, bytes moved,
# push-to-verdict time (slow; tests/kernel/check-kernel-fleet.sh).
check-kernel-fleet: all
	@OUT=$(OUT) KERNEL_CACHE=$(KERNEL_CACHE) tests/kernel/check-kernel-fleet.sh

.PHONY: check-kernel check-kernel-bisect check-kernel-fleet install-guest

# ---- fleet: 200 simulated runners against one daemon ----
# make bench-fleet: one process (api_load --fleet) of 200 runners that
# register, heartbeat every 5 s, claim and upload for 60 s: uploads/s and
# claim p99 (tests/bench/fleet_bench.sh [RUNNERS] [SECONDS] [METRICS]).
bench-fleet: $(REL)/bin/perfwatchd $(REL)/bench/api_load
	@OUT=$(OUT) tests/bench/fleet_bench.sh

# make check-crash: kill -9 the daemon 10 times at random
# moments under 200 runners' load; integrity, every acknowledged upload
# stored once, no half run, no pair lost (tests/bench/crash_bench.sh
# [RUNNERS] [KILLS] [METRICS]; about 90 s; not part of make check; its
# two-daemon PostgreSQL form is make check-pg's t0368).
check-crash: all $(REL)/bench/api_load
	@OUT=$(OUT) tests/bench/crash_bench.sh

.PHONY: bench-fleet check-crash

# make check-compat: this tree's runner and CLI against the daemon of
# an older revision, and that revision's runner against this daemon
# (tests/compat/check-compat.sh; COMPAT_REV, default the last daemon
# without claim ids; builds it from the repository's history, about 3
# min; not part of make check).
COMPAT_REV ?= 870c474^
check-compat: check-build
	@OUT=$(OUT) COMPAT_REV='$(COMPAT_REV)' tests/compat/check-compat.sh

.PHONY: check-compat
