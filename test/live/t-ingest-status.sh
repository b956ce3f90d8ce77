#!/usr/bin/env bash
# Ingest, the refusals of SPEC 2's table (404 405 401 400 403 400 422) and
# their order: each row asserts the status, the JSON error code and that
# neither WORK nor AUDIT gained a message.  The 413 rows are in
# t-ingest-size.sh, the 202 rows in t-ingest-store.sh.
. "$(dirname "$0")/lib.sh"
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

S=evt.acme.shop.order.created

BASE=$(counts)
check "streams start empty" "0 0" "$BASE"

# --- 404 not_found: path not under /v1/events/ --------------------------
ev_path /;				reject "404 for POST /" 404 not_found
ev_path /v1/event/$S;			reject "404 for /v1/event/<subject>" 404 not_found
ev_path /v1/events;			reject "404 for /v1/events without slash" 404 not_found
ev_path /v2/events/$S;			reject "404 for /v2/events/<subject>" 404 not_found
ev_path /v1/eventsX/$S;			reject "404 for /v1/eventsX/<subject>" 404 not_found
ev_path /V1/EVENTS/$S;			reject "404 for /V1/EVENTS/<subject> (paths are case-sensitive)" 404 not_found
ev_path /x/v1/events/$S;		reject "404 for a prefix before /v1/events/" 404 not_found
send GET /nothing;			reject "404 for GET /nothing" 404 not_found
TOK=- ev_path /v2/events/$S;		reject "404 before 401 (no token)" 404 not_found
send DELETE /v1/event/$S;		reject "404 before 405 (DELETE)" 404 not_found

# --- 405 method_not_allowed, with Allow: POST --------------------------
for m in GET PUT DELETE PATCH; do
	ev_path /v1/events/$S -X $m
	reject "405 for $m /v1/events/<subject>" 405 method_not_allowed
	check "405 for $m sends Allow: POST" "POST" "$(hdr Allow)"
done
send GET /v1/events/$S
reject "405 before 401 (GET without token)" 405 method_not_allowed
send GET /v1/events/evt.bad
reject "405 before 400 bad_subject (GET, bad subject, no token)" 405 method_not_allowed

# --- 401 unauthenticated ------------------------------------------------
TOK=- ev_path /v1/events/$S
reject "401 without Authorization" 401 unauthenticated
check_match "401 sends WWW-Authenticate: Bearer" '^Bearer' "$(hdr WWW-Authenticate)"
TOK=- ev_path /v1/events/$S -H 'Authorization: Basic YWxwaGE6c2VjcmV0'
reject "401 for Basic credentials" 401 unauthenticated
check_match "401 (Basic) sends WWW-Authenticate: Bearer" '^Bearer' "$(hdr WWW-Authenticate)"
TOK=- ev_path /v1/events/$S -H "Authorization: Basic $TOKEN"
reject "401 for the right token under Basic" 401 unauthenticated
TOK=- ev_path /v1/events/$S -H 'Authorization: Bearer '
reject "401 for Bearer with an empty token" 401 unauthenticated
TOK=- ev_path /v1/events/$S -H 'Authorization: Bearer'
reject "401 for a bare Bearer" 401 unauthenticated
TOK=unknown-token-0123456789 ev_path /v1/events/$S
reject "401 for an unknown token" 401 unauthenticated
TOK="${TOKEN}x" ev_path /v1/events/$S
reject "401 for the token with a byte appended" 401 unauthenticated
TOK="${TOKEN%?}" ev_path /v1/events/$S
reject "401 for the token with its last byte removed" 401 unauthenticated
TOK="$TOKEN_SHA" ev_path /v1/events/$S
reject "401 for the configured SHA-256 sent as the token" 401 unauthenticated
TOK=- ev_path /v1/events/$S -H "Authorization: $TOKEN"
reject "401 for the token without a scheme" 401 unauthenticated
# The detail tells the two apart (issue 30): no bearer token, or a token
# no producer has (the operator's list, or the wrong token).
NOTOK="a producer's bearer token is required: Authorization: Bearer <token>"
UNK="unknown token: its SHA-256 is no producer's tokenSha256"
TOK=- ev_path /v1/events/$S
check "401 without Authorization: the detail says a bearer token is required" "$NOTOK" "$(json_get detail)"
TOK=- ev_path /v1/events/$S -H "Authorization: Basic $TOKEN"
check "  the same for Basic credentials" "$NOTOK" "$(json_get detail)"
TOK=- ev_path /v1/events/$S -H 'Authorization: Bearer '
check "  and for Bearer with an empty token" "$NOTOK" "$(json_get detail)"
TOK=unknown-token-0123456789 ev_path /v1/events/$S
check "401 for an unknown token: the detail says unknown token" "$UNK" "$(json_get detail)"
TOK="${TOKEN}x" ev_path /v1/events/$S
check "  the same for the token with a byte appended" "$UNK" "$(json_get detail)"
TOK=$OTHER_TOKEN ID=- ev_path /v1/events/$S
check "a known token: no 401 (400 bad_event for the missing id)" "400 bad_event" "$STATUS $(errcode)"

