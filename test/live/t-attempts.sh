#!/usr/bin/env bash
# SPEC 17's attempts: every delivery attempt recorded in ATTEMPTS, listed
# by GET /v1/admin/subscribers/<name>/attempts newest first, limit and
# before paging through all of them without overlap or gap; an attempt
# that got no answer (status null, its error) and one never sent (a
# refused address: ms null too); at most
# TREATY_RELAY_ATTEMPTS_PER_SUBSCRIBER kept; 404, 400; and treaty admin
# attempts.  Also treaty admin pause and resume, and the STATE column.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
admin_setup
TR=$ROOT/$O/treaty
gate_setup
DEAD=$(free_port)
export TREATY_RELAY_SUBSCRIBERS='[{"name":"at","url":"'$H'/at","secret":"'$S'","filter":"evt.*.shop.at.>"},{"name":"dead","url":"http://127.0.0.1:'$DEAD'/x","secret":"'$S'","filter":"evt.*.shop.dead.>","maxDeliver":1},{"name":"refused","url":"https://10.0.0.1/x","secret":"'$S'","filter":"evt.*.shop.refused.>","maxDeliver":1},{"name":"box","tokenSha256":"'$(sha256hex box-token-0123456789)'","secret":"'$S'","filter":"evt.*.shop.box.>"}]'
export TREATY_RELAY_RETRY_BASE_MS=100 TREATY_RELAY_RETRY_MAX_MS=200
start_relay || { fail relay "did not start"; finish; }
# page ARGS: GET .../attempts?ARGS into $T/abody; prints the status.
page() { areq GET "subscribers/at/attempts?$1"; }
# records FILE: "time status eventId" of each record, one a line.
records() { python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["attempts"]: print(r["time"], r["status"], r["eventId"], r["attempt"])' "$1"; }

curl -s -X POST "$H/_ctl?path=/at&status=503&count=3" > /dev/null
for i in 1 2 3 4 5 6; do post evt.local.shop.at.created at-$i x; done
wait_until 20 "[ \$(grep -c '\"status\": 204' $T/got) -ge 6 ]"
# Nine attempts: three 503s, six 2xx; they reach ATTEMPTS without waiting.
wait_until 10 "[ \"\$(page limit=1000 >/dev/null; records $T/abody | wc -l)\" -ge 9 ]"
check "GET attempts 200" 200 "$(page limit=1000)"
records "$T/abody" > "$T/all"
check "nine records" 9 "$(wc -l < "$T/all")"
check "three 503, six 204" "3 6" "$(grep -c ' 503 ' "$T/all") $(grep -c ' 204 ' "$T/all")"
check "newest first" "$(sort -r "$T/all" | cut -d' ' -f1)" "$(cut -d' ' -f1 "$T/all")"
check "next null at the end" None "$(afield next)"
check_match "a record's members" '^\{"time":"[0-9T:.-]+Z","eventId":"at-[1-6]","sequence":[0-9]+,"attempt":[12],"status":(503|204),"error":null,"ms":[0-9]+,"instance":"[0-9a-f]{16}"\}$' \
    "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["attempts"][0], separators=(",",":")))' "$T/abody")"
# Pages of 4: 4, 4, 1, each before the last, together the whole list.
: > "$T/paged"
check "page 1" 200 "$(page limit=4)"; records "$T/abody" >> "$T/paged"; N1=$(afield next)
check "page 2" 200 "$(page "limit=4&before=$N1")"; records "$T/abody" >> "$T/paged"; N2=$(afield next)
check "page 3" 200 "$(page "limit=4&before=$N2")"; records "$T/abody" >> "$T/paged"
check "the last page says so" None "$(afield next)"
check "three pages are the whole list, in order" "$(cat "$T/all")" "$(cat "$T/paged")"
check "a page before the oldest is empty" "0 None" "$(page "limit=4&before=1970-01-01T00:00:01Z" >/dev/null; records "$T/abody" | wc -l) $(afield next)"
check "404 for an unknown subscriber" 404 "$(areq GET subscribers/nosuch/attempts)"
check "404 for a pull subscriber" 404 "$(areq GET subscribers/box/attempts)"
check "400 for limit 0" 400 "$(page limit=0)"
check "400 for limit 1001" 400 "$(page limit=1001)"
check "400 for a bad before" 400 "$(page before=yesterday)"
check "405 for POST" 405 "$(areq POST subscribers/at/attempts)"

# An id that needs escaping (a quote, a backslash, non-ASCII) is recorded
# as it is: the record is still JSON and the id reads back the same.
post evt.local.shop.at.created 'q%22%5C%C3%A9-1' x
wait_until 10 "page limit=1 >/dev/null; grep -q '\"eventId\":\"q' $T/abody"
check "an id with a quote, a backslash and an e-acute reads back" 'q"\é-1' "$(page limit=1 >/dev/null; python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["attempts"][0]["eventId"])' "$T/abody")"
# No answer: status null, the error, the time spent; not sent at all:
# ms null as well.
post evt.local.shop.dead.created dead-1 x
post evt.local.shop.refused.created refused-1 x
wait_until 10 "[ \"\$(areq GET subscribers/dead/attempts >/dev/null; python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))[\"attempts\"]))' $T/abody)\" = 1 ]"
check_match "no answer: status null, an error, ms" '^None .+ [0-9]+$' "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["attempts"][0]; print(r["status"], r["error"], r["ms"])' "$T/abody")"
wait_until 10 "[ \"\$(areq GET subscribers/refused/attempts >/dev/null; python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))[\"attempts\"]))' $T/abody)\" = 1 ]"
check_match "not sent: status and ms null, the reason" '^None .+ None$' "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["attempts"][0]; print(r["status"], r["error"], r["ms"])' "$T/abody")"

# The client.
check "treaty admin attempts: exit 0" 0 "$(tr_run ta TREATY_TOKEN=$AT -- admin attempts at --limit 3 --url "$RELAY_URL")"
check "a header and three lines, newest first" "TIME ATTEMPT STATUS MS INSTANCE EVENT-ID ERROR|3" "$(head -1 "$T/ta.out" | tr -s ' ' | sed 's/ $//')|$(($(wc -l < "$T/ta.out") - 1))"
check "treaty admin attempts --json: every record, across pages" 10 "$(tr_run taj TREATY_TOKEN=$AT -- admin attempts at --json --page 2 --url "$RELAY_URL" >/dev/null; wc -l < "$T/taj.out")"
check "treaty admin pause" "0 subscriber at paused" "$(tr_run tp TREATY_TOKEN=$AT -- admin pause at --url "$RELAY_URL") $(cat "$T/tp.out")"
tr_run ts TREATY_TOKEN=$AT -- admin status --url "$RELAY_URL" > /dev/null
check "status shows it" "at push config paused" "$(grep '^at ' "$T/ts.out" | tr -s ' ' | cut -d' ' -f1-4)"
check "treaty admin resume" "0 subscriber at resumed" "$(tr_run tr TREATY_TOKEN=$AT -- admin resume at --url "$RELAY_URL") $(cat "$T/tr.out")"
check "treaty admin pause of an unknown one: 1" 1 "$(tr_run tu TREATY_TOKEN=$AT -- admin pause nosuch --url "$RELAY_URL")"
check "treaty admin pause without a name: 2 (usage)" 2 "$(tr_run tn TREATY_TOKEN=$AT -- admin pause --url "$RELAY_URL")"

# At most TREATY_RELAY_ATTEMPTS_PER_SUBSCRIBER kept.
kill -TERM $RELAY_PID; wait $RELAY_PID 2>/dev/null
TREATY_RELAY_ATTEMPTS_PER_SUBSCRIBER=5 start_relay || { fail relay "did not start again"; finish; }
for i in 7 8 9; do post evt.local.shop.at.created at-$i x; done
wait_until 20 "[ \$(grep -c '\"status\": 204' $T/got) -ge 9 ]"
wait_until 10 "page limit=1000 >/dev/null; records $T/abody | grep -q ' at-9 '"
check "five kept" 5 "$(page limit=1000 >/dev/null; records "$T/abody" | wc -l)"
check "the newest five" "at-9 at-8 at-7" "$(records "$T/abody" | head -3 | cut -d' ' -f3 | tr '\n' ' ' | sed 's/ $//')"
finish
