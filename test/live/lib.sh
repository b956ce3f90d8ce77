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

# pyenv's python3 is a shim, a shell script that runs pyenv first: about
# 0.1 s of CPU a call, and the tests call python3 in their polling loops
# (t-inbox used 26 s of CPU with it, 10 s without).  The system's python3
# (a dependency: scripts/install-deps.sh) comes first in PATH.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
	mkdir "$T/.python" && ln -s /usr/bin/python3 "$T/.python/python3" &&
	    PATH=$T/.python:$PATH
fi

# SANITIZED is 1 when the relay under test was built with AddressSanitizer
# or UBSan (make SANITIZE=1, O=build/san): only then can a sanitizer report
# appear, so only then do the "no sanitizer report" checks check anything.
SAN_RE='AddressSanitizer|LeakSanitizer|runtime error:'
SANITIZED=
grep -qaE '__asan_init|__ubsan_handle' "$RELAY_BIN" 2>/dev/null && SANITIZED=1

# sha256hex TEXT: SHA-256 of TEXT as 64 hex digits (a token's hash).
sha256hex() { printf '%s' "$1" | sha256sum | cut -c1-64; }

# Producer used by most tests: token "test-token-<suite>".
TOKEN="test-token-0123456789"
TOKEN_SHA=$(sha256hex "$TOKEN")
OTHER_TOKEN="other-token-0123456789"
OTHER_SHA=$(sha256hex "$OTHER_TOKEN")
PRODUCERS_DEFAULT='[{"name":"alpha","tokenSha256":"'$TOKEN_SHA'","subjects":["evt.*.shop.>","audit.*.shop.>"]},{"name":"beta","tokenSha256":"'$OTHER_SHA'","subjects":["evt.*.shop.>","evt.*.other.>"]}]'

