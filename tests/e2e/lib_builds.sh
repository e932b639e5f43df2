# Shared kernel builds (docs/KERNEL.md, "Shared builds") with a real
# daemon and curl as the stand-in runner of the build routes, on top of
# lib.sh, lib_runner.sh, lib_git.sh and lib_kstandin.sh:
#
#   builds_setup [YAML...]     a tree $K with commits $BASE, $CAND and
#                              $OTHER (no kernel is built: the files a
#                              builder uploads are made up), a daemon
#                              config with builds.shared true, runners
#                              b1 (the builder) and h1, h2 (bench hosts),
#                              a kernel job "kb" (tinyconfig + fragment)
#                              and "kr" (config: running); extra YAML
#                              lines go into the builds: section.  Starts
#                              the daemon and registers the runners.
#   submit JOB BASE CAND       POST /api/v1/submit of one pair; the reply
#                              in $PW_TMP/body, 201 or a FAIL
#   rq METHOD PATH RUNNER [CURL ARGS...]
#                              curl with RUNNER's token; the status is
#                              printed, the body is in $PW_TMP/body
#   claim RUNNER [BUILDS]      POST /api/v1/jobs/claim with "builds":
#                              BUILDS (true); prints the status
#   put_file BUILD NAME FILE RUNNER [SHA]
#                              PUT the file with its sha256 (or SHA);
#                              prints the status
#   upload_build BUILD RUNNER  makes and PUTs bzImage, System.map, config
#                              and meta of BUILD (their bytes in
#                              $PW_TMP/files/BUILD/)
#   finish_build BUILD RUNNER STATUS [ERROR]
#   nfiles                     the files in the artifact store (not tmp/)

builds_setup() {
	K=$PW_TMP/linux
	standin_kernel_tree "$K"
	echo 'int charge; /* other */' >"$K/mm/memcontrol.c"
	g "$K" commit -q -am other
	OTHER=$(g "$K" rev-parse HEAD)
	daemon_config "$PW_TMP/d" b1 h1 h2
	ARTS=$PW_TMP/d/artifacts
	{
		echo "scheduler:"
		echo "  lease: 10s"
		echo "  claim_wait: 1s"
		echo "  max_attempts: 2"
		echo "builds:"
		echo "  shared: true"
		echo "  dir: $ARTS"
		for l in "$@"; do
			echo "  $l"
		done
	} >>"$PW_TMP/d/daemon.yaml"
	kernel_job kb "CONFIG_MEMCG=y, CONFIG_PSI=y"
	sed -e 's/^name: kb/name: kr/' -e 's/config: tinyconfig/config: running/' \
	    "$PW_DIR/jobs/kb.yaml" >"$PW_DIR/jobs/kr.yaml"
	start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
	local r
	for r in b1 h1 h2; do
		[ "$(rq POST /api/v1/runners/register "$r" \
		    -d "{\"name\": \"$r\"}")" = 200 ] ||
		    fail "register_$r" "$(cat "$PW_TMP/body")"
	done
	mkdir -p "$PW_TMP/files"
}

submit() {
	local code
	code=$(http POST /api/v1/submit "$PW_ADMIN" "{\"job\": \"$1\",
	    \"base\": {\"tree\": \"$K\", \"commit\": \"$2\"},
	    \"candidate\": {\"tree\": \"$K\", \"commit\": \"$3\"}}")
	[ "$code" = 201 ] || fail "submit_$1" "$code $(cat "$PW_TMP/body")"
}

rq() {
	local method=$1 path=$2 who=$3
	shift 3
	curl -s -o "$PW_TMP/body" -w '%{http_code}' -X "$method" --max-time 60 \
	    -H "Authorization: Bearer $(cat "$PW_TOKENS/$who.token")" "$@" \
	    "$PW_URL$path"
}

claim() {
	rq POST /api/v1/jobs/claim "$1" -H 'Content-Type: application/json' \
	    -d "{\"builds\": ${2:-true}}"
}

put_file() {
	local build=$1 name=$2 file=$3 who=$4 sha=${5:-}
	[ -n "$sha" ] || sha=$(sha256sum "$file" | cut -d' ' -f1)
	rq PUT "/api/v1/builds/$build/files/$name" "$who" \
	    -H "X-Perfwatch-Sha256: $sha" -H 'Content-Type: application/octet-stream' \
	    --data-binary "@$file"
}

upload_build() {
	local build=$1 who=$2 d=$PW_TMP/files/$1 n code
	mkdir -p "$d"
	head -c 3000 /dev/urandom >"$d/bzImage"
	echo "map of build $build" >"$d/System.map"
	printf 'CONFIG_MEMCG=y\nCONFIG_PSI=y\n# build %s\n' "$build" >"$d/config"
	printf 'build_id -pwb%s\nrelease 6.1.0-pwb%s\n' "$build" "$build" >"$d/meta"
	for n in bzImage System.map config meta; do
		code=$(put_file "$build" "$n" "$d/$n" "$who")
		[ "$code" = 201 ] || { echo "PUT $n: $code $(cat "$PW_TMP/body")"; return 1; }
	done
}

finish_build() {
	local body="{\"status\": \"$3\", \"release\": \"6.1.0-pwb$1\""
	[ -n "${4:-}" ] && body="$body, \"error\": \"$4\""
	rq POST "/api/v1/builds/$1/finish" "$2" -H 'Content-Type: application/json' \
	    -d "$body, \"build_s\": 1.5, \"incremental\": false}"
}

nfiles() {
	find "$ARTS" -path "$ARTS/tmp" -prune -o -type f -print 2>/dev/null | wc -l
}
