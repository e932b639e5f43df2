#!/usr/bin/env bash
# make check-deploy (not part of make check; needs root): a deployment
# as docs/DEPLOY.md makes it, across hosts, then the findings' proofs
# replayed against it.  perfwatchd runs in one network namespace, two
# runners each in their own, joined to the daemon's by veth pairs this
# test makes (10.202.K.2 -> 10.202.K.1; the addresses exist only inside
# the namespaces).  The daemon listens on 0.0.0.0 over HTTPS with a
# certificate of a CA the test makes (openssl); the runners verify it
# (ca_file) and run builds and benchmarks as nobody (no `user` key).  A
# real tree is watched, a series mailed to a public-inbox archive the
# daemon watches goes through the chain (applied, triggered, built and
# measured on the runners), and then:
#   1. root on the bench host: the series' Makefile records `id -u`:
#      nobody's, and so is the benchmark's;
#   2. plaintext: plain HTTP on the port is not served, a client without
#      the CA is refused, the same file without tls is refused at load
#      (a non-loopback listen), SMTP AUTH over smtp:// likewise;
#   3. runner identity: r1 registering with the label r2 does not claim
#      a job pinned to hosts: [r2]; r2 runs it;
#   4. bodies before authorisation: an anonymous 8 MiB POST is answered
#      401 without the daemon reading it;
#   6. secrets: a tree URL's password is on no public route or log;
#   7. the login's next= stays local, failed logins cost time, a short
#      token is refused at load, raw output is nosniff, a sender's
#      second series of the day is refused (series_per_sender_day: 1).
# Finding 5 (git am caps) is tests/e2e/t0437-series-patch-caps.sh and
# the webhook's replay tests/e2e/t0800-alerts-e2e.sh: they need no
# second host.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
. "$here/../e2e/lib_runner.sh"
. "$here/../e2e/lib_git.sh"

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null ||
    ! command -v nsenter >/dev/null || ! command -v openssl >/dev/null; then
	echo "SKIP check-deploy: needs root, iproute2, nsenter and openssl"
	finish
fi
nobody=$(id -u nobody 2>/dev/null) || { echo "SKIP check-deploy: no user nobody"; finish; }
NS=pwdep$$
D=${NS}d
NETNS=()
deploy_cleanup() {
	local n
	pw_cleanup
	for n in "${NETNS[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
}
trap deploy_cleanup EXIT
ip netns add "$D" || { echo "SKIP check-deploy: cannot make a network namespace"; finish; }
NETNS+=("$D")
ip -n "$D" link set lo up
for k in 1 2; do
	ip netns add "${NS}r$k" && NETNS+=("${NS}r$k") &&
	    ip link add "${NS}a$k" type veth peer name "${NS}b$k" &&
	    ip link set "${NS}a$k" netns "$D" &&
	    ip link set "${NS}b$k" netns "${NS}r$k" &&
	    ip -n "$D" addr add "10.202.$k.1/24" dev "${NS}a$k" &&
	    ip -n "${NS}r$k" addr add "10.202.$k.2/24" dev "${NS}b$k" &&
	    ip -n "$D" link set "${NS}a$k" up &&
	    ip -n "${NS}r$k" link set "${NS}b$k" up &&
	    ip -n "${NS}r$k" link set lo up ||
	    { fail veth "cannot set up veth pair $k"; finish; }
done

# ---- a private CA and the daemon's certificate ----
C=$PW_TMP/ca
mkdir -p "$C"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=perfwatch deploy CA" \
    -keyout "$C/ca.key" -out "$C/ca.pem" 2>"$C/log" &&
    openssl req -newkey rsa:2048 -nodes -subj "/CN=perfwatch" \
        -keyout "$C/server.key" -out "$C/server.csr" 2>>"$C/log" &&
    printf 'subjectAltName=IP:127.0.0.1,IP:10.202.1.1,IP:10.202.2.1\n' >"$C/ext" &&
    openssl x509 -req -in "$C/server.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" \
        -CAcreateserial -days 2 -extfile "$C/ext" -out "$C/server.pem" 2>>"$C/log" ||
    { fail make_certificates "$(cat "$C/log")"; finish; }
chmod 644 "$C/ca.pem"

# The test's own curl runs in the daemon's namespace, with the CA.
curl() {
	ip netns exec "$D" curl --cacert "$C/ca.pem" "$@"
}
curl_in() {	# curl_in NS ARGS...: curl from a runner's namespace
	local ns=$1
	shift
	ip netns exec "$ns" curl --cacert "$C/ca.pem" "$@"
}

