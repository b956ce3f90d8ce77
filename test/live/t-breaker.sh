#!/usr/bin/env bash
# SPEC 17's breaker, the issue's test: two relays, a receiver that answers
# 503 for 60 s (each held 300 ms, so that overlapping requests show) and
# 204 after, 20 events/s for 70 s, maxDeliver 5.  Subscriber brk has the
# breaker (20 failures, the default); nobrk the same with failures 0.
#   - brk drops nothing, and every event reaches it once the receiver is
#     back; nobrk drops events (what the breaker changes);
#   - brk is tripped (one log line, one AUDIT record), every instance stops
#     sending within 1 s, one probe at a time across both relays (no two
#     /brk requests overlap while tripped, and all of them are probes), the
#     probes spaced as the state says (the delay drawn by its writer, in
#     [d/2, d] for d = 5 s doubling, and kept within 1 s by the relays'
#     own stamps), and a probe's 2xx makes it active on both relays.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
admin_setup
gate_setup
export TREATY_RELAY_SUBSCRIBERS='[{"name":"brk","url":"'$H'/brk","secret":"'$S'","filter":"evt.*.shop.>","maxDeliver":5},{"name":"nobrk","url":"'$H'/nobrk","secret":"'$S'","filter":"evt.*.shop.>","maxDeliver":5,"breaker":{"failures":0}}]'
start_relay || { fail relay "A did not start"; finish; }
A_URL=$RELAY_URL A_LOG=$RELAY_LOG
start_relay || { fail relay "B did not start"; finish; }
B_URL=$RELAY_URL B_LOG=$RELAY_LOG

curl -s -X POST "$H/_ctl?path=/brk&status=503&for_ms=60000&hold_ms=300" > /dev/null
curl -s -X POST "$H/_ctl?path=/nobrk&status=503&for_ms=60000&hold_ms=300" > /dev/null
echo "$TOKEN" > "$T/token"
python3 "$ROOT/test/live/steady.py" "$A_URL" "$T/token" evt.local.shop.order.created ev- "$T/stop" "$T/steady" keep 50 &
PUB=$!
PIDS+=($PUB)
# 70 s of events, by the publisher's own count (about 20 a second).
wait_until 100 "[ \$(cat $T/steady.progress 2>/dev/null || echo 0) -ge 1400 ]"
touch "$T/stop"
wait $PUB
N=$(sed -n 's/.*ok=\([0-9]*\).*/\1/p' "$T/steady")
check_match "events stored" "^1[4-9][0-9][0-9]$" "$N"

