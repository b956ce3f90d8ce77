#!/usr/bin/env bash
# treaty sign, verify, hash-token, gen-token (man/treaty.1), checked against
# openssl and sha256sum; exit codes 0, 1, 2.  No NATS needed.
. "$(dirname "$0")/lib.sh"
TR=$ROOT/$O/treaty
printf 'first-secret-0123456789\n\nolder-secret-0123456789\n' > "$T/secrets"
body='{"total":42}' id=order-1042

hex() { printf '%s' "$1.$id.$body" | openssl dgst -sha256 -hmac "$2" -r | cut -d' ' -f1; }
out=$(printf '%s' "$body" | "$TR" sign --secret-file "$T/secrets" --id $id --time 1700000000)
check "sign: one v1= per secret, newest first, as openssl computes them" \
    "t=1700000000,v1=$(hex 1700000000 first-secret-0123456789),v1=$(hex 1700000000 older-secret-0123456789)" "$out"
now=$(date +%s)
r=$(printf '%s' "$body" | "$TR" verify --secret-file "$T/secrets" --id $id --signature "t=$now,v1=$(hex $now older-secret-0123456789)" 2>&1; echo "rc=$?")
check "verify: a signature made by openssl with the older secret" "ok rc=0" "$(echo $r)"
r=$(printf '%s' "$body" | "$TR" verify --secret-file "$T/secrets" --id $id --signature "t=$now,v1=$(hex $now other-secret-0123456789)" 2>&1; echo "rc=$?")
check_match "verify: another secret, exit 1 with the reason" 'not verified: signature does not match.*rc=1' "$(echo $r)"
r=$(printf '%s' "$body" | "$TR" verify --secret-file "$T/secrets" --id $id --signature "t=$((now - 400)),v1=$(hex $((now - 400)) first-secret-0123456789)" 2>&1; echo "rc=$?")
check_match "verify: 400 s old is stale by default" 'not verified: signature timestamp outside tolerance.*rc=1' "$(echo $r)"
r=$(printf '%s' "$body" | "$TR" verify --secret-file "$T/secrets" --id $id --tolerance 600 --signature "t=$((now - 400)),v1=$(hex $((now - 400)) first-secret-0123456789)" 2>&1; echo "rc=$?")
check "verify: within --tolerance 600" "ok rc=0" "$(echo $r)"
r=$(printf '%s' "$body" | "$TR" verify --secret-file "$T/secrets" --id $id --tolerance 86401 --signature "t=$now,v1=$(hex $now first-secret-0123456789)" 2>&1; echo "rc=$?")
check_match "verify: --tolerance past a day is a usage error, as for listen and work" 'usage: .*rc=2$' "$(echo $r)"
r=$(printf '%s' "$body" | "$TR" verify --secret-file "$T/secrets" --id $id --signature "garbage" 2>&1; echo "rc=$?")
check_match "verify: malformed, exit 1" 'not verified: signature header malformed.*rc=1' "$(echo $r)"
check "hash-token: the SHA-256 of the line on stdin" "$(printf 'tok-123' | sha256sum | cut -c1-64)" "$(echo tok-123 | "$TR" hash-token)"
r=$(printf '' | "$TR" hash-token 2>&1; echo "rc=$?")
check_match "hash-token: an empty token, exit 1" 'rc=1$' "$r"
a=$("$TR" gen-token); b=$("$TR" gen-token)
check_match "gen-token: 64 hex digits" '^[0-9a-f]{64}$' "$a"
if [ "$a" != "$b" ]; then ok "gen-token: a new one each time"; else fail "gen-token: a new one each time" "$a twice"; fi
r=$("$TR" sign --id x < /dev/null 2>&1; echo "rc=$?")
check_match "sign without --secret-file: usage, exit 2" 'usage: .*rc=2$' "$r"
r=$("$TR" frobnicate 2>&1; echo "rc=$?")
check_match "an unknown command: exit 2" 'unknown command.*rc=2$' "$r"
r=$("$TR" hash-token secret-on-the-command-line 2>&1; echo "rc=$?")
check_match "hash-token refuses a token on the command line: exit 2" 'rc=2$' "$r"
r=$("$TR" sign --secret-file "$T/nope" --id x < /dev/null 2>&1; echo "rc=$?")
check "a missing secret file: exit 1, the option named, its value (perhaps the secret itself) not printed" \
    "treaty: --secret-file: No such file or directory rc=1" "$(echo $r)"
if printf '%s' "$body" | "$TR" sign --secret-file "$T/secrets" --id $id 2>&1 | grep -q first-secret; then
	fail "secrets are never printed" "found in the output"
else
	ok "secrets are never printed"
fi

# Every command: -h and --help, its usage on standard output, exit 0.
bad=
for c in publish flush work listen "admin status" sign verify hash-token gen-token; do
	for h in -h --help; do
		out=$($TR $c $h 2>/dev/null </dev/null) && [[ "$out" == usage:* ]] || bad="$bad [$c $h]"
	done
done
check "every command's -h and --help: usage, exit 0" "" "$bad"
finish
