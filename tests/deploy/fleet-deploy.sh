#!/usr/bin/env bash
# make check-deploy (not part of make check; needs root): a deployment
# as docs/DEPLOY.md makes it, across hosts, then the findings' proofs
# replayed against it.  perfwatchd runs in one network namespace, two
# runners each in their own, joined to the daemon's by veth pairs this
# test makes (10.202.K.2 -> 10.202.K.1; the addresses exist only inside
# the namespaces).  The daemon listens on 0.0.0.0 over HTTPS with a
# certificate of a CA the test makes (openssl); the runners verify it
# (ca_file) and run builds and benchmarks as the default user (no `user`
# key: perfwatch-bench where the host has it, else nobody).  A
# real tree is watched, a series mailed to a public-inbox archive the
# daemon watches goes through the chain (applied, triggered, built and
# measured on the runners), and then:
#   1. root on the bench host: the series' Makefile records `id -u`:
#      the default user's, and so is the benchmark's;
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
# Before that, the install: `make install-units install-users` into a
# scratch root (a copy of /etc) makes the system account perfwatch-bench
# (no login shell, no home, locked, in no group but its own) and the
# daemon's, once (a second run changes nothing); a DESTDIR install makes
# none; the runner's unit runs as root with Delegate=yes and passes
# systemd-analyze verify.  A root runner whose cgroup hierarchies are
# read-only (a mount namespace of its own) stops at start naming its
# cgroup's path.
# Finding 5 (git am caps) is tests/e2e/t0437-series-patch-caps.sh and
# the webhook's replay tests/e2e/t0800-alerts-e2e.sh: they need no
# second host.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
. "$here/../e2e/lib_runner.sh"
. "$here/../e2e/lib_git.sh"
. "$here/../e2e/lib_netns.sh"
. "$here/../e2e/lib_tls.sh"
. "$here/../e2e/lib_inbox.sh"

command -v openssl >/dev/null || { echo "SKIP check-deploy: needs openssl"; finish; }
nobody=$(id -u nobody 2>/dev/null) || { echo "SKIP check-deploy: no user nobody"; finish; }
NS=pwdep$$
D=${NS}d
deploy_cleanup() {
	pw_cleanup
	netns_cleanup
}
trap deploy_cleanup EXIT
netns_hosts "$NS" 202 2
case $? in
1) echo "SKIP check-deploy: $NETNS_WHY"; finish ;;
2) fail veth "$NETNS_WHY"; finish ;;
esac

# ---- a private CA and the daemon's certificate ----
C=$PW_TMP/ca
tls_certs "$C" perfwatch IP:127.0.0.1,IP:10.202.1.1,IP:10.202.2.1 || finish

# ---- make install: the accounts and the units, into a scratch root ----
# The accounts go into a copy of this host's /etc (USERS_ROOT), never
# into the host's own; the unit's ExecStart names the built runner.
top=$(cd "$here/../.." && pwd)
R=$PW_TMP/root
mkdir -p "$R/etc"
cp /etc/passwd /etc/group /etc/shadow "$R/etc/"
[ -f /etc/gshadow ] && cp /etc/gshadow "$R/etc/"
host_ids=$(cat /etc/passwd /etc/group | md5sum)
minst() {	# minst LOG ARGS...: make in the source tree, quiet
	local log=$1
	shift
	make -s --no-print-directory -C "$top" "$@" >"$log" 2>&1
}
if ! minst "$PW_TMP/install.log" install-units install-users DESTDIR="$R" USERS_ROOT="$R" \
    PREFIX=/usr BINDIR="$PW_BIN"; then
	fail make_install "$(tail -5 "$PW_TMP/install.log")"