# ---- the tree, the inbox, the daemon ----
SRC=$PW_TMP/app
src_init "$SRC"
printf 'all:\n\tid -u >build-uid\n' >"$SRC/Makefile"
g "$SRC" add -A
g "$SRC" commit -qm "app: a Makefile"
c1=$(g "$SRC" rev-parse HEAD)
# The series: its Makefile also says who ran it, as the issue's proof
# did (a patch making the build run `id`).
g "$SRC" checkout -qb topic
printf 'all:\n\tid -u >build-uid\n\tid >build-id\n' >"$SRC/Makefile"
g "$SRC" commit -qam "app: the build says who runs it"
g "$SRC" format-patch -q --thread -o "$PW_TMP/s1" -1
echo again >>"$SRC/README"
g "$SRC" commit -qam "app: a second series from the same sender"
g "$SRC" format-patch -q --thread -o "$PW_TMP/s2" -1
g "$SRC" checkout -q master
INBOX=$PW_TMP/inbox
git -c init.defaultBranch=master init -q "$INBOX"
add_msg() {
	sed '1{/^From [0-9a-f]* /d}' "$1" >"$INBOX/m"
	g "$INBOX" add m
	g "$INBOX" commit -qm "msg"
}
printf 'From: a@x\nSubject: [PATCH] old history\nMessage-Id: <old@x>\n\n---\ndiff --git a/README b/README\n' >"$PW_TMP/old.msg"
add_msg "$PW_TMP/old.msg"

daemon_config "$PW_TMP/d" r1 r2
sed -i 's/^listen: .*/listen: 0.0.0.0:0/' "$PW_DIR/daemon.yaml"
tree_yaml app "file://$SRC" master
tree_yaml private "https://deploy:s3cr3t-pw@127.0.0.1:9/private.git" master
cat >>"$PW_DIR/daemon.yaml" <<YAML
inboxes:
  - name: lm
    url: file://$INBOX
    poll: 1s
    tree: app
    series_per_sender_day: 1
scheduler:
  claim_wait: 2s
YAML
TLS_YAML="tls:
  cert_file: $C/server.pem
  key_file: $C/server.key"
cat >"$PW_DIR/jobs/who.yaml" <<'YAML'
name: who
parser: keyvalue
build: [make]
command: [sh, -c, 'echo build_uid=$(cat build-uid); echo run_uid=$(id -u); echo ops=100']
trigger:
  inboxes: [lm]
runs: 1
max_runs: 1
rounds: 1
timeout: 60s
metrics:
  build_uid: {better: higher}
  run_uid: {better: higher}
  ops: {better: higher}
YAML
cat >"$PW_DIR/jobs/pinned.yaml" <<'YAML'
name: pinned
parser: keyvalue
command: [sh, -c, 'echo ops=100']
hosts: [r2]
runs: 1
max_runs: 1
metrics:
  ops: {better: higher}
YAML

# 2. Without tls, a listen on every address is refused at load.
if out=$("$PW_BIN/perfwatchd" -n -c "$PW_DIR/daemon.yaml" 2>&1); then
	fail plain_http_off_loopback_refused "accepted: $out"
else
	check plain_http_off_loopback_refused grep -qF "listen: 0.0.0.0:0 is not a loopback address and tls is not set" <<<"$out"
fi
echo "$TLS_YAML" >>"$PW_DIR/daemon.yaml"
# ... and SMTP AUTH over smtp:// without STARTTLS.
cp "$PW_DIR/daemon.yaml" "$PW_DIR/smtp.yaml"
printf 'u:p\n' >"$PW_DIR/smtp.auth"
cat >>"$PW_DIR/smtp.yaml" <<YAML
alerts:
  email:
    smtp: smtp://127.0.0.1:25
    from: perfwatch@example.org
    to: [perf@example.org]
    auth_file: $PW_DIR/smtp.auth
YAML
if out=$("$PW_BIN/perfwatchd" -n -c "$PW_DIR/smtp.yaml" 2>&1); then
	fail smtp_auth_in_clear_refused "accepted: $out"
else
	check smtp_auth_in_clear_refused grep -qF "alerts.email.auth_file: SMTP AUTH over smtp:// without STARTTLS" <<<"$out"
fi
# 7. A short runner token is refused at load.
cp "$PW_TOKENS/r1.token" "$PW_TMP/r1.good"
printf 'short-but-secret\n' >"$PW_TOKENS/r1.token"
if out=$("$PW_BIN/perfwatchd" -n -c "$PW_DIR/daemon.yaml" 2>&1); then
	fail short_token_refused "accepted: $out"
else
	check short_token_refused grep -qF "runners[0].token_file: $PW_TOKENS/r1.token: the token is 16 bytes" <<<"$out"
fi
cp "$PW_TMP/r1.good" "$PW_TOKENS/r1.token"

