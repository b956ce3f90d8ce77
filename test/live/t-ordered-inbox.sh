#!/usr/bin/env bash
# SPEC 18 for a pull subscriber: two relays share ordered inbox oin.  One
# of them holds it and serves it; the other forwards its workers' requests
# to the holder.  A GET hands out at most one event of a key until it is
# acknowledged, released or its lease runs out, and a second worker's GET
# gets other keys, through either relay; a lease's receipt from an
# earlier hand-out is 404; a replay of oin is ordered the same way.  Then
# two workers on both relays, 900 events over 50 keys, 10 % released, 5 %
# left to run out, the holder killed with SIGKILL twice and stopped with
# SIGTERM once: from the workers' own log, never two leases of a key held
# at once, each key's events first acknowledged in WORK's order, none
# missing; the same workers on an unordered twin fail that check.  By the
# relays' own stamps, the next holder starts within the two leases after
# a SIGKILL, within an inbox lease after a SIGTERM's release (the leases
# its workers hold are kept until they run out).
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
admin_setup
IT=inbox-token-0123456789; ISHA=$(sha256hex "$IT")
IT2=inbox2-token-012345678; IT2SHA=$(sha256hex "$IT2")
S=inbox-secret-0123456789
export TREATY_RELAY_LEASE_SECONDS=4
export TREATY_RELAY_SUBSCRIBERS='[{"name":"oin","tokenSha256":"'$ISHA'","secret":"'$S'","filter":"evt.*.shop.>","maxInFlight":8,"maxDeliver":50,"ordered":true},{"name":"unord","tokenSha256":"'$IT2SHA'","secret":"'$S'","filter":"evt.*.shop.order.>","maxInFlight":8,"maxDeliver":50}]'
# The front: a relay with no subscribers that takes the chaos part's events.
TREATY_RELAY_SUBSCRIBERS='[]' start_relay || { fail relay "the front did not start"; finish; }
FRONT=$RELAY_URL
relay_in 0
relay_in 1
wait_until 40 "holder_found oin 0" || { fail holder "no relay serves oin"; finish; }
HS=$(cat "$T/holder"); NS=$((1 - HS))
HU=${RU[$HS]} NU=${RU[$NS]}
check "one relay holds oin" 1 "$(cat "${RL[0]}" "${RL[1]}" | grep -cE 'msg="order holder" sub=oin ')"

