#!/usr/bin/env bash
# treaty work (SPEC 7): lease polling, signature check before dedup, the
# inbox file appended and fsynced before the acknowledgement, restart after
# a crash between the two, failed writes, the dedup cache failing closed,
# --exec and --on-receive.  Real relay, nats-server and binaries; crashes
# and full disks come from an LD_PRELOAD fault library, not from hooks in
# the client.
. "$(dirname "$0")/lib.sh"
TREATY=$ROOT/$O/treaty
FAULT=$ROOT/$O/test/fault.so
# Each inbox has its own token: tok INBOX.
tok() { printf '%s-token-0123456789' "$1"; }
sha() { tok "$1" | sha256sum | cut -c1-64; }
S=work-secret-0123456789
export TREATY_RELAY_SUBSCRIBERS='[
 {"name":"work","tokenSha256":"'$(sha work)'","secret":"'$S'","filter":"evt.*.shop.order.>"},
 {"name":"jobs","tokenSha256":"'$(sha jobs)'","secret":"'$S'","filter":"evt.*.shop.job.>"},
 {"name":"many","tokenSha256":"'$(sha many)'","secret":"'$S'","filter":"evt.*.shop.bulk.>"}]'
export TREATY_RELAY_LEASE_SECONDS=2
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }
printf '%s\n' "$S" > "$T/secret"
printf 'another-secret-000000\n' > "$T/badsecret"
printf '%s\n' "$TOKEN" > "$T/ptoken"
for i in work jobs many; do tok $i > "$T/itoken-$i"; done
export TREATY_URL=$RELAY_URL

# pub ENTITY ID [publish args...]: publish one event with the client.
pub() {
	local ent=$1 id=$2
	shift 2
	"$TREATY" publish --token-file "$T/ptoken" --subject "evt.acme.shop.$ent.created" \
	    --type "dev.shop.$ent.created.v1" --source /t-cli-work --id "$id" "$@" >/dev/null
}
# work INBOX [args...]: one pass of the worker (--once) with the inbox token.
work() {
	local inbox=$1
	shift
	"$TREATY" work --token-file "$T/itoken-$inbox" --secret-file "$T/secret" --once --wait 300 "$@" "$inbox"
}
# lines FILE: records in an inbox file (the worker creates it at start:
# a missing file is an error, not "0 records").
lines() { [ -f "$1" ] && wc -l < "$1" | tr -d ' ' || echo "ERROR: no file $1"; }
# pending INBOX: ids a lease GET hands out now (takes leases; 2 s each), or
# "ERROR: ..." when the GET is not answered 200 (test/live/inbox.py).
pending() { python3 "$ROOT/test/live/inbox.py" "$RELAY_URL" "$1" "$(tok "$1")" take; }
# comes_back INBOX ID: lease GETs until ID is handed out again (its lease
# ran out, at most 15 s), each envelope released at once after; prints the
# ids seen, or "ERROR: ...".
comes_back() { python3 "$ROOT/test/live/inbox.py" "$RELAY_URL" "$1" "$(tok "$1")" until "$2" 15; }
# gone INBOX: what "acknowledged: nothing comes back after the lease" rests
# on, without waiting a lease out: JetStream's consumer for the inbox holds
# no lease and nothing undelivered (waited for, bounded: the worker may
# exit before its last acknowledgement is confirmed), and a lease GET hands
# out nothing.  Prints "ack_pending=N pending=N now=IDS" or "ERROR: ...".
gone() {
	wait_until 10 "settled relay-$1"
	echo "$(consumer_state "relay-$1" | cut -d' ' -f1,2) now=$(pending "$1")"
}
GONE="ack_pending=0 pending=0 now="
# field FILE N KEY...: a field of the N-th record (0-based) of an inbox file.
field() { python3 - "$@" <<'PY'
import json, sys
v = json.loads(open(sys.argv[1]).read().splitlines()[int(sys.argv[2])])
for k in sys.argv[3:]:
    v = v[k]
print(v)
PY
}

