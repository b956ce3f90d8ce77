#!/usr/bin/env bash
# deliverFrom (SPEC 3): where a subscriber's consumer starts when it is
# made.  Subscribers added by a reload to a WORK that already holds events:
# "all" (the default) gets them all, "new" only those stored after it is
# made, an RFC 3339 time those stored from then on; a pull subscriber
# likewise.  The consumers start at a stream sequence (a time's is looked
# up in JetStream), so a later update (maxDeliver) works on nats-server
# 2.9, which refuses to update a consumer made with a start time.  A reload
# that changes deliverFrom leaves the consumer where it is and says so;
# removing the subscriber and deleting its consumer starts it anew; a bad
# value is exit 78 (and a refused reload) naming the field.
. "$(dirname "$0")/lib.sh"
start_nats || { fail start "nats-server did not start"; finish; }

RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
S=test-secret-0123456789
IT=inbox-token-0123456789
admin_setup			# AT, the operations API's token
H="http://127.0.0.1:$RPORT"
FILE=$T/relay.env

# conf SUBSCRIBERS: the configuration file (the producers from lib.sh).
conf() {
	{
		echo "NATS_URL=$NATS_URL_T"
		echo "TREATY_RELAY_PRODUCERS='$PRODUCERS_DEFAULT'"
		echo "TREATY_RELAY_SUBSCRIBERS='$1'"
	} > "$FILE.tmp"
	mv "$FILE.tmp" "$FILE"
}
# push NAME [EXTRA]: a push subscriber delivering to /NAME.
push() { echo '{"name":"'$1'","url":"'$H/$1'","secret":"'$S'","filter":"evt.*.shop.>"'"${2:-}"'}'; }
PULL='{"name":"inew","tokenSha256":"'$(sha256hex $IT)'","secret":"'$S'","filter":"evt.*.shop.>","deliverFrom":"new"}'
NRELOAD=0
reload() {
	NRELOAD=$((NRELOAD + 1))
	kill -HUP $RELAY_PID
	wait_until 15 "test \$(grep -cE 'msg=\"configuration (reloaded|not reloaded)' '$RELAY_LOG') -ge $NRELOAD"
}
# got PATH: the ids delivered to PATH, sorted, space-separated.
got() {
	python3 -c '
import json, sys
ids = set()
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["path"] == sys.argv[2]:
        ids.add(d["headers"].get("ce-id"))
print(" ".join(sorted(ids)))' "$T/deliveries" "$1" 2>/dev/null || echo "ERROR: no deliveries file"
}
# cinfo CONSUMER KEY: a field of the consumer's configuration in JetStream.
cinfo() {
	python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw "\$JS.API.CONSUMER.INFO.WORK.$1" |
	    python3 -c 'import json, sys
d = json.load(sys.stdin)
print(d["config"].get(sys.argv[1]) if "config" in d else "ERROR: %s" % d)' "$2" 2>/dev/null ||
	    echo "ERROR: no consumer info"
}
post_ok() {
	post evt.local.shop.order.created "$1" "$1"
	[ "$STATUS" = 202 ] || fail "post $1" "HTTP $STATUS $BODY"
}

# WORK holds two events before any subscriber, then two more after $TS.
conf "[]"
PRODUCERS=none start_relay --config "$FILE" || { fail relay "did not start"; finish; }
post_ok ok-old-1
post_ok ok-old-2
# The time is read after the 202s (so after nats-server stamped them) and
# before the next events are sent: the old ones are before it, the mid
# ones after it, on the one clock of this machine.
TS=$(now_rfc3339)
post_ok ok-mid-1
post_ok ok-mid-2

conf "[$(push all),$(push new ',"deliverFrom":"new"'),$(push time ',"deliverFrom":"'$TS'"'),$PULL]"
reload
check "reload adding subscribers with deliverFrom" 1 \
    "$(grep -c 'msg="configuration reloaded"' "$RELAY_LOG")"
# Each consumer is made with the start it was given.
check_match "deliverFrom all: made without a start sequence" \
    'created relay-all"|created relay-all;' "$(log_wait 15 'created relay-all[";]' &&
    grep -oE 'created relay-all[";]' "$RELAY_LOG" | head -1)"
log_wait 15 'created relay-inew from' || fail "consumers" "relay-inew not made"
check_match "deliverFrom new: from the next sequence" 'created relay-new from sequence 5' \
    "$(grep -o 'created relay-new from sequence [0-9]*' "$RELAY_LOG")"
check_match "deliverFrom time: from the first event stored at that time" \
    'created relay-time from sequence 3' "$(grep -o 'created relay-time from sequence [0-9]*' "$RELAY_LOG")"
check "JetStream: relay-new starts by sequence" "by_start_sequence 5" \
    "$(cinfo relay-new deliver_policy) $(cinfo relay-new opt_start_seq)"
