#!/usr/bin/env bash
# The layering check (docs/ARCHITECTURE.md): every #include of
# a project header in a component folder names the folder itself or one
# of the folders its EDGES_ line in the Makefile allows, and every
# #include <...> of an external library's header is in the one module
# that owns that library (the owners table below).  Prints
# file:line: what is wrong, one line each, and exits 1 when anything is.
#   tests/lint/layers.sh [ROOT]   (default: the tree this script is in)
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
declare -A edges
while read -r name deps; do
	edges[$name]=$deps
done < <(sed -n 's/^EDGES_\([a-z/]*\)[[:space:]]*=[[:space:]]*\(.*\)$/\1 \2/p' Makefile)
if [ ${#edges[@]} -eq 0 ]; then
	echo "Makefile: no EDGES_ lines" >&2
	exit 2
fi
# The layer of a path: the longest layer name that is a folder prefix.
layer_of() {
	local p=$1 best= l
	for l in "${!edges[@]}"; do
		case $p in
		"$l"/*) [ ${#l} -gt ${#best} ] && best=$l ;;
		esac
	done
	echo "$best"
}
bad=0
while IFS= read -r f; do
	from=$(layer_of "$f")
	[ -n "$from" ] || continue
	while IFS=: read -r line inc; do
		to=$(layer_of "$inc")
		[ -n "$to" ] && [ "$to" != "$from" ] || continue
		case " ${edges[$from]} " in
		*" $to "*) ;;
		*)
			echo "$f:$line: $from may not include $inc ($from may use: ${edges[$from]:-nothing})"
			bad=1
			;;
		esac
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
	    sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1:\2/')
done < <(find "${!edges[@]}" -name '*.[ch]' 2>/dev/null | sort -u)

# Each external library is included by its one module (DESIGN.md), and
# a module's internal header by that module's files only: the header,
# then the files (shell patterns) that may include it.  The HTTP server
# lives in web/, so daemon/ including <microhttpd.h> again fails.
owners='microhttpd.h web/httpd.c
sqlite3.h store/db_sqlite.c
libpq-fe.h store/db_pg.c
store/db_backend.h store/db*
git2.h git/*
git2/* git/*
yaml.h config/yaml.c
curl/* common/http.c
openssl/* common/crypto.c
git/git_int.h git/*
store/store_int.h store/*
config/config_int.h config/*'
while IFS= read -r f; do
	while IFS=: read -r line inc; do
		while read -r hdr allowed; do
			# shellcheck disable=SC2254
			case $inc in $hdr) ;; *) continue ;; esac
			# shellcheck disable=SC2254
			case $f in $allowed) ;; *)
				echo "$f:$line: only $allowed may include $inc"
				bad=1
				;;
			esac
		done <<<"$owners"
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$f" |
	    sed 's/^\([0-9]*\):[^<"]*[<"]\([^>"]*\)[>"].*/\1:\2/')
done < <(find "${!edges[@]}" -name '*.[ch]' 2>/dev/null | sort -u)
exit $bad
