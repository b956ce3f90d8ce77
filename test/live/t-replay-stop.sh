#!/usr/bin/env bash
# A relay stopped (SIGTERM) while nats-server does not answer (SIGSTOP):
# with a listing of the replays waiting on the worker, which finishes
# while the connection drains; and with a replay running here, whose
# progress record is still unanswered when the grace period ends.  The
# relay exits 0 (no sanitizer report under SANITIZE=1), and AUDIT holds
# a few progress records, not a flood.
. "$(dirname "$0")/lib.sh"
replay_setup
# one: one delivery at a time, delay1-* take 1 s each.
export TREATY_RELAY_SUBSCRIBERS='[{"name":"one","url":"http://127.0.0.1:'$RPORT'/1","secret":"'$S'","filter":"evt.*.shop.one.>","maxInFlight":1}]'
export TREATY_RELAY_GRACE_SECONDS=2
export TREATY_RELAY_VERBOSE=1	# its "listing replays" lines
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

# stop_relay_frozen UNTIL CONT: SIGSTOP nats-server (N0: the relay's
# listings so far); once the shell expression UNTIL holds, SIGTERM the relay; once its log has a line
# matching CONT (its drain is then under way, waiting for nats-server),
# SIGCONT nats-server, so what the relay had buffered reaches it.  The
# relay's exit status in RC.
stop_relay_frozen() {
	kill -STOP $NATS_PID
	N0=$(nlistings)
	wait_until 20 "$1"
	kill -TERM $RELAY_PID
	wait_until 20 "grep -q '$2' \"\$RELAY_LOG\""
	kill -CONT $NATS_PID
	wait_until 20 '! kill -0 $RELAY_PID 2>/dev/null'
	wait $RELAY_PID
	RC=$?
}
# nlistings: the listings of replays the relay has started.
nlistings() { grep -c 'msg="listing replays"' "$RELAY_LOG"; }

# A listing (every 2 s, on the relay's own timer) started after the stop
# waits on the worker for the stopped nats-server, and ends when the
# drain closes the connection.
wait_until 20 '[ "$(nlistings)" -ge 1 ]'
check "the relay lists the replays (debug line)" yes "$([ "$(nlistings)" -ge 1 ] && echo yes)"
stop_relay_frozen '[ "$(nlistings)" -gt "$N0" ]' 'msg="shutting down"'
check "stopped with a listing on the worker: exit 0" 0 "$RC"
check "and it logged its last line" yes "$(grep -q 'msg=stopped' "$RELAY_LOG" && echo yes)"

start_relay || { fail start "relay did not come back"; finish; }
T0=$(now_rfc3339)
for i in $(seq 1 10); do post evt.acme.shop.one.created delay1-$i x; done
wait_until 30 '[ "$(grep -c "\"ce-id\": \"delay1-10\"" "$T/deliveries")" = 1 ]'
check "POST replay: 202" 202 "$(areq POST "subscribers/one/replay?since=$T0")"
RID=$(afield replay)
wait_until 30 '[ "$(grep -c "\"attempt\": 2" "$T/deliveries")" -ge 1 ]'
# progress_subjects: the replay's progress subjects AUDIT holds.
progress_subjects() {
	python3 "$ROOT/test/live/jsapi.py" $NATS_PORT raw '$JS.API.STREAM.INFO.AUDIT' \
	    '{"subjects_filter":"audit.relay.treaty.replay.'"$RID"'.>"}' |
	    python3 -c 'import json,sys; print(len([k for k in json.load(sys.stdin)["state"].get("subjects", {}) if not k.endswith(".end")]))'
}
# A first progress record stored before nats-server stops: what was only
# buffered when the relay closed its connection may never reach it.
wait_until 30 '[ "$(progress_subjects)" -ge 1 ]'
# A delivery ends while nats-server is stopped: its count goes out at once
# (stopping) or at the next tick, and nobody answers it before the grace
# period ends.
n2=$(grep -c '"attempt": 2' "$T/deliveries")
stop_relay_frozen "[ \"\$(grep -c '\"attempt\": 2' \"\$T/deliveries\")\" -gt $n2 ]" 'msg="grace period over"'

check "stopped with a progress record unanswered: exit 0" 0 "$RC"
n=$(python3 "$ROOT/test/live/jsapi.py" $NATS_PORT raw '$JS.API.STREAM.INFO.AUDIT' \
    '{"subjects_filter":"audit.relay.treaty.replay.'"$RID"'.>"}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["state"]["messages"])' 2>&1)
check "AUDIT holds a few progress records of the replay, not a flood" yes \
    "$([[ $n =~ ^[0-9]+$ ]] && [ "$n" -le 10 ] && echo yes || echo "no: $n")"
# A record a second for about 10 s, rolled up: one per instance's subject.
check "each progress subject holds one record (the newest: a rollup)" yes \
    "$(python3 "$ROOT/test/live/jsapi.py" $NATS_PORT raw '$JS.API.STREAM.INFO.AUDIT' \
    '{"subjects_filter":"audit.relay.treaty.replay.'"$RID"'.>"}' | python3 -c '
import json, sys
s = json.load(sys.stdin)["state"].get("subjects", {})
p = {k: v for k, v in s.items() if not k.endswith(".end")}
print("yes" if p and all(v == 1 for v in p.values()) else "no: %s" % s)')"
check "AUDIT allows rollups" "allow_rollup=true" "$("$JSGET" "$NATS_URL_T" info AUDIT | grep allow_rollup)"

finish
