# Git helpers for the watcher's end-to-end tests, on top of lib.sh:
#
#   . "$(dirname "$0")/lib_git.sh"
#
#   src_init DIR              a repository on branch master with one commit
#                             (README, mm/a.c)
#   g DIR ARGS...             git -C DIR with a fixed identity
#   commit DIR FILE MSG       appends a line to FILE, commits; prints sha
#   tree_yaml NAME URL BRANCHES [PATHS]
#                             appends a tree (poll 1s) to $PW_DIR/daemon.yaml
#   tree_json                 GET /api/v1/trees into $PW_TMP/trees.json
#   tree_field EXPR           python expression over t (the first tree) and
#                             b (its branches by name), printed
#   wait_tip BRANCH SHA [SECS]  until the daemon records SHA as the tip
#   njobs STATE [NAME]        number of jobs in STATE (of job NAME) in the db
#   loop_prog_init DIR        a repository whose Makefile builds prog, a
#                             loop of LOOPS (loops.h: 40,000,000) that
#                             prints time_ms= (its CPU time); not committed

# A version manager's python3 shim can take over a second a call on a
# loaded machine; these tests call python3 often.
if [ -x /usr/bin/python3 ]; then
	python3() { /usr/bin/python3 "$@"; }
fi

export GIT_AUTHOR_NAME="Ann Author" GIT_AUTHOR_EMAIL=ann@example.org
export GIT_COMMITTER_NAME="Cy Committer" GIT_COMMITTER_EMAIL=cy@example.org
export GIT_CONFIG_NOSYSTEM=1

g() {
	local d=$1
	shift
	git -C "$d" -c init.defaultBranch=master "$@"
}

src_init() {
	mkdir -p "$1/mm"
	git -c init.defaultBranch=master init -q "$1"
	echo readme >"$1/README"
	echo 'int a;' >"$1/mm/a.c"
	g "$1" add -A
	g "$1" commit -qm "initial"
}

commit() {
	local d=$1 f=$2 msg=$3
	mkdir -p "$(dirname "$d/$f")"
	echo "$msg" >>"$d/$f"
	g "$d" add -A
	g "$d" commit -qm "$msg"
	g "$d" rev-parse HEAD
}

tree_yaml() {
	local paths=${4:-}
	if ! grep -q '^trees:' "$PW_DIR/daemon.yaml"; then
		echo "trees:" >>"$PW_DIR/daemon.yaml"
	fi
	cat >>"$PW_DIR/daemon.yaml" <<YAML
  - name: $1
    url: $2
    branches: [$3]
    poll: 1s
YAML
	[ -n "$paths" ] && echo "    paths: [$paths]" >>"$PW_DIR/daemon.yaml"
	return 0
}

tree_json() {
	curl -s --max-time 10 "$PW_URL/api/v1/trees" >"$PW_TMP/trees.json"
}

tree_field() {
	tree_json
	python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["trees"][0]
b = {x["branch"]: x for x in t["branches"]}
print(eval(sys.argv[2]))' "$PW_TMP/trees.json" "$1" 2>/dev/null
}

# series_upload TREE SRC BASE NAME FILE TEXT: a one-patch series on
# BASE writing TEXT to FILE, made in a clone of SRC of its own (the
# upstream never holds it), uploaded for TREE through $PW_URL (needs
# lib_runner.sh's pw_admin) and waited for until applied; its tip in
# $TIP.  1 (after a fail) when it was not applied.
series_applied() {
	[ "$(sql "SELECT state FROM series ORDER BY id DESC LIMIT 1")" = applied ]
}
series_upload() {
	local w=$PW_TMP/$4
	TIP=
	git clone -q "$2" "$w"
	printf '%s\n' "$6" >"$w/$5"
	g "$w" add -A
	g "$w" commit -qm "app: $4"
	g "$w" format-patch -q --base="$3" -o "$PW_TMP/$4.out" "$3..HEAD"
	if ! pw_admin series upload --tree "$1" "$PW_TMP/$4.out"/*.patch >"$PW_TMP/$4.up" 2>&1; then
		fail "$4_upload" "$(cat "$PW_TMP/$4.up")"
		return 1
	fi
	if ! wait_until 30 series_applied; then
		fail "$4_applied" "$(sql "SELECT state, error FROM series")"
		return 1
	fi
	TIP=$(sql "SELECT c.sha FROM series se JOIN commits c ON c.id = se.commit_id
	    ORDER BY se.id DESC LIMIT 1")
}

pw_tip_is() {
	[ "$(tree_field "b['$1']['tip']")" = "$2" ]
}

wait_tip() {
	wait_until "${3:-20}" pw_tip_is "$1" "$2"
}

njobs() {
	if [ $# -gt 1 ]; then
		sql "SELECT count(*) FROM jobs WHERE state = '$1' AND name = '$2'"
	else
		sql "SELECT count(*) FROM jobs WHERE state = '$1'"
	fi
}

loop_prog_init() {
	mkdir -p "$1"
	git -c init.defaultBranch=master init -q "$1"
	printf 'prog: prog.c loops.h\n\tcc -O1 -o prog prog.c\n' >"$1/Makefile"
	cat >"$1/prog.c" <<'C'
#include <stdio.h>
#include <time.h>
#include "loops.h"

int
main(void)
{
	struct timespec a, b;
	volatile unsigned long x = 0;
	unsigned long i;

	/* CPU time: a busy shared machine preempts, it does not slow
	 * the loop itself. */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (i = 0; i < LOOPS; i++)
		x += i;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("time_ms=%.3f\n", (b.tv_sec - a.tv_sec) * 1e3 +
	    (b.tv_nsec - a.tv_nsec) / 1e6);
	return 0;
}
C
	echo '#define LOOPS 40000000UL' >"$1/loops.h"
}
