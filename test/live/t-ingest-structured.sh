#!/usr/bin/env bash
# Ingest, structured mode (Content-Type: application/cloudevents+json):
# stored exactly as the binary-mode equivalent (SPEC 2), data / data_base64
# rules, refusals, duplicates.
. "$(dirname "$0")/lib.sh"
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

S=evt.acme.shop.order.created
TY=dev.shop.order.created.v1

# sev SUBJECT JSON [curl args...]: a structured-mode POST (token TOK).
sev() {
	local subject=$1 json=$2
	shift 2
	send POST "/v1/events/$subject" -H "Authorization: Bearer ${TOK-$TOKEN}" \
	    -H "Content-Type: ${SCT-application/cloudevents+json}" \
	    --data-binary "$json" "$@"
}

# ce ID [MORE]: a structured event for $S with id ID, MORE appended
# inside the object (e.g. ',"data":1').
ce() {
	printf '{"specversion":"1.0","id":"%s","source":"/test","type":"%s"%s}' \
	    "$1" "$TY" "${2-}"
}

# --- data as JSON -------------------------------------------------------
sev $S "$(ce s-obj ', "data" : { "a" : 1 , "b" : [ true , null ] } ')"
check "202 body in structured mode" '202 {"id":"s-obj","duplicate":false}' "$STATUS $BODY"
last WORK $S
check "object data stored as its compact JSON text" '{"a":1,"b":[true,null]}' "$(cat "$T/payload")"
check_match "content-type absent or application/json without datacontenttype" \
    '^(application/json)?$' "$(shdr content-type)"
check "stored headers" "Nats-Msg-Id: alpha:s-obj
Treaty-Producer: alpha
ce-id: s-obj
ce-source: /test
ce-specversion: 1.0
ce-type: $TY
$(if [ -n "$(shdr content-type)" ]; then echo "content-type: application/json"; fi)
subject: $S" "$HDRS"

sev $S "$(ce s-str ',"data":"hello"')"
check "202 for string data" 202 "$STATUS"
last WORK $S
check "string data without datacontenttype keeps its quotes" '"hello"' "$(cat "$T/payload")"
sev $S "$(ce s-strjson ',"datacontenttype":"application/json","data":"hello"')"
last WORK $S
check "string data, application/json: quotes kept" '"hello"' "$(cat "$T/payload")"
check "content-type application/json stored" application/json "$(shdr content-type)"
sev $S "$(ce s-strplus ',"datacontenttype":"application/vnd.acme+json","data":"hi"')"
last WORK $S
check "string data, */*+json: quotes kept" '"hi"' "$(cat "$T/payload")"
check "content-type application/vnd.acme+json stored" application/vnd.acme+json "$(shdr content-type)"
sev $S "$(ce s-num ',"data":42')"
last WORK $S
check "number data stored as JSON text" 42 "$(cat "$T/payload")"

# --- data as text -------------------------------------------------------
sev $S "$(ce s-text ',"datacontenttype":"text/plain; charset=utf-8","data":"caf\u00e9 \"q\"\n"')"
check "202 for text data" '202 {"id":"s-text","duplicate":false}' "$STATUS $BODY"
last WORK $S
printf 'caf\303\251 "q"\n' > "$T/want"
if cmp -s "$T/want" "$T/payload"; then ok "text/plain string data stored as raw UTF-8 bytes"
else fail "text/plain string data stored as raw UTF-8 bytes" "got $(od -c "$T/payload" | head -2 | tr '\n' ' ')"; fi
check "content-type text/plain stored" "text/plain; charset=utf-8" "$(shdr content-type)"

# --- data_base64 --------------------------------------------------------
# 9, 8 and 7 bytes: no padding, "=" and "==".
for n in 9 8 7; do
	printf 'x\0y\377\376\200\r\n\0' | head -c $n > "$T/bin"
	b64=$(base64 -w0 < "$T/bin")
	sev $S "$(ce s-b64-$n ',"datacontenttype":"application/octet-stream","data_base64":"'"$b64"'"')"
	check "202 for data_base64 of $n bytes ($b64)" "202 {\"id\":\"s-b64-$n\",\"duplicate\":false}" "$STATUS $BODY"
	last WORK $S
	if [ "$(shdr Nats-Msg-Id)" = "alpha:s-b64-$n" ] && cmp -s "$T/bin" "$T/payload"; then
		ok "data_base64 of $n bytes decoded to the exact bytes"
	else
		fail "data_base64 of $n bytes decoded to the exact bytes" \
		    "id $(shdr Nats-Msg-Id), payload $(od -c "$T/payload" | head -2 | tr '\n' ' ')"
	fi
	check "content-type application/octet-stream stored ($n bytes)" application/octet-stream "$(shdr content-type)"
done
sev $S "$(ce s-nodata)"
check "202 without data" 202 "$STATUS"
last WORK $S
check "no data: empty payload" 0 "$(wc -c < "$T/payload")"

