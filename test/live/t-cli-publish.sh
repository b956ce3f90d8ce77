#!/usr/bin/env bash
# treaty publish and treaty flush: against the real relay and nats-server
# (what is stored, duplicates, tokens, refusals, retries of the same id
# through a NATS outage, the outbox through a relay outage and its flush in
# order, *.rejected), and against test/live/status.py, a scripted HTTP
# server on 127.0.0.1, for what the relay cannot be made to do: the status
# classes, the backoff windows measured between request arrivals, the cap,
# Retry-After, and SIGTERM/SIGINT during a long backoff or a request.
. "$(dirname "$0")/lib.sh"
TR=$ROOT/$O/treaty
S=evt.acme.shop.order.created
TY=dev.shop.order.created.v1
unset TREATY_URL TREATY_CA_FILE
export TREATY_TOKEN=$TOKEN
NOTICE='msg="attempt failed; retrying"'

start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

# The scripted server: http://127.0.0.1:SPORT/KEY/SCRIPT (see status.py).
: > "$T/st.log"
python3 "$ROOT/test/live/status.py" "$T/st.port" "$T/st.log" 2> "$T/st.stderr" &
PIDS+=($!)
wait_until 10 '[ -s "$T/st.port" ]' || { fail start "status.py did not start"; finish; }
SURL=http://127.0.0.1:$(cat "$T/st.port")

# pub NAME ARGS...: run NAME publish of a $S event to the relay (a later
# --url or --subject in ARGS wins).
pub() {
	local name=$1
	shift
	run "$name" publish --url "$RELAY_URL" --subject $S --type $TY --source /cli "$@"
}
# reqs KEY: requests the scripted server got for KEY.
reqs() { awk -F'\t' -v k="$1" '$1 == k' "$T/st.log" | wc -l; }
# gaps KEY: the gaps between KEY's request arrivals, whole ms, one a line.
gaps() {
	awk -F'\t' -v k="$1" '$1 == k { if (n++) printf "%d\n", $3 - p + 0.5; p = $3 }' "$T/st.log"
}
# distinct KEY: "ids=<event ids> bodies=<distinct bodies>" of KEY's requests.
distinct() {
	echo "ids=$(awk -F'\t' -v k="$1" '$1 == k { print $4 }' "$T/st.log" | sort -u | tr '\n' ' ')bodies=$(awk -F'\t' -v k="$1" '$1 == k { print $5 }' "$T/st.log" | sort -u | wc -l)"
}
# notices FILE: the number of retry notices in FILE.
notices() { grep -c "$NOTICE" "$1"; }
# answered STATUS: the POSTs to /v1/events the relay answered STATUS, by
# its own counter (0 before the first), or "ERROR: ...".
answered() {
	local m
	m=$(metrics_text) || { echo "$m"; return 1; }
	printf '%s\n' "$m" | awk -v n="treaty_relay_http_requests_total{route=\"events\",status=\"$1\"}" \
	    '$1 == n { v = $2 } END { print v + 0 }'
}
# nfiles DIR PATTERN: files in DIR whose name matches PATTERN (glob).
nfiles() { find "$1" -maxdepth 1 -type f -name "$2" | wc -l; }
# within NAME LO HI G D: the retry announced D ms (its notice's delay_ms),
# in its window [LO,HI], and waited that: D-5 <= G <= D+2000, G the gap
# between the two requests' arrivals.  The lower bound is the delay itself
# (load only lengthens a gap).  The upper one only catches a client that
# sleeps far longer than it says (twice the last backoff's, for one): each
# gap also holds a connection from treaty and a new thread in status.py,
# which a loaded machine or a sanitizer build stretches (it was HI+500,
# and 60 before that).
within() {
	if [[ $4 =~ ^[0-9]+$ && $5 =~ ^[0-9]+$ ]] && [ "$5" -ge "$2" ] && [ "$5" -le "$3" ] &&
	    [ "$4" -ge $(($5 - 5)) ] && [ "$4" -le $(($5 + 2000)) ]; then
		ok "$1"
	else
		fail "$1" "gap [$4] ms after announcing [$5] ms: not within [$2,$3], or not waited (-5/+2000)"
	fi
}
# delays NAME: the delay_ms of each retry notice in $T/NAME.err, one a line.
delays() { sed -n 's/.*delay_ms=\([0-9]*\).*/\1/p' "$T/$1.err"; }
# ob_ids DIR: the ids of DIR's .event files in name order, space-separated.
ob_ids() {
	local x out=
	for x in $(ls "$1" | grep '\.event$'); do
		out+="$(tail -n +2 "$1/$x" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' 2>&1) "
	done
	echo "${out% }"
}
# summary FILE: the sent= rejected= left= of flush's summary in FILE.
summary() { grep -o 'sent=[0-9]* rejected=[0-9]* left=[0-9]*' "$1"; }
# ids_at FIRST N: the ce-id of WORK messages FIRST..FIRST+N-1, space-separated.
ids_at() {
	local i out=
	for i in $(seq "$1" $(($1 + $2 - 1))); do
		out+="$("$JSGET" "$NATS_URL_T" msg WORK "$i" | sed -n 's/^ce-id: //p') "
	done
	echo "${out% }"
}

