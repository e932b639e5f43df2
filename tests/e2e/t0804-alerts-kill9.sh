#!/usr/bin/env bash
# check: parallel
# (No runner process and nothing measured: the runs are uploaded by curl;
# a test beside it only moves the random kill within its window.)
# No alert lost and none decided twice across kill -9: eight
# commits regress one after another; after each pair's runs are in, the
# daemon is killed with SIGKILL at a random moment (0-0.8 s: while the
# verdict is made, the report decided, the webhook in flight) and
# restarted.  A real webhook receiver (alert_servers.py, answering after
# 0.6 s) keeps every POST.
#
# What perfwatch promises (docs/ALERTS.md, "Exactly once"): every report
# is decided once (one transaction) and every delivery is sent at least
# once; a second send of a delivery happens only when the kill lands
# between the receiver's 2xx and the store's commit of "sent", and then
# carries the same X-Perfwatch-Delivery / Idempotency-Key and the same
# bytes, so a receiver that dedupes on the key sees each alert once.
# This test checks exactly that, and that a further restart sends
# nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_runner.sh"
. "$(dirname "$0")/lib_git.sh"
. "$(dirname "$0")/web_fill.sh"

HOOK=$PW_TMP/hook
hook_start "$HOOK" slow || { fail hook_server "no port"; finish; }

N=8
SRC=$PW_TMP/app
src_init "$SRC"
shas=("$(g "$SRC" rev-parse HEAD)")
for ((k = 1; k <= N; k++)); do
	shas+=("$(commit "$SRC" "f$k.txt" "change $k")")
done

daemon_config "$PW_TMP/d" r1
tree_yaml app "file://$SRC" master
cat >>"$PW_DIR/daemon.yaml" <<YAML
alerts:
  webhooks:
    - url: $HOOK_URL
      secret_file: $HOOK/secret
      timeout: 5s
  backoff: 1s
  backoff_max: 2s
  poll: 1s
YAML
web_job_file "$PW_DIR"
start_daemon "$PW_TMP/d" || { fail daemon_starts "see log"; finish; }
wait_tip master "${shas[$N]}" 60 || { fail first_sight "$(cat "$PW_TMP/trees.json")"; finish; }
[ "$(http POST /api/v1/runners/register "$(token_of r1)" '{"name":"r1"}')" = 200 ] ||
    { fail register "$(cat "$PW_TMP/body")"; finish; }

kills=0 bad_integrity= when=
for ((k = 1; k <= N; k++)); do
	if ! web_fill_commit app "${shas[$((k - 1))]}" "${shas[$k]}" 1000 700; then
		fail "fill-$k" "$(head -c 300 "$PW_TMP/body")"
		break
	fi
	# A random moment in the next 0.8 s: the finish wakes the verdict
	# and alert workers at once, and the receiver answers each POST
	# after 0.6 s, so the kill lands while the verdict is made, the
	# report decided, the POST in flight, or after it.
	sleep "0.$((RANDOM % 8))$((RANDOM % 10))"
	kill -KILL "$PW_DAEMON_PID"
	wait "$PW_DAEMON_PID" 2>/dev/null
	kills=$((kills + 1))
	[ "$(sql 'PRAGMA integrity_check')" = ok ] || bad_integrity="$bad_integrity $k"
	# Where this kill landed for pair k: before its report was decided
	# (d0), decided but not marked sent (d1: the POST may be in flight),
	# or after it was marked sent (s).
	case $(sql "SELECT count(*) || '/' || count(sent) FROM alerts WHERE kind = 'webhook'") in
	$((k - 1))/*) when="$when d0" ;;
	$k/$k) when="$when s" ;;
	*) when="$when d1" ;;
	esac
	start_daemon "$PW_TMP/d" || { fail "restart-$k" "see log"; finish; }
done
echo "# kills landed:$when (d0: before the report; d1: decided, not marked sent; s: after)"
[ -z "$bad_integrity" ] && pass "integrity-after-$kills-kills" ||
    fail integrity "after kill(s)$bad_integrity"

# Every pair gets its verdict after the restarts, and every delivery is
# sent.
all_sent() {
	[ "$(sql "SELECT count(*) FROM alerts WHERE kind = 'webhook'")" -ge "$N" ] &&
	    [ "$(sql "SELECT count(*) FROM alerts WHERE kind = 'webhook' AND sent IS NULL")" = 0 ]
}
wait_for 120 all_sent && pass all-sent ||
    fail all-sent "$(sql "SELECT id, key, sent, attempts, last_error FROM alerts")
$(sql "SELECT p.id, c.verdict FROM pairs p LEFT JOIN comparisons c ON c.pair_id = p.id")"

# Restarted once more with nothing pending: nothing is sent again.
before=$(wc -l <"$HOOK/hooks.jsonl")
kill -KILL "$PW_DAEMON_PID"
wait "$PW_DAEMON_PID" 2>/dev/null
start_daemon "$PW_TMP/d" || { fail restart-last "see log"; finish; }
sleep 4
[ "$(wc -l <"$HOOK/hooks.jsonl")" = "$before" ] && pass nothing-resent-after-sent ||
    fail nothing-resent-after-sent "$before -> $(wc -l <"$HOOK/hooks.jsonl")"

sql "SELECT key FROM alerts WHERE kind = 'webhook' ORDER BY key" >"$PW_TMP/keys"
python3 - "$HOOK/hooks.jsonl" "$PW_TMP/keys" "$N" "$kills" <<'PY'
import json, sys
posts = [json.loads(l) for l in open(sys.argv[1])]
keys = [l.strip() for l in open(sys.argv[2]) if l.strip()]
n, kills = int(sys.argv[3]), int(sys.argv[4])
bad = []
by = {}
for p in posts:
    h = {k.lower(): v for k, v in p["headers"].items()}
    d = h.get("x-perfwatch-delivery")
    if not p["ok"]:
        bad.append("a POST with a wrong signature: %s" % d)
    if h.get("idempotency-key") != d:
        bad.append("Idempotency-Key %r is not the delivery %r" % (h.get("idempotency-key"), d))
    by.setdefault(d, []).append(p)
# One report per regressing commit: none decided twice after a kill.
if len(keys) != n:
    bad.append("%d webhook deliveries in the store, want %d (one per commit)" % (len(keys), n))
# Each at least once.
missing = [k for k in keys if k not in by]
if missing:
    bad.append("never received: %s" % missing)
extra = [d for d in by if d not in keys]
if extra:
    bad.append("received, not in the store: %s" % extra)
# A second send is the same body (a receiver may drop it by key; its
# timestamp and signature are the time it was sent), and each needs a
# kill to explain it.
dups = sum(len(v) - 1 for v in by.values())
for d, v in by.items():
    if len({p["body"] for p in v}) != 1:
        bad.append("%s sent twice with different bytes" % d)
if dups > kills:
    bad.append("%d second sends for %d kills" % (dups, kills))
print("# %d POSTs, %d deliveries, %d received twice (a kill between the "
      "receipt and the store's 'sent'), %d kills" % (len(posts), len(by), dups, kills))
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] && pass each-alert-once-by-key || fail each-alert-once-by-key "see above"
finish
