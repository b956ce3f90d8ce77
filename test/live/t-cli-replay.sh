#!/usr/bin/env bash
# treaty admin replay (SPEC 15) against test/live/replay.py, a scripted
# stand-in for the relay's replay routes on 127.0.0.1: the started line,
# --wait to done, to cancelled and to a replay that disappears, the plain
# progress lines (stdout is a file here) and the bar on a terminal
# (script(1)), --status and --cancel, percent-encoding of the name and of
# since, --json lines, the exits (0, 1, 2, 75), retries (503, and 429
# too_many_replays after its Retry-After), SIGINT and SIGTERM.
. "$(dirname "$0")/lib.sh"
TR=$ROOT/$O/treaty
AT=admin-token-0123456789
SINCE=2026-12-01T00:00:00Z
unset TREATY_URL TREATY_CA_FILE TREATY_TOKEN
FAST=(--retry-base 10 --retry-cap 50)

: > "$T/rp.log"
python3 "$ROOT/test/live/replay.py" "$T/rp.port" "$T/rp.log" "$AT" 2> "$T/rp.stderr" &
PIDS+=($!)
wait_until 10 '[ -s "$T/rp.port" ]' || { fail start "replay.py did not start"; finish; }
U=http://127.0.0.1:$(cat "$T/rp.port")

# rr NAME [ENV=VALUE...] -- ARGS...: treaty admin replay --url $U ARGS (a
# --url in ARGS wins) with the admin token in TREATY_TOKEN (bounded, 30 s);
# stdout in $T/NAME.out, stderr in $T/NAME.err; prints the exit status.
rr() {
	local name=$1 envs=("TREATY_TOKEN=$AT")
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	timeout -k 2 30 env "${envs[@]}" "$TR" admin replay --url "$U" "$@" \
	    > "$T/$name.out" 2> "$T/$name.err"
	echo $?
}
# reqs METHOD WHAT: requests replay.py logged with that method for a
# subscriber name or replay id (decoded).
reqs() { awk -F'\t' -v m="$1" -v w="$2" '$1 == m && $4 == w' "$T/rp.log" | wc -l; }
# rawpath METHOD WHAT: the raw path of the last such request.
rawpath() { awk -F'\t' -v m="$1" -v w="$2" '$1 == m && $4 == w { p = $2 } END { print p }' "$T/rp.log"; }
# id_of NAME: the replay id of NAME's started line.
id_of() { sed -n 's/^replay \([^ ]*\) started: .*/\1/p' "$T/$1.out" | head -1; }
# progress NAME: NAME's progress lines (not the started one), "|" between.
progress() { grep -v ' started: ' "$T/$1.out" | tr '\n' '|' | sed 's/|$//'; }
# increasing NAME: "yes" when the delivered figures of NAME's progress
# lines (two or more) never go down.
increasing() {
	grep -v ' started: ' "$T/$1.out" | sed -n 's/^replay [^ ]*: [a-z]* \([0-9]*\)[/ ].*/\1/p' |
	    awk 'NR > 1 && $1 < p { bad = 1 } { p = $1; n++ } END { print (n > 1 && !bad) ? "yes" : "no: " n }'
}
# gaps ID: "ok" when the GETs of ID came a second apart (950-5000 ms).
gaps() {
	awk -F'\t' -v w="$1" '$1 == "GET" && $4 == w { if (n++ && ($3 - p < 950 || $3 - p > 5000)) bad = bad " " int($3 - p); p = $3 }
	    END { print (n > 1 && bad == "") ? "ok" : "gaps:" bad " n=" n }' "$T/rp.log"
}