# 1. End to end: published, received, recorded with envelopeId, acknowledged.
printf '\x00\x01\xfe\xff binary' > "$T/bin"
pub order o-json --data '{"n": 1, "s": "x"}' --content-type application/json
pub order o-compact --data '{"n":2}' --content-type application/json
pub order o-text --data 'plain text' --content-type text/plain
pub order o-bin --data @"$T/bin" --content-type application/octet-stream
pub order o-none --data 'no type at all'
pub order o-null --data 'null' --content-type application/json
pub order o-nul --data '{"a":"x\u0000y"}' --content-type application/json
F=$T/inbox.jsonl
work work --inbox "$F" 2> "$T/w1.err"
check "work --once exits 0" 0 $?
check "seven records" 7 "$(lines "$F")"
check "records carry envelopeId, in order" "o-json o-compact o-text o-bin o-none o-null o-nul" \
    "$(for i in 0 1 2 3 4 5 6; do field "$F" $i envelopeId; done | tr '\n' ' ' | sed 's/ $//')"
check "and the inbox name" work "$(field "$F" 0 inbox)"
# Every record's data is the published bytes exactly.
same=$(python3 - "$F" "$T/bin" <<'PY'
import base64, json, sys
want = {"o-json": b'{"n": 1, "s": "x"}', "o-compact": b'{"n":2}', "o-text": b"plain text",
        "o-bin": open(sys.argv[2], "rb").read(), "o-none": b"no type at all",
        "o-null": b"null", "o-nul": b'{"a":"x\\u0000y"}'}
ok = 0
for line in open(sys.argv[1]):
    r = json.loads(line); e = r["event"]
    if "data_base64" in e: d = base64.b64decode(e["data_base64"])
    elif isinstance(e.get("data"), str): d = e["data"].encode()
    else: d = json.dumps(e["data"], separators=(",", ":")).encode()
    ok += d == want[r["envelopeId"]]
print(ok)
PY
)
check "every record's data is byte for byte what was published (null and \\u0000 too)" 7 "$same"
check "each acknowledged: nothing comes back after the lease" "$GONE" "$(gone work)"
check "a second pass records nothing" "0 7" "$(work work --inbox "$F" 2>/dev/null; echo $? "$(lines "$F")")"

# Two producers, the same id from two sources: two events (SPEC 2 keeps
# the producers' ids apart, and an id is unique only within its source),
# both recorded, neither taken for the other's duplicate.
printf '%s\n' "$OTHER_TOKEN" > "$T/otoken"
pub order same-id-1
"$TREATY" publish --token-file "$T/otoken" --subject evt.acme.shop.order.created \
    --type dev.shop.order.created.v1 --source /t-cli-work/other --id same-id-1 >/dev/null
work work --inbox "$T/same.jsonl" 2>/dev/null
check "one id from two sources: both recorded" "/t-cli-work /t-cli-work/other" \
    "$(python3 -c 'import json,sys; print(" ".join(sorted(json.loads(l)["event"]["source"] for l in open(sys.argv[1]))))' "$T/same.jsonl" 2>&1)"
check "  and a second pass records nothing more" "0 2" "$(work work --inbox "$T/same.jsonl" 2>/dev/null; echo $? "$(lines "$T/same.jsonl")")"
# A value out of range: usage (2), the option named, not its value.
out=$("$TREATY" work --secret-file "$T/secret" --inbox "$T/range.jsonl" --max 0 work 2>&1)
check "--max 0: exit 2, naming --max and its range" "2 treaty: --max: 1 to 256" "$? $out"

# 2. Signatures are checked before anything else: a worker with the wrong
# secret records nothing and acknowledges nothing.
pub order o-forged --data 'x'
"$TREATY" work --token-file "$T/itoken-work" --secret-file "$T/badsecret" --once --wait 300 \
    --inbox "$T/forged.jsonl" work 2> "$T/w2.err"
check "wrong secret: --once exits 1 (nothing it received was verified)" 1 "$?"
check_match "  saying so" 'treaty: 1 envelope not verified \(a wrong --secret-file\?\); left in the inbox' "$(cat "$T/w2.err")"
check "wrong secret: o-forged received, nothing recorded" "1 0" \
    "$(grep -c 'envelope not verified.*id=o-forged' "$T/w2.err") $(lines "$T/forged.jsonl")"
check_match "and it says why, without the body" 'envelope not verified.*id=o-forged reason="signature does not match"' "$(cat "$T/w2.err")"
check "the event was not acknowledged: it comes back" o-forged "$(comes_back work o-forged)"
# Released again by comes_back: a worker with the right secret takes it.
work work --inbox "$T/drain.jsonl" --wait 15000 2>/dev/null
check "the right secret records it" o-forged "$(field "$T/drain.jsonl" 0 envelopeId)"

