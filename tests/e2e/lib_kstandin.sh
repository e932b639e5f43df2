# Stand-ins for what cannot run in these tests (docs/KERNEL.md): a
# kernel tree whose make is a script, and kexec.  On top of lib.sh and
# lib_git.sh:
#
#   standin_kernel_tree DIR    a git repository at DIR with commits $BASE
#                              and $CAND (a change to mm/memcontrol.c):
#                              a Makefile with the targets and variables
#                              perfwatch-runner uses (tinyconfig,
#                              olddefconfig, which drops
#                              CONFIG_NEEDS_MISSING_DEP as kconfig drops
#                              an option whose dependency is missing, and
#                              bzImage with O=, KCFLAGS and LOCALVERSION)
#                              and a scripts/kconfig/merge_config.sh.  In
#                              O it records the config steps run
#                              (config-steps), the object rebuilds
#                              (rebuilds) and who ran make and
#                              merge_config.sh (make-uids, merge-uids);
#                              a rebuild appends LOCALVERSION to the file
#                              $PW_COMPILES when set; while the file
#                              $PW_SLOW_MAKE exists bzImage waits (its
#                              shell's pid in $PW_SLOW_MAKE.pid)
#   kernel_job NAME FRAGMENT [LINE...]
#                              writes job NAME (`echo ops=1000` on a
#                              kernel built from tinyconfig and the
#                              options FRAGMENT, "CONFIG_A=y, CONFIG_B=y";
#                              one run) into $PW_DIR/jobs; each LINE is
#                              one more key of the job, and a LINE
#                              "kernel.KEY: VALUE" one more of its kernel
#   fake_kexec DIR             DIR/kexec: `kexec -l IMAGE` appends its
#                              arguments to $FAKE_LOG and writes "Linux
#                              version RELEASE" (the release in IMAGE's
#                              meta, or $FAKE_KERNEL) to
#                              $PERFWATCH_PROC_VERSION; `kexec -e` kills
#                              the runner that called it, as a reboot

standin_kernel_tree() {
	local k=$1
	mkdir -p "$k/scripts/kconfig" "$k/mm"
	cat >"$k/Makefile" <<'MK'
# Stand-in for kbuild: the targets and variables perfwatch-runner uses.
O ?= .
tinyconfig:
	echo tinyconfig >>$(O)/config-steps
	printf 'CONFIG_64BIT=y\n# CONFIG_MEMCG is not set\n' >$(O)/.config
# Like kconfig: an option whose dependency is missing is dropped.
olddefconfig:
	echo olddefconfig >>$(O)/config-steps
	grep -v '^CONFIG_NEEDS_MISSING_DEP=' $(O)/.config >$(O)/.config.new; mv $(O)/.config.new $(O)/.config
bzImage:
	mkdir -p $(O)/arch/x86/boot $(O)/include/config $(O)/usr
	[ -z "$(PW_SLOW_MAKE)" ] || { echo $$$$ >"$(PW_SLOW_MAKE).pid"; while [ -f "$(PW_SLOW_MAKE)" ]; do sleep 0.2; done; }
	test -f $(O)/memcontrol.o -a $(O)/memcontrol.o -nt mm/memcontrol.c || { cp mm/memcontrol.c $(O)/memcontrol.o; echo rebuilt >>$(O)/rebuilds; [ -z "$(PW_COMPILES)" ] || echo "$(LOCALVERSION)" >>"$(PW_COMPILES)"; }
	echo "kernel KCFLAGS=$(KCFLAGS) CC=$(CC)" >$(O)/arch/x86/boot/bzImage
	cat $(O)/memcontrol.o >>$(O)/arch/x86/boot/bzImage
	head -c 200000 /dev/zero >>$(O)/arch/x86/boot/bzImage
	echo "6.1.0$(LOCALVERSION)" >$(O)/include/config/kernel.release
	echo "map" >$(O)/System.map
	id -u >>$(O)/make-uids
MK
	cat >"$k/scripts/kconfig/merge_config.sh" <<'SH'
#!/bin/sh
# merge_config.sh -m -O DIR BASE FRAGMENT: later lines win.
[ "$1" = -m ] && [ "$2" = -O ] || exit 2
id -u >>"$3/merge-uids"
base=$4 frag=$5
for l in $(sed 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1=n/' "$frag"); do
	sym=${l%%=*}
	grep -v "^$sym=\|^# $sym is not set" "$base" >"$base.tmp"; mv "$base.tmp" "$base"
	echo "$l" >>"$base"
done
SH
	chmod +x "$k/scripts/kconfig/merge_config.sh"
	echo 'int charge;' >"$k/mm/memcontrol.c"
	printf 'config MEMCG\n\tbool "memcg"\n' >"$k/Kconfig"
	echo 'int other;' >"$k/mm/other.c"
	g "$k" init -q
	g "$k" add -A
	g "$k" commit -q -m base
	BASE=$(g "$k" rev-parse HEAD)
	echo 'int charge; /* slower */' >"$k/mm/memcontrol.c"
	g "$k" commit -q -am candidate
	CAND=$(g "$k" rev-parse HEAD)
}

kernel_job() {
	local name=$1 frag=$2 l
	shift 2
	{
		printf 'name: %s\nparser: keyvalue\n' "$name"
		echo 'command: [sh, -c, "echo ops=1000"]'
		printf 'kernel:\n  config: tinyconfig\n  fragment: [%s]\n' "$frag"
		for l in "$@"; do
			[[ $l == kernel.* ]] && echo "  ${l#kernel.}"
		done
		printf 'runs: 1\nmax_runs: 1\nmetrics:\n'
		echo '  ops: {better: higher, min_effect: 50%}'
		for l in "$@"; do
			[[ $l == kernel.* ]] || echo "$l"
		done
	} >"$PW_DIR/jobs/$name.yaml"
}

fake_kexec() {
	mkdir -p "$1"
	cat >"$1/kexec" <<'SH'
#!/bin/sh
echo "kexec $*" >>"$FAKE_LOG"
case $1 in
-l) rel=$(awk '$1 == "release" {print $2}' "$(dirname "$2")/meta")
    echo "Linux version ${FAKE_KERNEL:-$rel} (fake kexec) #1 SMP" >"$PERFWATCH_PROC_VERSION" ;;
-e) kill -9 "$PPID" ;;
esac
exit 0
SH
	chmod +x "$1/kexec"
}
