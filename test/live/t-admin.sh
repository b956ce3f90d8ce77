#!/usr/bin/env bash
# The operations API (SPEC 15): admin tokens on both listeners, what each
# subscriber is owed (JetStream's consumer info, compared here with
# JetStream's own answer), the gauges, the drop record's WORK sequence,
# and the consumers no subscriber owns, listed and deleted (issue 30).
. "$(dirname "$0")/lib.sh"
S=test-secret-0123456789
IT=inbox-token-0123456789
ISHA=$(sha256hex "$IT")
AT=admin-token-0123456789
ASHA=$(sha256hex "$AT")
AT2=admin-token-two-0123456789
ASHA2=$(sha256hex "$AT2")
RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
# stall: the receiver holds slow-* requests for 60 s, longer than this
# test, so two stay in flight (maxInFlight 2) and the rest wait in
# JetStream.  hook: answers by id (reject-* 400, a drop).  box: an inbox.
SUBS='[
 {"name":"stall","url":"http://127.0.0.1:'$RPORT'/s","secret":"'$S'","filter":"evt.*.shop.stall.>","maxInFlight":2},
 {"name":"hook","url":"http://127.0.0.1:'$RPORT'/h","secret":"'$S'","filter":"evt.*.shop.hook.>"},
 {"name":"box","tokenSha256":"'$ISHA'","secret":"'$S'","filter":"evt.*.shop.box.>"}'
# The first relay also has gone (push) and gonebox (pull), which the
# restart below leaves out: their consumers stay in JetStream, leftovers.
export TREATY_RELAY_SUBSCRIBERS="$SUBS"',
 {"name":"gone","url":"http://127.0.0.1:'$RPORT'/g","secret":"'$S'","filter":"evt.*.shop.gone.>"},
 {"name":"gonebox","tokenSha256":"'$(sha256hex gonebox-token-0123456789)'","secret":"'$S'","filter":"evt.*.shop.gonebox.>"}]'
export TREATY_RELAY_DELIVERY_TIMEOUT_MS=60000
CPORT=$(free_port)
# alpha may also publish on the drop records' subject: a forged record
# must not be listed as one.
PRODUCERS='[{"name":"alpha","tokenSha256":"'$TOKEN_SHA'","subjects":["evt.*.shop.>","audit.relay.>"]}]'
T0=$(now_rfc3339)
start_nats && start_relay --control-listen 127.0.0.1:$CPORT ||
    { fail start "nats-server or relay did not start"; finish; }

# aget PATH [TOKEN] [BASE]: GET BASE/v1/admin/PATH; body in $T/abody,
# prints the status (000: no answer).
aget() {
	rm -f "$T/abody"
	curl -s -m 10 -o "$T/abody" -D "$T/ahdr" -w '%{http_code}' \
	    ${2:+-H "Authorization: Bearer $2"} "${3:-$RELAY_URL}/v1/admin/$1"
}
aerr() { BODY=$(abody); errcode; }

TR=$ROOT/$O/treaty

# Without TREATY_RELAY_ADMIN_TOKEN_SHA256 there is no such route.
check "no admin token configured: 404" "404 not_found" "$(aget subscribers "$AT") $(aerr)"
check "no admin token configured: 404 on the control listener too" "404" "$(aget subscribers "$AT" http://127.0.0.1:$CPORT)"
check "treaty admin status: 1 when the relay has no admin token, and says so" "1 yes" \
    "$(tr_run st404 TREATY_TOKEN=$AT -- admin status --url "$RELAY_URL") $(grep -q TREATY_RELAY_ADMIN_TOKEN_SHA256 "$T/st404.err" && echo yes)"

# With two admin hashes (a rotation), restarted, without gone and gonebox.
wait_until 15 '[[ $(consumer_state relay-gone) != ERROR* && $(consumer_state relay-gonebox) != ERROR* ]]' ||
    fail "the first relay's consumers" "relay-gone or relay-gonebox not made"
kill -TERM $RELAY_PID; wait $RELAY_PID 2>/dev/null
export TREATY_RELAY_SUBSCRIBERS="$SUBS]"
export TREATY_RELAY_ADMIN_TOKEN_SHA256="$ASHA, $ASHA2"
start_relay --control-listen 127.0.0.1:$CPORT || { fail start "relay did not restart"; finish; }

