#!/usr/bin/env bash
# Several instances on one host (SPEC 12): without --reuseport a second
# instance on the same port exits 1 naming the address; with it, two share
# the port, each answers on its own --control-listen port, a starting one
# takes its share only once ready (its control listener answers from the
# start), and a rolling restart of both under a steady publisher making a
# new connection per request (8 clients at once, so that connections wait
# in the kernel's queues at any moment) loses nothing: no reset, no
# refusal, no 503.
#
# It runs in a network namespace of its own (loopback only), where
# net.ipv4.tcp_migrate_req=1 can be set as the man page asks of a host,
# without touching the machine's own setting.
if [ -z "${TREATY_NETNS:-}" ] && command -v ip >/dev/null &&
    unshare -n true 2>/dev/null; then
	exec unshare -n env TREATY_NETNS=1 bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
if [ -n "${TREATY_NETNS:-}" ]; then
	ip link set lo up
	echo 1 > /proc/sys/net/ipv4/tcp_migrate_req
fi
start_nats || { fail start "nats-server did not start"; finish; }

PORT_SHARED=$(free_port)
URL=http://127.0.0.1:$PORT_SHARED

# inst NAME [ARGS...]: start an instance on the shared port, in the
# background; INST_PID and $T/NAME.log.  NATS_URL_INST overrides NATS.
inst() {
	local name=$1
	shift
	NATS_URL=${NATS_URL_INST:-$NATS_URL_T} PORT=$PORT_SHARED TREATY_RELAY_LISTEN=127.0.0.1 \
	    TREATY_RELAY_PRODUCERS=$PRODUCERS_DEFAULT TREATY_RELAY_GRACE_SECONDS=5 \
	    "$RELAY_BIN" "$@" > "$T/relay.$name.log" 2>&1 &
	INST_PID=$!
	PIDS+=($INST_PID)
}
ctl_health() { curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/healthz"; }
ctl_events() {
	curl -s -m 5 "http://127.0.0.1:$1/metrics" | awk '$1 ~ /^treaty_relay_http_requests_total\{route="events"/ { n += $2 } END { print n + 0 }'
}
# burst N PREFIX: N POSTs, each on a new connection; prints "202s others".
burst() {
	local i ok=0 other=0 st
	for i in $(seq 1 "$1"); do
		st=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -X POST "$URL/v1/events/evt.acme.shop.order.created" \
		    -H "Authorization: Bearer $TOKEN" -H 'ce-specversion: 1.0' -H "ce-id: $2$i" \
		    -H 'ce-source: /test' -H 'ce-type: dev.shop.order.created.v1' \
		    -H 'Content-Type: text/plain' --data-binary x)
		if [ "$st" = 202 ]; then ok=$((ok + 1)); else other=$((other + 1)); fi
	done
	echo "$ok $other"
}

# 1. Without --reuseport the port is one instance's.
inst a
A=$INST_PID
wait_until 15 "port_open $PORT_SHARED" || fail a "did not listen"
inst b
B=$INST_PID
wait $B
check "a second instance without --reuseport: exit 1" 1 "$?"
check_match "  naming the address" "level=error msg=\"cannot listen\" addr=127.0.0.1 port=$PORT_SHARED" \
    "$(cat "$T/relay.b.log")"
kill -TERM $A; wait $A
# The same while the reuseport instance is not ready (its share bound,
# not yet listening): the plain one must not take the port from it.
CA=$(free_port)
NATS_URL_INST=nats://127.0.0.1:$(free_port) inst a --reuseport --control-listen 127.0.0.1:$CA
A=$INST_PID
wait_until 15 '[ "$(ctl_health $CA)" = 503 ]' || fail a "its control listener did not answer"
inst b
B=$INST_PID
# Bounded: a b that took the port would run on.
wait_until 15 '! kill -0 $B 2>/dev/null' || kill -TERM $B
wait $B
check "a plain instance beside a reuseport one that is not ready: exit 1" 1 "$?"
check_match "  naming the address" "level=error msg=\"cannot listen\" addr=127.0.0.1 port=$PORT_SHARED" \
    "$(cat "$T/relay.b.log")"
