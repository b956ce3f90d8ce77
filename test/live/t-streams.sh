#!/usr/bin/env bash
# WORK and AUDIT are created at start, and updated when the configured
# settings differ (SPEC 6), without losing what they hold.  Settings the
# server cannot take leave the relay unready (503), never half-working.
. "$(dirname "$0")/lib.sh"
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

info() { "$JSGET" "$NATS_URL_T" info "$1" | sed -n "s/^$2=//p"; }
check "WORK created with 168 h" 604800 "$(info WORK max_age_s)"
post evt.acme.shop.order.created keep-1 kept
check "an event stored before the change" 202 "$STATUS"
kill -TERM $RELAY_PID; wait $RELAY_PID

export TREATY_RELAY_WORK_MAX_AGE_HOURS=24 TREATY_RELAY_AUDIT_MAX_AGE_DAYS=30 \
    TREATY_RELAY_DUPLICATE_WINDOW_MINUTES=5
start_relay || { fail restart "relay did not start with new settings"; finish; }
check "WORK max age updated to 24 h" 86400 "$(info WORK max_age_s)"
check "WORK duplicate window updated to 5 min" 300 "$(info WORK duplicates_s)"
check "AUDIT max age updated to 30 days" 2592000 "$(info AUDIT max_age_s)"
check "AUDIT duplicate window updated to 5 min" 300 "$(info AUDIT duplicates_s)"
check "WORK still holds the earlier event" 1 "$(count WORK)"
check_match "the update is logged" 'msg=streams detail="updated WORK; updated AUDIT"' "$(cat "$RELAY_LOG")"
post evt.acme.shop.order.created keep-1 kept
check "the earlier id is still a duplicate after the update" '{"id":"keep-1","duplicate":true}' "$BODY"
kill -TERM $RELAY_PID; wait $RELAY_PID

# Unchanged settings: nothing is updated.
start_relay || { fail restart2 "relay did not start"; finish; }
if grep -q 'updated' "$RELAY_LOG"; then fail "no update when nothing differs" "$(grep updated "$RELAY_LOG")"; else ok "no update when nothing differs"; fi
kill -TERM $RELAY_PID; wait $RELAY_PID

# A WORK stream with memory storage cannot be changed in place (JetStream
# refuses to change the storage type): the relay must stay unready and say
# why, not publish into a stream it did not configure.
stop_nats
rm -rf "$T/$NATS_NAME/js"
restart_nats
"$JSGET" "$NATS_URL_T" mkmem WORK 'evt.>' > /dev/null
NO_WAIT=1 start_relay
log_wait 10 'msg="streams not ready"'
check_match "memory storage is refused and logged" 'level=warn msg="streams not ready" detail="stream WORK has memory storage' "$(cat "$RELAY_LOG")"
check "healthz 503" 503 "$(healthz_status)"
check_match "healthz names streams_not_ready" '"reason":"streams_not_ready"' "$(curl -s "$RELAY_URL/healthz")"
post evt.acme.shop.order.created mem-1 x
check "POST 503 while the streams are not ready" 503 "$STATUS"
check "WORK left as it was" memory "$("$JSGET" "$NATS_URL_T" info WORK | sed -n 's/^storage=//p')"
finish
