#!/usr/bin/env bash
# SPEC 17: pause and resume through the API, for push and pull, configured
# and API subscribers, on two relays sharing one nats-server.  While
# paused: no new delivery on either relay, the backlog stays in JetStream
# and nothing counts against maxDeliver (JetStream's redelivered figure
# does not move); resumed: delivery restarts at the oldest.  A 410 pauses
# (reason gone, the URL in the log and the AUDIT record) and drops
# nothing; a 307 is a failed attempt, never followed.  The state is in
# the TREATY_SUBSCRIBER_STATE bucket, survives a restart, and is shown in
# status, /metrics and one AUDIT record per change.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
admin_setup
gate_setup
IT=inbox-token-0123456789
export TREATY_RELAY_SUBSCRIBERS='[{"name":"ps","url":"'$H'/ps","secret":"'$S'","filter":"evt.*.shop.order.>","maxDeliver":3,"maxInFlight":4},{"name":"gone","url":"'$H'/gone","secret":"'$S'","filter":"evt.*.shop.gone.>","maxDeliver":3},{"name":"redir","url":"'$H'/redir","secret":"'$S'","filter":"evt.*.shop.redir.>","maxDeliver":5},{"name":"box","tokenSha256":"'$(sha256hex $IT)'","secret":"'$S'","filter":"evt.*.shop.>"}]'
export TREATY_RELAY_RETRY_BASE_MS=200 TREATY_RELAY_RETRY_MAX_MS=400 TREATY_RELAY_ACK_WAIT_SECONDS=4 TREATY_RELAY_PROGRESS_SECONDS=1
start_relay || { fail relay "A did not start"; finish; }
A_URL=$RELAY_URL A_LOG=$RELAY_LOG A_PID=$RELAY_PID
start_relay || { fail relay "B did not start"; finish; }
B_URL=$RELAY_URL B_LOG=$RELAY_LOG B_PID=$RELAY_PID
RELAY_URL=$A_URL

# got PATH: the ids answered 2xx at PATH, in arrival order.
got() { python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["path"] == sys.argv[2] and 200 <= r["status"] < 300: print(r["id"])
' "$T/got" "$1" 2>/dev/null; }
ngot() { got "$1" | wc -l; }
# state NAME BASE: the subscriber's state in BASE's status.
state() {
	local st
	st=$(areq GET subscribers "${2:-$A_URL}")
	[ "$st" = 200 ] || { echo "ERROR: status $st"; return; }
	python3 -c 'import json,sys
for s in json.load(open(sys.argv[1]))["subscribers"]:
    if s["name"] == sys.argv[2]: print(s["state"], s["stateReason"])' "$T/abody" "$1"
}
gauge() { RELAY_URL=${3:-$A_URL} metric "treaty_relay_subscriber_state{subscriber=\"$1\",state=\"$2\"}"; }
# cs FIELD CONSUMER: one figure of consumer_state.
cs() { consumer_state "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# audit_n SUBJECT: AUDIT's messages on SUBJECT.
audit_n() { python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw '$JS.API.STREAM.INFO.AUDIT' '{"subjects_filter":"'$1'"}' | python3 -c 'import json,sys; print(json.load(sys.stdin).get("state",{}).get("subjects",{}).get(sys.argv[1],0))' "$1"; }

check "404 for an unknown subscriber" 404 "$(areq POST subscribers/nosuch/pause)"
check "405 for GET" 405 "$(areq GET subscribers/ps/pause)"
check "active before any change" "active None" "$(state ps)"
check "gauge active 1" 1 "$(gauge ps active)"
check "gauge paused 0" 0 "$(gauge ps paused)"
check "resume of an active one is 204" 204 "$(areq POST subscribers/ps/resume)"

check "pause is 204" 204 "$(areq POST subscribers/ps/pause)"
check "A shows it paused at once" "paused operator" "$(state ps)"
wait_until 5 "[ \"\$(state ps $B_URL)\" = 'paused operator' ]"
check "B shows it paused" "paused operator" "$(state ps $B_URL)"
check "gauge paused 1 on B" 1 "$(gauge ps paused $B_URL)"
# Every instance follows within 1 s (SPEC 17), by the relays' own stamps:
# from A's stored write to B's applying it.
ta=$(log_ms 'msg="subscriber state" sub=ps state=paused' "$A_LOG")
tb=$(log_ms 'msg="subscriber state applied" sub=ps state=paused' "$B_LOG")
check_match "B applied the pause within 1 s of A's write" "^-?[0-9]+ ok$" "$((tb - ta)) $([ $((tb - ta)) -le 1000 ] && echo ok)"
check "pausing again is 204" 204 "$(areq POST subscribers/ps/pause)"

for i in $(seq 1 12); do post evt.local.shop.order.created ok-p$i x; done
wait_until 10 "[ \$(count WORK) -ge 12 ]"
# The events reach both relays' windows (at most maxInFlight 4 held).
wait_until 10 "[ \"\$(cs ack_pending relay-ps)\" -ge 4 ]"
sleep_ack=$(( TREATY_RELAY_ACK_WAIT_SECONDS + 2 ))
# An ack wait and more pass while paused (the duration under test: there
# is no event to wait for when nothing must happen): nothing is
# redelivered meanwhile, as JetStream's own figures say below.
until_ms "$(now_ms) + $sleep_ack * 1000"
check "nothing delivered while paused" 0 "$(ngot /ps)"
check "4 held, 8 waiting in JetStream, nothing redelivered while paused" "4 8 0" "$(cs ack_pending relay-ps) $(cs pending relay-ps) $(cs redelivered relay-ps)"

T_RES=$(now_ms)
check "resume is 204" 204 "$(areq POST subscribers/ps/resume)"
wait_until 20 "[ \$(ngot /ps) -ge 12 ]"
check "every event delivered after the resume" 12 "$(ngot /ps)"
# Delivery restarts at the oldest: what the relays held (the four oldest,
# maxInFlight across both) goes first.  Across two relays only the first
# arrival is sure to be one of them: once one is acknowledged, JetStream
# may hand a newer event to the quicker relay before the other sends the
# rest of its own.
check_match "the first delivery after the resume is one of the four held (oldest)" "^ok-p[1-4]$" "$(got /ps | head -1)"
check "state active on B again" "active operator" "$(state ps $B_URL)"
check "no attempt above 1: nothing counted while paused" "1" "$(python3 -c '
import json, sys
print(max(int(json.loads(l)["attempt"]) for l in open(sys.argv[1]) if json.loads(l)["path"] == "/ps"))' "$T/got")"

# One log line and one AUDIT record per change, by the writer.
check "one paused line" 1 "$(cat "$A_LOG" "$B_LOG" | grep -c 'msg="subscriber state" sub=ps state=paused previous=active reason=operator')"
check "one active line" 1 "$(cat "$A_LOG" "$B_LOG" | grep -c 'msg="subscriber state" sub=ps state=active previous=paused reason=operator')"
wait_until 10 "[ \"\$(audit_n audit.relay.treaty.subscriber.state)\" -ge 2 ]"
check "two AUDIT state records" 2 "$(audit_n audit.relay.treaty.subscriber.state)"

# Pull: a paused inbox answers at once, paused, with nothing.
check "pause the inbox" 204 "$(areq POST subscribers/box/pause)"
st=$(curl -s -m 10 -o "$T/inbox" -w '%{http_code}' -H "Authorization: Bearer $IT" "$A_URL/v1/inbox/box?wait=5")
check "paused GET 200" 200 "$st"
check "paused GET says so, with nothing" "True 0" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("paused"), len(d["envelopes"]))' "$T/inbox")"
check "resume the inbox" 204 "$(areq POST subscribers/box/resume)"
st=$(curl -s -m 10 -o "$T/inbox" -w '%{http_code}' -H "Authorization: Bearer $IT" "$A_URL/v1/inbox/box?max=5")
check "resumed GET leases" "None 5" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("paused"), len(d["envelopes"]))' "$T/inbox")"