# --- 1. publish: answer, what is stored, data sources, duplicates -------
W=$(count WORK)
pub p1 --id cli-1 --data hello
check "publish: exit 0, the relay's 202 answer on stdout" \
    'rc=0 {"id":"cli-1","duplicate":false}' "rc=$RC $OUT"
check "publish: the event is in WORK" $((W + 1)) "$(count WORK)"
last WORK $S
check "publish: stored with its attributes, data as given" "Nats-Msg-Id: alpha:cli-1
Treaty-Producer: alpha
ce-id: cli-1
ce-source: /cli
ce-specversion: 1.0
ce-type: $TY
subject: $S|hello" "$HDRS|$(cat "$T/payload")"

printf 'line 1 "q" \\ caf\303\251 {"x":1}\n\tline 2\n\n' > "$T/data-file"
pub p2 --id cli-file --data "@$T/data-file"
check "publish --data @FILE: exit 0" 'rc=0 {"id":"cli-file","duplicate":false}' "rc=$RC $OUT"
last WORK $S
if [ "$(shdr ce-id)" = cli-file ] && cmp -s "$T/data-file" "$T/payload"; then
	ok "publish --data @FILE: the file's bytes stored exactly"
else
	fail "publish --data @FILE: the file's bytes stored exactly" \
	    "id [$(shdr ce-id)], payload $(od -c "$T/payload" | head -3 | tr '\n' ' ')"
fi

printf 'x\0y\377\376\200\r\n\0' > "$T/data-bin"
pub p3 --id cli-stdin --data - < "$T/data-bin"
check "publish --data -: exit 0" 'rc=0 {"id":"cli-stdin","duplicate":false}' "rc=$RC $OUT"
last WORK $S
if [ "$(shdr ce-id)" = cli-stdin ] && cmp -s "$T/data-bin" "$T/payload"; then
	ok "publish --data -: binary stdin (NUL, 0xff) stored exactly"
else
	fail "publish --data -: binary stdin (NUL, 0xff) stored exactly" \
	    "id [$(shdr ce-id)], payload $(od -c "$T/payload" | head -3 | tr '\n' ' ')"
fi

pub p4 --id cli-attrs --data '{"n":1}' --content-type application/json \
    --time 2024-05-01T10:00:00Z --attr region=eu
last WORK $S
check "publish --content-type --time --attr: stored as content-type, ce-time, ce-region" \
    "rc=0 application/json 2024-05-01T10:00:00Z eu alpha:cli-attrs {\"n\":1}" \
    "rc=$RC $(shdr content-type) $(shdr ce-time) $(shdr ce-region) $(shdr Nats-Msg-Id) $(cat "$T/payload")"

W=$(count WORK)
pub p4b --id cli-attr-data --data x --attr data=hello
check "publish --attr data=...: refused (it would be the data), nothing sent" \
    "rc=1 $W" "rc=$RC $(count WORK)"
pub p4d --id cli-attr-b64 --attr data_base64=AAAA
check "publish --attr data_base64=...: refused too, nothing sent" \
    "rc=1 $W" "rc=$RC $(count WORK)"
pub p4c --id cli-bs --data x --batch-size 5
check "publish --batch-size without --batch: usage error, nothing sent" \
    "rc=2 $W" "rc=$RC $(count WORK)"
pub p5 --id cli-1 --data hello
check "publish the same --id again: exit 0, duplicate:true" \
    'rc=0 {"id":"cli-1","duplicate":true}' "rc=$RC $OUT"
check "publish the same --id again: WORK count unchanged" "$W" "$(count WORK)"
# Its answer line cannot be written: stored, but not exit 0 (the line
# was lost).
timeout -k 2 20 "$TR" publish --url "$RELAY_URL" --subject $S --type $TY --source /cli \
    --id cli-full --data full > /dev/full 2> "$T/full.err"
check_match "publish with standard output full: stored, exit 1, said" \
    "^rc=1 $((W + 1)) treaty: cannot write standard output" \
    "rc=$? $(count WORK) $(cat "$T/full.err")"
W=$(count WORK)

pub p6 --data a; o1=$OUT r1=$RC
pub p7 --data b; o2=$OUT r2=$RC
uuid='[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
check_match "publish without --id: a random UUID id, exit 0" \
    "^rc=0 \\{\"id\":\"$uuid\",\"duplicate\":false\\}\$" "rc=$r1 $o1"
