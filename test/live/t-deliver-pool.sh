#!/usr/bin/env bash
# Push delivery over kept (keep-alive) connections, against a subscriber
# that misbehaves at the HTTP level (rawsink.py):
#  - bytes behind an answer (a second answer; an Early Hints 103 libevent
#    takes for the whole answer) are never read as the next event's
#    answer: such a connection is not kept, and the next event, refused
#    with 500, is retried and dropped, not acknowledged;
#  - a kept connection the subscriber closes as the next request crosses
#    it costs no attempt: the request goes again on a new connection.
. "$(dirname "$0")/lib.sh"
SPORT=$(free_port)
python3 "$ROOT/test/live/rawsink.py" $SPORT "$T/requests" & PIDS+=($!)
wait_until 10 "port_open $SPORT" || { fail sink "did not listen"; finish; }
S=test-secret-0123456789
# One at a time, so that each event takes the connection the one before
# it left; maxDeliver 2 for "desync", 1 for "stale".
export TREATY_RELAY_SUBSCRIBERS='[
 {"name":"desync","url":"http://127.0.0.1:'$SPORT'/d","secret":"'$S'","filter":"evt.*.shop.desync.>","maxDeliver":2,"maxInFlight":1},
 {"name":"stale","url":"http://127.0.0.1:'$SPORT'/s","secret":"'$S'","filter":"evt.*.shop.stale.>","maxDeliver":1,"maxInFlight":1}]'
export TREATY_RELAY_RETRY_BASE_MS=100 TREATY_RELAY_RETRY_MAX_MS=200
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }
asked() { grep -c " $1\$" "$T/requests" 2>/dev/null; }
ended() {	# ID: how the relay ended it, "delivered N" or "dropped N"
	sed -n "s/.*msg=delivered sub=[a-z]* id=$1 .*attempt=\([0-9]*\).*/delivered \1/p;
	    s/.*msg=\"delivery dropped\" sub=[a-z]* id=$1 .*attempt=\([0-9]*\).*/dropped \1/p" "$RELAY_LOG" | head -1
}

# A second answer behind the first, then an event the subscriber refuses.
post evt.acme.shop.desync.created two-1 x
wait_until 10 '[ -n "$(ended two-1)" ]'
check "two answers in one write: the event delivered" "delivered 1" "$(ended two-1)"
post evt.acme.shop.desync.created f500-1 x
wait_until 15 '[ -n "$(ended f500-1)" ]'
check "  the next event, answered 500 twice, dropped (not taken for delivered)" "dropped 2 2" \
    "$(ended f500-1) $(asked f500-1)"

# An Early Hints 103 with its 200 behind it, then an event refused.
post evt.acme.shop.desync.created e103-1 x
wait_until 15 '[ -n "$(ended e103-1)" ]'
post evt.acme.shop.desync.created f500-2 x
wait_until 15 '[ -n "$(ended f500-2)" ]'
check "after a 103: the next event, answered 500 twice, dropped" "dropped 2 2" \
    "$(ended f500-2) $(asked f500-2)"
# libevent 2.1 takes the 103 for the whole answer: the attempt fails (the
# man page says so), and with maxDeliver 2 e103-1 is dropped too.
check "  the 103: two failed attempts, then a drop" "dropped 2" "$(ended e103-1)"
check "  every drop recorded in AUDIT, the three of them" "3 e103-1 f500-1 f500-2" \
    "$("$JSGET" "$NATS_URL_T" count AUDIT 2>&1) $(for q in 1 2 3; do "$JSGET" "$NATS_URL_T" msg AUDIT $q 2>&1 |
    grep -o '"eventId":"[^"]*"' | cut -d'"' -f4; done | sort | tr '\n' ' ' | sed 's/ $//')"

# A kept connection closed under the next request: sent again on a new
# connection, the one attempt (maxDeliver 1) not spent.
post evt.acme.shop.stale.created poison-1 x
wait_until 10 '[ -n "$(ended poison-1)" ]'
post evt.acme.shop.stale.created ok-1 x
wait_until 10 '[ -n "$(ended ok-1)" ]'
check "a kept connection closed under a request: delivered on a new one, attempt 1" \
    "delivered 1 2" "$(ended ok-1) $(asked ok-1)"
check "  on another connection than the one that closed" yes \
    "$([ "$(grep -c ' ok-1$' "$T/requests")" = 2 ] && [ "$(grep ' ok-1$' "$T/requests" | cut -d' ' -f1 | sort -u | wc -l)" = 2 ] && echo yes || echo no)"
check_no_sanitizer_report "no sanitizer report" "$RELAY_LOG"
finish