# Started, not followed: one line, exit 0, no GET.
check "started: exit 0" 0 "$(rr st -- --subscriber steady --since "$SINCE")"
id=$(id_of st)
check_match "started: the id and what matched" '^replay rp-steady-[0-9]+ started: 5000 events matched$' "$(cat "$T/st.out")"
check "started: one POST, no poll without --wait" "1 0" "$(reqs POST steady) $(reqs GET "$id")"
check_match "since percent-encoded in the query, no dropped, an id of the client's" \
    '^/v1/admin/subscribers/steady/replay\?since=2026-12-01T00%3A00%3A00Z&id=[0-9a-f]{24}$' "$(rawpath POST steady)"

# --dropped, and an offset: its '+' is %2B (a bare '+' would be a space).
check "--dropped, since with an offset: exit 0" 0 \
    "$(rr dr -- --subscriber steady --since 2026-12-01T01:00:00.5+01:00 --dropped)"
check_match "the offset as %2B, dropped=true" \
    '^/v1/admin/subscribers/steady/replay\?since=2026-12-01T01%3A00%3A00\.5%2B01%3A00&dropped=true&id=[0-9a-f]{24}$' \
    "$(rawpath POST steady)"
check "the relay reads since back as written" "2026-12-01T01:00:00.5+01:00 true" \
    "$(awk -F'\t' '$1 == "POST" && $4 == "steady" { s = $5 " " $6 } END { print s }' "$T/rp.log")"

# A name that needs encoding, and that the relay does not know: 404, 1.
check "an unknown subscriber (404 unknown_subscriber): exit 1" 1 "$(rr unk -- --subscriber 'a b/c' --since "$SINCE")"
check_match "the name percent-encoded in the path" '^/v1/admin/subscribers/a%20b%2Fc/replay\?since=2026-12-01T00%3A00%3A00Z&id=[0-9a-f]{24}$' \
    "$(rawpath POST 'a b/c')"
check_match "an unknown subscriber: said on stderr" '404: no subscriber a b/c' "$(cat "$T/unk.err")"
check "an unknown subscriber: nothing on stdout" "" "$(cat "$T/unk.out")"

# --wait to done: a line per change (the unchanged poll is not repeated),
# delivered going up, a second between polls.
check "--wait to done: exit 0" 0 "$(rr wd -- --subscriber steady --since "$SINCE" --wait)"
id=$(id_of wd)
check_match "--wait to done: the progress lines" \
    "^replay $id: running 0/5000 delivered, 0 dropped, 5000 remaining\|replay $id: running 1200/5000 delivered, 3 dropped, 3797 remaining, [0-9.]+/s\|replay $id: running 2400/5000 delivered, 3 dropped, 2597 remaining, [0-9.]+/s\|replay $id: done 4997/5000 delivered, 3 dropped, 0 remaining, [0-9.]+/s$" \
    "$(progress wd)"
check "--wait to done: delivered goes up" yes "$(increasing wd)"
check "--wait to done: every poll asked (5), then no more" 5 "$(reqs GET "$id")"
check "--wait: polls a second apart" ok "$(gaps "$id")"
check "--wait to done: nothing on stderr" "" "$(cat "$T/wd.err")"

# --wait to cancelled: 1, and said.
check "--wait to cancelled: exit 1" 1 "$(rr wc -- --subscriber stopped --since "$SINCE" --wait)"
id=$(id_of wc)
check_match "--wait to cancelled: the last line" "^replay $id: cancelled 20/100 delivered, 0 dropped, 80 remaining" \
    "$(tail -1 "$T/wc.out")"
check "--wait to cancelled: delivered goes up" yes "$(increasing wc)"
check_match "--wait to cancelled: said on stderr" "replay $id was cancelled" "$(cat "$T/wc.err")"

# matched null: no fraction, no remaining.
check "matched null, --wait: exit 0" 0 "$(rr un -- --subscriber unsized --since "$SINCE" --wait)"
id=$(id_of un)
check_match "matched null: the started line" "^replay $id started: matched not counted$" "$(head -1 "$T/un.out")"
check_match "matched null: delivered only" \
    "^replay $id: running 5 delivered, 0 dropped\|replay $id: running 10 delivered, 1 dropped, [0-9.]+/s\|replay $id: done 15 delivered, 1 dropped, [0-9.]+/s$" \
    "$(progress un)"

