#!/usr/bin/env bash
# make check-kernel-bisect: a kernel-tree bisection end to end (slow; not
# in make check).
#
# 1. On top of check-kernel's base commit (tests/kernel/mkrepo.sh), eight
#    commits on a branch of its own (pw-bisect-PID, made with git's
#    plumbing, no checkout; deleted at the end):
#      1 mm/page_alloc.c   a comment               (innocuous)
#      2 Documentation/    a line of the cgroup-v2 doc (innocuous)
#      3 mm/vmscan.c       a comment               (innocuous)
#      4 mm/slub.c         a syntax error          (does not build)
#      5 mm/slub.c         fixed again             (innocuous)
#      6 mm/memcontrol.c   the 20 us spin in try_charge_memcg() of
#                          mkrepo.sh's candidate   (the culprit)
#      7 kernel/fork.c     a comment               (innocuous)
#      8 lib/string.c      a comment               (innocuous)
# 2. A real perfwatchd watches the branch with a tip-only trigger
#    (`every_commit: false`, `baseline: previous-tip`) for the page-fault
#    loop in the nested memcg /a/b of a tinyconfig kernel booted in qemu
#    (TCG); a real runner with boot: qemu builds and boots every kernel.
#    The branch moves from the base to commit 8 in one push: one pair,
#    base against tip, a regression, bisected automatically.
# 3. The bisection must name commit 6, verified against its parent
#    (commit 5: the regression) and by its revert on commit 8 (the
#    recovery); a step on commit 4 is a skip (its jobs failed to build),
#    as git bisect skip.  Its report mail and webhook say "bisected to".
# 4. From the job logs: how many kernels were built, how many of them
#    incrementally over the build cache and how many cold, their times
#    and the total.  Every build after the first must be incremental.
#
# The runner's kernel directory is $KERNEL_CACHE/ktree, which make
# check-kernel leaves with the base built: the base image then comes from
# the cache and the first build is incremental too.  Without it the
# first build is cold (10-45 min here).
set -u
T0=$(date +%s)
KERNEL_CACHE=${KERNEL_CACHE:-/var/tmp/perfwatch-kernel}
export PERFWATCH_BIN=${PERFWATCH_BIN:-$PWD/${OUT:-build}/bin}
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../e2e/lib_runner.sh"
. "$(dirname "$0")/../e2e/lib_git.sh"
. "$(dirname "$0")/../e2e/lib_bisect.sh"
. "$(dirname "$0")/../e2e/lib_alerts.sh"
. "$(dirname "$0")/lib_kernel.sh"
kernel_start || { fail kernel_repo "mkrepo.sh failed"; finish; }
BRANCH=pw-bisect-$$
KTREE=$KERNEL_CACHE/ktree
[ -d "$KTREE/images" ] && ls -d "$KTREE"/images/"$BASE"-* >/dev/null 2>&1 &&
    echo "# $KTREE holds the base kernel (make check-kernel ran)" ||
    echo "# $KTREE lacks the base kernel: the first build is cold"

gk() { git --git-dir="$REPO" "$@"; }
trap 'gk update-ref -d "refs/heads/$BRANCH" 2>/dev/null; pw_cleanup' EXIT

# kcommit PARENT PATH BLOB MSG: a commit of PARENT's tree with PATH set
# to BLOB; prints its id.
export GIT_INDEX_FILE=$PW_TMP/index
kcommit() {
	gk read-tree "$1" && gk update-index --cacheinfo "100644,$3,$2" &&
	    gk commit-tree "$(gk write-tree)" -p "$1" -m "$4"
}
# kappend PARENT PATH TEXT MSG: PATH of PARENT with TEXT appended.
kappend() {
	local blob
	blob=$({ gk cat-file blob "$1:$2" && printf '%s\n' "$3"; } | gk hash-object -w --stdin) &&
	    kcommit "$1" "$2" "$blob" "$4"
}
c1=$(kappend "$BASE" mm/page_alloc.c "/* perfwatch bisect $$: innocuous 1 */" "mm: page_alloc: a comment") &&
c2=$(kappend "$c1" Documentation/admin-guide/cgroup-v2.rst ".. perfwatch bisect $$: innocuous 2" "docs: cgroup-v2: a line") &&
c3=$(kappend "$c2" mm/vmscan.c "/* perfwatch bisect $$: innocuous 3 */" "mm: vmscan: a comment") &&
c4=$(kappend "$c3" mm/slub.c "int perfwatch_bisect_broken = ;" "mm: slub: a syntax error (does not build)") &&
c5=$(kcommit "$c4" mm/slub.c "$(gk rev-parse "$BASE:mm/slub.c")" "mm: slub: fix the build") &&
c6=$(kcommit "$c5" mm/memcontrol.c "$(gk rev-parse "$CAND:mm/memcontrol.c")" \
    "$(gk log -1 --format=%s "$CAND")") &&
