#!/usr/bin/env bash
# The fio parser on output of the fio installed here: per-job (numjobs=2,
# no group_reporting) json, and json+ whose histogram merge must give
# fio's own percentiles back.
set -u
BIN=${PERFWATCH_BIN:-build/san/bin}
tmp=$(mktemp -d /tmp/t0602.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
if ! command -v fio >/dev/null; then
	fail fio_installed "fio is not installed (make deps)"
	exit 1
fi
metric() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
m = [x for x in d["metrics"] if x["name"] == sys.argv[2]]
print(m[0]["value"] if m else "missing")' "$1" "$2"
}
common=(--directory="$tmp" --size=2M --bs=4k --ioengine=psync --rw=randrw
    --numjobs=2 --randrepeat=0 --thread)

fio --name=perjob "${common[@]}" --output-format=json >"$tmp/perjob.json" 2>"$tmp/fio.err" ||
    { fail fio_runs "$(cat "$tmp/fio.err")"; exit 1; }
if "$BIN/perfwatch" parse --tool fio "$tmp/perjob.json" --json >"$tmp/p.json" 2>"$tmp/e"; then
	want=$(python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))["jobs"]
print(len(j), sum(x["read"]["bw"] for x in j) / 1024, sum(x["write"]["iops"] for x in j))' "$tmp/perjob.json")
	got="$(metric "$tmp/p.json" jobs) $(metric "$tmp/p.json" read_bw) $(metric "$tmp/p.json" write_iops)"
	if python3 -c "import sys; a=list(map(float,sys.argv[1].split())); b=list(map(float,sys.argv[2].split()))
sys.exit(0 if a[0]==b[0]==2 and all(abs(x-y) <= 1e-6*max(1,abs(x)) for x,y in zip(a,b)) else 1)" "$want" "$got"; then
		pass per_job_sums
	else
		fail per_job_sums "want '$want' got '$got'"
	fi
else
	fail per_job_sums "$(cat "$tmp/e")"
fi

fio --name=grp "${common[@]}" --group_reporting --output-format=json+ \
    >"$tmp/grp.json" 2>"$tmp/fio.err" || { fail fio_runs_json_plus "$(cat "$tmp/fio.err")"; exit 1; }
# Two copies of the group's job: merged bins are the same distribution,
# so recomputed percentiles must equal fio's printed ones.
python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
d["jobs"] = [d["jobs"][0], d["jobs"][0]]
json.dump(d, open(sys.argv[2], "w"))' "$tmp/grp.json" "$tmp/twice.json"
"$BIN/perfwatch" parse --tool fio "$tmp/grp.json" --json >"$tmp/g1.json" &&
"$BIN/perfwatch" parse --tool fio "$tmp/twice.json" --json >"$tmp/g2.json"
if [ $? -eq 0 ]; then
	bad=""
	for m in read_clat_p50 read_clat_p90 read_clat_p99 read_clat_p99.9 write_clat_p99 read_clat_mean; do
		x=$(metric "$tmp/g1.json" $m) y=$(metric "$tmp/g2.json" $m)
		[ "$x" = missing ] && bad="$bad $m:missing"
		python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(a-b) <= 1e-9*max(1,a) else 1)" "$x" "$y" ||
		    bad="$bad $m:$x/$y"
	done
	[ -z "$bad" ] && pass json_plus_bins_reproduce_fio_percentiles || fail json_plus_bins_reproduce_fio_percentiles "$bad"
else
	fail json_plus_bins_reproduce_fio_percentiles "parse failed"
fi
exit $((fails > 0))