# pub ID KEY: one event with partitionkey KEY through relay 0.
pub() {
	curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
	    -H 'Content-Type: application/json' -H "ce-id: $1" -H "ce-source: /t" \
	    -H 'ce-specversion: 1.0' -H 'ce-type: dev.shop.order.created.v1' \
	    -H "ce-partitionkey: $2" --data-binary '{"n":1}' \
	    "${RU[0]}/v1/events/evt.local.shop.order.created"
}
# iget BASE QUERY: a GET on oin, body in $T/body; prints the status.
iget() {
	rm -f "$T/body"
	curl -s -m 40 -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $IT" "$1/v1/inbox/oin?$2"
}
# got: "id:deliveryCount" of the last body's envelopes, space-separated.
got() {
	python3 -c 'import json,sys; print(" ".join("%s:%s" % (e["id"], e["deliveryCount"]) for e in json.load(open(sys.argv[1]))["envelopes"]))' "$T/body" 2>/dev/null ||
	    echo "ERROR: no inbox answer"
}
# rcpt ID: the receipt of ID in the last body, URL-encoded.
rcpt() { python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote([e for e in json.load(open(sys.argv[1]))["envelopes"] if e["id"] == sys.argv[2]][0]["receipt"], safe=""))' "$T/body" "$1"; }
# op METHOD BASE PATH: a lease operation; prints the status.
op() { curl -s -m 20 -o "$T/opbody" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $IT" "$2/v1/inbox/oin/$3"; }

T0=$(date -u +%Y-%m-%dT%H:%M:%SZ -d '-2 seconds')
for e in "a1 ka" "a2 ka" "b1 kb" "b2 kb"; do
	set -- $e
	[ "$(pub "$1" "$2")" = 202 ] || fail publish "$1 not stored"
done
check "worker 1 through the other relay (forwarded): the first of a key" "200 a1:1" "$(iget "$NU" 'lease=true&max=1&wait=5000') $(got)"
R_A1=$(rcpt a1)
check "worker 2 through the holder: the other key only, not a2" "200 b1:1" "$(iget "$HU" 'lease=true&max=10') $(got)"
R_B1=$(rcpt b1)
check "nothing more while a1 and b1 are out" "200 " "$(iget "$NU" 'lease=true&max=10') $(got)"
check "a1 acknowledged through the other relay" 204 "$(op DELETE "$NU" "a1?receipt=$R_A1")"
t_a2=$(now_ms)
check "then a2 is handed out" "200 a2:1" "$(iget "$HU" 'lease=true&max=10') $(got)"
R_A2=$(rcpt a2)
check "b1 released through the other relay" 204 "$(op POST "$NU" "b1/release?receipt=$R_B1")"
check "b1 again, its second hand-out; still not b2" "200 b1:2" "$(iget "$NU" 'lease=true&max=10') $(got)"
R_B1b=$(rcpt b1)
check "the first hand-out's receipt: 404" 404 "$(op DELETE "$HU" "b1?receipt=$R_B1")"
check "extend the current one: 204" 204 "$(op POST "$NU" "b1/extend?receipt=$R_B1b")"
check "b1 acknowledged" 204 "$(op DELETE "$NU" "b1?receipt=$R_B1b")"
# max=1: should a2's lease have run out already, b2 is still first.
check "then b2" "200 b2:1" "$(iget "$NU" 'lease=true&max=1&wait=5000') $(got)"
R_B2=$(rcpt b2)
check "b2 acknowledged; acknowledged again: 404" "204 404" "$(op DELETE "$NU" "b2?receipt=$R_B2") $(op DELETE "$HU" "b2?receipt=$R_B2")"
# a2 was left to run out (4 s): a long-poll on the other relay gets it,
# not before 4 s after the GET that handed it out was sent.
check "a2 handed out again once its lease ran out" "200 a2:2" "$(iget "$NU" 'lease=true&max=10&wait=8000') $(got)"
check "not before its lease ran out" yes "$([ $(($(now_ms) - t_a2)) -ge 4000 ] && echo yes || echo "after $(($(now_ms) - t_a2)) ms")"
R_A2b=$(rcpt a2)
check "a2's old receipt: 404" 404 "$(op DELETE "$NU" "a2?receipt=$R_A2")"
check "a2 acknowledged" 204 "$(op DELETE "$HU" "a2?receipt=$R_A2b")"
check "a destructive GET through the other relay" "200 c1:1" "$(pub c1 kc >/dev/null; iget "$NU" 'max=10&wait=5000') $(got)"
check "... took it: nothing left" "200 " "$(iget "$HU" 'lease=true&max=10') $(got)"

# A replay of oin (SPEC 15): ordered the same way among its own events,
# taken up by the holder alone, its leases answered through either relay.
check "POST replay of oin: 202, matched 5" "202 5" "$(areq POST "subscribers/oin/replay?since=$T0" "$HU") $(afield matched)"
RID=$(afield replay)
wait_until 30 "grep -q 'replay taken up.*replay=$RID' ${RL[$HS]}" || fail replay "the holder did not take it up"
check "only the holder took it up" "" "$(grep -l "replay taken up.*replay=$RID" "${RL[$NS]}")"
# Lease GETs through the other relay for up to 10 s, nothing answered,
# until three events came; then one more.
SEEN=
for i in $(seq 1 20); do
	[ "$(iget "$NU" 'lease=true&max=10&wait=500')" = 200 ] || break
	SEEN="$SEEN $(got)"
	[ -f "$T/r_a1" ] || { rcpt a1 > "$T/r_a1" 2>/dev/null || rm -f "$T/r_a1"; }
	[ $(echo $SEEN | wc -w) -ge 3 ] && break
done
iget "$NU" 'lease=true&max=10&wait=500' > /dev/null
SEEN="$SEEN $(got)"
check "the replay: the first of each key, not a2 nor b2" "a1:1 b1:1 c1:1" "$(echo $SEEN | tr ' ' '\n' | sort | xargs)"
check "its receipt names the replay" yes "$(grep -q "r$RID" "$T/r_a1" && echo yes || echo "no: $(cat "$T/r_a1")")"
check "the replay's a1 acknowledged through the holder" 204 "$(op DELETE "$HU" "a1?receipt=$(cat "$T/r_a1")")"
check "then the replay's a2" "200 a2:1" "$(iget "$NU" 'lease=true&max=10&wait=5000') $(got)"

# The chaos part: two workers on both relays; the holder killed with
# SIGKILL twice, then stopped with SIGTERM, a fresh relay replacing it
# each time (the workers read the relays' URLs again before each GET).
echo "$TOKEN" > "$T/token"
printf '%s\n' "${RU[@]}" > "$T/urls"
python3 "$ROOT/test/live/oinbox.py" work "$T/urls" oin "$IT" "$T/wlog" "$T/stop" 4000 7 2 2> "$T/werr" &
PIDS+=($!)
# The same workers on unord, an unordered twin: the checker must see it.
python3 "$ROOT/test/live/oinbox.py" work "$T/urls" unord "$IT2" "$T/ulog" "$T/stop" 4000 8 2 2> /dev/null &
PIDS+=($!)
python3 "$ROOT/test/live/ordered.py" publish "$FRONT" "$T/token" evt.local.shop.order.created 900 50 "$T/pub" 9 "" 30 &
PUB=$!
PIDS+=($PUB)
# acked: events of $T/pub acknowledged (204) in the workers' log.
acked() { python3 -c '
import json, sys
want = {l.split()[0] for l in open(sys.argv[2]) if l.strip()}
print(len({r["id"] for r in map(json.loads, open(sys.argv[1])) if r["status"] == 204} & want))' "$T/wlog" "$T/pub" 2>/dev/null || echo 0; }
grow() { local n; n=$(acked); wait_until 60 "[ \$(acked) -ge $((n + $1)) ]"; }
h=$HS
grow 60 || fail traffic "nothing acknowledged before the first kill"
for round in kill9 kill9 term; do
	dead_log=${RL[$h]}
	if [ $round = term ]; then
		kill -TERM "${RP[$h]}"
		wait_until 60 "! kill -0 ${RP[$h]} 2>/dev/null" || fail $round "the holder did not stop"
		t_dead=$(log_ms 'msg="order holder released" sub=oin' "$dead_log")
		check "$round: the holder released its lease" yes "$([ -n "$t_dead" ] && echo yes)"
	else
		kill -KILL "${RP[$h]}"
		wait "${RP[$h]}" 2>/dev/null
		t_dead=$(tail -1 "$dead_log" | stamp_ms)
	fi
	relay_in "$h"
	printf '%s\n' "${RU[@]}" > "$T/urls.new" && mv "$T/urls.new" "$T/urls"
	wait_until 40 "holder_found oin $t_dead" || { fail $round "no relay serves oin after it"; break; }
	n=$(cat "$T/holder")
	t_start=$(log_ms_after "$t_dead" 'msg="ordered delivery starts" sub=oin' "${RL[$n]}")
	echo "# $round: the next holder started $((t_start - t_dead)) ms after the last line of the old"
	# The holder's lease (10 s) and the inbox's lease (4 s), with 2 s to spare.
	[ $round = kill9 ] && check "$round: within the two leases" yes \
	    "$([ $((t_start - t_dead)) -le 16000 ] && echo yes || echo "no: $((t_start - t_dead)) ms")"
	# The leases out with workers are kept: at most one inbox lease (4 s).
	[ $round = term ] && check "$round: within an inbox lease of the release" yes \
	    "$([ $((t_start - t_dead)) -le 6000 ] && echo yes || echo "no: $((t_start - t_dead)) ms")"
	h=$n
	[ $round != term ] && { grow 60 || fail $round "nothing acknowledged after it"; }
done
wait $PUB
check "900 events stored" 900 "$(wc -l < "$T/pub")"
wait_until 180 "[ \$(acked) -ge 900 ]" || fail acked "$(acked) of 900"
touch "$T/stop"
python3 "$ROOT/test/live/ordered.py" check "$T/pub" "$T/wlog" /oin > "$T/verdict" 2>&1
check "one lease of a key at a time, in order per key, none missing" 0 "$?"
sed 's/^/# /' "$T/verdict"
python3 "$ROOT/test/live/ordered.py" check "$T/pub" "$T/ulog" /unord > "$T/uverdict" 2>&1
check "the unordered twin fails the same check: keys overlap or out of order" yes \
    "$(awk '$1 == "overlap" || $1 == "order" { n += $2 } END { print (n > 0 ? "yes" : "no: " n) }' "$T/uverdict")"
sed 's/^/# unord: /' "$T/uverdict"
check "the workers' answers were 200s (or a relay away)" "" "$(grep -v -E '^GET .*: (503|000)' "$T/werr" | head -3)"
check_no_sanitizer_report "no sanitizer report" $T/relay.*.log
finish
