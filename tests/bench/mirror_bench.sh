#!/usr/bin/env bash
# make bench-mirror: the daemon's first fetch of a kernel tree, the
# figure docs/DEPLOY.md gives an operator for a new mirror.
#
# The tree is Debian's linux-source tarball imported as a git
# repository the way tests/kernel/mkrepo.sh does (one commit of the
# whole source on branch master), cached under CACHE between runs (the
# import is the slow part).  It is served by git http-backend over smart
# HTTP on 127.0.0.1 (tests/unit/git_httpd.py), a real perfwatchd watches
# it as a tree, and the time from the daemon's start to the branch tip
# recorded is the first fetch.  Printed: a Markdown row for
# docs/BENCHMARKS.md with the files and the bytes of the tree, the
# served repository's packed size, the fetch's seconds and the
# mirror's bytes on disk after it, and the machine's load.
#
# A single-commit import has none of the real history (git.kernel.org's
# mainline is ~5 GB packed with ~1.3 M commits): the figure is the
# lower bound of a fresh mirror of one release, and scales with pack
# bytes.
#
# Knobs (environment):
#   LINUX_SOURCE=/usr/src/linux-source-6.1.tar.xz
#   PATHS=        directories of the source to import (a subset, e.g.
#                 "mm include kernel"); empty: the whole tree
#   CACHE=/var/tmp/perfwatch-bench-mirror
#   TIMEOUT=1800  seconds the fetch may take
#   PW_KEEP=1     keep the scratch directory (lib.sh)
#   LORE=BUNDLE   instead: a public-inbox epoch (a git bundle such as
#                 tests/fixtures/inbox/cgroups-2019.bundle), served the
#                 same way and watched as an inbox: the seconds to its tip
#                 read (the first sight takes the tip, not the history)
# Exit 0 when it ran, 1 when the fetch did not end within TIMEOUT, 2 when
# the harness broke.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# The release build of make all (OUT relative to the source tree).
export PERFWATCH_BIN=${PERFWATCH_BIN:-$(cd "$top" && realpath -m "${OUT:-build}/bin")}
LINUX_SOURCE=${LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
PATHS=${PATHS:-}
CACHE=${CACHE:-/var/tmp/perfwatch-bench-mirror}
TIMEOUT=${TIMEOUT:-1800}

. "$top/tests/e2e/lib.sh"
. "$top/tests/e2e/lib_runner.sh"
. "$top/tests/e2e/lib_git.sh"

broke() {
	echo "bench-mirror: harness broke: $*" >&2
	exit 2
}
LORE=${LORE:-}
mb() { echo "scale=1; $1 / 1048576" | bc; }

# serve DIR: git http-backend over DIR on 127.0.0.1; its port in $port.
serve() {
	spawn "$PW_TMP/httpd.log" python3 "$top/tests/unit/git_httpd.py" "$1"
	wait_for 10 test -s "$PW_TMP/httpd.log" || broke "git_httpd.py did not start"
	port=$(head -1 "$PW_TMP/httpd.log")
	case $port in '' | *[!0-9]*) broke "git_httpd.py: $(cat "$PW_TMP/httpd.log")" ;; esac
}

if [ -n "$LORE" ]; then
	[ -f "$LORE" ] || broke "LORE: no bundle $LORE"
	name=$(basename "$LORE" .bundle)
	mkdir -p "$PW_TMP/lore"
	git clone -q --bare "$LORE" "$PW_TMP/lore/$name.git" || broke "clone $LORE"
	git -C "$PW_TMP/lore/$name.git" repack -adq || broke "repack $LORE"
	lrepo=$PW_TMP/lore/$name.git
	head=$(git -C "$lrepo" symbolic-ref --short HEAD 2>/dev/null || echo master)
	tip=$(git -C "$lrepo" rev-parse "$head")
	msgs=$(git -C "$lrepo" rev-list --count "$head")
	pack_bytes=$(git -C "$lrepo" count-objects -v | awk '$1 == "size-pack:" { print $2 * 1024 }')
	serve "$PW_TMP/lore"
	SRC=$PW_TMP/app
	src_init "$SRC"
	daemon_config "$PW_TMP/d" r1
	tree_yaml app "file://$SRC" master
	printf 'inboxes:\n  - name: lore\n    url: http://127.0.0.1:%s/%s.git\n    branch: %s\n    poll: 1s\n    tree: app\n' \
	    "$port" "$name" "$head" >>"$PW_DIR/daemon.yaml"
	load0=$(cut -d' ' -f1 /proc/loadavg)
	t0=$(date +%s.%N)
	start_daemon "$PW_TMP/d" || broke "perfwatchd did not start: $(tail -5 "$PW_DIR/daemon.log")"
	read_tip() { [ "$(sql "SELECT last_commit FROM inbox_state WHERE name = 'lore'")" = "$tip" ]; }
	if ! wait_until "$TIMEOUT" read_tip; then
		echo "bench-mirror: the first fetch of inbox $name did not end in $TIMEOUT s" >&2
		tail -5 "$PW_DIR/daemon.log" >&2
		exit 1
	fi
	secs=$(echo "$(date +%s.%N) - $t0" | bc)
	load1=$(cut -d' ' -f1 /proc/loadavg)
	mirror_bytes=$(du -sb "$PW_DIR/git" | cut -f1)
	echo "| inbox | messages | served pack MiB | first fetch s | daemon's git MiB | load before/after |"
	echo "| --- | --- | --- | --- | --- | --- |"
	printf '| %s | %s | %s | %.1f | %s | %s / %s |\n' "$name" "$msgs" "$(mb "$pack_bytes")" \
	    "$secs" "$(mb "$mirror_bytes")" "$load0" "$load1"
	echo "# $(date -u +%Y-%m-%d), $(nproc) CPUs, perfwatchd from $PERFWATCH_BIN, mirrors $PW_DIR/git"
	exit 0