# start_receiver PORT FILE [CERT KEY]: test/live/receiver.py on PORT,
# recording to FILE (HTTPS with CERT and KEY), stopped with the test.
# Fails when it does not listen within 10 s.
start_receiver() {
	python3 "$ROOT/test/live/receiver.py" "$@" &
	PIDS+=($!)
	wait_until 10 "port_open $1"
}

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
	# A sanitizer report in any relay log or client stderr file (*.err)
	# of a SANITIZE=1 build fails the test.  Without a sanitizer there is
	# nothing that could write one: say so, pass nothing.
	local f
	if [ -n "$SANITIZED" ]; then
		for f in "$T"/relay.*.log "$T"/*/relay*.log "$T"/*.err; do
			[ -f "$f" ] || continue
			if grep -qE "$SAN_RE" "$f"; then
				echo "FAIL - $SUITE: sanitizer report in $(basename "$f")"
				grep -E -A12 "$SAN_RE" "$f" | head -30 >&2
			fi
		done
	fi
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
# Helpers that ask the relay or nats-server something print "ERROR: <why>"
# when the request failed (no answer, an unexpected status, a dead
# process), never a value a check could expect ("", "0", an empty list).
# An ACTUAL holding that marker fails the check whatever it is compared
# with, even an EXPECTED taken earlier from the same failing helper.
# check NAME EXPECTED ACTUAL
check() {
	if [[ $3 == *"ERROR: "* ]]; then fail "$1" "expected [$2], got [$3]"
	elif [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "expected [$2], got [$3]"; fi
}
# check_match NAME REGEX ACTUAL
check_match() {
	if [[ $3 == *"ERROR: "* ]]; then fail "$1" "[$3] (a helper failed)"
	elif [[ "$3" =~ $2 ]]; then ok "$1"; else fail "$1" "[$3] does not match /$2/"; fi
}
# check_no_sanitizer_report NAME FILE...: in a sanitizer build, ok when no
# FILE holds a sanitizer report; without a sanitizer, a "# skip" line (a
# check that cannot fail is not a pass).
check_no_sanitizer_report() {
	local name=$1 hits
	shift
	if [ -z "$SANITIZED" ]; then
		echo "# skip - $SUITE: $name: not a sanitizer build"
		return
	fi
	hits=$(cat "$@" 2>/dev/null | grep -E -m3 "$SAN_RE")
	if [ -z "$hits" ]; then ok "$name"; else fail "$name" "$hits"; fi
}
# relay_alive: the relay we started is still running (a check that reads
# "nothing happened" asks this first).
relay_alive() { kill -0 "$RELAY_PID" 2>/dev/null; }
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

# wait_until SECS EXPR: evaluate the shell expression EXPR every 0.1 s
# until it is true or SECS pass (1 then).  EXPR is a string, given in
# single quotes, so that the command substitutions and variables in it are
# read again each time ('test "$(...)"' in double quotes would be read
# once, before the wait, and run to its timeout).  Positional parameters
# in EXPR are wait_until's own: a function passes its "$1" by expanding it
# first (double quotes around that part).
wait_until() {
	local _wu_n=$(($1 * 10))
	while [ $_wu_n -gt 0 ]; do
		eval "$2" >/dev/null 2>&1 && return 0
		sleep 0.1
		_wu_n=$((_wu_n - 1))
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
		if wait_until 10 nats_up; then
			return 0
		fi
		grep -q 'address already in use' "$T/$name/nats.log" || break
	done
	echo "# nats-server did not start" >&2
	cat "$T/$name/nats.log" >&2
	return 1
}

# Our nats-server is running and listening (not someone else on the port).
# start_cluster: three nats-servers with JetStream on loopback, routed to
# each other (server names n0..n2).  Sets ports (client), cports (route)
# and cpids; each server's files under $T/c<i>.  CLUSTER_CONF, when set,
# is one more line of each server's configuration.  A node that does not
# listen within 20 s has its log's last lines shown ("# " lines), and the
# three start again on other ports, once (a port taken meanwhile by
# another program); 1 when that fails too.
start_cluster() {
	start_cluster_once && return 0
	local i
	for i in 0 1 2; do
		kill "${cpids[$i]}" 2>/dev/null
		tail -3 "$T/c$i/nats.log" 2>/dev/null | sed "s/^/# n$i: /"
	done
	for i in 0 1 2; do wait "${cpids[$i]}" 2>/dev/null; done
	rm -rf "$T"/c0 "$T"/c1 "$T"/c2
	start_cluster_once
}
start_cluster_once() {
	local i j d routes
	ports=() cports=() cpids=()
	for i in 1 2 3; do ports+=($(free_port)); cports+=($(free_port)); done
	for i in 0 1 2; do
		d=$T/c$i
		mkdir -p "$d"
		routes=""
		for j in 0 1 2; do
			[ $j -eq $i ] || routes="$routes nats-route://127.0.0.1:${cports[$j]}"
		done
		cat > "$d/nats.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:${ports[$i]}
${CLUSTER_CONF:-}
jetstream { store_dir: "$d/js" }
cluster { name: treaty, listen: 127.0.0.1:${cports[$i]}, routes: [$(echo $routes | sed 's/ /, /g')] }
CONF
		nats-server -c "$d/nats.conf" > "$d/nats.log" 2>&1 &
		cpids+=($!)
		PIDS+=($!)
	done
	for i in 0 1 2; do wait_until 20 "port_open ${ports[$i]}" || return 1; done
}

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
	wait_until 10 "port_open $NATS_PORT"
}

# relay_listening: true when the relay's port accepts connections.
relay_listening() { port_open "$RELAY_PORT"; }

# curl_status ARGS...: print the HTTP status of one curl request (000: no
# answer).  A later -m in ARGS overrides the 15 s limit.
curl_status() { curl -s -m 15 -o /dev/null -w '%{http_code}' "$@"; }
# healthz_status: print the status of GET /healthz (5 s limit).
healthz_status() { curl_status -m 5 "$RELAY_URL/healthz"; }
healthz_ok() { [ "$(healthz_status)" = 200 ]; }
healthz_503() { [ "$(healthz_status)" = 503 ]; }

# metrics_text: print the body of GET /metrics, or "ERROR: ..." (and fail)
# when the answer is not a 200.
metrics_text() {
	local out code
	out=$(curl -s -m 5 -w '\n%{http_code}' "$RELAY_URL/metrics")
	code=${out##*$'\n'}
	if [ "$code" != 200 ]; then
		echo "ERROR: GET /metrics: HTTP $code"
		return 1
	fi
	printf '%s\n' "${out%$'\n'*}"
}
# metric NAME: print the value of one metric line (NAME with its labels)
# from /metrics; "ERROR: ..." when /metrics did not answer 200 or has no
# such line.
metric() {
	local m v
	m=$(metrics_text) || { echo "$m"; return 1; }
	v=$(printf '%s\n' "$m" | awk -v n="$1" '$1 == n { print $2; f = 1 } END { exit !f }') || {
		echo "ERROR: no $1 in /metrics"
		return 1
	}
	echo "$v"
}

# log_wait SECS ERE [FILE]: wait (SECS at most) until a line of FILE (the
# relay's log by default) matches ERE; 1 when none did.
log_wait() {
	local lw_re=$2 lw_file=${3:-$RELAY_LOG}
	wait_until "$1" 'grep -qE -- "$lw_re" "$lw_file"'
}
# in_log ERE [FILE]: print "logged" once ERE matches a line of FILE (the
# relay's log by default; waited for, 10 s at most), else "ERROR: not
# logged: ERE": the witness that the relay did handle what a "nothing
# happened" check is about.
in_log() {
	log_wait 10 "$1" "${2:-}" && echo logged || echo "ERROR: not logged: $1"
}

# now_ms: print the wall clock in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# until_ms MS: sleep until the wall clock reads MS (an arithmetic
# expression) or later: a fixed wait where the passing of time is itself
# the behaviour under test (a lease lasting its length).
until_ms() { while [ "$(now_ms)" -lt $(($1)) ]; do sleep 0.05; done; }
# now_rfc3339: the wall clock as RFC 3339 in UTC with nanoseconds (a
# replay's or a drop listing's "since").
now_rfc3339() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }

# Time by the relay's own clock (STYLE "Tests"): every line of the relay's
# log begins time=<RFC 3339 in UTC, milliseconds>, stamped as it happens,
# so how long the relay took from one event to another is read from its
# stamps, not from this script's clock around requests (which counts
# starting curl and python, and the script's own turns, on a loaded
# machine).  The receiver's arrival times ("t" in receiver.py's lines) are
# on the same clock (CLOCK_REALTIME), and so is now_ms.
# stamp_ms [-l]: print the time of each line of stdin that begins with
# time=<RFC 3339>, in milliseconds since the epoch (by arithmetic: mawk has
# no mktime, and its printf %d stops at 2^31, hence %.0f); with -l, the
# line itself after it.
stamp_ms() {
	awk -v line="${1:-}" 'match($0, /^time=[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]/) {
		y = substr($0, 6, 4) + 0; mo = substr($0, 11, 2) + 0; d = substr($0, 14, 2) + 0
		ms = ((substr($0, 17, 2) * 60 + substr($0, 20, 2)) * 60 + substr($0, 23, 2)) * 1000
		if (substr($0, 25, 1) == ".") ms += substr($0, 26, 3)
		y -= mo <= 2; era = int(y / 400); yoe = y - era * 400
		doy = int((153 * ((mo + 9) % 12) + 2) / 5) + d - 1
		days = era * 146097 + yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy - 719468
		printf "%.0f%s\n", days * 86400000 + ms, line == "-l" ? " " $0 : ""
	}'
}
# log_stamps ERE [FILE]: the time (ms) of every line of FILE (the relay's
# log by default) that matches ERE, one a line, in the log's order.
log_stamps() { grep -E -- "$1" "${2:-$RELAY_LOG}" 2>/dev/null | stamp_ms; }
# log_lines ERE [FILE]: each line of FILE (the relay's log) that matches
# ERE, its time (ms) first.
log_lines() { grep -E -- "$1" "${2:-$RELAY_LOG}" 2>/dev/null | stamp_ms -l; }
# log_ms ERE [FILE]: the time (ms) of the first line matching ERE, or
# "ERROR: not logged: ERE".
log_ms() {
	local t
	t=$(log_stamps "$1" "${2:-}" | head -1)
	[ -n "$t" ] && echo "$t" || { echo "ERROR: not logged: $1"; return 1; }
}
# log_gap_ms ERE1 ERE2 [FILE]: milliseconds from the first line matching
# ERE1 to the first line after it (or that line itself) matching ERE2, by
# the relay's stamps; "ERROR: ..." when either is missing.
log_gap_ms() {
	local f=${3:-$RELAY_LOG} n t0 t1
	n=$(grep -n -m1 -E -- "$1" "$f" 2>/dev/null | cut -d: -f1)
	[ -n "$n" ] || { echo "ERROR: not logged: $1"; return 1; }
	t0=$(sed -n "${n}p" "$f" | stamp_ms)
	t1=$(tail -n +"$n" "$f" | grep -m1 -E -- "$2" | stamp_ms)
	[ -n "$t0" ] && [ -n "$t1" ] || { echo "ERROR: not logged after [$1]: $2"; return 1; }
	echo $((t1 - t0))
}
# log_ms_after MS ERE [FILE]: the time (ms) of the first line matching ERE
# stamped at MS or later, or "ERROR: ...".
log_ms_after() {
	local t
	t=$(log_stamps "$2" "${3:-}" | awk -v t="$1" '$1 >= t + 0 { print; exit }')
	[ -n "$t" ] && echo "$t" || { echo "ERROR: not logged at $1 or later: $2"; return 1; }
}
# deadline_ms MS: how long the relay held a connection it closed at the
# request deadline, by its own stamps alone: from its debug line
# msg="request deadline started" to its msg="connection closed" ...
# reason="request deadline", paired by peer_port (the last start before
# the close), for the first such close on the main listener stamped at MS
# or later; "ERROR: ..." when either line is missing.
deadline_ms() {
	stamp_ms -l < "$RELAY_LOG" | awk -v t="$1" '
	function port() {
		return match($0, / peer_port=[0-9]+/) ? substr($0, RSTART + 11, RLENGTH - 11) : ""
	}
	/ msg="request deadline started" control=0 / { start[port()] = $1 }
	/ msg="connection closed" control=0 reason="request deadline" / && $1 >= t + 0 {
		found = 1
		p = port()
		if (p != "" && p in start) printf "%.0f\n", $1 - start[p]
		else print "ERROR: no deadline start logged for peer_port=" p
		exit
	}
	END { if (!found) print "ERROR: no close at the request deadline logged at " t " or later" }'
}
# nats_stamps ERE [LOG]: the time (ms) of every line of nats-server's log
# (the test's server by default) matching ERE: nats-server stamps its lines
# with its own clock, in local time to the microsecond.
nats_stamps() {
	local l
	grep -E -- "$1" "${2:-$T/$NATS_NAME/nats.log}" 2>/dev/null |
	    sed -n 's|^\[[0-9]*\] \([0-9/]* [0-9:.]*\) .*|\1|p' |
	    while read -r l; do date -d "$l" +%s%3N; done
}
# nats_gap_ms NATS_ERE RELAY_ERE [LOG]: milliseconds from the last line of
# nats-server's log matching NATS_ERE to the first line of the relay's log
# after it matching RELAY_ERE: how long the relay took to react to what
# nats-server did, by the two processes' own stamps.
nats_gap_ms() {
	local t0 t1
	t0=$(nats_stamps "$1" "${3:-}" | tail -1)
	[ -n "$t0" ] || { echo "ERROR: nats-server did not log: $1"; return 1; }
	t1=$(log_ms_after "$t0" "$2") || { echo "$t1"; return 1; }
	echo $((t1 - t0))
}
# run NAME ARGS...: the build's treaty ($TR) with ARGS, stdin from
# $T/NAME.in when it exists (else the caller's), stdout in $T/NAME.out,
# stderr in $T/NAME.err; sets RC, OUT and ERR.  NOTOK=1: without
# TREATY_TOKEN in the environment.  Bounded: after TMO seconds (default 20)
# treaty gets SIGTERM and RC is 124.
run() {
	local name=$1 unset=()
	shift
	if [ -e "$T/$name.in" ]; then exec 3< "$T/$name.in"; else exec 3<&0; fi
	[ -n "${NOTOK-}" ] && unset=(-u TREATY_TOKEN)
	timeout -k 2 "${TMO:-20}" env "${unset[@]}" "$TR" "$@" <&3 > "$T/$name.out" 2> "$T/$name.err"
	RC=$?
	exec 3<&-
	OUT=$(cat "$T/$name.out")
	ERR=$(cat "$T/$name.err")
}
# check_ms NAME MS LOW HIGH: a duration MS (ms, or a helper's "ERROR: ...")
# is at least LOW and below HIGH.
check_ms() {
	if [[ $2 =~ ^-?[0-9]+$ ]] && [ "$2" -ge "$3" ] && [ "$2" -lt "$4" ]; then ok "$1 ($2 ms)"
	else fail "$1" "[$2] ms, not in [$3, $4)"; fi
}

# start_relay [ARGS...]: the relay on a free port, configured through the
# environment (PRODUCERS, SUBSCRIBERS and any TREATY_RELAY_* the caller
# exported); waits for /healthz 200 unless NO_WAIT=1.
start_relay() {
	local try
	for try in 1 2 3; do
		RELAY_PORT=$(free_port)
		RELAY_URL=http://127.0.0.1:$RELAY_PORT
		RELAY_LOG=$T/relay.$RELAY_PORT.log
		# PRODUCERS=none: no TREATY_RELAY_PRODUCERS in the
		# environment at all (a configuration file's then counts).
		local penv=(TREATY_RELAY_PRODUCERS="${PRODUCERS:-$PRODUCERS_DEFAULT}")
		[ "${PRODUCERS-}" = none ] && penv=(-u TREATY_RELAY_PRODUCERS)
		env "${penv[@]}" NATS_URL="${NATS_URL_RELAY:-$NATS_URL_T}" \
		    PORT=$RELAY_PORT TREATY_RELAY_LISTEN=127.0.0.1 \
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
		if ! wait_until 15 healthz_ok; then
			echo "# relay did not become healthy" >&2
			tail -20 "$RELAY_LOG" >&2
			return 1
		fi
	fi
}

# post SUBJECT ID [BODY] [extra curl args...]: binary-mode POST with the
# default token.  Sets STATUS, BODY and MS (the request's time as curl
# measured it, from its connect to the answer's end: starting curl, which
# takes a while on a loaded machine, is not in it).
post() {
	local subject=$1 id=$2 data=${3-hello}
	shift 3 2>/dev/null || shift $#
	local out
	out=$(curl -s -m 20 -w '\n%{http_code} %{time_total}' -X POST "$RELAY_URL/v1/events/$subject" \
	    -H "Authorization: Bearer $TOKEN" \
	    -H 'ce-specversion: 1.0' -H "ce-id: $id" -H 'ce-source: /test' \
	    -H "ce-type: $(type_for "$subject")" -H 'Content-Type: text/plain' \
	    --data-binary "$data" "$@")
	STATUS=${out##*$'\n'}
	BODY=${out%$'\n'*}
	MS=$(awk -v t="${STATUS#* }" 'BEGIN { printf "%.0f", t * 1000 }')
	STATUS=${STATUS%% *}
}

# type_for SUBJECT: print the suite type matching a subject,
# dev.<3rd>.<4th>.<5th>.v1; a missing token reads "x" (safe under set -u for
# subjects of any length), and "*" or "?" tokens are not globbed.
type_for() {
	local p
	IFS=. read -r -a p <<< "$1"
	echo "dev.${p[2]-x}.${p[3]-x}.${p[4]-x}.v1"
}

# json_get KEY: the string or literal value of "KEY" in $BODY (flat JSON).
json_get() {
	printf '%s' "$BODY" | sed -n 's/.*"'"$1"'":\("\([^"]*\)"\|\([a-z0-9]*\)\).*/\2\3/p'
}

