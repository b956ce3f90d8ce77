#!/usr/bin/env bash
# The verification example of man/libtreaty.3 compiles against libtreaty and
# accepts a delivery signed independently (openssl dgst -hmac), and refuses
# a changed body, another secret and a stale timestamp.  No NATS needed.
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
finish