# The replay disappears while followed: 404 unknown_replay, 1.
check "--wait, the replay disappears (404): exit 1" 1 "$(rr va -- --subscriber vanish --since "$SINCE" --wait)"
check_match "the replay disappears: said with its id" "admin replay $(id_of va): 404: unknown_replay" "$(cat "$T/va.err")"

# A 503 between polls is retried; the replay is followed to its end.
check "--wait through a 503 between polls: exit 0" 0 "$(rr fl -- --subscriber flaky --since "$SINCE" --wait "${FAST[@]}")"
check_match "--wait through a 503: one retry notice, then done" \
    "^1 replay $(id_of fl): done 10/10 delivered" "$(grep -c 'msg="attempt failed; retrying" request=replay' "$T/fl.err") $(tail -1 "$T/fl.out")"

# --status: one report; with --wait, followed to the end.
rr s0 -- --subscriber steady --since "$SINCE" > /dev/null
id=$(id_of s0)
check "--status: exit 0 while running" 0 "$(rr s1 -- --status "$id")"
check "--status: one report, one GET" "replay $id: running 0/5000 delivered, 0 dropped, 5000 remaining 1" \
    "$(cat "$T/s1.out") $(reqs GET "$id")"
check "--status --wait: exit 0 when done" 0 "$(rr s2 -- --status "$id" --wait)"
check_match "--status --wait: to done" "^replay $id: running 1200/5000 .*\|replay $id: done 4997/5000 delivered, 3 dropped, 0 remaining" \
    "$(progress s2)"
check "--status of a replay the relay does not know: exit 1" 1 "$(rr s3 -- --status rp-nope-1)"
check_match "--status of an unknown replay: said" "admin replay rp-nope-1: 404: unknown_replay" "$(cat "$T/s3.err")"
check "--status of an unknown replay, --wait: exit 1" 1 "$(rr s4 -- --status rp-nope-1 --wait)"

# --cancel: 204 is 0, 404 is 1; a cancelled replay's --status is 1.
rr c0 -- --subscriber forever --since "$SINCE" > /dev/null
id=$(id_of c0)
check "--cancel: exit 0 on 204" 0 "$(rr c1 -- --cancel "$id")"
check "--cancel: said, one DELETE to the replay's path" "replay $id cancelled 1 /v1/admin/replays/$id" \
    "$(cat "$T/c1.out") $(reqs DELETE "$id") $(rawpath DELETE "$id")"
check "--status of the cancelled replay: exit 1" 1 "$(rr c2 -- --status "$id")"
check_match "--status of the cancelled replay: its state" "^replay $id: cancelled " "$(cat "$T/c2.out")"
check "--cancel of an unknown replay (404): exit 1" 1 "$(rr c3 -- --cancel rp-nope-2)"
check_match "--cancel of an unknown replay: said" "admin replay rp-nope-2: 404: unknown_replay" "$(cat "$T/c3.err")"

# Temporary failures: 75 after --attempts, and what it means.
check "503 every time: exit 75 after the attempts" 75 "$(rr b1 -- --subscriber busy --since "$SINCE" --attempts 3 "${FAST[@]}")"
check "503 every time: 3 attempts, 2 notices" "3 2" "$(reqs POST busy) $(grep -c 'msg="attempt failed; retrying" request=replay' "$T/b1.err")"
check_match "503 every time: no replay started, said with the relay's detail" \
    "still failing after 3 attempts: 503: JetStream unavailable; no replay started" "$(cat "$T/b1.err")"
check "the POST sent again carries the same id (the relay finds the first start)" "3 1" \
    "$(awk -F'\t' '$1 == "POST" && $4 == "busy" { n++; sub(/.*&id=/, "", $2); ids[$2] = 1 } END { print n, length(ids) }' "$T/rp.log")"
