#!/usr/bin/env bash
# check: parallel
# The HTML lint (tests/lint/web_lint.sh) passes on the tree, and rejects
# each kind of violation it is for, so it cannot pass by accident.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
lint=$top/tests/lint/web_lint.sh
fail=0
pass() { echo "PASS $1"; }
failt() { echo "FAIL $1: $2"; fail=1; }

if out=$("$lint" "$top" 2>&1); then
	pass web_lint_tree_clean
else
	failt web_lint_tree_clean "$out"
fi

tmp=$(mktemp -d /tmp/t0700.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# case NAME FILE CONTENT EXPECT: lint a scratch tree holding one file.
case_() {
	local name=$1 file=$2 content=$3 expect=$4 d out
	d=$tmp/$name
	mkdir -p "$d/$(dirname "$file")"
	printf '%s\n' "$content" >"$d/$file"
	if out=$("$lint" "$d" 2>&1); then
		failt "$name" "lint accepted $file"
	elif ! grep -q "$expect" <<<"$out"; then
		failt "$name" "unexpected message: $out"
	else
		pass "$name"
	fi
}

case_ web_lint_rejects_percent_s web/view_x.c \
    'void f(struct buf *b, const char *s) { buf_printf(b,
	"<td>%s</td>", s); }' 'web/view_x.c:1: %s in buf_printf'
case_ web_lint_rejects_raw_buf_puts web/view_y.c \
    '#include "web/html.h"
void f(struct buf *b, const char *s) { buf_puts(b, s); }' \
    'buf_puts outside web/html.c'
case_ web_lint_rejects_html_in_daemon daemon/api.c \
    'static const char *page = "<html><body>hi</body></html>";' \
    'daemon/api.c:1: HTML in a string literal outside web/'
case_ web_lint_rejects_html_in_cli cli/x.c \
    'puts("<td class=\"n\">");' 'HTML in a string literal'

# What must stay allowed: includes, usage text with <ARG>, %d formats.
d=$tmp/ok
mkdir -p "$d/daemon" "$d/web"
printf '%s\n' '#include <stdio.h>' 'const char *u = "usage: perfwatch <command> [<args>]";' \
    'const char *c = "a < b && c > d";' >"$d/daemon/ok.c"
printf '%s\n' 'void f(struct buf *b) { HTML_LIT(b, "<td>"); }' >"$d/web/view_ok.c"
if out=$("$lint" "$d" 2>&1); then
	pass web_lint_allows_plain_text
else
	failt web_lint_allows_plain_text "$out"
fi
exit $fail