check "no token: 401 with WWW-Authenticate" "401 unauthenticated Bearer" \
    "$(aget subscribers) $(aerr) $(sed -n 's/^WWW-Authenticate: //Ip' "$T/ahdr" | tr -d '\r')"
check "a token nobody has: 401" "401 unauthenticated" "$(aget subscribers not-a-token) $(aerr)"
adetail() { BODY=$(abody); json_get detail; }
check "  the two 401s tell no token from an unknown one" \
    "an admin token is required: Authorization: Bearer <token>|unknown token: its SHA-256 is not in the relay's configuration" \
    "$(aget subscribers >/dev/null; adetail)|$(aget subscribers not-a-token >/dev/null; adetail)"
check "a producer's token: 403" "403 forbidden" "$(aget subscribers "$TOKEN") $(aerr)"
check "an inbox's token: 403" "403 forbidden" "$(aget subscribers "$IT") $(aerr)"
check "and the other way round, the admin token on an inbox: 403, not 401" 403 \
    "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $AT" "$RELAY_URL/v1/inbox/box")"
check "the first admin token: 200" 200 "$(aget subscribers "$AT")"
check "the second admin token: 200" 200 "$(aget subscribers "$AT2")"
check "the control listener: 200 with the admin token" 200 "$(aget subscribers "$AT" http://127.0.0.1:$CPORT)"
check "the control listener: 401 without" 401 "$(aget subscribers "" http://127.0.0.1:$CPORT)"
check "POST: 405 with Allow" "405 GET, HEAD" "$(curl -s -o /dev/null -D "$T/ahdr" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $AT" "$RELAY_URL/v1/admin/subscribers") $(sed -n 's/^Allow: //Ip' "$T/ahdr" | tr -d '\r')"
check "an unknown admin route: 404" "404 not_found" "$(aget nothing "$AT") $(aerr)"
check "an unknown admin route without a token: 401 (nothing shown)" 401 "$(aget nothing)"

# figures NAME: "pending inFlight redelivered dropped kind filter" of one
# subscriber in GET /v1/admin/subscribers, or "ERROR: ...".
figures() {
	local st
	st=$(aget subscribers "$AT")
	[ "$st" = 200 ] || { echo "ERROR: GET /v1/admin/subscribers: $st"; return 1; }
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = [x for x in d["subscribers"] if x["name"] == sys.argv[2]]
if len(s) != 1 or set(s[0]) != {"name", "kind", "source", "filter", "pending", "inFlight", "redelivered", "dropped", "state", "stateSince", "stateReason"}:
    print("ERROR: %s" % s); sys.exit(1)
s = s[0]
print(" ".join(str(s[k]) for k in ("pending", "inFlight", "redelivered", "dropped", "kind", "filter")))
' "$T/abody" "$1" 2>&1 || echo "ERROR: not JSON: $(abody)"
}
# js NAME: JetStream's own "pending inFlight redelivered" for the consumer.
js() {
	consumer_state "relay-$1" | sed -n 's/^ack_pending=\([0-9]*\) pending=\([0-9]*\) redelivered=\([0-9]*\)$/\2 \1 \3/p'
}

check "every subscriber listed, with its kind and filter" "push evt.*.shop.stall.> push evt.*.shop.hook.> pull evt.*.shop.box.>" \
    "$(for n in stall hook box; do figures $n | cut -d' ' -f5-; done | tr '\n' ' ' | sed 's/ $//')"

# A stalled push subscriber: 5 events, 2 held in flight, 3 waiting.
for i in 1 2 3 4 5; do post evt.acme.shop.stall.created slow-$i x; done
wait_until 20 '[ "$(figures stall | cut -d" " -f1-2)" = "3 2" ]'
check "a stalled push subscriber: 3 pending, 2 in flight, none dropped" "3 2 0 0" "$(figures stall | cut -d' ' -f1-4)"
check "the same figures as JetStream's consumer info" "$(js stall)" "$(figures stall | cut -d' ' -f1-3)"
check "gauge: treaty_relay_subscriber_pending" 3 "$(metric 'treaty_relay_subscriber_pending{subscriber="stall"}')"
check "gauge: treaty_relay_subscriber_in_flight" 2 "$(metric 'treaty_relay_subscriber_in_flight{subscriber="stall"}')"

