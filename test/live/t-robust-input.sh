#!/usr/bin/env bash
# Robustness against hostile or broken HTTP clients (SPEC 2, DESIGN "HTTP"):
# garbage on the socket, oversized header blocks and bodies, absurd request
# lines, a slow-drip client and many idle connections never crash the relay
# nor hold up a well-behaved client; the counters stay consistent.
. "$(dirname "$0")/lib.sh"

SUBJ=evt.acme.shop.order.created
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

ACCEPTED=0	# 202 answers we received, to compare with /metrics

RAW=$ROOT/test/live/rawhttp.py
# raw_http TEXT [SECONDS]: send TEXT (printf %b escapes) on a new
# connection; print the status code of the first answer, or "closed" when
# the relay closed without answering (or said nothing for SECONDS, 5).
raw_http() {
	python3 "$RAW" --out first --answers 1 --timeout "${2:-5}" "$RELAY_PORT" "send:$1"
}

# good_post ID: a valid timed_post; sets STATUS, BODY and MS; counts 202s.
good_post() {
	timed_post $SUBJ "$1" robust
	[ "$STATUS" = 202 ] && ACCEPTED=$((ACCEPTED + 1))
}

alive() {
	if kill -0 "$RELAY_PID" 2>/dev/null && healthz_ok; then ok "$1: relay alive, healthz 200"
	else fail "$1: relay alive, healthz 200" "relay gone or unhealthy; $(tail -3 "$RELAY_LOG")"; fi
}

AUTH="Authorization: Bearer $TOKEN"
CE=(-H 'ce-specversion: 1.0' -H 'ce-id: big-1' -H 'ce-source: /t' -H "ce-type: $(type_for $SUBJ)")

# --- garbage on the socket ------------------------------------------------
check_match "garbage line: 4xx or close" '^(4[0-9][0-9]|closed)$' "$(raw_http 'GARBAGE\r\n\r\n')"
check_match "bare CRLFs: 4xx or close" '^(4[0-9][0-9]|closed)$' "$(raw_http '\r\n\r\n\r\n\r\n')"
check_match "request line without version: 4xx or close" '^(4[0-9][0-9]|closed)$' "$(raw_http 'GET /healthz\r\n\r\n')"
check_match "HTTP/9.9: 4xx/505 or close" '^(4[0-9][0-9]|505|closed)$' "$(raw_http 'GET /healthz HTTP/9.9\r\n\r\n')"
check_match "header line without colon: 4xx or close" '^(4[0-9][0-9]|closed)$' "$(raw_http 'GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n')"
check_match "NUL bytes in the request line: 4xx or close" '^(4[0-9][0-9]|closed)$' "$(raw_http 'GET /\x00\x00 HTTP/1.1\r\n\r\n')"
check_match "bad chunk size: 4xx or close" '^(4[0-9][0-9]|closed)$' \
    "$(raw_http "POST /v1/events/$SUBJ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $TOKEN\r\nTransfer-Encoding: chunked\r\n\r\nzzzz\r\nhello\r\n0\r\n\r\n")"
check_match "negative Content-Length: 4xx or close" '^(4[0-9][0-9]|closed)$' \
    "$(raw_http "POST /v1/events/$SUBJ HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\nhello")"
rnd=$({ head -c 4096 /dev/urandom; printf '\r\n\r\n'; } |
    python3 "$RAW" --out first --answers 1 "$RELAY_PORT" stdin)
check_match "4 KiB of random bytes: 4xx or close" '^(4[0-9][0-9]|closed)$' "$rnd"
# A connection closed in the middle of the headers.
( exec 3<>"/dev/tcp/127.0.0.1/$RELAY_PORT" && printf 'POST /v1/events/%s HTTP/1.1\r\nContent-Le' "$SUBJ" >&3 ) 2>/dev/null
alive "after garbage"

# --- oversized header block, body, request line ---------------------------
big=$(head -c 20000 /dev/zero | tr '\0' a)
check_match "one 20 KB header: error status" '^4[0-9][0-9]$' \
    "$(curl_status -X POST "$RELAY_URL/v1/events/$SUBJ" -H "$AUTH" "${CE[@]}" -H "X-Big: $big" --data-binary x)"
hdrs=()
for i in $(seq 1 200); do hdrs+=(-H "X-Filler-$i: $(head -c 100 /dev/zero | tr '\0' b)"); done
check_match "200 headers of 100 bytes (> 16 KiB): error status" '^4[0-9][0-9]$' \
    "$(curl_status "$RELAY_URL/healthz" "${hdrs[@]}")"
check_match "20 KB request target: error status" '^4[0-9][0-9]$' \
    "$(curl_status "$RELAY_URL/v1/events/$big")"