# 3. kill -9 between the append (fsynced) and the acknowledgement: after
# the second fsync of the file (the first is the one at start).
pub order o-crash --data 'crash me'
FAULT_SUFFIX=crash.jsonl FAULT_KILL_AFTER_FSYNC=2 ASAN_OPTIONS=verify_asan_link_order=0 \
    LD_PRELOAD=$FAULT work work --inbox "$T/crash.jsonl" 2>/dev/null
check "killed right after the fsync (signal 9)" 137 $?
check "the record is on disk" "1 o-crash" "$(lines "$T/crash.jsonl") $(field "$T/crash.jsonl" 0 envelopeId)"
# The lease ends and the relay hands the event out again: the worker's
# long-poll (bounded) waits for that.
work work --inbox "$T/crash.jsonl" --wait 15000 2> "$T/w3.err"
check "restarted worker: exit 0" 0 $?
check "no second append" 1 "$(lines "$T/crash.jsonl")"
check_match "the redelivery was acknowledged as already completed" 'already completed; acknowledging again.*id=o-crash count=2' "$(cat "$T/w3.err")"
check "and is gone from the inbox" "$GONE" "$(gone work)"

# 4. Old lines without envelopeId and a torn last line are read.
{
	echo '{"receivedAt":"2026-01-01T00:00:00Z","event":{"specversion":"1.0","id":"legacy-1","source":"/old","type":"dev.shop.order.created.v1"}}'
	printf '{"envelopeId":"o-torn","inbox":"work","event":{"specv'
} > "$T/old.jsonl"
pub order o-torn --data 'after a torn line'
work work --inbox "$T/old.jsonl" 2> "$T/w4.err"
check "old file: exit 0" 0 $?
check "the old line is kept, the torn one cut, the new one appended" "2 legacy-1 o-torn" \
    "$(lines "$T/old.jsonl") $(field "$T/old.jsonl" 0 event id) $(field "$T/old.jsonl" 1 envelopeId)"
check "every line is JSON" ok "$(python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]; print("ok")' "$T/old.jsonl" 2>&1)"

# 5. A failed write leaves the event unacknowledged and nothing half-written.
pub order o-full --data 'disk full'
FAULT_SUFFIX=full.jsonl FAULT_WRITE_ENOSPC=1 ASAN_OPTIONS=verify_asan_link_order=0 \
    LD_PRELOAD=$FAULT timeout 10 "$TREATY" work --token-file "$T/itoken-work" --secret-file "$T/secret" \
    --wait 300 --inbox "$T/full.jsonl" work 2> "$T/w5.err" &
wpid=$!
PIDS+=($wpid)
wait_until 5 'grep -q "cannot write the inbox file" "$T/w5.err"'
check_match "the failure is reported" 'cannot write the inbox file; events left unacknowledged.*err=' "$(cat "$T/w5.err")"
# The backoff notice comes just after the failure's: waited for, not read
# at once.
wait_until 5 'grep -q "attempt failed; retrying\" request=poll" "$T/w5.err"'
check_match "and the next poll backs off" 'attempt failed; retrying" request=poll' "$(cat "$T/w5.err")"
kill -TERM $wpid; wait $wpid
check "stopped by SIGTERM: exit 0" 0 $?
check "nothing written" 0 "$(stat -c %s "$T/full.jsonl")"
# Its lease ends; a long-poll (bounded) waits for it to be handed out again.
# The failing worker takes it again each time its lease (2 s) runs out
# before the SIGTERM (a slow machine): one failed write for each of its
# deliveries, so the healthy worker's is the one after those.
work work --inbox "$T/full2.jsonl" --wait 15000 2>/dev/null
check "the event came back and is recorded by a healthy worker" \
    "o-full $(( 1 + $(grep -c 'cannot write the inbox file' "$T/w5.err") ))" \
    "$(field "$T/full2.jsonl" 0 envelopeId) $(field "$T/full2.jsonl" 0 deliveryCount)"

# 6. The dedup cache fails closed when full, and resumes as entries age out.
for i in 1 2 3 4 5; do pub bulk "b-$i" --data "$i"; done
"$TREATY" work --token-file "$T/itoken-many" --secret-file "$T/secret" --wait 300 \
    --dedup-max 3 --dedup-ttl 4 --inbox "$T/bulk.jsonl" many 2> "$T/w6.err" &
