#!/usr/bin/env bash
# check: parallel
# perfwatch compare / changepoints: formats, exit codes, error messages.
# The data are deterministic (sin/cos wiggles from awk), with effects far
# above their noise, so the verdicts do not depend on luck.
set -u
BIN=${PERFWATCH_BIN:-build/san/bin}
PW=$BIN/perfwatch
T=$(mktemp -d /tmp/t0500.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0

pass() { echo "PASS $1"; }
fail() {
	echo "FAIL $1: $2"
	fails=$((fails + 1))
}
# run NAME: runs the rest, keeping stdout, stderr and the exit code.
run() {
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
}
# series FILE N LEVEL WIGGLE FUNC: N values LEVEL * (1 + WIGGLE * f(i)).
series() {
	awk -v n="$2" -v l="$3" -v w="$4" -v f="$5" 'BEGIN {
		for (i = 1; i <= n; i++)
			printf "%.4f\n", l * (1 + w * (f == "sin" ? sin(i * 1.7) : cos(i * 2.3)))
	}' >"$1"
}

# --- plain files ---------------------------------------------------------
{
	echo "# base runs of tcp_rr, transactions/s"
	echo
	series /dev/stdout 6 1000 0.004 sin
} >"$T/base.txt"
series "$T/cand.txt" 6 950 0.004 cos # 5 % slower
series "$T/same.txt" 6 1000 0.004 cos

run "$PW" compare "$T/base.txt" "$T/cand.txt"
if [ $rc -eq 0 ] && grep -q '^value .* regression$' "$T/out" &&
    grep -q 'base_median' "$T/out"; then
	pass compare_text_regression
else
	fail compare_text_regression "rc=$rc $(cat "$T/out" "$T/err")"
fi

run "$PW" compare --exit-code "$T/base.txt" "$T/cand.txt"
[ $rc -eq 1 ] && pass compare_exit_code_regression ||
    fail compare_exit_code_regression "rc=$rc"

run "$PW" compare --exit-code --better lower "$T/base.txt" "$T/cand.txt"
if [ $rc -eq 0 ] && grep -q 'improvement$' "$T/out"; then
	pass compare_better_lower
else
	fail compare_better_lower "rc=$rc $(cat "$T/out")"
fi

run "$PW" compare --json "$T/base.txt" "$T/cand.txt"
ok=1
for k in metric n_base n_cand base_median cand_median base_mean base_sd \
    cand_mean cand_sd change_pct ci_low_pct ci_high_pct p_value verdict \
    note; do
	grep -q "\"$k\":" "$T/out" || ok=0
done
keys=$(grep -c '^      "[a-z_]*":' "$T/out")
if [ $rc -eq 0 ] && [ $ok -eq 1 ] && [ "$keys" -eq 15 ] &&
    grep -q '"metric": "value"' "$T/out" &&
    grep -q '"verdict": "regression"' "$T/out" &&
    grep -q '"n_base": 6' "$T/out"; then
	pass compare_json_format
else
	fail compare_json_format "rc=$rc keys=$keys $(cat "$T/out")"
fi

run "$PW" compare --json --min-effect 1% "$T/base.txt" "$T/same.txt"
if [ $rc -eq 0 ] && grep -Eq '"verdict": "(unchanged|inconclusive)"' "$T/out"; then
	pass compare_no_change
else
	fail compare_no_change "rc=$rc $(cat "$T/out")"
fi

# NOISE.md: 20 % run-to-run noise and 4 runs: no verdict, ask for runs.
printf '64.7\n106.6\n82.7\n80.9\n' >"$T/noisy_a.txt"
printf '70.7\n101.7\n85.1\n98.5\n' >"$T/noisy_b.txt"
run "$PW" compare --exit-code "$T/noisy_a.txt" "$T/noisy_b.txt"
if [ $rc -eq 0 ] && grep -q 'inconclusive$' "$T/out" &&
    grep -q 'more runs needed' "$T/out"; then
	pass compare_noisy_inconclusive
else
	fail compare_noisy_inconclusive "rc=$rc $(cat "$T/out")"
fi

# A single run on one side: explicit inconclusive, nulls in JSON.
echo 1000 >"$T/one.txt"
run "$PW" compare --json "$T/one.txt" "$T/cand.txt"
if [ $rc -eq 0 ] && grep -q '"verdict": "inconclusive"' "$T/out" &&
    grep -q '"p_value": null' "$T/out" &&
    grep -q '"ci_low_pct": null' "$T/out"; then
	pass compare_single_run
