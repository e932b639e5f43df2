#!/usr/bin/env bash
# check: parallel
# Every list route of the API is paginated with a maximum page size
# (docs/API.md): from the route table (perfwatchd --routes), each GET route
# of /api/v1 without a path parameter is either a list checked here or
# one of the single-object routes named below.  For each list, a limit
# above the maximum is refused with a 400 naming 'limit', and walking it
# with limit=1 by next_cursor gives every row once, the same rows as one
# big page, and ends.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/web_fill.sh"

HOOK=$PW_TMP/hook
hook_start "$HOOK" ok || { fail hook_server "no port"; finish; }

SRC=$PW_TMP/app
src_init "$SRC"
c1=$(g "$SRC" rev-parse HEAD)
c2=$(commit "$SRC" README "second")
c3=$(commit "$SRC" README "third")
LIB=$PW_TMP/lib
src_init "$LIB"

daemon_config "$PW_TMP/d" r1 r2
tree_yaml app "file://$SRC" master
tree_yaml lib "file://$LIB" master
cat >>"$PW_DIR/daemon.yaml" <<YAML
alerts:
  webhooks:
    - url: $HOOK_URL
      secret_file: $HOOK/secret
  poll: 1s
YAML
web_job_file "$PW_DIR"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "$c3" || { fail first_sight "$(cat "$PW_TMP/trees.json")"; finish; }
# Commits pushed while the daemon watches are all recorded.
commit "$SRC" README "fourth" >/dev/null
c5=$(commit "$SRC" README "fifth")
wait_tip master "$c5" || { fail second_sight "$(cat "$PW_TMP/trees.json")"; finish; }

# Rows for every list: 3 pairs, of which the 2 between commits regress
# (two regressions, two reports with a webhook each, history points on
# master), two hosts, two series, the commits of two trees, two
# bisections.
web_fill 1 1000 1000 && web_fill_commit app "$c1" "$c2" 1000 700 &&
    web_fill_commit app "$c2" "$c3" 1000 700 || { fail fill "$(cat "$PW_TMP/body")"; finish; }
web_wait_verdicts 3 || { fail verdicts "no verdicts"; finish; }
[ "$(http POST /api/v1/runners/register "$(token_of r2)" '{"name":"r2"}')" = 200 ] ||
    fail register-r2 "$(cat "$PW_TMP/body")"