# 429 too_many_replays (TREATY_RELAY_MAX_REPLAYS): retried like a 503,
# after the relay's Retry-After; the detail said when the attempts end.
check "429 every time: exit 75 after the attempts" 75 "$(rr f1 -- --subscriber full --since "$SINCE" --attempts 3 "${FAST[@]}")"
check "429 every time: 3 attempts, 2 notices" "3 2" \
    "$(reqs POST full) $(grep -c 'msg="attempt failed; retrying" request=replay attempt=[12] result=429' "$T/f1.err")"
check_match "429 every time: the relay's detail, no replay started" \
    "still failing after 3 attempts: 429: at most 2 replays run at once \(scripted\); no replay started" "$(cat "$T/f1.err")"
# A relative --since: read once, so every attempt asks for the same
# replay (its id and since alike), 2 h before now by this machine's clock.
check "--since 2h, 429 every time: exit 75 after the attempts" 75 \
    "$(rr rel -- --subscriber full --since 2h --attempts 3 "${FAST[@]}")"
check "  three POSTs, one since, 2 h before now, one id" "3 1 yes 1" \
    "$(python3 -c '
import datetime, sys, time
posts = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
posts = [p for p in posts if p[0] == "POST" and p[3] == "full" and p[4] != sys.argv[2]]
since = {p[4] for p in posts}
t = datetime.datetime.fromisoformat(posts[-1][4][:26].replace("Z", "") + "+00:00").timestamp() if posts else 0
ids = {p[1].split("&id=")[-1] for p in posts}
print(len(posts), len(since), "yes" if abs(time.time() - 7200 - t) < 60 else "no: %s" % posts[-1][4], len(ids))
' "$T/rp.log" "$SINCE" 2>&1)"
check_match "--since that is neither RFC 3339 nor a time before now: exit 2, both forms said" \
    '^2 .*--since must be an RFC 3339 date-time .* or a time before now \(30m, 2h, 7d\)' \
    "$(rr relbad -- --subscriber steady --since 2weeks) $(cat "$T/relbad.err")"
check "429 once (Retry-After: 1), then started: exit 0" 0 \
    "$(rr f2 -- --subscriber fullonce --since "$SINCE" --retry-base 10 --retry-cap 5000)"
check_match "  its started line" '^replay rp-fullonce-[0-9]+ started: 10 events matched$' "$(cat "$T/f2.out")"
check "  two POSTs of the same id, the second after the Retry-After (>= 950 ms, not the 10 ms backoff)" "2 1 yes" \
    "$(awk -F'\t' '$1 == "POST" && $4 == "fullonce" { n++; if (n == 1) t = $3; else d = $3 - t; sub(/.*&id=/, "", $2); ids[$2] = 1 }
        END { print n, length(ids), (d >= 950 ? "yes" : "no: " d " ms") }' "$T/rp.log")"
NOBODY=http://127.0.0.1:$(free_port)
check "no relay (connection refused): exit 75" 75 \
    "$(rr b2 -- --subscriber steady --since "$SINCE" --attempts 2 "${FAST[@]}" --url "$NOBODY")"
check_match "connection refused: nothing was sent, said, and where" \
    "still failing after 2 attempts: connection refused at $NOBODY; no replay started" "$(cat "$T/b2.err")"
check "polls failing (503) after the start: exit 75" 75 \
    "$(rr b3 -- --subscriber gone503 --since "$SINCE" --wait --attempts 2 "${FAST[@]}")"
id=$(id_of b3)
check_match "polls failing: the replay keeps running, how to follow it" \
    "replay $id keeps running in the relay \(follow it with: treaty admin replay --status $id --wait\)" "$(cat "$T/b3.err")"

