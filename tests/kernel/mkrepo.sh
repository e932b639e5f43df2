#!/bin/sh
# tests/kernel/mkrepo.sh DIR: a git repository of Debian's linux-source-6.1
# at DIR/linux.git (bare) with two commits on branch "memcg":
#   base       the untouched source,
#   candidate  a memcg-path patch: try_charge_memcg() (every page and
#              socket charge of a non-root memcg) spins ~PW_DELAY_NS
#              more per call (default 20000 ns), a real kernel difference
#              far above the noise (docs/KERNEL.md).
# Prints "base SHA" and "candidate SHA".  Kept between runs (the repository
# is the expensive part: untar 12 s, git add ~1 min); DIR/linux.git holds a
# file "ready" when complete.
set -eu
dir=$1
src=${LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
delay=${PW_DELAY_NS:-20000}
mkdir -p "$dir"
if [ ! -f "$dir/linux.git/ready" ]; then
	rm -rf "$dir/linux.git" "$dir/work"
	mkdir -p "$dir/work"
	tar -C "$dir/work" -xf "$src"
	top=$(ls "$dir/work")
	w="$dir/work/$top"
	git -C "$w" init -q -b memcg
	git -C "$w" -c user.name=perfwatch -c user.email=perfwatch@localhost \
	    add -A -f
	git -C "$w" -c user.name=perfwatch -c user.email=perfwatch@localhost \
	    commit -q -m "linux 6.1 from Debian's linux-source-6.1"
	# The patch: a busy-wait at the top of try_charge_memcg().
	python3 - "$w/mm/memcontrol.c" "$delay" <<'PY'
import sys
p, delay = sys.argv[1], int(sys.argv[2])
s = open(p).read()
anchor = "static int try_charge_memcg(struct mem_cgroup *memcg, gfp_t gfp_mask,\n\t\t\tunsigned int nr_pages)\n{\n"
assert anchor in s, "try_charge_memcg not found"
s = s.replace(anchor, anchor + "\t{\n\t\t/* perfwatch check-kernel: a known regression. */\n\t\tu64 pw_end = ktime_get_ns() + %d;\n\n\t\twhile (ktime_get_ns() < pw_end)\n\t\t\tcpu_relax();\n\t}\n" % delay, 1)
open(p, "w").write(s)
PY
	git -C "$w" -c user.name=perfwatch -c user.email=perfwatch@localhost \
	    commit -q -am "mm: memcg: spin ${delay} ns in try_charge_memcg (perfwatch check-kernel)"
	git clone -q --bare "$w" "$dir/linux.git"
	rm -rf "$dir/work"
	touch "$dir/linux.git/ready"
fi
echo "base $(git -C "$dir/linux.git" rev-parse memcg~1)"
echo "candidate $(git -C "$dir/linux.git" rev-parse memcg)"