# An unread inbox: 4 pending; one leased: 3 pending, 1 in flight.
for i in 1 2 3 4; do post evt.acme.shop.box.created box-$i x; done
wait_until 20 '[ "$(figures box | cut -d" " -f1-2)" = "4 0" ]'
check "an unread inbox: 4 pending, none in flight" "4 0 0 0" "$(figures box | cut -d' ' -f1-4)"
check "an inbox lease of one" 200 "$(curl -s -m 20 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $IT" "$RELAY_URL/v1/inbox/box?lease=true&max=1")"
wait_until 20 '[ "$(figures box | cut -d" " -f1-2)" = "3 1" ]'
check "after the lease: 3 pending, 1 in flight" "3 1" "$(figures box | cut -d' ' -f1-2)"
check "the inbox's figures as JetStream's" "$(js box)" "$(figures box | cut -d' ' -f1-3)"
check "gauge for the inbox" 3 "$(metric 'treaty_relay_subscriber_pending{subscriber="box"}')"

# The client: the same figures as a table, or the JSON.
check "treaty admin status: exit 0" 0 "$(tr_run st TREATY_TOKEN=$AT -- admin status --url "$RELAY_URL")"
check "treaty admin status: a header (the drops counted since the start), then a line per subscriber" "NAME KIND SOURCE STATE PENDING IN-FLIGHT REDELIVERED DROPPED-SINCE-START FILTER|stall push config active 3 2 0 0 evt.*.shop.stall.>|box pull config active 3 1 0 0 evt.*.shop.box.>" \
    "$(tr -s ' ' < "$T/st.out" | grep -E '^(NAME|stall|box) ' | tr '\n' '|' | sed 's/|$//')"
check "treaty admin status --json: the relay's answer" "0 3" \
    "$(tr_run stj TREATY_TOKEN=$AT -- admin status --json --url "$RELAY_URL") $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["subscribers"]))' "$T/stj.out" 2>&1)"
check "treaty admin status: 1 with a producer's token" 1 "$(tr_run st403 TREATY_TOKEN=$TOKEN -- admin status --url "$RELAY_URL")"
check "treaty admin status: 75 when no relay answers, after the attempts" 75 \
    "$(tr_run st75 TREATY_TOKEN=$AT -- admin status --attempts 2 --retry-base 10 --retry-cap 50 --url "http://127.0.0.1:$(free_port)")"
check "treaty admin: 2 for an unknown command" 2 "$(tr_run stu TREATY_TOKEN=$AT -- admin nothing --url "$RELAY_URL")"

# A drop: counted, and its record carries the event's WORK sequence.
post evt.acme.shop.hook.created reject-1 x
wait_until 20 '[ "$(figures hook | cut -d" " -f4)" = 1 ]'
check "a 400: one dropped, nothing owed" "0 0 0 1" "$(figures hook | cut -d' ' -f1-4)"
last WORK evt.acme.shop.hook.created
wseq=$(printf '%s\n' "$HDRS" | sed -n 's/^Nats-Sequence: //p')
[ -n "$wseq" ] || wseq=$(python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw '$JS.API.STREAM.MSG.GET.WORK' \
    '{"last_by_subj":"evt.acme.shop.hook.created"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["message"]["seq"])')
wait_until 20 '"$JSGET" "$NATS_URL_T" last AUDIT audit.relay.treaty.delivery.dropped 2>/dev/null | grep -q reject-1'
drop=$("$JSGET" "$NATS_URL_T" last AUDIT audit.relay.treaty.delivery.dropped 2>/dev/null)
check_match "the drop record carries the event's WORK sequence" "\"eventId\":\"reject-1\".*\"sequence\":$wseq[,}]" "$drop"