# --- 400 bad_subject ----------------------------------------------------
t64=$(printf 'a%.0s' $(seq 64))
for row in \
    "4 tokens|evt.acme.shop.order" \
    "6 tokens|evt.acme.shop.order.created.x" \
    "an empty token|evt..shop.order.created" \
    "an empty last token|evt.acme.shop.order." \
    "a leading dot|.evt.acme.shop.order" \
    "a * wildcard|evt.*.shop.order.created" \
    "a > wildcard|evt.acme.shop.order.>" \
    "a 65-char token|evt.${t64}a.shop.order.created" \
    "the prefix foo|foo.acme.shop.order.created" \
    "the prefix EVT|EVT.acme.shop.order.created" \
    "a percent-encoded char|evt.acme.shop.order.cre%61ted" \
    "a percent-encoded dot|evt.acme.shop.order%2Ecreated" \
    "an @ in a token|evt.acme.shop.order.cre@ted" \
    "a slash after the subject|evt.acme.shop.order.created/x" \
    "an empty subject|" ; do
	ev_path "/v1/events/${row#*|}"
	reject "400 bad_subject for ${row%%|*}" 400 bad_subject
done
TOK=- ev_path /v1/events/evt.acme.shop.order
reject "401 before 400 bad_subject (no token)" 401 unauthenticated
TOK=bad-token ev_path /v1/events/evt.acme.shop.order
reject "401 before 400 bad_subject (unknown token)" 401 unauthenticated
send POST /v1/events/evt.acme.shop.order -H "Authorization: Bearer $TOKEN" --data-binary x
reject "400 bad_subject before bad_event (no ce headers)" 400 bad_subject

# A 64-char token is the largest allowed: stored.
ev_path /v1/events/evt.$t64.shop.order.created
check "202 for a 64-char token" 202 "$STATUS"
W=${BASE% *}
BASE="$((W + 1)) ${BASE#* }"
check "the 64-char-token event is in WORK" "$BASE" "$(counts)"

# --- 403 subject_not_allowed --------------------------------------------
ev_path /v1/events/evt.acme.other.x.y
reject "403 for alpha on evt.acme.other.x.y" 403 subject_not_allowed
ev_path /v1/events/audit.acme.other.x.y
reject "403 for alpha on audit.acme.other.x.y" 403 subject_not_allowed
TOK=$OTHER_TOKEN ev_path /v1/events/audit.acme.shop.order.created
reject "403 for beta on audit.acme.shop.order.created" 403 subject_not_allowed
send POST /v1/events/evt.acme.other.x.y -H "Authorization: Bearer $TOKEN" --data-binary x
reject "403 before bad_event (no ce headers)" 403 subject_not_allowed
TYP=dev.shop ev_path /v1/events/evt.acme.other.x.y
reject "403 before bad_type" 403 subject_not_allowed
ID=beta-other-1 TOK=$OTHER_TOKEN ev_path /v1/events/evt.acme.other.x.y
check "beta may post evt.acme.other.x.y" '202 {"id":"beta-other-1","duplicate":false}' "$STATUS $BODY"
BASE="$((W + 2)) ${BASE#* }"
check "beta's evt.acme.other.x.y event is in WORK" "$BASE" "$(counts)"
msg=$("$JSGET" "$NATS_URL_T" last WORK evt.acme.other.x.y 2>&1)
check_match "beta's event is stored as beta's" $'Nats-Msg-Id: beta:beta-other-1\n' "$msg"

