#!/usr/bin/env bash
# Replays and redrives (SPEC 15): POST .../replay, GET and DELETE
# /v1/admin/replays/<id>, with a real nats-server, real relays and a real
# receiver: every event again with valid signatures; a redrive delivers
# exactly the dropped events; cancel; a replay started on one instance,
# reported by another, surviving the restart of the first; bad input.
. "$(dirname "$0")/lib.sh"
S=test-secret-0123456789
AT=admin-token-0123456789
export TREATY_RELAY_ADMIN_TOKEN_SHA256=$(printf '%s' "$AT" | sha256sum | cut -c1-64)
RPORT=$(free_port)
python3 "$(dirname "$0")/receiver.py" $RPORT "$T/deliveries" &
PIDS+=($!)
wait_for 10 port_open $RPORT || { fail receiver "did not start"; finish; }
# hook: answers by id (once400-* 400 the first time: a drop).  other: a
# second push subscriber, which a replay of hook must leave alone.  stall:
# holds slow-* for 60 s, one at a time, so its replay stays running.
# box: an inbox.
export TREATY_RELAY_SUBSCRIBERS='[
 {"name":"hook","url":"http://127.0.0.1:'$RPORT'/h","secret":"'$S'","filter":"evt.*.shop.hook.>","maxInFlight":4,"maxDeliver":2},
 {"name":"other","url":"http://127.0.0.1:'$RPORT'/o","secret":"'$S'","filter":"evt.*.shop.>"},
 {"name":"stall","url":"http://127.0.0.1:'$RPORT'/s","secret":"'$S'","filter":"evt.*.shop.stall.>","maxInFlight":1},
 {"name":"box","tokenSha256":"'$TOKEN_SHA'0","secret":"'$S'","filter":"evt.*.shop.box.>"}]'
export TREATY_RELAY_SUBSCRIBERS=${TREATY_RELAY_SUBSCRIBERS/\"tokenSha256\":\"${TOKEN_SHA}0\"/\"tokenSha256\":\"$(printf x | sha256sum | cut -c1-64)\"}
export TREATY_RELAY_RETRY_BASE_MS=50 TREATY_RELAY_RETRY_MAX_MS=200
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

# areq METHOD PATH [BASE]: the admin API; body in $T/abody, prints the status.
areq() {
	rm -f "$T/abody"
	curl -s -m 20 -o "$T/abody" -D "$T/ahdr" -w '%{http_code}' -X "$1" \
	    -H "Authorization: Bearer $AT" "${3:-$RELAY_URL}/v1/admin/$2"
}
abody() { cat "$T/abody" 2>/dev/null; }
# field KEY: a member of the last answer ("None" for null).
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$T/abody" "$1" 2>/dev/null; }
# report ID [BASE]: "state matched delivered dropped remaining" of a replay.
report() {
	local st
	st=$(areq GET "replays/$1" "${2:-}")
	[ "$st" = 200 ] || { echo "status $st"; return; }
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(*(d[k] for k in ("state","matched","delivered","dropped","remaining")))' "$T/abody"
}
# replay_done ID: its state is done.
replay_done() { [ "$(report "$1" | cut -d' ' -f1)" = done ]; }
# received PATH ID: deliveries of one id to one subscriber's path.
received() { grep -F "\"ce-id\": \"$2\"" "$T/deliveries" 2>/dev/null | grep -cF "\"path\": \"$1\""; }
# sigs_ok PATH: every delivery to PATH verifies with the secret.
sigs_ok() {
	grep -F "\"path\": \"$1\"" "$T/deliveries" | python3 -c '
import sys, json, hmac, hashlib
bad = n = 0
for line in sys.stdin:
    d = json.loads(line); h = d["headers"]; body = bytes.fromhex(d["body"]); n += 1
    parts = dict(p.split("=", 1) for p in h.get("x-treaty-signature", "").split(",") if "=" in p)
    want = hmac.new(sys.argv[1].encode(), (parts.get("t", "") + "." + h["ce-id"] + ".").encode() + body, hashlib.sha256).hexdigest()
    bad += not hmac.compare_digest(want, parts.get("v1", ""))
print("%d %d" % (n, bad))' "$S"
}

T0=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
for i in $(seq 1 10); do post evt.acme.shop.hook.created ok-$i "body $i"; done
wait_until 20 '[ "$(received /h ok-10)" = 1 ] && [ "$(received /o ok-10)" = 1 ]'
check "ten events delivered once each" "10" "$(for i in $(seq 1 10); do received /h ok-$i; done | grep -c '^1$')"

# Replay since before the first: every event again, to hook alone.
check "POST replay: 202" 202 "$(areq POST "subscribers/hook/replay?since=$T0")"
RID=$(field replay)
check "the answer: the id and matched 10" "yes 10" "$(echo "$RID" | grep -qE '^[0-9a-f]{24}$' && echo yes) $(field matched)"
check "Location names the replay" "/v1/admin/replays/$RID" "$(sed -n 's/^Location: //Ip' "$T/ahdr" | tr -d '\r')"
wait_until 30 "replay_done $RID"
check "the replay is done: 10 matched, 10 delivered, none dropped, none left" "done 10 10 0 0" "$(report $RID)"
check "every event delivered again to hook" 10 "$(for i in $(seq 1 10); do received /h ok-$i; done | grep -c '^2$')"
check "every delivery's signature is valid" "20 0" "$(sigs_ok /h)"
check "the other subscriber got nothing again" 10 "$(for i in $(seq 1 10); do received /o ok-$i; done | grep -c '^1$')"
check "its consumer is gone from JetStream" "" "$(consumer_state replay-$RID 2>/dev/null | grep -o 'pending=[0-9]*')"

# A redrive: exactly the events dropped since T1, none of the others.
T1=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
for i in 1 2 3; do post evt.acme.shop.hook.created once400-$i "r $i"; done
for i in 11 12 13; do post evt.acme.shop.hook.created ok-$i "b $i"; done
wait_until 20 '[ "$(areq GET "drops?subscriber=hook&since=$T1")" = 200 ] && [ "$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))[\"drops\"]))" "$T/abody")" = 3 ]'
check "three drops recorded for hook" "3" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["drops"]))' "$T/abody")"
wait_until 20 '[ "$(received /h ok-13)" = 1 ]'
check "POST replay?dropped=true: 202, matched 3" "202 3" "$(areq POST "subscribers/hook/replay?since=$T1&dropped=true") $(field matched)"
RID2=$(field replay)
wait_until 30 "replay_done $RID2"
check "the redrive is done: 3 delivered" "done 3 3 0 0" "$(report $RID2)"
check "each dropped event delivered again" "2 2 2" "$(echo $(for i in 1 2 3; do received /h once400-$i; done))"
check "the events not dropped: not again" "1 1 1" "$(echo $(for i in 11 12 13; do received /h ok-$i; done))"
check "a redrive with nothing dropped: matched 0, done at once" "202 0 done 0 0 0 0" \
    "$(areq POST "subscribers/hook/replay?since=$(date -u +%Y-%m-%dT%H:%M:%SZ)&dropped=true") $(field matched) $(report "$(field replay)")"