# Every event reaches brk: the last probe is at most ~160 s after the start.
wait_until 240 "[ \$(python3 -c '
import json,sys
print(len({r[\"id\"] for r in map(json.loads, open(sys.argv[1])) if r[\"path\"] == \"/brk\" and 200 <= r[\"status\"] < 300}))' $T/got) -ge $N ]"
stamps() { cat "$A_LOG" "$B_LOG" | grep -E -- "$1" | stamp_ms | sort -n; }

python3 - "$T/got" "$N" "$(stamps 'msg="subscriber state" sub=brk state=tripped' | head -1)" <<'EOF' > "$T/verdict"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
n, t_trip = int(sys.argv[2]), int(sys.argv[3] or 0)
brk = sorted((r for r in recs if r["path"] == "/brk"), key=lambda r: r["start"])
ok_ids = {r["id"] for r in brk if 200 <= r["status"] < 300}
print("delivered", len(ok_ids) == n)
t_res = min(r["end"] for r in brk if 200 <= r["status"] < 300)
# While tripped (from 1 s after the trip to the first 2xx): only probes,
# never two at once across both relays.
during = [r for r in brk if t_trip + 1300 < r["start"] < t_res]
print("only probes while tripped", all(r["probe"] for r in during), len(during))
print("one probe at a time", all(b["start"] >= a["end"] for a, b in zip(during, during[1:])))
probes = [r for r in brk if r["probe"]]
print("probes", len(probes), [r["status"] for r in probes])
# A 2xx ends the trip: the first 2xx after the trip was a probe.
first_ok = min((r for r in brk if 200 <= r["status"] < 300 and r["start"] > t_trip), key=lambda r: r["start"])
print("first 2xx after the trip was a probe", bool(first_ok["probe"]))
print("attempts while tripped not counted", max(int(r["attempt"]) for r in brk) <= 5)
EOF
cat "$T/verdict" | sed 's/^/# /'
check "brk: every event delivered once the receiver is back" "delivered True" "$(grep '^delivered' "$T/verdict")"
check_match "brk: while tripped only probes reach it" "^only probes while tripped True [1-9]" "$(grep '^only probes' "$T/verdict")"
check "brk: at most one probe in flight across both relays" "one probe at a time True" "$(grep '^one probe' "$T/verdict")"
check "brk: a probe's 2xx ended the trip" "first 2xx after the trip was a probe True" "$(grep '^first 2xx' "$T/verdict")"
check_match "brk: 2 to 6 probes, the last one 2xx" "^probes [2-6] \[(503, )+204\]$" "$(grep '^probes' "$T/verdict")"
for u in "$A_URL" "$B_URL"; do
	for reason in max_deliver rejected invalid; do
		check "brk: no drop ($reason) on $u" 0 "$(RELAY_URL=$u metric "treaty_relay_deliveries_terminated_total{subscriber=\"brk\",reason=\"$reason\"}")"
	done
done
nd=$(( $(RELAY_URL=$A_URL metric 'treaty_relay_deliveries_terminated_total{subscriber="nobrk",reason="max_deliver"}') + $(RELAY_URL=$B_URL metric 'treaty_relay_deliveries_terminated_total{subscriber="nobrk",reason="max_deliver"}') ))
check_match "nobrk (failures 0): events dropped" "^[1-9][0-9]*$" "$nd"

# The state's changes: tripped once, then active by a probe; one line each.
check "one tripped line" 1 "$(cat "$A_LOG" "$B_LOG" | grep -c 'msg="subscriber state" sub=brk state=tripped previous=active reason=breaker')"
check "one active line, by a probe" 1 "$(cat "$A_LOG" "$B_LOG" | grep -c 'msg="subscriber state" sub=brk state=active previous=tripped reason=probe')"
check "nobrk never tripped" 0 "$(cat "$A_LOG" "$B_LOG" | grep -c 'msg="subscriber state" sub=nobrk')"
for u in "$A_URL" "$B_URL"; do
	check "active on $u" 1 "$(RELAY_URL=$u metric 'treaty_relay_subscriber_state{subscriber="brk",state="active"}')"
done

# Spacing, by the relays' own stamps: each probe is sent within 1 s after
# the delay its state says (next_ms, drawn in [d/2, d]) has passed since
# the write that set it (the trip, or the last failed probe).
python3 - "$A_LOG" "$B_LOG" <<'EOF' > "$T/spacing"
import re, sys, datetime
ev = []
for f in sys.argv[1:]:
    for l in open(f):
        m = re.match(r'time=(\S+) ', l)
        if not m or 'sub=brk' not in l:
            continue
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000
        if 'msg="subscriber state"' in l and 'state=tripped' in l:
            ev.append((t, "set", 1, int(re.search(r'next_ms=(\d+)', l).group(1))))
        elif 'msg="breaker probe"' in l and 'next_ms=' in l:
            ev.append((t, "set", int(re.search(r' n=(\d+)', l).group(1)), int(re.search(r'next_ms=(\d+)', l).group(1))))
        elif 'msg="breaker probe"' in l and 'sending=1' in l:
            ev.append((t, "send", int(re.search(r' n=(\d+)', l).group(1)), 0))
ev.sort()
last, bad, sends = None, [], 0
for t, kind, n, d in ev:
    if kind == "set":
        nominal = min(5000 * 2 ** (n - 1), 300000)
        if not nominal // 2 <= d <= nominal:
            bad.append("n=%d delay %d outside [%d, %d]" % (n, d, nominal // 2, nominal))
        last = (t, n, d)
    else:
        sends += 1
        if last is None or last[1] != n:
            bad.append("probe %d sent without its delay" % n)
            continue
        gap = t - last[0]
        # The other relays start their timers when their watch brings the
        # write, a little before its writer hears the acknowledgement.
        if not last[2] - 200 <= gap <= last[2] + 1000:
            bad.append("probe %d sent %d ms after its delay was set (delay %d)" % (n, gap, last[2]))
print("spacing", "ok" if not bad and sends >= 2 else bad or "too few probes")
EOF
cat "$T/spacing" | sed 's/^/# /'
check "probes spaced as their delays say" "spacing ok" "$(cat "$T/spacing")"
check "two AUDIT state records" 2 "$(python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw '$JS.API.STREAM.INFO.AUDIT' '{"subjects_filter":"audit.relay.treaty.subscriber.state"}' | python3 -c 'import json,sys; print(json.load(sys.stdin).get("state",{}).get("subjects",{}).get("audit.relay.treaty.subscriber.state",0))')"
finish
