#!/usr/bin/env bash
# treaty admin subscriber put, get and delete (SPEC 16, the contract of
# docs/plans/31-api.md), in two parts.
#
# args: the argument errors, which need no relay (exit 2 and the usage,
# before any token is read or request sent): no --filter, --url with
# --token-sha256, an unknown option, a secret on the command line (no
# such option; its value never echoed), an option of another form.
#
# relay: against a real nats-server and relay with an admin token and
# TREATY_RELAY_SECRET_KEY_FILE: a push subscriber put with --secret-out
# (a 0600 file holding the whsec_ secret the relay signs with: a delivery
# verifies with it; the secret on neither stdout nor stderr), get (no
# secret), a rotation with a two-line --secret-file (the delivery's header
# carries both, newest first), unchanged, --if-match with a stale revision
# (412, exit 1), a pull subscriber, --file, --show-secret, the warning
# when a generated secret is not saved, 422 with its field, 409 for a
# configured subscriber, delete then get (404, exit 1), and --secret-out
# to an existing file refused before any request (get: nothing created).
#
# "bash t-cli-subscriber.sh args" runs the first part only.
. "$(dirname "$0")/lib.sh"
TR=$ROOT/$O/treaty
unset TREATY_URL TREATY_CA_FILE TREATY_TOKEN
FAST=(--retry-base 10 --retry-cap 50)
SECRET_ARG=on-the-command-line-0123456789

# --- args: no relay ------------------------------------------------------
# usage_err NAME WHY-ERE ARGS...: treaty admin subscriber ARGS without a
# token or a relay: exit 2, WHY and the usage on stderr, nothing on stdout.
usage_err() {
	local name=$1 re=$2
	shift 2
	NOTOK=1 TREATY_URL=http://127.0.0.1:$(free_port) run "$name" admin subscriber "$@"
	check_match "$name: exit 2, why and the usage" "^rc=2 out= .*$re.*usage: treaty admin subscriber put" \
	    "rc=$RC out=$OUT $(echo $ERR)"
}
args_part() {
	usage_err a-nofilter 'put: --filter F is required' put hook --url https://e.example/h
	usage_err a-both 'either --url URL \(push\) or --token-sha256 HEX \(pull\)' \
	    put hook --url https://e.example/h --token-sha256 "$(sha256hex t)" --filter 'evt.>'
	usage_err a-neither 'either --url URL \(push\) or --token-sha256 HEX \(pull\)' put hook --filter 'evt.>'
	usage_err a-unknown 'unknown option, or one without its value: --frobnicate' \
	    put hook --url https://e.example/h --filter 'evt.>' --frobnicate
	usage_err a-secret 'unknown option, or one without its value: --secret' \
	    put hook --url https://e.example/h --filter 'evt.>' --secret "$SECRET_ARG"
	usage_err a-secret-eq 'unknown option, or one without its value: --secret' \
	    put hook --url https://e.example/h --filter 'evt.>' --secret="$SECRET_ARG"
	usage_err a-extra 'one NAME, and no other argument' \
	    put hook "$SECRET_ARG" --url https://e.example/h --filter 'evt.>'
	local f leak=
	for f in a-secret a-secret-eq a-extra; do
		grep -qF "$SECRET_ARG" "$T/$f.out" "$T/$f.err" && leak="$leak $f"
	done
	check "a secret on the command line is never echoed" "" "$leak"
	usage_err a-noname 'NAME is required' get
	usage_err a-op 'unknown command: put, get or delete' frob hook
	usage_err a-get-url '--url is the subscriber.s, for put; the relay.s is --relay-url URL' \
	    get hook --url http://127.0.0.1:1
	usage_err a-get-filter '--filter is not for get' get hook --filter 'evt.>'
	usage_err a-delete-out '--secret-out is not for delete' delete hook --secret-out "$T/nope"
	usage_err a-file-url '--url is not for put --file' put hook --file - --url https://e.example/h
	usage_err a-sf-out '--secret-out and --show-secret are for a secret the relay generates' \
	    put hook --url https://e.example/h --filter 'evt.>' --secret-file /dev/null --secret-out "$T/nope"
	usage_err a-maxdel '--max-deliver: a number, 1 or more' \
	    put hook --url https://e.example/h --filter 'evt.>' --max-deliver 0
	usage_err a-ifmatch '--if-match: a revision, 1 or more' delete hook --if-match '"7"'
	check "no --secret-out file made by a usage error" no "$([ -e "$T/nope" ] && echo yes || echo no)"
	local h bad=
	for h in -h --help; do
		for c in "" put get delete; do
			out=$("$TR" admin subscriber $c $h 2>/dev/null </dev/null) &&
			    [[ $out == "usage: treaty admin subscriber put"* ]] || bad="$bad [$c $h]"
		done
	done
	check "admin subscriber [put|get|delete] -h, --help: the usage on stdout, exit 0" "" "$bad"
	check_match "treaty admin --help lists put, get and delete" \
	    'subscriber put NAME --url URL.*subscriber put NAME --token-sha256 HEX.*subscriber put NAME --file.*subscriber get NAME.*subscriber delete NAME' \
	    "$("$TR" admin --help | tr '\n' ' ')"
}