c7=$(kappend "$c6" kernel/fork.c "/* perfwatch bisect $$: innocuous 7 */" "fork: a comment") &&
c8=$(kappend "$c7" lib/string.c "/* perfwatch bisect $$: innocuous 8 */" "lib: string: a comment") ||
    { fail bisect_commits "git plumbing failed"; finish; }
unset GIT_INDEX_FILE
CULPRIT=$c6
BROKEN=$c4
gk update-ref "refs/heads/$BRANCH" "$BASE"
echo "# range: $BASE..$c8 (8 commits); culprit $c6, broken build $c4"

kernel_daemon_config
tree_yaml linux "$REPO" "$BRANCH"
# 3 runs, up to 6 while inconclusive: the spin is a -70% step (check-kernel).
kpf_job kpf 3 6 "trigger:
  trees: [linux]
  every_commit: false
baseline: previous-tip
bisect:
  max_steps: 10
  max_inconclusive: 3"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
t_mirror=$(date +%s)
wait_tip "$BRANCH" "$BASE" 900 || { fail tree_watched "$(cat "$PW_TMP/trees.json")"; show_logs; finish; }
echo "daemon's mirror ready in $(($(date +%s) - t_mirror)) s"
kernel_runner "$KTREE"
wait_until 30 sh -c "[ \"\$(sqlite3 -cmd '.timeout 5000' '$PW_DB' 'SELECT count(*) FROM hosts')\" = 1 ]"

# The push: eight commits at once.
t_push=$(date +%s)
gk update-ref "refs/heads/$BRANCH" "$c8"
started() { [ "$(sql 'SELECT count(*) FROM bisections')" -ge 1 ]; }
if wait_until 3600 started; then
	pass bisection_started_automatically
else
	fail bisection_started_automatically "$(sql "SELECT c.metric, c.verdict, c.change_pct FROM comparisons c")"
	show_logs
	finish
fi
t_start=$(date +%s)
state=$(bisect_wait 5400)
t_end=$(date +%s)
[ "$state" = done ] && pass bisection_done || { fail bisection_done "$state"; bisect_dump; show_logs; }
[ "$(bfield "b['culprit']")" = "$CULPRIT" ] && pass culprit_found ||
    { fail culprit_found "want $CULPRIT"; bisect_dump; }
bisect_check_verified revert
bisect_json
cp "$PW_TMP/bisect.json" "$PW_TMP/bisect-final.json"
# Every step's class follows from where it is; the broken commit is a skip.
python3 - "$PW_TMP/bisect-final.json" "$REPO" "$CULPRIT" "$BROKEN" <<'PY' && pass steps_classified || fail steps_classified "see above"
import json, subprocess, sys
b = json.load(open(sys.argv[1]))["bisection"]
repo, culprit, broken = sys.argv[2:]
def before(sha):
    return subprocess.run(["git", "--git-dir", repo, "merge-base", "--is-ancestor", culprit, sha]).returncode != 0
ok = True
for s in b["steps"]:
    print("  %-14s %s %-12s %s" % (s["kind"], s["sha"][:12], s["class"], (s["note"] or "")[:120]))
    if s["kind"] != "step":
        continue
    want = "skip" if s["sha"] == broken else ("good" if before(s["sha"]) else "bad")
    if s["class"] not in (want, "inconclusive"):
        print("# step %s: %s, want %s" % (s["sha"][:12], s["class"], want))
        ok = False