head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' x > "$T/2mib"
before=$(count WORK)
# Without waiting for 100-continue the client may see the connection reset
# before the 413 (man page, CAVEATS): either, and nothing stored.
check_match "2 MiB body sent at once: 413 (or reset)" '^(413|000)$' \
    "$(curl_status -X POST "$RELAY_URL/v1/events/$SUBJ" -H "$AUTH" "${CE[@]}" -H 'Content-Type: text/plain' -H 'Expect:' --data-binary @"$T/2mib")"
check "2 MiB body with Expect: 100-continue: 413" 413 \
    "$(curl_status -X POST "$RELAY_URL/v1/events/$SUBJ" -H "$AUTH" "${CE[@]}" -H 'Content-Type: text/plain' --data-binary @"$T/2mib")"
# Waiting for the body would end at the 10 s request timeout: the answer is
# read for 9 s, and "at once" is within 7 s of the request's first byte,
# up to the relay's own stamp of the refusal answered (starting python and
# reading the answer are not in it).
st=$(python3 "$RAW" --t0 "$T/413.t0" --out first --answers 1 --timeout 9 "$RELAY_PORT" \
    "send:POST /v1/events/$SUBJ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $TOKEN\r\nContent-Type: text/plain\r\nContent-Length: 2097152\r\n\r\n")
check "Content-Length 2 MiB, no body sent: 413 before reading" 413 "$st"
t0=$(cat "$T/413.t0")
el=$(log_ms_after "$t0" 'msg="connection closed" control=0 reason="refusal answered"') && el=$((el - t0))
check_ms "413 on Content-Length answered at once, by the relay's stamp" "$el" 0 7000
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' y > "$T/1mib1"
check_match "1 MiB + 1 byte chunked body sent at once: 413 (or reset)" '^(413|000)$' \
    "$(curl_status -X POST "$RELAY_URL/v1/events/$SUBJ" -H "$AUTH" "${CE[@]}" -H 'Content-Type: text/plain' -H 'Transfer-Encoding: chunked' -H 'Expect:' --data-binary @"$T/1mib1")"
check_match "none of the over-limit bodies was stored" "^$before = [0-9]+$" "$(count WORK) = $before"
head -c $((1024 * 1024)) /dev/zero | tr '\0' z > "$T/1mib"
st=$(curl_status -X POST "$RELAY_URL/v1/events/$SUBJ" -H "$AUTH" -H 'ce-specversion: 1.0' -H 'ce-id: onemib-1' -H 'ce-source: /t' -H "ce-type: $(type_for $SUBJ)" -H 'Content-Type: text/plain' -H 'Expect:' --data-binary @"$T/1mib")
check "exactly 1 MiB body: 202" 202 "$st"
[ "$st" = 202 ] && ACCEPTED=$((ACCEPTED + 1))
alive "after oversized requests"

# --- absurd methods -------------------------------------------------------
check_match "absurd method FROBNICATE to an event: 405 (SPEC 2)" '^405$' "$(raw_http "FROBNICATE /v1/events/$SUBJ HTTP/1.1\r\nHost: x\r\n\r\n")"
longm=$(head -c 5000 /dev/zero | tr '\0' M)
check_match "5000-byte method: 4xx/501 or close" '^(4[0-9][0-9]|501|closed)$' "$(raw_http "$longm / HTTP/1.1\r\nHost: x\r\n\r\n")"
check_match "lowercase method get: 4xx/501 or close" '^(4[0-9][0-9]|501|closed)$' "$(raw_http 'get /healthz HTTP/1.1\r\nHost: x\r\n\r\n')"
check "PATCH on /v1/events: 405" 405 "$(raw_http "PATCH /v1/events/$SUBJ HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")"
check "OPTIONS on /healthz: 405" 405 "$(raw_http 'OPTIONS /healthz HTTP/1.1\r\nHost: x\r\n\r\n')"
alive "after absurd methods"

# --- a slow-drip client does not hold up others ---------------------------
# Two clients dripping a byte every 0.1 s for 15 s: one in its head, one
# in its body.  Each writes its first byte's time to a file once started.
xs=$(head -c 150 /dev/zero | tr '\0' X)
python3 "$RAW" --t0 "$T/drip-hdr.t0" --timeout 1 "$RELAY_PORT" \
    "send:POST /v1/events/$SUBJ HTTP/1.1\r\nHost: x\r\n" "drip:0.1:$xs" > /dev/null &
