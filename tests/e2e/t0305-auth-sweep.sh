#!/usr/bin/env bash
# check: parallel
# The authorisation sweep: every route of the daemon's tables
# (perfwatchd --routes, read from the tables the server dispatches on, so
# every route there is swept) is called with no token, a wrong
# token, and the token of the other role.  A route that needs a token
# answers 401 without one and 403 with a wrong one or the other role's;
# a state-changing route (POST) that needs none is one of the few that
# must not (login); a session route (dashboard forms) refuses a request
# without a session.  No token, right or wrong, appears in a reply or in
# the daemon's log.  A token file that others can read is refused, and
# so is a token shorter than 32 bytes (the admin's, a runner's in the
# daemon file, the runner's own), naming file:line:column and the key.
. "$(dirname "$0")/lib.sh"

routes=$PW_TMP/routes
if ! "$PW_BIN/perfwatchd" --routes >"$routes" || [ ! -s "$routes" ]; then
	fail routes_listed "perfwatchd --routes: $(cat "$routes")"
	finish
fi
n=$(wc -l <"$routes")
[ "$n" -ge 40 ] && grep -q '^POST /api/v1/jobs/#/runs runner api$' "$routes" &&
    grep -q '^POST /api/v1/regressions/ admin web$' "$routes" &&
    pass routes_listed || fail routes_listed "$n routes: $(head -5 "$routes")"

daemon_config "$PW_TMP/d" r1
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wrong=$PW_TMP/wrong.token
echo "WRONG-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$wrong"
runner=$(token_of r1)

# A concrete path for a pattern: '#' an id, '*' a segment, a prefix
# ('/' at the end) one more segment.
concrete() {
	local p=${1//#/1}
	p=${p//\*/x}
	case $p in */) [ "$p" = / ] || p=${p}1 ;; esac
	echo "$p"
}
# call METHOD PATH TOKENFILE|-: the status; the body in $PW_TMP/body.
call() {
	local args=(-s -o "$PW_TMP/body" -w '%{http_code}' -X "$1" --max-time 30
	    -H 'Content-Type: application/json' --data-binary '{}')
	[ "$1" = GET ] && args=(-s -o "$PW_TMP/body" -w '%{http_code}' --max-time 30)
	[ "$3" != - ] && args+=(-H "Authorization: Bearer $(cat "$3")")
	curl "${args[@]}" "$PW_URL$2"
}
leaks() {	# the reply body holds a token
	grep -qF -e "$(cat "$wrong")" -e "$(cat "$PW_ADMIN")" -e "$(cat "$runner")" "$PW_TMP/body"
}

bad=()
swept=0
open_posts=()
while read -r method pattern auth table; do
	path=$(concrete "$pattern")
	# Long polls and streams are not swept with a valid token here.
	case $auth in
	admin | runner)
		other=$runner
		[ "$auth" = runner ] && other=$PW_ADMIN
		c0=$(call "$method" "$path" -)
		leaks && bad+=("$method $path: token in reply")
		c1=$(call "$method" "$path" "$wrong")
		leaks && bad+=("$method $path: token in reply")
		c2=$(call "$method" "$path" "$other")
		leaks && bad+=("$method $path: token in reply")
		[ "$c0" = 401 ] || bad+=("$method $path ($auth, $table): no token -> $c0")
		[ "$c1" = 403 ] || bad+=("$method $path ($auth, $table): wrong token -> $c1")
		[ "$c2" = 403 ] || bad+=("$method $path ($auth, $table): the $([ "$auth" = runner ] && echo admin || echo runner) token -> $c2")
		swept=$((swept + 1))
		;;
	session)
		c0=$(call "$method" "$path" -)
		case $c0 in
		401 | 403) ;;
		*) bad+=("$method $path (session, $table): no session -> $c0") ;;
		esac
		swept=$((swept + 1))
		;;
	none)
		[ "$method" = GET ] || open_posts+=("$method $pattern")
		;;
	*)
		bad+=("$method $pattern: unknown auth '$auth'")
		;;
	esac
