#!/usr/bin/env bash
# SIGHUP reloads the configuration file (SPEC 11) under a steady publisher
# on one keep-alive connection: producers and their tokens (a rotation
# fails no request), subscribers added, changed and removed, an inbox's
# token, stream settings; a restart-only setting is kept with a warning;
# an invalid file keeps the running configuration (JSON that does not parse
# is named with its place); the producers' changes are counted in the
# "configuration reloaded" line beside the subscribers'; the reload metrics
# and RELOADING=1/READY=1; a SIGHUP storm.  Nothing in flight fails and no
# connection closes.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }

RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
# systemd's notification socket, played by Python: one line per datagram.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    d = s.recv(4096)
    with open(sys.argv[2], "a") as f:
        f.write(d.decode().replace("\n", "|") + "\n")
' "$T/notify.sock" "$T/notify.log" &
PIDS+=($!)
wait_until 10 '[ -S "$T/notify.sock" ]' || { fail notify "no socket"; finish; }

S1=first-secret-0123456789
S2=second-secret-0123456789
NEW_TOKEN=new-token-0123456789
NEW_SHA=$(sha256hex "$NEW_TOKEN")
GAMMA_TOKEN=gamma-token-0123456789
GAMMA_SHA=$(sha256hex "$GAMMA_TOKEN")
I1=inbox-token-one-0123456789
I1_SHA=$(sha256hex "$I1")
I2=inbox-token-two-0123456789
I2_SHA=$(sha256hex "$I2")
H="http://127.0.0.1:$RPORT"
FILE=$T/relay.env

