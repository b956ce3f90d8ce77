#!/usr/bin/env bash
# Batches (SPEC 14): POST /v1/events/<subject> with
# application/cloudevents-batch+json.  Each event stored exactly as the
# same event sent alone, the first bad event's index with nothing stored,
# empty and over-size batches, duplicates inside and across batches, a
# partial store answered 503 with stored flags and resent, NATS stopped
# under a batch, push delivery of batched events, metrics per event.
. "$(dirname "$0")/lib.sh"
SECRET=test-secret-0123456789
RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
export TREATY_RELAY_SUBSCRIBERS='[{"name":"hook","url":"http://127.0.0.1:'$RPORT'/in","secret":"'$SECRET'","filter":"evt.*.ship.>"}]'
export TREATY_RELAY_PUBLISH_TIMEOUT_MS=2000
PRODUCERS='[{"name":"alpha","tokenSha256":"'$TOKEN_SHA'","subjects":["evt.*.shop.>","evt.*.ship.>"]},{"name":"beta","tokenSha256":"'$OTHER_SHA'","subjects":["evt.*.other.>"]}]'
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

S=evt.acme.shop.order.created
TY=dev.shop.order.created.v1
BCT=application/cloudevents-batch+json

# bpost SUBJECT JSON [curl args...]: a batch POST (token TOK, type BT).
bpost() {
	local subject=$1 json=$2
	shift 2
	send POST "/v1/events/$subject" -H "Authorization: Bearer ${TOK-$TOKEN}" \
	    -H "Content-Type: ${BT-$BCT}" --data-binary "$json" "$@"
}
# sev SUBJECT JSON: one structured-mode event, alone.
sev() {
	send POST "/v1/events/$1" -H "Authorization: Bearer $TOKEN" \
	    -H "Content-Type: application/cloudevents+json" --data-binary "$2"
}
# ce ID [MORE [TYPE]]: a structured event, MORE appended inside the object.
ce() {
	printf '{"specversion":"1.0","id":"%s","source":"/test","type":"%s"%s}' \
	    "$1" "${3-$TY}" "${2-}"
}
# msg SEQ: WORK's message SEQ into HDRS (sorted, Nats-Msg-Id's and ce-id's
# id part replaced by ID) and $T/payload.
msg() {
	local n
	"$JSGET" "$NATS_URL_T" msg WORK "$1" > "$T/msg" 2> "$T/msg.err" || {
		HDRS="ERROR: jsget msg $1: $(cat "$T/msg.err")"
		return 1
	}
	n=$(sed '/^$/q' "$T/msg" | wc -c)
	HDRS=$(sed '/^$/q' "$T/msg" | sed '/^$/d' |
	    sed -E 's/^(ce-id: |Nats-Msg-Id: alpha:)[a-z0-9]+-(single|batch)/\1ID/' | LC_ALL=C sort)
	tail -c +$((n + 1)) "$T/msg" > "$T/payload"
}
# results: the results of $BODY as "id:duplicate[:stored]" words.
results() {
	printf '%s' "$BODY" | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
    print(" ".join("%s:%s%s" % (r["id"], str(r["duplicate"]).lower(),
        ":" + str(r["stored"]).lower() if "stored" in r else "")
        for r in d["results"]))
except Exception as e:
    print("ERROR: %s" % e)'
}
# bad CODE INDEX: $BODY is {"error":CODE,"detail":..,"index":INDEX}
# (INDEX "-" for none).
berr() {
	printf '%s' "$BODY" | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
    keys = sorted(d)
    ok = keys == (["detail", "error", "index"] if "index" in d else ["detail", "error"])
    print(d["error"], d.get("index", "-"), "ok" if ok and d["detail"] else "keys %s" % keys)
except Exception as e:
    print("ERROR: %s" % e)'
}

# --- each event stored as the same event sent alone ----------------------
JSONDATA=',"data":{"a":[1,true,null],"b":"x"}'
TEXTDATA=',"datacontenttype":"text/plain; charset=utf-8","data":"caf\u00e9 \"q\"\n","time":"2026-12-01T10:00:00Z","subject":"o 1","traceid":"t%1"'
B64DATA=',"datacontenttype":"application/octet-stream","data_base64":"eAB5//6ADQoA"'
base=$(count WORK)
for k in json text b64; do
	case $k in json) m=$JSONDATA ;; text) m=$TEXTDATA ;; b64) m=$B64DATA ;; esac
	sev $S "$(ce $k-single "$m")"
	[ "$STATUS" = 202 ] || fail "single $k event stored" "$STATUS $BODY"
