#!/usr/bin/env bash
# SPEC 18 and 15: a replay of an ordered push subscriber is ordered the
# same way, also across takeovers.  Two relays share ordered subscriber
# ord (a front relay takes the events); 800 events over 40 keys are
# delivered, then replayed, to a receiver that answers 500 to 10 % and
# holds 5 % for 100-600 ms; while the replay runs, the holder is killed
# with SIGKILL twice, a fresh relay replacing it each time.  maxInFlight
# 4: the holder has at most 64 of the replay's events in hand, so that a
# new holder gets later ones at once while earlier ones come back only
# after their ack wait (what its wait for the replay is there for).  From the
# receiver's log, for the requests begun after the replay started (only
# replayed events then): no two requests of a key open at once, each
# key's events first answered 2xx in WORK's order, none missing.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
admin_setup
ordered_setup 10 5
SUBS='[{"name":"ord","url":"'$H'/ord","secret":"'$S'","filter":"evt.*.shop.>","maxInFlight":4,"ordered":true}]'
export TREATY_RELAY_RETRY_BASE_MS=100 TREATY_RELAY_RETRY_MAX_MS=400
# An ack wait past the holder's lease (10 s), as the default 30 s is:
# the old holder's replayed events come back after the new holder began.
export TREATY_RELAY_ACK_WAIT_SECONDS=15 TREATY_RELAY_PROGRESS_SECONDS=1
TREATY_RELAY_SUBSCRIBERS='[]' start_relay || { fail relay "the front did not start"; finish; }
FRONT=$RELAY_URL
export TREATY_RELAY_SUBSCRIBERS=$SUBS
relay_in 0
relay_in 1
wait_until 40 "holder_found ord 0" || { fail holder "no relay delivers ord"; finish; }
h=$(cat "$T/holder")

T0=$(date -u +%Y-%m-%dT%H:%M:%SZ -d '-2 seconds')
echo "$TOKEN" > "$T/token"
python3 "$ROOT/test/live/ordered.py" publish "$FRONT" "$T/token" evt.local.shop.order.created 800 40 "$T/pub" 13 > /dev/null
check "800 events stored" 800 "$(wc -l < "$T/pub")"
oks() { python3 -c '
import json, sys
after = int(sys.argv[2])
print(len({r["id"] for r in map(json.loads, open(sys.argv[1])) if r["path"] == "/ord" and r["start"] >= after and 200 <= r["status"] < 300}))' "$T/got" "${1:-0}" 2>/dev/null || echo 0; }
wait_until 180 "[ \$(oks) -ge 800 ]" || fail delivered "$(oks) of 800 before the replay"

t_replay=$(now_ms)
check "POST replay of ord: 202, matched 800" "202 800" "$(areq POST "subscribers/ord/replay?since=$T0" "${RU[$h]}") $(afield matched)"
RID=$(afield replay)
grow() { local n; n=$(oks "$t_replay"); wait_until 60 "[ \$(oks $t_replay) -ge $((n + $1)) ]"; }
for round in 1 2; do
	grow 120 || { fail replay "round $round: the replay does not go on"; break; }
	dead_log=${RL[$h]}
	kill -KILL "${RP[$h]}"
	wait "${RP[$h]}" 2>/dev/null
	t_dead=$(tail -1 "$dead_log" | stamp_ms)
	relay_in "$h"
	wait_until 40 "holder_found ord $t_dead" || { fail holder "round $round: no holder after the SIGKILL"; break; }
	h=$(cat "$T/holder")
	wait_until 40 "grep -q 'replay taken up.*replay=$RID' ${RL[$h]}" || fail replay "round $round: the new holder did not take the replay up"
done
wait_until 240 "[ \$(oks $t_replay) -ge 800 ]" || fail replayed "$(oks "$t_replay") of 800"
ORDER_ONLY_AFTER=1 python3 "$ROOT/test/live/ordered.py" check "$T/pub" "$T/got" /ord "" "$t_replay" > "$T/verdict" 2>&1
check "the replay: in order per key, one at a time, none missing" 0 "$?"
sed 's/^/# /' "$T/verdict"
check_no_sanitizer_report "no sanitizer report" $T/relay.*.log
finish
