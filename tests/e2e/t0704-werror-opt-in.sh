#!/usr/bin/env bash
# check: parallel
# -Werror is the project's own CI's choice, never the environment's:
# CI=true (set by GitHub Actions and GitLab CI on every job, a user's
# included) compiles an object without -Werror, WERROR=1 compiles it
# with -Werror, and .ci/run passes WERROR=1 to both flavours' builds.
# Only `make -n` runs: nothing is compiled.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
pass() { echo "PASS $1"; }
failt() { echo "FAIL $1: $2"; }

tmp=$(mktemp -d /tmp/t0704.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# make check passes its command line (WERROR=1 in .ci/run) down in
# MAKEFLAGS: the dry runs below start from a clean make environment.
unset MAKEFLAGS MFLAGS MAKELEVEL WERROR
obj=$tmp/rel/obj/common/buf.o
san=$tmp/san/obj/common/buf.o

dry() { make -C "$top" --no-print-directory -n OUT="$tmp" "$@" 2>&1; }

out=$(CI=true dry "$obj")
if ! grep -q 'common/buf.c' <<<"$out"; then
	failt ci_true_no_werror "make -n printed no compile of common/buf.c: $out"
elif grep -q -- '-Werror' <<<"$out"; then
	failt ci_true_no_werror "CI=true added -Werror: $(grep -- -Werror <<<"$out")"
else
	pass ci_true_no_werror
fi

out=$(dry WERROR=1 "$obj" "$san")
n=$(grep 'common/buf.c' <<<"$out" | grep -c -- '-Werror')
if [ "$n" -eq 2 ]; then
	pass werror_1_adds_werror
else
	failt werror_1_adds_werror "$n of 2 compiles have -Werror: $out"
fi

out=$(dry "$obj")
if grep -q 'common/buf.c' <<<"$out" && ! grep -q -- '-Werror' <<<"$out"; then
	pass default_no_werror
else
	failt default_no_werror "$out"
fi

# The project's CI asks for it on the release and the check builds.
ci=$top/.ci/run
if grep -Eq '^make .*WERROR=1 .*\ball\b' "$ci" && grep -Eq '^make .*WERROR=1 .*\bcheck\b' "$ci"; then
	pass ci_run_passes_werror
else
	failt ci_run_passes_werror "$ci builds without WERROR=1: $(grep '^make' "$ci")"
fi