# A 410 pauses, drops nothing; a 307 is a failed attempt, not followed.
curl -s -X POST "$H/_ctl?path=/gone&status=410" > /dev/null
curl -s -X POST "$H/_ctl?path=/redir&status=307" > /dev/null
post evt.local.shop.gone.x ok-g1 x
post evt.local.shop.redir.x ok-r1 x
wait_until 10 "[ \"\$(state gone)\" = 'paused gone' ]"
check "410 pauses, reason gone" "paused gone" "$(state gone)"
check_match "the URL in the log" "url=\"?$H/gone" "$(cat "$A_LOG" "$B_LOG" | grep 'msg="subscriber state" sub=gone state=paused')"
check "no drop for the 410" "0 0" "$(metric 'treaty_relay_deliveries_terminated_total{subscriber="gone",reason="rejected"}') $(RELAY_URL=$B_URL metric 'treaty_relay_deliveries_terminated_total{subscriber="gone",reason="rejected"}')"
wait_until 10 "[ \$(grep -c '\"/redir\"' $T/got) -ge 2 ]"
check "307 retried, not followed: still active" "active None" "$(state redir)"
curl -s -X POST "$H/_ctl?path=/gone&status=204" > /dev/null
check "resume the gone one" 204 "$(areq POST subscribers/gone/resume)"
wait_until 10 "[ \$(ngot /gone) -ge 1 ]"
check "the 410's event delivered after the resume" "ok-g1" "$(got /gone | sort -u)"

# The state survives a restart (it is in JetStream, not in a relay).
check "pause ps again" 204 "$(areq POST subscribers/ps/pause)"
kill -TERM $A_PID; wait $A_PID 2>/dev/null
start_relay || { fail relay "A did not start again"; finish; }
A_URL=$RELAY_URL A_LOG=$RELAY_LOG
check "after a restart still paused" "paused operator" "$(state ps)"
check_match "the state is in its bucket" '"state": ?"paused"' "$(python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw '$JS.API.DIRECT.GET.KV_TREATY_SUBSCRIBER_STATE' '{"last_by_subj":"$KV.TREATY_SUBSCRIBER_STATE.ps"}' 2>&1)"
finish
