#!/bin/sh
# Installs the Debian packages perfwatch's build, tests and demo need.
# Idempotent and quiet when everything is present.
set -eu
PKGS="build-essential pkg-config git ca-certificates curl
libgit2-dev libmicrohttpd-dev libcurl4-openssl-dev libyaml-dev
libsqlite3-dev libpq-dev postgresql libjansson-dev libssl-dev sqlite3 fio clang-format
python3 procps iproute2 psmisc"
# Extra packages later issues add are listed in scripts/deps.extra.
[ -f "$(dirname "$0")/deps.extra" ] && PKGS="$PKGS $(grep -v '^#' "$(dirname "$0")/deps.extra")"

missing=""
for p in $PKGS; do
	# PACKAGE@COMMAND: only when COMMAND is not on PATH already (npm
	# comes with NodeSource's nodejs, which conflicts with Debian's npm).
	case $p in
	*@*)
		command -v "${p#*@}" >/dev/null 2>&1 && continue
		p=${p%@*}
		;;
	esac
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "make deps: missing Debian packages:$missing" >&2
	echo "make deps: run as root (or: sudo apt-get install$missing)" >&2
	exit 1
fi
echo "make deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null; then
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
