#!/usr/bin/env bash
# The verification example of man/libtreaty.3 compiles against libtreaty and
# accepts a delivery signed independently (openssl dgst -hmac), and refuses
# a changed body, another secret and a stale timestamp.  Then the EXAMPLES
# of man/treaty-relay.8, taken from the page as they are printed: the
# configuration file passes --check-config, the openssl check of a
# signature prints the digest shown (and treaty sign agrees), the two
# curl commands get the answers shown from a relay, and the session of a
# subscriber of the API (added, its secret rotated, deleted) runs as
# written and prints what the page shows.
. "$(dirname "$0")/lib.sh"
src=$T/verify.c
sed -n '/^\/\* example: verify.c \*\/$/,/^\/\* end of example \*\/$/p' "$ROOT/man/libtreaty.3" |
    sed 's/\\e/\\/g' > "$src"
check "the example is in the manual page" 1 "$([ -s "$src" ] && grep -c 'treaty_sig_verify' "$src")"
# A sanitizer build of the library needs the sanitizer runtime to link.
case $O in *san*) SAN="-fsanitize=address,undefined" ;; *) SAN= ;; esac
if cc -std=c11 -Wall -Wextra -Werror $SAN -I"$ROOT/include" -o "$T/verify" "$src" \
    "$ROOT/$O/libtreaty.a" -lcrypto 2> "$T/cc.err"; then
	ok "it compiles with -Wall -Wextra -Werror against libtreaty.a"
else
	fail "it compiles" "$(head -5 "$T/cc.err")"
	finish
fi
secret=example-secret-0123456789 id=order-1042 body='{"total":42}'
sig() {	# t secret body
	printf 't=%s,v1=%s' "$1" "$(printf '%s' "$1.$id.$3" | openssl dgst -sha256 -hmac "$2" -r | cut -d' ' -f1)"
}
now=$(date +%s)
out=$(printf '%s' "$body" | TREATY_SECRET=$secret "$T/verify" "$(sig $now $secret "$body")" $id 2>&1); rc=$?
check "a genuine delivery: exit 0" "0 genuine" "$rc $out"
out=$(printf '%s' "$body!" | TREATY_SECRET=$secret "$T/verify" "$(sig $now $secret "$body")" $id 2>&1); rc=$?
check_match "a changed body: refused" '^1 rejected: ' "$rc $out"
out=$(printf '%s' "$body" | TREATY_SECRET=$secret "$T/verify" "$(sig $now other-secret-0123456789 "$body")" $id 2>&1); rc=$?
check_match "another secret: refused" '^1 rejected: ' "$rc $out"
out=$(printf '%s' "$body" | TREATY_SECRET=$secret "$T/verify" "$(sig $((now - 1000)) $secret "$body")" $id 2>&1); rc=$?
check_match "a timestamp 1000 s old: refused as stale" '^1 rejected: .*(stale|tolerance|old)' "$rc $out"

# The literal display after the first line of treaty-relay.8 holding $1,
# with roff's escapes undone.
example() {
	awk -v pat="$1" 'f == 0 && index($0, pat) { f = 1; next }
	    f == 1 && /^\.Bd/ { f = 2; next } f == 2 && /^\.Ed/ { exit }
	    f == 2 { print }' "$ROOT/man/treaty-relay.8" |
	    sed -e 's/\\-/-/g' -e 's/\\e/\\/g'
}
# An example's commands (all but its last line, "$ " dropped) and the
# output it shows (its last line).
commands() { sed '$d' | sed 's/^\$ //'; }
shown() { tail -1; }

example 'Then, in' | sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' |
    sed "s/<hash>/$TOKEN_SHA/" > "$T/env"
check "the example's configuration file: configuration ok" \
    "$(example 'Check it, then apply' | sed -n 2p)" \
    "$(env -u TREATY_RELAY_PRODUCERS "$RELAY_BIN" --config "$T/env" --check-config 2>&1)"