# conf PRODUCERS SUBSCRIBERS [EXTRA LINES]: write the configuration file.
conf() {
	{
		echo "NATS_URL=$NATS_URL_T"
		echo "TREATY_RELAY_PRODUCERS='$1'"
		echo "TREATY_RELAY_SUBSCRIBERS='$2'"
		echo "TREATY_RELAY_RETRY_BASE_MS=200"
		[ $# -gt 2 ] && printf '%s\n' "${@:3}"
	} > "$FILE.tmp"
	mv "$FILE.tmp" "$FILE"
}
prod() { echo '{"name":"alpha","tokenSha256":'"$1"',"subjects":["evt.*.shop.>","evt.*.other.>","evt.*.inbox.>"]}'; }
GAMMA='{"name":"gamma","tokenSha256":"'$GAMMA_SHA'","subjects":["evt.*.shop.>"]}'
hook1() { echo '{"name":"hook1","url":"'$H/$1'","secret":"'$2'","filter":"evt.*.shop.>"}'; }
HOOK2='{"name":"hook2","url":"'$H'/h2","secret":"'$S1'","filter":"evt.*.other.>"}'
inbox1() { echo '{"name":"inbox1","tokenSha256":'"$1"',"secret":"'$S1'","filter":"evt.*.inbox.>"}'; }

conf "[$(prod '"'$TOKEN_SHA'"')]" "[$(hook1 h1 $S1),$(inbox1 '"'$I1_SHA'"')]"
NOTIFY_SOCKET=$T/notify.sock PRODUCERS=none start_relay --config "$FILE" ||
    { fail relay "did not start"; finish; }

# reload: SIGHUP, then wait for its one result line.
NRELOAD=0
reload() {
	NRELOAD=$((NRELOAD + 1))
	kill -HUP $RELAY_PID
	wait_until 15 "test \$(grep -cE 'msg=\"configuration (reloaded|not reloaded)' '$RELAY_LOG') -ge $NRELOAD"
}
# more N: wait until the steady publisher has had N more answers.
progress() { cat "$T/steady.out.progress" 2>/dev/null || echo 0; }
more() {
	local from
	from=$(progress)
	wait_until 30 "test \$(progress) -ge $((from + $1))"
}
received() { grep -F "\"ce-id\": \"$1\"" "$T/deliveries" 2>/dev/null; }
path_of() { received "$1" | tail -1 | python3 -c 'import sys, json; print(json.loads(sys.stdin.readline())["path"])' 2>/dev/null; }
# sig_ok ID SECRET: the last delivery of ID verifies with SECRET.
sig_ok() {
	received "$1" | tail -1 | python3 -c '
import sys, json, hmac, hashlib
d = json.loads(sys.stdin.readline()); h = d["headers"]; body = bytes.fromhex(d["body"])
p = dict(x.split("=", 1) for x in h["x-treaty-signature"].split(","))
want = hmac.new(sys.argv[1].encode(), (p["t"] + "." + h["ce-id"] + ".").encode() + body, hashlib.sha256).hexdigest()
print("ok" if hmac.compare_digest(want, p["v1"]) else "bad")' "$2"
}
# cconf NAME: the consumer's filter and maxDeliver as JetStream has them.
cconf() {
	python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw "\$JS.API.CONSUMER.INFO.WORK.relay-$1" |
	    python3 -c 'import sys, json
r = json.loads(sys.stdin.read()); c = r["config"]
print("filter=%s max_deliver=%d" % (c["filter_subject"], c["max_deliver"]))' 2>&1
}
inbox_get() {
	curl -s -m 20 -o "$T/inbox.json" -w '%{http_code}' -H "Authorization: Bearer $1" \
	    "$RELAY_URL/v1/inbox/inbox1?lease=true&max=10${2:-}"
}

# The steady publisher: one keep-alive connection, its token from a file.
echo "$TOKEN" > "$T/tok"
python3 "$(dirname "$0")/steady.py" "$RELAY_URL" "$T/tok" evt.acme.shop.order.created \
    st- "$T/stop" "$T/steady.out" keep &
STEADY=$!
PIDS+=($STEADY)
more 20 || fail steady "the publisher does not get answers"

# 1. A producer added; the token rotation begins (new hash listed first).
TOKEN=$GAMMA_TOKEN post evt.acme.shop.order.created g-0 x
check "before: an unknown producer's token is 401" 401 "$STATUS"
conf "[$(prod '["'$NEW_SHA'","'$TOKEN_SHA'"]'),$GAMMA]" "[$(hook1 h1 $S1),$(inbox1 '"'$I1_SHA'"')]"
reload
check_match "reloaded: one info line with counts, the producers' too" \
    'msg="configuration reloaded" producers=2 subscribers=2 added=0 changed=0 removed=0 producers_added=1 producers_changed=1 producers_removed=0$' \
    "$(grep 'configuration reloaded' "$RELAY_LOG" | tail -1)"
check "  a line for each producer: alpha changed (a token listed), gamma added" \
    'msg="producer changed" producer=alpha|msg="producer added" producer=gamma' \
    "$(grep -o 'msg="producer [a-z]*" producer=.*' "$RELAY_LOG" | paste -sd'|')"
TOKEN=$GAMMA_TOKEN post evt.acme.shop.order.created g-1 x
check "the added producer publishes: 202" 202 "$STATUS"
TOKEN=$NEW_TOKEN post evt.acme.shop.order.created n-1 x
check "the producer's new token: 202" 202 "$STATUS"
post evt.acme.shop.order.created o-1 x
check "and its old one, still listed: 202" 202 "$STATUS"
# The publisher switches to the new token, then the old one goes.
more 10
# Renamed into place: the publisher reads the file before each request,
# and a truncate-then-write could hand it an empty token (a 401 seen once).
echo "$NEW_TOKEN" > "$T/tok.new" && mv "$T/tok.new" "$T/tok"
more 20
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1 $S1),$(inbox1 '"'$I1_SHA'"')]"
reload
check_match "  the old token removed: alpha changed again" 'producers_added=0 producers_changed=1 producers_removed=0$' \
    "$(grep 'configuration reloaded' "$RELAY_LOG" | tail -1)"
post evt.acme.shop.order.created o-2 x
check "the old token, removed: 401" 401 "$STATUS"
TOKEN=$NEW_TOKEN post evt.acme.shop.order.created n-2 x
check "the new one: 202" 202 "$STATUS"

# 2. Subscribers: hook2 added; a delivery under way while hook1 changes
#    url and secret; an inbox long-poll waiting through the reload.
TOKEN=$NEW_TOKEN post evt.acme.shop.order.created delay1-a x
wait_until 10 'received delay1-a >/dev/null'
inbox_get "$I1" '&wait=20000' > "$T/poll.status" &
POLL=$!
wait_until 10 'test "$(metric treaty_relay_inbox_long_polls{inbox=\"inbox1\"})" = 1'
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1b $S2),$(inbox1 '"'$I1_SHA'"'),$HOOK2]" \
    "TREATY_RELAY_WORK_MAX_AGE_HOURS=24"
reload
check_match "counts: one added, one changed; no producer changed" \
    ' added=1 changed=1 removed=0 producers_added=0 producers_changed=0 producers_removed=0$' \
    "$(grep 'configuration reloaded' "$RELAY_LOG" | tail -1)"
