#!/usr/bin/env bash
# tests/fuzz/seeds.sh TARGET DIR: writes the seed corpus of a libFuzzer
# target (tests/fuzz/TARGET_fuzz.c) into DIR: inputs from tests/data,
# tests/fixtures (PERFWATCH_FIXTURES), the project's examples, and every
# file kept in tests/data/fuzz/TARGET/ (hand-made seed-* and the crash-*
# inputs the fuzzer found, replayed as regression tests).
# The inbox fixture's messages are cached in $OUT/fuzz/inbox.
set -eu
target=$1 out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
fix=${PERFWATCH_FIXTURES:-$src/tests/fixtures}
cache=${OUT:-build}/fuzz/inbox
mkdir -p "$out"

# The first N messages of the cgroups@ archive (a public-inbox bundle),
# one file each; patch-* are the ones with a diff.
inbox() {
	local n=$1 git=$cache/git.git i=0 h
	[ -f "$cache/done.$n" ] && return 0
	rm -rf "$cache" && mkdir -p "$cache"
	[ -f "$fix/inbox/cgroups-2019.bundle" ] || return 0
	git clone -q --bare "$fix/inbox/cgroups-2019.bundle" "$git"
	for h in $(git -C "$git" log --reverse --format=%H master | head -n "$n"); do
		i=$((i + 1))
		git -C "$git" show "$h:m" >"$cache/msg-$i" 2>/dev/null || continue
		grep -q '^diff --git ' "$cache/msg-$i" && cp "$cache/msg-$i" "$cache/patch-$i"
	done
	touch "$cache/done.$n"
}

# prefix BYTE FILE NAME: the file after a selector byte (octal).
prefix() {
	{ printf "\\$1"; cat "$2"; } >"$out/$3"
}

case $target in
bench)
	# The selector byte is the index in bench_tools(): 0 neper, 1 fio,
	# 2 will-it-scale, 3 netperf, 4 keyvalue, 5 json.
	for f in "$fix"/bench/*; do
		case $f in
		*neper*) t=000 ;; *fio*.json) t=001 ;;
		*will-it-scale*.txt) t=002 ;; *netperf*.txt) t=003 ;;
		*.yaml) t=004 ;; *) continue ;;
		esac
		prefix $t "$f" "$(basename "$f")"
	done
	;;
config)
	cp "$src"/config/examples/jobs/*.yaml "$src"/config/examples/*.yaml "$out/"
	cp "$src"/tests/data/config/bad/* "$out/"
	;;
mail)
	cp "$src"/tests/data/mail/* "$out/"
	inbox 100
	cp "$cache"/msg-* "$out/" 2>/dev/null || true
	;;
api)
	# Selector 7 is POST /api/v1/series (tests/fuzz/api_fuzz.c posts[]).
	for f in "$src"/tests/data/mail/*; do
		prefix 007 "$f" "series-$(basename "$f")"
	done
	inbox 100
	for f in $(ls "$cache"/patch-* 2>/dev/null | head -n 20); do
		prefix 007 "$f" "series-$(basename "$f")"
	done
	;;
patch)
	inbox 100
	for f in $(ls "$cache"/patch-* 2>/dev/null | head -n 10); do
		cp "$f" "$out/"
	done
	;;
qemu) ;;
perfstat)
	# The first byte's low bit: the output has perf's -G column.
	for f in "$fix"/perfstat/*.csv; do
		case $f in */vm-cgroup-*) t=001 ;; *) t=000 ;; esac
		prefix $t "$f" "$(basename "$f")"
	done
	;;
*)
	echo "seeds.sh: no target '$target'" >&2
	exit 1
	;;
esac
if [ -d "$src/tests/data/fuzz/$target" ]; then
	cp "$src/tests/data/fuzz/$target"/* "$out/" 2>/dev/null || true
fi