if [ "$o1" != "$o2" ] && [ "$r2" = 0 ] && [ "$(count WORK)" = $((W + 2)) ]; then
	ok "publish without --id: another id each time, both stored"
else
	fail "publish without --id: another id each time, both stored" \
	    "[$o1] [$o2] rc=$r2 WORK $(count WORK), was $W"
fi

# --- 2. tokens ----------------------------------------------------------
printf '%s\n' "$TOKEN" > "$T/token"
NOTOK=1 pub t1 --id tok-file --token-file "$T/token"
last WORK $S
check "--token-file (TREATY_TOKEN unset): accepted, stored as its producer" \
    "rc=0 alpha:tok-file" "rc=$RC $(shdr Nats-Msg-Id)"
TREATY_TOKEN=$OTHER_TOKEN pub t2 --id tok-env
last WORK $S
check "TREATY_TOKEN: accepted, stored as that token's producer (beta)" \
    "rc=0 beta:tok-env" "rc=$RC $(shdr Nats-Msg-Id)"
NOTOK=1 pub t3 --id tok-none --url "$SURL/notoken/202"
check_match "no token: exit non-zero with a message, nothing sent" \
    '^rc=[1-9][0-9]* sent=0 .*token' "rc=$RC sent=$(reqs notoken) $ERR"
W=$(count WORK) a0=$(answered 401)
TREATY_TOKEN=wrong-token-0123456789 pub t4 --id tok-wrong
check_match "wrong token: exit 1, the 401 said" '^rc=1 .*401' "rc=$RC $(echo $ERR)"
# "One attempt" is the missing retry notice, and the relay's own count of
# its 401s, which catches silent retries too (8 attempts by default).
check "wrong token: one attempt (no retry notice, one 401 counted by the relay), nothing stored" \
    "notices=0 attempts=1 WORK=$W" "notices=$(notices "$T/t4.err") attempts=$(($(answered 401) - a0)) WORK=$(count WORK)"

# --- 3. refusals and validation ------------------------------------------
W=$(count WORK) a0=$(answered 403)
pub r1 --id ref-403 --subject evt.acme.other.order.created --type dev.other.order.created.v1
check_match "subject not allowed: exit 1, the 403 said" '^rc=1 .*403' "rc=$RC $(echo $ERR)"
check "subject not allowed: at once (no retry notice, one 403 counted by the relay), nothing stored" \
    "notices=0 attempts=1 WORK=$W" "notices=$(notices "$T/r1.err") attempts=$(($(answered 403) - a0)) WORK=$(count WORK)"

mkdir -p "$T/ob-bad"
n=0
for bad in evt.acme.shop.order evt.acme.shop.order.created.x 'evt.*.shop.order.created' \
    foo.acme.shop.order.created evt..shop.order.created; do
	n=$((n + 1))
	pub r2-$n --id bad-$n --subject "$bad" --url "$SURL/badsubj/202" --outbox "$T/ob-bad"
	check_match "bad subject [$bad]: exit 1 with a message, nothing sent or kept" \
	    "^rc=1 sent=0 kept=0 .*$bad" "rc=$RC sent=$(reqs badsubj) kept=$(ls -A "$T/ob-bad" | wc -l) $ERR"
done
# A type the relay would refuse (422): checked here, before anything is
# sent or written to the outbox.
for bad in dev.shop.order.deleted.v1 dev.shop.order.created shop.order.created.v1; do
	n=$((n + 1))
	pub r2-$n --id badtype-$n --subject evt.acme.shop.order.created --type "$bad" \
	    --url "$SURL/badtype/202" --outbox "$T/ob-bad"
	check_match "type [$bad] for evt.acme.shop.order.created: exit 1 naming it, nothing sent or kept" \
	    "^rc=1 sent=0 kept=0 .*--type $bad" "rc=$RC sent=$(reqs badtype) kept=$(ls -A "$T/ob-bad" | wc -l) $ERR"
done
# An event over the relay's 1 MiB: refused as the relay would (413), not
# sent (a relay answers it from the head and closes, and a client still
# writing the body mostly saw the connection closed and retried).
head -c 1100000 /dev/zero | tr '\0' x > "$T/big.txt"
pub big --id big-1 --data @"$T/big.txt" --url "$SURL/big/202" --outbox "$T/ob-big"
check_match "an event over 1 MiB: exit 1, 413, nothing sent, its outbox file set aside" \
    "^rc=1 sent=0 rejected=1 .*413.*over 1 MiB" \
    "rc=$RC sent=$(reqs big) rejected=$(find "$T/ob-big" -name '*.rejected' | wc -l) $ERR"