# timed_post SUBJECT ID [BODY] [extra curl args...]: post (BODY default
# "robust") with the response headers in $T/hdr.  Sets STATUS, BODY and MS
# (as post).  A bound on MS is the wall clock, however curl measures it:
# where the relay's log has stamps for both ends of what is timed, use
# those (log_gap_ms) instead.
timed_post() {
	local subject=$1 id=$2 data=${3-robust}
	shift 3 2>/dev/null || shift $#
	: > "$T/hdr"
	post "$subject" "$id" "$data" -D "$T/hdr" "$@"
}

# send METHOD PATH [curl args...]: one request to the relay.  Sets STATUS,
# BODY and RHDRS (the response header lines, CRs removed).
send() {
	local m=$1 path=$2
	shift 2
	STATUS=$(curl -s -m 20 -D "$T/rh" -o "$T/rb" -w '%{http_code}' \
	    -X "$m" "$RELAY_URL$path" "$@")
	BODY=$(cat "$T/rb")
	RHDRS=$(tr -d '\r' < "$T/rh")
}

# ev_path PATH [curl args...]: a binary-mode POST to PATH through send (sets
# STATUS, BODY, RHDRS).  Every default header can be changed through a
# variable, or left out with the value "-": TOK (bearer token), SPEC, ID,
# SRC, TYP (default: type_for the subject after /v1/events/), CT; DATA is the
# body, or DATAFILE names a file holding it.
ev_path() {
	local path=$1 h=()
	shift
	local tok=${TOK-$TOKEN} spec=${SPEC-1.0} id=${ID-id-$RANDOM$RANDOM}
	local src=${SRC-/test} typ=${TYP-$(type_for "${path#/v1/events/}")}
	local ct=${CT-text/plain}
	[ "$tok" = - ] || h+=(-H "Authorization: Bearer $tok")
	[ "$spec" = - ] || h+=(-H "ce-specversion: $spec")
	[ "$id" = - ] || h+=(-H "ce-id: $id")
	[ "$src" = - ] || h+=(-H "ce-source: $src")
	[ "$typ" = - ] || h+=(-H "ce-type: $typ")
	# "Content-Type:" stops curl from adding its own.
	if [ "$ct" = - ]; then h+=(-H "Content-Type:"); else h+=(-H "Content-Type: $ct"); fi
	if [ -n "${DATAFILE-}" ]; then h+=(--data-binary "@$DATAFILE")
	else h+=(--data-binary "${DATA-hello}"); fi
	send POST "$path" "${h[@]}" "$@"
}