wpid=$!
PIDS+=($wpid)
wait_until 5 'grep -q "dedup cache full" "$T/w6.err"'
check_match "full cache: says so" 'dedup cache full; taking no new work until entries age out" inbox=many entries=3' "$(cat "$T/w6.err")"
check "only three taken while full" 3 "$(lines "$T/bulk.jsonl")"
wait_until 15 '[ "$(lines "$T/bulk.jsonl")" = 5 ]'
check "after the entries age out: the other two" 5 "$(lines "$T/bulk.jsonl")"
# Nothing taken while full: the fourth record was received only once the
# first entry could have aged out (--dedup-ttl 4).  That entry was added
# after the first record's receivedAt, so the fourth comes at least 4 s
# after the first whatever the load (timed from the third, a slow fsync of
# the first three shortened the gap on a correct client).  The stamps are
# whole milliseconds: 10 ms of slack for rounding.
gap=$(python3 - "$T/bulk.jsonl" <<'PY'
import datetime, json, sys
t = [datetime.datetime.fromisoformat(json.loads(l)["receivedAt"].replace("Z", "+00:00"))
     for l in open(sys.argv[1])]
print(int((t[3] - t[0]).total_seconds() * 1000) if len(t) == 5 else "ERROR: %d records" % len(t))
PY
)
if [[ $gap =~ ^[0-9]+$ ]] && [ "$gap" -ge 3990 ]; then ok "the fourth taken only after the entries aged out (${gap} ms after the first)"
else fail "the fourth taken only after the entries aged out" "${gap} ms after the first (ttl 4 s)"; fi
check_match "and it says it resumed" 'dedup cache has room again' "$(cat "$T/w6.err")"
kill -TERM $wpid; wait $wpid
check "SIGTERM: exit 0" 0 $?

# 7. --exec: acknowledged only after the command exits 0.
pub job j-ok --data 'job data' --content-type text/plain --attr subject=order-7
"$TREATY" work --token-file "$T/itoken-jobs" --secret-file "$T/secret" --once --wait 300 \
    --exec 'printf "%s %s %s %s|" "$CE_ID" "$CE_SOURCE" "$CE_SUBJECT" "$TREATY_DELIVERY_COUNT" >> '"$T"'/exec.out; cat >> '"$T"'/exec.out; echo >> '"$T"'/exec.out' \
    jobs 2>/dev/null
check "--exec: exit 0" 0 $?
check "the command saw the attributes and the data" "j-ok /t-cli-work order-7 1|job data" "$(cat "$T/exec.out")"
check "and the event was acknowledged" "$GONE" "$(gone jobs)"
pub job j-fail --data 'fails'
"$TREATY" work --token-file "$T/itoken-jobs" --secret-file "$T/secret" --once --wait 300 \
    --exec 'exit 3' jobs 2> "$T/w7.err"
check_match "a failing command is reported" 'command failed; event left unacknowledged" inbox=jobs id=j-fail status=3' "$(cat "$T/w7.err")"
check "and its event comes back" j-fail "$(comes_back jobs j-fail)"
# The command prints the event's id: an empty token next to it is one the
# command ran without, not a command that never ran.
check "the token is not passed to the command" "j-fail:[]" \
    "$(TREATY_TOKEN=$(tok jobs) "$TREATY" work --secret-file "$T/secret" --once --wait 15000 --exec 'printf "%s:[%s]" "$CE_ID" "$TREATY_TOKEN"' jobs 2>/dev/null)"
# A stop waits for the running command.  The same signal twice at once (as
# timeout(1) sends it: to the command, then to its group) is one stop; a
# second one later exits at once, leaving the event to come back.
pub job j-slow --data 'slow'
"$TREATY" work --token-file "$T/itoken-jobs" --secret-file "$T/secret" --wait 300 \
    --exec 'touch '"$T"'/slow.started; while [ ! -e '"$T"'/slow.release ]; do sleep 0.1; done' \
    jobs 2> "$T/w7s.err" &