example "Check a delivery's signature" > "$T/ossl"
out=$(commands < "$T/ossl" | bash 2>&1)
check "the openssl check of a signature prints the digest shown" "$(shown < "$T/ossl")" "$out"
(	eval "$(commands < "$T/ossl" | grep -E '^(secret|t|body)=')"
	printf '%s\n' "$secret" > "$T/ossl.secret"
	printf '%s' "$body" | "$ROOT/$O/treaty" sign --secret-file "$T/ossl.secret" --id "$id" --time "$t"
) > "$T/ossl.sign" 2>&1
check "  and treaty sign makes the same" "t=$(sed -n 's/^\$ t=\([0-9]*\).*/\1/p' "$T/ossl"),v1=$(shown < "$T/ossl")" "$(cat "$T/ossl.sign")"

admin_setup
openssl rand -hex 32 > "$T/keys"
chmod 600 "$T/keys"
export TREATY_RELAY_SECRET_KEY_FILE=$T/keys
start_nats
start_relay || { fail "relay" "did not start"; finish; }
for mode in 'Publish an event in binary mode' 'The same event in structured mode'; do
	example "$mode" > "$T/curl"
	out=$(commands < "$T/curl" | sed "s|http://127.0.0.1:8080|$RELAY_URL|" | TOKEN=$TOKEN bash 2>&1)
	check "${mode,,}: the answer shown" "$(shown < "$T/curl")" "$out"
done

# The session of a subscriber of the API: each display's commands ("$ "
# lines and the lines they continue with a trailing \ or |) run in one
# folder against the relay, and what they print is what the page shows,
# but for the revision, which is this bucket's.
cmds() { awk '/^\$ /{ sub(/^\$ /, ""); print; c = /[\\|]$/; next }
    c { print; c = /[\\|]$/ }'; }
outs() { awk '/^\$ /{ c = /[\\|]$/; next } c { c = /[\\|]$/; next } { print }'; }
# jq is the operator's tool, not a dependency of the tests: what the
# session asks of it (.key of a file or of standard input, -r) otherwise.
JQ=
command -v jq > /dev/null || JQ='jq() { python3 -c "
import json, sys
a = sys.argv[1:]; raw = a[0] == \"-r\"; a = a[raw:]
d = json.load(open(a[1]) if len(a) > 1 else sys.stdin)[a[0][1:]]
print(d if raw or not isinstance(d, str) else json.dumps(d))" "$@"; }'
mkdir "$T/session" && printf '%s' "$AT" > "$T/session/admin.token"
example 'add one, and keep the secret the relay makes' > "$T/s1"
example 'To rotate the secret later' > "$T/s2"
example 'Once the subscriber checks with the new secret' > "$T/s3"
example 'And when the subscriber is gone for good' > "$T/s4"
{ echo "$JQ"; cmds < "$T/s1"; } | sed "s|http://127.0.0.1:8080|$RELAY_URL|" > "$T/s1.sh"
out=$(cd "$T/session" && bash "$T/s1.sh" 2>&1)
check_match "the session adds a subscriber and prints its revision" '^[0-9]+$' "$out"
REV=$out
check_match "  the secret saved is the one the relay made" '^whsec_[A-Za-z0-9+/]{43}=$' "$(cat "$T/session/partner.secret")"
check "  the secret file is the operator's alone (umask 077)" 600 "$(stat -c %a "$T/session/partner.secret")"
{ echo "$JQ"; echo "RELAY=$RELAY_URL ADMIN=$AT"; cat "$T/s2" "$T/s3" "$T/s4" | cmds; } |
    sed "s|If-Match: \"7\"|If-Match: \"$REV\"|" > "$T/s2.sh"
out=$(cd "$T/session" && bash "$T/s2.sh" 2>&1)
check "  rotation (two PUTs) and the DELETE print what the page shows" \
    "$(cat "$T/s2" "$T/s3" "$T/s4" | outs | tr '\n' ' ')" "$(printf '%s\n' "$out" | tr '\n' ' ')"
check "  the subscriber is gone" 404 "$(areq GET subscribers/partner)"
check "  the page's first answer shows a revision, as the relay's does" 1 \
    "$(outs < "$T/s1" | grep -c '^[0-9][0-9]*$')"
finish