# GET /v1/admin/drops: the records of one subscriber, oldest first, paged.
post evt.acme.shop.hook.created reject-2 x
# The relay's own subjects are refused to every producer, even one allowed
# audit.relay.> (forged records would fill the bounded scans).
check "a producer's event on the drop records' subject: 403, the relay's own" 403 \
    "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$RELAY_URL/v1/events/audit.relay.treaty.delivery.dropped" \
    -H "Authorization: Bearer $TOKEN" -H 'ce-specversion: 1.0' -H 'ce-id: forged-1' \
    -H 'ce-source: /x' -H 'ce-type: dev.treaty.delivery.dropped.v1' -H 'Content-Type: application/json' \
    --data-binary '{"subscriber":"hook","eventId":"forged","sequence":1}')"
post evt.acme.shop.hook.created reject-3 x
wait_until 20 '[ "$(figures hook | cut -d" " -f4)" = 3 ]'
# drops QUERY: "eventId,eventId,... next" of one page, or "ERROR: ...".
drops() {
	local st
	st=$(aget "drops?$1" "$AT")
	[ "$st" = 200 ] || { echo "ERROR: GET drops?$1: $st $(abody)"; return 1; }
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(",".join(r["eventId"] for r in d["drops"]), d["next"])
' "$T/abody" 2>&1 || echo "ERROR: not JSON: $(abody)"
}
check "drops: every record of the subscriber, oldest first, none forged" "reject-1,reject-2,reject-3 None" \
    "$(drops "subscriber=hook&since=$T0")"
