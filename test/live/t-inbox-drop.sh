#!/usr/bin/env bash
# An inbox event whose leases run out maxDeliver times is not dropped in
# silence: JetStream's max-deliveries advisory makes the relay record the
# drop in AUDIT (the same record as a push subscriber's), log it and count
# it, once.
. "$(dirname "$0")/lib.sh"
IT=drop-inbox-token-0123456789; ISHA=$(printf '%s' "$IT" | sha256sum | cut -c1-64)
export TREATY_RELAY_SUBSCRIBERS='[{"name":"drops","tokenSha256":"'$ISHA'","secret":"drop-secret-0123456789","filter":"evt.*.shop.order.>","maxDeliver":2}]'
export TREATY_RELAY_LEASE_SECONDS=1
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }
# lease: the ids and delivery counts a lease GET hands out now.
lease() {
	curl -s -H "Authorization: Bearer $IT" "$RELAY_URL/v1/inbox/drops?lease=true&max=10" |
	    python3 -c 'import json,sys; print(" ".join("%s:%d" % (e["id"], e["deliveryCount"]) for e in json.load(sys.stdin)["envelopes"]))'
}
post evt.acme.shop.order.created gone-1 'never acknowledged'
check "published" 202 "$STATUS"
a0=$(count AUDIT)
check "first lease" gone-1:1 "$(lease)"
sleep 1.3
check "its lease ran out: handed out again" gone-1:2 "$(sleep 0.2; lease)"
sleep 1.5
check "after maxDeliver leases: not handed out again" "" "$(lease)"
wait_until 10 '[ "$(count AUDIT)" -gt "$a0" ]'
check "one drop record in AUDIT" $((a0 + 1)) "$(count AUDIT)"
drop=$("$JSGET" "$NATS_URL_T" last AUDIT audit.relay.treaty.delivery.dropped 2>/dev/null)
check_match "a CloudEvent of the drop type" 'ce-type: dev.treaty.delivery.dropped.v1' "$drop"
check_match "the same record as a push subscriber's" '"subscriber":"drops","eventId":"gone-1","source":"/test","subject":"evt.acme.shop.order.created","attempts":2,"status":null,"error":"lease expired maxDeliver times"' "$drop"
check_match "logged, metadata only" 'msg="inbox event dropped" inbox=drops id=gone-1 subject=evt.acme.shop.order.created attempts=2' "$(cat "$RELAY_LOG")"
check "the body is not in the log" 0 "$(grep -c 'never acknowledged' "$RELAY_LOG")"
check "counted" 1 "$(metric 'treaty_relay_inbox_dropped_total{inbox="drops"}')"
sleep 1
check "recorded once" $((a0 + 1)) "$(count AUDIT)"
finish