# Tokens: TREATY_TOKEN (above), --token-file, a wrong one (401: 1).
printf '%s\n' "$AT" > "$T/admin.token"
check "--token-file: exit 0" 0 "$(rr tf TREATY_TOKEN= -- --subscriber steady --since "$SINCE" --token-file "$T/admin.token")"
check "a wrong token (401): exit 1" 1 "$(rr t401 TREATY_TOKEN=not-the-admin-token -- --subscriber steady --since "$SINCE")"
check_match "a wrong token: said which token" '401: not an admin token \(the token of --token-file or TREATY_TOKEN\)' "$(cat "$T/t401.err")"
check "a since the relay refuses (400, in the future): exit 1" 1 \
    "$(rr b400 -- --subscriber steady --since 2999-01-01T00:00:00Z)"
check_match "a since the relay refuses: said" "admin replay: 400: since: " "$(cat "$T/b400.err")"
check "  and not that a replay was perhaps started (a refusal of that id)" "" \
    "$(grep 'perhaps' "$T/b400.err")"
# A 503 to a request sent twice (its kept connection closed as it went,
# so it was sent again on a new one) does not say "not started": the first
# copy may have arrived.
check "a start sent twice, answered 503: exit 75" 75 \
    "$(rr b2x -- --subscriber closing --since "$SINCE" --attempts 2 "${FAST[@]}")"
check_match "  the replay perhaps started, not \"no replay started\"" \
    "still failing after 2 attempts: 503: JetStream unavailable; replay [0-9a-f]{24} was perhaps started" "$(cat "$T/b2x.err")"
# A 500 is no refusal: the request may have started the replay.
check "a start answered 500: exit 1" 1 "$(rr b500 -- --subscriber broken --since "$SINCE")"
check_match "  the reason, and the replay perhaps started under the id chosen" \
    "admin replay: 500: scripted 500.*replay [0-9a-f]{24} was perhaps started \(see: treaty admin replay --status [0-9a-f]{24}\)" \
    "$(tr '\n' ' ' < "$T/b500.err")"

# --json: the POST's answer, then one line per changed poll, as the relay
# wrote them.
check "--json: exit 0" 0 "$(rr j0 -- --subscriber steady --since "$SINCE" --json)"
check "--json: the POST's answer on one line" "1 5000 True" "$(python3 -c '
import json, sys
l = open(sys.argv[1]).read().splitlines()
d = json.loads(l[0])
print(len(l), d["matched"], d["replay"].startswith("rp-steady-"))' "$T/j0.out" 2>&1)"
check "--json --wait: exit 0" 0 "$(rr j1 -- --subscriber steady --since "$SINCE" --json --wait)"
check "--json --wait: the answer, then a report per change" "replay|running:0|running:1200|running:2400|done:4997" \
    "$(python3 -c '
import json, sys
out = []
for l in open(sys.argv[1]).read().splitlines():
    d = json.loads(l)
    out.append("replay" if "replay" in d else "%s:%d" % (d["state"], d["delivered"]))
print("|".join(out))' "$T/j1.out" 2>&1)"
check "--json --wait to cancelled: exit 1" 1 "$(rr j2 -- --subscriber stopped --since "$SINCE" --json --wait)"
check "--json --wait to cancelled: the last report" "cancelled 20 80" "$(tail -1 "$T/j2.out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["state"], d["delivered"], d["remaining"])' 2>&1)"
check "an answer that is not JSON: exit 1" 1 "$(rr g0 -- --subscriber garbage --since "$SINCE")"
check_match "an answer that is not JSON: the replay of the id it chose was perhaps started" "replay [0-9a-f]{24} was perhaps started" "$(cat "$T/g0.err")"

