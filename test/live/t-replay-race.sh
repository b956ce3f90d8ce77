#!/usr/bin/env bash
# One replay start (SPEC 15) sent to two instances at once with the same
# client-chosen id: what a client's resend after a lost answer does behind
# a load balancer.  Both answer 202 with that replay, it can be read
# afterwards, and it hands every matched event out again exactly once.
# (Before, the instance whose consumer JetStream refused deleted the
# other's: a 202 for a replay that never ran.)
. "$(dirname "$0")/lib.sh"
replay_setup
export TREATY_RELAY_SUBSCRIBERS='[{"name":"hook","url":"http://127.0.0.1:'$RPORT'/h","secret":"'$S'","filter":"evt.*.shop.hook.>"}]'
start_nats && start_relay || { fail start "nats-server or relay A did not start"; finish; }
A_URL=$RELAY_URL
start_relay || { fail start "relay B did not start"; finish; }
B_URL=$RELAY_URL
delivered() { grep -c . "$T/deliveries" 2>/dev/null || echo 0; }

T0=$(now_rfc3339)
for i in $(seq 1 10); do post evt.acme.shop.hook.created race-$i "b$i"; done
wait_until 20 '[ $(delivered) -ge 10 ]' || fail "the 10 events delivered" "$(delivered)"

start() {	# URL ID OUT: POST the replay start, status and body to OUT
	curl -s -m 20 -o "$3.body" -w '%{http_code}' -X POST -H "Authorization: Bearer $AT" \
	    "$1/v1/admin/subscribers/hook/replay?since=$T0&id=$2" > "$3.status"
}
want=10
for round in 1 2 3; do
	id=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
	start "$A_URL" $id "$T/a" & wa=$!
	start "$B_URL" $id "$T/b" & wb=$!
	wait $wa $wb
	check "round $round: both instances answer 202 with the one replay" \
	    "202 $id 202 $id" "$(cat "$T/a.status") $(sed -n 's/.*"replay":"\([0-9a-f]*\)".*/\1/p' "$T/a.body") $(cat "$T/b.status") $(sed -n 's/.*"replay":"\([0-9a-f]*\)".*/\1/p' "$T/b.body")"
	want=$((want + 10))
	wait_until 30 '[ "$(report $id "$A_URL" | cut -d" " -f1)" = done ]' ||
	    fail "round $round: the replay runs to its end" "[$(report $id "$A_URL")] as A reads it"
	wait_until 10 '[ $(delivered) -ge $want ]'
	check "round $round: each of the 10 events delivered once more" $want "$(delivered)"
done
if grep -q 'replay request failed' "$T"/relay.*.log; then
	fail "no replay request failed" "$(grep -h 'replay request failed' "$T"/relay.*.log | head -2)"
else
	ok "no replay request failed"
fi
finish