page1=$(drops "subscriber=hook&since=$T0&limit=2")
check_match "drops: a page of two, and where the rest begins" '^reject-1,reject-2 [0-9-]+T[0-9:]+\.[0-9]{9}Z$' "$page1"
check "drops: the next page from there" "reject-3 None" "$(drops "subscriber=hook&since=${page1#* }")"
check "drops: another subscriber's are not listed" " None" "$(drops "subscriber=stall&since=$T0")"
check "drops: each record's data, its sequence and its time" "hook reject-1 /test evt.acme.shop.hook.created 1 400 None int time" \
    "$(aget "drops?subscriber=hook&since=$T0&limit=1" "$AT" >/dev/null; python3 -c '
import json, sys, datetime
r = json.load(open(sys.argv[1]))["drops"][0]
t = datetime.datetime.strptime(r["time"][:26] + "Z", "%Y-%m-%dT%H:%M:%S.%fZ")
print(r["subscriber"], r["eventId"], r["source"], r["subject"], r["attempts"], r["status"], r["error"],
      type(r["sequence"]).__name__, "time" if abs((datetime.datetime.utcnow() - t).total_seconds()) < 600 else r["time"])
' "$T/abody" 2>&1)"
check "drops: subscriber missing: 400" "400 bad_request" "$(aget "drops?since=$T0" "$AT") $(aerr)"
check "drops: since not RFC 3339: 400" "400 bad_request" "$(aget "drops?subscriber=hook&since=yesterday" "$AT") $(aerr)"
check "drops: since in the future: 400" "400 bad_request" "$(aget "drops?subscriber=hook&since=2999-01-01T00:00:00Z" "$AT") $(aerr)"
check "drops: limit 0: 400" "400 bad_request" "$(aget "drops?subscriber=hook&since=$T0&limit=0" "$AT") $(aerr)"
check "drops: limit 1001: 400" "400 bad_request" "$(aget "drops?subscriber=hook&since=$T0&limit=1001" "$AT") $(aerr)"
check "drops: an unknown subscriber: 404" "404 unknown_subscriber" "$(aget "drops?subscriber=nobody&since=$T0" "$AT") $(aerr)"
check "drops: without a token: 401" 401 "$(aget "drops?subscriber=hook&since=$T0")"
check "drops: since after the last record: none" " None" "$(drops "subscriber=hook&since=$(now_rfc3339)")"
check "drops: since the epoch: all of them" "reject-1,reject-2,reject-3 None" "$(drops "subscriber=hook&since=1970-01-01T00:00:00Z")"
check "drops: an offset, written %2B in a query" "reject-1,reject-2,reject-3 None" \
    "$(drops "subscriber=hook&since=$(date -u -d "${T0%.*}Z" +%Y-%m-%dT%H:%M:%S)%2B00:00")"

# treaty admin drops: every page, as a table or as JSON lines.
check "treaty admin drops: exit 0" 0 "$(tr_run dr TREATY_TOKEN=$AT -- admin drops --subscriber hook --since "$T0" --url "$RELAY_URL")"
check "treaty admin drops: a header and one line per record, oldest first, with subject and source" "TIME SEQUENCE ATTEMPTS STATUS EVENT-ID SUBJECT SOURCE ERROR|1 400 reject-1 evt.acme.shop.hook.created /test -|1 400 reject-2 evt.acme.shop.hook.created /test -|1 400 reject-3 evt.acme.shop.hook.created /test -" \
    "$(tr -s ' ' < "$T/dr.out" | sed -E 's/^[0-9T:.Z-]+ [0-9]+ //' | tr '\n' '|' | sed 's/|$//')"
check "treaty admin drops --page 1 --json: every page followed, one JSON object a line" "0 reject-1 reject-2 reject-3" \
    "$(tr_run drj TREATY_TOKEN=$AT -- admin drops --subscriber hook --since "$T0" --page 1 --json --url "$RELAY_URL") $(python3 -c '
import json, sys
print(" ".join(json.loads(l)["eventId"] for l in open(sys.argv[1])))' "$T/drj.out" 2>&1)"
check "treaty admin drops --limit 2" "0 2" "$(tr_run drl TREATY_TOKEN=$AT -- admin drops --subscriber hook --since "$T0" --limit 2 --json --url "$RELAY_URL") $(wc -l < "$T/drl.out")"
check "treaty admin drops: an unknown subscriber is 1" 1 "$(tr_run dru TREATY_TOKEN=$AT -- admin drops --subscriber nobody --since "$T0" --url "$RELAY_URL")"
check "treaty admin drops: --since not RFC 3339 is 2" 2 "$(tr_run drs TREATY_TOKEN=$AT -- admin drops --subscriber hook --since yesterday --url "$RELAY_URL")"
# A relative --since: 1h takes in the three records, 0s (now) none, so it
# is counted back from now (an hour after the epoch would take them all).
check "treaty admin drops --since 1h: the three records" "0 reject-1 reject-2 reject-3" \
    "$(tr_run drh TREATY_TOKEN=$AT -- admin drops --subscriber hook --since 1h --json --url "$RELAY_URL") $(python3 -c '
import json, sys
print(" ".join(json.loads(l)["eventId"] for l in open(sys.argv[1])))' "$T/drh.out" 2>&1)"
check "treaty admin drops --since 0s: none (the header alone)" "0 1 0" \
    "$(tr_run dr0 TREATY_TOKEN=$AT -- admin drops --subscriber hook --since 0s --url "$RELAY_URL") $(grep -c '^TIME ' "$T/dr0.out") $(grep -c reject "$T/dr0.out")"
check "treaty admin drops: none since then: the header alone" "0 1" \
    "$(tr_run dre TREATY_TOKEN=$AT -- admin drops --subscriber stall --since "$T0" --url "$RELAY_URL") $(grep -c '^TIME ' "$T/dre.out")"
# An answer that is not what the relay writes: 1, not 0.
mkdir -p "$T/fake/v1/admin"
printf '<html>' > "$T/fake/v1/admin/subscribers"
printf '{"drops":"nope"}' > "$T/fake/v1/admin/drops"
FPORT=$(free_port)
(cd "$T/fake" && exec python3 -m http.server -b 127.0.0.1 "$FPORT" >/dev/null 2>&1) &
PIDS+=($!)
wait_until 10 "port_open $FPORT"
check "treaty admin status: an answer that is not a list of subscribers is 1" 1 \
    "$(tr_run fk1 TREATY_TOKEN=$AT -- admin status --url "http://127.0.0.1:$FPORT")"
check "treaty admin drops: an answer that is not a list of drops is 1" 1 \
    "$(tr_run fk2 TREATY_TOKEN=$AT -- admin drops --subscriber hook --since "$T0" --url "http://127.0.0.1:$FPORT")"

# Consumers no subscriber owns (issue 30): gone's and gonebox's, left by
# the first relay, are listed with JetStream's figures; one is deleted;
# a configured subscriber's, a running replay's and another program's are
# refused (409) and stay.
post evt.acme.shop.gone.created gone-1 x
check "an event for the removed subscriber: stored" 202 "$STATUS"
python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw '$JS.API.CONSUMER.DURABLE.CREATE.WORK.other-app' \
    '{"stream_name":"WORK","config":{"durable_name":"other-app","ack_policy":"explicit","filter_subject":"evt.>"}}' > /dev/null
check "another program's consumer on WORK (the witness of what is not listed)" "ack_pending=0" \
    "$(consumer_state other-app | cut -d' ' -f1)"
check "POST replay of stall (it stays running: stall's window is held)" 202 "$(areq POST "subscribers/stall/replay?since=$T0")"
RID=$(afield replay)
# leftovers: "name kind filter pending inFlight lastDelivered subscriber,..." of
# GET /v1/admin/consumers, or "ERROR: ...".
leftovers() {
	local st
	st=$(aget consumers "$AT")
	[ "$st" = 200 ] || { echo "ERROR: GET consumers: $st $(abody)"; return 1; }
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" | ".join(" ".join(str(c[k]) for k in ("name", "subscriber", "kind", "filter", "pending", "inFlight", "lastDelivered"))
      + (" created" if c["created"].endswith("Z") else " " + c["created"]) for c in d["consumers"]), "more=%s" % d["more"])
' "$T/abody" 2>&1 || echo "ERROR: not JSON: $(abody)"
}
wait_until 10 '[[ $(leftovers) == *"relay-gone gone push evt.*.shop.gone.> 1 "* ]]'
check "GET consumers: the two left behind, with JetStream's figures; no configured one, no replay's, no other program's" \
    "relay-gone gone push evt.*.shop.gone.> 1 0 None created | relay-gonebox gonebox pull evt.*.shop.gonebox.> 0 0 None created more=False" \
    "$(leftovers)"
