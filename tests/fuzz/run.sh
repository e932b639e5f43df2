#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS TARGET...   (make fuzz)
#   Runs each libFuzzer target $OUT/fuzz/TARGET_fuzz for SECONDS, one
#   after the other under nice -n 15, on a corpus seeded by seeds.sh in
#   $OUT/fuzz/corpus/TARGET (kept between runs, so it grows), and prints
#   one line per target: executions, exec/s, new crashes.  A crash, leak
#   or timeout leaves its input in $OUT/fuzz/artifacts/TARGET/; keep it
#   as tests/data/fuzz/TARGET/crash-NAME once the code is fixed.
# tests/fuzz/run.sh --smoke TARGET...   (tests/e2e/t0950-fuzz-smoke.sh)
#   Replays each target's seeds once (no mutation): PASS/FAIL per target.
set -u
OUT=${OUT:-build}
here=$(cd "$(dirname "$0")" && pwd)
smoke=0
if [ "${1:-}" = --smoke ]; then
	smoke=1
else
	secs=${1:-60}
fi
shift
status=0

# Per target: the longest input and the time one input may take (git am
# runs git several times per input; the rest are in-process parsers).
max_len() {
	case $1 in config) echo 4096 ;; qemu) echo 262144 ;; *) echo 65536 ;; esac
}
timeout_s() {
	case $1 in patch) echo 60 ;; *) echo 10 ;; esac
}

for t in "$@"; do
	bin=$(cd "$OUT" 2>/dev/null && pwd)/fuzz/${t}_fuzz
	if [ ! -x "$bin" ]; then
		echo "FAIL fuzz_$t: $bin is not built (make fuzz-build)"
		status=1
		continue
	fi
	if [ $smoke = 1 ]; then
		seeds=$(mktemp -d "${TMPDIR:-/tmp}/pwfuzz-seeds.XXXXXX")
		log=$seeds.log
		if ! "$here/seeds.sh" "$t" "$seeds" >"$log" 2>&1; then
			echo "FAIL fuzz_$t: seeds.sh: $(tail -n 1 "$log")"
			status=1
		elif [ -z "$(ls "$seeds")" ]; then
			echo "FAIL fuzz_$t: no seeds"
			status=1
		elif (cd "$seeds" && "$bin" -timeout="$(timeout_s "$t")" \
			-rss_limit_mb=4096 ./*) >"$log" 2>&1; then
			echo "PASS fuzz_$t ($(ls "$seeds" | wc -l) inputs replayed)"
		else
			echo "FAIL fuzz_$t: $(grep -m1 -E 'ERROR|Assertion|runtime error|Running:' "$log" | tail -n 1)"
			grep -E '^(==|SUMMARY|#[0-9]|Running:)|Assertion|runtime error' "$log" | tail -n 30
			status=1
		fi
		rm -rf "$seeds" "$log"
		continue
	fi
	corpus=$OUT/fuzz/corpus/$t
	art=$OUT/fuzz/artifacts/$t
	log=$OUT/fuzz/$t.log
	mkdir -p "$corpus" "$art"
	"$here/seeds.sh" "$t" "$corpus" || exit 1
	before=$(ls "$art" | wc -l)
	nice -n 15 "$bin" -max_total_time="$secs" -max_len="$(max_len "$t")" \
	    -timeout="$(timeout_s "$t")" -rss_limit_mb=4096 \
	    -artifact_prefix="$art/" -print_final_stats=1 "$corpus" \
	    >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	new=$(($(ls "$art" | wc -l) - before))
	printf '%-8s %10s executions %7s exec/s  %d new crash input(s)  exit %d  (%s)\n' \
	    "$t" "${runs:-?}" "${rate:-?}" "$new" "$rc" "$log"
	[ "$rc" -ne 0 ] && status=1
done
exit $status
