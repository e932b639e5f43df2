# Hosts as network namespaces, on top of lib.sh (t0680 and make
# check-deploy):
#
#   . "$(dirname "$0")/lib_netns.sh"
#
#   netns_hosts NS NET N   makes namespace ${NS}d (the daemon's host) and
#                          N more, ${NS}r1..${NS}rN (bench hosts), each
#                          joined to ${NS}d by a veth pair of its own:
#                          10.NET.K.1 on the daemon's side, 10.NET.K.2 in
#                          ${NS}rK; the addresses exist only inside the
#                          namespaces.  0; 1 when namespaces cannot be
#                          made here (not root, no iproute2 or nsenter,
#                          no CAP_NET_ADMIN: a SKIP); 2 when a veth pair
#                          failed after that.  NETNS_WHY says what.
#   netns_daemon NS SCHEME starts perfwatchd -c $PW_DIR/daemon.yaml in
#                          ${NS}d (log $PW_DIR/daemon.log) and waits for
#                          its port: PW_DB, PW_DAEMON_PID, PW_PORT and
#                          PW_URL (SCHEME://127.0.0.1:PORT, inside ${NS}d)
#                          set; 0, or 1 when it did not listen in 20 s
#   netns_cleanup          deletes every namespace netns_hosts made (the
#                          veth pairs go with them); call it from the
#                          test's EXIT trap, after pw_cleanup.

NETNS=()
NETNS_WHY=

netns_hosts() {
	local ns=$1 net=$2 n=$3 k
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null ||
	    ! command -v nsenter >/dev/null; then
		NETNS_WHY="needs root, iproute2 (ip netns) and nsenter to make network namespaces"
		return 1
	fi
	if ! ip netns add "${ns}d" 2>"$PW_TMP/netns.err"; then
		NETNS_WHY="cannot create a network namespace: $(cat "$PW_TMP/netns.err")"
		return 1
	fi
	NETNS+=("${ns}d")
	ip -n "${ns}d" link set lo up
	for ((k = 1; k <= n; k++)); do
		ip netns add "${ns}r$k" && NETNS+=("${ns}r$k") &&
		    ip link add "${ns}a$k" type veth peer name "${ns}b$k" &&
		    ip link set "${ns}a$k" netns "${ns}d" &&
		    ip link set "${ns}b$k" netns "${ns}r$k" &&
		    ip -n "${ns}d" addr add "10.$net.$k.1/24" dev "${ns}a$k" &&
		    ip -n "${ns}r$k" addr add "10.$net.$k.2/24" dev "${ns}b$k" &&
		    ip -n "${ns}d" link set "${ns}a$k" up &&
		    ip -n "${ns}r$k" link set "${ns}b$k" up &&
		    ip -n "${ns}r$k" link set lo up ||
		    { NETNS_WHY="cannot set up veth pair $k"; return 2; }
	done
}

netns_daemon() {
	PW_DB=$PW_DIR/pw.db
	spawn "$PW_DIR/daemon.log" nsenter --net="/run/netns/${1}d" "$PW_BIN/perfwatchd" -v \
	    -c "$PW_DIR/daemon.yaml" --port-file "$PW_DIR/port"
	PW_DAEMON_PID=$!
	wait_for 20 pw_listening "$PW_DIR/port" && test -s "$PW_DIR/port" || return 1
	PW_PORT=$(cat "$PW_DIR/port")
	PW_URL=$2://127.0.0.1:$PW_PORT
}

netns_cleanup() {
	local n
	for n in "${NETNS[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
}
