#!/usr/bin/env bash
# The loop keeps answering while NATS is unreachable in the slow way (a
# port that accepts and never speaks): nats.c's reconnect thread holds the
# connection's lock through each attempt (2 s), so a verb sent to
# JetStream from the loop then (a delivery that ends, its progress) would
# wait that long, and every request with it (deliveries reporting
# progress every second make such verbs all through the outage).  The
# relay holds them until NATS is back, and sends them then: the deliveries
# that ended during the outage are not made again.  And a silent server
# at start: the relay exits 1 for a restart.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
export TREATY_RELAY_SUBSCRIBERS='[{"name":"hook","url":"http://127.0.0.1:'$RPORT'/h","secret":"first-secret-0123456789","filter":"evt.*.shop.>"}]'
# Progress every second: verbs all through the outage.
export TREATY_RELAY_ACK_WAIT_SECONDS=60 TREATY_RELAY_PROGRESS_SECONDS=1
start_relay || { fail start "the relay did not start"; finish; }

# Eight deliveries that take 15 s each, under way when NATS goes and for
# seconds after (their progress makes verbs all that time): 15 s leaves
# room for the posts, NATS's stop and the relay noticing on a slow machine.
for k in 1 2 3 4 5 6 7 8; do
	post evt.acme.shop.order.created delay15-$k x
	[ "$STATUS" = 202 ] || fail post "delay15-$k: $STATUS"
done
wait_until 10 '[ "$(grep -c "\"ce-id\": \"delay15-" "$T/deliveries")" = 8 ]'
stop_nats
# mute PORT: a listener on PORT that accepts and never sends INFO.
mute() {
	python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(50)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' "$1" &
	MUTE=$!
	PIDS+=($MUTE)
	wait_until 10 "port_open $1"
}
mute "$NATS_PORT"
wait_until 10 '[ "$(metric treaty_relay_nats_connected)" = 0 ]'
# Probe /healthz until the eight deliveries have ended and 4 s more (60 s
# at most), each probe timed by curl itself (time_total, in $T/probes):
# starting a curl process on a loaded machine is not the relay's answer.
: > "$T/probes"
t_end=0 t_stop=$(($(now_ms) + 60000))
while [ "$(now_ms)" -lt $t_stop ]; do
	curl -s -o /dev/null -m 10 -w '%{time_total}\n' "$RELAY_URL/healthz" >> "$T/probes"
	if [ $t_end = 0 ] && [ "$(grep -c 'delivery closed.*reason=delivered' "$RELAY_LOG")" -ge 8 ]; then
		t_end=$(now_ms)
	fi
	[ $t_end != 0 ] && [ $(($(now_ms) - t_end)) -gt 4000 ] && break
	sleep 0.1
done
check "eight deliveries ended while NATS was unreachable" yes "$([ $t_end != 0 ] && echo yes || echo no)"
# A request waiting on the reconnect thread's lock takes up to 2 s, and the
# deliveries' progress verbs make such a wait in every reconnect attempt
# (2.5 s): 5 or 6 probes of 1.4-2 s in 13 s.  A loaded machine may stall
# the relay once or twice for a second; not five times.
slow=$(awk '$1 >= 1.0' "$T/probes" | wc -l)
echo "# /healthz probes (ms, slowest first): $(sort -rn "$T/probes" | head -8 |
    awk '{ printf "%d ", $1 * 1000 }')of $(wc -l < "$T/probes")"
check "  /healthz answered at once throughout (1 s or more: 2 probes at most)" yes \
    "$([ -s "$T/probes" ] && [ "$slow" -le 2 ] && echo yes || echo "no: $slow slow")"
kill "$MUTE"; wait "$MUTE" 2>/dev/null
restart_nats || fail nats "did not restart"
wait_until 30 'healthz_ok'
in_log 'answers held while NATS was away sent' > /dev/null
check_match "  their acknowledgements, held, sent once NATS is back" 'answers=([8-9]|[1-9][0-9]+)' \
    "$(grep 'answers held while NATS was away sent' "$RELAY_LOG" | tail -1)"
post evt.acme.shop.order.created ok-after x
wait_until 10 'grep -q "\"ce-id\": \"ok-after\"" "$T/deliveries"'
check "  and none of the eight was delivered again" 8 "$(grep -c '"ce-id": "delay15-' "$T/deliveries")"
check_no_sanitizer_report "no sanitizer report" "$RELAY_LOG"
kill -TERM $RELAY_PID; wait $RELAY_PID

# At start, the first server is the silent one: nats.c 3.4.1 closes the
# connection for good (its reconnect thread starts without a current
# server), so this process can never connect.  The relay says so and
# exits 1, for the service manager to start a new one (Restart=on-failure).
stop_nats
mute "$NATS_PORT"
NO_WAIT=1 start_relay
wait_until 20 '! relay_alive'
wait $RELAY_PID; rc=$?
check "a silent server at start: the relay stops, exit 1, saying why" \
    "1 logged" "$rc $(in_log 'msg="nats connection closed for good; stopping for a restart"')"
check_no_sanitizer_report "  no sanitizer report" "$RELAY_LOG"
kill "$MUTE"; wait "$MUTE" 2>/dev/null
restart_nats || fail nats "did not restart"
start_relay
check "  the next process connects" 200 "$(healthz_status)"
finish