for flag in --subject --type --source; do
	args=(--subject $S --type $TY --source /cli)
	for i in 0 2 4; do [ "${args[i]}" = $flag ] && unset "args[i]" "args[i+1]"; done
	run u${flag#--} publish --url "$SURL/usage/202" "${args[@]}" --id usage-1
	check_match "publish without $flag: exit 2 with the usage, nothing sent" \
	    '^rc=2 sent=0 .*usage: treaty publish' "rc=$RC sent=$(reqs usage) $(echo $ERR)"
done
# Long options are exact (glibc would take --token for --token-file), and
# no message prints a value given to a secret-bearing option.
SECRETV=s3cr3t-value-0123456789
pub u-prefix --url "$SURL/usage/202" --token "$SECRETV"
check "--token (a prefix of --token-file): exit 2, named, the value not printed, nothing sent" \
    "rc=2 sent=0 named=1 leaked=0" \
    "rc=$RC sent=$(reqs usage) named=$(grep -c 'unknown option --token (options are not abbreviated)' "$T/u-prefix.err") leaked=$(grep -c "$SECRETV" "$T/u-prefix.err")"
pub u-prefix2 --url "$SURL/usage/202" --tok="$SECRETV"
check "--tok=VALUE: the same, the value not printed" "rc=2 leaked=0" "rc=$RC leaked=$(grep -c "$SECRETV" "$T/u-prefix2.err")"
pub u-unknown --url "$SURL/usage/202" --tokenx="$SECRETV"
check "an unknown --opt=VALUE: exit 2, the value not printed" "rc=2 leaked=0" "rc=$RC leaked=$(grep -c "$SECRETV" "$T/u-unknown.err")"
NOTOK=1 pub u-tokfile --url "$SURL/usage/202" --token-file "$T/$SECRETV"
check "a --token-file that is not a file (the token itself, given by mistake): exit 1, not printed" \
    "rc=1 sent=0 leaked=0 treaty: --token-file: No such file or directory" \
    "rc=$RC sent=$(reqs usage) leaked=$(grep -c "$SECRETV" "$T/u-tokfile.err") $ERR"
# An outbox someone else can write to: refused before anything is written
# or sent (flush would publish their files with this token).
mkdir -p "$T/ob-open" "$T/ob-group"
chmod 777 "$T/ob-open"
chmod 770 "$T/ob-group"
pub ob-open --id ob-open-1 --url "$SURL/obopen/202" --outbox "$T/ob-open"
check_match "--outbox writable by others: exit 1, nothing sent or kept" '^rc=1 sent=0 kept=0 treaty: outbox .*writable by nobody else' \
    "rc=$RC sent=$(reqs obopen) kept=$(ls -A "$T/ob-open" | wc -l) $ERR"
pub ob-group --id ob-group-1 --url "$SURL/obopen/202" --outbox "$T/ob-group"
check "--outbox writable by its group: refused too" "rc=1 sent=0" "rc=$RC sent=$(reqs obopen)"
run ob-open-flush flush --outbox "$T/ob-open" --url "$SURL/obopen/202"
check_match "flush of such an outbox: exit 1, nothing sent" '^rc=1 sent=0 .*writable by nobody else' "rc=$RC sent=$(reqs obopen) $ERR"
pub u-attempts --url "$SURL/usage/202" --attempts 0
check_match "--attempts 0: exit 2, nothing sent" '^rc=2 sent=0 ' "rc=$RC sent=$(reqs usage) $ERR"
pub mkdir --id mkdir-1 --url "$SURL/mkdir/202" --outbox "$T/new-outbox"
check "--outbox to a missing directory: made (mode 700), sent, the file removed after 202" \
    'rc=0 {"id":"mkdir-1","duplicate":false} sent=1 mode=700 files=0' \
    "rc=$RC $OUT sent=$(reqs mkdir) mode=$(stat -c %a "$T/new-outbox" 2>&1) files=$(ls -A "$T/new-outbox" 2>/dev/null | wc -l)"
pub nodir --id nodir-1 --url "$SURL/nodir/202" --outbox "$T/no-such-dir/outbox"
check "--outbox whose parent is missing: exit 1, nothing sent, one message (nothing else on stderr)" \
    "rc=1 sent=0 treaty: outbox $T/no-such-dir/outbox: No such file or directory" \
    "rc=$RC sent=$(reqs nodir) $ERR"
pub capbelow --id capbelow-1 --url "$SURL/capbelow/202" --retry-cap 200
check_match "--retry-cap below --retry-base (200 < default 250): refused, nothing sent" \
    '^rc=[1-9][0-9]* sent=0 .*retry-cap' "rc=$RC sent=$(reqs capbelow) $ERR"

# --- status classes (scripted server): final ones once, transient retried
for st in 400 401 403 404 413 422 500; do
	pub perm-$st --id perm-$st --url "$SURL/perm$st/$st" --retry-base 1 --retry-cap 2
	check_match "answer $st: exit 1 after one request, the status said, no retry notice" \
	    "^rc=1 sent=1 notices=0 .*$st" "rc=$RC sent=$(reqs perm$st) notices=$(notices "$T/perm-$st.err") $(echo $ERR)"
done
for st in 429 502 503 504; do
	pub tr-$st --id tr-$st --url "$SURL/tr$st/$st" --attempts 3 --retry-base 1 --retry-cap 2
	check "answer $st: retried, exit 75 after --attempts 3 (3 requests of one id, 2 notices)" \
	    "rc=75 sent=3 ids=tr-$st bodies=1 notices=2" \
	    "rc=$RC sent=$(reqs tr$st) $(distinct tr$st) notices=$(notices "$T/tr-$st.err")"
done
pub tr-conn --id tr-conn --url "http://127.0.0.1:$(free_port)" --attempts 3 --retry-base 1 --retry-cap 2
check_match "connection refused: retried, exit 75 after --attempts 3 (2 notices)" \
    '^rc=75 notices=2 ' "rc=$RC notices=$(notices "$T/tr-conn.err") $(echo $ERR)"
pub tr-ok --id tr-ok --url "$SURL/trok/503.429.502.504.202" --retry-base 1 --retry-cap 2
check "503, 429, 502, 504 then 202: exit 0 with the answer, 5 requests of one event" \
    'rc=0 {"id":"tr-ok","duplicate":false} sent=5 ids=tr-ok bodies=1' \
    "rc=$RC $OUT sent=$(reqs trok) $(distinct trok)"

# --- 4. retries with the same id through a NATS outage ----------------------
W=$(count WORK)
stop_nats
wait_until 15 healthz_503 || fail "outage" "the relay's /healthz did not turn 503"
"$TR" publish --url "$RELAY_URL" --subject $S --type $TY --source /cli --id outage-1 \
    --data outage --retry-cap 1000 --attempts 30 > "$T/outage.out" 2> "$T/outage.err" &
P=$!
PIDS+=($P)
# Retrying: two 503 answers retried (each waits Retry-After capped at 1 s)
# and still running, instead of "alive after a 2 s sleep".
wait_until 15 '[ "$(grep "$NOTICE" "$T/outage.err" | grep -c "result=\"\?503")" -ge 2 ]'
if kill -0 $P 2>/dev/null && [ "$(grep "$NOTICE" "$T/outage.err" | grep -c 'result="\?503')" -ge 2 ]
then ok "outage: publish still retrying after 2 s"
else fail "outage: publish still retrying after 2 s" "exited or not retrying: $(cat "$T/outage.err")"; fi
restart_nats || fail "outage" "nats-server did not restart"
wait_until 35 "! kill -0 $P" || kill -KILL $P
wait $P
rc=$?
check "outage: publish exits 0 once NATS is back, with the relay's answer" \
    'rc=0 {"id":"outage-1","duplicate":false}' "rc=$rc $(cat "$T/outage.out")"
n503=$(grep "$NOTICE" "$T/outage.err" | grep -c 'result="\?503')
if [ "$n503" -ge 1 ]; then ok "outage: the 503 answers were retried ($n503 notices)"
else fail "outage: the 503 answers were retried" "no 503 notice: $(cat "$T/outage.err")"; fi
# (With no 503 notice at all there is nothing to check: that fails too.)
check "outage: every 503 retry waited Retry-After 2 s capped at --retry-cap 1000" "some []" \
    "$([ "$n503" -ge 1 ] && echo some || echo none) [$(grep "$NOTICE" "$T/outage.err" | grep 'result="\?503' | grep -v 'delay_ms=1000$')]"
wait_until 10 '[ "$(count WORK)" = $((W + 1)) ]'
last WORK $S
check "outage: WORK holds the event exactly once" "$((W + 1)) alpha:outage-1 outage" \
    "$(count WORK) $(shdr Nats-Msg-Id) $(cat "$T/payload")"
wait_until 15 healthz_ok || fail "outage" "the relay did not become healthy again"

# --- 5, 6. the outbox through a relay outage, flush --------------------------
kill -TERM $RELAY_PID
wait $RELAY_PID
DOWN=$RELAY_URL
mkdir -p "$T/ob" "$T/ob2"
pub o1 --url "$DOWN" --outbox "$T/ob" --attempts 2 --retry-base 100 --retry-cap 200 --id z-first --data "first"
f=$(ls "$T/ob")
check_match "outbox, relay down: exit 75 after 2 attempts (1 notice), the file named" \
    "^rc=75 notices=1 .*kept in $T/ob/$f" "rc=$RC notices=$(notices "$T/o1.err") $(echo $ERR)"
check_match "outbox: one file, <20-digit ns time>-<8 hex>.event" '^[0-9]{20}-[0-9a-f]{8}\.event$' "$f"
body=$(tail -n +2 "$T/ob/${f:-none}" 2>/dev/null)
check "outbox file: line 1 the subject, then the JSON event" "$S|z-first|$TY|/cli|first" \
    "$(head -1 "$T/ob/${f:-none}" 2>/dev/null)|$(printf '%s' "$body" | python3 -c '
import base64, json, sys
e = json.load(sys.stdin)
d = e["data"] if "data" in e else base64.b64decode(e["data_base64"]).decode()
print("%s|%s|%s|%s" % (e["id"], e["type"], e["source"], d))' 2>&1)"
pub o2 --url "$DOWN" --outbox "$T/ob" --attempts 2 --retry-base 100 --retry-cap 200 --id m-second --data "second"
r2=$RC
pub o3 --url "$DOWN" --outbox "$T/ob" --attempts 2 --retry-base 100 --retry-cap 200 --id a-third --data "third"
check "outbox: two more publishes exit 75, 3 .event files, no temporary left" "75 75 3 3" \
    "$r2 $RC $(nfiles "$T/ob" '*.event') $(ls -A "$T/ob" | wc -l)"
check "outbox: file names sort in the order written" "z-first m-second a-third" \
    "$(ob_ids "$T/ob")"

# ob2: allowed, one the relay refuses (422), allowed.  publish checks what
# the relay would refuse, so the middle file is written by hand in the
# outbox's format (the subject line, then the structured event), as an
# older client might have left it: a type that does not match its subject.
pub q1 --url "$DOWN" --outbox "$T/ob2" --attempts 2 --retry-base 100 --retry-cap 200 --id r-1
printf '%s\n%s' evt.acme.shop.order.created \
    '{"specversion":"1.0","id":"r-2","source":"/cli","type":"dev.shop.order.deleted.v1","data":"x"}' \
    > "$T/ob2/$(printf '%020d' "$(date +%s%N)")-0000abcd.event"
pub q3 --url "$DOWN" --outbox "$T/ob2" --attempts 2 --retry-base 100 --retry-cap 200 --id r-3
check "outbox: 3 more files in a second outbox" 3 "$(nfiles "$T/ob2" '*.event')"

start_relay || { fail start "the relay did not start again"; finish; }
W=$(count WORK)
run f1 flush --outbox "$T/ob" --url "$RELAY_URL"
check "flush: exit 0, no .event left" "rc=0 left=0" "rc=$RC left=$(ls -A "$T/ob" | wc -l)"
check "flush: the 3 events stored, summary sent=3 rejected=0 left=0" \
    "$((W + 3)) sent=3 rejected=0 left=0" "$(count WORK) $(summary "$T/f1.err")"
check "flush: stored oldest first (stream order = write order)" \
    "z-first m-second a-third" "$(ids_at $((W + 1)) 3)"
last WORK $S
check "flush: the last one stored as published" "alpha:a-third third" "$(shdr Nats-Msg-Id) $(cat "$T/payload")"

W=$(count WORK)
run f2 flush --outbox "$T/ob2" --url "$RELAY_URL"
rej=$(find "$T/ob2" -maxdepth 1 -name '*.rejected')
check_match "flush with a refused file: exit 1, the 422 said" '^rc=1 .*422' "rc=$RC $(echo $ERR)"
check "flush: the refused file renamed *.rejected, no .event left" \
    "rejected=1 event=0 evt.acme.shop.order.created" \
    "rejected=$(nfiles "$T/ob2" '*.rejected') event=$(nfiles "$T/ob2" '*.event') $(head -1 "$rej" 2>/dev/null)"
check_match "flush: the .rejected file is the .event file renamed" \
    '^[0-9]{20}-[0-9a-f]{8}\.event\.rejected$' "$(basename "$rej")"
check "flush: the other two files still sent, in order; summary sent=2 rejected=1 left=0" \
    "$((W + 2)) r-1 r-3 sent=2 rejected=1 left=0" \
    "$(count WORK) $(ids_at $((W + 1)) 2) $(summary "$T/f2.err")"
# idle_flush NAME DIR: flush DIR, which has no .event file, to the relay.
# Sets RC (or "hung" when still running after 10 s, time enough to start
# and end a sanitizer build on a loaded machine; then it gets SIGTERM,
# which must end it with 75 like any interrupted flush) and MS.
idle_flush() {
	local p t0 rc
	t0=$(now_ms)
	"$TR" flush --outbox "$2" --url "$RELAY_URL" > "$T/$1.out" 2> "$T/$1.err" &
	p=$!
	PIDS+=($p)
	wait_until 10 "! kill -0 $p"
	MS=$(($(now_ms) - t0))
	if kill -0 $p 2>/dev/null; then
		RC=hung
		kill -TERM $p
		wait_until 3 "! kill -0 $p" || kill -KILL $p
		wait $p
		rc=$?
		check "$1: flush still running, SIGTERM: exit 75 (no crash)" 75 "$rc"
	else
		wait $p
		RC=$?
	fi
}
idle_flush f3 "$T/ob2"
check "flush again (only the .rejected file left): exit 0, it is not sent again" \
    "rc=0 WORK=$((W + 2)) rejected=1" "rc=$RC WORK=$(count WORK) rejected=$(nfiles "$T/ob2" '*.rejected')"
mkdir -p "$T/ob-empty"
idle_flush f5 "$T/ob-empty"
# The wall clock around a treaty process (nothing it does is stamped): a
# hang is "hung" at 10 s; 8 s is room for a sanitizer build's start and
# exit on a loaded machine.
check "flush of an empty outbox: exit 0 at once" "rc=0 fast=1" "rc=$RC fast=$((MS < 8000))"

# A file still failing: flush stops with 75 and keeps it and the rest.
mkdir -p "$T/ob3"
for i in 1 2 3; do
	pub w$i --url "$SURL/obw/503" --outbox "$T/ob3" --attempts 1 --id w-$i
done
check "--attempts 1: no retry, exit 75, file kept (3 files)" "75 0 3" \
    "$RC $(notices "$T/w3.err") $(nfiles "$T/ob3" '*.event')"
keep=$(ls "$T/ob3" | tail -2 | tr '\n' ' ')
run f4 flush --outbox "$T/ob3" --url "$SURL/obf/202.503" --attempts 2 --retry-base 1 --retry-cap 2 --batch-size 1
check "flush, 2nd file still failing: exit 75, the 1st sent, 2nd and 3rd kept, 3rd not tried" \
    "rc=75 sent=3 kept=$keep" "rc=$RC sent=$(reqs obf) kept=$(ls "$T/ob3" | tr '\n' ' ')"
check "flush sent w-1, then w-2 twice; summary sent=1 rejected=0 left=2" \
    "w-1 w-2 w-2 sent=1 rejected=0 left=2" \
    "$(awk -F'\t' '$1 == "obf" { print $4 }' "$T/st.log" | tr '\n' ' ')$(summary "$T/f4.err")"

# A bad token is no reason to give up the outbox: flush stops, files stay.
for i in 1 2; do
	pub k$i --url "$DOWN" --outbox "$T/ob4" --attempts 1 --id k-$i
done
W=$(count WORK)
TREATY_TOKEN=wrong-token-0123456789 run f6 flush --outbox "$T/ob4" --url "$RELAY_URL"
check "flush with a bad token: exit 1 at the first file, both kept as .event, none rejected" \
    "rc=1 event=2 rejected=0 WORK=$W" \
    "rc=$RC event=$(nfiles "$T/ob4" '*.event') rejected=$(nfiles "$T/ob4" '*.rejected') WORK=$(count WORK)"
run f7 flush --outbox "$T/ob4" --url "$RELAY_URL"
check "the same files flushed with the right token afterwards" "rc=0 event=0 WORK=$((W + 2))" \
    "rc=$RC event=$(nfiles "$T/ob4" '*.event') WORK=$(count WORK)"

# --- 7. backoff windows (always 503, no Retry-After) --------------------------
pub bo --id bo-1 --url "$SURL/bo/503" --attempts 6
check "backoff: exit 75 after 6 requests of one event" "rc=75 sent=6 ids=bo-1 bodies=1" \
    "rc=$RC sent=$(reqs bo) $(distinct bo)"
mapfile -t G < <(gaps bo)
mapfile -t D < <(delays bo)
n=0
for w in 125:250 250:500 500:1000 1000:2000 2000:4000; do
	within "backoff: gap $((n + 1)) within [${w%:*},${w#*:}] ms" "${w%:*}" "${w#*:}" "${G[n]-none}" "${D[n]-none}"
	n=$((n + 1))
done
check "backoff: one notice per retried failure, attempt=1..5, result 503" "1 2 3 4 5" \
    "$(grep "$NOTICE" "$T/bo.err" | grep 'result="\?503' | sed -n 's/.* attempt=\([0-9]*\) .*/\1/p' | tr '\n' ' ' | sed 's/ $//')"
bad=
for i in 0 1 2 3 4; do
	lo=$((125 << i)) hi=$((250 << i))
	d=${D[i]-x} g=${G[i]-x}
	if ! [[ $d =~ ^[0-9]+$ && $g =~ ^[0-9]+$ ]] || [ "$d" -lt $lo ] || [ "$d" -gt $hi ] ||
	    [ "$g" -lt $((d - 5)) ]; then
		bad+=" notice $((i + 1)): delay_ms=$d gap=$g window [$lo,$hi];"
	fi
done
check "backoff: each notice's delay_ms in its window, and waited (gap >= delay)" "" "$bad"
check_match "backoff: after the last attempt, the reason" 'still failing after 6 attempts: 503' "$ERR"

pub cap --id cap-1 --url "$SURL/cap/503" --attempts 6 --retry-cap 400
mapfile -t G < <(gaps cap)
mapfile -t D < <(delays cap)
check "cap: exit 75 after 6 requests" "rc=75 sent=6" "rc=$RC sent=$(reqs cap)"
within "cap: gap 1 within [125,250] ms" 125 250 "${G[0]-none}" "${D[0]-none}"
for i in 1 2 3 4; do
	within "cap --retry-cap 400: gap $((i + 1)) within [200,400] ms" 200 400 "${G[i]-none}" "${D[i]-none}"
done

# --- 9. Retry-After -----------------------------------------------------------
pub ra --id ra-1 --url "$SURL/ra/503ra1.202"
g=$(gaps ra)
check "Retry-After: 1: exit 0 with the answer, 2 requests" \
    'rc=0 {"id":"ra-1","duplicate":false} sent=2' "rc=$RC $OUT sent=$(reqs ra)"
within "Retry-After: 1: the retry waited 1 s" 1000 1000 "${g:-none}" "$(delays ra)"
check_match "Retry-After: 1: notice with delay_ms=1000" 'delay_ms=1000$' "$ERR"
pub racap --id racap-1 --url "$SURL/racap/503ra5.202" --retry-cap 300
g=$(gaps racap)
check "Retry-After: 5 with --retry-cap 300: exit 0" "rc=0 sent=2" "rc=$RC sent=$(reqs racap)"
within "Retry-After: 5 with --retry-cap 300: waited the cap" 300 300 "${g:-none}" "$(delays racap)"

# --- 8. SIGTERM / SIGINT during a long backoff or a request ------------------
# sigtest NAME SIGNAL WAITFOR ARGS...: start treaty ARGS, wait until WAITFOR
# (an expression), send SIGNAL; sets RC and MS (from the signal to the exit,
# SIGKILL after 15 s).  "At once" is under 10 s: the exit of a sanitizer
# build on a loaded machine, against a 20-40 s backoff or a 60 s hang.
sigtest() {
	local name=$1 sig=$2 cond=$3 p t0 n
	shift 3
	"$TR" "$@" > "$T/$name.out" 2> "$T/$name.err" &
	p=$!
	PIDS+=($p)
	if ! wait_until 10 "$cond"; then
		fail "$name" "did not reach the state to interrupt: $(cat "$T/$name.err")"
	fi
	t0=$(now_ms)
	kill -$sig $p
	for n in $(seq 1 750); do
		kill -0 $p 2>/dev/null || break
		sleep 0.02
	done
	kill -0 $p 2>/dev/null && kill -KILL $p
	wait $p
	RC=$?
	MS=$(($(now_ms) - t0))
}
LONG=(--retry-base 40000 --retry-cap 40000)
for sig in TERM INT; do
	sigtest sig$sig $sig "grep -q '$NOTICE' '$T/sig$sig.err'" publish \
	    --url "$SURL/sig$sig/503" --subject $S --type $TY --source /cli --id sig$sig \
	    "${LONG[@]}" --attempts 5
	check "SIG$sig during a 20-40 s backoff: exit 75 within 10 s, no further request" \
	    "rc=75 fast=1 sent=1" "rc=$RC fast=$((MS < 10000)) sent=$(reqs sig$sig)"
done
mkdir -p "$T/obsig"
sigtest sighang TERM '[ "$(reqs sighang)" = 1 ]' publish --url "$SURL/sighang/hang" \
    --subject $S --type $TY --source /cli --id sighang --outbox "$T/obsig"
check "SIGTERM during an unanswered request: exit 75 within 10 s, outbox file kept" \
    "rc=75 fast=1 kept=1" "rc=$RC fast=$((MS < 10000)) kept=$(nfiles "$T/obsig" '*.event')"
keep=$(ls "$T/ob3" | tr '\n' ' ')
sigtest sigflush TERM "grep -q '$NOTICE' '$T/sigflush.err'" flush --outbox "$T/ob3" \
    --url "$SURL/sigflush/503" "${LONG[@]}"
check "SIGTERM during flush's 20-40 s backoff: exit 75 within 10 s, the files kept" \
    "rc=75 fast=1 sent=1 kept=$keep" \
    "rc=$RC fast=$((MS < 10000)) sent=$(reqs sigflush) kept=$(ls "$T/ob3" | tr '\n' ' ')"
finish