fi

[ -f "$LINUX_SOURCE" ] || broke "no $LINUX_SOURCE (apt-get install linux-source-6.1, or set LINUX_SOURCE)"
case $TIMEOUT in '' | *[!0-9]*) broke "TIMEOUT is seconds" ;; esac
for p in $PATHS; do
	case $p in /* | *..* | *[!A-Za-z0-9._/-]*) broke "PATHS: '$p' is not a directory of the source" ;; esac
done

# ---- the repository, imported once ----
base=$(basename "$LINUX_SOURCE" .tar.xz)
if [ -z "$PATHS" ]; then
	name=$base
else
	name=$base-$(echo "$PATHS" | tr ' /' '+_')
fi
repo=$CACHE/$name.git
t0=$(date +%s)
if [ ! -f "$repo/ready" ]; then
	rm -rf "$repo" "$CACHE/work"
	mkdir -p "$CACHE/work"
	topdir=$(tar -tJf "$LINUX_SOURCE" | head -1 | cut -d/ -f1)
	members=
	for p in $PATHS; do
		members="$members $topdir/$p"
	done
	# shellcheck disable=SC2086 # members: one word per directory
	tar -C "$CACHE/work" -xJf "$LINUX_SOURCE" $members || broke "tar $LINUX_SOURCE$members"
	w=$CACHE/work/$topdir
	git -C "$w" init -q -b master &&
	    git -C "$w" -c user.name=perfwatch -c user.email=perfwatch@localhost add -A -f &&
	    git -C "$w" -c user.name=perfwatch -c user.email=perfwatch@localhost \
	        commit -q -m "$base${PATHS:+ ($PATHS)} from Debian's $(basename "$LINUX_SOURCE")" &&
	    git clone -q --bare "$w" "$repo" &&
	    git -C "$repo" repack -adq || broke "import into $repo"
	rm -rf "$CACHE/work"
	touch "$repo/ready"
	echo "# imported $name in $(($(date +%s) - t0)) s (cached in $repo)"
fi
tip=$(git -C "$repo" rev-parse master)
files=$(git -C "$repo" ls-tree -r master | wc -l)
tree_bytes=$(git -C "$repo" ls-tree -r -l master | awk '{ s += $4 } END { print s }')
pack_bytes=$(git -C "$repo" count-objects -v | awk '$1 == "size-pack:" { print $2 * 1024 }')

# ---- served over smart HTTP ----
serve "$CACHE"
url=http://127.0.0.1:$port/$name.git

# ---- the daemon's first fetch ----
daemon_config "$PW_TMP/d" r1
tree_yaml linux "$url" master
load0=$(cut -d' ' -f1 /proc/loadavg)
t0=$(date +%s.%N)
start_daemon "$PW_TMP/d" || broke "perfwatchd did not start: $(tail -5 "$PW_DIR/daemon.log")"
fetched() { [ "$(sql "SELECT tip FROM tree_branches WHERE branch = 'master'")" = "$tip" ]; }
if ! wait_until "$TIMEOUT" fetched; then
	echo "bench-mirror: the first fetch of $url did not end in $TIMEOUT s" >&2
	tail -5 "$PW_DIR/daemon.log" >&2
	exit 1
fi
secs=$(echo "$(date +%s.%N) - $t0" | bc)
load1=$(cut -d' ' -f1 /proc/loadavg)
mirror_bytes=$(du -sb "$PW_DIR/git" | cut -f1)

echo "| tree | files | source MiB | served pack MiB | first fetch s | mirror MiB | load before/after |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
printf '| %s | %s | %s | %s | %.1f | %s | %s / %s |\n' "$name" "$files" "$(mb "$tree_bytes")" \
    "$(mb "$pack_bytes")" "$secs" "$(mb "$mirror_bytes")" "$load0" "$load1"
echo "# $(date -u +%Y-%m-%d), $(nproc) CPUs, perfwatchd from $PERFWATCH_BIN, mirror $PW_DIR/git"
exit 0