wpid=$!
PIDS+=($wpid)
wait_until 5 '[ -e "$T/slow.started" ]'
# The second copy lands after the first was handled (said so), not merged
# with it by the kernel.
kill -TERM $wpid
for i in $(seq 200); do grep -q 'stopping: finishing work' "$T/w7s.err" && break; sleep 0.01; done
kill -TERM $wpid
# A wrong exit here has no witness but the process being gone, and would be
# at once (exit() in the signal callback): give it 0.8 s.  This also puts
# the next signal past the client's 500 ms window for repeated copies.
sleep 0.8
check "the same signal twice at once is one stop: still finishing the command" yes \
    "$(kill -0 $wpid 2>/dev/null && echo yes)"
t0=$(now_ms)
kill -TERM $wpid; wait $wpid
rc=$? t1=$(now_ms)
touch "$T/slow.release"
# "At once" against "never" (the command waits for a file not yet made):
# a bound of seconds, not a scheduling slice.  The wall clock around the
# worker's exit (treaty stamps nothing): 5 s is room for a sanitizer
# build's exit on a loaded machine.
check "a second signal later exits at once (75)" "75 1" "$rc $(( t1 - t0 < 5000 ))"
check_match "and says so" 'second signal: exiting now' "$(cat "$T/w7s.err")"
check "its event was not acknowledged: it comes back" j-slow "$(comes_back jobs j-slow)"

# 8. --on-receive runs after the record is written; its failure changes nothing.
pub order o-hook --data 'hook'
work work --inbox "$T/hook.jsonl" --on-receive 'grep -c o-hook '"$T"'/hook.jsonl > '"$T"'/hook.out; exit 1' 2> "$T/w8.err"
wait_until 5 '[ -s "$T/hook.out" ]'
check "the hook ran after the record was on disk" 1 "$(cat "$T/hook.out" 2>/dev/null)"
check_match "its failure is only noted" 'on-receive command failed \(ignored\)' "$(cat "$T/w8.err")"
check "and the event was acknowledged anyway" "$GONE" "$(gone work)"

# 9. Permanent refusals stop the worker at once.
printf 'nobody-0123456789\n' > "$T/nobody"
"$TREATY" work --token-file "$T/nobody" --secret-file "$T/secret" --once --inbox "$T/x.jsonl" work 2> "$T/w9.err"
check "unknown token: exit 1" 1 $?
check_match "with the relay's answer" '401' "$(cat "$T/w9.err")"
"$TREATY" work --secret-file "$T/secret" --inbox "$T/x.jsonl" --exec true work 2> "$T/u.err"
check "--inbox and --exec together: usage" 2 $?
check "  named on the first line, the usage after it" "treaty: work: --inbox and --exec exclude each other|usage: treaty work" \
    "$(head -2 "$T/u.err" | cut -c1-60 | paste -sd'|' | sed 's/ --secret-file.*//')"
# Each usage error names what is wrong (exit 2).
usage_first() { "$TREATY" work "$@" 2>&1 >/dev/null | head -1; }
check "no NAME: named" "treaty: work: the inbox NAME is missing" "$(usage_first --secret-file "$T/secret" --inbox "$T/x.jsonl")"
check "no --secret-file: named" "treaty: work: --secret-file FILE is required (the inbox's signing secret)" \
    "$(usage_first --inbox "$T/x.jsonl" work)"
check "neither --inbox nor --exec: named" "treaty: work: --inbox FILE or --exec CMD is required (where each event goes)" \
    "$(usage_first --secret-file "$T/secret" work)"
check "--on-receive without --inbox: named" "treaty: work: --on-receive needs --inbox" \
    "$(usage_first --secret-file "$T/secret" --exec true --on-receive true work)"
check "two names: named" "treaty: work: one inbox NAME only, after the options" \
    "$(usage_first --secret-file "$T/secret" --exec true work other)"

# 10. A relay that accepts but never answers: the deadline, reported as
# ETIMEDOUT, retried with backoff; SIGTERM ends the worker's backoff at once.
kill -STOP "$RELAY_PID"
t0=$(now_ms)
pub order o-slow --data x --deadline 1 --attempts 2 --retry-base 100 --retry-cap 100 2> "$T/w10.err"
rc=$? t1=$(now_ms)
check "publish: gives up after its attempts (75)" 75 $rc
check_match "each attempt timed out: ETIMEDOUT" 'request=publish attempt=1 result=ETIMEDOUT' "$(cat "$T/w10.err")"
check_match "and the final message says so" 'still failing after 2 attempts: ETIMEDOUT' "$(cat "$T/w10.err")"
# Each deadline honoured (at least 2 s in all); "not more" is the one retry
# notice (attempt 1; the second attempt ends in the final message), the
# time bound only catches a deadline far longer than 1 s (the default is
# 45 s); it also holds the start of a sanitizer build of treaty.
check "two 1 s deadlines, not more" "1 1" \
    "$(( t1 - t0 >= 2000 && t1 - t0 < 8000 )) $(grep -c 'request=publish attempt=' "$T/w10.err")"
