# lib.sh: shared helpers for the live tests (sourced by test/live/t-*.sh).
#
# Each test starts its own nats-server (random free loopback port, store in
# a temporary folder) and its own relay, and everything it started is
# stopped on every exit path (trap).  Every wait is bounded.  Output: one
# line per check, "ok - <suite>: <name>" or "FAIL - <suite>: <name>: <why>".
#
# Variables after start_nats / start_relay:
#   NATS_PORT NATS_URL_T   the test's nats-server
#   RELAY_PORT RELAY_URL RELAY_PID RELAY_LOG
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
O=${O:-build}
RELAY_BIN=$ROOT/$O/treaty-relay
JSGET=$ROOT/$O/test/jsget
SUITE=${SUITE:-$(basename "$0" .sh)}
T=$(mktemp -d /tmp/treaty-live.XXXXXX)
PIDS=()
FAILS=0

# Producer used by most tests: token "test-token-<suite>".
TOKEN="test-token-0123456789"
TOKEN_SHA=$(printf '%s' "$TOKEN" | sha256sum | cut -c1-64)
OTHER_TOKEN="other-token-0123456789"
OTHER_SHA=$(printf '%s' "$OTHER_TOKEN" | sha256sum | cut -c1-64)
PRODUCERS_DEFAULT='[{"name":"alpha","tokenSha256":"'$TOKEN_SHA'","subjects":["evt.*.shop.>","audit.*.shop.>"]},{"name":"beta","tokenSha256":"'$OTHER_SHA'","subjects":["evt.*.shop.>","evt.*.other.>"]}]'

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 1 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	# A sanitizer report in any relay log (SANITIZE=1 builds) fails the test.
	local f
	for f in "$T"/relay.*.log "$T"/*/relay*.log; do
		[ -f "$f" ] || continue
		if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$f"; then
			echo "FAIL - $SUITE: sanitizer report in $(basename "$f")"
			grep -E -A12 'AddressSanitizer|LeakSanitizer|runtime error:' "$f" | head -30 >&2
		fi
	done
	if [ -n "${KEEP_TMP:-}" ]; then
		echo "# kept $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { echo "ok - $SUITE: $1"; }
fail() {
	echo "FAIL - $SUITE: $1: $2"
	FAILS=$((FAILS + 1))
}
# check NAME EXPECTED ACTUAL
check() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "expected [$2], got [$3]"; fi
}
# check_match NAME REGEX ACTUAL
check_match() {
	if [[ "$3" =~ $2 ]]; then ok "$1"; else fail "$1" "[$3] does not match /$2/"; fi
}
# Exit status of the test script: 1 when any check failed.
finish() {
	exit $((FAILS > 0 ? 1 : 0))
}

# A free TCP port on 127.0.0.1 (nothing answers there now), below the
# kernel's ephemeral range (32768 and up) so no outgoing connection holds it.
free_port() {
	local p
	while :; do
		p=$((10000 + RANDOM % 22000))
		(exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }
	done
}

# wait_for SECONDS CMD...: run CMD every 0.1 s until it succeeds.
wait_for() {
	local n=$(($1 * 10)); shift
	while [ $n -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

port_open() { (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null; }

# start_nats [NAME]: a JetStream nats-server on a free loopback port.  The
# port is free when chosen but may be taken before nats-server binds it (by
# another test run): then try another, up to three times.
start_nats() {
	local name=${1:-n1} try
	mkdir -p "$T/$name"
	for try in 1 2 3; do
		NATS_PORT=${NATS_PORT_FIXED:-$(free_port)}
		cat > "$T/$name/nats.conf" <<CONF
listen: 127.0.0.1:$NATS_PORT
max_payload: 2MB
jetstream { store_dir: "$T/$name/js" }
CONF
		nats-server -c "$T/$name/nats.conf" > "$T/$name/nats.log" 2>&1 &
		NATS_PID=$!
		PIDS+=($NATS_PID)
		NATS_URL_T=nats://127.0.0.1:$NATS_PORT
		NATS_NAME=$name
		if wait_for 10 nats_up; then
			return 0
		fi
		grep -q 'address already in use' "$T/$name/nats.log" || break
	done
	echo "# nats-server did not start" >&2
	cat "$T/$name/nats.log" >&2
	return 1
}

# Our nats-server is running and listening (not someone else on the port).
nats_up() { kill -0 "$NATS_PID" 2>/dev/null && port_open $NATS_PORT; }

stop_nats() {
	kill -TERM "$NATS_PID" 2>/dev/null
	wait "$NATS_PID" 2>/dev/null
}

# Restart the same nats-server (same port and store).
restart_nats() {
	nats-server -c "$T/$NATS_NAME/nats.conf" >> "$T/$NATS_NAME/nats.log" 2>&1 &
	NATS_PID=$!
	PIDS+=($NATS_PID)
	wait_for 10 port_open $NATS_PORT
}

healthz_ok() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$RELAY_URL/healthz")" = 200 ]; }

# start_relay [ARGS...]: the relay on a free port, configured through the
# environment (PRODUCERS, SUBSCRIBERS and any TREATY_RELAY_* the caller
# exported); waits for /healthz 200 unless NO_WAIT=1.
start_relay() {
	local try
	for try in 1 2 3; do
		RELAY_PORT=$(free_port)
		RELAY_URL=http://127.0.0.1:$RELAY_PORT
		RELAY_LOG=$T/relay.$RELAY_PORT.log
		NATS_URL=${NATS_URL_RELAY:-$NATS_URL_T} PORT=$RELAY_PORT \
		    TREATY_RELAY_LISTEN=127.0.0.1 \
		    TREATY_RELAY_PRODUCERS=${PRODUCERS:-$PRODUCERS_DEFAULT} \
		    "$RELAY_BIN" -v "$@" > "$RELAY_LOG" 2>&1 &
		RELAY_PID=$!
		PIDS+=($RELAY_PID)
		# The port may have been taken between choosing and binding.
		sleep 0.05
		if ! kill -0 $RELAY_PID 2>/dev/null &&
		    grep -q 'msg="cannot listen"' "$RELAY_LOG"; then
			continue
		fi
		break
	done
	if [ -z "${NO_WAIT:-}" ]; then
		if ! wait_for 15 healthz_ok; then
			echo "# relay did not become healthy" >&2
			tail -20 "$RELAY_LOG" >&2
			return 1
		fi
	fi
}

# post SUBJECT ID [BODY] [extra curl args...]: binary-mode POST with the
# default token.  Sets STATUS and BODY.
post() {
	local subject=$1 id=$2 data=${3-hello}
	shift 3 2>/dev/null || shift $#
	local out
	out=$(curl -s -m 20 -w '\n%{http_code}' -X POST "$RELAY_URL/v1/events/$subject" \
	    -H "Authorization: Bearer $TOKEN" \
	    -H 'ce-specversion: 1.0' -H "ce-id: $id" -H 'ce-source: /test' \
	    -H "ce-type: $(type_for "$subject")" -H 'Content-Type: text/plain' \
	    --data-binary "$data" "$@")
	STATUS=${out##*$'\n'}
	BODY=${out%$'\n'*}
}

# The suite type matching a subject: dev.<product>.<entity>.<verb>.v1
type_for() {
	local IFS=.
	set -- $1 x x x x x
	echo "dev.$3.$4.$5.v1"
}

# json_get KEY: the string or literal value of "KEY" in $BODY (flat JSON).
json_get() {
	printf '%s' "$BODY" | sed -n 's/.*"'"$1"'":\("\([^"]*\)"\|\([a-z0-9]*\)\).*/\2\3/p'
}