sys.exit(0 if ok else 1)
PY
pairs=$(python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["bisection"]
print(",".join(str(p) for s in b["steps"] if s["sha"] == sys.argv[2] for p in (s["good_pair"], s["bad_pair"]) if p))' "$PW_TMP/bisect-final.json" "$BROKEN")
if [ -n "$pairs" ]; then
	# Its jobs failed with the build's error, and measured nothing (never
	# a zero metric).
	nf=$(sql "SELECT count(*) FROM jobs WHERE pair_id IN ($pairs) AND state = 'failed' AND error LIKE 'build:%make bzImage%'")
	nr=$(sql "SELECT count(*) FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.pair_id IN ($pairs) AND j.state = 'failed'")
	[ "${nf:-0}" -ge 1 ] && [ "$nr" = 0 ] && pass "broken_build_skipped ($nf jobs failed to build)" ||
	    fail broken_build_skipped "$(sql "SELECT id, role, state, substr(error, 1, 300) FROM jobs WHERE pair_id IN ($pairs)")"
else
	echo "SKIP broken_build_skipped: no step landed on the broken commit"
fi

# The builds, from every job's log.
for id in $(sql "SELECT id FROM jobs ORDER BY id"); do
	http GET "/api/v1/jobs/$id" >/dev/null && cp "$PW_TMP/body" "$PW_TMP/job-$id.json"
done
python3 - "$PW_TMP" "$t_push" "$t_start" "$t_end" <<'PY' >"$PW_TMP/builds.txt"; st=$?
import glob, json, re, sys
d, t_push, t_start, t_end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
builds, cached, boots = [], 0, 0
for f in sorted(glob.glob(d + "/job-*.json"), key=lambda f: int(re.search(r"job-(\d+)", f).group(1))):
    j = json.load(open(f))
    log = j.get("log") or ""
    boots += len(re.findall(r"boot \d+ \(round \d+\): qemu", log))
    if re.search(r"kernel [0-9a-f]{12}: cached image", log):
        cached += 1
        continue
    m = re.search(r"kernel ([0-9a-f]{12}) built: \S+, \.config sha256 [0-9a-f]+, ([0-9.]+) s \((incremental|cold), (\d+) files changed\)", log)
    src = re.search(r"kernel source ([0-9a-f]{12}): (.*?) in ([0-9.]+) s", log)
    mk = re.search(r"kernel make bzImage: (.*?) in ([0-9.]+) s", log)
    if m:
        builds.append((j["id"], m.group(1), "ok", m.group(3), float(m.group(2)), int(m.group(4)), float(mk.group(2)) if mk else None))
    elif src:
        # A failed build: the source step and the make that failed.
        builds.append((j["id"], src.group(1), "failed", "cold" if src.group(2) == "exported" else "incremental",
                       None, None, float(mk.group(2)) if mk else None))
print("  job  commit        result  kind         total s  make s  files changed")
for b in builds:
    print("  %-4d %s  %-6s  %-11s  %7s  %6s  %s" % (b[0], b[1], b[2], b[3],
          "-" if b[4] is None else "%.1f" % b[4], "-" if b[6] is None else "%.1f" % b[6],
          "-" if b[5] is None else b[5]))
ok = [b for b in builds if b[2] == "ok"]
inc = [b for b in builds if b[3] == "incremental"]
cold = [b for b in builds if b[3] == "cold"]
print("MEASURED kernel builds: %d (%d incremental, %d cold, %d failed to build); %d jobs took a cached image; %d boots" % (
      len(builds), len(inc), len(cold), len(builds) - len(ok), cached, boots))
print("MEASURED build time: incremental %s s, cold %s s; total %.1f s (make: %.1f s)" % (
      " ".join("%.1f" % b[4] for b in ok if b[3] == "incremental") or "-",
      " ".join("%.1f" % b[4] for b in ok if b[3] == "cold") or "-",
      sum(b[4] for b in ok), sum(b[6] or 0 for b in builds)))
print("MEASURED push to bisection start (the pair base..tip): %d s; bisection and verification: %d s" % (
      t_start - t_push, t_end - t_start))
# Every build after the first is incremental over the build cache.
sys.exit(0 if builds and all(b[3] == "incremental" for b in builds[1:]) else 1)
PY
cat "$PW_TMP/builds.txt"
[ "$st" = 0 ] && pass builds_after_the_first_incremental || fail builds_after_the_first_incremental "see the table"

# The report: "bisected to <sha12> <subject>" in a mail and the webhook.
bisected_mail() { grep -lq "bisected to ${CULPRIT:0:12}" "$PW_TMP/smtp"/mail-*.eml 2>/dev/null; }
wait_until 60 bisected_mail
python3 - "$PW_TMP/smtp" "$PW_TMP/hook" "$CULPRIT" <<'PY' && pass alert_bisected_to || { fail alert_bisected_to "see above"; sql "SELECT id, kind, state, subject, last_error FROM alerts"; }
import email, email.policy, glob, json, sys
smtp, hook, culprit = sys.argv[1:]
bodies = []
for p in glob.glob(smtp + "/mail-*.eml"):
    m = email.message_from_bytes(open(p, "rb").read(), policy=email.policy.default)
    bodies.append(m.get_content().replace("\r\n", "\n"))
want = "bisected to " + culprit[:12] + " mm: memcg: spin"
assert any(want in b and "against its parent: shows the regression" in b for b in bodies), bodies
hooks = [json.loads(l) for l in open(hook + "/hooks.jsonl")]
assert hooks and all(h["ok"] for h in hooks), "bad signature"
b = [json.loads(h["body"]).get("bisect") for h in hooks]
assert any(x and x["state"] == "done" and x["culprit"].startswith(culprit[:12]) for x in b), b
PY
echo "MEASURED make check-kernel-bisect: $(($(date +%s) - T0)) s"
finish