check "JetStream: relay-all delivers all" "all" "$(cinfo relay-all deliver_policy)"

post_ok ok-late-1
wait_until 15 '[ "$(got /new)" = ok-late-1 ]'
check "quiet" settled "$(quiet relay-all relay-new relay-time)"
check "all: every event WORK held, and the new one" \
    "ok-late-1 ok-mid-1 ok-mid-2 ok-old-1 ok-old-2" "$(got /all)"
check "new: only the event stored after it was made" "ok-late-1" "$(got /new)"
check "time: the events stored from the time on" "ok-late-1 ok-mid-1 ok-mid-2" "$(got /time)"
check "pull, new: only the event stored after it was made" "ok-late-1" \
    "$(python3 "$ROOT/test/live/inbox.py" "$RELAY_URL" inew "$IT" take)"

# A consumer made from a time stays updatable (by_start_time would not be
# on nats-server 2.9): a reload changing maxDeliver updates it.
conf "[$(push all),$(push new ',"deliverFrom":"new"'),$(push time ',"deliverFrom":"'$TS'","maxDeliver":7'),$PULL]"
reload
log_wait 15 'updated relay-time' || fail "update" "relay-time not updated: $(grep -E 'consumers' "$RELAY_LOG" | tail -2)"
check "a consumer made from a time is updated" "7 by_start_sequence" \
    "$(cinfo relay-time max_deliver) $(cinfo relay-time deliver_policy)"

# Changing deliverFrom on an existing subscriber: the reload is applied,
# the consumer keeps its position (nothing skipped, nothing delivered
# again) and the log says why.
conf "[$(push all),$(push new),$(push time ',"deliverFrom":"'$TS'","maxDeliver":7'),$PULL]"
reload
check "reload changing deliverFrom applies" 3 \
    "$(grep -c 'msg="configuration reloaded"' "$RELAY_LOG")"
check_match "a changed deliverFrom is logged as kept" \
    'level=warn msg="deliverFrom changed: it is read only when a consumer is made.*consumer=relay-new' \
    "$(grep 'deliverFrom changed' "$RELAY_LOG")"
post_ok ok-later-1
wait_until 15 '[ "$(got /new)" = "ok-late-1 ok-later-1" ]'
check "quiet after the change" settled "$(quiet relay-new)"
check "the consumer kept its position: the old events not delivered" \
    "ok-late-1 ok-later-1" "$(got /new)"
check "JetStream: relay-new still starts at 5" "by_start_sequence 5" \
    "$(cinfo relay-new deliver_policy) $(cinfo relay-new opt_start_seq)"

# Starting it elsewhere, as the man page says: remove the subscriber,
# delete its consumer through the operations API, add it again (all).
conf "[$(push all),$(push time ',"deliverFrom":"'$TS'","maxDeliver":7'),$PULL]"
reload
log_wait 15 'subscriber removed.*sub=new' || fail "remove" "new not removed"
check "its consumer deleted" 204 "$(curl_status -X DELETE -H "Authorization: Bearer $AT" \
    "$RELAY_URL/v1/admin/consumers/relay-new")"
conf "[$(push all),$(push new),$(push time ',"deliverFrom":"'$TS'","maxDeliver":7'),$PULL]"
reload
wait_until 15 '[ "$(got /new | wc -w)" -ge 6 ]'
check "added again with all: made anew, every event WORK holds" \
    "ok-late-1 ok-later-1 ok-mid-1 ok-mid-2 ok-old-1 ok-old-2" "$(got /new)"
check "JetStream: relay-new delivers all now" "all" "$(cinfo relay-new deliver_policy)"

# Bad values: exit 78 naming the field; a reload keeps what runs.
for v in '"yesterday"' '"2026-13-01T00:00:00Z"' '5' '"ALL"' '""'; do
	out=$(TREATY_RELAY_SUBSCRIBERS="[$(push bad ',"deliverFrom":'"$v")]" \
	    NATS_URL=$NATS_URL_T "$RELAY_BIN" --check-config 2>&1)
	rc=$?
	check_match "deliverFrom $v: exit 78 naming the field" \
	    '^78 .*var=TREATY_RELAY_SUBSCRIBERS field=\[0\]\.deliverFrom detail="must be all, new or an RFC 3339 time' \
	    "$rc $out"
done
conf "[$(push all),$(push new ',"deliverFrom":"soon"')]"
reload
check_match "a reload with a bad deliverFrom is refused, naming it" \
    'configuration not reloaded.*field=\[1\]\.deliverFrom' \
    "$(grep 'configuration not reloaded' "$RELAY_LOG" | tail -1)"
check "the relay runs on" 200 "$(healthz_status)"

check_no_sanitizer_report "no sanitizer report" "$RELAY_LOG"
finish
