# Shared by the kernel targets (tests/kernel/check-kernel*.sh), on top of
# tests/e2e/lib.sh:
#
#   KFRAGMENT        the kernel.fragment of their jobs (flow YAML): the
#                    fragment of docs/KERNEL.md plus SMP, the fds
#                    perfwatch-tcp-rr uses, and SLUB (tinyconfig picks
#                    SLOB, under which olddefconfig drops
#                    CONFIG_MEMCG_KMEM=y and the build fails naming it).
#                    One fragment for all, so they share the runner's
#                    build cache (its key is the config and fragment).
#   KERNEL_YAML      the kernel: section of their jobs (tinyconfig with
#                    KFRAGMENT, build timeout 40m, boot timeout 2m)
#   kernel_start     renices this shell by 10 (the daemon, the runner,
#                    its kernel builds and qemu inherit it: the machine
#                    is shared), takes the lock of $KERNEL_CACHE (one
#                    kernel run at a time on its build trees), makes or
#                    reuses the repository (tests/kernel/mkrepo.sh) and
#                    sets REPO, BASE and CAND; 1 when mkrepo.sh failed
#   kernel_daemon_config
#                    a real SMTP server and webhook receiver
#                    (lib_alerts.sh; fails the test without them) and
#                    daemon_config $PW_TMP/d r1 with a 60 s lease and
#                    their alerts section
#   kernel_runner DIR
#                    starts runner r1 with boot: qemu and kernel_tree DIR
#   kpf_job NAME RUNS MAX_RUNS [YAML]
#                    $PW_DIR/jobs/NAME.yaml: the page-fault loop in the
#                    nested memcg /a/b of a tinyconfig kernel with
#                    KFRAGMENT; YAML lines are appended.
KFRAGMENT='[CONFIG_64BIT=y, CONFIG_PRINTK=y, CONFIG_TTY=y, CONFIG_SERIAL_8250=y,
    CONFIG_SERIAL_8250_CONSOLE=y, CONFIG_BLK_DEV_INITRD=y, CONFIG_RD_GZIP=y,
    CONFIG_BINFMT_ELF=y, CONFIG_BINFMT_SCRIPT=y, CONFIG_PROC_FS=y,
    CONFIG_SYSFS=y, CONFIG_DEVTMPFS=y, CONFIG_DEVTMPFS_MOUNT=y,
    CONFIG_TMPFS=y, CONFIG_CGROUPS=y, CONFIG_MEMCG=y, CONFIG_MEMCG_KMEM=y,
    CONFIG_NET=y, CONFIG_INET=y, CONFIG_UNIX=y, CONFIG_FUTEX=y,
    CONFIG_EPOLL=y, CONFIG_MULTIUSER=y, CONFIG_SHMEM=y, CONFIG_PSI=y,
    CONFIG_SMP=y, CONFIG_EVENTFD=y, CONFIG_SIGNALFD=y, CONFIG_TIMERFD=y,
    CONFIG_SLUB=y, "# CONFIG_SLOB is not set"]'

KERNEL_YAML="kernel:
  config: tinyconfig
  fragment: $KFRAGMENT
  build_timeout: 40m
  boot_timeout: 2m"

kernel_start() {
	local t=$(date +%s)
	renice -n 10 -p $$ >/dev/null
	mkdir -p "$KERNEL_CACHE"
	exec 9>"$KERNEL_CACHE.lock"
	flock -n 9 || { echo "# waiting for another kernel run on $KERNEL_CACHE"; flock 9; }
	"$(dirname "${BASH_SOURCE[0]}")/mkrepo.sh" "$KERNEL_CACHE" >"$PW_TMP/shas" || return 1
	BASE=$(awk '$1 == "base" {print $2}' "$PW_TMP/shas")
	CAND=$(awk '$1 == "candidate" {print $2}' "$PW_TMP/shas")
	REPO=$KERNEL_CACHE/linux.git
	echo "repository ready in $(($(date +%s) - t)) s: base $BASE candidate $CAND"
}

kernel_daemon_config() {
	alert_servers_start
	case $? in
	0) ;;
	1) fail alert_servers "python3-aiosmtpd is not installed (make deps)"; finish ;;
	*) fail alert_servers "$ALERTS_ERR"; finish ;;
	esac
	daemon_config "$PW_TMP/d" r1
	cat >>"$PW_TMP/d/daemon.yaml" <<YAML
scheduler:
  lease: 60s
  claim_wait: 2s
$ALERTS_YAML
YAML
}

kernel_runner() {
	runner_config r1 "kernel_tree: $1" "guest_dir: $PW_BIN/guest"
	sed -i 's/^boot: none/boot: qemu/' "$PW_TMP/r1/runner.yaml"
	start_runner r1
}

kpf_job() {
	cat >"$PW_DIR/jobs/$1.yaml" <<YAML
name: $1
parser: will-it-scale
command: [perfwatch-pagefault, -s, "2", -m, "16"]
$KERNEL_YAML
matrix:
  cgroup: [/a/b]
memory_max: 256M
runs: $2
max_runs: $3
metrics:
  average: {better: higher, min_effect: 10%}
timeout: 2m
YAML
	[ -n "${4:-}" ] && echo "$4" >>"$PW_DIR/jobs/$1.yaml"
	return 0
}
