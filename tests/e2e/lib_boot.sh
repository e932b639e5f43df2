# A bare-metal boot (kexec, reboot) with fake boot programs, shared by
# t0821 and t0823, on top of lib.sh, lib_runner.sh and lib_git.sh:
#
#   boot_setup NAME N         a kernel tree $PW_TMP/linux (commit $SHA),
#                             a daemon (run lease 10 s) with job NAME
#                             (one boot a side, `echo ops=1000`, boot
#                             timeout 40 s) started, and the runner's
#                             kernel cache $KT seeded with the image $img
#                             of that job's (commit, config): build id
#                             -pwN, release 6.1.158-pwN, so nothing is
#                             built
#   wrong_kernel_failed JOB   PASS wrong_kernel_fails_naming_both when job
#                             JOB failed, no run stored, its error naming
#                             the booted 6.1.0-13-amd64 and the image's
#                             build id; else FAIL

boot_setup() {
	local name=$1 n=$2 key
	src_init "$PW_TMP/linux"
	SHA=$(g "$PW_TMP/linux" rev-parse HEAD)
	daemon_config "$PW_TMP/d" r1
	cat >>"$PW_TMP/d/daemon.yaml" <<'YAML'
scheduler:
  lease: 10s
  claim_wait: 1s
YAML
	cat >"$PW_DIR/jobs/$name.yaml" <<YAML
name: $name
parser: keyvalue
command: [sh, -c, "echo ops=1000"]
kernel:
  config: tinyconfig
  fragment: [CONFIG_MEMCG=y]
  boot_timeout: 40s
runs: 2
max_runs: 2
# One boot a side, base first: the test follows the boot state of one
# claim (with the default rounds each round is such a claim).
rounds: 1
metrics:
  ops: {better: higher, min_effect: 50%}
timeout: 30s
YAML
	start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
	# The image the runner would have built for (SHA, tinyconfig +
	# fragment): its cache key is kernel_config_key() of
	# runners/kernel.c.
	KT=$PW_TMP/kernel
	key=$(python3 -c 'import hashlib; print(hashlib.sha256(b"config tinyconfig\nalign -falign-functions=64\nfragment CONFIG_MEMCG=y\n").hexdigest()[:16])')
	img=$KT/images/$SHA-$key
	mkdir -p "$img"
	echo "not a kernel" >"$img/bzImage"
	echo "not a map" >"$img/System.map"
	printf 'build_id -pw%s\nrelease 6.1.158-pw%s\nconfig_sha256 %064d\ncommit %s\ngen_cpio -\nbuild_s 1.0\n' \
	    "$n" "$n" 0 "$SHA" >"$img/meta"
}

wrong_kernel_failed() {
	http GET "/api/v1/jobs/$1" >/dev/null
	python3 - "$PW_TMP/body" "$(awk '$1 == "build_id" {print $2}' "$img/meta")" <<'PY' &&
import json, sys
j = json.load(open(sys.argv[1]))
assert j["state"] == "failed", j["state"]
assert "wrong kernel: booted 6.1.0-13-amd64, expected a kernel ending in %s" % sys.argv[2] in j["error"], j["error"]
assert not j["runs"], j["runs"]
PY
	    pass wrong_kernel_fails_naming_both ||
	    fail wrong_kernel_fails_naming_both "$(head -c 1500 "$PW_TMP/body")"
}