g "$SRC" checkout -qb topic
commit "$SRC" notes.txt "notes: one" >/dev/null
g "$SRC" format-patch -q --thread -o "$PW_TMP/s1" -1
commit "$SRC" notes.txt "notes: two" >/dev/null
g "$SRC" format-patch -q --thread -o "$PW_TMP/s2" -1
g "$SRC" checkout -q master
cat "$PW_TMP"/s1/*.patch "$PW_TMP"/s2/*.patch >"$PW_TMP/two.mbox"
code=$(curl -s -o "$PW_TMP/body" -w '%{http_code}' --max-time 60 \
    -H "Authorization: Bearer $(cat "$PW_ADMIN")" --data-binary "@$PW_TMP/two.mbox" \
    "$PW_URL/api/v1/series?tree=app")
[ "$code" = 202 ] || [ "$code" = 201 ] || [ "$code" = 200 ] || fail series-upload "$code $(cat "$PW_TMP/body")"
# Bisections need a bisectable regression of a tree; the rows here are
# written with the sqlite3 CLI (the only rows of this test not made
# through the API) so GET /api/v1/bisect has pages to walk.
sql "INSERT INTO bisections (origin, pair_id, job, metric, good_sha, bad_sha, state, steps_limit, created, updated)
     VALUES ('change-point', 1, 'kv', 'ops', 'aa', 'bb', 'cancelled', 8, 1, 1),
            ('change-point', 2, 'kv', 'ops', 'cc', 'dd', 'cancelled', 8, 2, 2)" ||
    fail bisect-rows "insert failed"
alerts_two() { [ "$(sql "SELECT count(*) FROM alerts")" -ge 2 ]; }
wait_for 60 alerts_two || fail alert-rows "$(sql 'SELECT id, kind, state FROM alerts')"

# walk NAME PATH KEY MAX: the checks above, on one list route.
walk() {
	python3 - "$PW_URL" "$2" "$3" "$4" <<'PY'
import json, sys, urllib.error, urllib.request
url, path, key, mx = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sep = "&" if "?" in path else "?"
def get(q):
    try:
        with urllib.request.urlopen(url + path + sep + q, timeout=60) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
st, o = get("limit=%d" % (mx + 1))
if st != 400 or "limit" not in o.get("error", ""):
    sys.exit("limit %d: status %d %s" % (mx + 1, st, o))
st, o = get("limit=0")
if st != 400:
    sys.exit("limit 0: status %d" % st)
st, o = get("limit=x")
if st != 400:
    sys.exit("limit x: status %d" % st)
st, whole = get("limit=%d" % mx)
if st != 200:
    sys.exit("limit %d: status %d %s" % (mx, st, whole))
# Rows are told apart by their id (a tree by its name, a history point
# by its job): other fields, such as a host's last_seen, may move.
def ident(r):
    return r.get("id", r.get("name", r.get("job_id")))
want = [ident(r) for r in whole[key]]
if len(want) < 2:
    sys.exit("only %d rows to page through" % len(want))
got, cur, pages = [], None, 0
while True:
    st, o = get("limit=1" + ("" if cur is None else "&cursor=%s" % cur))
    if st != 200:
        sys.exit("page %d: status %d %s" % (pages, st, o))
    if len(o[key]) > 1:
        sys.exit("page %d: %d rows for limit=1" % (pages, len(o[key])))
    got += [ident(r) for r in o[key]]
    pages += 1
    cur = o.get("next_cursor")
    if cur is None or pages > len(want) + 2:
        break
# A page may end with an empty one (the last full page has a cursor).
# History pages step back in time while each lists oldest first, so the
# rows are compared as sets, each once.
if len(set(got)) != len(got) or sorted(got, key=str) != sorted(want, key=str):
    sys.exit("walked %d rows in %d pages, want %d: %s" % (len(got), pages, len(want), got[:2]))
print(len(want))
PY
}

check_list() {	# check_list NAME PATH KEY MAX
	local out
	if out=$(walk "$@" 2>&1); then
		pass "$1-paged ($out rows)"
	else
		fail "$1-paged" "$out"
	fi
}
check_list jobs /api/v1/jobs jobs 500
check_list hosts /api/v1/hosts hosts 500
check_list commits "/api/v1/commits?tree=app" commits 500
check_list series /api/v1/series series 500
check_list alerts /api/v1/alerts alerts 500
check_list regressions /api/v1/regressions regressions 500
check_list bisect /api/v1/bisect bisections 500
check_list trees /api/v1/trees trees 500
http GET "/api/v1/jobs?limit=1" >/dev/null
point=$(jfield jobs.0.point <"$PW_TMP/body" | python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.stdin.read().rstrip("\n"), safe=""))')
check_list history "/api/v1/history?job=kv&metric=ops&point=$point" points 200
[ "$(http GET "/api/v1/jobs?cursor=abc")" = 400 ] && [[ $(jfield error <"$PW_TMP/body") == *cursor* ]] &&
    pass bad-cursor-refused || fail bad-cursor-refused "$(cat "$PW_TMP/body")"

# Every GET route of /api/v1 without a path parameter is one of these:
# the lists above, or a single object (docs/API.md, "Pagination");
# /api/v1/builds is paged by t0824 (it needs shared builds).
lists=" /api/v1/jobs /api/v1/hosts /api/v1/commits /api/v1/series /api/v1/alerts /api/v1/regressions /api/v1/bisect /api/v1/trees /api/v1/history /api/v1/builds "
single=" /api/v1/overview /api/v1/comparisons /api/v1/latency "
"$PW_BIN/perfwatchd" --routes >"$PW_TMP/routes" || fail routes "perfwatchd --routes"
unknown=
while read -r method pattern _; do
	[ "$method" = GET ] || continue
	case $pattern in /api/v1/*) ;; *) continue ;; esac
	case $pattern in *'#'* | *'*'* | */) continue ;; esac
	[[ $lists == *" $pattern "* || $single == *" $pattern "* ]] || unknown="$unknown $pattern"
done <"$PW_TMP/routes"
[ -z "$unknown" ] && [ "$(grep -c '^GET /api/v1/' "$PW_TMP/routes")" -gt 10 ] &&
    pass every-list-route-checked || fail every-list-route-checked "unclassified:$unknown"
finish
