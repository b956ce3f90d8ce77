#!/usr/bin/env bash
# SPEC 17's pace: rateLimit shared by the instances that deliver to a
# subscriber (two relays and a counting receiver: within 10 % of the rate
# in every 10 s window), the adaptive window (a receiver that answers 429
# whenever more than 4 of its requests are open sees about 4 open, not
# maxInFlight's 64), and a Retry-After that holds every new POST to that
# subscriber on that relay (capped at 5 min).
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
admin_setup
gate_setup
export TREATY_RELAY_SUBSCRIBERS='[{"name":"rl","url":"'$H'/rl","secret":"'$S'","filter":"evt.*.shop.rl.>","rateLimit":40},{"name":"busy","url":"'$H'/busy","secret":"'$S'","filter":"evt.*.shop.busy.>","maxDeliver":20,"breaker":{"failures":0}},{"name":"ra","url":"'$H'/ra","secret":"'$S'","filter":"evt.*.shop.ra.>"},{"name":"year","url":"'$H'/year","secret":"'$S'","filter":"evt.*.shop.year.>"}]'
start_relay || { fail relay "A did not start"; finish; }
A_URL=$RELAY_URL A_LOG=$RELAY_LOG
start_relay || { fail relay "B did not start"; finish; }
B_URL=$RELAY_URL B_LOG=$RELAY_LOG
RELAY_URL=$A_URL
# instances: the keys of the instances bucket.
instances() { python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw '$JS.API.STREAM.INFO.KV_TREATY_INSTANCES' | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"]["num_subjects"])'; }

# --- rateLimit 40/s across two relays, from a backlog ------------------
check "pause rl while its backlog is stored" 204 "$(areq POST subscribers/rl/pause)"
python3 "$ROOT/test/live/publish.py" "$A_URL" "$TOKEN" evt.local.shop.rl.created rl- 1400 8 > "$T/pub"
check_match "1,400 stored" "^1400" "$(cat "$T/pub")"
wait_until 15 "[ \"\$(instances)\" = 2 ]"
check "both relays in the instances bucket" 2 "$(instances)"
check "resume rl" 204 "$(areq POST subscribers/rl/resume)"
wait_until 60 "[ \$(grep -c '\"/rl\"' $T/got) -ge 1400 ]"
python3 - "$T/got" <<'PY' > "$T/rate"
import json, sys
t = sorted(r["start"] for r in map(json.loads, open(sys.argv[1])) if r["path"] == "/rl" and 200 <= r["status"] < 300)
# Whole 10 s windows from 1 s after the first delivery to the last.
w, bad, start = [], [], t[0] + 1000
while start + 10000 <= t[-1]:
    w.append(sum(1 for x in t if start <= x < start + 10000))
    start += 10000
print("windows", len(w), "within", all(360 <= n <= 440 for n in w), w)
PY
sed 's/^/# /' "$T/rate"
check_match "rl: every 10 s window within 10 % of 400 (40/s shared by two)" "^windows [2-9] within True" "$(cat "$T/rate")"

# --- the adaptive window: 429 above 4 open --------------------------------
curl -s -X POST "$H/_ctl?path=/busy&status=204&hold_ms=50&max_open=4" > /dev/null
python3 "$ROOT/test/live/publish.py" "$A_URL" "$TOKEN" evt.local.shop.busy.created busy- 600 8 > "$T/pub"
wait_until 90 "[ \$(python3 -c 'import json,sys; print(sum(1 for r in map(json.loads, open(sys.argv[1])) if r[\"path\"] == \"/busy\" and r[\"status\"] == 204))' $T/got) -ge 600 ]"
python3 - "$T/got" <<'PY' > "$T/busy"
import json, sys
r = sorted((x for x in map(json.loads, open(sys.argv[1])) if x["path"] == "/busy"), key=lambda x: x["start"])
t0 = r[0]["start"]
later = [x["open"] for x in r if x["start"] > t0 + 2000]
# Requests open across both relays: each halves its own window, so about
# 4 each, 8 in all; 64 each without it.
share = sum(1 for o in later if o <= 8) / len(later)
print("open after 2 s: at most 8 for", round(share, 3), "max", max(later), "n", len(later))
print("ok", share >= 0.95 and max(later) <= 16)
PY
sed 's/^/# /' "$T/busy"
check "busy: about 4 open per relay after the first 2 s, not 64" "ok True" "$(grep '^ok' "$T/busy")"
check "busy: every event delivered" 600 "$(python3 -c 'import json,sys; print(len({r["id"] for r in map(json.loads, open(sys.argv[1])) if r["path"] == "/busy" and r["status"] == 204}))' "$T/got")"

# --- Retry-After holds the subscriber's new POSTs on that relay ----------
curl -s -X POST "$H/_ctl?path=/ra&status=503&count=1&retry_after=3" > /dev/null
post evt.local.shop.ra.created ra-1 x
wait_until 10 "grep -q '\"/ra\"' $T/got"
for i in 2 3 4 5; do post evt.local.shop.ra.created ra-$i x; done
wait_until 20 "[ \$(python3 -c 'import json,sys; print(len({r[\"id\"] for r in map(json.loads, open(sys.argv[1])) if r[\"path\"] == \"/ra\" and r[\"status\"] == 204}))' $T/got) -ge 5 ]"
python3 - "$T/got" <<'PY' > "$T/ra"
import json, sys
r = sorted((x for x in map(json.loads, open(sys.argv[1])) if x["path"] == "/ra"), key=lambda x: x["start"])
first = r[0]
assert first["status"] == 503, first
# The relay that got the 503 sends nothing to /ra for 3 s; the other
# relay's are its own.  Which relay sent what the receiver cannot tell,
# so the relays' "delivery held" lines say which held.
print("first 503 then", [x["status"] for x in r[1:3]])
print("gap", min(x["start"] for x in r[1:]) - first["end"])
PY
sed 's/^/# /' "$T/ra"
check "the 503's relay logged its hold, 3 s" 1 "$(cat "$A_LOG" "$B_LOG" | grep -c 'msg="delivery held" sub=ra status=503 held_ms=3000')"
HOLDER=$(grep -l 'msg="delivery held" sub=ra' "$A_LOG" "$B_LOG")
# The held relay's deliveries of ra after the hold: each at least 3 s
# after it, by its own stamps.
check "no POST to ra from the held relay within its hold" "ok" "$(python3 - "$HOLDER" <<'PY'
import re, sys, datetime
held, sent = None, []
for l in open(sys.argv[1]):
    m = re.match(r'time=(\S+) ', l)
    if not m: continue
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000
    if 'msg="delivery held" sub=ra' in l: held = t
    elif held is not None and 'msg="delivery state"' in l and 'sub=ra' in l and 'to=resolving' in l: sent.append(t - held)
print("ok" if held is not None and sent and all(g >= 2990 for g in sent) else "sent %s ms after the hold" % [round(g) for g in sent if g < 2990])
PY
)"

# --- a Retry-After of a year is held 5 minutes ---------------------------
curl -s -X POST "$H/_ctl?path=/year&status=429&retry_after=31536000" > /dev/null
post evt.local.shop.year.created year-1 x
check "a year's Retry-After held 5 min" logged "$(log_wait 10 'msg="delivery held" sub=year status=429 held_ms=300000' "$A_LOG" || log_wait 1 'msg="delivery held" sub=year status=429 held_ms=300000' "$B_LOG"; [ $? = 0 ] && echo logged)"
finish