check "treaty admin consumers: a header, then a line per consumer" \
    "0 NAME KIND PENDING IN-FLIGHT LAST-DELIVERED FILTER|relay-gone push 1 0 - evt.*.shop.gone.>|relay-gonebox pull 0 0 - evt.*.shop.gonebox.>" \
    "$(tr_run co TREATY_TOKEN=$AT -- admin consumers --url "$RELAY_URL") $(tr -s ' ' < "$T/co.out" | tr '\n' '|' | sed 's/|$//')"
check "treaty admin consumers --json: the relay's answer" "0 2" \
    "$(tr_run coj TREATY_TOKEN=$AT -- admin consumers --json --url "$RELAY_URL") $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["consumers"]))' "$T/coj.out" 2>&1)"
check "DELETE a configured subscriber's consumer: 409 consumer_in_use" "409 consumer_in_use" \
    "$(areq DELETE consumers/relay-stall) $(BODY=$(abody); errcode)"
check "DELETE a running replay's consumer: 409 consumer_in_use" "409 consumer_in_use running" \
    "$(areq DELETE "consumers/replay-$RID") $(BODY=$(abody); errcode) $(report "$RID" | cut -d' ' -f1)"
check "DELETE another program's consumer: 409 not_relay_consumer" "409 not_relay_consumer" \
    "$(areq DELETE consumers/other-app) $(BODY=$(abody); errcode)"
check "  all three still in JetStream" "ok ok ok" "$(for c in relay-stall "replay-$RID" other-app; do
	[[ $(consumer_state "$c") == ack_pending=* ]] && printf 'ok ' || printf '%s ' "$c"; done | sed 's/ $//')"
check "treaty admin consumers --delete of a configured subscriber's: 1, the relay's reason" \
    "1 treaty: admin: 409: a subscriber of this instance's configuration delivers from it; remove the subscriber (and reload) first" \
    "$(tr_run cod1 TREATY_TOKEN=$AT -- admin consumers --delete relay-hook --url "$RELAY_URL") $(cat "$T/cod1.err")"
