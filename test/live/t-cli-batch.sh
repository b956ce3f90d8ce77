#!/usr/bin/env bash
# treaty publish --batch and batched flush (SPEC 14) against the real relay
# and nats-server: JSON lines sent in batches of --batch-size, one answer
# line per event, every line checked before anything is sent, duplicates
# on a resend, the outbox holding one file per batch through a relay
# outage, flush gathering single-event files into batches, and a refused
# event in a gathered batch set aside while the others are stored.
. "$(dirname "$0")/lib.sh"
TR=$ROOT/$O/treaty
TMO=30	# each treaty run (lib.sh run): batches of thousands take longer
S=evt.acme.shop.order.created
TY=dev.shop.order.created.v1
unset TREATY_URL TREATY_CA_FILE
export TREATY_TOKEN=$TOKEN

start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

# lines FILE PREFIX N [FIRST]: N JSON-lines events with ids PREFIX-i.
lines() {
	local i
	for i in $(seq "${4:-1}" $((${4:-1} + $3 - 1))); do
		printf '{"specversion":"1.0","id":"%s-%d","source":"/cli","type":"%s","data":{"n":%d}}\n' \
		    "$2" "$i" "$TY" "$i"
	done > "$1"
}
# batches: 202 answers to event POSTs so far (each batch is one request).
# (0 before the first; "ERROR: ..." when /metrics does not answer).
batches() {
	local m
	m=$(metrics_text) || { echo "$m"; return 1; }
	printf '%s\n' "$m" | awk '$1 == "treaty_relay_http_requests_total{route=\"events\",status=\"202\"}" { n = $2 } END { print n + 0 }'
}
# nfiles DIR PATTERN: files in DIR whose name matches PATTERN (glob).
nfiles() { find "$1" -maxdepth 1 -type f -name "$2" | wc -l; }
# ids_at FIRST N: the ce-id of WORK messages FIRST..FIRST+N-1.
ids_at() {
	local i out=
	for i in $(seq "$1" $(($1 + $2 - 1))); do
		out+="$("$JSGET" "$NATS_URL_T" msg WORK "$i" | sed -n 's/^ce-id: //p') "
	done
	echo "${out% }"
}

# --- 250 events in batches of 100 ---------------------------------------
lines "$T/e250" b 250
W=$(count WORK) R=$(batches)
run b1 publish --url "$RELAY_URL" --subject $S --batch "$T/e250"
check "--batch: exit 0, one answer line per event" "rc=0 250" "rc=$RC $(wc -l < "$T/b1.out")"
check "answers in order, none duplicate" '{"id":"b-1","duplicate":false} {"id":"b-250","duplicate":false} 0' \
    "$(head -1 "$T/b1.out") $(tail -1 "$T/b1.out") $(grep -c '"duplicate":true' "$T/b1.out")"
check "250 events stored in 3 requests (100 + 100 + 50)" "$((W + 250)) $((R + 3))" "$(count WORK) $(batches)"
check "stored in the order of the lines" "b-1 b-2 b-250" \
    "$(ids_at $((W + 1)) 2) $(ids_at $((W + 250)) 1)"
last WORK $S
check "a batched event stored as its line says" 'alpha:b-250 {"n":250}' "$(shdr Nats-Msg-Id) $(cat "$T/payload")"

# --- the same lines again, from standard input, --batch-size 7 ------------
cp "$T/e250" "$T/b2.in"
W=$(count WORK) R=$(batches)
run b2 publish --url "$RELAY_URL" --subject $S --batch - --batch-size 7
check "again from stdin: exit 0, every event a duplicate, nothing stored" \
    "rc=0 250 $W" "rc=$RC $(grep -c '"duplicate":true' "$T/b2.out") $(count WORK)"
check "--batch-size 7: 36 requests" $((R + 36)) "$(batches)"

