#!/usr/bin/env bash
# A subscriber's maxInFlight holds during a replay (SPEC 3, SPEC 15).  The
# replay's consumer has a MaxAckPending of its own, so JetStream alone
# would let the subscriber have twice maxInFlight requests at once; the
# instance keeps the subscriber's own events and the replay's within one
# window, in the order they come, so new events still get through while
# the replay runs.
. "$(dirname "$0")/lib.sh"
replay_setup
# one: one request at a time; the receiver answers delay1-* after 1 s.
export TREATY_RELAY_SUBSCRIBERS='[{"name":"one","url":"http://127.0.0.1:'$RPORT'/1","secret":"'$S'","filter":"evt.*.shop.one.>","maxInFlight":1}]'
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

# received ID: the requests the subscriber had for ID.
received() { grep -cF "\"ce-id\": \"$1\"" "$T/deliveries" 2>/dev/null; }

T0=$(now_rfc3339)
for i in 1 2 3 4 5 6; do post evt.acme.shop.one.created delay1-old-$i x; done
wait_until 30 '[ "$(received delay1-old-6)" = 1 ]'
check "six events delivered, one at a time" "1 1 1 1 1 1" \
    "$(echo $(for i in 1 2 3 4 5 6; do received delay1-old-$i; done))"

st=$(areq POST "subscribers/one/replay?since=$T0")
RID=$(afield replay)
check "a replay of them: 202" 202 "$st"
# The replay's first request is under way (it takes 1 s): new events now
# come to the window while the replay holds it.
wait_until 30 '[ "$(received delay1-old-1)" = 2 ]'
for i in 1 2; do post evt.acme.shop.one.created delay1-new-$i x; done
wait_until 60 '[ "$(report "$RID" | cut -d" " -f1)" = done ] && [ "$(received delay1-new-2)" = 1 ]'
check "the replay is done: 6 delivered, none dropped" "done 6 6 0 0" "$(report "$RID")"
check "the new events delivered once each" "1 1" "$(received delay1-new-1) $(received delay1-new-2)"

# Each request is answered 1 s after it starts, so with maxInFlight 1 no
# two may start less than 1 s apart.
check "never two requests at once: every start at least 1 s after the one before" "14 0" \
    "$(python3 -c '
import json, sys
ts = sorted(json.loads(l)["t"] for l in open(sys.argv[1]) if "\"path\": \"/1\"" in l)
print(len(ts), sum(1 for a, b in zip(ts, ts[1:]) if b - a < 0.99))' "$T/deliveries" 2>&1)"
# New events wait in the window with the replay's, in the order they
# came: the first new one goes before the replay's last.
check "a new event reached the subscriber while the replay ran" yes "$(python3 -c '
import json, sys
first, last = {}, 0
for l in open(sys.argv[1]):
    d = json.loads(l); cid = d["headers"]["ce-id"]
    first.setdefault(cid, d["t"])
    if cid.startswith("delay1-old-") and d["attempt"] == 2:
        last = max(last, d["t"])
print("yes" if first.get("delay1-new-1", 1e18) < last else "no: %s" % first)' "$T/deliveries" 2>&1)"
wait_until 10 '[ "$(metric "treaty_relay_deliveries_in_flight{subscriber=\"one\"}")" = 0 ]'
check "nothing left in flight" 0 "$(metric 'treaty_relay_deliveries_in_flight{subscriber="one"}')"
kill -TERM "$RELAY_PID"
wait_until 20 '! relay_alive'
wait "$RELAY_PID"
check "SIGTERM: exit 0" 0 "$?"
check_no_sanitizer_report "no sanitizer report" "$RELAY_LOG"
finish