check_match "the log names the change" 'msg="subscriber changed" sub=hook1' "$(cat "$RELAY_LOG")"
TOKEN=$NEW_TOKEN post evt.acme.inbox.item.created in-1 x
wait "$POLL"
check "the long-poll waiting through the reload gets the event" "200 in-1" \
    "$(cat "$T/poll.status") $(python3 -c 'import json,sys; print(" ".join(e["id"] for e in json.load(open(sys.argv[1]))["envelopes"]))' "$T/inbox.json" 2>&1)"
wait_until 10 'test "$(metric treaty_relay_deliveries_total{subscriber=\"hook1\",outcome=\"delivered\"})" -ge 1 && ! grep -q "delivery closed.*delay1-a.*state=sending" "$RELAY_LOG" && received delay1-a | grep -q "\"attempt\": 1"'
check "the delivery under way finished once, not retried" "1 /h1" \
    "$(received delay1-a | wc -l) $(path_of delay1-a)"
check_match "  and was acknowledged" 'sub=hook1 id=delay1-a .*reason=delivered' \
    "$(grep 'delivery closed' "$RELAY_LOG" | grep delay1-a)"
TOKEN=$NEW_TOKEN post evt.acme.shop.order.created ok-c1 x
wait_until 10 'received ok-c1 >/dev/null'
check "a later delivery goes to the new url" /h1b "$(path_of ok-c1)"
check "  signed with the new secret" ok "$(sig_ok ok-c1 $S2)"
TOKEN=$NEW_TOKEN post evt.acme.other.thing.done ok-r2-1 x
wait_until 10 'received ok-r2-1 >/dev/null'
check "the added subscriber gets deliveries" /h2 "$(path_of ok-r2-1)"
check "WORK's max age is updated" "max_age_s=86400" \
    "$("$JSGET" "$NATS_URL_T" info WORK 2>&1 | grep max_age_s)"

# 3. hook2 removed: no more deliveries here, its consumer stays (the
#    event waits there), and it gets it when it comes back.
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1b $S2),$(inbox1 '"'$I2_SHA'"')]" \
    "TREATY_RELAY_WORK_MAX_AGE_HOURS=24"
reload
check_match "counts: inbox1 changed, hook2 removed" 'added=0 changed=1 removed=1' \
    "$(grep 'configuration reloaded' "$RELAY_LOG" | tail -1)"
check_match "the log says the consumer stays" 'subscriber removed.*consumer stays in JetStream.*sub=hook2 consumer=relay-hook2' \
    "$(cat "$RELAY_LOG")"
TOKEN=$NEW_TOKEN post evt.acme.other.thing.done ok-r2-2 x
wait_until 10 '[[ $(consumer_state relay-hook2) == *" pending=1 "* ]]'
check "an event for the removed subscriber waits in its consumer" "ack_pending=0 pending=1 not delivered" \
    "$(consumer_state relay-hook2 | cut -d' ' -f1,2) $(received ok-r2-2 >/dev/null && echo delivered || echo not delivered)"
check_match "its metrics are gone" '^0 [1-9]' \
    "$(metrics_text | grep -c 'subscriber="hook2"') $(metrics_text | grep -c 'subscriber="hook1"')"
check "the inbox's old token: 401" 401 "$(inbox_get "$I1")"
check "its new token: 200" 200 "$(inbox_get "$I2")"
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1b $S2),$(inbox1 '"'$I2_SHA'"'),$HOOK2]" \
    "TREATY_RELAY_WORK_MAX_AGE_HOURS=24"
reload
wait_until 10 'received ok-r2-2 >/dev/null'
check "added again, it gets what waited" /h2 "$(path_of ok-r2-2)"
check_match "its counters go on where they were" '^[2-9]' \
    "$(metric 'treaty_relay_deliveries_total{subscriber="hook2",outcome="delivered"}')"

# 3b. A consumer's settings: hook1's filter and maxDeliver, updated in
#     JetStream by the reload.
check "before: hook1's consumer as configured" "filter=evt.*.shop.> max_deliver=10" "$(cconf hook1)"
H1X='{"name":"hook1","url":"'$H'/h1b","secret":"'$S2'","filter":"evt.*.shop.order.>","maxDeliver":5}'
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$H1X,$(inbox1 '"'$I2_SHA'"'),$HOOK2]" \
    "TREATY_RELAY_WORK_MAX_AGE_HOURS=24"