else
	sys_max=$(awk '$1 == "SYS_UID_MAX" { print $2 }' /etc/login.defs 2>/dev/null)
	IFS=: read -r _ _ buid bgid _ bhome bshell <<<"$(grep '^perfwatch-bench:' "$R/etc/passwd")"
	bpw=$(grep '^perfwatch-bench:' "$R/etc/shadow" | cut -d: -f2)
	members=$(awk -F: '$4 ~ /(^|,)perfwatch-bench(,|$)/ { print $1 }' "$R/etc/group")
	[ -n "$buid" ] && [ "$buid" -gt 0 ] && [ "$buid" -le "${sys_max:-999}" ] &&
	    [ "$bshell" = /usr/sbin/nologin ] && [ "$bhome" = /nonexistent ] && [ ! -e "$R/nonexistent" ] &&
	    [ "${bpw:0:1}" = "!" ] && [ -z "$members" ] &&
	    [ "$(awk -F: -v g="$bgid" '$3 == g { print $1 }' "$R/etc/group")" = perfwatch-bench ] &&
	    pass install_makes_bench_user ||
	    fail install_makes_bench_user "uid '$buid' (system up to ${sys_max:-999}) gid '$bgid' home '$bhome' shell '$bshell' password '${bpw:0:1}' member of '$members'; $(cat "$PW_TMP/install.log")"
	grep -q '^perfwatch:' "$R/etc/passwd" && pass install_makes_daemon_user ||
	    fail install_makes_daemon_user "$(grep perfwatch "$R/etc/passwd")"
	# Again: nothing changes.
	before=$(cat "$R/etc/passwd" "$R/etc/group" "$R/etc/shadow" | md5sum)
	minst "$PW_TMP/install2.log" install-users DESTDIR="$R" USERS_ROOT="$R" PREFIX=/usr &&
	    [ "$(cat "$R/etc/passwd" "$R/etc/group" "$R/etc/shadow" | md5sum)" = "$before" ] &&
	    [ "$(grep -c '^perfwatch-bench:' "$R/etc/passwd")" = 1 ] &&
	    pass install_users_idempotent || fail install_users_idempotent "$(cat "$PW_TMP/install2.log")"
	# The runner's unit: root, its cgroup subtree delegated.
	U=$R/usr/lib/systemd/system/perfwatch-runner.service
	delegate=$(awk '/^\[/ { sec = $0 } sec == "[Service]" && /^Delegate=/' "$U")
	[ "$delegate" = Delegate=yes ] && ! grep -q '^User=' "$U" &&
	    grep -qx "ExecStart=$PW_BIN/perfwatch-runner -c /etc/perfwatch/runner.yaml" "$U" &&
	    pass runner_unit_delegates || fail runner_unit_delegates "[Service] '$delegate'; $(grep -E '^(User|ExecStart)=' "$U")"
	if command -v systemd-analyze >/dev/null; then
		systemd-analyze verify "$U" >"$PW_TMP/verify.log" 2>&1
		rc=$?
		[ "$rc" = 0 ] && ! grep -q "perfwatch-runner.service" "$PW_TMP/verify.log" &&
		    pass runner_unit_verifies || fail runner_unit_verifies "exit $rc: $(cat "$PW_TMP/verify.log")"
	else
		echo "SKIP runner_unit_verifies: no systemd-analyze"
	fi
fi
# A package's install (DESTDIR) ships the accounts' file, makes none.
minst "$PW_TMP/install3.log" install-users DESTDIR="$PW_TMP/pkg" &&
    [ -f "$PW_TMP/pkg/usr/local/lib/sysusers.d/perfwatch.conf" ] &&
    grep -q "accounts not made (DESTDIR install" "$PW_TMP/install3.log" &&
    [ "$(cat /etc/passwd /etc/group | md5sum)" = "$host_ids" ] &&
    pass destdir_install_makes_no_accounts || fail destdir_install_makes_no_accounts "$(cat "$PW_TMP/install3.log")"
# The default user of a root runner: perfwatch-bench where the host has
# it (make install as root), else nobody.
bench_user=nobody
id -u perfwatch-bench >/dev/null 2>&1 && bench_user=perfwatch-bench
bench_uid=$(id -u "$bench_user")

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
inbox_archive