args_part
[ "${1:-}" = args ] && finish

# --- relay: the routes of issue 31 ---------------------------------------
admin_setup				# AT, S, TREATY_RELAY_ADMIN_TOKEN_SHA256
openssl rand -hex 32 > "$T/key" && chmod 600 "$T/key"
export TREATY_RELAY_SECRET_KEY_FILE=$T/key
RPORT=$(free_port)
start_receiver $RPORT "$T/deliveries" || { fail receiver "did not start"; finish; }
# One configured subscriber, which the API may show but not change.
export TREATY_RELAY_SUBSCRIBERS='[{"name":"cfg","url":"http://127.0.0.1:'$RPORT'/cfg","secret":"'$S'","filter":"evt.*.shop.cfg.>"}]'
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }
export TREATY_TOKEN=$AT TREATY_URL=$RELAY_URL
HOOK_URL=http://127.0.0.1:$RPORT/hook
SUBJ=evt.acme.shop.hook.created

# leaks NAME FILE...: the names of the NAME.out and NAME.err that hold the
# text of a secret of FILE... (one a line), or "".
leaks() {
	local name=$1 f l found=
	shift
	for f in "$@"; do
		while IFS= read -r l; do
			[ -n "$l" ] || continue
			grep -qF -- "$l" "$T/$name.out" "$T/$name.err" && found="$found $name"
		done < "$f"
	done
	echo "$found"
}
# revision NAME: the revision of NAME's "subscriber ... (revision R)" line.
revision() { sed -n 's/^subscriber .* (revision \([0-9]*\))$/\1/p' "$T/$1.out" | head -1; }
# sigline ID: the x-treaty-signature of the first delivery of event ID
# (waited for, 15 s), or "ERROR: ...".
sigline() {
	wait_until 15 'grep -qF "\"ce-id\": \"'"$1"'\"" "$T/deliveries"' ||
	    { echo "ERROR: $1 not delivered"; return 1; }
	grep -F "\"ce-id\": \"$1\"" "$T/deliveries" | head -1 |
	    python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["headers"]["x-treaty-signature"])'
}
# keys NAME KEY...: "KEY: value" of NAME.out's lines for those keys (the
# alignment undone), sorted, "|" between: the relay's order is its own.
keys() {
	local name=$1 re
	shift
	re="^($(IFS='|'; echo "$*")):"
	grep -E "$re" "$T/$name.out" | sed 's/:  */: /' | LC_ALL=C sort | tr '\n' '|' | sed 's/|$//'
}
sorted() { printf '%s\n' "$@" | LC_ALL=C sort | tr '\n' '|' | sed 's/|$//'; }
# converged NAME REV: wait (5 s at most: SPEC 16 says 1 s) until the
# relay's GET of NAME answers revision REV, or 404 for REV "gone", so that
# a read after a write does not depend on how soon the relay applies it.
converged() {
	if [ "$2" = gone ]; then
		wait_until 5 '[ "$(areq GET subscribers/'"$1"')" = 404 ]'
	else
		wait_until 5 '[ "$(areq GET subscribers/'"$1"' >/dev/null; afield revision)" = '"$2"' ]'
	fi
}
# hmac T ID BODY SECRET: the v1= of one secret, as openssl computes it.
hmac() { printf '%s' "$1.$2.$3" | openssl dgst -sha256 -hmac "$4" -r | cut -d' ' -f1; }

# A push subscriber, its generated secret to a 0600 file.
run p1 admin subscriber put hook --url "$HOOK_URL" --filter 'evt.*.shop.hook.>' \
    --secret-out "$T/hook.secret" --max-deliver 3
check_match "put push --secret-out: exit 0, created, then where the secret went" \
    '^rc=0 subscriber hook created \(revision [0-9]+\)\|secret: written to the --secret-out file$' \
    "rc=$RC $(tr '\n' '|' < "$T/p1.out" | sed 's/|$//')"
R1=$(revision p1)
# --ordered (SPEC 18): the definition says ordered.
run o1 admin subscriber put ordq --url "$HOOK_URL" --filter 'evt.*.shop.ordq.>' \
    --secret-out "$T/ordq.secret" --ordered
check "put --ordered: exit 0, stored ordered" "rc=0 True" \
    "rc=$RC $(converged ordq "$(revision o1)"; areq GET subscribers/ordq > /dev/null; afield ordered)"
