# A PostgreSQL server of the test's own: source it, then
#
#   pg_start DIR      initdb in DIR/pg and start a server that listens
#                     only on a Unix socket in DIR/pg (no TCP), trusted
#                     local connections; exports PW_TEST_PG (a conninfo
#                     for its database "postgres", what the unit tests
#                     and lib.sh make their databases from) and PW_PG_DIR
#   pg_createdb NAME  a new, empty database NAME: its conninfo on stdout
#   pg_stop           stops it (fast) and waits
#   pg_resume         starts it again on the same data after pg_stop
#   pg_vd_job DIR     (end-to-end tests) writes DIR/jobs/vd.yaml: the
#                     job vd, echo ops=1, one run
#   pg_lock_daemon DIR MS
#                     (end-to-end tests, after lib.sh) a daemon in DIR
#                     for runner r1 whose sessions give up on a lock
#                     after MS ms (lock_timeout in its conninfo), with the
#                     job vd (echo ops=1, one run), started; R1 and ADM
#                     the runner's and the admin's tokens.  1 when the
#                     daemon did not start
#
# Never the system's cluster: the binaries of the newest PostgreSQL under
# /usr/lib/postgresql (or pg_ctl on PATH) run on a data directory of the
# test's own.  PostgreSQL refuses to run as root, so as root the server
# runs as the user nobody, in a directory nobody owns.
PW_TEST_PG=${PW_TEST_PG:-}
PW_PG_DIR=${PW_PG_DIR:-}
PW_PG_USER=pwtest

pg_bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	if [ -n "$d" ] && [ -x "$d/pg_ctl" ]; then
		echo "$d"
	elif command -v pg_ctl >/dev/null 2>&1; then
		dirname "$(command -v pg_ctl)"
	else
		return 1
	fi
}

# pg_as CMD...: CMD as the server's user.
pg_as() {
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		"$@"
	fi
}

pg_start() {
	local bin
	bin=$(pg_bindir) || { echo "pg_start: no PostgreSQL server binaries (initdb, pg_ctl)" >&2; return 1; }
	PW_PG_DIR=$1/pg
	mkdir -p "$PW_PG_DIR"
	chmod 0755 "$1"
	if [ "$(id -u)" -eq 0 ]; then
		chown nobody:nogroup "$PW_PG_DIR"
	fi
	chmod 0700 "$PW_PG_DIR"
	pg_as "$bin/initdb" -D "$PW_PG_DIR/data" -U "$PW_PG_USER" \
	    --auth=trust -E UTF8 --no-locale --no-sync >"$PW_PG_DIR/initdb.log" 2>&1 ||
	    { echo "pg_start: initdb failed:" >&2; tail -n 5 "$PW_PG_DIR/initdb.log" >&2; return 1; }
	pg_resume || return 1
	PW_TEST_PG="host=$PW_PG_DIR user=$PW_PG_USER dbname=postgres"
	export PW_TEST_PG PW_PG_DIR
}

pg_resume() {
	local bin
	bin=$(pg_bindir) || return 1
	pg_as "$bin/pg_ctl" -D "$PW_PG_DIR/data" -l "$PW_PG_DIR/server.log" -w \
	    -o "-c listen_addresses='' -c unix_socket_directories='$PW_PG_DIR' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=64MB" \
	    start >/dev/null 2>&1 ||
	    { echo "pg_start: the server did not start:" >&2; tail -n 5 "$PW_PG_DIR/server.log" >&2; return 1; }
	# The socket directory is the server's; others connect through it.
	chmod 0755 "$PW_PG_DIR"
}

pg_createdb() {
	local bin
	bin=$(pg_bindir) || return 1
	PGOPTIONS='-c client_min_messages=warning' "$bin/psql" -X -q \
	    -v ON_ERROR_STOP=1 "$PW_TEST_PG" \
	    -c "DROP DATABASE IF EXISTS \"$1\"" -c "CREATE DATABASE \"$1\"" \
	    >/dev/null || return 1
	echo "$PW_TEST_PG dbname=$1"
}

pg_stop() {
	local bin
	[ -n "$PW_PG_DIR" ] && [ -d "$PW_PG_DIR/data" ] || return 0
	bin=$(pg_bindir) || return 0
	pg_as "$bin/pg_ctl" -D "$PW_PG_DIR/data" -m fast -w stop >/dev/null 2>&1
}

pg_vd_job() {
	cat >"$1/jobs/vd.yaml" <<'YAML'
name: vd
parser: keyvalue
command: [echo, "ops=1"]
runs: 1
metrics:
  ops: {better: higher}
YAML
}

pg_lock_daemon() {
	daemon_config "$1" r1
	sed -i "s|^database: \"\(.*\)\"$|database: \"\1 options='-c lock_timeout=$2'\"|" "$1/daemon.yaml"
	pg_vd_job "$1"
	start_daemon "$1" || return 1
	R1=$(token_of r1)
	ADM=$(token_of admin)
}