DRIP_HDR=$!
PIDS+=("$DRIP_HDR")
python3 "$RAW" --t0 "$T/drip-body.t0" --timeout 1 "$RELAY_PORT" \
    "send:POST /v1/events/$SUBJ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $TOKEN\r\nce-specversion: 1.0\r\nce-id: drip-1\r\nce-source: /t\r\nce-type: $(type_for $SUBJ)\r\nContent-Length: 1000\r\n\r\n" \
    "drip:0.1:${xs//X/b}" > /dev/null &
DRIP_BODY=$!
PIDS+=("$DRIP_BODY")
# Both drip clients connected and sending (instead of 0.5 s).
wait_until 5 '[ -s "$T/drip-hdr.t0" ] && [ -s "$T/drip-body.t0" ]'
# Each drip would go on for 15 s, so it ends at the 10 s request timeout:
# held up would mean about that long.  The relay logs no request's start,
# so this is the wall clock, as curl measures the request (its start not
# counted): a sanitizer build on a loaded machine takes well under a
# second for it, held up is up to 10 s; the bound is 5 s.
slow=0
for i in 1 2 3 4 5; do
	good_post "during-drip-$i"
	if [ "$STATUS" != 202 ] || [ "$MS" -ge 5000 ]; then
		slow=1
		fail "POST during a slow-drip client: 202 in < 5 s (#$i)" "status $STATUS in ${MS} ms"
	fi
	sleep 0.2	# spread the POSTs over the drip (pacing, not a wait)
done
[ $slow = 0 ] && ok "5 POSTs during two slow-drip clients: 202 in < 5 s each"
kill "$DRIP_HDR" "$DRIP_BODY" 2>/dev/null
wait "$DRIP_HDR" "$DRIP_BODY" 2>/dev/null

# --- 100 idle connections -------------------------------------------------
fds=()
opened=0
for i in $(seq 1 100); do
	if exec {fd}<>"/dev/tcp/127.0.0.1/$RELAY_PORT"; then
		fds+=("$fd")
		opened=$((opened + 1))
	fi
done 2>/dev/null
check "100 idle connections opened" 100 "$opened"
good_post idle-1
check "POST with 100 idle connections: 202" 202 "$STATUS"
# Held up would be a hang (or the 30 s idle timeout); the wall clock as
# curl measures the request (the relay logs no request's start): 8 s is
# room for a sanitizer build on a loaded machine.
if [ "$MS" -lt 8000 ]; then ok "POST with 100 idle connections in < 8 s (${MS} ms)"
else fail "POST with 100 idle connections in < 8 s" "${MS} ms"; fi
# Half of them now send a partial request and stay.
for fd in "${fds[@]:0:50}"; do { printf 'GET /healthz HTTP/1.1\r\nHo' >&"$fd"; } 2>/dev/null; done
good_post idle-2
check "POST with 50 half-requests pending: 202" 202 "$STATUS"
for fd in "${fds[@]}"; do exec {fd}>&-; done
good_post idle-3
check "POST after 100 connections dropped: 202" 202 "$STATUS"

# --- afterwards -----------------------------------------------------------
alive "after everything"
# metrics_text prints "ERROR: ..." unless /metrics answered 200; an empty
# body had every "no bad line" check below pass.
m=$(metrics_text)
check "metrics: events 202 count equals the 202s we received" "$ACCEPTED" \
    "$(metric 'treaty_relay_http_requests_total{route="events",status="202"}')"
lines_of() { case $m in "ERROR: "*) echo "$m" ;; *) printf '%s\n' "$m" | grep "$@" ;; esac; }
n_req=$(lines_of -c '^treaty_relay_http_requests_total')
bad=$(lines_of '^treaty_relay_http_requests_total' | grep -Ev '^treaty_relay_http_requests_total\{route="(events|healthz|metrics|other)",status="[1-5][0-9][0-9]"\} [0-9]+$')
check "metrics: every requests_total line well-formed" "some lines, none bad: []" \
    "$([ "${n_req:-0}" -gt 0 ] 2>/dev/null && echo "some lines" || echo "no lines"), none bad: [$bad]"
# (healthz may have answered 503 once while the relay was starting.)
# (501: an unknown method, the client's; events answer it 405.)
check "metrics: no 500 on any route, no 5xx but 501 on events or other" "[]" \
    "[$(lines_of -E '^treaty_relay_http_requests_total\{(.*status="500"|route="events",status="5|route="other",status="5([1-9]|0[02-9]))')]"
check "metrics: nothing in flight" 0 "$(printf '%s\n' "$m" | awk '$1 == "treaty_relay_publishes_in_flight" { print $2 }')"
check_no_sanitizer_report "no sanitizer report in the relay log" "$RELAY_LOG"
check "no body marker in the relay log" 0 "$(grep -c 'robust' "$RELAY_LOG")"
finish