# ev SUBJECT [curl args...]: ev_path /v1/events/SUBJECT (same variables).
ev() {
	local subject=$1
	shift
	ev_path "/v1/events/$subject" "$@"
}

# hdr NAME: print the value of response header NAME (any case, first one)
# from RHDRS.
hdr() {
	printf '%s\n' "$RHDRS" | sed -n "s/^$1:[[:space:]]*//Ip" | head -1
}

# count STREAM: print the number of messages in STREAM, or "ERROR: ..."
# when jsget cannot tell.
count() {
	local n
	n=$("$JSGET" "$NATS_URL_T" count "$1" 2>&1)
	if [[ $n =~ ^[0-9]+$ ]]; then echo "$n"; else echo "ERROR: jsget count $1: $n"; return 1; fi
}
# consumer_state CONSUMER: JetStream's view of a consumer on WORK,
# "ack_pending=N pending=N redelivered=N", or "ERROR: ...".
consumer_state() { python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" consumer WORK "$1"; }
# quiet CONSUMER...: wait (bounded, 15 s) until settled CONSUMER...; print
# "settled", or "ERROR: " and each consumer's state.
quiet() {
	local c
	if wait_until 15 "settled $*"; then echo settled; return; fi
	for c in "$@"; do printf 'ERROR: %s %s; ' "$c" "$(consumer_state "$c")"; done
	echo
	return 1
}
# settled CONSUMER...: true when each consumer has nothing left to hand out
# and no delivery or lease waiting for its acknowledgement: JetStream will
# deliver nothing more from it (the witness for "it does not come back").
settled() {
	local c
	for c in "$@"; do
		[[ $(consumer_state "$c") == "ack_pending=0 pending=0 "* ]] || return 1
	done
}
# counts: print "WORK AUDIT" message counts.
counts() { echo "$(count WORK) $(count AUDIT)"; }

# last STREAM SUBJECT: fetch the last message into $T/msg.  Sets HDRS (the
# header lines sorted, then the subject line) and writes the payload to
# $T/payload; 1 (HDRS says why) when jsget fails, and then there is no
# $T/payload (an empty one read as "an empty payload stored").
last() {
	local n
	rm -f "$T/payload"
	HDRS=
	"$JSGET" "$NATS_URL_T" last "$1" "$2" > "$T/msg" 2> "$T/msg.err" || {
		HDRS="ERROR: jsget failed: $(cat "$T/msg.err")"
		return 1
	}
	n=$(sed '/^$/q' "$T/msg" | wc -c)
	HDRS=$(sed '/^$/q' "$T/msg" | sed '/^$/d' | LC_ALL=C sort)
	tail -c +$((n + 1)) "$T/msg" > "$T/payload"
}

# shdr NAME: print the value of stored header NAME (exact case) from HDRS.
shdr() {
	printf '%s\n' "$HDRS" | sed -n "s/^$1: //p"
}

# errcode: print the error code of $BODY when it is exactly
# {"error":"..","detail":".."}, else "body [$BODY]".
errcode() {
	local re='^\{"error":"([a-z_]+)","detail":"([^"\\]|\\.)+"\}$'
	if [[ $BODY =~ $re ]]; then
		echo "${BASH_REMATCH[1]}"
	else
		echo "body [$BODY]"
	fi
}

# reject NAME STATUS CODE: check the last answer (STATUS, errcode) and that
# the stream counts still equal $BASE (set BASE=$(counts) first).
reject() {
	check "$1" "$2 $3 stored=$BASE" "$STATUS $(errcode) stored=$(counts)"
}

# make_pki DIR [NAME]: a throwaway CA (DIR/ca.pem, ca.key), a second
# unrelated CA (DIR/other-ca.pem) and a server certificate for NAME
# (default "localhost") signed by the first (DIR/server.pem, server.key),
# with the openssl command line.
make_pki() {
	local d=$1 name=${2:-localhost}
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=treaty-test-ca \
	    -keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca \
	    -keyout "$d/other-ca.key" -out "$d/other-ca.pem" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj /CN=$name \
	    -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
	printf 'subjectAltName=DNS:%s\n' "$name" > "$d/ext"
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
	    -CAcreateserial -days 2 -extfile "$d/ext" -out "$d/server.pem" 2>/dev/null
	[ -s "$d/server.pem" ]
}

# --- the operations API and replays (SPEC 15) ---------------------------
# admin_setup: S (a subscriber secret) and AT (an admin token, its SHA-256
# exported as TREATY_RELAY_ADMIN_TOKEN_SHA256 for the relays started next).
admin_setup() {
	S=test-secret-0123456789
	AT=admin-token-0123456789
	export TREATY_RELAY_ADMIN_TOKEN_SHA256=$(sha256hex "$AT")
}
# gate_setup: test/live/gate-receiver.py (answers set per path by the
# test; SPEC 17's tests) on RPORT recording to $T/got, its base URL in H;
# the test ends, failed, when it does not start.
gate_setup() {
	RPORT=$(free_port)
	python3 "$ROOT/test/live/gate-receiver.py" $RPORT "$T/got" &
	PIDS+=($!)
	wait_until 10 "port_open $RPORT" || { fail receiver "did not start"; finish; }
	H="http://127.0.0.1:$RPORT"
}
# ordered_setup FAIL_PCT STALL_PCT: test/live/ordered.py's receiver (SPEC
# 18's tests: FAIL_PCT % answered 500, STALL_PCT % held first) on RPORT
# recording to $T/got, its base URL in H; the test ends, failed, when it
# does not start.
ordered_setup() {
	RPORT=$(free_port)
	python3 "$ROOT/test/live/ordered.py" receive $RPORT "$T/got" "$1" "$2" &
	PIDS+=($!)
	wait_until 10 "port_open $RPORT" || { fail receiver "did not start"; finish; }
	H="http://127.0.0.1:$RPORT"
}
# Two relays sharing an ordered subscriber (SPEC 18's tests): slot i's
# pid, log and URL in RP[i], RL[i], RU[i].
declare -a RP RL RU
# relay_in SLOT: a relay (start_relay) in SLOT; the test ends, failed, when
# it does not start.
relay_in() {
	start_relay || { fail relay "slot $1 did not start"; finish; }
	RP[$1]=$RELAY_PID RL[$1]=$RELAY_LOG RU[$1]=$RELAY_URL
}
# holder_found SUB MS: 0 when the relay of slot 0 or 1 logged that SUB's
# ordered delivery starts, stamped at MS or later (its slot into
# $T/holder); 1 when neither did.
holder_found() {
	local i
	for i in 0 1; do
		if log_ms_after "$2" "msg=\"ordered delivery starts\" sub=$1 " "${RL[$i]}" > /dev/null; then
			echo "$i" > "$T/holder"
			return 0
		fi
	done
	return 1
}
# replay_setup: admin_setup, and receiver.py on RPORT recording to
# $T/deliveries (the test ends, failed, when it does not start).
replay_setup() {
	admin_setup
	RPORT=$(free_port)
	start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
}
# areq METHOD PATH [BASE]: a request to the admin API at BASE (RELAY_URL)
# with AT; the body in $T/abody, the headers in $T/ahdr; prints the status.
areq() {
	rm -f "$T/abody"
	curl -s -m 20 -o "$T/abody" -D "$T/ahdr" -w '%{http_code}' -X "$1" \
	    -H "Authorization: Bearer $AT" "${3:-$RELAY_URL}/v1/admin/$2"
}
# tr_run NAME [ENV=VALUE...] -- ARGS...: treaty ARGS ($TR, bounded, 20 s),
# stdout in $T/NAME.out, stderr in $T/NAME.err; prints the exit status.
tr_run() {
	local name=$1 envs=()
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	timeout -k 2 20 env -u TREATY_TOKEN -u TREATY_URL "${envs[@]}" "${TR:-$ROOT/$O/treaty}" "$@" \
	    > "$T/$name.out" 2> "$T/$name.err"
	echo $?
}
# abody: the body of the last admin answer.
abody() { cat "$T/abody" 2>/dev/null; }
# afield KEY: a member of the last admin answer ("None" for null).
afield() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$T/abody" "$1" 2>/dev/null; }
# report ID [BASE]: "state matched delivered dropped remaining" of a
# replay, or "status N" when it could not be read.
report() {
	local st
	st=$(areq GET "replays/$1" "${2:-}")
	[ "$st" = 200 ] || { echo "status $st"; return; }
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(*(d[k] for k in ("state","matched","delivered","dropped","remaining")))' "$T/abody"
}