done
bpost $S "[$(ce json-batch "$JSONDATA"),
  $(ce text-batch "$TEXTDATA") , $(ce b64-batch "$B64DATA")]"
check "202 with the results in the batch's order" \
    '202 {"results":[{"id":"json-batch","duplicate":false},{"id":"text-batch","duplicate":false},{"id":"b64-batch","duplicate":false}]}' \
    "$STATUS $BODY"
check "three events stored" $((base + 6)) "$(count WORK)"
i=0
for k in json text b64; do
	i=$((i + 1))
	msg $((base + i)); sh=$HDRS; cp "$T/payload" "$T/single"
	msg $((base + 3 + i))
	check "$k data: stored headers equal the single event's" "$sh" "$HDRS"
	if [ -n "$sh" ] && cmp -s "$T/single" "$T/payload"; then
		ok "$k data: stored payload equals the single event's"
	else
		fail "$k data: stored payload equals the single event's" \
		    "$(od -c "$T/payload" | head -2 | tr '\n' ' ')"
	fi
done
msg $((base + 6))
check "Nats-Msg-Id is producer:id in a batch too" "alpha:b64-batch" \
    "$("$JSGET" "$NATS_URL_T" msg WORK $((base + 6)) | sed -n 's/^Nats-Msg-Id: //p')"
check "base64 data decoded" "$(printf 'x\0y\377\376\200\r\n\0' | od -c)" "$(od -c < "$T/payload")"

# --- the first bad event refuses the batch, with its index ----------------
BASE=$(counts)
bpost $S "[$(ce i-0),$(ce i-1),$(ce i-2 '' dev.shop.order),$(ce i-3 '' dev.shop.item.created.v1)]"
check "bad type at index 2: 422 bad_type, index 2" "422 bad_type 2 ok" "$STATUS $(berr)"
check "nothing of it stored" "$BASE" "$(counts)"
bpost $S "[$(ce i-0),$(ce i-1 '' dev.shop.item.created.v1),nope]"
check "type not matching the subject at index 1" "422 type_does_not_match_subject 1 ok" "$STATUS $(berr)"
bpost $S "[$(ce i-0),{\"specversion\":\"1.0\",\"source\":\"/t\",\"type\":\"$TY\"}]"
check "an event without id at index 1: 400 bad_event" "400 bad_event 1 ok" "$STATUS $(berr)"
bpost $S "[$(ce i-0), nope, $(ce i-2)]"
check "an element that is not JSON at index 1" "400 bad_event 1 ok" "$STATUS $(berr)"
bpost $S "[$(ce i-0),,$(ce i-2)]"
check "an empty element at index 1" "400 bad_event 1 ok" "$STATUS $(berr)"
bpost $S "[$(ce i-0 ',"data_base64":"!!"')]"
check "bad data_base64 at index 0" "400 bad_event 0 ok" "$STATUS $(berr)"
bpost $S "[$(ce i-0),\"text\"]"
check "a string element: 400 bad_event at index 1" "400 bad_event 1 ok" "$STATUS $(berr)"
# SPEC 13: a key given twice, here inside the data of the event at index 2.
bpost $S "[$(ce i-0),$(ce i-1),$(ce i-2 ',"data":{"a":1,"b":[{"c":1,"c":2}]}')]"
check "a key given twice in an event at index 2: named, with its index" \
    '400 {"error":"bad_event","detail":"key data.b[0].c given twice","index":2}' "$STATUS $BODY"
check "nothing stored by any refused batch" "$BASE" "$(counts)"
check "the events of refused batches are new afterwards" '202 {"results":[{"id":"i-0","duplicate":false}]}' \
    "$(bpost $S "[$(ce i-0)]"; echo "$STATUS $BODY")"
BASE=$(counts)

