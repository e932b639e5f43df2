#!/bin/sh
# dist/mkusers.sh ROOT CONF: makes the system accounts CONF lists
# (sysusers.d format, `u` lines) in the files under ROOT ("/": this
# host), once: an account that exists is left as it is.  An empty ROOT
# (a DESTDIR install for a package) or a caller other than root makes
# nothing and says so.  systemd-sysusers when the host has it, else
# useradd --system.
set -eu
root=$1
conf=$2
if [ -z "$root" ]; then
	echo "mkusers: accounts not made (DESTDIR install: the package's systemd-sysusers makes them from $conf)"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "mkusers: accounts not made: not root (run make install-users as root, or systemd-sysusers $conf)"
	exit 0
fi
if command -v systemd-sysusers >/dev/null 2>&1; then
	# Its file arguments are read below --root: the lines go on stdin.
	exec systemd-sysusers --root="$root" - <"$conf"
fi
# u NAME - "GECOS" HOME SHELL
sed -n 's/^u \([^ ]*\) *- *"\([^"]*\)" *\([^ ]*\) *\([^ ]*\)$/\1 \3 \4 \2/p' "$conf" |
	while read -r name home shell gecos; do
		if grep -q "^$name:" "$root/etc/passwd"; then
			continue
		fi
		echo "mkusers: creating system user $name"
		useradd --prefix "$root" --system --user-group --no-create-home \
		    --home-dir "$home" --shell "$shell" --comment "$gecos" "$name"
	done
