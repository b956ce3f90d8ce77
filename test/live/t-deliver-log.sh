#!/usr/bin/env bash
# Failed delivery attempts in the log (issue 30): each is one warn line,
# at most 10 a second per subscriber, like refused requests; the lines
# left out are counted in one line a second naming the subscriber, and
# the metrics count every attempt.  300 events failing at once wrote 610
# lines before.  A second subscriber failing beside the flood keeps its
# own lines.
. "$(dirname "$0")/lib.sh"
RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
S=test-secret-0123456789
# maxInFlight 400: JetStream counts a failed event waiting out its delay
# against it, and all 300 must be tried once.  A retry 150-300 s away:
# each event fails once within the test, never twice.  No breaker on
# flood: it would hold the events after 20 failures (t-breaker's).
export TREATY_RELAY_SUBSCRIBERS='[{"name":"flood","url":"http://127.0.0.1:'$RPORT'/flood","secret":"'$S'","filter":"evt.*.shop.flood.>","maxDeliver":2,"maxInFlight":400,"breaker":{"failures":0}},
 {"name":"calm","url":"http://127.0.0.1:'$RPORT'/calm","secret":"'$S'","filter":"evt.*.shop.calm.>","maxDeliver":2}]'
export TREATY_RELAY_RETRY_BASE_MS=300000
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

N=300
python3 "$(dirname "$0")/publish.py" "$RELAY_URL" "$TOKEN" evt.acme.shop.flood.failed always500-f $N 8 > "$T/pub.out" &
PUB=$!
# calm's five fail while the flood's do (the receiver answers 500 to both).
for i in 1 2 3 4 5; do
	post evt.acme.shop.calm.failed always500-c$i x
	[ "$STATUS" = 202 ] || fail "calm event $i" "HTTP $STATUS"
done
wait $PUB
check "the flood: $N events stored" "$N " "$(cat "$T/pub.out")"

retries() { metric "treaty_relay_deliveries_total{subscriber=\"$1\",outcome=\"retry\"}"; }
wait_until 60 '[ "$(retries flood)" = $N ] && [ "$(retries calm)" = 5 ]'
check "every failed attempt counted in the metrics" "$N 5" "$(retries flood) $(retries calm)"

lines() { grep -c "msg=\"delivery failed\" sub=$1 " "$RELAY_LOG"; }
held() { grep -o "msg=\"delivery failures not logged\" sub=$1 count=[0-9]*" "$RELAY_LOG" |
    grep -o '[0-9]*$' | awk '{ s += $1 } END { print s + 0 }'; }
# The count of a second comes once it is over (the loop's tick).
wait_until 10 '[ $(( $(lines flood) + $(held flood) )) -ge $N ]'
n=$(lines flood) h=$(held flood)
check "each of the $N failures is a line or counted in one" $N $((n + h))
# The relay's seconds follow one another, each at least 1 s: failures
# spread over D ms meet at most D/1000 + 2 of them, so at most 10 lines
# for each.  D runs from the first failure's line to the last line about
# the flood (a counted failure comes before its count's line), by the
# relay's own stamps: load only lengthens it, loosening the bound, never
# failing a relay that keeps the limit; one writing all 300 lines fails
# unless the flood lasts 28 s.
st=$(log_stamps "msg=\"delivery (failed|failures not logged)\" sub=flood " | sort -n)
D=$(( $(echo "$st" | tail -1) - $(echo "$st" | head -1) ))
most=$(( 10 * (D / 1000 + 2) ))
check "at most 10 lines a second for one subscriber" yes \
    "$([ "$n" -le "$most" ] && [ "$n" -ge 10 ] && echo yes || echo "no: $n lines in $D ms (10 to $most)")"
check_match "  the rest counted in one warn line a second naming it" \
    '^time=[^ ]+ level=warn msg="delivery failures not logged" sub=flood count=[1-9][0-9]* window_ms=1000 limit=10$' \
    "$(grep 'msg="delivery failures not logged"' "$RELAY_LOG" | head -1)"
check_match "  a line written keeps its fields" \
    'msg="delivery failed" sub=flood id=always500-f[0-9]+ subject=evt.acme.shop.flood.failed attempt=1 status=500 error=- next_ms=[0-9]+' \
    "$(grep 'msg="delivery failed" sub=flood ' "$RELAY_LOG" | head -1)"
check "calm's five failures beside the flood: five lines, its own limit" "5 0" "$(lines calm) $(held calm)"
check "the relay is still running" yes "$(relay_alive && echo yes)"
check_no_sanitizer_report "no sanitizer report" "$RELAY_LOG"
finish
