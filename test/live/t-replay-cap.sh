#!/usr/bin/env bash
# The cap on replays running at once (SPEC 15, TREATY_RELAY_MAX_REPLAYS),
# counted in JetStream: with a cap of 2 and replays that stay running (of
# an inbox nobody reads), a third start is 429 too_many_replays with
# Retry-After and makes no consumer; the start of a running replay sent
# again is still that replay; a cancel frees a slot at once; treaty admin
# replay retries the 429 until a slot is free, and says the relay's detail
# when it gives up.  Two relays on one nats-server, each asked at once:
# never more than 2 accepted, never more than 2 consumers replay-* on
# WORK, also when one slot is left and four starts race for it.  A replay
# whose end record is written holds no slot, though its consumer is still
# there.  The cap read from a configuration file, and raised by a reload.
. "$(dirname "$0")/lib.sh"
admin_setup
BT=box-token-0123456789
TR=$ROOT/$O/treaty
# box: an inbox that nobody reads in this test, so its replays never end.
export TREATY_RELAY_SUBSCRIBERS='[{"name":"box","tokenSha256":"'$(sha256hex "$BT")'","secret":"'$S'","filter":"evt.*.shop.box.>"}]'
export TREATY_RELAY_MAX_REPLAYS=2
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }
A_URL=$RELAY_URL A_LOG=$RELAY_LOG