# --- every line checked first: nothing sent when one is bad ---------------
lines "$T/bad" c 5
sed -i '4s/.*/{"specversion":"1.0","id":"c-4","source":"\/cli","type":"dev.shop.order.deleted.v1"}/' "$T/bad"
W=$(count WORK) R=$(batches)
run b3 publish --url "$RELAY_URL" --subject $S --batch "$T/bad"
check_match "a type not matching the subject on line 4: exit 1, the line named" \
    '^rc=1 treaty: line 4: type dev.shop.order.deleted.v1 does not match' "rc=$RC $ERR"
check "  nothing sent" "$W $R" "$(count WORK) $(batches)"
lines "$T/bad2" d 3
printf '\n  \n{"specversion":"1.0","source":"/cli","type":"%s"}\n' "$TY" >> "$T/bad2"
run b4 publish --url "$RELAY_URL" --subject $S --batch "$T/bad2"
check_match "an event without id on line 6 (blank lines counted): exit 1" \
    '^rc=1 treaty: line 6: not a valid event' "rc=$RC $ERR"
printf 'not json\n' > "$T/bad3"
run b5 publish --url "$RELAY_URL" --subject $S --batch "$T/bad3"
check_match "a line that is not JSON: exit 1" '^rc=1 treaty: line 1: not a valid event' "rc=$RC $ERR"
: > "$T/empty"
run b6 publish --url "$RELAY_URL" --subject $S --batch "$T/empty"
check_match "no events: exit 1" '^rc=1 .*no events' "rc=$RC $ERR"
check "  nothing sent by any of them" "$W $R" "$(count WORK) $(batches)"
run b7 publish --url "$RELAY_URL" --subject $S --batch "$T/e250" --type $TY
check "--batch with --type: usage, exit 2" 2 "$RC"
run b8 publish --url "$RELAY_URL" --subject $S --batch "$T/e250" --batch-size 1001
check "--batch-size over 1000: exit 2" 2 "$RC"

# --- the outbox through a relay outage, then flush ------------------------
kill -TERM $RELAY_PID
wait $RELAY_PID
mkdir -p "$T/ob"
lines "$T/e30" o 30
run o1 publish --url "$RELAY_URL" --subject $S --batch "$T/e30" --batch-size 10 \
    --outbox "$T/ob" --attempts 2 --retry-base 50 --retry-cap 100
check "relay down: exit 75, every batch written to the outbox first (3 files)" "rc=75 3" \
    "rc=$RC $(nfiles "$T/ob" '*.event')"
check_match "  the message names the first file kept and counts the others" \
    "still failing after 2 attempts: .*; kept in $T/ob/[^ ]*\.event and 2 other files" "$(cat "$T/o1.err")"
check "  each file: the subject, then a JSON array of 10" "$S 10 $S 10 $S 10" \
    "$(for f in "$T/ob"/*.event; do echo "$(head -1 "$f") $(tail -n +2 "$f" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>&1)"; done | tr '\n' ' ' | sed 's/ $//')"
# Five single events written while the relay is down.
for i in 1 2 3 4 5; do
	run s$i publish --url "$RELAY_URL" --subject $S --type $TY --source /cli --id s-$i \
	    --outbox "$T/ob" --attempts 1
done
check "five single-event files beside them" 8 "$(nfiles "$T/ob" '*.event')"
start_relay || { fail start "the relay did not start again"; finish; }
W=$(count WORK) R=$(batches)
run f1 flush --outbox "$T/ob" --url "$RELAY_URL" --batch-size 20
check "flush: exit 0, no file left" "rc=0 0" "rc=$RC $(ls -A "$T/ob" | wc -l)"
check "35 events of 8 files in batches of 20: 2 requests" \
    "$((W + 35)) $((R + 2))" "$(count WORK) $(batches)"
check "stored oldest first" "o-1 o-30 s-1 s-2 s-3 s-4 s-5" \
    "$(ids_at $((W + 1)) 1) $(ids_at $((W + 30)) 1) $(ids_at $((W + 31)) 5)"
check "flush summary" "sent=8 rejected=0 left=0" "$(grep -o 'sent=[0-9]* rejected=[0-9]* left=[0-9]*' "$T/f1.err")"

