#!/usr/bin/env bash
# check: parallel
# The layering (docs/ARCHITECTURE.md): tests/lint/layers.sh passes on the tree, and in
# a scratch tree with the Makefile's edges it rejects an include against
# them, naming file:line, and accepts the allowed ones; it rejects
# <microhttpd.h> anywhere but web/httpd.c (daemon/ included it once)
# and the git module's internal header outside git/; and the programs
# link per-folder archives, so perfwatch-runner cannot have pulled in the
# store (no sqlite3 symbol in it), and daemon/ calls nothing of web/ (the
# HTTP surface uses the daemon, never the reverse: perfwatchd/main.c is
# the one place that uses both).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
lint=$top/tests/lint/layers.sh
pass() { echo "PASS $1"; }
failt() { echo "FAIL $1: $2"; }

if out=$("$lint" "$top" 2>&1); then
	pass layers_tree_clean
else
	failt layers_tree_clean "$out"
fi

tmp=$(mktemp -d /tmp/t0702.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/common" "$tmp/daemon" "$tmp/runners/bench" "$tmp/runners"
grep '^EDGES_' "$top/Makefile" >"$tmp/Makefile"
printf '#include <stdio.h>\n#include "common/buf.h"\n#include "runners/bench/bench.h"\n' >"$tmp/runners/ok.c"
printf '#include "common/buf.h"\n' >"$tmp/runners/bench/ok.c"
printf '#include "store/store.h"\n' >"$tmp/daemon/ok.c"
if out=$("$lint" "$tmp" 2>&1); then
	pass layers_allowed_edges
else
	failt layers_allowed_edges "$out"
fi
printf '/* x */\n\n#include "common/buf.h"\n #include "store/store.h"\n' >"$tmp/runners/bad.c"
printf '#include "runners/agent.h"\n' >"$tmp/runners/bench/bad.c"
printf '#include "common/buf.h"\n#include "config/config.h"\n' >"$tmp/common/bad.h"
printf '#include "store/store.h"\n#include "web/api.h"\n#include <microhttpd.h>\n' >"$tmp/daemon/bad.c"
mkdir -p "$tmp/web"
printf '#include <microhttpd.h>\n' >"$tmp/web/httpd.c"
mkdir -p "$tmp/git"
printf '#include "git/git_int.h"\n' >"$tmp/git/walk.c"
printf '#include "git/git.h"\n#include "git/git_int.h"\n' >"$tmp/daemon/watch.c"
printf '#include <stdio.h>\n#include <microhttpd.h>\n' >"$tmp/web/api.c"
mkdir -p "$tmp/config"
printf '#include <yaml.h>\n#include "config/config_int.h"\n' >"$tmp/config/yaml.c"
printf '#include "config/config_int.h"\n#include <yaml.h>\n' >"$tmp/config/schema.c"
printf '#include "config/config.h"\n#include "config/config_int.h"\n' >"$tmp/daemon/conf.c"
out=$("$lint" "$tmp" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q '^runners/bad.c:4: runners may not include store/store.h' <<<"$out" &&
    grep -q '^runners/bench/bad.c:1: runners/bench may not include runners/agent.h' <<<"$out" &&
    grep -q '^common/bad.h:2: common may not include config/config.h' <<<"$out" &&
    grep -q '^daemon/bad.c:2: daemon may not include web/api.h' <<<"$out" &&
    grep -q '^daemon/bad.c:3: only web/httpd.c may include microhttpd.h' <<<"$out" &&
    grep -q '^web/api.c:2: only web/httpd.c may include microhttpd.h' <<<"$out" &&
    grep -q '^daemon/watch.c:2: only git/\* may include git/git_int.h' <<<"$out" &&
    grep -q '^config/schema.c:2: only config/yaml.c may include yaml.h' <<<"$out" &&
    grep -q '^daemon/conf.c:2: only config/\* may include config/config_int.h' <<<"$out" &&
    [ "$(wc -l <<<"$out")" = 9 ]; then
	pass layers_forbidden_named
else
	failt layers_forbidden_named "rc $rc: $out"
fi

bin=${PERFWATCH_BIN:-$top/build/san/bin}
if [ ! -x "$bin/perfwatch-runner" ] || ! command -v nm >/dev/null; then
	echo "SKIP runner_links_no_store: no $bin/perfwatch-runner or no nm"
elif nm "$bin/perfwatch-runner" | grep -q ' [TU] sqlite3_open\| T store_open'; then
	failt runner_links_no_store "perfwatch-runner holds the store"
elif nm "$bin/perfwatchd" | grep -q ' T store_open'; then
	pass runner_links_no_store
else
	failt runner_links_no_store "no store_open in perfwatchd either: nm cannot tell"
fi

# The link: no symbol an object of the daemon's archive needs is defined
# by the web's (a daemon -> web call would link only with web first).
lib=$(dirname "$bin")/lib
if [ ! -f "$lib/daemon.a" ] || [ ! -f "$lib/web.a" ] || ! command -v nm >/dev/null; then
	echo "SKIP daemon_needs_nothing_of_web: no $lib/daemon.a and web.a, or no nm"
else
	need=$(nm -u "$lib/daemon.a" | awk '$1 == "U" { print $2 }' | sort -u)
	web=$(nm --defined-only "$lib/web.a" | awk 'NF == 3 && $2 ~ /^[TDBR]$/ { print $3 }' | sort -u)
	both=$(comm -12 <(echo "$need") <(echo "$web"))
	if [ -z "$web" ] || [ -z "$need" ]; then
		failt daemon_needs_nothing_of_web "nm read no symbols from $lib"
	elif [ -z "$both" ]; then
		pass daemon_needs_nothing_of_web
	else
		failt daemon_needs_nothing_of_web "daemon/ uses web/'s $(echo $both)"
	fi
fi