# --- empty, not an array, too many, too large ----------------------------
bpost $S "[]"
check "empty batch: 400 bad_event without index" "400 bad_event - ok" "$STATUS $(berr)"
bpost $S " [ ] "
check "empty batch with whitespace" "400 bad_event - ok" "$STATUS $(berr)"
bpost $S "$(ce single-in-batch)"
check "an object, not an array: 400 bad_event" "400 bad_event - ok" "$STATUS $(berr)"
bpost $S "[$(ce i-x)"
check "an array never closed: 400 bad_event" "400 bad_event - ok" "$STATUS $(berr)"
python3 -c '
import sys
ev = "{\"specversion\":\"1.0\",\"id\":\"m-%d\",\"source\":\"/t\",\"type\":\"'$TY'\"}"
n = int(sys.argv[1])
sys.stdout.write("[" + ",".join(ev % i for i in range(n)) + "]")' 1001 > "$T/b1001"
bpost $S "@$T/b1001"
check "1,001 events: 413 too_large" "413 too_large - ok" "$STATUS $(berr)"
head -c 1048600 /dev/zero | tr '\0' ' ' > "$T/big"
printf '[%s]' "$(ce big)" >> "$T/big"
send POST "/v1/events/$S" -H "Authorization: Bearer $TOKEN" -H "Content-Type: $BCT" \
    --data-binary "@$T/big"
check "a body over 1 MiB: 413 too_large" "413 too_large - ok" "$STATUS $(berr)"
check "nothing stored" "$BASE" "$(counts)"
python3 -c '
import sys
ev = "{\"specversion\":\"1.0\",\"id\":\"k-%d\",\"source\":\"/t\",\"type\":\"'$TY'\",\"data\":%d}"
sys.stdout.write("[" + ",".join(ev % (i, i) for i in range(1000)) + "]")' > "$T/b1000"
send POST "/v1/events/$S" -H "Authorization: Bearer $TOKEN" -H "Content-Type: $BCT" \
    --data-binary "@$T/b1000"
check "1,000 events: 202" 202 "$STATUS"
check "1,000 results, none duplicate" "1000 0" \
    "$(printf '%s' "$BODY" | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"]; print(len(r), sum(x["duplicate"] for x in r))' 2>&1)"
check "1,000 events stored" "$(( ${BASE% *} + 1000 )) ${BASE#* }" "$(counts)"
BASE=$(counts)

# --- the request's checks come first --------------------------------------
TOK=wrong bpost $S "[$(ce r-1)]"
check "bad token: 401" "401 unauthenticated - ok" "$STATUS $(berr)"
TOK=$OTHER_TOKEN bpost $S "[$(ce r-1)]"
check "another producer's subject: 403" "403 subject_not_allowed - ok" "$STATUS $(berr)"
bpost evt.acme.shop "[$(ce r-1)]"
check "bad subject: 400 bad_subject" "400 bad_subject - ok" "$STATUS $(berr)"
BT="application/cloudevents-batch+json; charset=utf-8" bpost $S "[$(ce r-1)]"
check "media type parameters are allowed" '202 {"results":[{"id":"r-1","duplicate":false}]}' "$STATUS $BODY"
BASE=$(counts)

# --- duplicates inside and across batches ---------------------------------
bpost $S "[$(ce d-1),$(ce d-2),$(ce d-1)]"
check "a duplicate inside a batch" "202 d-1:false d-2:false d-1:true" "$STATUS $(results)"
check "two stored" "$(( ${BASE% *} + 2 )) ${BASE#* }" "$(counts)"
bpost $S "[$(ce d-2),$(ce d-3),$(ce d-1)]"
check "duplicates across batches" "202 d-2:true d-3:false d-1:true" "$STATUS $(results)"
ID=d-3 ev $S
check "a batched id sent alone is a duplicate" '202 {"id":"d-3","duplicate":true}' "$STATUS $BODY"
check "three stored in all" "$(( ${BASE% *} + 3 )) ${BASE#* }" "$(counts)"

