#!/usr/bin/env bash
# treaty listen (man/treaty.1), the push receiver, fed by the real relay and
# by curl: signature before parsing (401), CloudEvent checks (400), 405,
# once per (source, id) through the inbox file (also across restarts),
# secret rotation, a torn last line cut at start, --on-receive, and the
# relay's retries across a listener outage.  Inbox records are read back
# with Python's json and base64, and event data compared byte for byte.
. "$(dirname "$0")/lib.sh"
TR=$ROOT/$O/treaty
NEW_SECRET=listen-new-secret-0123456789
OLD_SECRET=listen-old-secret-0123456789
printf '%s\n%s\n' "$NEW_SECRET" "$OLD_SECRET" > "$T/secrets"	# listen's file, newest first
printf '%s\n' "$NEW_SECRET" > "$T/new.secret"
printf '%s\n' "$OLD_SECRET" > "$T/old.secret"
printf '%s\n' other-secret-0123456789 > "$T/other.secret"
printf '%s\n' "$TOKEN" > "$T/token"
INBOX=$T/inbox.jsonl
LLOG=$T/listen.log
LPORT=$(free_port)
LURL=http://127.0.0.1:$LPORT/hook
SUBJ=evt.acme.shop.order.created
TYPE=dev.shop.order.created.v1

# inbox.py CMD ...: read the inbox file with Python's own json.
cat > "$T/inbox.py" <<'PY'
import sys, json, base64
cmd, path = sys.argv[1], sys.argv[2]
try:
    raw = open(path, "rb").read()
except FileNotFoundError:
    raw = b""
recs = []
for l in raw.split(b"\n"):
    try:
        recs.append(json.loads(l))
    except ValueError:
        pass
def find(i, src=None):
    return [r for r in recs if isinstance(r, dict) and isinstance(r.get("event"), dict)
            and r["event"].get("id") == i and (src is None or r["event"].get("source") == src)]
if cmd == "count":          # count PATH ID [SOURCE]
    print(len(find(sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)))
elif cmd == "attrs":        # attrs PATH ID: the attributes and the data's form
    e = find(sys.argv[3])[0]["event"]
    form = "data_base64" if "data_base64" in e else ("data:" + type(e["data"]).__name__ if "data" in e else "none")
    print(e.get("specversion"), e.get("id"), e.get("source"), e.get("type"), e.get("datacontenttype"), form)
elif cmd == "received":     # received PATH ID: receivedAt
    print(find(sys.argv[3])[0].get("receivedAt"))