check "  the file: mode 600, one line" "600 1" "$(stat -c %a "$T/hook.secret" 2>&1) $(wc -l < "$T/hook.secret")"
check_match "  the file: whsec_ and the base64 of 32 bytes" '^whsec_[A-Za-z0-9+/]{43}=$' "$(cat "$T/hook.secret")"
check "  the secret on neither stdout nor stderr" "" "$(leaks p1 "$T/hook.secret")"
converged hook "$R1"
check "  the relay holds it: revision as printed, one secret, none shown" "200 $R1 1 None" \
    "$(areq GET subscribers/hook) $(afield revision) $(afield secrets) $(afield secret)"
# The secret saved is the one the relay signs with.
post $SUBJ ok-sub-1 x
check "  an event for it stored" 202 "$STATUS"
sig=$(sigline ok-sub-1)
check "  its delivery verifies with the --secret-out file" ok \
    "$(printf x | "$TR" verify --secret-file "$T/hook.secret" --id ok-sub-1 --signature "$sig" 2>&1)"

# get: aligned key: value lines, never a secret.
run g1 admin subscriber get hook
check "get: exit 0" 0 "$RC"
check "  name, source, kind, url, filter, maxDeliver, secrets (a count), revision" \
    "$(sorted "name: hook" "source: api" "kind: push" "url: $HOOK_URL" "filter: evt.*.shop.hook.>" "maxDeliver: 3" "secrets: 1" "revision: $R1")" \
    "$(keys g1 name source kind url filter maxDeliver secrets revision)"
check "  the values aligned in one column" 1 \
    "$(awk '{ match($0, /: +/); print RSTART + RLENGTH }' "$T/g1.out" | sort -u | wc -l)"
check "  the secret not shown" "" "$(leaks g1 "$T/hook.secret")"
run g1j admin subscriber get hook --json
check "get --json: the relay's object, no secret" "0 hook 1 $R1" \
    "$RC $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["name"], d["secrets"], d["revision"])' "$T/g1j.out" 2>&1)$(leaks g1j "$T/hook.secret")"

# A rotation: the new secret first, the old one kept.
{ "$TR" gen-token; echo; cat "$T/hook.secret"; } > "$T/hook.secrets"
run p2 admin subscriber put hook --url "$HOOK_URL" --filter 'evt.*.shop.hook.>' \
    --secret-file "$T/hook.secrets" --if-match "$R1"
R2=$(revision p2)
check_match "put --secret-file of two lines, --if-match the revision: replaced" \
    '^rc=0 subscriber hook replaced \(revision [0-9]+\)$' "rc=$RC $OUT"
check "  a later revision, no secret printed, no warning" "yes  " \
    "$([ "${R2:-0}" -gt "$R1" ] && echo yes || echo "no: $R1 -> $R2") $(leaks p2 "$T/hook.secrets") $ERR"