reload
wait_until 10 'test "$(cconf hook1)" = "filter=evt.*.shop.order.> max_deliver=5"'
check "a changed filter and maxDeliver: the consumer is updated" "filter=evt.*.shop.order.> max_deliver=5" "$(cconf hook1)"

# 4. A restart-only setting: kept, one warning naming it.
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1b $S2),$(inbox1 '"'$I2_SHA'"'),$HOOK2]" \
    "TREATY_RELAY_WORK_MAX_AGE_HOURS=24" "TREATY_RELAY_MAX_PENDING=7"
reload
check "a restart-only setting: one warning naming it" 1 \
    "$(grep -c 'level=warn msg="this setting changes only with a restart; keeping the running value" var=TREATY_RELAY_MAX_PENDING' "$RELAY_LOG")"

# 5. Invalid files: one error line naming variable and field; the running
#    configuration stays (the producer still publishes, hook1 still gets).
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" '[{"name":"hook1","url":"ftp://x","secret":"'$S2'","filter":"evt.>"}]'
reload
check_match "bad subscriber url: one error line naming var and field" \
    'level=error msg="configuration not reloaded; keeping the running one" var=TREATY_RELAY_SUBSCRIBERS field=\[0\]\.url' \
    "$(grep 'not reloaded' "$RELAY_LOG" | tail -1)"
printf 'TREATY_RELAY_GRACE_SECOND=3\n' >> "$FILE"
reload
check_match "a misspelt variable: named" 'not reloaded.*var=TREATY_RELAY_GRACE_SECOND ' \
    "$(grep 'not reloaded' "$RELAY_LOG" | tail -1)"
conf "[$(prod '"'$NEW_SHA'"')]" '[{"name":"hook1","tokenSha256":"'$GAMMA_SHA'","secret":"'$S2'","filter":"evt.>"}]'
reload
check_match "push to pull under one name: refused, named" 'not reloaded.*var=TREATY_RELAY_SUBSCRIBERS field=\[0\] detail="hook1 cannot change between push and pull' \
    "$(grep 'not reloaded' "$RELAY_LOG" | tail -1)"
# A key given twice (SPEC 13): the second secret, far too short, would
# have passed unchecked behind the first.
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[${HOOK2%\}},\"secret\":\"short\"}]"
reload
check_match "a key given twice: refused, naming the field and the key" \
    'not reloaded.*var=TREATY_RELAY_SUBSCRIBERS field=\[0\]\.secret detail="duplicate key secret"' \
    "$(grep 'not reloaded' "$RELAY_LOG" | tail -1)"
# JSON that does not parse (issue 30): named with its place in the value.
BAD="[$(prod '"'$NEW_SHA'"'),$GAMMA,]"
conf "$BAD" "[$(hook1 h1b $S2),$(inbox1 '"'$I2_SHA'"'),$HOOK2]"
reload
check "JSON that does not parse: refused, naming the variable, the line and column, and why" \
    "level=error msg=\"configuration not reloaded; keeping the running one\" var=TREATY_RELAY_PRODUCERS field=- detail=\"not valid JSON near line 1, column ${#BAD}: unallowed token at this point in JSON text\"" \
    "$(grep 'not reloaded' "$RELAY_LOG" | tail -1 | cut -d' ' -f2-)"
TOKEN=$GAMMA_TOKEN post evt.acme.shop.order.created ok-kept x
check "the running configuration is kept: gamma still publishes" 202 "$STATUS"
wait_until 10 'received ok-kept >/dev/null'
check "  and hook1 still gets its events, signed as before" "/h1b ok" "$(path_of ok-kept) $(sig_ok ok-kept $S2)"

# 6. Metrics, systemd, and the publisher's account.
check "reloads counted: ok" 7 "$(metric 'treaty_relay_config_reloads_total{result="ok"}')"
check "reloads counted: error" 5 "$(metric 'treaty_relay_config_reloads_total{result="error"}')"
check_match "config_loaded_timestamp_seconds is recent" '^ok' \
    "$(t=$(metric treaty_relay_config_loaded_timestamp_seconds); [ $(( $(date +%s) - ${t:-0} )) -lt 300 ] && echo ok || echo "stale $t")"
check "RELOADING=1 then READY=1 for each reload" 12 \
    "$(grep -A1 '^RELOADING=1|MONOTONIC_USEC=[0-9]*$' "$T/notify.log" | grep -c '^READY=1')"
