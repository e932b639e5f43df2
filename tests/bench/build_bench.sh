#!/usr/bin/env bash
# make bench-build [REF=main]: the figures of the tree's shape
# and its build, for this tree (HEAD) and for REF side by side, measured
# back to back in one run with the load average beside each time
# (docs/NOISE.md: the machine is shared, a time alone says little):
#   - the largest source file and the files over 1,000 lines (the
#     component folders, not tests);
#   - the pairs `duplicates` finds in the whole tree (SKIP when that tool
#     is not installed);
#   - a full build (`make all` from nothing) and the rebuild after
#     touching one header (config/config.h, store/store.h,
#     common/buf.h), the ref and this tree alternately.
# Each side is a git archive in a scratch directory, so the worktree's
# build/ is not touched.  JOBS (default 2) is make's -j.
set -eu
REF=${REF:-main}
JOBS=${JOBS:-2}
HEADERS=${HEADERS:-config/config.h store/store.h common/buf.h}
top=$(git rev-parse --show-toplevel)
dirs=(common git config analysis store daemon runners web cli perfwatchd)
work=$(mktemp -d "${TMPDIR:-/tmp}/pw-bench-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

ref=$(git -C "$top" rev-parse --verify "$REF^{commit}")
cur=$(git -C "$top" rev-parse --verify HEAD)
for side in ref cur; do
	mkdir -p "$work/$side"
	git -C "$top" archive "${!side}" | tar -x -C "$work/$side"
done

load() { cut -d' ' -f1 /proc/loadavg; }

# Seconds that `make -j$JOBS all` takes in $1 (its log in $1/bench.log).
build_s() {
	local t0 t1
	t0=$(date +%s.%N)
	if ! nice -n 10 make -C "$1" -j"$JOBS" all >"$1/bench.log" 2>&1; then
		tail -20 "$1/bench.log" >&2
		echo "build failed in $1" >&2
		exit 1
	fi
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}

shape() {
	local d=$1
	# A folder one side does not have yet (REF older than it) is left out.
	(cd "$d" && find "${dirs[@]}" -name '*.[ch]' -print0 2>/dev/null |
	    xargs -0 wc -l |
	    awk '$2 != "total" { if ($1 > max) { max = $1; f = $2 }
	        if ($1 > 1000) n++ }
	        END { printf "%s, %d lines | %d", f, max, n }')
}

dups() {
	if ! command -v duplicates >/dev/null; then
		echo "SKIP (no duplicates tool)"
		return
	fi
	(cd "$1" && duplicates --seconds 120 2>/dev/null | head -n 1 |
	    awk '{ print $1 }')
}

echo "ref $REF = ${ref:0:12}, this tree HEAD = ${cur:0:12}; make -j$JOBS all"
printf '| figure | %s | this tree |\n| --- | --- | --- |\n' "$REF"
rs=$(shape "$work/ref")
cs=$(shape "$work/cur")
printf '| largest file | %s | %s |\n' "${rs% |*}" "${cs% |*}"
printf '| files over 1,000 lines | %s | %s |\n' "${rs#*| }" "${cs#*| }"
printf '| duplicates pairs | %s | %s |\n' "$(dups "$work/ref")" \
    "$(dups "$work/cur")"
for round in full $HEADERS; do
	out=()
	for side in ref cur; do
		# A header one side does not have (a folder moved since
		# REF) has no rebuild to time there.
		if [ "$round" != full ] && [ ! -f "$work/$side/$round" ]; then
			out+=("no such file")
			continue
		fi
		[ "$round" = full ] || touch "$work/$side/$round"
		l=$(load)
		s=$(build_s "$work/$side")
		out+=("$s s (load $l)")
	done
	if [ "$round" = full ]; then
		what="full build"
	else
		what="rebuild after touching $round"
	fi
	printf '| %s | %s | %s |\n' "$what" "${out[0]}" "${out[1]}"
done