# --- a partial store: 503 with stored flags, then resent ------------------
# WORK made to take two more messages and refuse the rest (discard new):
# JetStream refuses the last events of the batch, not the first.
wcfg() {
	python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw '$JS.API.STREAM.INFO.WORK' |
	    python3 -c '
import json, sys
c = json.load(sys.stdin)["config"]
c["max_msgs"] = int(sys.argv[1]); c["discard"] = sys.argv[2]
print(json.dumps(c))' "$1" "$2"
}
cfg=$(wcfg $(( $(count WORK) + 2 )) new)
python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw '$JS.API.STREAM.UPDATE.WORK' "$cfg" > "$T/upd"
check_match "WORK limited to two more" '"max_msgs":' "$(cat "$T/upd")"
bpost $S "[$(ce p-1),$(ce d-1),$(ce p-2),$(ce p-3),$(ce p-4)]"
check "503 publish_failed with stored flags" \
    "503 p-1:false:true d-1:true:true p-2:false:true p-3:false:false p-4:false:false" "$STATUS $(results)"
check "503 carries Retry-After" 2 "$(hdr Retry-After)"
check "503 names the error" publish_failed "$(printf '%s' "$BODY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["error"])' 2>&1)"
cfg=$(wcfg -1 old)
python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw '$JS.API.STREAM.UPDATE.WORK' "$cfg" > "$T/upd"
bpost $S "[$(ce p-1),$(ce d-1),$(ce p-2),$(ce p-3),$(ce p-4)]"
check "the same batch again: the stored ones are duplicates" \
    "202 p-1:true d-1:true p-2:true p-3:false p-4:false" "$STATUS $(results)"

# --- NATS stopped under a batch, then resent ------------------------------
# nats-server frozen (SIGSTOP): no acknowledgement comes, the publishes time
# out (2 s here) and the batch is answered 503, nothing marked stored.  What
# the server then takes when it runs again is a duplicate on the resend.
BASE=$(count WORK)
kill -STOP "$NATS_PID"
bpost $S "[$(ce n-1),$(ce n-2),$(ce n-3)]"
kill -CONT "$NATS_PID"
check "NATS frozen: 503, no event marked stored" "503 n-1:false:false n-2:false:false n-3:false:false" "$STATUS $(results)"
wait_until 15 healthz_ok
# The relay answers 503 until NATS is back: resent until it is stored.
wait_until 10 'bpost $S "[$(ce n-1),$(ce n-2),$(ce n-3)]"; [ "$STATUS" = 202 ]'
check_match "resent after NATS is back: 202" '^202 n-1:(true|false) n-2:(true|false) n-3:(true|false)$' "$STATUS $(results)"
check "each stored once" $((BASE + 3)) "$(count WORK)"

# --- push delivery of batched events --------------------------------------
bpost evt.acme.ship.parcel.sent "[$(ce ok-b1 ',"data":"one"' dev.ship.parcel.sent.v1),$(ce ok-b2 ',"data":"two"' dev.ship.parcel.sent.v1)]"
check "202 for the batch to a push subscriber" "202 ok-b1:false ok-b2:false" "$STATUS $(results)"
wait_until 15 'test "$(grep -c "\"ce-id\": \"ok-b[12]\"" "$T/deliveries" 2>/dev/null)" -ge 2'
verify=$(grep -F '"ce-id": "ok-b' "$T/deliveries" | python3 -c '
import sys, json, hmac, hashlib
out = []
for line in sys.stdin:
    d = json.loads(line); h = d["headers"]; body = bytes.fromhex(d["body"])
    parts = dict(p.split("=", 1) for p in h.get("x-treaty-signature", "").split(",") if "=" in p)
    want = hmac.new(sys.argv[1].encode(), (parts.get("t", "") + "." + h["ce-id"] + ".").encode() + body, hashlib.sha256).hexdigest()
    out.append("%s=%s:%s" % (h["ce-id"], body.decode(), "signed" if hmac.compare_digest(want, parts.get("v1", "")) else "BAD"))
print(" ".join(sorted(out)))' "$SECRET")
check "both batched events delivered, signed, with their data" 'ok-b1="one":signed ok-b2="two":signed' "$verify"

# --- metrics count events -------------------------------------------------
stored=$(metric 'treaty_relay_events_stored_total{stream="WORK"}')
bpost $S "[$(ce c-1),$(ce c-2),$(ce c-3),$(ce c-4)]"
check "202 for four" 202 "$STATUS"
check "events stored counts four for one request" "$((stored + 4))" \
    "$(metric 'treaty_relay_events_stored_total{stream="WORK"}')"

check_no_sanitizer_report "no sanitizer report" "$RELAY_LOG"
finish