"$TREATY" work --token-file "$T/itoken-work" --secret-file "$T/secret" --deadline 1 \
    --retry-base 20000 --retry-cap 20000 --inbox "$T/slow.jsonl" work 2> "$T/w11.err" &
wpid=$!
PIDS+=($wpid)
wait_until 5 'grep -q "request=poll attempt=1 result=ETIMEDOUT" "$T/w11.err"'
check_match "the worker's poll timed out too" 'request=poll attempt=1 result=ETIMEDOUT url=[^ ]+ url_from=[^ ]+ delay_ms=1[0-9]{4}' "$(cat "$T/w11.err")"
t0=$(now_ms)
kill -TERM $wpid; wait $wpid
rc=$? t1=$(now_ms)
# Waiting out the backoff is the bug (10-20 s); the wall clock around the
# worker's exit, 5 s, is room for a sanitizer build on a loaded machine.
check "SIGTERM during its 10-20 s backoff: exit 0 at once" "0 1" "$rc $(( t1 - t0 < 5000 ))"
kill -CONT "$RELAY_PID"

# --once against a relay that is not there: gives up after 8 attempts,
# exit 75 (a cron job must not wait out an outage of any length).
DEAD=$(free_port)
TREATY_URL=http://127.0.0.1:$DEAD timeout -k 2 60 "$TREATY" work --token-file "$T/itoken-work" \
    --secret-file "$T/secret" --once --retry-base 10 --retry-cap 20 --inbox "$T/dead.jsonl" work 2> "$T/dead.err"
rc=$?
check "work --once, no relay: exit 75 after its attempts" "75 8" \
    "$rc $(grep -o 'giving up (--once)" attempts=[0-9]*' "$T/dead.err" | grep -o '[0-9]*$')"

# A scripted stand-in in front of the relay (test/live/status.py): a poll
# answered 200 with something that is not an inbox answer, and an
# acknowledgement refused with 503 every time, are failures --once gives
# up on like a dead relay (both went on for ever: a cron job that hangs).
python3 "$ROOT/test/live/status.py" "$T/st.port" "$T/st.log" "$RELAY_URL" 2> "$T/st.stderr" &
PIDS+=($!)
wait_until 10 '[ -s "$T/st.port" ]' || fail start "status.py did not start"
SURL=http://127.0.0.1:$(cat "$T/st.port")
TREATY_URL=$SURL/html/html timeout -k 2 60 "$TREATY" work --token-file "$T/itoken-work" \
    --secret-file "$T/secret" --once --retry-base 10 --retry-cap 20 --inbox "$T/html.jsonl" work 2> "$T/html.err"
rc=$?
check "work --once, a poll answered 200 text/html: exit 75 after its attempts" "75 8" \
    "$rc $(grep -o 'giving up (--once)" attempts=[0-9]*' "$T/html.err" | grep -o '[0-9]*$')"
work work --inbox "$T/drain.jsonl" --max 256 2>/dev/null
pub order o-ack503 --data 'acknowledged later'
TREATY_URL=$SURL/ack/up.503 timeout -k 2 60 "$TREATY" work --token-file "$T/itoken-work" \
    --secret-file "$T/secret" --once --wait 3000 --retry-base 10 --retry-cap 20 \
    --inbox "$T/ack503.jsonl" work 2> "$T/ack503.err"
rc=$?
check "work --once, acknowledgements answered 503: recorded, then exit 75 after its attempts" \
    "75 o-ack503 8" "$rc $(field "$T/ack503.jsonl" 0 envelopeId) $(grep -o \
    'acknowledgement failed; giving up (--once).*attempts=[0-9]*' "$T/ack503.err" | grep -o '[0-9]*$')"
check "  polled once, acknowledged 8 times" "1 8" \
    "$(grep -c $'^ack\t[0-9]*\t[0-9.]*\tGET' "$T/st.log") $(grep -c $'^ack\t[0-9]*\t[0-9.]*\tDELETE' "$T/st.log")"
