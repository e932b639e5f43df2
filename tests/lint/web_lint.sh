#!/usr/bin/env bash
# Lint for the HTML rules of STYLE.md section 6:
#  1. no %s in buf_printf/buf_vprintf calls under web/ (runtime strings go
#     through html_text, never a format);
#  2. under web/, only web/html.[ch] append to a page directly: the files
#     that write pages (those including web/html.h) use HTML_LIT and the
#     html_* helpers (no buf_add/buf_puts/buf_putc/buf_printf/buf_vprintf);
#  3. no HTML tag text in string literals outside web/.
#   tests/lint/web_lint.sh [ROOT]     (default: the source tree)
# Prints one line per problem as file:line: why; exits 1 if any.
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
status=0

web=$(ls web/*.c web/*.h 2>/dev/null)
if [ -n "$web" ]; then
	# 1 and 2.  Statements are joined so a call split over lines is seen
	# whole; the line number is that of the call's start.
	perl -0777 -ne '
		my $f = $ARGV; my $src = $_;
		(my $code = $src) =~ s{/\*.*?\*/}{ my $c = $&; $c =~ s/[^\n]/ /g; $c }gse;
		while ($code =~ /\b(buf_v?printf)\s*\(((?:[^;"]|"(?:[^"\\]|\\.)*")*)\)\s*;/gs) {
			my ($fn, $args, $at) = ($1, $2, $-[0]);
			my $line = 1 + (substr($code, 0, $at) =~ tr/\n//);
			if ($args =~ /%[-+ #0-9.*]*s/) {
				print "$f:$line: %s in $fn: escape runtime text with html_text()\n";
				$bad = 1;
			}
		}
		if ($f !~ m{(^|/)web/html\.[ch]$} && $src =~ m{#include "web/html\.h"}) {
			while ($code =~ /\b(buf_add|buf_puts|buf_putc|buf_v?printf)\s*\(/g) {
				my $line = 1 + (substr($code, 0, $-[0]) =~ tr/\n//);
				print "$f:$line: $1 outside web/html.c: use HTML_LIT or an html_* helper\n";
				$bad = 1;
			}
		}
		END { exit($bad ? 1 : 0) }
	' $web || status=1
fi

# 3.  String literals holding an HTML tag, outside web/.
others=$(ls common/*.[ch] config/*.[ch] store/*.[ch] daemon/*.[ch] runners/*.[ch] \
    runners/bench/*.[ch] cli/*.[ch] perfwatchd/*.[ch] 2>/dev/null)
if [ -n "$others" ]; then
	perl -ne '
		my $tags = qr{html|head|body|div|span|table|thead|tbody|tr|td|th|a|p|h[1-6]|ul|ol|li|form|input|select|option|button|svg|script|style|br|pre|code|img|iframe|meta|link|title|textarea|label|nav|main|header|footer|section|circle|rect|line|path|polyline|text};
		s{//.*$}{} unless /"/;
		while (/"((?:[^"\\]|\\.)*)"/g) {
			my $lit = $1;
			if ($lit =~ m{<\s*/?\s*(?:$tags)(?:[\s>/]|\\[nt"]|$)}i && $lit !~ m{^<[a-z0-9_./-]+\.h>$}) {
				print "$ARGV:$.: HTML in a string literal outside web/: \"$lit\"\n";
				$bad = 1;
			}
		}
		close ARGV if eof;
		END { exit($bad ? 1 : 0) }
	' $others || status=1
fi
exit $status