# --- binary and structured store the same thing -------------------------
# strip: the message without the lines that carry the id.
strip() { printf '%s\n' "$HDRS" | grep -v -e '^ce-id: ' -e '^Nats-Msg-Id: '; cat "$T/payload"; }
curl -s -o /dev/null -X POST "$RELAY_URL/v1/events/evt.acme.shop.order.same" \
    -H "Authorization: Bearer $TOKEN" -H 'ce-specversion: 1.0' -H 'ce-id: same-b' \
    -H 'ce-source: /src x' -H 'ce-type: dev.shop.order.same.v1' \
    -H 'ce-time: 2024-05-06T07:08:09Z' -H 'ce-subject: caf%C3%A9%20bar' \
    -H 'ce-dataschema: https://example.com/s.json' -H 'ce-myext: 42' \
    -H 'ce-flag: true' -H 'ce-traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' \
    -H 'Content-Type: application/json' --data-binary '{"a":1,"b":[true,null],"c":{"d":"x y"}}'
last WORK evt.acme.shop.order.same
bin=$(strip)
check "binary twin stored with its id" alpha:same-b "$(shdr Nats-Msg-Id)"
sev evt.acme.shop.order.same '{"specversion":"1.0","id":"same-s","source":"/src x",
 "type":"dev.shop.order.same.v1","time":"2024-05-06T07:08:09Z","subject":"caf\u00e9 bar",
 "dataschema":"https://example.com/s.json","myext":42,"flag":true,
 "traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
 "datacontenttype":"application/json","data":{"a":1,"b":[true,null],"c":{"d":"x y"}}}'
check "202 for the structured twin" '202 {"id":"same-s","duplicate":false}' "$STATUS $BODY"
last WORK evt.acme.shop.order.same
check "structured twin stored with its id" alpha:same-s "$(shdr Nats-Msg-Id)"
check "structured event stored exactly as its binary twin" "$bin" "$(strip)"
check_match "the twin has its encoded subject" $'ce-subject: caf%C3%A9%20bar\n' "$bin"

# --- duplicates ---------------------------------------------------------
W=$(count WORK)
sev $S "$(ce s-obj ',"data":{"other":true}')"
check "structured duplicate: duplicate true" '202 {"id":"s-obj","duplicate":true}' "$STATUS $BODY"
curl -s -o "$T/rb" -X POST "$RELAY_URL/v1/events/$S" -H "Authorization: Bearer $TOKEN" \
    -H 'ce-specversion: 1.0' -H 'ce-id: s-obj' -H 'ce-source: /test' -H "ce-type: $TY" \
    --data-binary x
check "binary with a structured event's id: duplicate true" '{"id":"s-obj","duplicate":true}' "$(cat "$T/rb")"
TOK=$OTHER_TOKEN sev $S "$(ce s-obj ',"data":1')"
check "structured, same id from beta: not a duplicate" '202 {"id":"s-obj","duplicate":false}' "$STATUS $BODY"
check "WORK gained beta's event only" $((W + 1)) "$(count WORK)"
SCT='application/cloudevents+json; charset=UTF-8' sev $S "$(ce s-param ',"data":[1]')"
check "structured with a charset parameter" '202 {"id":"s-param","duplicate":false}' "$STATUS $BODY"
last WORK $S
check "its payload" '[1]' "$(cat "$T/payload")"

# --- refusals -----------------------------------------------------------
BASE=$(counts)
sev $S "$(ce r1 ',"data":{"a":1},"data_base64":"eA=="')"
reject "400 bad_event for data and data_base64" 400 bad_event
sev $S 'not json'
reject "400 bad_event for a non-JSON body" 400 bad_event
sev $S ''
reject "400 bad_event for an empty body" 400 bad_event
sev $S "[$(ce r2)]"
reject "400 bad_event for a JSON array body" 400 bad_event
sev $S '"text"'
reject "400 bad_event for a JSON string body" 400 bad_event
sev $S "$(ce r3 ',"data":{"a":1')"
reject "400 bad_event for truncated JSON" 400 bad_event
deep=$(printf '[%.0s' $(seq 100))$(printf ']%.0s' $(seq 100))
sev $S "$(ce r4 ",\"data\":$deep")"
reject "400 bad_event for data nested 100 deep" 400 bad_event
sev $S '{"specversion":"1.0","source":"/test","type":"'$TY'","data":1}'
reject "400 bad_event without id" 400 bad_event
sev $S '{"specversion":"0.3","id":"r5","source":"/test","type":"'$TY'"}'
reject "400 bad_event for specversion 0.3" 400 bad_event
sev $S '{"id":"r6","source":"/test","type":"'$TY'"}'
reject "400 bad_event without specversion" 400 bad_event
sev $S '{"specversion":"1.0","id":"r7","type":"'$TY'"}'
reject "400 bad_event without source" 400 bad_event
sev $S '{"specversion":"1.0","id":"r8","source":"/test"}'
reject "400 bad_event without type" 400 bad_event
sev $S "$(ce r9 ',"time":"yesterday"')"
reject "400 bad_event for time yesterday" 400 bad_event
sev $S "$(ce r10 ',"myExt":"x"')"
reject "400 bad_event for an extension name with uppercase" 400 bad_event
sev $S "$(ce r11 ',"abcdefghijklmnopqrstu":"x"')"
reject "400 bad_event for a 21-char extension name" 400 bad_event
sev $S "$(ce r12 ',"myext":{"a":1}')"
reject "400 bad_event for an object-valued attribute" 400 bad_event
sev $S "$(ce r13 ',"data_base64":"!!!!"')"
reject "400 bad_event for invalid base64" 400 bad_event
sev $S "$(ce r14 ',"id":"r14b"')"
reject "400 bad_event for id given twice" 400 bad_event
# SPEC 13: any key given twice, escaped spellings included, and inside
# data too (the relay reads it, and a consumer might take the other one).
sev $S "$(ce r14c ',"\u0073ource":"/other"')"
check "400 for source given twice (once escaped), naming it" \
    '400 {"error":"bad_event","detail":"attribute source given twice"}' "$STATUS $BODY"