daemon_config "$PW_TMP/d" r1 r2
sed -i 's/^listen: .*/listen: 0.0.0.0:0/' "$PW_DIR/daemon.yaml"
tree_yaml app "file://$SRC" master
tree_yaml private "https://deploy:s3cr3t-pw@127.0.0.1:9/private.git" master
inbox_yaml "series_per_sender_day: 1"
cat >>"$PW_DIR/daemon.yaml" <<YAML
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

netns_daemon "$NS" https || { fail daemon_starts "$(tail -5 "$PW_DIR/daemon.log")"; finish; }
wait_until 30 eval '[ "$(sql "SELECT tip FROM tree_branches b JOIN trees t ON t.id = b.tree_id WHERE t.name = '"'app'"' AND b.branch = '"'master'"'")" = "$c1" ]' ||
    { fail first_sight "tip $c1 not recorded"; show_logs; finish; }
wait_until 30 seen_is "$(g "$INBOX" rev-parse HEAD)" ||
    { fail inbox_first_sight "$(sql "SELECT * FROM inbox_state")"; finish; }

# ---- a root runner whose cgroups it cannot write stops at start ----
# Its cgroup hierarchies read-only in a mount namespace of its own, on
# bench host r1: the runner names its cgroup's path and exits before it
# registers.
cg=$(awk '{ split($0, a, " - "); split(a[2], t, " ") }
    t[1] == "cgroup2" || (t[1] == "cgroup" && t[3] ~ /(^|,)memory(,|$)/) { print $5 }' /proc/self/mountinfo)
if command -v unshare >/dev/null && [ -n "$cg" ]; then
	mkdir -p "$PW_TMP/rro/work"
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$PW_TMP/rro/token"
	chmod 600 "$PW_TMP/rro/token"
	cat >"$PW_TMP/rro/runner.yaml" <<YAML
server: https://10.202.1.1:$PW_PORT
ca_file: $C/ca.pem
name: rro
token_file: $PW_TMP/rro/token
workdir: $PW_TMP/rro/work
user: root
YAML
	printf '%s\n' $cg >"$PW_TMP/cgmounts"
	nsenter --net="/run/netns/${NS}r1" unshare --mount sh -c 'while read -r m; do mount --bind "$m" "$m" && mount -o remount,bind,ro "$m" || exit 99; done <"$1"; shift; exec "$@"' \
	    sh "$PW_TMP/cgmounts" "$PW_BIN/perfwatch-runner" -c "$PW_TMP/rro/runner.yaml" --once >"$PW_TMP/rro.log" 2>&1
	rc=$?
	if [ "$rc" = 99 ]; then
		echo "SKIP runner_stops_on_unwritable_cgroup: cannot remount the cgroup hierarchies read-only"
	else
		[ "$rc" != 0 ] && grep -q "cgroup: cgroup.*/sys/fs/cgroup.* is not writable: Read-only file system (a runner run as root must be able to manage its cgroup: systemd Delegate=yes" "$PW_TMP/rro.log" &&
		    ! grep -q "registered as" "$PW_TMP/rro.log" &&
		    pass runner_stops_on_unwritable_cgroup || fail runner_stops_on_unwritable_cgroup "exit $rc: $(cat "$PW_TMP/rro.log")"
	fi
else
	echo "SKIP runner_stops_on_unwritable_cgroup: no unshare, or no memory cgroup hierarchy here"
fi

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

# ---- the runners, as the default user, over HTTPS from their own hosts ----
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
# 1. Who ran the series' build and the benchmark: the default user.
uids=$(sql "SELECT DISTINCT m.name || '=' || CAST(m.value AS INT) FROM metrics m
    JOIN runs r ON r.id = m.run_id JOIN jobs j ON j.id = r.job_id
    WHERE j.name = 'who' AND m.name IN ('build_uid', 'run_uid') ORDER BY 1" | tr '\n' ' ')
[ "$uids" = "build_uid=$bench_uid run_uid=$bench_uid " ] && pass series_build_not_root ||
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