check "  and the reuseport one is still running" yes "$(kill -0 $A 2>/dev/null && echo yes)"
kill -TERM $A; wait $A

# 2. Two with --reuseport, each with its control port.
CA=$(free_port)
CB=$(free_port)
inst a --reuseport --control-listen 127.0.0.1:$CA
A=$INST_PID
inst b --reuseport --control-listen 127.0.0.1:$CB
B=$INST_PID
wait_until 20 'test "$(ctl_health $CA) $(ctl_health $CB)" = "200 200"'
check "both instances ready, each on its own control port" "200 200" "$(ctl_health $CA) $(ctl_health $CB)"
check "the control port serves /metrics" 200 \
    "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$CA/metrics")"
check "  and nothing else (404)" 404 \
    "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$CA/v1/events/evt.acme.shop.order.created")"
check "the shared port serves /healthz too" 200 "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$URL/healthz")"
check "60 POSTs on new connections to the shared port: all 202" "60 0" "$(burst 60 spread-)"
ea=$(ctl_events $CA)
eb=$(ctl_events $CB)
check_match "the kernel spread them over both instances" '^[1-9][0-9]* [1-9][0-9]* 60$' "$ea $eb $((ea + eb))"

# 3. A starting instance takes its share only once ready: one whose NATS
#    is not there answers on its control port (503) but gets none of the
#    shared port's connections.
CC=$(free_port)
NATS_URL_INST=nats://127.0.0.1:$(free_port) inst c --reuseport --control-listen 127.0.0.1:$CC
C=$INST_PID
wait_until 15 'test "$(ctl_health $CC)" = 503'
check "a starting instance's control port answers at once: 503" 503 "$(ctl_health $CC)"
check "  while the shared port's 40 POSTs all go to the ready ones" "40 0 0" \
    "$(burst 40 notyet-) $(ctl_events $CC)"
check_match "  it logs that it bound the port and waits" 'msg="port bound; listening once ready"' "$(cat "$T/relay.c.log")"
kill -TERM $C; wait $C

# 4. Rolling restart under a steady publisher, a new connection each time.
if [ "$(cat /proc/sys/net/ipv4/tcp_migrate_req 2>/dev/null)" != 1 ]; then
	echo "# skip - $SUITE: rolling restart: net.ipv4.tcp_migrate_req is not 1 and no namespace of our own"
else
	echo "$TOKEN" > "$T/tok"
	python3 "$(dirname "$0")/steady.py" "$URL" "$T/tok" evt.acme.shop.order.created \
	    roll- "$T/stop" "$T/steady.out" new 0 8 &
	STEADY=$!
	PIDS+=($STEADY)
	progress() { cat "$T/steady.out.progress" 2>/dev/null || echo 0; }
	more() { local f; f=$(progress); wait_until 30 "test \$(progress) -ge $((f + $1))"; }
	more 50
	# restart NAME PIDVAR CPORT: stop it (its peer serves), start it again.
	restart() {
		kill -TERM "${!2}"
		wait "${!2}"
		more 50
		inst "$1" --reuseport --control-listen 127.0.0.1:$3
		eval "$2=\$INST_PID"
		wait_until 20 "test \"\$(ctl_health $3)\" = 200"
		more 50
	}
	restart a A $CA
	restart b B $CB
	restart a A $CA
	touch "$T/stop"
	wait $STEADY
	check_match "rolling restart of both, twice over: every request 202" '^sent=([0-9]+) ok=\1 conns=\1 other=$' \
	    "$(cat "$T/steady.out")"
	check_match "  the restarted ones serve again" '^[1-9]' "$(ctl_events $CA)"
	check "no error lines in any instance" "" \
	    "$(grep -h 'level=error' "$T"/relay.a.log "$T"/relay.b.log)"
fi
kill -TERM $A $B; wait $A $B
check_match "the warning about net.ipv4.tcp_migrate_req is given when it is 0" \
    '^(1|0 skipped)$' \
    "$(if [ "$(cat /proc/sys/net/ipv4/tcp_migrate_req)" = 0 ]; then grep -c tcp_migrate_req "$T/relay.a.log"; else echo 0 skipped; fi)"
finish
