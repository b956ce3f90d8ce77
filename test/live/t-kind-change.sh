#!/usr/bin/env bash
# A subscriber changed between push and pull across a restart (a reload
# refuses it): JetStream's consumer relay-<name> is of the other kind and
# cannot be updated (SPEC 10: push and pull consumers cannot share a
# durable name), and is not deleted (its events would all come again).
# The relay says what to do in the consumer check's line, and the inbox
# answers 503, not an empty 200 that looks like "no work".  Renamed, the
# subscriber works.
. "$(dirname "$0")/lib.sh"
S=first-secret-0123456789
PT=pull-token-0123456789
start_nats || { fail start "nats-server did not start"; finish; }
export TREATY_RELAY_SUBSCRIBERS='[{"name":"x","url":"http://127.0.0.1:9/h","secret":"'$S'","filter":"evt.*.shop.kind.>"}]'
start_relay || { fail start "the relay did not start"; finish; }
wait_until 10 'grep -q "created relay-x" "$RELAY_LOG"' || fail "push consumer" "relay-x not created"
kill -TERM $RELAY_PID; wait $RELAY_PID

export TREATY_RELAY_SUBSCRIBERS='[{"name":"x","secret":"'$S'","tokenSha256":"'$(sha256hex $PT)'","filter":"evt.*.shop.kind.>"}]'
start_relay || { fail start "the relay did not restart"; finish; }
post evt.acme.shop.kind.created kind-1 x
check "an event for the subscriber is stored" 202 "$STATUS"
in_log 'msg="consumers not ready".*relay-x is a push consumer in JetStream and the subscriber is pull: give the subscriber a new name, or delete relay-x' > "$T/said"
check "the log says relay-x is a push consumer and what to do" logged "$(cat "$T/said")"
check "the inbox: 503 inbox_unavailable, not an empty 200" "503 inbox_unavailable" \
    "$(curl -s -m 10 -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $PT" "$RELAY_URL/v1/inbox/x?lease=true&wait=1000") $(sed -n 's/.*"error":"\([a-z_]*\)".*/\1/p' "$T/body")"
kill -TERM $RELAY_PID; wait $RELAY_PID

# Under a new name: a pull consumer of its own, the event there.
export TREATY_RELAY_SUBSCRIBERS='[{"name":"x2","secret":"'$S'","tokenSha256":"'$(sha256hex $PT)'","filter":"evt.*.shop.kind.>"}]'
start_relay || { fail start "the relay did not restart"; finish; }
check_match "renamed: the event is in its inbox" '"id":"kind-1"' \
    "$(curl -s -m 10 -H "Authorization: Bearer $PT" "$RELAY_URL/v1/inbox/x2?lease=true&wait=5000")"

# The other way: relay-x2 is a pull consumer now, and x2 a push subscriber.
kill -TERM $RELAY_PID; wait $RELAY_PID
export TREATY_RELAY_SUBSCRIBERS='[{"name":"x2","url":"http://127.0.0.1:9/h","secret":"'$S'","filter":"evt.*.shop.kind.>"}]'
start_relay || { fail start "the relay did not restart"; finish; }
check "a push subscriber whose consumer is a pull one: said in the log" logged \
    "$(in_log 'relay-x2 is a pull consumer in JetStream and the subscriber is push')"
check_no_sanitizer_report "no sanitizer report" "$RELAY_LOG"
finish