# Its lease ends: it comes back, and the same inbox file acknowledges it
# without a second record.
work work --inbox "$T/ack503.jsonl" --wait 15000 2>/dev/null
check "  it came back and was acknowledged, not recorded again" "1 $GONE" \
    "$(lines "$T/ack503.jsonl") $(gone work)"

# A command outlasting its lease: --exec extends it every half lease, and
# a second worker polling meanwhile (4.5 s, over two 2 s leases) never gets
# the event.  With the 2 s lease, each extension has a second to spare.
# What the inbox still holds first (its events would queue before ours).
work jobs --inbox "$T/drain.jsonl" --max 256 2>/dev/null
pub job short-1 --data 'x'
"$TREATY" work --token-file "$T/itoken-jobs" --secret-file "$T/secret" --once --wait 3000 \
    --exec 'echo "first $CE_ID" >> '"$T"'/short.out; while [ ! -e '"$T"'/short.done ]; do sleep 0.1; done' \
    jobs 2> "$T/short1.err" & w1=$!
PIDS+=($w1)
wait_until 5 'grep -q "first short-1" "$T/short.out"'
"$TREATY" work --token-file "$T/itoken-jobs" --secret-file "$T/secret" --once --wait 4500 \
    --exec 'echo "second $CE_ID" >> '"$T"'/short.out' jobs 2> "$T/short2.err" & w2=$!
PIDS+=($w2)
wait $w2
touch "$T/short.done"
wait $w1; rc1=$?
check "a command outlasting its lease: run once, the lease kept, exit 0" "0|first short-1|" \
    "$rc1|$(tr '\n' '|' < "$T/short.out")"
check "  no lease lost" "" "$(grep 'lease lost' "$T/short1.err")"

# A 1 s lease: extended every 500 ms (whole seconds made that the whole
# lease, every extension came as it ran out, and a second worker ran the
# same event meanwhile).  Timed as a cadence, not as a race against the
# lease: on a loaded machine the first extension can miss a 1 s lease
# anyway (the relay answers 404), so every extension the worker asks for
# counts, extended (the relay's count) or refused ("lease lost").  Eight
# of them take 4 s at 500 ms; at 1 s the eighth comes 8 s after the
# command started.  The relay stamps only the extensions it confirmed (a
# refused one has no line), so this is the wall clock, from the command's
# own start to this script seeing the eighth (polled every 0.1 s): 6 s.
kill -TERM "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null
TREATY_RELAY_LEASE_SECONDS=1 start_relay || { fail start "the relay with a 1 s lease did not start"; finish; }
export TREATY_URL=$RELAY_URL
work jobs --inbox "$T/drain.jsonl" --max 256 2>/dev/null
pub job cadence-1 --data 'x'
ext0=$(metric 'treaty_relay_inbox_extends_total{inbox="jobs"}')
# asked: extensions the worker asked for since ext0, or "ERROR: ...".
asked() {
	local e
	e=$(metric 'treaty_relay_inbox_extends_total{inbox="jobs"}') || { echo "$e"; return 1; }
	echo $(( e - ext0 + $(grep -c 'lease lost' "$T/cad.err") ))
}
"$TREATY" work --token-file "$T/itoken-jobs" --secret-file "$T/secret" --once --wait 3000 \
    --exec 'echo $(($(date +%s%N) / 1000000)) > '"$T"'/cad.t0; while [ ! -e '"$T"'/cad.done ]; do sleep 0.1; done' \
    jobs 2> "$T/cad.err" & w1=$!
PIDS+=($w1)
wait_until 15 '[ "$(asked)" -ge 8 ]'
t1=$(now_ms) n=$(asked)
touch "$T/cad.done"
wait $w1
t0=$(cat "$T/cad.t0" 2>/dev/null)
if [[ $ext0 =~ ^[0-9]+$ && $t0 =~ ^[0-9]+$ && $n =~ ^[0-9]+$ ]] && [ "$n" -ge 8 ] &&
    [ $((t1 - t0)) -lt 6000 ]; then
	ok "a 1 s lease: extended every 500 ms ($n extensions $((t1 - t0)) ms after the command started)"
else
	fail "a 1 s lease: extended every 500 ms" "[$n] extensions (base [$ext0]) $((t1 - ${t0:-0})) ms after the command started (8 within 6000 ms)"
fi
finish
