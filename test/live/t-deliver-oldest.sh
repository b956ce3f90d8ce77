#!/usr/bin/env bash
# treaty_relay_subscriber_oldest_pending_age_seconds{subscriber}: the age
# of the oldest event a subscriber has not acknowledged (handed out or
# not), push and pull, 0 when none is pending, from JetStream (one direct
# get per subscriber with something pending, on the worker thread).  Ages
# are compared inside one /metrics answer, so the difference between two
# subscribers' gauges is the difference between their oldest events' store
# times, which this test sets 3 s apart: a subscriber made with
# deliverFrom new must not be charged with an older event WORK holds
# (nats-server 2.9 reads its ack floor as 0 until the first
# acknowledgement).
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }

RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
S=test-secret-0123456789
IT1=inbox-token-one-0123456789
IT2=inbox-token-two-0123456789
H="http://127.0.0.1:$RPORT"
FILE=$T/relay.env
G=treaty_relay_subscriber_oldest_pending_age_seconds

conf() {
	{
		echo "NATS_URL=$NATS_URL_T"
		echo "TREATY_RELAY_PRODUCERS='$PRODUCERS_DEFAULT'"
		echo "TREATY_RELAY_SUBSCRIBERS='$1'"
		# A failed attempt waits a minute: the event stays pending.
		echo "TREATY_RELAY_RETRY_BASE_MS=60000"
	} > "$FILE.tmp"
	mv "$FILE.tmp" "$FILE"
}
NRELOAD=0
reload() {
	NRELOAD=$((NRELOAD + 1))
	kill -HUP $RELAY_PID
	wait_until 15 "test \$(grep -cE 'msg=\"configuration (reloaded|not reloaded)' '$RELAY_LOG') -ge $NRELOAD"
}
# ages: the gauge of every subscriber from one /metrics answer, as
# "name=age ..." in name order.
ages() {
	local m
	m=$(metrics_text) || { echo "$m"; return 1; }
	printf '%s\n' "$m" | sed -n "s/^$G{subscriber=\"\([a-z]*\)\"} \([0-9.]*\)$/\1=\2/p" | sort | tr '\n' ' '
}
# age NAME [AGES]: one subscriber's gauge (from AGES, or a fresh /metrics).
age() {
	local a=${2-$(ages)}
	[[ $a == *"ERROR: "* ]] && { echo "$a"; return 1; }
	a=$(printf '%s\n' $a | sed -n "s/^$1=//p")
	[ -n "$a" ] && echo "$a" || echo "ERROR: no $G for $1"
}
# gt A B: A > B, both decimal numbers.
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 > b + 0) }' 2>/dev/null; }

conf "[]"
PRODUCERS=none start_relay --config "$FILE" || { fail relay "did not start"; finish; }
post evt.local.shop.order.created ok-old-1 x
[ "$STATUS" = 202 ] || fail "post ok-old-1" "HTTP $STATUS"
# The passing of time is what is measured: the next event is stored 3 s
# after this one.
T_OLD=$(now_ms)

push() { echo '{"name":"'$1'","url":"'$H/$1'","secret":"'$S'","filter":"'$2'","deliverFrom":"new","maxDeliver":50}'; }
pull() { echo '{"name":"'$1'","tokenSha256":"'$(sha256hex $2)'","secret":"'$S'","filter":"evt.*.shop.>","deliverFrom":"'$3'"}'; }
conf "[$(push lag 'evt.*.shop.>'),$(push quiet 'evt.*.other.>'),$(pull ilag $IT1 new),$(pull iall $IT2 all)]"
reload
log_wait 15 'created relay-iall' || fail consumers "not made: $(grep consumers "$RELAY_LOG" | tail -1)"

# Nothing pending: 0 (the old event predates lag, quiet and ilag), while
# iall holds the old event.
wait_until 15 '[ "$(age lag)" = 0.000 ] && gt "$(age iall)" 0'
A=$(ages)
check "nothing pending: 0" "lag=0.000 quiet=0.000 ilag=0.000" \
    "lag=$(age lag "$A") quiet=$(age quiet "$A") ilag=$(age ilag "$A")"
check_match "a pull subscriber made with all: its backlog's age" '^[0-9]+\.[0-9]{3}$' "$(age iall "$A")"

until_ms "$T_OLD + 3000"
post evt.local.shop.order.created always500-1 x
[ "$STATUS" = 202 ] || fail "post always500-1" "HTTP $STATUS"
# lag's delivery fails and waits a minute (handed out, unacknowledged);
# ilag's event is not fetched (not handed out yet).
wait_until 15 'gt "$(age lag)" 0 && gt "$(age ilag)" 0'
check "push: a failed delivery waiting for its retry is pending" 1 \
    "$(grep -c 'msg="delivery failed" sub=lag id=always500-1' "$RELAY_LOG")"
A=$(ages)
d_push=$(awk -v a="$(age iall "$A")" -v b="$(age lag "$A")" 'BEGIN { printf "%.3f", a - b }')
d_pull=$(awk -v a="$(age iall "$A")" -v b="$(age ilag "$A")" 'BEGIN { printf "%.3f", a - b }')
# 3 s apart by the clock that stamped both; the upper bound only says
# that the new subscribers are not charged with the old event's age.
if gt "$d_push" 2.95 && gt 20 "$d_push" && gt "$d_pull" 2.95 && gt 20 "$d_pull"; then
	ok "the oldest pending is each one's own: push and pull 3 s younger than the backlog ($A)"
else
	fail "the oldest pending is each one's own" "push $d_push s, pull $d_pull s younger than iall's ($A)"
fi
check "a subscriber with nothing pending stays 0" 0.000 "$(age quiet "$A")"

# The gauge is aged when /metrics is read: it grows while the event waits.
a1=$(age lag)
wait_until 10 'gt "$(age lag)" "$a1 + 1"' && ok "it grows while the event waits" ||
    fail "it grows while the event waits" "$a1 then $(age lag)"

# Acknowledged: back to 0 (ilag), and iall's unchanged backlog still shows.
out=$(python3 "$ROOT/test/live/inbox.py" "$RELAY_URL" ilag "$IT1" ack always500-1 10)
check_match "pull: the event leased and acknowledged" '^always500-1 1 own .* 204 ' "$out"
wait_until 15 '[ "$(age ilag)" = 0.000 ]'
A=$(ages)
check "pull: acknowledged, back to 0" 0.000 "$(age ilag "$A")"
gt "$(age iall "$A")" 3 && ok "the others' figures stay" || fail "the others' figures stay" "$A"

check_no_sanitizer_report "no sanitizer report" "$RELAY_LOG"
finish
