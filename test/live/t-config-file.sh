#!/usr/bin/env bash
# The configuration file (SPEC 11): --config FILE / TREATY_RELAY_CONFIG in
# systemd's EnvironmentFile syntax, the precedence flag > environment >
# file > default, unknown variables refused (78, named) in the file and
# in the environment, the same file read by a shell; token lists; a JSON
# value that does not parse (78, where); and the log lines' stamps (time=
# or, under journald, a syslog priority).
. "$(dirname "$0")/lib.sh"
TREATY=$ROOT/$O/treaty
start_nats || { fail start "nats-server did not start"; finish; }

NEW_TOKEN="new-token-0123456789"
NEW_SHA=$(sha256hex "$NEW_TOKEN")
FILE=$T/relay.env
# The file's producer has two tokens (a rotation under way): the new one
# first.  JSON in single quotes: the same file works for a shell.
cat > "$FILE" <<CONF
# treaty-relay, as an operator writes it
NATS_URL=$NATS_URL_T

TREATY_RELAY_PRODUCERS='[{"name":"filed","tokenSha256":["$NEW_SHA","$TOKEN_SHA"],"subjects":["evt.*.shop.>"]}]'
TREATY_RELAY_GRACE_SECONDS="3"
CONF

# run_check ENV... -- ARGS: the relay's --check-config; sets RC, ERR, OUT.
run_check() {
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env -u TREATY_RELAY_PRODUCERS "${envs[@]}" "$RELAY_BIN" "$@" \
	    --check-config > "$T/chk.out" 2> "$T/chk.err"
	RC=$?
	OUT=$(cat "$T/chk.out")
	ERR=$(cat "$T/chk.err")
}

run_check -- --config "$FILE"
check "--config FILE --check-config: exit 0" "0 configuration ok: 1 producers, 0 subscribers" "$RC $OUT"
run_check TREATY_RELAY_CONFIG="$FILE" --
check "TREATY_RELAY_CONFIG=FILE: the same" "0 configuration ok: 1 producers, 0 subscribers" "$RC $OUT"
bash -c 'set -a; . "$1"; set +a; exec "$2" --check-config' sh "$FILE" "$RELAY_BIN" > "$T/sh.out" 2>&1
check "the same file read by a shell (set -a; . FILE)" "0 configuration ok: 1 producers, 0 subscribers" "$? $(cat "$T/sh.out")"

# The man page's configuration file example (EXAMPLES), as printed: read
# the same by a shell and by --config.
sed -n '/^Then, in$/,/^\.Ed$/p' "$ROOT/man/treaty-relay.8" | sed -n '/^\.Bd/,/^\.Ed/p' |
    sed '1d;$d' | sed -e ':a' -e '/\\e$/N; s/\\e\n//; ta' | sed "s/<hash>/$TOKEN_SHA/" > "$T/man.env"
check_match "the man page's file example has its producer" "TREATY_RELAY_PRODUCERS='\\[" "$(cat "$T/man.env")"
env -u TREATY_RELAY_PRODUCERS bash -c 'set -a; . "$1"; set +a; exec "$2" --check-config' sh "$T/man.env" "$RELAY_BIN" > "$T/man.sh.out" 2>&1
check "  read by a shell (set -a; . FILE), then --check-config" "0 configuration ok: 1 producers, 0 subscribers" "$? $(cat "$T/man.sh.out")"
run_check -- --config "$T/man.env"
check "  read by --config FILE --check-config" "0 configuration ok: 1 producers, 0 subscribers" "$RC $OUT"

# Unknown variables: 78, one stamped error line naming it.
printf 'TREATY_RELAY_GRACE_SECOND=3\n' >> "$FILE.bad"
run_check -- --config "$FILE.bad"
check "a misspelt variable in the file: exit 78" 78 "$RC"
check_match "  one error line naming it and its line" '^time=[^ ]+ level=error msg="bad configuration" var=TREATY_RELAY_GRACE_SECOND .*line 1' "$ERR"
run_check TREATY_RELAY_PRODUCER='[]' --
check "a misspelt variable in the environment: exit 78" 78 "$RC"
check_match "  naming it" 'var=TREATY_RELAY_PRODUCER ' "$ERR"
printf 'PORT=1\nexport NATS_URL=nats://x:1\n' > "$FILE.line"
run_check -- --config "$FILE.line"
check_match "a line that is not VAR=value: 78 naming the flag and the line" '^78 .*var=--config field="line 2"' "$RC $ERR"
run_check -- --config "$T/absent.env"
check_match "an unreadable file: 78" '^78 .*cannot read' "$RC $ERR"
# A key given twice (SPEC 13), at start and with --check-config alike: the
# second "secret" is too short and would pass unchecked behind the first.
DUPSUB='[{"name":"h","url":"https://e.example/","secret":"0123456789abcdef","filter":"evt.>","secret":"short"}]'
run_check TREATY_RELAY_SUBSCRIBERS="$DUPSUB" -- --config "$FILE"
check_match "a key given twice: --check-config exit 78, naming var, field and key" \
    '^78 .*level=error msg="bad configuration" var=TREATY_RELAY_SUBSCRIBERS field=\[0\]\.secret detail="duplicate key secret"' "$RC $ERR"
