#!/usr/bin/env bash
# Ingest, the 202 rows of SPEC 2: the answer, duplicates (producer-scoped
# Nats-Msg-Id), WORK versus AUDIT, and exactly what JetStream stores
# (headers, percent-encoding, payload bytes); the streams' settings
# (SPEC 2 and 6); 200 concurrent POSTs.
. "$(dirname "$0")/lib.sh"
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

S=evt.acme.shop.order.created

# --- streams, SPEC 2 and 6 ----------------------------------------------
check "WORK stream settings" "name=WORK
subject=evt.>
storage=file
max_age_s=604800
duplicates_s=3600
replicas=1
allow_rollup=false" "$("$JSGET" "$NATS_URL_T" info WORK 2>&1)"
check "AUDIT stream settings" "name=AUDIT
subject=audit.>
storage=file
max_age_s=31536000
duplicates_s=3600
replicas=1
allow_rollup=true" "$("$JSGET" "$NATS_URL_T" info AUDIT 2>&1)"

# --- 202 answer and duplicates ------------------------------------------
ID=d-1 DATA=first ev $S
check "202 body for a new event" '202 {"id":"d-1","duplicate":false}' "$STATUS $BODY"
check "WORK holds it" "1 0" "$(counts)"
ID=d-1 DATA=second ev $S
check "same id again: duplicate true" '202 {"id":"d-1","duplicate":true}' "$STATUS $BODY"
check "duplicate not stored" "1 0" "$(counts)"
last WORK $S
check "the first event's payload stays" first "$(cat "$T/payload")"
ID=d-1 DATA=third ev evt.acme.shop.order.deleted
check "same id on another subject of WORK: duplicate true" '202 {"id":"d-1","duplicate":true}' "$STATUS $BODY"
check "still one message" "1 0" "$(counts)"
ID=d-1 TOK=$OTHER_TOKEN DATA=beta ev $S
check "same ce-id from beta: not a duplicate" '202 {"id":"d-1","duplicate":false}' "$STATUS $BODY"
check "beta's event stored" "2 0" "$(counts)"
last WORK $S
check "beta's Nats-Msg-Id is beta:<id>" "beta:d-1" "$(shdr Nats-Msg-Id)"
check "beta's Treaty-Producer" beta "$(shdr Treaty-Producer)"
check "beta's payload" beta "$(cat "$T/payload")"
ID=d-1 TOK=$OTHER_TOKEN DATA=beta2 ev $S
check "beta again: duplicate true" '202 {"id":"d-1","duplicate":true}' "$STATUS $BODY"
ID=d-1 DATA=again ev $S
check "alpha again after beta: duplicate true" '202 {"id":"d-1","duplicate":true}' "$STATUS $BODY"
check "no more messages" "2 0" "$(counts)"

# --- WORK versus AUDIT --------------------------------------------------
ID=a-1 DATA=audit1 ev audit.acme.shop.order.created
check "202 for an audit subject" '202 {"id":"a-1","duplicate":false}' "$STATUS $BODY"
check "audit.* lands in AUDIT, not WORK" "2 1" "$(counts)"
last AUDIT audit.acme.shop.order.created
check "AUDIT message payload" audit1 "$(cat "$T/payload")"
check "AUDIT message Nats-Msg-Id" alpha:a-1 "$(shdr Nats-Msg-Id)"
ID=a-2 ev $S
check "202 for an evt subject" '202 {"id":"a-2","duplicate":false}' "$STATUS $BODY"
check "evt.* lands in WORK, not AUDIT" "3 1" "$(counts)"
ID=a-2 ev audit.acme.shop.order.created
check "an id stored in WORK is new to AUDIT (one window per stream)" '202 {"id":"a-2","duplicate":false}' "$STATUS $BODY"
check "stored in AUDIT" "3 2" "$(counts)"
ID=a-1 ev audit.acme.shop.order.created
check "duplicate in AUDIT" '202 {"id":"a-1","duplicate":true}' "$STATUS $BODY"
check "AUDIT unchanged" "3 2" "$(counts)"

# --- empty body ---------------------------------------------------------
ID=e-1 CT=- DATA= ev evt.acme.shop.order.emptied
check "202 for an empty body" '202 {"id":"e-1","duplicate":false}' "$STATUS $BODY"
last WORK evt.acme.shop.order.emptied
check "empty payload stored" 0 "$(wc -c < "$T/payload")"
check "no content-type without Content-Type" "Nats-Msg-Id: alpha:e-1
Treaty-Producer: alpha
ce-id: e-1
ce-source: /test
ce-specversion: 1.0
ce-type: dev.shop.order.emptied.v1
subject: evt.acme.shop.order.emptied" "$HDRS"