else
	fail compare_single_run "rc=$rc $(cat "$T/out" "$T/err")"
fi

# History: 80 base runs; the p-value is calibrated on them (H).
series "$T/hist.txt" 80 1000 0.004 sin
run "$PW" compare --history "$T/hist.txt" "$T/base.txt" "$T/cand.txt"
if [ $rc -eq 0 ] && grep -q ' H  regression$' "$T/out"; then
	pass compare_history
else
	fail compare_history "rc=$rc $(cat "$T/out" "$T/err")"
fi

# --- bad input -----------------------------------------------------------
# expect_err NAME PATTERN ARGS...: exit 1 and stderr matching PATTERN.
expect_err() {
	local name=$1 pat=$2
	shift 2
	run "$PW" "$@"
	if [ $rc -eq 1 ] && grep -Eq "$pat" "$T/err" && [ ! -s "$T/out" ]; then
		pass "$name"
	else
		fail "$name" "rc=$rc out=$(cat "$T/out") err=$(cat "$T/err")"
	fi
}
: >"$T/empty.txt"
printf '# only a comment\n\n' >"$T/comments.txt"
printf '1000\n1001\nabc\n' >"$T/word.txt"
printf '1000\nnan\n' >"$T/nan.txt"
printf '1000\n1001\ninf\n' >"$T/inf.txt"
printf '1000\n-3\n' >"$T/neg.txt"
printf '1000\n0\n' >"$T/zero.txt"
printf '1000 1001\n' >"$T/two.txt"
expect_err compare_err_empty "empty.txt: no values" compare "$T/empty.txt" "$T/cand.txt"
expect_err compare_err_comments "comments.txt: no values" compare "$T/base.txt" "$T/comments.txt"
expect_err compare_err_word "word.txt:3: not a number: 'abc'" compare "$T/word.txt" "$T/cand.txt"
expect_err compare_err_nan "nan.txt:2: not a finite number" compare "$T/base.txt" "$T/nan.txt"
expect_err compare_err_inf "inf.txt:3: not a finite number" compare "$T/inf.txt" "$T/cand.txt"
expect_err compare_err_negative "neg.txt:2: -3 is not positive" compare "$T/neg.txt" "$T/cand.txt"
expect_err compare_err_zero "zero.txt:2: 0 is not positive" compare "$T/base.txt" "$T/zero.txt"
expect_err compare_err_two_numbers "two.txt:1: expected one number" compare "$T/two.txt" "$T/cand.txt"
expect_err compare_err_missing "nosuch.txt: cannot open" compare "$T/nosuch.txt" "$T/cand.txt"
printf '{"runs": [}' >"$T/broken.json"
expect_err compare_err_json "broken.json:1:[0-9]+:" compare "$T/broken.json" "$T/cand.txt"
printf '{"runs": [{"index": 0, "metrics": [{"name": "x", "value": "1"}]}]}' >"$T/badval.json"
expect_err compare_err_json_field "runs\[0\]\.metrics\[0\]\.value: expected a number" compare "$T/badval.json" "$T/badval.json"

# Usage errors: exit 2.
for args in "" "$T/base.txt" "--alpha 2 $T/base.txt $T/cand.txt" \
    "--better faster $T/base.txt $T/cand.txt" "--min-effect x $T/base.txt $T/cand.txt" \
    "--bogus $T/base.txt $T/cand.txt" "$T/base.txt $T/cand.txt $T/same.txt"; do
	# shellcheck disable=SC2086
	run "$PW" compare $args
	if [ $rc -eq 2 ] && grep -q 'usage: perfwatch compare' "$T/err"; then
		pass "compare_usage[$args]"
	else
		fail "compare_usage[$args]" "rc=$rc $(cat "$T/err")"
	fi
done