check "  and nothing else (READY=1 once at start)" 13 "$(grep -c '^READY=1' "$T/notify.log")"
# 7. A SIGHUP storm under load: 20 in a second, the file changing between
#    two valid versions (hook1's secret); nothing fails, the process stays,
#    every reload is applied whole (the last file wins).
ok_before=$(metric 'treaty_relay_config_reloads_total{result="ok"}')
conf_a() { conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1b $1),$(inbox1 '"'$I2_SHA'"'),$HOOK2]" "TREATY_RELAY_WORK_MAX_AGE_HOURS=24"; }
for i in $(seq 1 20); do
	if [ $((i % 2)) = 0 ]; then conf_a $S2; else conf_a $S1; fi
	kill -HUP $RELAY_PID
	sleep 0.05
done
conf_a $S1
kill -HUP $RELAY_PID
wait_until 15 'test "$(metric treaty_relay_config_reloads_total{result=\"ok\"})" -gt "$ok_before" && [ "$(grep -c "configuration reloaded" "$RELAY_LOG")" -eq "$(metric treaty_relay_config_reloads_total{result=\"ok\"})" ]'
n_ok=$(metric 'treaty_relay_config_reloads_total{result="ok"}')
check_match "SIGHUP storm: reloads applied (signals may coalesce), none refused" "^ok [0-9]+ 5$" \
    "$( [ "$n_ok" -gt "$ok_before" ] && [ "$n_ok" -le $((ok_before + 21)) ] && echo ok) $((n_ok - ok_before)) $(metric 'treaty_relay_config_reloads_total{result="error"}')"
TOKEN=$NEW_TOKEN post evt.acme.shop.order.created ok-storm x
wait_until 10 'received ok-storm >/dev/null'
check "after the storm the last file is in force: signed with its secret" "/h1b ok" "$(path_of ok-storm) $(sig_ok ok-storm $S1)"
check "no delivery failed or was dropped through all of it" "0 0" \
    "$(grep -c 'msg="delivery failed"' "$RELAY_LOG") $(grep -c 'msg="delivery dropped"' "$RELAY_LOG")"
more 20
touch "$T/stop"
wait "$STEADY"
check_match "the steady publisher: every request 202, on one connection" '^sent=[0-9]+ ok=([0-9]+) conns=1 other=$' \
    "$(cat "$T/steady.out")"
sent=$(sed -n 's/^sent=\([0-9]*\) ok=\([0-9]*\).*/\1 \2/p' "$T/steady.out")
check "  (sent = 202s)" "$(echo "$sent" | cut -d' ' -f1)" "$(echo "$sent" | cut -d' ' -f2)"
check "the relay is still running" yes "$(relay_alive && echo yes)"
check "no error lines but the five refused reloads" 5 "$(grep -c 'level=error' "$RELAY_LOG")"

# 8. An inbox removed while a long-poll waits on it, and an event for it
#    arriving then: the poll gets it, and the inbox is freed only after
#    the pull that brought it (the relay used to free it under that pull).
curl -s -m 30 -o "$T/poll2.json" -w '%{http_code}' -H "Authorization: Bearer $I2" \
    "$RELAY_URL/v1/inbox/inbox1?lease=true&max=10&wait=20000" > "$T/poll2.status" &
PIDS+=($!)
wait_until 10 'test "$(metric treaty_relay_inbox_long_polls{inbox=\"inbox1\"})" = 1'
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1b $S1),$HOOK2]" "TREATY_RELAY_WORK_MAX_AGE_HOURS=24"
reload
TOKEN=$NEW_TOKEN post evt.acme.inbox.item.created late-1 x
wait_until 25 '[ -s "$T/poll2.status" ]'
# (in-1, leased in 2. and never acknowledged, may come back first.)
check_match "a removed inbox's long-poll gets the event that arrives" '^200 (late-1|in-1)' \
    "$(cat "$T/poll2.status") $(python3 -c 'import json,sys; print(" ".join(e["id"] for e in json.load(open(sys.argv[1]))["envelopes"]))' "$T/poll2.json" 2>&1)"
check "  and the relay goes on" 202 "$(TOKEN=$NEW_TOKEN post evt.acme.shop.order.created after-1 x; echo $STATUS)"

# 9. An inbox's token rotated with the new hash listed last: a lease taken
#    with the new token is still extended and acknowledged once the old
#    hash is removed (its receipt is made with the hash of the token that
#    took it, not with the list's first).
I3=inbox-token-three-0123456789
I3_SHA=$(sha256hex "$I3")
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1b $S1),$(inbox1 '["'$I2_SHA'","'$I3_SHA'"]'),$HOOK2]" \
    "TREATY_RELAY_WORK_MAX_AGE_HOURS=24"