# --- 400 bad_event ------------------------------------------------------
SPEC=- ev_path /v1/events/$S;		reject "400 bad_event without ce-specversion" 400 bad_event
SPEC=0.3 ev_path /v1/events/$S;		reject "400 bad_event for ce-specversion 0.3" 400 bad_event
SPEC=1.1 ev_path /v1/events/$S;		reject "400 bad_event for ce-specversion 1.1" 400 bad_event
ID=- ev_path /v1/events/$S;		reject "400 bad_event without ce-id" 400 bad_event
ID=- ev_path /v1/events/$S -H 'ce-id;';	reject "400 bad_event for an empty ce-id" 400 bad_event
SRC=- ev_path /v1/events/$S;		reject "400 bad_event without ce-source" 400 bad_event
TYP=- ev_path /v1/events/$S;		reject "400 bad_event without ce-type" 400 bad_event
ev_path /v1/events/$S -H 'ce-time: yesterday'
reject "400 bad_event for ce-time yesterday" 400 bad_event
ev_path /v1/events/$S -H 'ce-time: 2024-13-01T00:00:00Z'
reject "400 bad_event for ce-time in month 13" 400 bad_event
ev_path /v1/events/$S -H 'ce-datacontenttype: text/plain'
reject "400 bad_event for a ce-datacontenttype header" 400 bad_event
CT=- ev_path /v1/events/$S -H 'ce-datacontenttype: text/plain'
reject "400 bad_event for ce-datacontenttype without Content-Type" 400 bad_event
SRC='/a%zz' ev_path /v1/events/$S;	reject "400 bad_event for bad percent-encoding %zz" 400 bad_event
SRC='/a%4' ev_path /v1/events/$S;	reject "400 bad_event for a truncated %4" 400 bad_event
SRC='/a%C3%28' ev_path /v1/events/$S;	reject "400 bad_event for percent-encoded invalid UTF-8" 400 bad_event
ev_path /v1/events/$S -H 'ce-abcdefghijklmnopqrstu: x'
reject "400 bad_event for a 21-char extension name" 400 bad_event
ev_path /v1/events/$S -H 'ce-my_ext: x'
reject "400 bad_event for an extension name with _" 400 bad_event
ev_path /v1/events/$S -H 'ce-: x'
reject "400 bad_event for an empty extension name" 400 bad_event
SRC=- TYP=dev.shop ev_path /v1/events/$S
reject "400 bad_event before bad_type" 400 bad_event
TYP=dev.other.order.created.v1 ID=- ev_path /v1/events/$S
reject "400 bad_event before type_does_not_match_subject" 400 bad_event

# --- 422 bad_type -------------------------------------------------------
for typ in dev.shop.order dev.shop.order.created dev.shop.order.created.1 \
    dev.shop.order.created.vx dev.shop.order.created.v dev.shop.order.created.v1.x \
    dev..order.created.v1 'dev.shop.order.created.v1%20' 'dev.*.order.created.v1' \
    dev.shop.order.created.v1.; do
	TYP=$typ ev_path /v1/events/$S
	reject "422 bad_type for type [$typ]" 422 bad_type
done
TYP=dev.other.order.created.vx ev_path /v1/events/$S
reject "422 bad_type before type_does_not_match_subject" 422 bad_type

# --- 422 type_does_not_match_subject ------------------------------------
for typ in dev.other.order.created.v1 dev.shop.item.created.v1 \
    dev.shop.order.deleted.v1 dev.order.created.shop.v1 dev.Shop.order.created.v1; do
	TYP=$typ ev_path /v1/events/$S
	reject "422 type_does_not_match_subject for [$typ] on $S" 422 type_does_not_match_subject
done
TYP=dev.shop.order.created.v1 ev_path /v1/events/audit.acme.shop.order.deleted
reject "422 type_does_not_match_subject on an audit subject" 422 type_does_not_match_subject

# The namespace and the major version are not part of the match.
ID=ns-1 TYP=prod.shop.order.created.v2 ev_path /v1/events/$S
check "202 for another namespace and major version" '202 {"id":"ns-1","duplicate":false}' "$STATUS $BODY"
BASE="$((W + 3)) ${BASE#* }"
check "nothing else was stored" "$BASE" "$(counts)"
finish
