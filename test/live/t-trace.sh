#!/usr/bin/env bash
# SPEC 17's tracing and latency: a producer's traceparent (ce-traceparent,
# or the plain header in binary mode, or the attribute in structured mode)
# reaches every attempt with the same trace id and flags, a new span id
# each time and tracestate unchanged, as OpenTelemetry's W3C propagator
# reads them (test/live/w3c, from npm: the test fails when it cannot be
# installed); an event without one, or with an invalid one, gets none;
# log lines about a traced event end with trace=<id>.  Both histograms:
# one observation of the duration per attempt, of the latency per 2xx.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }
cp -r "$ROOT/test/live/w3c" "$T/w3c"
if ! (cd "$T/w3c" && timeout 120 npm ci --no-audit --no-fund > npm.log 2>&1); then
	fail "npm ci of test/live/w3c" "$(tail -3 "$T/w3c/npm.log" | tr '\n' ' ')"
	finish
fi
gate_setup
S=test-secret-0123456789
export TREATY_RELAY_SUBSCRIBERS='[{"name":"tr","url":"'$H'/tr","secret":"'$S'","filter":"evt.*.shop.tr.>"},{"name":"plain","url":"'$H'/plain","secret":"'$S'","filter":"evt.*.shop.plain.>"},{"name":"st","url":"'$H'/st","secret":"'$S'","filter":"evt.*.shop.st.>"},{"name":"none","url":"'$H'/none","secret":"'$S'","filter":"evt.*.shop.none.>"},{"name":"bad","url":"'$H'/bad","secret":"'$S'","filter":"evt.*.shop.bad.>"}]'
export TREATY_RELAY_RETRY_BASE_MS=100 TREATY_RELAY_RETRY_MAX_MS=200
start_relay || { fail relay "did not start"; finish; }

TP1=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
TS1='congo=t61rcWkgMzE,rojo=00f067aa0ba902b7'
TP2=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00
TP3=00-5bf92f3577b34da6a3ce929d0e0e4736-10f067aa0ba902b7-01
# Two 503s then 204: three attempts of the traced event.
curl -s -X POST "$H/_ctl?path=/tr&status=503&count=2" > /dev/null
post evt.local.shop.tr.created tr-1 x -H "ce-traceparent: $TP1" -H "ce-tracestate: $TS1"
check "ce-traceparent stored" 202 "$STATUS"
post evt.local.shop.plain.created plain-1 x -H "traceparent: $TP2"
check "plain traceparent stored" 202 "$STATUS"
st=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$RELAY_URL/v1/events/evt.local.shop.st.created" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/cloudevents+json' \
    --data-binary '{"specversion":"1.0","id":"st-1","source":"/t","type":"dev.shop.st.created.v1","traceparent":"'$TP3'","data":"x"}')
check "structured traceparent stored" 202 "$st"
post evt.local.shop.none.created none-1 x
post evt.local.shop.bad.created bad-1 x -H "traceparent: 00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"
wait_until 20 "[ \$(grep -c '\"status\": 204' $T/got) -ge 5 ]"
check "three attempts of the traced event" 3 "$(grep -c '"/tr"' "$T/got")"
w3c() { (cd "$T/w3c" && node check.js "$T/got" "$@" 2>&1); }
check "ce-traceparent: same trace, new spans, tracestate kept (3 attempts)" "ok 3" "$(w3c /tr "$TP1" "$TS1")"
check "plain traceparent header: the same" "ok 1" "$(w3c /plain "$TP2" -)"
check "structured traceparent attribute: the same" "ok 1" "$(w3c /st "$TP3" -)"
check "no traceparent: none invented" "ok 1" "$(w3c /none -)"
check "an invalid traceparent counts as none" "ok 1" "$(w3c /bad -)"
# The checker fails where it should: another trace id is not this one.
check_match "the checker refuses another trace" "^FAIL trace id" "$(w3c /tr "$TP3" -)"
check "failed attempts' log lines carry the trace id" 2 "$(grep -c 'msg="delivery failed" sub=tr .* trace=4bf92f3577b34da6a3ce929d0e0e4736$' "$RELAY_LOG")"
check "untraced events' lines carry none" 0 "$(grep 'sub=none' "$RELAY_LOG" | grep -c 'trace=')"

# Histograms: a duration per attempt, a latency per 2xx.
check "duration: three observations for tr" 3 "$(metric 'treaty_relay_delivery_duration_seconds_count{subscriber="tr"}')"
check "latency: one observation for tr" 1 "$(metric 'treaty_relay_delivery_latency_seconds_count{subscriber="tr"}')"
check "latency buckets run to a day" 1 "$(metric 'treaty_relay_delivery_latency_seconds_bucket{subscriber="tr",le="86400"}')"
check "no histogram by the old name" 0 "$(metrics_text | grep -c '^treaty_relay_delivery_seconds')"
finish
