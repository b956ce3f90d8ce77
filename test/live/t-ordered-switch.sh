#!/usr/bin/env bash
# SPEC 18, changing ordered while events flow: two relays share API
# subscriber sw (unordered), a receiver answers 500 to 10 % and holds 5 %
# for 100-600 ms, 1,000 events over 50 keys.  Halfway, a PUT makes it
# ordered: what is under way finishes, one relay becomes its holder and
# starts once everything out is in its hand.  From the receiver's log,
# after that start: no two requests of a key open at once, and each key's
# events first answered 2xx in WORK's order; no event lost.  Then a PUT
# makes it unordered again: the holder releases it and both relays
# deliver.  Then the same for pull subscriber box, with two workers
# taking its events through both relays (its workers' log checked).
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
admin_setup
ordered_setup 10 5
openssl rand -hex 32 > "$T/keys"
chmod 600 "$T/keys"
export TREATY_RELAY_SECRET_KEY_FILE=$T/keys TREATY_RELAY_SUBSCRIBERS='[]'
export TREATY_RELAY_RETRY_BASE_MS=100 TREATY_RELAY_RETRY_MAX_MS=400
export TREATY_RELAY_ACK_WAIT_SECONDS=4 TREATY_RELAY_PROGRESS_SECONDS=1
start_relay || { fail relay "A did not start"; finish; }
A_URL=$RELAY_URL A_LOG=$RELAY_LOG
start_relay || { fail relay "B did not start"; finish; }
B_URL=$RELAY_URL B_LOG=$RELAY_LOG
RELAY_URL=$A_URL RELAY_LOG=$A_LOG

# put NAME BODY: PUT the definition on A; prints the status.
put() {
	rm -f "$T/abody"
	curl -s -m 20 -o "$T/abody" -w '%{http_code}' -X PUT \
	    -H "Authorization: Bearer $AT" -H 'Content-Type: application/json' \
	    --data-binary "$2" "$A_URL/v1/admin/subscribers/$1"
}
DEF='"url":"http://127.0.0.1:'$RPORT'/sw","filter":"evt.*.shop.>","maxInFlight":16'
check "sw made, unordered" 201 "$(put sw "{$DEF}")"
check "an ordered pull subscriber is made (t-ordered-inbox tests it)" 201 \
    "$(put obox '{"tokenSha256":"'$(sha256hex inbox-token-0123456789)'","filter":"evt.*.nothing.>","ordered":true}')"