# --- a gathered batch with a refused event --------------------------------
# The middle file written by hand (publish would not keep it): its type
# does not match the subject; the relay names it by its index, it is set
# aside, and the two others are sent again and stored.
mkdir -p "$T/ob2"
ts() { printf '%020d' "$(date +%s%N)"; }
for i in 1 2 3; do
	ty=$TY
	[ $i = 2 ] && ty=dev.shop.order.deleted.v1
	printf '%s\n{"specversion":"1.0","id":"g-%d","source":"/cli","type":"%s"}' "$S" $i "$ty" \
	    > "$T/ob2/$(ts)-0000000$i.event"
done
W=$(count WORK)
run f2 flush --outbox "$T/ob2" --url "$RELAY_URL"
check_match "flush: exit 1, the 422 and the event's index said" '^rc=1 .*422 \(the batch.s event 1\)' "rc=$RC $(echo $ERR)"
check "g-2's file set aside, g-1 and g-3 stored in order" "rejected=1 event=0 g-1 g-3" \
    "rejected=$(nfiles "$T/ob2" '*.rejected') event=$(nfiles "$T/ob2" '*.event') $(ids_at $((W + 1)) 2)"
check "the set-aside file is g-2's" g-2 \
    "$(tail -n +2 "$T/ob2"/*.rejected | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' 2>&1)"
check "flush summary" "sent=2 rejected=1 left=0" "$(grep -o 'sent=[0-9]* rejected=[0-9]* left=[0-9]*' "$T/f2.err")"

# --- entries flush cannot send as they are are set aside -----------------
# Two events joined by a comma in a single-event file (it would shift the
# relay's indexes), a file without a subject line, a batch that is not an
# array: each renamed *.rejected; the good files around them stored.
mkdir -p "$T/ob3"
ev1() { printf '{"specversion":"1.0","id":"%s","source":"/cli","type":"%s"}' "$1" "$TY"; }
printf '%s\n%s' "$S" "$(ev1 m-1)" > "$T/ob3/$(ts)-00000001.event"
printf '%s\n%s,%s' "$S" "$(ev1 m-2a)" "$(ev1 m-2b)" > "$T/ob3/$(ts)-00000002.event"
printf '%s' "$(ev1 m-3)" > "$T/ob3/$(ts)-00000003.event"
printf '%s\n[%s' "$S" "$(ev1 m-4)" > "$T/ob3/$(ts)-00000004.event"
printf '%s\n%s' "$S" "$(ev1 m-5)" > "$T/ob3/$(ts)-00000005.event"
W=$(count WORK)
run f3 flush --outbox "$T/ob3" --url "$RELAY_URL"
check "flush: exit 1, the three bad entries set aside, m-1 and m-5 stored" \
    "rc=1 rejected=3 event=0 $((W + 2)) m-1 m-5" \
    "rc=$RC rejected=$(nfiles "$T/ob3" '*.rejected') event=$(nfiles "$T/ob3" '*.event') $(count WORK) $(ids_at $((W + 1)) 2)"
check "  summary" "sent=2 rejected=3 left=0" "$(grep -o 'sent=[0-9]* rejected=[0-9]* left=[0-9]*' "$T/f3.err")"

# --- a batch refused whole for its size: smaller ones ----------------------
# A relay that takes 20 publishes in flight refuses a batch of 50 (413, no
# event named); the client halves until the relay takes them.
kill -TERM $RELAY_PID
wait $RELAY_PID
TREATY_RELAY_MAX_PENDING=20 start_relay || { fail start "the relay did not start again"; finish; }
lines "$T/e60" h 60
W=$(count WORK)
run h1 publish --url "$RELAY_URL" --subject $S --batch "$T/e60" --batch-size 50
check "a batch over the relay's publishes in flight: smaller batches, exit 0, all stored" \
    "rc=0 60 $((W + 60))" "rc=$RC $(wc -l < "$T/h1.out") $(count WORK)"
check_match "  said once per halving" 'batch refused whole; sending smaller ones.*events=50 next=25' "$ERR"
finish