# Cancel: a replay that cannot end (stall holds each event 60 s).
T2=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
for i in 1 2 3; do post evt.acme.shop.stall.created slow-$i x; done
wait_until 20 '[ "$(received /s slow-1)" = 1 ]'
check "POST replay of stall: matched 3" "202 3" "$(areq POST "subscribers/stall/replay?since=$T2") $(field matched)"
RID3=$(field replay)
check "GET: running, nothing delivered yet" "running 3 0 0 3" "$(report $RID3)"
wait_until 20 '[ "$(received /s slow-1)" = 2 ]'
check "DELETE: 204" 204 "$(areq DELETE "replays/$RID3")"
check "GET after DELETE: cancelled" "cancelled 3 0 0 0" "$(report $RID3)"
check "the cancelled replay's consumer is gone from JetStream" "" "$(consumer_state replay-$RID3 2>/dev/null | grep -o 'pending=[0-9]*')"
check "DELETE again: 204, and it stays cancelled" "204 cancelled" "$(areq DELETE "replays/$RID3") $(report $RID3 | cut -d' ' -f1)"
check "the subscriber's own consumer is untouched" "yes" "$(consumer_state relay-stall | grep -q 'pending=' && echo yes)"

# Bad input.
areq_err() { local st; st=$(areq "$@"); BODY=$(abody); echo "$st $(errcode)"; }
check "unknown subscriber: 404" "404 unknown_subscriber" "$(areq_err POST "subscribers/nobody/replay?since=$T0")"
check "since not RFC 3339: 400" "400 bad_request" "$(areq_err POST "subscribers/hook/replay?since=yesterday")"
check "since missing: 400" "400 bad_request" "$(areq_err POST "subscribers/hook/replay")"
check "since in the future: 400" "400 bad_request" "$(areq_err POST "subscribers/hook/replay?since=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)")"
check "dropped neither true nor false: 400" "400 bad_request" "$(areq_err POST "subscribers/hook/replay?since=$T0&dropped=maybe")"
check "GET on the replay route: 405" "405 method_not_allowed" "$(areq_err GET "subscribers/hook/replay?since=$T0")"
check "a replay id that does not exist: 404" "404 unknown_replay" "$(areq_err GET replays/0123456789abcdef01234567)"
check "a replay id that cannot be one: 404" "404 unknown_replay" "$(areq_err GET replays/nope)"
check "DELETE of a replay that does not exist: 404" "404 unknown_replay" "$(areq_err DELETE replays/0123456789abcdef01234567)"
check "PUT on a replay: 405" "405" "$(areq PUT "replays/$RID")"
check "no token: 401" "401" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$RELAY_URL/v1/admin/subscribers/hook/replay?since=$T0")"
check "a producer's token: 403" "403" "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" "$RELAY_URL/v1/admin/subscribers/hook/replay?since=$T0")"

finish
