#!/usr/bin/env bash
# An inbox event whose leases run out maxDeliver times is not dropped in
# silence: JetStream's max-deliveries advisory makes the relay record the
# drop in AUDIT (the same record as a push subscriber's), log it and count
# it, once.
. "$(dirname "$0")/lib.sh"
IT=drop-inbox-token-0123456789; ISHA=$(sha256hex "$IT")
export TREATY_RELAY_SUBSCRIBERS='[{"name":"drops","tokenSha256":"'$ISHA'","secret":"drop-secret-0123456789","filter":"evt.*.shop.order.>","maxDeliver":2}]'
export TREATY_RELAY_LEASE_SECONDS=1
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }
# lease: the ids and delivery counts a lease GET hands out now, or
# "ERROR: ..." when the GET is not answered 200 (test/live/inbox.py).
lease() { python3 "$ROOT/test/live/inbox.py" "$RELAY_URL" drops "$IT" take counts; }
# lease_until SECONDS COND: lease GETs every 0.1 s until the shell
# expression COND is true (at most SECONDS); sets GOT, everything handed
# out meanwhile (or the first error).  The GETs are what make nats-server
# send the max-deliveries advisory.
lease_until() {
	local n=$(($1 * 10)) l
	GOT=
	while [ $n -gt 0 ]; do
		l=$(lease)
		case $l in ERROR:*) GOT="$GOT $l"; return 1 ;; esac
		GOT=$(echo $GOT $l)
		eval "$2" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
post evt.acme.shop.order.created gone-1 'never acknowledged'
check "published" 202 "$STATUS"
a0=$(count AUDIT)
check "first lease" gone-1:1 "$(lease)"
# Its 1 s lease runs out: lease GETs (bounded) until it is handed out again.
lease_until 10 '[ -n "$GOT" ]'
check "its lease ran out: handed out again" gone-1:2 "$GOT"
# After maxDeliver (2) leases: lease GETs until the drop is recorded (the
# witness that the relay has seen its end); none of them hands it out.
lease_until 15 '[ "$(count AUDIT)" = $((a0 + 1)) ]'
check "after maxDeliver leases: not handed out again" "" "$GOT"
check "one drop record in AUDIT" $((a0 + 1)) "$(count AUDIT)"
drop=$("$JSGET" "$NATS_URL_T" last AUDIT audit.relay.treaty.delivery.dropped 2>/dev/null)
check_match "a CloudEvent of the drop type" 'ce-type: dev.treaty.delivery.dropped.v1' "$drop"
check_match "the same record as a push subscriber's" '"subscriber":"drops","eventId":"gone-1","source":"/test","subject":"evt.acme.shop.order.created","attempts":2,"status":null,"error":"lease expired maxDeliver times"' "$drop"
check_match "logged, metadata only" 'msg="inbox event dropped" inbox=drops id=gone-1 subject=evt.acme.shop.order.created attempts=2' "$(cat "$RELAY_LOG")"
check "the body is not in the log" 0 "$(grep -c 'never acknowledged' "$RELAY_LOG")"
check "counted" 1 "$(metric 'treaty_relay_inbox_dropped_total{inbox="drops"}')"
# nats-server 2.9 keeps a no_wait pull that came when the only pending
# event was one it then gave up on, and hands it the next event: that one
# must still reach a worker at its first delivery, not be given back.
# (The relay keeps it for half a lease, 0.5 s here, then gives it back,
# which counts a delivery: the GET follows the POST's answer in the same
# curl run (--next), with no process to start between them on a loaded
# machine.  A long-poll waiting before the POST does not do: the kept pull
# comes first, and the long-poll gets the event only once given back.)
P=evt.acme.shop.order.created
pst=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -X POST "$RELAY_URL/v1/events/$P" \
    -H "Authorization: Bearer $TOKEN" -H 'ce-specversion: 1.0' -H 'ce-id: fresh-1' \
    -H 'ce-source: /test' -H "ce-type: $(type_for $P)" -H 'Content-Type: text/plain' \
    --data-binary 'after a drop' \
    --next -s -m 10 -o "$T/fresh" -H "Authorization: Bearer $IT" "$RELAY_URL/v1/inbox/drops?lease=true&max=10")
check "the next event published" 202 "$pst"
fresh=$(python3 -c 'import json,sys; print(" ".join("%s:%d %s" % (e["id"], e["deliveryCount"], e["receipt"]) for e in json.load(open(sys.argv[1]))["envelopes"]))' "$T/fresh" 2>&1)
check "an event stored after a drop: handed out at its first delivery" fresh-1:1 "${fresh%% *}"
check "  and acknowledged" 204 "$(curl_status -X DELETE -H "Authorization: Bearer $IT" "$RELAY_URL/v1/inbox/drops/fresh-1?receipt=${fresh#* }")"
# Recorded once: a second event runs out its leases the same way; once its
# drop is recorded (so the relay went on handling advisories after the
# first), AUDIT holds exactly the two drop records, one for each event.
post evt.acme.shop.order.created gone-2 'never acknowledged either'
lease_until 20 '[ "$(count AUDIT)" != $((a0 + 1)) ]'
recs=$(for s in $(seq $((a0 + 1)) $(count AUDIT)); do
	"$JSGET" "$NATS_URL_T" msg AUDIT "$s" 2>&1 | grep -o '"eventId":"[^"]*"'
done | tr '\n' ' ')
check "recorded once" "$((a0 + 2)) \"eventId\":\"gone-1\" \"eventId\":\"gone-2\" " "$(count AUDIT) $recs"
finish