check "GET on a consumer: 405 with Allow: DELETE" "405 DELETE" \
    "$(areq GET consumers/relay-gone) $(sed -n 's/^Allow: //Ip' "$T/ahdr" | tr -d '\r')"
check "POST on the list: 405" 405 "$(areq POST consumers)"
check "DELETE without a token: 401" 401 \
    "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$RELAY_URL/v1/admin/consumers/relay-gone")"
check "treaty admin consumers --delete relay-gone: exit 0, said" "0 consumer relay-gone deleted" \
    "$(tr_run cod TREATY_TOKEN=$AT -- admin consumers --delete relay-gone --url "$RELAY_URL") $(cat "$T/cod.out")"
check "  gone from JetStream (its answer: consumer not found, 10014)" 1 \
    "$(consumer_state relay-gone | grep -c '"err_code": 10014')"
check "  logged" "logged" "$(in_log 'msg="leftover consumer deleted" consumer=relay-gone')"
check "  the list holds gonebox's alone" "relay-gonebox gonebox pull evt.*.shop.gonebox.> 0 0 None created more=False" "$(leftovers)"
check "DELETE it again: 404 unknown_consumer" "404 unknown_consumer" "$(areq DELETE consumers/relay-gone) $(BODY=$(abody); errcode)"
# A name no subscriber can have would reach JetStream's API as another
# subject (a '.' adds a token, '*' a wildcard): refused before it is asked.
check "DELETE relay-<a name no subscriber can have> (. * > %20 %2E): 404 each, JetStream not asked" \
    "404 unknown_consumer|404 unknown_consumer|404 unknown_consumer|404 unknown_consumer|404 unknown_consumer" \
    "$(for n in relay-a.b 'relay-%2A' 'relay-%3E' 'relay-a%20b' 'relay-gonebox%2Ex'; do
	printf '%s|' "$(areq DELETE "consumers/$n") $(BODY=$(abody); errcode)"; done | sed 's/|$//')"
check "  gonebox's consumer still there" "ok" "$([[ $(consumer_state relay-gonebox) == ack_pending=* ]] && echo ok)"
check "treaty admin consumers --delete of no consumer: 1" "1" \
    "$(tr_run cod2 TREATY_TOKEN=$AT -- admin consumers --delete relay-gone --url "$RELAY_URL")"
check "treaty admin status --delete: usage, 2" 2 "$(tr_run cou TREATY_TOKEN=$AT -- admin status --delete relay-x --url "$RELAY_URL")"
check "the replay still runs, stall's consumer still delivers its figures" "running 1" \
    "$(report "$RID" | cut -d' ' -f1) $([[ $(figures stall) =~ ^[0-9]+\ [0-9]+ ]] && echo 1)"
areq DELETE "replays/$RID" > /dev/null

# NATS gone: the figures become unknown (null) within 5 s, not stale.
stop_nats
wait_until 15 '[ "$(figures stall | cut -d" " -f1-3)" = "None None None" ]'
check "JetStream gone: figures null after at most 5 s" "None None None" "$(figures stall | cut -d' ' -f1-3)"
m=$(metrics_text)
check "JetStream gone: no gauge (/metrics answers, without it)" "0" \
    "$([[ $m == *"ERROR: "* ]] && echo "$m" || printf '%s\n' "$m" | grep -c '^treaty_relay_subscriber_pending{subscriber="stall"}')"
check "still answering" 200 "$(aget subscribers "$AT")"
check "drops with JetStream gone: 503" "503 unavailable" "$(aget "drops?subscriber=hook&since=$T0" "$AT") $(aerr)"
check "consumers with JetStream gone: 503" "503 unavailable" "$(aget consumers "$AT") $(aerr)"
check "treaty admin drops with JetStream gone: 75, the relay's detail after the attempts" \
    "75 treaty: admin: still failing after 2 attempts: 503: JetStream is not available; try again" \
    "$(tr_run dr503 TREATY_TOKEN=$AT -- admin drops --subscriber hook --since "$T0" --attempts 2 --retry-base 1 --retry-cap 2 --url "$RELAY_URL") $(grep '^treaty: ' "$T/dr503.err")"
finish