converged hook "$R2"
run g2 admin subscriber get hook
check "  get: 2 secrets, the new revision" "$(sorted "secrets: 2" "revision: $R2")" "$(keys g2 secrets revision)"
# The first delivery after it is signed with both: the relay's GET shows
# the new revision (converged), so its running list has it already.
i=1
post $SUBJ ok-sub-2-$i y
sig=$(sigline ok-sub-2-$i)
t=${sig#t=}
t=${t%%,*}
check "  a delivery signed with both, newest first" \
    "t=$t,v1=$(hmac "$t" ok-sub-2-$i y "$(sed -n 1p "$T/hook.secrets")"),v1=$(hmac "$t" ok-sub-2-$i y "$(sed -n 3p "$T/hook.secrets")")" "$sig"
run p3 admin subscriber put hook --url "$HOOK_URL" --filter 'evt.*.shop.hook.>' \
    --secret-file "$T/hook.secrets"
check "the same definition again: unchanged, same revision" "rc=0 subscriber hook unchanged (revision $R2)" "rc=$RC $OUT"

# A stale --if-match: 412, nothing changed.
run p4 admin subscriber put hook --url "$HOOK_URL" --filter 'evt.*.shop.other.>' \
    --secret-file "$T/hook.secrets" --if-match "$R1"
check_match "--if-match a stale revision: exit 1, 412, which revision" \
    "^rc=1 out= treaty: admin subscriber put: 412 .*changed since revision $R1 .*treaty admin subscriber get hook" \
    "rc=$RC out=$OUT $ERR"
check "  the entry as it was" "200 $R2 evt.*.shop.hook.>" \
    "$(areq GET subscribers/hook) $(afield revision) $(afield filter)"
run d0 admin subscriber delete hook --if-match "$R1"
check_match "delete --if-match a stale revision: exit 1, 412" '^rc=1 .*412 ' "rc=$RC $ERR"

# A pull subscriber: it signs its envelopes too, so it gets a secret.
run p5 admin subscriber put box --token-sha256 "$(sha256hex box-token-0123456789)" \
    --filter 'evt.*.shop.box.>' --secret-out "$T/box.secret"
check_match "put pull (--token-sha256): created" '^rc=0 subscriber box created \(revision [0-9]+\)' "rc=$RC $OUT"
converged box "$(revision p5)"
run g5 admin subscriber get box
check "  get: kind pull, its token's hash" "$(sorted "kind: pull" "tokenSha256: $(sha256hex box-token-0123456789)")" \
    "$(keys g5 kind tokenSha256)"
check_match "  its secret in the file" '^whsec_' "$(cat "$T/box.secret")"

# --file from standard input, --show-secret.
printf '{"url":"%s","filter":"evt.*.shop.file.>","maxInFlight":4}' "$HOOK_URL" > "$T/p6.in"
run p6 admin subscriber put fromfile --file - --show-secret
check_match "put --file - --show-secret: created, the secret on stdout" \
    '^rc=0 subscriber fromfile created \(revision [0-9]+\)\|secret: whsec_[A-Za-z0-9+/]{43}=$' \
    "rc=$RC $(tr '\n' '|' < "$T/p6.out" | sed 's/|$//')"
converged fromfile "$(revision p6)"
check "  the definition of the file" "200 4 evt.*.shop.file.>" \
    "$(areq GET subscribers/fromfile) $(afield maxInFlight) $(afield filter)"

# Neither --secret-out nor --show-secret: stored, the secret nowhere, said.
run p7 admin subscriber put lost --url "$HOOK_URL" --filter 'evt.*.shop.lost.>'
check_match "a generated secret not saved: exit 0, a warning on stderr" \
    '^rc=0 subscriber lost created \(revision [0-9]+\) treaty: admin subscriber put: warning: .*NOT saved' \
    "rc=$RC $OUT $ERR"
check "  no whsec_ anywhere" 0 "$(cat "$T/p7.out" "$T/p7.err" | grep -c whsec_)"

# Refusals: the relay's code, field and detail.
run p8 admin subscriber put bad --url http://hooks.example/h --filter 'evt.>' --secret-out "$T/bad.secret"
check_match "a URL the relay refuses: exit 1, 422 invalid, the field" \
    '^rc=1 treaty: admin subscriber put: 422 invalid: url: ' "rc=$RC $ERR"
check "  the --secret-out file removed again" no "$([ -e "$T/bad.secret" ] && echo yes || echo no)"
run p9 admin subscriber put cfg --url "$HOOK_URL" --filter 'evt.*.shop.cfg.>' --secret-file "$T/hook.secrets"
check_match "a configured subscriber: exit 1, 409 config_subscriber" '^rc=1 .*409 config_subscriber' "rc=$RC $ERR"
run g9 admin subscriber get cfg
check "  get shows it, source config" "0 source: config" "$RC $(grep '^source:' "$T/g9.out" | sed 's/:  */: /')"
TREATY_TOKEN=not-an-admin-token-0123 run p10 admin subscriber get hook
check_match "a token that is not an admin's: exit 1, 401, the token's source said" \
    '^rc=1 .*401 .*--token-file or TREATY_TOKEN' "rc=$RC $ERR"

# --secret-out to a file that exists: refused before any request.
echo keep > "$T/exists"
run p11 admin subscriber put fresh --url "$HOOK_URL" --filter 'evt.*.shop.fresh.>' --secret-out "$T/exists"
check_match "--secret-out to an existing file: exit 1, said, nothing sent" \
    '^rc=1 out= treaty: admin subscriber put: --secret-out: File exists.*nothing sent' "rc=$RC out=$OUT $ERR"
check "  the file untouched" keep "$(cat "$T/exists")"
check "  the relay has no such subscriber" "404 unknown_subscriber" "$(areq GET subscribers/fresh) $(afield error)"

# --relay-url instead of TREATY_URL; delete, then get: 404.
TREATY_URL=http://127.0.0.1:1 run d1 admin subscriber delete hook --relay-url "$RELAY_URL"
check "delete (--relay-url): exit 0, deleted" "rc=0 subscriber hook deleted" "rc=$RC $OUT"
converged hook gone
run g10 admin subscriber get hook
check_match "get after delete: exit 1, 404 unknown_subscriber" \
    '^rc=1 out= treaty: admin subscriber get: 404 unknown_subscriber' "rc=$RC out=$OUT $ERR"
run d2 admin subscriber delete hook
check_match "delete again: exit 1, 404" '^rc=1 .*404 unknown_subscriber' "rc=$RC $ERR"
check "the relay still runs" yes "$(relay_alive && echo yes)"
finish