reload
TOKEN=$NEW_TOKEN post evt.acme.inbox.item.created rot-1 x
rcpt=
for _ in 1 2 3 4 5; do
	inbox_get "$I3" '&wait=3000' > /dev/null
	rcpt=$(python3 -c 'import json,sys
print("".join(e["receipt"] for e in json.load(open(sys.argv[1]))["envelopes"] if e["id"] == "rot-1"))' \
	    "$T/inbox.json" 2>/dev/null)
	[ -n "$rcpt" ] && break
done
check_match "rotation: rot-1 leased with the new token" '^[0-9]' "$rcpt"
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1b $S1),$(inbox1 '"'$I3_SHA'"'),$HOOK2]" \
    "TREATY_RELAY_WORK_MAX_AGE_HOURS=24"
reload
iop() { curl -s -m 10 -o /dev/null -w '%{http_code}' -X "$1" -H "Authorization: Bearer $I3" "$RELAY_URL/v1/inbox/inbox1/$2"; }
check "  the old hash removed: its lease is extended (204)" 204 "$(iop POST "rot-1/extend?receipt=$rcpt")"
check "  and acknowledged (204)" 204 "$(iop DELETE "rot-1?receipt=$rcpt")"

# 10. The ack wait and progress interval lowered while a delivery takes
#     6 s: it reports progress at the new pace at once, so JetStream does
#     not hand the event out again under it (at the old pace, 10 s, the
#     new 3 s ack wait ran out first).
TOKEN=$NEW_TOKEN post evt.acme.shop.order.created delay6-a x
wait_until 10 'received delay6-a >/dev/null'
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1b $S1),$(inbox1 '"'$I3_SHA'"'),$HOOK2]" \
    "TREATY_RELAY_WORK_MAX_AGE_HOURS=24" "TREATY_RELAY_ACK_WAIT_SECONDS=3" "TREATY_RELAY_PROGRESS_SECONDS=1"
reload
wait_until 20 'grep -q "delivery closed.*id=delay6-a .*reason=delivered" "$RELAY_LOG"'
check "a lowered ack wait under a slow delivery: delivered once, not handed out again" 1 \
    "$(received delay6-a | wc -l)"

# 11. A subscriber added while NATS is away: subscribed all the same, so
#     once NATS is back its events are delivered (they used to wait in its
#     consumer until a restart).
HOOK3='{"name":"hook3","url":"'$H'/h3","secret":"'$S1'","filter":"evt.*.inbox.late.>"}'
stop_nats
wait_until 10 '[ "$(metric treaty_relay_nats_connected)" = 0 ]'
conf "[$(prod '"'$NEW_SHA'"'),$GAMMA]" "[$(hook1 h1b $S1),$HOOK2,$HOOK3]" \
    "TREATY_RELAY_WORK_MAX_AGE_HOURS=24"
reload
check_match "added while NATS is away" 'configuration reloaded.*added=1' \
    "$(grep 'configuration reloaded' "$RELAY_LOG" | tail -1)"
restart_nats || fail nats "did not restart"
wait_until 20 'healthz_ok'
wait_until 20 'TOKEN=$NEW_TOKEN post evt.acme.inbox.late.created h3-1 x; [ "$STATUS" = 202 ]'
wait_until 20 'received h3-1 >/dev/null'
check "  its event is delivered once NATS is back" /h3 "$(path_of h3-1)"

# 12. A producer removed: counted, named, and its token is now unknown.
conf "[$(prod '"'$NEW_SHA'"')]" "[$(hook1 h1b $S1),$HOOK2,$HOOK3]" \
    "TREATY_RELAY_WORK_MAX_AGE_HOURS=24"
reload
check_match "a producer removed: counted" 'producers=1 subscribers=3 added=0 changed=0 removed=0 producers_added=0 producers_changed=0 producers_removed=1$' \
    "$(grep 'configuration reloaded' "$RELAY_LOG" | tail -1)"
check "  and named" 'msg="producer removed" producer=gamma' "$(grep -o 'msg="producer removed" producer=.*' "$RELAY_LOG")"
TOKEN=$GAMMA_TOKEN post evt.acme.shop.order.created g-gone x
check "  its token: 401, an unknown token" "401 unknown token: its SHA-256 is no producer's tokenSha256" \
    "$STATUS $(json_get detail)"
finish