done <"$routes"
[ ${#bad[@]} -eq 0 ] && [ "$swept" -ge 15 ] && pass every_guarded_route_refuses ||
    fail every_guarded_route_refuses "$swept swept; $(printf '%s; ' "${bad[@]}")"
# The only state-changing routes open to anyone: the login form (it
# checks the token it is given, and a CSRF cookie).
[ "${open_posts[*]}" = "POST /login" ] && pass only_login_is_open ||
    fail only_login_is_open "open POST routes: ${open_posts[*]}"

# A wrong login and a wrong bearer token are logged without the token.
curl -s -o /dev/null --max-time 10 -d "token=$(cat "$wrong")&csrf=x&next=/" "$PW_URL/login"
stop_pid "$PW_DAEMON_PID"
if grep -qF -e "$(cat "$wrong")" -e "$(cat "$PW_ADMIN")" -e "$(cat "$runner")" "$PW_DIR/daemon.log"; then
	fail no_token_in_log "$(grep -nF -e "$(cat "$wrong")" -e "$(cat "$PW_ADMIN")" -e "$(cat "$runner")" "$PW_DIR/daemon.log" | head -3)"
elif [ "$(wc -l <"$PW_DIR/daemon.log")" -lt 3 ]; then
	fail no_token_in_log "the log is nearly empty: nothing was checked"
else
	pass no_token_in_log
fi

# A token file others can read is refused at start, naming the file.
chmod 644 "$PW_ADMIN"
if out=$("$PW_BIN/perfwatchd" -n -c "$PW_DIR/daemon.yaml" 2>&1); then
	fail world_readable_token_refused "perfwatchd -n accepted a 0644 token: $out"
elif grep -qF "$PW_ADMIN: readable or writable by others (mode 0644); chmod o-rwx" <<<"$out" &&
    ! grep -qF "$(cat "$PW_ADMIN")" <<<"$out"; then
	pass world_readable_token_refused
else
	fail world_readable_token_refused "$out"
fi
chmod 600 "$PW_ADMIN"

# short_refused NAME FILE:LINE:COL: KEY PROGRAM ARGS...: PROGRAM fails
# naming where the short token is, without printing the token.
short_refused() {
	local name=$1 where=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		fail "$name" "accepted a 16-byte token: $out"
	elif grep -qF "$where: " <<<"$out" &&
	    grep -qF ": the token is 16 bytes, at least 32 are needed" <<<"$out" &&
	    ! grep -qF "short-token-0123" <<<"$out"; then
		pass "$name"
	else
		fail "$name" "$out"
	fi
}
Y=$PW_DIR/daemon.yaml
cp "$PW_ADMIN" "$PW_TMP/admin.good"
printf 'short-token-0123\n' >"$PW_ADMIN"
short_refused short_admin_token_refused \
    "$Y:$(grep -n '^admin_token_file:' "$Y" | cut -d: -f1):19: admin_token_file" \
    "$PW_BIN/perfwatchd" -n -c "$Y"
cp "$PW_TMP/admin.good" "$PW_ADMIN"
cp "$runner" "$PW_TMP/runner.good"
printf 'short-token-0123\n' >"$runner"
short_refused short_runner_token_refused \
    "$Y:$(grep -n '^    token_file:' "$Y" | head -1 | cut -d: -f1):17: runners[0].token_file" \
    "$PW_BIN/perfwatchd" -n -c "$Y"
cat >"$PW_TMP/runner.yaml" <<YAML
server: http://127.0.0.1:1
name: r1
token_file: $runner
workdir: $PW_TMP/work
YAML
short_refused runner_refuses_short_token \
    "$PW_TMP/runner.yaml:3:13: token_file" \
    "$PW_BIN/perfwatch-runner" -c "$PW_TMP/runner.yaml" --once
# 32 bytes are enough.
printf '%s\n' 0123456789abcdef0123456789abcdef >"$runner"
check token_of_32_bytes_accepted "$PW_BIN/perfwatchd" -n -c "$Y"
cp "$PW_TMP/runner.good" "$runner"
finish