printf '%s\n' "TREATY_RELAY_PRODUCERS='[{\"name\":\"p\",\"tokenSha256\":\"$TOKEN_SHA\",\"subjects\":[\"evt.>\"],\"\\u0073ubjects\":[\"audit.>\"]}]'" > "$FILE.dup"
timeout 20 env -u TREATY_RELAY_PRODUCERS "$RELAY_BIN" --config "$FILE.dup" --port "$(free_port)" > "$T/dup.out" 2> "$T/dup.err"
check_match "  at start, from the file, an escaped spelling the same key: exit 78" \
    '^78 .*var=TREATY_RELAY_PRODUCERS field=\[0\]\.subjects detail="duplicate key subjects"' "$? $(cat "$T/dup.err")"

# A JSON value that does not parse (issue 30): 78 naming the variable,
# the line and column in the value and yajl's reason, never quoting the
# value (a subscriber's secret is in it); at start and with --check-config.
BADSUB='[{"name":"h","url":"https://e.example/","secret":"0123456789abcdef" "filter":"evt.>"}]'
printf "TREATY_RELAY_SUBSCRIBERS='%s'\n" "$BADSUB" > "$FILE.json"
run_check -- --config "$FILE.json"
check_match "JSON that does not parse: --check-config exit 78, naming the variable and where" \
    '^78 time=[^ ]+ level=error msg="bad configuration" var=TREATY_RELAY_SUBSCRIBERS field=- detail="not valid JSON near line 1, column 70: after key and value, inside map, I expect .,. or .\}."$' \
    "$RC $ERR"
check "  the value is not quoted: no secret in the line" 0 "$(grep -c 0123456789abcdef "$T/chk.err")"
timeout 20 env -u TREATY_RELAY_PRODUCERS TREATY_RELAY_PRODUCERS='[{"name":"p","tokenSha256":"'$TOKEN_SHA'",
 "subjects":["evt.>"],}]' "$RELAY_BIN" --port "$(free_port)" > "$T/json.out" 2> "$T/json.err"
check_match "  at start, over two lines in the environment: exit 78, line 2" \
    '^78 .*var=TREATY_RELAY_PRODUCERS field=- detail="not valid JSON near line 2, column 23: invalid object key \(must be a string\)"' \
    "$? $(cat "$T/json.err")"

# The running relay: the file's producer and both of its tokens; the
# environment's PORT (start_relay's) over the file's missing one.
PRODUCERS=none start_relay --config "$FILE" || { fail relay "did not start with --config"; finish; }
TOKEN=$NEW_TOKEN post evt.acme.shop.order.created f-1 x
check "the file's producer, new token: 202" 202 "$STATUS"
post evt.acme.shop.order.created f-2 x
check "the file's producer, old token (still listed): 202" 202 "$STATUS"
TOKEN=$OTHER_TOKEN post evt.acme.shop.order.created f-3 x
check "a token not in the list: 401" 401 "$STATUS"
check "the listening line says the port is plain HTTP; no certificate expiry in /metrics" \
    "msg=listening addr=127.0.0.1 port=$RELAY_PORT tls=0 0" \
    "$(grep -o 'msg=listening .*' "$RELAY_LOG") $(metrics_text | grep -c tls_certificate_expiry)"
check_match "every relay line starts with time=<RFC 3339 ms>" '^0 [1-9]' \
    "$(grep -Evc '^time=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z level=' "$RELAY_LOG") $(grep -c '' "$RELAY_LOG")"
kill -TERM $RELAY_PID; wait $RELAY_PID

# The environment over the file: start_relay's producers replace the file's.
start_relay --config "$FILE" || { fail relay "did not start"; finish; }
post evt.acme.shop.order.created f-4 x
check "the environment's producers win over the file's: 202" 202 "$STATUS"
TOKEN=$NEW_TOKEN post evt.acme.shop.order.created f-5 x
check "  and the file's are not used: 401" 401 "$STATUS"
kill -TERM $RELAY_PID; wait $RELAY_PID

# Under journald (stderr is the stream JOURNAL_STREAM names): priorities.
JLOG=$T/journal.log
: > "$JLOG"
JS=$(stat -c '%d:%i' "$JLOG")
JOURNAL_STREAM=$JS NATS_URL=$NATS_URL_T PORT=$(free_port) TREATY_RELAY_LISTEN=127.0.0.1 \
    TREATY_RELAY_PRODUCERS='[]' "$RELAY_BIN" -v >> "$JLOG" 2>&1 &
JPID=$!
PIDS+=($JPID)
wait_until 15 'grep -q "msg=ready" "$JLOG"'
kill -TERM $JPID; wait $JPID
check_match "journald: info lines start with <6>" '^<6>level=info msg=ready' "$(grep 'msg=ready' "$JLOG")"
check_match "  warnings with <4>" '^<4>level=warn msg="no producers' "$(grep 'no producers' "$JLOG")"
check_match "  debug with <7>, and no time= anywhere" '^[1-9][0-9]* 0$' \
    "$(grep -c '^<7>level=debug' "$JLOG") $(grep -c 'time=' "$JLOG")"
JOURNAL_STREAM=1:2 "$RELAY_BIN" --port 0 --check-config 2> "$T/nj.err"
check_match "another stream named: still time=, and errors are <3> only in the journal" '^time=[^ ]+ level=error' "$(cat "$T/nj.err")"

# The client's lines carry no stamp.
"$TREATY" verify --secret-file "$T/absent" --id x < /dev/null 2> "$T/cli.err"
check_match "the client's messages are plain" '^treaty: ' "$(head -1 "$T/cli.err")"
finish