# --- result JSON exported by the service ---------------------------------
# job_json FILE LEVEL LAT: 6 runs of throughput (higher) and p99 latency
# (lower), plus a failed run that must be ignored.
job_json() {
	awk -v l="$2" -v lat="$3" 'BEGIN {
		printf "{\"id\": 7, \"state\": \"success\", \"runs\": ["
		for (i = 0; i < 6; i++)
			printf "{\"index\": %d, \"status\": \"ok\", \"host\": \"h\", \"metrics\": [" \
			    "{\"name\": \"throughput\", \"value\": %.3f, \"unit\": \"tps\", \"better\": \"higher\"}," \
			    "{\"name\": \"latency_p99\", \"value\": %.3f, \"unit\": \"us\", \"better\": \"lower\"}]},", \
			    i, l * (1 + 0.004 * sin(i * 1.7)), lat * (1 + 0.004 * cos(i * 2.3))
		printf "{\"index\": 6, \"status\": \"failed\", \"error\": \"boom\", \"metrics\": [" \
		    "{\"name\": \"throughput\", \"value\": 1, \"better\": \"higher\"}]}]}\n"
	}' >"$1"
}
job_json "$T/job_base.json" 1000 100
job_json "$T/job_cand.json" 1000 110 # latency 10 % worse, throughput equal
run "$PW" compare --json --exit-code "$T/job_base.json" "$T/job_cand.json"
if [ $rc -eq 1 ] &&
    grep -A9 '"metric": "latency_p99"' "$T/out" | grep -q '"verdict": "regression"' &&
    grep -B9 -A9 '"metric": "throughput"' "$T/out" | grep -q '"n_base": 6' &&
    [ "$(grep -c '"metric":' "$T/out")" -eq 2 ]; then
	pass compare_job_json
else
	fail compare_job_json "rc=$rc $(cat "$T/out" "$T/err")"
fi
# A latency drop is an improvement for a lower-is-better metric, whatever
# --better says for plain files.
run "$PW" compare --better higher "$T/job_cand.json" "$T/job_base.json"
if [ $rc -eq 0 ] && grep -q '^latency_p99 .* improvement$' "$T/out"; then
	pass compare_job_json_better_from_metric
else
	fail compare_job_json_better_from_metric "rc=$rc $(cat "$T/out")"
fi

# --- changepoints --------------------------------------------------------
awk 'BEGIN { for (i = 0; i < 60; i++)
	printf "c%03d %.4f\n", i, (i < 35 ? 1000 : 960) * (1 + 0.003 * sin(i * 1.7)) }' >"$T/hist_step.txt"
run "$PW" changepoints --json "$T/hist_step.txt"
if [ $rc -eq 0 ] && grep -q '"index": 35' "$T/out" &&
    grep -q '"label": "c035"' "$T/out" &&
    grep -q '"direction": "regression"' "$T/out" &&
    [ "$(grep -c '"index":' "$T/out")" -eq 1 ]; then
	pass changepoints_json
else
	fail changepoints_json "rc=$rc $(cat "$T/out" "$T/err")"
fi
ok=1
for k in index label before after change_pct p_value direction; do
	grep -q "\"$k\":" "$T/out" || ok=0
done
[ $ok -eq 1 ] && pass changepoints_json_keys || fail changepoints_json_keys "$(cat "$T/out")"

run "$PW" changepoints --better lower "$T/hist_step.txt"
if [ $rc -eq 0 ] && grep -q '1 change point' "$T/out" &&
    grep -Eq '^ +35 c035 .* improvement +c0[0-9]+ \.\. c0[0-9]+$' "$T/out"; then
	pass changepoints_text
else
	fail changepoints_text "rc=$rc $(cat "$T/out")"
fi

series "$T/flat.txt" 50 1000 0.004 sin
run "$PW" changepoints --json "$T/flat.txt"
if [ $rc -eq 0 ] && grep -q '"change_points": \[\]' "$T/out"; then
	pass changepoints_none
else
	fail changepoints_none "rc=$rc $(cat "$T/out")"
fi

printf '1000\n1010\n990\n' >"$T/short.txt"
run "$PW" changepoints --json "$T/short.txt"
if [ $rc -eq 0 ] && grep -q '"change_points": \[\]' "$T/out" &&
    grep -q 'short.txt: 3 points: at least 10' "$T/err"; then
	pass changepoints_short
else
	fail changepoints_short "rc=$rc $(cat "$T/out" "$T/err")"
fi

printf 'a 1000\nb 1001 x\n' >"$T/three.txt"
expect_err changepoints_err_fields "three.txt:2: expected VALUE or LABEL VALUE" changepoints "$T/three.txt"
expect_err changepoints_err_word "word.txt:3: not a number" changepoints "$T/word.txt"
expect_err changepoints_err_zero "zero.txt:2: 0 is not positive" changepoints "$T/zero.txt"
expect_err changepoints_err_empty "empty.txt: no values" changepoints "$T/empty.txt"
run "$PW" changepoints
[ $rc -eq 2 ] && pass changepoints_usage || fail changepoints_usage "rc=$rc"

[ $fails -eq 0 ]
