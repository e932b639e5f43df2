# perfwatch: one non-recursive Makefile.
#
#   make            build perfwatchd, perfwatch-runner, perfwatch into $(OUT)/bin
#   make check      build everything with ASan+UBSan and run every test
#   make deps       install the Debian packages the build, tests and demo need
#   make demo       run the service end to end on this machine
#   make install    PREFIX=/usr/local DESTDIR=
#   make format-check, make bench, make eval-stats, make fuzz
#
# Sources are found by directory: every .c in a component folder is part of
# the program library, except main.c files, which make the programs.

OUT	?= build
PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc

CC	?= cc
ifeq ($(V),1)
Q	=
else
Q	= @
endif
PKGS	 = libgit2 libmicrohttpd libcurl yaml-0.1 sqlite3 jansson libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN	 = -Wall -Wextra -Wpedantic -Wshadow -Wformat=2 -Wmissing-prototypes \
	   -Wno-missing-field-initializers -Wstrict-prototypes -Wvla
ifeq ($(CI),true)
WARN	+= -Werror
endif
BASE_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
	   -I. $(PKG_CFLAGS) $(WARN) -g
CFLAGS	?= -O2
LDLIBS	 = $(PKG_LIBS) -lpthread -lm

SAN_FLAGS = -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	    -fno-omit-frame-pointer

DIRS	 = common config daemon runners runners/bench web cli
ALL_SRCS := $(foreach d,$(DIRS),$(wildcard $(d)/*.c))
MAIN_SRCS = daemon/main.c runners/main.c cli/main.c runners/tcp_rr_main.c
LIB_SRCS := $(filter-out $(MAIN_SRCS),$(ALL_SRCS))
HDRS	:= $(foreach d,$(DIRS),$(wildcard $(d)/*.h)) tests/unit/test.h

PROGS	 = perfwatchd perfwatch-runner perfwatch perfwatch-tcp-rr
perfwatchd_MAIN = daemon/main.c
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

define flavour
$(1)/obj/%.o: %.c $(HDRS)
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo '  CC      $$@')
	$$(Q)$$(CC) $$(BASE_CFLAGS) $(2) -c -o $$@ $$<

$(1)/libperfwatch.a: $$(LIB_SRCS:%.c=$(1)/obj/%.o)
	@rm -f $$@
	$$(Q)ar rcs $$@ $$^

endef

define program
$(1)/bin/$(2): $(1)/obj/$$($(2)_MAIN:.c=.o) $(1)/libperfwatch.a
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo '  LD      $$@')
	$$(Q)$$(CC) $(3) -o $$@ $$^ $$(LDFLAGS) $$(LDLIBS)
endef

$(eval $(call flavour,$(REL),$$(CFLAGS)))
$(eval $(call flavour,$(SAN),$$(SAN_FLAGS)))

$(foreach p,$(PROGS),$(eval $(call program,$(REL),$(p),$$(CFLAGS))))
$(foreach p,$(PROGS),$(eval $(call program,$(SAN),$(p),$$(SAN_FLAGS))))

$(SAN)/tests/%_test: $(SAN)/obj/tests/unit/%_test.o $(SAN)/obj/tests/unit/test.o $(SAN)/libperfwatch.a
	@mkdir -p $(@D)
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(SAN_FLAGS) -o $@ $< $(SAN)/obj/tests/unit/test.o $(SAN)/libperfwatch.a $(LDFLAGS) $(LDLIBS)

check-build: $(PROGS:%=$(SAN)/bin/%) $(UNIT_NAMES:%=$(SAN)/tests/%)

# THE test command: unit tests, then end-to-end tests, one summary line.
check: check-build
	@OUT=$(OUT) tests/run

deps:
	@scripts/deps.sh

demo: deps all
	@scripts/demo.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSTEMDDIR) \
	    $(DESTDIR)$(SYSCONFDIR)/perfwatch/jobs
	install -m 755 $(PROGS:%=$(OUT)/bin/%) $(DESTDIR)$(BINDIR)
	sed 's|@BINDIR@|$(BINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    dist/systemd/perfwatchd.service.in \
	    > $(DESTDIR)$(SYSTEMDDIR)/perfwatchd.service
	sed 's|@BINDIR@|$(BINDIR)|g; s|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    dist/systemd/perfwatch-runner.service.in \
	    > $(DESTDIR)$(SYSTEMDDIR)/perfwatch-runner.service
	install -m 644 config/examples/*.yaml $(DESTDIR)$(SYSCONFDIR)/perfwatch/

FMT_SRCS = $(ALL_SRCS) $(HDRS) $(UNIT_SRCS) tests/unit/test.c \
	   $(wildcard tests/fuzz/*.c tests/bench/*.c )

format:
	clang-format -i $(FMT_SRCS)

format-check:
	@clang-format --dry-run --Werror $(FMT_SRCS) && echo "format OK"

clean:
	rm -rf $(OUT)

.PHONY: all check check-build deps demo install format format-check clean
.SECONDARY:

# --- git module (common/git.c): benchmark against the git command line ---
# make bench-git: a cached 100,000-commit repository under $(OUT)/bench-git
# (about 20 s to generate once), then first copy, 1,000 new commits with
# a path filter, and 1,000 idle polls, side by side with git.
$(REL)/tests/git_bench: $(REL)/obj/tests/bench/git_bench.o $(REL)/libperfwatch.a
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

bench-git: $(REL)/tests/git_bench
	$(REL)/tests/git_bench $(OUT)/bench-git

.PHONY: bench-git
