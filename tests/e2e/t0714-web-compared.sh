#!/usr/bin/env bash
# check: parallel
# (No runner process and no host state: the runs are uploaded through
# the runner API by this script, as a runner would.)
# Every comparison page says what it compared.  A real daemon watches a
# git tree; a job measures a new commit (with a hostile subject) against
# its parent, and a mailed one-patch series on top of the
# second is measured against it; both candidates are regressions.
# Checked on the pages: the pair page names its base and candidate
# (sha linked to the commit page, subject escaped), the commit page's
# "compared with" row names the base's sha and subject, the series tip's
# commit page links its series, and /regressions links the series of a
# series' regression; the trees and commits pages list the tree and
# its commits.  `perfwatch commit SHA` prints the verdicts its page
# shows.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/web_fill.sh"

SRC=$PW_TMP/app
src_init "$SRC"
c1=$(commit "$SRC" README 'mm: base <b>side</b>')

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
web_ops_job_file "$PW_DIR"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c1" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; finish; }
# A new commit on the branch: the watcher records it and pairs it with
# its parent.
c2=$(commit "$SRC" README '<script>alert(1)</script> memcg: "x" & y')
g "$SRC" checkout -qb topic
c3=$(commit "$SRC" mm/a.c 'memcg: the <i>series</i> patch')
g "$SRC" format-patch -q -1 -o "$PW_TMP/out" "$c3"
cat "$PW_TMP"/out/*.patch >"$PW_TMP/series.mbox"
g "$SRC" checkout -q master
wait_tip master "$c2" || { fail second_sight "$(cat "$PW_TMP/trees.json")"; finish; }
[ "$(http POST /api/v1/runners/register "$(token_of r1)" \
    '{"name":"r1","labels":["test"],"inventory":{"cgroup":"v2"}}')" = 200 ] ||
	{ fail register "$(cat "$PW_TMP/body")"; finish; }


pair=$(sql "SELECT pair_id FROM jobs j JOIN commits c ON c.id = j.commit_id WHERE c.sha = '$c2' AND j.role = 'candidate'")
[ -n "$pair" ] || { fail watcher_pair "$(sql "SELECT * FROM jobs")"; finish; }
web_run_queue r1 100 80 || { fail run_pair "$(cat "$PW_TMP/body")"; finish; }

code=$(curl -s -o "$PW_TMP/body" -w '%{http_code}' --max-time 60 \
    -H "Authorization: Bearer $(cat "$PW_ADMIN")" \
    -H 'Content-Type: application/mbox' --data-binary "@$PW_TMP/series.mbox" \
    "$PW_URL/api/v1/series?tree=app&branch=master")
[ "$code" = 202 ] || { fail series_posted "$code $(cat "$PW_TMP/body")"; finish; }
sid=$(jfield series.0 <"$PW_TMP/body")
series_tip() {
	[ "$(http GET "/api/v1/series/$sid")" = 200 ] &&
	    tip=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["series"]; print(s.get("commit_sha") or "" if s["state"]=="applied" else "")' "$PW_TMP/body" 2>/dev/null) &&
	    [ -n "$tip" ]
}
wait_for 60 series_tip || { fail series_applied "$(cat "$PW_TMP/body")"; finish; }
pass series_applied
web_run_queue r1 100 80 || { fail run_series "$(cat "$PW_TMP/body")"; finish; }

regressions() {
	[ "$(sql "SELECT count(*) FROM regressions")" = 2 ]
}
wait_for 60 regressions || { fail two_regressions "$(sql "SELECT * FROM comparisons")"; finish; }
pass two_regressions

esc1='mm: base &lt;b&gt;side&lt;/b&gt;'
esc2='&lt;script&gt;alert(1)&lt;/script&gt; memcg: &quot;x&quot; &amp; y'
page pair_names_both_sides "/pair/$pair" \
    "<tr class=\"side\"><th scope=\"row\">base</th><td><a class=\"mono\" href=\"/commit/$c1\">${c1:0:12}</a> $esc1</td><td>app</td><td>r1</td>" \
    "<tr class=\"side\"><th scope=\"row\">candidate</th><td><a class=\"mono\" href=\"/commit/$c2\">${c2:0:12}</a> $esc2</td><td>app</td><td>r1</td>"
# Each side said once: no head rows repeating the sides table's commits,
# kernels or rounds.
check pair_sides_said_once [ "$(grep -c "href=\"/commit/$c1\"" "$PW_TMP/body") $(grep -c "href=\"/commit/$c2\"" "$PW_TMP/body") $(grep -cE '<th>(base|candidate) kernel</th>|<tr><th>rounds</th>|class="side-(base|cand)"' "$PW_TMP/body")" = "1 1 0" ]
# GET /api/v1/pairs/{id} carries the same sides as the page: base then
# candidate, each commit, host, CPU, kernel, runs and rounds.
http GET "/api/v1/pairs/$pair" >/dev/null
python3 - "$PW_TMP/body" "$c1" "$c2" <<'PY' && pass pair_api_sides || fail pair_api_sides "$(cat "$PW_TMP/body")"
import json, sys
o = json.load(open(sys.argv[1]))
b, c = o["sides"]
assert (b["role"], b["commit"], c["role"], c["commit"]) == ("base", sys.argv[2], "candidate", sys.argv[3]), o["sides"]
for s in (b, c):
    assert s["host"] == "r1" and s["runs"] == 3 and s["rounds"] == 1 and s["tree"] == "app", s
    assert s["pair_id"] == o["id"] and "cpu_model" in s and "cpu_family" in s and "kernel" in s, s
assert c["subject"] == '<script>alert(1)</script> memcg: "x" & y', c
PY
page commit_names_its_base "/commit/$c2" \
    "<tr><th>compared with</th><td class=\"side-base\"><a class=\"mono\" href=\"/commit/$c1\">${c1:0:12}</a> $esc1</td></tr>"
page series_commit_names_its_base_and_series "/commit/$tip" \
    "<tr><th>series</th><td><a href=\"/series/$sid\">series $sid</a>" \
    "<tr><th>compared with</th><td class=\"side-base\"><a class=\"mono\" href=\"/commit/$c2\">${c2:0:12}</a> $esc2</td></tr>"
page series_page_names_its_base "/series/$sid" \
    "<tr><th>compared with</th><td class=\"side-base\"><a class=\"mono\" href=\"/commit/$c2\">${c2:0:12}</a>"
page regressions_link_the_series "/regressions" \
    "<a href=\"/series/$sid\">series $sid</a> memcg: the &lt;i&gt;series&lt;/i&gt; patch"
page series_list_links_the_series /series \
    "<a href=\"/series/$sid\">memcg: the &lt;i&gt;series&lt;/i&gt; patch</a>" \
    "<a class=\"mono\" href=\"/commit/$tip\">${tip:0:12}</a>" 'badge v-regression' \
    'app / master'
# The trees page (GET /api/v1/trees as a page): the tree, its branch
# linking its commits and its tip linking the commit page; the commits
# page lists c2 and c1, newest first, subjects escaped.
page trees_page '/trees' '<h2><a href="/commits?tree=app">app</a> <span class="muted">ok</span></h2>' \
    '<td><a href="/commits?tree=app&amp;branch=master">master</a></td>' \
    "<a class=\"mono\" href=\"/commit/$c2\">${c2:0:12}</a>"
page commits_page '/commits?tree=app&branch=master' '<h1>Commits of app / master</h1>' \
    "<tr><td><a class=\"mono\" href=\"/commit/$c2\">${c2:0:12}</a></td><td>$esc2</td>"
check commits_page_newest_first \
    [ "$(grep -o 'href="/commit/[0-9a-f]*"' "$PW_TMP/body" | head -n 2 | tr '\n' ' ')" = "href=\"/commit/$c2\" href=\"/commit/$c1\" " ]
# The history: c2 measured as pair 1's candidate and as the series'
# base is one row of the page, with both roles; the JSON keeps a point
# a job, each with its role.
hq="/history?job=kv&metric=ops&tree=app&branch=master"
page history_one_row_a_commit "$hq" '<th>role</th>' \
    "<td class=\"mono\"><a href=\"/commit/$c2\">${c2:0:12}…</a></td><td>$esc2</td><td>base, candidate</td>"
n=$(sed -n '/<h2>Points/,$p' "$PW_TMP/body" | grep -c "href=\"/commit/$c2\"")
check history_commit_listed_once [ "$n" = 1 ]
code=$(http GET "/api/v1$hq")
python3 - "$PW_TMP/body" "$c2" <<'PY' && pass api_history_roles ||
import json, sys
pts = [p for p in json.load(open(sys.argv[1]))["points"] if p["commit"] == sys.argv[2]]
assert sorted(p["role"] for p in pts) == ["base", "candidate"], pts
PY
	fail api_history_roles "$code $(head -c 600 "$PW_TMP/body")"
# The overview puts the series under the branch it targets.
code=$(http GET /api/v1/overview)
python3 - "$PW_TMP/body" "$sid" <<'PY' && pass overview_series_branch ||
import json, sys
o = json.load(open(sys.argv[1]))
g = [g for g in o["groups"] for i in g["items"]
     if i.get("kind") == "series" and str(i.get("id")) == sys.argv[2]]
assert g and g[0]["tree"] == "app" and g[0]["branch"] == "master", o["groups"]
PY
	fail overview_series_branch "$code $(head -c 800 "$PW_TMP/body")"
# The commit that is no series' tip links none.
http GET "/commit/$c2" >/dev/null
if grep -q "<th>series</th>" "$PW_TMP/body"; then
	fail plain_commit_links_no_series "$(grep -o "<th>series</th>.\{0,200\}" "$PW_TMP/body")"
else
	pass plain_commit_links_no_series
fi
code=$(http GET "/api/v1/regressions")
python3 - "$PW_TMP/body" "$sid" <<'PY' && pass api_regressions_series_id ||
import json, sys
rows = json.load(open(sys.argv[1]))["regressions"]
ids = sorted(r["series_id"] or 0 for r in rows)
assert ids == [0, int(sys.argv[2])], rows
PY
	fail api_regressions_series_id "$code $(head -c 600 "$PW_TMP/body")"

# The CLI: the commit's verdicts, its subject cleaned of nothing but
# control characters; --exit-code says a metric regressed.
PW=$PW_BIN/perfwatch
"$PW" commit --server "$PW_URL" "${c2:0:12}" >"$PW_TMP/cli.out" 2>"$PW_TMP/cli.err"
rc=$?
if [ $rc -eq 0 ] && grep -q "^commit $c2\$" "$PW_TMP/cli.out" &&
    grep -qF '<script>alert(1)</script> memcg: "x" & y' "$PW_TMP/cli.out" &&
    grep -qE "^$pair +r1 +kv +ops +101 +81 +-19\.80% +\[-[0-9.]+%, -[0-9.]+%\] +[0-9.e-]+ +regression *\$" "$PW_TMP/cli.out"; then
	pass cli_commit_verdicts
else
	fail cli_commit_verdicts "exit $rc: $(cat "$PW_TMP/cli.out" "$PW_TMP/cli.err")"
fi
"$PW" commit --server "$PW_URL" --exit-code "$c2" >/dev/null 2>&1
check cli_commit_exit_code_regressed [ $? = 1 ]
"$PW" commit --server "$PW_URL" "$tip" >"$PW_TMP/cli.out" 2>&1 &&
    grep -q "^  series $sid: memcg: the <i>series</i> patch" "$PW_TMP/cli.out" &&
    pass cli_commit_series || fail cli_commit_series "$(cat "$PW_TMP/cli.out")"
"$PW" commit --server "$PW_URL" --json "$c2" >"$PW_TMP/cli.json" 2>&1 &&
    http GET "/api/v1/commits/$c2" >/dev/null && cmp -s "$PW_TMP/cli.json" "$PW_TMP/body" &&
    pass cli_commit_json || fail cli_commit_json "$(head -c 300 "$PW_TMP/cli.json")"
"$PW" commit --server "$PW_URL" zz >/dev/null 2>"$PW_TMP/cli.err"
rc=$?
[ $rc = 2 ] && grep -q "not a commit sha: zz" "$PW_TMP/cli.err" && pass cli_commit_bad_sha ||
    fail cli_commit_bad_sha "exit $rc: $(cat "$PW_TMP/cli.err")"
"$PW" commit --server "$PW_URL" 0000dead >/dev/null 2>"$PW_TMP/cli.err"
rc=$?
[ $rc = 1 ] && grep -q "HTTP 404" "$PW_TMP/cli.err" && pass cli_commit_unknown ||
    fail cli_commit_unknown "exit $rc: $(cat "$PW_TMP/cli.err")"
finish
