#!/usr/bin/env bash
# check: parallel
# perfwatch config check / expand from the command line: exit codes,
# "configuration OK", error text with file:line:col, kind sniffing, a
# daemon config pulling in its jobs, and the expanded matrix.
set -u
cd "$(dirname "$0")/../.."
BIN=${PERFWATCH_BIN:-build/san/bin}
PW=$BIN/perfwatch
tmp=$(mktemp -d /tmp/t0100.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }

# run NAME WANT_RC CMD...: runs CMD, stdout to $tmp/out, stderr to $tmp/err
run() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$name" "exit $rc, wanted $want; stderr: $(head -c 500 "$tmp/err")"
		return 1
	fi
	return 0
}

# Every example is OK, each on its own line; nothing on stderr.
files=(config/examples/*.yaml config/examples/jobs/*.yaml)
if run examples-ok 0 "$PW" config check "${files[@]}"; then
	ok=1
	for f in "${files[@]}"; do
		grep -qxF "$f: configuration OK" "$tmp/out" || { ok=0; fail examples-ok "no OK line for $f"; }
	done
	[ -s "$tmp/err" ] && { ok=0; fail examples-ok "stderr not empty: $(cat "$tmp/err")"; }
	[ $ok = 1 ] && pass examples-ok
fi

# The daemon example loads its jobs (relative glob next to the file).
if run daemon-loads-jobs 0 "$PW" config check config/examples/daemon.yaml; then
	if grep -qxF "config/examples/jobs/tcp_rr.yaml: configuration OK (job tcp_rr-memcg)" "$tmp/out" &&
	    grep -qxF "config/examples/daemon.yaml: configuration OK" "$tmp/out"; then
		pass daemon-loads-jobs
	else
		fail daemon-loads-jobs "$(cat "$tmp/out")"
	fi
fi

# A bad job: all errors, in file order, on stderr; exit 1; no OK line.
cat >"$tmp/job.yaml" <<'YAML'
name: tcp
parser: nepr
command: [tcp_rr, -F, "{flow}"]
matrix:
  flows: [1, 2]
runs: 30
runs: 3
tmeout: 5m
YAML
if run bad-job 1 "$PW" config check "$tmp/job.yaml"; then
	cat >"$tmp/want" <<WANT
$tmp/job.yaml:2:9: parser: "nepr" is not one of neper, fio, will-it-scale, netperf, keyvalue, json
$tmp/job.yaml:3:23: command[2]: unknown placeholder {flow} (known: flows, server, workdir, run, host, cpus)
$tmp/job.yaml:6:7: runs: 30 is more than max_runs (24)
$tmp/job.yaml:7:1: runs: duplicate key (first at line 6)
$tmp/job.yaml:8:1: tmeout: unknown key (did you mean 'timeout'?)
WANT
	if diff -u "$tmp/want" "$tmp/err" >"$tmp/diff"; then
		if [ -s "$tmp/out" ]; then
			fail bad-job "stdout not empty: $(cat "$tmp/out")"
		else
			pass bad-job
		fi
	else
		fail bad-job "$(cat "$tmp/diff")"
	fi
fi

# One good and one bad file: exit 1, the good one still reported OK.
if run mixed 1 "$PW" config check config/examples/runner.yaml "$tmp/job.yaml"; then
	if grep -qxF "config/examples/runner.yaml: configuration OK" "$tmp/out" &&
	    ! grep -q "job.yaml: configuration OK" "$tmp/out"; then
		pass mixed
	else
		fail mixed "$(cat "$tmp/out")"
	fi
fi

# Every file of the bad table fails with exactly its expected errors.
ok=1
for f in tests/data/config/bad/*.yaml; do
	kind=$(basename "$f")
	kind=${kind%%-*}
	"$PW" config check --kind "$kind" "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	grep '^# expect: ' "$f" | sed "s|^# expect: |$f:|" >"$tmp/want"
	if [ $rc -ne 1 ] || ! diff -u "$tmp/want" "$tmp/err" >"$tmp/diff"; then
		ok=0
		fail bad-table "$f (exit $rc): $(cat "$tmp/diff")"
	fi
done
[ $ok = 1 ] && pass bad-table

# Kind sniffing: a file with none of command/listen/server whose keys
# are as much a job's as a runner's.
printf 'name: x\n' >"$tmp/what.yaml"
if run sniff-unknown 1 "$PW" config check "$tmp/what.yaml"; then
	if grep -qF "$tmp/what.yaml:1:1: cannot tell the kind of file" "$tmp/err"; then
		pass sniff-unknown
	else
		fail sniff-unknown "$(cat "$tmp/err")"
	fi
fi

# A typo of the deciding key: the kind the other keys say, and the
# unknown key named where it is (line 2, column 1), with its fix.
printf '# the daemon\nlisen: 127.0.0.1:0\ndatabase: /tmp/pw.db\n' >"$tmp/typo.yaml"
if run sniff-typo 1 "$PW" config check "$tmp/typo.yaml"; then
	if grep -qF "$tmp/typo.yaml:2:1: lisen: unknown key (did you mean 'listen'?)" "$tmp/err" &&
	    ! grep -q "cannot tell the kind" "$tmp/err"; then
		pass sniff-typo
	else
		fail sniff-typo "$(cat "$tmp/err")"
	fi
fi
printf 'name: j\ncomand: [true]\nparser: keyvalue\n' >"$tmp/jtypo.yaml"
if run sniff-typo-job 1 "$PW" config check "$tmp/jtypo.yaml"; then
	if grep -qF "$tmp/jtypo.yaml:2:1: comand: unknown key (did you mean 'command'?)" "$tmp/err"; then
		pass sniff-typo-job
	else
		fail sniff-typo-job "$(cat "$tmp/err")"
	fi
fi

# --kind overrides sniffing: a runner file checked as a job.
if run kind-flag 1 "$PW" config check --kind job config/examples/runner.yaml; then
	if grep -qF "config/examples/runner.yaml:1:1: missing required key 'name'" "$tmp/err" ||
	    grep -qF "config/examples/runner.yaml:2:1: server: unknown key" "$tmp/err"; then
		pass kind-flag
	else
		fail kind-flag "$(cat "$tmp/err")"
	fi
fi

# Usage errors exit 2.
run usage-no-file 2 "$PW" config check && pass usage-no-file
run usage-bad-kind 2 "$PW" config check --kind mail x.yaml && pass usage-bad-kind

# A missing file.
if run missing-file 1 "$PW" config check --kind job "$tmp/nope.yaml"; then
	if grep -qxF "$tmp/nope.yaml: cannot open: No such file or directory" "$tmp/err"; then
		pass missing-file
	else
		fail missing-file "$(cat "$tmp/err")"
	fi
fi

# config expand: one line per point, last axis fastest, then the count.
if run expand 0 "$PW" config expand config/examples/jobs/tcp_rr.yaml; then
	cat >"$tmp/want" <<'WANT'
flows=10000 threads=128 duration=60 cgroup=root
flows=10000 threads=128 duration=60 cgroup=/bench
flows=20000 threads=128 duration=60 cgroup=root
flows=20000 threads=128 duration=60 cgroup=/bench
4 points
WANT
	if diff -u "$tmp/want" "$tmp/out" >"$tmp/diff"; then
		pass expand
	else
		fail expand "$(cat "$tmp/diff")"
	fi
fi

# expand honours exclude: will-it-scale drops malloc1 at 16 tasks.
if run expand-exclude 0 "$PW" config expand config/examples/jobs/will-it-scale.yaml; then
	if [ "$(tail -n 1 "$tmp/out")" = "14 points" ] &&
	    ! grep -q "test=malloc1 mode=.* tasks=16 " "$tmp/out"; then
		pass expand-exclude
	else
		fail expand-exclude "$(cat "$tmp/out")"
	fi
fi

# expand on a bad job prints the errors and exits 1.
if run expand-bad 1 "$PW" config expand "$tmp/job.yaml"; then
	if grep -q "unknown placeholder {flow}" "$tmp/err" && [ ! -s "$tmp/out" ]; then
		pass expand-bad
	else
		fail expand-bad "$(cat "$tmp/err")"
	fi
fi

[ $fails -eq 0 ]
