#!/usr/bin/env bash
# Push delivery (SPEC 3): content and signature (verified here with
# Python's own hmac), the attempt's number, filters, retries with backoff,
# 4xx terminates, maxDeliver, and every drop recorded in AUDIT.
. "$(dirname "$0")/lib.sh"
SECRET=test-secret-0123456789
RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
SWSECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
export TREATY_RELAY_SUBSCRIBERS='[{"name":"hook","url":"http://127.0.0.1:'$RPORT'/in","secret":"'$SECRET'","filter":"evt.*.shop.>","maxDeliver":3},
 {"name":"sw","url":"http://127.0.0.1:'$RPORT'/sw","secrets":["'$SWSECRET'","'$SECRET'"],"filter":"evt.*.webhooks.>","standardWebhooks":true}]'
export TREATY_RELAY_RETRY_BASE_MS=400
PRODUCERS='[{"name":"alpha","tokenSha256":"'$TOKEN_SHA'","subjects":["evt.*.shop.>","evt.*.webhooks.>"]},{"name":"beta","tokenSha256":"'$OTHER_SHA'","subjects":["evt.*.other.>"]}]'
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

# received ID: the JSON lines of deliveries of one event id
received() { grep -F "\"ce-id\": \"$1\"" "$T/deliveries" 2>/dev/null; }
nreceived() { received "$1" | wc -l; }