reject "  nothing stored" 400 bad_event
sev $S "$(ce r14d ',"data":{"items":[{"sku":"a","qty":1,"sku":"b"}]}')"
check "400 for a key given twice inside data, naming its place" \
    '400 {"error":"bad_event","detail":"key data.items[0].sku given twice"}' "$STATUS $BODY"
reject "  nothing stored" 400 bad_event
sev $S "$(ce r14e ',"data":{"a":{"k":1},"b":{"k":2}}')"
check "the same key in two objects of data is no repeat: 202" '202 {"id":"r14e","duplicate":false}' "$STATUS $BODY"
BASE=$(counts)
sev $S '{"specversion":"1.0","id":"r15","source":"/test","type":"dev.shop.order.created.vx"}'
reject "422 bad_type in structured mode" 422 bad_type
sev $S '{"specversion":"1.0","id":"r16","source":"/test","type":"dev.shop.order.deleted.v1"}'
reject "422 type_does_not_match_subject in structured mode" 422 type_does_not_match_subject
sev $S '{"specversion":"1.0","id":"r17","source":"/test","type":"dev.shop"}'
reject "422 bad_type for type dev.shop in structured mode" 422 bad_type
sev $S '{"specversion":"1.0","id":"r18","type":"dev.shop"}'
reject "400 bad_event before bad_type (no source)" 400 bad_event
sev evt.acme.other.x.y 'not json'
reject "403 before bad_event in structured mode" 403 subject_not_allowed
TOK=nope sev $S "$(ce r19 ',"data":1')"
reject "401 in structured mode" 401 unauthenticated

# U+0000: binary mode refuses it in an attribute (ce-id: a%00b), and so
# does structured mode anywhere (yajl's tree would cut the value short; the
# relay refuses rather than store a truncated value).  data_base64 carries
# such bytes.
send POST /v1/events/$S -H "Authorization: Bearer $TOKEN" -H 'ce-specversion: 1.0' \
    -H 'ce-id: nul%00tail' -H 'ce-source: /test' -H "ce-type: $TY" --data-binary x
reject "binary: 400 bad_event for ce-id with %00" 400 bad_event
sev $S "$(ce 'nul\u0000tail')"
reject "400 bad_event for an id containing \\u0000" 400 bad_event
sev $S "$(ce nul2 ',"subject":"s\u0000x"')"
reject "400 bad_event for a subject containing \\u0000" 400 bad_event
sev $S "$(ce nul)"
check "id nul is new after the refused nul\\u0000tail" '202 {"id":"nul","duplicate":false}' "$STATUS $BODY"
BASE=$(counts)
sev $S "$(ce nul-text ',"datacontenttype":"text/plain","data":"a\u0000b"')"
reject "400 bad_event for text data containing \\u0000" 400 bad_event
sev $S "$(ce nul-json ',"data":{"k":"a\u0000b"}')"
reject "400 bad_event for JSON data containing \\u0000" 400 bad_event
sev $S "$(ce nul-esc ',"data":{"k":"a\\\\u0000b"}')"
check "an escaped backslash before u0000 is text, 202" 202 "$STATUS"
last WORK $S
check "and is stored as written" 'alpha:nul-esc {"k":"a\\\\u0000b"}' "$(shdr Nats-Msg-Id) $(cat "$T/payload")"
sev $S "$(ce nul-b64 ',"datacontenttype":"text/plain","data_base64":"YQBi"')"
check "data_base64 carries a NUL: 202" 202 "$STATUS"
last WORK $S
printf 'a\0b' > "$T/want"
if cmp -s "$T/want" "$T/payload"; then ok "data_base64 NUL stored as 3 bytes"; else fail "data_base64 NUL stored as 3 bytes" "$(od -c "$T/payload" | head -1)"; fi
BASE=$(counts)

# Nesting below the limit is accepted.
mid=$(printf '[%.0s' $(seq 10))1$(printf ']%.0s' $(seq 10))
sev $S "$(ce s-mid ",\"data\":$mid")"
check "202 for data nested 10 deep" 202 "$STATUS"
last WORK $S
check "its payload" "$mid" "$(cat "$T/payload")"
finish
