#!/usr/bin/env bash
# SPEC 18 across instances and crashes (the issue's test): two relays
# share ordered subscriber ord (a third, with no subscribers, takes the
# events); 2,000 events over 100 keys; a receiver that answers 500 to 10 %
# of requests and holds 5 % for 100-600 ms.  While events flow, the relay
# delivering ord is killed with SIGKILL, twice, then stopped with SIGTERM,
# a fresh relay taking its place each time.  From the receiver's own log:
# no two requests of one key ever open at once, each key's events first
# answered 2xx in WORK's order, and every event answered 2xx but those
# dropped (recorded).  By the relays' own stamps: after a SIGKILL the next
# holder starts within the lease (10 s) and an ack wait (4 s) of the dead
# one's last line; after the SIGTERM the holder released its lease.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
admin_setup
ordered_setup 10 5
SUBS='[{"name":"ord","url":"'$H'/ord","secret":"'$S'","filter":"evt.*.shop.>","maxInFlight":16,"ordered":true}]'
export TREATY_RELAY_RETRY_BASE_MS=100 TREATY_RELAY_RETRY_MAX_MS=400
export TREATY_RELAY_ACK_WAIT_SECONDS=4 TREATY_RELAY_PROGRESS_SECONDS=1
TREATY_RELAY_SUBSCRIBERS='[]' start_relay || { fail relay "the front did not start"; finish; }
FRONT=$RELAY_URL
export TREATY_RELAY_SUBSCRIBERS=$SUBS

relay_in 0
relay_in 1
# holder_after MS: the slot whose relay logged that ord's ordered delivery
# starts, stamped at MS or later (waited for, 40 s at most).
holder_after() {
	wait_until 40 "holder_found ord $1" && cat "$T/holder" || echo none
}
oks() { python3 -c '
import json, sys
print(len({r["id"] for r in map(json.loads, open(sys.argv[1])) if r["path"] == "/ord" and 200 <= r["status"] < 300}))' "$T/got" 2>/dev/null || echo 0; }
grow() { local n; n=$(oks); wait_until 60 "[ \$(oks) -ge $((n + $1)) ]"; }

echo "$TOKEN" > "$T/token"
python3 "$ROOT/test/live/ordered.py" publish "$FRONT" "$T/token" evt.local.shop.order.created 2000 100 "$T/pub" 11 "$T/stop" 8 &
PUB=$!
PIDS+=($PUB)

h=$(holder_after 0)
check_match "a holder delivers" "^[01]$" "$h"
[ "$h" = none ] && finish
grow 150 || fail traffic "no deliveries before the first kill"
for round in kill9 kill9 term; do
	dead_log=${RL[$h]}
	if [ $round = term ]; then
		kill -TERM "${RP[$h]}"
		wait_until 60 "! kill -0 ${RP[$h]} 2>/dev/null" || fail $round "the holder did not stop"
		check "$round: the holder released its lease" logged \
		    "$(in_log 'msg="order holder released" sub=ord' "$dead_log")"
	else
		kill -KILL "${RP[$h]}"
		wait "${RP[$h]}" 2>/dev/null
	fi
	# When the old holder let go: its release (SIGTERM), its last line.
	if [ $round = term ]; then
		t_dead=$(log_ms 'msg="order holder released" sub=ord' "$dead_log")
	else
		t_dead=$(tail -1 "$dead_log" | stamp_ms)
	fi
	relay_in "$h"
	n=$(holder_after "$t_dead")
	check_match "$round: another holder starts" "^[01]$" "$n"
	[ "$n" = none ] && finish
	t_start=$(log_ms_after "$t_dead" 'msg="ordered delivery starts" sub=ord' "${RL[$n]}")
	echo "# $round: next holder started $((t_start - t_dead)) ms after the last line of the old"
	[ $round = kill9 ] && check "$round: within the lease and an ack wait" yes \
	    "$([ $((t_start - t_dead)) -le 16000 ] && echo yes || echo "no: $((t_start - t_dead)) ms")"
	h=$n
	[ $round != term ] && { grow 150 || fail $round "no deliveries after it"; }
done
wait $PUB
check "2,000 events stored" 2000 "$(wc -l < "$T/pub")"
cat "${RL[@]}" $T/relay.*.log 2>/dev/null | grep -E 'msg="delivery dropped" sub=ord' | sed -n 's/.* id=\([^ ]*\).*/\1/p' | sort -u > "$T/dropped"
wait_until 240 "[ \$(oks) -ge \$((2000 - \$(wc -l < $T/dropped))) ]" || fail delivered "$(oks) of 2000"
python3 "$ROOT/test/live/ordered.py" check "$T/pub" "$T/got" /ord "$T/dropped" > "$T/verdict" 2>&1
check "ord: in order per key, one at a time, none missing" 0 "$?"
sed 's/^/# /' "$T/verdict"
echo "# dropped: $(wc -l < "$T/dropped")"
check_no_sanitizer_report "no sanitizer report" $T/relay.*.log
finish