# --- the stored message, all attributes ---------------------------------
printf 'a\0b\377\376\r\n\0\x80end' > "$T/bin"
ID=full-1 SRC=https://example.com/src CT='application/octet-stream; x=1' \
    DATAFILE=$T/bin ev evt.acme.shop.order.full \
    -H 'ce-time: 2024-05-06T07:08:09.123+02:00' -H 'ce-subject: sub-1' \
    -H 'CE-Dataschema: https://example.com/s.json' \
    -H 'ce-traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' \
    -H 'Ce-MyExt: v1' -H 'ce-abcdefghijklmnopqrst: twenty'
check "202 for a full event" '202 {"id":"full-1","duplicate":false}' "$STATUS $BODY"
last WORK evt.acme.shop.order.full
check "stored headers, all attributes" "Nats-Msg-Id: alpha:full-1
Treaty-Producer: alpha
ce-abcdefghijklmnopqrst: twenty
ce-dataschema: https://example.com/s.json
ce-id: full-1
ce-myext: v1
ce-source: https://example.com/src
ce-specversion: 1.0
ce-subject: sub-1
ce-time: 2024-05-06T07:08:09.123+02:00
ce-traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
ce-type: dev.shop.order.full.v1
content-type: application/octet-stream; x=1
subject: evt.acme.shop.order.full" "$HDRS"
if cmp -s "$T/bin" "$T/payload"; then
	ok "binary payload (NUL, high bytes, CR LF) byte-identical"
else
	fail "binary payload (NUL, high bytes, CR LF) byte-identical" \
	    "$(od -c "$T/payload" | head -3 | tr '\n' ' ')"
fi

# --- percent-encoding ---------------------------------------------------
ID='a%20b' SRC='/a b' ev evt.acme.shop.order.encoded \
    -H 'ce-subject: caf%C3%A9%20bar' -H 'ce-myext: 100%25 "q"'
check "202 body carries the decoded id" '202 {"id":"a b","duplicate":false}' "$STATUS $BODY"
last WORK evt.acme.shop.order.encoded
check "percent-encoded ce-subject stored encoded" 'caf%C3%A9%20bar' "$(shdr ce-subject)"
check "raw space in ce-source stored as %20" '/a%20b' "$(shdr ce-source)"
check "ce-id stored encoded" 'a%20b' "$(shdr ce-id)"
check "Nats-Msg-Id carries the decoded id" 'alpha:a b' "$(shdr Nats-Msg-Id)"
check "%25 and quotes stay encoded" '100%25%20%22q%22' "$(shdr ce-myext)"
ID='a b' ev evt.acme.shop.order.encoded
check "raw-space id equals its encoded form: duplicate" '202 {"id":"a b","duplicate":true}' "$STATUS $BODY"
ID='caf%C3%A9' ev evt.acme.shop.order.encoded
check "202 for a UTF-8 id" '202 {"id":"café","duplicate":false}' "$STATUS $BODY"
last WORK evt.acme.shop.order.encoded
check "UTF-8 id decoded in Nats-Msg-Id" 'alpha:café' "$(shdr Nats-Msg-Id)"

# --- 200 concurrent POSTs -----------------------------------------------
w0=$(count WORK)
export RELAY_URL TOKEN
seq 1 200 | xargs -P 50 -I{} bash -c '
	b=$(curl -s -m 20 -w " %{http_code}" -X POST "$RELAY_URL/v1/events/evt.acme.shop.order.bulk" \
	    -H "Authorization: Bearer $TOKEN" -H "ce-specversion: 1.0" -H "ce-id: c-{}" \
	    -H "ce-source: /bulk" -H "ce-type: dev.shop.order.bulk.v1" --data-binary "n{}")
	if [ "$b" = "{\"id\":\"c-{}\",\"duplicate\":false} 202" ]; then echo good; else echo "c-{}: $b"; fi
' > "$T/bulk" 2>&1
check "200 concurrent POSTs all answered 202 with their own id" 200 "$(grep -c '^good$' "$T/bulk")"
grep -v '^good$' "$T/bulk" | head -5 >&2
check "WORK holds exactly 200 more" $((w0 + 200)) "$(count WORK)"
last WORK evt.acme.shop.order.bulk
check_match "a bulk message is stored whole" '^n[0-9]+$' "$(cat "$T/payload")"
finish