# state ID: a replay's state as A reports it, or the status of the GET.
state() {
	local st
	st=$(areq GET "replays/$1" "$A_URL")
	if [ "$st" = 200 ]; then afield state; else echo "status $st"; fi
}
# in_js: the consumers replay-* on WORK as nats-server lists them, sorted,
# on one line; "ERROR: ..." when it did not answer.
in_js() {
	python3 "$ROOT/test/live/jsapi.py" "$NATS_PORT" raw '$JS.API.CONSUMER.NAMES.WORK' |
	    python3 -c '
import json, sys
line = sys.stdin.read()
try:
    d = json.loads(line)
except ValueError:
    print(line.strip() or "ERROR: no answer from jsapi.py"); sys.exit()
if "error" in d:
    print("ERROR: %s" % d["error"]); sys.exit()
print(" ".join(sorted(n for n in d.get("consumers") or [] if n.startswith("replay-"))))'
}
# n_in_js: how many there are ("ERROR: ..." as in_js).
n_in_js() {
	local c
	c=$(in_js)
	if [[ $c == ERROR:* ]]; then echo "$c"; else echo $c | wc -w; fi
}
# newid: a replay id of the client's (24 lowercase hex digits).
newid() { head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
# hdr_of FILE NAME: a header's value in a curl -D file.
hdr_of() { tr -d '\r' < "$1" | sed -n "s/^$2:[[:space:]]*//Ip" | head -1; }

T0=$(now_rfc3339)
stored=
for i in 1 2 3; do post evt.acme.shop.box.created box-$i "box $i"; stored="$stored $STATUS"; done
check "three events stored for box" " 202 202 202" "$stored"

check "first replay: 202, matched 3" "202 3" "$(areq POST "subscribers/box/replay?since=$T0") $(afield matched)"
R1=$(afield replay)
check "second replay: 202" 202 "$(areq POST "subscribers/box/replay?since=$T0")"
R2=$(afield replay)
two=$(printf 'replay-%s\n' "$R1" "$R2" | sort | tr '\n' ' ' | sed 's/ $//')
check "their two consumers on WORK" "$two" "$(in_js)"

# The third, while both run.
st=$(areq POST "subscribers/box/replay?since=$T0")
BODY=$(cat "$T/abody" 2>/dev/null)
check "a third: 429 too_many_replays" "429 too_many_replays" "$st $(errcode)"
check_match "  with Retry-After in whole seconds, at least 1" '^[1-9][0-9]*$' "$(hdr_of "$T/ahdr" Retry-After)"
check_match "  its detail names the cap" 'at most 2 replays run at once' "$(afield detail)"
check "  and no third consumer on WORK" "$two" "$(in_js)"
check "  and the refusal logged" logged "$(in_log 'msg="admin request rejected" status=429 error=too_many_replays')"
check "the first one's start sent again (its id): that replay, not a new one" "202 $R1 $two" \
    "$(areq POST "subscribers/box/replay?since=$T0&id=$R1") $(afield replay) $(in_js)"
check "both still running" "running running" "$(state "$R1") $(state "$R2")"

# The client: a 429 is retried, and said with the relay's detail.
timeout -k 2 30 env -u TREATY_URL TREATY_TOKEN=$AT "$TR" admin replay --url "$A_URL" \
    --subscriber box --since "$T0" --attempts 2 --retry-base 10 --retry-cap 100 \
    > "$T/cli1.out" 2> "$T/cli1.err"
check "treaty admin replay while full, 2 attempts: exit 75" 75 "$?"
check_match "  says the 429 with the relay's detail, no replay started" \
    'still failing after 2 attempts: 429: at most 2 replays run at once .*; no replay started' "$(cat "$T/cli1.err")"
check "  one retry notice" 1 "$(grep -c 'msg="attempt failed; retrying" request=replay attempt=1 result=429' "$T/cli1.err")"
check "  and nothing more on WORK" "$two" "$(in_js)"
# Waiting for a slot: the client retries (every 2 s: Retry-After capped by
# --retry-cap) until a cancel frees one.
timeout -k 2 60 env -u TREATY_URL TREATY_TOKEN=$AT "$TR" admin replay --url "$A_URL" \
    --subscriber box --since "$T0" --attempts 30 --retry-base 10 --retry-cap 2000 \
    > "$T/cli2.out" 2> "$T/cli2.err" &
CLI=$!
wait_until 20 'grep -q "result=429" "$T/cli2.err"' ||
    fail "the waiting client was refused 429" "$(cat "$T/cli2.err")"
check "DELETE the first: 204" 204 "$(areq DELETE "replays/$R1")"
check "  its consumer gone at once" "replay-$R2" "$(in_js)"
wait_until 30 '! kill -0 $CLI 2>/dev/null'
wait $CLI
check "the waiting client gets the freed slot: exit 0" 0 "$?"
check_match "  its started line" '^replay [0-9a-f]{24} started: 3 events matched$' "$(head -1 "$T/cli2.out")"
R3=$(sed -n 's/^replay \([0-9a-f]*\) started: .*/\1/p' "$T/cli2.out")
check "  its consumer and the second's, no other" \
    "$(printf 'replay-%s\n' "$R2" "$R3" | sort | tr '\n' ' ' | sed 's/ $//')" "$(in_js)"
check "DELETE the second: 204" 204 "$(areq DELETE "replays/$R2")"
check "a new start after the cancel: 202" 202 "$(areq POST "subscribers/box/replay?since=$T0")"
R4=$(afield replay)
check "  two consumers: the client's and the new one" \
    "$(printf 'replay-%s\n' "$R3" "$R4" | sort | tr '\n' ' ' | sed 's/ $//')" "$(in_js)"

# Two relays on the same nats-server, cap 2 on each.
start_relay || { fail start "second relay did not start"; finish; }
B_URL=$RELAY_URL
for r in $R3 $R4; do areq DELETE "replays/$r" "$A_URL" > /dev/null; done
check "both cancelled: no replay consumer left" 0 "$(n_in_js)"

# fire NAME: four starts at once, two at A and two at B, each with an id
# of its own: connected first, then sent together (a barrier), so that
# the two relays count at the same moment.  $T/NAME.<k> holds "status
# id", with the body and the headers beside.
fire() {
	python3 - "$T/$1" "$A_URL" "$B_URL" "$AT" "$T0" <<'PY'
import http.client, os, sys, threading, urllib.parse
out, a, b, tok, since = sys.argv[1:6]
go = threading.Barrier(4)
def start(k, base):
    rid = os.urandom(12).hex()
    u = urllib.parse.urlparse(base)
    st, body, hdrs = 0, b"", ""
    try:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
        c.connect()
        go.wait(10)
        c.request("POST", "/v1/admin/subscribers/box/replay?since=%s&id=%s"
                  % (urllib.parse.quote(since), rid),
                  headers={"Authorization": "Bearer " + tok})
        r = c.getresponse()
        st, body = r.status, r.read()
        hdrs = "".join("%s: %s\n" % kv for kv in r.getheaders())
    except Exception as e:  # noqa: BLE001 - the status says it: 0
        body = str(e).encode()
    open("%s.%d.body" % (out, k), "wb").write(body)
    open("%s.%d.hdr" % (out, k), "w").write(hdrs)
    open("%s.%d" % (out, k), "w").write("%d %s\n" % (st, rid))
ts = [threading.Thread(target=start, args=(k, a if k <= 2 else b))
      for k in (1, 2, 3, 4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
PY
}
# statuses NAME: the four answers' statuses, sorted.
statuses() { cat "$T/$1".[1-4] | awk '{print $1}' | sort | tr '\n' ' ' | sed 's/ $//'; }
# accepted NAME: the consumers the 202s name, sorted.
accepted() { awk '$1 == 202 {print "replay-" $2}' "$T/$1".[1-4] | sort | tr '\n' ' ' | sed 's/ $//'; }
# refusals NAME: each 429 as "code retry-after", sorted and counted.
refusals() {
	local k
	for k in 1 2 3 4; do
		read -r st _ < "$T/$1.$k"
		[ "$st" = 429 ] || continue
		BODY=$(cat "$T/$1.$k.body")
		echo "$(errcode) $( [[ $(hdr_of "$T/$1.$k.hdr" Retry-After) =~ ^[1-9][0-9]*$ ]] && echo retry-after)"
	done | sort | uniq -c | sed 's/^ *//'
}
# gone NAME: for each refused id, its GET (404: no such replay), sorted.
gone() {
	awk '$1 == 429 {print $2}' "$T/$1".[1-4] | while read -r id; do
		areq GET "replays/$id" "$A_URL"
		echo
	done | sort | uniq -c | sed 's/^ *//'
}

fire race0
check "four starts at once on two relays, none running: two 202, two 429" \
    "202 202 429 429" "$(statuses race0)"
check "  the refusals: too_many_replays with Retry-After" "2 too_many_replays retry-after" "$(refusals race0)"
check "  two consumers replay-* on WORK" 2 "$(n_in_js)"
check "  the two accepted, no other" "$(accepted race0)" "$(in_js)"
check "  the refused ids are no replay (404)" "2 404" "$(gone race0)"
keep=$(accepted race0 | cut -d' ' -f1)
for round in 1 2 3; do
	# One slot left: cancel all but one of the running replays.
	for c in $(in_js); do
		[ "$c" = "$keep" ] || areq DELETE "replays/${c#replay-}" "$A_URL" > /dev/null
	done
	check "round $round: one replay running" "$keep" "$(in_js)"
	fire race$round
	check "round $round: four starts at once for the last slot: one 202" \
	    "202 429 429 429" "$(statuses race$round)"
	check "round $round: the refusals: too_many_replays with Retry-After" \
	    "3 too_many_replays retry-after" "$(refusals race$round)"
	check "round $round: two consumers replay-* on WORK" 2 "$(n_in_js)"
	check "round $round: the one kept and the one accepted" \
	    "$(printf '%s\n' "$keep" "$(accepted race$round)" | sort | tr '\n' ' ' | sed 's/ $//')" "$(in_js)"
	check "round $round: the refused ids are no replay (404)" "3 404" "$(gone race$round)"
done
check "the accepted replays run, as both relays see them" "running running" \
    "$(state "${keep#replay-}") $(A_URL=$B_URL state "$(accepted race3 | sed 's/^replay-//')")"
# A replay whose end record is written while its consumer is still there
# (its instance stopped between the two) holds no slot: the end record of
# the one accepted last, written here as a relay writes it.
X=$(accepted race3 | sed 's/^replay-//')
JSAPI=$ROOT/test/live/jsapi.py
desc=$(python3 "$JSAPI" "$NATS_PORT" raw "\$JS.API.CONSUMER.INFO.WORK.replay-$X" |
    python3 -c '
import json, sys
d = json.loads(json.load(sys.stdin)["config"]["description"])
d.update(state="cancelled", delivered=0, dropped=0)
print(json.dumps(d))')
hdrs=$(python3 -c '
import json, sys
x = sys.argv[1]
print(json.dumps({"Nats-Msg-Id": "relay!replay-%s-end" % x,
    "ce-specversion": "1.0", "ce-id": "replay-%s-end" % x,
    "ce-source": "/treaty-relay", "ce-type": "dev.treaty.replay.ended.v1",
    "Treaty-Producer": "treaty-relay"}))' "$X")
check_match "an end record written by hand for a running replay" \
    '"stream": "AUDIT"' "$(python3 "$JSAPI" "$NATS_PORT" hpub \
    "audit.relay.treaty.replay.$X.end" "$hdrs" "${desc:-ERROR: none}")"
check "  its consumer still on WORK" 2 "$(n_in_js)"
check "  it holds no slot: a start is 202" 202 "$(areq POST "subscribers/box/replay?since=$T0" "$A_URL")"
check "  three consumers replay-* on WORK, two of them counted" 3 "$(n_in_js)"

# The cap from a configuration file, and a reload that raises it: a third
# relay with no variable in its environment.
unset TREATY_RELAY_MAX_REPLAYS
printf 'TREATY_RELAY_MAX_REPLAYS=2\n' > "$T/relay.env"
start_relay --config "$T/relay.env" || { fail start "third relay did not start"; finish; }
C_URL=$RELAY_URL
check "a relay with the cap of 2 in its file: 429 while two run" 429 \
    "$(areq POST "subscribers/box/replay?since=$T0" "$C_URL")"
printf 'TREATY_RELAY_MAX_REPLAYS=3\n' > "$T/relay.env"
kill -HUP "$RELAY_PID"
check "  the file says 3, SIGHUP: reloaded" logged "$(in_log 'msg="configuration reloaded"')"
check "  then a third starts there: 202" 202 "$(areq POST "subscribers/box/replay?since=$T0" "$C_URL")"
check "  four consumers replay-* on WORK, three of them counted" 4 "$(n_in_js)"
if grep -q 'replay request failed' "$T"/relay.*.log; then
	fail "no replay request failed" "$(grep -h 'replay request failed' "$T"/relay.*.log | head -2)"
else
	ok "no replay request failed"
fi
finish