# SIGINT and SIGTERM while following: 75, the replay keeps running.
# follow_bg NAME ARGS...: treaty admin replay ARGS in the background;
# sets BG.
follow_bg() {
	local name=$1
	shift
	env TREATY_TOKEN=$AT "$TR" admin replay "$@" --url "$U" > "$T/$name.out" 2> "$T/$name.err" &
	BG=$!
	PIDS+=("$BG")
}
# stopped_with NAME SIG: send SIG to BG once NAME reported twice; sets SW
# to its exit status (or "ERROR: ...").
stopped_with() {
	local sw_name=$1
	SW="ERROR: no progress"
	wait_until 15 '[ "$(grep -c ": running " "$T/$sw_name.out")" -ge 2 ]' || return
	kill "-$2" "$BG"
	SW="ERROR: still running"
	wait_until 10 '! kill -0 "$BG"' || return
	wait "$BG"
	SW=$?
}
follow_bg si --subscriber forever --since "$SINCE" --wait
stopped_with si INT
check "SIGINT while following: exit 75" 75 "$SW"
id=$(id_of si)
check_match "SIGINT: the replay keeps running, how to follow it" \
    "stopped following; replay $id keeps running in the relay \(follow it with: treaty admin replay --status $id --wait\)" \
    "$(cat "$T/si.err")"
check "SIGINT: no DELETE (the replay is not cancelled)" 0 "$(reqs DELETE "$id")"
follow_bg st2 --status "$id" --wait
stopped_with st2 TERM
check "SIGTERM while following --status: exit 75" 75 "$SW"
check_match "SIGTERM: the replay's id on stderr" "replay $id keeps running" "$(cat "$T/st2.err")"

# On a terminal: one line redrawn with \r, a bar, percentage, rate, ETA.
if command -v script > /dev/null; then
	timeout -k 2 30 script -qec "env TREATY_TOKEN=$AT $TR admin replay --subscriber steady --since $SINCE --wait --url $U" \
	    /dev/null > "$T/tty.out" 2> "$T/tty.err"
	check "on a terminal: exit 0" 0 "$?"
	tty=$(tr -d '\n' < "$T/tty.out" | tr '\r' '|')
	check_match "on a terminal: the bar redrawn with \\r, percentage, figures, rate, ETA" \
	    '\|\[####----------------\]  24% 1200/5000 delivered, 3 dropped, [0-9.]+/s, ETA [0-9]+:[0-9]{2} *\|' "$tty"
	check_match "on a terminal: the last bar at 100%, then a new line" \
	    '\|\[####################\] 100% 4997/5000 delivered, 3 dropped *\|$' "$(tr '\r' '|' < "$T/tty.out" | tail -1)"
	check "on a terminal: the bar is one line (no plain progress lines)" 0 "$(grep -c ': running ' "$T/tty.out")"
else
	echo "# skip - $SUITE: the bar on a terminal: no script(1)"
fi

# Usage: 2, and nothing sent.
n0=$(wc -l < "$T/rp.log")
u=0
for args in "" "--since $SINCE" "--subscriber steady" "--subscriber steady --since yesterday" \
    "--subscriber steady --since $SINCE --status x" "--status x --cancel y" "--cancel x --wait" \
    "--cancel x --json" "--status x --dropped" "--status x --since $SINCE" "--subscriber steady --since $SINCE --limit 3" \
    "--status x extra" "--status x --attempts 0" "--stat x" "--subscriber= --since $SINCE"; do
	# shellcheck disable=SC2086
	rc=$(rr use -- $args)
	[ "$rc" = 2 ] || { fail "usage: exit 2 for [$args]" "got $rc: $(cat "$T/use.err")"; u=1; }
done
[ $u = 1 ] || ok "usage errors: exit 2 (15 cases)"
check "usage errors: nothing sent" "$n0" "$(wc -l < "$T/rp.log")"
check_match "usage: says why, with the usage" "which\? --subscriber NAME --since TIME, --status ID or --cancel ID" \
    "$(rr use -- ; cat "$T/use.err")"
check "--help: exit 0, replay's usage" "0 3" \
    "$(rr hl -- --help) $(grep -c 'treaty admin replay' "$T/hl.out")"
finish