echo "$TOKEN" > "$T/token"
python3 "$ROOT/test/live/ordered.py" publish "$A_URL" "$T/token" evt.local.shop.order.created 1000 50 "$T/pub" 5 "$T/stop" 10 &
PUB=$!
PIDS+=($PUB)
wait_until 60 "[ \$(cat $T/pub.progress 2>/dev/null || echo 0) -ge 500 ]" || fail publish "not halfway"
check "sw made ordered while events flow" 200 "$(put sw "{$DEF,\"ordered\":true}")"
wait_until 40 "grep -qE 'msg=\"ordered delivery starts\" sub=sw ' $A_LOG $B_LOG" || fail holder "no relay started ordered delivery"
t_start=$(cat "$A_LOG" "$B_LOG" | grep -E 'msg="ordered delivery starts" sub=sw ' | stamp_ms | sort -n | head -1)
check "one relay holds sw" 1 "$(cat "$A_LOG" "$B_LOG" | grep -cE 'msg="order holder" sub=sw ')"
wait $PUB
check "1,000 events stored" 1000 "$(wc -l < "$T/pub")"
oks() { python3 -c '
import json, sys
print(len({r["id"] for r in map(json.loads, open(sys.argv[1])) if r["path"] == "/sw" and 200 <= r["status"] < 300}))' "$T/got"; }
wait_until 180 '[ "$(oks)" -ge 1000 ]' || fail delivered "$(oks) of 1000"
python3 "$ROOT/test/live/ordered.py" check "$T/pub" "$T/got" /sw "" "$t_start" > "$T/verdict" 2>&1
check "after the start: in order per key, one at a time, none missing" 0 "$?"
sed 's/^/# /' "$T/verdict"

# Unordered again: the holder releases, both deliver.
t_unord=$(now_ms)
check "sw made unordered again" 200 "$(put sw "{$DEF}")"
check "its holder released it" logged "$(in_log 'msg="order holder released" sub=sw' "$(grep -lE 'msg="order holder" sub=sw ' "$A_LOG" "$B_LOG" | head -1)")"
python3 "$ROOT/test/live/ordered.py" publish "$A_URL" "$T/token" evt.local.shop.order.created 200 50 "$T/pub2" 6 > /dev/null
wait_until 60 "[ \$(oks) -ge 1200 ]" || fail delivered "after unordered: $(oks) of 1200"
# Deliveries by each relay since the PUT, by its own stamps.
since() { log_stamps 'msg=delivered sub=sw ' "$1" | awk -v t="$t_unord" '$1 >= t' | wc -l; }
check "both relays deliver sw again" yes "$(n_a=$(since "$A_LOG"); n_b=$(since "$B_LOG"); [ "$n_a" -gt 0 ] && [ "$n_b" -gt 0 ] && echo yes || echo "no: A $n_a B $n_b")"
# The same for a pull subscriber (an inbox): box made ordered by a PUT
# while two workers take 600 events through both relays, then unordered.
IT=box-token-0123456789012
BDEF='"tokenSha256":"'$(sha256hex $IT)'","secret":"inbox-secret-0123456789","filter":"evt.*.shop.>","maxInFlight":8'
check "box made, unordered" 201 "$(put box "{$BDEF}")"
printf '%s\n' "$A_URL" "$B_URL" > "$T/urls"
python3 "$ROOT/test/live/oinbox.py" work "$T/urls" box "$IT" "$T/wlog" "$T/wstop" 30000 5 2 2> "$T/werr" &
PIDS+=($!)
python3 "$ROOT/test/live/ordered.py" publish "$A_URL" "$T/token" evt.local.shop.order.created 600 50 "$T/pubb" 7 "" 10 &
PUB=$!
PIDS+=($PUB)
wait_until 60 "[ \$(cat $T/pubb.progress 2>/dev/null || echo 0) -ge 250 ]" || fail publish "box: not a third"
t_put=$(now_ms)
check "box made ordered while events flow" 200 "$(put box "{$BDEF,\"ordered\":true}")"
wait_until 60 "grep -qE 'msg=\"ordered delivery starts\" sub=box ' $A_LOG $B_LOG" || fail holder "no relay serves box in order"
t_bstart=$(cat "$A_LOG" "$B_LOG" | grep -E 'msg="ordered delivery starts" sub=box ' | stamp_ms | sort -n | head -1)
echo "# box: ordered $((t_bstart - t_put)) ms after the PUT"
wait $PUB
backed() { python3 -c '
import json, sys
want = {l.split()[0] for l in open(sys.argv[2]) if l.strip()}
print(len({r["id"] for r in map(json.loads, open(sys.argv[1])) if r["status"] == 204} & want))' "$T/wlog" "$T/pubb" 2>/dev/null || echo 0; }
wait_until 180 "[ \$(backed) -ge 600 ]" || fail acked "box: $(backed) of 600"
python3 "$ROOT/test/live/ordered.py" check "$T/pubb" "$T/wlog" /box "" "$t_bstart" > "$T/bverdict" 2>&1
check "box, after the start: one lease of a key at a time, in order, none missing" 0 "$?"
sed 's/^/# box: /' "$T/bverdict"
check "box made unordered again" 200 "$(put box "{$BDEF}")"
touch "$T/wstop"
check "its holder released it" logged "$(in_log 'msg="order holder released" sub=box' "$(grep -lE 'msg="order holder" sub=box ' "$A_LOG" "$B_LOG" | head -1)")"
check_no_sanitizer_report "no sanitizer report" "$A_LOG" "$B_LOG"
finish
