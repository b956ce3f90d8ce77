#!/usr/bin/env bash
# A stopping relay takes no new deliveries: it leaves its delivery groups
# at SIGTERM, so what it gives back goes to other instances (or waits in
# JetStream), not straight back to itself.  Before, every give-back came
# back at once and counted as a delivery: during the grace period a
# backlog's events reached their last attempt without being tried, and
# those the grace period then cut short were dropped, although the
# subscriber never failed.
. "$(dirname "$0")/lib.sh"
RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
export TREATY_RELAY_SUBSCRIBERS='[{"name":"hook","url":"http://127.0.0.1:'$RPORT'/in","secret":"test-secret-0123456789","filter":"evt.*.shop.>","maxDeliver":3,"maxInFlight":4}]'
export TREATY_RELAY_GRACE_SECONDS=3
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

# distinct: event ids the subscriber received at least once.
distinct() { grep -o '"ce-id": "[^"]*"' "$T/deliveries" 2>/dev/null | sort -u | wc -l; }
# beyond: deliveries, in every relay log, past their second attempt.
beyond() { cat "$T"/relay.*.log | grep 'msg=delivered' | grep -vc 'attempt=[12] '; }

# A backlog of 40 events the subscriber takes 1 s each, 4 at a time.
out=$(python3 "$(dirname "$0")/publish.py" "$RELAY_URL" "$TOKEN" evt.acme.shop.order.created delay1- 40 4)
check_match "40 events stored" "^40 *$" "$out"
wait_until 15 '[ "$(distinct)" -ge 1 ]'
FIRST=$RELAY_LOG
kill -TERM $RELAY_PID
wait_until 20 '! kill -0 $RELAY_PID'
wait $RELAY_PID
check "the first relay stopped: exit 0" 0 $?
n=$(grep -c 'msg=delivered' "$FIRST")
check_match "it delivered during its grace period" '^([4-9]|[1-9][0-9])$' "$n"
check "every one of them a first attempt" 0 "$(grep 'msg=delivered' "$FIRST" | grep -vc 'attempt=1 ')"
# SPEC 10: unsubscribing would have deleted a consumer nats.c made; the
# relay makes its own and only destroys its subscriptions.  The consumer
# and what it still owes outlive the relay.
check_match "the durable consumer relay-hook outlives the relay, its backlog kept" \
    '^ack_pending=[0-9]+ pending=[1-9][0-9]* ' "$(consumer_state relay-hook)"

# The rest, after a restart: every event delivered, none dropped.
start_relay || { fail restart "relay did not become healthy"; finish; }
wait_until 60 '[ "$(distinct)" -ge 40 ]'
check "all 40 delivered after the restart" 40 "$(distinct)"
check "none dropped (AUDIT is empty)" 0 "$(count AUDIT)"
check "no delivery needed a third attempt" 0 "$(beyond)"

# A keep-alive connection open when the relay is told to stop: the next
# event on it is still stored (its client has no one else to ask), and the
# answer says Connection: close.  A delivery under way (a subscriber that
# takes 60 s) keeps the relay in its grace period meanwhile.
post evt.acme.shop.order.created slow-ka x
wait_until 10 'grep -q "\"ce-id\": \"slow-ka\"" "$T/deliveries"'
ka=$(python3 - "$RELAY_URL" "$TOKEN" "$RELAY_PID" "$RELAY_LOG" <<'PY'
import http.client, os, signal, sys, time, urllib.parse
url, token, pid, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
u = urllib.parse.urlsplit(url)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
def post(i):
    c.request("POST", "/v1/events/evt.acme.shop.order.created", body=b"x",
              headers={"Authorization": "Bearer " + token, "ce-specversion": "1.0",
                       "ce-id": i, "ce-source": "/test",
                       "ce-type": "dev.shop.order.created.v1",
                       "Content-Type": "text/plain"})
    r = c.getresponse()
    r.read()
    return "%d %s" % (r.status, r.getheader("Connection", "-"))
first = post("ka-1")
os.kill(pid, signal.SIGTERM)
end = time.time() + 10
while time.time() < end and "shutting down" not in open(log).read():
    time.sleep(0.05)
print(first, "|", post("ka-2"))
PY
)
check "an event on a connection open at SIGTERM: stored (202), Connection: close" "202 - | 202 close" "$ka"
wait_until 20 '! kill -0 $RELAY_PID'
check "  and it is in WORK" 1 "$("$JSGET" "$NATS_URL_T" last WORK evt.acme.shop.order.created 2>/dev/null | grep -c 'ce-id: ka-2')"

# A subscriber a reload removed while its delivery is under way, then
# SIGTERM: when the grace period ends, that delivery is given back and the
# relay exits 0.  (The subscriber is freed with its last delivery; the
# relay used to read it once more, which the sanitizer build caught here.)
FILE=$T/gone.env
gone_conf() { echo "TREATY_RELAY_SUBSCRIBERS='$1'" > "$FILE.tmp"; mv "$FILE.tmp" "$FILE"; }
gone_conf '[{"name":"gone","url":"http://127.0.0.1:'$RPORT'/in","secret":"test-secret-0123456789","filter":"evt.*.shop.gone.>"}]'
unset TREATY_RELAY_SUBSCRIBERS		# the file's, so that a reload changes it
start_relay --config "$FILE" || { fail gone "relay did not become healthy"; finish; }
post evt.acme.shop.gone.created slow-gone x
wait_until 10 'grep -q "\"ce-id\": \"slow-gone\"" "$T/deliveries"'
gone_conf '[]'
kill -HUP $RELAY_PID
check "a subscriber removed by a reload, its delivery under way" logged "$(in_log 'msg="configuration reloaded')"
kill -TERM $RELAY_PID
wait_until 20 '! kill -0 $RELAY_PID'
wait $RELAY_PID
check "  then SIGTERM: the relay stopped, exit 0" 0 $?
check "  that delivery given back" logged "$(in_log 'msg="delivery closed" sub=gone .*given back: shutting down')"
finish
