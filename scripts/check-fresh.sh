#!/usr/bin/env bash
# make check-fresh: the README's two commands on a fresh Debian 12.
#
# debootstraps a minimal bookworm (minbase plus make, which a user needs to
# type `make`) into $FRESH_DIR, copies the tracked files of this tree in,
# and inside a chroot runs `DEMO_ONCE=1 make demo` and then `make check`,
# from nothing: no -dev package, no build directory. Mounts are made in a
# private mount namespace, so nothing is left mounted when it ends.
#
#   FRESH_DIR=DIR     the chroot (default build/fresh; wiped at each start)
#   FRESH_MIRROR=URL  Debian mirror (default: the host's first deb URI)
#   FRESH_KEEP=1      keep the chroot afterwards
# Needs root. Prints the time each step took; exits non-zero on a failure.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=${OUT:-build}
DIR=${FRESH_DIR:-$top/$out/fresh}
CACHE=$top/$out/fresh-cache	# downloaded .debs only, reused across runs
MIRROR=${FRESH_MIRROR:-$(awk '/^URIs:/ {print $2; exit}' \
    /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

die() { echo "check-fresh: $*" >&2; exit 1; }
step() { printf '==> %s\n' "$*"; }
elapsed() { echo $(($(date +%s) - $1)); }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap and chroot)"
if ! command -v debootstrap >/dev/null; then
	step "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap \
	    >/dev/null || die "cannot install debootstrap"
fi
case $DIR in /|"") die "refusing FRESH_DIR=$DIR" ;; esac

t0=$(date +%s)
rm -rf "$DIR"
mkdir -p "$DIR" "$CACHE"
step "debootstrap bookworm (minbase + make) from $MIRROR into $DIR"
debootstrap --variant=minbase --include=make --cache-dir="$CACHE" \
    bookworm "$DIR" "$MIRROR" >"$DIR.debootstrap.log" 2>&1 ||
	{ tail -n 20 "$DIR.debootstrap.log"; die "debootstrap failed"; }
t_boot=$(elapsed "$t0")
echo "    debootstrap: ${t_boot}s"

# The same package sources as the host (security and updates included),
# so `make deps` sees the versions CI sees.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
	cp /etc/apt/sources.list.d/debian.sources "$DIR/etc/apt/sources.list.d/"
	: >"$DIR/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$DIR/etc/resolv.conf" 2>/dev/null || true
# The network's own trust: certificate authorities this machine added
# locally (a TLS-inspecting egress proxy, say) are what any machine on its
# network has; the ca-certificates package that make deps installs picks
# them up.  Nothing of the project is added.
NODE_CA=
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
	mkdir -p "$DIR/usr/local/share/ca-certificates"
	cp /usr/local/share/ca-certificates/*.crt "$DIR/usr/local/share/ca-certificates/"
	NODE_CA=/etc/ssl/certs/ca-certificates.crt
fi
chroot "$DIR" apt-get update -qq >/dev/null 2>&1 || die "apt-get update in the chroot failed"

step "copying the tracked files of $top"
mkdir -p "$DIR/src/perfwatch"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$DIR/src/perfwatch"

# The commands a new user types, and nothing else.
{
echo 'set -u'
echo 'cd /src/perfwatch'
echo 'export HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
[ -n "$NODE_CA" ] && echo "export NODE_EXTRA_CA_CERTS=$NODE_CA"
} >"$DIR/src/fresh.sh"
cat >>"$DIR/src/fresh.sh" <<'EOF'
s=$(date +%s)
DEMO_ONCE=1 DEMO_PORT=0 make demo >/src/demo.log 2>&1
rc=$?
echo "demo-exit=$rc demo-seconds=$(($(date +%s) - s))"
[ $rc -eq 0 ] || { tail -n 40 /src/demo.log; exit 10; }
s=$(date +%s)
make check >/src/check.log 2>&1
rc=$?
echo "check-exit=$rc check-seconds=$(($(date +%s) - s))"
tail -n 1 /src/check.log
[ $rc -eq 0 ] || { grep -E '^(FAIL|failed:)' /src/check.log | head -n 40; exit 11; }
EOF

step "in the chroot: DEMO_ONCE=1 make demo, then make check"
set +e
unshare --mount --propagation private bash -c '
	set -e
	d=$1
	mount -t proc proc "$d/proc"
	mount --rbind /sys "$d/sys"
	mount --rbind /dev "$d/dev"
	mount -t tmpfs tmpfs "$d/run"
	# /tmp stays on disk, as on a default Debian 12 install (a tmpfs
	# /tmp would charge test files to the memcgs the tests limit).
	chroot "$d" /bin/bash /src/fresh.sh
' fresh "$DIR"
rc=$?
set -e
echo "    total: $(elapsed "$t0")s (debootstrap ${t_boot}s)"
cp "$DIR/src/demo.log" "$DIR/src/check.log" "$top/$out/" 2>/dev/null || true
# The whole logs of the tests that failed (tests/run keeps them).
if [ -d "$DIR/src/perfwatch/build/test-logs" ]; then
	rm -rf "$top/$out/fresh-test-logs"
	cp -r "$DIR/src/perfwatch/build/test-logs" "$top/$out/fresh-test-logs" 2>/dev/null || true
fi
[ "${FRESH_KEEP:-0}" = 1 ] || rm -rf "$DIR"
case $rc in
0) echo "check-fresh: OK (logs in $out/demo.log and $out/check.log)" ;;
10) die "make demo failed on the fresh system ($out/demo.log)" ;;
11) die "make check failed on the fresh system ($out/check.log; failed tests' logs in $out/fresh-test-logs)" ;;
*) die "the chroot run failed (exit $rc)" ;;
esac