PW_DB=$PW_DIR/pw.db
spawn "$PW_DIR/daemon.log" nsenter --net="/run/netns/$D" "$PW_BIN/perfwatchd" -v \
    -c "$PW_DIR/daemon.yaml" --port-file "$PW_DIR/port"
PW_DAEMON_PID=$!
if ! wait_for 20 pw_listening "$PW_DIR/port" || ! test -s "$PW_DIR/port"; then
	fail daemon_starts "$(tail -5 "$PW_DIR/daemon.log")"
	finish
fi
PW_PORT=$(cat "$PW_DIR/port")
PW_URL=https://127.0.0.1:$PW_PORT
wait_until 30 eval '[ "$(sql "SELECT tip FROM tree_branches b JOIN trees t ON t.id = b.tree_id WHERE t.name = '"'app'"' AND b.branch = '"'master'"'")" = "$c1" ]' ||
    { fail first_sight "tip $c1 not recorded"; show_logs; finish; }
seen_is() { [ "$(sql "SELECT last_commit FROM inbox_state WHERE name = 'lm'")" = "$1" ]; }
wait_until 30 seen_is "$(g "$INBOX" rev-parse HEAD)" ||
    { fail inbox_first_sight "$(sql "SELECT * FROM inbox_state")"; finish; }

# 2. Plain HTTP is not served on the port; a client without the CA
# refuses the daemon.
code=$(ip netns exec "$D" curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$PW_PORT/healthz")
[ "$code" != 200 ] && pass plain_http_not_served || fail plain_http_not_served "status $code"
ip netns exec "$D" curl -s -o /dev/null --max-time 10 "$PW_URL/healthz"
rc=$?
[ "$rc" = 60 ] && pass unknown_ca_refused || fail unknown_ca_refused "curl exit $rc"

# 3. r1 says it is r2; a job pinned to r2 is not r1's to claim.
code=$(http POST /api/v1/submit "$PW_ADMIN" '{"job":"pinned"}')
[ "$code" = 201 ] || { fail submit_pinned "$code $(cat "$PW_TMP/body")"; finish; }
pinned=$(jfield pairs.0.base_job <"$PW_TMP/body")
R1TOK=$(cat "$PW_TOKENS/r1.token")
curl_in "${NS}r1" -s -o /dev/null -H "Authorization: Bearer $R1TOK" \
    --data-binary '{"name":"r1","labels":["r2"],"inventory":{}}' \
    "https://10.202.1.1:$PW_PORT/api/v1/runners/register"
claim=$(curl_in "${NS}r1" -s -w ' %{http_code}' -H "Authorization: Bearer $R1TOK" \
    --data-binary '{}' "https://10.202.1.1:$PW_PORT/api/v1/jobs/claim")
[ "${claim##* }" = 204 ] && [ "$(sql "SELECT state FROM jobs WHERE id = $pinned")" = queued ] &&
    pass r1_cannot_claim_as_r2 || fail r1_cannot_claim_as_r2 "claim: $claim"

# ---- the runners, as nobody, over HTTPS from their own hosts ----
chmod 711 "$PW_TMP"
for k in 1 2; do
	runner_config "r$k" "ca_file: $C/ca.pem"
	sed -i -e "s|^server: .*|server: https://10.202.$k.1:$PW_PORT|" -e '/^user: /d' \
	    "$PW_TMP/r$k/runner.yaml"
	chmod 711 "$PW_TMP/r$k"
	PERFWATCH_NO_CGROUPS=1 spawn "$PW_TMP/r$k/runner.log" \
	    nsenter --net="/run/netns/${NS}r$k" "$PW_BIN/perfwatch-runner" -v \
	    -c "$PW_TMP/r$k/runner.yaml"
done
pinned_done() { [ "$(sql "SELECT state FROM jobs WHERE id = $pinned")" = success ]; }
wait_until 120 pinned_done && [ "$(sql "SELECT h.name FROM jobs j JOIN hosts h ON h.id = j.host_id WHERE j.id = $pinned")" = r2 ] &&
    pass pinned_job_ran_on_r2 || { fail pinned_job_ran_on_r2 "$(sql "SELECT state, host_id, error FROM jobs WHERE id = $pinned")"; show_logs; }

# ---- the series, mailed ----
add_msg "$PW_TMP"/s1/*.patch
applied() { [ "$(sql "SELECT state FROM series WHERE title LIKE '%says who runs it'")" = applied ]; }
wait_until 60 applied && pass series_applied ||
    { fail series_applied "$(sql "SELECT state, error FROM series")"; show_logs; finish; }
# A pair on each host online when the series came (one or both).
who_done() {
	[ "$(sql "SELECT count(*) FROM jobs WHERE name = 'who'")" -ge 2 ] &&
	    [ "$(sql "SELECT count(*) FROM jobs WHERE name = 'who' AND state <> 'success'")" = 0 ]
}
wait_until 180 who_done && pass series_measured_on_the_fleet ||
    { fail series_measured_on_the_fleet "$(sql "SELECT id, state, error FROM jobs WHERE name = 'who'")"; show_logs; finish; }
# 1. Who ran the series' build and the benchmark: nobody.
uids=$(sql "SELECT DISTINCT m.name || '=' || CAST(m.value AS INT) FROM metrics m
    JOIN runs r ON r.id = m.run_id JOIN jobs j ON j.id = r.job_id
    WHERE j.name = 'who' AND m.name IN ('build_uid', 'run_uid') ORDER BY 1" | tr '\n' ' ')
[ "$uids" = "build_uid=$nobody run_uid=$nobody " ] && pass series_build_not_root ||
    fail series_build_not_root "$uids"
# The pairs ran on the runners, over their links.
hosts=$(sql "SELECT group_concat(DISTINCT h.name) FROM jobs j JOIN hosts h ON h.id = j.host_id WHERE j.name IN ('who', 'pinned')")
echo "# hosts that ran jobs: $hosts"

# 4. An anonymous 8 MiB body is refused on its headers.
head -c $((8 << 20)) /dev/zero >"$PW_TMP/big"
t0=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -H 'Content-Type: application/json' \
    --data-binary @"$PW_TMP/big" "$PW_URL/api/v1/submit")
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$code" = 401 ] && pass anonymous_body_refused_first || fail anonymous_body_refused_first "status $code in $ms ms"
echo "# 8 MiB anonymous POST answered $code in $ms ms"

# 6. The tree URL's password: on no public route, page or log.
http GET /api/v1/trees >/dev/null
leak=$(grep -l 's3cr3t-pw' "$PW_TMP/body" "$PW_DIR/daemon.log" "$PW_TMP"/r*/runner.log 2>/dev/null)
curl -s "$PW_URL/" >"$PW_TMP/overview.html"
grep -q 's3cr3t-pw' "$PW_TMP/overview.html" && leak="$leak overview"
grep -q 'https://\*\*\*@127.0.0.1:9/private.git' "$PW_TMP/body" && [ -z "$leak" ] &&
    pass tree_password_redacted || fail tree_password_redacted "in: $leak; $(head -c 300 "$PW_TMP/body")"