post evt.acme.shop.order.created ok-1 'hello delivery'
wait_until 10 'test "$(nreceived ok-1)" -ge 1'
check "delivered once" 1 "$(nreceived ok-1)"
verify=$(received ok-1 | head -1 | python3 -c '
import sys, json, hmac, hashlib, time
d = json.loads(sys.stdin.readline()); h = d["headers"]; body = bytes.fromhex(d["body"])
sig = h.get("x-treaty-signature", "")
parts = dict(p.split("=", 1) for p in sig.split(",") if "=" in p)
t = parts.get("t", "0")
want = hmac.new(sys.argv[1].encode(), (t + "." + h["ce-id"] + ".").encode() + body, hashlib.sha256).hexdigest()
ok = hmac.compare_digest(want, parts.get("v1", "")) and abs(time.time() - int(t)) < 300
print("ok" if ok else "bad " + sig)
print(h.get("ce-type"), h.get("ce-source"), h.get("ce-specversion"), h.get("content-type"), body.decode())
' "$SECRET")
check "signature verified with an independent HMAC" ok "$(echo "$verify" | head -1)"
check "x-treaty-attempt: 1 on the first try" 1 \
    "$(received ok-1 | head -1 | python3 -c 'import sys, json; print(json.loads(sys.stdin.readline())["headers"].get("x-treaty-attempt"))')"
check "CloudEvent attributes and body as stored" "dev.shop.order.created.v1 /test 1.0 text/plain hello delivery" "$(echo "$verify" | tail -1)"

# Standard Webhooks headers, checked with that specification's algorithm
# written here in Python; and secret rotation: one v1= per secret.
post evt.acme.webhooks.hook.sent ok-sw-1 'sw body'
wait_until 10 'test "$(nreceived ok-sw-1)" -ge 1'
sw=$(received ok-sw-1 | head -1 | python3 -c '
import sys, json, hmac, hashlib, base64
d = json.loads(sys.stdin.readline()); h = d["headers"]; body = bytes.fromhex(d["body"])
key = base64.b64decode(sys.argv[1][len("whsec_"):])
msg = (h["webhook-id"] + "." + h["webhook-timestamp"] + ".").encode() + body
want = "v1," + base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode()
sigs = h["webhook-signature"].split(" ")
t = dict(p.split("=", 1) for p in h["x-treaty-signature"].split(",") if p.startswith("t="))["t"]
v1s = [p[3:] for p in h["x-treaty-signature"].split(",") if p.startswith("v1=")]
tre = [hmac.new(k.encode(), (t + "." + h["ce-id"] + ".").encode() + body, hashlib.sha256).hexdigest() for k in sys.argv[1:3]]
print("ok" if want in sigs and h["webhook-id"] == "ok-sw-1" and h["webhook-timestamp"] == t else "bad")
print("ok" if len(v1s) == 2 and v1s == tre else "bad %s" % v1s)
' "$SWSECRET" "$SECRET")
check "Standard Webhooks signature verifies with that algorithm" ok "$(echo "$sw" | head -1)"
check "rotation: one v1= per secret, newest first" ok "$(echo "$sw" | tail -1)"
# An id that is not ASCII (ok-sw-é-2, percent-encoded in the binary-mode
# header): webhook-id is ASCII, the ce-id header's form, and the Standard
# Webhooks signature is over exactly that.
post evt.acme.webhooks.hook.sent 'ok-sw-%C3%A9-2' 'sw body 2'
wait_until 10 'received "ok-sw-%C3%A9-2" >/dev/null'
sw2=$(received 'ok-sw-%C3%A9-2' | head -1 | python3 -c '
import sys, json, hmac, hashlib, base64
d = json.loads(sys.stdin.readline()); h = d["headers"]; body = bytes.fromhex(d["body"])
key = base64.b64decode(sys.argv[1][len("whsec_"):])
wid = h["webhook-id"]
msg = (wid + "." + h["webhook-timestamp"] + ".").encode() + body
want = "v1," + base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode()
print(wid, wid.isascii() and wid.isprintable(), want in h["webhook-signature"].split(" "))
' "$SWSECRET" 2>&1)
check "non-ASCII id: webhook-id is the ASCII header form, and the signature verifies over it" \
    "ok-sw-%C3%A9-2 True True" "$sw2"

# Filter: evt.*.other.> is not the subscriber's.
TOKEN=$OTHER_TOKEN post evt.acme.other.thing.done ok-other x
check "an event outside the filter is stored" 202 "$STATUS"
# Witnesses, instead of a 1 s sleep: an event inside the filter published
# after it is delivered, and both consumers then have nothing left to
# deliver or to wait for (JetStream will hand them nothing more).
post evt.acme.shop.order.created ok-after-other x
wait_until 10 'test "$(nreceived ok-after-other)" -ge 1'
check "and not delivered" "0 after=1 settled" \
    "$(nreceived ok-other) after=$(nreceived ok-after-other) $(quiet relay-hook relay-sw)"

# 503, 503, 204: three attempts, gaps inside the jitter windows.
post evt.acme.shop.order.created fail2-1 x
wait_until 15 'test "$(nreceived fail2-1)" -ge 3'
check "503, 503, 204: three attempts" 3 "$(nreceived fail2-1)"
# Each attempt says its number (JetStream's delivery count), unsigned.
check "x-treaty-attempt: 1, 2, 3" "1 2 3" "$(received fail2-1 | python3 -c '
import sys, json
print(" ".join(json.loads(l)["headers"].get("x-treaty-attempt", "-") for l in sys.stdin))')"
gaps=$(received fail2-1 | python3 -c '
import sys, json
t = [json.loads(l)["t"] for l in sys.stdin]
print(" ".join("%d" % ((b - a) * 1000) for a, b in zip(t, t[1:])))')
read -r g1 g2 <<< "$gaps"
# nominal 400 ms then 800 ms; actual in [d/2, d].  The lower bounds are
# the backoff (load only lengthens a gap); the upper ones allow for a
# loaded machine and still catch a delay far beyond its window.
if [ "${g1:-0}" -ge 150 ] && [ "${g1:-0}" -le 1200 ] && [ "${g2:-0}" -ge 350 ] && [ "${g2:-0}" -le 2000 ]; then
	ok "retry gaps inside the backoff windows ($gaps ms)"
else
	fail "retry gaps inside the backoff windows" "$gaps ms"
fi

# Retry-After on 503 is honoured (1 s instead of 200-400 ms).
post evt.acme.shop.order.created fail2-ra-1 x
wait_until 15 'test "$(nreceived fail2-ra-1)" -ge 2'
g=$(received fail2-ra-1 | python3 -c '
import sys, json
t = [json.loads(l)["t"] for l in sys.stdin]
print("%d" % ((t[1] - t[0]) * 1000))')
if [ "$g" -ge 900 ] && [ "$g" -le 3500 ]; then ok "Retry-After: 1 waited ($g ms)"; else fail "Retry-After: 1 waited" "$g ms"; fi

# 400: exactly one attempt, recorded in AUDIT.
post evt.acme.shop.order.created reject-1 x
wait_until 10 'test "$(nreceived reject-1)" -ge 1'
# No further attempt can come once JetStream holds nothing pending or
# unacknowledged for the subscriber (the relay terminated the event).
check "400: exactly one attempt" "1 settled" "$(nreceived reject-1) $(quiet relay-hook)"
drop=$("$JSGET" "$NATS_URL_T" last AUDIT audit.relay.treaty.delivery.dropped 2>/dev/null)
check_match "400: the drop is in AUDIT as a CloudEvent" 'ce-type: dev.treaty.delivery.dropped.v1' "$drop"
check_match "400: drop record data" '"subscriber":"hook","eventId":"reject-1","source":"/test","subject":"evt.acme.shop.order.created","attempts":1,"status":400,"error":null' "$drop"

# Always 500 with maxDeliver 3: exactly three attempts, then dropped.
post evt.acme.shop.order.created always500-1 x
wait_until 20 'test "$(nreceived always500-1)" -ge 3'
check "always 500, maxDeliver 3: exactly three attempts" "3 settled" "$(nreceived always500-1) $(quiet relay-hook)"
drop=$("$JSGET" "$NATS_URL_T" last AUDIT audit.relay.treaty.delivery.dropped 2>/dev/null)
check_match "maxDeliver: drop record" '"eventId":"always500-1".*"attempts":3,"status":500' "$drop"
check_match "maxDeliver: logged" 'msg="delivery dropped" sub=hook id=always500-1' "$(cat "$RELAY_LOG")"
check_match "each failed attempt logged with its next delay" 'msg="delivery failed" sub=hook id=always500-1 subject=evt.acme.shop.order.created attempt=1 status=500 error=- next_ms=[0-9]+' "$(cat "$RELAY_LOG")"
check "metrics: dropped for max_deliver" 1 "$(metric 'treaty_relay_deliveries_terminated_total{subscriber="hook",reason="max_deliver"}')"
check "metrics: dropped as rejected" 1 "$(metric 'treaty_relay_deliveries_terminated_total{subscriber="hook",reason="rejected"}')"
if grep -q "$SECRET" "$RELAY_LOG"; then fail "the secret is never logged" "found in the log"; else ok "the secret is never logged"; fi

# A subscriber added later gets what WORK retains; one whose server is
# down (connection refused) gets the event once the server is up.
LPORT=$(free_port)
kill $RELAY_PID; wait $RELAY_PID 2>/dev/null
export TREATY_RELAY_SUBSCRIBERS='[{"name":"hook","url":"http://127.0.0.1:'$RPORT'/in","secret":"'$SECRET'","filter":"evt.*.shop.>","maxDeliver":3},
 {"name":"newcomer","url":"http://127.0.0.1:'$RPORT'/new","secret":"'$SECRET'","filter":"evt.*.shop.order.created"},
 {"name":"down","url":"http://127.0.0.1:'$LPORT'/in","secret":"'$SECRET'","filter":"evt.*.shop.order.late"}]'
export TREATY_RELAY_RETRY_BASE_MS=200
start_relay || { fail restart "relay did not start"; finish; }
wait_until 10 'grep -q "\"path\": \"/new\"" "$T/deliveries"'
check "a subscriber added later receives the events stored before it" 1 "$(grep -F '"ce-id": "ok-1"' "$T/deliveries" | grep -c '"path": "/new"')"
post evt.acme.shop.order.late ok-late-1 x
log_wait 10 'msg="delivery failed" sub=down id=ok-late-1 .*error="connection failed"'
check_match "connection refused: a failed attempt" 'msg="delivery failed" sub=down id=ok-late-1 subject=evt.acme.shop.order.late attempt=1 status=0 error="connection failed"' "$(cat "$RELAY_LOG")"
start_receiver $LPORT "$T/late"
wait_until 15 'grep -q ok-late-1 "$T/late"'
check "then up: delivered" 1 "$(grep -c '"ce-id": "ok-late-1"' "$T/late" 2>/dev/null)"
finish