elif cmd == "data":         # data PATH ID: the event data's bytes
    e = find(sys.argv[3])[0]["event"]
    if "data_base64" in e:
        b = base64.b64decode(e["data_base64"], validate=True)
    elif "data" not in e:
        b = b""
    elif (e.get("datacontenttype") or "").startswith("text/"):
        b = e["data"].encode("utf-8")
    else:
        b = json.dumps(e["data"], separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    sys.stdout.buffer.write(b)
elif cmd == "valid":        # valid PATH: every line a JSON record, the last one ended
    bad = []
    if raw and not raw.endswith(b"\n"):
        bad.append("no final newline")
    for n, l in enumerate(raw.split(b"\n")[:-1], 1):
        try:
            r = json.loads(l)
            assert isinstance(r, dict) and isinstance(r.get("event"), dict)
        except Exception:
            bad.append("line %d: %r" % (n, l[:60]))
    print("ok" if not bad else "; ".join(bad))
PY
# The interpreter itself, not a version manager's shim (each call counts).
PY=$(python3 -c 'import sys; print(sys.executable)')
inbox() { "$PY" -S "$T/inbox.py" "$1" "$INBOX" "${@:2}"; }
icount() { inbox count "$@"; }
nlines() { wc -l < "$INBOX"; }

# start_listen [ARGS...]: treaty listen on LPORT with the inbox file.
start_listen() {
	"$TR" listen --port "$LPORT" --address 127.0.0.1 --secret-file "$T/secrets" \
	    --inbox "$INBOX" --verbose "$@" >> "$LLOG" 2>&1 &
	LPID=$!
	PIDS+=($LPID)
	wait_until 10 "port_open $LPORT"
}
# stop_listen [SIG]: signal it; LRC is its exit status, or "alive after
# 10 s".  Against a hang: a sanitizer build's exit (the leak check) on a
# loaded machine can take more than the 2 s allowed before.
stop_listen() {
	local n=0
	kill -"${1:-TERM}" "$LPID"
	while kill -0 "$LPID" 2>/dev/null && [ $n -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if kill -0 "$LPID" 2>/dev/null; then
		LRC="alive after 10 s"
		kill -KILL "$LPID"
		wait "$LPID" 2>/dev/null
	else
		wait "$LPID"
		LRC=$?
	fi
}
# sig_for SECRETFILE ID DATA [UNIXTIME]: an x-treaty-signature value.
sig_for() { printf '%s' "$3" | "$TR" sign --secret-file "$1" --id "$2" ${4:+--time "$4"}; }
# lpost SIG [curl args...]: a binary-mode POST to the listener (SIG "-":
# no signature header).  Variables as ev_path: ID SRC TYP SPEC CT DATA
# ("-" leaves a header out).  Sets STATUS, BODY, RHDRS.
lpost() {
	local sig=$1 h=()
	shift
	local id=${ID-x} src=${SRC-/curl} typ=${TYP-$TYPE} spec=${SPEC-1.0} ct=${CT-text/plain}
	[ "$id" = - ] || h+=(-H "ce-id: $id")
	[ "$src" = - ] || h+=(-H "ce-source: $src")
	[ "$typ" = - ] || h+=(-H "ce-type: $typ")
	[ "$spec" = - ] || h+=(-H "ce-specversion: $spec")
	[ "$ct" = - ] || h+=(-H "Content-Type: $ct")
	[ "$sig" = - ] || h+=(-H "x-treaty-signature: $sig")
	STATUS=$(curl -s -m 10 -D "$T/lh" -o "$T/lb" -w '%{http_code}' -X POST "$LURL" \
	    "${h[@]}" --data-binary "${DATA-hello}" "$@")
	BODY=$(cat "$T/lb")
	RHDRS=$(tr -d '\r' < "$T/lh")
}
# gpost ID [SRC [DATA]]: a genuine POST (signed now with the newest secret).
gpost() {
	local data=${3-hello $1}
	ID=$1 SRC=${2-/curl} DATA=$data lpost "$(sig_for "$T/new.secret" "$1" "$data")"
}
# publish ID DATA [CONTENT-TYPE]: treaty publish through the relay; PRC its exit status.
publish() {
	"$TR" publish --url "$RELAY_URL" --token-file "$T/token" --subject $SUBJ \
	    --type $TYPE --source /shop --id "$1" --data "$2" ${3:+--content-type "$3"} \
	    >> "$T/pub.out" 2>&1
	PRC=$?
}
m_delivered() { metric 'treaty_relay_deliveries_total{subscriber="listen",outcome="delivered"}'; }
m_retry() { metric 'treaty_relay_deliveries_total{subscriber="listen",outcome="retry"}'; }

export TREATY_RELAY_SUBSCRIBERS='[{"name":"listen","url":"'$LURL'","secret":"'$NEW_SECRET'","filter":"evt.*.shop.>","maxDeliver":50}]'
export TREATY_RELAY_ALLOW_PRIVATE_NETWORKS=1 TREATY_RELAY_RETRY_BASE_MS=200 TREATY_RELAY_RETRY_MAX_MS=800
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }
start_listen || { fail start "treaty listen did not start"; cat "$LLOG" >&2; finish; }
check "the inbox file is created 0600" 600 "$(stat -c %a "$INBOX")"

# 1. The relay pushes to treaty listen; data recovered byte for byte.
printf '%s' '{"total": 42, "items": ["a", "b"], "note": "ünï"}' > "$T/d.json-spaced"
printf '%s' $'h\xc3\xa9llo, text\nsecond line\ttab' > "$T/d.text"
"$PY" -S -c 'import sys, os; sys.stdout.buffer.write(bytes(range(256)) + os.urandom(300))' > "$T/d.bin"
printf '%s' '{"total":42,"ok":true,"tags":["x"]}' > "$T/d.json-compact"
publish ev-json-spaced "$(cat "$T/d.json-spaced")" application/json; r=$PRC
publish ev-text "$(cat "$T/d.text")" text/plain; r="$r $PRC"
publish ev-bin "@$T/d.bin" application/octet-stream; r="$r $PRC"
publish ev-json-compact "$(cat "$T/d.json-compact")" application/json; r="$r $PRC"
publish 'ev sp/é%' 'odd id' text/plain; r="$r $PRC"
check "treaty publish: five events through the relay" "0 0 0 0 0" "$r"
wait_until 15 'test "$(nlines)" -ge 5'
check "five events pushed: five lines in the inbox file" 5 "$(nlines)"
check "records are JSON lines" ok "$(inbox valid)"
check "spaced JSON: attributes, as data_base64" "1.0 ev-json-spaced /shop $TYPE application/json data_base64" "$(inbox attrs ev-json-spaced)"
check "text/plain: attributes, as a data string" "1.0 ev-text /shop $TYPE text/plain data:str" "$(inbox attrs ev-text)"
check "binary: attributes, as data_base64" "1.0 ev-bin /shop $TYPE application/octet-stream data_base64" "$(inbox attrs ev-bin)"
check "compact JSON: attributes, as JSON data" "1.0 ev-json-compact /shop $TYPE application/json data:dict" "$(inbox attrs ev-json-compact)"
check "an id with a space, a slash, UTF-8 and %: recorded decoded" "1.0 ev sp/é% /shop $TYPE text/plain data:str" "$(inbox attrs 'ev sp/é%')"
for k in json-spaced text bin json-compact; do
	inbox data "ev-$k" > "$T/got.$k" 2> "$T/got.$k.err"
	if cmp -s "$T/d.$k" "$T/got.$k"; then
		ok "$k: data recovered byte for byte ($(wc -c < "$T/d.$k") bytes)"
	else
		fail "$k: data recovered byte for byte" "$(od -An -c "$T/got.$k" | head -3 | tr -s ' ') $(cat "$T/got.$k.err")"
	fi
done
check_match "receivedAt is a UTC time" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$' "$(inbox received ev-text)"
wait_until 10 'test "$(m_delivered)" = 5'
check "relay metrics: five delivered, no failed attempt" "5 0" "$(m_delivered) $(m_retry)"

# 2. Refusals: nothing recorded.
n0=$(nlines)
d='forged body'
ID=c-forged DATA=$d lpost "$(sig_for "$T/other.secret" c-forged "$d")"
check "signed with another secret: 401 bad_signature, no record" "401 bad_signature 0" "$STATUS $(errcode) $(icount c-forged)"
ID=c-stale DATA=$d lpost "$(sig_for "$T/new.secret" c-stale "$d" $(($(date +%s) - 1000)))"
check "stale signature (1000 s old): 401 bad_signature, no record" "401 bad_signature 0" "$STATUS $(errcode) $(icount c-stale)"
ID=c-nosig DATA=$d lpost -
check "no signature header: 401 bad_signature, no record" "401 bad_signature 0" "$STATUS $(errcode) $(icount c-nosig)"
ID=c-garbage DATA=$d lpost garbage
check "malformed signature: 401 bad_signature" "401 bad_signature 0" "$STATUS $(errcode) $(icount c-garbage)"
ID=c-otherid DATA=$d lpost "$(sig_for "$T/new.secret" c-signed-id "$d")"
check "signature made for another id: 401" "401 bad_signature 0" "$STATUS $(errcode) $(icount c-otherid)"
ID=c-tampered DATA="$d!" lpost "$(sig_for "$T/new.secret" c-tampered "$d")"
check "body changed after signing: 401" "401 bad_signature 0" "$STATUS $(errcode) $(icount c-tampered)"
ID=- DATA=$d lpost "$(sig_for "$T/new.secret" "" "$d")"
check "no ce-id: 400 bad_event" "400 bad_event" "$STATUS $(errcode)"
ID=c-notype TYP=- DATA=$d lpost "$(sig_for "$T/new.secret" c-notype "$d")"
check "no ce-type, valid signature: 400 bad_event, no record" "400 bad_event 0" "$STATUS $(errcode) $(icount c-notype)"
ID=c-nospec SPEC=- DATA=$d lpost "$(sig_for "$T/new.secret" c-nospec "$d")"
check "no ce-specversion, valid signature: 400 bad_event, no record" "400 bad_event 0" "$STATUS $(errcode) $(icount c-nospec)"
ID=c-nosrc SRC=- DATA=$d lpost "$(sig_for "$T/new.secret" c-nosrc "$d")"
check "no ce-source, valid signature: 400 bad_event, no record" "400 bad_event 0" "$STATUS $(errcode) $(icount c-nosrc)"
STATUS=$(curl -s -m 10 -D "$T/lh" -o "$T/lb" -w '%{http_code}' "$LURL")
BODY=$(cat "$T/lb") RHDRS=$(tr -d '\r' < "$T/lh")
check "GET: 405 with Allow: POST" "405 POST" "$STATUS $(hdr Allow)"
check "nothing recorded by the refusals" "$n0" "$(nlines)"
# A percent-encoded ce-id is signed and recorded decoded.
ID='c-pct%20%C3%A9' DATA=$d lpost "$(sig_for "$T/new.secret" 'c-pct é' "$d")"
check "ce-id percent-decoded for the signature and the record" "204 1" "$STATUS $(icount 'c-pct é')"
# Structured mode: the body's id is signed.
sbody='{"specversion":"1.0","id":"c-struct","source":"/curl","type":"'$TYPE'","datacontenttype":"text/plain","data":"structured"}'
ID=- SRC=- TYP=- SPEC=- CT=application/cloudevents+json DATA=$sbody lpost "$(sig_for "$T/new.secret" c-struct "$sbody")"
check "structured mode, body id signed: 204, recorded" "204 1 structured" "$STATUS $(icount c-struct) $(inbox data c-struct)"

# 3. Once per (source, id).
n0=$(nlines)
gpost ev-text /shop 'a replay with another body'
check "replay of a recorded (source, id), fresh signature: 204, no new line" "204 1 $n0" "$STATUS $(icount ev-text /shop) $(nlines)"
gpost ev-text /elsewhere
check "same id, another source: recorded" "204 2 1" "$STATUS $(icount ev-text) $(icount ev-text /elsewhere)"
ID='ev%20sp%2F%C3%A9%25' SRC=/shop DATA=x lpost "$(sig_for "$T/new.secret" 'ev sp/é%' x)"
check "replay of the odd id, percent-encoded by curl: 204, still one record" "204 1" "$STATUS $(icount 'ev sp/é%')"
# A delivery sent again as it was (the relay's resend): 204, one record.
# With its signature but another source, type or subject (only the id and
# the data are signed): a replay, 401, nothing recorded.
d='captured delivery'
s1=$(sig_for "$T/new.secret" c-cap "$d")
ID=c-cap SRC=/shop DATA=$d lpost "$s1"
ID=c-cap SRC=/shop DATA=$d lpost "$s1"
check "one delivery sent twice as it was: 204, one record" "204 1" "$STATUS $(icount c-cap)"
ID=c-cap SRC=/evil DATA=$d lpost "$s1"
check "its signature with another source: 401 bad_signature, nothing recorded" \
    "401 bad_signature 0" "$STATUS $(errcode) $(icount c-cap /evil)"
ID=c-cap SRC=/shop TYP=dev.shop.order.deleted.v1 DATA=$d lpost "$s1"
check "  with another type: 401" "401 1" "$STATUS $(icount c-cap)"
ID=c-cap SRC=/shop DATA=$d lpost "$s1" -H 'ce-subject: order-9'
check "  with a subject added: 401" "401 1" "$STATUS $(icount c-cap)"

# 4. Rotation: a body signed with the older secret only.
d='signed with the old secret'
ID=c-old DATA=$d lpost "$(sig_for "$T/old.secret" c-old "$d")"
check "signed with the second (older) secret of the file: 204, recorded" "204 1" "$STATUS $(icount c-old)"
printf '%s\n%s\n' other-secret-0123456789 "$NEW_SECRET" > "$T/two.secret"
d='two v1= values'
ID=c-two DATA=$d lpost "$(sig_for "$T/two.secret" c-two "$d")"
check "t=..,v1=<unknown key>,v1=<known key>: 204, recorded" "204 1" "$STATUS $(icount c-two)"
ID=c-future DATA=$d lpost "$(sig_for "$T/new.secret" c-future "$d" $(($(date +%s) + 1000)))"
check "a signature 1000 s in the future: 401" "401 bad_signature 0" "$STATUS $(errcode) $(icount c-future)"

# 5. Restart: SIGTERM exits 0; the file is read back.
stop_listen TERM
check "SIGTERM: exit status 0 within 10 s" 0 "$LRC"
check_match "stop logged with its counts" 'msg="listener stopped" recorded=[0-9]+ duplicates=3 refused=[0-9]+' "$(grep 'listener stopped' "$LLOG")"
n0=$(nlines)
HOOK='printf "%s %s %s %s rec=%s\n" "$CE_ID" "$CE_SOURCE" "$CE_TYPE" "$CE_DATACONTENTTYPE" "$(grep -c "\"id\":\"$CE_ID\"" '"$INBOX"')" >> '"$T"'/hook.$CE_ID; cat >> '"$T"'/hook.$CE_ID; echo "|end" >> '"$T"'/hook.$CE_ID; test "$CE_ID" != hk-fail'
start_listen --on-receive "$HOOK" || fail restart "treaty listen did not start again"
gpost ev-bin /shop
check "after a restart, an event recorded before: 204, no new line" "204 $n0" "$STATUS $(nlines)"
gpost c-old /curl
check "after a restart, one recorded by curl before: 204, no new line" "204 $n0" "$STATUS $(nlines)"
gpost c-after-restart
check "after a restart, a new event: recorded" "204 1 $((n0 + 1))" "$STATUS $(icount c-after-restart) $(nlines)"

# 7. --on-receive: data on stdin, attributes in the environment, after the record.
gpost hk-1 /curl 'hook body'
wait_until 5 'grep -q "|end" "$T/hook.hk-1"'
check "--on-receive: CE_ID CE_SOURCE CE_TYPE CE_DATACONTENTTYPE, the record already there, data on stdin" \
    "hk-1 /curl $TYPE text/plain rec=1|hook body|end|" "$(tr '\n' '|' < "$T/hook.hk-1" 2>/dev/null)"
gpost hk-1 /curl 'hook body'
dup=$STATUS
gpost hk-fail /curl 'fails'
check "a hook that exits 1: still 204 and the record" "204 1" "$STATUS $(icount hk-fail)"
wait_until 5 'grep -q "on-receive command failed" "$LLOG"'
# Instead of 0.5 s: the listener said the duplicate was already recorded,
# and a hook is spawned with its event's answer, so one for the duplicate
# would have started before hk-fail's, which has run and exited by now.
check "--on-receive: not run for a duplicate" "204 logged hk-1 /curl $TYPE text/plain rec=1|hook body|end|" \
    "$dup $(in_log 'already recorded.* id="?hk-1"?( |$)' "$LLOG") $(tr '\n' '|' < "$T/hook.hk-1")"
check_match "the failed hook is logged with its status" 'on-receive command failed \(ignored\)" status=1' "$(grep 'on-receive' "$LLOG")"
gpost hk-2
check "still serving after a failed hook" "204 1" "$STATUS $(icount hk-2)"

# 6. A torn last line (a crash mid-append) is cut at start; SIGINT exits 0 too.
stop_listen INT
check "SIGINT: exit status 0 within 10 s" 0 "$LRC"
n0=$(nlines)
printf '%s' '{"receivedAt":"2024-01-01T00:00:00.000Z","event":{"specversion":"1.0","id":"torn-1","sou' >> "$INBOX"
start_listen || fail restart "treaty listen did not start on a torn file"
gpost c-after-torn
check "torn last line: new event 204" 204 "$STATUS"
check "torn last line: every line valid JSON afterwards" ok "$(inbox valid)"
check "torn last line: the torn bytes are gone, the new record follows" "$((n0 + 1)) 0 1" "$(nlines) $(grep -c torn-1 "$INBOX") $(icount c-after-torn)"
check_match "torn last line: cutting logged" 'cutting an unfinished last line' "$(grep 'inbox file:' "$LLOG")"
# A complete last record without its newline is kept, and counts.
stop_listen TERM
printf '%s' '{"receivedAt":"2024-01-01T00:00:00.000Z","event":{"specversion":"1.0","id":"c-nonl","source":"/manual","type":"'$TYPE'","data":"x"}}' >> "$INBOX"
n0=$(wc -l < "$INBOX")
start_listen || fail restart "treaty listen did not start"
gpost c-nonl /manual
check "a complete last record without newline counts: 204, no new record" "204 1" "$STATUS $(icount c-nonl)"
gpost c-after-nonl
check "and the next record goes on a line of its own" "204 1 1 ok" "$STATUS $(icount c-nonl) $(icount c-after-nonl) $(inbox valid)"
# Lines that are not JSON are skipped, the others still read.
stop_listen TERM
echo 'this line is not JSON' >> "$INBOX"
start_listen || fail restart "treaty listen did not start"
n0=$(nlines)
gpost c-after-nonl
check "a non-JSON line skipped, the records around it still read: 204, no new line" "204 $n0" "$STATUS $(nlines)"
gpost c-after-garbage
check "a non-JSON line: a new event still recorded" "204 1 $((n0 + 1))" "$STATUS $(icount c-after-garbage) $(nlines)"
check_match "a non-JSON line: logged" 'lines that are not records were skipped" file=.* skipped=1' "$(grep 'were skipped' "$LLOG")"

# 8. The relay retries across a listener outage.
stop_listen TERM
publish ev-late 'sent while listen is down' text/plain
check "publish while listen is down" 0 "$PRC"
log_wait 10 'msg="delivery failed" sub=listen id=ev-late .*error="connection failed"'
check_match "the relay's attempt fails: connection refused" 'msg="delivery failed" sub=listen id=ev-late subject=evt.acme.shop.order.created attempt=1 status=0 error="connection failed"' "$(cat "$RELAY_LOG")"
check "not recorded while down" "logged 0" \
    "$(in_log 'msg="delivery failed" sub=listen id=ev-late ') $(icount ev-late)"
start_listen || fail restart "treaty listen did not start"
wait_until 15 'test "$(icount ev-late)" -ge 1'
wait_until 5 'test "$(m_delivered)" = 6'
check "listen up again: the relay's retry is recorded, once" "1 sent while listen is down" "$(icount ev-late) $(inbox data ev-late)"
check "relay metrics: six delivered" 6 "$(m_delivered)"
check_match "relay metrics: failed attempts counted" '^[1-9][0-9]*$' "$(m_retry)"
check_match "at the end every line is a record but the non-JSON one" "^line [0-9]+: b'this line is not JSON'\$" "$(inbox valid)"
stop_listen TERM
check "last stop: exit status 0" 0 "$LRC"

check_no_sanitizer_report "no sanitizer report from treaty" "$LLOG" "$T/pub.out"
finish