# 7. The login: next= stays local; failures cost time.
J=$PW_TMP/jar
curl -s -c "$J" -b "$J" -o "$PW_TMP/form" "$PW_URL/login"
pre=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$PW_TMP/form")
loc=$(curl -s -D - -o /dev/null -c "$J" -b "$J" --data-urlencode "csrf=$pre" \
    --data-urlencode "token=$(cat "$PW_ADMIN")" --data-urlencode "next=$(printf '/\t/evil.example')" \
    "$PW_URL/login" | sed -n 's/^[Ll]ocation: *//p' | tr -d '\r')
[ "$loc" = /regressions ] && pass login_next_local || fail login_next_local "Location: $loc"
codes=
for i in 1 2 3 4 5 6; do
	curl -s -c "$J" -b "$J" -o "$PW_TMP/form" "$PW_URL/login"
	pre=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$PW_TMP/form")
	codes="$codes $(curl -s -o /dev/null -w '%{http_code}' -c "$J" -b "$J" \
	    --data-urlencode "csrf=$pre" --data-urlencode "token=guess-$i" "$PW_URL/login")"
done
[ "$codes" = " 403 403 403 403 403 429" ] && pass failed_logins_throttled ||
    fail failed_logins_throttled "$codes"
# Raw output: text, never sniffed.
job=$(sql "SELECT id FROM jobs WHERE name = 'who' AND state = 'success' LIMIT 1")
hdr=$(curl -s -D - -o /dev/null "$PW_URL/api/v1/jobs/$job/runs/0/raw")
grep -qi '^X-Content-Type-Options: nosniff' <<<"$hdr" && grep -qi '^Content-Type: text/plain' <<<"$hdr" &&
    pass raw_output_nosniff || fail raw_output_nosniff "$hdr"
# A second series from the same sender the same day: refused, named.
add_msg "$PW_TMP"/s2/*.patch
refused() { [ "$(sql "SELECT state FROM series WHERE title LIKE '%same sender'")" = refused ]; }
wait_until 60 refused &&
    grep -qF "inboxes[].series_per_sender_day: 1" <<<"$(sql "SELECT error FROM series WHERE title LIKE '%same sender'")" &&
    pass second_series_refused || fail second_series_refused "$(sql "SELECT title, state, error FROM series")"
finish
